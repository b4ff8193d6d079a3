"""The receiver's fix-state machine (spec: GNSS Receiver, Fix State Machine).

Each epoch, in this order:

1. no_fix when a cold start is younger than cold_ttff_s or fewer than 4
   satellites are used;
2. otherwise dgps (correction age known and <= dgps_max_age_s) or single, when
   the correction age is unknown or above rtk_max_age_s, or fewer than
   float_min_satellites are used;
3. otherwise RTK: float or fixed.

Leaving RTK (1 or 2 while a lock is held) ends the lock and records the loss
time t_loss.  In RTK: start a lock if there is none (t_lock = t, c = 0, draw
T_fix); with a lock, a cycle slip happens when the epoch's uniform is below
cycle_slip_rate * m * dt (t_loss = t, c = 0, new T_fix; t_lock stays); a capable
epoch (N_c >= min_clear_satellites and PDOP <= max_pdop) adds dt to the
convergence time c; fixed when capable and c >= T_fix, else float; falling
from fixed to float is a loss too (t_loss = t, c = 0, new T_fix).

    T_fix = T_med exp(sigma_T g_t) (1 + G_m m) r,  r = r_q if t - t_loss <= T_q else 1

The machine's state is a small float64 array (indices below) so the whole
epoch runs in numba.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit

__all__ = ['NO_FIX', 'SINGLE', 'DGPS', 'RTK_FLOAT', 'RTK_FIXED', 'STATE_NAMES', 'GGA_QUALITY',
           'RtkParams', 'initial_fix_state', 'lose_lock', 'time_to_fix', 'fix_state_step']

# Fix states (codes) and their names and NMEA GGA qualities.
NO_FIX, SINGLE, DGPS, RTK_FLOAT, RTK_FIXED = 0, 1, 2, 3, 4
STATE_NAMES = ('no_fix', 'single', 'dgps', 'rtk_float', 'rtk_fixed')
GGA_QUALITY = (0, 1, 2, 5, 4)

# The machine's state array.
FIX, LOCKED, T_LOCK, T_LOSS, CONVERGE, TIME_TO_FIX = range(6)
CONVERGED_LOCK_AGE_S = 600.0  # a converged start holds a lock this old at t = 0


class RtkParams(NamedTuple):
    cold_start: bool
    cold_ttff_s: float
    rtk_max_age_s: float
    dgps_max_age_s: float
    ttf_median_s: float
    ttf_log_sigma: float
    ttf_multipath_gain: float
    reacquire_factor: float
    reacquire_window_s: float
    min_clear_satellites: int
    float_min_satellites: int
    max_pdop: float
    cycle_slip_rate_per_s: float


def initial_fix_state(cold_start: bool) -> np.ndarray:
    """The state at t = 0: cold has no lock; converged has a 600 s old lock with T_fix = 0."""
    state = np.zeros(6)
    state[FIX] = NO_FIX
    state[T_LOSS] = -math.inf
    if not cold_start:
        state[LOCKED] = 1.0
        state[T_LOCK] = -CONVERGED_LOCK_AGE_S
        state[TIME_TO_FIX] = 0.0
    return state


@njit(cache=True)
def time_to_fix(p, g_t, m, t, t_loss):
    """T_fix for this epoch's Gaussian g_t and multipath index m."""
    r = p.reacquire_factor if t - t_loss <= p.reacquire_window_s else 1.0
    return p.ttf_median_s * math.exp(p.ttf_log_sigma * g_t) * (1.0 + p.ttf_multipath_gain * m) * r


@njit(cache=True)
def lose_lock(s, t):
    """End a held RTK lock at ``t`` (a base-station switch, acres_sim.core.events):
    the next RTK epoch starts a new one, with the reacquisition rule."""
    if s[LOCKED] != 0.0:
        s[LOCKED] = 0.0
        s[T_LOSS] = t


@njit(cache=True)
def fix_state_step(s, p, t, dt, n_used, n_clear, pdop, age, m, uniform, g_t):
    """Advance the machine ``s`` by one epoch; returns the new fix state code.

    ``age`` is the correction age (NaN when no message has arrived);
    ``uniform`` and ``g_t`` are the epoch's last two random values.
    """
    if (p.cold_start and t < p.cold_ttff_s) or n_used < 4:
        new = NO_FIX
    elif math.isnan(age) or age > p.rtk_max_age_s or n_used < p.float_min_satellites:
        new = DGPS if (not math.isnan(age) and age <= p.dgps_max_age_s) else SINGLE
    else:
        new = RTK_FLOAT
    if new != RTK_FLOAT:
        if s[LOCKED] != 0.0:
            s[LOCKED] = 0.0
            s[T_LOSS] = t
        s[FIX] = new
        return new

    if s[LOCKED] == 0.0:
        s[LOCKED] = 1.0
        s[T_LOCK] = t
        s[CONVERGE] = 0.0
        s[TIME_TO_FIX] = time_to_fix(p, g_t, m, t, s[T_LOSS])
    elif uniform < p.cycle_slip_rate_per_s * m * dt:
        s[T_LOSS] = t
        s[CONVERGE] = 0.0
        s[TIME_TO_FIX] = time_to_fix(p, g_t, m, t, s[T_LOSS])
    capable = n_clear >= p.min_clear_satellites and pdop <= p.max_pdop
    if capable:
        s[CONVERGE] += dt
    new = RTK_FIXED if capable and s[CONVERGE] >= s[TIME_TO_FIX] else RTK_FLOAT
    if s[FIX] == RTK_FIXED and new == RTK_FLOAT:
        s[T_LOSS] = t
        s[CONVERGE] = 0.0
        s[TIME_TO_FIX] = time_to_fix(p, g_t, m, t, s[T_LOSS])
    s[FIX] = new
    return new
