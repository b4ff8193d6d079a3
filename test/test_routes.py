"""Routes and the pure-pursuit follower (acres_sim.core.routes), route files
(acres_sim.config.routes).

The follower is tested in closed loop with the physics of both vehicles: it
must finish each route, stay within a cross-track bound, keep the speed limit
and -- for the demo drive -- keep 3 m from every obstacle of the packaged
farmstead scene.
"""

import math

import numpy as np
import pytest
import yaml

from acres_sim.config import ConfigError
from acres_sim.config.routes import load_route, packaged_site, route_names, routes_dir
from acres_sim.config.scene import default_scene
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core import physics as ph
from acres_sim.core.frames import chassis_in_base_footprint
from acres_sim.core.routes import (PATTERNS, Route, RouteFollower, build_route, field_waypoints,
                                   figure8_waypoints, loop_waypoints)
from acres_sim.core.truth import PHYSICS_HZ

CLEARANCE_M = 3.0
SPAWN_BUILDING = 'icsc_garage'


@pytest.fixture(scope='module')
def vehicles():
    return {name: load_vehicle(name) for name in ('polaris', 'maxxum')}


@pytest.fixture(scope='module')
def scene():
    return default_scene()


def clearances(scene, xy):
    """Horizontal distance [m] of every point from every obstacle of the scene
    (boxes and cylinders in plan; a tree crown as the disc of its sphere)."""
    x, y = xy[:, 0], xy[:, 1]
    out = {}
    for name, b in zip(scene.box_names, scene.boxes):
        dx = np.maximum(np.maximum(b[0] - x, x - b[3]), 0.0)
        dy = np.maximum(np.maximum(b[1] - y, y - b[4]), 0.0)
        inside = (dx == 0) & (dy == 0)
        d = np.hypot(dx, dy)
        out[name] = np.where(inside, -1.0, d)
    for name, c in zip(scene.cylinder_names, scene.cylinders):
        out[name] = np.hypot(x - c[0], y - c[1]) - c[2]
    for name, s in zip(scene.sphere_names, scene.spheres):
        out[name] = np.hypot(x - s[0], y - s[1]) - s[3]
    return out


def assert_clear(scene, xy, what):
    """At least CLEARANCE_M from every obstacle; from the spawn garage only once
    the path is out: after the first point 3 m clear it never comes closer."""
    for name, d in clearances(scene, xy).items():
        if name == SPAWN_BUILDING:
            assert d[0] < 0.0, f'{what}: the start is not in the garage'
            out = int(np.argmax(d >= CLEARANCE_M))
            assert out > 0 and np.all(d[:out] < CLEARANCE_M)
            d = d[out:]
        assert d.min() >= CLEARANCE_M - 1e-9, f'{what}: {d.min():.2f} m from {name}'


def simulate(route, vp, max_seconds=400.0):
    """Drive ``route`` with one vehicle; returns a dict of traces (after the hold)."""
    fleet = ph.Fleet([vp], [route.start_pose()])
    follower = RouteFollower(route, vp)
    hold_steps = int(round(route.hold_s * PHYSICS_HZ))
    trace = {'xte': [], 'speed': [], 'footprint': [], 'chassis': [], 'command': []}
    start = fleet.states.copy()
    for k in range(int(max_seconds * PHYSICS_HZ)):
        truth = fleet.truth(0)
        command = follower.command(truth)
        if k == hold_steps:
            assert np.array_equal(fleet.states, start), 'moved during the hold'
        if follower.done and fleet.states[0, ph.S_PARKED] > 0.5:
            break
        fleet.step([command])
        fp = fleet.footprint(0)
        trace['footprint'].append((fp.x, fp.y))
        trace['chassis'].append(truth.p[:2])
        trace['speed'].append(float(np.linalg.norm(truth.v)))
        trace['command'].append(command)
        if k >= hold_steps:
            trace['xte'].append(follower.cross_track_error)
    else:
        raise AssertionError(f'{route.name}: not finished after {max_seconds} s')
    out = {key: np.array(v) for key, v in trace.items()}
    out['t'] = fleet.t
    out['end'] = fleet.footprint(0)
    out['commands_before_hold'] = hold_steps
    return out


# --------------------------------------------------------------------------- geometry


def test_build_route_rounds_corners_with_the_turn_radius():
    r = build_route([([[0.0, 0.0], [50.0, 0.0], [50.0, 40.0]], 5.0)], turn_radius_m=8.0)
    gaps = np.hypot(*np.diff(r.xy, axis=0).T)
    assert gaps.max() <= 0.25 + 1e-9 and gaps.min() > 0.0
    arc = r.curvature != 0.0
    assert np.allclose(r.curvature[arc], 1.0 / 8.0)
    centre = np.array([42.0, 8.0])
    assert np.allclose(np.hypot(*(r.xy[arc] - centre).T), 8.0)
    assert r.length == pytest.approx(42.0 + 2 * math.pi * 8.0 / 4 + 32.0, abs=1e-3)   # chords
    assert np.allclose(r.xy[-1], [50.0, 40.0]) and r.start_pose() == (0.0, 0.0, 0.0)
    right = build_route([([[0.0, 0.0], [50.0, 0.0], [50.0, -40.0]], 5.0)], turn_radius_m=8.0)
    assert np.allclose(right.curvature[right.curvature != 0.0], -1.0 / 8.0)


def test_short_legs_shrink_the_corner_and_u_turns_are_refused():
    r = build_route([([[0.0, 0.0], [20.0, 0.0], [20.0, 4.0], [0.0, 4.0]], 3.0)],
                    turn_radius_m=10.0)
    assert np.allclose(np.abs(r.curvature[r.curvature != 0.0]), 0.5)   # 4 m apart: radius 2
    with pytest.raises(ValueError, match='turns back on itself'):
        build_route([([[0.0, 0.0], [10.0, 0.0], [0.0, 0.0]], 3.0)])
    with pytest.raises(ValueError, match='at least two distinct waypoints'):
        build_route([([[1.0, 1.0], [1.0, 1.0]], 3.0)])


def test_legs_join_and_take_their_speeds():
    r = build_route([([[0.0, 0.0], [30.0, 0.0]], 2.0), ([[30.0, 0.0], [60.0, 0.0]], 5.0),
                     ([[70.0, 0.0], [90.0, 0.0]], 4.0)])
    assert np.all(r.speed[r.xy[:, 0] < 29.9] == 2.0)
    assert np.all(r.speed[(r.xy[:, 0] > 30.1) & (r.xy[:, 0] < 59.9)] == 5.0)
    assert np.all(r.speed[r.xy[:, 0] > 60.1] == 4.0)      # the joining segment too
    assert r.length == pytest.approx(90.0)


def test_loop_pattern_is_a_closed_rectangle():
    w = loop_waypoints((5.0, 5.0), 90.0, 40.0, 20.0, laps=2, side='left')
    assert np.allclose(w[0], [5.0, 25.0])                  # the middle of the first side
    assert np.allclose(w[1], [5.0, 45.0]) and np.allclose(w[2], [-15.0, 45.0])
    assert np.allclose(w[4], [5.0, 5.0]) and np.allclose(w[8], [5.0, 5.0])
    assert len(w) == 10 and np.allclose(w[-1], w[0])
    assert build_route([(w, 3.0)], turn_radius_m=6.0).closed


def test_figure8_crosses_its_centre_at_right_angles():
    w = figure8_waypoints((10.0, 20.0), 45.0, 24.0)
    centre = np.array([10.0, 20.0])
    at_centre = [i for i in range(len(w)) if np.allclose(w[i], centre)]
    assert at_centre == [0, 4, 8] and len(w) == 9          # it ends where it began
    first = w[1] - w[0]
    second = w[5] - w[4]
    assert abs(first @ second) < 1e-9                     # the two crossings
    r = build_route([(w, 3.0)], turn_radius_m=7.0)
    assert r.closed
    k = r.curvature[r.curvature != 0.0]
    assert (k < 0).sum() == pytest.approx((k > 0).sum(), rel=0.05)   # right square, left square


def test_field_pattern_makes_serpentine_passes():
    w = field_waypoints((0.0, 0.0), 0.0, 100.0, passes=4, spacing_m=10.0, side='left')
    assert np.allclose(w, [[0, 0], [100, 0], [100, 10], [0, 10], [0, 20], [100, 20],
                           [100, 30], [0, 30]])
    r = build_route([(w, 4.0)], turn_radius_m=20.0)
    # each headland: two corners that make one half circle of radius spacing / 2
    assert np.allclose(np.abs(r.curvature[r.curvature != 0.0]), 0.2)
    # the first and the last pass keep their free end: 95 m; the inner ones 90 m
    assert r.length == pytest.approx(2 * 95.0 + 2 * 90.0 + 3 * math.pi * 5.0, abs=1e-2)


# --------------------------------------------------------------------------- packaged routes


def test_packaged_routes(vehicles):
    assert {'acre_demo', 'loop', 'figure8', 'field'} <= set(route_names())
    assert set(PATTERNS) == {'loop', 'figure8', 'field'}
    for name in route_names():
        route = load_route(name)
        assert isinstance(route, Route) and route.name == name
        tightest = 1.0 / np.abs(route.curvature).max()
        for vp in vehicles.values():    # every vehicle can drive every corner
            assert tightest > 1.1 * vp.wheelbase_m / math.tan(vp.max_steer_rad), (name, tightest)


def test_demo_route_path_keeps_clear_of_the_farmstead(scene):
    route = load_route('acre_demo')
    assert route.hold_s == pytest.approx(5.0)
    assert np.allclose(route.xy[0], [0.0, 0.0])
    assert route.speed.max() <= 6.0
    assert_clear(scene, route.xy, 'acre_demo path')
    # into the open field: the end is north of the tree line
    assert route.xy[-1, 1] > scene.spheres[:, 1].max() + scene.spheres[:, 3].max()


def test_packaged_field_routes_keep_clear_of_the_farmstead(scene):
    for name in ('loop', 'figure8', 'field', 'north_field', 'west_field'):
        route = load_route(name)
        for obstacle, d in clearances(scene, route.xy).items():
            assert d.min() >= CLEARANCE_M, (name, obstacle)


def test_closed_routes_end_where_they_start_heading_the_same_way():
    closed = {name for name in route_names() if load_route(name).closed}
    assert closed == {'loop', 'figure8', 'north_field', 'west_field'}
    for name in closed:
        route = load_route(name)
        x0, y0, yaw0 = route.start_pose()
        x1, y1, yaw1 = route.pose_at(route.length)
        assert math.hypot(x1 - x0, y1 - y0) < 0.05 and abs(math.sin(yaw1 - yaw0)) < 0.02
    # the same rectangle, stopped a quarter of a side short, is open
    w = loop_waypoints((0.0, 0.0), 0.0, 40.0, 20.0)
    assert not build_route([(np.vstack([w[:-1], [[0.0, 0.0]]]), 3.0)]).closed


def test_pose_at_and_closest_follow_the_path():
    r = build_route([([[0.0, 0.0], [50.0, 0.0], [50.0, 40.0]], 5.0)], turn_radius_m=8.0)
    assert r.pose_at(0.0) == r.start_pose() == (0.0, 0.0, 0.0)
    assert r.pose_at(20.0) == pytest.approx((20.0, 0.0, 0.0))
    x, y, yaw = r.pose_at(r.length - 10.0)               # on the last leg, heading north
    assert (x, y) == pytest.approx((50.0, 30.0), abs=1e-6) and yaw == pytest.approx(math.pi / 2)
    assert r.pose_at(1e9)[:2] == pytest.approx((50.0, 40.0))
    s, distance = r.closest(20.0, -3.0)
    assert s == pytest.approx(20.0) and distance == pytest.approx(3.0)
    s, distance = r.closest(53.0, 30.0)
    assert s == pytest.approx(r.length - 10.0) and distance == pytest.approx(3.0)


# --------------------------------------------------------------------------- closed loop


def test_polaris_drives_the_demo_route(vehicles, scene):
    route = load_route('acre_demo')
    tr = simulate(route, vehicles['polaris'])
    assert 110.0 <= tr['t'] <= 135.0                      # about two minutes
    assert np.abs(tr['xte']).max() < 1.0
    assert np.sqrt(np.mean(tr['xte'] ** 2)) < 0.4
    assert tr['speed'].max() <= 6.0 * 1.02
    assert np.hypot(tr['end'].x - route.xy[-1, 0], tr['end'].y - route.xy[-1, 1]) < 0.5
    assert np.all(tr['command'][:tr['commands_before_hold']] == 0.0)
    for key in ('footprint', 'chassis'):
        assert_clear(scene, tr[key], f'acre_demo {key}')


@pytest.mark.parametrize('vehicle', ['polaris', 'maxxum'])
def test_follower_completes_the_loop(vehicles, vehicle):
    route = load_route('loop')
    tr = simulate(route, vehicles[vehicle])
    assert np.abs(tr['xte']).max() < 1.0
    assert np.hypot(tr['end'].x - route.xy[-1, 0], tr['end'].y - route.xy[-1, 1]) < 0.5
    assert tr['speed'].max() <= 4.0 * 1.03


def test_maxxum_drives_the_figure8(vehicles):
    route = load_route('figure8')
    tr = simulate(route, vehicles['maxxum'])
    assert np.abs(tr['xte']).max() < 1.0
    assert np.hypot(tr['end'].x - route.xy[-1, 0], tr['end'].y - route.xy[-1, 1]) < 0.5


def test_follower_holds_then_stops_for_good(vehicles):
    vp = vehicles['polaris']
    route = build_route([([[0.0, 0.0], [15.0, 0.0]], 3.0)], hold_s=2.0)
    fleet = ph.Fleet([vp], [route.start_pose()])
    follower = RouteFollower(route, vp)
    commands = []
    for _ in range(30 * PHYSICS_HZ):
        c = follower.command(fleet.truth(0))
        commands.append(c)
        fleet.step([c])
    commands = np.array(commands)
    assert np.all(commands[:2 * PHYSICS_HZ] == 0.0) and commands[2 * PHYSICS_HZ, 0] > 0.0
    assert follower.done and np.all(commands[-PHYSICS_HZ:] == 0.0)
    assert fleet.states[0, ph.S_PARKED] == 1.0
    assert fleet.footprint(0).x == pytest.approx(15.0, abs=0.5)


# --------------------------------------------------------------------------- files


def _write(tmp_path, tree, name='r.yaml'):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(tree))
    return path


def same_path(a, b, tol=1e-3):
    return (np.allclose(a.xy[[0, -1]], b.xy[[0, -1]], atol=tol)
            and abs(a.length - b.length) < tol and len(a.xy) == pytest.approx(len(b.xy), abs=3))


def test_geodetic_waypoints_are_converted_to_grid(tmp_path):
    georef = packaged_site()
    grid = np.array([[0.0, 0.0], [120.0, 0.0], [120.0, 80.0]])
    frame = 'wgs84_g2139'
    navd88, undulation = georef.heights(0.0, 0.0, 0.0)
    lat, lon, _h = georef.enu_to_geodetic(grid[:, 0], grid[:, 1], np.zeros(3), 0.0, frame)
    tree = {'route': {'frame': frame, 'legs': [
        {'speed_mps': 4.0, 'waypoints': [[float(a), float(b)] for a, b in zip(lat, lon)]}]}}
    route = load_route(_write(tmp_path, tree))
    reference = build_route([(grid, 4.0)])
    assert same_path(route, reference)
    assert route.name == 'r'
    # with an explicit height the same
    tree['route']['legs'][0]['waypoints'] = [[float(a), float(b), float(navd88 + undulation)]
                                             for a, b in zip(lat, lon)]
    assert same_path(load_route(_write(tmp_path, tree)), reference)
    # and a pattern anchor
    lat0, lon0, _h = georef.enu_to_geodetic(30.0, 40.0, 0.0, 0.0, 'nad83_2011')
    tree = {'route': {'frame': 'nad83_2011', 'legs': [
        {'speed_mps': 3.0, 'pattern': 'field', 'start': [float(lat0), float(lon0)],
         'length_m': 50.0, 'passes': 2, 'spacing_m': 10.0}]}}
    assert np.allclose(load_route(_write(tmp_path, tree)).xy[0], [30.0, 40.0], atol=1e-3)


@pytest.mark.parametrize('change, fragment', [
    (lambda r: r.update(frame='utm'), "route.frame = 'utm'"),
    (lambda r: r.update(hold_s=-1.0), 'route.hold_s = -1.0 (in {path}): out of range'),
    (lambda r: r.update(turn_radus_m=5.0), "unknown key 'route.turn_radus_m' (in {path}); "
                                           "did you mean 'route.turn_radius_m'?"),
    (lambda r: r['legs'][0].update(speed_mps=0.0), 'route.legs[0].speed_mps = 0.0'),
    (lambda r: r['legs'][0].pop('speed_mps'), 'route.legs[0].speed_mps is missing'),
    (lambda r: r['legs'][0].update(waypoints=[[0.0, 0.0], [1.0]]),
     'route.legs[0].waypoints[1] = [1.0]'),
    (lambda r: r['legs'][1].update(pattern='spiral'), "route.legs[1].pattern = 'spiral'"),
    (lambda r: r['legs'][1].update(passes=2.5), 'route.legs[1].passes = 2.5'),
    (lambda r: r['legs'][1].update(side='up'), "route.legs[1].side = 'up'"),
    (lambda r: r['legs'][1].update(width_m=3.0), "unknown key 'route.legs[1].width_m'"),
    (lambda r: r.update(legs=[]), 'route.legs = []'),
    (lambda r: r['legs'][0].update(waypoints=[[0.0, 0.0], [9.0, 0.0], [0.0, 0.0]]),
     'turns back on itself'),
])
def test_route_file_errors(tmp_path, change, fragment):
    body = {'name': 'bad', 'hold_s': 1.0, 'legs': [
        {'speed_mps': 3.0, 'waypoints': [[0.0, 0.0], [20.0, 0.0]]},
        {'speed_mps': 3.0, 'pattern': 'field', 'start': [20.0, 0.0], 'heading_deg': 0.0,
         'length_m': 30.0, 'passes': 2, 'spacing_m': 10.0}]}
    change(body)
    path = _write(tmp_path, {'route': body})
    with pytest.raises(ConfigError) as err:
        load_route(path)
    assert fragment.format(path=path) in str(err.value)
    assert '\n' not in str(err.value)


def test_route_file_structure_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown route 'nowhere'.*acre_demo"):
        load_route('nowhere')
    bad = tmp_path / 'b.yaml'
    bad.write_text('route: {legs: [')
    with pytest.raises(ConfigError, match='is not valid YAML'):
        load_route(bad)
    with pytest.raises(ConfigError, match='the only key "route"'):
        load_route(_write(tmp_path, {'legs': []}))
    with pytest.raises(ConfigError, match=r'route.legs\[0\].waypoints\[0\]\[0\] = 140.0 '
                       r'.*out of range; allowed: -90 to 90 deg'):
        load_route(_write(tmp_path, {'route': {'frame': 'nad83_harn', 'legs': [
            {'speed_mps': 1.0, 'waypoints': [[140.0, 3.0], [1.0, 2.0]]}]}}))
    assert routes_dir().name == 'routes'


# --------------------------------------------------------------------------- laps


def drive(route, vp, seconds, **follower_args):
    """The follower in the block kernel (no sensors) for ``seconds``: (follower,
    every step's chassis position (N, 3) and speed (N,))."""
    from acres_sim.config.routes import packaged_site
    from acres_sim.core.block import RigSimulation
    from acres_sim.core.truth import T_P, T_V

    follower = RouteFollower(route, vp, **follower_args)
    fleet = ph.Fleet([vp], [route.pose_at(follower.start_m)])
    rates = {'imu': 100.0, 'ins': 100.0, 'gnss': 10.0, 'truth': 10.0}
    steps = int(seconds * PHYSICS_HZ)
    sim = RigSimulation(fleet, [follower], [None], [None], [None], np.zeros(3), rates, steps,
                        packaged_site())
    states = np.concatenate([sim.advance(60 * PHYSICS_HZ)[0].states
                             for _ in range(int(math.ceil((steps + 1) / (60 * PHYSICS_HZ))))])
    return follower, states[:, T_P:T_P + 3], np.linalg.norm(states[:, T_V:T_V + 3], axis=1)


def path_length(points):
    return float(np.hypot(*np.diff(points[:, :2], axis=0).T).sum())


@pytest.mark.parametrize('name, vehicle', [('loop', 'polaris'), ('figure8', 'maxxum')])
def test_laps_stop_after_that_many_laps(vehicles, name, vehicle):
    route, vp = load_route(name), vehicles[vehicle]
    follower, p, speed = drive(route, vp, 400.0, laps=3)
    assert follower.done and follower.laps_done == 3
    assert follower.distance_m == pytest.approx(3 * route.length, abs=0.5)
    # the chassis drove three laps (its own track, not the follower's count) and
    # parked back at the start, still from the time the follower said it ended
    assert path_length(p) == pytest.approx(3 * route.length, rel=0.01)
    end = int(follower.ended_s * PHYSICS_HZ)
    x0, y0, yaw0 = route.start_pose()
    ahead = chassis_in_base_footprint(vp.wheelbase_m, vp.cog_height_m)[0]   # of the rear axle
    parked = np.array([x0, y0]) + ahead * np.array([math.cos(yaw0), math.sin(yaw0)])
    assert math.hypot(*(p[-1, :2] - parked)) < 1.0
    assert np.all(speed[end + 5 * PHYSICS_HZ:] < 0.01)
    one, p, _speed = drive(route, vp, 200.0, laps=1)
    assert one.done and one.laps_done == 1 and path_length(p) == pytest.approx(route.length,
                                                                              rel=0.01)


def test_repeat_keeps_driving_for_an_hour(vehicles):
    route, vp = load_route('north_field'), vehicles['maxxum']
    follower, p, speed = drive(route, vp, 3600.0, laps=math.inf)
    assert not follower.done and follower.ended_s is None
    last_minute = speed[-60 * PHYSICS_HZ:]
    assert last_minute.mean() > 2.0 and last_minute.min() > 0.3
    laps = path_length(p) / route.length
    assert follower.laps_done == int(laps) and 15 < laps < 25     # ~3 m/s for an hour
    assert abs(follower.cross_track_error) < 1.0
    assert route.closest(*p[-1, :2])[1] < 2.0                     # still on the path


def test_a_follower_joins_and_leaves_the_route_where_it_is_told(vehicles):
    route, vp = load_route('field'), vehicles['maxxum']
    start, end = 40.0, route.length - 100.0
    follower, p, speed = drive(route, vp, 400.0, start_m=start, end_m=end)
    assert follower.done and follower.distance_m == pytest.approx(end - start, abs=0.5)
    assert path_length(p) == pytest.approx(end - start, rel=0.01)
    assert math.hypot(*(p[0, :2] - route.pose_at(start)[:2])) < 1e-9
    assert speed[-1] < 0.01
    with pytest.raises(ValueError, match="route 'field' is not closed"):
        RouteFollower(route, vp, laps=2)
