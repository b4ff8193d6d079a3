"""rosbag2 writer for the recorder: MCAP storage, metadata version 8 (Humble
reads up to 8, Jazzy reads 8 and 9), CDR messages from a ``rosbags`` typestore,
and the QoS each topic is offered with, so ``ros2 bag play`` re-offers it
(``/tf_static`` transient-local: it latches on replay).

QoS in rosbags 0.11.9: ``Writer.add_connection`` takes
``offered_qos_profiles`` as a sequence of ``rosbags.interfaces.Qos`` and
writes it, for version 8, as the YAML *string* rosbag2 expects (enum values as
integers: history KEEP_LAST = 1, reliability RELIABLE = 1, durability
TRANSIENT_LOCAL = 1 / VOLATILE = 2, liveliness AUTOMATIC = 1; durations as
``{sec, nsec}``) both into ``metadata.yaml`` (``topic_metadata.offered_qos_profiles``)
and into the MCAP channel's metadata (key ``offered_qos_profiles``).  Without
the argument both are the empty string -- which is why :meth:`BagWriter.add_topic`
always passes a profile.

The bag stays readable whatever ends the run: :meth:`BagWriter.close` runs
on leaving the ``with`` block -- with or without an exception
(KeyboardInterrupt and SystemExit included) -- and at interpreter exit if it
was never called; a SIGINT (or a SIGTERM with a Python handler, see
:func:`exit_on_sigterm`) that arrives in the middle of a message write is held
until the write is complete.  (rosbags' own ``Writer`` *aborts* on an
exception, which leaves an MCAP without summary and no metadata.yaml.)

Background mode (``BagWriter(folder, background=True)``)
-------------------------------------------------------
The writer is rosbags' ``Writer`` with an MCAP storage that also takes a
block of messages at once (:class:`acres_sim.record.mcap_blocks.BlockWriter`,
the same bytes as rosbags' own per-message path, without its 5-9 us per
message).  With ``background=True`` it lives in a child process, on the
other core; the caller's thread only appends ``(connection id, t_ns, bytes)``
to a list (about 0.4 us, 1.3-2 us per message with the batch sends, see
bench/bench_bag_writer.py), or hands over a block (:meth:`BagWriter.write_block`):

* **Messages** (:meth:`BagWriter.write_raw` and friends) go into a batch; every
  ``batch_size`` messages (:data:`BATCH_SIZE`; and on :meth:`BagWriter.flush`
  and close) the batch is sent down a pipe as two frames: a small pickled
  header -- connection ids, stamps and lengths as ``array`` or numpy
  buffers -- then all the messages joined into one ``bytes``, written to the
  pipe as it is: no per-message objects to pickle, no pickling copy.  The
  child writes the batch, in order, with one ``BlockWriter.write_block``.
* **Topics and custom data** are sent as they are registered, on the same
  pipe, so the child sees every frame in the parent's order.  The parent
  computes the message definition and RIHS01 hash of each type itself, so the
  child needs only ``rosbags.rosbag2`` -- no typestore.
* **Start method: spawn.**  ``fork`` would copy a parent that has numba and
  numpy loaded (JIT state, thread pools whose locks another thread may hold at
  fork time: a child that can deadlock) and the whole simulation's memory.
  ``spawn`` starts a fresh interpreter that imports only this module (rosbags,
  about 0.2 s, once per bag).  The parent's ``__main__`` is hidden while the
  child starts and SIGINT/SIGTERM are blocked so that it is born with them
  blocked, then ignores them (:mod:`acres_sim.record.child`, shared with the
  recorder's row writer; the pattern of multiprocessing's resource tracker).
* **Signals.**  A Ctrl-C reaches the whole process group; the child ignores
  SIGINT and SIGTERM and ends only through its pipe: on the parent's close
  message, or on end-of-file when the parent dies without closing (SIGKILL,
  ``os._exit``) -- either way it closes the bag properly (MCAP summary,
  metadata.yaml).  Only messages still in the parent's unsent batch are lost
  then; :meth:`BagWriter.flush` bounds that.  The parent's pipe send always
  holds SIGINT/SIGTERM, so a frame is never half written.
* **The pipe** is widened to 1 MiB on Linux (``F_SETPIPE_SZ``) so that a
  batch is one copy into the kernel and the parent does not wait for the child
  to finish writing the previous batch; if the child falls behind for longer
  the parent waits (back-pressure, no unbounded memory).
* **Errors.**  A failure in the child (its traceback) or its death (exit code /
  signal) is raised in the parent as :class:`BagWriterError` at the next batch
  send, ``add_topic``, ``flush`` or ``close`` -- never dropped.  ``close``
  flushes, asks the child to close the bag, waits for its acknowledgement (and
  checks the child wrote as many messages as were given), and joins it: no
  zombie.  A closer registered with ``multiprocessing.util.Finalize`` closes
  it at interpreter exit (it runs before multiprocessing joins its children)
  or on garbage collection, like the foreground finaliser.
"""

from array import array
import contextlib
from itertools import accumulate, repeat
import multiprocessing.util
from pathlib import Path
import signal
import sys
import threading
import traceback
import weakref

import numpy as np
from rosbags.interfaces import (
    Connection, ConnectionExtRosbag2, MessageDefinition, MessageDefinitionFormat,
    Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime)
from rosbags.rosbag2 import Writer, WriterError
from rosbags.typesys import Stores, get_typestore

from .child import (WriterProcessError, exit_text, ignore_interrupts, ready_reply, spawned,
                    without_cyclic_collector)
from .jsonl import interrupts_held
from .mcap_blocks import BlockWriter
from .output import hold_writers_lock

try:
    from fcntl import F_SETPIPE_SZ, fcntl
except ImportError:  # pragma: no cover - not Linux
    F_SETPIPE_SZ = fcntl = None

__all__ = ['BAG_VERSION', 'BATCH_SIZE', 'BagWriter', 'BagWriterError', 'QOS_RELIABLE',
           'QOS_STATIC', 'exit_on_sigterm', 'qos_profile']

#: rosbag2 metadata version written (Humble <= 8, Jazzy 8 and 9).
BAG_VERSION = 8

#: Background mode: messages per batch sent to the writer process.  Measured
#: with bench/bench_bag_writer.py (paced writes, 10 topics, 12-724 B): the
#: parent's cost per message is flat, within this machine's noise, from 100 to
#: 3000 (1.3-2 us, against ~6 us in the foreground).  500 within that range: a
#: batch's fixed cost (a poll, two pipe writes, waking the child; ~0.1 ms)
#: stays near 0.2 us per message, a batch of small messages (~0.17 MB) is a
#: sixth of the pipe, and a SIGKILL of the parent loses at most ~0.6 s of the
#: recorder's ~870 messages per simulated second.
BATCH_SIZE = 500

#: Kernel buffer asked for the pipe to the writer process (Linux's default
#: /proc/sys/fs/pipe-max-size for unprivileged processes).
_PIPE_BYTES = 1 << 20

_MAX_STAMP = 1 << 64

#: RMW_DURATION_INFINITE {sec, nsec}: what rosbag2 records for the default
#: (infinite) deadline, lifespan and lease duration of a publisher.
_INFINITE = QosTime(9223372036, 854775807)


class BagWriterError(WriterProcessError):
    """The background writer process failed or died; the text says how (with
    the child's traceback), ``reason`` in one line."""


def qos_profile(*, depth: int = 10, durability: str = 'volatile',
                reliability: str = 'reliable') -> Qos:
    """A keep-last publisher profile as rosbag2 records it."""
    return Qos(
        history=QosHistory.KEEP_LAST, depth=int(depth),
        reliability=QosReliability[reliability.upper()],
        durability=QosDurability[durability.upper()],
        deadline=_INFINITE, lifespan=_INFINITE,
        liveliness=QosLiveliness.AUTOMATIC, liveliness_lease_duration=_INFINITE,
        avoid_ros_namespace_conventions=False)


#: Every publisher of the package: reliable, volatile, depth 10 (REP-2003).
QOS_RELIABLE = qos_profile(depth=10, durability='volatile')
#: /tf_static as tf2_ros's StaticTransformBroadcaster offers it: reliable,
#: transient-local, depth 1.
QOS_STATIC = qos_profile(depth=1, durability='transient_local')

_QOS_BY_NAME = {'reliable': QOS_RELIABLE, 'static': QOS_STATIC}


def _normalise_msgtype(msgtype: str) -> str:
    parts = msgtype.split('/')
    if len(parts) == 2:            # 'sensor_msgs/NavSatFix'
        return f'{parts[0]}/msg/{parts[1]}'
    return msgtype


def _stamp(t_ns) -> int:
    t = int(t_ns)
    if not 0 <= t < _MAX_STAMP:
        raise ValueError(f'bag time {t_ns!r} ns is not an unsigned 64-bit integer')
    return t


def _close_quietly(writer: Writer) -> None:
    """Finaliser / atexit: close a writer that is still open."""
    if writer.storage is not None:
        try:
            writer.close()
        except Exception:  # pragma: no cover - nothing left to do at exit
            pass


def exit_on_sigterm() -> bool:
    """Make SIGTERM raise ``SystemExit(143)`` (when it still has the default
    action and this is the main thread), so that ``with BagWriter(...)`` and
    ``with JsonlWriter(...)`` close their files on ``kill``.  Returns True if
    the handler was installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return False

    def _raise_exit(signum, frame):
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, _raise_exit)
    return True


# ----------------------------------------------------------------------------
# Background mode: the writer process and the parent's handle on it

def _child_main(path: str, version: int, inbox, outbox, lock=None) -> None:
    """The writer process.  Frames from ``inbox``, in order:
    ``('topic', id, name, msgtype, msgdef, rihs01, profiles)``,
    ``('custom', key, value)``, ``('close',)``, and
    ``('batch', ids, stamps, offsets, lengths)`` followed by a raw frame of
    the messages' bytes joined (message i at ``offsets[i]``, written in the
    order of the lists).  Replies on ``outbox``: ``('ready',)`` once the
    bag is open, then ``('closed', message_count)`` or ``('error', traceback)``.
    ``lock``: a file to hold shared while the bag is open (see
    :func:`acres_sim.record.output.hold_writers_lock`)."""
    ignore_interrupts()
    after_block = without_cyclic_collector()
    writer = None
    try:
        if lock is not None:
            hold_writers_lock(lock)
        writer = BlockWriter(Path(path), version=version)
        writer.open()
        outbox.send(('ready',))
        while True:
            try:
                frame = inbox.recv()
                if frame[0] == 'batch':
                    payload = inbox.recv_bytes()
            except (EOFError, OSError):   # the parent died without close(): finish the bag
                writer.close()
                return
            kind = frame[0]
            if kind == 'batch':
                _, ids, stamps, offsets, lengths = frame
                writer.write_block(ids, stamps, offsets, lengths, payload)
                after_block()
            elif kind == 'topic':
                _, cid, name, msgtype, msgdef, rihs01, profiles = frame
                conn = writer.add_connection(name, msgtype, msgdef=msgdef, rihs01=rihs01,
                                             offered_qos_profiles=profiles)
                if conn.id != cid:
                    raise RuntimeError(f'connection id {conn.id} for {name}, parent expects {cid}')
            elif kind == 'custom':
                writer.set_custom_data(frame[1], frame[2])
            elif kind == 'close':
                writer.close()
                outbox.send(('closed', sum(writer.counts.values())))
                return
            else:
                raise RuntimeError(f'unknown frame {kind!r}')
    except BaseException:
        text = traceback.format_exc()
        if writer is not None and writer.storage is not None:
            try:                            # keep what was written readable
                writer.close()
            except Exception:
                text += '\nand closing the bag failed too:\n' + traceback.format_exc()
        with contextlib.suppress(OSError):
            outbox.send(('error', text))
        sys.exit(1)


class _WriterProcess:
    """Parent side of the background writer: the process, its two pipes and
    the batch being filled.  Holds no reference to the :class:`BagWriter`
    (its finaliser holds this)."""

    def __init__(self, path: Path, version: int, batch_size: int, lock=None, wait=True,
                 prestarted=None):
        self.path = path
        self.batch_size = max(1, int(batch_size))
        self.pending = []          # (connection id, t_ns, bytes), not yet sent
        self.sent = 0              # messages sent to the child
        self.closed = False
        self.error = None          # BagWriterError once the child failed
        self.reported = False      # ... and raised to the caller
        args, kwargs = (str(path), version), {'lock': None if lock is None else str(lock)}
        if prestarted is not None:
            self.process, self.inbox, self.outbox = prestarted.take(__name__, *args, **kwargs)
        else:
            self.process, self.inbox, self.outbox = spawned(
                _child_main, f'bag writer {path.name}', args, kwargs)
        if fcntl is not None:
            with contextlib.suppress(OSError):
                fcntl(self.inbox.fileno(), F_SETPIPE_SZ, _PIPE_BYTES)
        self.ready = False         # the child said it has the bag open
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Wait until the child has opened the bag; a failure is raised (and the
        child reaped).  Once ready, returns at once."""
        if self.ready:
            return
        if self.error is not None:
            self.reported = True
            raise self.error
        reply = ready_reply(self.process, self.outbox)
        if reply != ('ready',):
            self._reap()
            self.closed = self.reported = True
            self.error = BagWriterError(self._describe(reply, 'while opening the bag'))
            raise self.error
        self.ready = True

    @property
    def pid(self):
        return self.process.pid

    @property
    def message_count(self) -> int:
        return self.sent + len(self.pending)

    # -- sending
    def extend(self, cid: int, stamps: list, datas: list) -> None:
        self.pending.extend(zip(repeat(cid), stamps, datas))
        if len(self.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        self.check()
        if not self.pending:
            return
        ids, stamps, datas = zip(*self.pending)
        lengths = array('Q', map(len, datas))
        offsets = array('Q', accumulate(lengths[:-1], initial=0))
        head = ('batch', array('H', ids), array('Q', stamps), offsets, lengths)
        with interrupts_held():         # both frames and the bookkeeping, or nothing
            self._send_batch(head, b''.join(datas), len(self.pending))
            self.pending = []

    def send_block(self, ids, stamps, offsets, lengths, payload) -> None:
        """A batch in the given order (after whatever is pending)."""
        self.flush()
        with interrupts_held():
            self._send_batch(('batch', ids, stamps, offsets, lengths), payload, len(ids))

    def _send_batch(self, head, payload, count):
        """Both frames of a batch (the caller holds the interrupts)."""
        self._send(head)
        self._send(payload, raw=True)   # sent as it is: no pickling copy
        self.sent += count

    def send(self, frame: tuple) -> None:
        """A control frame (topic, custom data), in order with the batches."""
        self.check()
        with interrupts_held():
            self._send(frame)

    def _send(self, frame, raw=False):
        try:
            if raw:
                self.inbox.send_bytes(frame)
            else:
                self.inbox.send(frame)
        except OSError:                      # BrokenPipeError: the child is gone
            self._fail('while receiving messages')

    def check(self) -> None:
        """Raise if the child has failed: a reply waiting on its pipe before
        close() can only be an error, end-of-file is its death."""
        self.wait_ready()
        if self.error is not None:
            self.reported = True
            raise self.error
        if self.outbox.poll():
            self._fail('while writing messages')

    # -- failure and closing
    def _fail(self, when: str):
        try:
            reply = self.outbox.recv() if self.outbox.poll(5.0) else None
        except (EOFError, OSError):
            reply = None
        self._reap(timeout=5.0)
        self.error = BagWriterError(self._describe(reply, when))
        self.reported = True
        raise self.error

    def _describe(self, reply, when: str) -> str:
        head = f'{self.path}: the bag writer process (pid {self.process.pid})'
        if reply is not None and reply[0] == 'error':
            return f'{head} failed {when}:\n{reply[1]}'
        if self.process.exitcode is None:
            return f'{head} stopped answering {when} (reply {reply!r})'
        text = f'{head} {exit_text(self.process.exitcode)} {when}'
        if self.sent or self.pending:
            text += (f', so the bag may not be closed; {self.sent} messages were sent to it, '
                     f'{len(self.pending)} not')
        return text

    def _reap(self, timeout=None) -> None:
        """Close our pipe ends (end-of-file for a child still alive: it closes
        the bag and exits) and join the child."""
        self.inbox.close()
        self.process.join(timeout)
        if self.process.exitcode is None:    # pragma: no cover - a hung child
            self.process.kill()
            self.process.join()
        self.outbox.close()

    def close(self) -> None:
        """Flush, have the child close the bag, join it; raise a failure that
        was not raised yet.  Idempotent."""
        if self.closed:
            return
        self.wait_ready()                    # a failure to start: raised, and reaped
        self.closed = True
        try:
            if self.error is None:
                self.flush()
                self.send(('close',))
                try:
                    reply = self.outbox.recv()
                except (EOFError, OSError):
                    reply = None
                if reply is None or reply[0] != 'closed':
                    self.process.join(5.0)
                    self.error = BagWriterError(self._describe(reply, 'while closing the bag'))
                elif reply[1] != self.sent:
                    self.error = BagWriterError(
                        f'{self.path}: the bag writer process wrote {reply[1]} messages '
                        f'of {self.sent}')
        except BagWriterError:               # raised and caught here: still to report
            self.reported = False
        finally:
            if not self.inbox.closed:
                self._reap()
        if self.error is not None and not self.reported:
            self.reported = True
            raise self.error


def _close_child_at_exit(child: _WriterProcess) -> None:
    """Finaliser / atexit of a background writer: close it, say so if that fails."""
    try:
        child.close()
    except Exception as exc:  # noqa: BLE001 - nothing to raise to at exit
        print(f'acres_sim BagWriter: {exc}', file=sys.stderr)


# ----------------------------------------------------------------------------

class BagWriter:
    """A new rosbag2 (MCAP, version 8) in ``folder`` (which must not exist).

    ``typestore`` is a :class:`rosbags.typesys.Stores` member or a typestore;
    it serialises the messages (CDR) and provides their definitions and type
    hashes.  Register each topic with :meth:`add_topic`, then :meth:`write`
    message objects, or :meth:`write_raw` / :meth:`write_raw_many` bytes the
    caller serialised.  Use as a context manager; :meth:`close` may be called
    more than once.

    ``background=True``: the rosbags writer runs in a child process (see the
    module docstring); messages are sent to it ``batch_size`` at a time.
    Failures of the child raise :class:`BagWriterError`.  ``hold_interrupts``
    then does not matter: queueing a message is a single list append, and
    sending a batch always holds SIGINT/SIGTERM.  ``wait=False`` (background
    only): start the child and return, so that the caller can start other
    work meanwhile; :meth:`wait_ready` then raises a failure to open the bag
    (as does the first use).  ``prestarted`` (background only): a
    :class:`acres_sim.record.child.Prestarted` of this module to run the
    writer in, instead of a new process.
    """

    def __init__(self, folder, typestore=Stores.ROS2_JAZZY, *, version: int = BAG_VERSION,
                 hold_interrupts: bool = True, background: bool = False,
                 batch_size: int = BATCH_SIZE, lock=None, wait: bool = True, prestarted=None):
        self.path = Path(folder)
        # Hold SIGINT/SIGTERM around each message write; a caller that stops
        # gracefully on its own (a flag checked between steps) can skip the cost.
        self._hold = interrupts_held if hold_interrupts else contextlib.nullcontext
        self.typestore = get_typestore(typestore) if isinstance(typestore, Stores) else typestore
        self.background = bool(background)
        self._connections = {}
        self._written = 0
        if self.background:
            if version not in (8, 9):
                raise WriterError(f'Unsupported rosbag2 writer version {version}; '
                                  'expected 8 or 9.')
            if self.path.exists():
                raise WriterError(f'{self.path} exists already, not overwriting.')
            self._writer = None
            self._child = _WriterProcess(self.path, version, batch_size, lock, wait,
                                         prestarted)
            # Runs at interpreter exit before multiprocessing joins its children.
            self._finalizer = multiprocessing.util.Finalize(
                self, _close_child_at_exit, args=(self._child,), exitpriority=100)
        else:
            self._child = None
            self._writer = BlockWriter(self.path, version=version)
            self._writer.open()
            # Closes the bag at interpreter exit (or garbage collection) if close()
            # was never reached; holds the rosbags writer, not self.
            self._finalizer = weakref.finalize(self, _close_quietly, self._writer)

    # -- context manager: always close (never abort), so the bag stays readable
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    def wait_ready(self) -> None:
        """Background: wait until the child has opened the bag (see ``wait``);
        in the foreground the bag is open already."""
        if self._child is not None:
            self._child.wait_ready()

    @property
    def closed(self) -> bool:
        if self._child is not None:
            return self._child.closed
        return self._writer.storage is None

    @property
    def message_count(self) -> int:
        """Messages written -- in background mode, given to the writer
        (written once the bag is closed without error)."""
        if self._child is not None:
            return self._child.message_count
        return self._written

    @property
    def child_pid(self):
        """Process id of the background writer (None in foreground mode)."""
        return None if self._child is None else self._child.pid

    @property
    def topics(self) -> dict:
        """topic -> message type of the registered topics."""
        return {t: c.msgtype for t, c in self._connections.items()}

    def add_topic(self, name: str, msgtype: str, qos='reliable'):
        """Register a topic.  ``qos``: ``'reliable'`` (reliable, volatile,
        depth 10), ``'static'`` (reliable, transient-local, depth 1: /tf_static),
        or a :class:`rosbags.interfaces.Qos` or a list of them."""
        if self.closed:
            raise ValueError(f'{self.path}: add_topic on a closed BagWriter')
        if name in self._connections:
            raise ValueError(f'topic {name!r} is already registered')
        if isinstance(qos, str):
            try:
                profiles = [_QOS_BY_NAME[qos]]
            except KeyError:
                raise ValueError(
                    f"qos must be 'reliable', 'static' or Qos profiles, not {qos!r}") from None
        elif isinstance(qos, Qos):
            profiles = [qos]
        else:
            profiles = list(qos)
        msgtype = _normalise_msgtype(msgtype)
        if msgtype not in self.typestore.fielddefs:
            raise ValueError(f'message type {msgtype!r} is not in the typestore')
        # What Writer.add_connection(typestore=...) computes, done here so that
        # the background process needs no typestore.
        msgdef, _ = self.typestore.generate_msgdef(msgtype, ros_version=2)
        rihs01 = self.typestore.hash_rihs01(msgtype)
        if self._child is None:
            conn = self._writer.add_connection(name, msgtype, msgdef=msgdef, rihs01=rihs01,
                                               offered_qos_profiles=profiles)
        else:
            cid = len(self._connections) + 1          # as the child's Writer numbers them
            self._child.send(('topic', cid, name, msgtype, msgdef, rihs01, profiles))
            fmt = (MessageDefinitionFormat.IDL if msgdef.startswith('=' * 80 + '\nIDL: ')
                   else MessageDefinitionFormat.MSG)
            conn = Connection(id=cid, topic=name, msgtype=msgtype,
                              msgdef=MessageDefinition(fmt, msgdef), digest=rihs01, msgcount=0,
                              ext=ConnectionExtRosbag2('cdr', list(profiles)), owner=None)
        self._connections[name] = conn
        return conn

    def _connection(self, topic: str) -> Connection:
        try:
            return self._connections[topic]
        except KeyError:
            raise KeyError(f'topic {topic!r} is not registered (add_topic first)') from None

    def write(self, topic: str, t_ns: int, message) -> None:
        """Serialise ``message`` (CDR) and write it on ``topic`` with the bag
        time ``t_ns`` (integer nanoseconds)."""
        conn = self._connection(topic)
        msgtype = getattr(message, '__msgtype__', None)
        if msgtype != conn.msgtype:
            raise TypeError(f'topic {topic!r} carries {conn.msgtype}, not {msgtype}')
        self.write_raw(topic, t_ns, self.typestore.serialize_cdr(message, conn.msgtype))

    def write_raw(self, topic: str, t_ns: int, data) -> None:
        """Write one already serialised (CDR) message on ``topic`` with the bag
        time ``t_ns``.  ``data``: bytes (or a bytes-like object, copied in
        background mode, so the caller may reuse its buffer)."""
        # The simulation's path in background mode: kept short (no helper calls).
        try:
            conn = self._connections[topic]
        except KeyError:
            raise KeyError(f'topic {topic!r} is not registered (add_topic first)') from None
        t = int(t_ns)
        if not 0 <= t < _MAX_STAMP:
            raise ValueError(f'bag time {t_ns!r} ns is not an unsigned 64-bit integer')
        child = self._child
        if child is not None:
            if child.closed:
                raise ValueError(f'{self.path}: write on a closed BagWriter')
            if type(data) is not bytes:
                data = bytes(memoryview(data))
            pending = child.pending
            pending.append((conn.id, t, data))       # one append: interrupt-safe
            if len(pending) >= child.batch_size:
                child.flush()
            return
        with self._hold():
            self._writer.write(conn, t, data)
            self._written += 1

    def write_raw_many(self, topic: str, t_ns_list, datas) -> None:
        """Write serialised messages on one topic: ``t_ns_list[i]`` is the bag
        time of ``datas[i]`` (a list or a numpy array of integers)."""
        conn = self._connection(topic)
        stamps = [_stamp(t) for t in t_ns_list]
        datas = list(datas)
        if len(stamps) != len(datas):
            raise ValueError(f'{len(stamps)} times for {len(datas)} messages')
        if self._child is not None:
            if self._child.closed:
                raise ValueError(f'{self.path}: write on a closed BagWriter')
            datas = [d if type(d) is bytes else bytes(memoryview(d)) for d in datas]
            self._child.extend(conn.id, stamps, datas)
            return
        with self._hold():
            for t_ns, data in zip(stamps, datas):
                self._writer.write(conn, t_ns, data)
                self._written += 1

    def write_block(self, entries) -> None:
        """Write a block of serialised messages of several topics, in time order.

        ``entries``: a sequence of ``(topic, t_ns, payload, lengths)`` -- the bag
        times (n integers), the n messages' bytes joined, and their sizes.  The
        messages go out sorted by time; at equal times in the order of
        ``entries``, and within an entry in their own order.  numpy orders them
        and the background process gets them as one batch, so a recorder can
        hand over a whole second of its topics in one call."""
        if not entries:
            return
        conns = [self._connection(topic) for topic, _t, _p, _n in entries]
        stamps = [np.asarray(t, dtype=np.int64).reshape(-1) for _topic, t, _p, _n in entries]
        lengths = [np.asarray(n, dtype=np.int64).reshape(-1) for _topic, _t, _p, n in entries]
        for (topic, _t, payload, _n), t, n in zip(entries, stamps, lengths):
            if len(t) != len(n) or int(n.sum()) != len(payload):
                raise ValueError(f'{topic}: {len(t)} times, {len(n)} lengths and '
                                 f'{len(payload)} bytes do not match')
            if len(t) and (t.min() < 0):
                raise ValueError(f'{topic}: bag time {int(t.min())} ns is negative')
        counts = [len(t) for t in stamps]
        entry = np.repeat(np.arange(len(entries)), counts)
        all_stamps = np.concatenate(stamps)
        all_lengths = np.concatenate(lengths)
        offsets = np.concatenate([[0], np.cumsum(all_lengths)[:-1]]).astype(np.int64)
        order = np.lexsort((entry, all_stamps))       # stable: ties keep their order
        ids = np.repeat([conn.id for conn in conns], counts)[order]
        all_stamps, offsets, all_lengths = all_stamps[order], offsets[order], all_lengths[order]
        payload = b''.join([p for _topic, _t, p, _n in entries])
        child = self._child
        if child is not None:
            if child.closed:
                raise ValueError(f'{self.path}: write on a closed BagWriter')
            child.send_block(ids.astype(np.uint16), all_stamps.astype(np.uint64),
                             offsets, all_lengths, payload)
            return
        with self._hold():
            self._writer.write_block(ids, all_stamps, offsets, all_lengths, payload)
            self._written += len(ids)

    def flush(self) -> None:
        """Background mode: send the messages batched so far to the writer
        process now (they then survive a SIGKILL of this process).  Nothing to
        do in foreground mode."""
        if self._child is not None:
            self._child.flush()

    def set_custom_data(self, key: str, value: str) -> None:
        """A key/value string pair in metadata.yaml's ``custom_data``."""
        if self._child is None:
            self._writer.set_custom_data(str(key), str(value))
        else:
            if self.closed:
                raise ValueError(f'{self.path}: set_custom_data on a closed BagWriter')
            self._child.send(('custom', str(key), str(value)))

    def close(self) -> None:
        """Finish the MCAP (summary, footer) and write metadata.yaml.  In
        background mode: send what is batched, have the writer process close
        the bag, join it; raise :class:`BagWriterError` if it failed."""
        with interrupts_held():
            if self._child is not None:
                self._finalizer.cancel()
                self._child.close()
                return
            if self._writer.storage is not None:
                self._writer.close()
            self._finalizer.detach()
