"""The package builds and tests with colcon as on a ROS 2 distro, and its
install tree has what `ros2 run` / `ros2 launch` look for."""

import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
NESTED = 'ACRES_SIM_INSIDE_COLCON_TEST'  # set for the inner `colcon test` run

pytestmark = pytest.mark.skipif(os.environ.get(NESTED) == '1',
                                reason='already running inside the colcon test of this test')


def colcon():
    exe = shutil.which('colcon', path=str(Path(sys.executable).parent)) or shutil.which('colcon')
    if exe is None:
        pytest.skip('colcon is not installed (pip install colcon-common-extensions)')
    return exe


def run(argv, cwd, env=None, timeout=600):
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f'{argv[:3]} failed:\n{result.stdout}\n{result.stderr}'
    return result


@pytest.fixture(scope='module')
def workspace(tmp_path_factory):
    """A colcon build of this package into a fresh workspace."""
    base = tmp_path_factory.mktemp('colcon')
    env = dict(os.environ, PATH=f'{Path(sys.executable).parent}{os.pathsep}{os.environ["PATH"]}')
    run([colcon(), 'build', '--base-paths', str(ROOT), '--build-base', str(base / 'build'),
         '--install-base', str(base / 'install')], cwd=base, env=env)
    return base, env


def test_install_tree_has_the_ament_marker_share_files_and_lib_scripts(workspace):
    base, _env = workspace
    prefix = base / 'install' / 'acres_sim'
    assert (prefix / 'share/ament_index/resource_index/packages/acres_sim').is_file()
    share = prefix / 'share/acres_sim'
    for name in ('package.xml', 'launch/polaris.launch.py', 'launch/maxxum.launch.py',
                 'launch/rig.launch.py', 'config/rigs/mixed.yaml',
                 'config/fastdds/fast_repair.xml', 'config/fastdds/fast_repair_v3.xml',
                 'config/rviz/acres_sim.rviz',
                 'config/sensors.yaml', 'config/sensors_polaris.yaml',
                 'config/sensors_maxxum.yaml', 'config/site.yaml', 'config/terrains/acre.yaml'):
        assert (share / name).is_file(), name
    for script in ('acres-sim', 'sim_node', 'gnss_node', 'imu_node'):
        path = prefix / 'lib/acres_sim' / script
        assert path.is_file() and os.access(path, os.X_OK), script
    assert not (prefix / 'bin').exists(), 'scripts belong in lib/acres_sim for ros2 run'


def test_installed_cli_reads_the_installed_config(workspace):
    base, env = workspace
    prefix = base / 'install' / 'acres_sim'
    site_packages = next(prefix.glob('lib/python3*/site-packages'))
    env = dict(env, AMENT_PREFIX_PATH=str(prefix), PYTHONPATH=str(site_packages))
    result = run([str(prefix / 'lib/acres_sim/acres-sim'), 'config', 'show', '--sources'],
                 cwd=base, env=env)
    assert f'{prefix}/share/acres_sim/config/sensors_polaris.yaml' in result.stdout


def test_colcon_test_runs_the_package_tests(workspace):
    base, env = workspace
    env = dict(env, **{NESTED: '1'})
    run([colcon(), 'test', '--base-paths', str(ROOT), '--build-base', str(base / 'build'),
         '--install-base', str(base / 'install'), '--pytest-args', '-k',
         'test_config and not fuzz'], cwd=base, env=env)
    result = run([colcon(), 'test-result', '--test-result-base', str(base / 'build'),
                  '--verbose'], cwd=base, env=env)
    summary = result.stdout.strip().splitlines()[-1]
    assert ' 0 errors, 0 failures' in summary and not summary.startswith('Summary: 0 tests')
