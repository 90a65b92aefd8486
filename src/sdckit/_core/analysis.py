"""Kernels of the information loss of types 2 and 3: the variance of estimated totals by
domain, weighted covariance and correlation matrices, and Pearson's chi-square test of
independence of two categorical variables. Pure NumPy (SciPy for the chi-square tail).

Type 2 (impact on the variance of estimation): the linearisation variances of
:mod:`sdckit._core.estimates` of each estimated mean and total, in both files.
Type 3 (impact on the intensity of connections): covariance and correlation matrices on
subdomains (Winkler 1998's analytic validity) and whether a test of independence reaches the
same conclusion.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .estimates import cluster_variance

__all__ = ["ChiSquare", "chi_square", "domain_value_totals", "weighted_covariance"]


def domain_value_totals(codes, n_categories, y, w, cluster, n_clusters) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Totals Y^_c = sum w_i y_i [D_i = c] over the records with y observed, their variances
    (influence values z_i = w_i y_i [D_i = c], summed within clusters) and the records used:
    ``(totals, variances, n)``."""
    use = (codes >= 0) & ~np.isnan(y)
    z_all = np.where(use, w * np.nan_to_num(y), 0.0)
    totals = np.bincount(codes[use], weights=z_all[use], minlength=n_categories).astype(float)
    n = np.bincount(codes[use], minlength=n_categories)
    var = np.full(n_categories, np.nan)
    for c in np.flatnonzero(n > 0):
        var[c] = cluster_variance(cluster, n_clusters, np.where(codes == c, z_all, 0.0))
    return totals, var, n


def weighted_covariance(X: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Covariance and correlation matrices of the complete rows of ``X`` (n, p) with weights w:
    S = sum w_i (x_i - m)(x_i - m)' / (sum w_i (n - 1) / n), m the weighted mean (with unit
    weights the usual n - 1 form); r_jk = S_jk / sqrt(S_jj S_kk) (NaN for a constant
    variable). Returns ``(S, R, n)``, NaN matrices with fewer than two complete rows."""
    ok = ~np.isnan(X).any(axis=1)
    Xc, wc = X[ok], w[ok]
    n, p = Xc.shape
    if n < 2:
        return np.full((p, p), np.nan), np.full((p, p), np.nan), n
    m = wc @ Xc / wc.sum()
    D = Xc - m
    S = (D * wc[:, None]).T @ D / (wc.sum() * (n - 1) / n)
    sd = np.sqrt(np.clip(np.diag(S), 0.0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        R = S / np.outer(sd, sd)
    R[np.outer(sd, sd) == 0] = np.nan
    return S, R, n


class ChiSquare(NamedTuple):
    """Pearson's X^2 test of independence: ``statistic``, ``df``, ``p_value`` (NaN when
    undefined: fewer than two categories of either variable), Cramér's ``v`` and the
    records ``n``."""

    statistic: float
    df: int
    p_value: float
    v: float
    n: int


def chi_square(a: np.ndarray, b: np.ndarray, la: int, lb: int) -> ChiSquare:
    """X^2 = sum_cells (O - E)^2 / E, E = row total x column total / n, over the records with
    both values observed (codes 0..la-1 and 0..lb-1, -1 missing) and the rows and columns
    that occur; df = (r - 1)(c - 1); V = sqrt(X^2 / (n (min(r, c) - 1)))."""
    from scipy.stats import chi2

    ok = (a >= 0) & (b >= 0)
    O = np.bincount(a[ok] * lb + b[ok], minlength=la * lb).reshape(la, lb).astype(float)
    O = O[O.sum(axis=1) > 0][:, O.sum(axis=0) > 0]
    n = int(O.sum())
    r, c = O.shape
    if r < 2 or c < 2:
        return ChiSquare(math.nan, 0, math.nan, math.nan, n)
    E = np.outer(O.sum(axis=1), O.sum(axis=0)) / n
    x2 = float(((O - E) ** 2 / E).sum())
    df = (r - 1) * (c - 1)
    return ChiSquare(x2, df, float(chi2.sf(x2, df)), math.sqrt(x2 / (n * (min(r, c) - 1))), n)
