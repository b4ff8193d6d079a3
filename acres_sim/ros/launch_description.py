"""The launch description behind launch/*.launch.py: the nodes of a rig.

A launch file starts exactly the processes of :func:`acres_sim.rig.rig_processes`
(those ``acres-sim up`` starts too): the sim node, then each vehicle's GNSS
and IMU nodes -- by default all in one ``sensor_nodes`` process, whose nodes'
parameter files are written into the temporary folder (as launch_ros writes
a Node's) and removed when the launch shuts down.  polaris.launch.py and
maxxum.launch.py fix the rig; rig.launch.py takes it as the argument
``rig:=NAME|FILE``.

The node list depends on the launch arguments (``agents:=3`` means more
nodes), so it is built in an OpaqueFunction once they are known.  Launch
arguments arrive as strings: :func:`options_from_launch_arguments` turns them
into RigOptions.  It needs no launch, so it can be tested anywhere; launch and
launch_ros are imported only inside the functions that build launch actions.
A wrong value ends the launch with the one line of its ConfigError (launch
prints it as "Caught exception in launch ...") and exit status 1.

DDS stays on this machine unless ``network:=lan`` or the user set the ROS
discovery variables (:mod:`acres_sim.network`, as for ``acres-sim up``): the
nodes get the variables in their environment and the launch logs one line.

``namespace:=NS`` puts the rig under NS, below any namespace that a
``PushRosNamespace`` of an including launch file pushed (the Node actions get
relative namespaces, and the nodes relative topic names).  An argument that
the launch file does not declare ends the launch with one line naming it and
the allowed ones (:func:`unknown_arguments`): launch itself would only set it
as a launch configuration and go on.
"""

from dataclasses import dataclass
import difflib
import os
import sys
import tempfile

from acres_sim.config.loader import parse_value
from acres_sim.config.node_params import sim_param
from acres_sim.config.options import VIBRATION_KEYS, vibration_overrides
from acres_sim.config.schema import key
from acres_sim.config.validate import ConfigError
from acres_sim.network import NETWORKS, network_environment
from acres_sim.rig import (KILL_GRACE_S, SENSOR_PROCESSES, STOP_GRACE_S, RigOptions,
                           hosted_arguments, rig_config_notice, rig_names, rig_processes)

__all__ = ['Argument', 'LAUNCH_OWN_ARGUMENTS', 'launch_arguments', 'options_from_launch_arguments',
           'rig_launch_description', 'unknown_arguments']

PACKAGE = 'acres_sim'
DEFAULT_RIG = 'polaris'

# Launch configurations that launch itself reads from any launch file's
# arguments (ros2 launch --launch-prefix passes launch-prefix:=...): accepted.
LAUNCH_OWN_ARGUMENTS = ('launch-prefix', 'launch-prefix-filter', 'emulate_tty',
                        'sigterm_timeout', 'sigkill_timeout')

# Launch argument -> sensor key set in every vehicle's configuration.
SENSOR_ARGUMENTS = {
    'gnss': 'gnss.enabled',
    'imu': 'imu.enabled',
    'ins': 'ins.enabled',
    'gnss_hz': 'gnss.hz',
    'imu_hz': 'imu.hz',
    'delay': 'delay_s',
    'gnss_start': 'gnss.start',
}

# Launch argument -> sim node parameter (SIM_PARAMS); rtf and duration_s
# have fields of their own in RigOptions (a scenario may set them too).
SIM_ARGUMENTS = {
    'rtf': 'rtf',
    'duration': 'duration_s',
    'cmd_vel_type': 'cmd_vel.type',
    'publish_tf': 'publish_tf',
    'follow_route': 'follow_route',
    'start_timeout': 'start_timeout_s',
    'wait_for_subscribers': 'start_subscribers',
    'lookahead': 'lookahead_steps',
}


SCENARIO_ARGUMENTS = ('rtf', 'duration')


@dataclass(frozen=True)
class Argument:
    """One launch argument: its name, default (a string) and description."""

    name: str
    default: str
    description: str


def _text(value):
    """A default as launch shows it: true/false, numbers without a trailing .0."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f'{value:g}'
    return str(value)


def _sim_argument(name):
    """A sim node parameter's argument: its default and description from SIM_PARAMS
    (those a scenario may set are empty by default: the scenario's)."""
    p = sim_param(SIM_ARGUMENTS[name])
    text = f'Sim node parameter {p.name}: {p.description} Allowed: {p.allowed()}.'
    if name in SCENARIO_ARGUMENTS:
        return Argument(name, '', f"{text} Empty: the scenario's, else {_text(p.default)}.")
    return Argument(name, _text(p.default), text)


def _sensor_argument(name, sensor_key):
    """A sensor key's argument, empty by default; its description from the schema."""
    k = key(sensor_key)
    return Argument(name, '', f'Key {k.name}: {k.description} Allowed: {k.allowed()}. '
                              'Empty: as configured.')


def launch_arguments(rig=None):
    """The Arguments the launch files declare; ``rig=None`` (rig.launch.py)
    adds ``rig``.  The defaults leave the rig and its files as they are."""
    rig_argument = [Argument('rig', DEFAULT_RIG, 'Packaged rig or scenario ('
                             + ', '.join(rig_names()) + ') or a rig or scenario file.')]
    return [
        *(rig_argument if rig is None else []),
        Argument('namespace', '', 'ROS namespace of the whole rig, below any pushed one: every '
                                  'topic but /clock, /tf, /tf_static and /diagnostics moves '
                                  "under it (a vehicle's own namespace nests below). Empty: "
                                  'none.'),
        Argument('seed', '', f'{key("seed").description} Allowed: {key("seed").allowed()}. '
                             'Empty: as configured.'),
        Argument('noise', '', "false: no errors, biases or noise (the spec's no-noise "
                              'option). Empty: as configured.'),
        Argument('agents', '', "N copies of the rig's one vehicle (1 to 100); agent k lives in "
                               'namespace agent<k> with frames agent<k>/. Empty: the rig\'s '
                               'vehicles.'),
        Argument('route', '', 'Route of every vehicle: a packaged route (acre_demo, field, '
                              "figure8, loop, ...) or a route file. Empty: each vehicle's own."),
        Argument('laps', '', 'Laps of a closed route (loop, figure8, north_field, west_field), '
                             "then park where it started. Empty: the scenario's."),
        Argument('repeat', '', 'true: drive a closed route again and again until the run '
                               "ends. Empty: the scenario's."),
        Argument('scene', '', 'Scene file of the GNSS sky view instead of the scenario\'s '
                              '(default: the packaged ACRE farmstead).'),
        Argument('terrain', '', 'Ground under the wheels: flat (the plane), a packaged terrain '
                                '(acre) or a terrain file. Empty: the scenario\'s, else flat.'),
        Argument('vibration', '', 'on: the engine and, when parked, the brake\'s jitter shake '
                                  'every vehicle (' + ' and '.join(VIBRATION_KEYS) + ' true); '
                                  'off: neither. Empty: as configured.'),
        Argument('use_sim_time', 'true', 'The GNSS and IMU nodes follow /clock of the sim node '
                                         '(the sim node is the clock).'),
        *(_sim_argument(name) for name in SIM_ARGUMENTS),
        *(_sensor_argument(name, k) for name, k in SENSOR_ARGUMENTS.items()),
        Argument('config', '', 'Sensor configuration file instead of the packaged '
                               "sensors.yaml (YAML, or the game's sensors.json)."),
        Argument('site', '', 'Site georeference file instead of the packaged site.yaml.'),
        Argument('network', NETWORKS[0], 'loopback: DDS stays on this machine unless '
                                         'ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_LOCALHOST_ONLY or '
                                         'ROS_STATIC_PEERS is set; lan: other machines on the '
                                         'ROS_DOMAIN_ID see the rig. Allowed: '
                                         + ' or '.join(NETWORKS) + '.'),
        Argument('sensor_processes', SENSOR_PROCESSES[0],
                 'one: every GNSS and IMU node of the rig in one process (the least CPU and '
                 'memory); vehicle: one process per vehicle; node: each node in its own. '
                 'Allowed: ' + ', '.join(SENSOR_PROCESSES) + '.'),
    ]


def _parse(name, text):
    """The value of argument ``name`` read as YAML, as ``--set`` reads it."""
    return parse_value(text, f'launch argument {name}:={text!r}')


def options_from_launch_arguments(values):
    """RigOptions from launch argument values, strings by name (see
    :func:`launch_arguments`); a missing or empty value is not given.

    Numbers and true/false are read as YAML; choices stay text, routes and
    files too (with ~ expanded).  Only use_sim_time is checked here: rig_nodes
    and the configuration check every other value, with a ConfigError naming it.
    """
    given = {name: str(text).strip() for name, text in values.items() if str(text).strip()}

    def value(name, kind=None):
        """The argument's value: None if not given; text for str kinds, else YAML."""
        if name not in given:
            return None
        return given[name] if kind == 'str' else _parse(name, given[name])

    def path(name):
        return os.path.expanduser(given[name]) if name in given else None

    use_sim_time = value('use_sim_time')
    if use_sim_time is None:
        use_sim_time = True
    elif not isinstance(use_sim_time, bool):
        raise ConfigError(f'launch argument use_sim_time:={given["use_sim_time"]!r}: '
                          'allowed: true or false')
    overrides = {k: value(name, key(k).kind) for name, k in SENSOR_ARGUMENTS.items()
                 if name in given}
    if 'vibration' in given:
        overrides.update(vibration_overrides(given['vibration'], 'launch argument vibration:='))
    sim = {SIM_ARGUMENTS[name]: value(name, sim_param(SIM_ARGUMENTS[name]).kind)
           for name in SIM_ARGUMENTS if name not in ('rtf', 'duration') and name in given}
    return RigOptions(seed=value('seed'), noise=value('noise'), agents=value('agents'),
                      route=path('route'), laps=value('laps'), repeat=value('repeat'),
                      scene=path('scene'), terrain=path('terrain'), rtf=value('rtf'),
                      duration_s=value('duration'),
                      use_sim_time=use_sim_time, overrides=overrides,
                      config_file=path('config'), site_file=path('site'), sim=sim,
                      network=given.get('network', NETWORKS[0]),
                      namespace=given.get('namespace', ''),
                      sensor_processes=given.get('sensor_processes', SENSOR_PROCESSES[0]))


def unknown_arguments(names, rig=None, launch_file='this launch file'):
    """None, or the ConfigError (one line) for the first of ``names`` (the
    launch arguments given) that :func:`launch_arguments` of ``rig`` does not
    declare, with the allowed names."""
    allowed = [a.name for a in launch_arguments(rig)]
    unknown = [name for name in names if name not in allowed and name not in LAUNCH_OWN_ARGUMENTS]
    if not unknown:
        return None
    close = difflib.get_close_matches(unknown[0], allowed, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else ''
    return ConfigError(f"unknown launch argument '{unknown[0]}' of {launch_file}{hint}; "
                       f'allowed: {", ".join(allowed)}')


def arguments_given(context):
    """The names of the launch arguments that the IncludeLaunchDescription
    including this launch file gave it (``ros2 launch`` includes the file
    it runs with the command line's NAME:=VALUE), or None if there is none.

    launch does not tell an included description which arguments are its
    own: it sets them as launch configurations, among those of the including
    files.  The include that is being executed is the nearest
    IncludeLaunchDescription among the entities launch is visiting, i.e. on
    the call stack of its visit_all_entities_and_collect_futures.
    """
    from launch.actions import IncludeLaunchDescription
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
    from launch.utilities import visit_all_entities_and_collect_futures as visit

    code = getattr(visit, '__code__', None)
    frame = sys._getframe(1)
    while frame is not None:
        entity = frame.f_locals.get('entity') if frame.f_code is code else None
        if isinstance(entity, IncludeLaunchDescription):
            return [perform_substitutions(context, normalize_to_list_of_substitutions(name))
                    for name, _value in entity.launch_arguments]
        frame = frame.f_back
    return None


def rig_launch_description(rig=None):
    """The LaunchDescription of ``rig`` (a packaged rig name or a rig file);
    ``rig=None``: the rig named by the launch argument ``rig``."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    declared = [DeclareLaunchArgument(a.name, default_value=a.default,
                                      description=a.description)
                for a in launch_arguments(rig)]
    return LaunchDescription([*declared,
                              OpaqueFunction(function=launch_nodes, kwargs={'rig': rig})])


def launch_nodes(context, rig=None):
    """A LogInfo of where DDS goes (and one of the keys that packaged files
    set under a ``config:=FILE`` of the user's), then the Node actions of
    ``rig`` with the launch arguments of ``context`` (the body of the
    OpaqueFunction; an undeclared argument or a ConfigError ends the launch)."""
    from launch.actions import LogInfo
    from launch.substitutions import LaunchConfiguration

    path = context.get_locals_as_dict().get('current_launch_file_path')
    error = unknown_arguments(arguments_given(context) or [], rig,
                              os.path.basename(path) if path else 'this launch file')
    if error:
        raise error
    values = {a.name: LaunchConfiguration(a.name, default='').perform(context)
              for a in launch_arguments(rig)}
    rig = rig or os.path.expanduser(values.pop('rig').strip() or DEFAULT_RIG)
    options = options_from_launch_arguments(values)
    nodes = rig_processes(rig, options)
    notice = rig_config_notice(rig, options)
    written = []
    return [LogInfo(msg=network_environment(options.network)[1]),
            *([LogInfo(msg=notice)] if notice else []),
            *(node_action(spec, written) for spec in nodes),
            remove_on_shutdown(written)]


def sim_node_ended(event, _context):
    """The sim node's exit ends the launch (there is no truth for the sensor
    nodes without it); an exit with an error (e.g. another simulator on the
    domain) ends it with one, so that ``ros2 launch`` exits with status 1."""
    from launch.actions import Shutdown

    if event.returncode != 0:
        raise RuntimeError(f'{event.process_name} exited with status {event.returncode}')
    return [Shutdown(reason='the sim node ended')]


def hosted_parameter_files(spec, written):
    """The parameter file of each node of the process ``spec``, written as
    launch_ros writes those of a Node's ``parameters`` (a new file in the
    temporary folder); their paths are added to ``written``."""
    from acres_sim.up import params_document

    paths = []
    for member in spec.nodes:
        handle, path = tempfile.mkstemp(prefix='acres_sim_params_', suffix='.yaml')
        with os.fdopen(handle, 'w') as file:
            file.write(params_document(member))
        written.append(path)
        paths.append(path)
    return paths


def remove_on_shutdown(paths):
    """An event handler that removes the files of ``paths`` (written by this
    launch) when the launch shuts down."""
    from launch.actions import RegisterEventHandler
    from launch.event_handlers import OnShutdown

    def remove(_event, _context):
        for path in paths:
            try:
                os.unlink(path)
            except OSError:
                pass

    return RegisterEventHandler(OnShutdown(on_shutdown=remove))


def node_action(spec, written):
    """The launch_ros Node of a NodeSpec (for a process of several nodes, their
    parameter files are written first, see :func:`hosted_parameter_files`);
    the sim node's exit ends the launch (:func:`sim_node_ended`); SIGTERM and
    SIGKILL after Ctrl-C come after STOP_GRACE_S and KILL_GRACE_S."""
    from launch_ros.actions import Node

    from launch.substitutions import LaunchConfiguration

    on_exit = sim_node_ended if spec.executable == 'sim_node' else None
    if spec.nodes:
        own = {'arguments': hosted_arguments(spec, hosted_parameter_files(spec, written))}
    else:
        own = {'name': spec.name, 'parameters': [spec.parameters]}
    # after Ctrl-C, launch's own 5 s before SIGTERM was short on a loaded machine
    # (see STOP_GRACE_S); `sigterm_timeout:=S` / `sigkill_timeout:=S` still set them
    return Node(package=PACKAGE, executable=spec.executable, **own,
                namespace=spec.namespace or None,
                remappings=list(spec.remappings), additional_env=spec.env or None,
                output='screen', on_exit=on_exit,
                sigterm_timeout=LaunchConfiguration('sigterm_timeout',
                                                    default=f'{STOP_GRACE_S:g}'),
                sigkill_timeout=LaunchConfiguration('sigkill_timeout',
                                                    default=f'{KILL_GRACE_S:g}'))
