"""The headless recorder: physics, INS, IMU and GNSS in one process, no
middleware, writing the spec's rows, a rosbag2 of the rig's topics and a report.

The models run at 120 Hz (t = k / 120 from the integer step k) in the block
kernel of :mod:`acres_sim.core.block`, one second of simulated time per call;
this module turns each block's arrays into files.  Per sensor sample: the row
is delivered at the first step whose time reaches t_sample + delay_s (the
spec's Emit/Drain, :func:`acres_sim.core.schedule.delivery_step`) and written
then with its sample, available and delivery times.  The INS topics go into
the bag at the sample time, as the sensor stream sends them without latency;
the GNSS receiver and IMU topics at delivery, stamped with the sample time, as
their nodes publish them.  Within a block the bag gets its messages in time
order (at one time: /clock, then each agent's INS topics, then its
deliveries), the high-rate ones encoded a block at a time
(:mod:`acres_sim.record.batches`).  Two writer processes take the heaviest
writing off the simulation's process, to the other core: rosbags writes the bag
in one (``BagWriter(background=True)``), and ``ins.jsonl`` and ``truth.jsonl``
are built from the block arrays and written in the other
(:mod:`acres_sim.record.rows_process`); ``gnss.jsonl`` and ``imu.jsonl`` stay here.
"""

from collections import deque
from dataclasses import dataclass, field
import gc
import json
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
from acres_sim.core.block import RigSimulation
from acres_sim.core.geo import SiteGeoreference
from acres_sim.core.gnss.receiver import GnssReceiver
from acres_sim.core.imu import ImuModel
from acres_sim.core.ins import P_INS, P_N, InsModel
from acres_sim.core.physics import Fleet
from acres_sim.core.routes import RouteFollower, load_route
from acres_sim.core.schedule import delivery_step
from acres_sim.core.truth import PHYSICS_HZ, T_P
from acres_sim.record import messages as msg
from acres_sim.record.batches import MessageBatches
from acres_sim.record.bag import BagWriter
from acres_sim.record.jsonl import JsonlWriter
from acres_sim.record.report import FIX_STATES, format_summary, summary_table, write_report
from acres_sim.record.rows_process import RowProcess, timed_row
from acres_sim.rig import DEFAULT_ROUTES
from acres_sim.topics import (ANTENNA_FRAME, GNSS_TOPICS, IMU_FRAME, IMU_TOPIC, INS_TOPICS,
                              lever_arm, mount_transforms, utm_to_map)

__all__ = ['RecordRequest', 'record']

REPORT_ROWS = 20000       # rows kept per report series; longer runs are thinned evenly
BLOCK_STEPS = PHYSICS_HZ  # physics steps per kernel call (1 s); Ctrl-C is honoured between blocks


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
    """One vehicle: its models, files, rows waiting for delivery and report rows."""

    index: int
    prefix: str                    # '' or 'agent<k>/' for frames and topics
    follower: object
    imu: object
    ins: object
    gnss: object
    files: dict
    # rows waiting for delivery, per sensor: (delivery step, sample step, row, extra)
    waiting: dict = field(default_factory=lambda: {name: deque() for name in
                                                   ('gnss', 'imu', 'ins')})
    report: dict = field(default_factory=lambda: {name: _Thinned() for name in
                                                  ('gnss', 'ins', 'imu', 'truth')})
    # GNSS epochs delivered per fix state, and with a position (the report's are thinned)
    fix_counts: dict = field(default_factory=lambda: {state: 0 for state in FIX_STATES})
    fix_counts_with_position: int = 0


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
        self._row_files = []
        self.agents = [self._agent(k, n) for k in range(n)]
        self.delay_s = config['delay_s']
        self.rows = RowProcess(self._row_files, self.delay_s)
        rates = {name: config[f'{name}.hz'] for name in ('imu', 'ins', 'gnss')}
        rates['truth'] = config['ins.hz']   # truth.jsonl at the INS rate, INS on or off
        self.sim = RigSimulation(self.fleet, [a.follower for a in self.agents],
                                 [a.imu for a in self.agents], [a.ins for a in self.agents],
                                 [a.gnss for a in self.agents], self._arm('gnss.antenna_flu_m'),
                                 rates, self.steps, self.site)
        # run() stops gracefully between blocks: no signal hold per message
        self.bag = BagWriter(self.out / 'bag', hold_interrupts=False, background=True)
        self._add_topics()
        self.imu_var = msg.imu_variances(config)
        self.ins_var = msg.ins_variances(config)
        self.gnss_service = msg.navsat_service(config)
        ins = next((a.ins for a in self.agents if a.ins is not None), None)
        self.batches = MessageBatches(self.imu_var, self.ins_var,
                                      ins.pose_variance if ins else [0.0] * 6,
                                      ins.position_variance if ins else [0.0] * 3)
        self.ins_position_variance = ins.position_variance if ins else None
        self.cut_short = False
        self.stop_signal = None        # 'SIGINT' or 'SIGTERM' when one cut the run short

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
        return lever_arm(self.config, key, self.vehicle)

    def _agent(self, k, n):
        folder = self.out if n == 1 else self.out / f'agent_{k}'
        folder.mkdir(parents=True, exist_ok=True)
        c = self.config
        index = c['agent.index'] + k   # agent k of this run; the config may shift them all
        models = {
            'gnss': GnssReceiver.from_config(c, scene=self.scene, site=self.site,
                                             agent_index=index) if c['gnss.enabled'] else None,
            'imu': ImuModel.from_config(c, self._arm('imu.position_flu_m'), agent_index=index)
            if c['imu.enabled'] else None,
            'ins': InsModel.from_config(c, self._arm('ins.position_flu_m'), agent_index=index,
                                        site=self.site) if c['ins.enabled'] else None,
        }
        # ins.jsonl and truth.jsonl belong to the row writer process (self.rows)
        files = {name: JsonlWriter(folder / f'{name}.jsonl')
                 for name, model in models.items() if model is not None and name != 'ins'}
        self._row_files.append((str(folder / 'ins.jsonl') if models['ins'] else None,
                                str(folder / 'truth.jsonl'),
                                models['ins'].row_spec if models['ins'] else None))
        return _Agent(k, '' if k == 0 else f'agent{k}/', RouteFollower(self.route, self.vehicle),
                      models['imu'], models['ins'], models['gnss'], files)

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
                self.bag.add_topic(self._topic(agent, t.odom), 'nav_msgs/msg/Odometry')
                self.bag.add_topic(self._topic(agent, t.fix), 'sensor_msgs/msg/NavSatFix')
                self.bag.add_topic(self._topic(agent, t.imu), 'sensor_msgs/msg/Imu')
                if t.velocity:
                    self.bag.add_topic(self._topic(agent, t.velocity),
                                       'geometry_msgs/msg/TwistStamped')
                self.bag.add_topic(self._topic(agent, t.truth), 'nav_msgs/msg/Odometry')
            if agent.gnss is not None:
                self.bag.add_topic(self._topic(agent, GNSS_TOPICS['fix']),
                                   'sensor_msgs/msg/NavSatFix')
                self.bag.add_topic(self._topic(agent, GNSS_TOPICS['nmea']),
                                   'std_msgs/msg/String')
            if agent.imu is not None:
                self.bag.add_topic(self._topic(agent, IMU_TOPIC), 'sensor_msgs/msg/Imu')

    def _static_tf(self):
        """Mounts from base_footprint and utm -> map (so rviz can work in small numbers)."""
        static = [t for agent in self.agents
                  for t in mount_transforms(self.config, self.vehicle, self.rig, agent.prefix)]
        static.append(utm_to_map(self.config, self.site))
        self.bag.write('/tf_static', 0, msg.tf_message(
            [msg.transform_stamped(0, *transform) for transform in static]))

    # -- the loop -------------------------------------------------------------

    def _request_stop(self, signum, frame):
        self.stop_requested = True
        self.stop_signal = signal.Signals(signum).name

    def run(self):
        """The loop; Ctrl-C or SIGTERM ends it after the current block, files whole."""
        started = time.monotonic()
        shown = started
        self.stop_requested = False
        on_main_thread = threading.current_thread() is threading.main_thread()
        previous = {sig: signal.signal(sig, self._request_stop)
                    for sig in (signal.SIGINT, signal.SIGTERM)} if on_main_thread else {}
        # The rows and messages hold no reference cycles, so reference counting
        # frees them; the cyclic collector would only rescan the long-lived
        # report series again and again (with every few thousand new rows).
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._static_tf()
            while self.sim.step <= self.steps:
                if self.stop_requested:
                    self.cut_short = True
                    break
                k0 = self.sim.step
                blocks = self.sim.advance(BLOCK_STEPS)
                self._write_block(k0, self.sim.step, blocks)
                if self.request.progress and time.monotonic() - shown > 0.5:
                    shown = time.monotonic()
                    self._progress((self.sim.step - 1) / PHYSICS_HZ, shown - started)
        finally:
            if collecting:
                gc.enable()
            if self.request.progress:
                sys.stderr.write('\n')
            self.wall_s = time.monotonic() - started
            try:
                self._close()        # a second Ctrl-C meanwhile cannot cut the closing short
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        return self._finish()

    def _progress(self, t, wall):
        done = t / max(self.request.duration_s, 1e-9)
        bar = '#' * int(30 * done)
        sys.stderr.write(f'\r[{bar:30}] {t:7.1f}/{self.request.duration_s:g} s sim '
                         f'({t / max(wall, 1e-9):5.1f}x real time)')
        sys.stderr.flush()

    # -- one block of results -> files ------------------------------------------

    def _write_block(self, k0, k1, blocks):
        """Rows and messages of steps k0 .. k1-1; the bag gets them in time order
        (at one time: /clock, then per agent its INS topics, then its deliveries)."""
        clock_ns = _ns_of(np.arange(k0, k1))
        entries = [_entry('/clock', clock_ns, self.batches.clock(clock_ns))]
        for agent, block in zip(self.agents, blocks):
            self._sample(agent, block, entries)
            self._deliver(agent, k1, entries)
        self.rows.send_block(k1, [(agent.index, b.ins_k, b.ins, b.truth_k, b.truth)
                                  for agent, b in zip(self.agents, blocks)])
        self.bag.write_block(entries)

    def _sample(self, agent, b, entries):
        """The block's samples: the INS topics and the report's truth now, the
        GNSS and IMU rows into their delay lines (the INS and truth rows are the
        row writer's; the INS report items wait for their delivery here)."""
        for name, values in (('INS', b.ins), ('IMU', b.imu), ('truth', b.truth)):
            if not np.isfinite(values).all():   # then their rows skip the search per line
                raise FloatingPointError(f'agent {agent.index}: the {name} model gave a '
                                         'non-finite value in this second of the run')
        ins_points = {}
        if agent.ins is not None and len(b.ins_k):
            self._ins_topics(agent, b, entries)
            # the rows themselves are the row writer's; the report keeps a few values
            self._wait(agent, 'ins', b.ins_k, b.ins[:, [P_INS, P_INS + 1, P_INS + 2,
                                                       P_N, P_N + 1, P_N + 2]].tolist())
            ins_points = dict(zip(b.ins_k.tolist(), b.ins[:, P_N:P_N + 3].tolist()))
        report = agent.report['truth']
        for k, truth in zip(b.truth_k.tolist(), b.truth.tolist()):
            point = ins_points.get(k) or truth[T_P:T_P + 3]
            report.append({'sample_time_s': k / PHYSICS_HZ, 'position_enu_m': point})
        if agent.imu is not None and len(b.imu_k):
            values = [[round(x, 6) for x in v[:3]] + [round(x, 8) for x in v[3:]]
                      for v in b.imu.tolist()]
            raw = self.batches.imu_raw(np.array(values).reshape(-1, 6), _ns_of(b.imu_k),
                                       agent.prefix + IMU_FRAME)
            rows = [{'specific_force_flu_mps2': v[:3], 'angular_velocity_flu_radps': v[3:]}
                    for v in values]
            self._wait(agent, 'imu', b.imu_k, rows, raw.messages())
        if agent.gnss is not None and len(b.gnss_k):
            antennas = b.gnss_antenna.tolist()
            rows = [agent.gnss.row(k / PHYSICS_HZ, antenna, record) for k, antenna, record
                    in zip(b.gnss_k.tolist(), antennas, b.gnss)]
            self._wait(agent, 'gnss', b.gnss_k, rows, antennas)

    def _wait(self, agent, name, steps, rows, extras=None):
        """Rows sampled at ``steps`` enter the sensor's delay line."""
        line = agent.waiting[name]
        extras = extras if extras is not None else [None] * len(rows)
        for k, row, extra in zip(steps.tolist(), rows, extras):
            line.append((delivery_step(k, self.delay_s, PHYSICS_HZ), k, row, extra))

    def _deliver(self, agent, k_end, entries):
        """Every waiting row delivered before step ``k_end``: its file row and topics."""
        gnss_topics = {topic: ([], []) for topic in (self._topic(agent, GNSS_TOPICS['fix']),
                                                     self._topic(agent, GNSS_TOPICS['nmea']),
                                                     '/diagnostics')}
        imu_raw = ([], [])
        for name in ('gnss', 'imu', 'ins'):
            line, file, report = agent.waiting[name], agent.files.get(name), agent.report[name]
            while line and line[0][0] < k_end:
                k_delivery, k, row, extra = line.popleft()
                if name == 'ins':             # written by the row writer
                    report.append(self._ins_report(k, row))
                    continue
                timed = self._timed(row, k, k_delivery / PHYSICS_HZ)
                file.write(timed, check_finite=name == 'gnss')   # the IMU's: checked arrays
                if name == 'gnss':
                    when = msg.ns_from_seconds(k_delivery / PHYSICS_HZ)
                    stamp = msg.ns_from_seconds(k / PHYSICS_HZ)
                    for topic, data in self._gnss_messages(agent, timed, stamp):
                        gnss_topics[topic][0].append(when)
                        gnss_topics[topic][1].append(data)
                    report.append((_gnss_report(timed), extra))
                    agent.fix_counts[timed['fix_type']] += 1
                    agent.fix_counts_with_position += timed['position_enu_m'] is not None
                elif name == 'imu':
                    imu_raw[0].append(msg.ns_from_seconds(k_delivery / PHYSICS_HZ))
                    imu_raw[1].append(extra)
                    report.append(timed)
        for topic, (whens, datas) in gnss_topics.items():
            if whens:
                entries.append(_joined(topic, whens, datas))
        if imu_raw[0]:
            entries.append(_joined(self._topic(agent, IMU_TOPIC), *imu_raw))

    def _timed(self, row, k_sample, delivery_time):
        return timed_row(row, k_sample, delivery_time, self.delay_s)

    def _ins_report(self, k, values):
        """What the report takes of an INS row: time, position, its variances, truth."""
        return {'sample_time_s': k / PHYSICS_HZ, 'position_enu_m': values[:3],
                'fix': {'position_covariance': self.ins_position_variance},
                'truth': {'position_enu_m': values[3:]}}

    def _gnss_messages(self, agent, row, stamp):
        """(topic, CDR bytes) of the receiver's fix, GGA sentence and diagnostics."""
        serialise = msg.TYPESTORE.serialize_cdr
        fix = msg.navsat_fix_from_gnss_row(row, stamp, agent.prefix + ANTENNA_FRAME,
                                           self.gnss_service)
        out = [(self._topic(agent, GNSS_TOPICS['fix']),
                serialise(fix, 'sensor_msgs/msg/NavSatFix'))]
        sentence = msg.nmea_string(row)
        if sentence is not None:
            out.append((self._topic(agent, GNSS_TOPICS['nmea']),
                         serialise(sentence, 'std_msgs/msg/String')))
        diagnostics = msg.diagnostics_from_gnss_row(row, stamp, f'{agent.prefix}gnss_receiver')
        out.append(('/diagnostics', serialise(diagnostics, 'diagnostic_msgs/msg/DiagnosticArray')))
        return out

    def _ins_topics(self, agent, b, entries):
        """The INS topics of every epoch of the block, at the sample time."""
        t_ns = _ns_of(b.ins_k)
        for kind, encoded in self.batches.ins_topics(b.ins, t_ns, self.topics, agent.prefix):
            topic = '/tf' if kind == 'tf' else self._topic(agent, getattr(self.topics, kind))
            entries.append(_entry(topic, t_ns, encoded))

    # -- the end --------------------------------------------------------------

    def _close(self):
        """Close every file, each whatever happens to the others."""
        writers = [self.bag, self.rows]
        for agent in self.agents:
            for name, line in agent.waiting.items():
                if name != 'ins':                  # the INS rows: the row writer's
                    for _k_delivery, k, row, _extra in line:  # never delivered: null
                        agent.files[name].write(self._timed(row, k, None))
                line.clear()
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
            summary = summary_table(gnss, ins, imu, truth, gnss_truth_enu=antenna)
            _true_counts(summary, agent)
            summaries.append(summary)
        sim_s = max(self.sim.step - 1, 0) / PHYSICS_HZ    # the last step sampled
        episode = {
            'software': f'acres_sim {__version__}',
            'rig': self.rig, 'agents': len(self.agents), 'seed': self.config['seed'],
            'duration_s': self.request.duration_s, 'simulated_s': sim_s,
            'cut_short': self.cut_short,
            'stop_signal': self.stop_signal if self.cut_short else None,
            'start_utc': self.config['gnss.datum.start_utc'],
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


def _ns_of(steps):
    return msg.ns_from_steps(steps, PHYSICS_HZ)


def _entry(topic, t_ns, encoded):
    """A BagWriter.write_block entry of messages encoded by MessageBatches."""
    return topic, t_ns, encoded.payload, encoded.lengths()


def _joined(topic, t_ns, datas):
    """A BagWriter.write_block entry of separately serialised messages."""
    return topic, t_ns, b''.join(datas), [len(d) for d in datas]


def _true_counts(summary, agent):
    """The summary counts of every row delivered, not of the report's thinned
    series (its shares, means and RMS come from an even sample of them)."""
    r = agent.report
    summary['ins']['epochs'] = r['ins'].seen
    summary['imu']['samples'] = r['imu'].seen
    summary['truth']['samples'] = r['truth'].seen
    gnss = summary['gnss']
    gnss['epochs'] = r['gnss'].seen
    gnss['fix_epochs'] = dict(agent.fix_counts)
    gnss['epochs_with_position'] = agent.fix_counts_with_position
    gnss['fix_share'] = {state: (count / r['gnss'].seen if r['gnss'].seen else 0.0)
                         for state, count in agent.fix_counts.items()}


def _biases(imu):
    if imu is None:
        return None
    return {'accel_mps2': list(imu.biases.accel_mps2), 'gyro_radps': list(imu.biases.gyro_radps)}


_GNSS_REPORT_KEYS = ('sample_time_s', 'fix_type', 'position_enu_m', 'sigma_enu_m',
                     'satellites_used', 'pdop')


def _gnss_report(row):
    """The few keys of a GNSS row the report needs (keeps memory small in long runs)."""
    return {k: row[k] for k in _GNSS_REPORT_KEYS if k in row}


def record(request: RecordRequest):
    """Run one recording; returns the episode dict (also written to episode.json)."""
    recording = _Recording(request)
    episode = recording.run()
    return episode, format_summary(episode['summary'][0])
