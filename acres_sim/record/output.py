"""The recorder's output folder: it never deletes, mixes or half-writes a
user's data.

* **What is ours.**  A recording lists every file it writes in a manifest,
  ``.acres_sim-files.json``, written before its first file; the manifest
  says what kind of output the folder is (a recording, an evaluation), and
  one kind never replaces another.  Only files the
  manifest lists are ever moved or removed; anything else in the folder is
  left where it is.  A recording of an acres_sim from before the manifest is
  recognised by its ``episode.json`` and its fixed file names.
* **Which folder is usable.**  A missing or empty folder, or a previous
  recording (its manifest's files, next to files of the user that do not
  clash with the new run's names).  Any other non-empty folder is refused.
* **One recorder at a time.**  The folder is locked (``fcntl.flock`` on
  ``.acres_sim.lock``, which holds the recorder's pid) for the whole run; a
  second recorder stops, naming the first one's pid.
* **Replaced as a whole, once the new run starts.**  :meth:`OutputFolder.replace`
  moves the previous recording's files into ``.acres_sim-previous/``; if
  the new run then fails to start, :meth:`OutputFolder.restore` removes what
  it wrote and moves the previous files back, else :meth:`OutputFolder.keep`
  removes them.  The manifest lists the moved files throughout, so a
  recorder killed in between leaves nothing the next one cannot clean up.
* **Whole files.**  :func:`acres_sim.files.write_atomically` writes a file under a
  temporary name and renames it: the final name holds the old content or the new, never
  a part.
"""

import fcntl
import json
import os
from pathlib import Path

from acres_sim import __version__
from acres_sim.files import claim_lock, read_regular, try_lock, write_atomically

__all__ = ['LEGACY_NAMES', 'LOCK', 'MANIFEST', 'WRITERS_LOCK', 'OutputError', 'OutputFolder',
           'claim', 'hold_writers_lock']

MANIFEST = '.acres_sim-files.json'
LOCK = '.acres_sim.lock'
#: Held shared by the writer processes while they have files open (they outlive
#: a recorder that was killed, and finish its files).
WRITERS_LOCK = '.acres_sim-writers.lock'
ASIDE = '.acres_sim-previous'
#: The files the recorder itself keeps in the folder (never user data).
_OWN = {MANIFEST, LOCK, WRITERS_LOCK, '.' + MANIFEST + '.part'}
#: The files of a recording made before the manifest existed (relative paths).
LEGACY_NAMES = ('episode.json', 'report.png', 'gnss.jsonl', 'imu.jsonl', 'ins.jsonl',
                'truth.jsonl', 'bag/bag.mcap', 'bag/metadata.yaml')


class OutputError(Exception):
    """The output folder cannot be used (one line for the user)."""


def _inside(name) -> bool:
    """Whether manifest entry ``name`` is a relative path that stays inside the folder."""
    if not isinstance(name, str) or not name:
        return False
    path = Path(name)
    return not path.is_absolute() and '..' not in path.parts


def _files_under(folder: Path):
    """Relative paths of every file and symlink below ``folder``."""
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            yield Path(root, name).relative_to(folder).as_posix()


class OutputFolder:
    """``out`` for one recording; see the module docstring.  Use :meth:`open`
    first, :meth:`close` at the end (the lock is then released).  ``kind`` and
    ``command`` name what is written and by whom in the messages (an
    evaluation, a sweep keep their folders by the same rules)."""

    def __init__(self, out, kind='recording', command='acres-sim record'):
        self.out = Path(out)
        self.kind, self.command = kind, command
        self.previous = []       # files of the previous recording, relative paths
        self.new = []            # files the new recording may write
        self._moved = []         # files of the previous recording moved aside so far
        self._lock_fd = None

    # -- opening: usable? lock

    def open(self, new_files) -> 'OutputFolder':
        """Check the folder, create it if need be, lock it.  ``new_files``:
        the relative paths the new run may write."""
        self.new = sorted(set(new_files))
        if self.out.exists() and not self.out.is_dir():
            raise OutputError(f'{self.out} exists and is not a folder')
        self._check()                      # before the lock file is put into it
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(f'cannot create {self.out}: {err.strerror}') from None
        self._lock()
        self.previous = self._check()      # again: a recorder may have finished meanwhile
        return self

    def _recorded(self):
        """The files of the recording in the folder, or None when it holds none;
        OutputError when it holds an acres_sim output of another kind (an
        evaluation is not replaced by a recording, nor the other way round)."""
        try:
            manifest = json.loads(read_regular(self.out / MANIFEST))
            files, kind = manifest['files'], _kind_of(manifest)
            if not isinstance(files, list) or not all(map(_inside, files)):
                raise ValueError('not a list of paths inside the folder')
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise OutputError(f'{self.out / MANIFEST} is damaged; not touching {self.out}') \
                from None
        else:
            if kind != self.kind:
                raise OutputError(f'{self.out} holds an acres_sim {kind}, not '
                                  f'{_a(self.kind)}; give --out another folder')
            return [f for f in files if (self.out / f).is_file()]
        try:
            episode = json.loads(read_regular(self.out / 'episode.json'))
        except (OSError, ValueError):
            return None
        if not isinstance(episode, dict) \
                or not str(episode.get('software', '')).startswith('acres_sim'):
            return None
        agents = episode.get('agents', 1)
        agents = agents if isinstance(agents, int) and 1 <= agents <= 100 else 1
        names = list(LEGACY_NAMES) + ([f'agent_{k}/{name}' for k in range(agents)
                                       for name in LEGACY_NAMES[2:6]] if agents > 1 else [])
        return [f for f in names if (self.out / f).is_file()]

    def _check(self):
        """The previous recording's files; OutputError if the folder holds
        data that is not ours where the new run would write."""
        if not self.out.is_dir():
            return []
        previous = self._recorded()
        if previous is None:
            if any(entry.name not in _OWN for entry in os.scandir(self.out)):
                raise OutputError(f'{self.out} is not empty and not an acres_sim {self.kind}; '
                                  'give --out a new or empty folder')
            return []
        ours = set(previous)
        # where the new run writes: its files, the bag folder (created new, when the run
        # has a bag), the aside folder
        bag = {f'bag/{f}' for f in _files_under(self.out / 'bag')} \
            if any(f.startswith('bag/') for f in self.new) else set()
        places = set(self.new) | bag | {f'{ASIDE}/{f}' for f in _files_under(self.out / ASIDE)}
        clash = sorted(f for f in places - ours if os.path.lexists(self.out / f))
        if clash:
            raise OutputError(f'{self.out / clash[0]} is not a file of the {self.kind} '
                              'there; move it away or give --out another folder')
        return sorted(previous)

    def _lock(self):
        path = self.out / LOCK
        try:
            fd, holder = try_lock(path)
        except OSError as err:
            raise OutputError(f'cannot lock {path}: {err.strerror}') from None
        if fd is None:
            raise OutputError(f'{self.out} is being written by another {self.command} '
                              f'(pid {holder}); wait for it or give --out another folder')
        if _busy(self.out / WRITERS_LOCK):
            os.close(fd)
            raise OutputError(f'the writer processes of a recorder that ended early are still '
                              f'finishing their files in {self.out}; wait for them') from None
        claim_lock(fd)
        self._lock_fd = fd

    def close(self) -> None:
        """Release the lock (the lock file stays: removing it would race)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # -- the swap

    def _write_manifest(self, files):
        _write_manifest(self.out, files, self.kind)

    def replace(self) -> None:
        """Before the new run writes its first file: the previous recording's
        files go into the aside folder (the manifest lists both)."""
        aside = [f'{ASIDE}/{f}' for f in self.previous]
        self._write_manifest(self.previous + aside + self.new)
        for name, moved in zip(self.previous, aside):
            target = self.out / moved
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.out / name, target)
            self._moved.append(name)
        self._prune(self.previous)

    def keep(self) -> None:
        """The new run has started: the previous recording goes for good."""
        aside = [f'{ASIDE}/{f}' for f in self._moved]
        for name in aside:
            _unlink(self.out / name)
        self._prune(aside)
        self._moved = []
        self._write_manifest(self.new)

    def restore(self) -> None:
        """The new run failed to start (or :meth:`replace` itself failed part
        way): remove what the new run wrote, put the previous recording back
        as it was."""
        for name in self.new:
            if name not in self.previous or name in self._moved:
                _unlink(self.out / name)
        self._prune(self.new)
        for name in self._moved:
            target = self.out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.out / ASIDE / name, target)
        self._prune([f'{ASIDE}/{f}' for f in self.previous])
        self._moved = []
        if self.previous:
            self._write_manifest(self.previous)
        else:
            _unlink(self.out / MANIFEST)

    def _prune(self, files):
        """Remove the folders of ``files`` that are left empty (deepest first)."""
        folders = {parent for f in files for parent in Path(f).parents if str(parent) != '.'}
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            try:
                (self.out / folder).rmdir()
            except OSError:
                pass            # not empty (the user's files) or gone


def _busy(path: Path) -> bool:
    """Whether a process holds a lock on ``path`` (missing: no)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)             # and with it the lock just taken


def hold_writers_lock(path) -> None:
    """In a writer process: hold ``path`` (the folder's WRITERS_LOCK) shared
    until the process ends, so no new recording takes the folder while its
    files are still open."""
    global _writers_lock_fd
    _writers_lock_fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    fcntl.flock(_writers_lock_fd, fcntl.LOCK_SH)


_writers_lock_fd = None


def _kind_of(manifest) -> str:
    """What a manifest's folder holds; one written before manifests said so: a
    recording, or an evaluation (a summary.json and no episode.json)."""
    if 'kind' in manifest:
        return manifest['kind']
    files = manifest['files']
    return 'evaluation' if 'summary.json' in files and 'episode.json' not in files \
        else 'recording'


def _a(noun) -> str:
    return ('an ' if noun[:1] in 'aeiou' else 'a ') + noun


def _write_manifest(out: Path, files, kind) -> None:
    text = json.dumps({'software': f'acres_sim {__version__}', 'kind': kind,
                       'files': sorted(set(files))}, indent=1) + '\n'
    write_atomically(out / MANIFEST, text.encode('utf-8'))


def claim(out, name: str, beside: str) -> bool:
    """List file ``name`` (relative to ``out``) in the manifest of the recording
    in ``out`` if that recording owns ``beside``, so that the next recording
    there replaces it with the rest (``bag repair`` keeps a damaged MCAP so);
    whether it did."""
    out = Path(out)
    try:
        manifest = json.loads(read_regular(out / MANIFEST))
        files, kind = manifest['files'], _kind_of(manifest)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False
    if not isinstance(files, list) or beside not in files:
        return False
    _write_manifest(out, [*files, name], kind)
    return True


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
