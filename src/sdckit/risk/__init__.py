"""Disclosure-risk measures for categorical key variables."""

from .frequencies import FrequencyResult, KAnonymityResult, frequencies, k_anonymity

__all__ = ["FrequencyResult", "KAnonymityResult", "frequencies", "k_anonymity"]

from .diversity import LDiversityResult, TClosenessResult, l_diversity, t_closeness  # noqa: E402

__all__ += ["LDiversityResult", "TClosenessResult", "l_diversity", "t_closeness"]

from .suda import MSU, SudaResult, suda  # noqa: E402

__all__ += ["MSU", "SudaResult", "suda"]

from .continuous import (  # noqa: E402
    ConfidentialityResult,
    IntervalDisclosureResult,
    OutlierResult,
    RMDIntervalResult,
    confidentiality_plot,
    interval_disclosure,
    outliers,
    rmd_interval_disclosure,
)
from .linkage import ExternalRiskResult, LinkageResult, external_risk, record_linkage_risk  # noqa: E402

__all__ += ["ConfidentialityResult", "IntervalDisclosureResult", "OutlierResult", "RMDIntervalResult",
            "confidentiality_plot", "interval_disclosure", "outliers", "rmd_interval_disclosure",
            "ExternalRiskResult", "LinkageResult", "external_risk", "record_linkage_risk"]

from .individual import IndividualRiskResult, RiskThreshold, individual_risk  # noqa: E402

__all__ += ["IndividualRiskResult", "RiskThreshold", "individual_risk"]

from .loglinear import LoglinearRiskResult, loglinear_risk  # noqa: E402

__all__ += ["LoglinearRiskResult", "loglinear_risk"]
