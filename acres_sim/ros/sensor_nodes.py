"""Several sensor nodes in one process, on one executor: ``sensor_nodes``.

The rigs start the GNSS and IMU nodes of every vehicle this way (the
``sensor_processes`` option of :mod:`acres_sim.rig`: one process for the
rig's sensor nodes by default, or one per vehicle).  Each node stays a node
of its own -- its name, namespace, parameters, parameter services, topics
and logger are those it has when started alone as ``gnss_node`` /
``imu_node`` -- but the process imports numpy, numba and rclpy once, has one
DDS participant, and wakes once for the truth of every vehicle it serves:
at real time the wake-ups per truth message, not the models, were most of a
sensor node's CPU.

Command line, ahead of the ROS arguments::

    sensor_nodes --node gnss_node agent0/gnss_node FILE --node imu_node ... \\
        --ros-args -r __ns:=/demo

``--node KIND NAME FILE``: a node of ``KIND`` (``gnss_node`` or ``imu_node``)
named ``NAME`` (a name, after its namespace relative to the process's:
``agent0/gnss_node``) with its parameter file.  The process's own ROS
arguments (``-r __ns:=``, pushed by launch, a remapping, ``-p``, a log
level) reach every node; its namespace is put in front of each node's.  The
nodes that follow ``use_sim_time`` share one ``/clock`` subscription
(:func:`share_clock`).  A configuration mistake of one node is one line
naming it, and exit status 2.
"""

import argparse
import sys

from rclpy.time_source import CLOCK_TOPIC, TimeSource
from rclpy.utilities import remove_ros_args

from acres_sim.config import ConfigError
from acres_sim.ros.gnss_node import GnssNode
from acres_sim.ros.imu_node import ImuNode
from acres_sim.ros.sensor_node import run_nodes

__all__ = ['KINDS', 'base_namespace', 'main', 'node_options', 'share_clock']

EXECUTABLE = 'sensor_nodes'
KINDS = {node.executable: node for node in (GnssNode, ImuNode)}


def base_namespace(ros_args):
    """The namespace that ``-r __ns:=NS`` (or ``--remap``) among the process's
    ROS arguments gives it ('' without one): the last such rule, as rcl reads them."""
    namespace = ''
    for flag, rule in zip(ros_args, ros_args[1:]):
        if flag in ('-r', '--remap') and rule.startswith('__ns:='):
            namespace = rule[len('__ns:='):]
    return namespace.rstrip('/')


def node_options(base, name, params_file):
    """The Node options of a hosted node called ``name`` (``[NS/]NODE``, relative
    to ``base``): its own namespace and parameter file, given as the node's own
    arguments, which rcl reads before the process's (so they win over its ``__ns``)."""
    namespace, _, node = name.rpartition('/')
    full = '/'.join(part for part in (base, namespace) if part) or '/'
    if not full.startswith('/'):
        full = '/' + full
    return node, {'cli_args': ['--ros-args', '-r', f'__node:={node}', '-r', f'__ns:={full}',
                               '--params-file', params_file]}


def _ros_args(argv):
    """The arguments after the first ``--ros-args`` (up to a closing ``--``)."""
    if '--ros-args' not in argv:
        return []
    rest = argv[argv.index('--ros-args') + 1:]
    return rest[:rest.index('--')] if '--' in rest else rest


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ConfigError(message)


def parse(argv):
    """The nodes of the command line ``argv`` (without the program's name):
    (name, node class, Node options) each; a bad command is a ConfigError in one line."""
    parser = _Parser(prog=EXECUTABLE, add_help=False)
    parser.add_argument('--node', nargs=3, action='append', default=[],
                        metavar=('KIND', 'NAME', 'FILE'))
    own, unknown = parser.parse_known_args(remove_ros_args(['', *argv])[1:])
    if unknown:
        raise ConfigError(f'unknown argument {unknown[0]!r}; allowed: --node KIND NAME FILE')
    if not own.node:
        raise ConfigError('no --node KIND NAME FILE: no sensor node to run')
    base = base_namespace(_ros_args(argv))
    nodes = []
    for kind, name, params_file in own.node:
        if kind not in KINDS:
            raise ConfigError(f'--node {kind}: unknown kind; allowed: {", ".join(KINDS)}')
        _node, options = node_options(base, name, params_file)
        nodes.append((name, KINDS[kind], options))
    return nodes


def share_clock(nodes):
    """One ``/clock`` subscription for those of ``nodes`` that follow
    ``use_sim_time``: each node's own is dropped and its clock attached to one
    TimeSource on the first of them (which from then on also follows that
    node's ``use_sim_time``).  With 50 nodes, 50 subscriptions had each
    /clock message taken 50 times: a fifth of a core.  The TimeSource, or None."""
    following = [node for node in nodes if node.get_parameter('use_sim_time').value]
    if len(following) < 2:
        return None
    for node in following:
        for subscription in list(node.subscriptions):
            if subscription.topic_name == CLOCK_TOPIC:
                node.destroy_subscription(subscription)
    shared = TimeSource(node=following[0])
    for node in following:
        shared.attach_clock(node.get_clock())
    return shared


def _building(name, node_class, options):
    def build():
        try:
            return node_class(**options)
        except ConfigError as err:
            raise ConfigError(f'{name}: {err}') from None
    return build


def main(args=None):
    argv = sys.argv[1:] if args is None else list(args)
    try:
        nodes = parse(argv)
    except ConfigError as err:
        print(f'{EXECUTABLE}: {err}', file=sys.stderr)
        return 2
    return run_nodes(EXECUTABLE, [_building(*node) for node in nodes], GnssNode, ['', *argv],
                     prepare=share_clock)


if __name__ == '__main__':
    sys.exit(main())
