"""Fellegi-Sunter linkage with comparison levels: level codes of record pairs, the counts of
their level patterns over all pairs, and Winkler's EM for the multinomial model.

A field j compares two records on L_j ordered levels, 0 the closest (for a numeric field:
level l when the absolute difference is at most the l-th cut point and above the previous
one; the last level L_j - 1 "disagree" also takes a missing value). A pattern is the vector of
levels of the K fields, numbered in mixed radix (field 0 the fastest digit). Under conditional
independence given the match status,

    m(gamma) = prod_j m_j(gamma_j),   u(gamma) = prod_j u_j(gamma_j),

and the weight of a pattern is W = log2(m(gamma) / u(gamma)) = sum_j log2(m_j(l) / u_j(l)).
Two levels (agree, disagree) are the binary model of :mod:`sdckit._core.linkage`.

Pure NumPy on float and integer matrices. A tolerance is not an equivalence, so the hash joins
of the binary counts do not apply as they are. With at most one field with cut points, the
number of pairs at or below every level vector is a hash join on the equality fields plus one
sorted search on the numeric field, and the pattern counts are its finite differences
(O(prod L_j (n_A + n_B) log n)); otherwise the distinct rows of both files are compared
pairwise in bounded blocks (O(n_A' n_B' K) for n' distinct rows).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "level_of",
    "level_pattern_counts_enumerated",
    "cumulative_pattern_counts",
    "pattern_digits",
    "level_pattern_counts",
    "level_pattern_counts_bruteforce",
    "start_values",
    "levels_em",
    "level_pattern_weights",
]

_BLOCK = 4_000_000  # pair-field elements per block


def level_of(a: np.ndarray, b: np.ndarray, cuts: np.ndarray | None) -> np.ndarray:
    """Level of every pair (a[i], b[i]) (broadcasting) on one field.

    ``cuts`` None: a categorical field of integer codes (-1 = missing): level 0 when the codes are
    equal and observed, 1 otherwise. ``cuts`` sorted non-negative numbers: the smallest l with
    |a - b| <= cuts[l], else len(cuts); NaN (missing) gives len(cuts). The test is written
    a - c <= b <= a + c, the comparison the pattern counts make (the same rounding).
    """
    if cuts is None:
        return np.where((a == b) & (a >= 0) & (b >= 0), 0, 1).astype(np.int64)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    out = np.zeros(a.shape, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        for c in cuts:  # nested intervals: the level is the number of cuts b lies outside
            out += ~((b >= a - c) & (b <= a + c))
    return out


def pattern_digits(n_levels) -> np.ndarray:
    """The level of every field in every pattern: a (prod L_j, K) matrix (field 0 fastest)."""
    L = np.asarray(n_levels, dtype=np.int64)
    P = int(np.prod(L))
    idx = np.arange(P)
    out = np.empty((P, L.size), dtype=np.int64)
    for j, lj in enumerate(L):
        out[:, j] = idx % lj
        idx = idx // lj
    return out


def _radix(n_levels) -> np.ndarray:
    L = np.asarray(n_levels, dtype=np.int64)
    return np.concatenate([[1], np.cumprod(L[:-1])]).astype(np.int64)


def _distinct(X: np.ndarray):
    """Distinct rows (missing values equal to each other) and their counts."""
    if X.shape[0] == 0:
        return X, np.zeros(0, np.int64)
    key = np.where(np.isnan(X), np.inf, X)  # a stand-in for missing (the values are finite)
    rows, counts = np.unique(key, axis=0, return_counts=True)
    return np.where(np.isinf(rows), np.nan, rows), counts.astype(np.int64)


def _equality_key(A: np.ndarray, B: np.ndarray, cols: list):
    """One int64 key per row of A and of B for the equality fields ``cols`` (codes >= 0), or
    None when the category combinations overflow."""
    ka, kb = np.zeros(A.shape[0], np.int64), np.zeros(B.shape[0], np.int64)
    span = 1.0
    for j in cols:
        card = int(max(A[:, j].max(initial=-1), B[:, j].max(initial=-1))) + 1
        span *= max(card, 1)
        if span >= 2.0**62:
            return None
        ka = ka * card + A[:, j].astype(np.int64)
        kb = kb * card + B[:, j].astype(np.int64)
    return ka, kb, span


def _pairs_within(A: np.ndarray, B: np.ndarray, eq: list, tol):
    """Pairs agreeing on the equality fields ``eq`` and, with ``tol = (j, c)``, with
    a_j - c <= b_j <= a_j + c; None when the keys would overflow."""
    okA = np.ones(A.shape[0], bool)
    okB = np.ones(B.shape[0], bool)
    for j in eq:
        okA &= A[:, j] >= 0
        okB &= B[:, j] >= 0
    if tol is not None:
        okA &= ~np.isnan(A[:, tol[0]])
        okB &= ~np.isnan(B[:, tol[0]])
    A, B = A[okA], B[okB]
    keys = _equality_key(A, B, eq)
    if keys is None:
        return None
    ka, kb, span = keys
    if tol is None:
        ua, na = np.unique(ka, return_counts=True)
        ub, nb = np.unique(kb, return_counts=True)
        _, ia, ib = np.intersect1d(ua, ub, assume_unique=True, return_indices=True)
        return float(np.dot(na[ia].astype(float), nb[ib].astype(float)))
    j, c = tol
    va, vb = A[:, j], B[:, j]
    lo, hi = va - c, va + c
    U = np.unique(np.concatenate([vb, lo, hi]))  # ranks compare exactly as the values do
    if span * (U.size + 1) >= 2.0**62:
        return None
    size = np.int64(U.size)
    bk = np.sort(kb * size + np.searchsorted(U, vb))
    first = np.searchsorted(bk, ka * size + np.searchsorted(U, lo), side="left")
    last = np.searchsorted(bk, ka * size + np.searchsorted(U, hi), side="right")
    return float((last - first).sum())


def cumulative_pattern_counts(A: np.ndarray, B: np.ndarray, cuts: list, n_levels):
    """Pattern counts from the numbers of pairs at or below every level vector (at most one
    field with cut points): N_le(l) by hash joins and one sorted search, then finite differences
    along every field. None when the keys would overflow."""
    L = np.asarray(n_levels, dtype=np.int64)
    G = pattern_digits(L)
    K = L.size
    le = np.zeros(G.shape[0])
    for g, lv in enumerate(G):
        eq = [j for j in range(K) if cuts[j] is None and lv[j] == 0]
        tol = [(j, float(cuts[j][lv[j]])) for j in range(K) if cuts[j] is not None and lv[j] < L[j] - 1]
        got = _pairs_within(A, B, eq, tol[0] if tol else None)
        if got is None:
            return None
        le[g] = got
    N = le.reshape(tuple(L[::-1]))  # field 0 is the fastest digit: the last axis
    for axis in range(K):
        N = np.diff(N, axis=axis, prepend=0.0)
    return np.rint(N.ravel()).astype(np.int64)


def level_pattern_counts(A: np.ndarray, B: np.ndarray, cuts: list, n_levels) -> np.ndarray:
    """Number of pairs (a in A, b in B) with each level pattern.

    ``A``, ``B``: float matrices (one column per field; categorical fields hold their codes as
    numbers, -1 missing; numeric fields NaN missing); ``cuts[j]``: None (categorical) or the cut
    points of field j. With at most one field with cut points the counts come from the pairs at
    or below every level vector (hash joins and a sorted search per vector, O(prod L (n_A +
    n_B) log n), then finite differences); otherwise identical rows are counted once with their
    multiplicity and the distinct rows are compared in blocks.
    """
    n_cut = sum(c is not None for c in cuts)
    P = float(np.prod(np.asarray(n_levels, dtype=float)))
    n_pairs = float(A.shape[0]) * float(B.shape[0])
    if n_cut <= 1 and P * (A.shape[0] + B.shape[0]) * 20 < n_pairs:
        fast = cumulative_pattern_counts(A, B, cuts, n_levels)
        if fast is not None:
            return fast
    return level_pattern_counts_enumerated(A, B, cuts, n_levels)


def level_pattern_counts_enumerated(A: np.ndarray, B: np.ndarray, cuts: list, n_levels) -> np.ndarray:
    """:func:`level_pattern_counts` over the distinct rows of both files, pair by pair in blocks."""
    K = A.shape[1]
    L = np.asarray(n_levels, dtype=np.int64)
    radix = _radix(L)
    P = int(np.prod(L))
    ra, na = _distinct(A)
    rb, nb = _distinct(B)
    out = np.zeros(P, dtype=np.float64)
    if ra.shape[0] == 0 or rb.shape[0] == 0:
        return out.astype(np.int64)
    step = max(1, _BLOCK // max(1, rb.shape[0] * max(K, 1)))
    for lo in range(0, ra.shape[0], step):
        a = ra[lo : lo + step]
        pat = np.zeros((a.shape[0], rb.shape[0]), dtype=np.int64)
        for j in range(K):
            pat += radix[j] * level_of(a[:, j][:, None], rb[:, j][None, :], cuts[j])
        w = na[lo : lo + step, None].astype(np.float64) * nb[None, :].astype(np.float64)
        out += np.bincount(pat.ravel(), weights=w.ravel(), minlength=P)
    return np.rint(out).astype(np.int64)


def level_pattern_counts_bruteforce(A: np.ndarray, B: np.ndarray, cuts: list, n_levels) -> np.ndarray:
    """The same counts pair by pair (test oracle; O(n_A n_B K))."""
    L = np.asarray(n_levels, dtype=np.int64)
    radix = _radix(L)
    out = np.zeros(int(np.prod(L)), dtype=np.int64)
    for i in range(A.shape[0]):
        for h in range(B.shape[0]):
            g = 0
            for j in range(A.shape[1]):
                g += int(radix[j]) * int(level_of(A[i : i + 1, j], B[h : h + 1, j], cuts[j])[0])
            out[g] += 1
    return out


def start_values(n_levels, m0: float, u0: float) -> tuple[np.ndarray, np.ndarray]:
    """EM starting values per field and level, padded to a (K, max L) matrix with zeros.

    The agreement levels 0..L-2 share m0 with weights L-1, L-2, ..., 1 (the closest the most)
    and u0 with weights 1, 2, ..., L-1 (the closest the least); the last level gets 1 - m0 and
    1 - u0. Two levels give (m0, 1 - m0) and (u0, 1 - u0), the binary model's start.
    """
    L = np.asarray(n_levels, dtype=np.int64)
    m = np.zeros((L.size, int(L.max())))
    u = np.zeros_like(m)
    for j, lj in enumerate(L):
        wm = np.arange(lj - 1, 0, -1, dtype=float)
        wu = np.arange(1, lj, dtype=float)
        m[j, : lj - 1] = m0 * wm / wm.sum()
        u[j, : lj - 1] = u0 * wu / wu.sum()
        m[j, lj - 1], u[j, lj - 1] = 1 - m0, 1 - u0
    return m, u


def _log_prob(G: np.ndarray, q: np.ndarray) -> np.ndarray:
    """log prod_j q[j, G[:, j]] for every pattern."""
    return np.log(q[np.arange(G.shape[1])[None, :], G]).sum(axis=1)


def _m_step(w: np.ndarray, G: np.ndarray, L: np.ndarray, q_old: np.ndarray, clamp: float) -> np.ndarray:
    """Level shares of the weighted patterns per field, clipped to [clamp, 1 - clamp] and
    renormalised (an empty class keeps its old values)."""
    tot = w.sum()
    if tot <= 0:
        return q_old
    q = np.zeros_like(q_old)
    for j, lj in enumerate(L):
        s = np.bincount(G[:, j], weights=w, minlength=lj) / tot
        s = np.clip(s, clamp, 1 - clamp)
        q[j, :lj] = s / s.sum()
    return q


def levels_em(
    counts: np.ndarray,
    n_levels,
    *,
    m0: float = 0.9,
    u0: float = 0.1,
    p0: float = 0.1,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    clamp: float = 1e-6,
):
    """Winkler's EM for m_j(l), u_j(l) and p = P(M) on level-pattern counts (conditional
    independence).

    E-step: g(gamma) = p m(gamma) / (p m(gamma) + (1 - p) u(gamma)). M-step: p = sum n g / sum n;
    m_j(l) = sum_{gamma_j = l} n g / sum n g; u_j(l) likewise with 1 - g. Probabilities are
    clipped to [clamp, 1 - clamp] and renormalised; stops when the largest change is below
    ``tol``. If at convergence sum_j P(not disagree | M) < sum_j P(not disagree | U) the labels
    are swapped. Returns ``(m, u, p, iterations, converged)`` with m, u as (K, max L) matrices
    (zeros beyond a field's levels).
    """
    L = np.asarray(n_levels, dtype=np.int64)
    G = pattern_digits(L)
    n = np.asarray(counts, dtype=float)
    total = n.sum()
    m, u = start_values(L, m0, u0)
    p = float(p0)
    it, converged = 0, False
    for step in range(1, max_iter + 1):
        it = step
        num = p * np.exp(_log_prob(G, m))
        post = num / (num + (1 - p) * np.exp(_log_prob(G, u)))
        wm, wu = n * post, n * (1 - post)
        p_new = wm.sum() / total
        m_new, u_new = _m_step(wm, G, L, m, clamp), _m_step(wu, G, L, u, clamp)
        change = max(abs(p_new - p), float(np.max(np.abs(m_new - m))), float(np.max(np.abs(u_new - u))))
        m, u, p = m_new, u_new, p_new
        if change < tol:
            converged = True
            break
    last = L - 1
    rows = np.arange(L.size)
    if (1 - m[rows, last]).sum() < (1 - u[rows, last]).sum():
        m, u, p = u, m, 1 - p
    return m, u, p, it, converged


def level_pattern_weights(m: np.ndarray, u: np.ndarray, n_levels):
    """Per pattern: m(gamma), u(gamma) and W = log2(m(gamma)/u(gamma))."""
    G = pattern_digits(n_levels)
    lm, lu = _log_prob(G, m), _log_prob(G, u)
    return np.exp(lm), np.exp(lu), (lm - lu) / math.log(2)
