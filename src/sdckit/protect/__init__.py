"""Protection methods: each takes a table and returns a :class:`ProtectionResult` holding the
protected table (the caller's frame type, same rows and columns, the input untouched) and an
aggregated log of what changed."""

from typing import TYPE_CHECKING

from .._lazy import attach, lazy_names

if TYPE_CHECKING:
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

    #: the methods a workflow (:class:`sdckit.SdcProblem`) or a recipe can apply, by name
    METHODS: tuple[str, ...]

#: the package's public names: METHODS, ProtectionResult and every method (a new method needs
#: only its import line above, written ``name as name``: a re-export)
__all__ = ["METHODS", "ProtectionResult", *sorted(set(lazy_names(__file__)[0]) - {"ProtectionResult"})]

if not TYPE_CHECKING:  # a type checker reads the imports above (a module __getattr__ would accept any name)
    _lazy_attribute, __dir__ = attach(globals())

    def __getattr__(name: str):
        if name == "METHODS":  # every function of this package that declares itself a protection method
            global METHODS
            from .._declare import declaration

            METHODS = tuple(
                n for n in __all__[2:] if getattr(declaration(_lazy_attribute(n)), "kind", None) == "method"
            )
            return METHODS
        return _lazy_attribute(name)
