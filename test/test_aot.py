"""The kernels compiled ahead of time (``python -m acres_sim.aot``, run by
``make setup``) and their use by ``acres_sim.core.jit``:

* a compiled kernel is called only with the argument types numba itself
  would infer for the types it was compiled for (numba's typeof is the
  reference); with any other arguments numba's JIT takes the call;
* the recorder runs with neither numba nor llvmlite imported and writes the
  bytes that numba's JIT gives (``ACRES_SIM_KERNELS=jit``);
* the nodes of a live rig run without numba's LLVM mapped;
* an index built from other sources is not used.

The tests of the compiled module itself skip where it is not built or not
current (a model's source edited since: ``make setup`` builds it again).
"""

from collections import namedtuple
import os
from pathlib import Path
import shutil
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from acres_sim.aot import argument_spec
from acres_sim.core import jit
from acres_sim.core.events import EventEffects
from acres_sim.core.jit import Kernel, argument_check

PACKAGE = Path(jit.__file__).resolve().parents[1]
needs_compiled = pytest.mark.skipif(
    jit.compiled_module() is None,
    reason='the kernels compiled ahead of time are not built or not current (make setup)')


def _unaligned():      # numba types it as an aligned array (its typeof does not look)
    return np.frombuffer(bytearray(8 * 3 + 1), dtype=np.float64, offset=1, count=3)


def _readonly():
    x = np.zeros(3)
    x.flags.writeable = False
    return x


def _local_pair():
    Pair = namedtuple('Pair', 'a b')      # not a class a check can name by its module
    return Pair(1.0, 2.0)

#: values numba types differently, and values it types alike
VALUES = [
    0, -1, 2**63 - 1, 2**63, 2**64, True, np.bool_(False), 1.5, np.float64(2.0), np.float32(2.0),
    np.int64(3), np.int32(3), np.uint64(3), np.uint32(3), np.longlong(3), np.ulonglong(3),
    np.float16(1.0), None, 'text', [1.0],
    np.zeros(3), np.ones(4), np.zeros(3, np.uint64), np.zeros(3, np.int64), np.zeros(3, bool),
    np.zeros(3, np.ulonglong), np.zeros(3, np.longlong),     # other C types, the same numbers
    np.zeros((2, 3)), np.zeros((2, 3))[:, 0], np.zeros(6)[::2], np.zeros((3, 2), order='F'),
    np.zeros((2, 2, 2)), np.zeros(3, np.float32), _unaligned(), _readonly(),
    np.zeros(3, np.float16), np.zeros(3, '>f8'),
    (1.0, 2.0), (1.0, 2), (2, 1.0), (np.zeros(2), 1.0), (),
    EventEffects(np.zeros(1, np.int64), np.zeros((1, 4))),
    EventEffects(np.zeros(2, np.int64), np.zeros((3, 5))),
    EventEffects(np.zeros(1), np.zeros((1, 4))),
    EventEffects(np.zeros(1, np.int64), np.zeros((4, 1)).T),
    (np.zeros(1, np.int64), np.zeros((1, 4))),
]


def _numba_type(value):
    try:
        return numba.typeof(value)
    except Exception:           # numba cannot type it (ValueError, NotImplementedError)
        return None


def test_a_compiled_kernel_takes_exactly_the_arguments_numba_types_as_it_was_compiled_for():
    specs = 0
    for value in VALUES:
        spec = argument_spec(_numba_type(value)) if _numba_type(value) is not None else None
        if spec is None:         # not compiled for such types: nothing to check
            continue
        specs += 1
        check = argument_check([spec])
        for other in VALUES:
            same = _numba_type(other) == _numba_type(value)
            assert check((other,)) == same, (value, other, check.source)
    assert specs >= 25
    two = argument_check([('scalar', 'float64'), ('array', 'float64', 1)])
    assert two((1.0, np.zeros(2))) and not two((1.0,)) and not two((1.0, np.zeros(2), 3))


def test_types_the_check_cannot_tell_apart_are_not_compiled():
    for value in (_readonly(), np.zeros(6)[::2], np.zeros((3, 2), order='F'), np.float16(1.0),
                  _local_pair(), np.zeros(2, dtype=[('x', 'f8')]), (1.0, _readonly())):
        assert argument_spec(numba.typeof(value)) is None, value


@needs_compiled
def test_a_compiled_kernel_given_other_types_is_left_to_numbas_jit():
    from acres_sim.core.rng import pcg32_seed, pcg32_uniform

    assert isinstance(pcg32_uniform, Kernel) and pcg32_uniform.overloads()
    state = pcg32_seed(np.uint64(7), np.uint64(3))
    strided = np.zeros(4, np.uint64)
    strided[::2] = state
    view = strided[::2]                      # the same state, not contiguous
    compiled = pcg32_uniform(state)
    assert pcg32_uniform(view) == compiled   # the compiled code would read strided[1]
    assert np.array_equal(view, state)       # both advanced alike
    assert pcg32_uniform._dispatcher is not None


@needs_compiled
def test_a_kernel_left_to_numbas_jit_is_named_to_the_hooks_once(monkeypatch):
    """The live nodes log a kernel that numba compiles mid-run (fallback_hooks):
    named once, when numba first takes a call of it; not for compiled calls,
    nor when numba only types it as the callee of another."""
    from acres_sim.core.rng import pcg32_seed, pcg32_uniform

    named = []
    monkeypatch.setattr(jit, 'fallback_hooks', [named.append])
    kernel = Kernel(pcg32_uniform.py_func, pcg32_uniform.options, pcg32_uniform.entries,
                    pcg32_uniform.module)        # a fresh one: no dispatcher yet
    state = pcg32_seed(np.uint64(7), np.uint64(3))
    kernel(state)
    callee = Kernel(pcg32_uniform.py_func, pcg32_uniform.options, pcg32_uniform.entries,
                    pcg32_uniform.module)
    assert callee._numba_type_ is not None   # what numba asks of a callee
    assert named == []
    view = np.zeros(4, np.uint64)[::2]
    view[:] = state
    kernel(view)
    kernel(view)
    assert named == ['acres_sim.core.rng.pcg32_uniform']


def _python(code, env=None, cwd=None):
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=900, env={**os.environ, **(env or {})}, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1].split()


RECORD = '''
    import sys
    from acres_sim.cli import main
    code = main(['record', '--rig', 'mixed', '--duration', '40', '--no-progress',
                 '--no-report', '--out', sys.argv[1] if len(sys.argv) > 1 else {out!r}])
    print(code, 'numba' in sys.modules, 'llvmlite' in sys.modules)
'''


@needs_compiled
def test_the_recorder_runs_without_numba_and_writes_the_bytes_of_numbas_jit(tmp_path):
    """Every sensor of the mixed rig (three vehicles, the radar too), bag and
    rows, with the compiled kernels and with numba's JIT."""
    assert _python(RECORD.format(out=str(tmp_path / 'compiled'))) == ['0', 'False', 'False']
    assert _python(RECORD.format(out=str(tmp_path / 'jit')),
                   env={jit.KERNELS_VARIABLE: 'jit'}) == ['0', 'True', 'True']
    names = sorted(p.relative_to(tmp_path / 'jit') for p in (tmp_path / 'jit').rglob('*')
                   if p.is_file() and p.name not in ('episode.json', '.acres_sim.lock'))
    assert len(names) > 20 and Path('bag/bag.mcap') in names
    for name in names:
        compiled, jitted = (tmp_path / mode / name for mode in ('compiled', 'jit'))
        assert compiled.read_bytes() == jitted.read_bytes(), name


@needs_compiled
def test_an_index_built_from_other_sources_is_not_used(tmp_path):
    copy = tmp_path / 'acres_sim'
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns('__pycache__'))
    mode = 'from acres_sim.core import jit; print(jit.__file__.startswith({!r}), jit.MODE)'
    env = {'PYTHONPATH': str(tmp_path)}
    assert _python(mode.format(str(tmp_path)), env, tmp_path) == ['True', 'compiled']
    with (copy / 'core' / 'rng.py').open('a') as source:
        source.write('\n# an edit after the build\n')
    assert _python(mode.format(str(tmp_path)), env, tmp_path) == ['True', 'jit']


def _children(pid):
    path = Path(f'/proc/{pid}/task/{pid}/children')
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@needs_compiled
@pytest.mark.requires_rclpy
def test_the_nodes_of_a_live_rig_run_without_numbas_llvm(ros_context, ros_child):
    """``acres-sim up --rig mixed`` (three vehicles, every sensor): near the
    run's end, after every vehicle's GNSS fixes, no node process has
    llvmlite's library mapped."""
    import rclpy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import NavSatFix

    from live_helpers import DISCOVERY_TIMEOUT, Probe, stamp_s, up_args

    fixes = [f'/{ns}/gnss_receiver/fix' for ns in ('polaris', 'maxxum1', 'maxxum2')]
    node = rclpy.create_node('aot_probe')
    probe = Probe(node, {'/clock': Clock, **{t: NavSatFix for t in fixes}})
    child = ros_child(up_args('--rig', 'mixed', '--duration', '25', '--rtf', '2'))

    def sim_s():
        return stamp_s(probe.last('/clock', Clock)) if probe.got['/clock'] else 0.0

    def fixed(topic):
        return any(m.status.status >= 0 for m in probe.decoded(topic, NavSatFix)[-5:])

    probe.spin_until(lambda: sim_s() > 20.0 and all(fixed(t) for t in fixes),
                     DISCOVERY_TIMEOUT + 60, 'a fix of every vehicle by 20 s', child)
    processes = {pid: Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode()
                 for pid in _children(child.process.pid)}
    maps = {pid: Path(f'/proc/{pid}/maps').read_text() for pid in processes}
    assert any('acres_sim.ros.sim_node' in c for c in processes.values()), processes
    assert any('acres_sim.ros.sensor_nodes' in c for c in processes.values()), processes
    for pid, command in processes.items():
        assert 'llvmlite' not in maps[pid], command
    node.destroy_node()
