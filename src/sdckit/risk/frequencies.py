"""Sample and population key frequencies and k-anonymity (spec A.1, A.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._core.frequencies import pattern_frequencies
from .._engine import gather, record_patterns
from .._errors import SdcError
from .._prepare import prepare
from .._validation import check_alpha, check_k_list
from ..results._base import Result, Summary, new_axes

__all__ = ["FrequencyResult", "KAnonymityResult", "frequencies", "k_anonymity"]

_NA_RULES = ("sdcmicro", "own_category")


@dataclass(frozen=True, eq=False)
class FrequencyResult(Result):
    """Per-record sample frequency ``fk`` and estimated population frequency ``Fk``.

    Attributes
    ----------
    keys : tuple of str
    fk, Fk : ndarray of float, input row order
        f_k = number of sample records sharing the record's key (with missing values matched
        by the sdcMicro rule), F_k = sum of their weights (= f_k without weights).
    alpha : float
    weighted : bool
    n : int
    n_keys : int
        Distinct key patterns (a missing value counted as a value).
    sample_uniques : int
        Records with f_k == 1 (sdcMicro ``n1``).
    records_fk2 : int
        Records with f_k == 2 (sdcMicro ``n2``).
    records_with_missing : int
        Records with at least one missing key value.
    missing_per_key : dict
    pattern_ids : ndarray of int
        Index of each record's distinct key pattern (0..n_keys-1).
    """

    keys: tuple = ()
    fk: np.ndarray = field(default=None, repr=False)
    Fk: np.ndarray = field(default=None, repr=False)
    pattern_ids: np.ndarray = field(default=None, repr=False)
    alpha: float = 1.0
    weighted: bool = False
    na_rule: str = "sdcmicro"
    n: int = 0
    n_keys: int = 0
    records_with_missing: int = 0
    missing_per_key: dict = field(default_factory=dict)

    @property
    def sample_uniques(self) -> int:
        return int(np.count_nonzero(self.fk == 1))

    @property
    def records_fk2(self) -> int:
        return int(np.count_nonzero(self.fk == 2))

    def fk_distribution(self, max_f: int = 10) -> dict[str, int]:
        """Number of records by f_k: ``{"1": .., "2": .., ..., ">=max_f": ..}`` (fractional f_k
        from alpha < 1 are counted under their floor, below 1 under "<1")."""
        fl = np.floor(self.fk).astype(np.int64)
        out = {}
        if np.any(fl < 1):
            out["<1"] = int(np.count_nonzero(fl < 1))
        for v in range(1, max_f):
            out[str(v)] = int(np.count_nonzero(fl == v))
        out[f">={max_f}"] = int(np.count_nonzero(fl >= max_f))
        return out

    def to_dict(self) -> dict:
        return {
            "measure": "frequencies",
            "keys": list(self.keys),
            "n": self.n,
            "weighted": self.weighted,
            "alpha": self.alpha,
            "na_rule": self.na_rule,
            "n_keys": self.n_keys,
            "sample_uniques": self.sample_uniques,
            "records_fk2": self.records_fk2,
            "records_with_missing": self.records_with_missing,
            "missing_per_key": dict(self.missing_per_key),
            "fk_distribution": self.fk_distribution(),
            "mean_fk": float(np.mean(self.fk)) if self.n else None,
        }

    def summary(self) -> Summary:
        d = self.to_dict()
        rows = [
            ("records", self.n),
            ("key variables", ", ".join(self.keys)),
            ("distinct key patterns", self.n_keys),
            ("sample uniques (f_k = 1)", self.sample_uniques),
            ("records with f_k = 2", self.records_fk2),
            ("records with a missing key value", self.records_with_missing),
            ("weights", "yes" if self.weighted else "no (F_k = f_k)"),
            ("alpha (missing-value matching)", self.alpha),
        ]
        dist = {"columns": ["f_k", "records", "percent"],
                "rows": [(k, v, round(100.0 * v / self.n, 2) if self.n else 0.0) for k, v in d["fk_distribution"].items()]}
        notes = []
        if self.records_with_missing and self.na_rule == "sdcmicro":
            notes.append("a missing key value matches every category (sdcMicro rule, spec A.1.1)")
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


def frequencies(data, keys, weight=None, alpha: float = 1.0, *, missing=None, na_rule: str = "sdcmicro",
                allow_degenerate_keys: bool = False, zero_weight: str = "error") -> FrequencyResult:
    r"""Sample frequency f_k and weighted population frequency \hat F_k of every record's key.

    .. math:: f_k = \#\{i : k(i) = k\}, \qquad \hat F_k = \sum_{i: k(i) = k} w_i

    Missing key values follow sdcMicro's ``freqCalc`` rule (spec A.1.1): a missing value matches
    every category; contributions that involve an incomplete pattern are scaled by ``alpha``
    (a record's own pattern and, for an incomplete record, the complete records it matches
    always count fully); a record missing on every key gets f = n. Computed by joins over the
    missing-value masks present, never by comparing all pairs of records.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables. Labels are never coerced to numbers.
    weight : str, optional
        Sampling weight column. Without it the file is treated as a census: F_k = f_k.
    alpha : float in [0, 1], default 1
        Weight of matches through missing values (sdcMicro ``alpha``).
    missing : value or list of values, optional
        Values to treat as missing in addition to null / NaN (e.g. ``-999``).
    na_rule : {"sdcmicro", "own_category"}
        ``"own_category"``: a missing value is one more category (spec K.4).
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category.
    zero_weight : {"error", "drop"}, default "error"
        A record with weight 0 represents nobody: an error by default; ``"drop"`` keeps it in
        f_k and leaves it out of F_k (spec 0.4).

    Returns
    -------
    FrequencyResult

    References
    ----------
    Spec ALGORITHMS.md A.1 and A.1.1; sdcMicro ``freqCalc``; S002 tables 4.1 and 4.2.
    """
    a = check_alpha(alpha)
    if na_rule not in _NA_RULES:
        raise SdcError(f"na_rule: got {na_rule!r}; expected one of {', '.join(_NA_RULES)}")
    if zero_weight not in ("error", "drop"):
        raise SdcError(f"zero_weight: got {zero_weight!r}; expected 'error' or 'drop'")
    prep = prepare(data, keys, weight=weight, missing=missing, allow_degenerate_keys=allow_degenerate_keys,
                   zero_weight=zero_weight)
    return _frequencies_from_prepared(prep, a, na_rule)


def _frequencies_from_prepared(prep, alpha: float, na_rule: str) -> FrequencyResult:
    codes = prep.keys.codes
    ids, patterns, counts, wsum = record_patterns(codes, prep.weights, prep.keys.cardinalities)
    fp, Fp = pattern_frequencies(patterns, counts, wsum, alpha, na_rule)
    pmiss = patterns < 0 if patterns.size and patterns.min() < 0 else np.zeros((0, patterns.shape[1]), bool)
    pc = counts[: len(pmiss)]
    fk, Fk = gather(ids, fp, Fp)
    return FrequencyResult(
        keys=prep.keys.names,
        fk=fk,
        Fk=Fk,
        pattern_ids=ids,
        alpha=alpha,
        weighted=prep.weights is not None,
        na_rule=na_rule,
        n=codes.shape[0],
        n_keys=len(counts),
        records_with_missing=int(pc[pmiss.any(axis=1)].sum()),
        missing_per_key={k: int(pc[pmiss[:, j]].sum()) for j, k in enumerate(prep.keys.names)},
        backend=prep.table.backend,
    )


@dataclass(frozen=True, eq=False)
class KAnonymityResult(Result):
    """k-anonymity violations for one or several k (spec A.2).

    Attributes
    ----------
    k : tuple of int
    violations : dict k -> int
        Records with f_k < k.
    keys_violating : dict k -> int
        Distinct key patterns with f_k < k.
    weighted_violations : dict k -> int or None
        Records with F_k < k (sdcMicro ``kAnon_violations(weighted=TRUE)``), with weights only.
    flags : ndarray (n, len(k)) of bool
        ``flags[i, j]``: record i violates k[j]-anonymity.
    frequencies : FrequencyResult
    """

    k: tuple = ()
    violations: dict = field(default_factory=dict)
    keys_violating: dict = field(default_factory=dict)
    weighted_violations: dict | None = None
    flags: np.ndarray = field(default=None, repr=False)
    frequencies: FrequencyResult = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return self.frequencies.n

    def share(self, k: int) -> float:
        """Share (0..1) of records violating k-anonymity."""
        return self.violations[k] / self.n if self.n else 0.0

    def violates(self, k: int) -> np.ndarray:
        """Boolean per record: f_k < k."""
        return self.flags[:, self.k.index(k)]

    def to_dict(self) -> dict:
        out = {
            "measure": "k_anonymity",
            "n": self.n,
            "k": list(self.k),
            "violations": {str(k): v for k, v in self.violations.items()},
            "percent": {str(k): 100.0 * self.share(k) for k in self.k},
            "keys_violating": {str(k): v for k, v in self.keys_violating.items()},
        }
        if self.weighted_violations is not None:
            out["weighted_violations"] = {str(k): v for k, v in self.weighted_violations.items()}
        return out

    def summary(self) -> Summary:
        cols = ["k", "records violating", "percent", "keys violating"]
        rows = [(k, self.violations[k], round(100.0 * self.share(k), 2), self.keys_violating[k]) for k in self.k]
        if self.weighted_violations is not None:
            cols.append("records with F_k < k")
            rows = [r + (self.weighted_violations[k],) for r, k in zip(rows, self.k)]
        return Summary("k-anonymity", (("", [("records", self.n), ("key variables", ", ".join(self.frequencies.keys))]),
                                       ("Violations (f_k < k)", {"columns": cols, "rows": rows})))

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


def k_anonymity(data, keys=None, k=(2, 3, 5), weight=None, alpha: float = 1.0, *, missing=None,
                na_rule: str = "sdcmicro", allow_degenerate_keys: bool = False,
                zero_weight: str = "error") -> KAnonymityResult:
    """Records and keys violating k-anonymity: record i violates it iff f_{k(i)} < k.

    Parameters
    ----------
    data : table, or a :class:`FrequencyResult` (then ``keys``, ``weight`` and ``alpha`` are
        taken from it and nothing is recomputed)
    keys : str or list of str
    k : int or sequence of int, default (2, 3, 5)
        Rounded half-up to integers, as sdcMicro does.
    weight, alpha, missing, na_rule, allow_degenerate_keys, zero_weight
        As in :func:`frequencies`.

    Returns
    -------
    KAnonymityResult

    Notes
    -----
    The count is ``f_k < k`` for every k (sdcMicro's print method counts f_k == 1 and
    f_k == 2, which undercounts fractional f_k from alpha < 1; spec A.2). Violations are
    non-decreasing in k.

    References
    ----------
    Spec A.2; Samarati & Sweeney (1998); S002 section "k-anonymity".
    """
    ks = check_k_list(k)
    if isinstance(data, FrequencyResult):
        fr = data
    else:
        if keys is None:
            raise SdcError("keys: no key variables given; expected a column name or a list of names")
        fr = frequencies(data, keys, weight, alpha, missing=missing, na_rule=na_rule,
                         allow_degenerate_keys=allow_degenerate_keys, zero_weight=zero_weight)
    flags = np.column_stack([fr.fk < kk for kk in ks]) if fr.n else np.zeros((0, len(ks)), bool)
    violations = {kk: int(flags[:, j].sum()) for j, kk in enumerate(ks)}
    keys_violating = _keys_violating(fr, ks)
    wv = {kk: int(np.count_nonzero(fr.Fk < kk)) for kk in ks} if fr.weighted else None
    return KAnonymityResult(k=tuple(ks), violations=violations, keys_violating=keys_violating,
                            weighted_violations=wv, flags=flags, frequencies=fr, backend=fr.backend)


def _keys_violating(fr: FrequencyResult, ks) -> dict:
    """Distinct key patterns with f < k (records of one pattern share f)."""
    fp = np.zeros(fr.n_keys)
    fp[fr.pattern_ids] = fr.fk
    return {kk: int(np.count_nonzero(fp < kk)) for kk in ks}
