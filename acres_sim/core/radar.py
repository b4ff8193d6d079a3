"""A Doppler radar ground-speed sensor, as on a tractor's frame (the "true ground
speed" radar of a Case IH Maxxum; DICKEY-john / Raven style units): a
:mod:`acres_sim.core.step_sensor` sensor, stream RADAR.

Model
-----
The radar at lever arm ``a = (arm_x_m, arm_y_m, arm_z_m)`` from the chassis
origin (body FLU) looks at the ground ahead and below along the beam
``b = (cos beta, 0, -sin beta)`` (body FLU; beta = ``beam_angle_deg`` below the
body x axis).  At a sample step, with the velocity of the mount
``v_m = v + w x R (a - c)`` (c the CoM from the chassis origin, ``com_*``) and its
body components ``(v_x, v_y, v_z) = R^T v_m``, the Doppler shift measures the
speed along the beam, ``v_m . b = v_x cos beta - v_z sin beta``, which the unit
converts with its nominal angle (GMH Engineering, Application Notes 1000 and
1001, *Non-contact speed measurement using Doppler radar*: F_d = 2 V (F_0 / c)
cos(theta), corrected for the offset angle)::

    D = (1 + scale_error) |v_x cos beta - v_z sin beta| / cos beta
      = (1 + scale_error) |v_x - v_z tan beta|

With V = sqrt(v_x^2 + v_z^2) the speed in the body's x-z plane and
``delta_pitch = atan(v_z / v_x)`` (the angle of the motion above body x: the
body pitched nose-down relative to its motion), this is
``D = V cos(beta + delta_pitch) / cos(beta)``: the scale error of a body that
pitches on its springs relative to the ground it moves along (on the plane
the body follows the ground, delta_pitch = 0 and D = |v_x| also on a grade).
A heave velocity enters the same way (the steeper the beam, the more: GMH note
1001).  A single-beam unit has no sense of direction: D >= 0.

Errors: ``scale_error`` (a fixed calibration error: the effective beam angle
differs from the nominal one, GMH note 1001), white noise with the standard
deviation ``sigma = noise_floor_mps + noise_fraction D`` (one Gaussian per
sample), and no output below ``min_speed_mps``: when the noise-free D is below
it the sample is flagged invalid and reports speed 0 (the Gaussian is drawn
all the same).  A valid speed is clipped at 0 from below (at the defaults the
minimum speed is 6.5 sigma above 0, so this never bites).

Accuracy, as documented (no datasheet of a DICKEY-john or Raven unit was found
in the sources searched; the figures are from the literature and marked as
such): road tests of a single-channel mm-wave ground-speed radar "on the order
of about 1 %" error (Hines & Zelubowski 1992, *Conditions affecting the
accuracy of speed measurements by low power MM-wave CW Doppler radar*, IEEE
VTC, doi:10.1109/VETEC.1992.245248); 0.5-1.5 % estimation error on flat road
(Antoniou et al. 2017, *Comparison of adaptive spectral estimation for vehicle
speed measurement with radar sensors*, Sensors 17(4) 751); a current
multi-beam 77-81 GHz true-ground-speed sensor quotes +-3 % up to 2 mph (a
secondary source, grokipedia's "Ground speed radar" page).  The defaults take
1 % of the speed (1 sigma) plus 0.02 m/s (about 3 % at 2 mph), estimates from
those figures.  ISO 11783-7 itself says the accuracies of wheel- and
ground-based speed can be speed dependent and degrade at low speeds (its WBSD
definition, quoted in eclipse-4diac/4diac-forte issue 188), and its
machine-selected-speed "blended" source example switches to wheel speed below
0.5 m/s of ground-based speed (quoted in AgIsoStack++'s
isobus_speed_distance_messages.hpp).

Rate: 10 Hz, the 100 ms transmission interval of ISO 11783-7's ground-based
speed and distance message (PGN 65097; AgIsoStack++ sends it every
``SPEED_DISTANCE_MESSAGE_TX_INTERVAL_MS = 100``, "the interval defined in
ISO11783-7").

Random values: :data:`VALUES_PER_SAMPLE` = 1 Gaussian per sample, always (also
invalid, and with ``noise`` off, when the noise is zero).

Sample layout (``R_*``, :data:`SAMPLE_SIZE`): the measured speed, the valid
flag (1.0 / 0.0), the sigma of the sample, the noise-free Doppler speed D, the
true forward speed v_x at the mount (signed) and delta_pitch.  No memory.

Parameters (:class:`RadarParams`; a config key per field):

===================  ====  ========  ============  =============================================
field                unit  default   range         source
===================  ====  ========  ============  =============================================
hz                   Hz    10        1 - 120       ISO 11783-7 GBSD every 100 ms (above)
noise                bool  True      -             -
arm_x_m              m     -0.056    any           estimate: on the frame 1.0 m ahead of the rear
arm_y_m              m     -0.5      any             axle, 0.5 m right, 0.6 m above the ground
arm_z_m              m     -0.4      any             (Maxxum chassis origin 1.056 m ahead, 1.0 m up)
com_x_m, _y_m, _z_m  m     0.0       any           the vehicle's
beam_angle_deg       deg   35        20 - 60       estimate: 35-37 deg is usual (no guide found)
scale_error          -     0.0       -0.05 - 0.05  a calibrated unit (GMH note 1001)
noise_floor_mps      m/s   0.02      0 - 0.2       estimate (above)
noise_fraction       -     0.01      0 - 0.05      about 1 % (Hines & Zelubowski; Antoniou et al.)
min_speed_mps        m/s   0.1389    0 - 1         0.5 km/h (estimate; ISO: degrades at low speed)
===================  ====  ========  ============  =============================================
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.frames import lever_arm_from_chassis
from acres_sim.core.jit import njit
from acres_sim.core.rng import pcg32_gaussian
from acres_sim.core.rounding import round_decimals
from acres_sim.core.due import due_at
from acres_sim.core.step_sensor import StepSensor, point_velocity, row_positions, state_axes
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.core.vehicles import VehicleParams

__all__ = ['MEMORY_SIZE', 'MOUNT_FROM_BASE_FOOTPRINT_M', 'R_DELTA_PITCH', 'R_DOPPLER', 'R_SIGMA',
           'R_SPEED', 'R_TRUE_SPEED', 'R_VALID', 'RadarParams', 'RadarSpeed', 'SAMPLE_SIZE',
           'VALUES_PER_SAMPLE', 'default_radar_params', 'radar_block']

VALUES_PER_SAMPLE = 1
MEMORY_SIZE = 0

# The default mount, from base_footprint (body FLU [m]): on the frame between the axles.
MOUNT_FROM_BASE_FOOTPRINT_M = (1.0, -0.5, 0.6)


class RadarParams(NamedTuple):
    """The radar's parameters (SI but the beam angle; the table in the module docstring)."""

    hz: float = 10.0
    noise: bool = True
    arm_x_m: float = 1.0 - 0.4 * 2.64     # mount from the chassis origin, body FLU
    arm_y_m: float = -0.5
    arm_z_m: float = 0.6 - 1.0
    com_x_m: float = 0.0                  # centre of mass from the chassis origin, body FLU
    com_y_m: float = 0.0
    com_z_m: float = 0.0
    beam_angle_deg: float = 35.0          # beam below body x
    scale_error: float = 0.0              # fixed relative error of the speed
    noise_floor_mps: float = 0.02         # sigma = noise_floor_mps + noise_fraction * D
    noise_fraction: float = 0.01
    min_speed_mps: float = 0.5 / 3.6      # below: invalid, speed 0


_FIELD = row_positions(RadarParams)
_NOISE = _FIELD['noise']
_AX, _AY, _AZ = _FIELD['arm_x_m'], _FIELD['arm_y_m'], _FIELD['arm_z_m']
_CX, _CY, _CZ = _FIELD['com_x_m'], _FIELD['com_y_m'], _FIELD['com_z_m']
_BEAM = _FIELD['beam_angle_deg']
_SCALE = _FIELD['scale_error']
_FLOOR = _FIELD['noise_floor_mps']
_FRACTION = _FIELD['noise_fraction']
_MIN = _FIELD['min_speed_mps']

# Sample layout.
(R_SPEED,          # measured speed [m/s] (>= 0; 0 when invalid)
 R_VALID,          # 1.0: valid, 0.0: below the minimum speed
 R_SIGMA,          # sigma of this sample's noise [m/s]
 R_DOPPLER,        # the noise-free D [m/s]
 R_TRUE_SPEED,     # truth: v_x, the mount's forward speed, signed [m/s]
 R_DELTA_PITCH) = range(6)   # truth: atan(v_z / v_x) [rad]
SAMPLE_SIZE = 6


@njit(cache=True)
def radar_block(k0, states, due, period, params, rng, memory, out_k, out):
    """The radar over the block of state rows ``states`` (steps k0 ...): the
    samples into ``out`` / ``out_k``; returns their number (step_sensor's kernel
    shape; the model in the module docstring).  ``memory`` is unused."""
    noise = params[_NOISE] > 0.5
    tan_beam = math.tan(math.radians(params[_BEAM]))
    dx, dy, dz = params[_AX] - params[_CX], params[_AY] - params[_CY], params[_AZ] - params[_CZ]
    n = 0
    for i in range(states.shape[0]):
        k = k0 + i
        if not due_at(due, 0, period, k / PHYSICS_HZ):
            continue
        g = pcg32_gaussian(rng)
        row = states[i]
        ex, ey, ez = state_axes(row)
        vm = point_velocity(row, ex, ey, ez, dx, dy, dz)
        vx = ex[0] * vm[0] + ex[1] * vm[1] + ex[2] * vm[2]
        vz = ez[0] * vm[0] + ez[1] * vm[1] + ez[2] * vm[2]
        doppler = (1.0 + params[_SCALE]) * abs(vx - vz * tan_beam)
        sigma = params[_FLOOR] + params[_FRACTION] * doppler
        valid = doppler >= params[_MIN]
        speed = 0.0
        if valid:
            speed = doppler + sigma * g if noise else doppler
            speed = max(speed, 0.0)
        o = out[n]
        o[R_SPEED] = speed
        o[R_VALID] = 1.0 if valid else 0.0
        o[R_SIGMA] = sigma
        o[R_DOPPLER] = doppler
        o[R_TRUE_SPEED] = vx
        o[R_DELTA_PITCH] = math.atan(vz / vx) if vx != 0.0 else 0.0
        out_k[n] = k
        n += 1
    return n


def radar_rows(columns):
    """The radar.jsonl rows of :meth:`RadarSpeed.columns`."""
    return [{'speed_mps': u, 'valid': ok, 'sigma_mps': s,
             'truth': {'speed_mps': true_u, 'delta_pitch_rad': dp}}
            for u, ok, s, true_u, dp in zip(*(columns[key].tolist() for key in (
                'speed_mps', 'valid', 'sigma_mps', 'truth.speed_mps', 'truth.delta_pitch_rad')))]


class RadarSpeed(StepSensor):
    """The ground-speed radar of one vehicle (:class:`RadarParams`, the RADAR stream)."""

    kernel = staticmethod(radar_block)
    SAMPLE_SIZE = SAMPLE_SIZE
    MEMORY_SIZE = MEMORY_SIZE
    VALUES_PER_SAMPLE = VALUES_PER_SAMPLE

    def columns(self, samples):
        """radar.jsonl's values: the speed, its validity and sigma, the truth."""
        samples = np.asarray(samples, dtype=np.float64)
        return {'speed_mps': round_decimals(samples[:, R_SPEED], 6),
                'valid': samples[:, R_VALID] > 0.5,
                'sigma_mps': round_decimals(samples[:, R_SIGMA], 6),
                'truth.speed_mps': round_decimals(samples[:, R_TRUE_SPEED], 6),
                'truth.delta_pitch_rad': round_decimals(samples[:, R_DELTA_PITCH], 8)}

    rows_from_columns = staticmethod(radar_rows)


def default_radar_params(vehicle: VehicleParams,
                         mount_from_base_footprint_m=MOUNT_FROM_BASE_FOOTPRINT_M,
                         **overrides) -> RadarParams:
    """The radar of ``vehicle`` mounted at ``mount_from_base_footprint_m`` (body
    FLU from base_footprint [m]), with its CoM; other fields their defaults unless
    given in ``overrides``."""
    arm = lever_arm_from_chassis(mount_from_base_footprint_m, 'base_footprint',
                                 vehicle.wheelbase_m, vehicle.cog_height_m)
    fields = dict(arm_x_m=float(arm[0]), arm_y_m=float(arm[1]), arm_z_m=float(arm[2]),
                  com_x_m=vehicle.com_x_m, com_y_m=vehicle.com_y_m, com_z_m=vehicle.com_z_m)
    fields.update(overrides)
    return RadarParams(**fields)
