"""Wheel odometry at base_footprint: the rear wheels' encoders, their slip and
scale errors, and the pose and twist a differential-drive odometry integrates
from them (a :mod:`acres_sim.core.step_sensor` sensor, stream WHEEL_ODOMETRY).

Model
-----
Every physics step k of the block (the state row: chassis origin p, the
state's quaternion q -> R, CoM velocity v and angular velocity w, world axes):

1. **The true motion of base_footprint.**  Its lever arm from the chassis origin
   is ``r_b = (base_arm_x_m, base_arm_y_m, base_arm_z_m)`` (body FLU; by the
   spec's geometry rule ``-(0.4 wheelbase, 0, cog height)``,
   :func:`acres_sim.core.frames.chassis_in_base_footprint`), the CoM's
   ``c = (com_x_m, com_y_m, com_z_m)``::

       v_b = v + w x R (r_b - c)           velocity of base_footprint, world
       u   = x_body . v_b                  forward speed [m/s]
       r   = z_body . w                    yaw rate about the BODY z axis [rad/s]

   (body z, the normal of the ground the wheels stand on: on the plane it is
   the plane's normal, on a terrain the chassis' own up axis.)
2. **Wheel ground speeds.**  The rear wheels sit at +-b_e/2 along body y, with
   ``b_e = track_m (1 + track_error)`` the *effective* track (the tyres' contact
   patches are wide and scrub in a turn, so the lever of the yaw differs from the
   nominal wheel-centre track the odometry divides by)::

       v_L = u - r b_e / 2,   v_R = u + r b_e / 2

3. **Longitudinal slip** from the traction force.  ``a = (u_k - u_{k-1}) / dt``
   over one physics step (dt = 1/120 s; zero at the first step and after a gap),
   the grade from R (gravity along body x is ``-g x_body,z``), the normal load
   ``N = m g z_body,z`` and the rolling resistance ``C_rr N tanh(u / 0.1 m/s)``
   (the physics' smoothed sign, :data:`acres_sim.core.physics.ROLL_SMOOTH_SPEED`)::

       F_x = m (a + g x_body,z) + C_rr N tanh(u / 0.1)      gross traction [N]
       s   = F_x / (C_s N),  clipped to +-SLIP_LIMIT (0.5)

   (the mass cancels in s; it scales the reported F_x.)

   This is the tyres' gross traction of the physics' own longitudinal balance
   (``physics.accelerations``: m du/dt = F_drive - C_rr N tanh(u/0.1) - drag
   - m g x_body,z on a straight), less the aerodynamic drag (below 1 % of the
   rolling resistance at field speeds) and, in a turn, the front tyres' cornering
   drag; with no implement draft in the physics the slip comes from rolling
   resistance, grade and acceleration alone.  ``C_s`` (``slip_stiffness``) is
   the secant slope of the gross-traction-ratio / slip curve: the Brixius (1987)
   equation ``GTR = 0.88 (1 - e^{-0.1 Bn}) (1 - e^{-7.5 s}) + 0.04`` (ASABE
   D497; written out in Queiroz & Schueller 2020, *Traction*, Introduction to
   Biosystems Engineering, ASABE / Virginia Tech, doi:10.21061/
   IntroBiosystemsEngineering/Traction) evaluated at the optimum slip of ASABE
   EP496 for each surface, ``C_s = GTR(s_opt) / s_opt`` (:data:`SURFACES`;
   derived estimates).  Driving (F_x > 0 forward) the wheel turns faster than
   it rolls, braking slower: the circumferential speed of wheel i is
   ``c_i = v_i + s |v_i|`` (= v_i (1 + s) going forward).  Tractors on tilled
   soil at working draft see 5-15 % slip (EP496's optimum 11-13 %); here, without
   a draft, about C_rr / C_s = 1-2 % on the level.
4. **What the encoders count** between two samples: each wheel's rolled
   distance, the per-step trapezoid of c_i, summed over the sample interval
   (dt_s = (k - k_prev) / 120 s: 2 or 3 physics steps at 50 Hz), scaled by the
   radius error, plus one Gaussian per wheel::

       dS_i = (1 + radius_error) sum c_i dt + e_i,
       e_i ~ N(0, speed_noise_mps^2 dt_s^2 + wheel_variance_per_m |dS_i|)

   ``radius_error`` is the relative error of the rolling radius the odometry
   assumes (assumed = true (1 + radius_error)): a fixed scale error.  The noise
   is the encoder's white speed noise (``speed_noise_mps`` per sample) and the
   odometry error model of Chong & Kleeman (1997, *Accurate odometry and error
   modelling for a mobile robot*, ICRA) as in Siegwart, Nourbakhsh & Scaramuzza
   (2011, *Introduction to Autonomous Mobile Robots*, 2nd ed., sec. 5.2.4): the
   variance of a wheel's travelled distance grows by ``wheel_variance_per_m``
   per metre it rolls (uneven ground, lugs, random slip), so the pose error is a
   random walk in distance, not in time.  The first sample (no interval yet)
   reports the wheels' instantaneous speeds with the encoder noise only.
5. **The odometry**, with the nominal track b = ``track_m``::

       dS = (dS_L + dS_R) / 2,   dth = (dS_R - dS_L) / b
       x += dS cos(yaw + dth/2),  y += dS sin(yaw + dth/2),  yaw += dth

   in the odom frame, which is base_footprint at the first sample (pose 0, 0, 0,
   x ahead).  The twist is in the child frame base_footprint: ``speed = dS / dt_s``
   (linear.x; the mean over the interval, as counted), ``yaw_rate = dth / dt_s``
   (angular.z).  So on a circle the yaw rate is biased by
   ``(1 + s)(1 + radius_error)(1 + track_error) - 1``.
6. **Covariances.**  The pose covariance (x, y, yaw) is propagated with the
   odometry's Jacobians (Siegwart et al. eq. 5.9-5.11)::

       P <- F_p P F_p^T + F_d diag(var_L, var_R) F_d^T

   with var_i the variance of e_i above; along the track it grows by
   ``wheel_variance_per_m / 2`` per metre, the yaw by ``2 wheel_variance_per_m /
   b^2`` per metre.  The twist's variances are those of the sample's wheel noise,
   ``(s_L^2 + s_R^2) / 4`` and ``(s_L^2 + s_R^2) / b^2`` (s_i = sqrt(var_i) / dt_s).
   Every reported variance is at least :data:`VARIANCE_FLOOR`.  The propagation
   is first order (about the odometry's own heading): across the track and in
   yaw it matches the spread of the errors; along the track it is a little
   conservative once the heading error's second-order shortening of the path
   counts (about 8 % over at 120 m with the defaults; test_wheel_odometry).  The covariances
   describe the random errors only: the fixed radius and track errors and the
   slip are what an odometry does not know.  They are reported as modelled also
   with ``noise`` off.

Random values: :data:`VALUES_PER_SAMPLE` = 2 Gaussians per sample (left, then
right wheel), always, also with ``noise`` off (then e_i = 0) and parked.

Sample layout (floats, ``W_*`` indices, :data:`SAMPLE_SIZE`): pose, twist, the
wheels' speeds (dS_i / dt_s), slip and traction force at the sample step, the
distance travelled (sum |dS|), the pose covariance, the twist variances, the
truth at the sample step (u, r at base_footprint) and the sample interval.

Parameters (:class:`WheelOdometryParams`; a config key per field):

=======================  =======  ========  ============  ==========================================
field                    unit     default   range         source
=======================  =======  ========  ============  ==========================================
hz                       Hz       50        1 - 120       estimate: a tractor ECU's speed loop
noise                    bool     True      -             -
base_arm_x_m             m        -1.056    any           frames: -0.4 wheelbase (Maxxum 2.64 m)
base_arm_y_m             m        0.0       any           frames
base_arm_z_m             m        -1.0      any           frames: -cog height (Maxxum 1.0 m)
com_x_m, _y_m, _z_m      m        0.0       any           the vehicle's (config/vehicles/)
track_m                  m        1.9       0.5 - 3.5     the Maxxum's (estimate)
wheel_radius_m           m        0.80      0.2 - 1.2     the Maxxum's: 520/70R38 rear
mass_kg                  kg       6500      > 0           the Maxxum's (estimate); F_x only
rolling_resistance       -        0.05      0 - 0.3       the vehicle's (config/vehicles/)
slip_stiffness           -        5.22      1 - 20        Brixius at EP496 s_opt (:data:`SURFACES`)
radius_error             -        0.005     -0.05 - 0.05  estimate: tyre wear, pressure, load
track_error              -        0.02      -0.1 - 0.1    estimate: contact-patch width / track
speed_noise_mps          m/s      0.01      0 - 0.5       estimate (below)
wheel_variance_per_m     m^2/m    1e-5      0 - 1e-2      estimate (below)
=======================  =======  ========  ============  ==========================================

The two noise figures are estimates (no datasheet found for a tractor's wheel
speed sensor): ISO 11783-7's wheel-based speed has 1 mm/s resolution and a
100 ms period and says accuracy degrades at low speed (its WBSD definition,
quoted in eclipse-4diac/4diac-forte issue 188); 0.01 m/s of white noise per
50 Hz sample is a period-measuring gear-tooth sensor's jitter.
``wheel_variance_per_m = 1e-5 m^2/m`` gives 2 cm (1 sigma) along the track and
1.3 deg of heading after 100 m on a 1.9 m track, below the systematic 0.5 %
radius error (0.5 m per 100 m), as odometry on soil behaves.

Units: m, s, rad, N.  Rows are rounded like the IMU's (6 decimals for m and
m/s, 8 for rad and rad/s, 6 significant digits for variances).
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.frames import lever_arm_from_chassis
from acres_sim.core.jit import njit
from acres_sim.core.physics import ROLL_SMOOTH_SPEED
from acres_sim.core.rng import pcg32_gaussian
from acres_sim.core.rounding import round_decimals, round_significant
from acres_sim.core.due import due_at
from acres_sim.core.step_sensor import StepSensor, point_velocity, row_positions, state_axes
from acres_sim.core.truth import PHYSICS_HZ, T_W
from acres_sim.core.vehicles import VehicleParams

__all__ = ['MEMORY_SIZE', 'SAMPLE_SIZE', 'SLIP_LIMIT', 'SURFACES',
           'VALUES_PER_SAMPLE', 'VARIANCE_FLOOR', 'W_COV_XY', 'W_COV_XYAW', 'W_COV_YYAW',
           'W_DISTANCE', 'W_DT', 'W_LEFT', 'W_R', 'W_RIGHT', 'W_SLIP', 'W_TRACTION', 'W_TRUE_R',
           'W_TRUE_U', 'W_U', 'W_VAR_R', 'W_VAR_U', 'W_VAR_X', 'W_VAR_Y', 'W_VAR_YAW', 'W_X',
           'W_Y', 'W_YAW', 'WheelOdometry', 'WheelOdometryParams', 'default_wheel_odometry_params',
           'wheel_odometry_block']

VALUES_PER_SAMPLE = 2          # one Gaussian per wheel: left, then right
SLIP_LIMIT = 0.5               # |s| is clipped here
VARIANCE_FLOOR = 1e-9          # no reported variance is smaller (a zero breaks a filter)


# C_s = GTR(s_opt) / s_opt of Brixius' equation with the ASABE D497 mobility number Bn
# and EP496's optimum slip s_opt of each class (hard 80 / 6 %, firm 55 / 9 %, tilled 40 /
# 12 %, soft 20 / 15 %).  Grass has no class of its own: an estimate between firm and
# tilled soil.  (The rolling resistance is the vehicle's own, the physics' value.)
SURFACES = {
    'concrete': 5.98,
    'firm_soil': 5.22,
    'tilled_soil': 4.61,
    'grass': 5.0,
    'sand': 3.69,
}
"""Surface name -> its slip stiffness C_s (derived estimates, see the module docstring)."""


class WheelOdometryParams(NamedTuple):
    """The wheel odometry's parameters (SI; the table in the module docstring)."""

    hz: float = 50.0
    noise: bool = True
    base_arm_x_m: float = -0.4 * 2.64     # base_footprint from the chassis origin, body FLU
    base_arm_y_m: float = 0.0
    base_arm_z_m: float = -1.0
    com_x_m: float = 0.0                  # centre of mass from the chassis origin, body FLU
    com_y_m: float = 0.0
    com_z_m: float = 0.0
    track_m: float = 1.9                  # nominal rear track the odometry divides by
    wheel_radius_m: float = 0.80          # nominal rolling radius (wheel rates in the row)
    mass_kg: float = 6500.0
    rolling_resistance: float = 0.05      # C_rr of the surface
    slip_stiffness: float = 5.22          # C_s of the surface: s = F_x / (C_s N)
    radius_error: float = 0.005           # assumed radius = true radius (1 + radius_error)
    track_error: float = 0.02             # effective track = track_m (1 + track_error)
    speed_noise_mps: float = 0.01         # white noise of each wheel's speed per sample
    wheel_variance_per_m: float = 1e-5    # variance of a wheel's distance per metre rolled


_FIELD = row_positions(WheelOdometryParams)
_NOISE = _FIELD['noise']
_BAX, _BAY, _BAZ = _FIELD['base_arm_x_m'], _FIELD['base_arm_y_m'], _FIELD['base_arm_z_m']
_CX, _CY, _CZ = _FIELD['com_x_m'], _FIELD['com_y_m'], _FIELD['com_z_m']
_TRACK = _FIELD['track_m']
_MASS = _FIELD['mass_kg']
_CRR = _FIELD['rolling_resistance']
_CS = _FIELD['slip_stiffness']
_RADIUS_ERR = _FIELD['radius_error']
_TRACK_ERR = _FIELD['track_error']
_SIGMA = _FIELD['speed_noise_mps']
_K = _FIELD['wheel_variance_per_m']

# Sample layout.
(W_X, W_Y, W_YAW,            # pose in the odom frame [m, m, rad (-pi, pi]]
 W_U, W_R,                   # twist in base_footprint: linear.x [m/s], angular.z [rad/s]
 W_LEFT, W_RIGHT,            # the wheels' measured speeds dS_i / dt_s [m/s]
 W_SLIP,                     # slip s at the sample step
 W_TRACTION,                 # gross traction force F_x at the sample step [N]
 W_DISTANCE,                 # distance travelled, sum |dS| [m]
 W_VAR_X, W_VAR_Y, W_COV_XY, W_VAR_YAW, W_COV_XYAW, W_COV_YYAW,   # pose covariance
 W_VAR_U, W_VAR_R,           # twist variances [(m/s)^2, (rad/s)^2]
 W_TRUE_U, W_TRUE_R,         # truth at the sample step: u, r of base_footprint
 W_DT) = range(21)           # sample interval dt_s [s] (0 at the first sample)
SAMPLE_SIZE = 21

# Memory layout.
(M_X, M_Y, M_YAW, M_PXX, M_PXY, M_PXT, M_PYY, M_PYT, M_PTT, M_DIST,
 M_K_LAST,                   # the last step seen (-1: none)
 M_U_LAST,                   # u at that step
 M_CL_LAST, M_CR_LAST,       # the wheels' circumferential speeds at that step
 M_ACC_L, M_ACC_R,           # their rolled distance since the last sample
 M_K_SAMPLE) = range(17)     # the step of the last sample (-1: none)
MEMORY_SIZE = 17

_STEP_S = 1.0 / PHYSICS_HZ
_G = STANDARD_GRAVITY_MPS2


@njit(cache=True)
def _wrap(a):
    """An angle in (-pi, pi]."""
    while a > math.pi:
        a -= 2.0 * math.pi
    while a <= -math.pi:
        a += 2.0 * math.pi
    return a


@njit(cache=True)
def _motion(row, params):
    """(u, r, x_body,z, z_body,z) of base_footprint at the state row."""
    ex, ey, ez = state_axes(row)
    vb = point_velocity(row, ex, ey, ez, params[_BAX] - params[_CX], params[_BAY] - params[_CY],
                        params[_BAZ] - params[_CZ])
    u = ex[0] * vb[0] + ex[1] * vb[1] + ex[2] * vb[2]
    r = ez[0] * row[T_W] + ez[1] * row[T_W + 1] + ez[2] * row[T_W + 2]
    return u, r, ex[2], ez[2]


@njit(cache=True)
def _traction_slip(u, accel, ex_z, ez_z, params):
    """(F_x [N], s) from the forward acceleration and the grade."""
    m = params[_MASS]
    normal = m * _G * ez_z
    fx = m * (accel + _G * ex_z) + params[_CRR] * normal * math.tanh(u / ROLL_SMOOTH_SPEED)
    if normal <= 0.0 or params[_CS] <= 0.0:
        return fx, 0.0
    s = fx / (params[_CS] * normal)
    return fx, min(max(s, -SLIP_LIMIT), SLIP_LIMIT)


@njit(cache=True)
def _propagate(memory, ds, dth, yaw_mid, var_l, var_r, b):
    """P <- F_p P F_p^T + F_d diag(var_l, var_r) F_d^T for one odometry step."""
    c, s = math.cos(yaw_mid), math.sin(yaw_mid)
    a13 = -ds * s                    # d(x, y)/d yaw
    a23 = ds * c
    xx, xy, xt = memory[M_PXX], memory[M_PXY], memory[M_PXT]
    yy, yt, tt = memory[M_PYY], memory[M_PYT], memory[M_PTT]
    # F_p P F_p^T with F_p = [[1, 0, a13], [0, 1, a23], [0, 0, 1]]
    nxx = xx + 2.0 * a13 * xt + a13 * a13 * tt
    nxy = xy + a13 * yt + a23 * xt + a13 * a23 * tt
    nxt = xt + a13 * tt
    nyy = yy + 2.0 * a23 * yt + a23 * a23 * tt
    nyt = yt + a23 * tt
    # F_d: d(x, y, yaw) / d(dS_L, dS_R)
    h = ds / (2.0 * b)
    gxl, gxr = 0.5 * c + h * s, 0.5 * c - h * s
    gyl, gyr = 0.5 * s - h * c, 0.5 * s + h * c
    gtl, gtr = -1.0 / b, 1.0 / b
    memory[M_PXX] = nxx + gxl * gxl * var_l + gxr * gxr * var_r
    memory[M_PXY] = nxy + gxl * gyl * var_l + gxr * gyr * var_r
    memory[M_PXT] = nxt + gxl * gtl * var_l + gxr * gtr * var_r
    memory[M_PYY] = nyy + gyl * gyl * var_l + gyr * gyr * var_r
    memory[M_PYT] = nyt + gyl * gtl * var_l + gyr * gtr * var_r
    memory[M_PTT] = tt + gtl * gtl * var_l + gtr * gtr * var_r


@njit(cache=True)
def wheel_odometry_block(k0, states, due, period, params, rng, memory, out_k, out):
    """The wheel odometry over the block of state rows ``states`` (steps k0 ...):
    the samples into ``out`` / ``out_k``; returns their number (step_sensor's
    kernel shape; the model in the module docstring)."""
    noise = params[_NOISE] > 0.5
    b = params[_TRACK]
    half_be = 0.5 * b * (1.0 + params[_TRACK_ERR])
    scale = 1.0 + params[_RADIUS_ERR]
    sig2 = params[_SIGMA] * params[_SIGMA]
    kvar = params[_K]
    n = 0
    for i in range(states.shape[0]):
        k = k0 + i
        row = states[i]
        u, r, ex_z, ez_z = _motion(row, params)
        k_last = int(memory[M_K_LAST])
        consecutive = k_last >= 0 and k == k_last + 1
        accel = (u - memory[M_U_LAST]) * PHYSICS_HZ if consecutive else 0.0
        fx, s = _traction_slip(u, accel, ex_z, ez_z, params)
        vl = u - r * half_be
        vr = u + r * half_be
        cl = vl + s * abs(vl)
        cr = vr + s * abs(vr)
        if consecutive:                          # the per-step trapezoid of the rolled distance
            memory[M_ACC_L] += 0.5 * (memory[M_CL_LAST] + cl) * _STEP_S
            memory[M_ACC_R] += 0.5 * (memory[M_CR_LAST] + cr) * _STEP_S
        elif k_last >= 0:                        # a gap: constant speed across it
            memory[M_ACC_L] += cl * (k - k_last) * _STEP_S
            memory[M_ACC_R] += cr * (k - k_last) * _STEP_S
        memory[M_K_LAST] = k
        memory[M_U_LAST] = u
        memory[M_CL_LAST] = cl
        memory[M_CR_LAST] = cr
        if not due_at(due, 0, period, k / PHYSICS_HZ):
            continue
        g_l = pcg32_gaussian(rng)
        g_r = pcg32_gaussian(rng)
        k_sample = int(memory[M_K_SAMPLE])
        dt = (k - k_sample) * _STEP_S if k_sample >= 0 else 0.0
        o = out[n]
        if dt > 0.0:
            dl0 = scale * memory[M_ACC_L]
            dr0 = scale * memory[M_ACC_R]
            var_l = sig2 * dt * dt + kvar * abs(dl0)
            var_r = sig2 * dt * dt + kvar * abs(dr0)
            dl, dr = dl0, dr0
            if noise:
                dl += math.sqrt(var_l) * g_l
                dr += math.sqrt(var_r) * g_r
            ds = 0.5 * (dl + dr)
            dth = (dr - dl) / b
            yaw_mid = memory[M_YAW] + 0.5 * dth
            _propagate(memory, ds, dth, yaw_mid, var_l, var_r, b)
            memory[M_X] += ds * math.cos(yaw_mid)
            memory[M_Y] += ds * math.sin(yaw_mid)
            memory[M_YAW] = _wrap(memory[M_YAW] + dth)
            memory[M_DIST] += abs(ds)
            left, right = dl / dt, dr / dt
            sl2, sr2 = var_l / (dt * dt), var_r / (dt * dt)
        else:                                    # the first sample: instantaneous speeds
            left, right = scale * cl, scale * cr
            if noise:
                left += params[_SIGMA] * g_l
                right += params[_SIGMA] * g_r
            sl2 = sr2 = sig2
        memory[M_ACC_L] = 0.0
        memory[M_ACC_R] = 0.0
        memory[M_K_SAMPLE] = k
        o[W_X], o[W_Y], o[W_YAW] = memory[M_X], memory[M_Y], memory[M_YAW]
        o[W_U] = 0.5 * (left + right)
        o[W_R] = (right - left) / b
        o[W_LEFT], o[W_RIGHT] = left, right
        o[W_SLIP], o[W_TRACTION] = s, fx
        o[W_DISTANCE] = memory[M_DIST]
        o[W_VAR_X] = max(memory[M_PXX], VARIANCE_FLOOR)
        o[W_VAR_Y] = max(memory[M_PYY], VARIANCE_FLOOR)
        o[W_COV_XY] = memory[M_PXY]
        o[W_VAR_YAW] = max(memory[M_PTT], VARIANCE_FLOOR)
        o[W_COV_XYAW] = memory[M_PXT]
        o[W_COV_YYAW] = memory[M_PYT]
        o[W_VAR_U] = max(0.25 * (sl2 + sr2), VARIANCE_FLOOR)
        o[W_VAR_R] = max((sl2 + sr2) / (b * b), VARIANCE_FLOOR)
        o[W_TRUE_U], o[W_TRUE_R] = u, r
        o[W_DT] = dt
        out_k[n] = k
        n += 1
    return n


def wheel_odometry_rows(columns) -> list:
    """The wheel_odometry.jsonl rows of :meth:`WheelOdometry.columns`."""
    c = {key: column.tolist() for key, column in columns.items()}
    return [{
        'position_odom_m': c['position_odom_m'][i],
        'yaw_odom_rad': c['yaw_odom_rad'][i],
        'speed_mps': c['speed_mps'][i],
        'yaw_rate_radps': c['yaw_rate_radps'][i],
        'wheel_speeds_mps': c['wheel_speeds_mps'][i],
        'wheel_rates_radps': c['wheel_rates_radps'][i],
        'slip': c['slip'][i],
        'traction_force_n': c['traction_force_n'][i],
        'distance_m': c['distance_m'][i],
        'pose_covariance_xy_yaw': c['pose_covariance_xy_yaw'][i],
        'twist_variance': {'speed_m2ps2': c['twist_variance.speed_m2ps2'][i],
                           'yaw_rate_rad2ps2': c['twist_variance.yaw_rate_rad2ps2'][i]},
        'truth': {'speed_mps': c['truth.speed_mps'][i],
                  'yaw_rate_radps': c['truth.yaw_rate_radps'][i]},
    } for i in range(len(c['slip']))]


class WheelOdometry(StepSensor):
    """The wheel odometry of one vehicle (:class:`WheelOdometryParams`, the
    WHEEL_ODOMETRY stream).  :meth:`reset` starts the odom frame again at the
    next sample."""

    kernel = staticmethod(wheel_odometry_block)
    SAMPLE_SIZE = SAMPLE_SIZE
    MEMORY_SIZE = MEMORY_SIZE
    VALUES_PER_SAMPLE = VALUES_PER_SAMPLE

    def start_memory(self) -> np.ndarray:
        memory = np.zeros(MEMORY_SIZE)
        memory[M_K_LAST] = -1.0
        memory[M_K_SAMPLE] = -1.0
        return memory

    def columns(self, samples) -> dict:
        """The wheel_odometry.jsonl values of the samples: the values to their
        decimals, the variances to six significant digits (they span many
        decades)."""
        o = np.asarray(samples, dtype=np.float64)
        radius = float(self.params.wheel_radius_m)
        x, y, u, left, right, distance, true_u = round_decimals(
            o[:, [W_X, W_Y, W_U, W_LEFT, W_RIGHT, W_DISTANCE, W_TRUE_U]].T, 6)
        yaw, r, slip, true_r, left_rate, right_rate = round_decimals(
            np.concatenate([o[:, [W_YAW, W_R, W_SLIP, W_TRUE_R]].T,
                            o[:, [W_LEFT, W_RIGHT]].T / radius]), 8)
        vxx, vyy, vtt, cxy, cxt, cyt, vu, vr = round_significant(
            o[:, [W_VAR_X, W_VAR_Y, W_VAR_YAW, W_COV_XY, W_COV_XYAW, W_COV_YYAW,
                  W_VAR_U, W_VAR_R]].T, 6)
        return {
            'position_odom_m': np.stack([x, y], axis=1),
            'yaw_odom_rad': yaw,
            'speed_mps': u,
            'yaw_rate_radps': r,
            'wheel_speeds_mps': np.stack([left, right], axis=1),
            'wheel_rates_radps': np.stack([left_rate, right_rate], axis=1),
            'slip': slip,
            'traction_force_n': round_decimals(o[:, W_TRACTION], 3),
            'distance_m': distance,
            'pose_covariance_xy_yaw': np.stack([np.stack([vxx, cxy, cxt], axis=1),
                                                np.stack([cxy, vyy, cyt], axis=1),
                                                np.stack([cxt, cyt, vtt], axis=1)], axis=1),
            'twist_variance.speed_m2ps2': vu,
            'twist_variance.yaw_rate_rad2ps2': vr,
            'truth.speed_mps': true_u,
            'truth.yaw_rate_radps': true_r,
        }

    rows_from_columns = staticmethod(wheel_odometry_rows)


def default_wheel_odometry_params(vehicle: VehicleParams, surface: str = 'firm_soil',
                                  **overrides) -> WheelOdometryParams:
    """The odometry of ``vehicle`` on ``surface`` (a :data:`SURFACES` name): its
    base_footprint arm (frames' geometry rule), CoM, track, wheel radius and mass;
    the surface's slip stiffness and the vehicle's own rolling resistance (the
    physics' value); other fields their defaults unless given in ``overrides``."""
    if surface not in SURFACES:
        raise ValueError(f'unknown surface {surface!r}; known: {", ".join(SURFACES)}')
    arm = lever_arm_from_chassis(np.zeros(3), 'base_footprint', vehicle.wheelbase_m,
                                 vehicle.cog_height_m)
    fields = dict(base_arm_x_m=float(arm[0]), base_arm_y_m=float(arm[1]),
                  base_arm_z_m=float(arm[2]), com_x_m=vehicle.com_x_m, com_y_m=vehicle.com_y_m,
                  com_z_m=vehicle.com_z_m, track_m=vehicle.track_m,
                  wheel_radius_m=vehicle.wheel_radius_m, mass_kg=vehicle.mass_kg,
                  rolling_resistance=vehicle.rolling_resistance,
                  slip_stiffness=SURFACES[surface])
    fields.update(overrides)
    return WheelOdometryParams(**fields)
