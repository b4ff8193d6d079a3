"""Routes over the tile and a pure-pursuit follower that drives them (maths
only: the route files are read by :mod:`acres_sim.config.routes`).

A :class:`Route` is a dense path in grid ENU [m]: straight legs between
waypoints, every corner rounded with a circular arc (``turn_radius_m``, less
where the legs are short), a target speed per leg and a parked hold at the
start.  :func:`build_route` makes one from legs of waypoints; the named
patterns :func:`loop_waypoints`, :func:`figure8_waypoints` and
:func:`field_waypoints` (serpentine passes joined by headland turns) generate
waypoints.  A route is *closed* when it ends where it starts, heading the way
it started (:attr:`Route.closed`): only a closed route can be driven lap after
lap.

:class:`RouteFollower` turns the ground truth of one vehicle into the command
``(speed_mps, yaw_rate_radps)`` that :class:`acres_sim.core.physics.Fleet`
takes (what cmd_vel carries): pure pursuit from the rear axle (base_footprint)
to a point one lookahead distance further along the path, the lookahead growing
with speed; the speed is the leg speed, lowered for the curvature ahead
(``lateral_accel_mps2``) and ramped down to the final stop (``decel_mps2``).
It drives from an arc length ``start_m`` either to ``end_m`` (the end of the
route by default) or, on a closed route, ``laps`` times round (``math.inf``:
for ever), and then parks.
"""

import math
from typing import NamedTuple

import numpy as np

from acres_sim.core.constants import STANDARD_GRAVITY_MPS2
from acres_sim.core.frames import chassis_in_base_footprint
from acres_sim.core.pursuit import (
    FP_BF_X, FP_BF_Z, FP_DECEL, FP_END_DIR_X, FP_END_DIR_Y, FP_END_S, FP_HOLD_STEPS,
    FP_LAP_LENGTH, FP_LAP_POINTS, FP_LATERAL_ACCEL, FP_LOOKAHEAD_MAX, FP_LOOKAHEAD_MIN,
    FP_LOOKAHEAD_TIME, FP_MIN_SPEED, FP_PREVIEW, FP_STOP_TOLERANCE, FS_CROSS_TRACK, FS_DONE,
    FS_END_STEP, FS_INDEX, FS_LAPS, FS_S, N_FOLLOW_PARAMS, PROJECTION_WINDOW_M,
    initial_follow_state, pursuit_command)
from acres_sim.core.truth import PHYSICS_HZ, Truth
from acres_sim.core.vehicles import VehicleParams

__all__ = ['CLOSED_TOLERANCE_DEG', 'CLOSED_TOLERANCE_M', 'PATTERNS', 'Route', 'RouteFollower',
           'build_route', 'field_waypoints', 'figure8_waypoints', 'loop_waypoints']

POINT_SPACING_M = 0.25
# A route is closed when its end is this close to its start, in place and heading.
CLOSED_TOLERANCE_M = 0.05
CLOSED_TOLERANCE_DEG = 1.0


class Route(NamedTuple):
    """A dense path: point i at arc length ``s[i]`` with the leg speed and the
    signed curvature (left > 0) of the piece it lies on."""

    name: str
    xy: np.ndarray          # (M, 2) grid ENU [m]
    s: np.ndarray           # (M,) arc length from the start [m]
    speed: np.ndarray       # (M,) leg target speed [m/s]
    curvature: np.ndarray   # (M,) [1/m]
    hold_s: float = 0.0     # parked at the start [s]

    @property
    def length(self) -> float:
        return float(self.s[-1])

    def start_pose(self):
        """(x, y, yaw) at the start of the path, heading along the first leg."""
        d = self.xy[1] - self.xy[0]
        return float(self.xy[0, 0]), float(self.xy[0, 1]), math.atan2(d[1], d[0])

    def pose_at(self, s):
        """(x, y, yaw) of the path at arc length ``s`` (clamped to the path),
        heading along the piece it lies on; ``pose_at(0)`` is :meth:`start_pose`."""
        i = int(np.clip(np.searchsorted(self.s, s, side='right') - 1, 0, len(self.s) - 2))
        a, b = self.xy[i], self.xy[i + 1]
        t = min(max((s - self.s[i]) / (self.s[i + 1] - self.s[i]), 0.0), 1.0)
        d = b - a
        return (float(a[0] + t * d[0]), float(a[1] + t * d[1]), math.atan2(d[1], d[0]))

    def closest(self, x, y):
        """(arc length, distance [m]) of the path point closest to (x, y); the
        first one along the path where several are as close."""
        a, d = self.xy[:-1], np.diff(self.xy, axis=0)
        seg2 = np.einsum('ij,ij->i', d, d)
        t = np.clip(((x - a[:, 0]) * d[:, 0] + (y - a[:, 1]) * d[:, 1])
                    / np.where(seg2 > 0.0, seg2, 1.0), 0.0, 1.0)
        dist = np.hypot(a[:, 0] + t * d[:, 0] - x, a[:, 1] + t * d[:, 1] - y)
        i = int(np.argmin(dist))
        return float(self.s[i] + t[i] * math.sqrt(seg2[i])), float(dist[i])

    @property
    def closed(self) -> bool:
        """True when the path ends where it starts, heading the way it started
        (within :data:`CLOSED_TOLERANCE_M` and :data:`CLOSED_TOLERANCE_DEG`)."""
        gap = math.hypot(*(self.xy[-1] - self.xy[0]))
        first, last = self.xy[1] - self.xy[0], self.xy[-1] - self.xy[-2]
        turn = math.atan2(first[0] * last[1] - first[1] * last[0], first @ last)
        return gap <= CLOSED_TOLERANCE_M and abs(math.degrees(turn)) <= CLOSED_TOLERANCE_DEG


# --------------------------------------------------------------------------- building


def _unit(v):
    n = math.hypot(v[0], v[1])
    return v / n, n


def build_route(legs, name='route', hold_s=0.0, turn_radius_m=6.0,
                spacing_m=POINT_SPACING_M) -> Route:
    """A :class:`Route` from ``legs``: a sequence of ``(waypoints, speed_mps)``,
    waypoints an (K, 2) array; a leg that does not start where the previous
    one ended is joined to it by a straight segment at the new leg's speed."""
    verts, speeds = [], []           # vertices and the speed of the segment leaving each
    for waypoints, speed in legs:
        w = np.asarray(waypoints, dtype=np.float64).reshape(-1, 2)
        for point in w:
            if verts and math.hypot(*(point - verts[-1])) < 1e-9:
                continue
            if verts:
                speeds.append(float(speed))
            verts.append(point.copy())
    if len(verts) < 2:
        raise ValueError(f'route {name!r}: needs at least two distinct waypoints')
    V = np.array(verts)
    n_seg = len(V) - 1
    dirs, lens = [], []
    for i in range(n_seg):
        d, n = _unit(V[i + 1] - V[i])
        dirs.append(d)
        lens.append(n)
    # tangent length and signed turn of every interior vertex
    tangent = np.zeros(len(V))
    turn = np.zeros(len(V))
    for i in range(1, n_seg):
        d0, d1 = dirs[i - 1], dirs[i]
        phi = math.atan2(d0[0] * d1[1] - d0[1] * d1[0], d0[0] * d1[0] + d0[1] * d1[1])
        if abs(phi) < 1e-9:
            continue
        if abs(phi) > math.pi - 1e-3:
            raise ValueError(f'route {name!r}: the path turns back on itself at waypoint '
                             f'({V[i, 0]:g}, {V[i, 1]:g})')
        half = math.tan(0.5 * abs(phi))
        avail_in = lens[i - 1] * (1.0 if i - 1 == 0 else 0.5)
        avail_out = lens[i] * (1.0 if i + 1 == n_seg else 0.5)
        tangent[i] = min(turn_radius_m * half, avail_in, avail_out)
        turn[i] = phi

    xy, sp, kappa = [], [], []

    def straight(a, b, speed):
        length = math.hypot(*(b - a))
        if length <= 1e-12:
            return
        n = max(1, int(math.ceil(length / spacing_m)))
        for j in range(n):
            xy.append(a + (b - a) * (j / n))
            sp.append(speed)
            kappa.append(0.0)

    def arc(i, speed):
        phi = turn[i]
        t = tangent[i]
        radius = t / math.tan(0.5 * abs(phi))
        d0 = dirs[i - 1]
        start = V[i] - d0 * t
        sign = 1.0 if phi > 0 else -1.0
        left = np.array([-d0[1], d0[0]])
        centre = start + left * (sign * radius)
        a0 = math.atan2(start[1] - centre[1], start[0] - centre[0])
        n = max(1, int(math.ceil(radius * abs(phi) / spacing_m)))
        for j in range(n):
            a = a0 + phi * (j / n)
            xy.append(centre + radius * np.array([math.cos(a), math.sin(a)]))
            sp.append(speed)
            kappa.append(sign / radius)

    for i in range(n_seg):
        a = V[i] + dirs[i] * tangent[i]
        b = V[i + 1] - dirs[i] * tangent[i + 1]
        straight(a, b, speeds[i])
        if i + 1 < n_seg and tangent[i + 1] > 0.0:
            arc(i + 1, min(speeds[i], speeds[i + 1]))
    xy.append(V[-1].copy())
    sp.append(speeds[-1])
    kappa.append(0.0)
    xy = np.array(xy)
    s = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    return Route(name, xy, s, np.array(sp), np.array(kappa), float(hold_s))


# --------------------------------------------------------------------------- patterns


def _heading(deg):
    a = math.radians(deg)
    return np.array([math.cos(a), math.sin(a)])


def _side_normal(d, side):
    left = np.array([-d[1], d[0]])
    if side == 'left':
        return left
    if side == 'right':
        return -left
    raise ValueError(f"side must be 'left' or 'right', not {side!r}")


def loop_waypoints(origin=(0.0, 0.0), heading_deg=0.0, length_m=60.0, width_m=30.0, laps=1,
                   side='left'):
    """A rectangle of ``length_m`` x ``width_m`` with the corner ``origin``, its
    first side along ``heading_deg``, turning to ``side``, driven ``laps`` times:
    closed, it starts and ends in the middle of the first side, so that every
    corner is driven on every lap."""
    o = np.asarray(origin, dtype=np.float64)
    d = _heading(heading_deg)
    n = _side_normal(d, side)
    corners = [o + d * length_m, o + d * length_m + n * width_m, o + n * width_m, o]
    middle = o + d * (0.5 * length_m)
    pts = [middle]
    for _ in range(int(laps)):
        pts.extend(corners)
    pts.append(middle)
    return np.array(pts)


def figure8_waypoints(center=(0.0, 0.0), heading_deg=45.0, size_m=20.0):
    """A figure eight: two squares of side ``size_m`` that share the corner
    ``center``.  It leaves the centre along ``heading_deg``, goes round the square
    on the right (three right turns), crosses the centre at right angles to the
    first pass, goes round the square on the left (three left turns), and ends
    at the centre heading the way it left (closed); the route's turn radius
    rounds the corners."""
    c = np.asarray(center, dtype=np.float64)
    d = _heading(heading_deg)              # first crossing direction
    e = np.array([-d[1], d[0]])            # the second crossing direction (left of d)
    a = float(size_m)
    return np.array([c, c + a * d, c + a * d - a * e, c - a * e, c,
                     c + a * e, c - a * d + a * e, c - a * d, c])


def field_waypoints(start=(0.0, 0.0), heading_deg=0.0, length_m=100.0, passes=4,
                    spacing_m=12.0, side='left'):
    """Serpentine field passes: ``passes`` straight passes of ``length_m``, the
    first from ``start`` along ``heading_deg``, each next one ``spacing_m`` to
    ``side`` and driven the other way; the route's corner rounding turns the
    two corners at each headland into one turn of radius ``spacing_m / 2``."""
    o = np.asarray(start, dtype=np.float64)
    d = _heading(heading_deg)
    n = _side_normal(d, side)
    pts = []
    for i in range(int(passes)):
        a = o + n * (spacing_m * i)
        b = a + d * length_m
        pts.extend([a, b] if i % 2 == 0 else [b, a])
    return np.array(pts)


PATTERNS = {'loop': loop_waypoints, 'figure8': figure8_waypoints, 'field': field_waypoints}


# --------------------------------------------------------------------------- following


class RouteFollower:
    """Pure pursuit over a :class:`Route` for one vehicle.

    ``command(truth)`` -> ``(speed_mps, yaw_rate_radps)``; it holds the vehicle
    parked for ``route.hold_s`` from the first truth it sees, then drives from
    arc length ``start_m`` and finally commands (0, 0) for good once the rear
    axle is within ``stop_tolerance_m`` of where it stops (``done``): ``end_m``
    (None: the end of the route), or with ``laps`` (a closed route only) that
    many laps after ``start_m``; ``laps=math.inf`` drives on for ever.  After
    each call ``s`` is the arc length of the closest path point (within one
    lap), ``distance_m`` the arc length driven since ``start_m`` and
    ``cross_track_error`` the signed distance of the rear axle from the path
    (left > 0) [m].

    Laps are driven on the arrays of a few copies of the closed route end to
    end (:attr:`arrays`): whenever the closest point lies in the second copy,
    the kernel steps its index and arc length back by one lap.
    """

    def __init__(self, route: Route, params: VehicleParams, start_m=0.0, end_m=None, laps=0,
                 lookahead_time_s=0.7, lookahead_min_m=None, lookahead_max_m=15.0,
                 lateral_accel_mps2=1.5, decel_mps2=None, preview_s=1.5, min_speed_mps=0.4,
                 stop_tolerance_m=0.3):
        if laps and not route.closed:
            raise ValueError(f'route {route.name!r} is not closed: it cannot be driven in laps')
        if laps and end_m is not None:
            raise ValueError('a follower stops after its laps or at end_m, not both')
        self.route = route
        self.params = params
        self.laps = laps
        self.start_m = float(start_m)
        self.lookahead_time_s = float(lookahead_time_s)
        self.lookahead_min_m = float(lookahead_min_m if lookahead_min_m is not None
                                     else max(3.0, 1.5 * params.wheelbase_m))
        self.lookahead_max_m = float(lookahead_max_m)
        self.lateral_accel = min(float(lateral_accel_mps2), 0.5 * params.friction_mu
                                 * STANDARD_GRAVITY_MPS2)
        self.decel = float(decel_mps2 if decel_mps2 is not None
                           else min(1.0, 0.5 * params.max_brake_mps2))
        self.preview_s = float(preview_s)
        self.min_speed = float(min_speed_mps)
        self.stop_tolerance = float(stop_tolerance_m)
        path = _laps_path(route) if laps else route
        self.lap_length = float(path.s[len(route.s) - 1]) if laps else 0.0
        self.profile = self._speed_profile(path, stop_at_end=not laps)
        d = path.xy[-1] - path.xy[-2]
        end_dir = d / math.hypot(d[0], d[1])
        fp = np.zeros(N_FOLLOW_PARAMS)
        fp[FP_LOOKAHEAD_TIME], fp[FP_LOOKAHEAD_MIN] = self.lookahead_time_s, self.lookahead_min_m
        fp[FP_LOOKAHEAD_MAX], fp[FP_LATERAL_ACCEL] = self.lookahead_max_m, self.lateral_accel
        fp[FP_DECEL], fp[FP_PREVIEW], fp[FP_MIN_SPEED] = self.decel, self.preview_s, self.min_speed
        fp[FP_STOP_TOLERANCE] = self.stop_tolerance
        fp[FP_HOLD_STEPS] = route.hold_s * PHYSICS_HZ - 1e-9
        fp[FP_END_DIR_X], fp[FP_END_DIR_Y] = end_dir
        fp[FP_BF_X:FP_BF_Z + 1] = chassis_in_base_footprint(params.wheelbase_m,
                                                             params.cog_height_m)
        if laps:
            fp[FP_END_S] = self.start_m + laps * self.lap_length
            fp[FP_LAP_LENGTH], fp[FP_LAP_POINTS] = self.lap_length, len(route.s) - 1
        else:
            fp[FP_END_S] = float(route.s[-1]) if end_m is None else float(end_m)
        self.params_array = fp
        self._route_x = np.ascontiguousarray(path.xy[:, 0])
        self._route_y = np.ascontiguousarray(path.xy[:, 1])
        self._route_s = np.ascontiguousarray(path.s, dtype=np.float64)
        index = int(np.clip(np.searchsorted(route.s, self.start_m, side='right') - 1, 0,
                            len(route.s) - 2))
        self.state = initial_follow_state(index, self.start_m)

    def _speed_profile(self, path, stop_at_end):
        v = np.minimum(path.speed, self.params.max_speed_mps)
        with np.errstate(divide='ignore'):
            v = np.minimum(v, np.sqrt(self.lateral_accel / np.abs(path.curvature)))
        if stop_at_end:
            v[-1] = 0.0
        ds = np.diff(path.s)
        for i in range(len(v) - 2, -1, -1):
            v[i] = min(v[i], math.sqrt(v[i + 1] ** 2 + 2.0 * self.decel * ds[i]))
        return v

    @property
    def index(self) -> int:
        return int(self.state[FS_INDEX])

    @property
    def s(self) -> float:
        return float(self.state[FS_S])

    @property
    def distance_m(self) -> float:
        """Arc length driven along the route since ``start_m`` [m]."""
        return float(self.state[FS_LAPS]) * self.lap_length + self.s - self.start_m

    @property
    def laps_done(self) -> int:
        """Laps driven since ``start_m``, the last one counted once the rear axle
        is within ``stop_tolerance_m`` of its end (0 on a route not driven in laps)."""
        if not self.lap_length:
            return 0
        return int((self.distance_m + self.stop_tolerance) // self.lap_length)

    @property
    def cross_track_error(self) -> float:
        return float(self.state[FS_CROSS_TRACK])

    @property
    def done(self) -> bool:
        return bool(self.state[FS_DONE])

    @property
    def ended_s(self):
        """The time [s] at which the vehicle reached its stop, None before."""
        return float(self.state[FS_END_STEP]) / PHYSICS_HZ if self.done else None

    def end_note(self) -> str:
        """One line on where the drive ended (for the drivers' logs)."""
        laps = f' after {self.laps_done} lap{"s" if self.laps_done != 1 else ""}' \
            if self.lap_length else ''
        return (f'route {self.route.name} ended at {self.ended_s:.2f} s{laps}, '
                f'{self.distance_m:.1f} m along it; parked there from then on')

    def command(self, truth: Truth):
        """The (speed_mps, yaw_rate_radps) command for this truth."""
        return pursuit_command(truth.p, truth.R, truth.v, truth.step, *self.arrays,
                               self.state)

    @property
    def arrays(self):
        """(x, y, s, profile, parameters): the route and parameter arrays of
        :func:`acres_sim.core.pursuit.pursuit_command`."""
        return self._route_x, self._route_y, self._route_s, self.profile, self.params_array


def _laps_path(route: Route) -> Route:
    """The closed ``route`` as copies end to end, enough that the follower's
    look along the path from anywhere in the first lap stays on the arrays;
    point i of copy c is point i of the route (its last point, the start
    again, is left out of all but the last copy)."""
    reach = PROJECTION_WINDOW_M + 50.0      # projection window, lookahead and preview
    copies = 2 + int(math.ceil(reach / route.length))
    m = len(route.s) - 1

    def tiled(values):
        return np.concatenate([values[:m]] * copies + [values[m:]])

    xy = tiled(route.xy)
    s = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
    return Route(route.name, xy, s, tiled(route.speed), tiled(route.curvature), route.hold_s)
