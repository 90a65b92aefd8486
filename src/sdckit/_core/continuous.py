"""NumPy/SciPy kernels for disclosure risk of continuous variables (spec F.3-F.6).

Inputs are float matrices (records x variables, ``NaN`` = missing) already validated by the
public functions; outputs are NumPy arrays and floats. SciPy is imported here, and this
module is not loaded by ``import sdckit``.

Contents
--------
* :func:`interval_at_risk` - sdcMicro ``dRisk`` (SDID) flags (F.3.1).
* :func:`relative_interval_counts`, :func:`joint_relative_interval_counts` - the a-priori
  relative-interval rule (F.3.2).
* :func:`mcd` - Minimum Covariance Determinant, from :mod:`sdckit._core.robust` (the one
  implementation, shared with the robust eigenvalue loss), used by F.4 and F.5.
* :func:`rmd_risk` - sdcMicro ``dRiskRMD`` (F.4).
* :func:`univariate_outliers`, :func:`robust_distances` - F.5.
* :func:`confidentiality` - Seri's confidentiality plot quantities (F.6).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

# the MCD lives in the shared robust-statistics module; ``mcd`` is re-exported for the risk layer
from .robust import mahalanobis_sq, mcd

__all__ = [
    "mcd",
    "mahalanobis_sq",
    "interval_at_risk",
    "relative_interval_counts",
    "joint_relative_interval_counts",
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
# F.3.2 relative-interval rule (a priori)
# ----------------------------------------------------------------------------------------------
def _interval_ranks(x: np.ndarray, p: float):
    """Ranks of the observed values of ``x`` among its distinct values, and for each value the
    rank range ``[lo, hi)`` of the values inside its interval.

    Inside means ``x_i - p|x_i| < x_h < x_i + p|x_i|`` or ``x_h == x_i`` (so a value always
    counts itself, also when ``x_i = 0`` and the open interval is empty).
    """
    u = np.unique(x)
    r = np.searchsorted(u, x)
    a = p * np.abs(x)
    lo = np.searchsorted(u, x - a, side="right")  # first distinct value > x - p|x|
    hi = np.searchsorted(u, x + a, side="left")  # first distinct value >= x + p|x|
    lo = np.minimum(lo, r)
    hi = np.maximum(hi, r + 1)
    return r, lo, hi, len(u)


def relative_interval_counts(x: np.ndarray, p: float, groups: np.ndarray | None = None) -> np.ndarray:
    """c_i = number of observed values h (in the same group) with x_h in (x_i - p|x_i|, x_i + p|x_i|)
    or x_h = x_i; NaN where x_i is missing. One sort and two binary searches per value."""
    x = np.asarray(x, dtype=float)
    out = np.full(x.shape[0], np.nan)
    ok = ~np.isnan(x)
    if not ok.any():
        return out
    xo = x[ok]
    r, lo, hi, nu = _interval_ranks(xo, p)
    g = np.zeros(xo.shape[0], dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)[ok]
    span = np.int64(nu + 1)
    key = np.sort(g * span + r)
    out[ok] = np.searchsorted(key, g * span + hi) - np.searchsorted(key, g * span + lo)
    return out


def joint_relative_interval_counts(X: np.ndarray, p: float, groups: np.ndarray | None = None,
                                   chunk: int = 1 << 22) -> np.ndarray:
    """Number of records h (in the same group) inside the relative intervals of record i on every
    variable at once (the joint version of F.3.2); NaN for records with a missing value, which
    are neither counted nor evaluated.

    For each record the candidates are the records inside its interval on the variable where it
    has the fewest (a contiguous run in that variable's sorted order); each candidate is then
    checked on the other variables. Cost: the sum over records of that smallest univariate
    count, processed in chunks of ``chunk`` candidate pairs.
    """
    X = np.asarray(X, dtype=float)
    n, k = X.shape
    out = np.full(n, np.nan)
    ok = ~np.isnan(X).any(axis=1)
    if not ok.any():
        return out
    Xo = X[ok]
    m = Xo.shape[0]
    g = np.zeros(m, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)[ok]
    ranks, los, his, orders, starts, ends = [], [], [], [], [], []
    for j in range(k):
        r, lo, hi, nu = _interval_ranks(Xo[:, j], p)
        span = np.int64(nu + 1)
        key = g * span + r
        order = np.argsort(key, kind="stable")
        sk = key[order]
        starts.append(np.searchsorted(sk, g * span + lo))
        ends.append(np.searchsorted(sk, g * span + hi))
        ranks.append(r)
        los.append(lo)
        his.append(hi)
        orders.append(order)
    sizes = np.stack([e - s for s, e in zip(starts, ends)], axis=1)
    best = np.argmin(sizes, axis=1)
    size = sizes[np.arange(m), best]
    counts = np.zeros(m)
    bounds = np.concatenate([[0], np.cumsum(size)])
    i0 = 0
    while i0 < m:
        # records i0..i1-1 with at most ``chunk`` candidate pairs (at least one record)
        i1 = max(i0 + 1, int(np.searchsorted(bounds, bounds[i0] + chunk, side="right")) - 1)
        i1 = min(i1, m)
        rec = np.repeat(np.arange(i0, i1), size[i0:i1])
        if rec.size:
            offs = np.arange(rec.size) - np.repeat(bounds[i0:i1] - bounds[i0], size[i0:i1])
            jb = best[rec]
            pos = np.empty(rec.size, dtype=np.int64)
            for j in range(k):
                sel = jb == j
                if sel.any():
                    pos[sel] = orders[j][starts[j][rec[sel]] + offs[sel]]
            inside = np.ones(rec.size, dtype=bool)
            for j in range(k):
                rj = ranks[j][pos]
                inside &= (rj >= los[j][rec]) & (rj < his[j][rec])
            counts[i0:i1] = np.bincount(rec[inside] - i0, minlength=i1 - i0)
        i0 = i1
    out[ok] = counts
    return out


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
