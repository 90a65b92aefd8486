"""The assessment: every measure that applies to a scenario's roles, run on the original file
and on each protection variant, reduced to aggregates in an
:class:`~sdckit.results.assessment.AssessmentResult` (which :mod:`sdckit.report` draws).

It sits between the registry and the workflow: :func:`assess_variants` measures tables given
as variants (:func:`sdckit.assess` replays recipes through an :class:`~sdckit.SdcProblem`
first). :mod:`~sdckit.assessment.table` is the one table of the measures: which roles each
needs, which headline numbers it gives and which search targets it provides; the assessment,
:class:`~sdckit.SdcProblem`'s per-step measures, the search and the app read it.
"""

from ..results.assessment import AssessmentResult, VariantAssessment
from .table import EXCLUDED, MEASURES, Headline, MeasureEntry, applies, entry, search_targets
from .variants import assess_variants

__all__ = [
    "EXCLUDED",
    "MEASURES",
    "AssessmentResult",
    "Headline",
    "MeasureEntry",
    "VariantAssessment",
    "applies",
    "assess_variants",
    "entry",
    "search_targets",
]
