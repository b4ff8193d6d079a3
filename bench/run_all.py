#!/usr/bin/env python3
"""Run every benchmark in bench/ (bench_*.py), each in a fresh process.

Benchmarks print their own tables; nothing here (or in the tests) asserts on
timings. `make bench` calls this.
"""

from pathlib import Path
import subprocess
import sys


def main():
    failed = []
    for script in sorted(Path(__file__).parent.glob('bench_*.py')):
        print(f'== {script.name}', flush=True)
        if subprocess.run([sys.executable, str(script)]).returncode != 0:
            failed.append(script.name)
    if failed:
        print('failed: ' + ', '.join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
