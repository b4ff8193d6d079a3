"""Checking values against their descriptors: the one range checker.

:func:`check` takes any :class:`acres_sim.config.schema.Key` (a sensor key, a
node parameter, a field of a vehicle, route, scene or scenario file);
:func:`check_value` looks a sensor key up by name first.  Every user mistake
ends in one :class:`ConfigError` whose message names the key (or the item of
a file, e.g. ``route.legs[2].speed_mps``), the value, what is allowed and
where the value came from: :func:`value_error` is that message's one form,
:func:`unknown_key` and :func:`missing` the forms for a key that a mapping
should not have or lacks (:func:`check_keys` checks a mapping's keys).
Nothing here raises anything else for bad input.  A message is a few hundred
characters at most: a long value is shown by its start, and :func:`shorten`
cuts the middle of a longer message, so its start (the key) and its end
(what is allowed) stay.
"""

from dataclasses import replace
import datetime as _dt
import difflib
import math
import re

from acres_sim.config.schema import KEY_NAMES, OUTAGES, Key, key

__all__ = ['ConfigError', 'MESSAGE_MAX', 'VALUE_MAX', 'check', 'check_config', 'check_keys',
           'check_value', 'missing', 'parse_outage', 'parse_utc', 'shorten', 'unknown_key',
           'value_error']


# Outage bounds stay far inside the message-index arithmetic of the receiver
# (1e9 s is 31 years of episode time).
OUTAGE_END_MAX_S = 1e9
# The shortest baseline of the dual-antenna heading (two antennas a patch apart).
MIN_HEADING_BASELINE_M = 0.1


# The longest message for the user, in characters.
MESSAGE_MAX = 400
# The longest value shown in a message (its repr), in characters.
VALUE_MAX = 80


def shorten(text, limit=MESSAGE_MAX) -> str:
    """``text`` if it has at most ``limit`` characters, else its start and end
    with the middle left out (and said so)."""
    if len(text) <= limit:
        return text
    cut = f' ... [{len(text) - limit} characters left out] ... '
    head = (limit - len(cut)) // 2
    tail = limit - len(cut) - head
    return text[:head] + cut + text[len(text) - tail:]


class ConfigError(ValueError):
    """A configuration the user must fix; ``str(err)`` is the whole message,
    shortened to :data:`MESSAGE_MAX` characters."""

    def __init__(self, message):
        super().__init__(shorten(str(message)))


def _where(source):
    if source == 'command line':
        return ' (on the command line)'
    return f' (in {source})' if source else ''


# A mapping of at most this many keys has them named in its messages.
_NAMED_KEYS = 12


def unknown_key(name, source=None, known=None, within='') -> ConfigError:
    """The error for a key ``name`` that is not one of ``known`` (None: the
    sensor keys of the schema), with the closest known key; ``within``: the
    item of the mapping that has it (e.g. ``route.legs[1]``).  A short list of
    ``known`` keys is named when none is close."""
    prefix = f'{within}.' if within else ''
    names = KEY_NAMES if known is None else tuple(known)
    close = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
    if close:
        hint = f"; did you mean '{prefix}{close[0]}'?"
    else:
        hint = '' if known is None or len(names) > _NAMED_KEYS else '; allowed: ' + ', '.join(names)
    return ConfigError(f"unknown key '{prefix}{name}'{_where(source)}{hint}")


def missing(k: Key, source=None, item=None) -> ConfigError:
    """The error for a required ``k`` (shown as ``item``, default its name) left out."""
    return ConfigError(f'{item or k.name} is missing{_where(source)}; allowed: {k.allowed()}')


def check_keys(mapping, known, item, source=None) -> dict:
    """``mapping`` if it is a mapping whose keys are all ``known``, else the
    ConfigError (naming ``item``, the mapping's place in the file)."""
    if not isinstance(mapping, dict):
        allowed = ('a mapping of keys ' + ', '.join(known) if len(known) <= _NAMED_KEYS
                   else 'a mapping of its keys')
        raise value_error(item, mapping, 'expected a mapping', allowed, source)
    for name in mapping:
        if name not in known:
            raise unknown_key(name, source, known, item)
    return mapping


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= VALUE_MAX else text[:VALUE_MAX - 3] + '...'


def value_error(name, value, problem, allowed, source=None) -> ConfigError:
    """The error for a bad ``value`` of ``name``: what is wrong (``problem``),
    what is ``allowed`` and where it came from (``source``)."""
    return ConfigError(f"{name} = {_shown(value)}{_where(source)}: {problem}; allowed: {allowed}")


def _fail(k: Key, value, problem, source) -> ConfigError:
    return value_error(k.name, value, problem, k.allowed(), source)


def _number(k, value, source, what='a number'):
    # bool is an int in Python; a YAML "true" is never a number here.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(k, value, f'expected {what}', source)
    if isinstance(value, float) and not math.isfinite(value):
        raise _fail(k, value, 'not a finite number', source)
    if abs(value) > 1e300:   # a huge integer does not fit a float
        raise _fail(k, value, 'out of range', source)
    if k.low is not None and (value <= k.low if k.low_open else value < k.low):
        raise _fail(k, value, 'out of range', source)
    if k.high is not None and value > k.high:
        raise _fail(k, value, 'out of range', source)
    return float(value)


def _vector(k, value, n, source):
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise _fail(k, value, f'expected a list of {n} numbers', source)
    return [_number(k, v, source) for v in value]


def parse_outage(text, source=None, name=OUTAGES):
    """'START:END' (seconds) -> (start, end); the spec's -SensorGnssOutage= form."""
    k = key(name)
    parts = text.split(':') if isinstance(text, str) else []
    try:
        start, end = (float(p) for p in parts)
    except ValueError:
        raise _fail(k, text, 'malformed outage, expected START:END in seconds (e.g. 30:45)',
                    source) from None
    return _outage(k, [start, end], text, source)


def _outage(k, pair, shown, source):
    if (not isinstance(pair, (list, tuple)) or len(pair) != 2
            or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in pair)):
        raise _fail(k, shown, 'malformed outage, expected [start, end] in seconds', source)
    start, end = float(pair[0]), float(pair[1])
    if not (math.isfinite(start) and math.isfinite(end)
            and 0.0 <= start < end <= OUTAGE_END_MAX_S):
        raise _fail(k, shown, 'an outage needs 0 <= start < end <= 1e9 s', source)
    return [start, end]


def _outages(k, value, source):
    if not isinstance(value, (list, tuple)):
        raise _fail(k, value, 'expected a list of outages', source)
    return [parse_outage(item, source, k.name) if isinstance(item, str)
            else _outage(k, item, item, source) for item in value]


def parse_utc(text) -> _dt.datetime:
    """An ISO 8601 time with a zone (Z or an offset) -> aware datetime in UTC.

    ValueError if it is not one (or has no zone, or leaves the years 1..9999).
    """
    stamp = _dt.datetime.fromisoformat(text)
    if stamp.tzinfo is None:
        raise ValueError('no time zone')
    try:
        return stamp.astimezone(_dt.timezone.utc)
    except OverflowError:
        raise ValueError('out of the years 1 to 9999') from None


# The start of a run is the start of its ROS time (acres_sim.pipeline.timeline):
# ROS 2 stamps count whole seconds since 1970 in 32 bits, up to 2038-01-19;
# starting by 2035 leaves a live run its two years.
UTC_FIRST = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
UTC_END = _dt.datetime(2036, 1, 1, tzinfo=_dt.timezone.utc)


def _utc(k, value, source):
    if not isinstance(value, str):
        raise _fail(k, value, 'expected an ISO 8601 time as a string', source)
    try:
        stamp = parse_utc(value)
    except ValueError:
        raise _fail(k, value, 'not an ISO 8601 time with a zone', source) from None
    if not UTC_FIRST <= stamp < UTC_END:
        raise _fail(k, value, 'outside the years that ROS 2 stamps can hold', source)
    return value


def _names(k, value, source):
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise _fail(k, value, 'expected a list of names', source)
    if not value or len(set(value)) != len(value):
        raise _fail(k, value, 'expected distinct names, at least one', source)
    return list(value)


def check_value(name, value, source=None):
    """The value of sensor key ``name`` in its normal form, or ConfigError."""
    try:
        k = key(name)
    except KeyError:
        raise unknown_key(name, source) from None
    return check(k, value, source)


def check(k: Key, value, source=None, item=None):
    """``value`` of the parameter ``k`` in its normal form (ints accepted for
    floats), or ConfigError; ``item``: the name its messages show (default
    ``k.name``, e.g. ``route.legs[2].speed_mps`` for a field of a list)."""
    if item is not None and item != k.name:
        k = replace(k, name=item)
    if k.kind == 'bool':
        if not isinstance(value, bool):
            raise _fail(k, value, 'expected true or false', source)
        return value
    if k.kind == 'int':
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(k, value, 'expected an integer', source)
        _number(k, value, source)
        return int(value)
    if k.kind == 'float':
        return _number(k, value, source)
    if k.kind == 'vec2':
        return _vector(k, value, 2, source)
    if k.kind == 'vec3':
        if value is None and k.default is None:     # an optional vector left unset
            return None
        return _vector(k, value, 3, source)
    if k.kind == 'outages':
        return _outages(k, value, source)
    if k.kind == 'utc':
        return _utc(k, value, source)
    if k.kind == 'names':
        return _names(k, value, source)
    if not isinstance(value, str):
        raise _fail(k, value, 'expected a string', source)
    if k.choices and value not in k.choices:
        raise _fail(k, value, 'not one of the choices', source)
    if k.pattern is not None and not re.fullmatch(k.pattern, value):
        raise _fail(k, value, 'not a valid value', source)
    return value


def check_config(values, sources):
    """Rules that involve more than one key; ``values`` is complete and checked."""
    systems = [f'gnss.constellations.{s}' for s in ('gps', 'galileo', 'glonass')]
    if not any(values[s] for s in systems):
        where = sorted({sources[s] for s in systems if sources[s] != 'default'})
        raise ConfigError('gnss.constellations: all systems are off'
                          f"{_where(', '.join(where))}; allowed: at least one of "
                          'gps, galileo, glonass set to true')
    if values['gnss.heading.enabled']:
        primary = values['gnss.antenna_flu_m']
        secondary = values['gnss.heading.secondary_antenna_flu_m']
        length = sum((a - b) ** 2 for a, b in zip(primary, secondary)) ** 0.5
        if length < MIN_HEADING_BASELINE_M:
            names = ('gnss.heading.secondary_antenna_flu_m', 'gnss.antenna_flu_m')
            where = sorted({sources[n] for n in names if sources[n] != 'default'})
            raise ConfigError(f'gnss.heading.secondary_antenna_flu_m = {secondary} is '
                              f'{length:.3g} m from gnss.antenna_flu_m = {primary}'
                              f"{_where(', '.join(where))}; allowed: a baseline of at least "
                              f'{MIN_HEADING_BASELINE_M} m (with gnss.heading.enabled)')
