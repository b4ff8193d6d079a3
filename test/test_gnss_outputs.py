"""acres_sim's GNSS outputs for localization stacks: the $GNGST sentence, the
gps_msgs/GPSFix message and the dual-antenna heading (docs/gnss_receiver.md).

Independent references: a GST parser written here in nmea_navsat_driver's
field order (its parser.py: fields 1-8 as utc_time, ranges_std_dev,
semi_major / semi_minor_ellipse_std_dev, semi_major_orientation, lat / lon /
alt_std_dev, safe_float on each; its regex and checksum rule) and pynmea2;
scipy for the 95 % radii (chi-square quantiles, a quadrature of the 3-D
probability in another form) and for the rotations (scipy.spatial.transform);
the stream's Gaussians drawn again with core.rng's make_stream, whose PCG32 is
checked against published vectors in test_rng.py; the upstream gps_msgs type
hash, computed by rosbags from gps_umd's own GPSFix.msg/GPSStatus.msg (ros2-devel)
and equal to the hash rosidl's generator writes for the package built here.
"""

import datetime as dt
import json
import math
from pathlib import Path
import re
import sys

import numpy as np
import pynmea2
import pytest
from scipy import integrate, optimize, stats
from scipy.spatial.transform import Rotation

from acres_sim.config import load_config
from acres_sim.pipeline.models import gnss_heading
from acres_sim.core.gnss.accuracy import (horizontal_radius_95, spherical_radius_95,
                                          vertical_bound_95)
from acres_sim.core.gnss.fix_state import DGPS, NO_FIX, RTK_FIXED, RTK_FLOAT, SINGLE
from acres_sim.core.gnss.heading import (GnssHeading, REC_HEADING, REC_PITCH, REC_TRUE_HEADING,
                                         REC_TRUE_PITCH, REC_VALID, heading_params)
from acres_sim.core.gnss.nmea import gst_sentence
from acres_sim.core.rng import make_stream
from acres_sim.pipeline import messages as msg
from acres_sim.pipeline.vehicle import build_vehicle

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 9, 23, 15, 0, 0, tzinfo=UTC)
STAMP = 1_790_175_600 * 10**9 + 500_000_000

# RIHS01 of gps_msgs/msg/GPSFix and GPSStatus: rosbags' hash of gps_umd's own
# gps_msgs/msg/*.msg (branch ros2-devel, after "Added RTK fix/float enums").
UPSTREAM_RIHS01 = {
    'gps_msgs/msg/GPSFix':
        'RIHS01_f4e11a63872a198f70300a3990f50b096ed822f2db2bb626f6cdcee5f0f92942',
    'gps_msgs/msg/GPSStatus':
        'RIHS01_481c1a7691711de43c84dfb1b075f2ce8c4890c2dbd4b7d85e3f1ce0eaf890b6',
}


def xor(body):
    value = 0
    for ch in body:
        value ^= ord(ch)
    return '%02X' % value


def navsat_driver_parse(sentence):
    """A GST as nmea_navsat_driver reads it: its validity regex, its checksum
    rule, then fields 1-8 in its order, each as its safe_float (NaN if empty)."""
    assert re.match(r'(^\$GP|^\$GN|^\$GL|^\$IN).*\*[0-9A-Fa-f]{2}$', sentence)
    data, checksum = sentence.split('*')
    assert xor(data[1:]) == checksum.upper()
    fields = [f.strip(',') for f in sentence.split(',')]
    assert fields[0][3:] == 'GST'

    def safe_float(text):
        try:
            return float(text)
        except ValueError:
            return math.nan
    names = ('ranges_std_dev', 'semi_major_ellipse_std_dev', 'semi_minor_ellipse_std_dev',
             'semi_major_orientation', 'lat_std_dev', 'lon_std_dev', 'alt_std_dev')
    out = {'utc_time': fields[1]}
    out.update({name: safe_float(fields[i + 2].split('*')[0]) for i, name in enumerate(names)})
    return out


# ---------------------------------------------------------------------------
# $GNGST

def test_gst_worked_out_by_hand():
    # rms = sqrt(0.012^2 + 0.015^2 + 0.030^2) / 2.0 = 0.035623 / 2 = 0.0178 m
    body = 'GNGST,150000.00,0.018,0.015,0.012,0.0,0.015,0.012,0.030'
    assert gst_sentence(T0, 4, [0.012, 0.015, 0.030], 2.0) == f'${body}*{xor(body)}'
    # east larger: the major axis points east (90 deg from north)
    east = gst_sentence(T0, 5, [0.25, 0.2, 0.5], None)
    assert east.split('*')[0] == '$GNGST,150000.00,,0.250,0.200,90.0,0.200,0.250,0.500'


def test_gst_without_a_fix_has_only_the_time():
    body = 'GNGST,150000.00,,,,,,,'
    assert gst_sentence(T0, 0, [1.0, 1.0, 2.0], 2.0) == f'${body}*{xor(body)}'
    assert gst_sentence(T0, 1, None, 2.0) == f'${body}*{xor(body)}'
    parsed = navsat_driver_parse(f'${body}*{xor(body)}')
    # the driver then falls back to its default error (it checks isnan)
    assert all(math.isnan(v) for k, v in parsed.items() if k != 'utc_time')


@pytest.mark.parametrize('sigma, pdop', [([0.004, 0.004, 0.009], 1.7),
                                         ([0.73, 0.73, 1.61], 2.4), ([3.1, 2.2, 9.4], 12.0)])
def test_gst_parses_in_nmea_navsat_driver_order_and_with_pynmea2(sigma, pdop):
    sentence = gst_sentence(dt.datetime(2026, 9, 23, 15, 3, 7, 230000), 4, sigma, pdop)
    se, sn, su = sigma
    driver = navsat_driver_parse(sentence)
    assert driver['utc_time'] == '150307.23'
    # the covariance the driver builds comes from fields 6-8: our north, east, up sigmas
    assert driver['lat_std_dev'] == pytest.approx(sn, abs=5e-4)
    assert driver['lon_std_dev'] == pytest.approx(se, abs=5e-4)
    assert driver['alt_std_dev'] == pytest.approx(su, abs=5e-4)
    assert driver['ranges_std_dev'] == pytest.approx(math.sqrt(se**2 + sn**2 + su**2) / pdop,
                                                     abs=5e-4)
    gst = pynmea2.parse(sentence, check=True)
    assert isinstance(gst, pynmea2.GST) and gst.talker == 'GN'
    assert gst.timestamp == dt.time(15, 3, 7, 230000, tzinfo=UTC)
    assert (gst.std_dev_major, gst.std_dev_minor) == pytest.approx(
        (max(se, sn), min(se, sn)), abs=5e-4)
    assert gst.orientation == (0.0 if sn >= se else 90.0)
    assert (gst.std_dev_latitude, gst.std_dev_longitude, gst.std_dev_altitude) == \
        pytest.approx((sn, se, su), abs=5e-4)


@pytest.fixture(scope='module')
def receiver_rows():
    """Rows of the Polaris receiver in the open (antenna far from the garage)."""
    config = load_config(rig='polaris')
    vehicle = build_vehicle(config, 'polaris', sensors=('gnss',))
    steps = np.arange(0, 1200, 12)
    antennas = np.array([[-150.0 + 0.1 * k, 80.0, 182.0] for k in range(len(steps))])
    records = vehicle.gnss.epoch_records(steps / 120, antennas)
    return config, [vehicle.gnss.row(k / 120, a, r) for k, a, r in zip(steps, antennas, records)]


def test_gst_of_a_row_has_the_ggas_time_and_the_rows_sigmas(receiver_rows):
    _config, rows = receiver_rows
    fixed = [r for r in rows if r['position_enu_m'] is not None]
    assert len(fixed) > 50
    for row in fixed:
        gst = msg.gst_string(row).data
        gga = row['nmea_gga']
        assert gst.split(',')[1] == gga.split(',')[1]
        parsed = navsat_driver_parse(gst)
        se, sn, su = row['sigma_enu_m']
        assert row['covariance_enu_m2'] == pytest.approx([se**2, sn**2, su**2], rel=1e-12)
        assert (parsed['lon_std_dev'], parsed['lat_std_dev'], parsed['alt_std_dev']) == \
            pytest.approx((se, sn, su), abs=5e-4)
    no_fix = dict(fixed[0], position_enu_m=None, sigma_enu_m=None, gga_quality=0,
                  fix_type='no_fix')
    assert msg.gst_string(no_fix).data.split('*')[0].endswith(',,,,,,,')
    assert msg.gst_string({k: v for k, v in fixed[0].items() if k != 'nmea_gga'}) is None


# ---------------------------------------------------------------------------
# 95 % radii (GPSFix err, err_horz, err_vert)

def radius_95_by_quadrature(s, su):
    """The 3-D radius from P(c) = integral over |u| <= sqrt(c) of the normal
    density of u times P(e^2 + n^2 <= c - u^2), solved with brentq."""
    def inside(r):
        c = r * r
        value, _ = integrate.quad(lambda u: stats.norm.pdf(u, scale=su)
                                  * (1.0 - math.exp(-(c - u * u) / (2 * s * s))),
                                  -r, r, epsabs=1e-13, epsrel=1e-12)
        return value - 0.95
    return optimize.brentq(inside, 1e-9, 10.0 * max(s, su), xtol=1e-14)


@pytest.mark.parametrize('s, su', [(1.0, 1.0), (0.008, 0.015), (0.7, 1.6), (2.0, 0.3),
                                   (0.01, 0.1)])
def test_95_percent_radii(s, su):
    assert vertical_bound_95(su) == pytest.approx(stats.norm.ppf(0.975) * su, rel=1e-12)
    assert horizontal_radius_95(s, s) == pytest.approx(math.sqrt(stats.chi2.ppf(0.95, 2)) * s,
                                                       rel=1e-12)
    assert spherical_radius_95(s, s, su) == pytest.approx(radius_95_by_quadrature(s, su),
                                                          rel=1e-8)
    if s == su:
        assert spherical_radius_95(s, s, s) == pytest.approx(
            math.sqrt(stats.chi2.ppf(0.95, 3)) * s, rel=1e-9)


# ---------------------------------------------------------------------------
# gps_msgs/GPSFix

def test_gps_msgs_types_have_upstreams_hash():
    for name, digest in UPSTREAM_RIHS01.items():
        assert msg.TYPESTORE.hash_rihs01(name) == digest


def test_the_built_gps_msgs_package_has_upstreams_hash():
    """rosidl's own type description (what a gps_msgs subscriber compares)."""
    share = Path(sys.prefix) / 'share' / 'gps_msgs' / 'msg'
    if not (share / 'GPSFix.json').is_file():
        pytest.skip('gps_msgs is not built here (make setup builds it)')
    for name in ('GPSFix', 'GPSStatus'):
        description = json.loads((share / f'{name}.json').read_text())
        hashes = {h['type_name']: h['hash_string'] for h in description['type_hashes']}
        assert hashes[f'gps_msgs/msg/{name}'] == UPSTREAM_RIHS01[f'gps_msgs/msg/{name}']


STATES = {'rtk_fixed': (4, 19), 'rtk_float': (5, 20), 'dgps': (2, 18), 'single': (1, 0),
          'no_fix': (0, -1)}


@pytest.mark.parametrize('state', list(STATES))
def test_gps_fix_fields_are_the_rows(receiver_rows, state):
    _config, rows = receiver_rows
    row = dict(next(r for r in rows if r['position_enu_m'] is not None))
    quality, status = STATES[state]
    row.update(fix_type=state, gga_quality=quality)
    if state == 'no_fix':
        for name in ('position_enu_m', 'sigma_enu_m', 'covariance_enu_m2', 'latitude_deg',
                     'longitude_deg', 'ellipsoidal_height_m'):
            row[name] = None
    fix = msg.gps_fix_from_gnss_row(row, STAMP, 'gnss_antenna')
    data = bytes(msg.TYPESTORE.serialize_cdr(fix, 'gps_msgs/msg/GPSFix'))
    fix = msg.TYPESTORE.deserialize_cdr(data, 'gps_msgs/msg/GPSFix')
    assert fix.header.frame_id == fix.status.header.frame_id == 'gnss_antenna'
    assert fix.header.stamp.sec * 10**9 + fix.header.stamp.nanosec == STAMP
    assert fix.time == STAMP / 1e9
    assert fix.status.status == status
    assert fix.status.satellites_used == row['satellites_used']
    assert fix.status.satellites_visible == row['satellites_above_mask']
    assert (fix.hdop, fix.vdop, fix.pdop) == (row['hdop'], row['vdop'], row['pdop'])
    assert fix.gdop == fix.tdop == -1.0
    assert fix.status.motion_source == fix.status.orientation_source == 0
    for name in ('track', 'speed', 'climb', 'pitch', 'roll', 'dip', 'err_track', 'err_speed',
                 'err_climb', 'err_time', 'err_pitch', 'err_roll', 'err_dip'):
        assert math.isnan(getattr(fix, name)), name
    if state == 'no_fix':
        assert fix.status.position_source == 0
        assert all(math.isnan(v) for v in (fix.latitude, fix.longitude, fix.altitude,
                                           fix.err, fix.err_horz, fix.err_vert))
        assert fix.position_covariance_type == 0 and not fix.position_covariance.any()
        return
    assert fix.status.position_source == 1
    assert (fix.latitude, fix.longitude, fix.altitude) == (
        row['latitude_deg'], row['longitude_deg'], row['ellipsoidal_height_m'])
    se, sn, su = row['sigma_enu_m']
    assert se == sn                        # the model's horizontal sigmas are equal
    assert fix.err_horz == pytest.approx(math.sqrt(stats.chi2.ppf(0.95, 2)) * se, rel=1e-12)
    assert fix.err_vert == pytest.approx(stats.norm.ppf(0.975) * su, rel=1e-12)
    assert fix.err == pytest.approx(radius_95_by_quadrature(se, su), rel=1e-8)
    assert fix.position_covariance_type == 2
    assert fix.position_covariance.tolist() == [row['covariance_enu_m2'][0], 0, 0,
                                                0, row['covariance_enu_m2'][1], 0,
                                                0, 0, row['covariance_enu_m2'][2]]


def test_the_gnss_channel_sends_gga_gst_then_gpsfix(receiver_rows):
    config = load_config(rig='polaris', overrides={'delay_s': 0.1})
    vehicle = build_vehicle(config, 'polaris', sensors=('gnss',))
    channel = vehicle.channels['gnss']
    assert [t for t, _ in channel.topic_types] == [
        'gnss_receiver/fix', 'gnss_receiver/nmea', 'gnss_receiver/gpsfix', '/diagnostics']
    antennas = np.array([[-150.0, 80.0, 182.0]] * 3)
    steps = np.array([0, 12, 24])
    channel.push_epochs(steps, antennas, vehicle.gnss.epoch_records(steps / 120, antennas))
    for d in channel.drain(119):
        topics = [t for t, _ in d.messages]
        assert topics == ['gnss_receiver/fix', 'gnss_receiver/nmea', 'gnss_receiver/nmea',
                          'gnss_receiver/gpsfix', '/diagnostics']
        strings = [msg.TYPESTORE.deserialize_cdr(data, 'std_msgs/msg/String').data
                   for t, data in d.messages if t == 'gnss_receiver/nmea']
        assert strings == [d.row['nmea_gga'], msg.gst_string(d.row).data]


# ---------------------------------------------------------------------------
# Dual-antenna heading

SIGMAS = {RTK_FIXED: (0.005, 0.01), RTK_FLOAT: (0.1, 0.2)}


def random_attitudes(n, seed=5):
    rng = np.random.default_rng(seed)
    euler = np.column_stack([rng.uniform(-math.pi, math.pi, n), rng.uniform(-0.4, 0.4, n),
                             rng.uniform(-0.4, 0.4, n)])          # yaw, pitch, roll
    return Rotation.from_euler('ZYX', euler), euler


@pytest.mark.parametrize('baseline, mount_deg', [([1.2, 0.0, 0.0], 0.0),
                                                 ([-1.0, 0.0, 0.0], 180.0),
                                                 ([0.0, 1.5, 0.0], 90.0),
                                                 ([0.8, -0.8, 0.1], -45.0)])
def test_heading_geometry_is_the_baselines_azimuth_less_its_mounting(baseline, mount_deg):
    rotations, euler = random_attitudes(200)
    model = GnssHeading(heading_params(baseline, SIGMAS), seed=1, sequence=18)
    records = model.epoch_records(rotations.as_quat(), np.full(200, RTK_FIXED))
    world = rotations.apply(np.array(baseline, dtype=float))
    azimuth = np.arctan2(world[:, 1], world[:, 0])
    expected = np.angle(np.exp(1j * (azimuth - math.radians(mount_deg))))
    assert np.abs(np.angle(np.exp(1j * (records[:, REC_TRUE_HEADING] - expected)))).max() < 1e-12
    if mount_deg in (0.0, 180.0):
        # a fore-aft baseline: the heading IS the vehicle's yaw, its tilt the vehicle's pitch
        assert np.abs(np.angle(np.exp(1j * (records[:, REC_TRUE_HEADING] - euler[:, 0])))).max() \
            < 1e-12
        assert records[:, REC_TRUE_PITCH] == pytest.approx(euler[:, 1], abs=1e-12)
    else:
        assert np.isnan(records[:, REC_TRUE_PITCH]).all() and np.isnan(records[:, REC_PITCH]).all()


def test_heading_draws_two_gaussians_every_epoch_in_every_state():
    """Errors: sigma_rel / L times the stream's Gaussians (2 per epoch, also
    where there is no heading); NaN in dgps, single and no_fix."""
    baseline = [-1.25, 0.0, 0.0]
    states = np.array([RTK_FIXED, NO_FIX, RTK_FLOAT, SINGLE, DGPS, RTK_FIXED] * 40)
    rotations, _ = random_attitudes(len(states), seed=9)
    model = GnssHeading(heading_params(baseline, SIGMAS), seed=4242, sequence=18)
    records = model.epoch_records(rotations.as_quat(), states)
    stream = make_stream(4242 - 17183, 'gnss_heading')
    g = np.array([stream.gaussian() for _ in range(2 * len(states))]).reshape(-1, 2)
    for i, fix in enumerate(states.tolist()):
        r = records[i]
        if fix not in SIGMAS:
            assert r[REC_VALID] == 0.0 and math.isnan(r[REC_HEADING])
            continue
        h, v = SIGMAS[fix]
        heading_error = math.remainder(r[REC_HEADING] - r[REC_TRUE_HEADING], 2 * math.pi)
        assert heading_error == pytest.approx(h / 1.25 * g[i, 0], abs=1e-12)
        assert r[REC_PITCH] - r[REC_TRUE_PITCH] == pytest.approx(v / 1.25 * g[i, 1], abs=1e-12)
    headings = records[records[:, REC_VALID] != 0.0, REC_HEADING]
    assert (headings >= -math.pi).all() and (headings < math.pi).all()
    # the stream went on by exactly 2 per epoch
    assert model.rng.gaussian() == stream.gaussian()


def test_heading_with_the_noise_off_is_the_truth_and_still_draws():
    rotations, _ = random_attitudes(10)
    on = GnssHeading(heading_params([1.0, 0, 0], SIGMAS), seed=3, sequence=18)
    off = GnssHeading(heading_params([1.0, 0, 0], SIGMAS, noise=False), seed=3, sequence=18)
    fixes = np.full(10, RTK_FLOAT)
    on.epoch_records(rotations.as_quat(), fixes)
    records = off.epoch_records(rotations.as_quat(), fixes)
    assert (records[:, REC_HEADING] == records[:, REC_TRUE_HEADING]).all()
    assert on.rng.gaussian() == off.rng.gaussian()


def test_polaris_heading_settings_and_stream():
    polaris = load_config(rig='polaris')
    model = gnss_heading(polaris, agent_index=2)
    assert model.params.baseline_flu_m.tolist() == [-1.0, 0.0, 0.0]
    assert model.params.length_m == 1.0 and model.params.pitch_axis == -1.0
    assert (model.seed, model.sequence) == (42 + 17183 + 2 * 7919, 18)
    row = model.row(model.epoch_records([[0, 0, 0, 1]], [RTK_FIXED])[0])
    assert row['sigma_heading_rad'] == pytest.approx(0.005 / 1.0)
    assert row['sigma_pitch_deg'] == pytest.approx(math.degrees(0.010 / 1.0))
    assert row['truth']['baseline_azimuth_deg'] == 180.0 and row['truth']['heading_deg'] == 0.0
    assert row['baseline_mount_azimuth_deg'] == 180.0


def test_heading_imu_message():
    model = GnssHeading(heading_params([-1.0, 0, 0], SIGMAS), seed=8, sequence=18)
    rotation = Rotation.from_euler('ZYX', [2.5, -0.1, 0.05])
    rows = [model.row(r) for r in model.epoch_records(np.tile(rotation.as_quat(), (2, 1)),
                                                         [RTK_FIXED, DGPS])]
    assert msg.heading_imu(rows[1], STAMP, 'gnss_antenna') is None    # no heading: nothing
    imu = msg.TYPESTORE.deserialize_cdr(bytes(msg.TYPESTORE.serialize_cdr(
        msg.heading_imu(rows[0], STAMP, 'gnss_antenna'), 'sensor_msgs/msg/Imu')),
        'sensor_msgs/msg/Imu')
    q = imu.orientation
    yaw, pitch, roll = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_euler('ZYX')
    assert (yaw, pitch, roll) == pytest.approx((rows[0]['heading_rad'], rows[0]['pitch_rad'], 0),
                                               abs=1e-12)
    assert imu.header.frame_id == 'gnss_antenna'
    assert imu.orientation_covariance.tolist() == pytest.approx(
        [1000.0, 0, 0, 0, (0.01 / 1.0) ** 2, 0, 0, 0, (0.005 / 1.0) ** 2], rel=1e-12)
    assert imu.angular_velocity_covariance[0] == imu.linear_acceleration_covariance[0] == -1.0
    across = GnssHeading(heading_params([0, 1.2, 0], SIGMAS), seed=8, sequence=18)
    row = across.row(across.epoch_records([rotation.as_quat()], [RTK_FIXED])[0])
    imu = msg.heading_imu(row, STAMP, 'gnss_antenna')
    assert row['pitch_rad'] is None and imu.orientation_covariance[4] == 1000.0


def _variants(rows):
    """Rows of the receiver in every case its messages tell apart: each fix
    state, a fix without a covariance, a site without geodetic keys or GGA,
    fault events at work, and odd string lengths (the CDR padding)."""
    base = next(r for r in rows if r['position_enu_m'] is not None)
    out = list(rows)
    for state, (quality, _status) in STATES.items():
        out.append(dict(base, fix_type=state, gga_quality=quality))
    out.append(dict(base, covariance_enu_m2=None))
    out.append({k: v for k, v in base.items()
                if k not in ('latitude_deg', 'longitude_deg', 'ellipsoidal_height_m', 'nmea_gga')})
    out.append(dict(base, events=['jamming'], solution='RTK fixed'))
    out.append(dict(base, events=['a', 'glitch b'], solution='x' * 5, rtk_lock_age_s=1.5))
    out.append(dict(base, pdop=None, sigma_enu_m=None))
    return out


@pytest.mark.parametrize('gpsfix', [True, False])
def test_the_gnss_channels_block_encoding_is_the_row_builders(receiver_rows, gpsfix):
    """The receiver's messages encoded a block at a time (the fix and GPSFix by
    column, the status by cdr.diagnostic_array) are, byte for byte, those of
    the row builders serialised by rosbags, one row at a time."""
    _config, rows = receiver_rows
    vehicle = build_vehicle(load_config(rig='polaris', overrides={'gnss.gpsfix': gpsfix}),
                            'polaris', sensors=('gnss',))
    channel = vehicle.channels['gnss']
    rows = _variants(rows)
    steps = np.arange(len(rows)) * 12 + 3
    got = channel.encode_rows(rows, steps)
    serialise = msg.TYPESTORE.serialize_cdr
    for row, k, messages in zip(rows, steps.tolist(), got):
        stamp = vehicle.timeline.ns(k)
        expected = [('gnss_receiver/fix', serialise(msg.navsat_fix_from_gnss_row(
            row, stamp, channel.frame, channel.service), 'sensor_msgs/msg/NavSatFix'))]
        if row.get('nmea_gga') is not None:
            expected += [('gnss_receiver/nmea', serialise(msg.nmea_string(row),
                                                          'std_msgs/msg/String')),
                         ('gnss_receiver/nmea', serialise(msg.gst_string(row),
                                                          'std_msgs/msg/String'))]
        if gpsfix:
            expected.append(('gnss_receiver/gpsfix', serialise(
                msg.gps_fix_from_gnss_row(row, stamp, channel.frame), 'gps_msgs/msg/GPSFix')))
        expected.append(('/diagnostics', serialise(msg.diagnostics_from_gnss_row(
            row, stamp, channel.status_name), 'diagnostic_msgs/msg/DiagnosticArray')))
        assert [(t, bytes(d)) for t, d in expected] == messages
        assert channel.encode(row, k) == messages          # one row: the same bytes
    assert channel.encode_rows([], []) == []


def test_the_heading_channels_block_encoding_is_the_row_builder():
    config = load_config(rig='polaris')
    vehicle = build_vehicle(config, 'polaris', sensors=('gnss',))
    channel = vehicle.channels['gnss_heading']
    quats = random_attitudes(40)[0].as_quat()
    fixes = np.resize([RTK_FIXED, RTK_FLOAT, DGPS, NO_FIX], 40)
    rows = [channel.model.row(r) for r in channel.model.epoch_records(quats, fixes)]
    assert any(r['heading_valid'] for r in rows) and not all(r['heading_valid'] for r in rows)
    steps = np.arange(40) * 12
    for row, k, messages in zip(rows, steps.tolist(), channel.encode_rows(rows, steps)):
        imu = msg.heading_imu(row, vehicle.timeline.ns(k), channel.frame)
        assert messages == ([] if imu is None else [('gnss_receiver/heading', bytes(
            msg.TYPESTORE.serialize_cdr(imu, 'sensor_msgs/msg/Imu')))])
