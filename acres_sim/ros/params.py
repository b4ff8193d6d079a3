"""ROS parameters from the configuration schema: each :class:`acres_sim.config.Key`
(a sensor key or a node parameter) declared with its ParameterDescriptor
(description, unit, range or choices, read-only), read back and checked by
:func:`acres_sim.config.validate.check` -- the rules a YAML file meets.

Every mistake -- a value of the wrong type, out of its range, an unknown
choice -- ends as one :class:`ConfigError` naming the parameter, the value
and what is allowed.
"""

import difflib

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                ParameterType)
from rclpy.exceptions import (InvalidParameterTypeException, InvalidParameterValueException,
                              ParameterUninitializedException)
from rclpy.parameter import Parameter

from acres_sim.config import KEYS, ConfigError, resolve
from acres_sim.config.validate import check, value_error
from acres_sim.rig import ros_parameter_value

__all__ = ['check_unknown_parameters', 'declare_node_params', 'declare_sensor_keys',
           'descriptor', 'sensor_config']

_TYPES = {'bool': ParameterType.PARAMETER_BOOL, 'int': ParameterType.PARAMETER_INTEGER,
          'float': ParameterType.PARAMETER_DOUBLE, 'str': ParameterType.PARAMETER_STRING,
          'utc': ParameterType.PARAMETER_STRING, 'vec2': ParameterType.PARAMETER_DOUBLE_ARRAY,
          'vec3': ParameterType.PARAMETER_DOUBLE_ARRAY,
          'outages': ParameterType.PARAMETER_STRING_ARRAY,
          'names': ParameterType.PARAMETER_STRING_ARRAY}
_EMPTY = {'outages': Parameter.Type.STRING_ARRAY, 'names': Parameter.Type.STRING_ARRAY,
          'vec3': Parameter.Type.DOUBLE_ARRAY}
_BIG = 1e300


class _Unknown:
    """A value that could not be read back (shown as ?)."""

    def __repr__(self):
        return '?'


def descriptor(name, spec, read_only=True):
    """The ParameterDescriptor of ``spec`` (a Key) declared as ``name``."""
    unit = f' [{spec.unit}]' if spec.unit else ''
    d = ParameterDescriptor(name=name, type=_TYPES[spec.kind],
                            description=f'{spec.description}{unit}',
                            additional_constraints=f'allowed: {spec.allowed()}',
                            read_only=read_only)
    if spec.kind in ('float', 'vec2', 'vec3') and (spec.low is not None or spec.high is not None):
        d.floating_point_range = [FloatingPointRange(
            from_value=-_BIG if spec.low is None else float(spec.low),
            to_value=_BIG if spec.high is None else float(spec.high), step=0.0)]
    elif spec.kind == 'int' and (spec.low is not None or spec.high is not None):
        d.integer_range = [IntegerRange(from_value=int(-2**63 if spec.low is None else spec.low),
                                        to_value=int(2**63 - 1 if spec.high is None
                                                     else spec.high), step=0)]
    return d


def _plain(value):
    """A parameter value as plain Python (arrays as lists)."""
    if isinstance(value, (str, bytes, bool, int, float)) or value is None:
        return value
    return list(value)


def _declare(node, name, spec, default, read_only=True):
    """Declare ``name`` and return its value (an override if one was given)."""
    where = f'the parameters of {node.get_fully_qualified_name()}'
    initial = _EMPTY.get(spec.kind) if default is None else default
    try:
        parameter = node.declare_parameter(name, initial, descriptor(name, spec, read_only))
        value = parameter.value
    except (InvalidParameterTypeException, InvalidParameterValueException) as err:
        given = getattr(node, '_parameter_overrides', {}).get(name)
        shown = _plain(given.value) if given is not None else _Unknown()
        problem = ('the wrong type' if isinstance(err, InvalidParameterTypeException)
                   else 'out of range')
        raise value_error(name, shown, problem, spec.allowed(), where) from None
    except ParameterUninitializedException:
        value = None
    return _plain(value)


def declare_node_params(node, params, prefix='', defaults=None):
    """Declare the node parameters ``params`` (Keys, as ``prefix + name``);
    their checked values by name (``defaults`` may replace the table's defaults)."""
    out = {}
    for p in params:
        default = (defaults or {}).get(p.name, p.default)
        value = _declare(node, prefix + p.name, p, default)
        out[p.name] = check(p, value, f'the parameters of {node.get_fully_qualified_name()}')
    return out


def declare_sensor_keys(node, defaults, prefix=''):
    """Declare every schema key (as ``prefix + key``) with the value of
    ``defaults`` (a Config: the vehicle's packaged configuration); the values
    given, by key name."""
    values = {}
    for k in KEYS:
        default = ros_parameter_value(k.name, defaults[k.name])
        value = _declare(node, prefix + k.name, k, default)
        values[k.name] = defaults[k.name] if value is None else value
    return values


def check_unknown_parameters(node):
    """A parameter given to ``node`` that it does not declare is a mistake
    (a misspelt key would otherwise be ignored): ConfigError with the closest
    declared name.  Parameters of ROS itself (use_sim_time, qos_overrides.*) pass."""
    declared = set(node._parameters)
    for name in sorted(getattr(node, '_parameter_overrides', {})):
        if name in declared or name.startswith('qos_overrides.'):
            continue
        close = difflib.get_close_matches(name, declared, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ''
        raise ConfigError(f"unknown parameter '{name}' for {node.get_fully_qualified_name()}"
                          f'{hint}')


def sensor_config(node, values, prefix=''):
    """The checked Config of the values from :func:`declare_sensor_keys`
    (ConfigError naming the parameter, as ``prefix + key``)."""
    where = f'the parameters of {node.get_fully_qualified_name()}'
    try:
        return resolve([(where, values)])
    except ConfigError as err:
        if prefix:
            raise ConfigError(f'{prefix}{err}') from None
        raise

