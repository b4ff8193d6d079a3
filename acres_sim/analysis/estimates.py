"""The estimates to score, read into one form: times, positions, orientations
and the covariance they report, in the frame they are expressed in, with the
frame of the point they claim to be.

Sources (``--estimate``):

* ``BAG:TOPIC``: a topic of a rosbag2 (a bag folder or an ``.mcap`` file), of
  type nav_msgs/Odometry, geometry_msgs/PoseWithCovarianceStamped,
  geometry_msgs/PoseStamped or sensor_msgs/NavSatFix, read with rosbags;
  times are the messages' header stamps;
* ``BAG:tf:PARENT:CHILD``: the transforms PARENT -> CHILD on ``/tf`` (and
  ``/tf_static``) of a bag;
* a TUM trajectory file (``time x y z qx qy qz qw``; evo reads it), in
  ``map`` for ``base_footprint`` unless told otherwise;
* ``ins`` and ``gnss``: the rig's own INS odometry and GNSS receiver, from
  the recording's ``ins.jsonl`` / ``gnss.jsonl`` (the same values as their
  topics).

:func:`in_map` then brings an estimate given in ``utm`` or as latitude /
longitude into grid ENU (``map``), through the site's datum chain.
"""

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from acres_sim.analysis.run_truth import RunError, read_rows
from acres_sim.core.geo import utm_inverse
from acres_sim.pipeline.topics import ANTENNA_FRAME, BASE_FRAME, GRID_FRAME, MAP_FRAME, UTM_FRAME

__all__ = ['BUILTIN', 'Estimate', 'in_map', 'open_bag', 'parse_source', 'read_estimate',
           'stamp_ns']

BUILTIN = ('ins', 'gnss')
GEODETIC = 'geodetic'            # the frame of a NavSatFix: latitude, longitude, height
#: Frames whose origin the simulator defines: no alignment unless asked for.
SIM_FRAMES = (MAP_FRAME, GRID_FRAME, UTM_FRAME, GEODETIC)
POSE_TYPES = ('nav_msgs/msg/Odometry', 'geometry_msgs/msg/PoseWithCovarianceStamped',
              'geometry_msgs/msg/PoseStamped')
FIX_TYPE = 'sensor_msgs/msg/NavSatFix'
TF_TOPICS = ('/tf', '/tf_static')


@dataclass
class Estimate:
    """An estimate of one point of a vehicle over time.  ``positions`` in
    ``frame`` (latitude, longitude [deg] and height for ``geodetic``);
    ``orientations`` wxyz (None: none given); ``position_cov`` N x 3 x 3 in
    the frame's east/north/up (None: none reported); ``yaw_var`` [rad^2];
    ``valid``: a position was given (a NavSatFix without a fix, a GNSS epoch
    without a position are kept, for availability, but not scored)."""

    name: str
    source: str
    frame: str
    child_frame: str
    times: np.ndarray
    positions: np.ndarray
    orientations: object = None
    position_cov: object = None
    yaw_var: object = None
    valid: object = None
    datum: str = None               # of utm or geodetic coordinates
    topic: str = None

    def __post_init__(self):
        if self.valid is None:
            self.valid = np.ones(len(self.times), dtype=bool)


@dataclass
class Source:
    """A parsed ``--estimate``: ``kind`` 'builtin', 'topic', 'tf' or 'tum'."""

    text: str
    kind: str
    path: Path = None
    topic: str = None
    parent: str = None
    child: str = None


def _tf_source(text, path, pair):
    parts = pair.split(':')
    if len(parts) != 3 or not all(parts[1:]):
        raise RunError(f"--estimate {text}: give a TF pair as [BAG:]tf:PARENT:CHILD")
    return Source(text, 'tf', path, parent=parts[1].lstrip('/'), child=parts[2].lstrip('/'))


def parse_source(text, run_bag=None) -> Source:
    """``ins``, ``gnss``, ``BAG:TOPIC``, ``BAG:tf:PARENT:CHILD``, a TUM file, or
    ``/TOPIC`` and ``tf:PARENT:CHILD`` of the run's own bag ``run_bag``."""
    if text in BUILTIN:
        return Source(text, 'builtin')
    for i, char in enumerate(text):
        if char != ':' or i == 0:
            continue
        path, rest = Path(text[:i]), text[i + 1:]
        if not path.exists():
            continue
        if rest.startswith('tf:'):
            return _tf_source(text, path, rest)
        if rest:
            return Source(text, 'topic', path, topic='/' + rest.lstrip('/'))
    path = Path(text)
    if path.is_file():
        return Source(text, 'tum', path)
    if text.startswith('tf:') or text.startswith('/'):
        if run_bag is None:
            raise RunError(f'--estimate {text}: the run has no bag of its own; give BAG:{text}')
        if text.startswith('tf:'):
            return _tf_source(text, run_bag, text)
        return Source(text, 'topic', run_bag, topic=text)
    raise RunError(f'--estimate {text}: not ins, gnss, BAG:TOPIC, BAG:tf:PARENT:CHILD or a '
                   'TUM file (no such file or bag)')


# -- the recording's own outputs ------------------------------------------------

def _rows(path):
    if not Path(path).is_file():
        raise RunError(f'{path} is missing: the run has no such output')
    return read_rows(path)


def _ins(vehicle, prefix):
    rows = _rows(vehicle.folder / 'ins.jsonl')
    if not rows:
        raise RunError(f'{vehicle.folder / "ins.jsonl"} holds no rows')
    times = np.array([row['sample_time_s'] for row in rows])
    xyz = np.array([row['position_enu_m'] for row in rows])
    xyzw = np.array([row['imu']['orientation_enu_xyzw'] for row in rows])
    variances = np.array([row['odom']['covariance'] for row in rows])   # x y z roll pitch yaw
    cov = np.zeros((len(rows), 3, 3))
    cov[:, [0, 1, 2], [0, 1, 2]] = variances[:, :3]
    return Estimate('ins' + prefix, 'ins', MAP_FRAME, vehicle.frame_prefix + BASE_FRAME, times,
                    xyz, xyzw[:, [3, 0, 1, 2]], cov, variances[:, 5])


def _gnss(vehicle, prefix):
    rows = _rows(vehicle.folder / 'gnss.jsonl')
    if not rows:
        raise RunError(f'{vehicle.folder / "gnss.jsonl"} holds no rows')
    times = np.array([row['sample_time_s'] for row in rows])
    valid = np.array([row.get('position_enu_m') is not None for row in rows])
    xyz = np.array([row['position_enu_m'] if ok else [np.nan] * 3
                    for row, ok in zip(rows, valid)], dtype=float)
    cov = np.zeros((len(rows), 3, 3))
    for i, row in enumerate(rows):
        cov[i, [0, 1, 2], [0, 1, 2]] = row['covariance_enu_m2'] if valid[i] else np.nan
    return Estimate('gnss' + prefix, 'gnss', MAP_FRAME, vehicle.frame_prefix + ANTENNA_FRAME,
                    times, xyz, None, cov, None, valid)


def builtin(name, vehicle, several):
    if not vehicle.rows:
        raise RunError(f'--estimate {name} reads the rows of a recording; of a live bag give '
                       'its topics (e.g. /vehicle/odom, /gnss_receiver/fix)')
    prefix = f'@{vehicle.name}' if several else ''
    return (_ins if name == 'ins' else _gnss)(vehicle, prefix)


# -- bags -------------------------------------------------------------------------

class open_bag:                               # noqa: N801 - used as a function
    """``with open_bag(path) as reader``: a rosbags AnyReader of a bag folder
    or .mcap file, knowing the types acres_sim writes; RunError (one line)
    when it cannot be read."""

    def __init__(self, path):
        from rosbags.highlevel import AnyReader
        from acres_sim.pipeline.messages import TYPESTORE

        self.path = Path(path)
        try:
            self.reader = AnyReader([self.path], default_typestore=TYPESTORE)
        except Exception as err:  # noqa: BLE001 - rosbags' errors vary by storage
            raise RunError(f'{self.path}: cannot read the bag: {err}') from None

    def __enter__(self):
        try:
            return self.reader.__enter__()
        except Exception as err:  # noqa: BLE001
            raise RunError(f'{self.path}: cannot read the bag: {err}') from None

    def __exit__(self, *exc):
        return self.reader.__exit__(*exc)


def stamp_ns(header):
    """A header's stamp [ns]."""
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _covariance(flat6x6):
    """The position block and the yaw variance of a ROS 6x6 covariance (row-major
    x y z rot_x rot_y rot_z); NaN for a message that does not know it (all zero,
    or -1 first).  A block that is singular (a variance of 0) is kept: the
    scoring leaves it out per sample (consistency.usable)."""
    c = np.asarray(flat6x6, dtype=float).reshape(6, 6)
    if c[0, 0] < 0 or not np.any(c):
        return np.full((3, 3), np.nan), np.nan
    return c[:3, :3], c[5, 5]


def _reported(values):
    """``values`` (per sample, NaN: not reported), or None when no sample reports them."""
    return None if np.all(np.isnan(values)) else values


def _from_topic(source, run):
    with open_bag(source.path) as reader:
        connections = [c for c in reader.connections if c.topic == source.topic]
        if not connections:
            topics = sorted({c.topic for c in reader.connections})
            raise RunError(f'{source.text}: no topic {source.topic} in {source.path}; it has '
                           + ', '.join(topics[:12]) + (' ...' if len(topics) > 12 else ''))
        msgtype = connections[0].msgtype
        if msgtype not in POSE_TYPES + (FIX_TYPE,):
            raise RunError(f'{source.text}: {source.topic} is {msgtype}; an estimate is one of '
                           + ', '.join(POSE_TYPES + (FIX_TYPE,)))
        messages = [reader.deserialize(raw, c.msgtype)
                    for c, _t, raw in reader.messages(connections=connections)]
    if not messages:
        raise RunError(f'{source.text}: {source.topic} holds no messages')
    messages.sort(key=lambda m: stamp_ns(m.header))       # in stamp order, not arrival
    times = run.run_time([stamp_ns(m.header) for m in messages])
    frame = messages[0].header.frame_id.lstrip('/')
    if msgtype == FIX_TYPE:
        return _fixes(source, messages, times)
    return _poses(source, msgtype, messages, times, frame)


def _fixes(source, messages, times):
    llh = np.array([[m.latitude, m.longitude, m.altitude] for m in messages])
    valid = np.array([m.status.status >= 0 and np.all(np.isfinite([m.latitude, m.longitude]))
                      for m in messages])
    cov = np.array([np.asarray(m.position_covariance, dtype=float).reshape(3, 3)
                    if m.position_covariance_type > 0 else np.full((3, 3), np.nan)
                    for m in messages])
    if _reported(cov[valid]) is None:
        cov = None
    return Estimate(source.topic, source.text, GEODETIC, messages[0].header.frame_id.lstrip('/'),
                    times, llh, None, cov, None, valid, topic=source.topic)


def _poses(source, msgtype, messages, times, frame):
    poses = [m.pose.pose if msgtype != 'geometry_msgs/msg/PoseStamped' else m.pose
             for m in messages]
    xyz = np.array([[p.position.x, p.position.y, p.position.z] for p in poses])
    wxyz = np.array([[p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z]
                     for p in poses])
    cov = yaw = None
    if msgtype != 'geometry_msgs/msg/PoseStamped':
        blocks = [_covariance(m.pose.covariance) for m in messages]
        cov = _reported(np.array([b[0] for b in blocks]))
        yaw = _reported(np.array([b[1] for b in blocks]))
    child = messages[0].child_frame_id.lstrip('/') if msgtype == POSE_TYPES[0] else None
    return Estimate(source.topic, source.text, frame, child, times, xyz, wxyz, cov, yaw,
                    topic=source.topic)


def _from_tf(source, run):
    with open_bag(source.path) as reader:
        connections = [c for c in reader.connections if c.topic in TF_TOPICS]
        found = []
        for c, _t, raw in reader.messages(connections=connections):
            for t in reader.deserialize(raw, c.msgtype).transforms:
                if (t.header.frame_id.lstrip('/') == source.parent
                        and t.child_frame_id.lstrip('/') == source.child):
                    found.append(t)
    if not found:
        raise RunError(f'{source.text}: no transform {source.parent} -> {source.child} on '
                       f'/tf or /tf_static of {source.path}')
    found.sort(key=lambda t: stamp_ns(t.header))
    times = run.run_time([stamp_ns(t.header) for t in found])
    xyz = np.array([[t.transform.translation.x, t.transform.translation.y,
                     t.transform.translation.z] for t in found])
    wxyz = np.array([[t.transform.rotation.w, t.transform.rotation.x, t.transform.rotation.y,
                      t.transform.rotation.z] for t in found])
    return Estimate(f'tf:{source.parent}:{source.child}', source.text, source.parent,
                    source.child, times, xyz, wxyz)


def _from_tum(source, run, frame, child):
    from evo.tools.file_interface import FileInterfaceException, read_tum_trajectory_file

    try:
        trajectory = read_tum_trajectory_file(str(source.path))
    except FileInterfaceException as err:
        raise RunError(f'{source.path}: {err}') from None
    times = trajectory.timestamps.copy()
    if len(times) and times[0] > 1e8:          # ROS (Unix) times, not run times
        times = run.run_time(np.round(times * 1e9).astype(np.int64))
    return Estimate(source.path.name, source.text, frame or MAP_FRAME, child or BASE_FRAME,
                    times, trajectory.positions_xyz, trajectory.orientations_quat_wxyz)


def read_estimate(source: Source, run, vehicle=None, frame=None, child=None):
    """The estimate of ``source`` (builtin ones: of ``vehicle``).  ``frame`` and
    ``child`` replace what the source says (a TUM file says nothing; a
    PoseWithCovarianceStamped names no point)."""
    if source.kind == 'builtin':
        estimate = builtin(source.text, vehicle, len(run.vehicles) > 1)
    elif source.kind == 'topic':
        estimate = _from_topic(source, run)
    elif source.kind == 'tf':
        estimate = _from_tf(source, run)
    else:
        estimate = _from_tum(source, run, frame, child)
    if frame and source.kind != 'builtin':
        estimate = replace(estimate, frame=frame)
    if child and source.kind != 'builtin':
        estimate = replace(estimate, child_frame=child)
    if estimate.child_frame is None:
        estimate = replace(estimate, child_frame=BASE_FRAME)
    return estimate


# -- into map -----------------------------------------------------------------------

def _rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    r = np.zeros((len(angle), 3, 3))
    r[:, 0, 0], r[:, 0, 1], r[:, 1, 0], r[:, 1, 1], r[:, 2, 2] = c, -s, s, c, 1.0
    return r


def _turn_quat(wxyz, angle):
    """q_z(angle) (x) q for each row (Hamilton, wxyz)."""
    half = angle / 2.0
    cw, sz = np.cos(half), np.sin(half)
    w, x, y, z = wxyz.T
    return np.column_stack([cw * w - sz * z, cw * x - sz * y, cw * y + sz * x, cw * z + sz * w])


def in_map(estimate: Estimate, run, datum, zone):
    """The estimate in grid ENU (``map``) when it is given in ``utm`` or as
    latitude / longitude in ``datum`` (UTM: in ``zone``, the vehicle's INS's);
    unchanged otherwise.  Vectors turn by
    the azimuth of grid north: alpha in UTM (q_map = q_z(alpha) (x) q_utm, the
    inverse of the INS's q_utm), the grid convergence (0.058 deg at the tile)
    for a NavSatFix's covariance, given in local east/north/up."""
    frame = estimate.frame.split('/')[-1]
    if frame not in (UTM_FRAME, GEODETIC):
        return estimate
    ok = estimate.valid & np.all(np.isfinite(estimate.positions), axis=1)
    xyz = np.full_like(estimate.positions, np.nan)
    times = estimate.times
    if frame == UTM_FRAME:
        lat, lon = utm_inverse(estimate.positions[ok, 0], estimate.positions[ok, 1], zone)
        height = estimate.positions[ok, 2]
    else:
        lat, lon, height = estimate.positions[ok].T
    e, n, u = run.site.geodetic_to_enu(lat, lon, height, times[ok], datum)
    xyz[ok] = np.column_stack([e, n, u])
    if frame == GEODETIC:                  # local (true north) -> grid axes
        alpha = _convergence(run, xyz, times, ok, datum)
    else:
        alpha = np.zeros(len(times))
        if ok.any():
            alpha[ok] = np.radians(run.site.grid_rotation_deg(e, n, u, times[ok], datum, zone))
    orientations = estimate.orientations
    if orientations is not None:
        orientations = _turn_quat(orientations, alpha)
    cov = estimate.position_cov
    if cov is not None:
        r = _rot_z(alpha)
        cov = r @ cov @ np.transpose(r, (0, 2, 1))
    return replace(estimate, frame=MAP_FRAME, positions=xyz, orientations=orientations,
                   position_cov=cov, valid=ok)


def _convergence(run, xyz, times, ok, datum):
    """The angle from true north to grid north at each point [rad]: from the
    geodetic coordinates of a point 10 m grid-north of it."""
    out = np.zeros(len(times))
    if not ok.any():
        return out
    e, n, u = xyz[ok].T
    lat0, lon0, _ = run.site.enu_to_geodetic(e, n, u, times[ok], datum)
    lat1, lon1, _ = run.site.enu_to_geodetic(e, n + 10.0, u, times[ok], datum)
    d_east = np.radians(lon1 - lon0) * np.cos(np.radians(lat0))
    d_north = np.radians(lat1 - lat0)
    out[ok] = np.arctan2(d_east, d_north)       # grid north's azimuth from true north
    return out
