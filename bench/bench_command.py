#!/usr/bin/env python3
"""The whole ``acres-sim record`` command, timed from outside as a user times
it (start-up, set-up, writer processes, report and exit included), each run a
fresh process:

* **every file**: ``acres-sim record --rig polaris --duration 600``, the rows,
  the bag and the report;
* **same work as gnss-ins-sim**: IMU, GNSS and truth rows only (``--no-bag
  --no-report --no-ins`` and the further sensors off), what gnss-ins-sim (the
  Python IMU/GNSS data generator) writes for a run: IMU and GPS samples to files;
* **1 s**: the fixed cost, ``--duration 1`` with every file.

``--gnss-ins-sim PATH`` (a checkout of https://github.com/Aceinna/gnss-ins-sim;
it is not on the package index) also times its own run of the same length,
100 Hz IMU and 10 Hz GPS written to CSV files, no plot, alternating with the
same-work runs, and prints the ratio of the medians.  Medians and ranges of
``--repeat`` runs after one warm-up run of each (the machine is shared: runs
differ by a third).  No assertions.
"""

import argparse
import os
from pathlib import Path
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SAME_WORK = ('--no-bag', '--no-report', '--no-ins', '--set', 'baro.enabled=false',
             '--set', 'mag.enabled=false', '--set', 'wheel_odometry.enabled=false',
             '--set', 'gnss.heading.enabled=false')

# gnss-ins-sim's run of ``seconds``: a start at the farm, then driving in turns,
# 100 Hz IMU (its mid-accuracy model) and 10 Hz GPS, the results to CSV.
GNSS_INS_SIM = '''
import os, sys
sys.path.insert(0, {path!r})
from gnss_ins_sim.sim import imu_model, ins_sim
out, seconds = {out!r}, {seconds!r}
motion = os.path.join(out, 'motion.csv')
with open(motion, 'w') as f:
    f.write('ini lat (deg),ini lon (deg),ini alt (m),ini vx_body (m/s),ini vy_body (m/s),'
            'ini vz_body (m/s),ini yaw (deg),ini pitch (deg),ini roll (deg)\\n'
            '40.4716,-86.9944,182,0,0,0,0,0,0\\n'
            'command type,yaw (deg),pitch (deg),roll (deg),vx_body (m/s),vy_body (m/s),'
            'vz_body (m/s),command duration (s),GPS visibility\\n'
            '1,0,0,0,0.5,0,0,10,1\\n')
    for _ in range(int((seconds - 10) // 10)):
        f.write('1,3,0,0,0,0,0,5,1\\n1,0,0,0,0,0,0,5,1\\n')
imu = imu_model.IMU(accuracy='mid-accuracy', axis=6, gps=True)
sim = ins_sim.Sim([100.0, 10.0, 0.0], motion, ref_frame=0, imu=imu, mode=None, env=None,
                  algorithm=None)
sim.run(1)
sim.results(os.path.join(out, 'results'))
'''


def _env():
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    return env


def timed(argv, folder):
    """Wall seconds of one run of ``argv`` (its output thrown away), in a new ``folder``."""
    shutil.rmtree(folder, ignore_errors=True)
    Path(folder).mkdir(parents=True)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f'{" ".join(map(str, argv))} failed:\n{done.stderr.decode()[-2000:]}')
    return wall


def record_argv(folder, seconds, *extra):
    return [sys.executable, '-m', 'acres_sim.cli', 'record', '--rig', 'polaris',
            '--duration', str(seconds), '--out', str(Path(folder) / 'run'), '--no-progress',
            *extra]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=600.0, help='simulated seconds')
    parser.add_argument('--repeat', type=int, default=3, help='runs of each (default 3)')
    parser.add_argument('--gnss-ins-sim', metavar='PATH', type=Path,
                        help='a gnss-ins-sim checkout: time its run of the same length too')
    args = parser.parse_args(argv)
    if args.gnss_ins_sim is not None and not (args.gnss_ins_sim / 'gnss_ins_sim').is_dir():
        parser.error(f'--gnss-ins-sim: {args.gnss_ins_sim} is not a gnss-ins-sim checkout')
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / 'out'
        cases = {'every file': record_argv(folder, args.seconds),
                 'same work as gnss-ins-sim': record_argv(folder, args.seconds, *SAME_WORK),
                 '1 s, every file': record_argv(folder, 1.0)}
        if args.gnss_ins_sim is not None:
            script = GNSS_INS_SIM.format(path=str(args.gnss_ins_sim.resolve()), out=str(folder),
                                         seconds=args.seconds)
            cases['gnss-ins-sim'] = [sys.executable, '-c', script]
        walls = {name: [] for name in cases}
        for run in range(args.repeat + 1):          # the first round warms up
            for name, command in cases.items():
                wall = timed(command, folder)
                if run:
                    walls[name].append(wall)
    print(f'the whole command, {args.seconds:g} s simulated (1 s for the last acres-sim row), '
          f'median of {args.repeat} (range)')
    for name, values in walls.items():
        print(f'  {name:27s} {statistics.median(values):6.2f} s '
              f'({min(values):.2f}-{max(values):.2f})')
    if 'gnss-ins-sim' in walls:
        ratio = (statistics.median(walls['same work as gnss-ins-sim'])
                 / statistics.median(walls['gnss-ins-sim']))
        print(f'  acres-sim / gnss-ins-sim on the same work: {ratio:.2f}')
    return walls


if __name__ == '__main__':
    main()
