"""Vectorised CDR (acres_sim.pipeline.cdr): for every message type the
recorder writes, the bytes of FixedLayout.encode equal rosbags' serialize_cdr
of the same values built as rosbags message objects -- whatever the lengths of
the strings (every alignment case) and of the sequences -- and rosbags'
deserialize_cdr reads the values back; a missing, unknown or ill-typed
constant is a ValueError naming the field path.

The reference objects are built by name from the typestore definitions (a
field the layout leaves out is a KeyError, one it puts at the wrong offset
changes the bytes) and, for the recorder's messages, by the builders of
acres_sim.pipeline.messages."""

import re

import numpy as np
import pytest
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_typestore

from acres_sim.pipeline import messages as m
from acres_sim.pipeline.cdr import FixedLayout

TS = get_typestore(Stores.ROS2_JAZZY)

#: String lengths hitting every alignment of what follows a string (mod 4 and 8).
LENGTHS = (0, 1, 3, 4, 5, 8, 13)


def text(length, first='a'):
    """A string of ``length`` characters (ASCII: as many bytes)."""
    return ''.join(chr(ord(first) + i % 26) for i in range(length))


def tf_fixed(count, lengths):
    fixed = {'transforms': count}
    for i in range(count):
        parent, child = lengths[i % len(lengths)], lengths[(i + 1) % len(lengths)]
        fixed[f'transforms.{i}.header.frame_id'] = text(parent, 'a')
        fixed[f'transforms.{i}.child_frame_id'] = text(child, 'k')
    return fixed


def cases():
    """(msgtype, fixed) of every type and string-length combination."""
    yield 'rosgraph_msgs/msg/Clock', {}
    for a in LENGTHS:
        for b in LENGTHS:
            yield 'nav_msgs/msg/Odometry', {'header.frame_id': text(a),
                                            'child_frame_id': text(b, 'p')}
            yield 'tf2_msgs/msg/TFMessage', tf_fixed(1, (a, b))
        for msgtype in ('sensor_msgs/msg/NavSatFix', 'sensor_msgs/msg/Imu',
                        'geometry_msgs/msg/TwistStamped'):
            yield msgtype, {'header.frame_id': text(a)}
        yield 'std_msgs/msg/String', {'data': text(a, 'A')}
    # Beyond the recorder's types: sequence lengths, multi-byte UTF-8, base-type
    # sequences, strings in sequences, bytes, nested sequences, bounded sequence.
    yield 'std_msgs/msg/String', {'data': '$GNGGA,ü°µ,*47'}
    for count in (0, 2, 3):
        yield 'tf2_msgs/msg/TFMessage', tf_fixed(count, LENGTHS)
    for a in LENGTHS:     # the float64[] after the strings needs 0 or 4 bytes of padding
        yield 'sensor_msgs/msg/JointState', {'header.frame_id': 'base', 'name': 2, 'name.0': 'a',
                                             'name.1': text(a), 'position': 3, 'velocity': 0,
                                             'effort': 1}
    yield 'diagnostic_msgs/msg/DiagnosticArray', {
        'header.frame_id': 'gnss', 'status': 2,
        'status.0.name': 'rx', 'status.0.message': 'RTK fixed', 'status.0.hardware_id': '',
        'status.0.values': 1, 'status.0.values.0.key': 'sats', 'status.0.values.0.value': '17',
        'status.1.name': 'ins', 'status.1.message': 'ok', 'status.1.hardware_id': 'oxts',
        'status.1.values': 0}
    yield 'shape_msgs/msg/SolidPrimitive', {'dimensions': 3, 'polygon.points': 2}


CASES = list(cases())


def case_id(case):
    msgtype, fixed = case
    strings = '-'.join(str(len(v)) for v in fixed.values() if isinstance(v, str))
    counts = '-'.join(str(v) for v in fixed.values() if isinstance(v, int))
    return f'{msgtype.split("/")[-1]}[{counts}]({strings})'


def fill_random(column, rng):
    """Random values in every numeric field of a (nested) structured column."""
    if column.dtype.names is not None:
        for name in column.dtype.names:
            fill_random(column[name], rng)
    elif column.dtype.kind == 'f':
        column[...] = rng.standard_normal(column.shape) * 10.0 ** rng.integers(-9, 10, column.shape)
    elif column.dtype.kind in 'iu':
        info = np.iinfo(column.dtype)
        column[...] = rng.integers(info.min, info.max, column.shape, endpoint=True,
                                   dtype=column.dtype.newbyteorder('='))
    else:
        assert column.dtype.kind == 'b'
        column[...] = rng.integers(0, 2, column.shape).astype(bool)


def build(msgtype, record, fixed, path=''):
    """The rosbags message of one record, by field name; strings from ``fixed``."""
    return TS.types[msgtype](**{
        name: value(desc, record, name, fixed, f'{path}{name}')
        for name, desc in TS.get_msgdef(msgtype).fields})


def part(record, name):
    """A sub-struct of the record; None where the layout has none (a message
    of strings only: a numeric leaf below it would fail on None)."""
    return record[name] if record is not None and name in record.dtype.names else None


def value(desc, record, name, fixed, path):
    kind, arg = desc
    if kind == Nodetype.NAME:
        return build(arg, part(record, name), fixed, path + '.')
    if kind == Nodetype.BASE:
        return fixed[path] if arg[0] == 'string' else record[name].item()
    sub, length = (arg[0], fixed[path]) if kind == Nodetype.SEQUENCE else arg
    if sub[0] == Nodetype.BASE and sub[1][0] != 'string':
        dtype = {'bool': bool, 'char': np.uint8, 'byte': np.int8}.get(sub[1][0], sub[1][0])
        return np.array(record[name] if length else [], dtype=dtype)
    return [value(sub, part(record, name), str(i), fixed, f'{path}.{i}') for i in range(length)]


def assert_same(got, want):
    """Field by field equality of two rosbags messages (NaN equals NaN)."""
    if hasattr(want, '__dataclass_fields__'):
        assert type(got) is type(want)
        for name in want.__dataclass_fields__:
            assert_same(getattr(got, name), getattr(want, name))
    elif isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    else:
        np.testing.assert_equal(got, want)
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype


def random_messages(layout, n, seed=0):
    arr = layout.empty(n)
    fill_random(arr, np.random.default_rng(seed))
    return arr


# ----------------------------------------------------------------------------
# Bytes equal rosbags' serialisation

@pytest.mark.parametrize('case', CASES, ids=[case_id(c) for c in CASES])
def test_encode_equals_rosbags(case):
    msgtype, fixed = case
    layout = FixedLayout(TS, msgtype, fixed)
    arr = random_messages(layout, 5, seed=len(case_id(case)))
    encoded = layout.encode(arr)
    assert len(encoded) == 5
    for record, data in zip(arr, encoded):
        want = build(msgtype, record, fixed)
        assert type(data) is bytes
        assert data == TS.serialize_cdr(want, msgtype).tobytes()
        assert_same(TS.deserialize_cdr(data, msgtype), want)
    # The array's own bytes are the messages too (empty() set every constant).
    assert arr.tobytes() == b''.join(encoded)


@pytest.mark.parametrize('n', [0, 1, 1000])
@pytest.mark.parametrize('msgtype, fixed', [
    ('rosgraph_msgs/msg/Clock', {}),
    ('tf2_msgs/msg/TFMessage', tf_fixed(1, (3, 14))),
    ('nav_msgs/msg/Odometry', {'header.frame_id': 'utm', 'child_frame_id': 'base_footprint'}),
    ('sensor_msgs/msg/NavSatFix', {'header.frame_id': 'gnss_antenna'}),
    ('sensor_msgs/msg/Imu', {'header.frame_id': 'imu_link'}),
    ('geometry_msgs/msg/TwistStamped', {'header.frame_id': 'oxts_link'}),
    ('std_msgs/msg/String', {'data': '$GNGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,*47'}),
])
def test_batch_sizes(msgtype, fixed, n):
    layout = FixedLayout(TS, msgtype, fixed)
    arr = random_messages(layout, n, seed=n)
    encoded = layout.encode(arr)
    assert len(encoded) == n
    assert [len(data) for data in encoded] == [layout.dtype.itemsize] * n
    want = [TS.serialize_cdr(build(msgtype, record, fixed), msgtype).tobytes() for record in arr]
    assert encoded == want
    # joined: the same bytes, also from a copy that lost the constants
    assert layout.encode_joined(arr) == b''.join(want)
    assert layout.encode_joined(arr.copy()[::-1][::-1]) == b''.join(want)


def test_recorder_builders():
    """The messages of acres_sim.pipeline.messages, filled in column by column."""
    odom = FixedLayout(TS, 'nav_msgs/msg/Odometry',
                       {'header.frame_id': 'utm', 'child_frame_id': 'base_footprint'})
    truth = {'position_utm_m': [431234.5, 4412345.25, 212.75],
             'orientation_utm_xyzw': [0.0, 0.0, 0.38268343, 0.92387953],
             'linear_flu_mps': [4.5, -0.01, 0.0], 'angular_flu_radps': [0.0, 0.0, 0.125]}
    arr = odom.empty(1)
    arr['header']['stamp']['sec'], arr['header']['stamp']['nanosec'] = 12, 345_678_901
    for axis, v in zip('xyz', truth['position_utm_m']):
        arr['pose']['pose']['position'][axis] = v
    for axis, v in zip('xyzw', truth['orientation_utm_xyzw']):
        FixedLayout.column(arr, f'pose.pose.orientation.{axis}')[:] = v
    for axis, v, w in zip('xyz', truth['linear_flu_mps'], truth['angular_flu_radps']):
        arr['twist']['twist']['linear'][axis] = v
        arr['twist']['twist']['angular'][axis] = w
    want = m.ground_truth_odometry(truth, 12_345_678_901)
    assert odom.encode(arr) == [TS.serialize_cdr(want, 'nav_msgs/msg/Odometry').tobytes()]

    tf = FixedLayout(TS, 'tf2_msgs/msg/TFMessage', {
        'transforms': 1, 'transforms.0.header.frame_id': 'utm',
        'transforms.0.child_frame_id': 'base_footprint'})
    arr = tf.empty(1)
    t = arr['transforms']['0']
    t['header']['stamp']['sec'] = 7
    t['transform']['translation']['x'], t['transform']['rotation']['w'] = -3.5, 1.0
    want = m.tf_message([m.transform_stamped(7_000_000_000, 'utm', 'base_footprint',
                                             (-3.5, 0, 0), (0, 0, 0, 1))])
    assert tf.encode(arr) == [TS.serialize_cdr(want, 'tf2_msgs/msg/TFMessage').tobytes()]

    clock = FixedLayout(TS, 'rosgraph_msgs/msg/Clock')
    arr = clock.empty(3)
    arr['clock']['sec'], arr['clock']['nanosec'] = [0, 1, 2], [999_999_999, 0, 500]
    want = [TS.serialize_cdr(m.clock(t_ns), 'rosgraph_msgs/msg/Clock').tobytes()
            for t_ns in (999_999_999, 1_000_000_000, 2_000_000_500)]
    assert clock.encode(arr) == want


# ----------------------------------------------------------------------------
# The layout itself

def absolute_offset(dtype, path):
    offset = 0
    for key in path.split('.'):
        dtype, at = dtype.fields[key][:2]
        offset += at
    return offset


def leaf_paths(dtype, prefix=''):
    """The dotted path of every numeric leaf of a nested layout dtype."""
    for name in dtype.names or ():
        sub = dtype.fields[name][0]
        if sub.names is None:
            yield prefix + name
        else:
            yield from leaf_paths(sub, f'{prefix}{name}.')


@pytest.mark.parametrize('case', CASES, ids=[case_id(c) for c in CASES])
def test_columns_are_the_same_bytes_by_path(case):
    """``empty_columns`` is ``empty`` as a flat dtype: every leaf by its dotted
    path at its offset, a vector of like fields in a row as one field too;
    values written through it are the messages rosbags serialises, and
    ``encode_joined(..., constants_kept=True)`` gives them without rewriting."""
    msgtype, fixed = case
    layout = FixedLayout(TS, msgtype, fixed)
    nested = random_messages(layout, 4, seed=len(case_id(case)) + 1)
    flat = layout.empty_columns(4)
    assert flat.dtype == layout.columns and flat.tobytes() == layout.empty(4).tobytes()
    paths = list(leaf_paths(layout.dtype))
    for path in paths:
        assert layout.columns.fields[path][1] == absolute_offset(layout.dtype, path)
        assert layout.columns.fields[path][0] == nested_leaf(layout.dtype, path)
        flat[path] = FixedLayout.column(nested, path)
        assert FixedLayout.column(flat, path).shape == FixedLayout.column(nested, path).shape
    want = layout.encode(nested)
    assert layout.encode_joined(flat, constants_kept=True) == b''.join(want)
    assert layout.encode(flat) == want
    # a copy lost the constants (numpy copies fields only): written afresh
    assert layout.encode_joined(flat[[0, 2, 3]], constants_kept=True) == \
        b''.join(want[i] for i in (0, 2, 3))
    # a vector field covers exactly its leaves: written through it, the same bytes
    again = layout.empty_columns(4)
    vectors = [name for name in layout.columns.names if name not in paths]
    covered = set()
    for name in vectors:
        members = [p for p in paths if p.rsplit('.', 1)[0] == name]
        width = layout.columns.fields[name][0].shape[0]
        assert len(members) == width, (name, members)
        assert layout.columns.fields[name][1] == min(absolute_offset(layout.dtype, p)
                                                     for p in members)
        again[name] = np.stack([FixedLayout.column(nested, p) for p in members], axis=1)
        covered.update(members)
    for path in set(paths) - covered:
        again[path] = FixedLayout.column(nested, path)
    assert again.tobytes() == flat.tobytes()


def nested_leaf(dtype, path):
    """The dtype of the leaf at ``path`` (a sub-array keeps its shape)."""
    for key in path.split('.'):
        dtype = dtype.fields[key][0]
    return dtype


def test_vector_fields_of_an_odometry():
    layout = FixedLayout(TS, 'nav_msgs/msg/Odometry',
                         {'header.frame_id': 'utm', 'child_frame_id': 'base_footprint'})
    vectors = {name: layout.columns.fields[name][0].shape for name in layout.columns.names
               if not name.endswith(('.x', '.y', '.z', '.w', 'sec', 'covariance'))}
    # the stamp's int32 and uint32 are no vector; pose.pose holds structs, not primitives
    assert vectors == {'pose.pose.position': (3,), 'pose.pose.orientation': (4,),
                       'twist.twist.linear': (3,), 'twist.twist.angular': (3,)}


def test_layout_offsets_by_hand():
    layout = FixedLayout(TS, 'nav_msgs/msg/Odometry',
                         {'header.frame_id': 'utm', 'child_frame_id': 'base_footprint'})
    # 4 header + 8 stamp + (4 + 4 'utm\0') + (4 + 15 'base_footprint\0') = 39, then
    # padding to 8 from byte 4: position.x at 44; 44 + 7*8 pose + 36*8 covariance
    # = 388 twist, + 6*8 + 36*8 covariance = 724.
    assert layout.template[:20] == b'\x00\x01\x00\x00' + bytes(8) + b'\x04\x00\x00\x00utm\x00'
    assert layout.template[20:44] == b'\x0f\x00\x00\x00base_footprint\x00' + bytes(5)
    assert absolute_offset(layout.dtype, 'header.stamp.nanosec') == 8
    assert absolute_offset(layout.dtype, 'pose.pose.position.x') == 44
    assert absolute_offset(layout.dtype, 'pose.covariance') == 44 + 56
    assert layout.dtype['pose']['covariance'].shape == (36,)
    assert absolute_offset(layout.dtype, 'twist.twist.linear.x') == 388
    assert layout.dtype.itemsize == 724
    assert layout.empty(2)['pose']['covariance'].shape == (2, 36)


def test_no_padding_after_the_last_field():
    """rosbags ends the message after the last byte: String('a') is 4 + 4 + 2."""
    layout = FixedLayout(TS, 'std_msgs/msg/String', {'data': 'a'})
    want = TS.serialize_cdr(m.String(data='a'), 'std_msgs/msg/String')
    assert layout.dtype.itemsize == 10 == len(want)
    assert layout.encode(layout.empty(2)) == [b'\x00\x01\x00\x00\x02\x00\x00\x00a\x00'] * 2


def test_constants_survive_copies():
    """Copies, selections and zeroed arrays lose the bytes between fields;
    encode writes them again.  The input is left as it was."""
    layout = FixedLayout(TS, 'nav_msgs/msg/Odometry',
                         {'header.frame_id': 'utm', 'child_frame_id': 'b'})
    arr = random_messages(layout, 6)
    want = layout.encode(arr)
    before = arr.tobytes()
    assert layout.encode(arr[[4, 1]]) == [want[4], want[1]]
    assert layout.encode(arr[::2]) == want[::2]
    rotated = np.concatenate([arr[3:], arr[:3]], dtype=layout.dtype)
    assert layout.encode(rotated) == want[3:] + want[:3]
    with pytest.raises(ValueError, match='concatenate'):      # it packs the dtype
        layout.encode(np.concatenate([arr[3:], arr[:3]]))
    assert layout.encode(np.zeros(2, layout.dtype)) == [layout.template] * 2
    assert arr.tobytes() == before


def test_encode_rejects_another_dtype():
    layout = FixedLayout(TS, 'rosgraph_msgs/msg/Clock')
    other = FixedLayout(TS, 'std_msgs/msg/Header', {'frame_id': 'x'})
    with pytest.raises(ValueError):
        layout.encode(other.empty(1))
    with pytest.raises(ValueError):
        layout.encode(layout.empty(4).reshape(2, 2))


# ----------------------------------------------------------------------------
# Missing or wrong constants

TF_ONE = {'transforms': 1, 'transforms.0.header.frame_id': 'utm',
          'transforms.0.child_frame_id': 'base_footprint'}


@pytest.mark.parametrize('msgtype, fixed, path', [
    ('nav_msgs/msg/Odometry', {}, 'header.frame_id'),
    ('nav_msgs/msg/Odometry', {'header.frame_id': 'utm'}, 'child_frame_id'),
    ('std_msgs/msg/String', None, 'data'),
    ('tf2_msgs/msg/TFMessage', {}, 'transforms'),
    ('tf2_msgs/msg/TFMessage', {'transforms': 1}, 'transforms.0.header.frame_id'),
    ('tf2_msgs/msg/TFMessage', {**TF_ONE, 'transforms': 2}, 'transforms.1.header.frame_id'),
    ('sensor_msgs/msg/JointState', {'header.frame_id': 'b', 'name': 0, 'position': 3,
                                    'velocity': 3}, 'effort'),
    ('sensor_msgs/msg/JointState', {'header.frame_id': 'b', 'name': 1, 'position': 0,
                                    'velocity': 0, 'effort': 0}, 'name.0'),
])
def test_missing_constant(msgtype, fixed, path):
    with pytest.raises(ValueError, match=re.escape(repr(path))):
        FixedLayout(TS, msgtype, fixed)


@pytest.mark.parametrize('fixed, path', [
    ({**TF_ONE, 'transforms.0.header.frameid': 'x'}, 'transforms.0.header.frameid'),
    ({**TF_ONE, 'transforms.1.child_frame_id': 'x'}, 'transforms.1.child_frame_id'),
    ({**TF_ONE, 'transforms.0.transform.translation.x': 1.0},
     'transforms.0.transform.translation.x'),
    ({**TF_ONE, 'transforms': '1'}, 'transforms'),
    ({**TF_ONE, 'transforms': -1}, 'transforms'),
    ({**TF_ONE, 'transforms': True}, 'transforms'),
    ({**TF_ONE, 'transforms.0.child_frame_id': 5}, 'transforms.0.child_frame_id'),
])
def test_wrong_constant(fixed, path):
    with pytest.raises(ValueError, match=re.escape(repr(path))):
        FixedLayout(TS, 'tf2_msgs/msg/TFMessage', fixed)


def test_bounds_and_unknown_type():
    with pytest.raises(ValueError, match='dimensions'):
        FixedLayout(TS, 'shape_msgs/msg/SolidPrimitive', {'dimensions': 4, 'polygon.points': 0})
    names = {'node_namespace': '/', 'node_name': 'n' * 257, 'reader_gid_seq': 0,
             'writer_gid_seq': 0}
    with pytest.raises(ValueError, match='node_name'):
        FixedLayout(TS, 'rmw_dds_common/msg/NodeEntitiesInfo', names)
    FixedLayout(TS, 'rmw_dds_common/msg/NodeEntitiesInfo', {**names, 'node_name': 'n' * 256})
    with pytest.raises(ValueError, match='nav_msgs/msg/Odometer'):
        FixedLayout(TS, 'nav_msgs/msg/Odometer', {})
