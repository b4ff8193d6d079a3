"""What a sensor node's subscribers got: gaps in the sample times of its
output, and catch-up bursts longer than a subscriber's history.

A node's input can be complete while its output is not: a node started (or
restarted) after the sim began has no output for the time before its first
truth step; a gap in the truth restarts the sensor, so its samples jump.  And
after a stall (a stopped or starved process) the node takes the truth queued
meanwhile and publishes seconds of samples back to back: a subscriber
keeping the usual 10 messages (``output_depth``) loses all but the last few,
and nothing on its side says so.

Per output stream (one row of a sample per Due time, ``hz``): a sample that
comes more than the longest interval of the Due schedule (``ceil(120 / hz)``
steps) after the one before is a gap, and so is a first truth step after the
sim's start (step 0); the samples missing are estimated at the rate.  Rows
published in one go (one pass over the queued truth) beyond ``depth`` are a
burst.
"""

import math

from acres_sim.core.truth import PHYSICS_HZ

__all__ = ['OutputHealth']


class OutputHealth:
    def __init__(self, hz, depth):
        self.period_steps = PHYSICS_HZ / float(hz)
        self.longest_steps = math.ceil(self.period_steps - 1e-9)
        self.depth = int(depth)
        self.last_sample = None
        self.counts = {'output_gaps': 0, 'samples_missing': 0, 'bursts_over_depth': 0,
                       'largest_burst': 0}
        self._in_pass = 0

    def started(self, k):
        """The first truth step ``k`` after the node's start or the sim's restart."""
        self.last_sample = None
        if k > 0:
            self._gap(k)

    def published(self, k_sample):
        """A row of sample step ``k_sample`` published."""
        if self.last_sample is not None and k_sample - self.last_sample > self.longest_steps:
            self._gap(k_sample - self.last_sample - self.period_steps)
        self.last_sample = k_sample
        self._in_pass += 1

    def pass_done(self):
        """The end of one pass over the queued truth; the size of the burst if it
        was longer than ``depth`` (else 0)."""
        n, self._in_pass = self._in_pass, 0
        if n <= self.depth:
            return 0
        self.counts['bursts_over_depth'] += 1
        self.counts['largest_burst'] = max(self.counts['largest_burst'], n)
        return n

    def _gap(self, missing_steps):
        self.counts['output_gaps'] += 1
        self.counts['samples_missing'] += max(1, int(round(missing_steps / self.period_steps)))

    def problem(self):
        """None, or one line on what a subscriber missed or may have lost."""
        c = self.counts
        parts = []
        if c['output_gaps']:
            parts.append(f'{c["output_gaps"]} gaps in the output (~{c["samples_missing"]} '
                         'samples missing)')
        if c['bursts_over_depth']:
            parts.append(f'{c["bursts_over_depth"]} catch-up bursts longer than the '
                         f'history of {self.depth} (largest {c["largest_burst"]} samples): '
                         'a subscriber keeping that many may have lost samples')
        return '; '.join(parts) or None
