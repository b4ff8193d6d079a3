"""The live nodes' own parameters (not sensor keys): how the sim node runs and
which vehicle a node belongs to.  Like the sensor keys of the schema, each is
described once here as a :class:`acres_sim.config.schema.Key` (type, default,
limits, description) and checked by :func:`acres_sim.config.validate.check`;
the nodes declare them from this table, so ``ros2 param describe`` shows the
same words.

The sensor keys of the schema are parameters of the nodes too: top-level in a
GNSS or IMU node (its vehicle's configuration), and under
``agents.<name>.`` in the sim node, once per vehicle it simulates.
"""

from acres_sim.config.schema import NON_BLANK, Key

__all__ = ['ACK_EVERY_STEPS', 'AGENT_NAMES', 'AGENT_PARAMS', 'EVENTS', 'FAST_ACK_EVERY_STEPS',
           'FAST_OUTPUT_DEPTH', 'GNSS_NODE_PARAMS', 'OUTPUT_DEPTH',
           'SCENE', 'SENSOR_NODE_PARAMS', 'SIM_PARAMS', 'TERRAIN', 'VEHICLES', 'sim_param']

VEHICLES = ('polaris', 'maxxum')


def _param(name, kind, default, description, unit='', **limits):
    """A node parameter: a :class:`Key` of acres_sim's own (not a sensor key)."""
    return Key(name, kind, default, description, unit, spec=False, **limits)


# The sim node and the GNSS nodes: the scene (the sky view's obstacles).
SCENE = _param('scene', 'str', '', 'Scene file: the obstacles of the GNSS sky view (empty: '
               'the packaged ACRE farmstead).')

# The sim node: the ground under the wheels (the physics lives there).
TERRAIN = _param('terrain', 'str', 'flat', 'Terrain: the ground under the wheels, flat (the '
                 'plane of the physics), a packaged terrain (acre) or a terrain file.',
                 pattern=NON_BLANK,
                 pattern_words='flat, a packaged terrain name or a terrain file')

# Every node of a vehicle: its fault events (written by the rig from the scenario).
EVENTS = _param('events', 'str', '', 'Fault events of the vehicle, as JSON {"events": [...]} '
                '(the rig writes it from the scenario\'s events; empty: none).')

# Every node of the rig.
OUTPUT_DEPTH = _param(
    'output_depth', 'int', 10, 'History depth of the node\'s publishers. 10 as usual; at rtf 0 '
    'the rigs set 1200, so that a message the transport drops while a reader is starved of '
    'CPU can still be sent again.', low=1, high=100000)
FAST_OUTPUT_DEPTH = 1200
ACK_EVERY_STEPS = _param(
    'ack_every_steps', 'int', 0, 'Every this many physics steps, wait (5 s at most) until every '
    'reliable subscriber has acknowledged all the node published, so that none loses a message '
    'its history no longer holds; the rigs set 240 at rtf 0 (0: never wait).', low=0,
    high=100000)
FAST_ACK_EVERY_STEPS = 240

SIM_PARAMS = (
    OUTPUT_DEPTH,
    ACK_EVERY_STEPS,
    _param('rtf', 'float', 1.0, 'Real-time factor of the simulation: 1 is real time, '
           '2 twice as fast; 0 runs as fast as the sensor nodes keep up.', low=0.0, high=1000.0),
    _param('lookahead_steps', 'int', 6, 'At rtf > 0: physics steps computed at a time, '
           'ahead of their time, each published at its own time (a cmd_vel takes effect at '
           'the next block; 1: every step computed at its time, costing more CPU).',
           low=1, high=120),
    _param('duration_s', 'float', 0.0, 'Simulated time after which the sim node stops '
           '(0: run until stopped).', 's', low=0.0),
    _param('start_timeout_s', 'float', 30.0, 'At the start, wait this long (wall time) at '
           "most for every vehicle's GNSS and IMU nodes to subscribe to its truth, so that "
           'they see the first step (0: do not wait).', 's', low=0.0, high=3600.0),
    _param('start_subscribers', 'int', 0, 'At the start, also wait (within start_timeout_s) '
           'until every topic the sim node publishes has this many subscribers besides the '
           'sensor nodes, e.g. 1 for a ros2 bag record started first.', low=0, high=100),
    _param('publish_tf', 'bool', True, 'Publish the TF utm -> base_footprint of each vehicle '
           '(switch it off when an EKF owns the transform to base_footprint).'),
    _param('follow_route', 'bool', True, 'Without cmd_vel the route follower drives each '
           'vehicle; false: they stay parked until their first cmd_vel (e.g. for nav2).'),
    _param('cmd_vel.type', 'str', 'twist', 'Message type of cmd_vel: geometry_msgs/Twist '
           'or geometry_msgs/TwistStamped (nav2 on Kilted and later).',
           choices=('twist', 'twist_stamped')),
    _param('cmd_vel.timeout_s', 'float', 0.5, 'A vehicle whose last cmd_vel is older than '
           'this (sim time) brakes to a stop; without any cmd_vel its route follower drives.',
           's', low=0.0, low_open=True, high=60.0),
    SCENE,
    TERRAIN,
)
_SIM_BY_NAME = {p.name: p for p in SIM_PARAMS}

# The sim node's list of its vehicles.
AGENT_NAMES = _param('agents.names', 'names', ['agent0'], 'Names of the simulated vehicles; '
                     'each has its parameters under agents.<name>.')

# Per simulated vehicle, under agents.<name>. in the sim node.
AGENT_PARAMS = (
    _param('vehicle', 'str', 'polaris', 'Vehicle model and topic set.', choices=VEHICLES),
    _param('namespace', 'str', '', 'ROS namespace of the vehicle\'s topics, relative to '
           "the sim node's own (empty: the sim node's namespace)."),
    _param('frame_prefix', 'str', '', 'Prefix of the vehicle\'s frame names, e.g. agent1/ '
           '(utm and map are shared).'),
    _param('route', 'str', '', 'Route the follower drives: a packaged name (acre_demo, '
           "field, figure8, loop) or a file; empty: the vehicle's default."),
    _param('laps', 'int', 0, 'Laps of a closed route, then the vehicle parks where it '
           'started (0: drive the route once and park at its end).', low=0, high=100000),
    _param('repeat', 'bool', False, 'Drive a closed route again and again until the run '
           'ends.'),
    _param('parked', 'bool', False, 'No route follower: the vehicle stays parked until its '
           'first cmd_vel.'),
    _param('spawn', 'vec3', None, 'Where the vehicle starts: its chassis origin on the '
           'ground in grid ENU and its heading counter-clockwise from east (not set: on '
           'its route at route_start_m): east m, north m, yaw rad.'),
    _param('route_start_m', 'float', 0.0, 'Arc length along the route at which the vehicle '
           'joins it.', 'm', low=0.0),
    _param('route_end_m', 'float', 0.0, 'Arc length along the route at which it stops, on a '
           'route it drives once (0: the end of the route).', 'm', low=0.0),
    EVENTS,
)

# The GNSS node's own, besides SENSOR_NODE_PARAMS.
GNSS_NODE_PARAMS = (SCENE,)

# The GNSS and IMU nodes: which vehicle they sit on, their publishers' depth.
SENSOR_NODE_PARAMS = (
    _param('vehicle', 'str', 'polaris', 'Vehicle the sensor is mounted on (its geometry '
           'turns the mounts into lever arms).', choices=VEHICLES),
    _param('frame_prefix', 'str', '', "Prefix of the sensor's frame name, e.g. agent1/."),
    OUTPUT_DEPTH,
    ACK_EVERY_STEPS,
    EVENTS,
)


def sim_param(name) -> Key:
    """The sim node parameter ``name`` (KeyError if there is none)."""
    return _SIM_BY_NAME[name]
