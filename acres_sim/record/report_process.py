"""``report.png`` drawn by a child process that imports matplotlib while the
run goes on.

Importing matplotlib and PIL takes the recorder about a second, and drawing
the report can start only once the run has ended, so in process both sit on
the command's critical path.  :class:`ReportProcess` starts a fresh
interpreter when the recording starts; it imports what drawing needs
(:func:`acres_sim.record.report.load_matplotlib`) on the other core while the
simulation runs, then waits.  At the end the recorder hands it the pages
(:meth:`ReportProcess.start_drawing`, then closes its other writers while it
draws; :meth:`ReportProcess.wait_drawn`), which it draws with
:func:`acres_sim.record.report.write_pages` -- the same figure, pixel for
pixel -- and writes atomically; the recorder writes ``episode.json`` once it
has the answer.

Start-up and signals as every writer process (:mod:`acres_sim.record.child`):
spawned, SIGINT and SIGTERM ignored, it ends through its pipe.  It holds the
folder's writers lock while it draws (:func:`acres_sim.record.output.hold_writers_lock`),
and it renames the picture into place only while the recorder is still
there to say so in ``episode.json``: when the recorder died meanwhile (its
pipe ended) the part file goes and ``report.png`` is left as it was.  Once
it has said the picture is drawn it ends at once (``os._exit``: nothing is
left to tidy, and the interpreter's teardown of matplotlib and the figure
took longer than writing the PNG).  An error
of the drawing comes back as the exception itself when it can be pickled (an
OSError keeps its file name and reason), else as a :class:`ReportProcessError`
with the child's traceback; a child that dies is a ReportProcessError too.
"""

import gc
import multiprocessing.util
import os
from pathlib import Path
import pickle
import sys
import traceback

from acres_sim.files import write_atomically
from acres_sim.record.child import (WriterProcessError, close_at_exit, end_child, exit_text,
                                    ignore_interrupts, spawned)
from acres_sim.record.output import hold_writers_lock

__all__ = ['ReportProcess', 'ReportProcessError']


class ReportProcessError(WriterProcessError):
    """The report process failed or died; ``reason`` in one line."""


class _RecorderGone(Exception):
    """The recorder's pipe ended while the report was drawn."""


def _child_main(inbox, outbox) -> None:
    """The report writer.  One frame, ``('draw', path, pages, scene, title,
    lock)``, answered ``('drawn',)`` or ``('error', exception)``; end-of-file
    before it: nothing is drawn."""
    ignore_interrupts()
    # One drawing, then the process ends: the cyclic collector would only rescan
    # the pages again and again (unpickling them took 6 times as long with it)
    gc.disable()
    try:
        from acres_sim.record.report import load_matplotlib, write_pages
        load_matplotlib()
        failure = None
    except Exception as err:  # noqa: BLE001 - said when the pages come
        failure = err
    try:
        frame = inbox.recv()
    except (EOFError, OSError):      # the recorder is gone, or drew no report
        return
    except Exception as err:  # noqa: BLE001 - pages that do not unpickle: said
        failure = failure or err
    try:
        if failure is not None:
            raise failure
        _, path, pages, scene, title, lock = frame
        if lock is not None:
            hold_writers_lock(lock)

        def draw(part):
            write_pages(part, pages, scene, title=title)
            if inbox.poll():       # the recorder is gone: no report.png
                raise _RecorderGone()

        write_atomically(Path(path), None, write=draw)
    except _RecorderGone:
        return
    except BaseException as err:
        _send_error(outbox, err)
        sys.exit(1)
    try:
        outbox.send(('drawn',))
    except OSError:
        pass
    _leave()


def _leave():
    """End the process once report.png is in place and said: at once, without
    the interpreter's teardown of matplotlib, the pages and the figure (0.4 s
    after a 600 s run, which the recorder waited for in :meth:`ReportProcess.close`);
    the kernel closes its files and releases its lock."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _send_error(outbox, err):
    """The exception itself if it pickles, else the traceback as text."""
    try:
        pickle.dumps(err)
        reply = ('error', err)
    except Exception:  # noqa: BLE001 - any exception that does not pickle
        reply = ('error', ''.join(traceback.format_exception(err)))
    try:
        outbox.send(reply)
    except OSError:
        pass


class ReportProcess:
    """Parent side: start the report writer now (it imports while the run is
    set up and goes on), :meth:`draw` once at the end (or :meth:`start_drawing`,
    then :meth:`wait_drawn`), :meth:`close` (idempotent, also at exit) or
    :meth:`discard` when nothing is to be drawn."""

    def __init__(self):
        self._process, self._inbox, self._outbox = spawned(_child_main, 'report writer')
        self.closed = False
        self._path = None
        self._sent = None        # True once the pages went, or the error of sending them
        self._finalizer = multiprocessing.util.Finalize(self, close_at_exit,
                                                        args=(self, 'ReportProcess'),
                                                        exitpriority=10)

    @property
    def pid(self):
        return self._process.pid

    def draw(self, path, pages, scene, title, lock=None) -> None:
        """Draw ``pages`` (:class:`acres_sim.record.report.ReportPage`) under
        ``title`` into ``path``, whole or not at all, and return when it is
        there; raise what the drawing raised, or ReportProcessError."""
        self.start_drawing(path, pages, scene, title, lock)
        self.wait_drawn()

    def start_drawing(self, path, pages, scene, title, lock=None) -> None:
        """:meth:`draw` without waiting: hand over the pages, and return while
        the picture is drawn (:meth:`wait_drawn` waits for it and raises what
        the drawing raised)."""
        if self.closed:
            raise ReportProcessError('the report process is closed')
        self._path = path
        try:
            self._inbox.send(('draw', str(path), pages, scene, title,
                              None if lock is None else str(lock)))
        except OSError:
            self._sent = self._failure('before the pages came')
            return
        self._sent = True

    def wait_drawn(self) -> None:
        """Wait until the picture :meth:`start_drawing` began is in place;
        raise what the drawing raised, or ReportProcessError."""
        path, sent = self._path, self._sent
        if sent is None:
            raise ReportProcessError('the report process was not asked to draw')
        if sent is not True:
            self.close()
            raise sent
        reply = self._reply()
        self.close()
        if reply == ('drawn',):
            return
        if reply is not None and reply[0] == 'error':
            error = reply[1]
            if isinstance(error, BaseException):
                raise error
            raise ReportProcessError(f'the report process (pid {self.pid}) failed while '
                                     f'drawing {path}:\n{error}')
        raise self._failure(f'while drawing {path}')

    def close(self) -> None:
        """End the process (it draws nothing more)."""
        if self.closed:
            return
        self.closed = True
        end_child(self._process, self._inbox, self._outbox)

    def discard(self) -> None:
        """End a process that was never asked to draw at once, without waiting
        for its imports (a recording that failed to start): it holds no file
        and no lock until then."""
        if not self.closed:
            self._process.kill()
            self.close()

    def _reply(self):
        """The child's answer, or None when it died without one (its end of
        the pipe closes with it: end-of-file)."""
        try:
            return self._outbox.recv()
        except (EOFError, OSError):
            return None

    def _failure(self, when):
        self._process.join(5.0)
        return ReportProcessError(f'the report process (pid {self.pid}) '
                                  f'{exit_text(self._process.exitcode)} {when}')
