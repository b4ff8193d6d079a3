"""The acres-sim command line: options map to the spec's keys, output reloads,
user mistakes end in one line and exit status 2."""

import os
from pathlib import Path
import subprocess
import sys

import pytest

from acres_sim.cli import main
from acres_sim.config import config_dir, load_config, read_layer
from acres_sim.config.render import parameters_markdown

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / 'data'


def run_cli(*argv):
    """Run the installed console script in a fresh process (as a user does)."""
    exe = Path(sys.executable).with_name('acres-sim')
    return subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize('argv, name, value', [
    (['--seed', '7'], 'seed', 7),
    (['--delay', '0.2'], 'delay_s', 0.2),
    (['--gnss-hz', '5'], 'gnss.hz', 5.0),
    (['--imu-hz', '100'], 'imu.hz', 100.0),
    (['--no-gnss'], 'gnss.enabled', False),
    (['--no-imu'], 'imu.enabled', False),
    (['--no-ins'], 'ins.enabled', False),
    (['--no-noise'], 'noise', False),
    (['--gnss-start', 'cold'], 'gnss.start', 'cold'),
    (['--gnss-frame', 'nad83'], 'gnss.datum.output_frame', 'nad83'),
    (['--baseline-km', '12.5'], 'gnss.corrections.baseline_km', 12.5),
    (['--gnss-outage', '10:20', '--gnss-outage', '30:40'], 'gnss.corrections.outages_s',
     [[10.0, 20.0], [30.0, 40.0]]),
    (['--set', 'gnss.states.single.sigma_h_m=2.5'], 'gnss.states.single.sigma_h_m', 2.5),
    (['--config', str(DATA / 'sensors.json'), '--set', 'seed=3'], 'seed', 3),
    (['--rig', 'maxxum'], 'ins.velocity_white_mps', 0.01),
    (['--rig', 'none'], 'ins.enabled', False),
    (['--vehicle-config', str(DATA / 'sensors_polaris.json')], 'ins.enabled', True),
], ids=lambda v: ' '.join(map(str, v)) if isinstance(v, list) else str(v))
def test_each_option_sets_its_key(tmp_path, capsys, argv, name, value):
    assert main(['config', 'show', *argv]) == 0
    out = tmp_path / 'shown.yaml'
    out.write_text(capsys.readouterr().out)
    assert read_layer(out).get(name, load_config(rig=None)[name]) == value


def test_show_prints_every_key_that_reloads_to_the_same_config(tmp_path, capsys):
    assert main(['config', 'show', '--sources']) == 0
    out = tmp_path / 'shown.yaml'
    out.write_text(capsys.readouterr().out)
    shown = read_layer(out)
    expected = load_config(rig='polaris').values
    assert shown == {n: v for n, v in expected.items() if v != []}


@pytest.mark.parametrize('argv, fragments', [
    (['config', 'show', '--gnss-hz', '200'], ['gnss.hz = 200.0', '1 to 120 Hz']),
    (['config', 'show', '--seed', 'x'], ["seed = 'x'", 'expected an integer']),
    (['config', 'show', '--gnss-outage', '9'], ["'9'", 'START:END']),
    (['config', 'show', '--set', 'gnss.hzz=3'], ["did you mean 'gnss.hz'"]),
    (['config', 'show', '--set', 'novalue'], ['expected KEY=VALUE']),
    (['config', 'show', '--config', 'missing.yaml'], ['cannot read config file missing.yaml']),
    (['config', 'convert', 'missing.json'], ['cannot read config file missing.json']),
])
def test_user_mistakes_end_in_one_line_and_status_2(argv, fragments):
    result = run_cli(*argv)
    assert result.returncode == 2, result.stderr
    assert 'Traceback' not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('acres-sim: error: ')
    for fragment in fragments:
        assert fragment in lines[0]
    assert result.stdout == ''


def test_check_reports_each_file(tmp_path, capsys):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('imu:\n  hz: 0\n')
    packaged = ROOT / 'config'
    assert main(['config', 'check', str(packaged / 'sensors.yaml'),
                 str(packaged / 'sensors_polaris.yaml'), str(DATA / 'sensors.json')]) == 0
    assert main(['config', 'check', str(packaged / 'site.yaml'), str(bad)]) == 1
    out = capsys.readouterr().out
    assert 'site.yaml: ok' in out and 'bad.yaml: error: imu.hz = 0' in out


def test_convert_writes_the_yaml_equivalent(tmp_path):
    out = tmp_path / 'sensors.yaml'
    assert main(['config', 'convert', str(DATA / 'sensors.json'), '-o', str(out)]) == 0
    assert read_layer(out) == {n: v for n, v in read_layer(DATA / 'sensors.json').items()
                               if v != []}


def test_convert_of_a_bad_file_writes_nothing(tmp_path):
    bad = tmp_path / 'bad.json'
    bad.write_text('{"gnss": {"hz": 500}}')
    out = tmp_path / 'out.yaml'
    result = run_cli('config', 'convert', str(bad), '-o', str(out))
    assert result.returncode == 2 and 'gnss.hz = 500' in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_parameter_docs_are_current():
    assert (ROOT / 'docs' / 'parameters.md').read_text() == parameters_markdown(), \
        'regenerate with: acres-sim config docs -o docs/parameters.md'


def test_site_prints_the_origin(capsys):
    assert main(['site']) == 0
    out = capsys.readouterr().out
    assert '2977500.000 ft, 1902500.000 ft' in out and '2026-09-23T15:00:00Z' in out


@pytest.mark.requires_rclpy
@pytest.mark.parametrize('node', ['sim_node', 'gnss_node', 'imu_node'])
def test_node_executables_check_their_parameters(node, ros_domain_id):
    """The installed executables are the nodes: a bad value is one line, status 2."""
    exe = Path(sys.executable).with_name(node)
    result = subprocess.run([str(exe), '--ros-args', '-p', 'delay_s:=-1.0'] if node != 'sim_node'
                            else [str(exe), '--ros-args', '-p', 'agents.agent0.delay_s:=-1.0'],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert 'delay_s = -1.0' in result.stderr and 'Traceback' not in result.stderr


def test_up_prints_the_nodes_of_a_rig(capsys):
    assert main(['up', '--rig', 'mixed', '--print-nodes', '--seed', '9']) == 0
    out = capsys.readouterr().out
    processes = [line for line in out.splitlines() if line.startswith('# /')]
    assert len(processes) == 2 and processes[1].startswith('# /sensor_nodes: sensor_nodes, ')
    assert processes[1].count('_node.yaml') == 6
    assert '/maxxum2/imu_node in one process' in processes[1]
    assert out.count('# acres-sim up: parameters of /') == 7       # a file per node
    assert 'seed: 9' in out and 'ros__parameters' in out


def test_up_with_each_node_in_its_own_process_prints_every_node(capsys):
    assert main(['up', '--rig', 'mixed', '--print-nodes', '--sensor-processes', 'node']) == 0
    out = capsys.readouterr().out
    assert out.count('# /') == 7 and '# /maxxum2/imu_node: imu_node' in out
    assert 'acres_sim.ros.sensor_nodes' not in out


def test_up_with_a_namespace_prints_every_node_under_it(capsys):
    assert main(['up', '--rig', 'mixed', '--namespace', 'demo', '--print-nodes']) == 0
    out = capsys.readouterr().out
    assert out.count('# /demo/') == 2 and '/demo/maxxum2/imu_node' in out
    assert out.count('__ns:=/demo ') == 1 and out.count('__ns:=/demo\n') == 1   # sim, sensors
    assert '--node imu_node maxxum2/imu_node demo.maxxum2.imu_node.yaml' in out
    assert main(['up', '--rig', 'mixed', '--namespace', 'demo', '--print-nodes',
                 '--sensor-processes', 'node']) == 0
    out = capsys.readouterr().out
    assert out.count('# /demo/') == 7 and '# /demo/maxxum2/imu_node: imu_node' in out
    assert out.count('__ns:=/demo ') == 1 and '__ns:=/demo/maxxum2 ' in out


def user_config(tmp_path):
    """A config file of the user's that sets a key of the Polaris overlay."""
    path = tmp_path / 'mine.yaml'
    path.write_text('/**:\n  ros__parameters:\n    mount_frame: "chassis"\n')
    return path


def test_show_sources_says_which_keys_packaged_files_set_under_a_config_file(tmp_path, capsys):
    path = user_config(tmp_path)
    assert main(['config', 'show', '--sources', '--config', str(path)]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if 'packaged files' in line]
    assert len(notes) == 1 and notes[0].startswith('# mine.yaml leaves ') \
        and 'sensors_polaris.yaml' in notes[0] and 'site.yaml' in notes[0]
    assert f'mount_frame: "chassis"  # {path}' in out
    assert f'# US survey ft; {config_dir() / "site.yaml"}' in out   # origin_source_ft
    assert main(['config', 'show', '--sources']) == 0
    assert 'packaged files' not in capsys.readouterr().out


def test_up_says_which_keys_packaged_files_set_under_a_config_file(tmp_path, capsys):
    path = user_config(tmp_path)
    assert main(['up', '--rig', 'mixed', '--config', str(path), '--print-nodes']) == 0
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.startswith('acres-sim: note: mine.yaml leaves ')
    assert 'sensors_polaris.yaml' in err and 'sensors_maxxum.yaml' in err
    assert main(['up', '--rig', 'mixed', '--print-nodes']) == 0
    assert capsys.readouterr().err == ''


def test_record_says_which_keys_packaged_files_set_under_a_config_file(tmp_path, capsys):
    path = user_config(tmp_path)
    out = tmp_path / 'run'
    assert main(['record', '--duration', '0.5', '--out', str(out), '--no-progress',
                 '--config', str(path)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if 'note:' in line]
    assert len(notes) == 1 and notes[0].startswith('acres-sim: note: mine.yaml leaves ')
    assert 'sensors_polaris.yaml' in notes[0]


@pytest.mark.parametrize('args, message', [
    (['--namespace', 'de mo'], "namespace = 'de mo'; allowed:"),
    (['--set', 'gnss.hz=500'], 'gnss.hz = 500'),
    (['--rig', 'tank'], "unknown rig 'tank'"),
    (['--duration', '0'], '--duration 0: allowed 0 < S'),
    (['--agents', '2', '--rig', 'mixed'], 'has 3 vehicles'),
])
def test_up_refuses_bad_options_in_one_line(capsys, args, message):
    assert main(['up', *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith('acres-sim: error:') and err.count('\n') == 1


def test_check_applies_the_rules_across_keys(tmp_path, capsys):
    path = tmp_path / 'off.json'
    path.write_text('{"gnss": {"constellations": {"gps": false, "galileo": false, '
                    '"glonass": false}}}')
    assert main(['config', 'check', str(path)]) == 1
    assert 'all systems are off' in capsys.readouterr().out


def test_written_files_get_a_normal_mode(tmp_path):
    out = tmp_path / 'parameters.md'
    old = os.umask(0o022)
    try:
        assert main(['config', 'docs', '-o', str(out)]) == 0
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644


def test_record_and_up_take_a_vehicle_overlay_of_the_users(tmp_path):
    """--vehicle-config FILE (the spec's -PolarisSensorConfig=) replaces the
    packaged overlay: its keys apply, the packaged overlay's do not."""
    import json

    overlay = tmp_path / 'overlay.yaml'
    overlay.write_text('/**:\n  ros__parameters:\n    gnss:\n      hz: 5.0\n')
    out = tmp_path / 'run'
    assert main(['record', '--rig', 'polaris', '--duration', '2', '--out', str(out),
                 '--vehicle-config', str(overlay), '--no-progress']) == 0
    episode = json.loads((out / 'episode.json').read_text())
    assert episode['config']['gnss.hz'] == 5.0
    assert episode['config']['ins.hz'] == load_config(rig=None)['ins.hz']   # not the Polaris'
    times = [json.loads(line)['sample_time_s'] for line in (out / 'gnss.jsonl').open()]
    assert times[:3] == [0.0, 0.2, 0.4]
    from acres_sim.rig import RigOptions, rig_nodes
    gnss_node = next(n for n in rig_nodes('polaris', RigOptions(overlay_file=str(overlay)))
                     if n.executable == 'gnss_node')
    assert gnss_node.parameters['gnss.hz'] == 5.0

