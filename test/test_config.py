"""The configuration schema, the packaged files and the loader.

References: the spec's parameter tables, transcribed independently into
``test/data/sensors.json`` and ``sensors_polaris.json`` (the game's own layout)
and into the tables below.
"""

import json
from pathlib import Path

import pytest
import yaml

from acres_sim.config import KEYS, ConfigError, config_dir, key, load_config, read_layer
from acres_sim.config.loader import packaged_keys, packaged_notice
from acres_sim.config.render import params_yaml

DATA = Path(__file__).parent / 'data'

# spec: INS parameters, column "Code" (the defaults without the ins block).
INS_CODE_DEFAULTS = {
    'ins.enabled': False, 'ins.hz': 100.0, 'ins.position_flu_m': [0.0, 0.0, 0.0],
    'ins.position_sigma_m': 0.01, 'ins.position_tau_s': 30.0, 'ins.position_white_m': 0.003,
    'ins.heading_sigma_deg': 0.1, 'ins.attitude_sigma_deg': 0.03,
    'ins.velocity_white_mps': 0.01, 'ins.accel_white_mps2': 0.02,
    'ins.gyro_white_radps': 0.0005, 'ins.frame': 'nad83', 'ins.utm_zone': 16,
}

# spec: the ranges it states, as (key, lowest allowed, highest allowed).
SPEC_RANGES = [
    ('delay_s', 0.0, 10.0), ('gnss.hz', 1.0, 120.0), ('imu.hz', 1.0, 120.0),
    ('ins.hz', 1.0, 120.0), ('gnss.elevation_mask_deg', 0.0, 45.0),
    ('gnss.rtk.reacquire_factor', 0.0, 1.0), ('gnss.corrections.baseline_km', 0.0, 200.0),
    ('ins.utm_zone', 1, 60), ('gnss.rtk.min_clear_satellites', 4, None),
    ('gnss.rtk.float_min_satellites', 4, None),
]


def flat(tree, prefix=''):
    out = {}
    for name, value in tree.items():
        full = f'{prefix}.{name}' if prefix else name
        out.update(flat(value, full) if isinstance(value, dict) else {full: value})
    return out


def test_schema_has_every_spec_key_with_its_default():
    spec = flat(json.loads((DATA / 'sensors.json').read_text()))
    spec.update(INS_CODE_DEFAULTS)
    schema = {k.name: k.default for k in KEYS if k.spec}
    assert set(schema) == set(spec)
    for name, value in spec.items():
        assert schema[name] == pytest.approx(value), name


def test_polaris_column_matches_the_overlay_file_and_the_games_json():
    game = flat(json.loads((DATA / 'sensors_polaris.json').read_text()))
    packaged = read_layer(config_dir() / 'sensors_polaris.yaml')
    assert set(packaged) == set(game)
    for name, value in game.items():
        assert packaged[name] == pytest.approx(value), name
        expected = key(name).polaris if key(name).polaris is not None else key(name).default
        assert value == pytest.approx(expected), name


def test_the_polaris_equipment_turns_the_dual_antenna_heading_on():
    """The Polaris alone has the heading (a fore-aft roof baseline of 1.0 m);
    GST and GPSFix are on for every rig (schema defaults)."""
    equipment = read_layer(config_dir() / 'equipment_polaris.yaml')
    assert {n: v for n, v in equipment.items() if n.startswith('gnss.')} == {
        'gnss.heading.enabled': True, 'gnss.heading.secondary_antenna_flu_m': [0.1, 0.0, 2.15]}
    polaris, maxxum = load_config(rig='polaris'), load_config(rig='maxxum')
    assert polaris['gnss.heading.enabled'] and not maxxum['gnss.heading.enabled']
    for config in (polaris, maxxum):
        assert config['gnss.nmea.gst'] and config['gnss.gpsfix']
    arm, secondary = polaris['gnss.antenna_flu_m'], polaris['gnss.heading.secondary_antenna_flu_m']
    assert [a - b for a, b in zip(secondary, arm)] == pytest.approx([-1.0, 0.0, 0.0])


def test_a_heading_baseline_shorter_than_10_cm_is_refused():
    with pytest.raises(ConfigError, match='gnss.heading.secondary_antenna_flu_m.*0.05 m'):
        load_config(rig='polaris', overrides={
            'gnss.heading.secondary_antenna_flu_m': [1.15, 0.0, 2.15]})
    load_config(rig='polaris', overrides={'gnss.heading.enabled': False,
                                          'gnss.heading.secondary_antenna_flu_m': [1.1, 0, 2.15]})


def test_packaged_defaults_equal_the_schema_and_the_games_json():
    packaged = load_config(rig=None)
    game = load_config(rig=None, config_file=DATA / 'sensors.json')
    for k in KEYS:
        assert packaged[k.name] == pytest.approx(k.default), k.name
        assert game[k.name] == packaged[k.name], k.name


def test_game_json_with_polaris_overlay_equals_packaged_polaris():
    """The game's files give the packaged Polaris, but for its equipment:
    acres_sim's further sensors, which the game does not have."""
    game = load_config(config_file=DATA / 'sensors.json',
                       overlay_file=DATA / 'sensors_polaris.json')
    packaged = load_config(rig='polaris')
    equipment = read_layer(config_dir() / 'equipment_polaris.yaml')
    assert equipment and all(not key(name).spec for name in equipment)
    assert {n: v for n, v in game.values.items() if n not in equipment} == \
        {n: v for n, v in packaged.values.items() if n not in equipment}
    assert {n: packaged[n] for n in equipment} == equipment
    # the game's files with the packaged equipment: the packaged Polaris exactly
    with_equipment = load_config(config_file=DATA / 'sensors.json',
                                 overlay_file=DATA / 'sensors_polaris.json', rig='polaris')
    assert with_equipment.values == packaged.values


def test_maxxum_has_the_ins_at_base_footprint_with_code_defaults():
    """Spec: the Maxxum has no sensor overlay; it gets the INS (with the code
    defaults), its antenna and IMU the defaults of sensors.json."""
    assert read_layer(config_dir() / 'sensors_maxxum.yaml') == {'ins.enabled': True}
    maxxum = load_config(rig='maxxum')
    assert maxxum['ins.enabled'] is True
    assert maxxum['mount_frame'] == 'chassis'
    assert maxxum['gnss.antenna_flu_m'] == [0.0, 0.0, 1.7]
    assert maxxum['imu.position_flu_m'] == [0.0, 0.0, 0.0]
    for name, value in INS_CODE_DEFAULTS.items():
        if name != 'ins.enabled':
            assert maxxum[name] == value, name


@pytest.mark.parametrize('how', ['overlay_file', 'config_file'])
def test_the_optional_maxxum_cab_overlay_sets_the_estimated_mounts(how):
    cab = load_config(rig='maxxum', **{how: config_dir() / 'sensors_maxxum_cab.yaml'})
    assert cab['mount_frame'] == 'base_footprint' and cab['ins.enabled'] is True
    assert cab['gnss.antenna_flu_m'] == [0.9, 0.0, 2.95]
    assert cab['imu.position_flu_m'] == [0.3, 0.0, 1.2]
    assert cab['ins.position_flu_m'] == [0.0, 0.0, 0.0]


@pytest.mark.parametrize('name, low, high', SPEC_RANGES)
def test_spec_ranges_are_enforced(name, low, high):
    is_int = key(name).kind == 'int'
    step = 1 if is_int else 1e-9
    load_config(overrides={name: low})
    with pytest.raises(ConfigError, match=name):
        load_config(overrides={name: low - step})
    if high is not None:
        load_config(overrides={name: high})
        with pytest.raises(ConfigError, match='out of range'):
            load_config(overrides={name: high + step})


def test_at_least_one_constellation():
    off = {f'gnss.constellations.{s}': False for s in ('gps', 'galileo', 'glonass')}
    with pytest.raises(ConfigError, match='at least one'):
        load_config(overrides=off)
    off['gnss.constellations.glonass'] = True
    assert load_config(overrides=off)['gnss.constellations.glonass']


def test_layers_apply_in_order_and_record_their_source(tmp_path):
    sensors = tmp_path / 'mine.yaml'
    sensors.write_text('/**:\n  ros__parameters:\n    gnss:\n      hz: 5.0\n    seed: 1\n')
    config = load_config(rig='polaris', config_file=sensors, overrides={'seed': 9})
    assert config['gnss.hz'] == 5.0 and config.sources['gnss.hz'] == str(sensors)
    assert config['seed'] == 9 and config.sources['seed'] == 'command line'
    assert config['ins.enabled'] is True  # from the overlay
    # a replaced sensors file drops the packaged one entirely
    assert config.sources['imu.hz'] == 'default'


def test_outages_accept_pairs_and_strings_and_append_from_the_command_line(tmp_path):
    path = tmp_path / 's.json'
    path.write_text(json.dumps({'gnss': {'corrections': {'outages_s': [[10, 20]]}}}))
    config = load_config(config_file=path, add_outages=['30:45.5'])
    assert config['gnss.corrections.outages_s'] == [[10.0, 20.0], [30.0, 45.5]]
    strings = tmp_path / 's.yaml'
    strings.write_text(params_yaml(config.values))
    assert read_layer(strings)['gnss.corrections.outages_s'] == [[10.0, 20.0], [30.0, 45.5]]


@pytest.mark.parametrize('outage', ['10-20', '20:10', '5:5', '-1:3', 'a:b', '1:2:3', ':',
                                    '100:1e20'])
def test_malformed_outages_are_refused(outage):
    with pytest.raises(ConfigError, match='outages_s') as err:
        load_config(add_outages=[outage])
    assert repr(outage) in str(err.value)


@pytest.mark.parametrize('text, fragments', [
    ('gnss:\n  hz: 200\n', ['gnss.hz = 200', 'out of range', '1 to 120 Hz', 'bad.yaml']),
    ('gnss:\n  hzz: 5\n', ["unknown key 'gnss.hzz'", "did you mean 'gnss.hz'", 'bad.yaml']),
    ('imu:\n  enabled: "yes"\n', ['imu.enabled', 'expected true or false']),
    ('seed: 4.5\n', ['seed = 4.5', 'expected an integer']),
    ('seed: true\n', ['seed = True', 'expected an integer']),
    ('gnss:\n  antenna_flu_m: [1, 2]\n', ['gnss.antenna_flu_m', 'list of 3 numbers']),
    ('gnss:\n  start: warm\n', ["gnss.start = 'warm'", 'converged or cold']),
    ('gnss:\n  datum:\n    start_utc: "2026-09-23 15:00"\n', ['start_utc', 'ISO 8601']),
    ('gnss: 5\n', ["'gnss'", 'group of keys']),
    ('gnss:\n  hz:\n    a: 1\n', ['gnss.hz', 'expected a number']),
    ('- 1\n- 2\n', ['bad.yaml', 'mapping']),
    ('gnss: [\n', ['bad.yaml', 'not valid YAML']),
    ('/**:\n  ros__parameters:\n    seed: 1\nsim_node:\n  ros__parameters: {}\n',
     ["'/**' section", 'sim_node']),
    ('/**: 5\nsim_node:\n  ros__parameters: {}\n', ["'/**' section", 'sim_node']),
    ('/**:\n  ros__parameters: 5\n', ['ros__parameters must be a mapping']),
    ('ins:\n  hz: .nan\n', ['ins.hz', 'finite']),
])
def test_bad_files_give_one_clear_message(tmp_path, text, fragments):
    path = tmp_path / 'bad.yaml'
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(config_file=path)
    message = str(err.value)
    assert '\n' not in message
    for fragment in fragments:
        assert fragment in message


def test_missing_file_and_unknown_rig():
    with pytest.raises(ConfigError, match='cannot read config file .*nowhere.yaml'):
        load_config(config_file='nowhere.yaml')
    with pytest.raises(ConfigError, match="unknown rig 'tractor'"):
        load_config(rig='tractor')


def test_emitted_parameter_file_reads_back_equal(tmp_path):
    config = load_config(rig='polaris', add_outages=['1:2'],
                         overrides={'gnss.datum.geoid.dn_de': 1e-05, 'seed': 2**40})
    path = tmp_path / 'out.yaml'
    path.write_text(config.to_params_yaml('sources'))
    assert read_layer(path) == config.values
    # plain PyYAML sees floats as floats (1e-05 needs a dot in YAML 1.1)
    tree = yaml.safe_load(path.read_text())['/**']['ros__parameters']
    assert isinstance(tree['gnss']['datum']['geoid']['dn_de'], float)


def test_site_file_wins_over_the_datum_keys_of_a_sensor_file(tmp_path):
    site = tmp_path / 'site.yaml'
    site.write_text('/**:\n  ros__parameters:\n    gnss:\n      datum:\n'
                    '        start_utc: "2030-01-01T00:00:00Z"\n')
    config = load_config(config_file=DATA / 'sensors.json', site_file=site)
    assert config['gnss.datum.start_utc'] == '2030-01-01T00:00:00Z'
    assert config.sources['gnss.datum.start_utc'] == str(site)
    # the game's sensors.json sets the geoid too: a complete configuration, so the
    # packaged site.yaml only fills in what it leaves out (the tile's origin)
    game = load_config(config_file=DATA / 'sensors.json')
    assert game.sources['gnss.datum.geoid.n0_m'] == str(DATA / 'sensors.json')
    assert game.sources['site.origin_source_ft'] == str(config_dir() / 'site.yaml')


# A user's complete configuration that also sets keys of the packaged Polaris
# overlay (mount_frame, the antenna) and of site.yaml (the datum's start time).
USER_CONFIG = """/**:
  ros__parameters:
    mount_frame: "chassis"
    gnss:
      hz: 5.0
      antenna_flu_m: [0.0, 0.5, 1.9]
      datum:
        start_utc: "2031-05-01T08:00:00Z"
"""
USER_KEYS = {'mount_frame': 'chassis', 'gnss.hz': 5.0, 'gnss.antenna_flu_m': [0.0, 0.5, 1.9],
             'gnss.datum.start_utc': '2031-05-01T08:00:00Z'}


@pytest.mark.parametrize('rig', ['polaris', 'maxxum'])
def test_a_config_file_is_complete_the_packaged_files_only_fill_in(tmp_path, rig):
    """--config (the spec's -SensorConfig=): no packaged file overrides a key it
    sets; the packaged overlay and site.yaml set the keys it does not."""
    path = tmp_path / 'mine.yaml'
    path.write_text(USER_CONFIG)
    config = load_config(rig=rig, config_file=path)
    for name, value in USER_KEYS.items():
        assert config[name] == value and config.sources[name] == str(path), name
    for packaged in (config_dir() / f'sensors_{rig}.yaml', config_dir() / 'site.yaml'):
        for name, value in read_layer(packaged).items():
            if name not in USER_KEYS:
                assert config[name] == value and config.sources[name] == str(packaged), name
    # a packaged sensors.yaml takes no part: the schema's defaults fill the rest
    assert config.sources['imu.hz'] == 'default'


def test_files_and_options_the_user_gives_still_apply_over_a_config_file(tmp_path):
    """--site and --vehicle-config are the user's choice too: they win as before,
    and the command line wins over every file."""
    path = tmp_path / 'mine.yaml'
    path.write_text(USER_CONFIG)
    site = tmp_path / 'site.yaml'
    site.write_text('/**:\n  ros__parameters:\n    gnss:\n      datum:\n'
                    '        start_utc: "2032-01-01T00:00:00Z"\n')
    config = load_config(rig='polaris', config_file=path, site_file=site,
                         overlay_file=DATA / 'sensors_polaris.json', overrides={'gnss.hz': 2.0})
    assert config['gnss.datum.start_utc'] == '2032-01-01T00:00:00Z'
    assert config['mount_frame'] == 'base_footprint'                # the game's overlay
    assert config.sources['mount_frame'] == str(DATA / 'sensors_polaris.json')
    assert config['gnss.hz'] == 2.0 and config.sources['gnss.hz'] == 'command line'
    # without a config file of the user's, the packaged files apply in their order
    assert load_config(rig='polaris')['mount_frame'] == 'base_footprint'


def test_the_notice_names_each_packaged_file_and_how_many_keys_it_set(tmp_path):
    path = tmp_path / 'mine.yaml'
    path.write_text(USER_CONFIG)
    overlay = read_layer(config_dir() / 'sensors_polaris.yaml')
    site = read_layer(config_dir() / 'site.yaml')
    equipment = read_layer(config_dir() / 'equipment_polaris.yaml')
    config = load_config(rig='polaris', config_file=path)
    notice = packaged_notice(str(path), config)
    n_overlay = len(set(overlay) - set(USER_KEYS))
    n_site = len(set(site) - set(USER_KEYS))
    n_equipment = len(set(equipment) - set(USER_KEYS))
    assert notice.startswith(f'mine.yaml leaves {n_overlay + n_site + n_equipment} keys to '
                             'packaged files: ')
    assert f'site.yaml {n_site} (' in notice and f'sensors_polaris.yaml {n_overlay} (' in notice
    assert f'equipment_polaris.yaml {n_equipment} (' in notice
    assert 'mount_frame' not in notice and '\n' not in notice
    assert packaged_keys(config) == {
        'site.yaml': [k.name for k in KEYS if k.name in site and k.name not in USER_KEYS],
        'sensors_polaris.yaml': [k.name for k in KEYS
                                 if k.name in overlay and k.name not in USER_KEYS],
        'equipment_polaris.yaml': [k.name for k in KEYS
                                   if k.name in equipment and k.name not in USER_KEYS]}
    assert packaged_notice(None, config) is None                 # no config file of the user's
    # a file that sets every key the packaged files would: nothing to say
    everything = tmp_path / 'all.yaml'
    everything.write_text(load_config(rig='polaris').to_params_yaml())
    assert packaged_notice(str(everything),
                           load_config(rig='polaris', config_file=everything)) is None


def test_added_outages_extend_the_last_layer_that_sets_them(tmp_path):
    path = tmp_path / 's.json'
    path.write_text(json.dumps({'gnss': {
        'corrections': {'outages_s': [[10, 20]]},
        'constellations': {'gps': False, 'galileo': False, 'glonass': False}}}))
    config = load_config(config_file=path, overrides={'gnss.constellations.gps': True},
                         add_outages=['30:40'])
    assert config['gnss.corrections.outages_s'] == [[10.0, 20.0], [30.0, 40.0]]
    cleared = load_config(config_file=path, add_outages=['30:40'], overrides={
        'gnss.constellations.gps': True, 'gnss.corrections.outages_s': []})
    assert cleared['gnss.corrections.outages_s'] == [[30.0, 40.0]]


def params_file(tmp_path, body):
    path = tmp_path / 'params.yaml'
    path.write_text('/**:\n  ros__parameters:\n' + body)
    return path


@pytest.mark.parametrize('body, fragment', [
    ('    gnss:\n      hz: 10\n', 'gnss.hz = 10'),
    ('    gnss:\n      antenna_flu_m: [0, 0, 1.7]\n', '(0.0, not 0)'),
    ('    gnss:\n      corrections:\n        outages_s: [[1.0, 2.0]]\n', 'as strings'),
])
def test_parameter_files_are_held_to_what_rcl_accepts(tmp_path, body, fragment):
    with pytest.raises(ConfigError, match='parameter file') as err:
        read_layer(params_file(tmp_path, body))
    assert fragment in str(err.value)
    plain = tmp_path / 'plain.yaml'  # the same keys outside a parameter file are fine
    plain.write_text('\n'.join(line[4:] for line in body.splitlines()) + '\n')
    read_layer(plain)


def test_yaml_scalars_are_read_as_rcl_reads_them(tmp_path):
    layer = read_layer(params_file(tmp_path, '    gnss:\n      datum:\n'
                                   '        start_utc: 2026-09-23T15:00:00Z\n'
                                   '        geoid:\n          dn_de: 1e-05\n'))
    assert layer['gnss.datum.start_utc'] == '2026-09-23T15:00:00Z'
    assert layer['gnss.datum.geoid.dn_de'] == 1e-05


@pytest.mark.parametrize('content, fragment', [
    (b'\xff\xfe\x00gnss', 'not a text file'),
    (b'[' * 100_000, 'not valid JSON'),
])
def test_unreadable_content_is_a_config_error(tmp_path, content, fragment):
    path = tmp_path / 'bad.json'
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=fragment):
        read_layer(path)


@pytest.mark.parametrize('stamp', ['0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00',
                                   '2026-09-23T15:00:00', '2026-13-01T00:00:00Z', ''])
def test_start_times_outside_iso_8601_utc_are_refused(stamp):
    with pytest.raises(ConfigError, match='gnss.datum.start_utc'):
        load_config(overrides={'gnss.datum.start_utc': stamp})


ODD_YAML = ['a: 2026-09-23T15:00:00Z\nb: 1e-05\nc: .5E+3\nd: 0x1f\ne: ~\nf: "*"\n',
            'a: [1, {b: yes, c: no}]\n# * in a comment\n', 'a: 1\na: 2\n',
            'a: &x [1]\nb: *x\n', 'gnss: [\n', 'a: {b: 1, b: 2}\n', '"*": 1\n']


@pytest.mark.parametrize('text', ODD_YAML + [None])
def test_libyaml_reads_every_file_as_pyyamls_own_parser(text):
    """Config files are read with libyaml's parser (where PyYAML has it): the
    same values and the same refusals as with PyYAML's pure-Python one, for
    every packaged file (None) and for odd documents."""
    from acres_sim.config.loader import _rcl_like_loader, parse_yaml

    if not yaml.__with_libyaml__:
        pytest.skip('this PyYAML has no libyaml: the pure-Python parser is the only one')
    texts = ([p.read_text() for p in sorted(config_dir().rglob('*.yaml'))]
             if text is None else [text])

    def read(text, loader):
        try:
            return parse_yaml(text, loader)
        except yaml.YAMLError as err:
            return type(err), err.problem_mark.line, err.problem_mark.column

    pure, fast = _rcl_like_loader(yaml.SafeLoader), _rcl_like_loader(yaml.CSafeLoader)
    for doc in texts:
        assert read(doc, fast) == read(doc, pure), doc
