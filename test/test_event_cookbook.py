"""The cookbook of docs/events.md: each packaged fault scenario, recorded,
does what its page says, and its report shades the event's intervals on every
panel over time and draws its zone on the map (the figure is checked by its
artists, the PNG by its header)."""

import json
from pathlib import Path

import pytest
import yaml

from acres_sim.config.loader import config_dir
from acres_sim.record import runner
from acres_sim.record.report import draw_pages, write_pages
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

PNG_HEADER = b'\x89PNG\r\n\x1a\n'
# GNSS and INS error, satellites, IMU force and rate, fix state
TIME_PANELS = 6
FURTHER_FILES = ('barometer.jsonl', 'magnetometer.jsonl', 'wheel_odometry.jsonl', 'radar.jsonl')


@pytest.fixture(scope='module')
def figures():
    """The report figures drawn while this module records, by output folder
    (drawn in this process, where the recorder has its report process draw them)."""
    drawn = {}

    class Capture:
        def start_drawing(self, path, pages, scene, title, lock=None):
            drawn['last'] = draw_pages(pages, scene, title=title)[0]
            write_pages(path, pages, scene, title=title)

        def wait_drawn(self):
            pass

        def close(self):
            pass

    patch = pytest.MonkeyPatch()
    patch.setattr(runner, 'ReportProcess', Capture)
    yield drawn
    patch.undo()


def recorded(name, tmp_path_factory, figures, options=RigOptions()):
    out = tmp_path_factory.mktemp(name) / 'run'
    record(RecordRequest(name, out, options, progress=False))
    rows = {f: [json.loads(line) for line in (out / f'{f}.jsonl').open()]
            for f in ('gnss', 'imu', 'truth')}
    return out, rows, figures.pop('last')


def spans(figure, gid):
    """(axes, patch) of every artist with ``gid`` in the figure."""
    return [(ax, p) for ax in figure.axes for p in ax.patches if p.get_gid() == gid]


def check_report(out, figure, event, active_s, zone=None):
    """The PNG is whole; each interval of ``event`` is a band over each time panel, from
    its start to its end; the zone (if any) is on the map."""
    assert (out / 'report.png').read_bytes()[:8] == PNG_HEADER
    bands = spans(figure, f'event:{event}')
    # and one panel per further sensor the vehicle carries (barometer, ...: its files)
    further = [name for name in FURTHER_FILES if (out / name).is_file()]
    panels = [ax for ax in figure.axes if ax.get_xlabel() == 'time [s]']
    assert further and len(panels) == TIME_PANELS + len(further)
    assert len(bands) == len(panels) * len(active_s)
    for _ax, patch in bands:
        start, end = patch.get_x(), patch.get_x() + patch.get_width()
        assert any(abs(start - a) < 1e-9 and (b is None or abs(end - b) < 1e-9)
                   for a, b in active_s), (start, end, active_s)
    if zone is not None:
        assert len(spans(figure, f'zone:{zone}')) == 1


def intervals(out, event):
    episode = json.loads((out / 'episode.json').read_text())
    return next(e['active_s'] for e in episode['vehicles'][0]['events'] if e['name'] == event)


def test_under_the_tree_line_the_west_sky_is_gone(tmp_path_factory, figures):
    out, rows, figure = recorded('tree_line', tmp_path_factory, figures)
    scenario = yaml.safe_load((config_dir() / 'scenarios' / 'tree_line.yaml').read_text())
    x0, y0 = scenario['zones']['tree_line']['polygon'][0]
    x1, y1 = scenario['zones']['tree_line']['polygon'][2]
    inside = [r for r in rows['truth']
              if x0 <= r['chassis']['position_enu_m'][0] <= x1
              and y0 <= r['chassis']['position_enu_m'][1] <= y1]
    named = [r for r in rows['truth'] if 'west_trees' in r.get('events', [])]
    assert inside and [r['time_s'] for r in inside] == [r['time_s'] for r in named]
    under = [r for r in rows['gnss'] if 'west_trees' in r.get('events', [])]
    before = [r for r in rows['gnss'] if r['sample_time_s'] < under[0]['sample_time_s']][-20:]
    assert min(r['satellites_blocked'] for r in under) > max(r['satellites_blocked']
                                                             for r in before)
    assert min(r['satellites_used'] for r in before) > max(r['satellites_used'] for r in under)
    active = intervals(out, 'west_trees')
    assert len(active) == 1
    check_report(out, figure, 'west_trees', active, zone='tree_line')


def test_rtk_corrections_lost_for_90_s_the_fix_falls_and_comes_back(tmp_path_factory, figures):
    out, rows, figure = recorded('rtk_outage', tmp_path_factory, figures)
    config = json.loads((out / 'episode.json').read_text())['vehicles'][0]['config']
    gnss = rows['gnss']
    during = [r for r in gnss if 120.0 <= r['sample_time_s'] < 210.0]
    # no message arrives: the age grows by the epoch interval, from the last one before
    ages = [r['correction_age_s'] for r in during]
    step = 1.0 / config['gnss.hz']
    assert all(abs(b - a - step) < 1e-9 for a, b in zip(ages, ages[1:]))
    for r in during:
        age = r['correction_age_s']
        expected = ('dgps' if age <= config['gnss.corrections.dgps_max_age_s'] else 'single') \
            if age > config['gnss.corrections.rtk_max_age_s'] else r['fix_type']
        assert r['fix_type'] == expected
    assert {'dgps', 'single'} <= {r['fix_type'] for r in during}
    after = [r for r in gnss if r['sample_time_s'] >= 230.0]
    assert after and all(r['fix_type'].startswith('rtk') for r in after)
    assert all(r['correction_age_s'] < 2.0 for r in after)
    check_report(out, figure, 'radio_loss', [[120.0, 210.0]])


def test_thirty_seconds_without_gnss_at_the_barn(tmp_path_factory, figures):
    out, rows, figure = recorded('barn_denial', tmp_path_factory, figures)
    [[start, end]] = intervals(out, 'barn')
    assert abs(end - start - 30.0) < 1e-9
    denied = [r for r in rows['gnss'] if start <= r['sample_time_s'] < end - 1e-9]
    assert len(denied) == 300 and all(r['fix_type'] == 'no_fix' and r['satellites_used'] == 0
                                      and r['position_enu_m'] is None for r in denied)
    assert all(r['events'] == ['barn'] for r in denied)
    first_in = next(r for r in rows['truth'] if r['chassis']['position_enu_m'][1] > -44.0
                    and r['chassis']['position_enu_m'][1] < -30.0
                    and 20.0 <= r['chassis']['position_enu_m'][0] <= 70.0)
    assert abs(first_in['time_s'] - start) <= 0.01 + 1e-9     # truth rows at 100 Hz
    later = [r for r in rows['gnss'] if r['sample_time_s'] >= end + 5.0]
    assert later and all(r['fix_type'] != 'no_fix' for r in later)
    check_report(out, figure, 'barn', [[start, end]], zone='barn_lane')


def test_an_imu_bias_step_adds_exactly_the_bias(tmp_path_factory, figures, tmp_path):
    out, rows, figure = recorded('imu_bias_step', tmp_path_factory, figures)
    plain = yaml.safe_load((config_dir() / 'scenarios' / 'imu_bias_step.yaml').read_text())
    bias = plain.pop('events')[0]
    (tmp_path / 'plain.yaml').write_text(yaml.safe_dump(plain))
    record(RecordRequest(str(tmp_path / 'plain.yaml'), tmp_path / 'plain', progress=False))
    base = [json.loads(line) for line in (tmp_path / 'plain' / 'imu.jsonl').open()]
    assert len(base) == len(rows['imu'])
    for a, b in zip(rows['imu'], base):
        if a['sample_time_s'] < 60.0:
            assert a == b
            continue
        for got, was, add in zip(a['specific_force_flu_mps2'], b['specific_force_flu_mps2'],
                                 bias['accel_mps2']):
            assert abs(got - was - add) <= 1.01e-6
        for got, was, add in zip(a['angular_velocity_flu_radps'],
                                 b['angular_velocity_flu_radps'], bias['gyro_radps']):
            assert abs(got - was - add) <= 1.01e-8
    check_report(out, figure, 'bias_step', [[60.0, None]])


def test_the_key_tables_of_docs_events_are_current():
    from acres_sim.config.render import event_tables_markdown

    text = (Path(__file__).resolve().parents[1] / 'docs' / 'events.md').read_text()
    tables = event_tables_markdown()
    assert text.endswith(tables), 'regenerate the tables at the end of docs/events.md with ' \
        'acres_sim.config.render.event_tables_markdown()'


@pytest.mark.parametrize('j_over_s_db, tracked', [(30.0, True), (33.0, False)])
def test_the_jamming_thresholds_the_docs_give(j_over_s_db, tracked):
    """docs/events.md: all satellites kept at 30 dB J/S, none at 33 dB (the
    Kaplan-Hegarty effective C/N0 written out here)."""
    import math

    from acres_sim.core.events import (CN0_HORIZON_DBHZ, CN0_ZENITH_DBHZ, TRACK_THRESHOLD_DBHZ,
                                       jammed_cn0_dbhz)

    js = 10 ** (j_over_s_db / 10)
    for cn0 in (CN0_HORIZON_DBHZ, CN0_ZENITH_DBHZ):
        by_hand = -10 * math.log10(10 ** (-cn0 / 10) + js / 1.023e6)
        assert jammed_cn0_dbhz(cn0, js) == pytest.approx(by_hand, abs=1e-12)
        assert (by_hand >= TRACK_THRESHOLD_DBHZ) == tracked
