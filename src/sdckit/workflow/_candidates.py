"""The candidates of the protection search and the outcome of a search (shared by the lattice
search and the search under ARX's model)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["Candidate", "Outcome", "levels_text", "plain_step"]


@dataclass
class Candidate:
    """One evaluated node: its levels, loss, risk measures and recipe steps."""

    levels: tuple
    bound: float
    meets: bool = False
    within_limit: bool = True
    loss: float = math.nan
    loss_by_variable: dict = field(default_factory=dict)
    risk: dict = field(default_factory=dict)
    rate: float = math.nan
    household_rate: float | None = None
    cells: int = 0
    records: int = 0
    steps: list = field(default_factory=list)
    table: object = None


@dataclass
class Outcome:
    best: Candidate | None
    evaluated: list
    n_nodes: int
    n_checked: int
    n_pruned: int
    n_tagged: int
    optimal: bool
    stopped: str | None = None
    extra: dict = field(default_factory=dict)


def plain_step(method: str, parameters) -> dict:
    """A recipe step: the method and its recorded parameters (JSON-friendly)."""
    from ..results.protection import jsonable

    return {"method": method, "parameters": jsonable(dict(parameters))}


def levels_text(levels) -> str:
    """A node's levels for a message, in the order of the keys (levels are numbers, never data
    values): ``"(3, 1, 0)"``."""
    return "(" + ", ".join(str(int(v)) for v in levels) + ")"
