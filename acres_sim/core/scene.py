"""Obstacles of the sky view as flat float64 arrays (spec: GNSS Receiver, "Sky
Obstruction").

Three kinds of solid, all in grid ENU metres of the tile (``z`` up from the
tile origin's height):

* **box** -- a building: an axis-aligned box, one row
  ``[x_min, y_min, z_min, x_max, y_max, z_max]`` (:data:`BOX_X0` ...);
* **cylinder** -- a grain bin: a vertical finite cylinder, one row
  ``[x, y, radius, z_bottom, z_top]`` (:data:`CYL_X` ...);
* **sphere** -- a tree crown: one row ``[x, y, z, radius]`` (:data:`SPH_X` ...).

Boxes and cylinders are solid (they block, and reflect for the multipath
index); spheres are foliage.

Authoring rules that follow from how the game collects its obstacles (they
apply when a scene file is written, not in the model):

* A building's box is the axis-aligned bounding box of the building in grid
  axes.  A building that is turned against the grid therefore gets a box that
  is larger than its walls -- draw the bounds, not the walls.
* A grain bin's cylinder takes the smaller of the two horizontal half extents of
  its bounding box as radius (a bin that is not round in plan is cut down, not
  blown up).
* A tree crown is a sphere standing in for the crown proxy the LiDAR uses.

:class:`Scene` keeps the arrays for the kernels and the names beside them (the
names never enter numba code).  :func:`scene_digest` is a SHA-256 over a
canonical text of the content, for ``episode.json``: the same obstacles in the
same order give the same digest, whatever file they came from.
"""

import hashlib
import json
from typing import NamedTuple, Sequence, Tuple

import numpy as np

__all__ = [
    'BOX_X0', 'BOX_X1', 'BOX_Y0', 'BOX_Y1', 'BOX_Z0', 'BOX_Z1', 'CYL_R', 'CYL_X', 'CYL_Y',
    'CYL_Z0', 'CYL_Z1', 'SPH_R', 'SPH_X', 'SPH_Y', 'SPH_Z', 'Scene', 'empty_scene',
    'make_scene', 'scene_digest',
]

# Box row: min corner then max corner.
BOX_X0, BOX_Y0, BOX_Z0, BOX_X1, BOX_Y1, BOX_Z1 = range(6)
# Cylinder row: axis position, radius, bottom, top.
CYL_X, CYL_Y, CYL_R, CYL_Z0, CYL_Z1 = range(5)
# Sphere row: centre, radius.
SPH_X, SPH_Y, SPH_Z, SPH_R = range(4)


class Scene(NamedTuple):
    """The obstacles of one tile.  Pass ``boxes``, ``cylinders`` and ``spheres``
    to the kernels; the ``*_names`` tuples line up with their rows."""

    name: str
    boxes: np.ndarray        # float64 (n_boxes, 6)
    cylinders: np.ndarray    # float64 (n_cylinders, 5)
    spheres: np.ndarray      # float64 (n_spheres, 4)
    box_names: Tuple[str, ...] = ()
    cylinder_names: Tuple[str, ...] = ()
    sphere_names: Tuple[str, ...] = ()

    @property
    def n_obstacles(self) -> int:
        return self.boxes.shape[0] + self.cylinders.shape[0] + self.spheres.shape[0]

    @property
    def digest(self) -> str:
        """SHA-256 (hex) of the canonical content; see :func:`scene_digest`."""
        return scene_digest(self)


def _rows(values, width, what) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64).reshape(-1, width) if len(values) else \
        np.zeros((0, width), dtype=np.float64)
    if arr.shape[1] != width:
        raise ValueError(f'{what}: rows of {width} numbers expected')
    return np.ascontiguousarray(arr)


def make_scene(name: str = 'scene', boxes: Sequence = (), cylinders: Sequence = (),
               spheres: Sequence = (), box_names=None, cylinder_names=None,
               sphere_names=None) -> Scene:
    """A :class:`Scene` from row sequences (no checks beyond the shapes; the
    config loader validates user files).  Missing names become ``box0``, ...."""
    b = _rows(boxes, 6, 'boxes')
    c = _rows(cylinders, 5, 'cylinders')
    s = _rows(spheres, 4, 'spheres')

    def names(given, n, prefix):
        out = tuple(given) if given is not None else tuple(f'{prefix}{i}' for i in range(n))
        if len(out) != n:
            raise ValueError(f'{len(out)} names for {n} {prefix} rows')
        return out

    return Scene(name, b, c, s, names(box_names, b.shape[0], 'box'),
                 names(cylinder_names, c.shape[0], 'cylinder'),
                 names(sphere_names, s.shape[0], 'sphere'))


def empty_scene(name: str = 'open_sky') -> Scene:
    """A scene without obstacles (open sky)."""
    return make_scene(name)


def _canonical(scene: Scene) -> str:
    """Canonical JSON of the content: fixed key order, floats as Python's
    shortest round-trip text, rows in scene order."""
    body = {
        'name': scene.name,
        'buildings': [{'name': n, 'min': [float(v) for v in r[:3]],
                       'max': [float(v) for v in r[3:]]}
                      for n, r in zip(scene.box_names, scene.boxes)],
        'grain_bins': [{'name': n, 'center': [float(r[CYL_X]), float(r[CYL_Y])],
                        'radius': float(r[CYL_R]), 'bottom': float(r[CYL_Z0]),
                        'top': float(r[CYL_Z1])}
                       for n, r in zip(scene.cylinder_names, scene.cylinders)],
        'tree_crowns': [{'name': n, 'center': [float(v) for v in r[:3]],
                         'radius': float(r[SPH_R])}
                        for n, r in zip(scene.sphere_names, scene.spheres)],
    }
    return json.dumps(body, sort_keys=True, separators=(',', ':'), ensure_ascii=True,
                      allow_nan=False)


def scene_digest(scene: Scene) -> str:
    """SHA-256 (hex) of the scene's canonical content (names and numbers)."""
    return hashlib.sha256(_canonical(scene).encode('ascii')).hexdigest()
