"""What the sensors sampled from the vehicle's state share: a barometer,
magnetometer, wheel odometry or radar reads nothing but the state the physics
holds at each step (p, the state's quaternion, v, w; ``core.truth``'s T_*
layout, the rows of ``Block.states``), so one numba kernel per sensor runs it
over a block of steps.  The recorder and the live sim node both call it on
the same blocks, so both get the same numbers.

A sensor module gives:

* ``<Name>Params``: a NamedTuple of numbers and vectors (SI units), with
  ``hz`` and ``noise`` first;
* ``VALUES_PER_SAMPLE``: the Gaussians it draws per sample, the same in every
  state and with ``noise`` off (then its errors are zero, the values drawn);
* ``SAMPLE_SIZE`` (floats per sample), ``MEMORY_SIZE`` (floats it carries
  from sample to sample: a Gauss-Markov state, the pose it integrated, the
  previous velocity);
* ``<name>_block(k0, states, due, period, params, rng, memory, out_k, out)``,
  the kernel: for each step k = k0 + i of ``states`` (t = k / 120) it asks
  the spec's Due (:func:`acres_sim.core.due.due_at` on ``due[0]``) and,
  when it answers, writes the sample into ``out[n]`` and k into ``out_k[n]``;
  it returns n.  ``params`` is a
  float64 row (:meth:`StepSensor.params_row`), ``rng`` the stream's state,
  ``memory`` its state, advanced in place;
* a :class:`StepSensor` subclass naming the kernel
  (``kernel = staticmethod(<name>_block)``) and its sizes, and turning a
  sample into its file row (:meth:`StepSensor.row`).

Each sensor has its own PCG32 stream (``core.rng``'s table).  The kernels
share :func:`state_axes` (the body axes of a state row) and
:func:`point_velocity` (the velocity of a body point, v + w x R (r - c)).
"""

from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit
from acres_sim.core.physics import body_axes
from acres_sim.core.rng import Pcg32
from acres_sim.core.truth import PHYSICS_HZ, T_Q, T_V, T_W

__all__ = ['StepSensor', 'point_velocity', 'row_positions', 'state_axes']


@njit(cache=True)
def state_axes(row):
    """The body x, y, z axes in world coordinates (the columns of R) of the state
    row ``row`` (its quaternion at T_Q, xyzw, body FLU -> ENU): three 3-tuples."""
    return body_axes(row[T_Q], row[T_Q + 1], row[T_Q + 2], row[T_Q + 3])


@njit(cache=True)
def point_velocity(row, ex, ey, ez, dx, dy, dz):
    """World velocity of the body point at ``(dx, dy, dz)`` (body FLU [m]) from the
    centre of mass: v + w x R d, with v (T_V) and w (T_W) of the state row."""
    rx = ex[0] * dx + ey[0] * dy + ez[0] * dz
    ry = ex[1] * dx + ey[1] * dy + ez[1] * dz
    rz = ex[2] * dx + ey[2] * dy + ez[2] * dz
    wx, wy, wz = row[T_W], row[T_W + 1], row[T_W + 2]
    return (row[T_V] + wy * rz - wz * ry,
            row[T_V + 1] + wz * rx - wx * rz,
            row[T_V + 2] + wx * ry - wy * rx)


def row_positions(params_type, sizes=None) -> dict:
    """Field name -> the position of its (first) value in the kernel's row of a
    ``params_type`` (:meth:`StepSensor.params_row`: the fields in order, a vector
    field's ``sizes[name]`` values in a run, any other field one value)."""
    sizes = sizes or {}
    positions, at = {}, 0
    for name in params_type._fields:
        positions[name] = at
        at += sizes.get(name, 1)
    return positions


class StepSensor:
    """One sensor sampled from the per-step state: its parameters, noise
    stream, memory and Due.  Subclasses set ``kernel``, ``SAMPLE_SIZE`` and
    ``MEMORY_SIZE``, and may override :meth:`start_memory` and :meth:`row`."""

    kernel = None
    SAMPLE_SIZE = 0
    MEMORY_SIZE = 0

    def __init__(self, params: NamedTuple, rng: Pcg32):
        self.params = params
        self.rng = rng
        self._start = rng.state.copy()      # the stream as it was given: reset() goes back
        self._row = self.params_row(params)
        self.reset()

    @staticmethod
    def params_row(params) -> np.ndarray:
        """The parameters as the kernel takes them: a float64 row in field
        order, a vector field's components in a run (the modules name the
        positions)."""
        return np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in params])

    def start_memory(self) -> np.ndarray:
        """The memory at the start (zeros by default)."""
        return np.zeros(self.MEMORY_SIZE)

    def reset(self):
        """Start again as built: the stream at its start, the memory as at the
        start, the first sample at the next step run (a run after a reset
        repeats the samples of the first)."""
        self.rng.state[:] = self._start
        self.memory = self.start_memory()
        self.due = np.array([-1.0])       # < 0: due at the first step run
        self.started = False

    def run_block(self, k0, states):
        """The samples of the steps k0 .. k0 + len(states) - 1: (steps (n,),
        samples (n, SAMPLE_SIZE))."""
        states = np.ascontiguousarray(states, dtype=np.float64)
        if not self.started:
            self.due[0] = k0 / PHYSICS_HZ
            self.started = True
        n_max = states.shape[0]
        out_k = np.zeros(n_max, dtype=np.int64)
        out = np.zeros((n_max, self.SAMPLE_SIZE))
        n = self.kernel(k0, states, self.due, 1.0 / float(self.params.hz), self._row,
                        self.rng.state, self.memory, out_k, out)
        return out_k[:n], out[:n]

    def columns(self, samples) -> dict:
        """The rows' values of the samples (n, SAMPLE_SIZE), rounded a column
        at a time (:mod:`acres_sim.core.rounding`): an array per key of a row
        (a nested one as ``'outer.inner'``), a row per entry of its first axis
        -- what the messages are made of."""
        raise NotImplementedError

    @staticmethod
    def rows_from_columns(columns) -> list:
        """The file rows, a dict each, of :meth:`columns` (each sensor's is a
        function of its module, so that a process without the model can
        make its rows)."""
        raise NotImplementedError

    def rows(self, samples) -> list:
        """The file rows of the samples (n, SAMPLE_SIZE), a dict each."""
        return self.rows_from_columns(self.columns(samples))

    def row(self, sample) -> dict:
        """The file row of one sample (SAMPLE_SIZE floats)."""
        return self.rows(np.asarray(sample, dtype=np.float64).reshape(1, -1))[0]
