"""Terrain files (acres_sim.config.terrain), the packaged ACRE terrain, and how
a run chooses its terrain and vibration (scenario, options, command line, the
drivers).

The roughness maths (acres_sim.core.roughness) is not under test here: its
two grid functions are replaced by simple stand-ins whose results are known
-- a seeded normal tile, and each node's factor that of the last zone whose
polygon holds it (matplotlib's point-in-polygon test) -- so that the factors
show which zones and classes the terrain file gives.  The references are
independent of the loader: matplotlib for the polygons, scipy's bilinear
interpolation for the slopes, the ISO 8608 class means of the standard."""

import json
import math
from pathlib import Path
import subprocess
import sys

from matplotlib.path import Path as Polygon
import numpy as np
import pytest
from scipy.interpolate import RegularGridInterpolator
import yaml

from acres_sim.cli import main
from acres_sim.config import ConfigError, load_config
from acres_sim.config.options import vibration_overrides
from acres_sim.config.routes import load_route
from acres_sim.config.scenario import read_scenario
from acres_sim.config.sensor_records import vibration_switches
from acres_sim.config.terrain import (TILE_SIZE, TILE_SPACING_M, load_terrain, read_terrain,
                                      terrain_from_tree, terrain_names)
from acres_sim.core import roughness
from acres_sim.core.vibration import VibrationSwitches
from acres_sim.rig import RigOptions, rig_nodes

ROOT = Path(__file__).resolve().parents[1]
ACRE = ROOT / 'config' / 'terrains' / 'acre.yaml'

# ISO 8608:2016, Table: the geometric mean of G_d(n0) of each class [m^3] at
# n0 = 0.1 cycles/m, 16e-6 * 4**k; the amplitude factor against G_d = 1e-6 m^3.
ISO_MEAN_GD = {'A': 16e-6, 'B': 64e-6, 'C': 256e-6, 'D': 1024e-6, 'E': 4096e-6}
FACTOR = {name: math.sqrt(gd / 1e-6) for name, gd in ISO_MEAN_GD.items()}
FACTOR['smooth'] = 0.0


@pytest.fixture
def stand_ins(monkeypatch):
    """The roughness grid functions replaced by stand-ins; returns their calls."""
    calls = {'tile': [], 'scale': []}

    def tile(seed, size=512, spacing_m=0.25):
        calls['tile'].append((seed, size, spacing_m))
        return 0.002 * np.random.default_rng(seed).standard_normal((size, size))   # ~ a unit tile

    def scale_grid(x0_m, y0_m, spacing_m, nx, ny, zones, default_scale, blend_m):
        calls['scale'].append((x0_m, y0_m, spacing_m, nx, ny, zones, default_scale, blend_m))
        xx, yy = np.meshgrid(x0_m + spacing_m * np.arange(nx), y0_m + spacing_m * np.arange(ny))
        out = np.full((ny, nx), float(default_scale))
        points = np.column_stack([xx.ravel(), yy.ravel()])
        for polygon, scale in zones:          # later ones over earlier ones
            inside = Polygon(polygon).contains_points(points).reshape(ny, nx)
            out[inside] = scale
        return out

    monkeypatch.setattr(roughness, 'roughness_tile', tile)
    monkeypatch.setattr(roughness, 'roughness_scale_grid', scale_grid)
    return calls


def small_tree(**changes):
    """A valid 3 x 2 terrain with one zone; ``changes`` replace parts by path
    ('grid.heights_m', 'roughness.zones', ...)."""
    tree = {'terrain': {
        'name': 'small', 'description': 'A test plot.',
        'grid': {'x0_m': 0.0, 'y0_m': 0.0, 'spacing_m': 5.0,
                 'heights_m': [[0.0, 0.5, 1.0], [0.25, 0.75, 1.25]]},
        'roughness': {'default_class': 'B', 'blend_m': 2.0, 'zones': [
            {'name': 'plot', 'class': 'D', 'polygon': [[4.0, -1.0], [11.0, -1.0], [11.0, 6.0],
                                                       [4.0, 6.0]]}]}}}
    for path, value in changes.items():
        node = tree['terrain']
        *parents, leaf = path.split('.')
        for name in parents:
            node = node[name]
        if value is None:
            del node[leaf]
        else:
            node[leaf] = value
    return tree


def write(folder, tree, name='terrain.yaml'):
    path = Path(folder) / name
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


# --------------------------------------------------------------------------- loading


def test_flat_is_no_terrain():
    assert read_terrain('flat') is None
    assert load_terrain('flat', 42) is None


def test_a_small_terrain_is_built_from_its_file(tmp_path, stand_ins):
    path = write(tmp_path, small_tree())
    terrain = load_terrain(str(path), seed=9)
    assert (terrain.name, terrain.description, terrain.roughness_seed) == ('small', 'A test plot.',
                                                                           9)
    field = terrain.field
    assert (field.x0_m, field.y0_m, field.spacing_m) == (0.0, 0.0, 5.0)
    assert field.heights_m.tolist() == [[0.0, 0.5, 1.0], [0.25, 0.75, 1.25]]
    # the zone covers the nodes at x = 5 and 10; the default (B) the nodes at x = 0
    assert field.roughness_scale.tolist() == [[FACTOR['B'], FACTOR['D'], FACTOR['D']]] * 2
    assert stand_ins['tile'] == [(9, TILE_SIZE, TILE_SPACING_M)]
    assert field.tile_m.shape == (TILE_SIZE, TILE_SIZE) and field.tile_spacing_m == 0.25
    assert stand_ins['scale'][0][7] == 2.0                       # blend_m
    # the file's own seed wins over the run's
    seeded = load_terrain(str(write(tmp_path, small_tree(**{'roughness.seed': 3}), 's.yaml')), 9)
    assert seeded.roughness_seed == 3 and stand_ins['tile'][-1][0] == 3
    # without roughness: smooth everywhere
    bare = load_terrain(str(write(tmp_path, small_tree(roughness=None), 'b.yaml')), 9)
    assert not bare.field.roughness_scale.any()
    assert bare.name == 'small'
    assert load_terrain(str(write(tmp_path, small_tree(name=None), 'plot_7.yaml')), 9).name \
        == 'plot_7'


def test_the_digest_is_the_grounds(tmp_path, stand_ins):
    first = load_terrain(str(write(tmp_path, small_tree())), 9)
    # the same content from a JSON file, with another description: the same ground
    other = small_tree(description='Said otherwise.')
    json_path = tmp_path / 'same.json'
    json_path.write_text(json.dumps(other))
    assert load_terrain(str(json_path), 9).digest == first.digest
    assert len(first.digest) == 64 and int(first.digest, 16) >= 0
    # another seed, height, class or zone corner: another ground
    changed = [small_tree(**{'grid.heights_m': [[0.0, 0.5, 1.0], [0.25, 0.75, 1.5]]}),
               small_tree(**{'roughness.default_class': 'C'}),
               small_tree(**{'roughness.zones': [{'name': 'plot', 'class': 'D', 'polygon': [
                   [4.0, -1.0], [11.0, -1.0], [11.0, 6.5], [4.0, 6.0]]}]})]
    digests = {load_terrain(str(write(tmp_path, tree, f'c{i}.yaml')), 9).digest
               for i, tree in enumerate(changed)}
    digests.add(load_terrain(str(write(tmp_path, small_tree())), 10).digest)
    assert len(digests) == 4 and first.digest not in digests


def test_the_packaged_acre_terrain(stand_ins):
    assert terrain_names() == ['acre']
    spec = read_terrain('acre')
    assert spec.source == str(ACRE)
    h = spec.heights_m
    assert h.shape == (61, 61) and np.isfinite(h).all()
    assert (spec.x0_m, spec.y0_m, spec.spacing_m) == (-300.0, -200.0, 10.0)
    assert (spec.x0_m + 60 * spec.spacing_m, spec.y0_m + 60 * spec.spacing_m) == (300.0, 400.0)
    assert h[20, 30] == 0.0                                       # the tile origin
    assert 1.0 <= h.max() - h.min() <= 3.0                        # relief of a till plain
    terrain = load_terrain('acre', 42)
    assert terrain.roughness_seed == 42                           # the run's: none in the file
    assert terrain.digest == load_terrain('acre', 42).digest      # stable
    # pinned: a change of the file (or of what the digest covers) must be meant
    assert terrain.digest == '18d7f5449a7931620893ce22b49386f280d5f04573f6c390629f9ea07e7ba2b9'


def node_scale(terrain, x, y):
    """The roughness factor at the node (x, y) of the terrain's grid."""
    f = terrain.field
    i, j = round((x - f.x0_m) / f.spacing_m), round((y - f.y0_m) / f.spacing_m)
    return f.roughness_scale[j, i]


@pytest.mark.parametrize('x, y, kind', [
    (0.0, 0.0, 'smooth'),          # the garage floor (the default spawn)
    (40.0, -20.0, 'smooth'),       # the machine shed floor
    (-30.0, 30.0, 'A'),            # the yard by the office
    (80.0, -60.0, 'A'),            # the yard by the grain bins
    (110.0, 30.0, 'B'),            # the farm lane (acre_demo, x = 110)
    (110.0, -20.0, 'B'),
])
def test_the_yard_and_the_lane_are_smooth(stand_ins, x, y, kind):
    assert node_scale(load_terrain('acre', 42), x, y) == FACTOR[kind]


@pytest.mark.parametrize('route', ['field', 'north_field', 'west_field', 'loop', 'figure8'])
def test_the_fields_are_rough(stand_ins, route):
    """Every grid node within 5 m of a field route: ISO 8608 class C or D."""
    terrain = load_terrain('acre', 42)
    xy = load_route(route).xy
    f = terrain.field
    x = f.x0_m + f.spacing_m * np.arange(f.heights_m.shape[1])
    y = f.y0_m + f.spacing_m * np.arange(f.heights_m.shape[0])
    xx, yy = np.meshgrid(x, y)
    near = np.zeros(xx.shape, bool)
    for px, py in xy[::10]:
        near |= np.hypot(xx - px, yy - py) < 5.0
    assert near.sum() >= 4
    assert set(f.roughness_scale[near].tolist()) <= {FACTOR['C'], FACTOR['D']}


def heights_of(spec):
    x = spec.x0_m + spec.spacing_m * np.arange(spec.heights_m.shape[1])
    y = spec.y0_m + spec.spacing_m * np.arange(spec.heights_m.shape[0])
    return RegularGridInterpolator((y, x), spec.heights_m)      # bilinear


@pytest.mark.parametrize('route', ['field', 'north_field', 'west_field', 'loop', 'figure8'])
def test_a_tractor_in_the_fields_tilts_one_to_two_degrees(route):
    """The ground's tilt (the slope of the bilinear height field) along each
    field route: mostly 1 to 2 degrees, never above 2.5."""
    h = heights_of(read_terrain('acre'))
    xy = load_route(route).xy
    d = 0.5
    gx = (h(np.c_[xy[:, 1], xy[:, 0] + d]) - h(np.c_[xy[:, 1], xy[:, 0] - d])) / (2 * d)
    gy = (h(np.c_[xy[:, 1] + d, xy[:, 0]]) - h(np.c_[xy[:, 1] - d, xy[:, 0]])) / (2 * d)
    tilt = np.degrees(np.arctan(np.hypot(gx, gy)))
    assert 1.0 <= np.percentile(tilt, 90) <= 2.3, np.percentile(tilt, 90)
    assert 0.7 <= tilt.mean() <= 2.0 and tilt.max() <= 2.5, (tilt.mean(), tilt.max())


def test_the_yard_is_level_and_the_fields_slopes_stay_gentle():
    spec = read_terrain('acre')
    h = spec.heights_m
    x = spec.x0_m + spec.spacing_m * np.arange(h.shape[1])
    y = spec.y0_m + spec.spacing_m * np.arange(h.shape[0])
    xx, yy = np.meshgrid(x, y)
    yard = (xx >= -42) & (xx <= 92) & (yy >= -68) & (yy <= 28)   # buildings and bins
    assert not h[yard].any()
    gy, gx = np.gradient(h, spec.spacing_m)
    fields = np.hypot(gx, gy)[yy >= 90.0]
    assert 0.025 <= fields.max() <= 0.045     # the swale's sides, ~3-4 %


def test_the_script_writes_the_packaged_file(tmp_path):
    out = tmp_path / 'acre.yaml'
    subprocess.run([sys.executable, str(ROOT / 'tools' / 'make_acre_terrain.py'), '--out',
                    str(out)], check=True, capture_output=True, timeout=60)
    assert out.read_bytes() == ACRE.read_bytes(), 'run tools/make_acre_terrain.py'
    assert 'ILLUSTRATIVE, NOT SURVEYED' in ACRE.read_text().split('terrain:')[0]


def test_the_packaged_terrain_with_the_real_roughness():
    """Once acres_sim.core.roughness is implemented: the field is whole and finite."""
    try:
        terrain = load_terrain('acre', 42)
    except NotImplementedError:
        pytest.skip('acres_sim.core.roughness is still a stub')
    f = terrain.field
    assert f.roughness_scale.shape == f.heights_m.shape
    assert np.isfinite(f.roughness_scale).all() and np.isfinite(f.tile_m).all()
    assert f.tile_m.shape == (TILE_SIZE, TILE_SIZE)
    assert node_scale(terrain, 0.0, 0.0) == 0.0                   # the garage floor
    assert node_scale(terrain, 0.0, 200.0) > node_scale(terrain, -30.0, 30.0)


# --------------------------------------------------------------------------- mistakes


BAD = [
    ({'roughness.zones': [{'class': 'F', 'polygon': [[0, 0], [1, 0], [1, 1]]}]},
     "terrain.roughness.zones[0].class = 'F' (in f.yaml): not one of the choices; allowed: "
     'smooth or A or B or C or D or E'),
    ({'roughness.default_class': 'rough'}, "terrain.roughness.default_class = 'rough'"),
    ({'roughness.zones': [{'class': 'C', 'polygon': [[0, 0], [1, 0]]}]},
     'terrain.roughness.zones[0].polygon = [[0, 0], [1, 0]] (in f.yaml): 2 of them, too few; '
     'allowed: a list of at least 3 corners [x, y]'),
    ({'roughness.zones': [{'class': 'C', 'polygon': [[0, 0], [1, float('nan')], [1, 1]]}]},
     'terrain.roughness.zones[0].polygon[1][1] = nan (in f.yaml): not a finite number'),
    ({'roughness.zones': [{'class': 'C', 'polygon': [[0, 0], [1], [1, 1]]}]},
     'terrain.roughness.zones[0].polygon[1] = [1] (in f.yaml): expected a corner'),
    ({'roughness.zones': [{'class': 'C'}]}, 'terrain.roughness.zones[0].polygon is missing'),
    ({'roughness.zones': [{'polygon': [[0, 0], [1, 0], [1, 1]]}]},
     'terrain.roughness.zones[0].class is missing'),
    ({'roughness.zones': [{'name': 'a', 'class': 'C', 'polygon': [[0, 0], [1, 0], [1, 1]]},
                          {'name': 'a', 'class': 'D', 'polygon': [[0, 0], [1, 0], [1, 1]]}]},
     "terrain.roughness.zones[1].name = 'a' (in f.yaml): the name is already used by "
     'terrain.roughness.zones[0]'),
    ({'roughness.zones': {'class': 'C'}}, 'terrain.roughness.zones = '),
    ({'roughness.seed': -1}, 'terrain.roughness.seed = -1 (in f.yaml): out of range'),
    ({'roughness.blend_m': 'wide'}, "terrain.roughness.blend_m = 'wide'"),
    ({'grid.heights_m': [[0.0, 0.5, 1.0], [0.25, 0.75]]},
     'terrain.grid.heights_m[1] = [0.25, 0.75] (in f.yaml): 2 heights, row 0 has 3; allowed: '
     'rows of equal length (3 heights, as row 0)'),
    ({'grid.heights_m': [[0.0, 0.5, 1.0]]},
     'terrain.grid.heights_m = [[0.0, 0.5, 1.0]] (in f.yaml): 1 of them, too few'),
    ({'grid.heights_m': [[0.0], [1.0]]}, 'terrain.grid.heights_m[0] = [0.0] (in f.yaml): 1 of'),
    ({'grid.heights_m': [[0.0, 0.5, 1.0], [0.25, float('inf'), 1.25]]},
     'terrain.grid.heights_m[1][1] = inf (in f.yaml): not a finite number; allowed: -1000 to '
     '1000 m'),
    ({'grid.heights_m': [[0.0, 0.5, 1.0], [0.25, 1500, 1.25]]},
     'terrain.grid.heights_m[1][1] = 1500 (in f.yaml): out of range'),
    ({'grid.heights_m': [[0.0, 0.5, True], [0.25, 0.75, 1.25]]},
     'terrain.grid.heights_m[0][2] = True (in f.yaml): expected a number'),
    ({'grid.heights_m': [[0.0, 0.5, 1.0], [0.25, '0.75', 1.25]]},
     "terrain.grid.heights_m[1][1] = '0.75' (in f.yaml): expected a number"),
    ({'grid.heights_m': [[0.0, 0.5, 1.0], [0.25, 10**400, 1.25]]},
     'terrain.grid.heights_m[1][1] = 1000000'),
    ({'grid.heights_m': None}, 'terrain.grid.heights_m is missing'),
    ({'grid.spacing_m': None}, 'terrain.grid.spacing_m is missing (in f.yaml); allowed: > 0'),
    ({'grid.spacing_m': 0.0}, 'terrain.grid.spacing_m = 0.0 (in f.yaml): out of range'),
    ({'grid.x0_m': float('nan')}, 'terrain.grid.x0_m = nan'),
    ({'grid': None}, 'terrain.grid is missing'),
    ({'grid.rows': 2}, "unknown key 'terrain.grid.rows' (in f.yaml)"),
    ({'slope': 0.01}, "unknown key 'terrain.slope' (in f.yaml)"),
    ({'roughness.zones': [{'class': 'C', 'polygon': [[0, 0], [1, 0], [1, 1]], 'depth': 1}]},
     "unknown key 'terrain.roughness.zones[0].depth' (in f.yaml)"),
    ({'name': 'flat'}, "terrain.name = 'flat' (in f.yaml): the name of no terrain"),
    ({'name': ' '}, "terrain.name = ' ' (in f.yaml): not a valid value"),
]


@pytest.mark.parametrize('changes, message', BAD, ids=[m.split(' ')[0] for _c, m in BAD])
def test_every_mistake_is_one_line_naming_the_item(changes, message):
    with pytest.raises(ConfigError) as err:
        terrain_from_tree(small_tree(**changes), 'f.yaml')
    text = str(err.value)
    assert message in text and '\n' not in text and len(text) <= 400, text


@pytest.mark.parametrize('tree', [None, [], {'scene': {}}, {'terrain': {}, 'extra': 1},
                                  {'terrain': 'acre'}])
def test_a_file_that_is_no_terrain_is_refused(tree):
    with pytest.raises(ConfigError, match='f.yaml'):
        terrain_from_tree(tree, 'f.yaml')


def test_missing_and_unknown_terrains_are_named(tmp_path):
    missing_file = tmp_path / 'none.yaml'
    with pytest.raises(ConfigError, match=f'cannot read terrain file {missing_file}'):
        load_terrain(str(missing_file), 1)
    with pytest.raises(ConfigError) as err:
        load_terrain('moon', 1)
    assert "unknown terrain 'moon'" in str(err.value) and 'flat, acre' in str(err.value)
    bad = tmp_path / 'bad.yaml'
    bad.write_text('terrain: {grid: [1, 2]\n')
    with pytest.raises(ConfigError, match=f'{bad} is not valid YAML'):
        read_terrain(str(bad))


# --------------------------------------------------------------------------- choosing it


def sim_parameters(rig, options=RigOptions()):
    return rig_nodes(rig, options)[0].parameters


def test_the_default_is_flat_and_only_the_sim_node_has_it():
    nodes = rig_nodes('polaris')
    assert nodes[0].parameters['terrain'] == 'flat'
    assert all('terrain' not in node.parameters for node in nodes[1:])
    assert sim_parameters('polaris', RigOptions(terrain='acre'))['terrain'] == 'acre'


def test_a_scenario_names_its_terrain_relative_to_itself(tmp_path):
    (tmp_path / 'sub').mkdir()
    write(tmp_path / 'sub', small_tree(), 'plot.yaml')
    path = tmp_path / 'sub' / 'scenario.yaml'
    path.write_text(yaml.safe_dump({'terrain': 'plot.yaml', 'vehicles': [
        {'name': 'p', 'model': 'polaris'}]}))
    scenario = read_scenario(path)
    assert scenario.terrain == str(tmp_path / 'sub' / 'plot.yaml')
    assert sim_parameters(str(path))['terrain'] == scenario.terrain
    # the options win: a file relative to the working directory, a name, flat
    other = write(tmp_path, small_tree(), 'other.yaml')
    assert sim_parameters(str(path), RigOptions(terrain=str(other)))['terrain'] == str(other)
    assert sim_parameters(str(path), RigOptions(terrain='flat'))['terrain'] == 'flat'
    for name in ('acre', 'flat'):
        path.write_text(yaml.safe_dump({'terrain': name, 'vehicles': [
            {'name': 'p', 'model': 'polaris'}]}))
        assert read_scenario(path).terrain == name
        assert sim_parameters(str(path))['terrain'] == name


@pytest.mark.parametrize('terrain, message', [
    (3, 'terrain = 3 (in {path}): expected a string'),
    ('', "terrain = '' (in {path}): not a valid value"),
])
def test_a_bad_scenario_terrain_is_named(tmp_path, terrain, message):
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump({'terrain': terrain, 'vehicles': [{'model': 'polaris'}]}))
    with pytest.raises(ConfigError) as err:
        read_scenario(path)
    assert message.format(path=path) in str(err.value)


@pytest.mark.parametrize('terrain, message', [
    ('missing.yaml', 'cannot read terrain file {folder}/missing.yaml'),
    ('moon', "unknown terrain 'moon'"),
    ('broken.yaml', 'terrain.grid.spacing_m = -5'),
])
def test_a_bad_terrain_is_refused_before_the_nodes(tmp_path, terrain, message):
    write(tmp_path, small_tree(**{'grid.spacing_m': -5}), 'broken.yaml')
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump({'terrain': terrain, 'vehicles': [{'model': 'polaris'}]}))
    with pytest.raises(ConfigError) as err:
        rig_nodes(str(path))
    assert message.format(folder=tmp_path) in str(err.value) and '\n' not in str(err.value)
    with pytest.raises(ConfigError):              # from the options as well
        rig_nodes('polaris', RigOptions(terrain=str(tmp_path / terrain)
                                        if terrain.endswith('.yaml') else terrain))


def test_vibration_switches_follow_the_keys():
    assert vibration_switches(load_config(rig='polaris')) == VibrationSwitches(
        engine=False, parked_jitter=False, roughness=True)
    on = load_config(rig='maxxum', overrides={'vibration.engine': True,
                                              'vibration.parked_jitter': True,
                                              'vibration.roughness': False})
    assert vibration_switches(on) == VibrationSwitches(True, True, False)
    assert vibration_overrides('on') == {'vibration.engine': True, 'vibration.parked_jitter': True}
    assert vibration_overrides('off') == {'vibration.engine': False,
                                          'vibration.parked_jitter': False}
    with pytest.raises(ConfigError, match="--vibration 'loud': allowed: on"):
        vibration_overrides('loud')


@pytest.mark.parametrize('argv, engine, jitter', [
    ([], False, False),
    (['--vibration', 'on'], True, True),
    (['--vibration', 'off', '--set', 'vibration.engine=true'], False, False),
    (['--set', 'vibration.parked_jitter=true'], False, True),
])
def test_config_show_takes_vibration(tmp_path, capsys, argv, engine, jitter):
    assert main(['config', 'show', *argv]) == 0
    out = tmp_path / 'shown.yaml'
    out.write_text(capsys.readouterr().out)
    shown = yaml.safe_load(out.read_text())['/**']['ros__parameters']['vibration']
    assert shown == {'engine': engine, 'parked_jitter': jitter, 'roughness': True}


def test_up_takes_terrain_and_vibration_for_every_vehicle(tmp_path, capsys):
    terrain = write(tmp_path, small_tree(), 'plot.yaml')
    folder = tmp_path / 'nodes'
    assert main(['up', '--rig', 'mixed', '--terrain', str(terrain), '--vibration', 'on',
                 '--print-nodes', str(folder)]) == 0
    sim = yaml.safe_load((folder / 'sim_node.yaml').read_text())['/**']['ros__parameters']
    assert sim['terrain'] == str(terrain)
    for name in ('polaris', 'maxxum1', 'maxxum2'):
        assert sim['agents'][name]['vibration'] == {'engine': True, 'parked_jitter': True,
                                                    'roughness': True}
    assert 'terrain' not in (folder / 'polaris.gnss_node.yaml').read_text()
    capsys.readouterr()
    assert main(['up', '--terrain', 'moon', '--print-nodes']) == 2
    err = capsys.readouterr().err
    assert err.startswith("acres-sim: error: unknown terrain 'moon'") and err.count('\n') == 1


def test_record_takes_terrain_and_vibration(monkeypatch, tmp_path, capsys):
    """The recorder gets the options (captured before it runs), and a bad
    terrain ends the command in one line before anything is written."""
    from acres_sim.record import runner

    seen = []

    def capture(request, stop, writers=None):
        seen.append(request)
        raise runner.RecordingStopped('captured')

    monkeypatch.setattr(runner, 'record', capture)
    out = tmp_path / 'run'
    main(['record', '--terrain', 'acre', '--vibration', 'off', '--out', str(out)])
    options = seen[0].options
    assert options.terrain == 'acre'
    assert options.overrides == {'vibration.engine': False, 'vibration.parked_jitter': False}
    capsys.readouterr()
    monkeypatch.undo()
    assert main(['record', '--terrain', str(tmp_path / 'none.yaml'), '--out', str(out),
                 '--duration', '1', '--no-progress']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'cannot read terrain file' in err
    assert not out.exists()


# --------------------------------------------------------------------------- the drivers


@pytest.fixture
def ground_calls(monkeypatch):
    """rig_simulation of both drivers, recording the ground it is given (the
    keyword ``ground`` of the physics)."""
    from acres_sim.pipeline import vehicle
    from acres_sim.record import runner

    calls = []
    real = vehicle.rig_simulation

    def rig_simulation(vehicles, steps, **kwargs):
        calls.append(kwargs)
        return real(vehicles, steps, **kwargs)

    monkeypatch.setattr(runner, 'rig_simulation', rig_simulation)
    try:
        from acres_sim.ros import sim_node
    except ImportError:
        pass
    else:
        monkeypatch.setattr(sim_node, 'rig_simulation', rig_simulation)
    return calls


def test_the_recorder_rides_on_the_terrain(tmp_path, stand_ins, ground_calls):
    from acres_sim.record.runner import RecordRequest, record

    path = write(tmp_path, small_tree(), 'plot.yaml')
    out = tmp_path / 'run'
    episode, _summary = record(RecordRequest('mixed', out, RigOptions(
        duration_s=0.5, terrain=str(path), seed=5), progress=False))
    expected = load_terrain(str(path), 5)
    assert (episode['terrain'], episode['terrain_digest'], episode['terrain_roughness_seed']) \
        == ('small', expected.digest, 5)
    assert episode['options']['terrain'] == str(path)
    assert len(ground_calls) == 3                          # one simulation per vehicle
    for kwargs in ground_calls:
        assert kwargs['ground'].heights_m.tolist() == expected.field.heights_m.tolist()
        assert np.array_equal(kwargs['ground'].tile_m, expected.field.tile_m)
    saved = json.loads((out / 'episode.json').read_text())
    assert saved['terrain_digest'] == expected.digest


def test_a_flat_recording_gets_no_ground(tmp_path, ground_calls):
    from acres_sim.record.runner import RecordRequest, record

    episode, _summary = record(RecordRequest('polaris', tmp_path / 'run', RigOptions(
        duration_s=0.5), progress=False))
    assert (episode['terrain'], episode['terrain_digest']) == ('flat', None)
    assert ground_calls == [{'ground': None}]


@pytest.mark.requires_rclpy
def test_the_sim_node_rides_on_the_terrain(ros_context, tmp_path, stand_ins, ground_calls):
    from rclpy.parameter import Parameter

    from acres_sim.ros.sim_node import SimNode

    path = write(tmp_path, small_tree(), 'plot.yaml')
    parameters = rig_nodes('mixed', RigOptions(terrain=str(path), seed=5, rtf=0.0))[0].parameters
    parameters = {k: v for k, v in parameters.items() if k != 'use_sim_time'}
    node = SimNode(parameter_overrides=[Parameter(n, value=v) for n, v in parameters.items()])
    try:
        expected = load_terrain(str(path), 5)
        assert node.terrain.digest == expected.digest
        assert len(ground_calls) == 3 and all(
            np.array_equal(c['ground'].tile_m, expected.field.tile_m) for c in ground_calls)
        assert node.terrain_text() == f'small ({expected.digest[:12]}, roughness seed 5)'
    finally:
        node.destroy_node()
    ground_calls.clear()
    node = SimNode(parameter_overrides=[Parameter('rtf', value=0.0)])
    try:
        assert node.terrain is None and node.terrain_text() == 'flat'
        assert ground_calls and all(c == {'ground': None} for c in ground_calls)
    finally:
        node.destroy_node()
