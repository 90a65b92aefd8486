"""NumPy/SciPy kernels for disclosure risk of continuous variables.

Inputs are float matrices (records x variables, ``NaN`` = missing) already validated by the
public functions; outputs are NumPy arrays and floats. SciPy is imported here, and this
module is not loaded by ``import sdckit``.

Contents
--------
* :func:`interval_at_risk` - sdcMicro ``dRisk`` (SDID) flags (F.3.1).
* :func:`relative_interval_counts`, :func:`joint_relative_interval_counts` - the a-priori
  relative-interval rule (F.3.2).
* :func:`mcd` - Minimum Covariance Determinant, from :mod:`sdckit._core.robust` (the one
  implementation, shared with the robust eigenvalue loss), used by F.4 and F.5;
  :func:`largest_ties` and :func:`weakest_direction` explain why a robust covariance is
  singular.
* :func:`rmd_risk` - sdcMicro ``dRiskRMD`` (F.4).
* :func:`univariate_outliers`, :func:`robust_distances` - F.5.
* :func:`confidentiality` - Seri's confidentiality plot quantities (F.6), exact by one pass
  over all pairs (:func:`pair_pass`) after a sampled bracket of the critical distance;
  :func:`kth_smallest_nonlink` is the two-pass radix selection it falls back on.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

# the MCD lives in the shared robust-statistics module; ``mcd`` is re-exported for the risk layer
from .robust import h_alpha_n, mahalanobis_sq, mcd

__all__ = [
    "mcd",
    "h_alpha_n",
    "mahalanobis_sq",
    "largest_ties",
    "weakest_direction",
    "interval_at_risk",
    "relative_interval_counts",
    "joint_relative_interval_counts",
    "rmd_risk",
    "nearest_other_distance",
    "univariate_outliers",
    "robust_distances",
    "confidentiality",
    "kth_smallest_nonlink",
    "pair_pass",
    "row_sq_norms",
]


# ----------------------------------------------------------------------------------------------
# F.3.1 interval disclosure (sdcMicro dRisk)
# ----------------------------------------------------------------------------------------------
def interval_at_risk(x: np.ndarray, y: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-record flag: every comparable original value lies in ``y_j +- width sd(y_j)``.

    Returns ``(at_risk, sd)`` where ``sd`` is the standard deviation (n - 1, missing values
    removed) of each protected variable. Comparisons involving a missing value are skipped,
    so a record with no comparable variable is at risk (sdcMicro behaviour).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        counts = np.sum(~np.isnan(y), axis=0)
        sd = np.where(counts > 1, np.nanstd(y, axis=0, ddof=1) if y.shape[0] > 1 else np.nan, np.nan)
    lo = y - width * sd
    hi = y + width * sd
    outside = (x < lo) | (x > hi)  # NaN compares False: skipped
    return np.asarray(~outside.any(axis=1)), sd


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


def joint_relative_interval_counts(
    X: np.ndarray, p: float, groups: np.ndarray | None = None, chunk: int = 1 << 22
) -> np.ndarray:
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
# robust covariance diagnostics (F.4, F.5)
# ----------------------------------------------------------------------------------------------
def largest_ties(X: np.ndarray) -> np.ndarray:
    """Per column, the largest number of records sharing one value (missing values ignored).

    When it reaches the MCD subset size h, an h-subset exists on which the column is constant:
    the minimum covariance determinant is 0 (an exact fit) and the robust scale of the column
    is 0.
    """
    out = np.zeros(X.shape[1], dtype=np.int64)
    for j in range(X.shape[1]):
        c = X[:, j]
        c = np.sort(c[~np.isnan(c)])
        if c.size:
            starts = np.flatnonzero(np.concatenate([[True], c[1:] != c[:-1], [True]]))
            out[j] = int(np.diff(starts).max())
    return out


def weakest_direction(cov: np.ndarray) -> tuple[float, np.ndarray]:
    """``(ratio, v)``: the smallest over the largest eigenvalue of a covariance matrix and the
    unit eigenvector of the smallest one (the direction in which the data are flattest)."""
    w, V = np.linalg.eigh(cov)
    top = float(w[-1])
    ratio = float(w[0]) / top if top > 0 else 0.0
    return ratio, V[:, 0]


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


def rmd_risk(zx: np.ndarray, zy: np.ndarray, cov: np.ndarray, center: np.ndarray, width: float, width2: float):
    """dRiskRMD on standardised matrices (steps 3-6: intervals, risks, weighted risks).

    Returns ``(rmd, in_interval, isolated)``: RMD_i = 0.05 sqrt(md^2), ``in_interval`` = some
    protected value strictly inside ``z_ij +- width RMD_i`` (OR over variables), ``isolated``
    = in_interval and the nearest other protected record is farther than ``width2``.
    """
    rmd = 0.05 * np.sqrt(np.maximum(mahalanobis_sq(zx, center, cov), 0.0))
    half = (width * rmd)[:, None]
    w = ((zy < zx + half) & (zy > zx - half)).any(axis=1)
    rows = np.flatnonzero(w)
    iso = np.zeros_like(w)
    iso[rows] = nearest_other_distance(zy, rows) > width2
    return rmd, w, iso


# ----------------------------------------------------------------------------------------------
# F.5 outliers
# ----------------------------------------------------------------------------------------------
def univariate_outliers(X: np.ndarray, quantile: float) -> tuple[np.ndarray, np.ndarray]:
    """Flags ``x_ij > q_j`` (q_j = R type-7 quantile, missing values removed) and the q_j."""
    q = np.array([np.quantile(c[~np.isnan(c)], quantile) if np.any(~np.isnan(c)) else np.nan for c in X.T])
    with np.errstate(invalid="ignore"):
        return X > q, q


def robust_distances(X: np.ndarray, fraction: float = 0.5, seed: int = 0):
    """Robust distances sqrt(mahalanobis(x, MCD centre, MCD cov)) for complete rows (NaN else)."""
    ok = ~np.isnan(X).any(axis=1)
    rd = np.full(X.shape[0], np.nan)
    est = mcd(X[ok], fraction, seed=seed)
    rd[ok] = np.sqrt(np.maximum(mahalanobis_sq(X[ok], est.center, est.cov), 0.0))
    return rd, est


# ----------------------------------------------------------------------------------------------
# F.6 Seri's confidentiality plot
# ----------------------------------------------------------------------------------------------
# Every distance is computed the same way: d^2(x, y) = sum_j (y_j - x_j)^2 summed in variable
# order, z(x, y) = fl(sqrt(d^2)) / ||y||. Within one protected record y_i, z is a
# non-decreasing function of d^2, so "z < t" is "d^2 < D_i(t)" for one threshold D_i(t) per
# record; the pass over all n^2 pairs compares squared distances only.

_BLOCK = 1 << 19  # pair distances per block: 4 MB, cache friendly


def row_sq_norms(A: np.ndarray) -> np.ndarray:
    """sum_j A_ij^2 per row, summed in column order (the order of the pair distances)."""
    out = A[:, 0] * A[:, 0]
    for j in range(1, A.shape[1]):
        out = out + A[:, j] * A[:, j]
    return out


def _block_sq_dist(XT: np.ndarray, Y: np.ndarray, lo: int, hi: int, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """d^2(x_j, y_i) for protected rows lo:hi (rows of the block) against every original x_j."""
    r = hi - lo
    d2, t = out[:r], tmp[:r]
    np.subtract(Y[lo:hi, 0, None], XT[0][None, :], out=d2)
    np.multiply(d2, d2, out=d2)
    for j in range(1, XT.shape[0]):
        np.subtract(Y[lo:hi, j, None], XT[j][None, :], out=t)
        np.multiply(t, t, out=t)
        np.add(d2, t, out=d2)
    return d2


def _z(d2, ynorm):
    with np.errstate(divide="ignore", invalid="ignore"):  # an all-zero protected record: z = inf (NaN at 0)
        return np.sqrt(d2) / ynorm


def _sq_threshold(t: float, ynorm: np.ndarray) -> np.ndarray | None:
    """Per record, the smallest d^2 with z = fl(sqrt(d^2)) / ||y_i|| >= t, so that z < t iff
    d^2 below it (0 for records with ||y_i|| = 0, whose z are infinite or NaN; inf when t is
    inf). None if the search did not settle (the caller then falls back)."""
    ok = ynorm > 0
    if t == math.inf:
        return np.where(ok, np.inf, 0.0)
    yn = np.where(ok, ynorm, 1.0)
    with np.errstate(over="ignore"):
        d = np.square(t * yn)
    for _ in range(64):  # step down while the float below still reaches t
        prev = np.nextafter(d, 0.0)
        move = (d > 0) & (_z(prev, yn) >= t)
        if not move.any():
            break
        d = np.where(move, prev, d)
    else:
        return None
    for _ in range(64):  # step up until t is reached
        move = _z(d, yn) < t
        if not move.any():
            break
        d = np.where(move, np.nextafter(d, np.inf), d)
    else:
        return None
    return np.where(ok, d, 0.0)


def _norm_bands(X: np.ndarray, Y: np.ndarray, reach: np.ndarray | None):
    """Originals sorted by norm, and per protected record the range [a_i, b_i) of that order
    holding every x_j with z(x_j, y_i) <= reach_i.

    By the triangle inequality | ||x|| - ||y|| | <= ||y - x||, so z <= r needs
    ||x|| within ||y|| (1 +- r); the band is widened by a relative 1e-8 for rounding (the norms
    and distances are exact to about p ulps). Records whose reach or norm is not finite, and
    files with norms near the overflow range, get the whole range.
    """
    n = X.shape[0]
    xnorm, ynorm = np.sqrt(row_sq_norms(X)), np.sqrt(row_sq_norms(Y))
    xorder = np.argsort(xnorm, kind="stable")
    a, b = np.zeros(n, dtype=np.int64), np.full(n, n, dtype=np.int64)
    tame = np.all(np.isfinite(xnorm)) and np.all(np.isfinite(ynorm)) and max(xnorm.max(), ynorm.max()) < 1e150
    if reach is not None and tame:
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isfinite(reach) & (ynorm > 1e-150)
            r = np.where(ok, reach, 0.0)
            span = ynorm * r
            margin = 1e-8 * (ynorm + span)
        xs = xnorm[xorder]
        a = np.where(ok, np.searchsorted(xs, ynorm - span - margin, side="left"), 0)
        b = np.where(ok, np.searchsorted(xs, ynorm + span + margin, side="right"), n)
    return xorder, a, b


def _row_blocks(a: np.ndarray, b: np.ndarray, budget: int):
    """Consecutive rows (in the given order) grouped so that rows x width of the union of
    their column ranges stays within ``budget``: (start, stop, c0, c1) per block."""
    blocks, start, lo, hi = [], 0, int(a[0]), int(b[0])
    for k in range(1, a.size):
        nlo, nhi = min(lo, int(a[k])), max(hi, int(b[k]))
        if (k - start + 1) * (nhi - nlo) > budget:
            blocks.append((start, k, lo, hi))
            start, lo, hi = k, int(a[k]), int(b[k])
        else:
            lo, hi = nlo, nhi
    blocks.append((start, a.size, lo, hi))
    return blocks


def _rows_sq_dist(XT: np.ndarray, Yr: np.ndarray, c0: int, c1: int, out: np.ndarray, tmp: np.ndarray):
    """d^2(x_j, y) for the protected rows ``Yr`` against the originals in columns c0:c1 of XT
    (same operations, hence the same values, as :func:`_block_sq_dist`)."""
    shape = (Yr.shape[0], c1 - c0)
    d2, t = out[: shape[0] * shape[1]].reshape(shape), tmp[: shape[0] * shape[1]].reshape(shape)
    np.subtract(Yr[:, 0, None], XT[0, None, c0:c1], out=d2)
    np.multiply(d2, d2, out=d2)
    for j in range(1, XT.shape[0]):
        np.subtract(Yr[:, j, None], XT[j, None, c0:c1], out=t)
        np.multiply(t, t, out=t)
        np.add(d2, t, out=d2)
    return d2


def pair_pass(
    X: np.ndarray,
    Y: np.ndarray,
    below: np.ndarray,
    upto: np.ndarray | None,
    reach: np.ndarray | None = None,
    max_candidates: int = 20_000_000,
):
    """One pass over the non-link pairs (i, j), i != j, that can matter, in blocks of protected
    records.

    ``reach[i]`` bounds the z of every pair that matters for record i (None: all pairs): only
    originals whose norm is within ||y_i|| (1 +- reach_i) are visited (see :func:`_norm_bands`).
    Returns ``(n_below, cand_rows, cand_d2, nearest_d2)``: per record i the number of j with
    d^2 < ``below[i]``; the pairs with ``below[i] <= d^2 < upto[i]`` (none when ``upto`` is
    None) as record and squared distance; per record the smallest non-link d^2 among the
    visited pairs (inf if none). Exact as long as ``below`` and ``upto`` lie within the reach.
    ``cand_rows`` is None when there are more than ``max_candidates`` pairs in between.
    """
    n = X.shape[0]
    xorder, a, b = _norm_bands(X, Y, reach)
    pos = np.empty(n, dtype=np.int64)
    pos[xorder] = np.arange(n)  # where each original sits in the sorted order (its link pair)
    XT = np.ascontiguousarray(X[xorder].T)
    order = np.lexsort((b, a))
    size = max(_BLOCK, n)
    out, tmp = np.empty(size), np.empty(size)
    n_below = np.zeros(n, dtype=np.int64)
    nearest = np.full(n, np.inf)
    rows: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    kept = 0
    for start, stop, c0, c1 in _row_blocks(a[order], b[order], size):
        if c1 <= c0:
            continue
        R = order[start:stop]
        d2 = _rows_sq_dist(XT, Y[R], c0, c1, out, tmp)
        link = pos[R] - c0
        inside = (link >= 0) & (link < c1 - c0)
        d2[np.flatnonzero(inside), link[inside]] = np.inf  # drop the link pairs
        low = d2 < below[R, None]
        n_below[R] = np.count_nonzero(low, axis=1)
        if upto is not None and rows is not None:
            mask = d2 < upto[R, None]
            mask &= ~low
            flat = np.flatnonzero(mask)
            kept += flat.size
            if kept > max_candidates:
                rows = vals = None
            else:
                rows.append(R[flat // (c1 - c0)])
                vals.append(d2.ravel()[flat])
        nearest[R] = d2.min(axis=1)
    if rows is None or upto is None:
        return n_below, None, None, nearest
    empty = np.zeros(0)
    return (
        n_below,
        np.concatenate(rows) if rows else empty.astype(np.int64),
        np.concatenate(vals) if vals else empty,
        nearest,
    )


def _z_block(XT, Y, ynorm, lo, hi, out, tmp):
    """z(x_j, y_i) for protected rows lo:hi against every original row (link pairs included)."""
    d2 = _block_sq_dist(XT, Y, lo, hi, out, tmp)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(d2, out=d2) / ynorm[lo:hi, None]


def kth_smallest_nonlink(X: np.ndarray, Y: np.ndarray, k: int) -> float:
    """The k-th smallest (1-based) non-link distance z(x_j, y_i), i != j, computed exactly by a
    two-pass radix selection over streamed blocks (memory O(block), time O(n^2 p)); NaN
    ranks after infinity."""
    n = X.shape[0]
    XT = np.ascontiguousarray(X.T)
    ynorm = np.sqrt(row_sq_norms(Y))
    step = max(1, min(n, _BLOCK // max(n, 1)))
    out, tmp = np.empty((step, n)), np.empty((step, n))
    shift = np.uint64(44)  # sign + exponent + 8 mantissa bits: bins of relative width 1/256
    nb = 1 << 20

    def bins_of(lo, hi):
        z = _z_block(XT, Y, ynorm, lo, hi, out, tmp)
        bits = np.minimum((z.view(np.uint64) >> shift).astype(np.int64), nb - 1)
        bits[np.arange(hi - lo), np.arange(lo, hi)] = nb  # the link pairs go to a bin of their own
        return z.ravel(), bits.ravel()

    hist = np.zeros(nb + 1, dtype=np.int64)
    for lo in range(0, n, step):
        hist += np.bincount(bins_of(lo, min(n, lo + step))[1], minlength=nb + 1)
    cum = np.cumsum(hist[:nb])
    b = int(np.searchsorted(cum, k))  # bin holding the k-th value
    before = int(cum[b - 1]) if b > 0 else 0
    parts = []
    for lo in range(0, n, step):
        zr, bits = bins_of(lo, min(n, lo + step))
        parts.append(zr[bits == b])
    vals = np.concatenate(parts)
    return float(np.partition(vals, k - before - 1)[k - before - 1])


def _sampled_bracket(X, Y, ynorm, k, rng, sample: int, spread: float = 6.0):
    """(t_lo, t_hi) holding the k-th smallest non-link z with overwhelming probability, from the
    order statistics of ``sample`` uniformly drawn non-link pairs (``spread`` standard errors
    of the sample rank either side). Correctness does not rest on it: the exact pass checks."""
    n = X.shape[0]
    U = n * (n - 1)
    if U <= 2 * sample:
        return 0.0, math.inf
    i = rng.integers(0, n, sample)
    j = rng.integers(0, n - 1, sample)
    j = j + (j >= i)  # uniform over j != i
    zs = np.sort(_z(row_sq_norms(Y[i] - X[j]), ynorm[i]))  # NaN sort last
    q = k / U
    r, sd = q * sample, math.sqrt(sample * q * (1.0 - q))
    lo_i, hi_i = math.floor(r - spread * sd) - 2, math.ceil(r + spread * sd) + 2
    t_lo = float(zs[lo_i]) if lo_i >= 0 else 0.0
    t_hi = float(zs[hi_i]) if hi_i < sample else math.inf
    return t_lo, (math.inf if math.isnan(t_hi) else t_hi)


def _reach(t: float, dlink2, ynorm) -> np.ndarray:
    """Per record, the largest z that matters: t (the counts) or the link distance (whether
    some other original is nearer than the true partner); inf where either is not finite."""
    zlink = _z(dlink2, ynorm)
    with np.errstate(invalid="ignore"):
        r = np.maximum(t, zlink)
    return np.where(np.isfinite(r), r, np.inf)


def _exact_delta(X, Y, ynorm, dlink2, k, bracket):
    """delta (the k-th smallest non-link z), neighbour counts and nearest non-link d^2 by one
    pass inside ``bracket``; None when the bracket misses or does not settle (then fall back)."""
    t_lo, t_hi = bracket
    if not (math.isfinite(t_lo) and t_lo <= t_hi):
        return None
    below = _sq_threshold(t_lo, ynorm)
    upto = _sq_threshold(math.nextafter(t_hi, math.inf), ynorm) if t_hi < math.inf else _sq_threshold(math.inf, ynorm)
    if below is None or upto is None:
        return None
    n_below, rows, d2, nearest = pair_pass(X, Y, below, upto, _reach(t_hi, dlink2, ynorm))
    need = k - int(n_below.sum())
    if rows is None or not 1 <= need <= rows.size:
        return None
    z = _z(d2, ynorm[rows])
    delta = float(np.partition(z, need - 1)[need - 1])
    if math.isnan(delta):
        return None
    nbrs = n_below + np.bincount(rows[z < delta], minlength=X.shape[0]) + (_z(dlink2, ynorm) < delta)
    return delta, nbrs, nearest


def _exact_confidentiality(X, Y, ynorm, dlink2, k, rng, sample):
    """delta, neighbour counts nb(y_i) (true partner included) and nearest non-link d^2 per
    record, exactly: a sampled bracket and one pass; otherwise the radix selection and a
    counting pass."""
    got = _exact_delta(X, Y, ynorm, dlink2, k, _sampled_bracket(X, Y, ynorm, k, rng, sample))
    if got is not None:
        return got
    delta = kth_smallest_nonlink(X, Y, k)
    below = np.zeros(X.shape[0]) if math.isnan(delta) else _sq_threshold(delta, ynorm)  # z < NaN: never
    if below is None:  # pragma: no cover - _sq_threshold settles within a few ulps
        raise FloatingPointError("confidentiality: could not place the critical distance")
    n_below, _, _, nearest = pair_pass(X, Y, below, None, _reach(delta, dlink2, ynorm))
    return delta, n_below + (_z(dlink2, ynorm) < delta), nearest


def _sampled_confidentiality(X, Y, ynorm, alpha, rng, sample_pairs):
    """delta estimated from ``sample_pairs`` uniformly drawn non-link pairs; neighbour counts and
    nearest other original from a k-d tree on the original records."""
    n = X.shape[0]
    i = rng.integers(0, n, sample_pairs)
    j = rng.integers(0, n - 1, sample_pairs)
    j = j + (j >= i)  # uniform over j != i
    z = _z(row_sq_norms(Y[i] - X[j]), ynorm[i])
    kk = max(1, math.ceil(alpha * sample_pairs))
    delta = float(np.partition(z, kk - 1)[kk - 1])
    tree = cKDTree(X)
    r = np.nextafter(delta * ynorm, 0.0)
    nbrs = tree.query_ball_point(Y, r, return_length=True).astype(np.int64)
    d, idx = tree.query(Y, k=2, workers=-1)
    first_other = np.where(idx[:, 0] == np.arange(n), d[:, 1], d[:, 0])
    return delta, nbrs, first_other


def confidentiality(
    X: np.ndarray,
    Y: np.ndarray,
    alpha: float,
    *,
    exact_limit: int = 20000,
    sample_pairs: int = 10**7,
    bracket_pairs: int = 10**6,
    seed: int | None = 0,
):
    """Seri's confidentiality-plot quantities.

    Returns a dict with ``delta`` (alpha-quantile z_(ceil(alpha |U|)) of the non-link
    distances), ``neighbours`` nb(y_i) = #{x_j : z(x_j, y_i) < delta} (all originals, the true
    partner included), ``perturbation`` IL_i = ||y_i - x_i|| / ||x_i||, ``nearest_correct``
    (the true partner is at the smallest distance; ties count as correct), ``in_neighbourhood``
    (z(x_i, y_i) < delta) and ``exact`` (False when delta was estimated from sampled pairs).

    For n <= ``exact_limit`` everything is exact: ``bracket_pairs`` sampled non-link pairs
    bracket delta, and one pass counts the pairs below the bracket and keeps the few inside it
    (a miss, which the pass detects, falls back to the two-pass radix selection). The pass
    visits, for each protected record, only the originals whose norm the triangle inequality
    leaves within reach of the bracket or of the record's link distance. Time O(n^2 p) at
    worst, memory O(n + pairs in the bracket).
    """
    n = X.shape[0]
    U = n * (n - 1)
    rng = np.random.default_rng(seed)
    ynorm = np.sqrt(row_sq_norms(Y))
    dlink2 = row_sq_norms(Y - X)
    dlink = np.sqrt(dlink2)
    with np.errstate(divide="ignore", invalid="ignore"):
        perturbation = dlink / np.sqrt(row_sq_norms(X))
        zlink = dlink / ynorm
    k = max(1, math.ceil(alpha * U))
    exact = n <= exact_limit
    if exact:
        delta, nbrs, nearest_d2 = _exact_confidentiality(X, Y, ynorm, dlink2, k, rng, bracket_pairs)
        nearest_other = _z(nearest_d2, ynorm)
    else:
        delta, nbrs, first_other = _sampled_confidentiality(X, Y, ynorm, alpha, rng, sample_pairs)
        with np.errstate(divide="ignore", invalid="ignore"):
            nearest_other = first_other / ynorm
    return {
        "delta": delta,
        "neighbours": np.asarray(nbrs, dtype=np.int64),
        "perturbation": perturbation,
        "link_distance": zlink,
        "nearest_correct": zlink <= nearest_other,
        "in_neighbourhood": zlink < delta,
        "exact": exact,
        "nonlink_pairs": U,
        "rank": k,
    }
