"""Pure pursuit as a numba kernel: the route follower's arithmetic, so that the
follower can run inside the batch kernel of :mod:`acres_sim.core.block` (one
call per vehicle and physics step, no Python) and behind
:class:`acres_sim.core.routes.RouteFollower` (the same numbers either way).

One call of :func:`pursuit_command` takes a vehicle's truth (chassis origin p,
rotation R, velocity v of the centre of mass), the route as arrays and the
follower's state, and gives ``(speed_mps, yaw_rate_radps)``:

* parked while ``step - first_step < hold_s * 120`` (the first step seen is the
  start of the hold), then
* the base_footprint (rear axle) is projected onto the path, searching a window
  of about 20 m from the last index forward (a later, overlapping part of the
  path is never taken);
* a closed route driven in laps lies on the arrays a few times end to end:
  once the projection falls into the second copy, the index and the arc length
  step back by one lap (``FP_LAP_POINTS``, ``FP_LAP_LENGTH``) and the lap count
  goes up, so that the follower stays on the first copy for ever;
* within ``stop_tolerance_m`` of the stop -- arc length ``FP_END_S`` counted
  along the laps driven (the route's end, a point before it, or the end of the
  last lap; infinite: never) -- ``done``, (0, 0) for good;
* the target point lies one lookahead ``clamp(L_min + t_la |u|, L_min, L_max)``
  further along the path (past the end: on the end's straight continuation);
  the pure-pursuit curvature ``kappa = 2 y_l / d^2`` in the rear-axle frame;
* the speed is the lowest profile speed over the preview ahead, the stop ramp
  from the end of the preview ``sqrt(2 a_dec (remaining - preview))``, the
  lateral limit ``sqrt(a_lat / |kappa|)``, and at least ``min_speed_mps``; the
  yaw rate is ``speed * kappa``.

Arrays (float64):

* route: ``x``, ``y``, ``s`` and ``profile`` (the speed profile), M points each;
* parameters :data:`N_FOLLOW_PARAMS` (``FP_*``), from :func:`follower_params`;
* state :data:`N_FOLLOW_STATE` (``FS_*``): the path index, the arc length and
  the signed cross-track error of the last projection, done (0/1), the first
  step seen (-1 before any), the laps wrapped, the step at which it was done.
"""

import math

import numpy as np

from acres_sim.core.jit import njit


__all__ = ['FP_LOOKAHEAD_TIME', 'FP_LOOKAHEAD_MIN', 'FP_LOOKAHEAD_MAX', 'FP_LATERAL_ACCEL',
           'FP_DECEL', 'FP_PREVIEW', 'FP_MIN_SPEED', 'FP_STOP_TOLERANCE', 'FP_HOLD_STEPS',
           'FP_END_DIR_X', 'FP_END_DIR_Y', 'FP_BF_X', 'FP_BF_Y', 'FP_BF_Z', 'FP_END_S',
           'FP_LAP_LENGTH', 'FP_LAP_POINTS', 'N_FOLLOW_PARAMS', 'FS_INDEX', 'FS_S',
           'FS_CROSS_TRACK', 'FS_DONE', 'FS_FIRST_STEP', 'FS_LAPS', 'FS_END_STEP',
           'N_FOLLOW_STATE',
           'PROJECTION_WINDOW_M', 'initial_follow_state', 'pursuit_command']

PROJECTION_WINDOW_M = 20.0   # the closest-point search looks this far ahead of the index

# parameter array, index by index
FP_LOOKAHEAD_TIME = 0    # t_la [s]
FP_LOOKAHEAD_MIN = 1     # L_min [m]
FP_LOOKAHEAD_MAX = 2     # L_max [m]
FP_LATERAL_ACCEL = 3     # a_lat [m/s^2]
FP_DECEL = 4             # a_dec of the stop ramp [m/s^2]
FP_PREVIEW = 5           # preview time of the profile [s]
FP_MIN_SPEED = 6         # lowest commanded speed while driving [m/s]
FP_STOP_TOLERANCE = 7    # done within this distance of the end [m]
FP_HOLD_STEPS = 8        # hold_s * 120 - 1e-9: parked while fewer steps have passed
FP_END_DIR_X = 9         # unit direction of the last path segment
FP_END_DIR_Y = 10
FP_BF_X = 11             # the chassis origin in base_footprint (FLU) [m]
FP_BF_Y = 12
FP_BF_Z = 13
FP_END_S = 14            # stop at this arc length, counted along the laps [m] (inf: never)
FP_LAP_LENGTH = 15       # length of one lap of a closed route driven in laps [m]; else 0
FP_LAP_POINTS = 16       # path points of one lap (the index step back by one lap)
N_FOLLOW_PARAMS = 17

# state array, index by index
FS_INDEX = 0             # path index of the last projection
FS_S = 1                 # arc length of the closest point [m]
FS_CROSS_TRACK = 2       # signed distance of the rear axle from the path, left > 0 [m]
FS_DONE = 3              # 1.0 once the end is reached
FS_FIRST_STEP = 4        # physics step of the first call, -1.0 before it
FS_LAPS = 5              # laps the index has stepped back (a route driven in laps)
FS_END_STEP = 6          # physics step at which it was done, -1.0 before
N_FOLLOW_STATE = 7


def initial_follow_state(index=0, s=0.0) -> np.ndarray:
    """The state before the first call, at path ``index`` and arc length ``s``."""
    state = np.zeros(N_FOLLOW_STATE)
    state[FS_INDEX], state[FS_S] = index, s
    state[FS_FIRST_STEP] = state[FS_END_STEP] = -1.0
    return state


@njit(cache=True)
def _project(px, py, rx, ry, rs, i0):
    """Closest path point to (px, py) from index i0 over the search window:
    (index, arc length, signed distance from the segment's line)."""
    m = rs.shape[0]
    i1 = min(m - 1, np.searchsorted(rs, rs[i0] + PROJECTION_WINDOW_M) + 1)
    if i1 <= i0:
        return i0, rs[i0], math.hypot(px - rx[i0], py - ry[i0])
    best_d2, best_j, best_t, best_seg2 = math.inf, i0, 0.0, 0.0
    for j in range(i0, i1):
        abx, aby = rx[j + 1] - rx[j], ry[j + 1] - ry[j]
        seg2 = abx * abx + aby * aby
        t = ((px - rx[j]) * abx + (py - ry[j]) * aby) / (seg2 if seg2 > 0.0 else 1.0)
        t = min(max(t, 0.0), 1.0)
        cx, cy = rx[j] + t * abx, ry[j] + t * aby
        d2 = (px - cx) * (px - cx) + (py - cy) * (py - cy)
        if d2 < best_d2:
            best_d2, best_j, best_t, best_seg2 = d2, j, t, seg2
    seg = math.sqrt(best_seg2)
    j = best_j
    if seg > 0.0:   # distance from the segment's line, also before the start / past the end
        signed = ((rx[j + 1] - rx[j]) * (py - ry[j]) - (ry[j + 1] - ry[j]) * (px - rx[j])) / seg
    else:
        signed = math.sqrt(best_d2)
    return j, rs[j] + best_t * seg, signed


@njit(cache=True)
def _point_at(s, rx, ry, rs, fp):
    """The path point at arc length s (past the end: along the last segment)."""
    end = rs[rs.shape[0] - 1]
    if s >= end:
        return (rx[rx.shape[0] - 1] + fp[FP_END_DIR_X] * (s - end),
                ry[ry.shape[0] - 1] + fp[FP_END_DIR_Y] * (s - end))
    return np.interp(s, rs, rx), np.interp(s, rs, ry)


@njit(cache=True)
def pursuit_command(p, R, v, step, rx, ry, rs, profile, fp, st):
    """(speed_mps, yaw_rate_radps) for the vehicle with chassis origin ``p``,
    rotation ``R`` (FLU -> ENU) and CoM velocity ``v`` at physics step
    ``step``; updates the follower state ``st`` in place."""
    if st[FS_FIRST_STEP] < 0.0:
        st[FS_FIRST_STEP] = step
    if st[FS_DONE] > 0.5 or (step - st[FS_FIRST_STEP]) < fp[FP_HOLD_STEPS]:
        return 0.0, 0.0
    # base_footprint = chassis origin - R (chassis origin in base_footprint)
    bx, by, bz = fp[FP_BF_X], fp[FP_BF_Y], fp[FP_BF_Z]
    px = p[0] - (R[0, 0] * bx + R[0, 1] * by + R[0, 2] * bz)
    py = p[1] - (R[1, 0] * bx + R[1, 1] * by + R[1, 2] * bz)
    yaw = math.atan2(R[1, 0], R[0, 0])
    j, s, signed = _project(px, py, rx, ry, rs, int(st[FS_INDEX]))
    if fp[FP_LAP_LENGTH] > 0.0 and j >= fp[FP_LAP_POINTS]:   # into the next lap
        j -= int(fp[FP_LAP_POINTS])
        s -= fp[FP_LAP_LENGTH]
        st[FS_LAPS] += 1.0
    st[FS_INDEX], st[FS_S], st[FS_CROSS_TRACK] = j, s, signed
    remaining = fp[FP_END_S] - (s + st[FS_LAPS] * fp[FP_LAP_LENGTH])
    if remaining <= fp[FP_STOP_TOLERANCE]:
        st[FS_DONE] = 1.0
        st[FS_END_STEP] = step
        return 0.0, 0.0
    u = R[0, 0] * v[0] + R[1, 0] * v[1] + R[2, 0] * v[2]
    v_abs = abs(u)
    lookahead = min(max(fp[FP_LOOKAHEAD_MIN] + fp[FP_LOOKAHEAD_TIME] * v_abs,
                        fp[FP_LOOKAHEAD_MIN]), fp[FP_LOOKAHEAD_MAX])
    tx, ty = _point_at(s + lookahead, rx, ry, rs, fp)
    dx, dy = tx - px, ty - py
    c, sn = math.cos(yaw), math.sin(yaw)
    xl = c * dx + sn * dy
    yl = -sn * dx + c * dy
    dist2 = xl * xl + yl * yl
    kappa = 2.0 * yl / dist2 if dist2 > 1e-9 else 0.0
    # speed: the profile over the preview ahead, the stop ramp, the commanded curvature
    preview = max(v_abs * fp[FP_PREVIEW], 1.0)
    i_end = np.searchsorted(rs, s + preview) + 1
    speed = math.inf
    for i in range(j, min(max(i_end, j + 2), profile.shape[0])):
        speed = min(speed, profile[i])
    # the stop ramp from the end of the preview, as the profile ramps to the route's end
    speed = min(speed, math.sqrt(2.0 * fp[FP_DECEL] * max(remaining - preview, 0.0)))
    if kappa != 0.0:
        speed = min(speed, math.sqrt(fp[FP_LATERAL_ACCEL] / abs(kappa)))
    speed = max(speed, fp[FP_MIN_SPEED])
    return speed, speed * kappa
