"""The ground truth of one vehicle at one physics step: the inputs of the
sensor equations (spec: Symbols).  Physics produces it; the IMU, INS and GNSS
models consume it.  Grid ENU world axes, body FLU, SI units.
"""

from typing import NamedTuple

import numpy as np

__all__ = ['PHYSICS_HZ', 'TRUTH_SIZE', 'T_P', 'T_Q', 'T_V', 'T_W', 'Truth']

PHYSICS_HZ = 120  # physics steps per second; t = k / PHYSICS_HZ from the integer step k

# A truth record as a float64 row (acres_sim.core.block): chassis origin p (3),
# orientation q (4, xyzw, body FLU -> ENU), CoM velocity v (3), angular velocity w (3).
T_P, T_Q, T_V, T_W = 0, 3, 7, 10
TRUTH_SIZE = 13


class Truth(NamedTuple):
    step: int            # physics step k; episode time t = k / 120
    p: np.ndarray        # chassis origin, grid ENU [m], (3,)
    R: np.ndarray        # rotation body FLU -> ENU, (3, 3)
    v: np.ndarray        # velocity of the centre of mass, world [m/s], (3,)
    w: np.ndarray        # angular velocity, world axes [rad/s], (3,)
    p_c: np.ndarray      # centre of mass, grid ENU [m], (3,)
    reset: bool = False  # the pose jumped at this step (sensor differences restart)
