"""The ROS interface of a vehicle: topic names, frame names and the static
transforms (the spec's topic table; docs/interop.md).

The headless recorder writes these topics into its bag and the live nodes
publish them, so both take the names from here.  Nothing here imports ROS:
transforms are plain ``(parent, child, translation, rotation xyzw)`` tuples.

The world frames, each a position published in one of them being that frame
to the millimetre everywhere on the tile:

* ``utm`` (:data:`UTM_FRAME`): the UTM zone of the INS (``ins.utm_zone``), of
  its odometry, its ground truth and the TF ``utm -> base_footprint``;
* ``map`` (:data:`MAP_FRAME`): the rigid frame of the static ``utm -> map``
  (the tile origin's UTM position, turned by the grid rotation there), so
  rviz can work in small numbers; nothing is published in it;
* ``grid`` (:data:`GRID_FRAME`): the tile's survey-grid ENU, the physics'
  world, in which the scene, the routes, the spawn poses and ``sim/truth``
  are given.  The spec's Frames section makes the ENU axes the grid axes of
  EPSG:2968, not a tangent frame; the UTM and survey-grid projections differ
  in scale by 0.37 mm per metre on the tile (5.9 cm at 160 m from the
  origin), so no rigid transform relates ``grid`` to ``utm`` or ``map`` to a
  millimetre, and ``grid`` has no place in TF.
"""

import math
from typing import NamedTuple

from acres_sim.core.frames import (OXTS_MOUNT_XYZW, chassis_in_base_footprint,
                                   lever_arm_from_chassis)
from acres_sim.core.quaternion import q_z

__all__ = ['ANTENNA_FRAME', 'BASE_FRAME', 'CHASSIS_FRAME', 'GNSS_TOPICS', 'GRID_FRAME',
           'IMU_FRAME', 'IMU_TOPIC', 'INS_FRAME', 'INS_POINT_KEY', 'INS_TOPICS', 'MAP_FRAME',
           'ODOM_FRAME', 'OXTS_IMU_FRAME', 'RADAR_FRAME', 'TRUTH_TOPIC', 'UTM_FRAME', 'InsTopics',
           'lever_arm', 'mount_origin', 'mount_transforms', 'utm_to_map']


class InsTopics(NamedTuple):
    """The INS topics of one vehicle (spec: the ROS 2 topic table)."""

    odom: str
    fix: str
    imu: str
    velocity: str       # None: the vehicle has no velocity topic
    truth: str
    fix_frame: str
    oxts_axes: bool     # the IMU message is in the OxTS unit's axes (x left, y forward, z down)


INS_TOPICS = {
    'polaris': InsTopics('vehicle/odom', 'oxts/fix', 'oxts/imu', 'oxts/velocity',
                         'sim/ground_truth/odom', 'navsat_link', True),
    'maxxum': InsTopics('odom', 'gnss/fix', 'imu/data', None, 'ground_truth/odom',
                        'gnss_link', False),
}
GNSS_TOPICS = {'fix': 'gnss_receiver/fix', 'nmea': 'gnss_receiver/nmea',
               'gpsfix': 'gnss_receiver/gpsfix', 'heading': 'gnss_receiver/heading'}
IMU_TOPIC = 'imu/data_raw'
# The physics-rate truth the sim node sends its sensor nodes (nav_msgs/Odometry
# in frame grid, child <prefix>chassis): chassis origin and the state's
# quaternion, and -- unlike an odometry message -- the CoM velocity and angular
# velocity in world axes.
TRUTH_TOPIC = 'sim/truth'

UTM_FRAME, MAP_FRAME, GRID_FRAME = 'utm', 'map', 'grid'   # see the module docstring
BASE_FRAME, CHASSIS_FRAME = 'base_footprint', 'chassis'

ANTENNA_FRAME, IMU_FRAME, INS_FRAME = 'gnss_antenna', 'imu_link', 'oxts_link'
RADAR_FRAME = 'radar_link'     # the radar ground-speed sensor (when the vehicle has one)
ODOM_FRAME = 'odom'            # of the wheel odometry (REP-105; no TF from the rig)
# The Polaris INS IMU message is in the OxTS unit's axes: its own frame,
# rotated from FLU by frames.OXTS_MOUNT_XYZW.
OXTS_IMU_FRAME = 'oxts_imu_link'
_IDENTITY = (0.0, 0.0, 0.0, 1.0)


#: The mount measured from base_footprint whatever ``mount_frame`` says: the
#: INS point.  The spec's INS section puts the INS of the Polaris and of the
#: Maxxum at base_footprint with ``ins.position_flu_m`` [0, 0, 0], while the
#: Maxxum keeps the default ``mount_frame`` chassis for its antenna and IMU;
#: the INS point is thus always given from base_footprint (the child frame of
#: its odometry), the antenna and the IMU from ``mount_frame``.
INS_POINT_KEY = 'ins.position_flu_m'


def mount_origin(config, key):
    """The frame the mount ``key`` is measured from: 'chassis' or 'base_footprint'."""
    return 'base_footprint' if key == INS_POINT_KEY else config['mount_frame']


def lever_arm(config, key, vehicle):
    """The mount of ``key`` (e.g. 'imu.position_flu_m') as a lever arm from the
    chassis origin (measured from :func:`mount_origin`)."""
    return lever_arm_from_chassis(config[key], mount_origin(config, key), vehicle.wheelbase_m,
                                  vehicle.cog_height_m)


def mount_transforms(config, vehicle, rig, prefix=''):
    """The static transforms base_footprint -> each sensor mount of one vehicle,
    every frame with the agent's ``prefix`` (e.g. 'agent1/')."""
    chassis = chassis_in_base_footprint(vehicle.wheelbase_m, vehicle.cog_height_m)
    ins_arm = lever_arm(config, INS_POINT_KEY, vehicle)
    mounts = [(ANTENNA_FRAME, lever_arm(config, 'gnss.antenna_flu_m', vehicle), _IDENTITY),
              (IMU_FRAME, lever_arm(config, 'imu.position_flu_m', vehicle), _IDENTITY),
              (INS_FRAME, ins_arm, _IDENTITY),
              (INS_TOPICS[rig].fix_frame, ins_arm, _IDENTITY)]
    if INS_TOPICS[rig].oxts_axes:
        mounts.append((OXTS_IMU_FRAME, ins_arm, OXTS_MOUNT_XYZW))
    if config['radar.enabled']:
        mounts.append((RADAR_FRAME, lever_arm_from_chassis(
            config['radar.mount_flu_m'], 'base_footprint', vehicle.wheelbase_m,
            vehicle.cog_height_m), _IDENTITY))
    return [(prefix + BASE_FRAME, prefix + child,
             tuple(float(a) for a in chassis + arm), rotation)
            for child, arm, rotation in mounts]


def utm_to_map(config, site):
    """The static utm -> map: the tile origin in the INS's UTM zone, turned by
    the grid rotation there (so rviz can work in small numbers in map).  It
    is rigid: ``map`` matches ``grid`` at the origin only (see the module
    docstring)."""
    frame = 'nad83_2011' if config['ins.frame'] == 'nad83' else config['ins.frame']
    zone = config['ins.utm_zone']
    e0, n0, h0 = site.enu_to_utm(0.0, 0.0, 0.0, 0.0, frame, zone)
    alpha = math.radians(site.grid_rotation_deg(0.0, 0.0, 0.0, 0.0, frame, zone))
    return (UTM_FRAME, MAP_FRAME, (float(e0), float(n0), float(h0)), tuple(q_z(-alpha)))
