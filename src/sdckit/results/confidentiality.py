"""Result of the categorical confidentiality plot (:mod:`sdckit.risk.confidentiality`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_rule
from ._base import Result, Summary, fmt_share, new_axes

__all__ = ["CategoricalConfidentialityResult"]


@dataclass(frozen=True, eq=False)
class CategoricalConfidentialityResult(Result):
    """Seri's confidentiality plot for categorical keys.

    Attributes
    ----------
    keys : tuple of str
    weighted : bool
        Whether ``frequency`` sums sampling weights (an estimate of F_y) or counts records (f_y).
    frequency : ndarray (n,)
        F_y of each released record: the (weighted) frequency of its key combination y in the
        released file (a missing value matches every category, as in ``frequencies``).
    sample_frequency : ndarray (n,)
        f_y, the number of released records with the combination.
    perturbation : ndarray (n,)
        The share of keys whose released value differs from the original one (a suppressed
        value counts as changed).
    n : int
    """

    keys: tuple = ()
    weighted: bool = False
    frequency: np.ndarray = field(default=None, repr=False)
    sample_frequency: np.ndarray = field(default=None, repr=False)
    perturbation: np.ndarray = field(default=None, repr=False)
    n: int = 0

    _headline = ("n", "share_changed", "share_sample_unique")

    @property
    def share_changed(self) -> float:
        """Share of records with at least one key changed."""
        return float(np.mean(self.perturbation > 0)) if self.n else 0.0

    @property
    def share_sample_unique(self) -> float:
        """Share of released records unique in the released file (f_y = 1)."""
        return float(np.mean(self.sample_frequency == 1)) if self.n else 0.0

    def unsafe(self, k: float | None = None, min_perturbation: float | None = None) -> np.ndarray:
        """Records below the user's rule: frequency F_y below ``k`` (Seri's vertical line) and/or
        perturbation below ``min_perturbation``; rules given are combined with AND (none: no
        record)."""
        k = check_rule("k", k, allow_none=True)
        min_perturbation = check_rule("min_perturbation", min_perturbation, allow_none=True)
        flag = np.ones(self.n, dtype=bool)
        if k is not None:
            flag &= self.frequency < k
        if min_perturbation is not None:
            flag &= self.perturbation < min_perturbation
        if k is None and min_perturbation is None:
            flag[:] = False
        return flag

    def to_dict(self) -> dict:
        q = [0.25, 0.5, 0.75]
        return {
            "measure": "categorical_confidentiality_plot",
            "keys": list(self.keys),
            "n": self.n,
            "weighted": self.weighted,
            "share_changed": self.share_changed,
            "share_sample_unique": self.share_sample_unique,
            "mean_perturbation": float(np.mean(self.perturbation)) if self.n else 0.0,
            "frequency_quartiles": [float(v) for v in np.quantile(self.frequency, q)] if self.n else None,
        }

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [
            ("records", self.n),
            ("keys", ", ".join(self.keys)),
            ("frequency", "sum of weights (F_y)" if self.weighted else "records (f_y)"),
            ("records with a key changed", fmt_share(d["share_changed"])),
            ("sample uniques in the released file", fmt_share(d["share_sample_unique"])),
            ("mean share of keys changed", round(d["mean_perturbation"], 6)),
            ("median frequency", d["frequency_quartiles"][1] if self.n else None),
        ]
        return Summary("Confidentiality plot for categorical keys (Seri)", (("", rows),), ("shares are fractions",))

    def _records(self):
        return {
            "frequency": self.frequency,
            "sample_frequency": self.sample_frequency,
            "perturbation": self.perturbation,
        }

    def plot(self, ax=None, *, k: float | None = None, min_perturbation: float | None = None, log_x: bool = True):
        """Frequency F_y (x) against the share of keys changed (y); Seri's vertical line at ``k``
        and a horizontal line at ``min_perturbation`` when given, records below the rule circled."""
        ax = new_axes(ax)
        fr = np.asarray(self.frequency, dtype=float)
        ax.scatter(fr, self.perturbation, s=10, c="#4C72B0", alpha=0.6)
        if k is not None:
            ax.axvline(float(k), color="k", ls=":", lw=1, label=f"F = {k:g}")
        if min_perturbation is not None:
            ax.axhline(float(min_perturbation), color="k", ls="--", lw=1, label=f"perturbation {min_perturbation:g}")
        uns = self.unsafe(k, min_perturbation)
        if uns.any():
            ax.scatter(fr[uns], self.perturbation[uns], s=40, facecolors="none", edgecolors="k", lw=0.8, label="unsafe")
        if log_x:
            ax.set_xscale("log")
        ax.set_xlabel("frequency of the key combination" + (" (weighted)" if self.weighted else ""))
        ax.set_ylabel("share of keys changed")
        ax.set_title("Confidentiality plot for categorical keys")
        if k is not None or min_perturbation is not None:
            ax.legend(fontsize="small")
        return ax
