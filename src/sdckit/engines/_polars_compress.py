"""The distinct-pattern operations of the in-memory engine (those of
:class:`~sdckit.engines.base.Engine` that a measure over distinct patterns calls:
``compress``, ``records_of``, ``with_suppressed``), so that one algorithm over the distinct rows
serves every engine.

The records stay the caller's table; the compressed table is a Polars GROUP BY of the columns
a measure needs (record counts, weight sums, first positions), and each record's row is kept as
a NumPy array, so that the records of some rows and the protected records come from gathers,
with no loop over records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from .._errors import SdcError
from ._polars_frame import Table
from ._polars_output import native_frame, with_missing

__all__ = ["PolarsCompressed", "compress", "records_of", "with_suppressed"]


@dataclass(frozen=True, eq=False)
class PolarsCompressed:
    """The compressed table of a Polars :class:`Table`: distinct rows of ``columns``.

    ``frame`` is a small Polars frame with the original column names (rows in the order of
    their first record), ``counts`` the records per row, ``weight_sums`` the weight sum per row
    (None without a weight), ``first`` the input position of each row's first record (always
    kept). ``row_of`` is each record's row; ``by_row`` the record positions sorted by row (then
    position) and ``starts`` where each row's records begin in it.
    """

    source: Table
    columns: tuple[str, ...]
    frame: Any
    counts: np.ndarray
    weight_sums: np.ndarray | None
    first: np.ndarray
    row_of: np.ndarray
    by_row: np.ndarray
    starts: np.ndarray

    def frame_with(self, name: str, values) -> Any:
        """``frame`` with one more column (for instance the weight sums under the weight's name)."""
        return self.frame.with_columns(pl.Series(name, np.asarray(values)))


def compress(table: Table, columns, weight: str | None = None, first: bool = False) -> PolarsCompressed:
    """The GROUP BY of ``columns`` with record counts, weight sums and first positions (``first``
    is accepted for the protocol; the positions are always kept)."""
    cols = list(dict.fromkeys(columns))
    if not cols:
        raise SdcError("keys: no columns to group by; expected at least one key variable")
    frame = table.select(cols).with_row_index("__rec")
    aggs = [pl.len().alias("__n"), pl.col("__rec").min().alias("__first")]
    if weight is not None:
        w = pl.Series("__wv", table.floats([weight])[:, 0])
        frame = frame.with_columns(w)
        aggs.append(pl.col("__wv").sum().alias("__w"))
    grouped = frame.group_by(cols, maintain_order=True).agg(*aggs, pl.col("__rec").alias("__recs"))
    counts = grouped.get_column("__n").to_numpy().astype(np.int64)
    recs = grouped.get_column("__recs").explode().to_numpy().astype(np.int64)
    rows = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    row_of = np.empty(table.n, dtype=np.int64)
    row_of[recs] = rows
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return PolarsCompressed(
        source=table,
        columns=tuple(cols),
        frame=grouped.select(cols),
        counts=counts,
        weight_sums=grouped.get_column("__w").to_numpy().astype(float) if weight is not None else None,
        first=grouped.get_column("__first").to_numpy().astype(np.int64),
        row_of=row_of,
        by_row=recs,
        starts=starts,
    )


def records_of(comp: PolarsCompressed, rows: np.ndarray, weight: str | None = None):
    """Input positions (sorted) and compressed-table rows of the records of ``rows``, and
    (with ``weight``) their weights: ``(positions, rows)`` or ``(positions, rows, weights)``."""
    rows = np.asarray(rows, dtype=np.int64)
    lengths = comp.counts[rows]
    total = int(lengths.sum())
    # the index into by_row of every record of rows: each row's start plus 0..count-1
    offsets = np.repeat(comp.starts[rows] - (np.cumsum(lengths) - lengths), lengths)
    pos = np.sort(comp.by_row[offsets + np.arange(total, dtype=np.int64)])
    r = comp.row_of[pos]
    if weight is None:
        return pos, r
    return pos, r, comp.source.floats([weight])[:, 0][pos]


def with_suppressed(comp: PolarsCompressed, keys, row_flags: np.ndarray, pos: np.ndarray, rec_flags: np.ndarray):
    """The records with key values made missing: ``row_flags`` (rows x keys) for every record of
    a row, ``rec_flags`` for the records at ``pos`` instead. Returns ``(data, table)``: the
    caller's frame type and the engine's table of the protected records."""
    flags = np.asarray(row_flags, dtype=bool)[comp.row_of]
    pos = np.asarray(pos, dtype=np.int64)
    if pos.size:
        flags[pos] = rec_flags
    table = with_missing(comp.source, {v: flags[:, j] for j, v in enumerate(keys)})
    return native_frame(table), table
