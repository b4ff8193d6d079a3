"""What a sweep varies: its seeds and its grid of parameters, read from the
command line (``--seeds 1-100``, ``--grid KEY=V1,V2,...``) or from a
scenario's ``sweep:`` block, and checked here, where the key names are known::

    sweep:
      seeds: 1-20                       # or a list of seeds, or one seed
      grid:
        gnss.corrections.baseline_km: [1.0, 10.0, 50.0]
        gnss.corrections.outages_s: [[], ["60:90"], ["60:150"]]
        terrain: [flat, acre]

A grid axis is a sensor key of the schema (applied to the run as ``--set
KEY=VALUE``) or one of the run options :data:`GRID_OPTIONS` (``terrain``,
``route``, ``vibration``); its values are checked as that key's values are.
Seeds are written ``1-100``, ``1,5,9`` or ``1-10,20``.  Every mistake is one
:class:`ConfigError` naming the key, the value and where it came from.
"""

from dataclasses import dataclass
import os
from pathlib import Path
import re

from acres_sim.config.loader import parse_value
from acres_sim.config.node_params import sim_param
from acres_sim.config.options import vibration_overrides
from acres_sim.config.schema import KEY_NAMES, SEED_MAX, key
from acres_sim.config.terrain import terrain_argument, terrain_path
from acres_sim.config.validate import (ConfigError, check, check_keys, check_value,
                                       unknown_key, value_error)

__all__ = ['GRID_OPTIONS', 'MAX_RUNS', 'SweepPlan', 'check_axis', 'parse_grid_option',
           'parse_seeds', 'read_sweep_block']

#: Run options that can be grid axes beside the sensor keys (``record --terrain`` etc.).
GRID_OPTIONS = ('terrain', 'route', 'vibration')
#: Runs of one sweep at most (seeds times grid points).
MAX_RUNS = 100000
_SEEDS_WORDS = 'seeds such as 1-100, 1,5,9 or 1-10,20 (0 to 2**63-1)'
_SEED_ITEM = re.compile(r'^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$')
_FILE_SUFFIXES = ('.yaml', '.yml', '.json')


@dataclass(frozen=True)
class SweepPlan:
    """The seeds and grid axes of a sweep; ``grid`` is a tuple of (name,
    values) in the order given, each value in its key's normal form."""

    seeds: tuple = ()
    grid: tuple = ()


def parse_seeds(text, source=None) -> tuple:
    """The seeds of ``1-100``, ``1,5,9`` or ``1-10,20``, in the order given;
    ConfigError for anything else, a seed given twice or more than
    :data:`MAX_RUNS` seeds (naming ``--seeds``, or with ``source`` the
    scenario file's ``sweep.seeds``)."""
    where = '--seeds' if source is None else f'sweep.seeds (in {source}):'
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f'{where} {text!r}: expected {_SEEDS_WORDS}')
    seeds = []
    for item in text.split(','):
        match = _SEED_ITEM.match(item)
        if not match:
            raise ConfigError(f'{where} {text!r}: {item.strip()!r} is not a seed or a range; '
                              f'expected {_SEEDS_WORDS}')
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise ConfigError(f'{where} {text!r}: the range {item.strip()} goes down; '
                              f'expected {_SEEDS_WORDS}')
        if last > SEED_MAX:
            raise ConfigError(f'{where} {text!r}: seed {last} is out of range; allowed 0 to '
                              '2**63-1')
        if last - first + 1 + len(seeds) > MAX_RUNS:
            raise ConfigError(f'{where} {text!r}: more than {MAX_RUNS} seeds')
        seeds.extend(range(first, last + 1))
    _check_distinct(seeds, where, text)
    return tuple(seeds)


def _check_distinct(seeds, where, text):
    seen = set()
    for seed in seeds:
        if seed in seen:
            raise ConfigError(f'{where} {text!r}: seed {seed} is given twice')
        seen.add(seed)


def _seeds_of_file(value, source):
    """A sweep block's ``seeds``: the text form, one seed, or a list of seeds."""
    if isinstance(value, str):
        return parse_seeds(value, source)
    items = value if isinstance(value, list) else [value]
    if not items or any(isinstance(s, bool) or not isinstance(s, int) for s in items):
        raise value_error('sweep.seeds', value, 'expected seeds', _SEEDS_WORDS, source)
    seeds = [check(key('seed'), s, source, 'sweep.seeds') for s in items]
    if len(seeds) > MAX_RUNS:
        raise ConfigError(f'sweep.seeds (in {source}): more than {MAX_RUNS} seeds')
    _check_distinct(seeds, f'sweep.seeds (in {source}):', value)
    return tuple(seeds)


def check_axis(name, values, source=None, folder=None):
    """(name, values) of one grid axis, each value in its key's normal form;
    ConfigError for an unknown key, a value its key does not allow, a value
    given twice or no values.  ``folder``: where a route or terrain file named
    relative to a scenario file is (None: the working directory)."""
    if name in ('seed', 'seeds'):
        raise ConfigError(f"grid key '{name}'{_where(source)}: the seeds are a sweep's own "
                          'axis; give them as --seeds (or seeds: in the sweep block)')
    if name not in KEY_NAMES and name not in GRID_OPTIONS:
        raise unknown_key(name, source, (*KEY_NAMES, *GRID_OPTIONS))
    if not isinstance(values, (list, tuple)) or not values:
        raise value_error(name, values, 'expected a list of values, at least one',
                          'the values of the axis', source)
    checked = [_check_grid_value(name, value, source, folder) for value in values]
    for i, value in enumerate(checked):
        if value in checked[:i]:
            raise value_error(name, values[i], 'given twice on the axis', 'distinct values',
                              source)
    return name, tuple(checked)


def _where(source):
    if source == 'command line':
        return ' (on the command line)'
    return f' (in {source})' if source else ''


def _check_grid_value(name, value, source, folder):
    if name in KEY_NAMES:
        if key(name).kind == 'outages' and value is None:
            value = []
        return check_value(name, value, source)
    if name == 'vibration':
        value = {True: 'on', False: 'off'}.get(value, value)    # YAML reads on / off so
        vibration_overrides(value, f'vibration{_where(source)} = ')
        return value
    if name == 'terrain':
        check(sim_param('terrain'), value, source)
        terrain_path(value)               # an unknown packaged name: the error now
        return terrain_argument(value, folder)
    if not isinstance(value, str) or not value.strip():   # route
        raise value_error(name, value, 'expected a route', 'a packaged route name or a route '
                          'file', source)
    if Path(value).suffix in _FILE_SUFFIXES or '/' in value:
        path = os.path.expanduser(value)
        return os.path.normpath(os.path.join(folder, path) if folder else os.path.abspath(path))
    return value


def parse_grid_option(text) -> tuple:
    """``KEY=V1,V2,...`` (each value read as ``--set`` reads its value, or
    for :data:`GRID_OPTIONS` as its option takes it) or ``KEY=[V1, V2, ...]``
    (a YAML list of the values: for values that are lists themselves) ->
    (name, values), checked."""
    name, sep, values_text = text.partition('=')
    name = name.strip()
    if not sep or not name or not values_text.strip():
        raise ConfigError(f'--grid {text!r}: expected KEY=V1,V2,... (or KEY=[V1, V2, ...]), '
                          'e.g. --grid gnss.corrections.baseline_km=1,10,50')
    where = f'--grid {text!r}: VALUES'
    if values_text.lstrip().startswith('['):
        values = parse_value(values_text, where)
        if not isinstance(values, list):
            raise ConfigError(f'{where} is not a list of values')
    elif name in GRID_OPTIONS:      # as the options --terrain, --route, --vibration take them
        values = [item.strip() for item in values_text.split(',')]
    else:
        values = [parse_value(item, where) for item in values_text.split(',')]
    return check_axis(name, values, 'command line')


def read_sweep_block(tree, source) -> SweepPlan:
    """A scenario file's ``sweep:`` block (``seeds``, ``grid``), checked;
    route and terrain files of its grid are relative to the file."""
    check_keys(tree, ('seeds', 'grid'), 'sweep', source)
    seeds = _seeds_of_file(tree['seeds'], source) if 'seeds' in tree else ()
    grid = tree.get('grid') or {}
    if not isinstance(grid, dict):
        raise value_error('sweep.grid', grid, 'expected a mapping', 'a mapping of keys to '
                          'lists of values', source)
    folder = str(Path(source).parent)
    axes = tuple(check_axis(name, values, f'{source}: sweep.grid', folder)
                 for name, values in _flat_axes(grid).items())
    return SweepPlan(seeds, axes)


def _flat_axes(tree, prefix=''):
    """Nested keys (gnss: {hz: [5.0, 10.0]}) as dotted names; a leaf is the list of values."""
    out = {}
    for name, value in tree.items():
        full = f'{prefix}.{name}' if prefix else str(name)
        if isinstance(value, dict):
            out.update(_flat_axes(value, full))
        else:
            out[full] = value
    return out
