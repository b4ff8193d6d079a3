#!/usr/bin/env python3
"""Real-time factor of one Polaris with all three sensors.

* models alone: physics, route follower, IMU (every step), INS (100 Hz) and GNSS
  receiver (10 Hz) as numbers -- the block kernel and the receiver's epoch
  records (``RigSimulation.advance``), nothing formatted or written;
* the whole recorder (``acres-sim record``): rows, rosbag2, report.

The default route (acre_demo) ends after about two minutes and the vehicle
then stays parked; ``--route bench/routes/loop_laps.yaml`` keeps it driving
(100 laps of the field loop, about 75 minutes).  ``--terrain acre
--vibration`` runs it on the packaged terrain with every vibration on (the
cost of the ride's degrees of freedom).  ``--event YAML`` (repeatable) adds
fault events, as ``acres-sim record --event`` does (``--event-set`` adds a
set of seven that act over the whole run: the cost of the fault models).
Warm-up run first (JIT and cache load excluded); ``--repeat`` runs of each,
median and range (the machine is shared: runs differ by a third); the real-time
factor is the recorder's loop (episode.json's ``real_time_factor``), the wall
time of the whole command (set-up, report) is printed beside it.  Peak RSS of
this process, and of the largest writer process (bag, rows; sampled from /proc
while they run: ``ru_maxrss`` of a child counts the parent's pages it shares
between the fork and the exec that start it).  No assertions.
"""

import argparse
import os
from pathlib import Path
import resource
import statistics
import tempfile
import threading
import time


from acres_sim.config import load_config
from acres_sim.config.terrain import load_terrain
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, vehicle_route
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions


# Seven events active from start to end: the receiver, the IMU and the output faults work
# at every sample (fix cap, multipath and glitch on the GNSS, a wall of the sky, jamming, IMU
# bias and scale).
EVENT_SET = ("{type: gnss_denial, azimuth_deg: [200, 260], below_elevation_deg: 20}",
             "{type: jamming, j_over_s_db: 15}", "{type: multipath, reflector_index: 0.1}",
             "{type: glitch, drift_enu_mps: [0.001, 0, 0]}", "{type: fix_cap, state: rtk_fixed}",
             "{type: imu_bias, accel_mps2: [0.01, 0, 0]}", "{type: imu_scale, accel: [1.01, 1, 1]}")


def _events(texts):
    from acres_sim.config.events import parse_event, read_events

    entries = [entry for text in texts for entry in parse_event(text)]
    return read_events(entries, None, 'bench').for_vehicle(None) if entries else None


def models_only(seconds, route_name, terrain='flat', vibration=False, events=()):
    overrides = {'vibration.engine': True, 'vibration.parked_jitter': True} if vibration else {}
    config = load_config(rig='polaris', overrides=overrides)
    vehicle = build_vehicle(config, 'polaris', route=vehicle_route('polaris', route_name),
                            events=_events(events))
    ground = load_terrain(terrain, config['seed'])
    steps = int(round(seconds * PHYSICS_HZ))
    sim = rig_simulation([vehicle], steps, ground=None if ground is None else ground.field)
    start = time.perf_counter()
    while sim.step <= steps:
        sim.advance(PHYSICS_HZ)
    return seconds / (time.perf_counter() - start)


def _children_rss_mb():
    """RSS of the largest of this process's children [MB] (the writer processes), from /proc."""
    pid = os.getpid()
    try:
        children = Path(f'/proc/{pid}/task/{pid}/children').read_text().split()
    except OSError:
        return 0.0
    total = 0.0
    for child in children:
        try:
            for line in Path(f'/proc/{child}/status').read_text().splitlines():
                if line.startswith('VmRSS:'):
                    total = max(total, int(line.split()[1]) / 1024)
        except OSError:
            pass
    return total


def whole_recorder(seconds, route_name, terrain='flat', vibration=False, events=()):
    """(loop real-time factor, wall time of the whole record() [s], child peak RSS [MB])."""
    peak = [0.0]
    done = threading.Event()

    def watch():
        while not done.wait(0.25):
            peak[0] = max(peak[0], _children_rss_mb())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        overrides = ({'vibration.engine': True, 'vibration.parked_jitter': True}
                     if vibration else {})
        episode = record(RecordRequest('polaris', Path(folder), RigOptions(
            duration_s=seconds, route=route_name, terrain=terrain, overrides=overrides,
            events=tuple(events)), progress=False))[0]
        wall = time.perf_counter() - start
    done.set()
    watcher.join()
    return episode['real_time_factor'], wall, peak[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=120.0, help='simulated seconds')
    parser.add_argument('--route', default='acre_demo',
                        help='route name or file (default acre_demo)')
    parser.add_argument('--repeat', type=int, default=1, help='runs of each (default 1)')
    parser.add_argument('--terrain', default='flat',
                        help='flat (default), a packaged terrain (acre) or a terrain file')
    parser.add_argument('--vibration', action='store_true',
                        help='engine vibration and the parked jitter on')
    parser.add_argument('--event', action='append', default=[], metavar='YAML',
                        help='a fault event, as acres-sim record --event takes it (repeatable)')
    parser.add_argument('--event-set', action='store_true',
                        help='seven fault events active from start to end (EVENT_SET)')
    args = parser.parse_args(argv)
    events = [*args.event, *(EVENT_SET if args.event_set else ())]
    ground = dict(terrain=args.terrain, vibration=args.vibration, events=events)
    models_only(2.0, args.route, **ground)
    whole_recorder(2.0, args.route, **ground)
    models = [models_only(args.seconds, args.route, **ground) for _ in range(args.repeat)]
    recorder = [whole_recorder(args.seconds, args.route, **ground) for _ in range(args.repeat)]
    results = {'models_only_x': statistics.median(models),
               'recorder_x': statistics.median(r[0] for r in recorder),
               'recorder_wall_s': statistics.median(r[1] for r in recorder),
               'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               'writer_rss_mb': max(r[2] for r in recorder)}

    def spread(values):
        return f'(range {min(values):.0f}-{max(values):.0f})' if len(values) > 1 else ''

    print(f'one Polaris, {args.seconds:g} s simulated, route {args.route}, terrain '
          f'{args.terrain}{", vibration" if args.vibration else ""}'
          f'{f", {len(events)} events" if events else ""}, {args.repeat} run(s) each')
    print(f'  models alone          {results["models_only_x"]:8.1f}x real time {spread(models)}')
    print(f'  recorder, all files   {results["recorder_x"]:8.1f}x real time '
          f'{spread([r[0] for r in recorder])}; whole command {results["recorder_wall_s"]:.1f} s')
    print(f'  peak RSS              {results["peak_rss_mb"]:8.0f} MB '
          f'(writer processes at most {results["writer_rss_mb"]:.0f} MB each)')
    return results


if __name__ == '__main__':
    main()
