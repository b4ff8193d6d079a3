"""The launch description shared by the rig launch files (needs launch_ros).

One rig = the simulation node plus a GNSS-receiver and an IMU node, all fed the
same parameter files: sensors.yaml, site.yaml and the vehicle overlay.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from acres_sim.config import RIGS, load_config

NODES = ('sim_node', 'gnss_node', 'imu_node')


def rig_launch_description(rig):
    """Launch ``rig`` ('polaris' or 'maxxum') in the namespace argument ``namespace``."""
    config = os.path.join(get_package_share_directory('acres_sim'), 'config')
    sensors, site, overlay = (os.path.join(config, name)
                              for name in ('sensors.yaml', 'site.yaml', RIGS[rig]))
    params = [sensors, site, overlay]  # the loader's order: later files win
    # The seed and noise arguments always reach the nodes, so their defaults are
    # the files' own values: launching without them changes nothing.
    files = load_config(config_file=sensors, site_file=site, overlay_file=overlay)
    arguments = [
        DeclareLaunchArgument('namespace', default_value='',
                              description='ROS namespace of the vehicle'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='follow /clock published by the sim node'),
        DeclareLaunchArgument('seed', default_value=str(files['seed']),
                              description='seed of all noise streams (spec: seed)'),
        DeclareLaunchArgument('noise', default_value=str(files['noise']).lower(),
                              description="false: the spec's no-noise option"),
    ]
    overrides = {
        'use_sim_time': LaunchConfiguration('use_sim_time'),
        'seed': LaunchConfiguration('seed'),
        'noise': LaunchConfiguration('noise'),
    }
    # Without the sim node there is no truth for the others: its exit ends the launch.
    nodes = [Node(package='acres_sim', executable=name, name=name,
                  namespace=LaunchConfiguration('namespace'), output='screen',
                  parameters=[*params, overrides],
                  on_exit=Shutdown() if name == 'sim_node' else None)
             for name in NODES]
    return LaunchDescription([*arguments, *nodes])
