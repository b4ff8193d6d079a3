"""Reading a scene file: the obstacles of the GNSS sky view (spec: GNSS
Receiver, "Sky Obstruction").

A scene file is YAML (JSON works too) in grid ENU metres of the tile::

    scene:
      name: acre_farmstead
      buildings:                # axis-aligned boxes (the bounds of the building)
        - {name: garage, min: [-10.0, -8.0, 0.0], max: [14.0, 8.0, 7.0]}
      grain_bins:               # vertical cylinders
        - {name: bin_1, center: [85.0, -45.0], radius: 7.0, bottom: 0.0, top: 24.0}
      tree_crowns:              # spheres
        - {name: oak_1, center: [-40.0, 72.0, 8.0], radius: 5.0}

``name`` of the scene and of each item may be left out (the file's stem, and
``buildings[0]`` style names).  Every list may be empty or missing.  Names
must be unique in a scene.  The checks: every coordinate a finite number,
``min < max`` on each axis, ``radius > 0``, ``bottom < top``; no other keys.
The first problem stops loading with one :class:`ConfigError` that names the
file, the item (e.g. ``scene.grain_bins[2].radius``), the value and what is
allowed.  See :mod:`acres_sim.core.scene` for how buildings, bins and trees
are turned into boxes, cylinders and spheres.
"""

import math
from pathlib import Path


from acres_sim.config.loader import config_dir, read_document
from acres_sim.config.validate import ConfigError
from acres_sim.core.scene import Scene, make_scene

__all__ = ['DEFAULT_SCENE_FILE', 'default_scene', 'load_scene', 'scene_from_tree']

DEFAULT_SCENE_FILE = 'scene_acre.yaml'
_TOP_KEYS = ('name', 'buildings', 'grain_bins', 'tree_crowns')
_ITEM_KEYS = {
    'buildings': ('name', 'min', 'max'),
    'grain_bins': ('name', 'center', 'radius', 'bottom', 'top'),
    'tree_crowns': ('name', 'center', 'radius'),
}
_SINGULAR = {'buildings': 'building', 'grain_bins': 'grain bin', 'tree_crowns': 'tree crown'}
_LIMIT = 1e7   # |coordinate| [m]; far beyond any tile, keeps the numbers sane


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


class _Checker:
    """Builds the errors of one file, in the format of the other config errors."""

    def __init__(self, source):
        self.source = source

    def fail(self, item, value, problem, allowed) -> ConfigError:
        return ConfigError(f'{item} = {_short(value)} (in {self.source}): {problem}; '
                           f'allowed: {allowed}')

    def number(self, item, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(item, value, 'expected a number', 'a finite number of metres')
        if not (abs(value) <= _LIMIT and math.isfinite(value)):
            raise self.fail(item, value, 'not a finite number in range',
                            f'a finite number of metres, at most {_LIMIT:g} in size')
        return float(value)

    def vector(self, item, value, n):
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise self.fail(item, value, f'expected a list of {n} numbers',
                            f'[{", ".join("xyz"[:n])}] in metres')
        return [self.number(f'{item}[{i}]', v) for i, v in enumerate(value)]

    def mapping(self, item, value, keys):
        if not isinstance(value, dict):
            raise self.fail(item, value, 'expected a mapping', 'a mapping with keys '
                            + ', '.join(keys))
        for name in value:
            if name not in keys:
                raise self.fail(f'{item}.{name}', value[name], 'unknown key',
                                'keys ' + ', '.join(keys))
        return value

    def required(self, item, mapping, name):
        if name not in mapping:
            raise ConfigError(f'{item}.{name} is missing (in {self.source}); '
                              f'every {item.rsplit("[", 1)[0].rsplit(".", 1)[-1]} item needs it')
        return mapping[name]


def scene_from_tree(tree, source='<scene>', default_name='scene') -> Scene:
    """A checked :class:`Scene` from the parsed content of a scene file."""
    ck = _Checker(source)
    if not isinstance(tree, dict) or 'scene' not in tree:
        raise ConfigError(f'{source}: expected a mapping with the key "scene" at the top, '
                          f'got {_short(tree)}')
    for name in tree:
        if name != 'scene':
            raise ck.fail(str(name), tree[name], 'unknown key', 'only "scene" at the top')
    body = tree['scene']
    if body is None:
        body = {}
    ck.mapping('scene', body, _TOP_KEYS)
    scene_name = body.get('name', default_name)
    if not isinstance(scene_name, str) or not scene_name.strip():
        raise ck.fail('scene.name', scene_name, 'expected a name', 'a non-empty string')

    rows = {kind: [] for kind in _ITEM_KEYS}
    names = {kind: [] for kind in _ITEM_KEYS}
    seen = {}
    for kind, keys in _ITEM_KEYS.items():
        items = body.get(kind)
        if items is None:
            continue
        if not isinstance(items, list):
            raise ck.fail(f'scene.{kind}', items, 'expected a list',
                          f'a list of {_SINGULAR[kind]} mappings (or nothing)')
        for i, raw in enumerate(items):
            where = f'scene.{kind}[{i}]'
            ck.mapping(where, raw, keys)
            name = raw.get('name', f'{kind}[{i}]')
            if not isinstance(name, str) or not name.strip():
                raise ck.fail(f'{where}.name', name, 'expected a name', 'a non-empty string')
            if name in seen:
                raise ck.fail(f'{where}.name', name, f'the name is already used by {seen[name]}',
                              'a name unique in the scene')
            seen[name] = where
            rows[kind].append(_item_row(ck, kind, where, raw))
            names[kind].append(name)
    return make_scene(scene_name, rows['buildings'], rows['grain_bins'], rows['tree_crowns'],
                      names['buildings'], names['grain_bins'], names['tree_crowns'])


def _item_row(ck, kind, where, raw):
    if kind == 'buildings':
        lo = ck.vector(f'{where}.min', ck.required(where, raw, 'min'), 3)
        hi = ck.vector(f'{where}.max', ck.required(where, raw, 'max'), 3)
        for axis in range(3):
            if not lo[axis] < hi[axis]:
                raise ck.fail(f'{where}.max[{axis}]', raw['max'][axis],
                              f'not above min[{axis}] = {lo[axis]:g}',
                              'min < max on every axis')
        return lo + hi
    if kind == 'grain_bins':
        cx, cy = ck.vector(f'{where}.center', ck.required(where, raw, 'center'), 2)
        radius = ck.number(f'{where}.radius', ck.required(where, raw, 'radius'))
        if not radius > 0.0:
            raise ck.fail(f'{where}.radius', raw['radius'], 'not positive', 'radius > 0 m')
        bottom = ck.number(f'{where}.bottom', ck.required(where, raw, 'bottom'))
        top = ck.number(f'{where}.top', ck.required(where, raw, 'top'))
        if not bottom < top:
            raise ck.fail(f'{where}.top', raw['top'], f'not above bottom = {bottom:g}',
                          'bottom < top')
        return [cx, cy, radius, bottom, top]
    centre = ck.vector(f'{where}.center', ck.required(where, raw, 'center'), 3)
    radius = ck.number(f'{where}.radius', ck.required(where, raw, 'radius'))
    if not radius > 0.0:
        raise ck.fail(f'{where}.radius', raw['radius'], 'not positive', 'radius > 0 m')
    return centre + [radius]


def load_scene(path) -> Scene:
    """Read and check a scene file (YAML, or JSON by the ``.json`` suffix)."""
    path = Path(path)
    tree = read_document(path, 'scene')
    source = str(path)
    return scene_from_tree(tree, source, default_name=path.stem)


def default_scene() -> Scene:
    """The packaged ACRE farmstead (``config/scene_acre.yaml``)."""
    return load_scene(config_dir() / DEFAULT_SCENE_FILE)
