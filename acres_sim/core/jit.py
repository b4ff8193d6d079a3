"""``njit`` for every kernel of the package: the kernels compiled ahead of time
where they are built and current, numba's JIT otherwise.

**Compiled ahead of time.**  ``make setup`` (``python -m acres_sim.aot``)
compiles each kernel that Python calls into one extension module,
``acres_sim.core.aot_kernels``, for the argument types it is called with
(:mod:`acres_sim.aot`), and writes ``acres_sim.core.aot_index``: which
kernel has which compiled function, for which argument types, and the digest
of the ``core`` sources it was built from.  When both are there and the
digest is that of the sources here (and numpy's version that of the build),
``njit`` returns a :class:`Kernel`, and numba is not imported at all: a
process that runs only compiled kernels (the nodes, the recorder) does
without numba and its LLVM: about 120 MB and 0.7 s of start-up each.

A :class:`Kernel` checks the types of its arguments (:func:`argument_check`, the
types numba itself would infer for them) and calls the compiled function;
for other arguments, or for a kernel Python had not called when the module
was built, it imports numba and compiles (or loads from numba's cache) the
same function with numba's JIT, as it would be without the compiled module.
Its callees are then compiled with it: a :class:`Kernel` tells numba which
dispatcher it stands for (``_numba_type_``).  Each such kernel is named to
the :data:`fallback_hooks` (a live node logs it: it stalls meanwhile).  Both
paths are the same LLVM code, so they give the same floats bit for bit (a
test checks a recording).

``ACRES_SIM_KERNELS=jit`` in the environment keeps to the JIT, and so do
numba's switches for debugging (``NUMBA_DISABLE_JIT`` and the like).  The build
sets ``ACRES_SIM_KERNELS=note`` in its own process: the JIT, each kernel a
:class:`NotedKernel`, which notes the argument types of every call from
Python (:func:`noted_calls`), the signatures it compiles.

**numba's BLAS probe.**  The first time a process compiles or loads a kernel,
numba imports its numpy lowering (``numba.np.arraymath``), which checks
whether scipy's BLAS can back ``np.dot`` by importing ``scipy.linalg``: about
0.4 s and 16 MB in every process, for a library no kernel here uses (no
kernel calls ``np.dot``, ``np.linalg`` or ``@``).  So numba's lowering is
imported while ``scipy.linalg`` cannot be; numba then takes BLAS as absent,
which changes only ``np.convolve`` and ``np.correlate`` (a plain loop
instead of BLAS's dot).  ``np.dot`` and ``np.linalg`` would still compile:
they import scipy's BLAS again when a kernel uses them.  When numba's lowering
is loaded already (numba used before this module), nothing changes.
"""

import functools
import hashlib
import importlib
import os
from pathlib import Path
import sys

import numpy as np

__all__ = ['KERNELS_VARIABLE', 'MODE', 'SCALAR_TYPES', 'Kernel', 'NotedKernel', 'argument_check',
           'compiled_module', 'fallback_hooks', 'njit', 'noted_calls', 'prange', 'sources_digest']

#: the environment variable that keeps to numba's JIT (value ``jit``)
KERNELS_VARIABLE = 'ACRES_SIM_KERNELS'

_CORE = Path(__file__).resolve().parent
_INDEX = 'acres_sim.core.aot_index'
_PROBED = 'scipy.linalg'
#: numba's environment switches that change what its JIT compiles
_NUMBA_SWITCHES = ('NUMBA_DISABLE_JIT', 'NUMBA_BOUNDSCHECK', 'NUMBA_DEBUGINFO',
                   'NUMBA_FASTMATH', 'NUMBA_OPT')

#: Called with a kernel's name (module.qualname) when a process on the
#: compiled kernels first hands a call of that kernel to numba's JIT: numba is
#: imported then and the kernel compiled (or loaded from numba's cache) with
#: its callees, a second or more the first time.  The live nodes log it, since
#: a node stalls meanwhile.
fallback_hooks = []


def sources_digest():
    """SHA-256 of every Python source of ``core`` (its path and its bytes) but
    the index: what the compiled module was built from."""
    digest = hashlib.sha256()
    for path in sorted(_CORE.rglob('*.py')):
        if path.name != 'aot_index.py' and path.is_file():     # not an editor's lock link
            digest.update(path.relative_to(_CORE).as_posix().encode() + b'\0')
            digest.update(path.read_bytes())
    return digest.hexdigest()


def compiled_module():
    """(index, extension module) of the kernels compiled ahead of time, or
    None: not built, built from other sources or another numpy, or
    ``ACRES_SIM_KERNELS=jit`` (or ``note``), or one of numba's switches for
    debugging set (numba's JIT honours them, the compiled module cannot)."""
    if (os.environ.get(KERNELS_VARIABLE, '') in ('jit', 'note')
            or any(os.environ.get(name, '0') not in ('', '0') for name in _NUMBA_SWITCHES)):
        return None
    try:
        index = importlib.import_module(_INDEX)
        if index.NUMPY != np.__version__ or index.SOURCES != sources_digest():
            return None
        # the module of this index (its name has the digest: never another build's)
        return index, importlib.import_module(f'acres_sim.core.{index.MODULE}')
    except (ImportError, AttributeError, OSError):   # not built, an older index, unreadable
        return None


# --- the argument check: the types numba would infer -------------------------

#: numba's scalar type name -> the Python types numba infers it for (a Python
#: int is int64 when it fits, else uint64 when that fits)
_SCALARS = {
    'int64': (np.int64, np.longlong), 'uint64': (np.uint64, np.ulonglong),
    'float64': (float, np.float64), 'boolean': (bool, np.bool_),
    **{name: (getattr(np, name),) for name in (
        'int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'float32')},
}
#: the scalar types a compiled kernel may take (others stay with the JIT)
SCALAR_TYPES = tuple(_SCALARS)
#: ndarray.flags.num of an array numba types with layout C and mutable (its
#: typeof takes every array as aligned)
_ARRAY_FLAGS = 0x1 | 0x400                # C_CONTIGUOUS | WRITEABLE


def argument_check(specs):
    """A test ``check(args)``: whether numba would infer for the tuple ``args``
    exactly the types that ``specs`` (one per argument, written by
    :mod:`acres_sim.aot`) describe:

    * ``('scalar', name)``: ``int64`` (or ``uint64``) for a Python int in its
      range, ``float64``, ``boolean``, or a numpy scalar of that name;
    * ``('array', dtype, ndim)``: a C-contiguous, writeable ndarray;
    * ``('tuple', members)``: a plain tuple of those members;
    * ``('named', module, name, members)``: that namedtuple class, those members.

    The test is Python written out for the specs (a kernel of the sim node
    takes some sixty arrays per call, and a loop over small tests cost as much
    as the call itself); ``check.source`` is that text."""
    consts, lines = {'ndarray': np.ndarray}, []
    names = [f'a{i}' for i in range(len(specs))]
    lines.append(f'if len(args) != {len(specs)}: return False')
    if specs:
        lines.append(f'{", ".join(names)}, = args')
    for name, spec in zip(names, specs):
        _check_lines(spec, name, consts, lines)
    source = 'def check(args):\n' + ''.join(f'    {line}\n' for line in lines) + '    return True\n'
    exec(compile(source, '<acres_sim.core.jit argument check>', 'exec'), consts)
    check = consts['check']
    check.source = source
    return check


def _const(value, consts):
    name = f'c{len(consts)}'
    consts[name] = value
    return name


def _check_lines(spec, x, consts, lines):
    kind = spec[0]
    if kind == 'scalar':
        types = _const(_SCALARS[spec[1]], consts)
        bounds = {'int64': (-2**63, 2**63), 'uint64': (2**63, 2**64)}.get(spec[1])
        if bounds:
            lines.append(f'if not ((type({x}) is int and {bounds[0]} <= {x} < {bounds[1]})'
                         f' or type({x}) in {types}): return False')
        else:
            lines.append(f'if type({x}) not in {types}: return False')
    elif kind == 'array':
        dtype = _const(np.dtype(spec[1]), consts)
        lines.append(f'if not (type({x}) is ndarray and {x}.dtype == {dtype} and '
                     f'{x}.ndim == {spec[2]} and {x}.flags.num & {_ARRAY_FLAGS} == '
                     f'{_ARRAY_FLAGS}): return False')
    elif kind in ('tuple', 'named'):
        members = spec[-1]
        if kind == 'tuple':
            lines.append(f'if type({x}) is not tuple or len({x}) != {len(members)}: return False')
        else:
            cls = _const(getattr(importlib.import_module(spec[1]), spec[2]), consts)
            lines.append(f'if type({x}) is not {cls}: return False')
        names = [f'{x}_{i}' for i in range(len(members))]
        if names:
            lines.append(f'{", ".join(names)}, = {x}')
        for name, member in zip(names, members):
            _check_lines(member, name, consts, lines)
    else:
        raise ValueError(f'unknown argument spec {spec!r}')


class Kernel:
    """One kernel (``py_func`` and numba's ``njit`` ``options``) where the
    compiled module is in use: ``entries`` are the (symbol in ``module``,
    argument specs) of its compiled functions; numba's JIT takes every other
    call (imported then)."""

    def __init__(self, py_func, options, entries, module):
        self.py_func = py_func
        self.options = options
        self.entries = entries
        self.module = module
        self._overloads = None
        self._dispatcher = None
        functools.update_wrapper(self, py_func)

    def __call__(self, *args, **kwargs):
        if not kwargs:
            for check, compiled in self.overloads():
                if check(args):
                    return compiled(*args)
        if self._dispatcher is None:     # numba takes this kernel from now on
            for hook in fallback_hooks:
                hook(f'{self.__module__}.{self.__qualname__}')
        return self.dispatcher()(*args, **kwargs)

    def overloads(self):
        """(argument check, compiled function) pairs; made on the first call,
        when the classes the checks name are defined."""
        if self._overloads is None:         # (a module and an index of two builds may
            self._overloads = [                # lack each other's names, never mix them up)
                (argument_check(specs), getattr(self.module, symbol))
                for symbol, specs in self.entries if hasattr(self.module, symbol)]
        return self._overloads

    def dispatcher(self):
        """numba's JIT dispatcher of this kernel (numba imported on first use)."""
        if self._dispatcher is None:
            numba = _numba()
            func = self.py_func
            if self.options.get('parallel'):     # its prange numba's, not range
                func = _with_globals(func, prange=numba.prange)
            self._dispatcher = numba.njit(**self.options)(func)
        return self._dispatcher

    @property
    def _numba_type_(self):
        # what numba's typeof asks of a global it meets while compiling a caller
        return self.dispatcher()._numba_type_

    def __repr__(self):
        return f'<compiled kernel {self.__module__}.{self.__qualname__}>'


class NotedKernel:
    """A numba dispatcher whose calls from Python note their argument types
    (numba's typeof) in :func:`noted_calls`: the build's (``note``)."""

    _calls = {}        # (module.qualname, argument types) -> dispatcher

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.py_func = dispatcher.py_func
        functools.update_wrapper(self, self.py_func)

    def __call__(self, *args, **kwargs):
        if not kwargs:
            types = tuple(self.dispatcher.typeof_pyval(a) for a in args)
            self._calls[(f'{self.__module__}.{self.__qualname__}', types)] = self.dispatcher
        return self.dispatcher(*args, **kwargs)

    @property
    def _numba_type_(self):
        return self.dispatcher._numba_type_


def noted_calls():
    """(module.qualname, argument types, dispatcher) of every kernel called
    from Python so far, with distinct types (``ACRES_SIM_KERNELS=note``)."""
    return [(name, types, d) for (name, types), d in NotedKernel._calls.items()]


def _with_globals(func, **names):
    import types
    copy = types.FunctionType(func.__code__, {**func.__globals__, **names}, func.__name__,
                              func.__defaults__, func.__closure__)
    copy.__qualname__, copy.__module__ = func.__qualname__, func.__module__
    return copy


def _numba():
    """numba, with its numpy lowering imported without the BLAS probe."""
    import numba
    if 'numba.np.arraymath' not in sys.modules and _PROBED not in sys.modules:
        sys.modules[_PROBED] = None            # makes "import scipy.linalg" fail
        try:
            import numba.np.arraymath  # noqa: F401 - the lowering, with its probe
        finally:
            del sys.modules[_PROBED]
    return numba


def _njit_making(kernel):
    """An ``njit`` (``@njit`` or ``@njit(**options)``) whose kernels are
    ``kernel(func, options)``; it takes no signature (the types are those of
    the calls, which a compiled module and the build's notes depend on)."""
    def njit(*args, **options):
        if args and callable(args[0]):            # @njit without arguments
            return kernel(args[0], options)
        if args:
            raise TypeError('acres_sim.core.jit.njit takes no signature: the types are '
                            'those of the calls')
        return lambda func: kernel(func, options)
    return njit


def _compiled_njit(index, module):
    return _njit_making(lambda func, options: Kernel(
        func, options, index.KERNELS.get(f'{func.__module__}.{func.__qualname__}', ()), module))


def _noting_njit(numba_njit):
    # without numba's cache: a kernel loaded from it may carry a callee of
    # another file as it was before an edit (numba checks only its own file)
    return _njit_making(lambda func, options: NotedKernel(
        numba_njit(**{**options, 'cache': False})(func)))


_COMPILED = compiled_module()
#: this process's kernels: 'compiled' (:class:`Kernel`), 'jit' (numba's
#: dispatchers) or 'note' (:class:`NotedKernel`, the build's)
MODE = ('compiled' if _COMPILED is not None
        else 'note' if os.environ.get(KERNELS_VARIABLE, '') == 'note' else 'jit')
if MODE == 'compiled':
    njit = _compiled_njit(*_COMPILED)
    prange = range                  # in compiled code; a JIT compile takes numba's
else:
    _numba_module = _numba()
    njit = _numba_module.njit if MODE == 'jit' else _noting_njit(_numba_module.njit)
    prange = _numba_module.prange
