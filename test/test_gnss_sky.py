"""The constellation, the sky view (ray tests, classes, DOP, multipath) and the
scene files (spec: GNSS Receiver -- Constellation, Sky Obstruction, Dilution of
Precision, Multipath Index; Limitations).

Expectations come from outside the code under test: the published orbit
periods of the three systems, the spherical-cap share of an orbit shell that
is above a mask, hand geometry of rays, boxes, cylinders and spheres,
``numpy.linalg.inv`` for DOP, and the spec's formulas written out again here.
"""

import json
import math

from hypothesis import HealthCheck, given, settings, strategies as st
import numpy as np
import pytest
import yaml

from acres_sim.config import ConfigError, load_config
from acres_sim.config.scene import default_scene, load_scene, scene_from_tree
from acres_sim.core.gnss.constellation import (EARTH_ROTATION_RADPS, GM_EARTH, N_SATELLITES,
                                               N_UNIFORMS, SYSTEMS, Constellation, SiteFrame,
                                               build_constellation, satellite_ecef,
                                               satellite_los_enu, site_frame)
from acres_sim.core.gnss.sky import (DOP_INVALID, SAT_BELOW_MASK, SAT_BLOCKED, SAT_CLEAR,
                                     SAT_FOLIAGE, SAT_NEAR, SAT_OFF, dop, make_sky_params,
                                     multipath_index, prefilter, ray_box, ray_cylinder,
                                     reflector_index, sky_view, sphere_chord, system_mask)
from acres_sim.core.rng import make_stream
from acres_sim.core.scene import empty_scene, make_scene, scene_digest
from acres_sim.pipeline.models import site_georeference

SEED = 20240917
PARAMS = make_sky_params()          # spec defaults: mask 10 deg, 1.5 m, 8 m, 60 m
ALL_ON = system_mask()


@pytest.fixture(scope='module')
def site():
    return site_frame(site_georeference(load_config(rig=None)))


@pytest.fixture(scope='module')
def constellation():
    return build_constellation(make_stream(SEED, 'gnss_constellation'))


def los_from(az_deg, el_deg):
    """Unit ENU line of sight from azimuth (clockwise from north) and elevation."""
    az, el = math.radians(az_deg), math.radians(el_deg)
    return [math.cos(el) * math.sin(az), math.cos(el) * math.cos(az), math.sin(el)]


def sats(*az_el):
    """Synthetic satellites (all GPS) from (azimuth, elevation) pairs."""
    los = np.array([los_from(a, e) for a, e in az_el], dtype=np.float64).reshape(-1, 3)
    return los, np.zeros(los.shape[0], dtype=np.int64)


def inertial(x, y, z, t, t0):
    """Undo the Earth rotation of the ECEF position (the inverse of the spec's matrix)."""
    th = EARTH_ROTATION_RADPS * (t + t0)
    return np.array([x * math.cos(th) - y * math.sin(th), x * math.sin(th) + y * math.cos(th), z])


# ---------------------------------------------------------------------------
# Constellation
# ---------------------------------------------------------------------------

def test_constellation_has_the_spec_system_table(constellation):
    assert N_SATELLITES == 78 and N_UNIFORMS == 85
    for code, (n_p, n_s) in enumerate([(6, 5), (3, 8), (3, 8)]):
        mine = constellation.system == code
        assert mine.sum() == n_p * n_s
        assert sorted(set(constellation.plane[mine])) == list(range(n_p))
        assert sorted(set(constellation.slot[mine])) == list(range(n_s))
    # draw order: system-major, then plane, then slot
    order = list(zip(constellation.system, constellation.plane, constellation.slot))
    assert order == sorted(order)


def test_exactly_85_uniforms_are_drawn():
    rng = make_stream(SEED, 'gnss_constellation')
    build_constellation(rng)
    fresh = make_stream(SEED, 'gnss_constellation')
    fresh.uniforms(85)
    assert np.array_equal(rng.state, fresh.state)
    fresh.uniforms(1)
    assert not np.array_equal(rng.state, fresh.state)


def test_draw_order_from_a_fresh_stream(constellation):
    u = make_stream(SEED, 'gnss_constellation').uniforms(85)
    assert constellation.t0_s == 86400.0 * u[0]
    first = 1
    for code, (n_p, n_s) in enumerate([(6, 5), (3, 8), (3, 8)]):
        node0, u00 = 2 * math.pi * u[first], 2 * math.pi * u[first + 1]
        jitter = u[first + 2:first + 2 + n_p * n_s]
        idx = np.flatnonzero(constellation.system == code)
        for k, (i, j) in enumerate([(i, j) for i in range(n_p) for j in range(n_s)]):
            sat = idx[k]
            assert (constellation.plane[sat], constellation.slot[sat]) == (i, j)
            assert constellation.node_rad[sat] == pytest.approx(node0 + 2 * math.pi * i / n_p,
                                                                abs=1e-12)
            expect_u0 = (u00 + 2 * math.pi * j / n_s + 2 * math.pi * i / (n_p * n_s)
                         + 0.2 * (jitter[k] - 0.5))
            assert constellation.u0_rad[sat] == pytest.approx(expect_u0, abs=1e-12)
        first += 2 + n_p * n_s
    assert first == 85


def test_other_seeds_give_other_skies():
    a = build_constellation(make_stream(1, 'gnss_constellation'))
    b = build_constellation(make_stream(2, 'gnss_constellation'))
    assert a.t0_s != b.t0_s and not np.allclose(a.u0_rad, b.u0_rad)


# Published periods: GPS 11 h 58 min, Galileo 14 h 05 min, GLONASS 11 h 16 min.
@pytest.mark.parametrize('code, radius_km, incl_deg, period_s', [
    (0, 26559.7, 55.0, 11 * 3600 + 58 * 60),
    (1, 29599.8, 56.0, 14 * 3600 + 5 * 60),
    (2, 25508.0, 64.8, 11 * 3600 + 16 * 60),
])
def test_orbit_geometry_from_positions(constellation, code, radius_km, incl_deg, period_s):
    c = constellation
    for sat in np.flatnonzero(c.system == code)[::7]:
        n = math.sqrt(GM_EARTH / (radius_km * 1e3) ** 3)
        period = 2 * math.pi / n
        assert period == pytest.approx(period_s, abs=90.0)
        t1, t2 = 1234.5, 1234.5 + period / 7.0
        p1 = inertial(*satellite_ecef(t1, c, sat), t1, c.t0_s)
        p2 = inertial(*satellite_ecef(t2, c, sat), t2, c.t0_s)
        for p in (p1, p2):
            assert np.linalg.norm(p) == pytest.approx(radius_km * 1e3, rel=1e-12)
        normal = np.cross(p1, p2)
        assert math.degrees(math.acos(normal[2] / np.linalg.norm(normal))) == pytest.approx(
            incl_deg, abs=1e-9)
        # ascending node: the normal points 90 deg behind it in the equator plane
        node = math.atan2(normal[0], -normal[1])
        assert math.remainder(node - c.node_rad[sat], 2 * math.pi) == pytest.approx(0, abs=1e-9)
        # the angle swept in one seventh of a period, and the full period closes the orbit
        assert math.degrees(math.acos(p1 @ p2 / np.linalg.norm(p1) ** 2)) == pytest.approx(
            360.0 / 7.0, abs=1e-7)
        p3 = inertial(*satellite_ecef(t1 + period, c, sat), t1 + period, c.t0_s)
        assert np.allclose(p3, p1, atol=1e-4)
        # ECEF z is untouched by the Earth rotation and never exceeds a sin(i)
        assert abs(p1[2]) <= radius_km * 1e3 * math.sin(math.radians(incl_deg)) + 1e-3


def test_planes_are_evenly_spread(constellation):
    for code, spec in enumerate(SYSTEMS):
        nodes = sorted({round(x % (2 * math.pi), 9) for x in
                        constellation.node_rad[constellation.system == code]})
        gaps = np.diff(nodes + [nodes[0] + 2 * math.pi])
        assert np.allclose(gaps, 2 * math.pi / spec.planes)


def one_satellite(radius, incl, node, u0, t0=0.0):
    a = np.array([radius])
    return Constellation(t0, np.zeros(1, np.int64), np.zeros(1, np.int64),
                         np.zeros(1, np.int64), a, np.array([incl]), np.array([node]),
                         np.array([u0]), np.sqrt(GM_EARTH / a ** 3))


def test_line_of_sight_hand_cases():
    """A site on the equator at longitude 0 and an equatorial orbit: at t = 0 the
    satellite is overhead, soon after it has moved east (prograde), and a
    satellite over the pole is due north."""
    equator = SiteFrame.from_geodetic(0.0, 0.0, 0.0)
    los = np.empty((1, 3))
    c = one_satellite(26_559_700.0, 0.0, 0.0, 0.0)
    satellite_los_enu(0.0, c, equator, los)
    assert np.allclose(los[0], [0.0, 0.0, 1.0], atol=1e-15)
    satellite_los_enu(600.0, c, equator, los)
    assert los[0, 0] > 0.0 and abs(los[0, 1]) < 1e-12
    # after t, the satellite's inertial angle is n t and the Earth turned by omega_E t
    ang = c.mean_motion_radps[0] * 600.0 - EARTH_ROTATION_RADPS * 600.0
    a = c.radius_m[0]
    x, y = a * math.cos(ang) - 6378137.0, a * math.sin(ang)
    assert los[0, 0] == pytest.approx(y / math.hypot(x, y), rel=1e-12)
    polar = one_satellite(26_559_700.0, math.pi / 2, 0.0, math.pi / 2)   # over the north pole
    satellite_los_enu(0.0, polar, equator, los)
    assert los[0, 0] == pytest.approx(0.0, abs=1e-15) and los[0, 1] > 0.9


def test_site_is_the_wgs84_tile_origin(site):
    from acres_sim.core.geo import WGS84, geodetic_to_ecef
    georef = site_georeference(load_config(rig=None))
    lat, lon, h = georef.enu_to_geodetic(0, 0, 0, 0, 'wgs84_g2139')
    assert 40.4 < lat < 40.6 and -87.1 < lon < -86.9
    assert (site.x_m, site.y_m, site.z_m) == pytest.approx(geodetic_to_ecef(lat, lon, h, WGS84),
                                                           abs=1e-6)
    assert site.sin_lat == pytest.approx(math.sin(math.radians(lat)), abs=1e-15)


def test_lines_of_sight_are_unit_and_match_a_local_frame(constellation, site):
    los = np.empty((N_SATELLITES, 3))
    t = 4321.0
    satellite_los_enu(t, constellation, site, los)
    assert np.allclose(np.linalg.norm(los, axis=1), 1.0, atol=1e-14)
    # independent: the ENU unit vectors as columns, applied to the ECEF difference
    s_lat, c_lat, s_lon, c_lon = site.sin_lat, site.cos_lat, site.sin_lon, site.cos_lon
    east = np.array([-s_lon, c_lon, 0.0])
    north = np.array([-s_lat * c_lon, -s_lat * s_lon, c_lat])
    up = np.array([c_lat * c_lon, c_lat * s_lon, s_lat])
    for k in range(0, N_SATELLITES, 11):
        d = np.array(satellite_ecef(t, constellation, k)) - [site.x_m, site.y_m, site.z_m]
        d /= np.linalg.norm(d)
        assert np.allclose(los[k], [d @ east, d @ north, d @ up], atol=1e-14)


# ---------------------------------------------------------------------------
# Open sky over a day
# ---------------------------------------------------------------------------

def cap_share(radius_m, mask_deg, earth_m=6_371_000.0):
    """Share of a spherical orbit shell above the mask (uniform satellites)."""
    e = math.radians(mask_deg)
    psi = math.pi / 2 - e - math.asin(earth_m * math.cos(e) / radius_m)
    return (1.0 - math.cos(psi)) / 2.0


@pytest.fixture(scope='module')
def open_sky_day(constellation, site):
    los = np.empty((N_SATELLITES, 3))
    rows = []
    for t in np.arange(0.0, 86400.0, 600.0):
        satellite_los_enu(t, constellation, site, los)
        view = sky_view(los, constellation.system, ALL_ON, (5.0, 200.0, 2.0), empty_scene(),
                        PARAMS)
        rows.append((los.copy(), view))
    return rows


def test_open_sky_counts_per_system(constellation, open_sky_day):
    per_system = np.array([[int(np.sum((v.classes == SAT_CLEAR) & (constellation.system == s)))
                            for s in range(3)] for _los, v in open_sky_day])
    low, high = per_system.min(axis=0), per_system.max(axis=0)
    assert 5 <= low[0] and high[0] <= 12      # GPS
    assert 4 <= low[1] and high[1] <= 11      # Galileo
    assert 4 <= low[2] and high[2] <= 10      # GLONASS
    for code, spec in enumerate(SYSTEMS):
        expect = spec.planes * spec.per_plane * cap_share(spec.radius_m, 10.0)
        assert per_system[:, code].mean() == pytest.approx(expect, rel=0.2)
    for _los, v in open_sky_day:
        assert v.n_used == v.n_clear == v.n_above_mask
        assert v.n_near == v.n_foliage == v.n_blocked == 0
        assert v.reflector_index == 0.0 and v.multipath_index == 0.0


def test_open_sky_dop(open_sky_day):
    hdop = np.array([v.hdop for _los, v in open_sky_day])
    pdop = np.array([v.pdop for _los, v in open_sky_day])
    vdop = np.array([v.vdop for _los, v in open_sky_day])
    assert hdop.max() < 1.2 and pdop.max() < 3.0 and pdop.min() > 0.5
    assert np.all(vdop > hdop)                # the vertical is the weak axis
    for _los, v in open_sky_day:
        assert (v.hdop, v.vdop) == (v.hdop_all, v.vdop_all)
        assert v.pdop == pytest.approx(math.hypot(v.hdop, v.vdop), rel=1e-12)


@pytest.mark.parametrize('on', [(True, False, False), (False, True, False),
                                (False, False, True), (True, False, True)])
def test_systems_switched_off_are_not_used(constellation, open_sky_day, on):
    mask = system_mask(*on)
    pdops = []
    for los, full in open_sky_day[::3]:
        v = sky_view(los, constellation.system, mask, (5.0, 200.0, 2.0), empty_scene(), PARAMS)
        off = ~mask[constellation.system]
        assert np.all(v.classes[off] == SAT_OFF)
        assert np.array_equal(v.classes[~off], full.classes[~off])
        assert v.n_above_mask == int(np.sum(full.classes[~off] >= 0))
        assert v.n_used == v.n_above_mask
        assert v.pdop >= full.pdop - 1e-12       # fewer satellites never improve the DOP
        pdops.append(v.pdop)
    assert np.median(pdops) < 4.0


def test_mask_boundary():
    los, system = sats((0, 9.99), (90, 10.01), (180, 45), (270, 80), (45, -5))
    v = sky_view(los, system, ALL_ON, (0, 0, 2), empty_scene(), PARAMS)
    assert list(v.classes) == [SAT_BELOW_MASK, SAT_CLEAR, SAT_CLEAR, SAT_CLEAR, SAT_BELOW_MASK]
    high_mask = make_sky_params(elevation_mask_deg=44.0)
    v = sky_view(los, system, ALL_ON, (0, 0, 2), empty_scene(), high_mask)
    assert v.n_above_mask == 2 and v.n_used == 2 and v.hdop == DOP_INVALID


# ---------------------------------------------------------------------------
# Ray tests against hand geometry
# ---------------------------------------------------------------------------

R2 = math.sqrt(0.5)


@pytest.mark.parametrize('o, d, box, hit', [
    ((0, 0, 0), (1, 0, 0), (1, -1, -1, 2, 1, 1), True),
    ((0, 0, 0), (-1, 0, 0), (1, -1, -1, 2, 1, 1), False),          # behind
    ((1.5, 0, 0), (0, 0, 1), (1, -1, -1, 2, 1, 1), True),          # from inside
    ((0, 1, 0), (1, 0, 0), (1, -1, -1, 2, 1, 1), True),            # along a face
    ((0, 1 + 1e-9, 0), (1, 0, 0), (1, -1, -1, 2, 1, 1), False),    # just outside the slab
    ((0, 0, 0), (2 / 5 ** .5, 1 / 5 ** .5, 0), (1, 1, -1, 2, 2, 1), True),  # touches a corner
    ((0, 0, 0), (2 / 5.002 ** .5, 0.999 / 5.002 ** .5, 0), (1, 1, -1, 2, 2, 1), False),
    ((0, 0, 2), (0, R2, R2), (-5, 10, 0, 5, 20, 11.99), False),    # passes over the roof
    ((0, 0, 2), (0, R2, R2), (-5, 10, 0, 5, 20, 12.0), True),      # grazes the roof edge
    ((0, 0, 2), (0, R2, R2), (-5, 10, 0, 5, 20, 30), True),
])
def test_ray_box(o, d, box, hit):
    assert ray_box(*map(float, o), *map(float, d), *map(float, box)) is hit


CYL = (0.0, 0.0, 1.0, 0.0, 10.0)   # axis at the origin, radius 1, from 0 to 10 m


@pytest.mark.parametrize('o, d, hit', [
    ((-5, 0, 5), (1, 0, 0), True),                       # at the axis
    ((-5, 1 - 1e-9, 5), (1, 0, 0), True),                # just inside the radius
    ((-5, 1, 5), (1, 0, 0), True),                       # tangent to the wall
    ((1, 0, -5), (0, 0, 1), True),                       # up along the wall
    ((1 + 1e-9, 0, -5), (0, 0, 1), False),               # up just outside it
    ((-5, 1 + 1e-9, 5), (1, 0, 0), False),               # just outside
    ((5, 0, 5), (1, 0, 0), False),                       # behind
    ((-2, 0, 8.5), (R2, 0, R2), True),                   # side at z 9.5
    ((-1.5, 0, 9.8), (R2, 0, R2), False),                # over the rim (z 10.3 at the wall)
    ((0.5, 0, 12), (0, 0, -1), True),                    # down through the top cap
    ((0.5, 0, 12), (0, 0, 1), False),                    # up, away from it
    ((0, 0, 12), (1 / 5.0401 ** .5, 0, -2.01 / 5.0401 ** .5), True),   # top cap, by the rim
    ((0, 0, 12), (1 / 4.9601 ** .5, 0, -1.99 / 4.9601 ** .5), False),  # just past the rim
    ((0, 0, -1), (1 / 5 ** .5, 0, 2 / 5 ** .5), True),   # up into the bottom cap
    ((0.2, 0.2, 3), (0.6, 0, 0.8), True),                # from inside
])
def test_ray_cylinder(o, d, hit):
    assert ray_cylinder(*map(float, o), *map(float, d), *CYL) is hit


@pytest.mark.parametrize('o, d, sphere, chord', [
    ((0, 0, 0), (1, 0, 0), (10, 0, 0, 3), 6.0),                      # through the centre
    ((0, 0, 0), (1, 0, 0), (10, 2, 0, 3), 2 * math.sqrt(5)),         # offset by 2
    ((0, 0, 0), (1, 0, 0), (10, 3, 0, 3), 0.0),                      # tangent
    ((0, 0, 0), (1, 0, 0), (10, 3.1, 0, 3), 0.0),                    # miss
    ((0, 0, 0), (-1, 0, 0), (10, 0, 0, 3), 0.0),                     # behind
    ((10, 0, 0), (0, 0, 1), (10, 0, 0, 3), 3.0),                     # from the centre
    ((9, 0, 0), (1, 0, 0), (10, 0, 0, 3), 4.0),                      # from inside
])
def test_sphere_chord(o, d, sphere, chord):
    assert sphere_chord(*map(float, o), *map(float, d), *map(float, sphere)) == pytest.approx(
        chord, abs=1e-12)


# ---------------------------------------------------------------------------
# Classes on hand-built scenes (antenna at (0, 0, 2), sky rays from los_from)
# ---------------------------------------------------------------------------

ANT = (0.0, 0.0, 2.0)


def classes_of(scene, *az_el, params=PARAMS):
    los, system = sats(*az_el)
    return sky_view(los, system, ALL_ON, ANT, scene, params)


def test_box_blocks_the_satellite_behind_it():
    # north at 45 deg: the ray is at height 2 + y; a box at y 10..20 up to 30 m
    scene = make_scene(boxes=[[-5, 10, 0, 5, 20, 30]])
    v = classes_of(scene, (0, 45), (180, 45), (90, 30), (0, 80))
    assert list(v.classes) == [SAT_BLOCKED, SAT_CLEAR, SAT_CLEAR, SAT_CLEAR]
    assert (v.n_blocked, v.n_used, v.n_above_mask) == (1, 3, 4)
    assert v.hdop == v.vdop == v.pdop == DOP_INVALID        # 3 used
    assert v.hdop_all != DOP_INVALID


def test_crown_chord_gives_foliage_or_blocked():
    # centre on the 45 deg north ray, 20 m out: chord = 2 r
    cx = (0.0, 20 * R2, 2 + 20 * R2)
    short = make_scene(spheres=[[*cx, 3.0]])       # chord 6 m < 8 m
    long_ = make_scene(spheres=[[*cx, 4.01]])      # chord 8.02 m
    assert classes_of(short, (0, 45)).classes[0] == SAT_FOLIAGE
    assert classes_of(long_, (0, 45)).classes[0] == SAT_BLOCKED
    # exactly 8 m blocks (a zenith ray, a crown 20 m up: the chord is exact)
    zenith = np.array([[0.0, 0.0, 1.0]])
    for r, expect in ((4.0, SAT_BLOCKED), (3.9999, SAT_FOLIAGE)):
        v = sky_view(zenith, [0], ALL_ON, ANT, make_scene(spheres=[[0.0, 0.0, 22.0, r]]),
                     PARAMS)
        assert v.classes[0] == expect
    # two crowns of 6 m each: the chords do not add up
    two = make_scene(spheres=[[*cx, 3.0], [0.0, 40 * R2, 2 + 40 * R2, 3.0]])
    assert classes_of(two, (0, 45)).classes[0] == SAT_FOLIAGE
    # the ray passing 3.5 m from the centre of a 4 m crown: chord 2 sqrt(16 - 12.25) < 8
    off = make_scene(spheres=[[3.5, 20 * R2, 2 + 20 * R2, 4.0]])
    assert classes_of(off, (0, 45)).classes[0] == SAT_FOLIAGE
    assert classes_of(make_scene(spheres=[[4.01, 20 * R2, 2 + 20 * R2, 4.0]]),
                      (0, 45)).classes[0] == SAT_CLEAR


@pytest.mark.parametrize('gap, expect', [(1.0, SAT_NEAR), (2.9, SAT_NEAR), (3.1, SAT_CLEAR),
                                         (-0.01, SAT_BLOCKED)])
def test_near_margin_of_a_box(gap, expect):
    # north at 45 deg over a box from y = 15 to 25 whose roof edge is ``gap`` m
    # below the ray; the grown box's edge (1.5 m out and up) is then 3 - gap m
    # above the ray: near up to a gap of 3 m
    scene = make_scene(boxes=[[-5, 15, 0, 5, 25, 2 + 15 - gap]])
    assert classes_of(scene, (0, 45)).classes[0] == expect


@pytest.mark.parametrize('gap, expect', [(1.0, SAT_NEAR), (1.45, SAT_NEAR), (1.55, SAT_CLEAR),
                                         (-0.01, SAT_BLOCKED)])
def test_near_margin_of_a_cylinder(gap, expect):
    # east at 30 deg, a tall bin whose wall is ``gap`` m north of the ray line y = 0
    scene = make_scene(cylinders=[[40.0, 5.0 + gap, 5.0, 0.0, 50.0]])
    assert classes_of(scene, (90, 30)).classes[0] == expect


def test_precedence_blocked_then_foliage_then_near():
    crown = [0.0, 20 * R2, 2 + 20 * R2, 3.0]                  # foliage on the north 45 ray
    near_box = [-5, 30, 0, 5, 40, 2 + 30 - 1.0]                # 1 m below the ray
    hit_box = [-5, 30, 0, 5, 40, 60]
    assert classes_of(make_scene(boxes=[near_box], spheres=[crown]),
                      (0, 45)).classes[0] == SAT_FOLIAGE
    assert classes_of(make_scene(boxes=[hit_box], spheres=[crown]),
                      (0, 45)).classes[0] == SAT_BLOCKED
    assert classes_of(make_scene(boxes=[near_box]), (0, 45)).classes[0] == SAT_NEAR


def test_antenna_inside_a_box_blocks_everything():
    scene = make_scene(boxes=[[-3, -3, 0, 3, 3, 4]])
    v = classes_of(scene, *[(az, el) for az in range(0, 360, 40) for el in (15, 50, 85)])
    assert v.n_blocked == v.n_above_mask == 27 and v.n_used == 0
    assert v.pdop == DOP_INVALID


def test_prefilter_rule_by_hand():
    # antenna at z 2, margin 1.5, mask 10 deg: a top of 10 m shows 9.5 m of rise
    limit = 9.5 / math.tan(math.radians(10.0))           # 53.88 m
    boxes = np.array([[40.0, -5, 0, 140.0, 5, 10.0],       # near edge at 40 m (centre at 90 m)
                      [limit + 0.01, -5, 0, limit + 20, 5, 10.0],
                      [limit - 0.01, -5, 0, limit + 20, 5, 10.0],
                      [5.0, 5.0, 0.0, 10.0, 10.0, 0.4]])   # top + margin below the antenna
    cylinders = np.array([[0.0, 60.0, 7.0, 0.0, 10.0],     # wall at 53 m
                          [0.0, 62.0, 7.0, 0.0, 10.0]])    # wall at 55 m
    spheres = np.array([[-60.0, 0.0, 6.0, 4.0],            # top 10 m, edge at 56 m
                        [-57.0, 0.0, 6.0, 4.0],            # edge at 53 m
                        [0.0, 0.0, -3.0, 2.0]])            # under the antenna, top -1 m
    keep = np.empty(9, dtype=np.bool_)
    n = prefilter(*ANT, boxes, cylinders, spheres, PARAMS, keep)
    assert list(keep) == [True, False, True, False, True, False, False, True, False]
    assert n == 4


def test_prefilter_never_drops_a_blocking_obstacle():
    """Random scenes and rays: blocked and foliage classes are the same with the
    prefilter as with every obstacle tested (checked by brute force here)."""
    rng = np.random.default_rng(7)
    for _trial in range(30):
        scene = random_scene(rng, 40)
        los = random_sky(rng, 60)
        ant = (rng.uniform(-20, 20), rng.uniform(-20, 20), rng.uniform(1.5, 3.0))
        v = sky_view(los, np.zeros(60, np.int64), ALL_ON, ant, scene, PARAMS)
        brute = brute_classes(los, ant, scene, PARAMS, prefilter_rule=False)
        hard = (v.classes == SAT_BLOCKED) | (v.classes == SAT_FOLIAGE)
        assert np.array_equal(v.classes[hard], brute[hard])
        assert np.array_equal(np.isin(brute, (SAT_BLOCKED, SAT_FOLIAGE)), hard)


def test_sky_epoch_equals_brute_force_with_the_spec_prefilter():
    """The skip checks inside sky_epoch never change a class."""
    rng = np.random.default_rng(11)
    total = np.zeros(4, int)
    for _trial in range(40):
        scene = random_scene(rng, 60)
        los = random_sky(rng, 60)
        ant = (rng.uniform(-30, 30), rng.uniform(-30, 30), rng.uniform(1.5, 3.0))
        v = sky_view(los, np.zeros(60, np.int64), ALL_ON, ant, scene, PARAMS)
        assert np.array_equal(v.classes, brute_classes(los, ant, scene, PARAMS))
        total += [np.sum(v.classes == c) for c in range(4)]
    assert np.all(total > 20)      # every class occurs


def random_scene(rng, n):
    boxes, cyls, sph = [], [], []
    for _ in range(n):
        x, y = rng.uniform(-80, 80, 2)
        kind = rng.integers(3)
        if kind == 0:
            w, d = rng.uniform(3, 25, 2)
            boxes.append([x, y, 0.0, x + w, y + d, rng.uniform(3, 20)])
        elif kind == 1:
            cyls.append([x, y, rng.uniform(2, 9), 0.0, rng.uniform(5, 30)])
        else:
            sph.append([x, y, rng.uniform(5, 14), rng.uniform(2, 7)])
    return make_scene(boxes=boxes, cylinders=cyls, spheres=sph)


def random_sky(rng, n):
    az = rng.uniform(0, 360, n)
    el = np.degrees(np.arcsin(rng.uniform(math.sin(math.radians(5)), 1.0, n)))
    return np.array([los_from(a, e) for a, e in zip(az, el)])


def brute_classes(los, ant, scene, p, prefilter_rule=True):
    """Every (kept) obstacle against every ray, in plain Python, no shortcuts."""
    e, n, z = ant
    dn, mask = p.near_margin_m, p.elevation_mask_rad

    def kept(top, dist):
        h = top + dn - z
        return (not prefilter_rule) or (h > 0 and math.atan2(h, dist) >= mask)

    def near_dist(cx, cy, r):
        return max(math.hypot(e - cx, n - cy) - r, 0.0)

    out = []
    for le, ln, lu in los:
        if math.asin(lu) < mask:
            out.append(SAT_BELOW_MASK)
            continue
        ray = (e, n, z, le, ln, lu)
        blocked = foliage = near = False
        for x0, y0, z0, x1, y1, z1 in scene.boxes:
            dist = math.hypot(max(x0 - e, 0, e - x1), max(y0 - n, 0, n - y1))
            if not kept(z1, dist):
                continue
            if ray_box(*ray, x0, y0, z0, x1, y1, z1):
                blocked = True
            elif ray_box(*ray, x0 - dn, y0 - dn, z0 - dn, x1 + dn, y1 + dn, z1 + dn):
                near = True
        for cx, cy, r, zb, zt in scene.cylinders:
            if not kept(zt, near_dist(cx, cy, r)):
                continue
            if ray_cylinder(*ray, cx, cy, r, zb, zt):
                blocked = True
            elif ray_cylinder(*ray, cx, cy, r + dn, zb - dn, zt + dn):
                near = True
        for cx, cy, cz, r in scene.spheres:
            if not kept(cz + r, near_dist(cx, cy, r)):
                continue
            chord = sphere_chord(*ray, cx, cy, cz, r)
            if chord >= p.foliage_block_path_m:
                blocked = True
            elif chord > 0:
                foliage = True
        out.append(SAT_BLOCKED if blocked else SAT_FOLIAGE if foliage else
                   SAT_NEAR if near else SAT_CLEAR)
    return np.array(out)


# ---------------------------------------------------------------------------
# DOP
# ---------------------------------------------------------------------------

def numpy_dop(los):
    G = np.column_stack([-los, np.ones(len(los))])
    Q = np.linalg.inv(G.T @ G)
    return (math.sqrt(Q[0, 0] + Q[1, 1]), math.sqrt(Q[2, 2]),
            math.sqrt(Q[0, 0] + Q[1, 1] + Q[2, 2]))


def test_dop_matches_numpy_on_random_geometries():
    rng = np.random.default_rng(5)
    for n in list(range(4, 20)) * 10:
        los = random_sky(rng, n)
        assert dop(los) == pytest.approx(numpy_dop(los), rel=1e-9)


def test_dop_of_a_textbook_geometry():
    # one satellite overhead and three on the horizon, 120 deg apart:
    # H = V = sqrt(4/3), P = sqrt(8/3)
    los = np.array([los_from(0, 90), los_from(0, 0), los_from(120, 0), los_from(240, 0)])
    h, v, p = dop(los)
    assert (h, v, p) == pytest.approx((math.sqrt(4 / 3), math.sqrt(4 / 3), math.sqrt(8 / 3)),
                                      rel=1e-12)


@pytest.mark.parametrize('los', [
    np.array([los_from(0, 30), los_from(120, 40), los_from(240, 50)]),        # 3 satellites
    np.array([los_from(az, 35.0) for az in range(0, 360, 45)]),               # one cone
    np.array([los_from(10, 30)] * 6),                                         # one direction
    np.array([los_from(az, 20.0) for az in (0, 90, 180)] + [los_from(45, 20.0)]),
    # one cone up to 1e-5 deg: condition number ~1e14, numerically singular
    np.array([los_from(az, 35.0 + 1e-5 * ((az // 45) % 3)) for az in range(0, 360, 45)]),
    np.zeros((0, 3)),
])
def test_dop_invalid_for_too_few_or_singular(los):
    assert dop(los) == (DOP_INVALID, DOP_INVALID, DOP_INVALID)


def test_dop_of_a_poor_but_regular_geometry_is_not_capped():
    # condition number ~1e10: still a regular matrix, so the values are computed
    cone = np.array([los_from(az, 35.0 + 1e-3 * ((az // 45) % 3)) for az in range(0, 360, 45)])
    assert dop(cone) == pytest.approx(numpy_dop(cone), rel=1e-4)
    assert dop(cone)[1] > 1e4
    los = np.array([los_from(0, 80), los_from(5, 82), los_from(10, 84), los_from(2, 86),
                    los_from(8, 88)])
    h, v, p = dop(los)
    assert (h, v, p) == pytest.approx(numpy_dop(los), rel=1e-6)
    assert p > 99.99


# ---------------------------------------------------------------------------
# Reflector and multipath index
# ---------------------------------------------------------------------------

def test_reflector_index_of_one_box_by_hand():
    # centre (30, 0), 10 x 10 m, roof 10 m; antenna at 2 m; d_r 60 m
    boxes = np.array([[25.0, -5, 0, 35.0, 5, 10.0]])
    rho = reflector_index(*ANT, boxes, np.zeros((0, 5)), 60.0)
    share = math.atan(math.sqrt(50) / 30) / math.pi
    height = math.degrees(math.atan(8 / 30)) / 30.0
    assert rho == pytest.approx(share * height * 0.5, rel=1e-12)
    assert rho == pytest.approx(0.0183362, abs=1e-7)


def test_reflector_index_of_cylinders_by_hand():
    cyl = np.array([[0.3, 0.4, 4.0, 0.0, 40.0]])      # D = 0.5 < 1: distance taken as 1
    rho = reflector_index(*ANT, np.zeros((0, 6)), cyl, 60.0)
    assert rho == pytest.approx(2 * math.atan(4.0) / (2 * math.pi) * 1.0 * (1 - 0.5 / 60))
    far = np.array([[60.0, 0.0, 4.0, 0.0, 40.0], [0.0, 70.0, 4.0, 0.0, 40.0]])
    assert reflector_index(*ANT, np.zeros((0, 6)), far, 60.0) == 0.0
    low = np.array([[10.0, 0.0, 4.0, 0.0, 1.5]])      # top below the antenna: weight 0
    assert reflector_index(*ANT, np.zeros((0, 6)), low, 60.0) == 0.0
    ring = np.array([[10 * math.cos(a), 10 * math.sin(a), 5.0, 0.0, 30.0]
                     for a in np.linspace(0, 2 * math.pi, 12, endpoint=False)])
    assert reflector_index(*ANT, np.zeros((0, 6)), ring, 60.0) == 1.0    # clamped


def test_trees_do_not_reflect():
    scene = make_scene(spheres=[[10.0, 0.0, 8.0, 5.0]])
    assert classes_of(scene, (0, 45)).reflector_index == 0.0


def test_multipath_index_from_a_hand_scene():
    # 8 satellites: 2 near (north, under a box roof 1 m below the ray),
    # 2 foliage (east, through a crown), 3 clear, 1 blocked (south, behind a wall)
    scene = make_scene(
        boxes=[[-8, 30, 0, 8, 40, 2 + 30 * math.tan(math.radians(40)) - 1.0],
               [-10, -30, 0, 10, -25, 80]],
        spheres=[[25.0, 0.0, 2 + 25 * math.tan(math.radians(30)), 3.0]])
    v = classes_of(scene, (0, 40), (2, 40), (90, 30), (90.5, 30), (180, 50),
                   (270, 60), (300, 25), (240, 70))
    assert list(v.classes) == [SAT_NEAR, SAT_NEAR, SAT_FOLIAGE, SAT_FOLIAGE, SAT_BLOCKED,
                               SAT_CLEAR, SAT_CLEAR, SAT_CLEAR]
    assert (v.n_near, v.n_foliage, v.n_clear, v.n_used, v.n_blocked) == (2, 2, 3, 7, 1)
    rho = reflector_index(*ANT, scene.boxes, scene.cylinders, 60.0)
    assert 0.0 < rho < 1.0 and v.reflector_index == rho
    assert v.multipath_index == pytest.approx((2 + 0.5 * 2) / 7 + 0.5 * rho, rel=1e-12)


@pytest.mark.parametrize('nn, nf, nu, rho, m', [
    (0, 0, 0, 0.0, 0.0), (0, 0, 0, 0.4, 0.2), (2, 2, 8, 0.1, 0.425),
    (8, 0, 8, 0.5, 1.0), (0, 4, 4, 0.0, 0.5)])
def test_multipath_index_formula(nn, nf, nu, rho, m):
    assert multipath_index(nn, nf, nu, rho) == pytest.approx(m, abs=1e-15)


# ---------------------------------------------------------------------------
# Scene files
# ---------------------------------------------------------------------------

@pytest.fixture(scope='module')
def acre():
    return default_scene()


def test_packaged_scene(acre):
    assert acre.name == 'acre_farmstead'
    assert acre.boxes.shape[0] >= 3 and 3 <= acre.cylinders.shape[0] <= 4
    assert acre.spheres.shape[0] >= 8
    for cx, cy, r, zb, zt in acre.cylinders:
        assert 60 <= math.hypot(cx, cy) <= 120 and 5 <= r <= 9 and 18 <= zt - zb <= 28
    line = [s for s, name in zip(acre.spheres, acre.sphere_names) if name.startswith('tree')]
    assert len(line) >= 8
    for _cx, cy, cz, r in line:
        assert cy > 40 and 4 <= r <= 6 and 7 <= cz <= 10
    assert 'icsc_garage' in acre.box_names
    assert len(acre.digest) == 64 and acre.digest == scene_digest(default_scene())


@pytest.mark.parametrize('height', [1.7, 2.2, 2.65, 3.0])
def test_garage_box_holds_the_spawn_antenna(acre, constellation, site, height):
    garage = acre.boxes[acre.box_names.index('icsc_garage')]
    assert garage[0] < 0 < garage[3] and garage[1] < 0 < garage[4]
    assert garage[2] <= 0 and height < garage[5]
    los = np.empty((N_SATELLITES, 3))
    for t in (0.0, 3600.0, 40000.0):
        satellite_los_enu(t, constellation, site, los)
        v = sky_view(los, constellation.system, ALL_ON, (0.0, 0.0, height), acre, PARAMS)
        assert v.n_used == 0 and v.n_blocked == v.n_above_mask > 0
        assert v.pdop == DOP_INVALID


def test_out_in_the_field_the_acre_sky_is_usable(acre, constellation, site):
    los = np.empty((N_SATELLITES, 3))
    satellite_los_enu(0.0, constellation, site, los)
    v = sky_view(los, constellation.system, ALL_ON, (-60.0, -120.0, 2.2), acre, PARAMS)
    assert v.n_used >= 15 and v.pdop < 2.5
    # next to the machine shed and the bins the multipath index rises
    near = sky_view(los, constellation.system, ALL_ON, (45.0, -38.0, 2.2), acre, PARAMS)
    assert near.reflector_index > v.reflector_index and near.multipath_index > 0.1


def test_digest_depends_on_the_content(acre, tmp_path):
    changed = acre._replace(cylinders=acre.cylinders.copy())
    changed.cylinders[0, 2] += 0.001
    assert changed.digest != acre.digest
    renamed = acre._replace(box_names=('x',) + acre.box_names[1:])
    assert renamed.digest != acre.digest
    # the same content in a JSON file gives the same digest
    body = {'scene': {
        'name': acre.name,
        'buildings': [{'name': n, 'min': list(r[:3]), 'max': list(r[3:])}
                      for n, r in zip(acre.box_names, acre.boxes.tolist())],
        'grain_bins': [{'name': n, 'center': r[:2], 'radius': r[2], 'bottom': r[3],
                        'top': r[4]} for n, r in zip(acre.cylinder_names,
                                                     acre.cylinders.tolist())],
        'tree_crowns': [{'name': n, 'center': r[:3], 'radius': r[3]}
                        for n, r in zip(acre.sphere_names, acre.spheres.tolist())]}}
    path = tmp_path / 'same.json'
    path.write_text(json.dumps(body))
    assert load_scene(path).digest == acre.digest


GOOD = {'scene': {'name': 'test',
                  'buildings': [{'name': 'b', 'min': [0, 0, 0], 'max': [1, 1, 1]}],
                  'grain_bins': [{'name': 'g0', 'center': [5, 5], 'radius': 1, 'bottom': 0,
                                  'top': 10},
                                 {'name': 'g1', 'center': [9, 5], 'radius': 1, 'bottom': 0,
                                  'top': 10},
                                 {'name': 'g2', 'center': [5, 9], 'radius': 2, 'bottom': 0,
                                  'top': 10}],
                  'tree_crowns': [{'name': 't', 'center': [0, 9, 8], 'radius': 4}]}}


def edited(path, value):
    tree = json.loads(json.dumps(GOOD))
    node = tree
    for part in path[:-1]:
        node = node[part]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return tree


@pytest.mark.parametrize('path, value, item', [
    (('scene', 'grain_bins', 2, 'radius'), -3.0, 'scene.grain_bins[2].radius'),
    (('scene', 'grain_bins', 2, 'radius'), 0, 'scene.grain_bins[2].radius'),
    (('scene', 'grain_bins', 1, 'top'), -1, 'scene.grain_bins[1].top'),
    (('scene', 'grain_bins', 0, 'center'), [1, 2, 3], 'scene.grain_bins[0].center'),
    (('scene', 'grain_bins', 0, 'bottom'), KeyError, 'scene.grain_bins[0].bottom'),
    (('scene', 'buildings', 0, 'max'), [1, 0, 1], 'scene.buildings[0].max[1]'),
    (('scene', 'buildings', 0, 'min'), [0, 'a', 0], 'scene.buildings[0].min[1]'),
    (('scene', 'buildings', 0, 'min'), [0, True, 0], 'scene.buildings[0].min[1]'),
    (('scene', 'buildings', 0, 'min'), [0, float('nan'), 0], 'scene.buildings[0].min[1]'),
    (('scene', 'buildings', 0, 'min'), [0, float('inf'), 0], 'scene.buildings[0].min[1]'),
    (('scene', 'tree_crowns', 0, 'radius'), None, 'scene.tree_crowns[0].radius'),
    (('scene', 'tree_crowns', 0, 'name'), 'b', 'scene.tree_crowns[0].name'),
    (('scene', 'tree_crowns'), {'a': 1}, 'scene.tree_crowns'),
    (('scene', 'buildings', 0), [0, 0, 0], 'scene.buildings[0]'),
    (('scene', 'name'), 5, 'scene.name'),
])
def test_bad_scene_items_name_the_item(tmp_path, path, value, item):
    file = tmp_path / 'bad_scene.yaml'
    file.write_text(yaml.safe_dump(edited(path, value)))
    with pytest.raises(ConfigError) as err:
        load_scene(file)
    message = str(err.value)
    assert '\n' not in message and str(file) in message
    assert message.startswith(item + ' ')
    assert 'allowed' in message or 'missing' in message


@pytest.mark.parametrize('path, value, words', [
    (('scene', 'buildings', 0, 'heigth'), 3,
     "unknown key 'scene.buildings[0].heigth' (in {file}); allowed: name, min, max"),
    (('scene', 'trees'), [], "unknown key 'scene.trees' (in {file}); did you mean "
                             "'scene.tree_crowns'?"),
])
def test_unknown_scene_keys_are_named(tmp_path, path, value, words):
    file = tmp_path / 'bad_scene.yaml'
    file.write_text(yaml.safe_dump(edited(path, value)))
    with pytest.raises(ConfigError) as err:
        load_scene(file)
    assert str(err.value) == words.format(file=file)


@pytest.mark.parametrize('text, words', [
    ('scene: [1, 2', 'not valid YAML'),
    ('- 1\n- 2\n', '"scene"'),
    ('scenes: {}\n', '"scene"'),
    ('scene: {}\nextra: 1\n', 'extra'),
    ('scene:\n  buildings:\n    - {min: [0, 0, 0], max: [1, 1, .nan]}\n',
     'scene.buildings[0].max[2]'),
    ('scene:\n  grain_bins:\n    - {center: [0, 0], radius: 1e-05, bottom: 0, top: 1e1}\n',
     None),
])
def test_bad_scene_files(tmp_path, text, words):
    file = tmp_path / 'scene.yaml'
    file.write_text(text)
    if words is None:                          # exponent floats are numbers, as in rcl
        assert load_scene(file).cylinders[0, 2] == 1e-05
        return
    with pytest.raises(ConfigError) as err:
        load_scene(file)
    assert words in str(err.value) and '\n' not in str(err.value)


def test_missing_scene_file(tmp_path):
    with pytest.raises(ConfigError, match='cannot read scene file'):
        load_scene(tmp_path / 'nope.yaml')


def test_empty_lists_and_defaults(tmp_path):
    file = tmp_path / 'yard.yaml'
    file.write_text('scene:\n  buildings: []\n  tree_crowns:\n    - {center: [1, 2, 3], '
                    'radius: 2}\n')
    scene = load_scene(file)
    assert scene.name == 'yard' and scene.boxes.shape == (0, 6)
    assert scene.sphere_names == ('tree_crowns[0]',)
    assert scene.cylinders.shape == (0, 5)


leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                 st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5))
tree = st.recursive(leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(['name', 'min', 'max', 'center', 'radius', 'bottom', 'top',
                                     'buildings', 'grain_bins', 'tree_crowns', 'x']),
                    inner, max_size=5)), max_leaves=25)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=tree)
def test_any_tree_gives_a_scene_or_one_config_error(body):
    try:
        scene = scene_from_tree({'scene': body}, 'fuzz.yaml')
    except ConfigError as err:
        assert '\n' not in str(err)
    else:
        for rows in (scene.boxes, scene.cylinders, scene.spheres):
            assert np.all(np.isfinite(rows))
        assert np.all(scene.boxes[:, :3] < scene.boxes[:, 3:])
