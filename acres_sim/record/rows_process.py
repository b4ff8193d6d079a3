"""``ins.jsonl``, ``truth.jsonl``, ``imu.jsonl`` and the further sensors'
files written by a child process from the block arrays, so that building and
encoding their rows runs on the other core, beside the simulation.

The parent sends, per block of steps, each agent's INS epoch results and truth
records as numpy arrays (:meth:`RowProcess.send_block`); the child turns them
into rows exactly as the recorder did in process (:func:`acres_sim.core.ins_row.ins_row`,
:func:`truth_row`), writes the truth rows at once, and keeps the INS rows in a
delay line until their delivery step (:class:`acres_sim.core.schedule.DelayLine`),
writing them then with the scheduler's times.  The IMU's and the further
sensors' samples come already delivered (the parent's delay lines give their
bag messages their times), the further sensors' as their rounded values (the
model's ``columns``): the child writes their rows
(:func:`acres_sim.pipeline.rows.imu_row`, the model's ``rows_from_columns``)
with the scheduler's times.  On close (or end-of-file: the
parent died) the files are closed, whole lines only; the rows still waiting
are not written, as the spec's Drain never releases a row before its time.
When the parent died, the child also cuts a
partial last line off the parent's own jsonl files (``tidy``: a SIGKILL can
land inside a write of several pages, and nothing else survives to do it).
Start-up and signals as every writer process (:mod:`acres_sim.record.child`);
while its files are open it holds the folder's writers lock
(:func:`acres_sim.record.output.hold_writers_lock`); a failure of the child is
raised in the parent as :class:`RowProcessError` at the next block or at close.
"""

import multiprocessing.util
import sys
import traceback

from acres_sim.core.ins_row import ins_row
from acres_sim.core.schedule import DelayLine
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q, T_V, T_W
from acres_sim.pipeline.rows import imu_row, timed_row, with_event_names
from acres_sim.record.child import (WriterProcessError, close_at_exit, end_child, exit_text,
                                    ignore_interrupts, ready_reply, spawned,
                                    without_cyclic_collector)
from acres_sim.record.jsonl import JsonlWriter, cut_partial_line, interrupts_held
from acres_sim.record.output import hold_writers_lock

__all__ = ['RowProcess', 'RowProcessError', 'truth_row']


class RowProcessError(WriterProcessError):
    """The row writer process failed or died; ``reason`` in one line."""


def truth_row(k, truth, ins):
    """The truth.jsonl row of step k: the chassis truth (a list in the TRUTH_SIZE
    layout), and the INS point's truth when the INS sampled at this step (its
    row ``ins``, or None)."""
    row = {
        'time_s': k / PHYSICS_HZ,
        'chassis': {'position_enu_m': truth[T_P:T_P + 3],
                    'orientation_enu_xyzw': truth[T_Q:T_Q + 4],
                    'velocity_com_enu_mps': truth[T_V:T_V + 3],
                    'angular_velocity_enu_radps': truth[T_W:T_W + 3]},
    }
    if ins is not None:
        row['ins_point'] = ins['truth']
    return row


class _Agent:
    """The child's files and delay line of one agent."""

    def __init__(self, ins_path, truth_path, ins_spec, imu_path, step_files, delay_s):
        self.ins = JsonlWriter(ins_path) if ins_path else None
        self.truth = JsonlWriter(truth_path)
        self.imu = JsonlWriter(imu_path) if imu_path else None
        # the further sensors': name -> (file, the function making its rows of columns)
        self.steps = {name: (JsonlWriter(path), rows_of)
                      for name, (path, rows_of) in (step_files or {}).items()}
        self.spec = ins_spec            # (datum, position variance, pose variance)
        self.delay_s = delay_s
        self.line = DelayLine(delay_s, PHYSICS_HZ)   # the INS rows until their delivery

    def block(self, k_end, ins_k, ins, truth_k, truth, ins_events=None, truth_events=None,
              ins_truth=None, imu=None, steps=None):
        rows = {}
        if self.ins is not None:
            for i, (k, o) in enumerate(zip(ins_k.tolist(), ins.tolist())):
                rows[k] = ins_row(o, *self.spec)
                self.line.push(k, rows[k] if ins_events is None else
                               with_event_names(dict(rows[k]), ins_events[i]))
        points = rows         # the INS point's truth: of every epoch, dropped ones too
        if ins_truth is not None and self.ins is not None:
            points = dict(rows)
            for k, o in zip(ins_truth[0].tolist(), ins_truth[1].tolist()):
                if k not in points:
                    points[k] = ins_row(o, *self.spec)
        for i, (k, t) in enumerate(zip(truth_k.tolist(), truth.tolist())):
            row = truth_row(k, t, points.get(k))
            if truth_events is not None:
                with_event_names(row, truth_events[i])
            self.truth.write(row, check_finite=False)  # checked arrays
        for release in self.line.drain(k_end - 1):
            self.ins.write(timed_row(release.item, release.sample_step,
                                     release.delivery_step / PHYSICS_HZ, self.delay_s),
                           check_finite=False)
        if imu is not None:
            self._imu_rows(*imu)
        for name, (k_sample, k_delivery, columns) in (steps or {}).items():
            file, rows_of = self.steps[name]
            file.write_rows(self._timed(rows_of(columns), k_sample, k_delivery))
        for file in self._files():     # on disk a block at a time, as the bag
            file.flush()

    def _files(self):
        return [file for file in (self.ins, self.truth, self.imu) if file is not None] + [
            file for file, _rows_of in self.steps.values()]

    def _imu_rows(self, k_sample, k_delivery, values, names):
        """The rows of the IMU samples delivered in the block: sampled at
        ``k_sample``, delivered at ``k_delivery``, their rounded ``values``
        (n, 6), the names of the events active at each (None: none)."""
        names = names or [()] * len(k_sample)
        rows = [imu_row(v, active) for v, active in zip(values.tolist(), names)]
        self.imu.write_rows(self._timed(rows, k_sample, k_delivery),
                            check_finite=False)         # checked arrays

    def _timed(self, rows, k_sample, k_delivery):
        """Delivered ``rows`` with their times: sampled at steps ``k_sample``,
        delivered at ``k_delivery`` (arrays)."""
        return [timed_row(row, k, kd / PHYSICS_HZ, self.delay_s)
                for row, k, kd in zip(rows, k_sample.tolist(), k_delivery.tolist())]

    def close(self):
        """Close the files, each whatever happens to the other; the rows still
        in the delay line are dropped (spec, "Emit / Drain": their time has
        not come when the run ends)."""
        error = None
        for file in self._files():
            try:
                file.close()
            except BaseException as err:  # noqa: BLE001 - the others are closed first
                error = error or err
        if error is not None:
            raise error


def _child_main(agents, delay_s, inbox, outbox, tidy=(), lock=None):
    """The row writer.  ``agents``: (ins path or None, truth path, INS row spec,
    imu path or None, {further sensor: (path, its model's rows_from_columns)})
    per agent, ``delay_s`` the latency of each; ``tidy``: the parent's files
    to end on a whole line if it dies;
    ``lock``: the writers lock to hold.  Frames:
    ``('block', k_end, [(agent, ins_k, ins, truth_k, truth, ins_events, truth_events,
    ins_truth, imu, steps)])`` (the names of the events active at each row, or None; the
    epochs as computed, (steps, results), when a dropout left some out of
    ``ins``: the truth rows keep their INS point; the IMU samples delivered,
    (sample steps, delivery steps, values, event names or None), or None; the
    further sensors' delivered, {name: (sample steps, delivery steps, columns)}
    or None), ``('close',)``.
    Replies ``('ready',)``, then ``('closed',)`` or ``('error', text)``."""
    ignore_interrupts()
    after_block = without_cyclic_collector()
    writers = []
    try:
        if lock is not None:             # held while the files are open
            hold_writers_lock(lock)
        writers = [_Agent(*spec, delay) for spec, delay in zip(agents, delay_s)]
        outbox.send(('ready',))
        while True:
            try:
                frame = inbox.recv()
            except (EOFError, OSError):      # the parent died: finish the files
                frame = ('eof',)
            if frame[0] == 'block':
                _, k_end, items = frame
                for index, *arrays in items:
                    writers[index].block(k_end, *arrays)
                after_block()
                continue
            for writer in writers:
                writer.close()
            if frame[0] == 'close':
                outbox.send(('closed',))
            else:                            # the parent is gone: so are its writes
                for path in tidy:
                    cut_partial_line(path)
            return
    except BaseException:
        text = traceback.format_exc()
        for writer in writers:              # keep what was written whole
            try:
                writer.close()
            except Exception:
                pass
        try:
            outbox.send(('error', text))
        except OSError:
            pass
        sys.exit(1)


class RowProcess:
    """Parent side: start the row writer for ``agents`` (see :func:`_child_main`)
    with the sensors' latency ``delay_s`` (one for all, or a list of one per
    agent), send it blocks, close it.  ``close()`` is idempotent and also runs at exit.

    ``wait``: wait until the child has opened its files (a failure is raised
    here); False: only start it, so that the caller can start its other
    writers meanwhile, and call :meth:`wait_ready` (the first block or close
    waits too).  ``prestarted``: a :class:`acres_sim.record.child.Prestarted`
    of this module to run in, instead of a new process."""

    def __init__(self, agents, delay_s, tidy=(), lock=None, wait=True, prestarted=None):
        agents = list(agents)
        delays = ([float(d) for d in delay_s] if isinstance(delay_s, (list, tuple)) else
                  [float(delay_s)] * len(agents))
        args = (agents, delays)
        kwargs = {'tidy': [str(path) for path in tidy],
                  'lock': None if lock is None else str(lock)}
        if prestarted is not None:
            self._process, self._inbox, self._outbox = prestarted.take(__name__, *args, **kwargs)
        else:
            self._process, self._inbox, self._outbox = spawned(_child_main, 'row writer',
                                                               args, kwargs)
        self.closed = False
        self._ready = False              # the child said it has its files open
        self._error = None
        self._reported = False           # the error was raised to the caller
        self._finalizer = multiprocessing.util.Finalize(self, close_at_exit,
                                                        args=(self, 'RowProcess'),
                                                        exitpriority=10)
        if wait:
            self.wait_ready()

    def wait_ready(self):
        """Wait until the child has its files open; raise RowProcessError (the
        process ended) if it could not open them.  Once ready, returns at once."""
        if self._ready:
            return
        if self._error is not None:
            self._reported = True
            raise self._error
        ready = ready_reply(self._process, self._outbox)
        if ready != ('ready',):
            self._error = self._failure('while opening the files', ready)
            self.closed = self._reported = True
            self._finish()
            raise self._error
        self._ready = True

    def send_block(self, k_end, items):
        """Rows of one block: ``items`` (agent, ins_k, ins, truth_k, truth[,
        ins_events, truth_events, ins_truth, imu, steps]) with the arrays of
        :class:`acres_sim.core.block.Block` (and the names of the events active
        at each row, the epochs as computed when a dropout left some out, the
        IMU's and the further sensors' samples delivered in the block); INS
        rows delivered before step ``k_end`` are written now."""
        self.wait_ready()
        if self._error is not None:
            self._reported = True
            raise self._error
        if self._outbox.poll():             # only an error comes before close
            self._reported = True
            raise self._fail('while writing rows')
        try:
            with interrupts_held():
                self._inbox.send(('block', int(k_end), items))
        except OSError:
            self._reported = True
            raise self._fail('while receiving rows') from None

    def close(self):
        """Write what waits, close the files and the process; raise if it failed."""
        if self.closed:
            return
        self.wait_ready()                   # a failure to start: raised, and closed
        self.closed = True
        try:
            if self._error is None:
                try:
                    with interrupts_held():
                        self._inbox.send(('close',))
                except OSError:
                    pass
                reply = self._reply()
                if reply != ('closed',):
                    self._error = self._failure('while closing the files', reply)
        finally:
            self._finish()
        if self._error is not None and not self._reported:
            self._reported = True
            raise self._error

    # -- failures
    def _reply(self):
        try:
            return self._outbox.recv()
        except (EOFError, OSError):
            return None

    def _fail(self, when):
        reply = self._reply() if self._outbox.poll(5.0) else None
        self._error = self._failure(when, reply)
        return self._error

    def _failure(self, when, reply=None):
        self._process.join(5.0)
        head = f'the row writer process (pid {self._process.pid})'
        if reply is not None and reply[0] == 'error':
            return RowProcessError(f'{head} failed {when}:\n{reply[1]}')
        return RowProcessError(f'{head} {exit_text(self._process.exitcode)} {when}')

    def _finish(self):
        end_child(self._process, self._inbox, self._outbox)
