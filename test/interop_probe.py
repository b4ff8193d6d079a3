"""A probe for test_interop.py, run by the other distro's Python: subscribes
to a rig's topics, drives its vehicle with cmd_vel, and prints one JSON line --
the messages it got per topic, the vehicle's last speed, and its own rclpy
version.  Arguments: seconds to wait at most, and the speed to command."""

import json
import math
import sys
import time
from importlib.metadata import version

import rclpy
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, NavSatFix

TOPICS = {'/clock': Clock, '/oxts/imu': Imu, '/oxts/fix': NavSatFix, '/vehicle/odom': Odometry,
          '/imu/data_raw': Imu, '/gnss_receiver/fix': NavSatFix}


def main():
    seconds, speed = float(sys.argv[1]), float(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node('interop_probe')
    got = {topic: [] for topic in TOPICS}
    for topic, kind in TOPICS.items():
        node.create_subscription(kind, topic, got[topic].append, 100)
    cmd_vel = node.create_publisher(Twist, '/cmd_vel', 10)
    deadline = time.monotonic() + seconds
    moving = 0.0
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
        command = Twist()
        command.linear.x = speed
        cmd_vel.publish(command)
        if got['/vehicle/odom']:
            moving = got['/vehicle/odom'][-1].twist.twist.linear.x
        if all(len(messages) >= 20 for messages in got.values()) and moving > 0.5 * speed:
            break
    latitudes = {topic: sorted({round(m.latitude, 2) for m in got[topic]
                                if math.isfinite(m.latitude)})    # NaN: no fix yet
                 for topic in ('/oxts/fix', '/gnss_receiver/fix')}
    print(json.dumps({'counts': {t: len(m) for t, m in got.items()}, 'speed': moving,
                      'latitudes': latitudes, 'rclpy': version('rclpy')}))
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == '__main__':
    main()
