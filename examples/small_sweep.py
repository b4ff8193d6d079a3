#!/usr/bin/env python3
"""A small sweep from Python: the Polaris over 4 seeds and 2 RTK baselines,
60 s a run, on a local Dask cluster, then its table printed with pandas.

    python examples/small_sweep.py                 # into a temporary folder
    python examples/small_sweep.py sweeps/small    # into a folder of yours (run it
                                                   # again: the finished runs are skipped)

The same sweep on the command line:
``acres-sim sweep --rig polaris --seeds 1-4 --grid gnss.corrections.baseline_km=1,30
--duration 60 --out sweeps/small``.
"""

import sys
import tempfile

import pandas as pd

import acres_sim
from acres_sim.analysis.sweep_table import metric_columns

BASELINE = 'gnss.corrections.baseline_km'


def main(out):
    result = acres_sim.sweep('polaris', seeds='1-4', grid={BASELINE: [1.0, 30.0]},
                             duration=60.0, out=out)
    table = result.table
    metrics = metric_columns(table, [BASELINE])     # the evaluation's headline columns
    with pd.option_context('display.width', 160, 'display.max_columns', 12):
        print(table[['run_id', 'seed', BASELINE, 'status', 'wall_s', *metrics]])
        print('\nmedian over the seeds:')
        print(table[table['status'] == 'complete'].groupby(BASELINE)[metrics].median())
    print(f'\n{result.ran} runs recorded, {result.skipped} skipped, {len(result.failed)} failed; '
          f'table and plots in {result.out}/')
    return 1 if result.failed else 0


if __name__ == '__main__':           # the guard Dask's worker processes need
    if len(sys.argv) > 1:
        sys.exit(main(sys.argv[1]))
    with tempfile.TemporaryDirectory() as folder:
        sys.exit(main(f'{folder}/sweep'))
