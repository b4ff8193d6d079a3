"""Geodetic <-> Earth-centred, Earth-fixed coordinates (spec: Datum Chain, "ECEF").

Radians and metres; the ellipsoid is given by its ``a`` and ``e2``.  The inverse
is the spec's fixed-point iteration on the latitude: start at
atan2(Z, p (1 - e^2)) and iterate 8 times.
"""

import math

from acres_sim.core.jit import njit

__all__ = ['geodetic_to_ecef_rad', 'ecef_to_geodetic_rad', 'ECEF_ITERATIONS']

ECEF_ITERATIONS = 8


@njit(cache=True)
def geodetic_to_ecef_rad(phi, lam, h, a, e2):
    """(phi, lambda, h) -> (X, Y, Z) on the ellipsoid (a, e2)."""
    s = math.sin(phi)
    c = math.cos(phi)
    Ne = a / math.sqrt(1.0 - e2 * s * s)
    return ((Ne + h) * c * math.cos(lam), (Ne + h) * c * math.sin(lam),
            (Ne * (1.0 - e2) + h) * s)


@njit(cache=True)
def ecef_to_geodetic_rad(X, Y, Z, a, e2):
    """(X, Y, Z) -> (phi, lambda, h) on the ellipsoid (a, e2), 8 iterations.

    On the polar axis (p = 0) the iteration would divide by zero; there the
    answer is exact: a pole, at height |Z| - b.
    """
    p = math.sqrt(X * X + Y * Y)
    if p == 0.0:
        return math.copysign(0.5 * math.pi, Z), 0.0, abs(Z) - a * math.sqrt(1.0 - e2)
    phi = math.atan2(Z, p * (1.0 - e2))
    h = 0.0
    for _ in range(ECEF_ITERATIONS):
        s = math.sin(phi)
        Ne = a / math.sqrt(1.0 - e2 * s * s)
        h = p / math.cos(phi) - Ne
        phi = math.atan2(Z, p * (1.0 - e2 * Ne / (Ne + h)))
    return phi, math.atan2(Y, X), h
