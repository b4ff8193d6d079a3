"""The tilted-dipole geomagnetic field of the AirSim paper, and the dipole of
the IGRF to feed it.

The model takes the Earth for a sphere of radius R_e with a centred magnetic
dipole whose axis meets the surface at the geomagnetic north pole
(latitude theta0, longitude phi0).  At latitude theta, longitude phi and height
h above the sphere, with co-latitudes c = pi/2 - theta and c0 = pi/2 - theta0:

* the magnetic co-latitude theta_m, the angular distance to the pole, by the
  spherical law of cosines (the paper's equation is written in co-latitudes):

      cos theta_m = cos c cos c0 + sin c sin c0 cos(phi - phi0)

* the intensity, which depends on theta_m and the distance only:

      |B| = B0 (R_e / (R_e + h))^3 sqrt(1 + 3 cos^2 theta_m)

  B0 being the field on the geomagnetic equator at r = R_e (2 B0 at the poles);

* the inclination alpha (positive down):  tan alpha = 2 cot theta_m;

* the declination beta (positive east of true north) by the paper's two-case
  rule, in latitudes:

      sin beta = sin(phi0 - phi) cos theta0 / sin theta_m   if cos theta_m > sin theta0 sin theta
      sin beta = cos(phi - phi0) cos theta0 / sin theta_m   otherwise

* and the components in local NED:  H = |B| cos alpha,  Z = |B| sin alpha,
  X = H cos beta (north),  Y = H sin beta (east).

Where the declination rule is exact and where it is not.  The horizontal field
of a dipole points along the great circle toward the geomagnetic north pole,
so beta is the initial bearing from the site to the pole.  The first case is
the spherical sine rule for that bearing: exact wherever the pole lies in the
northern half of the site's horizon (|beta| <= 90 deg, i.e.
sin theta0 >= sin theta cos theta_m: everywhere except poleward of the
geomagnetic pole), since an arcsine cannot give more.  The test
cos theta_m > sin theta0 sin theta is the same as cos(phi - phi0) > 0: the
second case applies to sites more than 90 deg of longitude from the pole's
meridian (most of Asia, Europe east of 17 E, the Pacific, Australia), and
there its cosine is no spherical-triangle result but a rough stand-in: 10 to
20 deg off the dipole's own declination (Beijing: -10.6 against +1.7 deg,
Sydney: -8.7 against +8.4 deg), with a jump of about 10 deg where
|phi - phi0| crosses 90 deg.  At the ACRE tile (40.5 N, 87.0 W, 14 deg of longitude west of
the pole) the first case applies and the model is the exact centred dipole.

Two departures from the paper's text, both of sign or form only:

* The paper writes sin(phi - phi0) in the first case.  With Y = H sin beta
  positive east that puts the pole on the wrong side (at ACRE, whose pole
  meridian lies 14 deg east, it would give a west declination); the bearing
  to the pole, and the exact dipole field, have sin(phi0 - phi).  The second
  case has a cosine, whose sign does not depend on the order.
* tan alpha = 2 cot theta_m is taken as atan2(2 cos theta_m, sin theta_m): the
  same angle for 0 < theta_m < pi (sin theta_m > 0), and +-90 deg at the poles.

AirSim's own code (EarthUtils::getMagField) feeds latitudes into the
co-latitude formula; that is not followed here.

Latitude is taken as spherical (geocentric); given a geodetic latitude the
dipole is off by the difference, 0.19 deg at 40 deg latitude.  ``h`` is above
the sphere R_e; given an ellipsoidal height the radius is off by the
ellipsoid's departure from the sphere (-1.8 km at ACRE: 0.09 % in |B|).

The dipole of the IGRF.  The degree-1 Gauss coefficients (g10, g11, h11) of a
main-field model are exactly a centred dipole: B0 = sqrt(g10^2 + g11^2 + h11^2)
at the model's reference radius a = 6371.2 km, with the north pole where the
unit vector -(g11, h11, g10) / B0 (Earth-fixed x, y, z) meets the sphere.
:data:`IGRF14_DIPOLE_NT` holds IGRF-14 (IAGA, 2024) at 2025.0 and its secular
variation to 2030: the pole at 80.79 N, 72.76 W (NOAA's geomagnetic north
pole for 2025: 80.8 N, 72.8 W), B0 = 29 733 nT, moving 0.04 deg/yr north and
0.04 deg/yr west while B0 falls by 16 nT/yr.  AirSim uses 80.31 N, 72.62 W and
3.12e-5 T (Wikipedia's value, decades old).
"""

import math

from acres_sim.core.jit import njit

__all__ = ['IGRF14_DIPOLE_EPOCH', 'IGRF14_DIPOLE_NT', 'IGRF14_DIPOLE_SV_NT_PER_YEAR',
           'IGRF_REFERENCE_RADIUS_M', 'dipole_from_gauss', 'igrf14_dipole', 'dipole_field_ned']

# IGRF-14 degree 1 (g10, g11, h11) [nT] at 2025.0 and their predicted secular
# variation [nT/yr] for 2025-2030 (Alken et al., IGRF-14, IAGA 2024).
IGRF14_DIPOLE_EPOCH = 2025.0
IGRF14_DIPOLE_NT = (-29350.0, -1410.3, 4545.5)
IGRF14_DIPOLE_SV_NT_PER_YEAR = (12.6, 10.0, -21.5)
IGRF_REFERENCE_RADIUS_M = 6371200.0


def dipole_from_gauss(g10_nt, g11_nt, h11_nt):
    """(pole_lat_rad, pole_lon_rad, b0_t): the geomagnetic north pole and the
    equatorial field at the reference radius of a degree-1 field."""
    b0 = math.sqrt(g10_nt * g10_nt + g11_nt * g11_nt + h11_nt * h11_nt)
    return math.asin(-g10_nt / b0), math.atan2(-h11_nt, -g11_nt), b0 * 1e-9


def igrf14_dipole(year):
    """:func:`dipole_from_gauss` of IGRF-14 at decimal ``year`` (2025.0 plus the
    secular variation; meant for 2025-2030)."""
    dt = year - IGRF14_DIPOLE_EPOCH
    g = [c + dt * s for c, s in zip(IGRF14_DIPOLE_NT, IGRF14_DIPOLE_SV_NT_PER_YEAR)]
    return dipole_from_gauss(*g)


@njit(cache=True)
def dipole_field_ned(lat_rad, lon_rad, h_m, pole_lat_rad, pole_lon_rad, b0_t, r_e_m):
    """(X north, Y east, Z down) [T] of the tilted dipole (module docstring) at
    latitude ``lat_rad``, longitude ``lon_rad``, height ``h_m`` above the sphere
    ``r_e_m``; pole (``pole_lat_rad``, ``pole_lon_rad``), equatorial field ``b0_t``."""
    c = 0.5 * math.pi - lat_rad
    c0 = 0.5 * math.pi - pole_lat_rad
    cos_m = math.cos(c) * math.cos(c0) + math.sin(c) * math.sin(c0) * math.cos(
        lon_rad - pole_lon_rad)
    cos_m = min(1.0, max(-1.0, cos_m))
    sin_m = math.sqrt(1.0 - cos_m * cos_m)
    q = r_e_m / (r_e_m + h_m)
    b = b0_t * q * q * q * math.sqrt(1.0 + 3.0 * cos_m * cos_m)
    alpha = math.atan2(2.0 * cos_m, sin_m)
    beta = 0.0
    if sin_m > 0.0:
        if cos_m > math.sin(pole_lat_rad) * math.sin(lat_rad):
            s = math.sin(pole_lon_rad - lon_rad) * math.cos(pole_lat_rad) / sin_m
        else:
            s = math.cos(lon_rad - pole_lon_rad) * math.cos(pole_lat_rad) / sin_m
        beta = math.asin(min(1.0, max(-1.0, s)))
    h = b * math.cos(alpha)
    return h * math.cos(beta), h * math.sin(beta), b * math.sin(alpha)
