"""Reading a vehicle file (``config/vehicles/<name>.yaml``) into a
:class:`~acres_sim.core.vehicles.VehicleParams`.

A vehicle file is YAML (JSON works too)::

    vehicle:
      name: polaris            # optional label
      mass_kg: 960.0           # source note as a comment
      ...

Every field of :class:`VehicleParams` is required except the centre-of-mass
offsets, the speed-controller gains and the kinematic blend speeds, which have
defaults.  The first problem stops loading with one :class:`ConfigError` that
names the key, the value, what is allowed and the file.
"""

import difflib
from pathlib import Path


from acres_sim.config.loader import config_dir, read_document
from acres_sim.config.schema import Key
from acres_sim.config.validate import ConfigError, check, value_error
from acres_sim.core.vehicles import VEHICLE_FIELDS, VehicleParams

__all__ = ['VEHICLE_KEYS', 'load_vehicle', 'vehicle_from_tree', 'vehicle_names',
           'vehicles_dir']

# field -> (low, high, low_open, unit): the allowed range of each field.
_RANGES = {
    'mass_kg': (10.0, 1e5, False, 'kg'),
    'ixx_kgm2': (0.0, 1e7, True, 'kg m^2'),
    'iyy_kgm2': (0.0, 1e7, True, 'kg m^2'),
    'izz_kgm2': (0.0, 1e7, True, 'kg m^2'),
    'wheelbase_m': (0.2, 10.0, False, 'm'),
    'track_m': (0.2, 5.0, False, 'm'),
    'cog_height_m': (0.05, 5.0, False, 'm'),
    'wheel_radius_m': (0.05, 2.0, False, 'm'),
    'max_speed_mps': (0.1, 60.0, False, 'm/s'),
    'max_reverse_speed_mps': (0.0, 30.0, False, 'm/s'),
    'max_accel_mps2': (0.0, 20.0, True, 'm/s^2'),
    'max_brake_mps2': (0.0, 20.0, True, 'm/s^2'),
    'drive_time_constant_s': (0.01, 10.0, False, 's'),
    'max_steer_rad': (0.0, 1.2, True, 'rad'),
    'steer_rate_radps': (0.0, 10.0, True, 'rad/s'),
    'cornering_stiffness_front_npr': (0.0, 1e7, True, 'N/rad'),
    'cornering_stiffness_rear_npr': (0.0, 1e7, True, 'N/rad'),
    'friction_mu': (0.0, 2.0, True, ''),
    'rolling_resistance': (0.0, 0.5, False, ''),
    'drag_area_m2': (0.0, 50.0, False, 'm^2'),
    'com_x_m': (-10.0, 10.0, False, 'm'),
    'com_y_m': (-2.0, 2.0, False, 'm'),
    'com_z_m': (-5.0, 5.0, False, 'm'),
    'speed_kp_per_s': (0.0, 20.0, True, '1/s'),
    'speed_ki_per_s2': (0.0, 20.0, False, '1/s^2'),
    'kinematic_below_mps': (0.2, 10.0, False, 'm/s'),
    'dynamic_above_mps': (0.4, 20.0, False, 'm/s'),
}
_OPTIONAL = {name: VehicleParams._field_defaults[name] for name in VehicleParams._field_defaults}
_TOP = 'vehicle'
# field -> its Key (named vehicle.<field>; the default of an optional field)
VEHICLE_KEYS = {name: Key(f'{_TOP}.{name}', 'float', _OPTIONAL.get(name),
                          'A field of a vehicle file.', unit, low=low, high=high,
                          low_open=low_open)
                for name, (low, high, low_open, unit) in _RANGES.items()}
assert tuple(VEHICLE_KEYS) == VEHICLE_FIELDS


def vehicles_dir() -> Path:
    """The folder of the packaged vehicle files."""
    return config_dir() / 'vehicles'


def vehicle_names():
    """Names of the packaged vehicles (file stems), sorted."""
    return sorted(p.stem for p in vehicles_dir().glob('*.yaml'))


def _fail(name, value, problem, allowed, source) -> ConfigError:
    return value_error(f'{_TOP}.{name}', value, problem, allowed, source)


def vehicle_from_tree(tree, source='<vehicle>') -> VehicleParams:
    """A checked :class:`VehicleParams` from the parsed content of a vehicle file."""
    if not isinstance(tree, dict) or _TOP not in tree:
        raise ConfigError(f'{source}: expected a mapping with the key "{_TOP}" at the top')
    for name in tree:
        if name != _TOP:
            raise ConfigError(f'unknown key {name!r} (in {source}); only "{_TOP}" at the top')
    body = tree[_TOP]
    if not isinstance(body, dict):
        raise ConfigError(f'{_TOP} (in {source}): expected a mapping of parameters')
    values = {}
    for name, value in body.items():
        if name == 'name':
            if not isinstance(value, str) or not value.strip():
                raise _fail('name', value, 'expected a name', 'a non-empty string', source)
            continue
        if name not in VEHICLE_KEYS:
            close = difflib.get_close_matches(str(name), VEHICLE_FIELDS, n=1, cutoff=0.6)
            hint = f"; did you mean '{_TOP}.{close[0]}'?" if close else ''
            raise ConfigError(f"unknown key '{_TOP}.{name}' (in {source}){hint}")
        values[name] = check(VEHICLE_KEYS[name], value, source)
    for name in VEHICLE_FIELDS:
        if name not in values:
            if name not in _OPTIONAL:
                raise ConfigError(f'{_TOP}.{name} is missing (in {source}); '
                                  f'allowed: {VEHICLE_KEYS[name].allowed()}')
            values[name] = float(_OPTIONAL[name])
    # relations between fields
    L = values['wheelbase_m']
    lo, hi = -0.4 * L, 0.6 * L
    if not lo < values['com_x_m'] < hi:
        raise _fail('com_x_m', values['com_x_m'], 'the centre of mass is not between the axles',
                    f'> {lo:g} and < {hi:g} m (-0.4 to 0.6 wheelbase)', source)
    if not values['com_z_m'] > -values['cog_height_m']:
        raise _fail('com_z_m', values['com_z_m'], 'the centre of mass is below the ground',
                    f'> {-values["cog_height_m"]:g} m (minus cog_height_m)', source)
    if not values['dynamic_above_mps'] >= values['kinematic_below_mps'] + 0.2:
        raise _fail('dynamic_above_mps', values['dynamic_above_mps'],
                    'the blend band is too narrow',
                    f'>= kinematic_below_mps + 0.2 = {values["kinematic_below_mps"] + 0.2:g} m/s',
                    source)
    return VehicleParams(**values)


def _resolve(name_or_path) -> Path:
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in ('.yaml', '.yml', '.json') or '/' in text or path.is_file():
        return path
    candidate = vehicles_dir() / f'{text}.yaml'
    if not candidate.is_file():
        raise ConfigError(f'unknown vehicle {text!r}: no file {candidate}; packaged: '
                          + ', '.join(vehicle_names()))
    return candidate


def load_vehicle(name_or_path) -> VehicleParams:
    """The parameters of a packaged vehicle (``'polaris'``, ``'maxxum'``) or of a
    vehicle file (YAML, or JSON by the ``.json`` suffix)."""
    path = _resolve(name_or_path)
    tree = read_document(path, 'vehicle')
    source = str(path)
    return vehicle_from_tree(tree, source)
