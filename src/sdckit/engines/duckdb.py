"""The DuckDB engine: records stay in DuckDB (a Parquet or CSV file, a DuckDB relation or a
registered frame), which streams them under a memory limit and spills to disk; only the
compressed table and aggregates come back to Python."""

from __future__ import annotations

import functools
import os
import tempfile
import uuid
from pathlib import Path

from .._errors import SdcError
from ._relational import RelationalEngine, parse_memory_limit

__all__ = ["DuckDBEngine"]


def _import_duckdb():
    try:
        import duckdb
    except ImportError:
        raise SdcError("engine: 'duckdb' needs the duckdb package; install sdckit[duckdb]") from None
    return duckdb


_BATCH_ROWS = 1 << 20  # rows per Arrow batch of per-record output


def _memory_guarded(method):
    """DuckDB's out-of-memory error as an :class:`SdcError` that says what to change."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        oom = getattr(_import_duckdb(), "OutOfMemoryException", None) or MemoryError
        try:
            return method(self, *args, **kwargs)
        except oom:
            raise SdcError(self._out_of_memory()) from None

    return run


def _sql_string(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


class DuckDBEngine(RelationalEngine):
    """Out-of-core engine on DuckDB.

    Parameters
    ----------
    memory_limit : str or int, optional
        DuckDB's memory limit (``"4GB"``, ``"512MB"`` or bytes). Above it DuckDB spills the
        GROUP BYs and joins to ``temp_directory``.
    threads : int, optional
        Worker threads (default: DuckDB's, one per core).
    temp_directory : str or path, optional
        Where DuckDB spills (default with a memory limit: a new directory under the system's
        temporary directory, made only when DuckDB spills and removed when the connection
        closes).
    connection : duckdb.DuckDBPyConnection, optional
        The connection to work in (needed for relations made on a connection of your own).
        Default: a new in-memory connection; ``engine="duckdb"`` uses DuckDB's default
        connection, the one ``duckdb.sql()`` works on.
    """

    name = "duckdb"
    settings = ("memory_limit", "threads")

    def __init__(self, memory_limit=None, *, threads: int | None = None, temp_directory=None, connection=None):
        self.memory_limit = parse_memory_limit(memory_limit)
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise SdcError(f"threads: got {threads!r}; expected a positive integer")
        self.threads = threads
        self.temp_directory = temp_directory
        self._con = connection
        _import_duckdb()

    @classmethod
    def default(cls) -> DuckDBEngine:
        """The engine of ``engine="duckdb"``: DuckDB's default connection, DuckDB's settings."""
        con = _import_duckdb().default_connection  # a function from DuckDB 1.2, the connection itself before
        return cls(connection=con() if callable(con) else con)

    shared = default

    @staticmethod
    def owns(data) -> bool:
        """A DuckDB relation."""
        module = type(data).__module__ or ""
        return module.split(".")[0] in ("duckdb", "_duckdb") and type(data).__name__ == "DuckDBPyRelation"

    @property
    def con(self):
        if self._con is None:
            self._con = _import_duckdb().connect()
            self._configure(self._con)
        return self._con

    def _configure(self, con) -> None:
        if self.memory_limit is not None:
            con.execute(f"SET memory_limit = '{max(self.memory_limit // 2**20, 1)}MiB'")
            # a fresh name, not a folder: DuckDB makes it when it first spills and removes it on close
            tmp = self.temp_directory or os.path.join(tempfile.gettempdir(), f"sdckit-duckdb-{uuid.uuid4().hex}")
            con.execute(f"SET temp_directory = {_sql_string(tmp)}")
        elif self.temp_directory is not None:
            con.execute(f"SET temp_directory = {_sql_string(self.temp_directory)}")
        if self.threads is not None:
            con.execute(f"SET threads = {int(self.threads)}")

    def _out_of_memory(self) -> str:
        if self.memory_limit is None:
            return (
                "memory_limit: DuckDB ran out of memory (no memory limit was set, so the machine's memory or "
                "DuckDB's default limit ran out); expected fewer threads (threads=1, --threads 1) or an "
                "explicit memory limit, under which DuckDB spills to disk"
            )
        return (
            f"memory_limit: DuckDB ran out of memory under the memory limit of {self.memory_limit:,} bytes, "
            "too small for this computation (DuckDB spills to disk above the limit, but needs some memory "
            "for every thread); expected a larger limit such as '1GB' (memory_limit='1GB', --memory-limit 1GB), "
            "or fewer threads (threads=1, --threads 1)"
        )

    # -- dialect ---------------------------------------------------------------------------------
    @staticmethod
    def quote(name: str) -> str:
        return '"' + str(name).replace('"', '""') + '"'

    @staticmethod
    def text_type() -> str:
        return "VARCHAR"

    @staticmethod
    def quantiles_sql(expr: str, probs) -> str:
        return f"quantile_cont({expr}, [{', '.join(repr(float(p)) for p in probs)}])"

    def record_number(self, view: str) -> str:
        return "row_number() OVER () - 1"

    # -- session ---------------------------------------------------------------------------------
    @_memory_guarded
    def frame(self, sql: str):
        import polars as pl

        rel = self.con.sql(sql)
        fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table  # duckdb < 1.4: fetch_...
        return pl.from_arrow(fetch())

    def relation(self, sql: str):
        return self.con.sql(sql)

    @_memory_guarded
    def scalar(self, sql: str):
        return self.con.execute(sql).fetchall()[0][0]

    @_memory_guarded
    def row(self, sql: str):
        return tuple(self.con.execute(sql).fetchall()[0])

    @_memory_guarded
    def materialize(self, name: str, sql: str) -> None:
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}").fetchall()

    @_memory_guarded
    def register(self, name: str, frame) -> None:
        self.con.register(name, frame.to_arrow())

    @_memory_guarded
    def copy_parquet(self, sql: str, path: Path, names: list[str]) -> None:
        """DuckDB renames columns that differ only in case (``Fk`` beside ``fk``), so the result
        streams to the file in Arrow batches under the caller's names (never collected whole)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        rel = self.con.sql(sql)
        reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader  # duckdb < 1.4: fetch_...
        reader = reader(_BATCH_ROWS)
        schema = pa.schema([f.with_name(n) for f, n in zip(reader.schema, names)])
        with pq.ParquetWriter(path, schema) as out:
            for batch in reader:
                out.write_batch(pa.RecordBatch.from_arrays(batch.columns, schema=schema))

    # -- input -----------------------------------------------------------------------------------
    @_memory_guarded
    def register_source(self, data, view: str, param: str) -> dict:
        duckdb = _import_duckdb()
        path = self._path(data)
        if path is not None:
            self._register_path(path, view, param)
        elif isinstance(data, duckdb.DuckDBPyRelation):
            data.create_view(view)
            try:
                self.con.execute(f"SELECT * FROM {view} LIMIT 0")
            except duckdb.Error:
                raise SdcError(
                    f"{param}: this DuckDB relation belongs to another connection; pass "
                    "engine=sdckit.engines.DuckDBEngine(connection=<that connection>)"
                ) from None
        else:
            self.con.register(view, data.to_arrow())  # a Polars frame (RelationalEngine.table)
        rel = self.con.sql(f"SELECT * FROM {view} LIMIT 0")
        return {c: str(t) for c, t in zip(rel.columns, rel.types)}

    def _register_path(self, path: Path, view: str, param: str) -> None:
        text = str(path)
        if not any(ch in text for ch in "*?[") and not path.exists():
            raise SdcError(f"{param}: {path} does not exist")
        target = path / "*.parquet" if path.is_dir() else path
        ext = (path.suffix if not path.is_dir() else ".parquet").lower()
        if ext in (".parquet", ".pq"):
            reader = f"read_parquet({_sql_string(str(target))})"
        elif ext in (".csv", ".tsv", ".txt"):
            if not path.is_dir() and path.exists():
                _check_utf8_text(path, param)
            delim = "\t" if ext == ".tsv" else ","
            reader = f"read_csv({_sql_string(str(target))}, delim = {_sql_string(delim)}, header = true)"
        else:
            raise SdcError(f"{param}: cannot read {path.name} with the duckdb engine; expected .parquet, .csv or .tsv")
        try:
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM {reader}")
        except _import_duckdb().Error as exc:
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            raise SdcError(
                f"{param}: DuckDB could not read {path} ({first}); expected a valid {ext[1:]} file"
            ) from None


def _check_utf8_text(path: Path, param: str) -> None:
    """DuckDB reads UTF-8 text: a UTF-16 / UTF-32 file (byte-order mark) or one that is not
    UTF-8 is refused here, naming the file, rather than read as garbage or failing later."""
    from ..io import byte_order_mark as _bom
    from ..io import check_utf8 as _check_utf8

    bom = _bom(path)
    if bom is not None:
        raise SdcError(
            f"{param}: {path} is {bom} text (it starts with that byte-order mark); the duckdb engine reads "
            "UTF-8 files; expected a UTF-8 file, or engine='polars', which decodes it"
        )
    _check_utf8(path, lossy=False)
