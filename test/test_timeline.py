"""The ROS timeline of a run (acres_sim.pipeline.timeline): step k at
start_utc + k / 120 s, in integer nanoseconds since 1970.  References: the
calendar module for the start, exact rationals for k / 120, and the spec's
table (gnss.datum.start_utc is the UTC at t = 0)."""

import calendar
import datetime
from fractions import Fraction

import numpy as np
import pytest

from acres_sim.config import ConfigError, load_config
from acres_sim.pipeline.timeline import Timeline, ns_since_epoch, step_offset_ns
from acres_sim.pipeline.vehicle import build_vehicle

START = '2026-09-23T15:00:00Z'          # the spec's default start_utc
START_NS = calendar.timegm((2026, 9, 23, 15, 0, 0)) * 10**9
TWO_YEARS = 2 * 365 * 86400 * 120        # the longest live run, in steps


def exact_ns(k):
    """k / 120 s to the nearest nanosecond, in exact rationals."""
    return round(Fraction(k * 10**9, 120))


def test_the_run_starts_at_start_utc_not_at_zero():
    vehicle = build_vehicle(load_config(rig='polaris'), 'polaris', sensors=())
    assert vehicle.config['gnss.datum.start_utc'] == START
    assert vehicle.timeline.t0_ns == START_NS == vehicle.timeline.ns(0) > 0
    later = datetime.datetime(2027, 3, 1, 8, 30, 15, 250000, tzinfo=datetime.timezone.utc)
    assert ns_since_epoch(later) == calendar.timegm(later.utctimetuple()) * 10**9 + 250_000_000


@pytest.mark.parametrize('k0', [0, 432_000, 10**9, TWO_YEARS - 1000])
def test_step_times_are_exact_and_give_their_steps_back(k0):
    timeline = Timeline(START_NS)
    steps = np.arange(k0, k0 + 1000)
    assert timeline.ns_of_steps(steps).tolist() == [START_NS + exact_ns(k) for k in steps.tolist()]
    for k in steps.tolist():
        assert timeline.ns(k) == START_NS + exact_ns(k) == START_NS + step_offset_ns(k)
        t_ns = timeline.ns(k)
        # a stamp gives back its step, also one that lost some nanoseconds (e.g. in a float)
        assert timeline.step(t_ns) == timeline.step(t_ns - 4_000_000) \
            == timeline.step(t_ns + 4_000_000) == k
        assert timeline.step_of_stamp(*divmod(t_ns, 10**9)) == k


def test_a_stamp_before_the_start_is_a_negative_step():
    timeline = Timeline(START_NS)
    assert timeline.step_of_stamp(-1, 0) < 0
    assert timeline.step(START_NS - 10**9) == -120


@pytest.mark.parametrize('start', ['1969-12-31T23:59:59Z', '2036-01-01T00:00:00Z',
                                   '2040-06-01T00:00:00+02:00'])
def test_a_start_that_ros_stamps_cannot_hold_is_a_config_error(start):
    with pytest.raises(ConfigError, match='gnss.datum.start_utc.*ROS 2 stamps'):
        load_config(overrides={'gnss.datum.start_utc': start})
    load_config(overrides={'gnss.datum.start_utc': '1970-01-01T00:00:00Z'})
    load_config(overrides={'gnss.datum.start_utc': '2035-12-31T23:59:59Z'})
