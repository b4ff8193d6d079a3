"""The rig's sensor nodes in one process (``sensor_nodes``, acres_sim.rig's
``sensor_processes``): each stays its own node -- name, namespace under the
process's, parameters, topics -- and one node's bad parameter is one line
naming it.  The live rig tests (test_live_rig) run this layout too: it is
the default of ``acres-sim up``.
"""

import pytest

from acres_sim.config import ConfigError
from acres_sim.rig import RigOptions, hosted_name, rig_nodes, rig_processes
from acres_sim.up import node_command, write_params_files

from live_helpers import DISCOVERY_TIMEOUT, node_names

pytestmark = pytest.mark.requires_rclpy


def sensor_nodes():
    from acres_sim.ros import sensor_nodes as module

    return module


@pytest.mark.parametrize('ros_args, namespace', [
    ([], ''), (['-r', '__ns:=/demo'], '/demo'), (['--remap', '__ns:=/a/b/'], '/a/b'),
    (['-r', 'x:=y', '-r', '__ns:=/one', '-r', '__ns:=/two'], '/two'),
    (['-p', '__ns:=/no'], ''),
])
def test_the_process_namespace_is_its_ns_remapping(ros_args, namespace):
    assert sensor_nodes().base_namespace(ros_args) == namespace


@pytest.mark.parametrize('base, name, full', [
    ('', 'gnss_node', ('gnss_node', '/')), ('', 'agent1/imu_node', ('imu_node', '/agent1')),
    ('/demo', 'gnss_node', ('gnss_node', '/demo')),
    ('/demo', 'agent1/imu_node', ('imu_node', '/demo/agent1')),
])
def test_a_node_gets_its_namespace_under_the_process_and_its_own_file(base, name, full):
    node, options = sensor_nodes().node_options(base, name, '/x/p.yaml')
    args = options['cli_args']
    assert (node, args[args.index('-r', 3) + 1][len('__ns:='):]) == full
    assert args[:3] == ['--ros-args', '-r', f'__node:={full[0]}']
    assert args[-2:] == ['--params-file', '/x/p.yaml']


@pytest.mark.parametrize('argv, message', [
    ([], 'no --node KIND NAME FILE'),
    (['--node', 'sim_node', 'sim_node', 'f.yaml'], '--node sim_node: unknown kind'),
    (['--node', 'imu_node', 'imu_node'], 'expected 3 arguments'),
    (['--bogus'], "unknown argument '--bogus'"),
])
def test_a_bad_command_is_one_line_and_status_2(capsys, argv, message):
    assert sensor_nodes().main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count('\n') == 1 and 'Traceback' not in err, err


def test_the_layouts_group_the_same_nodes():
    """one: every sensor node in one process in the rig's namespace; vehicle: a
    process per vehicle, in its namespace; node: the node list itself."""
    options = dict(rig='mixed', options=RigOptions(namespace='demo'))
    nodes = rig_nodes(options['rig'], options['options'])
    one = rig_processes(options['rig'], options['options'])
    assert one[0] == nodes[0] and len(one) == 2 and one[1].nodes == tuple(nodes[1:])
    assert one[1].namespace == 'demo' and one[1].full_name == '/demo/sensor_nodes'
    assert [hosted_name(one[1], n) for n in nodes[1:3]] == ['polaris/gnss_node',
                                                            'polaris/imu_node']
    per_vehicle = rig_processes(options['rig'], RigOptions(namespace='demo',
                                                           sensor_processes='vehicle'))
    assert [p.full_name for p in per_vehicle[1:]] == [
        '/demo/polaris/sensor_nodes', '/demo/maxxum1/sensor_nodes', '/demo/maxxum2/sensor_nodes']
    assert [hosted_name(per_vehicle[1], n) for n in per_vehicle[1].nodes] == [
        'gnss_node', 'imu_node']
    assert sum((p.nodes for p in per_vehicle[1:]), ()) == tuple(nodes[1:])
    assert rig_processes(options['rig'], RigOptions(namespace='demo',
                                                    sensor_processes='node')) == nodes
    with pytest.raises(ConfigError, match=r"^sensor_processes = 'all'; allowed: one, vehicle, "
                                          r"node$"):
        rig_processes('polaris', RigOptions(sensor_processes='all'))


def start_process(ros_child, folder, options, bad=None):
    """The sensor process of the Polaris rig with ``options``, under the namespace
    that launch would push (/pushed); ``bad``: (node index, key, value) written
    into that node's parameter file."""
    import yaml

    _sim, host = rig_processes('polaris', options)
    paths = write_params_files([host], folder)[0]
    if bad is not None:
        index, key, value = bad
        document = yaml.safe_load(paths[index].read_text())
        document['/**']['ros__parameters'][key] = value
        paths[index].write_text(yaml.safe_dump(document))
    command = node_command(host, paths)
    assert command[-2:] == ['-r', '__ns:=/demo']
    return host, ros_child(command[1:-2] + ['-r', '__ns:=/pushed/demo'])


def test_each_node_of_the_process_is_its_own_node(ros_context, ros_child, tmp_path):
    """Two vehicles' GNSS and IMU nodes in one process: in the graph by their
    names, in their vehicle's namespace under the process's; each with its own
    parameters and its own truth subscription."""
    import time

    import rclpy
    from rcl_interfaces.srv import GetParameters

    host, child = start_process(ros_child, tmp_path,
                                RigOptions(agents=2, namespace='demo', rtf=1.0))
    probe = rclpy.create_node('sensor_process_probe')
    expected = {'/pushed/demo/gnss_node', '/pushed/demo/imu_node',
                '/pushed/demo/agent1/gnss_node', '/pushed/demo/agent1/imu_node'}

    def wait_until(condition, what):
        """Spin the probe until ``condition()`` (discovery brings the graph piece by piece)."""
        deadline = time.monotonic() + DISCOVERY_TIMEOUT
        while not condition():
            assert child.running(), child.stop()
            assert time.monotonic() < deadline, f'no {what} within {DISCOVERY_TIMEOUT} s'
            rclpy.spin_once(probe, timeout_sec=0.1)

    try:
        wait_until(lambda: expected <= node_names(probe), f'nodes {sorted(expected)}')
        assert not {n for n in node_names(probe) if 'sensor_nodes' in n}   # the process is no node
        prefixes = {}
        for name in sorted(expected):
            client = probe.create_client(GetParameters, f'{name}/get_parameters')
            assert client.wait_for_service(timeout_sec=DISCOVERY_TIMEOUT), name
            future = client.call_async(GetParameters.Request(names=['frame_prefix', 'gnss.hz']))
            rclpy.spin_until_future_complete(probe, future, timeout_sec=DISCOVERY_TIMEOUT)
            assert future.done(), f'{name}/get_parameters did not answer'
            values = future.result().values
            prefixes[name] = values[0].string_value
            assert values[1].double_value == 10.0, name
        assert prefixes == {'/pushed/demo/gnss_node': '', '/pushed/demo/imu_node': '',
                            '/pushed/demo/agent1/gnss_node': 'agent1/',
                            '/pushed/demo/agent1/imu_node': 'agent1/'}
        # each vehicle's truth is taken by its GNSS and IMU node; the four share /clock
        wait_until(lambda: [probe.count_subscribers(t) for t in (
            '/pushed/demo/sim/truth', '/pushed/demo/agent1/sim/truth')] == [2, 2],
            'two truth subscribers per vehicle')
        wait_until(lambda: probe.count_publishers('/pushed/demo/agent1/imu/data_raw') == 1,
                   'the IMU output of agent1')
        # the nodes' own /clock subscriptions go, then the shared one comes: one, for good
        wait_until(lambda: probe.count_subscribers('/clock') == 1, 'one /clock subscriber')
        settle = time.monotonic() + 1.0
        while time.monotonic() < settle:
            rclpy.spin_once(probe, timeout_sec=0.1)
        assert probe.count_subscribers('/clock') == 1
    finally:
        probe.destroy_node()
    errors = child.stop()
    assert child.process.returncode == 0, errors


def test_a_bad_parameter_of_one_node_is_one_line_naming_it(ros_domain_id, ros_child, tmp_path):
    _host, child = start_process(ros_child, tmp_path, RigOptions(agents=2, namespace='demo'),
                                 bad=(3, 'imu.hz', -5.0))
    child.process.wait(timeout=120)
    errors = child.stop()
    assert child.process.returncode == 2, errors
    lines = [line for line in errors.strip().splitlines() if 'sensor_nodes' in line]
    assert len(lines) == 1 and lines[0].startswith('sensor_nodes: agent1/imu_node: '), errors
    assert 'imu.hz' in lines[0] and 'Traceback' not in errors


def test_nodes_that_share_the_clock_subscription_all_follow_clock(ros_context):
    """share_clock: of three nodes, the two on use_sim_time get one /clock
    subscription between them, and both clocks take the time it brings; the
    one on wall time keeps it."""
    import time

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock

    sim_time = [Parameter('use_sim_time', Parameter.Type.BOOL, True)]
    nodes = [rclpy.create_node('follows_a', parameter_overrides=sim_time),
             rclpy.create_node('follows_b', parameter_overrides=sim_time),
             rclpy.create_node('wall_clock')]
    publisher = nodes[2].create_publisher(Clock, '/clock', 10)
    executor = SingleThreadedExecutor()
    try:
        assert nodes[2].count_subscribers('/clock') == 2
        shared = sensor_nodes().share_clock(nodes)
        assert shared is not None and nodes[2].count_subscribers('/clock') == 1
        for node in nodes:
            executor.add_node(node)
        message = Clock()
        message.clock.sec = 1_700_000_000
        deadline = time.monotonic() + DISCOVERY_TIMEOUT
        while any(n.get_clock().now().nanoseconds != 1_700_000_000 * 10**9 for n in nodes[:2]):
            assert time.monotonic() < deadline, [n.get_clock().now() for n in nodes[:2]]
            publisher.publish(message)
            executor.spin_once(timeout_sec=0.05)
        assert abs(nodes[2].get_clock().now().nanoseconds - time.time_ns()) < 60 * 10**9
        assert sensor_nodes().share_clock(nodes[1:]) is None          # one follower: its own
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
