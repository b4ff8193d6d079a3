"""Physics, route following and the sensor models of a rig, advanced a block of
physics steps at a time in one numba kernel per vehicle (no Python per step).

Per physics step k (t = k / 120) and vehicle, in this order -- the data path of
one physics step and the order of the spec's sensor sections:

1. the truth of the step: chassis origin p, rotation R, CoM velocity v, angular
   velocity w, CoM position p_c (:func:`acres_sim.core.physics.truth_from_state`),
   with the vehicle's vibration added when it has any
   (:func:`acres_sim.core.physics.shaken_truth`);
2. the IMU's difference step, then a sample when its Due time has come, or
   at the first step with two differences if a Due came before them
   (:func:`acres_sim.core.imu.imu_takes_sample`; nothing drawn before);
3. the INS epoch when due (the first epoch reports gravity only);
4. the truth record when due (truth.jsonl, at the INS rate);
5. the antenna position when the GNSS receiver is due (its epochs run right
   after the block, :meth:`GnssReceiver.epoch_records`, as the receiver needs
   nothing but the antenna track);
6. the state of the step as it is held (p, the state's own quaternion, v, w):
   the live sim node publishes it to the sensor nodes, which rebuild R and p_c
   from it with the same functions, bit for bit;
7. the command -- the route follower's (its laps of a closed route and its
   stop, :mod:`acres_sim.core.pursuit`), or an external one (cmd_vel) where
   ``command[0]`` is set -- and, unless k is the last step, the physics step.

Each rate limiter is the spec's Due (``t + 1e-8 >= t_due``, then
``t_due += 1 / f``) in float64, exactly as :class:`acres_sim.core.schedule.Due`.
The kernels are the models' own (:func:`imu_difference_step`,
:func:`imu_sample_values`, the INS epoch, :func:`pursuit_command`,
:func:`step_one`), so a rig run here gives the numbers the per-sample model
classes give.  The delay line is left to the caller (it only shifts times).

The kernel takes its inputs as named records, one per concern: the vehicle
(:class:`VehicleState`), the route follower (:class:`RouteFollowState`), each
sensor (:class:`ImuState`, :class:`InsState`, :class:`GnssState`), the Due
schedule (:class:`Schedule`) and the room for the results
(:class:`BlockOutputs`).  :class:`RigSimulation` builds them from the model
objects before each block, owns the other arrays and hands out one
:class:`Block` of results per call; ``models only`` in
``bench/bench_record.py`` is this class alone.  Vehicle resets are not part
of a block run.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.event_clock import EventTimes, VIEW_SIZE, advance_events, due_at_time
from acres_sim.core.events import (TELEPORT, EventEffects, imu_faults, no_events, stopped,
                                   teleport_pose)
from acres_sim.core.frames import point_at_lever_arm
from acres_sim.core.geo.epoch import YearTable, decimal_year_kernel, year_table
from acres_sim.core.geo.site import FRAMES, SiteParams
from acres_sim.core.geo.utm import central_meridian_rad
from acres_sim.core.imu import MEMORY_SIZE as IMU_MEMORY_SIZE
from acres_sim.core.imu import (PHYSICS_DT_S, imu_difference_step, imu_sample_values,
                               imu_takes_sample)
from acres_sim.core.ins import MEMORY_SIZE as INS_MEMORY_SIZE
from acres_sim.core.ins import (N_SIGMAS, RESULT_SIZE, VALUES_PER_EPOCH, ins_epoch_kernel,
                                ins_epoch_values)
from acres_sim.core.jit import njit
from acres_sim.core.physics import (DT, S_PX, S_PZ, S_QX, S_VX, S_VZ, S_WX, S_WZ, place,
                                    step_one, shaken_truth, truth_from_state, vibrates)
from acres_sim.core.pursuit import pursuit_command
from acres_sim.core.quaternion import quat_from_matrix
from acres_sim.core.due import due_at
from acres_sim.core.terrain import TerrainField
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q, T_V, T_W, TRUTH_SIZE
from acres_sim.core.zones import Zones

__all__ = ['Block', 'BlockOutputs', 'EventState', 'GnssState', 'ImuState', 'InsState',
           'RigSimulation', 'RouteFollowState', 'Schedule', 'TRUTH_SIZE', 'VehicleState',
           'run_vehicle_block']

# Due schedules, one row per vehicle: next due time of each sensor.
DUE_IMU, DUE_INS, DUE_GNSS, DUE_TRUTH = range(4)


# The kernel's inputs, one record per concern; arrays are advanced in place.

class VehicleState(NamedTuple):
    """A vehicle's physics and how it is driven."""

    state: np.ndarray      # the physics state row (physics.S_*), advanced in place
    params: np.ndarray     # its parameter row (physics.params_row)
    com: np.ndarray        # the CoM offset from the chassis origin (body FLU)
    command: np.ndarray    # [1.0 to use it, speed, yaw rate]; else the route follower drives
    field: TerrainField    # the terrain it rides on (read only on one: physics.P_RIDE)


class RouteFollowState(NamedTuple):
    """The route follower: the arguments of :func:`acres_sim.core.pursuit.pursuit_command`
    after the truth (``RouteFollower.arrays``, then its state, updated in place)."""

    route_x: np.ndarray
    route_y: np.ndarray
    route_s: np.ndarray
    profile: np.ndarray
    params: np.ndarray
    state: np.ndarray


class ImuState(NamedTuple):
    """The IMU model's own arrays (``ImuModel.kernel_arrays``); ``on`` False: no IMU."""

    on: bool
    lever: np.ndarray      # lever arm from the chassis origin
    memory: np.ndarray     # the differences (imu.MEMORY_SIZE)
    bias: np.ndarray       # the episode's 6 biases
    sigma: np.ndarray      # (sigma_a, sigma_g) of the white noise
    rng: np.ndarray        # the stream's state
    last_step: np.ndarray  # [step of the previous difference step, or -1]


class InsState(NamedTuple):
    """The INS model's own arrays and constants (``InsModel.kernel_arrays``) and
    the run's decimal-year table; ``on`` False: no INS."""

    on: bool
    lever: np.ndarray      # lever arm of the INS point
    memory: np.ndarray     # the Gauss-Markov states and the previous velocity
    sigma: np.ndarray      # the sigmas and tau (ins.N_SIGMAS)
    rng: np.ndarray        # the stream's state
    clock: np.ndarray      # [time of the previous epoch or -1, 1.0 if the next is gravity only]
    values: np.ndarray     # room for an epoch's Gaussians (ins.VALUES_PER_EPOCH)
    years: YearTable       # the decimal-year table of the epochs
    site: SiteParams       # the georeference of the fix and the UTM odometry
    frame: int             # the fix's frame code (geo.site.FRAMES)
    lam_c: float           # the UTM zone's central meridian [rad]


class GnssState(NamedTuple):
    """Where the GNSS antenna sits; ``on`` False: no receiver."""

    on: bool
    antenna_arm: np.ndarray  # lever arm of the antenna from the chassis origin


class EventState(NamedTuple):
    """The vehicle's fault events: when each is active (its clock and the run's
    zones), what it does, and the clock's state, advanced in place."""

    times: EventTimes
    zones: Zones
    effects: EventEffects
    state: np.ndarray      # (events, event_clock.STATE_SIZE)


class Schedule(NamedTuple):
    """The spec's Due of each sensor (rows DUE_IMU, DUE_INS, DUE_GNSS, DUE_TRUTH)."""

    due: np.ndarray        # the next due time of each, advanced in place
    period: np.ndarray     # 1 / rate of each


class BlockOutputs(NamedTuple):
    """Room for a block's results: ``*_k`` the step of each sample, and the values."""

    imu_k: np.ndarray      # (n,) int64
    imu: np.ndarray        # (n, 6): specific force, angular rate, body FLU, unrounded
    ins_k: np.ndarray
    ins: np.ndarray        # (n, ins.RESULT_SIZE): the INS epoch results
    truth_k: np.ndarray
    truth: np.ndarray      # (n, TRUTH_SIZE): chassis p, q, v, w
    gnss_k: np.ndarray
    gnss_antenna: np.ndarray  # (n, 3): true antenna position, grid ENU
    states: np.ndarray     # (steps, TRUTH_SIZE): every step's p, state quaternion, v, w
    imu_ev: np.ndarray     # (n, events, VIEW_SIZE): the events' views at each sample
    ins_ev: np.ndarray
    truth_ev: np.ndarray
    gnss_ev: np.ndarray


@njit(cache=True)
def _follow(p, R, v, k, route):
    """The route follower's (speed, yaw rate) at step ``k``."""
    return pursuit_command(p, R, v, k, route.route_x, route.route_y, route.route_s,
                           route.profile, route.params, route.state)


@njit(cache=True)
def _teleport(x, vehicle, events, t):
    """Carry out a teleport event that starts at ``t`` (before the clock takes
    the sample, so that the clock sees the new pose); returns whether one did."""
    moved = False
    for i in range(events.effects.kind.shape[0]):
        if events.effects.kind[i] == TELEPORT and due_at_time(events.times, events.state, i, t):
            x0, y0, yaw = teleport_pose(events.effects, i)
            place(x, vehicle.params, vehicle.field, x0, y0, yaw)
            moved = True
    return moved


@njit(cache=True)
def _put_row(row, p, q, v, w):
    """A truth record (core.truth's T_* layout): p, q, v, w."""
    for j in range(3):
        row[T_P + j], row[T_V + j], row[T_W + j] = p[j], v[j], w[j]
    for j in range(4):
        row[T_Q + j] = q[j]


@njit(cache=True)
def _view(events, room, n):
    """The events' views at this sample into ``room[n]``."""
    for i in range(events.state.shape[0]):
        for j in range(VIEW_SIZE):
            room[n, i, j] = events.state[i, j]


@njit(cache=True)
def run_vehicle_block(k0, k1, k_last, vehicle, route, imu, ins, gnss, events, schedule, out):
    """Steps k0 .. k1-1 of one vehicle (see the module docstring); k_last is the
    run's last step (no physics step after it).  ``vehicle`` (a
    :class:`VehicleState`), ``route`` (:class:`RouteFollowState`), ``imu``,
    ``ins``, ``gnss`` (their ``*State``), ``events`` (:class:`EventState`) and
    ``schedule`` are advanced in place; ``out`` (:class:`BlockOutputs`) gets
    the samples with the events' views at each, ``out.states[k - k0]`` the
    state of every step (the quaternion the state's own).  Returns the number
    of IMU samples, INS epochs, truth records and GNSS antenna positions.

    Events, per step: a teleport due at the step puts the vehicle at its pose
    first (the IMU differences restart, the next INS epoch reports gravity
    only); the event clock then takes the step's chassis origin; an active
    stop commands the vehicle to stand; the IMU faults change its samples
    (:mod:`acres_sim.core.events`)."""
    x, com = vehicle.state, vehicle.com
    due, period = schedule.due, schedule.period
    n_imu = n_ins = n_truth = n_gnss = 0
    shaken = vibrates(vehicle.params)
    has_events = events.state.shape[0] > 0     # none: the event code is never asked
    view = events.state[:, :VIEW_SIZE]
    for k in range(k0, k1):
        t = k / PHYSICS_HZ
        teleported = has_events and _teleport(x, vehicle, events, t)
        R, p_c = truth_from_state(x, com)
        p = x[S_PX:S_PZ + 1]
        v = x[S_VX:S_VZ + 1]
        w = x[S_WX:S_WZ + 1]
        if shaken:
            p, p_c, v = shaken_truth(x, vehicle.params, com, k, R, p, v)
        if has_events:
            advance_events(events.times, events.zones, t, p[0], p[1], p[2], events.state)
        if imu.on:
            restart = imu.last_step[0] < 0 or k != imu.last_step[0] + 1 or teleported
            imu.last_step[0] = k
            imu_difference_step(p, R, v, w, p_c, imu.lever, restart, PHYSICS_DT_S, imu.memory)
            if imu_takes_sample(imu.memory, due_at(due, DUE_IMU, period[DUE_IMU], t)):
                imu_sample_values(imu.memory, imu.bias, imu.sigma[0], imu.sigma[1], imu.rng,
                                  out.imu[n_imu])
                if has_events:
                    imu_faults(events.effects, view, t, out.imu[n_imu])
                    _view(events, out.imu_ev, n_imu)
                out.imu_k[n_imu] = k
                n_imu += 1
        if teleported:
            ins.clock[1] = 1.0
        if ins.on and due_at(due, DUE_INS, period[DUE_INS], t):
            clock = ins.clock
            first = clock[0] < 0.0
            dt = period[DUE_INS] if first else t - clock[0]
            gravity_only = first or clock[1] > 0.5
            clock[0], clock[1] = t, 0.0
            ins_epoch_values(ins.rng, ins.values)
            ins_epoch_kernel(p, R, v, w, p_c, ins.lever, first, gravity_only, dt, ins.sigma,
                             ins.values, ins.memory, decimal_year_kernel(t, ins.years), ins.site,
                             ins.frame, ins.lam_c, out.ins[n_ins])
            if has_events:
                _view(events, out.ins_ev, n_ins)
            out.ins_k[n_ins] = k
            n_ins += 1
        if due_at(due, DUE_TRUTH, period[DUE_TRUTH], t):
            _put_row(out.truth[n_truth], p, quat_from_matrix(R), v, w)
            if has_events:
                _view(events, out.truth_ev, n_truth)
            out.truth_k[n_truth] = k
            n_truth += 1
        if gnss.on and due_at(due, DUE_GNSS, period[DUE_GNSS], t):
            out.gnss_antenna[n_gnss] = point_at_lever_arm(p, R, gnss.antenna_arm)
            if has_events:
                _view(events, out.gnss_ev, n_gnss)
            out.gnss_k[n_gnss] = k
            n_gnss += 1
        _put_row(out.states[k - k0], p, x[S_QX:S_QX + 4], v, w)
        if has_events and stopped(events.effects, view):
            speed, yaw_rate = 0.0, 0.0
        elif vehicle.command[0] > 0.5:
            speed, yaw_rate = vehicle.command[1], vehicle.command[2]
        else:
            speed, yaw_rate = _follow(p, R, v, k, route)
        if k < k_last:
            step_one(x, speed, yaw_rate, vehicle.params, vehicle.field, DT)
    return n_imu, n_ins, n_truth, n_gnss


class Block(NamedTuple):
    """One vehicle's results over a block: step indices and values of each output."""

    imu_k: np.ndarray          # (n,) int64
    imu: np.ndarray            # (n, 6): specific force, angular rate, body FLU, unrounded
    ins_k: np.ndarray
    ins: np.ndarray            # (n, ins.RESULT_SIZE): the INS epoch results
    truth_k: np.ndarray
    truth: np.ndarray          # (n, TRUTH_SIZE): chassis p, q, v, w
    gnss_k: np.ndarray
    gnss_antenna: np.ndarray   # (n, 3): true antenna position, grid ENU
    gnss: np.ndarray           # (n, receiver.RECORD_SIZE): the receiver's epoch records
    states: np.ndarray         # (steps, TRUTH_SIZE): every step's p, state quaternion, v, w
    imu_ev: np.ndarray         # (n, events, VIEW_SIZE): the events' views at each sample
    ins_ev: np.ndarray
    truth_ev: np.ndarray
    gnss_ev: np.ndarray


def _outputs(size, n_events) -> BlockOutputs:
    """Room for the results of a block of ``size`` steps with ``n_events`` events."""
    def room(width):
        return np.zeros(size, dtype=np.int64), np.zeros((size, width))

    def views():
        return np.zeros((size if n_events else 0, n_events, VIEW_SIZE))
    return BlockOutputs(*room(6), *room(RESULT_SIZE), *room(TRUTH_SIZE), *room(3),
                        np.empty((size, TRUTH_SIZE)), views(), views(), views(), views())


class RigSimulation:
    """The vehicles of a :class:`acres_sim.core.physics.Fleet`, each with its route
    follower and sensor models (None for a sensor that is off), run for
    ``steps`` physics steps (steps + 1 samples of the truth, t = 0 .. steps / 120).

    ``rates``: the Due rates of 'imu', 'ins', 'gnss' and 'truth' [Hz] (those of
    the IMU and INS must be their models' ``params.hz``); ``antenna_arm``: the
    antenna's lever arm from the chassis origin; ``site``: the georeference
    (a SiteGeoreference) of the INS.  :meth:`advance` runs the next ``n`` steps
    and returns one :class:`Block` per vehicle; ``step`` is the next step to
    run.  The model objects hold the state: the kernel advances their own
    arrays, and their bookkeeping (last IMU step, restart count, last INS
    epoch) is read before and written after every block, so a model may be
    reset between blocks, or sampled on by its own methods after them.  A
    vehicle reset (:meth:`Fleet.reset`) is not part of a block run: pending,
    it is an error.  ``commands[i]`` = (1, speed, yaw rate) drives vehicle i
    by that command instead of its route follower (cmd_vel); (0, ...) gives
    it back to the follower.  Runs are for less than three years (the decimal-year
    table of the INS epochs).  ``events``: one
    :class:`acres_sim.core.events.VehicleEvents` per vehicle (None: none), whose
    clocks the blocks advance.
    """

    def __init__(self, fleet, followers, imus, inses, gnsses, antenna_arm, rates, steps,
                 site, events=None):
        self.fleet, self.followers = fleet, list(followers)
        self.imus, self.inses, self.gnsses = list(imus), list(inses), list(gnsses)
        self.events = ([no_events() for _ in self.followers] if events is None else
                       [no_events() if e is None else e for e in events])
        self.antenna_arm = np.ascontiguousarray(antenna_arm, dtype=np.float64)
        self.steps = int(steps)
        self.step = 0
        self._years = year_table(site.start_utc, years=max(2, math.ceil(steps / PHYSICS_HZ
                                                                           / 3.15e7) + 2))
        n = len(self.followers)
        for name, models in (('imu', self.imus), ('ins', self.inses)):
            for model in models:
                if model is not None and float(model.params.hz) != float(rates[name]):
                    raise ValueError(f'{name} rate {rates[name]!r} Hz differs from its '
                                     f'model\'s {model.params.hz!r} Hz')
        self._period = np.array([1.0 / rates[name] for name in ('imu', 'ins', 'gnss', 'truth')])
        self._due = np.zeros((n, 4))
        self.commands = np.zeros((n, 3))
        self._imu_last = np.zeros((n, 1), dtype=np.int64)   # filled from the models per block
        self._ins_clock = np.zeros((n, 2))
        self._ins_values = np.zeros(VALUES_PER_EPOCH)
        self._antenna = GnssState(True, self.antenna_arm)
        # the records of a sensor that is off (their arrays are never read then)
        self._no_imu = (np.zeros(3), np.zeros(IMU_MEMORY_SIZE), np.zeros(6), np.zeros(2),
                        np.zeros(2, dtype=np.uint64))
        self._no_ins = (np.zeros(3), np.zeros(INS_MEMORY_SIZE), np.zeros(N_SIGMAS),
                        np.zeros(2, dtype=np.uint64), site.params, FRAMES['nad83_2011'],
                        central_meridian_rad(16))
        self._no_gnss = GnssState(False, self.antenna_arm)

    def advance(self, n):
        """Run the next ``n`` steps (fewer at the end); one :class:`Block` per vehicle."""
        if self.fleet.reset_pending:
            raise ValueError('a vehicle reset is pending: block runs do not take resets')
        k0 = self.step
        k1 = min(k0 + int(n), self.steps + 1)
        size = max(k1 - k0, 0)
        self._load_models(k0, k1)
        blocks = []
        for i, follower in enumerate(self.followers):
            gnss, events = self.gnsses[i], self.events[i]
            out = _outputs(size, len(events))
            counts = run_vehicle_block(
                k0, k1, self.steps,
                VehicleState(self.fleet.states[i], self.fleet.params[i], self.fleet.com[i],
                             self.commands[i], self.fleet.field),
                RouteFollowState(*follower.arrays, follower.state),
                self._imu_state(i), self._ins_state(i),
                self._no_gnss if gnss is None else self._antenna,
                EventState(events.times, events.zones, events.effects, events.state),
                Schedule(self._due[i], self._period), out)
            n_imu, n_ins, n_truth, n_gnss = counts
            gnss_k, gnss_v = out.gnss_k[:n_gnss], out.gnss_antenna[:n_gnss]
            gnss_ev = out.gnss_ev[:n_gnss] if len(events) else None
            records = (gnss.epoch_records(gnss_k / PHYSICS_HZ, gnss_v, gnss_ev)
                       if gnss is not None else np.zeros((0, 0)))
            blocks.append(Block(out.imu_k[:n_imu], out.imu[:n_imu], out.ins_k[:n_ins],
                                out.ins[:n_ins], out.truth_k[:n_truth], out.truth[:n_truth],
                                gnss_k, gnss_v, records, out.states, out.imu_ev[:n_imu],
                                out.ins_ev[:n_ins], out.truth_ev[:n_truth], out.gnss_ev[:n_gnss]))
        self._sync_models(k1)
        self.step = k1
        return blocks

    def _imu_state(self, i):
        """The IMU record of vehicle ``i`` (the model's own arrays)."""
        imu = self.imus[i]
        arrays = self._no_imu if imu is None else imu.kernel_arrays()
        return ImuState(imu is not None, *arrays, self._imu_last[i])

    def _ins_state(self, i):
        """The INS record of vehicle ``i`` (the model's own arrays and constants)."""
        ins = self.inses[i]
        lever, memory, sigma, rng, site, frame, lam_c = (
            self._no_ins if ins is None else ins.kernel_arrays())
        return InsState(ins is not None, lever, memory, sigma, rng, self._ins_clock[i],
                        self._ins_values, self._years, site, frame, lam_c)

    def _load_models(self, k0, k1):
        """The models' bookkeeping into the kernel's arrays (a restart of the IMU
        differences at k0 is counted as ImuModel.physics_step counts it)."""
        for i, imu in enumerate(self.imus):
            last = -1 if imu is None or imu.last_step is None else imu.last_step
            self._imu_last[i, 0] = last
            if imu is not None and k1 > k0 and (last < 0 or k0 != last + 1):
                imu.restarts += 1
        for i, ins in enumerate(self.inses):
            last_t, restart = (None, True) if ins is None else ins.clock
            self._ins_clock[i] = (-1.0 if last_t is None else last_t, float(restart))

    def _sync_models(self, k1):
        """The kernel's bookkeeping back into the model objects."""
        self.fleet.step_index = min(k1, self.steps)
        for i, ins in enumerate(self.inses):
            if ins is not None and self._ins_clock[i, 0] >= 0.0:
                ins.clock = float(self._ins_clock[i, 0]), bool(self._ins_clock[i, 1])
        for i, imu in enumerate(self.imus):
            if imu is not None and self._imu_last[i, 0] >= 0:
                imu.last_step = int(self._imu_last[i, 0])
