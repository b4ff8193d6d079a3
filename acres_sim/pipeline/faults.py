"""A sensor's output under the dropout and freeze events, and the names of
the events active at each sample, the same way for both drivers.

:class:`OutputFaults` is one sensor's: at each sample it asks the fault
models (:func:`acres_sim.core.events.output_fault`) whether the sample is
kept, dropped (a dropout: no row, no message) or frozen (a freeze: the last
output that was kept, again, at the new sample's time, with the new sample's
truth; dropped when there is none yet).  The model under it runs on and
draws as always.  Rows of a sample at which events are active carry their
names under ``events`` (:func:`acres_sim.pipeline.rows.with_event_names`);
rows without an active event have no such key, so a run whose events never
trigger writes the rows of a run without events.
"""

import numpy as np

from acres_sim.core.events import (KINDS, OUT_DROPPED, OUT_FROZEN, OUT_KEPT, V_ACTIVE, V_ENDED,
                                   V_STARTED, output_fault)
from acres_sim.pipeline.rows import with_event_names

__all__ = ['ActiveIntervals', 'OutputFaults']


class OutputFaults:
    """Dropout and freeze of one sensor (``sensor``: events.SENSOR_*) of a
    vehicle with the events ``events`` (a core.events.VehicleEvents).  In
    arrays a freeze repeats the first ``output_columns`` of a row (None: all of
    it; the INS results keep their truth columns fresh); in rows it repeats
    every key but the ``truth_keys`` (the GNSS row's true antenna), which
    stay the new sample's."""

    def __init__(self, events, sensor, output_columns=None, truth_keys=()):
        self.events = events
        self.sensor = sensor
        self.columns = slice(None) if output_columns is None else slice(0, output_columns)
        self.truth_keys = tuple(truth_keys)
        self.last = None            # the last output kept (a row, or an array row)

    def reset(self):
        self.last = None

    def fault(self, view):
        """OUT_KEPT, OUT_DROPPED or OUT_FROZEN for a sample with the events' ``view``."""
        if view is None or not len(self.events):
            return OUT_KEPT
        return output_fault(self.events.effects, view, self.sensor)

    def names(self, view):
        """The names of the events active at the sample of ``view``."""
        if view is None or not len(self.events):
            return []
        return self.events.active_names(view)

    def row(self, row, view):
        """One sample's row: the row to send (the last one kept, when frozen;
        a copy with the event names), or None when dropped."""
        if view is None or not len(self.events):
            return row
        fault = self.fault(view)
        if fault == OUT_DROPPED or (fault == OUT_FROZEN and self.last is None):
            return None
        if fault == OUT_FROZEN:
            row = {**self.last, **{k: row[k] for k in self.truth_keys if k in row}}
        else:
            self.last = dict(row)
        return with_event_names(row, self.names(view))

    def arrays(self, steps, values, views):
        """A block of samples (``values``: one row per sample of ``steps``, the
        events' views ``views`` per sample or None): the steps kept, their
        values (frozen ones replaced by the last kept; a copy when any is) and
        the names of the events active at each kept one."""
        if views is None or not len(self.events) or not len(steps):
            return steps, values, [[] for _ in range(len(steps))]
        keep = np.ones(len(steps), dtype=bool)
        out = values
        names = []
        for i, view in enumerate(views):
            fault = self.fault(view)
            if fault == OUT_DROPPED or (fault == OUT_FROZEN and self.last is None):
                keep[i] = False
                continue
            if fault == OUT_FROZEN:
                if out is values:
                    out = np.array(values)
                out[i, self.columns] = self.last
            else:
                self.last = np.array(values[i, self.columns])
            names.append(self.names(view))
        return steps[keep], out[keep], names


class ActiveIntervals:
    """When each event of a vehicle was active, from the events' views at a
    series of samples in time order: {name: [[start, end], ...]} with the
    clock's own start and end times (end None: still active).  After each
    block, :meth:`take_clock` adds what the samples did not see: an event
    active only between two of them (a teleport lasts one physics step) or
    one that started or ended after the last."""

    def __init__(self, events):
        self.events = events
        self.intervals = {name: [] for name in events.names}
        self._active = [False] * len(events)

    def take(self, views):
        for view in views:
            for i, (name, row) in enumerate(zip(self.events.names, view)):
                on = row[V_ACTIVE] > 0.5
                if on and not self._active[i]:
                    self.intervals[name].append([float(row[V_STARTED]), None])
                elif self._active[i] and not on:
                    self.intervals[name][-1][1] = float(row[V_ENDED])
                self._active[i] = on

    def take_clock(self, state):
        """The clock's state after the samples taken (its last start and end
        of each event, whether it is active)."""
        for i, (name, row) in enumerate(zip(self.events.names, state)):
            started, ended, on = float(row[V_STARTED]), float(row[V_ENDED]), row[V_ACTIVE] > 0.5
            if np.isnan(started):
                continue
            spans = self.intervals[name]
            if not spans or spans[-1][0] < started:      # a start no sample saw
                spans.append([started, None])
            if not on and spans[-1][1] is None:          # ended after the last sample
                spans[-1][1] = ended
            self._active[i] = on

    def entries(self):
        """[{name, type, intervals}] for episode.json."""
        return [{'name': name, 'type': KINDS[int(kind)], 'active_s': self.intervals[name]}
                for name, kind in zip(self.events.names, self.events.effects.kind.tolist())]
