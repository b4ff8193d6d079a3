#!/usr/bin/env python3
"""Real-time factor of one Polaris with all three sensors.

* models alone: physics, route follower, IMU (every step), INS (100 Hz) and GNSS
  (10 Hz) for the simulated time, nothing written;
* the whole recorder (`acres-sim record`): rows, rosbag2, report.

Warm-up run first (JIT and cache load excluded); peak RSS printed.  No assertions.
"""

import argparse
from pathlib import Path
import resource
import tempfile
import time

import numpy as np

from acres_sim.config import load_config
from acres_sim.config.scene import default_scene
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.frames import lever_arm_from_chassis, point_at_lever_arm
from acres_sim.core.geo import SiteGeoreference
from acres_sim.core.gnss.receiver import GnssReceiver
from acres_sim.core.imu import ImuModel
from acres_sim.core.ins import InsModel
from acres_sim.core.physics import Fleet
from acres_sim.core.routes import RouteFollower, load_route
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.record.runner import RecordRequest, record


def models_only(seconds):
    config = load_config(rig='polaris')
    vehicle, route = load_vehicle('polaris'), load_route('acre_demo')
    site = SiteGeoreference.from_config(config)

    def arm(key):
        return lever_arm_from_chassis(config[key], config['mount_frame'], vehicle.wheelbase_m,
                                      vehicle.cog_height_m)

    fleet = Fleet([vehicle], [route.start_pose()])
    follower = RouteFollower(route, vehicle)
    imu = ImuModel.from_config(config, arm('imu.position_flu_m'))
    ins = InsModel.from_config(config, arm('ins.position_flu_m'), site=site)
    gnss = GnssReceiver.from_config(config, scene=default_scene(), site=site)
    antenna = arm('gnss.antenna_flu_m')
    dues = {name: Due(config[f'{name}.hz']) for name in ('imu', 'ins', 'gnss')}
    command = np.zeros((1, 2))
    start = time.perf_counter()
    for k in range(int(seconds * PHYSICS_HZ)):
        t = k / PHYSICS_HZ
        truth = fleet.truth(0)
        imu.physics_step(truth)
        if dues['imu'].due(t):
            imu.sample(t)
        if dues['ins'].due(t):
            ins.epoch(t, truth)
        if dues['gnss'].due(t):
            gnss.epoch(t, point_at_lever_arm(truth.p, truth.R, antenna))
        command[0] = follower.command(truth)
        fleet.step(command)
    return seconds / (time.perf_counter() - start)


def whole_recorder(seconds):
    with tempfile.TemporaryDirectory() as folder:
        episode = record(RecordRequest(load_config(rig='polaris'), 'polaris', seconds,
                                       Path(folder), progress=False))[0]
    return episode['real_time_factor']


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=120.0, help='simulated seconds')
    args = parser.parse_args(argv)
    models_only(2.0)
    whole_recorder(2.0)
    results = {'models_only_x': models_only(args.seconds),
               'recorder_x': whole_recorder(args.seconds),
               'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    print(f'one Polaris, {args.seconds:g} s simulated')
    print(f'  models alone          {results["models_only_x"]:8.1f}x real time')
    print(f'  recorder, all files   {results["recorder_x"]:8.1f}x real time')
    print(f'  peak RSS              {results["peak_rss_mb"]:8.0f} MB')
    return results


if __name__ == '__main__':
    main()
