"""The recorder's output, pinned: digests of the rows (as values) and of every
bag message of two short recordings, made by the per-step recorder of commit
3c1aed0 (one Python loop iteration per physics step) before the block kernel
replaced it.  The block recorder must give the same numbers, bag bytes and
message order.  A change of the models that is meant to change the output
changes these digests: check the change, then pin the new ones.  The Maxxum
pair was pinned again when --agents began to place its copies apart: agent 1
now spawns 9.6 m (a Maxxum length and 5 m) along the route from agent 0, and
that is the only difference from the per-step recorder's output.  It was
pinned again when the agents' folders took their vehicles' names (agent0/,
agent1/ instead of agent_0/, agent_1/): with the old names the rows and the
bag give the previous digest, each vehicle now in a simulation of its own."""

import hashlib
import json
from pathlib import Path

import pytest
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore

from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions


def recording_digest(out):
    """sha256 over every jsonl row (parsed, keys sorted: the float text does not
    matter, the values do) and every bag message (topic, time, CDR bytes)."""
    out = Path(out)
    h = hashlib.sha256()
    for path in sorted(out.rglob('*.jsonl')):
        h.update(str(path.relative_to(out)).encode())
        for line in path.read_text().splitlines():
            h.update(json.dumps(json.loads(line), sort_keys=True).encode())
    with AnyReader([out / 'bag'], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, t, data in reader.messages():
            h.update(connection.topic.encode() + t.to_bytes(8, 'little') + bytes(data))
    return h.hexdigest()


@pytest.mark.parametrize('rig, seconds, agents, overrides, digest', [
    ('polaris', 12.0, 1, {}, 'cf0f23b6bbc7ee1c2c585a8522b90a39bf7001d264f5bcbc65f626f57eecd60f'),
    ('maxxum', 5.0, 2, {'seed': 7},
     'bf10a87f9e2c4b3a5fac16e74dd2f3be8878804b16ba3ad39c44acdf8cf02a75'),
])
def test_recording_equals_the_per_step_recorder(tmp_path, rig, seconds, agents, overrides,
                                                 digest):
    out = tmp_path / rig
    record(RecordRequest(rig, out, RigOptions(duration_s=seconds, agents=agents,
                                              overrides=overrides), progress=False))
    assert recording_digest(out) == digest
