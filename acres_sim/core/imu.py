"""The IMU: specific force and angular rate at the IMU point (spec: IMU).

At every physics step the model differences the velocity of the IMU point over
that one step (dt = 1/120 s) and turns it into a body-axis specific force:

    v_i = v + w x (p + R r_i - p_c)              velocity of the IMU point, world
    a_k = (v_i,k - v_i,k-1) / dt
    f_k = R_k^T (a_k - g),   g = (0, 0, -9.80665) m/s^2
    w_k = R_k^T w_k

A sample is the mean of the newest two steps plus a constant bias and white
noise.  The two-step mean cancels anything that flips sign every physics step
(a zero at 60 Hz: the parked brake solver's +-0.02 m/s chatter vanishes).  A
sample needs two differences, i.e. three physics steps since the start or since
the last restart.  A restart happens at the first step, on ``truth.reset`` and
on any step that does not follow the previous one (a gap in the truth), so a
pose jump never shows up as an acceleration.

When the first row comes (spec: IMU -- the first row is at the third physics
step, as the mean needs two differences): the caller's Due is asked at every
step as usual, and :func:`imu_takes_sample` decides.  A Due that comes while
fewer than two differences exist is used up but leaves a sample pending; the
first step with two differences then samples once if one is pending (using up
its own Due too, if that comes at the same step).  Below 60 Hz the Due after
t = 0 comes later than the third step, so the pending sample puts the first
row there; at 60 Hz and above the Due comes at the third step anyway and
nothing changes.  Until then nothing is drawn.

Random values from the IMU stream: 6 Gaussians at reset (accelerometer bias
x, y, z, then gyroscope bias x, y, z), then 6 per produced sample (accelerometer
noise x, y, z, then gyroscope noise x, y, z).  With ``noise`` off the biases
and noise are zero but the same values are drawn.

Body axes are FLU throughout, so the spec's FLU() conversion (from Unreal) is
the identity here.  Units: m, s, m/s^2, rad/s.
"""

from typing import NamedTuple, Optional

import numpy as np

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.events import imu_faults, no_effects
from acres_sim.core.jit import njit
from acres_sim.core.rng import Pcg32, pcg32_gaussian

__all__ = ['ImuBiases', 'ImuModel', 'ImuParams', 'imu_difference_step', 'imu_sample_values',
           'imu_takes_sample']

PHYSICS_DT_S = 1.0 / 120.0      # one physics step (spec: Symbols; core.truth.PHYSICS_HZ)

# Layout of the model's memory (one float64 array, index by index):
V_PREV = 0      # 0:3   v_i at the previous physics step, world [m/s]
F_NEW = 3       # 3:6   f of the newest difference, body FLU [m/s^2]
F_OLD = 6       # 6:9   f of the difference before it
W_NEW = 9       # 9:12  w_b of the newest step, body FLU [rad/s]
W_OLD = 12      # 12:15 w_b of the step before it
N_DIFF = 15     # 15    number of differences since the last restart, capped at 2
PENDING = 16    # 16    1.0: a Due came before two differences existed, a sample is owed
MEMORY_SIZE = 17

VALUES_AT_RESET = 6
VALUES_PER_SAMPLE = 6


class ImuParams(NamedTuple):
    """The IMU's parameters (config keys imu.*; defaults of the spec's table)."""

    hz: float                 # sample rate [Hz] (used by the caller's Due)
    accel_std_mps2: float     # white noise of the specific force, each axis and sample
    gyro_std_radps: float     # white noise of the angular rate, each axis and sample
    accel_bias_mps2: float    # standard deviation of the constant accelerometer bias
    gyro_bias_radps: float    # standard deviation of the constant gyroscope bias
    lever_arm_m: np.ndarray   # IMU point from the chassis origin, body FLU [m], (3,)
    noise: bool               # False: biases and noise are zero (values still drawn)


class ImuBiases(NamedTuple):
    """The episode's constant biases, body FLU (episode.json's imu_bias_flu)."""

    accel_mps2: tuple
    gyro_radps: tuple


@njit(cache=True)
def imu_difference_step(p, R, v, w, p_c, r_i, restart, dt, memory):
    """Advance the memory by one physics step of the truth (p, R, v, w, p_c).

    Computes the IMU point's velocity; unless ``restart`` it also forms the
    specific force and body rate of this step and shifts the two-step history.
    A restart keeps only the velocity and clears the difference count.
    """
    # lever from the centre of mass to the IMU point, world axes
    d0 = p[0] + R[0, 0] * r_i[0] + R[0, 1] * r_i[1] + R[0, 2] * r_i[2] - p_c[0]
    d1 = p[1] + R[1, 0] * r_i[0] + R[1, 1] * r_i[1] + R[1, 2] * r_i[2] - p_c[1]
    d2 = p[2] + R[2, 0] * r_i[0] + R[2, 1] * r_i[1] + R[2, 2] * r_i[2] - p_c[2]
    vi0 = v[0] + w[1] * d2 - w[2] * d1
    vi1 = v[1] + w[2] * d0 - w[0] * d2
    vi2 = v[2] + w[0] * d1 - w[1] * d0
    if restart:
        memory[N_DIFF] = 0.0
    else:
        # a - g with g = (0, 0, -G): the up component gains +G
        a0 = (vi0 - memory[V_PREV]) / dt
        a1 = (vi1 - memory[V_PREV + 1]) / dt
        a2 = (vi2 - memory[V_PREV + 2]) / dt + STANDARD_GRAVITY_MPS2
        for j in range(3):
            memory[F_OLD + j] = memory[F_NEW + j]
            memory[W_OLD + j] = memory[W_NEW + j]
            # R^T x: column j of R dotted with x
            memory[F_NEW + j] = R[0, j] * a0 + R[1, j] * a1 + R[2, j] * a2
            memory[W_NEW + j] = R[0, j] * w[0] + R[1, j] * w[1] + R[2, j] * w[2]
        memory[N_DIFF] = min(memory[N_DIFF] + 1.0, 2.0)
    memory[V_PREV] = vi0
    memory[V_PREV + 1] = vi1
    memory[V_PREV + 2] = vi2


@njit(cache=True)
def imu_takes_sample(memory, due):
    """Whether the IMU samples at this step (after its difference step), given
    whether its Due came (``due``): see the module docstring.  Keeps the
    pending flag in ``memory``."""
    if memory[N_DIFF] < 2.0:
        if due:
            memory[PENDING] = 1.0
        return False
    if due or memory[PENDING] > 0.5:
        memory[PENDING] = 0.0
        return True
    return False


@njit(cache=True)
def imu_sample_values(memory, bias, sigma_a, sigma_g, rng_state, out):
    """One sample into ``out`` (6: specific force then angular rate, body FLU):
    the mean of the two newest steps, plus ``bias`` (6), plus noise drawn as
    3 accelerometer then 3 gyroscope Gaussians."""
    for j in range(3):
        out[j] = 0.5 * (memory[F_NEW + j] + memory[F_OLD + j]) + bias[j]
    for j in range(3):
        out[3 + j] = 0.5 * (memory[W_NEW + j] + memory[W_OLD + j]) + bias[3 + j]
    for j in range(3):
        out[j] += sigma_a * pcg32_gaussian(rng_state)
    for j in range(3):
        out[3 + j] += sigma_g * pcg32_gaussian(rng_state)


@njit(cache=True)
def _draw_biases(rng_state, sigma_ba, sigma_bg, bias):
    for j in range(3):
        bias[j] = sigma_ba * pcg32_gaussian(rng_state)
    for j in range(3):
        bias[3 + j] = sigma_bg * pcg32_gaussian(rng_state)


class ImuModel:
    """One vehicle's IMU.

    Call :meth:`physics_step` with the truth of every physics step, then
    :meth:`sample` with the answer of the caller's ``Due(params.hz)``.
    ``rng`` is the IMU stream (:func:`acres_sim.core.rng.make_stream` with
    'imu'); the model keeps its starting position and draws from its own copy,
    exposed as ``self.rng``.  ``restarts`` counts the restarts of the
    differences since :meth:`reset` (the first step included).  ``effects``:
    the faults of the vehicle's events (events.EventEffects; None: none), which
    :meth:`sample` applies as the block kernel does.
    """

    def __init__(self, params: ImuParams, rng: Pcg32, effects=None):
        self.params = params
        self.effects = no_effects() if effects is None else effects
        self._rng_start = rng.state.copy()
        self._lever = np.ascontiguousarray(params.lever_arm_m, dtype=np.float64).reshape(3)
        self._memory = np.zeros(MEMORY_SIZE)
        self._bias = np.zeros(6)
        self._out = np.zeros(6)
        noise = bool(params.noise)
        self._sigma_a = float(params.accel_std_mps2) if noise else 0.0
        self._sigma_g = float(params.gyro_std_radps) if noise else 0.0
        self._sigma_ba = float(params.accel_bias_mps2) if noise else 0.0
        self._sigma_bg = float(params.gyro_bias_radps) if noise else 0.0
        self.reset()

    def reset(self) -> None:
        """Back to the start of an episode: the stream from its first value,
        new biases (6 values), no differences."""
        self.rng = Pcg32.from_state(int(self._rng_start[0]), int(self._rng_start[1]))
        _draw_biases(self.rng.state, self._sigma_ba, self._sigma_bg, self._bias)
        self._memory[:] = 0.0
        self._last_step = None
        self.restarts = 0

    @property
    def biases(self) -> ImuBiases:
        """The constant biases of this episode (body FLU)."""
        b = self._bias.tolist()
        return ImuBiases(tuple(b[:3]), tuple(b[3:]))

    def kernel_arrays(self):
        """(lever arm, memory, biases, (sigma_a, sigma_g), stream state): the
        model's own arrays, for batch kernels that advance it in place
        (:mod:`acres_sim.core.block`)."""
        return (self._lever, self._memory, self._bias,
                np.array([self._sigma_a, self._sigma_g]), self.rng.state)

    @property
    def last_step(self):
        """The physics step of the last :meth:`physics_step` (None before one)."""
        return self._last_step

    @last_step.setter
    def last_step(self, step):
        self._last_step = step

    @property
    def ready(self) -> bool:
        """Whether two differences exist, so that :meth:`sample` gives a row."""
        return self._memory[N_DIFF] >= 2.0

    def physics_step(self, truth, restart=False) -> None:
        """Take the truth of one physics step (an :class:`acres_sim.core.truth.Truth`).

        The differences restart on the first step, on ``truth.reset`` or
        ``restart`` (a teleport event) and when ``truth.step`` does not follow
        the previous step.
        """
        step = truth.step
        restart = (restart or truth.reset or self._last_step is None
                   or step != self._last_step + 1)
        if restart:
            self.restarts += 1
        self._last_step = step
        imu_difference_step(truth.p, truth.R, truth.v, truth.w, truth.p_c, self._lever,
                            restart, PHYSICS_DT_S, self._memory)

    def sample(self, t: float, due: bool, view=None) -> Optional[dict]:
        """The imu.jsonl row of the current physics step (time ``t`` [s]) or
        None.  Call it at every step, after :meth:`physics_step`, with
        ``due`` the answer of the caller's ``Due(params.hz)`` at ``t``; it
        samples when :func:`imu_takes_sample` says so, and draws nothing
        otherwise.  ``view``: the events' views at the step (None: no event),
        whose IMU faults change the sample.  The row carries no times: the
        delay line adds them."""
        if not imu_takes_sample(self._memory, bool(due)):
            return None
        out = self._out
        imu_sample_values(self._memory, self._bias, self._sigma_a, self._sigma_g,
                          self.rng.state, out)
        if view is not None and len(view):
            imu_faults(self.effects, view, float(t), out)
        f0, f1, f2, w0, w1, w2 = out.tolist()
        return {'specific_force_flu_mps2': [round(f0, 6), round(f1, 6), round(f2, 6)],
                'angular_velocity_flu_radps': [round(w0, 8), round(w1, 8), round(w2, 8)]}
