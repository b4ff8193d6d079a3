"""numba's ``njit``, for every kernel of the package, with numba's BLAS probe
left out.

The first time a process compiles or loads a kernel, numba imports its numpy
lowering (``numba.np.arraymath``), which checks whether scipy's BLAS can back
``np.dot`` by importing ``scipy.linalg``: about 0.4 s and 16 MB in every
process (the sim node, the sensor nodes, the recorder), for a library no
kernel here uses (no kernel calls ``np.dot``, ``np.linalg`` or ``@``).  So
the first import of this module imports that lowering while
``scipy.linalg`` cannot be imported; numba then takes BLAS as absent, which
changes only ``np.convolve`` and ``np.correlate`` (a plain loop instead of
BLAS's dot).  ``np.dot`` and ``np.linalg`` would still compile: they import
scipy's BLAS again when a kernel uses them, and ``scipy.linalg`` imports
normally once the probe is done.  When numba's lowering is loaded already
(numba used before this module), nothing changes.
"""

import sys

import numba

__all__ = ['njit', 'prange']

njit = numba.njit
prange = numba.prange

_PROBED = 'scipy.linalg'


def _lowering_without_blas_probe():
    if 'numba.np.arraymath' in sys.modules or _PROBED in sys.modules:
        return
    sys.modules[_PROBED] = None            # makes "import scipy.linalg" fail
    try:
        import numba.np.arraymath  # noqa: F401 - the lowering, with its probe
    finally:
        del sys.modules[_PROBED]


_lowering_without_blas_probe()
