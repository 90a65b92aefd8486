"""Data access of :func:`sdckit.suda`: the labels of the encoded key variables and the per-record
MSU text come from the engine; the measure, its result and the kernels handle NumPy arrays."""

from __future__ import annotations

from ..engines import local_engine

__all__ = ["label_at", "label_values", "msu_text"]


def label_values(labels) -> list:
    """The category labels of one key variable as a Python list (code c -> ``out[c]``)."""
    return local_engine().label_values(labels)


def label_at(labels, code: int):
    """The label of one category code."""
    return local_engine().label_at(labels, code)


def msu_text(keys, labels, patterns, pattern_ids, msu_pattern, msu_subset, subsets, n_patterns):
    """Per record, its MSUs as text (``"a=1; b=2, c=3"``), as a column for the result frame."""
    return local_engine().msu_text(keys, labels, patterns, pattern_ids, msu_pattern, msu_subset, subsets, n_patterns)
