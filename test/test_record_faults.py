"""`acres-sim record` under real faults: it never deletes, mixes or
half-writes a user's data.  Each test starts the recorder as its own process
and hits it with the real thing: a folder of the user, a second recorder, a
signal in the first second, SIGKILL of each of its processes, a full disk (a
small tmpfs mounted here), the file size limit (RLIMIT_FSIZE); then checks
what is left, and that `acres-sim bag repair` makes a dead writer's bag
readable."""

import json
import os
from pathlib import Path
import resource
import shutil
import signal
import subprocess
import sys
import time

import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from acres_sim.cli import main

EXE = str(Path(sys.executable).with_name('acres-sim'))
TIMEOUT_S = 240
PNG_END = b'IEND\xaeB`\x82'


def start(out, *argv, duration='600', preexec_fn=None, new_session=False):
    return subprocess.Popen([EXE, 'record', '--duration', duration, '--out', str(out),
                             '--no-progress', *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn,
                            start_new_session=new_session)


def finish(process, timeout=TIMEOUT_S):
    try:
        return process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def wait_for(condition, process=None, what='the recorder'):
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f'{what} ended early: {process.communicate()}')
        assert time.monotonic() < deadline, f'{what}: timed out'
        time.sleep(0.01)


def running(out, size=150_000):
    """The run is under way: ins.jsonl holds more than ``size`` bytes."""
    path = Path(out) / 'ins.jsonl'
    return lambda: path.exists() and path.stat().st_size > size


def rows(path):
    text = Path(path).read_text()
    assert text == '' or text.endswith('\n'), f'{path} ends inside a line'
    return [json.loads(line) for line in text.splitlines()]


def all_rows_whole(out):
    found = sorted(Path(out).rglob('*.jsonl'))
    assert found
    for path in found:
        rows(path)


def bag_counts(folder):
    counts = {}
    with AnyReader([Path(folder)], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, _t, raw in reader.messages():
            reader.deserialize(raw, connection.msgtype)
            counts[connection.topic] = counts.get(connection.topic, 0) + 1
    return counts


def bag_readable(folder):
    try:
        bag_counts(folder)
    except Exception:  # noqa: BLE001 - any reader failure: not readable
        return False
    return True


def one_error_line(stderr):
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and 'Traceback' not in stderr, stderr
    return lines[0]


def children(pid):
    """pid -> 'bag' or 'rows' for the recorder's writer processes (by the files they hold)."""
    kinds = {}
    for task in Path(f'/proc/{pid}/task').iterdir():
        for child in (task / 'children').read_text().split():
            try:
                targets = [os.readlink(fd) for fd in Path(f'/proc/{child}/fd').iterdir()]
            except OSError:
                continue
            if any(t.endswith('.mcap') for t in targets):
                kinds[int(child)] = 'bag'
            elif any(t.endswith('truth.jsonl') for t in targets):
                kinds[int(child)] = 'rows'
    return kinds


def previous_recording(tmp_path):
    out = tmp_path / 'run'
    assert main(['record', '--duration', '2', '--out', str(out), '--no-progress']) == 0
    return out, {p.relative_to(out): p.read_bytes() for p in out.rglob('*') if p.is_file()
                 and not p.name.startswith('.')}


def unchanged(out, files):
    return all((out / name).is_file() and (out / name).read_bytes() == data
               for name, data in files.items())


# -- the folder ---------------------------------------------------------------

def test_a_folder_of_the_user_is_refused_and_left_alone(tmp_path, capsys):
    out = tmp_path / 'mine'
    (out / 'bag').mkdir(parents=True)
    (out / 'bag' / 'notes.txt').write_text('mine')
    (out / 'agent0').mkdir()
    (out / 'gnss.jsonl').write_text('{"mine": 1}\n')
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress']) == 2
    line = one_error_line(capsys.readouterr().err)
    assert 'not empty and not an acres_sim recording' in line
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob('*')) == [
        'agent0', 'bag', 'bag/notes.txt', 'gnss.jsonl']


def test_a_previous_recording_is_replaced_and_the_users_files_beside_it_stay(tmp_path,
                                                                              capsys):
    out, _files = previous_recording(tmp_path)
    (out / 'notes.txt').write_text('mine')
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress',
                 '--agents', '2']) == 0
    assert (out / 'notes.txt').read_text() == 'mine'
    assert not (out / 'ins.jsonl').exists()                      # the old recording went
    assert len(rows(out / 'agent1' / 'truth.jsonl')) == 101
    (out / 'bag' / 'mine.txt').write_text('mine')                # now in the way: refused
    capsys.readouterr()
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress']) == 2
    assert 'bag/mine.txt is not a file of the recording' in one_error_line(capsys.readouterr().err)
    assert (out / 'bag' / 'mine.txt').read_text() == 'mine'
    assert len(rows(out / 'agent1' / 'truth.jsonl')) == 101     # nothing else touched


def test_a_start_that_fails_keeps_the_previous_recording(small_disk):
    """No free inode on the disk: the new run cannot create its files while the
    previous recording still exists, so it fails -- and the previous one stays."""
    out, files = previous_recording(small_disk)
    stat = os.statvfs(small_disk)
    used = stat.f_files - stat.f_ffree
    subprocess.run(['mount', '-o', f'remount,nr_inodes={used + 1}', str(small_disk)],
                   check=True)
    process = start(out, duration='1')
    _, err = finish(process)
    assert process.returncode == 2
    assert 'No space left on device' in one_error_line(err)
    assert unchanged(out, files)
    assert not (out / '.acres_sim-previous').exists()
    subprocess.run(['mount', '-o', 'remount,nr_inodes=10000,size=64m', str(small_disk)], check=True)
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress']) == 0


def test_a_second_recorder_on_the_same_folder_stops_naming_the_first(tmp_path):
    out = tmp_path / 'shared'
    first = start(out)
    try:
        wait_for(running(out), first)
        second = start(out, duration='1')
        _, err = finish(second)
        assert second.returncode == 2
        assert f'pid {first.pid}' in one_error_line(err)
    finally:
        first.send_signal(signal.SIGINT)
        stdout, err = finish(first)
    assert first.returncode == 130, err
    assert json.loads((out / 'episode.json').read_text())['status'] == 'cut short'
    all_rows_whole(out)


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_run_starts_keeps_the_previous_recording(tmp_path, sig):
    """The signal arrives as soon as the previous recording's files move: the
    new run has not started, so the previous one is put back, untouched."""
    out, files = previous_recording(tmp_path)
    process = start(out)
    try:
        wait_for(lambda: not (out / 'report.png').exists(), process)
        process.send_signal(sig)
    finally:
        stdout, err = finish(process)
    assert process.returncode == 128 + sig, err
    line = one_error_line(err)
    episode = out / 'episode.json'
    if 'before the recording started' in line:
        assert unchanged(out, files) and not (out / '.acres_sim-previous').exists()
    else:                          # the run had just started: a new, whole recording
        assert json.loads(episode.read_text())['status'] == 'cut short', line
        all_rows_whole(out)


def test_sigterm_in_the_first_second_is_reported(tmp_path):
    out = tmp_path / 'early'
    process = start(out)
    # as soon as the recorder catches SIGTERM (its handler is installed; the
    # simulator is not even imported yet), send one
    wait_for(lambda: catches(process.pid, signal.SIGTERM), process)
    process.send_signal(signal.SIGTERM)
    _, err = finish(process)
    assert process.returncode == 143
    assert 'stopped by SIGTERM before the recording started' in one_error_line(err)
    assert not out.exists() or not any(p for p in out.rglob('*')
                                       if p.is_file() and not p.name.startswith('.'))


def catches(pid, sig):
    """The process has a handler for ``sig`` (its SigCgt mask in /proc)."""
    status = Path(f'/proc/{pid}/status').read_text()
    mask = int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith('SigCgt:')), 16)
    return bool(mask & (1 << (sig - 1)))


# -- killed processes ---------------------------------------------------------

def test_sigkill_of_the_recorder_keeps_the_rows_the_bag_has(tmp_path):
    out = tmp_path / 'killed'
    process = start(out)
    try:
        wait_for(running(out, 400_000), process)
        process.kill()
        process.wait()
    finally:
        finish(process)
    # the writer processes finish their files when the pipe from the dead recorder ends
    wait_for(lambda: (out / 'bag' / 'metadata.yaml').exists(), what='the bag writer')
    wait_for(lambda: not children_alive(out), what='the row writer')
    all_rows_whole(out)
    counts = bag_counts(out / 'bag')
    gnss = [r for r in rows(out / 'gnss.jsonl') if r['delivery_time_s'] is not None]
    imu = [r for r in rows(out / 'imu.jsonl') if r['delivery_time_s'] is not None]
    assert len(gnss) >= counts['/gnss_receiver/fix'] > 0
    assert len(imu) >= counts['/imu/data_raw'] > 0
    assert not (out / 'episode.json').exists()      # the run never ended: no claim


def test_no_recording_takes_the_folder_while_a_killed_ones_writers_finish(tmp_path):
    """The writer processes outlive a killed recorder and go on writing its files
    (held here with SIGSTOP): a new recorder into the folder waits for them,
    in one line, instead of moving files that are still being written."""
    out = tmp_path / 'orphans'
    process = start(out)
    writers = []
    try:
        wait_for(running(out), process)
        writers = list(children(process.pid))
        assert len(writers) == 2
        for pid in writers:
            os.kill(pid, signal.SIGSTOP)
        process.kill()
        process.wait()
        second = start(out, duration='1')
        _, err = finish(second)
        assert second.returncode == 2, err
        assert 'are still finishing their files' in one_error_line(err)
    finally:
        for pid in writers:
            os.kill(pid, signal.SIGCONT)
        finish(process)               # its pipes close when the writers are done
    all_rows_whole(out)
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress']) == 0


def test_sigkill_of_the_process_group_leaves_a_bag_that_can_be_repaired(tmp_path):
    """All three processes die at once: nobody closes the bag; the repair
    makes it readable, and the next recording replaces the whole folder."""
    out = tmp_path / 'group'
    process = start(out, new_session=True)
    bag = out / 'bag' / 'bag.mcap'
    try:
        wait_for(lambda: bag.exists() and bag.stat().st_size > 1_100_000, process)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        finish(process)
    wait_for(lambda: not children_alive(out), what='the writer processes')
    assert not bag_readable(out / 'bag')
    damaged = bag.read_bytes()
    assert main(['bag', 'repair', str(out)]) == 0
    counts = bag_counts(out / 'bag')
    assert counts['/clock'] > 0 and counts['/tf_static'] == 1
    kept = out / 'bag' / 'bag.mcap.damaged'          # nothing is deleted: the original stays
    assert kept.read_bytes() == damaged
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress']) == 0
    assert len(rows(out / 'truth.jsonl')) == 101
    assert not kept.exists()                          # it went with the recording it belonged to


def children_alive(out):
    """A process still has a file of the recording open."""
    for proc in Path('/proc').iterdir():
        if proc.name.isdigit():
            try:
                if any(os.readlink(fd).startswith(str(out)) for fd in (proc / 'fd').iterdir()):
                    return True
            except OSError:
                continue
    return False


@pytest.mark.parametrize('kind', ['bag', 'rows'])
def test_sigkill_of_a_writer_process_fails_the_run_truthfully(tmp_path, kind):
    out = tmp_path / f'lost_{kind}'
    process = start(out)
    bag = out / 'bag' / 'bag.mcap'
    try:   # once rosbags has written its first chunk (1 MiB; the one in memory is lost)
        wait_for(lambda: bag.exists() and bag.stat().st_size > 1_100_000, process)
        victim = next(pid for pid, k in children(process.pid).items() if k == kind)
        os.kill(victim, signal.SIGKILL)
    finally:
        _, err = finish(process)
    assert process.returncode == 1           # a failed run, not a mistake of the user's
    line = one_error_line(err)
    all_rows_whole(out)
    episode = json.loads((out / 'episode.json').read_text())
    assert episode['status'] == 'failed' and 'SIGKILL' in episode['error']
    if kind == 'bag':
        assert 'acres-sim bag repair' in line and episode['files']['bag'] == 'needs repair'
        assert not bag_readable(out / 'bag')
        assert main(['bag', 'repair', str(out)]) == 0
        assert bag_counts(out / 'bag')['/clock'] > 0
    else:
        assert episode['files']['bag'] == 'whole' and bag_readable(out / 'bag')
        assert episode['files']['ins.jsonl'] == episode['files']['imu.jsonl'] == 'cut short'
        assert episode['files']['barometer.jsonl'] == 'cut short'
        assert episode['files']['gnss.jsonl'] == 'whole'       # the recorder's own


def test_sigkill_of_the_row_writer_without_a_bag_fails_the_run_truthfully(tmp_path):
    """--no-bag: the row writer is the only writer process; killed, the run
    fails, and neither episode.json nor the line speaks of a bag."""
    out = tmp_path / 'lost_rows'
    process = start(out, '--no-bag')
    try:
        wait_for(running(out), process)
        kinds = children(process.pid)
        assert 'bag' not in kinds.values()
        os.kill(next(pid for pid, k in kinds.items() if k == 'rows'), signal.SIGKILL)
    finally:
        _, err = finish(process)
    assert process.returncode == 1
    line = one_error_line(err)
    assert 'bag' not in line and 'SIGKILL' in line
    all_rows_whole(out)
    episode = json.loads((out / 'episode.json').read_text())
    assert episode['status'] == 'failed' and 'bag' not in episode['files']
    assert episode['files']['ins.jsonl'] == 'cut short' and not (out / 'bag').exists()
    assert episode['options']['left_out'] == ['bag']


def test_sigkill_while_the_report_is_drawn_leaves_no_false_episode(tmp_path):
    out = tmp_path / 'report'
    process = start(out, duration='20')
    try:
        wait_for(lambda: (out / 'episode.json').exists() or (out / '.report.png.part').exists()
                 or (out / 'report.png').exists(), process)
        process.kill()
    finally:
        finish(process)
    if (out / 'episode.json').exists():
        episode = json.loads((out / 'episode.json').read_text())
        report = (out / 'report.png').read_bytes() if (out / 'report.png').exists() else b''
        assert episode['files']['report.png'] == 'whole' and report.endswith(PNG_END)
    if (out / 'report.png').exists():
        assert (out / 'report.png').read_bytes().endswith(PNG_END)


# -- a full disk, the file size limit ----------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB tmpfs of this test's own (root only)."""
    if os.geteuid() != 0 or shutil.which('mount') is None:
        pytest.skip('mounting a tmpfs needs root')
    mnt = tmp_path / 'disk'
    mnt.mkdir()
    subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(['umount', '-l', str(mnt)], check=False)


def check_failed_run(out, process, err):
    assert sorted(Path(out).rglob('*.jsonl')), err       # the run started
    all_rows_whole(out)
    assert process.returncode == 1, err      # a failed run, not a mistake of the user's
    line = one_error_line(err)
    assert 'bag repair' in line, line
    assert not bag_readable(out / 'bag')
    episode = out / 'episode.json'
    if episode.exists():                       # it may not fit on a full disk
        assert json.loads(episode.read_text())['status'] == 'failed'
    return line


def test_a_full_disk_leaves_whole_lines_and_a_bag_that_can_be_repaired(small_disk):
    out = small_disk / 'run'
    process = start(out)
    _, err = finish(process)
    check_failed_run(out, process, err)
    assert 'No space left on device' in err
    subprocess.run(['mount', '-o', 'remount,size=64m', str(small_disk)], check=True)
    assert main(['bag', 'repair', str(out / 'bag')]) == 0
    counts = bag_counts(out / 'bag')
    assert counts['/clock'] > 0 and counts['/tf_static'] == 1
    assert main(['bag', 'repair', str(out / 'bag')]) == 0       # whole now: left as it is


def test_the_file_size_limit_leaves_whole_lines_and_a_bag_that_can_be_repaired(tmp_path):
    out = tmp_path / 'limited'
    limit = 400_000

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    process = start(out, preexec_fn=limited)
    _, err = finish(process)
    check_failed_run(out, process, err)
    assert max(p.stat().st_size for p in out.rglob('*.jsonl')) <= limit
    assert main(['bag', 'repair', str(out)]) == 0
    assert bag_counts(out / 'bag')['/clock'] > 0
