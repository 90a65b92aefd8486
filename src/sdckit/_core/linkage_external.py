"""Mlodak's external risk (spec F.7): pairing of an alternative source A with the released
file D under a Gower-like distance, computed exactly by hashing and sorting instead of S003's
pairwise loop, plus the direct pairwise computation used as its test oracle.

Encoded inputs (built by :mod:`sdckit.risk.linkage`):

* ``nom_d``, ``nom_a``: int codes of nominal variables, shared code table, a missing value is
  one more code (NA = NA gives distance 0);
* ``ord_d``, ``ord_a``: ranks of ordinal variables, 1..R_j, missing = 0; ``den`` the divisor of
  each ordinal variable (R_j when the variable has a missing value in D or A, else R_j - 1);
* ``con_d``, ``con_a``: float values of continuous variables (NaN = missing);
* ``w_nom``, ``w_ord``, ``w_con``: availabilities p_j > 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ExternalInput", "nearest_observed", "continuous_mismatch", "pair_distance",
           "external_pairwise", "external_exact", "first_found", "categorical_links"]

_PAIR_BUDGET = 4_000_000


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


def nearest_observed(con_d: np.ndarray, con_a: np.ndarray) -> np.ndarray:
    """For each A value, the observed D value of the same variable nearest to it (ties: the
    lower one; NaN when A is missing or D has no observed value) - S003's rule for a missing
    continuous value in D."""
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
    """d_j in {0, 1} for continuous variables (spec F.7), elementwise:

    * A missing: 0 if the D value is missing too, else 1 (library rule, spec K.15);
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
    h of a are ``idx[ptr[a]:ptr[a+1]]`` in D order (empty arrays when ``want_pairs`` is False).
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
    return _pairs_result(paired, pa, ph, want_pairs, e.n_a)


def _bucket_ids(cd: np.ndarray, ca: np.ndarray):
    """Joint integer id of each row's tuple of codes (D rows, A rows): mixed-radix keys built
    column by column, re-densified whenever the radix product could overflow int64."""
    if cd.shape[1] == 0:
        return np.zeros(cd.shape[0], np.int64), np.zeros(ca.shape[0], np.int64)
    allc = np.concatenate([cd, ca], axis=0).astype(np.int64)
    allc -= allc.min(axis=0)  # codes >= 0 (a missing ordinal rank is 0 already)
    key = allc[:, 0].copy()
    size = int(key.max()) + 1
    for j in range(1, allc.shape[1]):
        card = int(allc[:, j].max()) + 1
        if size * card >= 2**62:
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            size = int(key.max()) + 1
        key = key * card + allc[:, j]
        size *= card
    _, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel().astype(np.int64)
    return inv[: cd.shape[0]], inv[cd.shape[0]:]


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


def _expand(starts: np.ndarray, counts: np.ndarray, owners: np.ndarray):
    """Pairs (owner, start + t) for t < count, vectorised."""
    tot = int(counts.sum())
    if tot == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rep = np.repeat(np.arange(counts.size), counts)
    offs = np.arange(tot) - np.repeat(np.cumsum(counts) - counts, counts)
    return owners[rep], starts[rep] + offs


def external_exact(e: ExternalInput, want_pairs: bool = True):
    """The same result as :func:`external_pairwise` by blocking (spec F.7, scalable algorithm).

    With ``pair_tol == 0`` every available variable must match: records are bucketed on the
    tuple of nominal and ordinal codes; inside a bucket, candidates on the first continuous
    variable come from an interval search on the D values sorted by (bucket, value) (D records
    missing that value are candidates when the nearest-observed rule admits a); every candidate
    is then checked exactly on all continuous variables. With ``pair_tol > 0`` records are
    bucketed on the categorical variables whose p_j alone exceeds the tolerance and every pair
    inside a bucket is measured. Cost O((n_A + n_D) log n_D + candidates).
    """
    near = nearest_observed(e.con_d, e.con_a)
    if e.pair_tol > 0:
        return _exact_tolerant(e, near, want_pairs)
    cat_d = np.concatenate([e.nom_d, e.ord_d.astype(np.int64)], axis=1)
    cat_a = np.concatenate([e.nom_a, e.ord_a.astype(np.int64)], axis=1)
    bd, ba = _bucket_ids(cat_d, cat_a)
    nb = int(max(bd.max(initial=-1), ba.max(initial=-1))) + 1
    paired = np.zeros(e.n_a, dtype=bool)
    pa, ph = [], []
    if e.w_con.size == 0:
        order = np.argsort(bd, kind="stable")
        bstart = np.searchsorted(bd[order], np.arange(nb))
        bend = np.searchsorted(bd[order], np.arange(nb), side="right")
        cnt = bend[ba] - bstart[ba]
        paired = cnt > 0
        if want_pairs:
            ia, pos = _expand(bstart[ba], cnt, np.arange(e.n_a))
            pa.append(ia)
            ph.append(order[pos])
    else:
        x1 = e.con_d[:, 0]
        obs = ~np.isnan(x1)
        # observed pivot values sorted by (bucket, value)
        io = np.flatnonzero(obs)
        vals = np.sort(x1[io])
        rank = np.searchsorted(vals, x1[io])  # global rank of each value (ties share it)
        keyo = bd[io] * (vals.size + 1) + rank
        oo = np.argsort(keyo, kind="stable")
        keyo_s, io_s = keyo[oo], io[oo]
        # missing pivot values grouped by bucket (D order inside)
        im = np.flatnonzero(~obs)
        om = np.argsort(bd[im], kind="stable")
        bm_s, im_s = bd[im][om], im[om]
        mstart = np.searchsorted(bm_s, np.arange(nb))
        mend = np.searchsorted(bm_s, np.arange(nb), side="right")
        a1 = e.con_a[:, 0]
        L, U = _interval(np.nan_to_num(a1), e.tol)
        rl = np.searchsorted(vals, L, side="left")
        ru = np.searchsorted(vals, U, side="right")
        base = ba * (vals.size + 1)
        lo = np.searchsorted(keyo_s, base + rl, side="left")
        hi = np.searchsorted(keyo_s, base + ru, side="left")
        hi = np.where(np.isnan(a1), lo, np.maximum(hi, lo))
        # D records missing the pivot: admissible on it iff a is missing too or the nearest
        # observed value passes
        miss_ok = continuous_mismatch(a1, np.full_like(a1, np.nan), near[:, 0], e.tol) == 0
        mcnt = np.where(miss_ok, mend[ba] - mstart[ba], 0)
        ocnt = hi - lo
        tot = ocnt + mcnt
        # chunks of A with a bounded number of candidate pairs
        csum = np.cumsum(tot)
        bounds = np.searchsorted(csum, np.arange(_PAIR_BUDGET, int(csum[-1]) + _PAIR_BUDGET, _PAIR_BUDGET)) \
            if e.n_a else np.zeros(0, np.int64)
        edges = np.unique(np.concatenate([[0], np.minimum(bounds + 1, e.n_a), [e.n_a]]))
        for s, t in zip(edges[:-1], edges[1:]):
            owners = np.arange(s, t)
            ia1, p1 = _expand(lo[s:t], ocnt[s:t], owners)
            ia2, p2 = _expand(mstart[ba[s:t]], mcnt[s:t], owners)
            ia = np.concatenate([ia1, ia2])
            ih = np.concatenate([io_s[p1], im_s[p2]])
            ok = continuous_mismatch(e.con_a[ia], e.con_d[ih], near[ia], e.tol).any(axis=1) == 0
            _keep_pairs(ia[ok], ih[ok], paired, pa, ph, want_pairs)
    return _pairs_result(paired, pa, ph, want_pairs, e.n_a)


def _exact_tolerant(e: ExternalInput, near, want_pairs):
    """pair_tol > 0: block on categorical variables whose weight alone exceeds the tolerance,
    measure every pair inside a block."""
    big_n = e.w_nom > e.pair_tol
    big_o = e.w_ord * (1.0 / e.den.max(initial=1.0)) > e.pair_tol if e.w_ord.size else np.zeros(0, bool)
    # an ordinal mismatch costs at least p_j / den_j: block on it only if that alone exceeds
    cat_d = np.concatenate([e.nom_d[:, big_n], e.ord_d[:, big_o].astype(np.int64)], axis=1)
    cat_a = np.concatenate([e.nom_a[:, big_n], e.ord_a[:, big_o].astype(np.int64)], axis=1)
    bd, ba = _bucket_ids(cat_d, cat_a)
    nb = int(max(bd.max(initial=-1), ba.max(initial=-1))) + 1
    order = np.argsort(bd, kind="stable")
    bstart = np.searchsorted(bd[order], np.arange(nb))
    bend = np.searchsorted(bd[order], np.arange(nb), side="right")
    cnt = bend[ba] - bstart[ba]
    paired = np.zeros(e.n_a, dtype=bool)
    pa, ph = [], []
    csum = np.cumsum(cnt)
    step_edges = [0]
    if e.n_a:
        marks = np.searchsorted(csum, np.arange(_PAIR_BUDGET, int(csum[-1]) + _PAIR_BUDGET, _PAIR_BUDGET))
        step_edges += list(np.minimum(marks + 1, e.n_a))
    edges = np.unique(np.array(step_edges + [e.n_a]))
    for s, t in zip(edges[:-1], edges[1:]):
        ia, pos = _expand(bstart[ba[s:t]], cnt[s:t], np.arange(s, t))
        ih = order[pos]
        ok = pair_distance(e, ia, ih, near) <= e.pair_tol
        _keep_pairs(ia[ok], ih[ok], paired, pa, ph, want_pairs)
    return _pairs_result(paired, pa, ph, want_pairs, e.n_a)


def _keep_pairs(ia, ih, paired, pa, ph, want_pairs) -> None:
    """Mark the external records of accepted pairs and keep the pairs when they are wanted."""
    paired[np.unique(ia)] = True
    if want_pairs:
        pa.append(ia)
        ph.append(ih)


def _pairs_result(paired, pa, ph, want_pairs, n_a):
    """``(paired, ptr, idx)``: the flags and, when wanted, the pairs in CSR form by external record."""
    if not want_pairs:
        return paired, None, None
    ia = np.concatenate(pa) if pa else np.zeros(0, np.int64)
    ih = np.concatenate(ph) if ph else np.zeros(0, np.int64)
    ptr, idx = _csr_from_pairs(ia, ih, n_a)
    return paired, ptr, idx


def first_found(ptr: np.ndarray, idx: np.ndarray, n_d: int, reuse: bool = False) -> np.ndarray:
    """S003's procedure: A records in file order each take the first admissible D record (in D
    order) - not yet taken unless ``reuse``. Returns the linked D index per A record (-1: none).

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
    ix = idx  # numpy slices are cheap; the loop only visits contested records
    for a in rest.tolist():
        cand = ix[p[a]:p[a + 1]]
        free = cand[~used[cand]]
        if free.size:
            link[a] = free[0]
            used[free[0]] = True
    return link


def categorical_links(e: ExternalInput, reuse: bool = False):
    """Pairing and first-found links when only nominal / ordinal variables are available and
    ``pair_tol == 0``, without listing admissible pairs (a bucket of m released records admits
    every external record of the same bucket, so listing pairs could cost m^2).

    The admissible released records of an external record are its bucket in released order; the
    k-th external record of a bucket (file order) takes the k-th released record of that bucket
    (one-to-one) or the first one (``reuse``). Returns ``(paired, link)``.
    """
    cat_d = np.concatenate([e.nom_d, e.ord_d.astype(np.int64)], axis=1)
    cat_a = np.concatenate([e.nom_a, e.ord_a.astype(np.int64)], axis=1)
    bd, ba = _bucket_ids(cat_d, cat_a)
    nb = int(max(bd.max(initial=-1), ba.max(initial=-1))) + 1
    order = np.argsort(bd, kind="stable")
    bstart = np.searchsorted(bd[order], np.arange(nb))
    bend = np.searchsorted(bd[order], np.arange(nb), side="right")
    cnt = bend[ba] - bstart[ba]
    paired = cnt > 0
    if reuse:
        rank = np.zeros(e.n_a, dtype=np.int64)
    else:  # position of each external record among the earlier ones of its bucket
        oa = np.argsort(ba, kind="stable")
        sb = ba[oa]
        first = np.searchsorted(sb, sb)
        rank = np.empty(e.n_a, dtype=np.int64)
        rank[oa] = np.arange(e.n_a) - first
    ok = rank < cnt
    link = np.full(e.n_a, -1, dtype=np.int64)
    link[ok] = order[bstart[ba[ok]] + rank[ok]]
    return paired, link
