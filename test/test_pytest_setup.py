"""The test suite starts next to a sourced ROS 2 Jazzy.

A distro puts its Python packages on PYTHONPATH, and with them the pytest
plugins of launch_testing 3.4.x and launch_testing_ros 0.26.x (entry points
``launch_testing`` and ``launch_ros``).  Their hooks still take the ``path``
argument that pytest 8.1 removed, so pytest 9 refuses to start at all while
they are importable (ros2/launch#979).  The project's pytest configuration
(setup.cfg) blocks those two plugins by name; launch_pytest, which the launch
tests use, stays enabled.

The test builds stand-ins of the two distributions -- entry points and hook
signatures as in the Jazzy sources -- in a temporary folder on PYTHONPATH and
starts pytest in a child process, once with the project's configuration and
once with its options cleared, to show that the stand-ins do break pytest.
"""

import os
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).resolve().parents[1]

# Hook signatures of launch_testing/pytest/hooks.py (launch 3.4.3) and of
# launch_testing_ros_pytest_entrypoint.py (launch_ros 0.26.x).
LAUNCH_TESTING_HOOKS = '''
def pytest_pycollect_makemodule(path, parent):
    return None
'''
LAUNCH_TESTING_ROS_HOOKS = '''
def pytest_launch_collect_makemodule(path, parent, entrypoint):
    return None
'''


def fake_distribution(site, name, version, entry_point, module, source):
    """A distribution ``name`` in ``site`` that registers ``module`` as pytest plugin."""
    (site / f'{module}.py').write_text(source, encoding='utf-8')
    info = site / f'{name}-{version}.dist-info'
    info.mkdir()
    (info / 'METADATA').write_text(
        f'Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n', encoding='utf-8')
    (info / 'entry_points.txt').write_text(
        f'[pytest11]\n{entry_point} = {module}\n', encoding='utf-8')


def run_pytest(site, *options):
    """Collect one test file of this suite in a child pytest with ``site`` on PYTHONPATH."""
    env = dict(os.environ)
    env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(site), env.get('PYTHONPATH')]))
    env.pop('PYTEST_DISABLE_PLUGIN_AUTOLOAD', None)
    env.pop('PYTEST_ADDOPTS', None)
    return subprocess.run(
        [sys.executable, '-m', 'pytest', '--collect-only', '-q', *options,
         'test/test_quaternion.py'],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_pytest_starts_next_to_jazzys_launch_testing_plugins(tmp_path):
    fake_distribution(tmp_path, 'launch_testing', '3.4.3', 'launch_testing',
                      'fake_launch_testing_hooks', LAUNCH_TESTING_HOOKS)
    fake_distribution(tmp_path, 'launch_testing_ros', '0.26.6', 'launch_ros',
                      'fake_launch_testing_ros_entrypoint', LAUNCH_TESTING_ROS_HOOKS)

    without_switch = run_pytest(tmp_path, '-o', 'addopts=')
    assert without_switch.returncode != 0, without_switch.stdout
    assert 'path' in without_switch.stdout + without_switch.stderr

    with_switch = run_pytest(tmp_path)
    assert with_switch.returncode == 0, with_switch.stdout + with_switch.stderr
    assert 'test_quaternion.py::' in with_switch.stdout
