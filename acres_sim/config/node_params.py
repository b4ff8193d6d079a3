"""The live nodes' own parameters (not sensor keys): how the sim node runs and
which vehicle a node belongs to.  Like the sensor keys of the schema, each is
described once here (type, default, limits, description), and the nodes
declare them from this table, so ``ros2 param describe`` shows the same words.

The sensor keys of the schema are parameters of the nodes too: top-level in a
GNSS or IMU node (its vehicle's configuration), and under
``agents.<name>.`` in the sim node, once per vehicle it simulates.
"""

from dataclasses import dataclass
import math
from typing import Any, Optional

from acres_sim.config.validate import ConfigError

__all__ = ['AGENT_PARAMS', 'FAST_OUTPUT_DEPTH', 'GNSS_NODE_PARAMS', 'OUTPUT_DEPTH', 'NodeParam',
           'SCENE', 'SENSOR_NODE_PARAMS', 'SIM_PARAMS', 'VEHICLES', 'check_param']

VEHICLES = ('polaris', 'maxxum')


@dataclass(frozen=True)
class NodeParam:
    """One node parameter; ``kind`` is 'bool', 'int', 'float', 'str' or 'vec3'
    (three numbers; a default of None: not set) (``choices`` limit a str;
    ``low``/``high`` a number, ``low_open``: > low)."""

    name: str
    kind: str
    default: Any
    description: str
    unit: str = ''
    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    choices: Optional[tuple] = None

    def allowed(self) -> str:
        if self.kind == 'bool':
            return 'true or false'
        if self.choices:
            return ' or '.join(self.choices)
        if self.kind == 'str':
            return 'a string'
        if self.kind == 'vec3':
            return 'three numbers' + (f' ({self.unit})' if self.unit else '')
        unit = f' {self.unit}' if self.unit else ''
        if self.low is not None and self.high is not None:
            return f'{self.low:g} to {self.high:g}{unit}'
        if self.low is not None:
            return f'{">" if self.low_open else ">="} {self.low:g}{unit}'
        return f'any number{unit}'


def check_param(p: NodeParam, value, source):
    """``value`` checked against ``p`` (ConfigError naming the parameter, the
    value, what is allowed and ``source``); ints are accepted for floats."""
    def fail(problem):
        return ConfigError(f'{p.name} = {value!r} (in {source}): {problem}; '
                           f'allowed: {p.allowed()}')
    if p.kind == 'bool':
        if not isinstance(value, bool):
            raise fail('expected true or false')
        return value
    if p.kind == 'str':
        if not isinstance(value, str):
            raise fail('expected a string')
        if p.choices and value not in p.choices:
            raise fail('not one of the choices')
        return value
    if p.kind == 'vec3':
        if value is None:
            return None
        if not isinstance(value, (list, tuple)) or len(value) != 3 or any(
                isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                for v in value):
            raise fail('expected three finite numbers')
        return [float(v) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail('expected a number')
    if p.kind == 'int' and not isinstance(value, int):
        raise fail('expected an integer')
    if not math.isfinite(value):
        raise fail('not a finite number')
    if p.low is not None and (value <= p.low if p.low_open else value < p.low):
        raise fail('out of range')
    if p.high is not None and value > p.high:
        raise fail('out of range')
    return float(value) if p.kind == 'float' else int(value)


# The sim node and the GNSS nodes: the scene (the sky view's obstacles).
SCENE = NodeParam('scene', 'str', '', 'Scene file: the obstacles of the GNSS sky view (empty: '
                  'the packaged ACRE farmstead).')

# Every node of the rig.
OUTPUT_DEPTH = NodeParam(
    'output_depth', 'int', 10, 'History depth of the node\'s publishers. 10 as usual; at rtf 0 '
    'the rigs set 1200, so that a message the transport drops while a reader is starved of '
    'CPU can still be sent again.', low=1, high=100000)
FAST_OUTPUT_DEPTH = 1200

SIM_PARAMS = (
    OUTPUT_DEPTH,
    NodeParam('rtf', 'float', 1.0, 'Real-time factor of the simulation: 1 is real time, '
              '2 twice as fast; 0 runs as fast as the sensor nodes keep up.', low=0.0, high=1000.0),
    NodeParam('lookahead_steps', 'int', 6, 'At rtf > 0: physics steps computed at a time, '
              'ahead of their time, each published at its own time (a cmd_vel takes effect at '
              'the next block; 1: every step computed at its time, costing more CPU).',
              low=1, high=120),
    NodeParam('duration_s', 'float', 0.0, 'Simulated time after which the sim node stops '
              '(0: run until stopped).', 's', low=0.0),
    NodeParam('start_timeout_s', 'float', 30.0, 'At the start, wait this long (wall time) at '
              "most for every vehicle's GNSS and IMU nodes to subscribe to its truth, so that "
              'they see the first step (0: do not wait).', 's', low=0.0, high=3600.0),
    NodeParam('start_subscribers', 'int', 0, 'At the start, also wait (within start_timeout_s) '
              'until every topic the sim node publishes has this many subscribers besides the '
              'sensor nodes, e.g. 1 for a ros2 bag record started first.', low=0, high=100),
    NodeParam('publish_tf', 'bool', True, 'Publish the TF utm -> base_footprint of each vehicle '
              '(switch it off when an EKF owns the transform to base_footprint).'),
    NodeParam('follow_route', 'bool', True, 'Without cmd_vel the route follower drives each '
              'vehicle; false: they stay parked until their first cmd_vel (e.g. for nav2).'),
    NodeParam('cmd_vel.type', 'str', 'twist', 'Message type of cmd_vel: geometry_msgs/Twist '
              'or geometry_msgs/TwistStamped (nav2 on Kilted and later).',
              choices=('twist', 'twist_stamped')),
    NodeParam('cmd_vel.timeout_s', 'float', 0.5, 'A vehicle whose last cmd_vel is older than '
              'this (sim time) brakes to a stop; without any cmd_vel its route follower drives.',
              's', low=0.0, low_open=True, high=60.0),
    SCENE,
)

# Per simulated vehicle, under agents.<name>. in the sim node.
AGENT_PARAMS = (
    NodeParam('vehicle', 'str', 'polaris', 'Vehicle model and topic set.', choices=VEHICLES),
    NodeParam('namespace', 'str', '', 'ROS namespace of the vehicle\'s topics (empty: none).'),
    NodeParam('frame_prefix', 'str', '', 'Prefix of the vehicle\'s frame names, e.g. agent1/ '
              '(utm and map are shared).'),
    NodeParam('route', 'str', '', 'Route the follower drives: a packaged name (acre_demo, '
              "field, figure8, loop, ...) or a file; empty: the vehicle's default."),
    NodeParam('laps', 'int', 0, 'Laps of a closed route, then the vehicle parks where it '
              'started (0: drive the route once and park at its end).', low=0, high=100000),
    NodeParam('repeat', 'bool', False, 'Drive a closed route again and again until the run '
              'ends.'),
    NodeParam('parked', 'bool', False, 'No route follower: the vehicle stays parked until its '
              'first cmd_vel.'),
    NodeParam('spawn', 'vec3', None, 'Where the vehicle starts: its chassis origin on the '
              'ground in grid ENU and its heading counter-clockwise from east (not set: on '
              'its route at route_start_m).', 'east m, north m, yaw rad'),
    NodeParam('route_start_m', 'float', 0.0, 'Arc length along the route at which the vehicle '
              'joins it.', 'm', low=0.0),
    NodeParam('route_end_m', 'float', 0.0, 'Arc length along the route at which it stops, on a '
              'route it drives once (0: the end of the route).', 'm', low=0.0),
)

# The GNSS node's own, besides SENSOR_NODE_PARAMS.
GNSS_NODE_PARAMS = (SCENE,)

# The GNSS and IMU nodes: which vehicle they sit on, their publishers' depth.
SENSOR_NODE_PARAMS = (
    NodeParam('vehicle', 'str', 'polaris', 'Vehicle the sensor is mounted on (its geometry '
              'turns the mounts into lever arms).', choices=VEHICLES),
    NodeParam('frame_prefix', 'str', '', "Prefix of the sensor's frame name, e.g. agent1/."),
    OUTPUT_DEPTH,
)
