#!/usr/bin/env python3
"""Throughput of the vehicle physics (acres_sim.core.physics).

Vehicle-steps per second for N = 1, 10, 100, 1000 vehicles (Polaris and Maxxum
alternating, driving a gentle curve so the tyre model is active), median over
repeats after a warm-up that takes JIT compilation / cache loading out:

* ``kernel``   -- ``step_many`` on the state arrays (serial loop);
* ``parallel`` -- ``step_many_parallel`` (prange over vehicles);
* ``fleet``    -- ``Fleet.step`` (the Python face: command copy + kernel);
* ``truth``    -- ``Fleet.step`` plus ``Fleet.truth(i)`` for every vehicle, as a
  sim loop that samples every vehicle's ground truth each step would do.

Nothing here asserts on timings; it prints a table.  ``main()`` returns the
figures as a dict so a runner can collect them.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from acres_sim.config.vehicles import load_vehicle
from acres_sim.core import physics as ph

SIZES = (1, 10, 100, 1000)


def _fleet(n, parallel=False):
    kinds = [load_vehicle('polaris'), load_vehicle('maxxum')]
    params = [kinds[i % 2] for i in range(n)]
    poses = [(10.0 * i, 0.0, 0.0) for i in range(n)]
    fleet = ph.Fleet(params, poses, parallel=parallel)
    commands = np.tile([5.0, 0.1], (n, 1))
    for _ in range(240):           # get moving: out of the parked state, tyres loaded
        fleet.step(commands)
    return fleet, commands


def _median_rate(fn, steps, n, repeats):
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            fn()
        rates.append(steps * n / (time.perf_counter() - t0))
    return statistics.median(rates)


def measure(n, repeats=7, min_vehicle_steps=200_000):
    steps = max(20, min_vehicle_steps // n)
    fleet, commands = _fleet(n)
    states, params = fleet.states, fleet.params
    out = {}
    plane = ph.flat_field()
    ph.step_many(states, commands, params, plane, ph.DT)             # warm-up
    out['kernel'] = _median_rate(lambda: ph.step_many(states, commands, params, plane, ph.DT),
                                 steps, n, repeats)
    ph.step_many_parallel(states, commands, params, plane, ph.DT)    # warm-up
    out['parallel'] = _median_rate(
        lambda: ph.step_many_parallel(states, commands, params, plane, ph.DT), steps, n, repeats)
    out['fleet'] = _median_rate(lambda: fleet.step(commands), steps, n, repeats)

    def with_truth():
        fleet.step(commands)
        for i in range(n):
            fleet.truth(i)
    out['truth'] = _median_rate(with_truth, max(5, steps // 20), n, repeats)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=7)
    args = parser.parse_args(argv)
    results = {}
    print(f'{"N":>6} {"kernel":>14} {"parallel":>14} {"Fleet.step":>14} {"+truth(i)":>14}'
          '   vehicle-steps/s (median)')
    for n in SIZES:
        r = measure(n, repeats=args.repeats)
        results[n] = r
        print(f'{n:>6} {r["kernel"]:>14,.0f} {r["parallel"]:>14,.0f} {r["fleet"]:>14,.0f} '
              f'{r["truth"]:>14,.0f}', flush=True)
    realtime = results[1000]['kernel'] / (1000 * ph.PHYSICS_HZ)
    print(f'1000 vehicles at {ph.PHYSICS_HZ} Hz: {realtime:.1f}x real time (kernel, serial)')
    return results


if __name__ == '__main__':
    main()
