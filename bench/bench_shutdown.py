#!/usr/bin/env python3
"""How long ``acres-sim up`` takes to end after Ctrl-C, on a loaded machine.

Each run starts ``acres-sim up --rig RIG`` (default mixed: 7 nodes, the six
sensor nodes in one process), waits until the sim's loop runs and a few
seconds more, sends SIGINT to it (as Ctrl-C does) and times until it has
exited -- which is when its last node has.  ``--hogs N`` busy Python
processes run beside it the whole time (the default 2: one per core of a
small machine).  Prints each run, then the median and the worst.  Compare
with launch's 5 s before it escalates to SIGTERM (``sigterm_timeout``).

DDS stays on loopback; the ROS domain id is one no test holds (the tests'
lock files in the temporary folder).
"""

import argparse
import fcntl
import os
from pathlib import Path
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

LOCKS = Path(tempfile.gettempdir()) / 'acres_sim_ros_domain_ids'


def free_domain_id():
    """(id, lock file) of a ROS domain id in 1..101 no test or bench holds."""
    LOCKS.mkdir(exist_ok=True)
    for domain_id in range(101, 0, -1):
        lock = open(LOCKS / f'{domain_id}.lock', 'w')
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return domain_id, lock
        except BlockingIOError:
            lock.close()
    raise SystemExit('no free ROS domain id')


def one_run(rig, settle_s, timeout_s):
    """Seconds from SIGINT to the exit of ``acres-sim up``, and its exit status."""
    up = subprocess.Popen([sys.executable, '-m', 'acres_sim.cli', 'up', '--rig', rig],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    lines = []
    running = threading.Event()

    def read():
        for line in up.stdout:
            lines.append(line)
            if '[sim_node]' in line and 'running ' in line:
                running.set()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not running.wait(timeout_s):
        up.send_signal(signal.SIGINT)
        up.wait(timeout_s)
        raise SystemExit('the sim never ran:\n' + ''.join(lines[-20:]))
    time.sleep(settle_s)
    start = time.monotonic()
    up.send_signal(signal.SIGINT)
    code = up.wait(timeout_s)
    took = time.monotonic() - start
    reader.join(5.0)
    escalated = [line for line in lines if 'exited with status' in line]
    return took, code, escalated


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--rig', default='mixed')
    parser.add_argument('--runs', type=int, default=10)
    parser.add_argument('--hogs', type=int, default=2)
    parser.add_argument('--settle', type=float, default=3.0,
                        help='seconds of running before the SIGINT')
    args = parser.parse_args()
    domain_id, _lock = free_domain_id()
    os.environ.update(ROS_DOMAIN_ID=str(domain_id), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    os.environ.pop('ROS_STATIC_PEERS', None)
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
            for _ in range(args.hogs)]
    times = []
    try:
        for i in range(args.runs):
            took, code, notes = one_run(args.rig, args.settle, 120.0)
            times.append(took)
            print(f'run {i + 1}: {took:.2f} s, exit status {code}'
                  + ''.join(f'\n    {n.strip()}' for n in notes), flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f'acres-sim up --rig {args.rig}, {args.hogs} CPU hogs, {len(times)} runs: '
          f'SIGINT to exit median {statistics.median(times):.2f} s, worst {max(times):.2f} s')


if __name__ == '__main__':
    main()
