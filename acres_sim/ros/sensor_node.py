"""What the GNSS-receiver and IMU nodes share: their parameters and vehicle,
the truth stream from the sim node, the sensor's channel, the input's health.

A sensor node is driven by the stamps of the truth it receives, never by wall
time.  Each truth message is one physics step k, recovered from the stamp
(ROS time, start_utc + k / 120) by rounding, in integers
(:meth:`acres_sim.pipeline.timeline.Timeline.step_of_stamp`; t = k / 120, as
the headless loop computes it); the message carries
the state as the sim holds it, and R and the centre of mass are rebuilt from
it with the physics module's own function, so the node's model sees the
numbers the recorder's model sees.  The vehicle is built as the recorder
builds it (:func:`acres_sim.pipeline.vehicle.build_vehicle`), with this
node's sensor only.  Per step: the model takes the truth and samples when
its Due time has come; the sample enters the sensor's channel
(:mod:`acres_sim.pipeline.channels`) and its messages are published as the
channel encodes them, stamped with the sample time, at the first step that
reaches t_sample + delay_s (the recorder's delivery step).

A step that does not follow the one before is a gap: counted, logged
(throttled), shown in ``/diagnostics``, and handled like a reset of the
sensor (its schedule starts again at that step; the IMU restarts its
differences).  A step back in time (the sim started again) resets the model.
The output has its own status beside the input's: gaps in the sample times
published (a node started after the sim, a restarted sensor) and catch-up
bursts longer than the subscribers' history (after a stall), see
:mod:`acres_sim.ros.output_health`.  The node tells the sim how far it got
on ``sim/sensor_progress`` (the sim waits for it at rtf 0), and every
``ack_every_steps`` steps waits until its reliable subscribers have
acknowledged what it published (:mod:`acres_sim.ros.ack_pacing`).
"""

import functools
import gc
import os
import struct
import sys
import time

import numpy as np
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from nav_msgs.msg import Odometry
from std_msgs.msg import Header

from acres_sim.config import ConfigError, load_config
from acres_sim.config.node_params import SENSOR_NODE_PARAMS
from acres_sim.core import jit
from acres_sim.core.physics import STATE_SIZE, S_PX, S_QX, truth_from_state
from acres_sim.core.truth import PHYSICS_HZ, Truth
from acres_sim.parent import end_with_parent, parent_gone
from acres_sim.pipeline.batches import truth_offsets
from acres_sim.pipeline.channels import DIAGNOSTICS_TOPIC
from acres_sim.pipeline.timeline import NS_PER_S
from acres_sim.pipeline.topics import TRUTH_TOPIC
from acres_sim.pipeline.vehicle import build_vehicle
from acres_sim.rig import STOP_GRACE_S
from acres_sim.ros.ack_pacing import AckPacing, unacknowledged
from acres_sim.ros.event_injection import SensorEvents
from acres_sim.ros.listeners import Listeners
from acres_sim.ros.message_types import message_class
from acres_sim.ros.params import (check_unknown_parameters, declare_node_params,
                                  declare_sensor_keys, sensor_config)
from acres_sim.ros.output_health import OutputHealth
from acres_sim.ros.qos import OUTPUT_QOS, TRUTH_QOS, with_depth
from acres_sim.ros.take import fast_executor, take_all
from acres_sim.stop_signals import STARTING, StopSignals
from acres_sim.warmup import warm_truth, warmed

__all__ = ['PROGRESS_TOPIC', 'SensorNode', 'exit_now', 'run_node', 'run_nodes']

PROGRESS_TOPIC = 'sim/sensor_progress'
PROGRESS_EVERY = 60            # steps between progress messages (0.5 s of sim time; at rtf 0
                               # the sim runs up to AHEAD_STEPS, 600, past the slowest node)
DIAGNOSTICS_PERIOD = PHYSICS_HZ  # steps between the input's diagnostics (1 s of sim time)
PROGRESS_IDLE_S = 0.2          # wall time: without truth this long, report progress (and the
                               # events taken) again, this often
PROGRESS_MOVING_S = 1.0        # wall time: while the truth comes, report at least this often
                               # (a slow node, 60 steps apart, is not taken for stuck)
LOG_THROTTLE_S = 5.0
# A node that does not end this long after SIGINT / SIGTERM says where it hangs and
# ends itself: before up and launch send SIGTERM (STOP_GRACE_S), and also when
# nobody would (a parent that died, a test that only waits).
STOP_LIMIT_S = STOP_GRACE_S - 2.0
FLUSH_S = 2.0                  # at most this long for the subscribers to have the last messages


_STAMP = struct.Struct('<iI')


class SensorNode(Node):
    """A node with one sensor model of one vehicle.  Subclasses set
    ``sensor`` ('gnss' or 'imu') and implement :meth:`build`,
    :meth:`reset_model` and :meth:`on_step` (take the truth, return the rows
    sampled); the node publishes what the sensor's channel delivers."""

    sensor = None

    def __init__(self, name, **node_options):
        super().__init__(name, **node_options)
        own = declare_node_params(self, SENSOR_NODE_PARAMS)
        self.frame_prefix = own['frame_prefix']
        self.output_qos = with_depth(OUTPUT_QOS, own['output_depth'])
        defaults = load_config(rig=own['vehicle'])
        self.config = sensor_config(self, declare_sensor_keys(self, defaults))
        if not self.config[f'{self.sensor}.enabled']:
            raise ConfigError(f'{self.sensor}.enabled is false for '
                              f'{self.get_fully_qualified_name()}: nothing to simulate')
        # the vehicle's events: the scenario's, and those injected at runtime
        self.injected = SensorEvents(self, own['events'])
        # driven by the sim node: no route here; the node's namespace is the vehicle's;
        # its event clock is advanced by the truth, step by step
        self.vehicle = build_vehicle(self.config, own['vehicle'], scene=self.scene(),
                                     frame_prefix=self.frame_prefix, sensors=(self.sensor,),
                                     events=self.injected.plan.for_vehicle(None))
        self.channel = self.vehicle.channels[self.sensor]
        # the sensor's further outputs on channels of their own (the GNSS heading)
        self.side_channels = [channel for name, channel in self.vehicle.channels.items()
                              if name != self.sensor]
        self.timeline = self.vehicle.timeline   # the sim's: the rig gives all one start_utc
        self.output = OutputHealth(self.config[f'{self.sensor}.hz'], own['output_depth'])
        self._state = np.zeros(STATE_SIZE)
        params = self.vehicle.params
        self._com = np.array([params.com_x_m, params.com_y_m, params.com_z_m])
        self._layout = self.vehicle.batches.truth_layout(self.frame_prefix)
        self._stamp_at, self._pose_at, self._twist_at = truth_offsets(self._layout)
        self._state[S_QX + 3] = 1.0
        warmed(self.get_logger().info, [truth_from_state], warm_truth)   # before the truth
        self.last_step = None
        self.counts = {'truth': 0, 'gaps': 0, 'steps_missed': 0, 'restarts': 0,
                       'bad_messages': 0, 'delivered': 0, 'published': 0}
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC,
                                                     self.output_qos)
        # topic -> publisher of everything the channels send (a type that is not
        # installed: its topic is left out, with one warning)
        self.outputs = {}
        self.listeners = Listeners()    # an output nobody subscribes to is not published
        for channel in [self.channel] + self.side_channels:
            for topic, msgtype in channel.topic_types:
                if topic == DIAGNOSTICS_TOPIC:
                    self.outputs[topic] = self.diagnostics_pub
                    continue
                try:
                    kind = message_class(msgtype)
                except ImportError:
                    self.get_logger().warning(
                        f'{msgtype} is not installed: no {topic} (on a machine without ROS 2 '
                        'installed, `make setup` builds it)')
                    continue
                self.outputs[topic] = self.create_publisher(kind, topic, self.output_qos)
        # every ack_every_steps: until the reliable subscribers acknowledged it all
        # (ack_pacing); each publisher once (/diagnostics is some outputs' too)
        self.acks = AckPacing(self, own['ack_every_steps'], list(
            {id(p): p for p in [self.diagnostics_pub, *self.outputs.values()]}.values()))
        self.build()
        check_unknown_parameters(self)
        self._progress = self.create_publisher(Header, PROGRESS_TOPIC, OUTPUT_QOS)
        self._truth_at = -float('inf')      # time.monotonic() of the last truth taken
        self._reported_at = -float('inf')   # ... and of the last progress reported
        self.create_timer(PROGRESS_IDLE_S, self._report_when_idle,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        # Subscribed last: once the sim sees this subscription, the node is ready.
        self._truth_sub = self.create_subscription(Odometry, TRUTH_TOPIC, self._on_truth,
                                                   TRUTH_QOS, raw=True)

    # -- to implement ---------------------------------------------------------

    def scene(self):
        """The obstacle scene the sensor sees (None: the packaged one)."""
        return None

    def build(self):
        raise NotImplementedError

    def reset_model(self):
        raise NotImplementedError

    def on_step(self, k, truth, restart, view, teleported):
        """Take the truth of step k (``restart``: the sensor starts again here;
        ``view``: the events' views at k, None without events; ``teleported``:
        a teleport event put the vehicle where it is at k); return [row, ...]
        sampled at k."""
        raise NotImplementedError

    def deliver(self, delivery):
        """Publish the messages of one sample the channel delivers; whether any
        went out (none does to a topic without a subscriber)."""
        sent = False
        for topic, data in delivery.messages:
            publisher = self.outputs.get(topic)
            if publisher is not None:
                sent = self.listeners.publish(publisher, data) or sent
        return sent

    # -- the truth stream -----------------------------------------------------

    def _on_truth(self, data):
        """One truth message, then every one queued behind it (see acres_sim.ros.take)."""
        self._take_truth(data)
        take_all(self._truth_sub, self._take_truth)
        burst = self.output.pass_done()
        if burst:
            self.get_logger().warning(
                f'caught up {burst} {self.sensor} samples at once (more than the output '
                f'history of {self.output.depth}): a subscriber keeping {self.output.depth} '
                'may have lost some', throttle_duration_sec=LOG_THROTTLE_S)

    def _take_truth(self, data):
        if len(data) != self._layout.dtype.itemsize:
            self.counts['bad_messages'] += 1
            self.get_logger().error(
                f'{self._truth_sub.topic_name}: a message of {len(data)} bytes, not the '
                f'{self._layout.dtype.itemsize} of this vehicle\'s truth (frame prefix '
                f'{self.frame_prefix!r}); ignored', throttle_duration_sec=LOG_THROTTLE_S)
            return
        sec, nanosec = _STAMP.unpack_from(data, self._stamp_at)
        self.take(self.timeline.step_of_stamp(sec, nanosec), data)

    def take(self, k, data):
        """One truth message (its CDR bytes ``data``) of step ``k``."""
        self.counts['truth'] += 1
        restart = False
        if self.last_step is not None and k <= self.last_step:
            self.get_logger().warning(
                f'truth went back from step {self.last_step} to {k}: the sim started again; '
                f'the {self.sensor} model starts again too',
                throttle_duration_sec=LOG_THROTTLE_S)
            self.reset_model()
            for channel in [self.channel] + self.side_channels:
                channel.reset()
            self.vehicle.events.reset()
            self.counts['restarts'] += 1
            self.output.started(k)
            restart = True
        elif self.last_step is None or k != self.last_step + 1:
            if self.last_step is None:
                self.output.started(k)
                if k > 0:
                    self.get_logger().warning(
                        f'the first truth is of step {k} ({k / PHYSICS_HZ:g} s after the sim\'s '
                        f'start): no {self.sensor} output for that time')
            else:
                missed = k - self.last_step - 1
                self.counts['gaps'] += 1
                self.counts['steps_missed'] += missed
                self.get_logger().warning(
                    f'gap in the truth stream: {missed} physics steps missing before step {k} '
                    f'({self.counts["gaps"]} gaps so far); the {self.sensor} starts again there',
                    throttle_duration_sec=LOG_THROTTLE_S)
            restart = True
        self.last_step = k
        truth = self._truth(k, data)
        view, teleported = None, False
        events = self.vehicle.events
        if len(events):           # as the block kernel: a teleport, then the clock takes p
            teleported = events.teleports_at(k / PHYSICS_HZ)
            view = events.take(k / PHYSICS_HZ, truth.p)
        for row in self.on_step(k, truth, restart, view, teleported):
            self.channel.push_row(k, row, view)
        for delivery in self.channel.drain(k):
            self.counts['delivered'] += 1               # the sample's time came ...
            self.counts['published'] += bool(self.deliver(delivery))   # ... and someone took it
            self.output.published(delivery.k_sample)
        for channel in self.side_channels:
            for delivery in channel.drain(k):
                self.deliver(delivery)
        now = time.monotonic()
        if restart:           # the first truth, after a gap or a restart: which entry it has
            self.injected.report()
        if k % PROGRESS_EVERY == 0 or now - self._reported_at >= PROGRESS_MOVING_S:
            self._report_progress()
        if k % DIAGNOSTICS_PERIOD == 0:
            self.diagnostics_pub.publish(self._input_diagnostics(k))
        self.acks.after(k)
        self._truth_at = time.monotonic()

    def _report_when_idle(self):
        """Without truth for PROGRESS_IDLE_S (before the run, after it, in a stall):
        the progress again, and which event entry the node took (so the sim knows
        that it takes them).  While the truth flows the steps report the progress
        (every PROGRESS_EVERY steps, and every PROGRESS_MOVING_S at least), and
        the entry is said at the first truth, at a restart and when one is
        taken: with 25 vehicles the timers' messages were 500 a second."""
        if time.monotonic() - self._truth_at < PROGRESS_IDLE_S:
            return
        self._report_progress()
        self.injected.report()

    def _report_progress(self):
        """Tell the sim the last step taken (every PROGRESS_EVERY steps, and
        every PROGRESS_IDLE_S of wall time without truth, so also after the truth
        stops); before the first truth, that the node is ready -- its side of
        the truth is matched -- as a stamp of -1 s."""
        name = self.get_fully_qualified_name()
        self._reported_at = time.monotonic()
        if self.last_step is None:
            if self._truth_sub.get_publisher_count() > 0:
                self._progress.publish(Header(stamp=Time(sec=-1), frame_id=name))
        else:   # also unchanged: a sim started again meanwhile hears of the node
            self._progress.publish(Header(stamp=self._stamp(self.last_step), frame_id=name))

    @staticmethod
    def make_executor():
        return fast_executor()

    def serve(self, executor, stop):
        """Spin until ``stop`` is set (a StopSignals; the EventsExecutor's own spin() keeps
        a core busy in rclpy 7.1, so a loop of spin_once)."""
        while not stop.is_set() and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)

    def _truth(self, k, data):
        """The Truth of a message: its position and quaternion (7 doubles in a
        row, as in the state) and its two velocities (6 doubles)."""
        x = self._state
        x[S_PX:S_QX + 4] = np.frombuffer(data, np.float64, 7, self._pose_at)   # S_QX = S_PX + 3
        vw = np.frombuffer(data, np.float64, 6, self._twist_at)
        R, p_c = truth_from_state(x, self._com)
        return Truth(step=k, p=x[S_PX:S_PX + 3].copy(), R=R, v=vw[:3].copy(), w=vw[3:].copy(),
                     p_c=p_c)

    def _stamp(self, k):
        """builtin_interfaces/Time of step ``k``."""
        sec, nanosec = divmod(self.timeline.ns(k), NS_PER_S)
        return Time(sec=sec, nanosec=nanosec)

    def _input_diagnostics(self, k):
        c = self.counts
        level = DiagnosticStatus.OK if c['gaps'] == 0 and c['bad_messages'] == 0 \
            else DiagnosticStatus.WARN
        text = 'truth complete' if level == DiagnosticStatus.OK else \
            f'{c["gaps"]} gaps ({c["steps_missed"]} steps) in the truth stream'
        status = DiagnosticStatus(
            level=level, name=f'{self.get_fully_qualified_name()}: truth input', message=text,
            hardware_id='', values=[KeyValue(key=name, value=str(value))
                                    for name, value in (('last_step', k), *c.items())])
        problem = self.output.problem()
        output = DiagnosticStatus(
            level=DiagnosticStatus.WARN if problem else DiagnosticStatus.OK,
            name=f'{self.get_fully_qualified_name()}: {self.sensor} output',
            message=problem or 'output complete', hardware_id='',
            values=[KeyValue(key=name, value=str(value)) for name, value in
                    (('depth', self.output.depth), *self.output.counts.items())])
        array = DiagnosticArray(status=[status, output])
        array.header.stamp = self._stamp(k)
        return array


def flush(node, timeout_s=FLUSH_S):
    """Wait (at most ``timeout_s``) until every subscriber has what ``node`` published."""
    unacknowledged(node.publishers, timeout_s)


def run_node(node_class, args=None):
    """Start ``node_class`` (a SensorNode, or the SimNode) on its
    ``make_executor()``, let it ``serve`` until SIGINT / SIGTERM, then let its
    subscribers have what it published (see :func:`run_nodes`)."""
    return run_nodes(node_class.executable, [node_class], node_class, args)


def run_nodes(executable, builds, node_class, args=None, prepare=None):
    """Build the nodes (``builds``: callables, each returning one node) in one
    process, on ``node_class.make_executor()``, let the first ``serve`` them
    all until SIGINT / SIGTERM, then let their subscribers have what they
    published (``prepare``: called with the nodes first); a configuration
    mistake is one line on stderr and exit status 2.  Signals only set a
    flag, from the start to the end (acres_sim.stop_signals); the process
    then ends at once (exit_now).
    The process ends with the one that started it (acres_sim.parent)."""
    end_with_parent()                  # SIGTERM when the parent dies (ros2/launch#666)
    if parent_gone():
        print(f'{executable}: the process that started it has ended; not starting',
              file=sys.stderr)
        return 1
    signals = STARTING if STARTING.active else StopSignals().__enter__()   # ends with us
    if signals.is_set():
        print(f'{executable}: stopped by {signals.name} while starting', file=sys.stderr)
        exit_now(0)
    signals.end_within(STOP_LIMIT_S, executable)
    exit_now(_run_nodes(executable, builds, node_class, args, signals, prepare))


def _run_nodes(executable, builds, node_class, args, signals, prepare):
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    nodes = []
    say_fallback = None
    try:
        for build in builds:
            nodes.append(build())
            if signals.is_set():
                return 0
        if prepare is not None:
            prepare(nodes)
        say_fallback = functools.partial(_say_fallback, nodes[0].get_logger())
        jit.fallback_hooks.append(say_fallback)
        executor = node_class.make_executor()
        for node in nodes:
            executor.add_node(node)
        # The objects of the start (numba, numpy, rclpy: some 150k) are kept out of
        # the collector's passes: a full pass over them paused a busy rig for tens of ms.
        gc.freeze()
        nodes[0].serve(executor, signals)
        deadline = time.monotonic() + FLUSH_S
        for node in nodes:
            flush(node, max(deadline - time.monotonic(), 0.0))
    except ConfigError as err:
        print(f'{executable}: {err}', file=sys.stderr)
        return 2
    except ExternalShutdownException:
        pass
    finally:
        if say_fallback in jit.fallback_hooks:
            jit.fallback_hooks.remove(say_fallback)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()        # also closes the log files
    return 0


def _say_fallback(logger, kernel):
    """A kernel left to numba's JIT (acres_sim.core.jit.fallback_hooks), in one line."""
    logger.warning(f'{kernel}: called with arguments the kernels compiled ahead of time '
                   'were not built for; numba compiles it now (a second or more, this once)')


def exit_now(code):
    """End the process with status ``code`` once stdout and stderr are flushed,
    without Python's finalisation: collecting the ~150k objects of a node
    (numba, numpy, rclpy) took seconds on a loaded machine, longer than launch
    waits before it escalates to SIGTERM."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
