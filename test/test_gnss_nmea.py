"""Tests of acres_sim.core.gnss.nmea (spec: Output Row, nmea_gga).

The independent reference is pynmea2's parser (a test requirement): every
sentence is parsed with its checksum checked and each field compared with the
input.  One sentence is also written out by hand, field by field, with its
checksum computed by a separate loop in this file.
"""

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
import pynmea2
import pytest

from acres_sim.core.gnss.nmea import gga_sentence, nmea_checksum

UTC = dt.timezone.utc
T0 = dt.datetime(2026, 9, 23, 15, 0, 0, tzinfo=UTC)


def xor_checksum(sentence):
    """Checksum by hand: XOR of the characters between '$' and '*'."""
    body = sentence[sentence.index('$') + 1:sentence.index('*')]
    value = 0
    for ch in body:
        value = value ^ ord(ch)
    return '%02X' % value


def gga(**kw):
    args = dict(utc=T0, lat_deg=40.4715765, lon_deg=-86.9943737, quality=4, satellites=12,
                hdop=0.8, altitude_m=213.456, separation_m=-33.627, correction_age_s=1.3)
    args.update(kw)
    return gga_sentence(**args)


def parse(sentence):
    msg = pynmea2.parse(sentence, check=True)  # raises on a wrong checksum
    assert isinstance(msg, pynmea2.GGA)
    assert msg.talker == 'GN'
    return msg


# ---------------------------------------------------------------------------
# A sentence worked out by hand
# ---------------------------------------------------------------------------

def test_known_good_sentence():
    # 40.4715765 deg = 40 deg + 0.4715765 * 60 = 28.29459 min
    # 86.9943737 deg = 86 deg + 0.9943737 * 60 = 59.662422 min, west
    body = ('GNGGA,150000.00,4028.2945900,N,08659.6624220,W,4,12,0.8,'
            '213.456,M,-33.627,M,1.3,0001')
    expected = '$' + body + '*' + xor_checksum('$' + body + '*')
    assert gga() == expected
    assert xor_checksum(expected) == '%02X' % pynmea2.NMEASentence.checksum(body)


def test_checksum_format():
    sentence = gga()
    assert sentence.startswith('$GNGGA,')
    assert sentence[-3] == '*'
    assert sentence[-2:] == xor_checksum(sentence)
    assert sentence[-2:] == sentence[-2:].upper()
    assert '\r' not in sentence and '\n' not in sentence
    assert nmea_checksum('A') == '41' and nmea_checksum('AB') == '03' and nmea_checksum('') == '00'


def test_parses_with_pynmea2():
    msg = parse(gga())
    assert msg.timestamp == dt.time(15, 0, 0, tzinfo=UTC)
    assert msg.latitude == pytest.approx(40.4715765, abs=1e-9)
    assert msg.longitude == pytest.approx(-86.9943737, abs=1e-9)
    assert msg.gps_qual == 4
    assert msg.num_sats == '12'
    assert float(msg.horizontal_dil) == 0.8
    assert msg.altitude == 213.456 and msg.altitude_units == 'M'
    assert float(msg.geo_sep) == -33.627 and msg.geo_sep_units == 'M'
    assert float(msg.age_gps_data) == 1.3
    assert msg.ref_station_id == '0001'


# ---------------------------------------------------------------------------
# Every field equals the input (property test)
# ---------------------------------------------------------------------------

def expected_time(utc):
    """Nearest hundredth of a second (half up), as a datetime.time, wrapped at midnight."""
    whole = utc.hour * 3600 + utc.minute * 60 + utc.second
    seconds = Decimal(whole) + Decimal(utc.microsecond) / 10**6
    return int((seconds * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP)) % (86400 * 100)


def centis_of(time):
    whole = time.hour * 3600 + time.minute * 60 + time.second
    return whole * 100 + round(time.microsecond / 10**4)


finite = dict(allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(
    utc=st.datetimes(min_value=dt.datetime(2000, 1, 1), max_value=dt.datetime(2100, 1, 1)),
    lat=st.floats(-90.0, 90.0, **finite),
    lon=st.floats(-180.0, 180.0, **finite),
    quality=st.integers(1, 5),
    satellites=st.integers(0, 99),
    hdop=st.floats(0.0, 99.99, **finite),
    altitude=st.floats(-500.0, 9000.0, **finite),
    separation=st.floats(-120.0, 120.0, **finite),
    age=st.one_of(st.none(), st.floats(0.0, 999.0, **finite)),
    station=st.sampled_from(['0001', '0002', '1023']),
)
def test_every_field_round_trips(utc, lat, lon, quality, satellites, hdop, altitude,
                                 separation, age, station):
    sentence = gga_sentence(utc, lat, lon, quality, satellites, hdop, altitude, separation,
                            age, station)
    msg = parse(sentence)
    assert sentence[-2:] == xor_checksum(sentence)
    assert centis_of(msg.timestamp) == expected_time(utc)
    assert msg.latitude == pytest.approx(lat, abs=1e-9)
    assert msg.longitude == pytest.approx(lon, abs=1e-9)
    assert len(msg.lat.split('.')[0]) == 4 and len(msg.lat.split('.')[1]) == 7
    assert len(msg.lon.split('.')[0]) == 5 and len(msg.lon.split('.')[1]) == 7
    assert float(msg.lat[2:]) < 60.0 and float(msg.lon[3:]) < 60.0
    assert msg.gps_qual == quality
    assert msg.num_sats == f'{satellites:02d}'
    assert float(msg.horizontal_dil) == pytest.approx(hdop, abs=0.05 + 1e-12)
    assert msg.altitude == pytest.approx(altitude, abs=5e-4 + 1e-9)
    assert float(msg.geo_sep) == pytest.approx(separation, abs=5e-4 + 1e-9)
    if age is None:
        assert msg.age_gps_data == ''
    else:
        assert float(msg.age_gps_data) == pytest.approx(age, abs=0.05 + 1e-12)
    assert msg.ref_station_id == station


@pytest.mark.parametrize('lat, lon, lat_dir, lon_dir', [
    (40.4715765, 86.9943737, 'N', 'E'),
    (40.4715765, -86.9943737, 'N', 'W'),
    (-40.4715765, 86.9943737, 'S', 'E'),
    (-40.4715765, -86.9943737, 'S', 'W'),
])
def test_hemispheres(lat, lon, lat_dir, lon_dir):
    msg = parse(gga(lat_deg=lat, lon_deg=lon))
    assert (msg.lat_dir, msg.lon_dir) == (lat_dir, lon_dir)
    assert (msg.lat, msg.lon) == ('4028.2945900', '08659.6624220')
    assert msg.latitude == pytest.approx(lat, abs=1e-9)
    assert msg.longitude == pytest.approx(lon, abs=1e-9)


@pytest.mark.parametrize('lat, lon, lat_text, lon_text', [
    (40.99999999999, -86.999999999999, '4100.0000000', '08700.0000000'),  # 59.9999999994'
    (40.0 + 59.99999999 / 60, 0.0, '4100.0000000', '00000.0000000'),
    (40.0 + 59.99999994 / 60, 1.0 + 59.99999996 / 60, '4059.9999999', '00200.0000000'),
    (89.999999999999, 179.999999999999, '9000.0000000', '18000.0000000'),
    (-0.0, -0.0, '0000.0000000', '00000.0000000'),
    (7.0 / 60, 0.5 / 60, '0007.0000000', '00000.5000000'),
])
def test_minutes_carry_into_degrees(lat, lon, lat_text, lon_text):
    msg = parse(gga(lat_deg=lat, lon_deg=lon))
    assert (msg.lat, msg.lon) == (lat_text, lon_text)


def test_tiny_negative_rounds_to_zero_without_south():
    msg = parse(gga(lat_deg=-1e-13, lon_deg=-1e-13, separation_m=-1e-7, correction_age_s=-1e-16))
    assert (msg.lat, msg.lat_dir) == ('0000.0000000', 'N')
    assert (msg.lon, msg.lon_dir) == ('00000.0000000', 'E')
    assert msg.geo_sep == '0.000' and msg.age_gps_data == '0.0'


@pytest.mark.parametrize('utc, text', [
    (dt.datetime(2026, 9, 23, 15, 59, 59, 996000, tzinfo=UTC), '160000.00'),
    (dt.datetime(2026, 9, 23, 23, 59, 59, 995000, tzinfo=UTC), '000000.00'),  # half up, wraps
    (dt.datetime(2026, 9, 23, 23, 59, 59, 994999, tzinfo=UTC), '235959.99'),
    (dt.datetime(2026, 9, 23, 12, 34, 56, 789000, tzinfo=UTC), '123456.79'),
    (dt.datetime(2026, 9, 23, 12, 34, 56, 784999, tzinfo=UTC), '123456.78'),
    (dt.datetime(2026, 9, 23, 9, 5, 7, 50000), '090507.05'),                   # naive = UTC
    (dt.datetime(2026, 9, 23, 10, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=-5))), '150000.00'),
])
def test_time_field_rounds_and_carries(utc, text):
    sentence = gga(utc=utc)
    assert sentence.split(',')[1] == text
    parse(sentence)


# ---------------------------------------------------------------------------
# No fix, missing values, input checks
# ---------------------------------------------------------------------------

def test_no_fix_sentence_has_empty_position():
    sentence = gga_sentence(T0, None, None, 0, 3, 99.99, None, None, None)
    fields = sentence[:-3].split(',')
    assert fields[2:6] == ['', '', '', ''] and fields[9:13] == ['', '', '', '']
    msg = parse(sentence)
    assert msg.gps_qual == 0
    assert (msg.lat, msg.lat_dir, msg.lon, msg.lon_dir) == ('', '', '', '')
    assert msg.altitude is None and msg.geo_sep == ''
    assert msg.num_sats == '03' and msg.horizontal_dil == '100.0'
    assert msg.age_gps_data == '' and msg.ref_station_id == '0001'


def test_no_fix_ignores_a_given_position():
    assert gga(quality=0) == gga_sentence(T0, None, None, 0, 12, 0.8, None, None, 1.3)


def test_nan_age_is_empty():
    assert parse(gga(correction_age_s=float('nan'))).age_gps_data == ''


@pytest.mark.parametrize('bad', [
    dict(quality=6), dict(quality=-1), dict(satellites=100), dict(satellites=-1),
    dict(lat_deg=None), dict(lon_deg=float('nan')), dict(lat_deg=90.5), dict(lon_deg=-181.0),
    dict(altitude_m=float('inf')),
])
def test_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        gga(**bad)
