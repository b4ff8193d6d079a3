"""The GNSS receiver model: the true antenna position in, the receiver's output
row out, one epoch at a time (``epoch``) or many per call (``epoch_records``
in one kernel, then ``row`` per epoch) (spec: GNSS Receiver).

Per epoch, in order: lines of sight of the 78 satellites, the sky view against
the scene (classes, counts, DOPs, reflector and multipath index), the
correction age, the epoch's 11 random values, the fix-state machine, the error
model, then the row with the datum outputs and the GGA sentence.  Everything
numerical runs in one numba kernel (:func:`gnss_epochs`, which also puts the
position on the ellipsoid in every frame); this module wires it and builds the row.
The row ends with the truth of the antenna (:data:`TRUTH_KEYS`, acres_sim's,
not the spec's), so a receiver's output can be scored without lever-arm work.

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
from acres_sim.core.geo.epoch import decimal_year_kernel, year_table
from acres_sim.core.geo.state_plane import US_SURVEY_FOOT_M
from acres_sim.core.gnss.constellation import (N_SATELLITES, build_constellation,
                                               satellite_los_enu, site_frame)
from acres_sim.core.gnss.corrections import correction_age
from acres_sim.core.gnss.errors import (FIRST_EPOCH_DT_S, G_T, UNIFORM, VALUES_PER_EPOCH,
                                        ErrorParams, draw_epoch_values, error_epoch)
from acres_sim.core.events import (base_switched, correction_terms, deny_satellites,
                                   extra_reflector, fix_cap, glitch_offset, jamming_noise_factor,
                                   no_effects)
from acres_sim.core.event_clock import VIEW_SIZE, quiet_views
from acres_sim.core.gnss.fix_state import (CONVERGE, GGA_QUALITY, LOCKED, NO_FIX, RTK_FLOAT,
                                           STATE_NAMES, T_LOCK, TIME_TO_FIX, RtkParams,
                                           fix_state_step, initial_fix_state, lose_lock)
from acres_sim.core.gnss.nmea import gga_sentence
from acres_sim.core.gnss.sky import (SKY_HDOP, SKY_HDOP_ALL, SKY_MULTIPATH, SKY_N_ABOVE_MASK,
                                     SKY_N_BLOCKED, SKY_N_CLEAR, SKY_N_FOLIAGE, SKY_N_NEAR,
                                     SKY_N_USED, SKY_PDOP, SKY_REFLECTOR, SKY_SIZE, SKY_VDOP,
                                     SKY_VDOP_ALL, SkyParams, multipath_index, sky_epoch)
from acres_sim.core.jit import njit
from acres_sim.core.rng import STREAMS, Pcg32

__all__ = ['GnssSettings', 'GnssReceiver', 'SOLUTION', 'OUTPUT_FRAMES', 'RECORD_SIZE',
           'TRUTH_KEYS', 'gnss_epochs']

# Human-readable solution of each fix state (the row's "solution" key).
SOLUTION = {'no_fix': 'no fix', 'single': 'single point', 'dgps': 'differential',
            'rtk_float': 'RTK float', 'rtk_fixed': 'RTK fixed'}
# gnss.datum.output_frame -> the site's frame: the receiver's "nad83" is HARN
# latitude/longitude with the NAD83(2011) height (spec: Georeference Caveats).
OUTPUT_FRAMES = {'wgs84_g2139': 'wgs84_g2139', 'nad83': 'nad83_harn'}
# Prefixes of the per-frame geodetic keys of a row.
FRAME_PREFIXES = (('wgs84_', WGS84_G2139), ('nad83_harn_', NAD83_HARN),
                  ('nad83_2011_', NAD83_2011))
GEODETIC_FRAMES = tuple(code for _prefix, code in FRAME_PREFIXES)
# The last keys of a row: the true antenna at the sample time, in grid ENU (the
# frame of position_enu_m) and, with a georeference, in the output frame (that
# of latitude_deg, longitude_deg, ellipsoidal_height_m).  Every epoch has them,
# one without a fix too; a freeze keeps them fresh (pipeline.faults).
TRUTH_KEYS = ('true_antenna_enu_m', 'true_latitude_deg', 'true_longitude_deg',
              'true_ellipsoidal_height_m')


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


# Layout of an epoch's record (float64, index by index): what the row needs.
REC_FIX = 0            # fix state code (fix_state.STATE_NAMES)
REC_AGE = 1            # correction age [s], NaN without a correction
REC_TAU = 2            # tau of the Gauss-Markov error [s]
REC_K_H = 3            # k_H
REC_K_V = 4            # k_V
REC_DT = 5             # dt used by the error model [s]
REC_LOCKED = 6         # fix-state memory after the epoch: 1.0 while locked
REC_T_LOCK = 7         #   time of the lock [s]
REC_CONVERGE = 8       #   convergence time drawn at the lock [s]
REC_TIME_TO_FIX = 9    #   T_fix [s]
REC_SKY = 10           # 10:24  the sky view (sky.SKY_*)
REC_SIGMA_GM = REC_SKY + SKY_SIZE          # 3: sigma of the Gauss-Markov error, ENU [m]
REC_SIGMA_WHITE = REC_SIGMA_GM + 3         # 3: sigma of the white error
REC_SIGMA_MP = REC_SIGMA_WHITE + 3         # 3: sigma of the multipath error
REC_ERROR = REC_SIGMA_MP + 3               # 3: the error added to the antenna, ENU [m]
REC_GEODETIC = REC_ERROR + 3               # 9: phi, lambda [rad], h [m] of the position in
#   each frame of FRAME_PREFIXES (WGS84 (G2139), NAD83(HARN), NAD83(2011)); NaN at no fix
REC_TRUE_GEODETIC = REC_GEODETIC + 9       # 3: phi, lambda [rad], h [m] of the true antenna
#   in the output frame (every epoch, with a fix or without)
RECORD_SIZE = REC_TRUE_GEODETIC + 3


@njit(cache=True)
def gnss_epochs(times, antennas, last_t, constellation, site, system_on, boxes, cylinders,
                spheres, sky_params, correction_interval_s, correction_latency_s, outages,
                rtk, errors, rng_state, fix_state, u, z, los, classes, values, years,
                site_params, output_frame, effects, views, denied, records):
    """Consecutive epochs of one receiver, record by record (see the module
    docstring for the order).  ``last_t`` is the time of the epoch before the
    first one, or negative for none; the error stream, the fix-state memory
    and the error states u, z are updated in place.  ``years`` (a
    geo.epoch.YearTable) and ``site_params`` place the position on the
    ellipsoid at the epoch, the true antenna in the frame code ``output_frame``
    too.  ``effects`` (events.EventEffects) and ``views``
    (n, events, 3: each event's view at the epoch) are the fault events;
    ``denied`` room for their satellite mask."""
    events_on = effects.kind.shape[0] > 0
    for i in range(times.shape[0]):
        t = times[i]
        first = last_t < 0.0
        dt = FIRST_EPOCH_DT_S if first else t - last_t
        ev = views[i]
        out = records[i]
        sky = out[REC_SKY:REC_SKY + SKY_SIZE]
        satellite_los_enu(t, constellation, site, los)
        baseline, switched, latency, all_outages = math.nan, False, correction_latency_s, outages
        if events_on:         # the fault events (none: nothing is asked, nothing changes)
            baseline, switched = base_switched(effects, ev, t, last_t)
            deny_satellites(effects, ev, los, denied)
            latency, all_outages = correction_terms(effects, ev, t, correction_latency_s,
                                                    outages)
        last_t = t
        sky_epoch(los, constellation.system, system_on, antennas[i, 0], antennas[i, 1],
                  antennas[i, 2], boxes, cylinders, spheres, sky_params, denied, classes, sky)
        if events_on and extra_reflector(effects, ev) != 0.0:     # a multipath event
            sky[SKY_REFLECTOR] += extra_reflector(effects, ev)
            sky[SKY_MULTIPATH] = multipath_index(sky[SKY_N_NEAR], sky[SKY_N_FOLIAGE],
                                                 sky[SKY_N_USED], sky[SKY_REFLECTOR])
        age = correction_age(t, correction_interval_s, latency, all_outages, rtk.cold_start)
        draw_epoch_values(rng_state, values)
        if switched:
            lose_lock(fix_state, t)
        fix = fix_state_step(fix_state, rtk, t, dt, int(sky[SKY_N_USED]), int(sky[SKY_N_CLEAR]),
                             sky[SKY_PDOP], age, sky[SKY_MULTIPATH], values[UNIFORM], values[G_T])
        white = 1.0
        if events_on:
            fix = fix_cap(effects, ev, fix)
            white = jamming_noise_factor(effects, ev, los, classes)
        tau, k_h, k_v, dt_used = error_epoch(
            errors, fix, t, dt, first, fix_state[T_LOCK], sky[SKY_HDOP], sky[SKY_VDOP],
            sky[SKY_HDOP_ALL], sky[SKY_VDOP_ALL], sky[SKY_MULTIPATH], values, u, z,
            out[REC_SIGMA_GM:REC_SIGMA_GM + 3], out[REC_SIGMA_WHITE:REC_SIGMA_WHITE + 3],
            out[REC_SIGMA_MP:REC_SIGMA_MP + 3], out[REC_ERROR:REC_ERROR + 3],
            errors.baseline_km if math.isnan(baseline) else baseline, white)
        if events_on:
            glitch_offset(effects, ev, t, out[REC_ERROR:REC_ERROR + 3])
        out[REC_FIX], out[REC_AGE], out[REC_TAU] = fix, age, tau
        out[REC_K_H], out[REC_K_V], out[REC_DT] = k_h, k_v, dt_used
        # a lock is reported in RTK only (under a fix cap the machine keeps one behind it)
        out[REC_LOCKED] = fix_state[LOCKED] if fix >= RTK_FLOAT else 0.0
        out[REC_T_LOCK] = fix_state[T_LOCK]
        out[REC_CONVERGE], out[REC_TIME_TO_FIX] = fix_state[CONVERGE], fix_state[TIME_TO_FIX]
        epoch_year = decimal_year_kernel(t, years)
        phi, lam, height = enu_to_geodetic_rad(antennas[i, 0], antennas[i, 1], antennas[i, 2],
                                               epoch_year, site_params, output_frame)
        out[REC_TRUE_GEODETIC], out[REC_TRUE_GEODETIC + 1] = phi, lam
        out[REC_TRUE_GEODETIC + 2] = height
        if fix == NO_FIX:
            out[REC_GEODETIC:REC_GEODETIC + 9] = np.nan
            continue
        e = antennas[i, 0] + out[REC_ERROR]
        n = antennas[i, 1] + out[REC_ERROR + 1]
        h = antennas[i, 2] + out[REC_ERROR + 2]
        for j in range(3):
            phi, lam, height = enu_to_geodetic_rad(e, n, h, epoch_year, site_params,
                                                   GEODETIC_FRAMES[j])
            out[REC_GEODETIC + 3 * j], out[REC_GEODETIC + 3 * j + 1] = phi, lam
            out[REC_GEODETIC + 3 * j + 2] = height


def _none_if_nan(x):
    return None if math.isnan(x) else float(x)


class GnssReceiver:
    """One vehicle's receiver.  ``epoch(t, antenna_enu)`` -> row (a dict).

    ``scene`` is a :class:`acres_sim.core.scene.Scene` (the obstacles of the
    sky view), ``site`` a :class:`acres_sim.core.geo.SiteGeoreference`;
    ``effects`` the faults of the vehicle's events (events.EventEffects;
    None: none), whose views each epoch takes.
    """

    def __init__(self, settings: GnssSettings, scene, site, effects=None):
        self.settings = settings
        self.scene = scene
        self.site = site
        self.effects = no_effects() if effects is None else effects
        self.constellation = build_constellation(
            Pcg32(settings.constellation_seed, STREAMS['gnss_constellation'].sequence))
        self.site_frame = site_frame(site)
        self._output_code = FRAMES[OUTPUT_FRAMES[settings.output_frame]]
        self._los = np.zeros((N_SATELLITES, 3))
        self._classes = np.zeros(N_SATELLITES, dtype=np.int64)
        self._values = np.zeros(VALUES_PER_EPOCH)
        self._denied = np.zeros(N_SATELLITES, dtype=np.bool_)
        self._years = year_table(site.start_utc)
        self.reset()

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
        antenna = np.array([float(v) for v in antenna_enu]).reshape(1, 3)
        record = self.epoch_records(np.array([float(t)]), antenna)[0]
        return self.row(float(t), antenna[0], record)

    def epoch_records(self, times, antennas, views=None):
        """The numerical part of consecutive epochs at ``times`` [s] (n,) for
        the antenna positions ``antennas`` (n, 3): one record per epoch
        (:data:`RECORD_SIZE`, ``REC_*``), all epochs in one kernel call.  Turn
        a record into the row with :meth:`row`.  ``views``: the event views at
        the epochs (n, events, 3; None: no event active)."""
        s = self.settings
        times = np.ascontiguousarray(times, dtype=np.float64).reshape(-1)
        antennas = np.ascontiguousarray(antennas, dtype=np.float64).reshape(-1, 3)
        n_events = self.effects.kind.shape[0]
        if views is None:
            views = quiet_views(times.shape[0], n_events)
        views = np.ascontiguousarray(views, dtype=np.float64)
        if views.shape != (times.shape[0], n_events, VIEW_SIZE):
            raise ValueError(f'event views of shape {views.shape} for {times.shape[0]} epochs '
                             f'and {n_events} events')
        records = np.empty((times.shape[0], RECORD_SIZE))
        if times.shape[0] == 0:
            return records
        previous = self.last_t
        for t in times:
            t = float(t)
            if previous is not None and not t > previous:
                raise ValueError(f'GNSS epoch at t = {t!r} s after one at {previous!r} s: '
                                 'time must increase (call reset() to start again)')
            previous = t
        gnss_epochs(times, antennas, -1.0 if self.last_t is None else self.last_t,
                    self.constellation, self.site_frame, s.system_on, self.scene.boxes,
                    self.scene.cylinders, self.scene.spheres, s.sky, s.correction_interval_s,
                    s.correction_latency_s, s.outages, s.rtk, s.errors, self.rng.state,
                    self.fix_state, self.u, self.z, self._los, self._classes, self._values,
                    self._years, self.site.params, self._output_code, self.effects, views,
                    self._denied, records)
        self.last_t = float(times[-1])
        return records

    def row(self, t, antenna, record):
        """The output row of the epoch at ``t`` [s] with true antenna position
        ``antenna`` (3,) and its record from :meth:`epoch_records`."""
        s = self.settings
        r = record.tolist()
        sky = r[REC_SKY:REC_SKY + SKY_SIZE]
        fix = int(r[REC_FIX])
        age = r[REC_AGE]
        sigma_gm = r[REC_SIGMA_GM:REC_SIGMA_GM + 3]
        sigma_w = r[REC_SIGMA_WHITE:REC_SIGMA_WHITE + 3]
        sigma_mp = r[REC_SIGMA_MP:REC_SIGMA_MP + 3]
        variance = [a * a + b * b + c * c for a, b, c in zip(sigma_gm, sigma_w, sigma_mp)]
        locked = r[REC_LOCKED] != 0.0
        name = STATE_NAMES[fix]
        row = {
            'fix_type': name, 'gga_quality': GGA_QUALITY[fix], 'solution': SOLUTION[name],
            'satellites_used': int(sky[SKY_N_USED]), 'satellites_clear': int(sky[SKY_N_CLEAR]),
            'satellites_near_obstruction': int(sky[SKY_N_NEAR]),
            'satellites_foliage': int(sky[SKY_N_FOLIAGE]),
            'satellites_blocked': int(sky[SKY_N_BLOCKED]),
            'satellites_above_mask': int(sky[SKY_N_ABOVE_MASK]),
            'hdop': sky[SKY_HDOP], 'vdop': sky[SKY_VDOP],
            'pdop': sky[SKY_PDOP], 'hdop_open_sky': sky[SKY_HDOP_ALL],
            'vdop_open_sky': sky[SKY_VDOP_ALL],
            'multipath_index': sky[SKY_MULTIPATH],
            'reflector_index': sky[SKY_REFLECTOR],
            'correction_age_s': _none_if_nan(age),
            'rtk_lock_age_s': float(t - r[REC_T_LOCK]) if locked else None,
            'rtk_converge_s': r[REC_CONVERGE] if locked else None,
            'rtk_time_to_fix_s': r[REC_TIME_TO_FIX] if locked else None,
            'model': {'sigma_gm_enu_m': sigma_gm, 'sigma_white_enu_m': sigma_w,
                      'sigma_multipath_enu_m': sigma_mp, 'tau_s': r[REC_TAU],
                      'multipath_tau_s': s.errors.multipath_tau_s, 'k_h': r[REC_K_H],
                      'k_v': r[REC_K_V], 'dt_s': r[REC_DT]},
        }
        error = r[REC_ERROR:REC_ERROR + 3]
        position = None if fix == NO_FIX else [float(a) + e for a, e in zip(antenna, error)]
        row['position_enu_m'] = position
        row['sigma_enu_m'] = None if position is None else [math.sqrt(v) for v in variance]
        row['covariance_enu_m2'] = None if position is None else variance
        row['position_std_m'] = None if position is None else math.sqrt(variance[0] + variance[1])
        if s.georeferenced:
            row.update(self._geodetic(t, position, fix, age, sky,
                                      r[REC_GEODETIC:REC_GEODETIC + 9]))
        row['true_antenna_enu_m'] = [float(a) for a in antenna]
        if s.georeferenced:
            phi, lam, height = r[REC_TRUE_GEODETIC:REC_TRUE_GEODETIC + 3]
            row['true_latitude_deg'] = math.degrees(phi)
            row['true_longitude_deg'] = math.degrees(lam)
            row['true_ellipsoidal_height_m'] = height
        return row

    def _geodetic(self, t, position, fix, age, sky, geodetic):
        """The datum keys of the row and the GGA sentence (spec: Datum Chain, Output
        Row); ``geodetic``: the record's 9 values (phi, lambda, h per frame)."""
        keys = {}
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
            for j, (prefix, _code) in enumerate(FRAME_PREFIXES):
                phi, lam, h = geodetic[3 * j:3 * j + 3]
                keys[prefix + 'latitude_deg'] = math.degrees(phi)
                keys[prefix + 'longitude_deg'] = math.degrees(lam)
                keys[prefix + 'ellipsoidal_height_m'] = h
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
                                        min(int(sky[SKY_N_USED]), 99),
                                        min(float(sky[SKY_HDOP]), 99.9), altitude,
                                        separation, _none_if_nan(age))
        return keys
