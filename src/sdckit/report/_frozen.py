"""Read-only nested containers for the assessment's aggregates, and their JSON form."""

from __future__ import annotations

import math

import numpy as np

from ..results._base import FrozenDict

__all__ = ["deep_freeze", "plain"]


def deep_freeze(value):
    """Dicts become read-only mappings and lists tuples, at every depth."""
    if isinstance(value, dict):
        return value if isinstance(value, FrozenDict) else FrozenDict({k: deep_freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_freeze(v) for v in value)
    return value


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
