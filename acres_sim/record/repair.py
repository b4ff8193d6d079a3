"""``acres-sim bag repair``: a readable rosbag2 again from a bag whose writer
died (a full disk, a SIGKILL, a crash) -- an MCAP without its summary and
footer, perhaps cut in the middle of a record, and no ``metadata.yaml``.

The MCAP is read as a stream (``mcap``'s :class:`~mcap.stream_reader.StreamReader`,
chunk CRCs checked) up to its last whole record: every schema, channel and
message before the damage.  Those messages are written in their order into a
new bag with rosbags' ``Writer`` (a valid MCAP with summary and footer, and
``metadata.yaml``, version 8) in a fresh hidden folder beside the bag; the new
bag is read back, and only then does its MCAP take the damaged one's name
and its ``metadata.yaml`` join it.  The damaged file is kept beside it as
``NAME.mcap.damaged`` (never deleted: the bag may not be acres_sim's own).  A
repair cut short at any point leaves the damaged bag as it was.
"""

from dataclasses import dataclass
import io
import os
from pathlib import Path
import shutil
import struct
import tempfile

from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.rosbag2.metadata import parse_qos
from rosbags.typesys import Stores, get_typestore

from acres_sim.record.bag import BAG_VERSION
from acres_sim.record.output import claim

__all__ = ['RepairError', 'Repaired', 'repair_bag']


class RepairError(Exception):
    """The folder holds no bag that can be repaired (one line for the user)."""


@dataclass
class Repaired:
    path: Path             # the bag folder
    messages: int          # messages in the repaired bag
    topics: int
    end_ns: int            # time of the last message kept (0: none)
    damaged: str           # what was wrong, or '' when the bag was whole


def _bag_folder(path: Path) -> Path:
    """A bag folder, or a recording folder with its bag in ``bag/``."""
    if not path.is_dir():
        raise RepairError(f'{path} is not a folder')
    if not any(path.glob('*.mcap')) and (path / 'bag').is_dir():
        return path / 'bag'
    return path


_MAGIC = b'\x89MCAP0\r\n'


def _records(f, damage):
    """The schema, channel and message records of the MCAP stream ``f`` in
    their order, up to the last whole one -- also those of a chunk that was
    cut short (when it is not compressed).  What stopped the reading before
    the footer is appended to ``damage``."""
    from mcap.opcode import Opcode
    from mcap.stream_reader import CRCValidationError, breakup_chunk
    from mcap.records import Chunk

    size = os.fstat(f.fileno()).st_size
    magic = f.read(len(_MAGIC))
    if magic != _MAGIC:
        damage.append('not an MCAP file' if magic else 'the file is empty')
        return
    while True:
        head = f.read(9)
        if len(head) < 9:
            damage.append('the file ends inside a record' if head else 'the file has no footer')
            return
        opcode, length = struct.unpack('<BQ', head)
        body = f.read(min(length, size - f.tell()))    # a length past the end: cut short
        if len(body) < length:
            if opcode == Opcode.CHUNK:
                yield from _cut_chunk(body)
            damage.append('the file ends inside a record')
            return
        if opcode in (Opcode.DATA_END, Opcode.FOOTER):
            return                   # every message is before it (the summary repeats)
        if opcode == Opcode.CHUNK:
            try:
                chunk = Chunk.read(_stream(body))
                yield from breakup_chunk(chunk, validate_crc=True)
            except (CRCValidationError, struct.error, ValueError) as err:
                damage.append(f'a damaged chunk ({err})')
                return
        else:
            record = _record(opcode, body)
            if record is not None:
                yield record


def _stream(data):
    from mcap.data_stream import ReadDataStream
    return ReadDataStream(io.BytesIO(data))


def _record(opcode, body):
    """A schema, channel or message record from its bytes (None for others)."""
    from mcap.opcode import Opcode
    from mcap.records import Channel, Message, Schema

    if opcode == Opcode.SCHEMA:
        return Schema.read(_stream(body))
    if opcode == Opcode.CHANNEL:
        return Channel.read(_stream(body))
    if opcode == Opcode.MESSAGE:
        return Message.read(_stream(body), len(body))
    return None


def _cut_chunk(body):
    """The whole records at the start of an uncompressed chunk cut short."""
    if len(body) < 32:
        return
    size = struct.unpack_from('<I', body, 28)[0]
    compression, start = body[32:32 + size], 32 + size + 8
    if compression or len(body) < start:
        return
    data = body[start:]
    pos = 0
    while pos + 9 <= len(data):
        opcode, length = struct.unpack_from('<BQ', data, pos)
        if pos + 9 + length > len(data):
            return
        record = _record(opcode, data[pos + 9:pos + 9 + length])
        if record is not None:
            yield record
        pos += 9 + length


def _typestore():
    """The recorder's types: Jazzy's and the gps_msgs it adds (pipeline.interfaces)."""
    from acres_sim.pipeline.interfaces import register

    typestore = get_typestore(Stores.ROS2_JAZZY)
    register(typestore)
    return typestore


def _copy_stream(source: Path, writer=None, typestore=None):
    """Read the MCAP as a stream up to its last whole record, writing each
    message into ``writer`` (a rosbags Writer, or None to only read).
    Returns (topics, messages, last time, damage): ``damage`` says why
    reading stopped before the footer ('' when it did not)."""
    from mcap.records import Channel, Message, Schema

    schemas, connections, damage = {}, {}, []
    count, end_ns = 0, 0
    with open(source, 'rb') as f:
        try:
            for record in _records(f, damage):
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel) and record.id not in connections:
                    connections[record.id] = _connection(writer, record,
                                                         schemas.get(record.schema_id),
                                                         typestore)
                elif isinstance(record, Message) and record.channel_id in connections:
                    if writer is not None:
                        writer.write(connections[record.channel_id], record.log_time,
                                     record.data)
                    count += 1
                    end_ns = record.log_time
        except (EOFError, struct.error, ValueError, KeyError) as err:
            damage.append(f'an unreadable record ({type(err).__name__})')
    return len(connections), count, end_ns, '; '.join(damage)


def _connection(writer, channel, schema, typestore):
    """The new bag's connection of an MCAP channel (its type, definition, QoS)."""
    if writer is None:
        return None
    msgtype = schema.name if schema else ''
    rihs01 = typestore.hash_rihs01(msgtype) if msgtype in typestore.fielddefs else ''
    qos = channel.metadata.get('offered_qos_profiles', '')
    return writer.add_connection(channel.topic, msgtype,
                                 msgdef=schema.data.decode() if schema else '', rihs01=rihs01,
                                 serialization_format=channel.message_encoding,
                                 offered_qos_profiles=parse_qos(qos) if qos else ())


def _whole(folder: Path, error: str) -> bool:
    if error or not (folder / 'metadata.yaml').is_file():
        return False
    try:
        with AnyReader([folder]) as reader:
            reader.message_count    # noqa: B018 - opening it is the test
        return True
    except Exception:  # noqa: BLE001 - any failure to read means: not whole
        return False


def repair_bag(path) -> Repaired:
    """Repair the bag in ``path`` (a bag folder or a recording's folder) in
    place; see the module docstring.  A whole bag is left untouched."""
    folder = _bag_folder(Path(path))
    mcaps = sorted(folder.glob('*.mcap'))
    if len(mcaps) != 1:
        raise RepairError(f'{folder}: expected one .mcap file, found {len(mcaps)}')
    source = mcaps[0]
    try:
        topics, count, end_ns, error = _copy_stream(source)
    except OSError as err:
        raise RepairError(f'cannot read {source}: {err.strerror}') from None
    if _whole(folder, error):
        return Repaired(folder, count, topics, end_ns, '')
    if not topics:
        raise RepairError(f'{source}: nothing readable ({error or "no topics"})')
    kept = source.with_name(source.name + '.damaged')
    if os.path.lexists(kept):
        raise RepairError(f'{kept} exists: move it away first (a repair keeps the damaged '
                          'file under that name)')
    work = Path(tempfile.mkdtemp(prefix=f'.{folder.name}.repair-', dir=folder.parent))
    target = work / source.stem                 # rosbags names the MCAP after its folder
    readable = count
    try:
        writer = Writer(target, version=BAG_VERSION, storage_plugin=StoragePlugin.MCAP)
        writer.open()
        topics, count, end_ns, error = _copy_stream(source, writer, _typestore())
        writer.close()
        with AnyReader([target]) as reader:     # the new bag reads back whole
            if not reader.message_count == count == readable:
                raise RepairError(f'{folder}: the repaired bag holds {reader.message_count} '
                                  f'of the {readable} messages readable; left as it was')
        os.replace(source, kept)                  # the damaged MCAP is kept, renamed
        os.replace(target / source.name, source)
        os.replace(target / 'metadata.yaml', folder / 'metadata.yaml')
        if folder.name == 'bag':                  # a recording's bag: the kept file is its too
            claim(folder.parent, f'bag/{kept.name}', f'bag/{source.name}')
    except OSError as err:
        raise RepairError(f'cannot write the repaired bag beside {folder}: '
                          f'{err.strerror or err}') from None
    except (WriterError, AnyReaderError) as err:
        raise RepairError(f'{folder}: the repaired bag cannot be written: {err}') from None
    finally:
        shutil.rmtree(work, ignore_errors=True)          # our own temporary folder
    return Repaired(folder, count, topics, end_ns, error or 'no metadata.yaml')
