"""Moved to :mod:`sdckit.results.assessment`: the assessment's result is a result like every
other (this old path re-exports it)."""

from ..results.assessment import AssessmentResult, VariantAssessment

__all__ = ["AssessmentResult", "VariantAssessment"]
