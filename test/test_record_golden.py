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
bag give the previous digest, each vehicle now in a simulation of its own.
Both were pinned again when a run that ends stopped writing the rows still in
the delay line (delivery null; the spec's Drain never releases them): the
previous output without those rows (12 and 24 of them) gives these digests."""

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
    ('polaris', 12.0, 1, {}, 'bc29dafc9fc5cac8432d1ee34a19fddc3a753a3ccee755dcca54ab83faa27e69'),
    ('maxxum', 5.0, 2, {'seed': 7},
     'ff4420f786c089304bfcfce2c6c93b686d959e495302d11187bdca862f3b51d2'),
])
def test_recording_equals_the_per_step_recorder(tmp_path, rig, seconds, agents, overrides,
                                                 digest):
    out = tmp_path / rig
    record(RecordRequest(rig, out, RigOptions(duration_s=seconds, agents=agents,
                                              overrides=overrides), progress=False))
    assert recording_digest(out) == digest
