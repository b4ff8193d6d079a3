"""The rig's high-rate messages for a whole block of samples at once: ``/clock``,
the INS topics (UTM odometry, its TF, fix, IMU, velocity, ground truth) and the
IMU's ``imu/data_raw``, CDR-encoded column by column with
:class:`acres_sim.pipeline.cdr.FixedLayout`.

Each method gives (as :class:`Encoded`: the messages' bytes joined), byte
for byte, what the row builders of
:mod:`acres_sim.pipeline.messages` give once serialised by ``rosbags``
(test_record_batches checks it): the same fields from the same values, the
same constant covariances, the same frames.  Input arrays are the kernels'
(:mod:`acres_sim.core.block`): INS epoch results in the layout of
:mod:`acres_sim.core.ins` (``P_INS`` ...), IMU samples as the rounded
(n, 6) values of the rows.  The GNSS receiver's fix, GPSFix and dual-antenna
heading are encoded from a block of its rows (the numbers of the row
builders' ``*_values`` functions, so one rule makes both).
"""

from dataclasses import dataclass
import math

import numpy as np

from acres_sim.core.frames import oxts_from_flu_quaternion, oxts_from_flu_vector, oxts_variances
from acres_sim.core.ins import (F_INS, LLH, Q_INS, Q_UTM, Q_UTM_TRUE, UTM, UTM_TRUE,
                                V_INS, V_N_FLU, W_FLU, W_INS)
from acres_sim.core.truth import T_P, T_Q, T_V, T_W
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.cdr import FixedLayout
from acres_sim.pipeline.topics import (BASE_FRAME, CHASSIS_FRAME, GRID_FRAME, INS_FRAME,
                                      OXTS_IMU_FRAME, UTM_FRAME)

__all__ = ['Encoded', 'MessageBatches', 'encoded_layout', 'put_quaternion', 'put_stamps',
           'put_vector', 'truth_offsets']


@dataclass(frozen=True)
class Encoded:
    """Messages of one layout, encoded: their bytes joined, ``size`` each."""

    payload: bytes
    size: int

    @property
    def count(self) -> int:
        return len(self.payload) // self.size

    def messages(self) -> list:
        """One ``bytes`` per message."""
        size = self.size
        return [self.payload[i * size:(i + 1) * size] for i in range(self.count)]

    def lengths(self) -> np.ndarray:
        """The size of each message (for BagWriter.write_block)."""
        return np.full(self.count, self.size, dtype=np.int64)


_RAD_TO_DEG = 180.0 / math.pi     # math.degrees' factor


def put_stamps(arr, prefix, t_ns):
    """The stamps ``t_ns`` [ns] into the ``prefix`` sec / nanosec columns of
    ``arr`` (an array of a layout's ``columns``, as every put_ function here)."""
    sec, nanosec = np.divmod(np.asarray(t_ns, dtype=np.int64), 1_000_000_000)
    arr[prefix + 'sec'] = sec
    arr[prefix + 'nanosec'] = nanosec


def put_vector(arr, path, values, names='xyz'):
    """The columns of ``values`` (n, len(names)) into the fields ``path``.x ...
    (at once where ``path`` is a vector of the layout's ``columns``: ROS's
    Vector3, Point and Quaternion hold x, y, z(, w) in that order)."""
    if names in ('xyz', 'xyzw') and path in arr.dtype.fields:
        arr[path] = values
        return
    for j, name in enumerate(names):
        arr[f'{path}.{name}'] = values[:, j]


def put_quaternion(arr, path, values):
    put_vector(arr, path, values, 'xyzw')


def encoded_layout(layout, arr):
    """The messages of ``arr`` (an array of ``layout.empty_columns``, its
    fields assigned in place) as one :class:`Encoded`."""
    return Encoded(layout.encode_joined(arr, constants_kept=True), layout.dtype.itemsize)


class MessageBatches:
    """Encoders for one recording; ``typestore`` is messages.TYPESTORE's kind.

    ``imu_var``: messages.imu_variances(config); ``ins_var``:
    messages.ins_variances(config); ``pose_variance`` and ``position_variance``:
    the INS row's 6-value pose and 3-value position variances.
    """

    def __init__(self, imu_var, ins_var, pose_variance, position_variance,
                 typestore=msg.TYPESTORE):
        self.typestore = typestore
        self.imu_var, self.ins_var = imu_var, ins_var
        self.pose_cov = msg.diag6(pose_variance, floor=msg.MIN_VARIANCE)
        self.twist_cov = msg.diag6(ins_var['twist_var'], floor=msg.MIN_VARIANCE)
        self.fix_cov = msg.diag3(position_variance)
        self._layouts = {}

    def layout(self, msgtype, *fixed):
        """The layout of ``msgtype`` with the (path, value) pairs ``fixed`` (cached)."""
        key = (msgtype, fixed)
        if key not in self._layouts:
            self._layouts[key] = FixedLayout(self.typestore, msgtype, dict(fixed))
        return self._layouts[key]

    # -- /clock
    def clock(self, t_ns):
        """rosgraph_msgs/Clock for each stamp [ns]."""
        layout = self.layout('rosgraph_msgs/msg/Clock')
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'clock.', t_ns)
        return encoded_layout(layout, arr)

    # -- the INS topics
    def utm_odometry(self, results, t_ns, frame_id, child_frame_id):
        """vehicle/odom (messages.utm_odometry with the INS twist covariance)."""
        return self._odometry(t_ns, frame_id, child_frame_id, results[:, UTM:UTM + 3],
                              results[:, Q_UTM:Q_UTM + 4], results[:, V_INS:V_INS + 3],
                              results[:, W_INS:W_INS + 3], self.pose_cov, self.twist_cov)

    def _odometry(self, t_ns, frame_id, child_frame_id, position, orientation, linear, angular,
                  pose_cov=None, twist_cov=None):
        """nav_msgs/Odometry from columns; covariances zero unless given."""
        layout = self._odometry_layout(frame_id, child_frame_id)
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        put_vector(arr, 'pose.pose.position', position)
        put_quaternion(arr, 'pose.pose.orientation', orientation)
        put_vector(arr, 'twist.twist.linear', linear)
        put_vector(arr, 'twist.twist.angular', angular)
        if pose_cov is not None:
            arr['pose.covariance'] = pose_cov
        if twist_cov is not None:
            arr['twist.covariance'] = twist_cov
        return encoded_layout(layout, arr)

    def _odometry_layout(self, frame_id, child_frame_id):
        return self.layout('nav_msgs/msg/Odometry', ('header.frame_id', frame_id),
                           ('child_frame_id', child_frame_id))

    def odometry_tf(self, results, t_ns, frame_id, child_frame_id):
        """/tf with the one transform of the UTM odometry (messages.transform_from_odometry)."""
        layout = self.layout('tf2_msgs/msg/TFMessage', ('transforms', 1),
                              ('transforms.0.header.frame_id', frame_id),
                              ('transforms.0.child_frame_id', child_frame_id))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'transforms.0.header.stamp.', t_ns)
        put_vector(arr, 'transforms.0.transform.translation', results[:, UTM:UTM + 3])
        put_quaternion(arr, 'transforms.0.transform.rotation', results[:, Q_UTM:Q_UTM + 4])
        return encoded_layout(layout, arr)

    def ins_fix(self, results, t_ns, frame_id):
        """oxts/fix (messages.ins_fix of the row's fix)."""
        layout = self.layout('sensor_msgs/msg/NavSatFix', ('header.frame_id', frame_id))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        arr['status.status'] = msg.NavSatStatus.STATUS_GBAS_FIX
        arr['status.service'] = msg.NavSatStatus.SERVICE_GPS
        arr['latitude'] = results[:, LLH] * _RAD_TO_DEG
        arr['longitude'] = results[:, LLH + 1] * _RAD_TO_DEG
        arr['altitude'] = results[:, LLH + 2]
        arr['position_covariance'] = self.fix_cov
        arr['position_covariance_type'] = msg.NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
        return encoded_layout(layout, arr)

    def ins_imu(self, results, t_ns, frame_id, *, oxts_axes):
        """oxts/imu or imu/data (messages.ins_imu; the OxTS axes for the Polaris)."""
        layout = self.layout('sensor_msgs/msg/Imu', ('header.frame_id', frame_id))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        q = results[:, Q_INS:Q_INS + 4]
        w = results[:, W_INS:W_INS + 3]
        f = results[:, F_INS:F_INS + 3]
        v = self.ins_var
        o_var, g_var, a_var = v['orientation_var'], v['gyro_var'], v['accel_var']
        if oxts_axes:
            q, w, f = oxts_from_flu_quaternion(q), oxts_from_flu_vector(w), oxts_from_flu_vector(f)
            o_var, g_var, a_var = (oxts_variances(x) for x in (o_var, g_var, a_var))
        put_quaternion(arr, 'orientation', q)
        arr['orientation_covariance'] = msg.diag3(o_var)
        put_vector(arr, 'angular_velocity', w)
        arr['angular_velocity_covariance'] = msg.diag3(g_var)
        put_vector(arr, 'linear_acceleration', f)
        arr['linear_acceleration_covariance'] = msg.diag3(a_var)
        return encoded_layout(layout, arr)

    def ins_velocity(self, results, t_ns, frame_id):
        """oxts/velocity (messages.ins_velocity: the angular rate in deg/s)."""
        layout = self.layout('geometry_msgs/msg/TwistStamped', ('header.frame_id', frame_id))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        put_vector(arr, 'twist.linear', results[:, V_INS:V_INS + 3])
        put_vector(arr, 'twist.angular', results[:, W_INS:W_INS + 3] * _RAD_TO_DEG)
        return encoded_layout(layout, arr)

    def ground_truth_odometry(self, results, t_ns, frame_id, child_frame_id):
        """sim/ground_truth/odom (messages.ground_truth_odometry: zero covariances)."""
        return self._odometry(t_ns, frame_id, child_frame_id, results[:, UTM_TRUE:UTM_TRUE + 3],
                              results[:, Q_UTM_TRUE:Q_UTM_TRUE + 4],
                              results[:, V_N_FLU:V_N_FLU + 3], results[:, W_FLU:W_FLU + 3])

    def ins_topics(self, results, t_ns, topics, prefix, tf=True):
        """Every INS output of the epochs ``results`` for one vehicle (its
        ``topics``, an acres_sim.pipeline.topics.InsTopics, frames with ``prefix``), as
        (kind, Encoded) in publishing order: 'odom', 'tf' (with ``tf``), 'fix',
        'imu', 'velocity' (if the vehicle has it), 'truth'.  The recorder and
        the live sim node both take them from here."""
        base = prefix + BASE_FRAME
        imu_frame = OXTS_IMU_FRAME if topics.oxts_axes else INS_FRAME
        out = [('odom', self.utm_odometry(results, t_ns, UTM_FRAME, base))]
        if tf:
            out.append(('tf', self.odometry_tf(results, t_ns, UTM_FRAME, base)))
        out.append(('fix', self.ins_fix(results, t_ns, prefix + topics.fix_frame)))
        out.append(('imu', self.ins_imu(results, t_ns, prefix + imu_frame,
                                        oxts_axes=topics.oxts_axes)))
        if topics.velocity:
            out.append(('velocity', self.ins_velocity(results, t_ns, prefix + INS_FRAME)))
        out.append(('truth', self.ground_truth_odometry(results, t_ns, UTM_FRAME, base)))
        return out

    # -- the truth stream of the live sim node
    def truth_layout(self, frame_prefix):
        """The layout of one vehicle's sim/truth messages (nav_msgs/Odometry,
        frame grid, child <prefix>chassis): the one the sim node encodes them
        with (:meth:`physics_truth`) and the sensor nodes read them by
        (:func:`truth_offsets`)."""
        return self._odometry_layout(GRID_FRAME, frame_prefix + CHASSIS_FRAME)

    def physics_truth(self, states, t_ns, frame_prefix):
        """sim/truth: nav_msgs/Odometry in frame grid (the tile's survey-grid
        ENU, the physics' world; not in TF) of the states (n, TRUTH_SIZE) of
        :attr:`acres_sim.core.block.Block.states` -- the chassis origin, the
        state's quaternion, and the CoM velocity and angular velocity in world
        axes (not the child frame: these are the physics' own numbers)."""
        return self._odometry(t_ns, GRID_FRAME, frame_prefix + CHASSIS_FRAME,
                              states[:, T_P:T_P + 3], states[:, T_Q:T_Q + 4],
                              states[:, T_V:T_V + 3], states[:, T_W:T_W + 3])

    # -- the IMU
    def imu_raw(self, values, t_ns, frame_id):
        """imu/data_raw (messages.imu_from_imu_row) from the rounded (n, 6)
        row values: specific force then angular rate, FLU."""
        layout = self.layout('sensor_msgs/msg/Imu', ('header.frame_id', frame_id))
        arr = layout.empty_columns(len(t_ns))
        put_stamps(arr, 'header.stamp.', t_ns)
        arr['orientation.w'] = 1.0
        arr['orientation_covariance'][:, 0] = -1.0
        put_vector(arr, 'angular_velocity', values[:, 3:6])
        arr['angular_velocity_covariance'] = msg.diag3(self.imu_var['gyro_var'])
        put_vector(arr, 'linear_acceleration', values[:, 0:3])
        arr['linear_acceleration_covariance'] = msg.diag3(self.imu_var['accel_var'])
        return encoded_layout(layout, arr)

    # -- the GNSS receiver's rows
    def gnss_fix(self, rows, t_ns, frame_id, service):
        """gnss_receiver/fix (messages.navsat_fix_from_gnss_row) of each row."""
        layout = self.layout('sensor_msgs/msg/NavSatFix', ('header.frame_id', frame_id))
        arr = layout.empty_columns(len(rows))
        put_stamps(arr, 'header.stamp.', t_ns)
        arr['status.service'] = service
        fixes = [msg.navsat_fix_values(row) for row in rows]
        arr['status.status'] = [fix[0] for fix in fixes]
        _put_fix(arr, fixes)
        return encoded_layout(layout, arr)

    def gps_fix(self, rows, t_ns, frame_id):
        """gnss_receiver/gpsfix (messages.gps_fix_from_gnss_row) of each row."""
        layout = self.layout('gps_msgs/msg/GPSFix', ('header.frame_id', frame_id),
                             ('status.header.frame_id', frame_id),
                             *((f'status.{name}', 0) for name in _GPS_STATUS_LISTS))
        arr = layout.empty_columns(len(rows))
        t_ns = np.asarray(t_ns, dtype=np.int64)
        put_stamps(arr, 'header.stamp.', t_ns)
        put_stamps(arr, 'status.header.stamp.', t_ns)
        values = [msg.gps_fix_values(row) for row in rows]
        _put_fix(arr, [v['fix'] for v in values])
        for name in ('satellites_used', 'satellites_visible', 'status', 'position_source'):
            arr[f'status.{name}'] = [v[name] for v in values]
        arr['status.motion_source'] = msg.GPSStatus.SOURCE_NONE
        arr['status.orientation_source'] = msg.GPSStatus.SOURCE_NONE
        for name in ('pdop', 'hdop', 'vdop', 'err', 'err_horz', 'err_vert'):
            arr[name] = [v[name] for v in values]
        for name in _GPS_FIX_UNKNOWN:
            arr[name] = np.nan
        arr['gdop'] = arr['tdop'] = -1.0
        arr['time'] = t_ns / 1e9
        return encoded_layout(layout, arr)

    def gnss_heading(self, rows, t_ns, frame_id):
        """gnss_receiver/heading (messages.heading_imu) of each row that has a
        heading: (their indices in ``rows``, their Encoded)."""
        values = [msg.heading_values(row) for row in rows]
        kept = [i for i, v in enumerate(values) if v is not None]
        layout = self.layout('sensor_msgs/msg/Imu', ('header.frame_id', frame_id))
        arr = layout.empty_columns(len(kept))
        put_stamps(arr, 'header.stamp.', np.asarray(t_ns, dtype=np.int64)[kept])
        if kept:
            put_quaternion(arr, 'orientation', np.array([values[i][0] for i in kept]))
            covariance = np.zeros((len(kept), 9))
            covariance[:, ::4] = [values[i][1] for i in kept]
            arr['orientation_covariance'] = covariance
        arr['angular_velocity_covariance'][:, 0] = -1.0
        arr['linear_acceleration_covariance'][:, 0] = -1.0
        return kept, encoded_layout(layout, arr)


#: GPSStatus's lists of satellites, sent empty
_GPS_STATUS_LISTS = ('satellite_used_prn', 'satellite_visible_prn', 'satellite_visible_z',
                     'satellite_visible_azimuth', 'satellite_visible_snr')
#: GPSFix's values the receiver does not have (NaN)
_GPS_FIX_UNKNOWN = ('track', 'speed', 'climb', 'pitch', 'roll', 'dip', 'err_track', 'err_speed',
                    'err_climb', 'err_time', 'err_pitch', 'err_roll', 'err_dip')


def _put_fix(arr, fixes):
    """The position and covariance of the messages.navsat_fix_values ``fixes``
    into a NavSatFix's or a GPSFix's columns."""
    if not fixes:
        return
    _status, lat, lon, alt, cov_enu, cov_type = zip(*fixes)
    arr['latitude'] = lat
    arr['longitude'] = lon
    arr['altitude'] = alt
    covariance = np.zeros((len(fixes), 9))
    known = [i for i, c in enumerate(cov_enu) if c is not None]
    if known:
        covariance[np.ix_(known, [0, 4, 8])] = [cov_enu[i] for i in known]
    arr['position_covariance'] = covariance
    arr['position_covariance_type'] = cov_type


def truth_offsets(layout):
    """Offsets in a sim/truth message (of :meth:`MessageBatches.truth_layout`)
    of the stamp, of position + orientation and of linear + angular velocity
    (each run of doubles contiguous, as CDR lays them out)."""
    pose = layout.offset('pose.pose.position.x')
    twist = layout.offset('twist.twist.linear.x')
    if (layout.offset('pose.pose.orientation.w') != pose + 6 * 8
            or layout.offset('twist.twist.angular.z') != twist + 5 * 8):
        raise ValueError('the truth message does not hold its pose and twist as runs of doubles')
    return layout.offset('header.stamp.sec'), pose, twist
