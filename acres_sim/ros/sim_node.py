"""The sim node: the physics of every vehicle of the rig in one fixed-step
loop, publishing ``/clock``, each vehicle's INS topics and TF, and the
physics-rate truth its GNSS and IMU nodes run on.

One loop, no timers: each pass runs the next physics steps of every vehicle
in the block kernel (:class:`acres_sim.core.block.RigSimulation`, each vehicle
built as the recorder builds it, :func:`acres_sim.pipeline.vehicle.build_vehicle`,
all on the ground of the parameter ``terrain``, as in the recorder),
then publishes what those steps gave, step by step, as CDR bytes from the
encoders the recorder uses (:mod:`acres_sim.pipeline.channels`) -- the bag
of ``acres-sim record`` and this node carry the same bytes.
Per step k (t = k / 120, ROS time ``gnss.datum.start_utc`` + t,
:mod:`acres_sim.pipeline.timeline`): ``/clock``; per vehicle its truth on ``sim/truth``;
at an INS epoch the INS topics of the vehicle (spec's topic table) and TF
utm -> base_footprint; the vehicle's sensors sampled from its state (barometer,
magnetometer, ...: :mod:`acres_sim.pipeline.step_channels`) at their delivery
steps.  At the start: static TF of the mounts and utm -> map.

Pacing: ``rtf`` > 0 publishes step k at the wall time k / (120 rtf) after the
start (late steps at once, to catch up), computing ``lookahead_steps`` steps
at a time ahead of their time (a cmd_vel is read at the start of the next
such block: with 6 steps it shows within 8 steps, 67 ms at real time; with
many vehicles a block is begun earlier, computed a vehicle at a time
between the steps, see ``_wait_until_due``);
``rtf`` = 0 runs
as fast as the sensor nodes keep up: they report their progress on
``sim/sensor_progress`` and the sim keeps at most :data:`AHEAD_STEPS` steps
ahead of the slowest (a node that stops reporting and leaves the graph is
no longer waited for); and every ``ack_every_steps`` it waits until every
reliable subscriber has acknowledged what it published
(:mod:`acres_sim.ros.ack_pacing`).  Before step 0 the sim waits
(``start_timeout_s``) until every vehicle's sensor nodes are ready, so they
see the whole run.

``cmd_vel`` (Twist or TwistStamped, ``cmd_vel.type``) overrides the route
follower of its vehicle: non-finite commands are refused, others clamped to
the vehicle's limits (throttled warnings); a command older than
``cmd_vel.timeout_s`` of sim time stops the vehicle; a cmd_vel publisher of the
other type is named in a (throttled) warning.  Before step 0 the sim makes sure
it is alone on its domain: another publisher of ``/clock`` or of its truth
(another rig) stops it with one line (exit status 2) -- at once if that one's
``/clock`` is heard, else if it has not left the graph within OTHER_SIM_WAIT_S.
"""

from collections import deque
from dataclasses import dataclass
import functools
import gc
import sys
import time
from typing import NamedTuple

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from diagnostic_msgs.msg import DiagnosticArray
from rosgraph_msgs.msg import Clock
from std_msgs.msg import Header, String

from acres_sim.config import ConfigError, load_config
from acres_sim.config.events import plan_of_parameter
from acres_sim.config.node_params import AGENT_NAMES, AGENT_PARAMS, SIM_PARAMS
from acres_sim.core.block import run_vehicle_block
from acres_sim.core.command import check_command
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.channels import DIAGNOSTICS_TOPIC, TF_TOPIC
from acres_sim.pipeline.event_topics import EVENT_LOG_TOPIC, EventStatus, scenario_entry
from acres_sim.pipeline.topics import TRUTH_TOPIC
from acres_sim.pipeline.models import site_georeference
from acres_sim.pipeline.step_channels import STEP_SENSORS, push_step_sensors
from acres_sim.pipeline.vehicle import SIM_SENSORS, build_vehicle, rig_simulation, static_tf
from acres_sim.config.scenario import vehicle_motion, vehicle_of_parameters
from acres_sim.config.scene import default_scene, load_scene
from acres_sim.config.terrain import FLAT, load_terrain
from acres_sim.config.vehicles import load_vehicle
from acres_sim.ros.ack_pacing import AckPacing
from acres_sim.ros.event_injection import SimInjections
from acres_sim.ros.graph_checks import (NOT_NAMED, cmd_vel_mismatches, other_simulator_error,
                                       other_simulators)
from acres_sim.ros.listeners import Listeners
from acres_sim.ros.message_types import message_class
from acres_sim.ros.params import (check_unknown_parameters, declare_node_params,
                                  declare_sensor_keys, sensor_config)
from acres_sim.ros.qos import (COMMAND_QOS, EVENT_LOG_QOS, OUTPUT_QOS, TRUTH_DEPTH, TRUTH_QOS,
                               no_qos_events, with_depth)
from acres_sim.ros.sensor_node import PROGRESS_TOPIC, run_node
from acres_sim.ros.take import take_all
from acres_sim.ros.tf import TfPublishers
from acres_sim.warmup import warm_block, warm_step_sensors, warmed

__all__ = ['SimNode', 'main']

FOREVER_S = 2 * 365 * 86400.0   # duration_s 0: two years of steps (the INS year table's reach)
AHEAD_STEPS = TRUTH_DEPTH // 2  # at rtf 0: how far the sim may run ahead of a sensor node
FAST_BLOCK_STEPS = 12           # steps per pass at rtf 0
START_GRACE_S = 0.5             # start_subscribers met: this long for their side of the match
FINISH_TIMEOUT_S = 30.0         # after the last step: wait this long at most for the sensors
HOLD_SLEEP_S = 0.0005           # at rtf 0: poll the sensors' progress this often while waiting
SERVICE_PERIOD_S = 0.1          # a pass of the executor (parameter services) this often
# At rtf > 0 a vehicle's part of the next block is computed while the next step is due
# in more than a recent part's time (the PART_QUANTILE of the last PART_HISTORY parts)
# + PART_MARGIN_S.  A quantile, not the longest: a part the OS held up now and then
# (2 % of them, three times as long) would keep the estimate above the gap between
# two steps, no part would fit in, and the block be finished late, in one go.
PART_MARGIN_S = 0.001
PART_QUANTILE = 0.95
PART_HISTORY = 50
# ... or while the block falls behind: its parts left take more than this share of
# the time until its first step is due (the rest goes to publishing the steps before
# it); then a part may hold the next step back by about its own time, where
# waiting for gaps would have left the whole rest of the block for its first step.
CATCH_UP_SHARE = 0.5
# The next block is begun this many times its vehicles' parts ahead of its first step's
# time: the parts fit only in the gaps between the steps being published.
LEAD_PARTS = 6.0
STUCK_S = 10.0                  # a reporter whose step stays put this long is not waited for
STALL_CHECK_S = 0.5             # waiting this long, look whether the node is still there
LOG_THROTTLE_S = 5.0
NAME_WAIT_S = 5.0               # for discovery to name another simulator before we refuse
ALONE_S = 3.0                   # before step 0: listen this long at least for another simulator
                                # (loopback discovery of a running rig can take seconds)
OTHER_SIM_WAIT_S = 25.0         # ... and wait this long for one to leave (a killed rig stays in
                                # the graph until its participant's lease, 20 s, runs out)
GRAPH_CHECK_S = 1.0             # look for cmd_vel publishers of the wrong type this often
LATENCY_SAMPLES = 100_000       # INS latencies kept for the summary (the last ones)


@dataclass
class _Block:
    """A block of steps being computed: its first step, its length, the steps'
    ROS times, and per vehicle what :meth:`SimNode._encode` gave (None: not yet)."""

    k0: int
    n: int
    t_ns: np.ndarray
    parts: list


class _Progress(NamedTuple):
    """A sensor node's progress as the sim knows it (SimNode.progress)."""

    agent: object      # its vehicle's _Agent
    step: int          # the last step it took; when ready, the last computed before it was
    moved_at: float    # time.monotonic() when step (or ready) last changed
    ready: bool        # ready, no truth taken yet

    def where(self):
        return (f'ready before step {self.step + 1}, no truth taken yet' if self.ready
                else f'at step {self.step}')


class _Agent:
    """One vehicle: its simulation, publishers and command."""

    def __init__(self, node, name, own, config):
        self.name = name
        self.drive = vehicle_of_parameters(name, own)   # spawn, route, laps or parked
        self.route_end_said = False
        params, site = load_vehicle(own['vehicle']), site_georeference(config)
        # the sim node simulates the physics and the INS; the sensor nodes the rest
        self.events_json = own['events']      # its events (the scenario's; injections add)
        self.plan = plan_of_parameter(own['events'], f'agents.{name}.events')
        self.build = lambda: build_vehicle(
            config, own['vehicle'], motion=vehicle_motion(self.drive, params, site), site=site,
            frame_prefix=own['frame_prefix'], namespace=own['namespace'], sensors=SIM_SENSORS,
            events=self.plan.for_vehicle(None))
        self.vehicle = self.build()
        self.sim = rig_simulation([self.vehicle],
                                  int(round((node.duration_s or FOREVER_S) * PHYSICS_HZ)),
                                  ground=node.ground)
        self.ins_channel = self.vehicle.channels.get('ins')
        self.status = EventStatus(self.vehicle)
        self.sensors_expected = int(config['gnss.enabled']) + int(config['imu.enabled'])
        quiet = {'event_callbacks': no_qos_events('publisher')}   # see acres_sim.ros.qos
        self.truth_pub = node.create_publisher(Odometry, self.topic(TRUTH_TOPIC), TRUTH_QOS,
                                               **quiet)
        # the sensors sampled from the state (barometer, magnetometer, ...)
        self.step_channels = [channel for name, channel in self.vehicle.channels.items()
                              if name in STEP_SENSORS]
        self.pubs = {}                # INS and step-sensor topic -> publisher
        channels = ([self.ins_channel] if self.ins_channel else []) + self.step_channels
        for topic, msgtype in [tt for channel in channels for tt in channel.topic_types]:
            self.pubs[topic] = node.create_publisher(message_class(msgtype), self.topic(topic),
                                                     node.output_qos, **quiet)
        self.command = None           # (speed, yaw rate, step received)
        msg_type = TwistStamped if node.cmd_vel_type == 'twist_stamped' else Twist
        self.on_cmd_vel = lambda m: node.on_cmd_vel(self, m)
        self.cmd_vel_sub = node.create_subscription(
            msg_type, self.topic('cmd_vel'), self.on_cmd_vel, COMMAND_QOS,
            event_callbacks=no_qos_events('subscription'))

    def topic(self, name):
        """Topic ``name`` of this vehicle, relative (see Vehicle.relative_topic)."""
        return self.vehicle.relative_topic(name)


class SimNode(Node):
    executable = 'sim_node'

    def __init__(self, **node_options):
        super().__init__('sim_node', **node_options)
        own = declare_node_params(self, SIM_PARAMS)
        self.rtf = own['rtf']
        self.duration_s = own['duration_s']
        self.start_timeout_s = own['start_timeout_s']
        self.start_subscribers = own['start_subscribers']
        self.publish_tf = own['publish_tf']
        self.cmd_vel_type = own['cmd_vel.type']
        self.follow_route = own['follow_route']
        self.cmd_vel_timeout_steps = own['cmd_vel.timeout_s'] * PHYSICS_HZ
        self.output_qos = with_depth(OUTPUT_QOS, own['output_depth'])
        self.scene = load_scene(own['scene']) if own['scene'] else default_scene()
        names = declare_node_params(self, [AGENT_NAMES])[AGENT_NAMES.name]
        declared = []
        for name in names:
            prefix = f'agents.{name}.'
            agent_own = declare_node_params(self, AGENT_PARAMS, prefix)
            defaults = load_config(rig=agent_own['vehicle'])
            values = declare_sensor_keys(self, defaults, prefix)
            declared.append((name, agent_own, sensor_config(self, values, prefix)))
        # one ground for every vehicle, its roughness of the first one's seed (as the
        # recorder's); None: flat, the plane of the physics
        self.terrain = load_terrain(own['terrain'], declared[0][2]['seed'])
        self.ground = None if self.terrain is None else self.terrain.field
        self.agents = [_Agent(self, name, agent_own, config)
                       for name, agent_own, config in declared]
        check_unknown_parameters(self)
        # one clock for the rig: every vehicle's run starts at the same UTC
        self.timeline = self.agents[0].vehicle.timeline
        for agent in self.agents[1:]:
            if agent.vehicle.timeline != self.timeline:
                raise ConfigError(
                    f'agents.{agent.name}.gnss.datum.start_utc = '
                    f'{agent.vehicle.config["gnss.datum.start_utc"]!r} differs from '
                    f'agents.{self.agents[0].name}\'s '
                    f'{self.agents[0].vehicle.config["gnss.datum.start_utc"]!r}: one rig has one '
                    'start time')
        self.clock_pub = self.create_publisher(Clock, '/clock', self.output_qos)
        # the fault events: their log (the scenario's at the start, then each request
        # on events/inject), their statuses, and the requests
        self.event_log_pub = self.create_publisher(String, EVENT_LOG_TOPIC, EVENT_LOG_QOS)
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC,
                                                     self.output_qos)
        self.injections = SimInjections(self, self.agents, self.event_log_pub)
        # /tf carries every vehicle's pose: a history as long in time as each INS topic's
        self.tf = TfPublishers(self, own['output_depth'] * len(self.agents))
        # node name -> _Progress: a node that is ready but has taken no truth yet
        # counts as having taken the last step computed before it was ready (its
        # truth starts after it)
        self.progress = {}
        self.progress_subs = []
        for agent in self.agents:
            handler = functools.partial(self._on_progress, agent)
            self.progress_subs.append((self.create_subscription(
                Header, agent.topic(PROGRESS_TOPIC), handler, OUTPUT_QOS,
                event_callbacks=no_qos_events('subscription')), handler))
        self._spun = 0.0
        self._graph_checked = 0.0
        # Before step 0 this sim publishes no /clock: one heard then is another sim's.
        self.clock_heard = False
        self._clock_probe = self.create_subscription(
            Clock, '/clock', self._on_other_clock, COMMAND_QOS, raw=True)
        # the last step: duration_s, or the reach of the INS year table (two years)
        self.last_steps = int(round((self.duration_s or FOREVER_S) * PHYSICS_HZ))
        self.step = 0                 # the next step to compute
        self.ahead = deque()          # computed steps not yet published: (k, messages, ins)
        self.pending = None           # the next block, being computed (_Block), at rtf > 0
        self.part_times = deque(maxlen=PART_HISTORY)   # of the last parts of a block [s]
        self.part_s = 0.0             # what a part takes: their PART_QUANTILE
        self.lookahead_steps = own['lookahead_steps']
        self.wall0 = None
        self.waited_s = 0.0           # at rtf 0: time spent waiting for the sensor nodes
        # every ack_every_steps: until the reliable subscribers acknowledged it all (ack_pacing)
        self.acks = AckPacing(self, own['ack_every_steps'], [
            self.clock_pub, self.tf.dynamic, self.diagnostics_pub,
            *(p for agent in self.agents for p in (agent.truth_pub, *agent.pubs.values()))])
        # at rtf > 0: wall time from each INS epoch's due time to its first message [s]
        self.ins_latency = deque(maxlen=LATENCY_SAMPLES)
        # what is published where nobody listens is skipped; /clock and the truth always go
        self.listeners = Listeners()
        self.always = {agent.truth_pub for agent in self.agents}

    # -- callbacks ------------------------------------------------------------

    def on_cmd_vel(self, agent, m):
        twist = m.twist if isinstance(m, TwistStamped) else m
        checked = check_command(float(twist.linear.x), float(twist.angular.z),
                                agent.vehicle.params)
        if checked.problem:
            self.get_logger().warning(f'{agent.cmd_vel_sub.topic_name}: {checked.problem}',
                                      throttle_duration_sec=LOG_THROTTLE_S)
        if checked.refused:
            return
        agent.command = (checked.speed_mps, checked.yaw_rate_radps, self.next_step)

    def _on_progress(self, agent, m):
        """A sensor node's last step taken, or that it is ready (a stamp of -1
        s): then it counts from the step it was ready at, so the sim runs at
        most AHEAD_STEPS past that step before the node takes its first truth."""
        before = self.progress.get(m.frame_id)
        now = time.monotonic()
        if m.stamp.sec >= 0:
            k = self.timeline.step_of_stamp(m.stamp.sec, m.stamp.nanosec)
            moved = before is None or before.step != k or before.ready
            self.progress[m.frame_id] = _Progress(agent, k, now if moved else before.moved_at,
                                                  False)
        elif before is None or not before.ready:  # ready (again): from the last step computed
            self.progress[m.frame_id] = _Progress(agent, self.step - 1, now, True)
        elif self.step == 0:                      # still ready before the run: not stuck
            self.progress[m.frame_id] = before._replace(moved_at=now)

    def poll_inputs(self, executor):
        """Take every waiting cmd_vel and progress message (acres_sim.ros.take);
        a pass of the executor, for the parameter services, ten times a second."""
        for agent in self.agents:
            take_all(agent.cmd_vel_sub, agent.on_cmd_vel)
        self.poll_progress()
        self.injections.poll(self.next_step)
        now = time.monotonic()
        if now - self._spun > SERVICE_PERIOD_S:
            self._spun = now
            executor.spin_once(timeout_sec=0.0)
        if now - self._graph_checked > GRAPH_CHECK_S:
            self._graph_checked = now
            self.check_cmd_vel_types()

    def check_cmd_vel_types(self):
        """Warn (throttled) of cmd_vel publishers whose type the sim does not take."""
        problem = cmd_vel_mismatches(self, [a.cmd_vel_sub.topic_name for a in self.agents],
                                     self.cmd_vel_type)
        if problem:
            self.get_logger().warning(problem, throttle_duration_sec=LOG_THROTTLE_S)

    def _on_other_clock(self, _data):
        self.clock_heard = True

    def refuse_other_simulators(self, executor, stop, wait_s=OTHER_SIM_WAIT_S):
        """ConfigError (one line) if another node publishes /clock or a vehicle's
        truth: at once if its /clock is heard (it runs), else if it is still
        there after ``wait_s`` (one that was killed leaves the graph only when
        its lease runs out)."""
        topics = ['/clock', *(a.truth_pub.topic_name for a in self.agents)]
        found = other_simulators(self, topics)
        if found is None:
            return
        seen = time.monotonic()
        said = False
        while found and not self.clock_heard and time.monotonic() < seen + wait_s \
                and not stop.is_set():
            if not said and time.monotonic() > seen + ALONE_S:   # silent: maybe killed
                said = True
                self.get_logger().info(
                    f'{", ".join(found[1])} publishes {found[0]} too: waiting up to {wait_s:g} '
                    's in case it is a simulator that was killed and has not left the graph yet')
            executor.spin_once(timeout_sec=0.1)
            found = other_simulators(self, topics)
        named_by = time.monotonic() + NAME_WAIT_S     # so that the line can name it
        while found and NOT_NAMED in found[1] and time.monotonic() < named_by \
                and not stop.is_set():
            executor.spin_once(timeout_sec=0.1)
            found = other_simulators(self, topics) or found
        if found and not stop.is_set():
            raise ConfigError(other_simulator_error(self, *found))

    def poll_progress(self):
        for sub, handler in self.progress_subs:
            take_all(sub, handler)

    # -- the loop -------------------------------------------------------------

    def publish_static_tf(self):
        data = msg.TYPESTORE.serialize_cdr(static_tf([agent.vehicle for agent in self.agents]),
                                           'tf2_msgs/msg/TFMessage')
        self.tf.publish_static(bytes(data))
        for agent in self.agents:       # and the event log's start: the scenario's events
            if agent.events_json.strip():
                self.event_log_pub.publish(scenario_entry(agent.name, agent.events_json))

    def wait_for_sensors(self, executor, stop):
        """Before step 0, until every vehicle's sensor nodes are ready (both
        sides of the truth matched, so none misses a step), and with
        ``start_subscribers``, every topic has that many subscribers (or the timeout).
        Meanwhile (ALONE_S at least) it looks for another simulator on the domain."""
        alone_until = time.monotonic() + ALONE_S
        if self.start_timeout_s <= 0:     # no wait for the sensor nodes, still for that look
            while time.monotonic() < alone_until and not stop.is_set():
                executor.spin_once(timeout_sec=0.02)
                self.refuse_other_simulators(executor, stop)
            return
        deadline = time.monotonic() + self.start_timeout_s
        missing = self._missing()
        if missing:
            self.get_logger().info(
                f'waiting up to {self.start_timeout_s:g} s (start_timeout_s) for '
                + ', '.join(f'{topic}: {want}' for topic, _n, want in missing))
        while (missing or time.monotonic() < alone_until) and time.monotonic() < deadline \
                and not stop.is_set():
            executor.spin_once(timeout_sec=0.02)
            self.poll_progress()
            self.refuse_other_simulators(executor, stop)
            missing = self._missing()
        self.refuse_other_simulators(executor, stop)
        self.check_cmd_vel_types()
        if missing:
            self.get_logger().warning(
                f'starting without all subscribers after {self.start_timeout_s:g} s: '
                + ', '.join(f'{topic} has {n} of {want}' for topic, n, want in missing))
        elif self.start_subscribers:   # their side of the match may trail ours a little
            stop.wait(START_GRACE_S)

    def _missing(self):
        """(topic, subscribers, wanted) of every topic short of subscribers."""
        missing = []
        for a in self.agents:
            ready = sum(1 for entry in self.progress.values() if entry.agent is a)
            have = min(ready, a.truth_pub.get_subscription_count())
            if have < a.sensors_expected:
                missing.append((f'{a.truth_pub.topic_name} (sensor nodes ready)', have,
                                a.sensors_expected))
        if self.start_subscribers:
            outputs = [self.clock_pub, *(p for a in self.agents for p in a.pubs.values())]
            if self.publish_tf and self.tf.dynamic is not None:
                outputs.append(self.tf.dynamic)
            counts = [(p, p.get_subscription_count()) for p in outputs]
            if self._clock_probe is not None:     # not a user of /clock: this sim's own probe
                counts[0] = (self.clock_pub, counts[0][1] - 1)
            missing += [(p.topic_name, n, self.start_subscribers)
                        for p, n in counts if n < self.start_subscribers]
        return missing

    @staticmethod
    def make_executor():
        # passed ten times a second (poll_inputs): the plain executor queues no events
        return SingleThreadedExecutor()

    def serve(self, executor, stop):
        """The run, then its summary in the log (for run_node)."""
        self.run(executor, stop)
        self.get_logger().info(self.summary())

    def terrain_text(self):
        """The terrain as the log names it: flat, or its name and digest's start."""
        if self.terrain is None:
            return FLAT
        return (f'{self.terrain.name} ({self.terrain.digest[:12]}, roughness seed '
                f'{self.terrain.roughness_seed})')

    def warm_up(self):
        """Compile (or load) the kernels on a throwaway copy of each vehicle's
        simulation, before the clock starts (acres_sim.warmup)."""
        def run_copies():
            for agent in self.agents:
                copy = agent.build()
                warm_block(rig_simulation([copy], 3, ground=self.ground))
                warm_step_sensors(copy)
        warmed(self.get_logger().info, [run_vehicle_block], run_copies)

    def run(self, executor, stop):
        """The loop, until ``duration_s`` or ``stop`` (a StopSignals) is set."""
        self.warm_up()
        self.wait_for_sensors(executor, stop)     # alone on the domain: then the static TF
        self.destroy_subscription(self._clock_probe)   # from now on /clock is this sim's
        self._clock_probe = None
        if stop.is_set():
            return
        self.publish_static_tf()
        pace = 'as fast as the sensor nodes keep up' if self.rtf == 0.0 else f'at rtf {self.rtf:g}'
        self.get_logger().info(f'running {len(self.agents)} vehicle(s) {pace}, '
                               + (f'{self.duration_s:g} s' if self.duration_s else 'until stopped')
                               + f', scene {self.scene.name}, terrain {self.terrain_text()}')
        gc.freeze()              # what the start made stays out of the collector's passes
        if self.rtf > 0.0:      # the first block before the clock starts: step 0 on time
            self.poll_inputs(executor)
            self._compute(self.lookahead_steps)
        self.wall0 = time.monotonic()
        while rclpy.ok() and not stop.is_set():
            if not self.ahead:
                if self.pending is None:
                    if self.step > self.last_steps:
                        self._wait_for_sensors_to_finish(stop)
                        break
                    if self.rtf == 0.0:
                        self._hold_for_sensors(stop)
                    self.poll_inputs(executor)
                    self._start_block(FAST_BLOCK_STEPS if self.rtf == 0.0
                                      else self.lookahead_steps)
                self._finish_block()
            k = self.ahead[0][0]          # the next step to publish
            if self.rtf > 0.0 and not self._wait_until_due(k, executor, stop):
                continue
            self.injections.hold(k, stop)    # the sensor nodes have the events
            self._publish_step(*self.ahead.popleft())
            self.acks.after(k)

    def _wait_until_due(self, k, executor, stop):
        """At rtf > 0: sleep until the wall time of step k (in slices, serving
        the inputs, when that is far); False if stopped meanwhile.  With many
        vehicles a whole block takes longer than a step lasts, so the wait
        also computes the next block, a vehicle at a time while there is time
        for one before step k, or while the block falls behind
        (:meth:`_part_now`): begun as late as it can still be done by its
        first step's time (LEAD_PARTS times the time of its parts), so a
        cmd_vel still acts as soon as it can."""
        due = self._due(k)
        while not stop.is_set():
            now = time.monotonic()
            early = due - now
            if early <= 0.0:
                return True
            if self.pending is None and self.step <= self.last_steps and \
                    self._due(self.step) - now <= LEAD_PARTS * len(self.agents) * self.part_s:
                self.poll_inputs(executor)
                self._start_block(self.lookahead_steps)
            elif self.pending is not None and None in self.pending.parts \
                    and self._part_now(early, now):
                self._compute_part()
                if None not in self.pending.parts:     # queued: the next can begin
                    self._finish_block()
            elif early > SERVICE_PERIOD_S:
                stop.wait(SERVICE_PERIOD_S)
                self.poll_inputs(executor)
            else:
                stop.wait(early)
        return False

    def _part_now(self, early, now):
        """Whether to compute a part of the pending block now, ``early`` [s]
        before the next step is due: it fits in before, or the block falls
        behind (CATCH_UP_SHARE)."""
        if early > self.part_s + PART_MARGIN_S:
            return True
        block = self.pending
        return block.parts.count(None) * self.part_s > \
            CATCH_UP_SHARE * (self._due(block.k0) - now)

    def _due(self, k):
        """The wall time of step k at rtf > 0."""
        return self.wall0 + k / (PHYSICS_HZ * self.rtf)

    def _hold_for_sensors(self, stop):
        """At rtf 0: wait while a sensor node that reports is AHEAD_STEPS behind."""
        waited_since = time.monotonic()
        while not stop.is_set():
            self.poll_progress()
            self.injections.poll(self.step)       # an injection is taken while we wait
            behind = self._behind(self.step - AHEAD_STEPS)
            if not behind:
                return
            slept = time.monotonic()
            time.sleep(HOLD_SLEEP_S)
            self.waited_s += time.monotonic() - slept
            if time.monotonic() - waited_since > STALL_CHECK_S:
                self._forget_absent(behind)
                waited_since = time.monotonic()

    def _behind(self, k):
        """The sensor nodes that report their progress and have not taken step ``k``."""
        return [name for name, entry in self.progress.items() if entry.step < k]

    def _forget_absent(self, names):
        """Stop waiting for those of ``names`` that have left the graph or have
        not moved on for STUCK_S (the sim never waits for ever)."""
        present = self._sensor_nodes_present()
        now = time.monotonic()
        left = [name for name in names if name not in present]
        stuck = [f'{name} ({self.progress[name].where()})' for name in names
                 if name in present and now - self.progress[name].moved_at > STUCK_S]
        if left:      # throttled: a node of the same name may come and go again
            self.get_logger().warning(f'{", ".join(left)} left: not waiting for it any more',
                                      throttle_duration_sec=LOG_THROTTLE_S)
        if stuck:
            self.get_logger().warning(f'{", ".join(stuck)} has not moved on for {STUCK_S:g} s: '
                                      'not waiting for it any more',
                                      throttle_duration_sec=LOG_THROTTLE_S)
        for name in names:
            if name not in present or now - self.progress[name].moved_at > STUCK_S:
                del self.progress[name]

    def _wait_for_sensors_to_finish(self, stop):
        """After the last step: until every reporting sensor node took it."""
        last = self.step - 1
        deadline = time.monotonic() + FINISH_TIMEOUT_S
        checked = time.monotonic()
        while not stop.is_set() and time.monotonic() < deadline and rclpy.ok():
            self.poll_progress()
            behind = self._behind(last)
            if not behind:
                return
            if time.monotonic() - checked > STALL_CHECK_S:
                self._forget_absent(behind)
                checked = time.monotonic()
            time.sleep(HOLD_SLEEP_S)
        behind = sorted(self._behind(last))
        if behind:
            self.get_logger().warning('stopping before ' + ', '.join(behind)
                                      + f' took the last step {last}')

    def _sensor_nodes_present(self):
        """The fully qualified names of the nodes in the graph now."""
        return {f'{ns.rstrip("/")}/{name}' for name, ns in self.get_node_names_and_namespaces()}

    def _commands(self):
        for agent in self.agents:
            command = agent.sim.commands[0]
            if agent.command is None:     # the route follower, or parked (1, 0, 0)
                follows = self.follow_route and not agent.drive.parked
                command[:] = (0.0, 0.0, 0.0) if follows else (1.0, 0.0, 0.0)
                continue
            speed, yaw_rate, k = agent.command
            if self.step - k > self.cmd_vel_timeout_steps:
                if command[1] != 0.0 or command[2] != 0.0:
                    self.get_logger().warning(
                        f'{agent.cmd_vel_sub.topic_name}: no command for more than '
                        f'{self.cmd_vel_timeout_steps / PHYSICS_HZ:g} s; stopping',
                        throttle_duration_sec=LOG_THROTTLE_S)
                speed = yaw_rate = 0.0
            command[:] = (1.0, speed, yaw_rate)

    def _compute(self, n):
        """Run the next ``n`` steps of every vehicle (fewer at the end of the
        run) and queue each step's messages in ``ahead``, in publishing order."""
        self._start_block(n)
        self._finish_block()

    def _start_block(self, n):
        """Begin the block of the next ``n`` steps (fewer at the end of the run):
        the commands are read now; its vehicles are computed one by one
        (:meth:`_compute_part`), then queued (:meth:`_finish_block`)."""
        k0 = self.step
        n = min(n, self.last_steps + 1 - k0)
        self._commands()
        self.pending = _Block(k0, n, self.timeline.ns_of_steps(np.arange(k0, k0 + n)),
                              [None] * len(self.agents))

    def _compute_part(self):
        """Compute the pending block for its next vehicle (its time kept: ``_part_took``)."""
        started = time.monotonic()
        block = self.pending
        i = block.parts.index(None)
        agent = self.agents[i]
        b = agent.sim.advance(block.n)[0]
        self._say_route_end(agent)
        block.parts[i] = self._encode(agent, b, block.k0, block.t_ns)
        self._part_took(time.monotonic() - started)

    def _part_took(self, seconds):
        """Keep the time of a part: ``part_s`` is the PART_QUANTILE of the last ones."""
        self.part_times.append(seconds)
        recent = sorted(self.part_times)          # (numpy's quantile costs 20 times more)
        self.part_s = recent[int(PART_QUANTILE * (len(recent) - 1))]

    def _finish_block(self):
        """Compute the rest of the pending block and queue its steps in ``ahead``."""
        block = self.pending
        while None in block.parts:
            self._compute_part()
        k0, k1 = block.k0, block.k0 + block.n
        clock = self.agents[0].vehicle.batches.clock(block.t_ns).messages()
        for j in range(k1 - k0):
            messages = [(self.clock_pub, clock[j])]
            ins = []
            for agent, (truth, ins_at, others_at) in zip(self.agents, block.parts):
                messages.append((agent.truth_pub, truth[j]))
                messages.extend(others_at.get(k0 + j, ()))
                ins.append(ins_at.get(k0 + j, ()))
            self.ahead.append((k0 + j, messages, ins))
        self.step = k1
        self.pending = None

    @property
    def next_step(self):
        """The first step whose computation has not begun."""
        return self.step if self.pending is None else self.pending.k0 + self.pending.n

    def _say_route_end(self, agent):
        """Log once that the vehicle's route ended (it parks there)."""
        follower = agent.sim.followers[0]
        if follower.done and not agent.route_end_said:
            agent.route_end_said = True
            self.get_logger().info(f'{agent.name}: {follower.end_note()}')

    def _advance(self, n):
        """Compute and publish the next ``n`` steps at once (for tests)."""
        self._compute(n)
        while self.ahead:
            self._publish_step(*self.ahead.popleft())

    def _publish_step(self, k, messages, ins):
        """Publish one step: /clock, then each vehicle's INS topics (timed at rtf > 0
        from the step's due time to the first), then each vehicle's truth, its
        event status and step-sensor deliveries (the sensor nodes publish what
        the truth gives only delay_s later: with 25 vehicles, the truth first held
        the last vehicle's INS back by milliseconds); every message but /clock
        and the truth only where a subscriber is matched (acres_sim.ros.listeners)."""
        clock_pub, clock = messages[0]
        clock_pub.publish(clock)
        for per_vehicle in ins:
            if per_vehicle and self.rtf > 0.0:
                self.ins_latency.append(time.monotonic() - self._due(k))
            for pub, data in per_vehicle:
                self.listeners.publish(pub, data)
        always = self.always
        for pub, data in messages[1:]:
            if pub in always:     # its sensor nodes listen (a cached count could miss one)
                pub.publish(data)
            else:
                self.listeners.publish(pub, data)

    def summary(self):
        """One line on the run: simulated and wall time, and the INS latency."""
        if self.wall0 is None:
            return 'stopped before the first step'
        wall = time.monotonic() - self.wall0
        sim_s = max(self.step - 1, 0) / PHYSICS_HZ
        text = (f'simulated {sim_s:.2f} s in {wall:.2f} s of wall time '
                f'({sim_s / max(wall, 1e-9):.2f}x real time')
        if self.rtf == 0.0:
            text += (f', {self.waited_s:.2f} s of it waiting for the sensor nodes, '
                     f'{self.acks.waited_s:.2f} s for acknowledgements)')
        else:
            text += f', rtf {self.rtf:g})'
        if self.ins_latency:
            ms = np.percentile(np.array(self.ins_latency) * 1e3, [50, 99, 100])
            text += (f'; INS published {ms[0]:.2f} / {ms[1]:.2f} / {ms[2]:.2f} ms '
                     '(median / p99 / max) after its step\'s time')
        return text

    def _encode(self, agent, b, k0, t_ns):
        """For the block ``b`` from step ``k0``: (truth messages per step, {step:
        [(publisher, bytes), ...]} of the INS, {step: [...]} of the vehicle's
        event status and of the step sensors' deliveries)."""
        vehicle = agent.vehicle
        truth = vehicle.batches.physics_truth(b.states, t_ns, vehicle.frame_prefix).messages()
        ins_at, others_at = {}, {}
        for k, data in agent.status.messages(b.truth_k, b.truth_ev):
            others_at[k] = [(self.diagnostics_pub, data)]
        push_step_sensors(vehicle, k0, b.states)
        k_end = k0 + len(t_ns) - 1
        for channel in agent.step_channels:      # at their delivery step, as the recorder
            for delivery in channel.drain(k_end):
                others_at.setdefault(delivery.k_delivery, []).extend(
                    (agent.pubs[topic], data) for topic, data in delivery.messages)
        if agent.ins_channel is None or not len(b.ins_k):
            return truth, ins_at, others_at
        tf = self.publish_tf and self.tf.dynamic is not None
        events = vehicle.events
        steps, results, _names = agent.ins_channel.faulted(b.ins_k, b.ins,
                                                           b.ins_ev if len(events) else None)
        step_of = dict(zip(self.timeline.ns_of_steps(b.ins_k).tolist(), b.ins_k.tolist()))
        computed = (b.ins_k, b.ins) if len(steps) < len(b.ins_k) else None   # a dropout
        for topic, t_ns, encoded in agent.ins_channel.encode_epochs(steps, results, tf,
                                                                    computed):
            pub = self.tf.dynamic if topic == TF_TOPIC else agent.pubs[topic]
            for ns, data in zip(t_ns.tolist(), encoded.messages()):
                ins_at.setdefault(step_of[ns], []).append((pub, data))
        return truth, ins_at, others_at


def main(args=None):
    return run_node(SimNode, args)


if __name__ == '__main__':
    sys.exit(main())
