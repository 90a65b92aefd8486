"""Transitional alias of :mod:`sdckit.engines._polars_encode` (to be removed: use the engine)."""

from .engines._polars_encode import encode_column, encode_keys  # noqa: F401
from .engines.base import EncodedKeys  # noqa: F401
