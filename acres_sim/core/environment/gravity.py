"""Gravity against altitude, the AirSim paper's environment model.

Newton's inverse square law about a spherical Earth of radius R_e gives
g(h) = g0 R_e^2 / (R_e + h)^2 at height h above its surface.  The paper keeps
the first term of the binomial expansion in h / R_e:

    g(h) = g0 (1 - 2 h / R_e)

whose error against the inverse square is 3 g0 (h / R_e)^2 to leading order
(it is always below the exact value): 3.3e-8 m/s^2 at the ACRE tile's 215 m,
7.3e-5 m/s^2 at 10 km, far below an IMU's resolution at any height a farm
vehicle reaches.

g0 is standard gravity, 9.80665 m/s^2 (:data:`acres_sim.core.constants.STANDARD_GRAVITY_MPS2`,
the same value).

R_e is the IUGG mean Earth radius R1 = (2a + b) / 3 of the GRS80 / WGS84
ellipsoid, 6 371 008.8 m (Moritz, Geodetic Reference System 1980, Bull. Geod.
74, 2000): the radius of a sphere standing for the whole Earth, which is what
the expansion assumes.  AirSim's source divides by its EARTH_RADIUS, the WGS84
equatorial radius a = 6 378 137 m; the two differ by 1.1e-3 of the correction
term 2 g0 h / R_e, 3.4e-7 m/s^2 per 100 m of height.
"""

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.jit import njit

__all__ = ['G0_MPS2', 'R_E_MEAN_M', 'gravity_at_altitude']

G0_MPS2 = STANDARD_GRAVITY_MPS2
R_E_MEAN_M = 6371008.8


@njit(cache=True)
def gravity_at_altitude(h_m):
    """g [m/s^2] at height ``h_m`` [m] above the mean sphere: g0 (1 - 2 h / R_e)."""
    return G0_MPS2 * (1.0 - 2.0 * h_m / R_E_MEAN_M)
