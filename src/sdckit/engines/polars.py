"""The in-memory engine: Polars does the record-level work (multi-threaded hashing, GROUP BY,
gathers); everything after it happens on the small tables in NumPy (``sdckit._core``)."""

from __future__ import annotations

import numpy as np
import polars as pl

from .._core.grouping import distinct_per_group, lookup_sums
from .._core.frequencies import pattern_table
from ._polars_encode import encode_column, encode_keys
from ._polars_frame import Table, as_table, to_native
from .base import EncodedKeys

__all__ = ["PolarsEngine"]

_POLARS_MIN_N = 20_000  # below this NumPy's sort is as fast and avoids the hand-over


class PolarsEngine:
    """In-memory engine (the default): the caller's table as a Polars frame, record-level
    vectors as NumPy arrays."""

    name = "polars"

    # -- input ---------------------------------------------------------------------------------
    def table(self, data, param: str = "data") -> Table:
        return as_table(data, param)

    # -- encoding ------------------------------------------------------------------------------
    def encode(self, table: Table, keys, missing=None) -> EncodedKeys:
        return encode_keys(table.select(list(keys)), keys, missing)

    def encode_joint(self, tables, column: str, missing=None, dtype=None):
        """Codes of ``column`` in each table against one shared, sorted label set
        (``dtype``: cast every part to this Polars type first, e.g. ``pl.String``)."""
        parts = [t.column(column) for t in tables]
        if dtype is not None:
            parts = [p.cast(dtype) for p in parts]
        codes, labels = encode_column(pl.concat(parts, how="vertical_relaxed").alias(column), missing)
        bounds = np.cumsum([0] + [t.n for t in tables])
        return [codes[bounds[i]:bounds[i + 1]] for i in range(len(tables))], labels

    def encode_column(self, table: Table, column: str, missing=None):
        """``(codes, labels)`` of one column (codes int32, -1 = missing)."""
        return encode_column(table.column(column), missing)

    # -- group and aggregate ---------------------------------------------------------------------
    def factorize(self, key: np.ndarray) -> tuple[np.ndarray, int]:
        """Dense ids 0..G-1 (in sorted key order) of an int64 key vector."""
        if key.size < _POLARS_MIN_N:
            uniq, ids = np.unique(key, return_inverse=True)
            return ids.reshape(-1).astype(np.int64, copy=False), len(uniq)
        ids = pl.select((pl.lit(pl.Series(key)).rank("dense").cast(pl.Int64) - 1)).to_series().to_numpy()
        return ids, int(ids.max()) + 1

    def patterns(self, codes: np.ndarray, weights: np.ndarray | None = None, cards=None):
        """Distinct key patterns with record counts and weight sums:
        ``(ids, patterns, counts, weight_sums)`` (see ``_core.frequencies.pattern_table``)."""
        return pattern_table(codes, weights, factorize=self.factorize, cards=cards)

    def distinct_counts(self, group_ids: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
        """Number of distinct non-negative ``values`` per group (negative = missing)."""
        return distinct_per_group(group_ids, values, n_groups)

    # -- join ------------------------------------------------------------------------------------
    def lookup_sums(self, ref_rows: np.ndarray, ref_values: np.ndarray, query_rows: np.ndarray) -> np.ndarray:
        return lookup_sums(ref_rows, ref_values, query_rows)

    # -- map back --------------------------------------------------------------------------------
    def gather(self, ids: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
        """``[a[ids] for a in arrays]``: per-group values mapped back to records
        (multi-threaded through Polars for large inputs)."""
        if ids.size < _POLARS_MIN_N:
            return [a[ids] for a in arrays]
        frame = pl.DataFrame({f"a{i}": a for i, a in enumerate(arrays)})
        out = frame[pl.Series(ids)]
        return [out.get_column(f"a{i}").to_numpy() for i in range(len(arrays))]

    # -- output ----------------------------------------------------------------------------------
    def to_native(self, columns: dict, backend: str, index=None):
        return to_native(columns, backend, index)
