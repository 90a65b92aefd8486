"""Engines: the one seam for record-level work (see :mod:`sdckit.engines.base`).

``get_engine()`` returns the in-memory Polars engine; ``get_engine("duckdb")`` and
``get_engine("spark")`` will return the out-of-memory engines. Public measures never touch a
frame library themselves: they ask their engine.
"""

from __future__ import annotations

from .._errors import SdcError
from .base import EncodedKeys, Engine, TableLike

__all__ = ["EncodedKeys", "Engine", "TableLike", "get_engine"]

ENGINES = ("polars",)
_INSTANCES: dict = {}


def get_engine(engine=None) -> Engine:
    """The engine named ``engine`` (``None`` or ``"polars"``: in memory), or ``engine`` itself
    when it already is one."""
    if engine is None:
        engine = "polars"
    if not isinstance(engine, str):
        if engine in _INSTANCES.values() or isinstance(engine, Engine):
            return engine
        raise SdcError(f"engine: got {type(engine).__name__}; expected one of {', '.join(ENGINES)}")
    if engine not in ENGINES:
        raise SdcError(f"engine: got {engine!r}; expected one of {', '.join(map(repr, ENGINES))}")
    if engine not in _INSTANCES:
        from .polars import PolarsEngine

        _INSTANCES[engine] = PolarsEngine()
    return _INSTANCES[engine]
