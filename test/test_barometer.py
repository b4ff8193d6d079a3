"""The barometer (core.barometer) against independent references: the
pressure at the site altitude against the 1976 U.S. Standard Atmosphere's
formula and published table, the white noise and the Gauss-Markov drift
against their configured sigma and correlation time, the pressure altitude
against the barometric formula, and the stream's draw count."""

import math

import numpy as np
import pytest

from acres_sim.core.barometer import (B_ALTITUDE, B_DRIFT, B_PRESSURE, B_TRUE_PRESSURE,
                                      VALUES_PER_SAMPLE, Barometer, BarometerParams)
from acres_sim.core.rng import Pcg32
from acres_sim.core.truth import T_P, T_Q, TRUTH_SIZE

SITE_M = 705.0 * 1200.0 / 3937.0        # the tile origin: 705 US survey ft NAVD88


def standard_pressure(h_m):
    """The 1976 standard atmosphere's pressure below 11 km, written out: the
    geopotential altitude H = r0 h / (r0 + h), then P0 (T0 / (T0 + L H)) ^ (g0 M0 / (R* L))."""
    r0, g0, m0, r_star = 6356766.0, 9.80665, 0.0289644, 8.31432
    t0, lapse, p0 = 288.15, -0.0065, 101325.0
    big_h = r0 * h_m / (r0 + h_m)
    return p0 * (t0 / (t0 + lapse * big_h)) ** (g0 * m0 / (r_star * lapse))


def params(**kw):
    values = dict(hz=60.0, noise=True, sigma_pa=2.7, drift_sigma=0.001825, drift_tau_s=3600.0,
                  qnh_pa=101325.0, site_altitude_m=SITE_M, lever_arm_m=np.zeros(3))
    values.update(kw)
    return BarometerParams(**values)


def parked(steps, z=0.0):
    """States of a vehicle standing at the tile origin, its chassis origin at height z."""
    states = np.zeros((steps, TRUTH_SIZE))
    states[:, T_Q + 3] = 1.0
    states[:, T_P + 2] = z
    return states


def run(model, states, k0=0):
    return model.run_block(k0, states)


def test_the_pressure_at_the_site_is_the_1976_atmospheres():
    model = Barometer(params(noise=False), Pcg32(1, 10))
    _k, samples = run(model, parked(121))
    expected = standard_pressure(SITE_M)
    assert samples[:, B_TRUE_PRESSURE] == pytest.approx(expected, rel=1e-9)
    assert samples[:, B_PRESSURE] == pytest.approx(expected, rel=1e-9)
    # the published table (NOAA-S/T 76-1562, geometric altitude): 98945 Pa at 200 m,
    # 97772 Pa at 300 m, 89876 Pa at 1 km; the formula above gives them to its 5 digits
    for h, table in ((200.0, 98945.0), (300.0, 97772.0), (1000.0, 89876.0)):
        assert standard_pressure(h) == pytest.approx(table, abs=1.0)
    assert 97772.0 < expected < 98945.0
    # 2 m higher: the pressure falls by rho g 2 m (~23 Pa)
    _k, higher = run(Barometer(params(noise=False), Pcg32(1, 10)), parked(2, z=2.0))
    assert higher[0, B_TRUE_PRESSURE] == pytest.approx(standard_pressure(SITE_M + 2.0), rel=1e-9)
    assert 20.0 < expected - higher[0, B_TRUE_PRESSURE] < 26.0


def test_the_pressure_altitude_follows_the_barometric_formula_and_qnh():
    for qnh in (101325.0, 100000.0, 103000.0):
        model = Barometer(params(noise=False, qnh_pa=qnh), Pcg32(1, 10))
        _k, s = run(model, parked(3))
        p_out = s[0, B_PRESSURE]
        assert p_out == pytest.approx(standard_pressure(SITE_M) + qnh - 101325.0, rel=1e-12)
        t0, a, r, g = 288.15, -6.5e-3, 287.058, 9.80665
        formula = t0 / a * ((p_out / qnh) ** (-a * r / g) - 1.0)
        assert s[0, B_ALTITUDE] == pytest.approx(formula, abs=1e-9)
    # at the standard QNH the pressure altitude is the true altitude to a few cm
    _k, s = run(Barometer(params(noise=False), Pcg32(1, 10)), parked(3))
    assert s[0, B_ALTITUDE] == pytest.approx(SITE_M, abs=0.3)


def test_the_white_noise_has_the_configured_sigma():
    sigma = 2.7
    model = Barometer(params(drift_sigma=0.0), Pcg32(7, 10))
    _k, s = run(model, parked(120 * 300))       # 18000 samples at 60 Hz
    error = s[:, B_PRESSURE] - s[:, B_TRUE_PRESSURE]
    n = len(error)
    # chi-square, 99.9 % two-sided for n ~ 18000: n (1 -+ 3.3 sqrt(2/n))
    ratio = float(np.sum(error ** 2)) / (n * sigma ** 2)
    assert abs(ratio - 1.0) < 3.3 * math.sqrt(2.0 / n)
    assert abs(error.mean()) < 3.3 * sigma / math.sqrt(n)


def test_the_drift_is_a_gauss_markov_process_of_the_configured_tau_and_sigma():
    tau, s_drift, hz = 2.0, 0.01, 60.0
    model = Barometer(params(sigma_pa=0.0, drift_sigma=s_drift, drift_tau_s=tau, hz=hz),
                      Pcg32(11, 10))
    _k, s = run(model, parked(120 * 3600))      # one hour at 60 Hz
    b = s[:, B_DRIFT]
    w = math.exp(-1.0 / (hz * tau))
    # lag-one regression: b_k+1 = w b_k + (1 - w) s eta
    w_hat = float(np.dot(b[:-1], b[1:]) / np.dot(b[:-1], b[:-1]))
    tau_hat = -1.0 / (hz * math.log(w_hat))
    assert tau_hat == pytest.approx(tau, rel=0.1)
    innovation = b[1:] - w * b[:-1]
    assert innovation.std() == pytest.approx((1.0 - w) * s_drift, rel=0.02)
    # and the pressure carries it as a factor: p = P (1 + b)
    assert s[:, B_PRESSURE] == pytest.approx(s[:, B_TRUE_PRESSURE] * (1.0 + b), rel=1e-12)


@pytest.mark.parametrize('noise', [True, False])
def test_each_sample_draws_two_values(noise):
    model = Barometer(params(noise=noise), Pcg32(3, 10))
    steps, _s = run(model, parked(600))
    reference = Pcg32(3, 10)
    reference.gaussians(VALUES_PER_SAMPLE * len(steps))
    assert VALUES_PER_SAMPLE == 2
    assert model.rng.state.tolist() == reference.state.tolist()
