"""Result of :func:`sdckit.suda`: SUDA scores, DIS-SUDA, key-variable contributions and the
minimal sample uniques of every record (Elliot et al. 2005; Manning, Haglin & Keane 2008)."""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from .._core.suda import msu_search, suda_q
from .._deprecation import REMOVED_IN, deprecated_alias, renamed_parameters
from .._errors import SdcError, warn
from .._validation import check_choice
from ._base import Result, Summary

__all__ = ["MSU", "SudaResult"]

#: the score variants as the summary names them
_METHOD_TEXT = {
    "elliot": "Elliot (sdcMicro default)",
    "ihsn": "IHSN (sdcMicro original_scores = FALSE)",
    "templ": "Templ: Elliot's / ATT!, summed over the MSUs",
    "templ_product": "Templ: Elliot's / ATT!, multiplied over the MSUs",
}

#: DIS-SUDA intervals of sdcMicro's print method (upper bounds; the first is "== 0")
_DIS_BREAKS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def _percent_alias(new: str, old: str) -> property:
    """A read-only property ``old`` that warns and returns 100 x attribute ``new`` (per key,
    or per key and category), the percentages the old name held."""

    def getter(self):
        warn(
            f"{type(self).__name__}.{old} is now {new} (shares, not percentages); the old form will be "
            f"removed in sdckit {REMOVED_IN}",
            DeprecationWarning,
        )
        value = getattr(self, new)
        return {
            k: ({c: 100.0 * x for c, x in v.items()} if isinstance(v, dict) else 100.0 * v) for k, v in value.items()
        }

    return property(getter, doc=f"Deprecated: 100 x :attr:`{new}`.")


@dataclass(frozen=True)
class MSU:
    """One minimal sample unique of a record: key variables and the record's values on them.

    ``str(msu)`` reads ``"region=North, age=97"``: no other record in the file has these
    values, and no smaller part of them is unique.

    Attributes
    ----------
    variables : tuple of str
    values : tuple
        The record's labels for ``variables``.
    weight : float
        w(size), the MSU's share of the record's SUDA score.
    """

    variables: tuple
    values: tuple
    weight: float

    @property
    def size(self) -> int:
        return len(self.variables)

    def as_dict(self) -> dict:
        return dict(zip(self.variables, self.values))

    def __str__(self) -> str:
        return ", ".join(f"{v}={x}" for v, x in zip(self.variables, self.values))


@dataclass(frozen=True, eq=False)
class SudaResult(Result):
    """SUDA scores, DIS-SUDA and key-variable contributions.

    Attributes
    ----------
    keys : tuple of str
    score : ndarray (n,) of float
        SUDA score: sum of w(|MSU|) over the record's MSUs (their product for
        ``method="templ_product"``; 0 without MSU).
    dis_score : ndarray (n,) of float
        DIS-SUDA, double precision.
    contributions : ndarray (n, m) of float
        Per record and key variable: sum of w(|MSU|) over the record's MSUs that contain the
        variable, divided by the record's score (sdcMicro ``contributionPercent``; a row sums
        to >= 1 because every variable of an MSU gets its full weight; 0 when the score is 0).
    msu_count : ndarray (n,) of int
    min_msu_size : ndarray (n,) of int
        Size of the record's smallest MSU (0 when it has none).
    sample_unique : ndarray (n,) of bool
        The full key occurs once (missing compared as a value).
    share_contributions : dict
        Per variable, its share of the total score: sum_i c_ij score_i / sum_i score_i (the
        shares can add up to more than 1; sdcMicro's ``attribute_contributions`` / 100).
    share_level_contributions : dict
        Per variable, per category: sum over records with that category of c_ij score_i /
        sum_i c_ij score_i (NaN when the variable contributes nothing; sdcMicro's
        ``attribute_level_contributions`` / 100).
    msus_by_size : dict
        Number of MSUs of each size in the file.
    att, max_size : int
        Number of key variables and largest MSU size searched.
    original_scores : bool
        False for the IHSN weights.
    method : str
        The score variant: ``"elliot"``, ``"ihsn"``, ``"templ"`` (Elliot's weights / ATT!,
        summed) or ``"templ_product"`` (their product over the record's MSUs).
    size_weights : dict
        w(s) for s = 1..max_size.
    dis_fraction : float
        Sampling fraction pi used for DIS.
    dis : float
        File-level probability that a unique match is correct (Skinner & Elliot 2002).
    n_sample_uniques, n_patterns_fk2 : int
        n_1 and n_2 of DIS: key patterns of frequency 1 (= records) and 2.
    n_special_uniques, n_with_msu, n_positive_score, n_msus : int
        Special uniques, records with an MSU, records with a positive score, MSUs found.
    """

    keys: tuple = ()
    score: np.ndarray = field(default=None, repr=False)
    dis_score: np.ndarray = field(default=None, repr=False)
    contributions: np.ndarray = field(default=None, repr=False)
    msu_count: np.ndarray = field(default=None, repr=False)
    min_msu_size: np.ndarray = field(default=None, repr=False)
    sample_unique: np.ndarray = field(default=None, repr=False)
    share_contributions: dict = field(default_factory=dict)
    share_level_contributions: dict = field(default_factory=dict, repr=False)
    msus_by_size: dict = field(default_factory=dict)
    n: int = 0
    att: int = 0
    max_size: int = 0
    original_scores: bool = True
    method: str = "elliot"
    size_weights: dict = field(default_factory=dict)
    dis_fraction: float = 0.01
    dis: float = float("nan")
    n_sample_uniques: int = 0
    n_patterns_fk2: int = 0
    # explanation state (record-level: never in to_dict / summary)
    _pattern_ids: np.ndarray = field(default=None, repr=False)
    _patterns: np.ndarray = field(default=None, repr=False)
    _counts: np.ndarray = field(default=None, repr=False)
    _labels: tuple = field(default=(), repr=False)
    _subsets: tuple = field(default=(), repr=False)
    _msu_pattern: np.ndarray | None = field(default=None, repr=False)
    _msu_subset: np.ndarray | None = field(default=None, repr=False)

    _headline = ("n", "n_sample_uniques", "n_special_uniques", "dis")

    # -- derived ---------------------------------------------------------------------------
    @property
    def special_unique(self) -> np.ndarray:
        """Sample uniques with an MSU smaller than the full key."""
        return self.sample_unique & (self.min_msu_size > 0) & (self.min_msu_size < self.att)

    @property
    def n_special_uniques(self) -> int:
        return self._count(self.special_unique)

    @property
    def n_msus(self) -> int:
        return int(sum(self.msus_by_size.values()))

    @property
    def n_with_msu(self) -> int:
        """Records with at least one MSU."""
        return self._count(self.msu_count > 0)

    @property
    def n_positive_score(self) -> int:
        """Records with a SUDA score above 0."""
        return self._count(self.score > 0)

    records_with_msu = deprecated_alias("n_with_msu", "records_with_msu")
    n_pair_keys = deprecated_alias("n_patterns_fk2", "n_pair_keys")
    attribute_contributions = _percent_alias("share_contributions", "attribute_contributions")
    attribute_level_contributions = _percent_alias("share_level_contributions", "attribute_level_contributions")

    @property
    def q(self) -> float:
        """DIS-SUDA exponent Q = 1 + (8 - ATT)/20."""
        return suda_q(self.att)

    def dis_distribution(self) -> dict[str, int]:
        """Records by DIS-SUDA interval, as sdcMicro prints them (``"== 0"``, ``"(0, 0.1]"``, ...)."""
        d = self.dis_score
        out = {"== 0": self._count(d <= 0)}
        lo = 0.0
        for hi in _DIS_BREAKS:
            out[f"({lo:g}, {hi:g}]"] = self._count((d > lo) & (d <= hi))
            lo = hi
        out[f"> {lo:g}"] = self._count(d > lo)
        return out

    # -- explanation -------------------------------------------------------------------------
    def msus(self, i: int) -> list[MSU]:
        """The MSUs of record ``i`` (0-based row position), smallest first.

        Each :class:`MSU` names key variables and the record's values on them: no other record
        has these values, and no smaller part of them is unique. Records that are not sample
        uniques have none. Only MSUs of size <= ``max_size`` are listed (those that count in
        the score). This is record-level output: treat it as confidential.
        """
        i = self._check_index(i)
        p = int(self._pattern_ids[i])
        if self._counts[p] != 1:
            return []
        if self._msu_pattern is not None:
            subsets = self._subsets
            sids = self._msu_subset[self._msu_pattern == p]
        else:
            targets = np.zeros(len(self._counts), dtype=bool)
            targets[p] = True
            found = msu_search(self._patterns, self._counts, self.max_size, targets=targets, collect=True)
            subsets, sids = found.subsets, found.msu_subset
        out = []
        for S in sorted((subsets[s] for s in sids), key=lambda S: (len(S), S)):
            out.append(
                MSU(
                    tuple(self.keys[j] for j in S),
                    tuple(self._handle().label_values(self._labels[j])[int(self._patterns[p, j])] for j in S),
                    float(self.size_weights.get(len(S), 0.0)),
                )
            )
        return out

    def explain(self, i: int) -> str:
        """A sentence or two on why record ``i`` scores what it scores (record-level output)."""
        i = self._check_index(i)
        found = self.msus(i)
        head = f"record {i}: SUDA score {_num(self.score[i])}, DIS-SUDA {_num(self.dis_score[i])}"
        if not self.sample_unique[i]:
            return head + "; not a sample unique (another record has the same key), so no MSU."
        if not found:
            why = (
                f"no MSU of size <= {self.max_size}"
                if self.max_size < self.att
                else "no MSU: it is unique only through a missing value"
            )
            return head + f"; sample unique but {why}."
        parts = [f"{{{m}}} (size {m.size}, weight {_num(m.weight)})" for m in found]
        return head + f"; unique on {len(found)} minimal combination(s): " + "; ".join(parts) + "."

    def _check_index(self, i) -> int:
        if self.records_source is not None:
            raise SdcError(
                "i: record positions are not kept by an out-of-core engine (the result holds one row per key "
                "pattern); look the record up in memory, or use to_frame() / write_records()"
            )
        try:
            k = operator.index(i)
        except TypeError:
            raise SdcError(f"i: got {i!r}; expected a record position (integer in 0..{self.n - 1})") from None
        if not 0 <= k < self.n:
            raise SdcError(f"i: record position {k} is out of range; expected 0..{self.n - 1}")
        return k

    # -- output -------------------------------------------------------------------------------
    def to_dict(self, include_levels: bool = False) -> dict:
        """Aggregates only (JSON-ready). ``include_levels=True`` adds the per-category
        contributions, which name the categories present in the data."""
        pos = self.score > 0
        out = {
            "measure": "suda",
            "keys": list(self.keys),
            "n": self.n,
            "att": self.att,
            "max_size": self.max_size,
            "original_scores": self.original_scores,
            "method": self.method,
            "size_weights": {str(s): w for s, w in self.size_weights.items()},
            "n_sample_uniques": self.n_sample_uniques,
            "n_special_uniques": self.n_special_uniques,
            "n_with_msu": self.n_with_msu,
            "n_positive_score": self.n_positive_score,
            "n_msus": self.n_msus,
            "msus_by_size": {str(s): c for s, c in self.msus_by_size.items()},
            "sum_score": float(self.score.sum()),
            "max_score": float(self.score.max()) if self.n else 0.0,
            "mean_score_gt0": float(self.score[pos].mean()) if pos.any() else None,
            "dis_fraction": self.dis_fraction,
            "n_patterns_fk2": self.n_patterns_fk2,
            "dis": _json_float(self.dis),
            "q": self.q,
            "max_dis_score": float(self.dis_score.max()) if self.n else 0.0,
            "mean_dis_score": self._total(self.dis_score) / self.n if self.n else 0.0,
            "dis_distribution": self.dis_distribution(),
            "share_contributions": {k: _json_float(v) for k, v in self.share_contributions.items()},
        }
        if include_levels:
            out["share_level_contributions"] = {
                var: {str(lab): _json_float(v) for lab, v in levels.items()}
                for var, levels in self.share_level_contributions.items()
            }
        return out

    def summary(self) -> Summary:
        conv = _METHOD_TEXT.get(self.method, self.method)
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("largest MSU size searched", f"{self.max_size} of {self.att}"),
            ("score weights", conv),
            ("sample uniques", self.n_sample_uniques),
            ("special uniques (an MSU smaller than the full key)", self.n_special_uniques),
            ("records with an MSU", self.n_with_msu),
            ("MSUs found", self.n_msus),
            ("DIS sampling fraction", self.dis_fraction),
            ("DIS: P(correct match | unique match)", self.dis),
            ("max DIS-SUDA", float(self.dis_score.max()) if self.n else 0.0),
        ]
        sizes = {
            "columns": ["MSU size", "MSUs", "weight"],
            "rows": [(s, c, self.size_weights.get(s, 0.0)) for s, c in self.msus_by_size.items()],
        }
        dist = {"columns": ["DIS-SUDA", "records"], "rows": list(self.dis_distribution().items())}
        contrib = {
            "columns": ["variable", "contribution (%)"],
            "rows": [(k, 100.0 * v) for k, v in self.share_contributions.items()],
        }
        notes = [
            "a missing value never forms part of an MSU",
            "variable contributions can add up to more than 100 %: each variable of an MSU gets its full weight",
        ]
        return Summary(
            "SUDA (special uniques) and DIS-SUDA",
            (
                ("", rows),
                ("MSUs by size", sizes),
                ("DIS-SUDA distribution", dist),
                ("Contribution of the key variables", contrib),
            ),
            tuple(notes),
        )

    def _records(self):
        out = {
            "score": self.score,
            "dis_score": self.dis_score,
            "msu_count": self.msu_count,
            "min_msu_size": self.min_msu_size,
            "special_unique": self.special_unique,
        }
        for j, k in enumerate(self.keys):
            out[f"{k}_contribution"] = self.contributions[:, j]
        return out

    def to_frame(self, msus: bool = False):
        """Per-record values in the caller's frame type (input row order; confidential).

        Columns ``score``, ``dis_score``, ``msu_count``, ``min_msu_size``, ``special_unique``
        and ``<key>_contribution``; ``msus=True`` adds ``msus``, the record's MSUs as text
        (``"a=1; b=2, c=3"``: MSUs separated by ``"; "``).
        """
        if not msus:
            return super().to_frame()
        if self.records_source is not None:
            raise SdcError("msus: the MSU text is not written by an out-of-core engine; use to_frame() without it")

        mp, ms, subsets = self._msu_pattern, self._msu_subset, self._subsets
        if mp is None:  # not kept: one search for every record
            found = msu_search(self._patterns, self._counts, self.max_size, collect=True)
            mp, ms, subsets = found.msu_pattern, found.msu_subset, found.subsets
        cols = self._records()
        cols["msus"] = self._handle().msu_text(
            self.keys, self._labels, self._patterns, self._pattern_ids, mp, ms, subsets, len(self._counts)
        )
        return self._native(cols)

    @renamed_parameters(kind="measure")
    def plot(self, ax=None, measure: str = "both"):
        """DIS-SUDA distribution and/or variable contributions.

        Parameters
        ----------
        ax : matplotlib Axes, or a pair of them for ``measure="both"``; created when omitted
        measure : {"both", "dis", "contributions"}
            ``"dis"``: histogram of DIS-SUDA over the records with a positive score (the others
            are 0); ``"contributions"``: bar chart of the variable contributions (%).
            (``kind=`` is its old name.)

        Returns
        -------
        the Axes (a list of two for ``measure="both"``)
        """
        check_choice(measure, "measure", ("both", "dis", "contributions"))
        if measure == "both":
            if ax is None:
                plt = _pyplot()
                _, axes = plt.subplots(1, 2, figsize=(11, 4))
            else:
                axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else None
                if axes is None or len(axes) != 2:
                    raise SdcError("ax: measure='both' draws two panels; expected a pair of Axes or None")
            self._plot_dis(axes[0])
            self._plot_contributions(axes[1])
            return list(axes)
        if ax is None:
            _, ax = _pyplot().subplots(figsize=(6, 4))
        (self._plot_dis if measure == "dis" else self._plot_contributions)(ax)
        return ax

    def _plot_dis(self, ax):
        vals = self.dis_score[self.score > 0]
        ax.hist(vals, bins=min(40, max(5, int(np.sqrt(max(vals.size, 1))))), color="#4C72B0")
        ax.set_xlabel("DIS-SUDA (records with an MSU)")
        ax.set_ylabel("records")
        ax.set_title(f"DIS-SUDA distribution ({vals.size:,} of {self.n:,} records > 0)")

    def _plot_contributions(self, ax):
        names = list(self.share_contributions)
        vals = [0.0 if math.isnan(v) else 100.0 * v for v in self.share_contributions.values()]
        ax.bar(names, vals, color="#C44E52")
        ax.set_ylabel("contribution to the total SUDA score (%)")
        ax.set_title("Key-variable contributions")
        ax.tick_params(axis="x", labelrotation=45)


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SdcError("plot: matplotlib is not installed; install sdckit[plot]") from exc
    return plt


def _num(v) -> str:
    v = float(v)
    return f"{int(v)}" if v.is_integer() else f"{v:.6g}"


def _json_float(v):
    v = float(v)
    return None if math.isnan(v) else v
