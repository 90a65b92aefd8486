"""Data access of :func:`sdckit.loglinear_risk`: the labels of the encoded key variables come from
the engine; the steps and the kernels handle NumPy arrays."""

from __future__ import annotations

import numpy as np

from ..engines import local_engine

__all__ = ["label_numbers", "label_values"]


def label_values(labels) -> list:
    """The category labels of one key variable as a Python list (code c -> ``out[c]``)."""
    return local_engine().label_values(labels)


def label_numbers(labels) -> np.ndarray | None:
    """The category labels as numbers when R would read the column as numeric (numbers, or
    text that all parses as numbers, as ``read.csv`` does); else None (a factor)."""
    return local_engine().label_numbers(labels)
