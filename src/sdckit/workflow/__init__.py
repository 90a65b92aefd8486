"""The protect-then-measure workflow, on top of every measure, method and the report:
:class:`SdcProblem` (apply protection steps, measure after each, undo, write, replay a recipe,
draw the report) and :func:`assess` (the one-command assessment, which replays recipes)."""

from typing import TYPE_CHECKING

from .._lazy import attach

if TYPE_CHECKING:
    from .assess import assess
    from .problem import SdcProblem, Step, protection_methods
    from .search import search


__all__ = ["SdcProblem", "Step", "assess", "protection_methods", "search"]

if not TYPE_CHECKING:  # a type checker reads the imports above (a module __getattr__ would accept any name)
    __getattr__, __dir__ = attach(globals())
