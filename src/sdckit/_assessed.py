"""What a measure's declaration says about the assessment: the roles it needs, the headline
numbers it gives, whether it runs after every step of a workflow and which search targets it
provides (``declare("measure", ..., assessed=Assessed(...))``), or why sdckit runs it only
when called (``declare("measure", ..., excluded="...")``).

The assessment's table of the measures (:mod:`sdckit.assessment.table`) is assembled from
these facts; ``tools/registry_docs.py`` writes it (``assessment/measures_table.json``) so that
reading it imports no measure. This module sits at the bottom: it imports only the errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ._errors import SdcError

__all__ = ["BETTER", "Assessed", "Headline"]

#: which way a headline is safer (a risk) or better (a loss)
BETTER = ("lower", "higher")


@dataclass(frozen=True)
class Headline:
    """One headline number of a measure.

    Attributes
    ----------
    name : str
        Its name in the assessment's aggregates and in the per-step measures.
    meaning : str
        What it says, in one line.
    better : {"lower", "higher"}
        Which way is safer (a risk) or better (a loss).
    attribute : str
        The attribute of the measure's result that holds it.
    label : str or None
        Its row in :class:`sdckit.SdcProblem`'s per-step table (None: not in that table).
    needs : tuple of str
        Roles it needs besides the measure's own (e.g. the household risk needs ``household``).
    target : str or None
        The name of a search target that bounds it (``target={"max_share_unique": 0.01}``: the
        headline at most 0.01 when ``better="lower"``, at least when ``"higher"``); the search
        checks it on each candidate, which it cannot prune on. None: no such target.
    """

    name: str
    meaning: str
    better: str
    attribute: str
    label: str | None = None
    needs: tuple[str, ...] = ()
    target: str | None = None

    def __post_init__(self):
        if self.better not in BETTER:
            raise SdcError(f"better: got {self.better!r} for the headline {self.name!r}; expected lower or higher")
        object.__setattr__(self, "needs", tuple(self.needs))


@dataclass(frozen=True)
class Assessed:
    """A measure as the assessment, :class:`sdckit.SdcProblem`'s per-step table and the search
    use it (the facts on its declaration).

    Attributes
    ----------
    needs : tuple of str
        The scenario roles that must be set for it to run (``keys``, ``numeric_keys``,
        ``sensitive``, ...).
    headlines : tuple of Headline
    order : int
        Its place in the table (the per-step table's rows, the search's target names).
    targets : tuple of str
        The search-target names the search implements for it (see :func:`sdckit.search`);
        a headline's ``target`` is a further one, checked generically.
    part : str or None
        The field of :class:`~sdckit.results.assessment.VariantAssessment` the assessment's own
        code fills for it; None: the assessment calls it with the scenario's roles (and
        ``call``) and keeps its headlines in ``VariantAssessment.measures``.
    assess : bool
        Whether the assessment runs it (False: only the per-step table or the search use it).
    variants_only : bool
        Measured against the original (its inputs are the original and the protected file):
        for a protection variant only.
    step : bool
        Recomputed by :class:`sdckit.SdcProblem` after every step.
    option : str or None
        The option that must be given besides the roles (``register_sample``, ``suda``,
        ``synthetic``), or None.
    call : mapping
        Further arguments of the generic call (e.g. ``{"allow_degenerate_keys": True}``).
    """

    needs: tuple[str, ...]
    headlines: tuple[Headline, ...]
    order: int
    targets: tuple[str, ...] = ()
    part: str | None = None
    assess: bool = True
    variants_only: bool = False
    step: bool = False
    option: str | None = None
    call: Mapping = field(default_factory=dict)

    def __post_init__(self):
        if not self.headlines:
            raise SdcError("headlines: a measure in the assessment's table gives at least one headline")
        for name in ("needs", "headlines", "targets"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "call", dict(self.call))
