"""Robust multivariate location and scatter: the Minimum Covariance Determinant (MCD).

The one MCD implementation of the library, shared by the continuous-key risk measures
(:mod:`sdckit._core.continuous`: robust Mahalanobis distance intervals and multivariate
outliers) and the robust eigenvalue information loss
(:mod:`sdckit._core.infoloss` ``robeigen``).

NumPy only at import time: this module is loaded by ``import sdckit`` (through
:mod:`sdckit._core.infoloss`), so SciPy's special functions are imported inside the functions
that compute a chi-square factor.

Contents
--------
* :func:`mcd` - FAST-MCD with C-steps, consistency and small-sample factors and reweighting,
  returning an :class:`MCDResult`.
* :func:`h_alpha_n`, :func:`mcd_consistency`, :func:`mcd_small_sample` - subset size and
  correction factors.
* :func:`mahalanobis_sq` - squared Mahalanobis distances.
* :func:`content_key`, :func:`content_order` - a record order fixed by the values only, to take
  subsamples that do not depend on the row order of a file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = [
    "MCDResult",
    "h_alpha_n",
    "chi2_cdf",
    "chi2_ppf",
    "mcd_consistency",
    "mcd_small_sample",
    "mahalanobis_sq",
    "content_key",
    "content_order",
    "mcd",
]

_BUDGET = 4_000_000  # float64 cells of one (starts, records, variables) block: about 32 MB
#: cells of one block of (estimates, records, variables) deviations in the C-steps: about 8 MB,
#: small enough to stay in cache (the operations per distance, hence the results, do not depend
#: on the block size; 1e6 instead of 4e6 cells measured 15-25 % faster)
_DISTANCE_BUDGET = 1_000_000


# ----------------------------------------------------------------------------------------------
# chi-square helpers and correction factors
# ----------------------------------------------------------------------------------------------
def chi2_cdf(x: float, k: int) -> float:
    """P(chi2_k <= x) (regularised lower incomplete gamma function)."""
    from scipy.special import gammainc

    return float(gammainc(k / 2.0, x / 2.0))


def chi2_ppf(q: float, k: int) -> float:
    """The q quantile of chi2_k."""
    from scipy.special import gammaincinv

    return 2.0 * float(gammaincinv(k / 2.0, q))


def h_alpha_n(alpha: float, n: int, p: int) -> int:
    """Size h of the MCD subset: ``floor(2 n2 - n + 2 (n - n2) alpha)``, ``n2 = (n + p + 1) // 2``
    (Rousseeuw & Van Driessen 1999; the convention of robustbase). ``alpha = 0.5`` gives
    ``h = (n + p + 1) // 2``, the subset of maximal breakdown point."""
    n2 = (n + p + 1) // 2
    return int(math.floor(2 * n2 - n + 2 * (n - n2) * alpha))


def mcd_consistency(p: int, frac: float) -> float:
    """Consistency factor of the MCD covariance at the normal model (Croux & Haesbroeck 1999):
    ``frac / P(chi2_{p+2} <= q)`` with ``q`` the ``frac`` quantile of chi2_p; 1 for frac >= 1."""
    if frac >= 1.0:
        return 1.0
    return float(frac / chi2_cdf(chi2_ppf(frac, p), p + 2))


# Pison, Van Aelst & Willems (2002), "Small sample corrections for LTS and MCD", Metrika 55:
# f_{p,n} = 1 - exp(c0) / n^c1, with (c0, c1) interpolated in p from the fitted values of the
# paper at q = 2 and q = 3 (coefficients alpha_q, beta_q of the paper, for h = n/2 and 0.875 n).
_PISON = {
    "raw": {
        0.5: ((-1.42764571687802, 1.26263336932151), (-1.06141115981725, 1.28907991440387)),
        0.875: ((-0.455179464070565, 1.11192541278794), (-0.294241208320834, 1.09649329149811)),
    },
    "rew": {
        0.5: ((-1.02842572724793, 1.67659883081926), (-0.26800273450853, 1.35968562893582)),
        0.875: ((-0.544482443573914, 1.25994483222292), (-0.343791072183285, 1.25159004257133)),
    },
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
        y = np.log([-a2 / p**b2, -a3 / p**b3])
        A = np.array([[1.0, -np.log(2 * p * p)], [1.0, -np.log(3 * p * p)]])
        c0, c1 = np.linalg.solve(A, y)
    return 1.0 - math.exp(c0) / n**c1


def mcd_small_sample(p: int, n: int, alpha: float, kind: str = "raw") -> float:
    """Small-sample correction factor of the MCD covariance (Pison, Van Aelst & Willems 2002).

    The paper's fitted curve ``1 / f_{p,n}`` interpolated linearly in alpha between 0.5 and
    0.875 (and to 1 at alpha = 1); ``kind`` is ``"raw"`` or ``"rew"`` (reweighted). Where the
    fitted curve is not a valid factor (tiny n, where ``f_{p,n} <= 0``) the factor is 1:
    robustbase uses a table of simulated factors there (p <= 9, n <= 20), which this library
    does not reproduce (documented deviation).
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


def mahalanobis_sq(X: np.ndarray, center: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Squared Mahalanobis distances ``(x - center)' cov^-1 (x - center)`` of the rows of X."""
    dev = X - center
    sol = np.linalg.solve(cov, dev.T).T
    return np.einsum("nj,nj->n", dev, sol)


# ----------------------------------------------------------------------------------------------
# order of records by content
# ----------------------------------------------------------------------------------------------
def content_key(X: np.ndarray) -> np.ndarray:
    """A pseudo-random number in [0, 1) per record computed from its values only (row order
    and the other records do not enter); NaN and infinities count as 0."""
    acc = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        acc += np.nan_to_num(X[:, j], nan=0.0, posinf=0.0, neginf=0.0) * (1.0 + 0.6180339887498949 * (j + 1))
    return np.modf(np.abs(acc) * 7919.617 + 0.5)[0]


def content_order(X: np.ndarray, *ties: np.ndarray, limit: int | None = None) -> np.ndarray:
    """Row indices in the order of :func:`content_key` of X, ties broken by the keys of the
    matrices ``ties`` (same rows, e.g. the protected file of a pair), in turn.

    The order, and so any subsample taken as its first ``limit`` records, depends on the values
    only: a row permutation of the inputs permutes the returned indices the same way. With
    ``limit``, only the ``limit`` records of smallest key are returned (every record tied at the
    cut competes, whatever the row order), a pseudo-random sample chosen by content.
    """
    kx = content_key(X)
    keys = [content_key(T) for T in ties]
    if limit is not None and kx.size > limit:
        part = np.argpartition(kx, limit - 1)[:limit]
        cand = np.flatnonzero(kx <= kx[part].max())
        return cand[np.lexsort(tuple(k[cand] for k in reversed(keys)) + (kx[cand],))][:limit]
    return np.lexsort(tuple(reversed(keys)) + (kx,))


# ----------------------------------------------------------------------------------------------
# FAST-MCD
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MCDResult:
    """Reweighted MCD estimate (``center``, ``cov``) and the raw one, with the h-subset."""

    center: np.ndarray
    cov: np.ndarray
    raw_center: np.ndarray
    raw_cov: np.ndarray
    best: np.ndarray  # indices of the raw h-subset (sorted)
    weights: np.ndarray  # reweighting flags (bool): the records of the reweighted estimate
    h: int
    factors: tuple  # (raw consistency, raw small-sample, rew consistency, rew small-sample)


def _subset_stats(X, idx):
    """Batched mean and covariance (n - 1) of the rows ``X[idx[s]]`` for every subset ``s``."""
    sub = X[idx]  # (S, k, p)
    mu = sub.mean(axis=1)
    dev = sub - mu[:, None, :]
    cov = np.matmul(dev.transpose(0, 2, 1), dev) / (idx.shape[1] - 1)
    return mu, cov


def _logdet(cov):
    """log det of each covariance of a batch; -inf where it is singular (an exact fit)."""
    sign, ld = np.linalg.slogdet(cov)
    return np.where(sign > 0, ld, -np.inf)


def _mahalanobis_batch(XT, mu, inv):
    """Squared Mahalanobis distances (S, n) of the columns of ``XT`` (p, n) to every estimate
    ``mu[s]`` under the (symmetric) inverse covariance ``inv[s]``: the quadratic form summed
    term by term over the p (p + 1) / 2 pairs of variables, each term one vectorised operation
    on (S, n) arrays (much faster than S stacked (n, p) x (p, p) products for small p)."""
    p = XT.shape[0]
    dev = XT[:, None, :] - mu.T[:, :, None]  # (p, S, n)
    d = np.zeros(dev.shape[1:])
    for j in range(p):
        t = inv[:, j, j, None] * dev[j]
        for k in range(j + 1, p):
            t += (2.0 * inv[:, j, k])[:, None] * dev[k]
        t *= dev[j]
        d += t
    return d


def _nearest(XT, mu, inv, h):
    """For every estimate s, the sorted indices of the h records (columns of ``XT``) of
    smallest Mahalanobis distance to ``mu[s]`` under the inverse covariance ``inv[s]``; in
    blocks of estimates so that the (p, S, n) deviations stay within the memory budget."""
    p, n = XT.shape
    S = mu.shape[0]
    out = np.empty((S, h), dtype=np.intp)
    step = max(1, _DISTANCE_BUDGET // max(n * p, 1))
    for lo in range(0, S, step):
        hi = min(S, lo + step)
        d = _mahalanobis_batch(XT, mu[lo:hi], inv[lo:hi])
        part = np.argpartition(d, h - 1, axis=1)[:, :h]
        mask = np.zeros(d.shape, dtype=bool)
        mask[np.arange(hi - lo)[:, None], part] = True
        out[lo:hi] = np.nonzero(mask)[1].reshape(hi - lo, h)  # row-major: sorted within each row
    return out


def _csteps(X, idx, h, steps=None, max_iter=200, XT=None):
    """C-steps (concentration steps, Rousseeuw & Van Driessen 1999, theorem 1) of the batch of
    h-subsets ``idx`` (S, h): each step replaces a subset by the h records nearest to its mean
    under its covariance, which cannot increase the determinant. ``steps`` steps, or until the
    subset no longer changes (at most ``max_iter`` + 1 steps) when ``steps`` is None. A subset
    stops as soon as it is a fixed point (the next steps would repeat it), so converged ones cost
    nothing; an exact fit (singular covariance) is kept as it is. Returns (subsets, log det)."""
    XT = np.ascontiguousarray(X.T) if XT is None else XT
    idx = idx.copy()
    ld = np.empty(idx.shape[0])
    limit = max_iter + 1 if steps is None else steps
    active = np.arange(idx.shape[0])
    mu, cov = _subset_stats(X, idx)
    ld[:] = _logdet(cov)
    it = 0
    while active.size and it < limit:
        cur = idx[active]
        ok = np.isfinite(ld[active])
        new = cur.copy()
        if ok.any():
            new[ok] = _nearest(XT, mu[ok], np.linalg.inv(cov[ok]), h)
        changed = np.any(new != cur, axis=1)
        idx[active] = new
        active = active[changed]
        it += 1
        if active.size:
            mu, cov = _subset_stats(X, idx[active])
            ld[active] = _logdet(cov)
    return idx, ld


def _random_starts(n, k, nsamp, rng):
    """``nsamp`` random k-subsets of range(n) (sorted rows): the k smallest of n uniform numbers
    per start, drawn in blocks (the same stream as one (nsamp, n) draw)."""
    out = np.empty((nsamp, k), dtype=np.intp)
    step = max(1, _BUDGET // max(n, 1))
    for lo in range(0, nsamp, step):
        hi = min(nsamp, lo + step)
        r = rng.random((hi - lo, n))
        out[lo:hi] = np.sort(np.argpartition(r, k - 1, axis=1)[:, :k], axis=1)
    return out


def _initial_subsets(X, h, nsamp, rng):
    """h-subsets from (p + 1)-point starts: all of them when there are at most ``nsamp``
    (exhaustive), otherwise ``nsamp`` random ones (FAST-MCD). A singular start is widened with
    random extra records until its covariance is regular (or it holds h records: an exact fit,
    kept as it is); each start then gives the h records nearest to it."""
    n, p = X.shape
    if math.comb(n, p + 1) <= nsamp:
        starts = np.array(list(combinations(range(n), p + 1)), dtype=np.intp)
    else:
        starts = _random_starts(n, p + 1, nsamp, rng)
    mu, cov = _subset_stats(X, starts)
    idx = np.empty((starts.shape[0], h), dtype=np.intp)
    ok = np.isfinite(_logdet(cov))
    for s in np.flatnonzero(~ok):
        members = list(starts[s])
        perm = rng.permutation(n)
        for extra in perm[~np.isin(perm, members)]:
            members.append(int(extra))
            c = np.atleast_2d(np.cov(X[members], rowvar=False))
            if np.linalg.slogdet(c)[0] > 0:
                mu[s], cov[s], ok[s] = X[members].mean(axis=0), c, True
                break
            if len(members) >= h:
                idx[s] = np.sort(members)
                break
    if ok.any():
        idx[ok] = _nearest(np.ascontiguousarray(X.T), mu[ok], np.linalg.inv(cov[ok]), h)
    return idx


def _distinct(idx):
    """The distinct rows of a batch of subsets, in their first-occurrence order."""
    _, first = np.unique(idx, axis=0, return_index=True)
    return idx[np.sort(first)]


def _fast_mcd(X, alpha, h, nsamp, subsample, n_best, n_full, rng):
    """The h-subset of smallest covariance determinant found by FAST-MCD; returns (subset,
    log det), log det = -inf for an exact fit. Identical candidate subsets are iterated once."""
    n, p = X.shape
    if n > subsample:
        sub = np.sort(rng.choice(n, subsample, replace=False))
        Xs = X[sub]
        hs = h_alpha_n(alpha, subsample, p)
        idx, ld = _csteps(Xs, _initial_subsets(Xs, hs, nsamp, rng), hs, 2)
        idx, ld = _csteps(Xs, _distinct(idx[np.argsort(ld, kind="stable")[:n_best]]), hs)
        idx = _distinct(idx[np.argsort(ld, kind="stable")[:n_full]])
        # carry the subsample solutions to all records: the h nearest under each estimate
        mu, cov = _subset_stats(Xs, idx)
        XT = np.ascontiguousarray(X.T)
        idx, ld = _csteps(X, _nearest(XT, mu, np.linalg.pinv(cov), h), h, XT=XT)
    else:
        idx, ld = _csteps(X, _initial_subsets(X, h, nsamp, rng), h, 2)
        idx, ld = _csteps(X, _distinct(idx[np.argsort(ld, kind="stable")[:n_best]]), h)
    b = int(np.argmin(ld))
    return idx[b], float(ld[b])


def mcd(
    X: np.ndarray,
    alpha: float = 0.5,
    *,
    seed: int = 0,
    nsamp: int = 500,
    subsample: int = 1500,
    n_best: int = 10,
    n_full: int | None = None,
    small_sample: bool | tuple = True,
    order: str = "content",
) -> MCDResult:
    """Reweighted Minimum Covariance Determinant estimator, computed by FAST-MCD.

    The MCD of Rousseeuw (1984) is the mean and covariance of the h records (out of n) whose
    covariance matrix has the smallest determinant; with h = (n + p + 1) // 2 (``alpha = 0.5``)
    its breakdown point is maximal. It is computed by the FAST-MCD algorithm of Rousseeuw &
    Van Driessen (1999), made consistent at the normal model (Croux & Haesbroeck 1999), corrected
    for small samples (Pison, Van Aelst & Willems 2002) and reweighted, as robustbase's
    ``covMcd`` does.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Complete, finite records (rows with a missing value must be removed first).
    alpha : float in [0.5, 1], default 0.5
        Size of the subset: ``h = h_alpha_n(alpha, n, p)``.
    seed : int, default 0
        Seed of the random starts and of the subsample; the result is deterministic for a given
        seed (and does not use the random generator at all when the search is exhaustive).
    nsamp : int, default 500
        Number of random (p + 1)-point starts. When there are at most ``nsamp`` distinct starts
        (``C(n, p + 1) <= nsamp``) all of them are used (exhaustive search, as robustbase does
        for small n).
    subsample : int, default 1500
        Above this many records the starts are concentrated on a random subsample of this size.
    n_best : int, default 10
        Number of best solutions (after two C-steps) iterated to convergence.
    n_full : int or None, default None (= ``n_best``)
        With n > ``subsample``: number of the best subsample solutions carried to all records
        and iterated there to convergence. Each C-step on all records costs O(n p^2) per
        solution, so ``n_full=1`` is several times faster for large n (the subsample optimum
        rarely loses on all records; the robust eigenvalue loss uses it on up to 10^5 records).
    small_sample : bool or (float, float), default True
        True: the small-sample factors of :func:`mcd_small_sample` (raw and reweighted);
        False: none (factors 1); a pair ``(raw, reweighted)`` gives them, e.g. robustbase's
        simulated factors for tiny n.
    order : {"content", "rows"}, default "content"
        ``"content"``: the random starts and the subsample are drawn on the records sorted by
        their values (lexicographically), so the estimate does not depend on the row order of X;
        the order is also unchanged by a positive scaling and shift of each variable, which keeps
        the estimate affine equivariant for such maps. ``"rows"``: draw on the rows as given
        (for a caller that has already put them in an order fixed by content, see
        :func:`content_order`).

    Returns
    -------
    MCDResult
        ``center``, ``cov``: reweighted estimate; ``raw_center``, ``raw_cov``: raw (corrected)
        estimate; ``best``: sorted row indices of the raw h-subset; ``weights``: records of the
        reweighted estimate; ``h``; ``factors``: (raw consistency, raw small-sample, reweighted
        consistency, reweighted small-sample).

    Raises
    ------
    ValueError
        With at most p + 1 records.
    numpy.linalg.LinAlgError
        Exact fit: h or more records lie on a hyperplane, so the MCD covariance is singular.

    Notes
    -----
    1. Starts: every (p + 1)-subset when there are at most ``nsamp``, otherwise ``nsamp``
       random ones; a singular start is widened with random records until its covariance is
       regular. Each start gives the h records nearest to it in Mahalanobis distance.
    2. C-steps: from a subset H with mean m and covariance S, the h records with the smallest
       ``(x - m)' S^-1 (x - m)`` form a subset whose covariance determinant is not larger
       (Rousseeuw & Van Driessen 1999, theorem 1). Every start gets two C-steps, all starts at
       once (batched NumPy, in blocks within a fixed memory budget); the ``n_best`` subsets of
       smallest determinant are iterated until they no longer change.
    3. Large n (n > ``subsample``): steps 1-2 run on a random subsample with
       ``h_sub = h_alpha_n(alpha, subsample, p)``; the ``n_full`` best distinct solutions are
       carried to all records (the h nearest under each) and iterated there to convergence.
       Cost O(n p^2) per C-step; the starts cost O(nsamp * subsample * p^2) whatever n.
    4. Raw estimate: mean and covariance (divisor h - 1) of the best subset, the covariance
       multiplied by the consistency factor ``mcd_consistency(p, h / n)`` and the raw
       small-sample factor.
    5. Reweighting: the records with squared raw distance below ``chi2_{p, 0.975}`` give the
       mean and the covariance (n - 1), multiplied by ``mcd_consistency(p, n_w / n)`` and the
       reweighted small-sample factor (both 1 when every record is kept). If p or fewer records
       are kept the raw estimate is returned.

    The consistency factor of Croux & Haesbroeck is ``a / P(chi2_{p+2} <= chi2_{p,a})`` for a
    share ``a`` of the records.

    References
    ----------
    Rousseeuw, P. J. and Van Driessen, K. (1999). A fast algorithm for the minimum covariance
    determinant estimator. Technometrics 41(3), 212-223.

    Croux, C. and Haesbroeck, G. (1999). Influence function and efficiency of the minimum
    covariance determinant scatter matrix estimator. Journal of Multivariate Analysis 71(2),
    161-190.

    Pison, G., Van Aelst, S. and Willems, G. (2002). Small sample corrections for LTS and MCD.
    Metrika 55(1-2), 111-123.
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    if n <= p + 1:
        raise ValueError(f"the MCD needs more than p + 1 = {p + 1} records; got {n}")
    if order not in ("content", "rows"):
        raise ValueError(f"order: got {order!r}; expected 'content' or 'rows'")
    h = h_alpha_n(alpha, n, p)
    rng = np.random.default_rng(seed)
    perm = np.lexsort(X.T[::-1]) if order == "content" else None
    best, ld = _fast_mcd(
        X if perm is None else X[perm], alpha, h, nsamp, subsample, n_best, n_best if n_full is None else n_full, rng
    )
    if not np.isfinite(ld):
        raise np.linalg.LinAlgError("more than h records lie on a hyperplane: the MCD covariance is singular")
    if perm is not None:
        best = np.sort(perm[best])
    raw_center = X[best].mean(axis=0)
    c_raw = mcd_consistency(p, h / n)
    if small_sample is True:
        s_raw, s_rew = mcd_small_sample(p, n, alpha, "raw"), mcd_small_sample(p, n, alpha, "rew")
    elif small_sample is False:
        s_raw, s_rew = 1.0, 1.0
    else:
        s_raw, s_rew = (float(f) for f in small_sample)
    raw_cov = np.cov(X[best].T).reshape(p, p) * c_raw * s_raw
    w = mahalanobis_sq(X, raw_center, raw_cov) < chi2_ppf(0.975, p)
    nw = int(w.sum())
    if nw <= p:  # degenerate reweighting: keep the raw estimate
        return MCDResult(raw_center, raw_cov, raw_center, raw_cov, best, w, h, (c_raw, s_raw, 1.0, 1.0))
    center = X[w].mean(axis=0)
    cov = np.cov(X[w].T).reshape(p, p)
    c_rew = 1.0
    if nw < n:
        c_rew = mcd_consistency(p, nw / n)
        cov = cov * c_rew * s_rew
    else:
        s_rew = 1.0
    return MCDResult(center, cov, raw_center, raw_cov, best, w, h, (c_raw, s_raw, c_rew, s_rew))
