"""Configuration: the one schema, loading YAML/JSON layers, validation.

This is the only place that knows key names and their limits.
"""

from acres_sim.config.loader import RIGS, Config, config_dir, load_config, read_layer, resolve
from acres_sim.config.schema import KEY_NAMES, KEYS, Key, key
from acres_sim.config.validate import ConfigError

__all__ = ['Config', 'ConfigError', 'KEYS', 'KEY_NAMES', 'Key', 'RIGS', 'config_dir', 'key',
           'load_config', 'read_layer', 'resolve']
