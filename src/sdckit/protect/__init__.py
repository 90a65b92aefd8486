"""Protection methods for categorical keys: each takes a table and returns a
:class:`ProtectionResult` holding the protected table (the caller's frame type, same rows and
columns, the input untouched) and an aggregated log of what changed."""

from .._declare import declaration
from ..results.protection import ProtectionResult
from .microaggregation import microaggregation
from .noise import add_noise
from .pram import pram
from .rank_swap import rank_swap
from .recode import global_recode, top_bottom_coding
from .record_swap import record_swap
from .risk_suppression import suppress_by_risk
from .suppression import local_suppression

#: the methods a workflow (:class:`sdckit.SdcProblem`) or a recipe can apply, by name: every
#: function of this package that declares itself a protection method
METHODS = tuple(sorted(n for n, f in dict(globals()).items() if getattr(declaration(f), "kind", None) == "method"))

__all__ = [
    "METHODS",
    "ProtectionResult",
    "add_noise",
    "global_recode",
    "local_suppression",
    "microaggregation",
    "pram",
    "rank_swap",
    "record_swap",
    "suppress_by_risk",
    "top_bottom_coding",
]
