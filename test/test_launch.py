"""Tests of the rig launch files launch/polaris.launch.py and launch/maxxum.launch.py.

Three kinds of test:

* ``test_launch_files_*`` read the launch files with ``ast`` only, so they run
  everywhere: one file per rig of acres_sim.config.RIGS, each defining
  ``generate_launch_description`` that calls ``rig_launch_description`` with
  its own rig name (the files cannot silently diverge).
* ``test_rig_launch_description`` loads each file with launch's Python API and
  checks the declared arguments, the three nodes and their parameter files,
  without starting a process.  It needs launch, launch_ros and
  ament_index_python, and acres_sim in the ament index (a colcon install);
  otherwise it is skipped with the reason.
* ``test_rig_runs_under_launch_pytest`` really launches each rig with the
  launch_pytest plugin and checks that launch found the three executables in
  <prefix>/lib/acres_sim, passed them the parameter files, and kept DDS on
  loopback.  It runs only where the launch_pytest plugin is active and can
  collect launch tests (launch_pytest 3.4.3, Jazzy's, needs pytest < 8.4);
  elsewhere a placeholder of the same name is skipped with the reason.

Nothing here is installed by ``make setup``: the pip-installed ROS 2 wheels do
not include launch or launch_ros, so on a plain Python machine only the ast
tests run.  (From the repository root ``import launch`` finds the folder
launch/ as a namespace package; the tests check for the real one.)
"""

import ast
import importlib.util
from pathlib import Path
import sys
import time

import pytest
import yaml

from acres_sim.config import RIGS

LAUNCH_DIR = Path(__file__).resolve().parents[1] / 'launch'
PACKAGE = 'acres_sim'

# The nodes every rig starts (executable = node name), in launch order.
NODES = ('sim_node', 'gnss_node', 'imu_node')

# Launch arguments and their defaults ('' = empty string).
ARGUMENTS = {'namespace': '', 'use_sim_time': 'true', 'seed': '42', 'noise': 'true'}

# How long launch may take to start the three processes.
START_TIMEOUT = 30.0


def launch_file(rig):
    """The source launch file of ``rig``."""
    return LAUNCH_DIR / f'{rig}.launch.py'


def parameter_files(rig):
    """The parameter files a node of ``rig`` gets, in order (later files win)."""
    return ['sensors.yaml', 'site.yaml', RIGS[rig]]


# --- ast: no launch needed ---------------------------------------------------

def called_name(call):
    """The name of the function a Call node calls (``f(...)`` or ``m.f(...)``)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def test_launch_files_are_one_per_rig():
    """launch/ holds <rig>.launch.py for exactly the rigs acres_sim.config knows."""
    rigs = {path.name[:-len('.launch.py')] for path in LAUNCH_DIR.glob('*.launch.py')}
    assert rigs == set(RIGS), f'launch files {sorted(rigs)} != rigs {sorted(RIGS)}'


@pytest.mark.parametrize('rig', sorted(RIGS))
def test_launch_file_launches_its_own_rig(rig):
    """<rig>.launch.py: generate_launch_description() calls rig_launch_description('<rig>')."""
    path = launch_file(rig)
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
    call = calls[0]
    named = {keyword.arg: keyword.value for keyword in call.keywords}
    argument = call.args[0] if call.args else named.get('rig')
    assert isinstance(argument, ast.Constant) and argument.value == rig, \
        f'{path.name} must call rig_launch_description({rig!r}), not with {ast.unparse(call)}'
    assert len(call.args) + len(call.keywords) == 1, \
        f'{path.name}: unexpected arguments in {ast.unparse(call)}'

    returns = [node for node in ast.walk(generate) if isinstance(node, ast.Return)]
    assert returns and all(node.value is not None for node in returns), \
        f'{path.name}: generate_launch_description() must return the launch description'


# --- launch introspection: needs launch, launch_ros and a colcon install -----

def import_launch():
    """launch, launch_ros and ament_index_python, or skip the test saying which is missing."""
    why = ('{} is not installed: it comes with a ROS 2 distribution (apt ros-jazzy-{}), '
           'not with the pip wheels of `make setup`')
    pytest.importorskip('ament_index_python.packages',
                        reason=why.format('ament_index_python', 'ament-index-python'))
    launch = pytest.importorskip('launch', reason=why.format('launch', 'launch'))
    if not hasattr(launch, 'LaunchDescription'):
        # From the repository root, the folder launch/ imports as a namespace package.
        pytest.skip(why.format('launch', 'launch')
                    + f' (`import launch` found only {launch.__path__})')
    pytest.importorskip('launch_ros', reason=why.format('launch_ros', 'launch-ros'))


def installed_share():
    """<prefix>/share/acres_sim from the ament index, or skip the test."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        return Path(get_package_share_directory(PACKAGE))
    except PackageNotFoundError:
        pytest.skip('acres_sim is not in the ament index (AMENT_PREFIX_PATH): the launch files '
                    'need an installed tree, e.g. `colcon build` and `source install/setup.bash` '
                    '(an editable pip install does not register the package)')


def load_launch_description(rig):
    """The LaunchDescription of launch/<rig>.launch.py, loaded the way `ros2 launch` does.

    (PythonLaunchDescriptionSource.try_get_launch_description_without_context
    would turn a failing launch file into None; this raises the real error.)
    """
    from launch.launch_description_sources import get_launch_description_from_python_launch_file

    return get_launch_description_from_python_launch_file(str(launch_file(rig)))


def walk_entities(entities):
    """The given launch entities and all their sub-entities, depth first."""
    for entity in entities:
        yield entity
        yield from walk_entities(entity.describe_sub_entities())


def node_actions(description):
    """The launch_ros Node actions of ``description``."""
    from launch_ros.actions import Node

    return [entity for entity in walk_entities(description.entities) if isinstance(entity, Node)]


def node_parameters(node):
    """The normalized ``parameters`` list a launch_ros Node was given.

    launch_ros (0.26, Jazzy) has no public accessor for it before the node runs.
    """
    try:
        return node._Node__parameters
    except AttributeError:
        pytest.fail('launch_ros.actions.Node no longer has _Node__parameters: update this test')


def evaluated_parameters(node, launch_arguments):
    """The node's parameters with the launch arguments applied: (file paths, {name: value})."""
    from launch import LaunchContext
    from launch_ros.utilities import evaluate_parameters

    context = LaunchContext()
    context.launch_configurations.update(launch_arguments)
    files, values = [], {}
    for item in evaluate_parameters(context, node_parameters(node)):
        if isinstance(item, dict):
            values.update(item)
        else:
            files.append(Path(item))
    return files, values


@pytest.mark.parametrize('rig', sorted(RIGS))
def test_rig_launch_description(rig):
    """<rig>.launch.py declares its arguments and three nodes fed the packaged parameter files."""
    import_launch()
    share = installed_share()
    from launch.actions import DeclareLaunchArgument
    from launch.utilities import perform_substitutions
    from launch import LaunchContext

    description = load_launch_description(rig)

    declared = [action for action in walk_entities(description.entities)
                if isinstance(action, DeclareLaunchArgument)]
    names = [action.name for action in declared]
    assert sorted(names) == sorted(ARGUMENTS), f'declared launch arguments: {names}'
    defaults = {action.name: perform_substitutions(LaunchContext(), action.default_value)
                for action in declared}
    assert defaults == ARGUMENTS
    assert all(action.description for action in declared), \
        'every launch argument needs a description'

    nodes = node_actions(description)
    assert [node.node_executable for node in nodes] == list(NODES)
    assert {node.node_package for node in nodes} == {PACKAGE}

    config = share / 'config'
    expected_files = [config / name for name in parameter_files(rig)]
    for path in expected_files:
        assert path.is_file(), f'{path} is missing from the installed share directory'
        document = yaml.safe_load(path.read_text(encoding='utf-8'))
        assert isinstance(document.get('/**', {}).get('ros__parameters'), dict), \
            f'{path.name} is not a ROS 2 parameter file for all nodes (/**: ros__parameters:)'
    sensors = yaml.safe_load((config / 'sensors.yaml').read_text(encoding='utf-8'))
    assert str(sensors['/**']['ros__parameters']['seed']) == ARGUMENTS['seed'], \
        "the seed argument's default differs from sensors.yaml " \
        '(launch and `ros2 run` would differ)'

    for node in nodes:
        files, values = evaluated_parameters(node, ARGUMENTS)
        assert files == expected_files, f'{node.node_executable}: parameter files {files}'
        assert values == {'use_sim_time': True, 'seed': 42, 'noise': True}, \
            f'{node.node_executable}: parameters from the launch arguments {values}'

        files, values = evaluated_parameters(
            node, {**ARGUMENTS, 'use_sim_time': 'false', 'seed': '7', 'noise': 'false'})
        assert values == {'use_sim_time': False, 'seed': 7, 'noise': False}, \
            f'{node.node_executable}: the launch arguments do not reach the parameters: {values}'


# --- a real launch: needs the launch_pytest plugin ---------------------------

def launch_pytest_unavailable():
    """Why the launch_pytest test cannot run in this pytest session, or None if it can."""
    if importlib.util.find_spec('launch_pytest') is None:
        return ('launch_pytest is not installed: it comes with a ROS 2 distribution '
                '(apt ros-jazzy-launch-pytest), not with the pip wheels of `make setup`')
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

if LAUNCH_PYTEST_UNAVAILABLE is None:
    import launch
    from launch.actions import IncludeLaunchDescription
    import launch_pytest

    @pytest.fixture(params=sorted(RIGS))
    def rig_under_launch(request, ros_domain_id):
        """(rig, share dir, its Node actions, the LaunchDescription), on this test's DDS domain."""
        import_launch()
        share = installed_share()
        description = load_launch_description(request.param)
        return request.param, share, node_actions(description), description

    @launch_pytest.fixture
    def rig_launch(rig_under_launch):
        """The rig's launch file with namespace:=launch_test seed:=7 noise:=false."""
        _rig, _share, _nodes, description = rig_under_launch
        return launch.LaunchDescription([
            IncludeLaunchDescription(
                launch.LaunchDescriptionSource(description),
                launch_arguments=[('namespace', 'launch_test'), ('seed', '7'),
                                  ('noise', 'false')]),
            launch_pytest.actions.ReadyToTest(),
        ])

    @pytest.mark.launch(fixture=rig_launch)
    def test_rig_runs_under_launch_pytest(rig_under_launch, ros_domain_id):
        """Launch finds the three executables and passes them the parameter files.

        The nodes need not stay up (today they are stubs that exit 1): the test
        checks how launch started them, not what they do.
        """
        rig, share, nodes, _description = rig_under_launch
        deadline = time.monotonic() + START_TIMEOUT
        while (time.monotonic() < deadline
               and not all('pid' in (node.process_details or {}) for node in nodes)):
            time.sleep(0.1)
        yield
        # After shutdown: what launch did is kept in each action's process_details.
        details = [node.process_details or {} for node in nodes]
        # launch_ros leaves the parameter file it writes for the arguments in /tmp.
        temporary_files = [Path(d['cmd'][-1]) for d in details
                           if 'cmd' in d and Path(d['cmd'][-1]).name.startswith('launch_params_')]
        try:
            prefix = share.parents[1]
            expected_files = [str(share / 'config' / name) for name in parameter_files(rig)]
            for executable, detail in zip(NODES, details):
                assert 'pid' in detail, f'{executable} was not started within {START_TIMEOUT} s'
                cmd = detail['cmd']
                assert cmd[0] == str(prefix / 'lib' / PACKAGE / executable), cmd[0]
                assert f'__node:={executable}' in cmd and '__ns:=/launch_test' in cmd, cmd
                files = [cmd[i + 1] for i, arg in enumerate(cmd) if arg == '--params-file']
                assert files[:3] == expected_files, files
                assert len(files) == 4, \
                    f'launch_ros should add one file for the arguments: {files}'
                written = yaml.safe_load(Path(files[3]).read_text(encoding='utf-8'))
                assert written == {f'/launch_test/{executable}': {'ros__parameters': {
                    'use_sim_time': True, 'seed': 7, 'noise': False}}}, written
                environment = detail['env']
                assert environment.get('ROS_AUTOMATIC_DISCOVERY_RANGE') == 'LOCALHOST'
                assert environment.get('ROS_DOMAIN_ID') == str(ros_domain_id)
        finally:
            for path in temporary_files:
                path.unlink(missing_ok=True)
else:
    def test_rig_runs_under_launch_pytest():
        """Placeholder that says why the real launch test did not run."""
        pytest.skip(LAUNCH_PYTEST_UNAVAILABLE)
