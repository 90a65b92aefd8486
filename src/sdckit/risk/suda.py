"""SUDA: special uniques, minimal sample uniques, SUDA scores and DIS-SUDA (spec E)."""

from __future__ import annotations

import math
import operator
import warnings
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .._core.suda import dis_probability, dis_suda, msu_search, size_weights, suda_q
from .._engine import gather, record_patterns
from .._errors import SdcError, SdcWarning
from .._prepare import prepare
from ..results._base import Result, Summary

__all__ = ["MSU", "SudaResult", "suda"]

#: DIS-SUDA intervals of sdcMicro's print method (upper bounds; the first is "== 0")
_DIS_BREAKS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
_FRACTION_WARN = 0.10  # warn when the weights imply a fraction that differs by more than 10 %
_KEEP_DEFAULT = 1 << 23  # MSUs kept for explanation by default (8 bytes each)


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
        w(size), the MSU's share of the record's SUDA score (spec E.2).
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
    """SUDA scores, DIS-SUDA and key-variable contributions (spec E).

    Attributes
    ----------
    keys : tuple of str
    score : ndarray (n,) of float
        SUDA score: sum of w(|MSU|) over the record's MSUs (0 without MSU).
    dis_score : ndarray (n,) of float
        DIS-SUDA (spec E.6), double precision.
    contributions : ndarray (n, m) of float
        Per record and key variable: sum of w(|MSU|) over the record's MSUs that contain the
        variable, divided by the record's score (sdcMicro ``contributionPercent``; a row sums
        to >= 1 because every variable of an MSU gets its full weight; 0 when the score is 0).
    msu_count : ndarray (n,) of int
    min_msu_size : ndarray (n,) of int
        Size of the record's smallest MSU (0 when it has none).
    sample_unique : ndarray (n,) of bool
        The full key occurs once (missing compared as a value).
    attribute_contributions : dict
        Per variable, 100 * sum_i c_ij score_i / sum_i score_i (can add up to more than 100).
    attribute_level_contributions : dict
        Per variable, per category: 100 * sum over records with that category of
        c_ij score_i / sum_i c_ij score_i (NaN when the variable contributes nothing).
    msus_by_size : dict
        Number of MSUs of each size in the file.
    att, max_size : int
        Number of key variables and largest MSU size searched.
    original_scores : bool
    size_weights : dict
        w(s) for s = 1..max_size.
    dis_fraction : float
        Sampling fraction pi used for DIS.
    dis : float
        File-level probability that a unique match is correct (spec E.5).
    n_sample_uniques, n_pair_keys : int
        n_1 and n_2 of spec E.5 (keys of frequency 1 and 2).
    """

    keys: tuple = ()
    score: np.ndarray = field(default=None, repr=False)
    dis_score: np.ndarray = field(default=None, repr=False)
    contributions: np.ndarray = field(default=None, repr=False)
    msu_count: np.ndarray = field(default=None, repr=False)
    min_msu_size: np.ndarray = field(default=None, repr=False)
    sample_unique: np.ndarray = field(default=None, repr=False)
    attribute_contributions: dict = field(default_factory=dict)
    attribute_level_contributions: dict = field(default_factory=dict, repr=False)
    msus_by_size: dict = field(default_factory=dict)
    n: int = 0
    att: int = 0
    max_size: int = 0
    original_scores: bool = True
    size_weights: dict = field(default_factory=dict)
    dis_fraction: float = 0.01
    dis: float = float("nan")
    n_sample_uniques: int = 0
    n_pair_keys: int = 0
    # explanation state (record-level: never in to_dict / summary)
    _pattern_ids: np.ndarray = field(default=None, repr=False)
    _patterns: np.ndarray = field(default=None, repr=False)
    _counts: np.ndarray = field(default=None, repr=False)
    _labels: tuple = field(default=(), repr=False)
    _subsets: tuple = field(default=(), repr=False)
    _msu_pattern: np.ndarray | None = field(default=None, repr=False)
    _msu_subset: np.ndarray | None = field(default=None, repr=False)

    # -- derived ---------------------------------------------------------------------------
    @property
    def special_unique(self) -> np.ndarray:
        """Sample uniques with an MSU smaller than the full key (spec E.1)."""
        return self.sample_unique & (self.min_msu_size > 0) & (self.min_msu_size < self.att)

    @property
    def n_special_uniques(self) -> int:
        return int(np.count_nonzero(self.special_unique))

    @property
    def n_msus(self) -> int:
        return int(sum(self.msus_by_size.values()))

    @property
    def records_with_msu(self) -> int:
        return int(np.count_nonzero(self.msu_count))

    @property
    def q(self) -> float:
        """DIS-SUDA exponent Q = 1 + (8 - ATT)/20."""
        return suda_q(self.att)

    def dis_distribution(self) -> dict[str, int]:
        """Records by DIS-SUDA interval, as sdcMicro prints them (``"== 0"``, ``"(0, 0.1]"``, ...)."""
        d = self.dis_score
        out = {"== 0": int(np.count_nonzero(d <= 0))}
        lo = 0.0
        for hi in _DIS_BREAKS:
            out[f"({lo:g}, {hi:g}]"] = int(np.count_nonzero((d > lo) & (d <= hi)))
            lo = hi
        out[f"> {lo:g}"] = int(np.count_nonzero(d > lo))
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
            out.append(MSU(tuple(self.keys[j] for j in S),
                           tuple(self._labels[j][int(self._patterns[p, j])] for j in S),
                           float(self.size_weights.get(len(S), 0.0))))
        return out

    def explain(self, i: int) -> str:
        """A sentence or two on why record ``i`` scores what it scores (record-level output)."""
        i = self._check_index(i)
        found = self.msus(i)
        head = f"record {i}: SUDA score {_num(self.score[i])}, DIS-SUDA {_num(self.dis_score[i])}"
        if not self.sample_unique[i]:
            return head + "; not a sample unique (another record has the same key), so no MSU."
        if not found:
            why = (f"no MSU of size <= {self.max_size}" if self.max_size < self.att
                   else "no MSU: it is unique only through a missing value")
            return head + f"; sample unique but {why}."
        parts = [f"{{{m}}} (size {m.size}, weight {_num(m.weight)})" for m in found]
        return head + f"; unique on {len(found)} minimal combination(s): " + "; ".join(parts) + "."

    def _check_index(self, i) -> int:
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
            "size_weights": {str(s): w for s, w in self.size_weights.items()},
            "sample_uniques": self.n_sample_uniques,
            "special_uniques": self.n_special_uniques,
            "records_with_msu": self.records_with_msu,
            "records_score_gt0": int(np.count_nonzero(pos)),
            "msus": self.n_msus,
            "msus_by_size": {str(s): c for s, c in self.msus_by_size.items()},
            "sum_score": float(self.score.sum()),
            "max_score": float(self.score.max()) if self.n else 0.0,
            "mean_score_gt0": float(self.score[pos].mean()) if pos.any() else None,
            "dis_fraction": self.dis_fraction,
            "pair_keys": self.n_pair_keys,
            "dis": _json_float(self.dis),
            "q": self.q,
            "max_dis_score": float(self.dis_score.max()) if self.n else 0.0,
            "mean_dis_score": float(self.dis_score.mean()) if self.n else 0.0,
            "dis_distribution": self.dis_distribution(),
            "attribute_contributions": {k: _json_float(v) for k, v in self.attribute_contributions.items()},
        }
        if include_levels:
            out["attribute_level_contributions"] = {
                var: {str(lab): _json_float(v) for lab, v in levels.items()}
                for var, levels in self.attribute_level_contributions.items()}
        return out

    def summary(self) -> Summary:
        conv = "Elliot (sdcMicro default)" if self.original_scores else "IHSN (sdcMicro original_scores = FALSE)"
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("largest MSU size searched", f"{self.max_size} of {self.att}"),
            ("score weights", conv),
            ("sample uniques", self.n_sample_uniques),
            ("special uniques (an MSU smaller than the full key)", self.n_special_uniques),
            ("records with an MSU", self.records_with_msu),
            ("MSUs found", self.n_msus),
            ("DIS sampling fraction", self.dis_fraction),
            ("DIS: P(correct match | unique match)", self.dis),
            ("max DIS-SUDA", float(self.dis_score.max()) if self.n else 0.0),
        ]
        sizes = {"columns": ["MSU size", "MSUs", "weight"],
                 "rows": [(s, c, self.size_weights.get(s, 0.0)) for s, c in self.msus_by_size.items()]}
        dist = {"columns": ["DIS-SUDA", "records"], "rows": list(self.dis_distribution().items())}
        contrib = {"columns": ["variable", "contribution (%)"],
                   "rows": [(k, v) for k, v in self.attribute_contributions.items()]}
        notes = ["a missing value never forms part of an MSU (spec E.1)",
                 "variable contributions can add up to more than 100 %: each variable of an MSU gets its full weight"]
        return Summary("SUDA (special uniques) and DIS-SUDA",
                       (("", rows), ("MSUs by size", sizes), ("DIS-SUDA distribution", dist),
                        ("Contribution of the key variables", contrib)), tuple(notes))

    def _records(self):
        out = {"score": self.score, "dis_score": self.dis_score, "msu_count": self.msu_count,
               "min_msu_size": self.min_msu_size, "special_unique": self.special_unique}
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
        from .._frame import to_native

        cols = self._records()
        cols["msus"] = self._msu_text()
        return to_native(cols, self.backend)

    def _msu_text(self) -> pl.Series:
        mp, ms, subsets = self._msu_pattern, self._msu_subset, self._subsets
        if mp is None:  # not kept: one search for every record
            found = msu_search(self._patterns, self._counts, self.max_size, collect=True)
            mp, ms, subsets = found.msu_pattern, found.msu_subset, found.subsets
        if mp.size == 0:
            return pl.Series("msus", [""] * self.n, dtype=pl.String)
        labels = [lab.cast(pl.String) for lab in self._labels]
        parts = []
        bounds = np.flatnonzero(np.diff(ms)) + 1  # MSUs come in blocks of one variable set
        for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, ms.size]):
            S = subsets[int(ms[lo])]
            g = mp[lo:hi]
            exprs = []
            for t, j in enumerate(S):
                if t:
                    exprs.append(pl.lit(", "))
                exprs += [pl.lit(f"{self.keys[j]}="), pl.lit(labels[j].gather(self._patterns[g, j]))]
            parts.append(pl.select(pl.lit(pl.Series("p", g)).alias("p"), pl.concat_str(exprs).alias("t")))
        table = pl.concat(parts).group_by("p", maintain_order=True).agg(pl.col("t").str.join("; "))
        text = np.full(len(self._counts), "", dtype=object)
        text[table["p"].to_numpy()] = table["t"].to_numpy()
        return pl.Series("msus", text[self._pattern_ids], dtype=pl.String)

    def plot(self, ax=None, kind: str = "both"):
        """DIS-SUDA distribution and/or variable contributions.

        Parameters
        ----------
        ax : matplotlib Axes, or a pair of them for ``kind="both"``; created when omitted
        kind : {"both", "dis", "contributions"}
            ``"dis"``: histogram of DIS-SUDA over the records with a positive score (the others
            are 0); ``"contributions"``: bar chart of the variable contributions (%).

        Returns
        -------
        the Axes (a list of two for ``kind="both"``)
        """
        if kind not in ("both", "dis", "contributions"):
            raise SdcError(f"kind: got {kind!r}; expected 'both', 'dis' or 'contributions'")
        if kind == "both":
            if ax is None:
                plt = _pyplot()
                _, axes = plt.subplots(1, 2, figsize=(11, 4))
            else:
                axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else None
                if axes is None or len(axes) != 2:
                    raise SdcError("ax: kind='both' draws two panels; expected a pair of Axes or None")
            self._plot_dis(axes[0])
            self._plot_contributions(axes[1])
            return list(axes)
        if ax is None:
            _, ax = _pyplot().subplots(figsize=(6, 4))
        (self._plot_dis if kind == "dis" else self._plot_contributions)(ax)
        return ax

    def _plot_dis(self, ax):
        vals = self.dis_score[self.score > 0]
        ax.hist(vals, bins=min(40, max(5, int(np.sqrt(max(vals.size, 1))))), color="#4C72B0")
        ax.set_xlabel("DIS-SUDA (records with an MSU)")
        ax.set_ylabel("records")
        ax.set_title(f"DIS-SUDA distribution ({vals.size:,} of {self.n:,} records > 0)")

    def _plot_contributions(self, ax):
        names = list(self.attribute_contributions)
        vals = [0.0 if math.isnan(v) else v for v in self.attribute_contributions.values()]
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


# ----------------------------------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------------------------------
def _check_max_size(max_size, m: int) -> int:
    if max_size is None:
        return m
    if isinstance(max_size, (bool, np.bool_)):
        raise SdcError(f"max_size: got {max_size!r}; expected an integer from 1 to {m} (the number of keys)")
    try:
        k = operator.index(max_size)
    except TypeError:
        if isinstance(max_size, (float, np.floating)) and float(max_size).is_integer():
            k = int(max_size)
        else:
            raise SdcError(f"max_size: got {max_size!r}; expected an integer from 1 to {m} (the number of keys)") from None
    if not 1 <= k <= m:
        raise SdcError(f"max_size: got {k}; expected an integer from 1 to {m} (the number of keys)")
    return k


def _check_fraction(value) -> float | str:
    if isinstance(value, str):
        if value == "weights":
            return value
        raise SdcError(f"dis_fraction: got {value!r}; expected a number in (0, 1] or 'weights'")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise SdcError(f"dis_fraction: got {value!r}; expected a number in (0, 1] or 'weights'")
    v = float(value)
    if not (math.isfinite(v) and 0 < v <= 1):
        raise SdcError(f"dis_fraction: got {value!r}; expected a sampling fraction in (0, 1] "
                       "(sdcMicro silently replaces 0 by 0.5)")
    return v


def _check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise SdcError(f"{name}: got {value!r}; expected True or False")
    return bool(value)


# ----------------------------------------------------------------------------------------------
# the measure
# ----------------------------------------------------------------------------------------------
def suda(data, keys, max_size: int | None = None, dis_fraction: float | str = 0.01, original_scores: bool = True,
         *, missing=None, weight: str | None = None, allow_degenerate_keys: bool = False,
         keep_msus: bool | None = None) -> SudaResult:
    r"""SUDA scores, DIS-SUDA and key-variable contributions from minimal sample uniques.

    A *minimal sample unique* (MSU) of record i is a set of its key values that no other record
    shares while every smaller part of it is shared (spec E.1). Record i's SUDA score sums a
    weight over its MSUs, larger for smaller MSUs (spec E.2, ATT = number of keys, M =
    ``max_size``):

    .. math::

        \mathrm{SUDA}_i = \sum_{S \in \mathrm{MSU}(i)} w(|S|), \qquad
        w(s) = \prod_{k=s}^{\min(M, ATT-1)} (ATT - k) \;\; \text{(Elliot)}, \qquad
        w(s) = \frac{2^{ATT-s} - 1}{\binom{ATT}{s}} \;\; \text{(IHSN)}

    and DIS-SUDA (spec E.6) spreads the expected E = 2 n_2 (1 - pi)/pi false population
    candidates of the sample uniques over the records inversely to SUDA^Q, Q = 1 + (8-ATT)/20:
    DIS_i = 1 / (1 + E SUDA_i^{-Q} / \sum_j SUDA_j^{-Q}).

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables (labels, never coerced to numbers).
    max_size : int, optional
        Largest MSU size searched and scored (default: all keys, as sdcMicro does). Elliot's
        SUDA program uses ``max_size = len(keys) - 1`` (full-size MSUs then score 0; spec K.9).
    dis_fraction : float in (0, 1] or ``"weights"``, default 0.01
        Sampling fraction pi for DIS (sdcMicro ``DisFraction``). ``"weights"`` uses
        n / sum(weight) (needs ``weight``).
    original_scores : bool, default True
        Elliot's weights (sdcMicro's default); False gives the IHSN weights of sdcMicro before
        5.0.3, with which S002's printed DIS-SUDA column was produced (spec I).
    missing : value or list of values, optional
        Extra values to treat as missing (e.g. ``-999``). A missing value never forms part of
        an MSU; for the full-key duplicate check it equals another missing value (spec E.1).
    weight : str, optional
        Sampling weight column. Not used by the scores; gives ``dis_fraction="weights"``, and a
        warning when the weights imply a fraction far from ``dis_fraction`` (spec K.11).
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category (they never
        form an MSU but count in ATT).
    keep_msus : bool, optional
        Keep every MSU (8 bytes each) so that :meth:`SudaResult.msus` answers at once
        (True), or recompute a record's MSUs on request (False). Default: keep them when
        there are at most 2^23 (64 MiB), recompute otherwise.

    Returns
    -------
    SudaResult
        ``score``, ``dis_score``, ``contributions`` per record, ``attribute_contributions``,
        ``attribute_level_contributions``, ``msus(i)`` / ``explain(i)``.

    Notes
    -----
    Exact search without enumerating all 2^m variable subsets per record: a level-wise search
    with SUDA2's pruning on the distinct key patterns (``sdckit._core.suda``). Deliberate
    differences from sdcMicro's ``suda2``: DIS-SUDA in double precision (sdcMicro: float32,
    about 1e-7 relative) and never NaN (sdcMicro's hash miscount of sample uniques); labels
    are not truncated to integers; ATT is the number of keys given (sdcMicro pads one or two
    keys with constant dummy columns, ATT = 3); ``dis_fraction = 0`` is an error (sdcMicro
    uses 0.5).

    References
    ----------
    Spec ALGORITHMS.md E, I, K.9-K.11. Elliot, Manning, Mayes, Gurd & Bane (2005) SUDA: a
    program for detecting special uniques; Manning, Haglin & Keane (2008) A recursive search
    algorithm for statistical disclosure assessment, Data Min Knowl Disc 16:165-196; Skinner &
    Elliot (2002) A measure of disclosure risk for microdata, JRSS B 64:855-867; sdcMicro
    ``suda2``.
    """
    frac = _check_fraction(dis_fraction)
    orig = _check_bool(original_scores, "original_scores")
    keep = _KEEP_DEFAULT if keep_msus is None else _check_bool(keep_msus, "keep_msus")
    if frac == "weights" and weight is None:
        raise SdcError("dis_fraction: 'weights' needs a weight column; pass weight= or a number in (0, 1]")
    prep = prepare(data, keys, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys)
    enc = prep.keys
    n, m = enc.codes.shape
    msize = _check_max_size(max_size, m)
    if prep.weights is not None:
        implied = n / float(prep.weights.sum())
        if frac == "weights":
            frac = min(implied, 1.0)
        elif abs(implied - frac) > _FRACTION_WARN * frac:
            warnings.warn(f"dis_fraction: the weights imply a sampling fraction of {implied:.4g} (n / sum of weights) "
                          f"but {frac:g} is used; pass dis_fraction='weights' to use it (spec K.11)",
                          SdcWarning, stacklevel=2)
    return _suda_from_prepared(prep, msize, frac, orig, keep)


def _suda_from_prepared(prep, msize: int, frac: float, orig: bool, keep: bool | int) -> SudaResult:
    enc = prep.keys
    codes = enc.codes
    n, m = codes.shape
    ids, patterns, counts, _ = record_patterns(codes, None, enc.cardinalities)
    w = size_weights(m, msize, orig)
    found = msu_search(patterns, counts, msize, w, collect=keep)
    n1 = int(np.count_nonzero(counts == 1))
    n2 = int(np.count_nonzero(counts == 2))

    # per pattern -> per record (patterns with count >= 2 have score 0)
    score_p = found.score
    with np.errstate(invalid="ignore", divide="ignore"):
        share_p = np.where(score_p[:, None] > 0, found.contributions / score_p[:, None], 0.0)
    dis_p = dis_suda(score_p, n2, frac, m)  # only count-1 patterns score, one record each
    per_record = gather(ids, score_p, dis_p, found.msu_count, found.min_size.astype(np.int64), counts == 1,
                        *[np.ascontiguousarray(share_p[:, j]) for j in range(m)])
    score, dis_score, msu_count, min_size, uniq = per_record[:5]
    contributions = np.column_stack(per_record[5:]) if m else np.zeros((n, 0))

    # contributions to the total score (sdcMicro attribute_contributions and level contributions)
    raw = found.contributions  # = share * score, per pattern
    total = float(score_p.sum())
    attr = {}
    levels = {}
    for j, name in enumerate(enc.names):
        col_total = float(raw[:, j].sum())
        attr[name] = 100.0 * col_total / total if total > 0 else float("nan")
        obs = patterns[:, j] >= 0
        sums = np.bincount(patterns[obs, j], weights=raw[obs, j], minlength=len(enc.labels[j]))
        observed = enc.observed[j] if enc.observed and enc.observed[j] is not None else range(len(enc.labels[j]))
        labels = enc.labels[j].to_list()
        levels[name] = {labels[c]: (100.0 * float(sums[c]) / col_total if col_total > 0 else float("nan"))
                        for c in observed}

    return SudaResult(
        keys=enc.names,
        score=score,
        dis_score=dis_score,
        contributions=contributions,
        msu_count=msu_count.astype(np.int64, copy=False),
        min_msu_size=min_size.astype(np.int64, copy=False),
        sample_unique=uniq.astype(bool, copy=False),
        attribute_contributions=attr,
        attribute_level_contributions=levels,
        msus_by_size={s: int(found.by_size[s]) for s in range(1, msize + 1)},
        n=n,
        att=m,
        max_size=msize,
        original_scores=orig,
        size_weights={s: float(w[s]) for s in range(1, msize + 1)},
        dis_fraction=float(frac),
        dis=dis_probability(n1, n2, frac),
        n_sample_uniques=n1,
        n_pair_keys=n2,
        _pattern_ids=ids,
        _patterns=patterns,
        _counts=counts,
        _labels=tuple(enc.labels),
        _subsets=found.subsets,
        _msu_pattern=found.msu_pattern,
        _msu_subset=found.msu_subset,
        backend=prep.table.backend,
    )
