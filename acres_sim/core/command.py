"""A velocity command from outside (cmd_vel) checked against a vehicle.

A command is a forward speed [m/s] and a yaw rate [rad/s].  Non-finite values
are refused; the speed is clamped to the vehicle's reverse and forward limits
and the yaw rate to what full steering gives at the vehicle's top speed.
The physics' own controller limits the steering further at the speed driven.
"""

import math
from typing import NamedTuple, Optional

__all__ = ['CheckedCommand', 'check_command', 'yaw_rate_limit']


class CheckedCommand(NamedTuple):
    speed_mps: float
    yaw_rate_radps: float
    problem: Optional[str]     # None, or what was refused or clamped (for a warning)
    refused: bool = False


def yaw_rate_limit(vehicle) -> float:
    """The largest yaw rate the vehicle reaches: full steering at top speed [rad/s]."""
    return vehicle.max_speed_mps * math.tan(vehicle.max_steer_rad) / vehicle.wheelbase_m


def check_command(speed, yaw_rate, vehicle) -> CheckedCommand:
    """``(speed, yaw_rate)`` for ``vehicle`` (a VehicleParams): refused (NaN or
    infinite) or clamped to its limits, with the reason."""
    if not (math.isfinite(speed) and math.isfinite(yaw_rate)):
        return CheckedCommand(0.0, 0.0, f'refused a non-finite command (linear.x = {speed}, '
                                        f'angular.z = {yaw_rate})', refused=True)
    low, high = -vehicle.max_reverse_speed_mps, vehicle.max_speed_mps
    limit = yaw_rate_limit(vehicle)
    s = min(max(speed, low), high)
    w = min(max(yaw_rate, -limit), limit)
    problem = None
    if s != speed or w != yaw_rate:
        problem = (f'clamped the command (linear.x = {speed:g} m/s, angular.z = {yaw_rate:g} '
                   f'rad/s) to the vehicle limits ({low:g} to {high:g} m/s, |yaw rate| <= '
                   f'{limit:.3g} rad/s)')
    return CheckedCommand(float(s), float(w), problem)
