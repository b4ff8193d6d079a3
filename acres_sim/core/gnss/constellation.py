"""The synthetic satellite constellation and its lines of sight (spec: GNSS
Receiver, "Constellation").

Every satellite flies a circular orbit of radius ``a`` and inclination ``i_o``;
the orbit is fixed by its node ``Omega`` and by ``u0``, the argument of
latitude at episode time ``t = 0``.  The orbits are drawn once per run from the
``gnss_constellation`` PCG32 stream (never offset per agent, so every vehicle
sees the same sky), which makes the sky a function of the seed alone.

Draw order (85 uniforms for the three systems; settled by the lead where the
spec's prose leaves the interleaving open):

1. ``t0 = 86400 U`` -- a time offset that turns the Earth under the orbits;
2. for GPS, then Galileo, then GLONASS:
   ``Omega0 = 2 pi U``, ``u00 = 2 pi U``, then one uniform per satellite,
   planes ``i`` outer and slots ``j`` inner, for the jitter of ``u0``.

All three systems are always drawn and built: a receiver that has a system
switched off just ignores its satellites, so switching systems never moves
the draws (spec: Seeds and Determinism).

Satellite ``k`` of the arrays is system-major, then plane, then slot, i.e.
exactly the draw order.  Units: metres, seconds, radians.

Lines of sight: the orbit position in an inertial frame is turned into ECEF
by the Earth angle ``theta = omega_E (t + t0)``, the site's ECEF position is
subtracted and the difference is rotated into the local east/north/up axes of
the site and normalised.  The site is the tile origin on WGS84 (G2139) at
``t = 0``; :func:`site_frame` computes it once.  The spec applies the result
directly in the tile's grid ENU axes (the ~0.06 deg between grid north and
true north is ignored on purpose, spec: Scope and Assumptions).
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.geo.ecef import geodetic_to_ecef_rad
from acres_sim.core.geo.ellipsoid import WGS84
from acres_sim.core.jit import njit

__all__ = [
    'Constellation', 'EARTH_ROTATION_RADPS', 'GALILEO', 'GLONASS', 'GM_EARTH', 'GPS',
    'N_SATELLITES', 'N_UNIFORMS', 'SYSTEMS', 'SYSTEM_NAMES', 'SiteFrame', 'SystemSpec',
    'build_constellation', 'elevations', 'satellite_ecef', 'satellite_los_enu', 'site_frame',
]

GM_EARTH = 3.986004418e14              # mu [m^3/s^2] (spec: Constellation)
EARTH_ROTATION_RADPS = 7.2921151467e-5  # omega_E [rad/s] (spec: Constellation)
DAY_S = 86400.0                         # range of the time offset t0 [s]
U0_JITTER_RAD = 0.2                     # full width of the per-satellite u0 jitter [rad]


class SystemSpec(NamedTuple):
    """One satellite system (spec: Constellation, the table of systems)."""

    name: str
    planes: int            # n_p
    per_plane: int         # n_s
    radius_m: float        # a
    inclination_deg: float  # i_o


# System codes, also the index into a receiver's on/off array.
GPS, GALILEO, GLONASS = 0, 1, 2
SYSTEMS = (
    SystemSpec('gps', 6, 5, 26_559_700.0, 55.0),
    SystemSpec('galileo', 3, 8, 29_599_800.0, 56.0),
    SystemSpec('glonass', 3, 8, 25_508_000.0, 64.8),
)
SYSTEM_NAMES = tuple(s.name for s in SYSTEMS)
N_SATELLITES = sum(s.planes * s.per_plane for s in SYSTEMS)   # 78
N_UNIFORMS = 1 + sum(2 + s.planes * s.per_plane for s in SYSTEMS)  # 85


class Constellation(NamedTuple):
    """All satellites as parallel arrays of length :data:`N_SATELLITES`.

    numba accepts this tuple as a kernel argument.
    """

    t0_s: float            # time offset of the Earth angle [s]
    system: np.ndarray     # int64, system code (GPS 0, GALILEO 1, GLONASS 2)
    plane: np.ndarray      # int64, plane index i within the system
    slot: np.ndarray       # int64, slot index j within the plane
    radius_m: np.ndarray   # a [m]
    inclination_rad: np.ndarray  # i_o [rad]
    node_rad: np.ndarray   # Omega [rad]
    u0_rad: np.ndarray     # argument of latitude at t = 0 [rad]
    mean_motion_radps: np.ndarray  # n = sqrt(mu / a^3) [rad/s]


class SiteFrame(NamedTuple):
    """ECEF position of the tile origin and the trigonometry of its ENU axes."""

    x_m: float
    y_m: float
    z_m: float
    sin_lat: float
    cos_lat: float
    sin_lon: float
    cos_lon: float

    @classmethod
    def from_geodetic(cls, lat_rad, lon_rad, h_m) -> 'SiteFrame':
        """The frame of a WGS84 point (latitude, longitude [rad], height [m])."""
        x, y, z = geodetic_to_ecef_rad(lat_rad, lon_rad, h_m, WGS84.a, WGS84.e2)
        return cls(float(x), float(y), float(z), math.sin(lat_rad), math.cos(lat_rad),
                   math.sin(lon_rad), math.cos(lon_rad))


def site_frame(georef) -> SiteFrame:
    """The site of the lines of sight: the tile origin (grid ENU 0, 0, 0) in
    WGS84 (G2139) at ``t = 0``.  ``georef`` is a
    :class:`acres_sim.core.geo.SiteGeoreference`.
    """
    lat, lon, h = georef.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, 'wgs84_g2139')
    return SiteFrame.from_geodetic(math.radians(lat), math.radians(lon), h)


def build_constellation(rng) -> Constellation:
    """Draw the whole constellation from ``rng`` (a :class:`acres_sim.core.rng.Pcg32`
    on the ``gnss_constellation`` stream); takes exactly :data:`N_UNIFORMS` uniforms."""
    t0 = DAY_S * rng.uniform()
    cols = {name: [] for name in Constellation._fields[1:]}
    for code, spec in enumerate(SYSTEMS):
        node0 = 2.0 * math.pi * rng.uniform()
        u00 = 2.0 * math.pi * rng.uniform()
        n_p, n_s = spec.planes, spec.per_plane
        a = spec.radius_m
        for i in range(n_p):
            for j in range(n_s):
                jitter = U0_JITTER_RAD * (rng.uniform() - 0.5)
                cols['system'].append(code)
                cols['plane'].append(i)
                cols['slot'].append(j)
                cols['radius_m'].append(a)
                cols['inclination_rad'].append(math.radians(spec.inclination_deg))
                cols['node_rad'].append(node0 + 2.0 * math.pi * i / n_p)
                cols['u0_rad'].append(u00 + 2.0 * math.pi * j / n_s
                                      + 2.0 * math.pi * i / (n_p * n_s) + jitter)
                cols['mean_motion_radps'].append(math.sqrt(GM_EARTH / (a * a * a)))
    ints = ('system', 'plane', 'slot')
    return Constellation(t0, **{k: np.array(v, dtype=np.int64 if k in ints else np.float64)
                                for k, v in cols.items()})


@njit(cache=True)
def satellite_ecef(t, c, k):
    """ECEF position [m] of satellite ``k`` of constellation ``c`` at episode time ``t`` [s]."""
    a = c.radius_m[k]
    u = c.u0_rad[k] + c.mean_motion_radps[k] * t
    node = c.node_rad[k]
    cos_u, sin_u = math.cos(u), math.sin(u)
    cos_o, sin_o = math.cos(node), math.sin(node)
    cos_i, sin_i = math.cos(c.inclination_rad[k]), math.sin(c.inclination_rad[k])
    xi = a * (cos_o * cos_u - sin_o * sin_u * cos_i)
    yi = a * (sin_o * cos_u + cos_o * sin_u * cos_i)
    zi = a * sin_u * sin_i
    theta = EARTH_ROTATION_RADPS * (t + c.t0_s)
    cos_t, sin_t = math.cos(theta), math.sin(theta)
    return xi * cos_t + yi * sin_t, -xi * sin_t + yi * cos_t, zi


@njit(cache=True)
def satellite_los_enu(t, c, site, out):
    """Unit lines of sight from the site to every satellite at episode time ``t`` [s].

    ``out`` is a float64 array (N_SATELLITES, 3) receiving (l_e, l_n, l_u) per row.
    """
    for k in range(c.radius_m.shape[0]):
        x, y, z = satellite_ecef(t, c, k)
        dx = x - site.x_m
        dy = y - site.y_m
        dz = z - site.z_m
        e = -site.sin_lon * dx + site.cos_lon * dy
        n = (-site.sin_lat * site.cos_lon * dx - site.sin_lat * site.sin_lon * dy
             + site.cos_lat * dz)
        up = site.cos_lat * site.cos_lon * dx + site.cos_lat * site.sin_lon * dy + site.sin_lat * dz
        inv = 1.0 / math.sqrt(e * e + n * n + up * up)
        out[k, 0] = e * inv
        out[k, 1] = n * inv
        out[k, 2] = up * inv


@njit(cache=True)
def elevations(los, out):
    """Elevation angle asin(l_u) [rad] of every line of sight in ``los`` into ``out``."""
    for k in range(los.shape[0]):
        out[k] = math.asin(min(1.0, max(-1.0, los[k, 2])))
