"""The fault models: what an active event does to a vehicle's sensors and
motion, applied inside the sensor and physics kernels.

Each event of a vehicle is a row of an :class:`EventEffects` table -- its
kind (the constants below) and up to :data:`N_PARAMS` parameters -- in the
order of the vehicle's :class:`acres_sim.core.event_clock.EventTimes`.  At a
sample the kernels read the event clock's *view* of every event (``ev``,
shape (n, 3): active, last start, last end; :data:`V_ACTIVE` ...) and ask the
functions here what changes.  With no event active every function leaves its
inputs exactly as they were, so a run with an event that never triggers gives
the numbers of the run without it, bit for bit; and no function draws a random
value, so the noise streams stay in step before, during and after an event.

==================  =====================================================  ===========
kind                effect                                                 parameters
==================  =====================================================  ===========
``DENIAL``          satellites in an azimuth sector and below an           P_AZ_FROM,
                    elevation are not tracked (all of them by default:     P_AZ_TO,
                    the receiver has no fix)                               P_BELOW
``JAMMING``         interference of J/S dB lowers every satellite's        P_JS_DB
                    C/N0 (:func:`jammed_cn0_dbhz`); those below the
                    tracking threshold are lost, the receiver noise of
                    the others rises (:func:`jamming_noise_factor`)
``CORRECTIONS``     the correction stream: no messages arrive (outage),    P_OUTAGE,
                    a changed latency, a base station at another           P_LATENCY,
                    baseline (the RTK lock is lost at the switch and at    P_BASELINE
                    the switch back)
``FIX_CAP``         the reported fix state is at most P_STATE (a           P_STATE
                    fix_state code)
``MULTIPATH``       P_REFLECTOR is added to the reflector index            P_REFLECTOR
``GLITCH``          the position is off by P_OFFSET + P_DRIFT (t - start)  P_OFFSET..,
                    (ENU, m and m/s); the reported sigma is unchanged      P_DRIFT..
``DROPOUT``         the sensors of P_SENSORS publish nothing               P_SENSORS
``FREEZE``          the sensors of P_SENSORS repeat their last output      P_SENSORS
``IMU_BIAS``        the IMU's six outputs gain P_SIX (m/s^2, rad/s)        P_SIX..
``IMU_BIAS_RAMP``   ... gain P_SIX (t - start) (per second)                P_SIX..
``IMU_SCALE``       ... are multiplied by P_SIX                            P_SIX..
``IMU_SATURATION``  ... are clipped to +-P_ACCEL_LIMIT, +-P_GYRO_LIMIT      P_ACCEL_LIMIT,
                                                                           P_GYRO_LIMIT
``TELEPORT``        the vehicle is put at P_POSE (x, y, yaw), parked: the  P_POSE..
                    spec's reset (IMU differences restart, the next INS
                    epoch reports gravity only)
``STOP``            the vehicle is commanded to stand still                (none)
==================  =====================================================  ===========

The jamming model (Kaplan & Hegarty, *Understanding GPS/GNSS*, 3rd ed., the
effective C/N0 under interference): a satellite's C/N0 in open sky rises
linearly in sin(elevation) from :data:`CN0_HORIZON_DBHZ` to
:data:`CN0_ZENITH_DBHZ` (typical L1 C/A values); with interference of
jammer-to-signal ratio J/S at the antenna the receiver sees

    (C/N0)_eff = 1 / (1 / (C/N0) + (J/S) / (Q R_c))

with the spectral separation Q = 1 and the chip rate R_c = 1.023 Mchip/s.  A
satellite whose (C/N0)_eff is below :data:`TRACK_THRESHOLD_DBHZ` is lost;
the thermal noise of code tracking grows as (C/N0)^(-1/2), so the white
error of the position is scaled by the RMS over the used satellites of
sqrt((C/N0) / (C/N0)_eff).  Several active jammers add their J/S.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.event_clock import (ST_ACTIVE, ST_ENDED, ST_STARTED, VIEW_SIZE, EventTimes,
                                        advance_events, due_at_time, initial_state,
                                        make_event_times)
from acres_sim.core.jit import njit
from acres_sim.core.zones import Zones, no_zones

__all__ = [
    'CN0_HORIZON_DBHZ', 'CN0_ZENITH_DBHZ', 'CORRECTIONS', 'DENIAL', 'DROPOUT', 'EventEffects',
    'FIX_CAP', 'FREEZE', 'GLITCH', 'IMU_BIAS', 'IMU_BIAS_RAMP', 'IMU_SATURATION', 'IMU_SCALE',
    'JAMMING', 'KINDS', 'MULTIPATH', 'N_PARAMS', 'OUT_DROPPED', 'OUT_FROZEN', 'OUT_KEPT',
    'SENSOR_GNSS', 'SENSOR_IMU', 'SENSOR_INS', 'STOP', 'TELEPORT', 'TRACK_THRESHOLD_DBHZ',
    'active', 'base_switched', 'correction_terms', 'deny_satellites', 'extra_reflector',
    'fix_cap', 'glitch_offset', 'imu_faults', 'jammed_cn0_dbhz', 'jamming_noise_factor',
    'VehicleEvents', 'make_effects', 'no_effects', 'no_events', 'output_fault', 'stopped',
    'teleport_pose',
]

(DENIAL, JAMMING, CORRECTIONS, FIX_CAP, MULTIPATH, GLITCH, DROPOUT, FREEZE, IMU_BIAS,
 IMU_BIAS_RAMP, IMU_SCALE, IMU_SATURATION, TELEPORT, STOP) = range(14)
KINDS = ('gnss_denial', 'jamming', 'corrections', 'fix_cap', 'multipath', 'glitch', 'dropout',
         'freeze', 'imu_bias', 'imu_bias_ramp', 'imu_scale', 'imu_saturation', 'teleport',
         'stop')
N_PARAMS = 8

# Parameter columns, by kind.
P_AZ_FROM, P_AZ_TO, P_BELOW = 0, 1, 2        # DENIAL: deg, clockwise from grid north
P_JS_DB = 0                                  # JAMMING
P_OUTAGE, P_LATENCY, P_BASELINE = 0, 1, 2    # CORRECTIONS: 1.0 / 0.0, s (NaN: as set), km
P_STATE = 0                                  # FIX_CAP: a fix_state code
P_REFLECTOR = 0                              # MULTIPATH
P_OFFSET, P_DRIFT = 0, 3                     # GLITCH: 3 each, ENU
P_SENSORS = 0                                # DROPOUT, FREEZE: SENSOR_* bits
P_SIX = 0                                    # IMU_*: ax, ay, az, gx, gy, gz
P_ACCEL_LIMIT, P_GYRO_LIMIT = 0, 1           # IMU_SATURATION
P_POSE = 0                                   # TELEPORT: x, y [m], yaw [rad]

SENSOR_GNSS, SENSOR_IMU, SENSOR_INS = 1, 2, 4
OUT_KEPT, OUT_DROPPED, OUT_FROZEN = 0, 1, 2

# The view of an event at a sample: the first columns of the event clock's state.
V_ACTIVE, V_STARTED, V_ENDED = ST_ACTIVE, ST_STARTED, ST_ENDED

CN0_ZENITH_DBHZ = 48.0       # open-sky C/N0 of a satellite at the zenith
CN0_HORIZON_DBHZ = 36.0      # ... at the horizon
TRACK_THRESHOLD_DBHZ = 28.0  # below it a satellite is lost
_Q_RC = 1.023e6              # Q R_c [Hz]: spectral separation 1, GPS L1 C/A chip rate


class EventEffects(NamedTuple):
    """The fault of each event of a vehicle (see the module docstring)."""

    kind: np.ndarray      # (n,) int64
    params: np.ndarray    # (n, N_PARAMS) float64


def make_effects(rows) -> EventEffects:
    """The table of ``rows``, each ``(kind, [parameters])`` (at most N_PARAMS)."""
    kinds, params = [], np.zeros((len(rows), N_PARAMS))
    for i, (kind, values) in enumerate(rows):
        if not 0 <= int(kind) < len(KINDS):
            raise ValueError(f'event {i}: unknown kind {kind!r}')
        values = [float(v) for v in values]
        if len(values) > N_PARAMS:
            raise ValueError(f'event {i}: {len(values)} parameters, at most {N_PARAMS}')
        kinds.append(int(kind))
        params[i, :len(values)] = values
    return EventEffects(np.array(kinds, dtype=np.int64), params)


def no_effects() -> EventEffects:
    """An empty table (a vehicle without events)."""
    return make_effects([])


@njit(cache=True)
def active(ev, i):
    """Whether event ``i`` is active at the sample of ``ev``."""
    return ev[i, V_ACTIVE] > 0.5


# ---------------------------------------------------------------------------- GNSS

@njit(cache=True)
def jammed_cn0_dbhz(cn0_dbhz, js_linear):
    """(C/N0)_eff [dB-Hz] of a signal of ``cn0_dbhz`` under interference of J/S
    ``js_linear`` (a ratio, not dB); see the module docstring."""
    return -10.0 * math.log10(10.0 ** (-0.1 * cn0_dbhz) + js_linear / _Q_RC)


@njit(cache=True)
def _open_sky_cn0_dbhz(lu):
    return CN0_HORIZON_DBHZ + (CN0_ZENITH_DBHZ - CN0_HORIZON_DBHZ) * max(lu, 0.0)


@njit(cache=True)
def _jamming(effects, ev):
    """The summed J/S (a ratio) of the active jammers."""
    js = 0.0
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] == JAMMING and active(ev, i):
            js += 10.0 ** (0.1 * effects.params[i, P_JS_DB])
    return js


@njit(cache=True)
def _in_sector(az, az_from, az_to):
    """Whether azimuth ``az`` [deg, 0..360) lies clockwise from ``az_from`` to ``az_to``."""
    if math.isnan(az_from):
        return True
    span = (az_to - az_from) % 360.0
    return (az - az_from) % 360.0 <= span


@njit(cache=True)
def deny_satellites(effects, ev, los, out):
    """Mark in ``out`` (bool per satellite) the satellites the active denial
    and jamming events take away, from their unit lines of sight ``los``
    (n_sat, 3, ENU).  Returns whether any event is at work."""
    out[:] = False
    working = False
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] != DENIAL or not active(ev, i):
            continue
        working = True
        p = effects.params[i]
        below = math.sin(math.radians(p[P_BELOW]))
        for k in range(los.shape[0]):
            le, ln, lu = los[k, 0], los[k, 1], los[k, 2]
            az = math.degrees(math.atan2(le, ln)) % 360.0
            if lu < below and _in_sector(az, p[P_AZ_FROM], p[P_AZ_TO]):
                out[k] = True
    js = _jamming(effects, ev)
    if js > 0.0:
        working = True
        for k in range(los.shape[0]):
            if jammed_cn0_dbhz(_open_sky_cn0_dbhz(los[k, 2]), js) < TRACK_THRESHOLD_DBHZ:
                out[k] = True
    return working


@njit(cache=True)
def jamming_noise_factor(effects, ev, los, classes):
    """The factor on the white error under the active jammers: the RMS over
    the used satellites (``classes``, sky.SAT_*) of sqrt(C/N0 / (C/N0)_eff);
    1.0 without jamming or without a used satellite."""
    js = _jamming(effects, ev)
    if js == 0.0:
        return 1.0
    total, n = 0.0, 0
    for k in range(los.shape[0]):
        if 0 <= classes[k] <= 2:       # sky.SAT_CLEAR, SAT_NEAR, SAT_FOLIAGE: used
            cn0 = _open_sky_cn0_dbhz(los[k, 2])
            total += 10.0 ** (0.1 * (cn0 - jammed_cn0_dbhz(cn0, js)))
            n += 1
    return 1.0 if n == 0 else math.sqrt(total / n)


@njit(cache=True)
def extra_reflector(effects, ev):
    """The reflector index the active multipath events add (0.0 for none)."""
    extra = 0.0
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] == MULTIPATH and active(ev, i):
            extra += effects.params[i, P_REFLECTOR]
    return extra


@njit(cache=True)
def correction_terms(effects, ev, t, latency_s, outages):
    """The latency and outages of the correction age (corrections.correction_age)
    under the correction events: ``latency_s`` and ``outages`` themselves
    while no such event has started.  An outage event that started at t_s (and
    ended at t_e) adds the outage [t_s - T_l, t_e - T_l) of generation times
    (up to ``t``, the epoch's time, while it lasts): what would arrive in it is
    lost.  A latency event sets the latency while it is active."""
    latency = latency_s
    extra = 0
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] != CORRECTIONS:
            continue
        p = effects.params[i]
        if active(ev, i) and not math.isnan(p[P_LATENCY]):
            latency = p[P_LATENCY]
        if p[P_OUTAGE] > 0.5 and not math.isnan(ev[i, V_STARTED]):
            extra += 1
    if extra == 0:
        return latency, outages
    out = np.empty((outages.shape[0] + extra, 2))
    out[:outages.shape[0]] = outages
    j = outages.shape[0]
    for i in range(effects.kind.shape[0]):
        p = effects.params[i]
        if effects.kind[i] != CORRECTIONS or not p[P_OUTAGE] > 0.5 \
                or math.isnan(ev[i, V_STARTED]):
            continue
        out[j, 0] = ev[i, V_STARTED] - latency_s
        out[j, 1] = t if active(ev, i) else ev[i, V_ENDED] - latency_s
        j += 1
    return latency, out


@njit(cache=True)
def base_switched(effects, ev, t, last_t):
    """The baseline [km] of the active base switch (NaN: the configured one)
    and whether a switch happened since the epoch at ``last_t`` (negative:
    none) -- at an event's start or end."""
    baseline = math.nan
    switched = False
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] != CORRECTIONS or math.isnan(effects.params[i, P_BASELINE]):
            continue
        if active(ev, i):
            baseline = effects.params[i, P_BASELINE]
        for at in (ev[i, V_STARTED], ev[i, V_ENDED]):
            if not math.isnan(at) and at <= t and (last_t < 0.0 or at > last_t):
                switched = True
    return baseline, switched


@njit(cache=True)
def fix_cap(effects, ev, fix):
    """``fix`` (a fix_state code) capped by the active caps."""
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] == FIX_CAP and active(ev, i):
            fix = min(fix, int(effects.params[i, P_STATE]))
    return fix


@njit(cache=True)
def glitch_offset(effects, ev, t, out):
    """Add the active glitches' offsets at ``t`` to ``out`` (3, ENU [m])."""
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] != GLITCH or not active(ev, i):
            continue
        p = effects.params[i]
        since = t - ev[i, V_STARTED]
        for j in range(3):
            out[j] += p[P_OFFSET + j] + p[P_DRIFT + j] * since


# ---------------------------------------------------------------------------- outputs

@njit(cache=True)
def output_fault(effects, ev, sensor):
    """What happens to a sample of ``sensor`` (SENSOR_*): OUT_KEPT, OUT_DROPPED
    (a dropout is active) or OUT_FROZEN (a freeze, and no dropout)."""
    fault = OUT_KEPT
    for i in range(effects.kind.shape[0]):
        if not active(ev, i) or (int(effects.params[i, P_SENSORS]) & sensor) == 0:
            continue
        if effects.kind[i] == DROPOUT:
            return OUT_DROPPED
        if effects.kind[i] == FREEZE:
            fault = OUT_FROZEN
    return fault


# ---------------------------------------------------------------------------- IMU

@njit(cache=True)
def imu_faults(effects, ev, t, out):
    """The IMU faults on a sample ``out`` (6: specific force, angular rate, body
    FLU), in place: scale factors, then bias steps and ramps, then saturation."""
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] == IMU_SCALE and active(ev, i):
            for j in range(6):
                out[j] *= effects.params[i, P_SIX + j]
    for i in range(effects.kind.shape[0]):
        kind = effects.kind[i]
        if not active(ev, i):
            continue
        if kind == IMU_BIAS:
            for j in range(6):
                out[j] += effects.params[i, P_SIX + j]
        elif kind == IMU_BIAS_RAMP:
            since = t - ev[i, V_STARTED]
            for j in range(6):
                out[j] += effects.params[i, P_SIX + j] * since
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] == IMU_SATURATION and active(ev, i):
            a, g = effects.params[i, P_ACCEL_LIMIT], effects.params[i, P_GYRO_LIMIT]
            for j in range(3):
                out[j] = min(max(out[j], -a), a)
                out[3 + j] = min(max(out[3 + j], -g), g)


# ---------------------------------------------------------------------------- vehicle

@njit(cache=True)
def stopped(effects, ev):
    """Whether an active stop holds the vehicle."""
    for i in range(effects.kind.shape[0]):
        if effects.kind[i] == STOP and active(ev, i):
            return True
    return False


@njit(cache=True)
def teleport_pose(effects, i):
    """The pose (x, y, yaw) of teleport event ``i``."""
    p = effects.params[i]
    return p[P_POSE], p[P_POSE + 1], p[P_POSE + 2]


# ---------------------------------------------------------------------------- one vehicle

class VehicleEvents:
    """The events of one vehicle: when each is active (``times``, an
    event_clock.EventTimes over ``zones``), what it does (``effects``), and its
    clock's state.  The block kernel advances the state in place
    (:meth:`record`); a sensor node that gets the truth step by step asks
    :meth:`teleports_at` and then :meth:`take` at each step, as the kernel does.
    ``names`` are the events' names, for rows and logs."""

    def __init__(self, times: EventTimes, zones: Zones, effects: EventEffects, names=()):
        self.times, self.zones, self.effects = times, zones, effects
        self.names = tuple(names) or tuple(f'event{i}' for i in range(len(effects.kind)))
        if not len(self.names) == len(times.start_kind) == len(effects.kind):
            raise ValueError('the names, times and effects of a vehicle\'s events differ in '
                             'number')
        self.state = initial_state(times)

    def __len__(self):
        return len(self.names)

    def reset(self):
        """Before the first sample again (the run starts again)."""
        self.state = initial_state(self.times)

    def teleports_at(self, t):
        """Whether a teleport event starts at the sample at ``t`` (ask before :meth:`take`)."""
        return any(kind == TELEPORT and due_at_time(self.times, self.state, i, float(t))
                   for i, kind in enumerate(self.effects.kind.tolist()))

    def take(self, t, position):
        """Advance the clock by the sample at ``t`` with the chassis origin at
        ``position`` (grid ENU); returns the events' views at it (a copy)."""
        if len(self):
            x, y, z = (float(v) for v in position)
            advance_events(self.times, self.zones, float(t), x, y, z, self.state)
        return self.state[:, :VIEW_SIZE].copy()

    def active_names(self, view):
        """The names of the events active in ``view``."""
        return [name for name, row in zip(self.names, view) if row[V_ACTIVE] > 0.5]


def no_events() -> VehicleEvents:
    """A vehicle without events."""
    return VehicleEvents(make_event_times([], 0), no_zones(), no_effects())
