"""95 % confidence radii of a Gaussian position error with independent east,
north and up errors of standard deviations (se, sn, su), as gps_msgs/GPSFix
asks for them (err, err_horz, err_vert: "uncertainty of measurement, 95%
confidence"):

* vertical: the two-sided 95 % bound of one Gaussian, ``1.959964 su``;
* horizontal: the radius r with P(e^2 + n^2 <= r^2) = 0.95.  For equal
  sigmas (``se == sn == s``, what the spec's error model gives: its east and
  north terms are the same) e^2 + n^2 is s^2 times a chi-square of 2 degrees
  of freedom, so ``r = s sqrt(-2 ln 0.05) = 2.447747 s``; unequal sigmas use
  s^2 = (se^2 + sn^2) / 2, which is exact only for the equal case;
* spherical: the radius r with P(e^2 + n^2 + u^2 <= r^2) = 0.95, horizontal
  sigmas taken as above.  With W = e^2 + n^2 (s^2 times a chi-square of 2
  degrees of freedom) and u = su z, P(c) = P(|u| <= sqrt(c)) - the integral
  over |u| <= sqrt(c) of the density of u times exp(-(c - u^2) / (2 s^2)):

      P(c) = erf(sqrt(c) / (sqrt(2) su)) - exp(-c / (2 s^2)) / (sqrt(2 pi) su) I,
      I = integral_{-sqrt(c)}^{sqrt(c)} exp(k u^2) du,   k = 1 / (2 s^2) - 1 / (2 su^2).

  For su <= s (k <= 0) I is closed: sqrt(pi / -k) erf(sqrt(-k c)) (2 sqrt(c) at
  k = 0).  For su > s it is taken with Simpson's rule in u = sqrt(c) sin(t),
  exp(-c / (2 s^2)) folded in (the integrand is then
  exp(-c cos^2 t / (2 s^2) - c sin^2 t / (2 su^2)) cos t, at most 1), with 64
  intervals per unit of su / s (its peak at t = pi/2 narrows as s / su).
  P(r^2) = 0.95 is solved by the Illinois (modified regula falsi) method between
  the 1-D bound of the larger sigma and 2.8 times it (above the 3-D radius of
  equal sigmas, 2.7955).

numba kernels (one GNSS epoch's root takes a few thousand operations).
"""

import functools
import math

from acres_sim.core.jit import njit

__all__ = ['CONFIDENCE', 'horizontal_radius_95', 'spherical_radius_95', 'vertical_bound_95']

CONFIDENCE = 0.95
_Z95 = 1.959963984540054          # two-sided 95 % quantile of the standard normal
_R95_2D = math.sqrt(-2.0 * math.log(1.0 - CONFIDENCE))
_SIMPSON_INTERVALS = 64           # even; per unit of su / s
_SIMPSON_MAX = 4096
_ITERATIONS = 60
_TOLERANCE = 1e-12                 # relative, on the radius


def vertical_bound_95(su: float) -> float:
    """The 95 % bound of the vertical error [m]."""
    return _Z95 * float(su)


def _horizontal_sigma(se, sn):
    return math.sqrt(0.5 * (float(se) ** 2 + float(sn) ** 2))


def horizontal_radius_95(se: float, sn: float) -> float:
    """The 95 % radius of the horizontal error [m] (see the module docstring)."""
    return _R95_2D * _horizontal_sigma(se, sn)


@njit(cache=True)
def _probability_inside(c, s, su):
    """P(e^2 + n^2 + u^2 <= c) for horizontal sigma s and vertical su (both > 0)."""
    root = math.sqrt(c)
    outside_vertical = math.erf(root / (math.sqrt(2.0) * su))
    k = 0.5 / (s * s) - 0.5 / (su * su)
    if k <= 0.0:             # closed form
        integral = 2.0 * root if k == 0.0 else \
            math.sqrt(math.pi / -k) * math.erf(math.sqrt(-k * c))
        return outside_vertical - math.exp(-c / (2.0 * s * s)) / (
            math.sqrt(2.0 * math.pi) * su) * integral
    n = 2 * (min(_SIMPSON_MAX, _SIMPSON_INTERVALS * int(math.ceil(su / s))) // 2)
    h = 0.5 * math.pi / n
    total = 0.0
    for i in range(n + 1):
        t = i * h
        sin_t, cos_t = math.sin(t), math.cos(t)
        value = math.exp(-c * cos_t * cos_t / (2.0 * s * s)
                         - c * sin_t * sin_t / (2.0 * su * su)) * cos_t
        total += (1.0 if i == 0 or i == n else (4.0 if i % 2 else 2.0)) * value
    scaled = 2.0 * root * total * h / 3.0          # exp(-c / (2 s^2)) I
    return outside_vertical - scaled / (math.sqrt(2.0 * math.pi) * su)


@functools.lru_cache(maxsize=4096)
def spherical_radius_95(se: float, sn: float, su: float) -> float:
    """The 95 % radius of the 3-D error [m] (see the module docstring).
    Memoised: the sigmas of a receiver repeat while its state holds (45 % of
    the epochs of the 600 s demo run), and each new root takes some 30 us."""
    s, su = _horizontal_sigma(se, sn), float(su)
    if s == 0.0 or su == 0.0:            # a degenerate error: one or two dimensions
        return horizontal_radius_95(se, sn) if su == 0.0 else vertical_bound_95(su)
    return _radius_95(s, su)


@njit(cache=True)
def _radius_95(s, su):
    """P(r^2) = 0.95 solved for r (both sigmas > 0; see the module docstring)."""
    largest = max(s, su)
    a, b = _Z95 * largest, 2.8 * largest       # 1-D and 3-D (equal sigmas: 2.7955) bounds
    fa = _probability_inside(a * a, s, su) - CONFIDENCE
    fb = _probability_inside(b * b, s, su) - CONFIDENCE
    side = 0
    r = a
    for _ in range(_ITERATIONS):
        r = (a * fb - b * fa) / (fb - fa)
        fr = _probability_inside(r * r, s, su) - CONFIDENCE
        if fr * fb > 0.0:              # r replaces b
            b, fb = r, fr
            if side == -1:
                fa *= 0.5
            side = -1
        else:                          # r replaces a
            a, fa = r, fr
            if side == 1:
                fb *= 0.5
            side = 1
        if abs(b - a) <= _TOLERANCE * largest or fr == 0.0:
            break
    return r
