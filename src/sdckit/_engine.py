"""In-memory engine: the record-level GROUP BY done by Polars (multi-threaded hashing),
everything after it on the small pattern table in NumPy (``_core``).

Large-data engines (DuckDB, Spark) will provide the same two functions.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ._core.frequencies import pattern_table

__all__ = ["factorize", "gather", "record_patterns"]

_POLARS_MIN_N = 20_000  # below this NumPy's sort is as fast and avoids the hand-over


def factorize(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense ids 0..G-1 (in sorted key order) of an int64 key vector."""
    if key.size < _POLARS_MIN_N:
        uniq, ids = np.unique(key, return_inverse=True)
        return ids.reshape(-1).astype(np.int64, copy=False), len(uniq)
    ids = pl.select((pl.lit(pl.Series(key)).rank("dense").cast(pl.Int64) - 1)).to_series().to_numpy()
    return ids, int(ids.max()) + 1


def record_patterns(codes: np.ndarray, weights: np.ndarray | None = None, cards=None):
    """Distinct key patterns with counts and weight sums (``_core.frequencies.pattern_table``
    with the Polars GROUP BY)."""
    return pattern_table(codes, weights, factorize=factorize, cards=cards)


def gather(ids: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    """``[a[ids] for a in arrays]``: the per-pattern values mapped back to records
    (multi-threaded through Polars for large inputs)."""
    if ids.size < _POLARS_MIN_N:
        return [a[ids] for a in arrays]
    frame = pl.DataFrame({f"a{i}": a for i, a in enumerate(arrays)})
    out = frame[pl.Series(ids)]
    return [out.get_column(f"a{i}").to_numpy() for i in range(len(arrays))]
