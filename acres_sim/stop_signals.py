"""SIGINT and SIGTERM as a stop request that a loop can poll and wait on,
with a handler that takes no lock.

A Python signal handler runs in the main thread between two bytecodes of
whatever it interrupted.  If that code holds a lock the handler needs, the
process deadlocks, and no later SIGTERM can end it: ``threading.Event.set()``
in a handler does exactly that when the signal lands while the main loop is
inside ``Event.wait()``, which holds the event's lock for a moment on every
call (a node outlived its killed ``acres-sim up`` by half an hour).

So the handler here only stores the signal number and counts (and, for a
process that asked to end within a limit, arms faulthandler's timer once).
A loop that sleeps waits in :meth:`StopSignals.wait`, a ``select`` on a
self-pipe into which the interpreter's own C-level handler writes a byte for
every signal (``signal.set_wakeup_fd``), so a signal wakes it at once.

The nodes, ``acres-sim up`` and ``acres-sim record`` all stop this way.  The
module imports nothing heavy, so a command can install it first thing, before
it imports the simulator: a signal in its first seconds is then a stop request
like any other.
"""

import faulthandler
import os
import select
import signal
import threading
import time

__all__ = ['STARTING', 'StopSignals']

GIL_GRACE_S = 2.0    # end_within: faulthandler's ending, after the thread's


class StopSignals:
    """While entered (on the main thread): SIGINT and SIGTERM are a stop request.

    ``signal`` is the first signal received (None before), ``count`` how many
    arrived; :meth:`is_set` says whether to stop, :meth:`wait` sleeps until a
    signal or the timeout.  Off the main
    thread no handler is installed (Python allows none there) and :meth:`wait` sleeps.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.signal = None
        self.count = 0
        self._previous = {}
        self._previous_fd = None
        self._read = self._write = None
        self._limit_s = None

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._previous_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        for sig in self.SIGNALS:
            self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def _on_signal(self, signum, _frame):
        # nothing else here: no lock, no logging, no I/O (see the module docstring);
        # but faulthandler's timer (end_within), whose locks only its own functions
        # take, and this process calls them nowhere else
        if self.signal is None:
            self.signal = signum
            if self._limit_s is not None:
                faulthandler.dump_traceback_later(self._limit_s + GIL_GRACE_S, exit=True)
        self.count += 1

    def is_set(self):
        return self.signal is not None

    @property
    def active(self):
        """Whether its handlers are installed (entered, on the main thread)."""
        return self._read is not None

    @property
    def name(self):
        """'SIGINT' or 'SIGTERM' once one arrived, else None."""
        return None if self.signal is None else signal.Signals(self.signal).name

    @property
    def exit_status(self):
        """The shell's status for the signal: 130 after SIGINT, 143 after SIGTERM."""
        return 128 + (self.signal or signal.SIGINT)

    def wait(self, timeout):
        """Sleep until the next signal or ``timeout`` s; whether to stop."""
        if self._read is None:
            time.sleep(timeout)
            return self.is_set()
        if select.select([self._read], [], [], max(0.0, timeout))[0]:
            try:
                while os.read(self._read, 512):
                    pass
            except BlockingIOError:
                pass
        return self.is_set()

    def end_within(self, limit_s, name):
        """From the first stop request on, this process has ``limit_s`` s to
        end; past it, one line naming ``name`` and the stack of every thread go
        to stderr (where it hung) and it exits with status 1.  A daemon thread
        says so; where it cannot run (a hang in a C call that holds the GIL),
        faulthandler's own thread, armed by the signal handler and needing no
        GIL, writes the stacks and ends the process GIL_GRACE_S later."""
        self._limit_s = limit_s

        def watch():
            while not self.is_set():
                time.sleep(0.2)
            time.sleep(limit_s)
            # on the descriptor: sys.stderr's lock may be what the main thread holds
            os.write(2, f'{name}: still running {limit_s:g} s after {self.name}; '
                        f'ending it (status 1). Its threads:\n'.encode())
            faulthandler.dump_traceback(2, all_threads=True)
            os._exit(1)

        threading.Thread(target=watch, name='end_within', daemon=True).start()

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        if self._read is not None:
            signal.set_wakeup_fd(self._previous_fd)
            os.close(self._read)
            os.close(self._write)
            self._read = self._write = None


#: A node's stop request from its first moment: :mod:`acres_sim.ros` enters it
#: when the process starts as one of the nodes, so that a Ctrl-C or SIGTERM
#: while the node still imports rclpy and numba is a stop like any other (not a
#: KeyboardInterrupt traceback); the node then goes on with it.
STARTING = StopSignals()
