"""Parameter records for the core models, built from a resolved Config.

The core never reads key names; this module maps keys to the plain records
(NamedTuples of floats) that the numba kernels take.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.config.validate import parse_utc
from acres_sim.core.geo.helmert import HelmertParams
from acres_sim.core.geo.site import SiteParams
from acres_sim.core.gnss.fix_state import RTK_FIXED, RTK_FLOAT
from acres_sim.core.gnss.heading import heading_params
from acres_sim.core.gnss.receiver import OUTPUT_FRAMES
from acres_sim.core.ins import FIX_FRAMES
from acres_sim.core.rng import GNSS_HEADING, stream_seed

__all__ = ['OutputFrames', 'error_params', 'gnss_heading_settings', 'gnss_settings',
           'helmert_params', 'output_frames', 'rtk_params', 'site_georeference_args']

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


def rtk_params(config):
    """The fix-state machine's parameters (spec: Fix State Machine)."""
    from acres_sim.core.gnss.fix_state import RtkParams

    def rtk(name):
        return config[f'gnss.rtk.{name}']

    return RtkParams(
        cold_start=config['gnss.start'] == 'cold', cold_ttff_s=config['gnss.cold_ttff_s'],
        rtk_max_age_s=config['gnss.corrections.rtk_max_age_s'],
        dgps_max_age_s=config['gnss.corrections.dgps_max_age_s'],
        ttf_median_s=rtk('ttf_median_s'), ttf_log_sigma=rtk('ttf_log_sigma'),
        ttf_multipath_gain=rtk('ttf_multipath_gain'), reacquire_factor=rtk('reacquire_factor'),
        reacquire_window_s=rtk('reacquire_window_s'),
        min_clear_satellites=rtk('min_clear_satellites'),
        float_min_satellites=rtk('float_min_satellites'), max_pdop=rtk('max_pdop'),
        cycle_slip_rate_per_s=rtk('cycle_slip_rate_per_s'))


def error_params(config):
    """The error model's parameters (spec: Error Model); no_fix uses single's row."""
    from acres_sim.core.gnss.errors import STATE_FIELDS, ErrorParams
    from acres_sim.core.gnss.fix_state import STATE_NAMES

    def row(state):
        return [config[f'gnss.states.{state}.{field}'] for field in STATE_FIELDS]

    table = np.array([row('single' if name == 'no_fix' else name) for name in STATE_NAMES])
    return ErrorParams(
        states=table, multipath_tau_s=config['gnss.multipath_tau_s'],
        multipath_vertical_ratio=config['gnss.multipath_vertical_ratio'],
        baseline_km=config['gnss.corrections.baseline_km'],
        ppm_h=config['gnss.corrections.ppm_h'], ppm_v=config['gnss.corrections.ppm_v'],
        noise=config['noise'])


def gnss_settings(config, agent_index=None):
    """The receiver's settings; ``agent_index`` defaults to the config's agent.index."""
    from acres_sim.core.gnss.corrections import outage_array
    from acres_sim.core.gnss.receiver import GnssSettings
    from acres_sim.core.gnss.sky import make_sky_params, system_mask
    from acres_sim.core.rng import stream_seed

    agent = config['agent.index'] if agent_index is None else agent_index
    offset_all = config['agent.offset_all_streams']
    return GnssSettings(
        sky=make_sky_params(config['gnss.elevation_mask_deg'],
                            config['gnss.obstruction.near_margin_m'],
                            config['gnss.obstruction.foliage_block_path_m'],
                            config['gnss.obstruction.reflector_range_m']),
        system_on=system_mask(*(config[f'gnss.constellations.{name}']
                                for name in ('gps', 'galileo', 'glonass'))),
        rtk=rtk_params(config), errors=error_params(config),
        correction_interval_s=config['gnss.corrections.interval_s'],
        correction_latency_s=config['gnss.corrections.latency_s'],
        outages=outage_array(config['gnss.corrections.outages_s']),
        output_frame=config['gnss.datum.output_frame'],
        georeferenced=config['site.enabled'],
        error_seed=stream_seed(config['seed'], 'gnss_errors', agent, offset_all),
        constellation_seed=stream_seed(config['seed'], 'gnss_constellation', agent, offset_all))


def gnss_heading_settings(config, agent_index=None):
    """(HeadingParams, stream seed) of the receiver's dual-antenna heading: the
    baseline from ``gnss.antenna_flu_m`` to ``gnss.heading.secondary_antenna_flu_m``
    (both from ``mount_frame``, so their difference is the body baseline), the
    per-state relative sigmas, and the seed of its own stream, GNSS_HEADING,
    offset per agent as the GNSS-error stream is."""
    agent = config['agent.index'] if agent_index is None else agent_index
    primary = config['gnss.antenna_flu_m']
    secondary = config['gnss.heading.secondary_antenna_flu_m']
    sigmas = {code: (config[f'gnss.heading.{name}.sigma_rel_h_m'],
                     config[f'gnss.heading.{name}.sigma_rel_v_m'])
              for code, name in ((RTK_FIXED, 'rtk_fixed'), (RTK_FLOAT, 'rtk_float'))}
    params = heading_params([s - p for s, p in zip(secondary, primary)], sigmas, config['noise'])
    return params, stream_seed(config['seed'], GNSS_HEADING, agent,
                               config['agent.offset_all_streams'])


class OutputFrames(NamedTuple):
    """The datums of a vehicle's outputs, as the site names its frames."""

    ins_fix: str           # the INS's fix and UTM odometry (ins.frame)
    gnss_fix: str          # the GNSS receiver's fix (gnss.datum.output_frame)
    utm_zone: int          # the zone of the INS's UTM odometry


def output_frames(config) -> OutputFrames:
    """In which datum each output of the vehicle of ``config`` is given."""
    return OutputFrames(FIX_FRAMES[config['ins.frame']],
                        OUTPUT_FRAMES[config['gnss.datum.output_frame']],
                        int(config['ins.utm_zone']))
