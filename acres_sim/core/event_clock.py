"""When the events of a run are active: each starts at a sim time or when the
vehicle enters a zone, and ends at a sim time, after a duration, when the
vehicle leaves a zone, or never -- evaluated at the caller's sample times in
plain arrays, so that njit code can ask it sample by sample.

An :class:`EventTimes` table holds one row per event:

==============  ==============================================================
``start_kind``  :data:`AT_TIME` (``start_s``) or :data:`ON_ENTER` (``start_zone``)
``end_kind``    :data:`AT_TIME` (``end_s``), :data:`AFTER` (``end_s`` seconds
                after its start), :data:`ON_LEAVE` (``end_zone``) or :data:`NEVER`
==============  ==============================================================

:func:`advance_events` takes one sample (time and the vehicle's position,
grid ENU) and updates the state of every event in place; an event is active
at a sample when it has started at or before it and not yet ended.  The
rules, for every sample in time order:

* an event that starts at a time starts at the first sample at or after it
  (within :data:`TOLERANCE_S`, as the spec's Due), once;
* an event that starts on entering a zone starts at every sample that is in
  the zone after one that was not (a vehicle that starts in the zone enters
  it at its first sample), so it runs again at each entry once it has ended;
* an event ends at the first sample at or after its end time, or at the first
  sample out of its end zone, which it must have been in (an event that starts
  on entering a zone and ends on leaving that zone is active exactly while the
  vehicle is inside); an event that starts and ends at one sample is never
  active;
* a sample before an event's start time, or outside its zones, leaves it as
  it was;
* from its ``clear_s`` on (an event cleared at runtime; inf by default) an
  event is never active: it ends at the first sample at or after that time.

The state is five columns per event (:data:`STATE_SIZE`): active (1.0 or 0.0),
the time it last started and the time it last ended (NaN before), whether the
previous sample was in the start zone and in the end zone (NaN before the
first sample), so a run can be cut into blocks and go on.  The first three
(:data:`VIEW_SIZE`) are what the fault models read at a sample
(:mod:`acres_sim.core.events`).
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit
from acres_sim.core.zones import inside_zone

__all__ = ['AFTER', 'AT_TIME', 'EventTimes', 'NEVER', 'ON_ENTER', 'ON_LEAVE', 'STATE_SIZE',
           'ST_ACTIVE', 'ST_ENDED', 'ST_STARTED', 'TOLERANCE_S', 'VIEW_SIZE', 'advance_events',
           'due_at_time', 'initial_state', 'make_event_times', 'quiet_views']

AT_TIME, AFTER, ON_ENTER, ON_LEAVE, NEVER = range(5)
TOLERANCE_S = 1e-8         # as the spec's Due: a sample within this of a time is at it
ST_ACTIVE, ST_STARTED, ST_ENDED, ST_IN_START, ST_IN_END = range(5)
STATE_SIZE = 5
VIEW_SIZE = 3              # active, started, ended: what a sample's fault models read


class EventTimes(NamedTuple):
    """When each event starts and ends (see the module docstring)."""

    start_kind: np.ndarray   # (n,) int64: AT_TIME or ON_ENTER
    start_s: np.ndarray      # (n,) float64
    start_zone: np.ndarray   # (n,) int64: a zone of the run's Zones table, -1 none
    end_kind: np.ndarray     # (n,) int64: AT_TIME, AFTER, ON_LEAVE or NEVER
    end_s: np.ndarray        # (n,) float64: the end time, or the duration of AFTER
    end_zone: np.ndarray     # (n,) int64
    clear_s: np.ndarray      # (n,) float64: from this time on never active (inf: never cleared)


def make_event_times(rows, n_zones) -> EventTimes:
    """The table of ``rows``: each ``(start_kind, start, end_kind, end)`` with
    ``start`` a time [s] or a zone index and ``end`` a time, a duration [s],
    a zone index or None; ``n_zones`` is the size of the run's zone table.
    A ValueError names the first bad row."""
    cols = [[], [], [], [], [], []]
    for number, (start_kind, start, end_kind, end) in enumerate(rows):
        where = f'event {number}'
        if start_kind == AT_TIME:
            start_s, start_zone = _time(start, where, 'start'), -1
        elif start_kind == ON_ENTER:
            start_s, start_zone = math.nan, _zone(start, n_zones, where)
        else:
            raise ValueError(f'{where}: starts AT_TIME or ON_ENTER, not {start_kind!r}')
        end_s, end_zone = math.nan, -1
        if end_kind == AT_TIME:
            end_s = _time(end, where, 'end')
            if start_kind == AT_TIME and not end_s > start_s:
                raise ValueError(f'{where}: ends at {end_s} s, not after its start {start_s} s')
        elif end_kind == AFTER:
            end_s = _time(end, where, 'duration')
            if not end_s > 0.0:
                raise ValueError(f'{where}: a duration must be > 0 s, got {end_s}')
        elif end_kind == ON_LEAVE:
            end_zone = _zone(end, n_zones, where)
        elif end_kind != NEVER:
            raise ValueError(f'{where}: ends AT_TIME, AFTER, ON_LEAVE or NEVER, not '
                             f'{end_kind!r}')
        for col, value in zip(cols, (start_kind, start_s, start_zone, end_kind, end_s,
                                     end_zone)):
            col.append(value)
    ints = (0, 2, 3, 5)
    return EventTimes(*(np.array(col, dtype=np.int64 if k in ints else np.float64)
                        for k, col in enumerate(cols)), np.full(len(cols[0]), np.inf))


def _time(value, where, what):
    t = float(value)
    if not math.isfinite(t):
        raise ValueError(f'{where}: the {what} must be a finite number of seconds, got {value!r}')
    return t


def _zone(value, n_zones, where):
    if not isinstance(value, (int, np.integer)) or not 0 <= value < n_zones:
        raise ValueError(f'{where}: zone {value!r} is not one of the run\'s {n_zones} zones')
    return int(value)


def initial_state(times: EventTimes) -> np.ndarray:
    """The state of ``times`` before the first sample."""
    state = np.zeros((len(times.start_kind), STATE_SIZE))
    state[:, ST_STARTED:] = np.nan
    return state


def quiet_views(n_samples, n_events) -> np.ndarray:
    """The views of ``n_events`` events that have never started, at ``n_samples``
    samples (n_samples, n_events, VIEW_SIZE)."""
    views = np.zeros((n_samples, n_events, VIEW_SIZE))
    views[:, :, ST_STARTED:] = np.nan
    return views


@njit(cache=True)
def advance_events(times, zones, t, x, y, z, state):
    """Take the sample at time ``t`` [s] with the vehicle at (x, y, z) [m, grid
    ENU]: update every event's ``state`` row in place (``state[i, 0]`` is then
    1.0 while event ``i`` is active at this sample)."""
    for i in range(times.start_kind.shape[0]):
        row = state[i]
        in_start = False
        if times.start_kind[i] == ON_ENTER:
            in_start = inside_zone(zones, times.start_zone[i], x, y, z)
        in_end = False
        if times.end_kind[i] == ON_LEAVE:
            in_end = inside_zone(zones, times.end_zone[i], x, y, z)
        if t + TOLERANCE_S >= times.clear_s[i]:      # cleared: ended for good
            if row[ST_ACTIVE] > 0.5:
                row[ST_ACTIVE] = 0.0
                row[ST_ENDED] = t
        elif row[ST_ACTIVE] > 0.5:
            if _ends(times, i, t, in_end, row):
                row[ST_ACTIVE] = 0.0
                row[ST_ENDED] = t
        elif _starts(times, i, t, in_start, row) and not _ends(times, i, t, in_end, row, t):
            row[ST_ACTIVE] = 1.0
            row[ST_STARTED] = t
        row[ST_IN_START] = 1.0 if in_start else 0.0
        row[ST_IN_END] = 1.0 if in_end else 0.0


@njit(cache=True)
def due_at_time(times, state, i, t):
    """Whether event ``i``, which starts at a time, starts at the sample at ``t``
    (asked before :func:`advance_events` takes that sample)."""
    return (times.start_kind[i] == AT_TIME and math.isnan(state[i, ST_STARTED])
            and t + TOLERANCE_S >= times.start_s[i])


@njit(cache=True)
def _starts(times, i, t, in_start, row):
    """Whether event ``i`` (not active) starts at this sample."""
    if times.start_kind[i] == AT_TIME:
        return math.isnan(row[ST_STARTED]) and t + TOLERANCE_S >= times.start_s[i]
    return in_start and not row[ST_IN_START] > 0.5     # NaN before the first: an entry


@njit(cache=True)
def _ends(times, i, t, in_end, row, started=math.nan):
    """Whether event ``i`` ends at this sample (``started``: the start it would
    have, for an event that is starting now)."""
    kind = times.end_kind[i]
    if kind == AT_TIME:
        return t + TOLERANCE_S >= times.end_s[i]
    if kind == AFTER:
        since = row[ST_STARTED] if math.isnan(started) else started
        return t + TOLERANCE_S >= since + times.end_s[i]
    if kind == ON_LEAVE:       # the first sample out of the zone after one in it
        return not in_end and row[ST_IN_END] > 0.5
    return False
