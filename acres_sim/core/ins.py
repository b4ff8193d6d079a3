"""The INS: the OxTS-style unit of the Polaris, i.e. the truth at one point of
the vehicle with errors added (spec: INS, ACRES Core INS).

Per epoch, at the rate ``hz``:

* truth at the INS point: p_n = p + R r_n,  v_n = v + w x (p_n - p_c);
* six unit Gauss-Markov states x1..x6 (east, north, up, heading, roll, pitch):
  x <- a x + sqrt(1 - a^2) g with a = exp(-dt/tau_p); the first epoch takes
  x = g (a = 0, dt = 1/hz);
* position  p_ins = p_n + sigma_p (x1, x2, 1.5 x3) + sigma_pw g_p  (grid ENU);
* attitude  q_ins = q_z(dpsi) (x) q_true (x) q_y(dtheta) (x) q_x(dphi) with
  dpsi = sigma_psi x4, dphi = sigma_theta x5, dtheta = sigma_theta x6: the
  heading error turns about ENU up, roll and pitch about the body axes;
* FLU velocity R^T v_n, body rate R^T w and specific force
  R^T((v_n,k - v_n,k-1)/dt + (0, 0, 9.80665)), each with white noise; dt is
  the time since the previous epoch, and the first epoch (and the first after
  a vehicle reset) reports gravity alone;
* the fix: p_ins through the datum chain, NAD83(2011) for ``nad83`` or
  WGS84 (G2139) for ``wgs84_g2139``; status 2, service 1; covariance
  diag(s2, s2, 2.25 s2) with s2 = sigma_p^2 + sigma_pw^2;
* UTM odometry in ``utm_zone`` (WGS84 ellipsoid, whatever the fix frame):
  position (E, N, h), grid rotation alpha from a point 10 m grid-north
  (computed anew every epoch), q_utm = q_z(-alpha) (x) q_ins, FLU twist;
  the same for the truth of the point (no errors) for sim/ground_truth/odom.

Random values: 18 Gaussians from the INS stream every epoch, in this order:
the 6 states, 3 position, 3 velocity, 3 specific force, 3 angular rate.  With
``noise`` off every sigma is zero and the same 18 values are still drawn.

Body axes are FLU, so the spec's FLU() conversions are identities here;
:mod:`acres_sim.core.frames` has the OxTS mounting axes of the Polaris IMU message.
Units: m, s, rad inside; degrees only in the row.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.geo.site import (FRAMES, enu_to_geodetic_rad, enu_to_utm_rad,
                                     grid_rotation_at_rad)
from acres_sim.core.geo.utm import central_meridian_rad, utm_forward_rad
from acres_sim.core.jit import njit
from acres_sim.core.quaternion import q_x, q_y, q_z, quat_from_matrix, quat_multiply
from acres_sim.core.ins_row import (  # noqa: F401 - the layout, re-exported
    ALPHA, ALPHA_TRUE, F_INS, FIX_SERVICE, FIX_STATUS, FRAME_ID, LLH, P_INS, P_N, Q_INS, Q_TRUE,
    Q_UTM, Q_UTM_TRUE, RESULT_SIZE, UTM, UTM_TRUE, V_INS, V_N_FLU, W_FLU, W_INS, ins_row)
from acres_sim.core.rng import Pcg32, pcg32_gaussian

__all__ = ['FIX_FRAMES', 'FRAME_ID', 'InsModel', 'InsParams', 'RESULT_SIZE', 'VALUES_PER_EPOCH',
           'ins_epoch_kernel', 'ins_epoch_values', 'ins_row']

VALUES_PER_EPOCH = 18
UP_SCALE = 1.5          # the up axis's Gauss-Markov error is 1.5 sigma_p
UP_VARIANCE_SCALE = UP_SCALE * UP_SCALE   # 2.25 in the covariance

# ins.frame -> the site's frame name: the INS's "nad83" is NAD83(2011) for the
# latitude, the longitude and the height (spec: INS, Georeference Caveats).
FIX_FRAMES = {'nad83': 'nad83_2011', 'wgs84_g2139': 'wgs84_g2139'}

# Sigmas handed to the kernel (one float64 array, index by index; noise off -> 0).
S_POS_GM, S_POS_WHITE, S_HEADING, S_ATTITUDE, S_VEL, S_ACCEL, S_GYRO, TAU = range(8)
N_SIGMAS = 8

# Model memory (float64 array): the six states, then v_n of the previous epoch.
X = 0            # 0:6  x1..x6 (unit Gauss-Markov)
V_N_PREV = 6     # 6:9  v_n at the previous epoch, world [m/s]
MEMORY_SIZE = 9

# Offsets of the 18 values of an epoch.
G_STATES, G_POSITION, G_VELOCITY, G_ACCEL, G_GYRO = 0, 6, 9, 12, 15



class InsParams(NamedTuple):
    """The INS's parameters (config keys ins.*; defaults of the spec's table)."""

    hz: float                  # epoch rate [Hz]
    position_sigma_m: float    # sigma_p, Gauss-Markov position error (up: 1.5 times)
    position_tau_s: float      # tau_p, correlation time of the six states [s]
    position_white_m: float    # sigma_pw, white position noise [m]
    heading_sigma_deg: float   # sigma_psi [deg]
    attitude_sigma_deg: float  # sigma_theta, roll and pitch [deg]
    velocity_white_mps: float  # sigma_v [m/s]
    accel_white_mps2: float    # sigma_f [m/s^2]
    gyro_white_radps: float    # sigma_w [rad/s]
    frame: str                 # fix frame: 'nad83' (= NAD83(2011)) or 'wgs84_g2139'
    utm_zone: int              # UTM zone of the odometry
    lever_arm_m: np.ndarray    # INS point from the chassis origin, body FLU [m], (3,)
    noise: bool                # False: every sigma is zero (values still drawn)


@njit(cache=True)
def ins_epoch_values(rng_state, out):
    """Draw the epoch's 18 Gaussians into ``out`` in the spec's order."""
    for i in range(VALUES_PER_EPOCH):
        out[i] = pcg32_gaussian(rng_state)


@njit(cache=True)
def _rotate_t(R, x0, x1, x2, out, at):
    """out[at:at+3] = R^T x."""
    for j in range(3):
        out[at + j] = R[0, j] * x0 + R[1, j] * x1 + R[2, j] * x2


@njit(cache=True)
def _copy4(q, out, at):
    for j in range(4):
        out[at + j] = q[j]


@njit(cache=True)
def ins_epoch_kernel(p, R, v, w, p_c, r_n, first, gravity_only, dt, sigma, g, memory,
                     epoch_year, site, frame, lam_c, out):
    """One epoch: updates the states in ``memory`` and fills ``out`` (RESULT_SIZE,
    the ``P_INS`` ... layout); ``g`` holds the epoch's 18 Gaussians."""
    # truth at the INS point
    pn0 = p[0] + R[0, 0] * r_n[0] + R[0, 1] * r_n[1] + R[0, 2] * r_n[2]
    pn1 = p[1] + R[1, 0] * r_n[0] + R[1, 1] * r_n[1] + R[1, 2] * r_n[2]
    pn2 = p[2] + R[2, 0] * r_n[0] + R[2, 1] * r_n[1] + R[2, 2] * r_n[2]
    d0, d1, d2 = pn0 - p_c[0], pn1 - p_c[1], pn2 - p_c[2]
    vn0 = v[0] + w[1] * d2 - w[2] * d1
    vn1 = v[1] + w[2] * d0 - w[0] * d2
    vn2 = v[2] + w[0] * d1 - w[1] * d0

    # the six unit Gauss-Markov states
    if first:
        for j in range(6):
            memory[X + j] = g[G_STATES + j]
    else:
        a = math.exp(-dt / sigma[TAU])
        b = math.sqrt(1.0 - a * a)
        for j in range(6):
            memory[X + j] = a * memory[X + j] + b * g[G_STATES + j]
    x = memory[X:X + 6]

    # position
    out[P_INS] = pn0 + sigma[S_POS_GM] * x[0] + sigma[S_POS_WHITE] * g[G_POSITION]
    out[P_INS + 1] = pn1 + sigma[S_POS_GM] * x[1] + sigma[S_POS_WHITE] * g[G_POSITION + 1]
    out[P_INS + 2] = (pn2 + sigma[S_POS_GM] * UP_SCALE * x[2]
                      + sigma[S_POS_WHITE] * g[G_POSITION + 2])

    # attitude
    q_true = quat_from_matrix(R)
    d_psi = math.radians(sigma[S_HEADING] * x[3])
    d_phi = math.radians(sigma[S_ATTITUDE] * x[4])
    d_theta = math.radians(sigma[S_ATTITUDE] * x[5])
    q_ins = quat_multiply(quat_multiply(quat_multiply(q_z(d_psi), q_true), q_y(d_theta)),
                          q_x(d_phi))
    _copy4(q_ins, out, Q_INS)

    # velocity, angular rate and specific force, FLU
    _rotate_t(R, vn0, vn1, vn2, out, V_N_FLU)
    _rotate_t(R, w[0], w[1], w[2], out, W_FLU)
    if gravity_only:
        a0, a1, a2 = 0.0, 0.0, 0.0
    else:
        a0 = (vn0 - memory[V_N_PREV]) / dt
        a1 = (vn1 - memory[V_N_PREV + 1]) / dt
        a2 = (vn2 - memory[V_N_PREV + 2]) / dt
    _rotate_t(R, a0, a1, a2 + STANDARD_GRAVITY_MPS2, out, F_INS)
    memory[V_N_PREV] = vn0
    memory[V_N_PREV + 1] = vn1
    memory[V_N_PREV + 2] = vn2
    for j in range(3):
        out[V_INS + j] = out[V_N_FLU + j] + sigma[S_VEL] * g[G_VELOCITY + j]
        out[F_INS + j] += sigma[S_ACCEL] * g[G_ACCEL + j]
        out[W_INS + j] = out[W_FLU + j] + sigma[S_GYRO] * g[G_GYRO + j]

    # the fix and the UTM odometry
    e, n, u = out[P_INS], out[P_INS + 1], out[P_INS + 2]
    phi, lam, h = enu_to_geodetic_rad(e, n, u, epoch_year, site, frame)
    out[LLH], out[LLH + 1], out[LLH + 2] = phi, lam, h
    E1, N1, _gamma, _k = utm_forward_rad(phi, lam, lam_c)
    alpha = grid_rotation_at_rad(E1, N1, e, n, u, epoch_year, site, frame, lam_c)
    out[UTM], out[UTM + 1], out[UTM + 2], out[ALPHA] = E1, N1, h, alpha
    _copy4(quat_multiply(q_z(-alpha), q_ins), out, Q_UTM)

    # the truth of the point in the same UTM frame
    out[P_N], out[P_N + 1], out[P_N + 2] = pn0, pn1, pn2
    _copy4(q_true, out, Q_TRUE)
    E1, N1, h1, _g1, _k1 = enu_to_utm_rad(pn0, pn1, pn2, epoch_year, site, frame, lam_c)
    alpha_true = grid_rotation_at_rad(E1, N1, pn0, pn1, pn2, epoch_year, site, frame, lam_c)
    out[UTM_TRUE], out[UTM_TRUE + 1], out[UTM_TRUE + 2] = E1, N1, h1
    out[ALPHA_TRUE] = alpha_true
    _copy4(quat_multiply(q_z(-alpha_true), q_true), out, Q_UTM_TRUE)


class InsModel:
    """One vehicle's INS.  ``epoch(t, truth)`` -> the ins.jsonl row (a dict).

    ``rng`` is the INS stream (:func:`acres_sim.core.rng.make_stream` with 'ins');
    the model keeps its starting position and draws from its own copy, exposed as
    ``self.rng``.  ``site`` is a :class:`acres_sim.core.geo.SiteGeoreference`.
    """

    def __init__(self, params: InsParams, rng: Pcg32, site):
        if params.frame not in FIX_FRAMES:
            raise ValueError(f"ins frame must be one of {', '.join(FIX_FRAMES)}, "
                             f'not {params.frame!r}')
        self.params = params
        self.site = site
        self._rng_start = rng.state.copy()
        self._lever = np.ascontiguousarray(params.lever_arm_m, dtype=np.float64).reshape(3)
        self._frame_code = FRAMES[FIX_FRAMES[params.frame]]
        self._lam_c = central_meridian_rad(int(params.utm_zone))
        on = 1.0 if params.noise else 0.0
        self._sigma = np.array([
            on * params.position_sigma_m, on * params.position_white_m,
            on * params.heading_sigma_deg, on * params.attitude_sigma_deg,
            on * params.velocity_white_mps, on * params.accel_white_mps2,
            on * params.gyro_white_radps, float(params.position_tau_s)])
        var = self._sigma[S_POS_GM] ** 2 + self._sigma[S_POS_WHITE] ** 2
        self._position_variance = [var, var, UP_VARIANCE_SCALE * var]
        att = math.radians(self._sigma[S_ATTITUDE]) ** 2
        head = math.radians(self._sigma[S_HEADING]) ** 2
        self._pose_variance = self._position_variance + [att, att, head]
        self._datum = FIX_FRAMES[params.frame]
        self._g = np.zeros(VALUES_PER_EPOCH)
        self._memory = np.zeros(MEMORY_SIZE)
        self._out = np.zeros(RESULT_SIZE)
        self.reset()

    def reset(self) -> None:
        """Back to the start of an episode: the stream from its first value, the
        next epoch is a first epoch."""
        self.rng = Pcg32.from_state(int(self._rng_start[0]), int(self._rng_start[1]))
        self._memory[:] = 0.0
        self._last_t = None
        self._restart = True

    def restart_differences(self) -> None:
        """The vehicle was reset on a physics step that had no epoch: the next
        epoch reports gravity alone (``truth.reset`` at an epoch does this itself)."""
        self._restart = True

    @property
    def position_variance(self) -> list:
        """The fix's variances (east, north, up) [m^2] (the row's position_covariance)."""
        return list(self._position_variance)

    @property
    def pose_variance(self) -> list:
        """The odometry's pose variances (x, y, z [m^2], roll, pitch, yaw [rad^2])."""
        return list(self._pose_variance)

    @property
    def row_spec(self) -> tuple:
        """(datum, position variances, pose variances): what :func:`ins_row` takes
        besides the results."""
        return self._datum, self.position_variance, self.pose_variance

    def kernel_arrays(self):
        """(lever arm, memory, sigmas, stream state, site parameters, frame code,
        central meridian): the model's own arrays and constants, for batch
        kernels that advance it in place (:mod:`acres_sim.core.block`)."""
        return (self._lever, self._memory, self._sigma, self.rng.state, self.site.params,
                self._frame_code, self._lam_c)

    @property
    def clock(self):
        """(time of the last epoch or None, whether the next one reports gravity only)."""
        return self._last_t, self._restart

    @clock.setter
    def clock(self, value):
        self._last_t, self._restart = value

    @property
    def states(self) -> np.ndarray:
        """A copy of the six unit Gauss-Markov states x1..x6."""
        return self._memory[X:X + 6].copy()

    def epoch(self, t: float, truth) -> dict:
        """The epoch at episode time ``t`` [s] for ``truth`` (an
        :class:`acres_sim.core.truth.Truth` of the same physics step).  ``t``
        must increase from epoch to epoch (ValueError otherwise)."""
        t = float(t)
        first = self._last_t is None
        if first:
            dt = 1.0 / self.params.hz
        else:
            dt = t - self._last_t
            if not dt > 0.0:
                raise ValueError(f'INS epoch at t = {t!r} s after one at {self._last_t!r} s: '
                                 'time must increase (call reset() to start again)')
        gravity_only = first or self._restart or bool(truth.reset)
        self._last_t = t
        self._restart = False
        ins_epoch_values(self.rng.state, self._g)
        ins_epoch_kernel(truth.p, truth.R, truth.v, truth.w, truth.p_c, self._lever, first,
                   gravity_only, dt, self._sigma, self._g, self._memory,
                   self.site.epoch(t), self.site.params, self._frame_code, self._lam_c,
                   self._out)
        return self.row(self._out.tolist())

    def row(self, o: list) -> dict:
        """The ins.jsonl row of an epoch's results ``o`` (a list in the
        RESULT_SIZE layout, e.g. a row of a block's INS array ``.tolist()``)."""
        return ins_row(o, self._datum, self._position_variance, self._pose_variance)

