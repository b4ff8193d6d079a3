#!/usr/bin/env python3
"""Cost of the IMU (one physics step plus one sample, row included) and of one
INS epoch (errors, datum chain, UTM odometry and the row), Polaris config,
along a constant-rate turn.

Warm-up first (JIT excluded), then the median and 90th percentile per call.
Targets: IMU physics_step + sample <= 20 us, INS epoch <= 50 us (both frames).
No assertions.
"""

import argparse
import math
import statistics
import time

import numpy as np

from acres_sim.config import load_config
from acres_sim.core.ins import InsModel
from acres_sim.config.sensor_records import ins_params, ins_stream
from acres_sim.pipeline.models import imu_model, site_georeference
from acres_sim.core.truth import PHYSICS_HZ, Truth


def turn(n, speed=5.0, rate=0.3):
    """Truth of ``n`` physics steps on a circle (speed m/s, yaw rate rad/s)."""
    radius = speed / rate
    out = []
    for k in range(n):
        psi = rate * k / PHYSICS_HZ
        c, s = math.cos(psi), math.sin(psi)
        R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        p_c = np.array([radius * s, radius * (1.0 - c), 0.4])
        v = np.array([speed * c, speed * s, 0.0])
        out.append(Truth(k, p_c - R @ np.array([0.3, 0.0, 0.0]), R, v,
                         np.array([0.0, 0.0, rate]), p_c))
    return out


def time_imu(imu, truths):
    times = []
    for tr in truths:
        start = time.perf_counter()
        imu.physics_step(tr)
        imu.sample(tr.step / PHYSICS_HZ, True)
        times.append((time.perf_counter() - start) * 1e6)
    return times


def time_ins(ins, truths):
    times = []
    for tr in truths:
        start = time.perf_counter()
        ins.epoch(tr.step / PHYSICS_HZ, tr)
        times.append((time.perf_counter() - start) * 1e6)
    return times


def report(name, times, target):
    median = statistics.median(times)
    p90 = float(np.percentile(times, 90))
    print(f'{name:34} {median:8.1f} us {p90:8.1f} us   (target <= {target} us)')
    return median, p90


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=20000)
    args = parser.parse_args(argv)
    config = load_config(rig='polaris')
    site = site_georeference(config)
    truths = turn(args.steps)
    print(f'{args.steps} calls each (warm numba cache)')
    print(f'{"":34} {"median":>11} {"p90":>11}')
    results = {}

    imu = imu_model(config, [0.95, -0.45, 0.7], None)
    time_imu(imu, truths[:50])           # warm-up
    imu.reset()
    results['imu'] = report('IMU physics_step + sample', time_imu(imu, truths), 20)

    for frame in ('nad83', 'wgs84_g2139'):
        params = ins_params(config, [-0.83, 0.0, -0.4])._replace(frame=frame)
        ins = InsModel(params, ins_stream(config), site)
        time_ins(ins, truths[:50])       # warm-up
        ins.reset()
        results[f'ins_{frame}'] = report(f'INS epoch ({frame})', time_ins(ins, truths), 50)
    return results


if __name__ == '__main__':
    main()
