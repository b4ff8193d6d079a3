"""Fault events in headless recordings (#14), checked against the same run
without events: the IMU faults add, ramp, scale and clip exactly what they
say in their window and nothing outside it; dropout and freeze of the GNSS
receiver, the IMU and the INS in the rows and in the bag, the ground truth
untouched; a teleport, a stop and a zone along a real drive; bad events
refused in one line with nothing written."""

import json
import math
from pathlib import Path
import struct
import subprocess
import sys

import pytest
import yaml

from acres_sim.config import ConfigError
from acres_sim.config.events import read_events
from acres_sim.config.scenario import read_scenario
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

DURATION_S = 40.0
G = 9.80665                  # standard gravity [m/s^2], as the INS reports it
HZ = 120                     # physics steps per second: every sample time is k / 120
VEHICLES = [{'name': 'polaris', 'model': 'polaris'}]

# The fault run: each event in a window of its own, the rest of the run as without events.
BIAS = {'accel_mps2': [0.5, -0.25, 0.125], 'gyro_radps': [0.01, -0.02, 0.03]}
RAMP = {'accel_mps2_per_s': [0.2, 0.0, -0.1], 'gyro_radps_per_s': [0.0, 0.001, -0.002]}
SCALE = {'accel': [2.0, 0.5, 1.5], 'gyro': [3.0, 1.0, -1.0]}
SATURATION = {'accel_mps2': 1.0, 'gyro_radps': 0.05}
WINDOWS = {'bias': (10.0, 12.0), 'ramp': (13.0, 15.0), 'scale': (16.0, 18.0),
           'sat': (19.0, 21.0), 'drop': (22.0, 25.0), 'frz': (27.0, 30.0)}
FAULT_EVENTS = [
    {'type': 'imu_bias', 'name': 'bias', 'start_s': 10, 'duration_s': 2, **BIAS},
    {'type': 'imu_bias_ramp', 'name': 'ramp', 'start_s': 13, 'end_s': 15, **RAMP},
    {'type': 'imu_scale', 'name': 'scale', 'start_s': 16, 'duration_s': 2, **SCALE},
    {'type': 'imu_saturation', 'name': 'sat', 'start_s': 19, 'duration_s': 2, **SATURATION},
    {'type': 'dropout', 'name': 'drop', 'start_s': 22, 'duration_s': 3,
     'sensors': ['gnss', 'imu', 'ins']},
    {'type': 'freeze', 'name': 'frz', 'start_s': 27, 'end_s': 30,
     'sensors': ['gnss', 'imu', 'ins']},
]

# The motion run (noise off): through a zone at the first bend of the default
# route (acre_demo: east to (19.5, 0), then south), a stop, a teleport ahead
# beside the lane that runs east at north = -36.5 m from east 19.5 m to 80 m.
BEND = (20.0, -12.0, 5.0)           # centre east, north, radius [m]
STOP = (18.0, 22.0)
JUMP_S, JUMP_POSE = 28.0, (40.0, -32.0, 10.0)     # east, north [m], heading [deg]
LANE_NORTH_M, LANE_EAST_M = -36.5, (25.5, 74.0)   # its straight part, off the turns
HOP_S, HOP_POSE = 38.005, (70.0, -36.5, 0.0)      # on the lane; at step 4561 (38.0083 s)
MOTION_EVENTS = [
    {'type': 'multipath', 'name': 'in_bend', 'zone': 'bend', 'reflector_index': 0.5},
    {'type': 'stop', 'name': 'halt', 'start_s': STOP[0], 'end_s': STOP[1]},
    {'type': 'teleport', 'name': 'jump', 'start_s': JUMP_S, 'east_m': JUMP_POSE[0],
     'north_m': JUMP_POSE[1], 'heading_deg': JUMP_POSE[2]},
    # at a step between two truth rows (they are at 100 Hz): only the clock sees it
    {'type': 'teleport', 'name': 'hop', 'start_s': HOP_S, 'east_m': HOP_POSE[0],
     'north_m': HOP_POSE[1], 'heading_deg': HOP_POSE[2]},
]
MOTION_ZONES = {'bend': {'center': list(BEND[:2]), 'radius_m': BEND[2]}}

INS_TOPICS = ('/vehicle/odom', '/oxts/fix', '/oxts/imu', '/oxts/velocity')
GNSS_TOPICS = ('/gnss_receiver/fix', '/diagnostics')     # and /gnss_receiver/nmea
IMU_TOPICS = ('/imu/data_raw',)
TIMES = ('sample_time_s', 'available_time_s', 'delivery_time_s')


# ---------------------------------------------------------------------------- runs

def _record(folder, events=None, zones=None, noise=None):
    folder.mkdir()
    tree = {'duration_s': DURATION_S, 'vehicles': VEHICLES}
    if events:
        tree['events'] = events
    if zones:
        tree['zones'] = zones
    scenario = folder / 'scenario.yaml'
    scenario.write_text(yaml.safe_dump(tree))
    out = folder / 'out'
    record(RecordRequest(str(scenario), out, RigOptions(duration_s=DURATION_S, noise=noise),
                         progress=False))
    return out


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """(the run without events, the fault run): same scenario, seed and noise."""
    root = tmp_path_factory.mktemp('events_vehicle')
    return _record(root / 'base'), _record(root / 'faults', FAULT_EVENTS)


@pytest.fixture(scope='module')
def motion(tmp_path_factory):
    return _record(tmp_path_factory.mktemp('events_motion') / 'motion', MOTION_EVENTS,
                   MOTION_ZONES, noise=False)


def lines(path):
    return Path(path).read_text().splitlines()


def rows(path):
    return [json.loads(line) for line in lines(path)]


def step(t):
    """The physics step of a sample time (every time in the files is k / 120)."""
    k = round(t * HZ)
    assert abs(k / HZ - t) < 1e-9, t
    return k


def by_step(folder, name):
    """{step: (row, its line)} of ``name``.jsonl."""
    out = {}
    for line in lines(folder / f'{name}.jsonl'):
        row = json.loads(line)
        out[step(row['sample_time_s'] if 'sample_time_s' in row else row['time_s'])] = (row, line)
    return out


def inside(k, window):
    """Whether step k lies in [start, end) of ``window`` [s]."""
    return window[0] * HZ - 1e-6 <= k < window[1] * HZ - 1e-6


def in_any_window(k):
    return any(inside(k, w) for w in WINDOWS.values())


def bag_stamps(folder):
    """{topic: [(sample step, CDR bytes)]} of a recording's bag, the sample step
    read from the header stamp (the first field of each of these messages)
    against /clock's first stamp (step 0); the NMEA strings, which have none,
    take the stamps of the receiver's fixes, one each, in order."""
    from rosbags.rosbag2 import Reader

    messages = {}
    with Reader(Path(folder) / 'bag') as reader:
        for connection, _t, data in reader.messages():
            messages.setdefault(connection.topic, []).append(bytes(data))
    sec, nsec = struct.unpack_from('<iI', messages['/clock'][0], 4)
    t0_ns = sec * 10**9 + nsec
    out = {}
    for topic, datas in messages.items():
        if topic in ('/clock', '/tf', '/tf_static', '/gnss_receiver/nmea'):
            continue
        stamps = [struct.unpack_from('<iI', data, 4) for data in datas]
        out[topic] = [(round((sec * 10**9 + nsec - t0_ns) / 1e9 * HZ), data)
                      for (sec, nsec), data in zip(stamps, datas)]
    # /diagnostics: the receiver's statuses (the vehicle's event status is its own series)
    out['/diagnostics'] = [(k, data) for k, data in out['/diagnostics']
                           if b'gnss_receiver' in data]
    # each fix has its GGA, and after it (gnss.nmea.gst) its GST: both take its
    # stamp, the GSTs in a series of their own ('/gnss_receiver/nmea#gst')
    nmea, fixes = messages['/gnss_receiver/nmea'], out['/gnss_receiver/fix']
    gga = [data for data in nmea if b'$GNGGA,' in data]
    gst = [data for data in nmea if b'$GNGST,' in data]
    assert len(gga) == len(fixes) == len(gst) and len(nmea) == len(gga) + len(gst)
    assert all(b'$GNGGA,' in nmea[i] for i in range(0, len(nmea), 2))
    out['/gnss_receiver/nmea'] = [(k, data) for (k, _fix), data in zip(fixes, gga)]
    out['/gnss_receiver/nmea#gst'] = [(k, data) for (k, _fix), data in zip(fixes, gst)]
    return out


# ---------------------------------------------------------------------------- 1. IMU faults

def _imu(folder):
    return {k: (row['specific_force_flu_mps2'] + row['angular_velocity_flu_radps'], row, line)
            for k, (row, line) in by_step(folder, 'imu').items()}


def _window_pairs(runs, name):
    base, faults = (_imu(folder) for folder in runs)
    pairs = [(k / HZ, base[k][0], faults[k][0]) for k in sorted(base)
             if inside(k, WINDOWS[name])]
    assert len(pairs) >= 200, len(pairs)        # 2 s of the IMU at 120 Hz, less a few
    return pairs


TOLERANCE = [1e-6] * 3 + [1e-8] * 3     # the rounding of the rows: 6 and 8 decimals


def test_outside_the_windows_every_row_is_the_row_of_the_run_without_events(runs):
    """Same noise before, between and after the events: every imu, gnss, ins
    and truth line outside the windows is the line of the run without events,
    byte for byte, and has no events key; the rows in a window name it."""
    base, faults = runs
    for name in ('imu', 'gnss', 'ins', 'truth'):
        b, f = by_step(base, name), by_step(faults, name)
        outside = [k for k in b if not in_any_window(k)]
        assert len(outside) > 0.6 * len(b)
        for k in outside:
            assert f[k][1] == b[k][1], (name, k / HZ)
            assert 'events' not in f[k][0]
        for k, (row, _line) in f.items():
            names = [n for n, w in WINDOWS.items() if inside(k, w)]
            assert row.get('events', []) == names, (name, k / HZ)


def test_a_bias_step_adds_exactly_the_bias_in_its_window(runs):
    bias = BIAS['accel_mps2'] + BIAS['gyro_radps']
    for _t, b, f in _window_pairs(runs, 'bias'):
        for j in range(6):
            assert abs(f[j] - b[j] - bias[j]) <= TOLERANCE[j] * 1.0001, (_t, j)


def test_a_bias_ramp_adds_its_rate_times_the_time_since_its_start(runs):
    rate = RAMP['accel_mps2_per_s'] + RAMP['gyro_radps_per_s']
    start = WINDOWS['ramp'][0]
    pairs = _window_pairs(runs, 'ramp')
    for t, b, f in pairs:
        for j in range(6):
            assert abs(f[j] - b[j] - rate[j] * (t - start)) <= TOLERANCE[j] * 1.0001, (t, j)
    t, b, f = pairs[-1]            # near its end the ramp is 2 s long: well above the rounding
    assert abs(f[0] - b[0]) > 0.39


def test_a_scale_factor_multiplies_every_value(runs):
    """The rounded row of scale * x against scale * (x rounded): apart by at
    most half a rounding step of each (x itself is unrounded in the model)."""
    scale = SCALE['accel'] + SCALE['gyro']
    for t, b, f in _window_pairs(runs, 'scale'):
        for j in range(6):
            assert abs(f[j] - scale[j] * b[j]) <= (abs(scale[j]) + 1) * TOLERANCE[j] / 2 * 1.0001
    assert any(abs(b[5]) > 0.01 for _t, b, _f in _window_pairs(runs, 'scale'))  # not all ~0


def test_saturation_clips_every_value_to_its_limit_only_in_its_window(runs):
    limits = [SATURATION['accel_mps2']] * 3 + [SATURATION['gyro_radps']] * 3
    pairs = _window_pairs(runs, 'sat')
    clipped = 0
    for t, b, f in pairs:
        for j in range(6):
            assert f[j] == min(max(b[j], -limits[j]), limits[j]), (t, j)
            clipped += abs(b[j]) > limits[j]
    # the vertical specific force (~g) is clipped at every sample, the yaw rate in the turn
    assert clipped > len(pairs) + 50
    # only in it: just before and just after, the fault run's vertical specific force is ~g
    start, end = WINDOWS['sat']
    near = [v for k, (v, _r, _l) in _imu(runs[1]).items()
            if (start - 0.5) * HZ <= k < start * HZ or end * HZ <= k < (end + 0.5) * HZ]
    assert len(near) > 100 and all(v[2] > 9.0 for v in near)


# ---------------------------------------------------------------------------- 2. dropout

def test_a_dropout_leaves_no_rows_in_its_window_and_the_same_rows_after(runs):
    base, faults = runs
    window = WINDOWS['drop']
    for name in ('gnss', 'imu', 'ins'):
        b, f = by_step(base, name), by_step(faults, name)
        dropped = [k for k in b if inside(k, window)]
        assert len(dropped) >= 25, name              # 3 s of the slowest, 10 Hz
        assert sorted(f) == sorted(k for k in b if not inside(k, window)), name
        after = [k for k in b if window[1] * HZ <= k < WINDOWS['frz'][0] * HZ]
        assert after and all(f[k][1] == b[k][1] for k in after), name
    # the truth keeps every row, as it is without the event (the INS point's too)
    b, f = by_step(base, 'truth'), by_step(faults, 'truth')
    assert sorted(f) == sorted(b)
    for k in (k for k in b if inside(k, window)):
        row = dict(f[k][0])
        assert row.pop('events') == ['drop']
        assert row == b[k][0], k / HZ


def test_a_dropout_leaves_no_messages_of_the_sensor_in_the_bag(runs):
    """No message of the sensor's topics sampled in the window; the others
    as in the run without events; the ground truth odometry keeps coming,
    every message as without events."""
    base, faults = (bag_stamps(folder) for folder in runs)
    window = WINDOWS['drop']
    for topic in INS_TOPICS + GNSS_TOPICS + IMU_TOPICS + ('/gnss_receiver/nmea',
                                                         '/gnss_receiver/nmea#gst'):
        b, f = base[topic], faults[topic]
        expected = [k for k, _data in b if not inside(k, window)]
        assert len(expected) < len(b), topic
        assert [k for k, _data in f] == expected, topic
        kept = dict(f)
        after = [(k, data) for k, data in b if window[1] * HZ <= k < WINDOWS['frz'][0] * HZ]
        assert after and all(kept[k] == data for k, data in after), topic   # after it: the same
    assert faults['/sim/ground_truth/odom'] == base['/sim/ground_truth/odom']
    assert any(inside(k, window) for k, _data in faults['/sim/ground_truth/odom'])


# ---------------------------------------------------------------------------- 3. freeze

def _frozen(runs, name):
    """The rows of ``name`` in the freeze window of both runs, and the fault
    run's last row before it."""
    base, faults = (by_step(folder, name) for folder in runs)
    window = WINDOWS['frz']
    before = max(k for k in faults if k < window[0] * HZ)
    inner = [k for k in sorted(base) if inside(k, window)]
    assert len(inner) >= 25 and sorted(k for k in faults if inside(k, window)) == inner
    return base, faults, faults[before][0], inner


def _without(row, *keys):
    return {k: v for k, v in row.items() if k not in keys}


def test_a_freeze_repeats_the_last_imu_row_at_new_times(runs):
    base, faults, last, inner = _frozen(runs, 'imu')
    for k in inner:
        row = faults[k][0]
        assert _without(row, *TIMES, 'events') == _without(last, *TIMES)
        assert [row[t] for t in TIMES] == [base[k][0][t] for t in TIMES]   # times advance
        assert row['events'] == ['frz']
    assert any(_without(base[k][0], *TIMES) != _without(last, *TIMES) for k in inner)
    # the messages too: imu/data_raw carries the frozen values, stamped anew
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    frozen = [data for k, data in bag_stamps(runs[1])['/imu/data_raw'] if inside(k, WINDOWS['frz'])]
    assert len(frozen) == len(inner)
    for data in frozen:
        message = store.deserialize_cdr(data, 'sensor_msgs/msg/Imu')
        a, w = message.linear_acceleration, message.angular_velocity
        assert [a.x, a.y, a.z] == last['specific_force_flu_mps2']
        assert [w.x, w.y, w.z] == last['angular_velocity_flu_radps']


GNSS_TRUTH = ('true_antenna_enu_m', 'true_latitude_deg', 'true_longitude_deg',
              'true_ellipsoidal_height_m')


def test_a_freeze_repeats_the_last_gnss_row_at_new_times_and_keeps_its_truth_fresh(runs):
    base, faults, last, inner = _frozen(runs, 'gnss')
    assert last['position_enu_m'] is not None          # a fix to freeze
    for k in inner:
        row = faults[k][0]
        assert _without(row, *TIMES, 'events', *GNSS_TRUTH) == _without(last, *TIMES, *GNSS_TRUTH)
        assert [row[t] for t in TIMES] == [base[k][0][t] for t in TIMES]
        assert [row[t] for t in GNSS_TRUTH] == [base[k][0][t] for t in GNSS_TRUTH]
        assert list(_without(row, 'events')) == list(base[k][0])      # keys in their order
    assert any(base[k][0]['position_enu_m'] != last['position_enu_m'] for k in inner)
    assert len({json.dumps(faults[k][0]['true_antenna_enu_m']) for k in inner}) == len(inner)


def test_a_freeze_repeats_the_ins_outputs_and_keeps_its_truth_fresh(runs):
    base, faults, last, inner = _frozen(runs, 'ins')
    for k in inner:
        row = faults[k][0]
        assert _without(row, *TIMES, 'events', 'truth') == _without(last, *TIMES, 'truth')
        assert row['truth'] == base[k][0]['truth']
        assert [row[t] for t in TIMES] == [base[k][0][t] for t in TIMES]
    assert len({json.dumps(faults[k][0]['truth']) for k in inner}) == len(inner)   # it moves


def test_the_episode_lists_each_event_and_its_window(runs):
    episode = json.loads((runs[1] / 'episode.json').read_text())
    assert [e['name'] for e in episode['events']] == list(WINDOWS)
    assert {e['name']: e['active_s'] for e in episode['vehicles'][0]['events']} == \
        {name: [list(w)] for name, w in WINDOWS.items()}
    base = json.loads((runs[0] / 'episode.json').read_text())
    assert base['events'] == [] and base['vehicles'][0]['events'] == []


# ---------------------------------------------------------------------------- 4. teleport

def _yaw(q):
    x, y, z, w = q
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def _rotate_back(q, v):
    """R(q)^T v for a unit quaternion q (x, y, z, w): body axes of an ENU vector."""
    x, y, z, w = q
    R = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    return [sum(R[i][j] * v[i] for i in range(3)) for j in range(3)]


def _speed(row):
    return math.hypot(*row['chassis']['velocity_com_enu_mps'][:2])


def test_a_teleport_puts_the_vehicle_at_its_pose_and_it_drives_on(motion):
    truth = rows(motion / 'truth.jsonl')
    at = next(i for i, r in enumerate(truth) if r['time_s'] >= JUMP_S - 1e-9)
    before, after = truth[at - 1]['chassis'], truth[at]['chassis']
    assert truth[at]['time_s'] == JUMP_S and truth[at]['events'] == ['jump']
    east, north, heading = JUMP_POSE
    p = after['position_enu_m']
    assert math.hypot(p[0] - east, p[1] - north) < 1e-9
    ground = truth[0]["chassis"]["position_enu_m"][2]       # parked at the spawn
    assert p[2] == pytest.approx(ground, abs=1e-9)           # on the ground
    assert math.degrees(_yaw(after['orientation_enu_xyzw'])) == pytest.approx(heading, abs=1e-6)
    assert after['orientation_enu_xyzw'][:2] == pytest.approx([0.0, 0.0], abs=1e-9)   # level
    assert _speed(truth[at]) < 1e-9                                                 # parked
    jump = math.dist(before['position_enu_m'][:2], p[:2])
    assert jump > 10.0 and _speed(truth[at - 1]) > 2.0
    # then it drives on: back onto the lane (5.5 m beside it), eastwards
    later = [r for r in truth if JUMP_S < r['time_s'] <= JUMP_S + 8.0]
    on_lane = [r for r in later if LANE_EAST_M[0] < r['chassis']['position_enu_m'][0]
               < LANE_EAST_M[1] and abs(r['chassis']['position_enu_m'][1] - LANE_NORTH_M) < 0.5]
    assert on_lane and _speed(on_lane[0]) > 2.0
    assert later[-1]['chassis']['position_enu_m'][0] > east + 20.0


def test_a_teleport_restarts_the_imu_differences_no_spike(motion):
    """Without the restart the IMU would see tens of metres in one step (some
    10^5 m/s^2); around the jump its specific force stays within a few m/s^2
    of gravity."""
    near = [r for r in rows(motion / 'imu.jsonl') if abs(r['sample_time_s'] - JUMP_S) <= 1.0]
    assert len(near) > 200
    assert any(r['sample_time_s'] > JUMP_S for r in near)
    for r in near:
        assert abs(math.hypot(*r['specific_force_flu_mps2']) - G) < 3.0, r['sample_time_s']
        assert max(abs(v) for v in r['angular_velocity_flu_radps']) < 1.0, r['sample_time_s']


def test_the_first_ins_epoch_after_a_teleport_reports_gravity_only(motion):
    """Noise off: the epoch's specific force is R^T (0, 0, g) of the true
    attitude, nothing of the velocity change; the epoch before is not."""
    ins = rows(motion / 'ins.jsonl')
    at = next(i for i, r in enumerate(ins) if r['sample_time_s'] >= JUMP_S - 1e-9)
    assert ins[at]['sample_time_s'] - JUMP_S < 0.01 + 1e-9     # the first epoch at or after it

    def off_gravity(row):
        gravity = _rotate_back(row['truth']['orientation_enu_xyzw'], [0.0, 0.0, G])
        return max(abs(a - b) for a, b in zip(row['imu']['linear_acceleration_flu_mps2'],
                                             gravity))
    assert off_gravity(ins[at]) < 1e-9
    assert off_gravity(ins[at - 1]) > 0.5           # the vehicle was speeding up before it


# ---------------------------------------------------------------------------- 5. stop

def test_a_stop_holds_the_vehicle_and_it_moves_again_after(motion):
    truth = rows(motion / 'truth.jsonl')

    def at(t):
        return next(r for r in truth if r['time_s'] >= t - 1e-9)
    assert _speed(at(STOP[0])) > 2.0                              # moving when it starts
    held = [r for r in truth if STOP[0] + 3.0 <= r['time_s'] < STOP[1]]
    assert held and all(_speed(r) < 0.01 for r in held)
    assert all(r['events'] == ['halt'] for r in truth if STOP[0] <= r['time_s'] < STOP[1])
    first, last = held[0]['chassis']['position_enu_m'], held[-1]['chassis']['position_enu_m']
    assert math.dist(first, last) < 0.01
    assert _speed(at(STOP[1] + 3.0)) > 1.0
    assert math.dist(at(STOP[1] + 3.0)['chassis']['position_enu_m'], last) > 1.0
    assert not any(r.get('events') == ['halt'] for r in truth if r['time_s'] >= STOP[1])


def test_the_episode_gives_when_each_motion_event_was_active(motion):
    """A teleport is active for the one physics step it happens at, also when
    no row is sampled at that step (the truth and the INS at 100 Hz, the IMU
    restarting its differences); the zone event from the step the chassis
    entered the circle to the step it left it."""
    episode = json.loads((motion / 'episode.json').read_text())
    active = {e['name']: e['active_s'] for e in episode['vehicles'][0]['events']}
    hop = math.ceil(HOP_S * HZ)
    assert active['jump'] == [[JUMP_S, (JUMP_S * HZ + 1) / HZ]]
    assert active['hop'] == [[hop / HZ, (hop + 1) / HZ]]
    assert active['halt'] == [list(STOP)]
    truth = rows(motion / 'truth.jsonl')
    assert not any('hop' in r.get('events', []) for r in truth)      # no row saw it ...
    after = next(r for r in truth if r['time_s'] > HOP_S)               # ... but it happened
    assert after['chassis']['position_enu_m'][:2] == pytest.approx(HOP_POSE[:2], abs=0.05)
    named = [r['time_s'] for r in truth if 'in_bend' in r.get('events', [])]
    (enter, leave), = active['in_bend']
    before = max(r['time_s'] for r in truth if r['time_s'] < named[0])
    assert before < enter <= named[0] and named[-1] < leave <= named[-1] + 0.01 + 1e-9


# ---------------------------------------------------------------------------- 7. zones

def test_a_zone_event_is_active_exactly_while_the_chassis_is_inside(motion):
    """The truth rows name the event exactly where their chassis origin lies in
    the circle (its distance from the centre recomputed here)."""
    truth = rows(motion / 'truth.jsonl')
    cx, cy, r = BEND
    flags = [(math.hypot(row['chassis']['position_enu_m'][0] - cx,
                         row['chassis']['position_enu_m'][1] - cy) <= r,
              'in_bend' in row.get('events', [])) for row in truth]
    assert sum(i for i, _a in flags) > 100 and sum(not i for i, _a in flags) > 100
    assert all(i == a for i, a in flags)
    # and the GNSS rows of the time say so too
    gnss = rows(motion / 'gnss.jsonl')
    inside_times = {round(row['time_s'] * HZ) for row, (i, _a) in zip(truth, flags) if i}
    named = {round(row['sample_time_s'] * HZ) for row in gnss if 'in_bend' in row.get('events', [])}
    assert named and named <= inside_times


# ---------------------------------------------------------------------------- 6. bad events

def _bad_scenario(tmp_path, events, zones=None, name='bad.yaml'):
    tree = {'vehicles': VEHICLES, 'events': events}
    if zones:
        tree['zones'] = zones
    path = tmp_path / name
    path.write_text(yaml.safe_dump(tree))
    return path


@pytest.mark.parametrize('events, item', [
    ([{'type': 'earthquake', 'start_s': 5}], 'events[0].type'),
    ([{'type': 'stop', 'start_s': 1, 'duration_s': 2},
      {'type': 'teleport', 'start_s': 3, 'end_s': 5, 'east_m': 1, 'north_m': 1}],
     'events[1].end_s'),
], ids=['unknown type', 'teleport with an end'])
def test_the_command_line_refuses_a_bad_event_in_one_line_writing_nothing(tmp_path, events,
                                                                           item):
    path = _bad_scenario(tmp_path, events)
    out = tmp_path / 'out'
    exe = Path(sys.executable).with_name('acres-sim')
    result = subprocess.run([str(exe), 'record', '--rig', str(path), '--out', str(out),
                             '--no-progress'], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stdout == '' and 'Traceback' not in result.stderr
    errors = result.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith('acres-sim: error: '), result.stderr
    assert item in errors[0] and str(path.name) in errors[0]
    assert not out.exists()


BAD_EVENTS = [
    ('unknown type', [{'type': 'earthquake'}], None, 'events[0].type'),
    ('zero duration', [{'type': 'stop', 'duration_s': 0}], None, 'events[0].duration_s'),
    ('negative duration', [{'type': 'stop', 'start_s': 1}, {'type': 'stop', 'duration_s': -2}],
     None, 'events[1].duration_s'),
    ('polygon of 2 corners', [{'type': 'stop', 'zone': 'yard'}],
     {'yard': {'polygon': [[0, 0], [10, 0]]}}, 'zones.yard.polygon'),
    ('inline polygon of 2 corners', [{'type': 'stop', 'zone': {'polygon': [[0, 0], [10, 0]]}}],
     None, 'events[0].zone.polygon'),
    ('unknown vehicle', [{'type': 'stop', 'vehicles': ['polaris', 'tractor']}], None,
     'events[0].vehicles'),
    ('unknown zone', [{'type': 'stop', 'zone': 'barn'}],
     {'yard': {'center': [0, 0], 'radius_m': 5}}, 'events[0].zone'),
    ('end before start', [{'type': 'stop', 'start_s': 10, 'end_s': 5}], None, 'events[0].end_s'),
    ('end at start', [{'type': 'stop', 'start_s': 10, 'end_s': 10}], None, 'events[0].end_s'),
    ('duplicate names', [{'type': 'stop', 'name': 'twice', 'start_s': 1},
                         {'type': 'imu_bias', 'name': 'twice'}], None, 'events[1].name'),
    ('corrections doing nothing', [{'type': 'corrections', 'start_s': 3}], None, 'events[0]'),
    ('teleport with an end', [{'type': 'teleport', 'start_s': 1, 'end_s': 3, 'east_m': 1,
                               'north_m': 2}], None, 'events[0].end_s'),
    ('teleport with a duration', [{'type': 'teleport', 'start_s': 1, 'duration_s': 3,
                                   'east_m': 1, 'north_m': 2}], None, 'events[0].duration_s'),
]


@pytest.mark.parametrize('events, zones, item', [case[1:] for case in BAD_EVENTS],
                         ids=[case[0] for case in BAD_EVENTS])
def test_a_bad_event_is_one_config_error_naming_the_item(tmp_path, events, zones, item):
    with pytest.raises(ConfigError) as err:
        read_events(events, zones, 'farm.yaml', vehicle_names=['polaris'])
    text = str(err.value)
    assert '\n' not in text and text.startswith(f'{item} ') and '(in farm.yaml)' in text, text
    path = _bad_scenario(tmp_path, events, zones)
    with pytest.raises(ConfigError) as err:
        read_scenario(str(path))
    assert '\n' not in str(err.value) and str(err.value).startswith(f'{item} '), str(err.value)


def test_the_good_forms_of_those_events_are_taken(tmp_path):
    """The refusals above are of the mistake, not of the event: each fixed, it reads."""
    plan = read_events([
        {'type': 'stop', 'name': 'a', 'start_s': 10, 'end_s': 10.5},
        {'type': 'stop', 'name': 'b', 'duration_s': 1e-3, 'vehicles': ['polaris']},
        {'type': 'stop', 'zone': {'polygon': [[0, 0], [10, 0], [10, 10]]}},
        {'type': 'stop', 'zone': 'yard'},
        {'type': 'corrections', 'start_s': 3, 'outage': True},
        {'type': 'teleport', 'start_s': 1, 'east_m': 1, 'north_m': 2},
    ], {'yard': {'center': [0, 0], 'radius_m': 5}}, 'farm.yaml', vehicle_names=['polaris'])
    assert len(plan.events) == 6 and len(plan.zones) == 2
