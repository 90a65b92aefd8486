"""Engines: the one seam for record-level work (see :mod:`sdckit.engines.base`).

``get_engine()`` returns the in-memory Polars engine; ``get_engine("duckdb")`` and
``get_engine("spark")`` return the out-of-core engines (:class:`DuckDBEngine`,
:class:`SparkEngine`), which keep the records in the database. Public measures never touch a
frame library themselves: they ask their engine.
"""

from __future__ import annotations

from typing import cast

from .._errors import SdcError
from .base import OUT_OF_CORE_MEASURES, RECORDS, STORED, EncodedKeys, Engine, EngineCapabilities, TableLike, refusal

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "OUT_OF_CORE_MEASURES",
    "SETTINGS",
    "RECORDS",
    "STORED",
    "DuckDBEngine",
    "EncodedKeys",
    "Engine",
    "PolarsEngine",
    "SparkEngine",
    "TableLike",
    "get_engine",
    "in_memory_engine",
    "is_out_of_core",
    "make_engine",
    "refusal",
]

ENGINES = ("polars", "duckdb", "spark")
#: the engine of ``engine=None`` for an in-memory table: Polars, which holds the records in memory
DEFAULT_ENGINE = "polars"
#: per engine, the settings of its constructor that a caller may give by name (the CLI's engine
#: options): see :class:`DuckDBEngine` and :class:`SparkEngine`
SETTINGS: dict[str, tuple[str, ...]] = {"polars": (), "duckdb": ("memory_limit", "threads"), "spark": ("master",)}
_INSTANCES: dict = {}


def get_engine(engine=None, data=None) -> Engine:
    """The engine named ``engine`` or ``engine`` itself when it already is one.

    ``None`` picks the engine from ``data``: a DuckDB relation goes to DuckDB, a Spark DataFrame
    to Spark, anything else to the in-memory Polars engine. ``"duckdb"`` works on DuckDB's
    default connection and ``"spark"`` on the active Spark session (or a new local one); build a
    :class:`DuckDBEngine` or :class:`SparkEngine` for a memory limit, a connection or a master.
    """
    if engine is None:
        engine = _engine_of_data(data)
    if not isinstance(engine, str):
        # the engines of this package first (a nominal check costs ~0.1 us, the protocol's ~50 us)
        if isinstance(engine, EngineCapabilities) or isinstance(engine, Engine):
            return cast(Engine, engine)
        raise SdcError(f"engine: got {type(engine).__name__}; expected one of {', '.join(ENGINES)}")
    if engine not in ENGINES:
        raise SdcError(f"engine: got {engine!r}; expected one of {', '.join(map(repr, ENGINES))}")
    if engine not in _INSTANCES:
        _INSTANCES[engine] = _new_engine(engine)
    return _INSTANCES[engine]


def make_engine(name: str, **settings) -> Engine:
    """A new engine ``name`` (one of :data:`ENGINES`) built with ``settings`` (names of
    ``SETTINGS[name]``; None keeps the engine's default)."""
    if name not in ENGINES:
        raise SdcError(f"engine: got {name!r}; expected one of {', '.join(map(repr, ENGINES))}")
    unknown = sorted(set(settings) - set(SETTINGS[name]))
    if unknown:
        raise SdcError(f"{unknown[0]}: not a setting of the {name} engine; expected one of {', '.join(SETTINGS[name])}")
    return _engine_class(name)(**{k: v for k, v in settings.items() if v is not None})


def _engine_class(name: str):
    if name == "duckdb":
        from .duckdb import DuckDBEngine

        return DuckDBEngine
    if name == "spark":
        from .spark import SparkEngine

        return SparkEngine
    from .polars import PolarsEngine

    return PolarsEngine


def _new_engine(name: str):
    """The shared engine of ``engine=name``: DuckDB's on DuckDB's default connection."""
    cls = _engine_class(name)
    return cls.default() if name == "duckdb" else cls()


def _engine_of_data(data) -> str:
    module = type(data).__module__ or ""
    if module.split(".")[0] in ("duckdb", "_duckdb") and type(data).__name__ == "DuckDBPyRelation":
        return "duckdb"
    if module.startswith("pyspark.sql") and type(data).__name__ == "DataFrame":
        return "spark"
    return "polars"


def in_memory_engine(engine, what: str, data=None):
    """``get_engine(engine, data)`` for a step that needs the records in memory (the
    :data:`RECORDS` capability): an engine without it is an error with the one message of
    :func:`refusal`, which says which measures it runs."""
    return get_engine(engine, data).require(RECORDS, what)


def is_out_of_core(engine) -> bool:
    """Whether ``engine`` keeps the records outside Python (DuckDB, Spark): it lacks the
    :data:`RECORDS` capability."""
    return not get_engine(engine).has(RECORDS)


def __getattr__(name: str):
    if name in ("DuckDBEngine", "SparkEngine", "PolarsEngine"):
        return _engine_class(name[: -len("Engine")].lower())
    raise AttributeError(name)
