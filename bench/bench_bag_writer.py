#!/usr/bin/env python3
"""rosbag2 writing cost for the simulation thread: foreground vs background
:class:`acres_sim.record.bag.BagWriter`.

100 000 pre-serialised small messages (real CDR of the recorder's types:
Clock, Imu, NavSatFix, Odometry, TFMessage, cycling over 10 topics) written
with ``write_raw``:

* **tight loop** -- nothing but writes.  Foreground pays rosbags'
  ``Writer.write`` per message (and, with the signal hold --
  ``hold_interrupts=True``, the default; the recorder turns it off -- the hold
  around it); background pays the queueing, and once the batches outrun the
  writer process it waits for it (back-pressure), so this is its worst case.
* **paced** -- a fixed amount of other work (``--work-us``, the simulation)
  between messages, as in the recorder; the time spent *inside* the write
  calls is what the simulation thread pays.  The writer process keeps up on
  the other core.

Per row: the parent's time per message in the write calls, ``close()``, and
the total from opening the bag (background: starting the writer process) to
the end of ``close()``; each run ``--repeat`` times, the median (and the
fastest) shown -- the machine is shared, a run can be disturbed.
``--batch-sizes`` sweeps the background batch size.  No assertions.
"""

import argparse
import os
from pathlib import Path
import tempfile
import time

from acres_sim.pipeline import messages as m
from acres_sim.record.bag import BATCH_SIZE, BagWriter

T0_NS = 1_000_000_000


def sample_messages():
    """(topic, msgtype, cdr bytes) of one step's worth of small messages."""
    ins = {'fix': {'latitude_deg': 40.47, 'longitude_deg': -86.99, 'altitude_m': 183.25,
                   'datum': 'nad83_2011', 'status': 2, 'service': 1,
                   'position_covariance': [1e-4, 1e-4, 2e-4]},
           'imu': {'orientation_enu_xyzw': [0, 0, 0.7071, 0.7071],
                   'angular_velocity_flu_radps': [0.01, 0.02, 0.3],
                   'linear_acceleration_flu_mps2': [0.3, -0.1, 9.8]}}
    odom_row = {'frame': 'utm', 'child': 'base_footprint',
                'position_m': [500477.9, 4480101.7, 183.2],
                'orientation_xyzw': [0, 0, 0.7071, 0.7071], 'linear_flu_mps': [4.0, 0.1, 0.0],
                'angular_flu_radps': [0.0, 0.0, 0.3], 'grid_rotation_deg': 0.05,
                'covariance': [1e-4, 1e-4, 2e-4, 3e-7, 3e-7, 3e-6]}
    odom = m.utm_odometry(odom_row, T0_NS)
    imu_row = {'specific_force_flu_mps2': [0.01, -0.03, 9.8],
               'angular_velocity_flu_radps': [0.001, -0.002, 0.25]}
    msgs = [
        ('/clock', m.clock(T0_NS)),
        ('/imu/data_raw', m.imu_from_imu_row(imu_row, T0_NS, 'imu_link', 4e-6, 1e-8)),
        ('/a1/imu/data_raw', m.imu_from_imu_row(imu_row, T0_NS, 'a1/imu_link', 4e-6, 1e-8)),
        ('/oxts/imu', m.ins_imu(ins, T0_NS, 'oxts_link', oxts_axes=True,
                                orientation_var=(1e-6,) * 3, gyro_var=2.5e-7, accel_var=4e-4)),
        ('/oxts/fix', m.ins_fix(ins, T0_NS, 'navsat_link')),
        ('/vehicle/odom', odom),
        ('/sim/ground_truth/odom', odom),
        ('/tf', m.tf_message([m.transform_from_odometry(odom)])),
        ('/a1/vehicle/odom', odom),
        ('/a1/tf', m.tf_message([m.transform_from_odometry(odom)])),
    ]
    return [(topic, msg.__msgtype__, m.TYPESTORE.serialize_cdr(msg, msg.__msgtype__))
            for topic, msg in msgs]


def calibrate_work(target_us):
    """A pure-Python loop length taking about target_us (fixed work, not a
    deadline: time spent writing must not be absorbed by the work)."""
    if target_us <= 0:
        return 0
    n = 10_000
    t = time.perf_counter()
    for _ in range(5):
        work(n)
    per = (time.perf_counter() - t) / (5 * n)
    return max(1, int(target_us * 1e-6 / per))


def work(n):
    x = 0
    for i in range(n):
        x += i
    return x


def run(folder, samples, n, *, background, hold=False, batch_size=BATCH_SIZE, work_n=0):
    """Write n messages; returns (s per message inside the writes, close s, total s)."""
    timer = time.perf_counter_ns
    overhead = min(-timer() + timer() for _ in range(1000))     # one timer pair
    t_open = time.perf_counter()
    bag = BagWriter(folder, hold_interrupts=hold, background=background, batch_size=batch_size)
    for topic, msgtype, _ in samples:
        bag.add_topic(topic, msgtype)
    k_topics = len(samples)
    t_start = time.perf_counter()
    inside = 0
    if work_n:
        for k in range(n):
            topic, _, data = samples[k % k_topics]
            work(work_n)
            t0 = timer()
            bag.write_raw(topic, T0_NS + k * 1000, data)
            inside += timer() - t0 - overhead
        inside *= 1e-9
    else:
        write_raw = bag.write_raw
        for k in range(n):
            topic, _, data = samples[k % k_topics]
            write_raw(topic, T0_NS + k * 1000, data)
        inside = time.perf_counter() - t_start
    t_close = time.perf_counter()
    bag.close()
    t_end = time.perf_counter()
    assert bag.message_count == n
    return inside / n, t_end - t_close, t_end - t_open


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('-n', type=int, default=100_000, help='messages per run')
    ap.add_argument('--work-us', type=float, default=10.0,
                    help='simulated work between messages in the paced runs')
    ap.add_argument('--batch-sizes', default=f'100,{BATCH_SIZE},3000',
                    help='background batch sizes to try (comma separated)')
    ap.add_argument('--repeat', type=int, default=3, help='runs per row')
    args = ap.parse_args()
    samples = sample_messages()
    sizes = [len(d) for _, _, d in samples]
    batch_sizes = [int(b) for b in args.batch_sizes.split(',')]
    work_n = calibrate_work(args.work_us)
    print(f'{args.n} messages, {len(samples)} topics, CDR sizes {min(sizes)}-{max(sizes)} B '
          f'(mean {sum(sizes) / len(sizes):.0f} B), {os.cpu_count()} CPUs; '
          f'paced: ~{args.work_us:g} us of work between messages')
    print(f'{"mode":<24} {"loop":<6} {"parent us/msg (fastest)":>24} {"close ms":>9} '
          f'{"total s":>8}')
    with tempfile.TemporaryDirectory() as tmp:
        configs = [('foreground', False, False, BATCH_SIZE),
                   ('foreground, signal hold', False, True, BATCH_SIZE)] + \
            [(f'background batch={b}', True, False, b) for b in batch_sizes]
        run(Path(tmp) / 'warmup', samples, 2000, background=True)    # imports, page cache
        for i, (label, background, hold, batch) in enumerate(configs):
            for loop, wn in (('tight', 0), ('paced', work_n)):
                runs = sorted(run(Path(tmp) / f'{i}-{loop}-{r}', samples, args.n,
                                  background=background, hold=hold, batch_size=batch,
                                  work_n=wn)
                              for r in range(args.repeat))
                per, close_s, total = runs[len(runs) // 2]
                print(f'{label:<24} {loop:<6} {per * 1e6:15.2f} ({runs[0][0] * 1e6:5.2f}) '
                      f'{close_s * 1e3:11.1f} {total:8.2f}', flush=True)


if __name__ == '__main__':
    main()
