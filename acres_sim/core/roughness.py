"""Surface roughness of the ground: the ISO 8608 road classes as a seeded,
isotropic random surface, and the map of where which class applies.

ISO 8608 (1995, *Mechanical vibration -- Road surface profiles -- Reporting of
measured data*) describes a profile by its one-sided displacement PSD
``G_d(n) = G_d(n0) * (n / n0)**-w`` [m^3], ``n`` the spatial frequency in
cycles/m, ``n0 = 0.1`` cycles/m and the waviness ``w = 2``; the classes A to E
step ``G_d(n0)`` by a factor of 4 (6 dB) each.  The simulator keeps one *unit
tile* with ``G_d(n0) = REFERENCE_GD_M3`` and scales it by :func:`class_scale`
(the square root of the PSD ratio) wherever a class applies.

:func:`roughness_tile` builds the unit tile: a periodic square of heights
whose profile along any straight line has the ISO spectrum.
:func:`roughness_scale_grid` lays the per-zone factors on a grid, blended
smoothly across the zone edges.
"""

import numpy as np

from acres_sim.core.rng import TERRAIN_ROUGHNESS, make_stream, pcg32_fill_gaussian

__all__ = ['ISO_8608_CLASSES', 'ISO_8608_N0', 'REFERENCE_GD_M3', 'class_scale',
           'roughness_tile', 'roughness_scale_grid']

# G_d(n0) of each class, n0 = 0.1 cycles/m, waviness 2 (geometric class means) [m^3]
ISO_8608_CLASSES = {'A': 16e-6, 'B': 64e-6, 'C': 256e-6, 'D': 1024e-6, 'E': 4096e-6}
ISO_8608_N0 = 0.1          # the reference spatial frequency [cycles/m]
REFERENCE_GD_M3 = 1e-6     # G_d(n0) of the unit tile


def class_scale(name: str) -> float:
    """Amplitude factor of ISO 8608 class ``name`` ('A' .. 'E') relative to the
    unit tile: ``sqrt(G_d(n0) of the class / REFERENCE_GD_M3)``."""
    try:
        gd = ISO_8608_CLASSES[name]
    except (KeyError, TypeError):
        raise ValueError(f'unknown ISO 8608 roughness class {name!r}; '
                         f'known: {", ".join(ISO_8608_CLASSES)}') from None
    return float(np.sqrt(gd / REFERENCE_GD_M3))


def roughness_tile(seed: int, size: int = 512, spacing_m: float = 0.25) -> np.ndarray:
    """The unit roughness tile of ``seed``: a (size, size) float64 array of
    heights [m], row ``j`` at ``y = j * spacing_m``, column ``i`` at
    ``x = i * spacing_m``, periodic in both directions, zero mean.

    It is a sample of an isotropic Gaussian random field whose profile along
    any straight line has the one-sided PSD ``G_d(n) = REFERENCE_GD_M3 *
    (n / 0.1)**-2`` over the band the tile resolves, from ``1 / L`` (``L =
    size * spacing_m``, the tile's side) to the grid's Nyquist frequency
    ``N = 1 / (2 * spacing_m)``.

    Spectrum.  Let ``Phi(nx, ny)`` be the two-sided 2-D PSD [m^4] (the
    variance is its integral over the plane).  A profile along x has the
    two-sided PSD ``S(n) = integral of Phi(n, ny) over ny``, and ``G(n) =
    2 S(n)`` one-sided.  For an isotropic ``Phi = c * nu**-3``, ``nu =
    hypot(nx, ny)``: ``integral of (n**2 + t**2)**-1.5 dt over all t = 2 /
    n**2``, so ``G(n) = 4 c / n**2``; matching ``G_d`` gives ``c = G_d(n0) *
    n0**2 / 4``, and by isotropy the same holds along every direction.

    Synthesis.  ``size**2`` standard Gaussians from the ``terrain_roughness``
    stream of ``seed`` (row-major) are the white noise ``w``; its 2-D DFT is
    multiplied by ``H = sqrt(Phi(nu)) / spacing_m`` and transformed back.
    With ``E|DFT(w)|**2 = size**2`` each wavenumber bin then carries the
    variance ``Phi(nu) * dn**2``, ``dn = 1 / L``: the tile's spectral lines
    sample the continuous spectrum at their wavenumbers.

    Band edges.  The zero-wavenumber bin is cut (the tile's mean is zero);
    the lowest lines are kept at their full ISO value (no taper).  Every bin
    beyond the Nyquist circle ``nu > N`` (the corners of the square
    wavenumber grid) is cut too, so the field stays isotropic instead of
    having more short-wave energy along the grid axes than along the
    diagonals.  The price is at the top of the band: a profile's cross-track
    integral then stops at ``sqrt(N**2 - n**2)``, which scales its PSD by
    ``sqrt(1 - (n / N)**2)`` (-3 % at ``N / 4``, -13 % at ``N / 2``, zero at
    ``N``).  Elsewhere the lines match ``G_d`` to about 1 % (the cross-track
    sum over the discrete lines against the integral above).

    Variance.  The mean square of one profile about its own mean is the sum
    of ``G_d`` over the tile's lines ``n_k = k / L`` times their spacing
    ``1 / L`` (the discrete integral of ``G_d`` over the band; for ``w = 2``
    about ``pi**2 / 6`` times the continuous integral from ``1 / L``, as the
    line at ``1 / L`` stands for the waves down to about half that).  ``G_d``
    being steep, the first line alone carries about 60 % of it, so one tile's
    mean square scatters by about 30 % around that value.  The profile means
    (the waves running across the profile) add to the variance of the whole
    tile.

    Same ``seed``, same tile, bit for bit; about 15 ms for 512 x 512 (the
    first call in a process also loads the noise kernel, about 0.4 s).
    """
    size = int(size)
    spacing_m = float(spacing_m)
    if size < 2:
        raise ValueError(f'roughness tile size must be >= 2, got {size}')
    if not np.isfinite(spacing_m) or spacing_m <= 0.0:
        raise ValueError(f'roughness tile spacing must be > 0 m, got {spacing_m}')
    noise = np.empty(size * size, dtype=np.float64)
    pcg32_fill_gaussian(make_stream(seed, TERRAIN_ROUGHNESS).state, noise)
    spectrum = np.fft.rfft2(noise.reshape(size, size))
    spectrum *= _filter(size, spacing_m)
    tile = np.fft.irfft2(spectrum, s=(size, size))
    tile -= tile.mean()
    return tile


def _filter(size, spacing_m):
    """``sqrt(Phi(nu)) / spacing_m`` on the rfft2 grid (rows: ny, columns: nx >= 0),
    zero at ``nu = 0`` and beyond the Nyquist circle (see :func:`roughness_tile`)."""
    nx = np.fft.rfftfreq(size, spacing_m)
    ny = np.fft.fftfreq(size, spacing_m)
    nu = np.hypot(ny[:, None], nx[None, :])
    c = REFERENCE_GD_M3 * ISO_8608_N0 ** 2 / 4.0
    nyquist = 0.5 / spacing_m
    keep = (nu > 0.0) & (nu <= nyquist * (1.0 + 1e-12))
    gain = np.zeros_like(nu)
    gain[keep] = np.sqrt(c * nu[keep] ** -3.0) / spacing_m
    return gain


def roughness_scale_grid(x0_m, y0_m, spacing_m, nx, ny, zones, default_scale, blend_m):
    """(ny, nx) float64 factors of the unit tile at the grid nodes
    ``(x0_m + i * spacing_m, y0_m + j * spacing_m)`` (row ``j``, column ``i``).

    ``default_scale`` applies everywhere, each zone's scale inside its polygon;
    ``zones`` is a sequence of ``(polygon, scale)`` pairs, the polygon a (k, 2)
    array of grid ENU vertices [m] (k >= 3, a simple polygon, either
    orientation, not closed by repeating the first vertex; inside by the
    even-odd rule), later zones over earlier ones.  Across a zone's edge the
    factor goes from the one below to the zone's over ``blend_m`` [m], centred
    on the edge: with ``d`` the signed distance to the polygon's boundary
    (positive inside), the zone's weight is the smoothstep ``3 t**2 - 2 t**3``
    of ``t = d / blend_m + 1/2`` clipped to [0, 1]; ``blend_m = 0`` is a hard
    edge (weight 1 inside, 0 outside).
    """
    spacing_m = float(spacing_m)
    blend_m = float(blend_m)
    nx, ny = int(nx), int(ny)
    if not np.isfinite(spacing_m) or spacing_m <= 0.0:
        raise ValueError(f'grid spacing must be > 0 m, got {spacing_m}')
    if nx < 1 or ny < 1:
        raise ValueError(f'grid must have at least one node each way, got {nx} x {ny}')
    if not np.isfinite(blend_m) or blend_m < 0.0:
        raise ValueError(f'roughness blend width must be >= 0 m, got {blend_m}')
    x = float(x0_m) + spacing_m * np.arange(nx)
    y = float(y0_m) + spacing_m * np.arange(ny)
    px, py = np.meshgrid(x, y)
    out = np.full((ny, nx), _scale(default_scale))
    for number, (polygon, scale) in enumerate(zones):
        vertices = _polygon(polygon, number)
        scale = _scale(scale)
        inside = _inside(px, py, vertices)
        if blend_m == 0.0:
            out[inside] = scale
            continue
        distance = _boundary_distance(px, py, vertices)
        t = np.clip(np.where(inside, distance, -distance) / blend_m + 0.5, 0.0, 1.0)
        weight = t * t * (3.0 - 2.0 * t)
        out += weight * (scale - out)
    return out


def _scale(value):
    scale = float(value)
    if not np.isfinite(scale) or scale < 0.0:
        raise ValueError(f'roughness scale must be finite and >= 0, got {value!r}')
    return scale


def _polygon(polygon, number):
    vertices = np.asarray(polygon, dtype=np.float64)
    if vertices.ndim != 2 or vertices.shape[1] != 2 or vertices.shape[0] < 3:
        raise ValueError(f'roughness zone {number}: polygon must be a (k, 2) array with '
                         f'k >= 3, got shape {vertices.shape}')
    if not np.all(np.isfinite(vertices)):
        raise ValueError(f'roughness zone {number}: polygon vertices must be finite')
    return vertices


def _inside(px, py, vertices):
    """Even-odd point-in-polygon test of the points (px, py): a ray towards +x
    crosses the edges an odd number of times."""
    inside = np.zeros(px.shape, dtype=bool)
    ax, ay = vertices[:, 0], vertices[:, 1]
    bx, by = np.roll(ax, -1), np.roll(ay, -1)
    for xa, ya, xb, yb in zip(ax, ay, bx, by):
        if ya == yb:
            continue
        straddles = (ya > py) != (yb > py)
        x_cross = xa + (py - ya) * ((xb - xa) / (yb - ya))
        inside ^= straddles & (px < x_cross)
    return inside


def _boundary_distance(px, py, vertices):
    """Distance [m] of the points (px, py) to the nearest edge of the polygon."""
    best = np.full(px.shape, np.inf)
    ax, ay = vertices[:, 0], vertices[:, 1]
    bx, by = np.roll(ax, -1), np.roll(ay, -1)
    for xa, ya, xb, yb in zip(ax, ay, bx, by):
        ex, ey = xb - xa, yb - ya
        length2 = ex * ex + ey * ey
        if length2 > 0.0:
            t = np.clip(((px - xa) * ex + (py - ya) * ey) / length2, 0.0, 1.0)
        else:
            t = 0.0
        np.minimum(best, np.hypot(px - xa - t * ex, py - ya - t * ey), out=best)
    return best
