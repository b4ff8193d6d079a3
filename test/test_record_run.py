"""`acres-sim record` end to end: the files and their keys, the bag read by two
independent readers, identical output for identical seeds, agents, and a run
cut short by SIGINT that still leaves valid files."""

import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time

from mcap_ros2.reader import read_ros2_messages
import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from acres_sim.cli import main

DURATION = '12'


def recorded(tmp_path_factory, name, *argv):
    out = tmp_path_factory.mktemp(name)
    assert main(['record', '--duration', DURATION, '--out', str(out), '--no-progress',
                 *argv]) == 0
    return out


@pytest.fixture(scope='module')
def polaris(tmp_path_factory):
    return recorded(tmp_path_factory, 'polaris')


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_files_and_their_keys(polaris):
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl', 'episode.json',
                 'report.png', 'bag/metadata.yaml'):
        assert (polaris / name).is_file(), name
    gnss, imu, ins = rows(polaris / 'gnss.jsonl'), rows(polaris / 'imu.jsonl'), \
        rows(polaris / 'ins.jsonl')
    for row in gnss + imu + ins:
        assert {'sample_time_s', 'available_time_s', 'delivery_time_s'} <= set(row)
    delivered = [r for r in gnss if r['delivery_time_s'] is not None]
    assert all(r['available_time_s'] == pytest.approx(r['sample_time_s'] + 0.05)
               and r['delivery_time_s'] >= r['available_time_s'] - 1e-9 for r in delivered)
    # 10 Hz and 100 Hz, t = 0 .. 12 s; a run that ends writes no row whose time had
    # not come: not the last 50 ms of samples (the INS epoch at 11.95 s is due at
    # 12.0 s, one ulp either side)
    assert all(r['delivery_time_s'] is not None for r in gnss + imu + ins)
    assert len(gnss) == 120 and len(ins) in (1195, 1196)
    assert imu[0]['sample_time_s'] == pytest.approx(2 / 120)   # the third physics step
    assert {'fix', 'imu', 'velocity', 'position_enu_m', 'odom', 'truth'} <= set(ins[0])
    episode = json.loads((polaris / 'episode.json').read_text())
    assert episode['cut_short'] is False and episode['seed'] == 42
    biases = episode['imu_bias_flu']         # the spec's two vectors of the one vehicle
    assert set(biases) == {'accel_mps2', 'gyro_radps'}
    assert len(biases['accel_mps2']) == len(biases['gyro_radps']) == 3
    assert episode['vehicles'][0]['imu_bias_flu'] == biases
    assert episode['vehicles'][0]['folder'] == '.'
    assert (polaris / 'report.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


POLARIS_TOPICS = {
    '/clock': 'rosgraph_msgs/msg/Clock', '/tf': 'tf2_msgs/msg/TFMessage',
    '/tf_static': 'tf2_msgs/msg/TFMessage', '/diagnostics': 'diagnostic_msgs/msg/DiagnosticArray',
    '/vehicle/odom': 'nav_msgs/msg/Odometry', '/oxts/fix': 'sensor_msgs/msg/NavSatFix',
    '/oxts/imu': 'sensor_msgs/msg/Imu', '/oxts/velocity': 'geometry_msgs/msg/TwistStamped',
    '/sim/ground_truth/odom': 'nav_msgs/msg/Odometry',
    '/gnss_receiver/fix': 'sensor_msgs/msg/NavSatFix', '/gnss_receiver/nmea': 'std_msgs/msg/String',
    '/gnss_receiver/gpsfix': 'gps_msgs/msg/GPSFix', '/gnss_receiver/heading': 'sensor_msgs/msg/Imu',
    '/imu/data_raw': 'sensor_msgs/msg/Imu',
    # the Polaris's equipment
    '/baro/pressure': 'sensor_msgs/msg/FluidPressure',
    '/baro/altitude': 'geometry_msgs/msg/PoseWithCovarianceStamped',
    '/imu/mag': 'sensor_msgs/msg/MagneticField', '/wheel/odom': 'nav_msgs/msg/Odometry'}


def test_bag_reads_back_with_rosbags_and_with_mcap(polaris):
    counts = {}
    with AnyReader([polaris / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        assert {c.topic: c.msgtype for c in reader.connections} == POLARIS_TOPICS
        for connection, _t, raw in reader.messages():
            reader.deserialize(raw, connection.msgtype)
            counts[connection.topic] = counts.get(connection.topic, 0) + 1
    assert counts['/clock'] == 12 * 120 + 1 and counts['/oxts/imu'] == 1201
    seen = {}
    for message in read_ros2_messages(str(polaris / 'bag' / 'bag.mcap')):
        seen[message.channel.topic] = message.ros_msg
    assert set(seen) == set(POLARIS_TOPICS)
    assert seen['/vehicle/odom'].header.frame_id == 'utm'
    assert seen['/vehicle/odom'].child_frame_id == 'base_footprint'
    assert seen['/oxts/velocity'].header.frame_id == 'oxts_link'
    assert seen['/gnss_receiver/fix'].header.frame_id == 'gnss_antenna'
    metadata = (polaris / 'bag' / 'metadata.yaml').read_text()
    assert 'version: 8' in metadata and 'storage_identifier: mcap' in metadata


def test_identical_seeds_give_identical_files(polaris, tmp_path_factory):
    again = recorded(tmp_path_factory, 'again')
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'):
        assert (again / name).read_bytes() == (polaris / name).read_bytes(), name
    other = recorded(tmp_path_factory, 'other', '--seed', '7')
    assert (other / 'ins.jsonl').read_bytes() != (polaris / 'ins.jsonl').read_bytes()


def test_agents_get_their_own_files_topics_and_noise(tmp_path_factory):
    out = recorded(tmp_path_factory, 'two', '--agents', '2', '--rig', 'maxxum')
    first, second = rows(out / 'agent0' / 'ins.jsonl'), rows(out / 'agent1' / 'ins.jsonl')
    assert len(first) == len(second)
    assert first[-1]['position_enu_m'] != second[-1]['position_enu_m']   # own INS noise
    with AnyReader([out / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        topics = {c.topic for c in reader.connections}
    assert {'/odom', '/agent1/odom', '/gnss/fix', '/agent1/gnss/fix'} <= topics
    assert '/oxts/velocity' not in topics                 # the Maxxum has none


@pytest.mark.parametrize('sig, code', [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_run_leaves_valid_files(tmp_path, sig, code):
    out = tmp_path / 'cut'
    exe = Path(sys.executable).with_name('acres-sim')
    process = subprocess.Popen([str(exe), 'record', '--duration', '600', '--out', str(out),
                                '--no-progress'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    deadline = time.monotonic() + 120
    while not (out / 'ins.jsonl').exists() or (out / 'ins.jsonl').stat().st_size < 200_000:
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.2)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == code, stderr
    assert 'Traceback' not in stderr and 'cut short' in stdout
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'):
        text = (out / name).read_text()
        assert text.endswith('\n')
        [json.loads(line) for line in text.splitlines()]
    episode = json.loads((out / 'episode.json').read_text())
    assert episode['cut_short'] is True and 0 < episode['simulated_s'] < 600
    assert episode['stop_signal'] == sig.name
    # as at a normal end, the rows still in the delay line (the last 50 ms of
    # INS epochs) are not written; every INS epoch up to there has its truth row
    ins, truth = rows(out / 'ins.jsonl'), rows(out / 'truth.jsonl')
    assert all(r['delivery_time_s'] is not None for r in ins)
    assert 1 <= len(truth) - len(ins) <= 6 and truth[-1]['time_s'] <= episode['simulated_s']
    assert [r['sample_time_s'] for r in ins] == [r['time_s'] for r in truth[:len(ins)]]
    with AnyReader([out / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        assert sum(1 for _ in reader.messages()) > 0
    assert os.path.getsize(out / 'report.png') > 0


def test_stamps_follow_the_rig_convention(polaris):
    """INS topics at their sample time (no latency); receiver and IMU topics
    delivered delay_s later, stamped with the sample time: 6 steps later, or 7
    where t_sample + 0.05 s rounds one ulp above the sixth step's time."""
    lag = {}
    with AnyReader([polaris / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, t_log, raw in reader.messages():
            if connection.topic in ('/oxts/fix', '/gnss_receiver/fix', '/imu/data_raw'):
                message = reader.deserialize(raw, connection.msgtype)
                stamp = message.header.stamp.sec * 10**9 + message.header.stamp.nanosec
                lag.setdefault(connection.topic, set()).add(round((t_log - stamp) / 1e6))
    assert lag == {'/oxts/fix': {0}, '/gnss_receiver/fix': {50, 58}, '/imu/data_raw': {50, 58}}


def test_the_oxts_imu_frame_turns_the_message_back_into_the_ins_attitude(polaris):
    """The Polaris /oxts/imu is in the OxTS axes; its frame's static TF undoes them."""
    import numpy as np
    from acres_sim.core.quaternion import quat_multiply

    with AnyReader([polaris / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        statics, imu = {}, None
        for connection, _t, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            if connection.topic == '/tf_static':
                statics.update({tf.child_frame_id: tf.transform.rotation
                                for tf in message.transforms})
            elif connection.topic == '/oxts/imu' and imu is None:
                imu = message
    mount = statics[imu.header.frame_id]
    q_mount = np.array([mount.x, mount.y, mount.z, mount.w])
    q_message = np.array([imu.orientation.x, imu.orientation.y, imu.orientation.z,
                          imu.orientation.w])
    q_ins = rows(polaris / 'ins.jsonl')[0]['imu']['orientation_enu_xyzw']
    back = quat_multiply(q_message, np.array([-q_mount[0], -q_mount[1], -q_mount[2], q_mount[3]]))
    assert np.allclose(back, q_ins) or np.allclose(back, -np.array(q_ins))


def test_sensors_off_and_a_reused_folder(tmp_path_factory, polaris):
    out = recorded(tmp_path_factory, 'reuse')
    assert main(['record', '--duration', '3', '--out', str(out), '--no-progress', '--no-ins',
                 '--agents', '2']) == 0
    assert not (out / 'ins.jsonl').exists() and not (out / 'gnss.jsonl').exists()
    truth = rows(out / 'agent1' / 'truth.jsonl')
    assert len(truth) == 301 and 'ins_point' not in truth[0]
    assert not (out / 'agent1' / 'ins.jsonl').exists()


@pytest.mark.parametrize('delay, duration', [('0', '2.5'), ('2.5', '4.05'), ('0.05', '3.3')])
def test_delivery_across_blocks_and_a_partial_last_second(tmp_path, delay, duration):
    """Each row leaves the delay line at the step the spec's Drain, written
    out here in seconds and run at every step, releases it (also when that is
    a later second of the run than its sample, and in a last second that is
    not whole); rows still waiting at the end are not written (the INS
    epochs are those of truth.jsonl, so every one is accounted for); the bag's
    times never go back."""
    from acres_sim.core.schedule import DUE_TOLERANCE_S
    out = tmp_path / 'run'
    assert main(['record', '--duration', duration, '--delay', delay, '--out', str(out),
                 '--no-progress']) == 0
    steps = round(float(duration) * 120)
    episode = json.loads((out / 'episode.json').read_text())
    truth_times = [r['time_s'] for r in rows(out / 'truth.jsonl')]
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl'):
        got = rows(out / name)
        samples = set(truth_times if name == 'ins.jsonl' else [r['sample_time_s'] for r in got])
        waiting, expected = [], {}
        for k in range(steps + 1):
            t = k / 120
            if t in samples:
                waiting.append((t, t + float(delay)))
            while waiting and t >= waiting[0][1]:
                expected[waiting.pop(0)[0]] = t
        assert [r['sample_time_s'] for r in got] == sorted(expected)
        assert [r['delivery_time_s'] for r in got] == [expected[r['sample_time_s']] for r in got]
        hz = episode['config'][name.split('.')[0] + '.hz']
        last = got[-1]['sample_time_s']      # the next sample was not due within the run
        assert last + 1 / hz + float(delay) > steps / 120 - DUE_TOLERANCE_S
    episode = json.loads((out / 'episode.json').read_text())
    assert episode['simulated_s'] == steps / 120 and episode['stop_signal'] is None
    with open(out / 'bag' / 'bag.mcap', 'rb') as f:
        from mcap.reader import make_reader
        times = [m.log_time for _s, _c, m in make_reader(f).iter_messages(log_time_order=False)]
    assert times == sorted(times) and len(times) > 0


def test_summary_counts_every_row_of_a_long_run(tmp_path, monkeypatch):
    """The report keeps an even sample of at most REPORT_ROWS rows per series;
    the printed and stored counts are still those of every row delivered."""
    from acres_sim.record import report_series
    monkeypatch.setattr(report_series, 'REPORT_ROWS', 50)
    out = tmp_path / 'long'
    assert main(['record', '--duration', '8', '--out', str(out), '--no-progress']) == 0
    summary = json.loads((out / 'episode.json').read_text())['summary']
    gnss, ins = rows(out / 'gnss.jsonl'), rows(out / 'ins.jsonl')
    delivered = [r for r in gnss if r['delivery_time_s'] is not None]
    assert summary['ins']['epochs'] == sum(r['delivery_time_s'] is not None for r in ins)
    assert summary['gnss']['epochs'] == len(delivered)
    assert summary['gnss']['fix_epochs']['no_fix'] == sum(r['fix_type'] == 'no_fix'
                                                          for r in delivered)
    assert summary['truth']['samples'] == 8 * 100 + 1
    assert summary['duration_s'] == 8.0           # the first and last row, not thinned ones


@pytest.mark.parametrize('noise', [True, False])
def test_every_covariance_is_the_models_variance_floored(tmp_path_factory, noise):
    """One rule for the covariance of every sensor message: each variance on
    the diagonal is the model's sigma squared, zero with --no-noise (the spec's
    -SensorNoNoise zeroes every sigma), never below 1e-12; off the diagonal
    zero.  The sigmas are read from the configuration here, the GNSS
    receiver's from its rows."""
    import math

    import numpy as np

    from acres_sim.config import load_config

    out = recorded(tmp_path_factory, f'noise_{noise}', *([] if noise else ['--no-noise']))
    c = load_config(rig='polaris')

    def floored(variance):
        return max(variance, 1e-12)

    def var(key, degrees=False):
        sigma = math.radians(c[key]) if degrees else c[key]
        return floored(sigma ** 2 if noise else 0.0)

    position = (c['ins.position_sigma_m'] ** 2 + c['ins.position_white_m'] ** 2) if noise else 0.0
    fix = [floored(position), floored(position), floored(2.25 * position)]
    attitude, heading = var('ins.attitude_sigma_deg', True), var('ins.heading_sigma_deg', True)
    ins_gyro, ins_accel = var('ins.gyro_white_radps'), var('ins.accel_white_mps2')
    expected = {
        ('/imu/data_raw', 'linear_acceleration_covariance'): [var('imu.accel_std_mps2')] * 3,
        ('/imu/data_raw', 'angular_velocity_covariance'): [var('imu.gyro_std_radps')] * 3,
        ('/oxts/imu', 'orientation_covariance'): [attitude, attitude, heading],
        ('/oxts/imu', 'angular_velocity_covariance'): [ins_gyro] * 3,
        ('/oxts/imu', 'linear_acceleration_covariance'): [ins_accel] * 3,
        ('/oxts/fix', 'position_covariance'): fix,
        ('/vehicle/odom', 'pose.covariance'): fix + [attitude, attitude, heading],
        ('/vehicle/odom', 'twist.covariance'): [var('ins.velocity_white_mps')] * 3
                                               + [ins_gyro] * 3,
    }
    gnss = iter(r for r in rows(out / 'gnss.jsonl') if r['delivery_time_s'] is not None)
    seen = set()
    with AnyReader([out / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, _t, raw in reader.messages():
            topic = connection.topic
            if topic not in {t for t, _ in expected} | {'/gnss_receiver/fix'}:
                continue
            message = reader.deserialize(raw, connection.msgtype)
            if topic == '/gnss_receiver/fix':
                row = next(gnss)           # the fixes are delivered in the order of the rows
                if row['covariance_enu_m2'] is None:      # no fix: covariance unknown
                    assert not np.any(message.position_covariance)
                    continue
                want = [floored(v) for v in row['covariance_enu_m2']]
                fields = {'position_covariance': want}
            else:
                fields = {field: want for (t, field), want in expected.items() if t == topic}
            for field, want in fields.items():
                value = message
                for part in field.split('.'):
                    value = getattr(value, part)
                n = len(want)
                cov = np.asarray(value, dtype=float).reshape(n, n)
                assert list(np.diag(cov)) == pytest.approx(want, rel=1e-12, abs=0), (topic, field)
                assert not np.any(cov - np.diag(np.diag(cov))), (topic, field)
                seen.add((topic, field))
    assert seen == set(expected) | {('/gnss_receiver/fix', 'position_covariance')}


def test_every_ros_time_is_start_utc_plus_the_step_time(polaris):
    """The bag's times, /clock and every stamp are ROS times: T0 + k / 120 s,
    T0 = gnss.datum.start_utc in ns since 1970 (none is 0, which tf2 takes for
    "the latest"); a GNSS fix is stamped with the UTC of its GGA sentence; the
    rows keep the spec's t = k / 120."""
    import calendar
    import datetime
    from fractions import Fraction

    episode = json.loads((polaris / 'episode.json').read_text())
    utc = datetime.datetime.fromisoformat(episode['start_utc'])
    t0 = calendar.timegm(utc.utctimetuple()) * 10**9

    def step_of(t_ns):
        """k if t_ns is T0 + k / 120 s to the nearest ns exactly, else None."""
        k = round(Fraction((t_ns - t0) * 120, 10**9))
        return k if k >= 0 and t_ns == t0 + round(Fraction(k * 10**9, 120)) else None

    def ns(stamp):
        return stamp.sec * 10**9 + stamp.nanosec

    gga = {r['sample_time_s']: r['nmea_gga'] for r in rows(polaris / 'gnss.jsonl')}
    clock, fixes, static = [], 0, None
    with AnyReader([polaris / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, t_log, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            assert step_of(t_log) is not None, (connection.topic, t_log)
            if connection.topic == '/clock':
                clock.append((step_of(t_log), ns(message.clock)))
                continue
            if connection.topic == '/tf_static':
                static = {ns(tf.header.stamp) for tf in message.transforms}
                continue
            stamps = ([ns(tf.header.stamp) for tf in message.transforms]
                      if connection.msgtype == 'tf2_msgs/msg/TFMessage'
                      else [ns(message.header.stamp)] if hasattr(message, 'header') else [])
            for stamp in stamps:
                assert step_of(stamp) is not None and stamp <= t_log, connection.topic
            if connection.topic == '/gnss_receiver/fix':
                k = step_of(ns(message.header.stamp))
                hhmmss = gga[k / 120].split(',')[1]
                of_day = int(hhmmss[:2]) * 3600 + int(hhmmss[2:4]) * 60 + float(hhmmss[4:])
                assert abs(of_day - (ns(message.header.stamp) / 1e9) % 86400) <= 0.005 + 1e-9
                fixes += 1
    steps = int(DURATION) * 120
    assert clock == [(k, t0 + round(Fraction(k * 10**9, 120))) for k in range(steps + 1)]
    assert static == {t0} and fixes == int(DURATION) * 10
    assert rows(polaris / 'ins.jsonl')[0]['sample_time_s'] == 0.0


@pytest.mark.parametrize('cap', [4, 7, 50])
def test_report_series_thinned_a_block_at_a_time_as_one_by_one(cap):
    """Thinned.extend keeps what append keeps, asking only for those (and
    the first and last); ThinnedColumns keeps the same rows of blocks of
    arrays."""
    import random

    import numpy as np

    from acres_sim.record.report_series import Thinned, ThinnedColumns
    rng = random.Random(cap)
    one, block, columns = Thinned(cap), Thinned(cap), ThinnedColumns(cap)
    asked = []
    item = 0
    for _ in range(300):
        count = rng.choice([0, 1, 2, 5, 13, 120])
        items = list(range(item, item + count))
        item += count
        for x in items:
            one.append(x)
        block.extend(count, lambda i, items=items: (asked.append(items[i]), items[i])[1])
        columns.extend({'item': np.array(items, dtype=np.int64),
                        'twice': 2.0 * np.array(items, dtype=np.float64).reshape(-1, 1)})
        assert (block.items, block.seen, block.stride) == (one.items, one.seen, one.stride)
        assert (block.first, block.last) == (one.first, one.last)
        kept = columns.columns()
        assert (kept.columns['item'].tolist(), columns.seen, columns.stride) == (
            one.items, one.seen, one.stride)
        assert kept.columns['twice'].ravel().tolist() == [2.0 * x for x in one.items]
        if one.first is not None:
            assert (columns.first['item'], columns.last['item']) == (one.first, one.last)
    assert len(asked) < item / 4          # most items were never made
    assert one.stride > 1                 # the thinning was tried


def test_the_collector_is_back_without_a_backlog_to_scan(tmp_path):
    """The recorder runs with the cyclic collector off; it turns it back on
    with what the run made in the oldest generation (else the first
    allocation after the run would scan it all, moving it to the middle one),
    and nothing left frozen."""
    import gc

    from acres_sim.record.runner import RecordRequest, record
    from acres_sim.rig import RigOptions

    assert gc.isenabled()
    episode, _summary = record(RecordRequest('polaris', tmp_path / 'run',
                                             RigOptions(duration_s=3.0), progress=False,
                                             bag=False, report=False))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert any(o is episode for o in gc.get_objects(generation=2))


def test_the_program_ends_a_recording_without_the_teardown(tmp_path):
    """``acres-sim record`` (cli.run) ends its process once the run is written:
    the exit handlers run and the output is all there, down a pipe too, the
    exit status is the command's; the interpreter's teardown (an object's
    finaliser here) does not run.  Other commands end as usual."""
    code = textwrap.dedent('''
        import atexit, sys
        from acres_sim import cli

        class Torn:
            def __del__(self):
                print('torn down', flush=True)

        kept = Torn()
        atexit.register(print, 'exit handlers ran')
        sys.exit(cli.run(sys.argv[1:]))
    ''')
    out = tmp_path / 'run'
    done = subprocess.run([sys.executable, '-c', code, 'record', '--duration', '2', '--out',
                           str(out), '--no-progress', '--no-bag', '--no-report'],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == 'exit handlers ran' and 'torn down' not in lines
    assert any(line.startswith('truth ') for line in lines)            # the whole summary
    assert json.loads((out / 'episode.json').read_text())['status'] == 'complete'
    bad = subprocess.run([sys.executable, '-c', code, 'record', '--duration', '-1'],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stdout.splitlines() == ['exit handlers ran']
    other = subprocess.run([sys.executable, '-c', code, 'config', 'check', '/no/such/file'],
                           capture_output=True, text=True, timeout=300)
    assert other.returncode != 0 and other.stdout.splitlines()[-1] == 'torn down'
