"""A scenario -- the vehicles of one simulation, their sensors and the
settings of the run (:mod:`acres_sim.config.scenario`; a rig file is one) --
turned into the list of nodes to start.  The launch files and ``acres-sim
up`` both start exactly what :func:`rig_nodes` returns.

The options of the run (:class:`RigOptions`: the command line or the launch
arguments) come on top of the scenario: the number of copies of its vehicle,
the route of every vehicle and its laps, the scene, the terrain, the site,
the seed, the duration, the real-time factor.  Every vehicle gets one configuration: the
packaged ``sensors.yaml`` and ``site.yaml`` (or the files given), its vehicle
overlay, the scenario's seed and the vehicle's ``sensors``, then the options
(seed, noise, sensor keys), checked key by key.  The sim node simulates all
vehicles and gets every vehicle's configuration, spawn and route under
``agents.<name>.``; each vehicle with the GNSS receiver or the IMU on gets a
``gnss_node`` / ``imu_node`` in its namespace with its configuration at the
top level; the sim node and the GNSS nodes get the scene, the sim node the
terrain (the physics runs there).  A bad scene or terrain is refused here,
in one line, before any node starts.

Namespaces are relative: the sim node sits in the rig's namespace (the
option ``namespace``, "" by default), each vehicle's sensor nodes in the
vehicle's namespace below it, and every node names its topics relative to
its own namespace (only ``/clock``, ``/tf``, ``/tf_static`` and
``/diagnostics`` are absolute).  So ``namespace: demo`` -- or a namespace that
launch pushes onto the whole rig -- moves every other topic under ``/demo``.
"""

from dataclasses import dataclass, field, replace
import os
from typing import Optional

from acres_sim.config.loader import packaged_notice
from acres_sim.config.node_params import (ACK_EVERY_STEPS, FAST_ACK_EVERY_STEPS,
                                          FAST_OUTPUT_DEPTH, OUTPUT_DEPTH, SIM_PARAMS, sim_param)
from acres_sim.config.events import parse_event, read_events, replay
from acres_sim.config.scenario import (MAX_AGENTS, NAMESPACE_PATTERN, Scenario, node_parameters,
                                       packaged_names, read_scenario, resolve_scenario, run_site,
                                       vehicle_config)
from acres_sim.config.scene import load_scene
from acres_sim.config.schema import KEYS, key
from acres_sim.config.terrain import FLAT, read_terrain, terrain_argument
from acres_sim.config.validate import ConfigError, check
from acres_sim.fastdds_profile import fast_repair_environment
from acres_sim.network import network_environment

__all__ = ['KILL_GRACE_S', 'MAX_AGENTS', 'NodeSpec', 'RigOptions', 'RigRun', 'SENSOR_PROCESSES',
           'STOP_GRACE_S', 'agent_parameters', 'check_namespace', 'hosted_arguments',
           'hosted_name', 'resolve_run', 'rig_config_notice', 'rig_names', 'rig_nodes',
           'rig_processes', 'ros_parameter_value']

# How the sensor nodes are put into processes (RigOptions.sensor_processes, rig_processes).
SENSOR_PROCESSES = ('one', 'vehicle', 'node')
HOST = 'sensor_nodes'

# How a node is stopped, by acres-sim up and by launch: SIGINT, then SIGTERM
# after STOP_GRACE_S, then SIGKILL after KILL_GRACE_S.  A node needs at most 2 s
# to hand over what it published, then ends without Python's finalisation; the
# 7-node mixed rig on a 2-core machine with 2 CPU hogs took 3.3 s at worst
# (bench/bench_shutdown.py): 10 s leaves room.
STOP_GRACE_S = 10.0
KILL_GRACE_S = 5.0


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
    # a process of several nodes (executable sensor_nodes): their NodeSpecs; then
    # ``name`` only labels the process, and ``parameters`` is empty
    nodes: tuple = ()

    @property
    def full_name(self) -> str:
        return f'/{self.namespace}/{self.name}' if self.namespace else f'/{self.name}'


@dataclass(frozen=True)
class RigOptions:
    """What a user sets at launch on top of the scenario (None: the file's value)."""

    seed: Optional[int] = None
    noise: Optional[bool] = None
    agents: Optional[int] = None        # N copies of the scenario's (only) vehicle
    route: Optional[str] = None         # the route of every vehicle
    laps: Optional[int] = None          # laps of that route (a closed one)
    repeat: Optional[bool] = None       # repeat it until the run ends
    scene: Optional[str] = None         # a scene file instead of the scenario's
    terrain: Optional[str] = None       # instead of the scenario's: flat, a name or a file
    rtf: Optional[float] = None
    duration_s: Optional[float] = None
    use_sim_time: bool = True
    overrides: dict = field(default_factory=dict)   # sensor keys, e.g. {'gnss.hz': 5.0}
    add_outages: tuple = ()              # 'START:END' correction outages added
    config_file: Optional[str] = None    # instead of the packaged sensors.yaml
    site_file: Optional[str] = None      # instead of the scenario's or the packaged site.yaml
    overlay_file: Optional[str] = None   # instead of each vehicle's packaged overlay
    sim: dict = field(default_factory=dict)    # other sim node parameters (SIM_PARAMS)
    network: str = 'loopback'            # 'lan': DDS discovery beyond this machine (network.py)
    events: tuple = ()                   # fault events added (YAML texts, as --event gives them)
    event_log: tuple = ()                # a live run's event log to repeat (its entries)
    namespace: str = ''                  # of the whole rig; each vehicle's nests below it
    sensor_processes: str = 'one'        # the sensor nodes: 'one' process, one per 'vehicle',
    #                                      or one per 'node'


def rig_names():
    """The packaged rigs and scenarios."""
    return packaged_names()


def agent_config(vehicle, options: RigOptions, scenario: Scenario):
    """The checked configuration of one vehicle (see the module docstring)."""
    return vehicle_config(scenario, vehicle, options.config_file, options.site_file,
                          options.overrides, options.seed, options.noise, options.add_outages,
                          options.overlay_file)


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


def _check_one_world(scenario, configs):
    """All vehicles of a scenario share utm and map: the keys that place them agree."""
    first = configs[0]
    for vehicle, config in zip(scenario.vehicles[1:], configs[1:]):
        for name in WORLD_KEYS:
            if config[name] != first[name]:
                raise ConfigError(
                    f'{name} = {config[name]!r} for vehicle {vehicle.name} but '
                    f'{first[name]!r} for {scenario.vehicles[0].name}: the vehicles of a rig '
                    f'share the frames utm and map, so {", ".join(WORLD_KEYS)} must agree')


def _sim_values(scenario, options):
    """The sim node's own parameters: the defaults, the scenario's, the options'."""
    values = {p.name: p.default for p in SIM_PARAMS}
    for name, value in options.sim.items():
        if name not in values:
            raise ConfigError(f"unknown sim node parameter '{name}'; allowed: "
                              + ', '.join(p.name for p in SIM_PARAMS))
        values[name] = check(sim_param(name), value, 'the options')
    for name, given, in_file in (('rtf', options.rtf, scenario.rtf),
                                 ('duration_s', options.duration_s, scenario.duration_s)):
        if given is not None:
            values[name] = check(sim_param(name), given, 'the options')
        elif in_file is not None:
            values[name] = in_file
    scene = options.scene or scenario.scene
    if scene:
        load_scene(scene)             # a bad scene: the error now, not in the nodes
        values['scene'] = os.path.abspath(os.path.expanduser(scene))
    terrain = check(sim_param('terrain'), options.terrain or scenario.terrain or FLAT,
                    'the options')
    read_terrain(terrain)             # a bad terrain: the error now, not in the sim node
    values['terrain'] = terrain_argument(terrain)
    return values


def check_namespace(value, where='namespace'):
    """A rig namespace in normal form: '' or names joined by '/' (a leading '/'
    is dropped: a rig's namespace is always relative, so that a namespace that
    launch pushes still applies); ConfigError naming ``where`` otherwise."""
    text = value.lstrip('/') if isinstance(value, str) else value
    if not isinstance(text, str) or not NAMESPACE_PATTERN.match(text):
        raise ConfigError(f'{where} = {value!r}; allowed: empty, or names of letters, digits '
                          'and _ joined by /, e.g. demo or farm/rig1')
    return text


def _join(*namespaces):
    return '/'.join(n for n in namespaces if n)


def _resolved(rig, options):
    """The scenario ``rig`` (a Scenario, a packaged name or a file) with the
    options' copies, routes and laps applied."""
    scenario = rig if isinstance(rig, Scenario) else read_scenario(rig)
    site = run_site(options.site_file or scenario.site, options.config_file)
    scenario = resolve_scenario(scenario, site, options.agents, options.route, options.laps,
                                options.repeat)
    if options.events:
        entries = [entry for text in options.events for entry in parse_event(text)]
        plan = read_events(entries, None, 'command line', [v.name for v in scenario.vehicles],
                           plan=scenario.events)
        scenario = replace(scenario, events=plan)
    if options.event_log:
        scenario = replace(scenario, events=replay(
            scenario.events, options.event_log, [v.name for v in scenario.vehicles], 'event log'))
    return scenario


@dataclass(frozen=True)
class RigRun:
    """A scenario with the options of one run, resolved once for both drivers:
    its placed vehicles, each one's checked configuration, and the sim node's
    own values (``scene``, ``terrain``, ``duration_s``, ``rtf`` and the rest)."""

    scenario: Scenario
    configs: tuple
    sim_values: dict


def resolve_run(rig, options: RigOptions = RigOptions()) -> RigRun:
    """``rig`` (a Scenario, a packaged rig or scenario name, or a file) with
    ``options``: what :func:`rig_nodes` starts and what the recorder records."""
    scenario = _resolved(rig, options)
    sim_values = _sim_values(scenario, options)
    configs = tuple(agent_config(vehicle, options, scenario) for vehicle in scenario.vehicles)
    _check_one_world(scenario, configs)
    return RigRun(scenario, configs, sim_values)


def rig_nodes(rig, options: RigOptions = RigOptions()):
    """The nodes of ``rig`` (a Scenario, or a packaged rig or scenario name, or
    a file) with ``options``: the sim node first, then per vehicle its GNSS
    and IMU nodes."""
    run = resolve_run(rig, options)
    scenario, sim_values = run.scenario, run.sim_values
    namespace = check_namespace(options.namespace)
    # at rtf 0: deep histories, and the pace of what every reliable subscriber acknowledges
    fast = sim_values['rtf'] == 0.0
    depth = FAST_OUTPUT_DEPTH if fast else OUTPUT_DEPTH.default
    acks = FAST_ACK_EVERY_STEPS if fast else ACK_EVERY_STEPS.default
    if not isinstance(options.use_sim_time, bool):
        raise ConfigError(f'use_sim_time = {options.use_sim_time!r}: allowed true or false')
    common = {'use_sim_time': options.use_sim_time, 'output_depth': depth,
              'ack_every_steps': acks}
    # The sim node is the clock: it runs on wall time and never hears its own /clock.
    sim = {**sim_values, **common, 'use_sim_time': False,
           'agents.names': [v.name for v in scenario.vehicles]}
    sensors = []
    for vehicle, config in zip(scenario.vehicles, run.configs):
        prefix = f'agents.{vehicle.name}.'
        events = scenario.events.to_json(vehicle.name)
        sim.update({prefix + name: value
                    for name, value in node_parameters(vehicle, events).items()})
        sim.update(agent_parameters(config, prefix))
        node_params = {**common, 'vehicle': vehicle.model, 'frame_prefix': vehicle.frame_prefix,
                       'events': events, **agent_parameters(config)}
        for executable, on in (('gnss_node', config['gnss.enabled']),
                               ('imu_node', config['imu.enabled'])):
            if on:
                extra = {'scene': sim_values['scene']} if executable == 'gnss_node' else {}
                sensors.append(NodeSpec(executable, executable,
                                        _join(namespace, vehicle.namespace),
                                        {**node_params, **extra}))
    env = network_environment(options.network)[0]
    if sim_values['rtf'] == 0.0:
        env.update(fast_repair_environment())
    return [replace(node, env=dict(env))
            for node in [NodeSpec('sim_node', 'sim_node', namespace, sim), *sensors]]


def rig_processes(rig, options: RigOptions = RigOptions()):
    """The processes that start the nodes of :func:`rig_nodes`: the sim node
    alone, and the sensor nodes by ``options.sensor_processes`` -- all in one
    process (``one``, the default), one process per vehicle (``vehicle``), or
    each in its own (``node``).  A process of several nodes is a NodeSpec of
    the executable ``sensor_nodes`` with the nodes in ``nodes``: in the rig's
    namespace, or for ``vehicle`` in the vehicle's."""
    layout = options.sensor_processes
    if layout not in SENSOR_PROCESSES:
        raise ConfigError(f'sensor_processes = {layout!r}; allowed: '
                          + ', '.join(SENSOR_PROCESSES))
    sim, *sensors = rig_nodes(rig, options)
    if layout == 'node' or not sensors:
        return [sim, *sensors]
    groups = {}
    for node in sensors:
        groups.setdefault(sim.namespace if layout == 'one' else node.namespace, []).append(node)
    return [sim, *(NodeSpec(HOST, HOST, namespace, {}, env=dict(members[0].env),
                            nodes=tuple(members))
                   for namespace, members in groups.items())]


def hosted_arguments(host, params_files):
    """The arguments that name the nodes of the process ``host`` to
    ``sensor_nodes``: ``--node KIND NAME FILE`` for each, with its parameter file."""
    arguments = []
    for member, path in zip(host.nodes, params_files):
        arguments += ['--node', member.executable, hosted_name(host, member), str(path)]
    return arguments


def hosted_name(host, node):
    """The name of ``node`` within the process ``host``: after its namespace
    relative to the host's (``agent0/gnss_node``)."""
    relative = node.namespace[len(host.namespace):].strip('/') if host.namespace \
        else node.namespace
    return f'{relative}/{node.name}' if relative else node.name


def rig_config_notice(rig, options: RigOptions = RigOptions()):
    """The one line of :func:`acres_sim.config.loader.packaged_notice` over the
    vehicles of ``rig`` with ``options`` (None without a config file of the
    user's, or when it sets every key the packaged files would)."""
    if not options.config_file:
        return None
    scenario = _resolved(rig, options)
    return packaged_notice(options.config_file,
                           [agent_config(vehicle, options, scenario)
                            for vehicle in scenario.vehicles])
