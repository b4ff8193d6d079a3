"""The times a delivered row carries in its jsonl file (spec: Emit and Drain):
when the sensor sampled, when the sample became available, when the delay
line delivered it (null: the run ended before its time came).  The recorder
writes these rows; the live nodes stamp their messages from the same steps.
"""

from acres_sim.core.truth import PHYSICS_HZ

__all__ = ['timed_row']


def timed_row(row, k_sample, delivery_time, delay_s):
    """A model row with the scheduler's sample, available and delivery times."""
    t = k_sample / PHYSICS_HZ
    return {**row, 'sample_time_s': t, 'available_time_s': t + delay_s,
            'delivery_time_s': delivery_time}
