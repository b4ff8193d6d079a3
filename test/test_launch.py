"""Tests of the launch files launch/*.launch.py and acres_sim/ros/launch_description.py.

polaris.launch.py and maxxum.launch.py launch their packaged rig,
rig.launch.py the rig of its argument ``rig:=NAME|FILE``; all three call
``rig_launch_description`` and start exactly the processes of
``rig_processes`` (the nodes of ``rig_nodes``, the sensor nodes in one process
by default).

Four kinds of test:

* ``test_launch_file*`` and ``test_*import*`` read the files with ``ast`` only,
  so they run everywhere.
* ``test_*argument*`` check the launch arguments and their parsing into
  RigOptions (``options_from_launch_arguments``), which need no launch: they
  run everywhere too.
* ``test_launched_*`` load each launch file with launch's Python API, run its
  OpaqueFunction in a LaunchContext and compare the Node actions (executable,
  name, namespace, parameters as launch_ros evaluates them, or as the sensor
  process's files give them) with rig_processes, without starting a
  process.  They need launch and launch_ros; elsewhere they are skipped with
  the reason.
* ``test_rig_runs_under_launch_pytest`` really launches the rigs with the
  launch_pytest plugin (duration:=1 rtf:=0) and checks the started commands,
  their parameter files, loopback-only DDS and that the launch ends with the
  sim node.  It runs only where the launch_pytest plugin is active and can
  collect launch tests (launch_pytest 3.4.3, Jazzy's, needs pytest < 8.4);
  elsewhere a placeholder of the same name is skipped with the reason.

Nothing here is installed by ``make setup``: the pip-installed ROS 2 wheels do
not include launch or launch_ros, so on a plain Python machine only the first
two kinds run.  (From the repository root ``import launch`` finds the folder
launch/ as a namespace package; the tests check for the real one.)
"""

import ast
import importlib.util
from pathlib import Path
import sys
import tempfile
import time

import pytest
import yaml

from acres_sim.config import ConfigError
from acres_sim.rig import RigOptions, hosted_name, rig_names, rig_nodes, rig_processes
from acres_sim.ros.launch_description import (LAUNCH_OWN_ARGUMENTS, launch_arguments,
                                              options_from_launch_arguments, sim_node_ended,
                                              unknown_arguments)

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_DIR = ROOT / 'launch'
MODULE = ROOT / 'acres_sim' / 'ros' / 'launch_description.py'
PACKAGE = 'acres_sim'

# The launch files with a rig of their own; rig.launch.py takes any rig.
FIXED_RIGS = ('maxxum', 'polaris')
RIG_FILE = 'rig'

# Every launch argument but rig (rig.launch.py only).
OPTION_ARGUMENTS = {
    'namespace', 'seed', 'noise', 'agents', 'route', 'laps', 'repeat', 'scene', 'terrain',
    'vibration', 'use_sim_time',
    'rtf', 'duration', 'cmd_vel_type',
    'publish_tf', 'follow_route', 'start_timeout', 'wait_for_subscribers', 'lookahead', 'gnss',
    'imu', 'ins', 'gnss_hz', 'imu_hz', 'delay', 'gnss_start', 'config', 'site', 'network',
    'sensor_processes'}

# How long launch may take to start the processes, and the sim to end.
START_TIMEOUT = 30.0
RUN_TIMEOUT = 120.0


def launch_file(name):
    """The source launch file launch/<name>.launch.py."""
    return LAUNCH_DIR / f'{name}.launch.py'


def defaults(rig=None):
    """The launch arguments' default values, by name."""
    return {a.name: a.default for a in launch_arguments(rig)}


# --- ast: no launch needed ---------------------------------------------------

def called_name(call):
    """The name of the function a Call node calls (``f(...)`` or ``m.f(...)``)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def generate_call(name):
    """The one rig_launch_description(...) call of generate_launch_description()
    in launch/<name>.launch.py, after checking the file's shape."""
    path = launch_file(name)
    tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))

    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert 'generate_launch_description' in functions, \
        f'{path.name} defines no top-level generate_launch_description()'
    generate = functions['generate_launch_description']
    arguments = generate.args
    assert not (arguments.posonlyargs or arguments.args or arguments.kwonlyargs), \
        f'{path.name}: generate_launch_description() must take no arguments'

    imported = {alias.asname or alias.name
                for node in tree.body if isinstance(node, ast.ImportFrom)
                and node.module == 'acres_sim.ros.launch_description'
                for alias in node.names}
    assert 'rig_launch_description' in imported, \
        f'{path.name} does not import rig_launch_description from acres_sim.ros.launch_description'

    calls = [node for node in ast.walk(generate)
             if isinstance(node, ast.Call) and called_name(node) == 'rig_launch_description']
    assert len(calls) == 1, \
        f'{path.name}: generate_launch_description() calls rig_launch_description ' \
        f'{len(calls)} times'
    returns = [node for node in ast.walk(generate) if isinstance(node, ast.Return)]
    assert returns and all(node.value is not None for node in returns), \
        f'{path.name}: generate_launch_description() must return the launch description'
    return path, calls[0]


def test_launch_files_are_the_fixed_rigs_and_rig():
    """launch/ holds <rig>.launch.py for the fixed rigs, which are packaged, and rig.launch.py."""
    names = {path.name[:-len('.launch.py')] for path in LAUNCH_DIR.glob('*.launch.py')}
    assert names == {*FIXED_RIGS, RIG_FILE}, f'launch files: {sorted(names)}'
    assert set(FIXED_RIGS) <= set(rig_names()), f'packaged rigs: {rig_names()}'


@pytest.mark.parametrize('rig', FIXED_RIGS)
def test_launch_file_launches_its_own_rig(rig):
    """<rig>.launch.py: generate_launch_description() calls rig_launch_description('<rig>')."""
    path, call = generate_call(rig)
    named = {keyword.arg: keyword.value for keyword in call.keywords}
    argument = call.args[0] if call.args else named.get('rig')
    assert isinstance(argument, ast.Constant) and argument.value == rig, \
        f'{path.name} must call rig_launch_description({rig!r}), not {ast.unparse(call)}'
    assert len(call.args) + len(call.keywords) == 1, \
        f'{path.name}: unexpected arguments in {ast.unparse(call)}'


def test_launch_file_rig_takes_the_rig_argument():
    """rig.launch.py calls rig_launch_description() without a rig: the argument rig decides."""
    path, call = generate_call(RIG_FILE)
    assert not (call.args or call.keywords), \
        f'{path.name} must call rig_launch_description() without arguments, not {ast.unparse(call)}'


def top_level_imports(path):
    """The modules ``path`` imports outside its functions."""
    tree = ast.parse(path.read_text(encoding='utf-8'), filename=str(path))
    modules = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            modules.add(node.module)
    return modules


def test_launch_description_imports_launch_only_inside_functions():
    """launch_description.py imports without launch: the argument parsing is testable anywhere."""
    roots = {module.split('.')[0] for module in top_level_imports(MODULE)}
    assert not roots & {'launch', 'launch_ros', 'ament_index_python'}, sorted(roots)


def test_only_the_launch_files_import_launch_description():
    """No module of the package imports acres_sim.ros.launch_description."""
    importers = [str(path.relative_to(ROOT)) for path in (ROOT / PACKAGE).rglob('*.py')
                 if path != MODULE and 'launch_description' in path.read_text(encoding='utf-8')]
    assert not importers, f'only launch/*.launch.py may use it: {importers}'


# --- launch arguments and their parsing: no launch needed --------------------

def test_launch_arguments_are_declared_with_descriptions():
    """The fixed rigs take the options, rig.launch.py also rig; each has a description."""
    assert set(defaults('polaris')) == OPTION_ARGUMENTS
    assert set(defaults()) == OPTION_ARGUMENTS | {'rig'}
    assert defaults()['rig'] == 'polaris'
    for argument in launch_arguments():
        assert isinstance(argument.default, str), argument
        assert argument.description.strip(), f'{argument.name} has no description'


@pytest.mark.parametrize('rig', rig_names())
def test_default_arguments_change_nothing(rig):
    """Launching without arguments starts exactly rig_nodes(rig) with no options."""
    assert rig_nodes(rig, options_from_launch_arguments(defaults(rig))) == rig_nodes(rig)


def test_arguments_map_to_rig_options():
    """Every launch argument reaches its RigOptions field or key, typed like --set."""
    values = {
        'seed': '7', 'noise': 'false', 'agents': '3', 'route': 'loop', 'laps': '4',
        'repeat': 'false', 'scene': '/x/scene.yaml', 'terrain': '/x/terrain.yaml',
        'vibration': 'on', 'use_sim_time': 'false',
        'rtf': '0', 'duration': '12.5', 'cmd_vel_type': 'twist_stamped', 'publish_tf': 'false',
        'start_timeout': '5', 'follow_route': 'false', 'wait_for_subscribers': '1',
        'lookahead': '3', 'gnss': 'true', 'imu': 'false', 'ins': 'true', 'gnss_hz': '5',
        'imu_hz': '100.0', 'delay': '0', 'gnss_start': 'cold', 'config': '/x/sensors.yaml',
        'site': 'site.yaml', 'network': 'lan', 'namespace': 'demo/rig1', 'rig': 'ignored here',
        'sensor_processes': 'vehicle'}
    assert options_from_launch_arguments(values) == RigOptions(
        seed=7, noise=False, agents=3, route='loop', laps=4, repeat=False,
        scene='/x/scene.yaml', terrain='/x/terrain.yaml', rtf=0, duration_s=12.5,
        use_sim_time=False,
        overrides={'gnss.enabled': True, 'imu.enabled': False, 'ins.enabled': True,
                   'gnss.hz': 5, 'imu.hz': 100.0, 'delay_s': 0, 'gnss.start': 'cold',
                   'vibration.engine': True, 'vibration.parked_jitter': True},
        config_file='/x/sensors.yaml', site_file='site.yaml',
        sim={'cmd_vel.type': 'twist_stamped', 'publish_tf': False, 'start_timeout_s': 5,
             'follow_route': False, 'start_subscribers': 1, 'lookahead_steps': 3},
        network='lan', namespace='demo/rig1', sensor_processes='vehicle')


def test_empty_or_missing_arguments_are_not_given():
    """'' (or blanks, or no value at all) leaves the rig and its files as they are."""
    assert options_from_launch_arguments({}) == RigOptions()
    assert options_from_launch_arguments({'seed': '', 'gnss_hz': '  ', 'config': ''}) \
        == RigOptions()


def test_numbers_are_read_as_a_config_file_reads_them():
    """'1e1' is a number in a config file (as rcl reads YAML), so in a launch argument too."""
    options = options_from_launch_arguments({'gnss_hz': '1e1', 'delay': '2e-2'})
    assert options.overrides == {'gnss.hz': 10.0, 'delay_s': 0.02}


def test_text_arguments_stay_text():
    """Choices, routes and files are not read as YAML ('on' is no boolean, '~' is home)."""
    options = options_from_launch_arguments({'gnss_start': 'on', 'route': '1',
                                             'config': '~/sensors.yaml'})
    assert options.overrides == {'gnss.start': 'on'}
    assert options.route == '1'
    assert options.config_file == str(Path.home() / 'sensors.yaml')


@pytest.mark.parametrize('values, message', [
    ({'use_sim_time': 'maybe'}, "use_sim_time:='maybe': allowed: true or false"),
    ({'seed': '[1,'}, "seed:='[1,' is not valid YAML"),
    ({'seed': '-1'}, 'seed = -1'),
    ({'agents': '0'}, 'agents = 0: allowed 1 to 100'),
    ({'gnss_hz': 'abc'}, "gnss.hz = 'abc'"),
    ({'imu': 'maybe'}, "imu.enabled = 'maybe'"),
    ({'rtf': '-1'}, 'rtf = -1'),
    ({'cmd_vel_type': 'stamped'}, "cmd_vel.type = 'stamped'"),
    ({'gnss_start': 'warm'}, "gnss.start = 'warm'"),
    ({'route': 'nowhere'}, "unknown route 'nowhere'"),
    ({'laps': '2'}, "route 'acre_demo' is not closed"),
    ({'laps': '-1'}, 'laps = -1: allowed 0'),
    ({'route': 'loop', 'repeat': 'maybe'}, "repeat = 'maybe'"),
    ({'scene': '/no/such/scene.yaml'}, '/no/such/scene.yaml'),
    ({'terrain': '/no/such/terrain.yaml'}, 'cannot read terrain file /no/such/terrain.yaml'),
    ({'terrain': 'moon'}, "unknown terrain 'moon'"),
    ({'vibration': 'loud'}, "vibration:='loud': allowed: on"),
    ({'config': '/no/such/sensors.yaml'}, '/no/such/sensors.yaml'),
    ({'network': 'wifi'}, "network = 'wifi'; allowed: loopback or lan"),
])
def test_bad_arguments_raise_one_line_config_error(values, message):
    """A wrong argument value ends in a one-line ConfigError that names it."""
    with pytest.raises(ConfigError) as caught:
        rig_nodes('polaris', options_from_launch_arguments(values))
    text = str(caught.value)
    assert message in text and '\n' not in text, text


@pytest.mark.parametrize('rig, names, message', [
    ('polaris', ['seed', 'namespce'], "unknown launch argument 'namespce' of polaris.launch.py "
                                      "(did you mean 'namespace'?); allowed: namespace, seed, "),
    ('maxxum', ['rig'], "unknown launch argument 'rig' of maxxum.launch.py; allowed: namespace"),
    (None, ['rig', 'use_rviz', 'x'], "unknown launch argument 'use_rviz' of rig.launch.py; "
                                     'allowed: rig, namespace, seed, '),
])
def test_an_undeclared_argument_is_one_config_error(rig, names, message):
    """An argument the launch file does not declare is named, with the allowed ones."""
    error = unknown_arguments(names, rig, f'{rig or RIG_FILE}.launch.py')
    assert isinstance(error, ConfigError)
    text = str(error)
    assert text.startswith(message) and '\n' not in text, text
    assert text.endswith(', '.join(a.name for a in launch_arguments(rig)))


@pytest.mark.parametrize('rig', [*FIXED_RIGS, None])
def test_declared_and_launchs_own_arguments_pass(rig):
    """Every declared argument, and those launch itself reads (launch-prefix, ...)."""
    names = [a.name for a in launch_arguments(rig)] + list(LAUNCH_OWN_ARGUMENTS)
    assert unknown_arguments(names, rig) is None
    assert unknown_arguments([], rig) is None


# --- launch introspection: needs launch and launch_ros -----------------------

@pytest.fixture(autouse=True)
def own_temporary_folder(monkeypatch, tmp_path):
    """The sensor process's parameter files that a launch description writes
    (its shutdown, which removes them, never comes here) go into the test's folder."""
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))


def import_launch():
    """Skip the test unless launch and launch_ros are installed, saying which is missing."""
    why = ('{} is not installed: it comes with a ROS 2 distribution (apt ros-DISTRO-{}), '
           'not with the pip wheels of `make setup`')
    launch = pytest.importorskip('launch', reason=why.format('launch', 'launch'))
    if not hasattr(launch, 'LaunchDescription'):
        # From the repository root, the folder launch/ imports as a namespace package.
        pytest.skip(why.format('launch', 'launch')
                    + f' (`import launch` found only {launch.__path__})')
    pytest.importorskip('launch_ros', reason=why.format('launch_ros', 'launch-ros'))


def load_launch_description(name):
    """The LaunchDescription of launch/<name>.launch.py, loaded the way `ros2 launch` does.

    (PythonLaunchDescriptionSource.try_get_launch_description_without_context
    would turn a failing launch file into None; this raises the real error.)
    """
    from launch.launch_description_sources import get_launch_description_from_python_launch_file

    return get_launch_description_from_python_launch_file(str(launch_file(name)))


def launched_actions(name, arguments):
    """The actions launch/<name>.launch.py's OpaqueFunction makes for ``arguments``
    (strings by name, on top of the defaults), and the LaunchContext they were made in."""
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument, OpaqueFunction
    from launch.utilities import perform_substitutions

    description = load_launch_description(name)
    context = LaunchContext()
    for action in description.entities:
        if isinstance(action, DeclareLaunchArgument):
            context.launch_configurations[action.name] = \
                perform_substitutions(context, action.default_value)
    context.launch_configurations.update(arguments)
    functions = [e for e in description.entities if isinstance(e, OpaqueFunction)]
    assert len(functions) == 1, f'{name}.launch.py: {len(functions)} OpaqueFunctions'
    return functions[0].execute(context), context


def launched_nodes(name, arguments):
    """The Node actions launch/<name>.launch.py makes, and their LaunchContext."""
    from launch_ros.actions import Node

    actions, context = launched_actions(name, arguments)
    return [a for a in actions if isinstance(a, Node)], context


def launched_log_lines(name, arguments):
    """The messages of the LogInfo actions launch/<name>.launch.py makes."""
    from launch.actions import LogInfo
    from launch.utilities import perform_substitutions

    actions, context = launched_actions(name, arguments)
    return [perform_substitutions(context, a.msg) for a in actions if isinstance(a, LogInfo)]


def evaluated_parameters(node, context):
    """The parameters of a launch_ros Node as launch_ros hands them over: {name: value},
    lists as lists.  (launch_ros 0.26 has no public accessor before the node runs.)"""
    from launch_ros.utilities import evaluate_parameters

    try:
        parameters = node._Node__parameters
    except AttributeError:
        pytest.fail('launch_ros.actions.Node no longer has _Node__parameters: update this test')
    values = {}
    for item in evaluate_parameters(context, parameters):
        assert isinstance(item, dict), f'a parameter file, not values: {item}'
        values.update(item)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


@pytest.mark.parametrize('name', [*FIXED_RIGS, RIG_FILE])
def test_launched_arguments_are_declared(name):
    """Each launch file declares launch_arguments() with their defaults and descriptions."""
    import_launch()
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument
    from launch.utilities import perform_substitutions

    declared = [action for action in load_launch_description(name).entities
                if isinstance(action, DeclareLaunchArgument)]
    rig = None if name == RIG_FILE else name
    assert {a.name: perform_substitutions(LaunchContext(), a.default_value)
            for a in declared} == defaults(rig)
    assert {a.name: a.description for a in declared} == \
        {a.name: a.description for a in launch_arguments(rig)}


def node_triples(words):
    """(kind, name, parameter file) of each ``--node`` of a sensor process's command line."""
    return [tuple(words[i + 1:i + 4]) for i, word in enumerate(words) if word == '--node']


def hosted_nodes(node, context):
    """:func:`node_triples` of a launch_ros Node of the sensor process."""
    from launch.utilities import perform_substitutions

    return node_triples([perform_substitutions(context, part) for part in node.cmd])


def flattened(tree, prefix=''):
    """The parameters of a parameter file's nested ``ros__parameters``, by dotted name."""
    out = {}
    for name, value in tree.items():
        if isinstance(value, dict):
            out.update(flattened(value, f'{prefix}{name}.'))
        else:
            out[prefix + name] = value
    return out


@pytest.mark.parametrize('name, arguments, rig', [
    ('polaris', {}, 'polaris'),
    ('maxxum', {'seed': '7', 'noise': 'false', 'gnss_hz': '5'}, 'maxxum'),
    (RIG_FILE, {}, 'polaris'),
    (RIG_FILE, {'rig': 'mixed', 'rtf': '0', 'duration': '3'}, 'mixed'),
    (RIG_FILE, {'agents': '3', 'imu': 'false', 'use_sim_time': 'false'}, 'polaris'),
    (RIG_FILE, {'rig': 'mixed', 'sensor_processes': 'node'}, 'mixed'),
    (RIG_FILE, {'agents': '2', 'sensor_processes': 'vehicle'}, 'polaris'),
])
def test_launched_nodes_are_rig_processes(name, arguments, rig):
    """The Node actions are rig_processes' list: executable, name, namespace,
    parameters (value and type, after launch_ros's own evaluation; for the
    sensor process, in the file of each of its nodes); the sim node's exit
    shuts down."""
    import_launch()
    from launch.actions import Shutdown

    nodes, context = launched_nodes(name, arguments)
    options = {k: v for k, v in arguments.items() if k != 'rig'}
    specs = rig_processes(rig, options_from_launch_arguments(options))
    assert [(n.node_package, n.node_executable) for n in nodes] == \
        [(PACKAGE, s.executable) for s in specs]
    for node, spec in zip(nodes, specs):
        assert node._Node__node_namespace == (spec.namespace or None)
        if spec.nodes:            # no name of its own: each of its nodes has one
            assert node._Node__node_name is None
            hosted = hosted_nodes(node, context)
            assert [(kind, hosted) for kind, hosted, _ in hosted] == \
                [(m.executable, hosted_name(spec, m)) for m in spec.nodes]
            for (*_, path), member in zip(hosted, spec.nodes):
                assert Path(path).parent == Path(tempfile.gettempdir())
                values = flattened(yaml.safe_load(Path(path).read_text())['/**']['ros__parameters'])
                assert values == member.parameters, f'{member.full_name}: parameters differ'
                assert {k: type(v) for k, v in values.items()} == \
                    {k: type(v) for k, v in member.parameters.items()}, member.full_name
            continue
        assert node._Node__node_name == spec.name
        values = evaluated_parameters(node, context)
        assert values == spec.parameters, f'{spec.full_name}: parameters differ'
        assert {k: type(v) for k, v in values.items()} == \
            {k: type(v) for k, v in spec.parameters.items()}, f'{spec.full_name}: types differ'
    # launch 3.4 (Jazzy) keeps on_exit in ExecuteLocal, without a public accessor.
    assert getattr(nodes[0], '_ExecuteLocal__on_exit', None) is sim_node_ended, \
        'the sim node\'s exit must shut the launch down'
    assert all(getattr(node, '_ExecuteLocal__on_exit', None) is None for node in nodes[1:])
    ended = sim_node_ended(process_exited(nodes[0], 0), context)
    assert len(ended) == 1 and isinstance(ended[0], Shutdown)


def process_exited(action, returncode):
    """launch's ProcessExited event of ``action`` with ``returncode``."""
    from launch.events.process import ProcessExited

    return ProcessExited(action=action, name='sim_node-1', cmd=['sim_node'], cwd=None, env=None,
                         pid=1, returncode=returncode)


def test_a_failed_sim_node_ends_the_launch_with_an_error():
    """ros2 launch exits 1 when the sim node fails (e.g. another simulator on
    the domain): the exit handler raises, which launch reports in one line."""
    import_launch()
    nodes, context = launched_nodes('polaris', {})
    with pytest.raises(RuntimeError, match='sim_node-1 exited with status 2'):
        sim_node_ended(process_exited(nodes[0], 2), context)


@pytest.mark.parametrize('arguments, user, env, said', [
    ({}, {}, {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}, 'DDS stays on this machine'),
    ({}, {'ROS_DISTRO': 'humble'}, {'ROS_LOCALHOST_ONLY': '1'}, 'ROS_LOCALHOST_ONLY=1'),
    ({'network': 'lan'}, {}, {}, 'on the local network'),
    ({}, {'ROS_STATIC_PEERS': '192.0.2.7'}, {}, 'as you set it: ROS_STATIC_PEERS=192.0.2.7'),
])
def test_launched_nodes_stay_on_loopback_unless_asked(monkeypatch, arguments, user, env, said):
    """Every Node gets the loopback variables unless network:=lan or the user set
    discovery variables, and the launch says so in one LogInfo."""
    import_launch()
    for name in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY', 'ROS_STATIC_PEERS',
                 'ROS_DISTRO'):
        monkeypatch.delenv(name, raising=False)
    for name, value in user.items():
        monkeypatch.setenv(name, value)
    from launch.utilities import perform_substitutions

    nodes, context = launched_nodes('polaris', arguments)
    for node in nodes:
        # launch 3.4 keeps additional_env as (substitutions, substitutions) pairs
        added = {perform_substitutions(context, k): perform_substitutions(context, v)
                 for k, v in node.additional_env or []}
        assert {k: v for k, v in added.items() if k.startswith('ROS_')} == env
    lines = launched_log_lines('polaris', arguments)
    assert len(lines) == 1 and said in lines[0], lines


def test_launched_bad_argument_raises_config_error():
    """A wrong argument: the OpaqueFunction raises the ConfigError, which launch prints
    in one line ("Caught exception in launch ...") and exits with status 1."""
    import_launch()
    with pytest.raises(ConfigError, match='agents = 0: allowed 1 to 100'):
        launched_nodes('polaris', {'agents': '0'})
    with pytest.raises(ConfigError, match="unknown rig 'nowhere'"):
        launched_nodes(RIG_FILE, {'rig': 'nowhere'})


def include_rig(name, arguments, push=None, declare=()):
    """A user's LaunchDescription: ``declare`` arguments of its own, then
    launch/<name>.launch.py included with ``arguments`` (inside a group that
    pushes the namespace ``push``, if given)."""
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import PushRosNamespace

    include = IncludeLaunchDescription(PythonLaunchDescriptionSource(str(launch_file(name))),
                                       launch_arguments=list(arguments.items()))
    body = GroupAction([PushRosNamespace(push), include]) if push else include
    return LaunchDescription([*(DeclareLaunchArgument(n, default_value='x') for n in declare),
                              body])


def run_launch(description):
    """Run ``description`` in a LaunchService: its exit status and the lines
    launch logged (its loggers do not propagate, so a handler of our own)."""
    import logging

    from launch import LaunchService

    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    service = LaunchService(noninteractive=True)
    service.include_launch_description(description)
    logger, keep = logging.getLogger('launch'), Keep()
    logger.addHandler(keep)
    try:
        return service.run(), '\n'.join(lines)
    finally:
        logger.removeHandler(keep)


@pytest.mark.parametrize('push', [None, 'demo'])
def test_launched_with_an_undeclared_argument_ends_at_once(push):
    """An included rig.launch.py given an argument it does not declare ends the
    launch (status 1) with one line naming it, before any node starts; the
    including file's own arguments and its pushed namespace are not reported."""
    import_launch()
    description = include_rig(RIG_FILE, {'rig': 'polaris', 'namespce': 'x'}, push=push,
                              declare=['use_rviz'])
    status, err = run_launch(description)
    assert status == 1, err
    lines = [line for line in err.splitlines() if 'unknown launch argument' in line]
    assert len(lines) == 1, err
    assert "unknown launch argument 'namespce' of rig.launch.py (did you mean 'namespace'?)" \
        in lines[0]
    assert 'use_rviz' not in err and 'ros_namespace' not in err


def test_launched_including_files_arguments_are_not_the_rigs():
    """The arguments an including file declares for itself reach every included
    file as launch configurations: they are not reported as ours (the launch
    goes on to the rig's own check, here a value out of range)."""
    import_launch()
    description = include_rig('polaris', {'agents': '0'}, push='demo', declare=['use_rviz'])
    status, err = run_launch(description)
    assert status == 1, err
    assert 'agents = 0: allowed 1 to 100' in err and 'unknown launch argument' not in err, err


@pytest.mark.parametrize('arguments, pushed', [
    ({'agents': '2'}, '/demo'),
    ({'agents': '2', 'namespace': 'rig1'}, '/demo'),
    ({'agents': '2', 'namespace': 'rig1'}, None),
])
def test_launched_nodes_nest_under_a_pushed_namespace(arguments, pushed):
    """launch_ros puts each Node under the pushed namespace: the sim node and
    the sensor process in it (and in namespace:=NS below it), and the process
    each vehicle's sensor nodes below that."""
    import_launch()
    from launch_ros.utilities import make_namespace_absolute, prefix_namespace

    nodes, context = launched_nodes('polaris', arguments)
    placed = [make_namespace_absolute(prefix_namespace(pushed, n._Node__node_namespace)) or '/'
              for n in nodes]
    inner = f'/{arguments["namespace"]}' if 'namespace' in arguments else ''
    top = f'{pushed or ""}{inner}' or '/'
    assert placed == [top, top]
    hosted = hosted_nodes(nodes[1], context)
    assert [name for _, name, _ in hosted] == ['gnss_node', 'imu_node', 'agent1/gnss_node',
                                               'agent1/imu_node']


# --- a real launch: needs the launch_pytest plugin ---------------------------

def launch_pytest_unavailable():
    """Why the launch_pytest test cannot run in this pytest session, or None if it can."""
    if importlib.util.find_spec('launch_pytest') is None:
        return ('launch_pytest is not installed: it comes with a ROS 2 distribution '
                '(apt ros-DISTRO-launch-pytest), not with the pip wheels of `make setup`')
    plugin = sys.modules.get('launch_pytest.plugin')
    if plugin is None:
        return ('launch_pytest is installed but its pytest plugin is not active '
                '(PYTEST_DISABLE_PLUGIN_AUTOLOAD? run with -p launch_pytest.plugin)')

    def probe():
        """A fixture function that is never used."""

    # launch_pytest up to 3.4.3 (Jazzy) reads fixture._pytestfixturefunction, which
    # pytest 8.4 removed: collecting a launch test then errors out the whole module
    # (ros2/launch#947, fixed by get_launch_test_fixture_scope in ros2/launch#949).
    if (not hasattr(plugin, 'get_launch_test_fixture_scope')
            and not hasattr(pytest.fixture(probe), '_pytestfixturefunction')):
        return ('this launch_pytest cannot collect launch tests under pytest '
                f'{pytest.__version__} '
                '(>= 8.4 needs the fix of ros2/launch#947; Jazzy on Ubuntu 24.04 has pytest 7.4)')
    return None


LAUNCH_PYTEST_UNAVAILABLE = launch_pytest_unavailable()

# (launch file, its arguments besides RUN_ARGUMENTS, the rig it starts)
LAUNCH_CASES = [('polaris', {}, 'polaris'), ('maxxum', {}, 'maxxum'),
                (RIG_FILE, {'rig': 'maxxum', 'agents': '2'}, 'maxxum'),
                (RIG_FILE, {'rig': 'polaris', 'agents': '2', 'namespace': 'demo'}, 'polaris')]
# A short run that ends by itself: one simulated second, as fast as the nodes go.
RUN_ARGUMENTS = {'duration': '1', 'rtf': '0', 'seed': '7', 'noise': 'false'}


def installed_prefix():
    """The install prefix of acres_sim from the ament index, or skip the test."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        return Path(get_package_prefix(PACKAGE))
    except PackageNotFoundError:
        pytest.skip('acres_sim is not in the ament index (AMENT_PREFIX_PATH): launch_ros '
                    'needs an installed tree, e.g. `colcon build` and `source '
                    'install/setup.bash` (an editable pip install does not register the package)')


def full_name(cmd):
    """/<namespace>/<name> of a process from its command line's remappings: a
    node's, or for the sensor process (no ``__node``) its NodeSpec's name."""
    remaps = dict(arg.split(':=', 1) for arg in cmd if arg.startswith('__'))
    namespace = remaps.get('__ns', '/').rstrip('/')
    return f'{namespace}/{remaps.get("__node", "sensor_nodes")}'


if LAUNCH_PYTEST_UNAVAILABLE is None:
    import launch
    from launch.actions import IncludeLaunchDescription, RegisterEventHandler
    from launch.event_handlers import OnProcessExit, OnProcessStart
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    import launch_pytest

    @pytest.fixture(params=LAUNCH_CASES, ids=lambda case: f'{case[0]}{case[1] or ""}')
    def rig_case(request, ros_domain_id):
        """(launch file name, arguments, rig, events seen), on this test's DDS domain."""
        import_launch()
        name, arguments, rig = request.param
        return name, {**arguments, **RUN_ARGUMENTS}, rig, {'started': [], 'exited': []}

    @launch_pytest.fixture
    def rig_launch(rig_case):
        """The rig's launch file with RUN_ARGUMENTS, recording every process start and exit."""
        name, arguments, _rig, events = rig_case
        return launch.LaunchDescription([
            RegisterEventHandler(OnProcessStart(
                on_start=lambda event, _context: events['started'].append(event))),
            RegisterEventHandler(OnProcessExit(
                on_exit=lambda event, _context: events['exited'].append(event))),
            IncludeLaunchDescription(PythonLaunchDescriptionSource(str(launch_file(name))),
                                     launch_arguments=list(arguments.items())),
            launch_pytest.actions.ReadyToTest(),
        ])

    @pytest.mark.launch(fixture=rig_launch)
    def test_rig_runs_under_launch_pytest(rig_case, ros_domain_id):
        """launch starts rig_processes' list from <prefix>/lib/acres_sim with their
        parameters, on loopback, and ends when the sim node ends (every process
        exiting cleanly); the sensor process's parameter files are gone after it."""
        name, arguments, rig, events = rig_case
        prefix = installed_prefix()
        options = {k: v for k, v in arguments.items() if k != 'rig'}
        specs = {s.full_name: s for s in rig_processes(rig,
                                                       options_from_launch_arguments(options))}
        deadline = time.monotonic() + START_TIMEOUT + RUN_TIMEOUT
        while time.monotonic() < deadline and len(events['exited']) < len(specs):
            time.sleep(0.1)
        yield
        # launch_ros leaves the parameter files it writes in /tmp.
        files = [Path(e.cmd[e.cmd.index('--params-file') + 1]) for e in events['started']
                 if '--params-file' in e.cmd]
        try:
            started = {full_name(e.cmd): e for e in events['started']}
            assert set(started) == set(specs), f'{name}: started {sorted(started)}'
            for node_name, event in started.items():
                spec = specs[node_name]
                assert event.cmd[0] == str(prefix / 'lib' / PACKAGE / spec.executable)
                assert event.env.get('ROS_AUTOMATIC_DISCOVERY_RANGE') == 'LOCALHOST'
                assert event.env.get('ROS_DOMAIN_ID') == str(ros_domain_id)
                if spec.nodes:     # its nodes' files: written by the launch, removed at its end
                    hosted = node_triples(event.cmd)
                    assert [(kind, hosted) for kind, hosted, _ in hosted] == \
                        [(m.executable, hosted_name(spec, m)) for m in spec.nodes]
                    assert not any(Path(path).exists() for *_, path in hosted), hosted
                    continue
                assert event.cmd.count('--params-file') == 1, event.cmd
                path = Path(event.cmd[event.cmd.index('--params-file') + 1])
                # launch_ros writes lists as !!python/tuple, which safe_load refuses.
                written = yaml.load(path.read_text(encoding='utf-8'), Loader=yaml.FullLoader)
                # Keyed by the node's full name, or '/**' when the namespace is not given.
                (target, document), = written.items()
                assert target in (node_name, '/**'), target
                parameters = {k: list(v) if isinstance(v, tuple) else v
                              for k, v in document['ros__parameters'].items()}
                assert parameters == spec.parameters, f'{node_name}: parameter file differs'
            codes = {full_name(e.cmd): e.returncode for e in events['exited']}
            assert codes == {node_name: 0 for node_name in specs}, f'exit codes: {codes}'
        finally:
            for path in files:
                path.unlink(missing_ok=True)
else:
    def test_rig_runs_under_launch_pytest():
        """Placeholder that says why the real launch test did not run."""
        pytest.skip(LAUNCH_PYTEST_UNAVAILABLE)
