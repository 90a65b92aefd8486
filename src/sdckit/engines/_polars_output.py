"""The Polars engine's writing side: a protection method's new column values go back into a
copy of the caller's table (never the caller's object), keeping row order, column order and,
where the values allow, each column's type; the result is handed back as the caller's frame
type (a pandas result keeps the caller's index)."""

from __future__ import annotations

import numpy as np
import polars as pl

from ._polars_frame import Table, to_native

__all__ = ["native_frame", "with_codes", "with_missing", "with_values"]


def _replace(table: Table, columns: dict[str, pl.Series]) -> Table:
    frame = table.frame.with_columns([s.alias(name) for name, s in columns.items()])
    out = Table(frame, table.backend, table.index)
    # the caller's pandas categoricals without an order, the caller's frame, its column labels
    # and the columns of mixed types are the input's; the changed columns accumulate
    for key in ("__unordered__", "__native__", "__labels__", "__mixed__"):
        if key in table._cache:
            out._cache[key] = table._cache[key]
    if "__native__" in table._cache:
        out._cache["__changed__"] = table._cache.get("__changed__", frozenset()) | set(columns)
    return out


def with_missing(table: Table, masks: dict[str, np.ndarray]) -> Table:
    """A copy of ``table`` in which the cells where ``masks[column]`` is True are missing (null).
    Column types are kept (an integer column stays integer, with nulls)."""
    new = {}
    for name, mask in masks.items():
        mask = np.asarray(mask, dtype=bool)
        if not mask.any():
            continue
        col = table.column(name)
        new[name] = pl.select(
            pl.when(pl.lit(pl.Series(mask))).then(None).otherwise(pl.lit(col)).alias(name)
        ).to_series()
    return _replace(table, new) if new else table


def with_codes(table: Table, name: str, codes: np.ndarray, labels, categories: list | None = None) -> Table:
    """A copy of ``table`` whose column ``name`` holds ``labels[codes]`` (code ``-1`` = missing).

    ``labels`` is a Series (or list) of category values. ``categories``, when given, makes the
    column a Polars ``Enum`` with that category order (ordered variables keep their order);
    otherwise the column takes the labels' type.
    """
    lab = labels if isinstance(labels, pl.Series) else pl.Series(name, list(labels), strict=False)
    if lab.dtype == pl.Null:
        lab = lab.cast(table.column(name).dtype if table.column(name).dtype != pl.Null else pl.String)
    codes = np.asarray(codes, dtype=np.int64)
    idx = pl.Series("i", np.where(codes < 0, 0, codes), dtype=pl.Int64)
    if len(lab) == 0:
        out = pl.Series(name, [None] * len(codes), dtype=lab.dtype)
    else:
        out = lab.gather(idx)
        out = pl.select(pl.when(pl.lit(pl.Series(codes < 0))).then(None).otherwise(pl.lit(out))).to_series()
    if categories is not None:
        out = out.cast(pl.String).cast(pl.Enum([str(c) for c in categories]))
    return _replace(table, {name: out.alias(name)})


def with_values(table: Table, name: str, values: np.ndarray) -> Table:
    """A copy of ``table`` whose numeric column ``name`` holds ``values`` (float, NaN = missing).
    An integer column stays integer when every new value is a whole number."""
    values = np.asarray(values, dtype=np.float64)
    dtype = table.schema[name]
    s = pl.Series(name, values).fill_nan(None)
    if dtype.is_integer():
        finite = values[~np.isnan(values)]
        if np.all(finite == np.round(finite)):
            try:
                s = s.cast(dtype, strict=True)
            except pl.exceptions.PolarsError:  # out of the type's range: keep the wider type
                s = s.cast(pl.Int64, strict=False) if np.all(np.abs(finite) < 2**62) else s
    elif dtype.is_float():
        s = s.cast(dtype)
    return _replace(table, {name: s})


def native_frame(table: Table):
    """The whole table as the caller's frame type (pandas with the caller's index). A pandas
    frame or PyArrow table read from the caller keeps every column no method changed exactly
    as it was (label, type, values); only the changed columns are converted back."""
    frame = table.frame
    if table.backend == "numpy":
        return frame.to_numpy()
    if "__native__" in table._cache:
        return _onto_native(table)
    out = to_native({c: frame.get_column(c) for c in frame.columns}, table.backend, table.index)
    if table.backend == "pandas":
        _nullable_integers(frame, out)
        for name in table._cache.get("__unordered__", ()):
            if name in out.columns and hasattr(out[name], "cat"):
                out[name] = out[name].cat.as_unordered()
    return out


def _nullable_integers(frame: pl.DataFrame, out) -> None:
    """Integer columns with missing values stay integer in pandas (its nullable ``Int64``
    family) instead of turning into floats: a suppressed cell must not change how the
    column's other values read."""
    import pandas as pd

    for name, dtype in frame.schema.items():
        s = frame.get_column(name)
        if dtype.is_integer() and s.null_count():
            out[name] = pd.array(s.to_list(), dtype=str(dtype))  # "Int64", "UInt8", ...: pandas nullable names


def _onto_native(table: Table):
    """The caller's frame with the changed columns replaced, in place and under their labels."""
    native = table._cache["__native__"]
    labels = table._cache.get("__labels__", {})
    changed = [c for c in table.columns if c in table._cache.get("__changed__", ())]
    if table.backend == "pyarrow":
        return _onto_arrow(native, table, changed, labels)
    import pandas as pd

    out = native.copy(deep=not _copy_on_write())  # the result never shares writable memory with the input
    if not changed:
        return out
    sub = table.select(changed)
    new = to_native({f"c{i}": sub.get_column(c) for i, c in enumerate(changed)}, "pandas", native.index)
    _nullable_integers(sub.rename({c: f"c{i}" for i, c in enumerate(changed)}), new)
    unordered = table._cache.get("__unordered__", ())
    for i, name in enumerate(changed):
        col = new[f"c{i}"]
        label = labels.get(name, name)
        pos = list(native.columns).index(label)
        # an object column stays object: Python values, None for missing
        if native.dtypes.iloc[pos] is np.dtype(object):
            col = _as_object(sub.get_column(name), native.index)
        elif name in unordered and hasattr(col, "cat"):
            col = col.cat.as_unordered()
        elif isinstance(native.dtypes.iloc[pos], pd.CategoricalDtype) and not hasattr(col, "cat"):
            col = _as_categorical(col, native.dtypes.iloc[pos])
        out.isetitem(pos, col)
    return out


def _as_categorical(col, dtype):
    """A changed column of a pandas categorical whose categories are not text (integers, say:
    Polars has no such categorical) back to the caller's categorical type, when every value is
    one of its categories (a suppression, a PRAM draw); a recode to new values keeps the new
    column's type."""
    import pandas as pd

    values = col.astype(object).where(col.notna(), None)
    if not pd.Index(values.dropna().unique()).isin(dtype.categories).all():
        return col
    return pd.Series(pd.Categorical(values, dtype=dtype), index=col.index)


def _as_object(s: pl.Series, index):
    import pandas as pd

    values = s.cast(pl.String).to_list() if isinstance(s.dtype, (pl.Enum, pl.Categorical)) else s.to_list()
    return pd.Series(values, index=index, dtype=object)


def _onto_arrow(native, table: Table, changed: list[str], labels: dict):
    """A PyArrow table with the changed columns replaced (cast back to their type when the
    values allow)."""
    import pyarrow as pa

    out = native
    if not changed:
        return out
    arrow = table.select(changed).to_arrow()
    for i, name in enumerate(changed):
        label = labels.get(name, name)
        pos = native.column_names.index(label)
        col = arrow.column(i)
        try:
            col = col.cast(native.schema.field(pos).type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            pass  # values of another type (a recoded number now a label): keep the new type
        out = out.set_column(pos, pa.field(label, col.type), col)
    return out


def _copy_on_write() -> bool:
    """pandas copies on write (always from pandas 3): a shallow copy is then independent."""
    import pandas as pd

    return int(pd.__version__.split(".")[0]) >= 3 or bool(pd.get_option("mode.copy_on_write"))
