"""A rig -- the vehicles of one simulation and their sensors -- turned into the
list of nodes to start.  The launch files and ``acres-sim up`` both start
exactly what :func:`rig_nodes` returns.

A rig file (``config/rigs/<name>.yaml``, or any file of that form)::

    description: One Polaris with its INS, GNSS receiver and IMU.
    vehicles:
      - name: agent0            # key of the vehicle's parameters in the sim node
        vehicle: polaris        # polaris or maxxum: physics, topic set, sensor overlay
        namespace: ""           # ROS namespace of its topics ("" = none)
        frame_prefix: ""        # prefix of its frame names (utm and map are shared)
        agent_index: 0          # seed offsets (DESIGN §4): 7919 * index per stream
        route: acre_demo        # optional: a packaged route or a file; else the default
        sensors: {}             # optional: sensor keys on top of the vehicle's overlay

Every vehicle gets one configuration: the packaged ``sensors.yaml`` and
``site.yaml`` (or the files given), its vehicle overlay, the rig's
``sensors``, then the options (seed, noise, sensor keys from the command line
or the launch arguments), checked key by key.  The sim node simulates all
vehicles and gets every vehicle's configuration under ``agents.<name>.``; each
vehicle with the GNSS receiver or the IMU on gets a ``gnss_node`` /
``imu_node`` in its namespace with its configuration at the top level.
"""

from dataclasses import dataclass, field, replace
import os
import re
from pathlib import Path
from typing import Optional

from acres_sim.config.loader import config_dir, load_config, read_document
from acres_sim.config.node_params import (AGENT_PARAMS, FAST_OUTPUT_DEPTH, OUTPUT_DEPTH,
                                          SIM_PARAMS, VEHICLES, check_param)
from acres_sim.config.schema import KEYS, key
from acres_sim.config.validate import ConfigError, check_value
from acres_sim.config.routes import load_route
from acres_sim.network import network_environment

__all__ = ['AgentSpec', 'DEFAULT_ROUTES', 'KILL_GRACE_S', 'NodeSpec', 'Rig', 'RigOptions',
           'STOP_GRACE_S', 'agent_parameters', 'load_rig', 'rig_names', 'rig_nodes',
           'ros_parameter_value', 'rigs_dir']

DEFAULT_ROUTES = {'polaris': 'acre_demo', 'maxxum': 'field'}
MAX_AGENTS = 100
# How a node is stopped, by acres-sim up and by launch: SIGINT, then SIGTERM
# after STOP_GRACE_S, then SIGKILL after KILL_GRACE_S.  A node needs at most 2 s
# to hand over what it published, then ends without Python's finalisation; the
# 7-node mixed rig on a 2-core machine with 2 CPU hogs took 3.3 s at worst
# (bench/bench_shutdown.py): 10 s leaves room.
STOP_GRACE_S = 10.0
KILL_GRACE_S = 5.0
_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')
_NAMESPACE = re.compile(r'^(|[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*)$')
_PREFIX = re.compile(r'^(|[A-Za-z][A-Za-z0-9_]*/)$')
_VEHICLE_FIELDS = ('name', 'vehicle', 'namespace', 'frame_prefix', 'agent_index', 'route',
                   'sensors')


@dataclass(frozen=True)
class AgentSpec:
    """One vehicle of a rig."""

    name: str
    vehicle: str
    namespace: str = ''
    frame_prefix: str = ''
    agent_index: int = 0
    route: str = ''
    sensors: dict = field(default_factory=dict)

    @property
    def route_or_default(self) -> str:
        return self.route or DEFAULT_ROUTES[self.vehicle]


@dataclass(frozen=True)
class Rig:
    name: str
    description: str
    agents: tuple
    source: str = ''


@dataclass(frozen=True)
class NodeSpec:
    """One node to start: ``ros2 run acres_sim <executable> --ros-args -r
    __node:=<name> -r __ns:=/<namespace>`` with ``parameters``."""

    executable: str
    name: str
    namespace: str
    parameters: dict
    remappings: tuple = ()
    env: dict = field(default_factory=dict)    # environment variables added for the node

    @property
    def full_name(self) -> str:
        return f'/{self.namespace}/{self.name}' if self.namespace else f'/{self.name}'


@dataclass(frozen=True)
class RigOptions:
    """What a user sets at launch on top of the rig file (None: the file's value)."""

    seed: Optional[int] = None
    noise: Optional[bool] = None
    agents: Optional[int] = None        # N copies of the rig's (only) vehicle
    route: Optional[str] = None         # the route of every vehicle
    rtf: Optional[float] = None
    duration_s: Optional[float] = None
    use_sim_time: bool = True
    overrides: dict = field(default_factory=dict)   # sensor keys, e.g. {'gnss.hz': 5.0}
    add_outages: tuple = ()              # 'START:END' correction outages added
    config_file: Optional[str] = None    # instead of the packaged sensors.yaml
    site_file: Optional[str] = None      # instead of the packaged site.yaml
    sim: dict = field(default_factory=dict)    # other sim node parameters (SIM_PARAMS)
    network: str = 'loopback'            # 'lan': DDS discovery beyond this machine (network.py)


def rigs_dir() -> Path:
    return config_dir() / 'rigs'


def rig_names():
    """The packaged rigs."""
    return sorted(p.stem for p in rigs_dir().glob('*.yaml'))


def load_rig(name_or_path) -> Rig:
    """A packaged rig ('polaris', 'maxxum', 'mixed') or a rig file; ConfigError
    naming the file and the entry for anything wrong in it."""
    text = str(name_or_path)
    path = Path(text)
    if not (path.suffix in ('.yaml', '.yml', '.json') or '/' in text):
        path = rigs_dir() / f'{text}.yaml'
        if not path.is_file():
            raise ConfigError(f'unknown rig {text!r}; packaged: {", ".join(rig_names())} '
                              '(or give a rig file)')
    source = str(path)
    tree = read_document(path, 'rig')
    if not isinstance(tree, dict) or not isinstance(tree.get('vehicles'), list) \
            or not tree['vehicles']:
        raise ConfigError(f'{source}: a rig file needs a non-empty list "vehicles"')
    if len(tree['vehicles']) > MAX_AGENTS:   # each is a sim agent and up to two nodes
        raise ConfigError(f'{source}: {len(tree["vehicles"])} vehicles; allowed 1 to '
                          f'{MAX_AGENTS} (as agents)')
    unknown = sorted(set(tree) - {'description', 'vehicles'})
    if unknown:
        raise ConfigError(f"{source}: unknown entry '{unknown[0]}'; allowed: description, "
                          'vehicles')
    agents = tuple(_agent(entry, i, source) for i, entry in enumerate(tree['vehicles']))
    _check_unique(agents, source)
    return Rig(path.stem, str(tree.get('description', '')), agents, source)


def _agent(entry, i, source):
    where = f'{source}: vehicles[{i}]'
    if not isinstance(entry, dict):
        raise ConfigError(f'{where}: expected a mapping with {", ".join(_VEHICLE_FIELDS)}')
    unknown = sorted(set(entry) - set(_VEHICLE_FIELDS))
    if unknown:
        raise ConfigError(f"{where}: unknown entry '{unknown[0]}'; allowed: "
                          + ', '.join(_VEHICLE_FIELDS))
    vehicle = entry.get('vehicle')
    if vehicle not in VEHICLES:
        raise ConfigError(f'{where}: vehicle = {vehicle!r}; allowed: {" or ".join(VEHICLES)}')
    name = entry.get('name', f'agent{i}')
    if name == 'names':    # agents.names is the sim node's list of the vehicles
        raise ConfigError(f"{where}: name = 'names' is taken; choose another name")
    checks = (('name', name, _NAME, 'a letter, then letters, digits or _'),
              ('namespace', entry.get('namespace', ''), _NAMESPACE,
               'empty, or names of letters, digits and _ joined by /'),
              ('frame_prefix', entry.get('frame_prefix', ''), _PREFIX,
               "empty, or a name followed by '/', e.g. agent1/"))
    for what, value, pattern, allowed in checks:
        if not isinstance(value, str) or not pattern.match(value):
            raise ConfigError(f'{where}: {what} = {value!r}; allowed: {allowed}')
    index = entry.get('agent_index', i)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 10**6:
        raise ConfigError(f'{where}: agent_index = {index!r}; allowed: an integer 0 to 1000000')
    route = entry.get('route') or ''
    if not isinstance(route, str):
        raise ConfigError(f'{where}: route = {route!r}; allowed: a route name or file')
    sensors = entry.get('sensors') or {}
    if not isinstance(sensors, dict):
        raise ConfigError(f'{where}: sensors must be a mapping of sensor keys')
    sensors = {name_: check_value(name_, value, f'{where}.sensors')
               for name_, value in _flat(sensors).items()}
    return AgentSpec(name, vehicle, entry.get('namespace', ''), entry.get('frame_prefix', ''),
                     index, route, sensors)


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


def _check_unique(agents, source):
    for what in ('name', 'namespace', 'frame_prefix'):
        seen = {}
        for agent in agents:
            value = getattr(agent, what)
            if value in seen:
                raise ConfigError(f'{source}: vehicles {seen[value]} and {agent.name} have the '
                                  f'same {what} {value!r}; each vehicle needs its own')
            seen[value] = agent.name


def with_options(rig: Rig, options: RigOptions) -> Rig:
    """The rig after ``agents`` and ``route``: N copies of its one vehicle
    (agent 0 in its namespace, agent k in agent<k>, frames agent<k>/)."""
    agents = rig.agents
    if options.agents is not None:
        n = options.agents
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_AGENTS:
            raise ConfigError(f'agents = {n!r}: allowed 1 to {MAX_AGENTS}')
        if len(agents) != 1 and n != len(agents):
            raise ConfigError(f'agents = {n}: the rig {rig.name} has {len(agents)} vehicles '
                              'of its own; agents copies the vehicle of a one-vehicle rig')
        if len(agents) == 1:
            first = agents[0]
            agents = tuple(first if k == 0 else replace(
                first, name=f'agent{k}', namespace=f'agent{k}', frame_prefix=f'agent{k}/',
                agent_index=first.agent_index + k) for k in range(n))
    if options.route:
        agents = tuple(replace(a, route=options.route) for a in agents)
    _check_unique(agents, f'{rig.source or rig.name} with agents = {options.agents}')
    return replace(rig, agents=agents)


def agent_config(agent: AgentSpec, options: RigOptions):
    """The checked configuration of one vehicle (see the module docstring)."""
    overrides = dict(agent.sensors)
    overrides.update(options.overrides)
    if options.seed is not None:
        overrides['seed'] = options.seed
    if options.noise is not None:
        overrides['noise'] = options.noise
    overrides['agent.index'] = agent.agent_index
    return load_config(rig=agent.vehicle, config_file=options.config_file,
                       site_file=options.site_file, overrides=overrides,
                       add_outages=options.add_outages)


def ros_parameter_value(name, value):
    """A configuration value as a ROS 2 parameter carries it (outages as
    'START:END' strings); None for a value ROS cannot type (an empty list)."""
    if key(name).kind == 'outages':
        value = [f'{start!r}:{end!r}' for start, end in value]
    if isinstance(value, list):
        return list(value) if value else None
    return value


def agent_parameters(config, prefix=''):
    """Every sensor key of ``config`` as ROS parameters named ``prefix + key``."""
    out = {}
    for k in KEYS:
        value = ros_parameter_value(k.name, config[k.name])
        if value is not None:
            out[prefix + k.name] = value
    return out


# Keys that place the shared frames (utm -> map, the tile): one value for the whole rig.
WORLD_KEYS = ('ins.frame', 'ins.utm_zone', 'site.enabled', 'site.origin_source_ft',
              'gnss.datum.start_utc')


def _check_one_world(rig, configs):
    """All vehicles of a rig share utm and map: the keys that place them agree."""
    first = configs[0]
    for agent, config in zip(rig.agents[1:], configs[1:]):
        for name in WORLD_KEYS:
            if config[name] != first[name]:
                raise ConfigError(
                    f'{name} = {config[name]!r} for vehicle {agent.name} but '
                    f'{first[name]!r} for {rig.agents[0].name}: the vehicles of a rig share '
                    f'the frames utm and map, so {", ".join(WORLD_KEYS)} must agree')


def rig_nodes(rig, options: RigOptions = RigOptions()):
    """The nodes of ``rig`` (a Rig or a rig name/file) with ``options``: the sim
    node first, then per vehicle its GNSS and IMU nodes."""
    rig = with_options(rig if isinstance(rig, Rig) else load_rig(rig), options)
    sim_values = {p.name: p.default for p in SIM_PARAMS}
    for name, value in options.sim.items():
        spec = next((p for p in SIM_PARAMS if p.name == name), None)
        if spec is None:
            raise ConfigError(f"unknown sim node parameter '{name}'; allowed: "
                              + ', '.join(p.name for p in SIM_PARAMS))
        sim_values[name] = check_param(spec, value, 'the options')
    for name, value in (('rtf', options.rtf), ('duration_s', options.duration_s)):
        if value is not None:
            spec = next(p for p in SIM_PARAMS if p.name == name)
            sim_values[name] = check_param(spec, value, 'the options')
    depth = FAST_OUTPUT_DEPTH if sim_values['rtf'] == 0.0 else OUTPUT_DEPTH.default
    if not isinstance(options.use_sim_time, bool):
        raise ConfigError(f'use_sim_time = {options.use_sim_time!r}: allowed true or false')
    common = {'use_sim_time': options.use_sim_time, 'output_depth': depth}
    # The sim node is the clock: it runs on wall time and never hears its own /clock.
    sim = {**sim_values, **common, 'use_sim_time': False,
           'agents.names': [a.name for a in rig.agents]}
    sensors = []
    configs = [agent_config(agent, options) for agent in rig.agents]
    _check_one_world(rig, configs)
    for agent, config in zip(rig.agents, configs):
        load_route(agent.route_or_default)     # a bad route: the error now, not in the sim
        prefix = f'agents.{agent.name}.'
        own = {'vehicle': agent.vehicle, 'namespace': agent.namespace,
               'frame_prefix': agent.frame_prefix, 'route': agent.route_or_default}
        assert set(own) == {p.name for p in AGENT_PARAMS}
        sim.update({prefix + name: value for name, value in own.items()})
        sim.update(agent_parameters(config, prefix))
        node_params = {**common, 'vehicle': agent.vehicle, 'frame_prefix': agent.frame_prefix,
                       **agent_parameters(config)}
        for executable, on in (('gnss_node', config['gnss.enabled']),
                               ('imu_node', config['imu.enabled'])):
            if on:
                sensors.append(NodeSpec(executable, executable, agent.namespace,
                                        dict(node_params)))
    env = network_environment(options.network)[0]
    if sim_values['rtf'] == 0.0:
        env.update(fast_repair_environment())
    return [replace(node, env=dict(env))
            for node in [NodeSpec('sim_node', 'sim_node', '', sim), *sensors]]


def fast_repair_environment(environ=None):
    """At rtf 0 on Fast DDS: the packaged profile of quick writer heartbeats
    (``config/fastdds/fast_repair.xml``), so that a sample the transport drops
    while a reader is short of CPU is sent again before the writer's history
    moves past it (Fast DDS announces every 3 s by default).  Nothing when the
    user has a profile of their own or another middleware."""
    environ = os.environ if environ is None else environ
    if 'FASTRTPS_DEFAULT_PROFILES_FILE' in environ or 'FASTDDS_DEFAULT_PROFILES_FILE' in environ:
        return {}
    if environ.get('RMW_IMPLEMENTATION', 'rmw_fastrtps_cpp') != 'rmw_fastrtps_cpp':
        return {}
    return {'FASTRTPS_DEFAULT_PROFILES_FILE': str(config_dir() / 'fastdds' / 'fast_repair.xml')}
