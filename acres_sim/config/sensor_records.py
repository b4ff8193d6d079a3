"""Parameter records and noise streams of the IMU and the INS, and the
vibration switches of a vehicle, built from a resolved Config (spec:
Parameters, IMU and INS tables; Seeds and Determinism).

The core models never read key names; this module maps the imu.* and ins.*
keys to :class:`~acres_sim.core.imu.ImuParams` and
:class:`~acres_sim.core.ins.InsParams`.  The lever arms are passed in already
measured from the chassis origin (body FLU): converting a mount given in
base_footprint needs the vehicle's wheelbase and CoG height, which the caller
has (:func:`acres_sim.core.frames.lever_arm_from_chassis`).
"""

import numpy as np

from acres_sim.core.imu import ImuParams
from acres_sim.core.ins import InsParams
from acres_sim.core.rng import Pcg32, make_stream
from acres_sim.core.vibration import VibrationSwitches

__all__ = ['imu_params', 'imu_stream', 'ins_params', 'ins_stream', 'vibration_switches']


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
