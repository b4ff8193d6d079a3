"""The table of a sweep: one row per run, from the runs' records.

Columns: ``run_id``, ``seed``, one column per grid axis (named by its key,
holding the run's value; a list value such as outages as its JSON text),
``status`` (``complete`` or ``failed``), ``error``, ``wall_s``,
``simulated_s``, ``digest`` (sha256 of the run's rows), ``command`` (the
shell command that repeats the run), then the evaluation's columns
(:func:`acres_sim.analysis.evaluate.table_row`).  Written as
``summary.csv`` and ``summary.parquet``; :func:`summary_text` is the short
table printed at the end: per grid point the runs, the failed ones and the
median of each metric over the seeds.
"""

import io
import json
import math
import shlex

import pandas as pd

__all__ = ['BASE_COLUMNS', 'axis_labels', 'cell', 'metric_columns', 'summary_text', 'table',
           'write_tables']

BASE_COLUMNS = ('run_id', 'seed', 'status', 'error', 'wall_s', 'simulated_s', 'digest',
                'command')


def axis_labels(names) -> dict:
    """A short label per axis: its key's last part (``baseline_km``), or the
    whole key where two axes would share one."""
    last = [name.rsplit('.', 1)[-1] for name in names]
    return {name: short if last.count(short) == 1 else name
            for name, short in zip(names, last)}


def cell(value):
    """A grid value as a table cell: a scalar as it is, a list as its JSON text."""
    return json.dumps(value) if isinstance(value, (list, tuple, dict)) else value


def table(records, axes) -> pd.DataFrame:
    """The table of run ``records`` (dicts as :func:`acres_sim.analysis.sweep_run.run_one`
    returns them, in the sweep's order) with grid ``axes`` (their names)."""
    rows = []
    for r in records:
        row = {'run_id': r['run_id'], 'seed': r['seed'],
               **{name: cell(r['grid'][name]) for name in axes}}
        row.update({'status': r['status'], 'error': r.get('error'), 'wall_s': r.get('wall_s'),
                    'simulated_s': r.get('simulated_s'), 'digest': r.get('digest'),
                    'command': shlex.join(r['command']) if r.get('command') else None})
        for name, value in (r.get('columns') or {}).items():
            row[name if name not in row else f'eval.{name}'] = value
        rows.append(row)
    columns = ['run_id', 'seed', *axes, *BASE_COLUMNS[2:]]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    for name in ('wall_s', 'simulated_s'):
        frame[name] = pd.to_numeric(frame[name])
    return frame[columns + [c for c in frame.columns if c not in columns]]


def metric_columns(frame, axes) -> list:
    """The evaluation's numeric columns of the table that the summary and the
    picture show: its headline ones (acres_sim.analysis.evaluate.HEADLINE),
    else every numeric one."""
    from acres_sim.analysis.evaluate import headline_columns

    fixed = {'run_id', 'seed', *axes, *BASE_COLUMNS}
    numeric = [c for c in frame.columns if c not in fixed
               and pd.api.types.is_numeric_dtype(frame[c])
               and not pd.api.types.is_bool_dtype(frame[c])]
    return headline_columns(numeric) or numeric


def write_tables(folder, frame) -> None:
    """``summary.csv`` and ``summary.parquet`` into the sweep folder ``folder``."""
    folder.write('summary.csv', frame.to_csv(index=False).encode('utf-8'))
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    folder.write('summary.parquet', buffer.getvalue())


def _number(value):
    if isinstance(value, float) and not math.isfinite(value):
        return '-'
    return f'{value:.4g}' if isinstance(value, float) else str(value)


def summary_text(frame, axes, metrics) -> str:
    """Per grid point (or for the whole sweep): runs, failed, and the median
    of each metric over the seeds of its complete runs."""
    if frame.empty:
        return 'no runs'
    labels = axis_labels(axes)
    groups = frame.groupby(list(axes), sort=False, dropna=False) if axes else [((), frame)]
    rows = []
    for values, group in groups:
        values = values if isinstance(values, tuple) else (values,)
        complete = group[group['status'] == 'complete']
        row = {labels[name]: value for name, value in zip(axes, values)}
        row['runs'] = len(group)
        row['failed'] = int((group['status'] != 'complete').sum())
        for name in metrics:
            row[name] = complete[name].median() if len(complete) else math.nan
        rows.append(row)
    shown = pd.DataFrame(rows)
    head = 'median over the seeds of the complete runs'
    return head + ':\n' + shown.to_string(index=False, formatters={
        name: _number for name in metrics})
