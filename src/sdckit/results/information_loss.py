"""The result of :func:`sdckit.information_loss`: :class:`InformationLossResult`.

Every field is an aggregate except ``record_loss`` and ``distances`` (per record). Counts are
``n_*``, fractions are plain numbers in [0, 1]; no field holds a percentage (the printed
summary shows some measures in percent and says so).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._deprecation import REMOVED_IN
from ._base import FrozenDict, Result, Summary, json_safe, new_axes

__all__ = ["InformationLossResult", "RenamedKeys"]

PAIRS = ("X", "means", "V", "variances", "R", "RF", "F", "C")
_PAIR_LABELS = {
    "X": "X - X' (data)",
    "means": "means",
    "V": "V - V' (covariances)",
    "variances": "S - S' (variances)",
    "R": "R - R' (correlations)",
    "RF": "RF - RF' (variable-component correlations)",
    "F": "F - F' (loadings)",
    "C": "C - C' (communalities with PC1)",
}

#: old -> new keys of the nested result dicts (the old keys warn for one release)
CHANGES_RENAMED = {
    "changed": "n_changed",
    "suppressed": "n_suppressed",
    "imputed": "n_imputed",
    "missing_original": "n_missing_original",
    "missing_protected": "n_missing_protected",
}
CELLS_RENAMED = {"cells": "n_cells", "tables": "n_tables"}
ANOVA_RENAMED = {"records_original": "n_original", "records_protected": "n_protected"}


class RenamedKeys(FrozenDict):
    """A read-only result dict whose former key names still work, with a DeprecationWarning."""

    def __init__(self, data, renamed: dict):
        super().__init__(data)
        self._old = dict(renamed)  # an attribute of the dict, not an item

    def __missing__(self, key):
        new = self._old.get(key)
        if new is None:
            raise KeyError(key)
        warnings.warn(
            f"result key {key!r} is now called {new!r}; the old form will be removed in sdckit {REMOVED_IN}",
            DeprecationWarning,
            stacklevel=2,
        )
        return self[new]

    def __reduce__(self):
        return (RenamedKeys, (dict(self), self._old))


def _pct(v):
    """A fraction in percent, for the printed summary only."""
    return None if v is None or not math.isfinite(v) else 100.0 * v


# ----------------------------------------------------------------------------------------------
# result
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class InformationLossResult(Result):
    """Information loss of a protected file against its original.

    Every measure is None when it does not apply to the variables given (for example the
    continuous-variable measures without continuous variables), when it was not asked for
    (``robust_eigen`` without ``measures={"robust": True}``) or cannot be computed (then ``notes`` says why).

    Attributes
    ----------
    variables : tuple of str
    scales : dict variable -> "nominal" | "ordinal" | "continuous"
    n : int
        Records (rows paired by position).
    suppressed, continuous_distance, bound, gamma_method : str, str, float, str
        The options the measures were computed with.
    lambda_ : float
        Mlodak's complex distance lambda = (1/(m n)) sum_j sum_i d(x_ij, x'_ij), in [0, 1].
    lambda_j : dict variable -> float
        Per-variable lambda_j = (1/n) sum_i d(x_ij, x'_ij), in [0, 1].
    il1 : float
        sdcMicro's IL1 = 100 sum |x - x'| / |x| over the finite terms: a *sum of percentage
        errors* (sdcMicro's definition, kept for comparison with ``dUtility(method="IL1")``).
    mean_relative_error : float
        The mean of |x - x'| / |x| over the same terms, a fraction (0.05 = 5 % per value); the
        mean absolute percentage error divided by 100.
    il1s, il1s_mean : float
        sdcMicro's IL1s = sum |x - x'| / (sqrt(2) S_j), and the per-cell mean IL1s / (n p) of
        Yancey, Winkler & Creecy (sdcMicro ``IL1old``).
    il1_by_variable, il1s_by_variable : dict variable -> float
    eigen, robust_eigen : float
        sum_l |e_l - e'_l| / e_l of the (robust MCD) covariance eigenvalues of the scaled data.
    discrepancy : dict pair -> dict
        Domingo-Ferrer, Mateo-Sanz & Torra table: pairs ``X``, ``means``, ``V``, ``variances``
        (S - S'), ``R``, ``RF``, ``F``, ``C``; each with ``mse``, ``mae``, ``mv`` (mean
        variation), ``mv_bounded`` (Trottini, cells capped at ``bound``) and ``n_cells``.
    gamma : float
        Loss of intensity of connections from the inverse correlation matrices, in [0, 1].
    ctbil : dict
        Contingency-table loss: ``total``, ``normalised`` (per cell), ``n_cells``, ``n_tables``,
        ``max_dim``, ``by_dim``, ``by_variable`` (one-way tables), ``weighted`` and ``weight``
        (the weight column): on weighted cell totals when a weight was given, else on counts.
    ctbil_unweighted : dict
        The same on record counts (equal to ``ctbil`` when no weight was given).
    ebil : dict variable -> float, ebil_joint : float
        Entropy loss of PRAMed variables given their transition matrices.
    anova : dict y -> dict
        R^2 of the main-effects model of y on the categorical variables in each file and the
        loss |R^2 - R'^2|; ``n_original`` and ``n_protected`` records used.
    categorical_distance : dict variable -> float
        Mean Domingo-Ferrer & Torra distance of categorical variables.
    changes : dict variable -> dict
        Record counts ``n_changed`` (both observed, different), ``n_suppressed`` (original
        observed, protected missing), ``n_imputed`` (original missing, protected observed),
        ``n_missing_original``, ``n_missing_protected``.
    record_loss : ndarray (n,)
        Per record, the mean distance over the variables (the record's contribution to lambda).
    distances : ndarray (n, m) or None
        Per-record distances d(x_ij, x'_ij), kept with ``records=True``.
    notes : tuple of str
    """

    variables: tuple = ()
    scales: dict = field(default_factory=dict)
    n: int = 0
    suppressed: str = "mlodak"
    continuous_distance: str = "arctan_sd"
    lambda_: float | None = None
    lambda_j: dict = field(default_factory=dict)
    il1: float | None = None
    mean_relative_error: float | None = None
    il1s: float | None = None
    il1s_mean: float | None = None
    il1_by_variable: dict = field(default_factory=dict)
    il1s_by_variable: dict = field(default_factory=dict)
    eigen: float | None = None
    robust_eigen: float | None = None
    discrepancy: dict | None = None
    bound: float = 1.0
    gamma: float | None = None
    gamma_method: str = "pearson"
    ctbil: dict | None = None
    ctbil_unweighted: dict | None = None
    ebil: dict = field(default_factory=dict)
    ebil_joint: float | None = None
    anova: dict = field(default_factory=dict)
    categorical_distance: dict = field(default_factory=dict)
    changes: dict = field(default_factory=dict)
    record_loss: np.ndarray = field(default=None, repr=False)
    distances: np.ndarray | None = field(default=None, repr=False)
    notes: tuple = ()

    _headline: ClassVar[tuple] = ("n", "lambda_", "il1s")

    @property
    def il1_mean(self) -> float | None:
        """Deprecated: the mean IL1 term in percent; use :attr:`mean_relative_error` (a fraction)."""
        warnings.warn(
            f"InformationLossResult.il1_mean (a percentage) is replaced by mean_relative_error (a "
            f"fraction: il1_mean / 100); the old form will be removed in sdckit {REMOVED_IN}",
            DeprecationWarning,
            stacklevel=2,
        )
        return None if self.mean_relative_error is None else 100.0 * self.mean_relative_error

    # -- views ------------------------------------------------------------------------------
    @property
    def continuous(self) -> tuple:
        return tuple(v for v in self.variables if self.scales[v] == "continuous")

    @property
    def categorical(self) -> tuple:
        return tuple(v for v in self.variables if self.scales[v] != "continuous")

    def per_variable(self) -> list[dict]:
        """One row per variable: scale, record counts changed and suppressed, lambda_j, IL1s,
        IL1, one-way CTBIL, EBIL, categorical distance."""
        rows: list[dict] = []
        ct = (self.ctbil or {}).get("by_variable", {})
        for v in self.variables:
            c = self.changes.get(v, {})
            rows.append(
                RenamedKeys(
                    {
                        "variable": v,
                        "scale": self.scales[v],
                        "n_changed": c.get("n_changed"),
                        "n_suppressed": c.get("n_suppressed"),
                        "lambda_j": self.lambda_j.get(v),
                        "il1s": self.il1s_by_variable.get(v),
                        "il1": self.il1_by_variable.get(v),
                        "ctbil_1way": ct.get(v),
                        "ebil": self.ebil.get(v),
                        "categorical_distance": self.categorical_distance.get(v),
                    },
                    {"changed": "n_changed", "suppressed": "n_suppressed"},
                )
            )
        return rows

    def to_dict(self) -> dict:
        out = {
            "measure": "information_loss",
            "n": self.n,
            "variables": list(self.variables),
            "scales": dict(self.scales),
            "suppressed": self.suppressed,
            "continuous_distance": self.continuous_distance,
            "lambda": self.lambda_,
            "lambda_j": dict(self.lambda_j),
            "il1": {"sum": self.il1, "by_variable": dict(self.il1_by_variable)},
            "mean_relative_error": self.mean_relative_error,
            "il1s": {"sum": self.il1s, "mean": self.il1s_mean, "by_variable": dict(self.il1s_by_variable)},
            "eigen": self.eigen,
            "robust_eigen": self.robust_eigen,
            "discrepancy": self.discrepancy,
            "bound": self.bound,
            "gamma": self.gamma,
            "gamma_method": self.gamma_method,
            "ctbil": self.ctbil,
            "ctbil_unweighted": self.ctbil_unweighted,
            "ebil": {"by_variable": dict(self.ebil), "joint": self.ebil_joint},
            "anova": dict(self.anova),
            "categorical_distance": dict(self.categorical_distance),
            "changes": dict(self.changes),
            "notes": list(self.notes),
        }
        return json_safe(out)

    def summary(self) -> Summary:
        sections: list[tuple[str, Any]] = [("", self._headline_rows())]
        cols = [
            "variable",
            "scale",
            "changed",
            "suppressed",
            "lambda_j (%)",
            "IL1s",
            "IL1 (sum of % errors)",
            "CTBIL 1-way",
            "EBIL",
        ]
        table = [
            (
                r["variable"],
                r["scale"],
                r["n_changed"],
                r["n_suppressed"],
                _pct(r["lambda_j"]),
                r["il1s"],
                r["il1"],
                r["ctbil_1way"],
                r["ebil"],
            )
            for r in self.per_variable()
        ]
        sections.append(("Per variable", {"columns": cols, "rows": table}))
        if self.discrepancy:
            drows = [
                (_PAIR_LABELS[k], d["mse"], d["mae"], d["mv"], d["mv_bounded"])
                for k in PAIRS
                if (d := self.discrepancy.get(k)) is not None
            ]
            sections.append(
                (
                    "Discrepancies (Domingo-Ferrer, Mateo-Sanz & Torra)",
                    {
                        "columns": ["pair", "MSE", "MAE", "mean variation", f"MV bounded at {self.bound:g}"],
                        "rows": drows,
                    },
                )
            )
        if self.anova:
            arows = [
                (y, a["r2_original"], a["r2_protected"], a["loss"], a["relative_loss"]) for y, a in self.anova.items()
            ]
            sections.append(
                (
                    "ANOVA R^2 on the categorical variables",
                    {
                        "columns": ["variable", "R^2 original", "R^2 protected", "|R^2 - R'^2|", "relative"],
                        "rows": arows,
                    },
                )
            )
        notes = [
            f"distances: nominal 0/1, ordinal |rank difference| / (R - 1), continuous {self.continuous_distance}; "
            f"a value missing in one file only counts by the {self.suppressed} convention"
        ]
        saturated = [v for v in self.continuous if (self.lambda_j.get(v) or 0) > 0.9]
        if saturated and self.continuous_distance == "arctan":
            notes.append(
                f"lambda_j of {', '.join(saturated)} is above 90 %: the arctan distance (2/pi) arctan|x' - x| is "
                "taken in the variable's own units, so for variables in large units (incomes, turnover) any "
                "change counts almost fully; compare such variables by IL1s or the mean relative error"
            )
        notes += list(self.notes)
        return Summary("Information loss", tuple(sections), tuple(notes))

    def _headline_rows(self) -> list:
        cont, cat = self.continuous, self.categorical
        rows = [
            ("records", self.n),
            ("variables", len(self.variables)),
            ("continuous", ", ".join(cont) or "-"),
            ("categorical", ", ".join(f"{v} ({self.scales[v]})" for v in cat) or "-"),
            ("lambda (%)", _pct(self.lambda_)),
        ]
        if cont:
            rows += [
                ("IL1 (sdcMicro, sum of % errors)", self.il1),
                ("mean relative error per value (%)", _pct(self.mean_relative_error)),
                ("IL1s (sdcMicro)", self.il1s),
                ("IL1s per cell (Yancey-Winkler-Creecy)", self.il1s_mean),
                ("eigenvalue loss", self.eigen),
                ("robust eigenvalue loss (MCD)", self._robust_eigen_shown()),
                (f"gamma ({self.gamma_method}, %)", _pct(self.gamma)),
            ]
        if self.ctbil is not None:
            kind = f", weighted by {self.ctbil['weight']}" if self.ctbil.get("weighted") else ""
            rows += [
                (f"CTBIL (tables up to {self.ctbil['max_dim']}-way{kind})", self.ctbil["total"]),
                ("CTBIL per cell", self.ctbil["normalised"]),
            ]
            if self.ctbil.get("weighted") and self.ctbil_unweighted is not None:
                rows += [("CTBIL on record counts", self.ctbil_unweighted["total"])]
        if self.ebil:
            rows += [("EBIL (sum over PRAMed variables)", float(sum(self.ebil.values())))]
            if self.ebil_joint is not None:
                rows += [("EBIL (PRAMed variables jointly)", self.ebil_joint)]
        return rows

    def _robust_eigen_shown(self):
        if (
            self.robust_eigen is None
            and len(self.continuous) >= 2
            and not any(n.startswith("robust eigen") for n in self.notes)
        ):
            return "not computed (robust=True computes it)"
        return self.robust_eigen

    def _records(self):
        out = {"loss": self.record_loss}
        if self.distances is not None:
            for j, v in enumerate(self.variables):
                out[f"d_{v}"] = self.distances[:, j]
        return out

    def plot(self, ax=None, measure: str = "lambda"):
        """Per-variable loss bars: ``measure`` "lambda" (lambda_j in %, every variable), "il1s"
        or "il1" (continuous variables) or "ctbil" (one-way table loss, categorical variables)."""
        from .._validation import check_choice

        check_choice(measure, "measure", ("lambda", "il1s", "il1", "ctbil"))
        colours = {"nominal": "#4C72B0", "ordinal": "#55A868", "continuous": "#C44E52"}
        if measure == "lambda":
            names = list(self.variables)
            vals = [100 * self.lambda_j.get(v, 0.0) for v in names]
            ylabel = "lambda_j (%)"
        elif measure in ("il1s", "il1"):
            src = self.il1s_by_variable if measure == "il1s" else self.il1_by_variable
            names = [v for v in self.variables if v in src]
            vals = [src[v] if src[v] is not None and math.isfinite(src[v]) else 0.0 for v in names]
            ylabel = "IL1s" if measure == "il1s" else "IL1 (sum of % errors)"
        else:
            src = (self.ctbil or {}).get("by_variable", {})
            names = [v for v in self.variables if v in src]
            vals = [src[v] for v in names]
            ylabel = "one-way table loss (records)"
        ax = new_axes(ax)
        ax.bar(names, vals, color=[colours[self.scales[v]] for v in names])
        ax.set_ylabel(ylabel)
        ax.set_title("Information loss by variable")
        for lab in ax.get_xticklabels():
            lab.set_rotation(45)
            lab.set_horizontalalignment("right")
        return ax
