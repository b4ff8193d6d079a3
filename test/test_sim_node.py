"""The sim node in process (no DDS peer): commands, parking, the summary."""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.requires_rclpy


def make_sim(**parameters):
    from rclpy.parameter import Parameter

    from acres_sim.ros.sim_node import SimNode

    parameters.setdefault('rtf', 0.0)
    return SimNode(parameter_overrides=[Parameter(n, value=v) for n, v in parameters.items()])


def speed(node):
    return float(np.hypot(*node.agents[0].sim.fleet.states[0, 7:9]))


def run_s(node, seconds):
    for _ in range(int(round(seconds * 120 / 12))):
        node._advance(12)


def twist(linear, angular):
    from geometry_msgs.msg import Twist

    m = Twist()
    m.linear.x, m.angular.z = float(linear), float(angular)
    return m


def test_the_route_follower_drives_unless_parked(ros_context):
    follows, parked = make_sim(), make_sim(follow_route=False)
    try:
        for node in (follows, parked):
            run_s(node, 10.0)     # past the follower's 5 s hold
        assert speed(follows) > 1.0 and speed(parked) < 1e-3
    finally:
        follows.destroy_node()
        parked.destroy_node()


def test_each_agent_starts_at_its_spawn_and_may_be_parked(ros_context):
    """The per-agent parameters from the rig (rig_nodes): the sim starts every
    vehicle where the recorder does and keeps a parked one parked."""
    from acres_sim.rig import RigOptions, rig_nodes

    parameters = rig_nodes('polaris', RigOptions(agents=2, rtf=0.0))[0].parameters
    parameters = {k: v for k, v in parameters.items() if k != 'use_sim_time'}
    parameters['agents.agent1.parked'] = True
    node = make_sim(**parameters)
    try:
        assert [a.sim.fleet.states[0, 0:2].tolist() for a in node.agents] == \
            [[0.0, 0.0], [8.05, 0.0]]
        run_s(node, 10.0)
        assert speed(node) > 1.0
        assert node.agents[1].sim.fleet.states[0, 0:2].tolist() == [8.05, 0.0]
    finally:
        node.destroy_node()
    node = make_sim(**{'agents.agent0.spawn': [5.0, -1.0, 0.25], 'agents.agent0.parked': True})
    try:
        x, y = node.agents[0].sim.fleet.states[0, 0:2]
        assert (x, y) == (5.0, -1.0)
    finally:
        node.destroy_node()


def test_a_route_that_ends_says_so_in_the_log(ros_context, tmp_path, capfd):
    import yaml

    route = tmp_path / 'short.yaml'
    route.write_text(yaml.safe_dump({'route': {'hold_s': 0.0, 'legs': [
        {'speed_mps': 3.0, 'waypoints': [[0.0, 0.0], [12.0, 0.0]]}]}}))
    node = make_sim(**{'agents.agent0.route': str(route)})
    try:
        run_s(node, 15.0)
        ended = [line for line in capfd.readouterr().err.splitlines() if 'ended at' in line]
        assert len(ended) == 1 and 'agent0: route short ended at ' in ended[0]
        assert 'parked there' in ended[0]
        run_s(node, 2.0)
        assert 'ended at' not in capfd.readouterr().err          # once
    finally:
        node.destroy_node()


def test_laps_and_repeat_reach_the_follower(ros_context):
    node = make_sim(**{'agents.agent0.route': 'loop', 'agents.agent0.repeat': True})
    other = make_sim(**{'agents.agent0.route': 'loop', 'agents.agent0.laps': 2})
    try:
        assert node.agents[0].sim.followers[0].laps == math.inf
        assert other.agents[0].sim.followers[0].laps == 2
    finally:
        node.destroy_node()
        other.destroy_node()


def test_a_scene_file_reaches_the_sim(ros_context, tmp_path):
    scene = tmp_path / 'open.yaml'
    scene.write_text('scene: {name: open_field}\n')
    node = make_sim(scene=str(scene))
    try:
        assert node.scene.name == 'open_field'
    finally:
        node.destroy_node()


def test_cmd_vel_drives_goes_stale_and_refuses_nan(ros_context):
    node = make_sim(**{'cmd_vel.timeout_s': 0.5})
    try:
        agent = node.agents[0]
        for _ in range(40):                       # 4 s of commands every 0.1 s
            node.on_cmd_vel(agent, twist(2.0, 0.0))
            run_s(node, 0.1)
        assert speed(node) == pytest.approx(2.0, abs=0.2)
        for _ in range(20):                       # NaN is refused: the last command ages
            node.on_cmd_vel(agent, twist(math.nan, 0.0))
            run_s(node, 0.1)
        assert speed(node) < 0.05
        assert agent.sim.commands[0].tolist() == [1.0, 0.0, 0.0]
        node.on_cmd_vel(agent, twist(1e9, 1e9))   # clamped to the vehicle
        assert agent.command[0] == agent.vehicle.params.max_speed_mps
    finally:
        node.destroy_node()


def test_summary_names_the_run(ros_context):
    import time

    node = make_sim()
    try:
        assert node.summary() == 'stopped before the first step'
        node.wall0 = time.monotonic()
        run_s(node, 1.0)
        node._advance(1)                          # steps 0 .. 120: one second
        assert node.summary().startswith('simulated 1.00 s in ')
        assert 'waiting for the sensor nodes' in node.summary()
    finally:
        node.destroy_node()


@pytest.mark.parametrize('parameters, message', [
    ({'agents.names': 5}, r'agents\.names = 5 .*the wrong type'),
    ({'agents.agent0.gnss.hz': 500.0}, r'agents\.agent0\.gnss\.hz = 500\.0'),
    ({'gnss.hz': 5.0}, r"unknown parameter 'gnss\.hz' for /sim_node"),
    ({'rtf': -2.0}, r'rtf = -2\.0 .*out of range'),
    ({'agents.agent0.spawn': [1.0, 2.0]}, r'spawn = \[1\.0, 2\.0\] .*3 numbers'),
    ({'agents.agent0.route': 'field', 'agents.agent0.laps': 2},
     r"route 'field' is not closed"),
])
def test_bad_parameters_are_one_config_error(ros_context, parameters, message):
    from acres_sim.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        make_sim(**parameters)


PUBLISHER = """
import sys, rclpy
from geometry_msgs.msg import Twist, TwistStamped
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node('teleop')
node.create_publisher({'Twist': Twist, 'TwistStamped': TwistStamped, 'String': String}[sys.argv[1]],
                      '/cmd_vel', 10)
print('ready', flush=True)
sys.stdin.read()              # until the test closes stdin
node.destroy_node()
rclpy.try_shutdown()
"""


def cmd_vel_lines(node, executor, capfd, seen, timeout=30.0):
    """Pass the sim's input loop (a graph check each pass) until it has warned of
    /cmd_vel or ``timeout``; the warning lines so far added to ``seen``."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        node._graph_checked = 0.0                 # as if a check period had passed
        node.poll_inputs(executor)
        seen += [line for line in capfd.readouterr().err.splitlines() if '/cmd_vel' in line]
        if seen:
            break
        time.sleep(0.05)
    return seen


@pytest.mark.parametrize('cmd_vel_type, publisher, switch', [
    ('twist', 'TwistStamped', "set cmd_vel.type twist_stamped (acres-sim up --cmd-vel-type "
                              "twist_stamped, launch cmd_vel_type:=twist_stamped)"),
    ('twist_stamped', 'Twist', 'set cmd_vel.type twist (acres-sim up --cmd-vel-type twist'),
    ('twist', 'String', 'cmd_vel.type takes twist (geometry_msgs/msg/Twist) or twist_stamped'),
])
def test_a_cmd_vel_publisher_of_another_type_is_named_once(ros_context, ros_child, capfd,
                                                           cmd_vel_type, publisher, switch):
    """A cmd_vel publisher (another process) whose type the sim does not
    subscribe to: one throttled warning naming it, both types and the option
    that switches."""
    from rclpy.executors import SingleThreadedExecutor

    teleop = ros_child(['-c', PUBLISHER, publisher])
    assert teleop.process.stdout.readline().strip() == 'ready', teleop.stop()
    node = make_sim(**{'cmd_vel.type': cmd_vel_type})
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        lines = cmd_vel_lines(node, executor, capfd, [])
        for _ in range(3):                        # more checks: no more lines (throttled)
            cmd_vel_lines(node, executor, capfd, lines, timeout=0.0)
        package = 'std_msgs' if publisher == 'String' else 'geometry_msgs'
        assert len(lines) == 1, lines
        assert f'/teleop publishes {package}/msg/{publisher} on /cmd_vel' in lines[0]
        expected = 'TwistStamped' if cmd_vel_type == 'twist_stamped' else 'Twist'
        assert f'the sim takes geometry_msgs/msg/{expected} (cmd_vel.type {cmd_vel_type})' \
            in lines[0] and switch in lines[0]
    finally:
        executor.shutdown()
        node.destroy_node()
        teleop.stop()


def test_a_matching_cmd_vel_publisher_is_no_warning(ros_context, ros_child, capfd):
    import time

    from rclpy.executors import SingleThreadedExecutor

    teleop = ros_child(['-c', PUBLISHER, 'Twist'])
    assert teleop.process.stdout.readline().strip() == 'ready', teleop.stop()
    node = make_sim()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        deadline = time.monotonic() + 30
        while not node.count_publishers('/cmd_vel') and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        assert node.count_publishers('/cmd_vel') == 1
        assert cmd_vel_lines(node, executor, capfd, [], timeout=0.5) == []
    finally:
        executor.shutdown()
        node.destroy_node()
        teleop.stop()


def test_another_simulator_on_the_domain_stops_the_sim(ros_context):
    """A second sim node (same name, as a second rig's) publishing /clock and the
    truth: refused in one line that names it and how to pick another domain,
    once it has had its time to leave; a sim alone goes on at once."""
    import threading

    from rclpy.executors import SingleThreadedExecutor

    from acres_sim.config import ConfigError

    executor = SingleThreadedExecutor()
    stop = threading.Event()
    first = make_sim()
    first.refuse_other_simulators(executor, stop, wait_s=0.0)
    second = make_sim()
    try:
        with pytest.raises(ConfigError) as caught:
            second.refuse_other_simulators(executor, stop, wait_s=0.5)
        text = str(caught.value)
        assert 'another simulator runs on ROS_DOMAIN_ID' in text and '/sim_node' in text
        assert 'publishes /clock too' in text and 'ROS_DOMAIN_ID=' in text and '\n' not in text
    finally:
        second.destroy_node()
        first.destroy_node()


def test_without_a_start_wait_the_sim_still_looks_for_another_simulator(ros_context):
    """start_timeout_s 0 (no wait for the sensor nodes): the sim still listens
    for another simulator's /clock before its step 0, and stops."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rosgraph_msgs.msg import Clock

    from acres_sim.config import ConfigError
    from acres_sim.stop_signals import StopSignals

    other = rclpy.create_node('other_sim')
    clock = other.create_publisher(Clock, '/clock', 10)
    other.create_timer(0.05, lambda: clock.publish(Clock()))
    sim = make_sim(start_timeout_s=0.0)
    executor = SingleThreadedExecutor()
    executor.add_node(other)
    executor.add_node(sim)
    try:
        with pytest.raises(ConfigError, match='another simulator runs on .* /other_sim'):
            sim.wait_for_sensors(executor, StopSignals())
    finally:
        executor.shutdown()
        sim.destroy_node()
        other.destroy_node()


def test_the_sims_own_clock_listener_is_no_subscriber(ros_context):
    """Before step 0 the sim listens on /clock for another sim: that is no
    subscriber for --wait-for-subscribers."""
    node = make_sim(start_subscribers=1)
    try:
        assert '/clock' in [topic for topic, _n, _want in node._missing()]
    finally:
        node.destroy_node()


def test_at_rtf_0_a_ready_sensor_node_is_waited_for_from_the_step_it_was_ready_at(ros_context):
    """A sensor node that is ready (its side of the truth matched) but has taken
    no truth yet holds the sim AHEAD_STEPS past the step it was ready at, so a
    node slow to take its first truth loses none from its history; a node that
    is ready again (started again) counts from the step of that."""
    from builtin_interfaces.msg import Time
    from std_msgs.msg import Header

    from acres_sim.ros.sim_node import AHEAD_STEPS

    def report(node, k=None):
        if k is None:
            stamp = Time(sec=-1)
        else:
            sec, nanosec = divmod(node.timeline.ns(k), 1_000_000_000)
            stamp = Time(sec=sec, nanosec=nanosec)
        node._on_progress(node.agents[0], Header(stamp=stamp, frame_id='/gnss_node'))

    def behind(node):
        return node._behind(node.step - AHEAD_STEPS)

    node = make_sim()
    try:
        report(node)                               # ready before step 0
        node._advance(AHEAD_STEPS - 12)
        report(node)                               # still ready: still from step 0
        assert behind(node) == []
        node._advance(12)                          # AHEAD_STEPS computed, none taken
        assert behind(node) == ['/gnss_node']
        report(node, 5)
        assert behind(node) == []
        node._advance(AHEAD_STEPS)                 # step 5 taken, 2 * AHEAD_STEPS computed
        assert behind(node) == ['/gnss_node']
        report(node)                               # started again: ready from here
        assert behind(node) == []
        node._advance(AHEAD_STEPS)
        assert behind(node) == ['/gnss_node']
    finally:
        node.destroy_node()


def test_at_real_time_a_part_waits_for_a_gap_unless_its_block_falls_behind(ros_context):
    """At rtf > 0 a vehicle's part of the next block is computed where it fits
    before the next step (a part's time: the PART_QUANTILE of the recent ones,
    so a part the OS held up once does not shut every gap), or, when the parts
    left would need more than CATCH_UP_SHARE of the time until the block's
    first step, at once."""
    from acres_sim.ros.sim_node import (CATCH_UP_SHARE, PART_HISTORY, PART_MARGIN_S,
                                        PART_QUANTILE)

    node = make_sim(rtf=1.0, **{'agents.names': [f'a{i}' for i in range(4)]})
    try:
        for _ in range(PART_HISTORY - 1):
            node._part_took(0.002)
        node._part_took(0.050)                     # held up once
        assert node.part_s == 0.002 and PART_QUANTILE < 1.0
        node.wall0 = 100.0
        node._start_block(6)                       # steps 0-5, due from 100.0 s
        assert node.pending.parts.count(None) == 4
        fits = node.part_s + PART_MARGIN_S
        # 4 parts left (8 ms) and 40 ms to go: a gap of more than a part, not less
        assert node._part_now(fits + 1e-4, now=100.0 - 0.040)
        assert not node._part_now(fits - 1e-4, now=100.0 - 0.040)
        # 4 parts left and less than 8 ms / CATCH_UP_SHARE to go: behind, at once
        behind = 100.0 - 4 * 0.002 / CATCH_UP_SHARE
        assert node._part_now(0.0001, now=behind + 1e-4)
        assert not node._part_now(0.0001, now=behind - 1e-4)
        for _ in range(3):                         # slow parts no longer rare: 4 of 50
            node._part_took(0.050)
        assert node.part_s == 0.050
    finally:
        node.destroy_node()


def test_a_pass_of_the_executor_does_not_grow_with_the_vehicles(ros_context):
    """The sim node passes its SingleThreadedExecutor ten times a second (its
    parameter services), and that pass goes through every waitable of the
    node.  rclpy's default QoS event handlers are two waitables per endpoint:
    with 25 vehicles 850 of them made each pass 8-16 ms long and held INS
    steps back by as much.  The per-vehicle endpoints are made without them,
    so one vehicle more adds none."""
    from acres_sim.rig import RigOptions, rig_nodes

    counts = []
    for agents in (1, 4):
        parameters = rig_nodes('polaris', RigOptions(agents=agents, rtf=0.0))[0].parameters
        node = make_sim(**{k: v for k, v in parameters.items() if k != 'use_sim_time'})
        try:
            assert len(node.agents) == agents
            counts.append(len(list(node.waitables)))
        finally:
            node.destroy_node()
    assert counts[0] == counts[1], counts
    assert counts[1] < 40, counts        # the node's own few: /clock, /tf, diagnostics, ...
