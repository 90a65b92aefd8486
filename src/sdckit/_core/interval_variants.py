"""Interval disclosure with rank-based and entropy-based intervals.

Both take the original matrix ``x`` and the protected matrix ``y`` (n x p, NaN = missing; a
comparison with a missing value is skipped and counts as inside, as in sdcMicro's ``dRisk``)
and return, per record and variable, whether the original value lies inside its interval.

* Rank intervals (Domingo-Ferrer, Mateo-Sanz & Torra 2001): the observed protected values of a
  variable are ranked; the interval of record i runs from the protected value whose rank is h
  below the rank of y_ij to the one h above it, where the ranks in the interval differ from the
  centre by less than ``share`` times the number of observed values: h = ceil(share m) - 1. Tied
  values share the ranks of their block (the interval extends h beyond the whole block).
* Entropy intervals (after Alfalayleh & Brankovic 2015): the intruder knows the protection's
  error distribution e_h = x_hj - y_hj and wants the original value to within a precision
  d_j = 2 w s'_j. The sorted errors are cut into consecutive groups of span at most d_j with the
  smallest Shannon entropy H_j = -sum_g (n_g/m) log2(n_g/m) (dynamic programming, exact); the
  intruder's interval for record i is y_ij + [lo, hi] of the most probable group, and the record
  is inside when its own error lies in [lo, hi]. 2^-H_j is the variable's entropy risk.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["rank_halfwidth", "rank_interval_inside", "min_entropy_groups", "entropy_interval_inside"]


def rank_halfwidth(share: float, m: int) -> int:
    """h: the largest rank distance below ``share * m`` (0 when share * m <= 1)."""
    return max(math.ceil(share * m) - 1, 0)


def rank_interval_inside(x: np.ndarray, y: np.ndarray, share: float):
    """Per record and variable: the original value lies in the rank interval around the protected
    value. Returns ``(inside, halfwidths)``."""
    n, p = y.shape
    inside = np.ones((n, p), dtype=bool)
    hs = []
    for j in range(p):
        u = np.sort(y[~np.isnan(y[:, j]), j])
        m = u.size
        h = rank_halfwidth(share, m)
        hs.append(h)
        if m == 0:
            continue
        ok = ~np.isnan(y[:, j])
        yj = y[ok, j]
        lo = u[np.maximum(np.searchsorted(u, yj, side="left") - h, 0)]
        hi = u[np.minimum(np.searchsorted(u, yj, side="right") - 1 + h, m - 1)]
        xj = x[ok, j]
        inside[ok, j] = ~((xj < lo) | (xj > hi))  # NaN compares False: skipped
    return inside, hs


def min_entropy_groups(s: np.ndarray, d: float):
    """Cut the sorted values ``s`` into consecutive groups of span <= ``d`` with the smallest
    entropy of the group shares. Returns ``(entropy_bits, starts)`` with the start index of each
    group. A group s[i..k] is allowed when s[i] >= s[k] - d. Equal costs keep the longest last
    group at each step."""
    m = s.size
    if m == 0:
        return 0.0, np.zeros(0, dtype=np.int64)
    best = np.zeros(m + 1)
    back = np.zeros(m + 1, dtype=np.int64)
    lo = np.searchsorted(s, s - d, side="left")  # first index within d below each value
    for k in range(1, m + 1):
        j = np.arange(lo[k - 1], k)
        c = (k - j) / m
        cost = best[j] - c * np.log2(c)
        i = int(np.argmin(cost))
        best[k], back[k] = cost[i], j[i]
    starts = []
    k = m
    while k > 0:
        starts.append(back[k])
        k = back[k]
    return float(max(best[m], 0.0)), np.array(starts[::-1], dtype=np.int64)


def entropy_interval_inside(x: np.ndarray, y: np.ndarray, width: float, sd: np.ndarray):
    """Per record and variable: the record's error x - y lies in the most probable group of the
    minimal-entropy partition (precision 2 width sd_j). Returns ``(inside, per_variable)`` with,
    per variable, the entropy in bits, the number of groups, the top group's share and its error
    bounds (lo, hi)."""
    n, p = y.shape
    inside = np.ones((n, p), dtype=bool)
    info: list[dict] = []
    for j in range(p):
        ok = ~np.isnan(x[:, j]) & ~np.isnan(y[:, j])
        e = x[ok, j] - y[ok, j]
        d = 2.0 * width * sd[j] if np.isfinite(sd[j]) else 0.0
        s = np.sort(e)
        H, starts = min_entropy_groups(s, d)
        if s.size == 0:
            info.append({"entropy_bits": 0.0, "n_groups": 0, "top_share": None, "top_bounds": None})
            continue
        ends = np.append(starts[1:], s.size)
        sizes = ends - starts
        g = int(np.argmax(sizes))
        lo, hi = float(s[starts[g]]), float(s[ends[g] - 1])
        inside[ok, j] = (e >= lo) & (e <= hi)
        info.append(
            {
                "entropy_bits": H,
                "n_groups": int(sizes.size),
                "top_share": float(sizes[g] / s.size),
                "top_bounds": (lo, hi),
            }
        )
    return inside, info
