"""Result of :func:`sdckit.threshold_rule`: the mu-ARGUS threshold rule on combinations of key
variables, each with its own threshold."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._base import Result, Summary, new_axes

__all__ = ["ThresholdRuleResult"]


@dataclass(frozen=True, eq=False)
class ThresholdRuleResult(Result):
    """Unsafe cells and records of every key combination (mu-ARGUS threshold rule).

    A cell of a combination (one value on each of its variables) is unsafe when its sample
    frequency is at most the combination's threshold; a record is unsafe in a combination when
    its cell is.

    Attributes
    ----------
    keys : tuple of str
    combinations : tuple of tuples of str
        The key combinations inspected, in order.
    thresholds : tuple of int
        The threshold of each combination.
    n_cells, n_unsafe_cells, n_unsafe_records : tuple of int
        Per combination: its non-empty cells, its unsafe cells, the records in those.
    unsafe_categories : dict
        ``{variable: {category: (count for dimension 1, 2, ..., max_dimension)}}``: the
        number of unsafe cells of each dimension in which the category occurs (mu-ARGUS's
        table of unsafe combinations).
    n_unsafe_combinations : ndarray of int, input row order
        Per record: in how many combinations it lies in an unsafe cell.
    min_unsafe_dimension : ndarray of int
        Per record: the smallest dimension of those combinations (0: safe everywhere).
    unsafe_by_dimension : ndarray (n, max_dimension) of bool
        ``[i, d - 1]``: record i is unsafe in some combination of dimension d.
    n : int
    na_rule : str
        ``"exclude"`` (a record missing on a variable of a combination is in no cell of it) or
        ``"own_category"`` (a missing value is one more category).
    """

    keys: tuple = ()
    combinations: tuple = ()
    thresholds: tuple = ()
    n_cells: tuple = ()
    n_unsafe_cells: tuple = ()
    n_unsafe_records: tuple = ()
    unsafe_categories: dict = field(default_factory=dict)
    n_unsafe_combinations: np.ndarray = field(default=None, repr=False)
    min_unsafe_dimension: np.ndarray = field(default=None, repr=False)
    unsafe_by_dimension: np.ndarray = field(default=None, repr=False)
    n: int = 0
    na_rule: str = "exclude"

    _headline = ("n", "n_unsafe", "max_dimension")

    @property
    def max_dimension(self) -> int:
        """The largest dimension among the combinations."""
        return max((len(c) for c in self.combinations), default=0)

    @property
    def unsafe(self) -> np.ndarray:
        """Per record: unsafe in at least one combination."""
        return np.asarray(self.n_unsafe_combinations) > 0

    @property
    def n_unsafe(self) -> int:
        """Records unsafe in at least one combination."""
        return self._count(self.unsafe)

    @property
    def share_unsafe(self) -> float:
        return self.n_unsafe / self.n if self.n else 0.0

    @property
    def by_dimension(self) -> dict:
        """Per dimension d: ``combinations`` inspected, ``unsafe_combinations`` (those with an
        unsafe cell), ``unsafe_cells`` (summed over them) and ``unsafe_records`` (records unsafe
        in at least one combination of dimension d)."""
        out = {}
        for d in range(1, self.max_dimension + 1):
            idx = [c for c, comb in enumerate(self.combinations) if len(comb) == d]
            if not idx:
                continue
            out[d] = {
                "combinations": len(idx),
                "unsafe_combinations": sum(1 for c in idx if self.n_unsafe_cells[c] > 0),
                "unsafe_cells": int(sum(self.n_unsafe_cells[c] for c in idx)),
                "unsafe_records": self._count(self.unsafe_by_dimension[:, d - 1]),
            }
        return out

    def to_dict(self, include_levels: bool = False) -> dict:
        """The aggregates; ``include_levels=True`` adds ``unsafe_categories`` (the category
        labels of the key variables: leave them out of a report that must not show values)."""
        out = {
            "measure": "threshold_rule",
            "n": self.n,
            "keys": list(self.keys),
            "na_rule": self.na_rule,
            "n_unsafe": self.n_unsafe,
            "share_unsafe": self.share_unsafe,
            "combinations": [
                {
                    "keys": list(comb),
                    "dimension": len(comb),
                    "threshold": int(self.thresholds[c]),
                    "n_cells": int(self.n_cells[c]),
                    "n_unsafe_cells": int(self.n_unsafe_cells[c]),
                    "n_unsafe_records": int(self.n_unsafe_records[c]),
                }
                for c, comb in enumerate(self.combinations)
            ],
            "by_dimension": {str(d): v for d, v in self.by_dimension.items()},
        }
        if include_levels:
            out["unsafe_categories"] = {
                var: {str(cat): [int(x) for x in counts] for cat, counts in cats.items()}
                for var, cats in self.unsafe_categories.items()
            }
        return out

    def summary(self) -> Summary:
        per_comb = {
            "columns": ["combination", "threshold", "cells", "unsafe cells", "unsafe records"],
            "rows": [
                (
                    " x ".join(comb),
                    self.thresholds[c],
                    self.n_cells[c],
                    self.n_unsafe_cells[c],
                    self.n_unsafe_records[c],
                )
                for c, comb in enumerate(self.combinations)
            ],
        }
        per_dim = {
            "columns": ["dimension", "combinations", "with unsafe cells", "unsafe cells", "unsafe records"],
            "rows": [
                (d, v["combinations"], v["unsafe_combinations"], v["unsafe_cells"], v["unsafe_records"])
                for d, v in self.by_dimension.items()
            ],
        }
        dims = range(1, self.max_dimension + 1)
        per_cat = {
            "columns": ["variable", "category", *[f"dim {d}" for d in dims]],
            "rows": [
                (var, cat, *counts)
                for var, cats in self.unsafe_categories.items()
                for cat, counts in cats.items()
                if any(counts)
            ],
        }
        head = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("combinations inspected", len(self.combinations)),
            ("records unsafe in some combination", self.n_unsafe),
        ]
        return Summary(
            "mu-ARGUS threshold rule",
            (
                ("", head),
                ("Unsafe cells per combination (frequency <= threshold)", per_comb),
                ("Per dimension", per_dim),
                ("Unsafe combinations per category", per_cat),
            ),
            (
                "a record missing on a variable of a combination is in no cell of it (never unsafe there)"
                if self.na_rule == "exclude"
                else "a missing value is one more category (its cells are counted, not listed per category)",
            ),
            headline=f"{self.n_unsafe} of {self.n} records lie in an unsafe cell of some combination.",
        )

    def _records(self):
        return {
            "unsafe": self.unsafe,
            "n_unsafe_combinations": self.n_unsafe_combinations,
            "min_unsafe_dimension": self.min_unsafe_dimension,
        }

    def plot(self, ax=None):
        """Records unsafe in some combination, by dimension."""
        ax = new_axes(ax)
        dims = self.by_dimension
        ax.bar([str(d) for d in dims], [v["unsafe_records"] for v in dims.values()], color="#C44E52")
        ax.set_xlabel("dimension of the combination")
        ax.set_ylabel("unsafe records")
        ax.set_title("mu-ARGUS threshold rule")
        return ax
