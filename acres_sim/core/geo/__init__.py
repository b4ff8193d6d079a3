"""Geodesy of the tile (spec: Datum Chain, UTM Projection, Fix and UTM Odometry).

Units: radians and metres inside (the ``*_rad`` numba kernels, for use in other
kernels); degrees, metres and decimal years at the public edges below, which
take scalars or numpy arrays.  Frames: grid ENU of the tile (EPSG:2968 axes,
not a tangent frame), NAD83(HARN), NAD83(2011), ITRF2014 = WGS84 (G2139), UTM.
"""

import numpy as np

from acres_sim.core.geo.ecef import ecef_to_geodetic_rad, geodetic_to_ecef_rad
from acres_sim.core.geo.ellipsoid import GRS80, WGS84, Ellipsoid
from acres_sim.core.geo.epoch import decimal_year
from acres_sim.core.geo.helmert import HelmertParams, helmert_forward, helmert_inverse
from acres_sim.core.geo.site import FRAMES, AffineGridToUtm, SiteGeoreference, SiteParams
from acres_sim.core.geo.state_plane import (AREA_OF_USE_DEG, US_SURVEY_FOOT_M,
                                            indiana_west_forward_rad, indiana_west_inverse_rad)
from acres_sim.core.geo.utm import (central_meridian_rad, utm_forward_rad, utm_inverse_rad,
                                    zone_area_deg)

__all__ = [
    'AREA_OF_USE_DEG', 'AffineGridToUtm', 'Ellipsoid', 'FRAMES', 'GRS80', 'HelmertParams',
    'SiteGeoreference', 'SiteParams', 'US_SURVEY_FOOT_M', 'WGS84', 'decimal_year',
    'ecef_to_geodetic',
    'geodetic_to_ecef', 'helmert_itrf2014_to_nad83_2011', 'helmert_nad83_2011_to_itrf2014',
    'indiana_west_forward', 'indiana_west_inverse', 'utm_forward', 'utm_inverse',
    'zone_area_deg',
]

_vector = np.vectorize  # thin array faces over the scalar kernels (not for hot loops)


def _apply(kernel, *args, n_out, degrees_in=(), degrees_out=()):
    """Run a scalar kernel on scalars or broadcast arrays; degrees converted at the edge."""
    values = [np.radians(a) if i in degrees_in else np.asarray(a, dtype=np.float64)
              for i, a in enumerate(args)]
    results = _vector(kernel, otypes=[np.float64] * n_out)(*values)
    results = [np.degrees(r) if i in degrees_out else r for i, r in enumerate(results)]
    if all(np.ndim(a) == 0 for a in args):
        return tuple(float(r) for r in results)
    return tuple(results)


def utm_forward(lat_deg, lon_deg, zone):
    """(lat, lon) [deg] -> (easting_m, northing_m, convergence_rad, scale) in UTM ``zone``."""
    return _apply(lambda phi, lam: utm_forward_rad(phi, lam, central_meridian_rad(zone)),
                  lat_deg, lon_deg, n_out=4, degrees_in=(0, 1))


def utm_inverse(easting_m, northing_m, zone):
    """(easting_m, northing_m) in UTM ``zone`` -> (lat_deg, lon_deg)."""
    return _apply(lambda e, n: utm_inverse_rad(e, n, central_meridian_rad(zone)),
                  easting_m, northing_m, n_out=2, degrees_out=(0, 1))


def indiana_west_inverse(x_m, y_m):
    """EPSG:2968 grid (x, y) [m] -> NAD83(HARN) (lat_deg, lon_deg)."""
    return _apply(indiana_west_inverse_rad, x_m, y_m, n_out=2, degrees_out=(0, 1))


def indiana_west_forward(lat_deg, lon_deg):
    """NAD83(HARN) (lat_deg, lon_deg) -> EPSG:2968 grid (x, y) [m]."""
    return _apply(indiana_west_forward_rad, lat_deg, lon_deg, n_out=2, degrees_in=(0, 1))


def geodetic_to_ecef(lat_deg, lon_deg, h_m, ellipsoid: Ellipsoid):
    """(lat_deg, lon_deg, h_m) -> ECEF (x, y, z) [m] on ``ellipsoid``."""
    return _apply(lambda phi, lam, h: geodetic_to_ecef_rad(phi, lam, h, ellipsoid.a,
                                                          ellipsoid.e2),
                  lat_deg, lon_deg, h_m, n_out=3, degrees_in=(0, 1))


def ecef_to_geodetic(x, y, z, ellipsoid: Ellipsoid):
    """ECEF (x, y, z) [m] -> (lat_deg, lon_deg, h_m) on ``ellipsoid``."""
    return _apply(lambda a, b, c: ecef_to_geodetic_rad(a, b, c, ellipsoid.a, ellipsoid.e2),
                  x, y, z, n_out=3, degrees_out=(0, 1))


def helmert_itrf2014_to_nad83_2011(x, y, z, epoch_year, params: HelmertParams):
    """ITRF2014 ECEF [m] -> NAD83(2011) ECEF [m] at ``epoch_year``."""
    return _apply(lambda a, b, c, t: helmert_forward(a, b, c, params, t),
                  x, y, z, epoch_year, n_out=3)


def helmert_nad83_2011_to_itrf2014(x, y, z, epoch_year, params: HelmertParams):
    """NAD83(2011) ECEF [m] -> ITRF2014 ECEF [m] at ``epoch_year``."""
    return _apply(lambda a, b, c, t: helmert_inverse(a, b, c, params, t),
                  x, y, z, epoch_year, n_out=3)
