"""The evaluation's picture per estimate and its Markdown summary.

The picture (matplotlib, Agg): the horizontal error over time against the
reported 2-sigma radius, over the GNSS fix state; the vertical error with its
+-2 sigma; the NEES of the position against the band a consistent filter
keeps 95 % of its samples in; the heading error with its +-2 sigma (or, for a
position-only estimate, the trajectory coloured by its error).
"""

from dataclasses import replace
import io

import numpy as np

from acres_sim.files import write_atomically

__all__ = ['draw_estimate', 'markdown']

STATE_COLOURS = {'rtk_fixed': '#2ca02c', 'rtk_float': '#bcbd22', 'dgps': '#1f77b4',
                 'single': '#ff7f0e', 'no_fix': '#d62728'}


def _states(ax, times, states):
    """Shade the fix state behind a time axis."""
    if not len(times) or states[0] is None:
        return
    start = 0
    for i in range(1, len(states) + 1):
        if i == len(states) or states[i] != states[start]:
            ax.axvspan(times[start], times[min(i, len(times) - 1)],
                       color=STATE_COLOURS.get(states[start], '#7f7f7f'), alpha=0.12, lw=0)
            start = i


MAX_POINTS = 6000               # per series drawn (the figures are the summary's, of all)


def _thinned(scored):
    """Every k-th sample, so that a long run draws as fast as a short one."""
    k = max(1, len(scored.times) // MAX_POINTS)
    if k == 1:
        return scored

    def pick(a):
        return None if a is None else a[::k]

    return replace(scored, times=scored.times[::k], errors=scored.errors[::k],
                   sigmas=pick(scored.sigmas), nees=pick(scored.nees),
                   heading_error_deg=pick(scored.heading_error_deg),
                   heading_sigma_deg=pick(scored.heading_sigma_deg),
                   fix_states=scored.fix_states[::k], truth_xy=scored.truth_xy[::k],
                   estimate_xy=scored.estimate_xy[::k])


def draw_estimate(path, scored, truth):
    """The picture of one estimate's scores (``scored``: metrics.Scored) into ``path``."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    from scipy.stats import chi2

    scored = _thinned(scored)
    s, t = scored.summary, scored.times
    fig, axes = plt.subplots(4, 1, figsize=(10, 11), sharex=False)
    fig.suptitle(f"{s['name']} ({s['source']}) at {s['point']} against the truth of "
                 f"{s['vehicle']}; alignment {s['alignment']['method']}", fontsize=10)
    horizontal = np.linalg.norm(scored.errors[:, :2], axis=1)
    ax = axes[0]
    _states(ax, t, scored.fix_states)
    ax.plot(t, horizontal, lw=0.8, label='horizontal error')
    if scored.sigmas is not None:
        ax.plot(t, 2.0 * np.hypot(scored.sigmas[:, 0], scored.sigmas[:, 1]) / np.sqrt(2),
                lw=0.8, color='k', alpha=0.6, label='reported 2 sigma (per axis rms)')
    ax.set_yscale('log')
    ax.set_ylabel('horizontal [m]')
    ax.legend(loc='upper right', fontsize=8)
    ax = axes[1]
    _states(ax, t, scored.fix_states)
    ax.plot(t, scored.errors[:, 2], lw=0.8, label='vertical error')
    if scored.sigmas is not None:
        ax.fill_between(t, -2 * scored.sigmas[:, 2], 2 * scored.sigmas[:, 2], color='k',
                        alpha=0.12, lw=0, label='reported +-2 sigma')
    ax.set_ylabel('up [m]')
    ax.legend(loc='upper right', fontsize=8)
    ax = axes[2]
    if scored.nees is not None:
        ax.semilogy(t, np.maximum(scored.nees, 1e-6), lw=0.5, label='position NEES (3 dof)')
        for q in (0.025, 0.975):
            ax.axhline(chi2.ppf(q, 3), color='k', lw=0.8, ls='--')
        ax.axhline(3.0, color='k', lw=0.8, label='consistent mean (3)')
        ax.legend(loc='upper right', fontsize=8)
    else:
        ax.text(0.5, 0.5, 'no covariance reported', ha='center', transform=ax.transAxes)
    ax.set_ylabel('NEES')
    ax = axes[3]
    if scored.heading_error_deg is not None:
        _states(ax, t, scored.fix_states)
        ax.plot(t, scored.heading_error_deg, lw=0.8, label='heading error')
        if scored.heading_sigma_deg is not None:
            ax.fill_between(t, -2 * scored.heading_sigma_deg, 2 * scored.heading_sigma_deg,
                            color='k', alpha=0.12, lw=0, label='reported +-2 sigma')
        ax.set_ylabel('heading [deg]')
        ax.set_xlabel('run time [s]')
        ax.legend(loc='upper right', fontsize=8)
    else:
        points = ax.scatter(scored.truth_xy[:, 0], scored.truth_xy[:, 1], c=horizontal, s=2,
                            cmap='viridis')
        fig.colorbar(points, ax=ax, label='horizontal error [m]')
        ax.set_aspect('equal', adjustable='datalim')
        ax.set_xlabel('east [m] (map)')
        ax.set_ylabel('north [m]')
    for ax in axes[:3]:
        ax.set_xlabel('run time [s]')
    fig.subplots_adjust(left=0.08, right=0.94, bottom=0.05, top=0.95, hspace=0.45)
    buffer = io.BytesIO()
    fig.savefig(buffer, format='png', dpi=90)
    plt.close(fig)
    write_atomically(path, buffer.getvalue())


def _m(value, unit='m'):
    if value is None:
        return '–'
    if unit == 'm':
        return f'{value * 100:.2f} cm' if abs(value) < 1 else f'{value:.3f} m'
    return f'{value:.3g} {unit}'.strip()


def _estimate_md(e, picture):
    h, v = e['position']['horizontal'], e['position']['vertical']
    lines = [f"## {e['name']}", '',
             f"`{e['source']}`: vehicle {e['vehicle']}, point `{e['point']}`, frame "
             f"`{e['frame']}`" + (f", datum {e['datum']}" if e['datum'] else '')
             + f", alignment {e['alignment']['method']}; {e['samples']['scored']} samples "
             f"scored, available {e['availability']['share']:.1%} of the run.", '',
             '| error | RMSE | p50 | p95 | max |', '|---|---|---|---|---|',
             f"| horizontal | {_m(h['rmse'])} | {_m(h['p50'])} | {_m(h['p95'])} | "
             f"{_m(h['max'])} |",
             f"| vertical | {_m(v['rmse'])} | {_m(v['p50'])} | {_m(v['p95'])} | {_m(v['max'])} |"]
    if e['attitude']:
        a = e['attitude']['heading_deg']
        lines.append(f"| heading | {a['rmse']:.3g}° | {a['p50']:.3g}° | {a['p95']:.3g}° | "
                     f"{a['max']:.3g}° |")
    reported = {what: c for what, c in (e['consistency'] or {}).items() if c}
    if reported:
        lines += ['', '| consistency | mean NEES (dof) | within 1σ / 2σ / 3σ (expected) '
                  '| verdict |', '|---|---|---|---|']
    for what, c in reported.items():
        w, x = c['within'], c['expected_within']
        lines.append(f"| {what.replace('_', ' ')} | {c['nees_mean']:.3g} ({c['dof']}) | "
                     f"{w['1sigma']:.0%} / {w['2sigma']:.0%} / {w['3sigma']:.0%} "
                     f"({x['1sigma']:.0%} / {x['2sigma']:.0%} / {x['3sigma']:.0%}) | "
                     f"{c['verdict']} |")
    if e['by_fix_state']:
        lines += ['', '| fix state | share | horizontal RMSE | p95 | mean NEES |',
                  '|---|---|---|---|---|']
        for state, f in e['by_fix_state'].items():
            lines.append(f"| {state} | {f['share']:.1%} | {_m(f.get('horizontal_rmse_m'))} | "
                         f"{_m(f.get('horizontal_p95_m'))} | "
                         f"{_m(f.get('nees_position'), '')} |")
    if e['events']:
        lines += ['', '| event | window | during: horizontal RMSE, max, available | '
                  'after (60 s): horizontal RMSE |', '|---|---|---|---|']
        for ev in e['events']:
            d, a = ev['during'], ev['after']
            lines.append(f"| {ev['name']} ({ev['type']}) | {ev['start_s']:g}–{ev['end_s']:g} s "
                         f"| {_m(d.get('horizontal_rmse_m'))}, {_m(d.get('horizontal_max_m'))}, "
                         f"{d['availability']:.0%} | {_m(a.get('horizontal_rmse_m'))} |")
    if e['flags']:
        lines += [''] + [f'- **{flag}**' for flag in e['flags']]
    if picture:
        lines += ['', f'![{e["name"]}]({picture})']
    return lines


def markdown(summary, pictures):
    lines = [f"# Evaluation of {summary['run']}", '',
             f"{summary['duration_s']:g} s, seed {summary['seed']}, vehicles "
             f"{', '.join(summary['vehicles'])}; {len(summary['estimates'])} estimates, "
             f"{len(summary['flags'])} flags.", '']
    lines += [f'- left out: {why}' for why in summary.get('left_out', [])]
    lines += [''] if summary.get('left_out') else []
    for e, picture in zip(summary['estimates'], pictures or [None] * len(summary['estimates'])):
        lines += _estimate_md(e, picture) + ['']
    return '\n'.join(lines)
