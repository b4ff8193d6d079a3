"""Parameter records and noise streams of the IMU and the INS (spec:
Parameters, IMU and INS tables; Seeds and Determinism), of acres_sim's
further sensors (barometer, magnetometer, wheel odometry, radar), and the
vibration switches of a vehicle, built from a resolved Config.

The core models never read key names; this module maps the imu.* and ins.*
keys to :class:`~acres_sim.core.imu.ImuParams` and
:class:`~acres_sim.core.ins.InsParams`.  The lever arms are passed in already
measured from the chassis origin (body FLU): converting a mount given in
base_footprint needs the vehicle's wheelbase and CoG height, which the caller
has (:func:`acres_sim.core.frames.lever_arm_from_chassis`).
"""

import numpy as np

from acres_sim.core.barometer import BarometerParams
from acres_sim.core.geo.state_plane import US_SURVEY_FOOT_M
from acres_sim.core.imu import ImuParams
from acres_sim.core.ins import InsParams
from acres_sim.core.magnetometer import MagnetometerParams
from acres_sim.core.radar import RadarParams, default_radar_params
from acres_sim.core.wheel_odometry import WheelOdometryParams, default_wheel_odometry_params
from acres_sim.core.rng import Pcg32, make_stream
from acres_sim.core.vibration import VibrationSwitches

__all__ = ['barometer_params', 'imu_params', 'imu_stream', 'ins_params', 'ins_stream',
           'magnetometer_params', 'radar_params', 'sensor_stream', 'site_altitude_m',
           'vibration_switches', 'wheel_odometry_params']



def _lever(lever_arm_chassis) -> np.ndarray:
    r = np.array(lever_arm_chassis, dtype=np.float64).reshape(-1)
    if r.shape != (3,):
        raise ValueError(f'a lever arm has 3 components, got {lever_arm_chassis!r}')
    return r


def imu_params(config, lever_arm_chassis) -> ImuParams:
    """The IMU's parameters; ``lever_arm_chassis`` is the IMU point from the
    chassis origin (FLU, m), i.e. imu.position_flu_m after the mount conversion."""
    return ImuParams(
        hz=float(config['imu.hz']),
        accel_std_mps2=float(config['imu.accel_std_mps2']),
        gyro_std_radps=float(config['imu.gyro_std_radps']),
        accel_bias_mps2=float(config['imu.accel_bias_mps2']),
        gyro_bias_radps=float(config['imu.gyro_bias_radps']),
        lever_arm_m=_lever(lever_arm_chassis),
        noise=bool(config['noise']))


def ins_params(config, lever_arm_chassis) -> InsParams:
    """The INS's parameters; ``lever_arm_chassis`` is the INS point from the
    chassis origin (FLU, m), i.e. ins.position_flu_m after the mount conversion."""
    return InsParams(
        hz=float(config['ins.hz']),
        position_sigma_m=float(config['ins.position_sigma_m']),
        position_tau_s=float(config['ins.position_tau_s']),
        position_white_m=float(config['ins.position_white_m']),
        heading_sigma_deg=float(config['ins.heading_sigma_deg']),
        attitude_sigma_deg=float(config['ins.attitude_sigma_deg']),
        velocity_white_mps=float(config['ins.velocity_white_mps']),
        accel_white_mps2=float(config['ins.accel_white_mps2']),
        gyro_white_radps=float(config['ins.gyro_white_radps']),
        frame=str(config['ins.frame']),
        utm_zone=int(config['ins.utm_zone']),
        lever_arm_m=_lever(lever_arm_chassis),
        noise=bool(config['noise']))


def _agent(config, agent_index):
    return config['agent.index'] if agent_index is None else agent_index


def imu_stream(config, agent_index=None) -> Pcg32:
    """The IMU stream (seed + 1009, sequence 2; + 7919 k when
    agent.offset_all_streams); ``agent_index`` defaults to agent.index."""
    return make_stream(config['seed'], 'imu', _agent(config, agent_index),
                       config['agent.offset_all_streams'])


def ins_stream(config, agent_index=None) -> Pcg32:
    """The INS stream (seed + 5045 + 7919 k, sequence 6); ``agent_index``
    defaults to agent.index."""
    return make_stream(config['seed'], 'ins', _agent(config, agent_index),
                       config['agent.offset_all_streams'])


def vibration_switches(config) -> VibrationSwitches:
    """Which vibration sources act on the vehicle of ``config``: the keys
    vibration.engine, vibration.parked_jitter and vibration.roughness."""
    return VibrationSwitches(engine=bool(config['vibration.engine']),
                             parked_jitter=bool(config['vibration.parked_jitter']),
                             roughness=bool(config['vibration.roughness']))


def sensor_stream(config, stream, agent_index=None) -> Pcg32:
    """The noise stream ``stream`` (a name of core.rng's table, e.g. 'barometer')
    of the vehicle, shifted per agent as agent.offset_all_streams says."""
    return make_stream(config['seed'], stream, _agent(config, agent_index),
                       config['agent.offset_all_streams'])


def site_altitude_m(config) -> float:
    """The tile origin's height above sea level [m]: the NAVD88 height of
    site.origin_source_ft."""
    return float(config['site.origin_source_ft'][2]) * US_SURVEY_FOOT_M


def barometer_params(config, lever_arm_chassis) -> BarometerParams:
    """The barometer's parameters (baro.*); ``lever_arm_chassis``: its point."""
    return BarometerParams(
        hz=float(config['baro.hz']), noise=bool(config['noise']),
        sigma_pa=float(config['baro.noise_pa']),
        drift_sigma=float(config['baro.drift_sigma']),
        drift_tau_s=float(config['baro.drift_tau_s']),
        qnh_pa=float(config['baro.qnh_hpa']) * 100.0,
        site_altitude_m=site_altitude_m(config),
        lever_arm_m=_lever(lever_arm_chassis))


def magnetometer_params(config, lever_arm_chassis, field) -> MagnetometerParams:
    """The magnetometer's parameters (mag.*); ``field``: the reference field,
    (B_0, G, B_dot) in world axes (acres_sim.pipeline.magnetic_field)."""
    xx, yy, zz = config['mag.soft_iron_diag']
    xy, xz, yz = config['mag.soft_iron_offdiag']
    b0, gradient, rate = field
    return MagnetometerParams(
        hz=float(config['mag.hz']), noise=bool(config['noise']),
        sigma_t=float(config['mag.noise_t']),
        scale_factor=float(config['mag.scale_factor']),
        bias_t=np.array(config['mag.bias_t'], dtype=np.float64),
        hard_iron_t=np.array(config['mag.hard_iron_t'], dtype=np.float64),
        soft_iron=np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=np.float64),
        lever_arm_m=_lever(lever_arm_chassis),
        field_t=np.asarray(b0, dtype=np.float64).reshape(3),
        gradient_t_per_m=np.asarray(gradient, dtype=np.float64).reshape(3, 3),
        rate_t_per_s=np.asarray(rate, dtype=np.float64).reshape(3))


def wheel_odometry_params(config, vehicle) -> WheelOdometryParams:
    """The wheel odometry's parameters (wheel_odometry.*) on ``vehicle`` (its
    VehicleParams: geometry, mass, rolling resistance)."""
    return default_wheel_odometry_params(
        vehicle, str(config['wheel_odometry.surface']),
        hz=float(config['wheel_odometry.hz']), noise=bool(config['noise']),
        radius_error=float(config['wheel_odometry.radius_error']),
        track_error=float(config['wheel_odometry.track_error']),
        speed_noise_mps=float(config['wheel_odometry.speed_noise_mps']),
        wheel_variance_per_m=float(config['wheel_odometry.wheel_variance_per_m']))


def radar_params(config, vehicle) -> RadarParams:
    """The radar's parameters (radar.*) on ``vehicle`` (its geometry and CoM)."""
    return default_radar_params(
        vehicle, config['radar.mount_flu_m'],
        hz=float(config['radar.hz']), noise=bool(config['noise']),
        beam_angle_deg=float(config['radar.beam_angle_deg']),
        scale_error=float(config['radar.scale_error']),
        noise_floor_mps=float(config['radar.noise_floor_mps']),
        noise_fraction=float(config['radar.noise_fraction']),
        min_speed_mps=float(config['radar.min_speed_mps']))
