"""The QoS profiles of the rig (the README's live-rig section and docs/interop.md)."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

try:
    from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
except ImportError:      # Humble
    from rclpy.qos_event import PublisherEventCallbacks, SubscriptionEventCallbacks

__all__ = ['COMMAND_QOS', 'EVENT_LOG_QOS', 'OUTPUT_QOS', 'STATIC_TF_QOS', 'TF_QOS',
           'TRUTH_DEPTH', 'TRUTH_QOS', 'no_qos_events', 'with_depth']

# Outputs: reliable, volatile, depth 10 (REP-2003): reliable and best-effort
# subscribers both match.
OUTPUT_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                        reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.VOLATILE)
# Commands in: best effort matches reliable and best-effort publishers alike
# (some teleop tools publish best effort).
COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                         reliability=ReliabilityPolicy.BEST_EFFORT,
                         durability=DurabilityPolicy.VOLATILE)
# tf2_ros's own: /tf depth 100, /tf_static transient local depth 1.
TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                    reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE)
STATIC_TF_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The event log: every entry kept for late subscribers (a bag recorder started later).
EVENT_LOG_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                           reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The truth stream for the sensor nodes: reliable and 10 s of physics steps
# deep, so a node that falls behind for a while loses nothing; at rtf 0 the sim
# waits for the nodes' progress long before this fills.
TRUTH_DEPTH = 1200
TRUTH_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=TRUTH_DEPTH,
                       reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)


def with_depth(profile, depth):
    """``profile`` keeping ``depth`` messages (the nodes' ``output_depth``)."""
    return QoSProfile(history=profile.history, depth=int(depth),
                      reliability=profile.reliability, durability=profile.durability)


def no_qos_events(kind):
    """``event_callbacks`` for a publisher (``kind`` 'publisher') or subscription
    without rclpy's default QoS event handlers (a warning when an endpoint of
    incompatible QoS or type shows up).  The sim node makes its per-vehicle
    endpoints so (some 17 a vehicle): each handler is a waitable that every
    pass of a SingleThreadedExecutor goes through, and with 25 vehicles their
    850 made the sim node's pass for its parameter services 8-16 ms long,
    which held steps back by as much.  A subscriber of incompatible QoS is
    still warned by rclpy in its own process."""
    callbacks = PublisherEventCallbacks if kind == 'publisher' else SubscriptionEventCallbacks
    return callbacks(use_default_callbacks=False)
