"""The Polars engine's writing side: a protection method's new column values go back into a
copy of the caller's table (never the caller's object), keeping row order, column order and,
where the values allow, each column's type; the result is handed back as the caller's frame
type (a pandas result keeps the caller's index)."""

from __future__ import annotations

import functools

import numpy as np
import polars as pl

from ._polars_frame import Table, to_native

__all__ = ["native_frame", "pandas_column", "with_codes", "with_missing", "with_values"]


def _replace(table: Table, columns: dict[str, pl.Series], codes: dict | None = None) -> Table:
    """A new table with ``columns`` replacing the columns of the same names; ``codes`` holds,
    for a column written as an Enum from category codes, its codes and categories (a pandas
    result builds its categorical from them)."""
    if table.deferred:  # the caller's pandas frame stays the source; the new columns go on top
        out = Table(table.source, table.backend, table.index)
        out._cache["__cols__"] = {**table._cache.get("__cols__", {}), **{n: s.alias(n) for n, s in columns.items()}}
    else:
        out = Table(_with_columns(table.frame, columns), table.backend, table.index)
    # the caller's pandas categoricals without an order, the caller's frame, its column labels
    # and the columns of mixed types are the input's; the changed columns accumulate
    cache = table._cache
    for key in ("__unordered__", "__native__", "__labels__", "__mixed__"):
        if key in cache:
            out._cache[key] = cache[key]
    if "__native__" in cache:
        out._cache["__changed__"] = cache.get("__changed__", frozenset()) | set(columns)
        known = {k: v for k, v in cache.get("__codes__", {}).items() if k not in columns}
        if codes:
            known.update(codes)
        if known:
            out._cache["__codes__"] = known
    return out


def _with_columns(frame: pl.DataFrame, columns: dict[str, pl.Series]) -> pl.DataFrame:
    """A new frame with ``columns`` replacing the columns of the same names (no query: the
    other columns are shared, as Polars shares unchanged columns)."""
    try:
        positions = [frame.get_column_index(name) for name in columns]
    except pl.exceptions.ColumnNotFoundError:
        return frame.with_columns([s.alias(name) for name, s in columns.items()])
    out = frame.clone()
    for i, (name, s) in zip(positions, columns.items()):
        out.replace_column(i, s if s.name == name else s.alias(name))
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
    if categories is not None and not isinstance(labels, pl.Series) and _same_text(labels, categories):
        # the labels are the categories: the codes index them as they are (the Enum's own codes)
        return _enum_from_codes(table, name, np.asarray(codes, dtype=np.int64), tuple(categories))
    lab = labels if isinstance(labels, pl.Series) else pl.Series(name, list(labels), strict=False)
    if lab.dtype == pl.Null:
        lab = lab.cast(table.column(name).dtype if table.column(name).dtype != pl.Null else pl.String)
    codes = np.asarray(codes, dtype=np.int64)
    enum = pl.Enum([str(c) for c in categories]) if categories is not None else None
    if len(lab) == 0:
        out = pl.Series(name, [None] * len(codes), dtype=lab.dtype)
    else:
        if enum is not None and _within(lab, enum):  # the few labels made Enum before the gather
            lab, enum = lab.cast(pl.String).cast(enum), None
        miss = codes < 0
        out = lab[pl.Series("i", np.where(miss, 0, codes), dtype=pl.UInt32)]  # a gather, without a query
        if miss.any():
            out = out.scatter(np.flatnonzero(miss), None)
    if enum is not None:
        out = out.cast(pl.String).cast(enum)
    return _replace(table, {name: out.alias(name)})


def _enum_from_codes(table: Table, name: str, codes: np.ndarray, categories: tuple) -> Table:
    """``with_codes`` when the labels are the text categories: the Enum column gathered from
    the categories (made once per set of categories) by the codes (-1 = missing)."""
    if not categories:  # no category: every value missing
        out = pl.Series(name, [None] * len(codes), dtype=_enum(categories))
        return _replace(table, {name: out})
    if codes.size and codes.min() < 0:  # missing values: gathered as the first category, then set missing
        miss = codes < 0
        out = _enum_labels(categories)[pl.Series("i", np.where(miss, 0, codes).astype(np.uint32))]
        out = out.scatter(np.flatnonzero(miss), None)
        codes = np.where(miss, -1, codes)
    else:  # a gather, without a query (an index beyond the categories raises)
        out = _enum_labels(categories)[pl.Series("i", codes.astype(np.uint32))]
    return _replace(table, {name: out.alias(name)}, {name: (codes, categories)})


@functools.lru_cache(maxsize=256)
def _enum_labels(categories: tuple) -> pl.Series:
    """The text categories as a Polars Enum Series of themselves (made once; never changed:
    only gathered from)."""
    return pl.Series("", list(categories), dtype=_enum(categories))


def _same_text(labels, categories) -> bool:
    """Whether ``labels`` are the texts ``categories``, in the same order."""
    labels, categories = list(labels), list(categories)
    return len(labels) == len(categories) and all(isinstance(v, str) for v in labels) and labels == categories


@functools.lru_cache(maxsize=256)
def _enum(categories: tuple) -> pl.Enum:
    """The Polars Enum of these text categories (a type; made once)."""
    return pl.Enum(list(categories))


def _within(labels: pl.Series, enum: pl.Enum) -> bool:
    """Whether every label, as text, is one of the Enum's categories."""
    cats = set(enum.categories.to_list())
    return all(v is None or v in cats for v in labels.cast(pl.String).to_list())


def with_values(table: Table, name: str, values: np.ndarray) -> Table:
    """A copy of ``table`` whose numeric column ``name`` holds ``values`` (float, NaN = missing).
    An integer column stays integer when every new value is a whole number."""
    values = np.asarray(values, dtype=np.float64)
    dtype = table.dtype(name)
    s = pl.Series(name, values, nan_to_null=True)
    if dtype.is_integer():
        finite = values[~np.isnan(values)]
        if np.all(finite == np.round(finite)):
            try:
                s = s.cast(dtype, strict=True)
            except pl.exceptions.PolarsError:  # out of the type's range: keep the wider type
                s = s.cast(pl.Int64, strict=False) if np.all(np.abs(finite) < 2**62) else s
    elif dtype.is_float() and not isinstance(dtype, pl.Float64):
        s = s.cast(dtype)
    return _replace(table, {name: s})


def native_frame(table: Table):
    """The whole table as the caller's frame type (pandas with the caller's index). A pandas
    frame or PyArrow table read from the caller keeps every column no method changed exactly
    as it was (label, type, values); only the changed columns are converted back."""
    if "__native__" in table._cache:
        return _onto_native(table)
    frame = table.frame
    if table.backend == "numpy":
        return frame.to_numpy()
    if table.backend == "polars":
        return frame.clone()  # a new frame object; Polars shares the unchanged columns
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
    cache = table._cache
    native = cache["__native__"]
    labels = cache.get("__labels__", {})
    changed_set = cache.get("__changed__", ())
    changed = list(changed_set) if len(changed_set) <= 1 else [c for c in table.columns if c in changed_set]
    if table.backend == "pyarrow":
        return _onto_arrow(native, table, changed, labels)
    import pandas as pd

    out = native.copy(deep=not _copy_on_write())  # the result never shares writable memory with the input
    if not changed:
        return out
    known = cache.get("__codes__", {})
    for name in changed:
        label = labels.get(name, name)
        dtype = (table.source.pandas(name) if table.deferred else native[label]).dtype
        s = table.column(name)
        plain = dtype is not np.dtype(object) and not isinstance(dtype, pd.CategoricalDtype)
        if plain and name in known and len(known[name][0]):  # an Enum written from its codes
            codes, categories = known[name]
            # codes checked when the column was written (-1 = missing, the others index a category)
            values = pd.Categorical.from_codes(codes, dtype=_categorical_dtype(categories), validate=False)
        else:
            values = _pandas_values(s) if plain else None
        if dtype is np.dtype(object):  # an object column stays object: Python values, None for missing
            col = _as_object(s, native.index)
        elif values is not None:  # the values alone: isetitem puts them under the caller's index
            col = values
        else:
            col = pandas_column(s, native.index)
            if getattr(dtype, "ordered", None) is False and hasattr(col, "cat"):  # an unordered categorical
                col = col.cat.as_unordered()
            elif isinstance(dtype, pd.CategoricalDtype) and not hasattr(col, "cat"):
                col = _as_categorical(col, dtype)
        out.isetitem(native.columns.get_loc(label), col)
    return out


def pandas_column(s: pl.Series, index):
    """One column as pandas receives it from Polars' ``to_pandas`` (through PyArrow), with
    the caller's ``index`` and integers with missing values in pandas' nullable types; the
    common types (numbers, booleans, Enums) are built from NumPy directly."""
    import pandas as pd

    values = _pandas_values(s)
    if values is not None:
        return pd.Series(values, index=index, name=s.name)
    out = to_native({"c": s}, "pandas", index)
    _nullable_integers(pl.DataFrame({"c": s}), out)
    return out["c"].rename(s.name)


def _pandas_values(s: pl.Series):
    """The values of a column of a common type (numbers, booleans, Enums) as pandas stores
    them after Polars' ``to_pandas``: a NumPy array (null -> NaN for floats), a nullable
    integer array, or a Categorical; None for the other types."""
    import pandas as pd

    dt = s.dtype
    if dt.is_float() or ((dt.is_integer() or dt == pl.Boolean) and not s.null_count()):
        return s.to_numpy(writable=True)
    if dt.is_integer():
        return pd.array(s.to_list(), dtype=str(dt))
    if isinstance(dt, pl.Enum) and s.len():
        arrow = s.to_arrow()  # a dictionary array: PyArrow's categories and codes, as to_pandas reads them
        if hasattr(arrow, "indices"):
            x = arrow.indices.to_numpy(zero_copy_only=False)  # float with NaN when there are nulls
            codes = np.where(np.isnan(x), -1, x).astype(np.int64) if x.dtype.kind == "f" else x.astype(np.int64)
            return pd.Categorical.from_codes(codes, dtype=_categorical_dtype(tuple(arrow.dictionary.to_pylist())))
    return None


@functools.lru_cache(maxsize=256)
def _categorical_dtype(categories: tuple):
    """pandas' ordered categorical type of these categories, made once (building the type
    checks its categories: a fixed cost of about 0.1 ms that repeated calls with the same
    categories, a recode with the same breaks, say, need not pay again; the type is
    immutable)."""
    import pandas as pd

    return pd.CategoricalDtype(list(categories), ordered=True)


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

    return _pandas_major() >= 3 or bool(pd.get_option("mode.copy_on_write"))


@functools.lru_cache(maxsize=1)
def _pandas_major() -> int:
    import pandas as pd

    return int(pd.__version__.split(".")[0])
