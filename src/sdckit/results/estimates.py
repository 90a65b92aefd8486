"""The result of :func:`sdckit.estimates_change`: :class:`EstimatesResult`.

One row per published estimate (a weighted total, share or mean by domain, an overall mean, a
regression coefficient) with its value in the original and in the protected file, the relative
change and whether the original confidence interval covers the protected value. Every field is
an aggregate: no record-level value is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ._base import Result, Summary, fmt_share, new_axes

__all__ = ["COLUMNS", "EstimatesResult"]

#: the keys of one row (``rows``, ``to_dict()["rows"]``, the columns of ``to_frame()``)
COLUMNS = (
    "kind",
    "variable",
    "domain",
    "category",
    "original",
    "protected",
    "relative_change",
    "se",
    "ci_low",
    "ci_high",
    "covered",
    "reason",
)
#: the estimates named in ``worst``
N_WORST = 5


def _label(row) -> str:
    """A row's estimate in words: ``total db040=Tyrol``, ``mean eqIncome | rb090=male``."""
    where = f"{row['domain']}={row['category']}" if row["domain"] is not None else "all"
    if row["kind"] in ("total", "share"):
        return f"{row['kind']} {where}"
    if row["kind"] == "mean":
        return f"mean {row['variable']} | {where}"
    return f"coef {row['variable']} ~ {where}"


@dataclass(frozen=True, eq=False)
class EstimatesResult(Result):
    """How the estimates a data user publishes move between the original and protected file.

    Attributes
    ----------
    n : int
        Records (rows paired by position).
    rows : tuple of dict
        One per estimate, with the keys of :data:`COLUMNS`: ``kind`` (``"total"``, ``"share"``,
        ``"mean"``, ``"coefficient"``), ``variable`` (the numeric variable of a mean or
        coefficient, else None), ``domain`` and ``category`` (the domain variable and its
        category as text; None for an overall mean), ``original``, ``protected`` (None when not
        estimable), ``relative_change`` = (protected - original) / |original| (None when the
        original is 0 or either is not estimable), ``se``, ``ci_low``, ``ci_high`` (the original
        estimate's standard error and normal confidence interval), ``covered`` (the protected
        estimate lies in that interval) and ``reason`` (why an estimate is not estimable).
    domains, variables : tuple of str
        The domain variables and the numeric variables.
    weighted : bool
        Whether design weights were used (without them totals are counts).
    confidence : float
        Level of the confidence intervals.
    notes : tuple of str
        How the domains were chosen, the keys left out, new categories of the protected file.
    n_estimates, n_not_estimable : int
        Estimates, and those that cannot be compared (not estimable in either file).
    mean_abs_relative_change : float or None
        Mean over the compared estimates of min(|relative change|, 1).
    median_abs_relative_change : float or None
        Median over the compared estimates of |relative change| (not capped).
    share_not_covered : float or None
        Share of the compared estimates whose protected value lies outside the original
        confidence interval.
    worst : tuple of dict
        The five rows with the largest |relative change|.
    """

    n: int = 0
    rows: tuple = ()
    domains: tuple = ()
    variables: tuple = ()
    weighted: bool = False
    confidence: float = 0.95
    notes: tuple = ()

    _headline: ClassVar[tuple] = ("n_estimates", "mean_abs_relative_change", "share_not_covered")

    @property
    def _compared(self) -> list:
        """The rows with a relative change (both estimable, original not 0)."""
        return [r for r in self.rows if r["relative_change"] is not None]

    # -- aggregates --------------------------------------------------------------------------
    @property
    def n_estimates(self) -> int:
        return len(self.rows)

    @property
    def n_not_estimable(self) -> int:
        return sum(1 for r in self.rows if r["original"] is None or r["protected"] is None)

    @property
    def mean_abs_relative_change(self) -> float | None:
        if not self._compared:
            return None
        return sum(min(abs(r["relative_change"]), 1.0) for r in self._compared) / len(self._compared)

    @property
    def median_abs_relative_change(self) -> float | None:
        if not self._compared:
            return None
        xs = sorted(abs(r["relative_change"]) for r in self._compared)
        m = len(xs) // 2
        return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2.0

    @property
    def share_not_covered(self) -> float | None:
        judged = [r for r in self.rows if r["covered"] is not None]
        if not judged:
            return None
        return sum(1 for r in judged if not r["covered"]) / len(judged)

    @property
    def worst(self) -> tuple:
        ranked = sorted(self._compared, key=lambda r: -abs(r["relative_change"]))
        return tuple(ranked[:N_WORST])

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "measure": "estimates_change",
            "n": self.n,
            "domains": list(self.domains),
            "variables": list(self.variables),
            "weighted": self.weighted,
            "confidence": self.confidence,
            "n_estimates": self.n_estimates,
            "n_not_estimable": self.n_not_estimable,
            "mean_abs_relative_change": self.mean_abs_relative_change,
            "median_abs_relative_change": self.median_abs_relative_change,
            "share_not_covered": self.share_not_covered,
            "worst": [dict(r) for r in self.worst],
            "rows": [dict(r) for r in self.rows],
            "notes": list(self.notes),
        }

    def to_frame(self):
        """The estimates table, one row per estimate (the columns of :data:`COLUMNS`), as a
        frame of the caller's type. These are published aggregates, not records: no opt-in."""
        columns = {c: [r[c] for r in self.rows] for c in COLUMNS}
        return self._table(columns)

    def summary(self) -> Summary:
        pct = lambda v: None if v is None else 100.0 * v  # noqa: E731
        head = [
            ("records", self.n),
            ("domains", ", ".join(self.domains) or "-"),
            ("variables", ", ".join(self.variables) or "-"),
            ("weighted", self.weighted),
            ("estimates", self.n_estimates),
            ("not estimable", self.n_not_estimable),
            ("mean |relative change|, capped at 100 % (%)", pct(self.mean_abs_relative_change)),
            ("median |relative change| (%)", pct(self.median_abs_relative_change)),
            (f"outside the original {self.confidence:.0%} CI", fmt_share(self.share_not_covered)),
        ]
        cols = ["estimate", "original", "protected", "change (%)", "SE", "CI low", "CI high", "covered", "reason"]
        table = [
            (_label(r), r["original"], r["protected"], pct(r["relative_change"]), r["se"], r["ci_low"],
             r["ci_high"], r["covered"], r["reason"] or "")
            for r in self.rows
        ]  # fmt: skip
        sections: list[tuple[str, Any]] = [("", head), ("Estimates", {"columns": cols, "rows": table})]
        notes = [
            "standard errors by linearisation with households as ultimate clusters (with-replacement "
            "approximation: no finite-population correction, no strata)"
        ]
        return Summary("Estimates, original against protected", tuple(sections), tuple(notes + list(self.notes)))

    def plot(self, ax=None):
        """Relative change (%) of each compared estimate, horizontal, over a grey band: the
        original confidence interval's half-width relative to the original (%), drawn up to
        ±100 % (the interval of a coefficient close to 0 is far wider)."""
        ax = new_axes(ax)
        rows = self._compared
        ys = list(range(len(rows)))
        half = [
            min(100.0 * (r["ci_high"] - r["original"]) / abs(r["original"]), 100.0) if r["ci_high"] is not None else 0.0
            for r in rows
        ]
        ax.barh(ys, [2 * h for h in half], left=[-h for h in half], color="#DDDDDD", label="original CI (to ±100 %)")
        ax.scatter([100.0 * r["relative_change"] for r in rows], ys, color="#C44E52", zorder=3, label="change")
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels([_label(r) for r in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("relative change of the estimate (%)")
        ax.set_title("Estimates: protected against original")
        ax.legend(loc="lower right", fontsize=7)
        return ax
