"""One estimate against the truth of the point it claims: absolute and
relative errors, heading and attitude, availability, consistency of the
reported covariance, and all of it per GNSS fix state and per event window.

evo gives the trajectories, the truth's interpolation at the estimate's
times and the alignment; the errors follow evo's definitions (APE, RPE of
the translation part, the rotation angle) but are computed on all samples
at once with numpy and scipy's rotations, since evo takes them pose by pose
(seconds per ten thousand poses, and a run has hundreds of thousands).

Errors are estimate minus truth in grid ENU (``map``), after the alignment
asked for: ``none``; ``se3``, evo's Umeyama alignment (rotation and
translation) for a frame with an unknown origin such as an ``odom`` frame;
``translation``, the mean offset only.  ``auto`` aligns (se3) an estimate in
a frame the simulator does not define, and leaves the others as they are.
"""

from dataclasses import dataclass

from evo.core import lie_algebra as lie
from evo.core.trajectory import PoseTrajectory3D
import numpy as np
from scipy.spatial.transform import Rotation

from acres_sim.analysis.consistency import consistency, nees
from acres_sim.analysis.estimates import SIM_FRAMES

__all__ = ['ALIGNMENTS', 'PERCENTILES', 'Scored', 'score']

ALIGNMENTS = ('auto', 'none', 'se3', 'translation')
PERCENTILES = (50, 68, 95, 99)
DISTANCE_WINDOWS_M = (10.0, 100.0)
TIME_WINDOWS_S = (1.0, 10.0)
AFTER_EVENT_S = 60.0              # the window "after" an event
AXES = ('east', 'north', 'up')
BIAS_SIGMAS = 2.0                 # a mean error beyond this many reported sigma is a bias


@dataclass
class Scored:
    """What :func:`score` found (``summary`` is JSON-able) and the series the plots draw."""

    summary: dict
    times: np.ndarray
    errors: np.ndarray            # N x 3, grid ENU [m]
    sigmas: object                # N x 3 reported sigma [m] or None
    nees: object                  # N 3-D NEES or None
    heading_error_deg: object
    heading_sigma_deg: object
    fix_states: list
    truth_xy: np.ndarray
    estimate_xy: np.ndarray


def _stats(values):
    """RMSE, mean (signed: a bias), std, and max and percentiles of |value|
    (of the finite values: NaN marks a sample without the quantity)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    out = {'rmse': float(np.sqrt(np.mean(values ** 2))), 'mean': float(np.mean(values)),
           'std': float(np.std(values)), 'max': float(np.max(np.abs(values)))}
    out.update({f'p{p}': float(np.percentile(np.abs(values), p)) for p in PERCENTILES})
    return out


def _trajectory(xyz, wxyz, times):
    if wxyz is None:
        wxyz = np.tile([1.0, 0.0, 0.0, 0.0], (len(times), 1))
    return PoseTrajectory3D(np.array(xyz, dtype=float), np.array(wxyz, dtype=float),
                            np.array(times, dtype=float))


def _align(method, frame, est, ref, cov):
    """Align ``est`` to ``ref`` in place; returns (what was done, the covariance
    turned with it)."""
    if method == 'auto':
        method = 'none' if frame.split('/')[-1] in SIM_FRAMES else 'se3'
    if method == 'none':
        return {'method': 'none'}, cov
    if method == 'translation':
        offset = np.mean(ref.positions_xyz - est.positions_xyz, axis=0)
        est.transform(lie.se3(np.eye(3), offset))
        return {'method': 'translation', 'translation_m': offset.tolist()}, cov
    rotation, translation, _scale = est.align(ref)
    if cov is not None:
        cov = rotation @ cov @ rotation.T
    angle = float(np.degrees(np.arccos(np.clip((np.trace(rotation) - 1) / 2, -1, 1))))
    return {'method': 'se3', 'rotation_deg': angle, 'translation_m': translation.tolist()}, cov


def _rotations(trajectory):
    return Rotation.from_quat(trajectory.orientations_quat_wxyz, scalar_first=True)


def _attitude(est, ref, yaw_var, given):
    """Heading, roll, pitch and whole-rotation errors [deg]; heading NEES (NaN
    where the sample's orientation or yaw variance is not ``given``).  The
    rotation error is evo's APE of the rotation angle, |log(R_ref^T R_est)|,
    here on all samples at once (evo takes it pose by pose: seconds per
    ten thousand)."""
    r_est, r_ref = _rotations(est), _rotations(ref)
    m_est, m_ref = r_est.as_matrix(), r_ref.as_matrix()
    yaw_est = np.arctan2(m_est[:, 1, 0], m_est[:, 0, 0])
    yaw_ref = np.arctan2(m_ref[:, 1, 0], m_ref[:, 0, 0])
    heading = np.degrees(np.angle(np.exp(1j * (yaw_est - yaw_ref))))
    relative = (r_ref.inv() * r_est).as_matrix()          # the error in body axes
    roll = np.degrees(np.arctan2(relative[:, 2, 1], relative[:, 2, 2]))
    pitch = np.degrees(np.arcsin(np.clip(-relative[:, 2, 0], -1.0, 1.0)))
    angle = np.degrees((r_ref.inv() * r_est).magnitude())
    for series in (heading, roll, pitch, angle):
        series[~given] = np.nan
    out = {'heading_deg': _stats(heading), 'roll_deg': _stats(roll),
           'pitch_deg': _stats(pitch), 'rotation_deg': _stats(angle)}
    heading_nees = None
    if yaw_var is not None:              # a variance of 0, -1 or NaN: not reported
        reported = given & np.isfinite(yaw_var) & (yaw_var > 0)
        heading_nees = np.full(len(heading), np.nan)
        heading_nees[reported] = np.radians(heading[reported]) ** 2 / yaw_var[reported]
    return out, heading, heading_nees


def _pairs(along, window, tolerance=0.1):
    """Index pairs (i, j), j the first sample with ``along``[j] - ``along``[i]
    >= ``window`` (time or distance travelled), kept when that is within
    ``tolerance`` of the window (evo's rule for its distance pairs)."""
    j = np.searchsorted(along, along + window)
    i = np.arange(len(along))
    ok = j < len(along)
    i, j = i[ok], j[ok]
    ok = np.abs((along[j] - along[i]) - window) <= tolerance * window
    return i[ok], j[ok]


def _relative_errors(est, ref, i, j, attitude):
    """|translation of E| for the pairs: evo's RPE, E = (Q_i^-1 Q_j)^-1 (P_i^-1 P_j)
    with Q the truth and P the estimate, for all pairs at once; for an
    estimate without orientation the difference of the displacements in
    world axes, |(p_j - p_i) - (q_j - q_i)|."""
    q, p = ref.positions_xyz, est.positions_xyz
    if not attitude:
        return np.linalg.norm((p[j] - p[i]) - (q[j] - q[i]), axis=1)
    rq, rp = _rotations(ref), _rotations(est)
    dq = rq[i].inv().apply(q[j] - q[i])                 # Q_i^-1 Q_j, translation
    dp = rp[i].inv().apply(p[j] - p[i])                 # P_i^-1 P_j, translation
    rot_dq = rq[i].inv() * rq[j]
    return np.linalg.norm(rot_dq.inv().apply(dp - dq), axis=1)


def _relative(est, ref, attitude):
    """RPE of the translation over distance travelled (on the truth's path)
    and over time windows."""
    out = {'distance': {}, 'time': {}}
    steps = np.linalg.norm(np.diff(ref.positions_xyz, axis=0), axis=1)
    travelled = np.concatenate([[0.0], np.cumsum(steps)])
    for key, along, windows, unit in (('distance', travelled, DISTANCE_WINDOWS_M, 'm'),
                                      ('time', ref.timestamps, TIME_WINDOWS_S, 's')):
        for window in windows:
            i, j = _pairs(along, window)
            if len(i):
                errors = _relative_errors(est, ref, i, j, attitude)
                out[key][f'{window:g}{unit}'] = {**_stats(errors), 'pairs': int(len(i))}
    return out


def availability(times, valid, start, end, stale_after):
    """The share of [start, end] in which the estimate's latest position is at
    most ``stale_after`` old, its first time, and its gaps (longer than
    ``stale_after``)."""
    t = np.sort(np.asarray(times, dtype=float)[np.asarray(valid, dtype=bool)])
    t = t[(t >= start) & (t <= end)]
    span = end - start
    if not len(t) or span <= 0:
        return {'share': 0.0, 'first_s': None, 'gaps': 0, 'longest_gap_s': span,
                'stale_after_s': stale_after}
    fresh = np.minimum(np.diff(np.append(t, end)), stale_after).sum()
    gaps = np.diff(t)
    longest = float(np.diff(np.concatenate([[start], t, [end]])).max())
    return {'share': float(fresh / span), 'first_s': float(t[0]),
            'gaps': int(np.sum(gaps > stale_after)), 'longest_gap_s': longest,
            'stale_after_s': float(stale_after)}


def _position(errors):
    horizontal = np.linalg.norm(errors[:, :2], axis=1)
    return {'horizontal': _stats(horizontal), 'vertical': _stats(errors[:, 2]),
            'axes': {axis: _stats(errors[:, i]) for i, axis in enumerate(AXES)}}


def _consistency(errors, cov, heading_nees):
    if cov is None and heading_nees is None:
        return None
    out = {}
    if cov is not None:
        out['position_3d'] = consistency(nees(errors, cov), 3)
        out['horizontal'] = consistency(nees(errors[:, :2], cov[:, :2, :2]), 2)
    if heading_nees is not None:
        out['heading'] = consistency(heading_nees, 1)
    return out


def _share(whole, what):
    """Independent samples per sample over the whole run (see consistency)."""
    c = (whole or {}).get(what)
    return None if not c else c['effective_samples'] / c['samples']


def _subset(errors, cov, heading_nees, mask, whole):
    """The few figures of a breakdown row (a fix state, an event window);
    ``whole``: the consistency over the whole run."""
    if not mask.any():
        return {'samples': 0}
    e = errors[mask]
    horizontal = np.linalg.norm(e[:, :2], axis=1)
    row = {'samples': int(mask.sum()),
           'horizontal_rmse_m': float(np.sqrt(np.mean(horizontal ** 2))),
           'horizontal_p95_m': float(np.percentile(horizontal, 95)),
           'horizontal_max_m': float(horizontal.max()),
           'vertical_rmse_m': float(np.sqrt(np.mean(e[:, 2] ** 2)))}
    c = None if cov is None else consistency(nees(e, cov[mask]), 3,
                                             _share(whole, 'position_3d'))
    if c:                                 # None: no covariance reported in the window
        row.update({'nees_position': c['nees_mean'], 'within_2sigma': c['within']['2sigma'],
                    'verdict': c['verdict']})
    c = None if heading_nees is None else consistency(heading_nees[mask], 1,
                                                      _share(whole, 'heading'))
    if c:
        row.update({'nees_heading': c['nees_mean'], 'heading_verdict': c['verdict']})
    return row


def _flags(name, position, sigmas, cons):
    """What a user should look at, one line each."""
    flags = []
    if sigmas is not None:
        for i, axis in enumerate(AXES):
            mean = position['axes'][axis]['mean']
            reported = sigmas[np.isfinite(sigmas[:, i]), i]
            sigma = float(np.sqrt(np.mean(reported ** 2))) if len(reported) else 0.0
            if sigma > 0 and abs(mean) > BIAS_SIGMAS * sigma:
                flags.append(f'{name}: biased in {axis}: mean error {mean:+.3g} m is '
                             f'{abs(mean) / sigma:.1f} times its reported sigma {sigma:.3g} m')
    for what, c in (cons or {}).items():
        if c and c['verdict'] != 'consistent':
            flags.append(f"{name}: {what.replace('_', ' ')} covariance is {c['verdict']}: "
                         f"mean NEES {c['nees_mean']:.3g} for {c['dof']} degrees of freedom "
                         f"({c['within']['2sigma']:.0%} within 2 sigma, "
                         f"{c['expected_within']['2sigma']:.0%} expected)")
    return flags


def _orientations(estimate, keep):
    """(the kept samples' unit quaternions, identity where none is given; which
    are given): a zero, NaN or missing quaternion is no orientation.  (None,
    None) when no sample has one."""
    if estimate.orientations is None:
        return None, None
    q = np.asarray(estimate.orientations, dtype=float)[keep]
    norm = np.linalg.norm(q, axis=1)
    given = np.isfinite(norm) & (norm > 1e-6)
    if not given.any():
        return None, None
    unit = np.tile([1.0, 0.0, 0.0, 0.0], (len(q), 1))
    unit[given] = q[given] / norm[given, None]
    return unit, given


def score(estimate, vehicle, run, align='auto', stale_after_s=None):
    """Score ``estimate`` (already in map where it can be, see
    :func:`acres_sim.analysis.estimates.in_map`) against ``vehicle``'s truth."""
    times_all = estimate.times
    span = float(times_all[-1] - times_all[0]) if len(times_all) > 1 else 0.0
    interval = span / (len(times_all) - 1) if span > 0 else 1.0
    stale = stale_after_s if stale_after_s is not None else max(3.0 * interval, 0.05)
    avail = availability(times_all, estimate.valid, run.start_s, run.duration_s, stale)
    keep = estimate.valid & vehicle.covers(times_all) \
        & np.all(np.isfinite(estimate.positions), axis=1)
    if keep.sum() < 2:
        raise ValueError(f'{estimate.name}: fewer than two positions within the run '
                         f'(its times {times_all[0]:.3f} .. {times_all[-1]:.3f} s, the '
                         f'run {run.start_s:g} .. {run.duration_s:g} s)')
    times = times_all[keep]
    truth_xyz, truth_wxyz = vehicle.pose_at(estimate.child_frame, times)
    wxyz, given = _orientations(estimate, keep)
    has_attitude = wxyz is not None
    est = _trajectory(estimate.positions[keep], wxyz, times)
    ref = _trajectory(truth_xyz, truth_wxyz, times)
    cov = None if estimate.position_cov is None else estimate.position_cov[keep]
    alignment, cov = _align(align, estimate.frame, est, ref, cov)
    errors = est.positions_xyz - ref.positions_xyz
    position = {'3d': _stats(np.linalg.norm(errors, axis=1)), **_position(errors)}
    attitude, heading, heading_nees = (None, None, None)
    if has_attitude:
        yaw_var = None if estimate.yaw_var is None else estimate.yaw_var[keep]
        attitude, heading, heading_nees = _attitude(est, ref, yaw_var, given)
    cons = _consistency(errors, cov, heading_nees)
    states = vehicle.fix_state_at(times)
    by_state = {}
    for state in dict.fromkeys(s for s in states if s is not None):
        mask = np.array([s == state for s in states])
        by_state[state] = {'share': float(mask.mean()),
                           **_subset(errors, cov, heading_nees, mask, cons)}
    events = []
    for window in (w for w in run.events if w['vehicle'] == vehicle.name):
        during = (times >= window['start_s']) & (times < window['end_s'])
        after = (times >= window['end_s']) & (times < window['end_s'] + AFTER_EVENT_S)
        events.append({**window,
                       'during': {**_subset(errors, cov, heading_nees, during, cons),
                                  'availability': availability(
                                      times_all, estimate.valid, window['start_s'],
                                      window['end_s'], stale)['share']},
                       'after': {**_subset(errors, cov, heading_nees, after, cons),
                                 'window_s': AFTER_EVENT_S}})
    sigmas = None
    if cov is not None:                   # NaN where a variance is not reported
        variances = np.diagonal(cov, axis1=1, axis2=2)
        sigmas = np.sqrt(np.where(variances > 0, variances, np.nan))
    summary = {
        'name': estimate.name, 'source': estimate.source, 'vehicle': vehicle.name,
        'frame': estimate.frame, 'point': estimate.child_frame, 'datum': estimate.datum,
        'alignment': alignment,
        'samples': {'total': int(len(times_all)), 'scored': int(len(times)),
                    'first_s': float(times[0]), 'last_s': float(times[-1]),
                    'rate_hz': float(1.0 / interval) if interval > 0 else None},
        'availability': avail, 'position': position, 'attitude': attitude,
        'relative': _relative(est, ref, has_attitude and given.all()), 'consistency': cons,
        'by_fix_state': by_state, 'events': events,
    }
    summary['flags'] = _flags(estimate.name, position, sigmas, cons)
    heading_sigma = None
    if heading_nees is not None:
        yaw_var = estimate.yaw_var[keep]
        heading_sigma = np.degrees(np.sqrt(np.where(yaw_var > 0, yaw_var, np.nan)))
    return Scored(summary, times, errors, sigmas,
                  None if cov is None else nees(errors, cov), heading, heading_sigma, states,
                  ref.positions_xyz[:, :2], est.positions_xyz[:, :2])
