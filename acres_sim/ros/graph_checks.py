"""What the sim node looks for in the ROS graph: another simulator on its
domain (its sensor nodes would take both sims' truth), and cmd_vel publishers
of a type the sim does not subscribe to (their commands never arrive).

Each check is one question to the graph of the node's own participant (what
DDS discovery has found so far), answered as text for one log line.
"""

__all__ = ['CMD_VEL_TYPES', 'NOT_NAMED', 'cmd_vel_mismatches', 'other_simulator_error',
           'other_simulators']

CMD_VEL_TYPES = {'twist': 'geometry_msgs/msg/Twist',
                 'twist_stamped': 'geometry_msgs/msg/TwistStamped'}


UNKNOWN = '_NODE_NAME_UNKNOWN_'   # rmw's name of an endpoint whose node is not discovered yet


NOT_NAMED = 'a node not yet named by discovery'


def _full_name(info):
    if info.node_name == UNKNOWN:
        return NOT_NAMED
    namespace = info.node_namespace.rstrip('/')
    return f'{namespace}/{info.node_name}'


def other_publishers(node, topic):
    """The full names of the publishers of ``topic`` besides ``node``'s own one."""
    names = sorted(_full_name(info) for info in node.get_publishers_info_by_topic(topic))
    own = node.get_fully_qualified_name()
    if own in names:           # our publisher (another one of the same name stays)
        names.remove(own)
    return names


def other_simulators(node, topics):
    """None, or (topic, full names) of the first of ``topics`` (topics that
    ``node`` publishes once each, e.g. /clock and the truth) that other nodes
    publish too."""
    for topic in topics:
        others = other_publishers(node, topic)
        if others:
            return topic, sorted(set(others))
    return None


def other_simulator_error(node, topic, others):
    """The line that stops a sim that is not alone: who, and how to get a
    domain of its own."""
    domain = node.context.get_domain_id()
    return (f'another simulator runs on ROS_DOMAIN_ID {domain}: {", ".join(others)} publishes '
            f'{topic} too, and the sensor nodes would mix both; stop it, or start this rig '
            f'on a domain of its own, e.g. ROS_DOMAIN_ID={(domain + 1) % 102} (0 to 101, the '
            'same for every node of the rig and its users)')


def cmd_vel_mismatches(node, topics, cmd_vel_type):
    """None, or one line naming the publishers of ``topics`` (the vehicles'
    cmd_vel) whose message type is not the one of ``cmd_vel_type``, and the
    option that switches (a publisher whose node is not known yet waits for
    the next check, so that the line can name it)."""
    expected = CMD_VEL_TYPES[cmd_vel_type]
    wrong = sorted({(topic, _full_name(info), info.topic_type) for topic in topics
                    for info in node.get_publishers_info_by_topic(topic)
                    if info.topic_type != expected and info.node_name != UNKNOWN})
    if not wrong:
        return None
    seen = ', '.join(f'{name} publishes {kind} on {topic}' for topic, name, kind in wrong)
    switch = {kind for _t, _n, kind in wrong} & set(CMD_VEL_TYPES.values())
    if switch:
        other = next(k for k, v in CMD_VEL_TYPES.items() if v in switch)
        how = (f'set cmd_vel.type {other} (acres-sim up --cmd-vel-type {other}, launch '
               f'cmd_vel_type:={other})')
    else:
        how = ('cmd_vel.type takes twist (geometry_msgs/msg/Twist) or twist_stamped '
               '(geometry_msgs/msg/TwistStamped)')
    return (f'{seen}, but the sim takes {expected} (cmd_vel.type {cmd_vel_type}): those '
            f'commands are ignored; {how}')
