"""Minimal sample uniques (MSUs), SUDA scores and DIS-SUDA on integer-coded keys.

Pure NumPy. The input is the table of distinct key patterns (``-1`` = missing) with the number
of records of each pattern, as built by :func:`sdckit._core.frequencies.pattern_table`; the
outputs are per-pattern arrays that the caller maps back to records.

Definitions: an *item* is (variable j, value v) with v observed. A set S of items of
record i is *unique* if no other record holds all of them (a record missing on a variable of S
holds none of its items). S is a *minimal sample unique* (MSU) of i if it is unique and no
proper subset is; since non-uniqueness is inherited by subsets it suffices that every subset of
size |S| - 1 is non-unique. Records whose full key occurs more than once (missing compared as a
value) share every item set with their duplicate and have no MSU.

Algorithm (:func:`msu_search`): a level-wise (Apriori-type) search over variable sets with the
pruning that makes SUDA2 fast (Manning, Haglin & Keane 2008), not a scan of all 2^m subsets for
every record. For each variable set S of size s it keeps the *live set* L(S): the patterns whose
S-group (patterns sharing their values on S) has at least two records and contains at least one
target pattern (a sample unique whose MSUs are wanted). Then

* a target i is in every L(S \\ {k}) iff every (s-1)-subset of S is non-unique for i; so S is
  an MSU of i iff i is in all parents' live sets and alone in its S-group;
* the S-group of such an i is found by grouping only the patterns in the intersection of the
  parents' live sets: any pattern sharing i's values on S shares them on every parent and is
  therefore in every parent's live set (by induction), so the count is exact;
* patterns outside that intersection are either unique on a subset of S (their supersets are
  unique but never minimal, and nobody else shares their values) or sit in groups without a
  target (nothing to find there): they are dropped for S and all its supersets, and a variable
  set with an empty live set generates no candidates (Apriori join).

The work is proportional to the number of (pattern, variable set) pairs in which the pattern is
still non-unique on every subset -- the same quantity SUDA2's recursion visits -- and every
step is a vectorised pass (bincount or sort) over the live patterns. Live sets are stored as
boolean masks while ``candidates x live patterns`` bytes fit a memory budget, then as packed
bits, otherwise as index arrays; the working set of patterns is compacted when it shrinks.
The MSUs found are totalled level by level (score, per-variable contributions, counts), and
kept for explanation only on request.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .grouping import row_keys

__all__ = [
    "SCORE_METHODS",
    "MsuSearch",
    "size_weights",
    "score_weights",
    "product_scores",
    "msu_search",
    "dis_probability",
    "dis_suda",
    "suda_q",
]

#: the SUDA score variants: the weight of an MSU by its size, and how a record's MSUs combine
SCORE_METHODS = ("elliot", "ihsn", "templ", "templ_product")

_DENSE_BUDGET = 1 << 27  # bytes of live-set masks per level (boolean, then packed bits; beyond: indices)
_BINCOUNT_MIN = 1 << 16  # a counting table of this many slots is always cheap
_BINCOUNT_FACTOR = 32  # ... and one of up to 32 slots per key counted is cheaper than a sort
_BINCOUNT_MAX = 1 << 24  # ... but never more than 2^24 slots (128 MiB)
_COMPACT_MIN = 4096  # compact the working set only when it has at least this many patterns
_FORCE_MODE = None  # tests: force one storage of the live sets ("bool", "packed", "index")


def size_weights(att: int, max_size: int | None = None, original_scores: bool = True) -> np.ndarray:
    r"""Score weight w(s) of an MSU of size s, as an array indexed by s = 0..att (w(0) = 0).

    ``original_scores=True`` (Elliot et al. 2005; sdcMicro's default):

    .. math:: w(s) = \prod_{i=s}^{\min(M,\, ATT-1)} (ATT - i), \quad s \le M

    which is (ATT - s)! for M = ATT (sdcMicro: a full-size MSU weighs 1, the empty product) and
    Elliot's \prod_{i=s}^{M}(ATT - i) for M <= ATT - 1.

    ``original_scores=False`` (IHSN implementation, sdcMicro before 5.0.3):

    .. math:: w(s) = (2^{ATT-s} - 1) / \binom{ATT}{s}, \quad s \le M

    In both conventions w(s) = 0 for s > M.

    Parameters
    ----------
    att : int
        Number of key variables (ATT).
    max_size : int, optional
        Largest MSU size M counted (default ATT).
    original_scores : bool
    """
    att = int(att)
    m_max = att if max_size is None else int(max_size)
    w = np.zeros(att + 1)
    for s in range(1, min(m_max, att) + 1):
        if original_scores:
            w[s] = float(math.prod(att - i for i in range(s, min(m_max, att - 1) + 1)))
        else:
            w[s] = (2.0 ** (att - s) - 1.0) / math.comb(att, s)
    return w


def score_weights(att: int, max_size: int | None, method: str) -> np.ndarray:
    r"""Weight w(s) of an MSU of size s under a score variant, indexed by s = 0..att.

    * ``"elliot"``: Elliot's weight, :func:`size_weights` with ``original_scores=True``;
    * ``"ihsn"``: the IHSN weight, :func:`size_weights` with ``original_scores=False``;
    * ``"templ"`` and ``"templ_product"``: Elliot's weight normalised by ATT!,

      .. math:: s_k = \frac{1}{ATT!} \prod_{i=k}^{\min(M,\, ATT-1)} (ATT - i), \quad k \le M

      (the handbook form after Templ 2017; the two variants differ only in how a record's
      MSUs combine: a sum or a product, :func:`product_scores`).
    """
    if method == "ihsn":
        return size_weights(att, max_size, original_scores=False)
    w = size_weights(att, max_size, original_scores=True)
    if method in ("templ", "templ_product"):
        w = w / math.factorial(int(att))
    return w


def product_scores(log_sum: np.ndarray, msu_count: np.ndarray) -> np.ndarray:
    """The product of the MSU weights of every pattern from the sum of their logarithms
    (:func:`msu_search` run with ``log w``); 0 for a pattern without MSU (no MSU, no risk
    score: not the empty product 1)."""
    return np.where(np.asarray(msu_count) > 0, np.exp(np.asarray(log_sum, dtype=float)), 0.0)


def suda_q(att: int) -> float:
    """Exponent Q = 1 + (8 - ATT) / 20 of DIS-SUDA."""
    return 1.0 + (8.0 - att) / 20.0


def dis_probability(n_uniques: int, n_pair_keys: int, fraction: float) -> float:
    r"""Estimated probability that a unique match is correct (Skinner & Elliot 2002).

    .. math:: \hat\theta = \pi n_1 / (\pi n_1 + 2 (1 - \pi) n_2)

    with n_1 sample uniques, n_2 keys of frequency 2 and sampling fraction pi. NaN when both
    counts are 0.
    """
    num = fraction * n_uniques
    den = num + 2.0 * (1.0 - fraction) * n_pair_keys
    return num / den if den > 0 else float("nan")


def dis_suda(scores: np.ndarray, n_pair_keys: int, fraction: float, att: int) -> np.ndarray:
    r"""DIS-SUDA of every record from its SUDA score, in double precision.

    .. math::

        E = 2 n_2 (1 - \pi) / \pi, \quad Q = 1 + (8 - ATT)/20, \quad
        A = \sum_{j: S_j > 0} S_j^{-Q}, \quad
        \mathrm{DIS}_i = 1 / (1 + E\, S_i^{-Q} / A) \;(S_i > 0), \; 0 \text{ otherwise}.

    E is the expected number of wrong population candidates for the sample uniques (it does not
    depend on their number, so sdcMicro's miscount of n_1 does not matter here, and no NaN can
    arise); each record with a positive score takes the share S_i^{-Q}/A of them.
    """
    scores = np.asarray(scores, dtype=float)
    out = np.zeros(scores.shape)
    pos = scores > 0
    if not pos.any():
        return out
    q = suda_q(att)
    inv = scores[pos] ** -q
    e_false = 2.0 * n_pair_keys * (1.0 - fraction) / fraction
    out[pos] = 1.0 / (1.0 + e_false * inv / inv.sum())
    return out


@dataclass(frozen=True)
class MsuSearch:
    """Per-pattern result of :func:`msu_search`.

    Attributes
    ----------
    score : (P,) float
        Sum of w(|S|) over the MSUs S of each pattern (0 for non-targets).
    contributions : (P, m) float
        ``contributions[p, j]`` = sum of w(|S|) over the MSUs of p that contain variable j
        (divide by ``score`` for sdcMicro's per-record contribution).
    msu_count : (P,) int64
    min_size : (P,) int16
        Size of the smallest MSU (0 when there is none).
    by_size : (max_size + 1,) int64
        Number of MSUs of each size over all patterns.
    subsets : tuple of tuple of int
        Variable sets referred to by ``msu_subset``.
    msu_pattern, msu_subset : ndarray or None
        When collected (see ``collect``): one entry per MSU, the pattern and the index of its
        variable set in ``subsets`` (the MSU's items are the pattern's values on those
        variables), grouped by variable set in order of size. None when not collected.
    """

    score: np.ndarray
    contributions: np.ndarray
    msu_count: np.ndarray
    min_size: np.ndarray
    by_size: np.ndarray
    subsets: tuple = ()
    msu_pattern: np.ndarray | None = None
    msu_subset: np.ndarray | None = None


def msu_search(
    patterns: np.ndarray,
    counts: np.ndarray,
    max_size: int | None = None,
    weights=None,
    *,
    targets: np.ndarray | None = None,
    collect: bool | int = False,
    dense_budget: int = _DENSE_BUDGET,
) -> MsuSearch:
    """All MSUs of size <= ``max_size`` of the target patterns (module docstring).

    Parameters
    ----------
    patterns : ndarray (P, m) of int, ``-1`` = missing
        Distinct key patterns (missing compared as a value).
    counts : ndarray (P,)
        Number of records of each pattern.
    max_size : int, optional
        Largest MSU size searched (default m).
    weights : ndarray, optional
        ``weights[s]`` = score weight of an MSU of size s (default :func:`size_weights`).
    targets : ndarray (P,) of bool, optional
        Patterns whose MSUs are wanted (default: every pattern with count 1; a pattern with
        count >= 2 never has an MSU and is ignored as a target).
    collect : bool or int
        Also return every MSU as (pattern, variable set): True for all, an integer k for at
        most k (when there are more, none are returned), False for none.
    dense_budget : int
        Bytes allowed per level for the live sets stored as boolean masks, then as packed
        bits; beyond that, index arrays are used. All forms give identical results.

    Returns
    -------
    MsuSearch
    """
    pat = np.asarray(patterns)
    cnt = np.asarray(counts)
    n_pat, m = pat.shape
    msize = m if max_size is None else int(max_size)
    w = size_weights(m, msize) if weights is None else np.asarray(weights, dtype=float)
    tgt = cnt == 1 if targets is None else np.asarray(targets, dtype=bool) & (cnt == 1)
    acc = _Accumulator(n_pat, m, msize, w, collect)
    if n_pat == 0 or m == 0 or msize < 1 or float(cnt.sum()) < 2 or not tgt.any():
        return acc.result()
    order = np.concatenate([np.flatnonzero(tgt), np.flatnonzero(~tgt)])  # targets first: a prefix
    work = _Work(
        order,
        int(np.count_nonzero(tgt)),
        [np.ascontiguousarray(pat[order, j], dtype=np.int64) for j in range(m)],
        [int(pat[:, j].max()) + 1 for j in range(m)],
    )

    # level 1: every pattern observed on j is live for the empty set (n >= 2)
    mode = _mode(m, work.n, dense_budget)
    level: dict[tuple, np.ndarray] = {}
    for j in range(m):
        live, msu = _group(work, (j,), work.cols[j] >= 0)
        acc.add(work, (j,), msu)
        if live is not None:
            level[(j,)] = _store(live, mode, work.n)
    acc.end_level(1)
    level = work.compact(level, mode)

    for s in range(2, msize + 1):
        if not level:
            break
        cands = []
        for t in level:  # Apriori join: extend by a later variable, every parent must be live
            for j in range(t[-1] + 1, m):
                S = t + (j,)
                parents = [level.get(S[:k] + S[k + 1 :]) for k in range(s)]
                if all(p is not None for p in parents):
                    cands.append((S, parents))
        prev_mode, mode = mode, _mode(len(cands), work.n, dense_budget)
        new: dict[tuple, np.ndarray] = {}
        for S, parents in cands:
            live, msu = _group(work, S, _intersect(parents, prev_mode, work))
            acc.add(work, S, msu)
            if live is not None:
                new[S] = _store(live, mode, work.n)
        acc.end_level(s)
        level = work.compact(new, mode)
    return acc.result()


_BOOL, _PACKED, _INDEX = "bool", "packed", "index"


def _mode(n_sets: int, n: int, budget: int) -> str:
    """Storage of a level's live sets: boolean masks, packed bits or sorted int32 indices."""
    if _FORCE_MODE is not None:  # tests
        return _FORCE_MODE
    if n_sets * n <= budget:
        return _BOOL
    if n_sets * ((n + 7) // 8) <= budget:
        return _PACKED
    return _INDEX


def _store(live: np.ndarray, mode: str, n: int) -> np.ndarray:
    """Convert a live set (boolean mask or sorted indices) to the level's storage."""
    if mode == _INDEX:
        return (np.flatnonzero(live) if live.dtype == bool else live).astype(np.int32, copy=False)
    if live.dtype != bool:
        mask = np.zeros(n, dtype=bool)
        mask[live] = True
        live = mask
    return np.packbits(live) if mode == _PACKED else live


class _Work:
    """The working set of patterns (targets first), their code columns and a cached prefix key."""

    def __init__(self, orig, n_targets, cols, cards):
        self.orig, self.n_targets, self.cols, self.cards = orig, n_targets, cols, cards
        self.hits = None
        self._prefix = None
        self._prefix_key = None

    @property
    def n(self) -> int:
        return len(self.orig)

    def prefix_key(self, T: tuple) -> np.ndarray | None:
        """Packed key of the variables T over the whole working set (codes of patterns missing on
        T give meaningless values that are never read), cached for consecutive candidates that
        share T; None when T has too many combinations to pack into a counting table."""
        if T != self._prefix:
            self._prefix = T
            self._prefix_key = None
            if _span(self, T) <= _BINCOUNT_MAX:
                key = self.cols[T[0]].copy()
                for j in T[1:]:
                    key *= self.cards[j]
                    key += self.cols[j]
                self._prefix_key = key
        return self._prefix_key

    def compact(self, level: dict, mode: str) -> dict:
        """Drop patterns that are live for no variable set of the level just computed."""
        n = self.n
        if not level or n < _COMPACT_MIN:
            return level
        if mode == _INDEX:
            keep = np.zeros(n, dtype=bool)
            for live in level.values():
                keep[live] = True
        else:
            it = iter(level.values())
            keep = next(it).copy()
            for live in it:
                keep |= live
            if mode == _PACKED:
                keep = np.unpackbits(keep, count=n).view(bool)
        nk = int(np.count_nonzero(keep))
        if nk > 0.6 * n:
            return level
        self.n_targets = int(np.count_nonzero(keep[: self.n_targets]))
        self.orig = self.orig[keep]
        self.cols = [c[keep] for c in self.cols]
        self.hits = None
        self._prefix = self._prefix_key = None
        if mode == _BOOL:
            return {S: live[keep] for S, live in level.items()}
        if mode == _PACKED:
            return {S: np.packbits(np.unpackbits(live, count=n).view(bool)[keep]) for S, live in level.items()}
        remap = (np.cumsum(keep) - 1).astype(np.int32)
        return {S: remap[live] for S, live in level.items()}


def _intersect(parents, mode: str, work: _Work) -> np.ndarray:
    """Patterns live for every parent: a boolean mask, or sorted indices for index storage."""
    if mode != _INDEX:
        sel = parents[0] & parents[1]
        for p in parents[2:]:
            sel &= p
        return np.unpackbits(sel, count=work.n).view(bool) if mode == _PACKED else sel
    return _intersect_index(parents, work)


def _intersect_index(parents, work: _Work) -> np.ndarray:
    """Sorted intersection of sorted index arrays by counting hits (O(sum of sizes))."""
    if work.hits is None:
        work.hits = np.zeros(work.n, dtype=np.uint8 if len(work.cols) < 255 else np.uint16)
    hits = work.hits
    parents = sorted(parents, key=len)
    for p in parents:
        hits[p] += 1
    smallest = parents[0]
    out = smallest[hits[smallest] == len(parents)]
    for p in parents:
        hits[p] = 0
    return out


def _span(work: _Work, S) -> int:
    span = 1
    for j in S:
        span *= max(work.cards[j], 1)
    return span


def _table_ok(span: int, k: int) -> bool:
    """Whether a counting table of ``span`` slots is cheaper than sorting ``k`` keys."""
    return span <= max(_BINCOUNT_MIN, min(_BINCOUNT_FACTOR * k, _BINCOUNT_MAX))


def _group(work: _Work, S: tuple, sel: np.ndarray):
    """Group the selected patterns (boolean mask or sorted indices) by their values on S.

    Returns ``(live, msu)``: the live set of S (a boolean mask or sorted indices; None when
    empty) and the working-set positions of the targets that are unique on S (None when there
    are none).

    Counting uses a table indexed by the packed key when the number of combinations allows
    (one bincount; the groups holding a target are then marked in the same table), a sort
    otherwise.
    """
    n, nt = work.n, work.n_targets
    span = _span(work, S)
    j = S[-1]
    if sel.dtype == bool:
        k = int(np.count_nonzero(sel))
        if k == 0:
            return None, None
        if 2 * k >= n and _table_ok(span, n):
            pk = work.prefix_key(S[:-1]) if len(S) > 1 else None
            if len(S) == 1 or pk is not None:
                return _group_dense(work, pk, j, sel, span)
        sel = np.flatnonzero(sel)
    if sel.size == 0:
        return None, None
    idx = sel
    cut = int(np.searchsorted(idx, nt))  # targets come first
    pk = work.prefix_key(S[:-1]) if len(S) > 1 and _table_ok(span, idx.size) else None
    if len(S) == 1 or pk is not None:
        key = work.cols[j][idx] if pk is None else pk[idx] * work.cards[j] + work.cols[j][idx]
        table = np.bincount(key, minlength=span)
    else:  # too many combinations for a table: sort
        key_raw = row_keys(np.column_stack([work.cols[v][idx] for v in S]), [work.cards[v] for v in S])
        _, key, table = np.unique(key_raw, return_inverse=True, return_counts=True)
        key = key.reshape(-1)
    key_t = key[:cut]
    c_t = table[key_t]
    msu = idx[:cut][c_t == 1]
    live_t = c_t >= 2
    if not live_t.any():  # no target left: nothing to find below S
        return None, (msu if msu.size else None)
    table[key_t] = -1  # mark the groups that hold a target
    live = np.concatenate([idx[:cut][live_t], idx[cut:][table[key[cut:]] == -1]])
    return live, (msu if msu.size else None)


def _group_dense(work: _Work, prefix_key, j, sel, span):
    """:func:`_group` over the whole working set (no gathers) when most patterns are selected."""
    nt = work.n_targets
    if prefix_key is None:
        key = work.cols[j].copy()
    else:
        key = np.multiply(prefix_key, work.cards[j])
        key += work.cols[j]
    np.putmask(key, ~sel, span)  # a sentinel slot for the patterns not selected
    table = np.bincount(key, minlength=span + 1)
    table[span] = 0
    key_t = key[:nt]
    c_t = table[key_t]
    msu = np.flatnonzero(c_t == 1)
    live = np.empty(work.n, dtype=bool)
    live_t = np.greater_equal(c_t, 2, out=live[:nt])
    if not live_t.any():
        return None, (msu if msu.size else None)
    table[key_t] = -1  # mark the groups that hold a target
    table[span] = 0
    np.equal(table[key[nt:]], -1, out=live[nt:])
    return live, (msu if msu.size else None)


class _Accumulator:
    """Totals the MSUs found, level by level, and optionally keeps them."""

    def __init__(self, n_pat, m, max_size, weights, collect):
        self.n_pat, self.m = n_pat, m
        self.weights = weights
        self.limit = np.inf if collect is True else 0 if collect is False else int(collect)
        self.kept = 0
        self.score = np.zeros(n_pat)
        self.contrib = np.zeros((n_pat, m), order="F")
        self.count = np.zeros(n_pat, dtype=np.int64)
        self.min_size = np.zeros(n_pat, dtype=np.int16)
        self.by_size = np.zeros(max(max_size, 0) + 1, dtype=np.int64)
        self.subsets: list[tuple] = []
        self.level: list[tuple[int, np.ndarray]] = []  # (subset index, pattern ids) of this level
        self.kept_pats: list[np.ndarray] = []
        self.kept_sids: list[np.ndarray] = []
        self.dtype = np.int32 if n_pat < 2**31 else np.int64

    def add(self, work: _Work, S: tuple, msu):
        if msu is not None:
            self.level.append((len(self.subsets), work.orig[msu].astype(self.dtype, copy=False)))
            self.subsets.append(S)

    def end_level(self, s: int):
        """Fold the MSUs of size s into the per-pattern totals."""
        if not self.level:
            return
        n_pat = self.n_pat
        w = self.weights[s] if s < len(self.weights) else 0.0
        pats = np.concatenate([g for _, g in self.level])
        cnt = np.bincount(pats, minlength=n_pat)
        self.count += cnt
        self.score += w * cnt
        self.by_size[s] += pats.size
        first = pats[self.min_size[pats] == 0]
        self.min_size[first] = s
        for j in range(self.m):
            blocks = [g for sid, g in self.level if j in self.subsets[sid]]
            if blocks:
                self.contrib[:, j] += w * np.bincount(np.concatenate(blocks), minlength=n_pat)
        if self.kept + pats.size <= self.limit:
            self.kept += pats.size
            self.kept_pats.append(pats)
            self.kept_sids += [np.full(g.size, sid, dtype=np.int32) for sid, g in self.level]
        else:
            self.limit = -1  # too many to keep: keep none
            self.kept_pats, self.kept_sids = [], []
        self.level = []

    def result(self) -> MsuSearch:
        mp = ms = None
        if self.limit > 0:
            mp = np.concatenate(self.kept_pats) if self.kept_pats else np.zeros(0, dtype=self.dtype)
            ms = np.concatenate(self.kept_sids) if self.kept_sids else np.zeros(0, dtype=np.int32)
        return MsuSearch(self.score, self.contrib, self.count, self.min_size, self.by_size, tuple(self.subsets), mp, ms)
