"""`acres-sim record --no-bag` and `--no-report`: the same rows, byte for byte,
as a recording with both (a fleet of two with fault events, so that every
channel, the frozen and dropped samples among them, goes without its
messages); no bag writer is started and no message encoded; the folder, the
manifest, episode.json and the summary line say what was written and what was
left out; a folder reused with and without a bag."""

import hashlib
import json
from pathlib import Path

import pytest

from acres_sim.cli import main
from acres_sim.pipeline.channels import GnssChannel
from acres_sim.pipeline.messages import TYPESTORE
from acres_sim.record import runner
from acres_sim.record.output import MANIFEST
from acres_sim.rig import RigOptions

RUN = ['--duration', '4', '--agents', '2', '--no-progress',
       '--event', '{type: freeze, sensors: [gnss, imu], start_s: 1, end_s: 2}',
       '--event', '{type: dropout, sensors: [ins, imu, gnss], start_s: 2.5, duration_s: 0.5}']
KINDS = {'both': (), 'no_bag': ('--no-bag',), 'no_report': ('--no-report',),
         'neither': ('--no-bag', '--no-report')}


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    root = tmp_path_factory.mktemp('left_out')
    out = {}
    for name, flags in KINDS.items():
        out[name] = root / name
        assert main(['record', '--out', str(out[name]), *RUN, *flags]) == 0
    return out


def digests(out):
    """relative path -> sha256 of every jsonl file of a recording."""
    return {p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(out).rglob('*.jsonl'))}


def test_every_row_is_the_same_without_the_bag_or_the_report(recordings):
    reference = digests(recordings['both'])
    assert {'agent0/gnss.jsonl', 'agent1/imu.jsonl', 'agent1/truth.jsonl'} <= set(reference)
    for name in KINDS:
        assert digests(recordings[name]) == reference, name
    frozen = [json.loads(line) for line in
              (recordings['neither'] / 'agent0' / 'imu.jsonl').read_text().splitlines()]
    assert any('events' in row for row in frozen)      # the faults were at work


@pytest.mark.parametrize('name', list(KINDS))
def test_the_folder_the_manifest_and_the_episode_say_what_was_written(recordings, name):
    out = recordings[name]
    bag, report = '--no-bag' not in KINDS[name], '--no-report' not in KINDS[name]
    assert (out / 'bag').is_dir() == bag
    assert (out / 'report.png').is_file() == report
    episode = json.loads((out / 'episode.json').read_text())
    assert episode['status'] == 'complete'
    assert ('bag' in episode['files']) == bag and ('report.png' in episode['files']) == report
    assert set(episode['files'].values()) == {'whole'}
    left_out = [n for n, wanted in (('bag', bag), ('report.png', report)) if not wanted]
    assert episode['options'].get('left_out') == (left_out or None)
    manifest = json.loads((out / MANIFEST).read_text())['files']
    assert any(f.startswith('bag/') for f in manifest) == bag
    assert ('report.png' in manifest) == report
    # every file written is listed, and every listed file but the temporary ones is there
    written = {p.relative_to(out).as_posix() for p in out.rglob('*')
               if p.is_file() and not p.name.startswith('.')}
    assert written <= set(manifest)
    assert {f for f in manifest if not Path(f).name.startswith('.')} == written
    reference = json.loads((recordings['both'] / 'episode.json').read_text())
    assert [v['summary'] for v in episode['vehicles']] == \
        [v['summary'] for v in reference['vehicles']]


def test_the_summary_line_names_the_files_written(tmp_path, capsys):
    out = tmp_path / 'run'
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress', '--no-bag',
                 '--no-report']) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    listed = last.split(f'in {out}/: ')[1].split()
    assert listed == sorted(p.name for p in out.iterdir() if not p.name.startswith('.'))
    assert 'bag/' not in listed and 'report.png' not in listed and 'gnss.jsonl' in listed


def test_no_bag_writer_is_started_and_no_message_encoded(tmp_path, monkeypatch):
    def no_bag(*args, **kwargs):
        raise AssertionError('a bag writer was started')

    def no_message(*args, **kwargs):
        raise AssertionError('a message was encoded')

    monkeypatch.setattr(runner, 'BagWriter', no_bag)
    monkeypatch.setattr(GnssChannel, 'encode', no_message)
    monkeypatch.setattr(TYPESTORE, 'serialize_cdr', no_message)
    options = RigOptions(duration_s=2.0)
    episode, _summary = runner.record(runner.RecordRequest('polaris', tmp_path / 'a', options,
                                                           progress=False, bag=False,
                                                           report=False))
    assert episode['status'] == 'complete' and episode['vehicles'][0]['summary']['gnss']['epochs']
    with pytest.raises(AssertionError, match='a bag writer was started'):   # the patch holds
        runner.record(runner.RecordRequest('polaris', tmp_path / 'b', options, progress=False,
                                           report=False))


def test_a_folder_reused_with_and_without_a_bag(tmp_path, capsys):
    out = tmp_path / 'run'
    args = ['record', '--duration', '1', '--out', str(out), '--no-progress', '--no-report']
    assert main(args) == 0 and (out / 'bag' / 'metadata.yaml').is_file()
    assert main(args + ['--no-bag']) == 0
    assert not (out / 'bag').exists()                # the previous recording's bag went with it
    (out / 'bag').mkdir()
    (out / 'bag' / 'mine.txt').write_text('mine')    # not in the way of a run without a bag
    assert main(args + ['--no-bag']) == 0
    assert (out / 'bag' / 'mine.txt').read_text() == 'mine'
    capsys.readouterr()
    assert main(args) == 2                           # in the way of one with a bag: refused
    err = capsys.readouterr().err
    assert 'bag/mine.txt is not a file of the recording' in err and err.count('\n') == 1
    assert (out / 'bag' / 'mine.txt').read_text() == 'mine'
    assert (out / 'gnss.jsonl').is_file()            # the recording there is left alone
