"""acres-sim sweep: seeds and grid read and checked, runs independent of the
number of workers (the same rows, digest for digest), a second call skips
what is finished, a failed run is a row with its error while the others
complete, and the folder holds one sweep only.

The sweeps here are small (the Polaris, 20 s a run) and run on a local Dask
cluster of one or two workers, as ``acres-sim sweep`` does."""

import fcntl
import hashlib
import json
import os
from pathlib import Path
import subprocess
import sys

import pandas as pd
import pytest

from acres_sim.analysis.sweep import sweep
from acres_sim.analysis.sweep_folder import LOCK, SweepError
from acres_sim.cli import main
from acres_sim.config import ConfigError
from acres_sim.config.scenario import read_scenario
from acres_sim.config.sweep_plan import parse_grid_option, parse_seeds

ROOT = Path(__file__).resolve().parents[1]
SMALL = dict(rig='polaris', seeds='1-3', duration=20.0, progress=False)


def run_cli(*argv):
    exe = Path(sys.executable).with_name('acres-sim')
    return subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=300)


def jsonl_digest(run_dir):
    """The digest as the sweep documents it, computed here on its own: sha256 over
    the run's jsonl files (outside eval/), path, NUL, bytes, in the order of the paths."""
    digest = hashlib.sha256()
    names = sorted(os.path.relpath(os.path.join(root, name), run_dir)
                   for root, _dirs, files in os.walk(run_dir) for name in files
                   if name.endswith('.jsonl'))
    for name in names:
        if not name.startswith('eval' + os.sep):
            digest.update(name.encode() + b'\0' + Path(run_dir, name).read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope='module')
def two_sweeps(tmp_path_factory):
    """The same sweep with one worker and with two, each into its own folder."""
    one = tmp_path_factory.mktemp('one') / 'sweep'
    two = tmp_path_factory.mktemp('two') / 'sweep'
    return (one, sweep(**SMALL, out=one, workers=1)), (two, sweep(**SMALL, out=two, workers=2))


# --------------------------------------------------------------------------- seeds and grid


@pytest.mark.parametrize('text, seeds', [
    ('1-5', (1, 2, 3, 4, 5)), ('1,5,9', (1, 5, 9)), ('1-3,20', (1, 2, 3, 20)),
    (' 7 ', (7,)), ('0-1, 10 - 11', (0, 1, 10, 11)),
])
def test_seeds_are_ranges_and_lists(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize('text, fragment', [
    ('1-x', "'1-x' is not a seed or a range"), ('5-1', 'goes down'), ('1,2,1', 'seed 1 is '
                                                                      'given twice'),
    ('', 'expected seeds'), ('-3', "'-3' is not a seed"), ('1-200000', 'more than 100000'),
])
def test_bad_seeds_are_one_error_naming_them(text, fragment):
    with pytest.raises(ConfigError, match='--seeds') as err:
        parse_seeds(text)
    assert fragment in str(err.value)


@pytest.mark.parametrize('text, name, values', [
    ('gnss.corrections.baseline_km=1,10,50', 'gnss.corrections.baseline_km', (1.0, 10.0, 50.0)),
    ('gnss.hz=1e1', 'gnss.hz', (10.0,)),
    ('gnss.corrections.outages_s=[["60:90"], ["60:150"], []]', 'gnss.corrections.outages_s',
     ([[60.0, 90.0]], [[60.0, 150.0]], [])),
    ('noise=true,false', 'noise', (True, False)),
    ('terrain=flat,acre', 'terrain', ('flat', 'acre')),
    ('vibration=on,off', 'vibration', ('on', 'off')),
    ('route=loop, figure8', 'route', ('loop', 'figure8')),
])
def test_grid_values_are_read_as_set_reads_them(text, name, values):
    assert parse_grid_option(text) == (name, values)


@pytest.mark.parametrize('text, fragment', [
    ('gnss.hzz=1,2', "unknown key 'gnss.hzz'"),
    ('gnss.hz=5,200', 'gnss.hz = 200 (on the command line): out of range; allowed: 1 to 120 Hz'),
    ('seed=1,2', 'give them as --seeds'),
    ('terrain=flat,nowhere', "unknown terrain 'nowhere'"),
    ('vibration=on,maybe', "vibration (on the command line) = 'maybe'"),
    ('gnss.hz=5,5', 'given twice on the axis'),
    ('gnss.hz', 'expected KEY=V1,V2'),
])
def test_bad_grid_values_are_one_error_naming_key_and_value(text, fragment):
    with pytest.raises(ConfigError) as err:
        parse_grid_option(text)
    assert fragment in str(err.value)


def test_a_scenario_carries_its_sweep(tmp_path):
    path = tmp_path / 'mine.yaml'
    path.write_text('vehicles: [{model: polaris}]\n'
                    'sweep:\n  seeds: 1-3,9\n  grid:\n'
                    '    gnss.corrections.baseline_km: [1, 30]\n'
                    '    gnss: {hz: [5.0, 10.0]}\n'
                    '    route: [loop, my_route.yaml]\n')
    plan = read_scenario(path).sweep
    assert plan.seeds == (1, 2, 3, 9)
    assert plan.grid == (('gnss.corrections.baseline_km', (1.0, 30.0)),
                         ('gnss.hz', (5.0, 10.0)),
                         ('route', ('loop', str(tmp_path / 'my_route.yaml'))))
    assert read_scenario('polaris').sweep.seeds == ()


@pytest.mark.parametrize('block, fragments', [
    ('{grid: {gnss.hzz: [1.0]}}', ["unknown key 'gnss.hzz'", 'mine.yaml']),
    ('{grid: {gnss.hz: [5.0, 500.0]}}', ['gnss.hz = 500.0', 'mine.yaml', 'out of range']),
    ('{seeds: 1-x}', ['sweep.seeds', 'mine.yaml', "'1-x'"]),
    ('{seeds: [1, -2]}', ['sweep.seeds = -2', 'mine.yaml']),
    ('{seed: 3}', ["unknown key 'sweep.seed'", 'mine.yaml']),
    ('{grid: {gnss.hz: 5.0}}', ['gnss.hz = 5.0', 'expected a list of values']),
])
def test_a_bad_sweep_block_is_one_error_naming_key_value_and_file(tmp_path, block, fragments):
    path = tmp_path / 'mine.yaml'
    path.write_text(f'vehicles: [{{model: polaris}}]\nsweep: {block}\n')
    with pytest.raises(ConfigError) as err:
        read_scenario(path)
    for fragment in fragments:
        assert fragment in str(err.value)


# --------------------------------------------------------------------------- running


def test_one_worker_or_two_give_the_same_runs(two_sweeps):
    (one, first), (two, second) = two_sweeps
    for out, result in two_sweeps:
        assert result.failed == () and result.ran == 3 and result.skipped == 0
        table = result.table
        assert list(table['seed']) == [1, 2, 3]
        assert list(table['status']) == ['complete'] * 3
        for row in table.itertuples():
            run_dir = out / 'runs' / row.run_id
            episode = json.loads((run_dir / 'episode.json').read_text())
            assert episode['seed'] == row.seed and episode['simulated_s'] == 20.0
            assert row.digest == jsonl_digest(run_dir)
        assert len(set(table['digest'])) == 3              # each seed its own rows
        assert table['ins.horizontal_rmse_m'].notna().all()
        assert (table['ins.horizontal_rmse_m'] < 0.05).all()
        stored = pd.read_parquet(out / 'summary.parquet')
        pd.testing.assert_frame_equal(stored, table)
        assert list(pd.read_csv(out / 'summary.csv')['digest']) == list(table['digest'])
        assert (out / 'sweep.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'

    def comparable(result, out):
        frame = result.table.drop(columns=['wall_s'])
        frame['command'] = frame['command'].str.replace(str(out), 'OUT')
        return frame

    pd.testing.assert_frame_equal(comparable(first, one), comparable(second, two))


def test_a_cluster_of_the_users_runs_the_same_sweep(two_sweeps, tmp_path):
    """--scheduler: the runs go to a cluster that was there before the sweep."""
    from distributed import LocalCluster

    (_, first), _ = two_sweeps
    with LocalCluster(n_workers=1, threads_per_worker=1, host='127.0.0.1',
                      dashboard_address=None) as cluster:
        result = sweep(**{**SMALL, 'seeds': '2'}, out=tmp_path / 'sweep',
                       scheduler=cluster.scheduler_address)
        assert len(cluster.scheduler.workers) == 1        # the cluster is still up
    assert result.failed == ()
    assert list(result.table['digest']) == list(first.table['digest'][first.table['seed'] == 2])


def test_a_second_call_skips_every_finished_run(two_sweeps):
    (out, first), _ = two_sweeps
    episodes = sorted((out / 'runs').glob('*/episode.json'))
    assert len(episodes) == 3
    before = {p: p.stat().st_mtime_ns for p in episodes}
    again = sweep(**SMALL, out=out, workers=1)
    assert (again.ran, again.skipped, again.failed) == (0, 3, ())
    assert {p: p.stat().st_mtime_ns for p in episodes} == before
    pd.testing.assert_frame_equal(again.table, first.table)


def test_another_sweep_into_the_folder_is_refused_naming_what_differs(two_sweeps):
    (out, _), _ = two_sweeps
    with pytest.raises(SweepError, match=r'holds another sweep: its seeds \("1-3" there, '
                                         r'"1-4" here\)'):
        sweep(**{**SMALL, 'seeds': '1-4'}, out=out, workers=1)


def test_a_folder_in_use_is_refused_naming_the_sweep_there(two_sweeps):
    (out, _), _ = two_sweeps
    with open(out / LOCK, 'r+') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.write('12345\n')
        lock.flush()
        with pytest.raises(SweepError, match=r'in use by another acres-sim sweep \(pid 12345\)'):
            sweep(**SMALL, out=out, workers=1)


def test_a_failed_run_is_reported_and_the_others_complete(tmp_path, capsys):
    missing = tmp_path / 'no_such_route.yaml'
    status = main(['sweep', '--rig', 'polaris', '--seeds', '4', '--duration', '20',
                   '--grid', f'route=loop,{missing}', '--grid', 'gnss.corrections.baseline_km=5',
                   '--workers', '1', '--no-progress', '--out', str(tmp_path / 'sweep')])
    captured = capsys.readouterr()
    assert status == 1
    table = pd.read_csv(tmp_path / 'sweep' / 'summary.csv')
    assert list(table['route']) == ['loop', str(missing)]
    assert list(table['gnss.corrections.baseline_km']) == [5.0, 5.0]
    assert list(table['status']) == ['complete', 'failed']
    assert pd.isna(table['error'][0]) and str(missing) in table['error'][1]
    good = tmp_path / 'sweep' / 'runs' / table['run_id'][0]
    config = json.loads((good / 'episode.json').read_text())['config']
    assert config['gnss.corrections.baseline_km'] == 5.0
    failed = [line for line in captured.err.splitlines() if 'failed: ' in line]
    assert failed == [f'acres-sim sweep: failed: {table["run_id"][1]}: {table["error"][1]}']
    assert '2 runs: 1 complete (0 skipped), 1 failed' in captured.out


# --------------------------------------------------------------------------- the command line


@pytest.mark.parametrize('argv, fragment', [
    (['--seeds', '1-x'], "--seeds '1-x'"),
    (['--seeds', '1', '--grid', 'gnss.hzz=1,2'], "unknown key 'gnss.hzz'"),
    (['--seeds', '1', '--seed', '3'], 'a sweep takes --seeds'),
    (['--seeds', '1', '--grid', 'gnss.hz=5,10', '--gnss-hz', '5'], 'gnss.hz is a grid axis '
                                                                    'and also set'),
    (['--seeds', '1', '--grid', 'gnss.hz=5', '--grid', 'gnss.hz=10'], 'given twice'),
    (['--seeds', '1', '--route', 'nowhere'], "unknown route 'nowhere'"),
    (['--seeds', '1', '--workers', '0'], '--workers 0: allowed 1 to 256'),
    (['--seeds', '1', '--duration', '-5'], '--duration -5'),
    (['--rig', 'nowhere'], "unknown rig 'nowhere'"),
])
def test_command_line_mistakes_are_one_line(tmp_path, argv, fragment):
    result = run_cli('sweep', *argv, '--out', str(tmp_path / 'sweep'))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('acres-sim: error: '), result.stderr
    assert fragment in lines[0]
    assert not (tmp_path / 'sweep').exists()


def test_a_foreign_folder_is_refused_and_left_as_it_was(tmp_path):
    folder = tmp_path / 'mine'
    folder.mkdir()
    (folder / 'notes.txt').write_text('mine')
    result = run_cli('sweep', '--seeds', '1', '--out', str(folder))
    assert result.returncode == 2
    assert result.stderr.strip() == (f'acres-sim: error: {folder} is not empty and not an '
                                     'acres_sim sweep; give --out a new or empty folder')
    assert [p.name for p in folder.iterdir()] == ['notes.txt']
