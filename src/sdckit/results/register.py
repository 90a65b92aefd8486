r"""Result of :func:`sdckit.register_risk`: re-identification risk for the members of a
subpopulation register (Shlomo & Skinner 2022)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._base import Result, Summary, fmt_share, new_axes

__all__ = ["RegisterRiskResult"]

_MEASURES = ("tau1_star", "tau2_star", "tau1", "tau2", "theta_hat")


def _finite(x):
    """None for a missing or non-finite number (JSON has no NaN or infinity)."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


def _ratio(a: float, b: int) -> float:
    return a / b if b else math.nan


@dataclass(frozen=True, eq=False)
class RegisterRiskResult(Result):
    r"""Re-identification risk of the members of a subpopulation register.

    The register lists every member of a subpopulation U_1 (membership is sensitive and is not a
    key); an independent sample of the whole population has the same keys. In cell k of the
    key table, F^1_k is the register count, f_k the sample count and F_k the unknown population
    count.

    Attributes
    ----------
    keys : tuple of str
    approach : {"A", "B", "both"}
        The estimation approach; with ``"both"`` the fields are approach B's and
        ``approaches`` holds both results.
    n_register, n_sample : int
        Records of the register and of the sample (the input files).
    n_register_excluded, n_sample_excluded : int
        Records left out for a missing key value.
    n_cells : int
        Cells of the full key table (empty cells included); ``levels`` its shape.
    sampling_fraction : float or None
        The sample's constant sampling fraction (None when it varies by cell, from the weights).
    n_register_uniques : int
        Cells (= records) with F^1_k = 1.
    n_both_uniques : int
        Cells with F^1_k = 1 and f_k = 1 (unique in the register and in the sample).
    tau1_star, tau2_star : float
        \hat tau*_1 = sum over register uniques of P(F_k = 1 | F^1_k = 1) (register uniques that
        are population unique) and \hat tau*_2 = sum of E(1/F_k | F^1_k = 1) (expected correct
        matches of register uniques).
    tau1, tau2 : float
        The same over the cells unique in both files, conditioning on f_k = 1 too.
    share_tau1_star, share_tau2_star, share_tau1, share_tau2 : float
        tau*_1 / n_register_uniques, tau*_2 / n_register_uniques, tau_1 / n_both_uniques,
        tau_2 / n_both_uniques (NaN when the count is 0).
    theta_hat : float
        Design-consistent estimate of theta = sum I(F^1=1, f=1) / sum F I(F^1=1, f=1), the
        probability that an intruder's match of a unit unique in both files is correct
        (NaN when no cell is unique in both files).
    terms, membership_terms : tuple of tuple of str
        The log-linear model of lambda and the logistic model of membership.
    xi : dict
        Membership coefficients by name: ``(intercept)``, ``age[3]`` (category 3 of age, in the
        order of ``categories``; category 1 is the reference), ``age[3]:sex[2]``; ``-inf`` for a
        category without register members (p = 0 there); ``inf`` (approach B) for a category
        with at least as many register members as the weighted sample represents, a category
        without sample record among them (p = 1 there: F-hat = F^1); 0 for a column that no fitted cell has
        and for an aliased column (a combination of earlier columns, e.g. when the reference
        category has no record: the column is dropped from the fit).
    loglinear_fit, membership_fit : dict
        The fits: method, iterations, converged; for the membership fit also the
        log-likelihood, step halvings, Newton and Fisher steps, and the counts of coefficients
        at -inf (``n_infinite``), at +inf (``n_certain``, approach B; it also counts a key's
        reference category at p = 1, which has no coefficient of its own), not estimable
        (``n_not_estimable``) and aliased (``n_aliased``).
    n_zero_lambda : int
        Approach A: cells with register members whose fitted population count is 0.
    approaches : dict or None
        With ``approach="both"``: ``{"A": RegisterRiskResult, "B": RegisterRiskResult}``.
    categories : dict
        Key -> its categories in code order (both files together).
    register_fk, fk, lam, p_member : ndarray
        Per register record: F^1_k, f_k, \hat lambda_k, \hat p_k (NaN for excluded records).
    p_unique_register, risk_register, p_unique_both, risk_both : ndarray
        Per register record: P(F = 1 | F^1 = 1) and E(1/F | F^1 = 1) for register uniques,
        P(F = 1 | F^1 = 1, f = 1) and E(1/F | F^1 = 1, f = 1) for records unique in both
        files (NaN otherwise).
    """

    keys: tuple = ()
    approach: str = "B"
    n_register: int = 0
    n_sample: int = 0
    n_register_excluded: int = 0
    n_sample_excluded: int = 0
    n_cells: int = 0
    levels: tuple = ()
    sampling_fraction: float | None = None
    n_register_uniques: int = 0
    n_both_uniques: int = 0
    tau1_star: float = math.nan
    tau2_star: float = math.nan
    tau1: float = math.nan
    tau2: float = math.nan
    theta_hat: float = math.nan
    terms: tuple = ()
    membership_terms: tuple = ()
    xi: dict = field(default_factory=dict)
    loglinear_fit: dict = field(default_factory=dict)
    membership_fit: dict = field(default_factory=dict)
    n_zero_lambda: int = 0
    approaches: dict | None = None
    categories: dict = field(default_factory=dict, repr=False)
    register_fk: np.ndarray = field(default=None, repr=False)
    fk: np.ndarray = field(default=None, repr=False)
    lam: np.ndarray = field(default=None, repr=False)
    p_member: np.ndarray = field(default=None, repr=False)
    p_unique_register: np.ndarray = field(default=None, repr=False)
    risk_register: np.ndarray = field(default=None, repr=False)
    p_unique_both: np.ndarray = field(default=None, repr=False)
    risk_both: np.ndarray = field(default=None, repr=False)

    _headline = ("approach", "n_register_uniques", "tau1_star", "tau2_star", "n_both_uniques", "tau1", "tau2")

    @property
    def n(self) -> int:
        """Records of the register (the rows of ``to_frame()``)."""
        return self.n_register

    @property
    def share_tau1_star(self) -> float:
        """tau*_1 / n_register_uniques: share of the register uniques that are population unique."""
        return _ratio(self.tau1_star, self.n_register_uniques)

    @property
    def share_tau2_star(self) -> float:
        """tau*_2 / n_register_uniques: expected correct-match rate of a register unique."""
        return _ratio(self.tau2_star, self.n_register_uniques)

    @property
    def share_tau1(self) -> float:
        """tau_1 / n_both_uniques."""
        return _ratio(self.tau1, self.n_both_uniques)

    @property
    def share_tau2(self) -> float:
        """tau_2 / n_both_uniques."""
        return _ratio(self.tau2, self.n_both_uniques)

    @staticmethod
    def _formula(terms) -> str:
        return " + ".join(":".join(t) for t in terms)

    # -- aggregates --------------------------------------------------------------------------
    def _estimates(self) -> dict:
        out = {k: _finite(getattr(self, k)) for k in _MEASURES}
        for k in ("share_tau1_star", "share_tau2_star", "share_tau1", "share_tau2"):
            out[k] = _finite(getattr(self, k))
        return out

    def _models(self) -> dict:
        return {
            "model": {"formula": self._formula(self.terms), **dict(self.loglinear_fit)},
            "membership_model": {
                "formula": self._formula(self.membership_terms),
                "xi": {k: _finite(v) for k, v in self.xi.items()},
                **dict(self.membership_fit),
            },
            "n_zero_lambda": self.n_zero_lambda,
        }

    def to_dict(self) -> dict:
        out = {
            "measure": "register_risk",
            "approach": self.approach,
            "keys": list(self.keys),
            "n_register": self.n_register,
            "n_sample": self.n_sample,
            "n_register_excluded": self.n_register_excluded,
            "n_sample_excluded": self.n_sample_excluded,
            "n_cells": self.n_cells,
            "levels": {k: int(v) for k, v in zip(self.keys, self.levels)},
            "sampling_fraction": self.sampling_fraction,
            "n_register_uniques": self.n_register_uniques,
            "n_both_uniques": self.n_both_uniques,
            **self._estimates(),
        }
        if self.approaches is None:
            out.update(self._models())
        else:
            out["approaches"] = {a: {**r._estimates(), **r._models()} for a, r in self.approaches.items()}
        return out

    def summary(self) -> Summary:
        rows = [
            ("key variables", ", ".join(self.keys)),
            ("register records (excluded: missing key value)", f"{self.n_register:,} ({self.n_register_excluded:,})"),
            ("sample records (excluded: missing key value)", f"{self.n_sample:,} ({self.n_sample_excluded:,})"),
            ("cells in the key table", self.n_cells),
            (
                "sampling fraction",
                "varies by cell (weights)" if self.sampling_fraction is None else self.sampling_fraction,
            ),
            ("register uniques (F^1 = 1)", self.n_register_uniques),
            ("unique in register and sample (F^1 = 1, f = 1)", self.n_both_uniques),
            ("theta-hat: P(a match of a unit unique in both files is correct)", self.theta_hat),
        ]
        results = self.approaches if self.approaches is not None else {self.approach: self}
        table = {
            "columns": ["measure", *[f"approach {a}" for a in results]],
            "rows": [
                [label, *[getattr(r, name) for r in results.values()]]
                for name, label in (
                    ("tau1_star", "tau*_1: register uniques that are population unique"),
                    ("tau2_star", "tau*_2: expected correct matches of register uniques"),
                    ("share_tau1_star", "tau*_1 / register uniques"),
                    ("share_tau2_star", "tau*_2 / register uniques"),
                    ("tau1", "tau_1: the same, unique in both files"),
                    ("tau2", "tau_2: expected correct matches, unique in both"),
                    ("share_tau1", "tau_1 / unique in both"),
                    ("share_tau2", "tau_2 / unique in both"),
                )
            ],
        }
        fits = [
            ("log-linear model of lambda", self._formula(self.terms)),
            ("membership model (logit)", self._formula(self.membership_terms)),
        ]
        fits += [(f"approach {a}: fits", self._fit_text(r)) for a, r in results.items()]
        sections = [("", rows), ("Estimates", table), ("Models", fits)]
        notes = []
        if any(r.n_zero_lambda for r in results.values()):
            notes.append("approach A: some register cells have a fitted population count of 0 (risk over-estimated)")
        n_certain = sum(int(r.membership_fit.get("n_certain", 0)) for r in results.values())
        if n_certain:
            notes.append(
                f"approach B: {n_certain} membership column(s) have at least as many register members as the weighted "
                "sample represents; their propensity is 1 (estimated population count = register count)"
            )
        headline = (
            f"An estimated {fmt_share(self.share_tau1_star)} of the {self.n_register_uniques:,} register uniques are "
            f"population unique (approach {'B' if self.approach == 'both' else self.approach})."
            if self.n_register_uniques
            else "No register record is alone in its cell of the key table (no register unique)."
        )
        return Summary("Re-identification risk of register members", tuple(sections), tuple(notes), headline)

    @staticmethod
    def _fit_text(r) -> str:
        lf, mf = r.loglinear_fit, r.membership_fit
        unit = "cycles" if lf.get("method") == "ipf" else "iterations"
        conv = "converged" if mf.get("converged", True) else "not converged"
        return (
            f"lambda: {str(lf.get('method')).upper()}, {lf.get('iterations')} {unit}; membership: "
            f"{mf.get('iterations')} iterations ({mf.get('newton_steps')} Newton), {conv}"
        )

    # -- records -----------------------------------------------------------------------------
    def _own_records(self, suffix: str = "") -> dict:
        names = ("lam", "p_member", "p_unique_register", "risk_register", "p_unique_both", "risk_both")
        return {("lambda" if n == "lam" else n) + suffix: getattr(self, n) for n in names}

    def _records(self) -> dict:
        out = {"register_fk": self.register_fk, "fk": self.fk}
        if self.approaches is None:
            return {**out, **self._own_records()}
        for a, r in self.approaches.items():
            out.update(r._own_records(f"_{a}"))
        return out

    def plot(self, ax=None):
        """Histogram of the per-record risk E(1/F | F^1 = 1) of the register uniques (one per
        approach with ``approach="both"``)."""
        ax = new_axes(ax)
        results = self.approaches if self.approaches is not None else {self.approach: self}
        for a, r in results.items():
            x = np.asarray(r.risk_register)
            ax.hist(x[np.isfinite(x)], bins=20, range=(0, 1), alpha=0.6, label=f"approach {a}")
        ax.set_xlabel("E(1/F | F^1 = 1)")
        ax.set_ylabel("register uniques")
        ax.set_title("Per-record risk of register uniques")
        ax.legend()
        return ax
