"""The block encoders (acres_sim.pipeline.batches) give the bytes of the row
builders of acres_sim.pipeline.messages serialised by rosbags, message by message."""

import numpy as np
import pytest

from acres_sim.config import load_config
from acres_sim.core.ins import RESULT_SIZE
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.batches import MessageBatches
from acres_sim.pipeline.models import ins_model, site_georeference

TS = msg.TYPESTORE


def _serialised(message, msgtype):
    return bytes(TS.serialize_cdr(message, msgtype))


@pytest.fixture(scope='module')
def setting():
    config = load_config(rig='polaris')
    ins = ins_model(config, np.array([0.1, -0.2, 0.9]), None, site_georeference(config))
    batches = MessageBatches(msg.imu_variances(config), msg.ins_variances(config),
                             ins.pose_variance, ins.position_variance)
    rng = np.random.default_rng(11)
    results = rng.normal(size=(40, RESULT_SIZE)) * rng.choice([1e-3, 1.0, 1e6], (40, RESULT_SIZE))
    t_ns = np.sort(rng.integers(0, 4_000_000_000_000, 40))
    return config, ins, batches, results, t_ns


@pytest.mark.parametrize('frame', ['a', 'utm', 'gnss', 'agent2/base_footprint'])
def test_ins_topics_equal_the_row_builders(setting, frame):
    config, ins, batches, results, t_ns = setting
    var = msg.ins_variances(config)
    got = {name: encoded.messages() for name, encoded in {
        'odom': batches.utm_odometry(results, t_ns, 'utm', frame),
        'tf': batches.odometry_tf(results, t_ns, 'utm', frame),
        'fix': batches.ins_fix(results, t_ns, frame),
        'imu': batches.ins_imu(results, t_ns, frame, oxts_axes=False),
        'oxts': batches.ins_imu(results, t_ns, frame, oxts_axes=True),
        'velocity': batches.ins_velocity(results, t_ns, frame),
        'truth': batches.ground_truth_odometry(results, t_ns, 'utm', frame),
    }.items()}
    assert all(len(messages) == len(t_ns) for messages in got.values())
    for i, (o, stamp) in enumerate(zip(results, t_ns.tolist())):
        row = ins.row(o.tolist())
        odom = msg.utm_odometry(row, stamp, frame_id='utm', child_frame_id=frame,
                                twist_var=var['twist_var'])
        imu_kw = dict(orientation_var=var['orientation_var'], gyro_var=var['gyro_var'],
                      accel_var=var['accel_var'])
        expected = {
            'odom': (odom, 'nav_msgs/msg/Odometry'),
            'tf': (msg.tf_message([msg.transform_from_odometry(odom)]), 'tf2_msgs/msg/TFMessage'),
            'fix': (msg.ins_fix(row, stamp, frame), 'sensor_msgs/msg/NavSatFix'),
            'imu': (msg.ins_imu(row, stamp, frame, oxts_axes=False, **imu_kw),
                    'sensor_msgs/msg/Imu'),
            'oxts': (msg.ins_imu(row, stamp, frame, oxts_axes=True, **imu_kw),
                     'sensor_msgs/msg/Imu'),
            'velocity': (msg.ins_velocity(row, stamp, frame), 'geometry_msgs/msg/TwistStamped'),
            'truth': (msg.ground_truth_odometry(row, stamp, child_frame_id=frame),
                      'nav_msgs/msg/Odometry'),
        }
        for name, (message, msgtype) in expected.items():
            assert got[name][i] == _serialised(message, msgtype), (name, i)


def test_clock_and_imu_raw_equal_the_row_builders(setting):
    config, _ins, batches, _results, t_ns = setting
    rng = np.random.default_rng(3)
    values = np.round(rng.normal(size=(len(t_ns), 6)), 6)
    clocks = batches.clock(t_ns).messages()
    raw = batches.imu_raw(values, t_ns, 'agent1/imu_link').messages()
    var = msg.imu_variances(config)
    for i, stamp in enumerate(t_ns.tolist()):
        assert clocks[i] == _serialised(msg.clock(stamp), 'rosgraph_msgs/msg/Clock')
        row = {'specific_force_flu_mps2': values[i, :3].tolist(),
               'angular_velocity_flu_radps': values[i, 3:].tolist()}
        assert raw[i] == _serialised(msg.imu_from_imu_row(row, stamp, 'agent1/imu_link', **var),
                                     'sensor_msgs/msg/Imu')


def test_empty_blocks(setting):
    _config, _ins, batches, results, _t_ns = setting
    none = np.zeros(0, dtype=np.int64)
    for encoded in (batches.clock(none), batches.ins_imu(results[:0], none, 'x', oxts_axes=True),
                    batches.imu_raw(np.zeros((0, 6)), none, 'x')):
        assert encoded.messages() == [] and len(encoded.lengths()) == 0 and encoded.size > 0
