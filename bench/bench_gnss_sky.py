#!/usr/bin/env python3
"""Cost of the GNSS sky view per receiver epoch: the lines of sight of all 78
satellites (``satellite_los_enu``) plus ``sky_epoch`` (prefilter, ray tests,
classes, both DOPs, reflector and multipath index).

Two scenes: the packaged ACRE farmstead, and a stress scene of 240 random
obstacles (80 boxes, 80 cylinders, 80 crowns) within 120 m of the antenna.
The antenna moves along a drive through the scene (10 Hz epochs over a few
minutes), so the prefilter and the classes change from epoch to epoch.

Each epoch is timed on its own (perf_counter around the two kernel calls, the
numba kernels called directly as the receiver does); warm-up first (JIT and
cache load excluded); medians and 90th percentiles printed.  No assertions.
"""

import argparse
import statistics
import time

import numpy as np

from acres_sim.config import load_config
from acres_sim.config.scene import default_scene
from acres_sim.core.gnss.constellation import (N_SATELLITES, build_constellation,
                                               satellite_los_enu, site_frame)
from acres_sim.core.gnss.sky import (SKY_N_KEPT, SKY_N_USED, SKY_SIZE, make_sky_params,
                                     sky_epoch, system_mask)
from acres_sim.core.rng import make_stream
from acres_sim.core.scene import make_scene
from acres_sim.pipeline.models import site_georeference


def stress_scene(n_each=80, seed=3):
    """Random boxes, bins and crowns around the origin (all within ~120 m)."""
    rng = np.random.default_rng(seed)
    boxes, cylinders, spheres = [], [], []
    for _ in range(n_each):
        x, y = rng.uniform(-120, 110, 2)
        w, d = rng.uniform(4, 30, 2)
        boxes.append([x, y, 0.0, x + w, y + d, rng.uniform(3, 15)])
        cylinders.append([*rng.uniform(-120, 120, 2), rng.uniform(3, 9), 0.0,
                          rng.uniform(10, 30)])
        spheres.append([*rng.uniform(-120, 120, 2), rng.uniform(6, 12), rng.uniform(3, 7)])
    return make_scene('stress', boxes, cylinders, spheres)


def drive(n_epochs, radius=40.0):
    """Antenna positions on a circle through the scene, 2.2 m up."""
    ang = np.linspace(0.0, 2 * np.pi, n_epochs, endpoint=False)
    return np.column_stack([radius * np.cos(ang) - 20.0, radius * np.sin(ang) + 10.0,
                            np.full(n_epochs, 2.2)])


def time_epochs(scene, constellation, site, params, on, path, hz=10.0):
    los = np.empty((N_SATELLITES, 3))
    classes = np.empty(N_SATELLITES, dtype=np.int64)
    denied = np.zeros(N_SATELLITES, dtype=np.bool_)
    out = np.empty(SKY_SIZE)
    system = constellation.system
    boxes, cylinders, spheres = scene.boxes, scene.cylinders, scene.spheres
    satellite_los_enu(0.0, constellation, site, los)      # warm-up
    sky_epoch(los, system, on, 0.0, 0.0, 2.0, boxes, cylinders, spheres, params, denied,
              classes, out)
    los_us, sky_us, used, kept = [], [], [], []
    clock = time.perf_counter
    for k, (e, n, u) in enumerate(path):
        t = k / hz
        t0 = clock()
        satellite_los_enu(t, constellation, site, los)
        t1 = clock()
        sky_epoch(los, system, on, e, n, u, boxes, cylinders, spheres, params, denied, classes,
                  out)
        t2 = clock()
        los_us.append((t1 - t0) * 1e6)
        sky_us.append((t2 - t1) * 1e6)
        used.append(out[SKY_N_USED])
        kept.append(out[SKY_N_KEPT])
    return los_us, sky_us, used, kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--epochs', type=int, default=3000)
    parser.add_argument('--seed', type=int, default=42)
    args = parser.parse_args(argv)

    site = site_frame(site_georeference(load_config(rig=None)))
    constellation = build_constellation(make_stream(args.seed, 'gnss_constellation'))
    params = make_sky_params()
    on = system_mask()
    path = drive(args.epochs)
    print(f'GNSS sky view per epoch, {args.epochs} epochs at 10 Hz along a drive, '
          'microseconds (warm numba cache)')
    print(f'{"scene":14} {"obstacles":>9} {"kept":>6} {"used":>5} {"LOS med":>8} '
          f'{"sky med":>8} {"sky p90":>8} {"total med":>10}')
    results = {}
    for scene in (default_scene(), stress_scene()):
        los_us, sky_us, used, kept = time_epochs(scene, constellation, site, params, on, path)
        total = [a + b for a, b in zip(los_us, sky_us)]
        p90 = float(np.percentile(sky_us, 90))
        results[scene.name] = (statistics.median(los_us), statistics.median(sky_us),
                               statistics.median(total))
        print(f'{scene.name:14.14} {scene.n_obstacles:9d} {statistics.mean(kept):6.1f} '
              f'{statistics.mean(used):5.1f} {results[scene.name][0]:8.2f} '
              f'{results[scene.name][1]:8.2f} {p90:8.2f} {results[scene.name][2]:10.2f}')
    return results


if __name__ == '__main__':
    main()
