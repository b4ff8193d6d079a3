"""Reference ellipsoids (spec: Datum Chain, UTM Projection).

Lengths in metres; ``f`` the flattening, ``e2`` the first and ``ep2`` the second
eccentricity squared, ``n`` the third flattening.
"""

from typing import NamedTuple

__all__ = ['Ellipsoid', 'GRS80', 'WGS84', 'make_ellipsoid']


class Ellipsoid(NamedTuple):
    a: float    # semi-major axis [m]
    f: float    # flattening
    e2: float   # e^2 = 2f - f^2
    ep2: float  # e'^2 = e^2 / (1 - e^2)
    n: float    # third flattening f / (2 - f)


def make_ellipsoid(a, inverse_flattening) -> Ellipsoid:
    f = 1.0 / inverse_flattening
    e2 = 2.0 * f - f * f
    return Ellipsoid(a, f, e2, e2 / (1.0 - e2), f / (2.0 - f))


GRS80 = make_ellipsoid(6378137.0, 298.257222101)   # NAD83 (HARN, 2011)
WGS84 = make_ellipsoid(6378137.0, 298.257223563)   # WGS84 (G2139), ITRF2014 here
