"""A recording's ground truth, read back for scoring: per vehicle the pose of
the chassis over time, the points of its frames, the GNSS fix state over time
and the windows of its events.

A recording (``acres-sim record``) writes the truth of the chassis origin at
the INS rate into ``truth.jsonl`` (grid ENU, which is ROS's ``map``) and its
whole configuration into ``episode.json``.  The point of any frame of the
vehicle (``base_footprint``, the antenna, the INS point, the IMU, ...) is the
chassis origin plus the frame's lever arm turned into the world,
p_X = p + R r_X, with r_X from the same mounts the rig's ``/tf_static``
publishes (:func:`acres_sim.pipeline.topics.mount_transforms`), so an estimate
is held to the truth of the point it claims to be.  Between two truth
samples the pose is interpolated (evo: linear in position, slerp in
orientation; 10 ms apart, the interpolation is good to micrometres).

A live run recorded with ``ros2 bag record`` is read too
(:func:`load_live_bag`): the chassis truth is then the sim node's physics-rate
``sim/truth`` topic of each vehicle, the fix state its receiver's
``gnss_receiver/gpsfix``, and the configuration (the mounts, the site) that
of the rig it ran, resolved as ``acres-sim up`` resolves it.

Times are the run's: t = k / 120 from the start, ``gnss.datum.start_utc``,
which is ROS time ``t0_ns`` in the bag and on the live rig's ``/clock``.
"""

from dataclasses import dataclass, field
import json
from pathlib import Path

from evo.core.trajectory import PoseTrajectory3D
import numpy as np
from scipy.spatial.transform import Rotation

from acres_sim.core.frames import chassis_in_base_footprint
from acres_sim.core.vehicles import VehicleParams
from acres_sim.files import read_regular
from acres_sim.pipeline.models import site_georeference
from acres_sim.pipeline.timeline import Timeline
from acres_sim.pipeline.topics import (BASE_FRAME, CHASSIS_FRAME, INS_TOPICS, GNSS_TOPICS,
                                       TRUTH_TOPIC, mount_transforms)
from acres_sim.config.records import output_frames, site_georeference_args

try:                                   # several times faster than json on the rows
    from orjson import loads as _loads
except ImportError:                    # pragma: no cover - orjson is in the requirements
    from json import loads as _loads

__all__ = ['RunError', 'RunTruth', 'VehicleTruth', 'is_bag', 'load_live_bag', 'load_run',
           'read_rows']


class RunError(Exception):
    """The run folder cannot be evaluated (one line for the user)."""


@dataclass
class VehicleTruth:
    """One vehicle of a run: its truth and what is known of its frames."""

    name: str
    model: str
    folder: Path
    namespace: str
    frame_prefix: str
    config: dict
    params: VehicleParams
    chassis: PoseTrajectory3D            # chassis origin, grid ENU (map), run time [s]
    arms: dict                           # frame name (prefixed) -> lever arm from the chassis
    fix_times: np.ndarray                # GNSS sample times [s] and their fix states
    fix_states: list
    topics: dict = field(default_factory=dict)   # topic -> what it is ('ins', 'gnss')
    rows: bool = True                    # its jsonl rows are there (a recording)
    mounts: dict = field(default_factory=dict)   # frame -> its rotation from the chassis
    #                                      (xyzw; only frames mounted turned, the INS's IMU)

    @property
    def frames(self):
        """The datums of its outputs (config.records.OutputFrames)."""
        return output_frames(self.config)

    def _frame(self, frame):
        """``frame`` as the arms name it (with the vehicle's prefix or not)."""
        name = frame.lstrip('/')
        if name in self.arms:
            return name
        if self.frame_prefix and self.frame_prefix + name in self.arms:
            return self.frame_prefix + name
        raise RunError(f"frame '{frame}' is not a frame of vehicle {self.name}; its frames: "
                       + ', '.join(sorted(self.arms)))

    def arm(self, frame):
        """The lever arm from the chassis origin of ``frame`` (prefixed or not)."""
        return self.arms[self._frame(frame)]

    def pose_at(self, frame, times):
        """(positions N x 3 in grid ENU, orientations N x 4 wxyz) of ``frame`` at
        run times ``times``: p_X = p + R r_X and R_X = R R_mount; times outside
        the truth are clamped (callers keep to :meth:`covers`)."""
        name = self._frame(frame)
        chassis = self.chassis.interpolate(np.asarray(times, dtype=float))
        rotation = Rotation.from_quat(chassis.orientations_quat_wxyz, scalar_first=True)
        xyz = chassis.positions_xyz + rotation.apply(self.arms[name])
        if name in self.mounts:
            rotation = rotation * Rotation.from_quat(self.mounts[name])
        return xyz, rotation.as_quat(scalar_first=True)

    def covers(self, times):
        """Which of ``times`` lie within the truth (to a nanosecond)."""
        times = np.asarray(times, dtype=float)
        return (times >= self.chassis.timestamps[0] - 1e-9) \
            & (times <= self.chassis.timestamps[-1] + 1e-9)

    def fix_state_at(self, times):
        """The GNSS fix state of the latest epoch sampled at or before each of
        ``times`` ('no_fix' before the first; None when the vehicle has no GNSS)."""
        if not len(self.fix_times):
            return [None] * len(times)
        index = np.searchsorted(self.fix_times, np.asarray(times, dtype=float), side='right') - 1
        return ['no_fix' if i < 0 else self.fix_states[i] for i in index]


@dataclass
class RunTruth:
    """A recording folder read back: its vehicles, site, timeline and events."""

    folder: Path
    episode: dict                        # a live bag's: its rig, seed, duration
    vehicles: list                       # VehicleTruth
    site: object                         # core.geo.site.SiteGeoreference
    timeline: Timeline
    duration_s: float
    events: list                         # dicts: vehicle, name, type, start_s, end_s
    bag: Path = None                     # the run's own bag (a recording's bag/, a live bag)
    start_s: float = 0.0                 # the first truth (a live bag's recording may start
    #                                      after the rig); the truth ends at duration_s

    def vehicle(self, name):
        for vehicle in self.vehicles:
            if vehicle.name == name:
                return vehicle
        raise RunError(f"no vehicle '{name}' in {self.folder}; its vehicles: "
                       + ', '.join(v.name for v in self.vehicles))

    def run_time(self, stamp_ns):
        """Run time [s] of ROS stamps [ns] (numpy; divided, not multiplied by
        1e-9: a whole number of seconds comes out whole)."""
        return (np.asarray(stamp_ns, dtype=np.int64) - self.timeline.t0_ns) / 1e9


def _read_json(path):
    try:
        return json.loads(read_regular(path))
    except FileNotFoundError:
        raise RunError(f'{path} is missing: give the folder of an acres-sim recording') from None
    except (OSError, ValueError) as err:
        raise RunError(f'{path} cannot be read: {err}') from None


def read_rows(path):
    """The rows of a jsonl file of the run ([] when it is missing)."""
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return []
    except OSError as err:
        raise RunError(f'{path} cannot be read: {err.strerror or err}') from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(_loads(line))
            except ValueError:
                raise RunError(f'{path}:{number}: not a JSON row') from None
    return rows


def _chassis(rows, path):
    if len(rows) < 2:
        raise RunError(f'{path} holds fewer than two rows of truth')
    times = np.array([row['time_s'] for row in rows])
    xyz = np.array([row['chassis']['position_enu_m'] for row in rows])
    xyzw = np.array([row['chassis']['orientation_enu_xyzw'] for row in rows])
    return PoseTrajectory3D(xyz, xyzw[:, [3, 0, 1, 2]], times)


def _arms(config, params, model, prefix):
    """(every frame of the vehicle -> its lever arm from the chassis origin,
    the frames mounted turned -> their rotation, xyzw)."""
    chassis = chassis_in_base_footprint(params.wheelbase_m, params.cog_height_m)
    arms = {prefix + BASE_FRAME: -chassis, prefix + CHASSIS_FRAME: np.zeros(3)}
    mounts = {}
    for _parent, child, translation, rotation in mount_transforms(config, params, model,
                                                                 prefix):
        arms[child] = np.asarray(translation) - chassis
        if not np.allclose(rotation, (0.0, 0.0, 0.0, 1.0)):
            mounts[child] = tuple(rotation)
    return arms, mounts


def _topics(model, namespace):
    ns = '/' + namespace.strip('/') + '/' if namespace.strip('/') else '/'
    ins = INS_TOPICS[model]
    return {ns + ins.odom: 'ins', ns + ins.fix: 'ins', ns + ins.truth: 'truth',
            ns + GNSS_TOPICS['fix']: 'gnss'}


def _vehicle(folder, entry, top_config):
    config = entry.get('config') or top_config
    sub = folder / entry.get('folder', '.')
    try:
        params = VehicleParams(**entry['vehicle'])
    except (KeyError, TypeError):
        raise RunError(f'{folder / "episode.json"}: vehicle {entry.get("name")} has no '
                       'vehicle parameters (a recording of an older acres_sim?)') from None
    gnss = read_rows(sub / 'gnss.jsonl')
    arms, mounts = _arms(config, params, entry['model'], entry.get('frame_prefix', ''))
    return VehicleTruth(
        name=entry['name'], model=entry['model'], folder=sub,
        namespace=entry.get('namespace', ''), frame_prefix=entry.get('frame_prefix', ''),
        config=config, params=params, chassis=_chassis(read_rows(sub / 'truth.jsonl'),
                                                       sub / 'truth.jsonl'),
        arms=arms, mounts=mounts, fix_times=np.array([row['sample_time_s'] for row in gnss]),
        fix_states=[row['fix_type'] for row in gnss],
        topics=_topics(entry['model'], entry.get('namespace', '')))


def _events(episode):
    """Every window in which an event of the run was active (the vehicle's
    ``active_s`` intervals in episode.json: timed, zone and injected events
    alike): vehicle, name, type, start and end [s]."""
    return [{'vehicle': entry['name'], 'name': event.get('name') or event.get('type'),
             'type': event.get('type'), 'start_s': float(start), 'end_s': float(end)}
            for entry in episode.get('vehicles', [])
            for event in entry.get('events') or []
            for start, end in event.get('active_s') or []]


def load_run(folder) -> RunTruth:
    """Read the recording in ``folder`` (RunError: one line when it is not one)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise RunError(f'{folder} is not a folder: give the folder of an acres-sim recording')
    episode = _read_json(folder / 'episode.json')
    if not str(episode.get('software', '')).startswith('acres_sim') or 'vehicles' not in episode:
        raise RunError(f'{folder / "episode.json"} is not the episode of an acres-sim recording')
    top = episode.get('config') or episode['vehicles'][0].get('config')
    vehicles = [_vehicle(folder, entry, top) for entry in episode['vehicles']]
    site = site_georeference(vehicles[0].config)
    _params, start_utc = site_georeference_args(vehicles[0].config)
    return RunTruth(folder=folder, episode=episode, vehicles=vehicles, site=site,
                    timeline=Timeline.starting_at(start_utc),
                    duration_s=float(episode.get('simulated_s') or episode['duration_s']),
                    events=_events(episode),
                    bag=folder / 'bag' if (folder / 'bag').is_dir() else None)


# -- a live run's bag -------------------------------------------------------------

def is_bag(path) -> bool:
    """Whether ``path`` is a rosbag2 (a folder with metadata.yaml, or an .mcap file)."""
    path = Path(path)
    return (path / 'metadata.yaml').is_file() or (path.is_file() and path.suffix == '.mcap')


def _own(namespace, name):
    """A vehicle's topic ``name`` in its ``namespace``, relative to the rig's."""
    return '/'.join(p for p in (namespace.strip('/'), name) if p)


def _rig_namespace(topics, vehicles, given, path):
    """The namespace the whole rig was pushed under ('' or '/NS'): ``given``
    (--namespace), else the one under which every vehicle's sim/truth is in
    the bag; RunError when none or several fit."""
    if given is not None and given.strip('/'):
        return '/' + given.strip('/')
    own = [_own(v.namespace, TRUTH_TOPIC) for v in vehicles]
    found = sorted({t[:-len(own[0]) - 1] for t in topics if t.endswith('/' + own[0])})
    fits = [ns for ns in found if all(f'{ns}/{o}' in topics for o in own)]
    if not fits:
        missing = next((o for o in own if not any(t.endswith('/' + o) for t in topics)), None)
        if missing is None:
            raise RunError(f'{path}: the vehicles\' {TRUTH_TOPIC} are not under one namespace: '
                           'give --namespace, and the --agents the rig ran with')
        vehicle = vehicles[own.index(missing)].name
        raise RunError(f'{path}: no {TRUTH_TOPIC} of vehicle {vehicle} (/{missing}; record it '
                       f'with the rest: ros2 bag record ... {TRUTH_TOPIC})')
    if len(fits) > 1:
        raise RunError(f'{path}: the rig is in the bag under several namespaces '
                       f'({", ".join(ns or "/" for ns in fits)}): give --namespace')
    return fits[0]


def _topic_of(topics, rig_ns, namespace, name):
    """The bag's topic ``name`` of the vehicle in ``namespace`` of the rig
    under ``rig_ns``, or None when the bag does not have it."""
    topic = f'{rig_ns}/{_own(namespace, name)}'
    return topic if topic in topics else None


def _live_truth(reader, topic, t0_ns, path):
    from acres_sim.analysis.estimates import stamp_ns

    connections = [c for c in reader.connections if c.topic == topic]
    messages = [reader.deserialize(raw, c.msgtype)
                for c, _t, raw in reader.messages(connections=connections)]
    if len(messages) < 2:
        raise RunError(f'{path}: {topic} holds fewer than two messages of truth')
    times = (np.array([stamp_ns(m.header) for m in messages], dtype=np.int64) - t0_ns) / 1e9
    poses = [m.pose.pose for m in messages]
    xyz = np.array([[p.position.x, p.position.y, p.position.z] for p in poses])
    wxyz = np.array([[p.orientation.w, p.orientation.x, p.orientation.y, p.orientation.z]
                     for p in poses])
    order = np.argsort(times, kind='stable')
    return PoseTrajectory3D(xyz[order], wxyz[order], times[order])


def _live_fix_states(reader, topic, t0_ns):
    from acres_sim.analysis.estimates import stamp_ns
    from acres_sim.pipeline.messages import GPS_FIX_STATUS

    if topic is None:
        return np.array([]), []
    state_of = {status: state for state, status in GPS_FIX_STATUS.items()}
    connections = [c for c in reader.connections if c.topic == topic]
    fixes = sorted(((stamp_ns(m.header) - t0_ns) / 1e9, state_of.get(m.status.status, 'no_fix'))
                   for m in (reader.deserialize(raw, c.msgtype)
                             for c, _t, raw in reader.messages(connections=connections)))
    return np.array([t for t, _s in fixes]), [s for _t, s in fixes]


def load_live_bag(bag, rig, options=None) -> RunTruth:
    """A live run's bag (``ros2 bag record`` of the rig ``rig``, a packaged rig
    or scenario name or a file, with ``options``, :class:`acres_sim.rig.RigOptions`):
    each vehicle's truth from its ``sim/truth``; RunError when the bag has none."""
    from acres_sim.analysis.estimates import open_bag
    from acres_sim.config.loader import ConfigError
    from acres_sim.config.vehicles import load_vehicle
    from acres_sim.rig import RigOptions, resolve_run

    bag = Path(bag)
    try:
        resolved = resolve_run(rig, options or RigOptions())
    except ConfigError as err:
        raise RunError(str(err)) from None
    config = resolved.configs[0]
    _params, start_utc = site_georeference_args(config)
    timeline = Timeline.starting_at(start_utc)
    vehicles = []
    with open_bag(bag) as reader:
        topics = {c.topic for c in reader.connections}
        rig_ns = _rig_namespace(topics, resolved.scenario.vehicles,
                                (options or RigOptions()).namespace, bag)
        for vehicle, vconfig in zip(resolved.scenario.vehicles, resolved.configs):
            truth = _topic_of(topics, rig_ns, vehicle.namespace, TRUTH_TOPIC)
            if truth is None:
                raise RunError(f'{bag}: no {rig_ns}/{_own(vehicle.namespace, TRUTH_TOPIC)} of '
                               f'vehicle {vehicle.name} (record it with the rest: ros2 bag '
                               f'record ... {TRUTH_TOPIC})')
            params = load_vehicle(vehicle.model)
            gpsfix = _topic_of(topics, rig_ns, vehicle.namespace, GNSS_TOPICS['gpsfix'])
            fix_times, fix_states = _live_fix_states(reader, gpsfix, timeline.t0_ns)
            arms, mounts = _arms(vconfig, params, vehicle.model, vehicle.frame_prefix)
            vehicles.append(VehicleTruth(
                name=vehicle.name, model=vehicle.model, folder=bag,
                namespace=vehicle.namespace, frame_prefix=vehicle.frame_prefix,
                config=vconfig, params=params,
                chassis=_live_truth(reader, truth, timeline.t0_ns, bag),
                arms=arms, mounts=mounts, fix_times=fix_times, fix_states=fix_states,
                topics={f'{rig_ns}/{_own(vehicle.namespace, name.lstrip("/"))}': what
                        for name, what in _topics(vehicle.model, '').items()},
                rows=False))
    start = min(v.chassis.timestamps[0] for v in vehicles)
    end = max(v.chassis.timestamps[-1] for v in vehicles)
    episode = {'rig': rig if isinstance(rig, str) else resolved.scenario.name,
               'seed': config['seed'], 'live_bag': str(bag)}
    return RunTruth(folder=bag, episode=episode, vehicles=vehicles,
                    site=site_georeference(config), timeline=timeline, duration_s=float(end),
                    events=[], bag=bag, start_s=float(start))
