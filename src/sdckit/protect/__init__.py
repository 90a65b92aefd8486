"""Protection methods: each takes a table and returns a :class:`ProtectionResult` holding the
protected table (the caller's frame type, same rows and columns, the input untouched) and an
aggregated log of what changed."""

from .._declare import declaration
from ..results.protection import ProtectionResult
from .gower import microaggregation_gower as microaggregation_gower
from .microaggregation import microaggregation as microaggregation
from .noise import add_noise as add_noise
from .pram import pram as pram
from .rank_swap import rank_swap as rank_swap
from .recode import global_recode as global_recode
from .recode import top_bottom_coding as top_bottom_coding
from .record_suppression import suppress_records as suppress_records
from .record_swap import record_swap as record_swap
from .risk_suppression import suppress_by_risk as suppress_by_risk
from .rounding import rounding as rounding
from .suppression import local_suppression as local_suppression

#: the methods a workflow (:class:`sdckit.SdcProblem`) or a recipe can apply, by name: every
#: function of this package that declares itself a protection method
METHODS = tuple(sorted(n for n, f in dict(globals()).items() if getattr(declaration(f), "kind", None) == "method"))

#: the package's public names: METHODS, ProtectionResult and every declared method (a new method
#: needs only its import line above, written ``name as name``: a re-export)
__all__ = ["METHODS", "ProtectionResult", *METHODS]
