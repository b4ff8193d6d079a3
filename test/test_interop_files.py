"""The interop files (docs/interop.md, config/rviz/acres_sim.rviz,
config/examples/*.yaml) name only what the rig really offers.

Plain Python (no rviz2, robot_localization or nav2 needed): the rviz config and
the parameter files are read as YAML and checked against the rig's topic and
frame names from acres_sim.pipeline.topics; the robot_localization parameter names
against the ones robot_localization declares (humble-devel / ros2 branches:
src/ros_filter.cpp, src/navsat_transform.cpp); the command lines of the
document against acres-sim's own parser.  One test lets rcl read the example
files (skipped without rclpy).
"""

import ast
import re
import shlex
from pathlib import Path

import pytest
import yaml

from acres_sim.cli import build_parser
from acres_sim.config import load_config
from acres_sim.config.vehicles import load_vehicle
from acres_sim.pipeline.models import site_georeference
from acres_sim.pipeline.step_channels import STEP_SENSORS
from acres_sim.pipeline.topics import (GNSS_TOPICS, IMU_TOPIC, INS_TOPICS, mount_transforms,
                                       utm_to_map)

ROOT = Path(__file__).resolve().parents[1]
RVIZ = ROOT / 'config' / 'rviz' / 'acres_sim.rviz'
EXAMPLES = ROOT / 'config' / 'examples'
DOC = ROOT / 'docs' / 'interop.md'
EXAMPLE_FILES = sorted(EXAMPLES.glob('*.yaml'))

GLOBAL_TOPICS = ('clock', 'tf', 'tf_static', 'diagnostics')


def vehicle_topics(rig):
    """What one vehicle of ``rig`` publishes, without the leading '/' (its
    further sensors those of its packaged equipment)."""
    t = INS_TOPICS[rig]
    config = load_config(rig=rig)
    further = {topic for name, channel in STEP_SENSORS.items() if config[f'{name}.enabled']
               for topic, _type in channel.topic_types}
    return {name for name in (t.odom, t.fix, t.imu, t.velocity, t.truth) if name} | \
        set(GNSS_TOPICS.values()) | {IMU_TOPIC} | further


RIG_TOPICS = set(GLOBAL_TOPICS) | vehicle_topics('polaris') | vehicle_topics('maxxum')
# The INS odometry and the ground truth: nav_msgs/Odometry in frame utm.
UTM_ODOMETRY = {t for rig in INS_TOPICS for t in (INS_TOPICS[rig].odom, INS_TOPICS[rig].truth)}
IMU_WITHOUT_ORIENTATION = {IMU_TOPIC}
DEGREES_PER_SECOND = {INS_TOPICS['polaris'].velocity}
# Topics the examples' own nodes publish: navsat_transform_node's output.
EXAMPLE_OUTPUTS = {'odometry/gps'}
# The frame the examples' EKFs add between map and base_footprint.
EKF_FRAMES = {'odom'}


def rig_frames():
    """Every frame the rig's TF names (no agent prefix)."""
    frames = set()
    for rig in INS_TOPICS:
        config = load_config(rig=rig)
        for parent, child, _t, _q in mount_transforms(config, load_vehicle(rig), rig):
            frames |= {parent, child}
        parent, child, _t, _q = utm_to_map(config, site_georeference(config))
        frames |= {parent, child}
    return frames


RIG_FRAMES = rig_frames()


def test_the_rig_frames_are_the_documented_ones():
    assert RIG_FRAMES == {'utm', 'map', 'base_footprint', 'gnss_antenna', 'imu_link',
                          'oxts_link', 'navsat_link', 'gnss_link', 'oxts_imu_link',
                          'radar_link'}


def bare(topic):
    return topic[1:] if topic.startswith('/') else topic


# -- rviz2 -------------------------------------------------------------------

# rviz_default_plugins/plugins_description.xml (humble, jazzy, rolling): displays.
RVIZ_DISPLAYS = {'AccelStamped', 'Axes', 'Camera', 'DepthCloud', 'Effort', 'Grid', 'GridCells',
                 'FluidPressure', 'Illuminance', 'Image', 'InteractiveMarkers', 'LaserScan', 'Map',
                 'PointCloud', 'Polygon', 'Pose', 'PoseWithCovariance', 'Range',
                 'RelativeHumidity', 'RobotModel', 'Temperature', 'TF', 'TwistStamped', 'Marker',
                 'MarkerArray', 'Odometry', 'PoseArray', 'Path', 'PointStamped', 'Wrench'}
QOS_VALUES = {'History Policy': {'Keep Last', 'Keep All', 'System Default'},
              'Reliability Policy': {'Reliable', 'Best Effort', 'System Default'},
              'Durability Policy': {'Volatile', 'Transient Local', 'System Default'}}


def rviz_config(path=RVIZ):
    return yaml.safe_load(path.read_text(encoding='utf-8'))


def rviz_displays(displays):
    """Every display of a Displays list, the ones inside groups included."""
    for display in displays or []:
        yield display
        yield from rviz_displays(display.get('Displays'))


def test_rviz_config_is_an_rviz2_config_with_fixed_frame_map():
    config = rviz_config()
    manager = config['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == 'map'
    assert {p['Class'] for p in config['Panels']} >= {'rviz_common/Displays',
                                                      'rviz_common/Views'}
    for display in rviz_displays(manager['Displays']):
        package, _, name = display['Class'].partition('/')
        assert package == 'rviz_default_plugins' and name in RVIZ_DISPLAYS, display['Class']
        assert isinstance(display['Enabled'], bool) and display['Name']


def test_rviz_topics_are_rig_topics_with_matching_qos():
    displays = list(rviz_displays(rviz_config()['Visualization Manager']['Displays']))
    topics = [d for d in displays if 'Topic' in d]
    assert topics
    for display in topics:
        topic = display['Topic']
        assert isinstance(topic, dict), f'{display["Name"]}: Topic with its QoS expected'
        assert bare(topic['Value']) in RIG_TOPICS, topic['Value']
        for policy, allowed in QOS_VALUES.items():
            assert topic[policy] in allowed, (display['Name'], policy)
        assert isinstance(topic['Depth'], int) and topic['Depth'] >= 1
        # The rig's publishers are volatile (only /tf_static is transient local):
        # a transient-local subscription would not match them.
        if bare(topic['Value']) != 'tf_static':
            assert topic['Durability Policy'] == 'Volatile', display['Name']


def test_rviz_shows_tf_and_both_polaris_odometries_reliably():
    displays = list(rviz_displays(rviz_config()['Visualization Manager']['Displays']))
    enabled = [d for d in displays if d['Enabled']]
    assert {'rviz_default_plugins/Grid', 'rviz_default_plugins/TF'} <= \
        {d['Class'] for d in enabled}
    odometry = {bare(d['Topic']['Value']): d for d in enabled
                if d['Class'] == 'rviz_default_plugins/Odometry'}
    polaris = INS_TOPICS['polaris']
    assert set(odometry) == {polaris.odom, polaris.truth}
    assert all(d['Topic']['Reliability Policy'] == 'Reliable' for d in odometry.values())


def test_rviz_frames_are_rig_frames():
    config = rviz_config()
    manager = config['Visualization Manager']
    frames = [manager['Views']['Current'].get('Target Frame', '<Fixed Frame>')]
    frames += [d['Reference Frame'] for d in rviz_displays(manager['Displays'])
               if 'Reference Frame' in d]
    for frame in frames:
        assert frame == '<Fixed Frame>' or frame in RIG_FRAMES, frame


# -- the example parameter files ---------------------------------------------

# robot_localization's ekf_node: its own parameters, and per sensor odomN,
# poseN, twistN, imuN with these suffixes (src/ros_filter.cpp).
EKF_PARAMS = {
    'acceleration_gains', 'acceleration_limits', 'base_link_frame', 'base_link_frame_output',
    'control_config', 'control_timeout', 'debug', 'debug_out_file', 'deceleration_gains',
    'deceleration_limits', 'disabled_at_startup', 'dynamic_process_noise_covariance',
    'frequency', 'history_length', 'initial_estimate_covariance', 'initial_state', 'map_frame',
    'odom_frame', 'permit_corrected_publication', 'predict_to_current_time', 'print_diagnostics',
    'process_noise_covariance', 'publish_acceleration', 'publish_tf', 'reset_on_time_jump',
    'sensor_timeout', 'smooth_lagged_data', 'tf_prefix',
    'transform_time_offset', 'transform_timeout', 'two_d_mode', 'use_control', 'world_frame',
    'use_sim_time'}
SENSOR_SUFFIXES = {'', '_config', '_differential', '_relative', '_queue_size',
                   '_pose_rejection_threshold', '_twist_rejection_threshold',
                   '_linear_acceleration_rejection_threshold',
                   '_remove_gravitational_acceleration', '_pose_use_child_frame'}
SENSOR = re.compile(r'^(odom|pose|twist|imu)(\d+)(.*)$')
# navsat_transform_node (src/navsat_transform.cpp).
NAVSAT_PARAMS = {
    'magnetic_declination_radians', 'yaw_offset', 'zero_altitude', 'publish_filtered_gps',
    'use_odometry_yaw', 'wait_for_datum', 'use_local_cartesian', 'frequency', 'delay',
    'transform_timeout', 'broadcast_cartesian_transform',
    'broadcast_cartesian_transform_as_parent_frame', 'datum', 'use_sim_time'}
# The 15 flags of a *_config.
X, Y, Z, ROLL, PITCH, YAW = range(6)


def example_nodes(path):
    """{node name: parameters} of a ROS 2 parameter file (its form checked)."""
    tree = yaml.safe_load(path.read_text(encoding='utf-8'))
    assert isinstance(tree, dict) and tree, path.name
    nodes = {}
    for key, section in tree.items():
        # /**/name: the node in any namespace (one vehicle of several included)
        assert key.startswith('/**/'), f'{path.name}: {key} should be /**/{key}'
        node = key[len('/**/'):]
        assert re.fullmatch(r'[A-Za-z][A-Za-z0-9_]*', node), key
        assert isinstance(section, dict) and set(section) == {'ros__parameters'}, \
            f'{path.name}: {node} needs exactly "ros__parameters:"'
        assert isinstance(section['ros__parameters'], dict) and section['ros__parameters']
        nodes[node] = section['ros__parameters']
    return nodes


def is_navsat(params):
    return 'magnetic_declination_radians' in params or 'datum' in params


def sensors(params):
    """{'odom0': (topic, [15 flags] or None, {suffix: value}), ...}."""
    out = {}
    for name, value in params.items():
        match = SENSOR.match(name)
        if match:
            key = match.group(1) + match.group(2)
            out.setdefault(key, {})[match.group(3)] = value
    return out


def test_there_are_example_files():
    assert {p.name for p in EXAMPLE_FILES} >= {'robot_localization_ekf.yaml',
                                               'navsat_transform.yaml'}


@pytest.mark.parametrize('path', EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_uses_only_parameters_robot_localization_declares(path):
    for node, params in example_nodes(path).items():
        assert params.get('use_sim_time') is True, f'{node}: the rig runs on /clock'
        if is_navsat(params):
            unknown = set(params) - NAVSAT_PARAMS
        else:
            unknown = {name for name in params if name not in EKF_PARAMS and not (
                SENSOR.match(name) and SENSOR.match(name).group(3) in SENSOR_SUFFIXES)}
        assert not unknown, f'{path.name}: {node}: not robot_localization parameters: {unknown}'


@pytest.mark.parametrize('path', EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_sensors_are_rig_topics_fused_sensibly(path):
    for node, params in example_nodes(path).items():
        inputs = sensors(params)
        for kind in ('odom', 'pose', 'twist', 'imu'):
            numbers = sorted(int(k[len(kind):]) for k in inputs if re.fullmatch(kind + r'\d+', k))
            # robot_localization stops reading at the first missing number
            assert numbers == list(range(len(numbers))), f'{node}: {kind} numbering {numbers}'
        for key, entry in inputs.items():
            topic = entry.get('')
            assert isinstance(topic, str), f'{node}: {key} has no topic'
            assert bare(topic) in RIG_TOPICS | EXAMPLE_OUTPUTS, f'{node}: {key} = {topic}'
            assert bare(topic) not in DEGREES_PER_SECOND, f'{node}: {topic} is in deg/s'
            flags = entry.get('_config')
            assert isinstance(flags, list) and len(flags) == 15 and \
                all(isinstance(f, bool) for f in flags) and any(flags), f'{node}: {key}_config'
            if key.startswith('imu') and any(flags[ROLL:YAW + 1]):
                assert bare(topic) not in IMU_WITHOUT_ORIENTATION, \
                    f'{node}: {topic} has no orientation'
            if bare(topic) in UTM_ODOMETRY and any(flags[X:YAW + 1]):
                # an absolute pose in utm: only a map-frame EKF may fuse it
                assert params['world_frame'] == params['map_frame'], f'{node}: {key}'
            if bare(topic) in EXAMPLE_OUTPUTS:
                assert entry.get('_differential') is False, f'{node}: {key}'


@pytest.mark.parametrize('path', EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_frames_are_rig_frames_and_one_parent_each(path):
    children = {}
    for node, params in example_nodes(path).items():
        if is_navsat(params):
            continue
        frames = {k: params[k] for k in ('map_frame', 'odom_frame', 'base_link_frame',
                                         'world_frame')}
        for key, frame in frames.items():
            assert frame in RIG_FRAMES | EKF_FRAMES, f'{node}: {key} = {frame}'
        assert frames['map_frame'] == 'map'          # the rig's map, below utm
        assert frames['odom_frame'] in EKF_FRAMES     # not a frame the rig publishes
        assert frames['base_link_frame'] == 'base_footprint'   # the rig odometry's child
        assert frames['world_frame'] in (frames['map_frame'], frames['odom_frame'])
        if params.get('publish_tf', True):
            child = (frames['odom_frame'] if frames['world_frame'] == frames['map_frame']
                     else frames['base_link_frame'])
            assert child not in children, f'{node} and {children.get(child)} both publish {child}'
            children[child] = node


def test_navsat_example_keeps_the_rigs_utm_and_sits_on_the_tile_origin():
    navsat = [params for path in EXAMPLE_FILES for params in example_nodes(path).values()
              if is_navsat(params)]
    assert navsat
    config = load_config(rig='polaris')
    site = site_georeference(config)
    lat, lon, _h = site.enu_to_geodetic(0.0, 0.0, 0.0, 0.0, config['gnss.datum.output_frame'])
    for params in navsat:
        assert params.get('broadcast_cartesian_transform', False) is False
        assert params['magnetic_declination_radians'] == 0.0 and params['yaw_offset'] == 0.0
        if params.get('wait_for_datum'):
            datum = params['datum']
            assert len(datum) == 3 and all(isinstance(v, float) for v in datum)
            assert abs(datum[0] - lat) < 1e-8 and abs(datum[1] - lon) < 1e-8, (datum, lat, lon)


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('path', EXAMPLE_FILES, ids=lambda p: p.name)
def test_rcl_reads_the_example_files(path, ros_domain_id):
    import rclpy

    for node_name, params in example_nodes(path).items():
        for namespace in ('', 'maxxum1'):    # top level, and one vehicle of several
            context = rclpy.Context()
            rclpy.init(args=['--ros-args', '--params-file', str(path)], context=context,
                       domain_id=ros_domain_id)
            try:
                node = rclpy.create_node(node_name, namespace=namespace, context=context,
                                         automatically_declare_parameters_from_overrides=True)
                got = {name: p.value for name, p in node.get_parameters_by_prefix('').items()}
                node.destroy_node()
            finally:
                rclpy.try_shutdown(context=context)
            for name, value in params.items():
                assert name in got, (namespace, node_name, name)
                theirs = got[name]
                if not isinstance(theirs, (str, bool, int, float)):
                    theirs = list(theirs)
                assert theirs == value and type(theirs) is type(value), (node_name, name)


# -- the document --------------------------------------------------------------

def doc_code_blocks():
    return re.findall(r'```[a-z]*\n(.*?)```', DOC.read_text(encoding='utf-8'), re.S)


def doc_commands():
    """Every command line of the document's code blocks, continuations joined."""
    commands = []
    for block in doc_code_blocks():
        for line in block.replace('\\\n', ' ').splitlines():
            line = line.split(' #')[0].strip()
            if line and not line.startswith('#'):
                commands.append(line)
    return commands


def test_doc_acres_sim_commands_parse():
    """The code blocks' command lines and the inline `acres-sim ...` ones."""
    inline = re.findall(r'`((?:ros2 run acres_sim )?acres-sim [^`]+)`',
                        DOC.read_text(encoding='utf-8'))
    found = 0
    for command in doc_commands() + inline:
        words = shlex.split(command)
        if 'acres-sim' not in words:
            continue
        args = words[words.index('acres-sim') + 1:]
        try:
            build_parser().parse_args(args)
        except SystemExit:
            pytest.fail(f'acres-sim does not take: {command}')
        found += 1
    assert found >= 6


# Options of ros2 bag record / play the document may name (ros2bag/ros2bag/verb/
# record.py and play.py, humble and jazzy branches of ros2/rosbag2).
ROSBAG_OPTIONS = {'--all', '--regex', '--exclude', '--exclude-regex', '--exclude-topics',
                  '--topics', '--output', '--storage', '--use-sim-time',
                  '--qos-profile-overrides-path', '--clock', '--rate', '--loop', '--remap',
                  '--start-offset', '--start-paused', '--delay'}
ROS_ARGS = {'--ros-args', '--params-file'}


def test_doc_inline_options_exist():
    """Every `--option` in the prose is one of acres-sim up / record or of ros2 bag."""
    commands = build_parser()._subparsers._group_actions[0].choices
    ours = {s for name in ('up', 'record') for a in commands[name]._actions
            for s in a.option_strings}
    text = DOC.read_text(encoding='utf-8')
    spans = re.findall(r'`([^`\n]+)`', re.sub(r'```.*?```', '', text, flags=re.S))
    named = {o for span in spans for o in re.findall(r'(?<![\w-])--[a-z][a-z-]*', span)}
    assert named, 'no options found'
    unknown = named - ours - ROSBAG_OPTIONS - ROS_ARGS
    assert not unknown, unknown


def test_doc_live_recording_lists_exactly_the_rigs_topics():
    record = [c for c in doc_commands() if c.startswith('ros2 bag record')]
    assert record
    topics = {bare(w) for w in shlex.split(record[0]) if w.startswith('/')}
    assert topics == set(GLOBAL_TOPICS) | vehicle_topics('polaris')


def test_doc_files_exist():
    text = DOC.read_text(encoding='utf-8')
    paths = set(re.findall(r'config/(?:rviz|examples)/[\w./]+\.(?:rviz|yaml)', text))
    assert {'config/rviz/acres_sim.rviz', 'config/examples/robot_localization_ekf.yaml',
            'config/examples/navsat_transform.yaml'} <= paths
    for path in paths:
        assert (ROOT / path).is_file(), path
    for name in re.findall(r'ros2 launch acres_sim (\S+\.launch\.py)', text):
        assert (ROOT / 'launch' / name).is_file(), name


def test_setup_installs_the_new_config_folders():
    """setup.py's data_files take every file under config/ (tree('config'))."""
    source = (ROOT / 'setup.py').read_text(encoding='utf-8')
    assert "+ tree('config')" in source
    module = ast.parse(source)
    tree_def = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == 'tree')
    namespace = {'os': __import__('os'), 'PACKAGE': 'acres_sim'}
    exec(compile(ast.Module([tree_def], []), 'setup.py', 'exec'), namespace)
    import os
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        installed = {os.path.join(folder, Path(f).name)
                     for folder, files in namespace['tree']('config') for f in files}
    finally:
        os.chdir(cwd)
    expected = {'share/acres_sim/' + str(p.relative_to(ROOT)) for p in [RVIZ, *EXAMPLE_FILES]}
    assert expected <= installed
