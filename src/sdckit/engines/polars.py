"""The in-memory engine: Polars does the record-level work (multi-threaded hashing, GROUP BY,
gathers); everything after it happens on the small tables in NumPy (``sdckit._core``)."""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from .._core.frequencies import pattern_table
from ..io import read_data
from . import _polars_labels, _polars_output
from ._polars_encode import encode_column, encode_keys
from ._polars_frame import Table, as_table
from .base import RECORDS, EncodedKeys, EngineCapabilities
from .records import Records, local_records

__all__ = ["PolarsEngine"]

_TARGET = {"text": pl.String, "float": pl.Float64, "integer": pl.Int64, "boolean": pl.Boolean}
_KIND_OF = {"text": "text", "categorical": "text", "float": "float", "integer": "integer", "boolean": "boolean"}
_POLARS_MIN_N = 20_000  # below this NumPy's sort is as fast and avoids the hand-over


class PolarsEngine(EngineCapabilities):
    """In-memory engine (the default): the caller's table as a Polars frame, record-level
    vectors as NumPy arrays."""

    name = "polars"
    in_memory = True
    capabilities = frozenset({RECORDS})

    def local(self) -> PolarsEngine:
        """The engine of the small tables: this one."""
        return self

    # -- input ---------------------------------------------------------------------------------
    def table(self, data, param: str = "data") -> Table:
        if isinstance(data, (str, os.PathLike)):  # a file: scanned, read column by column
            data = read_data(data, lazy=True)
        return as_table(data, param)

    # -- encoding ------------------------------------------------------------------------------
    def encode(self, table: Table, keys, missing=None) -> EncodedKeys:
        return encode_keys(table.select(list(keys)), keys, missing)

    def encode_joint(self, tables, column: str, missing=None):
        """Codes of ``column`` in each table against one shared, sorted label set:
        ``([codes per table], labels)``, codes int32 with -1 = missing.

        The columns are first brought to one type (text, float, integer or boolean, in that
        order of precedence); a column missing everywhere takes the others' type (text when
        all are), so that its NaN never becomes a label.
        """
        parts = [t.column(column) for t in tables]
        empty = [bool(t.missing_everywhere([column])) for t in tables]
        kinds = {_KIND_OF.get(t.kind(column), "text") for t, e in zip(tables, empty) if not e}
        target = next((_TARGET[k] for k in ("text", "float", "integer", "boolean") if k in kinds), pl.String)
        parts = [
            pl.Series(column, [None] * p.len(), dtype=target) if e else p.cast(target) for p, e in zip(parts, empty)
        ]
        codes, labels = encode_column(pl.concat(parts).alias(column), list(missing) if missing else None)
        bounds = np.cumsum([0] + [t.n for t in tables])
        return [codes[bounds[i] : bounds[i + 1]] for i in range(len(tables))], labels

    def encode_column(self, table: Table, column: str, missing=None):
        """``(codes, labels)`` of one column (codes int32, -1 = missing)."""
        return encode_column(table.column(column), missing)

    # -- group and aggregate ---------------------------------------------------------------------
    def factorize(self, key: np.ndarray) -> tuple[np.ndarray, int]:
        """Dense ids 0..G-1 (in sorted key order) of an int64 key vector (the grouping step of
        :meth:`patterns`; not an operation of the protocol)."""
        if key.size < _POLARS_MIN_N:
            uniq, ids = np.unique(key, return_inverse=True)
            return ids.reshape(-1).astype(np.int64, copy=False), len(uniq)
        ids = pl.select(pl.lit(pl.Series(key)).rank("dense").cast(pl.Int64) - 1).to_series().to_numpy()
        return ids, int(ids.max()) + 1

    def patterns(self, codes: np.ndarray, weights: np.ndarray | None = None, cards=None, multiplicity=None):
        """Distinct key patterns with record counts and weight sums:
        ``(ids, patterns, counts, weight_sums)`` (see ``_core.frequencies.pattern_table``);
        ``multiplicity`` counts the records of each row of a compressed table."""
        return pattern_table(codes, weights, factorize=self.factorize, cards=cards, multiplicity=multiplicity)

    def group_sums(self, factors, levels, values: np.ndarray) -> list[np.ndarray]:
        """Per factor a, the (levels[a], k) sums of the columns of ``values`` within each level
        (one multi-threaded GROUP BY per factor). Factors hold codes 0..levels-1."""
        k = values.shape[1]
        frame = pl.DataFrame({f"y{c}": values[:, c] for c in range(k)})
        queries = [frame.lazy().with_columns(pl.Series("g", fa)).group_by("g").agg(pl.all().sum()) for fa in factors]
        out = []
        for n_levels, res in zip(levels, pl.collect_all(queries)):
            block = np.zeros((n_levels, k))
            g = res.get_column("g").to_numpy().astype(np.int64)
            block[g] = res.select([f"y{c}" for c in range(k)]).to_numpy()
            out.append(block)
        return out

    # -- map back --------------------------------------------------------------------------------
    def gather(self, ids: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
        """``[a[ids] for a in arrays]``: per-group values mapped back to records
        (multi-threaded through Polars for large inputs)."""
        if ids.size < _POLARS_MIN_N:
            return [a[ids] for a in arrays]
        frame = pl.DataFrame({f"a{i}": a for i, a in enumerate(arrays)})
        out = frame[pl.Series(ids)]
        return [out.get_column(f"a{i}").to_numpy() for i in range(len(arrays))]

    # -- labels (small tables) -------------------------------------------------------------------
    label_values = staticmethod(_polars_labels.label_values)
    label_numbers = staticmethod(_polars_labels.label_numbers)

    # -- output ----------------------------------------------------------------------------------
    @staticmethod
    def records(comp=None, household=None) -> Records:
        """The records handle a result keeps (in memory: it builds the caller's frame type)."""
        return local_records()

    # -- protected output (a copy of the caller's table with new column values) ---------------
    with_missing = staticmethod(_polars_output.with_missing)
    with_codes = staticmethod(_polars_output.with_codes)
    with_values = staticmethod(_polars_output.with_values)
    native_frame = staticmethod(_polars_output.native_frame)
