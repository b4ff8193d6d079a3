"""The headless recorder: physics, INS, IMU and GNSS in one process, no
middleware, writing the spec's rows, a rosbag2 of the rig's topics and a report.

One loop at 120 Hz (t = k / 120 from the integer step k).  At each step, for
each vehicle: the truth of the step; the IMU's physics step; every sensor whose
Due time has come samples (spec: Frames and Sample Times) and its row enters
the delay line; every row that has aged is written with sample, available and
delivery times; then the commands (route follower) and the physics step.  The
INS topics go into the bag at the sample time, as the sensor stream sends them
without latency; the GNSS receiver and IMU topics at delivery, stamped with the
sample time, as their nodes publish them.
"""

from dataclasses import dataclass, field
import json
import math
from pathlib import Path
import shutil
import signal
import sys
import threading
import time

import numpy as np

from acres_sim import __version__
from acres_sim.config.scene import default_scene, load_scene
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.frames import (chassis_in_base_footprint, lever_arm_from_chassis,
                                   point_at_lever_arm)
from acres_sim.core.geo import SiteGeoreference
from acres_sim.core.gnss.receiver import GnssReceiver
from acres_sim.core.imu import ImuModel
from acres_sim.core.ins import InsModel
from acres_sim.core.physics import Fleet
from acres_sim.core.quaternion import q_z, quat_from_matrix
from acres_sim.core.routes import RouteFollower, load_route
from acres_sim.core.schedule import DelayLine, Due
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.record import messages as msg
from acres_sim.record.bag import BagWriter
from acres_sim.record.jsonl import JsonlWriter
from acres_sim.record.report import format_summary, summary_table, write_report

__all__ = ['RecordRequest', 'record', 'DEFAULT_ROUTES', 'INS_TOPICS']

# The INS topics of each rig (spec: the ROS 2 topic table) and its fix frame.
INS_TOPICS = {
    'polaris': {'odom': 'vehicle/odom', 'fix': 'oxts/fix', 'imu': 'oxts/imu',
                'velocity': 'oxts/velocity', 'truth': 'sim/ground_truth/odom',
                'fix_frame': 'navsat_link', 'oxts_axes': True},
    'maxxum': {'odom': 'odom', 'fix': 'gnss/fix', 'imu': 'imu/data', 'velocity': None,
               'truth': 'ground_truth/odom', 'fix_frame': 'gnss_link', 'oxts_axes': False},
}
DEFAULT_ROUTES = {'polaris': 'acre_demo', 'maxxum': 'field'}
ANTENNA_FRAME, IMU_FRAME, INS_FRAME = 'gnss_antenna', 'imu_link', 'oxts_link'
# The Polaris INS IMU message is in the OxTS unit's axes (x left, y forward, z down):
# its own frame, rotated from FLU by the spec's (1/sqrt 2, 1/sqrt 2, 0, 0).
OXTS_IMU_FRAME, OXTS_IMU_ROTATION = 'oxts_imu_link', (math.sqrt(0.5), math.sqrt(0.5), 0.0, 0.0)
REPORT_ROWS = 20000       # rows kept per report series; longer runs are thinned evenly


class _Thinned:
    """A list that keeps at most ``cap`` items, evenly spread over the whole run:
    when full it drops every other item and keeps every 2nd, 4th, ... new one, so
    memory stays flat however long the run (the report plots and sums these)."""

    def __init__(self, cap=REPORT_ROWS):
        self.cap, self.stride, self.seen, self.items = cap, 1, 0, []

    def append(self, item):
        if self.seen % self.stride == 0:
            self.items.append(item)
            if len(self.items) >= self.cap:
                self.items = self.items[::2]
                self.stride *= 2
        self.seen += 1


@dataclass
class RecordRequest:
    config: object                 # a resolved acres_sim.config.Config
    rig: str                       # 'polaris' or 'maxxum'
    duration_s: float
    out: Path
    agents: int = 1
    route: str = None              # a packaged route name or a file; None: the rig's default
    scene: str = None              # a scene file; None: the packaged ACRE farmstead
    progress: bool = True


@dataclass
class _Agent:
    """One vehicle: its models, schedules, delay lines, files and report rows."""

    index: int
    prefix: str                    # '' or 'agent<k>/' for frames and topics
    follower: object
    imu: object
    ins: object
    gnss: object
    antenna_arm: np.ndarray
    dues: dict
    lines: dict
    files: dict
    report: dict = field(default_factory=lambda: {name: _Thinned() for name in
                                                  ('gnss', 'ins', 'imu', 'truth')})
    antenna_truth: dict = field(default_factory=dict)
    truth_due: object = None


class _Recording:
    def __init__(self, request: RecordRequest):
        self.request = request
        config = request.config
        self.config = config
        self.rig = request.rig
        self.topics = INS_TOPICS[request.rig]
        self.vehicle = load_vehicle(request.rig)
        self.route = load_route(request.route or DEFAULT_ROUTES[request.rig])
        self.scene = load_scene(request.scene) if request.scene else default_scene()
        self.site = SiteGeoreference.from_config(config)
        self.steps = int(round(request.duration_s * PHYSICS_HZ))
        self.out = Path(request.out)
        self._prepare_folder()
        n = request.agents
        self.fleet = Fleet([self.vehicle] * n, [self.route.start_pose()] * n)
        self.agents = [self._agent(k, n) for k in range(n)]
        self.bag = BagWriter(self.out / 'bag', hold_interrupts=False)  # run() stops gracefully
        self._add_topics()
        self.imu_var = msg.imu_variances(config)
        self.ins_var = msg.ins_variances(config)
        self.cut_short = False

    # -- set-up ---------------------------------------------------------------

    def _prepare_folder(self):
        """An empty output folder: the files of an earlier recording there go."""
        if self.out.exists() and not self.out.is_dir():
            raise OSError(f'{self.out} exists and is not a folder')
        self.out.mkdir(parents=True, exist_ok=True)
        old = [self.out / name for name in ('bag', 'report.png', 'episode.json', 'gnss.jsonl',
                                            'imu.jsonl', 'ins.jsonl', 'truth.jsonl')]
        for path in old + sorted(self.out.glob('agent_*')):
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()

    def _arm(self, key):
        return lever_arm_from_chassis(self.config[key], self.config['mount_frame'],
                                      self.vehicle.wheelbase_m, self.vehicle.cog_height_m)

    def _agent(self, k, n):
        folder = self.out if n == 1 else self.out / f'agent_{k}'
        folder.mkdir(parents=True, exist_ok=True)
        c = self.config
        delay = c['delay_s']
        dues, lines, files = {}, {}, {}
        index = c['agent.index'] + k   # agent k of this run; the config may shift them all
        models = {
            'gnss': GnssReceiver.from_config(c, scene=self.scene, site=self.site,
                                             agent_index=index) if c['gnss.enabled'] else None,
            'imu': ImuModel.from_config(c, self._arm('imu.position_flu_m'), agent_index=index)
            if c['imu.enabled'] else None,
            'ins': InsModel.from_config(c, self._arm('ins.position_flu_m'), agent_index=index,
                                        site=self.site) if c['ins.enabled'] else None,
        }
        for name, model in models.items():
            if model is not None:
                dues[name] = Due(c[f'{name}.hz'])
                lines[name] = DelayLine(delay)
                files[name] = JsonlWriter(folder / f'{name}.jsonl')
        files['truth'] = JsonlWriter(folder / 'truth.jsonl')
        agent = _Agent(k, '' if k == 0 else f'agent{k}/', RouteFollower(self.route, self.vehicle),
                       models['imu'], models['ins'], models['gnss'],
                       self._arm('gnss.antenna_flu_m'), dues, lines, files)
        agent.truth_due = Due(c['ins.hz'])   # truth.jsonl at the INS rate, INS on or off
        return agent

    def _topic(self, agent, name):
        return f'/{agent.prefix}{name}'

    def _add_topics(self):
        self.bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        self.bag.add_topic('/tf', 'tf2_msgs/msg/TFMessage')
        self.bag.add_topic('/tf_static', 'tf2_msgs/msg/TFMessage', qos='static')
        self.bag.add_topic('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray')
        for agent in self.agents:
            t = self.topics
            if agent.ins is not None:
                self.bag.add_topic(self._topic(agent, t['odom']), 'nav_msgs/msg/Odometry')
                self.bag.add_topic(self._topic(agent, t['fix']), 'sensor_msgs/msg/NavSatFix')
                self.bag.add_topic(self._topic(agent, t['imu']), 'sensor_msgs/msg/Imu')
                if t['velocity']:
                    self.bag.add_topic(self._topic(agent, t['velocity']),
                                       'geometry_msgs/msg/TwistStamped')
                self.bag.add_topic(self._topic(agent, t['truth']), 'nav_msgs/msg/Odometry')
            if agent.gnss is not None:
                self.bag.add_topic(self._topic(agent, 'gnss_receiver/fix'),
                                   'sensor_msgs/msg/NavSatFix')
                self.bag.add_topic(self._topic(agent, 'gnss_receiver/nmea'),
                                   'std_msgs/msg/String')
            if agent.imu is not None:
                self.bag.add_topic(self._topic(agent, 'imu/data_raw'), 'sensor_msgs/msg/Imu')

    def _static_tf(self):
        """Mounts from base_footprint and utm -> map (so rviz can work in small numbers)."""
        c = self.config
        identity = (0.0, 0.0, 0.0, 1.0)
        chassis = chassis_in_base_footprint(self.vehicle.wheelbase_m, self.vehicle.cog_height_m)
        transforms = []
        for agent in self.agents:
            base = f'{agent.prefix}base_footprint'
            ins_arm = self._arm('ins.position_flu_m')
            mounts = [(ANTENNA_FRAME, agent.antenna_arm, identity),
                      (IMU_FRAME, self._arm('imu.position_flu_m'), identity),
                      (INS_FRAME, ins_arm, identity),
                      (self.topics['fix_frame'], ins_arm, identity)]
            if self.topics['oxts_axes']:
                mounts.append((OXTS_IMU_FRAME, ins_arm, OXTS_IMU_ROTATION))
            for child, arm, rotation in mounts:
                transforms.append(msg.transform_stamped(0, base, agent.prefix + child,
                                                        chassis + arm, rotation))
        frame = 'nad83' if c['ins.frame'] == 'nad83' else 'wgs84_g2139'
        site_frame = 'nad83_2011' if frame == 'nad83' else frame
        e0, n0, h0 = self.site.enu_to_utm(0.0, 0.0, 0.0, 0.0, site_frame, c['ins.utm_zone'])
        alpha = math.radians(self.site.grid_rotation_deg(0.0, 0.0, 0.0, 0.0, site_frame,
                                                         c['ins.utm_zone']))
        transforms.append(msg.transform_stamped(0, 'utm', 'map', (e0, n0, h0), q_z(-alpha)))
        self.bag.write('/tf_static', 0, msg.tf_message(transforms))

    # -- the loop -------------------------------------------------------------

    def _request_stop(self, signum, frame):
        self.stop_requested = True

    def run(self):
        """The loop; Ctrl-C or SIGTERM ends it after the current step, files whole."""
        started = time.monotonic()
        shown = started
        n = len(self.agents)
        commands = np.zeros((n, 2))
        self.stop_requested = False
        on_main_thread = threading.current_thread() is threading.main_thread()
        previous = {sig: signal.signal(sig, self._request_stop)
                    for sig in (signal.SIGINT, signal.SIGTERM)} if on_main_thread else {}
        try:
            self._static_tf()
            for k in range(self.steps + 1):
                if self.stop_requested:
                    self.cut_short = True
                    break
                t = k / PHYSICS_HZ
                t_ns = msg.ns_from_seconds(t)
                self.bag.write('/clock', t_ns, msg.clock(t_ns))
                for i, agent in enumerate(self.agents):
                    truth = self.fleet.truth(i)
                    self._sample(agent, t, truth)
                    self._deliver(agent, t)
                    commands[i] = agent.follower.command(truth)
                if k < self.steps:
                    self.fleet.step(commands)
                if self.request.progress and time.monotonic() - shown > 0.5:
                    shown = time.monotonic()
                    self._progress(t, shown - started)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.request.progress:
                sys.stderr.write('\n')
            self.wall_s = time.monotonic() - started
            self._close()
        return self._finish()

    def _progress(self, t, wall):
        done = t / max(self.request.duration_s, 1e-9)
        bar = '#' * int(30 * done)
        sys.stderr.write(f'\r[{bar:30}] {t:7.1f}/{self.request.duration_s:g} s sim '
                         f'({t / max(wall, 1e-9):5.1f}x real time)')
        sys.stderr.flush()

    def _sample(self, agent, t, truth):
        if truth.reset and agent.ins is not None:
            agent.ins.restart_differences()   # the next epoch reports gravity only
        if agent.imu is not None:
            agent.imu.physics_step(truth)
            if agent.dues['imu'].due(t):
                row = agent.imu.sample(t)
                if row is not None:
                    agent.lines['imu'].push(t, row)
        ins_row = None
        if agent.ins is not None and agent.dues['ins'].due(t):
            ins_row = agent.ins.epoch(t, truth)
            agent.lines['ins'].push(t, ins_row)
            self._write_ins_topics(agent, t, ins_row)
        if agent.truth_due.due(t):
            self._write_truth(agent, t, truth, ins_row)
        if agent.gnss is not None and agent.dues['gnss'].due(t):
            antenna = point_at_lever_arm(truth.p, truth.R, agent.antenna_arm)
            agent.antenna_truth[t] = antenna
            agent.lines['gnss'].push(t, agent.gnss.epoch(t, antenna))

    def _deliver(self, agent, t):
        for name, line in agent.lines.items():
            for release in line.drain(t):
                self._write_row(agent, name, release)

    def _write_row(self, agent, name, release):
        row = _timed_row(release)
        agent.files[name].write(row)
        stamp = msg.ns_from_seconds(release.sample_time)
        when = msg.ns_from_seconds(release.delivery_time if release.delivery_time is not None
                                   else release.available_time)
        if name == 'gnss':
            self._write_gnss_topics(agent, row, stamp, when)
            antenna = agent.antenna_truth.pop(release.sample_time)
            agent.report['gnss'].append((_trim(row, 'gnss'), antenna))
        elif name == 'imu':
            self.bag.write(self._topic(agent, 'imu/data_raw'), when, msg.imu_from_imu_row(
                row, stamp, agent.prefix + IMU_FRAME, **self.imu_var))
            agent.report['imu'].append(row)
        else:
            agent.report['ins'].append(_trim(row, 'ins'))

    def _write_gnss_topics(self, agent, row, stamp, when):
        self.bag.write(self._topic(agent, 'gnss_receiver/fix'), when,
                       msg.navsat_fix_from_gnss_row(row, stamp, agent.prefix + ANTENNA_FRAME))
        sentence = msg.nmea_string(row)
        if sentence is not None:
            self.bag.write(self._topic(agent, 'gnss_receiver/nmea'), when, sentence)
        self.bag.write('/diagnostics', when, msg.diagnostics_from_gnss_row(
            row, stamp, f'{agent.prefix}gnss_receiver'))

    def _write_ins_topics(self, agent, t, row):
        t_ns = msg.ns_from_seconds(t)
        topics = self.topics
        odom = msg.utm_odometry(row, t_ns, frame_id='utm',
                                child_frame_id=f'{agent.prefix}base_footprint',
                                twist_var=self.ins_var['twist_var'])
        self.bag.write(self._topic(agent, topics['odom']), t_ns, odom)
        self.bag.write('/tf', t_ns, msg.tf_message([msg.transform_from_odometry(odom)]))
        self.bag.write(self._topic(agent, topics['fix']), t_ns,
                       msg.ins_fix(row, t_ns, agent.prefix + topics['fix_frame']))
        imu_frame = OXTS_IMU_FRAME if topics['oxts_axes'] else INS_FRAME
        self.bag.write(self._topic(agent, topics['imu']), t_ns, msg.ins_imu(
            row, t_ns, agent.prefix + imu_frame, oxts_axes=topics['oxts_axes'],
            orientation_var=self.ins_var['orientation_var'], gyro_var=self.ins_var['gyro_var'],
            accel_var=self.ins_var['accel_var']))
        if topics['velocity']:
            self.bag.write(self._topic(agent, topics['velocity']), t_ns,
                           msg.ins_velocity(row, t_ns, agent.prefix + INS_FRAME))
        self.bag.write(self._topic(agent, topics['truth']), t_ns, msg.ground_truth_odometry(
            row, t_ns, child_frame_id=f'{agent.prefix}base_footprint'))

    def _write_truth(self, agent, t, truth, ins_row):
        """Chassis truth; the INS point's too when the INS sampled at this step."""
        row = {
            'time_s': t,
            'chassis': {'position_enu_m': truth.p.tolist(),
                        'orientation_enu_xyzw': quat_from_matrix(truth.R).tolist(),
                        'velocity_com_enu_mps': truth.v.tolist(),
                        'angular_velocity_enu_radps': truth.w.tolist()},
        }
        if ins_row is not None:
            row['ins_point'] = ins_row['truth']
        agent.files['truth'].write(row)
        point = ins_row['truth']['position_enu_m'] if ins_row is not None else truth.p.tolist()
        agent.report['truth'].append({'sample_time_s': t, 'position_enu_m': point})

    # -- the end --------------------------------------------------------------

    def _close(self):
        """Close every file, each whatever happens to the others."""
        writers = [self.bag]
        for agent in self.agents:
            if not self.cut_short:
                for name, line in agent.lines.items():
                    for release in line.flush():  # never delivered: delivery time null
                        agent.files[name].write(_timed_row(release))
            writers += list(agent.files.values())
        errors = []
        for writer in writers:
            try:
                writer.close()
            except Exception as err:  # noqa: BLE001 - close the rest, then report
                errors.append(err)
        if errors:
            raise errors[0]

    @staticmethod
    def _report_rows(agent):
        """The agent's (thinned) report series: gnss rows with their truth, ins, imu, truth."""
        r = agent.report
        gnss = [row for row, _antenna in r['gnss'].items]
        antenna = np.array([a for _row, a in r['gnss'].items]).reshape(-1, 3)
        return gnss, r['ins'].items, r['imu'].items, r['truth'].items, antenna

    def _finish(self):
        summaries = []
        for agent in self.agents:
            gnss, ins, imu, truth, antenna = self._report_rows(agent)
            summaries.append(summary_table(gnss, ins, imu, truth, gnss_truth_enu=antenna))
        sim_s = self.fleet.step_index / PHYSICS_HZ
        episode = {
            'software': f'acres_sim {__version__}',
            'rig': self.rig, 'agents': len(self.agents), 'seed': self.config['seed'],
            'duration_s': self.request.duration_s, 'simulated_s': sim_s,
            'cut_short': self.cut_short, 'start_utc': self.config['gnss.datum.start_utc'],
            'route': self.route.name, 'scene': self.scene.name, 'scene_digest': self.scene.digest,
            'vehicle': self.vehicle._asdict(),
            'imu_bias_flu': [_biases(agent.imu) for agent in self.agents],
            'real_time_factor': sim_s / max(self.wall_s, 1e-9),
            'config': {k: v for k, v in self.config.values.items()},
            'summary': summaries,
        }
        text = json.dumps(episode, indent=2, allow_nan=False)
        (self.out / 'episode.json').write_text(text + '\n', encoding='utf-8')
        gnss, ins, imu, truth, antenna = self._report_rows(self.agents[0])
        write_report(self.out / 'report.png', gnss, ins, imu, truth, self.scene, summaries[0],
                     gnss_truth_enu=antenna,
                     title=f'acres_sim {self.rig}, {sim_s:g} s, seed {self.config["seed"]}')
        return episode


def _timed_row(release):
    """A model row with the scheduler's sample, available and delivery times."""
    return {**release.item, 'sample_time_s': release.sample_time,
            'available_time_s': release.available_time,
            'delivery_time_s': release.delivery_time}


def _biases(imu):
    if imu is None:
        return None
    return {'accel_mps2': list(imu.biases.accel_mps2), 'gyro_radps': list(imu.biases.gyro_radps)}


_GNSS_REPORT_KEYS = ('sample_time_s', 'fix_type', 'position_enu_m', 'sigma_enu_m',
                     'satellites_used', 'pdop')
_INS_REPORT_KEYS = ('sample_time_s', 'position_enu_m', 'fix')


def _trim(row, kind):
    """The few keys the report needs (keeps memory small in long runs)."""
    keys = _GNSS_REPORT_KEYS if kind == 'gnss' else _INS_REPORT_KEYS
    trimmed = {k: row[k] for k in keys if k in row}
    if kind == 'ins':
        trimmed['truth'] = {'position_enu_m': row['truth']['position_enu_m']}
    return trimmed


def record(request: RecordRequest):
    """Run one recording; returns the episode dict (also written to episode.json)."""
    recording = _Recording(request)
    episode = recording.run()
    return episode, format_summary(episode['summary'][0])
