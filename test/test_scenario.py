"""Scenario files (acres_sim.config.scenario): reading and checking them, where
the vehicles spawn and how they drive, and what of it reaches the nodes and the
recorder."""

import json
import math

import numpy as np
import pytest
import yaml

from acres_sim.config import ConfigError
from acres_sim.config.routes import load_route
from acres_sim.config.scenario import (VEHICLE_LENGTH_M, Scenario, ScenarioVehicle, Spawn,
                                       load_scenario, node_parameters, read_scenario,
                                       resolve_scenario, run_site, vehicle_copies,
                                       vehicle_motion, vehicle_of_parameters)
from acres_sim.config.vehicles import load_vehicle
from acres_sim.rig import RigOptions, rig_nodes


def write(tmp_path, tree, name='scenario.yaml'):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


def polaris(**entry):
    return {'name': 'p', 'model': 'polaris', **entry}


# --------------------------------------------------------------------------- the packaged one


def test_the_packaged_fleet_is_three_vehicles_on_routes_of_their_own():
    fleet = load_scenario('fleet')
    assert (fleet.duration_s, fleet.seed) == (3600.0, 1)
    assert [(v.name, v.model, v.route, v.laps, v.repeat) for v in fleet.vehicles] == [
        ('polaris', 'polaris', 'loop', 0, True), ('maxxum1', 'maxxum', 'north_field', 0, True),
        ('maxxum2', 'maxxum', 'west_field', 10, False)]
    # the Maxxum given in latitude / longitude spawns at its route's start
    north = load_route('north_field')
    assert math.dist(fleet.vehicles[1].spawn[:2], north.start_pose()[:2]) < 0.05
    assert fleet.vehicles[1].route_start_m < 0.05
    # the three routes keep 10 m apart: the vehicles never meet
    paths = [load_route(v.route).xy for v in fleet.vehicles]
    for i, a in enumerate(paths):
        for b in paths[i + 1:]:
            gaps = np.hypot(a[:, None, 0] - b[None, ::8, 0], a[:, None, 1] - b[None, ::8, 1])
            assert gaps.min() > 10.0
    assert fleet.vehicles[2].sensors == {'gnss.hz': 5.0}


def test_a_scenario_is_resolved_once():
    fleet = load_scenario('fleet')
    assert fleet.resolved and resolve_scenario(fleet, run_site()) is fleet
    assert rig_nodes(fleet) == rig_nodes('fleet')
    with pytest.raises(ValueError, match='as read'):
        resolve_scenario(fleet, run_site(), agents=1)


def test_the_fleet_reaches_the_nodes():
    nodes = {n.full_name: n for n in rig_nodes('fleet')}
    sim = nodes['/sim_node'].parameters
    assert (sim['duration_s'], sim['rtf']) == (3600.0, 1.0)
    assert sim['agents.polaris.repeat'] is True and sim['agents.maxxum2.laps'] == 10
    assert sim['agents.polaris.spawn'] == [50.0, 100.0, 0.0]
    assert sim['agents.maxxum1.seed'] == nodes['/maxxum2/gnss_node'].parameters['seed'] == 1
    assert nodes['/maxxum2/gnss_node'].parameters['gnss.hz'] == 5.0
    assert nodes['/polaris/gnss_node'].parameters['gnss.hz'] == 10.0
    # the options of the run win over the file
    sim = rig_nodes('fleet', RigOptions(duration_s=60.0, rtf=0.0, seed=9))[0].parameters
    assert (sim['duration_s'], sim['rtf'], sim['agents.maxxum2.seed']) == (60.0, 0.0, 9)


# --------------------------------------------------------------------------- the file


def test_a_scenario_names_its_files_relative_to_itself(tmp_path):
    (tmp_path / 'sub').mkdir()
    route = load_route('loop')
    (tmp_path / 'sub' / 'my_route.yaml').write_text(yaml.safe_dump({'route': {
        'legs': [{'speed_mps': 2.0, 'waypoints': route.xy[::40].tolist()}]}}))
    (tmp_path / 'sub' / 'my_scene.yaml').write_text('scene:\n  buildings: []\n')
    path = write(tmp_path / 'sub', {'scene': 'my_scene.yaml', 'rtf': 2.0, 'vehicles': [
        polaris(route='my_route.yaml')]})
    scenario = read_scenario(path)
    assert scenario.scene == str(tmp_path / 'sub' / 'my_scene.yaml')
    assert scenario.vehicles[0].route == str(tmp_path / 'sub' / 'my_route.yaml')
    nodes = rig_nodes(str(path))
    assert nodes[0].parameters['scene'] == scenario.scene == nodes[1].parameters['scene']
    assert nodes[0].parameters['rtf'] == 2.0
    assert nodes[0].parameters['agents.p.route'] == scenario.vehicles[0].route
    # --scene on the command line wins
    other = tmp_path / 'other_scene.yaml'
    other.write_text('scene: {}\n')
    assert rig_nodes(str(path), RigOptions(scene=str(other)))[1].parameters['scene'] == \
        str(other)


def test_a_spawn_in_latitude_and_longitude_is_converted_with_the_site(tmp_path):
    site = run_site()
    navd88, undulation = site.heights(0.0, 0.0, 0.0)
    lat, lon, _h = site.enu_to_geodetic(200.0, 300.0, 0.0, 0.0, 'nad83_2011')
    path = write(tmp_path, {'vehicles': [polaris(
        parked=True, spawn={'lat_deg': float(lat), 'lon_deg': float(lon), 'heading_deg': 90.0,
                            'frame': 'nad83_2011'})]})
    spawn = load_scenario(path).vehicles[0].spawn
    east, north, _u = site.geodetic_to_enu(float(lat), float(lon), float(navd88 + undulation),
                                           0.0, 'nad83_2011')
    assert (spawn.east_m, spawn.north_m) == pytest.approx((float(east), float(north)), abs=1e-9)
    assert math.dist((spawn.east_m, spawn.north_m), (200.0, 300.0)) < 0.1
    assert spawn.yaw_rad == pytest.approx(math.pi / 2)


def test_a_spawn_beside_the_route_joins_it_at_the_closest_point(tmp_path):
    path = write(tmp_path, {'vehicles': [polaris(
        route='field', spawn={'east_m': -20.0, 'north_m': 103.0, 'heading_deg': 0.0})]})
    vehicle = load_scenario(path).vehicles[0]
    assert vehicle.route_start_m == pytest.approx(40.0, abs=1e-6)   # field starts at (-60, 100)
    motion = vehicle_motion(vehicle, load_vehicle('polaris'))
    assert motion.spawn == (-20.0, 103.0, 0.0) and motion.follower.start_m == vehicle.route_start_m


@pytest.mark.parametrize('entry, message', [
    ({'route': {'name': 'field', 'laps': 2}}, "laps = 2 for {path}: vehicle p: route 'field' is "
                                              'not closed'),
    ({'route': {'name': 'acre_demo', 'repeat': True}}, "route 'acre_demo' is not closed"),
    ({'route': {'name': 'loop', 'laps': 2, 'repeat': True}},
     'vehicles[0].route.laps = 2 (in {path}): given with repeat: true'),
    ({'route': {'name': 'loop', 'laps': 0}}, 'vehicles[0].route.laps = 0 (in {path})'),
    ({'route': {'laps': 2}}, 'vehicles[0].route.name is missing (in {path})'),
    ({'route': {'name': 'loop', 'lap': 2}},
     "unknown key 'vehicles[0].route.lap' (in {path}); did you mean 'vehicles[0].route.laps'?"),
    ({'route': 'nowhere'}, "unknown route 'nowhere'"),
    ({'parked': True, 'route': 'loop'}, 'vehicles[0].route = '),
    ({'parked': 'yes'}, "vehicles[0].parked = 'yes' (in {path}): expected true or false"),
    ({'spawn': {'east_m': 0.0, 'north_m': 0.0}}, 'vehicles[0].spawn.heading_deg is missing'),
    ({'spawn': {'east_m': 0.0, 'north_m': 0.0, 'heading_deg': 0.0, 'up_m': 1.0}},
     "unknown key 'vehicles[0].spawn.up_m' (in {path}); allowed: east_m, north_m, heading_deg"),
    ({'spawn': {'east_m': 3e5, 'north_m': 0.0, 'heading_deg': 0.0}},
     'vehicles[0].spawn.east_m = 300000.0 (in {path}): out of range; allowed: -100000 to 100000 m'),
    ({'spawn': {'lat_deg': 95.0, 'lon_deg': 0.0, 'heading_deg': 0.0}},
     'vehicles[0].spawn.lat_deg = 95.0'),
    ({'spawn': {'lat_deg': 40.0, 'lon_deg': -87.0, 'heading_deg': 0.0, 'frame': 'itrf'}},
     "vehicles[0].spawn.frame = 'itrf'"),
    ({'spawn': {'lat_deg': 10.0, 'lon_deg': -87.0, 'heading_deg': 0.0}, 'parked': True},
     'from the tile; allowed: within 100 km'),
    ({'spawn': {'east_m': 0.0, 'north_m': 30.0, 'heading_deg': 0.0}},
     "(0.0, 30.0) m is 30.0 m from its route 'acre_demo'; allowed: within 20 m"),
    ({'vehicle': 'polaris'}, 'vehicles[0].vehicle = '),
    ({'model': 'tractor'}, "vehicles[0].model = 'tractor' (in {path}): not one of the choices; "
                           'allowed: polaris or maxxum'),
    ({'sensors': {'gnss': {'hz': 0.0}}}, 'gnss.hz = 0.0'),
])
def test_vehicle_mistakes_are_one_line_naming_item_value_and_file(tmp_path, entry, message):
    path = write(tmp_path, {'vehicles': [polaris(**entry)]})
    with pytest.raises(ConfigError) as err:
        load_scenario(path)
    text = str(err.value)
    assert message.format(path=path) in text and '\n' not in text, text
    assert str(path) in text or 'unknown route' in text


@pytest.mark.parametrize('top, message', [
    ({'duration_s': -1.0}, 'duration_s = -1.0 (in {path}): out of range; allowed: 0 to 604800 s'),
    ({'seed': 'x'}, "seed = 'x' (in {path})"),
    ({'rtf': -2.0}, 'rtf = -2.0 (in {path})'),
    ({'scene': 3}, 'scene = 3 (in {path})'),
    ({'sky': 'blue'}, "unknown key 'sky' (in {path}); allowed: description, site, scene"),
])
def test_scenario_mistakes_are_one_line(tmp_path, top, message):
    path = write(tmp_path, {**top, 'vehicles': [polaris()]})
    with pytest.raises(ConfigError) as err:
        read_scenario(path)
    assert message.format(path=path) in str(err.value)


def test_a_bad_scene_or_site_of_a_scenario_is_named(tmp_path):
    path = write(tmp_path, {'scene': 'no_scene.yaml', 'vehicles': [polaris()]})
    with pytest.raises(ConfigError, match='no_scene.yaml'):
        rig_nodes(str(path))
    path = write(tmp_path, {'site': 'no_site.yaml', 'vehicles': [polaris()]})
    with pytest.raises(ConfigError, match='site file .*no_site.yaml'):
        rig_nodes(str(path))


# --------------------------------------------------------------------------- placing


def spawns(scenario):
    return [v.spawn for v in scenario.vehicles]


def test_vehicles_on_one_route_start_one_behind_the_other_and_stop_so(tmp_path):
    path = write(tmp_path, {'vehicles': [
        polaris(name='a', namespace='a', frame_prefix='a/'),
        {'name': 'b', 'model': 'maxxum', 'namespace': 'b', 'frame_prefix': 'b/',
         'route': 'acre_demo'},
        polaris(name='c', namespace='c', frame_prefix='c/', route='loop')]})
    a, b, c = load_scenario(path).vehicles
    route = load_route('acre_demo')
    gap = VEHICLE_LENGTH_M['maxxum'] + 5.0
    assert (a.route_start_m, b.route_start_m) == (0.0, pytest.approx(gap))
    assert a.route_end_m == pytest.approx(route.length - gap) and b.route_end_m is None
    assert tuple(b.spawn) == pytest.approx(route.pose_at(gap))
    assert tuple(c.spawn) == load_route('loop').start_pose() and c.route_end_m is None


def test_parked_vehicles_stand_side_by_side():
    vehicles = vehicle_copies('maxxum', 3, parked=True)
    x0, y0, yaw = load_route('field').start_pose()
    assert np.allclose([v.spawn for v in vehicles], [(x0, y0 + k * 9.6, yaw) for k in range(3)])
    motion = vehicle_motion(vehicles[2], load_vehicle('maxxum'))
    assert motion.parked and motion.spawn == tuple(vehicles[2].spawn)


def test_agents_round_a_closed_route_are_spaced_round_it():
    route = load_route('figure8')
    vehicles = vehicle_copies('maxxum', 4, route='figure8', repeat=True)
    starts = [v.route_start_m for v in vehicles]
    assert starts == pytest.approx([0.0, 9.6, 19.2, 28.8])
    assert all(v.repeat and v.route_end_m is None for v in vehicles)
    for v in vehicles:
        assert tuple(v.spawn) == pytest.approx(route.pose_at(v.route_start_m))


def test_no_two_spawns_closer_than_a_vehicle_length(tmp_path):
    path = write(tmp_path, {'vehicles': [
        polaris(name='a', namespace='a', frame_prefix='a/', parked=True,
                spawn={'east_m': 0.0, 'north_m': 0.0, 'heading_deg': 0.0}),
        {'name': 'b', 'model': 'maxxum', 'namespace': 'b', 'frame_prefix': 'b/', 'parked': True,
         'spawn': {'east_m': 4.0, 'north_m': 0.0, 'heading_deg': 90.0}}]})
    with pytest.raises(ConfigError) as err:
        load_scenario(path)
    assert str(err.value) == (f"{path}: vehicles a and b spawn 4.00 m apart; allowed: at "
                              "least 4.6 m (the longer one's length)")
    # every pair of the copies is checked too
    for n in (2, 5):
        places = spawns(resolve_scenario(read_scenario('polaris'), run_site(), agents=n))
        for i, p in enumerate(places):
            assert all(math.dist(p[:2], q[:2]) >= VEHICLE_LENGTH_M['polaris'] for q in
                       places[i + 1:])


def test_too_many_agents_for_the_route_are_refused():
    with pytest.raises(ConfigError) as err:
        vehicle_copies('polaris', 70)
    assert "agents = 70 (in the polaris rig): 70 vehicles on route 'acre_demo' need 564 m, " \
        '8.05 m apart' in str(err.value) and 'at most 60 there' in str(err.value)


# --------------------------------------------------------------------------- both drivers


def test_the_sim_nodes_parameters_give_back_the_vehicle():
    for vehicle in (*vehicle_copies('polaris', 2), *vehicle_copies('maxxum', 2, 'loop', 3)):
        back = vehicle_of_parameters(vehicle.name, node_parameters(vehicle))
        assert back == ScenarioVehicle(vehicle.name, vehicle.model, vehicle.namespace,
                                       vehicle.frame_prefix, route=vehicle.route_or_default,
                                       laps=vehicle.laps, repeat=vehicle.repeat,
                                       parked=vehicle.parked, spawn=vehicle.spawn,
                                       route_start_m=vehicle.route_start_m,
                                       route_end_m=vehicle.route_end_m)
    # a sim node started by hand, without a spawn: on its route at route_start_m
    values = node_parameters(vehicle_copies('maxxum')[0]) | {'spawn': None,
                                                             'route_start_m': 30.0}
    motion = vehicle_motion(vehicle_of_parameters('x', values), load_vehicle('maxxum'))
    assert motion.spawn == load_route('field').pose_at(30.0)


def test_a_scenario_record_is_plain_data():
    """What a driver needs of a vehicle is in its record (nothing to look up later)."""
    vehicle = load_scenario('fleet').vehicles[2]
    assert isinstance(vehicle.spawn, Spawn) and isinstance(load_scenario('fleet'), Scenario)
    assert (vehicle.model, vehicle.namespace, vehicle.frame_prefix, vehicle.agent_index,
            vehicle.laps) == ('maxxum', 'maxxum2', 'maxxum2/', 2, 10)


def test_the_recorder_places_its_agents_apart_and_parks_them_when_asked(tmp_path):
    from acres_sim.record.runner import RecordRequest, record
    from acres_sim.rig import RigOptions

    def first_and_last(folder):
        rows = [json.loads(line) for line in (folder / 'truth.jsonl').open()]
        return (np.array(rows[0]['chassis']['position_enu_m']),
                np.array(rows[-1]['chassis']['position_enu_m']))

    out = tmp_path / 'two'
    record(RecordRequest('polaris', out, RigOptions(duration_s=7.0, agents=2), progress=False))
    (a0, a1), (b0, b1) = first_and_last(out / 'agent0'), first_and_last(out / 'agent1')
    assert b0[:2] == pytest.approx([8.05, 0.0]) and a0[:2] == pytest.approx([0.0, 0.0])
    assert a1[0] > 1.0 and b1[0] > 9.0                      # both drive after the 5 s hold
    out = tmp_path / 'parked'
    record(RecordRequest('polaris', out, RigOptions(duration_s=7.0), progress=False,
                         parked=True))
    first, last = first_and_last(out)
    assert np.allclose(first, last, atol=1e-6)


def test_the_field_day_scenario_rides_the_acre_terrain_with_vibration():
    from acres_sim.rig import resolve_run

    run = resolve_run('field_day')
    assert run.sim_values['terrain'] == 'acre'
    assert [v.model for v in run.scenario.vehicles] == ['polaris', 'maxxum']
    for config in run.configs:
        assert config['vibration.engine'] and config['vibration.parked_jitter']
    # the command line wins: flat ground and no vibration, today's plane
    run = resolve_run('field_day', RigOptions(terrain='flat', overrides={
        'vibration.engine': False, 'vibration.parked_jitter': False}))
    assert run.sim_values['terrain'] == 'flat'
    assert not any(c['vibration.engine'] for c in run.configs)
    sim = rig_nodes('field_day')[0].parameters
    assert sim['terrain'] == 'acre'
