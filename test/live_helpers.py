"""Helpers of the live-rig tests: a probe that records topics as CDR bytes,
and the rig started with ``acres-sim up`` as a child process.

The probe subscribes reliable with a deep history, so that it loses nothing
the rig publishes while the test spins it.  Waiting is always for a
condition, with a timeout that only turns a hang into a failure.
"""

import calendar
import struct
import time

import pytest

DISCOVERY_TIMEOUT = 60.0
PROGRESS_AGAIN_S = 0.2        # as the sensor nodes say their progress again (PROGRESS_IDLE_S)
# The ROS time of step 0: the default gnss.datum.start_utc, 2026-09-23T15:00:00Z.
START_NS = calendar.timegm((2026, 9, 23, 15, 0, 0)) * 10**9


def stamp_s(message):
    """The simulated time of a message's stamp [s]: its ROS time less the start."""
    stamp = message.clock if hasattr(message, 'clock') else message.header.stamp
    return (stamp.sec * 10**9 + stamp.nanosec - START_NS) * 1e-9


def node_names(node):
    """The fully qualified names of the nodes in the graph, as ``node`` sees it."""
    return {f'{ns.rstrip("/")}/{name}' for name, ns in node.get_node_names_and_namespaces()}


def probe_qos(depth=5000, transient=False):
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if transient
                      else DurabilityPolicy.VOLATILE)


def gate_qos():
    """A subscription that only counts (Probe.open_gate): best effort, depth 1."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                      reliability=ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.VOLATILE)


class Probe:
    """Records every message of ``topics`` ({name: message type}) as bytes,
    with the wall time it arrived, in ``got[name]``.

    With ``report_progress`` it tells the sim node how far it got on /clock,
    as the sensor nodes do (``sim/sensor_progress``), so that at rtf 0 the
    sim never runs further ahead of it than the probe's history holds; and,
    as they do, it says it again every PROGRESS_AGAIN_S while it spins: its
    last report may reach the sim late on a loaded machine, and the sim
    waits for the last step at its end (it let the probe go after 10 s in 6
    of 16 runs without this)."""

    def __init__(self, node, topics, transient=(), report_progress=False):
        from std_msgs.msg import Header

        self.node = node
        self.got, self.arrived, self.subscriptions = {}, {}, {}
        self.progress = (node.create_publisher(Header, '/sim/sensor_progress', 10)
                         if report_progress else None)
        self.last_report = None        # the last progress message sent
        if report_progress:
            node.create_timer(PROGRESS_AGAIN_S, self._report_again)
        self.add(topics, transient)

    def add(self, topics, transient=()):
        """Subscribe to more topics."""
        for name, msg_type in topics.items():
            self.got[name], self.arrived[name] = [], []
            self.subscriptions[name] = self.node.create_subscription(
                msg_type, name, self._keeper(name), probe_qos(transient=name in transient),
                raw=True)

    def publishers(self, name):
        """The number of publishers matched to the probe's subscription of ``name``."""
        return self.subscriptions[name].get_publisher_count()

    def _keeper(self, name):
        from acres_sim.ros.take import take_all

        def keep_one(data):
            self.got[name].append(bytes(data))
            self.arrived[name].append(time.monotonic())
            if self.progress is not None and name == '/clock':
                self._report(data)

        def keep(data):        # this message, then all queued behind it
            keep_one(data)
            take_all(self.subscriptions[name], keep_one)
        return keep

    def _report(self, data):
        from builtin_interfaces.msg import Time
        from std_msgs.msg import Header

        sec, nanosec = struct.unpack_from('<iI', data, 4)   # CDR: 4-byte header, then the stamp
        step = round((sec * 10**9 + nanosec) * 120 / 1e9)
        if step % 12 == 0:
            self.last_report = Header(stamp=Time(sec=sec, nanosec=nanosec),
                                      frame_id=self.node.get_fully_qualified_name())
            self.progress.publish(self.last_report)

    def _report_again(self):
        if self.last_report is not None:
            self.progress.publish(self.last_report)

    def open_gate(self, child, timeout=DISCOVERY_TIMEOUT):
        """Let a rig started with ``--wait-for-subscribers 2`` begin, once the
        probe hears every one of its topics.  A match has two sides: the
        sim counts a subscriber once it has discovered the reader, and the
        reader takes messages only once it has discovered the publisher, so
        the sim's short grace between the two can be too short on a loaded
        machine (the first /clock messages were lost).  So: wait for this
        side of every topic, then add a second subscriber to each on a node
        that is never spun; the sim sees its second subscriber only now."""
        import rclpy

        self.spin_until(lambda: all(self.publishers(t) for t in self.subscriptions), timeout,
                        'a publisher of every topic', child)
        self.gate = rclpy.create_node(self.node.get_name() + '_gate')
        for name, subscription in self.subscriptions.items():
            self.gate.create_subscription(subscription.msg_type, name, lambda _data: None,
                                          gate_qos(), raw=True)

    def spin_until(self, condition, timeout, what, child=None, explain=None):
        """Spin until ``condition()``; fail after ``timeout`` s or if ``child`` exits
        (``explain()``: more for the failure's message)."""
        import rclpy

        deadline = time.monotonic() + timeout
        while not condition():
            if child is not None and not child.running():
                self._fail(f'the rig exited while waiting for {what}', child, explain)
            if time.monotonic() > deadline:
                self._fail(f'no {what} within {timeout} s', child, explain)
            rclpy.spin_once(self.node, timeout_sec=0.05)

    @staticmethod
    def _fail(message, child, explain):
        pytest.fail(message + (f':\n{child.stop()}' if child is not None else '')
                    + (f'\n{explain()}' if explain is not None else ''))

    def spin_for(self, seconds):
        import rclpy

        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rclpy.spin_once(self.node, timeout_sec=0.05)

    def last(self, name, msg_type):
        """The last message of ``name``, decoded, or None."""
        from rclpy.serialization import deserialize_message

        got = self.got[name]
        return deserialize_message(got[-1], msg_type) if got else None

    def decoded(self, name, msg_type):
        from rclpy.serialization import deserialize_message

        return [deserialize_message(data, msg_type) for data in self.got[name]]


def up_args(*args):
    """The child arguments of ``acres-sim up ARGS``."""
    return ['-m', 'acres_sim.cli', 'up', *args]


def run_until_exit(probe, child, timeout, what='the rig to finish'):
    """Spin the probe while the child runs; its exit status and output."""
    probe.spin_until(lambda: not child.running(), timeout, what)
    probe.spin_for(0.5)                       # the last messages in flight
    output = child.stop()
    return child.process.returncode, output
