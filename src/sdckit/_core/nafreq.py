"""Frequencies under sdcMicro's "a missing value matches anything" rule, fast.

The rule (see :func:`pattern_frequencies`) needs, for every incomplete key pattern, the
counts of all patterns that agree with it wherever both are observed. The scalable
algorithm joins the patterns of every pair of missing-value masks. Done naively that costs one
sort per pair and one pass over all complete patterns per mask; this module keeps the joins
but makes them cheap:

* patterns are compared through integer projection keys (mixed radix over the observed
  columns), not through row-wise ``np.unique``;
* every unordered pair of pattern groups (the complete patterns, and the partial patterns of
  each mask) is handled once, with the larger group as the *reference*, and feeds both
  directions (compatibility is symmetric);
* a reference is aggregated onto the columns it shares with each target (U) into a *dense
  marginal table* when U spans a small key space; smaller tables are marginalised from larger
  ones (``ndarray.sum`` over the dropped axes) instead of re-reading the reference, targets
  look their sums up in O(1), and what they push back travels down the same tables;
* targets that share U with a reference whose key space is large are joined with it in one
  sort-based join (the smaller side sorted).

``frequencies.pattern_frequencies_reference`` is the plain version and the test oracle.
"""

from __future__ import annotations

import numpy as np

from .grouping import group_rows, row_keys

__all__ = ["pattern_frequencies"]

_MAX_SPACE = np.int64(2) ** 62
_DENSE_MIN = 1 << 16  # dense tables of this many cells are always fine
_DENSE_MAX = 1 << 22  # and larger than this never (measured)


def _strides(cards) -> np.ndarray:
    """C-order strides for a mixed-radix index over ``cards`` (last column fastest)."""
    cards = np.asarray(cards, dtype=np.int64)
    st = np.ones(len(cards), dtype=np.int64)
    for j in range(len(cards) - 2, -1, -1):
        st[j] = st[j + 1] * cards[j + 1]
    return st


def _space(cards) -> int:
    s = 1
    for c in cards:
        s *= int(c)
    return s


def _proj(rows: np.ndarray, cols: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """Mixed-radix key of int64 ``rows`` (column-major is fastest) on the columns ``cols``."""
    st = _strides(cards[cols])
    out = rows[:, cols[-1]].copy()
    for j, s in zip(cols[:-1], st[:-1]):
        out += rows[:, j] * s
    return out


def _keys_pair(ra: np.ndarray, rb: np.ndarray, cols: np.ndarray, cards: np.ndarray):
    """Comparable keys of two row sets on ``cols`` (densified jointly if the space is huge)."""
    if _space(cards[cols]) < _MAX_SPACE:
        return _proj(ra, cols, cards), _proj(rb, cols, cards)
    both = np.concatenate([ra[:, cols], rb[:, cols]]).astype(np.int64, copy=False)
    k = row_keys(both, cards[cols])
    return k[: len(ra)], k[len(ra) :]


def _sums_by_key(keys: np.ndarray, vals: np.ndarray):
    """Sorted unique keys, per-key sums of ``vals`` (n, 2), and each row's slot."""
    if keys.size < 2 or bool(np.all(keys[1:] > keys[:-1])):
        # already sorted and distinct: a mask's own patterns projected on columns they all
        # observe keep the pattern table's (sorted) order
        return keys, vals, np.arange(keys.size)
    uk, inv = np.unique(keys, return_inverse=True)
    inv = inv.reshape(-1)
    sums = np.column_stack([np.bincount(inv, weights=vals[:, v], minlength=len(uk)) for v in range(vals.shape[1])])
    return uk, sums, inv


def _join(ka, va, kb, vb):
    """Equi-join on integer keys: (sum of vb over equal keys for each a, sum of va for each b).

    The smaller side is sorted; rows of the larger side are first screened with a bitmap of
    the smaller side's hashed keys, so only candidates are binary-searched.
    """
    swap = len(kb) > len(ka)
    if swap:
        ka, va, kb, vb = kb, vb, ka, va
    ub, sb, invb = _sums_by_key(kb, vb)  # the smaller side is sorted
    to_a = np.zeros_like(va, dtype=float)
    if len(ka) > 8 * len(ub):
        bits = max(10, int(np.ceil(np.log2(16 * len(ub)))))
        hmask = np.int64((1 << bits) - 1)
        bitmap = np.zeros(1 << bits, dtype=bool)
        bitmap[ub & hmask] = True
        cand = np.flatnonzero(bitmap[ka & hmask])
    else:
        cand = np.arange(len(ka))
    kc = ka[cand]
    pos = np.searchsorted(ub, kc)
    pos[pos == len(ub)] = 0
    hit = ub[pos] == kc
    rows_a = cand[hit]
    hp = pos[hit]
    to_a[rows_a] = sb[hp]
    back = np.column_stack([np.bincount(hp, weights=va[rows_a, v], minlength=len(ub)) for v in range(va.shape[1])])
    to_b = back[invb]
    return (to_b, to_a) if swap else (to_a, to_b)


def _groups(patterns, complete, partial):
    """Pattern groups: the complete patterns (if any), then partial patterns by mask, largest first."""
    cols = patterns.shape[1]
    out = []
    comp_idx = np.flatnonzero(complete)
    if comp_idx.size:
        out.append((comp_idx, np.ones(cols, dtype=bool), True))
    part_idx = np.flatnonzero(partial)
    if part_idx.size:
        miss = patterns[part_idx] < 0
        if cols <= 62:  # mask as a bit field: a counting sort instead of a row-wise unique
            bits = np.zeros(len(part_idx), dtype=np.int64)
            for j in range(cols):
                bits |= miss[:, j].astype(np.int64) << j
            _, ids = np.unique(bits, return_inverse=True)
            ids = ids.reshape(-1)
            g = int(ids.max()) + 1
        else:
            ids, g = group_rows(miss.astype(np.int64))
        order = np.argsort(ids, kind="stable")
        bounds = np.searchsorted(ids[order], np.arange(g + 1))
        masks = [(part_idx[order[bounds[s] : bounds[s + 1]]], ~miss[order[bounds[s]]], False) for s in range(g)]
        masks.sort(key=lambda x: -len(x[0]))
        out += masks
    return out


def pattern_frequencies(
    patterns: np.ndarray, counts: np.ndarray, wsum: np.ndarray, alpha: float = 1.0, na_rule: str = "sdcmicro"
) -> tuple[np.ndarray, np.ndarray]:
    """f and F of every distinct key pattern under the missing-value rule.

    With c_p, W_p the record count and weight sum of pattern p, alpha in [0, 1], and p, q
    *compatible* when they agree wherever both are observed:

    * complete p:  f_p = c_p + alpha * sum_{q partial, compatible} c_q
      (an all-missing pattern is not added when m >= 2);
    * partial p:   f_p = c_p + sum_{q complete, compatible} c_q
      + alpha * sum_{q partial or all-missing, q != p, compatible} c_q;
    * all-missing p (m >= 2): f_p = n;
    * m = 1: a value gets c_v + alpha * #NA, the NA pattern gets n.

    F is the same with W_p. ``na_rule="own_category"`` returns f_p = c_p (a missing value is
    one more category).

    Parameters
    ----------
    patterns : ndarray (P, m) of int, ``-1`` = missing; rows are distinct
    counts, wsum : ndarray (P,)
    alpha : float
    na_rule : {"sdcmicro", "own_category"}

    Returns
    -------
    f, F : ndarray (P,)
    """
    patterns = np.asarray(patterns)
    f = np.asarray(counts, dtype=float).copy()
    F = np.asarray(wsum, dtype=float).copy()
    if na_rule == "own_category":
        return f, F
    if na_rule != "sdcmicro":
        raise ValueError(f"na_rule: {na_rule!r}")
    P, m = patterns.shape
    if P == 0 or patterns.min() >= 0:  # nothing missing: f = c, F = W
        return f, F
    miss = patterns < 0
    nmiss = miss.sum(axis=1)
    complete = nmiss == 0
    allmiss = nmiss == m
    partial = ~complete & ~allmiss
    cw = np.column_stack([counts, wsum]).astype(float)
    c_all = cw[allmiss].sum(axis=0)
    if m == 1:
        f[complete] += alpha * c_all[0]
        F[complete] += alpha * c_all[1]
    elif partial.any():
        cards = np.maximum(patterns.max(axis=0).astype(np.int64) + 1, 1)
        groups = _groups(patterns, complete, partial)
        rows = [np.asfortranarray(patterns[g], dtype=np.int64) for g, _, _ in groups]
        cws = [cw[g] for g, _, _ in groups]
        acc = [np.zeros((len(g), 2)) for g, _, _ in groups]
        for r in range(len(groups)):
            _reference_vs_targets(r, groups, rows, cws, acc, cards, alpha)
        for (g, _, is_complete), a in zip(groups, acc):
            if not is_complete:
                a += alpha * c_all
            f[g] += a[:, 0]
            F[g] += a[:, 1]
    f[allmiss] = float(np.sum(counts))
    F[allmiss] = float(np.sum(wsum))
    return f, F


def _reference_vs_targets(r, groups, rows, cws, acc, cards, alpha):
    """Contributions between reference group r and every later group (both directions)."""
    _, obs_r, r_complete = groups[r]
    w_to_target = 1.0 if r_complete else alpha  # a partial pattern counts compatible complete ones fully
    w_to_ref = alpha
    cols_all = np.arange(len(cards))
    n_ref = len(rows[r])
    total_r = cws[r].sum(axis=0)
    limit = min(max(n_ref, 4096), _DENSE_MAX)  # measured: larger tables cost more than they save
    by_u: dict[bytes, list[int]] = {}
    for t in range(r + 1, len(groups)):
        common = obs_r & groups[t][1]
        if not common.any():
            acc[t] += w_to_target * total_r
            acc[r] += w_to_ref * cws[t].sum(axis=0)
            continue
        by_u.setdefault(common.tobytes(), []).append(t)
    dense, sparse = [], []
    for key, ts in by_u.items():
        u = np.frombuffer(key, dtype=bool)
        (dense if _space(cards[u]) <= limit else sparse).append((u, ts))
    for u, ts in sparse:
        cols = cols_all[u]
        trows = np.concatenate([rows[t] for t in ts])
        tcw = np.concatenate([cws[t] for t in ts])
        kr, kt = _keys_pair(rows[r], trows, cols, cards)
        to_r, to_t = _join(kr, cws[r], kt, tcw)
        acc[r] += w_to_ref * to_r
        start = 0
        for t in ts:
            acc[t] += w_to_target * to_t[start : start + len(rows[t])]
            start += len(rows[t])
    if dense:
        _dense_tables(r, dense, rows, cws, acc, cards, w_to_target, w_to_ref)


def _bits(u) -> int:
    return int(sum(1 << int(j) for j in np.flatnonzero(u)))


def _dense_tables(r, dense, rows, cws, acc, cards, w_to_target, w_to_ref):
    """Reference r aggregated onto each shared column set U as a dense table (see module doc).

    Tables are built largest first, each marginalised from the smallest table already built
    on a superset of its columns (or read from the reference rows); targets look up their
    sums and push theirs; pushes travel back down, smallest first, into the parent when the
    parent is smaller than the reference, otherwise straight to the reference rows.
    """
    cols_all = np.arange(len(cards))
    n_ref = len(rows[r])
    dense.sort(key=lambda x: -_space(cards[x[0]]))
    bits = [_bits(u) for u, _ in dense]
    sizes = [_space(cards[u]) for u, _ in dense]
    tables, parent, pushes, ref_keys = [], [], [], {}

    def ref_key(i):  # projection of the reference rows on table i's columns, computed once
        if i not in ref_keys:
            ref_keys[i] = _proj(rows[r], cols_all[dense[i][0]], cards)
        return ref_keys[i]

    for i, (u, ts) in enumerate(dense):
        cols = cols_all[u]
        shape = tuple(int(c) for c in cards[cols])
        best = None
        for j in range(i):
            if bits[j] & bits[i] == bits[i] and (best is None or sizes[j] < sizes[best]):
                best = j
        if best is None:
            key = ref_key(i)
            tab = np.empty((sizes[i], 2))
            for v in range(2):
                tab[:, v] = np.bincount(key, weights=cws[r][:, v], minlength=sizes[i])
            tab = tab.reshape(shape + (2,))
        else:
            pcols = cols_all[dense[best][0]]
            tab = tables[best].sum(axis=tuple(k for k, c in enumerate(pcols) if not u[c]))
        tables.append(tab)
        parent.append(best)
        flat = tab.reshape(-1, 2)
        keys = [_proj(rows[t], cols, cards) for t in ts]
        allkeys = np.concatenate(keys) if len(ts) > 1 else keys[0]
        got = flat[allkeys]
        start = 0
        for t, k in zip(ts, keys):
            acc[t] += w_to_target * got[start : start + len(k)]
            start += len(k)
        tcw = np.concatenate([cws[t] for t in ts]) if len(ts) > 1 else cws[ts[0]]
        push = np.empty_like(flat)
        for v in range(2):
            push[:, v] = np.bincount(allkeys, weights=tcw[:, v], minlength=flat.shape[0])
        pushes.append(push)
    for i in range(len(dense) - 1, -1, -1):
        u = dense[i][0]
        b = parent[i]
        if b is None or sizes[b] > n_ref:
            acc[r] += w_to_ref * pushes[i][ref_key(i)]
        else:
            pcols = cols_all[dense[b][0]]
            pshape = tuple(int(c) for c in cards[pcols])
            g = pushes[i].reshape(tuple(int(c) for c in cards[cols_all[u]]) + (2,))
            view = pushes[b].reshape(pshape + (2,))
            view += np.expand_dims(g, tuple(k for k, c in enumerate(pcols) if not u[c]))
        pushes[i] = None
