"""acres_sim.core.command: cmd_vel values checked against the vehicle."""

import math

import pytest

from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.command import check_command, yaw_rate_limit

POLARIS = load_vehicle('polaris')


def test_a_command_within_the_limits_passes_unchanged():
    c = check_command(2.5, -0.3, POLARIS)
    assert (c.speed_mps, c.yaw_rate_radps, c.problem, c.refused) == (2.5, -0.3, None, False)


@pytest.mark.parametrize('speed, yaw', [(math.nan, 0.0), (1.0, math.inf), (-math.inf, 0.0)])
def test_non_finite_commands_are_refused(speed, yaw):
    c = check_command(speed, yaw, POLARIS)
    assert c.refused and 'non-finite' in c.problem


def test_absurd_commands_are_clamped_to_the_vehicle():
    limit = yaw_rate_limit(POLARIS)
    assert limit == pytest.approx(POLARIS.max_speed_mps * math.tan(POLARIS.max_steer_rad)
                                  / POLARIS.wheelbase_m)
    c = check_command(1e6, -1e6, POLARIS)
    assert (c.speed_mps, c.yaw_rate_radps) == (POLARIS.max_speed_mps, -limit)
    assert not c.refused and 'clamped' in c.problem
    c = check_command(-1e6, 0.0, POLARIS)
    assert c.speed_mps == -POLARIS.max_reverse_speed_mps
