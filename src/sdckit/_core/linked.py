"""Linked ("ghost") variables: a variable linked to a key follows the key's suppressions and
merged categories (sdcMicro's ``ghostVars``, which carry a key's local-suppression pattern).

Integer codes in, integer codes out (``-1`` = missing). The key's codes before and after a
protection step share one label space, so that "the key changed" is a code comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LinkedChange", "follow_key"]


@dataclass(frozen=True)
class LinkedChange:
    """What a linked variable inherits from one step on its key.

    ``codes`` are the linked variable's new codes: ``0..n_labels-1`` its own labels, then one
    code per entry of ``merged`` (a tuple of its own codes: the union of linked values a released
    key category stands for); ``-1`` missing. ``suppressed`` marks the cells made missing because
    the key was suppressed there, ``merged_cells`` the cells given a merged value and
    ``suppressed_merged`` the cells made missing because the key's category was merged and the
    linked variable is not a function of the key. ``functional`` says whether it is one (each
    category of the key, before the step, holds one linked value).
    """

    codes: np.ndarray
    merged: tuple
    suppressed: np.ndarray
    merged_cells: np.ndarray
    suppressed_merged: np.ndarray
    functional: bool


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


def follow_key(before: np.ndarray, after: np.ndarray, linked: np.ndarray, n_labels: int) -> LinkedChange:
    """The linked variable after a step changed its key from ``before`` to ``after``.

    1. Where the key was present before and is missing after (suppressed), the linked value is
       suppressed too.
    2. Where the released key category stands for several original ones (merged): if the linked
       variable is a function of the key, every record of that released category takes the
       union of the linked values of its records (one new value, unchanged when they all
       agree), so that the linked value tells no more than the released key; otherwise the
       linked value is suppressed there.
    """
    before = np.asarray(before, dtype=np.int64)
    after = np.asarray(after, dtype=np.int64)
    codes = np.asarray(linked, dtype=np.int64).copy()
    suppressed = (before >= 0) & (after < 0) & (codes >= 0)
    codes[suppressed] = -1
    touched = merged_categories(before, after) & (codes >= 0)
    functional = is_function_of(before, np.asarray(linked, dtype=np.int64))
    empty = np.zeros(codes.shape, dtype=bool)
    if not functional:
        codes[touched] = -1
        return LinkedChange(codes, (), suppressed, empty, touched, False)
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
    return LinkedChange(codes, tuple(merged), suppressed, cells, empty, True)
