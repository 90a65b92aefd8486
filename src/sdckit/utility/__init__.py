"""Information loss (data utility) of a protected file against its original."""

from ..results.information_loss import InformationLossResult
from .information_loss import SCALES, information_loss

__all__ = ["SCALES", "InformationLossResult", "information_loss"]
