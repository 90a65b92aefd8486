"""Transitional alias of :mod:`sdckit.engines._polars_frame` (to be removed: use the engine)."""

from .engines._polars_frame import Table, as_table, missing_columns_message, to_native  # noqa: F401
