"""Routes over the tile and a pure-pursuit follower that drives them.

A :class:`Route` is a dense path in grid ENU [m]: straight legs between
waypoints, every corner rounded with a circular arc (``turn_radius_m``, less
where the legs are short), a target speed per leg, a parked hold at the start
and a stop at the end.  :func:`build_route` makes one from legs of waypoints;
the named patterns :func:`loop_waypoints`, :func:`figure8_waypoints` and
:func:`field_waypoints` (serpentine passes joined by headland turns) generate
waypoints; :func:`load_route` reads ``config/routes/<name>.yaml``.

:class:`RouteFollower` turns the ground truth of one vehicle into the command
``(speed_mps, yaw_rate_radps)`` that :class:`acres_sim.core.physics.Fleet`
takes (what cmd_vel carries): pure pursuit from the rear axle (base_footprint)
to a point one lookahead distance further along the path, the lookahead growing
with speed; the speed is the leg speed, lowered for the curvature ahead
(``lateral_accel_mps2``) and ramped down to the final stop (``decel_mps2``).

Route file (YAML)::

    route:
      name: acre_demo
      frame: grid           # grid (ENU metres, the default) or a geodetic frame of
                            # SiteGeoreference (wgs84_g2139, nad83_2011, nad83_harn):
                            # then every point is [lat_deg, lon_deg]
      hold_s: 5.0           # parked at the start [s]
      turn_radius_m: 6.0    # corner radius
      legs:                 # each leg continues from the end of the one before
        - {speed_mps: 2.5, waypoints: [[0.0, 0.0], [20.0, 0.0]]}
        - {speed_mps: 6.0, pattern: field, start: [110.0, 96.0], heading_deg: 180.0,
           length_m: 80.0, passes: 3, spacing_m: 12.0, side: right}

Pattern keys: ``loop`` -- origin, heading_deg, length_m, width_m, laps, side;
``figure8`` -- center, heading_deg, size_m; ``field`` -- start, heading_deg,
length_m, passes, spacing_m, side.  Headings are degrees counter-clockwise from
grid east.
"""

import difflib
import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from acres_sim.core.frames import chassis_in_base_footprint
from acres_sim.core.pursuit import (
    FP_BF_X, FP_BF_Z, FP_DECEL, FP_END_DIR_X, FP_END_DIR_Y, FP_HOLD_STEPS, FP_LATERAL_ACCEL,
    FP_LOOKAHEAD_MAX, FP_LOOKAHEAD_MIN, FP_LOOKAHEAD_TIME, FP_MIN_SPEED, FP_PREVIEW,
    FP_STOP_TOLERANCE, FS_CROSS_TRACK, FS_DONE, FS_INDEX, FS_S, N_FOLLOW_PARAMS,
    initial_follow_state, pursuit_command)
from acres_sim.core.truth import PHYSICS_HZ, Truth
from acres_sim.core.vehicles import VehicleParams

__all__ = ['Route', 'RouteFollower', 'build_route', 'loop_waypoints', 'figure8_waypoints',
           'field_waypoints', 'PATTERNS', 'load_route', 'route_from_tree', 'route_names',
           'routes_dir']

POINT_SPACING_M = 0.25


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
    """A rectangle of ``length_m`` x ``width_m`` driven ``laps`` times from ``origin``
    along ``heading_deg``, turning to ``side``; it ends a quarter length into the
    first side again, so the last corner is driven too."""
    o = np.asarray(origin, dtype=np.float64)
    d = _heading(heading_deg)
    n = _side_normal(d, side)
    corners = [o + d * length_m, o + d * length_m + n * width_m, o + n * width_m, o]
    pts = [o]
    for _ in range(int(laps)):
        pts.extend(corners)
    pts.append(o + d * (0.25 * length_m))
    return np.array(pts)


def figure8_waypoints(center=(0.0, 0.0), heading_deg=45.0, size_m=20.0):
    """A figure eight: two squares of side ``size_m`` that share the corner
    ``center``.  It leaves the centre along ``heading_deg``, goes round the square
    on the right (three right turns), crosses the centre at right angles to the
    first pass, goes round the square on the left (three left turns), and stops
    half a side past the centre; the route's turn radius rounds the corners."""
    c = np.asarray(center, dtype=np.float64)
    d = _heading(heading_deg)              # first crossing direction
    e = np.array([-d[1], d[0]])            # the second crossing direction (left of d)
    a = float(size_m)
    return np.array([c, c + a * d, c + a * d - a * e, c - a * e, c,
                     c + a * e, c - a * d + a * e, c - a * d, c, c + 0.5 * a * d])


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
    parked for ``route.hold_s`` from the first truth it sees, then drives and
    finally commands (0, 0) for good once the rear axle is within
    ``stop_tolerance_m`` of the end (``done``).  After each call ``s`` is the
    arc length of the closest path point and ``cross_track_error`` the signed
    distance of the rear axle from the path (left > 0) [m].
    """

    def __init__(self, route: Route, params: VehicleParams, lookahead_time_s=0.7,
                 lookahead_min_m=None, lookahead_max_m=15.0, lateral_accel_mps2=1.5,
                 decel_mps2=None, preview_s=1.5, min_speed_mps=0.4, stop_tolerance_m=0.3):
        self.route = route
        self.params = params
        self.lookahead_time_s = float(lookahead_time_s)
        self.lookahead_min_m = float(lookahead_min_m if lookahead_min_m is not None
                                     else max(3.0, 1.5 * params.wheelbase_m))
        self.lookahead_max_m = float(lookahead_max_m)
        self.lateral_accel = min(float(lateral_accel_mps2), 0.5 * params.friction_mu * 9.80665)
        self.decel = float(decel_mps2 if decel_mps2 is not None
                           else min(1.0, 0.5 * params.max_brake_mps2))
        self.preview_s = float(preview_s)
        self.min_speed = float(min_speed_mps)
        self.stop_tolerance = float(stop_tolerance_m)
        self.profile = self._speed_profile()
        d = route.xy[-1] - route.xy[-2]
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
        self.params_array = fp
        self._route_x = np.ascontiguousarray(route.xy[:, 0])
        self._route_y = np.ascontiguousarray(route.xy[:, 1])
        self._route_s = np.ascontiguousarray(route.s, dtype=np.float64)
        self.state = initial_follow_state()

    def _speed_profile(self):
        r = self.route
        v = np.minimum(r.speed, self.params.max_speed_mps)
        with np.errstate(divide='ignore'):
            v = np.minimum(v, np.sqrt(self.lateral_accel / np.abs(r.curvature)))
        v[-1] = 0.0
        ds = np.diff(r.s)
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
    def cross_track_error(self) -> float:
        return float(self.state[FS_CROSS_TRACK])

    @property
    def done(self) -> bool:
        return bool(self.state[FS_DONE])

    def command(self, truth: Truth):
        """The (speed_mps, yaw_rate_radps) command for this truth."""
        return pursuit_command(truth.p, truth.R, truth.v, truth.step, *self.arrays,
                               self.state)

    @property
    def arrays(self):
        """(x, y, s, profile, parameters): the route and parameter arrays of
        :func:`acres_sim.core.pursuit.pursuit_command`."""
        return self._route_x, self._route_y, self._route_s, self.profile, self.params_array


# --------------------------------------------------------------------------- files

_TOP_KEYS = ('name', 'frame', 'hold_s', 'turn_radius_m', 'legs')
_PATTERN_KEYS = {
    'loop': ('origin', 'heading_deg', 'length_m', 'width_m', 'laps', 'side'),
    'figure8': ('center', 'heading_deg', 'size_m'),
    'field': ('start', 'heading_deg', 'length_m', 'passes', 'spacing_m', 'side'),
}
_POINT_KEYS = {'origin', 'center', 'start'}
# key -> (low, high, low_open, unit)
_RANGES = {
    'hold_s': (0.0, 3600.0, False, 's'),
    'turn_radius_m': (0.5, 1000.0, False, 'm'),
    'speed_mps': (0.0, 30.0, True, 'm/s'),
    'heading_deg': (-360.0, 360.0, False, 'deg'),
    'length_m': (0.0, 1e5, True, 'm'),
    'width_m': (0.0, 1e5, True, 'm'),
    'size_m': (0.0, 1e5, True, 'm'),
    'spacing_m': (0.0, 1e4, True, 'm'),
    'laps': (1, 1000, False, ''),
    'passes': (1, 1000, False, ''),
}
_INT_KEYS = ('laps', 'passes')
_GRID = 'grid'


def routes_dir() -> Path:
    """The folder of the packaged route files."""
    from acres_sim.config import config_dir
    return config_dir() / 'routes'


def route_names():
    """Names of the packaged routes (file stems), sorted."""
    return sorted(p.stem for p in routes_dir().glob('*.yaml'))


class _Checker:
    def __init__(self, source):
        from acres_sim.config import ConfigError
        self.error = ConfigError
        self.source = source

    def fail(self, item, value, problem, allowed):
        text = repr(value)
        text = text if len(text) <= 60 else text[:57] + '...'
        return self.error(f'{item} = {text} (in {self.source}): {problem}; allowed: {allowed}')

    def keys(self, item, mapping, allowed):
        if not isinstance(mapping, dict):
            raise self.fail(item, mapping, 'expected a mapping', 'keys ' + ', '.join(allowed))
        for name in mapping:
            if name not in allowed:
                close = difflib.get_close_matches(str(name), allowed, n=1, cutoff=0.6)
                hint = f"; did you mean '{item}.{close[0]}'?" if close else ''
                raise self.error(f"unknown key '{item}.{name}' (in {self.source}){hint}")

    def number(self, item, key, value):
        low, high, low_open, unit = _RANGES[key]
        unit = f' {unit}' if unit else ''
        allowed = f'{">" if low_open else ">="} {low:g} and <= {high:g}{unit}'
        if key in _INT_KEYS:
            if isinstance(value, bool) or not isinstance(value, int):
                raise self.fail(item, value, 'expected a whole number', allowed)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(item, value, 'expected a number', allowed)
        if not (abs(value) <= 1e300 and math.isfinite(value)):
            raise self.fail(item, value, 'not a finite number', allowed)
        if (value <= low if low_open else value < low) or value > high:
            raise self.fail(item, value, 'out of range', allowed)
        return value if key in _INT_KEYS else float(value)

    def required(self, item, mapping, name):
        if name not in mapping:
            raise self.error(f'{item}.{name} is missing (in {self.source})')
        return mapping[name]


def _to_grid(ck, item, value, frame, georef):
    """A point of the file ([x, y] in grid, [lat, lon] or [lat, lon, h] geodetic) in grid ENU."""
    n_ok = (2,) if frame == _GRID else (2, 3)
    what = '[x, y] in metres' if frame == _GRID else '[lat_deg, lon_deg] (optionally h_m)'
    if not isinstance(value, (list, tuple)) or len(value) not in n_ok:
        raise ck.fail(item, value, 'expected a point', what)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or abs(v) > 1e7:
            raise ck.fail(item, value, 'expected finite numbers', what)
        out.append(float(v))
    if frame == _GRID:
        return out
    lat, lon = out[0], out[1]
    if not (-90.0 <= lat <= 90.0 and -180.0 <= lon <= 180.0):
        raise ck.fail(item, value, 'not a latitude/longitude', what)
    if len(out) == 3:
        h = out[2]
    else:   # the ellipsoidal height of the tile's ground (grid u = 0) at the origin
        navd88, undulation = georef.heights(0.0, 0.0, 0.0)
        h = float(navd88 + undulation)
    e, n, _u = georef.geodetic_to_enu(lat, lon, h, 0.0, frame)
    return [float(e), float(n)]


def route_from_tree(tree, source='<route>', default_name='route') -> Route:
    """A :class:`Route` from the parsed content of a route file (checked)."""
    ck = _Checker(source)
    if not isinstance(tree, dict) or 'route' not in tree or len(tree) != 1:
        raise ck.error(f'{source}: expected a mapping with the only key "route" at the top')
    body = tree['route']
    ck.keys('route', body, _TOP_KEYS)
    name = body.get('name', default_name)
    if not isinstance(name, str) or not name.strip():
        raise ck.fail('route.name', name, 'expected a name', 'a non-empty string')
    from acres_sim.core.geo.site import FRAMES
    frame = body.get('frame', _GRID)
    frames = (_GRID,) + tuple(FRAMES)
    if frame not in frames:
        raise ck.fail('route.frame', frame, 'unknown frame', ', '.join(frames))
    georef = None
    if frame != _GRID:
        from acres_sim.core.geo.site import SiteGeoreference
        georef = SiteGeoreference.default()
    hold = ck.number('route.hold_s', 'hold_s', body.get('hold_s', 0.0))
    radius = ck.number('route.turn_radius_m', 'turn_radius_m', body.get('turn_radius_m', 6.0))
    legs_raw = ck.required('route', body, 'legs')
    if not isinstance(legs_raw, list) or not legs_raw:
        raise ck.fail('route.legs', legs_raw, 'expected a list of legs',
                      'a non-empty list of {speed_mps, waypoints} or {speed_mps, pattern, ...}')
    legs = []
    for i, leg in enumerate(legs_raw):
        where = f'route.legs[{i}]'
        if not isinstance(leg, dict):
            raise ck.fail(where, leg, 'expected a mapping', 'speed_mps and waypoints or pattern')
        speed = ck.number(f'{where}.speed_mps', 'speed_mps', ck.required(where, leg, 'speed_mps'))
        if 'pattern' in leg:
            pattern = leg['pattern']
            if pattern not in PATTERNS:
                raise ck.fail(f'{where}.pattern', pattern, 'unknown pattern', ', '.join(PATTERNS))
            allowed = ('speed_mps', 'pattern') + _PATTERN_KEYS[pattern]
            ck.keys(where, leg, allowed)
            kwargs = {}
            for key in _PATTERN_KEYS[pattern]:
                if key not in leg:
                    continue
                value = leg[key]
                if key in _POINT_KEYS:
                    kwargs[key] = _to_grid(ck, f'{where}.{key}', value, frame, georef)
                elif key == 'side':
                    if value not in ('left', 'right'):
                        raise ck.fail(f'{where}.side', value, 'unknown side', 'left, right')
                    kwargs[key] = value
                else:
                    kwargs[key] = ck.number(f'{where}.{key}', key, value)
            waypoints = PATTERNS[pattern](**kwargs)
        else:
            ck.keys(where, leg, ('speed_mps', 'waypoints'))
            raw = ck.required(where, leg, 'waypoints')
            if not isinstance(raw, list) or not raw:
                raise ck.fail(f'{where}.waypoints', raw, 'expected a list of points',
                              'a non-empty list of points')
            waypoints = np.array([_to_grid(ck, f'{where}.waypoints[{j}]', p, frame, georef)
                                  for j, p in enumerate(raw)])
        legs.append((waypoints, speed))
    try:
        return build_route(legs, name=name, hold_s=hold, turn_radius_m=radius)
    except ValueError as err:
        raise ck.error(f'{source}: {err}') from None


def load_route(name_or_path) -> Route:
    """A packaged route (``'acre_demo'``, ``'loop'``, ``'figure8'``, ``'field'``) or a
    route file (YAML, or JSON by the ``.json`` suffix)."""
    from acres_sim.config import ConfigError
    from acres_sim.config.loader import read_document

    text = str(name_or_path)
    path = Path(text)
    if not (path.suffix in ('.yaml', '.yml', '.json') or '/' in text or path.is_file()):
        path = routes_dir() / f'{text}.yaml'
        if not path.is_file():
            raise ConfigError(f'unknown route {text!r}: no file {path}; packaged: '
                              + ', '.join(route_names()))
    source = str(path)
    tree = read_document(path, 'route')
    return route_from_tree(tree, source, default_name=path.stem)
