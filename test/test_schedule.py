"""Tests of acres_sim.core.schedule (spec: Frames and Sample Times: Due, Emit, Drain).

Physics time is t = k / 120 for step k, as in the headless loop.  References:
the sample steps worked out in exact integer arithmetic (the first step k with
k/120 >= n/f is ceil(120 n / f)), and the spec's Drain written out in float64
seconds (no tolerance) for the delay line.
"""

from fractions import Fraction
import math

import pytest

from acres_sim.core.schedule import DelayLine, Due, Release, delivery_step

PHYSICS_HZ = 120
ONE_HOUR = PHYSICS_HZ * 3600


def sampled_steps(rate_hz, steps, start=0.0):
    due = Due(rate_hz, start)
    return [k for k in range(steps) if due.due(k / PHYSICS_HZ)]


def exact_steps(rate_hz, steps):
    """Steps k = ceil(120 n / f) for integer f, in exact integer arithmetic."""
    out, n = [], 0
    while True:
        k = -((-PHYSICS_HZ * n) // rate_hz)
        if k >= steps:
            return out
        out.append(k)
        n += 1


def intervals(ks):
    return [b - a for a, b in zip(ks, ks[1:])]


# ---------------------------------------------------------------------------
# Due
# ---------------------------------------------------------------------------

def test_100hz_pattern_in_the_first_second():
    ks = sampled_steps(100, PHYSICS_HZ)
    # Due times n/100 fall on steps ceil(1.2 n): 0, 2, 3, 4, 5, 6, 8, ... -- every
    # step except those with k % 6 == 1.
    assert ks == [k for k in range(PHYSICS_HZ) if k % 6 != 1]
    assert ks[:7] == [0, 2, 3, 4, 5, 6, 8]
    assert len(ks) == 100
    assert set(intervals(ks)) == {1, 2}
    assert intervals(ks)[:5] == [2, 1, 1, 1, 1]


def test_100hz_over_one_hour():
    ks = sampled_steps(100, ONE_HOUR)
    assert len(ks) == 100 * 3600
    assert set(intervals(ks)) == {1, 2}
    exact = exact_steps(100, ONE_HOUR)
    first_difference = next(i for i, (a, b) in enumerate(zip(ks, exact)) if a != b)
    # The spec's accumulated due time slips one step at t = 2584.85 s (module docstring).
    assert ks[:first_difference] == exact[:first_difference]
    assert exact[first_difference] == 310182 and ks[first_difference] == 310183


def test_10hz_every_12_steps_for_an_hour():
    ks = sampled_steps(10, ONE_HOUR)
    assert ks == list(range(0, ONE_HOUR, 12))


def test_120hz_every_step_until_the_accumulator_slips():
    ks = sampled_steps(120, ONE_HOUR)
    assert ks[:224352] == list(range(224352))         # every step up to t = 1869.6 s
    assert 224352 not in ks                            # the one slip of the first hour
    assert ks[224352:] == list(range(224353, ONE_HOUR))
    assert len(ks) == ONE_HOUR - 1


def test_7hz_for_an_hour():
    ks = sampled_steps(7, ONE_HOUR)
    assert ks == exact_steps(7, ONE_HOUR)
    assert len(ks) == 7 * 3600
    assert set(intervals(ks)) == {17, 18}              # 120/7 = 17.14 steps
    assert ks[:8] == [0, 18, 35, 52, 69, 86, 103, 120]


@pytest.mark.parametrize('rate_hz, first_slip', [
    (120, 224352), (100, 310182), (60, 354462), (10, 908148), (7, 2294640),
])
def test_spec_accumulator_against_a_sample_counter(rate_hz, first_slip):
    """The check asked for in design: literal repeated addition (Due) against
    a due time n/f from an integer count.  They agree up to `first_slip` and
    differ there (the numbers the module docstring reports)."""
    due = Due(rate_hz)
    literal_due, n = 0.0, 0
    for k in range(first_slip + 1):
        t = k / PHYSICS_HZ
        got = due.due(t)
        # an independent transcription of the spec's two lines
        literal = t + 1e-8 >= literal_due
        if literal:
            literal_due += 1.0 / rate_hz
        assert got == literal
        counted = t + 1e-8 >= n / rate_hz
        if counted:
            n += 1
        assert (got == counted) == (k < first_slip), k
    assert due.t_due == literal_due


def test_start_offset_and_reset():
    due = Due(10, start=0.5)
    ks = [k for k in range(240) if due.due(k / PHYSICS_HZ)]
    assert ks == [60, 72, 84, 96, 108, 120, 132, 144, 156, 168, 180, 192, 204, 216, 228]
    assert due.count == len(ks)
    due.reset()
    assert due.count == 0 and due.t_due == 0.5
    assert not due.due(0.49) and due.due(0.5)
    due.reset(start=0.0)
    assert due.due(0.0)


def test_tolerance_of_the_due_comparison():
    due = Due(10)
    assert due.due(0.0)
    assert not due.due(0.1 - 2e-8)
    assert due.due(0.1 - 0.5e-8)   # within 1e-8 counts as due
    assert due.t_due == pytest.approx(0.2)


def test_one_sample_per_call():
    due = Due(10)
    assert due.due(5.0) and due.count == 1
    assert due.due(5.0) and due.count == 2          # behind schedule: catches up one per call
    assert due.t_due == pytest.approx(0.2)


@pytest.mark.parametrize('rate', [0, -1, float('inf'), float('nan')])
def test_rejects_bad_rates(rate):
    with pytest.raises(ValueError):
        Due(rate)


# ---------------------------------------------------------------------------
# DelayLine
# ---------------------------------------------------------------------------

def spec_drain_steps(sample_steps, delay_s, last_step):
    """A literal transcription of the spec's Emit/Drain in float64 seconds,
    drained at every step: {sample step: the step whose drain releases it}."""
    waiting, out = [], {}
    for k in range(last_step + 1):
        if k in sample_steps:
            waiting.append((k, k / PHYSICS_HZ + delay_s))
        t = k / PHYSICS_HZ
        while waiting and t >= waiting[0][1]:
            out[waiting.pop(0)[0]] = k
    return out


def test_release_order_and_several_in_one_drain():
    line = DelayLine(0.05, PHYSICS_HZ)
    for i, k in enumerate((0, 1, 2, 3)):
        line.push(k, f'row{i}')
    assert line.drain(5) == []
    assert line.pending() == 4
    out = line.drain(8)
    assert [r.item for r in out] == ['row0', 'row1', 'row2']
    assert [r.sample_step for r in out] == [0, 1, 2]
    assert [r.delivery_step for r in out] == [6, 7, 8]
    assert len(line) == 1
    # 3/120 + 0.05 is one ulp above 9/120 in float64: the row waits for step 10
    assert 3 / 120 + 0.05 > 9 / 120
    assert line.drain(9) == []
    assert line.drain(20) == [Release('row3', 3, 10)]
    assert line.pending() == 0 and line.drain(10_000) == []


def test_zero_delay_releases_in_the_same_step():
    line = DelayLine(0.0, PHYSICS_HZ)
    line.push(150, 'a')
    assert line.drain(149) == []
    assert line.drain(150) == [Release('a', 150, 150)]


def test_a_late_drain_gives_the_delivery_step_not_its_own():
    """Drained a block of steps at a time (the recorder), an entry still leaves
    with the step at which a drain at every step would have released it."""
    line = DelayLine(0.05, PHYSICS_HZ)
    line.push(120, 'a')
    assert line.drain(360) == [Release('a', 120, 126)]
    every_step, blocks = DelayLine(0.1, PHYSICS_HZ), DelayLine(0.1, PHYSICS_HZ)
    by_step, by_block = [], []
    for k in range(600):
        if k % 5 in (0, 2):
            every_step.push(k, k)
            blocks.push(k, k)
        by_step += every_step.drain(k)
        if k % 120 == 119:
            by_block += blocks.drain(k)
    assert by_block == by_step and len(by_step) == 240 - 4    # 4 sampled in the last 0.1 s


def test_delay_of_0_05_is_six_steps_or_seven_where_float64_says_so():
    """The spec compares float64 times with no tolerance: a row is delivered
    six steps after its sample, or seven where k/120 + 0.05 rounds above
    (k+6)/120 -- about one sample in five."""
    line = DelayLine(0.05, PHYSICS_HZ)
    released = seventh = 0
    for k in range(ONE_HOUR):
        line.push(k, k)
        for r in line.drain(k):
            k_sample = r.sample_step
            late = k_sample / 120 + 0.05 > (k_sample + 6) / 120
            assert r.delivery_step == k == k_sample + (7 if late else 6), k_sample
            released += 1
            seventh += late
    assert ONE_HOUR // 10 < seventh < ONE_HOUR // 3
    assert released + line.pending() == ONE_HOUR


def test_no_row_leaves_before_its_available_time():
    """Before, 1e-9 s of slack let the late rows above out one step early,
    one ulp before their available time."""
    for delay_s in (0.05, 0.1, 0.013, 1 / 120, 2.5):
        for k_sample in range(0, ONE_HOUR, 997):
            k = delivery_step(k_sample, delay_s, PHYSICS_HZ)
            t_available = k_sample / PHYSICS_HZ + delay_s
            assert k / PHYSICS_HZ >= t_available
            assert k == k_sample or (k - 1) / PHYSICS_HZ < t_available


def test_pending_and_flush():
    line = DelayLine(0.5, PHYSICS_HZ)
    line.push(0, 'a')
    line.push(12, 'b')
    assert line.pending() == 2
    assert line.flush() == [Release('a', 0, None), Release('b', 12, None)]
    assert line.pending() == 0 and line.flush() == []
    line.push(24, 'c')
    line.reset()
    assert line.pending() == 0 and line.drain(10_000) == []


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        DelayLine(-0.01, PHYSICS_HZ)
    with pytest.raises(ValueError):
        DelayLine(float('nan'), PHYSICS_HZ)
    line = DelayLine(0.05, PHYSICS_HZ)
    line.push(120, 'a')
    line.push(120, 'same step is fine')
    with pytest.raises(ValueError):
        line.push(119, 'back in time')


@pytest.mark.parametrize('rate_hz', [100, 10, 7, 120])
@pytest.mark.parametrize('delay', [0.05, 0.0, 0.1, 0.013, 1.2])
def test_due_and_delay_compose_as_the_spec_says(rate_hz, delay):
    """Sample when due, push, drain: each row is delivered at the first step
    j with j/120 >= t_sample + delay in float64, over 60 s."""
    due, line = Due(rate_hz), DelayLine(delay, PHYSICS_HZ)
    delivered = []
    for k in range(60 * PHYSICS_HZ):
        t = k / PHYSICS_HZ
        if due.due(t):
            line.push(k, k)
        for r in line.drain(k):
            assert r.delivery_step == k and r.sample_step == r.item
            delivered.append((r.item, k))
    for k_sample, k_delivery in delivered:
        t_available = k_sample / PHYSICS_HZ + delay
        assert k_delivery / PHYSICS_HZ >= t_available
        assert k_delivery == k_sample or (k_delivery - 1) / PHYSICS_HZ < t_available
        # within a step of the exact rational answer
        exact = math.ceil(k_sample + Fraction(repr(delay)) * PHYSICS_HZ)
        assert k_delivery in (exact, exact + 1)
    assert len(delivered) + line.pending() == due.count


@pytest.mark.parametrize('delay_s', [0.0, 1e-10, 0.05, 1 / 120, 0.1, 0.123456, 2.5])
def test_the_delay_line_equals_the_spec_drain_in_seconds(delay_s):
    samples = {k for k in range(2000) if k % 7 in (0, 3)}
    reference = spec_drain_steps(samples, delay_s, 1999)
    assert reference
    line, delivered = DelayLine(delay_s, PHYSICS_HZ), {}
    for k in range(2000):
        if k in samples:
            line.push(k, k)
        delivered.update((r.item, r.delivery_step) for r in line.drain(k))
    assert delivered == reference
    assert all(delivery_step(k, delay_s, PHYSICS_HZ) == kd for k, kd in reference.items())


@pytest.mark.parametrize('delay_s', [0.05, 1 / 120, 10.0])
@pytest.mark.parametrize('k0', [10**6, 432_000, 7 * 86400 * 120 - 5000])
def test_delivery_step_far_into_a_run(delay_s, k0):
    """At the end of a week-long run (the recorder's limit) too: floats there
    have far fewer bits left for the fraction of a second."""
    last = k0 + int(delay_s * 120) + 300
    samples = set(range(k0, k0 + 200))
    waiting, reference = [], {}
    for k in range(k0, last):          # spec_drain_steps, from step k0 on
        if k in samples:
            waiting.append((k, k / PHYSICS_HZ + delay_s))
        while waiting and k / PHYSICS_HZ >= waiting[0][1]:
            reference[waiting.pop(0)[0]] = k
    assert len(reference) == 200
    assert all(delivery_step(k, delay_s, PHYSICS_HZ) == kd for k, kd in reference.items())


# ----------------------------------------------------------------------------
# A block at a time

@pytest.mark.parametrize('delay_s', [0.0, 0.05, 0.0123, 1 / 120, 0.1, 2.5, 0.0501])
def test_delivery_steps_of_a_block_are_delivery_step(delay_s):
    """The vectorised form against the one-sample rule, step for step (the
    0.05 s case has the rows whose available time is an ulp above a step)."""
    from acres_sim.core.schedule import delivery_steps
    import numpy as np
    steps = np.concatenate([np.arange(0, 5000), np.arange(224000, 226000, 7),
                            np.arange(10**7, 10**7 + 500)])
    expected = [delivery_step(k, delay_s, 120) for k in steps.tolist()]
    assert delivery_steps(steps, delay_s, 120).tolist() == expected
    if delay_s == 0.05:
        assert len(set(e - k for e, k in zip(expected, steps.tolist()))) == 2   # 6 and 7 steps


def test_push_many_is_push_one_by_one():
    import numpy as np
    one, many = DelayLine(0.05, 120), DelayLine(0.05, 120)
    blocks = [np.arange(0, 120, 1), np.arange(120, 240, 12), np.array([], dtype=np.int64),
              np.array([240, 240, 241])]
    for block in blocks:
        items = [f'item {k}' for k in block.tolist()]
        for k, item in zip(block.tolist(), items):
            one.push(k, item)
        many.push_many(block, items)
    for k in (5, 100, 239, 250, 10**6):
        assert many.drain(k) == one.drain(k)
    assert many.pending() == one.pending() == 0


def test_push_many_refuses_steps_that_go_back():
    import numpy as np
    line = DelayLine(0.05, 120)
    line.push(10, 'a')
    with pytest.raises(ValueError, match='must not decrease'):
        line.push_many(np.array([9, 11]), ['b', 'c'])
    with pytest.raises(ValueError, match='must not decrease'):
        line.push_many(np.array([11, 10]), ['b', 'c'])
    with pytest.raises(ValueError, match='2 sample steps for 1 items'):
        line.push_many(np.array([11, 12]), ['b'])
    assert line.pending() == 1


@pytest.mark.parametrize('delay_s', [0.0, 0.05, 0.3])
def test_the_block_line_delivers_what_the_delay_line_delivers(delay_s):
    """Reference: DelayLine, a sample at a time.  BlockDelayLine gives the same
    samples at the same drains, with the same delivery steps and rows."""
    import numpy as np

    from acres_sim.core.schedule import BlockDelayLine
    rng = np.random.default_rng(7)
    one, block = DelayLine(delay_s, 120), BlockDelayLine(delay_s, 120, 2)
    k = 0
    for _ in range(200):
        steps = k + np.sort(rng.integers(0, 120, rng.choice([0, 1, 3, 40])))
        values = rng.standard_normal((len(steps), 2))
        tags = [f'sample {step}' for step in steps.tolist()]
        for step, row, tag in zip(steps.tolist(), values.tolist(), tags):
            one.push(step, (row, tag))
        block.push_block(steps, values, tags)
        k += 120
        drain_at = k - 1 + int(rng.integers(0, 3))
        expected = one.drain(drain_at)
        got_steps, got_deliveries, got_rows, got_tags = block.drain(drain_at)
        assert got_steps.tolist() == [r.sample_step for r in expected]
        assert got_deliveries.tolist() == [r.delivery_step for r in expected]
        assert got_rows.tolist() == [r.item[0] for r in expected]
        assert got_tags == [r.item[1] for r in expected]
        assert block.pending() == one.pending()


def test_the_block_line_refuses_what_the_delay_line_refuses():
    import numpy as np

    from acres_sim.core.schedule import BlockDelayLine
    line = BlockDelayLine(0.05, 120, 1)
    line.push_block([10], [[1.0]])
    with pytest.raises(ValueError, match='must not decrease'):
        line.push_block(np.array([9, 11]), [[2.0], [3.0]])
    with pytest.raises(ValueError, match='must not decrease'):
        line.push_block(np.array([11, 10]), [[2.0], [3.0]])
    with pytest.raises(ValueError):
        line.push_block(np.array([11, 12]), [[2.0]])
    with pytest.raises(ValueError, match='2 sample steps for 1 tags'):
        line.push_block(np.array([11, 12]), [[2.0], [3.0]], ['a'])
    assert line.drain(10**6)[3] == [None]      # pushed without tags
    line.push_block([20], [[1.0]])
    with pytest.raises(ValueError, match='>= 0 and finite'):
        BlockDelayLine(-0.01, 120, 1)
    assert line.pending() == 1
