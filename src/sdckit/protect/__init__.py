"""Protection methods for categorical keys: each takes a table and returns a
:class:`ProtectionResult` holding the protected table (the caller's frame type, same rows and
columns, the input untouched) and an aggregated log of what changed."""

from ._result import ProtectionResult
from .recode import global_recode, top_bottom_coding
from .suppression import local_suppression

#: the methods a workflow (:class:`sdckit.SdcProblem`) or a recipe can apply, by name
METHODS = ("global_recode", "top_bottom_coding", "local_suppression")

__all__ = ["METHODS", "ProtectionResult", "global_recode", "local_suppression", "top_bottom_coding"]
