"""The wheel odometry (acres_sim.core.wheel_odometry) against references written
out here: the noise against its configured sigma (chi-square), the draw count
against a fresh stream, the slip against the physics' own drive force and a
grade, the distance and yaw rate against the truth scaled by the radius and
track errors, the pose drift over many seeds against its covariance and the
closed forms of the error model, and block cuts bit for bit."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from acres_sim.config.vehicles import load_vehicle
from acres_sim.core import wheel_odometry as wo
from acres_sim.core.frames import chassis_in_base_footprint
from acres_sim.core.physics import Terrain
from acres_sim.core.quaternion import matrix_from_quat
from acres_sim.core.rng import WHEEL_ODOMETRY, Pcg32
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q
from sensor_states import (physics_run, pivot_states, rig_block_states, run_in_blocks,
                           straight_states)

SEQ = WHEEL_ODOMETRY.sequence
G = 9.80665


@pytest.fixture(scope='module')
def maxxum():
    return load_vehicle('maxxum')


def _run(params, rows, seed=7, k0=0):
    sensor = wo.WheelOdometry(params, Pcg32(seed, SEQ))
    steps, out = sensor.run_block(k0, rows)
    return sensor, steps, out


def _footprint(rows, arm):
    """base_footprint positions p + R r_b of state rows."""
    return np.array([row[T_P:T_P + 3] + matrix_from_quat(row[T_Q:T_Q + 4]) @ arm for row in rows])


def _yaw(rows):
    return np.unwrap([math.atan2(R[1, 0], R[0, 0])
                      for R in (matrix_from_quat(row[T_Q:T_Q + 4]) for row in rows)])


# ------------------------------------------------------------------ random values


@pytest.mark.parametrize('noise', [True, False])
@pytest.mark.parametrize('speed', [0.0, 3.0])
def test_each_sample_draws_two_gaussians_parked_moving_and_without_noise(noise, speed):
    rows = straight_states(10 * PHYSICS_HZ + 1, speed)
    sensor, steps, out = _run(wo.WheelOdometryParams(noise=noise), rows, seed=11)
    due = Due(50.0)
    assert steps.tolist() == [k for k in range(len(rows)) if due.due(k / PHYSICS_HZ)]
    fresh = Pcg32(11, SEQ)
    fresh.gaussians(wo.VALUES_PER_SAMPLE * len(steps))
    assert wo.VALUES_PER_SAMPLE == 2
    assert np.array_equal(sensor.rng.state, fresh.state)
    if not noise:   # the errors are zero: the wheels read the scaled truth
        scale = 1.0 + sensor.params.radius_error
        s = sensor.params.rolling_resistance * math.tanh(speed / 0.1) / sensor.params.slip_stiffness
        assert np.allclose(out[:, wo.W_LEFT], speed * (1 + s) * scale, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize('speed', [0.0, 1.0, 5.0])
def test_wheel_noise_has_the_configured_sigma_and_zero_mean(speed):
    # 600 s straight at a constant speed on the level without rolling resistance:
    # no traction force, no slip, so each wheel's count is scale * speed * dt + e
    k_var, sigma = 1e-4, 0.01
    params = wo.WheelOdometryParams(rolling_resistance=0.0, wheel_variance_per_m=k_var,
                                    speed_noise_mps=sigma)
    _, _, out = _run(params, straight_states(600 * PHYSICS_HZ + 1, speed), seed=3)
    out = out[1:]                                  # the first sample has no interval
    dt = out[:, wo.W_DT]
    assert sorted(set(np.round(dt * PHYSICS_HZ).astype(int))) == [2, 3]   # 50 Hz in 120 Hz
    d0 = (1.0 + params.radius_error) * speed * dt
    var = sigma ** 2 * dt ** 2 + k_var * d0      # Chong & Kleeman: + k |dS| per wheel
    z_l = (out[:, wo.W_LEFT] * dt - d0) / np.sqrt(var)
    z_r = (out[:, wo.W_RIGHT] * dt - d0) / np.sqrt(var)
    z = np.concatenate([z_l, z_r])
    n = z.size
    assert stats.chi2.ppf(1e-4, n) < float(z @ z) < stats.chi2.isf(1e-4, n)
    assert abs(z.mean()) < 4.0 / math.sqrt(n)
    assert abs(np.corrcoef(z_l, z_r)[0, 1]) < 4.0 / math.sqrt(z_l.size)
    # the twist variances are the sample's: (s_L^2 + s_R^2) / 4 and / b^2
    assert np.allclose(out[:, wo.W_VAR_U], var / dt ** 2 / 2, rtol=1e-9)
    assert np.allclose(out[:, wo.W_VAR_R], 2 * var / dt ** 2 / params.track_m ** 2, rtol=1e-9)


def test_reported_variances_are_never_zero():
    params = wo.WheelOdometryParams(speed_noise_mps=0.0, wheel_variance_per_m=0.0)
    _, _, out = _run(params, straight_states(600, 0.0))
    for col in (wo.W_VAR_U, wo.W_VAR_R, wo.W_VAR_X, wo.W_VAR_Y, wo.W_VAR_YAW):
        assert np.all(out[:, col] == wo.VARIANCE_FLOOR) and wo.VARIANCE_FLOOR > 0.0
    _, _, out = _run(wo.WheelOdometryParams(), straight_states(600, 0.0))
    assert np.allclose(out[1:, wo.W_VAR_U], 0.01 ** 2 / 2, rtol=1e-12)   # parked: the encoder's


# ------------------------------------------------------------------ physics


def test_straight_run_distance_is_the_truth_times_radius_error_and_slip(maxxum):
    rows, _, _ = physics_run(maxxum, 30.0, lambda t: (3.0, 0.0), start_speed=3.0)
    params = wo.default_wheel_odometry_params(maxxum, noise=False)
    _, steps, out = _run(params, rows)
    arm = -chassis_in_base_footprint(maxxum.wheelbase_m, maxxum.cog_height_m)
    ends = _footprint(rows[[steps[0], steps[-1]]], arm)
    d_true = float(np.linalg.norm(ends[1] - ends[0]))
    assert d_true == pytest.approx(90.0, rel=1e-3)
    s = params.rolling_resistance / params.slip_stiffness      # constant speed: F_x = C_rr N
    assert np.allclose(out[1:, wo.W_SLIP], s, rtol=1e-6)
    expected = d_true * (1 + params.radius_error) * (1 + s)
    assert out[-1, wo.W_DISTANCE] == pytest.approx(expected, rel=1e-7)
    assert out[-1, wo.W_X] == pytest.approx(expected, rel=1e-7)
    assert abs(out[-1, wo.W_Y]) < 1e-9 and abs(out[-1, wo.W_YAW]) < 1e-12
    # with the noise: within 5 sigma of it (sigma from the error model, k / 2 per metre)
    _, _, noisy = _run(params._replace(noise=True), rows)
    sigma = math.sqrt(params.wheel_variance_per_m / 2 * expected
                      + params.speed_noise_mps ** 2 * np.sum(out[:, wo.W_DT] ** 2) / 2)
    assert abs(noisy[-1, wo.W_X] - expected) < 5 * sigma
    assert noisy[-1, wo.W_X] != expected


def test_slip_follows_the_traction_force_of_the_physics(maxxum):
    # from rest to 3 m/s at the drive limit, cruising, then braking to a stop
    rows, drive, rho = physics_run(maxxum, 16.0, lambda t: (3.0, 0.0) if t < 11.0 else (0.0, 0.0))
    params = wo.default_wheel_odometry_params(maxxum, noise=False)
    _, steps, out = _run(params, rows)
    u = out[:, wo.W_TRUE_U]
    n_load = maxxum.mass_kg * G
    # the tyres' force over the physics step before the sample (its two ends' mean), less
    # the drag the odometry leaves out: F_x = m du/dt + C_rr N tanh(u / 0.1) on the level
    drag = 0.5 * rho * maxxum.drag_area_m2 * u * np.abs(u)
    f_ref = 0.5 * (drive[steps] + drive[steps - 1]) - drag
    moving = (np.abs(rows[steps, 7]) > 0.0) & (np.abs(rows[steps - 1, 7]) > 0.0) & (steps > 0)
    assert moving.sum() > 600
    slip_ref = f_ref / (params.slip_stiffness * n_load)
    assert np.allclose(out[moving, wo.W_SLIP], slip_ref[moving], rtol=0.01, atol=5e-4)
    assert np.allclose(out[moving, wo.W_TRACTION], f_ref[moving], rtol=0.01, atol=0.003 * n_load)
    # the drive limit m (max_accel + C_rr g), the cruise's C_rr N, the brake's -m max_brake
    t = steps / PHYSICS_HZ
    accel_slip = ((maxxum.max_accel_mps2 + maxxum.rolling_resistance * G)
                  / (params.slip_stiffness * G))
    assert 0.95 * accel_slip < out[t < 4, wo.W_SLIP].max() < 1.001 * accel_slip
    cruise = out[(t > 8) & (t < 11), wo.W_SLIP]
    assert np.allclose(cruise, params.rolling_resistance / params.slip_stiffness, rtol=0.03)
    brake = out[moving & (t > 11), wo.W_SLIP]
    assert brake.min() < -0.8 * maxxum.max_brake_mps2 / (params.slip_stiffness * G)
    assert brake.min() < 0.0 < cruise.min() < accel_slip
    # slip makes the wheels turn faster than they roll while driving, slower braking
    drive_phase = (t > 2) & (t < 3.5)
    assert np.all(out[drive_phase, wo.W_LEFT] > u[drive_phase] * (1 + params.radius_error))


@pytest.mark.parametrize('heading, tan_grade', [(0.0, 0.06), (math.pi, -0.06)])
def test_slip_on_a_grade_follows_the_gravity_along_body_x(maxxum, heading, tan_grade):
    # up (east) and down a 6 % grade at a steady 2 m/s: F_x / (C_s N) with F_x =
    # m g sin(theta) + C_rr m g cos(theta), N = m g cos(theta): (tan + C_rr) / C_s
    rows, drive, rho = physics_run(maxxum, 20.0, lambda t: (2.0, 0.0), start=(0.0, 0.0, heading),
                                   start_speed=2.0, terrain=Terrain(grade_east=0.06))
    params = wo.default_wheel_odometry_params(maxxum, noise=False)
    _, steps, out = _run(params, rows)
    late = steps > 10 * PHYSICS_HZ
    expected = (tan_grade + params.rolling_resistance) / params.slip_stiffness
    assert np.allclose(out[late, wo.W_SLIP], expected, rtol=1e-4, atol=1e-6)
    f_ref = drive[steps] - 0.5 * rho * maxxum.drag_area_m2 * out[:, wo.W_TRUE_U] ** 2
    assert np.allclose(out[late, wo.W_TRACTION], f_ref[late], rtol=1e-3)
    assert (expected > 0.02) if tan_grade > 0 else (expected < 0)     # downhill: braking


@pytest.fixture(scope='module')
def circle(maxxum):
    """A steady circle at 3 m/s and 0.15 rad/s (20 m radius), from 10 s on."""
    rows, _, _ = physics_run(maxxum, 40.0, lambda t: (3.0, 0.15), start_speed=3.0)
    k0 = 10 * PHYSICS_HZ
    return k0, rows[k0:]


@pytest.mark.parametrize('radius_error, track_error', [(0.005, 0.02), (0.0, 0.0), (-0.01, 0.05)])
def test_yaw_rate_on_a_circle_is_biased_by_the_track_and_radius_errors(maxxum, circle,
                                                                       radius_error, track_error):
    k0, rows = circle
    params = wo.default_wheel_odometry_params(maxxum, noise=False, radius_error=radius_error,
                                              track_error=track_error)
    _, steps, out = _run(params, rows, k0=k0)
    s = params.rolling_resistance / params.slip_stiffness      # a steady speed: F_x = C_rr N
    factor = (1 + s) * (1 + radius_error) * (1 + track_error)
    r_true = out[1:, wo.W_TRUE_R]
    assert r_true.mean() == pytest.approx(0.15, rel=0.02)
    assert np.allclose(out[1:, wo.W_R], factor * r_true, rtol=1e-4)
    # the integrated yaw drifts from the truth at (factor - 1) r
    t = steps / PHYSICS_HZ
    yaw_true = _yaw(rows[steps - k0])
    drift = np.unwrap(out[:, wo.W_YAW]) - (yaw_true - yaw_true[0])
    slope = np.polyfit(t, drift, 1)[0]
    assert slope == pytest.approx((factor - 1) * r_true.mean(), rel=2e-3)


def test_yaw_rate_bias_on_a_circle_with_noise(maxxum, circle):
    k0, rows = circle
    params = wo.default_wheel_odometry_params(maxxum)
    _, _, out = _run(params, rows, k0=k0, seed=5)
    factor = ((1 + params.rolling_resistance / params.slip_stiffness)
              * (1 + params.radius_error) * (1 + params.track_error))
    err = out[1:, wo.W_R] - factor * out[1:, wo.W_TRUE_R]
    bound = 5 * math.sqrt(out[1:, wo.W_VAR_R].mean() / err.size)
    # consistent with the biased factor, and the bias is larger than the bound (it shows)
    assert abs(err.mean()) < bound < (factor - 1) * out[1:, wo.W_TRUE_R].mean()


def test_a_pivot_turn_about_base_footprint_moves_the_wheels_by_the_effective_track(maxxum):
    params = wo.default_wheel_odometry_params(maxxum, noise=False)
    arm = (params.base_arm_x_m - params.com_x_m, params.base_arm_y_m - params.com_y_m, 0.0)
    rows = pivot_states(1201, 0.3, arm)
    _, _, out = _run(params, rows)
    assert np.allclose(out[:, wo.W_TRUE_U], 0.0, atol=1e-12)      # v + w x R (r_b - c) = 0
    # u = 0 on the level: no traction force, no slip; the wheels at -+ b (1 + e_t) / 2
    half = 0.5 * params.track_m * (1 + params.track_error)
    scale = 1 + params.radius_error
    assert np.allclose(out[:, wo.W_SLIP], 0.0, atol=1e-15)
    assert np.allclose(out[:, wo.W_LEFT], -0.3 * half * scale, rtol=1e-9)
    assert np.allclose(out[:, wo.W_RIGHT], 0.3 * half * scale, rtol=1e-9)
    assert np.allclose(out[1:, wo.W_R], 0.3 * scale * (1 + params.track_error), rtol=1e-9)
    assert np.abs(out[:, [wo.W_X, wo.W_Y]]).max() < 1e-12


# ------------------------------------------------------------------ drift


def test_pose_drift_grows_with_distance_as_its_covariance():
    # 120 m straight at 3 m/s, no systematic error (no slip, no radius or track
    # error): over 1000 seeds the errors' spread at 30, 60 and 120 m is the
    # reported covariance
    params = wo.WheelOdometryParams(rolling_resistance=0.0, radius_error=0.0, track_error=0.0)
    speed = 3.0
    rows = straight_states(40 * PHYSICS_HZ + 1, speed)
    seeds = 1000
    errors, reported = [], []
    for seed in range(seeds):
        _, steps, out = _run(params, rows, seed=seed)
        x_true = speed * (steps - steps[0]) / PHYSICS_HZ
        marks = np.searchsorted(x_true, [30.0, 60.0, 120.0])
        errors.append(out[marks][:, [wo.W_X, wo.W_Y, wo.W_YAW]]
                      - np.c_[x_true[marks], 0 * marks, 0 * marks])
        reported.append(out[marks][:, [wo.W_VAR_X, wo.W_VAR_Y, wo.W_VAR_YAW]])
    errors, reported = np.array(errors), np.array(reported).mean(axis=0)
    ratio = (errors ** 2).mean(axis=0) / reported        # rows: the marks; x, y, yaw
    lo, hi = stats.chi2.ppf(1e-3, seeds) / seeds, stats.chi2.isf(1e-3, seeds) / seeds
    assert np.all((lo < ratio[:, 1:]) & (ratio[:, 1:] < hi)), ratio       # across, yaw
    assert np.all((lo < ratio[:2, 0]) & (ratio[:2, 0] < hi)), ratio       # along, to 60 m
    # at 120 m the heading error's second-order shortening of the track shows: the
    # first-order propagation is a little conservative along the track there
    assert 0.8 < ratio[2, 0] < hi
    assert np.all(np.diff(reported, axis=0) > 0)          # growing with the distance


def test_pose_covariance_is_the_error_models_closed_form():
    # noise off (the covariance is reported as modelled), heading exactly 0: per
    # sample the wheels' variances are sigma^2 dt^2 + k dS; along the track a quarter
    # of their sum (k/2 per metre), the yaw their sum / b^2 (2k/b^2 per metre),
    # across the track each step's yaw variance times the rest of the way squared
    params = wo.WheelOdometryParams(noise=False, rolling_resistance=0.0, radius_error=0.0,
                                    track_error=0.0)
    b, k_var, sigma = params.track_m, params.wheel_variance_per_m, params.speed_noise_mps
    speed = 3.0
    _, steps, out = _run(params, straight_states(60 * PHYSICS_HZ + 1, speed))
    dt = out[:, wo.W_DT]
    ds = speed * dt
    var_step = sigma ** 2 * dt ** 2 + k_var * ds
    s_mid = np.cumsum(ds) - ds / 2
    for d in (45.0, 90.0, 180.0):
        m = int(np.searchsorted(out[:, wo.W_DISTANCE], d - 1e-9))
        assert out[m, wo.W_DISTANCE] == pytest.approx(d, abs=0.05)
        along = np.sum(var_step[1:m + 1]) / 2
        assert out[m, wo.W_VAR_X] == pytest.approx(along, rel=1e-9)
        assert along == pytest.approx(k_var / 2 * d, rel=0.1)      # the encoder's 1e-4 m^2/s^2
        assert out[m, wo.W_VAR_YAW] == pytest.approx(4 * along / b ** 2, rel=1e-9)
        cross = 2 * np.sum(var_step[1:m + 1] * (out[m, wo.W_DISTANCE] - s_mid[1:m + 1]) ** 2)
        assert out[m, wo.W_VAR_Y] == pytest.approx(cross / b ** 2, rel=1e-3)
        assert out[m, wo.W_VAR_Y] == pytest.approx(2 * k_var / b ** 2 * d ** 3 / 3, rel=0.15)
        assert out[m, wo.W_COV_XY] == 0.0 and out[m, wo.W_COV_XYAW] == 0.0
        assert out[m, wo.W_COV_YYAW] == pytest.approx(
            2 * np.sum(var_step[1:m + 1] * (out[m, wo.W_DISTANCE] - s_mid[1:m + 1])) / b ** 2,
            rel=1e-3)


# ------------------------------------------------------------------ blocks, rows


@pytest.fixture(scope='module')
def rig_states():
    return rig_block_states('polaris', 30)


def test_blocks_of_1_7_or_240_steps_give_the_same_samples_bit_for_bit(rig_states):
    params = wo.default_wheel_odometry_params(load_vehicle('polaris'))
    whole = wo.WheelOdometry(params, Pcg32(2, SEQ))
    ref_k, ref = whole.run_block(0, rig_states)
    assert np.ptp(ref[:, wo.W_TRUE_U]) > 2.0 and np.ptp(ref[:, wo.W_TRUE_R]) > 0.1   # it drove
    for size in (1, 7, 240):
        sensor = wo.WheelOdometry(params, Pcg32(2, SEQ))
        k, out = run_in_blocks(sensor, rig_states, size)
        assert np.array_equal(k, ref_k) and np.array_equal(out, ref)
        assert np.array_equal(sensor.rng.state, whole.rng.state)
        assert np.array_equal(sensor.memory, whole.memory)


def test_row_names_units_and_rounding(maxxum):
    params = wo.default_wheel_odometry_params(maxxum)
    sensor, _, out = _run(params, straight_states(241, 3.0))
    row = sensor.row(out[-1])
    json.dumps(row)
    o = out[-1]
    assert row['position_odom_m'] == [round(o[wo.W_X], 6), round(o[wo.W_Y], 6)]
    assert row['yaw_odom_rad'] == round(o[wo.W_YAW], 8)
    assert row['speed_mps'] == round(o[wo.W_U], 6)
    assert row['yaw_rate_radps'] == round(o[wo.W_R], 8)
    assert row['wheel_speeds_mps'] == [round(o[wo.W_LEFT], 6), round(o[wo.W_RIGHT], 6)]
    assert row['wheel_rates_radps'][0] == pytest.approx(o[wo.W_LEFT] / maxxum.wheel_radius_m,
                                                        abs=1e-8)
    assert row['slip'] == round(o[wo.W_SLIP], 8)
    assert row['distance_m'] == round(o[wo.W_DISTANCE], 6)
    cov = row['pose_covariance_xy_yaw']
    assert cov[0][0] == pytest.approx(o[wo.W_VAR_X], rel=1e-5) and cov[1][0] == cov[0][1]
    assert cov[2][2] == pytest.approx(o[wo.W_VAR_YAW], rel=1e-5)
    assert row['twist_variance']['speed_m2ps2'] == pytest.approx(o[wo.W_VAR_U], rel=1e-5)
    assert row['truth'] == {'speed_mps': 3.0, 'yaw_rate_radps': 0.0}
    assert wo.SAMPLE_SIZE == out.shape[1] == wo.W_DT + 1


def test_default_parameters_follow_the_vehicle_and_the_surface(maxxum):
    params = wo.default_wheel_odometry_params(maxxum, surface='tilled_soil', hz=25.0)
    arm = -chassis_in_base_footprint(maxxum.wheelbase_m, maxxum.cog_height_m)
    assert (params.base_arm_x_m, params.base_arm_y_m, params.base_arm_z_m) == tuple(arm)
    assert params.track_m == maxxum.track_m and params.wheel_radius_m == maxxum.wheel_radius_m
    assert params.mass_kg == maxxum.mass_kg and params.hz == 25.0
    assert params.slip_stiffness == wo.SURFACES['tilled_soil']
    assert wo.WheelOdometryParams._fields[:2] == ('hz', 'noise')
    # the surface table's slip stiffness: Brixius' GTR at EP496's optimum slip / that slip
    for name, bn, s_opt in (('concrete', 80, 0.06), ('firm_soil', 55, 0.09),
                            ('tilled_soil', 40, 0.12), ('sand', 20, 0.15)):
        gtr = 0.88 * (1 - math.exp(-0.1 * bn)) * (1 - math.exp(-7.5 * s_opt)) + 0.04
        assert wo.SURFACES[name] == pytest.approx(gtr / s_opt, abs=0.005)
    with pytest.raises(ValueError, match='unknown surface'):
        wo.default_wheel_odometry_params(maxxum, surface='ice')
