"""At rtf 0: a node's pace held to what its reliable subscribers acknowledge.

A reliable publisher keeps its last ``output_depth`` messages for the
subscribers that have not acknowledged them yet; a subscriber short of CPU
(a logger on a busy machine) asks again for what the transport dropped, but
only gets it while the message is still in that history.  At rtf 0 nothing
else holds the rig back for such a subscriber: the sim waits for its sensor
nodes, not for them.  So every ``ack_every_steps`` physics steps each node
waits until every reliable subscriber of its publishers has acknowledged all
it published (rclpy's ``Publisher.wait_for_all_acked``): between two waits it
publishes far fewer messages than its history holds, and none is lost.

A subscriber that does not acknowledge within :data:`ACK_TIMEOUT_S` (for
all publishers together; a stopped process, whose lease has not run out yet)
is named in a warning, and that publisher is not waited for again until its
number of subscribers changes.  Best-effort subscribers acknowledge nothing
and are never waited for.
"""

import time

from rclpy.duration import Duration

__all__ = ['ACK_TIMEOUT_S', 'AckPacing', 'unacknowledged']

ACK_TIMEOUT_S = 5.0
LOG_THROTTLE_S = 5.0


def unacknowledged(publishers, timeout_s):
    """Wait, ``timeout_s`` at most for all of ``publishers`` together, until
    their reliable subscribers have acknowledged everything; those whose
    subscribers have not (once the time is up, the rest are only asked)."""
    deadline = time.monotonic() + timeout_s
    late = []
    for publisher in publishers:
        left = max(deadline - time.monotonic(), 0.0)
        if not publisher.wait_for_all_acked(Duration(nanoseconds=int(left * 1e9))):
            late.append(publisher)
    return late


class AckPacing:
    """Every ``every`` steps (0: never), :meth:`after` waits until the
    reliable subscribers of ``publishers`` have acknowledged everything."""

    def __init__(self, node, every, publishers, timeout_s=ACK_TIMEOUT_S):
        self.node = node
        self.every = int(every)
        self.publishers = [p for p in publishers if p is not None]
        self.timeout_s = timeout_s
        self.skipped = {}        # publisher -> its subscriber count when it timed out
        self.waited_s = 0.0      # time spent waiting so far

    def after(self, k):
        """Step ``k`` is published: wait for the acknowledgements when it is due."""
        if self.every <= 0 or k % self.every != 0:
            return
        started = time.monotonic()
        waited = {}              # publisher -> its subscriber count now
        for publisher in self.publishers:
            count = publisher.get_subscription_count()
            if self.skipped.get(publisher) != count:
                self.skipped.pop(publisher, None)
                waited[publisher] = count
        late = unacknowledged(waited, self.timeout_s)
        self.skipped.update((publisher, waited[publisher]) for publisher in late)
        late = [publisher.topic_name for publisher in late]
        if late:
            self.node.get_logger().warning(
                f'{", ".join(late)}: a subscriber has not acknowledged the last messages '
                f'within {self.timeout_s:g} s: not waiting for it any more (at rtf 0 it may '
                'miss messages)', throttle_duration_sec=LOG_THROTTLE_S)
        self.waited_s += time.monotonic() - started
