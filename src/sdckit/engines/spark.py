"""The Spark engine: records stay in Spark (a Spark DataFrame, or a Parquet/CSV path read by
Spark) on any cluster; only the compressed table and aggregates come back to Python."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import numpy as np

from .._errors import SdcError
from ._relational import RelationalEngine, new_name

__all__ = ["SparkEngine"]

_PARTS = itertools.count()


def _import_pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError:
        raise SdcError("engine: 'spark' needs the pyspark package (and Java); install sdckit[spark]") from None
    return SparkSession


def _java_problem() -> str | None:
    """Why Spark's launcher would find no Java (it runs ``$JAVA_HOME/bin/java`` when JAVA_HOME
    is set, else ``java`` on PATH); None when it finds one."""
    home = os.environ.get("JAVA_HOME")
    if home:
        if not Path(home, "bin", "java").is_file():
            return "JAVA_HOME is set, but there is no bin/java in it; point JAVA_HOME at a Java 17 runtime or unset it"
        return None
    if shutil.which("java") is None:
        return "install a Java 17 runtime (Debian: openjdk-17-jre-headless) and put java on PATH or set JAVA_HOME"
    return None


def _literal_array(values) -> str:
    """A Spark SQL array literal of Python ints (BIGINT) or floats (DOUBLE, exact)."""
    items = [f"{int(v)}L" if isinstance(v, (int, np.integer)) else f"{float(v)!r}D" for v in values]
    return f"array({', '.join(items) or '0L'})"


def _offsets(parts: np.ndarray, totals: np.ndarray) -> list:
    """Per partition id 0..max, the sum of ``totals`` over the partitions before it."""
    if not len(parts):
        return []
    totals = np.asarray(totals)
    totals = totals.astype(np.int64 if totals.dtype.kind in "iub" else float)
    full = np.zeros(int(parts.max()) + 1, dtype=totals.dtype)
    full[parts] = totals
    return [v.item() for v in np.concatenate([np.zeros(1, dtype=full.dtype), np.cumsum(full)[:-1]])]


class SparkEngine(RelationalEngine):
    """Out-of-core engine on Apache Spark (local mode or a cluster).

    Parameters
    ----------
    session : pyspark.sql.SparkSession, optional
        The session to use. Default: the active session, or a new one on ``master``.
    master : str, optional
        Spark master URL for a new session (``"local[2]"``, ``"spark://host:7077"``,
        ``"yarn"``); default ``"local[*]"``.
    config : dict, optional
        Extra Spark settings for a new session (``{"spark.executor.memory": "8g"}``).
    """

    name = "spark"
    settings = ("master",)

    @staticmethod
    def owns(data) -> bool:
        """A Spark DataFrame."""
        return (type(data).__module__ or "").startswith("pyspark.sql") and type(data).__name__ == "DataFrame"

    def __init__(self, session=None, *, master: str | None = None, config: dict | None = None):
        _import_pyspark()
        if master is not None and (not isinstance(master, str) or not master.strip()):
            raise SdcError(f"master: got {master!r}; expected a Spark master URL such as 'local[2]'")
        self._session = session
        self._deltas: dict = {}  # view -> per partition, its first position minus (id << 33)
        self.master = master
        self.config = dict(config or {})

    @property
    def spark(self):
        if self._session is None:
            self._session = self._start()
        return self._session

    def _start(self):
        SparkSession = _import_pyspark()
        active = SparkSession.getActiveSession() if self.master is None else None
        if active is not None:
            return active
        problem = _java_problem()
        if problem is not None:
            raise SdcError(f"engine: Spark cannot start: Java was not found; {problem}")
        builder = SparkSession.builder.master(self.master or "local[*]").appName("sdckit")
        settings = {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.shuffle.partitions": "8",
            "spark.sql.execution.arrow.pyspark.enabled": "true",
            **self.config,
        }
        for k, v in settings.items():
            builder = builder.config(k, v)
        try:
            return builder.getOrCreate()
        except Exception as exc:  # the JVM did not start: say why, not a py4j traceback
            raise SdcError(f"engine: Spark cannot start: {str(exc).splitlines()[0][:300]}") from None

    # -- dialect ---------------------------------------------------------------------------------
    @staticmethod
    def quote(name: str) -> str:
        return "`" + str(name).replace("`", "``") + "`"

    @staticmethod
    def null_safe_equal(a: str, b: str) -> str:
        return f"{a} <=> {b}"

    @staticmethod
    def one_minus_exp(acc: str) -> str:
        return f"(-expm1({acc}))"

    @staticmethod
    def text_type() -> str:
        return "STRING"

    @staticmethod
    def quantiles_sql(expr: str, probs) -> str:
        return f"percentile({expr}, array({', '.join(repr(float(p)) for p in probs)}))"

    # -- numbering without a window over the whole table -------------------------------------
    # A window without PARTITION BY moves every row to one partition (one machine). Instead,
    # as RDD.zipWithIndex does: monotonically_increasing_id() is (partition id << 33) + the
    # row's index in its partition, so a row's position is that index plus the rows of the
    # partitions before its own, taken from a small table of counts per partition.
    def record_number(self, view: str) -> str:
        """A record's 0-based position in ``view``'s partition order (the input order)."""
        if view not in self._deltas:
            counts = self.frame(
                f"SELECT p, count(*) AS n FROM (SELECT spark_partition_id() AS p FROM {view}) t GROUP BY p"
            )
            parts = counts.get_column("p").to_numpy().astype(np.int64)
            offsets = _offsets(parts, counts.get_column("n").to_numpy().astype(np.int64))
            self._deltas[view] = [off - (p << 33) for p, off in enumerate(offsets)]
        return f"(monotonically_increasing_id() + element_at({_literal_array(self._deltas[view])}, spark_partition_id() + 1))"

    def numbered(self, name: str, sql: str, order: str) -> None:
        """``sql`` sorted by ``order`` (a sort over range partitions), then numbered."""
        ordered = new_name("sorted")
        self.materialize(ordered, f"SELECT * FROM ({sql}) t ORDER BY {order}")
        self.materialize(name, f"SELECT *, {self.record_number(ordered)} AS __row FROM {ordered}")

    def running_sums(self, name: str, sql: str, order: str, sums: dict) -> None:
        """Sorted by ``order`` over range partitions; the running sums within each partition
        (a window partitioned by partition id) plus the totals of the partitions before it."""
        ordered, tagged = new_name("sorted"), new_name("tagged")
        part = f"__p{next(_PARTS)}"
        self.materialize(ordered, f"SELECT * FROM ({sql}) t ORDER BY {order}")
        terms = ", ".join(f"{e} AS __s_{a}" for a, e in sums.items())
        self.materialize(tagged, f"SELECT *, {terms}, spark_partition_id() AS {part} FROM {ordered}")
        totals = self.frame(
            f"SELECT {part} AS p, {', '.join(f'sum(__s_{a}) AS {a}' for a in sums)} FROM {tagged} GROUP BY {part}"
        )
        parts = totals.get_column("p").to_numpy().astype(np.int64)
        upto = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
        cols = []
        for a in sums:
            before = _literal_array(_offsets(parts, totals.get_column(a).to_numpy()))
            window = f"sum(__s_{a}) OVER (PARTITION BY {part} ORDER BY {order} {upto})"
            cols.append(f"element_at({before}, {part} + 1) + {window} AS {a}")
        self.materialize(name, f"SELECT *, {', '.join(cols)} FROM {tagged}")

    # -- session ---------------------------------------------------------------------------------
    def frame(self, sql: str):
        import polars as pl

        return pl.from_arrow(self.spark.sql(sql).toArrow())

    def relation(self, sql: str):
        return self.spark.sql(sql)

    def scalar(self, sql: str):
        return self.spark.sql(sql).collect()[0][0]

    def row(self, sql: str):
        return tuple(self.spark.sql(sql).collect()[0])

    def materialize(self, name: str, sql: str) -> None:
        self.spark.sql(sql).localCheckpoint().createOrReplaceTempView(name)

    def register(self, name: str, frame) -> None:
        self._from_arrow(frame.to_arrow()).createOrReplaceTempView(name)

    def _from_arrow(self, table):
        """A Spark DataFrame of an Arrow table (Spark >= 4 takes Arrow directly, keeping integer
        columns with nulls as integers; older Sparks go through pandas)."""
        try:
            return self.spark.createDataFrame(table)
        except TypeError:  # pragma: no cover - Spark < 4
            return self.spark.createDataFrame(table.to_pandas())

    def copy_parquet(self, sql: str, path: Path, names: list[str]) -> None:
        """Write the result of ``sql`` as a Parquet dataset: the folder ``path`` with one part
        file per partition (``part-00000-...parquet``, ``part-00001-...``), each written by its
        own task, so no step gathers the records in one partition. The result is sorted (a
        sort over range partitions), so the part files in name order hold the rows in order.
        The local file system's checksum files (``.part-....crc``) are removed: some readers
        (Polars, given the folder) take every file of the folder for data."""
        conf = self.spark.conf
        case = conf.get("spark.sql.caseSensitive", "false")
        try:
            conf.set("spark.sql.caseSensitive", "true")  # fk and Fk are two columns
            self.records_dataframe(sql, names).write.mode("errorifexists").parquet(str(path))
        finally:
            conf.set("spark.sql.caseSensitive", case)
        for crc in path.glob(".*.crc"):
            crc.unlink()

    def records_dataframe(self, sql: str, names: list[str]):
        """The Spark DataFrame that :meth:`copy_parquet` writes: ``sql`` with its columns named
        ``names`` (names may differ only in case; set ``spark.sql.caseSensitive`` to use it)."""
        return self.spark.sql(sql).toDF(*names)

    # -- input -----------------------------------------------------------------------------------
    def register_source(self, data, view: str, param: str) -> dict:
        from pyspark.sql import DataFrame

        path = self._path(data)
        if path is not None:
            df = self._read_path(path, param)
        elif isinstance(data, DataFrame):
            df = data
        else:
            df = self._from_arrow(data.to_arrow())  # a Polars frame (RelationalEngine.table)
        df.createOrReplaceTempView(view)
        return dict(df.dtypes)

    def _read_path(self, path: Path, param: str):
        text = str(path)
        if not any(ch in text for ch in "*?[") and not path.exists():
            raise SdcError(f"{param}: {path} does not exist")
        ext = ".parquet" if path.is_dir() else path.suffix.lower()
        if ext in (".parquet", ".pq"):
            return self.spark.read.parquet(text)
        if ext in (".csv", ".tsv", ".txt"):
            sep = "\t" if ext == ".tsv" else ","
            return self.spark.read.csv(text, header=True, inferSchema=True, sep=sep)
        raise SdcError(f"{param}: cannot read {path.name} with the spark engine; expected .parquet, .csv or .tsv")
