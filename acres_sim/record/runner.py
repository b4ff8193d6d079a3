"""The headless recorder: physics, INS, IMU and GNSS in one process, no
middleware, writing the spec's rows, a rosbag2 of the rig's topics and a report.

The run is a rig or scenario with the options of ``acres-sim up``, resolved
by :func:`acres_sim.rig.resolve_run` as for the live rig; the vehicles,
their models and their channels are the pipeline's
(:func:`acres_sim.pipeline.vehicle.build_vehicle`), as in the live nodes,
each vehicle in a simulation of its own (its rates and lever arms its own,
as in the sim node), all on one ground: the run's terrain
(:func:`acres_sim.config.terrain.load_terrain`, its roughness of the first
vehicle's seed, as in the sim node), or the plane of the physics when it is
``flat``.  One vehicle writes its files at the top of the output
folder; a fleet one folder per vehicle, named by it, beside one bag, one
report (a page per vehicle) and one ``episode.json``.
The models run at 120 Hz (t = k / 120 from the integer step k) in the block
kernel of :mod:`acres_sim.core.block`, one second of simulated time per call;
this module turns each block's arrays into files.  Per sensor sample: it
enters a delay line and is delivered at the first step whose time reaches
t_sample + delay_s (the spec's Emit/Drain, drained a block at a time) -- the
GNSS receiver's rows their channel's (:mod:`acres_sim.pipeline.channels`), the
IMU's and the further sensors' samples a line of arrays of their own
(:class:`acres_sim.core.schedule.BlockDelayLine`, the same delivery steps) --
and written then with its sample, available and delivery times; a sample
whose delivery would come after the last step of the run is never written
(Drain has not released it).  The INS
topics go into the bag at the sample time, as the sensor stream sends them
without latency; the GNSS receiver and
IMU topics at delivery, stamped with the sample time, as their nodes publish
them; bag times and stamps are ROS times, ``gnss.datum.start_utc`` + k / 120
(:mod:`acres_sim.pipeline.timeline`), the rows' times the spec's k / 120.
Within a block the bag gets its messages in time order (at one time:
/clock, then each agent's INS topics, then its deliveries), the high-rate
ones encoded a block at a time (:mod:`acres_sim.pipeline.batches`).  Two
writer processes take the heaviest writing off the simulation's process, to
the other core: rosbags writes the bag in one (``BagWriter(background=True)``),
and ``ins.jsonl``, ``truth.jsonl``, ``imu.jsonl`` and the further sensors'
files are built from the block arrays and written in the other
(:mod:`acres_sim.record.rows_process`; the IMU's and further sensors' samples
wait for their delivery here, as arrays, for their bag messages' times); the
GNSS receiver's rows are written here.  A third, started first, imports matplotlib
while the run is set up and goes on, and draws ``report.png`` at its end,
while the other writers finish and close (:mod:`acres_sim.record.report_process`;
a run that failed before its end draws none).
Without the bag (``RecordRequest.bag`` False, ``--no-bag``) there is no bag
writer and no channel encodes a message; without the report (``report``
False) no report process starts and no report.png is drawn: the rows are the
same either way, and episode.json names what was left out (``options.left_out``).

Faults (:mod:`acres_sim.record.output` keeps the folder safe): the models
and signal handling are set up before any file is touched; the previous
recording in the folder is replaced only once every writer has started; the
jsonl files are flushed every block, before the bag gets the block, so they
never lag the bag by more than a simulated second; a writer that fails ends
the run with every file closed on a whole line, and ``episode.json``,
written last and atomically after ``report.png``, says how the run ended and
what state each file is in.
"""

import contextlib
from dataclasses import dataclass, field
import gc
import json
import math
from pathlib import Path
import sys
import time

import numpy as np

from acres_sim import __version__
from acres_sim.config.scenario import vehicle_motion
from acres_sim.config.scene import default_scene, load_scene
from acres_sim.config.terrain import FLAT, load_terrain
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core.block import run_vehicle_block
from acres_sim.core.gnss.receiver import REC_FIX
from acres_sim.core.ins import P_INS, P_N
from acres_sim.core.schedule import BlockDelayLine
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q
from acres_sim.files import part_name, write_atomically
from acres_sim.pipeline.models import site_georeference
from acres_sim.pipeline.event_topics import (EVENT_LOG_TOPIC, EventStatus, event_log,
                                             scenario_entry)
from acres_sim.pipeline.faults import ActiveIntervals
from acres_sim.pipeline.messages import TYPESTORE
from acres_sim.pipeline.step_channels import STEP_SENSORS
from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, static_tf
from acres_sim.record.bag import BagWriter, BagWriterError
from acres_sim.record.child import WriterProcessError
from acres_sim.record.jsonl import JsonlWriter, cut_partial_line
from acres_sim.record.output import WRITERS_LOCK, OutputFolder
from acres_sim.record.report import (FIX_STATES, ReportPage, format_summary,
                                     further_report_columns, summary_table)
from acres_sim.record.report_process import ReportProcess
from acres_sim.record.report_series import Thinned, ThinnedColumns
from acres_sim.record.rows_process import RowProcess, RowProcessError
from acres_sim.rig import RigOptions, resolve_run
from acres_sim.stop_signals import StopSignals
from acres_sim.warmup import cached

__all__ = ['RecordRequest', 'RecordingFailed', 'RecordingStopped', 'record']

# The keys of a one-vehicle run's only vehicle that episode.json also has at its top.
ONE_VEHICLE_KEYS = ('route', 'vehicle', 'imu_bias_flu', 'config', 'summary')
BLOCK_STEPS = PHYSICS_HZ  # physics steps per kernel call (1 s); Ctrl-C is honoured between blocks
# The files the row writer process writes (the others, the GNSS receiver's: the
# recorder's own process)
ROW_WRITER_FILES = ('ins', 'truth', 'imu', *STEP_SENSORS)
# The INS report's values of an epoch: its position and the true one at the INS point (ENU)
INS_REPORT_COLUMNS = [P_INS, P_INS + 1, P_INS + 2, P_N, P_N + 1, P_N + 2]


class RecordingStopped(Exception):
    """A signal arrived before the recording started; the folder is as it was."""


class RecordingFailed(Exception):
    """A writer failed during the run (one line; episode.json says what is whole)."""


@dataclass
class RecordRequest:
    """One recording: ``rig`` (a Scenario, a packaged rig or scenario name, or
    a file) with ``options``, resolved as ``acres-sim up`` resolves them
    (:func:`acres_sim.rig.resolve_run`), so both drivers run the same
    vehicles, configurations and spawns.  The duration is the options', else
    the scenario's, else :data:`DEFAULT_DURATION_S`."""

    rig: object
    out: Path
    options: RigOptions = field(default_factory=RigOptions)
    progress: bool = True
    parked: bool = False           # no route follower: the vehicles stay where they spawn
    bag: bool = True               # False: no bag/ (no bag writer, no message encoded for it)
    report: bool = True            # False: no report.png (the summary is still made)


DEFAULT_DURATION_S = 120.0


@dataclass
class _Agent:
    """One vehicle of the recording: its models and channels (a
    pipeline Vehicle), its simulation, its folder and files, its report rows."""

    index: int
    name: str                      # the scenario's name of the vehicle (its folder in a fleet)
    vehicle: object                # acres_sim.pipeline.vehicle.Vehicle
    sim: object                    # its acres_sim.core.block.RigSimulation
    folder: Path
    files: dict = field(default_factory=dict)
    # its report's series: the GNSS rows; the others as columns (made of the block's arrays)
    report: dict = field(default_factory=lambda: {
        'gnss': Thinned(), **{name: ThinnedColumns()
                              for name in ('ins', 'truth', 'imu', *STEP_SENSORS)}})
    # acres_sim.core.schedule.BlockDelayLine: until their delivery, the INS report's
    # values (INS and true position at each epoch; None: no INS) and the IMU's samples
    # (their rounded values, tagged with the active events' names; None: no IMU)
    ins_report: object = None
    imu_line: object = None
    # ... and the further sensors' raw samples (name -> BlockDelayLine)
    step_lines: dict = field(default_factory=dict)
    # GNSS epochs delivered per fix state, and with a position (the report's are thinned)
    fix_counts: dict = field(default_factory=lambda: {state: 0 for state in FIX_STATES})
    fix_counts_with_position: int = 0
    heading_epochs: int = 0        # GNSS heading epochs delivered, and those with a heading
    heading_valid: int = 0
    route_end_said: bool = False   # its route's end is in the log
    intervals: object = None       # pipeline.faults.ActiveIntervals of its events
    status: object = None          # pipeline.event_topics.EventStatus of its events


class _Recording:
    def __init__(self, request: RecordRequest, stop: StopSignals):
        self.request = request
        self.stop = stop
        run = resolve_run(request.rig, request.options)
        self.scenario = run.scenario
        self.configs = run.configs
        self.config = run.configs[0]           # the keys every vehicle shares (rig.WORLD_KEYS)
        self.rig = request.rig if isinstance(request.rig, str) else run.scenario.name
        self.duration_s = float(run.sim_values['duration_s'] or DEFAULT_DURATION_S)
        scene = run.sim_values['scene']
        self.scene = load_scene(scene) if scene else default_scene()
        # one ground for every vehicle (None: flat, the plane of the physics)
        self.terrain = load_terrain(run.sim_values['terrain'], self.config['seed'])
        self.site = site_georeference(self.config)
        self.steps = int(round(self.duration_s * PHYSICS_HZ))
        self.out = Path(request.out)
        vehicles = run.scenario.vehicles
        # a live run's event log repeated: its entries go into the bag at their steps,
        # and an injected event's status starts at its entry's step, as live
        self.log_entries = [e for e in request.options.event_log if e.get('log') != 'scenario']
        self.injected_at = {e['event']['name']: e['step'] for e in self.log_entries
                            if e.get('log') == 'inject'}
        self.agents = [self._agent(k, v, config, len(vehicles))
                       for k, (v, config) in enumerate(zip(vehicles, run.configs))]
        if not request.bag:            # no bag: no channel encodes a message
            for agent in self.agents:
                for channel in agent.vehicle.channels.values():
                    channel.encoding = False
        self.rows = self.bag = None     # the writers: start()
        self.reporter = None            # the report process: record() starts it
        self.prestarted = {}            # writers started ahead (record()'s ``writers``)
        self.report_started = False     # it was asked to draw
        self.report_error = None        # what asking it raised
        self.batches = self.agents[0].vehicle.batches     # /clock
        self.timeline = self.agents[0].vehicle.timeline   # the ROS times of the steps
        self.cut_short = False
        self.stop_signal = None        # 'SIGINT' or 'SIGTERM' when one cut the run short
        self.failure = None            # the error that ended the run, if one did
        self.failed_files = set()      # files whose writer failed (whole lines, cut short)
        self.bag_closed = False        # the bag writer closed the bag without an error

    def _agent(self, k, scenario_vehicle, config, n):
        """Vehicle k of the n of this run, built as the sim node builds it, in
        a simulation of its own (its rates and lever arms its own); a fleet's
        vehicle writes into the folder of its name."""
        motion = vehicle_motion(scenario_vehicle, load_vehicle(scenario_vehicle.model), self.site)
        if self.request.parked:
            motion = motion._replace(parked=True)
        vehicle = build_vehicle(config, scenario_vehicle.model, motion=motion, scene=self.scene,
                                site=self.site, frame_prefix=scenario_vehicle.frame_prefix,
                                namespace=scenario_vehicle.namespace,
                                events=self.scenario.events.for_vehicle(scenario_vehicle.name))
        sim = rig_simulation([vehicle], self.steps,
                             ground=None if self.terrain is None else self.terrain.field)
        folder = self.out if n == 1 else self.out / scenario_vehicle.name
        ins_report = (BlockDelayLine(vehicle.delay_s, PHYSICS_HZ, len(INS_REPORT_COLUMNS))
                      if 'ins' in vehicle.channels else None)
        imu_line = (BlockDelayLine(vehicle.delay_s, PHYSICS_HZ, 6)
                    if 'imu' in vehicle.channels else None)
        step_lines = {name: BlockDelayLine(vehicle.delay_s, PHYSICS_HZ,
                                           vehicle.channels[name].model.SAMPLE_SIZE)
                      for name in STEP_SENSORS if name in vehicle.channels}
        return _Agent(k, scenario_vehicle.name, vehicle, sim, folder,
                      intervals=ActiveIntervals(vehicle.events),
                      status=EventStatus(vehicle, self.injected_at), ins_report=ins_report,
                      imu_line=imu_line, step_lines=step_lines)

    @property
    def step(self):
        """The next physics step to run (every vehicle's simulation is there)."""
        return self.agents[0].sim.step

    # -- set-up ---------------------------------------------------------------

    def files(self):
        """Every file this run may write, relative to the output folder."""
        names = ['bag/bag.mcap', 'bag/metadata.yaml'] if self.request.bag else []
        for name in ('report.png', 'episode.json'):
            if name == 'report.png' and not self.request.report:
                continue
            names += [name, part_name(name).name]
        for agent in self.agents:
            names += [self._relative(path) for path in self._jsonl_paths(agent).values()]
        return names

    def _relative(self, path):
        return Path(path).relative_to(self.out).as_posix()

    @staticmethod
    def _jsonl_paths(agent):
        """name -> path of the agent's jsonl files (:data:`ROW_WRITER_FILES`: the row writer's)."""
        channels = agent.vehicle.channels
        names = [name for name in ('gnss', 'gnss_heading', 'imu', 'ins') if name in channels]
        paths = {name: agent.folder / f'{name}.jsonl' for name in names + ['truth']}
        paths.update({name: agent.folder / channels[name].file_name
                      for name in STEP_SENSORS if name in channels})
        return paths

    def start(self):
        """Open the files and start the row and bag writers (the folder is
        ready), side by side: each is waited for once both run.  The report
        process runs already (:func:`record` starts it first)."""
        for agent in self.agents:
            agent.folder.mkdir(parents=True, exist_ok=True)
            agent.files = {name: JsonlWriter(path)
                           for name, path in self._jsonl_paths(agent).items()
                           if name not in ROW_WRITER_FILES}
        lock = self.out / WRITERS_LOCK       # held by both while they have files open
        row_files = []
        for agent in self.agents:
            paths, ins = self._jsonl_paths(agent), agent.vehicle.ins
            row_files.append((str(paths['ins']) if ins else None, str(paths['truth']),
                              ins.row_spec if ins else None,
                              str(paths['imu']) if 'imu' in paths else None,
                              {name: (str(paths[name]),
                                      agent.vehicle.channels[name].model.rows_from_columns)
                               for name in agent.step_lines}))
        self.rows = RowProcess(row_files, [agent.vehicle.delay_s for agent in self.agents],
                               tidy=[file.path for agent in self.agents
                                     for file in agent.files.values()], lock=lock,
                               wait=False, prestarted=self.prestarted.get('rows'))
        if self.request.bag:
            # run() stops gracefully between blocks: no signal hold per message
            # the pipeline's typestore: it has the types the wheels lack (gps_msgs)
            self.bag = BagWriter(self.out / 'bag', TYPESTORE, hold_interrupts=False,
                                 background=True, lock=lock, wait=False,
                                 prestarted=self.prestarted.get('bag'))
        self.rows.wait_ready()
        if self.bag is not None:
            self.bag.wait_ready()
            self._add_topics()

    def _add_topics(self):
        self.bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        self.bag.add_topic('/tf', 'tf2_msgs/msg/TFMessage')
        self.bag.add_topic('/tf_static', 'tf2_msgs/msg/TFMessage', qos='static')
        self.bag.add_topic('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray')
        if self.scenario.events or self.log_entries:
            self.bag.add_topic('/' + EVENT_LOG_TOPIC, 'std_msgs/msg/String', qos='static')
        for agent in self.agents:
            vehicle = agent.vehicle
            for name in ('ins', 'gnss', 'gnss_heading', 'imu', *STEP_SENSORS):
                channel = vehicle.channels.get(name)
                for topic, msgtype in channel.topic_types if channel else ():
                    if not topic.startswith('/'):      # the rig's own: added above
                        self.bag.add_topic(vehicle.topic(topic), msgtype)

    def _static_tf(self):
        self.bag.write('/tf_static', self.timeline.t0_ns,
                       static_tf([agent.vehicle for agent in self.agents]))
        for agent in self.agents:    # the event log: the scenario's own events, at the start
            text = self.scenario.events.to_json(agent.name, leave_out=self.injected_at)
            if text:
                self.bag.write_raw('/' + EVENT_LOG_TOPIC, self.timeline.t0_ns,
                                   scenario_entry(agent.name, text))

    # -- the loop -------------------------------------------------------------

    def run(self):
        """The loop; Ctrl-C or SIGTERM ends it after the current block, files
        whole; a writer's failure ends it too (``self.failure``).  The files are
        closed, the report and episode.json written whatever happened."""
        if self.request.progress and not cached(run_vehicle_block):   # on a terminal
            print('acres-sim: compiling kernels (first run only: numba caches them) ...',
                  file=sys.stderr)
        started = time.monotonic()
        # The rows and messages hold no reference cycles, so reference counting
        # frees them; the cyclic collector would only rescan the long-lived
        # report series again and again (with every few thousand new rows, and
        # while the report's pages are made of them and pickled).
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._loop(started)
        finally:
            if collecting:
                _age_without_a_scan()
                gc.enable()

    def _loop(self, started):
        """run() with the cyclic collector off: the blocks, the closing, the end."""
        shown = started
        ended = False                 # the loop ended, or a writer failed (not a bug)
        try:
            if self.bag is not None:
                self._static_tf()
            while self.step <= self.steps:
                if self.stop.is_set():
                    self.cut_short = True
                    self.stop_signal = self.stop.name
                    break
                k0 = self.step
                blocks = [agent.sim.advance(BLOCK_STEPS)[0] for agent in self.agents]
                self._write_block(k0, self.step, blocks)
                self._say_route_ends()
                if self.request.progress and time.monotonic() - shown > 0.5:
                    shown = time.monotonic()
                    self._progress((self.step - 1) / PHYSICS_HZ, shown - started)
            ended = True
        except (OSError, WriterProcessError) as err:    # a full disk, a writer killed ...
            self.failure = err
            ended = True
        finally:
            if self.request.progress:
                sys.stderr.write('\n')
            self.wall_s = time.monotonic() - started
            # signals only set the stop flag now: they cannot cut the closing short
            try:            # the report is drawn while the writers finish their last block
                if ended:
                    pages = self._pages()
                    self._start_report(pages)
            finally:
                close_error = self._close()
                self.failure = self.failure or close_error
        return self._finish(pages)

    def _say_route_ends(self):
        """One line on stderr when a vehicle's route ends (it parks there), as
        the sim node logs it; episode.json has it too."""
        for agent in self.agents:
            follower = agent.sim.followers[0]
            if follower.done and not agent.route_end_said and not agent.vehicle.parked:
                agent.route_end_said = True
                start = '\n' if self.request.progress else ''
                sys.stderr.write(f'{start}acres-sim: {agent.name}: {follower.end_note()}\n')

    def _progress(self, t, wall):
        done = t / max(self.duration_s, 1e-9)
        bar = '#' * int(30 * done)
        sys.stderr.write(f'\r[{bar:30}] {t:7.1f}/{self.duration_s:g} s sim '
                         f'({t / max(wall, 1e-9):5.1f}x real time)')
        sys.stderr.flush()

    # -- one block of results -> files ------------------------------------------

    def _write_block(self, k0, k1, blocks):
        """Rows and messages of steps k0 .. k1-1; the bag gets them in time order
        (at one time: /clock, then per agent its INS topics, then its deliveries).
        Without a bag, ``entries`` is None: no message is put together for it."""
        entries = None
        if self.bag is not None:
            clock_ns = self.timeline.ns_of_steps(np.arange(k0, k1))
            entries = [_entry('/clock', clock_ns, self.batches.clock(clock_ns))]
            for entry in self.log_entries:       # a repeated live run's event log, at its steps
                if k0 <= entry['step'] < k1:
                    entries.append(_joined('/' + EVENT_LOG_TOPIC,
                                           [self.timeline.ns(entry['step'])],
                                           [event_log(entry)]))
        rows = []
        for agent, block in zip(self.agents, blocks):
            item = self._sample(agent, k0, block, entries)
            for name, line in agent.step_lines.items():
                line.push_block(*agent.vehicle.channels[name].model.run_block(k0, block.states))
            rows.append((*item, *self._deliver(agent, k1, entries)))
        self.rows.send_block(k1, rows)
        for agent in self.agents:      # the rows on disk before the bag has their messages
            for file in agent.files.values():
                file.flush()
        if self.bag is not None:
            self.bag.write_block(entries)

    def _sample(self, agent, k0, b, entries):
        """The block's samples (steps k0 ...): the INS topics and the report's truth
        now, the GNSS, GNSS heading and IMU rows into their channels' delay lines
        (the heading of each GNSS epoch from the state's quaternion at its step,
        ``b.states[k - k0]``, and the receiver's fix state; the INS and truth
        rows are the row writer's: returns its item of the block; the INS
        report's values wait for their delivery in ``agent.ins_report``).  The bag's
        messages go into ``entries``, unless it is None (no bag)."""
        for name, values in (('INS', b.ins), ('IMU', b.imu), ('truth', b.truth)):
            if not np.isfinite(values).all():   # then their rows skip the search per line
                raise FloatingPointError(f'agent {agent.index}: the {name} model gave a '
                                         'non-finite value in this second of the run')
        channels = agent.vehicle.channels
        events = agent.vehicle.events
        ins_k, ins, ins_names = b.ins_k, b.ins, None
        if 'ins' in channels and len(b.ins_k):
            ins_k, ins, ins_names = channels['ins'].faulted(b.ins_k, b.ins,
                                                            b.ins_ev if len(events) else None)
            dropped = len(ins_k) < len(b.ins_k)     # a dropout: the ground truth goes on
            if entries is not None:
                self._ins_topics(agent, ins_k, ins, entries,
                                 (b.ins_k, b.ins) if dropped else None)
            # the rows themselves are the row writer's; the report keeps a few values
            agent.ins_report.push_block(ins_k, ins[:, INS_REPORT_COLUMNS])
        agent.report['truth'].extend(_truth_report(b, 'ins' in channels))
        views = len(events) > 0
        if 'imu' in channels and len(b.imu_k):
            steps, rounded, names = channels['imu'].faulted_block(b.imu_k, b.imu,
                                                                  b.imu_ev if views else None)
            agent.imu_line.push_block(steps, rounded, names)
        if 'gnss' in channels and len(b.gnss_k):
            channels['gnss'].push_epochs(b.gnss_k, b.gnss_antenna, b.gnss,
                                         b.gnss_ev if views else None)
            if 'gnss_heading' in channels:
                channels['gnss_heading'].push_epochs(
                    b.gnss_k, b.states[b.gnss_k - k0, T_Q:T_Q + 4], b.gnss[:, REC_FIX],
                    b.gnss_ev if views else None)
        if not views:
            return agent.index, ins_k, ins, b.truth_k, b.truth, None, None, None
        agent.intervals.take(b.truth_ev)
        agent.intervals.take_clock(events.state)
        status = agent.status.messages(b.truth_k, b.truth_ev) if entries is not None else ()
        if status:
            entries.append(_joined('/diagnostics', [self.timeline.ns(k) for k, _ in status],
                                   [data for _, data in status]))
        truth_names = [events.active_names(view) for view in b.truth_ev]
        # a dropout leaves epochs out of the INS rows, not their truth out of truth.jsonl
        ins_truth = (b.ins_k, b.ins) if len(ins_k) < len(b.ins_k) else None
        return agent.index, ins_k, ins, b.truth_k, b.truth, ins_names, truth_names, ins_truth

    def _deliver(self, agent, k_end, entries):
        """Every sample delivered before step ``k_end``: its file row and topics
        (the bag's ``entries`` per topic, each in the order the channel sends
        them; None: no bag).  Returns the row writer's part: the IMU samples
        delivered (None: none) and the further sensors' ({name: ...}, None:
        none)."""
        vehicle = agent.vehicle
        if agent.ins_report is not None:      # the rows: written by the row writer
            k_sample, _k_delivery, values, _tags = agent.ins_report.drain(k_end - 1)
            agent.report['ins'].extend(_ins_report(k_sample, values,
                                                   vehicle.ins.position_variance))
        for name in ('gnss', 'gnss_heading'):
            if name in vehicle.channels:
                self._deliver_rows(agent, name, k_end, entries)
        # the IMU's and the further sensors' samples are arrays, their rows the row writer's
        imu = self._deliver_imu(agent, k_end, entries) if agent.imu_line is not None else None
        steps = {}
        for name in agent.step_lines:
            delivered = self._deliver_step_sensor(agent, name, k_end, entries)
            if delivered is not None:
                steps[name] = delivered
        return imu, steps or None

    def _deliver_rows(self, agent, name, k_end, entries):
        """The GNSS receiver's (``name``: gnss or gnss_heading) rows delivered
        before step ``k_end``: into its file, the report and its counts; their
        messages into ``entries``."""
        vehicle = agent.vehicle
        channel = vehicle.channels[name]
        deliveries = channel.drain(k_end - 1)
        if not deliveries:
            return
        rows = [delivery.row for delivery in deliveries]
        agent.files[name].write_rows(rows)
        if name == 'gnss':
            report = agent.report['gnss']
            for delivery in deliveries:
                row = delivery.row
                report.append((_gnss_report(row), delivery.extra))
                agent.fix_counts[row['fix_type']] += 1
                agent.fix_counts_with_position += row['position_enu_m'] is not None
        else:
            agent.heading_epochs += len(rows)
            agent.heading_valid += sum(bool(row['heading_valid']) for row in rows)
        if entries is not None:
            self._delivered_messages(vehicle, channel, deliveries, entries)

    def _deliver_imu(self, agent, k_end, entries):
        """The IMU samples delivered before step ``k_end`` (sample steps,
        delivery steps, rounded values, active events' names or None), or None:
        into the report, and their ``imu/data_raw`` into ``entries`` (encoded
        together, each at its delivery time)."""
        k_sample, k_delivery, values, names = agent.imu_line.drain(k_end - 1)
        if not len(k_sample):
            return None
        channel = agent.vehicle.channels['imu']
        agent.report['imu'].extend({'sample_time_s': k_sample / PHYSICS_HZ,
                                    'specific_force_flu_mps2': values[:, :3],
                                    'angular_velocity_flu_radps': values[:, 3:]})
        if entries is not None:
            (topic, _type), = channel.topic_types
            entries.append(_entry(agent.vehicle.topic(topic),
                                  self.timeline.ns_of_steps(k_delivery),
                                  channel.encode_block(k_sample, values)))
        return k_sample, k_delivery, values, names if any(names) else None

    def _deliver_step_sensor(self, agent, name, k_end, entries):
        """The samples of a further sensor delivered before step ``k_end``, as
        (sample steps, delivery steps, their rounded values: the model's
        ``columns``) for the row writer, or None: their values into the report,
        their messages into ``entries`` (encoded together, each topic's at the
        delivery times)."""
        k_sample, k_delivery, samples, _tags = agent.step_lines[name].drain(k_end - 1)
        if not len(k_sample):
            return None
        channel = agent.vehicle.channels[name]
        columns = channel.model.columns(samples)
        agent.report[name].extend(further_report_columns(
            name, {'sample_time_s': k_sample / PHYSICS_HZ, **columns}))
        if entries is not None:
            when = self.timeline.ns_of_steps(k_delivery)
            for topic, encoded in channel.encode_block(columns,
                                                       self.timeline.ns_of_steps(k_sample)):
                entries.append(_entry(agent.vehicle.topic(topic), when, encoded))
        return k_sample, k_delivery, columns

    def _delivered_messages(self, vehicle, channel, deliveries, entries):
        """The bag's entries of the messages of ``deliveries``: one per topic
        of the channel, in its order, each message at its delivery time."""
        when = self.timeline.ns_of_steps([d.k_delivery for d in deliveries]).tolist()
        sent = {topic: ([], []) for topic, _type in channel.topic_types}
        for t_ns, delivery in zip(when, deliveries):
            for topic, data in delivery.messages:
                whens, datas = sent[topic]
                whens.append(t_ns)
                datas.append(data)
        for topic, (whens, datas) in sent.items():
            if whens:
                entries.append(_joined(vehicle.topic(topic), whens, datas))

    def _ins_topics(self, agent, ins_k, ins, entries, truth):
        """The INS topics of the epochs ``ins`` at ``ins_k`` (the ground truth of
        ``truth``, the epochs as computed), at the sample time."""
        channel = agent.vehicle.channels['ins']
        for topic, t_ns, encoded in channel.encode_epochs(ins_k, ins, truth=truth):
            entries.append(_entry(agent.vehicle.topic(topic), t_ns, encoded))

    # -- the end --------------------------------------------------------------

    def _close(self):
        """Close every file, each whatever happens to the others; the first
        error (or None).  Files of a writer that failed are cut back to their
        last whole line (a writer process killed in the middle of a write)."""
        errors = []
        for agent in self.agents:
            # The rows still in the delay lines are not written: their time never
            # came (spec, "Emit / Drain": Drain delivers only rows whose delivery
            # time has passed), as the live nodes never publish them.
            for file in agent.files.values():
                try:
                    file.close()
                except OSError as err:
                    errors.append(err)
        rows_failed = isinstance(self.failure, RowProcessError)
        try:
            self.rows.close()
        except (OSError, WriterProcessError) as err:
            errors.append(err)
            rows_failed = True
        try:
            if self.bag is not None:
                self.bag.close()
                self.bag_closed = not isinstance(self.failure, BagWriterError)
        except (OSError, WriterProcessError) as err:
            errors.append(err)
        for agent in self.agents:
            for name, path in self._jsonl_paths(agent).items():
                file = agent.files.get(name)
                if file is not None and file.failure or rows_failed and name in ROW_WRITER_FILES:
                    self.failed_files.add(self._relative(path))
                try:                    # a writer process killed in the middle of a write
                    cut_partial_line(path)
                except OSError:
                    pass
        return errors[0] if errors else None

    def _file_states(self):
        """relative path -> 'whole', 'cut short' (whole lines, but its writer
        failed), 'needs repair' (a bag that was not closed) or 'missing'; the
        bag only when the run writes one."""
        states = {}
        for agent in self.agents:
            for path in self._jsonl_paths(agent).values():
                name = self._relative(path)
                states[name] = ('missing' if not path.is_file() else
                                'cut short' if name in self.failed_files else 'whole')
        if self.request.bag:
            bag = self.out / 'bag'
            states['bag'] = ('whole' if self.bag_closed and (bag / 'metadata.yaml').is_file() else
                             'needs repair' if (bag / 'bag.mcap').is_file() else 'missing')
        return states

    @staticmethod
    def _report_rows(agent):
        """The agent's (thinned) report series: gnss rows with their truth, ins, imu, truth."""
        r = agent.report
        gnss = [row for row, _antenna in r['gnss'].items]
        antenna = np.array([a for _row, a in r['gnss'].items]).reshape(-1, 3)
        return gnss, r['ins'].columns(), r['imu'].columns(), r['truth'].columns(), antenna

    def _pages(self):
        """Each vehicle's page of the report, with its summary."""
        pages = []
        for agent in self.agents:
            gnss, ins, imu, truth, antenna = self._report_rows(agent)
            summary = summary_table(gnss, ins, imu, truth, gnss_truth_enu=antenna)
            _true_counts(summary, agent)
            further = {name: agent.report[name].columns() for name in STEP_SENSORS
                       if name in agent.vehicle.channels}
            pages.append(ReportPage(self._heading(agent), gnss, ins, imu, truth, antenna,
                                    summary, agent.intervals.entries(),
                                    self.scenario.events.named_zones(), further))
        return pages

    def _start_report(self, pages):
        """Hand the pages to the report process, unless the run failed; it
        draws while the recorder closes its files (:meth:`_finish` waits)."""
        if self.failure is None and self.reporter is not None:
            self.report_started = True
            try:
                self.reporter.start_drawing(self.out / 'report.png', pages, self.scene,
                                            self._title(self._simulated_s()),
                                            lock=self.out / WRITERS_LOCK)
            except Exception as err:  # noqa: BLE001 - the picture is optional, the episode is not
                self.report_error = err

    def _simulated_s(self):
        """The time of the last step sampled [s]."""
        return max(self.step - 1, 0) / PHYSICS_HZ

    def _finish(self, pages):
        """The report in place, then episode.json (each whole or not at all):
        the episode says how the run ended and what each file holds, and per
        vehicle its folder, model, route, spawn, files and summary."""
        sim_s = self._simulated_s()
        files = self._file_states()
        report_error = self.report_error
        if self.report_started and report_error is None:
            try:
                self.reporter.wait_drawn()
            except Exception as err:  # noqa: BLE001 - the picture is optional, the episode is not
                report_error = err
        if self.request.report:
            files['report.png'] = 'whole' if (self.out / 'report.png').is_file() else 'missing'
        status = 'failed' if self.failure or report_error else \
            'cut short' if self.cut_short else 'complete'
        vehicles = [self._vehicle_entry(agent, page.summary, files)
                    for agent, page in zip(self.agents, pages)]
        episode = {
            'status': status,
            'error': _one_line(self.failure or report_error),
            'files': files,
            'software': f'acres_sim {__version__}',
            'rig': self.rig, 'agents': len(self.agents), 'seed': self.config['seed'],
            'duration_s': self.duration_s, 'simulated_s': sim_s,
            'cut_short': self.cut_short,
            'stop_signal': self.stop_signal if self.cut_short else None,
            'start_utc': self.config['gnss.datum.start_utc'],
            'scene': self.scene.name, 'scene_digest': self.scene.digest,
            'terrain': self.terrain.name if self.terrain else FLAT,
            'terrain_digest': self.terrain.digest if self.terrain else None,
            'terrain_roughness_seed': self.terrain.roughness_seed if self.terrain else None,
            'real_time_factor': sim_s / max(self.wall_s, 1e-9),
            'options': self._options(),
            'events': self.scenario.events.entries(),
            'vehicles': vehicles,
        }
        if len(vehicles) == 1:         # a one-vehicle run: its entry at the top, as before fleets
            one = vehicles[0]
            episode.update({name: one[name] for name in ONE_VEHICLE_KEYS})
        text = json.dumps(episode, indent=2, allow_nan=False) + '\n'
        try:
            write_atomically(self.out / 'episode.json', text.encode('utf-8'))
        except OSError as err:
            report_error = report_error or err
            episode['files']['episode.json'] = 'missing'
        if status == 'failed' or report_error:
            raise RecordingFailed(self._failure_text(episode, self.failure or report_error))
        self.summary_text = '\n\n'.join(
            format_summary(page.summary) if len(pages) == 1 else
            f'{page.heading}\n{format_summary(page.summary)}' for page in pages)
        return episode

    def _heading(self, agent):
        v = agent.vehicle
        route = 'parked' if v.parked else f'route {v.route.name}'
        return f'{agent.name} ({v.name}, {route})'

    def _title(self, sim_s):
        """The report's title: the options of the run."""
        seeds = sorted({config['seed'] for config in self.configs})
        noise = sorted({config['noise'] for config in self.configs})
        routes = sorted({'parked' if a.vehicle.parked else a.vehicle.route.name
                         for a in self.agents})
        n = len(self.agents)
        return (f'acres_sim {self.rig}' + (f', {n} vehicles' if n > 1 else '')
                + f', {sim_s:g} s, seed {", ".join(map(str, seeds))}, noise '
                + '/'.join('on' if x else 'off' for x in noise)
                + f', route {", ".join(routes)}')

    def _options(self):
        """The options of the run on top of the scenario (those given)."""
        o = self.request.options
        given = {'seed': o.seed, 'noise': o.noise, 'agents': o.agents, 'route': o.route,
                 'laps': o.laps, 'repeat': o.repeat, 'scene': o.scene, 'terrain': o.terrain,
                 'duration_s': o.duration_s, 'config_file': o.config_file,
                 'site_file': o.site_file, 'parked': self.request.parked or None}
        out = {name: value for name, value in given.items() if value is not None}
        if o.overrides:
            out['sensor_keys'] = dict(o.overrides)
        if o.add_outages:
            out['add_outages'] = list(o.add_outages)
        left_out = [name for name, wanted in (('bag', self.request.bag),
                                              ('report.png', self.request.report)) if not wanted]
        if left_out:                   # --no-bag, --no-report: named as in files
            out['left_out'] = left_out
        return out

    def _vehicle_entry(self, agent, summary, files):
        """A vehicle's part of episode.json."""
        v, follower = agent.vehicle, agent.sim.followers[0]
        folder = self._relative(agent.folder) if agent.folder != self.out else '.'
        own = {self._relative(path) for path in self._jsonl_paths(agent).values()}
        east, north, yaw = v.start_pose
        return {
            'name': agent.name, 'folder': folder, 'model': v.name,
            'namespace': v.namespace, 'frame_prefix': v.frame_prefix,
            'agent_index': v.agent_index,
            'route': v.route.name,
            'parked': v.parked,
            'laps': None if v.parked else (follower.laps if math.isfinite(follower.laps)
                                           else 'repeat'),
            'spawn': {'east_m': east, 'north_m': north, 'heading_deg': math.degrees(yaw)},
            'route_ended_s': None if v.parked else follower.ended_s,
            'laps_driven': follower.laps_done if follower.lap_length and not v.parked else None,
            'distance_m': follower.distance_m,
            'files': {name: state for name, state in files.items() if name in own},
            'vehicle': v.params._asdict(),
            'imu_bias_flu': _biases(v.imu),
            'config': dict(v.config.values),
            'events': agent.intervals.entries(),
            'summary': summary,
        }

    def _failure_text(self, episode, error):
        """One line: what failed, and what to do about the bag."""
        text = (f'the recording in {self.out} failed after {episode["simulated_s"]:.1f} s '
                f'of simulated time: {_one_line(error)}')
        if episode['files'].get('bag') == 'needs repair':
            text += f'; the bag was not closed: run acres-sim bag repair {self.out / "bag"}'
        if 'episode.json' in episode['files']:
            text += '; episode.json could not be written'
        return text


def _age_without_a_scan():
    """Move every object the collector tracks into its oldest generation
    without scanning any: whatever was made while it was off is in the youngest
    generation, and the first allocation after ``gc.enable()`` would otherwise
    scan all of it (0.18 s after a 600 s run).  ``gc.freeze()`` moves every
    object aside and empties the young generation's count, ``gc.unfreeze()``
    puts them back into the oldest one; not done when the caller froze
    objects of its own (they would be unfrozen)."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def _entry(topic, t_ns, encoded):
    """A BagWriter.write_block entry of messages encoded by MessageBatches."""
    return topic, t_ns, encoded.payload, encoded.lengths()


def _joined(topic, t_ns, datas):
    """A BagWriter.write_block entry of separately serialised messages."""
    return topic, t_ns, b''.join(datas), [len(d) for d in datas]


def _true_counts(summary, agent):
    """The summary counts of every row delivered and the time they span, not
    of the report's thinned series (its shares, means and RMS come from an
    even sample of them)."""
    r = agent.report
    ends = [_row_time(item) for series in r.values() if series.seen
            for item in (series.first, series.last)]
    ends = [t for t in ends if t is not None]
    summary['duration_s'] = float(max(ends) - min(ends)) if ends else None
    summary['ins']['epochs'] = r['ins'].seen
    summary['imu']['samples'] = r['imu'].seen
    summary['truth']['samples'] = r['truth'].seen
    gnss = summary['gnss']
    gnss['epochs'] = r['gnss'].seen
    gnss['fix_epochs'] = dict(agent.fix_counts)
    gnss['epochs_with_position'] = agent.fix_counts_with_position
    gnss['fix_share'] = {state: (count / r['gnss'].seen if r['gnss'].seen else 0.0)
                         for state, count in agent.fix_counts.items()}
    if 'gnss_heading' in agent.vehicle.channels:
        gnss['heading_epochs'] = agent.heading_epochs
        gnss['epochs_with_heading'] = agent.heading_valid


def _truth_report(b, ins):
    """The report's truth of a block (``b``: the kernel's): the position at
    each truth step, at the INS point where the step has an INS epoch (with
    ``ins``; as computed, before any output fault), else the vehicle's."""
    position = b.truth[:, T_P:T_P + 3].copy()
    if ins and len(b.ins_k) and len(b.truth_k):
        at = np.minimum(np.searchsorted(b.truth_k, b.ins_k), len(b.truth_k) - 1)
        same = b.truth_k[at] == b.ins_k
        position[at[same]] = b.ins[same, P_N:P_N + 3]
    return {'sample_time_s': b.truth_k / PHYSICS_HZ, 'position_enu_m': position}


def _ins_report(k_sample, values, variance):
    """The report's INS rows of the epochs sampled at ``k_sample``, delivered
    now: their time, position, true position at the INS point (``values``:
    rows of :data:`INS_REPORT_COLUMNS`) and the fix's position variance."""
    return {'sample_time_s': k_sample / PHYSICS_HZ, 'position_enu_m': values[:, :3],
            'truth.position_enu_m': values[:, 3:],
            'fix.position_covariance': np.tile(variance, (len(k_sample), 1))}


def _row_time(item):
    """The sample time of a report item (a row, or a GNSS row with its truth)."""
    row = item[0] if isinstance(item, tuple) else item
    return row.get('sample_time_s')


def _biases(imu):
    if imu is None:
        return None
    return {'accel_mps2': list(imu.biases.accel_mps2), 'gyro_radps': list(imu.biases.gyro_radps)}


_GNSS_REPORT_KEYS = ('sample_time_s', 'fix_type', 'position_enu_m', 'sigma_enu_m',
                     'satellites_used', 'pdop')


def _gnss_report(row):
    """The few keys of a GNSS row the report needs (keeps memory small in long runs)."""
    return {k: row[k] for k in _GNSS_REPORT_KEYS if k in row}


def _one_line(error):
    if error is None:
        return None
    if isinstance(error, WriterProcessError):
        return error.reason
    if isinstance(error, OSError) and error.strerror:
        where = f'{error.filename}: ' if error.filename else ''
        return f'{where}{error.strerror}'
    return str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__


def record(request: RecordRequest, stop: StopSignals = None, writers=None):
    """Run one recording; returns (the episode dict, also in episode.json;
    its summary as text).  ``stop``: the run's stop request, installed by
    the caller as early as it can (else here).  Raises :class:`RecordingStopped`
    when a signal arrives before the run starts (the folder is as it was),
    :class:`acres_sim.record.output.OutputError` for a folder it must not
    use, :class:`RecordingFailed` when a writer fails (episode.json says what
    is whole), OSError / WriterProcessError when the writers cannot start (the
    previous recording is back in place).  ``writers``: the row and bag
    writers started ahead (:func:`acres_sim.record.child.prestart_writers`),
    for the run to take; the caller discards those it did not."""
    with contextlib.nullcontext(stop) if stop is not None else StopSignals() as stop:
        # The report process first: it imports matplotlib, the most of any writer,
        # while the run is set up and the other writers start, then while it goes on.
        reporter = ReportProcess() if request.report else None
        try:
            recording = _Recording(request, stop)
            recording.reporter = reporter
            recording.prestarted = dict(writers or {})
            folder = OutputFolder(request.out)
            folder.open(recording.files())
        except BaseException:
            if reporter is not None:
                reporter.discard()
            raise
        try:
            _start(recording, folder, stop)
            episode = recording.run()
        finally:
            if reporter is not None:     # it has drawn, or draws nothing now
                reporter.close()
            folder.close()
    return episode, recording.summary_text


def _start(recording, folder, stop):
    """Start the writers in place of the previous recording, which is kept
    until they run (and put back if they do not, or a signal came first)."""
    if stop.is_set():
        raise RecordingStopped(f'stopped by {stop.name} before the recording started; '
                               f'{folder.out} is as it was')
    try:
        folder.replace()
        recording.start()
        if stop.is_set():
            raise RecordingStopped(f'stopped by {stop.name} before the recording started; '
                                   f'{folder.out} is as it was')
    except BaseException:
        for writer in [recording.bag, recording.rows] + [
                file for agent in recording.agents for file in agent.files.values()]:
            if writer is not None:
                try:
                    writer.close()
                except Exception:  # noqa: BLE001 - it failed to start anyway
                    pass
        if recording.reporter is not None:       # it has drawn nothing: no need to wait
            recording.reporter.discard()
        folder.restore()
        raise
    folder.keep()
