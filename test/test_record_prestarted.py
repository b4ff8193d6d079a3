"""Writer processes started ahead of their work (acres_sim.record.child.Prestarted,
prestart_writers): a prestarted row or bag writer writes what a new one
writes, fails as a new one fails (its files, or the process dead before
it was taken), and a prestarted process nobody takes ends -- discarded,
when its parent dies, and after a user's mistake on the command line.  And
the writers' garbage rule (without_cyclic_collector): no automatic
collection, a cycle freed after at most COLLECT_EVERY blocks."""

import multiprocessing
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from acres_sim.core.ins import RESULT_SIZE
from acres_sim.core.truth import TRUTH_SIZE
from acres_sim.record.bag import BagWriter
from acres_sim.record.child import (BAG_WRITER_MODULE, ROW_WRITER_MODULE, Prestarted,
                                    prestart_writers)
from acres_sim.record.rows_process import RowProcess, RowProcessError
from conftest import alive, wait_for


def _truth_rows(tmp_path, name, prestarted=None):
    """truth.jsonl of two blocks of random truth, written by a row writer."""
    path = tmp_path / name
    process = RowProcess([(None, str(path), None, None, None)], 0.0, prestarted=prestarted)
    rng = np.random.default_rng(4)
    for b in range(2):
        k = np.arange(b * 120, (b + 1) * 120, dtype=np.int64)
        process.send_block((b + 1) * 120, [(0, np.zeros(0, dtype=np.int64),
                                            np.zeros((0, RESULT_SIZE)), k,
                                            rng.normal(size=(len(k), TRUTH_SIZE)))])
    process.close()
    return path.read_bytes(), process._process.pid


def test_a_prestarted_row_writer_writes_what_a_new_one_writes(tmp_path):
    ahead = Prestarted(ROW_WRITER_MODULE, 'row writer')
    written, pid = _truth_rows(tmp_path, 'ahead.jsonl', prestarted=ahead)
    assert pid == ahead.process.pid                    # it ran in the prestarted process
    assert ahead.process.exitcode == 0
    assert written == _truth_rows(tmp_path, 'new.jsonl')[0]
    assert written.count(b'\n') == 240


def _bag(folder, prestarted=None):
    folder.parent.mkdir()
    bag = BagWriter(folder, background=True, prestarted=prestarted)
    bag.add_topic('/s', 'std_msgs/msg/String')
    for i in range(50):
        bag.write_raw('/s', 1_000_000_000 + i, b'\x00\x01\x00\x00\x02\x00\x00\x00a\x00')
    bag.close()
    return [(folder / name).read_bytes() for name in ('bag.mcap', 'metadata.yaml')]


@pytest.fixture
def bags(tmp_path):
    return tmp_path / 'ahead' / 'bag', tmp_path / 'new' / 'bag'


def test_a_prestarted_bag_writer_writes_what_a_new_one_writes(bags):
    ahead = Prestarted(BAG_WRITER_MODULE, 'bag writer')
    assert _bag(bags[0], prestarted=ahead) == _bag(bags[1])
    assert ahead.process.exitcode == 0


def test_a_prestarted_writer_that_cannot_open_its_files_fails_in_one_line(tmp_path):
    ahead = Prestarted(ROW_WRITER_MODULE, 'row writer')
    with pytest.raises(RowProcessError, match='while opening the files') as err:
        RowProcess([(None, str(tmp_path / 'no such folder' / 'truth.jsonl'), None, None, None)],
                   0.0, prestarted=ahead)
    assert err.value.reason.startswith('FileNotFoundError')
    assert ahead.process.exitcode is not None


def test_a_prestarted_writer_that_died_before_it_was_taken_fails_the_start_in_one_line(
        tmp_path):
    ahead = Prestarted(ROW_WRITER_MODULE, 'row writer')
    ahead.process.kill()
    ahead.process.join(30)
    with pytest.raises(RowProcessError, match='killed by SIGKILL while opening the files'):
        RowProcess([(None, str(tmp_path / 'truth.jsonl'), None, None, None)], 0.0,
                   prestarted=ahead)
    assert not (tmp_path / 'truth.jsonl').exists()


def test_a_writer_takes_only_a_prestarted_process_of_its_own_module(tmp_path):
    ahead = Prestarted(BAG_WRITER_MODULE, 'bag writer')
    with pytest.raises(ValueError, match='acres_sim.record.rows_process cannot take'):
        RowProcess([(None, str(tmp_path / 'truth.jsonl'), None, None, None)], 0.0,
                   prestarted=ahead)
    assert not ahead.taken
    ahead.discard()
    assert ahead.process.exitcode is not None
    assert not (tmp_path / 'truth.jsonl').exists()


def test_a_prestarted_writer_nobody_takes_ends_when_discarded():
    writers = prestart_writers(bag=True)
    assert {name: writer.module for name, writer in writers.items()} == {
        'rows': ROW_WRITER_MODULE, 'bag': BAG_WRITER_MODULE}
    for writer in writers.values():
        writer.discard()
        writer.discard()                               # twice is fine
        assert writer.process.exitcode is not None
    rows_only = prestart_writers(bag=False)
    assert list(rows_only) == ['rows']
    rows_only['rows'].discard()


def test_a_prestarted_writer_ends_when_its_parent_dies(tmp_path):
    """The parent ends without taking or discarding it (os._exit, as a kill
    would): the process reads end-of-file and ends on its own."""
    code = textwrap.dedent('''
        import os
        from acres_sim.record.child import ROW_WRITER_MODULE, Prestarted
        ahead = Prestarted(ROW_WRITER_MODULE, 'row writer')
        print(ahead.process.pid, flush=True)
        os._exit(0)
    ''')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120, check=True)
    pid = int(result.stdout.split()[0])
    # the orphan ends (it may still be importing)
    wait_for(lambda: not alive(pid), 60, 'end of the orphaned writer')


def test_a_mistake_on_the_command_line_leaves_no_writer_running(tmp_path, capsys):
    """acres-sim record starts its writers ahead; a bad value, found while the
    run is set up, ends the command with one line, and nothing it started runs on."""
    from acres_sim.cli import main

    before = {child.pid for child in multiprocessing.active_children()}
    status = main(['record', '--duration', '1', '--out', str(tmp_path / 'run'),
                   '--set', 'gnss.hz=-1', '--no-report'])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('acres-sim: error:') and 'gnss.hz' in err[0]
    assert {child.pid for child in multiprocessing.active_children()} <= before
    assert not (tmp_path / 'run').exists()
    assert os.listdir(tmp_path) == []


def test_a_writer_frees_a_cycle_within_collect_every_blocks():
    """In a fresh interpreter (the rule is process-wide): after the call the
    collector is off, a reference cycle outlives COLLECT_EVERY - 1 blocks and
    is gone after the next."""
    code = textwrap.dedent('''
        import gc, weakref
        from acres_sim.record.child import COLLECT_EVERY, without_cyclic_collector
        after_block = without_cyclic_collector()
        class Node: pass
        node = Node(); node.me = node; seen = weakref.ref(node); del node
        print(gc.isenabled())
        for _ in range(COLLECT_EVERY - 1):
            after_block()
        print(seen() is not None)
        after_block()
        print(seen() is None)
    ''')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.split() == ['False', 'True', 'True']
