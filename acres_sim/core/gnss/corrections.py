"""Age of the newest RTK correction message (spec: Correction Stream).

The base station is modelled as a clock: message ``j`` is generated at
``j * T_c`` (``T_c`` = gnss.corrections.interval_s) and reaches the receiver
``T_l`` later (``T_l`` = gnss.corrections.latency_s).  At episode time ``t``
the newest message that can have arrived has the index

    j = floor((t - T_l) / T_c + 1e-9)

and the age reported in the row is ``a_c = t - j * T_c`` (the literal formula,
so the age of a message that arrived this very step is ``T_l`` up to a few
ulps, and may come out a few 1e-16 s below zero when T_l = 0).  The 1e-9 (in
units of T_c) keeps decimal inputs that land exactly on a message's arrival
from losing that message to binary rounding: t = 1.7, T_l = 0.3, T_c = 0.1
gives (t - T_l) / T_c = 13.999999999999998 in float64, yet message 14 has
arrived.

Outages.  A message whose *generation* time falls in an outage ``[t1, t2)`` is
lost.  The receiver then holds the last message generated before ``t1``; if
that one is lost too (adjacent, nested or overlapping outages) the search goes
on backwards until a message survives.  To compare generation times with the
outage bounds in the same robust way as the floor above, every comparison is
made on the message-index axis with the same 1e-9 nudge: an outage ``[t1, t2)``
loses exactly the indices

    ceil(t1 / T_c - 1e-9)  <=  j  <  ceil(t2 / T_c - 1e-9)

i.e. a message generated exactly at ``t1`` is lost and one generated exactly at
``t2`` is kept, as for exact arithmetic.

Start modes.  After a cold start the first message is ``j = 0``: no message
(``j < 0``) gives NaN, which the row writes as null.  After a converged start
the station has been sending for ever, so negative indices are real messages
and an age always exists.

Units: seconds throughout.  ``correction_age`` is a numba kernel so the
receiver's per-epoch code can call it from njit code; ``outage_array`` turns
the configuration's list of pairs into the array it takes.
"""

import math

import numpy as np

from acres_sim.core.jit import njit

__all__ = ['INDEX_TOLERANCE', 'correction_age', 'outage_array']

# Nudge on the message-index axis (units of T_c), spec: Correction Stream.
INDEX_TOLERANCE = 1e-9


def outage_array(pairs) -> np.ndarray:
    """Outage pairs ``[[t1, t2), ...]`` [s] -> a C-contiguous float64 array (k, 2).

    An empty list gives shape (0, 2), which the kernel accepts.
    """
    a = np.array(pairs, dtype=np.float64).reshape(-1, 2)
    return np.ascontiguousarray(a)


@njit(cache=True)
def _first_index_at_or_after(tau, interval_s):
    """Smallest message index whose generation time is >= tau (with the nudge)."""
    return math.ceil(tau / interval_s - INDEX_TOLERANCE)


@njit(cache=True)
def correction_age(t, interval_s, latency_s, outages, cold_start):
    """Age a_c [s] of the newest received correction at episode time ``t`` [s].

    ``interval_s`` T_c > 0 and ``latency_s`` T_l >= 0 are in seconds;
    ``outages`` is a float64 array (k, 2) of ``[start, end)`` generation-time
    intervals in seconds (k may be 0, order and overlaps do not matter);
    ``cold_start`` True means the first message ever is index 0.

    Returns NaN when no message has been received (spec: Correction Stream).
    """
    j = math.floor((t - latency_s) / interval_s + INDEX_TOLERANCE)
    # Step back out of every outage that holds j.  j only decreases and an
    # outage left below its start can never hold j again, so this ends after
    # at most k + 1 passes.
    moved = True
    while moved:
        moved = False
        for i in range(outages.shape[0]):
            lo = _first_index_at_or_after(outages[i, 0], interval_s)
            hi = _first_index_at_or_after(outages[i, 1], interval_s)
            if lo <= j < hi:
                j = lo - 1
                moved = True
    if cold_start and j < 0:
        return np.nan
    return t - j * interval_s
