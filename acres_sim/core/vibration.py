"""Engine and driveline vibration, and the brake's jitter of a parked vehicle:
small chassis motions added to the truth, so that every sensor sees them
through the spec's own equations (:mod:`acres_sim.core.physics` applies them).

Engine and PTO: sampled at 120 Hz
---------------------------------
A four-stroke engine of ``n`` cylinders fires ``n / 2`` times per revolution:
``f = n / 2 * rpm / 60`` (a six at 2000 rpm: 100 Hz; a twin at 3600 rpm:
60 Hz).  A PTO shaft through universal joints shakes at twice its speed
(1000 rpm: 33.3 Hz).  These frequencies lie near or above the 60 Hz Nyquist
frequency of the 120 Hz physics.  The truth is only ever read at the physics
steps, so the model gives the chassis the motion that a 120 Hz sampler of it
sees: a sinusoid at the *alias* of ``f`` (:func:`alias_hz`, folded into
-60..60 Hz, the sign the direction of the phase) whose acceleration has the
source's amplitude ``A`` -- what an accelerometer sampling the chassis at
120 Hz without an anti-alias filter would read.  Its displacement is
``A / omega_a^2 sin(phi)`` and its velocity ``A / omega_a cos(phi)`` along the
body axes' weights :data:`ENGINE_AXES`, with ``phi`` the alias phase carried
in the state (so the phase is continuous while the engine speed changes).

Limits: the motion between the steps is not the engine's (only the samples
are); an IMU with an anti-alias filter below 60 Hz would see less of it; a
source within :data:`ALIAS_FLOOR_HZ` of a multiple of 120 Hz aliases into a
slow sway that no chassis makes, so its amplitude is tapered there (its
displacement held at that of :data:`ALIAS_FLOOR_HZ`).  The spec's IMU (the
mean of two differences) passes an alias ``f_a`` scaled by ``|cos(pi f_a / 120)|``.

Amplitude: ``engine_accel_idle_mps2`` plus ``engine_accel_load_mps2`` times the
load (the drive force over its limit), and ``pto_accel_mps2`` while the vehicle
drives with a PTO.  The engine speed rises linearly from idle at rest to
``engine_work_rpm`` at ``engine_work_speed_mps`` (a CVT or a tractor set to its
working speed).

The brake's jitter
------------------
A parked vehicle's truth velocity alternates by ``parked_jitter_mps`` from one
step to the next along body x (``+-J/2``, a 60 Hz square wave), as the brake
solver of the spec's engine gives it; the position does not move (the mean
of two steps is zero), and the spec's IMU, the mean of two differences, reads
none of it (its zero at 60 Hz), where a single difference would read
``J * 120`` m/s^2.
"""

import math
from typing import NamedTuple

from acres_sim.core.jit import njit
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.core.vehicles import (
    P_ENGINE_ACCEL_IDLE, P_ENGINE_ACCEL_LOAD, P_ENGINE_CYLINDERS, P_ENGINE_IDLE_RPM,
    P_ENGINE_WORK_RPM, P_ENGINE_WORK_SPEED, P_PARKED_JITTER, P_PTO_ACCEL, P_PTO_RPM)

__all__ = ['ALIAS_FLOOR_HZ', 'ENGINE_AXES', 'VibrationSwitches', 'alias_hz', 'engine_amplitude',
           'engine_hz', 'jitter_velocity', 'pto_hz', 'sampled_sinusoid']

ALIAS_FLOOR_HZ = 5.0
# Body x, y, z weights of the engine's chassis acceleration: mostly vertical (the
# firing forces and the engine's rocking on its mounts); estimate.
ENGINE_AXES = (0.5, 0.7, 1.0)
PTO_AXES = (0.7, 1.0, 0.5)      # the shaft runs along x: mostly lateral and fore-aft; estimate


class VibrationSwitches(NamedTuple):
    """Which vibration sources act on one vehicle."""

    engine: bool = False          # engine firing order and PTO
    parked_jitter: bool = False   # the brake's 60 Hz velocity alternation when parked
    roughness: bool = True        # the terrain's roughness under the wheels (a terrain only)


@njit(cache=True)
def alias_hz(f_hz):
    """The frequency a sampler at the physics rate sees for ``f_hz`` (-60 .. 60 Hz)."""
    return f_hz - PHYSICS_HZ * math.floor(f_hz / PHYSICS_HZ + 0.5)


@njit(cache=True)
def engine_rpm(p, speed):
    """Engine speed [rpm] at the vehicle's ``speed`` [m/s]."""
    share = min(abs(speed) / p[P_ENGINE_WORK_SPEED], 1.0)
    return p[P_ENGINE_IDLE_RPM] + (p[P_ENGINE_WORK_RPM] - p[P_ENGINE_IDLE_RPM]) * share


@njit(cache=True)
def engine_hz(p, speed):
    """Firing frequency [Hz] of the four-stroke engine at ``speed``."""
    return 0.5 * p[P_ENGINE_CYLINDERS] * engine_rpm(p, speed) / 60.0


@njit(cache=True)
def engine_amplitude(p, load):
    """Amplitude of the engine's chassis acceleration [m/s^2] at ``load`` (0 .. 1)."""
    return p[P_ENGINE_ACCEL_IDLE] + p[P_ENGINE_ACCEL_LOAD] * min(max(load, 0.0), 1.0)


@njit(cache=True)
def pto_hz(p):
    """Second order of the PTO shaft [Hz] (0 without one)."""
    return 2.0 * p[P_PTO_RPM] / 60.0


@njit(cache=True)
def pto_amplitude(p):
    return p[P_PTO_ACCEL] if p[P_PTO_RPM] > 0.0 else 0.0


@njit(cache=True)
def sampled_sinusoid(amplitude, f_alias_hz, phase):
    """(displacement, velocity) of a chassis shaken at ``f_alias_hz`` (its alias)
    with acceleration ``amplitude``, at alias phase ``phase``."""
    omega = 2.0 * math.pi * f_alias_hz
    floor = 2.0 * math.pi * ALIAS_FLOOR_HZ
    w = abs(omega)
    if w < floor:     # taper: the displacement of the floor frequency at most
        amplitude *= (w / floor) ** 2
        w = floor
    d = amplitude / (w * w)
    return d * math.sin(phase), d * omega * math.cos(phase)


@njit(cache=True)
def jitter_velocity(p, k):
    """The brake's velocity along body x at step ``k`` of a parked vehicle [m/s]."""
    half = 0.5 * p[P_PARKED_JITTER]
    return half if k % 2 == 0 else -half
