"""acres_sim.ros.listeners: a message goes out only where a subscriber is
matched, and the count is asked again once the check interval has passed.
The interval is set to never or always, so nothing here depends on the
wall clock."""

import pytest

from acres_sim.ros.listeners import Listeners


class Publisher:
    """What Listeners uses of an rclpy Publisher, counted."""

    def __init__(self, subscribers):
        self.subscribers = subscribers
        self.asked = 0
        self.sent = []

    def get_subscription_count(self):
        self.asked += 1
        return self.subscribers

    def publish(self, data):
        self.sent.append(data)


def test_nothing_goes_to_a_topic_without_subscribers():
    heard, unheard = Publisher(2), Publisher(0)
    listeners = Listeners(check_s=float('inf'))
    for i in range(5):
        listeners.publish(heard, i)
        listeners.publish(unheard, i)
    assert heard.sent == [0, 1, 2, 3, 4] and unheard.sent == []
    assert heard.asked == unheard.asked == 1          # once, until the interval passes


def test_the_count_is_asked_again_after_the_interval():
    publisher = Publisher(0)
    listeners = Listeners(check_s=-1.0)               # every publish is past the interval
    listeners.publish(publisher, 'a')
    publisher.subscribers = 1                         # a subscriber matched meanwhile
    listeners.publish(publisher, 'b')
    publisher.subscribers = 0                         # and left
    listeners.publish(publisher, 'c')
    assert publisher.sent == ['b'] and publisher.asked == 3


def test_within_the_interval_a_new_subscriber_waits_for_the_next_look():
    publisher = Publisher(0)
    listeners = Listeners(check_s=float('inf'))
    listeners.publish(publisher, 'a')
    publisher.subscribers = 1
    listeners.publish(publisher, 'b')
    assert publisher.sent == [] and publisher.asked == 1


@pytest.mark.requires_rclpy
def test_a_real_publisher_counts_a_subscription_of_the_same_process(ros_context):
    """With rclpy: the count Listeners asks for includes a subscription made
    after the publisher, and the message then arrives."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String

    node = rclpy.create_node('listeners_test', context=ros_context)
    try:
        publisher = node.create_publisher(String, 'listeners_test', 10)
        listeners = Listeners(check_s=-1.0)
        listeners.publish(publisher, String(data='to nobody'))
        got = []
        node.create_subscription(String, 'listeners_test', lambda m: got.append(m.data), 10)
        executor = SingleThreadedExecutor(context=ros_context)
        executor.add_node(node)
        for _ in range(200):           # until matched (discovery within the process)
            if publisher.get_subscription_count():
                break
            executor.spin_once(timeout_sec=0.05)
        listeners.publish(publisher, String(data='heard'))
        for _ in range(200):
            if got:
                break
            executor.spin_once(timeout_sec=0.05)
        assert got == ['heard']
    finally:
        node.destroy_node()
