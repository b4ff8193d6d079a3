"""The sky view of one receiver epoch (spec: GNSS Receiver, "Sky Obstruction",
"Dilution of Precision", "Multipath Index").

Given the unit lines of sight of all satellites (from
:func:`acres_sim.core.gnss.constellation.satellite_los_enu`), the antenna
position and the obstacles of a :class:`acres_sim.core.scene.Scene`, one call
of :func:`sky_epoch` does the whole sky part of an epoch:

1. **prefilter** -- an obstacle is kept only when its top, raised by the near
   margin, is above the antenna and appears at or above the elevation mask.
   The horizontal distance used for that angle is the distance from the
   antenna to the *nearest point of the obstacle's footprint* (box rectangle,
   cylinder disc, crown disc; zero when the antenna stands over it).  This is
   our reading of "distance to the obstacle": it makes the angle the largest
   one the obstacle's top can take, so the filter never drops an obstacle that
   could block or shade a satellite above the mask.
2. **classes** -- every satellite of a system that is on and at or above the
   mask is traced from the antenna along its line of sight (``t >= 0``):

   * blocked: the ray meets a box or a cylinder, or its chord through one
     single tree crown is at least ``foliage_block_path_m``;
   * foliage: otherwise, the ray passes through a crown on a shorter chord;
   * near: otherwise, the ray meets a box or cylinder grown by
     ``near_margin_m`` on every face (boxes: all six faces; cylinders: radius,
     top and bottom);
   * clear: none of these.

   Blocked satellites are not used; the others are, so
   ``N_u = N_c + N_n + N_f``.  An antenna inside a box or cylinder blocks
   every ray (the ray starts inside the solid).
3. **DOP** -- from the normal matrix of the rows ``[-l_e, -l_n, -l_u, 1]``:
   ``H, V, P`` of the used satellites and ``H_o, V_o`` of all satellites above
   the mask (systems switched off are not counted: the receiver does not track
   them).  99.99 with fewer than four satellites or a singular matrix.
4. **multipath** -- the reflector index ``rho`` (every box and cylinder whose
   centre is horizontally closer than ``reflector_range_m`` adds the azimuth
   share it covers, weighted by how high it rises, up to 30 deg, and by its
   closeness), then ``m`` from the shares of near and foliage satellites plus
   half of ``rho``.

Speed: the receiver calls :func:`sky_epoch` once per epoch.  Before any ray
test, a kept obstacle is skipped for a satellite when the satellite is higher
than any point of the (grown) obstacle can appear, or when its azimuth lies
outside the wedge the obstacle's bounding circle covers.  Both checks are
conservative (a small tolerance on the safe side), so the classes are those
of testing every kept obstacle.

Layouts.  ``out`` is float64 of length :data:`SKY_SIZE` indexed by the
``SKY_*`` constants (counts are whole numbers stored as floats).
``out_class`` is int64, one entry per satellite: :data:`SAT_OFF`,
:data:`SAT_BELOW_MASK`, :data:`SAT_CLEAR`, :data:`SAT_NEAR`,
:data:`SAT_FOLIAGE`, :data:`SAT_BLOCKED`.  Lines of sight must be unit
vectors (the chord is a length along them).  Grid ENU metres, radians.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit
from acres_sim.core.scene import (BOX_X0, BOX_X1, BOX_Y0, BOX_Y1, BOX_Z0, BOX_Z1, CYL_R,
                                  CYL_X, CYL_Y, CYL_Z0, CYL_Z1, SPH_R, SPH_X, SPH_Y, SPH_Z)

__all__ = [
    'DOP_INVALID', 'DOP_PIVOT_TOL', 'KIND_BOX', 'KIND_CYLINDER', 'KIND_SPHERE', 'SAT_BELOW_MASK',
    'SAT_BLOCKED', 'SAT_CLEAR', 'SAT_FOLIAGE', 'SAT_NEAR', 'SAT_OFF', 'SKY_HDOP', 'SKY_HDOP_ALL',
    'SKY_MULTIPATH', 'SKY_N_ABOVE_MASK', 'SKY_N_BLOCKED', 'SKY_N_CLEAR', 'SKY_N_FOLIAGE',
    'SKY_N_KEPT', 'SKY_N_NEAR', 'SKY_N_USED', 'SKY_PDOP', 'SKY_REFLECTOR', 'SKY_SIZE',
    'SKY_VDOP', 'SKY_VDOP_ALL', 'SkyParams', 'SkyView', 'box_footprint_distance',
    'circle_footprint_distance', 'dop', 'dop_from_normal', 'make_sky_params', 'multipath_index',
    'prefilter', 'ray_box', 'ray_cylinder', 'reflector_index', 'sky_epoch', 'sky_view',
    'sphere_chord', 'system_mask',
]

# Satellite classes (out_class).
SAT_OFF = -2          # its system is switched off
SAT_BELOW_MASK = -1   # elevation below the mask
SAT_CLEAR = 0
SAT_NEAR = 1
SAT_FOLIAGE = 2
SAT_BLOCKED = 3

# Entries of the float64 result array.
SKY_N_CLEAR = 0       # N_c
SKY_N_NEAR = 1        # N_n
SKY_N_FOLIAGE = 2     # N_f
SKY_N_USED = 3        # N_u = N_c + N_n + N_f
SKY_N_BLOCKED = 4     # above the mask, system on, blocked
SKY_N_ABOVE_MASK = 5  # above the mask, system on
SKY_HDOP = 6          # H   (used satellites)
SKY_VDOP = 7          # V
SKY_PDOP = 8          # P
SKY_HDOP_ALL = 9      # H_o (all above the mask)
SKY_VDOP_ALL = 10     # V_o
SKY_REFLECTOR = 11    # rho
SKY_MULTIPATH = 12    # m
SKY_N_KEPT = 13       # obstacles kept by the prefilter (diagnostic)
SKY_SIZE = 14

# Obstacle kinds in the prefilter's flag order: all boxes, then cylinders, then spheres.
KIND_BOX, KIND_CYLINDER, KIND_SPHERE = 0, 1, 2

DOP_INVALID = 99.99
DOP_PIVOT_TOL = 1e-12   # singular: a Cholesky pivot below this share of the largest diagonal
REFLECTOR_FULL_ELEVATION_RAD = math.radians(30.0)  # height weight reaches 1 here
_CULL_TOL = 1e-9        # slack of the skip checks, always on the side of testing


class SkyParams(NamedTuple):
    """Sky-view parameters (spec: GNSS Receiver parameter table)."""

    elevation_mask_rad: float    # gnss.elevation_mask_deg, default 10 deg
    near_margin_m: float         # gnss.obstruction.near_margin_m, default 1.5 m
    foliage_block_path_m: float  # gnss.obstruction.foliage_block_path_m, default 8 m
    reflector_range_m: float     # gnss.obstruction.reflector_range_m, default 60 m


def make_sky_params(elevation_mask_deg=10.0, near_margin_m=1.5, foliage_block_path_m=8.0,
                    reflector_range_m=60.0) -> SkyParams:
    """:class:`SkyParams` with the mask in degrees; the defaults are the spec's."""
    return SkyParams(math.radians(float(elevation_mask_deg)), float(near_margin_m),
                     float(foliage_block_path_m), float(reflector_range_m))


def system_mask(gps=True, galileo=True, glonass=True) -> np.ndarray:
    """The on/off array of the systems, indexed by the system codes."""
    return np.array([bool(gps), bool(galileo), bool(glonass)], dtype=np.bool_)


# ---------------------------------------------------------------------------
# Ray tests (spec: RayBox, RayCylinder, SphereChord)
# ---------------------------------------------------------------------------

@njit(cache=True)
def _clip_slab(o, d, lo, hi, t_near, t_far):
    """Narrow the ray interval [t_near, t_far] to where ``o + t d`` lies in
    [lo, hi] (one slab of the slab test); empty when t_near > t_far.  A ray
    parallel to the slab keeps its interval from inside it and none from outside."""
    if d == 0.0:
        if o < lo or o > hi:
            return 1.0, 0.0
        return t_near, t_far
    ta = (lo - o) / d
    tb = (hi - o) / d
    if ta > tb:
        ta, tb = tb, ta
    return max(t_near, ta), min(t_far, tb)


@njit(cache=True)
def ray_box(ox, oy, oz, dx, dy, dz, x0, y0, z0, x1, y1, z1):
    """Does the ray ``o + t d`` (``t >= 0``) meet the closed box [x0, x1] x [y0, y1] x [z0, z1]?

    Slab test: intersect the parameter intervals of the three slabs with
    ``[0, inf)``.  A ray parallel to a slab meets it only from inside it.
    Touching an edge or face counts as meeting.
    """
    t_near, t_far = _clip_slab(ox, dx, x0, x1, 0.0, math.inf)
    if t_near > t_far:
        return False
    t_near, t_far = _clip_slab(oy, dy, y0, y1, t_near, t_far)
    if t_near > t_far:
        return False
    t_near, t_far = _clip_slab(oz, dz, z0, z1, t_near, t_far)
    return t_near <= t_far


@njit(cache=True)
def ray_cylinder(ox, oy, oz, dx, dy, dz, cx, cy, r, z0, z1):
    """Does the ray ``o + t d`` (``t >= 0``) meet the closed vertical cylinder
    of axis (cx, cy), radius ``r``, from height ``z0`` to ``z1`` (caps included)?

    The ray's interval inside the infinite cylinder (a quadratic in ``t``) is
    intersected with its interval between the two cap planes and ``[0, inf)``.
    """
    t_near, t_far = _clip_slab(oz, dz, z0, z1, 0.0, math.inf)
    if t_near > t_far:
        return False
    px = ox - cx
    py = oy - cy
    c = px * px + py * py - r * r
    a = dx * dx + dy * dy
    if a == 0.0:                  # vertical ray: inside the disc or not at all
        return c <= 0.0
    b = px * dx + py * dy
    disc = b * b - a * c
    if disc < 0.0:
        return False
    s = math.sqrt(disc)
    t1 = (-b - s) / a
    t2 = (-b + s) / a
    return max(t_near, t1) <= min(t_far, t2)


@njit(cache=True)
def sphere_chord(ox, oy, oz, dx, dy, dz, cx, cy, cz, r):
    """Length [m] of the ray ``o + t d`` (``t >= 0``, ``d`` a unit vector) inside
    the sphere of centre (cx, cy, cz) and radius ``r``; 0 for a miss or a tangent."""
    px = ox - cx
    py = oy - cy
    pz = oz - cz
    b = px * dx + py * dy + pz * dz
    c = px * px + py * py + pz * pz - r * r
    disc = b * b - c
    if disc <= 0.0:
        return 0.0
    s = math.sqrt(disc)
    t2 = -b + s
    if t2 <= 0.0:
        return 0.0
    return t2 - max(-b - s, 0.0)


# ---------------------------------------------------------------------------
# Prefilter
# ---------------------------------------------------------------------------

@njit(cache=True)
def box_footprint_distance(e, n, x0, y0, x1, y1):
    """Horizontal distance [m] from (e, n) to the nearest point of the rectangle."""
    ddx = max(x0 - e, 0.0, e - x1)
    ddy = max(y0 - n, 0.0, n - y1)
    return math.sqrt(ddx * ddx + ddy * ddy)


@njit(cache=True)
def circle_footprint_distance(e, n, cx, cy, r):
    """Horizontal distance [m] from (e, n) to the nearest point of the disc."""
    return max(math.hypot(e - cx, n - cy) - r, 0.0)


@njit(cache=True)
def _kept(z_top, d_near, z_a, p):
    h = z_top + p.near_margin_m - z_a
    return h > 0.0 and math.atan2(h, d_near) >= p.elevation_mask_rad


@njit(cache=True)
def prefilter(e_a, n_a, z_a, boxes, cylinders, spheres, p, keep):
    """Mark in ``keep`` (bool, boxes then cylinders then spheres) the obstacles
    that can come above the mask from the antenna at (e_a, n_a, z_a); returns
    how many are kept.  See the module docstring for the distance used."""
    nb = boxes.shape[0]
    nc = cylinders.shape[0]
    count = 0
    for j in range(nb):
        d = box_footprint_distance(e_a, n_a, boxes[j, BOX_X0], boxes[j, BOX_Y0],
                                   boxes[j, BOX_X1], boxes[j, BOX_Y1])
        keep[j] = _kept(boxes[j, BOX_Z1], d, z_a, p)
        count += keep[j]
    for j in range(nc):
        d = circle_footprint_distance(e_a, n_a, cylinders[j, CYL_X], cylinders[j, CYL_Y],
                                      cylinders[j, CYL_R])
        keep[nb + j] = _kept(cylinders[j, CYL_Z1], d, z_a, p)
        count += keep[nb + j]
    for j in range(spheres.shape[0]):
        d = circle_footprint_distance(e_a, n_a, spheres[j, SPH_X], spheres[j, SPH_Y],
                                      spheres[j, SPH_R])
        keep[nb + nc + j] = _kept(spheres[j, SPH_Z] + spheres[j, SPH_R], d, z_a, p)
        count += keep[nb + nc + j]
    return count


# ---------------------------------------------------------------------------
# DOP
# ---------------------------------------------------------------------------

@njit(cache=True)
def _add_row(A, le, ln, lu):
    g0 = -le
    g1 = -ln
    g2 = -lu
    A[0, 0] += g0 * g0
    A[0, 1] += g0 * g1
    A[0, 2] += g0 * g2
    A[0, 3] += g0
    A[1, 1] += g1 * g1
    A[1, 2] += g1 * g2
    A[1, 3] += g1
    A[2, 2] += g2 * g2
    A[2, 3] += g2
    A[3, 3] += 1.0


@njit(cache=True)
def dop_from_normal(A, n_sat):
    """(H, V, P) from the upper triangle of the normal matrix ``A = G^T G``
    (4 x 4) of ``n_sat`` satellites.

    ``Q = A^-1`` by Cholesky: ``A = L L^T``, ``Q = L^-T L^-1``, so the
    diagonal of ``Q`` is the column sums of squares of ``L^-1``.  The matrix
    counts as singular when a pivot falls below :data:`DOP_PIVOT_TOL` times the
    largest diagonal element (condition number of about 1e12 or worse); then,
    and with fewer than four satellites, all three are :data:`DOP_INVALID`.
    """
    if n_sat < 4:
        return DOP_INVALID, DOP_INVALID, DOP_INVALID
    scale = max(A[0, 0], A[1, 1], A[2, 2], A[3, 3])
    L = np.zeros((4, 4))
    for j in range(4):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > DOP_PIVOT_TOL * scale:
            return DOP_INVALID, DOP_INVALID, DOP_INVALID
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, 4):
            s = A[j, i]           # upper triangle holds A[i, j] for i > j
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
    M = np.zeros((4, 4))          # L^-1, lower triangular
    for i in range(4):
        M[i, i] = 1.0 / L[i, i]
        for r in range(i + 1, 4):
            s = 0.0
            for k in range(i, r):
                s += L[r, k] * M[k, i]
            M[r, i] = -s / L[r, r]
    q = np.zeros(3)
    for i in range(3):
        s = 0.0
        for r in range(i, 4):
            s += M[r, i] * M[r, i]
        q[i] = s
    h = math.sqrt(q[0] + q[1])
    v = math.sqrt(q[2])
    pd = math.sqrt(q[0] + q[1] + q[2])
    if not (math.isfinite(h) and math.isfinite(v)):
        return DOP_INVALID, DOP_INVALID, DOP_INVALID
    return h, v, pd


@njit(cache=True)
def dop(los_rows):
    """(H, V, P) of the satellites whose unit lines of sight are the rows of
    ``los_rows`` (n x 3)."""
    A = np.zeros((4, 4))
    for k in range(los_rows.shape[0]):
        _add_row(A, los_rows[k, 0], los_rows[k, 1], los_rows[k, 2])
    return dop_from_normal(A, los_rows.shape[0])


# ---------------------------------------------------------------------------
# Multipath
# ---------------------------------------------------------------------------

@njit(cache=True)
def _reflector_term(d, b_h, rise, d_r):
    dm = max(d, 1.0)
    share = 2.0 * math.atan2(b_h, dm) / (2.0 * math.pi)
    height = min(max(math.atan2(rise, dm) / REFLECTOR_FULL_ELEVATION_RAD, 0.0), 1.0)
    return share * height * (1.0 - d / d_r)


@njit(cache=True)
def reflector_index(e_a, n_a, z_a, boxes, cylinders, d_r):
    """rho at the antenna (e_a, n_a, z_a): every box and cylinder whose centre is
    horizontally closer than ``d_r`` [m] adds its term; the sum is clamped to [0, 1].
    ``b_h`` is a cylinder's radius, or half the horizontal diagonal of a box."""
    total = 0.0
    for j in range(boxes.shape[0]):
        cx = 0.5 * (boxes[j, BOX_X0] + boxes[j, BOX_X1])
        cy = 0.5 * (boxes[j, BOX_Y0] + boxes[j, BOX_Y1])
        d = math.hypot(cx - e_a, cy - n_a)
        if d < d_r:
            b_h = 0.5 * math.hypot(boxes[j, BOX_X1] - boxes[j, BOX_X0],
                                   boxes[j, BOX_Y1] - boxes[j, BOX_Y0])
            total += _reflector_term(d, b_h, boxes[j, BOX_Z1] - z_a, d_r)
    for j in range(cylinders.shape[0]):
        d = math.hypot(cylinders[j, CYL_X] - e_a, cylinders[j, CYL_Y] - n_a)
        if d < d_r:
            total += _reflector_term(d, cylinders[j, CYL_R], cylinders[j, CYL_Z1] - z_a, d_r)
    return min(max(total, 0.0), 1.0)


@njit(cache=True)
def multipath_index(n_near, n_foliage, n_used, rho):
    """m from the satellite counts and the reflector index, clamped to [0, 1]."""
    share = (n_near + 0.5 * n_foliage) / max(n_used, 1)
    return min(max(share + 0.5 * rho, 0.0), 1.0)


# ---------------------------------------------------------------------------
# One epoch
# ---------------------------------------------------------------------------

# Columns of the per-epoch list of kept obstacles.
_K_KIND, _K_ROW, _K_SINMAX, _K_UX, _K_UY, _K_COSHALF, _K_AZ = range(7)


@njit(cache=True)
def _skip_bounds(kept, i, e_a, n_a, z_a, top, d_nearest, cx, cy, r_bound):
    """Store the skip bounds of one kept obstacle: the sine of the highest
    elevation any of its points can show, and the azimuth wedge of its
    bounding circle (none when the antenna is inside that circle)."""
    h = top - z_a
    if h <= 0.0:
        kept[i, _K_SINMAX] = 0.0
    elif d_nearest <= 0.0:
        kept[i, _K_SINMAX] = 2.0           # never skipped by height
    else:
        kept[i, _K_SINMAX] = h / math.sqrt(h * h + d_nearest * d_nearest)
    dc = math.hypot(cx - e_a, cy - n_a)
    if dc <= r_bound * (1.0 + _CULL_TOL) + _CULL_TOL:
        kept[i, _K_AZ] = 0.0
    else:
        kept[i, _K_AZ] = 1.0
        kept[i, _K_UX] = (cx - e_a) / dc
        kept[i, _K_UY] = (cy - n_a) / dc
        ratio = r_bound / dc
        kept[i, _K_COSHALF] = math.sqrt(1.0 - ratio * ratio)


@njit(cache=True)
def sky_epoch(los, system, system_on, e_a, n_a, z_a, boxes, cylinders, spheres, p,  # noqa: C901
              denied, out_class, out):
    """The sky part of one epoch for the antenna at grid ENU (e_a, n_a, z_a) [m].

    ``los`` (n_sat, 3) unit lines of sight; ``system`` (n_sat,) int system code;
    ``system_on`` bool per system code; ``boxes``/``cylinders``/``spheres`` the
    scene arrays; ``p`` a :class:`SkyParams`; ``denied`` bool per satellite:
    taken away by a fault event (:func:`acres_sim.core.events.deny_satellites`),
    so blocked wherever it is above the mask.  Writes the class of every
    satellite into ``out_class`` (int64, n_sat) and the counts, DOPs, rho and
    m into ``out`` (float64, :data:`SKY_SIZE`).
    """
    dn = p.near_margin_m
    nb = boxes.shape[0]
    nc = cylinders.shape[0]
    ns = spheres.shape[0]
    keep = np.empty(nb + nc + ns, dtype=np.bool_)
    n_kept = prefilter(e_a, n_a, z_a, boxes, cylinders, spheres, p, keep)

    # Kept obstacles with their skip bounds (grown solids for boxes and cylinders).
    kept = np.empty((n_kept, 7))
    i = 0
    for j in range(nb + nc + ns):
        if not keep[j]:
            continue
        if j < nb:
            x0 = boxes[j, BOX_X0] - dn
            y0 = boxes[j, BOX_Y0] - dn
            x1 = boxes[j, BOX_X1] + dn
            y1 = boxes[j, BOX_Y1] + dn
            kept[i, _K_KIND] = KIND_BOX
            kept[i, _K_ROW] = j
            _skip_bounds(kept, i, e_a, n_a, z_a, boxes[j, BOX_Z1] + dn,
                         box_footprint_distance(e_a, n_a, x0, y0, x1, y1),
                         0.5 * (x0 + x1), 0.5 * (y0 + y1), 0.5 * math.hypot(x1 - x0, y1 - y0))
        elif j < nb + nc:
            r = j - nb
            cx = cylinders[r, CYL_X]
            cy = cylinders[r, CYL_Y]
            rg = cylinders[r, CYL_R] + dn
            kept[i, _K_KIND] = KIND_CYLINDER
            kept[i, _K_ROW] = r
            _skip_bounds(kept, i, e_a, n_a, z_a, cylinders[r, CYL_Z1] + dn,
                         circle_footprint_distance(e_a, n_a, cx, cy, rg), cx, cy, rg)
        else:
            r = j - nb - nc
            cx = spheres[r, SPH_X]
            cy = spheres[r, SPH_Y]
            rs = spheres[r, SPH_R]
            kept[i, _K_KIND] = KIND_SPHERE
            kept[i, _K_ROW] = r
            _skip_bounds(kept, i, e_a, n_a, z_a, spheres[r, SPH_Z] + rs,
                         circle_footprint_distance(e_a, n_a, cx, cy, rs), cx, cy, rs)
        i += 1

    a_used = np.zeros((4, 4))
    a_all = np.zeros((4, 4))
    n_clear = 0
    n_near = 0
    n_foliage = 0
    n_blocked = 0
    n_above = 0
    fb = p.foliage_block_path_m
    for k in range(los.shape[0]):
        if not system_on[system[k]]:
            out_class[k] = SAT_OFF
            continue
        le = los[k, 0]
        ln = los[k, 1]
        lu = los[k, 2]
        if math.asin(min(1.0, max(-1.0, lu))) < p.elevation_mask_rad:
            out_class[k] = SAT_BELOW_MASK
            continue
        n_above += 1
        _add_row(a_all, le, ln, lu)
        if denied[k]:
            out_class[k] = SAT_BLOCKED
            n_blocked += 1
            continue
        lh = math.sqrt(le * le + ln * ln)
        blocked = False
        foliage = False
        near = False
        for i in range(n_kept):
            if lu > kept[i, _K_SINMAX] + _CULL_TOL:
                continue
            if kept[i, _K_AZ] != 0.0 and (le * kept[i, _K_UX] + ln * kept[i, _K_UY]
                                          < lh * kept[i, _K_COSHALF] - _CULL_TOL):
                continue
            kind = kept[i, _K_KIND]
            r = int(kept[i, _K_ROW])
            if kind == KIND_BOX:
                if ray_box(e_a, n_a, z_a, le, ln, lu,
                           boxes[r, BOX_X0] - dn, boxes[r, BOX_Y0] - dn, boxes[r, BOX_Z0] - dn,
                           boxes[r, BOX_X1] + dn, boxes[r, BOX_Y1] + dn, boxes[r, BOX_Z1] + dn):
                    if ray_box(e_a, n_a, z_a, le, ln, lu,
                               boxes[r, BOX_X0], boxes[r, BOX_Y0], boxes[r, BOX_Z0],
                               boxes[r, BOX_X1], boxes[r, BOX_Y1], boxes[r, BOX_Z1]):
                        blocked = True
                        break
                    near = True
            elif kind == KIND_CYLINDER:
                cx = cylinders[r, CYL_X]
                cy = cylinders[r, CYL_Y]
                if ray_cylinder(e_a, n_a, z_a, le, ln, lu, cx, cy, cylinders[r, CYL_R] + dn,
                                cylinders[r, CYL_Z0] - dn, cylinders[r, CYL_Z1] + dn):
                    if ray_cylinder(e_a, n_a, z_a, le, ln, lu, cx, cy, cylinders[r, CYL_R],
                                    cylinders[r, CYL_Z0], cylinders[r, CYL_Z1]):
                        blocked = True
                        break
                    near = True
            else:
                chord = sphere_chord(e_a, n_a, z_a, le, ln, lu, spheres[r, SPH_X],
                                     spheres[r, SPH_Y], spheres[r, SPH_Z], spheres[r, SPH_R])
                if chord >= fb:
                    blocked = True
                    break
                if chord > 0.0:
                    foliage = True
        if blocked:
            out_class[k] = SAT_BLOCKED
            n_blocked += 1
            continue
        if foliage:
            out_class[k] = SAT_FOLIAGE
            n_foliage += 1
        elif near:
            out_class[k] = SAT_NEAR
            n_near += 1
        else:
            out_class[k] = SAT_CLEAR
            n_clear += 1
        _add_row(a_used, le, ln, lu)

    n_used = n_clear + n_near + n_foliage
    h, v, pd = dop_from_normal(a_used, n_used)
    h_o, v_o, _p_o = dop_from_normal(a_all, n_above)
    rho = reflector_index(e_a, n_a, z_a, boxes, cylinders, p.reflector_range_m)
    out[SKY_N_CLEAR] = n_clear
    out[SKY_N_NEAR] = n_near
    out[SKY_N_FOLIAGE] = n_foliage
    out[SKY_N_USED] = n_used
    out[SKY_N_BLOCKED] = n_blocked
    out[SKY_N_ABOVE_MASK] = n_above
    out[SKY_HDOP] = h
    out[SKY_VDOP] = v
    out[SKY_PDOP] = pd
    out[SKY_HDOP_ALL] = h_o
    out[SKY_VDOP_ALL] = v_o
    out[SKY_REFLECTOR] = rho
    out[SKY_MULTIPATH] = multipath_index(n_near, n_foliage, n_used, rho)
    out[SKY_N_KEPT] = n_kept


# ---------------------------------------------------------------------------
# Python face (tests, tools; the receiver calls sky_epoch directly)
# ---------------------------------------------------------------------------

class SkyView(NamedTuple):
    """The sky of one epoch, unpacked."""

    classes: np.ndarray     # int64 per satellite (SAT_*)
    n_clear: int
    n_near: int
    n_foliage: int
    n_used: int
    n_blocked: int
    n_above_mask: int
    hdop: float
    vdop: float
    pdop: float
    hdop_all: float
    vdop_all: float
    reflector_index: float
    multipath_index: float
    n_kept: int


def sky_view(los, system, system_on, antenna_enu, scene, params: SkyParams) -> SkyView:
    """:func:`sky_epoch` for one antenna position, with fresh output arrays.

    ``scene`` is a :class:`acres_sim.core.scene.Scene`; ``system_on`` any
    sequence of three booleans (GPS, Galileo, GLONASS).
    """
    los = np.ascontiguousarray(los, dtype=np.float64)
    system = np.ascontiguousarray(system, dtype=np.int64)
    on = np.asarray(system_on, dtype=np.bool_)
    classes = np.empty(los.shape[0], dtype=np.int64)
    out = np.empty(SKY_SIZE)
    e, n, u = (float(v) for v in antenna_enu)
    sky_epoch(los, system, on, e, n, u, scene.boxes, scene.cylinders, scene.spheres, params,
              np.zeros(los.shape[0], dtype=np.bool_), classes, out)
    ints = {SKY_N_CLEAR, SKY_N_NEAR, SKY_N_FOLIAGE, SKY_N_USED, SKY_N_BLOCKED,
            SKY_N_ABOVE_MASK, SKY_N_KEPT}
    v = [int(out[i]) if i in ints else float(out[i]) for i in range(SKY_SIZE)]
    return SkyView(classes, v[SKY_N_CLEAR], v[SKY_N_NEAR], v[SKY_N_FOLIAGE], v[SKY_N_USED],
                   v[SKY_N_BLOCKED], v[SKY_N_ABOVE_MASK], v[SKY_HDOP], v[SKY_VDOP],
                   v[SKY_PDOP], v[SKY_HDOP_ALL], v[SKY_VDOP_ALL], v[SKY_REFLECTOR],
                   v[SKY_MULTIPATH], v[SKY_N_KEPT])
