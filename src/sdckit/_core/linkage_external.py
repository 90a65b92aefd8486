"""Mlodak's external risk: pairing of an alternative source A with the released file D under a
Gower-like distance (Mlodak, Pietrzak & Jozefowski), computed exactly by grouping identical
records, hashing and sorting instead of the paper's pairwise loop, plus the direct pairwise
computation used as its test oracle.

Encoded inputs (built by :mod:`sdckit.risk.linkage`):

* ``nom_d``, ``nom_a``: int codes of nominal variables, shared code table, a missing value is
  one more code (NA = NA gives distance 0);
* ``ord_d``, ``ord_a``: ranks of ordinal variables, 1..R_j, missing = 0; ``den`` the divisor of
  each ordinal variable (R_j when the variable has a missing value in D or A, else R_j - 1);
* ``con_d``, ``con_a``: float values of continuous variables (NaN = missing);
* ``w_nom``, ``w_ord``, ``w_con``: availabilities p_j > 0.

The exact algorithm (:func:`admissible_classes`, :func:`class_links`):

1. Records with identical values on every variable form a *class* (on each side); the
   distance of two records depends on their classes only, so admissible pairs are found
   between classes and expanded to records only where needed.
2. A variable whose smallest possible mismatch alone exceeds ``pair_tol`` must match
   ("must-match"; every variable when ``pair_tol`` is 0). Classes are bucketed on the
   must-match nominal and ordinal codes.
3. The must-match continuous variables are joined one at a time, most selective first, on
   sorted composite keys (a trie join): the admissible released values of an external value
   a form one interval of the sorted distinct values (|a - x| <= d* |x| with d* < 1), plus
   the missing value when the nearest-observed rule admits a. Heavily tied (discrete)
   values and missing values therefore never make the candidate lists quadratic. The join
   stops when a further variable would not halve the candidate count.
4. Every candidate pair of classes is checked exactly (the full distance); first-found links
   are resolved per class (each released class is consumed in file order).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "ExternalInput",
    "AdmissibleClasses",
    "RecordClasses",
    "nearest_observed",
    "continuous_mismatch",
    "pair_distance",
    "external_pairwise",
    "first_found",
    "admissible_classes",
    "class_links",
    "external_exact",
]

_PAIR_BUDGET = 4_000_000
_SAMPLE = 2048  # external classes sampled to order the continuous variables by selectivity


@dataclass(frozen=True)
class ExternalInput:
    nom_d: np.ndarray
    nom_a: np.ndarray
    ord_d: np.ndarray
    ord_a: np.ndarray
    den: np.ndarray
    con_d: np.ndarray
    con_a: np.ndarray
    w_nom: np.ndarray
    w_ord: np.ndarray
    w_con: np.ndarray
    tol: float
    pair_tol: float = 0.0

    @property
    def n_d(self) -> int:
        return self.nom_d.shape[0]

    @property
    def n_a(self) -> int:
        return self.nom_a.shape[0]

    def subset(self, rows_d: np.ndarray, rows_a: np.ndarray) -> ExternalInput:
        """The same input restricted to the given released and external rows."""
        return ExternalInput(
            self.nom_d[rows_d],
            self.nom_a[rows_a],
            self.ord_d[rows_d],
            self.ord_a[rows_a],
            self.den,
            self.con_d[rows_d],
            self.con_a[rows_a],
            self.w_nom,
            self.w_ord,
            self.w_con,
            self.tol,
            self.pair_tol,
        )


# ----------------------------------------------------------------------------------------------
# the definition: per-pair distances (used by every algorithm) and the pairwise oracle
# ----------------------------------------------------------------------------------------------
def nearest_observed(con_d: np.ndarray, con_a: np.ndarray) -> np.ndarray:
    """For each A value, the observed D value of the same variable nearest to it (ties: the
    lower one; NaN when A is missing or D has no observed value) - the paper's rule for a
    missing continuous value in D."""
    out = np.full(con_a.shape, np.nan)
    for j in range(con_a.shape[1]):
        dmiss = np.isnan(con_d[:, j])
        if not dmiss.any() and con_d.shape[0]:
            continue  # never used: the rule only applies to missing D values
        v = np.sort(con_d[:, j][~dmiss])
        a = con_a[:, j]
        ok = ~np.isnan(a)
        if v.size == 0 or not ok.any():
            continue
        pos = np.searchsorted(v, a[ok])
        lo = v[np.clip(pos - 1, 0, v.size - 1)]
        hi = v[np.clip(pos, 0, v.size - 1)]
        out[ok, j] = np.where(np.abs(a[ok] - lo) <= np.abs(hi - a[ok]), lo, hi)
    return out


def continuous_mismatch(a: np.ndarray, x: np.ndarray, near: np.ndarray, tol: float) -> np.ndarray:
    """d_j in {0, 1} for continuous variables, elementwise:

    * A missing: 0 if the D value is missing too, else 1 (library rule);
    * D missing: compared with ``near``, the observed D value nearest to a;
    * x = 0: 0 iff a = 0; otherwise 1 iff |a - x| / |x| > tol.
    """
    xe = np.where(np.isnan(x), near, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(a - xe) / np.abs(xe)
        mis = np.where(xe == 0, a != 0, ~(rel <= tol))
    return np.where(np.isnan(a), ~np.isnan(x), mis)


def pair_distance(e: ExternalInput, ia: np.ndarray, ih: np.ndarray, near: np.ndarray) -> np.ndarray:
    """d_{ah} = sum_j p_j d_j(a, h) for the pairs (ia[k], ih[k])."""
    d = np.zeros(ia.size)
    if e.w_nom.size:
        d += (e.nom_a[ia] != e.nom_d[ih]) @ e.w_nom
    if e.w_ord.size:
        d += (np.abs(e.ord_a[ia] - e.ord_d[ih]) / e.den) @ e.w_ord
    if e.w_con.size:
        d += continuous_mismatch(e.con_a[ia], e.con_d[ih], near[ia], e.tol) @ e.w_con
    return d


def _csr_from_pairs(ia: np.ndarray, ih: np.ndarray, n_a: int):
    order = np.lexsort((ih, ia))
    ia, ih = ia[order], ih[order]
    ptr = np.zeros(n_a + 1, dtype=np.int64)
    np.cumsum(np.bincount(ia, minlength=n_a), out=ptr[1:])
    return ptr, ih


def external_pairwise(e: ExternalInput, want_pairs: bool = True):
    """Direct computation over every (a, h) pair in blocks (O(n_A n_D)); the test oracle.

    Returns ``(paired, ptr, idx)``: paired[a] = some h has d_{ah} <= pair_tol; the admissible
    h of a are ``idx[ptr[a]:ptr[a+1]]`` in D order (None when ``want_pairs`` is False).
    """
    near = nearest_observed(e.con_d, e.con_a)
    paired = np.zeros(e.n_a, dtype=bool)
    pa, ph = [], []
    step = max(1, _PAIR_BUDGET // max(1, e.n_d))
    hs = np.arange(e.n_d)
    for lo in range(0, e.n_a, step):
        a = np.arange(lo, min(e.n_a, lo + step))
        ia = np.repeat(a, e.n_d)
        ih = np.tile(hs, a.size)
        ok = pair_distance(e, ia, ih, near) <= e.pair_tol
        paired[a] = ok.reshape(a.size, e.n_d).any(axis=1)
        if want_pairs:
            pa.append(ia[ok])
            ph.append(ih[ok])
    if not want_pairs:
        return paired, None, None
    ptr, idx = _csr_from_pairs(
        np.concatenate(pa) if pa else np.zeros(0, np.int64), np.concatenate(ph) if ph else np.zeros(0, np.int64), e.n_a
    )
    return paired, ptr, idx


def first_found(ptr: np.ndarray, idx: np.ndarray, n_d: int, reuse: bool = False) -> np.ndarray:
    """The paper's procedure on listed pairs: A records in file order each take the first
    admissible D record (in D order) - not yet taken unless ``reuse``. Returns the linked D
    index per A record (-1: none).

    A record whose first admissible D record is admissible for no other A record takes it
    directly (nobody can compete for it); only the rest are resolved sequentially.
    """
    n_a = ptr.size - 1
    link = np.full(n_a, -1, dtype=np.int64)
    has = ptr[1:] > ptr[:-1]
    if reuse:
        link[has] = idx[ptr[:-1][has]]
        return link
    if idx.size == 0:
        return link
    demand = np.bincount(idx, minlength=n_d)
    first = np.where(has, idx[np.minimum(ptr[:-1], max(idx.size - 1, 0))], -1)
    direct = has & (demand[np.maximum(first, 0)] == 1)
    link[direct] = first[direct]
    used = np.zeros(n_d, dtype=bool)
    used[first[direct]] = True
    rest = np.flatnonzero(has & ~direct)
    p = ptr.tolist()
    for a in rest.tolist():
        cand = idx[p[a] : p[a + 1]]
        free = cand[~used[cand]]
        if free.size:
            link[a] = free[0]
            used[free[0]] = True
    return link


# ----------------------------------------------------------------------------------------------
# classes of identical records
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecordClasses:
    """Records grouped by identical values: ``ids[i]`` is the class of record i, the members of
    class c are ``members[ptr[c]:ptr[c+1]]`` (ascending) and ``reps[c]`` its first member."""

    ids: np.ndarray
    ptr: np.ndarray
    members: np.ndarray

    @property
    def reps(self) -> np.ndarray:
        return self.members[self.ptr[:-1]]

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.ptr)


def _densify(key: np.ndarray) -> np.ndarray:
    return np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)


def _row_ids(cols: list[np.ndarray], n: int) -> np.ndarray:
    """Dense id of each row's tuple of non-negative int codes (mixed-radix keys built column
    by column, re-densified whenever the radix product could overflow int64)."""
    if not cols or n == 0:
        return np.zeros(n, np.int64)
    key = cols[0].astype(np.int64)
    size = int(key.max()) + 1
    for c in cols[1:]:
        card = int(c.max()) + 1
        if size * card >= 2**62:
            key = _densify(key)
            size = int(key.max()) + 1
        key = key * card + c
        size *= card
    return _densify(key)


def _value_codes(x: np.ndarray) -> np.ndarray:
    """Codes of float values, equal values sharing one (0 and -0 too); missing = the last code."""
    obs = ~np.isnan(x)
    codes = np.zeros(x.size, np.int64)
    u, inv = np.unique(x[obs], return_inverse=True)
    codes[obs] = inv.ravel()
    codes[~obs] = u.size
    return codes


def _int_codes(c: np.ndarray) -> np.ndarray:
    c = c.astype(np.int64)
    return c - c.min() if c.size else c


_MIX = np.uint64(0x9E3779B97F4A7C15)


def _row_hash(ints: list[np.ndarray], floats: list[np.ndarray], n: int) -> np.ndarray:
    """A 64-bit hash of each row (integer codes, then float values with -0 = 0 and one NaN)."""
    h = np.full(n, 0x243F6A8885A308D3, np.uint64)
    cols = [c.astype(np.int64).view(np.uint64) for c in ints] + [x.view(np.uint64) for x in floats]
    with np.errstate(over="ignore"):
        for c in cols:
            h ^= c
            h *= _MIX
            h ^= h >> np.uint64(29)
    return h


def _same_rows(ids: np.ndarray, reps: np.ndarray, ints, floats) -> bool:
    """Every row equals the first row of its class (hash collisions are detected here)."""
    r = reps[ids]
    return all(np.array_equal(c, c[r]) for c in ints) and all(np.array_equal(x, x[r], equal_nan=True) for x in floats)


def _classes(nom: np.ndarray, ordr: np.ndarray, con: np.ndarray) -> RecordClasses:
    """Classes of identical rows, numbered in order of their first record. Rows are grouped by
    a hash of their values; the grouping is checked, and recomputed from exact codes in the
    (astronomically rare) case of a hash collision."""
    n = nom.shape[0]
    ints = [nom[:, j] for j in range(nom.shape[1])] + [ordr[:, j].astype(np.int64) for j in range(ordr.shape[1])]
    floats = [np.where(np.isnan(con[:, j]), np.nan, con[:, j] + 0.0) for j in range(con.shape[1])]
    key = _row_hash(ints, floats, n)
    cls = _classes_from_key(key)
    if not _same_rows(cls.ids, cls.reps, ints, floats):
        exact = [_int_codes(c) for c in ints] + [_value_codes(x) for x in floats]
        cls = _classes_from_key(_row_ids(exact, n))
    return cls


def _classes_from_key(key: np.ndarray) -> RecordClasses:
    n = key.size
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(first.size, np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    ids = rank[inv.ravel()] if n else np.zeros(0, np.int64)
    members = np.argsort(ids, kind="stable")
    ptr = np.zeros(first.size + 1, np.int64)
    np.cumsum(np.bincount(ids, minlength=first.size), out=ptr[1:])
    return RecordClasses(ids, ptr, members)


def _bucket_ids(cd: np.ndarray, ca: np.ndarray):
    """Joint integer id of each row's tuple of codes (D rows, A rows)."""
    nd = cd.shape[0]
    both = np.concatenate([cd, ca], axis=0)
    ids = _row_ids([_int_codes(both[:, j]) for j in range(both.shape[1])], both.shape[0])
    return ids[:nd], ids[nd:]


def _expand(starts: np.ndarray, counts: np.ndarray, owners: np.ndarray):
    """Pairs (owner, start + t) for t < count, vectorised."""
    tot = int(counts.sum())
    if tot == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rep = np.repeat(np.arange(counts.size), counts)
    offs = np.arange(tot) - np.repeat(np.cumsum(counts) - counts, counts)
    return owners[rep], starts[rep] + offs


def _chunks(weights: np.ndarray, budget: int):
    """Consecutive slices of ``weights`` whose sums stay within ``budget`` (at least one item each)."""
    if weights.size == 0:
        return []
    csum = np.cumsum(weights)
    marks = np.searchsorted(csum, np.arange(budget, int(csum[-1]) + budget, budget), side="right")
    edges = np.unique(np.concatenate([[0], np.maximum(marks, 1), [weights.size]]))
    edges = edges[edges <= weights.size]
    return [slice(int(s), int(t)) for s, t in zip(edges[:-1], edges[1:])]


# ----------------------------------------------------------------------------------------------
# candidate pairs of classes: buckets, then a trie join on the continuous variables
# ----------------------------------------------------------------------------------------------
def _interval(a: np.ndarray, tol: float):
    """A superset [L, U] of the x with |a - x| <= tol |x| (or x = a = 0), widened by a relative
    1e-9 so that rounding never drops a candidate; exact checks follow."""
    L = np.full(a.shape, -np.inf)
    U = np.full(a.shape, np.inf)
    if tol >= 1:  # the admissible x form two half-lines (x = 100 admits a = -1 when tol > 1.01): no filter
        return L, U
    # tol < 1: x > 0 needs a > 0 and a/(1 + tol) <= x <= a/(1 - tol); mirror image for x < 0; x = 0 iff a = 0
    pos, neg, zero = a > 0, a < 0, a == 0
    L[pos] = a[pos] / (1 + tol)
    U[pos] = a[pos] / (1 - tol)
    L[neg] = a[neg] / (1 - tol)
    U[neg] = a[neg] / (1 + tol)
    L[zero] = 0.0
    U[zero] = 0.0
    L = L - np.abs(L) * 1e-9 - 1e-300
    U = U + np.abs(U) * 1e-9 + 1e-300
    return L, U


@dataclass(frozen=True)
class _Level:
    """Released classes grouped by their key on the variables joined so far: key ``k`` holds
    ``order[start[k]:start[k] + count[k]]``; ``keys`` are the sorted composite keys of this
    level (key id = position), ``ids`` the key id of each released class."""

    ids: np.ndarray
    keys: np.ndarray
    order: np.ndarray
    start: np.ndarray
    count: np.ndarray


def _level(ids: np.ndarray, keys: np.ndarray) -> _Level:
    order = np.argsort(ids, kind="stable")
    count = np.bincount(ids, minlength=keys.size)
    start = np.cumsum(count) - count
    return _Level(ids, keys, order, start, count)


@dataclass(frozen=True)
class _Step:
    """One continuous variable of the join: released codes (rank among the distinct observed
    values, ``R`` = missing) and, per external class, the rank range ``[lo, hi)`` that may be
    admissible and whether a missing released value is admissible (``w``)."""

    code_d: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    w: np.ndarray
    R: int


class _Join:
    """The trie join of the must-match continuous variables, built lazily level by level:
    level 0 is the bucket of the must-match categorical codes, level k adds the k-th joined
    variable (most selective first, judged on a sample of external classes)."""

    def __init__(self, e: ExternalInput, near: np.ndarray):
        self.e, self.near = e, near
        must_n, must_o, must_c = _must_match(e)
        cat_d = np.concatenate([e.nom_d[:, must_n], e.ord_d[:, must_o].astype(np.int64)], axis=1)
        cat_a = np.concatenate([e.nom_a[:, must_n], e.ord_a[:, must_o].astype(np.int64)], axis=1)
        bd, self.ba = _bucket_ids(cat_d, cat_a)
        n_buckets = int(max(bd.max(initial=-1), self.ba.max(initial=-1))) + 1
        self.levels = [_level(bd, np.arange(n_buckets))]
        self.steps: list[_Step] = []
        self.ends: list[np.ndarray] = []
        cols: list[int] = np.flatnonzero(must_c).tolist()
        self.col_d = {j: np.ascontiguousarray(e.con_d[:, j]) for j in cols}
        self.col_a = {j: np.ascontiguousarray(e.con_a[:, j]) for j in cols}
        self.near_col = {j: np.ascontiguousarray(near[:, j]) for j in cols}
        self.sorted_d = {j: np.sort(e.con_d[:, j][~np.isnan(e.con_d[:, j])]) for j in cols}
        n = e.n_a
        sample = np.unique(np.linspace(0, n - 1, min(n, _SAMPLE)).astype(np.int64)) if n else np.zeros(0, np.int64)
        self.order = sorted(cols, key=lambda j: self._selectivity(j, sample))

    @property
    def depth(self) -> int:
        return len(self.order)

    def _admits_missing(self, j: int, rows: np.ndarray) -> np.ndarray:
        xa = self.e.con_a[rows, j]
        has_missing = self.sorted_d[j].size < self.e.n_d
        return has_missing & (continuous_mismatch(xa, np.full_like(xa, np.nan), self.near[rows, j], self.e.tol) == 0)

    def _selectivity(self, j: int, sample: np.ndarray) -> float:
        """Mean number of released classes a sampled external class admits on variable j alone."""
        if not sample.size:
            return 0.0
        v = self.sorted_d[j]
        xa = self.e.con_a[sample, j]
        L, U = _interval(np.nan_to_num(xa), self.e.tol)
        n_in = np.where(np.isnan(xa), 0, np.searchsorted(v, U, side="right") - np.searchsorted(v, L, side="left"))
        return float(np.mean(n_in + self._admits_missing(j, sample) * (self.e.n_d - v.size)))

    def step(self, k: int) -> _Step:
        while len(self.steps) <= k:
            j = self.order[len(self.steps)]
            v = self.sorted_d[j]
            u = v[np.concatenate([[True], v[1:] != v[:-1]])] if v.size else v
            xd, xa = self.e.con_d[:, j], self.e.con_a[:, j]
            code = np.full(xd.size, u.size, np.int64)
            obs = ~np.isnan(xd)
            code[obs] = np.searchsorted(u, xd[obs])
            L, U = _interval(np.nan_to_num(xa), self.e.tol)
            amiss = np.isnan(xa)
            lo = np.where(amiss, 0, np.searchsorted(u, L, side="left")).astype(np.int64)
            hi = np.where(amiss, 0, np.searchsorted(u, U, side="right")).astype(np.int64)
            w = self._admits_missing(j, np.arange(self.e.n_a))
            self.steps.append(_Step(code, lo, hi, w, int(u.size)))
        return self.steps[k]

    def level(self, k: int) -> _Level:
        while len(self.levels) <= k:
            s = self.step(len(self.levels) - 1)
            comp = self.levels[-1].ids * (s.R + 1) + s.code_d
            keys, inv = np.unique(comp, return_inverse=True)
            self.levels.append(_level(inv.ravel().astype(np.int64), keys))
        return self.levels[k]

    def children_end(self, k: int) -> np.ndarray:
        """Per level-k key, the end of its children among the level-(k+1) keys (the last child,
        when present, is the one with a missing value)."""
        while len(self.ends) <= k:
            i = len(self.ends)
            R1 = self.step(i).R + 1
            self.ends.append(np.searchsorted(self.level(i + 1).keys, (np.arange(self.level(i).keys.size) + 1) * R1))
        return self.ends[k]

    def next_keys(self, k: int, ea: np.ndarray, ek: np.ndarray):
        """Per entry (external class, level-k key): the range of level-(k+1) keys its values
        admit, and the level-(k+1) key of a missing released value when that one is admissible.
        The entries come back sorted by key and value (the binary searches then stay local)."""
        step, keys = self.step(k), self.level(k + 1).keys
        base = ek * (step.R + 1)
        lo = base + step.lo[ea]
        if ea.size > 4096:
            o = np.argsort(lo)
            ea, ek, base, lo = ea[o], ek[o], base[o], lo[o]
        s = np.searchsorted(keys, lo)
        t = np.searchsorted(keys, base + step.hi[ea])
        mpos = self.children_end(k)[ek] - 1
        mok = step.w[ea] & (mpos >= 0)
        mok &= keys[np.maximum(mpos, 0)] == base + step.R if keys.size else False
        return ea, ek, s, np.maximum(t - s, 0), mpos, mok


def _must_match(e: ExternalInput):
    """Variables whose smallest possible mismatch alone exceeds pair_tol (computed as in
    :func:`pair_distance`, so the comparison is exact)."""
    nom = e.w_nom > e.pair_tol
    ordv = (1.0 / e.den) * e.w_ord > e.pair_tol
    con = e.w_con > e.pair_tol
    return nom, ordv, con


def _worth_joining(join: _Join, k: int, ea: np.ndarray, ek: np.ndarray, lv: _Level) -> bool:
    """On a sample of a large set of entries: would joining the next variable halve the
    candidates? (Saves computing the next keys of millions of entries in vain.)"""
    if ea.size <= 8 * _SAMPLE:
        return True
    pick = np.linspace(0, ea.size - 1, _SAMPLE).astype(np.int64)
    _, _, _, cnt, _, mok = join.next_keys(k, ea[pick], ek[pick])
    return 2 * (int(cnt.sum()) + int(mok.sum())) < int(lv.count[ek[pick]].sum())


def _candidates(join: _Join):
    """Candidate pairs (external class, released class), in chunks of about the pair budget,
    a superset of the admissible ones, each pair at most once."""
    stack = [(0, np.arange(join.e.n_a, dtype=np.int64), join.ba)]
    while stack:
        k, ea, ek = stack.pop()
        lv = join.level(k)
        n_cand = int(lv.count[ek].sum())
        if n_cand == 0:
            continue
        if k < join.depth and n_cand > 2 * ea.size and _worth_joining(join, k, ea, ek, lv):
            ea, ek, s, cnt, mpos, mok = join.next_keys(k, ea, ek)
            n_next = int(cnt.sum()) + int(mok.sum())
            if 2 * n_next < n_cand:  # joining one more variable at least halves the candidates
                if n_next > _PAIR_BUDGET and ea.size > 1:
                    stack += [(k, ea[sl], ek[sl]) for sl in _chunks(cnt + mok, _PAIR_BUDGET)]
                    continue
                a1, k1 = _expand(s, cnt, ea)
                stack.append((k + 1, np.concatenate([a1, ea[mok]]), np.concatenate([k1, mpos[mok]])))
                continue
        for sl in _chunks(lv.count[ek], _PAIR_BUDGET):
            ia, pos = _expand(lv.start[ek[sl]], lv.count[ek[sl]], ea[sl])
            yield ia, lv.order[pos]


def _verify(join: _Join, ia: np.ndarray, ih: np.ndarray):
    """The admissible pairs among candidates, exactly: the must-match continuous variables one
    at a time (most selective first, each on the survivors of the previous ones), then, when
    pair_tol > 0, the full distance. With pair_tol = 0 the categorical codes are equal within a
    bucket, so every continuous variable matching is the whole test."""
    e = join.e
    keep = np.arange(ia.size)
    for j in join.order:
        a, h = ia[keep], ih[keep]
        ok = continuous_mismatch(join.col_a[j][a], join.col_d[j][h], join.near_col[j][a], e.tol) == 0
        keep = keep[ok]
    if e.pair_tol > 0:
        keep = keep[pair_distance(e, ia[keep], ih[keep], join.near) <= e.pair_tol]
    return ia[keep], ih[keep]


@dataclass(frozen=True)
class AdmissibleClasses:
    """Admissible pairs between classes of identical records.

    ``a`` and ``d`` group the external and released records; the released classes admissible
    for external class c are ``idx[ptr[c]:ptr[c+1]]`` (ascending).
    """

    a: RecordClasses
    d: RecordClasses
    ptr: np.ndarray
    idx: np.ndarray

    @property
    def paired(self) -> np.ndarray:
        """Per external record: some released record is admissible."""
        return (np.diff(self.ptr) > 0)[self.a.ids]

    def record_pairs(self):
        """The admissible record pairs as ``(ptr, idx)`` per external record, released records in
        file order (as :func:`external_pairwise` lists them; for tests and small files)."""
        n_a = self.a.ids.size
        deg = np.diff(self.ptr)[self.a.ids]
        ia_cls, pos = _expand(self.ptr[self.a.ids], deg, np.arange(n_a))
        dcls = self.idx[pos]
        ia, dpos = _expand(self.d.ptr[dcls], self.d.sizes[dcls], ia_cls)
        return _csr_from_pairs(ia, self.d.members[dpos], n_a)


def admissible_classes(e: ExternalInput) -> AdmissibleClasses:
    """The exact admissible pairs (d_{ah} <= pair_tol), between classes of identical records."""
    ca = _classes(e.nom_a, e.ord_a, e.con_a)
    cd = _classes(e.nom_d, e.ord_d, e.con_d)
    same = cd.reps.size == e.n_d and ca.reps.size == e.n_a  # no repeated records: the classes are the records
    r = e if same else e.subset(cd.reps, ca.reps)
    near = nearest_observed(r.con_d, r.con_a)  # same observed values as the whole of D
    join = _Join(r, near)
    pa, pd = [], []
    for ia, id_ in _candidates(join):
        ia, id_ = _verify(join, ia, id_)
        pa.append(ia)
        pd.append(id_)
    ptr, idx = _csr_from_pairs(
        np.concatenate(pa) if pa else np.zeros(0, np.int64),
        np.concatenate(pd) if pd else np.zeros(0, np.int64),
        ca.ptr.size - 1,
    )
    return AdmissibleClasses(ca, cd, ptr, idx)


# ----------------------------------------------------------------------------------------------
# first-found links on classes
# ----------------------------------------------------------------------------------------------
def class_links(adm: AdmissibleClasses, reuse: bool = False) -> np.ndarray:
    """The paper's first-found procedure (external records in file order each take the first
    admissible released record not yet taken; any admissible one when ``reuse``) on classes.

    Within a released class records are taken in file order, so a class is a queue. An external
    class whose released classes no other external class admits takes them alone: its k-th
    record takes the k-th released record of their union (vectorised); the others are
    resolved record by record, looking at the head of each admissible queue.
    """
    n_a = adm.a.ids.size
    link = np.full(n_a, -1, dtype=np.int64)
    deg = np.diff(adm.ptr)
    if adm.idx.size == 0:
        return link
    head = adm.d.members[adm.d.ptr[:-1]]  # first record of each released class
    if reuse:
        has = deg > 0
        best = np.full(deg.size, -1, np.int64)
        best[has] = np.minimum.reduceat(head[adm.idx], adm.ptr[:-1][has])
        return best[adm.a.ids]
    demand = np.bincount(adm.idx, minlength=adm.d.sizes.size)
    owner = np.repeat(np.arange(deg.size), deg)
    shared = np.zeros(deg.size, bool)
    shared[owner[demand[adm.idx] > 1]] = True
    alone = (deg > 0) & ~shared
    _links_alone(adm, alone, owner, link)
    _links_shared(adm, shared, link)
    return link


def _links_alone(adm: AdmissibleClasses, alone: np.ndarray, owner: np.ndarray, link: np.ndarray) -> None:
    keep = alone[owner]
    own, dcls = owner[keep], adm.idx[keep]
    o, pos = _expand(adm.d.ptr[dcls], adm.d.sizes[dcls], own)
    rec = adm.d.members[pos]
    order = np.lexsort((rec, o))
    o, rec = o[order], rec[order]
    first = np.searchsorted(o, np.arange(alone.size))
    n_rec = np.searchsorted(o, np.arange(alone.size), side="right") - first
    a_cls = np.flatnonzero(alone)
    ia, apos = _expand(adm.a.ptr[a_cls], adm.a.sizes[a_cls], a_cls)
    rank = apos - adm.a.ptr[ia]  # position of the external record within its class (file order)
    ok = rank < n_rec[ia]
    link[adm.a.members[apos[ok]]] = rec[first[ia[ok]] + rank[ok]]


def _links_shared(adm: AdmissibleClasses, shared: np.ndarray, link: np.ndarray) -> None:
    rows = np.flatnonzero(shared[adm.a.ids])  # external records, file order
    if rows.size == 0:
        return
    cls_of = adm.a.ids[rows].tolist()
    ptr, idx = adm.ptr.tolist(), adm.idx.tolist()
    pos = adm.d.ptr[:-1].tolist()  # next untaken member of each released class
    end = adm.d.ptr[1:].tolist()
    members = adm.d.members.tolist()
    out = []
    for c in cls_of:
        best, bc = -1, -1
        for dc in idx[ptr[c] : ptr[c + 1]]:
            p = pos[dc]
            if p < end[dc]:
                r = members[p]
                if bc < 0 or r < best:
                    best, bc = r, dc
        if bc >= 0:
            pos[bc] += 1
        out.append(best)
    link[rows] = out


def external_exact(e: ExternalInput, reuse: bool = False):
    """``(paired, link)`` by the exact algorithm: pairing flags and first-found links."""
    adm = admissible_classes(e)
    return adm.paired, class_links(adm, reuse)
