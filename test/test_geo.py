"""The site georeference against the spec's own figures, and its internal
consistency (round trips, array/scalar faces, use inside numba kernels).
pyproj cross-checks are in test_geo_pyproj.py."""

import datetime
import math

from numba import njit
import numpy as np
import pytest

from acres_sim.config import ConfigError, load_config
from acres_sim.core.geo import FRAMES, decimal_year, utm_forward, utm_inverse
from acres_sim.core.geo.site import enu_to_geodetic_rad, grid_rotation_rad
from acres_sim.core.geo.utm import central_meridian_rad
from acres_sim.pipeline.models import site_georeference


@pytest.fixture(scope='module')
def site():
    return site_georeference(load_config(rig=None))


def test_spec_table_at_the_tile_origin(site):
    """spec: UTM Projection, the table of values at the origin (NAD83(2011), zone 16)."""
    lat, lon, _h = site.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, 'nad83_2011')
    assert round(lat, 7) == 40.4715765 and round(lon, 7) == -86.9943737
    easting, northing, convergence, scale = utm_forward(lat, lon, 16)
    assert round(easting, 3) == 500476.935 and round(northing, 3) == 4480099.755
    assert round(math.degrees(convergence), 5) == 0.00365
    assert round(scale, 8) == 0.99960000
    assert round(site.grid_rotation_deg(0.0, 0.0, 0.0, 0.0, 'nad83_2011', 16), 4) == 0.0541
    assert site.enu_to_utm(0.0, 0.0, 0.0, 0.0, 'nad83_2011', 16)[:2] == (easting, northing)


def test_grid_north_differs_from_true_north_by_the_spec_figure(site):
    """spec: Limitations, grid north is 0.058 deg from true north at the origin:
    the grid rotation alpha plus the UTM convergence gamma."""
    lat, lon, _h = site.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, 'nad83_2011')
    gamma = math.degrees(utm_forward(lat, lon, 16)[2])
    alpha = site.grid_rotation_deg(0.0, 0.0, 0.0, 0.0, 'nad83_2011', 16)
    assert round(alpha + gamma, 3) == 0.058


@pytest.mark.parametrize('frame', sorted(FRAMES))
def test_round_trips_stay_within_a_tenth_of_a_millimetre(site, frame):
    rng = np.random.default_rng(7)
    e, n = rng.uniform(-2000.0, 2000.0, (2, 200))
    u = rng.uniform(-20.0, 50.0, 200)
    t = rng.uniform(0.0, 3 * 86400.0, 200)
    back = site.geodetic_to_enu(*site.enu_to_geodetic(e, n, u, t, frame), t, frame)
    error = np.max(np.abs(np.stack(back) - np.stack([e, n, u])))
    assert error < 1e-4


def test_utm_inverse_undoes_forward_across_the_zone():
    lat, lon = np.meshgrid(np.linspace(0.0, 84.0, 29), np.linspace(-90.0, -84.0, 13))
    easting, northing, _gamma, _k = utm_forward(lat, lon, 16)
    lat2, lon2 = utm_inverse(easting, northing, 16)
    assert np.max(np.abs(lat2 - lat)) < 1e-11 and np.max(np.abs(lon2 - lon)) < 1e-11


def test_scalars_give_floats_and_arrays_keep_their_shape(site):
    assert all(isinstance(v, float) for v in site.enu_to_geodetic(1.0, 2.0, 3.0, 0.0,
                                                                  'wgs84_g2139'))
    lat, lon, h = site.enu_to_geodetic(np.zeros((2, 3)), 5.0, 0.0, 10.0, 'wgs84_g2139')
    assert lat.shape == lon.shape == h.shape == (2, 3)
    scalar = site.enu_to_geodetic(0.0, 5.0, 0.0, 10.0, 'wgs84_g2139')
    assert lat[1, 2] == scalar[0] and h[0, 0] == scalar[2]


def test_unknown_frame_is_refused(site):
    with pytest.raises(ValueError, match="unknown frame 'nad83'"):
        site.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, 'nad83')


def test_the_wgs84_output_moves_with_the_epoch_and_nad83_does_not(site):
    year = 365.25 * 86400.0
    wgs = [site.enu_to_geodetic(0.0, 0.0, 0.0, t, 'wgs84_g2139') for t in (0.0, 10 * year)]
    nad = [site.enu_to_geodetic(0.0, 0.0, 0.0, t, 'nad83_2011') for t in (0.0, 10 * year)]
    assert nad[0] == nad[1]
    # the North American plate drifts ~2 cm/yr in ITRF: 10 years move the WGS84 fix
    drift_m = math.hypot((wgs[1][0] - wgs[0][0]) * 111_000.0,
                         (wgs[1][1] - wgs[0][1]) * 84_700.0)
    assert 0.1 < drift_m < 0.3


def test_affine_map_is_close_near_the_origin_and_named_approximate(site):
    affine = site.affine_utm(0.0, 'nad83_2011', 16)
    assert 'APPROXIMATE' in type(affine).__doc__
    e, n = np.meshgrid(np.linspace(-500.0, 500.0, 11), np.linspace(-500.0, 500.0, 11))
    exact_e, exact_n, _h = site.enu_to_utm(e, n, 0.0, 0.0, 'nad83_2011', 16)
    approx_e, approx_n = affine.to_utm(e, n)
    assert np.max(np.hypot(approx_e - exact_e, approx_n - exact_n)) < 1e-4  # 0.044 mm measured
    back_e, back_n = affine.to_grid(approx_e, approx_n)
    assert np.max(np.abs(back_e - e)) < 1e-8 and np.max(np.abs(back_n - n)) < 1e-8


@pytest.mark.parametrize('start, t, expected', [
    ('2026-09-23T15:00:00Z', 0.0, 2026 + (265 + 15 / 24) / 365),
    ('2024-01-01T00:00:00Z', 183 * 86400.0, 2024.5),                 # leap year: 366 days
    ('2026-12-31T23:00:00Z', 7200.0, 2027 + 3600 / (365 * 86400)),   # crosses new year
    ('2026-09-23T17:00:00+02:00', 0.0, 2026 + (265 + 15 / 24) / 365),
])
def test_decimal_year_uses_the_true_year_length(start, t, expected):
    stamp = datetime.datetime.fromisoformat(start)
    assert decimal_year(stamp, t) == pytest.approx(expected, abs=1e-12)


def test_kernels_run_inside_other_numba_code(site):
    @njit
    def origin_and_alpha(p, epoch, lam_c):
        phi, lam, _h = enu_to_geodetic_rad(0.0, 0.0, 0.0, epoch, p, FRAMES_2011)
        return phi, lam, grid_rotation_rad(0.0, 0.0, 0.0, epoch, p, FRAMES_2011, lam_c)

    FRAMES_2011 = FRAMES['nad83_2011']
    phi, lam, alpha = origin_and_alpha(site.params, site.epoch(0.0), central_meridian_rad(16))
    lat, lon, _h = site.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, 'nad83_2011')
    assert (math.degrees(phi), math.degrees(lam)) == (lat, lon)
    assert math.degrees(alpha) == site.grid_rotation_deg(0.0, 0.0, 0.0, 0.0, 'nad83_2011', 16)


def test_config_changes_reach_the_georeference():
    moved = site_georeference(load_config(overrides={
        'site.origin_source_ft': [2977500.0 + 3937.0 / 1.2, 1902500.0, 705.0]}))
    base = site_georeference(load_config(rig=None))
    # moving the origin 1000 m east equals asking the default site for e = 1000 m
    # (in latitude and longitude; the geoid plane is tied to the grid, not the origin)
    assert moved.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, 'nad83_harn')[:2] == pytest.approx(
        base.enu_to_geodetic(1000.0, 0.0, 0.0, 0.0, 'nad83_harn')[:2], abs=1e-12)
    with pytest.raises(ConfigError):
        load_config(overrides={'gnss.datum.start_utc': 'yesterday'})
