"""Launch the Maxxum rig: sim node, GNSS receiver and IMU (see README)."""

from acres_sim.ros.launch_description import rig_launch_description


def generate_launch_description():
    """The Maxxum rig with the packaged site, sensor and vehicle parameter files."""
    return rig_launch_description('maxxum')
