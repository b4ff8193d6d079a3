"""The code's own rules, checked by real tools: ruff (pyflakes, pycodestyle,
a complexity bound; settings in pyproject.toml) and import-linter's layer
contracts (pyproject.toml: core imports no configuration, drivers or ROS;
config no pipeline or driver; the pipeline neither driver; record and ros
never each other)."""

from pathlib import Path
import shutil
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _tool(name):
    path = BIN / name
    if not path.exists():
        pytest.fail(f'{name} is not installed next to {sys.executable}: run make setup')
    return str(path)


def _lint_imports(cwd, env=None):
    return subprocess.run([_tool('lint-imports'), '--no-cache'], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    done = subprocess.run([_tool('ruff'), 'check', '--no-cache', 'acres_sim', 'bench', 'test',
                           'tools', 'launch'], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_layer_contracts_hold():
    done = _lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'broken' not in done.stdout.split('Contracts:')[-1].replace('0 broken', '')


@pytest.mark.parametrize('module, line, contract', [
    ('core/frames.py', 'from acres_sim.config import schema', 'core is maths only'),
    ('core/imu.py', 'import rclpy', 'core is maths only'),
    ('record/jsonl.py', 'from acres_sim.ros import qos', 'never import each other'),
    ('pipeline/rows.py', 'from acres_sim.record import jsonl', 'the pipeline is shared'),
])
def test_an_import_across_a_layer_breaks_its_contract(tmp_path, module, line, contract):
    """The contracts are live: a copy of the package with one forbidden import
    added fails the check, naming the contract."""
    shutil.copytree(ROOT / 'acres_sim', tmp_path / 'acres_sim',
                    ignore=shutil.ignore_patterns('__pycache__'))
    shutil.copy(ROOT / 'pyproject.toml', tmp_path)
    target = tmp_path / 'acres_sim' / module
    target.write_text(target.read_text() + f'\n{line}  # noqa\n')
    env = {'PATH': str(BIN), 'PYTHONPATH': str(tmp_path), 'HOME': str(tmp_path)}
    done = _lint_imports(tmp_path, env)
    assert done.returncode != 0, done.stdout
    broken = [text for text in done.stdout.splitlines() if text.endswith('BROKEN')]
    assert any(contract in text for text in broken), done.stdout
