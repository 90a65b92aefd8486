"""The result of :func:`sdckit.analysis_change`: :class:`AnalysisChangeResult`.

Information loss of types 2 and 3: how the variances of the estimated means and totals move
(by domain), how the covariance and correlation matrices of the numeric variables move on
subdomains, and whether tests of independence of the keys reach the same conclusion. Every
field is an aggregate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from .._validation import check_choice
from ._base import Result, Summary, fmt_share, json_safe, new_axes

__all__ = ["STRUCTURE_COLUMNS", "TEST_COLUMNS", "VARIANCE_COLUMNS", "AnalysisChangeResult"]

VARIANCE_COLUMNS = (
    "statistic",
    "variable",
    "domain",
    "category",
    "n_original",
    "n_protected",
    "variance_original",
    "variance_protected",
    "variance_ratio",
    "reason",
)
STRUCTURE_COLUMNS = (
    "domain",
    "category",
    "n_original",
    "n_protected",
    "max_abs_correlation_change",
    "mean_abs_correlation_change",
    "covariance_change",
    "reason",
)
TEST_COLUMNS = (
    "key_a",
    "key_b",
    "n_original",
    "n_protected",
    "statistic_original",
    "statistic_protected",
    "df_original",
    "df_protected",
    "p_value_original",
    "p_value_protected",
    "v_original",
    "v_protected",
    "same_conclusion",
)
_TABLES = {"variance": VARIANCE_COLUMNS, "structure": STRUCTURE_COLUMNS, "tests": TEST_COLUMNS}


def _where(row) -> str:
    return "all" if row["domain"] is None else f"{row['domain']}={row['category']}"


@dataclass(frozen=True, eq=False)
class AnalysisChangeResult(Result):
    """Information loss of types 2 and 3, original against protected.

    Attributes
    ----------
    n : int
        Records (rows paired by position).
    keys, variables, domains : tuple of str
        The categorical keys (tests of independence), the numeric variables (variances,
        covariances) and the domain variables (subdomains).
    weighted : bool
        Whether design weights were used.
    significance : float
        Level of the tests of independence.
    variance_rows : tuple of dict
        Type 2, one per estimate (the keys of :data:`VARIANCE_COLUMNS`): ``statistic``
        (``"mean"`` or ``"total"``), ``variable``, ``domain`` and ``category`` (None: the whole
        file), the records used, ``variance_original``, ``variance_protected`` (linearisation
        variances of the estimate in each file) and ``variance_ratio`` = protected / original.
    structure_rows : tuple of dict
        Type 3, one per subdomain (the keys of :data:`STRUCTURE_COLUMNS`): the complete records
        in each file, the largest and the mean |r' - r| over the pairs of variables and
        ``covariance_change`` = ||S' - S||_F / ||S||_F.
    matrices : dict
        Per subdomain (``"all"``, ``"domain=category"``) the covariance and correlation
        matrices of both files (``covariance_original``, ``covariance_protected``,
        ``correlation_original``, ``correlation_protected``; lists of rows in variable order).
    tests : tuple of dict
        Type 3, one per pair of keys (the keys of :data:`TEST_COLUMNS`): Pearson's X^2, its
        degrees of freedom and p-value, Cramér's V in each file, and ``same_conclusion``
        (both reject independence at ``significance``, or neither does).
    notes : tuple of str
    n_tests, n_same_conclusion : int
    share_same_conclusion : float or None
    median_variance_ratio : float or None
        Median of ``variance_ratio`` over the estimates with both variances.
    max_abs_correlation_change : float or None
        Largest |r' - r| over the subdomains.
    """

    n: int = 0
    keys: tuple = ()
    variables: tuple = ()
    domains: tuple = ()
    weighted: bool = False
    significance: float = 0.05
    variance_rows: tuple = ()
    structure_rows: tuple = ()
    matrices: dict | None = None
    tests: tuple = ()
    notes: tuple = ()

    _headline: ClassVar[tuple] = ("median_variance_ratio", "max_abs_correlation_change", "share_same_conclusion")

    # -- aggregates --------------------------------------------------------------------------
    @property
    def _judged(self) -> list:
        return [t for t in self.tests if t["same_conclusion"] is not None]

    @property
    def n_tests(self) -> int:
        return len(self._judged)

    @property
    def n_same_conclusion(self) -> int:
        return sum(1 for t in self._judged if t["same_conclusion"])

    @property
    def share_same_conclusion(self) -> float | None:
        return self.n_same_conclusion / self.n_tests if self.n_tests else None

    @property
    def median_variance_ratio(self) -> float | None:
        xs = sorted(r["variance_ratio"] for r in self.variance_rows if r["variance_ratio"] is not None)
        if not xs:
            return None
        m = len(xs) // 2
        return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2.0

    @property
    def max_abs_correlation_change(self) -> float | None:
        xs = [r["max_abs_correlation_change"] for r in self.structure_rows]
        xs = [x for x in xs if x is not None]
        return max(xs) if xs else None

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return json_safe(
            {
                "measure": "analysis_change",
                "n": self.n,
                "keys": list(self.keys),
                "variables": list(self.variables),
                "domains": list(self.domains),
                "weighted": self.weighted,
                "significance": self.significance,
                "n_tests": self.n_tests,
                "n_same_conclusion": self.n_same_conclusion,
                "share_same_conclusion": self.share_same_conclusion,
                "median_variance_ratio": self.median_variance_ratio,
                "max_abs_correlation_change": self.max_abs_correlation_change,
                "variance_rows": [dict(r) for r in self.variance_rows],
                "structure_rows": [dict(r) for r in self.structure_rows],
                "matrices": dict(self.matrices or {}),
                "tests": [dict(t) for t in self.tests],
                "notes": list(self.notes),
            }
        )

    def to_frame(self, measure: str = "variance"):
        """One of the three tables as a frame of the caller's type: ``"variance"`` (type 2, one
        row per estimate), ``"structure"`` (type 3, one row per subdomain) or ``"tests"`` (one
        row per pair of keys). Aggregates, not records."""
        check_choice(measure, "measure", tuple(_TABLES))
        rows = {"variance": self.variance_rows, "structure": self.structure_rows, "tests": self.tests}[measure]
        columns = {c: [r[c] for r in rows] for c in _TABLES[measure]}
        return self._table(columns)

    def summary(self) -> Summary:
        head = [
            ("records", self.n),
            ("keys", ", ".join(self.keys) or "-"),
            ("variables", ", ".join(self.variables) or "-"),
            ("domains", ", ".join(self.domains) or "-"),
            ("weighted", self.weighted),
            ("median variance ratio (protected / original)", self.median_variance_ratio),
            ("largest |correlation change|", self.max_abs_correlation_change),
            (f"tests with the same conclusion (at {self.significance:g})", fmt_share(self.share_same_conclusion)),
        ]
        sections: list[tuple[str, Any]] = [("", head)]
        rows: list[tuple]
        if self.variance_rows:
            rows = [(r["statistic"], r["variable"], _where(r), r["variance_original"], r["variance_protected"],
                     r["variance_ratio"], r["reason"] or "") for r in self.variance_rows]  # fmt: skip
            cols = ["estimate", "variable", "domain", "variance original", "variance protected", "ratio", "reason"]
            sections.append(("Type 2: variance of the estimates", {"columns": cols, "rows": rows}))
        if self.structure_rows:
            rows = [(_where(r), r["n_original"], r["n_protected"], r["max_abs_correlation_change"],
                     r["mean_abs_correlation_change"], r["covariance_change"], r["reason"] or "")
                    for r in self.structure_rows]  # fmt: skip
            cols = ["subdomain", "records", "records protected", "max |dr|", "mean |dr|", "||dS|| / ||S||", "reason"]
            sections.append(("Type 3: covariances and correlations", {"columns": cols, "rows": rows}))
        if self.tests:
            rows = [(f"{t['key_a']} x {t['key_b']}", t["statistic_original"], t["p_value_original"],
                     t["statistic_protected"], t["p_value_protected"], t["same_conclusion"]) for t in self.tests]  # fmt: skip
            cols = ["keys", "X2 original", "p original", "X2 protected", "p protected", "same conclusion"]
            sections.append(("Type 3: tests of independence", {"columns": cols, "rows": rows}))
        return Summary("Analyses, original against protected", tuple(sections), tuple(self.notes))

    def plot(self, ax=None):
        """log2 of each variance ratio (protected / original), one bar per estimate."""
        ax = new_axes(ax)
        rows = [r for r in self.variance_rows if r["variance_ratio"]]
        ys = list(range(len(rows)))
        ax.barh(ys, [math.log2(r["variance_ratio"]) for r in rows], color="#4C72B0")
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels([f"{r['statistic']} {r['variable']} | {_where(r)}" for r in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("log2 variance ratio (protected / original)")
        ax.set_title("Variance of the estimates")
        return ax
