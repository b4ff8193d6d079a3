"""The live rig over real DDS: ``acres-sim up`` with the sim, GNSS and IMU
nodes, each test on its own ROS domain, everything stopped at the end.

The strongest check is the first: the live rig run as fast as its sensor
nodes keep up publishes, topic by topic, the very bytes that the headless
recorder writes into its bag for the same configuration -- INS, GNSS
receiver, IMU, /clock, TF.
"""

from pathlib import Path

import pytest

from live_helpers import DISCOVERY_TIMEOUT, Probe, run_until_exit, up_args

pytestmark = pytest.mark.requires_rclpy

POLARIS_TOPICS = {
    '/clock': 'rosgraph_msgs/msg/Clock', '/vehicle/odom': 'nav_msgs/msg/Odometry',
    '/oxts/fix': 'sensor_msgs/msg/NavSatFix', '/oxts/imu': 'sensor_msgs/msg/Imu',
    '/oxts/velocity': 'geometry_msgs/msg/TwistStamped',
    '/sim/ground_truth/odom': 'nav_msgs/msg/Odometry',
    '/gnss_receiver/fix': 'sensor_msgs/msg/NavSatFix', '/gnss_receiver/nmea': 'std_msgs/msg/String',
    '/imu/data_raw': 'sensor_msgs/msg/Imu', '/diagnostics': 'diagnostic_msgs/msg/DiagnosticArray',
    '/tf': 'tf2_msgs/msg/TFMessage', '/tf_static': 'tf2_msgs/msg/TFMessage',
}

SENSOR_TOPICS = ('/gnss_receiver/fix', '/gnss_receiver/nmea', '/imu/data_raw', '/diagnostics')


def message_type(name):
    import importlib

    package, _msg, cls = name.split('/')
    return getattr(importlib.import_module(f'{package}.msg'), cls)


def bag_messages(folder):
    """{topic: [CDR bytes in bag order]} of a recording's bag."""
    from rosbags.rosbag2 import Reader

    out = {}
    with Reader(Path(folder) / 'bag') as reader:
        for connection, _t, data in reader.messages():
            out.setdefault(connection.topic, []).append(bytes(data))
    return out


def same_cdr(a, b):
    """The same CDR message: equal bytes, except that the transport may add
    up to 3 zero bytes of padding at the end (a multiple of 4 bytes)."""
    short, long_ = sorted((a, b), key=len)
    return (len(long_) - len(short) <= 3 and long_[:len(short)] == short
            and not any(long_[len(short):]))


def receiver_statuses(messages):
    """The GNSS receiver's own /diagnostics (the nodes' input health left out)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.serialization import deserialize_message

    return [data for data in messages
            if deserialize_message(data, DiagnosticArray).status[0].name.endswith('gnss_receiver')]


def test_live_rig_equals_the_headless_recorder(ros_context, ros_child, tmp_path):
    import rclpy

    from acres_sim.config import load_config
    from acres_sim.record.runner import RecordRequest, record

    seconds = 60
    node = rclpy.create_node('live_equals_headless_probe')
    # The sensor nodes' topics first: the sim starts once every one of its own
    # topics has a subscriber, and by then the probe hears the sensor nodes too.
    sensor_topics = {t: message_type(POLARIS_TOPICS[t]) for t in SENSOR_TOPICS}
    probe = Probe(node, sensor_topics, report_progress=True)
    child = ros_child(up_args('--rig', 'polaris', '--duration', str(seconds), '--rtf', '0',
                              '--wait-for-subscribers', '1', '--start-timeout', '120'))
    probe.spin_until(lambda: all(probe.publishers(t) for t in SENSOR_TOPICS), DISCOVERY_TIMEOUT,
                     'the sensor nodes', child)
    probe.add({t: message_type(m) for t, m in POLARIS_TOPICS.items() if t not in SENSOR_TOPICS},
              transient={'/tf_static'})
    code, output = run_until_exit(probe, child, DISCOVERY_TIMEOUT + 10 * seconds)
    assert code == 0, output

    record(RecordRequest(load_config(rig='polaris'), 'polaris', float(seconds), tmp_path / 'rec',
                         progress=False))
    bag = bag_messages(tmp_path / 'rec')
    live = dict(probe.got)
    live['/diagnostics'] = receiver_statuses(live['/diagnostics'])
    assert set(bag) == set(live)
    for topic in sorted(bag):
        assert len(live[topic]) == len(bag[topic]), topic
        first_difference = next((i for i, (a, b) in enumerate(zip(live[topic], bag[topic]))
                                 if not same_cdr(a, b)), None)
        if first_difference is not None:
            from rclpy.serialization import deserialize_message

            kind = message_type(POLARIS_TOPICS[topic])
            live_msg, bag_msg = (deserialize_message(m[topic][first_difference], kind)
                                 for m in (live, bag))
            a, b = live[topic][first_difference], bag[topic][first_difference]
            offsets = [i for i, (x, y) in enumerate(zip(a, b)) if x != y] or [min(len(a), len(b))]
            pytest.fail(f'{topic}: message {first_difference} differs (sizes {len(a)}, {len(b)},'
                        f' from byte {offsets[0]}):\nlive {live_msg}\nbag  {bag_msg}')
    assert len(bag['/clock']) == seconds * 120 + 1
    assert len(bag['/gnss_receiver/fix']) > 500 and len(bag['/imu/data_raw']) > 5000
