"""acres_sim.ros.ack_pacing: when a node waits for its subscribers'
acknowledgements, for how long, and what it does about one that never
acknowledges (publishers stood in for by fakes; test_live_rig stops a real
subscriber)."""

import pytest

pytestmark = pytest.mark.requires_rclpy


class FakePublisher:
    """Acknowledged at once, or never (``stuck``): what rclpy's Publisher says."""

    def __init__(self, topic, stuck=False, subscribers=1):
        self.topic_name, self.stuck, self.subscribers = topic, stuck, subscribers
        self.waits = []            # the timeout of each wait [s]

    def get_subscription_count(self):
        return self.subscribers

    def wait_for_all_acked(self, timeout):
        self.waits.append(timeout.nanoseconds / 1e9)
        return not self.stuck


class FakeNode:
    def __init__(self):
        self.warnings = []

    def get_logger(self):
        return self

    def warning(self, text, **_throttle):
        self.warnings.append(text)


def test_it_waits_every_so_many_steps_and_never_with_zero():
    from acres_sim.ros.ack_pacing import AckPacing

    clock = FakePublisher('/clock')
    pacing = AckPacing(FakeNode(), 240, [clock, None])
    for k in range(1, 1000):
        pacing.after(k)
    assert len(clock.waits) == 4                   # steps 240, 480, 720, 960
    off = AckPacing(FakeNode(), 0, [clock])
    for k in range(1000):
        off.after(k)
    assert len(clock.waits) == 4


def test_a_subscriber_that_never_acknowledges_is_named_and_then_let_go(monkeypatch):
    """The wait is bounded for all publishers together; a publisher whose
    subscriber did not acknowledge is not waited for again until its number
    of subscribers changes."""
    from acres_sim.ros import ack_pacing
    from acres_sim.ros.ack_pacing import AckPacing

    now = [100.0]
    monkeypatch.setattr(ack_pacing.time, 'monotonic', lambda: now[0])
    fix, clock = FakePublisher('/oxts/fix', stuck=True), FakePublisher('/clock', stuck=True)

    def eat_the_timeout(timeout, wait=fix.wait_for_all_acked):
        now[0] += timeout.nanoseconds / 1e9         # a wait that runs to its end
        return wait(timeout)
    fix.wait_for_all_acked = eat_the_timeout
    node = FakeNode()
    pacing = AckPacing(node, 10, [fix, clock], timeout_s=5.0)
    pacing.after(10)
    assert fix.waits == [5.0] and clock.waits == [0.0]    # the rest of 5 s: nothing left
    assert pacing.waited_s == pytest.approx(5.0)
    assert len(node.warnings) == 1
    assert node.warnings[0].startswith('/oxts/fix, /clock: a subscriber has not acknowledged')
    pacing.after(20)                                       # both let go
    assert (len(fix.waits), len(clock.waits)) == (1, 1)
    clock.subscribers, clock.stuck = 2, False              # another subscriber came
    pacing.after(30)
    assert (len(fix.waits), len(clock.waits)) == (1, 2) and len(node.warnings) == 1
