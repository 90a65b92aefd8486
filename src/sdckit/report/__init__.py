"""The renderer of the assessment: its self-contained HTML report, text tables and figures.

The report draws an :class:`~sdckit.results.assessment.AssessmentResult` and imports nothing
above :mod:`sdckit.results`: the measures are run by :mod:`sdckit.assessment`
(:func:`sdckit.assess`, which also replays recipes, and
:func:`sdckit.assessment.assess_variants`). ``to_html(path)`` gives one HTML file with inline
SVG figures and styles, no script, no network; matplotlib is imported only when the report is
drawn.
"""

from ..results.assessment import AssessmentResult, VariantAssessment
from ._moved import moved

__all__ = ["AssessmentResult", "VariantAssessment", "assess_variants"]

#: ``sdckit.report.assess_variants`` moved to :func:`sdckit.assessment.assess_variants`
__getattr__ = moved(__name__, "sdckit.assessment")
