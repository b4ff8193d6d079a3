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

from pathlib import Path


from acres_sim.config.loader import config_dir, read_document
from acres_sim.config.schema import NON_BLANK, Key
from acres_sim.config.validate import ConfigError, check, check_keys, missing, value_error
from acres_sim.core.scene import Scene, make_scene

__all__ = ['DEFAULT_SCENE_FILE', 'SCENE_KEYS', 'default_scene', 'load_scene', 'scene_from_tree']

DEFAULT_SCENE_FILE = 'scene_acre.yaml'
_TOP_KEYS = ('name', 'buildings', 'grain_bins', 'tree_crowns')
_ITEM_KEYS = {
    'buildings': ('name', 'min', 'max'),
    'grain_bins': ('name', 'center', 'radius', 'bottom', 'top'),
    'tree_crowns': ('name', 'center', 'radius'),
}
_SINGULAR = {'buildings': 'building', 'grain_bins': 'grain bin', 'tree_crowns': 'tree crown'}
_LIMIT = 1e7   # |coordinate| [m]; far beyond any tile, keeps the numbers sane

# The values of a scene file: a name, a coordinate (each component of min,
# max, center; bottom, top) or a radius.
SCENE_KEYS = {k.name: k for k in (
    Key('name', 'str', None, 'Name of the scene or of an item (default: the file stem, or '
        'the item\'s place, e.g. buildings[0]); unique in the scene.', pattern=NON_BLANK,
        pattern_words='a non-empty string'),
    Key('coordinate', 'float', None, 'A coordinate in grid ENU.', 'm', low=-_LIMIT,
        high=_LIMIT),
    Key('radius', 'float', None, 'Radius of a grain bin or a tree crown.', 'm', low=0.0,
        low_open=True, high=_LIMIT),
)}
_NAME, _COORDINATE, _RADIUS = SCENE_KEYS.values()


def _vector(item, value, n, source):
    """A list of ``n`` coordinates, each checked as ``item[i]``."""
    if not isinstance(value, (list, tuple)) or len(value) != n:
        raise value_error(item, value, f'expected a list of {n} numbers',
                          f'[{", ".join("xyz"[:n])}] in metres', source)
    return [check(_COORDINATE, v, source, f'{item}[{i}]') for i, v in enumerate(value)]


def _field(raw, where, name, source, n=None):
    """The required field ``name`` of the item at ``where``: a radius, a
    coordinate, or (``n``) a list of ``n`` coordinates."""
    spec = _RADIUS if name == 'radius' else _COORDINATE
    item = f'{where}.{name}'
    if name not in raw:
        raise missing(spec, source, item)
    if n is not None:
        return _vector(item, raw[name], n, source)
    return check(spec, raw[name], source, item)


def scene_from_tree(tree, source='<scene>', default_name='scene') -> Scene:
    """A checked :class:`Scene` from the parsed content of a scene file."""
    if not isinstance(tree, dict) or 'scene' not in tree:
        raise ConfigError(f'{source}: expected a mapping with the key "scene" at the top')
    check_keys(tree, ('scene',), '', source)
    body = tree['scene']
    if body is None:
        body = {}
    check_keys(body, _TOP_KEYS, 'scene', source)
    scene_name = check(_NAME, body['name'], source, 'scene.name') if 'name' in body \
        else default_name

    rows = {kind: [] for kind in _ITEM_KEYS}
    names = {kind: [] for kind in _ITEM_KEYS}
    seen = {}
    for kind, keys in _ITEM_KEYS.items():
        items = body.get(kind)
        if items is None:
            continue
        if not isinstance(items, list):
            raise value_error(f'scene.{kind}', items, 'expected a list',
                              f'a list of {_SINGULAR[kind]} mappings (or nothing)', source)
        for i, raw in enumerate(items):
            where = f'scene.{kind}[{i}]'
            check_keys(raw, keys, where, source)
            name = check(_NAME, raw['name'], source, f'{where}.name') if 'name' in raw \
                else f'{kind}[{i}]'
            if name in seen:
                raise value_error(f'{where}.name', name,
                                  f'the name is already used by {seen[name]}',
                                  'a name unique in the scene', source)
            seen[name] = where
            rows[kind].append(_item_row(kind, where, raw, source))
            names[kind].append(name)
    return make_scene(scene_name, rows['buildings'], rows['grain_bins'], rows['tree_crowns'],
                      names['buildings'], names['grain_bins'], names['tree_crowns'])


def _item_row(kind, where, raw, source):
    if kind == 'buildings':
        lo = _field(raw, where, 'min', source, 3)
        hi = _field(raw, where, 'max', source, 3)
        for axis in range(3):
            if not lo[axis] < hi[axis]:
                raise value_error(f'{where}.max[{axis}]', raw['max'][axis],
                                  f'not above min[{axis}] = {lo[axis]:g}',
                                  'min < max on every axis', source)
        return lo + hi
    if kind == 'grain_bins':
        cx, cy = _field(raw, where, 'center', source, 2)
        radius = _field(raw, where, 'radius', source)
        bottom = _field(raw, where, 'bottom', source)
        top = _field(raw, where, 'top', source)
        if not bottom < top:
            raise value_error(f'{where}.top', raw['top'], f'not above bottom = {bottom:g}',
                              'bottom < top', source)
        return [cx, cy, radius, bottom, top]
    centre = _field(raw, where, 'center', source, 3)
    return centre + [_field(raw, where, 'radius', source)]


def load_scene(path) -> Scene:
    """Read and check a scene file (YAML, or JSON by the ``.json`` suffix)."""
    path = Path(path)
    tree = read_document(path, 'scene')
    source = str(path)
    return scene_from_tree(tree, source, default_name=path.stem)


def default_scene() -> Scene:
    """The packaged ACRE farmstead (``config/scene_acre.yaml``)."""
    return load_scene(config_dir() / DEFAULT_SCENE_FILE)
