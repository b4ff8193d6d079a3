"""Vectorised CDR encoding of messages whose layout is fixed once their
strings and sequence lengths are fixed (Clock, TFMessage with one transform,
Odometry, NavSatFix, Imu, TwistStamped, a fixed String, ...).

:class:`FixedLayout` turns a message type of a ``rosbags`` typestore, plus
the constant contents of its strings and the constant lengths of its
sequences, into a numpy structured dtype whose bytes *are* the serialised
message -- what ``typestore.serialize_cdr(msg, msgtype)`` returns (little
endian).  Fill the numeric columns of :meth:`FixedLayout.empty` for many
messages at once, then :meth:`FixedLayout.encode` gives one ``bytes`` per
message for :meth:`rosbags.rosbag2.Writer.write`.

The layout (CDR, XCDR1 as ROS 2 uses it, little endian):

* bytes 0-3: the encapsulation header ``00 01 00 00`` (CDR_LE);
* every primitive aligned to its own size (bool/int8/uint8/byte/char 1,
  int16 2, int32/float32 4, int64/float64 8), counted from byte 4 -- a
  nested message has no alignment of its own;
* a string: uint32 byte count including the terminating NUL (aligned to 4),
  the UTF-8 bytes, the NUL; a sequence: uint32 element count (aligned to 4),
  then its elements as an array; padding bytes are zero;
* no padding after the last field: the message is exactly as long as
  rosbags makes it (its ``getsize_cdr``), so ``dtype.itemsize`` is the
  unpadded size (e.g. 10 bytes for ``String(data='a')``) and consecutive
  messages in an array are not 8-aligned in memory (numpy copes).

Paths (keys of ``fixed``, and the nesting of the dtype) are the field names
joined by dots, with an element of a sequence or fixed array given by its
index: ``'header.frame_id'``, ``'transforms'`` (a sequence: its length),
``'transforms.0.child_frame_id'``.  The dtype nests the same way --
``arr['transforms']['0']['header']['stamp']['sec']`` -- except that arrays and
sequences of a base type are one sub-array field (``arr['pose']['covariance']``,
shape ``(n, 36)``).  Only numeric bytes are fields; a field without any
(a string, a string array, an empty sequence, a message of strings only) is
left out of the dtype.  Field names are rosbags' (a Python keyword gets a
trailing ``_``).  float128 and wstring are not supported.

The bytes between the fields (header, string prefixes and contents, sequence
counts, padding) are :attr:`FixedLayout.template`'s: :meth:`FixedLayout.empty`
copies them into every message and :meth:`FixedLayout.encode` writes them
again, since numpy copies (``arr[mask]``, ``arr.copy()``) keep fields only.

:func:`diagnostic_array` is the counterpart for ``diagnostic_msgs/DiagnosticArray``,
whose strings change from one message to the next (the GNSS receiver's
status at every epoch): the same rules, applied field by field, give the
bytes of rosbags' serialiser in about half its time.
"""

import functools
import struct

import numpy as np
from rosbags.interfaces import Nodetype

__all__ = ['FixedLayout', 'diagnostic_array']

#: numpy type of each CDR primitive (little endian), as rosbags reads it
#: (byte signed, char unsigned).
_PRIMITIVES = {
    'bool': '?', 'byte': 'i1', 'char': 'u1', 'int8': 'i1', 'uint8': 'u1',
    'int16': '<i2', 'uint16': '<u2', 'int32': '<i4', 'uint32': '<u4',
    'int64': '<i8', 'uint64': '<u8', 'float32': '<f4', 'float64': '<f8',
}

_HEADER = b'\x00\x01\x00\x00'      # CDR little endian, no options
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')
_TILES_KEPT = 64                    # a layout keeps its template tiles of up to this many messages


class FixedLayout:
    """The CDR layout of ``msgtype`` (e.g. ``'nav_msgs/msg/Odometry'``) with
    the strings and sequence lengths given in ``fixed`` (path -> str for a
    string, path -> int for a sequence; see the module docstring for paths).

    A string or sequence without an entry, an entry that is not a string or
    sequence of the message, or a value of the wrong kind is a ValueError.

    Attributes: ``msgtype``, ``fixed`` (a copy), ``dtype`` (structured,
    ``itemsize`` = message size in bytes), ``columns`` (the same bytes as a
    flat dtype: one field per numeric leaf, named by its dotted path),
    ``template`` (the bytes of a message whose numeric fields are all zero).
    """

    def __init__(self, typestore, msgtype: str, fixed: dict = None):
        if msgtype not in typestore.fielddefs:
            raise ValueError(f'message type {msgtype!r} is not in the typestore')
        self.typestore = typestore
        self.msgtype = msgtype
        self.fixed = dict(fixed or {})
        self._used = set()
        self._buf = bytearray(_HEADER)      # the template, grown field by field
        self._numeric = []                  # (start, stop) of every numeric field
        layout = self._message(msgtype, '', 0)        # offsets from byte 0: the header
        self.dtype = layout[0] if layout else np.dtype(
            {'names': [], 'formats': [], 'itemsize': len(self._buf)})
        self.columns = _flat(self.dtype)
        self._tiles = {}                    # n -> template n times (_tiled)
        unknown = sorted(set(self.fixed) - self._used)
        if unknown:
            raise ValueError(f'{msgtype}: fixed has no string or sequence field {unknown}')
        self.template = bytes(self._buf)
        # The constant byte ranges: everything outside the numeric fields.
        self._constant_runs, pos = [], 0
        for start, stop in self._numeric + [(len(self._buf), len(self._buf))]:
            if start > pos:
                self._constant_runs.append((pos, start))
            pos = stop
        del self._buf, self._numeric, self._used

    # -- building the layout: append to self._buf, return (dtype, offset) or None
    def _align(self, size: int) -> int:
        self._buf.extend(bytes(-(len(self._buf) - len(_HEADER)) % size))
        return len(self._buf)

    def _constant(self, path: str, kind: type):
        if path not in self.fixed:
            what = 'string' if kind is str else 'sequence length'
            raise ValueError(f'{self.msgtype}: fixed needs the {what} of {path!r}')
        value = self.fixed[path]
        if kind is int and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            ok, value = value >= 0, int(value)
        else:
            ok = kind is str and isinstance(value, str)
        if not ok:
            raise ValueError(f'{self.msgtype}: {path!r} must be a '
                             f'{"str" if kind is str else "length >= 0"}, not {value!r}')
        self._used.add(path)
        return value

    def _struct(self, start, items):
        """(dtype, start) of a struct spanning self._buf[start:] with the
        items (name, (dtype, offset) or None) that are not None."""
        items = [(name, *field) for name, field in items if field is not None]
        if not items:
            return None
        return np.dtype({'names': [name for name, _, _ in items],
                         'formats': [dt for _, dt, _ in items],
                         'offsets': [offset - start for _, _, offset in items],
                         'itemsize': len(self._buf) - start}), start

    def _message(self, msgtype: str, path: str, start: int):
        return self._struct(start, [(name, self._field(desc, f'{path}{name}'))
                                    for name, desc in self.typestore.get_msgdef(msgtype).fields])

    def _field(self, desc, path: str):
        kind, arg = desc
        if kind == Nodetype.NAME:
            return self._message(arg, path + '.', len(self._buf))
        if kind == Nodetype.BASE:
            return self._base(arg, path)
        if kind == Nodetype.ARRAY:
            sub, length = arg
            return self._elements(sub, length, path)
        sub, bound = arg                                  # Nodetype.SEQUENCE
        length = self._constant(path, int)
        if bound and length > bound:
            raise ValueError(f'{self.msgtype}: {path!r} has at most {bound} elements, not {length}')
        self._align(4)
        self._buf += struct.pack('<I', length)
        return self._elements(sub, length, path)

    def _base(self, arg, path: str, count: int = None):
        """A primitive (an array of ``count`` if given) or a string at ``path``."""
        name, bound = arg
        if name == 'string':
            data = self._constant(path, str).encode()
            if bound and len(data) > bound:
                raise ValueError(f'{self.msgtype}: {path!r} has at most {bound} bytes')
            self._align(4)
            self._buf += struct.pack('<I', len(data) + 1) + data + b'\x00'
            return None
        if name not in _PRIMITIVES:
            raise ValueError(f'{self.msgtype}: {path!r}: type {name} is not supported')
        dt = np.dtype(_PRIMITIVES[name])
        start = self._align(dt.itemsize)
        self._buf.extend(bytes(dt.itemsize * (count or 1)))
        self._numeric.append((start, len(self._buf)))
        return (dt if count is None else np.dtype((dt, (count,)))), start

    def _elements(self, sub, length: int, path: str):
        """The elements of an array or sequence: one sub-array field for a
        numeric base type, else a struct with fields '0', '1', ..."""
        if sub[0] == Nodetype.BASE and sub[1][0] != 'string':
            return self._base(sub[1], path, length) if length else None
        start = len(self._buf)
        return self._struct(start, [(str(i), self._field(sub, f'{path}.{i}'))
                                    for i in range(length)])

    # -- use
    def empty(self, n: int) -> np.ndarray:
        """n messages, numeric fields zero, header, strings and lengths set."""
        return self._tiled(n).copy().view(self.dtype)

    def _tiled(self, n):
        """``template`` n times, as uint8 (kept for blocks of up to _TILES_KEPT
        messages, those of the live nodes; a longer block pays the join once)."""
        n = int(n)
        tiled = self._tiles.get(n)
        if tiled is None:
            tiled = np.frombuffer(self.template * n, dtype=np.uint8)
            if n <= _TILES_KEPT:
                self._tiles[n] = tiled
        return tiled

    def empty_columns(self, n: int) -> np.ndarray:
        """:meth:`empty` as an array of :attr:`columns`: each numeric field is
        one column by its dotted path (``arr['pose.pose.position.x'] = x``), a
        sixth of the time of walking the nesting for each (the live sim node
        fills a hundred columns of a few messages per vehicle and block)."""
        return self._tiled(n).copy().view(self.columns)

    def encode(self, arr: np.ndarray) -> list:
        """One ``bytes`` (the CDR message) per element of the 1-d ``arr``.

        The constant bytes are written afresh, so ``arr`` may be any array of
        :attr:`dtype` or :attr:`columns` (a copy or a fancy-indexed selection of an
        :meth:`empty` array does not keep them: numpy copies fields only).
        Another dtype is a ValueError."""
        raw = self._raw(arr)
        return raw.view(np.dtype((np.void, self.dtype.itemsize))).ravel().tolist()

    def encode_joined(self, arr: np.ndarray, constants_kept: bool = False) -> bytes:
        """The messages of :meth:`encode` joined into one ``bytes`` (message i at
        ``i * dtype.itemsize``), without a Python object per message.

        ``constants_kept``: ``arr`` is an array of :meth:`empty` or
        :meth:`empty_columns` whose fields were assigned in place, so its own
        bytes still hold the constants and are the messages as they are (the
        first and the last message are checked; a copy, whose constants numpy
        did not keep, is encoded as without)."""
        if constants_kept and arr.ndim == 1 and arr.flags.c_contiguous and \
                (arr.dtype == self.columns or arr.dtype == self.dtype):
            joined = arr.tobytes()
            size, template = self.dtype.itemsize, self.template
            last = len(joined) - size
            if all(joined[a:b] == template[a:b] and joined[last + a:last + b] == template[a:b]
                   for a, b in self._constant_runs):
                return joined
        return self._raw(arr).tobytes()

    def _raw(self, arr):
        if (arr.dtype != self.dtype and arr.dtype != self.columns) or arr.ndim != 1:
            raise ValueError(f'{self.msgtype}: encode needs a 1-d array of dtype layout.dtype, '
                             f'not {arr.ndim}-d of itemsize {arr.dtype.itemsize} (np.concatenate '
                             f'packs the dtype unless given dtype=layout.dtype)')
        size = self.dtype.itemsize
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(len(arr), size).copy()
        template = np.frombuffer(self.template, dtype=np.uint8)
        for start, stop in self._constant_runs:
            raw[:, start:stop] = template[start:stop]
        return raw

    def offset(self, path: str) -> int:
        """The byte offset in the message of the field at a dotted path."""
        dtype, at = self.dtype, 0
        for name in path.split('.'):
            dtype, offset = dtype.fields[name][:2]
            at += offset
        return at

    @staticmethod
    def column(arr: np.ndarray, path: str) -> np.ndarray:
        """The field of ``arr`` at a dotted path: ``column(arr, 'pose.pose.position.x')``
        is ``arr['pose']['pose']['position']['x']`` (a view: assign to it), or
        ``arr['pose.pose.position.x']`` of an array of :attr:`columns`."""
        fields = arr.dtype.fields
        if fields and path in fields:
            return arr[path]
        return functools.reduce(lambda a, key: a[key], path.split('.'), arr)


def _flat(dtype):
    """``dtype`` (nested structured) as one flat structured dtype of the same
    itemsize: a field per leaf (a primitive or an array of one), named by the
    dotted path, at its offset; and, over the same bytes, a sub-array field
    for each struct whose fields are all primitives of one type in a row
    (``'pose.pose.position'``: 3 float64), to fill a vector at once."""
    names, formats, offsets = [], [], []

    def leaves(dt, prefix, base):
        for name, (sub, offset, *_title) in (dt.fields or {}).items():
            if sub.names is None:
                names.append(prefix + name)
                formats.append(sub)
                offsets.append(base + offset)
            else:
                leaves(sub, f'{prefix}{name}.', base + offset)

    def vectors(dt, prefix, base):
        for name, (sub, offset, *_title) in (dt.fields or {}).items():
            if sub.names is None:
                continue
            path, at = prefix + name, base + offset
            kinds = {sub.fields[f][0] for f in sub.names}
            one = next(iter(kinds))
            spans = sorted(sub.fields[f][1] for f in sub.names)
            if (len(kinds) == 1 and one.names is None and one.shape == ()
                    and spans == list(range(spans[0], spans[0] + one.itemsize * len(spans),
                                            one.itemsize))):
                names.append(path)
                formats.append(np.dtype((one, (len(spans),))))
                offsets.append(at + spans[0])
            vectors(sub, path + '.', at)

    leaves(dtype, '', 0)
    vectors(dtype, '', 0)
    return np.dtype({'names': names, 'formats': formats, 'offsets': offsets,
                     'itemsize': dtype.itemsize})


def _put_string(buf: bytearray, text: str) -> None:
    """A CDR string at the end of ``buf`` (a message from its encapsulation
    header on): aligned to 4, its byte count with the NUL, its bytes, the NUL."""
    data = text.encode()
    buf += bytes(-len(buf) % 4)        # the 4-byte header keeps "from byte 4" and "from 0" alike
    buf += _U32.pack(len(data) + 1)
    buf += data
    buf += b'\x00'


def diagnostic_array(stamp_ns: int, frame_id: str, statuses) -> bytes:
    """The CDR bytes of a ``diagnostic_msgs/DiagnosticArray`` stamped
    ``stamp_ns`` [ns] in ``frame_id``, whose ``statuses`` are (level, name,
    message, hardware_id, [(key, value), ...]) each: what rosbags'
    ``serialize_cdr`` gives for the same message."""
    buf = bytearray(_HEADER)
    buf += _STAMP.pack(*divmod(int(stamp_ns), 1_000_000_000))
    _put_string(buf, frame_id)
    buf += bytes(-len(buf) % 4)
    buf += _U32.pack(len(statuses))
    for level, name, message, hardware_id, values in statuses:
        buf.append(level)                      # a byte: no alignment
        _put_string(buf, name)
        _put_string(buf, message)
        _put_string(buf, hardware_id)
        buf += bytes(-len(buf) % 4)
        buf += _U32.pack(len(values))
        for key, value in values:
            _put_string(buf, key)
            _put_string(buf, value)
    return bytes(buf)
