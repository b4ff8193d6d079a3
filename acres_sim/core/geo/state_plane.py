"""EPSG:2968, NAD83(HARN) / Indiana West (US survey feet): the survey grid of the
tile, by the transverse-Mercator series of Snyder (1987) on GRS80, as the spec's
"Datum Chain" gives it.

Coordinates here are metres (x = c_f E_g, y = c_f N_g with c_f = 1200/3937 m per
US survey foot) and radians.  The false northing is 250 000 m as the game's code
uses; EPSG's is 0.1 mm smaller (spec: Georeference Caveats).
"""

import math

from acres_sim.core.geo.ellipsoid import GRS80
from acres_sim.core.jit import njit

__all__ = ['US_SURVEY_FOOT_M', 'PHI0', 'LAM0', 'K0', 'X0', 'Y0', 'AREA_OF_USE_DEG',
           'meridian_arc', 'indiana_west_inverse_rad', 'indiana_west_forward_rad']

US_SURVEY_FOOT_M = 1200.0 / 3937.0   # c_f

PHI0 = math.radians(37.5)                      # latitude of origin
LAM0 = math.radians(-(87.0 + 5.0 / 60.0))      # central meridian -87 deg 05 min
K0 = 0.999966667                               # scale on the central meridian
X0 = 900000.0                                  # false easting [m]
Y0 = 250000.0                                  # false northing [m] (the code's value)
# EPSG's area of use of the zone (west, south, east, north) [deg]: western Indiana.
# Outside it the series lose accuracy: 1000 km east, a round trip misses by 5 m.
AREA_OF_USE_DEG = (-88.1, 37.77, -86.24, 41.77)

_A = GRS80.a
_E2 = GRS80.e2
_EP2 = GRS80.ep2
_E4 = _E2 * _E2
_E6 = _E4 * _E2
# M(phi) = a [c0 phi - c2 sin 2phi + c4 sin 4phi - c6 sin 6phi]
_C0 = 1.0 - _E2 / 4.0 - 3.0 * _E4 / 64.0 - 5.0 * _E6 / 256.0
_C2 = 3.0 * _E2 / 8.0 + 3.0 * _E4 / 32.0 + 45.0 * _E6 / 1024.0
_C4 = 15.0 * _E4 / 256.0 + 45.0 * _E6 / 1024.0
_C6 = 35.0 * _E6 / 3072.0
# the footpoint series in e1
_E1 = (1.0 - math.sqrt(1.0 - _E2)) / (1.0 + math.sqrt(1.0 - _E2))
_D2 = 3.0 * _E1 / 2.0 - 27.0 * _E1**3 / 32.0
_D4 = 21.0 * _E1**2 / 16.0 - 55.0 * _E1**4 / 32.0
_D6 = 151.0 * _E1**3 / 96.0
_D8 = 1097.0 * _E1**4 / 512.0


@njit(cache=True)
def meridian_arc(phi):
    """M(phi): distance along the meridian from the equator [m] (Snyder 3-21)."""
    return _A * (_C0 * phi - _C2 * math.sin(2.0 * phi) + _C4 * math.sin(4.0 * phi)
                 - _C6 * math.sin(6.0 * phi))


_M0 = _A * (_C0 * PHI0 - _C2 * math.sin(2.0 * PHI0) + _C4 * math.sin(4.0 * PHI0)
            - _C6 * math.sin(6.0 * PHI0))


@njit(cache=True)
def indiana_west_inverse_rad(x, y):
    """Grid metres (x, y) -> NAD83(HARN) latitude, longitude [rad] (spec's series)."""
    mu = (_M0 + (y - Y0) / K0) / (_A * _C0)
    phi1 = (mu + _D2 * math.sin(2.0 * mu) + _D4 * math.sin(4.0 * mu)
            + _D6 * math.sin(6.0 * mu) + _D8 * math.sin(8.0 * mu))
    s1 = math.sin(phi1)
    c1 = math.cos(phi1)
    t1 = math.tan(phi1)
    C1 = _EP2 * c1 * c1
    T1 = t1 * t1
    w = 1.0 - _E2 * s1 * s1
    N1 = _A / math.sqrt(w)
    R1 = _A * (1.0 - _E2) / (w * math.sqrt(w))
    D = (x - X0) / (N1 * K0)
    D2 = D * D
    phi = phi1 - (N1 * t1 / R1) * (
        D2 / 2.0
        - (5.0 + 3.0 * T1 + 10.0 * C1 - 4.0 * C1 * C1 - 9.0 * _EP2) * D2 * D2 / 24.0
        + (61.0 + 90.0 * T1 + 298.0 * C1 + 45.0 * T1 * T1 - 252.0 * _EP2 - 3.0 * C1 * C1)
        * D2 * D2 * D2 / 720.0)
    lam = LAM0 + (D - (1.0 + 2.0 * T1 + C1) * D2 * D / 6.0
                  + (5.0 - 2.0 * C1 + 28.0 * T1 - 3.0 * C1 * C1 + 8.0 * _EP2 + 24.0 * T1 * T1)
                  * D2 * D2 * D / 120.0) / c1
    return phi, lam


@njit(cache=True)
def indiana_west_forward_rad(phi, lam):
    """NAD83(HARN) latitude, longitude [rad] -> grid metres (x, y) (Snyder 8-9, 8-10)."""
    s = math.sin(phi)
    c = math.cos(phi)
    t = math.tan(phi)
    N = _A / math.sqrt(1.0 - _E2 * s * s)
    T = t * t
    C = _EP2 * c * c
    A = (lam - LAM0) * c
    A2 = A * A
    x = X0 + K0 * N * (A + (1.0 - T + C) * A2 * A / 6.0
                       + (5.0 - 18.0 * T + T * T + 72.0 * C - 58.0 * _EP2) * A2 * A2 * A / 120.0)
    y = Y0 + K0 * (meridian_arc(phi) - _M0 + N * t * (
        A2 / 2.0 + (5.0 - T + 9.0 * C + 4.0 * C * C) * A2 * A2 / 24.0
        + (61.0 - 58.0 * T + T * T + 600.0 * C - 330.0 * _EP2) * A2 * A2 * A2 / 720.0))
    return x, y
