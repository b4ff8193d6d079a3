"""The recorder with the GNSS outputs for localization stacks switched on
(GST, GPSFix, dual-antenna heading; the Polaris defaults) against the same
recording with them off: every earlier output is byte for byte the same --
gnss.jsonl, imu.jsonl, ins.jsonl, truth.jsonl and every message of every
topic, the nmea topic's GGA sentences included (a GST after each) -- so the
GNSS error stream draws as before; the new outputs are counted against the
rows (one GPSFix per GNSS row, one heading row per GNSS row, one heading
message per heading row that has a heading)."""

import json
from pathlib import Path

import pytest
from rosbags.rosbag2 import Reader

from acres_sim.pipeline.messages import TYPESTORE
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

OFF = {'gnss.nmea.gst': False, 'gnss.gpsfix': False, 'gnss.heading.enabled': False}
NEW_TOPICS = {'/gnss_receiver/gpsfix', '/gnss_receiver/heading'}


def bag(folder):
    """{topic: [(bag time, CDR bytes)]} and {topic: type}."""
    out, types = {}, {}
    with Reader(Path(folder) / 'bag') as reader:
        for connection, t, data in reader.messages():
            out.setdefault(connection.topic, []).append((t, bytes(data)))
        types = {c.topic: c.msgtype for c in reader.connections}
    return out, types


def text(data):
    return TYPESTORE.deserialize_cdr(data, 'std_msgs/msg/String').data


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('gnss_outputs')
    scene = tmp / 'open_field.yaml'
    scene.write_text('scene: {name: open_field}\n')      # no garage: RTK from the start
    out = {}
    for name, overrides in (('on', {}), ('off', OFF)):
        out[name] = tmp / name
        record(RecordRequest('polaris', out[name], RigOptions(
            duration_s=20.0, scene=str(scene), overrides=overrides), progress=False))
    return out


def test_the_earlier_files_are_byte_identical(recordings):
    on, off = recordings['on'], recordings['off']
    for name in ('gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'):
        assert (on / name).read_bytes() == (off / name).read_bytes(), name
    assert not (off / 'gnss_heading.jsonl').exists()
    files = {name: {p.name for p in folder.glob('*.jsonl')} for name, folder in recordings.items()}
    assert files['on'] - files['off'] == {'gnss_heading.jsonl'}
    assert files['off'] >= {'gnss.jsonl', 'imu.jsonl', 'ins.jsonl', 'truth.jsonl'}


def test_every_earlier_topic_is_message_for_message_the_same(recordings):
    on, on_types = bag(recordings['on'])
    off, _ = bag(recordings['off'])
    assert set(on) == set(off) | NEW_TOPICS
    assert on_types['/gnss_receiver/gpsfix'] == 'gps_msgs/msg/GPSFix'
    assert on_types['/gnss_receiver/heading'] == 'sensor_msgs/msg/Imu'
    for topic in set(off) - {'/gnss_receiver/nmea'}:
        assert on[topic] == off[topic], topic
    # nmea: the GGA messages as before, each followed by its epoch's GST
    nmea = on['/gnss_receiver/nmea']
    assert nmea[0::2] == off['/gnss_receiver/nmea']
    for (t_gga, gga), (t_gst, gst) in zip(nmea[0::2], nmea[1::2]):
        assert t_gst == t_gga
        assert text(gga).startswith('$GNGGA,') and text(gst).startswith('$GNGST,')
        assert text(gst).split(',')[1] == text(gga).split(',')[1]


def test_the_new_outputs_follow_the_rows(recordings):
    on, _ = bag(recordings['on'])
    folder = recordings['on']
    rows = [json.loads(line) for line in (folder / 'gnss.jsonl').open()]
    headings = [json.loads(line) for line in (folder / 'gnss_heading.jsonl').open()]
    assert len(on['/gnss_receiver/gpsfix']) == len(on['/gnss_receiver/fix']) == len(rows)
    assert [h['sample_time_s'] for h in headings] == [r['sample_time_s'] for r in rows]
    assert [h['delivery_time_s'] for h in headings] == [r['delivery_time_s'] for r in rows]
    assert [h['fix_type'] for h in headings] == [r['fix_type'] for r in rows]
    valid = [h for h in headings if h['heading_valid']]
    assert [h['fix_type'] in ('rtk_fixed', 'rtk_float') for h in headings] == \
        [h['heading_valid'] for h in headings]
    assert sum(h['fix_type'] == 'rtk_fixed' for h in valid) > 100
    messages = on['/gnss_receiver/heading']
    assert len(messages) == len(valid)
    fix_times = dict(on['/gnss_receiver/fix'])       # bag time -> fix, at the same delivery
    for (t, data), row in zip(messages, valid):
        imu = TYPESTORE.deserialize_cdr(data, 'sensor_msgs/msg/Imu')
        stamp = imu.header.stamp.sec * 10**9 + imu.header.stamp.nanosec
        assert t in fix_times and imu.header.frame_id == 'gnss_antenna'
        assert stamp == round(row['sample_time_s'] * 1e9) + 1_790_175_600 * 10**9
        assert imu.orientation_covariance[8] == pytest.approx(row['sigma_heading_rad'] ** 2)
        # the truth: the vehicle's yaw, the heading within a few sigmas of it
        error = (row['heading_deg'] - row['truth']['heading_deg'] + 180.0) % 360.0 - 180.0
        assert abs(error) < 6 * row['sigma_heading_deg']
    for name in ('gnss.jsonl', 'gnss_heading.jsonl'):
        assert f'{name}' in json.loads((folder / 'episode.json').read_text())['files']
