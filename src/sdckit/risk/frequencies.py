"""Sample and population key frequencies and k-anonymity."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._assessed import Assessed, Headline
from .._core.frequencies import pattern_frequencies, strata_correction
from .._declare import Param, declare
from .._deprecation import renamed_parameters
from .._errors import SdcError
from .._prepare import Prepared, prepare
from .._progress import step
from .._validation import check_k_list
from ..engines import get_engine, local_records
from ..results.frequencies import FrequencyResult, KAnonymityResult
from ..scenario import accepts_scenario

__all__ = ["FrequencyResult", "KAnonymityResult", "frequencies", "k_anonymity"]

NA_RULES = ("sdcmicro", "own_category")


@accepts_scenario
@renamed_parameters(positional=("weight", "alpha"))
@declare(
    "measure",
    Param("keys"),
    Param("weight"),
    Param("alpha"),
    Param("strata"),
    Param("missing"),
    Param("na_rule", "choice", choices=NA_RULES),
    Param("allow_degenerate_keys"),
    Param("zero_weight"),
    out_of_core=True,
    assessed=Assessed(
        needs=("keys",),
        headlines=(Headline("n_sample_uniques", "records unique on the keys", "lower", "n_sample_uniques"),),
        order=60,
        part="categorical_risk",
    ),
)
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
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
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
    a = float(alpha)  # alpha and na_rule: checked by the declaration
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
        fp, Fp = strata_correction(patterns, counts, wsum, fp, Fp, m, alpha)
    return PatternFrequencies(ids, patterns, counts, wsum, fp, Fp, m)


def frequency_result(
    prep: Prepared, pf: PatternFrequencies, alpha: float, na_rule: str, fk=None, Fk=None
) -> FrequencyResult:
    """The :class:`FrequencyResult` of pattern frequencies (``fk``/``Fk`` mapped back unless given)."""
    step("mapping frequencies back to the records")
    if fk is None:
        fk, Fk = prep.mem.gather(pf.ids, pf.fp, pf.Fp)
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
    """``records`` (the engine's records handle) of a result, and ``row_counts`` when it was
    computed on an out-of-core engine's compressed table."""
    if prep.source is None:
        return {"records": local_records()}
    return {"row_counts": prep.counts, "records": prep.engine.records(prep.source, household)}


@accepts_scenario
@renamed_parameters(positional=("weight", "alpha"))
@declare(
    "measure",
    Param("keys", help="Categorical key variables"),
    Param("k", "numbers"),
    Param("weight"),
    Param("alpha"),
    Param("strata"),
    Param("missing"),
    Param("na_rule", "choice", choices=NA_RULES),
    Param("allow_degenerate_keys"),
    Param("zero_weight"),
    out_of_core=True,
    assessed=Assessed(
        needs=("keys",),
        headlines=(
            Headline("n_violations", "records with f_k < k, for each k", "lower", "n_violations", label="f_k < {k}"),
        ),
        order=10,
        targets=("k",),
        part="categorical_risk",
        step=True,
    ),
)
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
        records=fr.records,
    )


def _patterns_violating(fr: FrequencyResult, ks) -> dict:
    """Distinct key patterns with f < k (records of one pattern share f)."""
    fp = np.zeros(fr.n_patterns)
    fp[fr.pattern_ids] = fr.fk
    return {kk: int(np.count_nonzero(fp < kk)) for kk in ks}
