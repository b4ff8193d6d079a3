"""Quaternion helpers against scipy's Rotation (an independent implementation)."""

import numpy as np
from scipy.spatial.transform import Rotation  # scipy arrives with allantools (test deps)

from acres_sim.core.quaternion import (matrix_from_quat, q_x, q_y, q_z, quat_from_matrix,
                                       quat_multiply, quat_multiply_rows, quat_rotate)


def test_against_scipy():
    rng = np.random.default_rng(2)
    for _ in range(200):
        a, b = Rotation.random(2, random_state=rng)
        qa, qb = a.as_quat(), b.as_quat()                 # scipy: (x, y, z, w)
        assert np.allclose(matrix_from_quat(qa), a.as_matrix())
        product = quat_multiply(qa, qb)
        expected = (a * b).as_quat()
        assert np.allclose(product, expected) or np.allclose(product, -expected)
        back = quat_from_matrix(a.as_matrix())
        assert np.allclose(back, qa) or np.allclose(back, -qa)
        v = rng.normal(size=3)
        assert np.allclose(quat_rotate(qa, v), a.apply(v))


def test_single_axis_rotations():
    for fn, axis in ((q_x, 'x'), (q_y, 'y'), (q_z, 'z')):
        assert np.allclose(fn(0.3), Rotation.from_euler(axis, 0.3).as_quat())


def test_the_rows_product_is_the_kernels_bit_for_bit():
    """The numpy form (message batches) and the numba kernel (INS) are one product."""
    rng = np.random.default_rng(3)
    a, b = Rotation.random(100, random_state=rng).as_quat(), rng.normal(size=4)
    rows = quat_multiply_rows(a, b)
    assert rows.shape == (100, 4)
    assert np.array_equal(rows, np.array([quat_multiply(q, b) for q in a]))
    assert np.array_equal(quat_multiply_rows(a[7], b), quat_multiply(a[7], b))
    expected = (Rotation.from_quat(a) * Rotation.from_quat(b / np.linalg.norm(b))).as_quat()
    unit = rows / np.linalg.norm(b)
    assert np.allclose(np.abs(np.sum(unit * expected, axis=1)), 1.0)
