"""``acres-sim evaluate``: score estimates of a vehicle's pose against a
recording's ground truth, and say whether their covariances are honest.

:func:`evaluate` reads the run (:mod:`acres_sim.analysis.run_truth`), each
estimate (:mod:`acres_sim.analysis.estimates`), brings it into grid ENU,
scores it against the truth of the point it claims
(:mod:`acres_sim.analysis.metrics`) and writes, when given a folder,
``summary.json``, ``summary.md`` and a picture per estimate.  The folder is
kept by the recorder's rules: new, empty or an earlier evaluation, whose
files alone are replaced (:class:`acres_sim.record.output.OutputFolder`).
:func:`table_row` flattens a summary into the scalar columns of a sweep's
table.
"""

import json
import math
from pathlib import Path
import re

from acres_sim import __version__
from acres_sim.analysis.estimates import (BUILTIN, GEODETIC, in_map, open_bag, parse_source,
                                         read_estimate)
from acres_sim.analysis.metrics import ALIGNMENTS, score
from acres_sim.analysis.run_truth import RunError, is_bag, load_live_bag, load_run
from acres_sim.files import part_name, write_atomically
from acres_sim.pipeline.topics import UTM_FRAME
from acres_sim.record.output import OutputFolder
from acres_sim.record.report import FIX_STATES

__all__ = ['DATUMS', 'HEADLINE', 'RunError', 'evaluate', 'headline_columns', 'summary_text',
           'table_row']

DATUMS = ('wgs84_g2139', 'nad83_2011', 'nad83_harn')


def _vehicle_of(estimate, source, run, name):
    """The vehicle an estimate belongs to: ``name`` if given, else the one
    whose topics or frames it uses, else the run's only (or first) vehicle."""
    if name:
        return run.vehicle(name)
    for vehicle in run.vehicles:
        if estimate.topic and estimate.topic in vehicle.topics:
            return vehicle
    for vehicle in run.vehicles:
        if vehicle.frame_prefix and estimate.child_frame.startswith(vehicle.frame_prefix):
            return vehicle
    for vehicle in run.vehicles:
        namespace = vehicle.namespace.strip('/')
        if namespace and (estimate.topic or '').startswith(f'/{namespace}/'):
            return vehicle
    plain = [v for v in run.vehicles if not v.frame_prefix]
    return plain[0] if plain else run.vehicles[0]


def _datum(estimate, vehicle, datum):
    """The datum of an estimate's UTM or geodetic coordinates: ``datum`` if
    given; the rig's own topics their configured one; else the INS's for a
    ``utm`` frame (the rig's utm) and the receiver's for a NavSatFix."""
    if datum:
        return datum
    what = vehicle.topics.get(estimate.topic)
    if what == 'gnss':
        return vehicle.frames.gnss_fix
    if what == 'ins':
        return vehicle.frames.ins_fix
    return vehicle.frames.gnss_fix if estimate.frame == GEODETIC else vehicle.frames.ins_fix


def _default_sources(run):
    """The rig's own INS and GNSS receiver: their rows in a recording, their
    odometry and fix topics in a live bag."""
    if all(v.rows for v in run.vehicles):
        return ['ins', 'gnss']
    with open_bag(run.bag) as reader:
        topics = {c.topic for c in reader.connections}
    return [topic for v in run.vehicles for topic, what in v.topics.items() if topic in topics
            and (what == 'gnss' or (what == 'ins' and topic.endswith('odom')))]


def _estimates(run, sources, vehicle, frame, child):
    """(estimate, vehicle) of every source; the builtin ones once per vehicle that has them."""
    out = []
    for text in sources:
        source = parse_source(text, run.bag)
        if source.kind == 'builtin':
            vehicles = [run.vehicle(vehicle)] if vehicle else run.vehicles
            out += [(read_estimate(source, run, v), v) for v in vehicles
                    if not v.rows or (v.folder / f'{text}.jsonl').is_file()]
            continue
        estimate = read_estimate(source, run, frame=frame, child=child)
        out.append((estimate, _vehicle_of(estimate, source, run, vehicle)))
    if not out:
        raise RunError(f'{run.folder}: nothing to evaluate (no ins.jsonl or gnss.jsonl); '
                       'give --estimate')
    return out


def _unique_names(pairs):
    """The same source given twice: name#2, name#3, ..."""
    seen = {}
    for estimate, _vehicle in pairs:
        name = estimate.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            estimate.name = f'{name}#{seen[name]}'


def _slug(name):
    return re.sub(r'[^A-Za-z0-9_.@-]+', '_', name.strip('/')) or 'estimate'


def _picture_names(names):
    """A file name per estimate name, distinct where the names' slugs are not
    (/a/b and /a_b): NAME.png, NAME-2.png, ..."""
    out, taken = [], set()
    for name in names:
        base = stem = _slug(name)
        k = 1
        while stem.lower() in taken:          # case-insensitive file systems too
            k += 1
            stem = f'{base}-{k}'
        taken.add(stem.lower())
        out.append(f'{stem}.png')
    return out


def evaluate(run, estimates=None, out=None, *, vehicle=None, align='auto', datum=None,
             frame=None, child_frame=None, stale_after_s=None, plots=True, rig=None,
             rig_options=None):
    """Score ``estimates`` against the truth of the recording in ``run`` (or of
    a live run's bag, recorded with ``ros2 bag record`` of the rig ``rig``,
    with ``rig_options``, an :class:`acres_sim.rig.RigOptions`).

    ``estimates``: sources as ``acres-sim evaluate --estimate`` takes them
    (``ins``, ``gnss``, ``BAG:TOPIC``, ``BAG:tf:PARENT:CHILD``, a TUM file,
    ``/TOPIC`` and ``tf:PARENT:CHILD`` of the run's own bag); default: the
    rig's own INS and GNSS receiver, of every vehicle (one of them that has
    fewer than two positions, a receiver without a fix in a short run, is
    left out, with the reason in the summary's ``left_out``).
    ``vehicle``: whose truth (default: found from the topic or frame);
    ``align``: 'auto', 'none', 'se3' or 'translation'; ``datum``: of UTM or
    latitude/longitude estimates; ``frame`` / ``child_frame``: the frame the
    estimate is in and the point it claims, where the source does not say
    (a TUM file) or says wrongly; ``stale_after_s``: an estimate older than
    this is not available (default: three of its sample intervals).  With
    ``out``, writes summary.json, summary.md and (``plots``) a picture per
    estimate there.  Returns the summary (a JSON-able dict).  Raises
    :class:`RunError` (one line) for a run or an estimate it cannot read."""
    if align not in ALIGNMENTS:
        raise RunError(f"align = {align!r}: allowed {', '.join(ALIGNMENTS)}")
    if datum is not None and datum not in DATUMS:
        raise RunError(f"datum = {datum!r}: allowed {', '.join(DATUMS)}")
    if stale_after_s is not None and not 0.0 < stale_after_s < float('inf'):
        raise RunError(f'stale after {stale_after_s:g} s: allowed a time > 0 s')
    if is_bag(run):
        if rig is None:
            raise RunError(f'{run} is a bag: give the rig it ran (--rig NAME or FILE) for its '
                           'vehicles and mounts')
        truth = load_live_bag(run, rig, rig_options)
    elif rig is not None or rig_options is not None:
        raise RunError(f'--rig and its options are for a live bag; {run} is a recording, '
                       'which names its own rig')
    else:
        truth = load_run(run)
    sources = list(estimates or _default_sources(truth))
    if (frame or child_frame) and all(text in BUILTIN for text in sources):
        raise RunError('--frame and --child-frame are for an estimate that does not say its '
                       'own; ins and gnss say theirs')
    pairs = _estimates(truth, sources, vehicle, frame, child_frame)
    _unique_names(pairs)
    scored, left_out = [], []
    for estimate, owner in pairs:
        estimate.datum = (_datum(estimate, owner, datum)
                          if estimate.frame.split('/')[-1] in (UTM_FRAME, GEODETIC) else None)
        try:
            scored.append(score(in_map(estimate, truth, estimate.datum, owner.frames.utm_zone),
                                owner, truth, align, stale_after_s))
        except ValueError as err:
            if estimates:                    # the user's: an error
                raise RunError(str(err)) from None
            left_out.append(str(err))        # the rig's own (a receiver without a fix yet)
    if not scored:
        raise RunError(left_out[0])
    summary = {'software': f'acres_sim {__version__}', 'run': str(truth.folder),
               'duration_s': truth.duration_s, 'seed': truth.episode.get('seed'),
               'rig': truth.episode.get('rig'),
               'vehicles': [v.name for v in truth.vehicles], 'events': truth.events,
               'estimates': [s.summary for s in scored],
               'flags': [flag for s in scored for flag in s.summary['flags']],
               'left_out': left_out}
    summary = _finite(summary)
    if out is not None:
        _write(Path(out), summary, scored, truth, plots)
    return summary


def _finite(value):
    """``value`` with NaN and infinities as None (JSON's null)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _write(out, summary, scored, truth, plots):
    from acres_sim.analysis.report import draw_estimate, markdown

    if out.resolve() == truth.folder.resolve() or (out / 'episode.json').exists() \
            or (out / 'metadata.yaml').exists():
        raise RunError(f'--out {out} holds a recording or a bag: give the evaluation a '
                       'folder of its own (default RUN/eval)')
    pictures = dict(zip(_picture_names(s.summary['name'] for s in scored), scored)) \
        if plots else {}
    names = ['summary.json', 'summary.md', *pictures]
    folder = OutputFolder(out, kind='evaluation', command='acres-sim evaluate')
    folder.open(names + [part_name(n).name for n in names])
    try:
        folder.replace()
        try:
            for name, s in pictures.items():
                draw_estimate(out / name, s, truth)
            write_atomically(out / 'summary.md',
                             markdown(summary, list(pictures)).encode('utf-8'))
            text = json.dumps(summary, indent=1, allow_nan=False) + '\n'
            write_atomically(out / 'summary.json', text.encode('utf-8'))
        except BaseException:
            folder.restore()
            raise
        folder.keep()
    finally:
        folder.close()


def table_row(summary):
    """The scalar columns of a sweep's table from an evaluation's summary:
    per estimate ``NAME.COLUMN`` (see the README's evaluate section)."""
    row = {}
    for e in summary['estimates']:
        name = e['name']
        h, v = e['position']['horizontal'], e['position']['vertical']
        row.update({f'{name}.samples': e['samples']['scored'],
                    f'{name}.availability': e['availability']['share'],
                    f'{name}.horizontal_rmse_m': h['rmse'], f'{name}.horizontal_p50_m': h['p50'],
                    f'{name}.horizontal_p95_m': h['p95'], f'{name}.horizontal_max_m': h['max'],
                    f'{name}.vertical_rmse_m': v['rmse'], f'{name}.vertical_p95_m': v['p95']})
        if e['attitude']:
            row[f'{name}.heading_rmse_deg'] = e['attitude']['heading_deg']['rmse']
        for what, c in (e['consistency'] or {}).items():
            if c:
                row[f'{name}.nees_{what}'] = c['nees_mean']
                row[f'{name}.within_2sigma_{what}'] = c['within']['2sigma']
                row[f'{name}.verdict_{what}'] = c['verdict']
        for state, figures in e['by_fix_state'].items():
            row[f'{name}.{state}.share'] = figures['share']
            if figures['samples']:
                row[f'{name}.{state}.horizontal_rmse_m'] = figures['horizontal_rmse_m']
        row[f'{name}.flags'] = len(e['flags'])
    return row


#: The columns of :func:`table_row` a sweep draws and summarises, per estimate.
HEADLINE = ('horizontal_rmse_m', 'horizontal_p95_m', 'availability', 'nees_position_3d',
            'heading_rmse_deg')


def headline_columns(columns):
    """Of a table's ``columns``, the :data:`HEADLINE` ones of each estimate as a
    whole (not those per fix state), estimate by estimate."""
    columns = list(columns)
    names = dict.fromkeys(c.rsplit('.', 1)[0] for c in columns
                          if '.' in c and c.rsplit('.', 1)[1] in HEADLINE
                          and c.rsplit('.', 1)[0].rsplit('.', 1)[-1] not in FIX_STATES)
    return [f'{name}.{metric}' for name in names for metric in HEADLINE
            if f'{name}.{metric}' in columns]


def _cm(value):
    return f'{value * 100:.2f} cm' if abs(value) < 1.0 else f'{value:.3f} m'


def summary_text(summary):
    """A few lines per estimate, for the terminal."""
    lines = []
    for e in summary['estimates']:
        h, v = e['position']['horizontal'], e['position']['vertical']
        line = (f"{e['name']} ({e['vehicle']}, {e['point']}): horizontal RMSE {_cm(h['rmse'])}, "
                f"p95 {_cm(h['p95'])}; vertical RMSE {_cm(v['rmse'])}")
        if e['attitude']:
            line += f"; heading RMSE {e['attitude']['heading_deg']['rmse']:.3g} deg"
        line += f"; available {e['availability']['share']:.1%}"
        lines.append(line)
        cons = [f"{what.replace('_', ' ')} NEES {c['nees_mean']:.3g} ({c['dof']} dof) "
                f"{c['verdict']}" for what, c in (e['consistency'] or {}).items() if c]
        lines.append('  ' + ('; '.join(cons) if cons else 'no covariance reported'))
    lines += [f'flag: {flag}' for flag in summary['flags']]
    lines += [f'left out: {why}' for why in summary.get('left_out', [])]
    return '\n'.join(lines)
