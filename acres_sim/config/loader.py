"""Reading configuration files and resolving them into one checked :class:`Config`.

Layers, each overriding the one before:

1. the schema defaults,
2. the sensor file (``sensors.yaml``, or ``--config``; the game's ``sensors.json`` works too),
3. the site file (``site.yaml`` or ``--site``): the tile's georeference and the
   datum keys that belong to the place and epoch, so they win over a sensor file,
4. the vehicle's equipment (``equipment_polaris.yaml`` / ``equipment_maxxum.yaml``,
   with a packaged rig): acres_sim's further sensors that vehicle carries
   (barometer, magnetometer, wheel odometry, radar, dual-antenna heading),
5. the vehicle overlay (``sensors_polaris.yaml`` / ``sensors_maxxum.yaml``, or
   ``--vehicle-config``): the spec's sensors as the vehicle carries them (a
   user's overlay may also set the equipment's keys: it comes after),
6. command-line overrides.

A ``--config`` file is a complete configuration (the spec's -SensorConfig=):
the packaged ``site.yaml``, vehicle overlay and equipment only fill in the keys
it does not set.  Files the user gives (``--site``, ``--vehicle-config``) still apply
in the order above.  :func:`packaged_notice` says in one line which keys the
packaged files filled in.

Files are ROS 2 parameter files (``/**: ros__parameters:`` with the dotted key
names nested), plain nested YAML, or JSON with the same nesting.  Every layer is
checked key by key against the schema; the first mistake stops with one
:class:`ConfigError` naming the key, the value, the limit and the file.

A parameter file is also held to what rcl (the nodes' parser) accepts: rcl
types a value by how it is written, so a float key needs ``10.0``, not ``10``,
and outages are written as ``"START:END"`` strings.  YAML is read the way rcl
reads it: ``1e-05`` is a number, an unquoted time stays a string and an alias
(``*name``) is refused.  Every file is held to this, parameter file or not,
and a key given twice in one mapping is an error in YAML and JSON alike.
"""

from dataclasses import dataclass
import json
import os
import re
from pathlib import Path
import sys
from types import MappingProxyType
from typing import Any, Mapping, Optional

import yaml

from acres_sim.files import NotARegularFile, read_regular
from acres_sim.config.render import describe_keys, params_yaml, unit_of
from acres_sim.config.schema import KEY_NAMES, KEYS, OUTAGES, key
from acres_sim.config.validate import (ConfigError, check_config, check_value,
                                       parse_outage, unknown_key)

__all__ = ['Config', 'EQUIPMENT', 'RIGS', 'config_dir', 'load_config', 'packaged_keys',
           'packaged_notice', 'parse_yaml', 'read_document', 'read_layer', 'resolve',
           'yaml_problem']

PACKAGE = 'acres_sim'
RIGS = {'polaris': 'sensors_polaris.yaml', 'maxxum': 'sensors_maxxum.yaml'}
EQUIPMENT = {'polaris': 'equipment_polaris.yaml', 'maxxum': 'equipment_maxxum.yaml'}
_GROUPS = {name.rsplit('.', i)[0] for name in KEY_NAMES for i in range(1, name.count('.') + 1)}


def config_dir() -> Path:
    """The folder of the packaged config files.

    A source checkout (editable install) uses its own ``config/``, so edits show
    at once; installed trees (colcon, pip) have ``<prefix>/share/acres_sim/config``.
    """
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    candidates = [Path(__file__).resolve().parents[2] / 'config',
                  *(Path(p) / 'share' / PACKAGE / 'config' for p in prefixes),
                  Path(sys.prefix) / 'share' / PACKAGE / 'config']
    for folder in candidates:
        if (folder / 'sensors.yaml').is_file():
            return folder
    raise ConfigError('cannot find the packaged config folder (looked in '
                      + ', '.join(str(c) for c in candidates) + ')')


@dataclass(frozen=True)
class Config:
    """A complete, checked configuration: every schema key has a value.

    ``values`` maps dotted key -> value; ``sources`` maps dotted key -> where
    the value came from ('default', a file path or 'command line'). Both are
    read-only views.
    """

    values: Mapping[str, Any]
    sources: Mapping[str, str]

    def __getitem__(self, name):
        return self.values[name]

    def to_params_yaml(self, comment=None) -> str:
        """A ROS 2 parameter file holding this configuration.

        ``comment`` is None, 'units' (unit and description) or 'sources'
        (unit and where each value came from).
        """
        notes = {}
        if comment == 'sources':
            notes = {n: f'{unit_of(n)}; {s}' if unit_of(n) else s
                     for n, s in self.sources.items()}
        elif comment == 'units':
            notes = describe_keys(self.values)
        return params_yaml(self.values, notes)


MERGE_TAG = 'tag:yaml.org,2002:merge'


def _rcl_like_loader(base):
    """PyYAML's safe loader ``base``, reading as rcl does: no timestamps, floats
    with an exponent need no dot (YAML 1.2, e.g. 1e-05), and a key given twice
    in one mapping is refused, not "the last one wins".  (No aliases either:
    :func:`parse_yaml` refuses them before the loader builds anything.)"""

    class RclLikeLoader(base):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != MERGE_TAG:
                    name = self.construct_object(key_node)
                    if name in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f'found the key {name!r} twice in one mapping',
                            key_node.start_mark)
                    seen.add(name)
            return super().construct_mapping(node, deep)

    RclLikeLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers
                if tag != 'tag:yaml.org,2002:timestamp']
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    RclLikeLoader.add_implicit_resolver(
        'tag:yaml.org,2002:float',
        re.compile(r'^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$'),
        list('-+0123456789.'))
    return RclLikeLoader


# libyaml's parser where PyYAML has it (the packaged files parse in a sixth of the
# time: every process of the rig reads a dozen at its start), else PyYAML's own.
_SAFE_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
_RclLikeLoader = _rcl_like_loader(_SAFE_LOADER)


def parse_yaml(text, loader=_RclLikeLoader):
    """The value of YAML ``text``, read as a config file is (see
    :func:`_rcl_like_loader`); an alias (``*name``) is refused: rcl refuses
    them too, and expanded, a few hundred bytes of nested aliases are
    gigabytes.  Raises yaml.YAMLError (or RecursionError when nested too deeply)."""
    if '*' in text:           # maybe an alias: looked for before anything is built
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                raise yaml.composer.ComposerError(
                    None, None, f'found an alias (*{event.anchor}), which acres_sim does not '
                    'read (rcl refuses aliases too; write the value out)', event.start_mark)
    return yaml.load(text, Loader=loader)


def parse_value(text, where):
    """The value of ``text`` read as a value in a config file is (``--set``,
    launch arguments); if it is not valid YAML, one ConfigError that begins
    with ``where``."""
    try:
        return parse_yaml(text)
    except (yaml.YAMLError, RecursionError) as err:
        reason = 'nested too deeply' if isinstance(err, RecursionError) else yaml_problem(err)
        raise ConfigError(f'{where} is not valid YAML ({reason})') from None


def yaml_problem(err) -> str:
    """What is wrong in a YAML text, on one line, with the line and column."""
    mark = getattr(err, 'problem_mark', None)
    if mark is None:
        return ' '.join(str(err).split())
    what = '; '.join(part for part in (err.context, err.problem) if part)
    return f'line {mark.line + 1}, column {mark.column + 1}: ' + ' '.join(what.split())


def _unique_keys(pairs):
    """A JSON object, refusing a key given twice."""
    out = {}
    for name, value in pairs:
        if name in out:
            raise ValueError(f'found the key {name!r} twice in one object')
        out[name] = value
    return out


def _flatten(tree, prefix, source, out):
    for name, value in tree.items():
        if not isinstance(name, str):
            raise ConfigError(f'{source}: key {name!r} under {prefix or "the top"} is not a name')
        full = f'{prefix}.{name}' if prefix else name
        if isinstance(value, dict) and full not in KEY_NAMES:
            if full not in _GROUPS:
                raise unknown_key(full, source)
            _flatten(value, full, source, out)
        elif full in _GROUPS:
            raise ConfigError(f"'{full}' (in {source}) is a group of keys; expected a mapping "
                              f'of its keys, got {value!r}')
        else:
            out[full] = value
    return out


def _parameters(tree, source):
    """The ``ros__parameters`` of a ROS 2 parameter file, or the tree itself."""
    sections = {n: v for n, v in tree.items()
                if isinstance(v, dict) and 'ros__parameters' in v}
    if not sections:
        return tree
    wildcard = tree.get('/**')
    others = sorted(str(name) for name in tree if name != '/**')
    if others or not isinstance(wildcard, dict) or set(wildcard) != {'ros__parameters'}:
        raise ConfigError(f"{source}: acres_sim reads the '/**' section of a parameter file "
                          '(holding only ros__parameters) and nothing else; '
                          f'found {others or wildcard}')
    params = wildcard['ros__parameters']
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise ConfigError(f'{source}: ros__parameters must be a mapping of keys')
    return params


def read_document(path, what='config'):
    """The parsed content of a YAML file (JSON by the ``.json`` suffix), read the
    way rcl reads YAML; any problem is one ConfigError naming the ``what`` file.
    Only a regular file is read: a FIFO or a device is refused, not waited on."""
    path = Path(path)
    source = str(path)
    try:
        text = read_regular(path).decode('utf-8')
    except NotARegularFile:
        raise ConfigError(f'{what} file {source} is not a regular file') from None
    except OSError as err:
        raise ConfigError(f'cannot read {what} file {source}: '
                          f'{err.strerror or err.__class__.__name__}') from None
    except UnicodeDecodeError:
        raise ConfigError(f'{source} is not a text file (UTF-8)') from None
    kind = 'JSON' if path.suffix == '.json' else 'YAML'
    try:
        return (json.loads(text, object_pairs_hook=_unique_keys) if kind == 'JSON'
                else parse_yaml(text))
    except (ValueError, yaml.YAMLError, RecursionError) as err:
        reason = 'nested too deeply' if isinstance(err, RecursionError) else yaml_problem(err)
        raise ConfigError(f'{source} is not valid {kind}: {reason}') from None


def read_layer(path, what='config') -> dict:
    """The keys one file sets, checked and in normal form (dotted name -> value);
    ``what`` names the kind of file in messages (config, site, vehicle overlay)."""
    source = str(path)
    tree = read_document(path, what)
    if tree is None:
        return {}
    if not isinstance(tree, dict):
        raise ConfigError(f'{source}: expected a mapping of keys at the top, '
                          f'got {type(tree).__name__}')
    params = _parameters(tree, source)
    raw = _flatten(params, '', source, {})
    if params is not tree:
        for name, value in raw.items():
            _check_rcl_typing(name, value, source)
    return {name: check_value(name, value, source) for name, value in raw.items()}


def _check_rcl_typing(name, value, source):
    """Refuse what a ROS 2 parameter file cannot carry for key ``name`` (rcl
    would hand the node an integer for a float key, or fail on nested lists)."""
    if name not in KEY_NAMES:
        return
    k = key(name)
    items = value if isinstance(value, list) and k.kind in ('vec2', 'vec3') else [value]
    integers = [v for v in items if isinstance(v, int) and not isinstance(v, bool)]
    if k.kind in ('float', 'vec2', 'vec3') and integers:
        raise ConfigError(f'{name} = {value!r} (in {source}): write floats with a decimal '
                          f'point in a ROS 2 parameter file ({integers[0]}.0, not '
                          f'{integers[0]}), or rcl hands the node an integer')
    if k.kind == 'outages' and isinstance(value, list) and not all(
            isinstance(v, str) for v in value):
        raise ConfigError(f'{name} = {value!r} (in {source}): a ROS 2 parameter file cannot '
                          'hold pairs; write outages as strings, e.g. ["30:45", "120:150"]')


def resolve(layers) -> Config:
    """Apply ``(source, {key: value})`` layers in order on top of the defaults."""
    values = {k.name: k.default for k in KEYS}
    sources = {k.name: 'default' for k in KEYS}
    for source, layer in layers:
        for name, value in layer.items():
            values[name] = check_value(name, value, source)
            sources[name] = source
    check_config(values, sources)
    return Config(MappingProxyType(values), MappingProxyType(sources))


def load_config(rig: Optional[str] = None, config_file=None, overlay_file=None,
                site_file=None, overrides: Optional[Mapping[str, Any]] = None,
                add_outages=()) -> Config:
    """Resolve the layers (see the module docstring) into a checked Config.

    ``rig`` picks the packaged vehicle overlay ('polaris' or 'maxxum'; None for
    none) unless ``overlay_file`` is given, and the vehicle's packaged
    equipment.  ``overrides`` are command-line values by key; ``add_outages``
    are extra 'START:END' correction outages appended to the configured ones
    (the spec's -SensorGnssOutage=, repeatable).
    """
    if rig is not None and rig not in RIGS:
        raise ConfigError(f"unknown rig '{rig}'; allowed: {' or '.join(RIGS)}")
    files = [(config_file or config_dir() / 'sensors.yaml', 'config', False),
             (site_file or config_dir() / 'site.yaml', 'site', site_file is None)]
    if rig:
        files.append((config_dir() / EQUIPMENT[rig], 'vehicle equipment', True))
    if overlay_file or rig:
        files.append((overlay_file or config_dir() / RIGS[rig], 'vehicle overlay',
                      overlay_file is None))
    layers = [(str(f), read_layer(f, what)) for f, what, _packaged in files]
    if config_file:      # a complete configuration: packaged files only fill the gaps
        complete = layers[0][1]
        layers = [(source, {n: v for n, v in layer.items() if n not in complete}
                   if packaged else layer)
                  for (source, layer), (_f, _w, packaged) in zip(layers, files)]
    command_line = {name: check_value(name, value, 'command line')
                    for name, value in (overrides or {}).items()}
    layers.append(('command line', command_line))
    if add_outages:  # appended to the outages of the last layer that sets them
        base = next((layer[OUTAGES] for _, layer in reversed(layers) if OUTAGES in layer), [])
        command_line[OUTAGES] = base + [parse_outage(o, 'command line') for o in add_outages]
    return resolve(layers)


def packaged_keys(config: Config) -> dict:
    """{packaged file name: [keys whose value it set]}, in schema order."""
    folder = config_dir()
    names = {str(folder / name): name
             for name in ('sensors.yaml', 'site.yaml', *RIGS.values(), *EQUIPMENT.values())}
    out = {}
    for k in KEYS:
        name = names.get(config.sources[k.name])
        if name is not None:
            out.setdefault(name, []).append(k.name)
    return out


def packaged_notice(config_file, configs, shown=3) -> Optional[str]:
    """One line saying which keys packaged files set that ``config_file`` (the
    user's complete configuration) leaves out, over ``configs`` (a Config or
    one per vehicle); None without ``config_file`` or when it sets them all."""
    if not config_file:
        return None
    per_file = {}
    for config in [configs] if isinstance(configs, Config) else configs:
        for name, keys in packaged_keys(config).items():
            per_file.setdefault(name, {}).update(dict.fromkeys(keys))
    if not per_file:
        return None

    def listed(keys):
        more = ', ...' if len(keys) > shown else ''
        return f'{len(keys)} ({", ".join(list(keys)[:shown])}{more})'

    total = len({k for keys in per_file.values() for k in keys})
    return (f'{Path(config_file).name} leaves {total} keys to packaged files: '
            + ', '.join(f'{name} {listed(keys)}' for name, keys in per_file.items())
            + '; acres-sim config show --sources names the file of every key')
