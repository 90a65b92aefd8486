"""The Polars engine's data layer: accept a caller's table once, hand columns to the kernels as
NumPy arrays, and map results back to the caller's frame type.

Accepted inputs: pandas, Polars and PyArrow tables (anything narwhals reads eagerly), a
``dict`` of equal-length columns, and 2-D NumPy arrays (columns named ``"0"``, ``"1"``, ...;
integer column positions are accepted as names). Nothing here imports pandas or pyarrow
eagerly; Polars is a base dependency and is the in-memory engine for the big group-bys.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import narwhals as nw
import numpy as np
import polars as pl

from .._errors import MissingColumnError, SdcError
from .._validation import missing_columns_message

__all__ = ["Table", "as_table", "missing_columns_message", "to_native"]

_NESTED = (pl.List, pl.Array, pl.Struct, pl.Object)


@dataclass(frozen=True, eq=False)
class Table:
    """A caller's data seen through one interface.

    Attributes
    ----------
    source : polars.DataFrame or polars.LazyFrame
        The data (zero-copy where the source allows; never mutated). A LazyFrame (a scanned
        CSV or Parquet file) is read column by column, only the columns a measure asks for.
    backend : str
        ``"pandas"``, ``"polars"``, ``"pyarrow"`` or ``"numpy"``: the frame type that
        ``to_frame()`` of a result returns.
    index : pandas.Index or None
        The caller's row labels when they carry identity (not 0..n-1).
    """

    source: Any
    backend: str
    index: Any = None
    _cache: dict = field(default_factory=dict, repr=False)
    #: protected records go back as the caller's frame type (as for a relational engine's
    #: table of an in-memory frame)
    in_memory: ClassVar[bool] = True

    @property
    def lazy(self) -> bool:
        return isinstance(self.source, pl.LazyFrame)

    @property
    def deferred(self) -> bool:
        """Whether the columns are a caller's pandas frame read column by column."""
        return isinstance(self.source, _PandasSource)

    @property
    def schema(self) -> Mapping:
        sch = self._cache.get("__schema__")
        if sch is None:
            if self.deferred:
                sch = _DeferredSchema(self)
            else:
                sch = dict(self.source.collect_schema() if self.lazy else self.source.schema)
            self._cache["__schema__"] = sch
        return sch

    @property
    def n(self) -> int:
        if not self.lazy:
            return self.source.height
        if "__n__" not in self._cache:
            self._cache["__n__"] = int(self.source.select(pl.len()).collect().item())
        return self._cache["__n__"]

    @property
    def columns(self) -> list[str]:
        return self.source.columns if isinstance(self.source, pl.DataFrame) else list(self.schema)

    def select(self, names) -> pl.DataFrame:
        """The columns ``names`` as an eager frame (read from the file when lazy, once each)."""
        names = list(names)
        if self.deferred:
            cols = self._read(names)
            if names and "" not in names and len(set(names)) == len(names):
                return pl.DataFrame([cols[c] for c in names])  # Series named as their columns
            return pl.DataFrame({c: cols[c] for c in names}) if names else pl.DataFrame()
        if not self.lazy:
            if names and len(set(names)) == len(names):
                return self.source[names]  # columns by name: no copy, no query
            # a dict keeps every name (a list of Series would rename "" to column_0)
            return pl.DataFrame({c: self.source.get_column(c) for c in names}) if names else pl.DataFrame()
        todo = [c for c in names if c not in self._cache]
        if todo:
            try:
                got = self.source.select(todo).collect()
            except pl.exceptions.PolarsError as exc:
                first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
                raise SdcError(
                    f"data: could not read column(s) {', '.join(todo)} ({first}); expected a readable file or frame"
                ) from None
            self._cache.update({c: got.get_column(c) for c in todo})
        return pl.DataFrame({c: self._cache[c] for c in names}) if names else pl.DataFrame()

    def _read(self, names) -> dict[str, pl.Series]:
        """The columns of a deferred table read so far, ``names`` among them (converted once;
        a protection method's new columns are kept here too)."""
        cols = self._cache.setdefault("__cols__", {})
        todo = [c for c in names if c not in cols]
        if todo:
            cols.update(self.source.read(todo))
        return cols

    @property
    def frame(self) -> pl.DataFrame:
        """Every column as an eager frame."""
        return self.select(self.columns) if self.lazy or self.deferred else self.source

    def column(self, name: str) -> pl.Series:
        if self.deferred:
            return self._read([name])[name]
        if not self.lazy:
            return self.source.get_column(name)
        return self.select([name]).get_column(name)

    def dtype(self, name: str):
        """The Polars type of column ``name`` (of an eager frame without building its schema)."""
        if "__schema__" not in self._cache and isinstance(self.source, pl.DataFrame):
            return self.source.get_column(name).dtype
        return self.schema[name]

    def require(self, names, param: str) -> None:
        """Raise :class:`MissingColumnError` naming every absent column and the available ones."""
        present = self.source.columns if isinstance(self.source, pl.DataFrame) else self.schema
        missing = [c for c in names if c not in present]
        if missing:
            raise MissingColumnError(missing_columns_message(param, missing, self.columns))

    # -- engine-neutral column facts (what the public modules may ask) ---------------------
    def kind(self, name: str) -> str:
        """The column's kind: ``"integer"``, ``"float"``, ``"boolean"``, ``"text"``,
        ``"categorical"`` (declared categories, possibly ordered), ``"temporal"``, ``"null"``
        (no type: every value missing), ``"nested"`` (lists, structs, objects) or ``"other"``."""
        dt = self.dtype(name)
        if dt.is_integer():  # numbers first (no Polars type is both a number and a boolean)
            return "integer"
        if dt.is_float() or dt.is_decimal():
            return "float"
        if dt == pl.Boolean:
            return "boolean"
        if dt == pl.String:
            return "text"
        if isinstance(dt, (pl.Enum, pl.Categorical)):
            return "categorical"
        if dt.is_temporal():
            return "temporal"
        if dt == pl.Null:
            return "null"
        if isinstance(dt, _NESTED):
            return "nested"
        return "other"

    def dtype_name(self, name: str) -> str:
        """The column's type as text, for messages."""
        return str(self.dtype(name))

    def mixed_types(self, name: str) -> str | None:
        """The Python types (``"int, str"``) of a pandas ``object`` column (or a list in a dict)
        whose values mix numbers, text and booleans, or None. Such a column is carried through
        untouched, but no measure or method takes it as a variable: whether ``1`` and ``"1"``
        are one category is the data owner's decision, so one type per column is expected."""
        if self.deferred:
            return self.source.mixed(name)
        return self._cache.get("__mixed__", {}).get(name)

    def is_numeric(self, name: str) -> bool:
        """Numbers (integers or floats; not booleans)."""
        return self.kind(name) in ("integer", "float")

    def categories(self, name: str) -> list | None:
        """The declared categories, in order, of a categorical column with an order (Enum)."""
        dt = self.dtype(name)
        return list(dt.categories) if isinstance(dt, pl.Enum) else None

    def n_missing(self, name: str) -> int:
        """Records whose value is null (or NaN in a float column)."""
        s = self.column(name)
        n = s.null_count()
        if s.dtype.is_float():
            n += int(s.is_nan().sum() or 0)
        return int(n)

    def missing_everywhere(self, names) -> set[str]:
        """The columns among ``names`` whose every value is missing (null or NaN), whatever
        their type (pandas stores an entirely suppressed variable as float NaN). One scan."""
        names = list(names)
        if not names or self.n == 0:
            return set()
        exprs = []
        for c in names:
            e = pl.col(c).is_null()
            if self.dtype(c).is_float():
                e = e | pl.col(c).is_nan().fill_null(True)
            exprs.append(e.all().alias(c))
        row = self.select(names).select(exprs).row(0)
        return {c for c, flag in zip(names, row) if flag}

    def floats(self, names, missing=None, order: Literal["C", "F"] = "C") -> np.ndarray:
        """The columns as a float64 matrix (n, len(names)), C- or Fortran-ordered (``order``);
        missing values (null, NaN and the ``missing`` codes) are NaN. The columns must be
        numeric."""
        names = list(names)
        codes = [
            float(v)
            for v in (missing or ())
            if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
        ]
        if len(names) == 1 and not codes:  # one column: its own copy, shaped (n, 1) (C and Fortran order)
            s = self.column(names[0])
            dt = s.dtype
            if dt.is_integer() and not s.null_count():  # NumPy rounds as Polars' cast does
                return s.to_numpy().astype(np.float64).reshape(-1, 1)
            if not isinstance(dt, pl.Float64):
                s = s.cast(pl.Float64)
            return s.to_numpy(writable=True).reshape(-1, 1)
        out = np.empty((self.n, len(names)), dtype=np.float64, order=order)
        for j, c in enumerate(names):
            x = self.column(c).cast(pl.Float64).to_numpy()  # nulls come back as NaN
            if codes:
                x = np.where(np.isin(x, codes), np.nan, x)
            out[:, j] = x
        return out

    def values(self, name: str) -> np.ndarray:
        """One column's values as a NumPy array (record identifiers for output; object for text)."""
        return self.column(name).to_numpy()

    def float_summary(self, name: str) -> dict:
        """Counts of null/NaN, infinite, negative and zero values and the minimum of a numeric
        column (a few column scans; no record value leaves this function except the minimum)."""
        x = self.column(name).cast(pl.Float64).to_numpy()
        if x.size and x.min() > 0 and np.isfinite(x.max()):  # the common case, in two passes
            return {"n_missing": 0, "n_inf": 0, "n_negative": 0, "n_zero": 0, "min": float(x.min())}
        fin = x[~np.isnan(x)]
        return {
            "n_missing": int(x.size - fin.size),
            "n_inf": int(np.isinf(fin).sum()),
            "n_negative": int((fin < 0).sum()),
            "n_zero": int((fin == 0).sum()),
            "min": float(fin.min()) if fin.size else float("nan"),
        }


def as_table(data: Any, param: str = "data") -> Table:
    """Wrap a supported input in a :class:`Table` (no copy of the caller's object is mutated)."""
    if isinstance(data, Table):
        return data
    if data is None:
        raise SdcError(
            f"{param}: got None; expected a pandas, Polars or PyArrow table, a dict of columns or a 2-D NumPy array"
        )
    if isinstance(data, pl.LazyFrame):
        return Table(data, "polars")
    if isinstance(data, pl.DataFrame):
        return Table(data, "polars")
    if isinstance(data, np.ndarray):
        if data.ndim != 2:
            raise SdcError(
                f"{param}: NumPy array has {data.ndim} dimension(s); expected a 2-D array (records x variables)"
            )
        arrays = {str(j): data[:, j] for j in range(data.shape[1])}
        return Table(pl.DataFrame(arrays), "numpy")
    if isinstance(data, dict):
        check_unique_names(list(data), param)
        mixed = _mixed_lists(data)
        table = Table(_dict_frame(data, param, mixed), "polars")
        table._cache["__mixed__"] = mixed
        return table
    if _is_plain_pandas(data):  # first: asking a pandas frame for attributes costs (hasattr(df, "dtypes"))
        return _pandas_table(data, _pandas_labels(data.columns, param))
    labels = _native_labels(data)
    if labels is not None:
        check_unique_names(labels, param)
    try:
        nwdf = nw.from_native(data, eager_only=True)
    except TypeError:
        raise SdcError(
            f"{param}: unsupported type {type(data).__module__}.{type(data).__name__}; expected a pandas, "
            "Polars or PyArrow table, a dict of columns or a 2-D NumPy array"
        ) from None
    impl = nwdf.implementation
    backend = (
        "pandas"
        if impl.is_pandas()
        else "pyarrow"
        if impl.is_pyarrow()
        else "polars"
        if impl.is_polars()
        else str(impl)
    )
    try:
        frame = nwdf.to_polars()
    except Exception as exc:
        frame = _pandas_without_pyarrow(data) if backend == "pandas" else None
        if frame is None:
            raise SdcError(f"{param}: could not read the table ({exc})") from None
    if labels is not None and frame.columns != [str(c) for c in labels]:
        frame.columns = [str(c) for c in labels]  # Polars renames an empty name "" to column_0
    index = None
    if backend == "pandas":
        frame = _keep_pandas_category_order(data, frame)
        index = _informative_index(data)
        table = Table(frame, backend, index)
        _remember_native(table, data, labels)
        table._cache["__mixed__"] = _mixed_object_columns(data)
        # pandas categoricals become Enums (ordered); remember which were unordered, so that
        # a frame handed back to pandas keeps each column's kind
        table._cache["__unordered__"] = {
            str(n) for n, dt in zip(data.columns, data.dtypes) if getattr(dt, "ordered", None) is False
        }
        return table
    table = Table(frame, backend, index)
    if backend == "pyarrow":
        _remember_native(table, data, labels)
    return table


def _is_plain_pandas(data) -> bool:
    """A pandas DataFrame with one level of column labels (read column by column)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(data, pd.DataFrame) and not isinstance(data.columns, pd.MultiIndex)


def _pandas_table(pdf, labels: Mapping) -> Table:
    """A pandas frame as a :class:`Table` whose columns are converted when first used
    (``labels``: the column labels by their text, from :func:`_pandas_labels`)."""
    table = Table(_PandasSource(pdf, labels), "pandas", _informative_index(pdf))
    table._cache["__native__"] = pdf
    table._cache["__labels__"] = labels
    table._cache["__changed__"] = frozenset()
    return table


#: the last pandas column index read and its labels by their text (a pandas ``Index`` is
#: immutable: the same object has the same labels, checked once)
_LAST_LABELS: tuple = (None, None)


def _pandas_labels(columns, param: str) -> Mapping:
    """``{text: label}`` of a pandas frame's column labels, which must be unique as text; the
    labels of the same column index as the call before are not read again (the dict is shared
    by the tables of that index: never changed)."""
    global _LAST_LABELS
    last, labels = _LAST_LABELS
    if columns is last:
        return labels
    found = columns.tolist()
    check_unique_names(found, param)
    labels = {str(c): c for c in found}
    _LAST_LABELS = (columns, labels)
    return labels


class _PandasSource:
    """A caller's pandas frame read column by column: a column becomes a Polars Series the
    first time a measure or method asks for it, as the whole frame would have been converted
    (NumPy-backed numbers and booleans directly, NaN as null; the other columns through
    PyArrow, several at once; text categoricals as Enums in their declared order), so that a
    call on a few columns of a wide frame converts only those."""

    def __init__(self, pdf, labels: Mapping) -> None:
        self.pdf = pdf
        self.labels = labels  # text -> the caller's label (read-only)
        self.height = len(pdf)
        self._mixed: dict[str, str | None] = {}
        self._columns: dict = {}

    def pandas(self, name: str):
        """The caller's column ``name`` (a pandas Series, looked up once)."""
        col = self._columns.get(name)
        if col is None:
            col = self._columns[name] = self.pdf[self.labels[name]]
        return col

    def read(self, names) -> dict[str, pl.Series]:
        """The columns ``names`` (text names) as Polars Series."""
        out, rest = {}, []
        for name in names:
            col = self.pandas(name)
            dt = col.dtype
            if isinstance(dt, np.dtype) and dt.isnative and (dt.kind in "biu" or (dt.kind == "f" and dt.itemsize >= 4)):
                out[name] = pl.Series(name, col.to_numpy(), nan_to_null=True)
            else:
                rest.append(name)
        if rest:
            out.update(self._convert([self.labels[c] for c in rest]))
        return out

    def _convert(self, labels) -> dict[str, pl.Series]:
        """Columns through PyArrow, several at once; a column PyArrow cannot read (Python
        objects of several types) alone, value by value."""
        sub = self.pdf[labels]
        try:
            frame = nw.from_native(sub, eager_only=True).to_polars()
        except Exception as exc:
            if len(labels) > 1:  # each column is read as it would be alone
                return {k: v for label in labels for k, v in self._convert([label]).items()}
            frame = _pandas_without_pyarrow(sub)
            if frame is None:
                raise SdcError(f"data: could not read the table ({exc})") from None
        frame.columns = [str(c) for c in labels]  # Polars renames an empty name "" to column_0
        frame = _keep_pandas_category_order(sub, frame)
        return {c: frame.get_column(c) for c in frame.columns}

    def mixed(self, name: str) -> str | None:
        """The Python types of an ``object`` column mixing value kinds, or None."""
        if name not in self._mixed:
            self._mixed[name] = _mixed_kinds(self.pandas(name))
        return self._mixed[name]


class _DeferredSchema(Mapping):
    """The column types of a deferred table: the names at once, a type when asked for."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def __getitem__(self, name):
        if name not in self._table.source.labels:
            raise KeyError(name)
        return self._table.column(name).dtype

    def __contains__(self, name) -> bool:
        return name in self._table.source.labels

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.source.labels)

    def __len__(self) -> int:
        return len(self._table.source.labels)


def _native_labels(data) -> list | None:
    """The column labels of a pandas frame or PyArrow table, as the caller wrote them."""
    if hasattr(data, "column_names") and not hasattr(data, "dtypes"):  # pyarrow
        return list(data.column_names)
    cols = getattr(data, "columns", None)
    return list(cols) if cols is not None and hasattr(data, "dtypes") else None


def check_unique_names(labels, param: str = "data") -> None:
    """Column names must be unique, also once read as text (``0`` and ``"0"`` are one name)."""
    seen: dict[str, list] = {}
    for lab in labels:
        seen.setdefault(str(lab), []).append(lab)
    for text, labs in seen.items():
        if len(labs) > 1:
            if len({repr(v) for v in labs}) == 1:
                raise SdcError(f"{param}: column {text} appears {len(labs)} times; expected unique column names")
            raise SdcError(
                f"{param}: column names {' and '.join(dict.fromkeys(repr(v) for v in labs))} are the same name "
                f"{text!r} as text; expected unique column names"
            )


def _remember_native(table: Table, data, labels) -> None:
    """Keep the caller's frame and its column labels: a protected result hands back the
    columns a method did not change exactly as they were (name, type, values)."""
    table._cache["__native__"] = data
    table._cache["__labels__"] = {str(c): c for c in labels or ()}
    table._cache["__changed__"] = frozenset()


def _kind(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, float, np.integer, np.floating)):
        return "number"
    return "str" if isinstance(v, str) else type(v).__name__


def _mixed_lists(data: dict) -> dict[str, str]:
    """Columns of a dict given as lists that mix numbers, text and booleans (Polars would read
    them as text): column name -> the Python types found."""
    out = {}
    for name, values in data.items():
        if isinstance(values, (list, tuple)) or (isinstance(values, np.ndarray) and values.dtype == object):
            present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
            if len({_kind(v) for v in present}) > 1:
                out[str(name)] = ", ".join(sorted({type(v).__name__ for v in present}))
    return out


def _mixed_object_columns(pdf) -> dict[str, str]:
    """pandas ``object`` columns mixing value kinds (numbers, text, booleans, others):
    column name -> the Python types found."""
    out = {}
    for name, dtype in zip(pdf.columns, pdf.dtypes):
        kinds = _mixed_kinds(pdf[name]) if dtype is np.dtype(object) else None
        if kinds:
            out[str(name)] = kinds
    return out


def _mixed_kinds(col) -> str | None:
    """The Python types found in a pandas ``object`` column mixing value kinds, or None."""
    import pandas as pd

    if col.dtype is not np.dtype(object):
        return None
    if pd.api.types.infer_dtype(col, skipna=True) in ("mixed", "mixed-integer"):
        kinds = sorted({type(v).__name__ for v in col.dropna().tolist()})
        if len(kinds) > 1:
            return ", ".join(kinds)
    return None


def _informative_index(pdf):
    """A pandas frame's index unless it is the default 0..n-1 (which carries no identity)."""
    idx = pdf.index
    if type(idx).__name__ == "RangeIndex" and idx.start == 0 and idx.step == 1 and idx.name is None:
        return None
    return idx


def _dict_frame(data: dict, param: str, mixed=()) -> pl.DataFrame:
    """A dict of columns as a frame: lists mixing integers and floats become floats; lists
    mixing numbers and text (``mixed``) are kept as Python objects, values unchanged; columns
    of different lengths are an error naming them."""
    lengths = {str(k): len(v) for k, v in data.items() if hasattr(v, "__len__") and not isinstance(v, str)}
    if len(set(lengths.values())) > 1:
        raise SdcError(
            f"{param}: columns of different lengths ({', '.join(f'{k}: {n}' for k, n in lengths.items())}); "
            "expected equal-length columns"
        )
    try:
        return pl.DataFrame(
            {str(k): pl.Series(str(k), list(v), dtype=pl.Object) if str(k) in mixed else v for k, v in data.items()},
            strict=False,
        )
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        raise SdcError(
            f"{param}: could not build a table from the dict ({first}); expected equal-length columns "
            "of numbers or labels"
        ) from None


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


def to_native(columns: dict[str, Any], backend: str, index=None):
    """Build a frame of the caller's type from a dict of 1-D arrays (a pandas result gets the
    caller's ``index`` back, so that it joins to the input by label)."""
    df = pl.DataFrame(columns)
    if backend in ("polars", "numpy"):
        return df
    if backend == "pandas":
        try:
            out = df.to_pandas()
        except ModuleNotFoundError:  # no PyArrow: per-record columns are plain NumPy arrays
            import pandas as pd

            out = pd.DataFrame({name: np.asarray(col) for name, col in columns.items()})
        if index is not None:
            out.index = index
        return out
    if backend == "pyarrow":
        return df.to_arrow()
    return df
