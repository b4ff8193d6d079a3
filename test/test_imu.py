"""The IMU model (spec: IMU; Seeds and Determinism).

References are worked by hand or taken from elsewhere: gravity in body axes
from scipy's rotations, the centripetal acceleration of a point on a circle,
the bias and value counts from a fresh PCG32 stream, the white-noise level
from allantools' overlapping Allan deviation.
"""

import math

import allantools
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from acres_sim.config import load_config
from acres_sim.config.sensor_records import imu_params, imu_stream
from acres_sim.core.imu import ImuModel, ImuParams
from acres_sim.core.rng import make_stream
from acres_sim.core.truth import PHYSICS_HZ, Truth

G = 9.80665
DT = 1.0 / PHYSICS_HZ
LEVER = np.array([0.95, -0.45, 0.7])     # the Polaris IMU mount, used as a chassis lever arm


def params(noise=True, lever=LEVER, **changes):
    base = ImuParams(hz=120.0, accel_std_mps2=0.03, gyro_std_radps=0.002,
                     accel_bias_mps2=0.01, gyro_bias_radps=0.001,
                     lever_arm_m=np.asarray(lever, dtype=float), noise=noise)
    return base._replace(**changes)


def model(noise=True, seed=42, **changes):
    return ImuModel(params(noise, **changes), make_stream(seed, 'imu'))


def parked(step, R=None, p=(10.0, -4.0, 0.5), reset=False):
    R = np.eye(3) if R is None else np.asarray(R, dtype=float)
    p = np.asarray(p, dtype=float)
    return Truth(step, p, R, np.zeros(3), np.zeros(3), p + R @ np.array([0.2, 0.0, 0.1]),
                 reset)


def run(imu, truths):
    """Feed each truth, sample at every step (a 120 Hz IMU); rows with their steps."""
    rows = []
    for tr in truths:
        imu.physics_step(tr)
        row = imu.sample(tr.step / PHYSICS_HZ, True)
        if row is not None:
            rows.append((tr.step, row))
    return rows


def force(rows):
    return np.array([r['specific_force_flu_mps2'] for _, r in rows])


def rate(rows):
    return np.array([r['angular_velocity_flu_radps'] for _, r in rows])


def test_parked_flat_reads_plus_g_up_and_no_rate_without_noise():
    rows = run(model(noise=False), [parked(k) for k in range(20)])
    assert len(rows) == 18
    for _, row in rows:
        assert row['specific_force_flu_mps2'] == [0.0, 0.0, 9.80665]
        assert row['angular_velocity_flu_radps'] == [0.0, 0.0, 0.0]


def test_parked_with_noise_reads_gravity_plus_the_biases_from_the_stream():
    imu = model(noise=True)
    fresh = make_stream(42, 'imu')
    expected_bias = np.concatenate([0.01 * fresh.gaussians(3), 0.001 * fresh.gaussians(3)])
    accel_bias, gyro_bias = imu.biases
    assert np.concatenate([accel_bias, gyro_bias]) == pytest.approx(expected_bias, abs=1e-15)
    rows = run(imu, [parked(k) for k in range(20002)])
    n = len(rows)
    # the mean of n samples: noise sigma / sqrt(n) plus rounding
    assert force(rows).mean(axis=0) == pytest.approx(
        np.array([0.0, 0.0, G]) + expected_bias[:3], abs=5 * 0.03 / math.sqrt(n))
    assert rate(rows).mean(axis=0) == pytest.approx(expected_bias[3:],
                                                   abs=5 * 0.002 / math.sqrt(n))


@pytest.mark.parametrize('euler_deg', [(10.0, 0.0, 0.0), (0.0, -15.0, 0.0), (5.0, 20.0, 135.0),
                                       (-30.0, 12.0, -70.0)])
def test_tilted_parked_reads_gravity_in_body_axes(euler_deg):
    R = Rotation.from_euler('xyz', euler_deg, degrees=True).as_matrix()
    rows = run(model(noise=False), [parked(k, R) for k in range(6)])
    expected = R.T @ np.array([0.0, 0.0, G])          # up in body axes, times g
    for _, row in rows:
        assert row['specific_force_flu_mps2'] == pytest.approx(expected, abs=6e-7)
        assert row['angular_velocity_flu_radps'] == [0.0, 0.0, 0.0]


def circle(steps, speed, yaw_rate, centre=(50.0, 20.0, 0.3), com=(0.3, 0.1, 0.2)):
    """A vehicle driving a circle at constant speed and yaw rate (left turn for
    yaw_rate > 0).  The centre of mass is at body lever ``com`` from the origin."""
    radius = speed / yaw_rate
    centre = np.asarray(centre)
    com = np.asarray(com)
    out = []
    for k in range(steps):
        psi = yaw_rate * k * DT
        R = Rotation.from_euler('z', psi).as_matrix()
        left = np.array([-math.sin(psi), math.cos(psi), 0.0])
        p_c = centre - radius * left
        v = speed * np.array([math.cos(psi), math.sin(psi), 0.0])
        out.append(Truth(k, p_c - R @ com, R, v, np.array([0.0, 0.0, yaw_rate]), p_c))
    return out


@pytest.mark.parametrize('speed, yaw_rate', [(5.0, 0.5), (8.0, -0.3), (2.0, 1.2)])
def test_constant_rate_turn_reads_the_centripetal_force_at_the_lever_arm(speed, yaw_rate):
    truths = circle(40, speed, yaw_rate)
    rows = run(model(noise=False), truths)
    radius = speed / yaw_rate
    for step, row in rows:
        tr = truths[step]
        centre = tr.p_c + radius * tr.R @ np.array([0.0, 1.0, 0.0])
        p_imu = tr.p + tr.R @ LEVER
        # the IMU point circles the same centre: a = -w^2 (horizontal offset)
        offset = p_imu - centre
        offset[2] = 0.0
        expected = tr.R.T @ (-yaw_rate ** 2 * offset + np.array([0.0, 0.0, G]))
        # a difference over one step lags the turn by half a step, the two-step
        # mean by one step: a rotation of |w| dt of the centripetal vector
        tolerance = 1.05 * yaw_rate ** 2 * np.linalg.norm(offset) * abs(yaw_rate) * DT + 1e-6
        assert np.linalg.norm(np.array(row['specific_force_flu_mps2']) - expected) < tolerance
        assert row['angular_velocity_flu_radps'] == pytest.approx([0.0, 0.0, yaw_rate],
                                                                  abs=1e-12)


def test_the_two_step_mean_removes_the_60_hz_brake_chatter():
    truths = []
    for k in range(40):
        tr = parked(k)
        truths.append(tr._replace(v=np.array([0.02 * (-1) ** k, 0.0, 0.0])))
    rows = run(model(noise=False), truths)
    assert len(rows) == 38
    # each single-step difference is +-4.8 m/s^2; the mean of two is zero
    for _, row in rows:
        assert row['specific_force_flu_mps2'] == [0.0, 0.0, 9.80665]


def test_first_row_at_the_third_physics_step():
    imu = model(noise=True)
    state = imu.rng.state.copy()
    steps = []
    for k in range(5):
        imu.physics_step(parked(k))
        if imu.sample(k / PHYSICS_HZ, True) is None:
            # no row, no draws
            assert np.array_equal(imu.rng.state, state)
        else:
            steps.append(k)
    assert steps == [2, 3, 4]


def due_steps(hz, steps):
    """The spec's Due in exact integers: the n-th sample at the first step k with
    k/120 >= n/hz, i.e. ceil(120 n / hz) (a short run: no drift)."""
    return {math.ceil(PHYSICS_HZ * n / hz) for n in range(int(steps * hz / PHYSICS_HZ) + 2)}


@pytest.mark.parametrize('hz', [120.0, 100.0, 60.0, 50.0, 30.0, 1.0])
def test_the_first_row_is_at_the_third_step_at_any_rate_then_the_due_schedule(hz):
    """Spec, IMU: the first row is at the third physics step (k = 2) -- also
    below 60 Hz, where the Due after t = 0 comes later than that.  Then a row
    at every Due; six values drawn per row, none otherwise."""
    from acres_sim.core.schedule import Due

    steps = 3 * PHYSICS_HZ
    imu, due = model(noise=True, hz=hz), Due(hz)
    fresh = make_stream(42, 'imu')
    fresh.u32s(2 * 6)
    rows = []
    for k in range(steps + 1):
        imu.physics_step(parked(k))
        if imu.sample(k / PHYSICS_HZ, due.due(k / PHYSICS_HZ)) is not None:
            rows.append(k)
            fresh.u32s(2 * 6)
        assert np.array_equal(imu.rng.state, fresh.state)
    on_due = sorted(k for k in due_steps(hz, steps) if 2 <= k <= steps)
    assert rows == sorted({2} | set(on_due))
    if hz >= 60.0:
        assert rows == on_due              # as the Due alone gives them: unchanged
    else:
        assert rows[0] == 2 and rows[1] == math.ceil(PHYSICS_HZ / hz) > 2


def test_a_restart_owes_its_sample_to_the_first_step_with_two_differences():
    """A 30 Hz IMU whose Due restarts with a gap in the truth (as the live node
    does): the Due at the restart step leaves a sample for two steps later."""
    from acres_sim.core.schedule import Due

    imu, due = model(noise=False, hz=30.0), Due(30.0)
    rows = []
    for k in list(range(0, 10)) + list(range(20, 40)):
        if k == 20:
            due.reset(k / PHYSICS_HZ)
        imu.physics_step(parked(k))
        if imu.sample(k / PHYSICS_HZ, due.due(k / PHYSICS_HZ)) is not None:
            rows.append(k)
    assert rows == [2, 4, 8, 22, 24, 28, 32, 36]


def test_a_reset_restarts_the_differences_so_the_jump_is_not_an_acceleration():
    imu = model(noise=False)
    moving = circle(30, 6.0, 0.4)
    rows = run(imu, moving)
    assert [s for s, _ in rows] == list(range(2, 30))
    # step 30: reset to a parked pose far away, turned round, standing still
    R = Rotation.from_euler('z', 2.0).as_matrix()
    after = [parked(k, R, p=(-200.0, 80.0, 1.0), reset=(k == 30)) for k in range(30, 40)]
    rows = run(imu, after)
    assert [s for s, _ in rows] == list(range(32, 40))
    expected = R.T @ np.array([0.0, 0.0, G])
    for _, row in rows:
        assert row['specific_force_flu_mps2'] == pytest.approx(expected, abs=6e-7)
        assert row['angular_velocity_flu_radps'] == [0.0, 0.0, 0.0]


def test_without_the_reset_flag_the_jump_would_show():
    # the control for the test above: the same jump, no reset flag, consecutive steps
    imu = model(noise=False)
    run(imu, circle(30, 6.0, 0.4))
    rows = run(imu, [parked(k, p=(-200.0, 80.0, 1.0)) for k in range(30, 33)])
    assert rows[0][0] == 30
    assert abs(rows[0][1]['specific_force_flu_mps2'][0]) > 100.0


def test_a_gap_in_the_truth_restarts_the_differences():
    imu = model(noise=False)
    rows = run(imu, [parked(k) for k in range(5)] + [parked(k) for k in range(9, 13)])
    assert [s for s, _ in rows] == [2, 3, 4, 11, 12]


@pytest.mark.parametrize('noise', [True, False])
def test_six_values_at_the_start_and_six_per_sample(noise):
    imu = model(noise=noise, seed=7)
    fresh = make_stream(7, 'imu')
    fresh.u32s(2 * 6)                      # a Gaussian takes two outputs
    assert np.array_equal(imu.rng.state, fresh.state)
    rows = run(imu, [parked(k) for k in range(15)])
    rows += run(imu, [parked(k, reset=(k == 15)) for k in range(15, 30)])
    assert len(rows) == 13 + 13
    fresh.u32s(2 * 6 * len(rows))
    assert np.array_equal(imu.rng.state, fresh.state)


def test_noise_off_draws_the_same_values_as_noise_on():
    on, off = model(noise=True), model(noise=False)
    for imu in (on, off):
        run(imu, [parked(k) for k in range(50)])
    assert np.array_equal(on.rng.state, off.rng.state)
    assert off.biases == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def test_reset_replays_the_same_biases_and_noise():
    imu = model(noise=True)
    first = run(imu, [parked(k) for k in range(30)])
    bias = imu.biases
    imu.reset()
    assert imu.biases == bias
    assert run(imu, [parked(k) for k in range(30)]) == first


def test_white_noise_level_by_allan_deviation():
    imu = model(noise=True, seed=2024)
    rows = run(imu, [parked(k) for k in range(60002)])
    f, w = force(rows), rate(rows)
    for data, sigma in ((f[:, 0], 0.03), (f[:, 1], 0.03), (f[:, 2], 0.03),
                        (w[:, 0], 0.002), (w[:, 1], 0.002), (w[:, 2], 0.002)):
        # white noise: the Allan deviation at one sample equals the sample sigma
        _taus, adev, _err, _n = allantools.oadev(data, rate=PHYSICS_HZ, data_type='freq',
                                                 taus=[1.0 / PHYSICS_HZ])
        assert adev[0] == pytest.approx(sigma, rel=0.03)


def test_config_builders_and_streams():
    config = load_config(rig='polaris')
    p = imu_params(config, [0.1, -0.2, 0.3])
    assert p == params(lever=[0.1, -0.2, 0.3])._replace(lever_arm_m=p.lever_arm_m)
    assert list(p.lever_arm_m) == [0.1, -0.2, 0.3]
    assert np.array_equal(imu_stream(config, 0).state, make_stream(42, 'imu').state)
    # agent 2: + 7919 k on the seed (offset_all_streams is on by default)
    assert np.array_equal(imu_stream(config, 2).state,
                          make_stream(42 + 2 * 7919, 'imu', 0).state)
    with pytest.raises(ValueError, match='3 components'):
        imu_params(config, [0.0, 0.0])
