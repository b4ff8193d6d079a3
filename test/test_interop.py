"""Jazzy and Kilted nodes on one domain, both ways: a rig of one distro, and
a probe of the other (test/interop_probe.py, run by its Python) that takes
every kind of topic the rig publishes -- the sim node's clock, INS and
odometry, the sensor process's IMU and GNSS -- and drives the parked vehicle
with cmd_vel.  Fast DDS 2 and 3 speak the same RTPS; this checks that the
messages and their types match too.

The other distro's Python comes from ``ACRES_SIM_OTHER_PYTHON``, which
``make test-ros`` sets when that distro's venv exists (CI: the Kilted run,
after the Jazzy one built .venv).  Without it the test is skipped, saying so.
"""

import json
import os
from pathlib import Path
import signal
import subprocess
import sys

import pytest

from conftest import child_environment
from live_helpers import DISCOVERY_TIMEOUT, up_args

pytestmark = pytest.mark.requires_rclpy

PROBE = Path(__file__).with_name('interop_probe.py')
OTHER = os.environ.get('ACRES_SIM_OTHER_PYTHON', '')
SPEED = 2.0                         # m/s commanded by the probe


def environment(python):
    """The environment of a child of ``python``: for the other distro's, without
    the library path that this one's ROS wheels set up (and their mark that it
    is set), so that its own wheels set up theirs."""
    env = child_environment()
    if python != sys.executable:
        env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
        mine = [p for p in env.pop('LD_LIBRARY_PATH', '').split(':')
                if p and not p.startswith(sys.prefix)]
        if mine:
            env['LD_LIBRARY_PATH'] = ':'.join(mine)
    return env


def rclpy_version(python):
    return subprocess.run([python, '-c', 'from importlib.metadata import version; '
                           'print(version("rclpy"))'], capture_output=True, text=True,
                          env=environment(python), timeout=120, check=True).stdout.strip()


@pytest.mark.skipif(not OTHER, reason='ACRES_SIM_OTHER_PYTHON is not set: `make test-ros '
                                      'DISTRO=kilted` sets it once both venvs exist')
@pytest.mark.parametrize('rig_side', ['this', 'other'])
def test_a_rig_of_one_distro_serves_a_probe_of_the_other(ros_domain_id, rig_side):
    pythons = {'this': sys.executable, 'other': OTHER}
    rig_python = pythons[rig_side]
    probe_python = pythons['other' if rig_side == 'this' else 'this']
    versions = {rclpy_version(rig_python), rclpy_version(probe_python)}
    assert len(versions) == 2, f'both Pythons have rclpy {versions}: not two distros'
    rig = subprocess.Popen([rig_python, *up_args('--rig', 'polaris', '--parked', '--duration',
                                                 '120', '--start-timeout', '60')],
                           env=environment(rig_python), stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        probe = subprocess.run([probe_python, str(PROBE), str(DISCOVERY_TIMEOUT), str(SPEED)],
                               env=environment(probe_python), capture_output=True, text=True,
                               timeout=DISCOVERY_TIMEOUT + 60)
    finally:
        rig.send_signal(signal.SIGINT)
        try:
            _out, rig_log = rig.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            rig.kill()
            _out, rig_log = rig.communicate()
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    assert seen['rclpy'] == rclpy_version(probe_python)
    short = {topic: n for topic, n in seen['counts'].items() if n < 20}
    assert not short, f'rclpy {seen["rclpy"]} probe got too few of {short}:\n{rig_log[-3000:]}'
    assert seen['speed'] > 0.5 * SPEED, f'the vehicle did not follow cmd_vel:\n{rig_log[-3000:]}'
    assert seen['latitudes']['/oxts/fix'] == [40.47], seen           # the ACRE farm
    assert set(seen['latitudes']['/gnss_receiver/fix']) <= {40.47}, seen
    assert 'Traceback' not in rig_log
