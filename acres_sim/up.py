"""``acres-sim up``: start the nodes of a rig as child processes -- the
processes of :func:`acres_sim.rig.rig_processes`, the same the launch files
start -- for machines without ``ros2 launch``.

Each node gets a parameter file written into a temporary folder.  A node
alone in its process runs as ``python -m acres_sim.ros.<node> --ros-args -r
__node:=NAME -r __ns:=/NS --params-file FILE``; the sensor nodes that share
a process as ``python -m acres_sim.ros.sensor_nodes --node KIND NAME FILE
... --ros-args -r __ns:=/NS``.  The folder is named for the pid of ``up`` and removed at
the end, and one left behind by an ``up`` that was killed (SIGKILL) is removed
by the next ``up`` once that pid is gone (``--print-nodes DIR`` writes the
files into a folder of the user's, for nodes started by hand).  Their output is
forwarded line by line with the node's name in front.  Ctrl-C (or SIGTERM)
stops them all: SIGINT first, then, after a grace period, SIGTERM and SIGKILL
(at once after a second Ctrl-C).  A node that exits by itself is reported;
when the sim node ends (its ``duration_s`` reached, or a failure) the others
are stopped.
"""

from dataclasses import dataclass
import functools
import os
from pathlib import Path
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

import yaml

from acres_sim.config.validate import ConfigError
from acres_sim.files import read_regular, write_atomically
from acres_sim.parent import end_with_parent
from acres_sim.rig import KILL_GRACE_S, STOP_GRACE_S, hosted_arguments
from acres_sim.stop_signals import StopSignals

__all__ = ['Launched', 'node_command', 'params_document', 'params_file_name', 'run_nodes',
           'shell_command', 'write_params_files']

FOLDER_PREFIX = 'acres-sim-up-'       # + pid of up + '-' + random: its parameter files
PARAMS_MARK = '# acres-sim up: parameters of '   # first line of every parameter file it writes


class ParamsFileError(ConfigError):
    """A parameter file that cannot be written (one line for the user)."""


def params_document(node):
    """The ROS 2 parameter file of a NodeSpec: its parameters nested by their dots."""
    tree = {}
    for name, value in node.parameters.items():
        *groups, leaf = name.split('.')
        branch = tree
        for group in groups:
            branch = branch.setdefault(group, {})
        branch[leaf] = value
    return PARAMS_MARK + node.full_name + '\n' + yaml.safe_dump(
        {'/**': {'ros__parameters': tree}}, default_flow_style=None, sort_keys=False)


def params_file_name(node):
    """The parameter file's name of a node: its full name, e.g. agent1.imu_node.yaml."""
    return node.full_name.strip('/').replace('/', '.') + '.yaml'


def node_command(node, params_file):
    """The command line that starts ``node`` (a NodeSpec) with its parameter
    file -- for a process of several nodes, the list of theirs."""
    command = [sys.executable, '-m', f'acres_sim.ros.{node.executable}',
               *(hosted_arguments(node, params_file) if node.nodes else ())]
    ros = [] if node.nodes else ['-r', f'__node:={node.name}']
    if node.namespace:
        ros += ['-r', f'__ns:=/{node.namespace}']
    for old, new in node.remappings:
        ros += ['-r', f'{old}:={new}']
    if not node.nodes:
        ros += ['--params-file', str(params_file)]
    return command + (['--ros-args', *ros] if ros else [])


def shell_command(node, params_file):
    """The command of ``node`` as one shell line, with the variables ``up`` adds
    for it (the network, the Fast DDS profile) in front."""
    env = [f'{name}={value}' for name, value in sorted(node.env.items())]
    return shlex.join((['env', *env] if env else []) + node_command(node, params_file))


def _written_by_up(path):
    try:
        return read_regular(path).startswith(PARAMS_MARK.encode('utf-8'))
    except OSError:
        return False


def write_params_files(nodes, folder):
    """Write each node's parameter file into ``folder`` (made if need be); per
    entry of ``nodes`` its path, or for a process of several nodes the list of
    theirs.  A file there that ``up`` did not write is never replaced: then
    ParamsFileError, and nothing is written."""
    folder = Path(folder)
    specs = [member for node in nodes for member in (node.nodes or (node,))]
    paths = [folder / params_file_name(node) for node in specs]
    for path in paths:
        if os.path.lexists(path) and not _written_by_up(path):
            raise ParamsFileError(f'{path} exists and is not a parameter file of acres-sim '
                                  'up; not replacing it (choose another folder)')
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for node, path in zip(specs, paths):
            write_atomically(path, params_document(node).encode('utf-8'))
    except OSError as err:
        raise ParamsFileError(f'cannot write the parameter files into {folder}: '
                              f'{err.strerror or err}') from None
    out, taken = [], iter(paths)
    for node in nodes:
        out.append([next(taken) for _ in node.nodes] if node.nodes else next(taken))
    return out


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_dead_folders(parent=None):
    """Remove the parameter folders that an ``up`` killed before its cleanup left
    in ``parent`` (the temporary folder): this user's, whose pid is gone, and
    only the parameter files ``up`` wrote (a folder with anything else stays)."""
    parent = Path(tempfile.gettempdir() if parent is None else parent)
    for folder in parent.glob(FOLDER_PREFIX + '*-*'):
        pid = folder.name[len(FOLDER_PREFIX):].split('-', 1)[0]
        try:
            if not pid.isdigit() or _pid_alive(int(pid)) or folder.is_symlink() \
                    or folder.stat().st_uid != os.getuid():
                continue
            for path in folder.iterdir():
                if path.suffix == '.yaml' and path.is_file() and _written_by_up(path):
                    path.unlink()
            folder.rmdir()
        except OSError:
            continue


def child_environment(environ=None):
    """The environment of a node: this one, so the ROS settings travel.  The
    ROS wheels re-execute Python to set LD_LIBRARY_PATH unless
    _ROS_WHEELS_BOOTSTRAP_COMPLETE is set: the mark never travels without the path."""
    env = dict(os.environ if environ is None else environ)
    if 'LD_LIBRARY_PATH' not in env:
        env.pop('_ROS_WHEELS_BOOTSTRAP_COMPLETE', None)
    env['PYTHONUNBUFFERED'] = '1'
    return env


@dataclass
class Launched:
    node: object
    process: subprocess.Popen
    reader: threading.Thread
    reported: bool = False


def _forward(stream, label, out, lock):
    for line in iter(stream.readline, ''):
        with lock:
            out.write(f'[{label}] {line}' if line.endswith('\n') else f'[{label}] {line}\n')
            out.flush()
    stream.close()


def run_nodes(nodes, out=sys.stderr, poll_s=0.1):
    """Start ``nodes`` (NodeSpecs, the sim node first) and supervise them until
    the sim node ends or Ctrl-C / SIGTERM; returns the exit status: 0 if every
    node ended well, 1 if one failed, 128 + signal number after a signal.
    A signal only sets a flag (acres_sim.stop_signals): the loop looks at it
    between two starts and every ``poll_s``."""
    lock = threading.Lock()
    launched = []
    failed = False
    remove_dead_folders()
    # the signals held until the folder is gone, so no signal cuts its removal short
    with StopSignals() as signals, \
            tempfile.TemporaryDirectory(prefix=f'{FOLDER_PREFIX}{os.getpid()}-') as folder:
        try:
            for node, params in zip(nodes, write_params_files(nodes, folder)):
                if signals.is_set():
                    break
                process = subprocess.Popen(
                    node_command(node, params), env={**child_environment(), **node.env},
                    text=True,
                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                    start_new_session=True,    # Ctrl-C reaches them from us, in order
                    # no node outlives up, even one forked just before up died
                    preexec_fn=functools.partial(end_with_parent, os.getpid()))
                label = node.full_name.lstrip('/')
                reader = threading.Thread(target=_forward, args=(process.stdout, label, out, lock),
                                          daemon=True)
                reader.start()
                launched.append(Launched(node, process, reader))
            if not signals.is_set():
                with lock:
                    out.write('acres-sim up: started ' + ', '.join(
                        f'{x.node.full_name} (pid {x.process.pid})' for x in launched) + '\n')
            while not signals.is_set():
                for x in launched:
                    code = x.process.poll()
                    if code is not None and not x.reported:
                        x.reported = True
                        if code != 0:
                            failed = True
                        with lock:
                            out.write(f'acres-sim up: {x.node.full_name} exited with status '
                                      f'{code}\n')
                if launched[0].process.poll() is not None:
                    break
                signals.wait(poll_s)
        finally:
            failed |= _stop_all(launched, out, lock, signals)
            for x in launched:
                x.reader.join(timeout=2.0)
    if signals.signal is not None:
        return signals.exit_status
    return 1 if failed else 0


def _stop_all(launched, out, lock, signals):
    """SIGINT to every node still running, then SIGTERM, then SIGKILL, each
    after its grace period -- at once after one more Ctrl-C / SIGTERM to us;
    True if one had to be killed or failed."""
    failed = False
    signals_before = signals.count
    for sig, grace in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGTERM, KILL_GRACE_S),
                       (signal.SIGKILL, 2.0)):
        running = [x for x in launched if x.process.poll() is None]
        if not running:
            break
        if sig == signal.SIGTERM and signals.count > signals_before:
            sig = signal.SIGKILL                      # asked twice: no more waiting
        for x in running:
            try:
                x.process.send_signal(sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while (any(x.process.poll() is None for x in running) and time.monotonic() < deadline
               and (signals.count == signals_before or sig == signal.SIGKILL)):
            signals.wait(0.05)
        if sig != signal.SIGINT:
            failed = True
    for x in launched:
        code = x.process.poll()
        if not x.reported and code not in (0, None, -signal.SIGINT):
            failed = True
            with lock:
                out.write(f'acres-sim up: {x.node.full_name} exited with status {code}\n')
    return failed
