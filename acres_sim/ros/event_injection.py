"""Events injected into a running rig: the sim node's side and the sensor
nodes' side (see docs/events.md).

* The sim node takes requests on ``events/inject`` (std_msgs/String, YAML or
  JSON: ``{id: ..., event: {...}}`` or ``{id: ..., clear: NAME}``; a bare
  event mapping works too).  A request is checked as a scenario's event is
  (:func:`acres_sim.config.events.inject` / ``clear``) and takes effect at the
  next step the sim has not computed yet (or at the event's later
  ``start_s``); its vehicles' kernels take it from there.  Every request ends
  in one entry of the event log on ``events/log`` (accepted: ``inject`` or
  ``clear`` with the step; refused: ``refused`` with the one-line error),
  and in the node's log.
* Each vehicle's entries also go to its sensor nodes on ``sim/events`` in its
  namespace (transient local, so a node that starts later has them too).  A
  sensor node adds them to its own event clock and says so on
  ``sim/events_applied`` (and, at its first truth and while it waits for
  truth, which one it took last);
  the sim does not publish the truth of the step an entry takes effect at
  before every such sensor node of the vehicle has taken it (at most
  :data:`ACK_TIMEOUT_S`), so the live
  outputs stay those of the headless recorder run from the log
  (``acres-sim record --events-from``).
"""

import json
import time
import uuid

from std_msgs.msg import String

from acres_sim.config.events import (EventPlan, clear, inject, parse_event, plan_of_parameter,
                                     read_events)
from acres_sim.config.validate import ConfigError
from acres_sim.pipeline.event_topics import event_log
from acres_sim.ros.qos import EVENT_LOG_QOS, OUTPUT_QOS, no_qos_events
from acres_sim.ros.take import take_all

__all__ = ['ACK_TIMEOUT_S', 'APPLIED_TOPIC', 'INJECT_TOPIC', 'SensorEvents', 'SimInjections',
           'VEHICLE_EVENTS_TOPIC', 'request_text']

INJECT_TOPIC = 'events/inject'
VEHICLE_EVENTS_TOPIC = 'sim/events'
APPLIED_TOPIC = 'sim/events_applied'
ACK_TIMEOUT_S = 5.0            # wall time the sim waits for a sensor node to take an entry
POLL_S = 0.0005


def request_text(event=None, clear_name=None, request_id=None) -> str:
    """The JSON of an injection request (``event``: a mapping) or a clear."""
    body = {'id': request_id or uuid.uuid4().hex}
    if clear_name is not None:
        body['clear'] = clear_name
    else:
        body['event'] = event
    return json.dumps(body, sort_keys=True)


class SimInjections:
    """The sim node's side: ``poll(step)`` between blocks takes the requests;
    ``hold(k, stop)`` before publishing step k waits for the sensor nodes."""

    def __init__(self, node, agents, log_pub):
        self.node, self.agents, self.log_pub = node, agents, log_pub
        for agent in agents:              # agent.plan: its events (config.events.EventPlan)
            agent.revision = 0
            # per vehicle: without rclpy's QoS event handlers (acres_sim.ros.qos)
            agent.events_pub = node.create_publisher(
                String, agent.topic(VEHICLE_EVENTS_TOPIC), EVENT_LOG_QOS,
                event_callbacks=no_qos_events('publisher'))
            agent.applied_sub = node.create_subscription(
                String, agent.topic(APPLIED_TOPIC),
                lambda m, agent=agent: self._on_applied(agent, m), OUTPUT_QOS,
                event_callbacks=no_qos_events('subscription'))
            agent.applied = {}            # sensor node -> the last revision it took
        self.sub = node.create_subscription(String, INJECT_TOPIC, self._on_request, OUTPUT_QOS)
        self.requests = []
        self.pending = []                 # (agent, revision, step) not yet taken by all

    # -- requests
    def _on_request(self, m):
        self.requests.append(m.data)

    def _on_applied(self, agent, m):
        try:
            body = json.loads(m.data)
            agent.applied[str(body['node'])] = int(body['revision'])
        except (ValueError, KeyError, TypeError):
            self.node.get_logger().warning(f'{APPLIED_TOPIC}: a message that is not an '
                                           f'acknowledgement: {m.data[:80]!r}')

    def poll(self, step):
        """Take the waiting requests; ``step`` is the next step to compute."""
        take_all(self.sub, self._on_request)
        self._take_acks()
        requests, self.requests = self.requests, []
        for text in requests:
            self._take(text, step)

    def _take(self, text, step):
        names = [a.name for a in self.agents]
        request_id = None
        try:
            body = parse_event(text, INJECT_TOPIC)[0]
            if isinstance(body, dict) and ('event' in body or 'clear' in body):
                request_id = body.get('id')
                unknown = set(body) - {'id', 'event', 'clear'}
                if unknown:
                    raise ConfigError(f'request key {sorted(unknown)[0]!r} (in {INJECT_TOPIC}): '
                                      'allowed: id, event, clear')
            else:
                body = {'event': body}
            rig = self._rig_plan()
            if 'clear' in body:
                entry, _plan = clear(rig, str(body['clear']), step)
            else:
                entry, _plan = inject(rig, body['event'], step, names)
        except ConfigError as err:
            entry = {'log': 'refused', 'step': int(step), 'error': str(err)}
            self.node.get_logger().warning(f'event refused: {err}')
        else:
            self._apply(entry)
            self.node.get_logger().info(f'event log: {json.dumps(entry, sort_keys=True)}')
        if request_id is not None:
            entry['id'] = str(request_id)
        self.log_pub.publish(event_log(entry))

    def _rig_plan(self):
        """Every event of the rig once, by name (what a request is checked against)."""
        seen = {}
        for agent in self.agents:
            for spec in agent.plan.events:
                seen.setdefault(spec.name, spec)
        return EventPlan(tuple(seen.values()))

    def _apply(self, entry):
        vehicles = entry['event']['vehicles'] if entry['log'] == 'inject' else entry['vehicles']
        for agent in self.agents:
            if vehicles is not None and agent.name not in vehicles:
                continue
            if entry['log'] == 'clear' and entry['name'] not in [e.name for e in agent.plan.events]:
                continue
            agent.plan = apply_entry(agent.plan, entry)
            agent.vehicle.set_events(agent.plan.for_vehicle(None))
            agent.sim.events[0] = agent.vehicle.events
            if entry['log'] == 'inject':     # its status on /diagnostics from this step on
                agent.status.known_from[entry['event']['name']] = entry['step']
            agent.revision += 1
            agent.events_pub.publish(event_log({**entry, 'revision': agent.revision}))
            self.pending.append((agent, agent.revision, entry['step']))

    # -- the hold
    def hold(self, k, stop):
        """Before publishing step ``k``: wait until every reporting sensor node of a
        vehicle has taken the entries that act from k on (ACK_TIMEOUT_S at most)."""
        if not self.pending or k < min(step for _a, _r, step in self.pending):
            return
        deadline = time.monotonic() + ACK_TIMEOUT_S
        while not stop.is_set():
            self._take_acks()
            self.node.poll_progress()
            waiting = self._waiting(k)
            if not waiting:
                break
            if time.monotonic() > deadline:
                self.node.get_logger().warning(
                    f'{", ".join(waiting)} did not take the event log within '
                    f'{ACK_TIMEOUT_S:g} s: its outputs may miss the event')
                break
            time.sleep(POLL_S)
        self.pending = [p for p in self.pending if p[2] > k]

    def _take_acks(self):
        for agent in self.agents:
            take_all(agent.applied_sub, lambda m, agent=agent: self._on_applied(agent, m))

    def _waiting(self, k):
        """The sensor nodes (those that say which entry they took, and report
        their progress) that lack an entry acting by step ``k``."""
        out = []
        for agent, revision, step in self.pending:
            if step > k:
                continue
            for name, taken in agent.applied.items():
                if taken < revision and name in self.node.progress:
                    out.append(name)
        return sorted(set(out))


def apply_entry(plan, entry):
    """``plan`` (one vehicle's, vehicles left out) with a log entry applied."""
    if entry['log'] == 'inject':
        event = {k: v for k, v in entry['event'].items() if k != 'vehicles'}
        return read_events([event], None, 'event log', None, plan=plan)
    return clear(plan, entry['name'], entry['step'], 'event log')[1]


class SensorEvents:
    """A sensor node's side: its vehicle's events (``plan``, from its ``events``
    parameter), to which it adds the entries of ``sim/events`` (the sim sends
    each vehicle only its own) -- into ``node.vehicle``'s event clock -- and says so."""

    def __init__(self, node, events_json):
        self.node = node
        self.plan = plan_of_parameter(events_json)
        self.revision = 0
        self.sub = node.create_subscription(String, VEHICLE_EVENTS_TOPIC, self._on_entry,
                                            EVENT_LOG_QOS)
        self.pub = node.create_publisher(String, APPLIED_TOPIC, OUTPUT_QOS)

    def _on_entry(self, m):
        try:
            entry = json.loads(m.data)
            revision = int(entry.pop('revision'))
        except (ValueError, KeyError, TypeError):
            self.node.get_logger().error(f'{VEHICLE_EVENTS_TOPIC}: not an event log entry: '
                                         f'{m.data[:80]!r}')
            return
        if revision <= self.revision:       # again (a second sim, a repeated message)
            self.report()
            return
        try:
            self.plan = apply_entry(self.plan, entry)
            self.node.vehicle.set_events(self.plan.for_vehicle(None))
        except (ConfigError, ValueError) as err:
            self.node.get_logger().error(f'{VEHICLE_EVENTS_TOPIC}: entry {revision}: {err}')
            return
        self.revision = revision
        self.report()

    def report(self):
        """Say which entry the node took last (also at its first truth and while it
        waits for truth, so the sim knows the node takes entries at all)."""
        self.pub.publish(String(data=json.dumps(
            {'node': self.node.get_fully_qualified_name(), 'revision': self.revision})))
