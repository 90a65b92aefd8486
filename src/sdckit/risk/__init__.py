"""Disclosure-risk measures.

Categorical keys: :func:`frequencies`, :func:`k_anonymity`, :func:`l_diversity`,
:func:`t_closeness`, :func:`individual_risk`, :func:`suda`, :func:`loglinear_risk`,
:func:`population_uniques`, :func:`threshold_rule`.
Continuous keys and record linkage: :func:`interval_disclosure`, :func:`relative_interval_risk`,
:func:`rmd_interval_disclosure`, :func:`combined_risk`, :func:`outliers`, :func:`record_linkage_risk`,
:func:`external_risk`, :func:`confidentiality_plot`, :func:`categorical_confidentiality_plot`.
Magnitude tables of business microdata: :func:`dominance_rules`.
Synthetic data: :func:`synthetic_risk`.
"""

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ._options import Intervals
    from .combined import CombinedRiskResult, combined_risk
    from .confidentiality import CategoricalConfidentialityResult, categorical_confidentiality_plot
    from .continuous import (
        ConfidentialityResult,
        IntervalDisclosureResult,
        OutlierResult,
        RelativeIntervalResult,
        RMDIntervalResult,
        confidentiality_plot,
        interval_disclosure,
        outliers,
        relative_interval_risk,
        rmd_interval_disclosure,
    )
    from .diversity import LDiversityResult, TClosenessResult, l_diversity, t_closeness
    from .dominance import DominanceResult, dominance_rules
    from .frequencies import FrequencyResult, KAnonymityResult, frequencies, k_anonymity
    from .individual import IndividualEstimation, IndividualRiskResult, RiskThreshold, individual_risk
    from .linkage import (
        ExternalPairing,
        ExternalRiskResult,
        LinkageDistance,
        LinkageProbabilistic,
        LinkageResult,
        external_risk,
        record_linkage_risk,
    )
    from .loglinear import LoglinearFit, LoglinearRiskResult, LoglinearSelection, loglinear_risk
    from .register import RegisterFit, RegisterRiskResult, register_risk
    from .suda import MSU, SudaResult, suda
    from .synthetic import (
        SyntheticAttacks,
        SyntheticDecision,
        SyntheticRiskResult,
        SyntheticSimilarity,
        synthetic_risk,
    )
    from .threshold_rule import ThresholdRuleResult, threshold_rule
    from .uniqueness import PopulationUniquesResult, population_uniques


__all__ = [
    # categorical keys
    "frequencies",
    "FrequencyResult",
    "k_anonymity",
    "KAnonymityResult",
    "threshold_rule",
    "ThresholdRuleResult",
    "l_diversity",
    "LDiversityResult",
    "t_closeness",
    "TClosenessResult",
    "individual_risk",
    "IndividualRiskResult",
    "IndividualEstimation",
    "RiskThreshold",
    "suda",
    "SudaResult",
    "MSU",
    "loglinear_risk",
    "LoglinearRiskResult",
    "LoglinearSelection",
    "LoglinearFit",
    "population_uniques",
    "PopulationUniquesResult",
    "register_risk",
    "RegisterRiskResult",
    "RegisterFit",
    # continuous keys and record linkage
    "interval_disclosure",
    "IntervalDisclosureResult",
    "relative_interval_risk",
    "RelativeIntervalResult",
    "combined_risk",
    "CombinedRiskResult",
    "rmd_interval_disclosure",
    "RMDIntervalResult",
    "outliers",
    "OutlierResult",
    "record_linkage_risk",
    "LinkageResult",
    "LinkageDistance",
    "LinkageProbabilistic",
    "external_risk",
    "ExternalRiskResult",
    "ExternalPairing",
    "confidentiality_plot",
    "ConfidentialityResult",
    "categorical_confidentiality_plot",
    "CategoricalConfidentialityResult",
    # magnitude tables of business microdata
    "dominance_rules",
    "DominanceResult",
    # synthetic data
    "synthetic_risk",
    "SyntheticRiskResult",
    "SyntheticSimilarity",
    "SyntheticAttacks",
    "SyntheticDecision",
    # records of options shared by several measures
    "Intervals",
]

if not TYPE_CHECKING:  # a type checker reads the imports above (a module __getattr__ would accept any name)
    __getattr__, __dir__ = attach(globals())
