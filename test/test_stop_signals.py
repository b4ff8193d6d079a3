"""SIGINT / SIGTERM always end a node: the handler takes no lock, so a burst of
real signals landing anywhere in the loop (inside a wait, inside the handler
itself) cannot deadlock it.  Each start is signalled a few hundred times in a
row and must exit; the timeouts only turn a hang into a failure."""

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest

from conftest import child_environment

EXIT_TIMEOUT = 60.0
BURST = 300

# A loop that waits as the nodes do, as often as it can (a wait of 0: the
# moments around the wait are most of its time).
LOOP = '''
import os
from acres_sim.stop_signals import StopSignals
with StopSignals() as stop:
    print('ready', flush=True)
    while not stop.wait(0):
        pass
    print('stopped by', stop.signal, flush=True)
    os._exit(0)      # as a node ends (exit_now): the rest of the burst only sets the flag
'''


def burst(process, signals=(signal.SIGTERM, signal.SIGINT)):
    """Send ``signals`` in turn, BURST times or until the process is gone."""
    for i in range(BURST):
        try:
            os.kill(process.pid, signals[i % len(signals)])
        except ProcessLookupError:
            return


def wait_or_kill(process):
    """The exit status; a process still there after EXIT_TIMEOUT is killed and fails the test."""
    try:
        return process.wait(timeout=EXIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f'pid {process.pid} still ran {EXIT_TIMEOUT} s after {BURST} signals')


@pytest.mark.parametrize('start', range(20))
def test_a_burst_of_signals_stops_a_waiting_loop(start):
    process = subprocess.Popen([sys.executable, '-c', LOOP], env=child_environment(),
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == 'ready\n'
        burst(process)
        assert wait_or_kill(process) == 0
        assert process.stdout.read().startswith('stopped by ')
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


NODE_ARGS = {
    # a slow clock: the sim spends its time waiting for its steps' due times
    'sim_node': ['-p', 'rtf:=0.02', '-p', 'start_timeout_s:=0.0'],
    'gnss_node': [],
    'imu_node': [],
}


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('start', range(2))
@pytest.mark.parametrize('executable', sorted(NODE_ARGS))
def test_a_burst_of_signals_stops_a_node(ros_context, executable, start):
    import rclpy

    probe = rclpy.create_node(f'signal_probe_{executable}_{start}')
    process = subprocess.Popen(
        [sys.executable, '-m', f'acres_sim.ros.{executable}', '--ros-args',
         *NODE_ARGS[executable]], env=child_environment(), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + EXIT_TIMEOUT
        # in the graph, and (the sim) its loop begun
        while executable not in probe.get_node_names():
            assert process.poll() is None and time.monotonic() < deadline, 'the node never came up'
            rclpy.spin_once(probe, timeout_sec=0.1)
        log = []
        if executable == 'sim_node':
            while not log or 'running ' not in log[-1]:
                log.append(process.stderr.readline())
                assert log[-1] and time.monotonic() < deadline, 'no loop: ' + ''.join(log)
        else:
            time.sleep(1.0)             # its spin loop, its progress timer
        burst(process)
        code = wait_or_kill(process)
        errors = ''.join(log) + process.stderr.read()
        assert code == 0, errors
        assert 'Traceback' not in errors
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()
        probe.destroy_node()



def child_pids(pid):
    """The pids of the processes whose parent is ``pid``, with their command lines."""
    out = {}
    for stat in Path('/proc').glob('[0-9]*/stat'):
        try:
            if int(stat.read_text().rsplit(')', 1)[1].split()[1]) == pid:
                out[int(stat.parent.name)] = (stat.parent / 'cmdline').read_bytes().replace(
                    b'\0', b' ').decode()
        except (OSError, ValueError, IndexError):
            continue
    return out


@pytest.mark.requires_rclpy
def test_a_burst_of_signals_stops_up_and_all_its_nodes(ros_domain_id):
    """Ctrl-C and SIGTERM over and over: ``acres-sim up`` still stops its nodes
    (the second signal: at once) and removes its folder of parameter files."""
    process = subprocess.Popen([sys.executable, '-m', 'acres_sim.cli', 'up', '--rig', 'polaris'],
                               env=child_environment(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stderr.readline()
        assert first.startswith('acres-sim up: DDS discovery '), first     # the network line
        assert process.stderr.readline().startswith('acres-sim up: started ')
        nodes = child_pids(process.pid)
        folders = {Path(arg).parent for command in nodes.values() for arg in command.split()
                   if arg.endswith('.yaml')}
        assert len(nodes) == 2 and len(folders) == 1, nodes    # the sim; the sensor nodes
        log = []          # until the sim runs (the sensor nodes are ready by then)
        while not log or not ('[sim_node]' in log[-1] and 'running ' in log[-1]):
            log.append(process.stderr.readline())
            assert log[-1], ''.join(log)
        burst(process)
        code = wait_or_kill(process)
        errors = ''.join(log) + process.stderr.read()
        assert code in (128 + signal.SIGTERM, 128 + signal.SIGINT), errors
        assert 'Traceback' not in errors
        assert not any(folder.exists() for folder in folders)
        deadline = time.monotonic() + EXIT_TIMEOUT
        while any(Path(f'/proc/{pid}').exists() for pid in nodes):
            assert time.monotonic() < deadline, 'a node outlived acres-sim up'
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()


def importing_heavy_modules(pid):
    """The node process (after the ROS wheels' re-exec at start-up) has numpy's
    extension mapped: it is past acres_sim.ros, inside its node module's imports."""
    try:
        environ = Path(f'/proc/{pid}/environ').read_bytes()
        maps = Path(f'/proc/{pid}/maps').read_text()
    except OSError:
        return False
    settled = b'LD_LIBRARY_PATH=' in environ or b'_ROS_WHEELS' not in environ
    return settled and '_multiarray_umath' in maps


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('node', ['sim_node', 'imu_node', 'sensor_nodes'])
@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_a_node_imports_is_a_stop_not_a_traceback(ros_domain_id, tmp_path, node,
                                                                 sig):
    """Ctrl-C a moment after start (``up`` or launch stopped at once): the node
    is still importing rclpy and numba; it stops in one line, exit status 0."""
    args = []
    if node == 'sensor_nodes':        # the process of the rig's sensor nodes, with one of them
        from acres_sim.rig import rig_nodes
        from acres_sim.up import params_document

        params = tmp_path / 'imu_node.yaml'
        params.write_text(params_document(rig_nodes('polaris')[2]))
        args = ['--node', 'imu_node', 'imu_node', str(params)]
    process = subprocess.Popen([sys.executable, '-m', f'acres_sim.ros.{node}', *args],
                               env=child_environment(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + EXIT_TIMEOUT
        while not importing_heavy_modules(process.pid):
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.002)
        process.send_signal(sig)
        _out, err = process.communicate(timeout=EXIT_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert 'Traceback' not in err and 'KeyboardInterrupt' not in err, err
    assert process.returncode == 0, err


@pytest.mark.parametrize('argv, orig_argv, node', [
    (['-m'], ['python', '-m', 'acres_sim.ros.sim_node', '--ros-args'], True),
    (['/ws/install/acres_sim/lib/acres_sim/gnss_node'],
     ['python3', '/ws/install/acres_sim/lib/acres_sim/gnss_node', '--ros-args'], True),
    (['-m'], ['python', '-m', 'pytest', 'test/'], False),
    (['-c'], ['python', '-c', 'import acres_sim.ros'], False),
    (['/usr/bin/ros2'], ['python3', '/usr/bin/ros2', 'launch', 'acres_sim', 'x'], False),
])
def test_only_a_node_process_takes_signals_from_its_first_moment(argv, orig_argv, node):
    """acres_sim.ros installs its stop request in node processes only (a test
    run or a launch that imports the package keeps its own Ctrl-C)."""
    from acres_sim.ros import starting_as_node

    assert starting_as_node(argv, orig_argv) is node


# Enters StopSignals, asks to end within 1 s of a stop, then hangs after the
# stop: in a sleep (Python runs between its parts) or in one C call that holds
# the GIL (no Python thread runs until it returns: about a minute here).
HANG = '''
import sys, time
from acres_sim.stop_signals import StopSignals
with StopSignals() as stop:
    stop.end_within(1.0, 'hang_probe')
    print('ready', flush=True)
    while not stop.wait(1.0):
        pass
    def stuck_here():
        if sys.argv[1] == 'sleep':
            time.sleep(120)
        else:
            sum(range(10 ** 11))
    stuck_here()
print('ended on its own', flush=True)
'''


@pytest.mark.parametrize('hang', ['sleep', 'gil'])
def test_a_process_that_hangs_after_a_stop_ends_and_says_where(hang):
    """end_within: a node that does not end after SIGINT (a hang in shutdown)
    ends by itself with status 1, its threads' stacks on stderr (the frame it
    hung in), within its limit, or 2 s later where it holds the GIL."""
    process = subprocess.Popen([sys.executable, '-c', HANG, hang], env=child_environment(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == 'ready\n'
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=EXIT_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 1, (out, err)
    assert 'ended on its own' not in out
    assert 'stuck_here' in err, err
    if hang == 'sleep':
        assert err.startswith(
            'hang_probe: still running 1 s after SIGINT; ending it (status 1)'), err
