"""Is a reported covariance honest?  The normalised estimation error squared
(NEES) of each sample, e^T P^-1 e, and the share of samples whose error lies
within 1, 2 and 3 sigma of the reported covariance (the Mahalanobis distance
sqrt(NEES) <= k), against the shares a Gaussian error of that covariance
would give (chi-square with the dimension's degrees of freedom: 68.3 / 95.4 /
99.7 % in one dimension, 19.9 / 73.9 / 97.1 % in three).

The verdict compares the average NEES (ANEES) with the dimension: an honest
filter has ANEES = dof.  A filter's errors are correlated in time (the INS's
over 30 s), so a run of minutes holds only a few dozen independent samples
and its ANEES scatters by tens of percent about dof.  The number of
independent samples is estimated from the NEES series itself, n_eff = N / (1 +
2 sum rho_k), the sum of its autocorrelations up to the first that is not
positive (for a part of a run, a fix state or an event window, at the rate
found over the whole run: a short window cannot show a long correlation).
A series too short for its own correlation time cannot show it either: its
autocorrelation, taken about its own mean, falls to zero early, and the
estimate comes out near 4 to 10 where the truth is 1 (30 s of an error
correlated over 30 s).  Below ``MIN_INDEPENDENT`` the estimate is therefore
not trusted and the series counts as one independent sample, so that only a
gross mis-statement is called.  An honest filter's ANEES lies within the
central 99 % of chi2(n_eff dof) / n_eff.  The estimate is *overconfident*
when its ANEES lies above that and above ``OVERCONFIDENT`` x dof (its
variance under-reported by more than a factor of two), *conservative* when
below both that and ``CONSERVATIVE`` x dof, else *consistent* (including:
too few independent samples to tell).  Of honest 3-D errors correlated over
30 s, 300 simulated runs each of 30 s to 20 min: at most 1.7 % called either
(15 % at 30 s and 60 s when the estimate was trusted however low).
"""

import numpy as np
from scipy.stats import chi2

__all__ = ['CONSERVATIVE', 'MIN_INDEPENDENT', 'OVERCONFIDENT', 'SIGMAS', 'consistency',
           'effective_samples', 'nees', 'usable']

SIGMAS = (1, 2, 3)
OVERCONFIDENT = 2.0
CONSERVATIVE = 0.5
#: Fewer independent samples than this, as estimated from the series itself: count one.
MIN_INDEPENDENT = 20.0


def usable(covariances):
    """Which of ``covariances`` (N x d x d) are reported: finite and positive
    definite (a variance of 0, -1 or NaN says "not known", in ROS and here)."""
    p = np.asarray(covariances, dtype=float)
    ok = np.all(np.isfinite(p), axis=(1, 2))
    ok[ok] = np.linalg.eigvalsh(p[ok]).min(axis=1) > 0.0
    return ok


def nees(errors, covariances):
    """e^T P^-1 e for each row of ``errors`` (N x d) and ``covariances`` (N x d x d);
    NaN where the covariance is not reported (see :func:`usable`)."""
    e = np.asarray(errors, dtype=float)
    p = np.asarray(covariances, dtype=float)
    out = np.full(len(e), np.nan)
    ok = usable(p)
    solved = np.linalg.solve(p[ok], e[ok][..., None])[..., 0]
    out[ok] = np.einsum('ij,ij->i', e[ok], solved)
    return out


def effective_samples(values):
    """N / (1 + 2 sum rho_k): the number of independent samples the series
    ``values`` is worth, its autocorrelations rho_k summed up to the first
    that is not positive."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    x = x - x.mean()
    if n < 3 or not np.any(x):
        return float(n)
    size = 1 << int(2 * n - 1).bit_length()
    spectrum = np.fft.rfft(x, size)
    acf = np.fft.irfft(spectrum * np.conj(spectrum), size)[:n]
    rho = acf[1:] / acf[0]
    stop = np.argmax(rho <= 0.0) if np.any(rho <= 0.0) else len(rho)
    return float(max(1.0, n / (1.0 + 2.0 * rho[:stop].sum())))


def consistency(values, dof, independent_share=None):
    """The NEES statistics of ``values`` (one per sample) of a ``dof``-dimensional
    error: mean, median, the shares within 1/2/3 sigma observed and expected,
    the independent samples (``independent_share`` of them when given, else
    estimated from the series, one when that says fewer than
    ``MIN_INDEPENDENT``), the 99 % band of an honest filter's mean,
    and the verdict."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return None
    mean = float(np.mean(values))
    within = {f'{k}sigma': float(np.mean(values <= k * k)) for k in SIGMAS}
    expected = {f'{k}sigma': float(chi2.cdf(k * k, dof)) for k in SIGMAS}
    if independent_share is None:
        n_eff = effective_samples(values)
        n_eff = n_eff if n_eff >= MIN_INDEPENDENT else 1.0
    else:
        n_eff = max(1.0, independent_share * len(values))
    low, high = (float(chi2.ppf(q, n_eff * dof) / n_eff) for q in (0.005, 0.995))
    ratio = mean / dof
    verdict = ('overconfident' if mean > high and ratio > OVERCONFIDENT else
               'conservative' if mean < low and ratio < CONSERVATIVE else 'consistent')
    return {'dof': dof, 'samples': int(len(values)), 'effective_samples': n_eff,
            'nees_mean': mean, 'nees_median': float(np.median(values)), 'nees_ratio': ratio,
            'nees_band_99': [low, high], 'within': within, 'expected_within': expected,
            'verdict': verdict}
