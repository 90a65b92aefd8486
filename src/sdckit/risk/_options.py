"""Records of options shared by several measures (see :func:`sdckit._declare.options`)."""

from __future__ import annotations

from dataclasses import dataclass

from .._declare import Options, Param, options

__all__ = ["Intervals"]


@options("intervals", Param("ci", "bool"), Param("confidence", "number"))
@dataclass(frozen=True)
class Intervals(Options):
    """Confidence intervals of a measure: the ``intervals=`` record (or a mapping of its
    fields).

    Parameters
    ----------
    ci : bool, default False
        Whether to compute the confidence intervals (what they are: see the measure).
    confidence : float in (0, 1), default 0.95
        Level of the intervals.
    """

    ci: bool = False
    confidence: float = 0.95
