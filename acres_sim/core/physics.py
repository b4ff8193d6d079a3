"""Ground-vehicle rigid-body physics at a fixed step (the AirSim engine form).

World frame: the tile's grid ENU [m]; body axes FLU; quaternions (x, y, z, w)
as the active rotation body -> world.  Time is ``k / PHYSICS_HZ`` from the
integer step counter of :class:`Fleet`; the kernels only see ``dt``.

Model
-----
* **Terrain contact.**  On the plane (no terrain field: ``P_RIDE`` 0) the ground
  is ``z = ground_z + grade_east * x + grade_north * y`` (flat at 0 by default).
  The body z axis is the plane's normal and the centre of mass stays
  ``cog_height_m + com_z_m`` above the plane: height, roll and pitch are
  constrained, the vehicle moves in the plane with three degrees of freedom
  (two of translation, yaw).  The constraint force is the normal load; the
  in-plane part of gravity acts on the vehicle.
* **The ride** (a :class:`~acres_sim.core.terrain.TerrainField`: ``P_RIDE`` 1).
  The chassis is free in all six degrees of freedom and each suspended wheel
  has its own height: :func:`ride_accelerations` adds to the forces below,
  taken in the plane of the ground under the CoM, the corner forces of
  :mod:`acres_sim.core.ride` along its normal and their roll and pitch
  moments; :func:`verlet_step` takes the same step without the constraint.
  A vehicle placed on a terrain settles on its springs (:data:`SETTLE_STEPS`,
  held) before it starts.
* **Drive and brake.**  One signed longitudinal wheel force (+ forward) behind a
  first-order lag (``drive_time_constant_s``, integrated exactly for the step's
  held target), limited to ``mass * max_accel_mps2`` plus the rolling resistance
  when it drives (so ``max_accel_mps2`` is the net acceleration on the level) and
  to ``mass * max_brake_mps2`` when it opposes the motion.
* **Resistances.**  Rolling resistance ``Crr * N * tanh(u / 0.1 m/s)`` (a smoothed
  sign, so a coasting vehicle creeps to rest and never reverses) and aerodynamic
  drag ``-1/2 rho |v| v CdA`` with ``rho`` from the 1976 standard atmosphere at the
  site altitude (:func:`air_density_1976`; AirSim's environment model, with its
  gas constant 287.058 J/(kg K)).
* **Lateral tyre forces.**  Single-track (bicycle) model: slip angles of the
  front (steered) and rear axle, ``F = mu Fz tanh(C alpha / (mu Fz))`` (slope
  ``C`` at small slip, saturating at the friction limit ``mu Fz``), static axle
  loads from the CoM position (no load transfer).  Below walking speed this is
  blended (smoothstep in ``|u|`` between ``kinematic_below_mps`` and
  ``dynamic_above_mps``) into a kinematic no-slip bicycle: yaw rate
  ``u tan(delta) / L`` and the rear axle without side slip, reached through a
  0.05 s relaxation.  So parking, starting and stopping have no stiff slip
  dynamics and no singular slip angles.
* **Steering.**  Road-wheel angle (bicycle equivalent) moving toward its target
  at most ``steer_rate_radps``, clamped to ``max_steer_rad``.
* **Commands** (what cmd_vel carries): target speed [m/s] and yaw rate [rad/s].
  A PI speed controller with feed-forward of the resistances and grade gives
  the drive-force target (the integral acts only within 0.15 m/s of the set
  speed and never into the force limit, so speed steps hardly overshoot); the
  steering target is the kinematic bicycle's ``atan(L * yaw_rate / speed)``
  (the commanded curvature).  A stop command
  (``|speed| < 0.01 m/s``) brakes at full force and, once the speed falls below
  0.05 m/s (or changes sign), parks: the brake holds the vehicle, every velocity
  and acceleration is exactly zero until a non-stop command comes.

Integrator (the AirSim FastPhysicsEngine source form)
-----------------------------------------------------
With ``a_k``, ``alpha_k`` the accelerations carried from the previous step (the
state keeps them, as AirSim's Kinematics::State does)::

    p_{k+1} = p_k + (v_k + a_k dt/2) dt              (centre of mass)
    q_{k+1} = q_k (x) exp((omega_k + alpha_k dt/2) dt)  (body rate, about body z)
    a_{k+1}, alpha_{k+1} = f(predicted state k+1)
    v_{k+1} = v_k + (a_k + a_{k+1}) dt/2
    omega_{k+1} = omega_k + (alpha_k + alpha_{k+1}) dt/2

``a_{k+1}`` needs the forces at the new state, which depend on the unknown new
velocity.  AirSim's FastPhysicsEngine solves this by evaluating the next
accelerations at a *predicted* state (it uses ``v_k + a_k dt/2`` at the current
pose).  We follow that approach but predict to the end of the step: the pose
``p_{k+1}, q_{k+1}`` above, ``v* = v_k + a_k dt``, ``omega* = omega_k + alpha_k dt``
and the actuators already advanced to step k+1.  Then ``a_{k+1}`` is the
acceleration at ``t_{k+1}`` to O(dt^2) and the scheme is second-order accurate
(test_physics checks the error ratio 4 under step halving); evaluating at the
half-step velocity, as AirSim does, makes ``a_{k+1}`` an approximation of the
mid-step acceleration and the velocity lags by half a step (first order).
The CoM is re-projected onto its height above the plane after each step
(a no-op on flat ground, where the z components are exactly zero).

Vibration (``P_ENGINE_ON``, ``P_JITTER_ON``) is not integrated: the engine's
and the PTO's alias phases advance in the state (:func:`advance_vibration`),
and :func:`vibration_offset` gives the small displacement and velocity that
the truth of a step carries on top of the rigid body's
(:mod:`acres_sim.core.vibration`).

State row (float64, :data:`STATE_SIZE` columns; ``S_*`` are the indices)
-------------------------------------------------------------------------
====  ===================  ======================================================
0-2   S_PX, S_PY, S_PZ     chassis origin, grid ENU [m]
3-6   S_QX .. S_QW         attitude quaternion (x, y, z, w), body FLU -> ENU
7-9   S_VX, S_VY, S_VZ     velocity of the centre of mass, world [m/s]
10-12 S_WX, S_WY, S_WZ     angular velocity, world axes [rad/s]
13-15 S_AX, S_AY, S_AZ     CoM acceleration a_k carried by the integrator, world [m/s^2]
16-18 S_ALX, S_ALY, S_ALZ  angular acceleration alpha_k carried, world [rad/s^2]
19    S_STEER              road-wheel angle delta (bicycle equivalent) [rad], + left
20    S_DRIVE              drive/brake force actuator state [N], + forward
21    S_SPEED_I            speed-controller integral [m/s^2]
22    S_PARKED             1.0 while parked (brake holding), else 0.0
23    S_ENGINE_PHASE       alias phase of the engine's firing order [rad]
24    S_PTO_PHASE          alias phase of the PTO's second order [rad]
25-28 S_ZU + i             wheel-centre height of corner i (ride.CORNERS), world z [m]
29-32 S_VZU + i            its rate [m/s]
33-36 S_AZU + i            its acceleration carried by the integrator [m/s^2]
====  ===================  ======================================================

Parameter row: the :class:`~acres_sim.core.vehicles.VehicleParams` fields
(``P_MASS`` ...) followed by the world columns ``P_AIR_DENSITY``,
``P_GRAVITY``, ``P_GROUND_Z``, ``P_GRADE_EAST``, ``P_GRADE_NORTH`` and the
switches ``P_RIDE``, ``P_ENGINE_ON``, ``P_JITTER_ON``, ``P_ROUGH_ON``
(:func:`params_row`).  Commands: one row ``[speed_mps, yaw_rate_radps]`` per
vehicle.

Simplified: on the plane no suspension, roll or pitch dynamics (the body
follows the plane; on a terrain see :mod:`acres_sim.core.ride`); the tyres'
friction limits take the static loads (no load transfer there); no
longitudinal slip or wheel-spin dynamics (the drive force
is applied at the CoM along body x, capped by ``max_accel_mps2``, not by a
traction circle); one lateral force per axle (track, wheel radius and
``com_y_m`` do not enter the forces); no collisions with scene obstacles.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.environment.atmosphere import density_1976 as air_density_1976
from acres_sim.core.frames import (CHASSIS_AHEAD_OF_REAR_AXLE, chassis_in_base_footprint,
                                   point_at_lever_arm)
from acres_sim.core.jit import njit, prange
from acres_sim.core.quaternion import hamilton_product, matrix_from_quat
from acres_sim.core.ride import corner, corner_forces, corner_loads, sprung_mass, suspended
from acres_sim.core.ride import nominal_height, wheel_ground
from acres_sim.core.terrain import TerrainField, flat_field, ground_height
from acres_sim.core.truth import PHYSICS_HZ, Truth
from acres_sim.core.vibration import (ENGINE_AXES, PTO_AXES, VibrationSwitches, alias_hz,
                                      engine_amplitude, engine_hz, jitter_velocity, pto_amplitude,
                                      pto_hz, sampled_sinusoid)
from acres_sim.core.vehicles import (
    N_VEHICLE_PARAMS, P_COG_HEIGHT, P_COM_X, P_COM_Y, P_COM_Z, P_CORNERING_FRONT,
    P_CORNERING_REAR, P_DRAG_AREA, P_DRIVE_TAU, P_DYNAMIC_ABOVE, P_IXX, P_IYY, P_IZZ,
    P_KINEMATIC_BELOW,
    P_MASS, P_MAX_ACCEL, P_MAX_BRAKE, P_MAX_REVERSE_SPEED, P_MAX_SPEED, P_MAX_STEER, P_MU,
    P_ROLLING, P_SPEED_KI, P_SPEED_KP, P_STEER_RATE, P_TRACK, P_WHEEL_RADIUS, P_WHEELBASE,
    VehicleParams)

__all__ = [
    'DT', 'STATE_SIZE', 'N_PARAMS', 'SITE_ALTITUDE_M',
    'S_PX', 'S_PY', 'S_PZ', 'S_QX', 'S_QY', 'S_QZ', 'S_QW', 'S_VX', 'S_VY', 'S_VZ',
    'S_WX', 'S_WY', 'S_WZ', 'S_AX', 'S_AY', 'S_AZ', 'S_ALX', 'S_ALY', 'S_ALZ',
    'S_STEER', 'S_DRIVE', 'S_SPEED_I', 'S_PARKED', 'S_ENGINE_PHASE', 'S_PTO_PHASE', 'S_ZU',
    'S_VZU', 'S_AZU',
    'P_AIR_DENSITY', 'P_GRAVITY', 'P_GROUND_Z', 'P_GRADE_EAST', 'P_GRADE_NORTH', 'P_RIDE',
    'P_ENGINE_ON', 'P_JITTER_ON', 'P_ROUGH_ON',
    'CMD_STOP_EPS', 'PARK_SPEED', 'CHASSIS_AHEAD', 'SETTLE_STEPS',
    'Terrain', 'FootprintPose', 'air_density_1976', 'body_axes', 'params_row', 'initial_state',
    'place', 'truth_from_state',
    'accelerations', 'refresh_accelerations', 'advance_actuators', 'verlet_step',
    'ride_accelerations', 'refresh_ride_accelerations',
    'vibrates', 'advance_vibration', 'vibration_offset', 'shaken_truth', 'flat_field',
    'VibrationSwitches',
    'step_actuated', 'control', 'step_one', 'step_many', 'step_many_parallel', 'forward_speed',
    'base_footprint_pose',
    'Fleet',
]

DT = 1.0 / PHYSICS_HZ
SITE_ALTITUDE_M = 705.0 * 1200.0 / 3937.0   # 214.88 m: NAVD88 height of the tile origin
#                                             (site.yaml origin_source_ft[2] = 705 US ft)
CHASSIS_AHEAD = CHASSIS_AHEAD_OF_REAR_AXLE  # chassis origin ahead of the rear axle [wheelbase]

# State columns.
(S_PX, S_PY, S_PZ, S_QX, S_QY, S_QZ, S_QW, S_VX, S_VY, S_VZ, S_WX, S_WY, S_WZ,
 S_AX, S_AY, S_AZ, S_ALX, S_ALY, S_ALZ, S_STEER, S_DRIVE, S_SPEED_I, S_PARKED,
 S_ENGINE_PHASE, S_PTO_PHASE) = range(25)
S_ZU = 25       # 4 wheel-centre heights [m] (corners of core.ride.CORNERS), world z
S_VZU = 29      # their rates [m/s]
S_AZU = 33      # their accelerations carried by the integrator [m/s^2]
STATE_SIZE = 37

# World columns after the vehicle fields.
P_AIR_DENSITY = N_VEHICLE_PARAMS
P_GRAVITY = N_VEHICLE_PARAMS + 1
P_GROUND_Z = N_VEHICLE_PARAMS + 2
P_GRADE_EAST = N_VEHICLE_PARAMS + 3
P_GRADE_NORTH = N_VEHICLE_PARAMS + 4
P_RIDE = N_VEHICLE_PARAMS + 5          # 1.0: on a terrain field (suspension), 0.0: the plane
P_ENGINE_ON = N_VEHICLE_PARAMS + 6     # 1.0: engine and PTO vibration
P_JITTER_ON = N_VEHICLE_PARAMS + 7     # 1.0: the brake's jitter when parked
P_ROUGH_ON = N_VEHICLE_PARAMS + 8      # 1.0: the wheels feel the terrain's roughness
N_PARAMS = N_VEHICLE_PARAMS + 9
SETTLE_STEPS = 480       # steps of the ride settling at a spawn on a terrain (4 s)

CMD_STOP_EPS = 0.01      # m/s: a speed command below this is a stop (brake, then park)
PARK_SPEED = 0.05        # m/s: a stopping vehicle slower than this is parked
ROLL_SMOOTH_SPEED = 0.1  # m/s: scale of the smoothed sign of the rolling resistance
KINEMATIC_TAU = 0.05     # s: relaxation of yaw rate / side slip to the kinematic bicycle
BRAKE_SPEED = 0.1        # m/s: below this a force target counts as drive, not brake
INTEGRAL_ZONE = 0.15     # m/s: the speed PI integrates only within this error (anti-windup)

# --------------------------------------------------------------------------- atmosphere

# air_density_1976 (public here since the drag model was written) is the density of
# acres_sim.core.environment.atmosphere: the 1976 U.S. Standard Atmosphere with the
# AirSim paper's R = 287.058 J/(kg K), imported above.


# --------------------------------------------------------------------------- parameters


class Terrain(NamedTuple):
    """The ground plane and the air: z = ground_z_m + grade_east x + grade_north y."""

    ground_z_m: float = 0.0
    grade_east: float = 0.0      # dz/dx (rise per metre east)
    grade_north: float = 0.0     # dz/dy
    site_altitude_m: float = SITE_ALTITUDE_M   # for the air density
    gravity_mps2: float = STANDARD_GRAVITY_MPS2


def params_row(vehicle: VehicleParams, terrain: Terrain = Terrain(), ride: bool = False,
               switches: VibrationSwitches = VibrationSwitches()) -> np.ndarray:
    """The kernel parameter row of one vehicle on ``terrain`` (length :data:`N_PARAMS`);
    ``ride``: on a terrain field (the suspension model) instead of the plane;
    ``switches``: its vibration sources."""
    row = np.empty(N_PARAMS)
    row[:N_VEHICLE_PARAMS] = np.asarray(tuple(vehicle), dtype=np.float64)
    row[P_AIR_DENSITY] = air_density_1976(float(terrain.site_altitude_m))
    row[P_GRAVITY] = terrain.gravity_mps2
    row[P_GROUND_Z] = terrain.ground_z_m
    row[P_GRADE_EAST] = terrain.grade_east
    row[P_GRADE_NORTH] = terrain.grade_north
    row[P_RIDE] = float(bool(ride))
    row[P_ENGINE_ON] = float(bool(switches.engine))
    row[P_JITTER_ON] = float(bool(switches.parked_jitter))
    row[P_ROUGH_ON] = float(bool(switches.roughness))
    return row


# --------------------------------------------------------------------------- small kernels


@njit(cache=True)
def _normal(p):
    """Unit normal of the ground plane."""
    ge = p[P_GRADE_EAST]
    gn = p[P_GRADE_NORTH]
    s = 1.0 / math.sqrt(1.0 + ge * ge + gn * gn)
    return -ge * s, -gn * s, s


@njit(cache=True)
def _axes(qx, qy, qz, qw):
    """Body x, y, z axes in world coordinates (the columns of R)."""
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wx, wy, wz = qw * qx, qw * qy, qw * qz
    return ((1.0 - 2.0 * (yy + zz), 2.0 * (xy + wz), 2.0 * (xz - wy)),
            (2.0 * (xy - wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz + wx)),
            (2.0 * (xz + wy), 2.0 * (yz - wx), 1.0 - 2.0 * (xx + yy)))


body_axes = _axes       # for the sensors that read the body's axes from a state's quaternion


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _smoothstep(lo, hi, s):
    if s <= lo:
        return 0.0
    if s >= hi:
        return 1.0
    t = (s - lo) / (hi - lo)
    return t * t * (3.0 - 2.0 * t)


@njit(cache=True)
def _tyre(c_alpha, alpha, f_max):
    """Lateral force: slope c_alpha at zero slip, saturating at f_max."""
    if f_max <= 0.0:
        return 0.0
    return f_max * math.tanh(c_alpha * alpha / f_max)


@njit(cache=True)
def _attitude(p, yaw):
    """Quaternion of heading ``yaw`` in the ground plane: tilt (z -> normal) after yaw about z."""
    return _attitude_on(p[P_GRADE_EAST], p[P_GRADE_NORTH], yaw)


@njit(cache=True)
def _attitude_on(grade_east, grade_north, yaw):
    """Quaternion of heading ``yaw`` on a plane of the given grades."""
    s = 1.0 / math.sqrt(1.0 + grade_east * grade_east + grade_north * grade_north)
    nx, ny, nz = -grade_east * s, -grade_north * s, s
    # shortest rotation from e_z to n: (e_z x n, 1 + e_z . n), normalised
    tx, ty, tz, tw = -ny, nx, 0.0, 1.0 + nz
    s = 1.0 / math.sqrt(tx * tx + ty * ty + tw * tw)
    tx, ty, tw = tx * s, ty * s, tw * s
    h = 0.5 * yaw
    return hamilton_product(tx, ty, tz, tw, 0.0, 0.0, math.sin(h), math.cos(h))


@njit(cache=True)
def forward_speed(x):
    """Body-forward speed u [m/s] of the centre of mass of state row ``x``."""
    ex, _ey, _ez = _axes(x[S_QX], x[S_QY], x[S_QZ], x[S_QW])
    return x[S_VX] * ex[0] + x[S_VY] * ex[1] + x[S_VZ] * ex[2]


@njit(cache=True)
def _resistance(u, speed, N, p):
    """Rolling resistance + longitudinal drag [N], opposing forward speed u."""
    k = 0.5 * p[P_AIR_DENSITY] * p[P_DRAG_AREA]
    return p[P_ROLLING] * N * math.tanh(u / ROLL_SMOOTH_SPEED) + k * speed * u


# --------------------------------------------------------------------------- derivative


@njit(cache=True)
def accelerations(q, v, w, drive, steer, p):
    """The dynamics f(x, u, p): CoM acceleration and angular acceleration (world axes).

    q (x, y, z, w) attitude, v CoM velocity and w angular velocity (world), drive
    the longitudinal force [N], steer the road-wheel angle [rad]; tuples in, a
    6-tuple ``(ax, ay, az, alpha_x, alpha_y, alpha_z)`` out.
    """
    ex, ey, ez = _axes(q[0], q[1], q[2], q[3])
    m = p[P_MASS]
    L = p[P_WHEELBASE]
    g = p[P_GRAVITY]
    lr = CHASSIS_AHEAD * L + p[P_COM_X]    # CoM ahead of the rear axle
    lf = L - lr                            # CoM behind the front axle
    u = _dot(v, ex)                        # body-forward and body-left CoM velocity
    vl = _dot(v, ey)
    r = _dot(w, ez)                        # yaw rate about the body (= ground normal) z
    speed = math.sqrt(_dot(v, v))
    N = m * g * ez[2]                      # normal load
    gbx = -g * ex[2]                       # in-plane gravity, body axes
    gby = -g * ey[2]
    ky = 0.5 * p[P_AIR_DENSITY] * p[P_DRAG_AREA] * speed

    f_long = drive - _resistance(u, speed, N, p)
    # kinematic bicycle (no side slip at the rear axle), relaxed to over KINEMATIC_TAU
    tan_d = math.tan(steer)
    r_kin = u * tan_d / L
    vl_kin = r_kin * lr
    akx = f_long / m + gbx - r * vl
    aky = u * r + (vl_kin - vl) / KINEMATIC_TAU
    alk = (r_kin - r) / KINEMATIC_TAU

    w_dyn = _smoothstep(p[P_KINEMATIC_BELOW], p[P_DYNAMIC_ABOVE], abs(u))
    if w_dyn > 0.0:
        cs = math.cos(steer)
        sn = math.sin(steer)
        mu = p[P_MU]
        vfy = vl + lf * r                  # front axle point, body axes
        vxw = u * cs + vfy * sn            # ... in wheel axes
        vyw = -u * sn + vfy * cs
        alpha_f = -math.atan2(vyw, abs(vxw))
        alpha_r = -math.atan2(vl - lr * r, abs(u))
        ff = _tyre(p[P_CORNERING_FRONT], alpha_f, mu * N * lr / L)
        fr = _tyre(p[P_CORNERING_REAR], alpha_r, mu * N * lf / L)
        adx = (f_long - ff * sn) / m + gbx
        ady = (ff * cs + fr - ky * vl) / m + gby
        ald = (lf * ff * cs - lr * fr) / p[P_IZZ]
        abx = w_dyn * adx + (1.0 - w_dyn) * akx
        aby = w_dyn * ady + (1.0 - w_dyn) * aky
        alz = w_dyn * ald + (1.0 - w_dyn) * alk
    else:
        abx = akx
        aby = aky
        alz = alk
    return (abx * ex[0] + aby * ey[0], abx * ex[1] + aby * ey[1], abx * ex[2] + aby * ey[2],
            alz * ez[0], alz * ez[1], alz * ez[2])


# --------------------------------------------------------------------------- integrator


@njit(cache=True)
def advance_actuators(x, drive_target, steer_target, p, dt):
    """Steering toward its target (rate limit, angle limit); drive force through
    its first-order lag, exact for a target held over the step."""
    lim = p[P_MAX_STEER]
    st = min(max(steer_target, -lim), lim)
    step = p[P_STEER_RATE] * dt
    d = min(max(st - x[S_STEER], -step), step)
    x[S_STEER] = min(max(x[S_STEER] + d, -lim), lim)
    decay = math.exp(-dt / p[P_DRIVE_TAU])
    x[S_DRIVE] = drive_target + (x[S_DRIVE] - drive_target) * decay


@njit(cache=True)
def verlet_step(x, p, dt, field):
    """Advance pose and velocities of state row ``x`` by ``dt`` (in place), with the
    actuators as they stand (see the module docstring for the scheme): on the
    plane, or with ``p[P_RIDE]`` set on the terrain ``field`` (the chassis free
    in six degrees of freedom, the wheels beside it)."""
    ride = p[P_RIDE] > 0.5
    qx, qy, qz, qw = x[S_QX], x[S_QY], x[S_QZ], x[S_QW]
    ex, ey, ez = _axes(qx, qy, qz, qw)
    cx, cy, cz = p[P_COM_X], p[P_COM_Y], p[P_COM_Z]
    vx, vy, vz = x[S_VX], x[S_VY], x[S_VZ]
    wx, wy, wz = x[S_WX], x[S_WY], x[S_WZ]
    ax, ay, az = x[S_AX], x[S_AY], x[S_AZ]
    lx, ly, lz = x[S_ALX], x[S_ALY], x[S_ALZ]
    h = 0.5 * dt

    # centre of mass: p+ = p + (v + a dt/2) dt
    pcx = x[S_PX] + ex[0] * cx + ey[0] * cy + ez[0] * cz + (vx + ax * h) * dt
    pcy = x[S_PY] + ex[1] * cx + ey[1] * cy + ez[1] * cz + (vy + ay * h) * dt
    pcz = x[S_PZ] + ex[2] * cx + ey[2] * cy + ez[2] * cz + (vz + az * h) * dt

    # attitude: q+ = q (x) exp(body rate * dt) with the mean body rate w + alpha dt/2;
    # on the plane the constraint leaves only the rate about body z (the ground normal)
    if ride:
        qx, qy, qz, qw = _turned(qx, qy, qz, qw, ex, ey, ez, wx + lx * h, wy + ly * h,
                                 wz + lz * h, dt)
    else:
        r_avg = (wx + lx * h) * ez[0] + (wy + ly * h) * ez[1] + (wz + lz * h) * ez[2]
        half = 0.5 * r_avg * dt
        qx, qy, qz, qw = hamilton_product(qx, qy, qz, qw, 0.0, 0.0, math.sin(half),
                                          math.cos(half))
    s = 1.0 / math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    qx, qy, qz, qw = qx * s, qy * s, qz * s, qw * s

    # accelerations at the predicted state k+1 (pose above, v + a dt, w + alpha dt)
    q1 = (qx, qy, qz, qw)
    v1 = (vx + ax * dt, vy + ay * dt, vz + az * dt)
    w1 = (wx + lx * dt, wy + ly * dt, wz + lz * dt)
    if ride:
        a1 = _ride_step_wheels(x, p, field, q1, (pcx, pcy, pcz), v1, w1, dt)
    else:
        a1 = accelerations(q1, v1, w1, x[S_DRIVE], x[S_STEER], p)

    # v+ = v + (a_k + a_k+1) dt/2, likewise the angular rate
    vx += (ax + a1[0]) * h
    vy += (ay + a1[1]) * h
    vz += (az + a1[2]) * h
    wx += (lx + a1[3]) * h
    wy += (ly + a1[4]) * h
    wz += (lz + a1[5]) * h

    if not ride:
        # constraint: CoM at its height above the plane, velocity in the plane,
        # angular velocity along the normal (round-off only; exact on flat ground)
        nx, ny, nz = _normal(p)
        dist = nx * pcx + ny * pcy + nz * (pcz - p[P_GROUND_Z])
        corr = p[P_COG_HEIGHT] + cz - dist
        if corr != 0.0:
            pcx += corr * nx
            pcy += corr * ny
            pcz += corr * nz
        vn = vx * nx + vy * ny + vz * nz
        if vn != 0.0:
            vx -= vn * nx
            vy -= vn * ny
            vz -= vn * nz
        wn = wx * nx + wy * ny + wz * nz
        wx, wy, wz = wn * nx, wn * ny, wn * nz

    ex, ey, ez = _axes(qx, qy, qz, qw)
    x[S_PX] = pcx - (ex[0] * cx + ey[0] * cy + ez[0] * cz)
    x[S_PY] = pcy - (ex[1] * cx + ey[1] * cy + ez[1] * cz)
    x[S_PZ] = pcz - (ex[2] * cx + ey[2] * cy + ez[2] * cz)
    x[S_QX], x[S_QY], x[S_QZ], x[S_QW] = qx, qy, qz, qw
    x[S_VX], x[S_VY], x[S_VZ] = vx, vy, vz
    x[S_WX], x[S_WY], x[S_WZ] = wx, wy, wz
    x[S_AX], x[S_AY], x[S_AZ] = a1[0], a1[1], a1[2]
    x[S_ALX], x[S_ALY], x[S_ALZ] = a1[3], a1[4], a1[5]


@njit(cache=True)
def refresh_accelerations(x, p):
    """Set the carried a_k, alpha_k of ``x`` to f(x) (after editing a state by hand)."""
    a = accelerations((x[S_QX], x[S_QY], x[S_QZ], x[S_QW]), (x[S_VX], x[S_VY], x[S_VZ]),
                      (x[S_WX], x[S_WY], x[S_WZ]), x[S_DRIVE], x[S_STEER], p)
    x[S_AX], x[S_AY], x[S_AZ] = a[0], a[1], a[2]
    x[S_ALX], x[S_ALY], x[S_ALZ] = a[3], a[4], a[5]


# --------------------------------------------------------------------------- the ride


@njit(cache=True)
def _ground_attitude(ex, pc, field):
    """The ground's frame under the CoM ``pc``: the height field's plane there
    (without roughness) with the heading of body x ``ex``."""
    _zc, slope_x, slope_y = ground_height(field, pc[0], pc[1], False)
    return _attitude_on(slope_x, slope_y, math.atan2(ex[1], ex[0]))


@njit(cache=True)
def _com(x, p, ex, ey, ez):
    """The centre of mass of state row ``x`` (body axes ``ex``, ``ey``, ``ez``), world."""
    cx, cy, cz = p[P_COM_X], p[P_COM_Y], p[P_COM_Z]
    return (x[S_PX] + ex[0] * cx + ey[0] * cy + ez[0] * cz,
            x[S_PY] + ex[1] * cx + ey[1] * cy + ez[1] * cz,
            x[S_PZ] + ex[2] * cx + ey[2] * cy + ez[2] * cz)


@njit(cache=True)
def _ground_axes(x, p, field):
    """The axes of :func:`_ground_attitude` for state row ``x``."""
    ex, ey, ez = _axes(x[S_QX], x[S_QY], x[S_QZ], x[S_QW])
    qg = _ground_attitude(ex, _com(x, p, ex, ey, ez), field)
    return _axes(qg[0], qg[1], qg[2], qg[3])


@njit(cache=True)
def ride_accelerations(q, pc, v, w, zu, vzu, drive, steer, p, field, azu):
    """The dynamics on a terrain: :func:`accelerations` in the ground's plane
    under the CoM (the tyres' forces, gravity's part along the ground, the yaw
    about its normal), plus the corner forces (:mod:`acres_sim.core.ride`)
    along that normal, whose moments roll and pitch the body about its own x
    and y axes; the wheels' accelerations go to ``azu``.  The ground's plane
    is the height field's (without roughness) at the CoM, with the body's
    heading.  Returns ``(ax, ay, az, alpha_x, alpha_y, alpha_z)`` in world axes."""
    ex, ey, ez = _axes(q[0], q[1], q[2], q[3])
    qg = _ground_attitude(ex, pc, field)
    a = accelerations(qg, v, w, drive, steer, p)
    gx, gy, gz = _axes(qg[0], qg[1], qg[2], qg[3])
    g = p[P_GRAVITY]
    m = p[P_MASS]
    rough = p[P_ROUGH_ON] > 0.5
    loads = corner_loads(p, g)
    f_sum = 0.0
    mx = 0.0
    my = 0.0
    for i in range(4):
        cx, cy = corner(p, i)
        # attachment point and its velocity v + w x r
        rx = ex[0] * cx + ey[0] * cy
        ry = ex[1] * cx + ey[1] * cy
        rz = ex[2] * cx + ey[2] * cy
        avx = v[0] + w[1] * rz - w[2] * ry
        avy = v[1] + w[2] * rx - w[0] * rz
        avz = v[2] + w[0] * ry - w[1] * rx
        zg, zg_rate = wheel_ground(field, pc[0] + rx, pc[1] + ry, avx, avy, rough)
        f, a_u = corner_forces(p, g, i, pc[2] + rz, avz, zg, zg_rate, zu[i], vzu[i], loads[i],
                               gz[2])
        azu[i] = a_u
        f_sum += f
        mx += cy * f
        my -= cx * f
    # the tyres' horizontal forces (body x, y; gravity taken out) act at the ground
    H = nominal_height(p)
    fx = m * (a[0] * gx[0] + a[1] * gx[1] + a[2] * gx[2] + g * gx[2])
    fy = m * (a[0] * gy[0] + a[1] * gy[1] + a[2] * gy[2] + g * gy[2])
    mx += H * fy
    my -= H * fx
    # Euler's equations for roll and pitch (body rates)
    wbx = _dot(w, ex)
    wby = _dot(w, ey)
    wbz = _dot(w, ez)
    ixx, iyy, izz = p[P_IXX], p[P_IYY], p[P_IZZ]
    alx = (mx - (izz - iyy) * wby * wbz) / ixx
    aly = (my - (ixx - izz) * wbz * wbx) / iyy
    anz = f_sum / sprung_mass(p) - g * gz[2]
    return (a[0] + anz * gz[0], a[1] + anz * gz[1], a[2] + anz * gz[2],
            a[3] + alx * ex[0] + aly * ey[0], a[4] + alx * ex[1] + aly * ey[1],
            a[5] + alx * ex[2] + aly * ey[2])


@njit(cache=True)
def _turned(qx, qy, qz, qw, ex, ey, ez, wx, wy, wz, dt):
    """q (x) exp(R^T w dt): the attitude turned by the world rate ``w`` held over ``dt``."""
    bx = (wx * ex[0] + wy * ex[1] + wz * ex[2]) * dt
    by = (wx * ey[0] + wy * ey[1] + wz * ey[2]) * dt
    bz = (wx * ez[0] + wy * ez[1] + wz * ez[2]) * dt
    angle = math.sqrt(bx * bx + by * by + bz * bz)
    if angle == 0.0:
        return qx, qy, qz, qw
    k = math.sin(0.5 * angle) / angle
    return hamilton_product(qx, qy, qz, qw, bx * k, by * k, bz * k, math.cos(0.5 * angle))


@njit(cache=True)
def _ride_step_wheels(x, p, field, q1, pc1, v1, w1, dt):
    """The ride's part of :func:`verlet_step`: the wheels' heights advanced by the
    same scheme (each suspended wheel; a rigid axle's move with the body) and
    the chassis' accelerations at the predicted state, which it returns.  The
    wheel columns of ``x`` hold the predicted heights and rates while the
    accelerations are evaluated (no scratch arrays in the step)."""
    h = 0.5 * dt
    zu = x[S_ZU:S_ZU + 4]
    vzu = x[S_VZU:S_VZU + 4]
    azu = x[S_AZU:S_AZU + 4]
    v0 = (vzu[0], vzu[1], vzu[2], vzu[3])
    a0 = (azu[0], azu[1], azu[2], azu[3])
    for i in range(4):
        if suspended(p, i):
            zu[i] = zu[i] + (v0[i] + a0[i] * h) * dt
        vzu[i] = v0[i] + a0[i] * dt
    a1 = ride_accelerations(q1, pc1, v1, w1, zu, vzu, x[S_DRIVE], x[S_STEER], p, field, azu)
    for i in range(4):
        vzu[i] = v0[i] + (a0[i] + azu[i]) * h if suspended(p, i) else v0[i]
    return a1


@njit(cache=True)
def refresh_ride_accelerations(x, p, field):
    """Set the carried accelerations of ``x`` (chassis and wheels) to their values
    on the terrain (after placing a vehicle by hand)."""
    ex, ey, ez = _axes(x[S_QX], x[S_QY], x[S_QZ], x[S_QW])
    pc = _com(x, p, ex, ey, ez)
    azu = np.empty(4)
    a = ride_accelerations((x[S_QX], x[S_QY], x[S_QZ], x[S_QW]), pc,
                           (x[S_VX], x[S_VY], x[S_VZ]), (x[S_WX], x[S_WY], x[S_WZ]),
                           x[S_ZU:S_ZU + 4], x[S_VZU:S_VZU + 4], x[S_DRIVE], x[S_STEER], p,
                           field, azu)
    x[S_AX], x[S_AY], x[S_AZ] = a[0], a[1], a[2]
    x[S_ALX], x[S_ALY], x[S_ALZ] = a[3], a[4], a[5]
    for i in range(4):
        x[S_AZU + i] = azu[i]


@njit(cache=True)
def step_actuated(x, drive_target, steer_target, p, dt, field):
    """One step with actuator targets instead of a command (open loop; no parking)."""
    advance_actuators(x, drive_target, steer_target, p, dt)
    verlet_step(x, p, dt, field)


# --------------------------------------------------------------------------- command -> targets


@njit(cache=True)
def control(x, cmd_speed, cmd_yaw_rate, p, dt, field):
    """Speed PI and steering from a (speed, yaw rate) command: returns
    ``(drive_target_N, steer_target_rad)`` and updates the integral in ``x``.
    The feed-forward of the grade takes the ground's slope: the plane's, or on a
    terrain the height field's under the CoM along the heading (not the body's
    own pitch on its springs)."""
    m = p[P_MASS]
    u = forward_speed(x)
    vc = min(max(cmd_speed, -p[P_MAX_REVERSE_SPEED]), p[P_MAX_SPEED])
    if not abs(vc) >= CMD_STOP_EPS:
        x[S_SPEED_I] = 0.0
        if u > 0.0:
            return -m * p[P_MAX_BRAKE], x[S_STEER]
        if u < 0.0:
            return m * p[P_MAX_BRAKE], x[S_STEER]
        return 0.0, x[S_STEER]
    steer = math.atan(p[P_WHEELBASE] * cmd_yaw_rate / vc)
    lim = p[P_MAX_STEER]
    steer = min(max(steer, -lim), lim)

    if p[P_RIDE] > 0.5:
        ex, ey, ez = _ground_axes(x, p, field)
    else:
        ex, ey, ez = _axes(x[S_QX], x[S_QY], x[S_QZ], x[S_QW])
    speed = math.sqrt(x[S_VX] * x[S_VX] + x[S_VY] * x[S_VY] + x[S_VZ] * x[S_VZ])
    N = m * p[P_GRAVITY] * ez[2]
    roll = p[P_ROLLING] * N / m
    feed = _resistance(u, speed, N, p) / m + p[P_GRAVITY] * ex[2]
    e = vc - u
    a = p[P_SPEED_KP] * e + x[S_SPEED_I] + feed
    braking = (u > BRAKE_SPEED and a < 0.0) or (u < -BRAKE_SPEED and a > 0.0)
    # brake: a force limit; drive: max_accel net of the rolling resistance on the level
    a_lim = p[P_MAX_BRAKE] if braking else p[P_MAX_ACCEL] + roll
    saturated = False
    if a > a_lim:
        a = a_lim
        saturated = e > 0.0
    elif a < -a_lim:
        a = -a_lim
        saturated = e < 0.0
    if not saturated and abs(e) < INTEGRAL_ZONE:   # anti-windup: only near the set speed
        i_lim = p[P_MAX_ACCEL]
        x[S_SPEED_I] = min(max(x[S_SPEED_I] + p[P_SPEED_KI] * e * dt, -i_lim), i_lim)
    return m * a, steer


# --------------------------------------------------------------------------- vibration


@njit(cache=True)
def vibrates(p):
    """Whether the truth of a vehicle with parameter row ``p`` carries vibration."""
    return p[P_ENGINE_ON] > 0.5 or p[P_JITTER_ON] > 0.5


@njit(cache=True)
def _drive_load(x, p):
    return abs(x[S_DRIVE]) / (p[P_MASS] * p[P_MAX_ACCEL])


@njit(cache=True)
def advance_vibration(x, p, dt):
    """Advance the alias phases of the engine and the PTO by one step
    (:mod:`acres_sim.core.vibration`)."""
    u = forward_speed(x)
    two_pi = 2.0 * math.pi
    x[S_ENGINE_PHASE] = (x[S_ENGINE_PHASE] + two_pi * alias_hz(engine_hz(p, u)) * dt) % two_pi
    x[S_PTO_PHASE] = (x[S_PTO_PHASE] + two_pi * alias_hz(pto_hz(p)) * dt) % two_pi


@njit(cache=True)
def vibration_offset(x, p, k):
    """The vibration of state ``x`` at step ``k``: its displacement and velocity
    in body axes (two 3-tuples), to add to the truth of the rigid body."""
    dx = dy = dz = 0.0
    vx = vy = vz = 0.0
    parked = x[S_PARKED] > 0.5
    if p[P_ENGINE_ON] > 0.5:
        f = alias_hz(engine_hz(p, forward_speed(x)))
        d, v = sampled_sinusoid(engine_amplitude(p, _drive_load(x, p)), f, x[S_ENGINE_PHASE])
        dx, dy, dz = ENGINE_AXES[0] * d, ENGINE_AXES[1] * d, ENGINE_AXES[2] * d
        vx, vy, vz = ENGINE_AXES[0] * v, ENGINE_AXES[1] * v, ENGINE_AXES[2] * v
        if not parked:
            d, v = sampled_sinusoid(pto_amplitude(p), alias_hz(pto_hz(p)), x[S_PTO_PHASE])
            dx, dy, dz = dx + PTO_AXES[0] * d, dy + PTO_AXES[1] * d, dz + PTO_AXES[2] * d
            vx, vy, vz = vx + PTO_AXES[0] * v, vy + PTO_AXES[1] * v, vz + PTO_AXES[2] * v
    if parked and p[P_JITTER_ON] > 0.5:
        vx += jitter_velocity(p, k)
    return (dx, dy, dz), (vx, vy, vz)


@njit(cache=True)
def _at_rest(x):
    """Every velocity and acceleration of ``x`` zero, the chassis' and the wheels'."""
    for i in range(S_VX, S_ALZ + 1):
        x[i] = 0.0
    for i in range(S_VZU, S_AZU + 4):
        x[i] = 0.0


@njit(cache=True)
def shaken_truth(x, p, com, k, R, pos, v):
    """The truth of step ``k`` with the vibration of state ``x``: new chassis
    origin, CoM and velocity (the CoM from the shifted origin, as a sensor node
    rebuilds it from the published state)."""
    d, dv = vibration_offset(x, p, k)
    pos = point_at_lever_arm(pos, R, np.array(d))
    v = point_at_lever_arm(v, R, np.array(dv))
    return pos, point_at_lever_arm(pos, R, com), v


@njit(cache=True)
def _park(x):
    _at_rest(x)
    x[S_DRIVE] = 0.0
    x[S_SPEED_I] = 0.0
    x[S_PARKED] = 1.0


@njit(cache=True)
def step_one(x, cmd_speed, cmd_yaw_rate, p, field, dt):
    """One physics step of one vehicle under a (speed, yaw rate) command, in
    place; ``field`` the terrain (read only when ``p[P_RIDE]`` is set)."""
    if not math.isfinite(cmd_speed):     # a bad command is a stop
        cmd_speed = 0.0
    if not math.isfinite(cmd_yaw_rate):
        cmd_yaw_rate = 0.0
    cmd_speed = min(max(cmd_speed, -p[P_MAX_REVERSE_SPEED]), p[P_MAX_SPEED])
    stop = abs(cmd_speed) < CMD_STOP_EPS
    if p[P_ENGINE_ON] > 0.5:
        advance_vibration(x, p, dt)
    if x[S_PARKED] > 0.5:
        if stop:
            return                       # the brake holds: nothing moves
        x[S_PARKED] = 0.0
    u0 = forward_speed(x)
    drive, steer = control(x, cmd_speed, cmd_yaw_rate, p, dt, field)
    advance_actuators(x, drive, steer, p, dt)
    verlet_step(x, p, dt, field)
    if stop:
        u1 = forward_speed(x)
        if abs(u1) < PARK_SPEED or u0 * u1 < 0.0:
            _park(x)


@njit(cache=True)
def step_many(states, commands, params, field, dt):
    """Step N vehicles (rows of ``states``, ``commands`` (N, 2), ``params``) in place."""
    for i in range(states.shape[0]):
        step_one(states[i], commands[i, 0], commands[i, 1], params[i], field, dt)


@njit(cache=True, parallel=True)
def step_many_parallel(states, commands, params, field, dt):
    """:func:`step_many` over threads (prange); the same numbers row by row."""
    for i in prange(states.shape[0]):
        step_one(states[i], commands[i, 0], commands[i, 1], params[i], field, dt)


@njit(cache=True)
def truth_from_state(x, com):
    """(R, p_c) of state row ``x``: the rotation body FLU -> ENU and the centre of
    mass p + R com (``com``: the CoM from the chassis origin, body FLU [m])."""
    R = matrix_from_quat(x[S_QX:S_QW + 1])
    p_c = point_at_lever_arm(x[S_PX:S_PZ + 1], R, com)
    return R, p_c


@njit(cache=True)
def _initial_state(p, x0, y0, yaw, speed, out):
    for i in range(STATE_SIZE):
        out[i] = 0.0
    qx, qy, qz, qw = _attitude(p, yaw)
    ex, ey, ez = _axes(qx, qy, qz, qw)
    ground = p[P_GROUND_Z] + p[P_GRADE_EAST] * x0 + p[P_GRADE_NORTH] * y0
    # the foot point (x0, y0, ground) lies cog_height below the chassis origin along the normal
    hc = p[P_COG_HEIGHT]
    out[S_PX] = x0 + hc * ez[0]
    out[S_PY] = y0 + hc * ez[1]
    out[S_PZ] = ground + hc * ez[2]
    out[S_QX], out[S_QY], out[S_QZ], out[S_QW] = qx, qy, qz, qw
    if speed == 0.0:
        out[S_PARKED] = 1.0
        return
    out[S_VX], out[S_VY], out[S_VZ] = speed * ex[0], speed * ex[1], speed * ex[2]
    N = p[P_MASS] * p[P_GRAVITY] * ez[2]
    # cruising: the drive force balances the resistances and the grade
    out[S_DRIVE] = _resistance(speed, abs(speed), N, p) + p[P_MASS] * p[P_GRAVITY] * ex[2]
    refresh_accelerations(out, p)


@njit(cache=True)
def _keep_vertical(x):
    """Remove the in-plane motion and the yaw of ``x`` (the body's heave, roll and
    pitch remain): the brake and the tyres hold a settling vehicle."""
    ex, ey, ez = _axes(x[S_QX], x[S_QY], x[S_QZ], x[S_QW])
    for col in (S_VX, S_AX):
        n = x[col] * ez[0] + x[col + 1] * ez[1] + x[col + 2] * ez[2]
        x[col], x[col + 1], x[col + 2] = n * ez[0], n * ez[1], n * ez[2]
    for col in (S_WX, S_ALX):
        n = x[col] * ez[0] + x[col + 1] * ez[1] + x[col + 2] * ez[2]
        x[col] -= n * ez[0]
        x[col + 1] -= n * ez[1]
        x[col + 2] -= n * ez[2]


@njit(cache=True)
def _initial_state_ride(p, field, x0, y0, yaw, speed, out):
    """:func:`_initial_state` on a terrain: the body on the plane of its four wheels'
    ground points, the wheels on the ground, then :data:`SETTLE_STEPS` of the ride
    with the vehicle held, so that it starts at rest on its springs."""
    for i in range(STATE_SIZE):
        out[i] = 0.0
    L = p[P_WHEELBASE]
    c, s = math.cos(yaw), math.sin(yaw)
    rough = p[P_ROUGH_ON] > 0.5
    z = np.empty(4)
    for i in range(4):
        cx, cy = corner(p, i)
        bx, by = cx + p[P_COM_X], cy + p[P_COM_Y]       # from the chassis origin
        z[i] = ground_height(field, x0 + c * bx - s * by, y0 + s * bx + c * by, rough)[0]
    g_ahead = 0.5 * ((z[0] + z[1]) - (z[2] + z[3])) / L
    g_left = 0.5 * ((z[0] + z[2]) - (z[1] + z[3])) / p[P_TRACK]
    ground = 0.25 * (z[0] + z[1] + z[2] + z[3]) - (0.5 - CHASSIS_AHEAD) * L * g_ahead
    qx, qy, qz, qw = _attitude_on(g_ahead * c - g_left * s, g_ahead * s + g_left * c, yaw)
    ex, ey, ez = _axes(qx, qy, qz, qw)
    hc = p[P_COG_HEIGHT]
    out[S_PX] = x0 + hc * ez[0]
    out[S_PY] = y0 + hc * ez[1]
    out[S_PZ] = ground + hc * ez[2]
    out[S_QX], out[S_QY], out[S_QZ], out[S_QW] = qx, qy, qz, qw
    # each wheel its radius (along the normal) above the ground under its attachment
    cx, cy, cz = p[P_COM_X], p[P_COM_Y], p[P_COM_Z]
    for i in range(4):
        ax, ay = corner(p, i)
        bx, by = ax + cx, ay + cy
        px = out[S_PX] + ex[0] * bx + ey[0] * by + ez[0] * cz
        py = out[S_PY] + ex[1] * bx + ey[1] * by + ez[1] * cz
        zg = ground_height(field, px, py, rough)[0]
        out[S_ZU + i] = zg + p[P_WHEEL_RADIUS] / ez[2]
    refresh_ride_accelerations(out, p, field)
    _keep_vertical(out)
    for _ in range(SETTLE_STEPS):
        verlet_step(out, p, DT, field)
        _keep_vertical(out)
    _at_rest(out)
    if speed == 0.0:
        out[S_PARKED] = 1.0
        return
    ex, ey, ez = _axes(out[S_QX], out[S_QY], out[S_QZ], out[S_QW])
    out[S_VX], out[S_VY], out[S_VZ] = speed * ex[0], speed * ex[1], speed * ex[2]
    N = p[P_MASS] * p[P_GRAVITY] * ez[2]
    out[S_DRIVE] = _resistance(speed, abs(speed), N, p) + p[P_MASS] * p[P_GRAVITY] * ex[2]
    refresh_ride_accelerations(out, p, field)


@njit(cache=True)
def place(x, p, field, x0, y0, yaw):
    """Put the state ``x`` parked at ground point (x0, y0) heading ``yaw``, on the
    plane or settled on the terrain ``field`` (as :func:`initial_state`)."""
    if p[P_RIDE] > 0.5:
        _initial_state_ride(p, field, x0, y0, yaw, 0.0, x)
    else:
        _initial_state(p, x0, y0, yaw, 0.0, x)


def initial_state(params, x, y, yaw, speed=0.0, field=None) -> np.ndarray:
    """A state row: the chassis origin above ground point (x, y) [m] heading ``yaw``
    [rad] in the ground plane (0 = east, counter-clockwise), wheels straight;
    parked when ``speed`` is 0, else cruising forward at ``speed`` [m/s].

    ``params`` is a :func:`params_row` (or a :class:`VehicleParams` on flat ground);
    ``field`` the terrain of a row with ``P_RIDE`` set (settled on its springs there).
    """
    if isinstance(params, VehicleParams):
        params = params_row(params)
    params = np.asarray(params, dtype=np.float64)
    out = np.empty(STATE_SIZE)
    if params[P_RIDE] > 0.5:
        if field is None:
            raise ValueError('a vehicle on a terrain needs its field')
        _initial_state_ride(params, field, float(x), float(y), float(yaw), float(speed), out)
    else:
        _initial_state(params, float(x), float(y), float(yaw), float(speed), out)
    return out


# --------------------------------------------------------------------------- Python face


class FootprintPose(NamedTuple):
    """base_footprint: the middle of the rear axle on the ground, with the heading."""

    x: float     # grid ENU [m]
    y: float
    z: float
    yaw: float   # heading of body x from east, counter-clockwise [rad]


def base_footprint_pose(truth: Truth, params: VehicleParams) -> FootprintPose:
    """Position and yaw of base_footprint (for TF and odometry): the chassis origin
    minus R (0.4 wheelbase, 0, cog height)."""
    R = truth.R
    pos = truth.p - R @ chassis_in_base_footprint(params.wheelbase_m, params.cog_height_m)
    return FootprintPose(float(pos[0]), float(pos[1]), float(pos[2]),
                         math.atan2(R[1, 0], R[0, 0]))


class Fleet:
    """N vehicles stepped together at ``1 / PHYSICS_HZ`` s.

    ``params_list``: one :class:`VehicleParams` per vehicle; ``initial_poses``:
    rows ``(x, y, yaw)`` -- the chassis origin's ground point [m] and heading [rad];
    every vehicle starts parked.  ``step(commands)`` takes an (N, 2) array of
    ``(speed_mps, yaw_rate_radps)``; ``step_index`` is the integer k of the
    state now held (t = k / PHYSICS_HZ).  ``states`` and ``params`` are the
    kernel arrays (rows in vehicle order), open for tests and tools; ``com`` (N, 3)
    the centre of mass of each from its chassis origin, body FLU [m].

    ``ground``: a :class:`~acres_sim.core.terrain.TerrainField` to ride on (the
    suspension model, :mod:`acres_sim.core.ride`), or None for the plane of
    ``terrain``; ``switches``: one :class:`VibrationSwitches` per vehicle (None:
    no vibration).
    """

    def __init__(self, params_list, initial_poses, terrain: Terrain = Terrain(),
                 parallel: bool = False, ground: TerrainField = None, switches=None):
        self.vehicle_params = tuple(params_list)
        n = len(self.vehicle_params)
        poses = np.asarray(initial_poses, dtype=np.float64).reshape(-1, 3)
        if poses.shape[0] != n:
            raise ValueError(f'{poses.shape[0]} initial poses for {n} vehicles')
        switches = [VibrationSwitches()] * n if switches is None else list(switches)
        if len(switches) != n:
            raise ValueError(f'{len(switches)} vibration switches for {n} vehicles')
        self.terrain = terrain
        self.field = flat_field() if ground is None else ground
        self.params = np.ascontiguousarray(
            np.stack([params_row(vp, terrain, ground is not None, sw)
                      for vp, sw in zip(self.vehicle_params, switches)])
            if n else np.zeros((0, N_PARAMS)))
        self.states = np.zeros((n, STATE_SIZE))
        for i in range(n):
            self.states[i] = initial_state(self.params[i], *poses[i], field=self.field)
        self.step_index = 0
        self._step = step_many_parallel if parallel else step_many
        self._commands = np.zeros((n, 2))
        self._reset_pending = [False] * n
        self._reset_step = [-1] * n
        self.com = np.array([[vp.com_x_m, vp.com_y_m, vp.com_z_m]
                              for vp in self.vehicle_params]).reshape(n, 3)

    def __len__(self):
        return self.states.shape[0]

    @property
    def t(self) -> float:
        """Episode time of the state held [s]."""
        return self.step_index / PHYSICS_HZ

    def step(self, commands) -> None:
        """Advance every vehicle by one physics step under ``commands`` (N x 2)."""
        cmd = np.asarray(commands, dtype=np.float64)
        self._commands[...] = cmd.reshape(self._commands.shape)
        self._step(self.states, self._commands, self.params, self.field, DT)
        self.step_index += 1

    def _truth(self, i, reset) -> Truth:
        x = self.states[i]
        R, p_c = truth_from_state(x, self.com[i])
        p, v = x[S_PX:S_PZ + 1].copy(), x[S_VX:S_VZ + 1].copy()
        if vibrates(self.params[i]):
            p, p_c, v = shaken_truth(x, self.params[i], self.com[i], self.step_index, R, p, v)
        return Truth(step=self.step_index, p=p, R=R, v=v, w=x[S_WX:S_WZ + 1].copy(), p_c=p_c,
                     reset=reset)

    def truth(self, i) -> Truth:
        """Ground truth of vehicle ``i`` at the current step; ``reset`` is True in
        every truth of the first step at which it is asked for after :meth:`reset`."""
        if self._reset_pending[i]:
            self._reset_pending[i] = False
            self._reset_step[i] = self.step_index
        return self._truth(i, self._reset_step[i] == self.step_index)

    @property
    def reset_pending(self) -> bool:
        """Whether a :meth:`reset` has not yet been seen in a truth."""
        return any(self._reset_pending)

    def footprint(self, i) -> FootprintPose:
        """base_footprint pose of vehicle ``i`` now (leaves the reset mark alone)."""
        return base_footprint_pose(self._truth(i, False), self.vehicle_params[i])

    def reset(self, i, pose, speed=0.0) -> None:
        """Put vehicle ``i`` at ``pose`` (x, y, yaw), parked unless ``speed``; its next
        truth (every truth at that step) carries ``reset=True``."""
        x, y, yaw = (float(v) for v in pose)
        self.states[i] = initial_state(self.params[i], x, y, yaw, speed, field=self.field)
        self._reset_pending[i] = True
