"""The channels of the sensors sampled from the vehicle's state
(:mod:`acres_sim.core.step_sensor`): the barometer, the magnetometer, the
wheel odometry and the radar ground-speed sensor.

The sim process runs them: each block's states (``Block.states``) give the
samples (the model's ``run_block``).  The live sim node calls
:func:`push_step_sensors`: each sample's row and messages then pass the
sensor's delay line (:class:`acres_sim.pipeline.channels.Delivery`, at
t_sample + delay_s, stamped t_sample) as the GNSS and IMU samples do.  The
recorder keeps the raw samples in a delay line of arrays instead: of those
delivered it makes the rounded values (the model's ``columns``) and the
messages (:meth:`StepChannel.encode_block`), and its row writer the rows (the
model's ``rows_from_columns``) -- the same samples, rows and bytes.  The messages are
encoded a block at a time from the rows' rounded values
(:class:`acres_sim.pipeline.cdr.FixedLayout`), so a message holds what its
row says.

Topics, relative to the vehicle's namespace:

* ``baro/pressure``: sensor_msgs/FluidPressure [Pa] in the INS unit's frame,
  variance the white noise's; ``baro/altitude``:
  geometry_msgs/PoseWithCovarianceStamped in ``map`` whose z is the pressure
  altitude above the tile origin (x, y and the orientation unknown: variance
  1e6), for a filter that fuses z;
* ``imu/mag``: sensor_msgs/MagneticField [T] in the INS unit's frame, the
  covariance the white noise's (the name imu_tools' filters subscribe to);
* ``wheel/odom``: nav_msgs/Odometry of the wheel odometry, frame ``odom``,
  child ``base_footprint`` (REP-105's convention; the rig publishes no TF for
  it, a filter that owns ``odom -> base_footprint`` does), the pose's x, y,
  yaw covariance the model's, z, roll and pitch unknown (1e6), the twist's
  linear.x and angular.z variances the model's, the rest unknown;
* ``radar/speed``: geometry_msgs/TwistWithCovarianceStamped of the radar,
  frame ``radar_link`` (its mount), linear.x the speed over ground along the
  body x, its variance sigma^2 (below the minimum speed: 0 with the minimum
  speed as sigma), the rest unknown.
"""

import numpy as np

from acres_sim.core.quaternion import q_z

from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.batches import encoded_layout, put_quaternion, put_stamps, put_vector
from acres_sim.pipeline.channels import _Channel
from acres_sim.pipeline.topics import (BASE_FRAME, INS_FRAME, MAP_FRAME, ODOM_FRAME,
                                       RADAR_FRAME)

__all__ = ['BarometerChannel', 'MagnetometerChannel', 'RadarChannel', 'STEP_SENSORS',
           'StepChannel', 'WheelOdometryChannel', 'push_step_sensors']

UNKNOWN_VARIANCE = 1e6       # a pose field the message does not measure [m^2, rad^2]


class StepChannel(_Channel):
    """The channel of one sensor sampled from the state: its rows (the
    model's ``rows``) and messages (:meth:`encode_block`, from the same
    rounded values, the model's ``columns``)."""

    file_name = None             # its jsonl file in the recorder's folder

    def __init__(self, vehicle, model):
        super().__init__(vehicle)
        self.model = model
        self.prefix = vehicle.frame_prefix

    def push_block(self, k0, states):
        """Sample the steps k0 .. of ``states`` and push every sample into the line."""
        steps, samples = self.model.run_block(k0, states)
        if not len(steps):
            return
        columns = self.model.columns(samples)
        rows = self.model.rows_from_columns(columns)
        if not self.encoding:
            self.push_many(steps, rows)
            return
        encoded = self.encode_block(columns, self.timeline.ns_of_steps(steps))
        per_sample = zip(*[[(topic, data) for data in e.messages()] for topic, e in encoded])
        self.push_many(steps, rows, [list(messages) for messages in per_sample])

    def encode_block(self, columns, t_ns):
        """[(topic, Encoded of every sample), ...] in publishing order, of the
        samples' rounded values ``columns`` (the model's) stamped ``t_ns``."""
        raise NotImplementedError


class BarometerChannel(StepChannel):
    """``baro/pressure`` and ``baro/altitude`` (see the module docstring)."""

    file_name = 'barometer.jsonl'
    topic_types = (('baro/pressure', 'sensor_msgs/msg/FluidPressure'),
                   ('baro/altitude', 'geometry_msgs/msg/PoseWithCovarianceStamped'))

    def __init__(self, vehicle, model):
        super().__init__(vehicle, model)
        self.frame = self.prefix + INS_FRAME
        p = model.params
        self.pressure_variance = max(p.sigma_pa ** 2 if p.noise else 0.0, msg.MIN_VARIANCE)
        # the altitude's: the pressure noise through the barometric formula's slope
        slope = model.altitude_slope_m_per_pa()
        self.altitude_variance = max(self.pressure_variance * slope ** 2, msg.MIN_VARIANCE)
        self.origin_altitude_m = p.site_altitude_m

    def encode_block(self, columns, t_ns):
        pressure = self.batches.layout('sensor_msgs/msg/FluidPressure',
                                       ('header.frame_id', self.frame))
        arr = pressure.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        arr['fluid_pressure'] = columns['pressure_pa']
        arr['variance'] = self.pressure_variance
        altitude = self.batches.layout('geometry_msgs/msg/PoseWithCovarianceStamped',
                                       ('header.frame_id', MAP_FRAME))
        alt = altitude.empty_columns(len(t_ns))
        put_stamps(alt, 'header.stamp.', t_ns)
        alt['pose.pose.position.z'] = columns['pressure_altitude_m'] - self.origin_altitude_m
        alt['pose.pose.orientation.w'] = 1.0
        covariance = np.diag([UNKNOWN_VARIANCE, UNKNOWN_VARIANCE, self.altitude_variance,
                              UNKNOWN_VARIANCE, UNKNOWN_VARIANCE, UNKNOWN_VARIANCE]).reshape(-1)
        alt['pose.covariance'] = covariance
        return [('baro/pressure', encoded_layout(pressure, arr)),
                ('baro/altitude', encoded_layout(altitude, alt))]


class MagnetometerChannel(StepChannel):
    """``imu/mag`` (see the module docstring)."""

    file_name = 'magnetometer.jsonl'
    topic_types = (('imu/mag', 'sensor_msgs/msg/MagneticField'),)

    def __init__(self, vehicle, model):
        super().__init__(vehicle, model)
        self.frame = self.prefix + INS_FRAME
        p = model.params
        variance = max(p.sigma_t ** 2 if p.noise else 0.0, msg.MIN_VARIANCE)
        self.covariance = msg.diag3([variance] * 3)

    def encode_block(self, columns, t_ns):
        layout = self.batches.layout('sensor_msgs/msg/MagneticField',
                                     ('header.frame_id', self.frame))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        put_vector(arr, 'magnetic_field', columns['magnetic_field_flu_t'])
        arr['magnetic_field_covariance'] = self.covariance
        return [('imu/mag', encoded_layout(layout, arr))]


class WheelOdometryChannel(StepChannel):
    """``wheel/odom`` (see the module docstring)."""

    file_name = 'wheel_odometry.jsonl'
    topic_types = (('wheel/odom', 'nav_msgs/msg/Odometry'),)

    def encode_block(self, columns, t_ns):
        layout = self.batches.layout('nav_msgs/msg/Odometry',
                                     ('header.frame_id', self.prefix + ODOM_FRAME),
                                     ('child_frame_id', self.prefix + BASE_FRAME))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        n = len(t_ns)
        position = columns['position_odom_m']
        arr['pose.pose.position.x'] = position[:, 0]
        arr['pose.pose.position.y'] = position[:, 1]
        put_quaternion(arr, 'pose.pose.orientation',
                       np.array([q_z(yaw) for yaw in columns['yaw_odom_rad'].tolist()]
                                ).reshape(-1, 4))
        arr['twist.twist.linear.x'] = columns['speed_mps']
        arr['twist.twist.angular.z'] = columns['yaw_rate_radps']
        pose = np.zeros((n, 6, 6))
        measured = np.array([0, 1, 5])               # x, y, yaw of the pose: rows 0, 1, 5
        pose[:, measured[:, None], measured] = columns['pose_covariance_xy_yaw']
        pose[:, [2, 3, 4], [2, 3, 4]] = UNKNOWN_VARIANCE
        twist = np.zeros((n, 6, 6))
        twist[:, 0, 0] = columns['twist_variance.speed_m2ps2']
        twist[:, 5, 5] = columns['twist_variance.yaw_rate_rad2ps2']
        twist[:, [1, 2, 3, 4], [1, 2, 3, 4]] = UNKNOWN_VARIANCE
        arr['pose.covariance'] = pose.reshape(-1, 36)
        arr['twist.covariance'] = twist.reshape(-1, 36)
        return [('wheel/odom', encoded_layout(layout, arr))]


class RadarChannel(StepChannel):
    """``radar/speed`` (see the module docstring)."""

    file_name = 'radar.jsonl'
    topic_types = (('radar/speed', 'geometry_msgs/msg/TwistWithCovarianceStamped'),)

    def encode_block(self, columns, t_ns):
        layout = self.batches.layout('geometry_msgs/msg/TwistWithCovarianceStamped',
                                     ('header.frame_id', self.prefix + RADAR_FRAME))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        arr['twist.twist.linear.x'] = columns['speed_mps']
        minimum = self.model.params.min_speed_mps
        covariance = np.zeros((len(t_ns), 6, 6))
        # Python's power, as the messages have always had it (numpy's square
        # differs from it in the last bit now and then)
        covariance[:, 0, 0] = [max((sigma if valid else minimum) ** 2, msg.MIN_VARIANCE)
                               for sigma, valid in zip(columns['sigma_mps'].tolist(),
                                                       columns['valid'].tolist())]
        covariance[:, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]] = UNKNOWN_VARIANCE
        arr['twist.covariance'] = covariance.reshape(-1, 36)
        return [('radar/speed', encoded_layout(layout, arr))]


#: sensor name -> its channel class (the names of Vehicle.step_sensors and of the
#: configuration's blocks)
STEP_SENSORS = {'baro': BarometerChannel, 'mag': MagnetometerChannel,
                'wheel_odometry': WheelOdometryChannel, 'radar': RadarChannel}


def push_step_sensors(vehicle, k0, states):
    """Every step sensor of ``vehicle`` samples the block of ``states`` from step k0."""
    for name in STEP_SENSORS:
        channel = vehicle.channels.get(name)
        if channel is not None:
            channel.push_block(k0, states)
