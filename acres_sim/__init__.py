"""acres_sim: the ACRE farm vehicles' sensor rig, simulated for ROS 2.

Layers (the README's "Layout"; import-linter contracts in pyproject.toml
keep them): ``core`` (numpy/numba maths: no configuration, files or ROS),
``config`` (the one schema and checker; the only place that knows key names
and file formats), ``pipeline`` (what both drivers share: vehicles built from
a configuration, the sensor channels, the message encoders), the two drivers
``record`` (headless) and ``ros`` (rclpy nodes), which never import each
other, and on top ``rig``, ``up`` and ``cli``.
"""

__version__ = '0.1.0'
