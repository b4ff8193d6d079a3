"""The barometer (AirSim's model): the 1976 standard atmosphere's pressure at
the sensor's true altitude, a slow first-order Gauss-Markov drift of it, white
measurement noise, and the altimeter setting QNH.

Per sample at time t (dt the time since the sample before, 1 / hz at the
first):

    h     = h_site + z_s                   the sensor's altitude above sea level
    P     = P_1976(h)                      (core.environment.atmosphere)
    w     = exp(-dt / tau)
    b     = w b + (1 - w) eta,   eta ~ N(0, s^2)      the drift factor, b = 0 at the start
    p     = P (1 + b) + sigma eps,  eps ~ N(0, 1)
    p_out = p + (QNH - P_0)                P_0 = 101325 Pa, the standard sea-level pressure
    h_out = pressure_altitude(p_out, QNH)  the barometric formula

z_s is the sensor point's height above the tile origin (grid up), h_site the
origin's height above sea level (NAVD88); over a farm the grid's up and the
local vertical differ by far less than the noise.  Random values from its
stream: 2 Gaussians per sample (eta, then eps), with ``noise`` off too (then b
stays 0 and sigma eps is 0).

AirSim's defaults (its BarometerSimpleParams): QNH 1013.25 hPa; s = 0.0365 / 20
(a twentieth of the 3.65 % spread of sea-level pressure, Burch's Mariner's
Pressure Atlas), tau = 1 hour; sigma = 2.7 Pa, the 0.027 mbar resolution of the
MEAS MS5611-01BA at its finest oversampling; 50 Hz.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.environment.atmosphere import pressure_1976, pressure_altitude_m
from acres_sim.core.jit import njit
from acres_sim.core.quaternion import matrix_from_quat
from acres_sim.core.rng import pcg32_gaussian
from acres_sim.core.rounding import round_decimals
from acres_sim.core.due import due_at
from acres_sim.core.step_sensor import StepSensor, row_positions
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q

__all__ = ['Barometer', 'BarometerParams', 'STANDARD_PRESSURE_PA', 'VALUES_PER_SAMPLE',
           'barometer_block']

VALUES_PER_SAMPLE = 2
STANDARD_PRESSURE_PA = 101325.0


class BarometerParams(NamedTuple):
    hz: float
    noise: bool
    sigma_pa: float             # white noise [Pa]
    drift_sigma: float          # s, of the drift factor (dimensionless)
    drift_tau_s: float          # tau
    qnh_pa: float               # QNH [Pa]
    site_altitude_m: float      # h_site: the tile origin above sea level [m]
    lever_arm_m: np.ndarray     # the sensor from the chassis origin, body FLU [m]


_AT = row_positions(BarometerParams, {'lever_arm_m': 3})
_NOISE, _SIGMA, _DRIFT, _TAU = _AT['noise'], _AT['sigma_pa'], _AT['drift_sigma'], _AT['drift_tau_s']
_QNH, _SITE, _ARM = _AT['qnh_pa'], _AT['site_altitude_m'], _AT['lever_arm_m']

# sample layout
B_PRESSURE = 0      # p_out [Pa]
B_ALTITUDE = 1      # h_out [m]
B_DRIFT = 2         # b
B_TRUE_PRESSURE = 3  # P [Pa]
B_TRUE_ALTITUDE = 4  # h [m]
SAMPLE_SIZE = 5

# memory: the drift factor, the time of the sample before (< 0: none yet)
_B, _T_PREV = 0, 1


@njit(cache=True)
def barometer_block(k0, states, due, period, params, rng, memory, out_k, out):
    """The samples of the steps of ``states`` (see core.step_sensor)."""
    noise = params[_NOISE] > 0.5
    n = 0
    for i in range(states.shape[0]):
        k = k0 + i
        t = k / PHYSICS_HZ
        if not due_at(due, 0, period, t):
            continue
        R = matrix_from_quat(states[i, T_Q:T_Q + 4])
        z = states[i, T_P + 2]
        for b in range(3):
            z += R[2, b] * params[_ARM + b]
        h = params[_SITE] + z
        dt = period if memory[_T_PREV] < 0.0 else t - memory[_T_PREV]
        memory[_T_PREV] = t
        eta = pcg32_gaussian(rng)
        eps = pcg32_gaussian(rng)
        if noise:
            w = math.exp(-dt / params[_TAU])
            memory[_B] = w * memory[_B] + (1.0 - w) * params[_DRIFT] * eta
        pressure = pressure_1976(h)
        p = pressure * (1.0 + memory[_B]) + (params[_SIGMA] * eps if noise else 0.0)
        p_out = p + (params[_QNH] - STANDARD_PRESSURE_PA)
        out[n, B_PRESSURE] = p_out
        out[n, B_ALTITUDE] = pressure_altitude_m(p_out, params[_QNH])
        out[n, B_DRIFT] = memory[_B]
        out[n, B_TRUE_PRESSURE] = pressure
        out[n, B_TRUE_ALTITUDE] = h
        out_k[n] = k
        n += 1
    return n


#: barometer.jsonl: (key, sample column, decimals)
ROW_COLUMNS = (('pressure_pa', B_PRESSURE, 3), ('pressure_altitude_m', B_ALTITUDE, 4),
               ('drift_factor', B_DRIFT, 10), ('truth.pressure_pa', B_TRUE_PRESSURE, 3),
               ('truth.altitude_m', B_TRUE_ALTITUDE, 4))


def barometer_rows(columns):
    """The barometer.jsonl rows of :meth:`Barometer.columns`."""
    return [{'pressure_pa': p, 'pressure_altitude_m': h, 'drift_factor': b,
             'truth': {'pressure_pa': true_p, 'altitude_m': true_h}}
            for p, h, b, true_p, true_h in zip(*(columns[key].tolist()
                                                 for key, _i, _n in ROW_COLUMNS))]


class Barometer(StepSensor):
    """The barometer of one vehicle (see the module docstring)."""

    kernel = staticmethod(barometer_block)
    SAMPLE_SIZE = SAMPLE_SIZE
    MEMORY_SIZE = 2

    def start_memory(self):
        memory = np.zeros(self.MEMORY_SIZE)
        memory[_T_PREV] = -1.0
        return memory

    def altitude_slope_m_per_pa(self):
        """d h_out / d p_out at the tile origin's pressure [m/Pa] (negative):
        what a pressure error is in altitude there."""
        p = self.params
        pressure = pressure_1976(p.site_altitude_m) + (p.qnh_pa - STANDARD_PRESSURE_PA)
        step = 1.0      # Pa: the formula is smooth, a central difference is exact to 1e-9
        return (pressure_altitude_m(pressure + step, p.qnh_pa)
                - pressure_altitude_m(pressure - step, p.qnh_pa)) / (2.0 * step)

    def columns(self, samples):
        """barometer.jsonl's values: pressure [Pa, 0.001], pressure altitude
        [m, 0.0001], the drift factor, and the truth."""
        samples = np.asarray(samples, dtype=np.float64)
        return {key: round_decimals(samples[:, index], ndigits)
                for key, index, ndigits in ROW_COLUMNS}

    rows_from_columns = staticmethod(barometer_rows)
