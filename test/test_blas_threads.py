"""numpy's BLAS on one thread in acres_sim's processes (acres_sim.blas_threads):
the command line and the node processes set OPENBLAS_NUM_THREADS=1 before
numpy loads, so numpy starts no BLAS worker thread; a value the environment
gives stays."""

import os
import subprocess
import sys

import pytest

#: what a process of each kind imports first: the command, the nodes' entry points
ENTRIES = ('acres_sim.cli', 'acres_sim.ros.sim_node', 'acres_sim.ros.sensor_nodes')


def _blas_in_a_new_process(entry, given):
    """(OPENBLAS_NUM_THREADS, the process's thread count) after importing
    ``entry`` then numpy, in a fresh interpreter whose environment has
    ``given`` (None: no value)."""
    env = {k: v for k, v in os.environ.items() if k != 'OPENBLAS_NUM_THREADS'}
    if given is not None:
        env['OPENBLAS_NUM_THREADS'] = given
    code = (f'import os, {entry}, numpy; '
            'print(os.environ["OPENBLAS_NUM_THREADS"], len(os.listdir("/proc/self/task")))')
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True,
                         check=True, timeout=120)
    value, threads = out.stdout.split()
    return value, int(threads)


@pytest.mark.parametrize('entry', ENTRIES)
def test_a_process_of_acres_sim_starts_no_blas_thread(entry):
    """As many threads as with OPENBLAS_NUM_THREADS=1 given (rclpy starts two
    of its own); numpy's default here starts one BLAS worker per further core."""
    value, threads = _blas_in_a_new_process(entry, None)
    assert value == '1'
    assert threads == _blas_in_a_new_process(entry, '1')[1]


def test_a_value_of_the_users_stays():
    assert _blas_in_a_new_process('acres_sim.cli', '2')[0] == '2'
