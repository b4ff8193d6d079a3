"""The fault events on the bus, the same bytes from both drivers: the run's
event log on ``events/log`` (std_msgs/String, JSON) and each vehicle's event
status on ``/diagnostics`` once a second of sim time.

The log has one message per entry -- at the start, per vehicle with events,
its events from the scenario (``{"log": "scenario", "vehicle": NAME,
"events": [...]}``, each event with its times and parameters as
``episode.json`` lists them) -- so that a run can be repeated from its bag.
The status (:func:`acres_sim.pipeline.messages.event_status`, named
``<frame prefix>events``) says which of the vehicle's events are active, at
the first truth sample of every second of sim time.  A run without
events sends neither.
"""

import json

import numpy as np

from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline import messages as msg

__all__ = ['EVENT_LOG_TOPIC', 'EventStatus', 'STATUS_EVERY', 'event_log', 'scenario_entry']

EVENT_LOG_TOPIC = 'events/log'
STATUS_EVERY = PHYSICS_HZ        # steps between two event statuses of a vehicle (1 s)


def scenario_entry(vehicle_name, events_json) -> bytes:
    """The log entry of a vehicle's scenario events (``events_json``: the
    EventPlan.to_json of the vehicle, its nodes' ``events`` parameter)."""
    return event_log({'log': 'scenario', 'vehicle': vehicle_name,
                      'events': json.loads(events_json)['events']})


def event_log(entry) -> bytes:
    """One entry of the event log (a JSON-able mapping) as std_msgs/String CDR."""
    text = json.dumps(entry, sort_keys=True, allow_nan=False)
    return bytes(msg.TYPESTORE.serialize_cdr(msg.String(data=text), 'std_msgs/msg/String'))


class EventStatus:
    """A vehicle's event status on /diagnostics: at the first truth sample of
    every second of sim time at which it knows of an event (its scenario's from
    the start; one injected at runtime from the step of its log entry:
    ``known_from``, event name -> step)."""

    def __init__(self, vehicle, known_from=None):
        self.vehicle = vehicle
        self.name = f'{vehicle.frame_prefix}events'
        self.known_from = dict(known_from or {})
        self._second = -1            # the last second with a status

    def reset(self):
        self._second = -1

    def messages(self, steps, views):
        """[(step, DiagnosticArray CDR)] of the truth samples ``steps`` of a block,
        with the events' ``views`` at them."""
        events = self.vehicle.events
        if not len(events):
            return []
        out = []
        for k, view in zip(np.asarray(steps).tolist(), views):
            if k // STATUS_EVERY == self._second:
                continue
            known = [i for i, name in enumerate(events.names)
                     if self.known_from.get(name, 0) <= k]
            if not known:
                continue
            self._second = k // STATUS_EVERY
            names = [events.names[i] for i in known]
            active = [name for name in events.active_names(view) if name in names]
            array = msg.event_status(names, active, self.vehicle.timeline.ns(k), self.name)
            out.append((k, bytes(msg.TYPESTORE.serialize_cdr(
                array, 'diagnostic_msgs/msg/DiagnosticArray'))))
        return out
