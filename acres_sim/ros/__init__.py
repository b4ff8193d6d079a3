"""rclpy nodes and message conversions: the only package that imports ROS."""
