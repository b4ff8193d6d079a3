"""What every sensor sampled from the vehicle's state shares (core.step_sensor,
pipeline.step_channels): a block of any size gives the same samples, the
spec's sensors are untouched by the new ones, each vehicle carries what its
equipment says, and their messages have their frames, units and covariances."""

from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from sensor_states import run_in_blocks

from acres_sim.config import load_config
from acres_sim.core.truth import T_P, T_Q, T_V, T_W, TRUTH_SIZE
from acres_sim.pipeline.vehicle import build_vehicle
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

NEW_SENSORS_OFF = {'baro.enabled': False, 'mag.enabled': False,
                   'wheel_odometry.enabled': False, 'radar.enabled': False}
STEP_FILES = {'baro': 'barometer.jsonl', 'mag': 'magnetometer.jsonl',
              'wheel_odometry': 'wheel_odometry.jsonl', 'radar': 'radar.jsonl'}
# the Polaris's (no radar: the Maxxum's)
STEP_TOPICS = {'/baro/pressure': 'sensor_msgs/msg/FluidPressure',
               '/baro/altitude': 'geometry_msgs/msg/PoseWithCovarianceStamped',
               '/imu/mag': 'sensor_msgs/msg/MagneticField',
               '/wheel/odom': 'nav_msgs/msg/Odometry'}
EQUIPMENT = {'polaris': {'baro', 'mag', 'wheel_odometry'},
             'maxxum': {'baro', 'mag', 'wheel_odometry', 'radar'}}


def turning_states(steps, k0=0):
    """States of a vehicle driving a 20 m circle at 3 m/s, climbing 1 m per lap."""
    t = (k0 + np.arange(steps)) / 120.0
    rate = 3.0 / 20.0
    yaw = rate * t
    states = np.zeros((steps, TRUTH_SIZE))
    states[:, T_P] = 20.0 * np.sin(yaw)
    states[:, T_P + 1] = 20.0 * (1.0 - np.cos(yaw))
    states[:, T_P + 2] = yaw / (2.0 * np.pi)
    states[:, T_Q + 2] = np.sin(yaw / 2.0)
    states[:, T_Q + 3] = np.cos(yaw / 2.0)
    states[:, T_V] = 3.0 * np.cos(yaw)
    states[:, T_V + 1] = 3.0 * np.sin(yaw)
    states[:, T_W + 2] = rate
    return states


def bag_entries(folder):
    """{topic: [(time, bytes), ...]} of a recording's bag."""
    out = {}
    with AnyReader([Path(folder) / 'bag']) as reader:
        for connection, t, data in reader.messages():
            out.setdefault(connection.topic, []).append((t, bytes(data)))
    return out


@pytest.mark.parametrize('name', sorted(STEP_FILES))
def test_blocks_of_any_size_give_the_same_samples(name):
    config = load_config(rig='maxxum')
    states = turning_states(1200)

    def samples(block):
        model = build_vehicle(config, 'maxxum', sensors=(name,)).step_sensors[name]
        return run_in_blocks(model, states, block)

    whole_k, whole = samples(len(states))
    assert len(whole_k) >= 100
    for block in (1, 7, 240):
        k, v = samples(block)
        np.testing.assert_array_equal(k, whole_k)
        np.testing.assert_array_equal(v, whole)


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    """The Polaris for 10 s with its equipment, and with the spec's sensors only."""
    folder = tmp_path_factory.mktemp('step_sensors')
    for name, overrides in (('on', {}), ('off', NEW_SENSORS_OFF)):
        record(RecordRequest('polaris', folder / name,
                             RigOptions(duration_s=10.0, overrides=overrides), progress=False))
    return folder / 'on', folder / 'off'


def test_the_spec_sensors_are_untouched_by_the_new_ones(recordings):
    on, off = recordings
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'):
        assert (on / name).read_bytes() == (off / name).read_bytes(), name
    for name, file in STEP_FILES.items():
        assert (on / file).is_file() == (name != 'radar') and not (off / file).exists()
    with_new, without = bag_entries(on), bag_entries(off)
    assert set(with_new) - set(without) == set(STEP_TOPICS)
    for topic, entries in without.items():
        assert with_new[topic] == entries, topic


def test_each_vehicle_carries_its_equipment_and_each_sensor_switches_off():
    for rig, names in EQUIPMENT.items():
        config = load_config(rig=rig)
        assert set(build_vehicle(config, rig).step_sensors) == names
        for name in names:
            off = load_config(rig=rig, overrides={f'{name}.enabled': False})
            assert set(build_vehicle(off, rig).step_sensors) == names - {name}
    # the spec's defaults (no vehicle): none of them
    assert not any(load_config()[f'{name}.enabled'] for name in STEP_FILES)
    # the radar's mount is in the static TF when (and only when) the vehicle has one
    from acres_sim.pipeline.vehicle import static_tf
    for rig, names in EQUIPMENT.items():
        frames = [t.child_frame_id for t in static_tf([build_vehicle(load_config(rig=rig),
                                                                     rig)]).transforms]
        assert ('radar_link' in frames) == ('radar' in names)
    # the Maxxum's steel, the Polaris none
    assert load_config(rig='maxxum')['mag.hard_iron_t'] != [0.0, 0.0, 0.0]
    assert load_config(rig='polaris')['mag.hard_iron_t'] == [0.0, 0.0, 0.0]


def test_the_messages_have_their_frames_units_and_covariances(recordings):
    on, _off = recordings
    config = load_config(rig='polaris')
    with AnyReader([on / 'bag']) as reader:
        connections = {c.topic: c for c in reader.connections}
        assert {t: connections[t].msgtype for t in STEP_TOPICS} == STEP_TOPICS

        def first(topic):
            con = connections[topic]
            _c, t, data = next(iter(reader.messages(connections=[con])))
            return t, reader.deserialize(data, con.msgtype)

        t, pressure = first('/baro/pressure')
        assert pressure.header.frame_id == 'oxts_link'
        assert 97000.0 < pressure.fluid_pressure < 100000.0          # Pa, not hPa
        assert pressure.variance == pytest.approx(config['baro.noise_pa'] ** 2)
        _t, altitude = first('/baro/altitude')
        assert altitude.header.frame_id == 'map'
        assert abs(altitude.pose.pose.position.z) < 2.0               # above the tile origin
        covariance = altitude.pose.covariance.reshape(6, 6)
        assert 0.0 < covariance[2, 2] < 1.0 and covariance[0, 0] >= 1e6
        _t, field = first('/imu/mag')
        assert field.header.frame_id == 'oxts_link'
        b = np.array([field.magnetic_field.x, field.magnetic_field.y, field.magnetic_field.z])
        assert 4e-5 < np.linalg.norm(b) < 7e-5                         # tesla
        covariance = field.magnetic_field_covariance.reshape(3, 3)
        assert np.all(np.diag(covariance) == pytest.approx(config['mag.noise_t'] ** 2))
        # stamped with the sample time, in the bag at t_sample + delay_s
        assert t - (pressure.header.stamp.sec * 10**9 + pressure.header.stamp.nanosec) \
            == pytest.approx(config['delay_s'] * 1e9, abs=1e7)


def test_the_wheel_surfaces_of_the_schema_are_the_models():
    from acres_sim.config.schema import WHEEL_SURFACES
    from acres_sim.core.wheel_odometry import SURFACES

    assert WHEEL_SURFACES == tuple(SURFACES)


def test_wheel_odometry_and_radar_messages_follow_their_rows(tmp_path):
    """The Maxxum's wheel/odom (odom -> base_footprint, REP-105) and radar/speed
    (radar_link): each message holds its row's values, covariances never all zero."""
    import json

    out = tmp_path / 'maxxum'
    record(RecordRequest('maxxum', out, RigOptions(duration_s=30.0), progress=False))
    wheel = [json.loads(line) for line in (out / 'wheel_odometry.jsonl').open()]
    radar = [json.loads(line) for line in (out / 'radar.jsonl').open()]
    with AnyReader([out / 'bag']) as reader:
        def decoded(topic):
            cons = [c for c in reader.connections if c.topic == topic]
            return [reader.deserialize(d, c.msgtype)
                    for c, _t, d in reader.messages(connections=cons)]
        odometry, speeds = decoded('/wheel/odom'), decoded('/radar/speed')
    assert len(odometry) == len(wheel) > 1000 and len(speeds) == len(radar) > 250
    for row, m in zip(wheel, odometry):
        assert (m.header.frame_id, m.child_frame_id) == ('odom', 'base_footprint')
        assert [m.pose.pose.position.x, m.pose.pose.position.y] == row['position_odom_m']
        yaw = 2.0 * np.arctan2(m.pose.pose.orientation.z, m.pose.pose.orientation.w)
        assert abs((yaw - row['yaw_odom_rad'] + np.pi) % (2 * np.pi) - np.pi) < 1e-12
        assert m.twist.twist.linear.x == row['speed_mps']
        assert m.twist.twist.angular.z == row['yaw_rate_radps']
        pose = m.pose.covariance.reshape(6, 6)
        c = np.array(row['pose_covariance_xy_yaw'])
        np.testing.assert_array_equal(pose[np.ix_([0, 1, 5], [0, 1, 5])], c)
        assert np.all(np.diag(pose) > 0) and np.all(np.diag(m.twist.covariance.reshape(6, 6)) > 0)
    assert wheel[-1]['distance_m'] > 20.0          # it drove
    for row, m in zip(radar, speeds):
        assert m.header.frame_id == 'radar_link'
        assert m.twist.twist.linear.x == row['speed_mps']
        variance = m.twist.covariance.reshape(6, 6)[0, 0]
        sigma = row['sigma_mps'] if row['valid'] else 0.138889
        assert variance == pytest.approx(sigma ** 2)
    assert any(not row['valid'] for row in radar[:5]) and all(row['valid'] for row in radar[-50:])


def test_a_users_vehicle_overlay_sets_the_equipments_keys(tmp_path):
    """The packaged equipment comes before the vehicle overlay: a user's
    --vehicle-config can switch a sensor off or change it."""
    overlay = tmp_path / 'mine.yaml'
    overlay.write_text('radar:\n  enabled: false\nmag:\n  hard_iron_t: [0.0, 0.0, 0.0]\n')
    config = load_config(rig='maxxum', overlay_file=overlay)
    assert config['radar.enabled'] is False and config.sources['radar.enabled'] == str(overlay)
    assert config['mag.hard_iron_t'] == [0.0, 0.0, 0.0]
    assert config['baro.enabled'] is True          # the rest of the equipment stays


def test_a_start_outside_the_wmms_life_span_is_one_line_naming_the_keys(tmp_path):
    from acres_sim.cli import main

    out = tmp_path / 'run'
    code = main(['record', '--rig', 'polaris', '--duration', '1', '--out', str(out),
                 '--set', 'gnss.datum.start_utc=2024-06-01T12:00:00Z', '--no-progress'])
    assert code == 2 and not out.exists()
    # the dipole has no life span: the same start works with it
    assert main(['record', '--rig', 'polaris', '--duration', '1', '--out', str(out),
                 '--set', 'gnss.datum.start_utc=2024-06-01T12:00:00Z',
                 '--set', 'mag.field_model=dipole', '--no-progress']) == 0
