"""Sample and population key frequencies and k-anonymity."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._core.frequencies import pattern_frequencies
from .._core.grouping import group_rows
from .._deprecation import deprecated_alias, renamed_parameters
from .._errors import SdcError
from .._prepare import Prepared, prepare
from .._progress import step
from .._validation import check_alpha, check_choice, check_k_list
from ..engines import get_engine
from ..results._base import Result, Summary, new_axes
from ..scenario import accepts_scenario

__all__ = ["FrequencyResult", "KAnonymityResult", "frequencies", "k_anonymity"]

NA_RULES = ("sdcmicro", "own_category")


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


@accepts_scenario
@renamed_parameters(positional=("weight", "alpha"))
def frequencies(
    data,
    keys,
    *,
    weight=None,
    alpha: float = 1.0,
    strata=None,
    missing=None,
    na_rule: str = "sdcmicro",
    allow_degenerate_keys: bool = False,
    zero_weight: str = "error",
    engine=None,
) -> FrequencyResult:
    r"""Sample frequency f_k and weighted population frequency \hat F_k of every record's key.

    .. math:: f_k = \#\{i : k(i) = k\}, \qquad \hat F_k = \sum_{i: k(i) = k} w_i

    Missing key values follow sdcMicro's ``freqCalc`` rule: a missing value matches every
    category; contributions that involve an incomplete pattern are scaled by ``alpha`` (a
    record's own pattern and, for an incomplete record, the complete records it matches always
    count fully); a record missing on every key gets f = n (within its stratum). Computed by
    joins over the missing-value masks present, never by comparing all pairs of records.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables. Labels are never coerced to numbers.
    weight : str, optional
        Sampling weight column. Without it the file is treated as a census: F_k = f_k.
    alpha : float in [0, 1], default 1
        Weight of matches through missing values (sdcMicro ``alpha``).
    strata : str or list of str, optional
        Stratification variables: f_k and F_k are counted within each stratum, as if the
        function ran on each stratum separately. Strata must not be missing.
    missing : value or list of values, optional
        Values to treat as missing in addition to null / NaN (e.g. ``-999``).
    na_rule : {"sdcmicro", "own_category"}
        ``"own_category"``: a missing value is one more category.
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category.
    zero_weight : {"error", "drop"}, default "error"
        A record with weight 0 represents nobody: an error by default; ``"drop"`` keeps it in
        f_k and leaves it out of F_k.
    engine : {"polars", "duckdb", "spark"} or engine, optional
        Where the record-level work runs. Default: from ``data`` (a DuckDB relation runs in
        DuckDB, a Spark DataFrame in Spark), else in memory (Polars). With DuckDB or Spark
        ``data`` may also be a Parquet or CSV path; only the distinct key patterns come back
        to Python, and per-record values stay in the engine (``write_records``).
    scenario : Scenario, optional
        The roles (keys, weight, strata, missing) given once.

    Returns
    -------
    FrequencyResult

    References
    ----------
    Hundepool, A. et al. (2012), *Statistical Disclosure Control*, Wiley, section 3.3;
    Templ, M., Kowarik, A. & Meindl, B. (2015), Statistical disclosure control for micro-data
    using the R package sdcMicro, *Journal of Statistical Software* 67(4) (``freqCalc``).
    """
    a = check_alpha(alpha)
    check_choice(na_rule, "na_rule", NA_RULES)
    prep = prepare(
        data,
        keys,
        weight=weight,
        strata=strata,
        missing=missing,
        allow_degenerate_keys=allow_degenerate_keys,
        zero_weight=zero_weight,
        engine=engine,
    )
    return frequency_result(prep, pattern_frequencies_of(prep, a, na_rule), a, na_rule)


@dataclass(frozen=True)
class PatternFrequencies:
    """Frequencies on the small pattern table, before mapping back to records."""

    ids: np.ndarray  # pattern of each record
    patterns: np.ndarray  # (P, m [+ strata]) codes, -1 = missing
    counts: np.ndarray  # records per pattern
    wsum: np.ndarray  # weight sum per pattern
    fp: np.ndarray  # f of each pattern
    Fp: np.ndarray  # F of each pattern
    m: int  # number of key variables (the first m columns of patterns)


def pattern_frequencies_of(prep: Prepared, alpha: float, na_rule: str, engine=None) -> PatternFrequencies:
    """The GROUP BY of the key patterns (through the engine) and the missing-value rule on the
    pattern table (``_core``), within strata when there are any."""
    step("counting key patterns and applying the missing-value rule")
    eng = get_engine(engine)
    codes, cards = prep.keys.codes, prep.keys.cardinalities
    m = codes.shape[1]
    if prep.strata is not None:
        codes = np.asfortranarray(np.concatenate([codes, prep.strata.codes], axis=1))
        cards = tuple(cards) + tuple(prep.strata.cardinalities)
    ids, patterns, counts, wsum = eng.patterns(codes, prep.weights, cards, multiplicity=prep.counts)
    fp, Fp = pattern_frequencies(patterns, counts, wsum, alpha, na_rule)
    if prep.strata is not None and na_rule == "sdcmicro":
        fp, Fp = _strata_correction(patterns, counts, wsum, fp, Fp, m, alpha)
    return PatternFrequencies(ids, patterns, counts, wsum, fp, Fp, m)


def _strata_correction(patterns, counts, wsum, fp, Fp, m, alpha):
    """Turn frequencies over (keys, strata) into sdcMicro frequencies within each stratum.

    With the strata appended as complete key columns the missing-value rule holds within
    strata except for records missing every key variable: in a stratum they must get f = n_h
    (all records of the stratum), and for m >= 2 complete patterns must not count them.
    """
    keyp = patterns[:, :m]
    allmiss = (keyp < 0).all(axis=1)
    if not allmiss.any():
        return fp, Fp
    stratum, n_st = group_rows(patterns[:, m:].astype(np.int64))
    a_c = np.bincount(stratum[allmiss], weights=counts[allmiss], minlength=n_st)
    a_w = np.bincount(stratum[allmiss], weights=wsum[allmiss], minlength=n_st)
    fp, Fp = fp.copy(), Fp.copy()
    if m >= 2:
        complete = (keyp >= 0).all(axis=1)
        fp[complete] -= alpha * a_c[stratum[complete]]
        Fp[complete] -= alpha * a_w[stratum[complete]]
        near = np.round(fp)
        snap = complete & (np.abs(fp - near) <= 1e-9 * np.abs(near))
        fp[snap] = near[snap]
    fp[allmiss] = np.bincount(stratum, weights=counts, minlength=n_st)[stratum[allmiss]]
    Fp[allmiss] = np.bincount(stratum, weights=wsum, minlength=n_st)[stratum[allmiss]]
    return fp, Fp


def frequency_result(
    prep: Prepared, pf: PatternFrequencies, alpha: float, na_rule: str, fk=None, Fk=None
) -> FrequencyResult:
    """The :class:`FrequencyResult` of pattern frequencies (``fk``/``Fk`` mapped back unless given)."""
    step("mapping frequencies back to the records")
    if fk is None:
        fk, Fk = get_engine().gather(pf.ids, pf.fp, pf.Fp)
    keyp = pf.patterns[:, : pf.m]
    if keyp.size and keyp.min() < 0:
        pmiss = keyp < 0
        n_with_missing = int(pf.counts[pmiss.any(axis=1)].sum())
        per_key = {k: int(pf.counts[pmiss[:, j]].sum()) for j, k in enumerate(prep.keys.names)}
    else:  # the common case: nothing missing, no pass over the pattern table
        n_with_missing, per_key = 0, dict.fromkeys(prep.keys.names, 0)
    return FrequencyResult(
        keys=prep.keys.names,
        strata=prep.roles.strata,
        fk=fk,
        Fk=Fk,
        pattern_ids=pf.ids,
        alpha=alpha,
        weighted=prep.weights is not None,
        na_rule=na_rule,
        n=prep.n,
        n_patterns=len(pf.counts),
        n_with_missing=n_with_missing,
        n_missing_per_key=per_key,
        backend=prep.table.backend,
        row_index=prep.table.index,
        **records_fields(prep),
    )


def records_fields(prep: Prepared, household=None) -> dict:
    """``row_counts`` and ``records_source`` of a result computed on an out-of-core engine's
    compressed table (nothing in memory)."""
    if prep.source is None:
        return {}
    return {"row_counts": prep.counts, "records_source": (prep.engine, prep.source, household)}


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


@accepts_scenario
@renamed_parameters(positional=("weight", "alpha"))
def k_anonymity(
    data,
    keys=None,
    k=(2, 3, 5),
    *,
    weight=None,
    alpha: float = 1.0,
    strata=None,
    missing=None,
    na_rule: str = "sdcmicro",
    allow_degenerate_keys: bool = False,
    zero_weight: str = "error",
    engine=None,
) -> KAnonymityResult:
    """Records and keys violating k-anonymity: record i violates it iff f_{k(i)} < k.

    Parameters
    ----------
    data : table or FrequencyResult
        The microdata, or the result of :func:`frequencies` (then ``keys``, ``weight``,
        ``strata`` and ``alpha`` are taken from it and nothing is recomputed).
    keys : str or list of str
    k : int or sequence of int, default (2, 3, 5)
        Integers >= 1 (a value such as 2.5 is refused; sdcMicro rounds it).
    weight, alpha, strata, missing, na_rule, allow_degenerate_keys, zero_weight, engine
        As in :func:`frequencies`.
    scenario : Scenario, optional
        The roles given once.

    Returns
    -------
    KAnonymityResult

    Notes
    -----
    The count is ``f_k < k`` for every k (sdcMicro's print method counts f_k == 1 and
    f_k == 2, which undercounts fractional f_k from alpha < 1). Violations are non-decreasing
    in k.

    References
    ----------
    Samarati, P. & Sweeney, L. (1998), Protecting privacy when disclosing information:
    k-anonymity and its enforcement through generalization and suppression, SRI technical
    report; Sweeney, L. (2002), k-anonymity: a model for protecting privacy, *International
    Journal of Uncertainty, Fuzziness and Knowledge-Based Systems* 10(5), 557-570.
    """
    ks = check_k_list(k)
    if isinstance(data, FrequencyResult):
        fr = data
    else:
        if keys is None:
            raise SdcError("keys: no key variables given; expected a column name or a list of names")
        fr = frequencies(
            data,
            keys,
            weight=weight,
            alpha=alpha,
            strata=strata,
            missing=missing,
            na_rule=na_rule,
            allow_degenerate_keys=allow_degenerate_keys,
            zero_weight=zero_weight,
            engine=engine,
        )
    flags = np.column_stack([fr.fk < kk for kk in ks]) if len(fr.fk) else np.zeros((0, len(ks)), bool)
    violations = {kk: fr._count(flags[:, j]) for j, kk in enumerate(ks)}
    wv = {kk: fr._count(fr.Fk < kk) for kk in ks} if fr.weighted else None
    return KAnonymityResult(
        k=tuple(ks),
        n_violations=violations,
        n_patterns_violating=_patterns_violating(fr, ks),
        n_weighted_violations=wv,
        flags=flags,
        frequencies=fr,
        backend=fr.backend,
        row_index=fr.row_index,
        row_ids=fr.row_ids,
        row_counts=fr.row_counts,
        records_source=fr.records_source,
    )


def _patterns_violating(fr: FrequencyResult, ks) -> dict:
    """Distinct key patterns with f < k (records of one pattern share f)."""
    fp = np.zeros(fr.n_patterns)
    fp[fr.pattern_ids] = fr.fk
    return {kk: int(np.count_nonzero(fp < kk)) for kk in ks}
