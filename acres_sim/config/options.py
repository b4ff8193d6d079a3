"""The spec's command-line options, as argparse arguments that become overrides.

Each option of the spec ("Command-Line Options") has a counterpart here; the
help text names the game's spelling.  ``--set KEY=VALUE`` reaches any other key.
``--vibration on|off`` (acres_sim's own) sets the vibration switches of every
vehicle at once (:func:`vibration_overrides`).
"""

import argparse

from acres_sim.config.loader import RIGS, load_config, parse_value
from acres_sim.config.schema import key
from acres_sim.config.validate import ConfigError

__all__ = ['VIBRATION_KEYS', 'add_config_arguments', 'config_from_args', 'overrides_from_args',
           'vibration_overrides']

# (flag, key, the game's option); switches also carry the value they set.
_VALUE_OPTIONS = (
    ('--seed', 'seed', '-SensorSeed='),
    ('--delay', 'delay_s', '-SensorDelay='),
    ('--gnss-hz', 'gnss.hz', '-SensorGnssHz='),
    ('--imu-hz', 'imu.hz', '-SensorImuHz='),
    ('--gnss-start', 'gnss.start', '-SensorGnssStart='),
    ('--gnss-frame', 'gnss.datum.output_frame', '-SensorGnssFrame='),
    ('--baseline-km', 'gnss.corrections.baseline_km', '-SensorGnssBaselineKm='),
)
_SWITCHES = (
    ('--no-gnss', 'gnss.enabled', False, '-SensorNoGnss'),
    ('--no-imu', 'imu.enabled', False, '-SensorNoImu'),
    ('--no-ins', 'ins.enabled', False, '-SensorNoIns'),
    ('--no-noise', 'noise', False, '-SensorNoNoise'),
)

# What --vibration on|off switches (the terrain's roughness has a key of its own).
VIBRATION_KEYS = ('vibration.engine', 'vibration.parked_jitter')
_VIBRATION_CHOICES = {'on': True, 'off': False}


def vibration_overrides(value, where='--vibration ') -> dict:
    """The keys that ``--vibration on`` (or ``off``) sets: the engine's and
    the parked jitter's switch, both true (false); ConfigError naming ``where``
    for any other value."""
    if value not in _VIBRATION_CHOICES:
        raise ConfigError(f'{where}{value!r}: allowed: on (engine vibration and parked '
                          'jitter) or off (neither)')
    return {name: _VIBRATION_CHOICES[value] for name in VIBRATION_KEYS}


def _dest(flag):
    return 'opt_' + flag.lstrip('-').replace('-', '_')


def _typed(name):
    """argparse type for key ``name``: numbers stay text so the config check
    reports the key, the value and its range in one message."""
    kind = key(name).kind
    if kind == 'int':
        return lambda text: _parse_number(text, int)
    if kind == 'float':
        return lambda text: _parse_number(text, float)
    return str


def _parse_number(text, kind):
    try:
        return kind(text)
    except ValueError:
        return text  # check_value names the key and what is allowed


def add_config_arguments(parser: argparse.ArgumentParser, rig_default='polaris',
                         vehicle_choice=True):
    """Add the rig choice, the config files and the spec's options to ``parser``
    (without ``vehicle_choice``: no --rig; the caller picks the vehicles)."""
    group = parser.add_argument_group('configuration (the spec\'s command-line options)')
    if vehicle_choice:
        group.add_argument('--rig', default=rig_default, choices=[*RIGS, 'none'],
                           help='vehicle overlay to apply (default: %(default)s)')
    group.add_argument('--config', metavar='FILE', dest='opt_config',
                       help='complete sensor configuration instead of the packaged '
                            'sensors.yaml (YAML or the game\'s sensors.json) [-SensorConfig=]')
    group.add_argument('--vehicle-config', metavar='FILE', dest='opt_vehicle_config',
                       help='vehicle overlay instead of the packaged one (of every vehicle '
                            'of the run) [-PolarisSensorConfig=]')
    group.add_argument('--site', metavar='FILE', dest='opt_site',
                       help='site georeference instead of the packaged site.yaml')
    for flag, name, game in _VALUE_OPTIONS:
        k = key(name)
        what = f'one of {", ".join(k.choices)}' if k.choices else k.allowed()
        group.add_argument(flag, dest=_dest(flag), type=_typed(name), metavar=name.upper()
                           .rsplit('.', 1)[-1], help=f'{name} ({what}) [{game}]')
    for flag, name, value, game in _SWITCHES:
        group.add_argument(flag, dest=_dest(flag), action='store_const', const=value,
                           help=f'set {name} to {str(value).lower()} [{game}]')
    group.add_argument('--gnss-outage', metavar='START:END', dest='opt_outages',
                       action='append', default=[],
                       help='add a correction outage [START, END) in seconds; repeatable '
                            '[-SensorGnssOutage=]')
    group.add_argument('--vibration', dest='opt_vibration', choices=tuple(_VIBRATION_CHOICES),
                       help='on: the engine and, when parked, the brake\'s jitter shake every '
                            'vehicle (' + ' and '.join(VIBRATION_KEYS) + ' true); off: '
                            'neither (default: as configured, off)')
    group.add_argument('--set', metavar='KEY=VALUE', dest='opt_set', action='append',
                       default=[], help='set any key, VALUE written as in a config file (e.g. '
                                        'gnss.states.single.sigma_h_m=2.0); repeatable')


def _parse_set(item):
    name, sep, text = item.partition('=')
    if not sep or not name.strip():
        raise ConfigError(f"--set {item!r}: expected KEY=VALUE, e.g. --set gnss.hz=5")
    return name.strip(), parse_value(text, f'--set {item!r}: VALUE')


def overrides_from_args(args) -> dict:
    """The keys set by the options in ``args`` (--set, --vibration and the
    spec's options; an option wins over --set), not yet checked; the outages of
    --gnss-outage are in ``args.opt_outages``."""
    overrides = dict(_parse_set(item) for item in args.opt_set)
    if getattr(args, 'opt_vibration', None) is not None:
        overrides.update(vibration_overrides(args.opt_vibration))
    for flag, name, *_ in (*_VALUE_OPTIONS, *_SWITCHES):
        value = getattr(args, _dest(flag))
        if value is not None:
            overrides[name] = value
    return overrides


def config_from_args(args):
    """The resolved, checked Config for parsed ``args`` (ConfigError if bad)."""
    overrides = overrides_from_args(args)
    return load_config(rig=None if args.rig == 'none' else args.rig,
                       config_file=args.opt_config, overlay_file=args.opt_vehicle_config,
                       site_file=args.opt_site, overrides=overrides,
                       add_outages=args.opt_outages)
