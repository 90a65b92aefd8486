"""Thin data layer: accept a caller's table once, hand columns to the kernels, and map
results back to the caller's frame type.

Accepted inputs: pandas, Polars and PyArrow tables (anything narwhals reads eagerly), a
``dict`` of equal-length columns, and 2-D NumPy arrays (columns named ``"0"``, ``"1"``, ...;
integer column positions are accepted as names). Nothing here imports pandas or pyarrow
eagerly; Polars is a base dependency and is the in-memory engine for the big group-bys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import narwhals as nw
import numpy as np
import polars as pl

from ._errors import MissingColumnError, SdcError

__all__ = ["Table", "as_table"]


@dataclass(frozen=True)
class Table:
    """A caller's data seen through one interface.

    Attributes
    ----------
    frame : polars.DataFrame
        The data as a Polars frame (zero-copy where the source allows). Never mutated.
    backend : str
        ``"pandas"``, ``"polars"``, ``"pyarrow"`` or ``"numpy"``: the frame type that
        ``to_frame()`` of a result returns.
    """

    frame: pl.DataFrame
    backend: str

    @property
    def n(self) -> int:
        return self.frame.height

    @property
    def columns(self) -> list[str]:
        return self.frame.columns

    def column(self, name: str) -> pl.Series:
        return self.frame.get_column(name)

    def require(self, names, param: str) -> None:
        """Raise :class:`MissingColumnError` naming every absent column and the available ones."""
        missing = [c for c in names if c not in self.frame.columns]
        if missing:
            raise MissingColumnError(missing_columns_message(param, missing, self.frame.columns))


def missing_columns_message(param: str, missing, available) -> str:
    avail = ", ".join(map(str, available[:40])) + (" ..." if len(available) > 40 else "")
    return f"{param}: column(s) {', '.join(map(str, missing))} not found in the data; available columns: {avail}"


def as_table(data: Any, param: str = "data") -> Table:
    """Wrap a supported input in a :class:`Table` (no copy of the caller's object is mutated)."""
    if isinstance(data, Table):
        return data
    if data is None:
        raise SdcError(f"{param}: got None; expected a pandas, Polars or PyArrow table, a dict of columns or a 2-D NumPy array")
    if isinstance(data, pl.LazyFrame):
        return Table(data.collect(), "polars")
    if isinstance(data, pl.DataFrame):
        return Table(data, "polars")
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise SdcError(f"{param}: NumPy array has {data.ndim} dimension(s); expected a 2-D array (records x variables)")
        cols = {str(j): data[:, j] for j in range(data.shape[1])}
        return Table(pl.DataFrame(cols), "numpy")
    if isinstance(data, dict):
        try:
            return Table(pl.DataFrame({str(k): v for k, v in data.items()}), "polars")
        except Exception as exc:  # ragged lengths and the like
            raise SdcError(f"{param}: could not build a table from the dict ({exc}); expected equal-length columns") from None
    try:
        nwdf = nw.from_native(data, eager_only=True)
    except TypeError:
        raise SdcError(
            f"{param}: unsupported type {type(data).__module__}.{type(data).__name__}; expected a pandas, "
            "Polars or PyArrow table, a dict of columns or a 2-D NumPy array"
        ) from None
    impl = nwdf.implementation
    backend = "pandas" if impl.is_pandas() else "pyarrow" if impl.is_pyarrow() else "polars" if impl.is_polars() else str(impl)
    cols = [str(c) for c in nwdf.columns]
    if len(set(cols)) != len(cols):
        raise SdcError(f"{param}: duplicate column names; expected unique names")
    try:
        frame = nwdf.to_polars()
    except Exception as exc:
        frame = _pandas_without_pyarrow(data) if backend == "pandas" else None
        if frame is None:
            raise SdcError(f"{param}: could not read the table ({exc})") from None
    if backend == "pandas":
        frame = _keep_pandas_category_order(data, frame)
    return Table(frame, backend)


def _pandas_without_pyarrow(pdf) -> pl.DataFrame | None:
    """Column-by-column conversion of a pandas frame when PyArrow is not installed (Polars
    needs it for object, string, categorical and nullable columns): NumPy-backed numeric
    columns are passed as arrays, the others as Python values with missing as None."""
    try:
        cols = []
        for name in pdf.columns:
            col = pdf[name]
            kind = getattr(col.dtype, "kind", "O")
            if kind in "biuf" and type(col.dtype).__module__.startswith("numpy"):
                cols.append(pl.Series(str(name), col.to_numpy()))
            else:
                values = col.astype(object).where(col.notna(), None).tolist()
                cols.append(pl.Series(str(name), values, strict=False))
        return pl.DataFrame(cols)
    except Exception:  # anything unexpected: report the original error
        return None


def _keep_pandas_category_order(pdf, frame: pl.DataFrame) -> pl.DataFrame:
    """pandas categoricals with text categories become Polars Enums in the declared order
    (unobserved categories kept), so ordinal variables keep their order."""
    casts = []
    for name, dtype in zip(pdf.columns, pdf.dtypes):
        cats = getattr(dtype, "categories", None)
        if cats is not None and len(cats) and all(isinstance(c, str) for c in cats):
            casts.append(pl.col(str(name)).cast(pl.String).cast(pl.Enum(list(cats))))
    return frame.with_columns(casts) if casts else frame


def to_native(columns: dict[str, Any], backend: str):
    """Build a frame of the caller's type from a dict of 1-D arrays."""
    df = pl.DataFrame(columns)
    if backend in ("polars", "numpy"):
        return df
    if backend == "pandas":
        try:
            return df.to_pandas()
        except ModuleNotFoundError:  # no PyArrow: per-record columns are plain NumPy arrays
            import pandas as pd

            return pd.DataFrame({name: np.asarray(col) for name, col in columns.items()})
    if backend == "pyarrow":
        return df.to_arrow()
    return df
