"""Zones of the tile in grid ENU metres -- polygons and circles, each with an
optional band of height -- as flat arrays that njit code tests points against.

The places where something happens to a vehicle (a GNSS denial zone, a
multipath zone, the zone whose entry starts an event) are zones.  A
:class:`Zones` table holds any number of them:

* ``kind[i]``: :data:`POLYGON` or :data:`CIRCLE`;
* a polygon's corners are ``vertices[start[i]:start[i] + count[i]]`` (k >= 3,
  either orientation, not closed by repeating the first corner; inside by the
  even-odd rule, so a simple polygon is inside where one expects);
* a circle's centre and radius are ``circle[i] = (x, y, r)``, inside where the
  distance to the centre is at most r;
* ``height[i] = (z_min, z_max)``: the band of heights it covers (-inf, +inf
  for every height).

:func:`make_zones` builds the table from plain Python values;
:func:`inside_zone` is the test of one point against zone ``i``, for kernels;
:func:`inside_zones` tests many points at once (numpy, for tools and tests).
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit

__all__ = ['CIRCLE', 'POLYGON', 'Zones', 'inside_zone', 'inside_zones', 'make_zones',
           'no_zones']

POLYGON = 0
CIRCLE = 1


class Zones(NamedTuple):
    """A table of zones (see the module docstring)."""

    kind: np.ndarray       # (n,) int64: POLYGON or CIRCLE
    start: np.ndarray      # (n,) int64: first corner of a polygon in ``vertices``
    count: np.ndarray      # (n,) int64: its number of corners (0 for a circle)
    vertices: np.ndarray   # (m, 2) float64: the corners of every polygon, one after another
    circle: np.ndarray     # (n, 3) float64: x, y, radius of a circle (NaN for a polygon)
    height: np.ndarray     # (n, 2) float64: z_min, z_max


def no_zones() -> Zones:
    """An empty table (the kernels' stand-in where a run has no zone)."""
    return make_zones([])


def make_zones(items) -> Zones:
    """The table of ``items``: each a mapping with ``polygon`` (corners [[x, y],
    ...], k >= 3) or ``center`` ([x, y]) and ``radius`` (> 0), and optionally
    ``z_min`` and ``z_max`` [m].  A ValueError names the first bad item."""
    kinds, starts, counts, corners, circles, heights = [], [], [], [], [], []
    for number, item in enumerate(items):
        z_min = float(item.get('z_min', -math.inf))
        z_max = float(item.get('z_max', math.inf))
        if math.isnan(z_min) or math.isnan(z_max) or not z_min < z_max:
            raise ValueError(f'zone {number}: z_min {z_min} must be below z_max {z_max}')
        heights.append((z_min, z_max))
        if 'polygon' in item:
            polygon = np.asarray(item['polygon'], dtype=np.float64)
            if polygon.ndim != 2 or polygon.shape[1] != 2 or polygon.shape[0] < 3:
                raise ValueError(f'zone {number}: a polygon needs at least 3 corners [x, y], '
                                 f'got shape {polygon.shape}')
            if not np.all(np.isfinite(polygon)):
                raise ValueError(f'zone {number}: polygon corners must be finite')
            kinds.append(POLYGON)
            starts.append(sum(len(c) for c in corners))
            counts.append(len(polygon))
            corners.append(polygon)
            circles.append((math.nan, math.nan, math.nan))
        else:
            x, y = (float(v) for v in item['center'])
            radius = float(item['radius'])
            if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(radius)
                    and radius > 0.0):
                raise ValueError(f'zone {number}: a circle needs a finite centre and a '
                                 f'radius > 0, got {item["center"]}, {item["radius"]}')
            kinds.append(CIRCLE)
            starts.append(0)
            counts.append(0)
            circles.append((x, y, radius))
    return Zones(np.array(kinds, dtype=np.int64), np.array(starts, dtype=np.int64),
                 np.array(counts, dtype=np.int64),
                 np.ascontiguousarray(np.concatenate(corners) if corners else np.zeros((0, 2))),
                 np.array(circles, dtype=np.float64).reshape(-1, 3),
                 np.array(heights, dtype=np.float64).reshape(-1, 2))


@njit(cache=True)
def _inside_polygon(vertices, start, count, x, y):
    """Even-odd test: a ray from (x, y) towards +x crosses the edges an odd
    number of times."""
    inside = False
    j = start + count - 1
    for i in range(start, start + count):
        xa, ya = vertices[j, 0], vertices[j, 1]
        xb, yb = vertices[i, 0], vertices[i, 1]
        if (ya > y) != (yb > y):
            x_cross = xa + (y - ya) * ((xb - xa) / (yb - ya))
            if x < x_cross:
                inside = not inside
        j = i
    return inside


@njit(cache=True)
def inside_zone(zones, i, x, y, z):
    """Whether the point (x, y, z) [m, grid ENU] lies in zone ``i``."""
    if not zones.height[i, 0] <= z <= zones.height[i, 1]:
        return False
    if zones.kind[i] == CIRCLE:
        dx = x - zones.circle[i, 0]
        dy = y - zones.circle[i, 1]
        return dx * dx + dy * dy <= zones.circle[i, 2] * zones.circle[i, 2]
    return _inside_polygon(zones.vertices, zones.start[i], zones.count[i], x, y)


@njit(cache=True)
def _inside_many(zones, i, points, out):
    for k in range(points.shape[0]):
        out[k] = inside_zone(zones, i, points[k, 0], points[k, 1], points[k, 2])


def inside_zones(zones: Zones, i: int, points) -> np.ndarray:
    """Whether each point of ``points`` ((n, 3) or (n, 2): height 0) lies in zone ``i``."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise ValueError(f'points must be (n, 2) or (n, 3), got shape {points.shape}')
    if points.shape[1] == 2:
        points = np.column_stack([points, np.zeros(len(points))])
    out = np.zeros(len(points), dtype=np.bool_)
    _inside_many(zones, int(i), np.ascontiguousarray(points), out)
    return out
