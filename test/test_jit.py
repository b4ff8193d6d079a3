"""acres_sim.core.jit: a process runs its kernels without importing scipy's
BLAS (numba's probe of it is left out), and a kernel that does use BLAS
still compiles and gives numpy's answer."""

import subprocess
import sys
import textwrap


def _python(code):
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_kernels_run_without_scipys_blas_and_np_dot_still_compiles_after():
    out = _python('''
        import sys
        import numpy as np
        from acres_sim.core.rng import Pcg32
        from acres_sim.core.quaternion import quat_multiply
        Pcg32(7, 3)                          # two kernels of the package, the first
        quat_multiply(np.array([1.0, 0, 0, 0]), np.array([0.0, 1, 0, 0]))
        print('scipy.linalg' in sys.modules)

        from numba import njit               # a kernel with BLAS's dot, after them

        @njit
        def dot(a, b):
            return np.dot(a, b)

        a, b = np.arange(6.0).reshape(2, 3), np.array([0.5, -1.0, 2.0])
        print(np.array_equal(dot(a, b), a @ b), 'scipy.linalg' in sys.modules)
    ''')
    assert out == ['False', 'True', 'True']
