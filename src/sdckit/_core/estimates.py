"""Survey-estimate kernels on plain NumPy arrays: weighted totals, shares and means by domain,
a weighted least-squares regression on domain indicators, and their linearisation variances.

Inputs are int codes (``-1`` = missing) of the domain variables, float values (NaN = missing)
of the numeric variables, the design weights (> 0) and the cluster (household) ids 0..G-1. No
frame library and no validation here: :func:`sdckit.estimates_change` validates once and calls
these kernels.

Variance: every estimate theta^ is written through its influence values z_i (the first-order
Taylor linearisation), summed within clusters, z_h = sum_{i in h} z_i, and

    var(theta^) = G / (G - 1) * sum_h (z_h - zbar)^2,   zbar = (1/G) sum_h z_h,

over the G clusters of the file (the ultimate-cluster, with-replacement approximation: no
finite-population correction, no strata). Records outside a domain contribute z_i = 0 and stay
in the count G (domain estimation). Influence values:

* total N^_c = sum w_i [D_i = c]: z_i = w_i [D_i = c];
* ratio R^ = sum w_i a_i / sum w_i b_i (shares, means): z_i = w_i (a_i - R^ b_i) / sum w_i b_i;
* WLS coefficients beta^ = (X'WX)^-1 X'Wy: z_i = (X'WX)^-1 x_i w_i e_i with e_i = y_i - x_i'beta^
  (the cluster-robust sandwich).
"""

from __future__ import annotations

from statistics import NormalDist
from typing import NamedTuple

import numpy as np

__all__ = [
    "DomainEstimates",
    "Regression",
    "cluster_covariance",
    "cluster_variance",
    "domain_means",
    "domain_totals",
    "normal_quantile",
    "wls",
]


def normal_quantile(confidence: float) -> float:
    """z_{(1 + confidence)/2}, the half-width of a normal confidence interval in standard errors."""
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def cluster_variance(cluster: np.ndarray, n_clusters: int, z: np.ndarray) -> float:
    """G/(G - 1) sum_h (z_h - zbar)^2 of the influence values ``z`` (n,) summed within the
    clusters ``cluster`` (ids 0..G-1); NaN with fewer than two clusters."""
    if n_clusters < 2:
        return float("nan")
    zh = np.bincount(cluster, weights=z, minlength=n_clusters)
    s = zh.sum()
    return float(n_clusters / (n_clusters - 1) * max(float(zh @ zh) - s * s / n_clusters, 0.0))


def cluster_covariance(cluster: np.ndarray, n_clusters: int, Z: np.ndarray) -> np.ndarray:
    """The (p, p) form of :func:`cluster_variance` for influence vectors ``Z`` (n, p)."""
    p = Z.shape[1]
    if n_clusters < 2:
        return np.full((p, p), np.nan)
    U = np.empty((n_clusters, p))
    for j in range(p):
        U[:, j] = np.bincount(cluster, weights=Z[:, j], minlength=n_clusters)
    return _centred_cross(U)


def _centred_cross(U: np.ndarray) -> np.ndarray:
    """G/(G - 1) sum_h (u_h - ubar)(u_h - ubar)' of the cluster sums U (G, p)."""
    G = U.shape[0]
    U = U - U.mean(axis=0)
    return G / (G - 1) * (U.T @ U)


class DomainEstimates(NamedTuple):
    """Per category c of one domain variable: ``estimate`` (total, share or mean), ``se`` (NaN
    when not asked for) and ``n`` (records that enter the estimate)."""

    estimate: np.ndarray
    se: np.ndarray
    n: np.ndarray


def domain_totals(codes, n_categories, w, cluster=None, n_clusters=0):
    """Totals N^_c = sum w_i [D_i = c] and shares N^_c / sum_{D_i observed} w_i of the
    categories 0..C-1 of ``codes``: ``(totals, shares)``, each :class:`DomainEstimates`
    (standard errors with ``cluster`` given)."""
    obs = codes >= 0
    n = np.bincount(codes[obs], minlength=n_categories)
    totals = np.bincount(codes[obs], weights=w[obs], minlength=n_categories).astype(float)
    base = totals.sum()
    shares = totals / base if base > 0 else np.full(n_categories, np.nan)
    se_t = np.full(n_categories, np.nan)
    se_s = np.full(n_categories, np.nan)
    if cluster is not None:
        wo = np.where(obs, w, 0.0)
        for c in range(n_categories):
            in_c = np.where(codes == c, w, 0.0)
            se_t[c] = np.sqrt(cluster_variance(cluster, n_clusters, in_c))
            se_s[c] = np.sqrt(cluster_variance(cluster, n_clusters, (in_c - shares[c] * wo) / base))
    return DomainEstimates(totals, se_t, n), DomainEstimates(shares, se_s, n)


def domain_means(codes, n_categories, y, w, cluster=None, n_clusters=0) -> DomainEstimates:
    """Weighted means R^_c = sum w_i y_i [D_i = c] / sum w_i [D_i = c] over the records with y
    observed (NaN for a category without such a record)."""
    use = (codes >= 0) & ~np.isnan(y)
    cu, wu, yu = codes[use], w[use], y[use]
    n = np.bincount(cu, minlength=n_categories)
    den = np.bincount(cu, weights=wu, minlength=n_categories)
    num = np.bincount(cu, weights=wu * yu, minlength=n_categories)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = num / den
    se = np.full(n_categories, np.nan)
    if cluster is not None:
        cl = cluster[use]
        with np.errstate(invalid="ignore", divide="ignore"):
            z = wu * (yu - means[cu]) / den[cu]
        for c in range(n_categories):
            if n[c]:
                se[c] = np.sqrt(cluster_variance(cl, n_clusters, np.where(cu == c, z, 0.0)))
    return DomainEstimates(means, se, n)


class Regression(NamedTuple):
    """WLS of y on an intercept and domain indicators: per indicator column, ``beta`` and
    ``se`` (NaN when the column was left out: ``kept`` False) and the records used."""

    beta: np.ndarray
    se: np.ndarray
    kept: np.ndarray
    n: int


def wls(y, factors, columns, w, cluster=None, n_clusters=0) -> Regression:
    """Weighted least squares of ``y`` on an intercept and the indicators ``columns``: a list of
    (factor index, category code) pairs over the int code arrays ``factors`` (complete cases:
    y and every factor observed). An indicator column that is empty or aliased (a linear
    combination of the intercept and the columns before it) is left out (``kept`` False).
    Cluster-robust sandwich standard errors with ``cluster`` given. The intercept is not
    returned."""
    cc = ~np.isnan(y)
    for f in factors:
        cc &= f >= 0
    yc, wc = y[cc], w[cc]
    fc = [f[cc] for f in factors]
    p = len(columns)
    A, b = _normal_equations(yc, fc, columns, wc)
    keep = _independent(A)
    beta_all = np.zeros(p + 1)
    ix = np.flatnonzero(keep)
    Ainv = np.linalg.inv(A[np.ix_(ix, ix)]) if ix.size else np.zeros((0, 0))
    beta_all[ix] = Ainv @ b[ix]
    se_all = np.full(p + 1, np.nan)
    if cluster is not None and ix.size:
        we = wc * (yc - _fitted(beta_all, fc, columns, yc.size))
        V = Ainv @ _score_covariance(cluster[cc], n_clusters, fc, columns, ix, we) @ Ainv
        se_all[ix] = np.sqrt(np.clip(np.diag(V), 0.0, None))
    beta = np.where(keep, beta_all, np.nan)[1:]
    return Regression(beta, se_all[1:], keep[1:], int(cc.sum()))


def _normal_equations(y, factors, columns, w):
    """X'WX and X'Wy of the design [1, indicators] from weighted cross-tabulations (the
    design matrix itself is never formed)."""
    p = len(columns)
    A = np.zeros((p + 1, p + 1))
    b = np.zeros(p + 1)
    A[0, 0], b[0] = w.sum(), w @ y
    sizes = {j: int(max(f.max(initial=-1), max((c for k, c in columns if k == j), default=-1))) + 1
             for j, f in enumerate(factors)}  # fmt: skip
    tot = {j: np.bincount(f, weights=w, minlength=sizes[j]) for j, f in enumerate(factors)}
    ytot = {j: np.bincount(f, weights=w * y, minlength=sizes[j]) for j, f in enumerate(factors)}
    cross: dict = {}
    for a, (j, c) in enumerate(columns, start=1):
        A[0, a] = A[a, 0] = tot[j][c]
        b[a] = ytot[j][c]
        for bcol, (k, d) in enumerate(columns[: a - 1], start=1):
            if k == j:
                continue  # two categories of one variable never meet
            if (j, k) not in cross:
                cross[(j, k)] = np.bincount(
                    factors[j] * sizes[k] + factors[k], weights=w, minlength=sizes[j] * sizes[k]
                ).reshape(sizes[j], sizes[k])
            A[a, bcol] = A[bcol, a] = cross[(j, k)][c, d]
        A[a, a] = tot[j][c]
    return A, b


def _independent(A: np.ndarray) -> np.ndarray:
    """Which columns of the Gram matrix ``A`` to keep: in order, each that is not a linear
    combination of the kept ones before it (an empty column is never kept)."""
    p = A.shape[0]
    keep = np.zeros(p, dtype=bool)
    scale = max(float(np.max(np.abs(np.diag(A)))), 1e-300)
    for j in range(p):
        trial = np.flatnonzero(keep).tolist() + [j]
        sub = A[np.ix_(trial, trial)] / scale
        if A[j, j] > 0 and np.linalg.matrix_rank(sub, tol=1e-10) == len(trial):
            keep[j] = True
    return keep


def _fitted(beta_all, factors, columns, n: int) -> np.ndarray:
    """x_i' beta for every record (beta_all[0] the intercept)."""
    out = np.full(n, beta_all[0])
    for a, (j, c) in enumerate(columns, start=1):
        if beta_all[a]:
            out += np.where(factors[j] == c, beta_all[a], 0.0)
    return out


def _score_covariance(cluster, n_clusters, factors, columns, ix, we) -> np.ndarray:
    """:func:`cluster_covariance` of the scores x_i w_i e_i (``we`` = w_i e_i) on the design
    columns ``ix`` (0 = intercept), one column at a time (the design matrix is never formed)."""
    if n_clusters < 2:
        return np.full((len(ix), len(ix)), np.nan)
    U = np.empty((n_clusters, len(ix)))
    for k, a in enumerate(ix):
        z = we if a == 0 else np.where(factors[columns[a - 1][0]] == columns[a - 1][1], we, 0.0)
        U[:, k] = np.bincount(cluster, weights=z, minlength=n_clusters)
    return _centred_cross(U)
