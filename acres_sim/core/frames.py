"""Body frames and lever arms (spec: Frames and Sample Times, Antenna Position).

Body axes are FLU (forward, left, up); the world is the tile's grid ENU.  A
sensor's lever arm is given from the chassis origin or from base_footprint
(``mount_frame``): base_footprint is the middle of the rear axle on the ground,
and the chassis origin sits 0.4 wheelbase ahead of it at the height of the
centre of gravity.
"""

from numba import njit
import numpy as np

__all__ = ['CHASSIS_AHEAD_OF_REAR_AXLE', 'chassis_in_base_footprint', 'lever_arm_from_chassis',
           'point_at_lever_arm']

CHASSIS_AHEAD_OF_REAR_AXLE = 0.4   # share of the wheelbase


def chassis_in_base_footprint(wheelbase_m, cog_height_m) -> np.ndarray:
    """Position of the chassis origin in the base_footprint frame (FLU, m)."""
    return np.array([CHASSIS_AHEAD_OF_REAR_AXLE * wheelbase_m, 0.0, cog_height_m])


def lever_arm_from_chassis(lever_arm_m, mount_frame, wheelbase_m, cog_height_m) -> np.ndarray:
    """A mount given in ``mount_frame`` ('chassis' or 'base_footprint') as a
    lever arm from the chassis origin (FLU, m)."""
    r = np.asarray(lever_arm_m, dtype=np.float64)
    if mount_frame == 'chassis':
        return r.copy()
    if mount_frame == 'base_footprint':
        return r - chassis_in_base_footprint(wheelbase_m, cog_height_m)
    raise ValueError(f"mount_frame must be 'chassis' or 'base_footprint', not {mount_frame!r}")


@njit(cache=True)
def point_at_lever_arm(p, R, r):
    """World position p + R r of the point at lever arm ``r`` (e.g. the antenna p_a).

    Written out: numba's matrix product needs SciPy's BLAS, which is not a dependency.
    """
    out = np.empty(3)
    for i in range(3):
        out[i] = p[i] + R[i, 0] * r[0] + R[i, 1] * r[1] + R[i, 2] * r[2]
    return out
