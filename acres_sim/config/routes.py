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

from pathlib import Path

import numpy as np

from acres_sim.config.loader import config_dir, load_config, read_document
from acres_sim.config.records import site_georeference_args
from acres_sim.config.schema import NON_BLANK, Key
from acres_sim.config.validate import ConfigError, check, check_keys, missing, value_error
from acres_sim.core.geo.site import FRAMES, SiteGeoreference
from acres_sim.core.routes import PATTERNS, Route, build_route

__all__ = ['DEFAULT_ROUTES', 'LEG_KEYS', 'ROUTE_KEYS', 'load_route', 'packaged_site',
           'route_from_tree', 'route_names', 'routes_dir']

# The route of each vehicle model when a scenario names none.
DEFAULT_ROUTES = {'polaris': 'acre_demo', 'maxxum': 'field'}

_GRID = 'grid'
_LIMIT_M = 1e7      # |coordinate| of a grid point [m]; far beyond any tile

# The fields of ``route`` (``legs`` is a list, read by route_from_tree).
ROUTE_KEYS = {k.name.split('.', 1)[1]: k for k in (
    Key('route.name', 'str', None, 'Name of the route (default: the file stem).',
        pattern=NON_BLANK, pattern_words='a non-empty string'),
    Key('route.frame', 'str', _GRID, 'Frame of the points: grid ENU metres [x, y], or a '
        'geodetic frame of the site, [lat_deg, lon_deg] or [lat_deg, lon_deg, h_m].',
        choices=(_GRID,) + tuple(FRAMES)),
    Key('route.hold_s', 'float', 0.0, 'Time parked at the start.', 's', low=0.0, high=3600.0),
    Key('route.turn_radius_m', 'float', 6.0, 'Radius of the corners.', 'm', low=0.5,
        high=1000.0),
)}

# The fields of a leg (a pattern's fields default to the pattern's own values).
LEG_KEYS = {k.name: k for k in (
    Key('speed_mps', 'float', None, 'Speed along the leg.', 'm/s', low=0.0, low_open=True,
        high=30.0),
    Key('pattern', 'str', None, 'A pattern instead of waypoints.', choices=tuple(PATTERNS)),
    Key('heading_deg', 'float', None, 'Heading of the first side or pass, counter-clockwise '
        'from grid east.', 'deg', low=-360.0, high=360.0),
    Key('length_m', 'float', None, 'Length of a loop or of a field pass.', 'm', low=0.0,
        low_open=True, high=1e5),
    Key('width_m', 'float', None, 'Width of a loop.', 'm', low=0.0, low_open=True, high=1e5),
    Key('size_m', 'float', None, 'Side of each square of a figure eight.', 'm', low=0.0,
        low_open=True, high=1e5),
    Key('spacing_m', 'float', None, 'Distance between field passes.', 'm', low=0.0,
        low_open=True, high=1e4),
    Key('laps', 'int', None, 'Laps of a loop.', low=1, high=1000),
    Key('passes', 'int', None, 'Passes of a field.', low=1, high=1000),
    Key('side', 'str', None, 'The side a loop turns to, or the next field pass lies on.',
        choices=('left', 'right')),
)}
_WAYPOINTS = ('speed_mps', 'waypoints')
_PATTERN_KEYS = {
    'loop': ('origin', 'heading_deg', 'length_m', 'width_m', 'laps', 'side'),
    'figure8': ('center', 'heading_deg', 'size_m'),
    'field': ('start', 'heading_deg', 'length_m', 'passes', 'spacing_m', 'side'),
}
_POINT_KEYS = {'origin', 'center', 'start'}

# The coordinates of a point: grid [x, y], geodetic [lat, lon] or [lat, lon, h].
_GRID_XY = Key('grid coordinate', 'float', None, 'x or y of a grid point.', 'm',
               low=-_LIMIT_M, high=_LIMIT_M)
_GEODETIC = (
    Key('latitude', 'float', None, 'Latitude of a point.', 'deg', low=-90.0, high=90.0),
    Key('longitude', 'float', None, 'Longitude of a point.', 'deg', low=-180.0, high=180.0),
    Key('height', 'float', None, 'Ellipsoidal height of a point.', 'm', low=-_LIMIT_M,
        high=_LIMIT_M),
)


def routes_dir() -> Path:
    """The folder of the packaged route files."""
    return config_dir() / 'routes'


def route_names():
    """Names of the packaged routes (file stems), sorted."""
    return sorted(p.stem for p in routes_dir().glob('*.yaml'))


def _to_grid(item, value, frame, georef, source):
    """A point of the file ([x, y] in grid, [lat, lon] or [lat, lon, h] geodetic) in grid ENU."""
    n_ok = (2,) if frame == _GRID else (2, 3)
    what = '[x, y] in metres' if frame == _GRID else '[lat_deg, lon_deg] (optionally h_m)'
    if not isinstance(value, (list, tuple)) or len(value) not in n_ok:
        raise value_error(item, value, 'expected a point', what, source)
    keys = (_GRID_XY, _GRID_XY) if frame == _GRID else _GEODETIC
    out = [check(k, v, source, f'{item}[{i}]') for i, (k, v) in enumerate(zip(keys, value))]
    if frame == _GRID:
        return out
    lat, lon = out[0], out[1]
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
    if not isinstance(tree, dict) or 'route' not in tree or len(tree) != 1:
        raise ConfigError(f'{source}: expected a mapping with the only key "route" at the top')
    body = check_keys(tree['route'], tuple(ROUTE_KEYS) + ('legs',), 'route', source)
    given = {field: check(k, body[field], source) if field in body else k.default
             for field, k in ROUTE_KEYS.items()}
    frame = given['frame']
    georef = None
    if frame != _GRID:
        georef = site if site is not None else packaged_site()
    if 'legs' not in body:
        raise ConfigError(f'route.legs is missing (in {source}); allowed: {_LEGS}')
    legs_raw = body['legs']
    if not isinstance(legs_raw, list) or not legs_raw:
        raise value_error('route.legs', legs_raw, 'expected a list of legs', _LEGS, source)
    legs = [_leg(f'route.legs[{i}]', leg, frame, georef, source)
            for i, leg in enumerate(legs_raw)]
    try:
        return build_route(legs, name=given['name'] or default_name, hold_s=given['hold_s'],
                           turn_radius_m=given['turn_radius_m'])
    except ValueError as err:
        raise ConfigError(f'{source}: {err}') from None


_LEGS = 'a non-empty list of {speed_mps, waypoints} or {speed_mps, pattern, ...}'


def _leg(where, leg, frame, georef, source):
    """(waypoints, speed) of the leg at ``where``."""
    if not isinstance(leg, dict):
        raise value_error(where, leg, 'expected a mapping', 'speed_mps and waypoints or pattern',
                          source)
    speed_key = LEG_KEYS['speed_mps']
    if 'speed_mps' not in leg:
        raise missing(speed_key, source, f'{where}.speed_mps')
    speed = check(speed_key, leg['speed_mps'], source, f'{where}.speed_mps')
    if 'pattern' not in leg:
        check_keys(leg, _WAYPOINTS, where, source)
        if 'waypoints' not in leg:
            raise ConfigError(f'{where}.waypoints is missing (in {source}); allowed: a '
                              'non-empty list of points')
        raw = leg['waypoints']
        if not isinstance(raw, list) or not raw:
            raise value_error(f'{where}.waypoints', raw, 'expected a list of points',
                              'a non-empty list of points', source)
        return np.array([_to_grid(f'{where}.waypoints[{j}]', p, frame, georef, source)
                         for j, p in enumerate(raw)]), speed
    pattern = check(LEG_KEYS['pattern'], leg['pattern'], source, f'{where}.pattern')
    fields = _PATTERN_KEYS[pattern]
    check_keys(leg, ('speed_mps', 'pattern') + fields, where, source)
    kwargs = {}
    for field in fields:
        if field in _POINT_KEYS and field in leg:
            kwargs[field] = _to_grid(f'{where}.{field}', leg[field], frame, georef, source)
        elif field in leg:
            kwargs[field] = check(LEG_KEYS[field], leg[field], source, f'{where}.{field}')
    return PATTERNS[pattern](**kwargs), speed


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
