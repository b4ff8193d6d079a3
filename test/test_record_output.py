"""The output folder on its own: which folders are usable, what counts as the
recorder's, the swap of a previous recording, atomic writes."""

import json

import pytest

from acres_sim.files import part_name, write_atomically
from acres_sim.record.output import MANIFEST, OutputError, OutputFolder

NEW = ['episode.json', 'gnss.jsonl', 'bag/bag.mcap', 'bag/metadata.yaml']


def tree(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob('*') if p.is_file())


def legacy_recording(out):
    """A folder as the recorder wrote it before it kept a manifest."""
    (out / 'bag').mkdir(parents=True)
    (out / 'episode.json').write_text(json.dumps({'software': 'acres_sim 0.1.0', 'agents': 1}))
    for name in ('gnss.jsonl', 'ins.jsonl', 'bag/bag.mcap', 'bag/metadata.yaml'):
        (out / name).write_text('old')


def test_a_recording_without_a_manifest_is_recognised_and_only_its_files_go(tmp_path):
    out = tmp_path / 'run'
    legacy_recording(out)
    (out / 'notes.txt').write_text('mine')
    folder = OutputFolder(out).open(NEW)
    assert folder.previous == ['bag/bag.mcap', 'bag/metadata.yaml', 'episode.json',
                               'gnss.jsonl', 'ins.jsonl']
    folder.replace()
    assert not (out / 'bag').exists()               # the new bag's folder must be new
    (out / 'gnss.jsonl').write_text('new')
    folder.keep()
    folder.close()
    assert tree(out) == sorted(['.acres_sim.lock', MANIFEST, 'gnss.jsonl', 'notes.txt'])
    assert json.loads((out / MANIFEST).read_text())['files'] == sorted(NEW)


def test_restore_puts_the_previous_recording_back_and_removes_the_new_files(tmp_path):
    out = tmp_path / 'run'
    legacy_recording(out)
    before = {name: (out / name).read_text() for name in tree(out)}
    folder = OutputFolder(out).open(NEW)
    folder.replace()
    (out / 'bag').mkdir()
    (out / 'bag' / 'bag.mcap').write_text('new')
    (out / 'gnss.jsonl').write_text('new')
    folder.restore()
    folder.close()
    assert {name: (out / name).read_text() for name in before} == before
    assert not (out / '.acres_sim-previous').exists()


def test_a_folder_that_is_a_file_or_foreign_is_refused(tmp_path):
    (tmp_path / 'file').write_text('x')
    with pytest.raises(OutputError, match='is not a folder'):
        OutputFolder(tmp_path / 'file').open(NEW)
    (tmp_path / 'other').mkdir()
    (tmp_path / 'other' / 'episode.json').write_text('{"software": "something else"}')
    with pytest.raises(OutputError, match='not an acres_sim recording'):
        OutputFolder(tmp_path / 'other').open(NEW)
    assert tree(tmp_path / 'other') == ['episode.json']     # no lock file left in it


def test_the_lock_names_the_holder(tmp_path):
    out = tmp_path / 'run'
    first = OutputFolder(out).open(NEW)
    try:
        with pytest.raises(OutputError, match=r'another acres-sim record \(pid \d+\)'):
            OutputFolder(out).open(NEW)
    finally:
        first.close()
    OutputFolder(out).open(NEW).close()                 # free again


def test_write_atomically_keeps_the_old_content_when_the_writing_fails(tmp_path):
    path = tmp_path / 'report.png'
    path.write_bytes(b'old')

    def fails(part):
        part.write_bytes(b'half')
        raise OSError(28, 'No space left on device')

    with pytest.raises(OSError):
        write_atomically(path, None, write=fails)
    assert path.read_bytes() == b'old' and not part_name(path).exists()
    write_atomically(path, b'new')
    assert path.read_bytes() == b'new'


@pytest.mark.parametrize('files', [['../outside.txt'], ['/etc/hostname'], 'abc', [''], [7]])
def test_a_manifest_that_names_files_outside_the_folder_is_refused(tmp_path, files):
    """Nothing outside the folder (or a user's file named by a broken manifest) is
    ever moved: such a manifest is damaged, and the folder is left alone."""
    out = tmp_path / 'run'
    out.mkdir()
    (tmp_path / 'outside.txt').write_text('mine')
    (out / 'a').write_text('mine')
    (out / MANIFEST).write_text(json.dumps({'software': 'acres_sim', 'files': files}))
    with pytest.raises(OutputError, match='is damaged; not touching'):
        OutputFolder(out).open(NEW)
    assert (tmp_path / 'outside.txt').read_text() == 'mine' and (out / 'a').read_text() == 'mine'


@pytest.mark.parametrize('episode', [[1, 2], {'software': 'acres_sim', 'agents': 'two'},
                                     {'software': 'acres_sim', 'agents': 10 ** 9}])
def test_an_odd_episode_json_is_no_traceback(tmp_path, episode):
    out = tmp_path / 'run'
    legacy_recording(out)
    (out / 'episode.json').write_text(json.dumps(episode))
    try:
        OutputFolder(out).open(NEW).close()
    except OutputError as err:        # not a recording of ours: refused in one line
        assert 'not empty and not an acres_sim recording' in str(err)


@pytest.mark.parametrize('manifest, kind', [
    ({'kind': 'evaluation', 'files': ['summary.json', 'ins.png']}, 'evaluation'),
    ({'files': ['summary.json', 'summary.md']}, 'evaluation'),     # before manifests said
    ({'kind': 'recording', 'files': ['episode.json']}, 'recording'),
    ({'files': ['episode.json', 'summary.json']}, 'recording'),
])
def test_one_kind_of_output_never_replaces_another(tmp_path, manifest, kind):
    out = tmp_path / 'out'
    out.mkdir()
    for name in manifest['files']:
        (out / name).write_text('earlier')
    (out / MANIFEST).write_text(json.dumps({'software': 'acres_sim', **manifest}))
    other = 'recording' if kind == 'evaluation' else 'evaluation'
    OutputFolder(out, kind=kind).open(['summary.json']).close()      # its own kind: taken
    with pytest.raises(OutputError, match=f'holds an acres_sim {kind}, not an? {other};'):
        OutputFolder(out, kind=other).open(['summary.json'])
    assert all((out / name).read_text() == 'earlier' for name in manifest['files'])
