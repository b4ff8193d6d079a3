"""rclpy nodes and message conversions: the only package that imports ROS."""

# Imported first thing in a node: the parent the node started with (acres_sim.parent).
import acres_sim.parent  # noqa: F401
