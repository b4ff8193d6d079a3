"""Sample times and modelled latency of the sensors (spec: Frames and Sample
Times -- the functions Due, Emit and Drain).

Every sensor (GNSS, IMU, INS) is wrapped the same way, AirSim style, with the
physics step k (episode time ``t = k / 120`` [s]) passed in explicitly::

    if due.due(t):                       # rate limiter
        line.push(k, model.sample(...))  # Emit
    for r in line.drain(k):              # Drain: everything that has aged
        write(r.item, r.sample_step, r.delivery_step)

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

:class:`DelayLine` -- the latency (Emit/Drain), counted in physics steps.
A sample taken at step k (t_sample = k / hz) becomes available at
``t_available = t_sample + delay_s`` and is delivered by the first drain at a
step whose time reaches it: :func:`delivery_step`, computed once when the
sample enters the line.  Every entry that is due comes out of one drain,
oldest first (AirSim releases one per update).  A line drained less often
than every step (the recorder drains a block of steps at a time) gives each
entry the step at which a drain at every step would have released it.
:meth:`DelayLine.push_many` takes a block of samples at once, their steps
from :func:`delivery_steps` (the same comparisons over an array; a block
of a few samples, as the live sim node pushes, from :func:`delivery_step`
each, cheaper than numpy's fixed cost).  :class:`BlockDelayLine` is the same
line for samples that are rows of an array (the recorder's INS report
values, its IMU and further sensors' samples): a block in, the delivered rows
out as arrays, no object per sample.

The comparison has no tolerance: the spec's Drain writes a row at the first
physics step whose time is at least its available time, both times float64
(``k / 120`` and ``k_sample / 120 + delay_s``).  With the default 0.05 s,
``k/120 + 0.05`` comes out one ulp above ``(k+6)/120`` for about one sample
in five, and those rows are delivered a seventh step after their sample, as
the spec's comparison decides.
"""

from __future__ import annotations

from collections import deque
import math
from typing import Any, NamedTuple, Optional

import numpy as np

__all__ = ['DUE_TOLERANCE_S', 'BlockDelayLine', 'Due', 'Release', 'DelayLine', 'delivery_step',
           'delivery_steps']

DUE_TOLERANCE_S = 1e-8    # spec: Frames and Sample Times (Due)
FEW_STEPS = 16            # push_many: at most this many samples, delivery_step each



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
    """One entry leaving the delay line (physics steps)."""

    item: Any
    sample_step: int               # the step the sensor sampled at
    delivery_step: Optional[int]   # the step it is delivered at; None from flush()


class DelayLine:
    """Latency of ``delay_s`` [s] between sampling and delivery, by physics
    step of rate ``hz`` (spec: Emit, Drain; see the module docstring).

    Entries must be pushed in order of non-decreasing sample step; as the
    delay is the same for all, they then also leave in that order.
    """

    __slots__ = ('delay_s', 'hz', '_queue')

    def __init__(self, delay_s: float, hz: int):
        self.delay_s = _checked_delay(delay_s)
        self.hz = hz
        self._queue: deque[tuple[int, int, Any]] = deque()   # (delivery, sample step, item)

    def push(self, k_sample: int, item: Any) -> None:
        """Emit: ``item`` sampled at step ``k_sample`` enters the line."""
        if self._queue and k_sample < self._queue[-1][1]:
            raise ValueError(f'sample step {k_sample!r} is before the previous one '
                             f'({self._queue[-1][1]!r})')
        self._queue.append((delivery_step(k_sample, self.delay_s, self.hz), k_sample, item))

    def push_many(self, k_samples, items) -> None:
        """Emit a block: ``items[i]`` sampled at step ``k_samples[i]`` (in
        order), as :meth:`push` takes them one by one."""
        steps = np.asarray(k_samples, dtype=np.int64).reshape(-1).tolist()
        if len(steps) != len(items):
            raise ValueError(f'{len(steps)} sample steps for {len(items)} items')
        if not steps:
            return
        before = self._queue[-1][1] if self._queue else steps[0]
        if steps[0] < before or any(b < a for a, b in zip(steps, steps[1:])):
            raise ValueError('sample steps must not decrease')
        if len(steps) <= FEW_STEPS:     # numpy's fixed cost is that of many of these
            deliveries = [delivery_step(k, self.delay_s, self.hz) for k in steps]
        else:
            deliveries = delivery_steps(steps, self.delay_s, self.hz).tolist()
        self._queue.extend(zip(deliveries, steps, items))

    def drain(self, k: int) -> list[Release]:
        """Drain: every entry delivered at step ``k`` or before (oldest first)."""
        out = []
        queue = self._queue
        while queue and queue[0][0] <= k:
            k_delivery, k_sample, item = queue.popleft()
            out.append(Release(item, k_sample, k_delivery))
        return out

    def pending(self) -> int:
        """How many entries are waiting."""
        return len(self._queue)

    __len__ = pending

    def flush(self) -> list[Release]:
        """End of run: remove and return every waiting entry, oldest first.

        They were never delivered, so their ``delivery_step`` is None; the
        caller decides whether to write them (with a null delivery time) or
        drop them.
        """
        out = [Release(item, k_sample, None) for _k, k_sample, item in self._queue]
        self._queue.clear()
        return out

    def reset(self) -> None:
        """Drop every waiting entry."""
        self._queue.clear()


class BlockDelayLine:
    """:class:`DelayLine` for samples that are the rows of a (n, width) float
    array: :meth:`push_block` takes a block of them, :meth:`drain` gives back
    the rows delivered by a step as arrays -- the same delivery steps
    (:func:`delivery_steps`), in the same order, without an object per sample."""

    __slots__ = ('delay_s', 'hz', '_steps', '_deliveries', '_values', '_tags')

    def __init__(self, delay_s: float, hz: int, width: int):
        self.delay_s = _checked_delay(delay_s)
        self.hz = hz
        self._steps = np.empty(0, dtype=np.int64)
        self._deliveries = np.empty(0, dtype=np.int64)
        self._values = np.empty((0, width))
        self._tags = []

    def push_block(self, k_samples, values, tags=None) -> None:
        """Emit: row i of ``values`` sampled at step ``k_samples[i]`` (in order,
        none before a sample already in the line), with ``tags[i]`` (anything;
        None: no tags), given back with it."""
        steps = np.asarray(k_samples, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(len(steps), self._values.shape[1])
        tags = [None] * len(steps) if tags is None else list(tags)
        if len(tags) != len(steps):
            raise ValueError(f'{len(steps)} sample steps for {len(tags)} tags')
        if not len(steps):
            return
        last = self._steps[-1] if len(self._steps) else steps[0]
        if steps[0] < last or (np.diff(steps) < 0).any():
            raise ValueError('sample steps must not decrease')
        self._steps = np.concatenate([self._steps, steps])
        self._deliveries = np.concatenate([self._deliveries,
                                           delivery_steps(steps, self.delay_s, self.hz)])
        self._values = np.concatenate([self._values, values])
        self._tags += tags

    def drain(self, k: int):
        """Drain: (sample steps, delivery steps, rows, tags) of every sample
        delivered at step ``k`` or before (oldest first)."""
        n = int(np.searchsorted(self._deliveries, k, side='right'))
        out = self._steps[:n], self._deliveries[:n], self._values[:n], self._tags[:n]
        self._steps, self._deliveries, self._values, self._tags = (
            self._steps[n:], self._deliveries[n:], self._values[n:], self._tags[n:])
        return out

    def pending(self) -> int:
        """How many samples are waiting."""
        return len(self._steps)

    __len__ = pending


def _checked_delay(delay_s) -> float:
    delay_s = float(delay_s)
    if not (math.isfinite(delay_s) and delay_s >= 0.0):
        raise ValueError(f'a delay must be >= 0 and finite, got {delay_s!r}')
    return delay_s


def delivery_step(k_sample: int, delay_s: float, hz: int) -> int:
    """The step at which a sample taken at step ``k_sample`` (time k / hz) leaves
    a :class:`DelayLine` of ``delay_s``: the first step k >= k_sample with
    ``k / hz >= k_sample / hz + delay_s`` in float64, no tolerance (spec: Frames
    and Sample Times, Emit and Drain) -- the one place that compares the times
    of the delay line."""
    t_available = k_sample / hz + delay_s
    k = max(k_sample, math.floor(t_available * hz) - 1)   # a step or two before it
    while k / hz < t_available:
        k += 1
    return k


def delivery_steps(k_samples, delay_s: float, hz: int) -> np.ndarray:
    """:func:`delivery_step` of each sample step of ``k_samples`` (an int64
    array): the same float64 comparisons, a whole block at once."""
    k_sample = np.asarray(k_samples, dtype=np.int64)
    t_available = k_sample / hz + delay_s
    k = np.maximum(k_sample, np.floor(t_available * hz).astype(np.int64) - 1)
    late = k / hz < t_available
    while late.any():
        k += late
        late = k / hz < t_available
    return k
