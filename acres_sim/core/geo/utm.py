"""UTM, northern hemisphere, by Krüger's series to sixth order in the third
flattening n (Karney 2011), on WGS84 (spec: UTM Projection).

Radians and metres.  Zone z has the central meridian -183 deg + 6 deg z.  The
forward projection also gives the meridian convergence gamma (grid north minus
true north, positive east of the central meridian) and the point scale k.  The
inverse finds tau = tan(phi) from tau' by Newton's method: at most 6 steps,
stopping early once a step is below 1e-14.
"""

import math

from acres_sim.core.geo.ellipsoid import WGS84
from acres_sim.core.jit import njit

__all__ = ['K0', 'FALSE_EASTING', 'central_meridian_rad', 'utm_forward_rad', 'utm_inverse_rad',
           'zone_area_deg']

K0 = 0.9996
FALSE_EASTING = 500000.0

_a = WGS84.a
_f = WGS84.f
_n = WGS84.n
_e2 = WGS84.e2
_e = math.sqrt(_e2)
_A = _a / (1.0 + _n) * (1.0 + _n**2 / 4.0 + _n**4 / 64.0 + _n**6 / 256.0)
_KA = K0 * _A


def _series(n):
    alpha = (
        n / 2 - 2 * n**2 / 3 + 5 * n**3 / 16 + 41 * n**4 / 180 - 127 * n**5 / 288
        + 7891 * n**6 / 37800,
        13 * n**2 / 48 - 3 * n**3 / 5 + 557 * n**4 / 1440 + 281 * n**5 / 630
        - 1983433 * n**6 / 1935360,
        61 * n**3 / 240 - 103 * n**4 / 140 + 15061 * n**5 / 26880 + 167603 * n**6 / 181440,
        49561 * n**4 / 161280 - 179 * n**5 / 168 + 6601661 * n**6 / 7257600,
        34729 * n**5 / 80640 - 3418889 * n**6 / 1995840,
        212378941 * n**6 / 319334400,
    )
    beta = (
        n / 2 - 2 * n**2 / 3 + 37 * n**3 / 96 - n**4 / 360 - 81 * n**5 / 512
        + 96199 * n**6 / 604800,
        n**2 / 48 + n**3 / 15 - 437 * n**4 / 1440 + 46 * n**5 / 105 - 1118711 * n**6 / 3870720,
        17 * n**3 / 480 - 37 * n**4 / 840 - 209 * n**5 / 4480 + 5569 * n**6 / 90720,
        4397 * n**4 / 161280 - 11 * n**5 / 504 - 830251 * n**6 / 7257600,
        4583 * n**5 / 161280 - 108847 * n**6 / 3991680,
        20648693 * n**6 / 638668800,
    )
    return alpha, beta


_ALPHA, _BETA = _series(_n)


def central_meridian_rad(zone):
    """lambda_c of UTM ``zone`` (1..60) [rad]."""
    return math.radians(-183.0 + 6.0 * zone)


def zone_area_deg(zone):
    """The area of northern UTM ``zone`` (west, south, east, north) [deg]: 6 deg of
    longitude around its central meridian, from the equator to 84 deg north."""
    return (-186.0 + 6.0 * zone, 0.0, -180.0 + 6.0 * zone, 84.0)


@njit(cache=True)
def _tau_prime(tau):
    """tau' (conformal latitude's tangent) of tau = tan(phi)."""
    sigma = math.sinh(_e * math.atanh(_e * tau / math.sqrt(1.0 + tau * tau)))
    return tau * math.sqrt(1.0 + sigma * sigma) - sigma * math.sqrt(1.0 + tau * tau)


@njit(cache=True)
def utm_forward_rad(phi, lam, lam_c):
    """(phi, lambda) -> (E, N, gamma, k) in the zone with central meridian ``lam_c``."""
    dlam = lam - lam_c
    tau = math.tan(phi)
    taup = _tau_prime(tau)
    cl = math.cos(dlam)
    xip = math.atan2(taup, cl)
    etap = math.asinh(math.sin(dlam) / math.sqrt(taup * taup + cl * cl))
    xi = xip
    eta = etap
    p = 1.0
    q = 0.0
    for j in range(1, 7):
        a = _ALPHA[j - 1]
        s2 = math.sin(2 * j * xip)
        c2 = math.cos(2 * j * xip)
        ch = math.cosh(2 * j * etap)
        sh = math.sinh(2 * j * etap)
        xi += a * s2 * ch
        eta += a * c2 * sh
        p += 2 * j * a * c2 * ch
        q += 2 * j * a * s2 * sh
    E = FALSE_EASTING + _KA * eta
    N = _KA * xi
    gamma = (math.atan(taup / math.sqrt(1.0 + taup * taup) * math.tan(dlam))
             + math.atan2(q, p))
    sphi = math.sin(phi)
    k = (_KA / _a * math.sqrt(p * p + q * q)
         * math.sqrt(1.0 - _e2 * sphi * sphi) * math.sqrt(1.0 + tau * tau)
         / math.sqrt(taup * taup + cl * cl))
    return E, N, gamma, k


@njit(cache=True)
def utm_inverse_rad(E, N, lam_c):
    """(E, N) in the zone with central meridian ``lam_c`` -> (phi, lambda)."""
    xi = N / _KA
    eta = (E - FALSE_EASTING) / _KA
    xip = xi
    etap = eta
    for j in range(1, 7):
        b = _BETA[j - 1]
        xip -= b * math.sin(2 * j * xi) * math.cosh(2 * j * eta)
        etap -= b * math.cos(2 * j * xi) * math.sinh(2 * j * eta)
    she = math.sinh(etap)
    cxi = math.cos(xip)
    taup = math.sin(xip) / math.sqrt(she * she + cxi * cxi)
    lam = math.atan2(she, cxi)
    tau = taup
    for _ in range(6):
        taupi = _tau_prime(tau)
        step = ((taup - taupi) / math.sqrt(1.0 + taupi * taupi)
                * (1.0 + (1.0 - _e2) * tau * tau) / ((1.0 - _e2) * math.sqrt(1.0 + tau * tau)))
        tau += step
        if abs(step) < 1e-14:
            break
    return math.atan(tau), lam + lam_c
