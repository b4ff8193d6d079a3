"""The time-dependent 14-parameter Helmert transformation ITRF2014 <-> NAD83(2011)
(spec: Datum Chain, "Helmert transformation"; EPSG "ITRF2014 to NAD83(2011) (1)",
coordinate-frame convention).

At the epoch t_y (decimal year), with delta = t_y - reference epoch:

    T = T0 + dT delta
    r = -(r0 + dr delta) * pi / 648000        (arcsec -> rad; the minus turns
                                               coordinate-frame into the matrix below)
    s = 1 + (s0 + ds delta) * 1e-6
    M = [[1, -rz, ry], [rz, 1, -rx], [-ry, rx, 1]]
    X_2011 = T + s M X_ITRF             (forward)
    X_ITRF = (1/s) M^T (X_2011 - T)     (inverse)
"""

import math
from typing import NamedTuple

from acres_sim.core.jit import njit

__all__ = ['HelmertParams', 'helmert_at_epoch', 'helmert_forward', 'helmert_inverse']

_ARCSEC = math.pi / 648000.0


class HelmertParams(NamedTuple):
    """The 14 parameters and their reference epoch (units as in the config;
    :func:`acres_sim.config.records.helmert_params` builds them)."""

    tx: float
    ty: float
    tz: float          # T0 [m]
    rx: float
    ry: float
    rz: float          # r0 [arcsec]
    s: float           # s0 [ppm]
    dtx: float
    dty: float
    dtz: float         # dT [m/yr]
    drx: float
    dry: float
    drz: float         # dr [arcsec/yr]
    ds: float          # ds [ppm/yr]
    reference_epoch: float  # [yr]


@njit(cache=True)
def helmert_at_epoch(p, epoch_year):
    """(Tx, Ty, Tz, rx, ry, rz, s) at ``epoch_year``: metres, radians, unitless scale."""
    d = epoch_year - p.reference_epoch
    return (p.tx + p.dtx * d, p.ty + p.dty * d, p.tz + p.dtz * d,
            -(p.rx + p.drx * d) * _ARCSEC, -(p.ry + p.dry * d) * _ARCSEC,
            -(p.rz + p.drz * d) * _ARCSEC, 1.0 + (p.s + p.ds * d) * 1e-6)


@njit(cache=True)
def helmert_forward(X, Y, Z, p, epoch_year):
    """ITRF2014 ECEF -> NAD83(2011) ECEF at ``epoch_year``."""
    Tx, Ty, Tz, rx, ry, rz, s = helmert_at_epoch(p, epoch_year)
    return (Tx + s * (X - rz * Y + ry * Z),
            Ty + s * (rz * X + Y - rx * Z),
            Tz + s * (-ry * X + rx * Y + Z))


@njit(cache=True)
def helmert_inverse(X, Y, Z, p, epoch_year):
    """NAD83(2011) ECEF -> ITRF2014 ECEF at ``epoch_year`` (the exact inverse of M^T form)."""
    Tx, Ty, Tz, rx, ry, rz, s = helmert_at_epoch(p, epoch_year)
    dx = X - Tx
    dy = Y - Ty
    dz = Z - Tz
    return ((dx + rz * dy - ry * dz) / s,
            (-rz * dx + dy + rx * dz) / s,
            (ry * dx - rx * dy + dz) / s)
