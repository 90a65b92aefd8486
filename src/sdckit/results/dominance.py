"""The result of :func:`sdckit.dominance_rules`: :class:`DominanceResult`.

One row per cell of the key combination and numeric variable: the number of contributors and
whether the (n, k)-dominance rule and the p % rule find the cell sensitive. No contribution,
total or share is kept (the share of the largest contributor of a sensitive cell, with the
published total, is that contributor's value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ._base import Result, Summary, fmt_share, json_safe, new_axes

__all__ = ["CELL_COLUMNS", "DominanceResult"]

#: the keys of a cell row besides ``cell`` (the key labels)
CELL_COLUMNS = ("variable", "n_contributors", "dominance", "p_percent", "sensitive")
#: sensitive cells listed in the summary
N_LISTED = 20


@dataclass(frozen=True, eq=False)
class DominanceResult(Result):
    """Sensitive cells of a magnitude table under the (n, k)-dominance rule and the p % rule.

    Attributes
    ----------
    n : int
        Records of the file.
    keys, variables : tuple of str
        The key variables whose combinations are the cells, and the numeric variables (each one
        table).
    n_largest, dominance_percent, p_percent : int, float, float
        The rules' parameters: n and k of (n, k)-dominance, p of the p % rule.
    cells : tuple of dict
        One per cell (a key combination that occurs) and variable: ``variable``, ``cell`` (key
        -> category label as text), ``n_contributors`` (records with a value),
        ``dominance`` and ``p_percent`` (the cell is sensitive under that rule) and
        ``sensitive`` (under either).
    n_excluded : dict variable -> int
        Records left out of the variable's table: a missing key value or a missing value.
    n_cells, n_sensitive, n_dominance, n_p_percent : dict variable -> int
        Cells of each table; those sensitive under either rule, under (n, k)-dominance, under
        the p % rule.
    share_sensitive : dict variable -> float
        Share of the cells that are sensitive.
    """

    n: int = 0
    keys: tuple = ()
    variables: tuple = ()
    n_largest: int = 2
    dominance_percent: float = 85.0
    p_percent: float = 10.0
    cells: tuple = ()
    n_excluded: dict | None = None

    _headline: ClassVar[tuple] = ("n", "n_cells", "n_sensitive")

    def _cells_where(self, field: str) -> dict:
        return {v: sum(1 for c in self.cells if c["variable"] == v and c[field]) for v in self.variables}

    @property
    def n_cells(self) -> dict:
        return {v: sum(1 for c in self.cells if c["variable"] == v) for v in self.variables}

    @property
    def n_sensitive(self) -> dict:
        return self._cells_where("sensitive")

    @property
    def n_dominance(self) -> dict:
        return self._cells_where("dominance")

    @property
    def n_p_percent(self) -> dict:
        return self._cells_where("p_percent")

    @property
    def share_sensitive(self) -> dict:
        cells = self.n_cells
        return {v: (self.n_sensitive[v] / cells[v] if cells[v] else None) for v in self.variables}

    def sensitive_cells(self, variable=None) -> list:
        """The sensitive cells (of one variable, or of all), as in :attr:`cells`."""
        return [c for c in self.cells if c["sensitive"] and variable in (None, c["variable"])]

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return json_safe(
            {
                "measure": "dominance_rules",
                "n": self.n,
                "keys": list(self.keys),
                "variables": list(self.variables),
                "n_largest": self.n_largest,
                "dominance_percent": self.dominance_percent,
                "p_percent": self.p_percent,
                "n_cells": self.n_cells,
                "n_sensitive": self.n_sensitive,
                "n_dominance": self.n_dominance,
                "n_p_percent": self.n_p_percent,
                "share_sensitive": self.share_sensitive,
                "n_excluded": dict(self.n_excluded or {}),
                "sensitive_cells": [dict(c) for c in self.sensitive_cells()],
            }
        )

    def to_frame(self):
        """One row per cell and variable: the key labels, ``variable``, ``n_contributors``,
        ``dominance``, ``p_percent``, ``sensitive`` (aggregates, as a frame of the caller's type)."""
        columns = {k: [c["cell"][k] for c in self.cells] for k in self.keys}
        columns.update({f: [c[f] for c in self.cells] for f in CELL_COLUMNS})
        return self._table(columns)

    def summary(self) -> Summary:
        rule = f"({self.n_largest}, {self.dominance_percent:g})-dominance"
        per = {
            "columns": ["variable", "cells", "sensitive", rule, f"p % rule (p = {self.p_percent:g})", "excluded"],
            "rows": [
                (v, self.n_cells[v], fmt_share(self.share_sensitive[v]), self.n_dominance[v], self.n_p_percent[v],
                 (self.n_excluded or {}).get(v, 0))
                for v in self.variables
            ],
        }  # fmt: skip
        listed = self.sensitive_cells()[:N_LISTED]
        cells = {
            "columns": ["variable", *self.keys, "contributors", "dominance", "p %"],
            "rows": [
                (c["variable"], *(c["cell"][k] for k in self.keys), c["n_contributors"], c["dominance"], c["p_percent"])
                for c in listed
            ],
        }
        notes = [f"{len(self.sensitive_cells()) - N_LISTED} more sensitive cells in to_frame()"] * (
            len(self.sensitive_cells()) > N_LISTED
        )
        sections = [("", [("records", self.n), ("keys", ", ".join(self.keys))]), ("Cells", per)]
        if listed:
            sections.append(("Sensitive cells", cells))
        return Summary("Sensitive cells of magnitude tables", tuple(sections), tuple(notes))

    def plot(self, ax=None):
        """Per variable, the cells safe and sensitive under each rule (stacked bars)."""
        ax = new_axes(ax)
        xs = list(range(len(self.variables)))
        both = [sum(1 for c in self.cells if c["variable"] == v and c["dominance"] and c["p_percent"])
                for v in self.variables]  # fmt: skip
        dom = [self.n_dominance[v] - b for v, b in zip(self.variables, both)]
        pp = [self.n_p_percent[v] - b for v, b in zip(self.variables, both)]
        safe = [self.n_cells[v] - self.n_sensitive[v] for v in self.variables]
        bottom = [0] * len(xs)
        for values, label, color in ((both, "both rules", "#C44E52"), (dom, "dominance only", "#DD8452"),
                                     (pp, "p % only", "#CCB974"), (safe, "safe", "#DDDDDD")):  # fmt: skip
            ax.bar(xs, values, bottom=bottom, label=label, color=color)
            bottom = [b + x for b, x in zip(bottom, values)]
        ax.set_xticks(xs)
        ax.set_xticklabels(self.variables)
        ax.set_ylabel("cells")
        ax.set_title("Sensitive cells of magnitude tables")
        ax.legend(fontsize=7)
        return ax
