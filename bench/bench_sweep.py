#!/usr/bin/env python3
"""Throughput of ``acres-sim sweep`` on this machine: simulated hours per
wall hour of a sweep of the Polaris (``--runs`` seeds of ``--seconds`` each)
on a local Dask cluster of 1 and of 2 workers, and how it scales (the ideal
is linear in the workers: 2.0 for two).

The wall time is the whole ``sweep()`` call: the cluster's start, every
recording (a process each, with its start-up), the evaluations, the table
and the picture.  Runs are rows only by default, as a sweep makes them
(``--bags-and-reports`` keeps each run's bag and report.png).  ``--repeat N``
sweeps of each, median and range (the machine is shared: sweeps differ from
one minute to the next).  A one-run sweep first warms the kernels' cache.
No assertions.
"""

import argparse
import statistics
import tempfile
import time

from acres_sim.analysis.sweep import sweep


def one_sweep(workers, runs, seconds, keep):
    """(simulated hours per wall hour, mean wall time of a run [s]) of one sweep."""
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        result = sweep('polaris', seeds=f'1-{runs}', duration=seconds, out=f'{folder}/sweep',
                       workers=workers, bags=keep, reports=keep, progress=False)
        wall = time.perf_counter() - start
    if result.failed:
        raise SystemExit(f'a run failed: {result.failed[0]}')
    simulated = result.table['simulated_s'].sum()
    return simulated / wall, result.table['wall_s'].mean()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=4, help='runs (seeds) per sweep (default 4)')
    parser.add_argument('--seconds', type=float, default=300.0,
                        help='simulated seconds per run (default 300)')
    parser.add_argument('--repeat', type=int, default=1, help='sweeps of each (default 1)')
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2],
                        help='worker counts to compare (default 1 2)')
    parser.add_argument('--bags-and-reports', action='store_true',
                        help="keep each run's bag and report.png")
    args = parser.parse_args(argv)
    keep = args.bags_and_reports
    one_sweep(1, 1, 5.0, keep)
    results = {}
    for workers in args.workers:
        results[workers] = [one_sweep(workers, args.runs, args.seconds, keep)
                            for _ in range(args.repeat)]
    print(f'sweep of {args.runs} Polaris runs of {args.seconds:g} s '
          f'({"rows, bag, report" if keep else "rows only"}), {args.repeat} sweep(s) each')
    base = statistics.median(r[0] for r in results[args.workers[0]])
    for workers, sweeps in results.items():
        rates = [r[0] for r in sweeps]
        rate = statistics.median(rates)
        spread = f' (range {min(rates):.1f}-{max(rates):.1f})' if len(rates) > 1 else ''
        print(f'  {workers} worker{"s" if workers > 1 else " "}  {rate:7.1f} simulated h per '
              f'wall h{spread}; a run {statistics.median(r[1] for r in sweeps):.1f} s of wall '
              f'time; {rate / base:.2f}x the {args.workers[0]}-worker rate (ideal '
              f'{workers / args.workers[0]:.1f}x)')
    return results


if __name__ == '__main__':
    main()
