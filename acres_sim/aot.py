"""The kernels compiled ahead of time: ``python -m acres_sim.aot`` (``make
setup`` runs it after the warm-up).

With numba's JIT, it runs the warm-up of every packaged vehicle
(:func:`acres_sim.warmup.warm_rig`) and a short recording of every packaged
rig and scenario (:data:`RECORDED_S` each, and one on each packaged terrain):
the kernels the recorder and the nodes call from Python, with the argument
types they call them with (the nodes run the recorder's pipeline).  Then it
compiles each of those kernels for those types into one extension module
with numba's ``pycc`` (the LLVM code of the JIT, for the architecture's
generic CPU), and writes:

* ``acres_sim/core/aot_kernels_<digest>.<python's suffix>.so``: the compiled
  kernels, the module named by the digest of the ``core`` sources;
* ``acres_sim/core/aot_index.py``: that digest and module name, numpy's
  version, and for each kernel its compiled functions and the argument types
  each takes.

:mod:`acres_sim.core.jit` uses them where they are current (module
docstring there).  A kernel whose arguments this build cannot check (a
record, a readonly or non-contiguous array, an omitted default), or that
runs in parallel, stays with the JIT, and the build says so.  Both files are
written only once the build has succeeded (each in one rename), the module
first: an index names the module of its own build, and a process that
starts between the two renames reads the index before, whose digest is no
longer the sources' after an edit (then the JIT).  The modules of earlier
builds (``aot_kernels*.so`` in ``core``, all this build's own) are then
removed.  The build runs numba's JIT without its cache: a kernel loaded
from the cache may hold a callee of another file as it was before an edit.

numba's ``pycc`` is deprecated in numba's documentation but still shipped;
the pinned numba (requirements/python.txt) is the one this is tested with.
A kernel that a later run calls with other types, or that no run here
called, still works: numba's JIT takes it in that process.
"""

import hashlib
import os
from pathlib import Path
import pprint
import sys
import tempfile
import time
import warnings

__all__ = ['argument_spec', 'build', 'main']

CORE = Path(__file__).resolve().parent / 'core'
MODULE = 'aot_kernels'          # and the start of the sources' digest
INDEX = 'aot_index.py'
#: simulated seconds of each recording the build runs
RECORDED_S = 20.0


def argument_spec(t):
    """The spec (:func:`acres_sim.core.jit.argument_check`) of numba type ``t``, or
    None when the check cannot tell it from its neighbours."""
    from numba.core import types
    from numba.np.numpy_support import as_dtype

    from acres_sim.core.jit import SCALAR_TYPES

    if isinstance(t, types.Boolean):
        return ('scalar', 'boolean')
    if isinstance(t, (types.Integer, types.Float)):
        return ('scalar', t.name) if t.name in SCALAR_TYPES else None
    if isinstance(t, types.Array):
        if (t.layout != 'C' or not t.mutable or not t.aligned
                or not isinstance(t.dtype, (types.Boolean, types.Integer, types.Float))):
            return None
        return ('array', as_dtype(t.dtype).name, t.ndim)
    if isinstance(t, types.BaseNamedTuple):
        members = [argument_spec(m) for m in t.types]
        cls = t.instance_class
        module = sys.modules.get(cls.__module__)
        if None in members or getattr(module, cls.__qualname__, None) is not cls:
            return None                       # the check finds the class by these names
        return ('named', cls.__module__, cls.__qualname__, tuple(members))
    if isinstance(t, types.BaseTuple):
        members = [argument_spec(m) for m in t.types]
        return None if None in members else ('tuple', tuple(members))
    return None


def _call_depth(func, depths):
    """How deep the kernels that kernel ``func`` calls go (0: it calls none).
    pycc compiles its exports in the order of their symbols, and a kernel
    compiled after a caller that gave it a constant argument fails to type
    (numba 0.68): so callees go first (:func:`_symbol`)."""
    from numba.core.registry import CPUDispatcher

    if func not in depths:
        callees = [func.__globals__.get(name) for name in func.__code__.co_names]
        callees = [getattr(c, 'dispatcher', c) for c in callees]     # a NotedKernel's
        depths[func] = 1 + max((_call_depth(c.py_func, depths) for c in callees
                                if isinstance(c, CPUDispatcher)), default=-1)
    return depths[func]


def _symbol(name, specs, depth):
    """The exported name of kernel ``name`` compiled for ``specs``: its call
    depth first (the order pycc compiles in), then a digest of the kernel and
    types (the same in every build)."""
    digest = hashlib.sha256(repr((name, specs)).encode()).hexdigest()[:16]
    return f'k{depth:02d}_{digest}_{name.rsplit(".", 1)[1]}'


def _run_workload():
    """The warm-ups and the recordings (in a temporary folder, their output
    kept from the terminal)."""
    import contextlib
    import io

    from acres_sim.cli import main as cli
    from acres_sim.config.scenario import packaged_names
    from acres_sim.config.terrain import terrain_names
    from acres_sim.config.vehicles import vehicle_names
    from acres_sim.warmup import warm_rig

    for rig in vehicle_names():
        warm_rig(rig)
    runs = [['--rig', name] for name in packaged_names()]
    runs += [['--rig', 'polaris', '--terrain', name] for name in terrain_names()]
    with tempfile.TemporaryDirectory(prefix='acres-sim-aot-') as folder:
        for i, run in enumerate(runs):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = cli(['record', *run, '--duration', f'{RECORDED_S:g}', '--no-progress',
                            '--no-report', '--out', str(Path(folder) / str(i))])
            if code != 0:
                raise RuntimeError(f'acres-sim record {" ".join(run)} failed:\n{out.getvalue()}')


def _index_text(sources, module, numpy_version, kernels):
    return (
        '"""Written by ``python -m acres_sim.aot`` (do not edit): the kernels of\n'
        f'``acres_sim.core.{module}``, each as (symbol, argument specs), and what they\n'
        'were built from (acres_sim.core.jit)."""\n\n'
        f'SOURCES = {sources!r}\n'
        f'MODULE = {module!r}\n'
        f'NUMPY = {numpy_version!r}\n'
        f'KERNELS = {pprint.pformat(kernels, width=99)}\n')


def _compiler():
    """The C compiler's command (pycc links the module with it), or an error
    before the build's minute of work."""
    import shlex
    import shutil
    import sysconfig

    command = shlex.split(sysconfig.get_config_var('CC') or 'cc')[0]
    if shutil.which(command) is None:
        raise RuntimeError(f'no C compiler: {command!r} is not on PATH')
    return command


def build(log=print):
    """Compile the kernels and write the two files; returns the number compiled."""
    os.environ['ACRES_SIM_KERNELS'] = 'note'    # this process: the JIT, noting each call
    import numpy as np

    from acres_sim.core import jit
    if jit.MODE != 'note':
        raise RuntimeError('acres_sim.core.jit was imported before the build could set '
                           'ACRES_SIM_KERNELS=note; run python -m acres_sim.aot in a process '
                           'of its own')
    _compiler()
    sources = jit.sources_digest()
    module = f'{MODULE}_{sources[:16]}'
    _run_workload()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')       # pycc's pending deprecation (numba is pinned)
        from numba.pycc import CC

    cc = CC(module, source_module=sys.modules[__name__])
    # the architecture's generic CPU (pycc's default): the module runs on any
    # x86-64 machine, and its floats are the JIT's, which compiles for this
    # CPU (no fast-math: neither fuses a multiply and an add); as fast here
    cc.target_cpu = ''
    kernels, depths = {}, {}
    called = sorted(jit.noted_calls(), key=lambda entry: (_call_depth(entry[2].py_func, depths),
                                                          entry[0], str(entry[1])))
    for name, sig, dispatcher in called:
        specs = [argument_spec(t) for t in sig]
        omitted = len(sig) != dispatcher.py_func.__code__.co_argcount    # a default left out
        if dispatcher.targetoptions.get('parallel') or None in specs or omitted:
            log(f'acres_sim.aot: {name}{sig} stays with the JIT')
            continue
        symbol = _symbol(name, specs, _call_depth(dispatcher.py_func, depths))
        cc.export(symbol, sig)(dispatcher.py_func)   # the return type inferred, as the JIT does
        kernels.setdefault(name, []).append((symbol, tuple(specs)))
    with tempfile.TemporaryDirectory(dir=CORE, prefix='.aot-build-') as folder:
        cc.output_dir = folder
        cc.compile()
        if jit.sources_digest() != sources:
            raise RuntimeError('acres_sim/core changed during the build; run it again')
        index = Path(folder) / INDEX
        index.write_text(_index_text(sources, module, np.__version__, kernels))
        os.replace(Path(folder) / cc.output_file, CORE / cc.output_file)
        os.replace(index, CORE / INDEX)
    for old in CORE.glob(f'{MODULE}*.so'):       # earlier builds' modules
        if old.name != cc.output_file:
            old.unlink(missing_ok=True)
    return len(kernels)


def main():
    start = time.monotonic()
    try:
        count = build()
    except Exception as exc:      # a failed build leaves the JIT in use; say why
        print(f'acres_sim.aot: not built ({type(exc).__name__}: {exc}); numba\'s JIT stays '
              'in use', file=sys.stderr)
        return 1
    print(f'acres_sim.aot: {count} kernels compiled ahead of time '
          f'({time.monotonic() - start:.1f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
