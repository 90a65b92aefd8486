"""The JSON form of the assessment's aggregates (they are made read-only by
:func:`sdckit.results._base.freeze`, as every result is)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["plain"]


def plain(value):
    """The JSON form: mappings with text keys, lists, Python numbers; NaN and infinities as None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value
