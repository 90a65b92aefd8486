r"""Result of :func:`sdckit.loglinear_risk`: population-uniqueness risk from a Poisson
log-linear model (Skinner & Holmes 1998; Skinner & Shlomo 2008)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._deprecation import REMOVED_IN, deprecated_alias
from .._errors import warn
from ._base import FrozenDict, Result, Summary, new_axes

__all__ = ["LoglinearRiskResult", "ModriskNumbers"]


class ModriskNumbers(FrozenDict):
    """sdcMicro ``modRisk`` numbers (read-only dict): ``gr1``, ``gr2`` (shares), ``n_kept_cells``,
    ``method``, ``bound``, ``numeric_covariates``.

    The old keys ``kept_cells``, ``gr1perc`` and ``gr2perc`` (percentages, 100 * gr) still answer,
    with a :class:`DeprecationWarning`; they are not stored (no field holds a percentage).
    """

    _OLD: ClassVar[dict] = {"kept_cells": ("n_kept_cells", 1), "gr1perc": ("gr1", 100), "gr2perc": ("gr2", 100)}

    def __missing__(self, key):
        if key not in self._OLD:
            raise KeyError(key)
        new, scale = self._OLD[key]
        how = f"100 * modrisk[{new!r}]" if scale != 1 else f"modrisk[{new!r}]"
        warn(
            f"LoglinearRiskResult.modrisk[{key!r}] is now {how}; the old form will be removed in sdckit {REMOVED_IN}",
            DeprecationWarning,
        )
        return scale * self[new]

    def __reduce__(self):
        return (ModriskNumbers, (dict(self),))


def _finite(x):
    """None for a missing or non-finite number (JSON has no NaN)."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


@dataclass(frozen=True, eq=False)
class LoglinearRiskResult(Result):
    r"""Population-uniqueness risk from a Poisson log-linear model.

    Attributes
    ----------
    keys : tuple of str
    n : int
        Records in the input.
    n_used, n_excluded : int
        Records in the model table / excluded for a missing key value.
    n_cells : int
        Cells of the full contingency table (empty cells included).
    levels : tuple of int
        Categories of each key variable (the table's shape).
    n_sample_uniques : int
        n_1 = number of sample-unique cells (= records with f_k = 1).
    tau1, tau2 : float
        \hat tau_1 = sum_{SU} exp(-mu_k), \hat tau_2 = sum_{SU} (1 - exp(-mu_k)) / mu_k,
        mu_k = (1 - pi_k) \hat lambda_k. NaN in the sdcMicro compatibility mode.
    share_tau1_uniques, share_tau2_uniques : float
        tau_1 / n_1 (share of the sample uniques that are population unique) and tau_2 / n_1
        (expected correct-match rate of a sample unique).
    share_tau1_records, share_tau2_records : float
        tau_1 / n_used and tau_2 / n_used.
    terms : tuple of tuple of str
        Model terms (the closed, hierarchical term set for IPF fits).
    generators : tuple of tuple of str
        The generating class (the margins IPF matches).
    method : {"ipf", "irls"}
        The fit used. ``iterations``, ``converged`` and ``n_parameters`` describe it.
    sampling : {"pml", "constant", "given", "sdcmicro"}
    sampling_fraction : float or None
        The constant sampling fraction used (None for pseudo-maximum likelihood).
    gof : dict
        Deviance, Pearson X^2, degrees of freedom, and the Skinner-Shlomo B, v, Z for tau_1/tau_2.
    path : tuple of dict
        Forward search path (``model="auto"``): each step's added term, Z_1, Z_2, tau_1, tau_2,
        and the runner-up term with its Z (how close the choice was).
    blend : dict or None
        The bracketing search's last step: ``term`` (the last term added), ``weight`` w (its
        parameters scaled by w) and ``z_target``; None when the search ended on a model.
    stability : dict or None
        With ``stability=B``: ``subsamples``, ``rate``, ``seed``, ``same_model`` (share of the
        subsamples whose search chose the same terms), ``inclusion`` (term -> share of the
        subsamples that include it) and the 10/50/90 % quantiles of the subsamples' tau_1 / n_1
        and tau_2 / n_1.
    search : {"bracket", "skinner-shlomo"} or None
        The stopping rule of the search (None for a given model).
    sampling_fractions : dict or None
        Known fractions by the categories of one key (``{key: {category: fraction}}``).
    pram, smoothing : dict or None
        Misclassification-adjusted tau_2 (Shlomo & Skinner 2010: ``tau2``, with the diagonal
        M_kk; ``tau2_exact``, the exact form with the full matrix, None when only diagonals
        were given; their shares of the sample uniques), negative-binomial smoothing
        (Rinott & Shlomo 2006, experimental).
    modrisk : ModriskNumbers or None
        sdcMicro ``modRisk`` numbers (compatibility mode).
    fk, lam, p_unique, risk, risk_pram : ndarray (n,)
        Per record: sample count of the cell, \hat lambda, P(F = 1 | f = 1) and E(1/F | f = 1)
        (NaN unless a sample unique; NaN for excluded records), and the PRAM-adjusted risk.
    """

    keys: tuple = ()
    n: int = 0
    n_used: int = 0
    n_excluded: int = 0
    n_cells: int = 0
    levels: tuple = ()
    n_sample_uniques: int = 0
    tau1: float = float("nan")
    tau2: float = float("nan")
    terms: tuple = ()
    generators: tuple = ()
    method: str = "ipf"
    iterations: int = 0
    converged: bool = True
    n_parameters: int = 0
    sampling: str = "constant"
    sampling_fraction: float | None = None
    criterion: str = "tau2"
    gof: dict = field(default_factory=dict)
    path: tuple = ()
    blend: dict | None = None
    stability: dict | None = None
    search: str | None = None
    sampling_fractions: dict | None = None
    pram: dict | None = None
    smoothing: dict | None = None
    modrisk: dict | None = None
    compat: str | None = None
    fk: np.ndarray = field(default=None, repr=False)
    lam: np.ndarray = field(default=None, repr=False)
    p_unique: np.ndarray = field(default=None, repr=False)
    risk: np.ndarray = field(default=None, repr=False)
    risk_pram: np.ndarray | None = field(default=None, repr=False)
    #: confidence intervals of tau_1 and tau_2 (``intervals={"ci": True}``): confidence, method, draws,
    #: ``tau1`` / ``tau2`` as [low, high] and their shares of the sample uniques
    ci: dict | None = None
    #: the interval of tau_1 and tau_2 that carries the choice of model (always computed; see
    #: ``interval`` in the docs): confidence, method, ``tau1`` / ``tau2`` as (low, high), their
    #: parts on the log scale and their shares of the sample uniques
    interval: dict | None = None
    #: why the estimate is weak (small sample, more parameters than records, few expected
    #: matches); empty when it is not
    weak: tuple = ()

    _headline = ("n", "n_sample_uniques", "tau1", "tau2")

    @property
    def share_tau1_uniques(self) -> float:
        """tau_1 / n_1: share of the sample uniques that are population unique."""
        return self.tau1 / self.n_sample_uniques if self.n_sample_uniques else 0.0

    @property
    def share_tau2_uniques(self) -> float:
        """tau_2 / n_1: expected correct-match rate of the sample uniques."""
        return self.tau2 / self.n_sample_uniques if self.n_sample_uniques else 0.0

    @property
    def share_tau1_records(self) -> float:
        """tau_1 / n_used."""
        return self.tau1 / self.n_used if self.n_used else 0.0

    @property
    def share_tau2_records(self) -> float:
        """tau_2 / n_used."""
        return self.tau2 / self.n_used if self.n_used else 0.0

    sample_uniques = deprecated_alias("n_sample_uniques", "sample_uniques")
    fit_method = deprecated_alias("method", "fit_method")
    rate1 = deprecated_alias("share_tau1_uniques", "rate1")
    rate2 = deprecated_alias("share_tau2_uniques", "rate2")
    rate1_records = deprecated_alias("share_tau1_records", "rate1_records")
    rate2_records = deprecated_alias("share_tau2_records", "rate2_records")

    @property
    def formula(self) -> str:
        return " + ".join(":".join(t) for t in self.terms)

    def to_dict(self) -> dict:
        out = {
            "measure": "loglinear_risk",
            "keys": list(self.keys),
            "n": self.n,
            "n_used": self.n_used,
            "n_excluded": self.n_excluded,
            "n_cells": self.n_cells,
            "levels": {k: int(v) for k, v in zip(self.keys, self.levels)},
            "n_sample_uniques": self.n_sample_uniques,
            "tau1": _finite(self.tau1),
            "tau2": _finite(self.tau2),
            "share_tau1_uniques": _finite(self.share_tau1_uniques),
            "share_tau2_uniques": _finite(self.share_tau2_uniques),
            "share_tau1_records": _finite(self.share_tau1_records),
            "share_tau2_records": _finite(self.share_tau2_records),
            "model": {
                "formula": self.formula,
                "terms": [list(t) for t in self.terms],
                "generating_class": [list(t) for t in self.generators],
                "method": self.method,
                "iterations": self.iterations,
                "converged": self.converged,
                "n_parameters": self.n_parameters,
            },
            "sampling": self.sampling,
            "sampling_fraction": self.sampling_fraction,
            "gof": {k: _finite(v) for k, v in self.gof.items()},
        }
        if self.path:
            out["search"] = {
                "rule": self.search,
                "criterion": self.criterion,
                "blend": None if self.blend is None else dict(self.blend),
                "path": [{k: _finite(v) for k, v in p.items()} for p in self.path],
            }
        if self.stability is not None:
            out["stability"] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in self.stability.items()}
        if self.sampling_fractions is not None:
            out["sampling_fractions"] = {k: dict(v) for k, v in self.sampling_fractions.items()}
        if self.pram is not None:
            out["pram"] = dict(self.pram)
        if self.ci is not None:
            out["ci"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.ci.items()}
        if self.interval is not None:
            out["interval"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.interval.items()}
        out["weak"] = list(self.weak)
        if self.smoothing is not None:
            out["smoothing"] = dict(self.smoothing)
        if self.modrisk is not None:
            out["compat"] = self.compat
            out["modrisk"] = dict(self.modrisk)
        return out

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("records excluded (missing key value)", self.n_excluded),
            ("key variables", ", ".join(self.keys)),
            ("cells in the table", self.n_cells),
            ("model", self.model_choice),
            ("fit", f"{self.method}, {self.iterations} iterations" + ("" if self.converged else " (not converged)")),
            (
                "sampling",
                self.sampling
                if self.sampling_fraction is None
                else f"{self.sampling}, pi = {self.sampling_fraction:.6g}",
            ),
            ("sample uniques (n_1)", self.n_sample_uniques),
        ]
        sections: list = [("", rows)]
        notes = []
        if self.modrisk is not None:
            mr = self.modrisk
            sections.append(
                (
                    "sdcMicro modRisk (compatibility mode)",
                    [
                        ("method", mr["method"]),
                        ("kept cells", mr["n_kept_cells"]),
                        ("gr1 (risk measure 1)", mr["gr1"]),
                        ("gr2 (risk measure 2)", mr["gr2"]),
                    ],
                )
            )
            notes.append("modRisk divides by the number of kept cells and does not estimate tau_1/tau_2")
        else:
            sections += self._tau_sections()
            notes.append("Z >> 0: under-fitting (risk over-estimated); Z << 0: over-fitting (Skinner & Shlomo 2008)")
            if self.weak:
                notes.insert(0, "weak estimate: tau_2 may be substantially too low: " + "; ".join(self.weak)
                             + " (see the interval with the model choice)")  # fmt: skip
        if self.path:
            sections.append(self._search_section())
        if self.stability is not None:
            sections.append(self._stability_section())
        if self.pram is not None:
            rows = [("tau_2 adjusted (diagonal M_kk)", self.pram["tau2"])]
            if self.pram.get("tau2_exact") is not None:
                rows.append(("tau_2 adjusted, exact form with the full matrix", self.pram["tau2_exact"]))
            sections.append(("PRAM adjustment (Shlomo & Skinner 2010)", rows))
        if self.smoothing is not None:
            sections.append(
                (
                    "Negative-binomial smoothing (experimental, Rinott & Shlomo 2006)",
                    [("tau_1", self.smoothing["tau1"]), ("tau_2", self.smoothing["tau2"])],
                )
            )
        return Summary("Log-linear population-uniqueness risk", tuple(sections), tuple(notes))

    def _search_section(self) -> tuple:
        """The forward-search path, with the runner-up of each step (how close the choice was)."""
        rows = []
        for p in self.path:
            runner = p.get("runner_up")
            rz = p.get("runner_up_Z")
            rows.append(
                (
                    p["step"],
                    p["added"] or "(main effects)",
                    p["Z1"],
                    p["Z2"],
                    p["tau1"],
                    p["tau2"],
                    "" if runner is None else f"{runner} (Z {rz:.3g})",
                )
            )
        bracket = "bracketing" if self.blend is None else f"bracketing Z = {self.blend['z_target']:g}"
        rule = {"bracket": bracket, "skinner-shlomo": "Skinner-Shlomo stop"}
        title = f"Forward search on Z ({self.criterion}, {rule.get(self.search or '', 'search')})"
        columns = ["step", "added term", "Z_1", "Z_2", "tau_1", "tau_2", "runner-up (its Z after one IPF step)"]
        return (title, {"columns": columns, "rows": rows})

    def _stability_section(self) -> tuple:
        st = self.stability
        rows = [
            ("subsamples of 80 % of the records (seed)", f"{st['subsamples']} ({st['seed']})"),
            ("share choosing the same terms", st["same_model"]),
        ]
        rows += [(f"terms chosen: {t}", share) for t, share in st["inclusion"].items()]
        for k, label in (("share_tau1_uniques", "tau_1 / n_1"), ("share_tau2_uniques", "tau_2 / n_1")):
            q = st[k]
            rows.append(
                (f"{label} over the subsamples (10 / 50 / 90 %)", f"{q['q10']:.4g} / {q['q50']:.4g} / {q['q90']:.4g}")
            )
        return ("Stability of the model choice (subsamples)", rows)

    @property
    def model_choice(self) -> str:
        """The chosen model in words: the terms, and the bracketing weight of the last term."""
        if self.blend is None:
            return self.formula
        return f"{self.formula}, with {self.blend['term']} scaled by w = {self.blend['weight']:.3f}"

    def _tau_sections(self) -> list:
        g = self.gof
        return [
            (
                "Global measures",
                [
                    ("tau_1: expected number of sample uniques that are population unique", self.tau1),
                    ("tau_2: expected number of correct matches of sample uniques", self.tau2),
                    ("tau_1 / n_1", self.share_tau1_uniques),
                    ("tau_2 / n_1", self.share_tau2_uniques),
                    ("tau_1 / n", self.share_tau1_records),
                    ("tau_2 / n", self.share_tau2_records),
                    *self._ci_rows(),
                ],
            ),
            (
                "Goodness of fit",
                [
                    ("deviance", g.get("deviance")),
                    ("Pearson X^2", g.get("pearson")),
                    ("df", g.get("df")),
                    ("Z_1 (B/sqrt(v), tau_1)", g.get("Z1")),
                    ("Z_2 (B/sqrt(v), tau_2)", g.get("Z2")),
                ],
            ),
        ]

    def _ci_rows(self) -> list:
        """The intervals of tau_1 and tau_2 beside the estimates: the model-aware one always,
        the parametric bootstrap of the fixed model with ``intervals={"ci": True}``."""
        fmt = lambda v: f"[{v[0]:.6g}, {v[1]:.6g}]"  # noqa: E731
        rows = []
        if self.interval is not None:
            pct = f"{100 * self.interval['confidence']:g} % interval, with the model choice"
            rows += [(f"tau_1, {pct}", fmt(self.interval["tau1"])), (f"tau_2, {pct}", fmt(self.interval["tau2"]))]
        if self.ci is not None:
            pct = f"{100 * self.ci['confidence']:g} % interval, model fixed"
            rows += [
                (f"tau_1, {pct}", fmt(self.ci["tau1"])),
                (f"tau_2, {pct}", fmt(self.ci["tau2"])),
                ("interval method (model fixed)", f"{self.ci['method']} ({self.ci['draws']} draws)"),
            ]
        return rows

    def _records(self):
        out = {"fk": self.fk, "lambda": self.lam, "p_unique": self.p_unique, "risk": self.risk}
        if self.risk_pram is not None:
            out["risk_pram"] = self.risk_pram
        return out

    def plot(self, ax=None):
        """The forward-search path (Z by step) for ``model="auto"``, else a histogram of the
        per-record risk E(1/F | f = 1) of the sample uniques."""
        ax = new_axes(ax)
        if self.path:
            z = [p["Z" + self.criterion[-1]] for p in self.path]
            ax.plot(range(len(z)), z, marker="o")
            ax.axhline(0, color="grey", lw=0.5)
            if self.blend is not None:
                ax.axhline(self.blend["z_target"], color="#C44E52", lw=0.8, ls="--", label="target Z")
                ax.legend()
            ax.set_xlabel("search step")
            ax.set_ylabel(f"Z ({self.criterion})")
            ax.set_title("Log-linear model search")
        else:
            r = self.risk[np.isfinite(self.risk)]
            ax.hist(r, bins=20, range=(0, 1), color="#4C72B0")
            ax.set_xlabel("E(1/F | f = 1)")
            ax.set_ylabel("sample uniques")
            ax.set_title("Per-record risk of sample uniques")
        return ax
