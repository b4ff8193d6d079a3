"""rosbags' rosbag2 writer, taking a block of messages in one call.

rosbags (0.11.9) writes a message to its MCAP storage in Python, a record
and an index entry at a time: 5-9 us per message, which made the bag writer
process the slowest part of a recording (660 000 messages for 600 s of the
Polaris rig).  :class:`BlockWriter` is rosbags' :class:`rosbags.rosbag2.Writer`
whose MCAP storage (:class:`BlockMcapStorage`, rosbags' ``McapWriter``) also
takes a whole block: :meth:`BlockWriter.write_block` builds the block's
Message records with numpy, in one buffer, and keeps its message index as
arrays.  Everything else -- the header, schemas, channels, chunk and summary
records, metadata.yaml, the QoS strings -- is rosbags' own code.

The bytes are rosbags': the same records in the same order, the chunk closed
after the first message that takes it past 1 MiB (rosbags' rule), the message
index of each channel in the order its first message came in the chunk.  So
a bag written a block at a time is byte for byte the bag rosbags writes one
message at a time (``test_record_bag.py`` checks it, over several chunks).

MCAP records (https://mcap.dev/spec): opcode (u8), record length (u64), then
the fields, little-endian.  A Message record is channel id (u16), sequence
(u32, 0 as rosbags writes it), log time and publish time (u64 ns, both the
bag time), then the CDR bytes; 31 bytes before the data.  A Message Index
record is channel id (u16), the byte length of its entries (u32), then
(log time, offset of the record in the chunk) as u64 pairs.
"""

from collections import defaultdict
from io import BytesIO
import struct

import numpy as np
from rosbags.rosbag2 import CompressionMode, StoragePlugin, Writer, WriterError
from rosbags.rosbag2.storage_mcap import (McapWriter, PendingChunk, write_record,
                                          write_string, write_uint16, write_uint32,
                                          write_uint64)

__all__ = ['BlockMcapStorage', 'BlockWriter', 'CHUNK_BYTES', 'message_records']

#: rosbags closes a chunk after the message that takes it past this size.
CHUNK_BYTES = 1 << 20

OP_MESSAGE, OP_CHUNK, OP_MESSAGE_INDEX = 0x05, 0x06, 0x07

#: A Message record up to its data: opcode, record length, channel id,
#: sequence, log time, publish time (packed, 31 bytes).
MESSAGE_HEAD = np.dtype([('op', 'u1'), ('length', '<u8'), ('channel', '<u2'),
                         ('sequence', '<u4'), ('log_time', '<u8'), ('publish_time', '<u8')])
MESSAGE_FIELDS_BYTES = MESSAGE_HEAD.itemsize - 9    # the record length: after opcode and length
_MESSAGE_HEAD = struct.Struct('<BQHIQQ')            # the same head, one message at a time


def message_records(ids, stamps, offsets, lengths, payload):
    """The MCAP Message records of n messages, joined in their order: message
    i of channel ``ids[i]`` at bag time ``stamps[i]`` [ns] is
    ``payload[offsets[i]:offsets[i] + lengths[i]]``.  Returns (the records'
    bytes, each record's size).

    The heads are one numpy array.  The records are copied into one buffer
    as rows: the messages of one size are rows of a 2-D view of the payload
    and of the buffer (each row a record's place), moved in one fancy-indexed
    copy per size (a recording has a few sizes: a topic's messages share
    theirs).  A size with fewer than :data:`ROWS_AT_ONCE` messages is copied
    a slice at a time."""
    n = len(ids)
    lengths = np.asarray(lengths, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    head = np.zeros(n, dtype=MESSAGE_HEAD)
    head['op'] = OP_MESSAGE
    head['length'] = MESSAGE_FIELDS_BYTES + lengths
    head['channel'] = ids
    head['log_time'] = stamps
    head['publish_time'] = stamps
    sizes = MESSAGE_HEAD.itemsize + lengths
    if n == 0:
        return memoryview(b''), sizes
    starts = np.cumsum(sizes) - sizes              # each record's place in the buffer
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    width = MESSAGE_HEAD.itemsize
    _rows(out, width)[starts] = head.view(np.uint8).reshape(n, width)
    data = np.frombuffer(payload, dtype=np.uint8)
    for length in np.unique(lengths[lengths > 0]).tolist():
        mine = np.flatnonzero(lengths == length)
        to, at = starts[mine] + width, offsets[mine]
        if len(mine) >= ROWS_AT_ONCE:
            _rows(out, length)[to] = _rows(data, length)[at]
        else:
            for i, j in zip(to.tolist(), at.tolist()):
                out[i:i + length] = data[j:j + length]
    return memoryview(out), sizes


#: the fewest messages of one size copied as rows of a view (fewer: a slice each)
ROWS_AT_ONCE = 8


def _rows(buffer, width):
    """Every ``width`` bytes of ``buffer`` (a 1-D uint8 array) that start at
    one of its bytes, as the rows of a 2-D view: row i is buffer[i:i + width]."""
    return np.lib.stride_tricks.as_strided(buffer, shape=(buffer.size - width + 1, width),
                                           strides=(1, 1), writeable=buffer.flags.writeable)


class BlockMcapStorage(McapWriter):
    """rosbags' MCAP storage, with :meth:`write_block`; its pending chunk's
    message index holds pieces (``chunk.msgs``: channel id -> [(stamps,
    offsets), ...], arrays of a block or the two numbers of one message),
    written by :meth:`close_chunk` as rosbags writes its lists."""

    def write(self, connection, timestamp, data):
        """One message (rosbags' call): its record as rosbags writes it, its
        index entry a piece of its own."""
        chunk, cid, size = self.chunk, connection.id, len(data)
        self._index_one(cid, timestamp, chunk.bio.tell())
        chunk.bio.write(_MESSAGE_HEAD.pack(OP_MESSAGE, MESSAGE_FIELDS_BYTES + size, cid, 0,
                                           timestamp, timestamp))
        chunk.bio.write(data)
        if chunk.bio.tell() > CHUNK_BYTES:
            self.close_chunk()

    def _index_one(self, cid, timestamp, at):
        self._book_times(timestamp, timestamp)
        self.channel_stats[cid] += 1
        self.chunk.msgs[cid].append((timestamp, at))

    def _book_times(self, low, high):
        """Messages from ``low`` to ``high`` [ns] in the pending chunk and the bag."""
        chunk = self.chunk
        chunk.message_start_time = min(low, chunk.message_start_time)
        chunk.message_end_time = max(high, chunk.message_end_time)
        self.message_start_time = min(low, self.message_start_time)
        self.message_end_time = max(high, self.message_end_time)

    def write_block(self, ids, stamps, offsets, lengths, payload):
        """Messages in the given order (see :func:`message_records`), into
        chunks closed where rosbags closes them."""
        ids = np.asarray(ids, dtype=np.uint16)
        stamps = np.asarray(stamps, dtype=np.uint64)
        if not len(ids):
            return
        records, sizes = message_records(ids, stamps, offsets, lengths, payload)
        ends = np.cumsum(sizes)                     # each record's end in ``records``
        starts = ends - sizes
        begin = 0                                   # first message not yet in a chunk
        while begin < len(ids):
            chunk = self.chunk
            base = chunk.bio.tell() - starts[begin]
            # rosbags closes the chunk after the first message that ends past 1 MiB
            over = int(np.searchsorted(ends[begin:] + base, CHUNK_BYTES, side='right'))
            end = min(begin + over + 1, len(ids))
            start_byte = int(starts[begin])
            at = chunk.bio.tell() + starts[begin:end] - start_byte   # in the chunk
            self._index(ids[begin:end], stamps[begin:end], at.astype(np.uint64))
            chunk.bio.write(records[start_byte:int(ends[end - 1])])
            if chunk.bio.tell() > CHUNK_BYTES:
                self.close_chunk()
            begin = end

    def _index(self, ids, stamps, at):
        """Book messages of the pending chunk: times, counts, index entries."""
        chunk = self.chunk
        self._book_times(int(stamps.min()), int(stamps.max()))
        channels, first = np.unique(ids, return_index=True)
        for cid in channels[np.argsort(first)].tolist():    # in the order they first came
            mine = ids == cid
            self.channel_stats[cid] += int(mine.sum())
            chunk.msgs[cid].append((stamps[mine], at[mine]))

    def close_chunk(self):
        """The pending chunk, its message indexes and its chunk index entry:
        rosbags' ``McapWriter.close_chunk`` with the index entries as arrays."""
        chunk = self.chunk
        rec = BytesIO()
        write_uint64(rec, chunk.message_start_time)
        write_uint64(rec, chunk.message_end_time)
        write_uint64(rec, chunk.bio.tell())
        write_uint32(rec, 0)
        compressed = self.compressor(chunk.bio.getvalue())
        write_string(rec, self.compression)
        write_uint64(rec, len(compressed))
        rec.write(compressed)

        chunk_start = self.bio.tell()
        write_record(self.bio, OP_CHUNK, rec)
        chunk_end = self.bio.tell()

        offsets = []
        for cid, pieces in chunk.msgs.items():
            offsets.append((cid, self.bio.tell()))
            stamps = [np.asarray(s, dtype=np.uint64).reshape(-1) for s, _ in pieces]
            entries = np.empty((sum(len(s) for s in stamps), 2), dtype='<u8')
            entries[:, 0] = np.concatenate(stamps)
            entries[:, 1] = np.concatenate([np.asarray(a, dtype=np.uint64).reshape(-1)
                                            for _, a in pieces])
            rec = BytesIO()
            write_uint16(rec, cid)
            write_uint32(rec, entries.nbytes)
            rec.write(entries.tobytes())
            write_record(self.bio, OP_MESSAGE_INDEX, rec)

        rec = BytesIO()
        write_uint64(rec, chunk.message_start_time)
        write_uint64(rec, chunk.message_end_time)
        write_uint64(rec, chunk_start)
        write_uint64(rec, chunk_end - chunk_start)
        write_uint32(rec, len(offsets) * 10)
        for cid, offset in offsets:
            write_uint16(rec, cid)
            write_uint64(rec, offset)
        write_uint64(rec, self.bio.tell() - chunk_end)
        write_string(rec, self.compression)
        write_uint64(rec, len(compressed))
        write_uint64(rec, chunk.bio.tell())
        self.chunks.append(rec)
        self.chunk = PendingChunk(2**63 - 1, 0, BytesIO(), defaultdict(list))


class BlockWriter(Writer):
    """rosbags' rosbag2 Writer (MCAP storage) with :meth:`write_block`."""

    STORAGE_PLUGINS = {**Writer.STORAGE_PLUGINS, StoragePlugin.MCAP: BlockMcapStorage}

    def __init__(self, path, **kwargs):
        kwargs.setdefault('storage_plugin', StoragePlugin.MCAP)
        if kwargs['storage_plugin'] != StoragePlugin.MCAP:
            raise WriterError('BlockWriter writes MCAP storage only')
        super().__init__(path, **kwargs)

    def write_block(self, ids, stamps, offsets, lengths, payload):
        """Messages of registered connections, in the given order: message i
        on connection id ``ids[i]`` at bag time ``stamps[i]`` [ns] is
        ``payload[offsets[i]:offsets[i] + lengths[i]]``."""
        if not self.storage:
            raise WriterError('Bag was not opened.')
        if self.compression_mode == CompressionMode.MESSAGE:
            raise WriterError('BlockWriter.write_block: no per-message compression')
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return
        known = np.fromiter(self.counts, dtype=np.int64)
        unknown = ~np.isin(ids, known)
        if unknown.any():
            raise WriterError(f'Tried to write to unknown connection id {int(ids[unknown][0])}.')
        self.storage.write_block(ids, stamps, offsets, lengths, payload)
        stamps = np.asarray(stamps, dtype=np.uint64)
        channels, counts = np.unique(ids, return_counts=True)
        for cid, count in zip(channels.tolist(), counts.tolist()):
            self.counts[cid] += count
        self.min_timestamp = min(int(stamps.min()), self.min_timestamp)
        self.max_timestamp = max(int(stamps.max()), self.max_timestamp)
