"""The whole rig under a namespace: ``acres-sim up --namespace NS``, the launch
argument ``namespace:=NS`` and a ``PushRosNamespace`` of a user's launch file.

Every node names its topics relative to its own namespace, so only the four
topics that ROS keeps global -- /clock, /tf, /tf_static, /diagnostics --
(and rcl's own /rosout and /parameter_events) stay at the top.  The node
list tests need no ROS; the live test runs ``up --namespace`` over real DDS
and reads what each node of the rig publishes and takes from the graph.
"""

import pytest

from acres_sim.config import ConfigError
from acres_sim.rig import RigOptions, check_namespace, rig_nodes
from acres_sim.up import node_command, params_file_name

from live_helpers import DISCOVERY_TIMEOUT, Probe, node_names, run_until_exit, stamp_s, up_args

GLOBAL_TOPICS = {'/clock', '/tf', '/tf_static', '/diagnostics'}
ROS_OWN_TOPICS = {'/rosout', '/parameter_events'}     # every rcl node has them

# The spec's topic table of one Polaris (test_live_rig's list), and what the
# sim node and its sensor nodes say to each other: relative names.
POLARIS_RELATIVE = {
    'vehicle/odom': 'nav_msgs/msg/Odometry', 'oxts/fix': 'sensor_msgs/msg/NavSatFix',
    'oxts/imu': 'sensor_msgs/msg/Imu', 'oxts/velocity': 'geometry_msgs/msg/TwistStamped',
    'sim/ground_truth/odom': 'nav_msgs/msg/Odometry', 'cmd_vel': 'geometry_msgs/msg/Twist',
    'sim/truth': 'nav_msgs/msg/Odometry', 'sim/sensor_progress': 'std_msgs/msg/Header',
    'gnss_receiver/fix': 'sensor_msgs/msg/NavSatFix',
    'gnss_receiver/nmea': 'std_msgs/msg/String', 'imu/data_raw': 'sensor_msgs/msg/Imu',
    'gnss_receiver/gpsfix': 'gps_msgs/msg/GPSFix', 'gnss_receiver/heading': 'sensor_msgs/msg/Imu',
    'sim/events': 'std_msgs/msg/String', 'sim/events_applied': 'std_msgs/msg/String',
    # the Polaris's further sensors (its equipment), from the sim node
    'baro/pressure': 'sensor_msgs/msg/FluidPressure',
    'baro/altitude': 'geometry_msgs/msg/PoseWithCovarianceStamped',
    'imu/mag': 'sensor_msgs/msg/MagneticField', 'wheel/odom': 'nav_msgs/msg/Odometry',
}


@pytest.mark.parametrize('given, normal', [('', ''), ('/', ''), ('demo', 'demo'),
                                           ('/demo', 'demo'), ('farm/rig_1', 'farm/rig_1')])
def test_a_namespace_is_relative(given, normal):
    assert check_namespace(given) == normal


@pytest.mark.parametrize('given', ['demo/', 'a//b', '1demo', 'de mo', 'demo-1', 7, None])
def test_a_bad_namespace_is_one_config_error(given):
    with pytest.raises(ConfigError) as caught:
        rig_nodes('polaris', RigOptions(namespace=given))
    text = str(caught.value)
    assert text.startswith(f'namespace = {given!r}; allowed:') and '\n' not in text


def test_the_namespace_moves_every_node_and_the_vehicles_nest_below_it():
    """sim node in NS, each vehicle's sensor nodes in NS/<its namespace>; the
    sim keeps each vehicle's own namespace, relative to its own."""
    plain = rig_nodes('polaris', RigOptions(agents=2))
    moved = rig_nodes('polaris', RigOptions(agents=2, namespace='/demo'))
    assert [n.full_name for n in moved] == [
        '/demo/sim_node', '/demo/gnss_node', '/demo/imu_node', '/demo/agent1/gnss_node',
        '/demo/agent1/imu_node']
    assert [n.full_name for n in plain] == [n.full_name[len('/demo'):] for n in moved]
    # the parameters do not change: topics are relative, the frames keep their prefix
    assert [n.parameters for n in moved] == [n.parameters for n in plain]
    assert moved[0].parameters['agents.agent1.namespace'] == 'agent1'
    # acres-sim up starts them in those namespaces
    commands = [node_command(n, params_file_name(n)) for n in moved]
    assert [c[c.index('-r', c.index('__node:=' + n.name)) + 1] for c, n in zip(commands, moved)] \
        == ['__ns:=/demo', '__ns:=/demo', '__ns:=/demo', '__ns:=/demo/agent1',
            '__ns:=/demo/agent1']
    assert params_file_name(moved[3]) == 'demo.agent1.gnss_node.yaml'


def node_topics(node, full_name):
    """{topic: type} of everything the node ``full_name`` publishes or takes."""
    namespace, _, name = full_name.rpartition('/')
    namespace = namespace or '/'
    out = {}
    for get in (node.get_publisher_names_and_types_by_node,
                node.get_subscriber_names_and_types_by_node):
        out.update({topic: types[0] for topic, types in get(name, namespace)})
    return out


def message_type(name):
    """The message class of 'pkg/msg/Name'."""
    import importlib

    package, _msg, cls = name.split('/')
    return getattr(importlib.import_module(f'{package}.msg'), cls)


@pytest.mark.requires_rclpy
def test_up_with_a_namespace_runs_the_whole_rig_under_it(ros_context, ros_child):
    """``up --namespace demo``: every topic of every node but the global four is
    under /demo (agent1's under /demo/agent1), and the rig runs: the sensor
    nodes publish from their truth, the sim hears that they are ready (else it
    would start only after --start-timeout, with a warning) and at rtf 0 keeps
    pace with their progress to the end of its duration."""
    import rclpy

    seconds = 2
    node = rclpy.create_node('namespace_probe')
    agents = ('/demo', '/demo/agent1')
    sensors = {f'{ns}/{t}': POLARIS_RELATIVE[t] for ns in agents
               for t in ('gnss_receiver/fix', 'imu/data_raw')}
    sim = {f'{ns}/{t}': POLARIS_RELATIVE[t] for ns in agents
           for t in ('vehicle/odom', 'oxts/fix', 'oxts/imu', 'oxts/velocity',
                     'sim/ground_truth/odom', 'baro/pressure', 'baro/altitude', 'imu/mag',
                     'wheel/odom')}
    sim.update({'/clock': 'rosgraph_msgs/msg/Clock', '/tf': 'tf2_msgs/msg/TFMessage',
                '/tf_static': 'tf2_msgs/msg/TFMessage'})
    # the sensor nodes' outputs first; then the sim's, which it waits for
    probe = Probe(node, {t: message_type(kind) for t, kind in sensors.items()})
    child = ros_child(up_args('--rig', 'polaris', '--agents', '2', '--namespace', 'demo',
                              '--duration', str(seconds), '--rtf', '0', '--start-timeout', '20',
                              '--wait-for-subscribers', '2'))
    probe.spin_until(lambda: all(probe.publishers(t) for t in sensors), DISCOVERY_TIMEOUT,
                     'the sensor nodes', child)
    probe.add({t: message_type(kind) for t, kind in sim.items()}, transient={'/tf_static'})
    probe.open_gate(child)
    names = [s.full_name for s in rig_nodes('polaris', RigOptions(agents=2, namespace='demo'))]

    expected = {f'{ns}/{topic}': kind for ns in agents for topic, kind in POLARIS_RELATIVE.items()}
    expected.update({'/clock': 'rosgraph_msgs/msg/Clock', '/tf': 'tf2_msgs/msg/TFMessage',
                     '/tf_static': 'tf2_msgs/msg/TFMessage',
                     '/diagnostics': 'diagnostic_msgs/msg/DiagnosticArray',
                     '/demo/events/inject': 'std_msgs/msg/String',
                     '/demo/events/log': 'std_msgs/msg/String'})

    def every_node_seen():
        return set(names) <= node_names(node)

    def rig_topics():
        topics = {}
        for name in names:
            topics.update(node_topics(node, name))
        return {t: kind for t, kind in topics.items() if t not in ROS_OWN_TOPICS}

    # Discovery brings a node's topics one by one (on a loaded machine, seconds
    # apart): wait for the whole list -- the sim waits for this probe meanwhile
    # (--wait-for-subscribers) -- and show what differs if it never comes.
    probe.spin_until(every_node_seen, DISCOVERY_TIMEOUT, 'every node of the rig', child)
    try:
        probe.spin_until(lambda: rig_topics() == expected, DISCOVERY_TIMEOUT,
                         'every topic of the rig', child)
    except pytest.fail.Exception:
        assert rig_topics() == expected
        raise
    got = rig_topics()
    assert {t for t in got if not t.startswith('/demo/')} == GLOBAL_TOPICS

    code, output = run_until_exit(probe, child, DISCOVERY_TIMEOUT + 60 * seconds)
    assert code == 0, output
    assert 'starting without all subscribers' not in output, output
    assert 'not waiting for it any more' not in output, output
    # every sensor and INS topic of both vehicles, from the first steps to the end
    for topic in (*sensors, *(t for t in sim if t.endswith('/oxts/fix'))):
        stamps = [stamp_s(m) for m in probe.decoded(topic, message_type(expected[topic]))]
        assert stamps and stamps[0] < 0.05 and stamps[-1] > seconds - 0.2, topic
