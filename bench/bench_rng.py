#!/usr/bin/env python3
"""Throughput and start-up of the PCG32 noise streams (acres_sim.core.rng).

Measures, after a warm-up call that takes JIT compilation / cache loading out
of the timings, the median over repeats of:

* draws per second through the Python methods (``Pcg32.next_u32()``,
  ``.uniform()``, ``.gaussian()``), one call per draw;
* draws per second through the numba fill kernels (``pcg32_fill_u32``,
  ``pcg32_fill_uniform``, ``pcg32_fill_gaussian``) into a preallocated array;
* in a fresh interpreter with the numba cache already warm: the time from
  ``import acres_sim.core.rng`` to the first Gaussian, the import alone, and
  the whole process wall time including interpreter start.

Nothing here asserts on timings; it only prints a table.  ``main()`` returns
the figures as a dict so a runner can collect them.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

# Runs in the fresh process; prints import time and import-to-first-Gaussian.
_STARTUP_SNIPPET = """
import time
t0 = time.perf_counter()
import acres_sim.core.rng as rng
t1 = time.perf_counter()
g = rng.Pcg32(12345, 1).gaussian()
t2 = time.perf_counter()
print(t1 - t0, t2 - t0)
"""


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _python_rate(method, n, repeats):
    def loop():
        for _ in range(n):
            method()
    return n / _median_time(loop, repeats)


def _fill_rate(kernel, state, out, repeats):
    return out.shape[0] / _median_time(lambda: kernel(state, out), repeats)


def _startup(repeats):
    cmd = [sys.executable, '-c', _STARTUP_SNIPPET]
    imports, firsts, walls = [], [], []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        res = subprocess.run(cmd, check=True,
                             capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if i == 0:
            continue            # makes sure the on-disk cache is populated
        imp, first = (float(v) for v in res.stdout.split())
        imports.append(imp)
        firsts.append(first)
        walls.append(wall)
    return (statistics.median(imports), statistics.median(firsts),
            statistics.median(walls))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--repeats', type=int, default=7)
    ap.add_argument('--n-python', type=int, default=100_000,
                    help='draws per repeat through the Python methods')
    ap.add_argument('--n-fill', type=int, default=2_000_000,
                    help='array length per repeat for the numba fills')
    ap.add_argument('--startup-repeats', type=int, default=5)
    args = ap.parse_args(argv)

    import numpy as np

    from acres_sim.core.rng import (Pcg32, pcg32_fill_gaussian, pcg32_fill_u32,
                                    pcg32_fill_uniform)

    p = Pcg32(2024, 7)
    u32 = np.empty(args.n_fill, dtype=np.uint32)
    f64 = np.empty(args.n_fill, dtype=np.float64)

    # Warm-up: compile or load every kernel used below before timing.
    p.next_u32(), p.uniform(), p.gaussian()
    pcg32_fill_u32(p.state, u32[:8])
    pcg32_fill_uniform(p.state, f64[:8])
    pcg32_fill_gaussian(p.state, f64[:8])

    r = args.repeats
    results = {
        'python_u32_per_s': _python_rate(p.next_u32, args.n_python, r),
        'python_uniform_per_s': _python_rate(p.uniform, args.n_python, r),
        'python_gaussian_per_s': _python_rate(p.gaussian, args.n_python, r),
        'fill_u32_per_s': _fill_rate(pcg32_fill_u32, p.state, u32, r),
        'fill_uniform_per_s': _fill_rate(pcg32_fill_uniform, p.state, f64, r),
        'fill_gaussian_per_s': _fill_rate(pcg32_fill_gaussian, p.state, f64, r),
    }
    imp, first, wall = _startup(args.startup_repeats)
    results.update(startup_import_s=imp, startup_first_gaussian_s=first,
                   startup_process_wall_s=wall)

    rows = [
        ('Python next_u32()', results['python_u32_per_s'], 'draws/s'),
        ('Python uniform()', results['python_uniform_per_s'], 'draws/s'),
        ('Python gaussian()', results['python_gaussian_per_s'], 'draws/s'),
        ('numba fill_u32', results['fill_u32_per_s'], 'draws/s'),
        ('numba fill_uniform', results['fill_uniform_per_s'], 'draws/s'),
        ('numba fill_gaussian', results['fill_gaussian_per_s'], 'draws/s'),
        ('import rng (fresh process)', imp * 1e3, 'ms'),
        ('import -> first gaussian', first * 1e3, 'ms'),
        ('whole process (python -c)', wall * 1e3, 'ms'),
    ]
    print(f'acres_sim.core.rng benchmark (medians: {r} repeats, '
          f'{args.startup_repeats} fresh processes, warm numba cache)')
    print(f'{"measure":<30} {"value":>14}  unit')
    print('-' * 52)
    for name, value, unit in rows:
        text = f'{value:,.0f}' if unit == 'draws/s' else f'{value:.1f}'
        print(f'{name:<30} {text:>14}  {unit}')
    return results


if __name__ == '__main__':
    main()
