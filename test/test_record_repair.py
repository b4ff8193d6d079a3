"""``acres-sim bag repair`` on a bag that is not a recording of acres_sim's: a
user's own rosbag2 whose writer died (its MCAP cut short, no metadata.yaml)
and whose last record is garbage.  The repair keeps every whole message, never
deletes the user's file (it stays as ``*.mcap.damaged``), and a record length
that points past the end of the file is damage, not a traceback."""

import struct

import pytest

from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from acres_sim.cli import main

TYPESTORE = get_typestore(Stores.ROS2_JAZZY)


def users_bag(folder, messages=500):
    """A bag of std_msgs/String written by rosbags (as ros2 bag record would)."""
    String = TYPESTORE.types['std_msgs/msg/String']
    with Writer(folder, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection('/chatter', 'std_msgs/msg/String',
                                           typestore=TYPESTORE)
        for i in range(messages):
            writer.write(connection, 1_000_000 * (i + 1),
                         TYPESTORE.serialize_cdr(String(data=f'hello {i}' * 50),
                                                 'std_msgs/msg/String'))
    return folder / f'{folder.name}.mcap'


DATA_END = 0x0F          # MCAP opcodes
MESSAGE = 0x05


def data_end(mcap_bytes):
    """The offset of the Data End record: every record before it is whole."""
    pos = 8                                  # after the magic
    while True:
        opcode, length = struct.unpack_from('<BQ', mcap_bytes, pos)
        if opcode == DATA_END:
            return pos
        pos += 9 + length


@pytest.mark.parametrize('cut, kept', [('after the last whole record', 500),
                                       ('inside the chunk', None)])
def test_a_users_dead_bag_is_repaired_and_its_file_kept(tmp_path, capsys, cut, kept):
    folder = tmp_path / 'mine'
    mcap = users_bag(folder)
    whole = mcap.read_bytes()
    # the writer died: no summary or footer, no metadata.yaml, and a last record
    # whose length points far past the end of the file
    end = data_end(whole) if kept else len(whole) * 2 // 3
    damaged = whole[:end] + struct.pack('<BQ', MESSAGE, 2 ** 63) + b'xx'
    mcap.write_bytes(damaged)
    (folder / 'metadata.yaml').unlink()
    (folder / 'notes.txt').write_text('mine')

    assert main(['bag', 'repair', str(folder)]) == 0
    assert 'repaired' in capsys.readouterr().out
    assert (folder / 'mine.mcap.damaged').read_bytes() == damaged
    assert (folder / 'notes.txt').read_text() == 'mine'
    with AnyReader([folder]) as reader:
        count = reader.message_count
        last = max(timestamp for _c, timestamp, _d in reader.messages())
    assert 0 < count <= 500 and last == 1_000_000 * count    # the first messages, in order
    assert count == (kept or count)

    assert main(['bag', 'repair', str(folder)]) == 0          # whole now: nothing to do
    assert 'nothing to repair' in capsys.readouterr().out
