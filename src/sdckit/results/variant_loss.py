"""The result of :func:`sdckit.variant_loss`: :class:`VariantLossResult`.

Every field is an aggregate except ``record_loss`` and ``distances`` (per record, kept with
``records=True``). Losses are fractions in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._errors import SdcError
from ._base import Result, Summary, json_safe, new_axes

__all__ = ["CHANGE_KINDS", "VariantLossResult"]

#: the kinds of change of a variable (a variable may combine several, joined by "+")
CHANGE_KINDS = ("unchanged", "suppressed", "recoded", "perturbed", "pram")


@dataclass(frozen=True, eq=False)
class VariantLossResult(Result):
    """The loss of every change a protected file made, variable by variable, without units.

    Attributes
    ----------
    variables : tuple of str
    scales : dict variable -> "nominal" | "numeric"
    n : int
        Records (rows paired by position).
    loss : float
        The mean of lambda_j over the variables, in [0, 1].
    loss_by_variable : dict variable -> float
        lambda_j = (1/n) sum_i d_ij, in [0, 1].
    share_by_variable : dict variable -> float
        lambda_j / sum_k lambda_k (0 for every variable when nothing changed).
    suppressed_by_variable : dict variable -> int
        Cells suppressed (original observed, released missing).
    change_by_variable : dict variable -> dict
        ``kind`` (``"unchanged"``, ``"suppressed"``, ``"recoded"``, ``"perturbed"``, ``"pram"`` or
        a ``"+"``-joined combination such as ``"recoded+suppressed"``), ``n_suppressed``,
        ``n_changed`` (released value differs from the original; suppressions not counted),
        ``n_categories_before`` and ``n_categories_after`` (None for numbers kept numeric),
        ``loss_suppressed`` and ``loss_changed`` (the parts of lambda_j from the suppressed
        records and from the others; they add up to lambda_j).
    ebil : dict variable -> float
        Entropy-based information loss (natural log, nats) of each PRAMed variable.
    record_loss : ndarray (n,) or None
        Per record, the mean distance over the variables (``records=True``).
    distances : ndarray (n, m) or None
        Per-record distances d_ij (``records=True``).
    notes : tuple of str
    """

    variables: tuple = ()
    scales: dict = field(default_factory=dict)
    n: int = 0
    loss: float = 0.0
    loss_by_variable: dict = field(default_factory=dict)
    share_by_variable: dict = field(default_factory=dict)
    suppressed_by_variable: dict = field(default_factory=dict)
    change_by_variable: dict = field(default_factory=dict)
    ebil: dict = field(default_factory=dict)
    record_loss: np.ndarray | None = field(default=None, repr=False)
    distances: np.ndarray | None = field(default=None, repr=False)
    notes: tuple = ()

    _headline: ClassVar[tuple] = ("n", "loss")

    def to_dict(self) -> dict:
        """Aggregates only, JSON-serialisable."""
        return json_safe(
            {
                "measure": "variant_loss",
                "n": self.n,
                "variables": list(self.variables),
                "scales": dict(self.scales),
                "loss": self.loss,
                "loss_by_variable": dict(self.loss_by_variable),
                "share_by_variable": dict(self.share_by_variable),
                "suppressed_by_variable": dict(self.suppressed_by_variable),
                "change_by_variable": {v: dict(c) for v, c in self.change_by_variable.items()},
                "ebil": dict(self.ebil),
                "notes": list(self.notes),
            }
        )

    def summary(self) -> Summary:
        rows = [
            (
                v,
                self.change_by_variable[v]["kind"],
                self.loss_by_variable[v],
                self.share_by_variable[v],
                self.suppressed_by_variable[v],
                self.change_by_variable[v]["n_changed"],
                self.ebil.get(v),
            )
            for v in self.variables
        ]
        table = {
            "columns": ["variable", "kind", "lambda_j", "share of total", "suppressed", "changed", "EBIL (nats)"],
            "rows": rows,
        }
        head = [("records", self.n), ("variables", len(self.variables)), ("loss (mean lambda_j)", self.loss)]
        notes = (
            "d in [0, 1] per record: nominal 1 - P(original = x | released = x'); numbers "
            "(2/pi) arctan(|x - x'| / S) against the released value, or against the mean original "
            "value of its interval or group; PRAM 1 - P[x, x]; a suppressed cell costs 1 (nominal) or "
            "the distance to the farther extreme (numbers)",
            *self.notes,
        )
        return Summary("Loss of every change", (("", head), ("Per variable", table)), notes)

    def _records(self) -> dict:
        if self.distances is None:
            raise SdcError("to_frame: the per-record losses were not kept; call variant_loss(..., records=True)")
        out: dict[str, Any] = {"loss": self.record_loss}
        for j, v in enumerate(self.variables):
            out[f"d_{v}"] = self.distances[:, j]
        return out

    def plot(self, ax=None):
        """Horizontal stacked bars per variable: the part of lambda_j from suppressed cells and
        the part from the other changes."""
        ax = new_axes(ax)
        names = list(self.variables)
        supp = [self.change_by_variable[v]["loss_suppressed"] for v in names]
        changed = [self.change_by_variable[v]["loss_changed"] for v in names]
        ax.barh(names, supp, color="#C44E52", label="suppressed")
        ax.barh(names, changed, left=supp, color="#4C72B0", label="changed")
        ax.set_xlabel("lambda_j")
        ax.set_title("Loss of every change, by variable")
        ax.legend(loc="lower right")
        ax.invert_yaxis()
        return ax
