"""Tests of acres_sim.core.roughness and of the ground sampler in core.terrain.

References used (none of them is the module's own output echoed back):

* ISO 8608 (1995): class C has G_d(0.1 cycles/m) = 256e-6 m^3 and the
  classes step by a factor of 4 in PSD (6 dB); waviness 2;
* scipy.signal.periodogram of the tile's profiles (rows, columns and the
  periodic diagonals), and Parseval's sum of G_d over the tile's lines;
* the isotropic 2-D spectrum derived by hand, c * nu**-3 with
  c = G_d(n0) * n0**2 / 4, against the tile's DFT over that of the white
  noise drawn independently from the terrain_roughness stream;
* matplotlib.path.Path.contains_points for the zones' inside test, the
  smoothstep of the distance to a straight edge written out here;
* scipy.interpolate.RegularGridInterpolator and central finite differences
  for core.terrain.ground_height.

Sampling tolerances: one tile's profile mean square scatters by about 30 %
(most of it sits in the few longest waves), so the variance test averages 24
tiles (about 6 % standard error) and allows 20 %; the PSD tests average 4
tiles, where the octave means scatter by about 4 %, and allow 15 %.
"""

import math

from matplotlib.path import Path
import numpy as np
import pytest
from scipy.interpolate import RegularGridInterpolator
from scipy.signal import periodogram

from acres_sim.core.rng import (
    STREAMS, TERRAIN_ROUGHNESS, AgentOffset, make_stream, stream_seed,
)
from acres_sim.core.roughness import class_scale, roughness_scale_grid, roughness_tile
from acres_sim.core.terrain import TerrainField, flat_field, ground_height

SIZE = 512
SPACING = 0.25
LENGTH = SIZE * SPACING               # 128 m
NYQUIST = 0.5 / SPACING               # 2 cycles/m
N0 = 0.1                              # ISO 8608 reference frequency [cycles/m]
GD_UNIT = 1e-6                        # the unit tile's G_d(n0) [m^3]
GD_CLASS_C = 256e-6                   # ISO 8608 class C, geometric mean [m^3]
OCTAVES = [(0.05, 0.1), (0.1, 0.2), (0.2, 0.4), (0.4, 0.8), (0.8, 1.0)]


def iso_gd(n, gd_n0):
    """ISO 8608 displacement PSD, waviness 2 [m^3]."""
    return gd_n0 * (n / N0) ** -2.0


def nyquist_circle_factor(n):
    """The documented loss of a profile's PSD from the cut at the Nyquist circle."""
    return np.sqrt(1.0 - (n / NYQUIST) ** 2)


def diagonals(tile):
    """The tile's periodic diagonals (row j0 + k, column k), one per row."""
    m = tile.shape[0]
    k = np.arange(m)
    return tile[(k[:, None] + k[None, :]) % m, k[None, :]]


def profile_psds(tiles):
    """Mean one-sided periodograms of the rows, columns and diagonals of ``tiles``:
    {direction: (n [cycles/m], PSD [m^3])}."""
    out = {}
    for name, spacing in (('rows', SPACING), ('columns', SPACING),
                          ('diagonals', SPACING * math.sqrt(2.0))):
        total = 0.0
        for tile in tiles:
            data = {'rows': tile, 'columns': tile.T, 'diagonals': diagonals(tile)}[name]
            n, p = periodogram(data, fs=1.0 / spacing, window='boxcar',
                               detrend='constant', axis=1)
            total = total + p.mean(axis=0)
        out[name] = (n, total / len(tiles))
    return out


def band(n, low, high):
    return (n >= low) & (n <= high)


def log_mean(ratio):
    return float(np.exp(np.mean(np.log(ratio))))


@pytest.fixture(scope='module')
def class_c_tiles():
    return [class_scale('C') * roughness_tile(seed) for seed in (3, 4, 5, 6)]


@pytest.fixture(scope='module')
def class_c_psds(class_c_tiles):
    return profile_psds(class_c_tiles)


# ---------------------------------------------------------------------------
# ISO classes
# ---------------------------------------------------------------------------

def test_class_scales_follow_iso_8608():
    # PSD ratio to the unit tile = scale**2; 6 dB (factor 4) per class.
    assert class_scale('C') ** 2 * GD_UNIT == pytest.approx(GD_CLASS_C, rel=1e-12)
    for lower, upper in zip('ABCD', 'BCDE'):
        assert (class_scale(upper) / class_scale(lower)) ** 2 == pytest.approx(4.0, rel=1e-12)
    assert class_scale('A') ** 2 * GD_UNIT == pytest.approx(16e-6, rel=1e-12)
    assert class_scale('E') ** 2 * GD_UNIT == pytest.approx(4096e-6, rel=1e-12)


@pytest.mark.parametrize('name', ['F', 'c', '', None, 3])
def test_unknown_class_is_refused_with_the_list(name):
    with pytest.raises(ValueError, match='A, B, C, D, E'):
        class_scale(name)


# ---------------------------------------------------------------------------
# The tile's spectrum
# ---------------------------------------------------------------------------

@pytest.mark.parametrize('direction', ['rows', 'columns', 'diagonals'])
def test_profile_psd_is_iso_class_c(class_c_psds, direction):
    n, p = class_c_psds[direction]
    mid = band(n, 0.05, 1.0)
    gd = iso_gd(n[mid], GD_CLASS_C)
    # Over the mid band: within +-30 % of G_d in log-mean, slope -2.
    assert log_mean(p[mid] / gd) == pytest.approx(1.0, abs=0.30)
    slope = np.polyfit(np.log(n[mid]), np.log(p[mid]), 1)[0]
    assert slope == pytest.approx(-2.0, abs=0.1)
    # Octave by octave within 15 % of G_d times the Nyquist-circle factor.
    for low, high in OCTAVES:
        sel = band(n, low, high)
        expected = iso_gd(n[sel], GD_CLASS_C) * nyquist_circle_factor(n[sel])
        assert log_mean(p[sel] / expected) == pytest.approx(1.0, abs=0.15), (low, high)


def test_class_d_sits_6_db_above_class_c(class_c_tiles, class_c_psds):
    tiles_d = [t * (class_scale('D') / class_scale('C')) for t in class_c_tiles]
    n, p_d = profile_psds(tiles_d)['rows']
    _, p_c = class_c_psds['rows']
    mid = band(n, 0.05, 1.0)
    assert 10.0 * np.log10(p_d[mid] / p_c[mid]) == pytest.approx(
        np.full(mid.sum(), 10.0 * np.log10(4.0)), abs=1e-9)
    assert log_mean(p_d[mid] / iso_gd(n[mid], 1024e-6)) == pytest.approx(1.0, abs=0.30)


def test_rows_columns_and_diagonals_agree(class_c_psds):
    n, rows = class_c_psds['rows']
    _, columns = class_c_psds['columns']
    mid = band(n, 0.05, 1.0)
    assert log_mean(rows[mid] / columns[mid]) == pytest.approx(1.0, abs=0.05)
    for low, high in OCTAVES:
        sel = band(n, low, high)
        assert log_mean(rows[sel] / columns[sel]) == pytest.approx(1.0, abs=0.15)
    # The diagonals sample at sqrt(2) * spacing: compare on the rows' lines.
    nd, diag = class_c_psds['diagonals']
    diag_on_rows = np.interp(np.log(n[mid]), np.log(nd[1:]), np.log(diag[1:]))
    assert log_mean(np.exp(diag_on_rows) / rows[mid]) == pytest.approx(1.0, abs=0.10)


def test_tile_spectrum_is_the_derived_isotropic_filter_of_the_stream_noise():
    # The tile's DFT over the DFT of the stream's first size**2 Gaussians is the
    # real gain sqrt(c nu**-3) / spacing, c = G_d(n0) n0**2 / 4, inside the
    # Nyquist circle and zero at nu = 0 and outside it.
    size, spacing, seed = 64, 0.5, 11
    noise = make_stream(seed, TERRAIN_ROUGHNESS).gaussians(size * size).reshape(size, size)
    tile = roughness_tile(seed, size=size, spacing_m=spacing)
    ratio = np.fft.fft2(tile) / np.fft.fft2(noise)
    nu = np.hypot(*np.meshgrid(np.fft.fftfreq(size, spacing), np.fft.fftfreq(size, spacing)))
    kept = (nu > 0.0) & (nu <= 0.5 / spacing)
    c = GD_UNIT * N0 ** 2 / 4.0
    assert np.allclose(ratio[kept], np.sqrt(c * nu[kept] ** -3.0) / spacing, rtol=1e-8, atol=0)
    assert np.max(np.abs(np.fft.fft2(tile)[~kept])) < 1e-12 * np.max(np.abs(np.fft.fft2(tile)))


def test_profile_mean_square_is_g_d_summed_over_the_band():
    # Parseval: a profile's mean square about its mean is the sum of its
    # one-sided PSD over the lines n_k = k / L, k = 1 .. size / 2, times 1 / L.
    lines = np.arange(1, SIZE // 2 + 1) / LENGTH
    expected = np.sum(iso_gd(lines, GD_UNIT) / LENGTH)
    ratios = []
    for seed in range(100, 124):
        tile = roughness_tile(seed)
        mean_square = 0.5 * (np.var(tile, axis=1).mean() + np.var(tile, axis=0).mean())
        ratios.append(mean_square / expected)
    assert np.mean(ratios) == pytest.approx(1.0, abs=0.20)
    # The class scale multiplies the rms.
    tile = roughness_tile(100)
    assert np.std(class_scale('C') * tile) == pytest.approx(16.0 * np.std(tile), rel=1e-12)


def test_tile_is_zero_mean_float64_and_periodic():
    tile = roughness_tile(8)
    assert tile.shape == (SIZE, SIZE) and tile.dtype == np.float64
    assert abs(tile.mean()) < 1e-12 * tile.std()
    # Across the wrap the surface is as continuous as anywhere inside.
    inside_x = np.diff(tile, axis=1).std()
    inside_y = np.diff(tile, axis=0).std()
    assert (tile[:, 0] - tile[:, -1]).std() == pytest.approx(inside_x, rel=0.2)
    assert (tile[0, :] - tile[-1, :]).std() == pytest.approx(inside_y, rel=0.2)


def test_tile_is_deterministic_per_seed():
    a = roughness_tile(42)
    assert a.tobytes() == roughness_tile(42).tobytes()
    b = roughness_tile(43)
    assert a.tobytes() != b.tobytes()
    # Unrelated surfaces: the slopes (many independent short waves, unlike the
    # heights, which a few long waves dominate) are uncorrelated.
    slopes_a, slopes_b = np.diff(a, axis=1).ravel(), np.diff(b, axis=1).ravel()
    assert abs(np.corrcoef(slopes_a, slopes_b)[0, 1]) < 0.02


@pytest.mark.parametrize('size, spacing', [(1, 0.25), (16, 0.0), (16, -1.0), (16, math.nan)])
def test_tile_refuses_bad_grids(size, spacing):
    with pytest.raises(ValueError):
        roughness_tile(1, size=size, spacing_m=spacing)


# ---------------------------------------------------------------------------
# The stream
# ---------------------------------------------------------------------------

def test_stream_table_keeps_the_old_streams_and_adds_a_unique_one():
    old = {'gnss_errors': (0, 1, AgentOffset.IF_ALL),
           'imu': (1009, 2, AgentOffset.IF_ALL),
           'gnss_constellation': (3027, 4, AgentOffset.NEVER),
           'ins': (5045, 6, AgentOffset.ALWAYS)}
    for name, value in old.items():
        spec = STREAMS[name]
        assert (spec.seed_offset, spec.sequence, spec.agent_offset) == value
    assert STREAMS['terrain_roughness'] is TERRAIN_ROUGHNESS
    assert (TERRAIN_ROUGHNESS.seed_offset, TERRAIN_ROUGHNESS.sequence) == (7063, 8)
    sequences = [s.sequence for s in STREAMS.values()]
    assert len(set(sequences)) == len(sequences)
    # The ground is shared: the stream does not move with the vehicle.
    assert stream_seed(42, 'terrain_roughness', 5) == 42 + 7063
    assert stream_seed(42, 'terrain_roughness', 5, offset_all_streams=False) == 42 + 7063


# ---------------------------------------------------------------------------
# Roughness zones
# ---------------------------------------------------------------------------

# A concave (L-shaped) polygon, clockwise, and a triangle over part of it; the
# vertices are off the grid so that no node lies on an edge.
L_SHAPE = np.array([[1.13, 1.07], [1.13, 8.61], [3.97, 8.61], [3.97, 4.03],
                    [9.71, 4.03], [9.71, 1.07]])[::-1]
TRIANGLE = np.array([[2.31, 0.37], [7.79, 6.93], [0.41, 5.17]])
GRID = dict(x0_m=-0.5, y0_m=-0.25, spacing_m=0.25, nx=48, ny=40)


def grid_points():
    x = GRID['x0_m'] + GRID['spacing_m'] * np.arange(GRID['nx'])
    y = GRID['y0_m'] + GRID['spacing_m'] * np.arange(GRID['ny'])
    px, py = np.meshgrid(x, y)
    return np.column_stack([px.ravel(), py.ravel()])


def contains(polygon):
    return Path(polygon).contains_points(grid_points()).reshape(GRID['ny'], GRID['nx'])


def test_hard_edges_match_matplotlib_and_later_zones_win():
    got = roughness_scale_grid(**GRID, zones=[(L_SHAPE, 2.0), (TRIANGLE, 0.0)],
                               default_scale=0.5, blend_m=0.0)
    expected = np.full((GRID['ny'], GRID['nx']), 0.5)
    expected[contains(L_SHAPE)] = 2.0
    expected[contains(TRIANGLE)] = 0.0
    assert got.shape == (GRID['ny'], GRID['nx']) and got.dtype == np.float64
    assert np.array_equal(got, expected)
    assert (contains(L_SHAPE) & contains(TRIANGLE)).any()
    # The other order: the L shape over the triangle.
    swapped = roughness_scale_grid(**GRID, zones=[(TRIANGLE, 0.0), (L_SHAPE, 2.0)],
                                   default_scale=0.5, blend_m=0.0)
    expected = np.full((GRID['ny'], GRID['nx']), 0.5)
    expected[contains(TRIANGLE)] = 0.0
    expected[contains(L_SHAPE)] = 2.0
    assert np.array_equal(swapped, expected)


def test_no_zones_is_the_default_everywhere():
    got = roughness_scale_grid(**GRID, zones=[], default_scale=1.5, blend_m=3.0)
    assert np.array_equal(got, np.full((GRID['ny'], GRID['nx']), 1.5))


def smoothstep(t):
    t = np.clip(t, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def test_blended_edge_is_a_smoothstep_centred_on_the_edge():
    # A zone whose only nearby edge is the line x = 5.05: along a row the
    # factor is the smoothstep of the distance to that line.
    edge, blend, low, high = 5.05, 2.0, 0.25, 4.0
    zone = np.array([[edge, -100.0], [100.0, -100.0], [100.0, 100.0], [edge, 100.0]])
    x0, spacing, nx = 0.0, 0.05, 201
    got = roughness_scale_grid(x0, -1.0, spacing, nx, 3, [(zone, high)], low, blend)
    x = x0 + spacing * np.arange(nx)
    expected = low + (high - low) * smoothstep((x - edge) / blend + 0.5)
    for row in got:
        assert np.allclose(row, expected, rtol=0, atol=1e-12)
    assert np.all(np.diff(got[1]) >= 0.0)
    assert got[1, x <= edge - blend / 2].max() == low
    assert got[1, x >= edge + blend / 2].min() == high
    # Centred: at the edge half way (a node 0.05 m either side of it).
    assert np.interp(edge, x, got[1]) == pytest.approx(0.5 * (low + high), abs=1e-3)


def test_blended_disc_changes_monotonically_with_the_radius():
    angles = np.linspace(0.0, 2.0 * np.pi, 96, endpoint=False)
    disc = np.column_stack([5.0 + 3.0 * np.cos(angles), 5.0 + 3.0 * np.sin(angles)])
    got = roughness_scale_grid(0.0, 0.0, 0.1, 101, 101, [(disc, 0.0)], 3.0, 1.5)
    centre_row = got[50, 50:]                     # from the centre outwards
    assert np.all(np.diff(centre_row) >= 0.0)
    assert centre_row[0] == 0.0 and centre_row[-1] == 3.0
    interior = (centre_row > 0.0) & (centre_row < 3.0)
    radius = 0.1 * np.arange(51)
    assert radius[interior].min() > 3.0 - 0.75 - 0.05
    assert radius[interior].max() < 3.0 + 0.75 + 0.05
    # The hard-edge version against matplotlib (moved off the nodes: a node on
    # the boundary may go either way).
    disc = disc + [0.0131, -0.0173]
    hard = roughness_scale_grid(0.0, 0.0, 0.1, 101, 101, [(disc, 0.0)], 3.0, 0.0)
    x = 0.1 * np.arange(101)
    px, py = np.meshgrid(x, x)
    inside = Path(disc).contains_points(np.column_stack([px.ravel(), py.ravel()]))
    assert np.array_equal(hard, np.where(inside.reshape(101, 101), 0.0, 3.0))


@pytest.mark.parametrize('zones, blend', [
    ([(np.array([[0.0, 0.0], [1.0, 1.0]]), 1.0)], 0.0),        # two vertices
    ([(np.zeros((4, 3)), 1.0)], 0.0),                           # not (k, 2)
    ([(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, math.nan]]), 1.0)], 0.0),
    ([(TRIANGLE, -1.0)], 0.0),                                  # negative scale
    ([(TRIANGLE, 1.0)], -0.5),                                  # negative blend
])
def test_bad_zones_are_refused(zones, blend):
    with pytest.raises(ValueError):
        roughness_scale_grid(**GRID, zones=zones, default_scale=1.0, blend_m=blend)


# ---------------------------------------------------------------------------
# core.terrain.ground_height
# ---------------------------------------------------------------------------

def make_field(seed=5):
    rng = np.random.default_rng(seed)
    heights = rng.normal(0.0, 2.0, (7, 9))
    scale = rng.uniform(0.0, 3.0, (7, 9))
    tile = rng.normal(0.0, 0.05, (16, 16))
    return TerrainField(-10.0, 5.0, 2.5, heights, scale, tile, 0.5)


def grid_interpolator(field, grid):
    ny, nx = grid.shape
    y = field.y0_m + field.spacing_m * np.arange(ny)
    x = field.x0_m + field.spacing_m * np.arange(nx)
    return RegularGridInterpolator((y, x), grid, method='linear')


def reference_height(field, x, y, roughness_on):
    """Bilinear height (edge values outside) plus, when on, the bilinear scale
    times the tile interpolated periodically."""
    ny, nx = field.heights_m.shape
    xc = np.clip(x, field.x0_m, field.x0_m + field.spacing_m * (nx - 1))
    yc = np.clip(y, field.y0_m, field.y0_m + field.spacing_m * (ny - 1))
    z = grid_interpolator(field, field.heights_m)(np.column_stack([yc, xc]))
    if roughness_on:
        scale = grid_interpolator(field, field.roughness_scale)(np.column_stack([yc, xc]))
        m = field.tile_m.shape[0]
        period = m * field.tile_spacing_m
        wrapped = np.pad(field.tile_m, ((0, 1), (0, 1)), mode='wrap')
        axis = field.tile_spacing_m * np.arange(m + 1)
        tile = RegularGridInterpolator((axis, axis), wrapped, method='linear')
        z = z + scale * tile(np.column_stack([np.mod(y, period), np.mod(x, period)]))
    return z


def sample_points(field, count, margin, seed=9):
    """Random points over the grid and ``margin`` m beyond it, none within
    1e-3 m of a grid or tile line (where the slopes jump)."""
    rng = np.random.default_rng(seed)
    ny, nx = field.heights_m.shape
    x = rng.uniform(field.x0_m - margin, field.x0_m + field.spacing_m * (nx - 1) + margin,
                    4 * count)
    y = rng.uniform(field.y0_m - margin, field.y0_m + field.spacing_m * (ny - 1) + margin,
                    4 * count)

    def off_lines(u, origin, spacing):
        f = np.mod(u - origin, spacing)
        return (f > 1e-3) & (f < spacing - 1e-3)

    ok = (off_lines(x, field.x0_m, field.spacing_m) & off_lines(y, field.y0_m, field.spacing_m)
          & off_lines(x, 0.0, field.tile_spacing_m) & off_lines(y, 0.0, field.tile_spacing_m))
    return x[ok][:count], y[ok][:count]


def evaluate(field, x, y, roughness_on):
    return np.array([ground_height(field, xi, yi, roughness_on) for xi, yi in zip(x, y)])


@pytest.mark.parametrize('roughness_on', [False, True])
def test_ground_height_inside_matches_regular_grid_interpolator(roughness_on):
    field = make_field()
    x, y = sample_points(field, 300, margin=0.0)
    got = evaluate(field, x, y, roughness_on)[:, 0]
    assert np.allclose(got, reference_height(field, x, y, roughness_on), rtol=0, atol=1e-12)


@pytest.mark.parametrize('roughness_on', [False, True])
def test_ground_height_outside_is_the_edge_value(roughness_on):
    field = make_field()
    x, y = sample_points(field, 400, margin=12.0)
    ny, nx = field.heights_m.shape
    outside = ((x < field.x0_m) | (x > field.x0_m + field.spacing_m * (nx - 1))
               | (y < field.y0_m) | (y > field.y0_m + field.spacing_m * (ny - 1)))
    assert outside.sum() > 100
    got = evaluate(field, x[outside], y[outside], roughness_on)[:, 0]
    expected = reference_height(field, x[outside], y[outside], roughness_on)
    assert np.allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize('roughness_on', [False, True])
def test_ground_slopes_are_central_differences(roughness_on):
    field = make_field()
    x, y = sample_points(field, 300, margin=6.0)
    h = 1e-5
    got = evaluate(field, x, y, roughness_on)
    dzdx = (evaluate(field, x + h, y, roughness_on)[:, 0]
            - evaluate(field, x - h, y, roughness_on)[:, 0]) / (2 * h)
    dzdy = (evaluate(field, x, y + h, roughness_on)[:, 0]
            - evaluate(field, x, y - h, roughness_on)[:, 0]) / (2 * h)
    assert np.allclose(got[:, 1], dzdx, rtol=0, atol=1e-7)
    assert np.allclose(got[:, 2], dzdy, rtol=0, atol=1e-7)
    assert np.abs(got[:, 1:]).max() > 0.1         # the test sees real slopes


def test_ground_height_of_the_flat_field_is_zero():
    for x, y in [(0.0, 0.0), (123.4, -56.7), (-1e4, 3e3)]:
        assert ground_height(flat_field(), x, y, True) == (0.0, 0.0, 0.0)
