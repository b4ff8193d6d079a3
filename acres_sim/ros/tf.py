"""TF output: tf2_ros's broadcasters where tf2_ros is installed; else
publishers of the locally built tf2_msgs with tf2_ros's topics and QoS
(``/tf`` depth 100, ``/tf_static`` transient local); else one warning and no TF.

Either way the node hands over CDR-encoded tf2_msgs/TFMessage bytes: a
broadcaster's own publisher takes them as they are.
"""

from acres_sim.ros.qos import STATIC_TF_QOS, TF_QOS, with_depth

__all__ = ['TfPublishers']


class TfPublishers:
    """``dynamic`` and ``static``: publishers of /tf and /tf_static (None without
    TF); /tf keeps ``depth`` messages (at least tf2_ros's 100) where the
    publisher is ours."""

    def __init__(self, node, depth=100):
        self.dynamic = self.static = None
        self.via = None
        try:
            from tf2_ros import StaticTransformBroadcaster, TransformBroadcaster
        except ImportError:
            pass
        else:
            self._broadcasters = (
                TransformBroadcaster(node, qos=with_depth(TF_QOS, max(depth, TF_QOS.depth))),
                StaticTransformBroadcaster(node))
            self.dynamic, self.static = (b.pub_tf for b in self._broadcasters)
            self.via = 'tf2_ros'
            return
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            node.get_logger().warning(
                'neither tf2_ros nor tf2_msgs is installed: no TF output (`make tf2_msgs` '
                'builds the messages on a machine without ROS 2 installed)')
            return
        self.dynamic = node.create_publisher(TFMessage, '/tf',
                                             with_depth(TF_QOS, max(depth, TF_QOS.depth)))
        self.static = node.create_publisher(TFMessage, '/tf_static', STATIC_TF_QOS)
        self.via = 'tf2_msgs'

    def publish_static(self, data):
        if self.static is not None:
            self.static.publish(data)
