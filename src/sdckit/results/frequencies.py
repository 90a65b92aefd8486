"""Results of :func:`sdckit.frequencies` and :func:`sdckit.k_anonymity`: key frequencies and
k-anonymity violations."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._deprecation import deprecated_alias
from ._base import Result, Summary, new_axes

__all__ = ["FrequencyResult", "KAnonymityResult"]


@dataclass(frozen=True, eq=False)
class FrequencyResult(Result):
    """Per-record sample frequency ``fk`` and estimated population frequency ``Fk``.

    Attributes
    ----------
    keys : tuple of str
    strata : tuple of str
        Stratification variables (frequencies are counted within each stratum).
    fk, Fk : ndarray of float, input row order
        f_k = number of sample records sharing the record's key (with missing values matched
        by the sdcMicro rule), F_k = sum of their weights (= f_k without weights).
    alpha : float
    weighted : bool
    n : int
    n_patterns : int
        Distinct key patterns (a missing value counted as a value; within strata).
    n_sample_uniques : int
        Records with f_k == 1 (sdcMicro ``n1``).
    n_fk2 : int
        Records with f_k == 2 (sdcMicro ``n2``).
    n_with_missing : int
        Records with at least one missing key value.
    n_missing_per_key : dict
    pattern_ids : ndarray of int
        Index of each record's distinct key pattern (0..n_patterns-1).
    """

    keys: tuple = ()
    fk: np.ndarray = field(default=None, repr=False)
    Fk: np.ndarray = field(default=None, repr=False)
    pattern_ids: np.ndarray = field(default=None, repr=False)
    alpha: float = 1.0
    weighted: bool = False
    na_rule: str = "sdcmicro"
    n: int = 0
    n_patterns: int = 0
    n_with_missing: int = 0
    n_missing_per_key: dict = field(default_factory=dict)
    strata: tuple = ()

    _headline = ("n", "n_patterns", "n_sample_uniques")

    @property
    def n_sample_uniques(self) -> int:
        return self._count(self.fk == 1)

    @property
    def n_fk2(self) -> int:
        return self._count(self.fk == 2)

    sample_uniques = deprecated_alias("n_sample_uniques", "sample_uniques")
    records_fk2 = deprecated_alias("n_fk2", "records_fk2")
    records_with_missing = deprecated_alias("n_with_missing", "records_with_missing")
    missing_per_key = deprecated_alias("n_missing_per_key", "missing_per_key")
    n_keys = deprecated_alias("n_patterns", "n_keys")

    def fk_distribution(self, max_f: int = 10) -> dict[str, int]:
        """Number of records by f_k: ``{"1": .., "2": .., ..., ">=max_f": ..}`` (fractional f_k
        from alpha < 1 are counted under their floor, below 1 under "<1")."""
        fl = np.floor(self.fk).astype(np.int64)
        out = {}
        if np.any(fl < 1):
            out["<1"] = self._count(fl < 1)
        for v in range(1, max_f):
            out[str(v)] = self._count(fl == v)
        out[f">={max_f}"] = self._count(fl >= max_f)
        return out

    def to_dict(self) -> dict:
        return {
            "measure": "frequencies",
            "keys": list(self.keys),
            "strata": list(self.strata),
            "n": self.n,
            "weighted": self.weighted,
            "alpha": self.alpha,
            "na_rule": self.na_rule,
            "n_patterns": self.n_patterns,
            "n_sample_uniques": self.n_sample_uniques,
            "n_fk2": self.n_fk2,
            "n_with_missing": self.n_with_missing,
            "n_missing_per_key": dict(self.n_missing_per_key),
            "fk_distribution": self.fk_distribution(),
            "mean_fk": self._total(self.fk) / self.n if self.n else None,
        }

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            *([("strata", ", ".join(self.strata))] if self.strata else []),
            ("distinct key patterns", self.n_patterns),
            ("sample uniques (f_k = 1)", self.n_sample_uniques),
            ("records with f_k = 2", self.n_fk2),
            ("records with a missing key value", self.n_with_missing),
            ("weights", "yes" if self.weighted else "no (F_k = f_k)"),
            ("alpha (missing-value matching)", self.alpha),
        ]
        dist = {
            "columns": ["f_k", "records", "% of records"],
            "rows": [
                (k, v, round(100.0 * v / self.n, 2) if self.n else 0.0) for k, v in self.fk_distribution().items()
            ],
        }
        notes = []
        if self.n_with_missing and self.na_rule == "sdcmicro":
            notes.append("a missing key value matches every category (the sdcMicro rule)")
        return Summary("Key frequencies", (("", rows), ("Distribution of f_k", dist)), tuple(notes))

    def _records(self):
        return {"fk": self.fk, "Fk": self.Fk}

    def plot(self, ax=None, max_f: int = 10):
        """Bar chart of the number of records by sample frequency f_k."""
        ax = new_axes(ax)
        dist = self.fk_distribution(max_f)
        ax.bar(list(dist), list(dist.values()), color="#4C72B0")
        ax.set_xlabel("sample frequency f_k of the record's key")
        ax.set_ylabel("records")
        ax.set_title("Frequency distribution of key patterns")
        return ax


@dataclass(frozen=True, eq=False)
class KAnonymityResult(Result):
    """k-anonymity violations for one or several k.

    Attributes
    ----------
    k : tuple of int
    n_violations : dict k -> int
        Records with f_k < k.
    n_patterns_violating : dict k -> int
        Distinct key patterns with f_k < k.
    n_weighted_violations : dict k -> int or None
        Records with F_k < k (sdcMicro ``kAnon_violations(weighted=TRUE)``), with weights only.
    flags : ndarray (n, len(k)) of bool
        ``flags[i, j]``: record i violates k[j]-anonymity.
    frequencies : FrequencyResult
    """

    k: tuple = ()
    n_violations: dict = field(default_factory=dict)
    n_patterns_violating: dict = field(default_factory=dict)
    n_weighted_violations: dict | None = None
    flags: np.ndarray = field(default=None, repr=False)
    frequencies: FrequencyResult = field(default=None, repr=False)

    _headline = ("n", "k", "n_violations")

    violations = deprecated_alias("n_violations", "violations")
    keys_violating = deprecated_alias("n_patterns_violating", "keys_violating")
    weighted_violations = deprecated_alias("n_weighted_violations", "weighted_violations")

    @property
    def n(self) -> int:
        return self.frequencies.n

    @property
    def share_violations(self) -> dict:
        """Per k, the share (0..1) of records violating k-anonymity."""
        return {k: (v / self.n if self.n else 0.0) for k, v in self.n_violations.items()}

    def share(self, k: int) -> float:
        """Share (0..1) of records violating k-anonymity."""
        return self.share_violations[k]

    def violates(self, k: int) -> np.ndarray:
        """Boolean per record: f_k < k."""
        return self.flags[:, self.k.index(k)]

    def to_dict(self) -> dict:
        out = {
            "measure": "k_anonymity",
            "n": self.n,
            "k": list(self.k),
            "n_violations": {str(k): v for k, v in self.n_violations.items()},
            "share_violations": {str(k): v for k, v in self.share_violations.items()},
            "n_patterns_violating": {str(k): v for k, v in self.n_patterns_violating.items()},
        }
        if self.n_weighted_violations is not None:
            out["n_weighted_violations"] = {str(k): v for k, v in self.n_weighted_violations.items()}
        return out

    def summary(self) -> Summary:
        cols = ["k", "records violating", "% of records", "key patterns violating"]
        rows: list[tuple] = [
            (k, self.n_violations[k], round(100.0 * self.share(k), 2), self.n_patterns_violating[k]) for k in self.k
        ]
        if self.n_weighted_violations is not None:
            cols.append("records with F_k < k")
            rows = [r + (self.n_weighted_violations[k],) for r, k in zip(rows, self.k)]
        return Summary(
            "k-anonymity",
            (
                ("", [("records", self.n), ("key variables", ", ".join(self.frequencies.keys))]),
                ("Violations (f_k < k)", {"columns": cols, "rows": rows}),
            ),
        )

    def _records(self):
        out = {"fk": self.frequencies.fk, "Fk": self.frequencies.Fk}
        for j, k in enumerate(self.k):
            out[f"violates_{k}"] = self.flags[:, j]
        return out

    def plot(self, ax=None):
        """Share of records violating k-anonymity, by k."""
        ax = new_axes(ax)
        ax.bar([str(k) for k in self.k], [100 * self.share(k) for k in self.k], color="#C44E52")
        ax.set_xlabel("k")
        ax.set_ylabel("records violating k-anonymity (%)")
        ax.set_title("k-anonymity")
        return ax
