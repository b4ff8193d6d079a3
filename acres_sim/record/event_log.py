"""Reading a run's event log back: from a bag (its ``events/log`` topic, in
any namespace) or from a JSON-lines file of entries (one per line, as the
sim node logs them) -- what ``acres-sim record --events-from`` repeats.
"""

import json
from pathlib import Path

from acres_sim.config.validate import ConfigError

__all__ = ['read_event_log']

LOG_SUFFIX = 'events/log'


def read_event_log(path) -> list:
    """The entries (mappings, in order) of the event log at ``path``: a bag
    folder or a JSON-lines file.  ConfigError naming the file otherwise."""
    path = Path(path)
    if path.is_dir():
        return _from_bag(path)
    if not path.is_file():
        raise ConfigError(f'event log {path}: no such bag folder or file')
    entries = []
    with path.open(encoding='utf-8') as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                raise ConfigError(f'event log {path}, line {number}: not JSON') from None
            if not isinstance(entry, dict) or 'log' not in entry:
                raise ConfigError(f'event log {path}, line {number}: not an event log entry')
            entries.append(entry)
    return entries


def _from_bag(folder):
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    try:
        with Reader(folder) as reader:
            connections = [c for c in reader.connections if c.topic.endswith(LOG_SUFFIX)
                           and c.msgtype == 'std_msgs/msg/String']
            if not connections:
                raise ConfigError(f'event log {folder}: the bag has no {LOG_SUFFIX} topic')
            return [json.loads(store.deserialize_cdr(data, 'std_msgs/msg/String').data)
                    for _c, _t, data in reader.messages(connections=connections)]
    except ConfigError:
        raise
    except Exception as err:  # noqa: BLE001 - rosbags raises many kinds for a bad bag
        raise ConfigError(f'event log {folder}: not a readable bag ({err})') from None
