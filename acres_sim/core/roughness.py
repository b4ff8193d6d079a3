"""Surface roughness of the ground: the ISO 8608 road classes as a seeded,
spatial random profile (stub: the implementation lands with its tests)."""

import numpy as np

__all__ = ['ISO_8608_CLASSES', 'REFERENCE_GD_M3', 'class_scale', 'roughness_tile',
           'roughness_scale_grid']

# G_d(n0) of each class, n0 = 0.1 cycles/m, waviness 2 (geometric class means) [m^3]
ISO_8608_CLASSES = {'A': 16e-6, 'B': 64e-6, 'C': 256e-6, 'D': 1024e-6, 'E': 4096e-6}
REFERENCE_GD_M3 = 1e-6     # G_d(n0) of the unit tile


def class_scale(name: str) -> float:
    """Amplitude factor of class ``name`` relative to the unit tile."""
    return float(np.sqrt(ISO_8608_CLASSES[name] / REFERENCE_GD_M3))


def roughness_tile(seed: int, size: int = 512, spacing_m: float = 0.25) -> np.ndarray:
    """The unit roughness tile (size x size, periodic, zero mean) of ``seed``."""
    raise NotImplementedError


def roughness_scale_grid(x0_m, y0_m, spacing_m, nx, ny, zones, default_scale, blend_m):
    """(ny, nx) factors of the unit tile at the grid nodes; ``zones``: (polygon (k, 2)
    grid ENU [m], scale) pairs, later ones over earlier; ``blend_m``: the width of
    the transition at a zone edge."""
    raise NotImplementedError
