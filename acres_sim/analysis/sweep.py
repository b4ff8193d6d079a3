"""``acres-sim sweep``: a scenario over a set of seeds and a grid of
parameters, every run a normal recording, evaluated and gathered into one
table, run on a Dask cluster.

The sweep is the product of its grid axes (sensor keys, ``terrain``,
``route``, ``vibration``; :mod:`acres_sim.config.sweep_plan`) and its seeds,
from the options or the scenario's ``sweep:`` block (an axis given as an
option replaces the file's axis of that key).  Each run is ``acres-sim record``
of the rig with ``--seed S``, the run's grid values and the sweep's record
options, into ``OUT/runs/<run id>/``, started by a Dask task as a child
process of its worker and evaluated there (:mod:`acres_sim.analysis.sweep_run`).
The runs go to a local cluster on this machine by default (one worker
process per core, one thread each, on 127.0.0.1, no dashboard) or to the
cluster of the scheduler at ``scheduler`` (its workers must see the output
folder and the files named, e.g. on a shared file system).

Runs are deterministic and independent: a run's rows depend only on its
definition, never on the number of workers, so a sweep goes on where it
stopped (a finished run is skipped, a failed one run again) and its table
is the same whoever ran it.  A failed run is a row with its error; the others
go on.  The folder (:mod:`acres_sim.analysis.sweep_folder`) holds
``sweep.json``, ``runs/``, ``summary.csv``, ``summary.parquet`` and
``sweep.png`` (:mod:`acres_sim.analysis.sweep_table`,
:mod:`acres_sim.analysis.sweep_plots`).
"""

from dataclasses import dataclass
import hashlib
import itertools
import json
import logging
import math
import os
from pathlib import Path
import re
import sys
import time
import uuid

from acres_sim.analysis.sweep_folder import SweepError, SweepFolder
from acres_sim.analysis.sweep_run import finished, read_run, run_one, write_run
from acres_sim.config.options import vibration_overrides
from acres_sim.config.scenario import MAX_DURATION_S, read_scenario, scenario_path
from acres_sim.config.sweep_plan import MAX_RUNS, check_axis, parse_seeds
from acres_sim.config.terrain import is_terrain_file, terrain_argument
from acres_sim.config.validate import ConfigError, check_value

__all__ = ['MAX_WORKERS', 'SweepError', 'SweepResult', 'sweep']

MAX_WORKERS = 256
_SLUG = re.compile(r'^[A-Za-z0-9._+-]{1,40}$')
_FILE_SUFFIXES = ('.yaml', '.yml', '.json')


@dataclass(frozen=True)
class SweepResult:
    """What a sweep did: its folder, its table (a pandas DataFrame, one row
    per run, as ``summary.csv``), the runs recorded now, those skipped
    (finished before), the failed ones as (run id, error) and the printed
    summary (per grid point, the median of each metric over the seeds)."""

    out: Path
    table: object
    ran: int
    skipped: int
    failed: tuple
    summary: str


# --------------------------------------------------------------------------- the definition


def _is_file(text) -> bool:
    return Path(text).suffix in _FILE_SUFFIXES or '/' in text


def _absolute(path):
    return None if path is None else os.path.abspath(os.path.expanduser(str(path)))


def _digest(path):
    try:
        with open(path, 'rb') as file:
            return hashlib.sha256(file.read()).hexdigest()
    except OSError:
        return None


def _seeds(seeds, plan_seeds):
    if seeds is None:
        if not plan_seeds:
            raise ConfigError('no seeds: give --seeds (e.g. --seeds 1-10), or seeds: in the '
                              "scenario's sweep block")
        return list(plan_seeds)
    if isinstance(seeds, str):
        return list(parse_seeds(seeds))
    seeds = [check_value('seed', s, 'seeds') for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ConfigError(f'seeds {seeds!r}: expected distinct seeds, at least one')
    return seeds


def _record_options(rig, duration, fixed):
    """The sweep's record options with file names made absolute, checked by
    resolving the run without its grid values (every mistake now, in one line)."""
    from acres_sim.rig import RigOptions, resolve_run

    if duration is not None and (isinstance(duration, bool) or not isinstance(
            duration, (int, float)) or not 0.0 < duration <= MAX_DURATION_S):
        raise ConfigError(f'--duration {duration!r}: allowed 0 < S <= {MAX_DURATION_S:g} '
                          '(a week)')
    options = dict(fixed)
    for name in ('scene', 'config', 'vehicle_config', 'site'):
        options[name] = _absolute(options[name])
    if options['route'] and _is_file(options['route']):
        options['route'] = _absolute(options['route'])
    if options['terrain']:
        options['terrain'] = terrain_argument(options['terrain'])
    options['overrides'] = {name: check_value(name, value, 'command line')
                            for name, value in options['overrides'].items()}
    overrides = dict(options['overrides'])
    if options['vibration'] is not None:
        overrides.update(vibration_overrides(options['vibration']))
    if not isinstance(options['parked'], bool):
        raise ConfigError(f'parked = {options["parked"]!r}: allowed true or false')
    resolve_run(rig, RigOptions(
        agents=options['agents'], route=options['route'], laps=options['laps'],
        repeat=options['repeat'] or None, scene=options['scene'], terrain=options['terrain'],
        duration_s=None if duration is None else float(duration), overrides=overrides,
        add_outages=tuple(options['gnss_outages']), config_file=options['config'],
        site_file=options['site'], overlay_file=options['vehicle_config'],
        events=tuple(options['events'])))
    return options


def _check_overlap(axes, options):
    """A value is either on the grid or fixed for the sweep, not both."""
    for name in axes:
        fixed = (options['overrides'].get(name) is not None if name not in
                 ('terrain', 'route', 'vibration') else options[name] is not None)
        if fixed:
            raise ConfigError(f'{name} is a grid axis and also set for every run (--set or '
                              'its option); give it once')


def _definition(rig, seeds, grid, duration, bags, reports, fixed):
    """The sweep's definition (what sweep.json keeps) and its runs' axes."""
    if not isinstance(rig, str) or not rig.strip():
        raise ConfigError(f'rig {rig!r}: expected a packaged rig or scenario name, or a file')
    if _is_file(rig):
        rig = _absolute(rig)
    scenario = read_scenario(scenario_path(rig))
    axes = dict(scenario.sweep.grid)
    for name, values in (grid or {}).items():
        name, values = check_axis(name, list(values), 'grid')
        axes.pop(name, None)
        axes[name] = values
    seeds = _seeds(seeds, scenario.sweep.seeds)
    runs = len(seeds) * math.prod(len(v) for v in axes.values())
    if runs > MAX_RUNS:
        raise ConfigError(f'{runs} runs (seeds times grid points); allowed at most {MAX_RUNS}')
    options = _record_options(rig, duration, fixed)
    _check_overlap(axes, options)
    files = [rig if _is_file(rig) else None, options['config'], options['vehicle_config'],
             options['site'], options['scene'],
             options['route'] if options['route'] and _is_file(options['route']) else None,
             options['terrain'] if options['terrain'] and is_terrain_file(options['terrain'])
             else None]
    files += [v for name in ('route', 'terrain') for v in axes.get(name, ()) if _is_file(v)]
    definition = {
        'rig': rig, 'seeds': seeds, 'grid': [[name, list(values)] for name, values in
                                             axes.items()],
        'duration_s': None if duration is None else float(duration),
        'bags': bool(bags), 'reports': bool(reports), 'record': options,
        'files': {path: _digest(path) for path in files if path}}
    return definition, axes


# --------------------------------------------------------------------------- the runs


def _slug(value) -> str:
    """A grid value as a part of a folder name ('' when it cannot be one)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f'{value:g}'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return Path(value).stem if _is_file(value) else value
    if isinstance(value, (list, tuple)):
        if not value:
            return 'none'
        joiner = '_' if any(isinstance(v, (list, tuple)) for v in value) else '-'
        return joiner.join(_slug(v) for v in value)
    return ''


def _axis_slugs(values):
    """Each value's part of the run ids: its slug, or v1, v2, ... for the
    whole axis when a slug is not a safe name or two values share one."""
    slugs = [_slug(v) for v in values]
    if len(set(slugs)) == len(slugs) and all(_SLUG.match(s) for s in slugs):
        return slugs
    return [f'v{k + 1}' for k in range(len(values))]


def _runs(definition, axes, folder):
    """The runs of the sweep in its order (grid points, then seeds), each a
    dict as :func:`acres_sim.analysis.sweep_run.run_one` takes it."""
    from acres_sim.analysis.sweep_table import axis_labels

    labels = axis_labels(list(axes))
    slugs = {name: _axis_slugs(values) for name, values in axes.items()}
    seeds = definition['seeds']
    width = len(str(max(seeds)))
    runs = []
    points = itertools.product(*(range(len(v)) for v in axes.values()))
    for point in points:
        values = {name: axes[name][i] for name, i in zip(axes, point)}
        head = [f'{labels[name]}={slugs[name][i]}' for name, i in zip(axes, point)]
        for seed in seeds:
            run_id = '__'.join([*head, f'seed={seed:0{width}d}'])
            run_dir = folder.run_dir(run_id)
            runs.append({'run_id': run_id, 'seed': seed, 'grid': values,
                         'run_dir': str(run_dir),
                         'args': _record_args(definition, seed, values, run_dir)})
    return runs


def _record_args(definition, seed, values, run_dir):
    """The options of ``acres-sim record`` for one run."""
    o = definition['record']
    args = ['--rig', definition['rig'], '--seed', str(seed), '--out', str(run_dir),
            '--no-progress']
    if definition['duration_s'] is not None:
        args += ['--duration', repr(definition['duration_s'])]
    args += [] if definition['bags'] else ['--no-bag']
    args += [] if definition['reports'] else ['--no-report']
    for flag, name in (('--agents', 'agents'), ('--route', 'route'), ('--laps', 'laps'),
                       ('--scene', 'scene'), ('--terrain', 'terrain'),
                       ('--vibration', 'vibration'), ('--config', 'config'),
                       ('--vehicle-config', 'vehicle_config'), ('--site', 'site')):
        if o[name] is not None:
            args += [flag, str(o[name])]
    args += ['--repeat'] if o['repeat'] else []
    args += ['--parked'] if o['parked'] else []
    for text in o['events']:
        args += ['--event', text]
    for text in o['gnss_outages']:
        args += ['--gnss-outage', text]
    for name, value in o['overrides'].items():
        args += ['--set', f'{name}={json.dumps(value)}']
    for name, value in values.items():
        if name in ('terrain', 'route', 'vibration'):
            args += [f'--{name}', value]
        else:
            args += ['--set', f'{name}={json.dumps(value)}']
    return args


# --------------------------------------------------------------------------- running


class _Progress:
    """The status line on stderr (when asked): runs done, running, failed, and
    an ETA from the mean wall time of the runs done so far times the runs
    left, over the cluster's threads, counting down from the last run done."""

    def __init__(self, total, skipped, threads, show):
        self.total, self.skipped, self.threads, self.show = total, skipped, threads, show
        self.done = self.failed = 0
        self.walls = []
        self.last = time.monotonic()     # when the last run ended
        self.shown = None

    def finished(self, record):
        self.done += 1
        self.failed += record['status'] != 'complete'
        if record.get('wall_s'):
            self.walls.append(record['wall_s'])
        self.last = time.monotonic()

    def line(self):
        remaining = self.total - self.skipped - self.done
        text = (f'sweep: {self.skipped + self.done}/{self.total} done, '
                f'{min(remaining, self.threads)} running, {self.failed} failed')
        if self.skipped:
            text += f' ({self.skipped} skipped)'
        if remaining and self.walls:
            eta = sum(self.walls) / len(self.walls) * remaining / self.threads
            text += f'; ETA {_duration(max(eta - (time.monotonic() - self.last), 0.0))}'
        return text

    def draw(self):
        line = self.line()
        if self.show and line != self.shown:
            sys.stderr.write('\r\033[K' + line)
            sys.stderr.flush()
            self.shown = line

    def say(self, text):
        """A line of its own above the status line."""
        if self.show and self.shown:
            sys.stderr.write('\r\033[K')
            self.shown = None
        print(f'acres-sim sweep: {text}', file=sys.stderr, flush=True)
        self.draw()

    def end(self):
        if self.show and self.shown:
            sys.stderr.write('\n')
            sys.stderr.flush()


def _runs_word(n) -> str:
    return f'{n} run' if n == 1 else f'{n} runs'


def _duration(seconds) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f'{seconds} s'
    if seconds < 3600:
        return f'{seconds // 60} min {seconds % 60:02d} s'
    return f'{seconds // 3600} h {seconds % 3600 // 60:02d} min'


class _Cluster:
    """A Dask client: on a new local cluster (``workers`` processes of one
    thread, loopback only, no dashboard), or on the scheduler at ``address``."""

    def __init__(self, workers, address):
        self.workers, self.address = workers, address
        self.cluster = self.client = None

    def __enter__(self):
        from distributed import Client, LocalCluster

        try:
            if self.address:
                self.client = Client(self.address, timeout=30)
                self.where = f'the Dask scheduler at {self.address}'
            else:
                self.cluster = LocalCluster(
                    n_workers=self.workers, threads_per_worker=1, processes=True,
                    host='127.0.0.1', dashboard_address=None, silence_logs=logging.ERROR)
                self.client = Client(self.cluster)
                self.where = (f'a local Dask cluster of {self.workers} '
                              f'worker{"s" if self.workers != 1 else ""}')
        except (OSError, TimeoutError, ValueError) as err:
            self.__exit__(None, None, None)
            where = self.address or 'a local cluster'
            raise SweepError(f'cannot start the sweep on {where}: {err}') from None
        return self

    def threads(self):
        return max(1, sum(self.client.nthreads().values()))

    def __exit__(self, *exc):
        for part in (self.client, self.cluster):
            if part is not None:
                try:
                    part.close()
                except Exception:  # noqa: BLE001 - closing after an error: nothing more to do
                    pass


def _failed_record(spec, error):
    return {'run_id': spec['run_id'], 'seed': spec['seed'], 'grid': spec['grid'],
            'status': 'failed', 'error': ' '.join(str(error).split())[:400], 'wall_s': None,
            'simulated_s': None, 'digest': None, 'command': None, 'columns': {},
            'eval_files': []}


def _collect(future, spec):
    """The record of a finished task (a task that raised: a failed record)."""
    if future.status == 'finished':
        return future.result()
    try:
        error = future.exception()
        text = f'{type(error).__name__}: {error}'
    except Exception as err:  # noqa: BLE001 - a cancelled future has no exception to give
        text = f'the task was {future.status} ({type(err).__name__})'
    record = _failed_record(spec, text)
    try:
        write_run(spec['run_dir'], record)
    except OSError:
        pass
    return record


def _run_pending(pending, cluster, bar):
    """Run ``pending`` on the cluster; the records by run id, as they came."""
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    futures = {cluster.client.submit(run_one, spec, key=f'acres-sim-run-{spec["run_id"]}-'
                                     f'{token}', pure=False): spec for spec in pending}
    records = {}
    done = as_completed(futures)
    bar.draw()
    while not done.is_empty():
        batch = done.next_batch(block=False)
        if not batch:
            time.sleep(0.25)
            bar.draw()
            continue
        for future in batch:
            spec = futures[future]
            record = _collect(future, spec)
            future.release()
            records[spec['run_id']] = record
            bar.finished(record)
            if record['status'] != 'complete' and bar.show:
                bar.say(f'run {spec["run_id"]} failed: {record["error"]}')
        bar.draw()
    bar.end()
    return records


def _write_outputs(folder, runs, records, axes):
    """The table (csv, parquet) and the picture of every run with a record."""
    from acres_sim.analysis.sweep_plots import draw
    from acres_sim.analysis.sweep_table import cell, metric_columns, summary_text, table
    from acres_sim.analysis.sweep_table import write_tables

    rows = [records.get(r['run_id']) or read_run(r['run_dir']) for r in runs]
    frame = table([r for r in rows if r is not None], list(axes))
    write_tables(folder, frame)
    metrics = metric_columns(frame, list(axes))
    cells = {name: [cell(v) for v in values] for name, values in axes.items()}
    try:
        folder.write('sweep.png', write=lambda part: draw(frame, list(axes), cells, metrics,
                                                          part))
    except SweepError:
        raise
    except Exception as err:  # noqa: BLE001 - the picture is optional, the table is not
        print(f'acres-sim sweep: warning: no sweep.png ({type(err).__name__}: {err})',
              file=sys.stderr)
    return frame, summary_text(frame, list(axes), metrics)


def sweep(rig='polaris', seeds=None, grid=None, out='sweeps/latest', duration=None,
          workers=None, scheduler=None, bags=False, reports=False, progress=None, *,
          agents=None, route=None, laps=None, repeat=False, scene=None, terrain=None,
          vibration=None, events=(), parked=False, config=None, vehicle_config=None,
          site=None, overrides=None, gnss_outages=()) -> SweepResult:
    """Run the sweep: ``rig`` (a packaged rig or scenario, or a file) over
    ``seeds`` ('1-100', '1,5,9', '1-10,20' or a list; None: the scenario's
    sweep block) and the product of the ``grid`` axes (a mapping of a sensor
    key, ``terrain``, ``route`` or ``vibration`` to its list of values; on top
    of the scenario's), each run ``duration`` simulated seconds (None: the
    scenario's, else 120), into the folder ``out``.  ``workers`` local worker
    processes (None: one per core), or the cluster of the Dask scheduler at
    ``scheduler`` ('tcp://HOST:PORT').  ``bags`` / ``reports`` keep each run's
    rosbag2 and report.png (off: rows only).  ``progress``: the status line
    on stderr (None: when stderr is a terminal).  The record options are
    those of ``acres-sim record`` (``overrides``: sensor keys as ``--set``,
    ``gnss_outages``: 'START:END' texts, ``events``: YAML texts).

    Returns a :class:`SweepResult`; a run that failed is in it and in the
    table with its error.  ConfigError (SweepError for the folder) when the
    sweep cannot start, in one line."""
    fixed = {'agents': agents, 'route': route, 'laps': laps, 'repeat': bool(repeat),
             'scene': scene, 'terrain': terrain, 'vibration': vibration,
             'events': list(events), 'parked': parked, 'config': config,
             'vehicle_config': vehicle_config, 'site': site, 'overrides': dict(overrides or {}),
             'gnss_outages': list(gnss_outages)}
    if scheduler is not None and workers is not None:
        raise ConfigError('--workers is for the local cluster; a cluster of --scheduler has '
                          'its own workers')
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) \
            or not 1 <= workers <= MAX_WORKERS:
        raise ConfigError(f'--workers {workers!r}: allowed 1 to {MAX_WORKERS}')
    definition, axes = _definition(rig, seeds, grid, duration, bags, reports, fixed)
    folder = SweepFolder(Path(out).resolve()).open(definition)
    try:
        runs = _runs(definition, axes, folder)
        pending = [r for r in runs if not finished(r['run_dir'], r['run_id'])]
        skipped = len(runs) - len(pending)
        records = {}
        try:
            if pending:
                with _Cluster(workers, scheduler) as cluster:
                    show = sys.stderr.isatty() if progress is None else bool(progress)
                    bar = _Progress(len(runs), skipped, cluster.threads(), show)
                    print(f'acres-sim sweep: {_runs_word(len(runs))}'
                          f'{f" ({skipped} finished before, skipped)" if skipped else ""} '
                          f'on {cluster.where}', file=sys.stderr, flush=True)
                    records = _run_pending(pending, cluster, bar)
        except KeyboardInterrupt:
            _write_outputs(folder, runs, records, axes)
            print(f'acres-sim sweep: stopped; {len(pending) - len(records)} runs not done '
                  '(the same sweep into the same folder goes on with them)', file=sys.stderr)
            raise
        frame, summary = _write_outputs(folder, runs, records, axes)
    finally:
        folder.close()
    failed = tuple((r['run_id'], r['error']) for r in records.values()
                   if r['status'] != 'complete')
    return SweepResult(folder.out, frame, len(records), skipped, failed, summary)
