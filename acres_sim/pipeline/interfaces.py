"""Message types acres_sim sends that neither the ros-jazzy wheels nor the
``rosbags`` typestore have: ``gps_msgs/msg/GPSFix`` and its
``gps_msgs/msg/GPSStatus`` (the gps_msgs package of gps_umd, 2.x, whose
GPSStatus has the RTK constants).

The definitions below state the interface field for field and constant for
constant in upstream's order, so the type hash (RIHS01: names and types of the
fields, nested types included) and the CDR layout are upstream's and a real
gps_msgs subscriber matches; the comments are ours.  ``rosbags`` learns them
from this text (:func:`register`, for the recorder's bag and the message
builders), and ``tools/build_interfaces.py --package gps_msgs`` generates and
compiles the ROS package from the same text for the live nodes.

Nothing here imports anything at module level: the build tool reads it
before anything else is set up.
"""

__all__ = ['GPS_MSGS', 'GPS_MSGS_VERSION', 'register']

#: The gps_msgs release whose interface this is.
GPS_MSGS_VERSION = '2.0.4'

GPS_STATUS_MSG = """\
# The satellites and the kind of solution of a GPS fix (gps_msgs).
std_msgs/Header header

# Satellites used in the solution: their number and PRNs
uint16 satellites_used
int32[] satellite_used_prn

# Satellites visible: their number, PRNs, elevations, azimuths and SNRs [dB]
uint16 satellites_visible
int32[] satellite_visible_prn
int32[] satellite_visible_z
int32[] satellite_visible_azimuth
int32[] satellite_visible_snr

# Values of status
int16 STATUS_NO_FIX=-1
int16 STATUS_FIX=0
int16 STATUS_SBAS_FIX=1
int16 STATUS_GBAS_FIX=2
int16 STATUS_DGPS_FIX=18
int16 STATUS_RTK_FIX=19
int16 STATUS_RTK_FLOAT=20
int16 STATUS_WAAS_FIX=33
int16 status

# Bits of the three source fields
uint16 SOURCE_NONE=0
uint16 SOURCE_GPS=1
uint16 SOURCE_POINTS=2
uint16 SOURCE_DOPPLER=4
uint16 SOURCE_ALTIMETER=8
uint16 SOURCE_MAGNETIC=16
uint16 SOURCE_GYRO=32
uint16 SOURCE_ACCEL=64

uint16 motion_source
uint16 orientation_source
uint16 position_source
"""

GPS_FIX_MSG = """\
# A GPS fix with its DOPs and uncertainties, beside sensor_msgs/NavSatFix (gps_msgs).
std_msgs/Header header

GPSStatus status

# Position: latitude and longitude [deg], altitude [m]
float64 latitude
float64 longitude
float64 altitude

# Motion: track [deg from north], ground speed and vertical speed [m/s]
float64 track
float64 speed
float64 climb

# Orientation of the device [deg]
float64 pitch
float64 roll
float64 dip

# Time of the fix
float64 time

# Dilutions of precision (a value <= 0: unknown)
float64 gdop
float64 pdop
float64 hdop
float64 vdop
float64 tdop

# Uncertainties at 95 % confidence: position [m], track [deg], speeds [m/s],
# time, orientation [deg]
float64 err
float64 err_horz
float64 err_vert
float64 err_track
float64 err_speed
float64 err_climb
float64 err_time
float64 err_pitch
float64 err_roll
float64 err_dip

# Position covariance [m^2], east, north, up, row-major
float64[9] position_covariance

uint8 COVARIANCE_TYPE_UNKNOWN=0
uint8 COVARIANCE_TYPE_APPROXIMATED=1
uint8 COVARIANCE_TYPE_DIAGONAL_KNOWN=2
uint8 COVARIANCE_TYPE_KNOWN=3

uint8 position_covariance_type
"""

#: (type name, .msg text) of the package, a type after those it uses.
GPS_MSGS = (('GPSStatus', GPS_STATUS_MSG), ('GPSFix', GPS_FIX_MSG))


def register(typestore):
    """Add the gps_msgs types to a ``rosbags`` typestore (once)."""
    from rosbags.typesys import get_types_from_msg

    if 'gps_msgs/msg/GPSFix' in typestore.fielddefs:
        return
    types = {}
    for name, text in GPS_MSGS:
        types.update(get_types_from_msg(text, f'gps_msgs/msg/{name}'))
    typestore.register(types)
