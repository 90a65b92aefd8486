"""Data access of the information-loss measures: every frame-library operation of
:mod:`sdckit.utility` happens in the functions of this module, nowhere else.

Each function takes the wrapped tables (or one column of them) and returns NumPy arrays or
plain Python values; the measures themselves (:mod:`sdckit.utility._steps` and the kernels
of :mod:`sdckit._core.infoloss`) never see a frame. These functions are the part that an
engine other than the in-memory Polars one would provide.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .._encode import encode_column
from .._frame import as_table, missing_columns_message

__all__ = [
    "absent_columns", "column_kinds", "dtype_name", "encode_pair", "enum_order", "float_matrix", "group_sums",
    "pandas_order", "pram_frame", "read_pair",
]

#: column kinds: "null" (missing everywhere), "bool", "int", "float", "text", "other"
_TARGET = {"text": pl.String, "float": pl.Float64, "int": pl.Int64, "bool": pl.Boolean}


def read_pair(original, protected):
    """The two files wrapped once (``as_table``): ``(table_original, table_protected)``."""
    return as_table(original, "original"), as_table(protected, "protected")


def absent_columns(table, names, label: str) -> str | None:
    """The message naming the ``names`` absent from ``table`` (None when all are present)."""
    gone = [c for c in names if c not in table.columns]
    return missing_columns_message(label, gone, table.columns) if gone else None


def _dtype_kind(dtype) -> str:
    if dtype == pl.Null:
        return "null"
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_numeric():
        return "int" if dtype.is_integer() else "float"
    if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return "text"
    return "other"


def _series_kind(s: pl.Series) -> str:
    k = _dtype_kind(s.dtype)
    if k != "null" and s.len() and (s.null_count() == s.len() or (k == "float" and bool(s.is_nan().fill_null(True).all()))):
        return "null"
    return k


def column_kinds(table, names) -> dict[str, str]:
    """Per column: ``"null"`` (missing everywhere, e.g. a variable suppressed entirely, which
    pandas stores as float NaN whatever the original type), ``"bool"``, ``"int"``, ``"float"``,
    ``"text"`` (text and categoricals) or ``"other"``. One scan for all float columns."""
    frame = table.frame
    schema = frame.schema
    out = {v: _dtype_kind(schema[v]) for v in names}
    n = frame.height
    for v in names:
        if out[v] != "null" and n and frame.get_column(v).null_count() == n:
            out[v] = "null"
    floats = [v for v in names if out[v] == "float"]
    if floats and n:
        flags = frame.select([pl.col(v).is_nan().fill_null(True).all().alias(v) for v in floats]).row(0)
        out.update({v: "null" for v, all_missing in zip(floats, flags) if all_missing})
    return out


def dtype_name(table, name: str) -> str:
    """The column's type as text, for messages."""
    return str(table.column(name).dtype)


def enum_order(table, name: str) -> list | None:
    """The categories, in order, of a Polars Enum column, else None."""
    dtype = table.column(name).dtype
    return list(dtype.categories) if isinstance(dtype, pl.Enum) else None


def pandas_order(native, name: str) -> list | None:
    """The categories of a pandas *ordered* categorical column of the caller's table, else None
    (pandas is not imported: the column's dtype is inspected)."""
    if type(native).__module__.split(".")[0] != "pandas":
        return None
    try:
        dtype = native[name].dtype
    except Exception:
        return None
    return list(dtype.categories) if getattr(dtype, "ordered", False) else None


def pram_frame(spec) -> tuple | None:
    """A PRAM matrix given as a pandas DataFrame -> ``(matrix, index labels, column labels)``;
    None for any other form."""
    if type(spec).__module__.split(".")[0] != "pandas" or not hasattr(spec, "to_numpy"):
        return None
    return spec.to_numpy(), list(spec.index), list(spec.columns)


def _missing_floats(missing) -> list[float]:
    return [float(m) for m in missing if isinstance(m, (int, float, np.integer, np.floating))
            and not isinstance(m, (bool, np.bool_))]


def float_matrix(table, names, missing) -> np.ndarray:
    """The numeric columns ``names`` as a Fortran-ordered float64 matrix (n, p); null, NaN and
    the numeric ``missing`` codes become NaN. One query for all columns."""
    if not names:
        return np.empty((table.n, 0), order="F")
    codes = _missing_floats(missing)
    exprs = []
    for v in names:
        e = pl.col(v).cast(pl.Float64)
        if codes:
            e = pl.when(e.is_in(pl.Series(codes, dtype=pl.Float64).implode())).then(None).otherwise(e)
        exprs.append(e.fill_null(float("nan")).alias(v))
    out = table.frame.select(exprs).to_numpy(order="fortran")
    return np.asfortranarray(out, dtype=np.float64)


def encode_pair(name: str, table_o, table_p, missing) -> tuple[np.ndarray, np.ndarray, list]:
    """Codes of one categorical variable of both files on one code table: ``(codes_o, codes_p,
    labels)``, codes int32 with -1 = missing, labels sorted (numbers by value).

    Both columns are first brought to one type (text, float, integer or boolean, in that order
    of precedence); a column missing everywhere becomes nulls of the other file's type (or
    text when both are), so that its NaN never turns into a label.
    """
    so, sp = table_o.column(name), table_p.column(name)
    ko, kp = _series_kind(so), _series_kind(sp)
    kinds = {ko, kp} - {"null"}
    target = next((_TARGET[k] for k in ("text", "float", "int", "bool") if k in kinds), pl.String)
    n = so.len()
    so = pl.Series(name, [None] * n, dtype=target) if ko == "null" else so.cast(target)
    sp = pl.Series(name, [None] * n, dtype=target) if kp == "null" else sp.cast(target)
    codes, labels = encode_column(pl.concat([so.alias(name), sp.alias(name)]), list(missing) or None)
    return codes[:n], codes[n:], labels.to_list()


def group_sums(factors, levels, Yc) -> list[np.ndarray]:
    """Per factor a, the (levels[a], k) sums of the columns of ``Yc`` within each level:
    one multi-threaded Polars GROUP BY per factor (the kernels' bincount loop, for large
    inputs). Factors hold codes 0..levels-1 (no missing)."""
    k = Yc.shape[1]
    frame = pl.DataFrame({f"y{c}": Yc[:, c] for c in range(k)})
    queries = [frame.lazy().with_columns(pl.Series("g", fa)).group_by("g").agg(pl.all().sum()) for fa in factors]
    out = []
    for L, res in zip(levels, pl.collect_all(queries)):
        block = np.zeros((L, k))
        g = res.get_column("g").to_numpy().astype(np.int64)
        block[g] = res.select([f"y{c}" for c in range(k)]).to_numpy()
        out.append(block)
    return out
