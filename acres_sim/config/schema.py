"""The one schema of every configuration key, and the one descriptor type.

Each key of the spec's "Parameters" section (common keys, ``gnss``, ``imu``,
``ins``) is described once here: its type, unit, default, allowed range or
choices and a one-line description.  The ROS parameter declarations, the
YAML/JSON validation, the CLI options and the parameter table in the docs are
all derived from this list, so nothing else in the package spells out a key's
limits.  :class:`Key` also describes the live nodes' own parameters
(:mod:`acres_sim.config.node_params`) and the fields of the vehicle, route,
scene and scenario files (a table in each of :mod:`acres_sim.config.vehicles`,
``routes``, ``scene`` and ``scenario``); :func:`acres_sim.config.validate.check`
checks a value against any of them.

Defaults are those of the original ``sensors.json`` and, for the ``ins`` block,
the "Code" column of the spec (the value without the block).  ``polaris`` holds
the value after the Polaris overlay where it differs (the spec's Polaris
column); ``config/sensors_polaris.yaml`` must agree with it (a test checks).

Keys marked ``spec=False`` are acres_sim's own additions (site, agents, noise,
vibration, the GNSS receiver's GST, GPSFix and dual-antenna heading);
their descriptions say so.
"""

from dataclasses import dataclass
from typing import Any, Optional

__all__ = ['Key', 'KEYS', 'KEY_NAMES', 'NON_BLANK', 'OUTAGES', 'STATES', 'SEED_MAX', 'key']

# ROS 2 integer parameters are int64.
SEED_MAX = 2**63 - 1

# 'str' is a choice (``choices``), a string matching ``pattern`` or, without
# either, any string; 'names' is a non-empty list of distinct strings.
KINDS = ('bool', 'int', 'float', 'str', 'utc', 'vec2', 'vec3', 'outages', 'names')

# The one list-of-pairs key: correction outages [start, end) in seconds.
OUTAGES = 'gnss.corrections.outages_s'

# The ``pattern`` of a string that must not be empty or only white space.
NON_BLANK = r'(?s)\s*\S.*'


@dataclass(frozen=True)
class Key:
    """One parameter: a configuration key, a node parameter or a file's field.

    ``low``/``high`` bound a number (or each component of a vector); with
    ``low_open`` the lower bound is exclusive (a value must be > low).
    ``choices`` lists the allowed strings; else ``pattern`` is a regular
    expression that the whole string must match, ``pattern_words`` says what
    it allows.  ``polaris`` and ``spec`` concern the sensor keys only (the
    Polaris overlay's value; from the spec or ours).
    """

    name: str
    kind: str
    default: Any
    description: str
    unit: str = ''
    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    choices: Optional[tuple] = None
    pattern: Optional[str] = None
    pattern_words: str = ''
    polaris: Any = None
    spec: bool = True

    def __post_init__(self):
        assert self.kind in KINDS, self.kind
        assert self.choices is None or self.kind == 'str', f'{self.name}: choices of a non-str'
        assert self.pattern is None or (self.kind == 'str' and self.pattern_words
                                        and not self.choices), f'{self.name}: a bad pattern'

    def allowed(self) -> str:
        """The allowed values in words, e.g. '1 to 120 Hz' or 'converged or cold'."""
        if self.kind == 'bool':
            return 'true or false'
        if self.choices:
            return ' or '.join(self.choices)
        if self.pattern is not None:
            return self.pattern_words
        if self.kind == 'str':
            return 'a string'
        if self.kind == 'names':
            return 'a list of distinct names'
        if self.kind == 'outages':
            return 'pairs [start, end) with 0 <= start < end <= 1e9 s, or "START:END" strings'
        if self.kind == 'utc':
            return ('an ISO 8601 time with a zone from 1970-01-01T00:00:00Z to 2035-12-31, '
                    'e.g. 2026-09-23T15:00:00Z')
        unit = f' {self.unit}' if self.unit else ''
        each = 'each ' if self.kind in ('vec2', 'vec3') else ''
        if self.low is not None and self.high is not None and self.low_open:
            return f'{each}> {_num(self.low)} and <= {_num(self.high)}{unit}'
        if self.low is not None and self.high is not None:
            return f'{each}{_num(self.low)} to {_num(self.high)}{unit}'
        if self.low is not None:
            return f'{each}{">" if self.low_open else ">="} {_num(self.low)}{unit}'
        if self.high is not None:
            return f'{each}<= {_num(self.high)}{unit}'
        return f'{each}any finite number{unit}'


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(x)


def _positive(name, default, unit, description, **kw):
    return Key(name, 'float', default, description, unit, low=0.0, low_open=True, **kw)


def _nonneg(name, default, unit, description, **kw):
    return Key(name, 'float', default, description, unit, low=0.0, **kw)


def _rate(name, default, description, **kw):
    return Key(name, 'float', default, description, 'Hz', low=1.0, high=120.0, **kw)


def _lever(name, default, description, **kw):
    return Key(name, 'vec3', default, description, 'm', low=-50.0, high=50.0, **kw)


# --- the fix-state table (spec: GNSS Receiver parameters, block gnss.states) ---

STATES = ('rtk_fixed', 'rtk_float', 'dgps', 'single')

_STATE_TABLE = {
    #  field               unit  positive  rtk_fixed rtk_float dgps  single   description
    'sigma_h_m':         ('m', False, (0.008, 0.10, 0.35, 1.0), 'horizontal standard deviation of the Gauss-Markov error'),
    'sigma_v_m':         ('m', False, (0.015, 0.20, 0.70, 2.0), 'vertical standard deviation of the Gauss-Markov error'),
    'initial_sigma_h_m': ('m', False, (0.0, 0.40, 0.0, 0.0), 'horizontal sigma at the start of a lock (float converges from it)'),
    'initial_sigma_v_m': ('m', False, (0.0, 0.80, 0.0, 0.0), 'vertical sigma at the start of a lock (float converges from it)'),
    'convergence_tau_s': ('s', True, (30.0, 30.0, 30.0, 30.0), 'time constant of the convergence from the initial sigmas'),
    'white_h_m':         ('m', False, (0.003, 0.02, 0.10, 0.30), 'horizontal white noise'),
    'white_v_m':         ('m', False, (0.006, 0.04, 0.20, 0.60), 'vertical white noise'),
    'tau_s':             ('s', True, (60.0, 30.0, 120.0, 300.0), 'correlation time of the Gauss-Markov error'),
    'multipath_h_m':     ('m', False, (0.015, 0.15, 0.50, 1.50), 'horizontal multipath error at multipath index 1'),
}


def _state_keys():
    keys = []
    for state_index, state in enumerate(STATES):
        for field, (unit, positive, values, text) in _STATE_TABLE.items():
            make = _positive if positive else _nonneg
            keys.append(make(f'gnss.states.{state}.{field}', values[state_index], unit,
                             f'{state}: {text}.'))
    return keys


_HELMERT = 'gnss.datum.helmert_itrf2014_to_nad83_2011'

# The surfaces of the wheel odometry's slip (core.wheel_odometry.SURFACES; a test checks).
WHEEL_SURFACES = ('concrete', 'firm_soil', 'tilled_soil', 'grass', 'sand')

KEYS = (
    # --- common keys ---
    Key('seed', 'int', 42, 'Seed of all noise streams.', low=0, high=SEED_MAX),
    Key('delay_s', 'float', 0.05, 'Modelled latency of the GNSS, IMU and INS rows.', 's',
        low=0.0, high=10.0),
    Key('mount_frame', 'str', 'chassis',
        'Origin of the antenna and IMU lever arms: the chassis origin or base_footprint '
        '(the INS point is always from base_footprint).',
        choices=('chassis', 'base_footprint'), polaris='base_footprint'),
    Key('noise', 'bool', True,
        'acres_sim: false sets every error, bias and noise to zero (the spec\'s no-noise '
        'option); the streams still draw their values.', spec=False),
    Key('agent.index', 'int', 0,
        'acres_sim: index k of this vehicle in a multi-agent run; its INS seed gets '
        '+7919*k.', low=0, high=999, spec=False),
    Key('agent.offset_all_streams', 'bool', True,
        'acres_sim: also offset the GNSS-error and IMU seeds by 7919*k, so vehicles do not '
        'share noise (false reproduces the game). The constellation is never offset.',
        spec=False),

    # --- site (the game's site.json; absent site = no geodetic output) ---
    Key('site.enabled', 'bool', True,
        'acres_sim: the tile is georeferenced; false drops the geodetic keys and the GGA '
        'sentence from GNSS rows, as without site.json.', spec=False),
    Key('site.origin_source_ft', 'vec3', [2977500.0, 1902500.0, 705.0],
        'acres_sim: survey-grid coordinates (EPSG:2968 easting, northing; NAVD88 height) '
        'of the tile origin, from site.json origin_source_ft.', 'US survey ft',
        low=-1e8, high=1e8, spec=False),

    # --- GNSS receiver ---
    Key('gnss.enabled', 'bool', True, 'The GNSS receiver is on.'),
    _rate('gnss.hz', 10.0, 'Epoch rate of the receiver.'),
    _lever('gnss.antenna_flu_m', [0.0, 0.0, 1.7], 'Lever arm of the antenna (body FLU).',
           polaris=[1.1, 0.0, 2.15]),
    _nonneg('gnss.std_m', 0.02, 'm', 'Unused (kept for sensors.json); the error model sets the noise.'),
    Key('gnss.start', 'str', 'converged', 'Start mode of the receiver.',
        choices=('converged', 'cold')),
    _nonneg('gnss.cold_ttff_s', 20.0, 's', 'Time to the first fix after a cold start.'),
    Key('gnss.elevation_mask_deg', 'float', 10.0, 'Elevation mask.', 'deg', low=0.0, high=45.0),
    Key('gnss.constellations.gps', 'bool', True, 'Use GPS (at least one system must be on).'),
    Key('gnss.constellations.galileo', 'bool', True, 'Use Galileo (at least one system must be on).'),
    Key('gnss.constellations.glonass', 'bool', True, 'Use GLONASS (at least one system must be on).'),
    _positive('gnss.multipath_tau_s', 8.0, 's', 'Correlation time of the multipath error.'),
    _nonneg('gnss.multipath_vertical_ratio', 1.5, '', 'Vertical over horizontal multipath error.'),
    *_state_keys(),
    _nonneg('gnss.rtk.ttf_median_s', 10.0, 's', 'Median time to fix.'),
    _nonneg('gnss.rtk.ttf_log_sigma', 0.5, '', 'Standard deviation of the log of the time to fix.'),
    _nonneg('gnss.rtk.ttf_multipath_gain', 2.0, '', 'Increase of the time to fix at multipath index 1.'),
    Key('gnss.rtk.reacquire_factor', 'float', 0.3, 'Time-to-fix factor after a recent loss.',
        low=0.0, high=1.0),
    _nonneg('gnss.rtk.reacquire_window_s', 10.0, 's', 'Time after a loss in which the factor applies.'),
    Key('gnss.rtk.min_clear_satellites', 'int', 6, 'Clear satellites that convergence needs.',
        low=4, high=78),
    Key('gnss.rtk.float_min_satellites', 'int', 5, 'Used satellites that an RTK solution needs.',
        low=4, high=78),
    _positive('gnss.rtk.max_pdop', 5.0, '', 'PDOP limit of the convergence.'),
    _nonneg('gnss.rtk.cycle_slip_rate_per_s', 0.3, '1/s', 'Cycle-slip rate at multipath index 1.'),
    _positive('gnss.corrections.interval_s', 1.0, 's', 'Interval of the correction messages.'),
    _nonneg('gnss.corrections.latency_s', 0.3, 's', 'Delay of a correction message.'),
    _nonneg('gnss.corrections.rtk_max_age_s', 10.0, 's', 'Largest correction age for RTK.'),
    _nonneg('gnss.corrections.dgps_max_age_s', 60.0, 's', 'Largest correction age for DGPS.'),
    Key('gnss.corrections.baseline_km', 'float', 5.0, 'Distance to the base station.', 'km',
        low=0.0, high=200.0),
    _nonneg('gnss.corrections.ppm_h', 1.0, 'ppm', 'Horizontal error per km of baseline.'),
    _nonneg('gnss.corrections.ppm_v', 1.5, 'ppm', 'Vertical error per km of baseline.'),
    Key(OUTAGES, 'outages', [], 'Correction outages [start, end).', 's'),
    _nonneg('gnss.obstruction.near_margin_m', 1.5, 'm', 'Margin that makes a line of sight "near".'),
    _positive('gnss.obstruction.foliage_block_path_m', 8.0, 'm',
              'Path through a tree crown that blocks a satellite.'),
    _positive('gnss.obstruction.reflector_range_m', 60.0, 'm', 'Range of the reflector index.'),
    # acres_sim's GNSS outputs for localization stacks (docs/gnss_receiver.md)
    Key('gnss.nmea.gst', 'bool', True,
        'acres_sim: send $GNGST (the reported sigmas and error ellipse) on gnss_receiver/nmea '
        'after the GGA of each epoch.', spec=False),
    Key('gnss.gpsfix', 'bool', True,
        'acres_sim: publish gps_msgs/GPSFix on gnss_receiver/gpsfix (RTK fixed/float status, '
        'DOPs, 95 % errors); skipped with a warning where gps_msgs is not installed.',
        spec=False),
    Key('gnss.heading.enabled', 'bool', False,
        'acres_sim: dual-antenna heading from a secondary antenna (gnss_heading.jsonl, '
        'gnss_receiver/heading).', spec=False),
    _lever('gnss.heading.secondary_antenna_flu_m', [-1.0, 0.0, 1.7],
           'acres_sim: lever arm of the secondary antenna (body FLU, from mount_frame as the '
           'antenna); the heading is of the baseline primary -> secondary.', spec=False),
    _nonneg('gnss.heading.rtk_fixed.sigma_rel_h_m', 0.005, 'm',
            'acres_sim: rtk_fixed: horizontal sigma of the relative antenna position; the '
            'heading sigma is it over the baseline length.', spec=False),
    _nonneg('gnss.heading.rtk_fixed.sigma_rel_v_m', 0.010, 'm',
            'acres_sim: rtk_fixed: vertical sigma of the relative antenna position; the pitch '
            'sigma is it over the baseline length.', spec=False),
    _nonneg('gnss.heading.rtk_float.sigma_rel_h_m', 0.10, 'm',
            'acres_sim: rtk_float: horizontal sigma of the relative antenna position.',
            spec=False),
    _nonneg('gnss.heading.rtk_float.sigma_rel_v_m', 0.20, 'm',
            'acres_sim: rtk_float: vertical sigma of the relative antenna position.', spec=False),
    Key('gnss.datum.output_frame', 'str', 'wgs84_g2139', 'Frame of latitude/longitude/height.',
        choices=('wgs84_g2139', 'nad83')),
    Key('gnss.datum.start_utc', 'utc', '2026-09-23T15:00:00Z', 'UTC time at t = 0 (ISO 8601).'),
    Key('gnss.datum.harn_to_nad83_2011_shift_deg', 'vec2', [-7.742258e-09, 2.4261007e-07],
        'Latitude and longitude shift from NAD83(HARN) to NAD83(2011).', 'deg',
        low=-1e-3, high=1e-3),
    Key('gnss.datum.geoid.n0_m', 'float', -33.6268735, 'Geoid undulation at the origin.', 'm',
        low=-200.0, high=200.0),
    Key('gnss.datum.geoid.dn_de', 'float', -1.07779725e-05, 'East slope of the geoid plane.',
        'm/m', low=-0.01, high=0.01),
    Key('gnss.datum.geoid.dn_dn', 'float', -6.19783884e-06, 'North slope of the geoid plane.',
        'm/m', low=-0.01, high=0.01),
    Key(f'{_HELMERT}.t_m', 'vec3', [1.00530, -1.90921, -0.54157],
        'Helmert translation T0.', 'm', low=-100.0, high=100.0),
    Key(f'{_HELMERT}.r_arcsec', 'vec3', [0.02678138, -0.00042027, 0.01093206],
        'Helmert rotation r0.', 'arcsec', low=-10.0, high=10.0),
    Key(f'{_HELMERT}.s_ppm', 'float', 0.00036891, 'Helmert scale s0.', 'ppm',
        low=-100.0, high=100.0),
    Key(f'{_HELMERT}.dt_m_per_yr', 'vec3', [0.00079, -0.00060, -0.00144],
        'Rate of the translation.', 'm/yr', low=-1.0, high=1.0),
    Key(f'{_HELMERT}.dr_arcsec_per_yr', 'vec3', [0.00006667, -0.00075744, -0.00005133],
        'Rate of the rotation.', 'arcsec/yr', low=-1.0, high=1.0),
    Key(f'{_HELMERT}.ds_ppm_per_yr', 'float', -0.00007201, 'Rate of the scale.', 'ppm/yr',
        low=-1.0, high=1.0),
    Key(f'{_HELMERT}.reference_epoch', 'float', 2010.0, 'Reference epoch of the parameters.',
        'yr', low=1900.0, high=2100.0),

    # --- IMU ---
    Key('imu.enabled', 'bool', True, 'The IMU is on.'),
    _rate('imu.hz', 120.0, 'Sample rate.'),
    _nonneg('imu.accel_std_mps2', 0.03, 'm/s^2', 'White noise of the specific force, per axis and sample.'),
    _nonneg('imu.gyro_std_radps', 0.002, 'rad/s', 'White noise of the angular rate, per axis and sample.'),
    _nonneg('imu.accel_bias_mps2', 0.01, 'm/s^2', 'Standard deviation of the constant accelerometer bias.'),
    _nonneg('imu.gyro_bias_radps', 0.001, 'rad/s', 'Standard deviation of the constant gyroscope bias.'),
    _lever('imu.position_flu_m', [0.0, 0.0, 0.0], 'Lever arm of the IMU (body FLU).',
           polaris=[0.95, -0.45, 0.7]),

    # --- INS (defaults: the spec's "Code" column; Polaris: the overlay) ---
    Key('ins.enabled', 'bool', False, 'The INS is on.', polaris=True),
    _rate('ins.hz', 100.0, 'Epoch rate.'),
    _lever('ins.position_flu_m', [0.0, 0.0, 0.0],
           'The point the INS reports, from base_footprint (body FLU).'),
    _nonneg('ins.position_sigma_m', 0.01, 'm', 'Gauss-Markov position error (up: 1.5 times).'),
    _positive('ins.position_tau_s', 30.0, 's', 'Correlation time of the six error states.'),
    _nonneg('ins.position_white_m', 0.003, 'm', 'White position noise.'),
    _nonneg('ins.heading_sigma_deg', 0.1, 'deg', 'Heading error.'),
    _nonneg('ins.attitude_sigma_deg', 0.03, 'deg', 'Roll and pitch error.'),
    _nonneg('ins.velocity_white_mps', 0.01, 'm/s', 'White velocity noise.', polaris=0.02),
    _nonneg('ins.accel_white_mps2', 0.02, 'm/s^2', 'White noise of the specific force.'),
    _nonneg('ins.gyro_white_radps', 0.0005, 'rad/s', 'White noise of the angular rate.'),
    Key('ins.frame', 'str', 'nad83', 'Frame of the fix.', choices=('nad83', 'wgs84_g2139')),
    Key('ins.utm_zone', 'int', 16, 'UTM zone of the odometry.', low=1, high=60),

    # --- vibration of the chassis (acres_sim; every sensor sees it through the truth) ---
    Key('vibration.engine', 'bool', False,
        'acres_sim: the engine (firing order) and the PTO shake the chassis.', spec=False),
    Key('vibration.parked_jitter', 'bool', False,
        "acres_sim: a parked vehicle's velocity alternates at 60 Hz, as the brake holds it.",
        spec=False),
    Key('vibration.roughness', 'bool', True,
        "acres_sim: the vehicle feels the terrain's surface roughness under its wheels "
        '(a terrain other than flat only).', spec=False),

    # --- barometer (acres_sim; AirSim's model and defaults; in the INS unit) ---
    Key('baro.enabled', 'bool', False, 'acres_sim: the barometer is on.', spec=False),
    _rate('baro.hz', 50.0, 'acres_sim: sample rate (AirSim: 50 Hz).', spec=False),
    _nonneg('baro.noise_pa', 2.7, 'Pa',
            'acres_sim: white pressure noise (MS5611-01BA resolution, 0.027 mbar).', spec=False),
    Key('baro.drift_sigma', 'float', 0.001825, 'acres_sim: standard deviation of the '
        'Gauss-Markov drift factor of the pressure (AirSim: 0.0365 / 20).', '',
        low=0.0, high=0.1, spec=False),
    _positive('baro.drift_tau_s', 3600.0, 's',
              'acres_sim: correlation time of the pressure drift (AirSim: 1 hour).', spec=False),
    Key('baro.qnh_hpa', 'float', 1013.25, 'acres_sim: altimeter setting QNH (sea-level '
        'pressure).', 'hPa', low=870.0, high=1085.0, spec=False),

    # --- magnetometer (acres_sim; AirSim's model and defaults; in the INS unit) ---
    Key('mag.enabled', 'bool', False, 'acres_sim: the magnetometer is on.', spec=False),
    _rate('mag.hz', 50.0, 'acres_sim: sample rate (AirSim: 50 Hz).', spec=False),
    Key('mag.field_model', 'str', 'wmm', 'acres_sim: reference field: the World Magnetic '
        'Model at the run\'s time, or the tilted dipole of the AirSim paper.',
        choices=('wmm', 'dipole'), spec=False),
    _nonneg('mag.noise_t', 5e-7, 'T', 'acres_sim: white noise per axis (AirSim: 5 mG).',
            spec=False),
    Key('mag.scale_factor', 'float', 1.0, 'acres_sim: scale factor of the sensor.', '',
        low=0.5, high=1.5, spec=False),
    Key('mag.bias_t', 'vec3', [0.0, 0.0, 0.0], 'acres_sim: constant bias of the sensor, '
        'body FLU.', 'T', low=-1e-3, high=1e-3, spec=False),
    Key('mag.hard_iron_t', 'vec3', [0.0, 0.0, 0.0], "acres_sim: hard-iron offset of the "
        "vehicle's steel, body FLU.", 'T', low=-1e-3, high=1e-3, spec=False),
    Key('mag.soft_iron_diag', 'vec3', [1.0, 1.0, 1.0], 'acres_sim: soft-iron matrix, '
        'diagonal (xx, yy, zz).', '', low=0.5, high=1.5, spec=False),
    Key('mag.soft_iron_offdiag', 'vec3', [0.0, 0.0, 0.0], 'acres_sim: soft-iron matrix, '
        'symmetric off-diagonal (xy, xz, yz).', '', low=-0.5, high=0.5, spec=False),

    # --- wheel odometry (acres_sim; the rear wheels' encoders, at base_footprint) ---
    Key('wheel_odometry.enabled', 'bool', False, 'acres_sim: the wheel odometry is on.',
        spec=False),
    _rate('wheel_odometry.hz', 50.0, 'acres_sim: sample rate.', spec=False),
    Key('wheel_odometry.surface', 'str', 'firm_soil', 'acres_sim: the ground, for the slip '
        'stiffness (Brixius / ASABE D497 at the EP496 optimum slip).',
        choices=WHEEL_SURFACES, spec=False),
    Key('wheel_odometry.radius_error', 'float', 0.005, 'acres_sim: relative error of the '
        'rolling radius the odometry assumes (a scale error).', '', low=-0.05, high=0.05,
        spec=False),
    Key('wheel_odometry.track_error', 'float', 0.02, 'acres_sim: relative error of the '
        'effective track (the tyres scrub in a turn): a yaw-rate scale error.', '',
        low=-0.1, high=0.1, spec=False),
    Key('wheel_odometry.speed_noise_mps', 'float', 0.01, "acres_sim: white noise of each "
        "wheel's speed per sample.", 'm/s', low=0.0, high=0.5, spec=False),
    Key('wheel_odometry.wheel_variance_per_m', 'float', 1e-5, "acres_sim: variance of a "
        "wheel's distance per metre rolled (Chong & Kleeman's odometry error model).",
        'm^2/m', low=0.0, high=0.01, spec=False),

    # --- radar ground-speed sensor (acres_sim; a Doppler unit under the tractor) ---
    Key('radar.enabled', 'bool', False, 'acres_sim: the radar ground-speed sensor is on.',
        spec=False),
    _rate('radar.hz', 10.0, 'acres_sim: output rate (ISO 11783-7: a speed message every '
          '100 ms).', spec=False),
    _lever('radar.mount_flu_m', [1.0, -0.5, 0.6], 'acres_sim: the radar, from '
           'base_footprint (body FLU; an estimate).', spec=False),
    Key('radar.beam_angle_deg', 'float', 35.0, 'acres_sim: angle of the beam below the '
        'body x axis.', 'deg', low=20.0, high=60.0, spec=False),
    Key('radar.scale_error', 'float', 0.0, 'acres_sim: fixed relative error of the speed '
        '(0: a calibrated unit).', '', low=-0.05, high=0.05, spec=False),
    Key('radar.noise_floor_mps', 'float', 0.02, 'acres_sim: noise sigma at standstill; '
        'sigma = floor + fraction * speed.', 'm/s', low=0.0, high=0.2, spec=False),
    Key('radar.noise_fraction', 'float', 0.01, 'acres_sim: noise sigma per unit of speed '
        '(about 1 % in the literature).', '', low=0.0, high=0.05, spec=False),
    Key('radar.min_speed_mps', 'float', 0.138889, 'acres_sim: below this speed the unit '
        'gives no reading (0, flagged invalid).', 'm/s', low=0.0, high=1.0, spec=False),
)

assert all(k.choices for k in KEYS if k.kind == 'str'), 'a str sensor key needs choices'

_BY_NAME = {k.name: k for k in KEYS}
KEY_NAMES = tuple(_BY_NAME)
assert len(KEY_NAMES) == len(KEYS), 'duplicate key in the schema'


def key(name: str) -> Key:
    """The schema entry of ``name`` (KeyError if there is none)."""
    return _BY_NAME[name]
