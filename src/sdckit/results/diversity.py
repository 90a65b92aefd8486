"""Result objects of l-diversity and t-closeness (:mod:`sdckit.risk.diversity`).

Headline names follow the glossary: counts of records or classes are ``n_*``; ``to_dict()``
holds no percentage. Old attribute names keep working for one release with a
``DeprecationWarning``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._deprecation import deprecated_alias
from .._deprecation import warn_deprecated as _warn
from .._errors import SdcError
from .._validation import check_choice, check_rule
from ._base import Result, Summary, new_axes, weighted_quantiles

__all__ = ["LDiversityResult", "TClosenessResult"]

MEASURES = ("distinct", "entropy", "recursive")
MULTI_MEASURES = ("multi_entropy", "multi_recursive")


def _check_variable(variable, sensitive) -> tuple:
    """The sensitive variables a check applies to: ``variable`` or all of them."""
    if variable is None:
        return tuple(sensitive)
    if variable not in sensitive:
        raise SdcError(f"variable: {variable!r} is not a sensitive variable; expected one of {', '.join(sensitive)}")
    return (variable,)


# ----------------------------------------------------------------------------------------------
# l-diversity
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class LDiversityResult(Result):
    """l-diversity of sensitive variables within the key classes.

    Attributes
    ----------
    keys, sensitive : tuple of str
    strata : tuple of str
        Stratification columns: classes are formed within each stratum.
    c : float
        Constant of recursive (c,l)-diversity.
    distinct, entropy, recursive : dict name -> ndarray (n,)
        Per record (input row order), the l of the record's class for each sensitive variable:
        distinct (int), entropy (float, exp of the Shannon entropy), recursive (int).
    multi_entropy, multi_recursive : ndarray (n,)
        sdcMicro's multi-attribute l-diversity (0 with a single sensitive variable).
    class_ids : ndarray (n,) of int
        Equivalence class of each record (exact equality of keys and strata, a missing key
        value is a value).
    n, n_classes : int
    n_missing_sensitive : dict name -> int
        Records whose sensitive value is missing.
    """

    keys: tuple = ()
    sensitive: tuple = ()
    c: float = 2.0
    distinct: dict = field(default_factory=dict, repr=False)
    entropy: dict = field(default_factory=dict, repr=False)
    recursive: dict = field(default_factory=dict, repr=False)
    multi_entropy: np.ndarray = field(default=None, repr=False)
    multi_recursive: np.ndarray = field(default=None, repr=False)
    class_ids: np.ndarray = field(default=None, repr=False)
    n: int = 0
    n_classes: int = 0
    n_missing_sensitive: dict = field(default_factory=dict)
    strata: tuple = ()

    _headline = ("n", "n_classes", "sensitive")

    missing_sensitive = deprecated_alias("n_missing_sensitive", "missing_sensitive")

    @property
    def multi(self) -> bool:
        """True when the multi-attribute measures were computed (two or more sensitive variables)."""
        return len(self.sensitive) > 1

    @property
    def min(self) -> dict:
        """The dataset's l per measure (minimum over records/classes).

        ``{"distinct": {var: int}, "entropy": {var: float}, "recursive": {var: int},
        "multi_entropy": float or None, "multi_recursive": int or None}`` (the multi measures are
        None with a single sensitive variable).
        """
        out: dict[str, Any] = {}
        for m in MEASURES:
            arrs = getattr(self, m)
            cast = float if m == "entropy" else int
            out[m] = {v: (cast(arrs[v].min()) if self.n else None) for v in self.sensitive}
        out["multi_entropy"] = float(self.multi_entropy.min()) if self.multi and self.n else None
        out["multi_recursive"] = int(self.multi_recursive.min()) if self.multi and self.n else None
        return out

    def n_below(self, l: float, measure: str = "distinct") -> dict:
        """Per sensitive variable, the records whose class has l-diversity below ``l``."""
        check_choice(measure, "measure", MEASURES)
        return {v: self._count(getattr(self, measure)[v] < l) for v in self.sensitive}

    def is_l_diverse(self, l: float, measure: str = "distinct", variable: str | None = None) -> bool:
        """Whether every class has l-diversity >= ``l`` in ``measure`` ("distinct", "entropy",
        "recursive", "multi_entropy", "multi_recursive") for ``variable`` (all sensitive
        variables when None)."""
        mins = self.min
        if measure in MULTI_MEASURES:
            if not self.multi:
                raise SdcError(f"measure: {measure} needs two or more sensitive variables")
            return bool(mins[measure] >= l)
        check_choice(measure, "measure", MEASURES + MULTI_MEASURES)
        return all(mins[measure][v] >= l for v in _check_variable(variable, self.sensitive))

    def distinct_distribution(self, variable: str, max_l: int = 10) -> dict[str, int]:
        """Number of records by distinct l of their class: ``{"0": .., "1": .., ..., ">=max_l": ..}``
        ("0" only when some class has no non-missing sensitive value)."""
        d = self.distinct[variable]
        out = {}
        if np.any(d == 0):
            out["0"] = self._count(d == 0)
        for v in range(1, max_l):
            out[str(v)] = self._count(d == v)
        out[f">={max_l}"] = self._count(d >= max_l)
        return out

    def to_dict(self) -> dict:
        return {
            "measure": "l_diversity",
            "keys": list(self.keys),
            "strata": list(self.strata),
            "sensitive": list(self.sensitive),
            "n": self.n,
            "n_classes": self.n_classes,
            "c": self.c,
            "min": self.min,
            "mean": {
                m: {v: (self._total(getattr(self, m)[v]) / self.n if self.n else None) for v in self.sensitive}
                for m in MEASURES
            },
            "n_not_2_diverse": self.n_below(2),
            "n_missing_sensitive": dict(self.n_missing_sensitive),
            "distinct_distribution": {v: self.distinct_distribution(v) for v in self.sensitive},
        }

    def summary(self) -> Summary:
        mins = self.min
        rows = [("records", self.n), ("key variables", ", ".join(self.keys))]
        if self.strata:
            rows.append(("strata (classes formed within each)", ", ".join(self.strata)))
        rows += [
            ("sensitive variables", ", ".join(self.sensitive)),
            ("equivalence classes", self.n_classes),
            ("recursive constant c", self.c),
        ]
        below2 = self.n_below(2)
        cols = ["variable", "distinct l", "entropy l", "recursive l", "records with distinct l < 2", "missing values"]
        table = {
            "columns": cols,
            "rows": [
                (
                    v,
                    mins["distinct"][v],
                    mins["entropy"][v],
                    mins["recursive"][v],
                    below2[v],
                    self.n_missing_sensitive.get(v, 0),
                )
                for v in self.sensitive
            ],
        }
        sections = [("", rows), ("l of the file (minimum over classes)", table)]
        if self.multi:
            sections.append(
                ("Multi-attribute", [("entropy l", mins["multi_entropy"]), ("recursive l", mins["multi_recursive"])])
            )
        notes = ["classes: exact key equality, a missing key value is its own category"]
        if any(self.n_missing_sensitive.values()):
            notes.append(
                "a missing sensitive value counts as one extra category (distinct, entropy) when the class "
                "has other values; recursive l ignores it"
            )
        return Summary("l-diversity", tuple(sections), tuple(notes))

    def _records(self):
        out = {}
        for v in self.sensitive:
            out[f"{v}_Distinct_Ldiversity"] = self.distinct[v]
            out[f"{v}_Entropy_Ldiversity"] = self.entropy[v]
            out[f"{v}_Recursive_Ldiversity"] = self.recursive[v]
        out["MultiEntropy_Ldiversity"] = self.multi_entropy
        out["MultiRecursive_Ldiversity"] = self.multi_recursive
        return out

    def plot(self, ax=None, max_l: int = 10):
        """Bar chart of the number of records by distinct l of their class (one bar group per
        sensitive variable)."""
        ax = new_axes(ax)
        names = list(self.sensitive)
        dists = [self.distinct_distribution(v, max_l) for v in names]
        cats = sorted({k for d in dists for k in d}, key=lambda k: (k.startswith(">="), int(k.lstrip(">="))))
        x = np.arange(len(cats))
        width = 0.8 / max(len(names), 1)
        for j, (v, d) in enumerate(zip(names, dists)):
            ax.bar(x + (j - (len(names) - 1) / 2) * width, [d.get(k, 0) for k in cats], width=width, label=v)
        ax.set_xticks(x)
        ax.set_xticklabels(cats)
        ax.set_xlabel("distinct l-diversity of the record's class")
        ax.set_ylabel("records")
        ax.set_title("l-diversity")
        if len(names) > 1:
            ax.legend()
        return ax


# ----------------------------------------------------------------------------------------------
# t-closeness
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class TClosenessResult(Result):
    """t-closeness of sensitive variables within the key classes.

    Attributes
    ----------
    keys, sensitive : tuple of str
    ordered : tuple of str
        Sensitive variables measured with the ordered ground distance.
    hierarchical : tuple of str
        Sensitive variables measured with the hierarchical ground distance (``hierarchies``).
    weighted : bool
        Whether P and Q_E are weighted distributions.
    distance : dict name -> ndarray (n,) of float
        Per record (input row order), the earth mover's distance D(P, Q_E) of its class;
        NaN when every sensitive value of the class is missing.
    class_ids : ndarray (n,) of int
        Equivalence class of each record (exact key equality, a missing key is a value).
    class_sizes : ndarray (n_classes,) of int
    class_distance : dict name -> ndarray (n_classes,)
    n_categories : dict name -> int
        q, the number of categories of each sensitive variable (declared when ``ordered``
        gives the categories, observed otherwise).
    n, n_classes : int
    n_missing_sensitive : dict name -> int
        Records whose sensitive value is missing.
    """

    keys: tuple = ()
    sensitive: tuple = ()
    ordered: tuple = ()
    weighted: bool = False
    distance: dict = field(default_factory=dict, repr=False)
    hierarchical: tuple = ()
    class_ids: np.ndarray = field(default=None, repr=False)
    class_sizes: np.ndarray = field(default=None, repr=False)
    class_distance: dict = field(default_factory=dict, repr=False)
    n_categories: dict = field(default_factory=dict)
    n: int = 0
    n_classes: int = 0
    n_missing_sensitive: dict = field(default_factory=dict)

    _headline = ("n", "n_classes", "max")

    missing_sensitive = deprecated_alias("n_missing_sensitive", "missing_sensitive")

    @property
    def max(self) -> dict:
        """The file's t per sensitive variable: the largest class distance (classes whose values
        are all missing ignored; NaN if there is no other class)."""
        out = {}
        for v in self.sensitive:
            d = self.class_distance[v]
            ok = ~np.isnan(d)
            out[v] = float(d[ok].max()) if ok.any() else float("nan")
        return out

    def is_t_close(self, t: float, variable: str | None = None) -> bool:
        """Whether every class has D(P, Q_E) <= t for ``variable`` (all sensitive variables when
        None). Classes whose sensitive values are all missing are ignored."""
        tt = check_rule("t", t)
        names = _check_variable(variable, self.sensitive)
        mx = self.max
        return all(math.isnan(mx[v]) or mx[v] <= tt for v in names)

    def n_classes_above(self, t: float) -> dict[str, int]:
        """Number of classes with D(P, Q_E) > t, per sensitive variable."""
        return {v: int(np.count_nonzero(self.class_distance[v] > t)) for v in self.sensitive}

    def classes_above(self, t: float) -> dict[str, int]:
        """Deprecated name of :meth:`n_classes_above`."""
        _warn(f"{type(self).__name__}.classes_above is now called n_classes_above")
        return self.n_classes_above(t)

    def _n_classes_all_missing(self) -> dict:
        return {v: int(np.count_nonzero(np.isnan(self.class_distance[v]))) for v in self.sensitive}

    def to_dict(self) -> dict:
        def stat(f, v):
            d = self.distance[v]
            ok = ~np.isnan(d)
            if not ok.any():
                return None
            if self.row_counts is None:
                return float(f(d[ok]))
            c = np.asarray(self.row_counts)[ok]
            return float(np.dot(d[ok], c) / c.sum()) if f is np.mean else float(weighted_quantiles(d[ok], c, 0.5)[0])

        return {
            "measure": "t_closeness",
            "keys": list(self.keys),
            "sensitive": list(self.sensitive),
            "ordered": list(self.ordered),
            "hierarchical": list(self.hierarchical),
            "weighted": self.weighted,
            "n": self.n,
            "n_classes": self.n_classes,
            "n_categories": dict(self.n_categories),
            "max": {v: (None if math.isnan(x) else x) for v, x in self.max.items()},
            "mean": {v: stat(np.mean, v) for v in self.sensitive},
            "median": {v: stat(np.median, v) for v in self.sensitive},
            "n_classes_all_missing": self._n_classes_all_missing(),
            "n_missing_sensitive": dict(self.n_missing_sensitive),
        }

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("sensitive variables", ", ".join(self.sensitive)),
            ("equivalence classes", self.n_classes),
            ("weighted distributions", self.weighted),
        ]
        cols = [
            "variable",
            "distance",
            "categories",
            "t (max over classes)",
            "mean over records",
            "classes all missing",
        ]
        table = {
            "columns": cols,
            "rows": [
                (
                    v,
                    "ordered" if v in self.ordered else "hierarchical" if v in self.hierarchical else "nominal",
                    self.n_categories[v],
                    d["max"][v],
                    d["mean"][v],
                    d["n_classes_all_missing"][v],
                )
                for v in self.sensitive
            ],
        }
        notes = [
            "D(P, Q_E): earth mover's distance between the file's and the class's distribution, in [0, 1]; "
            "records with a missing sensitive value are excluded from both"
        ]
        if any(d["n_classes_all_missing"].values()):
            notes.append("classes whose sensitive values are all missing have no distance (NA) and are ignored in t")
        return Summary("t-closeness", (("", rows), ("Distance to the overall distribution", table)), tuple(notes))

    def _records(self):
        return {f"{v}_TCloseness": self.distance[v] for v in self.sensitive}

    def class_table(self):
        """Per-class table (class id, size, distance per sensitive variable) as a frame of the
        caller's type. Class ids index :attr:`class_ids`."""
        cols = {"class": np.arange(self.n_classes), "size": self.class_sizes}
        for v in self.sensitive:
            cols[f"{v}_TCloseness"] = self.class_distance[v]
        return self._table(cols)

    def plot(self, ax=None, bins: int = 20):
        """Histogram of the per-record distances D(P, Q_E) (one per sensitive variable)."""
        ax = new_axes(ax)
        edges = np.linspace(0.0, 1.0, int(bins) + 1)
        for v in self.sensitive:
            d = self.distance[v]
            ax.hist(d[~np.isnan(d)], bins=edges, alpha=0.6 if len(self.sensitive) > 1 else 1.0, label=v)
        ax.set_xlabel("distance D(P, Q_E) of the record's class")
        ax.set_ylabel("records")
        ax.set_title("t-closeness")
        if len(self.sensitive) > 1:
            ax.legend()
        return ax
