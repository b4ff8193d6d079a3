"""The picture of a recorded run (``report.png``) and its summary table.

:func:`write_pages` draws, with matplotlib's Agg canvas (no display, no
pyplot state), one page per vehicle of the run, one below the other
(:func:`write_report`: one vehicle's):

* the trajectory over the scene (buildings, grain bins, tree crowns), the
  GNSS positions coloured by fix state, the INS positions and the truth;
* the GNSS and INS position errors (east, north) against time with their
  ±1σ bands -- GNSS only when the truth at the antenna (``gnss_truth_enu``,
  aligned with the GNSS rows) is given, else its σ alone;
* the satellites used and the PDOP, and the fix state, against time;
* the IMU specific force and angular rate against time;
* the numbers of :func:`summary_table`;
* a row for acres_sim's further sensors the vehicle carries (``further``:
  the rows of barometer.jsonl, magnetometer.jsonl, ...), one panel each
  (:data:`FURTHER_PANELS`).

Rows are the dicts of ``gnss.jsonl``, ``ins.jsonl`` and ``imu.jsonl``; each
may carry ``sample_time_s`` (else ``t`` or ``t_s``; else the row index is the
time axis).  Truth rows are dicts with ``position_enu_m`` (or ``p``) or
:class:`acres_sim.core.truth.Truth` records.  The INS, IMU, truth and further
sensors' rows may also come as :class:`Columns` (the recorder keeps every
series but the GNSS one so): the same numbers, a key's values for every row in
one array.
"""

import math
from pathlib import Path
import textwrap
from typing import NamedTuple

import numpy as np

__all__ = ['Columns', 'FIX_COLORS', 'FIX_STATES', 'ReportPage', 'format_summary', 'summary_table',
           'draw_pages', 'further_report_columns', 'load_matplotlib',
           'write_pages', 'write_report']

#: Fix states from best to worst, and their colours in every panel.
FIX_STATES = ('rtk_fixed', 'rtk_float', 'dgps', 'single', 'no_fix')
FIX_COLORS = {
    'rtk_fixed': '#1a9850',   # green
    'rtk_float': '#f28e2b',   # orange
    'dgps': '#4e79a7',        # blue
    'single': '#e15759',      # red
    'no_fix': '#555555',      # grey
}
_FIX_LABELS = {'rtk_fixed': 'RTK fixed', 'rtk_float': 'RTK float', 'dgps': 'DGPS',
               'single': 'single', 'no_fix': 'no fix'}

_MAX_LINE_POINTS = 20000      # lines are thinned to about this many points


# ----------------------------------------------------------------------------
# Extracting arrays from rows

class Columns:
    """Rows as columns: ``columns`` maps a key of the rows -- a nested one as
    ``'outer.inner'``, e.g. ``'truth.position_enu_m'`` -- to an array of its
    value in every row (first axis: the rows).  A key no row has is absent."""

    def __init__(self, columns):
        self.columns = dict(columns)
        lengths = {len(column) for column in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f'columns of different lengths: {sorted(lengths)}')
        self.length = lengths.pop() if lengths else 0

    def __len__(self):
        return self.length

    def get(self, *path):
        """The column of a (nested) key as float64, or None."""
        column = self.columns.get('.'.join(path))
        return None if column is None else np.asarray(column, dtype=np.float64)


def _rows(rows):
    """Rows as the helpers below take them: Columns as they are, else a list."""
    return rows if isinstance(rows, Columns) else list(rows or ())


_TIME_KEYS = ('sample_time_s', 't', 't_s')     # a row's time, the first it has


def _times(rows):
    """(times, is_time): sample_time_s / t / t_s of each row, else the index."""
    if isinstance(rows, Columns):
        for key in _TIME_KEYS:
            times = rows.get(key)
            if times is not None and len(rows) and not np.isnan(times).any():
                return times, True
        return np.arange(len(rows), dtype=np.float64), False
    for key in _TIME_KEYS:
        try:
            times = np.array([r[key] for r in rows], dtype=np.float64)   # None: NaN
        except (KeyError, TypeError, ValueError):
            continue
        if rows and not np.isnan(times).any():
            return times, True
    if rows and all(hasattr(r, 'step') for r in rows):
        from acres_sim.core.truth import PHYSICS_HZ
        return np.array([r.step / PHYSICS_HZ for r in rows]), True
    return np.arange(len(rows), dtype=np.float64), False


def _vec_rows(rows, *path, n=3):
    """(len(rows), n) float array of a nested key (one or two deep); NaN where
    it is null/absent."""
    if isinstance(rows, Columns):
        column = rows.get(*path)
        return (np.full((len(rows), n), np.nan) if column is None else
                column.reshape(len(rows), n))
    try:                                  # the usual case first: every row has it
        if len(path) == 1:
            values = [r[path[0]] for r in rows]
        else:
            outer, inner = path
            values = [r[outer][inner] for r in rows]
        return np.array(values, dtype=np.float64).reshape(len(rows), n)
    except (KeyError, TypeError, ValueError):
        pass                              # a row without it: one by one
    out = np.full((len(rows), n), np.nan)
    for i, r in enumerate(rows):
        v = r
        for key in path:
            v = v.get(key) if isinstance(v, dict) else None
            if v is None:
                break
        if v is not None:
            out[i] = np.asarray(v, dtype=np.float64).reshape(n)
    return out


def _scalar_rows(rows, *path):
    """(len(rows),) float array of a (nested) key; NaN where it is null/absent."""
    if isinstance(rows, Columns):
        column = rows.get(*path)
        return np.full(len(rows), np.nan) if column is None else column
    if len(path) == 1:
        key, = path
        return np.array([np.nan if r.get(key) is None else float(r[key]) for r in rows],
                        dtype=np.float64)
    out = np.full(len(rows), np.nan)
    for i, row in enumerate(rows):
        value = row
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            out[i] = float(value)
    return out


def _truth_positions(rows):
    if isinstance(rows, Columns):
        for path in (('position_enu_m',), ('p',), ('truth', 'position_enu_m')):
            if rows.get(*path) is not None:
                return _vec_rows(rows, *path)
        return np.full((len(rows), 3), np.nan)
    out = np.full((len(rows), 3), np.nan)
    for i, r in enumerate(rows):
        if isinstance(r, dict):
            p = r.get('position_enu_m', r.get('p'))
            if p is None and isinstance(r.get('truth'), dict):
                p = r['truth'].get('position_enu_m')
        else:
            p = getattr(r, 'p', None)
        if p is not None:
            out[i] = np.asarray(p, dtype=np.float64).reshape(3)
    return out


def _gnss_errors(gnss_rows, gnss_truth_enu):
    """(n, 3) GNSS position minus the truth at the antenna (NaN without a fix)."""
    if gnss_truth_enu is None:
        return None
    truth = np.asarray(gnss_truth_enu, dtype=np.float64).reshape(-1, 3)
    if truth.shape[0] != len(gnss_rows):
        raise ValueError(f'gnss_truth_enu has {truth.shape[0]} rows '
                         f'for {len(gnss_rows)} GNSS rows')
    return _vec_rows(gnss_rows, 'position_enu_m') - truth


def _ins_errors(ins_rows):
    """(n, 3) INS position minus the truth at the INS point (NaN if absent)."""
    return _vec_rows(ins_rows, 'position_enu_m') - _vec_rows(ins_rows, 'truth', 'position_enu_m')


def _ins_sigma(ins_rows):
    """(n, 3) σ of the INS position from the fix covariance diagonal (ENU)."""
    if isinstance(ins_rows, Columns):
        cov = ins_rows.get('fix', 'position_covariance')
        if cov is None:
            return np.full((len(ins_rows), 3), np.nan)
        cov = cov.reshape(len(ins_rows), -1)
        return np.sqrt(cov[:, [0, 4, 8]] if cov.shape[1] == 9 else cov[:, :3])
    out = np.full((len(ins_rows), 3), np.nan)
    for i, r in enumerate(ins_rows):
        cov = (r.get('fix') or {}).get('position_covariance')
        if cov is not None:
            c = np.asarray(cov, dtype=np.float64).ravel()
            out[i] = np.sqrt(c[[0, 4, 8]] if c.size == 9 else c[:3])
    return out


def _rms(values):
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(math.sqrt(np.mean(v * v))) if v.size else None


def _horizontal(err):
    return np.hypot(err[:, 0], err[:, 1])


# ----------------------------------------------------------------------------
# Summary

def summary_table(gnss_rows=(), ins_rows=(), imu_rows=(), truth_rows=(), *,
                  gnss_truth_enu=None) -> dict:
    """The numbers of a run, JSON-ready.

    ``gnss.fix_share``: share of the GNSS epochs in each fix state (the
    receiver runs at a fixed rate, so this is the share of time; the five
    shares sum to 1 when there is at least one epoch).  Error RMS values are
    over the epochs that have both a position and a truth: horizontal
    sqrt(mean(dE² + dN²)) and vertical sqrt(mean(dU²)); None when nothing can
    be compared (e.g. no ``gnss_truth_enu``).
    """
    gnss_rows, ins_rows, imu_rows, truth_rows = (
        _rows(x) for x in (gnss_rows, ins_rows, imu_rows, truth_rows))
    n = len(gnss_rows)
    counts = {s: 0 for s in FIX_STATES}
    for r in gnss_rows:
        counts[r.get('fix_type', 'no_fix')] += 1
    gnss = {
        'epochs': n,
        'fix_epochs': counts,
        'fix_share': {s: (c / n if n else 0.0) for s, c in counts.items()},
        'epochs_with_position': sum(1 for r in gnss_rows if r.get('position_enu_m') is not None),
        'mean_satellites_used': (float(np.mean(_scalar_rows(gnss_rows, 'satellites_used')))
                                 if n else None),
        'mean_pdop': None,
        'horizontal_rms_m': None, 'vertical_rms_m': None,
        'horizontal_rms_by_fix_m': {s: None for s in FIX_STATES if s != 'no_fix'},
    }
    if n:
        pdop = _scalar_rows(gnss_rows, 'pdop')
        pdop = pdop[np.isfinite(pdop) & (pdop < 99.0)]        # 99.99 = no geometry
        gnss['mean_pdop'] = float(np.mean(pdop)) if pdop.size else None
    err = _gnss_errors(gnss_rows, gnss_truth_enu)
    if err is not None and n:
        gnss['horizontal_rms_m'] = _rms(_horizontal(err))
        gnss['vertical_rms_m'] = _rms(err[:, 2])
        fix = np.array([r.get('fix_type', 'no_fix') for r in gnss_rows])
        for s in gnss['horizontal_rms_by_fix_m']:
            gnss['horizontal_rms_by_fix_m'][s] = _rms(_horizontal(err[fix == s]))

    ins = {'epochs': len(ins_rows), 'horizontal_rms_m': None, 'vertical_rms_m': None}
    if ins_rows:
        e = _ins_errors(ins_rows)
        ins['horizontal_rms_m'] = _rms(_horizontal(e))
        ins['vertical_rms_m'] = _rms(e[:, 2])

    imu = {'samples': len(imu_rows), 'mean_specific_force_flu_mps2': None,
           'mean_angular_velocity_flu_radps': None}
    if imu_rows:
        imu['mean_specific_force_flu_mps2'] = np.nanmean(
            _vec_rows(imu_rows, 'specific_force_flu_mps2'), axis=0).tolist()
        imu['mean_angular_velocity_flu_radps'] = np.nanmean(
            _vec_rows(imu_rows, 'angular_velocity_flu_radps'), axis=0).tolist()

    spans = [t for rows in (gnss_rows, ins_rows, imu_rows, truth_rows) if rows
             for t, is_time in [_times(rows)] if is_time]
    duration = (float(max(t.max() for t in spans) - min(t.min() for t in spans))
                if spans else None)
    return {'duration_s': duration, 'gnss': gnss, 'ins': ins, 'imu': imu,
            'truth': {'samples': len(truth_rows)}}


def _fmt_m(v):
    return 'n/a' if v is None else (f'{v * 100:.1f} cm' if v < 1.0 else f'{v:.2f} m')


def format_summary(summary: dict) -> str:
    """The summary as a few lines of text (for the CLI and the report)."""
    g, i, u = summary['gnss'], summary['ins'], summary['imu']
    lines = []
    if summary.get('duration_s') is not None:
        lines.append(f"duration {summary['duration_s']:.1f} s")
    lines.append(f"GNSS {g['epochs']} epochs, {g['epochs_with_position']} with a position")
    if 'heading_epochs' in g:
        lines.append(f"  dual-antenna heading in {g['epochs_with_heading']} of "
                     f"{g['heading_epochs']} epochs")
    if g['epochs']:
        lines.append('  fix share: ' + ', '.join(
            f"{_FIX_LABELS[s]} {100 * g['fix_share'][s]:.1f} %"
            for s in FIX_STATES if g['fix_epochs'][s]))
        sats = g['mean_satellites_used']
        pdop = g['mean_pdop']
        lines.append(f"  mean satellites used {sats:.1f}, mean PDOP "
                     + ('n/a' if pdop is None else f'{pdop:.2f}'))
    lines.append(f"  error RMS horizontal {_fmt_m(g['horizontal_rms_m'])}, "
                 f"vertical {_fmt_m(g['vertical_rms_m'])}")
    by_fix = {s: v for s, v in g['horizontal_rms_by_fix_m'].items() if v is not None}
    if by_fix:
        lines.append('  horizontal RMS by state: ' + ', '.join(
            f'{_FIX_LABELS[s]} {_fmt_m(v)}' for s, v in by_fix.items()))
    lines.append(f"INS {i['epochs']} epochs, "
                 f"error RMS horizontal {_fmt_m(i['horizontal_rms_m'])}, "
                 f"vertical {_fmt_m(i['vertical_rms_m'])}")
    lines.append(f"IMU {u['samples']} samples")
    if u['mean_specific_force_flu_mps2'] is not None:
        f = u['mean_specific_force_flu_mps2']
        lines.append(f'  mean specific force [{f[0]:.3f}, {f[1]:.3f}, {f[2]:.3f}] m/s²')
    lines.append(f"truth {summary['truth']['samples']} samples")
    return '\n'.join(lines)


# ----------------------------------------------------------------------------
# Drawing

def _thin(*arrays):
    n = len(arrays[0])
    step = max(1, int(math.ceil(n / _MAX_LINE_POINTS)))
    return tuple(a[::step] for a in arrays)


def _draw_scene(ax, scene):
    from matplotlib.patches import Circle, Rectangle
    if scene is None:
        return
    kw = dict(zorder=1)
    for i, (x0, y0, _, x1, y1, _) in enumerate(np.asarray(scene.boxes).reshape(-1, 6)):
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor='#bdbdbd',
                               edgecolor='#636363', lw=0.8,
                               label='building' if i == 0 else None, **kw))
    for i, (x, y, r, _, _) in enumerate(np.asarray(scene.cylinders).reshape(-1, 5)):
        ax.add_patch(Circle((x, y), r, facecolor='#d9c9a3', edgecolor='#8c6d31', lw=0.8,
                            label='grain bin' if i == 0 else None, **kw))
    for i, (x, y, _, r) in enumerate(np.asarray(scene.spheres).reshape(-1, 4)):
        ax.add_patch(Circle((x, y), r, facecolor='#a1d99b', edgecolor='#31a354', lw=0.6, alpha=0.7,
                            label='tree crown' if i == 0 else None, **kw))


def _limits(points, scene, margin_frac=0.08, min_span=40.0):
    pts = points[np.all(np.isfinite(points), axis=1)] if points.size else points
    if pts.size == 0 and scene is not None and scene.n_obstacles:
        b = np.asarray(scene.boxes).reshape(-1, 6)
        c = np.asarray(scene.cylinders).reshape(-1, 5)
        s = np.asarray(scene.spheres).reshape(-1, 4)
        pts = np.vstack([b[:, [0, 1]], b[:, [3, 4]], c[:, :2], s[:, :2]])
    if pts.size == 0:
        return (-50.0, 50.0), (-50.0, 50.0)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    centre, span = (lo + hi) / 2, max(float((hi - lo).max()) * (1 + 2 * margin_frac), min_span)
    half = span / 2
    return (centre[0] - half, centre[0] + half), (centre[1] - half, centre[1] + half)


def _no_data(ax, what='no rows'):
    ax.text(0.5, 0.5, what, ha='center', va='center', color='#888888', fontsize=11,
            transform=ax.transAxes)


def _time_label(is_time):
    return 'time [s]' if is_time else 'sample'


def _shade_fix(ax, t, fix):
    """Light background spans per fix state."""
    if len(t) == 0:
        return
    last = t[-1] + (float(np.median(np.diff(t))) if len(t) > 1 else 0.0)
    start = 0
    for k in range(1, len(t) + 1):
        if k == len(t) or fix[k] != fix[start]:
            t1 = t[k] if k < len(t) else last
            ax.axvspan(t[start], t1, color=FIX_COLORS.get(fix[start], '#ffffff'), alpha=0.12, lw=0)
            start = k


def _error_panel(ax, t, err, sigma, title, is_time, fix=None, log_span=False):
    if fix is not None:
        _shade_fix(ax, t, fix)
    if sigma is not None:
        same = np.allclose(sigma[:, 0], sigma[:, 1], equal_nan=True)
        bands = ((0, '#4e79a7', '±1σ' if same else '±1σ east'), (1, '#e15759', '±1σ north'))
        for c, col, lab in bands:
            if c == 1 and same:
                break
            tt, sg = _thin(t, sigma[:, c])
            ax.fill_between(tt, -sg, sg, color=col, alpha=0.15, lw=0, label=lab)
            ax.plot(tt, sg, color=col, lw=0.9, ls='--', zorder=5)
            ax.plot(tt, -sg, color=col, lw=0.9, ls='--', zorder=5)
    if err is not None:
        tt, ee, nn = _thin(t, err[:, 0], err[:, 1])
        ax.plot(tt, ee, color='#1f4e79', lw=0.8, label='east error')
        ax.plot(tt, nn, color='#b22222', lw=0.8, label='north error')
    ax.axhline(0.0, color='k', lw=0.5)
    if log_span:
        parts = ([np.abs(err[:, :2]).ravel()] if err is not None else []) \
            + ([sigma[:, :2].ravel()] if sigma is not None else [])
        vals = np.concatenate([a[np.isfinite(a)] for a in parts] or [np.zeros(1)])
        if vals.size and np.nanmax(vals) > 0.5:
            # Centimetres (RTK) and metres (single) on one axis: linear within
            # ±0.1 m, logarithmic beyond.
            ax.set_yscale('symlog', linthresh=0.1, linscale=1.5)
            top = 10.0 ** math.ceil(math.log10(float(np.nanmax(vals))))
            ticks = [t for t in (0.1, 1.0, 10.0, 100.0, 1000.0) if t <= top]
            values = [-t for t in reversed(ticks)] + [-0.05, 0.0, 0.05] + ticks
            ax.set_yticks(values, [f'{v:g}' for v in values])
    ax.set_title(title)
    ax.set_xlabel(_time_label(is_time))
    ax.set_ylabel('error [m]')
    ax.grid(True, alpha=0.3)
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc='upper right', fontsize=8, ncol=2)


class ReportPage(NamedTuple):
    """One vehicle's part of the report: its heading and rows (see the module
    docstring), the truth at its antenna and its :func:`summary_table`."""

    heading: str
    gnss_rows: list
    ins_rows: list
    imu_rows: list
    truth_rows: list
    gnss_truth_enu: object = None
    summary: dict = None
    events: tuple = ()     # [{name, type, active_s: [[start, end or None], ...]}]
    zones: tuple = ()      # the event zones to draw: [{name, polygon | center, radius_m}]
    further: dict = None   # acres_sim's further sensors: {'baro' | 'mag' | ...: rows}


PAGE_SIZE_IN = (18, 12)       # one vehicle's page [inch]
FURTHER_ROW_IN = 3.5          # its further sensors' row adds this height [inch]
MAX_HEIGHT_PX = 16000         # a fleet's pages together: the resolution drops to stay within

#: The room around a page's panels [inch]: left, right, top, bottom, and
#: between columns and rows (tick labels, axis labels, titles, a twin axis).
PAGE_MARGINS_IN = {'left': 0.85, 'right': 0.75, 'top': 0.45, 'bottom': 0.6,
                   'between_columns': 1.45, 'between_rows': 0.95}
TITLE_GAP_IN = 0.1            # above the run's title and a page's heading [inch]
PAGE_TITLE_IN = 0.35          # the run's title, above the first page [inch]
HEADING_IN = 0.3              # a fleet page's heading [inch]
#: Panel titles at a fixed height above their axes: no panel has labels on
#: top, so matplotlib need not look for any under each title.
FIXED_TITLES = {'axes.titley': 1.0}


def write_report(path, gnss_rows, ins_rows, imu_rows, truth_rows, scene, summary=None, *,
                 gnss_truth_enu=None, title='acres_sim recording', dpi=100) -> Path:
    """Draw the report of one vehicle's run into ``path`` (PNG) and return the
    path.  ``summary`` is the dict of :func:`summary_table` (computed when None)."""
    page = ReportPage('', gnss_rows, ins_rows, imu_rows, truth_rows, gnss_truth_enu, summary)
    return write_pages(path, [page], scene, title=title, dpi=dpi)


def load_matplotlib() -> None:
    """Import every part of matplotlib drawing a report uses (about a second
    here; it is imported on first use otherwise, matplotlib being the slowest
    import of the recorder: :mod:`acres_sim.record.report_process` does it
    beside the run)."""
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.image  # noqa: F401
    import matplotlib.lines  # noqa: F401
    import matplotlib.patches  # noqa: F401


def write_pages(path, pages, scene, *, title='acres_sim recording', dpi=100) -> Path:
    """Draw the report of a run into ``path`` (PNG): one page per vehicle
    (:class:`ReportPage`), one below the other, under ``title``.

    The figure is drawn once: Agg renders it and the rendered pixels are
    written as they are, where ``savefig`` would render it all again (the
    report of a 600 s run: 2.76 s with savefig, 2.26 s so); zlib's fastest
    level, as the picture is mostly flat colour (a tenth larger).  The panels
    sit in fixed margins (:data:`PAGE_MARGINS_IN`): matplotlib's constrained
    layout measured every label for them, a third of the drawing's time."""
    from matplotlib.image import imsave

    fig, dpi = draw_pages(pages, scene, title=title, dpi=dpi)
    path = Path(path)
    fig.canvas.draw()
    imsave(path, np.asarray(fig.canvas.buffer_rgba()), format='png', dpi=dpi,
           pil_kwargs={'compress_level': 1})
    return path


def draw_pages(pages, scene, *, title='acres_sim recording', dpi=100):
    """The report's figure (an Agg matplotlib Figure) and its resolution."""
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width, height = PAGE_SIZE_IN
    if any(page.further for page in pages):
        height += FURTHER_ROW_IN
    n = len(pages)
    dpi = min(dpi, MAX_HEIGHT_PX / (height * n))
    fig = Figure(figsize=(width, height * n), dpi=dpi)
    FigureCanvasAgg(fig)
    with rc_context(FIXED_TITLES):
        _draw_pages_on(fig, pages, scene, title, (width, height))
    return fig, dpi


def _draw_pages_on(fig, pages, scene, title, size_in):
    width, height = size_in
    n = len(pages)
    fig.suptitle(title, fontsize=15, fontweight='bold', y=1.0 - TITLE_GAP_IN / (height * n),
                 va='top')
    if n == 1:
        _draw_page(fig, pages[0], scene, (width, height), top_in=PAGE_TITLE_IN)
    else:
        for k, (subfig, page) in enumerate(zip(fig.subfigures(n, 1, squeeze=False)[:, 0],
                                               pages)):
            top_in = PAGE_TITLE_IN if k == 0 else 0.0   # the run's title above the first
            subfig.suptitle(page.heading, fontsize=13, fontweight='bold', x=0.01, ha='left',
                            y=1.0 - (top_in + TITLE_GAP_IN) / height, va='top')
            _draw_page(subfig, page, scene, (width, height), top_in=top_in + HEADING_IN)


SUMMARY_COLUMNS = 66          # the summary's lines fit the first column's width


def _wrapped(text, width=SUMMARY_COLUMNS):
    """``text`` with each line longer than ``width`` wrapped, its further
    lines indented two more than its own."""
    out = []
    for line in text.splitlines():
        indent = ' ' * (len(line) - len(line.lstrip()) + 2)
        out.extend(textwrap.wrap(line, width, subsequent_indent=indent) or [''])
    return '\n'.join(out)


def _page_grid(fig, rows, size_in, top_in):
    """The page's grid of panels (``rows`` x 3) on ``fig`` of ``size_in``
    (width, height) [inch], ``top_in`` below its top for titles, in the fixed
    margins of :data:`PAGE_MARGINS_IN`."""
    width, height = size_in
    m = PAGE_MARGINS_IN
    ratios = [1.25, 1, 1]
    panels_h = height - top_in - m['top'] - m['bottom'] - (rows - 1) * m['between_rows']
    return fig.add_gridspec(rows, 3, width_ratios=ratios,
                            left=m['left'] / width, right=1.0 - m['right'] / width,
                            top=1.0 - (top_in + m['top']) / height, bottom=m['bottom'] / height,
                            wspace=_column_space(width, 3),
                            hspace=m['between_rows'] / (panels_h / rows))


def _column_space(width, columns):
    """A grid's ``wspace`` for ``columns`` panels across a page ``width`` [inch]
    wide: the margin between columns, as a share of a panel's mean width."""
    m = PAGE_MARGINS_IN
    gap = m['between_columns']
    panels_w = width - m['left'] - m['right'] - (columns - 1) * gap
    return gap / (panels_w / columns)


EVENT_COLOR = '#e6550d'      # zones
EVENT_COLORS = ('#e6550d', '#756bb1', '#31a354', '#de2d26', '#3182bd', '#636363', '#8c6d31')


def _shade_events(ax, events, t_end):
    """Each event's active intervals as a hatched band over a time axis
    (``gid`` 'event:<name>'), its name at the top of the band, one colour each."""
    for i, event in enumerate(events):
        color = EVENT_COLORS[i % len(EVENT_COLORS)]
        for start, end in event['active_s']:
            end = t_end if end is None else end
            ax.axvspan(start, max(end, start), facecolor=color, alpha=0.10, edgecolor=color,
                       hatch='//', lw=0.0, zorder=0, gid=f'event:{event["name"]}')
            ax.text(start, 1.0 - 0.05 * (i % 4), f' {event["name"]}',
                    transform=ax.get_xaxis_transform(), fontsize=7, color=color, va='top',
                    ha='left', clip_on=True)


def _draw_zones(ax, zones):
    """The event zones on the map (``gid`` 'zone:<name>'), dashed and named."""
    from matplotlib.patches import Circle, Polygon

    for zone in zones:
        if 'polygon' in zone:
            patch = Polygon(zone['polygon'], closed=True)
            x, y = np.mean(np.asarray(zone['polygon'], dtype=float), axis=0)
        else:
            patch = Circle(tuple(zone['center']), zone['radius_m'])
            x, y = zone['center']
        patch.set(facecolor=EVENT_COLOR, alpha=0.15, edgecolor=EVENT_COLOR, ls='--', lw=1.2,
                  zorder=2, gid=f'zone:{zone["name"]}')
        ax.add_patch(patch)
        ax.text(x, y, zone['name'], color=EVENT_COLOR, fontsize=8, ha='center', va='center',
                zorder=6)


def _draw_trajectory(ax, scene, fix, gnss_pos, ins_pos, truth_pos, gnss_truth_enu):
    """The trajectory panel: truth, INS and the GNSS fixes by state over the scene."""
    _draw_scene(ax, scene)
    if np.isfinite(truth_pos).any():
        x, y = _thin(truth_pos[:, 0], truth_pos[:, 1])
        ax.plot(x, y, color='k', lw=0.7, zorder=5, label='truth')
    if np.isfinite(ins_pos).any():
        x, y = _thin(ins_pos[:, 0], ins_pos[:, 1])
        ax.plot(x, y, color='#7b3294', lw=0.8, ls='--', zorder=3, label='INS')
    for s in FIX_STATES:
        sel = fix == s
        if not sel.any():
            continue
        if s == 'no_fix':
            if gnss_truth_enu is not None:
                p = np.asarray(gnss_truth_enu, dtype=np.float64).reshape(-1, 3)[sel]
                ax.scatter(p[:, 0], p[:, 1], marker='x', s=14, color=FIX_COLORS[s], zorder=4,
                           label=f'GNSS {_FIX_LABELS[s]} (at truth)')
            continue
        p = gnss_pos[sel]
        ax.scatter(p[:, 0], p[:, 1], s=6, color=FIX_COLORS[s], zorder=4,
                   label=f'GNSS {_FIX_LABELS[s]}')
    all_pts = np.vstack([a[:, :2] for a in (gnss_pos, ins_pos, truth_pos) if a.size]
                        or [np.zeros((0, 2))])
    xl, yl = _limits(all_pts, scene)
    ax.set_xlim(*xl)
    ax.set_ylim(*yl)
    ax.set_aspect('equal', adjustable='box')
    ax.set_title('Trajectory over the scene' + (f' ({scene.name})' if scene is not None else ''))
    ax.set_xlabel('east [m] (grid ENU)')
    ax.set_ylabel('north [m] (grid ENU)')
    ax.grid(True, alpha=0.3)
    ax.legend(loc='best', fontsize=8, markerscale=2, framealpha=0.9)


def _draw_page(fig, page, scene, size_in=PAGE_SIZE_IN, top_in=PAGE_TITLE_IN):
    """One vehicle's panels on ``fig`` (a Figure or a SubFigure) of
    ``size_in`` [inch], the top ``top_in`` left to its titles."""
    from matplotlib.lines import Line2D

    gnss_rows, ins_rows, imu_rows, truth_rows = (
        _rows(x) for x in (page.gnss_rows, page.ins_rows, page.imu_rows, page.truth_rows))
    gnss_truth_enu, summary = page.gnss_truth_enu, page.summary
    if summary is None:
        summary = summary_table(gnss_rows, ins_rows, imu_rows, truth_rows,
                                gnss_truth_enu=gnss_truth_enu)
    further = {name: rows for name, rows in (page.further or {}).items()
               if name in FURTHER_PANELS}
    gs = _page_grid(fig, 4 if further else 3, size_in, top_in)

    t_g, g_is_time = _times(gnss_rows)
    fix = np.array([r.get('fix_type', 'no_fix') for r in gnss_rows])
    gnss_pos = _vec_rows(gnss_rows, 'position_enu_m')
    t_i, i_is_time = _times(ins_rows)
    ins_pos = _vec_rows(ins_rows, 'position_enu_m')
    truth_pos = _truth_positions(truth_rows)
    if not truth_rows and ins_rows:
        truth_pos = _vec_rows(ins_rows, 'truth', 'position_enu_m')

    # -- trajectory over the scene, with the event zones
    ax = fig.add_subplot(gs[0:2, 0])
    _draw_trajectory(ax, scene, fix, gnss_pos, ins_pos, truth_pos, gnss_truth_enu)
    _draw_zones(ax, page.zones)
    timed = []          # the panels over time, shaded with the event intervals at the end

    # -- summary text
    ax = fig.add_subplot(gs[2, 0])
    ax.axis('off')
    ax.set_title('Summary', loc='left')
    ax.text(0.0, 1.0, _wrapped(format_summary(summary)), va='top', ha='left',
            family='monospace', fontsize=9, transform=ax.transAxes)

    # -- GNSS error
    ax = fig.add_subplot(gs[0, 1])
    timed.append(ax)
    g_sigma = _vec_rows(gnss_rows, 'sigma_enu_m') if gnss_rows else None
    g_err = _gnss_errors(gnss_rows, gnss_truth_enu)
    _error_panel(ax, t_g, g_err, g_sigma,
                 'GNSS horizontal error (east, north) and reported ±1σ' if g_err is not None
                 else 'GNSS reported σ (no truth at the antenna given)',
                 g_is_time, fix=fix if gnss_rows else None, log_span=True)
    if not gnss_rows:
        _no_data(ax, 'no GNSS rows')

    # -- INS error
    ax = fig.add_subplot(gs[1, 1])
    timed.append(ax)
    i_err = _ins_errors(ins_rows) if ins_rows else None
    if i_err is not None and not np.isfinite(i_err).any():
        i_err = None
    _error_panel(ax, t_i, i_err, _ins_sigma(ins_rows) if ins_rows else None,
                 'INS horizontal error (east, north) and ±1σ of the fix', i_is_time)
    if not ins_rows:
        _no_data(ax, 'no INS rows')

    # -- satellites and PDOP
    ax = fig.add_subplot(gs[2, 1])
    timed.append(ax)
    ax.set_title('Satellites used and PDOP')
    ax.set_xlabel(_time_label(g_is_time))
    ax.set_ylabel('satellites used', color='#1f4e79')
    ax.grid(True, alpha=0.3)
    if gnss_rows:
        tt, su = _thin(t_g, _scalar_rows(gnss_rows, 'satellites_used'))
        ax.step(tt, su, where='post', color='#1f4e79', lw=1.0, label='satellites used')
        ax.set_ylim(bottom=0)
        ax2 = ax.twinx()
        pdop = _scalar_rows(gnss_rows, 'pdop')
        pdop = np.where(pdop >= 99.0, np.nan, pdop)          # 99.99: no geometry
        tt, pd = _thin(t_g, pdop)
        ax2.plot(tt, pd, color='#d95f02', lw=1.0, label='PDOP')
        ax2.set_ylabel('PDOP', color='#d95f02')
        finite = pdop[np.isfinite(pdop)]
        # Spikes of a poor geometry are clipped at 10 so the usual values stay readable.
        ax2.set_ylim(0, max(3.0, min(10.0, 1.1 * float(finite.max()))) if finite.size else 3.0)
        ax.legend(handles=[Line2D([], [], color='#1f4e79', label='satellites used'),
                           Line2D([], [], color='#d95f02', label='PDOP (gap: < 4 satellites)')],
                  loc='center right', fontsize=8, framealpha=0.9)
    else:
        _no_data(ax, 'no GNSS rows')

    # -- IMU
    t_m, m_is_time = _times(imu_rows)
    imu_panels = (('specific_force_flu_mps2', 'IMU specific force', 'm/s²'),
                  ('angular_velocity_flu_radps', 'IMU angular rate', 'rad/s'))
    for row_i, (key, name, unit) in enumerate(imu_panels):
        ax = fig.add_subplot(gs[row_i, 2])
        timed.append(ax)
        ax.set_title(f'{name} (body FLU)')
        ax.set_xlabel(_time_label(m_is_time))
        ax.set_ylabel(f'{name.split(" ", 1)[1]} [{unit}]')
        ax.grid(True, alpha=0.3)
        if imu_rows:
            v = _vec_rows(imu_rows, key)
            for c, (lab, col) in enumerate(zip('xyz', ('#1b9e77', '#d95f02', '#7570b3'))):
                tt, vv = _thin(t_m, v[:, c])
                ax.plot(tt, vv, lw=0.7, color=col, label=f'{lab} ({"forward left up".split()[c]})')
            ax.legend(loc='center right', fontsize=8, framealpha=0.9)
        else:
            _no_data(ax, 'no IMU rows')

    # -- fix state over time
    ax = fig.add_subplot(gs[2, 2])
    timed.append(ax)
    ax.set_title('GNSS fix state')
    ax.set_xlabel(_time_label(g_is_time))
    levels = {s: len(FIX_STATES) - 1 - k for k, s in enumerate(FIX_STATES)}
    ax.set_yticks(list(levels.values()), [_FIX_LABELS[s] for s in levels])
    ax.set_ylim(-0.5, len(FIX_STATES) - 0.5)
    ax.grid(True, axis='x', alpha=0.3)
    if gnss_rows:
        y = np.array([levels.get(s, 0) for s in fix], dtype=float)
        ax.step(t_g, y, where='post', color='#999999', lw=0.6, zorder=1)
        for s in FIX_STATES:
            sel = fix == s
            if sel.any():
                ax.scatter(t_g[sel], y[sel], s=6, color=FIX_COLORS[s], zorder=2)
    # -- the further sensors, one panel each in a row of their own
    if further:
        row = gs[3, :].subgridspec(1, len(further),
                                   wspace=_column_space(size_in[0], len(further)))
        for i, (name, rows) in enumerate(further.items()):
            ax = fig.add_subplot(row[0, i])
            timed.append(ax)
            FURTHER_PANELS[name](ax, _rows(rows))
    if page.events:
        ends = [float(np.nanmax(t)) for t, is_time in ((t_g, g_is_time), (t_i, i_is_time),
                                                         (t_m, m_is_time))
                if is_time and len(t)]
        t_end = max(ends) if ends else 0.0
        for ax in timed:
            limits = ax.get_xlim()
            _shade_events(ax, page.events, t_end)
            ax.set_xlim(limits)


# ----------------------------------------------------------------------------
# The further sensors' panels (rows of barometer.jsonl, magnetometer.jsonl, ...)

def _further_panel(ax, rows, title, ylabel, what):
    """A further sensor's panel over time: its title and axes; the times of its
    ``rows``, or None (and 'no ... rows' on the panel) when there are none."""
    ax.set_title(title)
    t, is_time = _times(rows)
    ax.set_xlabel(_time_label(is_time))
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if not rows:
        _no_data(ax, f'no {what} rows')
        return None
    return t


def _barometer_panel(ax, rows):
    """The pressure altitude's error against the true altitude."""
    t = _further_panel(ax, rows, 'Barometer: pressure altitude - true altitude', 'error [m]',
                       'barometer')
    if t is None:
        return
    error = _scalar_rows(rows, 'pressure_altitude_m') - _scalar_rows(rows, 'truth', 'altitude_m')
    tt, ee = _thin(t, error)
    ax.plot(tt, ee, lw=0.6, color='#1f4e79', label='error')
    ax.legend(loc='upper right', fontsize=8, framealpha=0.9)


def _magnetometer_panel(ax, rows):
    """The measured field in body axes, with its truth (dashed)."""
    t = _further_panel(ax, rows, 'Magnetometer field (body FLU)', 'field [µT]', 'magnetometer')
    if t is None:
        return
    measured = _vec_rows(rows, 'magnetic_field_flu_t') * 1e6
    truth = _vec_rows(rows, 'truth', 'magnetic_field_flu_t') * 1e6
    for c, (lab, col) in enumerate(zip('xyz', ('#1b9e77', '#d95f02', '#7570b3'))):
        tt, vv = _thin(t, measured[:, c])
        ax.plot(tt, vv, lw=0.6, color=col, label=lab)
        tt, vv = _thin(t, truth[:, c])
        ax.plot(tt, vv, lw=0.8, color='black', ls='--')
    ax.legend(loc='upper right', fontsize=8, framealpha=0.9)


def _wheel_odometry_panel(ax, rows):
    """The odometry's speed error against the truth, and the wheels' slip."""
    t = _further_panel(ax, rows, 'Wheel odometry: speed - true speed, and slip',
                       'speed error [m/s]', 'wheel odometry')
    if t is None:
        return
    error = _scalar_rows(rows, 'speed_mps') - _scalar_rows(rows, 'truth', 'speed_mps')
    tt, ee = _thin(t, error)
    ax.plot(tt, ee, lw=0.6, color='#1f4e79')
    ax2 = ax.twinx()
    tt, ss = _thin(t, 100.0 * _scalar_rows(rows, 'slip'))
    ax2.plot(tt, ss, lw=0.8, color='#d95f02')
    ax2.set_ylabel('slip [%]', color='#d95f02')


def _radar_panel(ax, rows):
    """The radar's speed error against the truth, with its ±1σ."""
    t = _further_panel(ax, rows, 'Radar: speed - true speed, ±1σ', 'speed error [m/s]', 'radar')
    if t is None:
        return
    valid = _scalar_rows(rows, 'valid') > 0.5
    # a single beam has no sense of direction: its speed against the true one's size
    error = _scalar_rows(rows, 'speed_mps') - np.abs(_scalar_rows(rows, 'truth', 'speed_mps'))
    sigma = _scalar_rows(rows, 'sigma_mps')
    error, sigma = np.where(valid, error, np.nan), np.where(valid, sigma, np.nan)
    tt, ee, sg = _thin(t, error, sigma)
    ax.fill_between(tt, -sg, sg, color='#1f4e79', alpha=0.15, lw=0, label='±1σ')
    ax.plot(tt, ee, lw=0.6, color='#1f4e79', label='error (gap: below the minimum speed)')
    ax.legend(loc='upper right', fontsize=8, framealpha=0.9)


#: sensor name -> the function drawing its panel (ax, rows)
FURTHER_PANELS = {'baro': _barometer_panel, 'mag': _magnetometer_panel,
                  'wheel_odometry': _wheel_odometry_panel, 'radar': _radar_panel}

#: sensor name -> the keys of its rows that its panel reads, besides the time
FURTHER_KEYS = {'baro': ('pressure_altitude_m', 'truth'),
                'mag': ('magnetic_field_flu_t', 'truth'),
                'wheel_odometry': ('speed_mps', 'slip', 'truth'),
                'radar': ('valid', 'speed_mps', 'sigma_mps', 'truth')}


def further_report_columns(name, columns):
    """The columns of a further sensor's rows its panel reads (what a recorder
    keeps of them for the report: a fifth of a wheel odometry row), of rows
    given as :class:`Columns` keys (``{key: array}``, a nested key as
    ``'outer.inner'``)."""
    read = ('sample_time_s', *FURTHER_KEYS[name])
    return {key: column for key, column in columns.items()
            if key in read or key.split('.', 1)[0] in read}
