"""Information loss (data utility) of a protected file against its original."""

from .information_loss import SCALES, information_loss
from .results import InformationLossResult

__all__ = ["SCALES", "InformationLossResult", "information_loss"]
