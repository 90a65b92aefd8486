"""Result of :func:`sdckit.combined_risk`: the disclosure risk of every record from its
categorical and continuous keys together, and the global risk as its mean."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._base import Result, Summary, fmt_share, new_axes

__all__ = ["CombinedRiskResult"]

#: how the summary names each combination rule
_RULE_TEXT = {
    "joint": "1 / records sharing the key values inside the intervals",
    "max": "max(categorical, continuous)",
    "union": "1 - (1 - categorical)(1 - continuous)",
}


@dataclass(frozen=True, eq=False)
class CombinedRiskResult(Result):
    """Per-record risk from categorical and continuous keys, and the global risk.

    Attributes
    ----------
    keys, variables : tuple of str
        The categorical keys and the continuous keys (``variables``).
    p : float
        Relative half-width of the intervals (x - p|x|, x + p|x|).
    c_min : int
        A record is unsafe when its risk exceeds 1 / c_min (fewer than c_min candidates).
    combine : str
        ``"joint"``, ``"max"`` or ``"union"`` (see :func:`sdckit.combined_risk`).
    frequency : ndarray (n,)
        Records with the record's key values (f).
    interval_count : ndarray (n,)
        Records inside the record's intervals on every continuous key (c; NaN where the record
        has a missing continuous value).
    joint_count : ndarray (n,)
        Records with its key values inside those intervals (c_K; NaN likewise).
    categorical_risk, continuous_risk, risk : ndarray (n,)
        1/f, 1/c (NaN where c is) and the combined risk, in (0, 1].
    n : int
    """

    keys: tuple = ()
    variables: tuple = ()
    p: float = 0.2
    c_min: int = 3
    combine: str = "joint"
    frequency: np.ndarray = field(default=None, repr=False)
    interval_count: np.ndarray = field(default=None, repr=False)
    joint_count: np.ndarray = field(default=None, repr=False)
    categorical_risk: np.ndarray = field(default=None, repr=False)
    continuous_risk: np.ndarray = field(default=None, repr=False)
    risk: np.ndarray = field(default=None, repr=False)
    n: int = 0

    _headline = ("n", "combine", "global_risk", "n_unsafe")

    # -- derived --------------------------------------------------------------------------------
    def _over(self, risk) -> np.ndarray:
        """Risk above 1 / c_min (a relative tolerance for 1/c against 1/c_min)."""
        with np.errstate(invalid="ignore"):
            return np.asarray(risk) * self.c_min > 1.0 + 1e-9

    @property
    def global_risk(self) -> float:
        """The mean of the combined per-record risks."""
        return float(np.mean(self.risk)) if self.n else 0.0

    @property
    def global_categorical_risk(self) -> float:
        """The mean of 1/f (the categorical keys alone)."""
        return float(np.mean(self.categorical_risk)) if self.n else 0.0

    @property
    def global_continuous_risk(self) -> float | None:
        """The mean of 1/c over the records with every continuous value (None when none has)."""
        ok = ~np.isnan(self.continuous_risk)
        return float(np.mean(self.continuous_risk[ok])) if ok.any() else None

    @property
    def unsafe(self) -> np.ndarray:
        """Per record: combined risk above 1 / c_min."""
        return self._over(self.risk)

    @property
    def n_unsafe(self) -> int:
        return int(np.count_nonzero(self.unsafe))

    @property
    def n_unsafe_categorical(self) -> int:
        """Records unsafe on the categorical keys alone (f < c_min)."""
        return int(np.count_nonzero(self._over(self.categorical_risk)))

    @property
    def n_unsafe_continuous(self) -> int:
        """Records unsafe on the continuous keys alone (c < c_min)."""
        return int(np.count_nonzero(self._over(self.continuous_risk)))

    @property
    def n_unsafe_only_combined(self) -> int:
        """Records safe on each kind of key alone but unsafe on both together."""
        alone = self._over(self.categorical_risk) | self._over(self.continuous_risk)
        return int(np.count_nonzero(self.unsafe & ~alone))

    @property
    def n_missing_continuous(self) -> int:
        """Records with a missing continuous value (risk from the categorical keys only)."""
        return int(np.count_nonzero(np.isnan(self.interval_count)))

    # -- output ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "measure": "combined_risk",
            "n": self.n,
            "keys": list(self.keys),
            "variables": list(self.variables),
            "p": self.p,
            "c_min": self.c_min,
            "combine": self.combine,
            "global_risk": self.global_risk,
            "global_categorical_risk": self.global_categorical_risk,
            "global_continuous_risk": self.global_continuous_risk,
            "n_unsafe": self.n_unsafe,
            "share_unsafe": self.n_unsafe / self.n if self.n else 0.0,
            "n_unsafe_categorical": self.n_unsafe_categorical,
            "n_unsafe_continuous": self.n_unsafe_continuous,
            "n_unsafe_only_combined": self.n_unsafe_only_combined,
            "n_missing_continuous": self.n_missing_continuous,
            "max_risk": float(np.max(self.risk)) if self.n else 0.0,
        }

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("categorical keys", ", ".join(self.keys)),
            ("continuous keys", ", ".join(self.variables)),
            ("interval", f"(x - {self.p:g}|x|, x + {self.p:g}|x|)"),
            ("combination", _RULE_TEXT[self.combine]),
            ("global risk (mean of the record risks)", self.global_risk),
            ("  categorical keys alone (mean of 1/f)", self.global_categorical_risk),
            ("  continuous keys alone (mean of 1/c)", self.global_continuous_risk),
        ]
        unsafe = [
            (f"records with risk above 1/{self.c_min}", self.n_unsafe),
            ("share of records", fmt_share(self.n_unsafe / self.n if self.n else 0.0)),
            ("unsafe on the categorical keys alone", self.n_unsafe_categorical),
            ("unsafe on the continuous keys alone", self.n_unsafe_continuous),
            ("unsafe only on both together", self.n_unsafe_only_combined),
        ]
        notes = []
        if self.n_missing_continuous:
            notes.append(
                f"{self.n_missing_continuous} record(s) with a missing continuous value: risk from the categorical "
                "keys only, and not counted in other records' intervals"
            )
        return Summary(
            "Combined risk of categorical and continuous keys",
            (("", rows), (f"Unsafe records (fewer than {self.c_min} candidates)", unsafe)),
            tuple(notes),
            headline=f"Global risk {self.global_risk:.4g}; {self.n_unsafe} of {self.n} records unsafe.",
        )

    def _records(self):
        return {
            "frequency": self.frequency,
            "interval_count": self.interval_count,
            "joint_count": self.joint_count,
            "categorical_risk": self.categorical_risk,
            "continuous_risk": self.continuous_risk,
            "risk": self.risk,
            "unsafe": self.unsafe,
        }

    def plot(self, ax=None):
        """Histogram of the combined per-record risk, with the 1 / c_min line."""
        ax = new_axes(ax)
        ax.hist(np.asarray(self.risk), bins=20, range=(0.0, 1.0), color="#4C72B0")
        ax.axvline(1.0 / self.c_min, color="#C44E52", linestyle="--")
        ax.set_xlabel("combined risk of the record")
        ax.set_ylabel("records")
        ax.set_title("Combined categorical and continuous risk")
        return ax
