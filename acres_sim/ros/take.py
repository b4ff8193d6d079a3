"""Taking a subscription's waiting messages without a pass of the executor.

A pass of rclpy's executor (``spin_once``) costs 60-440 µs on this kind of
machine -- more than the work of a physics step.  The sim node therefore
takes its few inputs (cmd_vel, the sensors' progress) itself once per pass of
its loop, and a sensor node's truth callback takes every message queued
behind the one it was called with.  Both use the same call as rclpy's
executor (``Subscription.handle.take_message``).
"""

from rclpy.executors import SingleThreadedExecutor

__all__ = ['fast_executor', 'take_all']


def take_all(subscription, handle_message):
    """Call ``handle_message(message)`` for every message waiting on
    ``subscription``, oldest first; the number taken."""
    taken = 0
    with subscription.handle:
        while True:
            info = subscription.handle.take_message(subscription.msg_type, subscription.raw)
            if info is None:
                return taken
            handle_message(info[0])
            taken += 1


def fast_executor(context=None):
    """rclpy's EventsExecutor where this rclpy has it (Jazzy and later:
    about a fifth of the cost per callback), else the SingleThreadedExecutor."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor(context=context)
    return EventsExecutor(context=context)
