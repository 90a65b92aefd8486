"""Gower's distance between records of mixed scales, the nearest neighbours it gives, and
the neighbour aggregates of microaggregation with Gower's distance. Pure NumPy.

The distance of records i and j over variables v with weights w_v (Gower 1971, in the form
of the VIM package that sdcMicro's ``microaggrGower`` uses) is

    d(i, j) = sum_v w_v d_v(i, j) / sum_v w_v,

* continuous: d_v = |x_iv - x_jv| / R_v, R_v the range (max - min) of v over the records
  compared (1 when the range is 0);
* ordinal with L_v categories ranked 1..L_v: d_v = |r_iv - r_jv| / (L_v - 1) (0 when L_v = 1);
* nominal: d_v = 0 when the categories are equal, else 1;

and, here, a missing value against an observed one gives d_v = 1 and two missing values
d_v = 0 (a missing value is a category of its own). Continuous and ordinal variables enter
already divided by R_v and L_v - 1 (``scaled``), nominal ones as integer codes (-1 = missing).
"""

from __future__ import annotations

import numpy as np

__all__ = ["gower_block", "nearest", "neighbour_category", "neighbour_values"]

#: distances computed at once (block rows x records)
_CELLS = 1 << 22


def gower_block(scaled: np.ndarray, w_scaled: np.ndarray, codes: np.ndarray, w_codes: np.ndarray, rows) -> np.ndarray:
    """Distances (len(rows), n) of the records ``rows`` to every record: ``scaled`` (n, q)
    floats with NaN for missing, ``codes`` (n, r) ints with -1 for missing, their weights."""
    total = float(w_scaled.sum() + w_codes.sum())
    n = scaled.shape[0] if scaled.size else codes.shape[0]
    D = np.zeros((len(rows), n))
    tmp = np.empty_like(D)
    for v in range(scaled.shape[1]):
        a, b = scaled[rows, v][:, None], scaled[:, v][None, :]
        np.subtract(a, b, out=tmp)
        np.abs(tmp, out=tmp)
        if np.isnan(a).any() or np.isnan(b).any():
            gap = np.isnan(tmp)
            tmp[gap] = np.where(np.isnan(a) & np.isnan(b), 0.0, 1.0)[gap]
        tmp *= w_scaled[v]
        D += tmp
    for v in range(codes.shape[1]):
        D += w_codes[v] * (codes[rows, v][:, None] != codes[:, v][None, :])
    if total > 0:
        D /= total
    return D


def nearest(scaled, w_scaled, codes, w_codes, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest records of every record (n, k), itself included, and their distances:
    by distance, ties by row position (the first k of a stable sort, as VIM's
    ``gowerD(returnIndex=TRUE)``). Distances (in [0, 1]) equal to 12 decimals are ties: sums
    of the same terms in another order must not break a tie by their rounding."""
    n = scaled.shape[0] if scaled.size else codes.shape[0]
    out = np.empty((n, k), dtype=np.int64)
    dist = np.empty((n, k))
    block = max(1, _CELLS // max(n, 1))
    for start in range(0, n, block):
        rows = np.arange(start, min(n, start + block))
        D = np.round(gower_block(scaled, w_scaled, codes, w_codes, rows), 12)
        if k >= n:
            out[rows] = np.argsort(D, axis=1, kind="stable")[:, :k]
        else:
            kth = np.partition(D, k - 1, axis=1)[:, k - 1]
            for r in range(rows.size):
                cand = np.flatnonzero(D[r] <= kth[r])  # ascending positions: a stable sort keeps them in order
                out[rows[r]] = cand[np.argsort(D[r, cand], kind="stable")[:k]]
        dist[rows] = np.take_along_axis(D, out[rows], axis=1)
    return out, dist


def neighbour_values(x: np.ndarray, nb: np.ndarray, statistic: str) -> np.ndarray:
    """Per record, the mean (or median) of x over its neighbours ``nb`` (n, k) with x observed;
    NaN where none is."""
    vals = x[nb]
    seen = ~np.isnan(vals)
    count = seen.sum(axis=1)
    out = np.full(x.shape[0], np.nan)
    some = count > 0
    if statistic == "mean":
        out[some] = np.where(seen, vals, 0.0)[some].sum(axis=1) / count[some]
    else:
        out[some] = np.nanmedian(vals[some], axis=1)
    return out


def neighbour_category(codes: np.ndarray, nb: np.ndarray, n_levels: int, rule: str, rng) -> np.ndarray:
    """Per record, a category of its neighbours ``nb`` (codes 0..L-1, -1 = missing left out):
    ``"mode"`` the most frequent (ties drawn at random: VIM's ``maxCat``) or ``"sample"`` one
    drawn with probability proportional to its count (VIM's ``sampleCat``); -1 where no
    neighbour has a category."""
    n = codes.shape[0]
    vals = codes[nb]
    rows = np.repeat(np.arange(n), nb.shape[1]).reshape(vals.shape)
    ok = vals >= 0
    counts = np.zeros((n, max(n_levels, 1)))
    np.add.at(counts, (rows[ok], vals[ok]), 1.0)
    total = counts.sum(axis=1)
    if rule == "mode":
        pick = np.argmax(counts + 0.5 * rng.random(counts.shape), axis=1)  # jitter < 1: ties only
    else:
        u = rng.random(n) * total
        pick = np.argmax(np.cumsum(counts, axis=1) > u[:, None], axis=1)
    return np.where(total > 0, pick, -1)
