"""Sample times and modelled latency of the sensors (spec: Frames and Sample
Times -- the functions Due, Emit and Drain).

Every sensor (GNSS, IMU, INS) is wrapped the same way, AirSim style, with the
episode time ``t`` [s] passed in explicitly at each physics step::

    if due.due(t):                      # rate limiter
        line.push(t, model.sample(...))  # Emit
    for r in line.drain(t):             # Drain: everything that has aged
        write(r.item, r.sample_time, r.available_time, r.delivery_time)

:class:`Due` -- the rate limiter.  The first sample is at ``start`` (0 by
default); a sample is taken when ``t + 1e-8 >= t_due`` and each sample moves
the due time on by ``1/f``.  At most one sample per call: the callers step at
120 Hz and the rates are at most 120 Hz.  A rate that does not divide 120 Hz
gives intervals of two lengths (100 Hz: 1 and 2 physics steps) with the mean
rate exact.

The due time is kept exactly as the spec writes it: a float64 accumulator
``t_due += 1.0 / f`` -- not ``start + n / f`` from a sample counter.  The two
differ: the accumulator drifts by rounding, and once its drift passes the 1e-8
tolerance a sample that falls exactly on a physics step slips by one step.
Measured at 120 Hz physics, the first such slip is at step 224352
(t = 1869.6 s) for 120 Hz, step 310182 (2584.85 s) for 100 Hz and step 354462
(2953.85 s) for 60 Hz, 7567.9 s for 10 Hz and 19122 s for 7 Hz; a 120 Hz
sensor thus gives 431 999 samples in the first hour, not 432 000.  The spec's
form is the normative one (and what the reference implementation does), so it
is the one kept here; ``test_schedule.py`` pins these numbers.

:class:`DelayLine` -- the latency (Emit/Drain).  A sample taken at
``t_sample`` becomes available at ``t_available = t_sample + delay_s`` and is
delivered by the first drain with ``t >= t_available``.  Every entry that is
due comes out of one drain, oldest first (AirSim releases one per update).
The comparison allows ``1e-9`` s (:data:`DELAY_TOLERANCE_S`): with physics
times ``k/120`` and the default 0.05 s, ``k/120 + 0.05`` is one ulp above
``(k+6)/120`` for about one step in five, and without the allowance those
rows would wait a seventh step.  1e-9 s is far below a physics step (8.3 ms)
and far above the rounding of episode times up to about 10^6 s.
"""

from __future__ import annotations

from collections import deque
import math
from typing import Any, NamedTuple, Optional

__all__ = ['DUE_TOLERANCE_S', 'DELAY_TOLERANCE_S', 'Due', 'Release', 'DelayLine', 'delivery_step']

DUE_TOLERANCE_S = 1e-8    # spec: Frames and Sample Times (Due)
DELAY_TOLERANCE_S = 1e-9  # our choice for Drain, see the module docstring


class Due:
    """Rate limiter: decides at which times ``t`` [s] a sensor of rate ``rate_hz`` samples.

    ``start`` [s] is the time of the first sample.  ``count`` is the number of
    samples taken so far and ``t_due`` the time of the next one.
    """

    __slots__ = ('rate_hz', 'start', 't_due', 'count', '_period')

    def __init__(self, rate_hz: float, start: float = 0.0):
        rate_hz = float(rate_hz)
        if not (math.isfinite(rate_hz) and rate_hz > 0.0):
            raise ValueError(f'a sample rate must be positive and finite, got {rate_hz!r}')
        self.rate_hz = rate_hz
        self._period = 1.0 / rate_hz
        self.reset(start)

    def reset(self, start: Optional[float] = None) -> None:
        """Forget all samples; the next one is due at ``start`` (default: the previous start)."""
        if start is not None:
            self.start = float(start)
        self.t_due = self.start
        self.count = 0

    def due(self, t: float) -> bool:
        """Whether the sensor samples at time ``t`` [s]; a True answer advances the due time."""
        if t + DUE_TOLERANCE_S >= self.t_due:
            self.t_due += self._period
            self.count += 1
            return True
        return False


class Release(NamedTuple):
    """One entry leaving the delay line (times in seconds)."""

    item: Any
    sample_time: float       # t_sample, when the truth was sampled
    available_time: float    # t_sample + delay_s
    delivery_time: Optional[float]  # t of the drain that released it; None from flush()


class DelayLine:
    """Latency of ``delay_s`` [s] between sampling and delivery (spec: Emit, Drain).

    Entries must be pushed in order of non-decreasing ``t_sample``; as the
    delay is the same for all, they then also leave in that order.
    """

    __slots__ = ('delay_s', '_queue')

    def __init__(self, delay_s: float):
        delay_s = float(delay_s)
        if not (math.isfinite(delay_s) and delay_s >= 0.0):
            raise ValueError(f'a delay must be >= 0 and finite, got {delay_s!r}')
        self.delay_s = delay_s
        self._queue: deque[tuple[Any, float, float]] = deque()

    def push(self, t_sample: float, item: Any) -> None:
        """Emit: ``item`` sampled at ``t_sample`` [s] enters the line."""
        t_sample = float(t_sample)
        if self._queue and t_sample < self._queue[-1][1]:
            raise ValueError(f'sample time {t_sample!r} is before the previous one '
                             f'({self._queue[-1][1]!r})')
        self._queue.append((item, t_sample, t_sample + self.delay_s))

    def drain(self, t: float) -> list[Release]:
        """Drain: every entry available at time ``t`` [s] (oldest first), delivered at ``t``."""
        out = []
        queue = self._queue
        while queue and t + DELAY_TOLERANCE_S >= queue[0][2]:
            item, t_sample, t_available = queue.popleft()
            out.append(Release(item, t_sample, t_available, t))
        return out

    def pending(self) -> int:
        """How many entries are waiting."""
        return len(self._queue)

    __len__ = pending

    def flush(self) -> list[Release]:
        """End of run: remove and return every waiting entry, oldest first.

        They were never delivered, so their ``delivery_time`` is None; the
        caller decides whether to write them (with a null delivery time) or
        drop them.
        """
        out = [Release(item, t_sample, t_available, None)
               for item, t_sample, t_available in self._queue]
        self._queue.clear()
        return out

    def reset(self) -> None:
        """Drop every waiting entry."""
        self._queue.clear()


def delivery_step(k_sample: int, delay_s: float, hz: int) -> int:
    """The step at which a sample taken at step ``k_sample`` (time k / hz) leaves
    a :class:`DelayLine` of ``delay_s`` that is drained at every step: the first
    step k >= k_sample with ``k / hz + DELAY_TOLERANCE_S >= k_sample / hz + delay_s``
    (the same floats as :meth:`DelayLine.push` and :meth:`DelayLine.drain`)."""
    t_available = k_sample / hz + delay_s
    k = max(k_sample, math.floor((t_available - DELAY_TOLERANCE_S) * hz) - 1)
    while k / hz + DELAY_TOLERANCE_S < t_available:
        k += 1
    return k
