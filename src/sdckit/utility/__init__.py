"""Information loss (data utility) of a protected file against its original, and how the
estimates a data user publishes move."""

from ..results.estimates import EstimatesResult
from ..results.information_loss import InformationLossResult
from ..results.synthetic import SyntheticUtilityResult
from ..results.variant_loss import VariantLossResult
from .estimates import estimates_change
from .information_loss import SCALES, information_loss
from .synthetic import synthetic_utility
from .variant_loss import variant_loss

__all__ = [
    "SCALES",
    "EstimatesResult",
    "InformationLossResult",
    "SyntheticUtilityResult",
    "VariantLossResult",
    "estimates_change",
    "information_loss",
    "synthetic_utility",
    "variant_loss",
]
