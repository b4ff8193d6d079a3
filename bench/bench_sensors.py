#!/usr/bin/env python3
"""The cost of acres_sim's further sensors per simulated second.

For each sensor sampled from the vehicle's state (barometer, magnetometer,
wheel odometry, radar) on the Maxxum, which carries all four, driving its
route for ``--seconds``:

* kernel: its numba kernel alone over the states of the run, a block of 120
  steps at a time, as the recorder and the sim node call it;
* channel: the kernel plus its rows and encoded messages and the delay line
  (``StepChannel.push_block`` and ``drain``): what the drivers pay;

and the whole recorder (``record``, in process, every file written) with all
of the vehicles' equipment, and with each of the further outputs switched
off in turn (the difference is that output's share; the machine is shared, so
differences below ~5 % are noise).  Medians of ``--repeat`` runs after a warm
one; microseconds of wall time per simulated second.  No assertions.
"""

import argparse
import statistics
import tempfile
import time

import numpy as np

from acres_sim.config import load_config
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline.step_channels import STEP_SENSORS
from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, vehicle_route
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

BLOCK = 120
# what each switch turns off (the GNSS receiver's outputs and the heading, where they exist)
SWITCHES = {'baro': {'baro.enabled': False}, 'mag': {'mag.enabled': False},
            'wheel_odometry': {'wheel_odometry.enabled': False},
            'radar': {'radar.enabled': False}}
OPTIONAL_SWITCHES = {'gnss heading': 'gnss.heading.enabled', 'GST': 'gnss.nmea.gst',
                     'GPSFix': 'gnss.gpsfix'}


def _states(sim):
    """Every step's state of the simulation ``sim``, run to its end."""
    out = []
    while sim.step <= sim.steps:
        out.append(sim.advance(BLOCK)[0].states.copy())
    return np.concatenate(out)


def median_time(run, repeat):
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rig', default='maxxum')
    parser.add_argument('--seconds', type=float, default=600.0)
    parser.add_argument('--repeat', type=int, default=5)
    parser.add_argument('--no-recorder', action='store_true', help='the sensors alone')
    args = parser.parse_args()
    config = load_config(rig=args.rig)
    states = _states(rig_simulation([build_vehicle(config, args.rig,
                                                   route=vehicle_route(args.rig),
                                                   sensors=())],
                                    int(args.seconds * PHYSICS_HZ)))
    print(f'{args.rig}, {args.seconds:g} s ({len(states)} steps), blocks of {BLOCK} steps; '
          f'microseconds per simulated second (median of {args.repeat})')
    for name in STEP_SENSORS:
        if not config[f'{name}.enabled']:
            continue

        def kernel():
            model = build_vehicle(config, args.rig, sensors=(name,)).step_sensors[name]
            for k0 in range(0, len(states), BLOCK):
                model.run_block(k0, states[k0:k0 + BLOCK])

        def channel():
            vehicle = build_vehicle(config, args.rig, sensors=(name,))
            line = vehicle.channels[name]
            for k0 in range(0, len(states), BLOCK):
                line.push_block(k0, states[k0:k0 + BLOCK])
                line.drain(k0 + BLOCK - 1)

        per_s = 1e6 / args.seconds
        print(f'  {name:15s} kernel {median_time(kernel, args.repeat) * per_s:8.1f}   '
              f'channel {median_time(channel, args.repeat) * per_s:8.1f}')
    if args.no_recorder:
        return 0
    switches = dict(SWITCHES)
    switches.update({name: {key: False} for name, key in OPTIONAL_SWITCHES.items()
                     if key in config.values})
    with tempfile.TemporaryDirectory() as tmp:
        def recording(overrides):
            return lambda: record(RecordRequest(args.rig, f'{tmp}/run', RigOptions(
                duration_s=args.seconds, overrides=overrides), progress=False))
        everything = median_time(recording({}), args.repeat)
        print(f'  recorder, with everything: {everything / args.seconds * 1e6:8.1f} '
              f'({args.seconds / everything:.0f}x real time)')
        for name, overrides in switches.items():
            if not config[next(iter(overrides))]:
                continue
            without = median_time(recording(overrides), args.repeat)
            print(f'  recorder without {name:15s} {without / args.seconds * 1e6:8.1f}  '
                  f'-> its share {(everything - without) / args.seconds * 1e6:8.1f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
