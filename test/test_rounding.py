"""core.rounding against Python itself: ``round(x, n)`` and ``'%.<n>g'``,
float for float (bit patterns, so -0.0 counts), on exact ties, values a few
ulps from a tie, powers of ten and their neighbours, and noisy values over
many decades."""

import math

import numpy as np
import pytest

from acres_sim.core.rounding import FEW, round_decimals, round_significant


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64)


def _hard_values(ndigits):
    """Ties of ``ndigits`` decimals and their float neighbours, around zero and big."""
    rng = np.random.default_rng(ndigits)
    m = np.concatenate([np.arange(-50, 50), rng.integers(-10**9, 10**9, 2000)])
    ties = (m + 0.5) / 10.0 ** ndigits
    steps = np.array([-3, -2, -1, 0, 1, 2, 3])
    near = np.concatenate([ties, [np.nextafter(t, t + np.sign(s) * np.inf) if s else t
                                  for t in ties[:200] for s in steps]])
    binary_ties = np.array([0.5, 1.5, 2.5, 0.125, 0.375, -0.625, 2.675, 1.005, 0.045])
    return np.concatenate([near, binary_ties, -near[:500]])


@pytest.mark.parametrize('ndigits', [0, 1, 3, 4, 6, 8, 10, 12, 16])
def test_round_decimals_is_pythons_round(ndigits):
    rng = np.random.default_rng(100 + ndigits)
    noisy = rng.normal(size=20000) * 10.0 ** rng.uniform(-12, 9, 20000)
    values = np.concatenate([_hard_values(ndigits), noisy, [0.0, -0.0, -1e-300, 5e-324,
                                                            2.0**52 + 1, -2.0**60, 1e300]])
    expected = [round(v, ndigits) for v in values.tolist()]
    assert np.array_equal(_bits(round_decimals(values, ndigits)), _bits(expected))


def test_round_decimals_keeps_shape_and_non_finite_values():
    values = np.array([[1.23456789, math.inf], [-math.inf, math.nan]])
    out = round_decimals(values, 3)
    assert out.shape == (2, 2)
    assert out[0, 0] == 1.235 and out[0, 1] == math.inf and out[1, 0] == -math.inf
    assert math.isnan(out[1, 1])


@pytest.mark.parametrize('ndigits', [-2, 25])
def test_round_decimals_beyond_exact_scales_is_python(ndigits):
    values = np.tile([123456.789, 1.5e-20, -987.65, 0.0], FEW)
    assert np.array_equal(_bits(round_decimals(values, ndigits)),
                          _bits([round(v, ndigits) for v in values.tolist()]))


@pytest.mark.parametrize('digits', [1, 3, 6, 9])
def test_round_significant_is_pythons_format(digits):
    rng = np.random.default_rng(digits)
    decades = np.arange(-30, 20)
    powers = 10.0 ** decades
    near_powers = np.concatenate([powers, np.nextafter(powers, 0), np.nextafter(powers, np.inf),
                                  powers * (1 - 5e-7), powers * (1 + 5e-7), -powers])
    noisy = rng.normal(size=30000) * 10.0 ** rng.uniform(-30, 15, 30000)
    ties = np.concatenate([(np.arange(1, 200) + 0.5) * 10.0 ** e for e in (-8, -3, 0, 2)])
    values = np.concatenate([near_powers, noisy, ties, [0.0, -0.0, 5e-324, 1e308]])
    expected = [float(f'{v:.{digits}g}') for v in values.tolist()]
    assert np.array_equal(_bits(round_significant(values, digits)), _bits(expected))


@pytest.mark.parametrize('size', [1, 5, FEW, FEW + 1])
def test_a_few_values_round_as_many_do(size):
    """Arrays of at most FEW values take Python's rounding value by value,
    longer ones numpy's: both give Python's floats, in the array's shape."""
    rng = np.random.default_rng(size)
    values = np.concatenate([_hard_values(6)[::97], rng.normal(size=200) * 1e3])[:2 * size]
    values = values.reshape(2, size)
    out = round_decimals(values, 6)
    assert out.shape == (2, size) and out.dtype == np.float64
    assert np.array_equal(_bits(out), _bits([[round(v, 6) for v in row]
                                             for row in values.tolist()]))
    significant = round_significant(values[0], 6)
    assert np.array_equal(_bits(significant),
                          _bits([float(f'{v:.6g}') for v in values[0].tolist()]))
