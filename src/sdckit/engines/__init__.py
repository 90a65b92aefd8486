"""Engines: the one seam for record-level work (see :mod:`sdckit.engines.base`).

``get_engine()`` returns the in-memory Polars engine; ``get_engine("duckdb")`` and
``get_engine("spark")`` return the out-of-core engines (:class:`DuckDBEngine`,
:class:`SparkEngine`), which keep the records in the database. Public measures never touch a
frame library themselves: they ask their engine.
"""

from __future__ import annotations

import importlib
from typing import cast

from .._errors import SdcError
from .base import OUT_OF_CORE_MEASURES, RECORDS, STORED, EncodedKeys, Engine, EngineCapabilities, TableLike, refusal
from .records import Records, local_records

__all__ = [
    "DEFAULT_ENGINE",
    "ENGINES",
    "OUT_OF_CORE_MEASURES",
    "RECORDS",
    "STORED",
    "DuckDBEngine",
    "EncodedKeys",
    "Engine",
    "PolarsEngine",
    "Records",
    "SparkEngine",
    "TableLike",
    "get_engine",
    "in_memory_engine",
    "is_out_of_core",
    "local_engine",
    "local_records",
    "engine_settings",
    "make_engine",
    "refusal",
]

#: every engine: its name, module and class; the first is the default, in-memory engine. Adding an
#: engine is its own module (a class with the protocol's members, its ``capabilities``,
#: ``settings``, ``shared`` and ``owns``) and one line here.
_CLASSES = {
    "polars": (".polars", "PolarsEngine"),
    "duckdb": (".duckdb", "DuckDBEngine"),
    "spark": (".spark", "SparkEngine"),
}
ENGINES = tuple(_CLASSES)
#: the engine of ``engine=None`` for an in-memory table: Polars, which holds the records in memory
DEFAULT_ENGINE = ENGINES[0]
_INSTANCES: dict = {}
_LOADED: dict = {}


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
    :func:`engine_settings`; None keeps the engine's default)."""
    if name not in ENGINES:
        raise SdcError(f"engine: got {name!r}; expected one of {', '.join(map(repr, ENGINES))}")
    allowed = engine_settings(name)
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise SdcError(f"{unknown[0]}: not a setting of the {name} engine; expected one of {', '.join(allowed)}")
    return _engine_class(name)(**{k: v for k, v in settings.items() if v is not None})


def engine_settings(name: str) -> tuple[str, ...]:
    """The settings of engine ``name`` that a caller may give by name (the CLI's engine options):
    ``memory_limit`` and ``threads`` of DuckDB, ``master`` of Spark."""
    return tuple(_engine_class(name).settings)


def _engine_class(name: str):
    """The class of engine ``name`` (its module imported on first use)."""
    cls = _LOADED.get(name)
    if cls is None:
        module, attr = _CLASSES[name]
        cls = _LOADED[name] = getattr(importlib.import_module(module, __name__), attr)
    return cls


def _new_engine(name: str):
    """The shared engine of ``engine=name`` (DuckDB's: on DuckDB's default connection)."""
    return _engine_class(name).shared()


def _engine_of_data(data) -> str:
    """The engine whose own kind of table ``data`` is (the default engine for any other)."""
    module = type(data).__module__ or ""
    if module.startswith(("polars", "pandas", "pyarrow", "numpy", "builtins")):
        return DEFAULT_ENGINE  # the common case, without asking every engine
    return next((name for name in ENGINES[1:] if _engine_class(name).owns(data)), DEFAULT_ENGINE)


def local_engine() -> Engine:
    """The in-memory engine that every engine hands its small tables to (``engine.local()``):
    label tables, per-pattern results and per-record output a result object builds after the
    records have been left behind."""
    return get_engine(DEFAULT_ENGINE)


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
    for engine, (_, attr) in _CLASSES.items():
        if name == attr:
            return _engine_class(engine)
    raise AttributeError(name)
