#!/usr/bin/env python3
"""What ``acres-sim evaluate`` costs.

Records the Polaris for ``--seconds`` (once), then evaluates its INS and GNSS
receiver (``ins`` and ``gnss`` from the rows; 100 Hz and 10 Hz) and its
``vehicle/odom`` from the bag (through the UTM datum chain), in process,
with and without the pictures, and the whole command (``acres-sim
evaluate``, a new process: its imports of evo, scipy and matplotlib
included).  Medians of ``--repeat`` runs after a warm one; seconds of wall
time.  No assertions.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from acres_sim.analysis.evaluate import evaluate
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions


def _median(repeat, job):
    job()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=600.0)
    parser.add_argument('--repeat', type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / 'run'
        record(RecordRequest('polaris', run, RigOptions(duration_s=args.seconds),
                             progress=False))
        bag = f'{run / "bag"}:/vehicle/odom'
        cases = [
            ('ins + gnss rows, no pictures', lambda: evaluate(run, plots=False)),
            ('ins + gnss rows, pictures', lambda: evaluate(run, out=Path(tmp) / 'e1')),
            ('vehicle/odom from the bag, no pictures',
             lambda: evaluate(run, [bag], plots=False)),
            ('acres-sim evaluate (whole command)', lambda: subprocess.run(
                [str(Path(sys.executable).parent / 'acres-sim'), 'evaluate', str(run),
                 '--out', str(Path(tmp) / 'e2')], check=True, capture_output=True)),
        ]
        print(f'evaluate, a {args.seconds:g} s Polaris run (median of {args.repeat})')
        for name, job in cases:
            seconds = _median(args.repeat, job)
            print(f'  {name:42s} {seconds:7.2f} s   {args.seconds / seconds:8.0f}x real time')


if __name__ == '__main__':
    main()
