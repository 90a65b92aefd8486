"""Information loss (data utility) of a protected file against its original, and how the
estimates a data user publishes move."""

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from ..results.analysis import AnalysisChangeResult
    from ..results.estimates import EstimatesResult
    from ..results.information_loss import InformationLossResult
    from ..results.synthetic import SyntheticUtilityResult
    from ..results.variant_loss import VariantLossResult
    from .analysis import analysis_change
    from .estimates import estimates_change
    from .information_loss import SCALES, LossDistance, LossMeasures, information_loss
    from .synthetic import synthetic_utility
    from .variant_loss import variant_loss


__all__ = [
    "SCALES",
    "AnalysisChangeResult",
    "EstimatesResult",
    "InformationLossResult",
    "LossDistance",
    "LossMeasures",
    "SyntheticUtilityResult",
    "VariantLossResult",
    "analysis_change",
    "estimates_change",
    "information_loss",
    "synthetic_utility",
    "variant_loss",
]

if not TYPE_CHECKING:  # a type checker reads the imports above (a module __getattr__ would accept any name)
    __getattr__, __dir__ = attach(globals())
