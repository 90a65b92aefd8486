"""The assessment and its self-contained HTML report.

:func:`assess_variants` (and :func:`sdckit.assess`, which also replays recipes) runs every
measure that applies to a scenario's roles on the original file and on each protection variant
and returns an :class:`AssessmentResult`: ``summary()``, ``to_dict()`` (aggregates, JSON),
``to_html(path)`` (one HTML file with inline SVG figures and styles, no script, no network) and
the same report in Jupyter. matplotlib is imported only when the report is drawn.
"""

from .result import AssessmentResult, VariantAssessment
from .variants import assess_variants

__all__ = ["AssessmentResult", "VariantAssessment", "assess_variants"]
