"""Kernels of global recoding and top/bottom coding: interval break points, the interval of
each value, interval labels, category look-up tables and the cut of top/bottom coding.

Everything here works on float vectors (NaN = missing) and integer category codes (``-1`` =
missing). Global recoding and top/bottom coding are the classical non-perturbative methods of
statistical disclosure control (Hundepool et al. 2012, *Statistical Disclosure Control*, Wiley;
Templ, Kowarik and Meindl 2015, *J. Stat. Softw.* 67(4), the sdcMicro
functions ``globalRecode`` and ``topBotCoding``).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "equal_amount_breaks",
    "equidistant_breaks",
    "format_breaks",
    "interval_codes",
    "interval_labels",
    "log_equidistant_breaks",
    "recode_codes",
    "strictly_increasing",
    "tail_mask",
]


def _r_seq(start: float, stop: float, n_points: int) -> np.ndarray:
    """R's ``seq(start, stop, length.out = n_points)``: the end points exactly, the inner points
    ``start + i * ((stop - start) / (n_points - 1))``."""
    if n_points == 1:
        return np.array([start])
    step = (stop - start) / (n_points - 1)
    out = start + np.arange(n_points, dtype=np.float64) * step
    out[0], out[-1] = start, stop
    return out


def _rounded_if_distinct(breaks: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """The breaks rounded to integers (half to even, as R's ``round``) unless rounding makes two
    of them equal or leaves the smallest or largest value outside (lo, hi]."""
    r = np.round(breaks)
    if np.all(np.diff(r) > 0) and r[0] < lo and r[-1] >= hi:
        return r
    return breaks


def equidistant_breaks(lo: float, hi: float, n_intervals: int) -> np.ndarray:
    """``n_intervals + 1`` equally spaced break points from ``lo - 1`` to ``hi + 1`` (the
    smallest and largest value), rounded to integers unless rounding creates duplicates.

    b_l = (lo - 1) + l (hi - lo + 2) / B, l = 0..B; one interval (B = 1) is (lo - 1, hi + 1].
    """
    return _rounded_if_distinct(_r_seq(lo - 1.0, hi + 1.0, n_intervals + 1), lo, hi)


def log_equidistant_breaks(lo: float, hi: float, n_intervals: int) -> np.ndarray:
    """Equidistant breaks on the log scale, back-transformed: b_l = exp(c_l) with c_l equally
    spaced from log(lo) - 1 to log(hi) + 1 (``lo > 0``), then rounded as
    :func:`equidistant_breaks`."""
    b = np.exp(_r_seq(math.log(lo) - 1.0, math.log(hi) + 1.0, n_intervals + 1))
    return _rounded_if_distinct(b, lo, hi)


def equal_amount_breaks(x: np.ndarray, n_intervals: int) -> np.ndarray:
    """Empirical quantiles of the observed values ``x`` at p = 0, 1/B, ..., 1 (Hyndman and Fan
    1996, type 7, R's default: with h = 1 + (n - 1) p, q = (1 - f) x_(floor h) + f x_(ceil h),
    f = h - floor h), duplicated quantiles merged into one break.

    The first break is min(x) and the last max(x); with one distinct value the result is that
    value once (the caller makes it the closed interval [v, v]).
    """
    xs = np.sort(np.asarray(x, dtype=np.float64))
    n = xs.size
    p = np.arange(n_intervals + 1, dtype=np.float64) / n_intervals
    h = 1.0 + (n - 1) * p  # 1-based positions
    lo = np.floor(h).astype(np.int64)
    hi = np.ceil(h).astype(np.int64)
    q = xs[lo - 1].copy()
    f = h - lo
    inner = (h > lo) & (xs[hi - 1] != q)
    q[inner] = (1.0 - f[inner]) * q[inner] + f[inner] * xs[hi[inner] - 1]
    return np.unique(q)


def strictly_increasing(breaks: np.ndarray) -> int:
    """-1 when the breaks increase strictly, else the first position i with b_{i+1} <= b_i
    (b_{i+1} - b_i <= 0, as NumPy's ``diff`` computes it: a difference of two equal infinite
    breaks is NaN, not <= 0)."""
    b = np.asarray(breaks, dtype=np.float64)
    if b.size > _FEW_BREAKS:
        bad = np.flatnonzero(np.diff(b) <= 0)
        return int(bad[0]) if bad.size else -1
    values = b.tolist()  # a few breaks: Python floats, the same IEEE arithmetic without array calls
    for i in range(len(values) - 1):
        if values[i + 1] - values[i] <= 0:
            return i
    return -1


def interval_codes(x: np.ndarray, breaks: np.ndarray, closed_left: bool) -> np.ndarray:
    """The interval of each value: code l - 1 for b_{l-1} < x <= b_l (right-closed intervals,
    as R's ``cut``), the first interval also holding b_0 when ``closed_left``; -1 for a missing
    value (NaN) and -2 for a value outside every interval."""
    x = np.asarray(x, dtype=np.float64)
    b = np.asarray(breaks, dtype=np.float64)
    if b.size <= _FEW_BREAKS:
        # the number of breaks below each value (np.searchsorted's side="left"), counted by one
        # comparison per break: faster than a binary search per value when the breaks are few
        # (a NaN counts 0 here and len(b) there; it becomes -1 below either way)
        bs = b.tolist()
        below = (x > bs[0]).view(np.uint8)
        for v in bs[1:]:
            np.add(below, (x > v).view(np.uint8), out=below)
        codes = np.subtract(below, 1, dtype=np.int32)  # b[codes] < x <= b[codes + 1]
    else:
        codes = np.searchsorted(b, x, side="left").astype(np.int32)
        codes -= 1  # b[codes] < x <= b[codes + 1]
    if closed_left:
        np.putmask(codes, x == b[0], 0)
    n_int = max(b.size - 1, 1)
    np.putmask(codes, codes.view(np.uint32) >= n_int, -2)  # below 0 (as unsigned: huge) or beyond the last
    np.putmask(codes, np.isnan(x), -1)
    return codes


#: up to this many breaks, :func:`interval_codes` counts comparisons (the count fits a byte)
_FEW_BREAKS = 32


def _format_one(v: float, digits: int) -> str:
    if math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    return f"{v + 0.0:.{digits}g}"  # C's %.{digits}g; + 0.0: no "-0"


def format_breaks(breaks, digits: int = 8) -> list[str]:
    """The break points as text the way R's ``cut(dig.lab = 8)`` writes them: C's ``%.{d}g``
    (``formatC``) with d = 8, 9, ..., 12, the first d at which neighbouring breaks read
    differently; when none does, the shortest text that gives the number back."""
    b = [float(v) for v in breaks]
    for d in range(digits, max(12, digits) + 1):
        text = [_format_one(v, d) for v in b]
        if all(text[i] != text[i + 1] for i in range(len(text) - 1)):
            return text
    return [_format_one(v, 17) if math.isinf(v) else repr(v + 0.0) for v in b]


def interval_labels(breaks, closed_left: bool) -> list[str]:
    """R's ``cut`` labels: ``"(a,b]"`` per interval, the first ``"[a,b]"`` when it is closed on
    the left. One break v gives the single closed interval ``"[v,v]"``."""
    return list(_interval_labels(tuple(np.asarray(breaks, dtype=np.float64).tolist()), bool(closed_left)))


@functools.lru_cache(maxsize=256)
def _interval_labels(breaks: tuple, closed_left: bool) -> tuple[str, ...]:
    """:func:`interval_labels` of a tuple of breaks, made once per set of breaks (0.0 and -0.0,
    which the cache does not tell apart, are written alike)."""
    text = format_breaks(breaks)
    if len(text) == 1:
        return (f"[{text[0]},{text[0]}]",)
    labels = [f"({a},{b}]" for a, b in zip(text[:-1], text[1:])]
    if closed_left:
        labels[0] = "[" + labels[0][1:]
    return tuple(labels)


def recode_codes(codes: np.ndarray, lut: np.ndarray, renamed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Apply a category look-up table: new code ``lut[c]`` for old code c (-1 stays -1), and
    the mask of records whose category was renamed (``renamed[c]``)."""
    codes = np.asarray(codes)
    valid = codes >= 0
    safe = np.where(valid, codes, 0)
    lut = np.asarray(lut, dtype=np.int64)
    renamed = np.asarray(renamed, dtype=bool)
    if lut.size == 0:
        return np.full(codes.shape, -1, dtype=np.int64), np.zeros(codes.shape, dtype=bool)
    new = np.where(valid, lut[safe], -1)
    return new, valid & renamed[safe]


def tail_mask(x: np.ndarray, value: float, top: bool) -> np.ndarray:
    """The values beyond the cut: x > value (top) or x < value (bottom); NaN is never beyond."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return x > value if top else x < value
