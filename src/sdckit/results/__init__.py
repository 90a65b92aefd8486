"""Result objects: frozen, with ``summary()``, ``to_dict()``, ``to_frame()`` and ``plot(ax=)``.

Results carry aggregates in ``summary()`` and ``to_dict()``; per-record values are only
returned when asked for, by ``to_frame()`` or the array attributes, because a risk report is
itself confidential.
"""

from ._base import Result, Summary

__all__ = ["Result", "Summary"]
