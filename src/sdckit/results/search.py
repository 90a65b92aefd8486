"""The result of :func:`sdckit.search`: :class:`SearchResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._errors import SdcError
from ._base import Result, Summary, fmt, json_safe, new_axes

__all__ = ["SearchResult"]


#: the name of each objective of the search
_OBJECTIVE_NAMES = {
    "loss": "the loss of every change",
    "arx": "ARX's Loss",
    "precision": "ARX's precision",
    "discernibility": "ARX's discernibility",
    "entropy": "ARX's non-uniform entropy",
}


def _levels_text(levels) -> str:
    return ", ".join(f"{k}={v}" for k, v in levels.items())


@dataclass(frozen=True, eq=False)
class SearchResult(Result):
    """The protection a search found, the candidates it weighed and why this one won.

    Attributes
    ----------
    keys : tuple of str
    n : int
        Records.
    target : dict
        The target searched for (``k``, ``l``, ``max_risk``, ``max_global_risk``, ...).
    levels : dict key -> int
        The generalisation level of each key (0 = original categories).
    suppressed_records : int
        Records whose every key value is suppressed.
    suppressed_cells : int
        Key values suppressed (observed in the original, missing in ``protected``).
    loss : float
        The objective of the winner: the (weighted) mean of lambda_j of
        :func:`sdckit.variant_loss`, or ARX's quality model named by ``objective`` (Loss,
        precision, discernibility, non-uniform entropy).
    loss_by_variable : dict key -> float
        The objective's per-key parts (none for discernibility).
    risk : dict
        The target measures reached, measured afresh on ``protected`` (``k_violations``,
        ``l``, ``max_risk``, ``global_risk``, ``household_global_risk``, ``max_suda``),
        ``rate``, the expected re-identification rate sum r_i / n of
        :func:`sdckit.individual_risk`, and, when the scenario has households,
        ``household_rate``, sum_i r^h_{g(i)} / n with r^h_g = 1 - prod_{i in g} (1 - r_i).
    recipe : dict
        A recipe that :meth:`sdckit.SdcProblem.from_recipe` replays to ``protected``.
    protected : frame
        The protected file, as the caller's frame type.
    front : tuple of dict
        The Pareto front of the re-identification rate against the loss over the candidates
        evaluated (within the suppression limit): ``levels``, ``loss``, ``rate`` (the
        re-identification rate of the candidate's file, as in ``risk``), ``household_rate``
        (when the scenario has households), ``meets``, ``suppressed_cells``, ``recipe``; in
        increasing loss. A cell answer meets k under the rule that a suppressed value matches
        every category, and its rate can still be far above a record answer's: the rate is the
        risk the loss is weighed against.
    runners_up : tuple of dict
        The next-best candidates that meet the target (up to 3): ``levels``, ``loss``, ``rate``,
        ``household_rate`` (with households), ``suppressed_cells``, ``recipe``.
    n_candidates : int
        The nodes of the lattice.
    n_checked, n_pruned, n_tagged : int
        Candidates evaluated; never evaluated because their lower bound was not below the
        best loss; taken as safe without measuring (a generalisation of a safe node).
    optimal : bool
        True when the search was exhaustive (proven optimal); False for a best effort.
    lower_bound : float or None
        The least loss any candidate can have: ``loss`` when proven optimal; after an early
        stop, the smallest lower bound of the candidates not checked when it is below the best
        loss found (the optimum lies between it and ``loss``). None when not computed (the
        search under ARX's model reports ``optimal`` only).
    stopped : str or None
        What stopped the search early.
    objective, suppression : str
    gs_factor : float or None
        ARX's weight of generalisation against suppression of an ARX quality model (None for
        ``objective="loss"``).
    suppression_limit : float
    seconds : float
    notes : tuple of str
    """

    keys: tuple = ()
    n: int = 0
    target: dict = field(default_factory=dict)
    levels: dict = field(default_factory=dict)
    suppressed_records: int = 0
    suppressed_cells: int = 0
    loss: float | None = None
    loss_by_variable: dict = field(default_factory=dict)
    risk: dict = field(default_factory=dict)
    recipe: dict = field(default_factory=dict, repr=False)
    protected: Any = field(default=None, repr=False)
    front: tuple = field(default=(), repr=False)
    runners_up: tuple = field(default=(), repr=False)
    n_candidates: int = 0
    n_checked: int = 0
    n_pruned: int = 0
    n_tagged: int = 0
    optimal: bool = True
    lower_bound: float | None = None
    stopped: str | None = None
    objective: str = "loss"
    gs_factor: float | None = None
    suppression: str = "cells"
    suppression_limit: float = 0.0
    seconds: float = 0.0
    notes: tuple = ()
    original: Any = field(default=None, repr=False)
    scenario: Any = field(default=None, repr=False)
    #: ``assessor(data, scenario, recipes, **options)``: :func:`sdckit.assess`, given by the search
    #: (a result does not import the workflow above it)
    assessor: Any = field(default=None, repr=False)

    _headline: ClassVar[tuple] = ("levels", "loss", "suppressed_cells", "optimal")

    @property
    def found(self) -> bool:
        """A candidate meeting the target was found."""
        return self.loss is not None

    # -- Result interface ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Aggregates only (JSON): the winner, its recipe, the front without recipes."""
        front = [{k: v for k, v in f.items() if k != "recipe"} for f in self.front]
        runners = [{k: v for k, v in f.items() if k != "recipe"} for f in self.runners_up]
        return json_safe(
            {
                "measure": "search",
                "keys": list(self.keys),
                "n": self.n,
                "target": dict(self.target),
                "found": self.found,
                "levels": dict(self.levels),
                "suppressed_records": self.suppressed_records,
                "suppressed_cells": self.suppressed_cells,
                "loss": self.loss,
                "loss_by_variable": dict(self.loss_by_variable),
                "risk": dict(self.risk),
                "recipe": self.recipe,
                "front": front,
                "runners_up": runners,
                "n_candidates": self.n_candidates,
                "n_checked": self.n_checked,
                "n_pruned": self.n_pruned,
                "n_tagged": self.n_tagged,
                "optimal": self.optimal,
                "lower_bound": self.lower_bound,
                "stopped": self.stopped,
                "objective": self.objective,
                "objective_name": _OBJECTIVE_NAMES.get(self.objective, self.objective),
                "gs_factor": self.gs_factor,
                "suppression": self.suppression,
                "suppression_limit": self.suppression_limit,
                "seconds": self.seconds,
                "notes": list(self.notes),
            }
        )

    def _headline_text(self) -> str:
        if not self.found and self.stopped:
            return (
                f"No candidate meeting the target found before the search stopped at {self.stopped} "
                f"(best effort; {self.n_checked} of {self.n_candidates} checked)."
            )
        if not self.found:
            return (
                f"No candidate meets the target within the suppression limit "
                f"({self.n_checked} of {self.n_candidates} checked)."
            )
        if not self.optimal and self.lower_bound is not None:
            proof = (
                f"best effort: the search stopped at {self.stopped}; no candidate not checked can lose less than "
                f"{fmt(self.lower_bound)}"
            )
        elif not self.optimal:
            proof = f"best effort: the search stopped at {self.stopped}"
        elif self.objective == "loss" and self.n_pruned:
            proof = "optimal up to the loss bound: every candidate not checked loses at least this much by its recodes alone"
        else:
            proof = "proven optimal: every candidate not checked has a lower bound at least this loss"
        name = "loss" if self.objective in ("loss", "arx") else _OBJECTIVE_NAMES.get(self.objective, "loss")
        return f"Least {name} {fmt(self.loss)} at {_levels_text(self.levels)} ({proof})."

    def _objective_text(self) -> str:
        """The objective's name, with ARX's gs-factor where it has one."""
        name = _OBJECTIVE_NAMES.get(self.objective, self.objective)
        gs = "" if self.gs_factor is None else f", gs-factor {fmt(self.gs_factor)}"
        return f"{self.objective} ({name}{gs})"

    def summary(self) -> Summary:
        """Why this candidate won, what the next-best ones cost, how many were checked and pruned."""
        head = [
            ("target", ", ".join(f"{k}={fmt(v)}" for k, v in self.target.items())),
            ("objective", self._objective_text()),
            ("suppression", f"{self.suppression} (limit {fmt(self.suppression_limit)})"),
            ("loss", self.loss),
            ("suppressed cells", self.suppressed_cells),
            ("suppressed records", self.suppressed_records),
            *((f"risk: {k}", v) for k, v in self.risk.items()),
            ("candidates in the lattice", self.n_candidates),
            ("checked", self.n_checked),
            ("pruned by the loss bound", self.n_pruned),
            ("taken as safe (monotone target)", self.n_tagged),
            ("optimal", self.optimal),
            *(
                (("lower bound of the loss", self.lower_bound),)
                if not self.optimal and self.lower_bound is not None
                else ()
            ),
            ("seconds", round(self.seconds, 3)),
        ]
        sections: list = [("", head)]
        notes = list(self.notes)
        if self.runners_up and self.optimal and self.n_pruned:
            notes.append(
                "the next-best candidates were evaluated after the proof (they are among the pruned), to show "
                "what they cost"
            )
        hh = self._households
        if self.runners_up:
            rows = [
                [_levels_text(r["levels"]), r["loss"], r["loss"] - (self.loss or 0.0), r["suppressed_cells"], r["rate"]]
                + ([r["household_rate"]] if hh else [])
                for r in self.runners_up
            ]
            columns = ["levels", "loss", "extra loss", "suppressed cells", "rate"] + (["household rate"] if hh else [])
            sections.append(("Next-best candidates that meet the target", {"columns": columns, "rows": rows}))
        if self.front:
            rows = [
                [_levels_text(f["levels"]), f["loss"], f["rate"]] + ([f["household_rate"]] if hh else []) + [f["meets"]]
                for f in self.front
            ]
            columns = ["levels", "loss", "rate"] + (["household rate"] if hh else []) + ["meets"]
            sections.append(("Pareto front (loss against rate)", {"columns": columns, "rows": rows}))
        return Summary("Protection search", tuple(sections), tuple(notes), headline=self._headline_text())

    @property
    def _households(self) -> bool:
        """The front carries the household rate (the scenario has households)."""
        return any("household_rate" in f for f in (*self.front, *self.runners_up))

    def _records(self) -> dict:
        raise SdcError("to_frame: a search result has no per-record values; it gives the front as a table")

    def to_frame(self):
        """The Pareto front as a table (one row per candidate: levels, loss, rate, meets,
        suppressed cells), the caller's frame type."""
        cols: dict[str, list] = {f"level_{k}": [f["levels"][k] for f in self.front] for k in self.keys}
        for name in ("loss", "rate", *(("household_rate",) if self._households else ()), "meets", "suppressed_cells"):
            cols[name] = [f[name] for f in self.front]
        cols["winner"] = [dict(f["levels"]) == dict(self.levels) for f in self.front]
        return self._table(cols)

    def plot(self, ax=None):
        """The front: loss (x) against the re-identification rate (y), the winner marked."""
        ax = new_axes(ax)
        xs = [f["loss"] for f in self.front]
        ys = [f["rate"] for f in self.front]
        ax.plot(xs, ys, "o-", color="#4C72B0", label="front")
        if self.found:
            ax.plot(
                [self.loss], [self.risk.get("rate", float("nan"))], "*", color="#C44E52", markersize=14, label="winner"
            )
        ax.set_xlabel("loss")
        ax.set_ylabel("re-identification rate")
        ax.set_title("Protection search: risk against loss")
        ax.legend(loc="upper right")
        return ax

    # -- the assessment --------------------------------------------------------------------------
    def variants(self, n_variants: int = 2) -> list[dict]:
        """The winner and the next-best candidates as named recipes for :func:`sdckit.assess`."""
        out = [{"name": "search: winner", "steps": list(self.recipe.get("steps", []))}] if self.found else []
        for i, r in enumerate(self.runners_up[: max(n_variants - 1, 0)]):
            out.append({"name": f"search: next best {i + 1}", "steps": list(r["recipe"]["steps"])})
        return out

    def report(self, path=None, *, overwrite: bool = False, **options):
        """The assessment of the winner and the next best as variants (:func:`sdckit.assess`);
        with ``path`` also the HTML report."""
        options.setdefault("progress", False)
        res = self.assessor(self.original, self.scenario, recipes=self.variants(), **options)
        if path is not None:
            res.to_html(path, overwrite=overwrite)
        return res
