"""Observation epochs as decimal years (spec: DecimalYear).

The epoch of episode time t is ``start_utc + t``, expressed as the year plus the
fraction of that year elapsed, with the year's true length (365 or 366 days).
"""

import datetime
from typing import NamedTuple

import numpy as np

from acres_sim.core.jit import njit

__all__ = ['DecimalYearClock', 'YearTable', 'decimal_year', 'decimal_year_kernel', 'year_table']


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


class DecimalYearClock:
    """Scalar episode time -> decimal year, equal to :func:`decimal_year` (same
    nanosecond rounding, same float division) but without numpy's datetime
    machinery on every call: the bounds of the current year are cached."""

    def __init__(self, start_utc: datetime.datetime):
        utc = start_utc.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        self._start_ns = int(np.datetime64(utc, 'ns').astype(np.int64))
        self._begin = self._end = 0
        self._year = 0

    def __call__(self, t_s: float) -> float:
        stamp = self._start_ns + int(round(t_s * 1e9))
        if not self._begin <= stamp < self._end:
            year = np.datetime64(stamp, 'ns').astype('datetime64[Y]')
            self._begin = int(year.astype('datetime64[ns]').astype(np.int64))
            self._end = int((year + 1).astype('datetime64[ns]').astype(np.int64))
            self._year = int(year.astype(np.int64)) + 1970
        return self._year + float(stamp - self._begin) / float(self._end - self._begin)


class YearTable(NamedTuple):
    """What :func:`decimal_year_kernel` needs: the start as integer nanoseconds
    since 1970 and the starts of consecutive years (``begins[j]`` is 1 January
    of ``first_year + j``, UTC, in the same nanoseconds; one more entry than
    years covered)."""

    start_ns: int
    begins: np.ndarray     # int64
    first_year: int


def year_table(start_utc: datetime.datetime, years: int = 4) -> YearTable:
    """The table for runs of up to ``years - 1`` full years from ``start_utc``."""
    utc = start_utc.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    start = np.datetime64(utc, 'ns')
    year = start.astype('datetime64[Y]')
    begins = (year + np.arange(years + 1)).astype('datetime64[ns]').astype(np.int64)
    return YearTable(int(start.astype(np.int64)), begins, int(year.astype(np.int64)) + 1970)


@njit(cache=True)
def decimal_year_kernel(t_s, table):
    """:func:`decimal_year` of episode time ``t_s`` inside numba code (the same
    nanosecond rounding -- half to even -- and the same float division).  Past
    the table's last year the last year's bounds are used."""
    stamp = table.start_ns + np.int64(np.rint(t_s * 1e9))
    begins = table.begins
    j = 0
    while j < begins.shape[0] - 2 and stamp >= begins[j + 1]:
        j += 1
    return (table.first_year + j) + float(stamp - begins[j]) / float(begins[j + 1] - begins[j])
