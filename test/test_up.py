"""``acres-sim up`` against real faults: where its DDS traffic goes, the
parameter files it leaves (or keeps for the user), a node whose parent dies.

The network test runs ``up`` inside a network namespace of its own (loopback
and a veth pair whose both ends stay in the namespace, so no packet can leave
it) and captures every packet on the veth with a raw socket.
"""

import json
import os
from pathlib import Path
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

from acres_sim.cli import main
from acres_sim.up import FOLDER_PREFIX, PARAMS_MARK
from conftest import alive, wait_for

ROOT = Path(__file__).resolve().parents[1]
DISCOVERY = ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_STATIC_PEERS',
             'ROS_DISTRO')
RUN_TIMEOUT = 180.0

# Inside the namespace: capture on IFACE while COMMAND runs (at most TIMEOUT s);
# prints {"rtps": packets carrying RTPS, "to": their destinations, "code", "out"}.
CAPTURE = r'''
import json, socket, subprocess, sys, time
iface, timeout, command = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL
raw.bind((iface, 0))
raw.settimeout(0.2)
child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
seen = []
deadline = time.monotonic() + timeout
while child.poll() is None and time.monotonic() < deadline:
    try:
        frame = raw.recv(65535)
    except socket.timeout:
        continue
    kind = frame[12:14]
    if kind == b'\x08\x00' and frame[23] == 17:            # IPv4, UDP
        at, dst = 14 + 4 * (frame[14] & 0x0F) + 8, socket.inet_ntoa(frame[30:34])
    elif kind == b'\x86\xdd' and frame[20] == 17:          # IPv6, UDP
        at, dst = 14 + 40 + 8, socket.inet_ntop(socket.AF_INET6, frame[38:54])
    else:
        continue
    if frame[at:at + 4] == b'RTPS':
        seen.append(dst)
if child.poll() is None:
    child.kill()
out = child.communicate()[0]
print(json.dumps({'rtps': len(seen), 'to': sorted(set(seen)), 'code': child.returncode,
                  'out': out}))
'''


def run(*command, check=True):
    return subprocess.run(command, check=check, capture_output=True, text=True, timeout=30)


@pytest.fixture
def netns():
    """A network namespace with lo and a veth pair (192.0.2.1/24 on veth0, both
    ends inside), multicast routed to veth0; deleted at the end."""
    if os.geteuid() != 0:
        pytest.skip('needs root to make a network namespace')
    if shutil.which('ip') is None:
        pytest.skip('needs the ip command (iproute2) to make a network namespace')
    name = f'acres-sim-test-{uuid.uuid4().hex[:8]}'
    made = run('ip', 'netns', 'add', name, check=False)
    if made.returncode != 0:
        pytest.skip(f'cannot make a network namespace: {made.stderr.strip()}')
    try:
        for command in (('link', 'set', 'lo', 'up'),
                        ('link', 'add', 'veth0', 'type', 'veth', 'peer', 'name', 'veth1'),
                        ('addr', 'add', '192.0.2.1/24', 'dev', 'veth0'),
                        ('link', 'set', 'veth0', 'up'), ('link', 'set', 'veth1', 'up'),
                        ('route', 'add', '224.0.0.0/4', 'dev', 'veth0')):
            run('ip', '-n', name, *command)
        yield name
    finally:
        run('ip', 'netns', 'delete', name, check=False)


def environment_without_discovery_settings(ros_domain_id):
    env = {k: v for k, v in os.environ.items() if k not in DISCOVERY}
    if 'LD_LIBRARY_PATH' not in env:   # the ROS wheels' bootstrap mark never travels alone
        env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    env['ROS_DOMAIN_ID'] = str(ros_domain_id)
    return env


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('network, user, leaves', [('loopback', {}, False), ('lan', {}, True),
                                                   ('loopback', {'ROS_LOCALHOST_ONLY': '1'},
                                                    False)])
def test_up_started_without_discovery_settings_stays_on_loopback(netns, ros_domain_id,
                                                                 network, user, leaves):
    """``acres-sim up`` run directly (no make, none of the discovery variables):
    by default no RTPS packet leaves through a non-loopback interface;
    ``--network lan`` (the control, so the capture is known to see them) sends
    discovery out of it.  A user's ``ROS_LOCALHOST_ONLY=1`` keeps it on loopback
    too (Kilted ignores that variable) without a node warning of it (Jazzy)."""
    command = [sys.executable, '-m', 'acres_sim.cli', 'up', '--rig', 'polaris',
               '--duration', '1', '--rtf', '0']
    if network == 'lan':
        command += ['--network', 'lan']
    result = subprocess.run(
        ['ip', 'netns', 'exec', netns, sys.executable, '-c', CAPTURE, 'veth0',
         str(RUN_TIMEOUT), *command],
        env={**environment_without_discovery_settings(ros_domain_id), **user},
        capture_output=True, text=True, timeout=RUN_TIMEOUT + 30, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen['code'] == 0 and 'simulated 1.00 s' in seen['out'], seen['out']
    if leaves:
        assert seen['rtps'] > 0 and 'on the local network' in seen['out']
    else:
        assert seen['rtps'] == 0, f'RTPS to {seen["to"]} off loopback:\n{seen["out"]}'
        lines = [line for line in seen['out'].splitlines() if 'DDS stays on this machine' in line]
        assert len(lines) == 1, seen['out']
        assert 'ROS_LOCALHOST_ONLY is deprecated' not in seen['out']


# --- parameter files ----------------------------------------------------------

@pytest.mark.parametrize('layout, processes', [('one', 2), ('vehicle', 3), ('node', 5)])
def test_print_nodes_dir_writes_the_files_the_printed_commands_use(tmp_path, capsys, layout,
                                                                   processes):
    """A command per process; every node's parameter file, each named once by a
    command: after --params-file for a node alone, after --node KIND NAME for one
    that shares the sensor process."""
    folder = tmp_path / 'params'
    assert main(['up', '--rig', 'polaris', '--agents', '2', '--sensor-processes', layout,
                 '--print-nodes', str(folder)]) == 0
    out = capsys.readouterr().out
    commands = [shlex.split(line) for line in out.splitlines() if not line.startswith('#')]
    assert len(commands) == processes
    named = []
    for words in commands:
        if 'acres_sim.ros.sensor_nodes' in words:
            assert '--params-file' not in words
            named += [(words[i + 1], words[i + 2], words[i + 3])
                      for i, word in enumerate(words) if word == '--node']
        else:
            path = words[words.index('--params-file') + 1]
            named.append((words[words.index('-m') + 1].rsplit('.', 1)[1],
                          words[words.index('-m') + 1], path))
    for _kind, _name, path in named:
        assert Path(path).parent == folder and Path(path).read_text().startswith(PARAMS_MARK)
    assert sorted(Path(path).name for *_, path in named) == sorted(
        p.name for p in folder.iterdir()) == [
        'agent1.gnss_node.yaml', 'agent1.imu_node.yaml', 'gnss_node.yaml', 'imu_node.yaml',
        'sim_node.yaml']
    if layout == 'one':
        assert [(kind, name) for kind, name, _ in named[1:]] == [
            ('gnss_node', 'gnss_node'), ('imu_node', 'imu_node'),
            ('gnss_node', 'agent1/gnss_node'), ('imu_node', 'agent1/imu_node')]
    assert main(['up', '--rig', 'polaris', '--print-nodes', str(folder)]) == 0   # its own: again


def test_print_nodes_dir_never_replaces_a_file_it_did_not_write(tmp_path, capsys):
    folder = tmp_path / 'mine'
    folder.mkdir()
    (folder / 'imu_node.yaml').write_text('my notes\n')
    assert main(['up', '--rig', 'polaris', '--print-nodes', str(folder)]) == 2
    captured = capsys.readouterr()
    assert 'imu_node.yaml exists and is not a parameter file of acres-sim up' in captured.err
    assert captured.err.count('\n') == 1 and captured.out == ''
    assert [p.name for p in folder.iterdir()] == ['imu_node.yaml']      # nothing half-written
    assert (folder / 'imu_node.yaml').read_text() == 'my notes\n'


@pytest.mark.requires_rclpy
def test_a_printed_command_starts_its_node_after_up_is_gone(tmp_path, capsys, ros_domain_id):
    """The sim node's printed command line, run later by hand, finds its parameters."""
    folder = tmp_path / 'params'
    assert main(['up', '--rig', 'polaris', '--duration', '0.5', '--rtf', '0',
                 '--start-timeout', '0.1', '--set', 'gnss.enabled=false',
                 '--set', 'imu.enabled=false', '--print-nodes', str(folder)]) == 0
    line, = [line for line in capsys.readouterr().out.splitlines()
             if 'acres_sim.ros.sim_node' in line and not line.startswith('#')]
    result = subprocess.run(['bash', '-c', line], capture_output=True, text=True,
                            timeout=RUN_TIMEOUT, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'simulated 0.50 s' in result.stderr


def dead_pid():
    process = subprocess.Popen(['true'])
    process.wait()
    return process.pid


def test_only_the_files_of_dead_ups_are_removed(tmp_path):
    from acres_sim.up import remove_dead_folders

    def folder(pid, *files):
        path = tmp_path / f'{FOLDER_PREFIX}{pid}-abc'
        path.mkdir()
        for name, text in files:
            (path / name).write_text(text)
        return path
    own = (('sim_node.yaml', PARAMS_MARK + '/sim_node\n/**: {}\n'),)
    dead = folder(dead_pid(), *own)
    alive = folder(os.getpid(), *own)
    mixed = folder(dead_pid(), *own, ('notes.yaml', 'mine\n'))
    other = tmp_path / 'acres-sim-up-keep'
    other.mkdir()
    remove_dead_folders(tmp_path)
    assert not dead.exists() and (alive / 'sim_node.yaml').exists() and other.exists()
    assert [p.name for p in mixed.iterdir()] == ['notes.yaml']


def up_folders(tmp, pid):
    return list(Path(tmp).glob(f'{FOLDER_PREFIX}{pid}-*'))


def children(pid):
    out = []
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            if int(stat.read_text().rsplit(')', 1)[1].split()[1]) == pid:
                out.append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out




@pytest.mark.requires_rclpy
def test_the_folder_of_a_killed_up_is_removed_by_the_next_up(tmp_path, ros_domain_id):
    """SIGKILL to up: its nodes end with it, its parameter folder stays behind;
    the next up removes it (its pid is gone) and leaves no folder of its own."""
    env = {**os.environ, 'TMPDIR': str(tmp_path)}
    if 'LD_LIBRARY_PATH' not in env:   # the ROS wheels' bootstrap mark never travels alone
        env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    up = subprocess.Popen([sys.executable, '-m', 'acres_sim.cli', 'up', '--rig', 'polaris'],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nodes = []
    try:
        # the sim node, and the sensor nodes in one process; a parameter file per node
        wait_for(lambda: len(children(up.pid)) == 2, 60, 'the two processes of up')
        nodes = children(up.pid)
        left = up_folders(tmp_path, up.pid)
        assert len(left) == 1 and len(list(left[0].iterdir())) == 3
        up.kill()
        up.wait(timeout=30)
        wait_for(lambda: not any(alive(pid) for pid in nodes), 60, 'end of the nodes')
        assert left[0].exists()
        again = subprocess.run(
            [sys.executable, '-m', 'acres_sim.cli', 'up', '--rig', 'polaris', '--duration', '0.5',
             '--rtf', '0', '--start-timeout', '0.1', '--set', 'gnss.enabled=false',
             '--set', 'imu.enabled=false'], env=env, capture_output=True, text=True,
            timeout=RUN_TIMEOUT)
        assert again.returncode == 0, again.stderr
        assert not left[0].exists()
        assert not list(tmp_path.glob(f'{FOLDER_PREFIX}*'))
    finally:
        for pid in [up.pid, *nodes]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        up.wait(timeout=30)


# Forks a child that sleeps 30 s: between the fork and its exec the child waits
# argv[1] s, then asks to end with this process (up's preexec_fn).
STARTER = r'''
import os, subprocess, sys, time
from acres_sim.parent import end_with_parent
me = os.getpid()
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'],
                 preexec_fn=lambda: (time.sleep(float(sys.argv[1])), end_with_parent(me)))
time.sleep(30)
'''


@pytest.mark.parametrize('killed_before_the_request', [True, False])
def test_a_child_of_a_starter_that_died_between_fork_and_request_ends(killed_before_the_request):
    """up starts a node with end_with_parent(up's pid) between fork and exec; if
    up dies before that request takes effect the kernel sends nothing, so the
    child must notice its new parent itself and end (else it ran on for good:
    a node of a killed up outlived it).  Killed after the request: the
    kernel's SIGTERM ends the child."""
    starter = subprocess.Popen([sys.executable, '-c', STARTER,
                                '2.0' if killed_before_the_request else '0'])
    child = None
    try:
        wait_for(lambda: children(starter.pid), 30, 'the fork')
        child = children(starter.pid)[0]
        if not killed_before_the_request:
            wait_for(lambda: b'sleep(30)' in Path(f'/proc/{child}/cmdline').read_bytes(), 30,
                     'the exec')
        starter.kill()
        starter.wait(timeout=30)
        wait_for(lambda: not alive(child), 20, 'end of the child')
    finally:
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)
        if starter.poll() is None:
            starter.kill()
        starter.wait(timeout=30)


# --- a node whose parent dies ---------------------------------------------------

# Starts the node of argv[1] and prints its pid; with argv[2] > 0 it kills
# itself that many seconds later (SIGKILL: nothing of it runs after).
PARENT = r'''
import os, signal, subprocess, sys, time
child = subprocess.Popen([sys.executable, '-m', sys.argv[1]], stdout=subprocess.DEVNULL,
                         stderr=open(sys.argv[3], 'w'))
print(child.pid, flush=True)
if float(sys.argv[2]) > 0:
    time.sleep(float(sys.argv[2]))
    os.kill(os.getpid(), signal.SIGKILL)
child.wait()
'''


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('module', ['acres_sim.ros.imu_node', 'acres_sim.ros.sim_node'])
@pytest.mark.parametrize('when', ['starting', 'running'])
def test_a_node_ends_when_its_parent_is_killed(ros_context, tmp_path, module, when):
    """As under ``ros2 launch`` stopped with SIGTERM (ros2/launch#666), or any
    parent that dies: the node notices and exits, whether the parent died
    while the node was still importing (before it asked for PR_SET_PDEATHSIG)
    or while it runs."""
    import rclpy

    log = tmp_path / 'node.log'
    parent = subprocess.Popen([sys.executable, '-c', PARENT, module,
                               '0.3' if when == 'starting' else '0', str(log)],
                              stdout=subprocess.PIPE, text=True)
    pid = int(parent.stdout.readline())
    probe = rclpy.create_node('parent_probe')
    try:
        if when == 'running':
            name = module.rsplit('.', 1)[1]
            deadline = time.monotonic() + 60
            while name not in probe.get_node_names():
                assert time.monotonic() < deadline, f'{name} never came up:\n{log.read_text()}'
                rclpy.spin_once(probe, timeout_sec=0.1)
            assert alive(pid)
            parent.kill()
        parent.wait(timeout=30)
        wait_for(lambda: not alive(pid), 60, f'end of {module} after its parent')
    finally:
        probe.destroy_node()
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
        parent.wait(timeout=30)
