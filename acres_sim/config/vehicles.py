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

from pathlib import Path


from acres_sim.config.loader import config_dir, read_document
from acres_sim.config.schema import NON_BLANK, Key
from acres_sim.config.validate import ConfigError, check, check_keys, missing, value_error
from acres_sim.core.vehicles import VEHICLE_FIELDS, VehicleParams

__all__ = ['VEHICLE_KEYS', 'load_vehicle', 'vehicle_from_tree', 'vehicle_names',
           'vehicles_dir']

_TOP = 'vehicle'
_OPTIONAL = VehicleParams._field_defaults


def _field(name, low, high, unit, description, low_open=False):
    """A field of the vehicle file (named vehicle.<field>; the default of an optional one)."""
    return Key(f'{_TOP}.{name}', 'float', _OPTIONAL.get(name), description, unit, low=low,
               high=high, low_open=low_open)


# The fields of VehicleParams, in its order, each with its allowed range.
_FIELD_KEYS = (
    _field('mass_kg', 10.0, 1e5, 'kg', 'Operating mass.'),
    _field('ixx_kgm2', 0.0, 1e7, 'kg m^2', 'Roll inertia about the centre of mass.', low_open=True),
    _field('iyy_kgm2', 0.0, 1e7, 'kg m^2', 'Pitch inertia about the centre of mass.',
           low_open=True),
    _field('izz_kgm2', 0.0, 1e7, 'kg m^2', 'Yaw inertia about the centre of mass.', low_open=True),
    _field('wheelbase_m', 0.2, 10.0, 'm', 'Distance from the rear to the front axle.'),
    _field('track_m', 0.2, 5.0, 'm', 'Distance between the left and right wheel centres.'),
    _field('cog_height_m', 0.05, 5.0, 'm', 'Height of the chassis origin above the ground.'),
    _field('wheel_radius_m', 0.05, 2.0, 'm', 'Rolling radius of the wheels.'),
    _field('max_speed_mps', 0.1, 60.0, 'm/s', 'Largest forward speed command.'),
    _field('max_reverse_speed_mps', 0.0, 30.0, 'm/s', 'Largest reverse speed command.'),
    _field('max_accel_mps2', 0.0, 20.0, 'm/s^2', 'Drive force limit over the mass.', low_open=True),
    _field('max_brake_mps2', 0.0, 20.0, 'm/s^2', 'Brake force limit over the mass.', low_open=True),
    _field('drive_time_constant_s', 0.01, 10.0, 's', 'Lag of the drive and brake force.'),
    _field('max_steer_rad', 0.0, 1.2, 'rad', 'Largest road-wheel angle.', low_open=True),
    _field('steer_rate_radps', 0.0, 10.0, 'rad/s', 'Largest road-wheel angle rate.',
           low_open=True),
    _field('cornering_stiffness_front_npr', 0.0, 1e7, 'N/rad',
           'Cornering stiffness of the front axle.', low_open=True),
    _field('cornering_stiffness_rear_npr', 0.0, 1e7, 'N/rad',
           'Cornering stiffness of the rear axle.', low_open=True),
    _field('friction_mu', 0.0, 2.0, '', 'Tyre-ground friction coefficient.', low_open=True),
    _field('rolling_resistance', 0.0, 0.5, '', 'Rolling resistance over the normal load.'),
    _field('drag_area_m2', 0.0, 50.0, 'm^2', 'Drag coefficient times frontal area.'),
    _field('com_x_m', -10.0, 10.0, 'm', 'Centre of mass ahead of the chassis origin.'),
    _field('com_y_m', -2.0, 2.0, 'm', 'Centre of mass left of the chassis origin.'),
    _field('com_z_m', -5.0, 5.0, 'm', 'Centre of mass above the chassis origin.'),
    _field('speed_kp_per_s', 0.0, 20.0, '1/s', 'Speed controller: acceleration per m/s of '
           'speed error.', low_open=True),
    _field('speed_ki_per_s2', 0.0, 20.0, '1/s^2', 'Speed controller: acceleration per m of '
           'summed speed error.'),
    _field('kinematic_below_mps', 0.2, 10.0, 'm/s', 'Below this speed the motion is purely '
           'kinematic.'),
    _field('dynamic_above_mps', 0.4, 20.0, 'm/s', 'Above this speed the tyre forces alone '
           'move the vehicle (blended in between).'),
    _field('suspension_stiffness_front_npm', 0.0, 1e7, 'N/m', 'Spring rate of each front '
           'wheel\'s suspension (0: a rigid axle, the tyre is the spring).'),
    _field('suspension_damping_front_nspm', 0.0, 1e6, 'N s/m', 'Damping of each front '
           'wheel\'s suspension.'),
    _field('suspension_stiffness_rear_npm', 0.0, 1e7, 'N/m', 'Spring rate of each rear '
           'wheel\'s suspension (0: a rigid axle).'),
    _field('suspension_damping_rear_nspm', 0.0, 1e6, 'N s/m', 'Damping of each rear '
           'wheel\'s suspension.'),
    _field('unsprung_mass_front_kg', 0.0, 5000.0, 'kg', 'Mass below each front spring '
           '(wheel, hub, half the axle).'),
    _field('unsprung_mass_rear_kg', 0.0, 5000.0, 'kg', 'Mass below each rear spring.'),
    _field('tyre_stiffness_front_npm', 0.0, 1e8, 'N/m', 'Vertical stiffness of each front '
           'tyre.', low_open=True),
    _field('tyre_damping_front_nspm', 0.0, 1e6, 'N s/m', 'Vertical damping of each front '
           'tyre.'),
    _field('tyre_stiffness_rear_npm', 0.0, 1e8, 'N/m', 'Vertical stiffness of each rear '
           'tyre.', low_open=True),
    _field('tyre_damping_rear_nspm', 0.0, 1e6, 'N s/m', 'Vertical damping of each rear tyre.'),
    _field('engine_cylinders', 1.0, 16.0, '', 'Cylinders of the four-stroke engine (half as '
           'many firings per revolution).'),
    _field('engine_idle_rpm', 100.0, 10000.0, 'rpm', 'Engine speed when parked or slow.'),
    _field('engine_work_rpm', 100.0, 10000.0, 'rpm', 'Engine speed at work speed and above.'),
    _field('engine_work_speed_mps', 0.0, 60.0, 'm/s', 'Speed at which the engine reaches its '
           'work speed (linear from idle).', low_open=True),
    _field('engine_accel_idle_mps2', 0.0, 50.0, 'm/s^2', 'Amplitude of the chassis '
           'acceleration at the firing frequency, idling.'),
    _field('engine_accel_load_mps2', 0.0, 50.0, 'm/s^2', 'Added amplitude at the full drive '
           'force.'),
    _field('pto_rpm', 0.0, 3000.0, 'rpm', 'Power take-off shaft speed while driving (0: no '
           'PTO).'),
    _field('pto_accel_mps2', 0.0, 50.0, 'm/s^2', 'Amplitude of the chassis acceleration at '
           'twice the PTO shaft frequency.'),
    _field('parked_jitter_mps', 0.0, 1.0, 'm/s', 'Step-to-step velocity change of the brake '
           'holding a parked vehicle.'),
)
# field -> its Key
VEHICLE_KEYS = {k.name.split('.', 1)[1]: k for k in _FIELD_KEYS}
assert tuple(VEHICLE_KEYS) == VEHICLE_FIELDS
# The file's optional label.
_NAME = Key(f'{_TOP}.name', 'str', None, 'The label of the vehicle.', pattern=NON_BLANK,
            pattern_words='a non-empty string')


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
    check_keys(tree, (_TOP,), '', source)
    body = check_keys(tree[_TOP], ('name',) + VEHICLE_FIELDS, _TOP, source)
    values = {}
    for name, value in body.items():
        if name == 'name':
            check(_NAME, value, source)
        else:
            values[name] = check(VEHICLE_KEYS[name], value, source)
    for name in VEHICLE_FIELDS:
        if name not in values:
            if name not in _OPTIONAL:
                raise missing(VEHICLE_KEYS[name], source)
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
