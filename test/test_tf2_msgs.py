"""tf2_msgs/msg/TFMessage, as built by tools/build_interfaces.py, against rosbags.

rosbags carries its own copy of the ROS 2 Jazzy message definitions and its
own hashing and CDR code, so it is an independent reference for the type hash
and the wire format.
"""

import json
from pathlib import Path
import sys

import pytest

pytestmark = pytest.mark.requires_rclpy

TYPE_NAME = 'tf2_msgs/msg/TFMessage'

# (stamp sec, stamp nanosec, frame_id, child_frame_id, translation, rotation)
# The frame names are 3 or 7 characters long, so every field of this message
# starts at its natural alignment and the CDR stream has no padding bytes.
UNPADDED_TRANSFORMS = [
    (1_700_000_000, 123_456_789, 'map', 'chassis', (1.5, -2.25, 0.125), (0.0, 0.0, 0.6, 0.8)),
    (1_700_000_001, 999_999_999, 'chassis', 'antenna', (0.3, 0.0, 1.9), (0.5, 0.5, 0.5, 0.5)),
]

# Everyday frame names: these need padding, which Fast CDR leaves uninitialised.
PADDED_TRANSFORMS = [
    (42, 7, 'odom', 'base_link', (10.0, 20.0, 0.5), (0.0, 0.0, 0.0, 1.0)),
    (43, 8, 'base_link', 'imu_link', (-0.1, 0.02, 0.3), (1.0, 0.0, 0.0, 0.0)),
]


@pytest.fixture(scope='module')
def typestore():
    """rosbags' store of the ROS 2 Jazzy message types."""
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)


def rclpy_message(transforms):
    """A tf2_msgs TFMessage holding `transforms` (tuples as in UNPADDED_TRANSFORMS)."""
    from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
    from std_msgs.msg import Header
    from builtin_interfaces.msg import Time
    from tf2_msgs.msg import TFMessage

    return TFMessage(transforms=[
        TransformStamped(
            header=Header(stamp=Time(sec=sec, nanosec=nanosec), frame_id=frame),
            child_frame_id=child,
            transform=Transform(translation=Vector3(x=t[0], y=t[1], z=t[2]),
                                rotation=Quaternion(x=q[0], y=q[1], z=q[2], w=q[3])))
        for sec, nanosec, frame, child, t, q in transforms])


def rosbags_message(typestore, transforms):
    """The same message as rclpy_message(transforms), built from rosbags' types."""
    types = typestore.types
    return types[TYPE_NAME](transforms=[
        types['geometry_msgs/msg/TransformStamped'](
            header=types['std_msgs/msg/Header'](
                stamp=types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec),
                frame_id=frame),
            child_frame_id=child,
            transform=types['geometry_msgs/msg/Transform'](
                translation=types['geometry_msgs/msg/Vector3'](x=t[0], y=t[1], z=t[2]),
                rotation=types['geometry_msgs/msg/Quaternion'](x=q[0], y=q[1], z=q[2], w=q[3])))
        for sec, nanosec, frame, child, t, q in transforms])


def test_tfmessage_imports_with_type_support():
    """TFMessage imports and its C typesupport (the compiled extension) loads."""
    from rclpy.type_support import check_for_type_support
    from tf2_msgs.msg import TFMessage

    check_for_type_support(TFMessage)
    assert TFMessage._TYPE_SUPPORT is not None


def test_installed_type_description_hash_matches_rosbags(typestore):
    """The type description installed with the package carries rosbags' RIHS01 hash."""
    path = Path(sys.prefix) / 'share' / 'tf2_msgs' / 'msg' / 'TFMessage.json'
    hashes = json.loads(path.read_text())['type_hashes']
    by_type = {entry['type_name']: entry['hash_string'] for entry in hashes}

    assert by_type[TYPE_NAME] == typestore.hash_rihs01(TYPE_NAME)


def test_compiled_type_hash_matches_rosbags(ros_context, typestore):
    """The hash the compiled typesupport announces to DDS peers is rosbags' RIHS01 hash.

    rclpy 7.1 exposes it as TopicEndpointInfo.topic_type_hash; the node's own
    publisher is in its graph cache right away, no discovery needed.
    """
    import rclpy
    from tf2_msgs.msg import TFMessage

    node = rclpy.create_node('tf2_msgs_type_hash_check')
    node.create_publisher(TFMessage, '/tf2_msgs_type_hash_check', 10)
    [endpoint] = node.get_publishers_info_by_topic('/tf2_msgs_type_hash_check')

    assert str(endpoint.topic_type_hash) == typestore.hash_rihs01(TYPE_NAME)


def test_cdr_bytes_equal_rosbags(typestore):
    """rclpy's CDR of a message without padding equals rosbags' byte for byte, and reads back."""
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    message = rclpy_message(UNPADDED_TRANSFORMS)
    reference = bytes(typestore.serialize_cdr(rosbags_message(typestore, UNPADDED_TRANSFORMS),
                                              TYPE_NAME))
    data = serialize_message(message)

    assert data == reference
    assert deserialize_message(data, TFMessage) == message


def test_cdr_with_padding_agrees_with_rosbags(typestore):
    """With padding, the bytes agree once rosbags has zeroed the padding, both ways round.

    Fast CDR does not initialise alignment padding (the wheels' own
    geometry_msgs do the same), so only the padding may differ.
    """
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    message = rclpy_message(PADDED_TRANSFORMS)
    reference = bytes(typestore.serialize_cdr(rosbags_message(typestore, PADDED_TRANSFORMS),
                                              TYPE_NAME))
    data = serialize_message(message)
    data_read_by_rosbags = typestore.deserialize_cdr(data, TYPE_NAME)

    assert len(data) == len(reference)
    assert bytes(typestore.serialize_cdr(data_read_by_rosbags, TYPE_NAME)) == reference
    assert deserialize_message(reference, TFMessage) == message
