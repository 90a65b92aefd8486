r"""Kernels of the synthetic-data measures: distances between two distributions of
categorical keys, nearest-record search with a mixed distance, the attacks of anonymeter
(singling out, linkability, inference) and their success rates with a control baseline, and
the propensity-score (pMSE) utility.

Everything works on NumPy arrays of integer codes (categorical variables, -1 = missing) and
floats (numeric variables, NaN = missing); no frame library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

__all__ = [
    "AttackCounts",
    "PSEUDO_COUNT",
    "attack_risk",
    "equal_row_pairs",
    "fisher_greater",
    "match_matrix",
    "presence_test",
    "singled_out",
    "row_ids",
    "weighted_holm",
    "cell_ids",
    "distances",
    "exact_matches",
    "key_combinations",
    "linkability_successes",
    "inference_successes",
    "nearest",
    "pmse",
    "residual",
    "singling_out_queries",
    "query_counts",
    "query_matches",
    "random_queries",
    "wilson",
]

#: the pseudo-count added to every cell of both tables before the Kullback-Leibler divergence
#: (Jeffreys' 1/2), so that a cell empty in the synthetic file gives a finite divergence
PSEUDO_COUNT = 0.5


# ----------------------------------------------------------------------------------------------
# 1. distribution distances
# ----------------------------------------------------------------------------------------------
def cell_ids(codes_a: np.ndarray, codes_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells of the joint table of the columns of two (n, m) code matrices (a missing code -1 is
    a category of its own): ``(cell ids of a, cell ids of b, the distinct rows of both, one per
    cell)``, the ids indexing those rows (in the rows' lexicographic order)."""
    both = np.vstack([codes_a, codes_b]).astype(np.int64)
    m = both.shape[1]
    if m == 0:
        return np.zeros(len(codes_a), np.int64), np.zeros(len(codes_b), np.int64), np.zeros((1, 0), np.int64)
    radix = both.max(axis=0) + 2 if len(both) else np.ones(m, np.int64)
    if float(np.prod(radix.astype(float))) < 2.0**62:  # one integer per row (mixed radix): a fast 1-D unique
        key = np.zeros(len(both), dtype=np.int64)
        for j in range(m):
            key = key * radix[j] + (both[:, j] + 1)
        uniq, ids = np.unique(key, return_inverse=True)
        rows = np.empty((len(uniq), m), dtype=np.int64)
        rest = uniq.copy()
        for j in range(m - 1, -1, -1):
            rows[:, j] = rest % radix[j] - 1
            rest //= radix[j]
    else:
        rows, ids = np.unique(both, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    return ids[: len(codes_a)], ids[len(codes_a) :], rows


def distances(count_a: np.ndarray, count_b: np.ndarray, pseudo: float = PSEUDO_COUNT) -> dict[str, np.ndarray]:
    r"""Per-cell contributions to the distances between two distributions given by counts.

    With :math:`p_c = a_c / n_a` and :math:`q_c = b_c / n_b` over the K cells:

    * total variation :math:`TV = \frac12 \sum_c |p_c - q_c|` (per cell :math:`\frac12|p_c - q_c|`);
    * Hellinger :math:`H = \sqrt{\frac12 \sum_c (\sqrt{p_c} - \sqrt{q_c})^2}` (per cell the
      squared term :math:`\frac12 (\sqrt{p_c} - \sqrt{q_c})^2`, which sums to :math:`H^2`);
    * Kullback-Leibler :math:`KL(P \| Q) = \sum_c \tilde p_c \log(\tilde p_c / \tilde q_c)` with
      :math:`\tilde p_c = (a_c + \epsilon) / (n_a + K\epsilon)`, :math:`\tilde q_c` alike and
      :math:`\epsilon` = ``pseudo`` (natural log; two tables with equal counts give 0).

    Returns ``{"p", "q", "tv", "hellinger2", "kl"}``, arrays over the cells.
    """
    a = np.asarray(count_a, dtype=float)
    b = np.asarray(count_b, dtype=float)
    k = len(a)
    p = a / a.sum() if a.sum() > 0 else np.zeros(k)
    q = b / b.sum() if b.sum() > 0 else np.zeros(k)
    ps = (a + pseudo) / (a.sum() + k * pseudo)
    qs = (b + pseudo) / (b.sum() + k * pseudo)
    return {
        "p": p,
        "q": q,
        "tv": 0.5 * np.abs(p - q),
        "hellinger2": 0.5 * (np.sqrt(p) - np.sqrt(q)) ** 2,
        "kl": ps * np.log(ps / qs),
    }


def key_combinations(m: int, order: int) -> list[tuple[int, ...]]:
    """Every combination of 1..min(order, m) of m variables (as index tuples), in size order."""
    return [c for r in range(1, min(order, m) + 1) for c in combinations(range(m), r)]


# ----------------------------------------------------------------------------------------------
# 2. nearest records with a mixed distance
# ----------------------------------------------------------------------------------------------
def _one_hot(codes: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """(n, sum(cards)) float32 indicators of the categorical codes (a missing code -1 is the
    last category of its column)."""
    offsets = np.concatenate([[0], np.cumsum(cards)[:-1]])
    out = np.zeros((len(codes), int(cards.sum())), dtype=np.float32)
    cols = np.where(codes < 0, cards - 1, codes) + offsets
    out[np.arange(len(codes))[:, None], cols] = 1.0
    return out


def _block_distances(qn, q1, cn, c1, m_cat, scale) -> np.ndarray:
    """(len(q), len(c)) float32 distances: the categorical mismatches (m_cat minus the matches
    counted by the product of the indicator matrices q1 and c1) plus the sum over numeric
    columns of |x - y| / scale (a missing value against a value counts 1, two missing 0)."""
    nq, nc = (len(q1), len(c1))
    if m_cat:
        d = np.float32(m_cat) - q1 @ c1.T
    else:
        d = np.zeros((nq, nc), dtype=np.float32)
    tmp = np.empty_like(d)
    for j in range(cn.shape[1]):
        np.subtract(qn[:, j, None], cn[None, :, j], out=tmp)
        np.abs(tmp, out=tmp)
        tmp *= np.float32(1.0 / scale[j])
        qm, cm = np.isnan(qn[:, j]), np.isnan(cn[:, j])
        if qm.any() or cm.any():
            tmp[np.isnan(tmp)] = 1.0
            tmp[np.ix_(qm, cm)] = 0.0
        d += tmp
    return d


def nearest(
    q_num: np.ndarray,
    q_cat: np.ndarray,
    c_num: np.ndarray,
    c_cat: np.ndarray,
    scale: np.ndarray,
    k: int = 1,
    rng: np.random.Generator | None = None,
    cells: int = 4_000_000,
    keep: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""The k nearest candidates of each query record under the mixed (Gower-type) distance

    .. math:: d(x, y) = \sum_{j \text{ numeric}} \frac{|x_j - y_j|}{R_j}
              + \sum_{j \text{ categorical}} [x_j \ne y_j],

    :math:`R_j` = ``scale[j]`` (the range of variable j over the files, as anonymeter takes
    it). Distances are computed in single precision (differences below about 1e-6 count as
    ties); ties are broken at random with ``rng`` (by candidate position without one). The
    work runs in blocks of about ``cells`` query-candidate pairs.
    Returns ``(indices, distances)``, each (n_queries, k).
    """
    if k == 1:  # the distinct candidate rows only, each standing for a random one of its copies
        if keep is None:
            keep = distinct_candidates(c_num, c_cat, rng)
        return _nearest_distinct(q_num, q_cat, c_num, c_cat, scale, rng, cells, keep)
    return _nearest(q_num, q_cat, c_num, c_cat, scale, k, rng, cells)


def distinct_candidates(c_num: np.ndarray, c_cat: np.ndarray, rng) -> np.ndarray:
    """One position per distinct candidate row (a random one of its copies with ``rng``), for
    :func:`nearest`'s ``keep`` (computed once when several query sets search one file)."""
    nc = len(c_num) if c_num.shape[1] else len(c_cat)
    perm = rng.permutation(nc) if rng is not None else np.arange(nc)
    rows = np.hstack([c_cat[perm].astype(float), np.where(np.isnan(c_num[perm]), np.inf, c_num[perm])])
    if rows.shape[1] == 0:
        return perm[:1]
    order = np.lexsort(rows.T[::-1])
    srt = rows[order]
    new = np.r_[True, np.any(srt[1:] != srt[:-1], axis=1)]
    return perm[np.sort(order[new])]


def _nearest_distinct(q_num, q_cat, c_num, c_cat, scale, rng, cells, keep):
    if q_cat.shape[1] and q_num.shape[1]:
        idx, dist = _nearest_pruned(q_num, q_cat, c_num[keep], c_cat[keep], scale, rng, cells)
    else:
        idx, dist = _nearest(q_num, q_cat, c_num[keep], c_cat[keep], scale, 1, rng, cells)
    return keep[idx], dist


def _numeric_pairs(qn, cn, qi, ci, scale) -> np.ndarray:
    """The numeric part of the distance of the pairs (query qi, candidate ci)."""
    out = np.zeros(len(qi))
    for j in range(qn.shape[1]):
        a, b = qn[qi, j], cn[ci, j]
        d = np.abs(a - b) / scale[j]
        an, bn = np.isnan(a), np.isnan(b)
        if an.any() or bn.any():
            d = np.where(an & bn, 0.0, np.where(an | bn, 1.0, d))
        out += d
    return out


def _nearest_pruned(q_num, q_cat, c_num, c_cat, scale, rng, cells):
    """The nearest candidate (k = 1) when there are categorical and numeric columns: the
    categorical mismatches of every pair (a product of indicator matrices) bound the distance
    from below, so with U the full distance to the candidate of fewest mismatches only the
    candidates with at most U mismatches are measured in full. The same result as the full
    search (ties within 1e-6 broken by the same random order)."""
    nq, nc = len(q_cat), len(c_cat)
    both = np.vstack([q_cat, c_cat])
    cards = both.max(axis=0) + 2
    q1, c1 = _one_hot(q_cat, cards), _one_hot(c_cat, cards)
    m_cat = q_cat.shape[1]
    tie = rng.random(nc) if rng is not None else np.arange(nc) / max(nc, 1)
    idx = np.empty((nq, 1), dtype=np.int64)
    dist = np.empty((nq, 1))
    block = max(1, cells // max(nc, 1))
    for s in range(0, nq, block):
        e = min(s + block, nq)
        dc = np.rint(np.float32(m_cat) - q1[s:e] @ c1.T)  # whole numbers of mismatches
        first = np.where(dc <= dc.min(axis=1)[:, None], tie[None, :], 2.0).argmin(axis=1)
        rows = np.arange(s, e)
        upper = dc[rows - s, first] + _numeric_pairs(q_num, c_num, rows, first, scale)
        within = dc <= upper[:, None] + 1e-9
        if np.count_nonzero(within) > 0.1 * within.size:  # a weak bound: measure every pair
            d = _block_distances(q_num[s:e].astype(np.float32), q1[s:e], c_num.astype(np.float32), c1, m_cat, scale)
            best32 = d.min(axis=1)
            idx[s:e, 0] = np.where(d <= best32[:, None] + np.float32(1e-6), tie[None, :], 2.0).argmin(axis=1)
            dist[s:e, 0] = best32
            continue
        qi, ci = np.nonzero(within)  # row-major: grouped by query
        total = dc[qi, ci] + _numeric_pairs(q_num, c_num, qi + s, ci, scale)
        starts = np.flatnonzero(np.r_[True, qi[1:] != qi[:-1]])
        best = np.minimum.reduceat(total, starts)
        near = total <= np.repeat(best, np.diff(np.r_[starts, len(qi)])) + 1e-6
        order = np.lexsort((np.where(near, tie[ci], 2.0), qi))  # per query, the nearest of least tie key first
        pick = order[starts]
        idx[s:e, 0] = ci[pick]
        dist[s:e, 0] = best
    dist[dist < 1e-6] = 0.0
    return idx, dist


def _nearest(q_num, q_cat, c_num, c_cat, scale, k, rng, cells):
    nq = len(q_num) if q_num.shape[1] else len(q_cat)
    nc = len(c_num) if c_num.shape[1] else len(c_cat)
    k = min(k, nc)
    m_cat = q_cat.shape[1]
    both = np.vstack([q_cat, c_cat]) if m_cat else np.zeros((0, 0), dtype=np.int64)
    cards = (both.max(axis=0) + 2) if m_cat else np.zeros(0, dtype=np.int64)
    q1 = _one_hot(q_cat, cards) if m_cat else None
    c1 = _one_hot(c_cat, cards) if m_cat else None
    qn, cn = q_num.astype(np.float32), c_num.astype(np.float32)
    idx = np.empty((nq, k), dtype=np.int64)
    dist = np.empty((nq, k))
    tie = (rng.random(nc) if rng is not None else np.arange(nc) / max(nc, 1)).astype(np.float32)
    block = max(1, cells // max(nc, 1))
    for s in range(0, nq, block):
        e = min(s + block, nq)
        d = _block_distances(qn[s:e], q1[s:e] if m_cat else np.zeros((e - s, 0), np.float32), cn,
                             c1 if m_cat else np.zeros((nc, 0), np.float32), m_cat, scale)  # fmt: skip
        if k == 1:
            best = d.min(axis=1)
            ties = np.where(d <= best[:, None] + np.float32(1e-6), tie[None, :], np.float32(2.0))
            idx[s:e, 0] = ties.argmin(axis=1)
            dist[s:e, 0] = best
        else:
            key = np.round(d, 5).astype(np.float64) + tie[None, :] * 1e-6
            order = np.argsort(key, axis=1, kind="stable")[:, :k]
            idx[s:e] = order
            dist[s:e] = np.take_along_axis(d, order, axis=1)
    dist[dist < 1e-6] = 0.0
    return idx, dist


def exact_matches(rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """Per row of ``rows_a`` (an (n, m) matrix of codes or numbers), whether the same row occurs
    in ``rows_b`` (NaN equals NaN)."""
    both = np.vstack([rows_a, rows_b])
    both = np.where(np.isnan(both), np.inf, both) if both.dtype.kind == "f" else both
    _, ids = np.unique(both, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    return np.isin(ids[: len(rows_a)], ids[len(rows_a) :])


# ----------------------------------------------------------------------------------------------
# 3. attacks and their success rates
# ----------------------------------------------------------------------------------------------
def wilson(n_total: int, n_success: float, confidence: float) -> tuple[float, float]:
    r"""Wilson's score estimate of a success rate and its error at ``confidence``:

    .. math:: \hat r = \frac{s + z^2/2}{n + z^2}, \qquad
              e = \frac{z}{n + z^2} \sqrt{\frac{s (n - s)}{n} + \frac{z^2}{4}}

    (z the normal quantile at (1 + confidence)/2), as anonymeter computes it.
    """
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 * (1.0 + confidence))
    z2 = z * z
    n = max(int(n_total), 1)
    var = n_success * (n - n_success) / n
    den = n + z2
    return (n_success + 0.5 * z2) / den, (z / den) * math.sqrt(max(var, 0.0) + 0.25 * z2)


def residual(attack: tuple[float, float], control: tuple[float, float]) -> tuple[float, float]:
    r"""The attack's success beyond the control baseline, :math:`(r_a - r_c) / (1 - r_c)`, with
    the error propagated to first order (anonymeter's ``residual_success``)."""
    (ra, ea), (rc, ec) = attack, control
    value = (ra - rc) / (1.0 - rc)
    d_a = 1.0 / abs(1.0 - rc)
    d_c = (ra - 1.0) / (1.0 - rc) ** 2
    return value, math.sqrt((ea * d_a) ** 2 + (ec * d_c) ** 2)


@dataclass(frozen=True)
class AttackCounts:
    """Successes of one attack: on the original targets, of the random-guess baseline, and on
    the control targets (None without a control file); each over its number of attempts."""

    n_attacks: int
    n_success: float
    n_baseline: float
    n_control: float | None
    n_attacks_baseline: int
    n_attacks_control: int


def attack_risk(c: AttackCounts, confidence: float) -> dict:
    """Success rates (Wilson) and the risk with its interval, bounded to [0, 1]: the residual
    success over the control set, or the attack's success rate without one; ``detected``: the
    interval of the residual success lies above 0 (never without a control set)."""
    ra = wilson(c.n_attacks, c.n_success, confidence)
    rb = wilson(c.n_attacks_baseline, c.n_baseline, confidence)
    rc = None if c.n_control is None else wilson(c.n_attacks_control, c.n_control, confidence)
    value, err = ra if rc is None else residual(ra, rc)

    def clip(x):
        return min(max(x, 0.0), 1.0)

    return {
        "risk": clip(value),
        "ci": (clip(value - err), clip(value + err)),
        "attack_rate": ra[0],
        "attack_error": ra[1],
        "baseline_rate": rb[0],
        "baseline_error": rb[1],
        "control_rate": None if rc is None else rc[0],
        "control_error": None if rc is None else rc[1],
        "n_attacks": c.n_attacks,
        "n_success": c.n_success,
        "n_baseline": c.n_baseline,
        "n_control": c.n_control,
        "detected": bool(rc is not None and value - err > 0.0),
    }


# -- the leak decision -------------------------------------------------------------------------
#: the random relabellings of a permutation test (its smallest p-value is 1 / (B + 1))
PERMUTATIONS = 999


def fisher_greater(success_a: int, n_a: int, success_b: int, n_b: int) -> float:
    r"""One-sided p-value of Fisher's exact test that group a succeeds more often than group b:
    :math:`P(X \ge s_a)` with X hypergeometric (the :math:`s_a + s_b` successes of the
    :math:`n_a + n_b` trials spread at random over the two groups). Exact when the trials of
    both groups are exchangeable (records of one population), whatever the sizes."""
    from scipy.stats import hypergeom

    k = int(success_a) + int(success_b)
    if k == 0 or n_a == 0:
        return 1.0
    return float(min(1.0, hypergeom.sf(int(success_a) - 1, int(n_a) + int(n_b), k, int(n_a))))


def row_ids(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a float matrix (NaN equal to NaN) and each row's id among them."""
    y = np.where(np.isnan(x), np.inf, x)
    rows, ids = np.unique(y, axis=0, return_inverse=True)
    return np.where(np.isinf(rows), np.nan, rows), ids.reshape(-1)


def equal_row_pairs(asked: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (asked row, row) pairs of equal rows (``rows`` distinct; NaN equal to NaN)."""
    both = np.vstack([asked, rows])
    _, ids = np.unique(np.where(np.isnan(both), np.inf, both), axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    pos = np.full(int(ids.max()) + 1 if len(ids) else 0, -1, dtype=np.int64)
    pos[ids[len(asked) :]] = np.arange(len(rows))
    hit = pos[ids[: len(asked)]]
    q = np.flatnonzero(hit >= 0)
    return q, hit[q]


def match_matrix(pairs_q: np.ndarray, pairs_u: np.ndarray, n_queries: int, n_rows: int):
    """The sparse (n_queries, n_rows) 0/1 matrix of which query matches which row."""
    from scipy.sparse import csr_matrix

    return csr_matrix((np.ones(len(pairs_q), np.float32), (pairs_q, pairs_u)), shape=(n_queries, n_rows))


def singled_out(matches, present: np.ndarray) -> int:
    """How many queries match exactly one of the rows ``present`` (row positions): the
    successes of a singling-out attack on a file of those distinct rows."""
    x = np.zeros(matches.shape[1], np.float32)
    x[present] = 1.0
    return int((matches @ x == 1).sum())


def presence_test(matches, ids: np.ndarray, n_first: int, rng, permutations: int = PERMUTATIONS) -> tuple[int, float]:
    r"""A permutation test of a singling-out attack against its control records.

    The pooled records (the first ``n_first`` the original's, the rest the control's) have
    distinct-row ids ``ids``; ``matches`` (:func:`match_matrix`) says which query matches which
    distinct row. With :math:`I_u = 1` when a record of row u is in the first group, the
    statistic is :math:`T = \#\{q : \sum_{u \in q} I_u = 1\}`, the queries that single out one
    distinct original row. Under the null hypothesis (original and control records are
    exchangeable: the synthetic file was made without either) every split of the pooled
    records into groups of their sizes is equally likely, so
    :math:`p = (1 + \#\{b : T_b \ge T\}) / (B + 1)` over B random splits is exact (never below
    its level), whatever the sizes of the files. Only the records of matched rows are
    relabelled (how many of them fall in the first group is hypergeometric). Returns ``(T, p)``.
    """
    observed = singled_out(matches, np.unique(ids[:n_first]))
    rel = np.unique(matches.indices)
    if len(rel) == 0:
        return observed, 1.0
    a = matches[:, rel]
    rec = np.flatnonzero(np.isin(ids, rel))  # the records of matched rows
    col = np.searchsorted(rel, ids[rec])
    m, n = len(rec), len(ids)
    beyond = 0
    chunk = max(1, 2_000_000 // max(m, 1))
    for s in range(0, permutations, chunk):
        b = min(chunk, permutations - s)
        k = rng.hypergeometric(m, n - m, n_first, size=b)  # matched records in the first group
        rank = np.argsort(np.argsort(rng.random((b, m)), axis=1), axis=1)
        bi, ri = np.nonzero(rank < k[:, None])
        present = np.zeros((len(rel), b), np.float32)
        present[col[ri], bi] = 1.0
        beyond += int((np.asarray(a @ present) == 1).sum(axis=0).__ge__(observed).sum())
    return observed, (1 + beyond) / (permutations + 1)


def weighted_holm(pvalues: dict, weights: dict, level: float) -> dict:
    r"""Holm's step-down procedure with weights (Holm 1979): the tests in the order of
    :math:`p_i / w_i`; the j-th is rejected, with every test before it, while
    :math:`p_i \le \alpha\, w_i / \sum_{\text{not yet rejected}} w`. The chance of one false
    rejection or more is at most ``level`` whatever the dependence between the tests. Returns
    test -> rejected; a p-value of None (not tested) is never rejected and weighs nothing."""
    tested = {k: p for k, p in pvalues.items() if p is not None and weights.get(k, 0) > 0}
    out = {k: False for k in pvalues}
    left = sum(weights[k] for k in tested)
    for k in sorted(tested, key=lambda t: tested[t] / weights[t]):
        if tested[k] > level * weights[k] / left:
            break
        out[k] = True
        left -= weights[k]
    return out


# -- singling out ------------------------------------------------------------------------------
#: operators of a query term: 0 ==, 1 !=, 2 >, 3 <, 4 >=, 5 <=
_EQ, _NE, _GT, _LT, _GE, _LE = range(6)


class QueryIndex:
    """The columns of a float matrix (categorical codes as numbers, NaN missing) each sorted
    once, so that the records satisfying one query term are a contiguous slice of a column's
    order: a query is counted on the rows of its most selective term only."""

    def __init__(self, data: np.ndarray):
        self.data = data
        self.n, self.m = data.shape
        self.order = np.argsort(data, axis=0, kind="stable").T.copy()  # NaN last
        self.sorted = np.take_along_axis(data, self.order.T, axis=0).T.copy()
        self.valid = (~np.isnan(data)).sum(axis=0)

    def _bounds(self, cols, ops, vals) -> tuple[np.ndarray, np.ndarray]:
        """Per term, the slice [lo, hi) of its column's order that holds its records (``!=``:
        every non-missing record, filtered afterwards)."""
        lo = np.zeros(len(cols), dtype=np.int64)
        hi = np.zeros(len(cols), dtype=np.int64)
        for j in np.unique(cols):
            t = cols == j
            nn = int(self.valid[j])
            sv = self.sorted[j, :nn]
            v, op = vals[t], ops[t]
            vv = np.where(np.isnan(v), 0.0, v)
            left, right = np.searchsorted(sv, vv, "left"), np.searchsorted(sv, vv, "right")
            a = np.select([op == _EQ, op == _GT, op == _GE], [left, right, left], 0)
            b = np.select([op == _EQ, op == _LT, op == _LE], [right, left, right], nn)
            miss = np.isnan(v)
            a = np.where(miss, np.where(op == _EQ, nn, 0), a)
            b = np.where(miss, np.where(op == _EQ, self.n, nn), b)
            lo[t], hi[t] = a, np.maximum(a, b)
        return lo, hi

    def counts(self, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray, chunk: int = 2_000_000) -> np.ndarray:
        """Rows matched by each of the (B, t) queries (column, operator, value per term)."""
        b, t = cols.shape
        if b == 0:
            return np.zeros(0, dtype=np.int64)
        lo, hi = (x.reshape(b, t) for x in self._bounds(cols.ravel(), ops.ravel(), vals.ravel()))
        best = np.argmin(hi - lo, axis=1)
        r = np.arange(b)
        j, a, size = cols[r, best], lo[r, best], (hi - lo)[r, best]
        out = np.zeros(b, dtype=np.int64)
        start = 0
        while start < b:  # groups of queries whose candidate rows fit in ``chunk``
            csum = np.cumsum(size[start:])
            stop = start + max(1, int(np.searchsorted(csum, chunk, "right")))
            out[start:stop] = self._count_rows(cols[start:stop], ops[start:stop], vals[start:stop],
                                               j[start:stop], a[start:stop], size[start:stop])  # fmt: skip
            start = stop
        return out

    def _count_rows(self, cols, ops, vals, j, a, size) -> np.ndarray:
        qid, rows = self._match_rows(cols, ops, vals, j, a, size)
        return np.bincount(qid, minlength=len(j)).astype(np.int64)

    def _match_rows(self, cols, ops, vals, j, a, size) -> tuple[np.ndarray, np.ndarray]:
        """The (query, row) pairs of the queries among the candidate rows of their most
        selective term."""
        qid = np.repeat(np.arange(len(j)), size)
        offs = np.arange(len(qid)) - np.repeat(np.cumsum(size) - size, size)
        rows = self.order[j[qid], a[qid] + offs]
        ok = np.ones(len(qid), dtype=bool)
        for t in range(cols.shape[1]):
            x = self.data[rows, cols[qid, t]]
            ok &= _satisfies(x, ops[qid, t], vals[qid, t])
        return qid[ok], rows[ok]

    def matches(
        self, cols: np.ndarray, ops: np.ndarray, vals: np.ndarray, chunk: int = 2_000_000
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every (query, row) pair of the (B, t) queries and the rows they match."""
        b = cols.shape[0]
        if b == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        lo, hi = (x.reshape(b, cols.shape[1]) for x in self._bounds(cols.ravel(), ops.ravel(), vals.ravel()))
        best = np.argmin(hi - lo, axis=1)
        r = np.arange(b)
        j, a, size = cols[r, best], lo[r, best], (hi - lo)[r, best]
        parts = []
        start = 0
        while start < b:  # groups of queries whose candidate rows fit in ``chunk``
            stop = start + max(1, int(np.searchsorted(np.cumsum(size[start:]), chunk, "right")))
            qid, rows = self._match_rows(cols[start:stop], ops[start:stop], vals[start:stop], j[start:stop],
                                         a[start:stop], size[start:stop])  # fmt: skip
            parts.append((qid + start, rows))
            start = stop
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def _satisfies(x: np.ndarray, op: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Element-wise ``x op v`` (NaN: missing; ``== NaN`` is ``is null``, ``!= NaN`` ``is not
    null``; a missing x satisfies no comparison with a value). ``op`` and ``v`` have one value
    per row of x (shape (n,) or (n, 1)); each element is compared once, by its row's operator."""
    op, v = np.asarray(op), np.asarray(v)
    flat_op, flat_v = op.reshape(len(op)), v.reshape(len(v))
    out = np.zeros(x.shape, dtype=bool)
    vn = np.isnan(flat_v)
    for o in np.unique(flat_op):
        rows = np.flatnonzero((flat_op == o) & ~vn)
        if len(rows):
            xr, vr = x[rows], v[rows]
            with np.errstate(invalid="ignore"):
                if o == _EQ:
                    res = xr == vr
                elif o == _NE:
                    res = (xr != vr) & ~np.isnan(xr)
                elif o == _GT:
                    res = xr > vr
                elif o == _LT:
                    res = xr < vr
                elif o == _GE:
                    res = xr >= vr
                else:
                    res = xr <= vr
            out[rows] = res
        rows = np.flatnonzero((flat_op == o) & vn)
        if len(rows):
            out[rows] = np.isnan(x[rows]) if o == _EQ else ~np.isnan(x[rows])
    return out


def _as_arrays(queries: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = len(queries[0]) if queries else 0
    arr = np.array(queries, dtype=float).reshape(len(queries), t, 3)
    return arr[:, :, 0].astype(np.int64), arr[:, :, 1].astype(np.int64), arr[:, :, 2]


def query_matches(data, queries: list) -> tuple[np.ndarray, np.ndarray]:
    """The (query, row) pairs of the rows of ``data`` (a float matrix or its
    :class:`QueryIndex`) each query matches."""
    if not queries:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    index = data if isinstance(data, QueryIndex) else QueryIndex(data)
    return index.matches(*_as_arrays(queries))


def query_counts(data, queries: list) -> np.ndarray:
    """How many rows of ``data`` (an (n, m) float matrix or its :class:`QueryIndex`) each query
    matches; a query is a tuple of (column, operator, value) terms, all queries of one size."""
    index = data if isinstance(data, QueryIndex) else QueryIndex(data)
    if not queries:
        return np.zeros(0, dtype=np.int64)
    return index.counts(*_as_arrays(queries))


def singling_out_queries(
    syn: np.ndarray,
    numeric: np.ndarray,
    n_queries: int,
    n_cols: int,
    rng: np.random.Generator,
    max_attempts: int = 100_000,
    batch: int = 2000,
    patience: int = 10,
) -> tuple[list, int]:
    """anonymeter's multivariate singling-out queries: a random synthetic record and n_cols
    random columns; a numeric column gives ``>= value`` when the value is above the column's
    median, else ``<= value``; a categorical one ``== value`` (a missing value ``is null``).
    Queries that match exactly one record of ``syn`` (distinct rows) are kept, each once, until
    ``n_queries``, ``max_attempts`` tries (anonymeter allows 10 million), or ``patience`` batches
    in a row without a new query. Returns ``(queries, attempts)``."""
    n, m = syn.shape
    n_cols = min(n_cols, m)
    medians = np.array([np.nanmedian(syn[:, j]) if numeric[j] and not np.isnan(syn[:, j]).all() else np.nan
                        for j in range(m)])  # fmt: skip
    index = QueryIndex(syn)
    sub = np.sort(rng.choice(n, size=min(n, 1024), replace=False))
    kept: list = []
    seen: set = set()
    attempts = 0
    idle = 0  # batches in a row that found no new query
    while len(kept) < n_queries and attempts < max_attempts and idle < patience:
        size = min(batch, max_attempts - attempts)
        rows = rng.integers(0, n, size=size)
        cols = np.sort(np.argsort(rng.random((size, m)), axis=1)[:, :n_cols], axis=1)
        vals = syn[rows[:, None], cols]
        with np.errstate(invalid="ignore"):
            ops = np.where(numeric[cols] & ~np.isnan(vals), np.where(vals > medians[cols], _GE, _LE), _EQ)
        attempts += size
        # a query matched by another record of a random subset fails at once; the rest are counted
        alone = _alone_in_subset(syn, sub, rows, cols, ops, vals)
        counts = np.full(size, 2, dtype=np.int64)
        counts[alone] = index.counts(cols[alone], ops[alone], vals[alone])
        before = len(kept)
        for i in np.flatnonzero(counts == 1):
            q = tuple((int(c), int(o), float(v)) for c, o, v in zip(cols[i], ops[i], vals[i]))
            if q not in seen:
                seen.add(q)
                kept.append(q)
                if len(kept) >= n_queries:
                    break
        idle = idle + 1 if len(kept) == before else 0
    return kept, attempts


def _alone_in_subset(syn, sub, rows, cols, ops, vals) -> np.ndarray:
    """Per query built from record ``rows[i]`` (terms ``==``, ``>=`` or ``<=``, a missing value
    ``is null``): whether no other record of the subset ``sub`` (row positions) satisfies it (a
    pre-filter: a query that fails here matches two records)."""
    ok = np.ones((len(rows), len(sub)), dtype=bool)
    sub_t = np.ascontiguousarray(syn[sub].T)  # one row per column: a query term gathers a row
    for t in range(cols.shape[1]):  # the terms are ==, >= or <=: lo <= x <= hi
        v, op = vals[:, t], ops[:, t]
        lo = np.where(op == _LE, -np.inf, v)[:, None]
        hi = np.where(op == _GE, np.inf, v)[:, None]
        x = sub_t[cols[:, t]]
        with np.errstate(invalid="ignore"):
            term = (x >= lo) & (x <= hi)
        null = np.flatnonzero(np.isnan(v))
        if len(null):
            term[null] = np.isnan(x[null])
        ok &= term
    own = np.isin(rows, sub)
    return ok.sum(axis=1) - own <= 0


def row_counts(rows: np.ndarray, data: np.ndarray) -> np.ndarray:
    """How many rows of ``data`` equal each row of ``rows`` (whole-record equality queries;
    NaN equals NaN)."""
    both = np.vstack([rows, data])
    both = np.where(np.isnan(both), np.inf, both)
    _, ids = np.unique(both, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    counts = np.bincount(ids[len(rows) :], minlength=int(ids.max()) + 1 if len(ids) else 0)
    return counts[ids[: len(rows)]]


def random_queries(syn: np.ndarray, numeric: np.ndarray, n_queries: int, n_cols: int, rng) -> list:
    """The baseline's queries (anonymeter's random attack): random columns, each with a random
    value among the column's distinct synthetic values and a random operator (``==``/``!=`` for
    a categorical column, any of ``== != > < >= <=`` for a numeric one)."""
    m = syn.shape[1]
    n_cols = min(n_cols, m)
    uniques = [np.unique(syn[:, j]) for j in range(m)]  # NaN (missing) sorts last, kept once
    uniques = [u[: np.searchsorted(u, np.nan)] if np.isnan(u).any() else u for u in uniques]
    uniques = [np.append(u, np.nan) if np.isnan(syn[:, j]).any() else u for j, u in enumerate(uniques)]
    out = []
    for _ in range(n_queries):
        cols = np.sort(rng.choice(m, size=n_cols, replace=False))
        terms = []
        for j in cols:
            v = float(rng.choice(uniques[j]))
            op = int(rng.integers(0, 6)) if numeric[j] else int(rng.integers(0, 2))
            terms.append((int(j), op, v))
        out.append(tuple(terms))
    return out


def _so_probability_integral(n, w_max):
    """Integral over w in [0, w_max] of n w (1 - w)^(n - 1) (Cohen and Nissim 2020), the number
    of queries of weight below w_max expected to single out in n records."""
    return (1.0 - (n * w_max + 1.0) * (1.0 - w_max) ** n) / (n + 1.0)


def size_correction(control: np.ndarray, queries: list, n_target: int, rng, count=None) -> float:
    """The factor that carries the control set's singling-out successes to a file of
    ``n_target`` records (anonymeter's correction; ``count``: the successes on the rows at some
    positions of ``control``, when they are counted another way): the successes are counted on random
    subsets of 10 sizes (5 repeats each) from min(1000, n) to n records, the model
    ``norm * integral(n, 0, w_eff)`` is fitted, and the factor is model(n_target) / model(n)."""
    from scipy.optimize import curve_fit

    n = len(control)
    sizes, succ = [], []
    for size in np.linspace(min(1000, n), n, 10).astype(int):
        for _ in range(5):
            sub = rng.choice(n, size=size, replace=False)
            succ.append(count(sub) if count is not None else int((query_counts(control[sub], queries) == 1).sum()))
            sizes.append(size)
    xs, ys = np.array(sizes, dtype=float), np.array(succ, dtype=float)
    w0 = 1.0 / xs.max()
    norm0 = 1.0 / _so_probability_integral(xs.max(), w0)

    def model(x, w, norm):
        return norm * _so_probability_integral(x, w)

    try:
        (w, norm), _ = curve_fit(model, xs, ys, p0=(w0, norm0), bounds=(0, (1, np.inf)))
    except (RuntimeError, ValueError):
        return 1.0
    den = model(float(n), w, norm)
    return float(model(float(n_target), w, norm) / den) if den > 0 else 1.0


# -- linkability and inference -----------------------------------------------------------------
def linkability_successes(idx_a: np.ndarray, idx_b: np.ndarray) -> int:
    """Targets whose k nearest synthetic records on the first part of the keys and on the
    second part share at least one record."""
    hits = (idx_a[:, :, None] == idx_b[:, None, :]).any(axis=(1, 2))
    return int(hits.sum())


def inference_successes(guess: np.ndarray, secret: np.ndarray, regression: bool, tolerance: float = 0.05) -> int:
    r"""Correct guesses of the secret: equal values (categorical), or
    :math:`|g - s| / (g + 10^{-12}) \le` ``tolerance`` (numeric, anonymeter's rule); two
    missing values count as a correct guess."""
    both_missing = np.isnan(guess) & np.isnan(secret)
    if regression:
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = np.abs(guess - secret) / (guess + 1e-12) <= tolerance
    else:
        ok = guess == secret
    return int((ok | both_missing).sum())


# ----------------------------------------------------------------------------------------------
# 4. propensity-score utility
# ----------------------------------------------------------------------------------------------
def pmse(
    x: np.ndarray,
    label: np.ndarray,
    weights: np.ndarray | None = None,
    ridge: float = 1e-6,
    max_iter: int = 25,
    tol: float = 1e-6,
) -> dict:
    r"""The propensity-score mean squared error of Woo et al. (2009) and Snoke et al. (2018).

    A logistic regression of the file label (1 synthetic, 0 original) on the design matrix
    ``x`` (its first column the intercept) is fitted by Newton-Raphson (a ridge of ``ridge`` on
    the slopes keeps it finite under separation; the Hessian is summed in single precision; the
    iterations stop when pMSE changes by less than ``tol`` of itself); ``weights`` are the
    records each row stands for (distinct rows with their counts give the fit of the records).
    With the fitted propensities :math:`\hat p_i`, N records and :math:`c = n_{syn} / N`,

    .. math:: pMSE = \frac1N \sum_i (\hat p_i - c)^2, \qquad
              E_0[pMSE] = \frac{(k - 1)(1 - c)^2 c}{N}, \qquad
              S\_pMSE = pMSE / E_0[pMSE],

    k the number of parameters: the null expectation holds when the two files come from one
    distribution, so S_pMSE is about 1 for a synthetic file the model cannot tell apart.
    Returns ``{"pmse", "expected", "s_pmse", "k", "c", "n"}``.
    """
    rows, k = x.shape
    wt = np.ones(rows) if weights is None else np.asarray(weights, dtype=float)
    n = float(wt.sum())
    y = label.astype(float)
    c = float(np.dot(wt, y) / n)
    beta = np.zeros(k)
    beta[0] = math.log(c / (1 - c)) if 0 < c < 1 else 0.0
    pen = np.full(k, ridge)
    pen[0] = 0.0
    p = np.full(rows, c)
    last = 0.0
    for _ in range(max_iter):
        w = wt * p * (1 - p)
        grad = x.T @ (wt * (y - p)) - pen * beta
        xw = (x * w[:, None]).astype(np.float32)
        hess = (xw.T @ x.astype(np.float32)).astype(np.float64) + np.diag(pen)
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        beta += step
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ beta, -30, 30)))
        value = float(np.dot(wt, (p - c) ** 2) / n)
        if abs(value - last) <= tol * max(value, 1e-300):  # pMSE settled (under separation the slopes never do)
            break
        last = value
    value = float(np.dot(wt, (p - c) ** 2) / n)
    expected = (k - 1) * (1 - c) ** 2 * c / n
    return {"pmse": value, "expected": expected, "s_pmse": value / expected if expected > 0 else math.nan,
            "k": k, "c": c, "n": int(round(n))}  # fmt: skip
