"""Disclosure-risk measures for categorical key variables."""

from .frequencies import FrequencyResult, KAnonymityResult, frequencies, k_anonymity

__all__ = ["FrequencyResult", "KAnonymityResult", "frequencies", "k_anonymity"]

from .diversity import LDiversityResult, TClosenessResult, l_diversity, t_closeness  # noqa: E402

__all__ += ["LDiversityResult", "TClosenessResult", "l_diversity", "t_closeness"]
