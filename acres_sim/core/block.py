"""Physics, route following and the sensor models of a rig, advanced a block of
physics steps at a time in one numba kernel per vehicle (no Python per step).

Per physics step k (t = k / 120) and vehicle, in this order -- the data path of
DESIGN §3 and the order of the spec's sensor sections:

1. the truth of the step: chassis origin p, rotation R, CoM velocity v, angular
   velocity w, CoM position p_c (:func:`acres_sim.core.physics.truth_from_state`);
2. the IMU's difference step, then, when its Due time has come, a sample (none,
   and nothing drawn, before two differences exist);
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

:class:`RigSimulation` owns the arrays and hands out one :class:`Block` of
results per call; ``models only`` in ``bench/bench_record.py`` is this class
alone.  Vehicle resets are not part of a block run.
"""

import math
from typing import NamedTuple

from numba import njit
import numpy as np

from acres_sim.core.frames import point_at_lever_arm
from acres_sim.core.geo.epoch import decimal_year_kernel, year_table
from acres_sim.core.geo.site import FRAMES
from acres_sim.core.geo.utm import central_meridian_rad
from acres_sim.core.imu import MEMORY_SIZE as IMU_MEMORY_SIZE
from acres_sim.core.imu import N_DIFF, PHYSICS_DT_S, imu_difference_step, imu_sample_values
from acres_sim.core.ins import MEMORY_SIZE as INS_MEMORY_SIZE
from acres_sim.core.ins import (N_SIGMAS, RESULT_SIZE, VALUES_PER_EPOCH, ins_epoch_kernel,
                                ins_epoch_values)
from acres_sim.core.physics import (DT, S_PX, S_PZ, S_QX, S_VX, S_VZ, S_WX, S_WZ, step_one,
                                    truth_from_state)
from acres_sim.core.pursuit import pursuit_command
from acres_sim.core.quaternion import quat_from_matrix
from acres_sim.core.schedule import DUE_TOLERANCE_S
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q, T_V, T_W, TRUTH_SIZE

__all__ = ['Block', 'RigSimulation', 'TRUTH_SIZE', 'run_vehicle_block']

# Due schedules, one row per vehicle: next due time of each sensor.
DUE_IMU, DUE_INS, DUE_GNSS, DUE_TRUTH = range(4)


@njit(cache=True)
def _due(due, i, period, t):
    """The spec's Due for sensor ``i`` (advances its time when it answers True)."""
    if t + DUE_TOLERANCE_S >= due[i]:
        due[i] += period[i]
        return True
    return False


@njit(cache=True)
def run_vehicle_block(k0, k1, k_last, x, vp, com, route_x, route_y, route_s, profile,
                      follow_params, follow_state,
                      imu_on, imu_lever, imu_memory, imu_bias, imu_sigma, imu_rng, imu_last,
                      ins_on, ins_lever, ins_memory, ins_sigma, ins_rng, ins_clock, ins_g,
                      years, site, frame, lam_c,
                      gnss_on, antenna_arm, due, period, command,
                      imu_k, imu_out, ins_k, ins_out, truth_k, truth_out, gnss_k, gnss_out,
                      state_out):
    """Steps k0 .. k1-1 of one vehicle (see the module docstring); k_last is the
    run's last step (no physics step after it).  Returns the number of IMU
    samples, INS epochs, truth records and GNSS antenna positions written into
    the ``*_k`` (step index) and ``*_out`` arrays.

    ``imu_last[0]``: the step of the previous IMU difference step (-1 none);
    ``ins_clock``: [time of the previous epoch (-1 none), 1.0 if the next
    epoch reports gravity only]; ``command``: [1.0 to use it, speed, yaw
    rate], else the route follower drives; ``state_out[k - k0]``: the state of
    every step (:data:`TRUTH_SIZE` values, the quaternion the state's own)."""
    n_imu = n_ins = n_truth = n_gnss = 0
    for k in range(k0, k1):
        t = k / PHYSICS_HZ
        R, p_c = truth_from_state(x, com)
        p = x[S_PX:S_PZ + 1]
        v = x[S_VX:S_VZ + 1]
        w = x[S_WX:S_WZ + 1]
        if imu_on:
            restart = imu_last[0] < 0 or k != imu_last[0] + 1
            imu_last[0] = k
            imu_difference_step(p, R, v, w, p_c, imu_lever, restart, PHYSICS_DT_S, imu_memory)
            if _due(due, DUE_IMU, period, t) and imu_memory[N_DIFF] >= 2.0:
                imu_sample_values(imu_memory, imu_bias, imu_sigma[0], imu_sigma[1], imu_rng,
                                  imu_out[n_imu])
                imu_k[n_imu] = k
                n_imu += 1
        if ins_on and _due(due, DUE_INS, period, t):
            first = ins_clock[0] < 0.0
            dt = period[DUE_INS] if first else t - ins_clock[0]
            gravity_only = first or ins_clock[1] > 0.5
            ins_clock[0], ins_clock[1] = t, 0.0
            ins_epoch_values(ins_rng, ins_g)
            ins_epoch_kernel(p, R, v, w, p_c, ins_lever, first, gravity_only, dt, ins_sigma,
                             ins_g, ins_memory, decimal_year_kernel(t, years), site, frame,
                             lam_c, ins_out[n_ins])
            ins_k[n_ins] = k
            n_ins += 1
        if _due(due, DUE_TRUTH, period, t):
            out = truth_out[n_truth]
            q = quat_from_matrix(R)
            for j in range(3):
                out[T_P + j], out[T_V + j], out[T_W + j] = p[j], v[j], w[j]
            for j in range(4):
                out[T_Q + j] = q[j]
            truth_k[n_truth] = k
            n_truth += 1
        if gnss_on and _due(due, DUE_GNSS, period, t):
            gnss_out[n_gnss] = point_at_lever_arm(p, R, antenna_arm)
            gnss_k[n_gnss] = k
            n_gnss += 1
        row = state_out[k - k0]
        for j in range(3):
            row[T_P + j], row[T_V + j], row[T_W + j] = p[j], v[j], w[j]
        for j in range(4):
            row[T_Q + j] = x[S_QX + j]
        if command[0] > 0.5:
            speed, yaw_rate = command[1], command[2]
        else:
            speed, yaw_rate = pursuit_command(p, R, v, k, route_x, route_y, route_s, profile,
                                              follow_params, follow_state)
        if k < k_last:
            step_one(x, speed, yaw_rate, vp, DT)
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
    table of the INS epochs).
    """

    def __init__(self, fleet, followers, imus, inses, gnsses, antenna_arm, rates, steps,
                 site):
        self.fleet, self.followers = fleet, list(followers)
        self.imus, self.inses, self.gnsses = list(imus), list(inses), list(gnsses)
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
        self._ins_g = np.zeros(VALUES_PER_EPOCH)
        # the kernel's arguments of a sensor that is off (never read then)
        self._no_imu = (False, np.zeros(3), np.zeros(IMU_MEMORY_SIZE), np.zeros(6), np.zeros(2),
                        np.zeros(2, dtype=np.uint64))
        self._no_ins = (False, np.zeros(3), np.zeros(INS_MEMORY_SIZE), np.zeros(N_SIGMAS),
                        np.zeros(2, dtype=np.uint64))
        self._no_site = (site.params, FRAMES['nad83_2011'], central_meridian_rad(16))

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
            imu, ins, gnss = self.imus[i], self.inses[i], self.gnsses[i]
            out = {name: (np.zeros(size, dtype=np.int64), np.zeros((size, width)))
                   for name, width in (('imu', 6), ('ins', RESULT_SIZE),
                                       ('truth', TRUTH_SIZE), ('gnss', 3))}
            states = np.empty((size, TRUTH_SIZE))
            imu_args = (True, *imu.kernel_arrays()) if imu is not None else self._no_imu
            if ins is not None:
                *ins_arrays, site_params, frame, lam_c = ins.kernel_arrays()
                ins_args, site_args = (True, *ins_arrays), (site_params, frame, lam_c)
            else:
                ins_args, site_args = self._no_ins, self._no_site
            counts = run_vehicle_block(
                k0, k1, self.steps, self.fleet.states[i], self.fleet.params[i], self.fleet.com[i],
                *follower.arrays, follower.state,
                *imu_args, self._imu_last[i], *ins_args, self._ins_clock[i], self._ins_g,
                self._years, *site_args, gnss is not None, self.antenna_arm,
                self._due[i], self._period, self.commands[i],
                *out['imu'], *out['ins'], *out['truth'], *out['gnss'], states)
            (imu_k, imu_v), (ins_k, ins_v), (truth_k, truth_v), (gnss_k, gnss_v) = (
                (out[name][0][:c], out[name][1][:c])
                for name, c in zip(('imu', 'ins', 'truth', 'gnss'), counts))
            records = (gnss.epoch_records(gnss_k / PHYSICS_HZ, gnss_v) if gnss is not None
                       else np.zeros((0, 0)))
            blocks.append(Block(imu_k, imu_v, ins_k, ins_v, truth_k, truth_v, gnss_k, gnss_v,
                                records, states))
        self._sync_models(k1)
        self.step = k1
        return blocks

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
