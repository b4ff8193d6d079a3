#!/usr/bin/env python3
"""CDR serialisation cost per message, Odometry and Imu, 10 000 messages:

* vectorised (acres_sim.pipeline.cdr): fill the columns of
  ``FixedLayout.empty(n)`` from arrays, then ``encode`` (and encode alone);
* rosbags, per message: build the object with acres_sim.pipeline.messages
  (``utm_odometry``, ``imu_from_imu_row``, from rows made beforehand) and
  ``typestore.serialize_cdr`` (and serialize_cdr alone, objects prebuilt).

One warm-up run, then the median of a few repeats.  No assertions.
"""

import argparse
import statistics
import time

import numpy as np

from acres_sim.pipeline import messages as m
from acres_sim.pipeline.cdr import FixedLayout

TS = m.TYPESTORE
ODOMETRY, IMU = 'nav_msgs/msg/Odometry', 'sensor_msgs/msg/Imu'
ACCEL_VAR, GYRO_VAR = 2.5e-3, 1.2e-5


def inputs(n, rng):
    """What the recorder holds for n epochs: stamps and per-epoch arrays."""
    t_ns = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * 8_333_333
    quat = rng.standard_normal((n, 4))
    return {'t_ns': t_ns, 'position': rng.standard_normal((n, 3)) * 1e5,
            'orientation': quat / np.linalg.norm(quat, axis=1, keepdims=True),
            'variances': rng.random((n, 6)) * 1e-2, 'linear': rng.standard_normal((n, 3)),
            'angular': rng.standard_normal((n, 3)), 'accel': rng.standard_normal((n, 3)),
            'gyro': rng.standard_normal((n, 3))}


def set_stamps(arr, t_ns):
    stamp = arr['header']['stamp']
    stamp['sec'], stamp['nanosec'] = np.divmod(t_ns, 1_000_000_000)


def set_vector(column, values, axes='xyz'):
    for i, axis in enumerate(axes):
        column[axis] = values[:, i]


def odometry_batch(layout, d):
    arr = layout.empty(len(d['t_ns']))
    set_stamps(arr, d['t_ns'])
    set_vector(arr['pose']['pose']['position'], d['position'])
    set_vector(arr['pose']['pose']['orientation'], d['orientation'], 'xyzw')
    arr['pose']['covariance'][:, ::7] = np.maximum(d['variances'], m.MIN_VARIANCE)
    set_vector(arr['twist']['twist']['linear'], d['linear'])
    set_vector(arr['twist']['twist']['angular'], d['angular'])
    return layout.encode(arr)


def imu_batch(layout, d):
    arr = layout.empty(len(d['t_ns']))
    set_stamps(arr, d['t_ns'])
    arr['orientation']['w'] = 1.0
    arr['orientation_covariance'][:, 0] = -1.0
    set_vector(arr['angular_velocity'], d['gyro'])
    arr['angular_velocity_covariance'][:, ::4] = GYRO_VAR
    set_vector(arr['linear_acceleration'], d['accel'])
    arr['linear_acceleration_covariance'][:, ::4] = ACCEL_VAR
    return layout.encode(arr)


def rows(d):
    """The per-message dicts the rosbags builders take (made outside the timing)."""
    odom = [{'position_m': p, 'orientation_xyzw': q, 'covariance': v, 'linear_flu_mps': lin,
             'angular_flu_radps': ang}
            for p, q, v, lin, ang in zip(d['position'].tolist(), d['orientation'].tolist(),
                                         d['variances'].tolist(), d['linear'].tolist(),
                                         d['angular'].tolist())]
    imu = [{'angular_velocity_flu_radps': g, 'specific_force_flu_mps2': a}
           for g, a in zip(d['gyro'].tolist(), d['accel'].tolist())]
    return odom, imu, d['t_ns'].tolist()


def median_us(fn, n, repeats):
    fn()                                                   # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) / n * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('-n', type=int, default=10_000, help='messages per batch')
    parser.add_argument('--repeats', type=int, default=5)
    args = parser.parse_args(argv)
    n, repeats = args.n, args.repeats
    d = inputs(n, np.random.default_rng(1))
    odom_rows, imu_rows, stamps = rows(d)
    odom = FixedLayout(TS, ODOMETRY, {'header.frame_id': 'utm', 'child_frame_id': 'base_footprint'})
    imu = FixedLayout(TS, IMU, {'header.frame_id': 'imu_link'})

    def odom_objects():
        return [m.utm_odometry(r, t) for r, t in zip(odom_rows, stamps)]

    def imu_objects():
        return [m.imu_from_imu_row(r, t, 'imu_link', ACCEL_VAR, GYRO_VAR)
                for r, t in zip(imu_rows, stamps)]

    results = {}
    for name, msgtype, layout, batch, objects in (
            ('Odometry', ODOMETRY, odom, odometry_batch, odom_objects),
            ('Imu', IMU, imu, imu_batch, imu_objects)):
        filled = layout.empty(n)
        prebuilt = objects()
        results[name] = {
            'batch_fill_encode_us': median_us(lambda: batch(layout, d), n, repeats),
            'batch_encode_us': median_us(lambda: layout.encode(filled), n, repeats),
            'rosbags_build_serialize_us': median_us(
                lambda: [TS.serialize_cdr(o, msgtype) for o in objects()], n, repeats),
            'rosbags_serialize_us': median_us(
                lambda: [TS.serialize_cdr(o, msgtype) for o in prebuilt], n, repeats),
            'bytes': layout.dtype.itemsize}

    print(f'CDR serialisation, {n} messages, median of {repeats} (us per message)')
    print(f'  {"":10s} {"bytes":>6s} {"fill+encode":>12s} {"encode":>8s} '
          f'{"rosbags build+ser":>18s} {"ser only":>9s} {"speed-up":>9s}')
    for name, r in results.items():
        print(f'  {name:10s} {r["bytes"]:6d} {r["batch_fill_encode_us"]:12.3f} '
              f'{r["batch_encode_us"]:8.3f} {r["rosbags_build_serialize_us"]:18.2f} '
              f'{r["rosbags_serialize_us"]:9.2f} '
              f'{r["rosbags_build_serialize_us"] / r["batch_fill_encode_us"]:8.0f}x')
    return results


if __name__ == '__main__':
    main()
