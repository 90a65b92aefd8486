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


def _cluster_pairs(cluster: np.ndarray, codes: np.ndarray, n_categories: int):
    """The distinct (cluster, category) pairs of the records: ``(pair of each record, category
    of each pair, cluster of each pair)`` (one sort; a cluster meets only the categories of its
    own records)."""
    key = cluster.astype(np.int64) * n_categories + codes
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.reshape(-1), uniq % n_categories, uniq // n_categories


def _by_category(pair_category, pair_sums, n_categories: int, n_clusters: int) -> np.ndarray:
    """Per category c, G/(G-1) sum_h (z_hc - zbar_c)^2 from the cluster sums z_hc of the pairs
    (clusters without a record in c have z_hc = 0)."""
    ss = np.bincount(pair_category, weights=pair_sums * pair_sums, minlength=n_categories)
    s = np.bincount(pair_category, weights=pair_sums, minlength=n_categories)
    return n_clusters / (n_clusters - 1) * np.clip(ss - s * s / n_clusters, 0.0, None)


class DomainEstimates(NamedTuple):
    """Per category c of one domain variable: ``estimate`` (total, share or mean), ``se`` (NaN
    when not asked for) and ``n`` (records that enter the estimate)."""

    estimate: np.ndarray
    se: np.ndarray
    n: np.ndarray


def domain_totals(codes, n_categories, w, cluster=None, n_clusters=0):
    """Totals N^_c = sum w_i [D_i = c] and shares p_c = N^_c / X, X = sum_{D_i observed} w_i,
    of the categories 0..C-1 of ``codes``: ``(totals, shares)``, each :class:`DomainEstimates`
    (standard errors with ``cluster`` given and at least two clusters).

    With S_hc = sum_{i in h, D_i = c} w_i and B_h = sum_{i in h, D_i observed} w_i, the cluster
    sums of the influence values are S_hc (total) and (S_hc - p_c B_h) / X (share); the share's
    sum of squares over all clusters is sum_pairs [(S_hc - p_c B_h)^2 - (p_c B_h)^2] +
    p_c^2 sum_h B_h^2, so only the pairs that occur are visited."""
    obs = codes >= 0
    co, wo = codes[obs], w[obs]
    n = np.bincount(co, minlength=n_categories)
    totals = np.bincount(co, weights=wo, minlength=n_categories).astype(float)
    base = totals.sum()
    shares = totals / base if base > 0 else np.full(n_categories, np.nan)
    se_t = np.full(n_categories, np.nan)
    se_s = np.full(n_categories, np.nan)
    if cluster is not None and n_clusters >= 2 and base > 0:
        g = n_clusters / (n_clusters - 1)
        pair, pc, ph = _cluster_pairs(cluster[obs], co, n_categories)
        S = np.bincount(pair, weights=wo)
        se_t = np.sqrt(_by_category(pc, S, n_categories, n_clusters))
        B = np.bincount(cluster[obs], weights=wo, minlength=n_clusters)
        pB = shares[pc] * B[ph]
        ss = np.bincount(pc, weights=(S - pB) ** 2 - pB**2, minlength=n_categories) + shares**2 * (B @ B)
        mean = (totals - shares * base) / n_clusters
        se_s = np.sqrt(g * np.clip(ss - n_clusters * mean * mean, 0.0, None)) / base
    return DomainEstimates(totals, se_t, n), DomainEstimates(shares, se_s, n)


def domain_means(codes, n_categories, y, w, cluster=None, n_clusters=0) -> DomainEstimates:
    """Weighted means R^_c = sum w_i y_i [D_i = c] / sum w_i [D_i = c] over the records with y
    observed (NaN for a category without such a record); influence values
    w_i (y_i - R^_c) / sum w_i [D_i = c] in category c."""
    use = (codes >= 0) & ~np.isnan(y)
    cu, wu, yu = codes[use], w[use], y[use]
    n = np.bincount(cu, minlength=n_categories)
    den = np.bincount(cu, weights=wu, minlength=n_categories)
    num = np.bincount(cu, weights=wu * yu, minlength=n_categories)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = num / den
    se = np.full(n_categories, np.nan)
    if cluster is not None and n_clusters >= 2 and cu.size:
        pair, pc, _ = _cluster_pairs(cluster[use], cu, n_categories)
        T = np.bincount(pair, weights=wu * (yu - means[cu]) / den[cu])
        se = np.where(n > 0, np.sqrt(_by_category(pc, T, n_categories, n_clusters)), np.nan)
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


def _independent(A: np.ndarray, tol: float = 1e-10) -> np.ndarray:
    """Which columns of the Gram matrix ``A`` to keep: in order, each that is not (within
    ``tol``) a linear combination of the kept ones before it; an empty column is never kept.
    The test is on the scaled matrix D^-1/2 A D^-1/2 (unit diagonal), so it does not depend on
    the size of the weights or of a category: column j is kept when the share of it that the
    kept columns do not explain, 1 - c_jK C_KK^-1 c_Kj, exceeds ``tol``."""
    d = np.sqrt(np.clip(np.diag(A), 0.0, None))
    p = A.shape[0]
    keep = np.zeros(p, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        C = A / np.outer(d, d)
    for j in range(p):
        if d[j] == 0:
            continue
        K = np.flatnonzero(keep)
        left = 1.0 - (C[j, K] @ np.linalg.solve(C[np.ix_(K, K)], C[K, j]) if K.size else 0.0)
        keep[j] = left > tol
    return keep


def _fitted(beta_all, factors, columns, n: int) -> np.ndarray:
    """x_i' beta for every record (beta_all[0] the intercept), by one look-up per factor."""
    out = np.full(n, beta_all[0])
    for j, f in enumerate(factors):
        effect = np.zeros(int(f.max(initial=0)) + 1)
        for a, (k, c) in enumerate(columns, start=1):
            if k == j and c < effect.size:
                effect[c] = beta_all[a]
        out += effect[f]
    return out


def _score_covariance(cluster, n_clusters, factors, columns, ix, we) -> np.ndarray:
    """G/(G-1) sum_h (u_h - ubar)(u_h - ubar)' of the cluster sums u_h of the scores
    x_i w_i e_i (``we`` = w_i e_i) on the design columns ``ix`` (0 = intercept). The (G, q)
    matrix of cluster sums is sparse (a cluster meets few categories): it is built as such and
    only U'U is formed."""
    from scipy import sparse

    q = len(ix)
    if n_clusters < 2:
        return np.full((q, q), np.nan)
    where = {a: k for k, a in enumerate(ix)}
    rows, cols, vals = [], [], []
    if 0 in where:
        rows.append(cluster)
        cols.append(np.full(cluster.size, where[0]))
        vals.append(we)
    for j, f in enumerate(factors):
        pos = np.full(int(f.max(initial=0)) + 1, -1)
        for a, (k, c) in enumerate(columns, start=1):
            if k == j and a in where and c < pos.size:
                pos[c] = where[a]
        col = pos[f]
        m = col >= 0
        rows.append(cluster[m])
        cols.append(col[m])
        vals.append(we[m])
    U = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_clusters, q)
    )  # duplicates (records of one cluster) are summed
    ubar = np.asarray(U.sum(axis=0)).ravel() / n_clusters
    M = (U.T @ U).toarray() - n_clusters * np.outer(ubar, ubar)
    return n_clusters / (n_clusters - 1) * M
