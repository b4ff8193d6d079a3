"""The ground under the wheels: a height field of the tile with a surface
roughness on top, sampled where each tyre touches it.

A :class:`TerrainField` is plain arrays for the kernels:

* ``heights_m``: a grid of heights [m] above the tile origin, node ``[j, i]`` at
  grid ENU ``(x0_m + i * spacing_m, y0_m + j * spacing_m)``, interpolated
  bilinearly; outside the grid the nearest edge's height (the gradient across
  the edge is zero there);
* ``roughness_scale``: one factor per node of the same grid (bilinear too), the
  amplitude of the surface roughness there relative to the unit profile
  (0: a smooth surface such as a road or the yard);
* ``tile_m``: the unit roughness profile, a periodic square of heights [m] at
  ``tile_spacing_m`` (bilinear, wrapped), zero mean.

The ground height at a point is ``height(x, y) + scale(x, y) * tile(x, y)``.
:func:`ground_height` returns it with its two slopes, which the tyre dampers
need (the rate of the ground under a moving wheel is ``grad . v``).
:func:`flat_field` is the stand-in the kernels take when the run has no terrain
(the flat plane of :mod:`acres_sim.core.physics`); it is never sampled then.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit

__all__ = ['TerrainField', 'flat_field', 'ground_height']


class TerrainField(NamedTuple):
    """A height field with its roughness (see the module docstring)."""

    x0_m: float
    y0_m: float
    spacing_m: float
    heights_m: np.ndarray         # (ny, nx) float64
    roughness_scale: np.ndarray   # (ny, nx) float64
    tile_m: np.ndarray            # (m, m) float64, periodic
    tile_spacing_m: float


def flat_field() -> TerrainField:
    """The stand-in field of a run without terrain (one node at zero, no roughness)."""
    zero = np.zeros((1, 1))
    return TerrainField(0.0, 0.0, 1.0, zero, zero.copy(), zero.copy(), 1.0)


@njit(cache=True)
def _cell(u, n):
    """Cell index and fraction of grid coordinate ``u`` on ``n`` nodes, clamped
    to the grid (fraction 0 and no slope outside); returns (i, f, inside)."""
    if n < 2:
        return 0, 0.0, False
    if u <= 0.0:
        return 0, 0.0, False
    if u >= n - 1:
        return n - 2, 1.0, False
    i = int(math.floor(u))
    return i, u - i, True


@njit(cache=True)
def _bilinear(grid, x, y, x0, y0, spacing):
    """Bilinear value of ``grid`` at (x, y) and its x and y slopes [per m]."""
    ny, nx = grid.shape
    i, fx, in_x = _cell((x - x0) / spacing, nx)
    j, fy, in_y = _cell((y - y0) / spacing, ny)
    if nx < 2 or ny < 2:
        return grid[0, 0], 0.0, 0.0
    z00, z10 = grid[j, i], grid[j, i + 1]
    z01, z11 = grid[j + 1, i], grid[j + 1, i + 1]
    z = (z00 * (1.0 - fx) + z10 * fx) * (1.0 - fy) + (z01 * (1.0 - fx) + z11 * fx) * fy
    dzdx = ((z10 - z00) * (1.0 - fy) + (z11 - z01) * fy) / spacing if in_x else 0.0
    dzdy = ((z01 - z00) * (1.0 - fx) + (z11 - z10) * fx) / spacing if in_y else 0.0
    return z, dzdx, dzdy


@njit(cache=True)
def _periodic(tile, x, y, spacing):
    """Bilinear value of the periodic ``tile`` at (x, y) and its slopes."""
    m = tile.shape[0]
    u = x / spacing
    v = y / spacing
    fu = math.floor(u)
    fv = math.floor(v)
    i = int(fu) % m
    j = int(fv) % m
    fx = u - fu
    fy = v - fv
    i1 = (i + 1) % m
    j1 = (j + 1) % m
    z00, z10, z01, z11 = tile[j, i], tile[j, i1], tile[j1, i], tile[j1, i1]
    z = (z00 * (1.0 - fx) + z10 * fx) * (1.0 - fy) + (z01 * (1.0 - fx) + z11 * fx) * fy
    dzdx = ((z10 - z00) * (1.0 - fy) + (z11 - z01) * fy) / spacing
    dzdy = ((z01 - z00) * (1.0 - fx) + (z11 - z10) * fx) / spacing
    return z, dzdx, dzdy


@njit(cache=True)
def ground_height(field, x, y, roughness_on):
    """Ground height [m] at grid ENU (x, y) and its slopes (dz/dx, dz/dy): the
    height field plus, when ``roughness_on``, the scaled roughness profile."""
    z, gx, gy = _bilinear(field.heights_m, x, y, field.x0_m, field.y0_m, field.spacing_m)
    if roughness_on:
        s, sx, sy = _bilinear(field.roughness_scale, x, y, field.x0_m, field.y0_m,
                              field.spacing_m)
        if s != 0.0 or sx != 0.0 or sy != 0.0:
            r, rx, ry = _periodic(field.tile_m, x, y, field.tile_spacing_m)
            z += s * r
            gx += s * rx + sx * r
            gy += s * ry + sy * r
    return z, gx, gy
