"""The GNSS node's outputs for localization stacks live: ``acres-sim up`` of
the Polaris (GST on the nmea topic, GPSFix, dual-antenna heading: its
defaults) in an open field at rtf 0 publishes, topic by topic, the bytes the
headless recorder writes into its bag for the same run -- the new topics
among all the others (test_live_rig.py's comparison)."""

import pytest

from test_live_rig import (POLARIS_TOPICS, SENSOR_TOPICS, assert_same_messages,
                           receiver_statuses, run_live_and_headless)

pytestmark = pytest.mark.requires_rclpy

NEW_TOPICS = {'/gnss_receiver/gpsfix': 'gps_msgs/msg/GPSFix',
              '/gnss_receiver/heading': 'sensor_msgs/msg/Imu'}


def test_gst_gpsfix_and_heading_live_equal_the_headless_recorder(ros_context, ros_child,
                                                                 tmp_path):
    pytest.importorskip('gps_msgs.msg', reason='gps_msgs is not built (make setup builds it)')
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import Imu
    from std_msgs.msg import String

    scene = tmp_path / 'open_field.yaml'
    scene.write_text('scene: {name: open_field}\n')      # no garage: RTK from the start
    topics = {**POLARIS_TOPICS, **NEW_TOPICS}
    seconds = 15
    live, bag = run_live_and_headless(
        ros_child, tmp_path, topics, seconds, ('--rig', 'polaris', '--scene', str(scene)),
        {'rig': 'polaris', 'options': {'scene': str(scene)}},
        sensor_topics=SENSOR_TOPICS + tuple(NEW_TOPICS))
    live['/diagnostics'] = receiver_statuses(live['/diagnostics'])
    assert_same_messages(live, bag, topics)
    sentences = [deserialize_message(m, String).data for m in bag['/gnss_receiver/nmea']]
    assert sentences[1::2] and all(s.startswith('$GNGST,') for s in sentences[1::2])
    assert len(bag['/gnss_receiver/gpsfix']) == len(bag['/gnss_receiver/fix']) == seconds * 10
    headings = [deserialize_message(m, Imu) for m in bag['/gnss_receiver/heading']]
    assert len(headings) > 100
    assert all(h.header.frame_id == 'gnss_antenna' for h in headings)
