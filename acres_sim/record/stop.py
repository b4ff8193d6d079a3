"""A recorder's stop request: SIGINT and SIGTERM set a flag that the recorder
looks at between its steps (before it touches the output folder, after its
set-up, between blocks), so a signal at any moment -- also in the first
second, while the simulator is still being imported and compiled -- ends the
run at a point where every file is whole.

This module imports nothing heavy on purpose: ``acres-sim record`` installs
the handlers first, before it imports the simulator.
"""

import signal
import threading

__all__ = ['StopRequest']

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest:
    """Install with :meth:`install` (main thread only; elsewhere it does
    nothing and the flag stays down), undo with :meth:`restore`."""

    def __init__(self):
        self.signal = None          # 'SIGINT' or 'SIGTERM' once one arrived
        self._previous = {}

    @property
    def requested(self) -> bool:
        return self.signal is not None

    @property
    def exit_status(self) -> int:
        """130 for SIGINT, 143 for SIGTERM (the shell's convention)."""
        return 128 + signal.Signals[self.signal or 'SIGINT']

    def _handler(self, signum, frame):
        if self.signal is None:
            self.signal = signal.Signals(signum).name

    def install(self) -> 'StopRequest':
        if threading.current_thread() is threading.main_thread() and not self._previous:
            self._previous = {sig: signal.signal(sig, self._handler) for sig in _SIGNALS}
        return self

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
