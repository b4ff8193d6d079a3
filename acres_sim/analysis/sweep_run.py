"""One run of a sweep, as a Dask worker does it: ``acres-sim record`` of the
run's seed and grid values into ``OUT/runs/<run id>/`` (a normal recording
folder), then :func:`acres_sim.analysis.evaluate.evaluate` of it into its
``eval/``, then the run's record, ``OUT/runs/<run id>.json``, written last
beside the folder (not in it: the folder is the recorder's, and a retry
records into it again).

The recorder runs as a child process of the worker, not inside it: a crash
takes only the run down, its memory goes with it, the recorder may start its
writer processes and take its signals as on the command line, and the
table can show the command that repeats the run.  The child ends with the
worker (the kernel sends it SIGTERM when the worker dies, and the recorder
then ends its run with whole files).

The record holds what the sweep's table shows of the run: its id, seed and
grid values, ``status`` (``complete`` or ``failed``), the error in one line,
wall and simulated time, the digest of its rows (sha256 over its jsonl files
in the order of their paths), the command, the evaluation's columns and the
files it wrote.  A run is finished (:func:`finished`) when its record says
complete, the recording's ``episode.json`` says complete and the
evaluation's files are there.
"""

import functools
import hashlib
import json
import os
from pathlib import Path
import re
import subprocess
import sys
import time

from acres_sim.files import read_regular, write_atomically
from acres_sim.parent import end_with_parent

__all__ = ['KIND', 'RECORD_COMMAND', 'finished', 'read_run', 'record_path', 'rows_digest',
           'run_one', 'write_run']

KIND = 'acres_sim sweep run'
#: How a worker starts a recording: its own Python runs the command line's record.
RECORD_COMMAND = (sys.executable, '-m', 'acres_sim.cli', 'record')
EVAL_FOLDER = 'eval'
_ERROR = re.compile(r'^acres-sim( [a-z]+)?: error: ')     # the command line's error lines


def rows_digest(run_dir) -> str:
    """sha256 over the run's jsonl files (every one below ``run_dir`` but in
    ``eval/`` and hidden folders), each as its relative path, a NUL and its
    bytes, in the order of the paths."""
    run_dir = Path(run_dir)
    paths = sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob('*.jsonl'))
    digest = hashlib.sha256()
    for name in paths:
        if name.split('/')[0] == EVAL_FOLDER or any(part.startswith('.')
                                                    for part in name.split('/')):
            continue
        digest.update(name.encode('utf-8') + b'\0')
        with open(run_dir / name, 'rb') as file:
            for chunk in iter(lambda: file.read(1 << 20), b''):
                digest.update(chunk)
    return digest.hexdigest()


def record_path(run_dir) -> Path:
    """Where the record of the run in ``run_dir`` is: ``<run_dir>.json``."""
    run_dir = Path(run_dir)
    return run_dir.with_name(run_dir.name + '.json')


def read_run(run_dir):
    """The record of the run in ``run_dir`` (None when there is none or that
    file is not a run record)."""
    try:
        record = json.loads(read_regular(record_path(run_dir)))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get('kind') == KIND else None


def write_run(run_dir, record) -> None:
    """Write ``record`` as the record of the run in ``run_dir`` (a file of
    that name that is not a run record is the user's: OSError, it stays)."""
    path = record_path(run_dir)
    if path.exists() and read_run(run_dir) is None:
        raise OSError(f'{path} is not the record of a sweep run; move it away')
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, (json.dumps({'kind': KIND, **record}, indent=1, allow_nan=True)
                            + '\n').encode('utf-8'))


def _episode(run_dir):
    try:
        episode = json.loads(read_regular(Path(run_dir) / 'episode.json'))
    except (OSError, ValueError):
        return None
    return episode if isinstance(episode, dict) else None


def finished(run_dir, run_id) -> bool:
    """Whether run ``run_id`` in ``run_dir`` is done: its record and its
    episode.json say complete and its evaluation's files are there."""
    record = read_run(run_dir)
    if record is None or record.get('run_id') != run_id or record.get('status') != 'complete':
        return False
    episode = _episode(run_dir)
    if episode is None or episode.get('status') != 'complete':
        return False
    files = record.get('eval_files')
    return isinstance(files, list) and bool(files) and all(
        (Path(run_dir) / name).is_file() for name in files)


def _error_line(stderr, returncode) -> str:
    """The recorder's own error line (else its last line) and how it ended."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if _ERROR.match(line)]
    text = _ERROR.sub('', (said or lines or [''])[-1]).strip()
    how = (f'killed by signal {-returncode}' if returncode < 0
           else f'exit status {returncode}')
    return f'{text} ({how})' if text else f'the recorder ended with {how}'


def _evaluate(run_dir):
    """The evaluation's columns and the files it wrote (paths relative to run_dir)."""
    from acres_sim.analysis.evaluate import evaluate, table_row

    out = Path(run_dir) / EVAL_FOLDER
    columns = table_row(evaluate(run_dir, out=out, plots=False))
    files = sorted(p.relative_to(run_dir).as_posix() for p in out.rglob('*') if p.is_file())
    return columns, files


def run_one(spec) -> dict:
    """Record, evaluate and write the record of the run ``spec`` (a dict:
    ``run_id``, ``seed``, ``grid``, ``run_dir``, ``args``: the options of
    ``acres-sim record``, run by :data:`RECORD_COMMAND`); returns that record.  A failure is a
    record with status failed and its error."""
    run_dir = Path(spec['run_dir'])
    command = [*RECORD_COMMAND, *spec['args']]
    record = {'run_id': spec['run_id'], 'seed': spec['seed'], 'grid': spec['grid'],
              'status': 'failed', 'error': None, 'wall_s': None, 'simulated_s': None,
              'digest': None, 'command': command, 'columns': {}, 'eval_files': [],
              'worker_pid': os.getpid()}
    start = time.monotonic()
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors='replace',
                              # SIGTERM when the worker thread that started it ends
                              preexec_fn=functools.partial(end_with_parent, os.getpid()))
        episode = _episode(run_dir) or {}
        record['simulated_s'] = episode.get('simulated_s')
        if done.returncode != 0:
            record['error'] = _error_line(done.stderr, done.returncode)
        elif episode.get('status') != 'complete':
            record['error'] = f'episode.json says {episode.get("status", "nothing")!r}'
        else:
            record['digest'] = rows_digest(run_dir)
            try:
                record['columns'], record['eval_files'] = _evaluate(run_dir)
                record['status'] = 'complete'
            except Exception as err:  # noqa: BLE001 - one run's evaluation, reported in its row
                record['error'] = f'evaluation failed: {type(err).__name__}: {err}'
    except OSError as err:
        record['error'] = f'cannot run the recorder: {err.strerror or err}'
    record['wall_s'] = time.monotonic() - start
    if record['error']:
        record['error'] = ' '.join(record['error'].split())[:400]
    write_run(run_dir, record)
    return record
