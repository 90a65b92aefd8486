"""What the out-of-core engines (DuckDB, Spark) share: the records stay in the engine, SQL runs
the few record-level passes, and only small tables come back to Python.

A measure asks the engine for three things:

1. **Checks** of the roles (record count, missing values, weight problems): one aggregate query.
2. **The compressed table** (:meth:`RelationalEngine.compress`): the distinct rows of the
   categorical columns the measure needs (keys, strata, sensitive variables) with the number of
   records ``__n`` and the weight sum ``__w`` of each, one GROUP BY. Everything the measure
   computes depends on the records only through this table, so the in-memory pipeline runs on
   it with each row counted ``__n`` times, and gives the same numbers as on the records.
3. **A measure's own queries** (:meth:`RelationalEngine.run`): a measure that needs more than
   the compressed table (the household risk, which needs the households; external risk's
   identifiers) builds its SQL in its ``_<measure>_sql.py`` module from the engine's dialect
   (:class:`RelationalDialect`), and the engine runs it, returning aggregates only.

Per-record results are written by the engine (:meth:`RelationalEngine.write_records`), never
collected unless the caller asks for them.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import SdcError
from .._validation import missing_columns_message
from .base import RECORDS, STORED, EngineCapabilities, Query
from .records import HOUSEHOLD_RISK, HouseholdStore, Records, local_records

__all__ = [
    "HOUSEHOLD_RISK",
    "Compressed",
    "HouseholdUnsafe",
    "RelationTable",
    "RelationalEngine",
    "check_records_path",
    "parse_memory_limit",
]

_COUNTER = itertools.count()
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?\s*$", re.IGNORECASE)
_FACTOR = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_FACTOR.update({"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40})


def parse_memory_limit(value) -> int | None:
    """``"4GB"``, ``"512MB"``, ``"1.5GiB"`` or a number of bytes -> bytes (None stays None)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise SdcError(f"memory_limit: got {value!r}; expected a size such as '4GB' or '512MB'")
    if isinstance(value, (int, float)):
        if value <= 0 or not np.isfinite(value):
            raise SdcError("memory_limit: expected a positive number of bytes or a size such as '4GB'")
        return int(value)
    m = _MEMORY.match(str(value))
    if not m:
        raise SdcError(f"memory_limit: cannot read {str(value)!r}; expected a size such as '4GB', '512MB' or '1.5GiB'")
    size = float(m.group(1)) * _FACTOR[(m.group(2) or "B").upper()]
    if size < 2**20:
        raise SdcError(
            f"memory_limit: {str(value)!r} ({int(size):,} bytes) is below 1 MiB (1,048,576 bytes); "
            "expected a size such as '4GB'"
        )
    return int(size)


def new_name(prefix: str) -> str:
    """A fresh name for a view or table in the engine's session."""
    return f"__sdckit_{prefix}_{os.getpid()}_{next(_COUNTER)}"


_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
_SPARK_INT = ("tinyint", "smallint", "int", "bigint", "byte", "short", "integer", "long")


def kind_of(type_name: str) -> str:
    """text / categorical / float / integer / boolean / nested / other, from an engine type name."""
    t = type_name.strip()
    u = t.upper()
    if u.startswith("ENUM"):
        return "categorical"
    if u in ("VARCHAR", "STRING", "TEXT") or u.startswith("VARCHAR") or u.startswith("CHAR"):
        return "text"
    if u in ("DOUBLE", "FLOAT", "REAL") or u.startswith("DECIMAL"):
        return "float"
    if u in _NUMERIC or t in _SPARK_INT:
        return "integer"
    if u in ("BOOLEAN", "BOOL"):
        return "boolean"
    if u.endswith("[]") or u.startswith(("STRUCT", "MAP", "LIST", "ARRAY", "UNION")):
        return "nested"
    return "other"


@dataclass
class RelationTable:
    """A caller's records held by an out-of-core engine (a view in its session).

    Only the schema and aggregates are ever read into Python. ``n`` and the per-column checks
    are computed once (one query) and cached.
    """

    engine: Any
    view: str
    types: dict  # column -> engine type name
    #: declared categories (Polars Enum, pandas Categorical) of an in-memory input, by column:
    #: the engine's copy keeps only the values, the categories are put back on the small tables
    declared: dict = field(default_factory=dict)
    #: the caller's frame type, for collected per-record output: that of an in-memory input,
    #: Polars for a file, a DuckDB relation or a Spark DataFrame
    backend: str = "polars"
    index: Any = None  # the caller's pandas index, when informative
    #: an in-memory frame (pandas, Polars, PyArrow...) given by the caller, not a file, a DuckDB
    #: relation or a Spark DataFrame: protected data goes back to the caller as its frame type
    in_memory: bool = False
    #: that in-memory frame itself (the protected records are a copy of it)
    native: Any = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def columns(self) -> list[str]:
        return list(self.types)

    @property
    def n(self) -> int:
        if "n" not in self._cache:
            self._cache["n"] = int(self.engine.scalar(f"SELECT count(*) FROM {self.view}"))
        return self._cache["n"]

    def require(self, names, param: str) -> None:
        absent = [c for c in names if c not in self.types]
        if absent:
            raise SdcError(missing_columns_message(param, absent, self.columns))

    def kind(self, name: str) -> str:
        return kind_of(self.types[name])

    def dtype_name(self, name: str) -> str:
        return str(self.types[name])

    def is_numeric(self, name: str) -> bool:
        return self.kind(name) in ("float", "integer")

    def categories(self, name: str) -> list | None:
        return None

    def _missing_sql(self, name: str) -> str:
        q = self.engine.quote(name)
        return f"({q} IS NULL OR isnan({q}))" if self.kind(name) == "float" else f"({q} IS NULL)"

    def n_missing(self, name: str) -> int:
        key = ("n_missing", name)
        if key not in self._cache:
            sql = f"SELECT sum(CASE WHEN {self._missing_sql(name)} THEN 1 ELSE 0 END) FROM {self.view}"
            self._cache[key] = int(self.engine.scalar(sql) or 0)
        return self._cache[key]

    def n_below(self, name: str, level: float) -> int:
        """Records with ``name`` below ``level``."""
        sql = f"SELECT sum(CASE WHEN CAST({self.engine.quote(name)} AS DOUBLE) < {float(level)!r} THEN 1 ELSE 0 END) FROM {self.view}"
        return int(self.engine.scalar(sql) or 0)

    def missing_everywhere(self, names) -> set[str]:
        return {c for c in names if self.n_missing(c) == self.n}

    def float_summary(self, name: str) -> dict:
        """Counts of missing, infinite, negative and zero values (one query)."""
        q = self.engine.quote(name)
        x = f"CAST({q} AS DOUBLE)"
        cnt = lambda cond: f"sum(CASE WHEN {cond} THEN 1 ELSE 0 END)"  # noqa: E731
        inf = "CAST('Infinity' AS DOUBLE)"
        conds = (f"{q} IS NULL OR isnan({x})", f"abs({x}) = {inf}", f"{x} < 0", f"{x} = 0")
        sql = f"SELECT {', '.join(cnt(c) for c in conds)} FROM {self.view}"
        row = self.engine.row(sql)
        return dict(zip(("n_missing", "n_inf", "n_negative", "n_zero"), (int(v or 0) for v in row)))

    def floats(self, names, missing=None, order="C"):
        self.engine.require(RECORDS, "this step")

    values = floats


def _in_memory(data) -> bool:
    """An in-memory table (not a path, a DuckDB relation or a Spark DataFrame)."""
    module = type(data).__module__ or ""
    return not isinstance(data, (str, os.PathLike)) and not module.startswith(("duckdb", "_duckdb", "pyspark"))


@dataclass(frozen=True)
class Compressed:
    """The compressed table of a relation: distinct rows of ``columns`` with their counts.

    ``frame`` is a small Polars frame with the original column names, ``counts`` the records
    per row, ``weight_sums`` the weight sum per row (None without a weight); ``table`` names the
    engine-side copy (with a row number ``__row``), used to map per-row values back to records.
    """

    source: RelationTable
    columns: tuple[str, ...]
    frame: Any
    counts: np.ndarray
    weight_sums: np.ndarray | None
    table: str
    #: input position of the first record of each row (``compress(first=True)``)
    first: np.ndarray | None = None

    def frame_with(self, name: str, values) -> Any:
        """``frame`` with one more column (for instance the weight sums under the weight's name)."""
        import polars as pl

        return self.frame.with_columns(pl.Series(name, np.asarray(values)))


class RelationalEngine(EngineCapabilities):
    """Shared SQL of the DuckDB and Spark engines (a subclass provides the session: ``sql``,
    ``scalar``, ``row``, ``frame``, ``register``, ``materialize``, ``quote``, ``copy_parquet``).

    The engine implements the whole :class:`sdckit.engines.Engine` protocol: the operations on
    small arrays and label tables (patterns, gather, labels, ...) run in memory through
    :meth:`local`; those on a record table (encoding it, protected output as a frame) need
    :data:`~sdckit.engines.base.RECORDS`, which the engine does not have, and are refused with
    the one message of :func:`~sdckit.engines.base.refusal`."""

    name = "relational"
    in_memory = False
    capabilities = frozenset({STORED})

    def local(self):
        """The in-memory engine that works on the small tables this engine returns."""
        from .polars import PolarsEngine

        if not hasattr(self, "_local"):
            self._local = PolarsEngine()
        return self._local

    # -- the Engine protocol: small tables in memory, record tables refused ---------------------
    def encode(self, table, keys, missing=None):
        self.require(RECORDS, "encoding the records")

    def encode_joint(self, tables, column: str, missing=None):
        self.require(RECORDS, "encoding the records")

    def encode_column(self, table, column: str, missing=None):
        self.require(RECORDS, "encoding the records")

    def with_missing(self, table, masks: dict):
        self.require(RECORDS, "protected output as a frame")

    def with_codes(self, table, name: str, codes, labels, categories=None):
        self.require(RECORDS, "protected output as a frame")

    def with_values(self, table, name: str, values):
        self.require(RECORDS, "protected output as a frame")

    def native_frame(self, table):
        self.require(RECORDS, "protected output as a frame")

    def patterns(self, codes, weights=None, cards=None, multiplicity=None):
        return self.local().patterns(codes, weights, cards, multiplicity)

    def group_sums(self, factors, levels, values):
        return self.local().group_sums(factors, levels, values)

    def gather(self, ids, *arrays):
        return self.local().gather(ids, *arrays)

    def label_values(self, labels) -> list:
        return self.local().label_values(labels)

    def label_numbers(self, labels):
        return self.local().label_numbers(labels)

    def records(self, comp: Compressed | None = None, household=None) -> Records:
        """The records handle a result keeps: with the compressed table ``comp`` the engine maps
        the result's per-row values back to the records (and ``household``'s risk to each
        record); without it (a result of small tables) the in-memory handle."""
        return local_records() if comp is None else Records(self, comp, household)

    # -- dialect (overridden where they differ) -------------------------------------------------
    def quote(self, name: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def null_safe_equal(self, a: str, b: str) -> str:
        return f"{a} IS NOT DISTINCT FROM {b}"

    def one_minus_exp(self, acc: str) -> str:
        """SQL for 1 - exp(acc) (acc <= 0) accurate to a few ulps also for tiny |acc|."""
        poly = "1"
        for j in range(9, 1, -1):
            poly = f"(1 + {acc} / {j} * {poly})"
        return f"(CASE WHEN {acc} > -0.01 THEN -({acc}) * {poly} ELSE 1 - exp({acc}) END)"

    def quantiles_sql(self, expr: str, probs) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def record_number(self, view: str) -> str:  # pragma: no cover - abstract
        """SQL of a record's 0-based position in input order, in a ``SELECT`` from ``view``."""
        raise NotImplementedError

    def numbered(self, name: str, sql: str, order: str) -> None:
        """Materialize ``sql`` as ``name`` with ``__row``: each row's 0-based rank by ``order``
        (the columns of ``order`` identify a row)."""
        self.materialize(name, f"SELECT *, row_number() OVER (ORDER BY {order}) - 1 AS __row FROM ({sql}) t")

    def running_sums(self, name: str, sql: str, order: str, sums: dict) -> None:
        """Materialize ``sql`` as ``name`` with, per ``alias: expression`` of ``sums``, the sum
        of the expression over the rows up to and including this one in ``order`` (a column
        whose values identify a row)."""
        frame = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        cols = ", ".join(f"sum({e}) OVER (ORDER BY {order} {frame}) AS {a}" for a, e in sums.items())
        self.materialize(name, f"SELECT *, {cols} FROM ({sql}) t")

    # -- session (each engine runs SQL in its own way) -----------------------------------------
    def frame(self, sql: str):  # pragma: no cover - abstract
        """The (small) result of ``sql`` as a Polars frame."""
        raise NotImplementedError

    def scalar(self, sql: str):  # pragma: no cover - abstract
        raise NotImplementedError

    def row(self, sql: str):  # pragma: no cover - abstract
        raise NotImplementedError

    def materialize(self, name: str, sql: str) -> None:  # pragma: no cover - abstract
        """Compute ``sql`` once and keep it in the engine as ``name``."""
        raise NotImplementedError

    def register(self, name: str, frame) -> None:  # pragma: no cover - abstract
        """Hand a small Polars frame to the engine as ``name``."""
        raise NotImplementedError

    def copy_parquet(self, sql: str, path: Path, names: list[str]) -> None:  # pragma: no cover - abstract
        """Write the result of ``sql`` as Parquet at ``path`` (a new name), its columns named
        ``names`` (names may differ only in case), rows in the result's order: one file
        (DuckDB) or a folder of part files (Spark)."""
        raise NotImplementedError

    # -- input -----------------------------------------------------------------------------------
    def table(self, data, param: str = "data") -> RelationTable:
        if isinstance(data, RelationTable):
            return data
        view = new_name("src")
        declared: dict = {}
        backend, index = "polars", None
        in_memory = _in_memory(data)
        native = data if in_memory else None
        if in_memory:  # converted once: registered as Arrow, its Enum categories kept
            import polars as pl

            from ._polars_frame import as_table

            wrapped = as_table(data, param)
            data, backend, index = wrapped.frame, wrapped.backend, wrapped.index
            declared = {c: t for c, t in data.schema.items() if isinstance(t, pl.Enum)}
        types = self.register_source(data, view, param)
        return RelationTable(self, view, types, declared=declared, backend=backend, index=index, in_memory=in_memory,
                             native=native)  # fmt: skip

    def register_source(self, data, view: str, param: str) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def _path(data) -> Path | None:
        if isinstance(data, (str, os.PathLike)):
            return Path(os.fspath(data))
        return None

    # -- compress --------------------------------------------------------------------------------
    def compress(self, table: RelationTable, columns, weight: str | None = None, first: bool = False) -> Compressed:
        """The GROUP BY of ``columns`` with record counts and weight sums (kept in the engine
        with a row number, and returned as a small Polars frame)."""
        import polars as pl

        cols = list(dict.fromkeys(columns))
        if not cols:
            raise SdcError("keys: no columns to group by; expected at least one key variable")
        gcols = ", ".join(f"c{i}" for i in range(len(cols)))
        sel = ", ".join(f"{self.quote(c)} AS c{i}" for i, c in enumerate(cols))
        wv = f", CAST({self.quote(weight)} AS DOUBLE) AS __wv" if weight else ""
        wsum = ", sum(__wv) AS __w" if weight else ""
        rv = f", {self.record_number(table.view)} AS __rec" if first else ""
        fmin = ", min(__rec) AS __first" if first else ""
        sql = f"SELECT {gcols}, count(*) AS __n{wsum}{fmin} FROM (SELECT {sel}{wv}{rv} FROM {table.view}) t GROUP BY {gcols}"
        name = new_name("patterns")
        self.numbered(name, sql, gcols)
        small = self.frame(f"SELECT * FROM {name} ORDER BY __row")
        counts = small.get_column("__n").to_numpy().astype(np.int64)
        wsums = small.get_column("__w").to_numpy().astype(float) if weight else None
        firsts = small.get_column("__first").to_numpy().astype(np.int64) if first else None
        frame = small.select(
            [
                (pl.col(f"c{i}").cast(table.declared[c]) if c in table.declared else pl.col(f"c{i}")).alias(c)
                for i, c in enumerate(cols)
            ]
        )
        return Compressed(table, tuple(cols), frame, counts, wsums, name, firsts)

    def _join_rows(self, comp: Compressed, alias: str = "s", palias: str = "p") -> str:
        """The join condition of records to rows of the compressed table (NULL/NaN-safe)."""
        conds = [self.null_safe_equal(f"{alias}.{self.quote(c)}", f"{palias}.c{i}") for i, c in enumerate(comp.columns)]
        return " AND ".join(conds) or "TRUE"

    def upload(self, columns: dict) -> str:
        """A small table of NumPy ``columns`` in the engine; returns its name."""
        import polars as pl

        name = new_name("table")
        self.register(name, pl.DataFrame({k: np.asarray(v) for k, v in columns.items()}))
        return name

    def _upload_values(self, values: dict) -> str:
        """A small (``__row``, ``v0``, ``v1``, ...) table in the engine (one value per row of
        the compressed table, in the order of ``values``); returns its name."""
        import polars as pl

        arrays = [np.asarray(v) for v in values.values()]
        n = len(arrays[0])
        frame = pl.DataFrame({"__row": np.arange(n, dtype=np.int64), **{f"v{i}": a for i, a in enumerate(arrays)}})
        name = new_name("values")
        self.register(name, frame)
        return name

    def text_type(self) -> str:  # pragma: no cover - abstract
        """The dialect's name of the text type (``VARCHAR``, ``STRING``)."""
        raise NotImplementedError

    # -- measure queries: the measure builds the SQL, the engine runs it ---------------------------
    @property
    def dialect(self) -> RelationalDialect:
        """What a measure's query builder may use (:class:`~sdckit.engines.base.SqlDialect`)."""
        return RelationalDialect(self)

    def run(self, build, *args):
        """Run the query ``build(dialect, *args)`` (a :class:`~sdckit.engines.base.Query` built
        by a measure's ``_<measure>_sql.py`` module): register its uploads, then keep the result
        under ``query.into`` (returned) or return it as ``{column: list of values}``."""
        import polars as pl

        query = build(self.dialect, *args)
        for name, columns in query.uploads.items():
            self.register(name, pl.DataFrame({k: np.asarray(v) for k, v in columns.items()}))
        if query.into is not None:
            self.materialize(query.into, query.sql)
            return query.into
        return self.frame(query.sql).to_dict(as_series=False)

    # -- protection ----------------------------------------------------------------------------------
    def _numbered(self, table: RelationTable) -> str:
        return f"(SELECT *, {self.record_number(table.view)} AS __rec FROM {table.view})"

    def records_of(self, comp: Compressed, rows: np.ndarray, weight: str | None = None):
        """Input positions (sorted) and compressed-table rows of the records of ``rows``, and
        (with ``weight``) their weights: ``(positions, rows)`` or ``(positions, rows, weights)``
        when ``weight`` is passed (None without a weight column)."""
        import polars as pl

        sel = new_name("rows")
        self.register(sel, pl.DataFrame({"r": np.asarray(rows, dtype=np.int64)}))
        wcol = f", CAST(s.{self.quote(weight)} AS DOUBLE) AS w" if weight else ""
        out = self.frame(
            f"SELECT s.__rec AS pos, p.__row AS r{wcol} FROM {self._numbered(comp.source)} s JOIN {comp.table} p ON "
            f"{self._join_rows(comp)} JOIN {sel} x ON x.r = p.__row ORDER BY s.__rec"
        )
        pos = out.get_column("pos").to_numpy().astype(np.int64)
        r = out.get_column("r").to_numpy().astype(np.int64)
        if weight is None:
            return pos, r
        return pos, r, out.get_column("w").to_numpy().astype(float)

    def with_suppressed(self, comp: Compressed, keys, row_flags: np.ndarray, pos: np.ndarray, rec_flags: np.ndarray):
        """The records with key values made missing: ``row_flags`` (rows x keys) for every
        record of a row, ``rec_flags`` for the records at ``pos`` instead. Returns ``(data,
        None)``: ``data`` is the engine's own lazy table (a DuckDB relation, a Spark DataFrame),
        in input order with the input's columns, for a file, a DuckDB relation or a Spark
        DataFrame (data that may not fit in memory); for an in-memory frame it is the caller's
        frame type, written as the in-memory engine writes it (the same columns, types and
        pandas index): the engine returns each record's row (two integers per record), and the
        cells are made missing in a copy of the caller's frame."""
        if comp.source.in_memory:
            positions, rows = self.records_of(comp, np.arange(len(comp.counts)))
            flags = np.zeros((int(comp.counts.sum()), len(keys)), dtype=bool)
            flags[positions] = row_flags[rows]
            flags[np.asarray(pos, dtype=np.int64)] = rec_flags
            mem = self.local()
            source = mem.table(comp.source.native)
            return mem.native_frame(mem.with_missing(source, {v: flags[:, j] for j, v in enumerate(keys)})), None
        return self._suppressed_relation(comp, keys, row_flags, pos, rec_flags), None

    def _suppressed_relation(self, comp: Compressed, keys, row_flags, pos, rec_flags):
        import polars as pl

        q = self.quote
        m = len(keys)
        vals = self._upload_values({f"m{j}": row_flags[:, j] for j in range(m)})
        recs = new_name("recflags")
        self.register(recs, pl.DataFrame({"__rec": pos, **{f"m{j}": rec_flags[:, j] for j in range(m)}}))
        index = {k: j for j, k in enumerate(keys)}
        cols = []
        for c in comp.source.columns:
            if c in index:
                j = index[c]
                cols.append(f"CASE WHEN coalesce(r.m{j}, v.v{j}) THEN NULL ELSE s.{q(c)} END AS {q(c)}")
            else:
                cols.append(f"s.{q(c)}")
        sql = (
            f"SELECT {', '.join(cols)} FROM {self._numbered(comp.source)} s JOIN {comp.table} p ON "
            f"{self._join_rows(comp)} JOIN {vals} v ON v.__row = p.__row LEFT JOIN {recs} r ON r.__rec = s.__rec "
            "ORDER BY s.__rec"
        )
        return self.relation(sql)

    def relation(self, sql: str):  # pragma: no cover - abstract
        """The engine's lazy table of ``sql``."""
        raise NotImplementedError

    # -- per-record output -----------------------------------------------------------------------
    @staticmethod
    def record_names(values: dict, id=None) -> list[str]:
        """Names of the per-record output, as the in-memory engine gives them: the caller's
        ``id`` column first, then the names of ``values``."""
        return ([id] if id is not None else []) + [k for k in values if k != id]

    def record_query(self, comp: Compressed, values: dict, household: HouseholdStore | None = None, id=None) -> str:
        """SQL of the per-record output in input order: the caller's ``id`` column, then one
        column per entry of ``values``. An entry is an array (one value per row of the
        compressed table, mapped to every record of the row), :data:`HOUSEHOLD_RISK` (r^h of
        the record's household) or a :class:`HouseholdUnsafe` (the household rule). The
        columns are ``__o0, __o1, ...`` in the order of :meth:`record_names` (engines compare
        names without case, and ``fk`` and ``Fk`` are two columns)."""
        uploads: dict = {}

        def uploaded(values) -> str:
            uploads[f"v{len(uploads)}"] = np.asarray(values)
            return f"v.v{len(uploads) - 1}"

        cols = [f"s.{self.quote(id)}"] if id is not None else []
        for name, value in values.items():
            if name == id:
                continue
            if value is HOUSEHOLD_RISK or isinstance(value, HouseholdUnsafe):
                if household is None:
                    raise SdcError(f"{name}: a household column needs household=")  # pragma: no cover - internal
                cols.append(self._household_column(value, household, uploaded))
            else:
                cols.append(uploaded(value))
        hh = ""
        if household is not None:
            hh = (
                f" LEFT JOIN (SELECT h, size, {household.risk_sql} AS hrisk FROM {household.table} "
                f"WHERE h IS NOT NULL) g ON g.h = s.{self.quote(household.household_column)}"
            )
        vals = self._upload_values(uploads or {"v0": np.zeros(len(comp.counts))})
        select = ", ".join(f"{c} AS __o{i}" for i, c in enumerate(cols))
        return (
            f"SELECT {select} FROM {self._numbered(comp.source)} s JOIN {comp.table} p ON "
            f"{self._join_rows(comp)} JOIN {vals} v ON v.__row = p.__row{hh} ORDER BY s.__rec"
        )

    def _household_column(self, value, household: HouseholdStore, uploaded) -> str:
        """SQL of a household column of the per-record output; ``g`` is the record's household
        (``h``, ``size``, ``hrisk``), absent for a record without a household id (its own
        household of one)."""
        if value is HOUSEHOLD_RISK:
            own = self.one_minus_exp(uploaded(household.row_logs))
            return f"CASE WHEN g.h IS NULL THEN {own} ELSE g.hrisk END"
        if value.level is None:
            return "FALSE"
        # r_i >= r^h* / |g| as in memory: the level is uploaded (an exact double), not printed
        level = uploaded(np.full(len(value.risk), float(value.level)))
        return f"({uploaded(value.risk)} >= {level} / coalesce(g.size, 1))"

    def records_frame(self, comp: Compressed, values: dict, *, household=None, id=None):
        """The per-record output collected as a Polars frame (names of :meth:`record_names`);
        a result with no per-record value gives an empty frame, as in memory."""
        if not values and id is None:
            import polars as pl

            return pl.DataFrame()
        frame = self.frame(self.record_query(comp, values, household, id))
        return frame.rename(dict(zip(frame.columns, self.record_names(values, id))))

    def write_records(self, comp: Compressed, values: dict, path, *, household=None, id=None, overwrite=False) -> Path:
        """Write the per-record output (:meth:`record_query`) to Parquet through the engine:
        DuckDB writes one file, Spark a folder of part files (see :meth:`copy_parquet`). The
        output is written beside ``path`` under a temporary name, then renamed, so an
        interrupted write leaves nothing half written at ``path``."""
        p = check_records_path(path, self.name)
        if p.exists() and not overwrite:
            raise SdcError(f"path: {p} exists; pass overwrite=True to replace it")
        sql = self.record_query(comp, values, household, id)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        try:
            self.copy_parquet(sql, tmp, self.record_names(values, id))
            _put(tmp, p)
        finally:
            _remove(tmp)
        return p


class RelationalDialect:
    """The SQL pieces of a relational engine a measure's query builder uses
    (:class:`~sdckit.engines.base.SqlDialect`): the builder never sees the engine itself."""

    def __init__(self, engine: RelationalEngine):
        self._engine = engine

    def quote(self, name: str) -> str:
        return self._engine.quote(name)

    def text_type(self) -> str:
        return self._engine.text_type()

    def null_safe_equal(self, a: str, b: str) -> str:
        return self._engine.null_safe_equal(a, b)

    def one_minus_exp(self, acc: str) -> str:
        return self._engine.one_minus_exp(acc)

    def quantiles_sql(self, expr: str, probs) -> str:
        return self._engine.quantiles_sql(expr, probs)

    @staticmethod
    def fresh_name(prefix: str) -> str:
        return new_name(prefix)

    @staticmethod
    def view(table: RelationTable) -> str:
        """The engine's name of a caller's table."""
        return table.view

    def numbered(self, table: RelationTable) -> str:
        """A subquery of ``table``'s records with ``__rec``, each record's input position."""
        return self._engine._numbered(table)

    @staticmethod
    def row_table(comp: Compressed) -> str:
        """The engine's name of the compressed table (``c0, c1, ...`` and its row ``__row``)."""
        return comp.table

    @staticmethod
    def source(comp: Compressed) -> RelationTable:
        """The table ``comp`` compresses."""
        return comp.source

    def join_rows(self, comp: Compressed, alias: str = "s", palias: str = "p") -> str:
        """The join condition of records (``alias``) to rows (``palias``) of ``comp`` (NULL/NaN-safe)."""
        return self._engine._join_rows(comp, alias, palias)

    @staticmethod
    def missing(table: RelationTable, column: str) -> str:
        """The condition that ``column`` is missing (NULL; NaN too in a float column)."""
        return table._missing_sql(column)

    @staticmethod
    def literal(value, kind: str) -> str | None:
        """A missing-value code as a literal of a column of ``kind`` (None: it cannot occur there)."""
        return _literal(value, kind)

    @staticmethod
    def query(sql: str, uploads: dict | None = None, into: str | None = None) -> Query:
        return Query(sql, dict(uploads or {}), into)


@dataclass(frozen=True)
class HouseholdUnsafe:
    """A per-record column computed by the engine: the mu-ARGUS household rule, a record is
    unsafe when r_i >= r^h* / |g| (``risk``: r_i per row of the compressed table; ``level``:
    r^h*, None when the household rate meets the target, then no record is unsafe; |g|: the
    size of the record's household, 1 without a household id)."""

    risk: Any
    level: float | None


def _dataset_entry(path: Path) -> bool:
    """A file of a Parquet dataset folder: a part file, or Spark's ``_SUCCESS`` / checksum."""
    return path.is_file() and (path.suffix.lower() in (".parquet", ".pq", ".crc") or path.name == "_SUCCESS")


def _put(tmp: Path, p: Path) -> None:
    """Move the written output ``tmp`` (a file, or a folder of part files) to ``p``, replacing
    what is there (a file, or a folder of Parquet part files; :func:`check_records_path`)."""
    if p.is_dir() or (tmp.is_dir() and p.exists()):
        old = p.with_name(f".{p.name}.{os.getpid()}.old")
        os.replace(p, old)
        try:
            os.replace(tmp, p)
        finally:
            _remove(old)
    else:
        os.replace(tmp, p)


def _remove(path: Path) -> None:
    """Remove a file or a folder (absent: nothing to do)."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def check_records_path(path, engine: str, param: str = "path") -> Path:
    """``path`` as a Path when an out-of-core engine can write per-record output there (a
    ``.parquet`` name in an existing directory; DuckDB writes a file there, Spark a folder of
    part files); an error naming ``param`` otherwise. What is at ``path`` may be replaced: a
    file, or a folder that holds only Parquet part files."""
    p = Path(os.fspath(path))
    if p.suffix.lower() not in (".parquet", ".pq"):
        raise SdcError(f"{param}: cannot write {p.name} from the {engine} engine; expected a .parquet file")
    if not p.parent.is_dir():
        raise SdcError(f"{param}: the directory {p.parent} does not exist")
    if p.is_dir() and not all(_dataset_entry(e) for e in p.iterdir()):
        raise SdcError(
            f"{param}: {p} is a folder that holds more than Parquet part files; expected a new name, a Parquet file "
            "or a folder of Parquet part files to replace"
        )
    return p


def _literal(value, kind: str) -> str | None:
    """A missing-value code as an SQL literal of the column's kind (None: it cannot occur there,
    as ``-999`` cannot in a text column for the in-memory encoder either)."""
    if kind in ("text", "categorical"):
        return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return repr(float(value)) if kind == "float" else (repr(int(value)) if float(value).is_integer() else None)
