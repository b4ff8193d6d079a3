"""When events are active (acres_sim.core.event_clock): time windows against the
spec's Due, zone entries and exits along a straight drive through a circle,
computed by hand."""

import math

import numpy as np
import pytest

from acres_sim.core.event_clock import (AFTER, AT_TIME, NEVER, ON_ENTER, ON_LEAVE,
                                        advance_events, initial_state, make_event_times)
from acres_sim.core.zones import make_zones

HZ = 120.0
# a circle of radius 10 m around (50, 0): a drive along y = 0 at 5 m/s from x = 0
# is inside from t = 8 s to t = 12 s (x from 40 to 60 m)
ZONES = make_zones([{'center': [50.0, 0.0], 'radius': 10.0},
                    {'polygon': [[100.0, -5.0], [120.0, -5.0], [120.0, 5.0], [100.0, 5.0]]}])


def drive(rows, seconds=30.0, x0=0.0, speed=5.0, back_at=None):
    """The active flags (samples x events) along the drive, at 120 Hz; with
    ``back_at`` the vehicle turns round at that time."""
    times = make_event_times(rows, len(ZONES.kind))
    state = initial_state(times)
    out = []
    for k in range(int(seconds * HZ) + 1):
        t = k / HZ
        x = x0 + speed * t
        if back_at is not None and t > back_at:
            x = x0 + speed * (2 * back_at - t)
        advance_events(times, ZONES, t, x, 0.0, 0.0, state)
        out.append(state[:, 0].copy())
    return np.array(out) > 0.5


def span(active):
    """(first, last) sample index of a run of True, or None."""
    index = np.flatnonzero(active)
    return (int(index[0]), int(index[-1])) if len(index) else None


def test_a_time_window_starts_and_ends_at_the_first_samples_at_its_times():
    active = drive([(AT_TIME, 2.5, AT_TIME, 4.0)])[:, 0]
    first = next(k for k in range(10000) if k / HZ + 1e-8 >= 2.5)     # the spec's Due rule
    end = next(k for k in range(10000) if k / HZ + 1e-8 >= 4.0)
    assert span(active) == (first, end - 1) == (300, 479)
    # a time that falls between samples: the next sample
    assert span(drive([(AT_TIME, 1.004, AT_TIME, 2.0)])[:, 0]) == (121, 239)


def test_a_duration_counts_from_the_start():
    assert span(drive([(AT_TIME, 1.0, AFTER, 0.5)])[:, 0]) == (120, 179)


def test_in_a_zone_from_entry_to_exit():
    active = drive([(ON_ENTER, 0, ON_LEAVE, 0)])[:, 0]
    t = np.flatnonzero(active) / HZ
    assert t[0] == pytest.approx(8.0, abs=1 / HZ) and t[-1] == pytest.approx(12.0, abs=1 / HZ)
    x = 5.0 * t
    assert np.all(np.abs(x - 50.0) <= 10.0)
    assert len(t) == len(set(np.round(t * HZ)))           # one run


def test_each_entry_starts_it_again():
    # through the circle, back at t = 20 s (x = 100), through it again
    active = drive([(ON_ENTER, 0, AFTER, 1.0)], seconds=40.0, back_at=20.0)[:, 0]
    runs = np.flatnonzero(np.diff(active.astype(int)) == 1) + 1
    assert len(runs) == 2
    assert runs / HZ == pytest.approx([8.0, 28.0], abs=2 / HZ)
    assert active.sum() == 2 * int(1.0 * HZ)


def test_a_time_start_runs_once_and_never_ends_by_itself():
    active = drive([(AT_TIME, 3.0, NEVER, None)])[:, 0]
    assert span(active) == (360, len(active) - 1)


def test_an_event_ending_on_leaving_a_zone_waits_until_the_vehicle_was_in_it():
    # starts at 1 s, ends on leaving the square at x 100..120 (t 20..24 s)
    active = drive([(AT_TIME, 1.0, ON_LEAVE, 1)], seconds=30.0)[:, 0]
    first, last = span(active)
    assert first == 120 and last / HZ == pytest.approx(24.0, abs=1 / HZ)


def test_a_start_in_the_zone_is_an_entry():
    active = drive([(ON_ENTER, 0, ON_LEAVE, 0)], x0=45.0)[:, 0]
    assert active[0] and span(active)[1] / HZ == pytest.approx(3.0, abs=1 / HZ)


def test_a_window_that_has_passed_before_the_entry_never_opens():
    active = drive([(ON_ENTER, 0, AT_TIME, 5.0)])[:, 0]
    assert not active.any()


def test_events_of_one_table_are_independent():
    rows = [(AT_TIME, 2.0, AT_TIME, 3.0), (ON_ENTER, 0, ON_LEAVE, 0), (AT_TIME, 0.0, AFTER, 9.0)]
    whole = drive(rows)
    for i, row in enumerate(rows):
        assert np.array_equal(whole[:, i], drive([row])[:, 0])
    assert whole.any(axis=0).all()


@pytest.mark.parametrize('row, words', [
    ((AT_TIME, 5.0, AT_TIME, 5.0), 'not after its start'),
    ((AT_TIME, 5.0, AFTER, 0.0), 'duration must be > 0'),
    ((AT_TIME, math.nan, NEVER, None), 'finite'),
    ((ON_ENTER, 2, NEVER, None), 'zone 2 is not one'),
    ((ON_LEAVE, 0, NEVER, None), 'starts AT_TIME or ON_ENTER'),
    ((AT_TIME, 1.0, ON_ENTER, 0), 'ends AT_TIME, AFTER'),
])
def test_bad_times_are_named(row, words):
    with pytest.raises(ValueError, match=words) as caught:
        make_event_times([(AT_TIME, 0.0, NEVER, None), row], 2)
    assert str(caught.value).startswith('event 1:')
