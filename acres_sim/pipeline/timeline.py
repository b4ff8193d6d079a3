"""The ROS time of a run: physics step k is at ``T0 + k / 120`` s, with T0 the
run's start, ``gnss.datum.start_utc`` (the spec's UTC time at t = 0, GNSS
Receiver parameters), as integer nanoseconds since the Unix epoch.

A simulated rig stamps UTC as a real one does: ``/clock``, every header
stamp, every bag time and the static TF are on this timeline, in the
recorder and in the live nodes alike, so a GNSS fix is stamped with the UTC
of its NMEA sentence.  (A stamp of 0 would read as "the latest" to tf2.)
The jsonl files keep the spec's episode time ``t = k / 120``.

The arithmetic is exact and in integers: k / 120 s is rounded to the nearest
nanosecond (1/120 s is not a whole number of them; no halves occur), and a
stamp gives back its step by rounding (t - T0) * 120 to the nearest integer.
The sensor nodes recover k from the truth's stamps this way, with the T0 of
their own configuration, which the rig gives every node alike.
"""

import datetime

import numpy as np

from acres_sim.core.truth import PHYSICS_HZ

__all__ = ['NS_PER_S', 'Timeline', 'ns_since_epoch', 'step_offset_ns']

NS_PER_S = 1_000_000_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def ns_since_epoch(utc: datetime.datetime) -> int:
    """An aware datetime as integer nanoseconds since 1970-01-01T00:00:00Z."""
    delta = utc - _EPOCH
    return (delta.days * 86400 + delta.seconds) * NS_PER_S + delta.microseconds * 1000


def step_offset_ns(k):
    """k / 120 s in nanoseconds, rounded to the nearest: an int for an int k,
    an int64 array for an integer array (no overflow for steps of centuries)."""
    if isinstance(k, np.ndarray):
        whole, part = np.divmod(k, PHYSICS_HZ)
    else:
        whole, part = divmod(int(k), PHYSICS_HZ)
    return whole * NS_PER_S + (part * NS_PER_S + PHYSICS_HZ // 2) // PHYSICS_HZ


class Timeline:
    """The ROS times of the physics steps of a run starting at ``t0_ns`` [ns]."""

    __slots__ = ('t0_ns',)

    def __init__(self, t0_ns: int):
        self.t0_ns = int(t0_ns)

    @classmethod
    def starting_at(cls, start_utc: datetime.datetime) -> 'Timeline':
        """The timeline of a run whose step 0 is at ``start_utc`` (aware)."""
        return cls(ns_since_epoch(start_utc))

    def ns(self, k) -> int:
        """The ROS time of step ``k`` [ns]."""
        return self.t0_ns + step_offset_ns(k)

    def ns_of_steps(self, steps) -> np.ndarray:
        """The ROS times of an integer array of steps [ns], as int64."""
        return self.t0_ns + step_offset_ns(np.asarray(steps, dtype=np.int64))

    def step(self, stamp_ns: int) -> int:
        """The step nearest a ROS time [ns] (negative before the start)."""
        offset = int(stamp_ns) - self.t0_ns
        return (offset * PHYSICS_HZ + NS_PER_S // 2) // NS_PER_S

    def step_of_stamp(self, sec, nanosec) -> int:
        """:meth:`step` of a builtin_interfaces/Time's fields."""
        return self.step(int(sec) * NS_PER_S + int(nanosec))

    def __repr__(self):
        return f'Timeline(t0_ns={self.t0_ns})'

    def __eq__(self, other):
        return isinstance(other, Timeline) and other.t0_ns == self.t0_ns

    def __hash__(self):
        return hash(self.t0_ns)
