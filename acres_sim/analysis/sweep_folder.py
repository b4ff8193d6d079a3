"""A sweep's output folder: it holds one sweep, never another's runs, and
never loses a file of the user's.

* **What it is.**  ``sweep.json`` says what the sweep is (its definition:
  rig, seeds, grid, duration, the options of its runs, digests of the files
  they read) and lists the files the sweep wrote at the top of the folder
  (``summary.csv``, ``summary.parquet``, ``sweep.png``).  The runs are in
  ``runs/``: each its recording folder ``runs/<id>/`` (the recorder's own
  folder rules apply there, :mod:`acres_sim.record.output`) and its record
  ``runs/<id>.json``.
* **Which folder is usable.**  A missing or empty folder (a new sweep), or
  the folder of a sweep with the same definition (it goes on: finished runs
  are skipped).  A sweep with another definition is refused, naming what
  differs; so is a non-empty folder that is not a sweep.
* **One sweep at a time.**  The folder is locked (``fcntl.flock`` on
  ``.acres_sim-sweep.lock``, which holds the pid) while the sweep runs.
* **Only its own files.**  A file at the top is written only if it is new or
  ``sweep.json`` lists it; nothing is ever deleted.  Files are written whole
  (:func:`acres_sim.files.write_atomically`).
"""

import json
import os
from pathlib import Path

from acres_sim import __version__
from acres_sim.config.validate import ConfigError
from acres_sim.files import claim_lock, read_regular, try_lock, write_atomically

__all__ = ['KIND', 'LOCK', 'SWEEP_FILE', 'SweepError', 'SweepFolder']

SWEEP_FILE = 'sweep.json'
LOCK = '.acres_sim-sweep.lock'
KIND = 'acres_sim sweep'
RUNS = 'runs'


class SweepError(ConfigError):
    """The output folder cannot take this sweep (one line for the user)."""


def _ranges(numbers) -> str:
    """1, 2, 3, 7 as 1-3,7."""
    parts, start = [], 0
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            first, last = numbers[start], numbers[i - 1]
            parts.append(str(first) if first == last else f'{first}-{last}')
            start = i
    return ','.join(parts)


def _shown(value, limit=60) -> str:
    if isinstance(value, list) and value and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        value = _ranges(value)          # seeds
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit - 3] + '...'


def differences(there: dict, here: dict) -> list:
    """The items of two definitions that differ, each as one short phrase."""
    names = [name for name in {**there, **here} if there.get(name) != here.get(name)]
    return [f'{name} ({_shown(there.get(name))} there, {_shown(here.get(name))} here)'
            for name in names]


class SweepFolder:
    """``out`` for one sweep; :meth:`open` first, :meth:`close` at the end."""

    def __init__(self, out):
        self.out = Path(out)
        self.runs = self.out / RUNS
        self.written = []          # files at the top this sweep (and its earlier calls) wrote
        self.resumed = False       # the folder held this sweep already
        self._lock_fd = None

    def open(self, definition: dict) -> 'SweepFolder':
        """Check the folder for the sweep ``definition`` (JSON-able), create
        it if need be, lock it, and write ``sweep.json`` for a new sweep."""
        definition = json.loads(json.dumps(definition))
        if self.out.exists() and not self.out.is_dir():
            raise SweepError(f'{self.out} exists and is not a folder')
        self._check(definition)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise SweepError(f'cannot create {self.out}: {err.strerror}') from None
        self._lock()
        stored = self._check(definition)        # again: another sweep may have begun meanwhile
        self.resumed = stored is not None
        self.written = stored['written'] if stored else []
        self.definition = definition
        if stored is None:
            self._write_sweep_file()
        self.runs.mkdir(exist_ok=True)
        return self

    def _stored(self):
        """The content of sweep.json (None without one; SweepError if it is not a sweep's)."""
        path = self.out / SWEEP_FILE
        try:
            stored = json.loads(read_regular(path))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            raise SweepError(f'{path} is damaged or not a sweep\'s; not touching '
                             f'{self.out}') from None
        if not isinstance(stored, dict) or stored.get('kind') != KIND \
                or not isinstance(stored.get('definition'), dict) \
                or not isinstance(stored.get('written'), list):
            raise SweepError(f'{path} is not the file of an acres_sim sweep; not touching '
                             f'{self.out}')
        return stored

    def _check(self, definition):
        if not self.out.is_dir():
            return None
        stored = self._stored()
        if stored is None:
            if any(entry.name != LOCK for entry in os.scandir(self.out)):
                raise SweepError(f'{self.out} is not empty and not an acres_sim sweep; give '
                                 '--out a new or empty folder')
            return None
        if stored['definition'] != definition:
            what = differences(stored['definition'], definition)
            raise SweepError(f'{self.out} holds another sweep: its {"; ".join(what)} differ; '
                             'give --out another folder, or the same sweep to go on with it')
        return stored

    def _lock(self):
        path = self.out / LOCK
        try:
            fd, holder = try_lock(path)
        except OSError as err:
            raise SweepError(f'cannot lock {path}: {err.strerror}') from None
        if fd is None:
            raise SweepError(f'{self.out} is in use by another acres-sim sweep (pid '
                             f'{holder}); wait for it or give --out another folder')
        claim_lock(fd)
        self._lock_fd = fd

    def close(self) -> None:
        """Release the lock (the lock file stays: removing it would race)."""
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _write_sweep_file(self):
        text = json.dumps({'kind': KIND, 'software': f'acres_sim {__version__}',
                           'definition': self.definition, 'written': sorted(self.written)},
                          indent=1) + '\n'
        write_atomically(self.out / SWEEP_FILE, text.encode('utf-8'))

    def write(self, name, data: bytes = None, write=None) -> Path:
        """Write the file ``name`` at the top of the folder whole (``data``,
        or ``write(part_path)`` as :func:`acres_sim.files.write_atomically`
        takes it); SweepError if a file of that name is there that the sweep
        did not write."""
        path = self.out / name
        if name not in self.written:
            if os.path.lexists(path):
                raise SweepError(f'{path} is not a file of the sweep; move it away')
            self.written.append(name)
            self._write_sweep_file()      # listed before it exists: never an unlisted file
        write_atomically(path, data, write)
        return path

    def run_dir(self, run_id) -> Path:
        return self.runs / run_id
