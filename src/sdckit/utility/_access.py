"""Data access of the information-loss measures: every record-level operation of
:mod:`sdckit.utility` goes through the engine here, nowhere else.

Each function takes the wrapped tables (or one column of them) and returns NumPy arrays or
plain Python values; the measures themselves (:mod:`sdckit.utility._steps` and the kernels
of :mod:`sdckit._core.infoloss`) never see a frame.
"""

from __future__ import annotations

import numpy as np

from .._validation import missing_columns_message
from ..engines import get_engine

__all__ = [
    "absent_columns",
    "column_kinds",
    "dtype_name",
    "encode_pair",
    "enum_order",
    "float_matrix",
    "group_sums",
    "pandas_order",
    "pram_frame",
    "read_pair",
]

#: the engine's column kinds -> the kinds the information-loss steps use
_KINDS = {"boolean": "bool", "integer": "int", "float": "float", "text": "text", "categorical": "text", "null": "null"}


def read_pair(original, protected, engine=None):
    """The two files wrapped once by the engine: ``(table_original, table_protected)``."""
    eng = get_engine(engine)
    return eng.table(original, "original"), eng.table(protected, "protected")


def absent_columns(table, names, label: str) -> str | None:
    """The message naming the ``names`` absent from ``table`` (None when all are present)."""
    gone = [c for c in names if c not in table.columns]
    return missing_columns_message(label, gone, table.columns) if gone else None


def column_kinds(table, names) -> dict[str, str]:
    """Per column: ``"null"`` (missing everywhere, e.g. a variable suppressed entirely, which
    pandas stores as float NaN whatever the original type), ``"bool"``, ``"int"``, ``"float"``,
    ``"text"`` (text and categoricals) or ``"other"``. One scan for all columns."""
    out = {v: _KINDS.get(table.kind(v), "other") for v in names}
    out.update({v: "null" for v in table.missing_everywhere(names)})
    return out


def dtype_name(table, name: str) -> str:
    """The column's type as text, for messages."""
    return table.dtype_name(name)


def enum_order(table, name: str) -> list | None:
    """The declared categories, in order, of an ordered categorical column, else None."""
    return table.categories(name)


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


def float_matrix(table, names, missing) -> np.ndarray:
    """The numeric columns ``names`` as a Fortran-ordered float64 matrix (n, p); null, NaN and
    the numeric ``missing`` codes become NaN."""
    if not names:
        return np.empty((table.n, 0), order="F")
    return table.floats(names, missing, order="F")


def encode_pair(name: str, table_o, table_p, missing, engine=None) -> tuple[np.ndarray, np.ndarray, list]:
    """Codes of one categorical variable of both files on one code table: ``(codes_o, codes_p,
    labels)``, codes int32 with -1 = missing, labels sorted (numbers by value); a column
    missing everywhere takes the other file's type."""
    (codes_o, codes_p), labels = get_engine(engine).encode_joint([table_o, table_p], name, missing)
    return codes_o, codes_p, labels.to_list()


def group_sums(factors, levels, Yc, engine=None) -> list[np.ndarray]:
    """Per factor a, the (levels[a], k) sums of the columns of ``Yc`` within each level (the
    engine's GROUP BY, for large inputs). Factors hold codes 0..levels-1 (no missing)."""
    return get_engine(engine).group_sums(factors, levels, Yc)
