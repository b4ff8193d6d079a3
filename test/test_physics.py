"""Vehicle physics (acres_sim.core.physics) and the vehicle files (acres_sim.config.vehicles).

References are independent of the code: the 1976 U.S. Standard Atmosphere
tables, the kinematic bicycle R = L / tan(delta), the linear single-track
steady state R = (L + K_us v^2) / delta, a hand calculation of the stop
distance, energy bookkeeping, and the order of accuracy measured by step
halving.
"""

import math
from pathlib import Path

import numpy as np
import pytest

from acres_sim.config import ConfigError
from acres_sim.config.vehicles import VEHICLE_KEYS, load_vehicle, vehicles_dir
from acres_sim.core import physics as ph
from acres_sim.core.truth import PHYSICS_HZ
from acres_sim.core.vehicles import VEHICLE_FIELDS, VehicleParams

G = 9.80665


@pytest.fixture(scope='module')
def polaris():
    return load_vehicle('polaris')


@pytest.fixture(scope='module')
def maxxum():
    return load_vehicle('maxxum')


def drive(fleet, command, seconds):
    """Step ``fleet`` under a constant command; returns the states after each step."""
    out = []
    for _ in range(int(round(seconds * PHYSICS_HZ))):
        fleet.step(command)
        out.append(fleet.states.copy())
    return np.array(out)


def fit_circle(xy):
    """Least-squares circle (Kasa): centre and radius."""
    x, y = xy[:, 0], xy[:, 1]
    A = np.column_stack([2 * x, 2 * y, np.ones_like(x)])
    sol, *_ = np.linalg.lstsq(A, x * x + y * y, rcond=None)
    cx, cy, c = sol
    return (cx, cy), math.sqrt(c + cx * cx + cy * cy)


# --------------------------------------------------------------------------- atmosphere

# 1976 U.S. Standard Atmosphere, density at geometric altitude (NOAA/NASA/USAF 1976 tables).
@pytest.mark.parametrize('h_m, rho', [(0.0, 1.2250), (1000.0, 1.1117), (2000.0, 1.0066),
                                      (5000.0, 0.73643), (10000.0, 0.41351),
                                      (20000.0, 0.088910), (32000.0, 0.013555)])
def test_air_density_matches_the_1976_tables(h_m, rho):
    assert ph.air_density_1976(h_m) == pytest.approx(rho, rel=1e-3)


def test_air_density_at_the_site():
    # between the table's 200 m (1.2017) and 250 m (1.1959)
    rho = ph.air_density_1976(ph.SITE_ALTITUDE_M)
    assert 1.1959 < rho < 1.2017
    assert ph.params_row(load_vehicle('polaris'))[ph.P_AIR_DENSITY] == rho


# --------------------------------------------------------------------------- parking, coasting


def test_parked_vehicle_does_not_move_for_60_s(polaris, maxxum):
    fleet = ph.Fleet([polaris, maxxum], [(0.0, 0.0, 0.3), (20.0, 5.0, -2.0)])
    before = fleet.states.copy()
    drive(fleet, np.zeros((2, 2)), 60.0)
    assert np.array_equal(fleet.states, before)
    for i in range(2):
        t = fleet.truth(i)
        assert t.step == 60 * PHYSICS_HZ
        assert not t.v.any() and not t.w.any()


def test_parked_on_a_slope_holds(polaris):
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)], terrain=ph.Terrain(grade_east=0.15))
    before = fleet.states.copy()
    drive(fleet, [[0.0, 0.0]], 60.0)
    assert np.array_equal(fleet.states, before)


def test_a_yaw_rate_without_speed_keeps_the_vehicle_parked(polaris):
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)])
    before = fleet.states.copy()
    drive(fleet, [[0.0, 0.5]], 5.0)
    assert np.array_equal(fleet.states, before)


@pytest.mark.parametrize('steer', [0.0, 0.15, -0.3])
def test_coasting_decelerates_and_never_gains_energy(polaris, steer):
    p = ph.params_row(polaris)
    x = ph.initial_state(p, 0.0, 0.0, 0.0, 10.0)
    x[ph.S_DRIVE] = 0.0                           # engine off
    ph.refresh_accelerations(x, p)
    energy, speed, u = [], [], []
    for _ in range(120 * PHYSICS_HZ):
        ph.step_actuated(x, 0.0, steer, p, ph.DT, ph.flat_field())   # no drive, steering held
        v2 = x[ph.S_VX] ** 2 + x[ph.S_VY] ** 2 + x[ph.S_VZ] ** 2
        energy.append(0.5 * polaris.mass_kg * v2 + 0.5 * polaris.izz_kgm2 * x[ph.S_WZ] ** 2)
        speed.append(math.sqrt(v2))
        u.append(ph.forward_speed(x))
    energy, speed = np.array(energy), np.array(speed)
    assert np.all(np.diff(energy) <= 1e-9 * energy[:-1] + 1e-12)
    assert np.all(np.diff(speed) <= 1e-12)
    assert min(u) >= 0.0                  # rolls to rest, never backwards
    assert speed[-1] < 0.1
    # level coasting from 10 m/s: about rolling resistance + drag
    k = 2 * PHYSICS_HZ
    decel = (speed[k - 1] - speed[k + 1]) / (2 * ph.DT)
    if steer == 0.0:
        v = speed[k]
        expected = polaris.rolling_resistance * G + 0.5 * ph.air_density_1976(
            ph.SITE_ALTITUDE_M) * polaris.drag_area_m2 * v * v / polaris.mass_kg
        assert decel == pytest.approx(expected, rel=1e-3)


def test_rolling_down_a_slope_accelerates_by_grade_minus_rolling_resistance(polaris):
    grade = 0.1
    p = ph.params_row(polaris, ph.Terrain(grade_east=grade))
    x = ph.initial_state(p, 0.0, 0.0, math.pi, 0.0)      # facing west: downhill
    x[ph.S_PARKED] = 0.0
    for _ in range(3 * PHYSICS_HZ):
        ph.step_actuated(x, 0.0, 0.0, p, ph.DT, ph.flat_field())
    u0 = ph.forward_speed(x)
    for _ in range(PHYSICS_HZ):
        ph.step_actuated(x, 0.0, 0.0, p, ph.DT, ph.flat_field())
    a = ph.forward_speed(x) - u0
    cos_t = 1.0 / math.sqrt(1.0 + grade * grade)
    drag = 0.5 * p[ph.P_AIR_DENSITY] * polaris.drag_area_m2 * (u0 + a / 2) ** 2 / polaris.mass_kg
    expected = G * grade * cos_t - polaris.rolling_resistance * G * cos_t - drag
    assert a == pytest.approx(expected, rel=0.01)


# --------------------------------------------------------------------------- stopping


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_stop_distance_from_10_mps_matches_the_hand_calculation(name):
    vp = load_vehicle(name)
    fleet = ph.Fleet([vp], [(0.0, 0.0, 0.0)])
    fleet.states[0] = ph.initial_state(fleet.params[0], 0.0, 0.0, 0.0, 10.0)  # cruising
    steps = 0
    while fleet.states[0, ph.S_PARKED] < 0.5:
        fleet.step([[0.0, 0.0]])
        steps += 1
        assert steps < 30 * PHYSICS_HZ
    distance = fleet.states[0, ph.S_PX]
    # decel a(t) = a_b (1 - exp(-t / tau)) with a_b = brake + rolling resistance:
    # s = v0^2 / (2 a_b) + v0 tau - a_b tau^2 / 2; drag only shortens it (a few cm)
    v0, tau = 10.0, vp.drive_time_constant_s
    a_b = vp.max_brake_mps2 + vp.rolling_resistance * G
    hand = v0 ** 2 / (2 * a_b) + v0 * tau - a_b * tau ** 2 / 2
    assert 0.98 * hand < distance <= hand
    assert steps / PHYSICS_HZ == pytest.approx(v0 / a_b + tau, abs=0.1)
    # and then it stays put
    before = fleet.states.copy()
    drive(fleet, [[0.0, 0.0]], 10.0)
    assert np.array_equal(fleet.states, before)


# --------------------------------------------------------------------------- steering


def test_steady_circle_at_low_lateral_acceleration_is_the_kinematic_bicycle(polaris):
    v, delta = 3.0, 0.2
    L = polaris.wheelbase_m
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)])
    drive(fleet, [[v, v * math.tan(delta) / L]], 15.0)       # settle
    pts = []
    for _ in range(int(2 * math.pi * (L / math.tan(delta)) / v * PHYSICS_HZ)):   # one lap
        fleet.step([[v, v * math.tan(delta) / L]])
        fp = fleet.footprint(0)
        pts.append((fp.x, fp.y))
    assert fleet.states[0, ph.S_STEER] == pytest.approx(delta, abs=1e-12)
    _c, radius = fit_circle(np.array(pts))
    assert radius == pytest.approx(L / math.tan(delta), rel=0.015)    # a_y ~ 0.9 m/s^2


def test_understeer_at_higher_speed_follows_the_linear_single_track_model(polaris):
    vp = polaris._replace(cornering_stiffness_front_npr=15000.0,
                          cornering_stiffness_rear_npr=45000.0)
    L, m = vp.wheelbase_m, vp.mass_kg
    lr = 0.4 * L
    lf = L - lr
    K_us = m * lr / (L * vp.cornering_stiffness_front_npr) \
        - m * lf / (L * vp.cornering_stiffness_rear_npr)        # rad per m/s^2
    assert K_us > 0.0
    v, delta = 9.0, 0.08
    fleet = ph.Fleet([vp], [(0.0, 0.0, 0.0)])
    drive(fleet, [[v, v * math.tan(delta) / L]], 20.0)
    pts = []
    for _ in range(8 * PHYSICS_HZ):
        fleet.step([[v, v * math.tan(delta) / L]])
        pts.append(fleet.truth(0).p_c[:2])
    _c, radius = fit_circle(np.array(pts))
    kinematic = L / math.tan(delta)
    linear = (L + K_us * v * v) / delta
    assert radius > 1.2 * kinematic
    assert radius == pytest.approx(linear, rel=0.05)
    # the same speed on the kinematic circle with balanced stiffness stays close to it
    assert radius > fit_circle(np.array(_circle_points(polaris, v, delta)))[1] * 1.1


def _circle_points(vp, v, delta):
    L = vp.wheelbase_m
    fleet = ph.Fleet([vp], [(0.0, 0.0, 0.0)])
    drive(fleet, [[v, v * math.tan(delta) / L]], 20.0)
    pts = []
    for _ in range(8 * PHYSICS_HZ):
        fleet.step([[v, v * math.tan(delta) / L]])
        pts.append(fleet.truth(0).p_c[:2])
    return pts


def test_kinematic_yaw_rate_at_walking_speed(maxxum):
    L = maxxum.wheelbase_m
    fleet = ph.Fleet([maxxum], [(0.0, 0.0, 0.0)])
    drive(fleet, [[0.6, 0.6 * math.tan(0.4) / L]], 6.0)
    x = fleet.states[0]
    u = ph.forward_speed(x)
    assert 0.55 < u < 0.65
    assert x[ph.S_WZ] == pytest.approx(u * math.tan(x[ph.S_STEER]) / L, rel=5e-3)


def test_steering_respects_rate_and_angle_limits(polaris):
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)])
    commands = [[4.0, 3.0]] * 240 + [[4.0, -3.0]] * 240 + [[2.0, 0.0]] * 120
    steer = [fleet.states[0, ph.S_STEER]]
    for c in commands:
        fleet.step([c])
        steer.append(fleet.states[0, ph.S_STEER])
    steer = np.array(steer)
    assert np.max(np.abs(np.diff(steer))) <= polaris.steer_rate_radps * ph.DT + 1e-12
    assert np.max(np.abs(steer)) == pytest.approx(polaris.max_steer_rad)


# --------------------------------------------------------------------------- speed control


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_speed_controller_reaches_and_holds_the_set_speed(name):
    vp = load_vehicle(name)
    fleet = ph.Fleet([vp], [(0.0, 0.0, 0.0)])
    states = drive(fleet, [[5.0, 0.0]], 25.0)
    u = np.array([ph.forward_speed(s[0]) for s in states])
    assert abs(u[-1] - 5.0) < 0.02
    assert u.max() < 5.0 * 1.02                  # no more than 2 % overshoot
    accel = np.diff(u) / ph.DT
    assert accel.max() <= vp.max_accel_mps2 * 1.01


def test_speed_commands_are_clamped_to_the_vehicle_limits(polaris):
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)])
    drive(fleet, [[100.0, 0.0]], 20.0)
    assert ph.forward_speed(fleet.states[0]) == pytest.approx(polaris.max_speed_mps, abs=0.1)
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)])
    drive(fleet, [[-100.0, 0.0]], 10.0)
    assert ph.forward_speed(fleet.states[0]) == pytest.approx(
        -polaris.max_reverse_speed_mps, abs=0.1)


def test_bad_commands_stop_the_vehicle(polaris):
    fleet = ph.Fleet([polaris], [(0.0, 0.0, 0.0)])
    drive(fleet, [[3.0, 0.0]], 5.0)
    drive(fleet, [[float('nan'), float('inf')]], 5.0)
    assert fleet.states[0, ph.S_PARKED] == 1.0
    assert np.all(np.isfinite(fleet.states))


# --------------------------------------------------------------------------- integrator


def test_integrator_is_second_order_by_step_halving(polaris):
    """Open loop (constant actuator targets, steering already set) on a slope:
    a smooth manoeuvre with tyre forces, drag, rolling resistance, the drive lag
    and gravity.  Errors against a fine-step reference shrink 4x per halving."""
    p = ph.params_row(polaris, ph.Terrain(grade_east=0.05, grade_north=-0.03))

    def run(dt, T=3.0):
        x = ph.initial_state(p, 0.0, 0.0, 0.3, 6.0)
        x[ph.S_STEER] = 0.15
        ph.refresh_accelerations(x, p)
        for _ in range(int(round(T / dt))):
            ph.step_actuated(x, 1500.0, 0.15, p, dt, ph.flat_field())
        return x

    ref = run(1.0 / 7680)
    errors = []
    for dt in (1.0 / 120, 1.0 / 240, 1.0 / 480):
        x = run(dt)
        errors.append((np.linalg.norm(x[ph.S_PX:ph.S_PZ + 1] - ref[ph.S_PX:ph.S_PZ + 1]),
                       np.linalg.norm(x[ph.S_VX:ph.S_VZ + 1] - ref[ph.S_VX:ph.S_VZ + 1]),
                       abs(x[ph.S_WZ] - ref[ph.S_WZ])))
    errors = np.array(errors)
    ratios = errors[:-1] / errors[1:]
    assert np.all((ratios > 3.6) & (ratios < 4.6)), ratios
    assert errors[0, 0] < 5e-3                   # 1/120 s: millimetres after 3 s


# --------------------------------------------------------------------------- batch, truth, frames


def _commands(k, n):
    """Deterministic, changing commands: drive, turn, stop, reverse."""
    rng = np.random.default_rng(1000 + k // 60)
    c = np.column_stack([rng.uniform(-2.0, 8.0, n), rng.uniform(-0.5, 0.5, n)])
    c[(k // 60 + np.arange(n)) % 5 == 0] = 0.0
    return c


def test_batch_of_n_equals_n_single_runs_bit_for_bit(polaris, maxxum):
    n = 6
    params = [polaris if i % 2 else maxxum._replace(com_x_m=0.1 * i) for i in range(n)]
    poses = [(5.0 * i, -3.0 * i, 0.4 * i) for i in range(n)]
    terrain = ph.Terrain(grade_east=0.02, grade_north=0.01)
    batch = ph.Fleet(params, poses, terrain=terrain)
    parallel = ph.Fleet(params, poses, terrain=terrain, parallel=True)
    singles = [ph.Fleet([params[i]], [poses[i]], terrain=terrain) for i in range(n)]
    for k in range(20 * PHYSICS_HZ):
        c = _commands(k, n)
        batch.step(c)
        parallel.step(c)
        for i, f in enumerate(singles):
            f.step(c[i:i + 1])
    assert not np.array_equal(batch.states, ph.Fleet(params, poses, terrain=terrain).states)
    assert np.array_equal(batch.states, parallel.states)
    for i, f in enumerate(singles):
        assert np.array_equal(batch.states[i], f.states[0])
        a, b = batch.truth(i), f.truth(0)
        for field in ('p', 'R', 'v', 'w', 'p_c'):
            assert np.array_equal(getattr(a, field), getattr(b, field))


def test_truth_is_consistent_with_the_state(polaris):
    vp = polaris._replace(com_x_m=0.3, com_y_m=-0.05, com_z_m=0.1)
    fleet = ph.Fleet([vp], [(2.0, -1.0, 0.7)])
    drive(fleet, [[4.0, 0.3]], 6.0)
    t = fleet.truth(0)
    assert t.step == 6 * PHYSICS_HZ
    assert np.allclose(t.R.T @ t.R, np.eye(3), atol=1e-12)
    assert np.allclose(t.R[:, 2], [0.0, 0.0, 1.0], atol=1e-12)       # flat: no roll/pitch
    assert t.p[2] == pytest.approx(vp.cog_height_m, abs=1e-12)
    assert np.allclose(t.p_c, t.p + t.R @ [0.3, -0.05, 0.1], atol=1e-12)
    assert t.v[2] == 0.0 and t.w[0] == 0.0 and t.w[1] == 0.0
    assert abs(t.w[2]) > 0.1 and np.linalg.norm(t.v) == pytest.approx(4.0, rel=0.02)


def test_vehicle_stays_on_a_sloped_plane(maxxum):
    grade_e, grade_n = 0.08, -0.05
    fleet = ph.Fleet([maxxum._replace(com_z_m=0.2)], [(0.0, 0.0, 1.0)],
                     terrain=ph.Terrain(ground_z_m=3.0, grade_east=grade_e, grade_north=grade_n))
    normal = np.array([-grade_e, -grade_n, 1.0]) / math.sqrt(1 + grade_e ** 2 + grade_n ** 2)
    for _ in range(30):
        drive(fleet, [[4.0, 0.2]], 1.0)
        t = fleet.truth(0)
        ground = 3.0 + grade_e * t.p_c[0] + grade_n * t.p_c[1]
        height = (t.p_c[2] - ground) * normal[2]       # distance from the plane
        assert height == pytest.approx(maxxum.cog_height_m + 0.2, abs=1e-9)
        assert np.allclose(t.R[:, 2], normal, atol=1e-12)
        assert abs(t.v @ normal) < 1e-12
        assert np.allclose(np.cross(t.w, normal), 0.0, atol=1e-12)
    fp = fleet.footprint(0)
    assert fp.z == pytest.approx(3.0 + grade_e * fp.x + grade_n * fp.y, abs=1e-9)


def test_base_footprint_pose_is_the_rear_axle_on_the_ground(polaris):
    fleet = ph.Fleet([polaris], [(3.0, 4.0, 0.5)])
    t = fleet.truth(0)
    assert np.allclose(t.p, [3.0, 4.0, polaris.cog_height_m])
    fp = ph.base_footprint_pose(t, polaris)
    back = 0.4 * polaris.wheelbase_m
    assert fp.x == pytest.approx(3.0 - back * math.cos(0.5), abs=1e-12)
    assert fp.y == pytest.approx(4.0 - back * math.sin(0.5), abs=1e-12)
    assert fp.z == pytest.approx(0.0, abs=1e-12)
    assert fp.yaw == pytest.approx(0.5, abs=1e-12)


def test_reset_marks_the_next_truth(polaris):
    fleet = ph.Fleet([polaris, polaris], [(0.0, 0.0, 0.0), (10.0, 0.0, 0.0)])
    drive(fleet, [[3.0, 0.1], [3.0, 0.0]], 2.0)
    assert not fleet.truth(0).reset
    fleet.reset(0, (50.0, 60.0, 1.0))
    fleet.step([[0.0, 0.0], [3.0, 0.0]])
    first = fleet.truth(0)
    assert first.reset and fleet.truth(0).reset          # every truth of that step
    assert not fleet.truth(1).reset
    assert np.allclose(first.p[:2], [50.0, 60.0]) and not first.v.any()
    fleet.step([[0.0, 0.0], [3.0, 0.0]])
    assert not fleet.truth(0).reset
    assert fleet.step_index == 2 * PHYSICS_HZ + 2


def test_fleet_checks_the_pose_count(polaris):
    with pytest.raises(ValueError, match='2 initial poses for 1 vehicles'):
        ph.Fleet([polaris], [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0)])


# --------------------------------------------------------------------------- vehicle files


def test_packaged_vehicles_load_with_the_sourced_values(polaris, maxxum):
    assert polaris.wheelbase_m == 2.064 and polaris.track_m == 1.42
    assert polaris.cog_height_m == 0.40 and polaris.wheel_radius_m == 0.34
    assert polaris.max_steer_rad == 0.52 and polaris.mass_kg == pytest.approx(960.0)
    assert 2.64 <= maxxum.wheelbase_m <= 2.8 and maxxum.max_speed_mps == 11.1
    assert maxxum.max_steer_rad == pytest.approx(math.radians(35.0), abs=0.01)
    assert maxxum.cog_height_m == pytest.approx(1.0)


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_every_value_in_a_vehicle_file_has_a_source_note(name):
    lines = (vehicles_dir() / f'{name}.yaml').read_text().splitlines()
    keys = [ln for ln in lines
            if ln.startswith('  ') and ':' in ln and not ln.lstrip().startswith('#')]
    assert {ln.split(':')[0].strip() for ln in keys} == set(VEHICLE_FIELDS) | {'name'}
    for ln in keys:
        if ln.split(':')[0].strip() != 'name':
            assert '#' in ln and len(ln.split('#', 1)[1].strip()) > 5, ln


def _write(tmp_path, body, name='v.yaml'):
    path = tmp_path / name
    path.write_text(body)
    return path


def _polaris_text():
    return (vehicles_dir() / 'polaris.yaml').read_text()


@pytest.mark.parametrize('old, new, fragment', [
    ('mass_kg: 960.0', 'mass_kg: -5.0', "vehicle.mass_kg = -5.0 (in {path}): out of range"),
    ('max_steer_rad: 0.52', 'max_steer_rad: 2.0', 'vehicle.max_steer_rad = 2.0'),
    ('friction_mu: 0.7', 'friction_mu: "high"', "vehicle.friction_mu = 'high'"),
    ('friction_mu: 0.7', 'friction_mu: .nan', 'not a finite number'),
    ('drag_area_m2: 2.1', 'drag_aera_m2: 2.1', "unknown key 'vehicle.drag_aera_m2' (in {path}); "
                                               "did you mean 'vehicle.drag_area_m2'?"),
    ('  wheelbase_m: 2.064', '  # gone', 'vehicle.wheelbase_m is missing (in {path})'),
    ('com_x_m: 0.0', 'com_x_m: 1.5', 'vehicle.com_x_m = 1.5 (in {path}): the centre of mass'),
    ('dynamic_above_mps: 2.0', 'dynamic_above_mps: 1.1', 'the blend band is too narrow'),
    ('mass_kg: 960.0', 'mass_kg: true', 'expected a number'),
])
def test_vehicle_file_errors_name_key_and_file(tmp_path, old, new, fragment):
    text = _polaris_text()
    assert old in text
    path = _write(tmp_path, text.replace(old, new))
    with pytest.raises(ConfigError) as err:
        load_vehicle(path)
    message = str(err.value)
    assert fragment.format(path=path) in message
    assert '\n' not in message
    assert 'allowed' in message or 'unknown key' in message


def test_vehicle_file_structure_errors(tmp_path):
    with pytest.raises(ConfigError, match=r'is not valid YAML'):
        load_vehicle(_write(tmp_path, 'vehicle: [1, 2'))
    with pytest.raises(ConfigError, match=r'expected a mapping with the key "vehicle"'):
        load_vehicle(_write(tmp_path, 'mass_kg: 1'))
    with pytest.raises(ConfigError, match=r'cannot read vehicle file .*nope.yaml'):
        load_vehicle(tmp_path / 'nope.yaml')
    with pytest.raises(ConfigError, match=r"unknown vehicle 'tractor9'.*maxxum, polaris"):
        load_vehicle('tractor9')


def test_vehicle_defaults_fill_the_optional_keys(tmp_path):
    text = '\n'.join(ln for ln in _polaris_text().splitlines()
                     if not ln.strip().startswith(('com_', 'speed_k', 'kinematic', 'dynamic')))
    vp = load_vehicle(_write(tmp_path, text))
    assert vp.com_x_m == 0.0
    assert vp.speed_kp_per_s == VehicleParams._field_defaults['speed_kp_per_s']


def test_the_ranges_cover_every_field():
    assert tuple(VEHICLE_KEYS) == VEHICLE_FIELDS
    assert Path(vehicles_dir()).name == 'vehicles'
