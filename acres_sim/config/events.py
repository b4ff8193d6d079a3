"""Fault events and their zones: the ``events:`` and ``zones:`` of a scenario,
an event given on the command line (``--event``) or injected into a running
rig, checked into one :class:`EventPlan` per run.

A zone is a polygon or a circle in grid ENU metres, optionally with a band of
heights::

    zones:
      barn: {polygon: [[-60, 20], [-20, 20], [-20, 60], [-60, 60]]}
      pond: {center: [150, -40], radius_m: 25, z_max_m: 5}

An event has a type (:data:`EVENT_TYPES`), a name (default ``<type>_<i>``),
the vehicles it applies to (default: all), when it is active and the
parameters of its type::

    events:
      - type: gnss_denial
        zone: barn                 # active while the vehicle is inside (enter .. leave)
      - type: corrections
        name: rtk_loss
        vehicles: [polaris]
        start_s: 120               # from a sim time ...
        duration_s: 90             # ... for a duration (or end_s, or end_zone)
        outage: true
      - type: imu_bias
        start_zone: {center: [0, 0], radius_m: 10}   # or an inline zone
        accel_mps2: [0.05, 0, 0]

Start: ``start_s`` (default 0) or ``start_zone`` (on entering it; again at
every entry); end: ``end_s``, ``duration_s``, ``end_zone`` (on leaving it),
or none (never); ``zone`` is the short form of start_zone and end_zone alike.
A ``teleport`` happens once at its ``start_s``.  A vehicle is in a zone when
its chassis origin is.  Every mistake is one ConfigError naming the item.
"""

from dataclasses import dataclass, replace
import json
import math
from typing import NamedTuple, Optional

import yaml

from acres_sim.config.schema import NON_BLANK, Key
from acres_sim.config.validate import ConfigError, check, check_keys, missing, value_error
from acres_sim.core import events as ev
from acres_sim.core.event_clock import AFTER, AT_TIME, NEVER, ON_ENTER, ON_LEAVE, make_event_times
from acres_sim.core.gnss.fix_state import STATE_NAMES
from acres_sim.core.zones import make_zones
from acres_sim.core.truth import PHYSICS_HZ

__all__ = ['EVENT_KEYS', 'EVENT_TYPES', 'EventPlan', 'EventSpec', 'MAX_EVENTS', 'TYPE_KEYS',
           'ZONE_KEYS', 'clear', 'inject', 'no_plan', 'parse_event',
           'plan_of_parameter',
           'read_events', 'replay', 'REQUIRED']

MAX_EVENTS = 1000
MAX_ZONES = 1000
MAX_ZONE_CORNERS = 10000
TIME_LIMIT_S = 1e9
COORD_LIMIT_M = 1e6
SENSOR_BITS = {'gnss': ev.SENSOR_GNSS, 'imu': ev.SENSOR_IMU, 'ins': ev.SENSOR_INS}
EVENT_TYPES = ev.KINDS
_NAME = r'[A-Za-z][A-Za-z0-9_\-]*'


def _table(*keys):
    return {k.name: k for k in keys}


# The fields every event has.
EVENT_KEYS = _table(
    Key('type', 'str', None, 'What the event does.', choices=EVENT_TYPES),
    Key('name', 'str', None, 'Its name in rows, logs and reports (default <type>_<i>).',
        pattern=_NAME, pattern_words='a letter, then letters, digits, _ or -'),
    Key('vehicles', 'names', None, 'The vehicles it applies to, by name (default: all).'),
    Key('start_s', 'float', 0.0, 'Sim time it starts at.', 's', low=0.0, high=TIME_LIMIT_S),
    Key('end_s', 'float', None, 'Sim time it ends at.', 's', low=0.0, high=TIME_LIMIT_S),
    Key('duration_s', 'float', None, 'How long it lasts once started.', 's', low=0.0,
        low_open=True, high=TIME_LIMIT_S),
    Key('zone', 'str', None, 'Active while the vehicle is inside this zone.', pattern=NON_BLANK,
        pattern_words='a zone name or an inline zone'),
    Key('start_zone', 'str', None, 'Starts when the vehicle enters this zone.',
        pattern=NON_BLANK, pattern_words='a zone name or an inline zone'),
    Key('end_zone', 'str', None, 'Ends when the vehicle leaves this zone.', pattern=NON_BLANK,
        pattern_words='a zone name or an inline zone'),
    Key('cleared_s', 'float', None, 'Sim time from which it is never active (an event '
        'cleared at runtime, as episode.json and the event log say).', 's', low=0.0,
        high=TIME_LIMIT_S),
)
_TIMING = ('start_s', 'end_s', 'duration_s', 'zone', 'start_zone', 'end_zone')

# The fields of a zone.
ZONE_KEYS = _table(
    Key('polygon', 'str', None, 'Corners [[east, north], ...] of a polygon (at least 3).',
        pattern=NON_BLANK, pattern_words='a list of at least 3 [east, north] pairs'),
    Key('center', 'vec2', None, 'Centre [east, north] of a circle.', 'm', low=-COORD_LIMIT_M,
        high=COORD_LIMIT_M),
    Key('radius_m', 'float', None, 'Radius of a circle.', 'm', low=0.0, low_open=True,
        high=COORD_LIMIT_M),
    Key('z_min_m', 'float', None, 'Lowest height it covers (default: none).', 'm',
        low=-COORD_LIMIT_M, high=COORD_LIMIT_M),
    Key('z_max_m', 'float', None, 'Highest height it covers (default: none).', 'm',
        low=-COORD_LIMIT_M, high=COORD_LIMIT_M),
)
_CORNER = Key('polygon', 'vec2', None, 'A corner.', 'm', low=-COORD_LIMIT_M, high=COORD_LIMIT_M)


def _vec3(name, default, description, unit, low=-1e6, high=1e6):
    return Key(name, 'vec3', default, description, unit, low=low, high=high)


# The parameters of each type, with their defaults.
TYPE_KEYS = {
    'gnss_denial': _table(
        Key('azimuth_deg', 'vec2', None, 'Sector [from, to] of the sky taken away, clockwise '
            'from grid north (default: all of it).', 'deg', low=0.0, high=360.0),
        Key('below_elevation_deg', 'float', 90.0, 'Satellites below this elevation are taken '
            'away (90: every one).', 'deg', low=0.0, high=90.0)),
    'jamming': _table(
        Key('j_over_s_db', 'float', 30.0, 'Jammer-to-signal ratio at the antenna.', 'dB',
            low=-30.0, high=100.0)),
    'corrections': _table(
        Key('outage', 'bool', False, 'No correction messages arrive.'),
        Key('latency_s', 'float', None, 'The latency of the messages meanwhile.', 's',
            low=0.0, high=600.0),
        Key('baseline_km', 'float', None, 'The baseline to the base station switched to (the '
            'RTK lock is lost at the switch and at the switch back).', 'km', low=0.0,
            high=1000.0)),
    'fix_cap': _table(
        Key('state', 'str', None, 'The best fix state reported.', choices=STATE_NAMES)),
    'multipath': _table(
        Key('reflector_index', 'float', 0.5, 'Added to the reflector index.', low=0.0,
            high=10.0)),
    'glitch': _table(
        _vec3('offset_enu_m', [0.0, 0.0, 0.0], 'Offset added to the position.', 'm'),
        _vec3('drift_enu_mps', [0.0, 0.0, 0.0], 'Drift of the offset since the start.', 'm/s',
              low=-1e3, high=1e3)),
    'dropout': _table(
        Key('sensors', 'names', None, 'The sensors that publish nothing: gnss, imu, ins.')),
    'freeze': _table(
        Key('sensors', 'names', None, 'The sensors that repeat their last output: gnss, imu, '
            'ins.')),
    'imu_bias': _table(
        _vec3('accel_mps2', [0.0, 0.0, 0.0], 'Accelerometer bias step, body FLU.', 'm/s^2',
              low=-1e3, high=1e3),
        _vec3('gyro_radps', [0.0, 0.0, 0.0], 'Gyroscope bias step, body FLU.', 'rad/s',
              low=-1e2, high=1e2)),
    'imu_bias_ramp': _table(
        _vec3('accel_mps2_per_s', [0.0, 0.0, 0.0], 'Accelerometer bias rate.', 'm/s^3',
              low=-1e2, high=1e2),
        _vec3('gyro_radps_per_s', [0.0, 0.0, 0.0], 'Gyroscope bias rate.', 'rad/s^2',
              low=-1e1, high=1e1)),
    'imu_scale': _table(
        _vec3('accel', [1.0, 1.0, 1.0], 'Accelerometer scale factors.', '', low=-100.0,
              high=100.0),
        _vec3('gyro', [1.0, 1.0, 1.0], 'Gyroscope scale factors.', '', low=-100.0, high=100.0)),
    'imu_saturation': _table(
        Key('accel_mps2', 'float', None, 'Accelerometer range: outputs clip at +-this.',
            'm/s^2', low=0.0, low_open=True, high=1e4),
        Key('gyro_radps', 'float', None, 'Gyroscope range: outputs clip at +-this.', 'rad/s',
            low=0.0, low_open=True, high=1e3)),
    'teleport': _table(
        Key('east_m', 'float', None, 'Grid east of the pose.', 'm', low=-1e5, high=1e5),
        Key('north_m', 'float', None, 'Grid north of the pose.', 'm', low=-1e5, high=1e5),
        Key('heading_deg', 'float', 0.0, 'Heading, counter-clockwise from grid east.', 'deg',
            low=-360.0, high=360.0)),
    'stop': {},
}
REQUIRED = {'fix_cap': ('state',), 'dropout': ('sensors',), 'freeze': ('sensors',),
             'teleport': ('east_m', 'north_m')}


class EventSpec(NamedTuple):
    """One event, checked: when (``start``: ('time', s) or ('enter', zone
    index); ``end``: ('time', s), ('after', s), ('leave', zone index) or
    ('never', None)), for whom (``vehicles``: names, None = all) and its
    parameters as given with the defaults filled in (``params``)."""

    name: str
    type: str
    vehicles: Optional[tuple]
    start: tuple
    end: tuple
    params: dict
    cleared_s: Optional[float] = None     # cleared at runtime from this sim time on

    def applies_to(self, vehicle) -> bool:
        return self.vehicles is None or vehicle in self.vehicles

    def entry(self, zones) -> dict:
        """The event as a plain mapping (JSON), its zones written out."""
        out = {'name': self.name, 'type': self.type}
        if self.vehicles is not None:
            out['vehicles'] = list(self.vehicles)
        kind, value = self.start
        out.update({'start_s': value} if kind == 'time' else {'start_zone': zones[value]})
        kind, value = self.end
        if kind == 'time':
            out['end_s'] = value
        elif kind == 'after' and self.type != 'teleport':
            out['duration_s'] = value
        elif kind == 'leave':
            out['end_zone'] = zones[value]
        out.update(self.params)
        if self.cleared_s is not None:
            out['cleared_s'] = self.cleared_s
        return out


@dataclass(frozen=True)
class EventPlan:
    """The events of a run and the zones they use (``zones``: plain mappings,
    the form :func:`acres_sim.core.zones.make_zones` takes)."""

    events: tuple = ()
    zones: tuple = ()
    zone_names: tuple = ()      # (name, index in zones) of the named ones

    def __bool__(self):
        return bool(self.events)

    def for_vehicle(self, vehicle) -> ev.VehicleEvents:
        """The core record of the events of ``vehicle`` (a vehicle name; None:
        every event, as in a node's plan of its own vehicle)."""
        mine = [e for e in self.events if vehicle is None or e.applies_to(vehicle)]
        rows, effects = [], []
        for e in mine:
            start_kind, start = (AT_TIME, e.start[1]) if e.start[0] == 'time' else \
                (ON_ENTER, e.start[1])
            end_kind = {'time': AT_TIME, 'after': AFTER, 'leave': ON_LEAVE,
                        'never': NEVER}[e.end[0]]
            rows.append((start_kind, start, end_kind, e.end[1]))
            effects.append((EVENT_TYPES.index(e.type), _params(e.type, e.params)))
        times = make_event_times(rows, len(self.zones))
        for i, e in enumerate(mine):
            if e.cleared_s is not None:
                times.clear_s[i] = e.cleared_s
        return ev.VehicleEvents(times, make_zones(self._core_zones()), ev.make_effects(effects),
                                [e.name for e in mine])

    def _core_zones(self):
        out = []
        for z in self.zones:
            item = {'polygon': z['polygon']} if 'polygon' in z else \
                {'center': z['center'], 'radius': z['radius_m']}
            if 'z_min_m' in z:
                item['z_min'] = z['z_min_m']
            if 'z_max_m' in z:
                item['z_max'] = z['z_max_m']
            out.append(item)
        return out

    def named_zones(self) -> list:
        """Every zone of the plan with a name (an inline one: the event's name)."""
        names = {index: name for name, index in self.zone_names}
        for e in self.events:
            for kind, value in (e.start, e.end):
                if kind in ('enter', 'leave'):
                    names.setdefault(value, e.name)
        return [{'name': names.get(i, f'zone {i}'), **z} for i, z in enumerate(self.zones)]

    def entries(self) -> list:
        """Every event as a plain mapping (episode.json, the node parameter)."""
        zones = [dict(z) for z in self.zones]
        return [e.entry(zones) for e in self.events]

    def to_json(self, vehicle=None, leave_out=()) -> str:
        """The plan as one JSON text that :func:`plan_of_parameter` reads back;
        with ``vehicle``, only the events of that vehicle (for its nodes'
        ``events`` parameter; '' when it has none); without the events named in
        ``leave_out``."""
        entries = [entry for entry, e in zip(self.entries(), self.events)
                   if e.name not in leave_out]
        if vehicle is not None:
            entries = [{k: v for k, v in entry.items() if k != 'vehicles'}
                       for entry, e in zip(self.entries(), self.events)
                       if e.applies_to(vehicle) and e.name not in leave_out]
            if not entries:
                return ''
        return json.dumps({'events': entries}, sort_keys=True)


def no_plan() -> EventPlan:
    return EventPlan()


# --------------------------------------------------------------------------- at runtime

SOURCE_INJECTED = 'events/inject'


def inject(plan, event, step, vehicle_names, source=SOURCE_INJECTED):
    """An event injected into a running rig whose next step to compute is
    ``step``: (its log entry, the plan with it).  It starts at its ``start_s``
    (a future sim time; at or after the step's) or else at that step; it must
    start and end by time (a zone's entries before the injection are not on
    record).  ConfigError for a bad one: the plan is unchanged."""
    now = step / PHYSICS_HZ
    if not isinstance(event, dict):
        raise value_error('event', event, 'expected a mapping', 'an event: a mapping with '
                          'type and its parameters', source)
    for key in ('zone', 'start_zone', 'end_zone'):
        if key in event:
            raise value_error(f'event.{key}', event[key], 'an injected event runs by time',
                              'start_s, end_s or duration_s', source)
    if 'start_s' in event and isinstance(event['start_s'], (int, float)) \
            and not isinstance(event['start_s'], bool) and event['start_s'] < now:
        raise value_error('event.start_s', event['start_s'], 'in the past',
                          f'a sim time from {now:.6g} s on (the next step the sim computes), '
                          'or none: at once', source)
    event = dict(event)
    event.setdefault('start_s', now)
    new = read_events([event], None, source, vehicle_names, plan=plan)
    spec = new.events[-1]
    spec = spec._replace(vehicles=spec.vehicles or tuple(vehicle_names))
    new = replace(new, events=new.events[:-1] + (spec,))
    return {'log': 'inject', 'step': int(step), 'event': spec.entry(list(new.zones))}, new


def clear(plan, name, step, source=SOURCE_INJECTED):
    """Clear the event ``name`` from ``step`` on (it is never active again):
    (the log entry, the plan with it cleared)."""
    names = [e.name for e in plan.events]
    if name not in names:
        raise value_error('clear', name, 'no such event in the run',
                          ', '.join(names) or 'none: the run has no events', source)
    i = names.index(name)
    spec = plan.events[i]
    if spec.cleared_s is not None:
        raise value_error('clear', name, f'cleared already at {spec.cleared_s:g} s',
                          'an event not yet cleared', source)
    spec = spec._replace(cleared_s=step / PHYSICS_HZ)
    events = plan.events[:i] + (spec,) + plan.events[i + 1:]
    vehicles = list(spec.vehicles) if spec.vehicles is not None else None
    return ({'log': 'clear', 'step': int(step), 'name': name, 'vehicles': vehicles},
            replace(plan, events=events))


def replay(plan, entries, vehicle_names, source):
    """The plan of a run repeated from its event log: ``plan`` (the
    scenario's) with the log's injections and clears (``entries``: the log's
    mappings, in order; scenario and refused entries are passed over)."""
    for i, entry in enumerate(entries):
        kind = entry.get('log') if isinstance(entry, dict) else None
        if kind == 'inject':
            plan = read_events([entry['event']], None, source, vehicle_names, plan=plan)
        elif kind == 'clear':
            plan = clear(plan, entry['name'], entry['step'], source)[1]
        elif kind not in ('scenario', 'refused'):
            raise ConfigError(f'{source}: log entry {i} is not an event log entry: {entry!r:.80}')
    return plan


def _params(kind, p) -> list:
    """The core parameter row of an event (events.P_* columns)."""
    if kind == 'gnss_denial':
        sector = p.get('azimuth_deg') or [math.nan, math.nan]
        return [sector[0], sector[1], p['below_elevation_deg']]
    if kind == 'jamming':
        return [p['j_over_s_db']]
    if kind == 'corrections':
        return [1.0 if p['outage'] else 0.0, _nan(p.get('latency_s')), _nan(p.get('baseline_km'))]
    if kind == 'fix_cap':
        return [STATE_NAMES.index(p['state'])]
    if kind == 'multipath':
        return [p['reflector_index']]
    if kind == 'glitch':
        return list(p['offset_enu_m']) + list(p['drift_enu_mps'])
    if kind in ('dropout', 'freeze'):
        return [sum(SENSOR_BITS[s] for s in p['sensors'])]
    if kind == 'imu_bias':
        return list(p['accel_mps2']) + list(p['gyro_radps'])
    if kind == 'imu_bias_ramp':
        return list(p['accel_mps2_per_s']) + list(p['gyro_radps_per_s'])
    if kind == 'imu_scale':
        return list(p['accel']) + list(p['gyro'])
    if kind == 'imu_saturation':
        return [_inf(p.get('accel_mps2')), _inf(p.get('gyro_radps'))]
    if kind == 'teleport':
        return [p['east_m'], p['north_m'], math.radians(p['heading_deg'])]
    return []


def _nan(x):
    return math.nan if x is None else float(x)


def _inf(x):
    return math.inf if x is None else float(x)


# --------------------------------------------------------------------------- reading


def _zone(value, item, source) -> dict:
    """A zone mapping, checked, in its normal form."""
    check_keys(value, tuple(ZONE_KEYS), item, source)
    out = {}
    if 'polygon' in value:
        if 'center' in value or 'radius_m' in value:
            raise value_error(f'{item}.polygon', value['polygon'], 'given with a circle',
                              'a polygon or a circle (center and radius_m), not both', source)
        corners = value['polygon']
        if not isinstance(corners, list) or len(corners) < 3 \
                or len(corners) > MAX_ZONE_CORNERS:
            raise value_error(f'{item}.polygon', corners,
                              f'{len(corners) if isinstance(corners, list) else 0} corners',
                              ZONE_KEYS['polygon'].allowed() + f' (at most {MAX_ZONE_CORNERS})',
                              source)
        out['polygon'] = [check(_CORNER, c, source, f'{item}.polygon[{i}]')
                          for i, c in enumerate(corners)]
    elif 'center' in value:
        if 'radius_m' not in value:
            raise missing(ZONE_KEYS['radius_m'], source, f'{item}.radius_m')
        out['center'] = check(ZONE_KEYS['center'], value['center'], source, f'{item}.center')
        out['radius_m'] = check(ZONE_KEYS['radius_m'], value['radius_m'], source,
                                f'{item}.radius_m')
    else:
        raise value_error(item, value, 'neither a polygon nor a circle',
                          'a mapping with polygon, or with center and radius_m', source)
    for name in ('z_min_m', 'z_max_m'):
        if name in value:
            out[name] = check(ZONE_KEYS[name], value[name], source, f'{item}.{name}')
    if out.get('z_min_m', -math.inf) >= out.get('z_max_m', math.inf):
        raise value_error(f'{item}.z_max_m', out['z_max_m'], 'not above z_min_m',
                          f'more than z_min_m = {out["z_min_m"]} m', source)
    return out


class _Zones:
    """The zones of a plan while it is read: named ones and inline ones."""

    def __init__(self, named, source, given=(), given_names=()):
        self.items = list(given)
        self.names = dict(given_names)
        if named is None:
            return
        if not isinstance(named, dict):
            raise value_error('zones', named, 'expected a mapping', 'a mapping of zone names '
                              'to zones', source)
        if len(named) > MAX_ZONES:
            raise value_error('zones', f'{len(named)} zones', 'too many',
                              f'at most {MAX_ZONES}', source)
        for name, value in named.items():
            check(EVENT_KEYS['name'], name, source, f'zones.{name}')
            self.names[name] = len(self.items)
            self.items.append(_zone(value, f'zones.{name}', source))

    def index(self, value, item, source) -> int:
        if isinstance(value, dict):
            self.items.append(_zone(value, item, source))
            return len(self.items) - 1
        if isinstance(value, str) and value in self.names:
            return self.names[value]
        known = ', '.join(self.names) or 'none'
        raise value_error(item, value, 'not a zone of the scenario',
                          f'a zone name ({known}) or an inline zone', source)


def _event(entry, i, zones, vehicle_names, source) -> EventSpec:
    item = f'events[{i}]'
    if not isinstance(entry, dict):
        raise value_error(item, entry, 'expected a mapping', 'a mapping with type and its '
                          'parameters', source)
    if 'type' not in entry:
        raise missing(EVENT_KEYS['type'], source, f'{item}.type')
    kind = check(EVENT_KEYS['type'], entry['type'], source, f'{item}.type')
    own = TYPE_KEYS[kind]
    check_keys(entry, tuple(EVENT_KEYS) + tuple(own), item, source)
    name = check(EVENT_KEYS['name'], entry.get('name', f'{kind}_{i}'), source, f'{item}.name')
    vehicles = None
    if 'vehicles' in entry:
        vehicles = tuple(check(EVENT_KEYS['vehicles'], entry['vehicles'], source,
                               f'{item}.vehicles'))
        for v in vehicles:
            if vehicle_names is not None and v not in vehicle_names:
                raise value_error(f'{item}.vehicles', v, 'no such vehicle in the run',
                                  ', '.join(vehicle_names), source)
    start, end = _timing(entry, kind, item, zones, source)
    params = {}
    for key, k in own.items():
        if key in entry:
            params[key] = check(k, entry[key], source, f'{item}.{key}')
        elif key in REQUIRED.get(kind, ()):
            raise missing(k, source, f'{item}.{key}')
        elif k.default is not None:
            params[key] = k.default
    _check_params(kind, params, item, source)
    cleared = (check(EVENT_KEYS['cleared_s'], entry['cleared_s'], source, f'{item}.cleared_s')
               if 'cleared_s' in entry else None)
    return EventSpec(name, kind, vehicles, start, end, params, cleared)


def _timing(entry, kind, item, zones, source):
    given = [k for k in _TIMING if k in entry]
    values = {k: check(EVENT_KEYS[k], entry[k], source, f'{item}.{k}')
              for k in given if not k.endswith('zone')}
    if kind == 'teleport':
        extra = [k for k in given if k != 'start_s']
        if extra:
            raise value_error(f'{item}.{extra[0]}', entry[extra[0]], 'a teleport happens once',
                              'start_s only', source)
        return ('time', values.get('start_s', 0.0)), ('after', 1.0 / PHYSICS_HZ)
    if 'zone' in entry and ('start_zone' in entry or 'end_zone' in entry):
        raise value_error(f'{item}.zone', entry['zone'], 'given with start_zone or end_zone',
                          'zone, or start_zone and end_zone', source)
    starts = [k for k in ('start_s', 'start_zone', 'zone') if k in entry]
    ends = [k for k in ('end_s', 'duration_s', 'end_zone') if k in entry]
    if len(starts) > 1 and 'zone' not in starts:
        raise value_error(f'{item}.{starts[1]}', entry[starts[1]], f'given with {starts[0]}',
                          'one start: start_s or start_zone', source)
    if len(ends) > 1:
        raise value_error(f'{item}.{ends[1]}', entry[ends[1]], f'given with {ends[0]}',
                          'one end: end_s, duration_s or end_zone', source)
    if 'zone' in entry and 'start_s' in entry:
        raise value_error(f'{item}.start_s', entry['start_s'], 'given with zone',
                          'zone (active while inside), or start_s', source)
    if 'zone' in entry:
        z = zones.index(entry['zone'], f'{item}.zone', source)
        start = ('enter', z)
        end = ('leave', z) if not ends else None
    elif 'start_zone' in entry:
        start = ('enter', zones.index(entry['start_zone'], f'{item}.start_zone', source))
        end = None
    else:
        start = ('time', values.get('start_s', 0.0))
        end = None
    if end is None:
        if 'end_s' in values:
            if start[0] == 'time' and not values['end_s'] > start[1]:
                raise value_error(f'{item}.end_s', values['end_s'], 'not after its start',
                                  f'more than start_s = {start[1]} s', source)
            end = ('time', values['end_s'])
        elif 'duration_s' in values:
            end = ('after', values['duration_s'])
        elif 'end_zone' in entry:
            end = ('leave', zones.index(entry['end_zone'], f'{item}.end_zone', source))
        else:
            end = ('never', None)
    return start, end


def _check_params(kind, params, item, source):
    """What one parameter cannot say on its own."""
    if kind in ('dropout', 'freeze'):
        for s in params['sensors']:
            if s not in SENSOR_BITS:
                raise value_error(f'{item}.sensors', s, 'not a sensor', 'gnss, imu, ins', source)
    if kind == 'corrections' and not params['outage'] and 'latency_s' not in params \
            and 'baseline_km' not in params:
        raise value_error(item, 'corrections', 'does nothing',
                          'outage: true, latency_s or baseline_km', source)
    if kind == 'imu_saturation' and not params:
        raise value_error(item, 'imu_saturation', 'does nothing', 'accel_mps2 or gyro_radps',
                          source)


def read_events(events, zones=None, source=None, vehicle_names=None,
                plan: EventPlan = None) -> EventPlan:
    """The plan of a scenario's ``events`` (a list) and ``zones`` (a mapping),
    both as read from its file (None: none); ``vehicle_names``: the run's
    vehicles (None: not checked).  With ``plan``, the events are added to it
    (its zones kept, names unique across both)."""
    base = plan or no_plan()
    table = _Zones(zones, source, base.zones, base.zone_names)
    if events is None:
        events = []
    if not isinstance(events, list):
        raise value_error('events', events, 'expected a list', 'a list of events', source)
    if len(events) + len(base.events) > MAX_EVENTS:
        raise value_error('events', f'{len(events)} events', 'too many',
                          f'at most {MAX_EVENTS}', source)
    offset = len(base.events)
    specs = list(base.events)
    names = {e.name for e in specs}
    for i, entry in enumerate(events):
        spec = _event(entry, offset + i, table, vehicle_names, source)
        if spec.name in names:
            raise value_error(f'events[{offset + i}].name', spec.name, 'used twice',
                              'a name of its own', source)
        names.add(spec.name)
        specs.append(spec)
    return EventPlan(tuple(specs), tuple(table.items), tuple(table.names.items()))


def plan_of_parameter(text, name='events') -> EventPlan:
    """The events of a node's parameter ``name``: the JSON of
    :meth:`EventPlan.to_json` for its vehicle ('' none)."""
    if not text.strip():
        return no_plan()
    try:
        tree = json.loads(text)
    except ValueError as err:
        raise ConfigError(f'parameter {name}: not JSON ({err}); the rig writes it '
                          'from the scenario\'s events') from None
    if not isinstance(tree, dict) or set(tree) != {'events'}:
        raise value_error(name, text, 'not an event plan', '{"events": [...]}',
                          f'parameter {name}')
    return read_events(tree['events'], None, f'parameter {name}')


def parse_event(text, source='command line'):
    """One event (or a list of them) from YAML or JSON text, e.g. of ``--event``
    or ``acres-sim inject``: the list :func:`read_events` takes."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        at = f' at column {mark.column + 1}' if mark is not None else ''
        raise ConfigError(f'event {text!r} ({source}): not YAML{at}; write e.g. '
                          "'{type: fix_cap, state: dgps, start_s: 60}'") from None
    return value if isinstance(value, list) else [value]
