"""The report picture and the summary table, from synthetic rows."""

import math

import numpy as np
import pytest

from acres_sim.core.scene import make_scene
from acres_sim.core.truth import Truth
from acres_sim.record.report import FIX_STATES, format_summary, summary_table, write_report

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'

# Ten GNSS epochs at 10 Hz: 4 rtk_fixed, 3 rtk_float, 1 dgps, 1 single, 1 no_fix.
FIXES = ['rtk_fixed'] * 4 + ['rtk_float'] * 3 + ['dgps', 'single', 'no_fix']
# Errors (east, north, up) of the epochs with a position [m].
ERRORS = [(0.01, 0.0, 0.02), (0.0, -0.02, 0.0), (0.03, 0.04, -0.01), (0.0, 0.0, 0.0),
          (0.1, 0.2, 0.3), (-0.2, 0.1, 0.0), (0.0, 0.3, -0.4),
          (0.6, -0.8, 1.0), (3.0, 4.0, -2.0), None]
SIGMA = {'rtk_fixed': 0.013, 'rtk_float': 0.2, 'dgps': 0.5, 'single': 1.5}


def _truth_antenna(k):
    return np.array([2.0 * k, -300.0 + 0.5 * k, 2.15])


def _gnss_rows():
    rows = []
    for k, (fix, err) in enumerate(zip(FIXES, ERRORS)):
        row = {'sample_time_s': k / 10, 'fix_type': fix, 'satellites_used': 20 - k,
               'pdop': 1.0 + 0.1 * k if fix != 'no_fix' else 99.99}
        if err is None:
            row.update(position_enu_m=None, sigma_enu_m=None, covariance_enu_m2=None)
        else:
            s = SIGMA[fix]
            row.update(position_enu_m=(_truth_antenna(k) + err).tolist(),
                       sigma_enu_m=[s, s, 1.5 * s], covariance_enu_m2=[s * s, s * s, 2.25 * s * s])
        rows.append(row)
    return rows


def _ins_rows():
    rows = []
    for k in range(20):
        p = np.array([1.0 * k, -300.0 + 0.25 * k, 0.0])
        e = np.array([0.01 * (-1) ** k, 0.02, 0.005 * k])
        rows.append({'sample_time_s': k / 20, 'position_enu_m': (p + e).tolist(),
                     'fix': {'position_covariance': [1.09e-4, 1.09e-4, 2.4525e-4]},
                     'truth': {'position_enu_m': p.tolist()}})
    return rows


def _imu_rows():
    return [{'sample_time_s': k / 100,
             'specific_force_flu_mps2': [0.1 * math.sin(k / 10), 0.0, 9.80665],
             'angular_velocity_flu_radps': [0.0, 0.001, 0.2 * math.cos(k / 20)]}
            for k in range(50)]


def _scene():
    return make_scene('test', boxes=[[-10, -320, 0, 5, -310, 6]], cylinders=[[10, -290, 3, 0, 12]],
                      spheres=[[25, -305, 8, 4]])


def test_summary_shares_and_counts():
    gnss = _gnss_rows()
    s = summary_table(gnss, _ins_rows(), _imu_rows(), [])
    g = s['gnss']
    assert g['epochs'] == 10 and g['epochs_with_position'] == 9
    assert g['fix_epochs'] == {'rtk_fixed': 4, 'rtk_float': 3, 'dgps': 1, 'single': 1, 'no_fix': 1}
    assert sum(g['fix_share'].values()) == pytest.approx(1.0, abs=1e-15)
    assert g['fix_share']['rtk_fixed'] == 0.4
    assert set(g['fix_share']) == set(FIX_STATES)
    assert g['mean_satellites_used'] == pytest.approx(np.mean([20 - k for k in range(10)]))
    # 99.99 (no geometry) is left out of the mean PDOP.
    assert g['mean_pdop'] == pytest.approx(np.mean([1.0 + 0.1 * k for k in range(9)]))
    # Without truth at the antenna no GNSS error is claimed.
    assert g['horizontal_rms_m'] is None and g['vertical_rms_m'] is None
    assert s['imu']['samples'] == 50 and s['ins']['epochs'] == 20 and s['truth']['samples'] == 0
    assert s['duration_s'] == pytest.approx(0.95)            # the last INS sample, 19/20 s
    empty = summary_table([], [], [], [])
    assert empty['gnss']['epochs'] == 0 and sum(empty['gnss']['fix_share'].values()) == 0.0


def test_summary_rms_by_hand():
    gnss = _gnss_rows()
    truth = np.array([_truth_antenna(k) for k in range(10)])
    s = summary_table(gnss, _ins_rows(), [], [], gnss_truth_enu=truth)
    errs = [e for e in ERRORS if e is not None]
    h2 = [e[0] ** 2 + e[1] ** 2 for e in errs]
    v2 = [e[2] ** 2 for e in errs]
    assert s['gnss']['horizontal_rms_m'] == pytest.approx(math.sqrt(sum(h2) / 9), rel=1e-12)
    assert s['gnss']['vertical_rms_m'] == pytest.approx(math.sqrt(sum(v2) / 9), rel=1e-12)
    by_fix = s['gnss']['horizontal_rms_by_fix_m']
    assert by_fix['rtk_fixed'] == pytest.approx(math.sqrt((1e-4 + 4e-4 + 25e-4 + 0) / 4), rel=1e-9)
    assert by_fix['single'] == pytest.approx(5.0, rel=1e-12)           # the 3-4-5 error
    assert by_fix['dgps'] == pytest.approx(1.0, rel=1e-12)
    # INS: east ±0.01, north 0.02, up 0.005 k.
    assert s['ins']['horizontal_rms_m'] == \
        pytest.approx(math.sqrt(0.01 ** 2 + 0.02 ** 2), rel=1e-9)
    assert s['ins']['vertical_rms_m'] == pytest.approx(
        math.sqrt(np.mean([(0.005 * k) ** 2 for k in range(20)])), rel=1e-9)
    text = format_summary(s)
    assert 'RTK fixed 40.0 %' in text and 'no fix 10.0 %' in text
    with pytest.raises(ValueError, match='gnss_truth_enu'):
        summary_table(gnss, gnss_truth_enu=truth[:3])


def test_report_png(tmp_path):
    gnss = _gnss_rows()
    truth_gnss = np.array([_truth_antenna(k) for k in range(10)])
    truth_rows = [Truth(step=k, p=np.array([1.0 * k, -300.0, 0.0]), R=np.eye(3), v=np.zeros(3),
                        w=np.zeros(3), p_c=np.zeros(3)) for k in range(12)]
    summary = summary_table(gnss, _ins_rows(), _imu_rows(), truth_rows, gnss_truth_enu=truth_gnss)
    out = write_report(tmp_path / 'report.png', gnss, _ins_rows(), _imu_rows(), truth_rows,
                       _scene(), summary, gnss_truth_enu=truth_gnss)
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 50_000
    # IHDR: width and height of the picture.
    width, height = int.from_bytes(data[16:20], 'big'), int.from_bytes(data[20:24], 'big')
    assert (width, height) == (1800, 1200)


def test_report_is_drawn_once_and_is_what_savefig_writes(tmp_path, monkeypatch):
    """Reference: matplotlib's own savefig of the same figure.  The report
    renders the figure once and writes those pixels: the same picture."""
    from matplotlib.figure import Figure
    from matplotlib.image import imread

    from acres_sim.record.report import ReportPage, draw_pages, write_pages

    gnss = _gnss_rows()
    truth_gnss = np.array([_truth_antenna(k) for k in range(10)])
    truth_rows = [Truth(step=k, p=np.array([1.0 * k, -300.0, 0.0]), R=np.eye(3), v=np.zeros(3),
                        w=np.zeros(3), p_c=np.zeros(3)) for k in range(12)]
    page = ReportPage('', gnss, _ins_rows(), _imu_rows(), truth_rows, truth_gnss)
    draws = []
    original = Figure.draw
    monkeypatch.setattr(Figure, 'draw', lambda fig, renderer: (draws.append(1),
                                                               original(fig, renderer))[1])
    ours = write_pages(tmp_path / 'ours.png', [page], _scene())
    assert len(draws) == 1
    fig, dpi = draw_pages([page], _scene())
    fig.savefig(tmp_path / 'theirs.png', format='png', dpi=dpi)
    assert np.array_equal(imread(ours), imread(tmp_path / 'theirs.png'))


def test_report_without_truth_scene_or_rows(tmp_path):
    """Missing pieces give emptier panels, not errors."""
    rows = [{k: v for k, v in r.items() if k != 'sample_time_s'} for r in _gnss_rows()]
    out = write_report(tmp_path / 'r.png', rows, [], [], [], None)
    assert out.read_bytes()[:8] == PNG_MAGIC
    out = write_report(tmp_path / 'e.png', [], [], [], [], _scene())
    assert out.read_bytes()[:8] == PNG_MAGIC


def _further_rows():
    """A few rows of each further sensor (the keys their panels read)."""
    t = [k / 10 for k in range(30)]
    return {
        'baro': [{'sample_time_s': s, 'pressure_altitude_m': 190.0 + 0.1 * math.sin(s),
                  'truth': {'altitude_m': 190.0}} for s in t],
        'mag': [{'sample_time_s': s, 'magnetic_field_flu_t': [2e-5, 1e-6 * s, -4.8e-5],
                 'truth': {'magnetic_field_flu_t': [2e-5, 0.0, -4.8e-5]}} for s in t],
        'wheel_odometry': [{'sample_time_s': s, 'speed_mps': 2.0 + 0.01 * s, 'slip': 0.02,
                            'truth': {'speed_mps': 2.0}} for s in t],
        'radar': [{'sample_time_s': s, 'valid': s > 0.5, 'speed_mps': 2.0 + 0.02 * s,
                   'sigma_mps': 0.05, 'truth': {'speed_mps': 2.0}} for s in t],
    }


def _panel_boxes(figure):
    """The drawn extent (labels, ticks and titles included) of each panel of
    ``figure`` and its subfigures, a panel's twin axes merged with it."""
    from matplotlib.transforms import Bbox
    by_place = {}
    stack = [figure]
    while stack:
        fig = stack.pop()
        stack.extend(fig.subfigs)
        for ax in fig.axes:
            place = tuple(np.round(ax.get_position().bounds, 6))
            by_place.setdefault(place, []).append(ax.get_tightbbox())
    return {place: Bbox.union(boxes) for place, boxes in by_place.items()}


@pytest.mark.parametrize('pages', [1, 2])
def test_report_panels_keep_to_their_places(pages):
    """The fixed margins hold every panel's labels, ticks and title: no two
    panels overlap and each stays on the picture -- one page, and a fleet's
    two, with a further row of four panels, each with a twin axis or legend."""
    from acres_sim.record.report import ReportPage, draw_pages
    gnss = _gnss_rows()
    truth_gnss = np.array([_truth_antenna(k) for k in range(10)])
    page = ReportPage('vehicle (model, route demo)', gnss, _ins_rows(), _imu_rows(), [],
                      truth_gnss, further=_further_rows())
    fig, _dpi = draw_pages([page] * pages, _scene(), title='a run')
    fig.canvas.draw()
    boxes = list(_panel_boxes(fig).values())
    assert len(boxes) == pages * (8 + 4)      # 8 panels of the page, 4 further ones
    picture = fig.bbox
    for i, box in enumerate(boxes):
        assert picture.x0 <= box.x0 and box.x1 <= picture.x1, box
        assert picture.y0 <= box.y0 and box.y1 <= picture.y1, box
        for other in boxes[i + 1:]:
            assert not box.overlaps(other), (box, other)


def test_rows_as_columns_give_the_same_summary_and_picture(tmp_path):
    """Reference: the report of the row dicts.  The same INS, IMU and truth
    rows as Columns (as the recorder keeps those series) give the
    same summary and the same picture, pixel for pixel."""
    from matplotlib.image import imread

    from acres_sim.record.report import Columns, ReportPage, write_pages

    gnss, ins, imu = _gnss_rows(), _ins_rows(), _imu_rows()
    truth = [{'sample_time_s': k / 20, 'position_enu_m': [1.0 * k, -300.0 + 0.5 * k, 0.1]}
             for k in range(24)]
    truth_gnss = np.array([_truth_antenna(k) for k in range(10)])

    def columns(rows, keys):
        return Columns({key: np.array([_nested(r, key) for r in rows]) for key in keys})

    as_columns = (columns(ins, ('sample_time_s', 'position_enu_m', 'truth.position_enu_m',
                                'fix.position_covariance')),
                  columns(imu, ('sample_time_s', 'specific_force_flu_mps2',
                                'angular_velocity_flu_radps')),
                  columns(truth, ('sample_time_s', 'position_enu_m')))
    rows_summary = summary_table(gnss, ins, imu, truth, gnss_truth_enu=truth_gnss)
    assert summary_table(gnss, *as_columns, gnss_truth_enu=truth_gnss) == rows_summary
    assert rows_summary['ins']['horizontal_rms_m'] > 0 and rows_summary['imu']['samples'] == 50
    events = ({'name': 'cap', 'type': 'fix_cap', 'active_s': [[0.2, 0.6]]},)
    pages = [ReportPage('', gnss, ins, imu, truth, truth_gnss, events=events),
             ReportPage('', gnss, *as_columns, truth_gnss, events=events)]
    write_pages(tmp_path / 'rows.png', pages[:1], _scene())
    write_pages(tmp_path / 'columns.png', pages[1:], _scene())
    assert np.array_equal(imread(tmp_path / 'rows.png'), imread(tmp_path / 'columns.png'))
    # without the truth series the INS rows' own truth is the trajectory's, both ways
    write_pages(tmp_path / 'rows.png', [pages[0]._replace(truth_rows=[])], _scene())
    write_pages(tmp_path / 'columns.png', [pages[1]._replace(truth_rows=Columns({}))], _scene())
    assert np.array_equal(imread(tmp_path / 'rows.png'), imread(tmp_path / 'columns.png'))


def _nested(row, key):
    for part in key.split('.'):
        row = row[part]
    return row


def test_columns_of_different_lengths_are_refused():
    from acres_sim.record.report import Columns
    with pytest.raises(ValueError, match='different lengths'):
        Columns({'a': np.zeros(3), 'b': np.zeros(4)})
    assert len(Columns({})) == 0 and len(Columns({'a': np.zeros((5, 3))})) == 5
