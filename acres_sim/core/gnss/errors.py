"""The receiver's position error (spec: GNSS Receiver, Error Model).

Per axis (east, north, up) the error is the sum of three terms:

    e = sigma_gm u + sigma_w g'' + sigma_mp z,   sigma = sqrt(sigma_gm^2 + sigma_w^2 + sigma_mp^2)

u and z are unit first-order Gauss-Markov states (u with tau_s of the current fix
state, z with multipath_tau_s): x_k = phi x_(k-1) + sqrt(1 - phi^2) g, phi = exp(-dt/tau);
in the first epoch phi = 0 and dt = 0.1 s.  The standard deviations:

    s_H, s_V   the state's sigma_h_m / sigma_v_m; in rtk_float converging from the
               initial sigmas: s = sigma + (sigma_0 - sigma) exp(-(t - t_lock)/tau_c);
               in the RTK states plus 1e-3 ppm * baseline_km
    k_H, k_V   clamp(H / max(H_o, 1e-3), 0.5, 20) and the same for V
    sigma_gm = (s_H k_H, s_H k_H, s_V k_V)
    sigma_w  = (w_H k_H, w_H k_H, w_V k_V)
    sigma_mp = m mu_H (1, 1, r_V)

The reported sigma is the true standard deviation of the added error.  Every
epoch uses 11 random values in this order: 3 for u, 3 white, 3 for z, one
uniform, then g_t (the last two belong to the fix-state machine).  With noise
off the three sigmas are zero but the values are still drawn.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.gnss.fix_state import NO_FIX, RTK_FIXED, RTK_FLOAT, SINGLE
from acres_sim.core.jit import njit
from acres_sim.core.rng import pcg32_gaussian, pcg32_uniform

__all__ = ['STATE_FIELDS', 'ErrorParams', 'VALUES_PER_EPOCH', 'draw_epoch_values',
           'error_epoch']

# Columns of the per-state table (rows: fix state codes, no_fix uses single's).
STATE_FIELDS = ('sigma_h_m', 'sigma_v_m', 'initial_sigma_h_m', 'initial_sigma_v_m',
                'convergence_tau_s', 'white_h_m', 'white_v_m', 'tau_s', 'multipath_h_m')
(SIGMA_H, SIGMA_V, INITIAL_H, INITIAL_V, CONVERGENCE_TAU, WHITE_H, WHITE_V, TAU,
 MULTIPATH_H) = range(len(STATE_FIELDS))

VALUES_PER_EPOCH = 11
FIRST_EPOCH_DT_S = 0.1
U, WHITE, Z, UNIFORM, G_T = 0, 3, 6, 9, 10   # offsets into an epoch's 11 values


class ErrorParams(NamedTuple):
    states: np.ndarray             # (5, 9): one row per fix state code, columns STATE_FIELDS
    multipath_tau_s: float
    multipath_vertical_ratio: float
    baseline_km: float
    ppm_h: float
    ppm_v: float
    noise: bool


@njit(cache=True)
def draw_epoch_values(rng_state, out):
    """The epoch's 11 values from the GNSS-error stream, in the spec's order."""
    for i in range(UNIFORM):
        out[i] = pcg32_gaussian(rng_state)
    out[UNIFORM] = pcg32_uniform(rng_state)
    out[G_T] = pcg32_gaussian(rng_state)


@njit(cache=True)
def _clamp(x, low, high):
    return min(max(x, low), high)


@njit(cache=True)
def error_epoch(p, fix, t, dt, first, t_lock, H, V, Ho, Vo, m, values, u, z,
                sigma_gm, sigma_w, sigma_mp, error, baseline_km, white_factor):
    """One epoch of the error model; updates ``u`` and ``z`` and fills the sigma
    arrays and ``error`` (each length 3, ENU).  Returns (tau, k_H, k_V, dt used).
    ``baseline_km`` is the RTK baseline of the epoch (``p.baseline_km`` but
    under a base switch) and ``white_factor`` scales the white error (1.0 but
    under interference), see :mod:`acres_sim.core.events`."""
    row = p.states[SINGLE if fix == NO_FIX else fix]
    s_h = row[SIGMA_H]
    s_v = row[SIGMA_V]
    if fix == RTK_FLOAT:
        decay = math.exp(-(t - t_lock) / row[CONVERGENCE_TAU])
        s_h = s_h + (row[INITIAL_H] - s_h) * decay
        s_v = s_v + (row[INITIAL_V] - s_v) * decay
    if fix == RTK_FLOAT or fix == RTK_FIXED:
        s_h += 1e-3 * p.ppm_h * baseline_km
        s_v += 1e-3 * p.ppm_v * baseline_km
    k_h = _clamp(H / max(Ho, 1e-3), 0.5, 20.0)
    k_v = _clamp(V / max(Vo, 1e-3), 0.5, 20.0)

    tau = row[TAU]
    if first:
        dt = FIRST_EPOCH_DT_S
        phi = 0.0
        phi_m = 0.0
    else:
        phi = math.exp(-dt / tau)
        phi_m = math.exp(-dt / p.multipath_tau_s)
    scale = 1.0 if p.noise else 0.0
    horizontal = (True, True, False)
    for axis in range(3):
        u[axis] = phi * u[axis] + math.sqrt(1.0 - phi * phi) * values[U + axis]
        z[axis] = phi_m * z[axis] + math.sqrt(1.0 - phi_m * phi_m) * values[Z + axis]
        if horizontal[axis]:
            sigma_gm[axis] = scale * s_h * k_h
            sigma_w[axis] = scale * row[WHITE_H] * k_h * white_factor
            sigma_mp[axis] = scale * m * row[MULTIPATH_H]
        else:
            sigma_gm[axis] = scale * s_v * k_v
            sigma_w[axis] = scale * row[WHITE_V] * k_v * white_factor
            sigma_mp[axis] = scale * m * row[MULTIPATH_H] * p.multipath_vertical_ratio
        error[axis] = (sigma_gm[axis] * u[axis] + sigma_w[axis] * values[WHITE + axis]
                       + sigma_mp[axis] * z[axis])
    return tau, k_h, k_v, dt
