"""sdckit: statistical disclosure control for microdata.

Measures how easily a person in a microdata file can be re-identified, how much a
protection step damages the data, and applies the protection methods that trade the two.

Importing sdckit loads NumPy, narwhals and Polars; SciPy, pandas, PyArrow, matplotlib and
pyreadstat are imported only when a function needs them.
"""

from ._errors import MissingColumnError, SdcError, SdcWarning
from ._memory import tune_memory
from .io import read_data
from .risk import (
    MSU,
    ConfidentialityResult,
    ExternalRiskResult,
    FrequencyResult,
    IndividualRiskResult,
    IntervalDisclosureResult,
    KAnonymityResult,
    LDiversityResult,
    LinkageResult,
    LoglinearRiskResult,
    OutlierResult,
    RiskThreshold,
    RMDIntervalResult,
    SudaResult,
    TClosenessResult,
    confidentiality_plot,
    external_risk,
    frequencies,
    individual_risk,
    interval_disclosure,
    k_anonymity,
    l_diversity,
    loglinear_risk,
    outliers,
    record_linkage_risk,
    rmd_interval_disclosure,
    suda,
    t_closeness,
)
from .scenario import Scenario
from .utility import InformationLossResult, information_loss

__version__ = "0.1.0"

__all__ = [
    # data and roles
    "Scenario", "read_data", "tune_memory",
    # risk, categorical keys
    "frequencies", "FrequencyResult",
    "k_anonymity", "KAnonymityResult",
    "l_diversity", "LDiversityResult",
    "t_closeness", "TClosenessResult",
    "individual_risk", "IndividualRiskResult", "RiskThreshold",
    "suda", "SudaResult", "MSU",
    "loglinear_risk", "LoglinearRiskResult",
    # risk, continuous keys and record linkage
    "interval_disclosure", "IntervalDisclosureResult",
    "rmd_interval_disclosure", "RMDIntervalResult",
    "outliers", "OutlierResult",
    "record_linkage_risk", "LinkageResult",
    "external_risk", "ExternalRiskResult",
    "confidentiality_plot", "ConfidentialityResult",
    # information loss
    "information_loss", "InformationLossResult",
    # errors
    "SdcError", "MissingColumnError", "SdcWarning",
    "__version__",
]
