"""The Earth's main magnetic field over the tile, in world axes, linearised
about the tile origin for the magnetometer:

    B_world(p, t) = b0 + gradient @ p + rate * t       [T; p grid ENU m, t s]

Models.  ``'wmm'`` (the default a configuration should pick) is the World
Magnetic Model 2025 (NOAA NCEI / BGS, degree 12, 2025.0-2030.0) evaluated by
pygeomag from its coefficient file; that file is why this lives here and not
in :mod:`acres_sim.core`.  ``'dipole'`` is the AirSim paper's tilted dipole
(:func:`acres_sim.core.environment.geomagnetic.dipole_field_ned`) with the
IGRF-14 degree-1 pole and B0 at the epoch (``igrf14_dipole`` of the same
module) on the sphere of the IGRF reference radius 6371.2 km.  At ACRE the
dipole's declination is 7.9 deg east of the WMM's (+3.4 against -4.5 deg): the
paper's model is for a direction field that turns plausibly with the position,
not for headings.

Frames.  The world frame is the tile's grid ENU (EPSG:2968 axes, see
:mod:`acres_sim.core.geo.site`), whose grid north is turned from true north by
the grid convergence c(p), the true azimuth of grid north (+0.058 deg at the
ACRE origin: :func:`grid_convergence_rad`).  A model gives (X north, Y east,
Z down) at the point's WGS84 latitude, longitude and ellipsoidal height; that
is true ENU (E, N, U) = (Y, X, -Z), rotated into grid axes with the point's own
c(p):

    E_grid = E cos c - N sin c,   N_grid = E sin c + N cos c,   U_grid = U

so a declination measured from grid north is the true declination minus c.
The world's up is the local vertical at every point (a level vehicle is level
on the ground it stands on), so the gradient in world axes also carries the
turning of the local frame across the tile, about B / R_e: it is not the
traceless tensor of a potential field in one Cartesian frame.

Linearisation.  b0 at the origin (grid ENU (0, 0, 0)) at ``start_utc``; the
gradient d B_world / d p by central differences over +-250 m along grid east,
north and up (each point with its own convergence); the rate from the model
one day later (earlier, near the end of the WMM's life span): the WMM is linear
in time within its five years.  At ACRE the linear form is within 0.04 nT of the
model itself 5 km from the origin, and the rate within 0.002 nT after a year
(test_environment measures both).

Time.  The model epoch is ``start_utc + t`` as a decimal year
(:func:`acres_sim.core.geo.epoch.decimal_year`); ``start_utc`` defaults to the
site's own start time, and the site conversions use the matching episode time.
"""

import datetime
import functools
import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.environment.geomagnetic import (IGRF_REFERENCE_RADIUS_M, dipole_field_ned,
                                                   igrf14_dipole)
from acres_sim.core.geo import WGS84, geodetic_to_ecef
from acres_sim.core.geo.epoch import decimal_year
from acres_sim.core.geo.site import SiteGeoreference

__all__ = ['MODELS', 'LinearField', 'FieldSummary', 'OutsideLifeSpan', 'model_field_ned',
           'grid_convergence_rad', 'world_field', 'field_summary']

MODELS = ('wmm', 'dipole')
FRAME = 'wgs84_g2139'          # the geodetic frame the models take
GRADIENT_STEP_M = 250.0        # half the span of the central differences
RATE_STEP_S = 86400.0          # the time step of the rate
CONVERGENCE_BASE_M = 10.0      # the chord along grid north of the convergence


class LinearField(NamedTuple):
    """B_world(p, t) = b0_enu_t + gradient_t_per_m @ p + rate_t_per_s * t, in grid ENU."""

    b0_enu_t: np.ndarray            # (3,) [T] at the tile origin at t = 0
    gradient_t_per_m: np.ndarray    # (3, 3) [T/m]: [i, j] = d B_i / d p_j, grid axes
    rate_t_per_s: np.ndarray        # (3,) [T/s]


class FieldSummary(NamedTuple):
    """The field at the origin the way charts give it."""

    intensity_nt: float             # F
    inclination_deg: float          # I, positive down
    declination_deg: float          # D from TRUE north, positive east
    declination_grid_deg: float     # D from grid north (= D - c)
    grid_convergence_deg: float     # c, the true azimuth of grid north


class OutsideLifeSpan(ValueError):
    """A year the model's coefficients do not cover (``first`` to ``last``)."""

    def __init__(self, year, model, first, last):
        super().__init__(f'year {year:.4f} is outside the life span of {model} '
                         f'({first:g} to {last:g})')
        self.year, self.model, self.first, self.last = year, model, first, last


@functools.lru_cache(maxsize=1)
def _wmm():
    """The WMM-2025 (pygeomag's default coefficient file), loaded once (the
    package is imported only then: a run without a magnetometer does not load it)."""
    from pygeomag import GeoMag

    geo_mag = GeoMag()
    geo_mag.life_span      # reads the coefficient file now, once
    return geo_mag


def model_field_ned(model: str, lat_deg: float, lon_deg: float, h_m: float, year: float,
                    allow_outside_life_span: bool = False) -> np.ndarray:
    """(X north, Y east, Z down) [T] of ``model`` at WGS84 (``lat_deg``, ``lon_deg``),
    ellipsoidal height ``h_m`` and decimal ``year``.  The WMM refuses a year outside
    its life span (ValueError) unless ``allow_outside_life_span``."""
    if model == 'wmm':
        geo_mag = _wmm()
        low, high = geo_mag.life_span
        if not allow_outside_life_span and not low <= year <= high:
            raise OutsideLifeSpan(year, geo_mag.model, low, high)
        r = geo_mag.calculate(glat=float(lat_deg), glon=float(lon_deg), alt=float(h_m) / 1000.0,
                              time=float(year), allow_date_outside_lifespan=True)
        return np.array([r.x, r.y, r.z]) * 1e-9
    if model == 'dipole':
        pole_lat, pole_lon, b0 = igrf14_dipole(year)
        return np.array(dipole_field_ned(math.radians(lat_deg), math.radians(lon_deg), float(h_m),
                                         pole_lat, pole_lon, b0, IGRF_REFERENCE_RADIUS_M))
    raise ValueError(f'unknown magnetic field model {model!r}; one of {", ".join(MODELS)}')


def grid_convergence_rad(site: SiteGeoreference, e: float = 0.0, n: float = 0.0, u: float = 0.0,
                         t_s: float = 0.0) -> float:
    """c: the true (WGS84 geodetic) azimuth of grid north at grid (e, n, u), from
    the chord between the points 5 m grid-south and grid-north of it, seen in the
    point's local east/north."""
    half = 0.5 * CONVERGENCE_BASE_M
    lat, lon, h = site.enu_to_geodetic(e, np.array([n - half, n, n + half]), u, t_s, FRAME)
    x, y, z = geodetic_to_ecef(lat, lon, h, WGS84)
    d = np.array([x[2] - x[0], y[2] - y[0], z[2] - z[0]])
    phi, lam = math.radians(lat[1]), math.radians(lon[1])
    east = np.array([-math.sin(lam), math.cos(lam), 0.0])
    north = np.array([-math.sin(phi) * math.cos(lam), -math.sin(phi) * math.sin(lam),
                      math.cos(phi)])
    return math.atan2(float(d @ east), float(d @ north))


def _grid_from_ned(b_ned, c):
    """True NED -> grid ENU with convergence ``c``."""
    east, north, up = b_ned[1], b_ned[0], -b_ned[2]
    cc, sc = math.cos(c), math.sin(c)
    return np.array([east * cc - north * sc, east * sc + north * cc, up])


def _world(model, site, p, t_s, year, allow_outside_life_span=False):
    """B in grid ENU [T] at grid point ``p`` (episode time ``t_s`` for the datum
    chain, model epoch ``year``)."""
    lat, lon, h = site.enu_to_geodetic(p[0], p[1], p[2], t_s, FRAME)
    b_ned = model_field_ned(model, lat, lon, h, year, allow_outside_life_span)
    return _grid_from_ned(b_ned, grid_convergence_rad(site, p[0], p[1], p[2], t_s))


def world_field(model: str, site: SiteGeoreference,
                start_utc: datetime.datetime = None) -> LinearField:
    """The linearised field of ``model`` ('wmm' or 'dipole') on ``site`` at
    ``start_utc`` (an aware datetime; default the site's start): module docstring."""
    if model not in MODELS:
        raise ValueError(f'unknown magnetic field model {model!r}; one of {", ".join(MODELS)}')
    start = site.start_utc if start_utc is None else start_utc
    t_s = (start - site.start_utc).total_seconds()
    year = decimal_year(start, 0.0)
    origin = np.zeros(3)
    b0 = _world(model, site, origin, t_s, year)
    gradient = np.empty((3, 3))
    for j in range(3):
        step = np.zeros(3)
        step[j] = GRADIENT_STEP_M
        gradient[:, j] = (_world(model, site, step, t_s, year)
                          - _world(model, site, -step, t_s, year)) / (2.0 * GRADIENT_STEP_M)
    dt = RATE_STEP_S
    if model == 'wmm' and decimal_year(start, dt) > _wmm().life_span[1]:
        dt = -dt
    later = _world(model, site, origin, t_s + dt, decimal_year(start, dt),
                   allow_outside_life_span=True)
    return LinearField(b0, gradient, (later - b0) / dt)


def field_summary(field: LinearField, site: SiteGeoreference, t_s: float = 0.0) -> FieldSummary:
    """F [nT], I, D (true north), D (grid north) and c [deg] of ``field`` at the origin."""
    east, north, up = field.b0_enu_t
    horizontal = math.hypot(east, north)
    c = grid_convergence_rad(site, 0.0, 0.0, 0.0, t_s)
    declination_grid = math.atan2(east, north)
    return FieldSummary(float(np.linalg.norm(field.b0_enu_t)) * 1e9,
                        math.degrees(math.atan2(-up, horizontal)),
                        math.degrees(declination_grid + c), math.degrees(declination_grid),
                        math.degrees(c))
