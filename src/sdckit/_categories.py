"""Categories of key and sensitive variables as the protection methods, the measures and the
search match them: a category's identity (numbers and their text match), its missing values,
its plain Python value, and the generalisation hierarchies of categories (read from a CSV file
or a table, checked, mapped to a level).

Shared by :mod:`sdckit.protect.recode` (global recoding to a hierarchy level),
:mod:`sdckit.risk.diversity` (t-closeness with hierarchical distances),
:mod:`sdckit.protect.record_suppression` and the search in :mod:`sdckit.workflow`, which
therefore all match a category to a hierarchy row the same way. A hierarchy given as a table is
read through the engine the caller passes (``eng``): this module imports no engine.
"""

from __future__ import annotations

import csv
import math
import numbers
import os
from pathlib import Path

import numpy as np

from ._errors import SdcError
from ._validation import check_rule, raise_problems, read_text_file

__all__ = [
    "MAX_HIERARCHY_BYTES",
    "category_key",
    "check_hierarchy_rows",
    "hierarchy_levels",
    "hierarchy_map",
    "hierarchy_rows",
    "is_missing",
    "plain_value",
    "read_hierarchy_file",
    "sensitive_hierarchies",
]


def category_key(value) -> str:
    """The identity of a category for matching a map or a hierarchy to the data: numbers and
    their text match (``1``, ``1.0`` and ``"1"``), anything else by its text."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        return str(int(f)) if math.isfinite(f) and f.is_integer() else repr(f)
    return str(value)


def plain_value(value):
    """A NumPy scalar as the Python value (JSON-friendly parameters)."""
    return value.item() if isinstance(value, np.generic) else value


def is_missing(value) -> bool:
    return value is None or (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isnan(value))


#: the largest hierarchy file read
MAX_HIERARCHY_BYTES = 256 * 2**20


def read_hierarchy_file(path) -> list[list]:
    """Rows of a hierarchy CSV without a header (ARX's format: ``;``-separated; ``,`` and tab
    are recognised too): UTF-8 (with or without a byte-order mark), or UTF-16 with its mark
    (a spreadsheet's "Unicode text")."""
    p = Path(path)
    if not p.is_file():
        raise SdcError(f"hierarchy: file {os.fspath(path)} not found; expected a CSV file or a table")
    text = read_text_file(p, "hierarchy", max_bytes=MAX_HIERARCHY_BYTES, utf16=True)
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    sep = ";" if ";" in first else "\t" if "\t" in first else ","
    return [list(row) for row in csv.reader(lines, delimiter=sep)]


def hierarchy_rows(hierarchy, eng) -> tuple[list[list], object]:
    """The hierarchy as rows (original category, level 1, level 2, ...) and the form recorded
    in the result's parameters (the path, or the rows)."""
    if isinstance(hierarchy, (str, os.PathLike)):
        return read_hierarchy_file(hierarchy), os.fspath(hierarchy)
    if isinstance(hierarchy, (list, tuple)) and all(isinstance(r, (list, tuple)) for r in hierarchy):
        rows = [[plain_value(v) for v in r] for r in hierarchy]
        return rows, rows
    table = eng.table(hierarchy, "hierarchy")
    columns = []
    for name in table.columns:
        codes, labels = eng.encode_column(table, name)
        values = eng.label_values(labels)
        columns.append([values[c] if c >= 0 else None for c in codes.tolist()])
    rows = [list(r) for r in zip(*columns)]
    return rows, rows


def hierarchy_map(rows: list[list], level) -> dict:
    """``{key(category): its level-``level`` ancestor}`` from the hierarchy's rows."""
    width = max((len(r) for r in rows), default=0)
    if width < 2:
        raise SdcError("hierarchy: fewer than two columns; expected the categories and at least one coarser level")
    lev = check_rule("level", level, high=width - 1)
    out: dict = {}
    conflicts: list = []
    empty = 0
    for r in rows:
        new = r[lev] if len(r) > lev else None
        if is_missing(new) or new == "" or is_missing(r[0]):
            empty += 1
            continue
        k = category_key(r[0])
        if k in out and category_key(out[k]) != category_key(new):
            conflicts.append(r[0])
        out.setdefault(k, new)
    problems = []
    if empty:
        problems.append(
            f"hierarchy: {empty} row(s) without a category or a level-{lev} value; expected both in every row"
        )
    if conflicts:
        problems.append(
            f"hierarchy: {len(conflicts)} categor(y/ies) appear in several rows with different level-{lev} "
            "values; expected one ancestor per category"
        )
    raise_problems(problems)
    return out


def check_hierarchy_rows(key: str, rows: list) -> list[list[str]]:
    """The rows as text, all of one width with no empty cell, each base value once, each value
    of a level with one parent."""
    if not rows:
        raise SdcError(f"hierarchies[{key!r}]: empty; expected one row per value of {key!r}")
    width = len(rows[0])
    if width < 1 or any(len(r) != width for r in rows):
        raise SdcError(f"hierarchies[{key!r}]: rows of different lengths; expected one column per level in every row")
    if any(is_missing(v) or v == "" for r in rows for v in r):
        raise SdcError(f"hierarchies[{key!r}]: empty cells; expected a value at every level of every row")
    text = [[category_key(v) for v in r] for r in rows]
    base = [r[0] for r in text]
    if len(set(base)) != len(base):
        raise SdcError(f"hierarchies[{key!r}]: a value appears in several rows; expected each value of the key once")
    for lev in range(width - 1):
        parent: dict = {}
        for r in text:
            if parent.setdefault(r[lev], r[lev + 1]) != r[lev + 1]:
                raise SdcError(
                    f"hierarchies[{key!r}]: a level-{lev} value has two different level-{lev + 1} values; "
                    "expected one parent per value (a tree)"
                )
    return text


def sensitive_hierarchies(hierarchies, names, spec: dict, eng) -> dict:
    """``hierarchies`` as ``{name: rows}``: each a sensitive variable not also ordered, its rows
    one width of at least two columns, without empty cells, each category once, one parent per
    value and one value at the top (a tree)."""
    if hierarchies is None:
        return {}
    if not isinstance(hierarchies, dict):
        raise SdcError("hierarchies: expected a mapping {sensitive variable: hierarchy}")
    out = {}
    for name, h in hierarchies.items():
        where = f"hierarchies[{name!r}]"
        if name not in names:
            raise SdcError(f"{where}: not a sensitive variable; sensitive variables: {', '.join(names)}")
        if name in spec:
            raise SdcError(f"{where}: {name} is also in ordered; expected one ground distance per variable")
        if isinstance(h, dict):
            rows = [[c, *(a if isinstance(a, (list, tuple)) else [a])] for c, a in h.items()]
        else:
            rows = hierarchy_rows(h, eng)[0]
        text = check_hierarchy_rows(name, rows)
        if len(text[0]) < 2:
            raise SdcError(f"{where}: one column; expected the categories and at least one coarser level")
        if len({r[-1] for r in text}) != 1:
            raise SdcError(f"{where}: the top level holds several values; expected one value at the top (a tree)")
        out[name] = text
    return out


def hierarchy_levels(name: str, text: list, labels: list) -> np.ndarray:
    """Each category's node code at every level of its hierarchy (categories in code order);
    every category must be in the hierarchy's first column."""
    row_of = {r[0]: r for r in text}
    absent = sum(1 for v in labels if category_key(v) not in row_of)
    if absent:
        raise SdcError(
            f"hierarchies[{name!r}]: {absent} categor(y/ies) of {name} observed in the data are not in the "
            "hierarchy's first column; expected a row for every category"
        )
    width = len(text[0])
    out = np.zeros((len(labels), width), dtype=np.int64)
    for lev in range(width):
        index: dict = {}
        out[:, lev] = [index.setdefault(row_of[category_key(v)][lev], len(index)) for v in labels]
    return out
