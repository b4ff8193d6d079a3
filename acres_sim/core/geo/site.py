"""The site georeference: grid ENU of the tile <-> geodetic frames <-> UTM
(spec: Datum Chain, Fix and UTM Odometry, Georeference Caveats).

The chain from grid ENU (e, n, u) [m] at episode time t:

1. survey-grid feet  E_g = E0 + e / c_f,  N_g = N0 + n / c_f;  x = c_f E_g, y = c_f N_g
2. NAD83(HARN) latitude/longitude by the EPSG:2968 inverse
3. NAD83(2011) latitude/longitude = HARN + the constant shift
4. heights  H_navd = c_f Z0 + u,  N_g = n0 + dN/dE e + dN/dN n,  h_2011 = H_navd + N_g
5. ECEF on GRS80, then the inverse Helmert at the epoch -> ITRF2014
6. geodetic on WGS84: WGS84 (G2139), taken equal to ITRF2014

Frames of the output ("nad83" means two things in the spec):
``wgs84_g2139`` step 6; ``nad83_harn`` HARN latitude/longitude with the
NAD83(2011) height (the GNSS receiver's ``nad83``); ``nad83_2011`` NAD83(2011)
throughout (the INS's ``nad83``).  UTM always uses the WGS84 ellipsoid, for
NAD83(2011) coordinates too, as the vehicle's converter does.

The kernels (``*_rad``) take scalars in radians and metres and run inside other
numba code; :class:`SiteGeoreference` is the Python face, in degrees, for
scalars or numpy arrays.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.geo.ecef import ecef_to_geodetic_rad, geodetic_to_ecef_rad
from acres_sim.core.geo.ellipsoid import GRS80, WGS84
from acres_sim.core.geo.epoch import DecimalYearClock, decimal_year
from acres_sim.core.geo.helmert import HelmertParams, helmert_forward, helmert_inverse
from acres_sim.core.geo.state_plane import (US_SURVEY_FOOT_M, indiana_west_forward_rad,
                                            indiana_west_inverse_rad)
from acres_sim.core.geo.utm import central_meridian_rad, utm_forward_rad
from acres_sim.core.jit import njit

__all__ = ['FRAMES', 'SiteParams', 'SiteGeoreference', 'enu_to_geodetic_rad',
           'geodetic_to_enu_rad', 'enu_to_utm_rad', 'grid_rotation_at_rad', 'grid_rotation_rad']

# Frame codes for the kernels.
WGS84_G2139, NAD83_HARN, NAD83_2011 = 0, 1, 2
FRAMES = {'wgs84_g2139': WGS84_G2139, 'nad83_harn': NAD83_HARN, 'nad83_2011': NAD83_2011}

GRID_ROTATION_BASE_M = 10.0  # alpha from a second point this far grid-north

_CF = US_SURVEY_FOOT_M


class SiteParams(NamedTuple):
    """Everything the chain needs, as plain floats for numba."""

    origin_e_ft: float    # E0, N0, Z0: survey-grid origin of the tile [US survey ft]
    origin_n_ft: float
    origin_u_ft: float
    shift_lat_rad: float  # NAD83(HARN) -> NAD83(2011)
    shift_lon_rad: float
    geoid_n0_m: float     # geoid plane N = n0 + dn_de e + dn_dn n
    geoid_dn_de: float
    geoid_dn_dn: float
    helmert: HelmertParams


@njit(cache=True)
def geoid_undulation(e, n, p):
    """N_g of the geoid plane at grid (e, n) [m]."""
    return p.geoid_n0_m + p.geoid_dn_de * e + p.geoid_dn_dn * n


@njit(cache=True)
def enu_to_nad83_rad(e, n, u, p):
    """Steps 1-4: (phi_harn, lam_harn, phi_2011, lam_2011, h_2011) of grid (e, n, u)."""
    x = _CF * (p.origin_e_ft + e / _CF)
    y = _CF * (p.origin_n_ft + n / _CF)
    phi_harn, lam_harn = indiana_west_inverse_rad(x, y)
    h_2011 = _CF * p.origin_u_ft + u + geoid_undulation(e, n, p)
    return (phi_harn, lam_harn, phi_harn + p.shift_lat_rad, lam_harn + p.shift_lon_rad,
            h_2011)


@njit(cache=True)
def enu_to_geodetic_rad(e, n, u, epoch_year, p, frame):
    """Grid ENU -> (phi, lambda, h) in ``frame`` (a frame code) at ``epoch_year``."""
    phi_harn, lam_harn, phi, lam, h = enu_to_nad83_rad(e, n, u, p)
    if frame == NAD83_HARN:
        return phi_harn, lam_harn, h
    if frame == NAD83_2011:
        return phi, lam, h
    X, Y, Z = geodetic_to_ecef_rad(phi, lam, h, GRS80.a, GRS80.e2)
    X, Y, Z = helmert_inverse(X, Y, Z, p.helmert, epoch_year)
    return ecef_to_geodetic_rad(X, Y, Z, WGS84.a, WGS84.e2)


@njit(cache=True)
def geodetic_to_enu_rad(phi, lam, h, epoch_year, p, frame):
    """(phi, lambda, h) in ``frame`` at ``epoch_year`` -> grid ENU (the spec's EnuFromWgs84)."""
    if frame == WGS84_G2139:
        X, Y, Z = geodetic_to_ecef_rad(phi, lam, h, WGS84.a, WGS84.e2)
        X, Y, Z = helmert_forward(X, Y, Z, p.helmert, epoch_year)
        phi, lam, h = ecef_to_geodetic_rad(X, Y, Z, GRS80.a, GRS80.e2)
    if frame != NAD83_HARN:
        phi = phi - p.shift_lat_rad
        lam = lam - p.shift_lon_rad
    x, y = indiana_west_forward_rad(phi, lam)
    e = (x / _CF - p.origin_e_ft) * _CF
    n = (y / _CF - p.origin_n_ft) * _CF
    u = h - geoid_undulation(e, n, p) - _CF * p.origin_u_ft
    return e, n, u


@njit(cache=True)
def enu_to_utm_rad(e, n, u, epoch_year, p, frame, lam_c):
    """Grid ENU -> (E, N, h, gamma, k): UTM of the point's ``frame`` coordinates."""
    phi, lam, h = enu_to_geodetic_rad(e, n, u, epoch_year, p, frame)
    E, N, gamma, k = utm_forward_rad(phi, lam, lam_c)
    return E, N, h, gamma, k


@njit(cache=True)
def grid_rotation_at_rad(E, N, e, n, u, epoch_year, p, frame, lam_c):
    """alpha: the UTM azimuth of grid north at (e, n, u), whose UTM position is
    (E, N), from a second point 10 m grid-north (spec: Fix and UTM Odometry);
    computed anew at every call.  The one grid rotation of the package."""
    E2, N2, _h2, _g2, _k2 = enu_to_utm_rad(e, n + GRID_ROTATION_BASE_M, u, epoch_year, p,
                                           frame, lam_c)
    return math.atan2(E2 - E, N2 - N)


@njit(cache=True)
def grid_rotation_rad(e, n, u, epoch_year, p, frame, lam_c):
    """alpha at (e, n, u) (:func:`grid_rotation_at_rad` of its UTM position)."""
    E1, N1, _h1, _g1, _k1 = enu_to_utm_rad(e, n, u, epoch_year, p, frame, lam_c)
    return grid_rotation_at_rad(E1, N1, e, n, u, epoch_year, p, frame, lam_c)


@njit(cache=True)
def _enu_to_geodetic_many(e, n, u, epoch, p, frame, out_phi, out_lam, out_h):
    for i in range(e.shape[0]):
        out_phi[i], out_lam[i], out_h[i] = enu_to_geodetic_rad(e[i], n[i], u[i], epoch[i],
                                                               p, frame)


@njit(cache=True)
def _geodetic_to_enu_many(phi, lam, h, epoch, p, frame, out_e, out_n, out_u):
    for i in range(phi.shape[0]):
        out_e[i], out_n[i], out_u[i] = geodetic_to_enu_rad(phi[i], lam[i], h[i], epoch[i],
                                                           p, frame)


@njit(cache=True)
def _enu_to_utm_many(e, n, u, epoch, p, frame, lam_c, out_E, out_N, out_h):
    for i in range(e.shape[0]):
        out_E[i], out_N[i], out_h[i], _g, _k = enu_to_utm_rad(e[i], n[i], u[i], epoch[i],
                                                              p, frame, lam_c)


@njit(cache=True)
def _grid_rotation_many(e, n, u, epoch, p, frame, lam_c, out):
    for i in range(e.shape[0]):
        out[i] = grid_rotation_rad(e[i], n[i], u[i], epoch[i], p, frame, lam_c)


def _columns(*values):
    """Broadcast inputs to flat float64 arrays; also the common shape (None if all scalar)."""
    arrays = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in values))
    shape = arrays[0].shape
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    return flat, (None if all(np.ndim(v) == 0 for v in values) else shape)


def _shaped(shape, *arrays):
    if shape is None:
        return tuple(float(a[0]) for a in arrays)
    return tuple(a.reshape(shape) for a in arrays)


def _frame_code(frame):
    try:
        return FRAMES[frame]
    except KeyError:
        raise ValueError(f'unknown frame {frame!r}; one of {", ".join(FRAMES)}') from None


class SiteGeoreference:
    """Conversions between the tile's grid ENU, the geodetic frames and UTM.

    Degrees and metres at this face; inputs may be scalars or numpy arrays
    (broadcast together), and so are the results.  ``t_s`` is episode time:
    the epoch is ``start_utc + t_s`` as a decimal year.  The parameters of a
    configuration come from :func:`acres_sim.config.records.site_georeference_args`.
    """

    def __init__(self, params: SiteParams, start_utc):
        self.params = params
        self.start_utc = start_utc  # an aware datetime
        self._clock = DecimalYearClock(start_utc)

    def epoch(self, t_s):
        """Decimal year of episode time ``t_s`` (scalar: cached year bounds; array: numpy)."""
        if np.ndim(t_s) == 0:
            return self._clock(float(t_s))
        return decimal_year(self.start_utc, t_s)

    def enu_to_geodetic(self, e, n, u, t_s, frame):
        """Grid ENU [m] -> (lat_deg, lon_deg, h_m) in ``frame``."""
        code = _frame_code(frame)
        (e, n, u, t), shape = _columns(e, n, u, t_s)
        phi, lam, h = (np.empty_like(e) for _ in range(3))
        _enu_to_geodetic_many(e, n, u, np.atleast_1d(self.epoch(t)), self.params, code,
                              phi, lam, h)
        return _shaped(shape, np.degrees(phi), np.degrees(lam), h)

    def heights(self, e, n, u):
        """(NAVD88 height, geoid undulation) [m] at grid (e, n, u) (chain step 4)."""
        (e, n, u), shape = _columns(e, n, u)
        navd88 = _CF * self.params.origin_u_ft + u
        return _shaped(shape, navd88, geoid_undulation(e, n, self.params))

    def geodetic_to_enu(self, lat_deg, lon_deg, h_m, t_s, frame):
        """(lat_deg, lon_deg, h_m) in ``frame`` -> grid ENU [m]."""
        code = _frame_code(frame)
        (lat, lon, h, t), shape = _columns(lat_deg, lon_deg, h_m, t_s)
        e, n, u = (np.empty_like(lat) for _ in range(3))
        _geodetic_to_enu_many(np.radians(lat), np.radians(lon), h,
                              np.atleast_1d(self.epoch(t)), self.params, code, e, n, u)
        return _shaped(shape, e, n, u)

    def enu_to_utm(self, e, n, u, t_s, frame, zone):
        """Grid ENU [m] -> UTM (easting_m, northing_m, h_m) of the ``frame`` coordinates."""
        code = _frame_code(frame)
        (e, n, u, t), shape = _columns(e, n, u, t_s)
        E, N, h = (np.empty_like(e) for _ in range(3))
        _enu_to_utm_many(e, n, u, np.atleast_1d(self.epoch(t)), self.params, code,
                         central_meridian_rad(zone), E, N, h)
        return _shaped(shape, E, N, h)

    def grid_rotation_deg(self, e, n, u, t_s, frame, zone):
        """alpha [deg]: the UTM azimuth of grid north at the point."""
        code = _frame_code(frame)
        (e, n, u, t), shape = _columns(e, n, u, t_s)
        alpha = np.empty_like(e)
        _grid_rotation_many(e, n, u, np.atleast_1d(self.epoch(t)), self.params, code,
                            central_meridian_rad(zone), alpha)
        return _shaped(shape, np.degrees(alpha))[0]

    def affine_utm(self, t_s, frame, zone):
        """An APPROXIMATE grid -> UTM map: the UTM position of the origin, one
        rotation and one scale (the Core's cheap map; see :class:`AffineGridToUtm`)."""
        E1, N1, _h = self.enu_to_utm(0.0, 0.0, 0.0, t_s, frame, zone)
        E2, N2, _h = self.enu_to_utm(0.0, GRID_ROTATION_BASE_M, 0.0, t_s, frame, zone)
        alpha = math.atan2(E2 - E1, N2 - N1)
        scale = math.hypot(E2 - E1, N2 - N1) / GRID_ROTATION_BASE_M
        return AffineGridToUtm(E1, N1, alpha, scale)


class AffineGridToUtm(NamedTuple):
    """APPROXIMATE grid ENU <-> UTM map: origin, rotation alpha and scale.

    Within 0.2 mm up to 1 km and 0.7 mm up to 2 km from the origin (the
    rotation and scale of the projections drift slowly across a tile); use the
    exact chain for sensor outputs.
    """

    origin_e_m: float
    origin_n_m: float
    alpha_rad: float
    scale: float

    def to_utm(self, e, n):
        c, s = math.cos(self.alpha_rad), math.sin(self.alpha_rad)
        e, n = np.asarray(e, dtype=float), np.asarray(n, dtype=float)
        return (self.origin_e_m + self.scale * (c * e + s * n),
                self.origin_n_m + self.scale * (-s * e + c * n))

    def to_grid(self, easting_m, northing_m):
        c, s = math.cos(self.alpha_rad), math.sin(self.alpha_rad)
        de = (np.asarray(easting_m, dtype=float) - self.origin_e_m) / self.scale
        dn = (np.asarray(northing_m, dtype=float) - self.origin_n_m) / self.scale
        return c * de - s * dn, s * de + c * dn
