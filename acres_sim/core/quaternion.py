"""Unit quaternions in the order (x, y, z, w), as ROS and the spec's rows use
them; an attitude is the active rotation from body FLU to grid ENU.

Small numba kernels on length-4 arrays; ``q_x``, ``q_y``, ``q_z`` are the
rotations about one axis that the spec's INS formulas compose.  The Hamilton
product is written once, in :func:`hamilton_product`: numba code calls it
through :func:`quat_multiply`, and numpy code (columns of many quaternions)
through :func:`quat_multiply_rows`, so both give the same doubles.
"""

import math

import numpy as np

from acres_sim.core.jit import njit

__all__ = ['hamilton_product', 'quat_multiply', 'quat_multiply_rows', 'quat_conjugate',
           'quat_from_axis_angle', 'q_x', 'q_y', 'q_z', 'matrix_from_quat', 'quat_from_matrix',
           'quat_normalize', 'quat_rotate']


@njit(cache=True)
def hamilton_product(ax, ay, az, aw, bx, by, bz, bw):
    """The components (x, y, z, w) of the Hamilton product a ⊗ b (apply b first,
    then a).  Scalars in numba; its ``py_func`` takes numpy arrays too."""
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


@njit(cache=True)
def quat_multiply(a, b):
    """Hamilton product a ⊗ b of two length-4 arrays."""
    x, y, z, w = hamilton_product(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3])
    return np.array([x, y, z, w])


def quat_multiply_rows(a, b):
    """a[i] ⊗ b for every row of ``a`` ((n, 4), or one quaternion (4,)) and one
    quaternion ``b``, in numpy: the operations of :func:`quat_multiply`."""
    a = np.asarray(a, dtype=np.float64)
    bx, by, bz, bw = (float(c) for c in b)
    return np.stack(hamilton_product.py_func(a[..., 0], a[..., 1], a[..., 2], a[..., 3],
                                             bx, by, bz, bw), axis=-1)


@njit(cache=True)
def quat_conjugate(q):
    return np.array([-q[0], -q[1], -q[2], q[3]])


@njit(cache=True)
def quat_normalize(q):
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return np.array([q[0] / n, q[1] / n, q[2] / n, q[3] / n])


@njit(cache=True)
def quat_from_axis_angle(ax, ay, az, angle):
    """Rotation by ``angle`` [rad] about the unit axis (ax, ay, az)."""
    s = math.sin(0.5 * angle)
    return np.array([ax * s, ay * s, az * s, math.cos(0.5 * angle)])


@njit(cache=True)
def q_x(angle):
    return quat_from_axis_angle(1.0, 0.0, 0.0, angle)


@njit(cache=True)
def q_y(angle):
    return quat_from_axis_angle(0.0, 1.0, 0.0, angle)


@njit(cache=True)
def q_z(angle):
    return quat_from_axis_angle(0.0, 0.0, 1.0, angle)


@njit(cache=True)
def matrix_from_quat(q):
    """The 3x3 rotation matrix of unit quaternion ``q``."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@njit(cache=True)
def quat_from_matrix(R):
    """Unit quaternion (w >= 0) of rotation matrix ``R`` (Shepperd's method)."""
    trace = R[0, 0] + R[1, 1] + R[2, 2]
    if trace > 0.0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                      (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = np.array([0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s,
                      (R[2, 1] - R[1, 2]) / s])
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = np.array([(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s,
                      (R[0, 2] - R[2, 0]) / s])
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = np.array([(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s,
                      (R[1, 0] - R[0, 1]) / s])
    if q[3] < 0.0:
        q = -q
    return q


@njit(cache=True)
def quat_rotate(q, v):
    """v rotated by q (R(q) v)."""
    R = matrix_from_quat(q)
    return np.array([R[0, 0] * v[0] + R[0, 1] * v[1] + R[0, 2] * v[2],
                     R[1, 0] * v[0] + R[1, 1] * v[1] + R[1, 2] * v[2],
                     R[2, 0] * v[0] + R[2, 1] * v[1] + R[2, 2] * v[2]])
