"""The sensor models and the site of a resolved configuration, one builder
each: the only place the pipeline turns configuration into core models.

(A shim over the models' ``from_config`` for now; the change that takes
configuration out of ``core/`` puts the real builders here, same names.)
"""

from acres_sim.core.geo import SiteGeoreference
from acres_sim.core.gnss.receiver import GnssReceiver
from acres_sim.core.imu import ImuModel
from acres_sim.core.ins import InsModel

__all__ = ['gnss_receiver', 'imu_model', 'ins_model', 'site_georeference']


def site_georeference(config):
    """The site's georeference (tile origin, datums, the frames' epoch)."""
    return SiteGeoreference.from_config(config)


def gnss_receiver(config, scene, site, agent_index):
    """The GNSS receiver of vehicle ``agent_index`` in ``scene`` at ``site``."""
    return GnssReceiver.from_config(config, scene=scene, site=site, agent_index=agent_index)


def imu_model(config, lever_arm_chassis, agent_index):
    """The IMU at ``lever_arm_chassis`` (from the chassis origin) of vehicle ``agent_index``."""
    return ImuModel.from_config(config, lever_arm_chassis, agent_index=agent_index)


def ins_model(config, lever_arm_chassis, agent_index, site):
    """The INS at ``lever_arm_chassis`` of vehicle ``agent_index``, reporting at ``site``."""
    return InsModel.from_config(config, lever_arm_chassis, agent_index=agent_index, site=site)
