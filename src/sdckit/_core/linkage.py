"""Record-linkage kernels: distance-based linkage with exact tie handling,
Fellegi-Sunter pattern counting by Moebius inversion and EM, one-to-one assignment.

Pure NumPy/SciPy on float matrices (``NaN`` = missing) and integer code matrices (``-1`` =
missing). Never builds an n x n distance matrix: nearest neighbours come from a k-d tree,
records with missing values are compared in bounded blocks.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

__all__ = [
    "sq_distances",
    "true_partner_ranks",
    "pattern_counts",
    "pattern_counts_bruteforce",
    "fellegi_sunter_em",
    "pattern_weights",
    "classify_patterns",
    "assignment_links",
]

_BLOCK = 2_000_000  # elements per dense block


def sq_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared distance between rows a[i] and b[i] (broadcasting), missing variables skipped and
    the sum rescaled by p / (number compared); +inf when nothing is compared."""
    diff = a - b
    miss = np.isnan(diff)
    p = diff.shape[-1]
    # one arithmetic for every call (no einsum fast path): the same pair must give the same bits
    # whether it is measured alone or in a block, so that ties are detected exactly
    d2 = np.square(np.where(miss, 0.0, diff))
    if not miss.any():
        return d2.sum(axis=-1)
    m = p - miss.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = d2.sum(axis=-1) * (p / m)
    return np.where(m > 0, s, np.inf)


def _dense_counts(ya, xs, dtrue, rows_a):
    """For protected rows ``rows_a``: counts of originals in ``xs`` strictly closer than the true
    partner and at exactly the same distance (blocked)."""
    lt = np.zeros(rows_a.size, dtype=np.int64)
    eq = np.zeros(rows_a.size, dtype=np.int64)
    if xs.shape[0] == 0 or rows_a.size == 0:
        return lt, eq
    step = max(1, _BLOCK // max(1, xs.shape[0] * xs.shape[1]))
    for lo in range(0, rows_a.size, step):
        r = rows_a[lo : lo + step]
        d2 = sq_distances(ya[r][:, None, :], xs[None, :, :])
        t = dtrue[r][:, None]
        lt[lo : lo + step] = np.count_nonzero(d2 < t, axis=1)
        eq[lo : lo + step] = np.count_nonzero(d2 == t, axis=1)
    return lt, eq


def true_partner_ranks(xs: np.ndarray, ys: np.ndarray, *, k0: int = 4):
    """For every protected record a: ``below`` = #{originals strictly closer than its true
    partner}, capped at 2 (only positions 1 and 2 matter), and ``ties`` = #{originals at exactly
    the true partner's distance} (the partner included), exact when ``below <= 1``.

    Protected records are grouped by their pattern of observed variables; for each pattern a
    k-d tree on the complete originals restricted to those variables gives the candidates (the
    rescaled distance of F.1 orders them like the Euclidean distance on the observed variables),
    which are re-measured with :func:`sq_distances` so that equal pairs give bit-identical
    distances; the candidate list grows while it may cut a tie. Originals with missing values are
    compared in dense blocks. Also returns the nearest original of each protected record (``-1``
    if none is comparable).
    """
    n, p = ys.shape
    dtrue = sq_distances(ys, xs)
    xmiss = np.isnan(xs).any(axis=1)
    xc_idx = np.flatnonzero(~xmiss)
    xi_idx = np.flatnonzero(xmiss)
    below = np.zeros(n, dtype=np.int64)
    ties = np.zeros(n, dtype=np.int64)
    nearest = np.full(n, -1, dtype=np.int64)
    obs = ~np.isnan(ys)
    pattern = obs @ (1 << np.arange(p, dtype=np.int64))
    if xc_idx.size:
        for pat in np.unique(pattern):
            dims = np.flatnonzero(pat >> np.arange(p) & 1)
            rows = np.flatnonzero(pattern == pat)
            if dims.size == 0:
                continue  # nothing observed: every distance is +inf
            tree = cKDTree(xs[np.ix_(xc_idx, dims)])
            pending = rows
            kk = min(k0, xc_idx.size)
            while pending.size:
                _, ii = tree.query(ys[np.ix_(pending, dims)], k=kk, workers=-1)
                cand = xc_idx[ii.reshape(pending.size, kk)]
                d2 = sq_distances(ys[pending][:, None, :], xs[cand])
                t = dtrue[pending][:, None]
                lt = np.count_nonzero(d2 < t, axis=1)
                eq = np.count_nonzero(d2 == t, axis=1)
                nearest[pending] = cand[np.arange(pending.size), np.argmin(d2, axis=1)]
                below[pending] = lt
                ties[pending] = eq
                # the candidate list may be cut inside the group at or below the true distance
                more = (kk < xc_idx.size) & (d2.max(axis=1) <= t[:, 0] * (1 + 1e-9)) & (lt <= 1)
                pending = pending[more]
                kk = min(xc_idx.size, kk * 4)
    if xi_idx.size:  # originals with missing values: dense blocks against every protected record
        allrows = np.arange(n)
        lt, eq = _dense_counts(ys, xs[xi_idx], dtrue, allrows)
        below += lt
        ties += eq
        _nearest_update(ys, xs, xi_idx, allrows, nearest, replace=not xc_idx.size)
    inf = ~np.isfinite(dtrue)  # the true pair shares no variable: never linked
    below[inf] = np.maximum(below[inf], 2)
    return np.minimum(below, 2), ties, nearest


def _nearest_update(ys, xs, cols, rows, nearest, replace=False):
    step = max(1, _BLOCK // max(1, cols.size * xs.shape[1]))
    for lo in range(0, rows.size, step):
        r = rows[lo : lo + step]
        d2 = sq_distances(ys[r][:, None, :], xs[cols][None, :, :])
        j = np.argmin(d2, axis=1)
        best = d2[np.arange(r.size), j]
        if replace:
            nearest[r] = np.where(np.isfinite(best), cols[j], -1)
        else:
            cur = nearest[r]
            curd = np.where(cur >= 0, sq_distances(ys[r], xs[np.maximum(cur, 0)]), np.inf)
            nearest[r] = np.where(best < curd, cols[j], cur)


# ----------------------------------------------------------------------------------------------
# Fellegi-Sunter (F.2)
# ----------------------------------------------------------------------------------------------
def _subset_key(codes: np.ndarray, cols: list[int], cards: np.ndarray):
    """One int64 key per row for the columns ``cols`` (rows missing on any of them dropped)."""
    ok = np.all(codes[:, cols] >= 0, axis=1)
    key = np.zeros(int(ok.sum()), dtype=np.int64)
    for c in cols:
        key = key * int(cards[c]) + codes[ok, c]
    return key


def pattern_counts(ca: np.ndarray, cb: np.ndarray, cards) -> np.ndarray:
    """Number of record pairs (a in A, b in B) with each agreement pattern, without enumerating
    pairs: A(T) = #pairs agreeing on all fields of T by hash joins of value counts, then
    Moebius inversion N(S) = sum_{T >= S} (-1)^{|T - S|} A(T). Pattern index:
    bit j set = field j agrees. A missing code (-1) never agrees. Cost O(2^K (n_A + n_B))."""
    K = ca.shape[1]
    cards = np.asarray(cards, dtype=np.int64)
    if np.prod(cards.astype(float)) >= 2.0**62:
        raise OverflowError("too many category combinations for the pattern-count keys")
    A = np.zeros(1 << K, dtype=np.float64)
    A[0] = float(ca.shape[0]) * float(cb.shape[0])
    for T in range(1, 1 << K):
        cols = [j for j in range(K) if T >> j & 1]
        ka, na = np.unique(_subset_key(ca, cols, cards), return_counts=True)
        kb, nb = np.unique(_subset_key(cb, cols, cards), return_counts=True)
        common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
        A[T] = float(np.dot(na[ia].astype(np.float64), nb[ib].astype(np.float64)))
    # Moebius inversion over supersets: N(S) = sum_{T >= S} (-1)^{|T|-|S|} A(T)
    N = A.copy()
    for j in range(K):
        bit = 1 << j
        for S in range(1 << K):
            if not S & bit:
                N[S] -= N[S | bit]
    return np.rint(N).astype(np.int64)


def pattern_counts_bruteforce(ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """The same counts by enumerating every pair (test oracle; O(n_A n_B K))."""
    K = ca.shape[1]
    out = np.zeros(1 << K, dtype=np.int64)
    for i in range(ca.shape[0]):
        agree = (cb == ca[i]) & (cb >= 0) & (ca[i] >= 0)
        pat = (agree * (1 << np.arange(K))).sum(axis=1)
        out += np.bincount(pat, minlength=1 << K)
    return out


def _pattern_bits(K: int) -> np.ndarray:
    return ((np.arange(1 << K)[:, None] >> np.arange(K)) & 1).astype(float)


def fellegi_sunter_em(
    counts: np.ndarray,
    K: int,
    *,
    m0: float = 0.9,
    u0: float = 0.1,
    p0: float = 0.1,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    clamp: float = 1e-6,
):
    """EM for m_j, u_j and p = P(M) on agreement-pattern counts (conditional independence).

    Starts at m_j = m0, u_j = u0, p = p0; m and u are clamped to [clamp, 1 - clamp]; stops when
    the largest parameter change is below ``tol``; if at convergence sum m < sum u, the labels
    are swapped. Returns ``(m, u, p, iterations, converged)``.
    """
    g = _pattern_bits(K)
    n = counts.astype(float)
    total = n.sum()
    m = np.full(K, m0)
    u = np.full(K, u0)
    p = float(p0)
    it = 0
    converged = False
    lo, hi = clamp, 1 - clamp
    for step in range(1, max_iter + 1):
        it = step
        lm = np.exp(g @ np.log(m) + (1 - g) @ np.log1p(-m))
        lu = np.exp(g @ np.log(u) + (1 - g) @ np.log1p(-u))
        num = p * lm
        post = num / (num + (1 - p) * lu)
        wm = n * post
        wu = n * (1 - post)
        p_new = wm.sum() / total
        m_new = np.clip((wm @ g) / wm.sum(), lo, hi) if wm.sum() > 0 else m
        u_new = np.clip((wu @ g) / wu.sum(), lo, hi) if wu.sum() > 0 else u
        change = max(abs(p_new - p), float(np.max(np.abs(m_new - m))), float(np.max(np.abs(u_new - u))))
        m, u, p = m_new, u_new, p_new
        if change < tol:
            converged = True
            break
    if m.sum() < u.sum():
        m, u, p = u, m, 1 - p
    return m, u, p, it, converged


def pattern_weights(m: np.ndarray, u: np.ndarray):
    """Per pattern: m(gamma), u(gamma) and W = log2(m(gamma)/u(gamma))."""
    K = m.size
    g = _pattern_bits(K)
    lm = g @ np.log(m) + (1 - g) @ np.log1p(-m)
    lu = g @ np.log(u) + (1 - g) @ np.log1p(-u)
    return np.exp(lm), np.exp(lu), (lm - lu) / math.log(2)


def classify_patterns(mg: np.ndarray, ug: np.ndarray, W: np.ndarray, mu: float, lam: float) -> np.ndarray:
    """2 = link, 1 = possible link, 0 = non-link for each pattern (Fellegi & Sunter 1969):
    the top patterns by W are links while their cumulative u(gamma) <= mu, the bottom patterns
    non-links while their cumulative m(gamma) <= lambda."""
    order = np.argsort(-W, kind="stable")
    cls = np.ones(W.size, dtype=np.int8)
    cu = np.cumsum(ug[order])
    cls[order[cu <= mu]] = 2
    rev = order[::-1]
    cm = np.cumsum(mg[rev])
    nonlink = rev[cm <= lam]
    cls[nonlink[cls[nonlink] != 2]] = 0
    return cls


# ----------------------------------------------------------------------------------------------
# one-to-one assignment (sdcMicro recordLinkage model)
# ----------------------------------------------------------------------------------------------
def assignment_links(xs: np.ndarray, ys: np.ndarray, *, dense_limit: int = 2000, k0: int = 20) -> np.ndarray:
    """One-to-one linkage of protected to original records minimising the total distance.

    n <= ``dense_limit``: exact optimum on the full cost matrix (Hungarian algorithm,
    ``scipy.optimize.linear_sum_assignment``). Larger files: exact optimum restricted to each
    protected record's ``k0`` nearest originals (k-d tree; k doubled until a perfect matching
    exists), solved as a sparse bipartite matching, so memory stays O(n k).
    Returns, per protected record, the index of the original it is linked to.
    """
    from scipy.optimize import linear_sum_assignment

    n = ys.shape[0]
    if np.isnan(xs).any() or np.isnan(ys).any():
        raise ValueError("assignment linkage needs complete data")
    if n <= dense_limit:
        cost = np.sqrt(np.maximum(sq_distances(ys[:, None, :], xs[None, :, :]), 0.0))
        r, c = linear_sum_assignment(cost)
        out = np.empty(n, dtype=np.int64)
        out[r] = c
        return out
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    tree = cKDTree(xs)
    k = min(k0, n)
    while True:
        d, ii = tree.query(ys, k=k, workers=-1)
        rows = np.repeat(np.arange(n), k)
        g = csr_matrix((d.ravel() + 1.0, (rows, ii.ravel())), shape=(n, n))  # +1: no zero weights
        try:
            _, col = min_weight_full_bipartite_matching(g)
            return col.astype(np.int64)
        except ValueError:
            if k >= n:
                raise
            k = min(n, k * 4)
