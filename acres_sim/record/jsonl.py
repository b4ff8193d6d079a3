"""JSON Lines writer for the recorder's rows (``gnss.jsonl``, ``imu.jsonl``,
``ins.jsonl``): one JSON object per line, and never a partial line.

* Each row is serialised to a complete line first, with ``orjson`` (about ten
  times faster than ``json``; the recorder writes some 300 rows per simulated
  second).  A NaN or an infinity is an error -- rows say ``null``.  Floats are
  written as the shortest text that reads back to the same double (``orjson``'s
  form: ``1e-05`` prints as ``0.00001``); numpy scalars and arrays are accepted
  and converted; the text is ASCII (a row with other characters goes through
  ``json`` with its escapes, as every row does where orjson is not installed).
* Complete lines are kept in memory and written to the file with one
  unbuffered write every ``flush_every`` lines, on :meth:`JsonlWriter.flush`
  and on :meth:`JsonlWriter.close`.  The file therefore only ever grows by
  whole lines; a kill at any moment leaves at most the unflushed lines out.
* A write that fails part way (a full disk, the file size limit) is cut back
  to the last whole line before the error is raised; the writer then refuses
  more rows, so the file never has a gap either.  (A process killed inside a
  large write may still leave part of a line: :func:`cut_partial_line` cuts
  it off afterwards.)
* A Ctrl-C (SIGINT) or a SIGTERM turned into an exception that arrives while a
  write to the file is in progress is held back until the write is complete
  (:func:`interrupts_held`), then raised as usual.

The same hold is used by :mod:`acres_sim.record.bag` around each message it
writes (foreground) or each batch it sends to its writer process (background).
"""

import json
import math
import os
from pathlib import Path
import signal
import threading
import warnings

import numpy as np

try:                       # the fast encoder (requirements/python.txt); json without it
    import orjson
except ImportError:        # pragma: no cover - a distro without python3-orjson
    orjson = None

__all__ = ['JsonlWriter', 'cut_partial_line', 'dumps_line', 'dumps_row', 'interrupts_held']


# ----------------------------------------------------------------------------
# Holding back SIGINT / SIGTERM while a file is in an intermediate state

_HELD_SIGNALS = tuple(getattr(signal, name) for name in ('SIGINT', 'SIGTERM')
                      if hasattr(signal, name))


class _HoldState:
    depth = 0             # nesting depth of interrupts_held() on the main thread
    pending = []          # signal numbers that arrived while held
    previous = {}         # signal number -> the handler replaced by the outermost hold


def _held_handler(signum, frame):
    _HoldState.pending.append(signum)


class interrupts_held:
    """Context manager: on the main thread, a SIGINT or SIGTERM whose handler
    is a Python function (KeyboardInterrupt for SIGINT by default, or whatever
    the application installed) runs only when the outermost block ends, so
    the block is never left half done.  The outermost block puts the handlers
    back as it found them, then runs the first signal held, if any.  Signals
    with the default OS action (SIGTERM unless a handler was installed) are not
    touched.  On other threads this does nothing (signals are only handled on
    the main thread).
    """

    __slots__ = ('_active',)

    def __enter__(self):
        self._active = threading.current_thread() is threading.main_thread()
        if self._active:
            if _HoldState.depth == 0:
                for sig in _HELD_SIGNALS:
                    handler = signal.getsignal(sig)
                    if callable(handler):
                        _HoldState.previous[sig] = handler
                        signal.signal(sig, _held_handler)
            _HoldState.depth += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._active:
            _HoldState.depth -= 1
            if _HoldState.depth == 0:
                restored = dict(_HoldState.previous)
                _HoldState.previous.clear()
                for sig, handler in restored.items():
                    signal.signal(sig, handler)
                if _HoldState.pending:
                    signum = _HoldState.pending[0]
                    _HoldState.pending.clear()
                    restored[signum](signum, None)
        return False


# ----------------------------------------------------------------------------
# Rows to lines

def _json_default(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    raise TypeError(f'{type(obj).__name__} is not JSON serialisable')


def _has_non_finite(value) -> bool:
    if isinstance(value, (float, np.floating)):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_non_finite(v) for v in value)
    if isinstance(value, np.ndarray) and value.dtype.kind in 'fc':
        return not bool(np.all(np.isfinite(value)))
    return False


def dumps_line(row, check_finite: bool = True) -> bytes:
    """One row as one line of JSON (bytes, without the newline).  Compact
    separators, keys in the row's order, ASCII only; NaN and infinities raise
    ValueError (``check_finite=False``: the caller has checked the numbers,
    e.g. a block of them at once, and the line is not searched for them)."""
    if orjson is not None:
        line = orjson.dumps(row, default=_json_default, option=orjson.OPT_SERIALIZE_NUMPY)
        # orjson writes a non-finite float as null: look closer only then
        if check_finite and b'null' in line and _has_non_finite(row):
            raise ValueError(f'a row holds NaN or an infinity (write null): {row!r:.200}')
    if orjson is None or not line.isascii():
        line = json.dumps(row, allow_nan=False, separators=(',', ':'),
                          default=_json_default).encode('ascii')
    return line


def _dumps_lines(rows, check_finite: bool) -> bytes:
    """The rows' lines, each :func:`dumps_line`'s with its newline, joined.
    orjson makes them all; the per-row search only runs where the joined
    lines hold a null (a NaN?) or a non-ASCII byte."""
    if orjson is None:
        return b''.join([dumps_line(row, check_finite) + b'\n' for row in rows])
    dumps, option = orjson.dumps, orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE
    data = b''.join([dumps(row, default=_json_default, option=option) for row in rows])
    if (check_finite and b'null' in data) or not data.isascii():
        return b''.join([dumps_line(row, check_finite) + b'\n' for row in rows])
    return data


def dumps_row(row) -> str:
    """:func:`dumps_line` as text."""
    return dumps_line(row).decode('ascii')


# ----------------------------------------------------------------------------
# The writer

class JsonlWriter:
    """Append rows to a JSON Lines file, one whole line per row.

    ``mode`` ``'w'`` (default) starts a new file (truncating an old one),
    ``'a'`` appends to an existing file (a trailing partial line left by a
    crash of some other writer is cut off with a warning, so the file stays
    line-whole), ``'x'`` refuses to overwrite.  ``flush_every`` lines are
    collected before one write to the file; ``flush_every=1`` writes each line
    at once.  Use as a context manager or call :meth:`close` (twice is fine).
    """

    def __init__(self, path, *, mode: str = 'w', flush_every: int = 100):
        if mode not in ('w', 'a', 'x'):
            raise ValueError(f"mode must be 'w', 'a' or 'x', not {mode!r}")
        if int(flush_every) < 1:
            raise ValueError(f'flush_every must be at least 1, not {flush_every!r}')
        self.path = Path(path)
        self.flush_every = int(flush_every)
        self.lines_written = 0          # rows accepted by write() since opening
        self._pending = []              # whole lines (bytes, newline included) not yet in the file
        self._failure = None            # the OSError of a failed write: no more rows
        if mode == 'a' and self.path.exists():
            _cut_partial_tail(self.path)
        # Unbuffered: every flush is a direct os-level write of whole lines.
        self._file = open(self.path, mode + 'b', buffering=0)
        self._size = self._file.seek(0, 2)   # bytes of whole lines in the file

    # -- context manager
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    @property
    def closed(self) -> bool:
        return self._file is None

    @property
    def failure(self):
        """The OSError of a write that failed (the file then ends before it), or None."""
        return self._failure

    def write(self, row, check_finite: bool = True) -> None:
        """Add one row (a dict, or anything JSON can hold).  The line is built
        completely before anything is queued; a row that cannot be written
        (NaN, an unknown type) raises and leaves the file as it was.
        ``check_finite``: see :func:`dumps_line`."""
        self.write_rows([row], check_finite)

    def write_rows(self, rows, check_finite: bool = True) -> None:
        """Add rows, each as :meth:`write` adds it: every line is built
        before any is queued, so a row that cannot be written leaves the file
        as it was."""
        if self._file is None:
            raise ValueError(f'{self.path}: write to a closed JsonlWriter')
        if self._failure is not None:
            raise self._failure
        if not rows:
            return
        lines = _dumps_lines(rows, check_finite)
        self._pending.append(lines)    # one atomic list append
        self.lines_written += len(rows)
        if len(self._pending) >= self.flush_every or len(rows) >= self.flush_every:
            self.flush()

    def flush(self) -> None:
        """Write the queued lines to the file (one write of whole lines)."""
        if self._file is None or not self._pending:
            return
        if self._failure is not None:
            raise self._failure
        with interrupts_held():
            data = memoryview(b''.join(self._pending))
            self._pending.clear()
            size = len(data)
            try:
                while data:
                    n = self._file.write(data)
                    data = data[n:]
            except OSError as err:
                self._failure = err
                try:                     # shrinking needs no space
                    os.ftruncate(self._file.fileno(), self._size)
                except OSError:
                    pass
                raise
            self._size += size

    def close(self) -> None:
        """Flush and close; closing twice does nothing."""
        if self._file is None:
            return
        with interrupts_held():
            try:
                if self._failure is None:
                    self.flush()
            finally:
                self._file.close()
                self._file = None


def cut_partial_line(path) -> int:
    """If the file ``path`` (when it exists) does not end with a newline,
    drop the bytes after its last newline (a line that was never completed);
    returns how many bytes went."""
    path = Path(path)
    return _cut_partial_tail(path, warn=False) if path.is_file() else 0


def _cut_partial_tail(path: Path, warn: bool = True) -> int:
    """Before appending: if the file does not end with a newline, drop the
    bytes after its last newline (a line that was never completed)."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, 'r+b') as f:
        f.seek(size - 1)
        if f.read(1) == b'\n':
            return 0
        block = 65536
        pos = size
        cut = 0
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b'\n')
            if i >= 0:
                cut = start + i + 1
                break
            pos = start
        if warn:
            warnings.warn(f'{path}: dropped an incomplete last line ({size - cut} bytes) '
                          'before appending',
                          RuntimeWarning, stacklevel=3)
        f.truncate(cut)
    return size - cut
