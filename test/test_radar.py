"""The ground-speed radar (acres_sim.core.radar) against references written out
here: its noise against the configured (documented) accuracy, the draw count
against a fresh stream (also invalid and without noise), the scale error of a
pitched body against V cos(beam + pitch) / cos(beam), a grade and a lever arm,
the minimum speed, and block cuts bit for bit."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from acres_sim.config.vehicles import load_vehicle
from acres_sim.core import radar
from acres_sim.core.frames import chassis_in_base_footprint
from acres_sim.core.physics import Terrain
from acres_sim.core.rng import RADAR, Pcg32
from acres_sim.core.schedule import Due
from acres_sim.core.truth import PHYSICS_HZ, T_V, T_W, TRUTH_SIZE
from sensor_states import (physics_run, rig_block_states, run_in_blocks, straight_states,
                           yaw_pitch_quaternion)

SEQ = RADAR.sequence


def _run(params, rows, seed=9, k0=0):
    sensor = radar.RadarSpeed(params, Pcg32(seed, SEQ))
    steps, out = sensor.run_block(k0, rows)
    return sensor, steps, out


@pytest.mark.parametrize('noise', [True, False])
@pytest.mark.parametrize('speed', [0.0, 0.1, 3.0])     # parked, below the minimum, driving
def test_each_sample_draws_one_gaussian_also_invalid_and_without_noise(noise, speed):
    rows = straight_states(20 * PHYSICS_HZ + 1, speed)
    sensor, steps, out = _run(radar.RadarParams(noise=noise), rows, seed=4)
    due = Due(10.0)
    assert steps.tolist() == [k for k in range(len(rows)) if due.due(k / PHYSICS_HZ)]
    assert len(steps) == 201
    fresh = Pcg32(4, SEQ)
    fresh.gaussians(radar.VALUES_PER_SAMPLE * len(steps))
    assert radar.VALUES_PER_SAMPLE == 1
    assert np.array_equal(sensor.rng.state, fresh.state)
    valid = speed >= radar.RadarParams().min_speed_mps
    assert np.all(out[:, radar.R_VALID] == float(valid))
    if not valid:
        assert np.all(out[:, radar.R_SPEED] == 0.0)
    elif not noise:
        assert np.all(out[:, radar.R_SPEED] == out[:, radar.R_DOPPLER])


@pytest.mark.parametrize('speed', [0.5, 3.0, 8.0])
def test_speed_error_has_the_documented_accuracy(speed):
    # sigma = 0.02 m/s + 1 % of the speed (1 sigma; Hines & Zelubowski 1992: ~1 %,
    # Antoniou et al. 2017: 0.5-1.5 %), zero mean, on a straight at a constant speed
    params = radar.RadarParams()
    _, _, out = _run(params, straight_states(1200 * PHYSICS_HZ + 1, speed), seed=1)
    sigma = 0.02 + 0.01 * speed
    assert np.allclose(out[:, radar.R_SIGMA], sigma, rtol=1e-12)
    z = (out[:, radar.R_SPEED] - speed) / sigma
    n = z.size
    assert n == 12001
    assert stats.chi2.ppf(1e-4, n) < float(z @ z) < stats.chi2.isf(1e-4, n)
    assert abs(z.mean()) < 4.0 / math.sqrt(n)
    # as a share of the speed: the RMS error is 1 % plus the floor's share
    rms = math.sqrt(np.mean((out[:, radar.R_SPEED] / speed - 1.0) ** 2))
    assert rms == pytest.approx(0.01 + 0.02 / speed, rel=0.05)
    # about 95 % within +-1.96 sigma (binomial bounds)
    inside = np.mean(np.abs(z) < 1.96)
    assert abs(inside - 0.95) < 4 * math.sqrt(0.95 * 0.05 / n)


@pytest.mark.parametrize('pitch_deg', [-6.0, -2.0, 0.0, 2.0, 6.0])
@pytest.mark.parametrize('beam_deg', [35.0, 45.0])
def test_a_pitched_body_scales_the_speed_by_cos_beam_plus_pitch_over_cos_beam(pitch_deg,
                                                                              beam_deg):
    # a horizontal motion at 4 m/s with the body pitched nose-down (FLU + about y)
    pitch, beam = math.radians(pitch_deg), math.radians(beam_deg)
    params = radar.RadarParams(noise=False, beam_angle_deg=beam_deg)
    _, _, out = _run(params, straight_states(121, 4.0, yaw=0.7, pitch=pitch))
    expected = 4.0 * math.cos(beam + pitch) / math.cos(beam)
    assert np.allclose(out[:, radar.R_SPEED], expected, rtol=1e-12)
    assert np.allclose(out[:, radar.R_DELTA_PITCH], pitch, atol=1e-12)
    assert np.allclose(out[:, radar.R_TRUE_SPEED], 4.0 * math.cos(pitch), rtol=1e-12)
    if pitch_deg:     # nose down reads low, nose up high; more so for a steeper beam
        assert (expected < 4.0) == (pitch > 0)


def test_a_grade_gives_no_scale_error_the_speed_is_along_the_ground():
    # on a 6 % grade the body follows the ground: the radar reads the speed along the
    # slope (body x), not the horizontal speed
    maxxum = load_vehicle('maxxum')
    rows, _, _ = physics_run(maxxum, 10.0, lambda t: (2.0, 0.0), start_speed=2.0,
                             terrain=Terrain(grade_east=0.06))
    _, steps, out = _run(radar.default_radar_params(maxxum, noise=False), rows)
    along = np.linalg.norm(rows[steps, T_V:T_V + 3], axis=1)
    horizontal = np.linalg.norm(rows[steps, T_V:T_V + 2], axis=1)
    assert np.allclose(out[:, radar.R_SPEED], along, rtol=1e-9)
    assert np.all(out[:, radar.R_SPEED] - horizontal > 0.9 * 2.0 * (1 - 1 / math.sqrt(1.0036)))
    assert np.allclose(out[:, radar.R_DELTA_PITCH], 0.0, atol=1e-9)


def test_the_mount_velocity_includes_the_turn_at_the_lever_arm():
    # a turn: the radar 0.5 m right of the CoM moves faster by 0.5 r; reverse: no sign
    arm_y, com_y = -0.5, 0.0
    params = radar.RadarParams(noise=False, arm_x_m=1.2, arm_y_m=arm_y, com_y_m=com_y)
    rows = np.zeros((13, TRUTH_SIZE))
    rows[:, 3:7] = yaw_pitch_quaternion(0.3)
    for u, r in ((3.0, 0.2), (-2.0, 0.4)):
        rows[:, T_V] = u * math.cos(0.3)
        rows[:, T_V + 1] = u * math.sin(0.3)
        rows[:, T_W + 2] = r
        _, _, out = _run(params, rows)
        v_x = u - r * (arm_y - com_y)            # x . (w x R d) = -r d_y
        assert out[0, radar.R_TRUE_SPEED] == pytest.approx(v_x, rel=1e-12)
        assert out[0, radar.R_SPEED] == pytest.approx(abs(v_x), rel=1e-12)


def test_no_output_below_the_minimum_speed():
    params = radar.RadarParams()
    assert params.min_speed_mps == pytest.approx(0.5 / 3.6)
    for speed, valid in ((0.0, False), (0.05, False), (0.138, False), (0.14, True), (0.3, True)):
        _, _, out = _run(params, straight_states(1201, speed))
        assert np.all(out[:, radar.R_VALID] == float(valid)), speed
        if valid:
            assert np.all(out[:, radar.R_SPEED] > 0.0)
            assert np.std(out[:, radar.R_SPEED]) > 0.5 * (0.02 + 0.01 * speed)
        else:
            assert np.all(out[:, radar.R_SPEED] == 0.0)
    # a tractor starting from rest: invalid while parked, valid once above 0.5 km/h
    rows, _, _ = physics_run(load_vehicle('maxxum'), 6.0, lambda t: (2.0, 0.0))
    _, _, out = _run(radar.RadarParams(noise=False), rows)
    assert np.array_equal(out[:, radar.R_VALID] > 0.5, out[:, radar.R_DOPPLER] >= 0.5 / 3.6)
    assert out[0, radar.R_VALID] == 0.0 and out[-1, radar.R_VALID] == 1.0


def test_blocks_of_1_7_or_240_steps_give_the_same_samples_bit_for_bit():
    rows = rig_block_states('polaris', 30)
    params = radar.default_radar_params(load_vehicle('polaris'))
    whole = radar.RadarSpeed(params, Pcg32(6, SEQ))
    ref_k, ref = whole.run_block(0, rows)
    assert ref[:, radar.R_VALID].min() == 0.0 and ref[:, radar.R_VALID].max() == 1.0
    for size in (1, 7, 240):
        sensor = radar.RadarSpeed(params, Pcg32(6, SEQ))
        k, out = run_in_blocks(sensor, rows, size)
        assert np.array_equal(k, ref_k) and np.array_equal(out, ref)
        assert np.array_equal(sensor.rng.state, whole.rng.state)


def test_row_and_defaults():
    maxxum = load_vehicle('maxxum')
    params = radar.default_radar_params(maxxum)
    arm = (np.array(radar.MOUNT_FROM_BASE_FOOTPRINT_M)
           - chassis_in_base_footprint(maxxum.wheelbase_m, maxxum.cog_height_m))
    assert (params.arm_x_m, params.arm_y_m, params.arm_z_m) == pytest.approx(tuple(arm))
    assert params.arm_x_m == pytest.approx(radar.RadarParams().arm_x_m)   # the Maxxum's defaults
    assert radar.RadarParams._fields[:2] == ('hz', 'noise') and params.hz == 10.0
    sensor, _, out = _run(params, straight_states(121, 3.0))
    row = sensor.row(out[-1])
    json.dumps(row)
    o = out[-1]
    assert row == {'speed_mps': round(o[radar.R_SPEED], 6), 'valid': True,
                   'sigma_mps': round(o[radar.R_SIGMA], 6),
                   'truth': {'speed_mps': 3.0, 'delta_pitch_rad': 0.0}}
    assert radar.SAMPLE_SIZE == out.shape[1] == radar.R_DELTA_PITCH + 1
