"""Scenario files: everything one run needs, for both drivers -- the vehicles
(model, names, spawn pose, route and how it is driven, sensor keys), the
scene, the site, the duration, the seed and the real-time factor -- read and
checked into plain records (:class:`Scenario`, :class:`ScenarioVehicle`).
``acres-sim up`` and the launch files turn a scenario into nodes
(:mod:`acres_sim.rig`); the recorder takes its vehicles the same way.

The rig files of ``config/rigs/`` are scenarios that give only their
vehicles; packaged scenarios live in ``config/scenarios/``.  A scenario file
is YAML (JSON works too)::

    description: A Polaris and two Maxxums.
    site: my_site.yaml          # optional: the site file (default: the packaged site.yaml)
    scene: my_scene.yaml        # optional: the scene file (default: the ACRE farmstead)
    terrain: acre               # optional: flat (the default), a packaged terrain or a file
    duration_s: 3600.0          # optional: simulated seconds
    seed: 42                    # optional: the seed of every vehicle
    rtf: 1.0                    # optional: real-time factor of a live run
    zones: {barn: {polygon: [[-60, 20], [-20, 20], [-20, 60]]}}   # optional: event zones
    events: [{type: gnss_denial, zone: barn}]   # optional: fault events (config.events)
    sweep: {seeds: 1-20, grid: {terrain: [flat, acre]}}  # optional: acres-sim sweep's
                                                         # seeds and grid (config.sweep_plan)
    vehicles:
      - name: polaris           # the vehicle's key in the sim node's parameters
        model: polaris          # polaris or maxxum (``vehicle:`` in the rig files)
        namespace: polaris      # ROS namespace of its topics ("" = none)
        frame_prefix: polaris/  # prefix of its frame names
        agent_index: 0          # its seed offsets: 7919 * index per noise stream
        spawn: {east_m: 50.0, north_m: 100.0, heading_deg: 0.0}
        route: {name: loop, repeat: true}
        sensors: {gnss: {hz: 5.0}}
      - model: maxxum
        spawn: {lat_deg: 40.4712, lon_deg: -86.9934, heading_deg: 90.0}
        parked: true            # no route: parked until its first cmd_vel

``route`` is a packaged route name or a route file, or a mapping with
``name`` and ``laps: N`` (N laps, then parked where it started) or ``repeat:
true`` (until the run ends); laps need a closed route.  Without either the
vehicle drives the route once and parks at its end.  A spawn is in grid ENU
metres, or a latitude and longitude (``frame``: wgs84_g2139 by default,
nad83_2011 or nad83_harn) converted with the run's site georeference, with a
heading in degrees counter-clockwise from grid east.  A vehicle that follows
a route spawns on it (its start) unless it has a spawn, which must lie within
:data:`JOIN_WITHIN_M` of the route: it joins it at the closest point.
Relative file names are relative to the scenario file.

Vehicles without a spawn of their own that drive the same route (the copies
of ``--agents`` too) are placed one behind the other along it,
:func:`spacing_m` apart; on a route they drive once, each stops that far
behind the one ahead.  Parked ones stand side by side.  No two spawns may be
closer than the longer vehicle's length.  Every mistake is one
:class:`ConfigError` naming the item, the value, what is allowed and the file.
"""

from dataclasses import dataclass, field, replace
import math
import os
from pathlib import Path
import re
from typing import NamedTuple, Optional

from acres_sim.config.events import EventPlan, read_events
from acres_sim.config.loader import config_dir, load_config, read_document
from acres_sim.config.node_params import AGENT_PARAMS, VEHICLES, sim_param
from acres_sim.config.records import site_georeference_args
from acres_sim.config.routes import DEFAULT_ROUTES, load_route
from acres_sim.config.schema import NON_BLANK, Key
from acres_sim.config.sweep_plan import SweepPlan, read_sweep_block
from acres_sim.config.terrain import terrain_argument
from acres_sim.config.validate import (ConfigError, check, check_keys, check_value, missing,
                                       value_error)
from acres_sim.core.geo.site import FRAMES, SiteGeoreference
from acres_sim.core.routes import RouteFollower

__all__ = ['DEFAULT_ROUTES', 'ENTRY_KEYS', 'JOIN_WITHIN_M', 'MAX_AGENTS', 'MAX_DURATION_S',
           'Motion', 'SCENARIO_KEYS', 'SPAWN_KEYS', 'SPAWN_MARGIN_M', 'Scenario',
           'ScenarioVehicle', 'Spawn', 'VEHICLE_LENGTH_M', 'VEHICLE_ROUTE_KEYS',
           'load_scenario', 'node_parameters', 'packaged_names', 'read_scenario',
           'resolve_scenario', 'run_site', 'scenario_path', 'spacing_m', 'vehicle_config',
           'vehicle_copies', 'vehicle_motion', 'vehicle_of_parameters']

MAX_AGENTS = 100                  # vehicles of one scenario (each a sim agent and two nodes)
MAX_DURATION_S = 7 * 86400.0      # a run of record or up: a week at most
# Overall length of each model [m]: the Polaris Ranger XP 900/1000 is 3.05 m
# (Polaris' published 120 in); the Maxxum's box of config/vehicles/maxxum.yaml, 4.6 m.
VEHICLE_LENGTH_M = {'polaris': 3.05, 'maxxum': 4.6}
SPAWN_MARGIN_M = 5.0              # between vehicles placed one behind the other [m]
JOIN_WITHIN_M = 20.0              # a spawn off the route's start: at most this far from it [m]
PACKAGED_FOLDERS = ('rigs', 'scenarios')

_TOP_KEYS = ('description', 'site', 'scene', 'terrain', 'duration_s', 'seed', 'rtf',
             'vehicles', 'zones', 'events', 'sweep')
_VEHICLE_KEYS = ('name', 'model', 'vehicle', 'namespace', 'frame_prefix', 'agent_index',
                 'spawn', 'route', 'parked', 'sensors')
_GRID_SPAWN = ('east_m', 'north_m', 'heading_deg')
_GEODETIC_SPAWN = ('lat_deg', 'lon_deg', 'heading_deg', 'frame')
NAMESPACE_PATTERN = re.compile(r'^(|[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*)$')
_FILE_SUFFIXES = ('.yaml', '.yml', '.json')
MAX_LAPS = 100000
SPAWN_LIMIT_M = 1e5               # |east|, |north| of a spawn: within 100 km of the tile origin
_ROUTE_WORDS = 'a packaged route name or a route file'


def _table(*keys):
    return {k.name: k for k in keys}


# The settings of the run (the seed and rtf are the sensor key and the sim
# node parameter of those names).
SCENARIO_KEYS = _table(
    Key('description', 'str', '', 'What the scenario is.'),
    Key('site', 'str', '', 'The site file, relative to the scenario file (default: the '
        'packaged site.yaml).', pattern=NON_BLANK, pattern_words='a file name'),
    Key('scene', 'str', '', 'The scene file, relative to the scenario file (default: the '
        'ACRE farmstead).', pattern=NON_BLANK, pattern_words='a file name'),
    Key('terrain', 'str', '', 'The ground under the wheels: flat, a packaged terrain (acre) '
        'or a terrain file, relative to the scenario file (default: flat).',
        pattern=NON_BLANK, pattern_words='flat, a packaged terrain name or a terrain file'),
    Key('duration_s', 'float', None, 'Simulated time of the run.', 's', low=0.0,
        high=MAX_DURATION_S),
)
# The fields of an entry of ``vehicles`` (``spawn`` and ``sensors`` are
# mappings; ``route`` a route name or the mapping of VEHICLE_ROUTE_KEYS).
ENTRY_KEYS = _table(
    Key('name', 'str', None, "The vehicle's key in the sim node's parameters (default: "
        'agent<i>).', pattern=r'[A-Za-z][A-Za-z0-9_]*',
        pattern_words='a letter, then letters, digits or _'),
    Key('model', 'str', None, 'Vehicle model (vehicle: its old name in rig files).',
        choices=VEHICLES),
    Key('namespace', 'str', '', 'ROS namespace of its topics.',
        pattern=NAMESPACE_PATTERN.pattern,
        pattern_words='empty, or names of letters, digits and _ joined by /'),
    Key('frame_prefix', 'str', '', 'Prefix of its frame names.',
        pattern=r'|[A-Za-z][A-Za-z0-9_]*/', pattern_words="empty, or a name followed by '/', "
        'e.g. agent1/'),
    Key('agent_index', 'int', None, 'Its seed offsets: 7919 times the index per noise stream '
        '(default: its place in the list).', low=0, high=10**6),
    Key('parked', 'bool', False, 'No route: parked until its first cmd_vel.'),
    Key('route', 'str', '', "The route it drives (default: the model's).", pattern=NON_BLANK,
        pattern_words=_ROUTE_WORDS),
)
# The mapping form of a vehicle's route.
VEHICLE_ROUTE_KEYS = _table(
    Key('name', 'str', None, 'The route.', pattern=NON_BLANK, pattern_words=_ROUTE_WORDS),
    Key('laps', 'int', 0, 'Laps of a closed route, then parked where it started.', low=1,
        high=MAX_LAPS),
    Key('repeat', 'bool', False, 'Drive a closed route until the run ends.'),
)
# A spawn: grid (east_m, north_m) or geodetic (lat_deg, lon_deg, frame), and a heading.
SPAWN_KEYS = _table(
    Key('east_m', 'float', None, 'Grid east of the spawn.', 'm', low=-SPAWN_LIMIT_M,
        high=SPAWN_LIMIT_M),
    Key('north_m', 'float', None, 'Grid north of the spawn.', 'm', low=-SPAWN_LIMIT_M,
        high=SPAWN_LIMIT_M),
    Key('heading_deg', 'float', None, 'Heading, counter-clockwise from grid east.', 'deg',
        low=-360.0, high=360.0),
    Key('lat_deg', 'float', None, 'Latitude of the spawn.', 'deg', low=-90.0, high=90.0),
    Key('lon_deg', 'float', None, 'Longitude of the spawn.', 'deg', low=-180.0, high=180.0),
    Key('frame', 'str', 'wgs84_g2139', 'Frame of the latitude and longitude.',
        choices=tuple(FRAMES)),
)


class Spawn(NamedTuple):
    """A pose on the tile: the chassis origin's ground point in grid ENU [m] and
    the heading [rad] counter-clockwise from grid east (a row of Fleet's poses)."""

    east_m: float
    north_m: float
    yaw_rad: float


class GeodeticSpawn(NamedTuple):
    """A spawn as a scenario file gives it in latitude and longitude; turned
    into a :class:`Spawn` with the run's site georeference."""

    lat_deg: float
    lon_deg: float
    heading_deg: float
    frame: str = 'wgs84_g2139'


@dataclass(frozen=True)
class ScenarioVehicle:
    """One vehicle of a scenario.  Read from a file, ``spawn`` is what it gave
    (None: on the route); resolved (:func:`resolve_scenario`) it is the
    :class:`Spawn` and ``route_start_m`` / ``route_end_m`` say where on the
    route the vehicle starts and stops (None: the route's end)."""

    name: str
    model: str
    namespace: str = ''
    frame_prefix: str = ''
    agent_index: int = 0
    route: str = ''               # a packaged route name or a route file; '' the model's default
    laps: int = 0                 # 0: drive the route once; N: N laps of a closed route
    repeat: bool = False          # drive a closed route again and again until the run ends
    parked: bool = False          # no route follower: parked until its first cmd_vel
    spawn: object = None
    route_start_m: float = 0.0
    route_end_m: Optional[float] = None
    sensors: dict = field(default_factory=dict)

    @property
    def route_or_default(self) -> str:
        return self.route or DEFAULT_ROUTES[self.model]


@dataclass(frozen=True)
class Scenario:
    """A scenario (or rig) file: its vehicles and the settings of the run
    (None or '': not given, the run's default)."""

    name: str
    description: str
    vehicles: tuple
    source: str = ''
    site: str = ''                # a site file
    scene: str = ''               # a scene file
    terrain: str = ''             # flat, a packaged terrain or a terrain file ('': flat)
    duration_s: Optional[float] = None
    seed: Optional[int] = None
    rtf: Optional[float] = None
    events: EventPlan = EventPlan()   # its fault events and their zones
    sweep: SweepPlan = SweepPlan()    # the seeds and grid of acres-sim sweep (others ignore it)
    resolved: bool = False        # its vehicles placed by resolve_scenario


# --------------------------------------------------------------------------- reading


def packaged_names():
    """The packaged rigs and scenarios (file stems of config/rigs and config/scenarios)."""
    return sorted(p.stem for folder in PACKAGED_FOLDERS
                  for p in (config_dir() / folder).glob('*.yaml'))


def scenario_path(name_or_path) -> Path:
    """The file of a packaged rig or scenario name, or the path given."""
    text = str(name_or_path)
    path = Path(text)
    if path.suffix in _FILE_SUFFIXES or '/' in text:
        return path
    for folder in PACKAGED_FOLDERS:
        candidate = config_dir() / folder / f'{text}.yaml'
        if candidate.is_file():
            return candidate
    raise ConfigError(f'unknown rig {text!r}; packaged: {", ".join(packaged_names())} '
                      '(or give a rig or scenario file)')


def _file(item, value, source):
    """A file named in the scenario, relative to the scenario's folder."""
    check(SCENARIO_KEYS['site'], value, source, item)
    return os.path.normpath(Path(source).parent / os.path.expanduser(value))


def _terrain(value, source):
    """The scenario's terrain: flat or a packaged name as it is, a file
    relative to the scenario's folder."""
    check(SCENARIO_KEYS['terrain'], value, source, 'terrain')
    return terrain_argument(value, Path(source).parent)


def read_scenario(name_or_path) -> Scenario:
    """A packaged rig or scenario ('polaris', 'maxxum', 'mixed', 'fleet', ...)
    or a rig or scenario file, checked; its vehicles as the file gives them
    (see :func:`resolve_scenario` for where they start)."""
    path = scenario_path(name_or_path)
    source = str(path)
    tree = read_document(path, 'scenario')
    if not isinstance(tree, dict) or not isinstance(tree.get('vehicles'), list) \
            or not tree['vehicles']:
        raise ConfigError(f'{source}: a rig or scenario file needs a non-empty list "vehicles"')
    if len(tree['vehicles']) > MAX_AGENTS:
        raise ConfigError(f'{source}: {len(tree["vehicles"])} vehicles; allowed 1 to '
                          f'{MAX_AGENTS} (as agents)')
    check_keys(tree, _TOP_KEYS, '', source)
    description = check(SCENARIO_KEYS['description'], tree.get('description', ''), source)
    vehicles = tuple(_vehicle(entry, i, source) for i, entry in enumerate(tree['vehicles']))
    _check_unique(vehicles, source)
    events = read_events(tree.get('events'), tree.get('zones'), source,
                         vehicle_names=[v.name for v in vehicles])
    return Scenario(
        path.stem, description, vehicles, source,
        site=_file('site', tree['site'], source) if 'site' in tree else '',
        scene=_file('scene', tree['scene'], source) if 'scene' in tree else '',
        terrain=_terrain(tree['terrain'], source) if 'terrain' in tree else '',
        duration_s=(check(SCENARIO_KEYS['duration_s'], tree['duration_s'], source)
                    if 'duration_s' in tree else None),
        seed=check_value('seed', tree['seed'], source) if 'seed' in tree else None,
        rtf=check(sim_param('rtf'), tree['rtf'], source) if 'rtf' in tree else None,
        events=events,
        sweep=read_sweep_block(tree['sweep'], source) if 'sweep' in tree else SweepPlan())


def _vehicle(entry, i, source) -> ScenarioVehicle:
    where = f'vehicles[{i}]'
    check_keys(entry, _VEHICLE_KEYS, where, source)

    def field(name, default):
        return check(ENTRY_KEYS[name], entry.get(name, default), source, f'{where}.{name}')

    if 'model' in entry and 'vehicle' in entry:
        raise value_error(f'{where}.vehicle', entry['vehicle'], 'given with model',
                          'model (vehicle is its old name in rig files), not both', source)
    given = 'vehicle' if 'vehicle' in entry else 'model'
    if given not in entry:
        raise missing(ENTRY_KEYS['model'], source, f'{where}.model')
    model = check(ENTRY_KEYS['model'], entry[given], source, f'{where}.{given}')
    name = field('name', f'agent{i}')
    if name == 'names':    # agents.names is the sim node's list of the vehicles
        raise value_error(f'{where}.name', name, 'the name is taken (agents.names)',
                          'another name', source)
    namespace = field('namespace', '')
    prefix = field('frame_prefix', '')
    index = field('agent_index', i)
    parked = field('parked', False)
    route, laps, repeat = _route(f'{where}.route', entry.get('route'), source)
    if parked and entry.get('route'):
        raise value_error(f'{where}.route', entry['route'], 'a parked vehicle follows no route',
                          'a route or parked: true, not both', source)
    spawn = _spawn(f'{where}.spawn', entry['spawn'], source) if 'spawn' in entry else None
    sensors = entry.get('sensors') or {}
    if not isinstance(sensors, dict):
        raise value_error(f'{where}.sensors', sensors, 'expected a mapping', 'sensor keys',
                          source)
    sensors = {k: check_value(k, v, f'{source}: {where}.sensors')
               for k, v in _flat(sensors).items()}
    return ScenarioVehicle(name, model, namespace, prefix, index, route, laps, repeat, parked,
                           spawn, sensors=sensors)


def _route(item, value, source):
    """(route, laps, repeat) of a vehicle's ``route`` entry."""
    if value is None:
        return '', 0, False
    if isinstance(value, str):
        return _route_name(ENTRY_KEYS['route'], item, value, source), 0, False
    keys = VEHICLE_ROUTE_KEYS
    check_keys(value, tuple(keys), item, source)
    if 'name' not in value:
        raise missing(keys['name'], source, f'{item}.name')
    if 'laps' in value and value.get('repeat'):
        raise value_error(f'{item}.laps', value['laps'], 'given with repeat: true',
                          'laps or repeat, not both', source)
    laps = check(keys['laps'], value['laps'], source, f'{item}.laps') if 'laps' in value else 0
    repeat = check(keys['repeat'], value.get('repeat', False), source, f'{item}.repeat')
    return _route_name(keys['name'], f'{item}.name', value['name'], source), laps, repeat


def _route_name(spec, item, value, source):
    check(spec, value, source, item)
    if Path(value).suffix in _FILE_SUFFIXES or '/' in value:
        return _file(item, value, source)
    return value


def _spawn(item, value, source):
    names = _GEODETIC_SPAWN if isinstance(value, dict) and 'lat_deg' in value else _GRID_SPAWN
    check_keys(value, names, item, source)
    got = {}
    for name in names:
        spec = SPAWN_KEYS[name]
        if name not in value and spec.default is None:
            raise missing(spec, source, f'{item}.{name}')
        got[name] = check(spec, value.get(name, spec.default), source, f'{item}.{name}')
    if names is _GRID_SPAWN:
        return Spawn(got['east_m'], got['north_m'], math.radians(got['heading_deg']))
    return GeodeticSpawn(got['lat_deg'], got['lon_deg'], got['heading_deg'], got['frame'])


def _flat(tree, prefix=''):
    """Nested sensor keys (gnss: {hz: 5.0}) as dotted names (gnss.hz)."""
    out = {}
    for name, value in tree.items():
        full = f'{prefix}.{name}' if prefix else str(name)
        if isinstance(value, dict):
            out.update(_flat(value, full))
        else:
            out[full] = value
    return out


def _check_unique(vehicles, source):
    for what in ('name', 'namespace', 'frame_prefix'):
        seen = {}
        for vehicle in vehicles:
            value = getattr(vehicle, what)
            if value in seen:
                raise ConfigError(f'{source}: vehicles {seen[value]} and {vehicle.name} have the '
                                  f'same {what} {value!r}; each vehicle needs its own')
            seen[value] = vehicle.name


# --------------------------------------------------------------------------- resolving


def run_site(site_file=None, config_file=None) -> SiteGeoreference:
    """The site georeference of a run: its site file (or the packaged site.yaml)
    on its sensor file (or the packaged sensors.yaml)."""
    config = load_config(rig=None, config_file=config_file, site_file=site_file or None)
    return SiteGeoreference(*site_georeference_args(config))


def spacing_m(models) -> float:
    """How far apart vehicles of ``models`` are placed: the longest one's length
    and :data:`SPAWN_MARGIN_M`."""
    return max(VEHICLE_LENGTH_M[m] for m in models) + SPAWN_MARGIN_M


def load_scenario(name_or_path, agents=None, route=None, laps=None, repeat=None,
                  site_file=None, config_file=None) -> Scenario:
    """:func:`read_scenario`, then :func:`resolve_scenario` with the run's site
    (``site_file``, else the scenario's, else the packaged one)."""
    scenario = read_scenario(name_or_path)
    site = run_site(site_file or scenario.site, config_file)
    return resolve_scenario(scenario, site, agents, route, laps, repeat)


def resolve_scenario(scenario, site, agents=None, route=None, laps=None,
                     repeat=None) -> Scenario:
    """The scenario with the options of the run applied and every vehicle
    placed: ``route`` (and ``laps`` or ``repeat``) for every vehicle,
    ``agents`` copies of a one-vehicle scenario (agent k in namespace
    agent<k>, frames agent<k>/, its own agent index); then every spawn a grid
    :class:`Spawn` and every start and stop on its route (see the module
    docstring).  ``site``: the georeference of geodetic spawns and routes.
    A scenario is resolved once: resolved again, it is returned as it is."""
    if scenario.resolved:
        if (agents, route, laps, repeat) != (None, None, None, None):
            raise ValueError('the options of a run apply to a scenario as read, not resolved')
        return scenario
    source = scenario.source or scenario.name
    vehicles = list(scenario.vehicles)
    if laps is not None and (isinstance(laps, bool) or not isinstance(laps, int)
                             or not 0 <= laps <= MAX_LAPS):
        raise ConfigError(f'laps = {laps!r}: allowed 0 (the route once) to {MAX_LAPS}')
    if repeat is not None and not isinstance(repeat, bool):
        raise ConfigError(f'repeat = {repeat!r}: allowed true or false')
    if laps and repeat:
        raise ConfigError(f'laps = {laps} with repeat = true: allowed one of them')
    if route and (Path(route).suffix in _FILE_SUFFIXES or '/' in route):
        route = os.path.abspath(os.path.expanduser(route))    # a file named on the command line
    if route or laps is not None or repeat is not None:
        vehicles = [_with_route(v, route, laps, repeat) for v in vehicles]
    lines = {}                  # vehicles placed together -> their indices
    for i, v in enumerate(vehicles):
        vehicles[i] = _started(v, site, f'{source}: vehicle {v.name}')
        key = (('spawn', i) if v.spawn is not None else
               (v.route_or_default, v.laps, v.repeat, v.parked))
        lines.setdefault(key, []).append(i)
    if agents is not None and _copies_of(vehicles, agents, scenario):
        vehicles = _copies(vehicles[0], agents)
        lines = {'copies': list(range(len(vehicles)))}
    routes = {}
    for key, indices in lines.items():
        line = [vehicles[i] for i in indices]
        name = line[0].route_or_default
        if name not in routes:
            routes[name] = load_route(name, site)
        what = (f'agents = {agents}' if key == 'copies' else
                f'vehicles {", ".join(v.name for v in line)}')
        for i, placed in zip(indices, _place(line, routes[name], what, source)):
            vehicles[i] = placed
    vehicles = tuple(vehicles)
    _check_unique(vehicles, f'{source} with agents = {agents}' if agents else source)
    _check_apart(vehicles, source)
    return replace(scenario, vehicles=vehicles, resolved=True)


def _with_route(vehicle, route, laps, repeat):
    if vehicle.parked:
        return vehicle
    return replace(vehicle, route=route or vehicle.route,
                   laps=vehicle.laps if laps is None else laps,
                   repeat=vehicle.repeat if repeat is None else repeat)


def _route_of(vehicle, site, where):
    """The vehicle's route, loaded; ConfigError for laps on a route that is not closed."""
    route = load_route(vehicle.route_or_default, site)
    if (vehicle.laps or vehicle.repeat) and not route.closed:
        gap = math.hypot(*(route.xy[-1] - route.xy[0]))
        given = f'laps = {vehicle.laps}' if vehicle.laps else 'repeat = True'
        raise ConfigError(f'{given} for {where}: route {route.name!r} is not closed (it ends '
                          f'{gap:.1f} m from its start); allowed: laps and repeat on a closed '
                          'route, one that ends where it starts, heading the way it started')
    return route


def _started(vehicle, site, where):
    """The vehicle with its route checked, its spawn in grid ENU and, when it
    has a spawn and follows its route, the arc length where it joins it."""
    route = _route_of(vehicle, site, where)
    spawn = vehicle.spawn
    if isinstance(spawn, GeodeticSpawn):
        navd88, undulation = site.heights(0.0, 0.0, 0.0)    # the ground at the tile origin
        east, north, _up = site.geodetic_to_enu(spawn.lat_deg, spawn.lon_deg,
                                                float(navd88 + undulation), 0.0, spawn.frame)
        if not (abs(east) <= SPAWN_LIMIT_M and abs(north) <= SPAWN_LIMIT_M):
            raise ConfigError(f'spawn of {where}: latitude {spawn.lat_deg:g}, longitude '
                              f'{spawn.lon_deg:g} is {math.hypot(east, north) / 1e3:.0f} km '
                              f'from the tile; allowed: within {SPAWN_LIMIT_M / 1e3:g} km')
        spawn = Spawn(float(east), float(north), math.radians(spawn.heading_deg))
    if spawn is None or vehicle.parked:
        return replace(vehicle, spawn=spawn)
    start, distance = route.closest(spawn.east_m, spawn.north_m)
    if distance > JOIN_WITHIN_M:
        raise ConfigError(f'spawn of {where}: ({spawn.east_m:.1f}, {spawn.north_m:.1f}) m is '
                          f'{distance:.1f} m from its route {route.name!r}; allowed: within '
                          f'{JOIN_WITHIN_M:g} m of the route (it joins the route at the '
                          'closest point), or parked: true')
    return replace(vehicle, spawn=spawn, route_start_m=start)


def _copies_of(vehicles, n, scenario) -> bool:
    """Whether ``agents = n`` copies the one vehicle (else it is the number the
    scenario has anyway); ConfigError for any other n."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_AGENTS:
        raise ConfigError(f'agents = {n!r}: allowed 1 to {MAX_AGENTS}')
    if len(vehicles) != 1 and n != len(vehicles):
        raise ConfigError(f'agents = {n}: the rig {scenario.name} has {len(vehicles)} vehicles '
                          'of its own; agents copies the vehicle of a one-vehicle rig')
    return len(vehicles) == 1


def _copies(first, n):
    return [first] + [replace(first, name=f'agent{k}', namespace=f'agent{k}',
                              frame_prefix=f'agent{k}/', agent_index=first.agent_index + k,
                              spawn=None) for k in range(1, n)]


def _place(line, route, what, source):
    """The vehicles of ``line`` (one route, the first maybe with a spawn of its
    own) with their spawns, starts and stops, :func:`spacing_m` apart."""
    n, first = len(line), line[0]
    gap = spacing_m(v.model for v in line)
    x0, y0, yaw = first.spawn if first.spawn is not None else route.pose_at(first.route_start_m)
    if first.parked:               # side by side, to the left of the first
        left = (-math.sin(yaw), math.cos(yaw))
        return [replace(v, spawn=first.spawn if k == 0 and first.spawn is not None else
                        Spawn(x0 + k * gap * left[0], y0 + k * gap * left[1], yaw))
                for k, v in enumerate(line)]
    start = first.route_start_m
    if first.laps or first.repeat:  # round the closed route, each its laps from its start
        room = route.length
        starts = [(start + k * gap) % route.length for k in range(n)]
        ends = [None] * n
    else:                           # one behind the other, each stopping gap behind the next
        room = route.length - start
        starts = [start + k * gap for k in range(n)]
        ends = [route.length - (n - 1 - k) * gap if k < n - 1 else None for k in range(n)]
    if n > 1 and n * gap > room:
        fit = max(int(room // gap), 1)
        raise ConfigError(f'{what} (in {source}): {n} vehicles on route {route.name!r} need '
                          f'{n * gap:.0f} m, {gap:g} m apart (a vehicle length and '
                          f'{SPAWN_MARGIN_M:g} m), and the route has {room:.0f} m for them; '
                          f'allowed: at most {fit} there, or spawns of their own')
    return [replace(v, route_start_m=s, route_end_m=e,
                    spawn=(first.spawn if k == 0 and first.spawn is not None else
                           Spawn(*route.pose_at(s))))
            for k, (v, s, e) in enumerate(zip(line, starts, ends))]


def _check_apart(vehicles, source):
    """No two spawns closer than the longer vehicle's length."""
    for i, a in enumerate(vehicles):
        for b in vehicles[i + 1:]:
            limit = max(VEHICLE_LENGTH_M[a.model], VEHICLE_LENGTH_M[b.model])
            d = math.hypot(a.spawn.east_m - b.spawn.east_m, a.spawn.north_m - b.spawn.north_m)
            if d < limit:
                raise ConfigError(f'{source}: vehicles {a.name} and {b.name} spawn {d:.2f} m '
                                  f'apart; allowed: at least {limit:g} m (the longer one\'s '
                                  'length)')


def vehicle_copies(model, n=1, route=None, laps=0, repeat=False, parked=False, site=None):
    """The ``n`` resolved vehicles of a one-``model`` run with ``route`` (None:
    the model's default) driven once, ``laps`` times or for ever, or parked:
    what ``--agents n`` gives (the recorder's vehicles)."""
    one = Scenario(model, '', (ScenarioVehicle('agent0', model, parked=parked),),
                   f'the {model} rig')
    return resolve_scenario(one, site if site is not None else run_site(), n, route,
                            laps, repeat).vehicles


def vehicle_config(scenario, vehicle, config_file=None, site_file=None, overrides=None,
                   seed=None, noise=None, add_outages=(), overlay_file=None):
    """The checked configuration of one ``vehicle`` of ``scenario``: the sensor
    file (``config_file`` or the packaged sensors.yaml), the site file
    (``site_file``, else the scenario's, else the packaged site.yaml), the
    model's overlay (or ``overlay_file``), the scenario's seed, the vehicle's sensor keys, then
    ``overrides`` (sensor keys of the command line), ``seed`` and ``noise``
    (None: not given) and the vehicle's agent index."""
    keys = {} if scenario.seed is None else {'seed': scenario.seed}
    keys.update(vehicle.sensors)
    keys.update(overrides or {})
    if seed is not None:
        keys['seed'] = seed
    if noise is not None:
        keys['noise'] = noise
    keys['agent.index'] = vehicle.agent_index
    return load_config(rig=vehicle.model, config_file=config_file, overlay_file=overlay_file,
                       site_file=site_file or scenario.site or None, overrides=keys,
                       add_outages=add_outages)


# --------------------------------------------------------------------------- running


class Motion(NamedTuple):
    """How a vehicle moves in a run: its spawn pose (a row of Fleet's poses), the
    route follower that drives it, and whether it stays parked instead."""

    spawn: tuple
    follower: RouteFollower
    parked: bool


def vehicle_motion(vehicle: ScenarioVehicle, params, site=None) -> Motion:
    """The :class:`Motion` of a (resolved) ``vehicle`` with vehicle parameters
    ``params``; ``site``: the georeference of a geodetic route file.  Both
    drivers build their vehicles with this, so they start and drive alike."""
    route = _route_of(vehicle, site, f'vehicle {vehicle.name}')
    follower = RouteFollower(route, params, start_m=vehicle.route_start_m,
                             end_m=vehicle.route_end_m,
                             laps=math.inf if vehicle.repeat else vehicle.laps)
    spawn = vehicle.spawn if vehicle.spawn is not None else route.pose_at(vehicle.route_start_m)
    return Motion(tuple(spawn), follower, vehicle.parked)


def node_parameters(vehicle: ScenarioVehicle, events='') -> dict:
    """The sim node's parameters of a resolved ``vehicle`` (AGENT_PARAMS, by
    name; the spawn as [east_m, north_m, yaw_rad], the end 0 for the route's;
    ``events`` the JSON of its events, EventPlan.to_json)."""
    values = {'vehicle': vehicle.model, 'namespace': vehicle.namespace,
              'frame_prefix': vehicle.frame_prefix, 'route': vehicle.route_or_default,
              'laps': vehicle.laps, 'repeat': vehicle.repeat, 'parked': vehicle.parked,
              'spawn': [float(v) for v in vehicle.spawn],
              'route_start_m': float(vehicle.route_start_m),
              'route_end_m': float(vehicle.route_end_m or 0.0), 'events': events}
    assert set(values) == {p.name for p in AGENT_PARAMS}
    return values


def vehicle_of_parameters(name, values) -> ScenarioVehicle:
    """The vehicle that the sim node's checked parameters ``values`` describe
    (the inverse of :func:`node_parameters`; no spawn: on the route)."""
    spawn = values['spawn']
    return ScenarioVehicle(
        name, values['vehicle'], values['namespace'], values['frame_prefix'],
        route=values['route'], laps=values['laps'], repeat=values['repeat'],
        parked=values['parked'], spawn=Spawn(*spawn) if spawn else None,
        route_start_m=values['route_start_m'], route_end_m=values['route_end_m'] or None)
