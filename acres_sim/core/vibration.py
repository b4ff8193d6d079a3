"""Chassis vibration seen by every sensor through the truth (stub)."""

from typing import NamedTuple

__all__ = ['VibrationSwitches']


class VibrationSwitches(NamedTuple):
    """Which vibration sources act on one vehicle."""

    engine: bool = False          # engine firing order and PTO
    parked_jitter: bool = False   # the brake's 60 Hz velocity alternation when parked
    roughness: bool = True        # the terrain's roughness under the wheels (a terrain only)
