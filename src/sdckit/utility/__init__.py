"""Information loss (data utility) of a protected file against its original (spec G)."""

from .information_loss import SCALES, InformationLossResult, information_loss

__all__ = ["SCALES", "InformationLossResult", "information_loss"]
