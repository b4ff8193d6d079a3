"""Parameter records for the core models, built from a resolved Config.

The core never reads key names; this module maps keys to the plain records
(NamedTuples of floats) that the numba kernels take.
"""

import math

from acres_sim.config.validate import parse_utc
from acres_sim.core.geo.helmert import HelmertParams
from acres_sim.core.geo.site import SiteParams

__all__ = ['helmert_params', 'site_georeference_args']

_HELMERT = 'gnss.datum.helmert_itrf2014_to_nad83_2011'


def helmert_params(config) -> HelmertParams:
    """The 14 Helmert parameters and the reference epoch, in the config's units."""
    return HelmertParams(
        *config[f'{_HELMERT}.t_m'], *config[f'{_HELMERT}.r_arcsec'], config[f'{_HELMERT}.s_ppm'],
        *config[f'{_HELMERT}.dt_m_per_yr'], *config[f'{_HELMERT}.dr_arcsec_per_yr'],
        config[f'{_HELMERT}.ds_ppm_per_yr'], config[f'{_HELMERT}.reference_epoch'])


def site_georeference_args(config):
    """(SiteParams, start time as an aware UTC datetime) of the tile."""
    shift_lat_deg, shift_lon_deg = config['gnss.datum.harn_to_nad83_2011_shift_deg']
    params = SiteParams(
        *config['site.origin_source_ft'],
        math.radians(shift_lat_deg), math.radians(shift_lon_deg),
        config['gnss.datum.geoid.n0_m'], config['gnss.datum.geoid.dn_de'],
        config['gnss.datum.geoid.dn_dn'], helmert_params(config))
    return params, parse_utc(config['gnss.datum.start_utc'])
