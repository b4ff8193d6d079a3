"""Writing configurations and the schema for people: parameter files with
comments, and the parameter table of the docs.

PyYAML cannot write comments, so parameter files are emitted here line by line;
a test loads every emitted file back with PyYAML and with rclpy's parser.
"""

import json

from acres_sim.config.schema import KEY_NAMES, KEYS, OUTAGES, key

__all__ = ['describe_keys', 'event_tables_markdown', 'params_yaml', 'parameters_markdown',
           'unit_of']


def unit_of(name) -> str:
    return key(name).unit


def describe_keys(names) -> dict:
    """name -> 'unit; description' comments for a parameter file."""
    out = {}
    for name in names:
        k = key(name)
        text = _description(k)
        out[name] = f'[{k.unit}] {text}' if k.unit else text
    return out


def _description(k) -> str:
    """The key's description, with acres_sim's own keys marked as such."""
    if k.spec:
        return k.description
    return '(acres_sim) ' + k.description.removeprefix('acres_sim: ')


def _scalar(value) -> str:
    if isinstance(value, bool) or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        mantissa, _, exponent = text.partition('e')
        if exponent and '.' not in mantissa:
            text = f'{mantissa}.0e{exponent}'  # YAML 1.1 needs the dot to read a float
        return text
    return '[' + ', '.join(_scalar(v) for v in value) + ']'


def params_yaml(values, comments=None) -> str:
    """A ROS 2 parameter file (section '/**') with ``values`` (dotted name ->
    value) nested by their dots, in schema order, with optional comments.

    Empty lists are left out: a parameter file cannot say what type an empty
    list has (rcl reads it as 'not set'), and every list key defaults to empty.
    Outages are written as 'START:END' strings, a valid string-array parameter.
    """
    comments = comments or {}
    lines = ['/**:', '  ros__parameters:']
    open_groups, closed = [], set()
    for name in (n for n in KEY_NAMES if n in values):
        value = values[name]
        if name == OUTAGES:
            value = [f'{start!r}:{end!r}' for start, end in value]
        if value == []:
            continue
        *groups, leaf = name.split('.')
        same = 0
        while same < min(len(groups), len(open_groups)) and groups[same] == open_groups[same]:
            same += 1
        closed.update('.'.join(open_groups[:i]) for i in range(same + 1, len(open_groups) + 1))
        for depth in range(same, len(groups)):
            group = '.'.join(groups[:depth + 1])
            assert group not in closed, f'schema order reopens group {group}'
            lines.append('  ' * (depth + 2) + groups[depth] + ':')
        open_groups = groups
        note = f'  # {comments[name]}' if comments.get(name) else ''
        lines.append('  ' * (len(groups) + 2) + f'{leaf}: {_scalar(value)}{note}')
    return '\n'.join(lines) + '\n'


def _cell(value) -> str:
    if value is None:
        return ''
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_cell(v) for v in value) + ']' if value else '[]'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value).replace('|', '\\|')


def parameters_markdown() -> str:
    """The docs' parameter table, generated from the schema."""
    lines = ['# Parameters', '',
             'Generated from `acres_sim/config/schema.py` by `acres-sim config docs`;',
             'do not edit by hand (a test checks that this file is current).', '',
             'Every key can be set in a parameter file (`/**: ros__parameters:` with the',
             'dotted names nested), in the game\'s `sensors.json` layout, or with',
             '`--set KEY=VALUE`. "Polaris" is the value after the Polaris overlay where',
             'it differs from the default. Keys marked *(acres_sim)* are ours, not the spec\'s.',
             'Which of acres_sim\'s further sensors each vehicle carries is its equipment',
             '(`config/equipment_polaris.yaml`, `config/equipment_maxxum.yaml`; see',
             '[sensors.md](sensors.md)).',
             '']
    section = None
    for k in KEYS:
        top = k.name.split('.')[0] if '.' in k.name else 'common'
        if top != section:
            section = top
            lines += ['', f'## {section}', '',
                      '| key | type | unit | default | polaris | allowed | description |',
                      '|---|---|---|---|---|---|---|']
        description = _description(k)
        lines.append(f'| `{k.name}` | {k.kind} | {_cell(k.unit)} | {_cell(k.default)} | '
                     f'{_cell(k.polaris)} | {_cell(k.allowed())} | {_cell(description)} |')
    return '\n'.join(lines) + '\n'


def _event_table(keys, required=()) -> list:
    lines = ['| key | allowed | default | meaning |', '|---|---|---|---|']
    for k in keys:
        default = 'required' if k.name in required else _cell(k.default) or '(none)'
        lines.append(f'| `{k.name}` | {_cell(k.allowed())} | {default} | '
                     f'{_cell(k.description)} |')
    return lines


def event_tables_markdown() -> str:
    """The key tables of docs/events.md (the fields of every event, of a zone,
    and the parameters of each type), generated from acres_sim/config/events.py."""
    from acres_sim.config.events import EVENT_KEYS, REQUIRED, TYPE_KEYS, ZONE_KEYS

    lines = ['### Every event', ''] + _event_table(EVENT_KEYS.values(), ('type',))
    lines += ['', '### A zone', ''] + _event_table(ZONE_KEYS.values())
    for kind, keys in TYPE_KEYS.items():
        lines += ['', f'### `{kind}`', '']
        lines += (_event_table(keys.values(), REQUIRED.get(kind, ())) if keys
                  else ['No parameters.'])
    return '\n'.join(lines) + '\n'
