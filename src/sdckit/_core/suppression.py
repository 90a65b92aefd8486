"""Local suppression to k-anonymity on integer-coded keys (``-1`` = missing).

Two algorithms, both ending k-anonymous under the missing-value rule (a missing value matches
every category, weighted by alpha) or reporting the records they could not make so:

* :func:`sdcmicro_suppression` reproduces sdcMicro's ``localSuppression`` / ``kAnon`` heuristic
  cell by cell (Templ, Kowarik & Meindl 2015, J. Stat. Softw. 67(4)); see its docstring.
* :func:`greedy_suppression` (the default) is a greedy algorithm on the table of distinct key
  patterns that recounts after every suppression and picks, for each record still below k,
  the least important variable whose suppression lifts it to k (see its docstring).

Both work on one stratum and one set of key variables; :func:`suppress_to_k` runs them per
stratum and per subset of keys (``combs``).
"""

from __future__ import annotations

from collections import OrderedDict
from itertools import combinations

import numpy as np

from . import _suppression_jit
from .frequencies import pattern_table, record_frequencies

__all__ = [
    "default_importance",
    "greedy_suppression",
    "greedy_suppression_rows",
    "sdcmicro_suppression",
    "strata_rows",
    "suppress_to_k",
]


def default_importance(codes: np.ndarray) -> np.ndarray:
    """sdcMicro's default importance: variables ranked by their number of distinct observed
    categories, fewest = 1 (most important, suppressed last); ties in column order."""
    n_cat = np.array([np.unique(c[c >= 0]).size for c in codes.T])
    order = np.argsort(n_cat, kind="stable")
    imp = np.empty(len(n_cat), dtype=np.int64)
    imp[order] = np.arange(1, len(n_cat) + 1)
    return imp


def _suppression_order(importance: np.ndarray) -> np.ndarray:
    """Columns from least important (largest importance number) to most; ties in column order."""
    return np.argsort(-np.asarray(importance), kind="stable")


# --------------------------------------------------------------------------------------------
# sdcMicro's heuristic
# --------------------------------------------------------------------------------------------
def _sdcmicro_reduction(codes: np.ndarray, k: int) -> np.ndarray:
    """Rows sdcMicro keeps for the search (its speed-up, which can change the result): the
    first k records of every key pattern, in row order, a missing value being a category of
    its own there.

    sdcMicro's comment says each missing value is first replaced by "the first unique value"
    of its column, but its code (``xKeys[is.na(v), v := unique(v)[1]]``) evaluates
    ``unique(v)[1]`` on the selected rows only, whose values are all missing: the missing values
    stay missing, and a pattern with a missing value is grouped apart from every other.
    """
    ids = pattern_table(codes)[0]
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_ids)) + 1]
    rank = np.arange(len(ids)) - np.repeat(starts, np.diff(np.r_[starts, len(ids)]))
    keep = np.zeros(len(ids), dtype=bool)
    keep[order[rank < k]] = True
    return np.flatnonzero(keep)


def _sdcmicro_cell(cols: np.ndarray, i: int, col_order: np.ndarray, alpha: float) -> int | None:
    """The variable sdcMicro suppresses in record i: the least important one on which a record
    at the smallest positive distance differs from i (both observed there)."""
    row = cols[:, i]
    d = np.zeros(cols.shape[1], dtype=np.int16)
    for j in np.flatnonzero(row >= 0):
        c = cols[j]
        d += (c != row[j]) & (c >= 0)
    positive = d > 0
    if not positive.any():  # sdcMicro: the record itself when nothing differs (alpha < 1)
        obs = [j for j in col_order if row[j] >= 0]
        return int(obs[0]) if obs else None
    near = np.flatnonzero(d == d[positive].min())
    for j in col_order:
        if row[j] < 0:
            continue
        h = cols[j, near]
        if np.any((h != row[j]) & (h >= 0)):
            return int(j)
    return None  # pragma: no cover - a record at positive distance differs somewhere


def sdcmicro_suppression(codes: np.ndarray, k: int, importance: np.ndarray, alpha: float = 1.0):
    """sdcMicro's local suppression heuristic, exactly.

    1. Reduction: only the first k records of every key pattern take part (a missing value
       is a category of its own in these patterns, as sdcMicro's code has it); the others are
       put back unchanged at the end.
    2. Repeat until every f_i >= k (f under the missing-value rule with alpha): the records
       with f_i < k, by increasing f (ties in row order), are each given one suppression, even
       when an earlier suppression of the same pass already lifted them: with D the smallest
       positive number of variables on which another record differs from i (both observed),
       take, from the least important variable to the most, the first on which a record at
       distance D differs from i, and set it missing.

    Returns
    -------
    codes : ndarray
        The suppressed codes (a new array).
    unresolved : ndarray of bool
        Records still below k (only when k exceeds what the records can reach).
    """
    out = codes.copy()
    n = len(codes)
    if n == 0:
        return out, np.zeros(0, dtype=bool)
    k_asked, k = int(k), min(int(k), n)
    rows = _sdcmicro_reduction(codes, k)
    cols = np.ascontiguousarray(codes[rows].T)
    col_order = _suppression_order(importance)
    while True:
        f = record_frequencies(np.ascontiguousarray(cols.T), None, alpha)[0]
        problem = np.flatnonzero(f < k)
        if problem.size == 0:
            break
        changed = False
        for i in problem[np.argsort(f[problem], kind="stable")]:
            j = _sdcmicro_cell(cols, int(i), col_order, alpha)
            if j is not None:
                cols[j, i] = -1
                changed = True
        if not changed:
            break
    out[rows] = cols.T
    return out, _below_k(out, k_asked, alpha)


def _below_k(codes: np.ndarray, k: int, alpha: float) -> np.ndarray:
    if len(codes) == 0:
        return np.zeros(0, dtype=bool)
    return record_frequencies(codes, None, alpha)[0] < k


# --------------------------------------------------------------------------------------------
# per stratum and per subset of keys
# --------------------------------------------------------------------------------------------
def suppress_to_k(
    codes: np.ndarray,
    k,
    importance: np.ndarray,
    alpha: float = 1.0,
    strata: np.ndarray | None = None,
    combs=None,
    method: str = "greedy",
):
    """Local suppression per stratum and, with ``combs``, for every subset of that many keys
    (sizes in the given order, each with its own k when ``k`` is a sequence; importance ranks
    re-taken within each subset, ties sharing the smaller rank, as sdcMicro does).

    Returns ``(codes, unresolved)``: the new codes and, per record, whether it is still below k
    (on the full key set, or on some subset with ``combs``).
    """
    run = sdcmicro_suppression if method == "sdcmicro" else greedy_suppression
    out = codes.copy()
    unresolved = np.zeros(len(codes), dtype=bool)
    groups = [np.arange(len(codes))] if strata is None else strata_rows(strata)
    for rows in groups:
        block = out[rows]
        if combs is None:
            block, bad = run(block, int(np.atleast_1d(k)[0]), importance, alpha)
        else:
            block, bad = _by_subsets(block, k, importance, alpha, combs, run)
        out[rows] = block
        unresolved[rows] = bad
    return out, unresolved


def strata_rows(strata: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(strata, kind="stable")
    bounds = np.flatnonzero(np.diff(strata[order])) + 1
    return np.split(order, bounds)


def _subset_importance(importance: np.ndarray, cols) -> np.ndarray:
    """R's ``rank(importance[cols], ties.method = "min")``."""
    sub = np.asarray(importance)[list(cols)]
    return np.array([1 + int(np.sum(sub < v)) for v in sub])


def _by_subsets(block, k, importance, alpha, combs, run):
    """k-anonymity on every subset of the given sizes. sdcMicro's heuristic sweeps the subsets
    once, as sdcMicro does (a later subset's suppressions can undo an earlier one's k, when a
    record becomes missing on every key of that subset); the greedy default sweeps until no
    subset needs a suppression."""
    ks = list(np.atleast_1d(k))
    if len(ks) != len(combs):
        ks = [ks[0]] * len(combs)
    m = block.shape[1]
    jobs = [(cols, int(kk)) for size, kk in zip(combs, ks) for cols in combinations(range(m), int(size))]
    while True:
        before = np.count_nonzero(block < 0)
        bad = np.zeros(len(block), dtype=bool)
        for cols, kk in jobs:
            sub, sub_bad = run(np.ascontiguousarray(block[:, cols]), kk, _subset_importance(importance, cols), alpha)
            block[:, cols] = sub
            bad |= sub_bad
        if run is sdcmicro_suppression or np.count_nonzero(block < 0) == before:
            break
    if run is not sdcmicro_suppression:
        bad = np.zeros(len(block), dtype=bool)
        for cols, kk in jobs:
            bad |= _below_k(np.ascontiguousarray(block[:, cols]), kk, alpha)
    return block, bad


# --------------------------------------------------------------------------------------------
# the default: greedy on the pattern table, recounting after every suppression
# --------------------------------------------------------------------------------------------
_COMPLETE, _PARTIAL, _ALL_MISSING = 0, 1, 2
#: compatibility vectors kept by :class:`_Patterns` (each one bool per pattern)
COMPAT_CACHE = 4096


class _Patterns:
    """The distinct key patterns with their record counts and their current f under the
    missing-value rule, updated exactly when records move from one pattern to another.

    The weight with which a record of pattern q counts in f of a compatible pattern p != q is
    1 when p is partial and q complete, alpha when q is partial (or all-missing with p
    partial), 0 for an all-missing q and complete p (alpha with one key); an all-missing p
    has f = n. A pattern counts its own records with weight 1.
    """

    def __init__(self, codes: np.ndarray, alpha: float, counts=None, first=None):
        rows, m = codes.shape
        ids, pats, counts, _ = pattern_table(codes, multiplicity=counts)
        n = int(counts.sum()) if counts is not None and len(counts) else rows
        self.m, self.n, self.alpha = m, n, float(alpha)
        self.rec = np.asarray(ids, dtype=np.int64)
        cap = max(16, 2 * len(pats))
        self.cols = np.full((m, cap), -1, dtype=np.int32)
        self.cols[:, : len(pats)] = pats.T
        self.cnt = np.zeros(cap, dtype=np.float64)
        self.cnt[: len(pats)] = counts
        self.size = len(pats)
        self.index = {pats[p].tobytes(): p for p in range(len(pats))}
        w_allmiss = alpha if m == 1 else 0.0
        #: W[type of p, type of q]
        self.W = np.array([[1.0, alpha, w_allmiss], [1.0, alpha, alpha], [0.0, 0.0, 0.0]])
        self.types = np.zeros(cap, dtype=np.int8)
        self.types[: self.size] = [self._type(pats[p]) for p in range(len(pats))]
        #: the first record (row order) of each pattern: ties are broken by it, never by codes
        self.first = np.full(cap, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(self.first, self.rec, np.arange(rows) if first is None else np.asarray(first, dtype=np.int64))
        self.f = np.zeros(cap)
        #: compatibility of a pattern with every pattern (``mismatches(...)[0] == 0``), kept for
        #: the patterns used last; patterns are only ever added, so a cached vector is extended
        self._compat: OrderedDict[int, np.ndarray] = OrderedDict()
        if len(pats):
            from .nafreq import pattern_frequencies

            self.f[: self.size] = pattern_frequencies(pats, counts, counts, alpha)[0]

    def _type(self, row) -> int:
        miss = int(np.count_nonzero(row < 0))
        return _COMPLETE if miss == 0 else (_ALL_MISSING if miss == self.m else _PARTIAL)

    def row(self, p: int) -> np.ndarray:
        return self.cols[:, p].copy()

    def mismatches(self, q: np.ndarray):
        """Per pattern, the number of variables where it and ``q`` are both observed and differ,
        and the per-variable mismatch flags."""
        size = self.size
        c = np.zeros(size, dtype=np.int8)
        flags = {}
        for j in np.flatnonzero(q >= 0):
            col = self.cols[j, :size]
            mj = (col != q[j]) & (col >= 0)
            flags[int(j)] = mj
            c += mj
        return c, flags

    def compat(self, p: int) -> np.ndarray:
        """Per pattern, whether it and pattern ``p`` agree wherever both are observed (the
        patterns p's records count in f), computed once and extended as patterns are added."""
        size = self.size
        have = self._compat.get(p)
        if have is None:
            vec = self.mismatches(self.cols[:, p])[0] == 0
        elif len(have) < size:
            q, done = self.cols[:, p], len(have)
            block = self.cols[:, done:size]
            obs = q >= 0
            differ = ((block != q[:, None]) & (block >= 0) & obs[:, None]).any(axis=0)
            vec = np.concatenate([have, ~differ])
        else:
            vec = have
        self._compat[p] = vec
        self._compat.move_to_end(p)
        if len(self._compat) > COMPAT_CACHE:
            self._compat.popitem(last=False)
        return vec

    def find_or_add(self, q: np.ndarray, compat: np.ndarray | None = None) -> int:
        """The index of pattern ``q``, added (with no records) when new. ``compat``: q's
        compatibility with the current patterns when the caller knows it (derived from a
        neighbour's, which spares the scan of every pattern)."""
        key = q.astype(np.int32).tobytes()
        p = self.index.get(key)
        if p is not None:
            return p
        if self.size == self.cols.shape[1]:
            self._grow()
        p = self.size
        self.cols[:, p] = q
        self.types[p] = self._type(q)
        self.cnt[p] = 0.0
        self.first[p] = np.iinfo(np.int64).max
        self.size += 1
        self.index[key] = p
        if compat is None:
            compat = self.mismatches(q)[0] == 0
        else:  # the new pattern is compatible with itself
            compat = np.append(compat[:p], True)
        self._compat[p] = compat  # kept for the moves to and from the new pattern
        self.f[p] = self._f_of(p, compat)
        return p

    def _grow(self):
        cap = 2 * self.cols.shape[1]
        cols = np.full((self.m, cap), -1, dtype=np.int32)
        cols[:, : self.size] = self.cols[:, : self.size]
        self.cols = cols
        for name in ("cnt", "f", "types", "first"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: self.size] = old[: self.size]
            setattr(self, name, new)

    def _f_of(self, p: int, compat: np.ndarray) -> float:
        if self.types[p] == _ALL_MISSING:
            return float(self.n)
        size = self.size
        w = self.W[self.types[p], self.types[:size]] * self.cnt[:size] * compat
        return float(w.sum() - w[p] + self.cnt[p])

    def delta(self, q_from: int, q_to: int, c_from: np.ndarray, c_to: np.ndarray, n_moved: float):
        """Change of f when ``n_moved`` records move from ``q_from`` to ``q_to`` (``c_*``:
        compatibility flags of the two patterns with every pattern): ``(idx, d)``, the
        patterns compatible with either (sorted; both patterns among them, each being compatible
        with itself) and their change. Every other pattern's f is unchanged."""
        size = self.size
        idx = np.flatnonzero(c_from[:size] | c_to[:size])
        t = self.types[idx]
        d = n_moved * (self.W[t, self.types[q_to]] * c_to[idx] - self.W[t, self.types[q_from]] * c_from[idx])
        i_from, i_to = np.searchsorted(idx, (q_from, q_to))
        d[i_from] += n_moved * (self.W[t[i_from], self.types[q_from]] - 1.0) * c_from[q_from]
        d[i_to] += n_moved * (1.0 - self.W[t[i_to], self.types[q_to]] * c_to[q_to])
        d[t == _ALL_MISSING] = 0.0
        return idx, d

    def move(self, q_from: int, q_to: int, n_moved: float, c_from=None, c_to=None) -> None:
        if c_from is None:
            c_from = self.compat(q_from)
        if c_to is None:
            c_to = self.compat(q_to)
        idx, d = self.delta(q_from, q_to, c_from, c_to, n_moved)
        self.f[idx] += d
        self.cnt[q_from] -= n_moved
        self.cnt[q_to] += n_moved

    def n_below(self, k: float) -> int:
        """The patterns with records whose f is below k."""
        size = self.size
        return int(np.count_nonzero((self.cnt[:size] > 0) & (self.f[:size] < k - 1e-9)))

    def f_after_suppressing(self, p: int, c: np.ndarray, flags: dict) -> dict[int, float]:
        """For each observed variable v of pattern p, f of p's records once v is suppressed
        in all of them (p's mismatch counts ``c`` and ``flags`` with every pattern given)."""
        size, q = self.size, self.cols[:, p]
        obs = [int(j) for j in np.flatnonzero(q >= 0)]
        if len(obs) == 1:
            return {obs[0]: float(self.n)}
        t = self.types[:size]
        w = self.W[_PARTIAL, t] * self.cnt[:size]  # the weights a partial pattern gives the others
        base = float(w[c == 0].sum())
        one = np.flatnonzero(c == 1)  # the same elements, in the same order, as a mask over all
        w_one = w[one]
        out = {}
        for v in obs:
            total = base + float(w_one[flags[v][one]].sum())
            total += self.cnt[p] * (1.0 - self.W[_PARTIAL, self.types[p]])  # p's own records count fully
            target = q.copy()
            target[v] = -1
            r = self.index.get(target.astype(np.int32).tobytes())
            if r is not None and r != p:
                total += self.cnt[r] * (1.0 - self.W[_PARTIAL, self.types[r]])
            out[v] = total
        return out


def _choose(fa: dict[int, float], k: float, col_order: np.ndarray) -> int:
    """The least important variable whose suppression lifts the record to k; failing that,
    the one that lifts it most (the least important among equals)."""
    for j in col_order:
        if int(j) in fa and fa[int(j)] >= k:
            return int(j)
    best = max(fa.values())
    return next(int(j) for j in col_order if int(j) in fa and fa[int(j)] == best)


def greedy_suppression(codes: np.ndarray, k: int, importance: np.ndarray, alpha: float = 1.0, jit: bool | None = None):
    """Greedy local suppression with exact recounting (sdckit's default).

    Works on the distinct key patterns. Patterns below k are visited by increasing f; a
    pattern that earlier suppressions have already lifted to k is skipped (f is updated
    exactly after every suppression, only where the moved records are compatible). For a
    pattern still below k, the variable to suppress (in all its records) is the least
    important one whose suppression lifts f to k; if none does, the one that lifts f most.
    Passes repeat until no pattern is below k. A last pass restores suppressed values, most
    important variables first, wherever k-anonymity of every record survives.

    With Numba installed (``sdckit[fast]``) and alpha = 1 the same algorithm runs compiled
    (:mod:`._suppression_jit`: the same cells) when it is worth Numba's one-off cost;
    ``jit=False`` keeps the NumPy kernel, ``jit=None`` decides.

    Returns ``(codes, unresolved)`` as :func:`sdcmicro_suppression`.
    """
    n = len(codes)
    if n == 0:
        return codes.copy(), np.zeros(0, dtype=bool)
    pt = _Patterns(codes, alpha)
    col_order = _suppression_order(importance)
    kk = float(min(int(k), n))
    restore_order = np.argsort(importance, kind="stable")
    radix = [int(codes[:, j].max()) + 2 for j in range(codes.shape[1])]
    if jit is not False and _suppression_jit.use_jit(pt.n_below(kk), alpha, radix):
        size = pt.size
        out = _suppression_jit.greedy_jit(
            codes, pt.cols[:, :size].T, pt.rec, pt.cnt[:size], pt.f[:size], pt.types[:size], pt.first[:size],
            kk, pt.W, col_order, restore_order, radix, float(pt.n),
        )  # fmt: skip
        return out, _below_k(out, int(k), alpha)
    while _greedy_pass(pt, kk, col_order):
        pass
    out = pt.cols[:, pt.rec].T.copy()
    out = _restore(codes, out, pt, kk, restore_order)
    return out, _below_k(out, int(k), alpha)


def greedy_suppression_rows(codes, counts, first, k: int, importance, alpha: float, records_of):
    """:func:`greedy_suppression` on the rows of a compressed table (distinct rows with
    ``counts`` records each, the first of them at input position ``first``), with the same
    suppressed cells.

    The passes work on patterns, so on rows. The restoring pass works record by record in
    input order: ``records_of(rows)`` returns the input positions (sorted) and the row of every
    record of the given rows, which are the rows with suppressed values only.

    Returns ``(out_rows, pos, row_of, out_records, f_rows, f_records)``: the codes of every row
    after the passes, then the records with suppressed values (positions, rows, final codes),
    and f_k after restoring, per row (for the records that were not restored) and per such
    record.
    """
    codes = np.asarray(codes)
    n = int(np.sum(counts))
    empty = np.zeros(0, dtype=np.int64)
    if n == 0:
        return codes.copy(), empty, empty, codes[:0].copy(), np.zeros(len(codes)), np.zeros(0)
    pt = _Patterns(codes, alpha, counts=counts, first=first)
    col_order = _suppression_order(importance)
    kk = float(min(int(k), n))
    while _greedy_pass(pt, kk, col_order):
        pass
    out_rows = pt.cols[:, pt.rec].T.copy()
    changed = np.flatnonzero(((out_rows < 0) & (codes >= 0)).any(axis=1))
    pos, row_of = records_of(changed) if changed.size else (empty, empty)
    rec = pt.rec[row_of].copy()
    out_rec = _restore(codes[row_of], out_rows[row_of].copy(), pt, kk, np.argsort(importance, kind="stable"), rec, pos)
    f_rows, f_rec = _final_frequencies(out_rows, np.asarray(counts, dtype=float), row_of, out_rec, alpha)
    return out_rows, pos, row_of, out_rec, f_rows, f_rec


def _final_frequencies(out_rows, counts, row_of, out_rec, alpha):
    """f_k (recounted) of the rows' records that kept the row's codes, and of the records
    listed apart (each of its own)."""
    rest = counts.copy()
    np.subtract.at(rest, row_of, 1.0)
    allc = np.concatenate([out_rows, out_rec]).astype(np.int32)
    mult = np.concatenate([rest, np.ones(len(out_rec))])
    keep = mult > 0
    ids, pats, cnt, _ = pattern_table(allc[keep], multiplicity=mult[keep])
    from .nafreq import pattern_frequencies

    fp = pattern_frequencies(pats, cnt, cnt, alpha)[0]
    f = np.full(len(allc), np.nan)
    f[np.flatnonzero(keep)] = fp[ids]
    return f[: len(out_rows)], f[len(out_rows) :]


def _greedy_pass(pt: _Patterns, k: float, col_order: np.ndarray) -> bool:
    """One pass over the patterns below k; True when a suppression was made."""
    size = pt.size
    live = np.flatnonzero((pt.cnt[:size] > 0) & (pt.f[:size] < k - 1e-9))
    if live.size == 0:
        return False
    moved = False
    for p in live[np.lexsort((pt.first[live], pt.f[live]))]:
        if pt.cnt[p] <= 0 or pt.f[p] >= k - 1e-9:
            continue
        c, flags = pt.mismatches(pt.cols[:, p])
        pt._compat[p] = c == 0  # p's compatibility, reused when its records move
        fa = pt.f_after_suppressing(p, c, flags)
        if not fa:
            continue
        v = _choose(fa, k, col_order)
        target = pt.row(p)
        target[v] = -1
        # p without v: compatible with the patterns p is, and with those differing from p at v alone
        r = pt.find_or_add(target, (c == 0) | ((c == 1) & flags[v]))
        members = np.flatnonzero(pt.rec == p)
        pt.move(p, r, float(pt.cnt[p]), c_from=pt.compat(p))
        pt.rec[members] = r
        pt.first[r] = min(pt.first[r], pt.first[p])
        moved = True
    return moved


def _restore(
    original: np.ndarray, out: np.ndarray, pt: _Patterns, k: float, restore_order, rec=None, pos=None
) -> np.ndarray:
    """Put suppressed values back, most important variables first, wherever every record
    keeps f >= k (checked exactly on the pattern table).

    ``rec`` and ``pos`` (pattern and record position of each row of ``out``) default to the
    pattern table's own records; a compressed table passes the records with suppressed values
    only, in input order."""
    rec = pt.rec if rec is None else rec
    pos = np.arange(len(out)) if pos is None else pos
    n_bad = pt.n_below(k)  # patterns below k that no restore touches keep every restore out
    for v in restore_order:
        for i in np.flatnonzero((out[:, v] < 0) & (original[:, v] >= 0)):
            a = int(rec[i])
            target = pt.row(a)
            target[v] = original[i, v]
            c_a = pt.compat(a)
            col = pt.cols[v, : pt.size]
            # a with v observed: compatible with a's compatible patterns missing at v or equal there
            b = pt.find_or_add(target, c_a & ((col < 0) | (col == target[v])))
            idx, d = pt.delta(a, b, pt.compat(a), pt.compat(b), 1.0)
            ia, ib = np.searchsorted(idx, (a, b))
            cnt = pt.cnt[idx]
            new_cnt = cnt.copy()
            new_cnt[ia] -= 1
            new_cnt[ib] += 1
            new_f = pt.f[idx] + d
            before = int(np.count_nonzero((cnt > 0) & (pt.f[idx] < k - 1e-9)))
            after = int(np.count_nonzero((new_cnt > 0) & (new_f < k - 1e-9)))
            if n_bad - before + after == 0:
                pt.f[idx] = new_f
                pt.cnt[a] -= 1
                pt.cnt[b] += 1
                rec[i] = b
                pt.first[b] = min(pt.first[b], int(pos[i]))
                out[i, v] = original[i, v]
                n_bad = 0
            # else: an unused new pattern stays with count 0 (it counts for nothing)
    return out
