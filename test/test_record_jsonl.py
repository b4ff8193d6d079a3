"""JSON Lines writer: whole lines only, NaN refused, float text, open modes,
closing twice, and Ctrl-C during a write."""

import json
import math
import os
from pathlib import Path
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from acres_sim.record.jsonl import JsonlWriter, dumps_row, interrupts_held

REPO = Path(__file__).resolve().parents[1]


def _lines(path):
    text = Path(path).read_text(encoding='ascii')
    assert text == '' or text.endswith('\n')
    return [json.loads(line) for line in text.splitlines()]


def test_one_object_per_line_and_round_trip(tmp_path):
    path = tmp_path / 'rows.jsonl'
    rows = [{'t': k / 120, 'v': [0.1 + 0.2, 1e-300, -0.0, 123456789.123456789], 'ok': True,
             'none': None, 'name': 'ä'} for k in range(7)]
    with JsonlWriter(path) as w:
        for r in rows:
            w.write(r)
    back = _lines(path)
    assert back == rows
    # Floats are the shortest text that reads back exactly.
    first = path.read_text().splitlines()[0]
    assert '0.30000000000000004' in first
    assert f'{1 / 120!r}' in path.read_text().splitlines()[1]
    assert first.startswith('{"t":0.0,"v":[0.30000000000000004,1e-300,-0.0,')
    assert '\\u00e4' in first                                 # ASCII only


def test_numpy_values_are_converted():
    line = dumps_row({'a': np.float64(0.1), 'b': np.int64(3), 'c': np.arange(3.0),
                      'd': np.bool_(True),
                      'e': np.float32(0.5), 'f': (1, 2)})
    assert json.loads(line) == {'a': 0.1, 'b': 3, 'c': [0.0, 1.0, 2.0], 'd': True, 'e': 0.5,
                                'f': [1, 2]}
    with pytest.raises(TypeError):
        dumps_row({'x': object()})


@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf, np.float64('nan')])
def test_nan_and_infinity_refused_file_unchanged(tmp_path, bad):
    path = tmp_path / 'rows.jsonl'
    with JsonlWriter(path, flush_every=1) as w:
        w.write({'k': 1})
        with pytest.raises(ValueError):
            w.write({'k': 2, 'x': [0.0, bad]})
        w.write({'k': 3})
        assert w.lines_written == 2
    assert _lines(path) == [{'k': 1}, {'k': 3}]


def test_lines_are_whole_at_every_flush(tmp_path):
    path = tmp_path / 'rows.jsonl'
    w = JsonlWriter(path, flush_every=3)
    sizes = []
    for k in range(10):
        w.write({'k': k, 'pad': 'x' * (k * 37)})
        sizes.append(path.stat().st_size)
        text = path.read_text()
        assert text == '' or text.endswith('\n')
        assert len(text.splitlines()) == (k + 1) // 3 * 3
    w.flush()
    assert len(_lines(path)) == 10
    w.close()
    assert [r['k'] for r in _lines(path)] == list(range(10))


def test_modes_truncate_append_exclusive(tmp_path):
    path = tmp_path / 'rows.jsonl'
    with JsonlWriter(path) as w:
        w.write({'run': 1})
    with JsonlWriter(path) as w:                      # 'w': a new file
        w.write({'run': 2})
    assert _lines(path) == [{'run': 2}]
    with JsonlWriter(path, mode='a') as w:            # 'a': appended
        w.write({'run': 3})
    assert _lines(path) == [{'run': 2}, {'run': 3}]
    with pytest.raises(FileExistsError):
        JsonlWriter(path, mode='x')
    with JsonlWriter(tmp_path / 'new.jsonl', mode='a') as w:   # 'a' creates a missing file
        w.write({'run': 4})
    assert _lines(tmp_path / 'new.jsonl') == [{'run': 4}]
    with pytest.raises(ValueError):
        JsonlWriter(path, mode='r')
    with pytest.raises(ValueError):
        JsonlWriter(path, flush_every=0)


def test_append_cuts_an_incomplete_last_line(tmp_path):
    path = tmp_path / 'rows.jsonl'
    path.write_bytes(b'{"k":1}\n{"k":2}\n{"k":3,"x":[0.1,')
    with pytest.warns(RuntimeWarning, match='incomplete last line'):
        w = JsonlWriter(path, mode='a')
    with w:
        w.write({'k': 4})
    assert _lines(path) == [{'k': 1}, {'k': 2}, {'k': 4}]
    path.write_bytes(b'{"k":1')                           # nothing whole at all
    with pytest.warns(RuntimeWarning):
        JsonlWriter(path, mode='a').close()
    assert path.read_bytes() == b''


def test_close_twice_and_write_after_close(tmp_path):
    path = tmp_path / 'rows.jsonl'
    w = JsonlWriter(path)
    w.write({'a': 1})
    assert not w.closed
    w.close()
    w.close()
    assert w.closed
    w.flush()                                          # no-op
    with pytest.raises(ValueError, match='closed'):
        w.write({'a': 2})
    assert _lines(path) == [{'a': 1}]


def test_exception_in_with_block_keeps_written_rows(tmp_path):
    path = tmp_path / 'rows.jsonl'
    with pytest.raises(RuntimeError):
        with JsonlWriter(path, flush_every=1000) as w:
            for k in range(5):
                w.write({'k': k})
            raise RuntimeError('stop')
    assert len(_lines(path)) == 5


class _SlowFile:
    """Stands in for the raw file: sends SIGINT to this process in the middle
    of a write and writes only part of the data per call."""

    def __init__(self, raw):
        self.raw = raw
        self.calls = 0

    def write(self, data):
        self.calls += 1
        if self.calls == 1:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        return self.raw.write(data[:max(1, len(data) // 3)])

    def fileno(self):
        return self.raw.fileno()

    def close(self):
        self.raw.close()


def test_sigint_during_flush_is_raised_after_whole_lines(tmp_path):
    path = tmp_path / 'rows.jsonl'
    w = JsonlWriter(path, flush_every=4)
    w._file = _SlowFile(w._file)
    with pytest.raises(KeyboardInterrupt):
        for k in range(4):
            w.write({'k': k, 'payload': 'y' * 50})
    assert w._file.calls > 1                           # the flush took several partial writes
    assert [r['k'] for r in _lines(path)] == [0, 1, 2, 3]
    w.close()


def test_interrupts_held_nests_and_passes_through_outside():
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            with interrupts_held():
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):
                    pass
                reached_inner_end = True
            reached_outer_end = True
    assert reached_inner_end and reached_outer_end
    with pytest.raises(KeyboardInterrupt):             # outside a hold: immediate
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10**6):
            pass


def test_ctrl_c_of_a_writing_process_leaves_whole_lines(tmp_path):
    path = tmp_path / 'rows.jsonl'
    code = textwrap.dedent(f'''
        from acres_sim.record.jsonl import JsonlWriter
        with JsonlWriter({str(path)!r}, flush_every=7) as w:
            k = 0
            while True:
                w.write({{'k': k, 'v': [k / 3, k / 7], 'pad': 'z' * (k % 50)}})
                k += 1
                if k == 5000:
                    print('ready', flush=True)
    ''')
    proc = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO, text=True)
    try:
        assert proc.stdout.readline().strip() == 'ready'
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert 'KeyboardInterrupt' in err
    rows = _lines(path)
    assert len(rows) >= 5000
    assert [r['k'] for r in rows] == list(range(len(rows)))


def test_interrupts_held_leaves_the_handlers_as_it_found_them():
    """A hold must not capture an application's handler for good: after it, a
    handler installed and restored by the application is the one that runs."""
    calls = []
    original = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, lambda signum, frame: calls.append(signum))
    try:
        with interrupts_held():
            pass
        assert signal.getsignal(signal.SIGINT) is not original   # the lambda, back in place
    finally:
        signal.signal(signal.SIGINT, original)
    with pytest.raises(KeyboardInterrupt):
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
    assert calls == [] and signal.getsignal(signal.SIGINT) is original


@pytest.mark.parametrize('flush_every', [1, 7, 100])
def test_a_write_past_the_file_size_limit_is_cut_back_to_whole_lines(tmp_path, flush_every):
    """RLIMIT_FSIZE in a child (the kernel writes up to the limit, then EFBIG):
    the file ends on its last whole line, and the writer takes no more rows
    (no gap in the file if space came back)."""
    path = tmp_path / 'rows.jsonl'
    code = textwrap.dedent(f'''
        import resource
        from acres_sim.record.jsonl import JsonlWriter
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))
        w = JsonlWriter({str(path)!r}, flush_every={flush_every})
        try:
            for k in range(10_000):
                w.write({{'k': k, 'pad': 'x' * (k % 37)}})
        except OSError as err:
            print('failed', err.errno, flush=True)
        try:
            w.write({{'k': -1}})
        except OSError:
            print('refused', flush=True)
        w.close()
    ''')
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, cwd=REPO,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ['failed', '27', 'refused']      # EFBIG
    text = path.read_text()
    assert 10_000 - flush_every * 60 < len(text) <= 10_000 and text.endswith('\n')
    rows = [json.loads(line) for line in text.splitlines()]
    assert [r['k'] for r in rows] == list(range(len(rows)))


def test_write_rows_writes_what_write_writes(tmp_path):
    """A block of rows in one call: the same bytes as one call per row, the
    slow path (a non-ASCII text, a null) included."""
    rows = [{'t': k / 120, 'v': [round(0.1 * k, 6), np.float64(k), None], 'name': 'ok'}
            for k in range(250)]
    rows[7]['name'] = 'Caf\u00e9'
    with JsonlWriter(tmp_path / 'one.jsonl') as one:
        for row in rows:
            one.write(row)
    with JsonlWriter(tmp_path / 'block.jsonl') as block:
        block.write_rows(rows[:3])
        block.write_rows([])
        block.write_rows(rows[3:])
        assert block.lines_written == len(rows)
    assert (tmp_path / 'block.jsonl').read_bytes() == (tmp_path / 'one.jsonl').read_bytes()


def test_write_rows_with_a_nan_writes_none_of_them(tmp_path):
    path = tmp_path / 'rows.jsonl'
    with JsonlWriter(path, flush_every=1) as writer:
        writer.write({'a': 1})
        with pytest.raises(ValueError, match='NaN'):
            writer.write_rows([{'a': 2}, {'a': float('nan')}, {'a': 3}])
        assert writer.lines_written == 1
    assert path.read_bytes() == b'{"a":1}\n'
