"""Inject a fault event into a running rig, or clear one, and wait for the
sim node's answer: ``acres-sim inject`` and the same call from Python::

    from acres_sim.inject import inject_event
    entry = inject_event({'type': 'fix_cap', 'state': 'dgps', 'duration_s': 30})
    # {'log': 'inject', 'step': 7260, 'event': {...}, 'id': ...}

The request goes to ``events/inject`` of the rig's namespace and the answer
is the sim node's entry of the event log (``events/log``) with the request's
id: ``inject`` or ``clear`` (accepted, with the step it takes effect at) or
``refused`` (with the one-line reason, raised as :class:`InjectRefused`).
Uses the ROS environment of the caller (ROS_DOMAIN_ID, discovery range).
"""

import json
import time
import uuid

__all__ = ['InjectFailed', 'InjectRefused', 'inject_event']

MATCH_TIMEOUT_S = 15.0      # for the sim node's subscription to show up


class InjectFailed(RuntimeError):
    """No sim node answered (none running in that namespace and domain)."""


class InjectRefused(ValueError):
    """The sim node refused the request; ``str()`` is its one-line reason."""


def _topic(namespace, name):
    ns = namespace.strip('/')
    return f'/{ns}/{name}' if ns else f'/{name}'


def inject_event(event=None, clear=None, namespace='', timeout_s=10.0):
    """Send ``event`` (a mapping, as in a scenario's ``events:``) or ``clear``
    (an event's name) to the rig in ``namespace``; the log entry that answers it.
    InjectRefused when the sim node refuses it, InjectFailed when none answers
    within ``timeout_s`` (after the sim's subscription is seen)."""
    import rclpy
    from std_msgs.msg import String

    from acres_sim.pipeline.event_topics import EVENT_LOG_TOPIC
    from acres_sim.ros.event_injection import INJECT_TOPIC, request_text
    from acres_sim.ros.qos import EVENT_LOG_QOS, OUTPUT_QOS

    if (event is None) == (clear is None):
        raise ValueError('give an event or the name of one to clear')
    request_id = uuid.uuid4().hex
    owned = not rclpy.ok()
    if owned:
        rclpy.init()
    node = rclpy.create_node(f'acres_sim_inject_{request_id[:8]}')
    answers = []
    try:
        def on_log(m):
            try:
                entry = json.loads(m.data)
            except ValueError:
                return
            if isinstance(entry, dict) and entry.get('id') == request_id:
                answers.append(entry)

        node.create_subscription(String, _topic(namespace, EVENT_LOG_TOPIC), on_log,
                                 EVENT_LOG_QOS)
        pub = node.create_publisher(String, _topic(namespace, INJECT_TOPIC), OUTPUT_QOS)
        deadline = time.monotonic() + MATCH_TIMEOUT_S
        while pub.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                raise InjectFailed(f'no sim node subscribes to {pub.topic_name} (is the rig '
                                   'running, in this namespace and ROS_DOMAIN_ID?)')
            rclpy.spin_once(node, timeout_sec=0.05)
        pub.publish(String(data=request_text(event, clear, request_id)))
        deadline = time.monotonic() + timeout_s
        while not answers:
            if time.monotonic() > deadline:
                raise InjectFailed(f'the sim node did not answer within {timeout_s:g} s')
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        node.destroy_node()
        if owned:
            rclpy.try_shutdown()
    entry = answers[0]
    if entry['log'] == 'refused':
        raise InjectRefused(entry['error'])
    return entry
