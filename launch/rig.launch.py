"""Launch any rig: ``rig:=polaris|maxxum|mixed`` (config/rigs/) or
``rig:=FILE`` (a rig file of that form).  For the other arguments see
``ros2 launch acres_sim rig.launch.py --show-args``."""

from acres_sim.ros.launch_description import rig_launch_description


def generate_launch_description():
    """The rig named by the launch argument ``rig`` (default polaris)."""
    return rig_launch_description()
