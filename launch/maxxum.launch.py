"""Launch the Maxxum rig (config/rigs/maxxum.yaml): the sim node with the
Maxxum's INS, its GNSS receiver and its IMU.  For the arguments see
``ros2 launch acres_sim maxxum.launch.py --show-args``."""

from acres_sim.ros.launch_description import rig_launch_description


def generate_launch_description():
    """The packaged Maxxum rig; the launch arguments set its options."""
    return rig_launch_description('maxxum')
