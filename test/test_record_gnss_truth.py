"""The true antenna of every gnss.jsonl row, against independent references:
the chassis truth of truth.jsonl at the same step plus R times the lever arm
worked out here from the run's configuration (the mount's frame, the
vehicle's wheelbase and centre-of-gravity height); its latitude, longitude and
height against pyproj's chain in the row's own output frame; and the
receiver's error in RTK fixed, output minus that truth, against the row's
sigma_enu_m (a truth off by a lever arm would be metres off a σ of
centimetres)."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from test_geo_pyproj import FALSE_NORTHING_DIFF_M, local_en_m, pyproj_chain

from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

HZ = 120                 # physics steps per second: every sample time is k / 120
SPEC_SENSORS_ONLY = {'baro.enabled': False, 'mag.enabled': False,
                     'wheel_odometry.enabled': False, 'radar.enabled': False,
                     'gnss.nmea.gst': False, 'gnss.gpsfix': False, 'gnss.heading.enabled': False}
# Short correlation times, so that a minute of RTK fixed holds many independent errors.
SHORT_TAUS = {'gnss.states.rtk_fixed.tau_s': 0.5, 'gnss.multipath_tau_s': 0.5}
RUNS = {
    # its mounts from base_footprint, the error model's taus short
    'polaris': ('polaris', None, 60.0, SHORT_TAUS),
    # mounts from the chassis origin (the spec's default), the antenna moved off
    # the centre line so that the heading turns it; the receiver in nad83
    'maxxum': ('maxxum', 'figure8', 30.0, {'gnss.antenna_flu_m': [0.8, 0.35, 1.7],
                                           'gnss.datum.output_frame': 'nad83'}),
}
TRUE_GEODETIC = ('true_latitude_deg', 'true_longitude_deg', 'true_ellipsoidal_height_m')
PYPROJ_FRAME = {'wgs84_g2139': 'wgs84_g2139', 'nad83': 'nad83_harn'}


@pytest.fixture(scope='module')
def recordings(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('gnss_truth')
    scene = tmp / 'open_field.yaml'
    scene.write_text('scene: {name: open_field}\n')      # no garage: RTK from the start
    out = {}
    for name, (rig, route, seconds, overrides) in RUNS.items():
        out[name] = tmp / name
        record(RecordRequest(rig, out[name], RigOptions(
            duration_s=seconds, scene=str(scene), route=route,
            overrides={**SPEC_SENSORS_ONLY, **overrides}), progress=False))
    return out


def rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def step(t):
    k = round(t * HZ)
    assert abs(k / HZ - t) < 1e-9, t
    return k


def lever_arm_from_chassis(config, vehicle):
    """The antenna's lever arm from the chassis origin (FLU): the chassis origin
    lies 0.4 wheelbase ahead of base_footprint (the middle of the rear axle on
    the ground) at the height of the centre of gravity."""
    arm = np.array(config['gnss.antenna_flu_m'], dtype=float)
    if config['mount_frame'] == 'base_footprint':
        arm -= [0.4 * vehicle['wheelbase_m'], 0.0, vehicle['cog_height_m']]
    else:
        assert config['mount_frame'] == 'chassis'
    return arm


@pytest.mark.parametrize('name', list(RUNS))
def test_the_true_antenna_is_the_chassis_truth_at_the_lever_arm(recordings, name):
    out = recordings[name]
    episode = json.loads((out / 'episode.json').read_text())
    arm = lever_arm_from_chassis(episode['config'], episode['vehicle'])
    expected_frame = {'polaris': 'base_footprint', 'maxxum': 'chassis'}[name]
    assert episode['config']['mount_frame'] == expected_frame
    truth = {step(r['time_s']): r['chassis'] for r in rows(out / 'truth.jsonl')}
    gnss = rows(out / 'gnss.jsonl')
    assert len(gnss) >= 10 * RUNS[name][2] - 2
    matched = turned = 0
    for row in gnss:
        chassis = truth.get(step(row['sample_time_s']))
        if chassis is None:        # truth is at 100 Hz: most GNSS steps have a row of it
            continue
        rotation = Rotation.from_quat(chassis['orientation_enu_xyzw']).as_matrix()
        expected = np.array(chassis['position_enu_m']) + rotation @ arm
        np.testing.assert_allclose(row['true_antenna_enu_m'], expected, rtol=0, atol=1e-9)
        matched += 1
        turned += np.linalg.norm(rotation @ arm - arm) > 0.1
    assert matched >= 0.8 * len(gnss)
    assert turned >= 0.2 * matched         # the rotation matters: not the bare lever arm


@pytest.mark.parametrize('name', list(RUNS))
def test_the_true_geodetic_is_the_true_antenna_in_the_output_frame(recordings, name):
    out = recordings[name]
    episode = json.loads((out / 'episode.json').read_text())
    output_frame = episode['config']['gnss.datum.output_frame']
    assert output_frame == {'polaris': 'wgs84_g2139', 'maxxum': 'nad83'}[name]
    gnss = rows(out / 'gnss.jsonl')
    enu = np.array([r['true_antenna_enu_m'] for r in gnss])
    t = np.array([r['sample_time_s'] for r in gnss])
    lat, lon, h = (np.array([r[k] for r in gnss]) for k in TRUE_GEODETIC)
    reference = [pyproj_chain(e, n, u, ts)[PYPROJ_FRAME[output_frame]]
                 for (e, n, u), ts in zip(enu, t)]
    lat_ref, lon_ref, h_ref = (np.array([ref[i] for ref in reference], dtype=float)
                               for i in range(3))
    east, north = local_en_m(lat, lon, lat_ref, lon_ref)
    assert np.abs(east).max() < 1e-6
    assert np.abs(north + FALSE_NORTHING_DIFF_M).max() < 3e-6      # EPSG's false northing
    np.testing.assert_allclose(h, h_ref, rtol=0, atol=1e-7)
    # the rows without a fix have their truth too
    assert all(r[k] is not None for r in gnss for k in ('true_antenna_enu_m', *TRUE_GEODETIC))


def test_the_rtk_fixed_error_about_the_truth_has_the_rows_sigma(recordings):
    """(position - true antenna) / sigma per axis over a minute of RTK fixed:
    mean square near 1 (loose bounds; the errors' correlation times are short
    here), far from the thousands a lever arm's offset would give."""
    gnss = [r for r in rows(recordings['polaris'] / 'gnss.jsonl') if r['fix_type'] == 'rtk_fixed']
    assert len(gnss) >= 500
    error = np.array([r['position_enu_m'] for r in gnss]) - \
        np.array([r['true_antenna_enu_m'] for r in gnss])
    sigma = np.array([r['sigma_enu_m'] for r in gnss])
    assert sigma.max() < 0.05
    mean_square = ((error / sigma) ** 2).mean(axis=0)
    assert np.all(mean_square > 0.5) and np.all(mean_square < 2.0), mean_square
    std_ratio = error.std(axis=0) / np.sqrt((sigma ** 2).mean(axis=0))
    assert np.all(std_ratio > 0.7) and np.all(std_ratio < 1.4), std_ratio
