"""A vehicle's sensor models built from a resolved configuration.

The core models take plain parameter records and noise streams; the
:mod:`acres_sim.config` modules turn keys into those records.  These small
functions join the two, so that the recorder, the nodes, the tests and the
benchmarks build a model the same way.  ``agent_index`` is the vehicle's
index k of the seed offsets (None: the config's ``agent.index``); a lever arm
is already measured from the chassis origin (body FLU, m:
:func:`acres_sim.topics.lever_arm` converts a configured mount).
"""

from acres_sim.config.records import (gnss_heading_settings, gnss_settings,
                                      site_georeference_args)
from acres_sim.config.validate import ConfigError
from acres_sim.config.sensor_records import (barometer_params, imu_params, imu_stream,
                                             ins_params, ins_stream, magnetometer_params,
                                             radar_params, sensor_stream, wheel_odometry_params)
from acres_sim.core.barometer import Barometer
from acres_sim.core.geo.site import SiteGeoreference
from acres_sim.core.gnss.heading import GnssHeading
from acres_sim.core.gnss.receiver import GnssReceiver
from acres_sim.core.imu import ImuModel
from acres_sim.core.ins import InsModel
from acres_sim.core.magnetometer import Magnetometer
from acres_sim.core.rng import GNSS_HEADING
from acres_sim.core.radar import RadarSpeed
from acres_sim.core.wheel_odometry import WheelOdometry
from acres_sim.pipeline.magnetic_field import OutsideLifeSpan, world_field

__all__ = ['barometer', 'gnss_heading', 'gnss_receiver', 'imu_model', 'ins_model',
           'magnetometer', 'radar', 'site_georeference', 'wheel_odometry']


def site_georeference(config) -> SiteGeoreference:
    """The tile's georeference (site origin, datum shift, geoid, Helmert, start time)."""
    return SiteGeoreference(*site_georeference_args(config))


def gnss_receiver(config, scene, site, agent_index) -> GnssReceiver:
    """The GNSS receiver in ``scene`` (a :class:`acres_sim.core.scene.Scene`)
    on ``site`` (a :class:`SiteGeoreference`)."""
    return GnssReceiver(gnss_settings(config, agent_index), scene, site)


def gnss_heading(config, agent_index=None) -> GnssHeading:
    """The receiver's dual-antenna heading, on its own noise stream."""
    params, seed = gnss_heading_settings(config, agent_index)
    return GnssHeading(params, seed, GNSS_HEADING.sequence)


def imu_model(config, lever_arm_chassis, agent_index) -> ImuModel:
    """The IMU at ``lever_arm_chassis``, on its own noise stream."""
    return ImuModel(imu_params(config, lever_arm_chassis), imu_stream(config, agent_index))


def ins_model(config, lever_arm_chassis, agent_index, site) -> InsModel:
    """The INS reporting the point ``lever_arm_chassis``, on ``site``."""
    return InsModel(ins_params(config, lever_arm_chassis), ins_stream(config, agent_index), site)


def barometer(config, lever_arm_chassis, agent_index) -> Barometer:
    """The barometer at ``lever_arm_chassis``, on its own noise stream."""
    return Barometer(barometer_params(config, lever_arm_chassis),
                     sensor_stream(config, 'barometer', agent_index))


def magnetometer(config, lever_arm_chassis, agent_index, site) -> Magnetometer:
    """The magnetometer at ``lever_arm_chassis``, in the reference field of
    mag.field_model on ``site`` at its start time, on its own noise stream.  A
    start time the World Magnetic Model does not cover is a ConfigError."""
    model = config['mag.field_model']
    try:
        field = world_field(model, site)
    except OutsideLifeSpan as err:
        raise ConfigError(
            f"gnss.datum.start_utc = {config['gnss.datum.start_utc']!r} "
            f"({config.sources['gnss.datum.start_utc']}) is outside the life span of "
            f"mag.field_model = {model!r}, {err.first:g} to {err.last:g}: set "
            "mag.field_model: dipole or mag.enabled: false") from None
    return Magnetometer(magnetometer_params(config, lever_arm_chassis, field),
                        sensor_stream(config, 'magnetometer', agent_index))


def wheel_odometry(config, vehicle, agent_index) -> WheelOdometry:
    """The wheel odometry of ``vehicle`` (VehicleParams), on its own noise stream."""
    return WheelOdometry(wheel_odometry_params(config, vehicle),
                         sensor_stream(config, 'wheel_odometry', agent_index))


def radar(config, vehicle, agent_index) -> RadarSpeed:
    """The radar ground-speed sensor of ``vehicle`` (VehicleParams), on its own stream."""
    return RadarSpeed(radar_params(config, vehicle), sensor_stream(config, 'radar', agent_index))
