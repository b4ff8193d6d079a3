"""rosbag2 output of the recorder: every message type on the Polaris topics,
read back with rosbags' Reader and, independently, with the mcap / mcap_ros2
readers; metadata version and storage, offered QoS (/tf_static latches), a bag
ended by an exception or a signal, the background writer process (same bag as
the foreground writer; its death, the parent's SIGKILL, a Ctrl-C to the
process group), and the message conventions (NavSatFix status per fix type,
OxTS axes, deg/s twist, Imu covariances)."""

import copy
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import yaml
from mcap.reader import make_reader
from rosbags.interfaces import QosDurability, QosReliability
from rosbags.rosbag2 import Reader

from acres_sim.core.frames import oxts_from_flu_quaternion, oxts_from_flu_vector
from acres_sim.pipeline import messages as m
from acres_sim.record.bag import (
    BAG_VERSION, BagWriter, BagWriterError, QOS_RELIABLE, QOS_STATIC)

with warnings.catch_warnings():
    warnings.simplefilter('ignore', DeprecationWarning)   # the module announces its newer API
    from mcap_ros2.reader import read_ros2_messages

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable

T0_NS = 1_000_000_000


# ----------------------------------------------------------------------------
# Rows

@pytest.fixture(scope='module')
def gnss_row():
    """A real row of the receiver model (ACRE scene, open sky: RTK fixed)."""
    from acres_sim.config import load_config
    from acres_sim.config.scene import default_scene
    from acres_sim.pipeline.models import gnss_receiver, site_georeference
    config = load_config(rig='polaris')
    rx = gnss_receiver(config, default_scene(), site_georeference(config), None)
    row = None
    for k in range(3):
        row = rx.epoch(0.1 * k, (0.0, -300.0, 2.0))
    assert row['fix_type'] == 'rtk_fixed'
    return row


def _gnss_row_as(row, fix_type):
    """The same row relabelled to another fix state (no_fix: position keys null)."""
    out = copy.deepcopy(row)
    out['fix_type'] = fix_type
    out['solution'] = fix_type
    if fix_type == 'no_fix':
        for k in ('position_enu_m', 'sigma_enu_m', 'covariance_enu_m2', 'position_std_m',
                  'latitude_deg', 'longitude_deg', 'ellipsoidal_height_m'):
            out[k] = None
    return out


IMU_ROW = {'specific_force_flu_mps2': [0.012, -0.034, 9.80665],
           'angular_velocity_flu_radps': [0.001, -0.002, 0.25]}

S2 = math.sqrt(0.5)
Q_YAW90 = [0.0, 0.0, S2, S2]           # FLU -> ENU: vehicle heading north


def _ins_row():
    return {
        'frame_id': 'oxts_link',
        'fix': {'latitude_deg': 40.4715765, 'longitude_deg': -86.9943737, 'altitude_m': 183.25,
                'datum': 'nad83_2011', 'status': 2, 'service': 1,
                'position_covariance': [1.09e-4, 1.09e-4, 2.4525e-4]},
        'imu': {'orientation_enu_xyzw': Q_YAW90,
                'angular_velocity_flu_radps': [0.01, 0.02, math.pi / 2],
                'linear_acceleration_flu_mps2': [0.3, -0.1, 9.80665]},
        'velocity': {'linear_flu_mps': [4.0, 0.1, -0.02],
                     'angular_flu_radps': [0.0, 0.0, math.pi / 2]},
        'position_enu_m': [1.0, 2.0, 0.5],
        'odom': {'frame': 'utm', 'child': 'base_footprint',
                 'position_m': [500477.9, 4480101.7, 183.25], 'orientation_xyzw': Q_YAW90,
                 'linear_flu_mps': [4.0, 0.1, -0.02], 'angular_flu_radps': [0.0, 0.0, math.pi / 2],
                 'grid_rotation_deg': 0.0541,
                 'covariance': [1.09e-4, 1.09e-4, 2.4525e-4, 2.7e-7, 2.7e-7, 3.0e-6]},
        'truth': {'position_enu_m': [1.0, 2.0, 0.5],
                  'position_utm_m': [500477.9, 4480101.7, 183.25],
                  'orientation_utm_xyzw': Q_YAW90,
                  'linear_flu_mps': [4.0, 0.1, 0.0], 'angular_flu_radps': [0.0, 0.0, math.pi / 2]},
    }


INS_VAR = {'orientation_var': (1e-6, 2e-6, 3e-6), 'gyro_var': 2.5e-7, 'accel_var': 4e-4}

# Topic -> (type, frame_id or None, qos): the Polaris table plus clock, TF and
# the outputs of the GNSS receiver and IMU models.
POLARIS_TOPICS = {
    '/clock': ('rosgraph_msgs/msg/Clock', None, 'reliable'),
    '/tf': ('tf2_msgs/msg/TFMessage', None, 'reliable'),
    '/tf_static': ('tf2_msgs/msg/TFMessage', None, 'static'),
    '/vehicle/odom': ('nav_msgs/msg/Odometry', 'utm', 'reliable'),
    '/oxts/fix': ('sensor_msgs/msg/NavSatFix', 'navsat_link', 'reliable'),
    '/oxts/imu': ('sensor_msgs/msg/Imu', 'oxts_link', 'reliable'),
    '/oxts/velocity': ('geometry_msgs/msg/TwistStamped', 'oxts_link', 'reliable'),
    '/sim/ground_truth/odom': ('nav_msgs/msg/Odometry', 'utm', 'reliable'),
    '/gnss_receiver/fix': ('sensor_msgs/msg/NavSatFix', 'gnss_link', 'reliable'),
    '/gnss_receiver/nmea': ('std_msgs/msg/String', None, 'reliable'),
    '/diagnostics': ('diagnostic_msgs/msg/DiagnosticArray', '', 'reliable'),
    '/imu/data_raw': ('sensor_msgs/msg/Imu', 'imu_link', 'reliable'),
}

N_STEPS = 5


def _messages_at(k, gnss_row):
    """(topic, message) pairs of step k."""
    t = T0_NS + k * 10_000_000
    ins = _ins_row()
    odom = m.utm_odometry(ins['odom'], t)
    out = [
        ('/clock', m.clock(t)),
        ('/vehicle/odom', odom),
        ('/tf', m.tf_message([m.transform_from_odometry(odom)])),
        ('/oxts/fix', m.ins_fix(ins, t, 'navsat_link')),
        ('/oxts/imu', m.ins_imu(ins, t, 'oxts_link', oxts_axes=True, **INS_VAR)),
        ('/oxts/velocity', m.ins_velocity(ins, t, 'oxts_link')),
        ('/sim/ground_truth/odom', m.ground_truth_odometry(ins['truth'], t)),
        ('/gnss_receiver/fix', m.navsat_fix_from_gnss_row(gnss_row, t, 'gnss_link')),
        ('/gnss_receiver/nmea', m.nmea_string(gnss_row)),
        ('/diagnostics', m.diagnostics_from_gnss_row(gnss_row, t, 'gnss_receiver')),
        ('/imu/data_raw', m.imu_from_imu_row(IMU_ROW, t, 'imu_link',
                                             accel_var=4e-6, gyro_var=1e-8)),
    ]
    if k == 0:
        out.insert(1, ('/tf_static', m.tf_message([
            m.transform_stamped(t, 'utm', 'map', (500476.935, 4480099.755, 0.0), (0, 0, 0, 1)),
            m.transform_stamped(t, 'base_footprint', 'gnss_link', (1.1, 0.0, 2.15),
                                (0, 0, 0, 1))])))
    return t, out


def _write_polaris(folder, gnss_row, **options):
    with BagWriter(folder, **options) as bag:
        for topic, (msgtype, _, qos) in POLARIS_TOPICS.items():
            bag.add_topic(topic, msgtype, qos)
        for k in range(N_STEPS):
            t, msgs = _messages_at(k, gnss_row)
            for topic, msg in msgs:
                bag.write(topic, t, msg)
    assert bag.closed
    assert bag.message_count == sum(_expected_counts().values())
    return folder


@pytest.fixture(scope='module', params=['foreground', 'background'])
def polaris_bag(request, tmp_path_factory, gnss_row):
    """The Polaris bag, written in this process or by the background writer
    process (every reading test runs on both)."""
    folder = tmp_path_factory.mktemp(request.param) / 'polaris'
    return _write_polaris(folder, gnss_row, background=request.param == 'background')


def _expected_counts():
    counts = {topic: N_STEPS for topic in POLARIS_TOPICS}
    counts['/tf_static'] = 1
    return counts


# ----------------------------------------------------------------------------
# Reading back

def test_metadata_version_storage_and_qos(polaris_bag):
    meta = yaml.safe_load((polaris_bag / 'metadata.yaml').read_text())
    meta = meta['rosbag2_bagfile_information']
    assert meta['version'] == BAG_VERSION == 8
    assert meta['storage_identifier'] == 'mcap'
    assert meta['relative_file_paths'] == ['polaris.mcap']
    assert meta['message_count'] == sum(_expected_counts().values())
    by_topic = {t['topic_metadata']['name']: t for t in meta['topics_with_message_count']}
    assert set(by_topic) == set(POLARIS_TOPICS)
    for topic, entry in by_topic.items():
        assert entry['message_count'] == _expected_counts()[topic]
        tm = entry['topic_metadata']
        assert tm['type'] == POLARIS_TOPICS[topic][0]
        assert tm['type_description_hash'].startswith('RIHS01_')
        # Version 8: a YAML string holding a list of profiles with integer enums.
        assert isinstance(tm['offered_qos_profiles'], str) and tm['offered_qos_profiles']
        (profile,) = yaml.safe_load(tm['offered_qos_profiles'])
        assert profile['reliability'] == 1                                       # RELIABLE
        assert profile['history'] == 1                                          # KEEP_LAST
        if topic == '/tf_static':
            assert (profile['durability'], profile['depth']) == (1, 1)          # TRANSIENT_LOCAL
        else:
            assert (profile['durability'], profile['depth']) == (2, 10)         # VOLATILE
        for key in ('deadline', 'lifespan', 'liveliness_lease_duration'):
            assert set(profile[key]) == {'sec', 'nsec'}


def test_rosbags_reader_decodes_everything(polaris_bag, gnss_row):
    counts = {}
    with Reader(polaris_bag) as reader:
        assert reader.message_count == sum(_expected_counts().values())
        qos = {c.topic: c.ext.offered_qos_profiles for c in reader.connections}
        assert qos['/tf_static'][0].durability == QosDurability.TRANSIENT_LOCAL
        assert qos['/oxts/fix'][0].durability == QosDurability.VOLATILE
        assert all(q[0].reliability == QosReliability.RELIABLE for q in qos.values())
        assert {c.topic: c.msgtype for c in reader.connections} == \
            {t: v[0] for t, v in POLARIS_TOPICS.items()}
        seen_t = []
        for conn, t_ns, raw in reader.messages():
            msg = m.TYPESTORE.deserialize_cdr(raw, conn.msgtype)
            counts[conn.topic] = counts.get(conn.topic, 0) + 1
            seen_t.append(t_ns)
            frame = POLARIS_TOPICS[conn.topic][1]
            if frame is not None:
                assert msg.header.frame_id == frame, conn.topic
                assert msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec == t_ns
            if conn.topic == '/clock':
                assert msg.clock.sec * 10**9 + msg.clock.nanosec == t_ns
            elif conn.topic == '/tf':
                (tf,) = msg.transforms
                assert (tf.header.frame_id, tf.child_frame_id) == ('utm', 'base_footprint')
                assert tf.transform.translation.x == 500477.9
            elif conn.topic == '/tf_static':
                assert [(x.header.frame_id, x.child_frame_id) for x in msg.transforms] == \
                    [('utm', 'map'), ('base_footprint', 'gnss_link')]
            elif conn.topic == '/gnss_receiver/fix':
                assert msg.latitude == gnss_row['latitude_deg']
                assert msg.status.status == 2
            elif conn.topic == '/gnss_receiver/nmea':
                assert msg.data == gnss_row['nmea_gga']
            elif conn.topic == '/vehicle/odom':
                assert msg.child_frame_id == 'base_footprint'
                assert msg.pose.pose.position.y == 4480101.7
            elif conn.topic == '/oxts/velocity':
                assert msg.twist.angular.z == pytest.approx(90.0)
    assert counts == _expected_counts()
    assert seen_t == sorted(seen_t)


def test_mcap_ros2_reader_decodes_everything(polaris_bag):
    mcap_path = polaris_bag / 'polaris.mcap'
    with open(mcap_path, 'rb') as f:
        reader = make_reader(f)
        header = reader.get_header()
        assert header.profile == 'ros2'
        summary = reader.get_summary()
        channels = {c.topic: c for c in summary.channels.values()}
        schemas = summary.schemas
        assert set(channels) == set(POLARIS_TOPICS)
        for topic, ch in channels.items():
            assert ch.message_encoding == 'cdr'
            assert schemas[ch.schema_id].name == POLARIS_TOPICS[topic][0]
            assert schemas[ch.schema_id].encoding == 'ros2msg'
            (profile,) = yaml.safe_load(ch.metadata['offered_qos_profiles'])
            assert profile['durability'] == (1 if topic == '/tf_static' else 2)
            assert profile['reliability'] == 1
        (meta,) = [r for r in reader.iter_metadata() if r.name == 'rosbag2']
        assert yaml.safe_load(meta.metadata['serialized_metadata'])['version'] == 8

    counts = {}
    for item in read_ros2_messages(str(mcap_path)):
        topic = item.channel.topic
        counts[topic] = counts.get(topic, 0) + 1
        msg = item.ros_msg
        frame = POLARIS_TOPICS[topic][1]
        if frame is not None:
            assert msg.header.frame_id == frame
            assert msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec == item.log_time_ns
        if topic == '/oxts/imu':
            assert list(msg.orientation_covariance)[0] > 0
        if topic == '/imu/data_raw':
            assert msg.orientation_covariance[0] == -1.0
            assert msg.linear_acceleration.z == 9.80665
        if topic == '/tf_static':
            assert msg.transforms[0].child_frame_id == 'map'
        if topic == '/diagnostics':
            (st,) = msg.status
            assert st.level in (0, b'\x00')
            assert st.name == 'gnss_receiver'
    assert counts == _expected_counts()


# ----------------------------------------------------------------------------
# Ending a bag early

def _read_counts(folder):
    counts = {}
    with Reader(folder) as reader:
        for conn, _, raw in reader.messages():
            m.TYPESTORE.deserialize_cdr(raw, conn.msgtype)
            counts[conn.topic] = counts.get(conn.topic, 0) + 1
    return counts


def test_bag_closed_after_exception_is_readable(tmp_path):
    folder = tmp_path / 'crash'
    with pytest.raises(RuntimeError, match='boom'):
        with BagWriter(folder) as bag:
            bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
            for k in range(50):
                bag.write('/clock', T0_NS + k, m.clock(T0_NS + k))
            raise RuntimeError('boom')
    assert (folder / 'metadata.yaml').exists()
    assert _read_counts(folder) == {'/clock': 50}
    with open(folder / 'crash.mcap', 'rb') as f:
        assert sum(1 for _ in read_ros2_messages(f)) == 50


def test_sigint_inside_a_write_is_held_until_the_write_is_complete(tmp_path):
    folder = tmp_path / 'held'
    bag = BagWriter(folder)
    bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
    bag.write('/clock', T0_NS, m.clock(T0_NS))
    storage = bag._writer.storage
    real_write = storage.write

    def write_interrupted(conn, t, data):
        os.kill(os.getpid(), signal.SIGINT)    # arrives in the middle of the write
        for _ in range(1000):                  # give the handler plenty of chances to run
            pass
        real_write(conn, t, data)

    storage.write = write_interrupted
    with pytest.raises(KeyboardInterrupt):
        bag.write('/clock', T0_NS + 1, m.clock(T0_NS + 1))
    storage.write = real_write
    assert bag.message_count == 2               # the write finished before the interrupt
    bag.close()
    bag.close()                                  # twice is fine
    assert _read_counts(folder) == {'/clock': 2}


@pytest.mark.parametrize('sig', ['SIGINT', 'SIGTERM'])
def test_bag_of_a_killed_recorder_is_readable(tmp_path, sig):
    """A child process writes messages without end; Ctrl-C or kill ends it."""
    folder = tmp_path / 'killed'
    code = textwrap.dedent(f'''
        import sys
        from acres_sim.pipeline import messages as m
        from acres_sim.record.bag import BagWriter, exit_on_sigterm
        exit_on_sigterm()
        with BagWriter({str(folder)!r}) as bag:
            bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
            k = 0
            while True:
                bag.write('/clock', k * 1000, m.clock(k * 1000))
                k += 1
                if k == 2000:
                    print('ready', flush=True)
    ''')
    proc = subprocess.Popen([PYTHON, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO, text=True)
    try:
        assert proc.stdout.readline().strip() == 'ready'
        proc.send_signal(getattr(signal, sig))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0
    assert ('KeyboardInterrupt' in err) if sig == 'SIGINT' else (proc.returncode == 143), err
    counts = _read_counts(folder)
    assert counts['/clock'] >= 2000
    meta = yaml.safe_load((folder / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['message_count'] == counts['/clock']


def test_write_checks_topic_and_type(tmp_path):
    with BagWriter(tmp_path / 'b') as bag:
        bag.add_topic('/clock', 'rosgraph_msgs/Clock')          # short form accepted
        assert bag.topics == {'/clock': 'rosgraph_msgs/msg/Clock'}
        with pytest.raises(ValueError, match='already registered'):
            bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        with pytest.raises(KeyError, match='not registered'):
            bag.write('/nope', 0, m.clock(0))
        with pytest.raises(TypeError, match='carries'):
            bag.write('/clock', 0, m.String(data='x'))
        with pytest.raises(ValueError, match='qos'):
            bag.add_topic('/x', 'std_msgs/msg/String', qos='best')
        with pytest.raises(ValueError, match='typestore'):
            bag.add_topic('/y', 'no_msgs/msg/Nothing')
    assert bag.closed


def test_qos_profiles():
    assert QOS_RELIABLE.reliability == QosReliability.RELIABLE
    assert QOS_RELIABLE.durability == QosDurability.VOLATILE and QOS_RELIABLE.depth == 10
    assert QOS_STATIC.durability == QosDurability.TRANSIENT_LOCAL


# ----------------------------------------------------------------------------
# Message conventions

@pytest.mark.parametrize('fix_type, status', [
    ('no_fix', -1), ('single', 0), ('dgps', 1), ('rtk_float', 2), ('rtk_fixed', 2)])
def test_navsat_status_per_fix_type(gnss_row, fix_type, status):
    row = _gnss_row_as(gnss_row, fix_type)
    msg = m.navsat_fix_from_gnss_row(row, T0_NS, 'gnss_link')
    assert msg.status.status == status
    assert msg.status.service == (1 | 2 | 8)
    assert msg.header.frame_id == 'gnss_link'
    if fix_type == 'no_fix':
        assert math.isnan(msg.latitude) and math.isnan(msg.longitude) and math.isnan(msg.altitude)
        assert msg.position_covariance_type == m.NavSatFix.COVARIANCE_TYPE_UNKNOWN
    else:
        assert (msg.latitude, msg.longitude, msg.altitude) == \
            (row['latitude_deg'], row['longitude_deg'], row['ellipsoidal_height_m'])
        assert msg.position_covariance_type == m.NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
        cov = np.asarray(msg.position_covariance).reshape(3, 3)
        np.testing.assert_array_equal(np.diag(cov), row['covariance_enu_m2'])
        assert np.count_nonzero(cov - np.diag(np.diag(cov))) == 0


@pytest.mark.parametrize('fix_type, level', [
    ('rtk_fixed', 0), ('rtk_float', 1), ('dgps', 1), ('single', 1), ('no_fix', 2)])
def test_diagnostics_level(gnss_row, fix_type, level):
    msg = m.diagnostics_from_gnss_row(_gnss_row_as(gnss_row, fix_type), T0_NS, 'rx')
    (st,) = msg.status
    assert st.level == level
    kv = {v.key: v.value for v in st.values}
    assert kv['fix_type'] == fix_type
    assert kv['satellites_used'] == str(gnss_row['satellites_used'])
    for key in ('hdop', 'pdop', 'multipath_index', 'correction_age_s', 'rtk_lock_age_s',
                'rtk_converge_s', 'rtk_time_to_fix_s'):
        assert key in kv
    assert m.diagnostics_from_gnss_row({**gnss_row, 'correction_age_s': None}, 0, 'rx') \
        .status[0].values[[v.key for v in st.values].index('correction_age_s')].value == 'n/a'


def test_navsat_service_names_the_constellations_on():
    from acres_sim.config import load_config

    config = load_config(rig='polaris')
    assert m.navsat_service(config) == m.SERVICE_GNSS
    config = load_config(rig='polaris', overrides={'gnss.constellations.glonass': False})
    assert m.navsat_service(config) == m.NavSatStatus.SERVICE_GPS | m.NavSatStatus.SERVICE_GALILEO


def test_stamp_nanoseconds():
    s = m.stamp(12_345_678_901)
    assert (s.sec, s.nanosec) == (12, 345_678_901)
    with pytest.raises(ValueError):
        m.stamp(-1)


def test_imu_message_from_imu_row():
    msg = m.imu_from_imu_row(IMU_ROW, T0_NS, 'imu_link', accel_var=4e-6,
                             gyro_var=(1e-8, 2e-8, 3e-8))
    assert msg.orientation_covariance[0] == -1.0
    o = msg.orientation
    assert (o.x, o.y, o.z, o.w) == (0, 0, 0, 1)
    np.testing.assert_array_equal(np.asarray(msg.linear_acceleration_covariance).reshape(3, 3),
                                  np.diag([4e-6] * 3))
    np.testing.assert_array_equal(
        np.diag(np.asarray(msg.angular_velocity_covariance).reshape(3, 3)),
                                  [1e-8, 2e-8, 3e-8])
    assert msg.linear_acceleration.z == 9.80665 and msg.angular_velocity.z == 0.25
    # Noise off: the diagonal stays positive (never all zero = "unknown").
    off = m.imu_from_imu_row(IMU_ROW, 0, 'imu_link', accel_var=0.0, gyro_var=0.0)
    assert np.all(np.diag(np.asarray(off.linear_acceleration_covariance).reshape(3, 3)) > 0)
    assert np.all(np.diag(np.asarray(off.angular_velocity_covariance).reshape(3, 3)) > 0)


def _rot(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_oxts_axes_hand_example():
    # Vehicle facing east (q_ins = identity): the OxTS x axis (left) points
    # north, y (forward) east, z (down) down.
    q = oxts_from_flu_quaternion([0, 0, 0, 1])
    np.testing.assert_allclose(q, [S2, S2, 0, 0])
    R = _rot(q)
    np.testing.assert_allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(R @ [0, 1, 0], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(R @ [0, 0, 1], [0, 0, -1], atol=1e-15)
    # Components: (x, y, z)_imu = (y, x, -z)_FLU; at rest the down axis reads -g.
    np.testing.assert_array_equal(oxts_from_flu_vector([0.1, 0.2, 0.3]), [0.2, 0.1, -0.3])
    np.testing.assert_array_equal(oxts_from_flu_vector([0, 0, 9.80665]), [0, 0, -9.80665])

    # Facing north (yaw +90 deg): left is west.
    msg = m.ins_imu(_ins_row(), T0_NS, 'oxts_link', oxts_axes=True, **INS_VAR)
    o = msg.orientation
    q_imu = np.array([o.x, o.y, o.z, o.w])
    np.testing.assert_allclose(_rot(q_imu) @ [1, 0, 0], [-1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(_rot(q_imu) @ [0, 1, 0], [0, 1, 0], atol=1e-15)
    w, f = msg.angular_velocity, msg.linear_acceleration
    assert (w.x, w.y, w.z) == (0.02, 0.01, -math.pi / 2)
    assert (f.x, f.y, f.z) == (-0.1, 0.3, -9.80665)
    # Any vector turned to ENU is the same whichever axes the message uses.
    flu = m.ins_imu(_ins_row(), T0_NS, 'oxts_link', oxts_axes=False, **INS_VAR)
    fo = flu.orientation
    q_flu = np.array([fo.x, fo.y, fo.z, fo.w])
    fa = flu.linear_acceleration
    v_flu = np.array([fa.x, fa.y, fa.z])
    v_imu = np.array([f.x, f.y, f.z])
    np.testing.assert_allclose(_rot(q_flu) @ v_flu, _rot(q_imu) @ v_imu, atol=1e-12)
    # Variances follow the axes: FLU (roll, pitch, yaw) -> OxTS (pitch, roll, yaw).
    np.testing.assert_array_equal(np.diag(np.asarray(msg.orientation_covariance).reshape(3, 3)),
                                  [2e-6, 1e-6, 3e-6])
    np.testing.assert_array_equal(np.diag(np.asarray(flu.orientation_covariance).reshape(3, 3)),
                                  [1e-6, 2e-6, 3e-6])


def test_ins_velocity_in_degrees_per_second():
    msg = m.ins_velocity(_ins_row(), T0_NS)
    assert msg.header.frame_id == 'oxts_link'
    assert (msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z) == (4.0, 0.1, -0.02)
    assert msg.twist.angular.z == pytest.approx(90.0, abs=1e-12)
    assert msg.twist.angular.x == 0.0


def test_ins_fix_and_odometry():
    row = _ins_row()
    fix = m.ins_fix(row, T0_NS, 'navsat_link')
    assert (fix.status.status, fix.status.service) == (m.NavSatStatus.STATUS_GBAS_FIX,
                                                       m.NavSatStatus.SERVICE_GPS)
    assert fix.position_covariance_type == m.NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
    np.testing.assert_array_equal(np.diag(np.asarray(fix.position_covariance).reshape(3, 3)),
                                  row['fix']['position_covariance'])
    assert fix.altitude == 183.25

    odom = m.utm_odometry(row['odom'], T0_NS, twist_var=[4e-4] * 3 + [2.5e-7] * 3)
    assert (odom.header.frame_id, odom.child_frame_id) == ('utm', 'base_footprint')
    cov = np.asarray(odom.pose.covariance).reshape(6, 6)
    np.testing.assert_array_equal(np.diag(cov), row['odom']['covariance'])
    assert np.count_nonzero(cov - np.diag(np.diag(cov))) == 0
    # Twist in the child frame: FLU values as they are (4 m/s forward while facing north).
    assert (odom.twist.twist.linear.x, odom.twist.twist.linear.y) == (4.0, 0.1)
    assert odom.twist.covariance[0] == 4e-4
    prefixed = m.utm_odometry(row, T0_NS, frame_id='a1/utm', child_frame_id='a1/base_footprint')
    assert (prefixed.header.frame_id, prefixed.child_frame_id) == ('a1/utm', 'a1/base_footprint')

    truth = m.ground_truth_odometry(row, T0_NS)
    assert truth.pose.pose.position.x == 500477.9
    assert truth.twist.twist.linear.z == 0.0
    tf = m.transform_from_odometry(odom)
    assert (tf.header.frame_id, tf.child_frame_id) == ('utm', 'base_footprint')


def test_variances_from_config():
    from acres_sim.config import load_config
    cfg = load_config(rig='polaris')
    v = m.ins_variances(cfg)
    assert v['orientation_var'][2] == \
        pytest.approx(math.radians(cfg['ins.heading_sigma_deg']) ** 2)
    assert v['gyro_var'] == cfg['ins.gyro_white_radps'] ** 2
    assert len(v['twist_var']) == 6
    iv = m.imu_variances(cfg)
    assert iv['accel_var'] == cfg['imu.accel_std_mps2'] ** 2


def test_humble_typestore(tmp_path, gnss_row):
    """The same message objects written with Humble's definitions read back."""
    from rosbags.typesys import Stores, get_typestore
    humble = get_typestore(Stores.ROS2_HUMBLE)
    folder = tmp_path / 'humble'
    with BagWriter(folder, typestore=Stores.ROS2_HUMBLE) as bag:
        bag.add_topic('/gnss_receiver/fix', 'sensor_msgs/msg/NavSatFix')
        bag.add_topic('/imu/data_raw', 'sensor_msgs/msg/Imu')
        bag.write('/gnss_receiver/fix', T0_NS,
                  m.navsat_fix_from_gnss_row(gnss_row, T0_NS, 'gnss_link'))
        bag.write('/imu/data_raw', T0_NS,
                  m.imu_from_imu_row(IMU_ROW, T0_NS, 'imu_link', 1e-4, 1e-6))
    with Reader(folder) as reader:
        for conn, _, raw in reader.messages():
            msg = humble.deserialize_cdr(raw, conn.msgtype)
            assert msg.header.frame_id in ('gnss_link', 'imu_link')
            assert conn.digest == humble.hash_rihs01(conn.msgtype)


# ----------------------------------------------------------------------------
# Serialised bytes and the background writer process

def _bag_content(folder):
    """Everything a reader sees: messages in order (topic, time, bytes), the
    connections (type, hash, definition, QoS) and metadata.yaml."""
    with Reader(folder) as reader:
        connections = [(c.id, c.topic, c.msgtype, c.digest, c.msgdef.data,
                        c.ext.offered_qos_profiles) for c in reader.connections]
        messages = [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]
    meta = yaml.safe_load((folder / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return connections, messages, meta


def test_background_bag_is_the_foreground_bag(tmp_path, gnss_row):
    fg = _write_polaris(tmp_path / 'fg' / 'polaris', gnss_row)
    bg = _write_polaris(tmp_path / 'bg' / 'polaris', gnss_row, background=True, batch_size=7)
    fg_conns, fg_msgs, fg_meta = _bag_content(fg)
    bg_conns, bg_msgs, bg_meta = _bag_content(bg)
    assert bg_conns == fg_conns
    assert bg_msgs == fg_msgs and len(bg_msgs) == sum(_expected_counts().values())
    assert bg_meta == fg_meta
    def qos(meta):
        return [t['topic_metadata']['offered_qos_profiles']
                for t in meta['topics_with_message_count']]
    assert qos(bg_meta) == qos(fg_meta) and all(qos(bg_meta))
    # Same writes in the same order: byte for byte the same files.
    assert (bg / 'metadata.yaml').read_text() == (fg / 'metadata.yaml').read_text()
    assert (bg / 'polaris.mcap').read_bytes() == (fg / 'polaris.mcap').read_bytes()


@pytest.mark.parametrize('background', [False, True], ids=['foreground', 'background'])
def test_write_raw_and_write_raw_many(tmp_path, background):
    """Caller-serialised bytes land as they are, in the order written; topics
    and custom data may come between messages."""
    folder = tmp_path / 'raw'
    clocks = [(T0_NS + k, m.TYPESTORE.serialize_cdr(m.clock(T0_NS + k), 'rosgraph_msgs/msg/Clock'))
              for k in range(25)]
    strings = [m.TYPESTORE.serialize_cdr(m.String(data=f's{k}'), 'std_msgs/msg/String')
               for k in range(10)]
    with BagWriter(folder, background=background, batch_size=4) as bag:
        bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        for t, data in clocks[:5]:
            bag.write_raw('/clock', t, data)
        bag.add_topic('/s', 'std_msgs/msg/String', qos='static')
        bag.write_raw_many('/s', np.arange(10, dtype=np.int64) + T0_NS + 5,
                           [bytearray(d) for d in strings])         # any bytes-like
        bag.set_custom_data('run', 'raw')
        bag.write_raw_many('/clock', [t + 15 for t, _ in clocks[5:]],
                           [memoryview(d) for _, d in clocks[5:]])
        bag.write('/s', T0_NS + 100, m.String(data='last'))
        assert bag.message_count == 36
        with pytest.raises(ValueError, match='unsigned 64-bit'):
            bag.write_raw('/clock', -1, clocks[0][1])
        with pytest.raises(ValueError, match='times for'):
            bag.write_raw_many('/clock', [1, 2], [clocks[0][1]])
        with pytest.raises(KeyError, match='not registered'):
            bag.write_raw('/nope', 0, b'')
        assert bag.message_count == 36
    if background:
        with pytest.raises(ValueError, match='closed'):
            bag.write_raw('/clock', 0, clocks[0][1])
    expected = ([('/clock', t, d) for t, d in clocks[:5]]
                + [('/s', T0_NS + 5 + k, d) for k, d in enumerate(strings)]
                + [('/clock', t + 15, d) for t, d in clocks[5:]]
                + [('/s', T0_NS + 100,
                    m.TYPESTORE.serialize_cdr(m.String(data='last'), 'std_msgs/msg/String'))])
    connections, messages, meta = _bag_content(folder)
    assert messages == [(topic, t, bytes(d)) for topic, t, d in expected]
    assert [c[5][0].durability for c in connections] == \
        [QosDurability.VOLATILE, QosDurability.TRANSIENT_LOCAL]
    assert meta['custom_data'] == {'run': 'raw'}
    assert meta['message_count'] == 36
    # The MCAP itself holds the messages in write order too.
    with open(folder / 'raw.mcap', 'rb') as f:
        in_file = [(c.topic, msg.log_time, msg.data) for _, c, msg in
                   make_reader(f).iter_messages(log_time_order=False)]
    assert in_file == [(topic, t, bytes(d)) for topic, t, d in expected]


def test_background_close_twice_leaves_no_process(tmp_path):
    bag = BagWriter(tmp_path / 'b', background=True)
    pid = bag.child_pid
    assert pid != os.getpid() and os.path.exists(f'/proc/{pid}')
    bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
    bag.write('/clock', T0_NS, m.clock(T0_NS))
    assert not bag.closed
    bag.close()
    bag.close()                                  # twice is fine
    assert bag.closed and bag.message_count == 1
    assert bag._child.process.exitcode == 0
    assert not os.path.exists(f'/proc/{pid}')   # joined: no zombie
    assert _read_counts(tmp_path / 'b') == {'/clock': 1}
    assert BagWriter(tmp_path / 'f').child_pid is None


def _kill_child(bag):
    os.kill(bag.child_pid, signal.SIGKILL)
    bag._child.process.join(10)
    assert bag._child.process.exitcode == -signal.SIGKILL


def test_background_child_killed_raises_at_the_next_batch(tmp_path):
    bag = BagWriter(tmp_path / 'b', background=True, batch_size=50)
    bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
    for k in range(120):
        bag.write('/clock', k, m.clock(k))
    _kill_child(bag)
    with pytest.raises(BagWriterError, match=r'pid \d+\) was killed by SIGKILL') as err:
        for k in range(50):
            bag.write('/clock', k, m.clock(k))
    assert '100 messages were sent' in str(err.value)
    with pytest.raises(BagWriterError):          # it stays failed
        bag.flush()
    bag.close()                                  # already reported: close just cleans up
    bag.close()
    assert bag.closed and not os.path.exists(f'/proc/{bag.child_pid}')


def test_background_child_killed_raises_at_close(tmp_path):
    bag = BagWriter(tmp_path / 'b', background=True)
    bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
    bag.write('/clock', 0, m.clock(0))
    _kill_child(bag)
    with pytest.raises(BagWriterError, match='killed by SIGKILL'):
        bag.close()
    bag.close()
    assert bag.closed


def test_a_background_start_not_waited_for_raises_its_failure_once_waited_for(tmp_path):
    """wait=False only starts the child; a bag that cannot be opened is raised
    by wait_ready(), the child is reaped and a close after it is silent."""
    (tmp_path / 'a file').write_text('')
    bag = BagWriter(tmp_path / 'a file' / 'b', background=True, wait=False)
    with pytest.raises(BagWriterError, match='while opening the bag'):
        bag.wait_ready()
    assert bag.closed and bag._child.process.exitcode is not None
    bag.close()
    with pytest.raises(BagWriterError, match='while opening the bag'):
        bag.wait_ready()                              # it stays failed
    assert (tmp_path / 'a file').read_text() == ''


def test_a_background_start_not_waited_for_writes_as_one_waited_for(tmp_path):
    bag = BagWriter(tmp_path / 'b', background=True, wait=False)
    bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')   # waits for the child first
    for k in range(5):
        bag.write('/clock', k, m.clock(k))
    bag.close()
    with Reader(tmp_path / 'b') as reader:
        assert reader.message_count == 5


def test_background_child_error_is_raised_with_its_traceback(tmp_path):
    folder = tmp_path / 'b'
    with pytest.raises(BagWriterError,
                       match=r'(?s)failed while .*WriterError: .*unknown connection id 99') as err:
        with BagWriter(folder, background=True) as bag:
            bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
            for k in range(10):
                bag.write('/clock', k, m.clock(k))
            bag.flush()
            bag._child.pending.append((99, 10, b'\x00'))   # no such connection in the child
            bag.flush()
            bag._child.process.join(10)
            bag.write('/clock', 11, m.clock(11))
            bag.flush()                                   # raises here at the latest
    assert 'Traceback' in str(err.value)
    assert err.value.reason == ('rosbags.rosbag2.errors.WriterError: Tried to write to '
                                'unknown connection id 99.')            # what the CLI shows
    # The child closed the bag with what it had written before the error.
    assert _read_counts(folder) == {'/clock': 10}


def test_background_sigint_inside_a_batch_send_is_held(tmp_path):
    bag = BagWriter(tmp_path / 'b', background=True, batch_size=10)
    bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
    inbox = bag._child.inbox
    real_send_bytes = inbox.send_bytes

    def send_interrupted(payload):
        os.kill(os.getpid(), signal.SIGINT)    # between the batch's header and its payload
        for _ in range(1000):                  # give the handler plenty of chances to run
            pass
        real_send_bytes(payload)

    inbox.send_bytes = send_interrupted
    with pytest.raises(KeyboardInterrupt):
        for k in range(10):
            bag.write('/clock', k, m.clock(k))
    del inbox.send_bytes
    assert bag.message_count == 10
    bag.close()
    assert _read_counts(tmp_path / 'b') == {'/clock': 10}


def _script_bag(folder, body):
    return textwrap.dedent(f'''
        import os, signal, sys
        from acres_sim.pipeline import messages as m
        from acres_sim.record.bag import BagWriter, exit_on_sigterm
        CLOCK = [m.TYPESTORE.serialize_cdr(m.clock(k), 'rosgraph_msgs/msg/Clock')
                 for k in range(100)]
        bag = BagWriter({str(folder)!r}, background=True, batch_size=100)
        bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        print(bag.child_pid, flush=True)
    ''') + textwrap.dedent(body)


def _wait_for(condition, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _process_gone(pid):
    """Exited (an orphan may stay a zombie if PID 1 does not reap it)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')
    except FileNotFoundError:
        return True


def test_background_bag_of_a_parent_killed_by_sigkill_is_readable(tmp_path):
    """The parent dies without close(): the child sees end-of-file and closes
    the bag with every message it was sent."""
    folder = tmp_path / 'orphan'
    code = _script_bag(folder, '''
        for k in range(3000):
            bag.write_raw('/clock', k, CLOCK[k % 100])
        bag.flush()
        for k in range(3000, 3050):
            bag.write_raw('/clock', k, CLOCK[k % 100])      # still in the unsent batch
        os.kill(os.getpid(), signal.SIGKILL)
    ''')
    proc = subprocess.run([PYTHON, '-c', code], capture_output=True, text=True, cwd=REPO,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    child = int(proc.stdout.split()[0])
    _wait_for(lambda: (folder / 'metadata.yaml').exists(), 'the writer never closed the bag')
    _wait_for(lambda: _process_gone(child), 'the writer process did not exit')
    counts = _read_counts(folder)
    assert 3000 <= counts['/clock'] <= 3050
    meta = yaml.safe_load((folder / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['message_count'] == counts['/clock']
    with open(folder / 'orphan.mcap', 'rb') as f:
        assert make_reader(f).get_summary().statistics.message_count == counts['/clock']


@pytest.mark.parametrize('sig', ['SIGINT', 'SIGTERM'])
def test_background_bag_survives_a_signal_to_the_process_group(tmp_path, sig):
    """Ctrl-C (or kill -TERM -pgid) reaches the parent and the writer process:
    the child ignores it, the parent's with-block closes the bag."""
    folder = tmp_path / 'group'
    code = _script_bag(folder, '''
        exit_on_sigterm()
        with bag:
            k = 0
            while True:
                bag.write_raw('/clock', k, CLOCK[k % 100])
                k += 1
                if k == 3000:
                    print('ready', flush=True)
    ''')
    proc = subprocess.Popen([PYTHON, '-c', code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=REPO, text=True, start_new_session=True)
    try:
        proc.stdout.readline()                   # the child's pid
        assert proc.stdout.readline().strip() == 'ready'
        os.killpg(proc.pid, getattr(signal, sig))
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert ('KeyboardInterrupt' in err) if sig == 'SIGINT' else (proc.returncode == 143), err
    assert 'BagWriterError' not in err and 'Process bag writer' not in err, err
    counts = _read_counts(folder)
    assert counts['/clock'] >= 3000
    meta = yaml.safe_load((folder / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['message_count'] == counts['/clock']


def test_background_bag_closed_at_exit_and_on_garbage_collection(tmp_path):
    """Also: a script without ``if __name__ == '__main__'`` -- the writer
    process does not re-run the parent's main module, as spawn would."""
    script = tmp_path / 'unguarded.py'
    script.write_text(textwrap.dedent(f'''
        import gc
        from acres_sim.pipeline import messages as m
        from acres_sim.record.bag import BagWriter
        print('main module runs', flush=True)
        for name in ('collected', 'at_exit'):
            bag = BagWriter({str(tmp_path)!r} + '/' + name, background=True)
            bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
            for k in range(1234):
                bag.write('/clock', k, m.clock(k))
            if name == 'collected':
                del bag
                gc.collect()
        # the second one is never closed: the interpreter's exit closes it
    '''))
    env = {**os.environ, 'PYTHONPATH': str(REPO)}
    proc = subprocess.run([PYTHON, str(script)], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ''
    assert proc.stdout == 'main module runs\n'
    for name in ('collected', 'at_exit'):
        assert _read_counts(tmp_path / name) == {'/clock': 1234}


@pytest.mark.parametrize('background', [False, True], ids=['foreground', 'background'])
def test_write_block_merges_topics_in_time_order(tmp_path, background):
    """write_block: messages of several topics sorted by time, ties in the
    order of the entries, then in their own order; after earlier writes."""
    folder = tmp_path / 'block'
    ser = m.TYPESTORE.serialize_cdr
    rng = np.random.default_rng(4)
    entries, expected = [], []
    for e, topic in enumerate(['/clock', '/s', '/clock']):
        stamps = np.sort(rng.integers(0, 6, 8)) + T0_NS      # many equal times
        if topic == '/clock':
            datas = [bytes(ser(m.clock(int(t) + e), 'rosgraph_msgs/msg/Clock')) for t in stamps]
        else:
            datas = [bytes(ser(m.String(data='x' * int(k)), 'std_msgs/msg/String'))
                     for k in rng.integers(0, 9, 8)]        # messages of varying length
        entries.append((topic, stamps, b''.join(datas), [len(d) for d in datas]))
        expected += [((int(t), e, i), topic, d) for i, (t, d) in enumerate(zip(stamps, datas))]
    first = bytes(ser(m.clock(1), 'rosgraph_msgs/msg/Clock'))
    with BagWriter(folder, background=background, batch_size=5) as bag:
        bag.add_topic('/clock', 'rosgraph_msgs/msg/Clock')
        bag.add_topic('/s', 'std_msgs/msg/String')
        bag.write_raw('/clock', T0_NS + 100, first)     # pending before the block
        with pytest.raises(ValueError, match='do not match'):
            bag.write_block([('/s', [T0_NS], b'abc', [2])])
        with pytest.raises(ValueError, match='negative'):
            bag.write_block([('/s', [-1], b'abc', [3])])
        bag.write_block(entries)
        bag.write_block([])
        assert bag.message_count == 25
    _connections, _messages, meta = _bag_content(folder)
    assert meta['message_count'] == 25
    with open(folder / 'block.mcap', 'rb') as f:        # the order in the file
        in_file = [(c.topic, msg.log_time, msg.data) for _, c, msg in
                   make_reader(f).iter_messages(log_time_order=False)]
    order = [(topic, key[0], data) for key, topic, data in sorted(expected)]
    assert in_file == [('/clock', T0_NS + 100, first)] + order


# ----------------------------------------------------------------------------
# A block of messages at once: rosbags' bytes

BLOCK_TOPICS = (('/a', 'std_msgs/msg/String'), ('/b', 'sensor_msgs/msg/Imu'),
                ('/c', 'std_msgs/msg/String'))


def _add_block_topics(writer):
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    for topic, msgtype in BLOCK_TOPICS:
        msgdef, _ = store.generate_msgdef(msgtype, ros_version=2)
        writer.add_connection(topic, msgtype, msgdef=msgdef, rihs01=store.hash_rihs01(msgtype),
                              offered_qos_profiles=[QOS_RELIABLE])


@pytest.mark.parametrize('sizes', ['any', 'per topic'])
def test_a_bag_written_in_blocks_is_rosbags_bag_byte_for_byte(tmp_path, sizes):
    """rosbags' Writer one message at a time and BlockWriter in blocks of
    1 to 3000 (some as single writes) give the same files, over several
    chunks; the mcap reader reads every message back in order.  The
    messages' sizes: any from 0 to 400, each message where the one before
    ends; or as in a recording, one size per topic but for a few odd ones
    (sizes many messages share are copied otherwise than rare ones), the
    messages anywhere in the payload."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from acres_sim.record.mcap_blocks import CHUNK_BYTES, BlockWriter
    rng = np.random.default_rng(7)
    n = 20000
    ids = rng.integers(1, len(BLOCK_TOPICS) + 1, n)
    stamps = np.sort(rng.integers(0, 10**12, n))
    if sizes == 'any':
        lengths = rng.integers(0, 400, n)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    else:
        lengths = np.array([0, 300, 88, 140])[ids]
        odd = rng.random(n) < 0.01
        lengths[odd] = rng.integers(0, 400, int(odd.sum()))
        order = rng.permutation(n)                  # message order[i] is i-th in the payload
        offsets = np.empty(n, dtype=np.int64)
        offsets[order] = np.concatenate([[0], np.cumsum(lengths[order])[:-1]])
    payload = rng.integers(0, 256, int(lengths.sum()), dtype=np.uint8).tobytes()
    assert lengths.sum() > 3 * CHUNK_BYTES
    reference = Writer(tmp_path / 'ref' / 'bag', version=8, storage_plugin=StoragePlugin.MCAP)
    reference.open()
    _add_block_topics(reference)
    for cid, t, at, size in zip(ids.tolist(), stamps.tolist(), offsets.tolist(), lengths.tolist()):
        reference.write(reference.connections[cid - 1], t, payload[at:at + size])
    reference.close()
    blocks = BlockWriter(tmp_path / 'new' / 'bag', version=8)
    blocks.open()
    _add_block_topics(blocks)
    i = 0
    while i < n:
        j = min(n, i + int(rng.integers(1, 3000)))
        if j - i < 5:
            for k in range(i, j):
                blocks.write(blocks.connections[ids[k] - 1], int(stamps[k]),
                             payload[offsets[k]:offsets[k] + lengths[k]])
        else:
            blocks.write_block(ids[i:j], stamps[i:j], offsets[i:j], lengths[i:j], payload)
        i = j
    blocks.write_block([], [], [], [], b'')
    blocks.close()
    for name in ('bag.mcap', 'metadata.yaml'):
        assert (tmp_path / 'new' / 'bag' / name).read_bytes() == \
            (tmp_path / 'ref' / 'bag' / name).read_bytes(), name
    with open(tmp_path / 'new' / 'bag' / 'bag.mcap', 'rb') as f:
        read = [(channel.topic, message.log_time, message.data)
                for _schema, channel, message in make_reader(f).iter_messages()]
    assert [t for _topic, t, _data in read] == stamps.tolist()
    assert [topic for topic, _t, _data in read] == [BLOCK_TOPICS[i - 1][0] for i in ids]
    assert [data for _topic, _t, data in read] == [
        payload[at:at + size] for at, size in zip(offsets.tolist(), lengths.tolist())]


def test_a_block_on_an_unknown_connection_is_refused(tmp_path):
    from rosbags.rosbag2 import WriterError
    from acres_sim.record.mcap_blocks import BlockWriter
    writer = BlockWriter(tmp_path / 'bag', version=8)
    writer.open()
    _add_block_topics(writer)
    with pytest.raises(WriterError, match='unknown connection id 4'):
        writer.write_block([1, 4], [0, 1], [0, 1], [1, 1], b'ab')
    writer.close()
    assert sum(writer.counts.values()) == 0
