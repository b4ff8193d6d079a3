"""Reading a route file (``config/routes/<name>.yaml``, or any file of that
form) into a :class:`acres_sim.core.routes.Route`.

A route file is YAML (JSON works too)::

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
grid east.  A route that ends where it starts, heading the way it started, is
closed (:attr:`Route.closed`) and can be driven in laps; the ``loop`` and
``figure8`` patterns are closed.  Geodetic points are converted with the site
georeference given to :func:`load_route` (the packaged ``site.yaml`` by
default).  The first problem stops loading with one :class:`ConfigError` that
names the item, the value, what is allowed and the file.
"""

import difflib
import math
from pathlib import Path

import numpy as np

from acres_sim.config.loader import config_dir, load_config, read_document
from acres_sim.config.records import site_georeference_args
from acres_sim.config.validate import ConfigError
from acres_sim.core.geo.site import FRAMES, SiteGeoreference
from acres_sim.core.routes import PATTERNS, Route, build_route

__all__ = ['DEFAULT_ROUTES', 'load_route', 'packaged_site', 'route_from_tree', 'route_names',
           'routes_dir']

# The route of each vehicle model when a scenario names none.
DEFAULT_ROUTES = {'polaris': 'acre_demo', 'maxxum': 'field'}

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
    return config_dir() / 'routes'


def route_names():
    """Names of the packaged routes (file stems), sorted."""
    return sorted(p.stem for p in routes_dir().glob('*.yaml'))


class _Checker:
    def __init__(self, source):
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


def packaged_site() -> SiteGeoreference:
    """The georeference of the packaged site.yaml (and sensors.yaml)."""
    return SiteGeoreference(*site_georeference_args(load_config(rig=None)))


def route_from_tree(tree, source='<route>', default_name='route', site=None) -> Route:
    """A :class:`Route` from the parsed content of a route file (checked);
    ``site``: the georeference of geodetic points (None: :func:`packaged_site`)."""
    ck = _Checker(source)
    if not isinstance(tree, dict) or 'route' not in tree or len(tree) != 1:
        raise ck.error(f'{source}: expected a mapping with the only key "route" at the top')
    body = tree['route']
    ck.keys('route', body, _TOP_KEYS)
    name = body.get('name', default_name)
    if not isinstance(name, str) or not name.strip():
        raise ck.fail('route.name', name, 'expected a name', 'a non-empty string')
    frame = body.get('frame', _GRID)
    frames = (_GRID,) + tuple(FRAMES)
    if frame not in frames:
        raise ck.fail('route.frame', frame, 'unknown frame', ', '.join(frames))
    georef = None
    if frame != _GRID:
        georef = site if site is not None else packaged_site()
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


def load_route(name_or_path, site=None) -> Route:
    """A packaged route (``'acre_demo'``, ``'loop'``, ``'figure8'``, ``'field'``, ...)
    or a route file (YAML, or JSON by the ``.json`` suffix); ``site``: the
    georeference of geodetic points (None: the packaged one)."""
    text = str(name_or_path)
    path = Path(text)
    if not (path.suffix in ('.yaml', '.yml', '.json') or '/' in text or path.is_file()):
        path = routes_dir() / f'{text}.yaml'
        if not path.is_file():
            raise ConfigError(f'unknown route {text!r}: no file {path}; packaged: '
                              + ', '.join(route_names()))
    source = str(path)
    tree = read_document(path, 'route')
    return route_from_tree(tree, source, default_name=path.stem, site=site)
