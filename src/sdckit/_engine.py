"""In-memory engine: the record-level GROUP BY done by Polars (multi-threaded hashing),
everything after it on the small pattern table in NumPy (``_core``).

Large-data engines (DuckDB, Spark) will provide the same two functions.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ._core.frequencies import pattern_table

__all__ = ["factorize", "record_patterns"]

_POLARS_MIN_N = 20_000  # below this NumPy's sort is as fast and avoids the hand-over


def factorize(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids 0..G-1 (in sorted key order) of an int64 key vector."""
    if key.size < _POLARS_MIN_N:
        uniq, ids = np.unique(key, return_inverse=True)
        return ids.reshape(-1).astype(np.int64, copy=False), len(uniq)
    ids = pl.Series(key).rank("dense").to_numpy().astype(np.int64) - 1
    return ids, int(ids.max()) + 1


def record_patterns(codes: np.ndarray, weights: np.ndarray | None = None, cards=None):
    """Distinct key patterns with counts and weight sums (``_core.frequencies.pattern_table``
    with the Polars GROUP BY)."""
    return pattern_table(codes, weights, factorize=factorize, cards=cards)
