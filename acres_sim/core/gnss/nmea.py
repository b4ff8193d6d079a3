"""The receiver's NMEA 0183 sentences: ``$GNGGA`` (spec: Output Row, nmea_gga)
and ``$GNGST`` (acres_sim's, :func:`gst_sentence`, documented there).

GGA field by field (commas between, no line ending, ``*HH`` checksum at the end):

 1. UTC time of day ``hhmmss.ss``
 2. latitude ``ddmm.mmmmmmm`` (minutes with 7 decimals), 3. ``N``/``S``
 4. longitude ``dddmm.mmmmmmm``, 5. ``E``/``W``
 6. quality: 4 rtk_fixed, 5 rtk_float, 2 dgps, 1 single, 0 no_fix
 7. satellites used, two digits
 8. HDOP, one decimal
 9. altitude above NAVD88 [m], three decimals, 10. ``M``
11. geoid separation [m] = ellipsoidal height of the output frame minus the
    NAVD88 altitude, three decimals, 12. ``M``
13. age of the correction data [s], one decimal; empty when there is none
14. reference station id (the spec's ``0001``)

The checksum is the XOR of every character strictly between ``$`` and ``*``,
written as two upper-case hex digits.

Rounding is done once, on integers, so it carries: the time is rounded to the
nearest hundredth of a second and 23:59:59.996 becomes 00:00:00.00 (GGA holds
the time of day only); a coordinate is rounded to the nearest 1e-7 minute of
arc *before* it is split into degrees and minutes, so 59.99999999' prints as
the next whole degree and never as ``60.0000000``.  A value that rounds to
zero prints without a minus sign.

Without a fix (quality 0) the position fields (latitude, longitude, their
hemispheres, altitude, separation and their units) are left empty, whatever
was passed; the time, quality, satellites, HDOP, age and station still print.
A missing optional value (None, or NaN for the numbers) prints as an empty
field.  Angles in degrees, lengths in metres, times in seconds.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Optional

__all__ = ['GST_SENTENCE', 'TALKER_SENTENCE', 'gga_sentence', 'gst_sentence', 'nmea_checksum']

TALKER_SENTENCE = 'GNGGA'
GST_SENTENCE = 'GNGST'

_MINUTE_DIGITS = 7
_MINUTE_SCALE = 10 ** _MINUTE_DIGITS          # units of 1e-7 minute of arc
_DEGREE_SCALE = 60 * _MINUTE_SCALE
_CENTISECONDS_PER_DAY = 24 * 3600 * 100


def nmea_checksum(body: str) -> str:
    """XOR of the characters of ``body`` (the text between ``$`` and ``*``) as 2 hex digits."""
    x = 0
    for ch in body.encode('ascii'):
        x ^= ch
    return f'{x:02X}'


def _missing(value) -> bool:
    if value is None:
        return True
    try:
        return math.isnan(value)
    except TypeError:
        return False


def _fixed(value, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, empty when missing, no ``-0.0``."""
    if _missing(value):
        return ''
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f'cannot write {value!r} in an NMEA field')
    return f'{round(value, decimals) + 0.0:.{decimals}f}'


def _utc_field(utc) -> str:
    """``hhmmss.ss`` of a datetime (naive: UTC) or a time of day (datetime.time)."""
    if isinstance(utc, _dt.datetime) and utc.tzinfo is not None:
        utc = utc.astimezone(_dt.timezone.utc)
    micro = ((utc.hour * 60 + utc.minute) * 60 + utc.second) * 1_000_000 + utc.microsecond
    centi = (micro + 5_000) // 10_000 % _CENTISECONDS_PER_DAY   # half up, wraps at midnight
    seconds, cs = divmod(centi, 100)
    minutes, ss = divmod(seconds, 60)
    hh, mm = divmod(minutes, 60)
    return f'{hh:02d}{mm:02d}{ss:02d}.{cs:02d}'


def _angle_fields(value_deg: float, degree_digits: int, positive: str, negative: str,
                  limit: float) -> tuple[str, str]:
    value_deg = float(value_deg)
    if not (math.isfinite(value_deg) and abs(value_deg) <= limit):
        raise ValueError(f'angle {value_deg!r} deg is outside +-{limit}')
    units = round(abs(value_deg) * _DEGREE_SCALE)   # whole 1e-7 minutes
    degrees, rest = divmod(units, _DEGREE_SCALE)
    minutes, fraction = divmod(rest, _MINUTE_SCALE)
    text = f'{degrees:0{degree_digits}d}{minutes:02d}.{fraction:0{_MINUTE_DIGITS}d}'
    hemisphere = negative if (value_deg < 0.0 and units > 0) else positive
    return text, hemisphere


def gga_sentence(utc: _dt.datetime, lat_deg: Optional[float], lon_deg: Optional[float],
                 quality: int, satellites: int, hdop: Optional[float],
                 altitude_m: Optional[float], separation_m: Optional[float],
                 correction_age_s: Optional[float], station: Optional[str] = '0001') -> str:
    """The ``$GNGGA,...*HH`` sentence of one epoch (spec: Output Row).

    ``utc``: the epoch's UTC time (a naive datetime is taken as UTC);
    ``lat_deg``/``lon_deg``: geodetic latitude/longitude of the output frame
    [deg], may be None only when ``quality`` is 0; ``quality``: GGA quality
    0..5; ``satellites``: satellites used, 0..99; ``hdop``: HDOP;
    ``altitude_m``: NAVD88 altitude [m]; ``separation_m``: ellipsoidal height
    of the output frame minus ``altitude_m`` [m]; ``correction_age_s``: age of
    the newest correction [s] or None/NaN; ``station``: reference station id.

    Raises ValueError for a quality or satellite count out of range, a
    non-finite or out-of-range coordinate, or a missing position with a fix.
    """
    quality = int(quality)
    satellites = int(satellites)
    if not 0 <= quality <= 5:
        raise ValueError(f'GGA quality {quality} is not 0..5')
    if not 0 <= satellites <= 99:
        raise ValueError(f'satellite count {satellites} does not fit two digits')

    if quality == 0:
        lat = lat_h = lon = lon_h = alt = alt_unit = sep = sep_unit = ''
    else:
        if _missing(lat_deg) or _missing(lon_deg):
            raise ValueError('a GGA sentence with a fix needs a latitude and a longitude')
        lat, lat_h = _angle_fields(lat_deg, 2, 'N', 'S', 90.0)
        lon, lon_h = _angle_fields(lon_deg, 3, 'E', 'W', 180.0)
        alt, sep = _fixed(altitude_m, 3), _fixed(separation_m, 3)
        alt_unit = 'M' if alt else ''
        sep_unit = 'M' if sep else ''

    fields = [
        TALKER_SENTENCE, _utc_field(utc), lat, lat_h, lon, lon_h, str(quality),
        f'{satellites:02d}', _fixed(hdop, 1), alt, alt_unit, sep, sep_unit,
        _fixed(correction_age_s, 1), '' if station is None else str(station),
    ]
    body = ','.join(fields)
    return f'${body}*{nmea_checksum(body)}'


def gst_sentence(utc, quality: int, sigma_enu_m, pdop: Optional[float]) -> str:
    """The ``$GNGST,...*HH`` sentence (GNSS pseudorange error statistics) of one
    epoch, from the receiver's reported standard deviations ``sigma_enu_m``
    (east, north, up [m]: the row's ``sigma_enu_m``, the square roots of its
    ``covariance_enu_m2``, which the spec's error model makes the true standard
    deviations of the added error) -- an acres_sim addition, not in the spec.

    Field by field (commas between, ``*HH`` checksum as in GGA):

    1. UTC time of the associated GGA fix ``hhmmss.ss`` (``utc``: as
       :func:`gga_sentence` takes it, or a datetime.time of day);
    2. RMS of the range residuals [m], three decimals.  The model has no
       pseudoranges: this is the range sigma that, at the epoch's PDOP, gives
       the reported 3-D sigma, ``sqrt(se^2 + sn^2 + su^2) / PDOP`` (empty
       without a PDOP);
    3. semi-major and 4. semi-minor axis of the 1-sigma horizontal error
       ellipse [m], three decimals: the larger and the smaller of ``se``, ``sn``
       (the covariance is diagonal in ENU, so its axes are east and north);
    5. orientation of the semi-major axis [deg from true north, clockwise],
       one decimal: 0.0 when it is north (``sn >= se``: also for the circle
       ``sn == se`` the model gives, whose orientation is arbitrary), 90.0 when
       it is east.  The grid north of ENU is taken as true north (the spec
       ignores the grid convergence, 0.058 deg on the tile);
    6. latitude sigma ``sn``, 7. longitude sigma ``se``, 8. altitude sigma
       ``su`` [m], three decimals.

    Without a fix (``quality`` 0, or ``sigma_enu_m`` None) fields 2 to 8 are
    empty, as receivers send them; the time still prints.  Rounding and
    checksum follow :func:`gga_sentence` (a value rounding to zero prints
    ``0.000``).  Raises ValueError for a negative or non-finite sigma.
    """
    quality = int(quality)
    if not 0 <= quality <= 5:
        raise ValueError(f'GGA quality {quality} is not 0..5')
    fields = [GST_SENTENCE, _utc_field(utc)]
    if quality == 0 or sigma_enu_m is None:
        fields += [''] * 7
    else:
        se, sn, su = (float(v) for v in sigma_enu_m)
        if not all(math.isfinite(v) and v >= 0.0 for v in (se, sn, su)):
            raise ValueError(f'sigmas {sigma_enu_m!r} must be finite and >= 0')
        rms = None if _missing(pdop) or float(pdop) <= 0.0 else \
            math.sqrt(se * se + sn * sn + su * su) / float(pdop)
        major, minor, orientation = (sn, se, 0.0) if sn >= se else (se, sn, 90.0)
        fields += [_fixed(rms, 3), _fixed(major, 3), _fixed(minor, 3), _fixed(orientation, 1),
                   _fixed(sn, 3), _fixed(se, 3), _fixed(su, 3)]
    body = ','.join(fields)
    return f'${body}*{nmea_checksum(body)}'
