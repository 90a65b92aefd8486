r"""Noise addition to continuous variables: pure NumPy kernels on float matrices (NaN = missing).

With s_j the standard deviation of variable j (denominator n - 1, missing values left out),
xbar_j its mean and w = noise / 100:

* additive: x'_ij = x_ij + e_ij, e_ij ~ N(0, (w s_j)^2) (additive0: zeros are kept);
* correlated: x'_i = x_i + e_i, e_i ~ N_p(0, w Sigma), Sigma the covariance of the complete
  records;
* correlated2 (Kim 1986; Brand 2002): x'_ij = sqrt(1 - delta^2) x_ij + delta e_ij,
  e_ij ~ N((1 - sqrt(1 - delta^2)) / delta xbar_j, s_j^2), which keeps means and variances and
  multiplies the covariances by 1 - delta^2;
* restr: the deterministic shrinkage x' = c x + (1 - c) xbar towards the mean, with
  c = sqrt((n - 1 - w) / ((n + 1)(1 + w))) for n < 500 and c = sqrt((n - 1) / (n + n w - 1))
  otherwise (the linear part of Kim's transformation, as sdcMicro applies it: no random term);
* ROMM (Ting, Fienberg & Trottini 2008): X' = T X, T the Gram-Schmidt orthonormalisation of
  the columns of I_n + p Z, Z an n x n matrix of standard normal draws; T is orthogonal, so
  X'^T X' = X^T X;
* outdect (Templ & Meindl 2008): noise N(0, (1.96 s_j / sqrt(n) w)^2) added to the outliers
  only: records above the 0.99 quantile of a variable, or with a robust (MCD) Mahalanobis
  distance above sqrt(chi^2_{p, 0.975}).

Every function returns new arrays; a missing value stays missing.
"""

from __future__ import annotations

import math

import numpy as np

from .robust import chi2_ppf, mahalanobis_sq, mcd

__all__ = [
    "additive",
    "correlated",
    "correlated2",
    "covariance_factor",
    "outdect",
    "outlier_mask",
    "restr",
    "restr_factor",
    "romm",
    "sample_sd",
]


def sample_sd(x: np.ndarray) -> float:
    """Standard deviation (denominator n - 1) of the non-missing values; NaN with fewer than 2."""
    v = x[~np.isnan(x)]
    return float(np.std(v, ddof=1)) if v.size >= 2 else math.nan


def additive(X: np.ndarray, noise: float, rng: np.random.Generator, keep_zeros: bool = False):
    """x'_ij = x_ij + e_ij, e_ij ~ N(0, (noise/100 s_j)^2), drawn for the observed cells of
    each column in turn (``keep_zeros``: a zero stays zero). A column with fewer than two
    observed values is left as it is (its noise sd is NaN).

    Returns the new matrix and the noise sd of each column."""
    out = np.array(X, dtype=float, copy=True)
    sds = np.full(out.shape[1], math.nan)
    for j in range(out.shape[1]):
        x = out[:, j]
        s = sample_sd(x)
        if not math.isfinite(s):
            continue
        sds[j] = noise / 100.0 * s
        rows = np.flatnonzero(~np.isnan(x))
        e = rng.normal(0.0, sds[j], rows.size)
        if keep_zeros:
            e[x[rows] == 0] = 0.0
        x[rows] += e
    return out, sds


def covariance_factor(cov: np.ndarray) -> np.ndarray:
    """A matrix L with L L^T = cov for a symmetric positive semi-definite ``cov`` (from its
    eigen-decomposition, so a singular covariance is fine; tiny negative eigenvalues of
    rounding are set to 0)."""
    values, vectors = np.linalg.eigh(np.asarray(cov, dtype=float))
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def correlated(X: np.ndarray, noise: float, rng: np.random.Generator):
    """x'_i = x_i + e_i, e_i ~ N_p(0, noise/100 Sigma), Sigma the covariance (n - 1) of the
    records observed in every column; e is drawn for every record and added to its observed
    cells. With fewer than two complete records the matrix is returned unchanged (None as
    noise sd).

    Returns the new matrix and the noise sd of each column (sqrt of the diagonal of
    noise/100 Sigma)."""
    X = np.asarray(X, dtype=float)
    complete = ~np.isnan(X).any(axis=1)
    if np.count_nonzero(complete) < 2:
        return X.copy(), None
    S = noise / 100.0 * np.atleast_2d(np.cov(X[complete], rowvar=False))
    E = rng.standard_normal(X.shape) @ covariance_factor(S).T
    return X + E, np.sqrt(np.diag(S))


def correlated2(X: np.ndarray, delta: float, rng: np.random.Generator):
    """x'_ij = sqrt(1 - delta^2) x_ij + delta e_ij, e_ij ~ N((1 - sqrt(1 - delta^2)) / delta
    xbar_j, s_j^2), column by column over the observed cells (Kim 1986). A column with fewer
    than two observed values is left as it is.

    Returns the new matrix and the sd of the added term delta e_j (= delta s_j)."""
    out = np.array(X, dtype=float, copy=True)
    d1 = math.sqrt(1.0 - delta * delta)
    sds = np.full(out.shape[1], math.nan)
    for j in range(out.shape[1]):
        x = out[:, j]
        s = sample_sd(x)
        if not math.isfinite(s):
            continue
        rows = np.flatnonzero(~np.isnan(x))
        mean = float(x[rows].mean())
        e = rng.normal((1.0 - d1) / delta * mean, s, rows.size)
        x[rows] = d1 * x[rows] + delta * e
        sds[j] = delta * s
    return out, sds


def restr_factor(n: int, w: float) -> float:
    """The shrinkage factor c of ``restr``: sqrt((n - 1 - w) / ((n + 1)(1 + w))) for n < 500,
    sqrt((n - 1) / (n + n w - 1)) otherwise; 0 when the first numerator is negative (n <= 1 + w)."""
    if n < 500:
        return math.sqrt(max(n - 1.0 - w, 0.0) / ((n + 1.0) * (1.0 + w)))
    return math.sqrt((n - 1.0) / (n + n * w - 1.0))


def restr(X: np.ndarray, noise: float):
    """x' = c x + (1 - c) xbar per column, c = ``restr_factor(n_j, noise/100)`` with n_j the
    observed values of the column (deterministic). Returns the new matrix and c per column
    (NaN for a column with no observed value)."""
    out = np.array(X, dtype=float, copy=True)
    cs = np.full(out.shape[1], math.nan)
    for j in range(out.shape[1]):
        x = out[:, j]
        rows = np.flatnonzero(~np.isnan(x))
        if rows.size == 0:
            continue
        cs[j] = c = restr_factor(rows.size, noise / 100.0)
        x[rows] = c * x[rows] + (1.0 - c) * x[rows].mean()
    return out, cs


def romm(X: np.ndarray, Z: np.ndarray, perturbation: float) -> np.ndarray:
    """X' = T X, T the Gram-Schmidt orthonormalisation of the columns of A = I + p Z (complete
    records only: X must have no missing value).

    Gram-Schmidt gives A = T R with R upper triangular with a positive diagonal, so
    T X = A (R^{-1} X). R comes from a Householder QR of A (its rows' signs fixed so that the
    diagonal is positive), which is more accurate than Gram-Schmidt itself and does not form T:
    O(n^3) time, O(n^2) memory."""
    from scipy.linalg import solve_triangular

    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if n == 0:
        return X.copy()
    A = perturbation * np.asarray(Z, dtype=float)
    A[np.diag_indices(n)] += 1.0
    R = np.linalg.qr(A, mode="r")
    sign = np.where(np.diag(R) < 0, -1.0, 1.0)
    return A @ solve_triangular(R, sign[:, None] * X)


def outlier_mask(X: np.ndarray, seed: int) -> tuple[np.ndarray, bool]:
    """Outliers of ``outdect``: records above the 0.99 quantile (linear interpolation, R's
    type 7) of any column, or whose robust Mahalanobis distance (reweighted MCD with h of
    about half the complete records, seeded with ``seed``) exceeds sqrt(chi^2_{p, 0.975}).
    Above 1,500 complete records only the best subsample solution of FAST-MCD is carried to
    all records and iterated there (``n_full=1``; about six times faster on 10^6 records).

    Returns the mask and whether the robust distance could be computed (it cannot with p + 1
    complete records or fewer, or when half the records lie on a hyperplane: an exact fit)."""
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    mask = np.zeros(n, dtype=bool)
    for j in range(p):
        x = X[:, j]
        obs = ~np.isnan(x)
        if obs.any():
            mask |= obs & (x > np.quantile(x[obs], 0.99))
    complete = np.flatnonzero(~np.isnan(X).any(axis=1))
    try:
        est = mcd(X[complete], 0.5, seed=seed, n_full=1)
    except (ValueError, np.linalg.LinAlgError):
        return mask, False
    d2 = mahalanobis_sq(X[complete], est.center, est.cov)
    mask[complete[d2 > chi2_ppf(0.975, p)]] = True
    return mask, True


def outdect(X: np.ndarray, noise: float, rng: np.random.Generator, mask: np.ndarray):
    """Noise N(0, (1.96 s_j / sqrt(n_j) noise/100)^2) added to the observed cells of the
    records in ``mask`` (n_j observed values of column j). Returns the new matrix and the
    noise sd of each column."""
    out = np.array(X, dtype=float, copy=True)
    sds = np.full(out.shape[1], math.nan)
    for j in range(out.shape[1]):
        x = out[:, j]
        s = sample_sd(x)
        if not math.isfinite(s):
            continue
        sds[j] = 1.96 * s / math.sqrt(np.count_nonzero(~np.isnan(x))) * noise / 100.0
        rows = np.flatnonzero(mask & ~np.isnan(x))
        x[rows] += rng.normal(0.0, sds[j], rows.size)
    return out, sds
