"""Tests of acres_sim.core.gnss.corrections (spec: Correction Stream).

References: ages worked out by hand below, and a brute-force reference in exact
rational arithmetic (fractions.Fraction on decimal inputs) that lists the
messages one by one, drops the lost ones and keeps the newest -- it shares no
arithmetic with the kernel (no float floor, no 1e-9 nudge, no stepping rule).
"""

from fractions import Fraction
import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from acres_sim.core.gnss.corrections import correction_age, outage_array

NONE = outage_array([])


def age(t, interval=1.0, latency=0.3, outages=(), cold=False):
    return correction_age(t, interval, latency, outage_array(list(outages)), cold)


# ---------------------------------------------------------------------------
# Hand-worked tables
# ---------------------------------------------------------------------------

# interval 1 s, latency 0.3 s: message j is generated at j and arrives at j + 0.3.
@pytest.mark.parametrize('t, expected', [
    (0.3, 0.3),    # message 0 arrives now
    (0.8, 0.8),
    (1.29, 1.29),  # message 1 not yet in
    (1.3, 0.3),    # message 1 arrives now
    (1.31, 0.31),
    (2.0, 1.0),
    (10.3, 0.3),
    (3600.3, 0.3),
    (3601.2999, 1.2999),
])
@pytest.mark.parametrize('cold', [False, True])
def test_age_table_interval_1_latency_0_3(t, expected, cold):
    assert age(t, cold=cold) == pytest.approx(expected, abs=1e-9)


# Decimal inputs that sit exactly on an arrival although the float quotient
# (t - T_l) / T_c lands just below the integer (checked in the first test).
FLOAT_EDGES = [
    # t,   T_c, T_l, expected age
    (1.7, 0.1, 0.3, 0.3),   # (1.7-0.3)/0.1 = 13.999999999999998
    (0.3, 0.1, 0.0, 0.0),   # 0.3/0.1 = 2.9999999999999996
    (0.6, 0.2, 0.0, 0.0),   # 0.6/0.2 = 2.9999999999999996
    (7.1, 0.1, 0.0, 0.0),   # 70.99999999999999
    (7.3, 0.1, 0.3, 0.3),
    (7.3, 0.1, 0.0, 0.0),
    (2.9, 0.1, 0.3, 0.3),
    (0.9, 0.3, 0.0, 0.0),
]


def test_float_edges_really_are_edges():
    below = [(t - tl) / tc for t, tc, tl, _ in FLOAT_EDGES[:4]]
    assert all(math.floor(x) < round(x) for x in below)


@pytest.mark.parametrize('t, interval, latency, expected', FLOAT_EDGES)
def test_exact_multiples_keep_the_message(t, interval, latency, expected):
    assert age(t, interval, latency) == pytest.approx(expected, abs=1e-9)
    # A hair earlier the previous message is the newest one.
    assert age(t - 1e-6, interval, latency) == pytest.approx(expected + interval - 1e-6, abs=1e-9)


def test_age_is_the_literal_formula():
    # a_c = t - j T_c with j the message index, computed in float64 as written.
    assert age(1.3) == 1.3 - 1 * 1.0
    assert age(1.7, 0.1, 0.3) == 1.7 - 14 * 0.1
    # With no latency the literal value can be a rounding hair below zero; it
    # is not clamped.
    assert age(0.6, 0.2, 0.0) == 0.6 - 3 * 0.2 < 0.0


# ---------------------------------------------------------------------------
# Start modes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize('t', [0.0, 0.1, 0.2999, 0.29999999])
def test_cold_start_has_no_message_before_the_first_arrival(t):
    assert math.isnan(age(t, cold=True))


@pytest.mark.parametrize('t, expected', [
    (0.0, 1.0),     # j = -1, generated at -1 s
    (0.1, 1.1),
    (0.2999, 1.2999),
    (0.3, 0.3),
])
def test_converged_start_uses_negative_indices(t, expected):
    assert age(t, cold=False) == pytest.approx(expected, abs=1e-9)


def test_converged_start_short_interval_long_latency():
    # T_c = 0.2, T_l = 0.5: at t = 0.1 the newest arrived message is j = -2
    # (generated at -0.4, arrived at 0.1).
    assert age(0.1, 0.2, 0.5) == pytest.approx(0.5, abs=1e-9)
    assert age(0.09, 0.2, 0.5) == pytest.approx(0.69, abs=1e-9)


# ---------------------------------------------------------------------------
# Outages
# ---------------------------------------------------------------------------

def test_single_outage():
    out = [(10.0, 12.0)]  # messages 10 and 11 are lost, 12 is kept ([t1, t2))
    assert age(10.29, outages=out) == pytest.approx(1.29)   # message 9
    assert age(10.3, outages=out) == pytest.approx(1.3)     # 10 lost -> 9
    assert age(11.3, outages=out) == pytest.approx(2.3)     # 11 lost -> 9
    assert age(12.29, outages=out) == pytest.approx(3.29)
    assert age(12.3, outages=out) == pytest.approx(0.3)     # 12 generated at t2: kept


def test_outage_bounds_between_messages():
    out = [(10.5, 12.5)]  # loses 11 and 12; 10 was generated before the outage
    assert age(10.3, outages=out) == pytest.approx(0.3)
    assert age(12.3, outages=out) == pytest.approx(2.3)
    assert age(13.3, outages=out) == pytest.approx(0.3)


def test_outage_bounds_on_float_edges():
    # T_c = 0.1: message 3 is generated at 0.30000000000000004 in float64 but
    # exactly at 0.3 in decimal, i.e. exactly at the bounds below.
    assert age(0.35, 0.1, 0.05, [(0.3, 0.5)]) == pytest.approx(0.15)  # 3 lost -> 2
    assert age(0.35, 0.1, 0.05, [(0.1, 0.3)]) == pytest.approx(0.05)  # 3 kept
    assert age(1.75, 0.1, 0.05, [(1.7, 1.8)]) == pytest.approx(0.15)  # 17 lost -> 16
    # T_c = 0.3: 2.1 / 0.3 = 7.000000000000001 and 2.7 / 0.3 = 9.000000000000002
    # in float64, yet messages 7 and 9 are generated exactly at 2.1 and 2.7.
    assert math.ceil(2.1 / 0.3) == 8 and math.ceil(2.7 / 0.3) == 10
    out = [(2.1, 2.7)]  # loses 7 and 8, keeps 9
    assert age(2.15, 0.3, 0.05, out) == pytest.approx(0.35)   # 7 lost -> 6
    assert age(2.45, 0.3, 0.05, out) == pytest.approx(0.65)   # 8 lost -> 6
    assert age(2.75, 0.3, 0.05, out) == pytest.approx(0.05)   # 9 kept


@pytest.mark.parametrize('outages', [
    [(10.0, 12.0), (12.0, 15.0)],
    [(12.0, 15.0), (10.0, 12.0)],   # order does not matter
])
def test_adjacent_outages(outages):
    assert age(14.3, outages=outages) == pytest.approx(5.3)   # 14 -> 11 -> 9
    assert age(11.3, outages=outages) == pytest.approx(2.3)
    assert age(15.3, outages=outages) == pytest.approx(0.3)


@pytest.mark.parametrize('outages', [
    [(10.0, 20.0), (12.0, 14.0)],   # nested
    [(12.0, 14.0), (10.0, 20.0)],
    [(10.0, 13.0), (12.0, 16.0)],   # overlapping
    [(12.0, 16.0), (10.0, 13.0)],
    [(14.0, 16.0), (12.0, 14.5), (10.0, 12.5)],  # a chain, listed backwards
])
def test_nested_and_overlapping_outages(outages):
    end = max(b for _, b in outages)
    for t in (10.3, 13.5, 15.3):
        if t < end:
            assert age(t, outages=outages) == pytest.approx(t - 9.0)
    assert age(20.3, outages=outages) == pytest.approx(0.3)


def test_outage_at_the_start_with_cold_start():
    out = [(0.0, 5.0)]  # messages 0..4 lost; the first received one is 5
    for t in (0.0, 0.3, 1.3, 4.3, 5.29):
        assert math.isnan(age(t, outages=out, cold=True))
    assert age(5.3, outages=out, cold=True) == pytest.approx(0.3)
    assert age(6.0, outages=out, cold=True) == pytest.approx(1.0)
    # Converged: the messages before t = 0 exist.
    assert age(3.3, outages=out, cold=False) == pytest.approx(4.3)  # message -1


def test_cold_start_outage_after_the_first_message():
    out = [(0.5, 5.0)]  # message 0 received, 1..4 lost
    assert age(4.3, outages=out, cold=True) == pytest.approx(4.3)
    assert age(5.3, outages=out, cold=True) == pytest.approx(0.3)


def test_empty_outage_array_shape():
    assert NONE.shape == (0, 2) and NONE.dtype == np.float64
    assert age(1.3, outages=[]) == pytest.approx(0.3)


# ---------------------------------------------------------------------------
# Property test against a brute-force reference in exact rationals
# ---------------------------------------------------------------------------

def reference_age(t, interval, latency, outages, cold):
    """Newest message (exact arithmetic) that has arrived and was not lost."""
    j = (t - latency) // interval  # floor of an exact rational
    while True:
        if cold and j < 0:
            return None
        generated = j * interval
        if not any(t1 <= generated < t2 for t1, t2 in outages):
            return t - generated
        j -= 1


centis = st.integers  # decimal inputs: whole hundredths of a second


@st.composite
def scenarios(draw):
    interval = Fraction(draw(centis(5, 500)), 100)
    latency = Fraction(draw(centis(0, 300)), 100)
    t = Fraction(draw(centis(0, 8_640_000)), 100)     # up to one day
    horizon = draw(st.sampled_from([1_000, 10_000, 8_640_000]))
    outages = []
    for _ in range(draw(st.integers(0, 4))):
        start = draw(centis(0, min(horizon, int(t * 100) + 1_000)))
        length = draw(centis(1, 5_000))
        outages.append((Fraction(start, 100), Fraction(start + length, 100)))
    cold = draw(st.booleans())
    return t, interval, latency, outages, cold


@settings(max_examples=600, deadline=None)
@given(scenarios())
def test_matches_exact_brute_force(scenario):
    t, interval, latency, outages, cold = scenario
    expected = reference_age(t, interval, latency, outages, cold)
    got = correction_age(float(t), float(interval), float(latency),
                         outage_array([(float(a), float(b)) for a, b in outages]), cold)
    if expected is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(float(expected), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_arrival_edges_match_brute_force(scenario):
    # Put t exactly on an arrival (or a generation time), where rounding bites.
    t, interval, latency, outages, cold = scenario
    j = t // interval
    for t_edge in (j * interval + latency, j * interval):
        expected = reference_age(t_edge, interval, latency, outages, cold)
        got = correction_age(float(t_edge), float(interval), float(latency),
                             outage_array([(float(a), float(b)) for a, b in outages]), cold)
        if expected is None:
            assert math.isnan(got)
        else:
            assert got == pytest.approx(float(expected), abs=1e-9)
