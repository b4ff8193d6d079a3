#!/usr/bin/env python3
"""Cost of the site georeference chain: grid ENU -> geodetic (one frame) -> UTM.

* per point inside numba: the scalar kernel ``enu_to_utm_rad`` called in a
  jitted loop (how the sensor models use it);
* per point through the Python face ``SiteGeoreference.enu_to_utm`` on arrays
  of 10^5 points (epochs as numpy datetimes, then the same kernel).

Warm-up first (JIT/cache load excluded), medians of repeats. No assertions.
"""

import argparse
import statistics
import time

from numba import njit
import numpy as np

from acres_sim.config import load_config
from acres_sim.core.geo import FRAMES
from acres_sim.core.geo.site import enu_to_utm_rad
from acres_sim.core.geo.utm import central_meridian_rad
from acres_sim.pipeline.models import site_georeference


@njit(cache=True)
def chain_loop(e, n, u, epoch, p, frame, lam_c):
    total = 0.0
    for i in range(e.shape[0]):
        E, N, h, _g, _k = enu_to_utm_rad(e[i], n[i], u[i], epoch, p, frame, lam_c)
        total += E + N + h
    return total


def median_seconds(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--points', type=int, default=100_000)
    parser.add_argument('--repeats', type=int, default=7)
    args = parser.parse_args(argv)

    site = site_georeference(load_config(rig=None))
    rng = np.random.default_rng(1)
    e, n = rng.uniform(-1500.0, 1500.0, (2, args.points))
    u = rng.uniform(0.0, 5.0, args.points)
    t = np.linspace(0.0, 3600.0, args.points)
    lam_c = central_meridian_rad(16)
    epoch = site.epoch(0.0)

    print(f'site chain, {args.points} points, medians of {args.repeats} (warm numba cache)')
    print(f'{"frame":12} {"kernel in numba loop":>22} {"SiteGeoreference arrays":>25}')
    results = {}
    for frame, code in FRAMES.items():
        chain_loop(e[:4], n[:4], u[:4], epoch, site.params, code, lam_c)   # warm-up
        site.enu_to_utm(e[:4], n[:4], u[:4], t[:4], frame, 16)
        kernel = median_seconds(
            lambda code=code: chain_loop(e, n, u, epoch, site.params, code, lam_c),
            args.repeats)
        face = median_seconds(lambda frame=frame: site.enu_to_utm(e, n, u, t, frame, 16),
                              args.repeats)
        results[frame] = (kernel / args.points * 1e6, face / args.points * 1e6)
        print(f'{frame:12} {results[frame][0]:17.3f} us/pt {results[frame][1]:20.3f} us/pt')
    return results


if __name__ == '__main__':
    main()
