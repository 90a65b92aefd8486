"""Row grouping on integer code matrices (the NumPy oracle of the engines' GROUP BY)."""

from __future__ import annotations

import numpy as np

__all__ = ["dense_ids", "distinct_per_group", "group_rows", "lookup_sums", "row_keys"]

_LIMIT = np.int64(2) ** 62


def row_keys(codes: np.ndarray, radix=None) -> np.ndarray:
    """Combine the columns of a non-negative integer matrix into one int64 key per row.

    Equal rows get equal keys and different rows different keys. Mixed-radix packing is used
    while the product of radices fits in 62 bits; beyond that the partial key is densified
    (``np.unique``) before the next column is packed, so any number of columns works.

    Parameters
    ----------
    codes : ndarray, shape (n, k), non-negative integers
    radix : sequence of int, optional
        Upper bound (exclusive) of each column; ``max + 1`` when omitted.
    """
    codes = np.asarray(codes)
    n, k = codes.shape
    if k == 0:
        return np.zeros(n, dtype=np.int64)
    if radix is None:
        radix = [int(codes[:, j].max()) + 1 if n else 1 for j in range(k)]
    key = codes[:, 0].astype(np.int64, copy=True)
    span = int(radix[0])
    for j in range(1, k):
        r = int(radix[j])
        if span * r >= _LIMIT:
            uniq, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64, copy=False).reshape(-1)
            span = max(len(uniq), 1)
        key *= r
        key += codes[:, j]
        span *= r
    return key


def group_rows(codes: np.ndarray, radix=None) -> tuple[np.ndarray, int]:
    """Dense group ids (0..G-1, in sorted key order) of the rows of a code matrix."""
    key = row_keys(codes, radix)
    if key.size == 0:
        return np.zeros(0, dtype=np.int64), 0
    ids, uniq = dense_ids(key)
    return ids, len(uniq)


def dense_ids(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` reversed: the dense id (0..G-1, in sorted key
    order) of every int64 key, and the G distinct keys in order. Non-negative keys within a
    compact range (below max(4 n, 2^16)) go through a look-up table of the keys present
    (linear passes instead of a sort)."""
    top = int(key.max()) if key.size else 0
    if key.size and int(key.min()) >= 0 and top < max(4 * key.size, 1 << 16):
        present = np.zeros(top + 1, dtype=bool)
        present[key] = True
        uniq = np.flatnonzero(present)
        lut = np.empty(top + 1, dtype=np.int64)
        lut[uniq] = np.arange(uniq.size)
        return lut[key], uniq
    uniq, ids = np.unique(key, return_inverse=True)
    return ids.reshape(-1).astype(np.int64, copy=False), uniq


def lookup_sums(ref_rows: np.ndarray, ref_values: np.ndarray, query_rows: np.ndarray) -> np.ndarray:
    """For each query row, the column sums of ``ref_values`` over reference rows equal to it.

    ``ref_values`` has shape (n_ref, v); the result has shape (n_query, v). Rows are compared
    on all columns (an equi-join followed by a sum).
    """
    nref = ref_rows.shape[0]
    nv = ref_values.shape[1]
    if query_rows.shape[0] == 0:
        return np.zeros((0, nv))
    if nref == 0:
        return np.zeros((query_rows.shape[0], nv))
    both = np.concatenate([ref_rows, query_rows], axis=0)
    ids, g = group_rows(both)
    out = np.empty((query_rows.shape[0], nv))
    for v in range(nv):
        sums = np.bincount(ids[:nref], weights=ref_values[:, v], minlength=g)
        out[:, v] = sums[ids[nref:]]
    return out


def distinct_per_group(group_ids: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Number of distinct non-negative ``values`` in each group (negative values = missing,
    not counted): a COUNT(DISTINCT) per group."""
    ok = values >= 0
    g, v = group_ids[ok].astype(np.int64), values[ok].astype(np.int64)
    if g.size == 0:
        return np.zeros(n_groups, dtype=np.int64)
    pair = g * (int(v.max()) + 1) + v
    first = np.unique(pair)
    return np.bincount(first // (int(v.max()) + 1), minlength=n_groups)
