"""Information loss (data utility) of a protected file against its original, and how the
estimates a data user publishes move."""

from ..results.estimates import EstimatesResult
from ..results.information_loss import InformationLossResult
from .estimates import estimates_change
from .information_loss import SCALES, information_loss

__all__ = [
    "SCALES",
    "InformationLossResult",
    "information_loss",
    "EstimatesResult",
    "estimates_change",
]
