"""The protect-then-measure workflow, on top of every measure, method and the report:
:class:`SdcProblem` (apply protection steps, measure after each, undo, write, replay a recipe,
draw the report)."""

from .problem import SdcProblem, Step, protection_methods

__all__ = ["SdcProblem", "Step", "protection_methods"]
