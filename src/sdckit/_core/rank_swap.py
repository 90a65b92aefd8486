r"""Rank swapping (Moore 1996): pure NumPy kernels on one float vector.

Moore, R. A. (1996), "Controlled data-swapping techniques for masking public use microdata
sets", U.S. Bureau of the Census, Statistical Research Division Report Series RR 96-04.

For one variable with m observed values, sorted from the largest to the smallest:

1. pooling: the largest ``floor(m t / 100)`` values (t = ``top_percent``) are replaced by
   their mean, and so are the smallest ``floor(m b / 100)`` values (b = ``bottom_percent``);
   pooled values take no further part;
2. the swap range P (a share of the m' values left) is given, or follows from the target
   correlation ratio R0 or the subset-mean preservation factor K0 (Moore 1996, as sdcMicro's
   ``rankSwap`` computes them):

   P = sqrt(2 Var (1 - R0)) / D        or        P = sqrt(8/3) K0 |mean| / D,

   with the mean and the variance (denominator m') of the m' values left and D = |top
   threshold - bottom threshold| (the smallest pooled top value, or the largest value when
   nothing is pooled at the top; the largest pooled bottom value, or the smallest value);
3. the m' values are visited in rank order (largest first); a value not yet swapped is
   swapped with one drawn uniformly among the values not yet swapped whose rank lies within
   (rank, rank + W], W = floor(P m'); a value with no such partner keeps its place.
"""

from __future__ import annotations

import math
from array import array

import numpy as np

from . import _rank_swap_jit

__all__ = [
    "pool_counts",
    "pool_tails",
    "range_from_k0",
    "range_from_r0",
    "swap_partners",
    "swap_partners_fast",
    "swap_values",
]

#: tolerance of floor() for counts that are whole numbers in exact arithmetic (m * 5 / 100)
_FLOOR_TOL = 1e-9
#: below this share of free candidates in the window the candidates are listed, not sampled by
#: rejection (at most about 8 draws per swap are rejected on average)
_REJECTION_SHARE = 8
_BLOCK = 1 << 16


def pool_counts(m: int, top_percent: float, bottom_percent: float) -> tuple[int, int]:
    """Number of values pooled at the top and at the bottom of m: floor(m t / 100), floor(m b / 100)."""
    top = int(math.floor(m * top_percent / 100.0 + _FLOOR_TOL))
    bottom = int(math.floor(m * bottom_percent / 100.0 + _FLOOR_TOL))
    return min(top, m), min(bottom, m - min(top, m))


def pool_tails(v: np.ndarray, top: int, bottom: int) -> tuple[np.ndarray, float, float]:
    """Pool the tails of ``v`` (sorted from the largest to the smallest): the first ``top``
    values and the last ``bottom`` values are each replaced by their mean.

    Returns the pooled copy and the thresholds (top threshold, bottom threshold) of the range
    derivation: v[top - 1] (v[0] when top = 0) and v[m - bottom] (v[m - 1] when bottom = 0).
    """
    v = np.asarray(v, dtype=float)
    m = v.size
    out = v.copy()
    if m == 0:
        return out, math.nan, math.nan
    top_value = float(v[top - 1] if top else v[0])
    bottom_value = float(v[m - bottom] if bottom else v[m - 1])
    if top:
        out[:top] = v[:top].mean()
    if bottom:
        out[m - bottom :] = v[m - bottom :].mean()
    return out, top_value, bottom_value


def _moments(values: np.ndarray) -> tuple[float, float]:
    """Mean and variance (denominator = count) of the values; (0, 0) for none."""
    if values.size == 0:
        return 0.0, 0.0
    mean = float(values.mean())
    return mean, float(np.mean((values - mean) ** 2))


def range_from_r0(values: np.ndarray, r0: float, top_value: float, bottom_value: float) -> float:
    """Swap range P (a share) for a target correlation ratio R0: sqrt(2 Var (1 - R0)) / D,
    Var over the non-pooled ``values`` (denominator = count), D = |bottom - top threshold|;
    0 when D = 0."""
    d = abs(bottom_value - top_value)
    _, var = _moments(np.asarray(values, dtype=float))
    return math.sqrt(2.0 * var * (1.0 - r0)) / d if d > 0 else 0.0


def range_from_k0(values: np.ndarray, k0: float, top_value: float, bottom_value: float) -> float:
    """Swap range P (a share) for a subset-mean preservation factor K0: sqrt(8/3) K0 |mean| / D,
    mean over the non-pooled ``values``, D = |bottom - top threshold|; 0 when D = 0."""
    d = abs(bottom_value - top_value)
    mean, _ = _moments(np.asarray(values, dtype=float))
    return math.sqrt(8.0 / 3.0) * k0 * abs(mean) / d if d > 0 else 0.0


class _Uniforms:
    """Uniform draws on [0, 1) from the generator, taken ``block`` at a time."""

    __slots__ = ("block", "k", "rng", "u")

    def __init__(self, rng: np.random.Generator, block: int):
        self.rng, self.block = rng, block
        self.u, self.k = rng.random(block).tolist(), 0

    def next(self) -> float:
        try:
            x = self.u[self.k]
        except IndexError:
            self.u, self.k = self.rng.random(self.block).tolist(), 0
            x = self.u[0]
        self.k += 1
        return x


def _pick(done: bytearray, view: np.ndarray, i: int, hi: int, free: int, draws: _Uniforms) -> int:
    """A rank drawn uniformly among the ``free`` ranks not yet swapped in (i, hi]: by rejection
    (a drawn rank already swapped is redrawn: exact) while they are not rare, else by listing
    them."""
    span = hi - i
    if free * _REJECTION_SHARE >= span:
        nxt = draws.next
        while True:
            j = i + 1 + int(nxt() * span)
            if not done[j]:
                return j
    cand = np.flatnonzero(view[i + 1 : hi + 1] == 0)
    return i + 1 + int(cand[int(draws.next() * cand.size)])


def swap_partners(m: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """The swap partner of each of m ranks (itself when not swapped).

    Ranks are visited in order; a rank not yet swapped is paired with a rank drawn uniformly
    among those not yet swapped in (rank, rank + width]. The number of such ranks is kept as
    the window slides (a rank entering the window was beyond every earlier window, so it is
    free). O(m) expected draws; one Python step per rank (about 1 s per 10^6 ranks).
    """
    if m < 2 or width < 1:
        return np.arange(m, dtype=np.int64)
    partner = list(range(m))
    done = bytearray(m)
    view = np.frombuffer(done, dtype=np.uint8)
    draws = _Uniforms(rng, min(_BLOCK, 2 * m + 64))
    free = min(width, m - 1)  # ranks not yet swapped in the window (i, min(i + width, m - 1)]
    cut = m - 1 - width  # below it the window slides by a whole rank
    for i in range(m):
        if not done[i]:
            done[i] = 1
            if free:
                j = _pick(done, view, i, i + width if i < cut else m - 1, free, draws)
                done[j] = 1
                partner[i] = j
                partner[j] = i
                free -= 1
        if i < cut:
            free += done[i + 1]  # i + 1 leaves (-1 when free), i + 1 + width enters (+1)
        elif i + 1 < m and not done[i + 1]:
            free -= 1
    return np.asarray(partner, dtype=np.int64)


class _Stream:
    """The uniforms of :class:`_Uniforms` (same blocks, drawn as lazily), as lists: ``u`` the
    draws and ``d`` = 1 + floor(u * width), the rank offset of a draw in a full window."""

    __slots__ = ("block", "d", "rng", "u", "width")

    def __init__(self, rng: np.random.Generator, block: int, width: int):
        self.rng, self.block, self.width = rng, block, width
        self.refill()

    def refill(self) -> None:
        raw = self.rng.random(self.block)
        self.u = raw.tolist()
        self.d = ((raw * self.width).astype(np.int64) + 1).tolist()  # int(u * width) + 1


def swap_partners_fast(m: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`swap_partners` with the same draws and the same result (its tests compare the
    two), about 2-3 times faster: the loop visits only the ranks not yet swapped (the next one
    found by ``bytearray.find``) and keeps the count of free ranks in the window by the jump.

    With i the rank just paired and i' > i the next free one (the ranks between are swapped),
    the window (i', i' + W] holds the free ranks of (i', i + W] (those left in i's window but
    i') and every rank of (i + W, i' + W] (beyond every earlier window, so free). The last W
    ranks, whose window is cut at the end, take the plain step of :func:`swap_partners`.
    """
    if m < 2 or width < 1:
        return np.arange(m, dtype=np.int64)
    done = bytearray(m)
    view = np.frombuffer(done, dtype=np.uint8)
    draws = _Stream(rng, min(_BLOCK, 2 * m + 64), width)
    pairs = (array("q"), array("q"))
    i, k = 0, 0
    cut = m - 1 - width
    if cut > 0:
        i, k = _full_windows(done, view, draws, pairs, cut, width)
    if i < m:
        _cut_windows(done, view, draws, pairs, i, k, m)
    partner = np.arange(m, dtype=np.int64)
    a, b = (np.frombuffer(p, dtype=np.int64) for p in pairs)
    partner[a] = b
    partner[b] = a
    return partner


def _full_windows(done: bytearray, view: np.ndarray, draws: _Stream, pairs, cut: int, width: int) -> tuple[int, int]:
    """The ranks below ``cut`` (a full window of ``width`` ranks); returns the first rank at or
    above it that is not swapped and the draws used of the current block."""
    add_i, add_j = pairs[0].append, pairs[1].append
    find = done.find
    offsets = draws.d
    share = _REJECTION_SHARE
    threshold = -(-width // share) if share else width + 1  # free * share >= width: by rejection
    i, k, free = 0, 0, width
    while i < cut:
        try:
            while i < cut:
                done[i] = 1
                if free >= threshold:
                    j = i + offsets[k]
                    k += 1
                    while done[j]:
                        j = i + offsets[k]
                        k += 1
                elif free:
                    cand = np.flatnonzero(view[i + 1 : i + width + 1] == 0)
                    j = i + 1 + int(cand[int(draws.u[k] * cand.size)])
                    k += 1
                else:  # the whole window swapped: the next free rank has a free window
                    i = find(0, i + 1)
                    free = width
                    continue
                done[j] = 1
                add_i(i)
                add_j(j)
                nxt = find(0, i + 1)
                jump = nxt - i
                free += jump - 2 if jump <= width else width - 1  # (free - 1) + min(jump - 1, W)
                i = nxt
        except IndexError:  # the block is used up (nothing was changed by the failed draw)
            draws.refill()
            offsets, k = draws.d, 0
    return i, k


def _cut_windows(done: bytearray, view: np.ndarray, draws: _Stream, pairs, i: int, k: int, m: int) -> None:
    """The ranks from ``i`` (not swapped) on, whose window (i, m - 1] is cut at the end."""
    add_i, add_j = pairs[0].append, pairs[1].append
    free = m - 1 - i - int(np.count_nonzero(view[i + 1 :]))
    while True:
        done[i] = 1
        if free:
            span = m - 1 - i
            listing = free * _REJECTION_SHARE < span
            while True:
                try:
                    u = draws.u[k]
                except IndexError:
                    draws.refill()
                    k = 0
                    u = draws.u[0]
                k += 1
                if listing:
                    cand = np.flatnonzero(view[i + 1 :] == 0)
                    j = i + 1 + int(cand[int(u * cand.size)])
                    break
                j = i + 1 + int(u * span)
                if not done[j]:
                    break
            done[j] = 1
            add_i(i)
            add_j(j)
            free -= 1
        i = done.find(0, i + 1)
        if i < 0:
            return
        free -= 1


def _best_partners(m: int, width: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`swap_partners` by the fastest loop at hand: the compiled one when Numba is
    installed and worth its one-off cost (:func:`_rank_swap_jit.use_jit`), else
    :func:`swap_partners_fast`. All three give the same partners from the same draws."""
    if m >= 2 and width >= 1 and _rank_swap_jit.use_jit(m):
        return _rank_swap_jit.swap_partners_jit(m, width, rng, _REJECTION_SHARE, min(_BLOCK, 2 * m + 64))
    return swap_partners_fast(m, width, rng)


def swap_values(v: np.ndarray, width: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """Swap the values of ``v`` (sorted, largest first) within ``width`` ranks; returns the new
    values in rank order and the number of values that took part in a swap."""
    partner = _best_partners(v.size, width, rng)
    return np.asarray(v, dtype=float)[partner], int(np.count_nonzero(partner != np.arange(v.size)))
