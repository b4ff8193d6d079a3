"""The U.S. Standard Atmosphere, 1976 (NOAA-S/T 76-1562, NASA-TM-X-74335), from
sea level to 86 km geometric altitude, and the barometric altitude formula of
the AirSim barometer (spec source: the AirSim paper, environment and
barometer models).

Below 86 km the Standard is a stack of seven layers, each with a constant
gradient of the molecular-scale temperature T_M in *geopotential* altitude H.
A geometric altitude Z [m] becomes H [m'] by

    H = r0 Z / (r0 + Z),     r0 = 6 356 766 m (the Standard's Earth radius),

and inside layer b (base H_b, base temperature T_M,b, gradient L_b)

    T_M = T_M,b + L_b (H - H_b)
    P   = P_b (T_M,b / T_M) ** (g0 M0 / (R* L_b))          (L_b != 0)
    P   = P_b exp(-g0 M0 (H - H_b) / (R* T_M,b))            (L_b == 0)

with the Standard's own constants g0 = 9.80665 m/s^2, M0 = 28.9644 kg/kmol and
R* = 8.31432 J/(mol K) (the 1976 value; CODATA today gives 8.314462618). The
base pressures P_b follow from P_0 = 101 325 Pa by applying the same formulas
at the top of each layer (:data:`P_B`); they are not separately rounded
constants.

Temperature.  Up to 80 km the kinetic temperature T equals T_M.  Between 80
and 86 km the Standard lowers the mean molecular weight slightly, tabulated as
M/M0 every 0.5 km (its Table 8, linearly interpolated here), and T = T_M M/M0:
186.87 K at 86 km against T_M = 186.946 K.  Pressure and density depend on
T_M only.

Density.  The Standard's density is rho = P M0 / (R* T_M), i.e. the specific
gas constant R*/M0 = 287.0531 J/(kg K).  The AirSim paper writes the ideal gas
law with R = 287.058 J/(kg K) for dry air, and that is what :func:`density_1976`
uses (the drag model of :mod:`acres_sim.core.physics` has always used it): its
densities are the Standard's times 287.0531 / 287.058 = 1 - 1.7e-5, which is
below the tables' five printed figures at most altitudes and at most 1.5 units
of the last figure at the others.

Outside 0..86 km the layers are extended (the first one below 0, the last one,
H >= 71 km', above 86 km); the Standard defines other models there.

Barometric altitude.  The AirSim barometer turns a pressure into an indicated
altitude with the troposphere's formula

    h = T0 / a ((p / p0) ** (-a R / g) - 1)

with T0 = 288.15 K, a = -6.5e-3 K/m, R = 287.058 J/(kg K), g = g0 and p0 the
reference (sea level, or QNH) pressure: :func:`pressure_altitude_m`.  The
result is close to the geopotential altitude H of the standard troposphere
(within 0.2 m up to 11 km; the gas constant differs from the Standard's), not
the geometric one: H = Z - Z^2 / (r0 + Z) is 0.6 m less than Z at 2 km.

All kernels take and return floats in SI units and run inside other numba code.
"""

import math

import numpy as np

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.jit import njit

__all__ = [
    'H_B', 'T_B', 'L_B', 'P_B', 'P0_PA', 'T0_K', 'R_STAR', 'M0', 'R0_M', 'R_AIR', 'R_1976',
    'LAPSE_TROPOSPHERE', 'TOP_GEOMETRIC_M', 'MOLECULAR_WEIGHT_Z_M', 'MOLECULAR_WEIGHT_RATIO',
    'geopotential_altitude_m', 'geometric_altitude_m', 'molecular_temperature_1976',
    'temperature_1976', 'pressure_1976', 'density_1976', 'pressure_altitude_m',
]

# The layers (the Standard's Table 4): base geopotential altitude H_b [m'], base
# molecular-scale temperature T_M,b [K], gradient L_b [K/m'].  The last row is
# the top, 84 852 m' = 86 km geometric.
H_B = np.array([0.0, 11000.0, 20000.0, 32000.0, 47000.0, 51000.0, 71000.0, 84852.0])
T_B = np.array([288.15, 216.65, 216.65, 228.65, 270.65, 270.65, 214.65, 186.946])
L_B = np.array([-0.0065, 0.0, 0.001, 0.0028, 0.0, -0.0028, -0.002, 0.0])

P0_PA = 101325.0          # sea-level pressure [Pa]
T0_K = 288.15             # sea-level temperature [K]
R_STAR = 8.31432          # J/(mol K), the Standard's universal gas constant
M0 = 0.0289644            # kg/mol, sea-level mean molecular weight of air
R0_M = 6356766.0          # m, the Earth radius of the geopotential conversion
R_AIR = 287.058           # J/(kg K), the AirSim paper's specific gas constant of dry air
R_1976 = R_STAR / M0      # 287.0531 J/(kg K), the Standard's own (R* / M0)
LAPSE_TROPOSPHERE = -6.5e-3   # K/m, the paper's a (= L_0)
TOP_GEOMETRIC_M = 86000.0

# M/M0 from 80 to 86 km geometric altitude (the Standard's Table 8).
MOLECULAR_WEIGHT_Z_M = np.arange(80000.0, 86000.0 + 1.0, 500.0)
MOLECULAR_WEIGHT_RATIO = np.array([1.000000, 0.999996, 0.999989, 0.999971, 0.999941,
                                   0.999909, 0.999870, 0.999829, 0.999786, 0.999741,
                                   0.999694, 0.999641, 0.999579])


@njit(cache=True)
def geopotential_altitude_m(h_m):
    """H [m'] of geometric altitude ``h_m`` [m] (r0 = :data:`R0_M`)."""
    return R0_M * h_m / (R0_M + h_m)


@njit(cache=True)
def geometric_altitude_m(H_m):
    """Z [m] of geopotential altitude ``H_m`` [m'] (the inverse of the above)."""
    return R0_M * H_m / (R0_M - H_m)


@njit(cache=True)
def _layers(h_m):
    """(T_M [K], P [Pa]) at geometric altitude ``h_m``: the layer chain of the module
    docstring, base pressure by base pressure from P0."""
    h = R0_M * h_m / (R0_M + h_m)         # geopotential height
    beta = STANDARD_GRAVITY_MPS2 * M0 / R_STAR
    p = P0_PA
    i = 0
    while i + 1 < H_B.shape[0] - 1 and h >= H_B[i + 1]:
        # pressure at the top of layer i
        dh = H_B[i + 1] - H_B[i]
        if L_B[i] == 0.0:
            p = p * math.exp(-beta * dh / T_B[i])
        else:
            p = p * (T_B[i] / (T_B[i] + L_B[i] * dh)) ** (beta / L_B[i])
        i += 1
    dh = h - H_B[i]
    T = T_B[i] + L_B[i] * dh
    if L_B[i] == 0.0:
        p = p * math.exp(-beta * dh / T_B[i])
    else:
        p = p * (T_B[i] / T) ** (beta / L_B[i])
    return T, p


@njit(cache=True)
def molecular_temperature_1976(h_m):
    """T_M [K] at geometric altitude ``h_m`` [m]."""
    return _layers(h_m)[0]


@njit(cache=True)
def _molecular_weight_ratio(h_m):
    """M/M0 at geometric altitude ``h_m``: 1 below 80 km, Table 8 interpolated to
    86 km, its last value above."""
    z = MOLECULAR_WEIGHT_Z_M
    if h_m <= z[0]:
        return 1.0
    n = z.shape[0]
    if h_m >= z[n - 1]:
        return MOLECULAR_WEIGHT_RATIO[n - 1]
    j = int((h_m - z[0]) / (z[1] - z[0]))
    w = (h_m - z[j]) / (z[j + 1] - z[j])
    return MOLECULAR_WEIGHT_RATIO[j] + w * (MOLECULAR_WEIGHT_RATIO[j + 1]
                                            - MOLECULAR_WEIGHT_RATIO[j])


@njit(cache=True)
def temperature_1976(h_m):
    """Kinetic temperature T [K] at geometric altitude ``h_m`` [m]: T_M, times
    M/M0 from 80 to 86 km."""
    return _layers(h_m)[0] * _molecular_weight_ratio(h_m)


@njit(cache=True)
def pressure_1976(h_m):
    """Pressure P [Pa] at geometric altitude ``h_m`` [m]."""
    return _layers(h_m)[1]


@njit(cache=True)
def density_1976(h_m):
    """Air density [kg/m^3] at geometric altitude ``h_m`` [m]: rho = P / (R T_M)
    with the paper's R = :data:`R_AIR` (see the module docstring)."""
    T, p = _layers(h_m)
    return p / (R_AIR * T)


@njit(cache=True)
def pressure_altitude_m(p_pa, p0_pa):
    """The AirSim barometer's altitude [m] of pressure ``p_pa`` over the reference
    ``p0_pa``: T0 / a ((p / p0) ** (-a R / g0) - 1), troposphere constants."""
    a = LAPSE_TROPOSPHERE
    return T0_K / a * ((p_pa / p0_pa) ** (-a * R_AIR / STANDARD_GRAVITY_MPS2) - 1.0)


def _base_pressures():
    """P_b [Pa] at each H_b: the chain of the kernel, in plain Python (no compilation
    at import)."""
    beta = STANDARD_GRAVITY_MPS2 * M0 / R_STAR
    p = [P0_PA]
    for i in range(H_B.shape[0] - 1):
        dh = H_B[i + 1] - H_B[i]
        if L_B[i] == 0.0:
            p.append(p[-1] * math.exp(-beta * dh / T_B[i]))
        else:
            p.append(p[-1] * (T_B[i] / (T_B[i] + L_B[i] * dh)) ** (beta / L_B[i]))
    return np.array(p)


P_B = _base_pressures()
