"""The picture of a sweep, ``sweep.png``: one row per metric (the
evaluation's numeric columns); in it, the metric against each grid axis as
percentiles over the seeds (median line, 5th to 95th percentile band; a line
per combination of the other axes while there are few, else over all of
them), and the distribution over the seeds (a box per grid point, or a
histogram when the sweep has no grid or too many points).  Only complete
runs are drawn."""

import math

import numpy as np

from acres_sim.analysis.sweep_table import axis_labels

__all__ = ['MAX_METRICS', 'draw']

MAX_METRICS = 12          # rows of the picture at most (the first metrics of the table)
MAX_LINES = 6             # combinations of the other axes drawn as lines of their own
MAX_BOXES = 24            # grid points drawn as boxes of their own


def _numeric(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _short(value, limit=18) -> str:
    text = f'{value:g}' if isinstance(value, float) else str(value)
    return text if len(text) <= limit else text[:limit - 1] + '…'


def _percentiles(values):
    values = np.asarray([v for v in values if v is not None and math.isfinite(v)], float)
    if values.size == 0:
        return math.nan, math.nan, math.nan
    return tuple(np.percentile(values, [5, 50, 95]))


def _against_axis(ax, frame, name, axis_values, others, metric, labels):
    numeric = _numeric(axis_values)
    x = list(axis_values) if numeric else list(range(len(axis_values)))
    combos = frame[others].drop_duplicates().values.tolist() if others else [[]]
    if len(combos) > MAX_LINES:
        combos = [None]                  # over all of them
    for combo in combos:
        chosen = frame if not combo else frame[
            (frame[others] == combo).all(axis=1)]
        low, mid, high = zip(*(_percentiles(chosen.loc[chosen[name] == value, metric])
                               for value in axis_values))
        label = ', '.join(f'{labels[o]}={_short(v)}' for o, v in zip(others, combo)) \
            if combo else ('all others' if others else 'p50')
        line, = ax.plot(x, mid, marker='o', label=label)
        ax.fill_between(x, low, high, color=line.get_color(), alpha=0.15)
    if not numeric:
        ax.set_xticks(x, [_short(v) for v in axis_values], rotation=30, ha='right')
    ax.set_xlabel(labels[name])
    ax.set_ylabel(metric)
    ax.grid(alpha=0.3)
    if others or len(combos) > 1:
        ax.legend(fontsize='x-small')


def _distribution(ax, frame, axes, metric, labels):
    points = frame[list(axes)].drop_duplicates().values.tolist() if axes else []
    if axes and len(points) <= MAX_BOXES:
        data, names = [], []
        for point in points:
            chosen = frame[(frame[list(axes)] == point).all(axis=1)][metric].dropna()
            data.append(chosen.to_numpy())
            names.append(', '.join(_short(v, 10) for v in point))
        ax.boxplot(data, whis=(5, 95))
        ax.set_xticks(range(1, len(names) + 1), names, rotation=30, ha='right',
                      fontsize='x-small')
        ax.set_xlabel(', '.join(labels[a] for a in axes))
    else:
        ax.hist(frame[metric].dropna().to_numpy(), bins=min(30, max(5, len(frame) // 3)))
        ax.set_xlabel(metric)
        ax.set_ylabel('runs')
    ax.set_title('over the seeds', fontsize='small')
    ax.grid(alpha=0.3)


def draw(frame, axes, grid_values, metrics, path) -> None:
    """Draw the sweep's ``frame`` (its table, grid cells as in the table)
    into the PNG file ``path``; ``grid_values``: each axis's values as table
    cells, in the order of the sweep."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    frame = frame[frame['status'] == 'complete']
    metrics = metrics[:MAX_METRICS]
    labels = axis_labels(axes)
    cols = len(axes) + 1
    rows = max(len(metrics), 1)
    fig = Figure(figsize=(4.6 * cols, 3.2 * rows), layout='constrained')
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False)
    for row, metric in enumerate(metrics):
        for col, name in enumerate(axes):
            others = [a for a in axes if a != name]
            _against_axis(grid[row][col], frame, name, grid_values[name], others, metric,
                          labels)
        _distribution(grid[row][-1], frame, axes, metric, labels)
    if not metrics:
        grid[0][0].text(0.5, 0.5, 'no complete run to draw', ha='center', va='center')
    fig.suptitle(f'sweep: {len(frame)} complete runs', fontsize='medium')
    fig.savefig(path, format='png', dpi=80)
