"""PLACEHOLDER of ``acres_sim.analysis.evaluate`` (the real one replaces this
file): just enough for ``acres-sim sweep`` to have numbers per run.

:func:`evaluate` scores one recording folder: per vehicle the horizontal
error of the INS (``ins.jsonl``'s ``position_enu_m`` against its
``truth.position_enu_m``: RMS, median, 95th percentile) and the share of GNSS
epochs with a fix and with an RTK fix (``gnss.jsonl``'s ``fix_type``).
:func:`table_row` flattens that summary into scalar columns.
"""

import json
import math
from pathlib import Path

import numpy as np

from acres_sim.files import write_atomically

__all__ = ['evaluate', 'table_row']


def _rows(path):
    """The rows of a jsonl file (none if it is missing)."""
    if not path.is_file():
        return []
    with open(path, 'rb') as file:
        return [json.loads(line) for line in file if line.strip()]


def _vehicle_folders(run_dir):
    """(name, folder) of each vehicle of the recording (episode.json's list)."""
    episode = json.loads((run_dir / 'episode.json').read_text())
    vehicles = episode.get('vehicles') or [{'name': 'vehicle', 'folder': '.'}]
    return [(v.get('name', v['folder']), run_dir / v['folder']) for v in vehicles]


def _ins_errors(folder):
    errors = [math.hypot(r['position_enu_m'][0] - r['truth']['position_enu_m'][0],
                         r['position_enu_m'][1] - r['truth']['position_enu_m'][1])
              for r in _rows(folder / 'ins.jsonl')
              if r.get('position_enu_m') and (r.get('truth') or {}).get('position_enu_m')]
    if not errors:
        return {'epochs': 0}
    e = np.asarray(errors)
    return {'epochs': int(e.size), 'horizontal_rmse_m': float(np.sqrt(np.mean(e ** 2))),
            'horizontal_p50_m': float(np.percentile(e, 50)),
            'horizontal_p95_m': float(np.percentile(e, 95))}


def _gnss_shares(folder):
    fixes = [r.get('fix_type', 'no_fix') for r in _rows(folder / 'gnss.jsonl')]
    if not fixes:
        return {'epochs': 0}
    return {'epochs': len(fixes),
            'fix_share': sum(f != 'no_fix' for f in fixes) / len(fixes),
            'rtk_fixed_share': sum(f == 'rtk_fixed' for f in fixes) / len(fixes)}


def evaluate(run_dir, out=None, plots=True) -> dict:
    """The summary of the recording in ``run_dir`` (a JSON-able dict), also
    written as ``out/summary.json`` when ``out`` is given.  ``plots`` is
    accepted for the real evaluate's sake; the placeholder draws nothing."""
    run_dir = Path(run_dir)
    summary = {'placeholder': True,
               'vehicles': {name: {'ins': _ins_errors(folder), 'gnss': _gnss_shares(folder)}
                            for name, folder in _vehicle_folders(run_dir)}}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / 'summary.json',
                         (json.dumps(summary, indent=1) + '\n').encode('utf-8'))
    return summary


def table_row(summary) -> dict:
    """The summary's numbers as flat scalar columns (one vehicle: ``ins_h_rmse_m``,
    ...; several: each column prefixed with the vehicle's name and a dot)."""
    vehicles = summary['vehicles']
    row = {}
    for name, parts in vehicles.items():
        prefix = f'{name}.' if len(vehicles) > 1 else ''
        ins, gnss = parts['ins'], parts['gnss']
        row[prefix + 'ins_h_rmse_m'] = ins.get('horizontal_rmse_m', math.nan)
        row[prefix + 'ins_h_p50_m'] = ins.get('horizontal_p50_m', math.nan)
        row[prefix + 'ins_h_p95_m'] = ins.get('horizontal_p95_m', math.nan)
        row[prefix + 'gnss_fix_share'] = gnss.get('fix_share', math.nan)
        row[prefix + 'gnss_rtk_fixed_share'] = gnss.get('rtk_fixed_share', math.nan)
    return row
