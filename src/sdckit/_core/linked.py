"""Linked ("ghost") variables: a variable linked to a key follows the key's suppressions and
merged categories (sdcMicro's ``ghostVars``, which carry a key's local-suppression pattern).

Integer codes in, integer codes out (``-1`` = missing). The key's codes before and after a
protection step share one label space, so that "the key changed" is a code comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["LinkedChange", "follow_key"]


@dataclass(frozen=True)
class LinkedChange:
    """What a linked variable inherits from one step on its key.

    ``codes`` are the linked variable's new codes: ``0..n_labels-1`` its own labels, then one
    code per entry of ``merged`` (a tuple of its own codes: the union of linked values a released
    key category stands for); ``-1`` missing. ``suppressed`` marks the cells made missing because
    the key is missing there after the step (``already_missing``: those of them where the key
    was missing before the step too); ``merged_cells`` the cells given a merged value and
    ``followed`` the cells given the linked value of the released key category (a step that
    moved records between categories); ``suppressed_merged`` the cells made missing because the
    key changed there and the linked variable is not a function of the key. ``functional`` says
    whether it is one (each category of the key, before the step, holds one linked value).
    """

    codes: np.ndarray
    merged: tuple
    suppressed: np.ndarray
    merged_cells: np.ndarray
    suppressed_merged: np.ndarray
    functional: bool
    followed: np.ndarray | None = None
    already_missing: np.ndarray | None = None


def is_function_of(key: np.ndarray, linked: np.ndarray) -> bool:
    """Whether ``linked`` is a function of ``key`` on the records where both are present."""
    both = (key >= 0) & (linked >= 0)
    pairs = np.unique(np.stack([key[both], linked[both]]), axis=1) if both.any() else np.empty((2, 0), np.int64)
    return bool(np.unique(pairs[0]).size == pairs.shape[1])


def merged_categories(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per record: whether its released key category holds records of more than one original
    category (a merge of categories, or records moved into it). Records missing before or
    after are False."""
    both = (before >= 0) & (after >= 0)
    out = np.zeros(before.shape, dtype=bool)
    if not both.any():
        return out
    pairs = np.unique(np.stack([after[both], before[both]]), axis=1)
    cats, n_sources = np.unique(pairs[0], return_counts=True)
    merged = cats[n_sources > 1]
    out[both] = np.isin(after[both], merged)
    return out


def follow_key(
    before: np.ndarray, after: np.ndarray, linked: np.ndarray, n_labels: int, linked_before: np.ndarray | None = None
) -> LinkedChange:
    """The linked variable after a step changed its key from ``before`` to ``after``: ``linked``
    its codes after the step, ``linked_before`` before it (default: the same; the two share one
    label space), which say whether it is a function of the key and what value each original
    category of the key has.

    1. Where the key is missing after the step, the linked value is made missing too: where the
       step suppressed the key, and also where the key was missing already (in the input, or
       from a step whose links were not kept), as sdcMicro does. A linked value kept beside a
       missing key would tell what the key's missing value stands for, although the risk
       measures read that missing value as matching every category.
    2. A step that maps each original category to one released category (a recode): where the
       released category stands for several original ones (merged), if the linked variable is a
       function of the key, every record of that released category takes the union of the
       linked values of its records (one new value, unchanged when they all agree), so that the
       linked value tells no more than the released key; otherwise the linked value is
       suppressed there.
    3. A step that moves records between categories (PRAM, swapping: an original category goes
       to several released ones): where a record's key changed, a linked variable that is a
       function of the key takes the linked value of the released category (it follows the
       released key), and otherwise is suppressed.
    """
    before = np.asarray(before, dtype=np.int64)
    after = np.asarray(after, dtype=np.int64)
    codes = np.asarray(linked, dtype=np.int64).copy()
    linked = codes.copy() if linked_before is None else np.asarray(linked_before, dtype=np.int64)
    suppressed = (after < 0) & (codes >= 0)
    already = suppressed & (before < 0)
    codes[suppressed] = -1
    both = (before >= 0) & (after >= 0)
    functional = is_function_of(before, linked)
    if not is_function_of(before[both], after[both]):
        return replace(_moved(before, after, linked, codes, suppressed, functional), already_missing=already)
    touched = merged_categories(before, after) & (codes >= 0)
    empty = np.zeros(codes.shape, dtype=bool)
    if not functional:
        codes[touched] = -1
        return LinkedChange(codes, (), suppressed, empty, touched, False, empty, already)
    merged: list[tuple] = []
    cells = empty.copy()
    for c in np.unique(after[touched]):
        rows = touched & (after == c)
        values = tuple(int(v) for v in np.unique(codes[rows]))
        if len(values) > 1:
            if values not in merged:
                merged.append(values)
            codes[rows] = n_labels + merged.index(values)
            cells |= rows
    return LinkedChange(codes, tuple(merged), suppressed, cells, empty, True, empty, already)


def _moved(before, after, linked, codes, suppressed, functional: bool) -> LinkedChange:
    """Step 3 of :func:`follow_key`: records moved between categories (``linked``: the codes
    before the step, ``codes``: after it)."""
    moved = (before >= 0) & (after >= 0) & (before != after) & (codes >= 0)
    empty = np.zeros(codes.shape, dtype=bool)
    if not functional:
        codes[moved] = -1
        return LinkedChange(codes, (), suppressed, empty, moved, False, empty)
    size = int(max(before.max(initial=-1), after.max(initial=-1))) + 1
    value_of = np.full(size, -1, dtype=np.int64)  # the linked value of each original category
    known = (before >= 0) & (linked >= 0)
    value_of[before[known]] = linked[known]
    new = np.where(moved, value_of[np.maximum(after, 0)], codes)
    lost = moved & (new < 0)  # a released category no original record had a linked value for
    followed = moved & ~lost & (new != codes)
    return LinkedChange(new, (), suppressed, empty, lost, True, followed)
