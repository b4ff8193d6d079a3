"""Dual-antenna GNSS heading (acres_sim's, not in the spec): a secondary
antenna at a second lever arm, the baseline primary -> secondary measured by
the relative carrier-phase solution, as Polaris-class rigs get it from an OxTS
dual-antenna INS or a u-blox moving-base pair.

Geometry, per epoch, with ``R`` the rotation body FLU -> grid ENU of the
vehicle (the state's quaternion, as the receiver's antenna uses it):

* the baseline in the body ``b = r_s - r_p`` (the two lever arms, FLU), its
  length ``L = |b|``, its mounting azimuth ``a_m = atan2(b_y, b_x)`` (from the
  body x axis, counter-clockwise) and mounting elevation
  ``e_m = atan2(b_z, hypot(b_x, b_y))``;
* in the world ``B = R b``: azimuth ``a = atan2(B_n, B_e)`` (ROS ENU yaw
  convention: 0 along east, counter-clockwise positive, REP-103) and
  elevation ``e = atan2(B_u, hypot(B_e, B_n))``;
* the heading reported is the VEHICLE's yaw: ``psi = wrap(a - a_m)``, as a
  receiver with the baseline's mounting angle configured reports it (a
  baseline along the body x axis, secondary ahead, has ``a_m = 0``; behind,
  ``a_m = 180 deg``; across, +-90 deg);
* the pitch reported is the vehicle's pitch (REP-103: about the body y axis,
  positive nose down) from the baseline's tilt ``e - e_m``: ``theta = -c (e - e_m)``
  with ``c = cos a_m`` rounded to +-1, for a baseline within
  :data:`FORE_AFT_DEG` of the body x axis.  A baseline across the vehicle
  tilts with the roll instead: then there is no pitch (NaN) -- receivers call
  that angle roll, and the model does not report it.

Errors: the relative position of the two antennas has the per-state standard
deviations ``sigma_rel_h`` (horizontal) and ``sigma_rel_v`` (vertical) [m];
the angles' standard deviations are ``sigma_psi = sigma_rel_h / L`` and
``sigma_theta = sigma_rel_v / L`` [rad].  The state is the receiver's fix
state of the epoch; only rtk_fixed and rtk_float have a heading (a moving-base
or dual-antenna unit gives heading with a carrier-phase relative solution
only); dgps, single and no_fix have none (the row's values are NaN).  The
errors are white: ``psi_out = wrap(psi + sigma_psi g_1)``,
``theta_out = theta + sigma_theta g_2``.

Every epoch draws exactly :data:`VALUES_PER_EPOCH` Gaussians (g_1 then g_2)
from the GNSS-heading stream (core.rng.GNSS_HEADING), in every state and with
the noise off (then the sigmas are zero), so a change of the fix state never
moves the values of later epochs.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.gnss.fix_state import RTK_FIXED, RTK_FLOAT, STATE_NAMES
from acres_sim.core.jit import njit
from acres_sim.core.quaternion import matrix_from_quat
from acres_sim.core.rng import Pcg32, pcg32_gaussian

__all__ = ['FORE_AFT_DEG', 'GnssHeading', 'HEADING_STATES', 'HeadingParams', 'RECORD_SIZE',
           'VALUES_PER_EPOCH', 'baseline_geometry', 'heading_epochs', 'heading_params']

VALUES_PER_EPOCH = 2
#: The fix states with a heading (their rows of the sigma table).
HEADING_STATES = (RTK_FIXED, RTK_FLOAT)
#: A baseline within this angle of the body x axis measures the pitch.
FORE_AFT_DEG = 5.0

# Layout of an epoch's record (float64).
REC_VALID = 0          # 1.0: the epoch has a heading
REC_HEADING = 1        # psi_out [rad], wrapped to [-pi, pi); NaN without a heading
REC_PITCH = 2          # theta_out [rad]; NaN without a heading or a fore-aft baseline
REC_SIGMA_HEADING = 3  # sigma_psi [rad]; NaN without a heading
REC_SIGMA_PITCH = 4    # sigma_theta [rad]; NaN as REC_PITCH
REC_TRUE_HEADING = 5   # psi [rad]
REC_TRUE_PITCH = 6     # theta [rad] (NaN without a fore-aft baseline)
REC_AZIMUTH = 7        # a: the baseline's azimuth, ENU [rad]
REC_ELEVATION = 8      # e: the baseline's elevation [rad]
REC_FIX = 9            # the fix state code of the epoch
RECORD_SIZE = 10

_TWO_PI = 2.0 * math.pi


class HeadingParams(NamedTuple):
    """The model's parameters (:func:`heading_params`)."""

    baseline_flu_m: np.ndarray   # (3,) b = r_s - r_p, body FLU [m]
    length_m: float              # L
    mount_azimuth_rad: float     # a_m
    mount_elevation_rad: float   # e_m
    pitch_axis: float            # c: +1 / -1 for a fore-aft baseline, 0 otherwise
    sigma_rel: np.ndarray        # (5, 2): (sigma_rel_h, sigma_rel_v) [m] per fix code; NaN: none
    noise: bool


def baseline_geometry(baseline_flu_m):
    """(L, a_m, e_m, c) of a body baseline (see the module docstring)."""
    bx, by, bz = (float(v) for v in baseline_flu_m)
    length = math.sqrt(bx * bx + by * by + bz * bz)
    if not length > 0.0:
        raise ValueError('the secondary antenna is at the primary antenna: no baseline')
    azimuth = math.atan2(by, bx)
    elevation = math.atan2(bz, math.hypot(bx, by))
    fore_aft = abs(math.sin(azimuth)) <= math.sin(math.radians(FORE_AFT_DEG)) and \
        math.hypot(bx, by) > 0.0
    pitch_axis = (1.0 if math.cos(azimuth) > 0.0 else -1.0) if fore_aft else 0.0
    return length, azimuth, elevation, pitch_axis


def heading_params(baseline_flu_m, sigma_rel, noise=True) -> HeadingParams:
    """The parameters for a body baseline ``baseline_flu_m`` (secondary minus
    primary lever arm [m]) and ``sigma_rel``: {fix state code: (sigma_rel_h,
    sigma_rel_v) [m]} of the states with a heading (of :data:`HEADING_STATES`)."""
    length, azimuth, elevation, pitch_axis = baseline_geometry(baseline_flu_m)
    table = np.full((5, 2), np.nan)
    for state, (h, v) in sigma_rel.items():
        if state not in HEADING_STATES:
            raise ValueError(f'fix state {state} has no heading')
        table[state] = float(h), float(v)
    return HeadingParams(np.array([float(v) for v in baseline_flu_m]), length, azimuth,
                         elevation, pitch_axis, table, bool(noise))


@njit(cache=True)
def _wrap(x):
    """x in [-pi, pi) (x within one turn of it)."""
    if x >= math.pi:
        return x - _TWO_PI
    if x < -math.pi:
        return x + _TWO_PI
    return x


@njit(cache=True)
def heading_epochs(quats, fixes, p, rng_state, out):
    """The heading of consecutive epochs: ``quats`` (n, 4) the vehicle's
    quaternions x, y, z, w (body FLU -> ENU) at the epochs, ``fixes`` (n,) the
    receiver's fix state codes, ``p`` a :class:`HeadingParams`, ``rng_state``
    the GNSS-heading stream (advanced by 2 Gaussians per epoch); ``out`` (n,
    :data:`RECORD_SIZE`) the records (``REC_*``)."""
    b = p.baseline_flu_m
    scale = 1.0 if p.noise else 0.0
    for i in range(quats.shape[0]):
        g1 = pcg32_gaussian(rng_state)
        g2 = pcg32_gaussian(rng_state)
        R = matrix_from_quat(quats[i])
        be = R[0, 0] * b[0] + R[0, 1] * b[1] + R[0, 2] * b[2]
        bn = R[1, 0] * b[0] + R[1, 1] * b[1] + R[1, 2] * b[2]
        bu = R[2, 0] * b[0] + R[2, 1] * b[1] + R[2, 2] * b[2]
        azimuth = math.atan2(bn, be)
        elevation = math.atan2(bu, math.sqrt(be * be + bn * bn))
        psi = _wrap(azimuth - p.mount_azimuth_rad)
        theta = -p.pitch_axis * (elevation - p.mount_elevation_rad) if p.pitch_axis != 0.0 \
            else np.nan
        fix = int(fixes[i])
        row = out[i]
        row[REC_TRUE_HEADING], row[REC_TRUE_PITCH] = psi, theta
        row[REC_AZIMUTH], row[REC_ELEVATION], row[REC_FIX] = azimuth, elevation, fix
        sigma_h = p.sigma_rel[fix, 0]
        if math.isnan(sigma_h):
            row[REC_VALID] = 0.0
            row[REC_HEADING] = row[REC_PITCH] = np.nan
            row[REC_SIGMA_HEADING] = row[REC_SIGMA_PITCH] = np.nan
            continue
        s_psi = scale * sigma_h / p.length_m
        s_theta = scale * p.sigma_rel[fix, 1] / p.length_m
        row[REC_VALID] = 1.0
        row[REC_HEADING] = _wrap(psi + s_psi * g1)
        row[REC_SIGMA_HEADING] = s_psi
        if p.pitch_axis != 0.0:
            row[REC_PITCH] = theta + s_theta * g2
            row[REC_SIGMA_PITCH] = s_theta
        else:
            row[REC_PITCH] = row[REC_SIGMA_PITCH] = np.nan


def _value(x):
    return None if math.isnan(x) else float(x)


def _degrees(x):
    return None if math.isnan(x) else math.degrees(x)


class GnssHeading:
    """One vehicle's dual-antenna heading: :class:`HeadingParams` and the seed
    of its GNSS-heading stream (sequence ``sequence``).  :meth:`epoch_records`
    runs the kernel over consecutive epochs, :meth:`row` makes the file row of
    a record; :meth:`reset` starts the stream again (as the receiver's)."""

    def __init__(self, params: HeadingParams, seed: int, sequence: int):
        self.params = params
        self.seed, self.sequence = int(seed), int(sequence)
        self.reset()

    def reset(self):
        self.rng = Pcg32(self.seed, self.sequence)

    def epoch_records(self, quats, fixes):
        """The records (n, RECORD_SIZE) of the epochs with the vehicle's
        quaternions ``quats`` (n, 4; x, y, z, w) and fix state codes ``fixes``."""
        quats = np.ascontiguousarray(quats, dtype=np.float64).reshape(-1, 4)
        fixes = np.ascontiguousarray(fixes, dtype=np.int64).reshape(-1)
        if fixes.shape[0] != quats.shape[0]:
            raise ValueError(f'{quats.shape[0]} quaternions and {fixes.shape[0]} fix states')
        out = np.empty((quats.shape[0], RECORD_SIZE))
        if quats.shape[0]:
            heading_epochs(quats, fixes, self.params, self.rng.state, out)
        return out

    def row(self, record) -> dict:
        """The gnss_heading.jsonl row of one record (angles in rad and deg,
        null where there is none; see the module docstring)."""
        r = [float(x) for x in record]
        p = self.params
        keys = (('heading', REC_HEADING), ('pitch', REC_PITCH),
                ('sigma_heading', REC_SIGMA_HEADING), ('sigma_pitch', REC_SIGMA_PITCH))
        row = {'fix_type': STATE_NAMES[int(r[REC_FIX])], 'heading_valid': r[REC_VALID] != 0.0}
        for name, at in keys:
            row[name + '_rad'] = _value(r[at])
            row[name + '_deg'] = _degrees(r[at])
        row['baseline_length_m'] = p.length_m
        row['baseline_mount_azimuth_deg'] = math.degrees(p.mount_azimuth_rad)
        row['baseline_mount_elevation_deg'] = math.degrees(p.mount_elevation_rad)
        truth = {}
        for name, at in (('heading', REC_TRUE_HEADING), ('pitch', REC_TRUE_PITCH),
                         ('baseline_azimuth', REC_AZIMUTH), ('baseline_elevation', REC_ELEVATION)):
            truth[name + '_rad'] = _value(r[at])
            truth[name + '_deg'] = _degrees(r[at])
        row['truth'] = truth
        return row
