"""The recorder's report series: the rows its report draws and sums, kept at
most :data:`REPORT_ROWS` per series, evenly over the whole run, so memory
stays flat however long the run.

Both keep the same rows of a run: while a series is not full, every
``stride``-th row (stride 1 at first); when it fills, every other kept row
goes and the stride doubles.  The first and the last row of the run are
kept beside them, whatever the thinning (the summary's time span).

* :class:`Thinned` keeps items (row dicts), one at a time or a block of
  them made on demand, only those kept;
* :class:`ThinnedColumns` keeps the rows of a block of arrays, as
  :class:`acres_sim.record.report.Columns` (no object per row): the
  recorder's INS and truth series, which it has as arrays.
"""

import numpy as np

from acres_sim.record.report import Columns

__all__ = ['REPORT_ROWS', 'Thinned', 'ThinnedColumns']

REPORT_ROWS = 20000       # rows kept per report series; longer runs are thinned evenly


class Thinned:
    """A list that keeps at most ``cap`` items, evenly spread over the whole run:
    when full it drops every other item and keeps every 2nd, 4th, ... new one
    (``cap``: :data:`REPORT_ROWS` unless given)."""

    def __init__(self, cap=None):
        self.cap = REPORT_ROWS if cap is None else cap
        self.stride, self.seen, self.items = 1, 0, []
        self.first = self.last = None      # the first and last item, kept whatever the thinning

    def append(self, item):
        if self.first is None:
            self.first = item
        self.last = item
        if self.seen % self.stride == 0:
            self._keep(item)
        self.seen += 1

    def extend(self, count, item_at):
        """The next ``count`` items, as :meth:`append` takes them one by one;
        ``item_at(i)`` makes the i-th, and is asked only for those kept (and
        the first and the last)."""
        if count <= 0:
            return
        if self.first is None:
            self.first = item_at(0)
        self.last = item_at(count - 1)
        i = -self.seen % self.stride            # the first of them that is kept
        while i < count:
            self._keep(item_at(i))
            i += 1
            i += -(self.seen + i) % self.stride   # the next one at the (new) stride
        self.seen += count

    def _keep(self, item):
        self.items.append(item)
        if len(self.items) >= self.cap:
            self.items = self.items[::2]
            self.stride *= 2


class ThinnedColumns:
    """:class:`Thinned` for rows given as columns: :meth:`extend` takes a block
    of rows as ``{key: array}`` (a row per entry of the first axis, the keys
    of :class:`~acres_sim.record.report.Columns`) and keeps the rows
    :class:`Thinned` would keep; :meth:`columns` gives them.  ``first`` and
    ``last`` are the run's first and last rows as ``{key: value}``."""

    def __init__(self, cap=None):
        self.cap = REPORT_ROWS if cap is None else cap
        self.stride, self.seen = 1, 0
        self.first = self.last = None
        self._blocks = []        # the kept rows, a {key: array} per block
        self._kept = 0

    def extend(self, block):
        count = len(next(iter(block.values()))) if block else 0
        if count <= 0:
            return
        if self.first is None:
            self.first = {key: column[0] for key, column in block.items()}
        self.last = {key: column[count - 1] for key, column in block.items()}
        i = -self.seen % self.stride            # the first of them that is kept
        while i < count:
            kept = np.arange(i, count, self.stride)[:self.cap - self._kept]
            self._blocks.append({key: column[kept] for key, column in block.items()})
            self._kept += len(kept)
            if self._kept < self.cap:
                break
            self._halve()
            i = int(kept[-1]) + 1
            i += -(self.seen + i) % self.stride   # the next one at the new stride
        self.seen += count

    def _halve(self):
        joined = self._joined()
        self._blocks = [{key: column[::2] for key, column in joined.items()}]
        self._kept = (self._kept + 1) // 2
        self.stride *= 2

    def _joined(self):
        if len(self._blocks) == 1:
            return self._blocks[0]
        keys = self._blocks[0].keys() if self._blocks else ()
        return {key: np.concatenate([block[key] for block in self._blocks]) for key in keys}

    def columns(self) -> Columns:
        """The kept rows (none: an empty Columns)."""
        joined = self._joined()
        self._blocks = [joined] if joined else []
        return Columns(joined)
