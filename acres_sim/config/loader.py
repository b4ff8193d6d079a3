"""Reading configuration files and resolving them into one checked :class:`Config`.

Layers, each overriding the one before:

1. the schema defaults,
2. ``site.yaml`` (the tile's georeference),
3. the sensor file (``sensors.yaml``, or ``--config``; the game's ``sensors.json`` works too),
4. the vehicle overlay (``sensors_polaris.yaml`` / ``sensors_maxxum.yaml``, or
   ``--vehicle-config``),
5. command-line overrides.

Files are ROS 2 parameter files (``/**: ros__parameters:`` with the dotted key
names nested), plain nested YAML, or JSON with the same nesting.  Every layer is
checked key by key against the schema; the first mistake stops with one
:class:`ConfigError` naming the key, the value, the limit and the file.
"""

from dataclasses import dataclass
import json
import os
from pathlib import Path
import sys
from types import MappingProxyType
from typing import Any, Mapping, Optional

import yaml

from acres_sim.config.render import describe_keys, params_yaml, unit_of
from acres_sim.config.schema import KEY_NAMES, KEYS
from acres_sim.config.validate import (ConfigError, check_config, check_value,
                                       parse_outage, unknown_key)

__all__ = ['Config', 'RIGS', 'config_dir', 'load_config', 'read_layer', 'resolve']

PACKAGE = 'acres_sim'
RIGS = {'polaris': 'sensors_polaris.yaml', 'maxxum': 'sensors_maxxum.yaml'}
OUTAGES = 'gnss.corrections.outages_s'
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


def read_layer(path) -> dict:
    """The keys one file sets, checked and in normal form (dotted name -> value)."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding='utf-8')
    except OSError as err:
        raise ConfigError(f'cannot read config file {source}: {err.strerror}') from None
    try:
        tree = json.loads(text) if path.suffix == '.json' else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as err:
        kind = 'JSON' if path.suffix == '.json' else 'YAML'
        raise ConfigError(f'{source} is not valid {kind}: '
                          + ' '.join(str(err).split())) from None
    if tree is None:
        return {}
    if not isinstance(tree, dict):
        raise ConfigError(f'{source}: expected a mapping of keys at the top, '
                          f'got {type(tree).__name__}')
    raw = _flatten(_parameters(tree, source), '', source, {})
    return {name: check_value(name, value, source) for name, value in raw.items()}


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
    none) unless ``overlay_file`` is given.  ``overrides`` are command-line values
    by key; ``add_outages`` are extra 'START:END' correction outages appended to
    the configured ones (the spec's -SensorGnssOutage=, repeatable).
    """
    if rig is not None and rig not in RIGS:
        raise ConfigError(f"unknown rig '{rig}'; allowed: {' or '.join(RIGS)}")
    files = [site_file or config_dir() / 'site.yaml',
             config_file or config_dir() / 'sensors.yaml']
    if overlay_file or rig:
        files.append(overlay_file or config_dir() / RIGS[rig])
    layers = [(str(f), read_layer(f)) for f in files]
    command_line = {name: check_value(name, value, 'command line')
                    for name, value in (overrides or {}).items()}
    if add_outages:
        base = command_line.get(OUTAGES) or resolve(layers)[OUTAGES]
        command_line[OUTAGES] = base + [parse_outage(o, 'command line') for o in add_outages]
    layers.append(('command line', command_line))
    return resolve(layers)
