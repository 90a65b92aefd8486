"""sdckit: statistical disclosure control for microdata.

Measures how easily a person in a microdata file can be re-identified, how much a
protection step damages the data, and applies the protection methods that trade the two.

Importing sdckit imports NumPy, SciPy-free kernels, narwhals and Polars only; pandas,
PyArrow, matplotlib and the file readers are imported when used.
"""

from ._errors import MissingColumnError, SdcError, SdcWarning
from ._memory import tune_memory
from .io import read_data
from .risk import FrequencyResult, KAnonymityResult, frequencies, k_anonymity
from .risk import IndividualRiskResult, RiskThreshold, individual_risk
from .risk import LDiversityResult, TClosenessResult, l_diversity, t_closeness
from .risk import SudaResult, suda
from .risk import ConfidentialityResult, IntervalDisclosureResult, OutlierResult, RMDIntervalResult
from .risk import confidentiality_plot, interval_disclosure, outliers, rmd_interval_disclosure
from .risk import ExternalRiskResult, LinkageResult, external_risk, record_linkage_risk
from .risk import LoglinearRiskResult, loglinear_risk
from .scenario import Scenario
from .utility import InformationLossResult, information_loss

__version__ = "0.1.0"

__all__ = [
    "IndividualRiskResult",
    "RiskThreshold",
    "individual_risk",
    "LDiversityResult",
    "TClosenessResult",
    "l_diversity",
    "t_closeness",
    "SudaResult",
    "suda",
    "FrequencyResult",
    "KAnonymityResult",
    "MissingColumnError",
    "Scenario",
    "SdcError",
    "SdcWarning",
    "frequencies",
    "k_anonymity",
    "read_data",
    "tune_memory",
    "InformationLossResult",
    "information_loss",
    "ConfidentialityResult",
    "IntervalDisclosureResult",
    "OutlierResult",
    "RMDIntervalResult",
    "ExternalRiskResult",
    "LinkageResult",
    "confidentiality_plot",
    "interval_disclosure",
    "outliers",
    "rmd_interval_disclosure",
    "external_risk",
    "record_linkage_risk",
    "LoglinearRiskResult",
    "loglinear_risk",
    "__version__",
]
