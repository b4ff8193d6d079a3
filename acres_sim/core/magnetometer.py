"""The magnetometer: the Earth's field in body axes with the sensor's errors
(AirSim's model: the reference field, rotated into the body, times a scale
factor, plus a bias and white noise), and, as an option, the hard- and
soft-iron distortion a steel vehicle adds.

The reference field in world axes (the tile's grid ENU) is a local linear
field about the tile origin (``acres_sim.pipeline.magnetic_field`` makes it
from the World Magnetic Model or the tilted dipole):

    B_w(p, t) = B_0 + G p_s + B_dot t      p_s = p + R r_s   (the sensor point)

and the sample, in tesla, body FLU:

    B_b = R^T B_w(p_s, t)
    m   = k A B_b + b_hard + b + sigma n,   n ~ N(0, I)

with k the scale factor, A the soft-iron matrix (identity: none), b_hard the
hard-iron offset (zero: none), b the sensor's constant bias and sigma the
white noise per axis.  Random values from its stream: 3 Gaussians per sample
(x, y, z), with ``noise`` off too (then sigma n is zero).
"""

from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit
from acres_sim.core.quaternion import matrix_from_quat
from acres_sim.core.rng import pcg32_gaussian
from acres_sim.core.rounding import round_decimals
from acres_sim.core.due import due_at
from acres_sim.core.step_sensor import StepSensor, row_positions
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q

__all__ = ['MagnetometerParams', 'Magnetometer', 'magnetometer_block', 'VALUES_PER_SAMPLE']

VALUES_PER_SAMPLE = 3


class MagnetometerParams(NamedTuple):
    hz: float
    noise: bool
    sigma_t: float              # white noise per axis [T]
    scale_factor: float         # k
    bias_t: np.ndarray          # b, body FLU [T]
    hard_iron_t: np.ndarray     # b_hard, body FLU [T]
    soft_iron: np.ndarray       # A (3, 3), row-major
    lever_arm_m: np.ndarray     # r_s from the chassis origin, body FLU [m]
    field_t: np.ndarray         # B_0 at the tile origin, grid ENU [T]
    gradient_t_per_m: np.ndarray  # G (3, 3), d B_w / d p, row-major [T/m]
    rate_t_per_s: np.ndarray    # B_dot [T/s]


# positions in the kernel's parameter row (StepSensor.params_row: field order)
_AT = row_positions(MagnetometerParams, {'bias_t': 3, 'hard_iron_t': 3, 'soft_iron': 9,
                                         'lever_arm_m': 3, 'field_t': 3,
                                         'gradient_t_per_m': 9, 'rate_t_per_s': 3})
_NOISE, _SIGMA, _SCALE = _AT['noise'], _AT['sigma_t'], _AT['scale_factor']
_BIAS, _HARD, _SOFT, _ARM = _AT['bias_t'], _AT['hard_iron_t'], _AT['soft_iron'], _AT['lever_arm_m']
_B0, _GRAD, _RATE = _AT['field_t'], _AT['gradient_t_per_m'], _AT['rate_t_per_s']

# sample layout: the measured field, then the true field in body axes [T]
M_FIELD = 0
M_TRUE = 3
SAMPLE_SIZE = 6


@njit(cache=True)
def magnetometer_block(k0, states, due, period, params, rng, memory, out_k, out):
    """The samples of the steps of ``states`` (see core.step_sensor)."""
    noise = params[_NOISE] > 0.5
    sigma = params[_SIGMA]
    n = 0
    for i in range(states.shape[0]):
        k = k0 + i
        t = k / PHYSICS_HZ
        if not due_at(due, 0, period, t):
            continue
        R = matrix_from_quat(states[i, T_Q:T_Q + 4])
        p = states[i, T_P:T_P + 3]
        world = np.empty(3)
        for a in range(3):
            point = p[a]
            for b in range(3):
                point += R[a, b] * params[_ARM + b]
            world[a] = point
        field = np.empty(3)
        for a in range(3):
            value = params[_B0 + a] + params[_RATE + a] * t
            for b in range(3):
                value += params[_GRAD + 3 * a + b] * world[b]
            field[a] = value
        body = np.empty(3)
        for a in range(3):      # R^T B_w
            body[a] = R[0, a] * field[0] + R[1, a] * field[1] + R[2, a] * field[2]
        for a in range(3):
            draw = pcg32_gaussian(rng)
            value = params[_HARD + a] + params[_BIAS + a]
            for b in range(3):
                value += params[_SCALE] * params[_SOFT + 3 * a + b] * body[b]
            out[n, M_FIELD + a] = value + (sigma * draw if noise else 0.0)
            out[n, M_TRUE + a] = body[a]
        out_k[n] = k
        n += 1
    return n


def magnetometer_rows(columns):
    """The magnetometer.jsonl rows of :meth:`Magnetometer.columns`."""
    return [{'magnetic_field_flu_t': b, 'truth': {'magnetic_field_flu_t': true_b}}
            for b, true_b in zip(columns['magnetic_field_flu_t'].tolist(),
                                 columns['truth.magnetic_field_flu_t'].tolist())]


class Magnetometer(StepSensor):
    """The magnetometer of one vehicle (see the module docstring)."""

    kernel = staticmethod(magnetometer_block)
    SAMPLE_SIZE = SAMPLE_SIZE
    MEMORY_SIZE = 0          # nothing carried from sample to sample

    def columns(self, samples):
        """magnetometer.jsonl's values: the field [T] (rounded to 0.1 nT), and its truth."""
        samples = np.asarray(samples, dtype=np.float64)
        return {'magnetic_field_flu_t': round_decimals(samples[:, M_FIELD:M_FIELD + 3], 10),
                'truth.magnetic_field_flu_t': round_decimals(samples[:, M_TRUE:M_TRUE + 3], 10)}

    rows_from_columns = staticmethod(magnetometer_rows)
