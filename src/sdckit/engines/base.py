"""What an engine provides: the one seam for record-level work.

Every public measure does its record-level work (read columns, encode keys to integer codes,
GROUP BY, joins, mapping per-group results back to records) through an :class:`Engine`; what
comes back is NumPy arrays and small tables (one row per key pattern, class or variable), on
which the pure kernels of ``sdckit._core`` compute. The in-memory engine is Polars
(:mod:`sdckit.engines.polars`); DuckDB and Spark engines implement the same protocol and keep
record-level data in the database, returning only the small tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from ._declared import OUT_OF_CORE_MEASURES

__all__ = [
    "RECORDS",
    "STORED",
    "EncodedKeys",
    "Engine",
    "EngineCapabilities",
    "StoredRecords",
    "OUT_OF_CORE_MEASURES",
    "TableLike",
    "refusal",
]

#: capability: every record's values as NumPy arrays in Python (per-record encoding, sdcMicro's
#: record-order heuristics, the continuous-variable measures and methods, protected output as a
#: frame). The in-memory engine has it; DuckDB and Spark do not.
RECORDS = "records"
#: capability: the records stay in the engine, which compresses them to the distinct rows of the
#: columns a measure needs and maps per-row results back (the operations of
#: :class:`StoredRecords`).
STORED = "stored"


def refusal(engine_name: str, capability: str, what: str) -> str:
    """The one message of an engine that lacks ``capability`` for ``what``."""
    if capability == RECORDS:
        return (
            f"engine: {what} needs the records in memory; the {engine_name} engine runs "
            f"{', '.join(OUT_OF_CORE_MEASURES)} (use engine='polars' here)"
        )
    return f"engine: {what} needs an engine that keeps the records ({capability}); the {engine_name} engine does not"


class EngineCapabilities:
    """What an engine declares it can do (mixed into every engine): ``capabilities`` and the
    check that refuses, with the one message of :func:`refusal`, what it cannot."""

    name: str
    capabilities: frozenset = frozenset()
    #: the constructor's parameters a caller may give by name (the CLI's engine options)
    settings: tuple[str, ...] = ()

    @classmethod
    def shared(cls):
        """The engine of ``engine="<name>"`` (one per process, made on first use)."""
        return cls()

    @staticmethod
    def owns(data) -> bool:
        """Whether ``data`` is this engine's own kind of table (a DuckDB relation, a Spark
        DataFrame), which ``engine=None`` sends to it."""
        return False

    def has(self, capability: str) -> bool:
        """Whether the engine can do ``capability`` (:data:`RECORDS`, :data:`STORED`)."""
        return capability in self.capabilities

    def require(self, capability: str, what: str):
        """The engine itself when it can do ``capability``; else an :class:`SdcError` saying that
        ``what`` (a measure, a method, an option) needs it."""
        if capability not in self.capabilities:
            from .._errors import SdcError

            raise SdcError(refusal(self.name, capability, what))
        return self


@dataclass(frozen=True)
class EncodedKeys:
    """Integer-coded key variables.

    Attributes
    ----------
    names : tuple of str
    codes : ndarray, shape (n, m), int32
        ``-1`` marks a missing value.
    labels : tuple of Series (small: one value per category; a Polars Series in memory)
        ``labels[j][c]`` is the label of code ``c`` of variable ``j``.
    observed : tuple
        Per variable, the codes that occur when the labels are declared categories (Enum)
        and may include unobserved ones; ``None`` when every label occurs in the data.
    unused_missing : tuple
        The extra missing-value codes given that occur in none of the columns (a code of
        another type than the column, or a typo).
    """

    def n_observed(self, j: int) -> int:
        """Number of distinct non-missing values of variable ``j`` in the data."""
        obs = self.observed[j] if self.observed else None
        return len(self.labels[j]) if obs is None else len(obs)

    def observed_label(self, j: int, i: int = 0):
        """The ``i``-th observed label of variable ``j``."""
        obs = self.observed[j] if self.observed else None
        return self.labels[j][i if obs is None else obs[i]]

    names: tuple[str, ...]
    codes: np.ndarray
    labels: tuple[Any, ...]
    observed: tuple[tuple[int, ...] | None, ...] = ()
    #: the user's extra missing-value codes that occur in none of the columns
    unused_missing: tuple = ()

    @property
    def cardinalities(self) -> tuple[int, ...]:
        return tuple(len(lab) for lab in self.labels)

    @property
    def missing(self) -> np.ndarray:
        return self.codes < 0


@runtime_checkable
class TableLike(Protocol):
    """A caller's data as an engine holds it (row order is the caller's)."""

    backend: str  # the caller's frame type: "pandas", "polars", "pyarrow" or "numpy"
    index: Any  # the caller's row labels when informative (pandas), else None

    @property
    def n(self) -> int: ...
    @property
    def columns(self) -> list[str]: ...
    def require(self, names, param: str) -> None: ...
    def kind(self, name: str) -> str: ...
    def dtype_name(self, name: str) -> str: ...
    def is_numeric(self, name: str) -> bool: ...
    def categories(self, name: str) -> list | None: ...
    def n_missing(self, name: str) -> int: ...
    def floats(self, names, missing=None, order: Literal["C", "F"] = "C") -> np.ndarray: ...
    def missing_everywhere(self, names) -> set[str]: ...
    def float_summary(self, name: str) -> dict: ...
    def values(self, name: str) -> np.ndarray: ...


@runtime_checkable
class Engine(Protocol):
    """The operations every engine implements (see the README's layout section).

    Capabilities
        ``capabilities`` (a frozenset of :data:`RECORDS`, :data:`STORED`), ``has(capability)``
        and ``require(capability, what)``, which refuses with the one message of
        :func:`refusal`. An operation on the records themselves (encoding a record table,
        protected output) needs :data:`RECORDS`; an engine without it refuses there.
        ``local()`` is the in-memory engine that works on the small tables (one row per key
        pattern, class or variable) an engine returns: the engine itself when it is in memory.
    Input
        ``table(data, param)`` wraps a caller's table, file path or relation.
    Encoding
        ``encode(table, keys, missing)`` -> :class:`EncodedKeys` (codes ``0..R-1``, ``-1`` =
        missing; labels as small tables). ``encode_joint(tables, column, missing)`` codes one
        variable of several files against one shared label set.
    Group and aggregate
        ``patterns(codes, weights, cards)`` -> ``(ids, patterns, counts, weight_sums)``: the
        GROUP BY of the key patterns with record counts and weight sums.
        ``group_sums(factors, levels, values)``: column sums of ``values`` per level of each
        factor.
    Map back
        ``gather(ids, *arrays)``: per-group values to records, in record order.
    Labels
        ``label_values(labels)`` and ``label_numbers(labels)`` read the small label tables of
        :class:`EncodedKeys`.
    Output
        ``records(comp, household)``: the records handle (:class:`~sdckit.engines.records.Records`)
        a measure gives the result it builds; the result builds every frame it hands back
        through it (its per-record values, its small tables, SUDA's MSU text), so that no
        result imports an engine. Out of core the handle holds the engine and its compressed
        table ``comp``, and the engine maps the per-row values back to the records.
    Protected output
        ``with_missing(table, masks)``, ``with_codes(table, column, codes, labels)`` and
        ``with_values(table, column, values)`` return a copy of the table with new values in
        some columns (same rows, same column order, the column's type kept where the values
        allow); ``native_frame(table)`` hands the whole table back as the caller's frame type.
    """

    name: str
    capabilities: frozenset

    def has(self, capability: str) -> bool: ...
    def require(self, capability: str, what: str) -> Any: ...
    def local(self) -> Any: ...
    def table(self, data, param: str = "data") -> TableLike: ...
    def encode(self, table: TableLike, keys, missing=None) -> EncodedKeys: ...
    def encode_joint(self, tables, column: str, missing=None) -> tuple[list[np.ndarray], Any]: ...
    def patterns(self, codes: np.ndarray, weights: np.ndarray | None = None, cards=None, multiplicity=None): ...
    def group_sums(self, factors, levels, values: np.ndarray) -> list[np.ndarray]: ...
    def encode_column(self, table: TableLike, column: str, missing=None) -> tuple[np.ndarray, Any]: ...
    def gather(self, ids: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]: ...
    def label_values(self, labels) -> list: ...
    def label_numbers(self, labels) -> np.ndarray | None: ...
    def records(self, comp=None, household=None) -> Any: ...
    def with_missing(self, table: TableLike, masks: dict) -> TableLike: ...
    def with_codes(self, table: TableLike, name: str, codes: np.ndarray, labels, categories=None) -> TableLike: ...
    def with_values(self, table: TableLike, name: str, values: np.ndarray) -> TableLike: ...
    def native_frame(self, table: TableLike): ...


@runtime_checkable
class StoredRecords(Protocol):
    """The operations of an engine with the :data:`STORED` capability (DuckDB, Spark): the
    records stay in the engine, measures work on its compressed tables.

    ``compress(table, columns, weight, first)`` groups the records by ``columns`` (record
    counts, weight sums, first positions) into a small table that stays numbered in the engine;
    ``records_of(comp, rows)`` fetches the input positions of the records of some rows;
    ``with_suppressed(comp, keys, ...)`` returns the records with key values made missing (the
    engine's own lazy table); ``households(comp, household, row_risk)`` and
    ``household_key_conflicts(...)`` aggregate per household; ``n_distinct``, ``id_matches`` and
    ``id_partners`` compare identifiers of two tables. The per-record output is collected or
    written in input order through the records handle of ``Engine.records`` (the relational
    engines' ``records_frame`` and ``write_records``, which only the handle calls).
    """

    def compress(self, table, columns, weight: str | None = None, first: bool = False) -> Any: ...
    def records_of(self, comp, rows: np.ndarray, weight: str | None = None) -> Any: ...
    def with_suppressed(self, comp, keys, row_flags, pos, rec_flags) -> Any: ...
    def households(self, comp, household: str, row_risk: np.ndarray) -> Any: ...
    def household_key_conflicts(self, table, household: str, key: str, missing=()) -> int: ...
    def n_distinct(self, table, column: str) -> int: ...
    def id_matches(self, left, right, column: str, pos_left, pos_right) -> int: ...
    def id_partners(self, comp_left, comp_right, column: str) -> Any: ...
