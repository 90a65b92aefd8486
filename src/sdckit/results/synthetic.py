"""The results of :func:`sdckit.synthetic_risk` and :func:`sdckit.synthetic_utility`.

Every field is an aggregate (distances, shares, counts, attack success rates) except the
per-synthetic-record DCR and exact-copy flags that ``similarity={"records": True}`` keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._errors import SdcError
from ._base import Result, Summary, fmt, json_safe, new_axes

__all__ = ["ATTACKS", "SyntheticRiskResult", "SyntheticUtilityResult"]

#: the attack types (an inference attack is named ``inference:<sensitive variable>``)
ATTACKS = ("singling_out", "linkability", "inference")


@dataclass(frozen=True, eq=False)
class SyntheticRiskResult(Result):
    """Disclosure risk of a synthetic file.

    Attributes
    ----------
    keys, variables, sensitive : tuple of str
    n_original, n_synthetic : int
    n_control : int or None
    distribution : dict
        The joint table of the keys: ``kl``, ``tv``, ``hellinger``, ``cells``,
        ``cells_only_original``, ``cells_only_synthetic``.
    by_combination : list of dict
        The same per combination of up to ``order`` keys (``variables`` names them).
    top_cells : list of dict
        Cells of the joint key table with the largest TV contribution: ``cell`` (variable ->
        category), ``original_share``, ``synthetic_share``, ``tv``, ``kl``.
    closeness : dict
        ``n_exact_copies``, ``exact_copy_share`` (synthetic records equal to an original
        record, over all of them), ``n_compared``, ``dcr_median``, ``dcr_zero_share`` (over
        the compared synthetic records); with a control file ``control_exact_copy_share``,
        ``excess_copies`` and ``excess_copies_ci`` (the copies beyond the control baseline),
        ``control_dcr_median``, ``control_dcr_q05``, ``share_below_control_q05`` (about 0.05
        for a safe file), ``excess_copies_p`` (Fisher's exact test of the copies against the
        control's), ``control_overlap`` (the control records are copies of original records
        beyond chance: nothing can be decided), and ``leak`` (the copies' test rejected in the
        leak decision; None: not decided).
    attacks : dict name -> dict
        ``singling_out``, ``linkability``, ``inference:<variable>``: ``risk`` and ``ci`` (the
        success beyond the control baseline, bounded to [0, 1]), ``attack_rate``,
        ``baseline_rate``, ``control_rate`` (Wilson estimates) and their errors, the counts,
        ``p_value`` (the test against the control records) and ``detected`` (rejected in the
        leak decision; None: not decided).
    risk : float
        The largest attack risk (beyond the control file).
    confidence : float
    split : list of two lists or None
    dcr, exact_copy : ndarray (n_synthetic,) or None
        Per synthetic record (``similarity={"records": True}``).
    notes : tuple of str
    leak_decision : dict
        ``leak`` (True, False, or None when it cannot be decided), ``significance`` (the
        chance of flagging a file made without the original records), ``tests`` (per test its
        ``p_value``, ``weight`` and whether it was ``rejected``) and ``reason`` (why nothing was
        decided, or None).
    """

    keys: tuple = ()
    variables: tuple = ()
    sensitive: tuple = ()
    n_original: int = 0
    n_synthetic: int = 0
    n_control: int | None = None
    distribution: dict = field(default_factory=dict)
    by_combination: list = field(default_factory=list)
    top_cells: list = field(default_factory=list)
    closeness: dict = field(default_factory=dict)
    attacks: dict = field(default_factory=dict)
    risk: float = 0.0
    confidence: float = 0.95
    split: list | None = None
    dcr: np.ndarray | None = field(default=None, repr=False)
    exact_copy: np.ndarray | None = field(default=None, repr=False)
    notes: tuple = ()
    leak_decision: dict = field(default_factory=dict)

    _headline: ClassVar[tuple] = ("n_synthetic", "risk")

    @property
    def n(self) -> int:
        return self.n_synthetic

    @property
    def leak(self) -> bool | None:
        """Whether the exact copies or an attack exceed the control baseline (the tests
        together at the level ``leak_decision["significance"]``); None when it cannot be
        decided: no control file, or a control file that overlaps the original."""
        return self.leak_decision.get("leak")

    def to_dict(self) -> dict:
        """Aggregates only, JSON-serialisable."""
        return json_safe(
            {
                "measure": "synthetic_risk",
                "n_original": self.n_original,
                "n_synthetic": self.n_synthetic,
                "n_control": self.n_control,
                "keys": list(self.keys),
                "variables": list(self.variables),
                "sensitive": list(self.sensitive),
                "risk": self.risk,
                "leak": self.leak,
                "leak_decision": dict(self.leak_decision),
                "confidence": self.confidence,
                "distribution": dict(self.distribution),
                "by_combination": [dict(c) for c in self.by_combination],
                "top_cells": [dict(c) for c in self.top_cells],
                "closeness": dict(self.closeness),
                "attacks": {k: dict(v) for k, v in self.attacks.items()},
                "split": self.split,
                "notes": list(self.notes),
            }
        )

    def summary(self) -> Summary:
        d, c = self.distribution, self.closeness
        head = [
            ("original / synthetic / control records", f"{fmt(self.n_original)} / {fmt(self.n_synthetic)} / "
             f"{fmt(self.n_control)}"),
            ("risk (largest attack risk)", self.risk),
            ("leak found", {True: "yes", False: "no"}.get(self.leak, "not decidable")),
            ("significance of the leak decision", self.leak_decision.get("significance")),
        ]  # fmt: skip
        dist = [("KL divergence (joint keys)", d.get("kl")), ("total variation", d.get("tv")),
                ("Hellinger distance", d.get("hellinger")), ("cells", d.get("cells"))]  # fmt: skip
        combos = {
            "columns": ["keys", "KL", "TV", "Hellinger"],
            "rows": [(" x ".join(x["variables"]), x["kl"], x["tv"], x["hellinger"]) for x in self.by_combination],
        }
        close = [(k.replace("_", " "), v if not isinstance(v, (list, tuple)) else f"[{fmt(v[0])}, {fmt(v[1])}]")
                 for k, v in c.items()]  # fmt: skip
        att = {
            "columns": [
                "attack",
                "risk",
                "CI low",
                "CI high",
                "attack rate",
                "baseline rate",
                "control rate",
                "p-value",
                "detected",
            ],
            "rows": [
                (
                    k,
                    a["risk"],
                    a["ci"][0],
                    a["ci"][1],
                    a["attack_rate"],
                    a["baseline_rate"],
                    a["control_rate"],
                    a.get("p_value"),
                    {True: "yes", False: "no"}.get(a.get("detected"), "-"),
                )
                for k, a in self.attacks.items()
            ],  # fmt: skip
        }
        sections = (("", head), ("Distributions", dist), ("By key combination", combos), ("Closeness", close),
                    ("Attacks (success beyond the control baseline)", att))  # fmt: skip
        return Summary("Disclosure risk of a synthetic file", sections, tuple(self.notes))

    def _records(self) -> dict:
        if self.dcr is None:
            raise SdcError(
                'to_frame: the per-record distances were not kept; call synthetic_risk(..., similarity={"records": True})'
            )
        return {"dcr": self.dcr, "exact_copy": self.exact_copy}

    def plot(self, ax=None):
        """The attack risks with their confidence intervals."""
        ax = new_axes(ax)
        names = list(self.attacks)
        risk = np.array([self.attacks[k]["risk"] for k in names])
        lo = np.array([self.attacks[k]["ci"][0] for k in names])
        hi = np.array([self.attacks[k]["ci"][1] for k in names])
        ax.barh(names, risk, xerr=[risk - lo, hi - risk], color="#C44E52")
        ax.set_xlim(0, max(1e-3, float(hi.max()) * 1.1) if len(hi) else 1)
        ax.set_xlabel("risk beyond the control baseline")
        ax.set_title("Attacks on a synthetic file")
        ax.invert_yaxis()
        return ax


@dataclass(frozen=True, eq=False)
class SyntheticUtilityResult(Result):
    """Utility of a synthetic file.

    Attributes
    ----------
    keys, variables : tuple of str
    n_original, n_synthetic : int
    pmse : float
        Propensity-score mean squared error (0: the files cannot be told apart).
    s_pmse : float
        pMSE over its expectation when both files come from one distribution (about 1 then).
    pmse_expected : float
    n_parameters : int
        Parameters k of the propensity model.
    one_way, two_way : list of dict
        Per table: ``variables``, ``tv``, ``hellinger``, ``kl``, ``cells``.
    tables : list of dict
        Every compared table (one-way, two-way, ... up to ``order``).
    loss : float
        The mean TV over the tables, in [0, 1]: how far the key tables are, in one number.
    estimates : EstimatesResult or None
        The published estimates, original against synthetic.
    order, bins : int
    notes : tuple of str
    """

    keys: tuple = ()
    variables: tuple = ()
    n_original: int = 0
    n_synthetic: int = 0
    pmse: float = 0.0
    s_pmse: float = 0.0
    pmse_expected: float = 0.0
    n_parameters: int = 0
    one_way: list = field(default_factory=list)
    two_way: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    loss: float = 0.0
    estimates: Any = None
    order: int = 2
    bins: Any = 10
    notes: tuple = ()

    _headline: ClassVar[tuple] = ("n_synthetic", "s_pmse", "loss")

    @property
    def n(self) -> int:
        return self.n_synthetic

    def to_dict(self) -> dict:
        """Aggregates only, JSON-serialisable."""
        return json_safe(
            {
                "measure": "synthetic_utility",
                "n_original": self.n_original,
                "n_synthetic": self.n_synthetic,
                "keys": list(self.keys),
                "variables": list(self.variables),
                "pmse": self.pmse,
                "s_pmse": self.s_pmse,
                "pmse_expected": self.pmse_expected,
                "n_parameters": self.n_parameters,
                "loss": self.loss,
                "one_way": [dict(t) for t in self.one_way],
                "two_way": [dict(t) for t in self.two_way],
                "tables": [dict(t) for t in self.tables],
                "estimates": None if self.estimates is None else self.estimates.to_dict(),
                "order": self.order,
                "bins": self.bins,
                "notes": list(self.notes),
            }
        )

    def summary(self) -> Summary:
        head = [
            ("original / synthetic records", f"{fmt(self.n_original)} / {fmt(self.n_synthetic)}"),
            ("pMSE", self.pmse),
            ("S_pMSE (about 1: indistinguishable)", self.s_pmse),
            ("loss (mean TV over the tables)", self.loss),
        ]
        tab = {
            "columns": ["variables", "TV", "Hellinger", "KL", "cells"],
            "rows": [(" x ".join(t["variables"]), t["tv"], t["hellinger"], t["kl"], t["cells"]) for t in self.tables],
        }
        sections: tuple = (("", head), ("Tables", tab))
        if self.estimates is not None:
            rows = [r for r in self.estimates.to_dict().get("rows", []) if r.get("estimate") in ("share", "mean")]
            est = {
                "columns": ["estimate", "domain", "category", "variable", "original", "synthetic", "relative change"],
                "rows": [
                    (
                        r.get("estimate"),
                        r.get("domain"),
                        r.get("category"),
                        r.get("variable"),
                        r.get("original"),
                        r.get("protected"),
                        r.get("relative_change"),
                    )
                    for r in rows
                ],  # fmt: skip
            }
            sections += (("Estimates (shares and means)", est),)
        return Summary("Utility of a synthetic file", sections, tuple(self.notes))

    def to_frame(self):
        """The compared tables' distances, one row per table (aggregates)."""
        cols = {
            "variables": [" x ".join(t["variables"]) for t in self.tables],
            "tv": np.array([t["tv"] for t in self.tables], dtype=float),
            "hellinger": np.array([t["hellinger"] for t in self.tables], dtype=float),
            "kl": np.array([t["kl"] for t in self.tables], dtype=float),
            "cells": np.array([t["cells"] for t in self.tables], dtype=np.int64),
        }
        return self._table(cols)

    def plot(self, ax=None):
        """TV of each one-way table."""
        ax = new_axes(ax)
        names = [" x ".join(t["variables"]) for t in self.one_way]
        ax.barh(names, [t["tv"] for t in self.one_way], color="#4C72B0")
        ax.set_xlabel("total variation distance")
        ax.set_title("One-way tables, original against synthetic")
        ax.invert_yaxis()
        return ax
