"""The fix-state machine and the error model, epoch by epoch, against the
spec's rules worked by hand, and the error statistics against the sigmas."""

import math

import numpy as np
import pytest

from acres_sim.config import load_config
from acres_sim.config.records import error_params, rtk_params
from acres_sim.core.gnss.errors import (VALUES_PER_EPOCH, draw_epoch_values, error_epoch)
from acres_sim.core.gnss.fix_state import (CONVERGE, DGPS, LOCKED, NO_FIX, RTK_FIXED, RTK_FLOAT,
                                           SINGLE, T_LOCK, T_LOSS, TIME_TO_FIX,
                                           fix_state_step, initial_fix_state, time_to_fix)
from acres_sim.core.rng import Pcg32

DT = 0.1


def params(**overrides):
    return rtk_params(load_config(overrides=overrides))


def step(state, p, t, n_used=12, n_clear=10, pdop=1.5, age=0.5, m=0.0, uniform=0.99,
         g_t=0.0, dt=DT):
    return fix_state_step(state, p, t, dt, n_used, n_clear, pdop, age, m, uniform, g_t)


def expected_ttf(p, g_t, m, recent):
    """T_fix by the spec's formula, written out independently."""
    r = 0.3 if recent else 1.0
    return 10.0 * math.exp(0.5 * g_t) * (1.0 + 2.0 * m) * r


def test_converged_start_is_fixed_at_the_first_capable_epoch():
    p = params()
    state = initial_fix_state(cold_start=False)
    assert step(state, p, 0.0) == RTK_FIXED
    assert state[T_LOCK] == -600.0


def test_cold_start_waits_then_converges_over_the_drawn_time_to_fix():
    p = params(**{'gnss.start': 'cold'})
    state = initial_fix_state(cold_start=True)
    ticks = np.arange(0, 400)
    fixes = [step(state, p, k * DT, g_t=0.4) for k in ticks]
    first_float = ticks[np.array(fixes) == RTK_FLOAT][0]
    assert all(f == NO_FIX for f in fixes[:first_float]) and first_float * DT == pytest.approx(20.0)
    ttf = expected_ttf(p, 0.4, 0.0, recent=False)   # no earlier loss: r = 1
    first_fixed = ticks[np.array(fixes) == RTK_FIXED][0]
    # c grows by dt from the first RTK epoch on; fixed once c >= T_fix
    assert (first_fixed - first_float + 1) * DT >= ttf > (first_fixed - first_float) * DT


@pytest.mark.parametrize('age, n_used, expected', [
    (math.nan, 12, SINGLE), (65.0, 12, SINGLE), (30.0, 12, DGPS), (10.5, 12, DGPS),
    (0.5, 4, DGPS), (0.5, 3, NO_FIX), (math.nan, 3, NO_FIX), (10.0, 12, RTK_FIXED),
])
def test_states_in_the_spec_order(age, n_used, expected):
    state = initial_fix_state(cold_start=False)
    assert step(state, params(), 0.0, age=age, n_used=n_used) == expected


def test_leaving_rtk_ends_the_lock_and_a_quick_return_reacquires_faster():
    p = params()
    state = initial_fix_state(cold_start=False)
    step(state, p, 0.0)
    assert step(state, p, 1.0, age=11.0) == DGPS
    assert state[LOCKED] == 0.0 and state[T_LOSS] == 1.0
    step(state, p, 2.0, age=12.0)
    assert state[T_LOSS] == 1.0            # recorded when the lock ends, not every epoch
    assert step(state, p, 5.0, g_t=-1.0) == RTK_FLOAT
    assert state[T_LOCK] == 5.0 and state[CONVERGE] == pytest.approx(DT)
    assert state[TIME_TO_FIX] == pytest.approx(expected_ttf(p, -1.0, 0.0, recent=True))
    step(state, p, 30.0, age=11.0)
    step(state, p, 45.0, g_t=-1.0)         # 15 s after the loss: beyond the 10 s window
    assert state[TIME_TO_FIX] == pytest.approx(expected_ttf(p, -1.0, 0.0, recent=False))


def test_cycle_slip_restarts_convergence_but_keeps_the_lock_time():
    p = params()
    state = initial_fix_state(cold_start=False)
    step(state, p, 0.0)
    m = 0.5
    threshold = 0.3 * m * DT
    assert step(state, p, 0.1, m=m, uniform=threshold * 1.01) == RTK_FIXED  # no slip
    fix = step(state, p, 0.2, m=m, uniform=threshold * 0.99, g_t=0.2)
    assert state[T_LOCK] == -600.0 and state[T_LOSS] == pytest.approx(0.2)
    assert state[TIME_TO_FIX] == pytest.approx(expected_ttf(p, 0.2, m, recent=True))
    # fixed -> float in the same epoch is also a loss (spec step 5): c is 0 again
    assert fix == RTK_FLOAT and state[CONVERGE] == 0.0
    # a slip while float: c restarts and this capable epoch adds dt
    step(state, p, 0.3, m=m, uniform=threshold * 0.5)
    assert state[CONVERGE] == pytest.approx(DT) and state[T_LOCK] == -600.0


def test_cycle_slip_needs_the_uniform_strictly_below_the_rate():
    p = params()
    m = 0.25
    state = initial_fix_state(cold_start=False)
    step(state, p, 0.0)
    step(state, p, 0.1, m=m, uniform=0.3 * m * DT)     # equal: no slip
    assert state[T_LOSS] == -math.inf and state[CONVERGE] == pytest.approx(2 * DT)


def test_fixed_falls_to_float_when_not_capable_and_draws_again():
    p = params()
    state = initial_fix_state(cold_start=False)
    step(state, p, 0.0)
    assert step(state, p, 0.1, pdop=5.5, g_t=1.0) == RTK_FLOAT   # PDOP above 5
    assert state[T_LOSS] == pytest.approx(0.1) and state[CONVERGE] == 0.0
    assert state[TIME_TO_FIX] == pytest.approx(expected_ttf(p, 1.0, 0.0, recent=True))
    assert step(state, p, 0.2, n_clear=5) == RTK_FLOAT            # fewer than 6 clear
    assert state[CONVERGE] == 0.0


def test_time_to_fix_formula():
    p = params()
    assert time_to_fix(p, 0.0, 1.0, 100.0, -math.inf) == pytest.approx(30.0)
    assert time_to_fix(p, 1.0, 0.0, 100.0, 95.0) == pytest.approx(10.0 * math.e ** 0.5 * 0.3)


# --- the error model ---------------------------------------------------------

class ErrorRun:
    """Drives error_epoch for a fixed state with the receiver's draw order."""

    def __init__(self, p, seed=5):
        self.p = p
        self.rng = Pcg32(seed, 1)
        self.u, self.z = np.zeros(3), np.zeros(3)
        self.values = np.zeros(VALUES_PER_EPOCH)
        self.sigmas = [np.zeros(3) for _ in range(3)]
        self.error = np.zeros(3)
        self.first = True

    def epoch(self, fix, t, dt=DT, t_lock=-600.0, H=1.0, V=1.5, Ho=1.0, Vo=1.5, m=0.0):
        draw_epoch_values(self.rng.state, self.values)
        result = error_epoch(self.p, fix, t, dt, self.first, t_lock, H, V, Ho, Vo, m,
                             self.values, self.u, self.z, *self.sigmas, self.error,
                             self.p.baseline_km, 1.0)
        self.first = False
        return result


def test_eleven_values_per_epoch_with_noise_on_or_off():
    for noise in (True, False):
        run = ErrorRun(error_params(load_config(overrides={'noise': noise})))
        reference = Pcg32(5, 1)
        for k in range(50):
            run.epoch(RTK_FIXED if k % 7 else SINGLE, k * DT)
        for _ in range(50):
            [reference.gaussian() for _ in range(9)], reference.uniform(), reference.gaussian()
        assert np.array_equal(run.rng.state, reference.state)
        if not noise:
            assert not run.error.any() and not any(s.any() for s in run.sigmas)


def test_first_epoch_starts_the_markov_states_from_scratch():
    run = ErrorRun(error_params(load_config()))
    tau, _kh, _kv, dt = run.epoch(RTK_FIXED, 0.0)
    assert dt == 0.1 and tau == 60.0
    assert np.array_equal(run.u, run.values[0:3]) and np.array_equal(run.z, run.values[6:9])


def test_sigmas_of_the_states_by_hand():
    p = error_params(load_config())
    run = ErrorRun(p)
    run.epoch(RTK_FIXED, 0.0, H=1.0, Ho=0.8, V=2.0, Vo=1.0, m=0.5)
    sigma_gm, sigma_w, sigma_mp = run.sigmas
    k_h, k_v = 1.25, 2.0
    assert sigma_gm == pytest.approx([(0.008 + 0.005) * k_h] * 2 + [(0.015 + 0.0075) * k_v])
    assert sigma_w == pytest.approx([0.003 * k_h] * 2 + [0.006 * k_v])
    assert sigma_mp == pytest.approx([0.5 * 0.015] * 2 + [0.5 * 0.015 * 1.5])
    # float: converging from the initial sigma with tau_c 30 s; k clamped at 0.5 and 20
    run.epoch(RTK_FLOAT, 130.0, t_lock=100.0, H=0.1, Ho=1.0, V=50.0, Vo=1.0)
    decay = math.exp(-1.0)
    assert run.sigmas[0][0] == pytest.approx((0.10 + 0.30 * decay + 0.005) * 0.5)
    assert run.sigmas[0][2] == pytest.approx((0.20 + 0.60 * decay + 0.0075) * 20.0)
    # no_fix uses single's parameters; no baseline term outside the RTK states
    run.epoch(NO_FIX, 131.0)
    assert run.sigmas[0][0] == pytest.approx(1.0) and run.sigmas[1][2] == pytest.approx(0.6)
    run.epoch(SINGLE, 132.0)
    assert run.sigmas[0][0] == pytest.approx(1.0) and run.sigmas[0][2] == pytest.approx(2.0)
    run.epoch(DGPS, 133.0)
    assert run.sigmas[0][0] == pytest.approx(0.35) and run.sigmas[0][2] == pytest.approx(0.70)


@pytest.mark.parametrize('fix', [RTK_FIXED, RTK_FLOAT, DGPS, SINGLE])
def test_normalised_errors_are_standard_normal(fix):
    """Error / reported sigma over many independent epochs: mean 0, std 1 per axis."""
    p = error_params(load_config())
    run = ErrorRun(p, seed=11)
    normalised = []
    for k in range(4000):
        # 2000 s between epochs: the Markov states decorrelate, samples independent
        run.epoch(fix, k * 2000.0, dt=2000.0, t_lock=k * 2000.0 - 50.0, m=0.4)
        total = np.sqrt(sum(s ** 2 for s in run.sigmas))
        normalised.append(run.error / total)
    normalised = np.array(normalised)
    n = len(normalised)
    assert np.all(np.abs(normalised.mean(axis=0)) < 5 / math.sqrt(n))
    assert np.all(np.abs(normalised.std(axis=0) - 1.0) < 5 / math.sqrt(2 * n))


def test_gauss_markov_correlation_at_lag_tau_is_one_over_e():
    p = error_params(load_config())
    run = ErrorRun(p, seed=3)
    tau = 60.0   # rtk_fixed
    series = []
    for k in range(200_000):
        run.epoch(RTK_FIXED, k * 1.0, dt=1.0)
        series.append(run.u.copy())
    series = np.array(series)[1000:]
    lag = int(tau)
    for axis in range(3):
        x = series[:, axis]
        correlation = np.corrcoef(x[:-lag], x[lag:])[0, 1]
        assert correlation == pytest.approx(math.exp(-1.0), abs=0.03)
        assert x.std() == pytest.approx(1.0, abs=0.05)
