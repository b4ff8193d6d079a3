"""A node compiles its numba kernels before its clock starts: with an empty
numba cache (the first run after an install) the sim node must not begin its
paced loop and then compile -- its first seconds would come late and in one
burst.  Checked by the order of real events: every cache file numba writes
is written before the sim logs that its loop is running."""

import re
import subprocess
import sys

import pytest

from conftest import child_environment

pytestmark = pytest.mark.requires_rclpy

LOG_TIME = re.compile(r'\[(?:INFO|WARN)\] \[(\d+\.\d+)\] \[sim_node\]: (.*)')


def test_a_cold_sim_node_compiles_before_its_clock_starts(ros_domain_id, tmp_path):
    cache = tmp_path / 'numba_cache'
    cache.mkdir()
    # numba's JIT (the kernels compiled ahead of time compile nothing: test_aot.py)
    env = {**child_environment(), 'NUMBA_CACHE_DIR': str(cache), 'ACRES_SIM_KERNELS': 'jit'}
    result = subprocess.run(
        [sys.executable, '-m', 'acres_sim.ros.sim_node', '--ros-args', '-p', 'rtf:=1.0',
         '-p', 'duration_s:=1.0', '-p', 'start_timeout_s:=0.0'],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr
    log = [(float(m.group(1)), m.group(2)) for m in map(LOG_TIME.match, result.stderr.splitlines())
           if m]
    texts = [text for _t, text in log]
    running = next(t for t, text in log if text.startswith('running '))
    written = {path: path.stat().st_mtime for path in cache.rglob('*') if path.is_file()}
    assert any('run_vehicle_block' in path.name for path in written), sorted(written)
    late = sorted(path.name for path, mtime in written.items() if mtime > running)
    assert not late, f'compiled after the loop began: {late}'
    # and it said so, in that order
    first = {text.split(' ')[0]: i for i, text in reversed(list(enumerate(texts)))}
    assert first['compiling'] < first['kernels'] < first['running'], texts
