"""Old module paths of the assessment, kept for one release: the assessment's computing moved to
:mod:`sdckit.assessment` (the report only draws a result). A name read through an old path is
looked up in its new module, with a DeprecationWarning; nothing is copied."""

from __future__ import annotations

import importlib
import warnings

from .._deprecation import REMOVED_IN

__all__ = ["moved"]


def moved(old: str, new: str):
    """A module ``__getattr__`` for the old module ``old`` that reads each name from ``new``."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(new), name)
        warnings.warn(
            f"{old}.{name} moved to {new}.{name}; the old path will be removed in sdckit {REMOVED_IN}",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__
