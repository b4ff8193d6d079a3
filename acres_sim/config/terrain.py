"""Reading a terrain file: the ground under the wheels, a height field of the
tile with zones of ISO 8608 surface roughness on it.

A terrain file is YAML (JSON works too) in grid ENU metres of the tile::

    terrain:
      name: acre                 # default: the file stem
      description: ...
      grid:                      # heights at nodes spacing_m apart, from (x0_m, y0_m)
        x0_m: -300.0
        y0_m: -200.0
        spacing_m: 10.0
        heights_m:               # rows south to north, each row west to east [m]
          - [0.0, 0.1, 0.2]      # the row at y0_m
          - [0.1, 0.2, 0.3]      # the row at y0_m + spacing_m ...
      roughness:                 # optional: without it the ground is smooth
        default_class: C         # smooth or an ISO 8608 class A to E (default: smooth)
        blend_m: 5.0             # width of the transition at a zone's edge (default 5)
        seed: 7                  # optional: the roughness profile's seed (default: the run's)
        zones:                   # later zones lie over earlier ones
          - {name: north field, class: D, polygon: [[-60, 90], [60, 90], [60, 160], [-60, 160]]}

Heights are metres above the tile origin (grid u = 0), finite and within
1000 m of it; the grid has at least 2 x 2 nodes and rows of equal length.
A polygon has at least 3 corners, each a finite [x, y].  Zone names (default
``zones[i]``) are unique in a terrain.  No other keys.  The first problem
stops loading with one :class:`ConfigError` that names the file, the item
(e.g. ``terrain.grid.heights_m[3][5]``), the value and what is allowed.

``flat`` is no file: the plane of the physics without terrain, and
:func:`load_terrain` gives None for it.  A name without a suffix or a ``/``
is a packaged terrain (``config/terrains/<name>.yaml``); anything else is a
file.  :func:`read_terrain` reads and checks a file (cheap: no roughness is
computed), :func:`load_terrain` also builds the
:class:`~acres_sim.core.terrain.TerrainField` the physics samples: the
heights, the roughness factor of each node from the zones
(:func:`acres_sim.core.roughness.roughness_scale_grid`, each class by
:func:`~acres_sim.core.roughness.class_scale`, ``smooth`` 0) and the unit
roughness tile of the seed (:func:`~acres_sim.core.roughness.roughness_tile`).
:attr:`Terrain.digest` is a SHA-256 over a canonical text of the content and
the roughness seed, for ``episode.json``: the same ground gives the same
digest, whatever file it came from.
"""

import hashlib
import json
import os
from pathlib import Path
from typing import NamedTuple, Optional, Tuple

import numpy as np

from acres_sim.config.loader import config_dir, read_document
from acres_sim.config.schema import NON_BLANK, SEED_MAX, Key
from acres_sim.config.validate import ConfigError, check, check_keys, missing, value_error
from acres_sim.core import roughness
from acres_sim.core.terrain import TerrainField

__all__ = ['FLAT', 'MAX_NODES', 'ROUGHNESS_CLASSES', 'TERRAIN_KEYS', 'TILE_SIZE',
           'TILE_SPACING_M', 'Terrain', 'TerrainSpec', 'Zone', 'build_terrain',
           'is_terrain_file', 'load_terrain', 'read_terrain', 'terrain_argument',
           'terrain_from_tree', 'terrain_names', 'terrain_path', 'terrains_dir']

FLAT = 'flat'                   # no terrain: the plane z = 0 of the physics
SMOOTH = 'smooth'               # a surface without roughness (a road, a concrete floor)
ROUGHNESS_CLASSES = (SMOOTH,) + tuple(roughness.ISO_8608_CLASSES)
MAX_NODES = 2001                # nodes along each axis of a grid
TILE_SIZE = 512                 # nodes along each side of the unit roughness tile
TILE_SPACING_M = 0.25           # their spacing: a 128 m periodic square
_LIMIT_M = 1e7                  # |coordinate| [m]; far beyond any tile
_HEIGHT_M = 1000.0              # |height| above the tile origin [m]
_FILE_SUFFIXES = ('.yaml', '.yml', '.json')

_TOP_KEYS = ('name', 'description', 'grid', 'roughness')
_GRID_KEYS = ('x0_m', 'y0_m', 'spacing_m', 'heights_m')
_ROUGHNESS_KEYS = ('default_class', 'blend_m', 'seed', 'zones')
_ZONE_KEYS = ('name', 'class', 'polygon')

# The values of a terrain file.
TERRAIN_KEYS = {k.name: k for k in (
    Key('name', 'str', None, 'Name of the terrain (default: the file stem) or of a zone '
        '(default: its place, e.g. zones[0]); zone names are unique in the terrain.',
        pattern=NON_BLANK, pattern_words='a non-empty string'),
    Key('description', 'str', '', 'What the terrain is.'),
    Key('x0_m', 'float', None, 'Grid east of the first node of every row (the west edge).',
        'm', low=-_LIMIT_M, high=_LIMIT_M),
    Key('y0_m', 'float', None, 'Grid north of the first row (the south edge).', 'm',
        low=-_LIMIT_M, high=_LIMIT_M),
    Key('spacing_m', 'float', None, 'Distance between neighbouring nodes, east and north.',
        'm', low=0.0, low_open=True, high=1000.0),
    Key('height', 'float', None, 'Height of a node above the tile origin.', 'm',
        low=-_HEIGHT_M, high=_HEIGHT_M),
    Key('default_class', 'str', SMOOTH, 'Roughness where no zone lies: smooth (none) or an '
        'ISO 8608 class.', choices=ROUGHNESS_CLASSES),
    Key('class', 'str', None, 'Roughness of a zone: smooth (none) or an ISO 8608 class.',
        choices=ROUGHNESS_CLASSES),
    Key('blend_m', 'float', 5.0, "Width of the transition at a zone's edge.", 'm',
        low=0.0, high=1000.0),
    Key('seed', 'int', None, "Seed of the roughness profile (default: the run's seed).",
        low=0, high=SEED_MAX),
    Key('coordinate', 'float', None, 'x or y of a polygon corner in grid ENU.', 'm',
        low=-_LIMIT_M, high=_LIMIT_M),
)}


class Zone(NamedTuple):
    """A zone of one roughness class: its name, class and polygon ((k, 2) grid ENU m)."""

    name: str
    roughness_class: str
    polygon: np.ndarray


class TerrainSpec(NamedTuple):
    """The checked content of a terrain file (nothing computed yet)."""

    name: str
    description: str
    x0_m: float
    y0_m: float
    spacing_m: float
    heights_m: np.ndarray          # (ny, nx), rows south to north
    default_class: str
    blend_m: float
    seed: Optional[int]            # None: the run's seed
    zones: Tuple[Zone, ...]
    source: str = ''


class Terrain(NamedTuple):
    """A terrain ready for the physics: ``field`` is what the kernels sample."""

    name: str
    description: str
    digest: str                    # SHA-256 (hex) of the content and the roughness seed
    roughness_seed: int
    field: TerrainField
    source: str = ''


# --------------------------------------------------------------------------- names and files


def terrains_dir() -> Path:
    """The folder of the packaged terrain files."""
    return config_dir() / 'terrains'


def terrain_names():
    """Names of the packaged terrains (file stems), sorted."""
    return sorted(p.stem for p in terrains_dir().glob('*.yaml'))


def is_terrain_file(text) -> bool:
    """Whether ``text`` names a file (a suffix .yaml, .yml or .json, or a '/')
    rather than ``flat`` or a packaged terrain."""
    text = str(text)
    return Path(text).suffix in _FILE_SUFFIXES or '/' in text


def terrain_argument(text, folder=None) -> str:
    """``text`` as the drivers take it: ``flat`` and names as they are, a file
    as an absolute path (relative to ``folder``, else the working directory)."""
    text = str(text)
    if not is_terrain_file(text):
        return text
    path = os.path.expanduser(text)
    if folder is not None:
        path = os.path.join(folder, path)
    return os.path.abspath(path)


def _choices():
    return ', '.join([FLAT, *terrain_names()])


def terrain_path(name_or_path) -> Optional[Path]:
    """The file of a terrain: None for ``flat``, the packaged file of a name,
    else the path given; ConfigError for an unknown name."""
    text = str(name_or_path)
    if text == FLAT:
        return None
    if is_terrain_file(text):
        return Path(os.path.expanduser(text))
    if not text.strip():
        raise ConfigError(f"terrain = {text!r}: allowed {_choices()} or a terrain file")
    path = terrains_dir() / f'{text}.yaml'
    if not path.is_file():
        raise ConfigError(f'unknown terrain {text!r}: no file {path}; packaged: {_choices()} '
                          '(or a terrain file, e.g. ./my_terrain.yaml)')
    return path


# --------------------------------------------------------------------------- checking


def _list(item, value, n_min, what, source):
    """``value`` if it is a list of at least ``n_min`` items, else the error."""
    allowed = f'a list of at least {n_min} {what}'
    if not isinstance(value, list):
        raise value_error(item, value, 'expected a list', allowed, source)
    if len(value) < n_min:
        raise value_error(item, value, f'{len(value)} of them, too few', allowed, source)
    return value


def _row(item, row, spec, source):
    """One row of numbers checked against ``spec``, as float64 (fast when all
    are good; the first bad one gives ``check``'s message as ``item[i]``)."""
    if all(type(v) in (int, float) for v in row):      # not bool, not str
        try:
            arr = np.array(row, dtype=np.float64)
        except OverflowError:                           # an integer beyond any float
            arr = None
        if arr is not None and bool(np.all(np.isfinite(arr)) and np.all(arr >= spec.low)
                                    and np.all(arr <= spec.high)):
            return arr
    for i, v in enumerate(row):
        check(spec, v, source, f'{item}[{i}]')
    raise AssertionError('a bad value that check accepts')   # pragma: no cover


def _heights(item, value, source):
    """The (ny, nx) heights: rows of equal length, at least 2 x 2, at most MAX_NODES."""
    rows = _list(item, value, 2, 'rows of heights (south to north)', source)
    if len(rows) > MAX_NODES:
        raise value_error(item, rows, f'{len(rows)} rows, too many',
                          f'at most {MAX_NODES} rows', source)
    width = None
    out = []
    for j, row in enumerate(rows):
        where = f'{item}[{j}]'
        _list(where, row, 2, 'heights (west to east)', source)
        if width is None:
            width = len(row)
            if width > MAX_NODES:
                raise value_error(where, row, f'{width} heights, too many',
                                  f'at most {MAX_NODES} heights in a row', source)
        elif len(row) != width:
            raise value_error(where, row, f'{len(row)} heights, row 0 has {width}',
                              f'rows of equal length ({width} heights, as row 0)', source)
        out.append(_row(where, row, TERRAIN_KEYS['height'], source))
    return np.ascontiguousarray(out, dtype=np.float64)


def _required(body, name, where, source, spec=None):
    spec = spec or TERRAIN_KEYS[name]
    item = f'{where}.{name}'
    if name not in body:
        raise missing(spec, source, item)
    return check(spec, body[name], source, item)


def _grid(raw, source):
    where = 'terrain.grid'
    if 'grid' not in raw:
        raise ConfigError(f'{where} is missing (in {source}); allowed: a mapping of '
                          + ', '.join(_GRID_KEYS))
    grid = check_keys(raw['grid'], _GRID_KEYS, where, source)
    x0, y0, spacing = (_required(grid, name, where, source)
                       for name in ('x0_m', 'y0_m', 'spacing_m'))
    if 'heights_m' not in grid:
        raise ConfigError(f'{where}.heights_m is missing (in {source}); allowed: rows of '
                          'heights [m], south to north, at least 2 x 2')
    return x0, y0, spacing, _heights(f'{where}.heights_m', grid['heights_m'], source)


def _polygon(item, value, source):
    corners = _list(item, value, 3, 'corners [x, y]', source)
    spec = TERRAIN_KEYS['coordinate']
    out = []
    for i, corner in enumerate(corners):
        where = f'{item}[{i}]'
        if not isinstance(corner, (list, tuple)) or len(corner) != 2:
            raise value_error(where, corner, 'expected a corner', '[x, y] in metres', source)
        out.append([check(spec, v, source, f'{where}[{axis}]') for axis, v in enumerate(corner)])
    return np.array(out, dtype=np.float64)


def _roughness(raw, source):
    """(default_class, blend_m, seed, zones) of ``terrain.roughness``."""
    where = 'terrain.roughness'
    body = raw.get('roughness')
    if body is None:
        body = {}
    check_keys(body, _ROUGHNESS_KEYS, where, source)

    def field(name):
        spec = TERRAIN_KEYS[name]
        return check(spec, body[name], source, f'{where}.{name}') if name in body \
            else spec.default

    zones_raw = body.get('zones')
    if zones_raw is None:
        zones_raw = []
    if not isinstance(zones_raw, list):
        raise value_error(f'{where}.zones', zones_raw, 'expected a list',
                          'a list of zones {name, class, polygon} (or nothing)', source)
    zones, seen = [], {}
    for i, zone in enumerate(zones_raw):
        item = f'{where}.zones[{i}]'
        check_keys(zone, _ZONE_KEYS, item, source)
        name = check(TERRAIN_KEYS['name'], zone['name'], source, f'{item}.name') \
            if 'name' in zone else f'zones[{i}]'
        if name in seen:
            raise value_error(f'{item}.name', name, f'the name is already used by {seen[name]}',
                              'a name unique in the terrain', source)
        seen[name] = item
        kind = _required(zone, 'class', item, source)
        if 'polygon' not in zone:
            raise ConfigError(f'{item}.polygon is missing (in {source}); allowed: a list of '
                              'at least 3 corners [x, y]')
        zones.append(Zone(name, kind, _polygon(f'{item}.polygon', zone['polygon'], source)))
    return field('default_class'), field('blend_m'), field('seed'), tuple(zones)


def terrain_from_tree(tree, source='<terrain>', default_name='terrain') -> TerrainSpec:
    """A checked :class:`TerrainSpec` from the parsed content of a terrain file."""
    if not isinstance(tree, dict) or 'terrain' not in tree:
        raise ConfigError(f'{source}: expected a mapping with the key "terrain" at the top')
    check_keys(tree, ('terrain',), '', source)
    raw = check_keys(tree['terrain'], _TOP_KEYS, 'terrain', source)
    name = check(TERRAIN_KEYS['name'], raw['name'], source, 'terrain.name') if 'name' in raw \
        else default_name
    if name == FLAT:
        raise value_error('terrain.name', name, 'the name of no terrain',
                          'another name (flat is the plane without a terrain)', source)
    description = check(TERRAIN_KEYS['description'], raw.get('description', ''), source,
                        'terrain.description')
    x0, y0, spacing, heights = _grid(raw, source)
    default_class, blend_m, seed, zones = _roughness(raw, source)
    return TerrainSpec(name, description, x0, y0, spacing, heights, default_class, blend_m,
                       seed, zones, source)


def read_terrain(name_or_path) -> Optional[TerrainSpec]:
    """The checked content of a terrain (``flat``: None; a packaged name; a
    file, YAML or JSON by the ``.json`` suffix)."""
    path = terrain_path(name_or_path)
    if path is None:
        return None
    tree = read_document(path, 'terrain')
    return terrain_from_tree(tree, str(path), default_name=path.stem)


# --------------------------------------------------------------------------- building


def _scale(kind) -> float:
    return 0.0 if kind == SMOOTH else float(roughness.class_scale(kind))


def _canonical(spec: TerrainSpec, seed: int) -> str:
    """Canonical JSON of what makes the ground: fixed key order, floats as
    Python's shortest round-trip text (the description is left out)."""
    body = {
        'name': spec.name,
        'grid': {'x0_m': float(spec.x0_m), 'y0_m': float(spec.y0_m),
                 'spacing_m': float(spec.spacing_m),
                 'heights_m': [[float(v) for v in row] for row in spec.heights_m]},
        'roughness': {
            'default_class': spec.default_class, 'blend_m': float(spec.blend_m),
            'seed': int(seed), 'tile': {'size': TILE_SIZE, 'spacing_m': TILE_SPACING_M},
            'zones': [{'name': z.name, 'class': z.roughness_class,
                       'polygon': [[float(x), float(y)] for x, y in z.polygon]}
                      for z in spec.zones]},
    }
    return json.dumps(body, sort_keys=True, separators=(',', ':'), ensure_ascii=True,
                      allow_nan=False)


def build_terrain(spec: TerrainSpec, seed: int) -> Terrain:
    """The :class:`Terrain` of ``spec``; ``seed``: the run's, used when the
    file gives no roughness seed."""
    tile_seed = int(spec.seed if spec.seed is not None else seed)
    ny, nx = spec.heights_m.shape
    scale = roughness.roughness_scale_grid(
        spec.x0_m, spec.y0_m, spec.spacing_m, nx, ny,
        [(z.polygon, _scale(z.roughness_class)) for z in spec.zones],
        _scale(spec.default_class), spec.blend_m)
    tile = roughness.roughness_tile(tile_seed, TILE_SIZE, TILE_SPACING_M)
    scale = np.ascontiguousarray(scale, dtype=np.float64)
    field = TerrainField(float(spec.x0_m), float(spec.y0_m), float(spec.spacing_m),
                         np.ascontiguousarray(spec.heights_m, dtype=np.float64), scale,
                         np.ascontiguousarray(tile, dtype=np.float64), TILE_SPACING_M)
    digest = hashlib.sha256(_canonical(spec, tile_seed).encode('ascii')).hexdigest()
    return Terrain(spec.name, spec.description, digest, tile_seed, field, spec.source)


def load_terrain(name_or_path, seed) -> Optional[Terrain]:
    """The terrain ``name_or_path`` (``flat``: None, the plane of the physics;
    a packaged name such as ``acre``; or a terrain file) with the roughness
    of ``seed`` (the run's) unless the file gives its own."""
    spec = read_terrain(name_or_path)
    return None if spec is None else build_terrain(spec, seed)

