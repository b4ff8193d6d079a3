"""One descriptor (config.schema.Key) and one checker (config.validate.check)
for the sensor keys, the node parameters and the fields of a vehicle file:
the same value meets the same rule and the same message, whichever table
describes it."""

import pytest

from acres_sim.config import ConfigError, key
from acres_sim.config.node_params import (AGENT_NAMES, AGENT_PARAMS, SENSOR_NODE_PARAMS,
                                          SIM_PARAMS, sim_param)
from acres_sim.config.schema import Key
from acres_sim.config.validate import check, check_value
from acres_sim.config.routes import LEG_KEYS, ROUTE_KEYS, route_from_tree
from acres_sim.config.scenario import (ENTRY_KEYS, SCENARIO_KEYS, SPAWN_KEYS,
                                       VEHICLE_ROUTE_KEYS)
from acres_sim.config.scene import SCENE_KEYS, scene_from_tree
from acres_sim.config.terrain import TERRAIN_KEYS
from acres_sim.config.vehicles import VEHICLE_KEYS


def message(spec, value, source='f.yaml'):
    with pytest.raises(ConfigError) as err:
        check(spec, value, source)
    return str(err.value)


def test_every_table_holds_keys():
    for spec in (*SIM_PARAMS, *AGENT_PARAMS, *SENSOR_NODE_PARAMS, AGENT_NAMES,
                 *VEHICLE_KEYS.values(), *ROUTE_KEYS.values(), *LEG_KEYS.values(),
                 *SCENE_KEYS.values(), *TERRAIN_KEYS.values(), *SCENARIO_KEYS.values(),
                 *ENTRY_KEYS.values(),
                 *VEHICLE_ROUTE_KEYS.values(), *SPAWN_KEYS.values()):
        assert isinstance(spec, Key) and spec.description


def test_a_node_parameter_and_a_sensor_key_of_one_range_give_one_message():
    rate = key('gnss.hz')                               # 1 to 120 Hz
    twin = Key('rate', 'float', 10.0, 'A rate.', 'Hz', low=1.0, high=120.0)
    assert message(twin, 500.0) == message(rate, 500.0).replace('gnss.hz', 'rate')
    assert message(twin, 500.0) == 'rate = 500.0 (in f.yaml): out of range; allowed: 1 to 120 Hz'
    assert check_value('gnss.hz', 5) == check(rate, 5) == check(twin, 5) == 5.0


@pytest.mark.parametrize('value, problem', [
    (-2.0, 'out of range'), (1001, 'out of range'), (float('nan'), 'not a finite number'),
    ('fast', 'expected a number'), (True, 'expected a number'),
])
def test_sim_parameters_are_checked_like_keys(value, problem):
    text = message(sim_param('rtf'), value, 'the options')
    assert text == f'rtf = {value!r} (in the options): {problem}; allowed: 0 to 1000'


def test_integer_open_and_free_string_parameters():
    assert check(sim_param('lookahead_steps'), 6) == 6
    assert 'expected an integer' in message(sim_param('lookahead_steps'), 2.5)
    timeout = sim_param('cmd_vel.timeout_s')             # > 0 and <= 60 s
    assert 'out of range; allowed: > 0 and <= 60 s' in message(timeout, 0.0)
    assert check(timeout, 60) == 60.0
    route = next(p for p in AGENT_PARAMS if p.name == 'route')
    assert check(route, 'my/route.yaml') == 'my/route.yaml'
    assert message(route, 3).endswith('expected a string; allowed: a string')
    vehicle = next(p for p in AGENT_PARAMS if p.name == 'vehicle')
    assert 'not one of the choices; allowed: polaris or maxxum' in message(vehicle, 'tractor')


@pytest.mark.parametrize('value, problem', [
    (['a', 'b', 'a'], 'expected distinct names, at least one'),
    ([], 'expected distinct names, at least one'),
    ('agent0', 'expected a list of names'),
    (['a', 5], 'expected a list of names'),
])
def test_vehicle_names_are_a_list_of_distinct_names(value, problem):
    assert message(AGENT_NAMES, value) == (f'agents.names = {value!r} (in f.yaml): {problem}; '
                                           'allowed: a list of distinct names')
    assert check(AGENT_NAMES, ('a', 'b')) == ['a', 'b']


def test_vehicle_fields_use_the_same_checker():
    mass = VEHICLE_KEYS['mass_kg']                      # >= 10 and <= 1e5 kg
    assert mass.name == 'vehicle.mass_kg'
    assert message(mass, 5.0) == ('vehicle.mass_kg = 5.0 (in f.yaml): out of range; '
                                  'allowed: 10 to 100000 kg')
    inertia = VEHICLE_KEYS['ixx_kgm2']                  # > 0
    assert 'allowed: > 0 and <= 10000000 kg m^2' in message(inertia, 0.0)
    assert check(inertia, 1) == 1.0


def test_route_and_scene_fields_give_the_message_of_their_key():
    def error(read, tree):
        with pytest.raises(ConfigError) as err:
            read(tree, 'f.yaml')
        return str(err.value)
    legs = [{'speed_mps': 40.0, 'waypoints': [[0.0, 0.0], [9.0, 0.0]]}]
    assert error(route_from_tree, {'route': {'legs': legs}}) == message(
        LEG_KEYS['speed_mps'], 40.0).replace('speed_mps', 'route.legs[0].speed_mps')
    assert error(route_from_tree, {'route': {'hold_s': 'x', 'legs': legs}}) == message(
        ROUTE_KEYS['hold_s'], 'x')
    bins = [{'center': [0, 0], 'radius': 0.0, 'bottom': 0, 'top': 5}]
    assert error(scene_from_tree, {'scene': {'grain_bins': bins}}) == message(
        SCENE_KEYS['radius'], 0.0).replace('radius', 'scene.grain_bins[0].radius', 1)
