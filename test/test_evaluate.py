"""acres-sim evaluate: estimates scored against a recording's truth.

References: the INS kernel's own truth of its point (ins.jsonl), against which
synthetic estimates are built with known errors; the INS model's configured
sigmas (the spec's values); the shares of a Gaussian within 1/2/3 sigma
(68.27 / 95.45 / 99.73 %); the rig's own topics read from its bag against the
same values in its rows.
"""

import json
import math

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin, Writer
from scipy.spatial.transform import Rotation

from acres_sim.analysis.consistency import consistency, effective_samples
from acres_sim.analysis.evaluate import RunError, evaluate, summary_text, table_row
from acres_sim.cli import main
from acres_sim.pipeline.messages import TYPESTORE
from acres_sim.record.runner import RecordRequest, record
from acres_sim.rig import RigOptions

T = TYPESTORE.types


@pytest.fixture(scope='module')
def polaris(tmp_path_factory):
    """240 s of the default Polaris (its GNSS has no fix in the garage at first)."""
    out = tmp_path_factory.mktemp('eval') / 'polaris'
    record(RecordRequest('polaris', out, RigOptions(duration_s=240.0), progress=False))
    return out


@pytest.fixture(scope='module')
def white(tmp_path_factory):
    """300 s of the Polaris INS alone, its position errors correlated over 0.05 s
    instead of 30 s: some 6000 independent samples, so sample statistics
    within a few percent of the model's."""
    out = tmp_path_factory.mktemp('eval') / 'white'
    overrides = {'ins.position_tau_s': 0.05, 'gnss.enabled': False, 'imu.enabled': False}
    record(RecordRequest('polaris', out, RigOptions(duration_s=300.0, overrides=overrides),
                         progress=False))
    return out


@pytest.fixture(scope='module')
def outage(tmp_path_factory):
    """The rtk_outage scenario: the Maxxum loses its corrections from 120 to 210 s."""
    out = tmp_path_factory.mktemp('eval') / 'outage'
    record(RecordRequest('rtk_outage', out, RigOptions(duration_s=240.0), progress=False))
    return out


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _ins_truth(run):
    """The INS kernel's truth of its point (base_footprint on the Polaris)."""
    rows = _rows(run / 'ins.jsonl')
    t = np.array([r['sample_time_s'] for r in rows])
    xyz = np.array([r['truth']['position_enu_m'] for r in rows])
    xyzw = np.array([r['truth']['orientation_enu_xyzw'] for r in rows])
    return t, xyz, xyzw, rows


def _t0_ns(run):
    from acres_sim.pipeline.timeline import ns_since_epoch
    from acres_sim.config.validate import parse_utc
    episode = json.loads((run / 'episode.json').read_text())
    return ns_since_epoch(parse_utc(episode['vehicles'][0]['config']['gnss.datum.start_utc']))


def write_odometry(bag, run, t, xyz, xyzw, variances, frame='map', child='base_footprint',
                   topic='/odometry/filtered', every=5):
    """A bag of nav_msgs/Odometry at run times ``t`` (a user's filter output),
    of ``every`` n-th sample (20 Hz of the INS's 100)."""
    t, xyz, xyzw, variances = (np.asarray(a)[::every] for a in (t, xyz, xyzw, variances))
    t0 = _t0_ns(run)
    header, time = T['std_msgs/msg/Header'], T['builtin_interfaces/msg/Time']
    g = 'geometry_msgs/msg/'
    with Writer(bag, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection(topic, 'nav_msgs/msg/Odometry', typestore=TYPESTORE)
        for k in range(len(t)):
            ns = t0 + int(round(t[k] * 1e9))
            cov = np.zeros(36)
            cov[[0, 7, 14, 21, 28, 35]] = variances[k]
            msg = T['nav_msgs/msg/Odometry'](
                header=header(stamp=time(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=frame),
                child_frame_id=child,
                pose=T[g + 'PoseWithCovariance'](pose=T[g + 'Pose'](
                    position=T[g + 'Point'](x=xyz[k, 0], y=xyz[k, 1], z=xyz[k, 2]),
                    orientation=T[g + 'Quaternion'](x=xyzw[k, 0], y=xyzw[k, 1], z=xyzw[k, 2],
                                                    w=xyzw[k, 3])), covariance=cov),
                twist=T[g + 'TwistWithCovariance'](twist=T[g + 'Twist'](
                    linear=T[g + 'Vector3'](x=0.0, y=0.0, z=0.0),
                    angular=T[g + 'Vector3'](x=0.0, y=0.0, z=0.0)), covariance=np.zeros(36)))
            writer.write(conn, ns, TYPESTORE.serialize_cdr(msg, 'nav_msgs/msg/Odometry'))
    return f'{bag}:{topic}'


def _only(summary):
    (estimate,) = summary['estimates']
    return estimate


# -- the rig's own INS: the model's statistics -------------------------------------

def test_the_ins_scores_its_own_model(polaris):
    """Its errors are the rows' own (position minus the kernel's truth of the
    point), and their size is the configured model's: horizontal RMSE
    sqrt(2 (sigma_p^2 + sigma_pw^2)) = 1.48 cm, 3-D NEES about 3."""
    e = _only(evaluate(polaris, ['ins']))
    _t, truth, _q, rows = _ins_truth(polaris)
    errors = np.array([r['position_enu_m'] for r in rows]) - truth
    horizontal = np.hypot(errors[:, 0], errors[:, 1])
    assert e['position']['horizontal']['rmse'] == pytest.approx(
        math.sqrt(np.mean(horizontal ** 2)), abs=1e-9)
    assert e['position']['vertical']['rmse'] == pytest.approx(
        math.sqrt(np.mean(errors[:, 2] ** 2)), abs=1e-9)
    expected = math.sqrt(2 * (0.01 ** 2 + 0.003 ** 2))          # sensors_polaris.yaml
    assert expected == pytest.approx(0.01476, abs=1e-5)
    # 240 s of errors correlated over 30 s: the sample RMSE scatters by ~10 %
    assert e['position']['horizontal']['rmse'] == pytest.approx(expected, rel=0.3)
    c = e['consistency']['position_3d']
    assert c['nees_mean'] == pytest.approx(2.95, rel=0.45)      # 2 + 2.34/2.45 (up: 1.5 sigma)
    assert c['verdict'] == 'consistent' and e['flags'] == []
    assert e['availability']['share'] == pytest.approx(1.0, abs=1e-3)
    assert e['attitude']['heading_deg']['rmse'] == pytest.approx(0.1, rel=0.5)


def test_the_ins_statistics_are_the_models(white):
    """With nearly white errors the sample statistics are tight: horizontal
    RMSE sqrt(2 (sigma_p^2 + sigma_pw^2)), ANEES (3-D) 2 + (2.25 sigma_p^2 +
    sigma_pw^2) / (2.25 (sigma_p^2 + sigma_pw^2)) (the covariance gives the up
    axis 2.25 times the whole variance, the model 1.5 sigma_p only), the
    horizontal ANEES 2, the shares within 1/2/3 sigma a Gaussian's."""
    e = _only(evaluate(white, ['ins']))
    sp, sw = 0.01, 0.003
    assert e['position']['horizontal']['rmse'] == pytest.approx(
        math.sqrt(2 * (sp ** 2 + sw ** 2)), rel=0.03)
    up = (2.25 * sp ** 2 + sw ** 2) / (2.25 * (sp ** 2 + sw ** 2))
    c = e['consistency']
    assert c['position_3d']['nees_mean'] == pytest.approx(2.0 + up, rel=0.03)
    assert c['horizontal']['nees_mean'] == pytest.approx(2.0, rel=0.03)
    assert c['horizontal']['effective_samples'] > 3000
    # 2-D: P(d <= k) = 1 - exp(-k^2 / 2)
    for k in (1, 2, 3):
        assert c['horizontal']['within'][f'{k}sigma'] == pytest.approx(
            1 - math.exp(-k * k / 2), abs=0.02)
    assert all(v['verdict'] == 'consistent' for v in c.values())


def test_the_bag_topics_give_the_rows_values(polaris):
    """vehicle/odom (UTM, NAD83(2011)) and oxts/fix (latitude/longitude) from the
    bag, brought into map through the datum chain, score as the rows do."""
    bag = polaris / 'bag'
    s = evaluate(polaris, ['ins', f'{bag}:/vehicle/odom', f'{bag}:/oxts/fix',
                           f'{bag}:tf:utm:base_footprint'])
    ins, odom, fix, tf = s['estimates']
    assert odom['point'] == 'base_footprint' and fix['point'] == 'navsat_link'
    assert odom['datum'] == fix['datum'] == 'nad83_2011'
    for other in (odom, fix, tf):
        assert other['position']['horizontal']['rmse'] == pytest.approx(
            ins['position']['horizontal']['rmse'], abs=2e-5)
        assert other['position']['vertical']['rmse'] == pytest.approx(
            ins['position']['vertical']['rmse'], abs=2e-5)
    assert odom['attitude']['heading_deg']['rmse'] == pytest.approx(
        ins['attitude']['heading_deg']['rmse'], abs=1e-4)
    assert odom['consistency']['heading']['nees_mean'] == pytest.approx(
        ins['consistency']['heading']['nees_mean'], rel=1e-3)
    assert tf['consistency'] is None


def test_gnss_is_scored_at_its_antenna_per_fix_state(polaris):
    s = evaluate(polaris, ['gnss', f'{polaris / "bag"}:/gnss_receiver/fix'])
    rows, fix = s['estimates']
    assert rows['point'] == 'gnss_antenna'
    # the truth at the antenna (chassis + lever arm) is the receiver's own
    own = [r for r in _rows(polaris / 'gnss.jsonl') if r.get('position_enu_m') is not None]
    errors = np.array([r['position_enu_m'] for r in own]) \
        - np.array([r['true_antenna_enu_m'] for r in own])
    assert rows['position']['horizontal']['rmse'] == pytest.approx(
        math.sqrt(np.mean(errors[:, 0] ** 2 + errors[:, 1] ** 2)), abs=1e-9)
    assert rows['position']['axes']['up']['mean'] == pytest.approx(errors[:, 2].mean(),
                                                                   abs=1e-9)
    assert fix['position']['horizontal']['rmse'] == pytest.approx(
        rows['position']['horizontal']['rmse'], rel=1e-4)
    states = rows['by_fix_state']
    assert states['rtk_fixed']['horizontal_rmse_m'] < 0.05
    # no fix in the garage at the start: not available then
    first = min(r['sample_time_s'] for r in _rows(polaris / 'gnss.jsonl')
                if r.get('position_enu_m') is not None)
    assert rows['availability']['first_s'] == pytest.approx(first)
    assert rows['availability']['share'] < 1.0 - first / 240.0 + 0.01


# -- synthetic estimates with known errors ----------------------------------------

def _ins_variances(rows):
    return np.array([r['odom']['covariance'] for r in rows])


def test_a_known_offset_and_heading_error_are_measured(polaris, tmp_path):
    t, xyz, xyzw, rows = _ins_truth(polaris)
    offset = np.array([0.30, -0.40, 0.10])
    turned = (Rotation.from_euler('z', 2.0, degrees=True)
              * Rotation.from_quat(xyzw)).as_quat()
    est = write_odometry(tmp_path / 'b', polaris, t, xyz + offset, turned,
                         _ins_variances(rows))
    e = _only(evaluate(polaris, [est]))
    axes = e['position']['axes']
    assert [axes[a]['mean'] for a in ('east', 'north', 'up')] == pytest.approx(offset,
                                                                               abs=1e-6)
    assert e['position']['horizontal']['rmse'] == pytest.approx(0.5, abs=1e-6)
    assert e['attitude']['heading_deg']['mean'] == pytest.approx(2.0, abs=1e-6)
    # the INS's covariance is 1 cm: that offset is a bias, the covariance overconfident
    assert any('biased in east' in f for f in e['flags'])
    assert any('biased in north' in f for f in e['flags'])
    assert e['consistency']['position_3d']['verdict'] == 'overconfident'
    assert e['consistency']['heading']['verdict'] == 'overconfident'


@pytest.mark.parametrize('scale, verdict', [(1.0, 'consistent'), (0.01, 'overconfident'),
                                            (100.0, 'conservative')])
def test_an_over_or_under_confident_covariance_is_flagged(polaris, tmp_path, scale, verdict):
    """The INS's own values with its covariance as reported, a hundred times
    too small, a hundred times too large."""
    _t, _xyz, _q, rows = _ins_truth(polaris)
    t = np.array([r['sample_time_s'] for r in rows])
    xyz = np.array([r['position_enu_m'] for r in rows])
    xyzw = np.array([r['imu']['orientation_enu_xyzw'] for r in rows])
    est = write_odometry(tmp_path / 'b', polaris, t, xyz, xyzw, _ins_variances(rows) * scale)
    e = _only(evaluate(polaris, [est]))
    assert e['consistency']['position_3d']['verdict'] == verdict
    assert e['consistency']['heading']['verdict'] == verdict
    assert (e['flags'] == []) == (verdict == 'consistent')


def test_an_odom_frame_is_aligned(polaris, tmp_path):
    """An estimate in an odom frame turned 30 deg and shifted: aligned (se3)
    by default it scores as the INS (a little better: the alignment takes out
    the run's mean error too); unaligned it is metres off."""
    _t, _xyz, _q, rows = _ins_truth(polaris)
    t = np.array([r['sample_time_s'] for r in rows])
    xyz = np.array([r['position_enu_m'] for r in rows])
    xyzw = np.array([r['imu']['orientation_enu_xyzw'] for r in rows])
    turn = Rotation.from_euler('z', 30.0, degrees=True)
    odom_xyz = turn.apply(xyz) + [100.0, -50.0, 3.0]
    odom_q = (turn * Rotation.from_quat(xyzw)).as_quat()
    est = write_odometry(tmp_path / 'b', polaris, t, odom_xyz, odom_q, _ins_variances(rows),
                         frame='odom')
    ins = _only(evaluate(polaris, ['ins']))
    e = _only(evaluate(polaris, [est]))
    assert e['alignment']['method'] == 'se3'
    assert e['alignment']['rotation_deg'] == pytest.approx(30.0, abs=0.01)
    assert 0.5 * ins['position']['horizontal']['rmse'] < e['position']['horizontal']['rmse'] \
        <= ins['position']['horizontal']['rmse'] + 1e-9
    raw = _only(evaluate(polaris, [est], align='none'))
    assert raw['position']['horizontal']['rmse'] > 50.0


def test_covariance_and_orientation_unknown_for_some_messages(polaris, tmp_path):
    """A filter that reports no covariance at first (all zero), then a
    singular one (z variance 0), then no yaw variance (-1), and no orientation
    (a zero quaternion) in its first seconds: each figure is taken over the
    samples that report it, and the fix-state rows where none does go without."""
    _t, _xyz, _q, rows = _ins_truth(polaris)
    rows = rows[::5]
    t = np.array([r['sample_time_s'] for r in rows])
    xyz = np.array([r['position_enu_m'] for r in rows])
    xyzw = np.array([r['imu']['orientation_enu_xyzw'] for r in rows])
    variances = _ins_variances(rows).copy()
    n = len(rows)
    variances[:n // 4] = 0.0                  # not known
    variances[n // 4:n // 2, 2] = 0.0         # singular: no 3-D NEES, a horizontal one
    variances[n // 2:, 5] = -1.0              # no yaw variance
    xyzw[:n // 10] = 0.0                      # no orientation
    est = write_odometry(tmp_path / 'b', polaris, t, xyz, xyzw, variances, every=1)
    e = _only(evaluate(polaris, [est], out=tmp_path / 'e'))
    cons = e['consistency']
    assert cons['position_3d']['samples'] == n - n // 2
    assert cons['horizontal']['samples'] == n - n // 4
    assert cons['heading']['samples'] == n // 2 - n // 4
    assert all(c['verdict'] == 'consistent' for c in cons.values())
    assert e['flags'] == []
    assert e['attitude']['heading_deg']['rmse'] < 0.5
    garage = e['by_fix_state']['no_fix']           # the first minute: no covariance yet
    assert garage['samples'] > 0 and 'nees_position' not in garage
    assert json.loads((tmp_path / 'e' / 'summary.json').read_text())['estimates'][0][
        'consistency']['heading']['samples'] == n // 2 - n // 4


def test_a_turned_mount_is_scored_in_its_own_axes(polaris, tmp_path):
    """An estimate of oxts_imu_link (the INS's IMU, mounted turned): the truth of
    that frame is the chassis pose composed with the frame's /tf_static, as the
    recording's bag publishes it; an estimate that is that truth scores zero."""
    from rosbags.highlevel import AnyReader

    with AnyReader([polaris / 'bag'], default_typestore=TYPESTORE) as reader:
        static = [c for c in reader.connections if c.topic == '/tf_static']
        transforms = {tf.child_frame_id: tf.transform
                      for c, _t, raw in reader.messages(connections=static)
                      for tf in reader.deserialize(raw, c.msgtype).transforms}
    mount = transforms['oxts_imu_link']
    r_mount = Rotation.from_quat([mount.rotation.x, mount.rotation.y, mount.rotation.z,
                                  mount.rotation.w])
    assert r_mount.magnitude() > 1.0                   # turned: the test means something
    arm = [mount.translation.x, mount.translation.y, mount.translation.z]
    t, xyz, xyzw, rows = _ins_truth(polaris)          # base_footprint
    r_base = Rotation.from_quat(xyzw)
    est = write_odometry(tmp_path / 'b', polaris, t, xyz + r_base.apply(arm),
                         (r_base * r_mount).as_quat(), _ins_variances(rows),
                         child='oxts_imu_link')
    e = _only(evaluate(polaris, [est]))
    assert e['point'] == 'oxts_imu_link'
    assert e['attitude']['rotation_deg']['max'] < 1e-4
    assert e['position']['3d']['max'] < 1e-4


def test_names_that_slug_alike_get_a_picture_each(polaris, tmp_path):
    t, xyz, xyzw, rows = _ins_truth(polaris)
    one = write_odometry(tmp_path / 'b1', polaris, t, xyz, xyzw, _ins_variances(rows),
                         topic='/a/b')
    two = write_odometry(tmp_path / 'b2', polaris, t, xyz + [0.1, 0, 0], xyzw,
                         _ins_variances(rows), topic='/a_b')
    evaluate(polaris, [one, two], out=tmp_path / 'e')
    assert sorted(p.name for p in (tmp_path / 'e').glob('*.png')) == ['a_b-2.png', 'a_b.png']
    text = (tmp_path / 'e' / 'summary.md').read_text()
    assert '## /a/b' in text and '## /a_b' in text and '(a_b-2.png)' in text


def test_a_tum_file_in_ros_time_or_run_time(polaris, tmp_path):
    t, xyz, xyzw, _rows_ = _ins_truth(polaris)
    shifted = xyz + [0.0, 0.2, 0.0]
    for name, stamps in (('run.tum', t), ('ros.tum', t + _t0_ns(polaris) * 1e-9)):
        path = tmp_path / name
        np.savetxt(path, np.column_stack([stamps, shifted, xyzw]), fmt='%.9f')
        e = _only(evaluate(polaris, [str(path)]))
        # ROS times in a text file keep about 0.1 us: the truth moves < 1 um in it
        assert e['position']['axes']['north']['mean'] == pytest.approx(0.2, abs=1e-5)
        assert e['position']['axes']['east']['rmse'] == pytest.approx(0.0, abs=1e-5)


# -- fix states and events ----------------------------------------------------------

def test_a_correction_outage_window(outage):
    s = evaluate(outage, ['gnss', 'ins'])
    gnss, ins = s['estimates']
    (window,) = gnss['events']
    assert (window['name'], window['start_s'], window['end_s']) == ('radio_loss', 120.0, 210.0)
    assert window['during']['samples'] == 900                 # 10 Hz for 90 s
    assert window['after']['samples'] == 300                  # its 60 s after, to the end
    fixed = gnss['by_fix_state']['rtk_fixed']['horizontal_rmse_m']
    assert window['during']['horizontal_rmse_m'] > 10 * fixed
    # the INS of the spec does not follow the receiver: the same centimetres
    assert ins['events'][0]['during']['horizontal_rmse_m'] < 0.05
    row = table_row(s)
    assert row['gnss.rtk_fixed.horizontal_rmse_m'] == pytest.approx(fixed)


# -- consistency maths --------------------------------------------------------------

def test_consistency_of_honest_gaussian_errors():
    rng = np.random.default_rng(5)
    values = rng.standard_normal(200_000) ** 2             # 1-D NEES of honest errors
    c = consistency(values, 1)
    assert c['nees_mean'] == pytest.approx(1.0, abs=0.01)
    for k, share in (('1sigma', 0.6827), ('2sigma', 0.9545), ('3sigma', 0.9973)):
        assert c['within'][k] == pytest.approx(share, abs=0.003)
        assert c['expected_within'][k] == pytest.approx(share, abs=1e-4)
    assert c['verdict'] == 'consistent'
    assert consistency(values * 3.0, 1)['verdict'] == 'overconfident'
    assert consistency(values / 3.0, 1)['verdict'] == 'conservative'


def test_honest_short_runs_are_rarely_flagged():
    """300 runs of honest 3-D errors correlated over 30 s (first-order Gauss-
    Markov, 10 Hz), 30 s to 10 min long: either verdict but 'consistent' in at
    most a few percent (the 99 % band; the autocorrelation of a short run,
    trusted, called 15 % of the 60 s runs), while a covariance a hundred
    times too small is called in every run, one a hundred times too large in
    nine of ten (in 30 s of an error correlated over 30 s, one draw of it)."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(11)
    a = math.exp(-1.0 / (10 * 30.0))
    for seconds in (30, 60, 120, 600):
        called, over, under = 0, 0, 0
        for _run in range(300 if seconds < 600 else 60):
            white = rng.standard_normal((seconds * 10, 3)) * math.sqrt(1 - a * a)
            white[0] = rng.standard_normal(3)
            errors = lfilter([1.0], [1.0, -a], white, axis=0)
            values = np.sum(errors ** 2, axis=1)
            called += consistency(values, 3)['verdict'] != 'consistent'
            over += consistency(values * 100, 3)['verdict'] == 'overconfident'
            under += consistency(values / 100, 3)['verdict'] == 'conservative'
        runs = 300 if seconds < 600 else 60
        assert called <= 0.03 * runs, seconds
        assert over == runs and under >= 0.9 * runs, seconds


def test_effective_samples_of_an_ar1_series():
    """AR(1) with coefficient a: N (1 - a) / (1 + a) independent samples."""
    rng = np.random.default_rng(9)
    a, n = 0.9, 400_000
    x = np.empty(n)
    x[0] = 0.0
    noise = rng.standard_normal(n)
    for i in range(1, n):
        x[i] = a * x[i - 1] + noise[i]
    assert effective_samples(x) == pytest.approx(n * (1 - a) / (1 + a), rel=0.15)
    assert effective_samples(noise) == pytest.approx(n, rel=0.05)


# -- the command ---------------------------------------------------------------------

def test_the_command_writes_its_folder_and_keeps_others(polaris, tmp_path, capsys):
    out = tmp_path / 'eval'
    assert main(['evaluate', str(polaris), '--out', str(out)]) == 0
    text = capsys.readouterr().out
    assert 'ins (' in text and 'gnss (' in text and 'horizontal RMSE' in text
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith('.')) == \
        ['gnss.png', 'ins.png', 'summary.json', 'summary.md']
    summary = json.loads((out / 'summary.json').read_text())
    assert [e['name'] for e in summary['estimates']] == ['ins', 'gnss']
    assert '| horizontal |' in (out / 'summary.md').read_text()
    mine = out / 'notes.txt'
    mine.write_text('mine')
    assert main(['evaluate', str(polaris), '--out', str(out), '--estimate', 'ins',
                 '--no-plots']) == 0
    assert mine.read_text() == 'mine'
    assert not (out / 'gnss.png').exists()            # the earlier evaluation's, replaced
    foreign = tmp_path / 'foreign'
    foreign.mkdir()
    (foreign / 'data.csv').write_text('1,2')
    assert main(['evaluate', str(polaris), '--out', str(foreign)]) == 2
    assert 'not empty and not an acres_sim evaluation' in capsys.readouterr().err
    assert (foreign / 'data.csv').read_text() == '1,2'


@pytest.mark.parametrize('args, message', [
    (['--estimate', 'nothing_here'], 'not ins, gnss, BAG:TOPIC'),
    (['--estimate', '{bag}:/no/such/topic'], 'no topic /no/such/topic'),
    (['--estimate', '{bag}:/clock'], 'rosgraph_msgs/msg/Clock; an estimate is one of'),
    (['--estimate', '{bag}:tf:map:nowhere'], 'no transform map -> nowhere'),
    (['--vehicle', 'tractor'], "no vehicle 'tractor'"),
    (['--stale-after', '0'], 'allowed a time > 0 s'),
    (['--estimate', 'ins', '--frame', 'odom'], '--frame and --child-frame are for an estimate'),
    (['--agents', '2'], 'describe the rig of a live bag: give --rig'),
    (['--rig', 'polaris'], 'its options are for a live bag'),
])
def test_mistakes_are_one_line(polaris, tmp_path, capsys, args, message):
    args = [a.format(bag=polaris / 'bag') for a in args]
    assert main(['evaluate', str(polaris), '--out', str(tmp_path / 'e'), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count('\n') == 1 and err.startswith('acres-sim: error: ')
    assert not (tmp_path / 'e').exists()


def test_a_receiver_without_a_fix_yet_is_left_out_of_the_defaults(tmp_path):
    """5 s in the garage: the receiver has no position yet.  By default the rest
    is scored and the summary says what was left out and why; asked for by
    name, it is an error."""
    run = tmp_path / 'short'
    record(RecordRequest('polaris', run, RigOptions(duration_s=5.0), progress=False,
                         bag=False, report=False))
    summary = evaluate(run, out=run / 'eval')
    assert [e['name'] for e in summary['estimates']] == ['ins']
    (why,) = summary['left_out']
    assert why.startswith('gnss: fewer than two positions within the run')
    assert f'left out: {why}' in summary_text(summary)
    assert f'- left out: {why}' in (run / 'eval' / 'summary.md').read_text()
    with pytest.raises(RunError, match='gnss: fewer than two positions'):
        evaluate(run, ['gnss'])


def test_a_folder_that_is_not_a_recording(tmp_path, capsys):
    assert main(['evaluate', str(tmp_path)]) == 2
    assert 'episode.json is missing' in capsys.readouterr().err
    with pytest.raises(RunError, match='is not a folder'):
        evaluate(tmp_path / 'missing')


def test_summary_text_names_the_flags(polaris, tmp_path):
    t, xyz, xyzw, rows = _ins_truth(polaris)
    est = write_odometry(tmp_path / 'b', polaris, t, xyz + [1.0, 0, 0], xyzw,
                         _ins_variances(rows))
    text = summary_text(evaluate(polaris, [est]))
    assert 'flag: /odometry/filtered: biased in east' in text


# -- a live run's bag -----------------------------------------------------------------

LIVE_ONLY = ('/clock', '/tf', '/tf_static')     # what the live rig publishes at the root


def _live_bag(run, bag, namespace='', start_s=0.0):
    """A bag as ``ros2 bag record`` takes it of the live rig: each vehicle's
    sim/truth (from its truth.jsonl, the chassis) and the rig's topics copied
    from the recording's bag (live equals headless), all under ``namespace``
    and from ``start_s`` on (a recording started after the rig)."""
    from rosbags.highlevel import AnyReader

    t0 = _t0_ns(run)
    start_ns = t0 + int(start_s * 1e9)
    ns = f'/{namespace}' if namespace else ''
    header, time = T['std_msgs/msg/Header'], T['builtin_interfaces/msg/Time']
    g = 'geometry_msgs/msg/'
    zero = T[g + 'Vector3'](x=0.0, y=0.0, z=0.0)
    episode = json.loads((run / 'episode.json').read_text())
    with Writer(bag, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        for vehicle in episode['vehicles']:
            own = '/'.join(p for p in (ns.strip('/'), vehicle['namespace'], 'sim/truth') if p)
            truth = writer.add_connection('/' + own, 'nav_msgs/msg/Odometry',
                                          typestore=TYPESTORE)
            for row in _rows(run / vehicle['folder'] / 'truth.jsonl'):
                ns_ = t0 + int(round(row['time_s'] * 1e9))
                if ns_ < start_ns:
                    continue
                p, q = row['chassis']['position_enu_m'], row['chassis']['orientation_enu_xyzw']
                msg = T['nav_msgs/msg/Odometry'](
                    header=header(stamp=time(sec=ns_ // 10**9, nanosec=ns_ % 10**9),
                                  frame_id='grid'), child_frame_id='chassis',
                    pose=T[g + 'PoseWithCovariance'](pose=T[g + 'Pose'](
                        position=T[g + 'Point'](x=p[0], y=p[1], z=p[2]),
                        orientation=T[g + 'Quaternion'](x=q[0], y=q[1], z=q[2], w=q[3])),
                        covariance=np.zeros(36)),
                    twist=T[g + 'TwistWithCovariance'](twist=T[g + 'Twist'](linear=zero,
                                                                            angular=zero),
                                                       covariance=np.zeros(36)))
                writer.write(truth, ns_, TYPESTORE.serialize_cdr(msg, 'nav_msgs/msg/Odometry'))
        with AnyReader([run / 'bag'], default_typestore=TYPESTORE) as reader:
            out = {c.topic: writer.add_connection(c.topic if c.topic in LIVE_ONLY
                                                  else ns + c.topic, c.msgtype,
                                                  typestore=TYPESTORE)
                   for c in reader.connections}
            for c, t, raw in reader.messages(start=start_ns):
                writer.write(out[c.topic], t, raw)
    return bag


@pytest.mark.parametrize('namespace', ['', 'demo'])
def test_a_live_bag_scores_as_its_recording(polaris, tmp_path, namespace):
    bag = _live_bag(polaris, tmp_path / 'live', namespace)
    recorded = evaluate(polaris, [f'{polaris / "bag"}:/vehicle/odom', 'gnss'])
    live = evaluate(bag, rig='polaris')            # its INS odometry and receiver fix
    ns = f'/{namespace}' if namespace else ''
    assert [e['name'] for e in live['estimates']] == [f'{ns}/vehicle/odom',
                                                      f'{ns}/gnss_receiver/fix']
    for a, b in zip(recorded['estimates'], live['estimates']):
        assert b['position']['horizontal']['rmse'] == pytest.approx(
            a['position']['horizontal']['rmse'], rel=1e-4)
        assert b['by_fix_state'].keys() == a['by_fix_state'].keys()
        for state in a['by_fix_state']:
            assert b['by_fix_state'][state]['samples'] == pytest.approx(
                a['by_fix_state'][state]['samples'], abs=2)
    with pytest.raises(RunError, match='give the rig it ran'):
        evaluate(bag)
    with pytest.raises(RunError, match='reads the rows of a recording'):
        evaluate(bag, ['ins'], rig='polaris')
    with pytest.raises(RunError, match='no sim/truth of vehicle'):
        evaluate(bag, rig='mixed')


def test_a_live_bag_of_the_maxxum_from_a_late_start(outage, tmp_path):
    """The Maxxum's bag holds /odom beside /ground_truth/odom and /wheel/odom:
    its INS is /odom.  Recorded from 60 s on, the estimates are available all
    the time there is truth (not 3/4 of the run)."""
    bag = _live_bag(outage, tmp_path / 'live', start_s=60.0)
    recorded = evaluate(outage, [f'{outage / "bag"}:/odom'])
    live = evaluate(bag, rig='rtk_outage')
    ins, gnss = live['estimates']
    assert (ins['name'], gnss['name']) == ('/odom', '/gnss_receiver/fix')
    assert ins['availability']['share'] > 0.99
    assert ins['samples']['first_s'] == pytest.approx(60.0, abs=0.02)
    assert ins['samples']['scored'] == pytest.approx(100 * 180, abs=5)       # 100 Hz
    assert recorded['estimates'][0]['position']['horizontal']['rmse'] != pytest.approx(
        ins['position']['horizontal']['rmse'], rel=1e-4)        # 60 s fewer: not the same
    assert live['estimates'][0]['point'] == 'base_footprint'


@pytest.fixture(scope='module')
def two_agents(tmp_path_factory):
    """60 s of two Polaris agents (agent0 at the root, agent1 in /agent1)."""
    out = tmp_path_factory.mktemp('eval') / 'two'
    record(RecordRequest('polaris', out, RigOptions(agents=2, duration_s=60.0),
                         progress=False, report=False))
    return out


def test_a_live_bag_of_two_agents(two_agents, tmp_path, capsys):
    """agent0's topics at the root beside /agent1/...: each vehicle's own, scored
    against its own truth as the recording scores them."""
    bag = _live_bag(two_agents, tmp_path / 'live')
    out = tmp_path / 'eval'
    assert main(['evaluate', str(bag), '--rig', 'polaris', '--agents', '2', '--out', str(out),
                 '--no-plots']) == 0
    live = json.loads((out / 'summary.json').read_text())
    names = {e['name']: e for e in live['estimates']}
    assert sorted(names) == ['/agent1/gnss_receiver/fix', '/agent1/vehicle/odom',
                             '/gnss_receiver/fix', '/vehicle/odom']
    recorded = evaluate(two_agents, [f'{two_agents / "bag"}:{topic}' for topic in names])
    for e in recorded['estimates']:             # each found its vehicle, its truth
        assert names[e['name']]['vehicle'] == e['vehicle']
        assert names[e['name']]['vehicle'] == ('agent1' if 'agent1' in e['name'] else 'agent0')
        assert names[e['name']]['position']['horizontal']['rmse'] == pytest.approx(
            e['position']['horizontal']['rmse'], rel=1e-4)
    capsys.readouterr()
    # told the rig had one vehicle, the bag fits it twice: at the root and in /agent1
    assert main(['evaluate', str(bag), '--rig', 'polaris', '--out', str(out)]) == 2
    assert 'under several namespaces (/, /agent1): give --namespace' in capsys.readouterr().err
    # told the one vehicle's namespace, it takes the topics there, whose frames are agent1's
    with pytest.raises(RunError, match="frame 'agent1/base_footprint' is not a frame of"):
        evaluate(bag, rig='polaris', rig_options=RigOptions(namespace='agent1'))


def test_out_never_takes_a_recording(polaris, tmp_path, capsys):
    """--out at the run itself (or any recording) is refused: nothing of it is
    touched; nor does a recording replace an evaluation."""
    before = sorted(p.name for p in polaris.iterdir())
    assert main(['evaluate', str(polaris), '--out', str(polaris), '--no-plots']) == 2
    assert 'holds a recording or a bag' in capsys.readouterr().err
    assert sorted(p.name for p in polaris.iterdir()) == before
    out = tmp_path / 'eval'
    assert main(['evaluate', str(polaris), '--out', str(out), '--no-plots']) == 0
    kept = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert main(['record', '--duration', '1', '--out', str(out), '--no-progress']) == 2
    assert f'{out} holds an acres_sim evaluation, not a recording' in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == kept
