"""The INS model (spec: INS, ACRES Core INS; Seeds and Determinism).

Independent references: the truth at the INS point worked with numpy, the
attitude from scipy's rotations, the UTM projection from pyproj, sample times
from the spec's Due, the value count from a fresh PCG32 stream, the error
states against the statistics of a unit first-order Gauss-Markov process.
"""

import math

import numpy as np
import pyproj
import pytest
from scipy.spatial.transform import Rotation

from acres_sim.config import load_config
from acres_sim.config.sensor_records import ins_params, ins_stream
from acres_sim.core.geo import decimal_year
from acres_sim.core.geo.epoch import DecimalYearClock
from acres_sim.core.frames import oxts_from_flu_quaternion, oxts_from_flu_vector
from acres_sim.core.ins import InsModel
from acres_sim.core.rng import make_stream
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ, Truth
from acres_sim.pipeline.models import site_georeference

G = 9.80665
LEVER = np.array([-0.8256, 0.0, -0.4])   # base_footprint seen from a Polaris chassis origin
TO_UTM16 = pyproj.Transformer.from_crs('EPSG:4326', 'EPSG:32616', always_xy=True)


@pytest.fixture(scope='module')
def config():
    return load_config(rig='polaris')


@pytest.fixture(scope='module')
def site(config):
    return site_georeference(config)


def make(config, site, noise=True, seed=42, **changes):
    p = ins_params(config, LEVER)._replace(noise=noise, **changes)
    return InsModel(p, make_stream(seed, 'ins'), site)


def truth(step, rng=None, reset=False, yaw_deg=None):
    """A random pose and motion (or a level one facing ``yaw_deg``)."""
    rng = np.random.default_rng(step) if rng is None else rng
    if yaw_deg is None:
        R = Rotation.from_euler('xyz', [rng.uniform(-8, 8), rng.uniform(-8, 8),
                                        rng.uniform(-180, 180)], degrees=True).as_matrix()
    else:
        R = Rotation.from_euler('z', yaw_deg, degrees=True).as_matrix()
    p = np.array([rng.uniform(-1500, 1500), rng.uniform(-1500, 1500), rng.uniform(-2, 5)])
    return Truth(step, p, R, rng.normal(0, 3, 3), rng.normal(0, 0.3, 3),
                 p + R @ np.array([0.3, 0.05, 0.2]), reset)


def quat_close(q, ref, tol):
    q, ref = np.asarray(q), np.asarray(ref)
    return min(np.abs(q - ref).max(), np.abs(q + ref).max()) < tol


def yaw_of(q):
    x_axis = Rotation.from_quat(q).as_matrix()[:, 0]
    return math.atan2(x_axis[1], x_axis[0])


def test_noise_off_reports_the_truth_at_the_ins_point(config, site):
    ins = make(config, site, noise=False)
    rng = np.random.default_rng(3)
    for k in range(0, 400, 6):
        tr = truth(k, rng)
        row = ins.epoch(k / PHYSICS_HZ, tr)
        p_n = tr.p + tr.R @ LEVER
        v_n = tr.v + np.cross(tr.w, p_n - tr.p_c)
        q_true = Rotation.from_matrix(tr.R).as_quat()      # xyzw
        assert row['position_enu_m'] == pytest.approx(p_n, abs=1e-9)
        assert quat_close(row['imu']['orientation_enu_xyzw'], q_true, 1e-12)
        assert row['velocity']['linear_flu_mps'] == pytest.approx(tr.R.T @ v_n, abs=1e-12)
        assert row['velocity']['angular_flu_radps'] == pytest.approx(tr.R.T @ tr.w, abs=1e-12)
        assert row['imu']['angular_velocity_flu_radps'] == pytest.approx(tr.R.T @ tr.w,
                                                                         abs=1e-12)
        assert row['truth']['position_enu_m'] == pytest.approx(p_n, abs=1e-9)
        assert row['truth']['linear_flu_mps'] == pytest.approx(tr.R.T @ v_n, abs=1e-12)
        assert row['odom']['position_m'] == row['truth']['position_utm_m']
        assert row['odom']['orientation_xyzw'] == pytest.approx(
            row['truth']['orientation_utm_xyzw'], abs=1e-15)
        # the fix is the datum chain of the point, NAD83(2011) for the INS's nad83
        lat, lon, h = site.enu_to_geodetic(*p_n, k / PHYSICS_HZ, 'nad83_2011')
        fix = row['fix']
        assert (fix['latitude_deg'], fix['longitude_deg']) == pytest.approx((lat, lon),
                                                                           abs=1e-11)
        assert fix['altitude_m'] == pytest.approx(h, abs=1e-6)
        assert fix['datum'] == 'nad83_2011'
        assert (fix['status'], fix['service']) == (2, 1)
        assert row['frame_id'] == 'oxts_link'
        assert (row['odom']['frame_id'], row['odom']['child_frame_id']) == ('utm',
                                                                          'base_footprint')


@pytest.mark.parametrize('frame', ['nad83', 'wgs84_g2139'])
def test_utm_odometry_matches_pyproj_on_the_fix(config, site, frame):
    ins = make(config, site, noise=True, frame=frame)
    rng = np.random.default_rng(11)
    for k in range(0, 1200, 7):
        row = ins.epoch(k / PHYSICS_HZ, truth(k, rng))
        E, N = TO_UTM16.transform(row['fix']['longitude_deg'], row['fix']['latitude_deg'])
        odom = row['odom']
        assert odom['position_m'][0] == pytest.approx(E, abs=1e-3)
        assert odom['position_m'][1] == pytest.approx(N, abs=1e-3)
        assert odom['position_m'][2] == row['fix']['altitude_m']
        # the truth in the same frame
        lat, lon, _h = site.enu_to_geodetic(*row['truth']['position_enu_m'], k / PHYSICS_HZ,
                                            'nad83_2011' if frame == 'nad83' else frame)
        E, N = TO_UTM16.transform(lon, lat)
        assert row['truth']['position_utm_m'][:2] == pytest.approx([E, N], abs=1e-3)


def test_the_two_fix_frames_differ_as_the_spec_says(config, site):
    tr = truth(0, yaw_deg=0.0)._replace(p=np.array([0.0, 0.0, 0.0]))
    rows = {f: make(config, site, noise=False, frame=f).epoch(0.0, tr)
            for f in ('nad83', 'wgs84_g2139')}
    dE, dN, dh = np.subtract(rows['wgs84_g2139']['odom']['position_m'],
                             rows['nad83']['odom']['position_m'])
    # spec, Georeference Caveats: 1.30 m apart on the tile, the WGS84 height 1.13 m lower
    assert math.hypot(dE, dN) == pytest.approx(1.30, abs=0.01)
    assert (dE, dN) == pytest.approx((-0.97, 0.87), abs=0.01)   # WGS84 west and north
    assert dh == pytest.approx(-1.13, abs=0.01)


def test_odometry_heading_is_the_true_heading_minus_the_grid_rotation(config, site):
    ins = make(config, site, noise=False)
    for k, yaw_deg in enumerate([0.0, 37.0, 90.0, -120.0, 179.0]):
        tr = truth(2 * k, yaw_deg=yaw_deg)
        t = 2 * k / PHYSICS_HZ
        row = ins.epoch(t, tr)
        alpha = math.radians(row['odom']['grid_rotation_deg'])
        # alpha independently: pyproj on two points 10 m apart along grid north
        p_n = tr.p + tr.R @ LEVER
        lat1, lon1, _ = site.enu_to_geodetic(*p_n, t, 'nad83_2011')
        lat2, lon2, _ = site.enu_to_geodetic(p_n[0], p_n[1] + 10.0, p_n[2], t, 'nad83_2011')
        (E1, E2), (N1, N2) = TO_UTM16.transform([lon1, lon2], [lat1, lat2])
        assert alpha == pytest.approx(math.atan2(E2 - E1, N2 - N1), abs=1e-9)
        heading = yaw_of(row['odom']['orientation_xyzw'])
        expected = math.radians(yaw_deg) - alpha
        assert math.remainder(heading - expected, math.tau) == pytest.approx(0.0, abs=1e-12)


def test_grid_rotation_at_the_tile_origin(config, site):
    # spec, UTM Projection table: alpha = 0.0541 deg at the origin
    tr = Truth(0, -LEVER, np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
    row = make(config, site, noise=False).epoch(0.0, tr)
    assert row['odom']['grid_rotation_deg'] == pytest.approx(0.0541, abs=5e-5)
    assert row['odom']['position_m'][:2] == pytest.approx([500476.935, 4480099.755], abs=1e-3)


def test_covariance_values(config, site):
    row = make(config, site, noise=True).epoch(0.0, truth(0))
    s2 = 0.01 ** 2 + 0.003 ** 2
    assert row['fix']['position_covariance'] == pytest.approx([s2, s2, 2.25 * s2], rel=1e-12)
    pose = row['odom']['covariance']     # x, y, z, roll, pitch, yaw
    assert pose[:3] == pytest.approx([s2, s2, 2.25 * s2], rel=1e-12)
    assert pose[3:] == pytest.approx([math.radians(0.03) ** 2] * 2 + [math.radians(0.1) ** 2],
                                     rel=1e-12)
    # noise off: the reported sigma is the sigma of the added error, zero
    row = make(config, site, noise=False).epoch(0.0, truth(0))
    assert row['fix']['position_covariance'] == [0.0, 0.0, 0.0]
    assert row['odom']['covariance'] == [0.0] * 6


def test_100_hz_epochs_and_the_specific_force_over_1_and_2_step_intervals(config, site):
    ins = make(config, site, noise=False)
    due = Due(100.0)
    accel = np.array([0.6, -0.25, 0.1])
    R = Rotation.from_euler('xyz', [3.0, -2.0, 60.0], degrees=True).as_matrix()
    p0 = np.array([100.0, 200.0, 1.0])
    steps, forces = [], []
    for k in range(1200):
        t = k / PHYSICS_HZ
        if not due.due(t):
            continue
        v = accel * t                    # constant acceleration, no rotation
        p = p0 + 0.5 * accel * t * t
        row = ins.epoch(t, Truth(k, p, R, v, np.zeros(3), p))
        steps.append(k)
        forces.append(row['imu']['linear_acceleration_flu_mps2'])
    intervals = np.diff(steps)
    assert len(steps) == 1000                               # 100 Hz on average
    assert set(intervals) == {1, 2}
    assert list(intervals[:10]) == [2, 1, 1, 1, 1, 2, 1, 1, 1, 1]
    assert forces[0] == pytest.approx(R.T @ [0.0, 0.0, G], abs=1e-12)     # gravity only
    expected = R.T @ (accel + [0.0, 0.0, G])
    for f in forces[1:]:
        assert f == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize('noise', [True, False])
def test_eighteen_values_per_epoch(config, site, noise):
    ins = make(config, site, noise=noise, seed=5)
    fresh = make_stream(5, 'ins')
    rng = np.random.default_rng(0)
    for n in range(1, 40):
        ins.epoch(n / 100.0, truth(n, rng, reset=(n % 9 == 0)))
        fresh.u32s(36)                   # 18 Gaussians, two outputs each
        assert np.array_equal(ins.rng.state, fresh.state)


def test_first_epoch_states_are_the_first_gaussians(config, site):
    ins = make(config, site, noise=True, seed=9)
    ins.epoch(0.0, truth(0))
    assert ins.states == pytest.approx(make_stream(9, 'ins').gaussians(6), abs=0.0)


def test_gravity_only_at_the_first_epoch_and_after_a_reset(config, site):
    ins = make(config, site, noise=False)
    R = Rotation.from_euler('xyz', [5.0, -4.0, 30.0], degrees=True).as_matrix()
    gravity = R.T @ np.array([0.0, 0.0, G])

    def at(k, v, reset=False):
        p = np.array([10.0, 0.0, 0.0])
        return ins.epoch(k / PHYSICS_HZ, Truth(k, p, R, np.asarray(v, float), np.zeros(3), p,
                                               reset))['imu']['linear_acceleration_flu_mps2']

    assert at(0, [5.0, 0.0, 0.0]) == pytest.approx(gravity, abs=1e-12)
    step = at(1, [5.1, 0.0, 0.0])
    assert step == pytest.approx(R.T @ np.array([0.1 * PHYSICS_HZ, 0.0, G]), abs=1e-9)
    # the vehicle is put back at rest: reset at an epoch
    assert at(2, [0.0, 0.0, 0.0], reset=True) == pytest.approx(gravity, abs=1e-12)
    assert at(3, [0.0, 0.0, 0.0]) == pytest.approx(gravity, abs=1e-12)
    # a reset on a physics step without an epoch, passed on by the caller
    at(4, [3.0, 0.0, 0.0])
    ins.restart_differences()
    assert at(6, [0.0, 0.0, 0.0]) == pytest.approx(gravity, abs=1e-12)
    # control: the same velocity jump without a reset is a large acceleration
    assert at(7, [3.0, 0.0, 0.0])[0] != pytest.approx(gravity[0], abs=1.0)
    # reset() starts an episode: the first epoch again
    ins.reset()
    assert at(8, [9.0, 0.0, 0.0]) == pytest.approx(gravity, abs=1e-12)


def test_gauss_markov_states_have_unit_variance_and_correlate_e_minus_one_at_tau(config,
                                                                                   site):
    hz, tau = 100.0, 0.2
    lag = int(round(tau * hz))
    ins = make(config, site, noise=True, seed=1234, hz=hz, position_tau_s=tau,
               position_sigma_m=1.0, position_white_m=0.0)
    tr = Truth(0, np.zeros(3), np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
    n = 100_000
    states = np.empty((n, 6))
    offsets = np.empty((n, 3))
    for k in range(n):
        row = ins.epoch(k / hz, tr)
        states[k] = ins.states
        offsets[k] = np.subtract(row['position_enu_m'], LEVER)
    # the position carries sigma_p (x1, x2, 1.5 x3)
    assert offsets == pytest.approx(states[:, :3] * [1.0, 1.0, 1.5], abs=1e-9)
    x = states[1000:]
    variance = (x * x).mean(axis=0)
    correlation = (x[lag:] * x[:-lag]).mean(axis=0) / variance
    assert variance == pytest.approx(np.ones(6), abs=0.08)
    assert correlation == pytest.approx(np.full(6, math.exp(-1.0)), abs=0.05)
    assert variance.mean() == pytest.approx(1.0, abs=0.035)
    assert correlation.mean() == pytest.approx(math.exp(-1.0), abs=0.02)


def test_attitude_errors_turn_heading_about_up_and_roll_pitch_about_the_body(config, site):
    ins = make(config, site, noise=True, seed=77)
    tr = truth(0, yaw_deg=None)
    row = ins.epoch(0.0, tr)
    x = ins.states
    d_psi, d_phi, d_theta = np.radians([0.1 * x[3], 0.03 * x[4], 0.03 * x[5]])
    expected = (Rotation.from_euler('z', d_psi) * Rotation.from_matrix(tr.R)
                * Rotation.from_euler('y', d_theta) * Rotation.from_euler('x', d_phi))
    assert quat_close(row['imu']['orientation_enu_xyzw'], expected.as_quat(), 1e-12)


def test_oxts_imu_axes_hand_example():
    q_ins = Rotation.from_euler('z', 90.0, degrees=True).as_quat()   # facing north
    forward, left, up = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    for vector, expected in ((forward, [0.0, 1.0, 0.0]), (left, [1.0, 0.0, 0.0]),
                             (up, [0.0, 0.0, -1.0])):
        assert oxts_from_flu_vector(vector).tolist() == expected
    q_imu = oxts_from_flu_quaternion(q_ins)
    accel = oxts_from_flu_vector([1.5, -0.5, 9.8])
    # the IMU axes: x = left, y = forward, z = down, seen from ENU
    R_imu = Rotation.from_quat(q_imu).as_matrix()
    assert R_imu[:, 0] == pytest.approx([-1.0, 0.0, 0.0], abs=1e-12)   # left of north: west
    assert R_imu[:, 1] == pytest.approx([0.0, 1.0, 0.0], abs=1e-12)    # forward: north
    assert R_imu[:, 2] == pytest.approx([0.0, 0.0, -1.0], abs=1e-12)   # down
    # the same physical vector either way
    R_ins = Rotation.from_quat(q_ins).as_matrix()
    assert R_imu @ accel == pytest.approx(R_ins @ [1.5, -0.5, 9.8], abs=1e-12)
    # and the product the spec writes, by scipy
    s = math.sqrt(0.5)
    product = (Rotation.from_quat(q_ins) * Rotation.from_quat([s, s, 0.0, 0.0])).as_quat()
    assert quat_close(q_imu, product, 1e-12)


def test_epochs_must_move_forward(config, site):
    ins = make(config, site)
    ins.epoch(0.5, truth(0))
    with pytest.raises(ValueError, match='time must increase'):
        ins.epoch(0.5, truth(1))


def test_fast_decimal_year_equals_the_geo_module():
    start = site_georeference(load_config(rig=None)).start_utc
    clock = DecimalYearClock(start)
    rng = np.random.default_rng(1)
    # across the year end (the run starts on 23 September) and back
    for t in [0.0, 1 / 120, 0.5, 1e3 / 3, *rng.uniform(0, 2e7, 300), 8.5e6, 1.0]:
        assert clock(t) == decimal_year(start, t)


def test_config_builders_and_streams(config):
    p = ins_params(config, [0.0, 0.0, 0.0])
    assert (p.hz, p.position_sigma_m, p.position_tau_s, p.position_white_m) == \
        (100.0, 0.01, 30.0, 0.003)
    assert (p.heading_sigma_deg, p.attitude_sigma_deg, p.velocity_white_mps,
            p.accel_white_mps2, p.gyro_white_radps) == (0.1, 0.03, 0.02, 0.02, 0.0005)
    assert (p.frame, p.utm_zone, p.noise) == ('nad83', 16, True)
    # seed + 5045 + 7919 k, sequence 6
    assert np.array_equal(ins_stream(config, 0).state, make_stream(42, 'ins').state)
    assert np.array_equal(ins_stream(config, 3).state,
                          make_stream(42 + 3 * 7919, 'ins', 0).state)
    with pytest.raises(ValueError, match='ins frame'):
        InsModel(p._replace(frame='nad27'), make_stream(42, 'ins'), site_georeference(config))
