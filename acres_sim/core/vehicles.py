"""Parameter record of a ground vehicle for :mod:`acres_sim.core.physics`.

A :class:`VehicleParams` holds plain floats in SI units (kg, m, s, rad, N).  The
packaged values with their sources are in ``config/vehicles/*.yaml`` (read by
:func:`acres_sim.config.vehicles.load_vehicle`; each value's note there names
its source).  Geometry follows the spec (Frames and Sample Times):
base_footprint is the middle of the rear axle on the ground, the chassis origin
is ``0.4 * wheelbase_m`` ahead of it at ``cog_height_m``; the centre of mass sits
at ``(com_x_m, com_y_m, com_z_m)`` (body FLU) from the chassis origin, zero by
default, so the rear axle carries 60 % of the static load.

The kernels take one float64 row per vehicle; :data:`P_MASS` ... are the
column indices of the fields in order, followed by the world columns
(:data:`P_AIR_DENSITY` ...) that :func:`acres_sim.core.physics.params_row`
appends.
"""

from typing import NamedTuple

__all__ = [
    'VehicleParams', 'VEHICLE_FIELDS', 'N_VEHICLE_PARAMS',
    'P_MASS', 'P_IXX', 'P_IYY', 'P_IZZ', 'P_WHEELBASE', 'P_TRACK', 'P_COG_HEIGHT',
    'P_WHEEL_RADIUS', 'P_MAX_SPEED', 'P_MAX_REVERSE_SPEED', 'P_MAX_ACCEL', 'P_MAX_BRAKE',
    'P_DRIVE_TAU', 'P_MAX_STEER', 'P_STEER_RATE', 'P_CORNERING_FRONT', 'P_CORNERING_REAR',
    'P_MU', 'P_ROLLING', 'P_DRAG_AREA', 'P_COM_X', 'P_COM_Y', 'P_COM_Z', 'P_SPEED_KP',
    'P_SPEED_KI', 'P_KINEMATIC_BELOW', 'P_DYNAMIC_ABOVE',
    'P_SUSP_K_FRONT', 'P_SUSP_C_FRONT', 'P_SUSP_K_REAR', 'P_SUSP_C_REAR', 'P_UNSPRUNG_FRONT',
    'P_UNSPRUNG_REAR', 'P_TYRE_K_FRONT', 'P_TYRE_C_FRONT', 'P_TYRE_K_REAR', 'P_TYRE_C_REAR',
    'P_ENGINE_CYLINDERS', 'P_ENGINE_IDLE_RPM', 'P_ENGINE_WORK_RPM', 'P_ENGINE_WORK_SPEED',
    'P_ENGINE_ACCEL_IDLE', 'P_ENGINE_ACCEL_LOAD', 'P_PTO_RPM', 'P_PTO_ACCEL', 'P_PARKED_JITTER',
]


class VehicleParams(NamedTuple):
    """One vehicle, SI units; the field order is the column order of the kernel row."""

    mass_kg: float                     # operating mass
    ixx_kgm2: float                    # inertia about the body axes through the CoM
    iyy_kgm2: float                    #   (only izz enters the planar dynamics)
    izz_kgm2: float
    wheelbase_m: float                 # rear axle to front axle
    track_m: float                     # wheel centre to wheel centre (not in the forces)
    cog_height_m: float                # chassis origin / CoG above the ground
    wheel_radius_m: float              # rolling radius (no wheel-spin dynamics; for TF and docs)
    max_speed_mps: float               # forward speed command limit
    max_reverse_speed_mps: float       # reverse speed command limit (a positive number)
    max_accel_mps2: float              # drive force limit / mass
    max_brake_mps2: float              # brake force limit / mass
    drive_time_constant_s: float       # first-order lag of the drive/brake force
    max_steer_rad: float               # road-wheel angle limit (bicycle equivalent)
    steer_rate_radps: float            # road-wheel angle rate limit
    cornering_stiffness_front_npr: float  # per axle [N/rad]
    cornering_stiffness_rear_npr: float   # per axle [N/rad]
    friction_mu: float                 # tyre-ground friction coefficient (lateral force cap)
    rolling_resistance: float          # rolling resistance coefficient (force / normal load)
    drag_area_m2: float                # drag coefficient x frontal area, Cd*A
    com_x_m: float = 0.0               # centre of mass from the chassis origin, body FLU
    com_y_m: float = 0.0
    com_z_m: float = 0.0
    speed_kp_per_s: float = 1.0        # speed PI: acceleration per m/s of speed error
    speed_ki_per_s2: float = 0.2       #   and per m of integrated error
    kinematic_below_mps: float = 1.0   # pure kinematic bicycle below this speed
    dynamic_above_mps: float = 2.0     # pure tyre-force model above; smooth blend between
    # ride (on a terrain only, :mod:`acres_sim.core.ride`): per wheel, front and rear axle
    suspension_stiffness_front_npm: float = 0.0   # 0: a rigid axle (the tyre is the spring)
    suspension_damping_front_nspm: float = 0.0
    suspension_stiffness_rear_npm: float = 0.0
    suspension_damping_rear_nspm: float = 0.0
    unsprung_mass_front_kg: float = 0.0   # per wheel, below the spring (unused on a rigid axle)
    unsprung_mass_rear_kg: float = 0.0
    tyre_stiffness_front_npm: float = 200000.0   # vertical, per tyre
    tyre_damping_front_nspm: float = 1000.0
    tyre_stiffness_rear_npm: float = 200000.0
    tyre_damping_rear_nspm: float = 1000.0
    # vibration (:mod:`acres_sim.core.vibration`)
    engine_cylinders: float = 4.0          # four-stroke: cylinders / 2 firings per revolution
    engine_idle_rpm: float = 900.0         # parked and at walking pace
    engine_work_rpm: float = 2000.0        # at and above engine_work_speed_mps
    engine_work_speed_mps: float = 2.0
    engine_accel_idle_mps2: float = 0.05   # amplitude of the firing-order chassis acceleration
    engine_accel_load_mps2: float = 0.2    #   at idle, and added at the full drive force
    pto_rpm: float = 0.0                   # PTO shaft speed while driving (0: no PTO)
    pto_accel_mps2: float = 0.0            # amplitude of its second order (universal joints)
    parked_jitter_mps: float = 0.02        # the brake's step-to-step velocity change, parked


VEHICLE_FIELDS = VehicleParams._fields
N_VEHICLE_PARAMS = len(VEHICLE_FIELDS)

(P_MASS, P_IXX, P_IYY, P_IZZ, P_WHEELBASE, P_TRACK, P_COG_HEIGHT, P_WHEEL_RADIUS,
 P_MAX_SPEED, P_MAX_REVERSE_SPEED, P_MAX_ACCEL, P_MAX_BRAKE, P_DRIVE_TAU, P_MAX_STEER,
 P_STEER_RATE, P_CORNERING_FRONT, P_CORNERING_REAR, P_MU, P_ROLLING, P_DRAG_AREA,
 P_COM_X, P_COM_Y, P_COM_Z, P_SPEED_KP, P_SPEED_KI, P_KINEMATIC_BELOW,
 P_DYNAMIC_ABOVE, P_SUSP_K_FRONT, P_SUSP_C_FRONT, P_SUSP_K_REAR, P_SUSP_C_REAR,
 P_UNSPRUNG_FRONT, P_UNSPRUNG_REAR, P_TYRE_K_FRONT, P_TYRE_C_FRONT, P_TYRE_K_REAR,
 P_TYRE_C_REAR, P_ENGINE_CYLINDERS, P_ENGINE_IDLE_RPM, P_ENGINE_WORK_RPM, P_ENGINE_WORK_SPEED,
 P_ENGINE_ACCEL_IDLE, P_ENGINE_ACCEL_LOAD, P_PTO_RPM, P_PTO_ACCEL,
 P_PARKED_JITTER) = range(N_VEHICLE_PARAMS)

assert N_VEHICLE_PARAMS == 46 and P_PARKED_JITTER == N_VEHICLE_PARAMS - 1
