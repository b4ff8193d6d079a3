"""The rows' decimal rounding, for whole columns at once: the same floats as
Python's ``round(x, ndigits)`` and ``float(f'{x:.{n}g}')``, without a
Python call per value.

Python rounds the exact binary value of x to ``ndigits`` decimals, half to
even, and reads the decimal back as the nearest float.  For a column:

1. ``y = x * 10**ndigits`` in float64, and its nearest integer ``m``
   (half to even, ``np.rint``);
2. the result is ``m / 10**ndigits``: both are integers below 2**53 and
   10**ndigits is exact up to 10**22, so the division, correctly rounded,
   is the float nearest to the decimal m * 10**-ndigits -- the float Python
   reads back.

Step 1 can differ from Python's only where y lies within its rounding error
of a half-integer (an exact tie included); those values, and any whose y is
too large for the argument (|y| >= 2**52, or ndigits beyond 22), are rounded
by Python itself.  Over a column of noisy samples that is a handful per
million, so the result is Python's everywhere at numpy's speed
(``test_rounding.py`` compares it with Python on ties, near-ties and random
values over many decades).

numpy's fixed cost per call (about 15 us) is that of some 30 Python calls:
an array of at most :data:`FEW` values (the live sim node rounds a handful
of samples per block) is rounded by Python itself, value by value.
"""

import numpy as np

__all__ = ['FEW', 'round_decimals', 'round_significant']

FEW = 32                      # at most this many values: Python rounds each

_EXACT_POWERS = 22            # 10**n is exact in float64 up to n = 22
_POWERS = np.array([float(10 ** n) for n in range(_EXACT_POWERS + 1)])
_LARGE = 2.0 ** 52            # from here on every float64 is an integer
_NEAR_TIE = 1e-6              # y this close to a half-integer: Python decides
_NEAR_POWER = 1e-9            # log10|x| this close to an integer: Python decides


def round_decimals(values, ndigits):
    """``round(x, ndigits)`` of each float of ``values`` (an array; a new
    float64 array of the same shape)."""
    x = np.asarray(values, dtype=np.float64)
    ndigits = int(ndigits)
    if x.size <= FEW:
        return _each(x, lambda v: round(v, ndigits))
    if not 0 <= ndigits <= _EXACT_POWERS:
        return _python(x, np.isfinite(x), lambda v: round(v, ndigits))
    out, unsure = _scaled_round(x, _POWERS[ndigits])
    if unsure.any():
        out[unsure] = [round(v, ndigits) for v in x[unsure].tolist()]
    return out


def round_significant(values, digits):
    """``float(f'{x:.{digits}g}')`` of each float of ``values``: ``digits``
    significant decimal digits, i.e. ``round(x, digits - 1 - e)`` with e the
    decimal exponent of x (0, infinities and NaN stay as they are)."""
    x = np.asarray(values, dtype=np.float64)
    digits = int(digits)
    if x.size <= FEW:
        return _each(x, lambda v: float(f'{v:.{digits}g}'))
    ok = np.isfinite(x) & (x != 0.0)
    lg = np.log10(np.where(ok, np.abs(x), 1.0))
    ndigits = digits - 1 - np.floor(lg).astype(np.int64)
    # near a power of ten log10 may miss the exponent by one: Python decides
    fast = ok & (np.abs(lg - np.rint(lg)) > _NEAR_POWER) & (ndigits >= 0) & \
        (ndigits <= _EXACT_POWERS)
    out, unsure = _scaled_round(x, _POWERS[np.where(fast, ndigits, 0)])
    out[~ok] = x[~ok]
    slow = ok & (unsure | ~fast)
    if slow.any():
        out[slow] = [float(f'{v:.{digits}g}') for v in x[slow].tolist()]
    return out


def _scaled_round(x, scale):
    """(x rounded to 1 / ``scale`` steps the fast way, where that may not be
    Python's answer: near a tie, or y = x * scale too large)."""
    with np.errstate(over='ignore', invalid='ignore'):
        y = x * scale
        out = np.rint(y) / scale
        to_half = np.abs(np.abs(y - np.trunc(y)) - 0.5)
        unsure = ~(to_half > _NEAR_TIE + np.abs(y) * 2.0 ** -50) | ~(np.abs(y) < _LARGE)
    return out, unsure & np.isfinite(x)


def _each(x, rounded):
    """``rounded`` of every float of ``x``, Python's own (a few values)."""
    return np.array([rounded(v) for v in x.reshape(-1).tolist()],
                    dtype=np.float64).reshape(x.shape)


def _python(x, which, rounded):
    """``rounded`` of the floats of ``x`` where ``which`` (the others as they are)."""
    out = x.copy()
    out[which] = [rounded(v) for v in x[which].tolist()]
    return out
