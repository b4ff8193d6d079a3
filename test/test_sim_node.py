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
        assert agent.command[0] == agent.vehicle.max_speed_mps
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
])
def test_bad_parameters_are_one_config_error(ros_context, parameters, message):
    from acres_sim.config import ConfigError

    with pytest.raises(ConfigError, match=message):
        make_sim(**parameters)
