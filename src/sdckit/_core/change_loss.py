"""Kernels of :func:`sdckit.variant_loss`: the per-record loss of every kind of change.

Every function takes plain NumPy arrays (integer codes with ``-1`` = missing, floats with NaN
= missing) and returns per-record distances in [0, 1] or small counts; no frame library, no
validation (the public function validates once and reads the files).

The distances (m(g) = the mean original value of the records released as g, S_j the standard
deviation of the original's observed values):

* nominal: d_i = 1 - P^(X = x_i | X' = x'_i), the share of the records released with the same
  value x'_i whose original value is not x_i;
* numeric kept numeric: d_i = (2/pi) arctan(|x_i - x'_i| / S_j);
* numeric released as labels (intervals, groups): d_i = (2/pi) arctan(|x_i - m(x'_i)| / S_j);
* PRAM: d_i = 1 - P[x_i, x_i], the probability that the matrix changes x_i.

Suppressed values (x observed, x' missing) cost 1 (nominal, PRAM) or Mlodak's extreme-value
distance (numeric); a value missing in both files costs 0; an original missing value released
as a value costs 1 (nominal, PRAM).
"""

from __future__ import annotations

import numpy as np

from .infoloss import continuous_distance, original_sd

__all__ = [
    "group_means",
    "is_function",
    "n_categories",
    "nominal_change",
    "numeric_change",
    "pram_change",
    "recoded_numeric_change",
]


def _pair_ids(co: np.ndarray, cp: np.ndarray) -> np.ndarray:
    """Dense ids of the (original, released) pairs; an original missing value is a value of
    its own (code -1); ``cp`` >= 0."""
    lp = int(cp.max()) + 1 if cp.size else 1
    key = (co.astype(np.int64) + 1) * lp + cp.astype(np.int64)
    _, pair = np.unique(key, return_inverse=True)
    return pair.reshape(-1)


def nominal_change(co: np.ndarray, cp: np.ndarray) -> np.ndarray:
    """d_i = 1 - n(x_i, x'_i) / n(x'_i) over the records with a released value.

    ``co``, ``cp``: int codes of the original and released values (-1 = missing; the two code
    tables need not be the same). n(a, g) counts the records with original a released as g,
    n(g) those released as g. Released missing: 1 when the original was observed (a
    suppression), 0 when it was missing too. Original missing, released observed: 1.
    """
    d = np.zeros(co.shape[0])
    rel = cp >= 0
    if rel.any():
        pair = _pair_ids(co[rel], cp[rel])
        n_pair = np.bincount(pair)
        n_g = np.bincount(cp[rel])
        share = n_pair[pair] / n_g[cp[rel]]
        d[rel] = np.where(co[rel] >= 0, 1.0 - share, 1.0)
    d[(co >= 0) & ~rel] = 1.0
    return d


def numeric_change(x: np.ndarray, y: np.ndarray, sd: float | None = None) -> np.ndarray:
    """d_i = (2/pi) arctan(|x_i - y_i| / S_j); a suppressed value (y missing) is replaced by the
    original maximum when x_i is at most the original median, else by the minimum (Mlodak);
    both missing 0; S_j = 0: 0 for an unchanged value, else 1."""
    S = original_sd(x) if sd is None else sd
    return continuous_distance(x, y, "mlodak", "arctan_sd", sd=S)


def group_means(x: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """m(g): the mean of the observed x over the records of each group g (codes 0..n_groups-1,
    -1 = none); NaN for a group without an observed x."""
    ok = (groups >= 0) & ~np.isnan(x)
    s = np.bincount(groups[ok], weights=x[ok], minlength=n_groups)
    c = np.bincount(groups[ok], minlength=n_groups).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.where(c > 0, c, 1.0), np.nan)


def recoded_numeric_change(x: np.ndarray, cp: np.ndarray, sd: float | None = None) -> np.ndarray:
    """Numbers released as labels (codes ``cp``, -1 = missing): each released label stands for
    m(g), the mean original value of its records, and d_i = (2/pi) arctan(|x_i - m(x'_i)| / S_j)
    with the suppression rule of :func:`numeric_change`. A label whose records all lack an
    original value: d = 1 for those records."""
    n_groups = int(cp.max()) + 1 if cp.size and cp.max() >= 0 else 0
    m = group_means(x, cp, n_groups)
    y = np.full(x.shape[0], np.nan)
    rel = cp >= 0
    y[rel] = m[cp[rel]]
    d = numeric_change(x, y, sd)
    d[rel & np.isnan(y)] = 1.0  # released, with no original value to impute it from
    return d


def pram_change(index_o: np.ndarray, index_p: np.ndarray, P: np.ndarray) -> np.ndarray:
    """d_i = 1 - P[x_i, x_i] (the chance that PRAM changes x_i; ``index_o`` the matrix index of
    each original value, -1 = missing). Suppressed after PRAM (x observed, x' missing) and an
    original missing value released: 1; both missing: 0."""
    d = np.zeros(index_o.shape[0])
    obs = index_o >= 0
    d[obs] = 1.0 - np.diag(P)[index_o[obs]]
    d[obs & (index_p < 0)] = 1.0
    d[~obs & (index_p >= 0)] = 1.0
    return d


def is_function(co: np.ndarray, cp: np.ndarray) -> bool:
    """Whether the original -> released relation is a function on the records with a released
    value: every original value (missing counted as a value) goes to one released value."""
    rel = cp >= 0
    if not rel.any():
        return True
    a, b = co[rel].astype(np.int64), cp[rel].astype(np.int64)
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    same_a = a[1:] == a[:-1]
    return not bool(np.any(same_a & (b[1:] != b[:-1])))


def n_categories(codes: np.ndarray) -> int:
    """Distinct observed values (codes >= 0)."""
    ok = codes[codes >= 0]
    return int(np.unique(ok).size) if ok.size else 0
