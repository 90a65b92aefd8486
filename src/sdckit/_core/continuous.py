"""NumPy/SciPy kernels for disclosure risk of continuous variables (spec F.3-F.6).

Inputs are float matrices (records x variables, ``NaN`` = missing) already validated by the
public functions; outputs are NumPy arrays and floats. SciPy is imported here, and this
module is not loaded by ``import sdckit``.

Contents
--------
* :func:`interval_at_risk` - sdcMicro ``dRisk`` (SDID) flags (F.3.1).
* :func:`mcd` - Minimum Covariance Determinant (FAST-MCD with reweighting, consistency and
  small-sample factors), used by the robust Mahalanobis distance measures (F.4, F.5).
* :func:`rmd_risk` - sdcMicro ``dRiskRMD`` (F.4).
* :func:`univariate_outliers`, :func:`robust_distances` - F.5.
* :func:`confidentiality` - Seri's confidentiality plot quantities (F.6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats
from scipy.spatial import cKDTree

__all__ = [
    "MCDResult",
    "h_alpha_n",
    "mcd_consistency",
    "mcd_small_sample",
    "mcd",
    "interval_at_risk",
    "rmd_risk",
    "nearest_other_distance",
    "univariate_outliers",
    "robust_distances",
    "confidentiality",
    "kth_smallest_nonlink",
]


# ----------------------------------------------------------------------------------------------
# F.3.1 interval disclosure (sdcMicro dRisk)
# ----------------------------------------------------------------------------------------------
def interval_at_risk(x: np.ndarray, y: np.ndarray, k: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-record flag: every comparable original value lies in ``y_j +- k sd(y_j)``.

    Returns ``(at_risk, sd)`` where ``sd`` is the standard deviation (n - 1, missing values
    removed) of each protected variable. Comparisons involving a missing value are skipped,
    so a record with no comparable variable is at risk (sdcMicro behaviour, spec F.3.1).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        counts = np.sum(~np.isnan(y), axis=0)
        sd = np.where(counts > 1, np.nanstd(y, axis=0, ddof=1) if y.shape[0] > 1 else np.nan, np.nan)
    lo = y - k * sd
    hi = y + k * sd
    outside = (x < lo) | (x > hi)  # NaN compares False: skipped
    return ~outside.any(axis=1), sd


# ----------------------------------------------------------------------------------------------
# MCD
# ----------------------------------------------------------------------------------------------
def h_alpha_n(alpha: float, n: int, p: int) -> int:
    """Size h of the MCD subset: ``floor(2 n2 - n + 2 (n - n2) alpha)``, ``n2 = (n + p + 1) // 2``
    (Rousseeuw & Van Driessen 1999; the convention of robustbase)."""
    n2 = (n + p + 1) // 2
    return int(math.floor(2 * n2 - n + 2 * (n - n2) * alpha))


def mcd_consistency(p: int, frac: float) -> float:
    """Consistency factor of the MCD covariance at the normal model (Croux & Haesbroeck 1999):
    ``frac / P(chi2_{p+2} <= q)`` with ``q`` the ``frac`` quantile of chi2_p."""
    if frac >= 1.0:
        return 1.0
    q = stats.chi2.ppf(frac, p)
    return float(frac / stats.chi2.cdf(q, p + 2))


# Pison, Van Aelst & Willems (2002), "Small sample corrections for LTS and MCD", Metrika 55:
# f_{p,n} = 1 - exp(c0) / n^c1, with (c0, c1) interpolated in p from the fitted values of the
# paper at q = 2 and q = 3 (coefficients alpha_q, beta_q of the paper, for h = n/2 and 0.875 n).
_PISON = {
    "raw": {0.5: ((-1.42764571687802, 1.26263336932151), (-1.06141115981725, 1.28907991440387)),
            0.875: ((-0.455179464070565, 1.11192541278794), (-0.294241208320834, 1.09649329149811))},
    "rew": {0.5: ((-1.02842572724793, 1.67659883081926), (-0.26800273450853, 1.35968562893582)),
            0.875: ((-0.544482443573914, 1.25994483222292), (-0.343791072183285, 1.25159004257133))},
}
_PISON_LOW_P = {  # p = 1 and p = 2: (log-constant, exponent) for alpha 0.5 and 0.875
    ("raw", 1): ((0.262024211897096, 0.604756680630497), (-0.351584646688712, 1.01646567502486)),
    ("raw", 2): ((0.673292623522027, 0.691365864961895), (0.446537815635445, 1.06690782995919)),
    ("rew", 1): ((1.11098143415027, 1.5182890270453), (-0.66046776772861, 0.88939595831888)),
    ("rew", 2): ((3.11101712909049, 1.91401056721863), (0.79473550581058, 1.10081930350091)),
}


def _pison_fp(kind: str, p: int, n: int, which: float) -> float:
    if p <= 2:
        c0, c1 = _PISON_LOW_P[(kind, p)][0 if which == 0.5 else 1]
    else:
        (a2, b2), (a3, b3) = _PISON[kind][which]
        y = np.log([-a2 / p ** b2, -a3 / p ** b3])
        A = np.array([[1.0, -np.log(2 * p * p)], [1.0, -np.log(3 * p * p)]])
        c0, c1 = np.linalg.solve(A, y)
    return 1.0 - math.exp(c0) / n ** c1


def mcd_small_sample(p: int, n: int, alpha: float, kind: str = "raw") -> float:
    """Small-sample correction factor of the MCD covariance (Pison, Van Aelst & Willems 2002).

    The paper's fitted curve ``1 / f_{p,n}`` interpolated linearly in alpha between 0.5 and
    0.875 (and to 1 at alpha = 1). Where the fitted curve is not a valid factor (tiny n, where
    ``f_{p,n} <= 0``) the factor is 1: robustbase uses a table of simulated factors there
    (p <= 9, n <= 20), which this library does not reproduce (documented deviation).
    """
    f500 = _pison_fp(kind, p, n, 0.5)
    f875 = _pison_fp(kind, p, n, 0.875)
    if alpha <= 0.875:
        f = f500 + (f875 - f500) / 0.375 * (alpha - 0.5)
    else:
        f = f875 + (1.0 - f875) / 0.125 * (alpha - 0.875)
    if not (0.0 < f <= 1.0):
        return 1.0
    return 1.0 / f


@dataclass(frozen=True)
class MCDResult:
    """Reweighted MCD estimate (``center``, ``cov``) and the raw one, with the h-subset."""

    center: np.ndarray
    cov: np.ndarray
    raw_center: np.ndarray
    raw_cov: np.ndarray
    best: np.ndarray  # indices of the raw h-subset
    weights: np.ndarray  # reweighting flags (bool)
    h: int
    factors: tuple  # (raw consistency, raw small-sample, rew consistency, rew small-sample)


def _subset_stats(X, idx):
    """Batched mean and covariance (n - 1) of the rows ``X[idx[s]]`` for every start ``s``."""
    sub = X[idx]  # (S, h, p)
    mu = sub.mean(axis=1)
    dev = sub - mu[:, None, :]
    cov = np.einsum("shi,shj->sij", dev, dev) / (idx.shape[1] - 1)
    return mu, cov


def _csteps(X, idx, h, steps):
    """Run ``steps`` C-steps (or until no start changes when ``steps`` is None) from the
    h-subsets ``idx`` (S, h); returns (idx, logdet)."""
    it = 0
    logdet = None
    while True:
        mu, cov = _subset_stats(X, idx)
        sign, ld = np.linalg.slogdet(cov)
        ld = np.where(sign > 0, ld, -np.inf)
        if steps is not None and it >= steps:
            return idx, ld
        ok = np.isfinite(ld)
        inv = np.zeros_like(cov)
        if ok.any():
            inv[ok] = np.linalg.inv(cov[ok])
        dev = X[None, :, :] - mu[:, None, :]
        d = np.einsum("snj,sjk,snk->sn", dev, inv, dev)
        new = np.argpartition(d, h - 1, axis=1)[:, :h]
        new = np.sort(new, axis=1)
        new[~ok] = idx[~ok]  # exact fit: keep the subset
        it += 1
        if steps is None and (np.array_equal(new, idx) or it > 200):
            mu, cov = _subset_stats(X, new)
            sign, ld = np.linalg.slogdet(cov)
            return new, np.where(sign > 0, ld, -np.inf)
        idx = new


def _initial_subsets(X, h, nsamp, rng):
    """h-subsets from (p + 1)-point starts: all of them when there are at most ``nsamp``,
    otherwise ``nsamp`` random ones (FAST-MCD)."""
    n, p = X.shape
    if math.comb(n, p + 1) <= nsamp:
        starts = np.array(list(combinations(range(n), p + 1)), dtype=np.int64)
    else:
        starts = np.argsort(rng.random((nsamp, n)), axis=1)[:, : p + 1] if n <= 2000 else \
            np.stack([rng.choice(n, p + 1, replace=False) for _ in range(nsamp)])
    mu, cov = _subset_stats(X, starts)
    # a singular start is widened with random extra points until it spans the space
    sign, _ = np.linalg.slogdet(cov)
    for s in np.flatnonzero(sign <= 0):
        members = list(starts[s])
        rest = [i for i in rng.permutation(n) if i not in set(members)]
        for extra in rest:
            members.append(extra)
            sub = X[members]
            if np.linalg.slogdet(np.cov(sub.T).reshape(p, p))[0] > 0 or len(members) >= h:
                break
        mu[s] = X[members].mean(axis=0)
        cov[s] = np.cov(X[members].T).reshape(p, p)
    sign, _ = np.linalg.slogdet(cov)
    inv = np.zeros_like(cov)
    ok = sign > 0
    inv[ok] = np.linalg.pinv(cov[ok]) if ok.any() else inv[ok]
    dev = X[None, :, :] - mu[:, None, :]
    d = np.einsum("snj,sjk,snk->sn", dev, inv, dev)
    d[~ok] = np.inf
    d[~ok, : h] = 0.0  # unusable start: any subset, it will lose
    return np.sort(np.argpartition(d, h - 1, axis=1)[:, :h], axis=1)


def mcd(X: np.ndarray, alpha: float = 0.5, *, nsamp: int = 500, seed: int = 0,
        small_sample: tuple | None = None, subsample: int = 1500) -> MCDResult:
    """Reweighted Minimum Covariance Determinant estimator (Rousseeuw & Van Driessen 1999).

    1. Raw MCD: the h-subset (h = :func:`h_alpha_n`) whose covariance has the smallest
       determinant, found by FAST-MCD: C-steps from all (p + 1)-point starts when there are at
       most ``nsamp`` of them (exhaustive, as robustbase does for small n), otherwise from
       ``nsamp`` random starts (fixed ``seed``); with n > ``subsample`` the starts are first
       concentrated on a random subsample and the best 10 are iterated on all data.
    2. Raw covariance (divisor h - 1) times the consistency factor ``mcd_consistency(p, h/n)``
       and the small-sample factor.
    3. Reweighting: records with squared raw distance below ``chi2_{p, 0.975}`` give the mean
       and covariance (n - 1), times ``mcd_consistency(p, n_w/n)`` and the reweighted
       small-sample factor (both 1 when every record is kept).

    ``small_sample=(raw, reweighted)`` overrides the small-sample factors (default
    :func:`mcd_small_sample`), e.g. to reproduce robustbase's simulated factors for tiny n.

    Returns
    -------
    MCDResult
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    h = h_alpha_n(alpha, n, p)
    rng = np.random.default_rng(seed)
    if n > subsample:
        sub = np.sort(rng.choice(n, subsample, replace=False))
        hs = h_alpha_n(alpha, subsample, p)
        idx = _initial_subsets(X[sub], hs, nsamp, rng)
        idx, ld = _csteps(X[sub], idx, hs, 2)
        best10 = np.argsort(ld)[:10]
        idx, ld = _csteps(X[sub], idx[best10], hs, None)
        # carry the sub-solutions to the full data: the h nearest records under each estimate
        mu, cov = _subset_stats(X[sub], idx)
        inv = np.linalg.pinv(cov)
        dev = X[None, :, :] - mu[:, None, :]
        d = np.einsum("snj,sjk,snk->sn", dev, inv, dev)
        idx = np.sort(np.argpartition(d, h - 1, axis=1)[:, :h], axis=1)
        idx, ld = _csteps(X, idx, h, None)
    else:
        idx = _initial_subsets(X, h, nsamp, rng)
        idx, ld = _csteps(X, idx, h, 2)
        best10 = np.argsort(ld, kind="stable")[:10]
        idx, ld = _csteps(X, idx[best10], h, None)
    b = int(np.argmin(ld))
    best = idx[b]
    if not np.isfinite(ld[b]):
        raise np.linalg.LinAlgError("more than h records lie on a hyperplane: the MCD covariance is singular")
    raw_center = X[best].mean(axis=0)
    raw_cov0 = np.cov(X[best].T).reshape(p, p)
    c_raw = mcd_consistency(p, h / n)
    s_raw, s_rew = small_sample if small_sample is not None else (
        mcd_small_sample(p, n, alpha, "raw"), mcd_small_sample(p, n, alpha, "rew"))
    raw_cov = raw_cov0 * c_raw * s_raw
    dev = X - raw_center
    d = np.einsum("nj,jk,nk->n", dev, np.linalg.inv(raw_cov), dev)
    w = d < stats.chi2.ppf(0.975, p)
    center = X[w].mean(axis=0)
    cov = np.cov(X[w].T).reshape(p, p)
    nw = int(w.sum())
    c_rew = 1.0
    if nw < n:
        c_rew = mcd_consistency(p, nw / n)
        cov = cov * c_rew * s_rew
    else:
        s_rew = 1.0
    return MCDResult(center, cov, raw_center, raw_cov, best, w, h, (c_raw, s_raw, c_rew, s_rew))


def mahalanobis_sq(X: np.ndarray, center: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Squared Mahalanobis distances of the rows of X."""
    dev = X - center
    sol = np.linalg.solve(cov, dev.T).T
    return np.einsum("nj,nj->n", dev, sol)


# ----------------------------------------------------------------------------------------------
# F.4 robust Mahalanobis distance intervals (sdcMicro dRiskRMD)
# ----------------------------------------------------------------------------------------------
def nearest_other_distance(Z: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Euclidean distance from ``Z[rows]`` to the nearest *other* row of Z (inf if n == 1)."""
    if Z.shape[0] < 2 or rows.size == 0:
        return np.full(rows.size, np.inf)
    tree = cKDTree(Z)
    d, _ = tree.query(Z[rows], k=2, workers=-1)
    return d[:, 1]  # the row itself is at distance 0, so the second is the nearest other


def rmd_risk(zx: np.ndarray, zy: np.ndarray, cov: np.ndarray, center: np.ndarray, k: float, k2: float):
    """dRiskRMD on standardised matrices (spec F.4 steps 3-6).

    Returns ``(rmd, in_interval, isolated)``: RMD_i = 0.05 sqrt(md^2), ``in_interval`` = some
    protected value strictly inside ``z_ij +- k RMD_i`` (OR over variables), ``isolated`` =
    in_interval and the nearest other protected record is farther than ``k2``.
    """
    rmd = 0.05 * np.sqrt(np.maximum(mahalanobis_sq(zx, center, cov), 0.0))
    half = (k * rmd)[:, None]
    w = ((zy < zx + half) & (zy > zx - half)).any(axis=1)
    rows = np.flatnonzero(w)
    iso = np.zeros_like(w)
    iso[rows] = nearest_other_distance(zy, rows) > k2
    return rmd, w, iso


# ----------------------------------------------------------------------------------------------
# F.5 outliers
# ----------------------------------------------------------------------------------------------
def univariate_outliers(X: np.ndarray, percentile: float) -> tuple[np.ndarray, np.ndarray]:
    """Flags ``x_ij > q_j`` (q_j = R type-7 quantile, missing values removed) and the q_j."""
    q = np.array([np.quantile(c[~np.isnan(c)], percentile) if np.any(~np.isnan(c)) else np.nan
                  for c in X.T])
    with np.errstate(invalid="ignore"):
        return X > q, q


def robust_distances(X: np.ndarray, alpha: float = 0.5, seed: int = 0):
    """Robust distances sqrt(mahalanobis(x, MCD centre, MCD cov)) for complete rows (NaN else)."""
    ok = ~np.isnan(X).any(axis=1)
    rd = np.full(X.shape[0], np.nan)
    est = mcd(X[ok], alpha, seed=seed)
    rd[ok] = np.sqrt(np.maximum(mahalanobis_sq(X[ok], est.center, est.cov), 0.0))
    return rd, est


# ----------------------------------------------------------------------------------------------
# F.6 Seri's confidentiality plot
# ----------------------------------------------------------------------------------------------
def _chunk_rows(n: int, m: int, budget: int = 4_000_000) -> int:
    return max(1, min(n, budget // max(m, 1)))


def _z_block(Y, X, ynorm, lo, hi):
    """z(x, y) = ||y - x|| / ||y|| for protected rows lo:hi against every original row."""
    diff = Y[lo:hi, None, :] - X[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):  # an all-zero protected record: z = inf
        return np.sqrt(np.einsum("ijk,ijk->ij", diff, diff)) / ynorm[lo:hi, None]


def kth_smallest_nonlink(X: np.ndarray, Y: np.ndarray, k: int) -> float:
    """The k-th smallest (1-based) non-link distance z(x_j, y_i), i != j, computed exactly by a
    two-pass radix selection over streamed blocks (memory O(block), time O(n^2 p))."""
    n = X.shape[0]
    ynorm = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    step = _chunk_rows(n, n * X.shape[1])
    shift = np.uint64(44)  # sign + exponent + 8 mantissa bits: bins of relative width 1/256
    nb = 1 << 20
    hist = np.zeros(nb, dtype=np.int64)
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        z = _z_block(Y, X, ynorm, lo, hi)
        z[np.arange(hi - lo), np.arange(lo, hi)] = np.inf  # drop the link pairs
        bits = (z.ravel().view(np.uint64) >> shift).astype(np.int64)
        hist += np.bincount(np.minimum(bits, nb - 1), minlength=nb)
    cum = np.cumsum(hist)
    b = int(np.searchsorted(cum, k))  # bin holding the k-th value
    before = int(cum[b - 1]) if b > 0 else 0
    vals = []
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        z = _z_block(Y, X, ynorm, lo, hi)
        z[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
        zr = z.ravel()
        bits = np.minimum((zr.view(np.uint64) >> shift).astype(np.int64), nb - 1)
        vals.append(zr[bits == b])
    vals = np.concatenate(vals)
    return float(np.partition(vals, k - before - 1)[k - before - 1])


def confidentiality(X: np.ndarray, Y: np.ndarray, alpha: float, *, exact_limit: int = 20000,
                    sample_pairs: int = 10**7, seed: int = 0):
    """Seri's confidentiality-plot quantities (spec F.6).

    Returns a dict with ``delta`` (alpha-quantile z_(ceil(alpha |U|)) of the non-link
    distances), ``neighbours`` nb(y_i) = #{x_j : z(x_j, y_i) < delta} (all originals, the true
    partner included), ``perturbation`` IL_i = ||y_i - x_i|| / ||x_i||, ``nearest_correct``
    (the true partner is at the smallest distance; ties count as correct), ``in_neighbourhood``
    (z(x_i, y_i) < delta) and ``exact`` (False when delta was estimated from sampled pairs).
    """
    n = X.shape[0]
    U = n * (n - 1)
    ynorm = np.sqrt(np.einsum("ij,ij->i", Y, Y))
    xnorm = np.sqrt(np.einsum("ij,ij->i", X, X))
    dl = Y - X
    dlink = np.sqrt(np.einsum("ij,ij->i", dl, dl))
    with np.errstate(divide="ignore", invalid="ignore"):
        perturbation = dlink / xnorm
        zlink = dlink / ynorm
    k = max(1, math.ceil(alpha * U))
    if n <= exact_limit:
        delta = kth_smallest_nonlink(X, Y, k)
        exact = True
    else:
        rng = np.random.default_rng(seed)
        i = rng.integers(0, n, sample_pairs)
        j = rng.integers(0, n - 1, sample_pairs)
        j = j + (j >= i)  # uniform over j != i
        dd = Y[i] - X[j]
        z = np.sqrt(np.einsum("ij,ij->i", dd, dd)) / ynorm[i]
        kk = max(1, math.ceil(alpha * sample_pairs))
        delta = float(np.partition(z, kk - 1)[kk - 1])
        exact = False
    nbrs = np.zeros(n, dtype=np.int64)
    nearest_other = np.full(n, np.inf)
    if n <= exact_limit:
        step = _chunk_rows(n, n * X.shape[1])
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            z = _z_block(Y, X, ynorm, lo, hi)
            nbrs[lo:hi] = np.count_nonzero(z < delta, axis=1)
            z[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
            nearest_other[lo:hi] = z.min(axis=1) if n > 1 else np.inf
    else:
        tree = cKDTree(X)
        r = np.nextafter(delta * ynorm, 0.0)
        nbrs = tree.query_ball_point(Y, r, return_length=True).astype(np.int64)
        d, idx = tree.query(Y, k=2, workers=-1)
        first_other = np.where(idx[:, 0] == np.arange(n), d[:, 1], d[:, 0])
        nearest_other = first_other / ynorm
    return {
        "delta": delta,
        "neighbours": nbrs,
        "perturbation": perturbation,
        "link_distance": zlink,
        "nearest_correct": zlink <= nearest_other,
        "in_neighbourhood": zlink < delta,
        "exact": exact,
        "nonlink_pairs": U,
        "rank": k,
    }
