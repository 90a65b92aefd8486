"""Information loss (data utility) of a protected file against its original."""

from ..results.information_loss import InformationLossResult
from ..results.variant_loss import VariantLossResult
from .information_loss import SCALES, information_loss
from .variant_loss import variant_loss

__all__ = ["SCALES", "InformationLossResult", "VariantLossResult", "information_loss", "variant_loss"]
