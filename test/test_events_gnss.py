"""The GNSS fault events of a scenario end to end (issue 14): headless
recordings with one kind of event each, their rows checked against references
written out here -- the fix-state rules and the time to fix with the epoch's
g_t drawn again from a fresh GNSS-error stream, an independent count of the
satellites behind a tree line, the effective C/N0 under interference (Kaplan &
Hegarty), the correction age of a message clock, the error model's sigmas --
and against the recording of the same run without the event.  A run whose
events never trigger writes the files of the run without them, byte for byte."""

import json
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from acres_sim.core.events import jammed_cn0_dbhz
from acres_sim.core.gnss.constellation import N_SATELLITES, satellite_los_enu
from acres_sim.core.gnss.corrections import correction_age
from acres_sim.core.rng import STREAMS, Pcg32
from acres_sim.core.scene import empty_scene
from acres_sim.pipeline.models import gnss_receiver, site_georeference
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions, resolve_run

DURATION_S = 60.0
EPOCH_S = 0.1                     # gnss.hz 10
EPS = 1e-9                        # a sample "at" a time (the event clock's tolerance is 1e-8)

# The parameters the references below use, pinned (not the schema's defaults).
T_MED, SIGMA_T, G_M = 8.0, 0.4, 2.0          # gnss.rtk.ttf_*
R_Q, T_Q = 0.25, 10.0                         # gnss.rtk.reacquire_factor, _window_s
T_C, T_L = 1.0, 0.3                           # gnss.corrections.interval_s, latency_s
RTK_MAX_AGE, DGPS_MAX_AGE = 10.0, 60.0        # gnss.corrections.*_max_age_s
BASELINE_KM, PPM_H, PPM_V = 5.0, 2.0, 3.0     # gnss.corrections.baseline_km, ppm_h, ppm_v
MASK_DEG = 10.0                               # gnss.elevation_mask_deg
PINNED = {
    'gnss.start': 'converged', 'gnss.hz': 1.0 / EPOCH_S, 'gnss.elevation_mask_deg': MASK_DEG,
    'gnss.rtk.ttf_median_s': T_MED, 'gnss.rtk.ttf_log_sigma': SIGMA_T,
    'gnss.rtk.ttf_multipath_gain': G_M, 'gnss.rtk.reacquire_factor': R_Q,
    'gnss.rtk.reacquire_window_s': T_Q, 'gnss.corrections.interval_s': T_C,
    'gnss.corrections.latency_s': T_L, 'gnss.corrections.rtk_max_age_s': RTK_MAX_AGE,
    'gnss.corrections.dgps_max_age_s': DGPS_MAX_AGE,
    'gnss.corrections.baseline_km': BASELINE_KM, 'gnss.corrections.ppm_h': PPM_H,
    'gnss.corrections.ppm_v': PPM_V,
}
RTK = ('rtk_float', 'rtk_fixed')
NAVSAT_NO_FIX = -1                            # sensor_msgs/NavSatStatus.STATUS_NO_FIX
FIX_TOPIC = '/gnss_receiver/fix'

# Kaplan & Hegarty's effective C/N0 and the docstring's open-sky C/N0 model.
CN0_ZENITH, CN0_HORIZON, TRACK_THRESHOLD, Q_RC = 48.0, 36.0, 28.0, 1.023e6


# ------------------------------------------------------------------ recordings

class Run(NamedTuple):
    scenario: Path
    options: RigOptions
    out: Path

    def rows(self, name='gnss.jsonl'):
        return [json.loads(line) for line in (self.out / name).read_text().splitlines()]

    def bytes(self, name):
        return (self.out / name).read_bytes()

    def config(self):
        return resolve_run(str(self.scenario), self.options).configs[0]

    def receiver(self):
        """A receiver of the run's configuration: its constellation, site frame and
        error seed are the recording's (they do not depend on the scene)."""
        config = self.config()
        return gnss_receiver(config, empty_scene(), site_georeference(config),
                             config['agent.index'])

    def fix_statuses(self):
        """(stamp [s] since the first message, NavSatStatus.status) of the bag's fixes."""
        store = get_typestore(Stores.ROS2_JAZZY)
        out = []
        with AnyReader([self.out / 'bag'], default_typestore=store) as reader:
            connections = [c for c in reader.connections if c.topic == FIX_TOPIC]
            for connection, _t, raw in reader.messages(connections=connections):
                msg = reader.deserialize(raw, connection.msgtype)
                out.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
                            msg.status.status))
        return [(t - out[0][0], status) for t, status in out]


def recording(tmp_path_factory, name, events=(), zones=None, duration=DURATION_S,
              open_field=True):
    folder = tmp_path_factory.mktemp(name)
    scenario = {'duration_s': duration, 'vehicles': [{'name': 'polaris', 'model': 'polaris'}]}
    if open_field:                            # no obstacle anywhere: every satellite clear
        (folder / 'open.yaml').write_text('scene: {name: open_field}\n')
        scenario['scene'] = 'open.yaml'
    if events:
        scenario['events'] = list(events)
    if zones:
        scenario['zones'] = zones
    path = folder / 'scenario.yaml'
    path.write_text(json.dumps(scenario))       # JSON is YAML
    options = RigOptions(duration_s=duration, overrides=dict(PINNED))
    record(RecordRequest(str(path), folder / 'out', options, progress=False))
    return Run(path, options, folder / 'out')


@pytest.fixture(scope='module')
def base(tmp_path_factory):
    """60 s of the Polaris's route in an open field, no event."""
    return recording(tmp_path_factory, 'base')


@pytest.fixture(scope='module')
def farm_base(tmp_path_factory):
    """The same in the packaged farmstead (from the garage past the buildings)."""
    return recording(tmp_path_factory, 'farm_base', open_field=False)


def within(t, start, end):
    return start - EPS <= t < end - EPS


def active(row, name):
    return name in row.get('events', ())


def g_t_draws(seed, n):
    """g_t of the first ``n`` epochs: a fresh GNSS-error stream draws 9 Gaussians,
    one uniform, then g_t at every epoch whatever the state."""
    stream = Pcg32(seed, STREAMS['gnss_errors'].sequence)
    out = []
    for _ in range(n):
        for _ in range(9):
            stream.gaussian()
        stream.uniform()
        out.append(stream.gaussian())
    return out


def time_to_fix(g_t, m, recent):
    return T_MED * math.exp(SIGMA_T * g_t) * (1.0 + G_M * m) * (R_Q if recent else 1.0)


def lines_of_sight(receiver, t):
    los = np.zeros((N_SATELLITES, 3))
    satellite_los_enu(t, receiver.constellation, receiver.site_frame, los)
    return los


def above_mask(los):
    """Elevations [deg] of the satellites at or above the mask (all systems are on)."""
    el = np.degrees(np.arcsin(np.clip(los[:, 2], -1.0, 1.0)))
    return el >= MASK_DEG, el


def assert_epochs(rows):
    """One row per epoch from t = 0 (no dropout): row k is epoch k."""
    assert [r['sample_time_s'] for r in rows] == pytest.approx(
        [k * EPOCH_S for k in range(len(rows))], abs=1e-9)


def without_events(row):
    return {k: v for k, v in row.items() if k != 'events'}


def same_row(a, b, ignore=()):
    skip = {'events', *ignore}
    return {k: v for k, v in a.items() if k not in skip} == \
        {k: v for k, v in b.items() if k not in skip}


# ------------------------------------------------------------------ 1. full denial

def test_full_denial_no_fix_then_reacquisition_with_the_streams_g_t(base, tmp_path_factory):
    # the first outage ends within the reacquire window of its loss, the second after it
    windows = {'short': (20.0, 26.0), 'long': (32.0, 48.0)}
    run = recording(tmp_path_factory, 'denial', [
        {'type': 'gnss_denial', 'name': name, 'start_s': t1, 'end_s': t2}
        for name, (t1, t2) in windows.items()])
    rows, plain = run.rows(), base.rows()
    assert_epochs(rows)
    g_t = g_t_draws(run.receiver().settings.error_seed, len(rows))
    statuses = run.fix_statuses()
    assert len(statuses) == len(rows)
    for k, (row, (stamp, status)) in enumerate(zip(rows, statuses)):
        t = row['sample_time_s']
        assert stamp == pytest.approx(t, abs=1e-6)
        names = [n for n, (t1, t2) in windows.items() if within(t, t1, t2)]
        assert row.get('events', []) == names, t
        if names:
            assert row['fix_type'] == 'no_fix' and row['satellites_used'] == 0, t
            assert row['satellites_blocked'] == row['satellites_above_mask'] > 0
            assert row['position_enu_m'] is None and row['rtk_lock_age_s'] is None
            assert status == NAVSAT_NO_FIX, t
        else:
            assert row['fix_type'] in RTK and status != NAVSAT_NO_FIX, t
        if t < windows['short'][0] - EPS:
            assert row == plain[k]                       # nothing changes before
    for name, (t1, t2) in windows.items():
        k = round(t2 / EPOCH_S)                          # the first epoch after the window
        row = rows[k]
        assert row['sample_time_s'] == pytest.approx(t2) and rows[k - 1]['fix_type'] == 'no_fix'
        assert row['fix_type'] in RTK and row['rtk_lock_age_s'] == 0.0   # a new lock
        recent = t2 - t1 <= T_Q                          # the loss was at t1
        assert recent == (name == 'short')
        assert row['rtk_time_to_fix_s'] == pytest.approx(
            time_to_fix(g_t[k], row['multipath_index'], recent), rel=1e-12)
        # the lock goes on from there (its age counts from the window's end)
        later = rows[k + 20]
        assert later['rtk_lock_age_s'] == pytest.approx(2.0) and \
            later['rtk_time_to_fix_s'] == row['rtk_time_to_fix_s']


# ------------------------------------------------------------------ 2. tree line

def test_tree_line_blocks_the_low_satellites_of_its_sector(base, tmp_path_factory):
    az_from, az_to, below = 180.0, 360.0, 40.0
    t1, t2 = 10.0, 50.0
    run = recording(tmp_path_factory, 'tree_line', [
        {'type': 'gnss_denial', 'name': 'tree_line', 'azimuth_deg': [az_from, az_to],
         'below_elevation_deg': below, 'start_s': t1, 'end_s': t2}])
    rows, plain = run.rows(), base.rows()
    assert_epochs(rows)
    receiver = run.receiver()
    counts = []
    for row, other in zip(rows, plain):
        t = row['sample_time_s']
        los = lines_of_sight(receiver, t)
        up, el = above_mask(los)
        az = np.degrees(np.arctan2(los[:, 0], los[:, 1])) % 360.0   # clockwise from north
        wall = up & (el < below) & (((az >= az_from) & (az <= az_to)) | (az == 0.0))
        expected = int(wall.sum()) if within(t, t1, t2) else 0
        counts.append(expected)
        assert row['satellites_above_mask'] == other['satellites_above_mask'] == int(up.sum())
        assert row['satellites_blocked'] == expected, t
        assert other['satellites_used'] - row['satellites_used'] == expected, t
        assert active(row, 'tree_line') == within(t, t1, t2)
    inside = [c for c, r in zip(counts, rows) if within(r['sample_time_s'], t1, t2)]
    assert min(inside) >= 2                                 # the wall does block


# ------------------------------------------------------------------ 3. jamming

def effective_cn0(cn0_dbhz, js_db):
    """Kaplan & Hegarty: (C/N0)_eff = 1 / (1 / (C/N0) + (J/S) / (Q R_c)), Q = 1."""
    return 10.0 * math.log10(1.0 / (10.0 ** (-cn0_dbhz / 10.0) + 10.0 ** (js_db / 10.0) / Q_RC))


def open_sky_cn0(sin_el):
    return CN0_HORIZON + (CN0_ZENITH - CN0_HORIZON) * max(sin_el, 0.0)


def noise_factor(cn0_dbhz, js_db):
    return math.sqrt(10.0 ** ((cn0_dbhz - effective_cn0(cn0_dbhz, js_db)) / 10.0))


def test_effective_cn0_under_interference():
    # values worked by hand: 45 dB-Hz is 31622.8 Hz, J/S 30 dB over Q R_c is 9.775e-4 s
    # -> 1 / (3.162e-5 + 9.775e-4) = 990.9 Hz = 29.96 dB-Hz
    assert jammed_cn0_dbhz(45.0, 1e3) == pytest.approx(29.9604, abs=1e-4)
    # 48 dB-Hz under J/S 60 dB: the jammer's term 0.97752 swamps 1.58e-5 -> 1.02298 Hz
    # = 0.0987 dB-Hz
    assert jammed_cn0_dbhz(48.0, 1e6) == pytest.approx(0.0987, abs=1e-4)
    # weak interference leaves the C/N0 as it is; J/S = Q R_c / C/N0 halves it (-3.01 dB)
    assert jammed_cn0_dbhz(40.0, 1e-6) == pytest.approx(40.0, abs=1e-7)
    assert jammed_cn0_dbhz(40.0, Q_RC / 1e4) == pytest.approx(40.0 - 10 * math.log10(2.0))
    for cn0 in (28.0, 36.0, 42.5, 48.0):
        for js_db in (-10.0, 0.0, 24.0, 37.0, 60.0):
            assert jammed_cn0_dbhz(cn0, 10.0 ** (js_db / 10.0)) == pytest.approx(
                effective_cn0(cn0, js_db), rel=1e-12)


def test_jamming_raises_the_white_noise_then_takes_the_fix(base, tmp_path_factory):
    moderate, strong = (10.0, 20.0, 24.0), (30.0, 40.0, 60.0)
    run = recording(tmp_path_factory, 'jamming', [
        {'type': 'jamming', 'name': name, 'j_over_s_db': js, 'start_s': t1, 'end_s': t2}
        for name, (t1, t2, js) in (('moderate', moderate), ('strong', strong))])
    rows, plain = run.rows(), base.rows()
    assert_epochs(rows)
    receiver = run.receiver()
    # the docstring's bounds: the factor at the zenith's and at the mask's C/N0
    high, low = noise_factor(CN0_ZENITH, 24.0), noise_factor(open_sky_cn0(
        math.sin(math.radians(MASK_DEG))), 24.0)
    assert 1.0 < low < high
    seen = 0
    for row, other in zip(rows, plain):
        t = row['sample_time_s']
        if within(t, *moderate[:2]):
            assert row['events'] == ['moderate']
            los = lines_of_sight(receiver, t)
            los = los[above_mask(los)[0]]          # open field: the used satellites
            # 24 dB loses no satellite: even at the mask (C/N0)_eff is above 28 dB-Hz
            assert all(effective_cn0(open_sky_cn0(lu), 24.0) > TRACK_THRESHOLD
                       for lu in los[:, 2])
            assert row['satellites_used'] == other['satellites_used'] == len(los)
            assert row['fix_type'] == other['fix_type'] in RTK
            factor = math.sqrt(np.mean([noise_factor(open_sky_cn0(lu), 24.0) ** 2
                                        for lu in los[:, 2]]))
            assert low < factor < high
            assert row['model']['sigma_white_enu_m'] == pytest.approx(
                [factor * s for s in other['model']['sigma_white_enu_m']], rel=1e-12)
            assert row['model']['sigma_gm_enu_m'] == other['model']['sigma_gm_enu_m']
            seen += 1
        elif within(t, *strong[:2]):
            assert row['events'] == ['strong']
            assert row['fix_type'] == 'no_fix' and row['satellites_used'] == 0, t
            assert row['satellites_blocked'] == row['satellites_above_mask'] > 0
            seen += 1
        elif t < strong[0]:
            assert same_row(row, other), t        # outside the jamming, the same epoch
        else:
            assert 'events' not in row and row['fix_type'] in RTK, t   # the fix is back
    assert seen == 200


# ------------------------------------------------------------------ 4. corrections

def expected_age(t, latency, lost=lambda j: False):
    """The age of the newest message that has arrived at ``t``: message j is sent at
    j T_c and arrives T_l later (converged start: the station has always sent)."""
    j = math.floor((t - latency) / T_C + 1e-9)
    while lost(j):
        j -= 1
    return t - j * T_C


def state_by_age(age):
    """The spec's rule in open sky (enough satellites): RTK up to rtk_max_age_s, then
    dgps up to dgps_max_age_s, then single."""
    if age <= RTK_MAX_AGE:
        return 'rtk'
    return 'dgps' if age <= DGPS_MAX_AGE else 'single'


def test_correction_outage_ages_the_corrections_and_leaves_rtk(tmp_path_factory):
    t1, t2 = 5.0, 95.0                                     # 90 s without messages
    run = recording(tmp_path_factory, 'outage', [
        {'type': 'corrections', 'name': 'outage', 'outage': True, 'start_s': t1,
         'duration_s': t2 - t1}], duration=100.0)
    rows = run.rows()
    assert_epochs(rows)

    def lost(j):                                           # it would have arrived meanwhile
        return t1 - EPS <= j * T_C + T_L < t2 - EPS

    ages = [r['correction_age_s'] for r in rows]
    states = []
    for k, row in enumerate(rows):
        t = row['sample_time_s']
        assert row['correction_age_s'] == pytest.approx(expected_age(t, T_L, lost), abs=1e-9)
        assert active(row, 'outage') == within(t, t1, t2)
        if t1 + T_L < t < t2 + T_L - EPS:                 # the last message held: +1 epoch
            assert ages[k] - ages[k - 1] == pytest.approx(EPOCH_S, abs=1e-9), t
        state = state_by_age(row['correction_age_s'])
        assert (row['fix_type'] in RTK) if state == 'rtk' else (row['fix_type'] == state), t
        states.append(state)
    assert {'rtk', 'dgps', 'single'} == set(states)
    # leaves RTK at the first epoch with an age above rtk_max_age_s, comes back once a
    # message generated after the outage arrives, with a new lock
    first_dgps = states.index('dgps')
    assert ages[first_dgps] > RTK_MAX_AGE >= ages[first_dgps - 1]
    back = max(k for k, s in enumerate(states) if s != 'rtk') + 1
    assert rows[back]['sample_time_s'] == pytest.approx(t2 + T_L)
    assert rows[back]['correction_age_s'] == pytest.approx(T_L)
    assert rows[back]['rtk_lock_age_s'] == 0.0
    assert rows[back - 1]['fix_type'] == 'single'


def rtk_sigma_gm(config, row, baseline_km):
    """The Gauss-Markov sigma (ENU) of an RTK row (errors.py): the state's sigmas,
    float converging from the initial ones since the lock, plus 1e-3 ppm baseline."""
    state, age = row['fix_type'], row['rtk_lock_age_s']

    def sigma(axis):
        s = config[f'gnss.states.{state}.sigma_{axis}_m']
        if state == 'rtk_float':
            s0 = config[f'gnss.states.rtk_float.initial_sigma_{axis}_m']
            s += (s0 - s) * math.exp(-age / config['gnss.states.rtk_float.convergence_tau_s'])
        return s
    s_h = sigma('h') + 1e-3 * PPM_H * baseline_km
    s_v = sigma('v') + 1e-3 * PPM_V * baseline_km
    k_h, k_v = row['model']['k_h'], row['model']['k_v']
    return [s_h * k_h, s_h * k_h, s_v * k_v]


def test_base_switch_restarts_the_lock_and_latency_sets_the_age(base, tmp_path_factory):
    switch, slow = (15.0, 30.0, 40.0), (40.0, 50.0, 0.75)   # (t1, t2, baseline / latency)
    run = recording(tmp_path_factory, 'corrections', [
        {'type': 'corrections', 'name': 'far_base', 'baseline_km': switch[2],
         'start_s': switch[0], 'end_s': switch[1]},
        {'type': 'corrections', 'name': 'slow', 'latency_s': slow[2], 'start_s': slow[0],
         'end_s': slow[1]}])
    rows, plain = run.rows(), base.rows()
    assert_epochs(rows)
    config = run.config()
    g_t = g_t_draws(run.receiver().settings.error_seed, len(rows))
    no_outages = np.zeros((0, 2))
    for k, row in enumerate(rows):
        t = row['sample_time_s']
        latency = slow[2] if within(t, *slow[:2]) else T_L
        assert active(row, 'slow') == within(t, *slow[:2])
        assert row['correction_age_s'] == pytest.approx(
            correction_age(t, T_C, latency, no_outages, False), abs=1e-12)
        assert row['correction_age_s'] == pytest.approx(expected_age(t, latency), abs=1e-9)
        assert row['fix_type'] in RTK, t
        far = within(t, *switch[:2])
        assert active(row, 'far_base') == far
        assert row['model']['sigma_gm_enu_m'] == pytest.approx(
            rtk_sigma_gm(config, row, switch[2] if far else BASELINE_KM), rel=1e-12), t
        if t < switch[0] - EPS:
            assert row == plain[k]
            assert row['rtk_lock_age_s'] == pytest.approx(600.0 + t)   # the converged lock
        elif t < switch[1] - EPS:
            assert row['rtk_lock_age_s'] == pytest.approx(t - switch[0], abs=1e-9)
        else:
            assert row['rtk_lock_age_s'] == pytest.approx(t - switch[1], abs=1e-9)
    for t_switch in switch[:2]:                            # the lock restarts at each switch
        k = round(t_switch / EPOCH_S)
        assert rows[k]['rtk_lock_age_s'] == 0.0 and rows[k]['fix_type'] == 'rtk_float'
        assert rows[k]['rtk_time_to_fix_s'] == pytest.approx(
            time_to_fix(g_t[k], rows[k]['multipath_index'], True), rel=1e-12)
    # the far base's error: in the window the sigma is the near one's plus 1e-3 ppm (B - b)
    window = [r for r in rows if within(r['sample_time_s'], *switch[:2])]
    assert {r['fix_type'] for r in window} == set(RTK)
    for row in window:
        near = rtk_sigma_gm(config, row, BASELINE_KM)
        grow = [1e-3 * PPM_H * (switch[2] - BASELINE_KM) * row['model']['k_h']] * 2 + \
            [1e-3 * PPM_V * (switch[2] - BASELINE_KM) * row['model']['k_v']]
        assert [a - b for a, b in zip(row['model']['sigma_gm_enu_m'], near)] == \
            pytest.approx(grow, rel=1e-9)


# ------------------------------------------------------------------ 5. fix cap

def test_fix_cap_dgps_reports_dgps_with_the_dgps_sigmas(base, tmp_path_factory):
    t1, t2 = 20.0, 40.0
    run = recording(tmp_path_factory, 'fix_cap', [
        {'type': 'fix_cap', 'name': 'cap', 'state': 'dgps', 'start_s': t1, 'end_s': t2}])
    rows, plain = run.rows(), base.rows()
    assert_epochs(rows)
    config = run.config()

    def dgps(field):
        return config[f'gnss.states.dgps.{field}']
    ratio = config['gnss.multipath_vertical_ratio']
    inside = 0
    for k, row in enumerate(rows):
        t = row['sample_time_s']
        assert row['satellites_used'] == plain[k]['satellites_used']
        if within(t, t1, t2):
            inside += 1
            assert row['events'] == ['cap']
            assert row['fix_type'] == 'dgps' and row['gga_quality'] == 2, t
            # the lock behind the cap is not reported: a dgps row has none, as without a cap
            assert row['rtk_lock_age_s'] is None and row['rtk_time_to_fix_s'] is None
            k_h, k_v, m = row['model']['k_h'], row['model']['k_v'], row['multipath_index']
            gm = [dgps('sigma_h_m') * k_h] * 2 + [dgps('sigma_v_m') * k_v]
            white = [dgps('white_h_m') * k_h] * 2 + [dgps('white_v_m') * k_v]
            mp = [m * dgps('multipath_h_m')] * 2 + [m * dgps('multipath_h_m') * ratio]
            assert row['model']['tau_s'] == dgps('tau_s')
            assert row['model']['sigma_gm_enu_m'] == pytest.approx(gm, rel=1e-12)
            assert row['model']['sigma_white_enu_m'] == pytest.approx(white, rel=1e-12)
            assert row['sigma_enu_m'] == pytest.approx(
                [math.sqrt(a * a + b * b + c * c) for a, b, c in zip(gm, white, mp)],
                rel=1e-12)
        else:
            assert 'events' not in row and row['fix_type'] in RTK, t
            if t < t1:
                assert row == plain[k]
            else:                     # the lock was held under the cap: RTK at once
                assert row['fix_type'] == plain[k]['fix_type']
    assert inside == round((t2 - t1) / EPOCH_S)


# ------------------------------------------------------------------ 6. multipath

def test_multipath_zone_adds_its_reflector_index(farm_base, tmp_path_factory):
    centre, radius, extra, strong = (0.0, 0.0), 25.0, 0.4, (40.0, 50.0, 3.0)
    run = recording(tmp_path_factory, 'multipath', [
        {'type': 'multipath', 'name': 'yard_echo', 'zone': 'yard', 'reflector_index': extra},
        {'type': 'multipath', 'name': 'strong', 'start_s': strong[0], 'end_s': strong[1],
         'reflector_index': strong[2]}],
        zones={'yard': {'center': list(centre), 'radius_m': radius}}, open_field=False)
    rows, plain = run.rows(), farm_base.rows()
    assert_epochs(rows)
    truth = {round(r['time_s'] / EPOCH_S): r['chassis']['position_enu_m']
             for r in run.rows('truth.jsonl')
             if abs(r['time_s'] / EPOCH_S - round(r['time_s'] / EPOCH_S)) < 1e-6}
    seen = {'yard_echo': 0, 'strong': 0, 'both': 0}
    for k, (row, other) in enumerate(zip(rows, plain)):
        t = row['sample_time_s']
        e, n, _u = truth[k]
        distance = math.hypot(e - centre[0], n - centre[1])
        if abs(distance - radius) > 0.5:                   # the chassis origin is in the zone
            assert active(row, 'yard_echo') == (distance < radius), t
        assert active(row, 'strong') == within(t, *strong[:2])
        added = extra * active(row, 'yard_echo') + strong[2] * active(row, 'strong')
        for key in ('satellites_used', 'satellites_clear', 'satellites_near_obstruction',
                    'satellites_foliage', 'satellites_blocked', 'hdop'):
            assert row[key] == other[key], (t, key)
        assert row['reflector_index'] == other['reflector_index'] + added, t
        share = (row['satellites_near_obstruction'] + 0.5 * row['satellites_foliage']) / \
            max(row['satellites_used'], 1)
        assert row['multipath_index'] == pytest.approx(
            min(share + 0.5 * row['reflector_index'], 1.0), abs=1e-15), t
        if not added:
            assert row['multipath_index'] == other['multipath_index']
        for name in ('yard_echo', 'strong'):
            seen[name] += active(row, name)
        seen['both'] += active(row, 'yard_echo') and other['reflector_index'] > 0
    assert seen['yard_echo'] > 50 and seen['strong'] == 100
    assert seen['both'] > 0               # inside the zone over the farmstead's own reflectors
    assert any(r['multipath_index'] == 1.0 for r in rows if active(r, 'strong'))


# ------------------------------------------------------------------ 7. glitch

POSITION_KEYS = ('position_enu_m', 'nmea_gga') + tuple(
    prefix + key for prefix in ('', 'wgs84_', 'nad83_harn_', 'nad83_2011_')
    for key in ('latitude_deg', 'longitude_deg', 'ellipsoidal_height_m')) + (
    'altitude_navd88_m', 'geoid_undulation_nad83_m')


def test_glitch_moves_the_position_only(base, tmp_path_factory):
    t1, t2 = 20.0, 30.0
    offset, drift = [1.5, -2.0, 0.5], [0.1, 0.0, -0.05]
    run = recording(tmp_path_factory, 'glitch', [
        {'type': 'glitch', 'name': 'jump', 'start_s': t1, 'end_s': t2, 'offset_enu_m': offset,
         'drift_enu_mps': drift}])
    rows, plain = run.rows(), base.rows()
    assert_epochs(rows)
    inside = 0
    for row, other in zip(rows, plain):
        t = row['sample_time_s']
        if within(t, t1, t2):
            inside += 1
            assert row['events'] == ['jump']
            moved = [a - b for a, b in zip(row['position_enu_m'], other['position_enu_m'])]
            assert moved == pytest.approx(
                [o + d * (t - t1) for o, d in zip(offset, drift)], abs=1e-9), t
            assert row['sigma_enu_m'] == other['sigma_enu_m']
            assert same_row(row, other, POSITION_KEYS), t
            assert row['latitude_deg'] != other['latitude_deg']
        else:
            assert row == other, t
    assert inside == 100
    for name in ('imu.jsonl', 'ins.jsonl', 'truth.jsonl'):     # the GNSS rows only
        mine, theirs = run.bytes(name).splitlines(), base.bytes(name).splitlines()
        assert len(mine) == len(theirs)
        for a, b in zip(mine, theirs):          # the same but for the events' names
            assert a == b or without_events(json.loads(a)) == json.loads(b), name


# ------------------------------------------------------------------ 8. determinism

def test_events_that_never_trigger_change_nothing(farm_base, tmp_path_factory):
    far = {'center': [5000.0, 5000.0], 'radius_m': 10.0}
    late = {'start_s': 1000.0, 'end_s': 1100.0}         # after the run
    gnss_kinds = [
        {'type': 'gnss_denial'}, {'type': 'gnss_denial', 'azimuth_deg': [0, 90]},
        {'type': 'jamming', 'j_over_s_db': 60.0},
        {'type': 'corrections', 'outage': True},
        {'type': 'corrections', 'latency_s': 5.0, 'baseline_km': 50.0},
        {'type': 'fix_cap', 'state': 'single'}, {'type': 'multipath', 'reflector_index': 2.0},
        {'type': 'glitch', 'offset_enu_m': [3.0, 0.0, 0.0], 'drift_enu_mps': [0.0, 1.0, 0.0]}]
    events = [dict(kind, zone='far') for kind in gnss_kinds] + \
        [dict(kind, **late) for kind in gnss_kinds] + \
        [dict(kind, start_zone={'center': [-4000.0, 0.0], 'radius_m': 50.0})
         for kind in gnss_kinds[:2]]
    run = recording(tmp_path_factory, 'never', events, zones={'far': far}, open_field=False)
    assert not any('events' in row for row in run.rows())
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'):
        assert run.bytes(name) == farm_base.bytes(name), name
