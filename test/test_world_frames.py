"""The world frames of the rig (docs/interop.md, Frames): a position published
in ``utm`` is in UTM zone 16 to the millimetre, the static ``utm -> map`` puts
the tile origin where UTM has it, and ``grid`` -- the tile's survey-grid ENU,
the frame of ``sim/truth`` -- is not a rigid turn of ``map``: the two differ
in scale by 0.37 mm per metre.

References: the site georeference's own conversions (no pyproj) for the
scale, and the chain of test_geo_pyproj built from pyproj alone for what the
recorder publishes."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from test_geo_pyproj import FALSE_NORTHING_DIFF_M, TO_UTM16, pyproj_chain

from acres_sim.cli import main
from acres_sim.config import load_config
from acres_sim.pipeline.models import site_georeference
from acres_sim.pipeline.topics import utm_to_map
from acres_sim.pipeline.vehicle import build_vehicle

ROOT = Path(__file__).resolve().parents[1]
MM = 1e-3


def map_from_utm(static, easting, northing):
    """A UTM point in the frame ``map`` of the static utm -> map (parent utm):
    p_utm = t + R(yaw) p_map, so p_map = R(yaw)^T (p_utm - t)."""
    _parent, _child, (tx, ty, _tz), (_qx, _qy, qz, qw) = static
    yaw = 2.0 * math.atan2(qz, qw)
    de, dn = easting - tx, northing - ty
    return (math.cos(yaw) * de + math.sin(yaw) * dn, -math.sin(yaw) * de + math.cos(yaw) * dn)


def test_grid_and_map_differ_by_0_37_mm_per_metre():
    """At 160 m from the origin, in every direction, the grid point and the
    map point of the same place are 5.9 cm apart (0.37 mm per metre: the
    UTM and survey-grid projections differ in scale), so ``grid`` gets its own
    name; the figures of docs/interop.md are these."""
    config = load_config(rig='polaris')
    site = site_georeference(config)
    static = utm_to_map(config, site)
    gaps = []
    for angle in np.radians(np.arange(0.0, 360.0, 30.0)):
        e, n = 160.0 * math.cos(angle), 160.0 * math.sin(angle)
        easting, northing, _h = site.enu_to_utm(e, n, 0.0, 0.0, 'nad83_2011', 16)
        x, y = map_from_utm(static, float(easting), float(northing))
        gaps.append(math.hypot(x - e, y - n))
        assert math.hypot(x, y) < 160.0          # map is the smaller: UTM's scale is
    assert round(min(gaps) / 160.0 / MM, 2) == round(max(gaps) / 160.0 / MM, 2) == 0.37
    assert round(min(gaps) * 100, 1) == round(max(gaps) * 100, 1) == 5.9
    # ... and 0 at the origin: the rigid frame agrees with grid there only
    easting, northing, _h = site.enu_to_utm(0.0, 0.0, 0.0, 0.0, 'nad83_2011', 16)
    assert math.hypot(*map_from_utm(static, float(easting), float(northing))) < 1e-6
    doc = ' '.join((ROOT / 'docs' / 'interop.md').read_text().split())
    assert '0.37 mm per metre' in doc and '5.9 cm at 160 m' in doc


@pytest.fixture(scope='module')
def maxxum(tmp_path_factory):
    """Two seconds of a Maxxum, which starts some 117 m from the tile origin."""
    out = tmp_path_factory.mktemp('frames')
    assert main(['record', '--rig', 'maxxum', '--duration', '2', '--out', str(out),
                 '--no-progress']) == 0
    return out


def utm_by_pyproj(points, t_s):
    """Grid ENU points (n, 3) at times t_s (n,) -> UTM zone 16 (E, N, h) of their
    NAD83(2011) coordinates (the INS's frame), by pyproj alone."""
    out = []
    for (e, n, u), t in zip(points, t_s):
        lat, lon, h = pyproj_chain(e, n, u, t)['nad83_2011']
        easting, northing = TO_UTM16.transform(float(lon), float(lat))
        out.append((easting, northing - FALSE_NORTHING_DIFF_M, float(h)))
    return np.array(out)


def test_every_published_position_is_in_its_frame_to_1_mm(maxxum):
    """Every position in the bag is in ``utm`` and is the UTM of its grid point
    (the INS row's) to 1 mm, by pyproj: the odometry (the INS point with its
    errors), the ground truth, the TF utm -> base_footprint; the static
    utm -> map puts the tile origin at its UTM position.  No position is in
    ``map`` (the barometer's altitude is a height, z only); the wheel odometry's
    is a dead reckoning in ``odom``, its own frame."""
    ins = [json.loads(line) for line in (maxxum / 'ins.jsonl').read_text().splitlines()]
    t_s = [row['sample_time_s'] for row in ins]
    expected = {'/odom': utm_by_pyproj([row['position_enu_m'] for row in ins], t_s),
                '/ground_truth/odom': utm_by_pyproj([row['truth']['position_enu_m']
                                                     for row in ins], t_s)}
    expected['/tf'] = expected['/odom']
    got = {topic: [] for topic in expected}
    frames, static, own_frames = set(), None, set()
    with AnyReader([maxxum / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, _t, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            if connection.topic in ('/wheel/odom', '/baro/altitude'):
                own_frames.add((connection.topic, message.header.frame_id))
            elif connection.msgtype == 'nav_msgs/msg/Odometry':
                frames.add(message.header.frame_id)
                p = message.pose.pose.position
                got[connection.topic].append((p.x, p.y, p.z))
            elif connection.topic == '/tf':
                for tf in message.transforms:
                    frames.add(tf.header.frame_id)
                    p = tf.transform.translation
                    got['/tf'].append((p.x, p.y, p.z))
            elif connection.topic == '/tf_static':
                static = {tf.child_frame_id: tf for tf in message.transforms}
    assert frames == {'utm'}
    assert own_frames == {('/wheel/odom', 'odom'), ('/baro/altitude', 'map')}
    for topic, want in expected.items():
        # the INS topics go out at the sample time, the rows only once delivered
        # (the last delay_s of epochs is published but never written)
        assert len(got[topic]) >= len(want) == len(ins) > 0, topic
        assert np.abs(np.array(got[topic][:len(want)]) - want).max() < 1 * MM, topic
    origin = static['map']
    assert origin.header.frame_id == 'utm' and 'grid' not in static
    p = origin.transform.translation
    assert np.abs(np.array([p.x, p.y, p.z]) - utm_by_pyproj([(0.0, 0.0, 0.0)], [0.0])[0]).max() \
        < 1 * MM
    # turned by the UTM azimuth of grid north at the origin (10 m north, by pyproj)
    (e1, n1, _), (e2, n2, _) = utm_by_pyproj([(0.0, 0.0, 0.0), (0.0, 10.0, 0.0)], [0.0, 0.0])
    q = origin.transform.rotation
    assert 2.0 * math.atan2(q.z, q.w) == pytest.approx(-math.atan2(e2 - e1, n2 - n1), abs=1e-7)


def test_the_truth_of_the_sensor_nodes_is_in_grid():
    """sim/truth carries the physics' own positions: frame ``grid``, which the
    sensor nodes read at the offsets of the same layout."""
    from acres_sim.pipeline import messages as msg
    from acres_sim.pipeline.batches import truth_offsets

    vehicle = build_vehicle(load_config(rig='maxxum'), 'maxxum', sensors=(),
                            frame_prefix='m2/')
    states = np.zeros((2, 13))
    states[:, 0:3] = [[-60.0, 100.0, 1.0], [-59.9, 100.0, 1.0]]
    states[:, 6] = 1.0
    encoded = vehicle.batches.physics_truth(states, np.array([0, 8_333_333]), 'm2/')
    layout = vehicle.batches.truth_layout('m2/')
    _stamp_at, pose_at, _twist_at = truth_offsets(layout)
    for data, state in zip(encoded.messages(), states):
        message = msg.TYPESTORE.deserialize_cdr(data, 'nav_msgs/msg/Odometry')
        assert (message.header.frame_id, message.child_frame_id) == ('grid', 'm2/chassis')
        assert len(data) == layout.dtype.itemsize
        assert np.frombuffer(data, np.float64, 3, pose_at).tolist() == state[:3].tolist()
