"""The ground truth of one vehicle at one physics step: the inputs of the
sensor equations (spec: Symbols).  Physics produces it; the IMU, INS and GNSS
models consume it.  Grid ENU world axes, body FLU, SI units.
"""

from typing import NamedTuple

import numpy as np

__all__ = ['PHYSICS_HZ', 'Truth']

PHYSICS_HZ = 120  # physics steps per second; t = k / PHYSICS_HZ from the integer step k


class Truth(NamedTuple):
    step: int            # physics step k; episode time t = k / 120
    p: np.ndarray        # chassis origin, grid ENU [m], (3,)
    R: np.ndarray        # rotation body FLU -> ENU, (3, 3)
    v: np.ndarray        # velocity of the centre of mass, world [m/s], (3,)
    w: np.ndarray        # angular velocity, world axes [rad/s], (3,)
    p_c: np.ndarray      # centre of mass, grid ENU [m], (3,)
    reset: bool = False  # the pose jumped at this step (sensor differences restart)
