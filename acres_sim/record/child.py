"""What the recorder's writer processes share (the bag writer of
:mod:`acres_sim.record.bag`, the row writer of
:mod:`acres_sim.record.rows_process` and the report of
:mod:`acres_sim.record.report_process`): how they are started, how they
treat SIGINT and SIGTERM, and how the parent ends them (:func:`end_child`,
:func:`close_at_exit`).

A writer process is started with the ``spawn`` method (a fresh interpreter:
``fork`` would copy a parent with numba and numpy loaded, thread pools whose
locks another thread may hold, and the whole simulation's memory).  While it
starts, the parent's ``__main__`` is hidden (spawn would re-import it in the
child: the whole simulator, and a script without an ``if __name__ ==
'__main__'`` guard would fail) and SIGINT/SIGTERM are blocked in the starting
thread, so the child is born with them blocked; the child then ignores them
-- a Ctrl-C reaches the whole process group, and the parent decides when its
writers close (through their pipes, or by end-of-file when it dies).

A writer whose work is not known yet can be started ahead of it
(:class:`Prestarted`): its interpreter starts and imports the writer's module
while the parent imports and builds the simulation, and the writer's class
hands it its arguments once it has them.  ``acres-sim record`` starts the
row and bag writers so, first thing: they are ready when the run is, where
the parent used to wait some 0.3 s for them.
"""

import contextlib
import gc
import importlib
import itertools
import multiprocessing
import signal
import sys
import types

__all__ = ['BAG_WRITER_MODULE', 'COLLECT_EVERY', 'IGNORED_SIGNALS', 'Prestarted',
           'ROW_WRITER_MODULE', 'START_TIMEOUT_S', 'WriterProcessError', 'close_at_exit',
           'end_child', 'exit_text', 'ignore_interrupts', 'prestart_writers', 'ready_reply',
           'spawned', 'starting_child', 'without_cyclic_collector']

#: The modules of the writers :func:`prestart_writers` starts ahead.
ROW_WRITER_MODULE = 'acres_sim.record.rows_process'
BAG_WRITER_MODULE = 'acres_sim.record.bag'


class WriterProcessError(RuntimeError):
    """A writer process failed or died; the text says how (with the child's
    traceback), ``reason`` in one line (for a user's message)."""

    @property
    def reason(self) -> str:
        lines = [line.strip() for line in str(self).splitlines() if line.strip()]
        return lines[-1] if lines else 'a writer process failed'


#: How long a parent waits for a new writer process to say it is ready (it
#: imports its libraries and opens its files: well under a second here).
START_TIMEOUT_S = 60.0

def ready_reply(process, outbox):
    """A new writer process's first reply, waited for up to START_TIMEOUT_S
    (None: no reply, or its pipe ended).  Anything but ``('ready',)`` is a
    failed start: a child still running then is killed, not waited on."""
    try:
        reply = outbox.recv() if outbox.poll(START_TIMEOUT_S) else None
    except (EOFError, OSError):
        reply = None
    if reply != ('ready',) and process.exitcode is None:
        process.kill()
    return reply


#: Signals a writer process ignores: it ends through its pipe only.
IGNORED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def starting_child():
    """Around ``Process.start()``: hide ``__main__``, block IGNORED_SIGNALS
    (the child inherits the mask, so a Ctrl-C during its start-up cannot kill
    it; in the parent it stays pending, not lost)."""
    main = sys.modules.get('__main__')
    sys.modules['__main__'] = types.ModuleType('__main__')
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, IGNORED_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if main is not None:
            sys.modules['__main__'] = main


def ignore_interrupts() -> None:
    """First thing in a writer process: ignore IGNORED_SIGNALS, then unblock
    them (they were blocked since its birth)."""
    for sig in IGNORED_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, IGNORED_SIGNALS)


#: A writer without the cyclic collector collects once every this many blocks.
COLLECT_EVERY = 64


def without_cyclic_collector():
    """In a writer process, after its imports: no automatic cyclic garbage
    collection.  A writer makes rows, messages and arrays a block at a time
    and drops them; reference counting frees them (they hold no cycles), and
    the collector only walked them again and again (0.3 s of the row
    writer's 2 s in a 600 s run, perf).  What the process holds since its
    start is frozen out of every collection.  Returns the function the
    writer calls after each block: it collects once every
    :data:`COLLECT_EVERY` blocks, so that a cycle, should one form, is freed
    within about a minute of simulated time."""
    gc.disable()
    gc.freeze()
    blocks = itertools.count(1)

    def after_block():
        if next(blocks) % COLLECT_EVERY == 0:
            gc.collect()

    return after_block


def exit_text(exitcode) -> str:
    """'was killed by SIGKILL', 'exited with code 1', ... for Process.exitcode."""
    if exitcode is not None and exitcode < 0:
        try:
            return f'was killed by {signal.Signals(-exitcode).name}'
        except ValueError:
            return f'was killed by signal {-exitcode}'
    return f'exited with code {exitcode}'


def end_child(process, inbox, outbox, timeout_s=30.0) -> None:
    """Close the pipe to a writer ``process`` (it ends on end-of-file), wait
    for it to end (a hung one is killed after ``timeout_s``), then close the
    pipe from it."""
    inbox.close()
    process.join(timeout_s)
    if process.exitcode is None:   # pragma: no cover - a hung child
        process.kill()
        process.join()
    outbox.close()


def close_at_exit(writer, name) -> None:
    """``writer.close()`` from an exit finaliser: a failure is one line on
    stderr (there is nothing left to raise it to)."""
    try:
        writer.close()
    except Exception as exc:  # noqa: BLE001 - nothing to raise to at exit
        print(f'acres_sim {name}: {exc}', file=sys.stderr)


def spawned(target, name, args=(), kwargs=None):
    """A writer process running ``target(*args, inbox, outbox, **kwargs)``,
    started now: (the process, the pipe to it, the pipe from it)."""
    ctx = multiprocessing.get_context('spawn')
    child_in, inbox = ctx.Pipe(duplex=False)
    outbox, child_out = ctx.Pipe(duplex=False)
    process = ctx.Process(target=target, name=name,
                          args=(*args, child_in, child_out), kwargs=kwargs or {})
    with starting_child():
        process.start()
    child_in.close()           # only the child holds these ends now: each side
    child_out.close()          # sees end-of-file when the other one is gone
    return process, inbox, outbox


class Prestarted:
    """A writer process started before its work is known: it imports
    ``module`` (a writer module, whose ``_child_main`` takes the pipes as
    ``inbox`` and ``outbox``) and waits.  The writer's class calls
    :meth:`take` with the rest of the arguments; the process then runs
    ``_child_main`` as if it had been started with them.  Not taken, it is
    ended by :meth:`discard` (or when the parent's pipe ends: the parent is
    gone)."""

    def __init__(self, module: str, name: str):
        self.module = module
        self.process, self._inbox, self._outbox = spawned(_prestarted_main, name, (module,))
        self.taken = False

    def take(self, module, *args, **kwargs):
        """Run the writer of ``module`` (the caller's: it must be the one this
        process imported) with ``args`` and ``kwargs``: its (process, pipe to
        it, pipe from it), from now on the caller's."""
        if module != self.module:
            raise ValueError(f'a writer of {module} cannot take the prestarted {self.module}')
        if self.taken:
            raise RuntimeError(f'the prestarted {self.module} writer is taken already')
        self.taken = True
        with contextlib.suppress(OSError):   # it died: the writer's start says how
            self._inbox.send((args, kwargs))
        return self.process, self._inbox, self._outbox

    def discard(self):
        """End the process if it was not taken (at once: it has nothing open)."""
        if not self.taken:
            self.taken = True
            self.process.kill()
            end_child(self.process, self._inbox, self._outbox)


def prestart_writers(bag: bool = True) -> dict:
    """The recorder's row writer and, with ``bag``, its bag writer, started
    ahead (:class:`Prestarted`), as :func:`acres_sim.record.runner.record`
    takes them: ``{'rows': ..., 'bag': ...}``.  The caller discards what the
    run did not take."""
    writers = {'rows': Prestarted(ROW_WRITER_MODULE, 'row writer')}
    if bag:
        writers['bag'] = Prestarted(BAG_WRITER_MODULE, 'bag writer')
    return writers


def _prestarted_main(module, inbox, outbox):
    """The prestarted process: import ``module``, then run its ``_child_main``
    with the arguments of the first frame (none: the parent is gone, or
    discarded it)."""
    ignore_interrupts()
    child_main = importlib.import_module(module)._child_main
    try:
        args, kwargs = inbox.recv()
    except (EOFError, OSError):
        return
    child_main(*args, inbox=inbox, outbox=outbox, **kwargs)
