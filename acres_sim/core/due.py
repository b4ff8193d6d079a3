"""The spec's Due (spec: Frames and Sample Times) as a numba kernel, for the
kernels that run sensors over a block of steps (core.block, the sensors of
core.step_sensor).  :class:`acres_sim.core.schedule.Due` is the same rule on
one sensor in Python; it lives apart so that core.schedule loads without
numba (the recorder's row writer process uses its delay line).
"""

from acres_sim.core.jit import njit
from acres_sim.core.schedule import DUE_TOLERANCE_S

__all__ = ['due_at']


@njit(cache=True, inline='always')    # inlined: the block kernel asks it four times a step
def due_at(due, i, period, t):
    """Sensor ``i``'s next due time ``due[i]``, moved on by ``period`` when ``t``
    has reached it (then True); what :meth:`acres_sim.core.schedule.Due.due` does,
    on arrays."""
    if t + DUE_TOLERANCE_S >= due[i]:
        due[i] += period
        return True
    return False
