"""The shared middle (acres_sim.pipeline): a vehicle built from its
configuration, and each sensor's channel from sample to file row and CDR
bytes.  References: the row builders of acres_sim.pipeline.messages
serialised by rosbags, the lever-arm formula of acres_sim.core.frames, and
the spec's Drain written out in seconds."""

import calendar
import datetime
from fractions import Fraction

import numpy as np
import pytest

from acres_sim.config import load_config
from acres_sim.core.frames import lever_arm_from_chassis
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.channels import OneImuMessage
from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, static_tf, vehicle_route


def start_ns(config):
    """The ROS time of step 0: gnss.datum.start_utc as ns since 1970 (whole seconds here)."""
    utc = datetime.datetime.fromisoformat(config['gnss.datum.start_utc'])
    assert utc.microsecond == 0
    return calendar.timegm(utc.utctimetuple()) * 10**9


def ros_ns(config, k):
    """The ROS time of step k: start + k / 120 s to the nearest ns (exact)."""
    return start_ns(config) + round(Fraction(k * 10**9, 120))


def serialised(message, msgtype):
    return bytes(msg.TYPESTORE.serialize_cdr(message, msgtype))


def first_step_reaching(k_sample, delay_s):
    """The spec's Drain in float64 seconds: the first step whose time reaches
    t_sample + delay_s."""
    k = k_sample
    while k / 120 < k_sample / 120 + delay_s:
        k += 1
    return k


@pytest.fixture(scope='module')
def polaris():
    return load_config(rig='polaris')


# ---------------------------------------------------------------------------
# build_vehicle

def test_a_vehicle_has_its_mounts_rates_and_enabled_sensors_only():
    config = load_config(rig='maxxum', overrides={'imu.enabled': False, 'gnss.hz': 5.0})
    vehicle = build_vehicle(config, 'maxxum', route=vehicle_route('maxxum'))
    assert vehicle.imu is None and 'imu' not in vehicle.channels
    assert vehicle.gnss is not None and vehicle.ins is not None
    equipment = {'baro', 'mag', 'wheel_odometry', 'radar'}
    assert set(vehicle.channels) == {'gnss', 'ins'} | equipment
    assert set(vehicle.step_sensors) == equipment
    assert vehicle.rates == {'imu': config['imu.hz'], 'ins': config['ins.hz'], 'gnss': 5.0,
                             'truth': config['ins.hz']}
    p = vehicle.params
    for sensor, key, origin in (('gnss', 'gnss.antenna_flu_m', config['mount_frame']),
                                ('imu', 'imu.position_flu_m', config['mount_frame']),
                                ('ins', 'ins.position_flu_m', 'base_footprint')):
        np.testing.assert_array_equal(vehicle.arms[sensor], lever_arm_from_chassis(
            config[key], origin, p.wheelbase_m, p.cog_height_m))
    assert vehicle.route.name == 'field' and vehicle.start_pose == vehicle.route.start_pose()
    assert vehicle.delay_s == config['delay_s']


@pytest.mark.parametrize('rig', ['maxxum', 'polaris'])
def test_the_mounts_of_each_vehicle_as_the_spec_places_them(rig):
    """Spec, Frames and INS: base_footprint is the middle of the rear axle on
    the ground, the chassis origin 0.4 wheelbase ahead of it at the height of
    the centre of gravity.  The Maxxum: antenna [0, 0, 1.7] and IMU [0, 0, 0]
    from the chassis origin (sensors.json's defaults), the INS at
    base_footprint; the Polaris: every mount from base_footprint, its INS at
    base_footprint too."""
    vehicle = build_vehicle(load_config(rig=rig), rig, sensors=())
    wheelbase, cog = vehicle.params.wheelbase_m, vehicle.params.cog_height_m
    chassis = np.array([0.4 * wheelbase, 0.0, cog])          # in base_footprint
    if rig == 'maxxum':
        antenna, imu = np.array([0.0, 0.0, 1.7]), np.zeros(3)    # from the chassis
    else:
        antenna, imu = np.array([1.1, 0.0, 2.15]) - chassis, np.array([0.95, -0.45, 0.7]) - chassis
    np.testing.assert_allclose(vehicle.arms['gnss'], antenna, atol=1e-12)
    np.testing.assert_allclose(vehicle.arms['imu'], imu, atol=1e-12)
    np.testing.assert_allclose(vehicle.arms['ins'], -chassis, atol=1e-12)
    tf = {t.child_frame_id: t.transform.translation for t in static_tf([vehicle]).transforms}
    fix_frame = 'navsat_link' if rig == 'polaris' else 'gnss_link'
    for frame, where in (('gnss_antenna', chassis + antenna), ('imu_link', chassis + imu),
                         ('oxts_link', np.zeros(3)), (fix_frame, np.zeros(3))):
        t = tf[frame]
        np.testing.assert_allclose([t.x, t.y, t.z], where, atol=1e-12, err_msg=frame)


def test_only_the_sensors_asked_for_and_no_follower_without_a_route(polaris):
    vehicle = build_vehicle(polaris, 'polaris', sensors=('imu',))
    assert (vehicle.gnss, vehicle.ins, vehicle.route, vehicle.follower) == (None,) * 4
    assert set(vehicle.channels) == {'imu'}
    with pytest.raises(ValueError, match='unknown sensors'):
        build_vehicle(polaris, 'polaris', sensors=('lidar',))


def test_a_vehicle_split_over_processes_has_the_models_of_the_whole(polaris):
    """The live rig builds each sensor of a vehicle in its own node: the pieces
    are seeded as the recorder's whole vehicle is, per agent index."""
    whole = build_vehicle(polaris, 'polaris', agent_index=3)
    imu_only = build_vehicle(polaris, 'polaris', agent_index=3, sensors=('imu',))
    assert imu_only.imu.biases == whole.imu.biases
    assert build_vehicle(polaris, 'polaris', agent_index=4, sensors=('imu',)).imu.biases \
        != whole.imu.biases
    assert whole.agent_index == 3
    assert build_vehicle(polaris, 'polaris', sensors=()).agent_index == polaris['agent.index']


def test_topic_names_follow_the_namespace_global_ones_stay(polaris):
    plain = build_vehicle(polaris, 'polaris', sensors=())
    spaced = build_vehicle(polaris, 'polaris', sensors=(), namespace='fleet/agent2')
    assert plain.topic('imu/data_raw') == '/imu/data_raw'
    assert spaced.topic('imu/data_raw') == '/fleet/agent2/imu/data_raw'
    assert spaced.topic('/diagnostics') == '/diagnostics'


def test_one_simulation_takes_vehicles_that_share_rates_and_antenna(polaris):
    route = vehicle_route('polaris')
    a, b = (build_vehicle(polaris, 'polaris', route=route, agent_index=k) for k in (0, 1))
    other = build_vehicle(load_config(rig='polaris', overrides={'gnss.hz': 5.0}), 'polaris',
                          route=route)
    assert len(rig_simulation([a, b], 10).advance(3)) == 2
    with pytest.raises(ValueError, match='rates or antenna'):
        rig_simulation([a, other], 10)


def test_static_tf_has_every_vehicles_mounts_then_utm_to_map(polaris):
    vehicles = [build_vehicle(polaris, 'polaris', sensors=()),
                build_vehicle(load_config(rig='maxxum'), 'maxxum', sensors=(),
                              frame_prefix='agent1/')]
    transforms = static_tf(vehicles).transforms
    pairs = [(t.header.frame_id, t.child_frame_id) for t in transforms]
    assert pairs[-1] == ('utm', 'map')
    assert ('base_footprint', 'oxts_imu_link') in pairs           # the Polaris' OxTS axes
    assert ('agent1/base_footprint', 'agent1/gnss_antenna') in pairs
    assert ('agent1/base_footprint', 'agent1/gnss_link') in pairs
    assert all(t.header.stamp.sec * 10**9 + t.header.stamp.nanosec == start_ns(polaris)
               for t in transforms)


# ---------------------------------------------------------------------------
# channels

def test_imu_rows_and_messages_one_at_a_time_or_a_block_at_a_time(polaris):
    """The recorder pushes a block, the node one sample: the same rows, times
    and bytes, those of rosbags serialising the Imu row builder."""
    vehicle = build_vehicle(polaris, 'polaris', sensors=('imu',), frame_prefix='agent3/')
    block, single = vehicle.channels['imu'], build_vehicle(
        polaris, 'polaris', sensors=('imu',), frame_prefix='agent3/').channels['imu']
    rng = np.random.default_rng(5)
    steps = np.arange(0, 240, 2)
    values = rng.normal(size=(len(steps), 6)) * [1, 1, 9.8, 0.1, 0.1, 0.5]
    block.push_block(steps, values)
    for k, v in zip(steps.tolist(), values.tolist()):
        single.push_row(k, {'specific_force_flu_mps2': [round(x, 6) for x in v[:3]],
                            'angular_velocity_flu_radps': [round(x, 8) for x in v[3:]]})
    got, again = block.drain(200), single.drain(200)
    assert got == again and len(got) == len([k for k in steps
                                             if first_step_reaching(k, 0.05) <= 200])
    var = msg.imu_variances(polaris)
    for d in got:
        assert d.k_delivery == first_step_reaching(d.k_sample, polaris['delay_s'])
        assert d.row['delivery_time_s'] == d.k_delivery / 120
        expected = msg.imu_from_imu_row(d.row, ros_ns(polaris, d.k_sample),
                                        'agent3/imu_link', var['accel_var'], var['gyro_var'])
        assert d.messages == [('imu/data_raw', serialised(expected, 'sensor_msgs/msg/Imu'))]


def test_one_imu_message_is_the_batch_encoders(polaris):
    batches = build_vehicle(polaris, 'maxxum', sensors=()).batches
    one = OneImuMessage(batches, 'agent3/imu_link')
    rng = np.random.default_rng(3)
    for stamp in (0, 8_333_333, 1_796_000_000_123_456_789):
        values = rng.normal(size=6) * [1, 1, 9.8, 0.1, 0.1, 0.5]
        expected = batches.imu_raw(values.reshape(1, 6), [stamp], 'agent3/imu_link').payload
        assert one.encode(stamp, values[:3].tolist(), values[3:].tolist()) == expected


@pytest.mark.parametrize('site', [True, False])
def test_gnss_deliveries_carry_the_fix_the_sentence_and_the_status(site):
    # GST and GPSFix off: the receiver's first three topics (test_gnss_outputs.py has them on)
    config = load_config(rig='polaris', overrides={'site.enabled': site, 'delay_s': 0.1,
                                                   'gnss.nmea.gst': False, 'gnss.gpsfix': False})
    vehicle = build_vehicle(config, 'polaris', sensors=('gnss',), frame_prefix='agent2/')
    channel = vehicle.channels['gnss']
    antennas = np.array([[10.0 + k, 5.0, 1.7] for k in range(0, 120, 12)])
    steps = np.arange(0, 120, 12)
    records = vehicle.gnss.epoch_records(steps / 120, antennas)
    rows = [vehicle.gnss.row(k / 120, a, r) for k, a, r in zip(steps, antennas, records)]
    vehicle.gnss.reset()
    channel.push_epochs(steps, antennas, vehicle.gnss.epoch_records(steps / 120, antennas))
    delivered = channel.drain(119)
    assert [d.k_sample for d in delivered] == [k for k in steps if k + 12 <= 119]
    for d in delivered:
        row = rows[d.k_sample // 12]
        assert d.row == {**row, 'sample_time_s': d.k_sample / 120,
                         'available_time_s': d.k_sample / 120 + 0.1,
                         'delivery_time_s': d.k_delivery / 120}
        assert d.k_delivery == first_step_reaching(d.k_sample, 0.1)
        assert d.extra == antennas[d.k_sample // 12].tolist()
        stamp = ros_ns(config, d.k_sample)
        fix = msg.navsat_fix_from_gnss_row(row, stamp, 'agent2/gnss_antenna',
                                           msg.navsat_service(config))
        expected = [('gnss_receiver/fix', serialised(fix, 'sensor_msgs/msg/NavSatFix'))]
        if site:
            expected.append(('gnss_receiver/nmea', serialised(
                msg.String(data=row['nmea_gga']), 'std_msgs/msg/String')))
        status = msg.diagnostics_from_gnss_row(row, stamp, 'agent2/gnss_receiver')
        expected.append(('/diagnostics',
                         serialised(status, 'diagnostic_msgs/msg/DiagnosticArray')))
        assert d.messages == expected
    assert [topic for topic, _type in channel.topic_types] == \
        ['gnss_receiver/fix', 'gnss_receiver/nmea', '/diagnostics']


def test_rows_still_waiting_at_the_end_have_no_delivery_and_no_messages(polaris):
    channel = build_vehicle(polaris, 'polaris', sensors=('imu',)).channels['imu']
    channel.push_block(np.array([100, 101]), np.ones((2, 6)))
    flushed = channel.flush()
    assert [(d.k_sample, d.k_delivery, d.messages) for d in flushed] == [(100, None, []),
                                                                        (101, None, [])]
    assert all(d.row['delivery_time_s'] is None for d in flushed)
    assert channel.drain(10_000) == []
    channel.push_block(np.array([200]), np.ones((1, 6)))
    channel.reset()
    assert channel.drain(10_000) == []


def test_ins_topics_of_a_block_in_publishing_order(polaris):
    from acres_sim.core.ins import RESULT_SIZE

    maxxum = build_vehicle(load_config(rig='maxxum'), 'maxxum', sensors=('ins',))
    polaris_ins = build_vehicle(polaris, 'polaris', sensors=('ins',)).channels['ins']
    results = np.random.default_rng(2).normal(size=(3, RESULT_SIZE))
    steps = np.array([0, 12, 24])
    assert [t for t, _ns, _e in polaris_ins.encode_epochs(steps, results)] == [
        'vehicle/odom', '/tf', 'oxts/fix', 'oxts/imu', 'oxts/velocity', 'sim/ground_truth/odom']
    topics = maxxum.channels['ins'].encode_epochs(steps, results, tf=False)
    assert [t for t, _ns, _e in topics] == ['odom', 'gnss/fix', 'imu/data', 'ground_truth/odom']
    assert [t for t, _type in maxxum.channels['ins'].topic_types] == [t for t, _n, _e in topics]
    for _topic, t_ns, encoded in topics:
        t0 = start_ns(polaris)
        assert t_ns.tolist() == [t0, t0 + 100_000_000, t0 + 200_000_000] and encoded.count == 3
