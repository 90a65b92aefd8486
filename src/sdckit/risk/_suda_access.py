"""Data access of :func:`sdckit.suda`: the labels of the encoded key variables come from the
engine; the measure, its result and the kernels handle NumPy arrays."""

from __future__ import annotations

from ..engines import local_engine

__all__ = ["label_values"]


def label_values(labels) -> list:
    """The category labels of one key variable as a Python list (code c -> ``out[c]``)."""
    return local_engine().label_values(labels)
