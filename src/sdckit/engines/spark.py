"""The Spark engine: records stay in Spark (a Spark DataFrame, or a Parquet/CSV path read by
Spark) on any cluster; only the compressed table and aggregates come back to Python."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .._errors import SdcError
from ._relational import RelationalEngine

__all__ = ["SparkEngine"]


def _import_pyspark():
    try:
        import pyspark  # noqa: F401
        from pyspark.sql import SparkSession
    except ImportError:
        raise SdcError("engine: 'spark' needs the pyspark package (and Java); install sdckit[spark]") from None
    return SparkSession


def _java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java")) or bool(home and Path(home, "bin", "java").exists())


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

    def __init__(self, session=None, *, master: str | None = None, config: dict | None = None):
        _import_pyspark()
        if master is not None and (not isinstance(master, str) or not master.strip()):
            raise SdcError(f"master: got {master!r}; expected a Spark master URL such as 'local[2]'")
        self._session = session
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
        if not _java_available():
            raise SdcError(
                "engine: Spark cannot start: Java was not found; install a Java 17 runtime (Debian: "
                "openjdk-17-jre-headless) and put java on PATH or set JAVA_HOME"
            )
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
    def quantiles_sql(expr: str, probs) -> str:
        return f"percentile({expr}, array({', '.join(repr(float(p)) for p in probs)}))"

    def record_number(self) -> str:
        return "row_number() OVER (ORDER BY monotonically_increasing_id()) - 1"

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

    def copy_parquet(self, sql: str, path: Path) -> None:
        out = Path(tempfile.mkdtemp(prefix=".sdckit-spark-", dir=path.parent))
        try:
            self.spark.sql(sql).coalesce(1).write.mode("overwrite").parquet(str(out / "part"))
            (part,) = sorted((out / "part").glob("*.parquet"))
            os.replace(part, path)
        finally:
            shutil.rmtree(out, ignore_errors=True)

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
