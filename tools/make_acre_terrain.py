#!/usr/bin/env python3
"""Write the packaged illustrative terrain of the ACRE farm, config/terrains/acre.yaml.

The ground of Purdue's Agronomy Center for Research and Education (Tippecanoe
County, Indiana) is a nearly level glacial till plain.  This script builds a
plausible height field for the tile from a few smooth shapes -- nothing here
is surveyed:

* a gentle plane rising to the north-east (a few decimetres per 100 m);
* long, low undulations of the till plain (+-0.3 m, wavelengths of 400 m);
* a shallow drainage swale (0.8 m deep, Gaussian cross-section of 15 m
  standard deviation: side slopes up to about 3.5 %) winding across the
  fields from the south-west to the north-east;
* two low swells (0.6 and 0.8 m) in the fields, the "swell and swale"
  relief of a till plain, so that field work tilts a tractor by 1 to 2 degrees;
* the farmstead graded level (the yard's pads), blended into the plain
  over 40 m, with the tile origin at height 0.

Roughness zones follow the land use: the level yard (class A), the concrete
floors of the garage and the machine shed (smooth), the farm lane to the
fields (class B), the fields (tilled: class D, no-till stubble: class C), a
grassed waterway along the swale (class C) and grass everywhere else
(class C).

Deterministic: the same script writes the same file.  Usage (from the
repository's root):

    .venv/bin/python tools/make_acre_terrain.py [--out config/terrains/acre.yaml]

This is a developer tool, not part of the acres_sim package.
"""

import argparse
import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / 'config' / 'terrains' / 'acre.yaml'

X0_M, Y0_M, SPACING_M = -300.0, -200.0, 10.0
NX, NY = 61, 61                       # x -300..300, y -200..400

# The yard graded level: this rectangle, blended into the plain over YARD_BLEND_M.
YARD = (-60.0, -85.0, 100.0, 45.0)    # x_min, y_min, x_max, y_max
YARD_BLEND_M = 40.0
# The swale: depth, standard deviation of its cross-section, and its centre line.
SWALE_DEPTH_M = 0.8
SWALE_SIGMA_M = 15.0
WATERWAY_HALF_WIDTH_M = 10.0
# The swells: (x, y, height, standard deviation) [m].
SWELLS = ((-20.0, 190.0, 0.8, 22.0), (75.0, 100.0, 0.6, 20.0))
EDGE_M = 10.0                          # zones reach this far beyond the grid


def swale_centre_y(x):
    """North of the swale's centre line at east ``x`` [m]."""
    return 130.0 + 0.3 * x + 12.0 * np.sin(2.0 * np.pi * x / 400.0)


def _swale_slope(x):
    return 0.3 + 12.0 * 2.0 * np.pi / 400.0 * np.cos(2.0 * np.pi * x / 400.0)


def natural_height(x, y):
    """The plain, its undulations, the swale and the swells [m] (not yet levelled)."""
    plane = 0.0008 * x + 0.0010 * y
    undulation = 0.3 * np.sin(2.0 * np.pi * x / 420.0 + 0.7) * np.cos(2.0 * np.pi * y / 380.0
                                                                        + 0.3)
    across = (y - swale_centre_y(x)) / np.sqrt(1.0 + _swale_slope(x) ** 2)   # distance [m]
    swale = -SWALE_DEPTH_M * np.exp(-0.5 * (across / SWALE_SIGMA_M) ** 2)
    swells = sum(h * np.exp(-0.5 * ((x - cx) ** 2 + (y - cy) ** 2) / s ** 2)
                 for cx, cy, h, s in SWELLS)
    return plane + undulation + swale + swells


def yard_weight(x, y):
    """1 on the graded yard, falling smoothly (cos^2) to 0 over YARD_BLEND_M."""
    x0, y0, x1, y1 = YARD
    dx = np.maximum(np.maximum(x0 - x, x - x1), 0.0)
    dy = np.maximum(np.maximum(y0 - y, y - y1), 0.0)
    d = np.minimum(np.hypot(dx, dy) / YARD_BLEND_M, 1.0)
    return np.cos(0.5 * np.pi * d) ** 2


def heights():
    """The (NY, NX) grid, rows south to north, rounded to the millimetre."""
    x = X0_M + SPACING_M * np.arange(NX)
    y = Y0_M + SPACING_M * np.arange(NY)
    xx, yy = np.meshgrid(x, y)
    pad = natural_height(0.0, 0.0)
    w = yard_weight(xx, yy)
    h = (1.0 - w) * natural_height(xx, yy) + w * pad - pad
    return np.round(h, 3) + 0.0          # + 0.0: no -0.0 in the file


def _box(x0, y0, x1, y1):
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def waterway_polygon():
    """The grassed waterway: the swale's centre line +- WATERWAY_HALF_WIDTH_M."""
    x = np.arange(X0_M - EDGE_M, X0_M + SPACING_M * (NX - 1) + EDGE_M + 1.0, 20.0)
    y = swale_centre_y(x)
    half = WATERWAY_HALF_WIDTH_M * np.sqrt(1.0 + _swale_slope(x) ** 2)
    south = [[float(a), round(float(b - d), 1)] for a, b, d in zip(x, y, half)]
    north = [[float(a), round(float(b + d), 1)] for a, b, d in zip(x, y, half)]
    return south + north[::-1]


def zones():
    """(name, class, polygon) of the roughness zones, later ones over earlier ones."""
    west, east = X0_M - EDGE_M, X0_M + SPACING_M * (NX - 1) + EDGE_M
    north = Y0_M + SPACING_M * (NY - 1) + EDGE_M
    return [
        ('west field (no-till stubble)', 'C', _box(west, 90.0, 0.0, north)),
        ('east field (chisel-ploughed)', 'D', _box(0.0, 90.0, east, north)),
        ('grassed waterway', 'C', waterway_polygon()),
        ('farm lane', 'B', [[80.0, -45.0], [120.0, -45.0], [120.0, 94.0], [100.0, 94.0],
                            [100.0, -10.0], [80.0, -10.0]]),
        ('farmstead yard', 'A', _box(*YARD)),
        ('garage floor and apron', 'smooth', _box(-12.0, -10.0, 24.0, 10.0)),
        ('machine shed floor', 'smooth', _box(24.0, -30.0, 64.0, -6.0)),
    ]


def _number(v):
    text = f'{v:.3f}'.rstrip('0')
    return text + '0' if text.endswith('.') else text


def _point(p):
    return f'[{_number(p[0])}, {_number(p[1])}]'


def slope_stats(h):
    """Relief [m] and the largest slope between neighbouring nodes [%] in the fields."""
    gy, gx = np.gradient(h, SPACING_M)
    y = Y0_M + SPACING_M * np.arange(NY)
    fields = y >= 90.0
    slope = np.hypot(gx, gy)[fields]
    return float(h.max() - h.min()), 100.0 * float(slope.max())


HEADER = """\
# The ground of the ACRE farm (Purdue's Agronomy Center for Research and
# Education, Tippecanoe County, Indiana): a height field with roughness zones.
#
# ILLUSTRATIVE, NOT SURVEYED: a plausible nearly level glacial till plain made
# by tools/make_acre_terrain.py (do not edit by hand; run the script), so that
# the vehicles ride on gentle slopes and rough fields. Do not use it to judge
# the real ground at ACRE.
#
# The shape: a gentle plane rising to the north-east, long low undulations, a
# shallow drainage swale winding across the fields (0.8 m deep, side slopes up
# to about {swale_pct:.1f} %), two low swells in the fields and the farmstead
# graded level, with the tile origin at height 0. Relief over the tile
# {relief:.2f} m; the steepest slope between nodes in the fields {slope:.2f} %.
#
# Roughness (ISO 8608:2016 classes; a class gives the profile's displacement
# spectrum G_d(n0) at n0 = 0.1 cycles/m, waviness 2): concrete floors smooth, the
# yard A, the farm lane B, the fields C (no-till stubble) and D (tilled), a
# grassed waterway along the swale C, grass elsewhere C. Farm fields and field
# tracks are commonly put in classes C to D; a measured field surface, e.g., fell
# in class D (a paddy field measured by rod and level, Hue University Journal of
# Science: Agriculture and Rural Development). The roughness seed is the
# run's (none is set here).
#
# Units and frame: grid ENU metres of the tile; heights in metres above the tile
# origin; rows of heights_m from south (y0_m) to north, each from west (x0_m) to
# east, spacing_m apart. See docs/terrain.md.
"""


def document():
    h = heights()
    relief, slope = slope_stats(h)
    swale_pct = 100.0 * SWALE_DEPTH_M / SWALE_SIGMA_M * math.exp(-0.5)
    lines = [HEADER.format(relief=relief, slope=slope, swale_pct=swale_pct).rstrip('\n'),
             'terrain:',
             '  name: acre',
             '  description: Illustrative ground of the ACRE farm (not surveyed), a nearly',
             '    level till plain with a drainage swale, swells and rough fields.',
             '  grid:',
             f'    x0_m: {_number(X0_M)}',
             f'    y0_m: {_number(Y0_M)}',
             f'    spacing_m: {_number(SPACING_M)}',
             f'    heights_m:                  # {NY} rows of {NX}, south to north']
    for j, row in enumerate(h):
        lines.append(f'      - [{", ".join(_number(v) for v in row)}]'
                     f'   # y = {_number(Y0_M + SPACING_M * j)}')
    lines += ['  roughness:',
              '    default_class: C            # grass round the farmstead and the fields',
              '    blend_m: 5.0',
              '    zones:                      # later zones lie over earlier ones']
    for name, kind, polygon in zones():
        lines.append(f'      - name: {name}')
        lines.append(f'        class: {kind}')
        lines.append(f'        polygon: [{", ".join(_point(p) for p in polygon)}]')
    return '\n'.join(lines) + '\n'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', type=Path, default=OUT, help='default: %(default)s')
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(document())
    relief, slope = slope_stats(heights())
    print(f'wrote {args.out}: relief {relief:.2f} m, steepest field slope {slope:.2f} %')


if __name__ == '__main__':
    main()
