"""Observation epochs as decimal years (spec: DecimalYear).

The epoch of episode time t is ``start_utc + t``, expressed as the year plus the
fraction of that year elapsed, with the year's true length (365 or 366 days).
"""

import datetime

import numpy as np

__all__ = ['decimal_year']


def decimal_year(start_utc: datetime.datetime, t_s):
    """Decimal year of ``start_utc`` (an aware datetime) + ``t_s`` seconds; scalar or array.

    Leap seconds are not counted (UTC as civil time, as the spec's DecimalYear).
    """
    utc = start_utc.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    start = np.datetime64(utc, 'ns')
    t = np.asarray(t_s, dtype=np.float64)
    stamp = start + np.round(t * 1e9).astype('timedelta64[ns]')
    year = stamp.astype('datetime64[Y]')
    begin = year.astype('datetime64[ns]')
    length = (year + 1).astype('datetime64[ns]') - begin
    value = year.astype(np.int64) + 1970 + (stamp - begin) / length
    return float(value) if np.ndim(value) == 0 else value
