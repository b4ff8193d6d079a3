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
"""

import contextlib
from pathlib import Path
import signal
import sys
import threading
import weakref

from rosbags.interfaces import (
    Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime)
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from .jsonl import interrupts_held

__all__ = ['BAG_VERSION', 'BagWriter', 'QOS_RELIABLE', 'QOS_STATIC', 'exit_on_sigterm',
           'qos_profile']

#: rosbag2 metadata version written (Humble <= 8, Jazzy 8 and 9).
BAG_VERSION = 8

#: RMW_DURATION_INFINITE {sec, nsec}: what rosbag2 records for the default
#: (infinite) deadline, lifespan and lease duration of a publisher.
_INFINITE = QosTime(9223372036, 854775807)


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


class BagWriter:
    """A new rosbag2 (MCAP, version 8) in ``folder`` (which must not exist).

    ``typestore`` is a :class:`rosbags.typesys.Stores` member or a typestore;
    it serialises the messages (CDR) and provides their definitions and type
    hashes.  Register each topic with :meth:`add_topic`, then :meth:`write`.
    Use as a context manager; :meth:`close` may be called more than once.
    """

    def __init__(self, folder, typestore=Stores.ROS2_JAZZY, *, version: int = BAG_VERSION,
                 hold_interrupts: bool = True):
        self.path = Path(folder)
        # Hold SIGINT/SIGTERM around each message write; a caller that stops
        # gracefully on its own (a flag checked between steps) can skip the cost.
        self._hold = interrupts_held if hold_interrupts else contextlib.nullcontext
        self.typestore = get_typestore(typestore) if isinstance(typestore, Stores) else typestore
        self._writer = Writer(self.path, version=version, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections = {}
        self.message_count = 0
        # Closes the bag at interpreter exit (or garbage collection) if close()
        # was never reached; holds the rosbags writer, not self.
        self._finalizer = weakref.finalize(self, _close_quietly, self._writer)

    # -- context manager: always close (never abort), so the bag stays readable
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False

    @property
    def closed(self) -> bool:
        return self._writer.storage is None

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
        conn = self._writer.add_connection(name, msgtype, typestore=self.typestore,
                                           offered_qos_profiles=profiles)
        self._connections[name] = conn
        return conn

    def write(self, topic: str, t_ns: int, message) -> None:
        """Serialise ``message`` (CDR) and write it on ``topic`` with the bag
        time ``t_ns`` (integer nanoseconds)."""
        try:
            conn = self._connections[topic]
        except KeyError:
            raise KeyError(f'topic {topic!r} is not registered (add_topic first)') from None
        msgtype = getattr(message, '__msgtype__', None)
        if msgtype != conn.msgtype:
            raise TypeError(f'topic {topic!r} carries {conn.msgtype}, not {msgtype}')
        data = self.typestore.serialize_cdr(message, conn.msgtype)
        with self._hold():
            self._writer.write(conn, int(t_ns), data)
            self.message_count += 1

    def set_custom_data(self, key: str, value: str) -> None:
        """A key/value string pair in metadata.yaml's ``custom_data``."""
        self._writer.set_custom_data(str(key), str(value))

    def close(self) -> None:
        """Finish the MCAP (summary, footer) and write metadata.yaml."""
        with interrupts_held():
            if self._writer.storage is not None:
                self._writer.close()
            self._finalizer.detach()
