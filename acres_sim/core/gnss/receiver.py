"""The GNSS receiver model: one call per epoch turns the true antenna position
into the receiver's output row (spec: GNSS Receiver).

Per epoch, in order: lines of sight of the 78 satellites, the sky view against
the scene (classes, counts, DOPs, reflector and multipath index), the
correction age, the epoch's 11 random values, the fix-state machine, the error
model, then the row with the datum outputs and the GGA sentence.  Everything
numerical runs in numba kernels; this module wires them and builds the row.

The model is deterministic given its two streams: the GNSS-error stream
(11 values every epoch, in every state) and the constellation stream (drawn
once, shared by all vehicles).  Rows are produced at the sample time; the
scheduler (:mod:`acres_sim.core.schedule`) adds the latency.
"""

import datetime
import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.geo.site import (FRAMES, NAD83_2011, NAD83_HARN, WGS84_G2139,
                                     enu_to_geodetic_rad, geoid_undulation)
from acres_sim.core.geo.state_plane import US_SURVEY_FOOT_M
from acres_sim.core.gnss.constellation import (N_SATELLITES, build_constellation,
                                               satellite_los_enu, site_frame)
from acres_sim.core.gnss.corrections import correction_age
from acres_sim.core.gnss.errors import (G_T, UNIFORM, VALUES_PER_EPOCH, ErrorParams,
                                        draw_epoch_values, error_epoch)
from acres_sim.core.gnss.fix_state import (CONVERGE, GGA_QUALITY, LOCKED, NO_FIX, STATE_NAMES,
                                           T_LOCK, TIME_TO_FIX, RtkParams, fix_state_step,
                                           initial_fix_state)
from acres_sim.core.gnss.nmea import gga_sentence
from acres_sim.core.gnss.sky import (SKY_HDOP, SKY_HDOP_ALL, SKY_MULTIPATH, SKY_N_ABOVE_MASK,
                                     SKY_N_BLOCKED, SKY_N_CLEAR, SKY_N_FOLIAGE, SKY_N_NEAR,
                                     SKY_N_USED, SKY_PDOP, SKY_REFLECTOR, SKY_SIZE, SKY_VDOP,
                                     SKY_VDOP_ALL, SkyParams, sky_epoch)
from acres_sim.core.rng import STREAMS, Pcg32

__all__ = ['GnssSettings', 'GnssReceiver', 'SOLUTION', 'OUTPUT_FRAMES']

# Human-readable solution of each fix state (the row's "solution" key).
SOLUTION = {'no_fix': 'no fix', 'single': 'single point', 'dgps': 'differential',
            'rtk_float': 'RTK float', 'rtk_fixed': 'RTK fixed'}
# gnss.datum.output_frame -> the site's frame: the receiver's "nad83" is HARN
# latitude/longitude with the NAD83(2011) height (spec: Georeference Caveats).
OUTPUT_FRAMES = {'wgs84_g2139': 'wgs84_g2139', 'nad83': 'nad83_harn'}
# Prefixes of the per-frame geodetic keys of a row.
FRAME_PREFIXES = (('wgs84_', WGS84_G2139), ('nad83_harn_', NAD83_HARN),
                  ('nad83_2011_', NAD83_2011))


class GnssSettings(NamedTuple):
    """Everything the receiver needs, from :func:`acres_sim.config.records.gnss_settings`."""

    sky: SkyParams
    system_on: np.ndarray          # bool[3]: gps, galileo, glonass
    rtk: RtkParams
    errors: ErrorParams
    correction_interval_s: float
    correction_latency_s: float
    outages: np.ndarray            # (k, 2) [start, end) in seconds
    output_frame: str              # 'wgs84_g2139' or 'nad83'
    georeferenced: bool            # False: no geodetic keys and no GGA sentence
    error_seed: int                # GNSS-error stream seed (agent offset applied)
    constellation_seed: int        # constellation stream seed (never offset)


def _none_if_nan(x):
    return None if math.isnan(x) else float(x)


class GnssReceiver:
    """One vehicle's receiver.  ``epoch(t, antenna_enu)`` -> row (a dict)."""

    def __init__(self, settings: GnssSettings, scene, site):
        self.settings = settings
        self.scene = scene
        self.site = site
        self.constellation = build_constellation(
            Pcg32(settings.constellation_seed, STREAMS['gnss_constellation'].sequence))
        self.site_frame = site_frame(site)
        self._output_code = FRAMES[OUTPUT_FRAMES[settings.output_frame]]
        self._los = np.zeros((N_SATELLITES, 3))
        self._classes = np.zeros(N_SATELLITES, dtype=np.int64)
        self._sky = np.zeros(SKY_SIZE)
        self._values = np.zeros(VALUES_PER_EPOCH)
        self._sigmas = [np.zeros(3) for _ in range(3)]
        self._error = np.zeros(3)
        self.reset()

    @classmethod
    def from_config(cls, config, scene=None, site=None, agent_index=None):
        """A receiver for a resolved Config (packaged ACRE scene and site by default)."""
        from acres_sim.config.records import gnss_settings
        from acres_sim.config.scene import default_scene
        from acres_sim.core.geo import SiteGeoreference
        return cls(gnss_settings(config, agent_index), scene or default_scene(),
                   site or SiteGeoreference.from_config(config))

    def reset(self):
        """Back to t = 0: re-seed the error stream and restart every state."""
        self.rng = Pcg32(self.settings.error_seed, STREAMS['gnss_errors'].sequence)
        self.fix_state = initial_fix_state(self.settings.rtk.cold_start)
        self.u = np.zeros(3)
        self.z = np.zeros(3)
        self.last_t = None

    def epoch(self, t, antenna_enu):
        """The receiver's row at episode time ``t`` [s] for the true antenna
        position ``antenna_enu`` (grid ENU, m).  ``t`` must increase from epoch
        to epoch (ValueError otherwise); after a gap or a jump back, reset()."""
        s = self.settings
        t = float(t)
        if self.last_t is not None and not t > self.last_t:
            raise ValueError(f'GNSS epoch at t = {t!r} s after one at {self.last_t!r} s: '
                             'time must increase (call reset() to start again)')
        e_a, n_a, u_a = (float(v) for v in antenna_enu)
        satellite_los_enu(t, self.constellation, self.site_frame, self._los)
        sky_epoch(self._los, self.constellation.system, s.system_on, e_a, n_a, u_a,
                  self.scene.boxes, self.scene.cylinders, self.scene.spheres, s.sky,
                  self._classes, self._sky)
        sky = self._sky
        age = correction_age(t, s.correction_interval_s, s.correction_latency_s, s.outages,
                             s.rtk.cold_start)
        draw_epoch_values(self.rng.state, self._values)
        first = self.last_t is None
        dt = 0.1 if first else t - self.last_t
        self.last_t = t
        fix = fix_state_step(self.fix_state, s.rtk, t, dt, int(sky[SKY_N_USED]),
                             int(sky[SKY_N_CLEAR]), sky[SKY_PDOP], age, sky[SKY_MULTIPATH],
                             self._values[UNIFORM], self._values[G_T])
        tau, k_h, k_v, dt = error_epoch(
            s.errors, fix, t, dt, first, self.fix_state[T_LOCK], sky[SKY_HDOP], sky[SKY_VDOP],
            sky[SKY_HDOP_ALL], sky[SKY_VDOP_ALL], sky[SKY_MULTIPATH], self._values,
            self.u, self.z, *self._sigmas, self._error)
        return self._row(t, (e_a, n_a, u_a), fix, age, tau, k_h, k_v, dt)

    def _row(self, t, antenna, fix, age, tau, k_h, k_v, dt):
        s = self.settings
        sky = self._sky
        sigma_gm, sigma_w, sigma_mp = (list(map(float, v)) for v in self._sigmas)
        variance = [a * a + b * b + c * c for a, b, c in zip(sigma_gm, sigma_w, sigma_mp)]
        locked = self.fix_state[LOCKED] != 0.0
        name = STATE_NAMES[fix]
        row = {
            'fix_type': name, 'gga_quality': GGA_QUALITY[fix], 'solution': SOLUTION[name],
            'satellites_used': int(sky[SKY_N_USED]), 'satellites_clear': int(sky[SKY_N_CLEAR]),
            'satellites_near_obstruction': int(sky[SKY_N_NEAR]),
            'satellites_foliage': int(sky[SKY_N_FOLIAGE]),
            'satellites_blocked': int(sky[SKY_N_BLOCKED]),
            'satellites_above_mask': int(sky[SKY_N_ABOVE_MASK]),
            'hdop': float(sky[SKY_HDOP]), 'vdop': float(sky[SKY_VDOP]),
            'pdop': float(sky[SKY_PDOP]), 'hdop_open_sky': float(sky[SKY_HDOP_ALL]),
            'vdop_open_sky': float(sky[SKY_VDOP_ALL]),
            'multipath_index': float(sky[SKY_MULTIPATH]),
            'reflector_index': float(sky[SKY_REFLECTOR]),
            'correction_age_s': _none_if_nan(age),
            'rtk_lock_age_s': float(t - self.fix_state[T_LOCK]) if locked else None,
            'rtk_converge_s': float(self.fix_state[CONVERGE]) if locked else None,
            'rtk_time_to_fix_s': float(self.fix_state[TIME_TO_FIX]) if locked else None,
            'model': {'sigma_gm_enu_m': sigma_gm, 'sigma_white_enu_m': sigma_w,
                      'sigma_multipath_enu_m': sigma_mp, 'tau_s': float(tau),
                      'multipath_tau_s': s.errors.multipath_tau_s, 'k_h': float(k_h),
                      'k_v': float(k_v), 'dt_s': float(dt)},
        }
        position = None if fix == NO_FIX else [a + float(e) for a, e in zip(antenna, self._error)]
        row['position_enu_m'] = position
        row['sigma_enu_m'] = None if position is None else [math.sqrt(v) for v in variance]
        row['covariance_enu_m2'] = None if position is None else variance
        row['position_std_m'] = None if position is None else math.sqrt(variance[0] + variance[1])
        if s.georeferenced:
            row.update(self._geodetic(t, position, fix, age))
        return row

    def _geodetic(self, t, position, fix, age):
        """The datum keys of the row and the GGA sentence (spec: Datum Chain, Output Row)."""
        keys = {}
        epoch_year = self.site.epoch(t)
        p = self.site.params
        if position is None:
            for name in ('latitude_deg', 'longitude_deg', 'ellipsoidal_height_m',
                         'altitude_navd88_m', 'geoid_undulation_nad83_m'):
                keys[name] = None
            for prefix, _code in FRAME_PREFIXES:
                for name in ('latitude_deg', 'longitude_deg', 'ellipsoidal_height_m'):
                    keys[prefix + name] = None
            lat = lon = altitude = separation = None
        else:
            e, n, u = position
            for prefix, code in FRAME_PREFIXES:
                phi, lam, h = enu_to_geodetic_rad(e, n, u, epoch_year, p, code)
                keys[prefix + 'latitude_deg'] = math.degrees(phi)
                keys[prefix + 'longitude_deg'] = math.degrees(lam)
                keys[prefix + 'ellipsoidal_height_m'] = float(h)
            prefix = {WGS84_G2139: 'wgs84_', NAD83_HARN: 'nad83_harn_'}[self._output_code]
            lat = keys['latitude_deg'] = keys[prefix + 'latitude_deg']
            lon = keys['longitude_deg'] = keys[prefix + 'longitude_deg']
            height = keys['ellipsoidal_height_m'] = keys[prefix + 'ellipsoidal_height_m']
            altitude = keys['altitude_navd88_m'] = US_SURVEY_FOOT_M * p.origin_u_ft + u
            keys['geoid_undulation_nad83_m'] = float(geoid_undulation(e, n, p))
            separation = height - altitude
        utc = self.site.start_utc + datetime.timedelta(seconds=t)
        # GGA has two digits of satellites and HDOP as xx.x: 99.99 ("none") prints 99.9
        keys['nmea_gga'] = gga_sentence(utc, lat, lon, GGA_QUALITY[fix],
                                        min(int(self._sky[SKY_N_USED]), 99),
                                        min(float(self._sky[SKY_HDOP]), 99.9), altitude,
                                        separation, _none_if_nan(age))
        return keys
