"""acres_sim.rig: rig and scenario files -> the node list of the launch files and
`acres-sim up`, and the parameter files `acres-sim up` writes for it."""

import math
from pathlib import Path

import yaml
import pytest

from acres_sim.config import KEYS, ConfigError, load_config
from acres_sim.config.node_params import AGENT_PARAMS, SENSOR_NODE_PARAMS, SIM_PARAMS
from acres_sim.config.scenario import Scenario, ScenarioVehicle, read_scenario
from acres_sim.fastdds_profile import PROFILES, fastdds_major
from acres_sim.rig import RigOptions, rig_names, rig_nodes, ros_parameter_value
from acres_sim.up import node_command, params_document

SIM_KEYS = {p.name for p in SIM_PARAMS}


def by_name(nodes):
    return {node.full_name: node for node in nodes}


def test_packaged_rigs():
    assert rig_names() == ['barn_denial', 'field_day', 'fleet', 'imu_bias_step', 'maxxum',
                           'mixed', 'polaris', 'rtk_outage', 'tree_line']
    mixed = read_scenario('mixed')
    assert [(a.name, a.model, a.namespace, a.frame_prefix, a.agent_index)
            for a in mixed.vehicles] == [('polaris', 'polaris', 'polaris', 'polaris/', 0),
                                       ('maxxum1', 'maxxum', 'maxxum1', 'maxxum1/', 1),
                                       ('maxxum2', 'maxxum', 'maxxum2', 'maxxum2/', 2)]


@pytest.mark.parametrize('rig', ['polaris', 'maxxum'])
def test_one_vehicle_rig_is_three_nodes_with_the_packaged_configuration(rig):
    nodes = rig_nodes(rig)
    assert [(n.executable, n.full_name) for n in nodes] == [
        ('sim_node', '/sim_node'), ('gnss_node', '/gnss_node'), ('imu_node', '/imu_node')]
    sim, gnss, imu = nodes
    config = load_config(rig=rig)
    for key in KEYS:    # every sensor key, as the packaged files resolve it
        expected = ros_parameter_value(key.name, config[key.name])
        if expected is None:
            assert key.name not in gnss.parameters
            continue
        assert gnss.parameters[key.name] == expected, key.name
        assert imu.parameters[key.name] == expected, key.name
        assert sim.parameters[f'agents.agent0.{key.name}'] == expected, key.name
    assert sim.parameters['agents.names'] == ['agent0']
    assert sim.parameters['agents.agent0.vehicle'] == rig
    assert sim.parameters['agents.agent0.route'] == {'polaris': 'acre_demo',
                                                     'maxxum': 'field'}[rig]
    start = {'polaris': [0.0, 0.0, 0.0], 'maxxum': [-60.0, 100.0, 0.0]}[rig]
    assert sim.parameters['agents.agent0.spawn'] == start      # the route's start
    assert (sim.parameters['agents.agent0.laps'], sim.parameters['agents.agent0.repeat'],
            sim.parameters['agents.agent0.parked']) == (0, False, False)
    assert sim.parameters['scene'] == '' and 'scene' not in imu.parameters
    assert gnss.parameters['scene'] == ''                       # the packaged farmstead
    assert SIM_KEYS <= set(sim.parameters)
    assert {p.name for p in SENSOR_NODE_PARAMS} <= set(gnss.parameters)
    assert sim.parameters['use_sim_time'] is False      # the sim is the clock
    assert gnss.parameters['use_sim_time'] is imu.parameters['use_sim_time'] is True
    assert all(n.parameters['output_depth'] == 10 for n in nodes)
    assert all(n.parameters['ack_every_steps'] == 0 for n in nodes)     # real time: no waits


def test_agents_copy_the_vehicle_with_namespaces_prefixes_and_indices():
    nodes = by_name(rig_nodes('polaris', RigOptions(agents=3, seed=7)))
    assert sorted(nodes) == ['/agent1/gnss_node', '/agent1/imu_node', '/agent2/gnss_node',
                             '/agent2/imu_node', '/gnss_node', '/imu_node', '/sim_node']
    sim = nodes['/sim_node'].parameters
    assert sim['agents.names'] == ['agent0', 'agent1', 'agent2']
    for k in range(3):
        agent = f'agents.agent{k}.'
        assert sim[agent + 'agent.index'] == k
        assert sim[agent + 'namespace'] == ('' if k == 0 else f'agent{k}')
        assert sim[agent + 'frame_prefix'] == ('' if k == 0 else f'agent{k}/')
        assert sim[agent + 'seed'] == 7
    # one behind the other along the route, a Polaris length and 5 m apart
    spawns = [sim[f'agents.agent{k}.spawn'] for k in range(3)]
    starts = [sim[f'agents.agent{k}.route_start_m'] for k in range(3)]
    assert starts == pytest.approx([0.0, 8.05, 16.1])
    assert all(math.dist(a[:2], b[:2]) > 3.05 for a, b in zip(spawns, spawns[1:]))
    gnss2 = nodes['/agent2/gnss_node'].parameters
    assert (gnss2['agent.index'], gnss2['frame_prefix'], gnss2['seed']) == (2, 'agent2/', 7)


def test_mixed_rig_gives_each_vehicle_its_overlay():
    nodes = by_name(rig_nodes('mixed'))
    assert len(nodes) == 7
    sim = nodes['/sim_node'].parameters
    polaris, maxxum = load_config(rig='polaris'), load_config(rig='maxxum')
    assert sim['agents.polaris.gnss.antenna_flu_m'] == polaris['gnss.antenna_flu_m']
    assert sim['agents.maxxum2.gnss.antenna_flu_m'] == maxxum['gnss.antenna_flu_m']
    assert polaris['gnss.antenna_flu_m'] != maxxum['gnss.antenna_flu_m']
    assert nodes['/maxxum2/imu_node'].parameters['vehicle'] == 'maxxum'
    assert nodes['/maxxum2/imu_node'].parameters['agent.index'] == 2
    assert sim['agents.maxxum2.route'] == 'loop'


def test_options_reach_the_nodes():
    options = RigOptions(noise=False, rtf=0.0, duration_s=30.0, route='loop',
                         overrides={'gnss.hz': 5.0, 'imu.enabled': False},
                         add_outages=('10:20',), sim={'cmd_vel.type': 'twist_stamped'},
                         use_sim_time=False)
    nodes = rig_nodes('maxxum', options)
    assert [n.executable for n in nodes] == ['sim_node', 'gnss_node']   # the IMU is off
    sim, gnss = (n.parameters for n in nodes)
    assert (sim['rtf'], sim['duration_s'], sim['cmd_vel.type']) == (0.0, 30.0, 'twist_stamped')
    assert sim['output_depth'] == gnss['output_depth'] == 1200    # rtf 0: deep histories,
    assert sim['ack_every_steps'] == gnss['ack_every_steps'] == 240   # paced by the acks
    variable, file = PROFILES[fastdds_major()]             # the installed Fast DDS's
    profile = Path(nodes[0].env[variable])
    assert profile.name == file and profile.is_file()
    assert all(n.env == nodes[0].env for n in nodes)
    assert rig_nodes('maxxum')[0].env == {}                       # only at rtf 0
    assert sim['agents.agent0.route'] == 'loop'
    assert gnss['gnss.hz'] == 5.0 and gnss['noise'] is False and gnss['use_sim_time'] is False
    assert gnss['gnss.corrections.outages_s'] == ['10.0:20.0']


@pytest.mark.parametrize('options, message', [
    (RigOptions(agents=0), 'agents = 0: allowed 1 to 100'),
    (RigOptions(rtf=-1.0), 'rtf = -1.0'),
    (RigOptions(overrides={'gnss.hz': 500.0}), 'gnss.hz = 500.0'),
    (RigOptions(overrides={'gnss.hzz': 5.0}), "unknown key 'gnss.hzz'"),
    (RigOptions(sim={'rtff': 1.0}), "unknown sim node parameter 'rtff'"),
    (RigOptions(route='nowhere'), "unknown route 'nowhere'"),
])
def test_bad_options_are_one_config_error(options, message):
    with pytest.raises(ConfigError, match=message.replace('.', r'\.').replace('(', r'\(')):
        rig_nodes('polaris', options)


def test_agents_on_a_route_they_drive_once_stop_one_behind_the_other():
    sim = rig_nodes('maxxum', RigOptions(agents=3))[0].parameters
    ends = [sim[f'agents.agent{k}.route_end_m'] for k in range(3)]
    assert ends[2] == 0.0                                       # the leader: the route's end
    gap = 4.6 + 5.0
    assert ends[1] - ends[0] == pytest.approx(gap) and ends[1] > 0.0
    assert sim['agents.agent2.route_start_m'] - sim['agents.agent1.route_start_m'] == \
        pytest.approx(gap)


def test_agents_round_a_closed_route_keep_their_laps():
    sim = rig_nodes('polaris', RigOptions(agents=2, route='loop', laps=3))[0].parameters
    assert [sim[f'agents.agent{k}.laps'] for k in range(2)] == [3, 3]
    assert [sim[f'agents.agent{k}.route_end_m'] for k in range(2)] == [0.0, 0.0]
    with pytest.raises(ConfigError, match=r"laps = 3 .*route 'acre_demo' is not closed"):
        rig_nodes('polaris', RigOptions(laps=3))
    with pytest.raises(ConfigError, match='agents = 30 .*at most 20 there'):
        rig_nodes('polaris', RigOptions(agents=30, route='loop', repeat=True))


def test_agents_copies_that_would_clash_are_refused(tmp_path):
    path = tmp_path / 'one.yaml'
    path.write_text('vehicles: [{name: agent1, vehicle: polaris, namespace: agent1, '
                    'frame_prefix: agent1/}]')
    with pytest.raises(ConfigError, match='same name'):
        rig_nodes(str(path), RigOptions(agents=3))


def test_agents_of_a_several_vehicle_rig_are_refused():
    with pytest.raises(ConfigError, match='has 3 vehicles'):
        rig_nodes('mixed', RigOptions(agents=2))
    assert len(rig_nodes('mixed', RigOptions(agents=3))) == 7


@pytest.mark.parametrize('text, message', [
    ('vehicles: []', 'non-empty list'),
    ('vehicles: [{vehicle: tractor}]', "vehicle = 'tractor'"),
    ('vehicles: [{vehicle: polaris, namespace: "a b"}]', "namespace = 'a b'"),
    ('vehicles: [{vehicle: polaris, frame_prefix: agent1}]', "frame_prefix = 'agent1'"),
    ('vehicles: [{vehicle: polaris, colour: red}]', "unknown key 'vehicles\\[0\\].colour'"),
    ('vehicles: [{vehicle: polaris, sensors: {gnss: {hz: 0.0}}}]', 'gnss.hz = 0.0'),
    ('vehicles: [{vehicle: polaris, agent_index: -1}]', 'agent_index = -1'),
    ('vehicles: [{vehicle: polaris}, {vehicle: maxxum}]', 'same namespace'),
    ('wheels: 4\nvehicles: [{vehicle: polaris}]', "unknown key 'wheels'"),
    ('vehicles: [{vehicle: polaris, name: names}]', "name = 'names' .*taken"),
])
def test_bad_rig_files_name_the_entry(tmp_path, text, message):
    path = tmp_path / 'bad.yaml'
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        read_scenario(path)
    assert str(path) in str(err.value)


def test_vehicles_of_a_file_on_one_route_are_placed_apart(tmp_path):
    """Two vehicles of a rig file on the same route (here the default one)
    start one behind the other, not on one spot (their truth was the same)."""
    path = tmp_path / 'two.yaml'
    path.write_text(yaml.safe_dump({'vehicles': [
        {'name': 'a', 'vehicle': 'polaris', 'namespace': 'a', 'frame_prefix': 'a/'},
        {'name': 'b', 'vehicle': 'maxxum', 'namespace': 'b', 'frame_prefix': 'b/',
         'route': 'acre_demo'}]}))
    sim = rig_nodes(str(path))[0].parameters
    assert sim['agents.a.spawn'] == [0.0, 0.0, 0.0]
    assert sim['agents.b.route_start_m'] == pytest.approx(4.6 + 5.0)   # the longer one's gap


def test_rig_file_sensor_keys_apply_to_their_vehicle(tmp_path):
    path = tmp_path / 'two.yaml'
    path.write_text(yaml.safe_dump({'vehicles': [
        {'name': 'a', 'vehicle': 'polaris', 'namespace': 'a', 'frame_prefix': 'a/',
         'sensors': {'gnss': {'hz': 2.0}}},
        {'name': 'b', 'vehicle': 'polaris', 'namespace': 'b', 'frame_prefix': 'b/',
         'agent_index': 5}]}))
    nodes = by_name(rig_nodes(str(path)))
    assert nodes['/a/gnss_node'].parameters['gnss.hz'] == 2.0
    assert nodes['/b/gnss_node'].parameters['gnss.hz'] == 10.0
    assert nodes['/b/gnss_node'].parameters['agent.index'] == 5
    assert nodes['/sim_node'].parameters['agents.names'] == ['a', 'b']


def test_vehicles_of_a_rig_share_the_world(tmp_path):
    path = tmp_path / 'zones.yaml'
    path.write_text(yaml.safe_dump({'vehicles': [
        {'name': 'a', 'vehicle': 'polaris', 'namespace': 'a', 'frame_prefix': 'a/'},
        {'name': 'b', 'vehicle': 'maxxum', 'namespace': 'b', 'frame_prefix': 'b/',
         'sensors': {'ins': {'utm_zone': 17}}}]}))
    with pytest.raises(ConfigError, match="ins.utm_zone = 17 for vehicle b but 16 for a"):
        rig_nodes(str(path))


def test_a_profile_of_the_users_own_is_kept():
    from acres_sim.fastdds_profile import fast_repair_environment

    assert fast_repair_environment({'FASTRTPS_DEFAULT_PROFILES_FILE': '/mine.xml'}) == {}
    assert fast_repair_environment({'FASTDDS_DEFAULT_PROFILES_FILE': '/mine.xml'}) == {}
    assert fast_repair_environment({'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}) == {}
    assert fast_repair_environment({}) != {}


def test_unknown_rig():
    with pytest.raises(ConfigError, match="unknown rig 'tank'; packaged: barn_denial, field_day, "
                                          "fleet, imu_bias_step, maxxum, mixed, polaris, "
                                          "rtk_outage, tree_line"):
        read_scenario('tank')


def test_agent_parameters_cover_the_node_table():
    vehicle = ScenarioVehicle('v', 'maxxum', 'v', 'v/')
    sim = rig_nodes(Scenario('x', '', (vehicle,)))[0].parameters
    assert {f'agents.v.{p.name}' for p in AGENT_PARAMS} <= set(sim)


def test_parameter_file_and_command_of_a_node(tmp_path):
    """The parameter file reads back, nested by the dots, with every value typed
    as rcl types it (floats with a point), and the command names the node."""
    node = by_name(rig_nodes('polaris', RigOptions(agents=2)))['/agent1/imu_node']
    text = params_document(node)
    tree = yaml.safe_load(text)['/**']['ros__parameters']

    def flat(t, prefix=''):
        for name, value in t.items():
            if isinstance(value, dict):
                yield from flat(value, f'{prefix}{name}.')
            else:
                yield f'{prefix}{name}', value
    assert dict(flat(tree)) == node.parameters
    assert 'hz: 100.0' in text and 'delay_s: 0.05' in text
    command = node_command(node, tmp_path / 'p.yaml')
    assert command[1:] == ['-m', 'acres_sim.ros.imu_node', '--ros-args', '-r',
                           '__node:=imu_node', '-r', '__ns:=/agent1', '--params-file',
                           str(tmp_path / 'p.yaml')]


DISCOVERY = ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_STATIC_PEERS',
             'ROS_DISTRO')
LOOPBACK = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}


def ros_env(node):
    return {k: v for k, v in node.env.items() if k.startswith('ROS_')}


@pytest.mark.parametrize('user, network, added, said', [
    ({}, 'loopback', LOOPBACK, 'DDS stays on this machine'),
    ({'ROS_DISTRO': 'jazzy'}, 'loopback', LOOPBACK, 'ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST'),
    ({'ROS_DISTRO': 'humble'}, 'loopback', {'ROS_LOCALHOST_ONLY': '1'}, 'ROS_LOCALHOST_ONLY=1'),
    ({}, 'lan', {}, 'on the local network'),
    ({'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET'}, 'loopback', {},
     'as you set it: ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET'),
    ({'ROS_LOCALHOST_ONLY': '0'}, 'loopback', {'ROS_LOCALHOST_ONLY': ''},
     'as you set it: ROS_LOCALHOST_ONLY=0'),
    # Jazzy warns of the old variable in every node, Kilted ignores it: passed on in the new
    ({'ROS_LOCALHOST_ONLY': '1'}, 'loopback',
     {**LOOPBACK, 'ROS_LOCALHOST_ONLY': '', 'ROS_STATIC_PEERS': ''}, 'your ROS_LOCALHOST_ONLY=1'),
    ({'ROS_LOCALHOST_ONLY': '1', 'ROS_DISTRO': 'kilted'}, 'lan',
     {**LOOPBACK, 'ROS_LOCALHOST_ONLY': '', 'ROS_STATIC_PEERS': ''}, 'stays on this machine'),
    ({'ROS_LOCALHOST_ONLY': '1', 'ROS_DISTRO': 'humble'}, 'loopback', {}, 'as you set it'),
    ({'ROS_STATIC_PEERS': '192.0.2.7'}, 'loopback', {}, 'ROS_STATIC_PEERS=192.0.2.7'),
    ({'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}, 'lan', {}, 'as you set it'),
])
def test_nodes_stay_on_loopback_unless_the_user_chose(monkeypatch, user, network, added, said):
    """Every node of the rig gets the loopback variables when the user set none of
    the discovery variables and did not ask for the LAN; the line says which."""
    from acres_sim.network import network_environment

    for name in DISCOVERY:
        monkeypatch.delenv(name, raising=False)
    for name, value in user.items():
        monkeypatch.setenv(name, value)
    nodes = rig_nodes('mixed', RigOptions(network=network))
    assert [ros_env(node) for node in nodes] == [added] * len(nodes)
    env, line = network_environment(network)
    assert env == added and said in line and '\n' not in line


def test_an_unknown_network_is_a_config_error():
    with pytest.raises(ConfigError, match="network = 'wifi'; allowed: loopback or lan"):
        rig_nodes('polaris', RigOptions(network='wifi'))


def test_the_printed_command_carries_the_nodes_environment(monkeypatch, tmp_path):
    """up's shell line: the node's variables in front, then its command, quoted."""
    import shlex

    from acres_sim.up import shell_command

    for name in DISCOVERY:
        monkeypatch.delenv(name, raising=False)
    node = rig_nodes('polaris', RigOptions(rtf=0.0))[0]
    path = tmp_path / 'a dir' / 'sim_node.yaml'
    words = shlex.split(shell_command(node, path))
    assert words[0] == 'env'
    assert 'ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST' in words
    assert any(w.startswith(PROFILES[fastdds_major()][0] + '=') for w in words)
    assert words[-len(node_command(node, path)):] == node_command(node, path)
