"""Smoke test over real DDS (rmw_fastrtps_cpp): the message types acres_sim publishes.

A child process runs this file as a script and publishes one sample of each
type; the test process subscribes and expects every sample back unchanged.
Both sides wait for matched endpoints, never for a fixed time.  The timeouts
only turn a hang into a failure (discovery took up to ~3 s on this machine).
"""

import sys
import time

import pytest

pytestmark = pytest.mark.requires_rclpy

DISCOVERY_TIMEOUT = 30.0
DELIVERY_TIMEOUT = 30.0


def reliable_volatile_qos():
    """The QoS both sides use: reliable, volatile, keep last 10."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


def sample_messages():
    """One message per topic, with a distinct value in (almost) every field."""
    from builtin_interfaces.msg import Time
    from geometry_msgs.msg import TransformStamped
    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Imu, NavSatFix, NavSatStatus
    from tf2_msgs.msg import TFMessage

    imu = Imu()
    imu.header.stamp = Time(sec=1_700_000_000, nanosec=250_000_000)
    imu.header.frame_id = 'imu_link'
    imu.orientation.x, imu.orientation.y, imu.orientation.z, imu.orientation.w = 0.1, 0.2, 0.3, 0.9
    imu.orientation_covariance = [0.01 * (i + 1) for i in range(9)]
    imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = 0.01, -0.02, 0.5
    imu.angular_velocity_covariance = [1e-4 * (i + 1) for i in range(9)]
    imu.linear_acceleration.x, imu.linear_acceleration.y = 0.3, -0.1
    imu.linear_acceleration.z = 9.80665
    imu.linear_acceleration_covariance = [2e-3 * (i + 1) for i in range(9)]

    fix = NavSatFix()
    fix.header.stamp = Time(sec=1_700_000_000, nanosec=500_000_000)
    fix.header.frame_id = 'gnss_antenna'
    fix.status.status = NavSatStatus.STATUS_GBAS_FIX
    fix.status.service = NavSatStatus.SERVICE_GPS | NavSatStatus.SERVICE_GALILEO
    fix.latitude, fix.longitude, fix.altitude = 52.2297, 21.0122, 110.5
    fix.position_covariance = [0.5, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 2.0]
    fix.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN

    odom = Odometry()
    odom.header.stamp = Time(sec=1_700_000_001, nanosec=1)
    odom.header.frame_id = 'odom'
    odom.child_frame_id = 'base_link'
    odom.pose.pose.position.x, odom.pose.pose.position.y = 12.5, -3.75
    odom.pose.pose.orientation.z, odom.pose.pose.orientation.w = 0.6, 0.8
    odom.pose.covariance = [0.001 * i for i in range(36)]
    odom.twist.twist.linear.x, odom.twist.twist.angular.z = 2.5, 0.1
    odom.twist.covariance = [0.002 * i for i in range(36)]

    clock = Clock(clock=Time(sec=1_700_000_002, nanosec=999_999_999))

    transform = TransformStamped()
    transform.header.stamp = Time(sec=1_700_000_003, nanosec=42)
    transform.header.frame_id = 'base_link'
    transform.child_frame_id = 'imu_link'
    transform.transform.translation.x, transform.transform.translation.z = 0.4, 1.2
    transform.transform.rotation.w = 1.0
    tf = TFMessage(transforms=[transform])

    return {'/imu/data': imu, '/gnss/fix': fix, '/odom': odom, '/clock': clock, '/tf': tf}


def wait_until(condition, node, child, timeout, what):
    """Spin `node` until `condition()` holds; fail if `child` exits or `timeout` passes."""
    import rclpy

    deadline = time.monotonic() + timeout
    while not condition():
        if not child.running():
            pytest.fail(f'publisher process exited while waiting for {what}: {child.stop()}')
        if time.monotonic() > deadline:
            pytest.fail(f'no {what} within {timeout} s; publisher stderr: {child.stop()}')
        rclpy.spin_once(node, timeout_sec=0.1)


def keep_first(received, topic):
    """A subscription callback that stores the first message of `topic` in `received`."""
    def callback(message):
        received.setdefault(topic, message)
    return callback


def test_messages_cross_dds_unchanged(ros_context, ros_child):
    """Each sample published by the child arrives here with every field equal."""
    import rclpy
    from rclpy.utilities import get_rmw_implementation_identifier

    assert get_rmw_implementation_identifier() == 'rmw_fastrtps_cpp'
    expected = sample_messages()
    received = {}
    node = rclpy.create_node('dds_smoke_subscriber')
    subscriptions = [
        node.create_subscription(type(message), topic, keep_first(received, topic),
                                 reliable_volatile_qos())
        for topic, message in expected.items()]

    child = ros_child([__file__, 'publish'])
    wait_until(lambda: all(s.get_publisher_count() > 0 for s in subscriptions),
               node, child, DISCOVERY_TIMEOUT, 'matched publisher on every topic')
    wait_until(lambda: len(received) == len(expected),
               node, child, DELIVERY_TIMEOUT, 'message on every topic')

    for topic, message in expected.items():
        assert received[topic] == message, topic
    publisher_errors = child.stop()
    assert child.process.returncode == 0, publisher_errors


def publish_samples():
    """Child process: publish the samples once each topic has a matched subscriber.

    Afterwards it keeps running until its stdin closes, so that the reliable
    writers can still resend anything the subscriber has not acknowledged.
    """
    import rclpy

    rclpy.init()
    try:
        node = rclpy.create_node('dds_smoke_publisher')
        messages = sample_messages()
        publishers = {topic: node.create_publisher(type(message), topic, reliable_volatile_qos())
                      for topic, message in messages.items()}
        deadline = time.monotonic() + DISCOVERY_TIMEOUT
        while any(publisher.get_subscription_count() == 0 for publisher in publishers.values()):
            if time.monotonic() > deadline:
                sys.exit('publisher: no matched subscriber on every topic '
                         f'within {DISCOVERY_TIMEOUT} s')
            time.sleep(0.05)
        for topic, message in messages.items():
            publishers[topic].publish(message)
        sys.stdin.read()
    finally:
        rclpy.try_shutdown()


if __name__ == '__main__' and sys.argv[1:] == ['publish']:
    publish_samples()
