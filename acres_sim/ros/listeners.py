"""Publish a high-rate message only to a topic someone listens to.

A message published where no subscriber is matched goes nowhere (the rig's
high-rate topics are volatile: a subscriber that comes later never gets
it), yet rclpy and the middleware still spend a few microseconds on each (6 us
in the sim node with 25 vehicles).  With 25
vehicles the sim node publishes some 20,000 such messages a second (INS,
barometer, magnetometer, wheel odometry) and the sensor nodes thousands
more, most of them on topics nobody subscribes to.  :class:`Listeners`
asks each publisher for its subscriber count at most every
:data:`CHECK_S` of wall time and skips the publish while there is none: a
subscriber that matches meanwhile gets its first message at most that much
later than it would have.  The cost of a check is about 1 us.
"""

import time

__all__ = ['CHECK_S', 'Listeners']

CHECK_S = 0.05     # wall time between two looks at a publisher's subscriber count


class Listeners:
    """The publishers' subscriber counts, looked at again every ``check_s`` s."""

    def __init__(self, check_s=CHECK_S):
        self.check_s = check_s
        self._heard = {}             # publisher -> it has a subscriber
        self._since = -float('inf')  # time.monotonic() of the counts in _heard

    def publish(self, publisher, data):
        """``publisher.publish(data)`` if the publisher has a subscriber; whether it did."""
        now = time.monotonic()
        if now - self._since > self.check_s:
            self._heard.clear()
            self._since = now
        heard = self._heard.get(publisher)
        if heard is None:
            heard = self._heard[publisher] = publisher.get_subscription_count() > 0
        if heard:
            publisher.publish(data)
        return heard
