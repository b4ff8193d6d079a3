#!/usr/bin/env python3
"""The cost of acres_sim's further sensors per simulated second.

For each sensor sampled from the vehicle's state (barometer, magnetometer,
wheel odometry, radar) on the Maxxum, which carries all four, driving its
route for ``--seconds``:

* kernel: its numba kernel alone over the states of the run, a block of 120
  steps at a time, as the recorder and the sim node call it;
* channel: the kernel plus its rows and encoded messages and the delay line
  (``StepChannel.push_block`` and ``drain``): what the drivers pay;

the GNSS receiver's further outputs on the Polaris: its channel with GST and
GPSFix against without them, and the heading's channel (model, rows,
messages); and the whole recorder (``record``, in process, every file
written) with the vehicle's equipment and with the spec's sensors only.
Medians of ``--repeat`` runs after a warm one; microseconds of wall time per
simulated second.  No assertions.
"""

import argparse
import statistics
import tempfile
import time

import numpy as np

from acres_sim.config import load_config
from acres_sim.core.gnss.receiver import REC_FIX
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline.step_channels import STEP_SENSORS
from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, vehicle_route
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

BLOCK = 120
SPEC_ONLY = {'baro.enabled': False, 'mag.enabled': False, 'wheel_odometry.enabled': False,
             'radar.enabled': False, 'gnss.nmea.gst': False, 'gnss.gpsfix': False,
             'gnss.heading.enabled': False}


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
    gnss_outputs(args, states)
    if args.no_recorder:
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        def recording(overrides):
            return lambda: record(RecordRequest(args.rig, f'{tmp}/run', RigOptions(
                duration_s=args.seconds, overrides=overrides), progress=False))
        for what, overrides in (('with its equipment', {}), ("the spec's sensors only", SPEC_ONLY)):
            wall = median_time(recording(overrides), args.repeat)
            print(f'  recorder, {what:24s} {wall / args.seconds * 1e6:8.1f} '
                  f'({args.seconds / wall:.0f}x real time)')
    return 0


def gnss_outputs(args, states):
    """The GNSS receiver's further outputs on the Polaris (which has them all): GST and
    GPSFix (the receiver's channel with them against without), and the heading's channel."""
    from acres_sim.core.truth import T_Q


    rig = 'polaris'
    runs = {'with': load_config(rig=rig),
            'without': load_config(rig=rig, overrides={'gnss.nmea.gst': False,
                                                       'gnss.gpsfix': False})}
    vehicle = build_vehicle(runs['with'], rig, route=vehicle_route(rig), sensors=('gnss',))
    sim = rig_simulation([vehicle], int(args.seconds * PHYSICS_HZ))
    blocks = []
    while sim.step <= sim.steps:
        k0 = sim.step
        b = sim.advance(BLOCK)[0]
        blocks.append((b.gnss_k.copy(), b.gnss_antenna.copy(), b.gnss.copy(),
                       b.states[b.gnss_k - k0, T_Q:T_Q + 4].copy()))
    print(f'  GNSS outputs ({rig}, {sum(len(k) for k, *_ in blocks)} epochs):')

    def receiver_channel(config):
        def run():
            channel = build_vehicle(config, rig, sensors=('gnss',)).channels['gnss']
            for k, antenna, records, _q in blocks:
                channel.push_epochs(k, antenna, records)
                channel.drain(int(k[-1]) if len(k) else 0)
        return run
    per_s = 1e6 / args.seconds
    times = {name: median_time(receiver_channel(config), args.repeat)
             for name, config in runs.items()}
    theirs = (times['with'] - times['without']) * per_s
    print(f"    receiver channel with GST and GPSFix {times['with'] * per_s:8.1f}, without "
          f"{times['without'] * per_s:8.1f} -> theirs {theirs:8.1f}")
    if 'gnss_heading' not in build_vehicle(runs['with'], rig, sensors=('gnss',)).channels:
        return

    def heading_channel():
        channel = build_vehicle(runs['with'], rig, sensors=('gnss',)).channels['gnss_heading']
        for k, _a, records, quats in blocks:
            channel.push_epochs(k, quats, records[:, REC_FIX])
            channel.drain(int(k[-1]) if len(k) else 0)
    print(f'    heading channel {median_time(heading_channel, args.repeat) * per_s:8.1f}')


if __name__ == '__main__':
    raise SystemExit(main())
