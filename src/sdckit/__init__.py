"""sdckit: statistical disclosure control for microdata.

Measures how easily a person in a microdata file can be re-identified, how much a
protection step damages the data, and applies the protection methods that trade the two.

Importing sdckit imports none of its measures, methods or libraries: each public name is
imported from its module the first time it is used (``sdckit.k_anonymity``), with what that
module needs (NumPy, narwhals, Polars; SciPy, pandas, PyArrow, matplotlib and pyreadstat only
when a function needs them). The names are the imports below ``if TYPE_CHECKING:`` (see
``sdckit._lazy``).
"""

from typing import TYPE_CHECKING

from ._errors import MissingColumnError, SdcError, SdcWarning
from ._lazy import attach
from ._version import __version__
from .risk import __all__ as _risk_all

if TYPE_CHECKING:
    from ._memory import tune_memory
    from .io import read_data, read_metadata, write_data
    from .protect import (
        ProtectionResult,
        add_noise,
        global_recode,
        local_suppression,
        microaggregation,
        microaggregation_gower,
        pram,
        rank_swap,
        record_swap,
        rounding,
        suppress_by_risk,
        suppress_records,
        top_bottom_coding,
    )
    from .results.assessment import AssessmentResult
    from .results.search import SearchResult
    from .risk import *  # noqa: F403  (every risk measure and its result class; see risk.__all__)
    from .scenario import Scenario
    from .utility import (
        AnalysisChangeResult,
        EstimatesResult,
        InformationLossResult,
        LossDistance,
        LossMeasures,
        SyntheticUtilityResult,
        VariantLossResult,
        analysis_change,
        estimates_change,
        information_loss,
        synthetic_utility,
        variant_loss,
    )
    from .workflow import SdcProblem, assess, search

__all__ = [
    # data and roles
    "Scenario",
    "read_data",
    "read_metadata",
    "write_data",
    "tune_memory",
    # risk measures (categorical keys, continuous keys, record linkage)
    *_risk_all,
    # information loss
    "information_loss",
    "InformationLossResult",
    "LossDistance",
    "LossMeasures",
    "variant_loss",
    "VariantLossResult",
    # the estimates a data user publishes, original against protected
    "estimates_change",
    "EstimatesResult",
    # information loss of types 2 and 3: variances, covariances on subdomains, tests
    "analysis_change",
    "AnalysisChangeResult",
    # the utility of a synthetic file (its risk: synthetic_risk, among the risk measures)
    "synthetic_utility",
    "SyntheticUtilityResult",
    # the one-command assessment and its report
    "assess",
    "AssessmentResult",
    # protection and the protect-then-measure workflow
    "SdcProblem",
    "ProtectionResult",
    # the protection search: the least loss that meets a risk target
    "search",
    "SearchResult",
    "global_recode",
    "top_bottom_coding",
    "local_suppression",
    "suppress_by_risk",
    "suppress_records",
    "pram",
    "add_noise",
    "microaggregation",
    "microaggregation_gower",
    "rank_swap",
    "record_swap",
    "rounding",
    # errors
    "SdcError",
    "MissingColumnError",
    "SdcWarning",
    "__version__",
]

if not TYPE_CHECKING:  # a type checker reads the imports above (a module __getattr__ would accept any name)
    __getattr__, __dir__ = attach(globals())
