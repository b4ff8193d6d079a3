"""rclpy nodes and message conversions: the only package that imports ROS.

Imported first thing in a node process (``python -m acres_sim.ros.sim_node``,
or the ``sim_node`` console script): it notes the parent the node started
with (:mod:`acres_sim.parent`), runs numpy's BLAS on one thread
(:mod:`acres_sim.blas_threads`, before numpy loads; a node started by
``ros2 launch`` has no ``acres-sim`` command to inherit it from) and, in a
node process only, makes SIGINT and SIGTERM a stop request before the heavy
imports begin (:data:`acres_sim.stop_signals.STARTING`).
"""

from pathlib import Path
import sys

import acres_sim.blas_threads  # noqa: F401
import acres_sim.parent  # noqa: F401
from acres_sim.stop_signals import STARTING

NODES = ('sim_node', 'gnss_node', 'imu_node', 'sensor_nodes')


def starting_as_node(argv=None, orig_argv=None):
    """Whether this process was started as one of the NODES (``-m
    acres_sim.ros.NODE`` or the console script NODE)."""
    argv = sys.argv if argv is None else argv
    orig_argv = getattr(sys, 'orig_argv', []) if orig_argv is None else orig_argv
    if '-m' in orig_argv[:-1]:
        return orig_argv[orig_argv.index('-m') + 1] in {f'acres_sim.ros.{n}' for n in NODES}
    return bool(argv) and Path(argv[0]).name in NODES


if starting_as_node():
    STARTING.__enter__()
