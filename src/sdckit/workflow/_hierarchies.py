"""Generalisation hierarchies of the protection search: the caller's (an ARX CSV file, rows, a
mapping or a table) or built automatically from the data.

A hierarchy is a list of rows ``[category, level 1, level 2, ..., "*"]`` with one row per
category observed in the data: the form :func:`sdckit.global_recode` takes with ``hierarchy=``
and ``level=``, so that a search's recipe replays with the public method.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from .._categories import category_key, hierarchy_map, hierarchy_rows
from .._errors import SdcError

__all__ = ["TOP", "Hierarchy", "auto_hierarchy", "check_lattice_size", "read_hierarchies"]

#: the label of the top level (every category merged)
TOP = "*"
#: the number of first-level intervals an automatic numeric hierarchy aims at
TARGET_INTERVALS = 20


class Hierarchy:
    """The rows of one key's hierarchy, what ``global_recode`` records for it (a path or the
    rows) and its number of levels above the original (``height``)."""

    def __init__(self, rows: list[list], recorded, source: str):
        self.rows = rows
        self.recorded = recorded
        self.source = source
        self.height = max((len(r) for r in rows), default=1) - 1

    def mapping(self, level: int) -> dict:
        """``{key(category): ancestor}`` at ``level`` (>= 1)."""
        return hierarchy_map(self.rows, level)


def read_hierarchies(hierarchies, keys, values_of, kind_of, eng, missing_of=None) -> dict[str, Hierarchy]:
    """One :class:`Hierarchy` per key: the caller's, else an automatic one.

    ``values_of(key)`` gives the distinct observed values with their counts; ``kind_of(key)`` is
    ``"numeric"``, ``"ordered"`` (with the order from ``values_of``) or ``"nominal"``;
    ``missing_of(key)`` the missing-value codes (the scenario's) the column holds: each maps to
    itself at every level (a missing value stays missing), so that every level's recode
    covers the column."""
    given = {} if hierarchies is None else hierarchies
    if not isinstance(given, Mapping):
        raise SdcError("hierarchies: expected a mapping {key: CSV path, rows, mapping or table}")
    extra = [k for k in given if k not in keys]
    if extra:
        raise SdcError(
            f"hierarchies: {', '.join(map(str, extra))} not among the keys; expected some of {', '.join(keys)}"
        )
    out = {}
    for key in keys:
        values, counts = values_of(key)
        if key in given:
            out[key] = _given(key, given[key], values, eng)
        else:
            out[key] = Hierarchy(auto_hierarchy(values, counts, kind_of(key)), None, "automatic")
            out[key].recorded = out[key].rows
        if missing_of is not None:
            out[key] = _with_missing_codes(out[key], missing_of(key))
    return out


def _with_missing_codes(h: Hierarchy, codes) -> Hierarchy:
    """``h`` with a row per missing code it lacks, the code at every level (recorded as rows)."""
    have = {category_key(r[0]) for r in h.rows if r}
    extra = [[c] * (h.height + 1) for c in codes if category_key(c) not in have]
    if not extra:
        return h
    rows = [list(r) for r in h.rows] + extra
    return Hierarchy(rows, rows, h.source)


def check_lattice_size(heights: dict[str, int], limit: int | None = None) -> int:
    """The number of nodes of the lattice of ``{key: height}`` (the product of the keys' numbers
    of levels, height + 1 each), or a clear error when it is above ``limit`` (default
    :data:`MAX_NODES`; a search's ``max_lattice_size``): checked before anything of the
    lattice's size is built."""
    from .._core.lattice import MAX_NODES

    cap = MAX_NODES if limit is None else int(limit)
    size = math.prod(h + 1 for h in heights.values())
    if size > cap:
        widest = sorted(heights, key=lambda k: -heights[k])[:3]
        levels = ", ".join(f"{k} {heights[k] + 1}" for k in widest)
        raise SdcError(
            f"hierarchies: the lattice of the {len(heights)} keys' levels has {size:,} nodes (the product of "
            f"each key's number of levels; the most: {levels}); expected at most {cap:,} (max_lattice_size): "
            "search fewer keys, give hierarchies with fewer levels (hierarchies={key: ...}), recode keys before "
            "the search, or raise max_lattice_size (the lattice's nodes are held in memory, 1 byte per key each)"
        )
    return size


def _given(key: str, spec, values, eng) -> Hierarchy:
    """The caller's hierarchy of ``key``: checked to cover every observed category."""
    if isinstance(spec, Mapping):
        rows = [[c, *(list(a) if isinstance(a, (list, tuple)) else [a])] for c, a in spec.items()]
        recorded: object = rows
    else:
        try:
            rows, recorded = hierarchy_rows(spec, eng)
        except SdcError as exc:
            raise SdcError(f"hierarchies[{key}]: {exc}") from None
    if max((len(r) for r in rows), default=0) < 2:
        raise SdcError(f"hierarchies[{key}]: fewer than two columns; expected the categories and at least one level")
    covered = {category_key(r[0]) for r in rows if r}
    absent = sum(1 for v in values if category_key(v) not in covered)
    if absent:
        raise SdcError(
            f"hierarchies[{key}]: {absent} categor(y/ies) of {key} observed in the data are not in the "
            "hierarchy; expected a row for every category"
        )
    return Hierarchy([list(r) for r in rows], recorded, "given")


# ----------------------------------------------------------------------------------------------
# automatic hierarchies
# ----------------------------------------------------------------------------------------------
def auto_hierarchy(values: list, counts: list, kind: str) -> list[list]:
    """Rows of an automatic hierarchy of the observed ``values`` (with their ``counts``).

    * ``"numeric"``: intervals of growing width. The first width w_1 is the "nice" number
      (1, 2 or 5 times a power of ten; at least 1 for integers) nearest above range / 20; level
      j has width w = w_1 2^(j-1), its intervals ``[a, a + w)`` with a = o + m w, o the largest
      multiple of w_1 at most the minimum (so the levels nest); levels stop once one interval
      holds every value, and the top level is ``"*"``.
    * ``"ordered"``: level j merges neighbouring categories (in the given order) into blocks of
      2^j, labelled ``"first..last"``; then ``"*"``.
    * ``"nominal"``: frequency grouping: level j keeps the floor(C / 2^j) most frequent of the C
      categories (ties: the label's text) and merges the others into ``"other"``, as long as
      at least two are merged and one is kept; then ``"*"``.
    """
    if not values:
        return [[TOP, TOP]]
    if kind == "numeric":
        levels = _numeric_levels(values)
    elif kind == "ordered":
        levels = _ordered_levels(values)
    else:
        levels = _nominal_levels(values, counts)
    return [[v, *(lev[i] for lev in levels), TOP] for i, v in enumerate(values)]


def _nice_width(span: float, integer: bool) -> float:
    raw = span / TARGET_INTERVALS if span > 0 else 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    width = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return max(width, 1.0) if integer else width


def _fmt_bound(x: float) -> str:
    return f"{x:.10g}"


def _numeric_levels(values: list) -> list[list]:
    x = np.asarray([float(v) for v in values])
    integer = all(isinstance(v, numbers.Integral) or float(v).is_integer() for v in values)
    width = _nice_width(float(x.max() - x.min()), integer)
    origin = math.floor(float(x.min()) / width) * width
    levels = []
    while True:
        start = origin + np.floor((x - origin) / width) * width
        if np.unique(start).size <= 1:
            break
        levels.append([f"[{_fmt_bound(a)},{_fmt_bound(a + width)})" for a in start.tolist()])
        width *= 2
    return levels


def _ordered_levels(values: list) -> list[list]:
    levels, block = [], 2
    while block < len(values):
        pos = np.arange(len(values)) // block
        names = {}
        for b in np.unique(pos).tolist():
            members = [values[i] for i in np.flatnonzero(pos == b)]
            names[b] = str(members[0]) if len(members) == 1 else f"{members[0]}..{members[-1]}"
        levels.append([names[b] for b in pos.tolist()])
        block *= 2
    return levels


def _nominal_levels(values: list, counts: list) -> list[list]:
    c = len(values)
    order = sorted(range(c), key=lambda i: (-counts[i], str(values[i])))
    texts = {str(v) for v in values}
    other = "other"
    while other in texts:
        other += "+"
    levels, kept = [], c // 2
    while kept >= 1 and c - kept >= 2:
        keep = set(order[:kept])
        levels.append([values[i] if i in keep else other for i in range(c)])
        kept //= 2
    return levels
