"""Information loss (data utility) of a protected file against its original, and how the
estimates a data user publishes move."""

from ..results.analysis import AnalysisChangeResult
from ..results.estimates import EstimatesResult
from ..results.information_loss import InformationLossResult
from ..results.synthetic import SyntheticUtilityResult
from ..results.variant_loss import VariantLossResult
from .analysis import analysis_change
from .estimates import estimates_change
from .information_loss import SCALES, information_loss
from .synthetic import synthetic_utility
from .variant_loss import variant_loss

__all__ = [
    "SCALES",
    "AnalysisChangeResult",
    "EstimatesResult",
    "InformationLossResult",
    "SyntheticUtilityResult",
    "VariantLossResult",
    "analysis_change",
    "estimates_change",
    "information_loss",
    "synthetic_utility",
    "variant_loss",
]
