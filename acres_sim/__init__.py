"""acres_sim: the ACRE farm vehicles' sensor rig, simulated for ROS 2.

Layers (see DESIGN.md): ``core`` (pure numpy/numba models, no ROS), ``config``
(the one schema of every key), ``ros`` (rclpy nodes, the only ROS imports),
``record`` (headless runner) and ``cli``.
"""

__version__ = '0.1.0'
