"""Data access of the synthetic-data measures: the two or three files read once through the
engine, the categorical variables coded on one shared code table, the numeric ones as floats.

The measures (:mod:`.synthetic`, :mod:`sdckit.utility.synthetic`) work on the arrays of
:class:`Files` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._errors import MissingColumnError, SdcError
from .._validation import as_missing_codes, missing_columns_message, raise_problems
from ..engines import in_memory_engine

__all__ = ["Files", "read_files", "require_columns"]

_NUMBER_KINDS = ("integer", "float")


@dataclass(frozen=True)
class Files:
    """The files as arrays: per file (original, synthetic, control) the categorical codes
    ``cat[f]`` (n, m_cat; -1 missing) and the numbers ``num[f]`` (n, m_num; NaN missing), with
    the labels of each categorical variable."""

    cat_names: tuple
    num_names: tuple
    cat: tuple
    num: tuple
    labels: tuple
    n: tuple
    backend: str
    #: per file, the records each row stands for (distinct rows of an out-of-core engine's
    #: GROUP BY); None: one record per row
    counts: tuple | None = None

    def matrix(self, f: int) -> np.ndarray:
        """File f as one float matrix: the categorical codes (NaN missing), then the numbers."""
        c = self.cat[f].astype(float)
        c[self.cat[f] < 0] = np.nan
        return np.hstack([c, self.num[f]])

    @property
    def names(self) -> tuple:
        return self.cat_names + self.num_names


def require_columns(tables, labels, names) -> None:
    """Every column of ``names`` in every table (one error naming, per file, the columns it
    lacks)."""
    absent = [
        missing_columns_message(lab, gone, t.columns)
        for t, lab in zip(tables, labels)
        if (gone := [c for c in names if c not in t.columns])
    ]
    if absent:
        raise MissingColumnError("; ".join(absent))


def read_files(files, labels, cat_names, num_names, missing, engine, what: str) -> Files:
    """Read ``files`` (the original, the synthetic file and, optionally, the control file; None
    is left out) through the in-memory engine; every named column must be in every file, the
    numeric ones hold numbers and the synthetic file has records."""
    eng = in_memory_engine(engine, what, files[0])
    miss = as_missing_codes(missing)
    tables = [eng.table(d, lab) for d, lab in zip(files, labels)]
    require_columns(tables, labels, list(cat_names) + list(num_names))
    problems = []
    for t, lab in zip(tables, labels):
        if t.n == 0:
            problems.append(f"{lab}: the file has no records; expected at least one")
        for v in num_names:
            if t.kind(v) not in _NUMBER_KINDS and v not in t.missing_everywhere([v]):
                problems.append(f"variables: column {v} of the {lab} file has type {t.dtype_name(v)}; expected numbers")
    raise_problems(problems)
    cats = [np.empty((t.n, len(cat_names)), dtype=np.int64) for t in tables]
    lab_list = []
    for j, v in enumerate(cat_names):
        codes, labs = eng.encode_joint(tables, v, miss)
        for f, c in enumerate(codes):
            cats[f][:, j] = c
        lab_list.append(tuple(eng.label_values(labs)))
        problems += _no_common_category(v, codes, tables)
    raise_problems(problems)
    nums = [t.floats(list(num_names), miss) if num_names else np.empty((t.n, 0)) for t in tables]
    for x, lab in zip(nums, labels):
        if np.isinf(x).any():
            raise SdcError(f"variables: the {lab} file holds infinite values; expected finite numbers")
    return Files(
        cat_names=tuple(cat_names),
        num_names=tuple(num_names),
        cat=tuple(cats),
        num=tuple(nums),
        labels=tuple(lab_list),
        n=tuple(t.n for t in tables),
        backend=tables[0].backend,
    )


def _no_common_category(column: str, codes: list, tables: list) -> list[str]:
    """A categorical column whose categories in the synthetic file are none of the original's
    (both with values): the files are coded differently (codes against labels, another type),
    and every distance would be a silent 1."""
    ori, syn = (c[c >= 0] for c in codes[:2])
    if not len(ori) or not len(syn) or np.intersect1d(ori, syn).size:
        return []
    kinds = [tables[0].dtype_name(column), tables[1].dtype_name(column)]
    types = f" (type {kinds[0]} in the original, {kinds[1]} in the synthetic file)" if kinds[0] != kinds[1] else ""
    return [
        f"column {column}: none of its categories in the synthetic file occurs in the original{types}; expected the "
        "same coding in both files"
    ]
