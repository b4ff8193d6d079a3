"""ROS 2 messages from the sensors' rows, as ``rosbags`` typestore objects
(no rclpy needed): the recorder's bag writer serialises them, the live nodes
publish their CDR bytes.

Conventions (docs/interop.md, REP-103/105/145):

* stamps are integer nanoseconds of ROS time (:mod:`acres_sim.pipeline.timeline`
  gives those of the physics steps);
* covariances, one rule for every sensor message (the GNSS and INS fixes,
  both IMUs, the INS pose and twist): each variance on the diagonal is the
  model's sigma squared -- zero with the noise off (``noise: false``, the
  spec's -SensorNoNoise sets every sigma to zero) -- floored at
  :data:`MIN_VARIANCE`, so a message never says "unknown" (all zero) for a
  value it knows; only the ground truth carries zero covariances (exact);
* NavSatFix: covariance in ENU m^2, ``COVARIANCE_TYPE_DIAGONAL_KNOWN``; a row
  without a position gives ``STATUS_NO_FIX``, NaN position and covariance type
  ``UNKNOWN``;
* Imu: a field that is not provided has ``-1`` in element 0 of its covariance
  (the IMU gives no orientation);
* Odometry: pose in ``header.frame_id``, twist in ``child_frame_id``;
* the Polaris INS IMU message uses the OxTS mounting axes x left, y forward,
  z down (:mod:`acres_sim.core.frames` defines them).

The row layouts are those of ``gnss.jsonl`` (docs/gnss_receiver.md), ``imu.jsonl``
(``specific_force_flu_mps2``, ``angular_velocity_flu_radps``) and ``ins.jsonl``
(spec: INS, Outputs).
"""

import datetime
import math

import numpy as np
from rosbags.typesys import Stores, get_typestore

from acres_sim.core.frames import oxts_from_flu_quaternion, oxts_from_flu_vector, oxts_variances
from acres_sim.core.gnss.accuracy import (horizontal_radius_95, spherical_radius_95,
                                          vertical_bound_95)
from acres_sim.core.gnss.nmea import gst_sentence
from acres_sim.core.quaternion import q_y, q_z, quat_multiply
from acres_sim.pipeline import interfaces

__all__ = [
    'FIX_STATUS', 'GPS_FIX_STATUS', 'MIN_VARIANCE', 'SERVICE_GNSS', 'TYPESTORE',
    'UNKNOWN_ANGLE_VARIANCE', 'clock', 'diag3', 'diag6', 'diagnostics_from_gnss_row',
    'event_status', 'gnss_status', 'gps_fix_from_gnss_row', 'gps_fix_values',
    'ground_truth_odometry', 'gst_string', 'header', 'heading_imu', 'heading_values',
    'imu_from_imu_row', 'imu_variances', 'ins_fix', 'ins_imu', 'ins_variances', 'ins_velocity',
    'model_variance', 'navsat_fix_from_gnss_row', 'navsat_fix_values', 'navsat_service',
    'nmea_string', 'stamp', 'tf_message', 'transform_from_odometry', 'transform_stamped',
    'utm_odometry',
]

#: The typestore whose classes the builders use (its definitions equal Humble's
#: for every type used here), with gps_msgs added from its definition
#: (:mod:`acres_sim.pipeline.interfaces`).
TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
interfaces.register(TYPESTORE)

_T = TYPESTORE.types
Time = _T['builtin_interfaces/msg/Time']
Header = _T['std_msgs/msg/Header']
String = _T['std_msgs/msg/String']
Clock = _T['rosgraph_msgs/msg/Clock']
NavSatFix = _T['sensor_msgs/msg/NavSatFix']
NavSatStatus = _T['sensor_msgs/msg/NavSatStatus']
Imu = _T['sensor_msgs/msg/Imu']
Vector3 = _T['geometry_msgs/msg/Vector3']
Point = _T['geometry_msgs/msg/Point']
Quaternion = _T['geometry_msgs/msg/Quaternion']
Pose = _T['geometry_msgs/msg/Pose']
PoseWithCovariance = _T['geometry_msgs/msg/PoseWithCovariance']
Twist = _T['geometry_msgs/msg/Twist']
TwistWithCovariance = _T['geometry_msgs/msg/TwistWithCovariance']
TwistStamped = _T['geometry_msgs/msg/TwistStamped']
Transform = _T['geometry_msgs/msg/Transform']
TransformStamped = _T['geometry_msgs/msg/TransformStamped']
Odometry = _T['nav_msgs/msg/Odometry']
TFMessage = _T['tf2_msgs/msg/TFMessage']
DiagnosticArray = _T['diagnostic_msgs/msg/DiagnosticArray']
DiagnosticStatus = _T['diagnostic_msgs/msg/DiagnosticStatus']
KeyValue = _T['diagnostic_msgs/msg/KeyValue']
GPSFix = _T['gps_msgs/msg/GPSFix']
GPSStatus = _T['gps_msgs/msg/GPSStatus']

#: NavSatStatus.status per GNSS fix type.
FIX_STATUS = {
    'no_fix': NavSatStatus.STATUS_NO_FIX,        # -1
    'single': NavSatStatus.STATUS_FIX,           # 0
    'dgps': NavSatStatus.STATUS_SBAS_FIX,        # 1 (differential corrections)
    'rtk_float': NavSatStatus.STATUS_GBAS_FIX,   # 2 (ground-based augmentation: RTK)
    'rtk_fixed': NavSatStatus.STATUS_GBAS_FIX,   # 2
}

#: GPSStatus.status per GNSS fix type: gps_msgs has a constant for each state.
GPS_FIX_STATUS = {
    'no_fix': GPSStatus.STATUS_NO_FIX,           # -1
    'single': GPSStatus.STATUS_FIX,              # 0
    'dgps': GPSStatus.STATUS_DGPS_FIX,           # 18
    'rtk_float': GPSStatus.STATUS_RTK_FLOAT,     # 20 (float ambiguities)
    'rtk_fixed': GPSStatus.STATUS_RTK_FIX,       # 19 (fixed integers)
}

#: The variance [rad^2] of an angle a message does not know (the roll of the
#: dual-antenna heading): the u-blox driver's navheading value.
UNKNOWN_ANGLE_VARIANCE = 1000.0

#: The receiver tracks GPS, GLONASS and Galileo.
SERVICE_GNSS = (NavSatStatus.SERVICE_GPS | NavSatStatus.SERVICE_GLONASS
                | NavSatStatus.SERVICE_GALILEO)

#: Floor of every variance put on a covariance diagonal (a model with its noise
#: switched off still says "known, tiny" rather than "unknown" = all zero).
MIN_VARIANCE = 1e-12

_LEVEL_BY_FIX = {
    'rtk_fixed': DiagnosticStatus.OK,
    'rtk_float': DiagnosticStatus.WARN,
    'dgps': DiagnosticStatus.WARN,
    'single': DiagnosticStatus.WARN,
    'no_fix': DiagnosticStatus.ERROR,
}

_NAN = float('nan')


# ----------------------------------------------------------------------------
# Small pieces

def stamp(stamp_ns: int):
    """builtin_interfaces/Time from integer nanoseconds (non-negative)."""
    stamp_ns = int(stamp_ns)
    if stamp_ns < 0:
        raise ValueError(f'negative stamp {stamp_ns} ns')
    sec, nanosec = divmod(stamp_ns, 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def header(stamp_ns: int, frame_id: str):
    """std_msgs/Header."""
    return Header(stamp=stamp(stamp_ns), frame_id=str(frame_id))


def clock(t_ns: int):
    """rosgraph_msgs/Clock."""
    return Clock(clock=stamp(t_ns))


def _vec3(values):
    x, y, z = (float(v) for v in values)
    return Vector3(x=x, y=y, z=z)


def _point(values):
    x, y, z = (float(v) for v in values)
    return Point(x=x, y=y, z=z)


def _quat(xyzw):
    x, y, z, w = (float(v) for v in xyzw)
    return Quaternion(x=x, y=y, z=z, w=w)


def _three(values):
    """A scalar repeated, or three values, as a tuple of floats."""
    if isinstance(values, (int, float)):
        v = float(values)
        return v, v, v
    a, b, c = values
    return float(a), float(b), float(c)


def diag3(variances, floor=MIN_VARIANCE):
    """A 3x3 covariance (9 values, row-major) with the variances (a scalar or 3) on
    its diagonal, each at least ``floor``."""
    a, b, c = (max(v, floor) for v in _three(variances))
    return np.array([a, 0.0, 0.0, 0.0, b, 0.0, 0.0, 0.0, c])


def diag6(variances, floor=0.0):
    """A 6x6 covariance (36 values) with the 6 variances on its diagonal, each at
    least ``floor``."""
    v = [max(float(x), floor) for x in variances]
    if len(v) != 6:
        raise ValueError(f'6 variances expected, got {len(v)}')
    cov = np.zeros(36, dtype=np.float64)
    cov[::7] = v
    return cov


def _sub(row, key):
    """Accept either the whole INS row or the sub-object ``row[key]``."""
    return row[key] if isinstance(row, dict) and key in row and isinstance(row[key], dict) else row


# ----------------------------------------------------------------------------
# GNSS receiver

def navsat_service(cfg) -> int:
    """NavSatStatus.service of the receiver: a bit per constellation that is on
    (``gnss.constellations.*``)."""
    bits = (('gps', NavSatStatus.SERVICE_GPS), ('glonass', NavSatStatus.SERVICE_GLONASS),
            ('galileo', NavSatStatus.SERVICE_GALILEO))
    return sum(bit for name, bit in bits if cfg[f'gnss.constellations.{name}'])


def navsat_fix_values(row: dict):
    """The numbers of a ``gnss.jsonl`` row's NavSatFix (see
    :func:`navsat_fix_from_gnss_row`): (status, latitude, longitude, altitude,
    the covariance's ENU diagonal (3) or None, covariance type)."""
    status = FIX_STATUS[row.get('fix_type', 'no_fix')]
    lat, lon = row.get('latitude_deg'), row.get('longitude_deg')
    alt = row.get('ellipsoidal_height_m')
    if status == NavSatStatus.STATUS_NO_FIX or lat is None or lon is None or alt is None:
        return NavSatStatus.STATUS_NO_FIX, _NAN, _NAN, _NAN, None, \
            NavSatFix.COVARIANCE_TYPE_UNKNOWN
    cov_enu = row.get('covariance_enu_m2')
    if cov_enu is None:
        return status, float(lat), float(lon), float(alt), None, \
            NavSatFix.COVARIANCE_TYPE_UNKNOWN
    floor = MIN_VARIANCE
    return status, float(lat), float(lon), float(alt), \
        [max(v, floor) for v in _three(cov_enu)], NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN


def _fix_covariance(cov_enu):
    """A fix's position covariance (9 values) from :func:`navsat_fix_values`'
    ENU diagonal, or zeros when it has none."""
    return np.zeros(9, dtype=np.float64) if cov_enu is None else diag3(cov_enu)


def navsat_fix_from_gnss_row(row: dict, stamp_ns: int, frame_id: str, service: int = SERVICE_GNSS):
    """sensor_msgs/NavSatFix from a ``gnss.jsonl`` row.

    Status from ``fix_type`` (:data:`FIX_STATUS`); latitude, longitude and
    altitude (ellipsoidal height) of the row's output frame; covariance the
    ENU diagonal ``covariance_enu_m2`` (floored at :data:`MIN_VARIANCE`),
    ``DIAGONAL_KNOWN``.  A row in no_fix,
    or a row without geodetic keys (site disabled), gives ``STATUS_NO_FIX``,
    NaN position and ``COVARIANCE_TYPE_UNKNOWN``; a fix without a covariance
    gives a zero one, ``UNKNOWN``.  The numbers are :func:`navsat_fix_values`'.
    """
    status, lat, lon, alt, cov_enu, cov_type = navsat_fix_values(row)
    cov = _fix_covariance(cov_enu)
    return NavSatFix(
        header=header(stamp_ns, frame_id),
        status=NavSatStatus(status=int(status), service=int(service)),
        latitude=lat, longitude=lon, altitude=alt,
        position_covariance=cov, position_covariance_type=int(cov_type))


def nmea_string(row: dict):
    """std_msgs/String with the row's ``$GNGGA`` sentence, or None if the row
    has none (site disabled)."""
    sentence = row.get('nmea_gga')
    return None if sentence is None else String(data=str(sentence))


def gst_string(row: dict):
    """std_msgs/String with the ``$GNGST`` sentence of a row
    (:func:`acres_sim.core.gnss.nmea.gst_sentence`), or None if the row has no
    GGA (site disabled).  Its time is the GGA's (field 1 of ``nmea_gga``: the
    same epoch, also when a freeze repeats an old row); its sigmas are the
    row's ``sigma_enu_m``, its PDOP the row's."""
    gga = row.get('nmea_gga')
    if gga is None:
        return None
    hhmmss = gga.split(',')[1]
    utc = datetime.time(int(hhmmss[0:2]), int(hhmmss[2:4]), int(hhmmss[4:6]),
                        int(hhmmss[7:9]) * 10_000)
    position = row.get('position_enu_m')
    sentence = gst_sentence(utc, row['gga_quality'] if position is not None else 0,
                            row.get('sigma_enu_m'), row.get('pdop'))
    return String(data=sentence)


def gps_fix_values(row: dict):
    """The numbers of a ``gnss.jsonl`` row's GPSFix beyond its NavSatFix's
    (see :func:`gps_fix_from_gnss_row`), a dict by field name: ``status``
    and ``position_source`` (GPSStatus), ``satellites_used``,
    ``satellites_visible``, ``pdop``, ``hdop``, ``vdop`` and the 95 % radii
    ``err``, ``err_horz``, ``err_vert``; and ``fix``, the NavSatFix's
    :func:`navsat_fix_values`."""
    fix = navsat_fix_values(row)
    has_fix = fix[0] != NavSatStatus.STATUS_NO_FIX
    err = err_horz = err_vert = _NAN
    sigma = row.get('sigma_enu_m')
    if has_fix and sigma is not None:
        se, sn, su = (float(v) for v in sigma)
        err_horz, err_vert = horizontal_radius_95(se, sn), vertical_bound_95(su)
        err = spherical_radius_95(se, sn, su)

    def dop(name):
        value = row.get(name)
        return -1.0 if value is None else float(value)

    return {
        'fix': fix,
        'status': GPS_FIX_STATUS[row.get('fix_type', 'no_fix') if has_fix else 'no_fix'],
        'position_source': GPSStatus.SOURCE_GPS if has_fix else GPSStatus.SOURCE_NONE,
        'satellites_used': int(row.get('satellites_used', 0)),
        'satellites_visible': int(row.get('satellites_above_mask', 0)),
        'pdop': dop('pdop'), 'hdop': dop('hdop'), 'vdop': dop('vdop'),
        'err': err, 'err_horz': err_horz, 'err_vert': err_vert,
    }


def gps_fix_from_gnss_row(row: dict, stamp_ns: int, frame_id: str):
    """gps_msgs/GPSFix from a ``gnss.jsonl`` row (docs/gnss_receiver.md, "GPSFix").

    Status from ``fix_type`` (:data:`GPS_FIX_STATUS`), satellites used
    (``satellites_used``) and visible (``satellites_above_mask``), no PRN
    lists; position_source GPS with a fix, the motion and orientation sources
    none (the receiver has no velocity or attitude).  Latitude, longitude and
    altitude as :func:`navsat_fix_from_gnss_row` (the ellipsoidal height of the
    output frame, as gps_umd's own NavSatFix converter carries it over); the
    covariance as NavSatFix's.  ``time``: the epoch's UTC as POSIX seconds (the
    stamp; gps_umd's gpsd_client also puts gpsd's UTC time there).  DOPs: the
    row's hdop, vdop, pdop; gdop and tdop -1 (unknown: the model has no clock).
    ``err_horz``, ``err_vert``, ``err``: the 95 % radii of the reported sigmas
    (:mod:`acres_sim.core.gnss.accuracy`).  Every value the receiver does not
    have (track, speed, climb, pitch, roll, dip and their errors, err_time) is
    NaN, as are position and errors without a fix.  The numbers are
    :func:`gps_fix_values`'."""
    v = gps_fix_values(row)
    _status, latitude, longitude, altitude, cov_enu, cov_type = v['fix']
    covariance = _fix_covariance(cov_enu)
    nan = _NAN
    head = header(stamp_ns, frame_id)
    none = np.zeros(0, dtype=np.int32)
    status = GPSStatus(
        header=head, satellites_used=v['satellites_used'], satellite_used_prn=none,
        satellites_visible=v['satellites_visible'], satellite_visible_prn=none,
        satellite_visible_z=none, satellite_visible_azimuth=none, satellite_visible_snr=none,
        status=int(v['status']),
        motion_source=int(GPSStatus.SOURCE_NONE), orientation_source=int(GPSStatus.SOURCE_NONE),
        position_source=int(v['position_source']))
    return GPSFix(
        header=head, status=status, latitude=latitude, longitude=longitude,
        altitude=altitude, track=nan, speed=nan, climb=nan, pitch=nan, roll=nan, dip=nan,
        time=int(stamp_ns) / 1e9, gdop=-1.0, pdop=v['pdop'], hdop=v['hdop'],
        vdop=v['vdop'], tdop=-1.0, err=v['err'], err_horz=v['err_horz'], err_vert=v['err_vert'],
        err_track=nan, err_speed=nan, err_climb=nan, err_time=nan, err_pitch=nan,
        err_roll=nan, err_dip=nan, position_covariance=covariance,
        position_covariance_type=int(cov_type))


def heading_values(row: dict):
    """The numbers of a ``gnss_heading.jsonl`` row's Imu (see
    :func:`heading_imu`): (the orientation quaternion x, y, z, w, the
    orientation covariance's diagonal), or None without a heading."""
    if not row.get('heading_valid'):
        return None
    yaw = float(row['heading_rad'])
    pitch = row.get('pitch_rad')
    pitch_var = UNKNOWN_ANGLE_VARIANCE if pitch is None else float(row['sigma_pitch_rad']) ** 2
    yaw_var = float(row['sigma_heading_rad']) ** 2
    q = quat_multiply(q_z(yaw), q_y(0.0 if pitch is None else float(pitch)))   # roll 0
    floor = MIN_VARIANCE
    return q, [max(v, floor) for v in (UNKNOWN_ANGLE_VARIANCE, pitch_var, yaw_var)]


def heading_imu(row: dict, stamp_ns: int, frame_id: str):
    """sensor_msgs/Imu with the dual-antenna heading of a ``gnss_heading.jsonl``
    row, or None when the epoch has no heading (nothing is published then).

    Orientation: roll 0, the row's pitch (0 when the baseline gives none), yaw
    the heading (ENU, counter-clockwise from east), as ZYX Euler angles;
    orientation_covariance: the heading's and pitch's sigma squared (floored at
    :data:`MIN_VARIANCE`) on the diagonal, :data:`UNKNOWN_ANGLE_VARIANCE` for the
    roll and for a pitch the baseline does not give.  No angular velocity or
    acceleration: element 0 of their covariances is -1 (REP-145; the u-blox
    driver's navheading does the same).  The numbers are :func:`heading_values`'."""
    values = heading_values(row)
    if values is None:
        return None
    q, variances = values
    not_provided = np.zeros(9, dtype=np.float64)
    not_provided[0] = -1.0
    return Imu(
        header=header(stamp_ns, frame_id), orientation=_quat(q),
        orientation_covariance=diag3(variances),
        angular_velocity=_vec3((0.0, 0.0, 0.0)), angular_velocity_covariance=not_provided,
        linear_acceleration=_vec3((0.0, 0.0, 0.0)),
        linear_acceleration_covariance=not_provided.copy())


def _fmt(value) -> str:
    if value is None:
        return 'n/a'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


_DIAG_KEYS = (
    'fix_type', 'gga_quality', 'satellites_used', 'satellites_above_mask', 'satellites_clear',
    'satellites_near_obstruction', 'satellites_foliage', 'satellites_blocked',
    'hdop', 'vdop', 'pdop', 'hdop_open_sky', 'vdop_open_sky',
    'multipath_index', 'reflector_index', 'correction_age_s',
    'rtk_lock_age_s', 'rtk_converge_s', 'rtk_time_to_fix_s', 'position_std_m',
)


def gnss_status(row: dict, name: str, hardware_id: str = ''):
    """The receiver's DiagnosticStatus of a ``gnss.jsonl`` row (see
    :func:`diagnostics_from_gnss_row`) as (level, name, message, hardware_id,
    [(key, value), ...])."""
    fix_type = row.get('fix_type', 'no_fix')
    values = [(k, _fmt(row.get(k))) for k in _DIAG_KEYS if k in row]
    message = str(row.get('solution', fix_type))
    if row.get('events'):          # the fault events at work (none: the key is absent)
        values.append(('events', ', '.join(row['events'])))
        message += f' (events: {", ".join(row["events"])})'
    return int(_LEVEL_BY_FIX[fix_type]), str(name), message, str(hardware_id), values


def diagnostics_from_gnss_row(row: dict, stamp_ns: int, name: str, hardware_id: str = ''):
    """diagnostic_msgs/DiagnosticArray with one status for the receiver:
    level OK in rtk_fixed, WARN in rtk_float, dgps and single, ERROR in no_fix;
    message the solution label; key/values fix type, satellites, DOPs,
    multipath, correction age, lock / convergence / time-to-fix ('n/a' when
    null), horizontal σ; and the fault events at work, when there are any
    (:func:`gnss_status`; :func:`acres_sim.pipeline.cdr.diagnostic_array`
    encodes the same message without building it)."""
    level, name, message, hardware_id, values = gnss_status(row, name, hardware_id)
    status = DiagnosticStatus(
        level=level, name=name, message=message, hardware_id=hardware_id,
        values=[KeyValue(key=k, value=v) for k, v in values])
    return DiagnosticArray(header=header(stamp_ns, ''), status=[status])


def event_status(names, active, stamp_ns: int, name: str):
    """diagnostic_msgs/DiagnosticArray of a vehicle's fault events: level WARN
    while any is active, else OK; the message names the active ones; one
    key/value per event (active or inactive)."""
    values = [KeyValue(key=str(n), value='active' if n in active else 'inactive') for n in names]
    status = DiagnosticStatus(
        level=int(DiagnosticStatus.WARN if active else DiagnosticStatus.OK), name=str(name),
        message=('active: ' + ', '.join(active)) if active else 'no event active',
        hardware_id='', values=values)
    return DiagnosticArray(header=header(stamp_ns, ''), status=[status])


# ----------------------------------------------------------------------------
# IMU

def model_variance(cfg, key, degrees=False) -> float:
    """The variance of the model's sigma ``key`` of a loaded config: its square,
    or zero with the noise off (``noise``; spec: Command-Line Options, where
    -SensorNoNoise sets every error, bias and noise of every sensor to zero).
    ``degrees``: the sigma is in degrees, the variance in rad^2."""
    if not cfg['noise']:
        return 0.0
    sigma = float(cfg[key])
    return (math.radians(sigma) if degrees else sigma) ** 2


def imu_variances(cfg) -> dict:
    """``accel_var`` and ``gyro_var`` for :func:`imu_from_imu_row` from a loaded
    config: the white-noise σ² (``imu.accel_std_mps2``, ``imu.gyro_std_radps``;
    :func:`model_variance`)."""
    return {'accel_var': model_variance(cfg, 'imu.accel_std_mps2'),
            'gyro_var': model_variance(cfg, 'imu.gyro_std_radps')}


def imu_from_imu_row(row: dict, stamp_ns: int, frame_id: str, accel_var, gyro_var):
    """sensor_msgs/Imu from an ``imu.jsonl`` row (FLU).  No orientation:
    identity quaternion with ``orientation_covariance[0] = -1``; ``accel_var``
    and ``gyro_var`` (scalars or 3 values, m²/s⁴ and rad²/s²) on the diagonals,
    floored at :data:`MIN_VARIANCE`."""
    orientation_cov = np.zeros(9, dtype=np.float64)
    orientation_cov[0] = -1.0
    return Imu(
        header=header(stamp_ns, frame_id),
        orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0),
        orientation_covariance=orientation_cov,
        angular_velocity=_vec3(row['angular_velocity_flu_radps']),
        angular_velocity_covariance=diag3(gyro_var),
        linear_acceleration=_vec3(row['specific_force_flu_mps2']),
        linear_acceleration_covariance=diag3(accel_var))


# ----------------------------------------------------------------------------
# INS

def ins_variances(cfg) -> dict:
    """Covariance inputs of the INS messages from a loaded config:
    ``orientation_var`` (roll, pitch, yaw: attitude_sigma_deg² twice,
    heading_sigma_deg², in rad²), ``gyro_var``, ``accel_var`` (white σ²) for
    :func:`ins_imu`, and ``twist_var`` (velocity_white σ² ×3, gyro_white σ² ×3)
    for :func:`utm_odometry` (each :func:`model_variance`)."""
    att = model_variance(cfg, 'ins.attitude_sigma_deg', degrees=True)
    hdg = model_variance(cfg, 'ins.heading_sigma_deg', degrees=True)
    gyro = model_variance(cfg, 'ins.gyro_white_radps')
    accel = model_variance(cfg, 'ins.accel_white_mps2')
    vel = model_variance(cfg, 'ins.velocity_white_mps')
    return {'orientation_var': (att, att, hdg), 'gyro_var': gyro, 'accel_var': accel,
            'twist_var': (vel, vel, vel, gyro, gyro, gyro)}


def ins_fix(row: dict, stamp_ns: int, frame_id: str):
    """sensor_msgs/NavSatFix from an ``ins.jsonl`` row (or its ``fix`` object):
    latitude, longitude, altitude; the row's status (2, the spec's "RTK" =
    ``STATUS_GBAS_FIX``) and service (1 = ``SERVICE_GPS``); covariance from
    ``position_covariance`` (3 values: the diagonal, ``DIAGONAL_KNOWN``;
    9 values: the full ENU matrix, ``KNOWN`` if it has off-diagonal terms)."""
    fix = _sub(row, 'fix')
    cov_in = fix['position_covariance']
    if len(cov_in) == 3:
        cov = diag3(cov_in)   # floored: a zero variance (noise off) makes an EKF singular
        cov_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    elif len(cov_in) == 9:
        cov = np.array([float(c) for c in cov_in])
        off = cov.reshape(3, 3) - np.diag(np.diag(cov.reshape(3, 3)))
        cov_type = (NavSatFix.COVARIANCE_TYPE_KNOWN if np.any(off != 0.0)
                    else NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN)
    else:
        raise ValueError(f'position_covariance: 3 or 9 values expected, got {len(cov_in)}')
    return NavSatFix(
        header=header(stamp_ns, frame_id),
        status=NavSatStatus(status=int(fix.get('status', NavSatStatus.STATUS_GBAS_FIX)),
                            service=int(fix.get('service', NavSatStatus.SERVICE_GPS))),
        latitude=float(fix['latitude_deg']), longitude=float(fix['longitude_deg']),
        altitude=float(fix['altitude_m']),
        position_covariance=cov, position_covariance_type=int(cov_type))


def ins_imu(row: dict, stamp_ns: int, frame_id: str, *, oxts_axes: bool,
            orientation_var, gyro_var, accel_var):
    """sensor_msgs/Imu from an ``ins.jsonl`` row (or its ``imu`` object):
    attitude ``orientation_enu_xyzw`` (FLU -> ENU), angular rate and specific
    force in FLU.  ``oxts_axes=True`` (Polaris) expresses all three in the
    OxTS axes x left, y forward, z down; the variances (scalars or per axis
    in FLU order; orientation as roll, pitch, yaw) are permuted with them."""
    imu = _sub(row, 'imu')
    q = imu['orientation_enu_xyzw']
    w = imu['angular_velocity_flu_radps']
    f = imu['linear_acceleration_flu_mps2']
    o_var, g_var, a_var = orientation_var, gyro_var, accel_var
    if oxts_axes:
        q = oxts_from_flu_quaternion(q)
        w = oxts_from_flu_vector(w)
        f = oxts_from_flu_vector(f)
        o_var, g_var, a_var = oxts_variances(o_var), oxts_variances(g_var), oxts_variances(a_var)
    return Imu(
        header=header(stamp_ns, frame_id),
        orientation=_quat(q), orientation_covariance=diag3(o_var),
        angular_velocity=_vec3(w), angular_velocity_covariance=diag3(g_var),
        linear_acceleration=_vec3(f), linear_acceleration_covariance=diag3(a_var))


def ins_velocity(row: dict, stamp_ns: int, frame_id: str = 'oxts_link'):
    """geometry_msgs/TwistStamped from an ``ins.jsonl`` row (or its ``velocity``
    object): linear velocity in m/s and angular rate in DEGREES per second,
    both in FLU axes (spec: topic oxts/velocity)."""
    vel = _sub(row, 'velocity')
    angular_dps = [math.degrees(float(c)) for c in vel['angular_flu_radps']]
    return TwistStamped(header=header(stamp_ns, frame_id),
                        twist=Twist(linear=_vec3(vel['linear_flu_mps']),
                                    angular=_vec3(angular_dps)))


def _frame(d, *keys, default):
    for k in keys:
        if d.get(k):
            return str(d[k])
    return default


def utm_odometry(odom: dict, stamp_ns: int, *, frame_id: str = None, child_frame_id: str = None,
                 twist_var=None):
    """nav_msgs/Odometry from the ``odom`` object of an ``ins.jsonl`` row (or
    the row): pose ``position_m`` [E, N, h] and ``orientation_xyzw`` (q_utm) in
    the frame ``utm``; pose covariance the 6-value ``covariance`` diagonal
    (x, y, z, roll, pitch, yaw); twist ``linear_flu_mps`` / ``angular_flu_radps``
    in the child frame ``base_footprint``; twist covariance ``twist_var``
    (6 values, floored at :data:`MIN_VARIANCE`) if given (the row has none),
    else zero.  ``frame_id`` and
    ``child_frame_id`` override the row's names (e.g. with an agent prefix)."""
    odom = _sub(odom, 'odom')
    twist_cov = np.zeros(36) if twist_var is None else diag6(twist_var, floor=MIN_VARIANCE)
    return Odometry(
        header=header(stamp_ns, frame_id or _frame(odom, 'frame', 'frame_id', default='utm')),
        child_frame_id=(child_frame_id
                        or _frame(odom, 'child', 'child_frame_id', default='base_footprint')),
        pose=PoseWithCovariance(
            pose=Pose(position=_point(odom['position_m']),
                      orientation=_quat(odom['orientation_xyzw'])),
            covariance=diag6(odom['covariance'], floor=MIN_VARIANCE)),
        twist=TwistWithCovariance(
            twist=Twist(linear=_vec3(odom['linear_flu_mps']),
                        angular=_vec3(odom['angular_flu_radps'])),
            covariance=twist_cov))


def ground_truth_odometry(truth: dict, stamp_ns: int, *, frame_id: str = 'utm',
                          child_frame_id: str = 'base_footprint'):
    """nav_msgs/Odometry of the error-free pose from the ``truth`` object of an
    ``ins.jsonl`` row (or the row): ``position_utm_m``, ``orientation_utm_xyzw``
    in ``utm``; twist ``linear_flu_mps`` / ``angular_flu_radps`` in the child
    frame; covariances zero (exact)."""
    truth = _sub(truth, 'truth')
    return Odometry(
        header=header(stamp_ns, frame_id), child_frame_id=str(child_frame_id),
        pose=PoseWithCovariance(
            pose=Pose(position=_point(truth['position_utm_m']),
                      orientation=_quat(truth['orientation_utm_xyzw'])),
            covariance=np.zeros(36)),
        twist=TwistWithCovariance(
            twist=Twist(linear=_vec3(truth['linear_flu_mps']),
                        angular=_vec3(truth['angular_flu_radps'])),
            covariance=np.zeros(36)))


# ----------------------------------------------------------------------------
# TF

def transform_stamped(stamp_ns: int, parent: str, child: str, translation, rotation_xyzw):
    """geometry_msgs/TransformStamped parent -> child."""
    return TransformStamped(
        header=header(stamp_ns, parent), child_frame_id=str(child),
        transform=Transform(translation=_vec3(translation), rotation=_quat(rotation_xyzw)))


def transform_from_odometry(msg):
    """The TF (header.frame_id -> child_frame_id) of an Odometry message."""
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    return TransformStamped(
        header=msg.header, child_frame_id=msg.child_frame_id,
        transform=Transform(translation=Vector3(x=p.x, y=p.y, z=p.z),
                            rotation=Quaternion(x=q.x, y=q.y, z=q.z, w=q.w)))


def tf_message(transforms):
    """tf2_msgs/TFMessage from TransformStamped messages (for /tf and /tf_static)."""
    return TFMessage(transforms=list(transforms))
