"""Checking values against their descriptors: the one range checker.

:func:`check` takes any :class:`acres_sim.config.schema.Key` (a sensor key, a
node parameter, a vehicle file's field); :func:`check_value` looks a sensor key
up by name first.  Every user mistake ends in one :class:`ConfigError` whose
message names the key, the value, what is allowed and where the value came
from (:func:`value_error` is that message's one form).  Nothing here raises
anything else for bad input.  A message is a few hundred characters at most:
:func:`shorten` cuts the middle of a longer one (a 10 MB string value, a
4300-digit number), so its start (the key) and its end (what is allowed) stay.
"""

import datetime as _dt
import difflib
import math

from acres_sim.config.schema import KEY_NAMES, OUTAGES, Key, key

__all__ = ['ConfigError', 'MESSAGE_MAX', 'check', 'check_value', 'check_config', 'parse_outage',
           'parse_utc', 'shorten', 'unknown_key', 'value_error']


# Outage bounds stay far inside the message-index arithmetic of the receiver
# (1e9 s is 31 years of episode time).
OUTAGE_END_MAX_S = 1e9


# The longest message for the user, in characters.
MESSAGE_MAX = 400


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


def unknown_key(name, source=None) -> ConfigError:
    """The error for a key the schema does not have, with the closest valid key."""
    close = difflib.get_close_matches(name, KEY_NAMES, n=1, cutoff=0.6)
    hint = f"; did you mean '{close[0]}'?" if close else ''
    return ConfigError(f"unknown key '{name}'{_where(source)}{hint}")


def value_error(name, value, problem, allowed, source=None) -> ConfigError:
    """The error for a bad ``value`` of ``name``: what is wrong (``problem``),
    what is ``allowed`` and where it came from (``source``)."""
    return ConfigError(f"{name} = {value!r}{_where(source)}: {problem}; allowed: {allowed}")


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


def check(k: Key, value, source=None):
    """``value`` of the parameter ``k`` in its normal form (ints accepted for
    floats), or ConfigError."""
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
    return value


def check_config(values, sources):
    """Rules that involve more than one key; ``values`` is complete and checked."""
    systems = [f'gnss.constellations.{s}' for s in ('gps', 'galileo', 'glonass')]
    if not any(values[s] for s in systems):
        where = sorted({sources[s] for s in systems if sources[s] != 'default'})
        raise ConfigError('gnss.constellations: all systems are off'
                          f"{_where(', '.join(where))}; allowed: at least one of "
                          'gps, galileo, glonass set to true')
