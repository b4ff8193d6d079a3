"""The gnss node (placeholder until the live-rig issue lands)."""

import sys

from acres_sim.ros.stub import not_implemented


def main(args=None):
    return not_implemented('gnss_node', 'The live ROS 2 rig')


if __name__ == '__main__':
    sys.exit(main())
