r"""Result of :func:`sdckit.population_uniques`: the estimated number of population uniques
(Zayatz 1991; Hoshino 2001; Chen & Keller-McNulty 1998; Dankar et al. 2012)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._base import Result, Summary, fmt_share, new_axes

__all__ = ["PopulationUniquesResult"]

MODEL_NAMES = {"zayatz": "Zayatz (1991)", "pitman": "Pitman (Hoshino 2001)", "snb": "SNB (Chen & McNulty 1998)"}


def _finite(x):
    """None for a non-finite number (JSON has no NaN)."""
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x


@dataclass(frozen=True, eq=False)
class PopulationUniquesResult(Result):
    r"""Estimated number of population uniques (population classes of size F_k = 1).

    Aggregates only: nothing here is per record (``to_frame()`` gives the class-size profile).

    Attributes
    ----------
    keys : tuple of str
    n : int
        Records in the input.
    n_used, n_excluded : int
        Records used (no missing key value) / excluded for a missing key value.
    n_classes : int
        u, the equivalence classes (distinct key patterns) of the used records.
    n_sample_uniques : int
        c_1, classes of size 1 in the sample (= records with f_k = 1).
    sampling_fraction : float
        pi, as given, or n / population_size, or n / sum of the weights.
    population_size : float
        N = n / pi (the given population size, or the weight sum). The estimators see the
        population of the used records, N n_used / n.
    fraction_source : {"sampling_fraction", "population_size", "weight"}
        Where pi came from.
    method : {"dankar", "pitman", "zayatz", "snb", "all"}
        The method asked for.
    chosen : {"pitman", "zayatz", "snb", "none", "census"}
        The model whose estimate is the headline: Dankar's choice for "dankar" and "all",
        the method itself otherwise; "none" without sample uniques, "census" when pi = 1.
    reason : str
        Why (e.g. ``"zayatz fallback: pitman did not converge"``).
    population_uniques : float
        \hat S_1, the estimated number of population uniques (NaN if the model asked for did
        not converge).
    share_population_uniques : float
        \hat S_1 / N, the estimated share of the population that is unique (also
        ``proportion``).
    tau1 : float
        pi \hat S_1: the expected number of sample uniques that are population uniques (each
        population unique is in a Bernoulli sample with probability pi, and then a sample
        unique), comparable with :func:`sdckit.loglinear_risk`'s tau_1.
    estimates : dict model -> float
        Every estimate computed (NaN when the model did not converge).
    converged : dict model -> bool
    parameters : dict model -> dict
        Fitted parameters (Pitman theta, alpha; SNB K, alpha, beta; Zayatz P(F = 1 | f = 1)).
    notes : dict model -> str
        Why a model did not converge (empty when it did).
    class_sizes, class_counts : ndarray of int
        The sample's class-size profile: c_i = class_counts[k] classes have size
        i = class_sizes[k].
    """

    keys: tuple = ()
    n: int = 0
    n_used: int = 0
    n_excluded: int = 0
    n_classes: int = 0
    n_sample_uniques: int = 0
    sampling_fraction: float = float("nan")
    population_size: float = float("nan")
    fraction_source: str = "sampling_fraction"
    method: str = "dankar"
    chosen: str = ""
    reason: str = ""
    population_uniques: float = float("nan")
    estimates: dict = field(default_factory=dict)
    converged: dict = field(default_factory=dict)
    parameters: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    class_sizes: np.ndarray = field(default=None, repr=False)
    class_counts: np.ndarray = field(default=None, repr=False)

    _headline = ("n", "n_sample_uniques", "sampling_fraction", "population_uniques", "chosen")

    @property
    def population_size_used(self) -> float:
        """N n_used / n: the population of the records with complete keys."""
        return self.population_size if self.n_used == self.n else self.population_size * self.n_used / self.n

    @property
    def share_population_uniques(self) -> float:
        """\\hat S_1 / N_used: the estimated share of the population that is unique."""
        N = self.population_size_used
        return self.population_uniques / N if N > 0 else math.nan

    @property
    def proportion(self) -> float:
        """Same as :attr:`share_population_uniques` (ARX's "fraction of unique tuples")."""
        return self.share_population_uniques

    @property
    def tau1(self) -> float:
        """pi \\hat S_1: expected number of sample uniques that are population uniques."""
        return self.sampling_fraction * self.population_uniques

    def profile(self) -> dict[int, int]:
        """The class-size profile as a dict size i -> c_i."""
        return {int(i): int(c) for i, c in zip(self.class_sizes, self.class_counts)}

    def to_dict(self) -> dict:
        return {
            "measure": "population_uniques",
            "keys": list(self.keys),
            "n": self.n,
            "n_used": self.n_used,
            "n_excluded": self.n_excluded,
            "n_classes": self.n_classes,
            "n_sample_uniques": self.n_sample_uniques,
            "sampling_fraction": self.sampling_fraction,
            "population_size": self.population_size,
            "fraction_source": self.fraction_source,
            "method": self.method,
            "chosen": self.chosen,
            "reason": self.reason,
            "population_uniques": _finite(self.population_uniques),
            "share_population_uniques": _finite(self.share_population_uniques),
            "tau1": _finite(self.tau1),
            "estimates": {k: _finite(v) for k, v in self.estimates.items()},
            "converged": dict(self.converged),
            "parameters": {k: {p: _finite(v) for p, v in d.items()} for k, d in self.parameters.items()},
            "notes": dict(self.notes),
            "class_size_profile": {str(i): c for i, c in self.profile().items()},
        }

    def summary(self) -> Summary:
        rows = [
            ("records", self.n),
            ("records excluded (missing key value)", self.n_excluded),
            ("key variables", ", ".join(self.keys)),
            ("equivalence classes in the sample (u)", self.n_classes),
            ("sample uniques (c_1)", self.n_sample_uniques),
            ("sampling fraction (pi)", f"{self.sampling_fraction:.6g} (from {self.fraction_source.replace('_', ' ')})"),
            ("population size (N)", self.population_size),
            ("method", self.method),
            ("model used", f"{self.chosen}: {self.reason}"),
            ("estimated population uniques", self.population_uniques),
            ("share of the population unique", fmt_share(self.share_population_uniques)),
            ("tau_1 = pi x population uniques", self.tau1),
        ]
        est = {
            "columns": ["model", "population uniques", "converged", "note"],
            "rows": [
                (MODEL_NAMES.get(m, m), v, self.converged.get(m, False), self.notes.get(m, "") or "-")
                for m, v in self.estimates.items()
            ],
        }
        prof = self.profile()
        order = sorted(prof)
        rows_p: list[tuple] = [(i, prof[i], i * prof[i]) for i in order[:10]]
        if len(order) > 10:
            big = order[10:]
            rows_p.append((f"> {order[9]}", sum(prof[i] for i in big), sum(i * prof[i] for i in big)))
        shown = {"columns": ["class size i", "classes c_i", "records i c_i"], "rows": rows_p}
        notes = ["Dankar et al. (2012): Pitman up to pi = 0.1, else the smaller of Zayatz and SNB"]
        return Summary(
            "Population uniqueness",
            (("", rows), ("Estimates", est), ("Class-size profile of the sample", shown)),
            tuple(notes),
        )

    def _records(self):
        return {"class_size": self.class_sizes, "n_classes": self.class_counts}

    def to_frame(self):
        """The class-size profile as a frame of the caller's type: one row per class size i
        with ``class_size`` (i), ``n_classes`` (c_i) and ``n_records`` (i c_i). Aggregates
        only (no record-level output)."""
        sizes = np.asarray(self.class_sizes, dtype=np.int64)
        counts = np.asarray(self.class_counts, dtype=np.int64)
        cols = {"class_size": sizes, "n_classes": counts, "n_records": sizes * counts}
        return self._table(cols)

    def plot(self, ax=None, max_size: int = 20):
        """Bar chart of the class-size profile c_i (i up to ``max_size``), with the estimated
        population uniques written in the title."""
        ax = new_axes(ax)
        prof = self.profile()
        xs = [i for i in sorted(prof) if i <= max_size]
        ax.bar(xs, [prof[i] for i in xs], color="#4C72B0")
        ax.set_xlabel("class size i in the sample")
        ax.set_ylabel("classes c_i")
        ax.set_title(f"Population uniques ({self.chosen}): {self.population_uniques:,.0f}")
        return ax
