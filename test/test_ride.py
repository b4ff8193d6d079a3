"""The ride on a terrain (acres_sim.core.ride, physics.verlet_step_ride) and the
vibration of the truth (acres_sim.core.vibration).

References: static equilibrium (the weight on the springs, gravity in body
axes on a slope, f = R^T (0, 0, g)), the flat-plane model for a straight
drive on level ground, a hand calculation of the spring-mass frequencies,
the aliasing of a sampled sinusoid, and the spec's IMU filter (the mean of
two differences) against a single difference.
"""

import functools
import math

import numpy as np
import pytest
from scipy.signal import welch

from acres_sim.config.loader import load_config
from acres_sim.config.vehicles import load_vehicle
from acres_sim.core import physics as ph
from acres_sim.core import ride
from acres_sim.core.quaternion import matrix_from_quat
from acres_sim.core.terrain import TerrainField
from acres_sim.core.truth import PHYSICS_HZ, T_P, T_Q, T_V
from acres_sim.core.vibration import VibrationSwitches, alias_hz, engine_hz
from acres_sim.pipeline.vehicle import build_vehicle, rig_simulation, vehicle_route

G = 9.80665
OFF = VibrationSwitches()
ENGINE = VibrationSwitches(engine=True)
JITTER = VibrationSwitches(parked_jitter=True)


def plane_field(grade_east=0.0, grade_north=0.0, ground_z=0.0):
    """A terrain of one plane (no roughness) over +-2 km."""
    xs = np.array([-2000.0, 0.0, 2000.0])
    X, Y = np.meshgrid(xs, xs)
    heights = ground_z + grade_east * X + grade_north * Y
    return TerrainField(-2000.0, -2000.0, 2000.0, heights, np.zeros_like(heights),
                        np.zeros((4, 4)), 0.25)


def washboard_field(amplitude_m, wavelength_m):
    """Level ground with corrugations across x (a sinusoid in x, constant in y)."""
    n = 256
    spacing = wavelength_m / 16.0
    x = np.arange(n) * spacing
    tile = np.tile(amplitude_m * np.sin(2.0 * np.pi * x / wavelength_m), (n, 1))
    field = plane_field()
    return field._replace(roughness_scale=np.ones_like(field.heights_m), tile_m=tile,
                          tile_spacing_m=spacing)


def run(rig, seconds, ground=None, switches=OFF, command=None, pose=None):
    """The noise-free rig ``rig`` for ``seconds`` in the block kernel: (IMU
    samples (n, 6), every step's truth (steps + 1, TRUTH_SIZE), the fleet);
    ``command`` (speed, yaw rate) drives it instead of its route, ``pose``
    (x, y, yaw) is its start."""
    config = load_config(rig=rig, overrides={'noise': False})
    vehicle = build_vehicle(config, rig, route=vehicle_route(rig))
    vehicle.vibration = switches
    if pose is not None:
        vehicle.start_pose = tuple(pose)
    sim = rig_simulation([vehicle], int(round(seconds * PHYSICS_HZ)), ground=ground)
    if command is not None:
        sim.commands[0] = (1.0, *command)
    imu, states = [], []
    while sim.step <= sim.steps:
        block = sim.advance(1200)[0]
        imu.append(block.imu)
        states.append(block.states)
    return np.concatenate(imu), np.concatenate(states), sim.fleet


def roll_pitch_deg(q):
    """Roll and pitch [deg] of FLU -> ENU quaternions (x, y, z, w) rows."""
    x, y, z, w = q.T
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1, 1))
    return np.degrees(roll), np.degrees(pitch)


# --------------------------------------------------------------------------- statics


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_static_loads_balance_the_sprung_weight_and_its_moments(name):
    p = ph.params_row(load_vehicle(name), ride=True)
    loads = np.array(ride.corner_loads(p, G))
    corners = np.array([ride.corner(p, i) for i in range(4)])
    assert loads.sum() == pytest.approx(ride.sprung_mass(p) * G, rel=1e-12)
    assert (corners[:, 0] * loads).sum() == pytest.approx(0.0, abs=1e-6)
    assert (corners[:, 1] * loads).sum() == pytest.approx(0.0, abs=1e-6)
    assert np.all(loads > 0)


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_at_rest_on_level_ground_the_pose_is_the_plane_models(name):
    vp = load_vehicle(name)
    on_plane = ph.Fleet([vp], [(3.0, 4.0, 0.7)])
    on_field = ph.Fleet([vp], [(3.0, 4.0, 0.7)], ground=plane_field())
    np.testing.assert_allclose(on_field.states[0, ph.S_PX:ph.S_QW + 1],
                               on_plane.states[0, ph.S_PX:ph.S_QW + 1], atol=1e-9)
    # nothing moves while it stands: every force balances
    p = on_field.params[0].copy()
    x = on_field.states[0].copy()
    x[ph.S_PARKED] = 0.0
    ph.refresh_ride_accelerations(x, p, on_field.field)
    assert np.abs(x[ph.S_AX:ph.S_ALZ + 1]).max() < 1e-9
    assert np.abs(x[ph.S_AZU:ph.S_AZU + 4]).max() < 1e-9


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
@pytest.mark.parametrize('grades', [(0.05, 0.0), (0.0, -0.04), (0.03, 0.03)])
def test_parked_on_a_slope_the_imu_reads_gravity_in_body_axes(name, grades):
    imu, states, fleet = run(name, 2.0, ground=plane_field(*grades), command=(0.0, 0.0),
                             pose=(10.0, 20.0, 0.4))
    R = matrix_from_quat(states[-1, T_Q:T_Q + 4])
    np.testing.assert_allclose(imu[:, :3], np.tile(R.T @ [0.0, 0.0, G], (len(imu), 1)),
                               atol=1e-9)
    # the body lies on the slope, its z axis the plane's normal but for the lean of the
    # springs under the tyres' side force on a cross slope (a few hundredths of a degree)
    normal = np.array([-grades[0], -grades[1], 1.0]) / math.hypot(1.0, *grades)
    assert math.degrees(math.acos(min(R[:, 2] @ normal, 1.0))) < 0.2
    assert np.all(states[:, T_V:T_V + 3] == 0.0)


# --------------------------------------------------------------------------- dynamics


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_a_straight_drive_on_level_ground_follows_the_plane_model(name):
    _, plane, _ = run(name, 20.0, command=(3.0, 0.0), pose=(0.0, 0.0, 0.3))
    _, field, _ = run(name, 20.0, ground=plane_field(), command=(3.0, 0.0),
                      pose=(0.0, 0.0, 0.3))
    # the same track (the squat's pitch costs the start a few centimetres), the same speed
    np.testing.assert_allclose(field[:, T_P:T_P + 3], plane[:, T_P:T_P + 3], rtol=0, atol=0.05)
    np.testing.assert_allclose(field[-1, T_V:T_V + 3], plane[-1, T_V:T_V + 3], rtol=0,
                               atol=1e-3)
    roll, pitch = roll_pitch_deg(field[:, T_Q:T_Q + 4])
    # squat while it accelerates, level once it cruises
    assert np.abs(roll).max() < 1e-6
    assert np.abs(pitch[-120:]).max() < 0.01
    assert pitch.min() < -0.01


def test_the_body_leans_out_of_a_turn():
    _, states, _ = run('polaris', 20.0, ground=plane_field(), command=(5.0, 0.4))
    roll, _pitch = roll_pitch_deg(states[-240:, T_Q:T_Q + 4])
    # a left turn (positive yaw rate) at 2 m/s^2 lateral: the body rolls to the right
    assert roll.mean() > 0.2


def test_climbing_a_slope_the_chassis_follows_the_ground():
    grade = 0.04
    _, states, _ = run('maxxum', 30.0, ground=plane_field(grade), command=(3.0, 0.0),
                       pose=(0.0, 0.0, 0.0))
    x, z = states[:, T_P], states[:, T_P + 2]
    height = z - grade * x          # above the plane, vertical
    assert np.ptp(height[600:]) < 0.005
    _roll, pitch = roll_pitch_deg(states[600:, T_Q:T_Q + 4])
    # nose up by the grade, and a little more: the drive force at the ground squats it
    slope_deg = math.degrees(math.atan(grade))
    assert -slope_deg - 0.5 < pitch.mean() < -slope_deg - 0.05


def test_corrugations_at_the_bounce_frequency_shake_the_maxxum_at_that_frequency():
    # a 2 m washboard at 4.4 m/s excites 2.2 Hz: near the tractor's bounce on its tyres
    imu, _states, _ = run('maxxum', 60.0, ground=washboard_field(0.01, 2.0),
                          command=(4.4, 0.0), pose=(-100.0, 0.0, 0.0))
    f = imu[1200:, 2] - imu[1200:, 2].mean()
    freqs, psd = welch(f, fs=120.0, nperseg=2048)
    assert freqs[np.argmax(psd)] == pytest.approx(2.2, abs=0.1)


# --------------------------------------------------------------------------- vibration


@pytest.mark.parametrize('f_hz, alias', [(100.0, -20.0), (50.0, 50.0), (110.0, -10.0),
                                         (130.0, 10.0), (33.3, 33.3), (240.0, 0.0)])
def test_alias_frequencies(f_hz, alias):
    assert alias_hz(f_hz) == pytest.approx(alias, abs=1e-9)


@pytest.mark.parametrize('name, speed', [('maxxum', 3.0), ('polaris', 4.0)])
def test_the_engine_harmonic_shows_at_its_alias(name, speed):
    imu, _states, fleet = run(name, 40.0, switches=ENGINE, command=(speed, 0.0))
    expected = abs(alias_hz(engine_hz(fleet.params[0], speed)))
    f = imu[600:, 2] - imu[600:, 2].mean()
    freqs, psd = welch(f, fs=120.0, nperseg=1024)
    assert freqs[np.argmax(psd)] == pytest.approx(expected, abs=0.3)


def test_engine_off_leaves_the_truth_alone():
    _, plain, _ = run('polaris', 5.0, command=(3.0, 0.0))
    _, off, _ = run('polaris', 5.0, switches=VibrationSwitches(roughness=False),
                    command=(3.0, 0.0))
    assert np.array_equal(plain, off)


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_parked_jitter_is_in_the_truth_and_not_in_the_imu(name):
    imu, states, fleet = run(name, 3.0, switches=JITTER, command=(0.0, 0.0))
    R = matrix_from_quat(states[0, T_Q:T_Q + 4])
    v_body = states[:, T_V:T_V + 3] @ R           # rows: R^T v
    # a 60 Hz alternation of 0.02 m/s along body x
    steps = np.diff(v_body[:, 0])
    np.testing.assert_allclose(np.abs(steps), 0.02, atol=1e-12)
    assert np.all(steps[1:] * steps[:-1] < 0)
    # the spec's IMU (the mean of two differences) reads gravity only ...
    gravity = R.T @ [0.0, 0.0, G]
    assert np.abs(imu[:, :3] - gravity).max() < 1e-6
    # ... where one difference reads 0.02 * 120 = 2.4 m/s^2
    one_step = np.diff(states[:, T_V:T_V + 3], axis=0) * PHYSICS_HZ
    assert np.abs(one_step).max() == pytest.approx(2.4, rel=1e-9)


# --------------------------------------------------------------------------- modes


def heave_response(name, f_hz, amplitude_m=0.005, seconds=12.0):
    """|a / z| at ``f_hz``: the noise-free IMU's vertical specific force (its
    Welch PSD around the drive frequency) over the height of a washboard whose
    wavelength is a third of the wheelbase (front and rear wheels in phase: pure
    heave), driven over at the speed that makes it ``f_hz``."""
    wavelength = load_vehicle(name).wheelbase_m / 3.0
    imu, _states, _ = run(name, seconds, ground=washboard_field(amplitude_m, wavelength),
                          command=(f_hz * wavelength, 0.0), pose=(-200.0, 0.0, 0.0))
    z = imu[600:, 2] - imu[600:, 2].mean()
    freqs, psd = welch(z, fs=120.0, nperseg=len(z))
    i = int(np.argmin(np.abs(freqs - f_hz)))
    power = psd[i - 2:i + 3].sum() * (freqs[1] - freqs[0])
    return math.sqrt(2.0 * power) / amplitude_m


@pytest.mark.parametrize('name', ['polaris', 'maxxum'])
def test_the_body_mode_lies_between_1_and_3_hz(name):
    freqs = np.arange(0.6, 4.01, 0.2)
    response = [heave_response(name, f) for f in freqs]
    assert 1.0 <= freqs[int(np.argmax(response))] <= 3.0


def test_the_polaris_wheel_hop_is_where_the_model_puts_it():
    p = ph.params_row(load_vehicle('polaris'), ride=True)
    hop = ride.hop_frequency_hz(p, 0)        # sqrt((k_s + k_t) / m_u) / 2 pi
    assert 8.0 < hop < 12.0
    freqs = np.arange(5.0, 14.01, 0.5)
    response = np.array([heave_response('polaris', f) for f in freqs])
    peak = freqs[int(np.argmax(response))]
    assert peak == pytest.approx(hop, rel=0.1)
    assert response.max() > 1.4 * response[0] and response.max() > 1.4 * response[-1]


# --------------------------------------------------------------------------- on the ACRE terrain

# Whole-body vibration of tractors in field work, and of utility vehicles on farm
# tracks, measured to ISO 2631-1 at the seat: about 0.5-2 m/s^2 r.m.s. in the
# dominant (vertical) axis (Scarlett, Price & Stayner 2007, J. Terramechanics 44;
# HSE Research Report 321, 2005; Deboli, Calvo & Preti 2012, J. Agric. Eng. 43).
# The sensors here sit on the chassis, low and near the centre of mass, not at a
# seat 1-2 m above the roll and pitch axes, so their horizontal axes read less
# than the vertical one.
FIELD_RMS_MPS2 = (0.5, 2.0)


@functools.lru_cache(maxsize=2)
def field_run(name, seconds=180.0):
    """The noise-free ``name`` on its packaged route over the ACRE terrain with
    every vibration on: (IMU samples, truth states, the block of GNSS antenna
    positions with their steps, the vehicle)."""
    from acres_sim.config.terrain import load_terrain

    config = load_config(rig=name, overrides={'noise': False, 'vibration.engine': True,
                                              'vibration.parked_jitter': True})
    vehicle = build_vehicle(config, name, route=vehicle_route(name))
    sim = rig_simulation([vehicle], int(seconds * PHYSICS_HZ),
                         ground=load_terrain('acre', config['seed']).field)
    imu, states, gnss_k, antenna = [], [], [], []
    while sim.step <= sim.steps:
        block = sim.advance(1200)[0]
        imu.append(block.imu)
        states.append(block.states)
        gnss_k.append(block.gnss_k)
        antenna.append(block.gnss_antenna)
    return (np.concatenate(imu), np.concatenate(states), np.concatenate(gnss_k),
            np.concatenate(antenna), vehicle)


@pytest.fixture(scope='module', params=['polaris', 'maxxum'])
def on_the_field(request):
    return request.param, field_run(request.param)


def test_field_vibration_is_in_the_measured_range(on_the_field):
    from scipy.signal import butter, sosfiltfilt

    name, (imu, states, *_rest) = on_the_field
    # ISO 2631-1's band (0.4-80 Hz) as far as 120 Hz allows; while the vehicle moves
    band = butter(4, [0.5, 55.0], btype='band', fs=PHYSICS_HZ, output='sos')
    f = sosfiltfilt(band, imu[:, :3], axis=0)
    moving = np.linalg.norm(states[2:2 + len(imu), T_V:T_V + 3], axis=1) > 1.0
    rms = np.sqrt((f[moving] ** 2).mean(axis=0))
    low, high = FIELD_RMS_MPS2
    assert low <= rms[2] <= high, rms
    assert np.all((0.05 < rms[:2]) & (rms[:2] < rms[2])), rms


def test_a_field_tilts_the_body_by_degrees(on_the_field):
    _name, (_imu, states, *_rest) = on_the_field
    moving = np.linalg.norm(states[:, T_V:T_V + 3], axis=1) > 1.0
    roll, pitch = roll_pitch_deg(states[moving, T_Q:T_Q + 4])
    assert 1.0 <= np.abs(roll).max() <= 6.0
    assert 1.0 <= np.abs(pitch).max() <= 6.0


def test_the_antenna_leans_with_the_mast(on_the_field):
    """The receiver's true antenna lies mast height x tilt off the point above
    the chassis origin (the level body's antenna)."""
    _name, (_imu, states, gnss_k, antenna, vehicle) = on_the_field
    arm = vehicle.arms['gnss']
    lean, expected = [], []
    for k, a in zip(gnss_k, antenna):
        R = matrix_from_quat(states[k, T_Q:T_Q + 4])
        yaw = math.atan2(R[1, 0], R[0, 0])
        level = np.array([[math.cos(yaw), -math.sin(yaw), 0.0],
                          [math.sin(yaw), math.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
        lean.append(np.hypot(*(a - states[k, T_P:T_P + 3] - level @ arm)[:2]))
        tilt = math.acos(min(R[2, 2], 1.0))
        expected.append(arm[2] * math.sin(tilt))
    lean, expected = np.array(lean), np.array(expected)
    assert lean.max() > 0.03                        # over 3 cm on a 2 m mast
    np.testing.assert_allclose(lean, expected, rtol=0.1, atol=0.002)


def test_the_engine_harmonic_shows_on_the_field_too():
    # the Maxxum's six at its work speed (the Polaris twin's harmonic is near 40 Hz,
    # where the two-sample mean passes half of it: tested on level ground above)
    imu, *_rest = field_run('maxxum')
    p = ph.params_row(load_vehicle('maxxum'))
    expected = abs(alias_hz(engine_hz(p, 3.0)))       # its field speed
    freqs, psd = welch(imu[1200:, 2] - imu[1200:, 2].mean(), fs=PHYSICS_HZ, nperseg=1024)
    near = np.abs(freqs - expected) < 0.5
    around = (np.abs(freqs - expected) > 2.0) & (np.abs(freqs - expected) < 5.0)
    assert psd[near].max() > 100.0 * np.median(psd[around])     # without the engine: ~4


def test_the_ride_shakes_more_with_speed_and_roughness():
    from acres_sim.core.roughness import class_scale, roughness_tile

    tile = roughness_tile(42)

    def rms(cls, speed):
        field = plane_field()
        field = field._replace(roughness_scale=np.full_like(field.heights_m, class_scale(cls)),
                               tile_m=tile)
        imu, _states, _ = run('polaris', 40.0, ground=field, command=(speed, 0.0),
                              pose=(-150.0, 0.0, 0.1))
        f = imu[600:, 2] - imu[600:, 2].mean()
        return math.sqrt((f ** 2).mean())

    c4, c8, d4 = rms('C', 4.0), rms('C', 8.0), rms('D', 4.0)
    # twice the class amplitude (D over C) is twice the response of a linear ride
    assert d4 == pytest.approx(2.0 * c4, rel=0.1)
    # faster: more of the spectrum's energy in the body's band
    assert c8 > 1.4 * c4
