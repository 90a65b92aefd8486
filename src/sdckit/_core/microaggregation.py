r"""Microaggregation kernels: MDAV (exact, and a blocked fast variant), the sort-based methods
(individual ranking, single-axis, row order, first principal component, robust Mahalanobis
distance) and the group statistics.

Pure NumPy on a float matrix ``X`` of shape (n, p) with NaN for a missing value. Every grouping
function returns a group number per record (0-based, numbered in the order of each group's
first record; -1 for a record that belongs to no group).

MDAV (Domingo-Ferrer & Mateo-Sanz 2002) is computed with the rules of sdcMicro's C++ code
(``Mdav``), so that it forms the same groups:

* distance between records x and y: ``d(x, y) = sum_j w_j (x_j - y_j)^2`` with
  ``w_j = 1 / var_j`` (variance with denominator n, computed as ``E[x^2] - E[x]^2``; a
  variable of variance 0 keeps weight 1); a coordinate missing in exactly one of the two
  records adds ``w_j (max_j - min_j)^2``, one missing in both adds 0. Each term is rounded to
  single precision and the terms are summed in single precision, in variable order (sdcMicro
  keeps its distances as ``float``), so equal distances are equal exactly as there;
* "farthest": the largest distance, the lowest record among equal ones; "the k nearest": the
  smallest distances, among equal ones the higher record first (sdcMicro's hash sort puts a
  later record before an earlier one at the same distance);
* the centroid of the remaining records: per variable, the mean of the present values, the sum
  rounded once from its exact value (sdcMicro sums in record order; for numbers whose sum is
  exact in double precision, such as integers below 2^53, the two agree exactly).

:func:`mdav_groups_plain` is the plain O(n^2 p / k) algorithm (the test oracle);
:func:`mdav_groups` gives the same groups while computing few distances per round: the records
ordered by their distance from an earlier centroid bound the farthest records (triangle
inequality, :class:`_Radii`), lists of nearest records from a k-d tree give the nearest ones
(:class:`_Nearest`), and double-precision distances decide wherever they are farther apart
than single-precision rounding can bridge (:class:`_Margin`). :func:`mdav_groups_blocked` runs
MDAV independently inside blocks of a k-d partition, all blocks at once (an approximation for
very large files).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "canonical_groups",
    "consecutive_groups",
    "distances32",
    "group_statistic",
    "group_size_counts",
    "kd_segments",
    "mdav_groups",
    "mdav_groups_blocked",
    "mdav_groups_plain",
    "mdav_weights",
    "onedims_groups",
    "order_keys",
    "pca_order",
    "rmd_groups",
    "sse_sst",
    "standardised",
]

_LOW32 = np.int64(0xFFFFFFFF)
_NO_KEY_MIN = np.iinfo(np.int64).max


# ----------------------------------------------------------------------------------------------
# the MDAV distance
# ----------------------------------------------------------------------------------------------
def mdav_weights(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sdcMicro's MDAV weights ``w_j = 1 / var_j`` and missing-value distances
    ``w_j (max_j - min_j)^2`` (single precision) over the present values of each column.

    The variance is ``E[x^2] - E[x]^2`` with both means summed in record order, as sdcMicro
    computes it; a variance of 0 (or a negative one from cancellation) keeps the weight 1.
    """
    p = X.shape[1]
    w = np.ones(p)
    md = np.zeros(p, dtype=np.float32)
    for j in range(p):
        v = X[:, j]
        v = v[~np.isnan(v)]
        if not v.size:
            continue
        avr = float(np.cumsum(v)[-1]) / v.size  # sequential sums, as sdcMicro
        sq = float(np.cumsum(v * v)[-1]) / v.size
        var = sq - avr * avr
        if var > 0:
            w[j] = 1.0 / var
        md[j] = np.float32((float(v.max()) - float(v.min())) ** 2 * w[j])
    return w, md


def distances32(cols: np.ndarray, q: np.ndarray, w: np.ndarray, md: np.ndarray, missing: bool = True) -> np.ndarray:
    """Single-precision MDAV distances from ``q`` (p,) to records given variable-first,
    ``cols`` of shape (p, ...) (or from one point per row: ``q`` broadcastable to ``cols``):
    each term ``fl32((x_j - q_j)^2 w_j)`` added in single precision
    in variable order; a coordinate missing in exactly one of the two adds ``md_j``, one missing
    in both adds 0. ``missing=False`` promises that neither ``cols`` nor ``q`` has a NaN."""
    shape = (-1,) + (1,) * (cols.ndim - 1)
    q = q.reshape(shape) if q.ndim == 1 else q
    d = cols - q
    t = (d * d * w.reshape(shape)).astype(np.float32)
    if missing:
        ym, qm = np.isnan(cols), np.isnan(q)
        t = np.where(ym ^ qm, md.reshape(shape), np.where(ym & qm, np.float32(0.0), t))
    acc = t[0].copy()
    for j in range(1, t.shape[0]):
        acc += t[j]
    return acc


def order_keys(d32: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """One int64 key per record for MDAV's orders: ascending keys put the nearer record first
    and, at equal distance, the higher record first; the largest key is the farthest record and,
    at equal distance, the lowest one. (The bits of a non-negative single-precision number
    order as the number does.)"""
    bits = np.ascontiguousarray(d32, dtype=np.float32).view(np.int32).astype(np.int64)
    return (bits << 32) | (_LOW32 - ids.astype(np.int64))


def _key_id(key) -> int:
    return int(_LOW32 - (np.int64(key) & _LOW32))


def _key_distance(key) -> np.float32:
    return np.array([np.int64(key) >> 32], dtype=np.int64).astype(np.int32).view(np.float32)[0]


# ----------------------------------------------------------------------------------------------
# the centroid: exact column sums, rounded once
# ----------------------------------------------------------------------------------------------
def _fsum_centroid(A: np.ndarray) -> np.ndarray:
    """Per column: the correctly rounded sum of the present values (``math.fsum``) divided by
    their count; NaN when none is present."""
    out = np.full(A.shape[1], np.nan)
    for j in range(A.shape[1]):
        v = A[:, j]
        v = v[~np.isnan(v)]
        if v.size:
            out[j] = math.fsum(v.tolist()) / v.size
    return out


def _int_to_float(total: int, base: int) -> float:
    """``total * 2**base`` correctly rounded (integer division is correctly rounded)."""
    if base >= 0:
        return float(total << base)
    return total / (1 << -base)


class _ExactSums:
    """Exact column sums of a shrinking set of records: every value is an integer multiple of
    ``2**base_j`` (its column's smallest exponent), so the sums are Python integers and the
    centroid equals :func:`_fsum_centroid` of the same records bit for bit."""

    def __init__(self, X: np.ndarray) -> None:
        present = ~np.isnan(X)
        mant, expo = np.frexp(np.where(present, X, 0.0))
        mant = (mant * 2.0**53).astype(np.int64)
        expo = expo.astype(np.int64) - 53
        nz = mant != 0
        p = X.shape[1]
        self.base = [int(expo[nz[:, j], j].min()) if nz[:, j].any() else 0 for j in range(p)]
        shift = np.where(nz, expo - np.asarray(self.base, dtype=np.int64), 0)
        ints = mant.astype(object) << shift.astype(object)
        self.rows = ints.tolist()
        self.sums = [sum(ints[:, j].tolist()) for j in range(p)]
        self.counts = present.sum(axis=0).tolist()
        self.present = None if present.all() else present.tolist()

    def remove(self, ids: np.ndarray) -> None:
        sums, counts, p = self.sums, self.counts, len(self.sums)
        for i in ids.tolist():
            row = self.rows[i]
            pres = self.present[i] if self.present is not None else None
            for j in range(p):
                sums[j] -= row[j]
                if pres is None or pres[j]:
                    counts[j] -= 1

    def centroid(self) -> np.ndarray:
        return np.array(
            [_int_to_float(s, b) / c if c else np.nan for s, b, c in zip(self.sums, self.base, self.counts)]
        )


# ----------------------------------------------------------------------------------------------
# MDAV: the plain algorithm (oracle)
# ----------------------------------------------------------------------------------------------
def mdav_groups_plain(X: np.ndarray, k: int, metric: tuple | None = None) -> np.ndarray:
    """MDAV groups by the plain algorithm, O(n^2 p / k): every round recomputes the distances
    of all remaining records (the reference the fast version is tested against).

    While at least 3k records remain: r = the record farthest from their centroid, s = the record
    farthest from r; the group of r = the k records nearest to r, removed; the group of s = the k
    records nearest to s among those left, removed. With 2k to 3k - 1 left, one group around
    the record farthest from the centroid; the last k to 2k - 1 records form the last group.
    ``metric``: the weights and missing-value distances to use instead of those of X
    (:func:`mdav_weights`).
    """
    n = X.shape[0]
    w, md = metric if metric is not None else mdav_weights(X)
    missing = bool(np.isnan(X).any())
    active = np.arange(n)
    gid = np.full(n, -1, dtype=np.int64)
    g = 0
    while active.size >= 2 * k:
        A = X[active]
        c = _fsum_centroid(A)
        kc = order_keys(distances32(A.T, c, w, md, missing), active)
        ref = X[active[int(np.argmax(kc))]].copy()
        for _ in range(2 if active.size >= 3 * k else 1):
            keys = order_keys(distances32(X[active].T, ref, w, md, missing), active)
            far = X[active[int(np.argmax(keys))]].copy()
            take = np.argsort(keys, kind="stable")[:k]
            gid[active[take]] = g
            g += 1
            active = np.delete(active, take)
            ref = far
    gid[active] = g
    return canonical_groups(gid)


# ----------------------------------------------------------------------------------------------
# k-d partition into small blocks
# ----------------------------------------------------------------------------------------------
def kd_segments(Z: np.ndarray, leaf: int) -> tuple[np.ndarray, np.ndarray]:
    """A k-d partition of the rows of ``Z`` (finite): segments are halved (by size, around the
    median found by ``np.argpartition``) along their widest coordinate until none has more than
    ``leaf`` rows. Returns the row order ``perm`` and the segment starts (segment s is
    ``perm[starts[s]:starts[s + 1]]``)."""
    m = Z.shape[0]
    perm = np.arange(m)
    starts, stack = [], [(0, m)]
    while stack:
        a, b = stack.pop()
        if b - a <= leaf:
            starts.append(a)
            continue
        seg = perm[a:b]
        P = Z[seg]
        dim = int(np.argmax(P.max(axis=0) - P.min(axis=0)))
        half = (b - a) // 2
        perm[a:b] = seg[np.argpartition(P[:, dim], half)]
        stack += [(a + half, b), (a, a + half)]
    return perm, np.array(sorted(starts), dtype=np.int64)


def _standardised_for_partition(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    mean = np.nanmean(np.where(np.isnan(X).all(axis=0), 0.0, X), axis=0) if X.size else np.zeros(X.shape[1])
    Z = (X - mean) * np.sqrt(w)
    return np.where(np.isnan(Z), 0.0, Z)


# ----------------------------------------------------------------------------------------------
# MDAV: the block index
# ----------------------------------------------------------------------------------------------
class _Margin:
    """Exact MDAV orders from double-precision distances. T (the weighted sum of squares in
    double precision) is within (p + 1) 2^-24 of the single-precision distance, so a record
    whose T is beyond ``delta = (p + 4) 2^-23`` of the best cannot be, or tie, the answer; the
    single-precision keys are computed only for the records within that margin."""

    def __init__(self, X: np.ndarray, w: np.ndarray, md: np.ndarray, missing: bool) -> None:
        self.X, self.w, self.md, self.missing = X, w, md, missing
        self.md64 = md.astype(np.float64)
        self.delta = (X.shape[1] + 4) * 2.0**-23
        self.tiny = (X.shape[1] + 1) * 2.0**-149
        self.big = float(np.finfo(np.float32).max) * (1.0 - 2.0 * self.delta)

    def d64(self, ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        """T from q to the records ``ids``."""
        return self.rows64(self.X[ids], q)

    def rows64(self, A: np.ndarray, q: np.ndarray) -> np.ndarray:
        """T from q to the rows of A."""
        d = A - q
        d *= d
        if not self.missing:
            return d @ self.w
        d *= self.w
        am, qm = np.isnan(A), np.isnan(q)
        return np.where(am ^ qm, self.md64, np.where(am & qm, 0.0, d)).sum(axis=1)

    def low(self, best: float) -> float:
        """Below this, a T cannot reach (or tie) a single-precision distance whose T is best."""
        return min(best * (1.0 - 2.0 * self.delta) - self.tiny, self.big)

    def high(self, best: float) -> float:
        """Above this, a T cannot reach (or tie) a single-precision distance whose T is best."""
        h = best * (1.0 + 2.0 * self.delta) + self.tiny
        return np.inf if h >= self.big else h

    def _keys(self, ids: np.ndarray, q: np.ndarray) -> np.ndarray:
        return order_keys(distances32(self.X[ids].T, q, self.w, self.md, self.missing), ids)

    def farthest(self, ids: np.ndarray, d: np.ndarray, q: np.ndarray) -> tuple[int, float]:
        """The farthest of ``ids`` (T ``d``) from q, exactly (lowest record at equal distance),
        and its T."""
        i = int(np.argmax(d))
        win = d >= self.low(float(d[i]))
        if np.count_nonzero(win) > 1:
            i = int(np.flatnonzero(ids == _key_id(self._keys(ids[win], q).max()))[0])
        return int(ids[i]), float(d[i])

    def nearest(self, ids: np.ndarray, d: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
        """The k nearest of ``ids`` (T ``d``) to q, exactly (higher record first at equal
        distance)."""
        win = d <= self.high(float(np.partition(d, k - 1)[k - 1]))
        if np.count_nonzero(win) == k:
            return ids[win]
        keys = self._keys(ids[win], q)
        return _LOW32 - (keys[np.argpartition(keys, k - 1)[:k]] & _LOW32)


class _Radii:
    """The remaining records by their distance from the centroid, which moves a little every
    round, to find the records farthest from the centroid and from a record.

    At a reset, the distances ``rho_i = sqrt(T(x_i, c0))`` (double precision, T the exact
    weighted sum of squares) of the remaining records from the centroid c0 are kept in
    decreasing order. For a later centroid c, ``|sqrt(T(x, c)) - rho| <= drift =
    sqrt(sum_j w_j (c_j - c0_j)^2)`` and ``sqrt(T(x, y)) <= sqrt(T(x, c)) + sqrt(T(c, y))`` (the
    triangle inequality; it holds coordinate by coordinate, also where a value is missing), so
    only a leading part of that order can hold the farthest record; only those records are
    evaluated. A reset happens when that part grows too long for the centroid query.
    """

    def __init__(self, margin: _Margin, alive: np.ndarray) -> None:
        self.m, self.alive = margin, alive
        self.ids = np.zeros(0, dtype=np.int64)
        self.neg = np.zeros(0)
        self.c0 = np.zeros(margin.X.shape[1])
        self.head, self.drift, self.t_r, self.tied = 0, 0.0, 0.0, 0

    def reset(self, c: np.ndarray) -> None:
        ids = np.flatnonzero(self.alive)
        t = self.m.d64(ids, c)
        order = np.argsort(-t, kind="stable")
        self.ids, self.neg, self.c0, self.head = ids[order], -np.sqrt(t[order]), c.copy(), 0
        self.rows = self.m.X[self.ids]  # the records in this order: slices need no gathering
        self.tied = self._window(c) - self.head  # ties at the top do not shrink with a reset

    def _end(self, reach: float) -> int:
        """The end of the records whose rho is at least ``reach`` (they start at ``head``)."""
        return int(np.searchsorted(self.neg, -reach * (1.0 - 1e-12), side="right"))

    def _window(self, c: np.ndarray) -> int:
        while not self.alive[self.ids[self.head]]:
            self.head += 1
        diff = np.where(np.isnan(c), 0.0, c - self.c0) if self.m.missing else c - self.c0
        self.drift = math.sqrt(float(diff * diff @ self.m.w)) * (1.0 + 1e-9) + 1e-150
        top = -float(self.neg[self.head])
        return self._end((top - self.drift) * (1.0 - 2.0 * self.m.delta) - self.drift)

    def _slice(self, a: int, b: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Records a..b of the order and their T from q (-inf for removed records)."""
        ids = self.ids[a:b]
        d = self.m.rows64(self.rows[a:b], q)
        d[~self.alive[ids]] = -np.inf
        return ids, d

    def farthest(self, c: np.ndarray) -> int:
        """The remaining record farthest from the centroid c (the lowest one at equal
        distance)."""
        if not self.ids.size or (self.m.missing and not np.array_equal(np.isnan(c), np.isnan(self.c0))):
            self.reset(c)
        end = self._window(c)
        if end - self.head > max(64, (self.ids.size - self.head) // 64, 4 * self.tied):
            self.reset(c)
            end = self._window(c)
        r, self.t_r = self.m.farthest(*self._slice(self.head, end, c), c)
        return r

    def farthest_from(self, r: int, c: np.ndarray) -> int:
        """The remaining record farthest from record r (the lowest one at equal distance),
        right after :meth:`farthest` with the same centroid c. The records leading the order
        (about 8 sqrt(m) of the m left) set the bar; then every record whose rho can reach it
        is evaluated."""
        q, head = self.m.X[r], self.head
        first = min(head + max(256, 8 * math.isqrt(int(self.neg.size - head))), self.neg.size)
        ids, d = self._slice(head, first, q)
        rq = math.sqrt(self.t_r)  # T(r, c), from :meth:`farthest`
        end = self._end(math.sqrt(max(self.m.low(float(d.max())), 0.0)) - rq - self.drift)
        if end > first:
            more, dm = self._slice(first, end, q)
            ids, d = np.concatenate([ids, more]), np.concatenate([d, dm])
        return self.m.farthest(ids, d, q)[0]


def _embedding(X: np.ndarray, w: np.ndarray, md: np.ndarray) -> np.ndarray:
    """Coordinates whose Euclidean distance E never exceeds T and is T for complete records:
    ``sqrt(w_j) x_j`` (a missing value at the middle of the column's range), and for a column
    with missing values a second coordinate, 0 if present and ``sqrt(0.7 md_j)`` if missing.
    A term of a value missing on one side is then ``w_j (x_j - mid_j)^2 + 0.7 md_j``, between
    0.7 md_j and 0.95 md_j (as ``|x_j - mid_j|`` is at most half the range), below its md_j."""
    present = ~np.isnan(X)
    some = present.any(axis=0)
    lo = np.where(some, np.fmin.reduce(X, axis=0), 0.0)
    hi = np.where(some, np.fmax.reduce(X, axis=0), 0.0)
    Z = np.where(present, X, (lo + hi) / 2) * np.sqrt(w)
    holes = ~present.all(axis=0)
    if not holes.any():
        return Z
    return np.hstack([Z, np.where(present[:, holes], 0.0, np.sqrt(0.7 * md[holes]))])


class _Nearest:
    """The k remaining records nearest to a record, from lists of each record's nearest
    records.

    A k-d tree (SciPy's ``cKDTree``) of the records in coordinates whose Euclidean distance E
    is at most T (:func:`_embedding`; E = T for complete records) gives each record's K nearest
    by E; the list keeps them in MDAV's order (single-precision distance, the higher record
    first at equal distance) as far as that order is certain: up to the last record whose
    distance is below the K-th E by more than the margin, so that no record outside the list
    can come before them or tie with them. The k nearest remaining records of r are then the first k remaining ones of its list
    when it has k; otherwise the tree gives k remaining records near r, and then every record
    within the margin of the k-th of them (a ball query), among which the order is exact.
    """

    def __init__(self, margin: _Margin, alive: np.ndarray, K: int = 16, chunk: int = 8192) -> None:
        from scipy.spatial import cKDTree

        X, w, md = margin.X, margin.w, margin.md
        n = X.shape[0]
        self.m, self.alive, self.K = margin, alive, min(K, n)
        self.Z = _embedding(X, w, margin.md64)
        self.tree = cKDTree(self.Z)
        self.lists = np.empty((n, self.K), dtype=np.int64)
        self.lengths = np.empty(n, dtype=np.int64)
        for a in range(0, n, chunk):
            rows = np.arange(a, min(a + chunk, n))
            dist, nn = self.tree.query(self.Z[rows], self.K, workers=-1)
            nn = nn.reshape(rows.size, self.K)
            cols, refs = np.moveaxis(X[nn], -1, 0), np.moveaxis(X[rows], -1, 0)[:, :, None]
            keys = np.sort(order_keys(distances32(cols, refs, w, md, margin.missing), nn), axis=1)
            self.lists[rows] = _LOW32 - (keys & _LOW32)
            d32 = (keys >> 32).astype(np.int32).view(np.float32)
            limit = self._limit(dist.reshape(rows.size, self.K)[:, -1])
            self.lengths[rows] = (d32 < limit[:, None]).sum(axis=1)

    def _limit(self, kth_dist):
        """Single-precision distances below this come before every record whose E is at least
        ``kth_dist`` (a tree distance)."""
        if self.K == self.m.X.shape[0]:
            return np.full(np.shape(kth_dist), np.inf)
        return np.asarray(kth_dist) ** 2 * (1.0 - 2.0 * self.m.delta) - self.m.tiny

    def nearest(self, r: int, k: int) -> np.ndarray:
        """The k remaining records nearest to record r (the higher one first at equal
        distance)."""
        lst = self.lists[r, : self.lengths[r]]
        lst = lst[self.alive[lst]]
        if lst.size >= k:
            return lst[:k]
        q, K, n = self.m.X[r], 4 * self.K, self.m.X.shape[0]
        cand = self.lists[r][self.alive[self.lists[r]]]  # the whole list, certain or not
        while cand.size < k:  # k remaining records near r, then every record as near as the k-th
            K = min(K, n)
            ids = np.atleast_1d(self.tree.query(self.Z[r], K)[1])
            cand = ids[self.alive[ids]]
            if K == n:
                break
            K *= 4
        high = self.m.high(float(np.partition(self.m.d64(cand, q), k - 1)[k - 1]))
        ids = np.asarray(self.tree.query_ball_point(self.Z[r], math.sqrt(high) * (1.0 + 1e-9) + 1e-300), dtype=np.int64)
        cand = ids[self.alive[ids]]
        return self.m.nearest(cand, self.m.d64(cand, q), q, k)


def mdav_groups(X: np.ndarray, k: int, neighbours: int = 16) -> np.ndarray:
    """MDAV groups (the groups of :func:`mdav_groups_plain`, found with less work).

    Each round needs the record r farthest from the centroid and the record farthest from r
    (:class:`_Radii`), and twice the k records nearest to a record (:class:`_Nearest`, with
    lists of ``neighbours`` records); each is found exactly while computing the distances of
    few records. The centroid comes from exact column sums updated as groups leave
    (:class:`_ExactSums`). ``neighbours`` changes the speed, never the groups.
    """
    n = X.shape[0]
    if n < 2 * k:  # one group (none for no records)
        return np.zeros(n, dtype=np.int64)
    w, md = mdav_weights(X)
    margin = _Margin(X, w, md, bool(np.isnan(X).any()))
    alive = np.ones(n, dtype=bool)
    sums, radii = _ExactSums(X), _Radii(margin, alive)
    near = _Nearest(margin, alive, neighbours)
    gid = np.full(n, -1, dtype=np.int64)
    g, left = 0, n
    while left >= 2 * k:
        c = sums.centroid()
        r = radii.farthest(c)
        s = radii.farthest_from(r, c) if left >= 3 * k else -1
        for ref in (r, s) if s >= 0 else (r,):
            grp = near.nearest(ref, k)
            gid[grp] = g
            g += 1
            alive[grp] = False
            sums.remove(grp)
            left -= k
    gid[alive] = g
    return canonical_groups(gid)


def canonical_groups(gid: np.ndarray) -> np.ndarray:
    """Group numbers renumbered 0, 1, ... in the order of each group's first record (-1 kept)."""
    out = np.full(gid.shape, -1, dtype=np.int64)
    ok = gid >= 0
    if not ok.any():
        return out
    u, first = np.unique(gid[ok], return_index=True)
    rank = np.empty(u.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(u.size)
    out[ok] = rank[np.searchsorted(u, gid[ok])]
    return out


# ----------------------------------------------------------------------------------------------
# MDAV inside blocks (fast variant for very large files)
# ----------------------------------------------------------------------------------------------
def mdav_groups_blocked(X: np.ndarray, k: int, block: int = 128) -> np.ndarray:
    """MDAV run independently inside the blocks of a k-d partition of the records (halved
    along their widest standardised coordinate until at most ``block`` records are left, so
    blocks hold ``block / 2`` to ``block`` records), all blocks at once.

    Same distance and order rules as :func:`mdav_groups` (one set of weights for all blocks);
    the centroid of a block is its plain double-precision mean. Groups never cross a block
    border, so the loss (SSE) is somewhat above MDAV's on the whole file; the work is
    O(n p block / k) instead of about O(n^2 p / k).
    """
    n = X.shape[0]
    w, md = mdav_weights(X)
    missing = bool(np.isnan(X).any())
    perm, starts = kd_segments(_standardised_for_partition(X, w), max(block, 2 * k))
    sizes = np.diff(np.append(starts, n))
    G, L = starts.size, int(sizes.max())
    seg = np.repeat(np.arange(G), sizes)
    ids = np.full((G, L), -1, dtype=np.int64)
    ids[seg, np.arange(n) - starts[seg]] = perm
    ids = np.sort(np.where(ids < 0, n, ids), axis=1)  # record order inside a block (ties)
    alive = ids < n
    ids[~alive] = -1
    gid = np.full(n, -1, dtype=np.int64)
    g = 0
    while True:
        m = alive.sum(axis=1)
        act = m >= 2 * k
        if not act.any():
            break
        ids, alive = _compact(ids, alive)
        V = np.where(alive[None], X[ids.clip(0)].transpose(2, 0, 1), np.nan)
        slots = np.broadcast_to(np.arange(ids.shape[1]), ids.shape)
        c = _block_means(V, alive)
        ref = _block_argmax(distances32(V, c[:, :, None], w, md, missing), slots, alive)
        two = m >= 3 * k
        rows = np.arange(G)
        for step in range(2):
            sel = act if step == 0 else two
            d = distances32(V, V[:, rows, ref][:, :, None], w, md, missing)
            keys = np.where(alive, order_keys(d, slots), _NO_KEY_MIN)
            far = _block_argmax(d, slots, alive)
            near = np.argpartition(keys, k - 1, axis=1)[:, :k]
            r = np.flatnonzero(sel)
            gid[ids[r[:, None], near[r]]] = g + np.arange(r.size)[:, None]
            g += r.size
            alive[r[:, None], near[r]] = False
            V[:, r[:, None], near[r]] = np.nan
            ref = far
    left = np.flatnonzero(alive.any(axis=1))
    gid[ids[alive]] = g + np.searchsorted(left, np.nonzero(alive)[0])
    return canonical_groups(gid)


def _compact(ids: np.ndarray, alive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Remaining records first in every block (in record order), empty tail columns cut."""
    order = np.argsort(~alive, axis=1, kind="stable")
    ids, alive = np.take_along_axis(ids, order, axis=1), np.take_along_axis(alive, order, axis=1)
    width = max(int(alive.sum(axis=1).max()), 1)
    return ids[:, :width], alive[:, :width]


def _block_means(V: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Per block and variable, the mean of the remaining present values (p, blocks)."""
    ok = ~np.isnan(V)
    total = np.where(ok, V, 0.0).sum(axis=2)
    count = ok.sum(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _block_argmax(d: np.ndarray, slots: np.ndarray, alive: np.ndarray) -> np.ndarray:
    """Per block, the slot of the remaining record farthest away (the lowest at equal
    distance)."""
    return np.argmax(np.where(alive, order_keys(d, slots), -1), axis=1)


# ----------------------------------------------------------------------------------------------
# the sort-based methods
# ----------------------------------------------------------------------------------------------
def consecutive_groups(order: np.ndarray, k: int, n: int) -> np.ndarray:
    """Groups of k consecutive records of ``order`` (sdcMicro's ``indexMicro``): when k does
    not divide their number m, the last group takes the remainder (k + m mod k records); with
    fewer than 2k records, one group. Records not in ``order`` get -1."""
    gid = np.full(n, -1, dtype=np.int64)
    gid[order] = np.minimum(np.arange(order.size) // k, max(order.size // k, 1) - 1)
    return gid


def onedims_groups(x: np.ndarray, k: int) -> np.ndarray:
    """Individual ranking of one variable: its present values sorted (a stable sort: equal
    values keep their record order), then :func:`consecutive_groups`; a missing value gets -1."""
    ok = np.flatnonzero(~np.isnan(x))
    order = ok[np.argsort(x[ok], kind="stable")]
    return canonical_groups(consecutive_groups(order, k, x.size))


def standardised(X: np.ndarray) -> np.ndarray:
    """(x - mean) / sd per column (sd with denominator n - 1, over the present values; a
    constant column gives 0); a missing value becomes 0 (the mean)."""
    mean = np.array([np.mean(c[~np.isnan(c)]) if (~np.isnan(c)).any() else 0.0 for c in X.T])
    sd = np.array([np.std(c[~np.isnan(c)], ddof=1) if (~np.isnan(c)).sum() > 1 else 0.0 for c in X.T])
    Z = (X - mean) / np.where(sd > 0, sd, 1.0)
    return np.where(np.isnan(Z), 0.0, Z)


def pca_order(X: np.ndarray) -> np.ndarray:
    """Records sorted (stably) on their score on the first principal component of the
    standardised variables (the eigenvector of the largest eigenvalue of their correlation
    matrix, signed so that its loadings sum to a positive number; missing values count as the
    mean)."""
    Z = standardised(X)
    vals, vecs = np.linalg.eigh(Z.T @ Z / max(Z.shape[0], 1))
    v = vecs[:, -1]
    total = float(v.sum())
    if total < 0 or (total == 0 and v[np.flatnonzero(v)[0]] < 0):
        v = -v
    score = np.zeros(Z.shape[0])
    for j in range(Z.shape[1]):  # in variable order: equal records get equal scores
        score += Z[:, j] * v[j]
    return np.argsort(score, kind="stable")


def rmd_groups(X: np.ndarray, k: int, robust_distances: np.ndarray) -> np.ndarray:
    """sdcMicro's ``rmd`` grouping (Templ & Meindl 2008): the remaining record with the
    largest robust Mahalanobis distance (the lowest record at equal distance) and its k - 1
    nearest remaining records (Euclidean distance on the standardised variables, the lowest
    record at equal distance; the record itself is at distance 0) form a group, until fewer
    than 2k records remain; they form the last group. O(n^2 p / k)."""
    n = X.shape[0]
    Z = standardised(X)
    alive = np.ones(n, dtype=bool)
    gid = np.full(n, -1, dtype=np.int64)
    seeds = np.argsort(-robust_distances, kind="stable")
    at = 0
    for g in range(max(n // k - 1, 0)):
        while not alive[seeds[at]]:
            at += 1
        ids = np.flatnonzero(alive)
        acc = np.zeros(ids.size)
        for j in range(Z.shape[1]):  # R's dist(): squares added in variable order
            dev = Z[ids, j] - Z[seeds[at], j]
            acc += dev * dev
        take = ids[np.lexsort((ids, np.sqrt(acc)))[:k]]
        gid[take] = g
        alive[take] = False
    gid[alive] = max(n // k - 1, 0)
    return canonical_groups(gid)


# ----------------------------------------------------------------------------------------------
# group values and loss
# ----------------------------------------------------------------------------------------------
def group_statistic(X: np.ndarray, gid: np.ndarray, statistic: str = "mean") -> np.ndarray:
    """Every present value replaced by the mean (or median) of the present values of its
    group in that variable; missing values stay missing; records with group -1 unchanged."""
    out = X.copy()
    G = int(gid.max()) + 1 if gid.size else 0
    for j in range(X.shape[1]):
        ok = (gid >= 0) & ~np.isnan(X[:, j])
        g, v = gid[ok], X[ok, j]
        cnt = np.bincount(g, minlength=G)
        if statistic == "mean":
            val = np.bincount(g, weights=v, minlength=G) / np.maximum(cnt, 1)
        else:
            v = v[np.lexsort((v, g))]
            start, has = np.cumsum(cnt) - cnt, cnt > 0
            val = np.full(G, np.nan)
            val[has] = (v[start[has] + (cnt[has] - 1) // 2] + v[start[has] + cnt[has] // 2]) / 2
        out[ok, j] = val[g]
    return out


def group_size_counts(gid: np.ndarray) -> dict[int, int]:
    """{group size: number of groups} over the groups of ``gid`` (-1 left out)."""
    sizes = np.bincount(gid[gid >= 0]) if (gid >= 0).any() else np.zeros(0, dtype=np.int64)
    values, counts = np.unique(sizes[sizes > 0], return_counts=True)
    return {int(s): int(c) for s, c in zip(values, counts)}


def sse_sst(X: np.ndarray, Xn: np.ndarray) -> tuple[float, float]:
    """Information loss of microaggregation on the standardised variables, over the present
    values: ``SSE = sum_j sum_i (x_ij - x'_ij)^2 / var_j`` and ``SST = sum_j sum_i
    (x_ij - mean_j)^2 / var_j`` (variance with denominator n; constant variables left out)."""
    sse = sst = 0.0
    for j in range(X.shape[1]):
        ok = ~np.isnan(X[:, j])
        x = X[ok, j]
        var = float(x.var()) if x.size else 0.0
        if var > 0:
            sse += float(((x - Xn[ok, j]) ** 2).sum()) / var
            sst += float(((x - x.mean()) ** 2).sum()) / var
    return sse, sst
