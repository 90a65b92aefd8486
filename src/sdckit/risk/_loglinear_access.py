"""Data access of :func:`sdckit.loglinear_risk`: every frame-library operation of the log-linear
measure happens in the functions of this module, nowhere else.

They read the category labels of the encoded key variables (``EncodedKeys.labels``, one small
column per variable) and return NumPy arrays or Python lists; the steps
(:mod:`sdckit.risk._loglinear_steps`) and the kernels (:mod:`sdckit._core.loglinear`) never
see a frame. An engine other than the in-memory Polars one provides these two functions.
"""

from __future__ import annotations

import numpy as np

__all__ = ["label_numbers", "label_values"]


def label_values(labels) -> list:
    """The category labels of one key variable as a Python list (code c -> ``out[c]``)."""
    return labels.to_list()


def label_numbers(labels) -> np.ndarray | None:
    """The category labels as numbers when R would read the column as numeric (numbers, or
    text that all parses as numbers, as ``read.csv`` does); else None (a factor)."""
    import polars as pl

    if labels.dtype.is_numeric():
        return labels.cast(pl.Float64).to_numpy()
    if labels.dtype == pl.String:
        try:
            return labels.cast(pl.Float64, strict=True).to_numpy()
        except Exception:  # noqa: BLE001 - not all numbers: a factor
            return None
    return None
