"""The result of one protection step: the protected data and an aggregated log of what changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._base import Result, Summary, fmt, new_axes

__all__ = ["ProtectionResult"]


@dataclass(frozen=True, eq=False)
class ProtectionResult(Result):
    """What a protection method did.

    Attributes
    ----------
    method : str
        The protection method (``"local_suppression"``, ``"pram"``, ...).
    parameters : dict
        The parameters of the call, as given to the method (JSON-serialisable; random methods
        include their ``seed``), so that the step can be replayed.
    data : frame
        The protected data, as the caller's frame type (pandas, Polars, PyArrow or NumPy):
        the same rows in the same order and the same columns; only the variables the method
        protects differ. The input is never modified. With the DuckDB or Spark engine it is
        the caller's frame type too when the input was an in-memory frame; for a file path, a
        DuckDB relation or a Spark DataFrame (data that may not fit in memory) it is the
        engine's lazy table of the protected records (a DuckDB relation, a Spark DataFrame).
    n : int
        Number of records.
    n_changed : dict
        Per variable, the number of cells changed (for suppression: made missing).
    n_changed_by_category : dict
        Per categorical variable, the changed cells counted by their original category.
    n_changed_by_stratum : dict
        Per stratum (with ``strata``), the changed cells per variable.
    details : dict
        Method-specific aggregates (the breaks of a recode, PRAM's matrices, ...); entries
        ending in ``_rows`` list record positions (0-based; for instance the records a
        suppression could not make safe) and are left out of ``to_dict()``.
    notes : tuple of str
        Plain-language remarks (for instance, records that could not be made safe).
    title : str
        The heading of the summary and the plot: the method's declared ``heading`` (the method
        name when none is given).

    The log holds counts only, never a record value; ``data`` is record-level and as
    confidential as the input.
    """

    method: str = ""
    parameters: dict = field(default_factory=dict)
    data: Any = field(default=None, repr=False)
    n: int = 0
    n_changed: dict = field(default_factory=dict)
    n_changed_by_category: dict = field(default_factory=dict)
    n_changed_by_stratum: dict = field(default_factory=dict)
    details: dict = field(default_factory=dict)
    notes: tuple = ()
    #: the engine's view of the protected data (for the next step of a workflow)
    table: Any = field(default=None, repr=False)
    title: str = field(default="", repr=False)

    _headline = ("method", "n", "n_changed_total")

    @property
    def n_changed_total(self) -> int:
        """Cells changed over all variables."""
        return int(sum(self.n_changed.values()))

    def to_frame(self):
        """The protected data (record-level: as confidential as the input)."""
        return self.data

    def to_dict(self) -> dict:
        """Aggregates only (no record values), JSON-serialisable."""
        return {
            "method": self.method,
            "parameters": jsonable(self.parameters),
            "n": self.n,
            "n_changed": {str(k): int(v) for k, v in self.n_changed.items()},
            "n_changed_total": self.n_changed_total,
            "n_changed_by_category": jsonable(self.n_changed_by_category),
            "n_changed_by_stratum": jsonable(self.n_changed_by_stratum),
            "details": jsonable({k: v for k, v in self.details.items() if not str(k).endswith("_rows")}),
            "notes": list(self.notes),
        }

    def summary(self) -> Summary:
        rows = [(v, c, (c / self.n) if self.n else 0.0) for v, c in self.n_changed.items()]
        sections: list = [
            ("", [("records", self.n), ("cells changed", self.n_changed_total)]),
            ("Cells changed per variable", {"columns": ["variable", "cells", "share of records"], "rows": rows}),
        ]
        if self.n_changed_by_stratum:
            variables = list(self.n_changed)
            srows = [(s, *[d.get(v, 0) for v in variables]) for s, d in self.n_changed_by_stratum.items()]
            sections.append(("Per stratum", {"columns": ["stratum", *variables], "rows": srows}))
        headline = (
            f"{fmt(self.n_changed_total)} cells changed in {len([c for c in self.n_changed.values() if c])} "
            f"variable(s) of {fmt(self.n)} records."
        )
        return Summary(self.title or self.method, tuple(sections), self.notes, headline=headline)

    def plot(self, ax=None):
        """Cells changed per variable (bar chart)."""
        ax = new_axes(ax)
        names = [str(v) for v in self.n_changed]
        ax.bar(names, [self.n_changed[v] for v in self.n_changed], color="#4C72B0")
        ax.set_ylabel("cells changed")
        ax.set_title(self.title or self.method)
        return ax


def jsonable(value):
    """JSON-friendly copy: mappings with text keys, tuples as lists, NumPy scalars as Python."""
    import numpy as np

    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):  # NumPy scalars (numbers, booleans, text) as Python values
        return value.item()
    return value
