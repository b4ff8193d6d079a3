"""Bad input that must not hurt: alias bombs, huge values, non-numbers, files
that are not files, duplicate keys, too many vehicles -- each ends in one short
line (status 2 at the command line), quickly and without a traceback."""

import json
import os
import re
from pathlib import Path
import resource
import subprocess
import sys
import textwrap

from hypothesis import given, settings, strategies as st
import pytest

from acres_sim.cli import build_parser, main
from acres_sim.config import ConfigError, load_config, read_layer
from acres_sim.config.validate import MESSAGE_MAX
from acres_sim.config.options import overrides_from_args
from acres_sim.config.scenario import read_scenario
from acres_sim.rig import MAX_AGENTS

# Every error line stays below this (a few hundred characters).
LINE_MAX = 500


def run_cli(*argv, timeout=120):
    exe = Path(sys.executable).with_name('acres-sim')
    return subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=timeout)


def one_error_line(result, prog=r'acres-sim( [a-z]+)*'):
    """The one line of a refused command (status 2, nothing on stdout) of ``prog``
    (a pattern)."""
    assert result.returncode == 2, (result.returncode, result.stderr[:2000])
    assert 'Traceback' not in result.stderr and result.stdout == ''
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and re.match(f'{prog}: error: ', lines[0]), result.stderr[:2000]
    assert len(lines[0]) <= LINE_MAX, len(lines[0])
    return lines[0]


# -- 1. files: alias bombs, duplicate keys, what is not a file -----------------

def laughs(*keys):
    """A billion laughs (9**9 strings from 9 lines) as the value of ``keys``."""
    items = ['&a [' + ','.join(['"lol"'] * 9) + ']']
    items += [f'&{c} [' + ','.join([f'*{p}'] * 9) + ']' for p, c in zip('abcdefg', 'bcdefgh')]
    items.append('[' + ','.join(['*h'] * 9) + ']')
    lines = [' ' * (2 * depth) + f'{name}:' for depth, name in enumerate(keys)]
    lines += [' ' * (2 * len(keys)) + f'- {item}' for item in items]
    return '\n'.join(lines) + '\n'


BOMBS = {   # file kind -> (where the laughs go, the call that reads such a file)
    'config': (('seed',), 'load_config(config_file=path)'),
    'parameter file': (('/**', 'ros__parameters', 'gnss', 'antenna_flu_m'),
                       'load_config(config_file=path)'),
    'site': (('site', 'origin_source_ft'), 'load_config(site_file=path)'),
    'overlay': (('ins', 'lever_arm_m'), "load_config(rig='polaris', overlay_file=path)"),
    'route': (('route', 'legs'), 'load_route(str(path))'),
    'scene': (('scene', 'buildings'), 'load_scene(path)'),
    'terrain': (('terrain', 'grid', 'heights_m'), 'load_terrain(str(path), 1)'),
    'vehicle': (('vehicle', 'mass_kg'), 'load_vehicle(str(path))'),
    'rig': (('vehicles',), 'read_scenario(str(path))'),
}

_READ_ONE = textwrap.dedent('''
    import sys
    from pathlib import Path
    from acres_sim.config import ConfigError, load_config
    from acres_sim.config.scene import load_scene
    from acres_sim.config.terrain import load_terrain
    from acres_sim.config.vehicles import load_vehicle
    from acres_sim.config.routes import load_route
    from acres_sim.config.scenario import read_scenario
    path = Path(sys.argv[1])
    try:
        {call}
    except ConfigError as err:
        print(err)
    else:
        print('accepted')
''')


def _small_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))   # 3 GiB: numba needs ~1


@pytest.mark.parametrize('kind', BOMBS)
def test_alias_bombs_are_refused_before_they_expand(tmp_path, kind):
    keys, call = BOMBS[kind]
    path = tmp_path / f'{kind.replace(" ", "_")}.yaml'
    path.write_text(laughs(*keys))
    assert path.stat().st_size < 600
    result = subprocess.run([sys.executable, '-c', _READ_ONE.format(call=call), str(path)],
                            capture_output=True, text=True, timeout=120,
                            preexec_fn=_small_address_space)
    assert result.returncode == 0, result.stderr[-2000:]
    message = result.stdout.strip()
    first_alias = f'line {len(keys) + 2}'    # the keys, the anchor &a, then *a
    assert 'alias' in message and str(path) in message and first_alias in message, message
    assert len(message) <= LINE_MAX


def test_anchors_alone_are_fine(tmp_path):
    path = tmp_path / 'anchored.yaml'
    path.write_text('gnss:\n  hz: &rate 5\n')
    assert read_layer(path) == {'gnss.hz': 5.0}


def test_a_fifo_is_refused_not_waited_for(tmp_path):
    fifo = tmp_path / 'config.yaml'
    os.mkfifo(fifo)
    line = one_error_line(run_cli('config', 'show', '--config', str(fifo), timeout=60))
    assert f'{fifo}' in line and 'not a regular file' in line
    line = one_error_line(run_cli('config', 'show', '--site', '/dev/zero', timeout=60))
    assert 'site file /dev/zero is not a regular file' in line


@pytest.mark.parametrize('name, text, fragment', [
    ('dup.yaml', 'seed: 1\ngnss:\n  hz: 5.0\nseed: 2\n', "key 'seed' twice"),
    ('dup.yaml', 'gnss:\n  hz: 5.0\n  imu: 1\n  hz: 6.0\n', 'line 4'),
    ('dup.yaml', '/**:\n  ros__parameters:\n    seed: 1\n    seed: 2\n', "key 'seed' twice"),
    ('dup.json', '{"seed": 1, "gnss": {"hz": 5.0, "hz": 6.0}}', "key 'hz' twice"),
])
def test_duplicate_keys_are_refused(tmp_path, name, text, fragment):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        read_layer(path)
    assert fragment in str(err.value) and str(path) in str(err.value)


def test_a_merge_key_is_not_a_duplicate(tmp_path):
    path = tmp_path / 'merge.yaml'
    path.write_text('gnss:\n  <<: {hz: 5.0}\n  hz: 6.0\n')
    assert read_layer(path) == {'gnss.hz': 6.0}


# -- 2. long values in messages -------------------------------------------------

@pytest.mark.parametrize('text, name', [
    ('gnss:\n  datum:\n    output_frame: "' + 'x' * 10_000_000 + '"\n',
     'gnss.datum.output_frame'),
    ('seed: ' + '9' * 4300 + '\n', 'seed'),
    ('gnss:\n  antenna_flu_m: [' + ', '.join(['1.5'] * 50_000) + ']\n', 'gnss.antenna_flu_m'),
])
def test_huge_values_give_a_short_line(tmp_path, text, name):
    path = tmp_path / 'huge.yaml'
    path.write_text(text)
    line = one_error_line(run_cli('config', 'show', '--config', str(path)))
    assert name in line and str(path) in line and 'allowed' in line


def test_huge_command_line_values_give_a_short_line():
    line = one_error_line(run_cli('config', 'show', '--seed', '7' * 4300))
    assert 'seed = 777' in line and 'out of range' in line
    line = one_error_line(run_cli('config', 'show', '--set', 'gnss.hzz' * 10_000 + '=1'))
    assert "unknown key 'gnss.hzz" in line


@given(st.text(max_size=2000))
def test_every_message_is_short_and_keeps_both_ends(text):
    shown = str(ConfigError(text))
    assert len(shown) <= MESSAGE_MAX
    if len(text) <= MESSAGE_MAX:
        assert shown == text
    else:
        assert shown.startswith(text[:150]) and shown.endswith(text[-150:])


def test_a_long_message_keeps_its_start_and_end():
    message = 'k = ' + 'v' * 100_000 + ' (in f.yaml): out of range; allowed: 1 to 2'
    shown = str(ConfigError(message))
    assert len(shown) <= LINE_MAX
    assert shown.startswith('k = vvv')
    assert shown.endswith('(in f.yaml): out of range; allowed: 1 to 2')
    assert 'characters left out' in shown


# -- 3. --set reads a value as a file does ------------------------------------------

@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 120.0), st.sampled_from(['{:e}', '{:g}', '{!r}', '{:.0e}', '{:E}']))
def test_set_reads_every_spelling_of_a_number_as_a_file_does(tmp_path_factory, hz, spelling):
    text = spelling.format(hz)
    path = tmp_path_factory.mktemp('set') / 'hz.yaml'
    path.write_text(f'gnss:\n  hz: {text}\n')
    from_file = read_layer(path).get('gnss.hz')
    args = build_parser().parse_args(['config', 'show', '--set', f'gnss.hz={text}'])
    assert overrides_from_args(args) == {'gnss.hz': from_file}


@pytest.mark.parametrize('name, text', [
    ('gnss.datum.start_utc', '2026-09-23T15:00:00Z'),
    ('gnss.hz', '1e1'),
    ('gnss.datum.geoid.dn_de', '1e-05'),
    ('gnss.hz', '10'),
    ('seed', '0x10'),
    ('gnss.antenna_flu_m', '[0.0, 1e-1, 1.7]'),
    ('gnss.corrections.outages_s', '["1:2", [3, 4e1]]'),
])
def test_set_takes_a_value_as_a_file_does(tmp_path, name, text):
    *groups, leaf = name.split('.')
    lines = [' ' * (2 * i) + f'{g}:' for i, g in enumerate(groups)]
    path = tmp_path / 'one.yaml'
    path.write_text('\n'.join(lines + [' ' * (2 * len(groups)) + f'{leaf}: {text}']) + '\n')
    from_file = read_layer(path)[name]
    args = build_parser().parse_args(['config', 'show', '--set', f'{name}={text}'])
    assert load_config(overrides=overrides_from_args(args))[name] == from_file


# -- 4. at most MAX_AGENTS vehicles in a rig ---------------------------------------

def test_a_rig_has_at_most_max_agents_vehicles(tmp_path):
    def rig(n):
        path = tmp_path / f'rig{n}.yaml'
        path.write_text(json.dumps({'vehicles': [
            {'name': f'v{i}', 'vehicle': 'maxxum', 'namespace': f'v{i}',
             'frame_prefix': f'v{i}/', 'parked': True} for i in range(n)]}))
        return path
    assert len(read_scenario(rig(MAX_AGENTS)).vehicles) == MAX_AGENTS
    with pytest.raises(ConfigError, match=f'500 vehicles; allowed 1 to {MAX_AGENTS}'):
        read_scenario(rig(500))
    line = one_error_line(run_cli('up', '--rig', str(rig(500)), '--print-nodes'))
    assert f'allowed 1 to {MAX_AGENTS}' in line


# -- 5. argparse: one line and a pointer to --help; -5:10 is a value ------------

def _commands(parser, prefix=()):
    """Every command of the parser, as argv prefixes (['config', 'show'], ...)."""
    subs = [a for a in parser._actions if a.__class__.__name__ == '_SubParsersAction']
    if not subs:
        yield list(prefix)
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _commands(child, (*prefix, name))


POSITIONALS = {'config check': ['a.yaml'], 'config convert': ['a.yaml'],
               'geo enu': ['1', '2', '3'], 'geo geodetic': ['40', '-87', '200'],
               'geo utm': ['5e5', '4.4e6', '200'], 'bag repair': ['runs/bag'],
               'inject': ['--clear', 'x'], 'evaluate': ['runs/p']}


@pytest.mark.parametrize('command', [' '.join(c) for c in _commands(build_parser())])
def test_usage_mistakes_are_one_line_with_a_pointer_to_help(capsys, command):
    with pytest.raises(SystemExit) as stop:
        main([*command.split(), *POSITIONALS.get(command, []), '--no-such-option'])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    prog = f'acres-sim {command}'
    assert captured.out == '' and captured.err.count('\n') == 1
    assert captured.err.startswith(f'{prog}: error: ')
    assert captured.err.rstrip().endswith(f'(see {prog} --help)')
    assert '--no-such-option' in captured.err


@pytest.mark.parametrize('argv, prog', [
    ([], 'acres-sim'),
    (['config'], 'acres-sim config'),
    (['record', '--agents', '7' * 5000], 'acres-sim record'),
    (['geo', 'enu', '1'], 'acres-sim geo enu'),
])
def test_missing_or_malformed_arguments_are_one_line(argv, prog):
    line = one_error_line(run_cli(*argv), re.escape(prog))
    assert line.endswith(f'(see {prog} --help)')


@pytest.mark.parametrize('argv', [['--gnss-outage', '-5:10'], ['--gnss-outage=-5:10']])
def test_a_negative_outage_is_a_range_error(argv):
    line = one_error_line(run_cli('config', 'show', *argv))
    assert "gnss.corrections.outages_s = '-5:10'" in line and '0 <= start' in line


def test_negative_numbers_are_values():
    args = build_parser().parse_args(['geo', 'enu', '-5', '-1e3', '-.5', '--t', '-1e3'])
    assert (args.e, args.n, args.u, args.t) == (-5.0, -1000.0, -0.5, -1000.0)


# -- 6. geo and site -----------------------------------------------------------------

@pytest.mark.parametrize('argv, fragment', [
    (['site', '--t', 'nan'], "--t: 'nan' is not a finite number"),
    (['site', '--t', '1e308'], '--t: 1e308 s is outside the episode times'),
    (['site', '--t=-inf'], "--t: '-inf' is not a finite number"),
    (['geo', 'enu', 'nan', 'nan', 'nan'], "argument e: 'nan' is not a finite number"),
    (['geo', 'enu', '0', '0', '0', '--t', '1e12'], '--t: 1e12 s is outside'),
    (['geo', 'geodetic', '40.4', '-87', 'inf'], "argument h: 'inf' is not a finite number"),
    (['geo', 'utm', '1e300', '0', '0'], 'E 1e+300 m, N 0 m: latitude nan'),
    (['geo', 'enu', '1e7', '1e7', '0'], 'give no point on the Earth'),
    (['geo', 'enu', '0', '0', '1e300'], 'give no point on the Earth'),
])
def test_geo_and_site_refuse_what_is_not_a_point(argv, fragment):
    line = one_error_line(run_cli(*argv))
    assert fragment in line, line


def test_geo_warns_far_from_the_projections_area():
    near = run_cli('geo', 'enu', '100', '200', '0')
    assert near.returncode == 0 and near.stderr == ''
    far = run_cli('geo', 'enu', '2e6', '0', '0')       # 2000 km east: near Bermuda
    assert far.returncode == 0 and 'nad83_2011' in far.stdout
    warnings = far.stderr.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith('acres-sim: warning: ')
    assert 'EPSG:2968' in warnings[0] and 'UTM zone 16' in warnings[0]
    other_zone = run_cli('geo', 'geodetic', '40.4', '-80.0', '200')
    assert other_zone.returncode == 0 and 'UTM zone 16' in other_zone.stderr
    assert 'EPSG:2968' in other_zone.stderr
    own_zone = run_cli('geo', 'geodetic', '40.4', '-80.0', '200', '--zone', '17')
    assert 'UTM' not in own_zone.stderr and 'EPSG:2968' in own_zone.stderr
