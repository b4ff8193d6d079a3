"""Body frames and lever arms (spec: Frames and Sample Times, Antenna Position).

Body axes are FLU (forward, left, up); the world is the tile's grid ENU.  A
sensor's lever arm is given from the chassis origin or from base_footprint
(``mount_frame``): base_footprint is the middle of the rear axle on the ground,
and the chassis origin sits 0.4 wheelbase ahead of it at the height of the
centre of gravity.

The OxTS unit's own axes (x left, y forward, z down; the Polaris INS reports
its IMU message in them) are defined here once: :data:`OXTS_MOUNT_XYZW` and
the ``oxts_from_flu_*`` conversions.
"""

import math

import numpy as np

from acres_sim.core.jit import njit
from acres_sim.core.quaternion import quat_multiply_rows

__all__ = ['CHASSIS_AHEAD_OF_REAR_AXLE', 'OXTS_MOUNT_XYZW', 'chassis_in_base_footprint',
           'lever_arm_from_chassis', 'oxts_from_flu_quaternion', 'oxts_from_flu_vector',
           'oxts_variances', 'point_at_lever_arm']

CHASSIS_AHEAD_OF_REAR_AXLE = 0.4   # share of the wheelbase

# The rotation from the OxTS axes to body FLU (xyzw): a half turn about
# (1, 1, 0)/sqrt 2, which swaps x and y and turns z over (spec: INS, Outputs).
OXTS_MOUNT_XYZW = (math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0)


def oxts_from_flu_quaternion(q_flu_to_enu) -> np.ndarray:
    """The attitude of the OxTS axes, q_ins ⊗ OXTS_MOUNT_XYZW, of one xyzw
    quaternion (4,) or of each row of (n, 4)."""
    return quat_multiply_rows(q_flu_to_enu, OXTS_MOUNT_XYZW)


def oxts_from_flu_vector(v) -> np.ndarray:
    """A body vector's components in the OxTS axes, (y, x, -z) of its FLU ones;
    one vector (3,) or each row of (n, 3)."""
    v = np.asarray(v, dtype=np.float64)
    return np.stack([v[..., 1], v[..., 0], -v[..., 2]], axis=-1)


def oxts_variances(variances) -> tuple:
    """Per-axis variances (a scalar: the same on every axis) in the order of
    the OxTS axes: (var_y, var_x, var_z) of the FLU ones."""
    if isinstance(variances, (int, float)):
        variances = (variances,) * 3
    a, b, c = (float(v) for v in variances)
    return b, a, c


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
