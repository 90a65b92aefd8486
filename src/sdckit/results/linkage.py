"""Results of :func:`sdckit.record_linkage_risk` (:class:`LinkageResult`) and
:func:`sdckit.external_risk` (:class:`ExternalRiskResult`).

Counts are ``n_*``, fractions in [0, 1] are ``share_*``; no field holds a percentage (the
printed summaries show percentages and say so). Former names keep working for one release with
a :class:`DeprecationWarning`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._deprecation import deprecated_alias
from .._errors import warn
from ._base import Result, Summary, fmt_percent, new_axes

__all__ = ["LinkageResult", "ExternalRiskResult"]


def _share(count: float, n: int) -> float:
    return float(count) / n if n else 0.0


@dataclass(frozen=True, eq=False)
class LinkageResult(Result):
    """Record-linkage risk of a protected file against the original.

    Attributes
    ----------
    method : {"distance", "probabilistic", "assignment"}
    variables : tuple of str
    n : int
        Number of records (protected records, paired with the originals by position).
    correct_first : ndarray (n,)
        Per protected record, the expected success of linking it to its nearest original (1/t
        when t originals tie at the minimum and the partner is among them); for
        ``"assignment"`` 1.0 when the assigned original is the partner; for
        ``"probabilistic"`` 1.0 when the true pair is classified as a link.
    correct_second : ndarray (n,) or None
        Distance method: the same for the second-nearest original.
    linked_to : ndarray of int (n,) or None
        Nearest (distance) or assigned (assignment) original record, by row position.
    second_weight : float
        Weight of second-nearest links in the share linked.
    em : dict or None
        Probabilistic method: m, u, p, iterations, converged, the numbers of links
        (``n_links``, ``n_possible_links``, ``n_true_links``), precision and the pattern table;
        with comparison levels m and u per field and level, ``levels`` (the level names per
        field) and ``level_weights`` (log2(m/u) per field and level).
    standardize, metric : str
        Distance and assignment methods: how the variables were standardised, the distance.
    """

    method: str = "distance"
    variables: tuple = ()
    n: int = 0
    correct_first: np.ndarray = field(default=None, repr=False)
    correct_second: np.ndarray | None = field(default=None, repr=False)
    linked_to: np.ndarray | None = field(default=None, repr=False)
    second_weight: float = 1.0
    em: dict | None = field(default=None, repr=False)
    standardize: str = "original"
    metric: str = "euclidean"

    _headline: ClassVar[tuple] = ("method", "share_linked", "n")

    @property
    def n_linked_first(self) -> float:
        """L_1: number of records whose nearest original is the true partner (ties shared 1/t,
        so it may be fractional); correct assignments or true links for the other methods."""
        return float(self.correct_first.sum())

    @property
    def n_linked_second(self) -> float:
        """L_2: the same for the second-nearest original (distance method; 0 otherwise)."""
        return float(self.correct_second.sum()) if self.correct_second is not None else 0.0

    @property
    def share_linked_first(self) -> float:
        return _share(self.n_linked_first, self.n)

    @property
    def share_linked_second(self) -> float:
        return _share(self.n_linked_second, self.n)

    @property
    def share_linked(self) -> float:
        """Share of records correctly linked: (L_1 + second_weight L_2) / n (distance; 100 times
        this is the DLD score of Domingo-Ferrer & Torra), correct assignments / n (assignment),
        true pairs classified as links / n (probabilistic)."""
        if not self.n:
            return 0.0
        return (self.n_linked_first + self.second_weight * self.n_linked_second) / self.n

    linked_first = deprecated_alias("n_linked_first", "linked_first")
    linked_second = deprecated_alias("n_linked_second", "linked_second")
    risk = deprecated_alias("share_linked", "risk")
    scale = deprecated_alias("standardize", "scale")

    @property
    def dld(self) -> float:
        """Deprecated: the DLD score in percent, 100 * :attr:`share_linked`."""
        warn(
            "LinkageResult.dld (a percentage) is replaced by share_linked (a fraction: dld = 100 * share_linked); "
            "the old form will be removed in sdckit 0.3",
            DeprecationWarning,
        )
        return 100.0 * self.share_linked

    def to_dict(self) -> dict:
        out = {
            "measure": "record_linkage_risk",
            "method": self.method,
            "variables": list(self.variables),
            "n": self.n,
            "share_linked": self.share_linked,
            "n_linked_first": self.n_linked_first,
            "share_linked_first": self.share_linked_first,
        }
        if self.method == "distance":
            out.update(
                {
                    "n_linked_second": self.n_linked_second,
                    "share_linked_second": self.share_linked_second,
                    "second_weight": self.second_weight,
                }
            )
        if self.method in ("distance", "assignment"):
            out.update({"standardize": self.standardize, "metric": self.metric})
        if self.em is not None:
            e = self.em
            out.update(
                {
                    k: e[k]
                    for k in (
                        "m",
                        "u",
                        "p",
                        "iterations",
                        "converged",
                        "n_links",
                        "n_possible_links",
                        "n_true_links",
                        "precision",
                        "mu",
                        "lam",
                        "fields",
                    )
                }
            )
            out["patterns"] = [dict(p) for p in e["patterns"]]
            if "levels" in e:
                out["levels"] = {f: list(v) for f, v in e["levels"].items()}
                out["level_weights"] = [list(w) for w in e["level_weights"]]
        return out

    def summary(self) -> Summary:
        rows = [("records", self.n), ("variables", ", ".join(self.variables)), ("method", self.method)]
        sections = []
        if self.method == "distance":
            rows += [
                (
                    "records linked to their true partner (nearest; a tie of t counts 1/t)",
                    round(self.n_linked_first, 4),
                ),
                ("records linked to their true partner (second nearest)", round(self.n_linked_second, 4)),
                ("share linked", self.share_linked),
                ("DLD (%)", round(100 * self.share_linked, 4)),
            ]
        elif self.method == "assignment":
            rows += [
                ("correct one-to-one links", int(self.n_linked_first)),
                ("share linked", f"{self.share_linked:.6g} ({fmt_percent(self.share_linked)})"),
            ]
        else:
            e = self.em
            rows += [
                ("true pairs classified as links", int(self.n_linked_first)),
                ("share linked", f"{self.share_linked:.6g} ({fmt_percent(self.share_linked)})"),
                ("links (all pairs)", e["n_links"]),
                ("possible links", e["n_possible_links"]),
                ("precision of the links", e["precision"]),
                ("EM iterations", e["iterations"]),
            ]
            sections.append(("m and u probabilities", self._mu_table(e)))
        return Summary("Record linkage risk", (("", rows), *sections))

    @staticmethod
    def _mu_table(e: dict) -> dict:
        """m and u per field (agree/disagree), or per field and comparison level with its weight."""
        if "levels" not in e:
            return {"columns": ["field", "m", "u"], "rows": [(f, m, u) for f, m, u in zip(e["fields"], e["m"], e["u"])]}
        rows = [
            (f, lab, m, u, w)
            for f, mj, uj, wj in zip(e["fields"], e["m"], e["u"], e["level_weights"])
            for lab, m, u, w in zip(e["levels"][f], mj, uj, wj)
        ]
        return {"columns": ["field", "level", "m", "u", "weight log2(m/u)"], "rows": rows}

    def _records(self):
        out = {"correct_first": self.correct_first}
        if self.correct_second is not None:
            out["correct_second"] = self.correct_second
        if self.linked_to is not None:
            out["linked_to"] = self.linked_to
        return out

    def plot(self, ax=None):
        """Distance / assignment: shares linked. Probabilistic: pattern weights by class."""
        ax = new_axes(ax)
        if self.em is not None:
            pats = self.em["patterns"]
            cnt = [max(p["n_pairs"], 1) for p in pats]
            col = {"link": "#C44E52", "possible": "#DD8452", "non-link": "#4C72B0"}
            ax.bar(range(len(pats)), np.log10(cnt), color=[col[p["class"]] for p in pats])
            ax.set_xticks(range(len(pats)), [p["pattern"] for p in pats], rotation=90, fontsize="small")
            ax.set_ylabel("log10 pairs")
            ax.set_title("Agreement patterns by class (red: link)")
        else:
            labels = ["nearest", "second"] if self.method == "distance" else ["assigned"]
            vals = [100 * self.share_linked_first] + (
                [100 * self.share_linked_second] if self.method == "distance" else []
            )
            ax.bar(labels, vals, color="#C44E52")
            ax.set_ylabel("records linked to their true partner (%)")
            ax.set_title("Record linkage")
        return ax


@dataclass(frozen=True, eq=False)
class ExternalRiskResult(Result):
    """Mlodak's external risk (Mlodak, Pietrzak & Jozefowski).

    Attributes
    ----------
    variables : tuple of str
        Variables with availability p_j > 0.
    scales, availability : dict
    tolerance, pair_tol : float
    paired : ndarray of bool (n_external,)
        The external record has a released record at distance <= pair_tol (0: all available
        variables match).
    linked_to : ndarray of int (n_external,)
        First-found link (released row position, -1 = none): external records in file order each
        take the first admissible released record (one-to-one unless ``one_to_one=False``).
    correct : ndarray of bool or None
        The first-found link is the true partner (needs ``id``).
    partner_admissible : ndarray of bool or None
        The true partner is admissible (needs ``id``; False when it is not in the released file).
    internal_risk : float or None
        r_int, as given.
    n_released, n : int
        Records of the released and of the external file.
    method : {"exact", "pairwise"}
    """

    variables: tuple = ()
    scales: dict = field(default_factory=dict)
    availability: dict = field(default_factory=dict)
    tolerance: float = 0.05
    pair_tol: float = 0.0
    one_to_one: bool = True
    paired: np.ndarray = field(default=None, repr=False)
    linked_to: np.ndarray = field(default=None, repr=False)
    correct: np.ndarray | None = field(default=None, repr=False)
    partner_admissible: np.ndarray | None = field(default=None, repr=False)
    internal_risk: float | None = None
    n_released: int = 0
    n: int = 0  # external records
    method: str = "exact"
    #: with an out-of-core engine: the counts (``n_paired``, ``n_linked`` and, with ``id``,
    #: ``n_correct_links``, ``n_partner_admissible``) instead of per-record arrays
    counts: dict | None = None

    _headline: ClassVar[tuple] = ("share_paired", "n_paired", "n")

    @property
    def _has_id(self) -> bool:
        return self.correct is not None or (self.counts is not None and "n_correct_links" in self.counts)

    @property
    def n_external(self) -> int:
        return self.n

    @property
    def n_paired(self) -> int:
        """External records paired with some released record."""
        return self.counts["n_paired"] if self.counts is not None else int(self.paired.sum())

    @property
    def share_paired(self) -> float:
        """r_ext: the share of external records paired (the external risk)."""
        return _share(self.n_paired, self.n)

    @property
    def n_linked(self) -> int:
        """External records with a first-found link."""
        return self.counts["n_linked"] if self.counts is not None else int((self.linked_to >= 0).sum())

    @property
    def n_correct_links(self) -> int | None:
        """First-found links to the true partner (needs ``id``)."""
        if self.counts is not None:
            return self.counts.get("n_correct_links")
        return None if self.correct is None else int(self.correct.sum())

    @property
    def share_correct_links(self) -> float | None:
        """The correct-link rate: correct first-found links / external records (needs ``id``)."""
        n_correct = self.n_correct_links
        return None if n_correct is None else _share(n_correct, self.n)

    @property
    def n_partner_admissible(self) -> int | None:
        """External records whose true partner is admissible (needs ``id``)."""
        if self.counts is not None:
            return self.counts.get("n_partner_admissible")
        return None if self.partner_admissible is None else int(self.partner_admissible.sum())

    @property
    def combined_risk(self) -> float | None:
        """r = (r_int + r_ext) / 2 (Mlodak et al., eq. 1) when ``internal_risk`` is given."""
        return None if self.internal_risk is None else (self.internal_risk + self.share_paired) / 2

    risk = deprecated_alias("share_paired", "risk")
    algorithm = deprecated_alias("method", "algorithm")

    def to_dict(self) -> dict:
        out = {
            "measure": "external_risk",
            "method": self.method,
            "variables": list(self.variables),
            "scales": dict(self.scales),
            "availability": dict(self.availability),
            "tolerance": self.tolerance,
            "pair_tol": self.pair_tol,
            "one_to_one": self.one_to_one,
            "n_released": self.n_released,
            "n_external": self.n,
            "n_paired": self.n_paired,
            "share_paired": self.share_paired,
            "n_linked": self.n_linked,
            "internal_risk": self.internal_risk,
            "combined_risk": self.combined_risk,
        }
        if self._has_id:
            out.update(
                {
                    "n_correct_links": self.n_correct_links,
                    "share_correct_links": self.share_correct_links,
                    "n_partner_admissible": self.n_partner_admissible,
                }
            )
        return out

    def summary(self) -> Summary:
        pct = f" ({fmt_percent(self.share_paired)})" if self.n else ""
        rows = [
            ("released records", self.n_released),
            ("external records", self.n),
            ("variables (availability)", ", ".join(f"{v} ({self.availability[v]:g})" for v in self.variables)),
            ("continuous tolerance d*", self.tolerance),
            ("external records paired", self.n_paired),
            ("external risk r_ext", f"{self.share_paired:.6g}{pct}"),
            ("first-found links" + (" (one-to-one)" if self.one_to_one else ""), self.n_linked),
        ]
        if self._has_id:
            rows += [
                ("correct first-found links", self.n_correct_links),
                ("true partner admissible", self.n_partner_admissible),
            ]
        if self.internal_risk is not None:
            rows += [
                ("internal risk r_int", self.internal_risk),
                ("combined risk (r_int + r_ext)/2", self.combined_risk),
            ]
        return Summary("External risk (Mlodak)", (("", rows),))

    def _records(self):
        if self.counts is not None:
            from .._errors import SdcError

            raise SdcError(
                "to_frame: the external risk computed by an out-of-core engine keeps counts only; run it in memory "
                "(engine='polars') for the per-record pairs and links"
            )
        out = {"paired": self.paired, "linked_to": self.linked_to}
        if self.correct is not None:
            out["correct"] = self.correct
            out["partner_admissible"] = self.partner_admissible
        return out

    def plot(self, ax=None):
        """External records paired, linked and correctly linked (percent)."""
        ax = new_axes(ax)
        labels = ["paired", "linked (first found)"]
        vals = [100 * self.share_paired, 100 * _share(self.n_linked, self.n)]
        if self._has_id:
            labels.append("correct link")
            vals.append(100 * self.share_correct_links)
        ax.bar(labels, vals, color="#C44E52")
        ax.set_ylabel("external records (%)")
        ax.set_title("External risk")
        return ax
