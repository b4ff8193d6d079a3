#!/usr/bin/env python3
"""Cost of one whole GNSS receiver epoch (sky, state machine, errors, datum
outputs, the row and its GGA sentence) along a drive through the yard.

Two scenes: the packaged ACRE farmstead and the 240-obstacle stress scene of
bench_gnss_sky.py.  Warm-up first (JIT excluded), then the median and 90th
percentile per epoch; also the cost of one simulated hour at 10 Hz.  No assertions.
"""

import argparse
import statistics
import time

import numpy as np

from acres_sim.config import load_config
from acres_sim.config.scene import default_scene
from acres_sim.pipeline.models import gnss_receiver, site_georeference

# a sibling script (bench/ is on sys.path when a script in it runs): the same scenes
from bench_gnss_sky import drive, stress_scene


def per_epoch_us(rx, path, hz=10.0):
    times = []
    for k, position in enumerate(path):
        start = time.perf_counter()
        rx.epoch(k / hz, position)
        times.append((time.perf_counter() - start) * 1e6)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--epochs', type=int, default=3000)
    args = parser.parse_args(argv)
    config = load_config(rig='polaris')
    path = drive(args.epochs)
    print(f'GNSS receiver epoch, {args.epochs} epochs at 10 Hz (warm numba cache)')
    print(f'{"scene":8} {"obstacles":>9} {"median":>10} {"p90":>10} {"1 h at 10 Hz":>14}')
    results = {}
    for scene in (default_scene(), stress_scene()):
        rx = gnss_receiver(config, scene, site_georeference(config), None)
        per_epoch_us(rx, path[:20])          # warm-up
        rx.reset()
        times = per_epoch_us(rx, path)
        median = statistics.median(times)
        p90 = float(np.percentile(times, 90))
        results[scene.name] = (median, p90)
        print(f'{scene.name:8} {scene.n_obstacles:9d} {median:8.1f} us {p90:8.1f} us '
              f'{median * 36000 / 1e6:11.1f} s')
    return results


if __name__ == '__main__':
    main()
