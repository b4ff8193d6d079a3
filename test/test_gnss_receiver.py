"""The GNSS receiver as a whole: value counts and determinism, the row, the
fix-state scenarios of the spec, the GGA sentence read back by pynmea2, and the
error statistics of long runs."""

import json
import math

import numpy as np
import pynmea2
import pytest

from acres_sim.config import load_config
from acres_sim.config.scene import default_scene
from acres_sim.pipeline.models import gnss_receiver, site_georeference
from acres_sim.core.rng import Pcg32
from acres_sim.core.scene import empty_scene

OPEN_FIELD = (0.0, -300.0, 2.0)     # south of the yard, far from every obstacle
IN_GARAGE = (0.0, 0.0, 2.15)        # the default spawn (spec: Limitations)
OUTPUTS_PER_EPOCH = 21              # 10 Gaussians (2 outputs each) + 1 uniform


def receiver(scene=None, **overrides):
    config = load_config(rig='polaris', overrides=overrides)
    return packaged_receiver(config, None, scene)


def packaged_receiver(config, agent_index=None, scene=None):
    """The receiver of ``config`` in ``scene`` (the packaged ACRE scene if None)."""
    return gnss_receiver(config, scene or default_scene(), site_georeference(config), agent_index)


def run(rx, times, position=OPEN_FIELD):
    return [rx.epoch(t, position) for t in times]


def ticks(seconds, hz=10.0, start=0.0):
    return [start + k / hz for k in range(int(round(seconds * hz)))]


def test_each_epoch_draws_eleven_values_whatever_the_state_and_noise():
    for overrides in ({}, {'noise': False}, {'gnss.start': 'cold'},
                      {'gnss.corrections.outages_s': [[0.0, 30.0]]}):
        rx = receiver(**overrides)
        reference = Pcg32(rx.settings.error_seed, 1)
        for k, t in enumerate(ticks(40.0)):
            rx.epoch(t, IN_GARAGE if k < 50 else OPEN_FIELD)
            for _ in range(OUTPUTS_PER_EPOCH):
                reference.next_u32()
            assert np.array_equal(rx.rng.state, reference.state), (overrides, t)


def test_noise_off_and_state_changes_do_not_shift_later_epochs():
    times = ticks(60.0)
    on, off = receiver(), receiver(noise=False)
    rows_on, rows_off = run(on, times), run(off, times)
    assert [r['fix_type'] for r in rows_on] == [r['fix_type'] for r in rows_off]
    assert [r['rtk_time_to_fix_s'] for r in rows_on] == [r['rtk_time_to_fix_s'] for r in rows_off]
    for row in rows_off:
        assert row['position_enu_m'] == list(OPEN_FIELD) and row['position_std_m'] == 0.0
    # an outage forces other states for a while; afterwards the draws are the same ones
    outage = receiver(**{'gnss.corrections.outages_s': [[5.0, 25.0]]})
    plain = receiver()
    for t in times:
        outage.epoch(t, OPEN_FIELD)
        plain.epoch(t, OPEN_FIELD)
        assert np.array_equal(outage.rng.state, plain.rng.state)


def test_same_seed_same_rows_other_seed_other_errors_same_sky():
    times = ticks(20.0)
    first, again, other = receiver(), receiver(), receiver(seed=7)
    a, b, c = run(first, times), run(again, times), run(other, times)
    assert json.dumps(a) == json.dumps(b)
    assert [r['pdop'] for r in a] != [r['pdop'] for r in c]   # the seed moves the sky too ...
    agent = packaged_receiver(load_config(rig='polaris'), 1)
    d = run(agent, times)
    # ... but another agent of the same seed shares the sky and has its own errors
    assert [r['pdop'] for r in d] == [r['pdop'] for r in a]
    assert [r['position_enu_m'] for r in d] != [r['position_enu_m'] for r in a]
    shared = packaged_receiver(
        load_config(rig='polaris', overrides={'agent.offset_all_streams': False}), 1)
    assert json.dumps(run(shared, times)) == json.dumps(a)   # the game's shared noise


ROW_KEYS = {
    'fix_type', 'gga_quality', 'solution', 'satellites_used', 'satellites_clear',
    'satellites_near_obstruction', 'satellites_foliage', 'satellites_blocked',
    'satellites_above_mask', 'hdop', 'vdop', 'pdop', 'hdop_open_sky', 'vdop_open_sky',
    'multipath_index', 'reflector_index', 'correction_age_s', 'rtk_lock_age_s',
    'rtk_converge_s', 'rtk_time_to_fix_s', 'model', 'position_enu_m', 'sigma_enu_m',
    'covariance_enu_m2', 'position_std_m'}
GEODETIC_KEYS = {
    'latitude_deg', 'longitude_deg', 'ellipsoidal_height_m', 'altitude_navd88_m',
    'geoid_undulation_nad83_m', 'nmea_gga'} | {
    f'{prefix}_{name}' for prefix in ('wgs84', 'nad83_harn', 'nad83_2011')
    for name in ('latitude_deg', 'longitude_deg', 'ellipsoidal_height_m')}
TRUTH_ENU_KEY = 'true_antenna_enu_m'
TRUTH_GEODETIC_KEYS = ('true_latitude_deg', 'true_longitude_deg', 'true_ellipsoidal_height_m')


def test_row_has_every_key_group_and_nulls_without_a_fix():
    rx = receiver()
    in_garage = rx.epoch(0.0, IN_GARAGE)
    assert set(in_garage) == ROW_KEYS | GEODETIC_KEYS | {TRUTH_ENU_KEY, *TRUTH_GEODETIC_KEYS}
    assert list(in_garage)[-4:] == [TRUTH_ENU_KEY, *TRUTH_GEODETIC_KEYS]   # the truth last
    assert in_garage['fix_type'] == 'no_fix' and in_garage['satellites_used'] == 0
    position_keys = {'position_enu_m', 'sigma_enu_m', 'covariance_enu_m2', 'position_std_m'} | \
        (GEODETIC_KEYS - {'nmea_gga'})
    assert all(in_garage[k] is None for k in position_keys)
    assert in_garage[TRUTH_ENU_KEY] == list(IN_GARAGE)       # the truth, with a fix or not
    assert all(isinstance(in_garage[k], float) for k in TRUTH_GEODETIC_KEYS)
    outside = rx.epoch(0.1, OPEN_FIELD)
    assert all(outside[k] is not None for k in position_keys)
    assert outside['covariance_enu_m2'] == pytest.approx([s * s for s in outside['sigma_enu_m']])
    json.dumps(outside, allow_nan=False)
    unreferenced = receiver(**{'site.enabled': False}).epoch(0.0, OPEN_FIELD)
    assert set(unreferenced) == ROW_KEYS | {TRUTH_ENU_KEY}
    assert unreferenced[TRUTH_ENU_KEY] == list(OPEN_FIELD)


def test_output_frames_and_the_two_nad83():
    wgs = receiver(noise=False).epoch(0.0, OPEN_FIELD)
    nad = receiver(noise=False, **{'gnss.datum.output_frame': 'nad83'}).epoch(0.0, OPEN_FIELD)
    assert (wgs['latitude_deg'], wgs['ellipsoidal_height_m']) == \
        (wgs['wgs84_latitude_deg'], wgs['wgs84_ellipsoidal_height_m'])
    # the receiver's nad83: HARN latitude/longitude with the NAD83(2011) height
    assert (nad['latitude_deg'], nad['longitude_deg'], nad['ellipsoidal_height_m']) == \
        (nad['nad83_harn_latitude_deg'], nad['nad83_harn_longitude_deg'],
         nad['nad83_2011_ellipsoidal_height_m'])
    assert nad['altitude_navd88_m'] == pytest.approx(705 * 1200 / 3937 + OPEN_FIELD[2])
    # without noise the output is the truth: its geodetic truth is in the same frame
    for row in (wgs, nad):
        assert [row[k] for k in TRUTH_GEODETIC_KEYS] == \
            [row['latitude_deg'], row['longitude_deg'], row['ellipsoidal_height_m']]
    assert wgs['true_latitude_deg'] != nad['true_latitude_deg']


def test_gga_sentence_reads_back_equal_to_the_row():
    rx = receiver()
    for row in run(rx, ticks(3.0, start=100.0)):
        gga = pynmea2.parse(row['nmea_gga'], check=True)
        assert gga.gps_qual == row['gga_quality'] == 4
        assert gga.latitude == pytest.approx(row['latitude_deg'], abs=2e-9)
        assert gga.longitude == pytest.approx(row['longitude_deg'], abs=2e-9)
        assert int(gga.num_sats) == row['satellites_used']
        assert float(gga.horizontal_dil) == pytest.approx(row['hdop'], abs=0.05)
        assert float(gga.altitude) == pytest.approx(row['altitude_navd88_m'], abs=5e-4)
        assert float(gga.geo_sep) == pytest.approx(
            row['ellipsoidal_height_m'] - row['altitude_navd88_m'], abs=5e-4)
        assert float(gga.age_gps_data) == pytest.approx(row['correction_age_s'], abs=0.05)
        assert gga.ref_station_id == '0001'
    assert gga.timestamp.strftime('%H:%M:%S.%f') == '15:01:42.900000'  # 15:00:00 + 102.9 s


def epoch_values(error_seed, epoch_index):
    """The 11 random values of epoch ``epoch_index``, drawn independently of the model."""
    stream = Pcg32(error_seed, 1)
    for _ in range(epoch_index * OUTPUTS_PER_EPOCH):
        stream.next_u32()
    return [stream.gaussian() for _ in range(9)] + [stream.uniform(), stream.gaussian()]


def test_reset_replays_the_same_rows_and_time_must_increase():
    rx = receiver()
    times = ticks(5.0)
    first = json.dumps(run(rx, times))
    with pytest.raises(ValueError, match='time must increase'):
        rx.epoch(times[-1], OPEN_FIELD)
    rx.reset()
    assert json.dumps(run(rx, times)) == first


def states(rows):
    return [r['fix_type'] for r in rows]


def first_time(rows, times, fix):
    return next(t for t, r in zip(times, rows) if r['fix_type'] == fix)


def test_cold_start_reaches_a_fix_after_the_cold_time_to_first_fix():
    times = ticks(120.0)
    rows = run(receiver(**{'gnss.start': 'cold'}), times)
    assert set(states(rows[:200])) == {'no_fix'}
    assert first_time(rows, times, 'rtk_float') == pytest.approx(20.0)
    first_fixed = first_time(rows, times, 'rtk_fixed')
    row = rows[times.index(first_fixed)]
    assert row['rtk_converge_s'] >= row['rtk_time_to_fix_s'] > row['rtk_converge_s'] - 0.1 - 1e-9


def test_correction_outages_step_down_and_recovery_reacquires():
    times = ticks(180.0)
    short = run(receiver(**{'gnss.corrections.outages_s': [[30.0, 45.0]]}), times)
    # age passes rtk_max_age_s (10 s) at t = 40.0 + 0.3 latency: dgps until a new message
    assert states(short)[times.index(39.0)] == 'rtk_fixed'
    assert set(states(short)[times.index(41.0):times.index(45.0)]) == {'dgps'}
    recovered = times.index(45.3)
    assert states(short)[recovered] == 'rtk_float'
    back = short[recovered]
    # lost at 40.4 s, back at 45.3 s: within the 10 s window, T_fix carries the factor 0.3;
    # g_t is the 11th value of that epoch on the error stream (open sky: m = 0)
    g_t = epoch_values(receiver().settings.error_seed, recovered)[10]
    assert back['rtk_time_to_fix_s'] == pytest.approx(0.3 * 10.0 * math.exp(0.5 * g_t),
                                                      rel=1e-12)
    assert 'rtk_fixed' in states(short)[recovered:]
    long = run(receiver(**{'gnss.corrections.outages_s': [[30.0, 110.0]]}), times)
    assert states(long)[times.index(80.0)] == 'dgps'      # age 50.7 s <= 60 s
    assert states(long)[times.index(100.0)] == 'single'   # age 70.7 s
    assert 'rtk_fixed' in states(long)[times.index(110.3):]


def test_multipath_raises_cycle_slips_and_costs_fixed_time():
    """Ringed by grain bins (strong reflectors, near lines of sight) the lock
    slips and re-converges; in open sky it never slips (m = 0).  The time to fix
    grows with m as the unit test of time_to_fix shows."""
    from acres_sim.core.scene import make_scene
    bins = make_scene('bins', cylinders=[(0.0, 15.0, 5.0, 0.0, 20.0), (15.0, 0.0, 5.0, 0.0, 20.0),
                                         (-15.0, 0.0, 5.0, 0.0, 20.0),
                                         (0.0, -15.0, 5.0, 0.0, 20.0)])
    times = ticks(600.0)
    near = run(receiver(scene=bins), times, position=(0.0, 0.0, 2.0))
    open_sky = run(receiver(scene=empty_scene()), times, position=(0.0, 0.0, 2.0))
    assert min(r['multipath_index'] for r in near) > 0.2
    assert max(r['multipath_index'] for r in open_sky) == 0.0

    def losses(rows):
        """Epochs where the convergence time restarted (slip or fixed -> float)."""
        return sum(1 for a, b in zip(rows, rows[1:])
                   if a['rtk_converge_s'] is not None and b['rtk_converge_s'] is not None
                   and b['rtk_converge_s'] < a['rtk_converge_s'])

    assert losses(open_sky) == 0 and losses(near) >= 20
    fixed_share = [states(rows).count('rtk_fixed') / len(rows) for rows in (near, open_sky)]
    assert fixed_share[0] < 0.8 and fixed_share[1] == 1.0


@pytest.mark.parametrize('fix, overrides', [
    ('rtk_fixed', {}),
    ('dgps', {'gnss.corrections.rtk_max_age_s': 0.0}),
    ('single', {'gnss.corrections.rtk_max_age_s': 0.0, 'gnss.corrections.dgps_max_age_s': 0.0}),
])
def test_normalised_errors_of_long_runs_in_forced_states(fix, overrides):
    """error / reported sigma per axis: mean 0, standard deviation 1.  Epochs 20
    correlation times apart, so the samples are independent."""
    rx = receiver(**overrides)
    tau = {'rtk_fixed': 60.0, 'dgps': 120.0, 'single': 300.0}[fix]
    normalised = []
    for k in range(3000):
        row = rx.epoch(k * 20 * tau + 0.3, OPEN_FIELD)
        assert row['fix_type'] == fix
        error = np.subtract(row['position_enu_m'], OPEN_FIELD)
        normalised.append(error / np.array(row['sigma_enu_m']))
    normalised = np.array(normalised)
    n = len(normalised)
    assert np.all(np.abs(normalised.mean(axis=0)) < 5 / math.sqrt(n))
    assert np.all(np.abs(normalised.std(axis=0) - 1.0) < 5 / math.sqrt(2 * n))


def test_epoch_records_equal_single_epochs_and_refuse_time_going_back():
    times = ticks(30.0)
    antennas = np.array([OPEN_FIELD] * len(times)) + np.linspace(0.0, 30.0, len(times))[:, None]
    one = receiver()
    single = [one.epoch(t, a) for t, a in zip(times, antennas)]
    many = receiver()
    records = np.concatenate([many.epoch_records(times[:7], antennas[:7]),
                              many.epoch_records(times[7:], antennas[7:])])
    assert [many.row(t, a, r) for t, a, r in zip(times, antennas, records)] == single
    before = (many.rng.state.copy(), many.fix_state.copy(), many.u.copy(), many.last_t)
    with pytest.raises(ValueError, match='time must increase'):
        many.epoch_records(np.array([times[-1] + 0.1, times[-1] + 0.1]), antennas[:2])
    after = (many.rng.state, many.fix_state, many.u, many.last_t)
    assert all(np.array_equal(a, b) for a, b in zip(before, after))   # nothing drawn
