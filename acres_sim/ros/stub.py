"""Placeholder entry point for nodes whose issue has not landed yet."""

import sys


def not_implemented(node, issue):
    """Tell the user clearly that ``node`` does not exist yet; exit status 1."""
    print(f'acres_sim {node}: not implemented yet (arrives with the issue "{issue}"). '
          'See README.md for what works today.', file=sys.stderr)
    return 1
