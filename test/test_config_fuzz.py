"""Property-based tests: whatever a config file holds, the loader returns a
valid configuration or raises ConfigError with a one-line message; nothing else."""

import datetime
import json
from pathlib import Path
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st
import yaml

from acres_sim.config import KEY_NAMES, KEYS, ConfigError, resolve
from acres_sim.config.loader import read_layer
from acres_sim.config.validate import check_value

DEFAULTS = {k.name: k.default for k in KEYS}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**1100, max_value=2**1100),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(['converged', 'cold', 'nad83', 'wgs84_g2139', 'chassis', '10:20', '3:1',
                     '2026-01-01T00:00:00Z', '2026-01-01T00:00:00',
                     '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00']),
    st.datetimes(timezones=st.just(datetime.timezone.utc)), st.dates())
values = st.one_of(
    scalars,
    st.lists(st.one_of(st.integers(-5, 5), st.floats(-1e3, 1e3), st.text(max_size=4)),
             max_size=4),
    st.lists(st.lists(st.floats(-10, 100), min_size=1, max_size=3), max_size=3),
    st.dictionaries(st.text(max_size=6), st.integers(), max_size=2))
key_names = st.one_of(st.sampled_from(KEY_NAMES),
                      st.sampled_from(KEY_NAMES).map(lambda n: n + 'x'),
                      st.text(alphabet='abcgnsimu._', min_size=1, max_size=15))


def nest(flat):
    """Dotted names -> nested dicts; a later name that collides replaces the earlier one."""
    tree = {}
    for name, value in flat.items():
        *groups, leaf = name.split('.')
        node = tree
        for group in groups:
            if not isinstance(node.get(group), dict):
                node[group] = {}
            node = node[group]
        node[leaf] = value
    return tree


def load_text(text, suffix):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f'config{suffix}'
        path.write_text(text, encoding='utf-8')
        return resolve([(str(path), read_layer(path))])


def outcome(text, suffix):
    """Run the loader; only a Config or a one-line ConfigError may come out."""
    try:
        config = load_text(text, suffix)
    except ConfigError as err:
        assert str(err) and '\n' not in str(err)
        return None
    for name in KEY_NAMES:  # every value is in its normal, checked form
        assert check_value(name, config[name]) == config[name]
    return config


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.dictionaries(key_names, values, max_size=6),
       removed=st.sets(st.sampled_from(KEY_NAMES), max_size=10),
       as_params_file=st.booleans(), as_json=st.booleans())
def test_mutated_configs_load_or_fail_cleanly(changes, removed, as_params_file, as_json):
    flat = {n: v for n, v in DEFAULTS.items() if n not in removed}
    flat.update(changes)
    tree = nest(flat)
    if as_params_file:
        tree = {'/**': {'ros__parameters': tree}}
    text = json.dumps(tree, default=str) if as_json else yaml.safe_dump(tree)
    config = outcome(text, '.json' if as_json else '.yaml')
    if config is not None:
        for name, value in changes.items():
            if name in KEY_NAMES:
                assert config[name] == check_value(name, value)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200), suffix=st.sampled_from(['.yaml', '.json']))
def test_arbitrary_text_loads_or_fails_cleanly(text, suffix):
    outcome(text, suffix)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(KEY_NAMES), value=values)
def test_single_values_are_checked_or_refused(name, value):
    try:
        normal = check_value(name, value, 'test')
    except ConfigError as err:
        assert str(err).startswith(name) and '\n' not in str(err)
    else:
        assert check_value(name, normal) == normal
