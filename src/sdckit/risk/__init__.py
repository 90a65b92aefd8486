"""Disclosure-risk measures for categorical key variables."""

from .frequencies import FrequencyResult, KAnonymityResult, frequencies, k_anonymity

__all__ = ["FrequencyResult", "KAnonymityResult", "frequencies", "k_anonymity"]
