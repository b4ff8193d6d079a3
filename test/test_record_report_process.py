"""The report drawn by its own process (acres_sim.record.report_process): the
same picture as in process, its errors given back as they are, its death said
in one line, and nothing renamed into place once the recorder is gone."""

import fcntl
import json
import os
import signal

import numpy as np
import pytest

from acres_sim.files import part_name
from acres_sim.record.report import (FURTHER_KEYS, Columns, ReportPage, further_report_columns,
                                     write_pages)
from acres_sim.record.report_process import ReportProcess, ReportProcessError
from acres_sim.record.runner import RecordRequest, record

from test_record_report import _gnss_rows, _imu_rows, _ins_rows, _scene, _truth_antenna

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'


def _pages(further=None):
    truth_gnss = np.array([_truth_antenna(k) for k in range(10)])
    return [ReportPage('agent0 (polaris, route demo)', _gnss_rows(), _ins_rows(), _imu_rows(),
                       [], truth_gnss, further=further or {})]


def _wait_exit(process, timeout=30.0):
    process._process.join(timeout)
    assert process._process.exitcode is not None, 'the report process did not end'
    return process._process.exitcode


def test_the_report_process_draws_what_write_pages_draws(tmp_path):
    pages = _pages()
    write_pages(tmp_path / 'here.png', pages, _scene(), title='a run')
    reporter = ReportProcess()
    reporter.draw(tmp_path / 'there.png', pages, _scene(), 'a run', lock=tmp_path / 'lock')
    there = (tmp_path / 'there.png').read_bytes()
    assert there[:8] == PNG_MAGIC and there == (tmp_path / 'here.png').read_bytes()
    assert not part_name(tmp_path / 'there.png').exists()
    assert reporter.closed and _wait_exit(reporter) == 0
    # it ended at once, without the interpreter's teardown: its lock is free
    fd = os.open(tmp_path / 'lock', os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_drawing_goes_on_while_the_recorder_closes_its_files(tmp_path):
    """start_drawing hands over the pages and returns (the recorder closes its
    writers meanwhile); wait_drawn returns once the picture is in place.  The
    test holds the writers lock exclusively, so the drawing cannot begin
    before it lets go."""
    import threading

    lock = tmp_path / 'lock'
    fd = os.open(lock, os.O_RDONLY | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    # were start_drawing to wait for the picture, it would wait for ever: let go
    # after a minute, so that the test fails (the picture is there) instead
    letting_go = threading.Timer(60.0, fcntl.flock, (fd, fcntl.LOCK_UN))
    letting_go.start()
    reporter = ReportProcess()
    try:
        reporter.start_drawing(tmp_path / 'report.png', _pages(), _scene(), 'a run', lock=lock)
        assert not (tmp_path / 'report.png').exists() and not reporter.closed
    finally:
        letting_go.cancel()
        os.close(fd)                                 # the lock goes with it
    reporter.wait_drawn()
    assert (tmp_path / 'report.png').read_bytes()[:8] == PNG_MAGIC
    assert reporter.closed and _wait_exit(reporter) == 0
    with pytest.raises(ReportProcessError, match='closed'):
        reporter.start_drawing(tmp_path / 'again.png', _pages(), _scene(), 'a run')


def test_a_run_that_breaks_draws_no_report_and_closes_its_files(tmp_path, monkeypatch):
    """An error that is not a writer's (a bug, a model's NaN) ends the run: it
    is raised as it was, the files are closed on whole lines, and the report
    process is not asked to draw (it ends without a picture)."""
    from acres_sim.record import runner

    started, asked = [], []

    class Reporter(ReportProcess):
        def start_drawing(self, *args, **kwargs):
            asked.append(args)
            return super().start_drawing(*args, **kwargs)

    def report_process():
        started.append(Reporter())
        return started[-1]

    write_block = runner._Recording._write_block

    def breaking(self, k0, k1, blocks):
        if k0 >= 240:
            raise RuntimeError('a bug in the third block')
        return write_block(self, k0, k1, blocks)

    monkeypatch.setattr(runner, 'ReportProcess', report_process)
    monkeypatch.setattr(runner._Recording, '_write_block', breaking)
    out = tmp_path / 'run'
    with pytest.raises(RuntimeError, match='third block'):
        record(RecordRequest('polaris', out, progress=False, bag=False))
    (reporter,) = started
    assert asked == [] and reporter.closed and _wait_exit(reporter) is not None
    assert not (out / 'report.png').exists()
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'):
        text = (out / name).read_text()
        assert text.endswith('\n') and all(json.loads(line) for line in text.splitlines())
    assert (out / 'truth.jsonl').read_text().count('\n') == 200     # two blocks at 100 Hz


def test_waiting_for_a_drawing_never_started_is_an_error():
    reporter = ReportProcess()
    with pytest.raises(ReportProcessError, match='not asked to draw'):
        reporter.wait_drawn()
    reporter.discard()


def test_a_recording_that_cannot_start_kills_the_report_process_it_started(tmp_path,
                                                                          monkeypatch):
    """record() starts the report process before it builds the run (its
    imports go on beside the set-up); a folder it must not use then ends
    that process at once, without waiting for its imports."""
    from acres_sim.record import runner
    from acres_sim.record.output import OutputError

    started = []

    def report_process():
        started.append(ReportProcess())
        return started[-1]

    monkeypatch.setattr(runner, 'ReportProcess', report_process)
    (tmp_path / 'mine.txt').write_text('a file of the user')
    with pytest.raises(OutputError, match='not an acres_sim recording'):
        record(RecordRequest('polaris', tmp_path, progress=False, bag=False))
    (reporter,) = started
    assert reporter.closed and _wait_exit(reporter) == -signal.SIGKILL
    assert sorted(p.name for p in tmp_path.iterdir()) == ['mine.txt']


def test_a_drawing_error_comes_back_as_it_was_raised(tmp_path):
    reporter = ReportProcess()
    path = tmp_path / 'no such folder' / 'report.png'
    with pytest.raises(FileNotFoundError) as caught:
        reporter.draw(path, _pages(), _scene(), 'a run')
    assert caught.value.filename == str(part_name(path))
    assert _wait_exit(reporter) == 1


def test_a_report_process_killed_is_said_in_one_line(tmp_path):
    reporter = ReportProcess()
    reporter._process.kill()
    _wait_exit(reporter)
    with pytest.raises(ReportProcessError) as caught:
        reporter.draw(tmp_path / 'report.png', _pages(), _scene(), 'a run')
    assert 'was killed by SIGKILL' in caught.value.reason
    assert not (tmp_path / 'report.png').exists()


def test_no_report_is_put_in_place_once_the_recorder_is_gone(tmp_path):
    """The recorder's end of the pipe closes while the page is drawn (as when
    it is killed): the process draws, then removes its part file and ends."""
    reporter = ReportProcess()
    path = tmp_path / 'report.png'
    reporter._inbox.send(('draw', str(path), _pages(), _scene(), 'a run', None))
    reporter._inbox.close()
    assert _wait_exit(reporter) == 0
    assert sorted(tmp_path.iterdir()) == []
    reporter.close()


def test_a_recording_with_no_report_starts_no_report_process(tmp_path, monkeypatch):
    from acres_sim.record import runner

    def no_process():
        raise AssertionError('a report process started')

    monkeypatch.setattr(runner, 'ReportProcess', no_process)
    record(RecordRequest('polaris', tmp_path / 'run', progress=False, bag=False, report=False))
    assert not (tmp_path / 'run' / 'report.png').exists()


@pytest.fixture(scope='module')
def further_rows(tmp_path_factory):
    """The further sensors' rows of a short real recording, as written."""
    from acres_sim.rig import RigOptions
    out = tmp_path_factory.mktemp('further') / 'run'
    record(RecordRequest('polaris', out, RigOptions(duration_s=5.0), progress=False,
                         bag=False, report=False))
    files = {'baro': 'barometer.jsonl', 'mag': 'magnetometer.jsonl',
             'wheel_odometry': 'wheel_odometry.jsonl'}
    return {name: [json.loads(line) for line in (out / file).open()]
            for name, file in files.items()}


def _as_columns(rows):
    """Rows as the recorder's column series has them: {key: array}, a nested
    key as 'outer.inner'."""
    def flat(row, prefix=''):
        for key, value in row.items():
            if isinstance(value, dict):
                yield from flat(value, f'{prefix}{key}.')
            else:
                yield prefix + key, value
    keys = [key for key, _value in flat(rows[0])]
    values = [dict(flat(row)) for row in rows]
    return {key: np.array([v[key] for v in values]) for key in keys}


def test_the_further_columns_kept_for_the_report_draw_the_same_panels(further_rows, tmp_path):
    """Reference: the whole rows as written.  What the recorder keeps of each
    further sensor's rows (further_report_columns) draws the very picture its
    whole rows draw (radar: not on the Polaris, its keys checked below)."""
    kept = {name: Columns(further_report_columns(name, _as_columns(rows)))
            for name, rows in further_rows.items()}
    assert all(len(kept[name].columns) < len(_as_columns(further_rows[name])) for name in kept)
    write_pages(tmp_path / 'whole.png', _pages(further_rows), _scene())
    write_pages(tmp_path / 'kept.png', _pages(kept), _scene())
    assert (tmp_path / 'kept.png').read_bytes() == (tmp_path / 'whole.png').read_bytes()


def test_the_radar_columns_kept_for_the_report_have_what_its_panel_reads(tmp_path):
    from test_record_report import _further_rows
    rows = _further_rows()['radar']
    whole = [dict(row, range_m=12.0, beam='front', truth=dict(row['truth'], valid=True))
             for row in rows]
    kept = further_report_columns('radar', _as_columns(whole))
    assert {key.split('.')[0] for key in kept} == {'sample_time_s', *FURTHER_KEYS['radar']}
    write_pages(tmp_path / 'whole.png', _pages({'radar': whole}), _scene())
    write_pages(tmp_path / 'kept.png', _pages({'radar': Columns(kept)}), _scene())
    assert (tmp_path / 'kept.png').read_bytes() == (tmp_path / 'whole.png').read_bytes()


def test_sigint_does_not_reach_the_report_process(tmp_path):
    """A Ctrl-C goes to the whole process group; the report process ends only
    through its pipe (the recorder decides when): blocked from its birth, then
    ignored."""
    reporter = ReportProcess()
    os.kill(reporter.pid, signal.SIGINT)
    reporter.draw(tmp_path / 'report.png', _pages(), _scene(), 'a run')
    assert (tmp_path / 'report.png').read_bytes()[:8] == PNG_MAGIC
    assert _wait_exit(reporter) == 0


def test_a_report_process_that_cannot_load_matplotlib_says_why(tmp_path, monkeypatch):
    """The import fails beside the run; it is raised when the pages come."""
    fake = tmp_path / 'fake' / 'matplotlib'
    fake.mkdir(parents=True)
    (fake / '__init__.py').write_text("raise ImportError('no matplotlib here')\n")
    monkeypatch.syspath_prepend(str(tmp_path / 'fake'))     # the child gets sys.path
    reporter = ReportProcess()
    with pytest.raises(ImportError, match='no matplotlib here'):
        reporter.draw(tmp_path / 'report.png', _pages(), _scene(), 'a run')
    assert not (tmp_path / 'report.png').exists()
    assert _wait_exit(reporter) == 1
