"""The times a delivered row carries in its jsonl file (spec: Emit and Drain):
when the sensor sampled, when the sample became available, when the delay
line delivered it (null: the run ended before its time came).  The recorder
writes these rows; the live nodes stamp their messages from the same steps.
A row sampled while fault events are active names them under ``events``
(:func:`with_event_names`; no key when none is).  Nothing here loads numba:
the row writer process imports it.
"""

from acres_sim.core.truth import PHYSICS_HZ

__all__ = ['EVENTS_KEY', 'imu_row', 'timed_row', 'with_event_names']

EVENTS_KEY = 'events'


def with_event_names(row, names):
    """``row`` with the ``names`` of the active events (as it is without any)."""
    if names:
        row[EVENTS_KEY] = list(names)
    return row


def imu_row(values, names=()):
    """The imu.jsonl row of one sample's six rounded values (specific force,
    then angular rate, body FLU), with the ``names`` of the active events."""
    return with_event_names({'specific_force_flu_mps2': values[:3],
                             'angular_velocity_flu_radps': values[3:]}, names)


def timed_row(row, k_sample, delivery_time, delay_s):
    """A model row with the scheduler's sample, available and delivery times."""
    t = k_sample / PHYSICS_HZ
    return {**row, 'sample_time_s': t, 'available_time_s': t + delay_s,
            'delivery_time_s': delivery_time}
