"""Individual, global and household re-identification risk (Benedetti–Franconi / mu-ARGUS)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from .._assessed import Assessed, Headline
from .._core import risk_ci
from .._core.individual import household_risk as _household_risk
from .._core.individual import individual_risk_values, keep_probability
from .._declare import Options, Param, declare, options
from .._deprecation import renamed_parameters
from .._errors import SdcError, warn
from .._prepare import Prepared, prepare, role_conflicts
from .._progress import step
from .._validation import (
    as_name_list,
    check_column,
    raise_problems,
)
from ..engines import STORED, get_engine
from ..results.individual import IndividualRiskResult, RiskThreshold
from ..scenario import accepts_scenario
from ._households_engine import household_key_conflicts, household_store
from ._options import Intervals
from ._pram import is_stratified, keep_by_code, keep_per_record, lacking_categories, strata_reader
from .frequencies import NA_RULES, frequency_result, pattern_frequencies_of, records_fields

__all__ = ["IndividualEstimation", "IndividualRiskResult", "RiskThreshold", "individual_risk"]

_METHODS = ("approx", "exact")


# ----------------------------------------------------------------------------------------------
# public function
# ----------------------------------------------------------------------------------------------
@options(
    "estimation",
    Param(
        "method", "choice", "`approx` (sdcMicro's approximation) or `exact` (the exact expectation)", choices=_METHODS
    ),
    Param("alpha"),
    Param(
        "na_rule",
        "choice",
        "How missing key values match: `sdcmicro` (a missing value matches every category) or `own_category`",
        choices=NA_RULES,
    ),
)
@dataclass(frozen=True)
class IndividualEstimation(Options):
    """How :func:`individual_risk` estimates the risk (the form of E(1/F_k | f_k), and how
    records match through missing key values): the ``estimation=`` record (or a mapping of
    its fields).

    Parameters
    ----------
    method : {"approx", "exact"}, default "approx"
        ``"approx"``: the mu-ARGUS / sdcMicro closed forms (r ~ p / (f - 1 + p) for f > 2);
        ``"exact"``: the integral for every f.
    alpha : float in [0, 1], default 1
        Weight of matches through missing key values (sdcMicro ``alpha``).
    na_rule : {"sdcmicro", "own_category"}, default "sdcmicro"
        How missing key values match: ``"sdcmicro"`` (a missing value matches every category)
        or ``"own_category"`` (missing is a category of its own).
    """

    method: str = "approx"
    alpha: float = 1.0
    na_rule: str = "sdcmicro"


@accepts_scenario
@renamed_parameters(positional=("weight", "household", "alpha", "method"))
@declare(
    "measure",
    Param("keys"),
    Param("weight"),
    Param("household"),
    Param("strata"),
    Param("household_keys", "columns"),
    Param("missing"),
    Param("allow_degenerate_keys"),
    Param("pram", "any"),
    out_of_core=True,
    grouped=(IndividualEstimation, Intervals),
    assessed=Assessed(
        needs=("keys",),
        headlines=(
            Headline(
                "global_risk", "expected share of records re-identified", "lower", "global_risk", label="global risk"
            ),
            Headline(
                "expected_reidentifications",
                "expected records re-identified",
                "lower",
                "expected_reidentifications",
                label="expected re-identifications",
            ),
            Headline(
                "household_global_risk",
                "expected share of households re-identified",
                "lower",
                "household_global_risk",
                label="household risk",
                needs=("household",),
            ),
        ),
        order=40,
        targets=("max_risk", "max_global_risk", "household"),
        part="categorical_risk",
        step=True,
    ),
)
def individual_risk(
    data,
    keys,
    *,
    weight=None,
    household=None,
    estimation: IndividualEstimation | dict | None = None,
    strata=None,
    household_keys=None,
    missing=None,
    allow_degenerate_keys: bool = False,
    pram=None,
    intervals: Intervals | dict | None = None,
    engine=None,
) -> IndividualRiskResult:
    r"""Individual re-identification risk, global risk and household risk.

    The risk of a record with key k is the probability that an intruder who links it on the
    key variables to one of the F_k population units sharing the key picks the right one,
    estimated under the negative-binomial super-population model (Benedetti & Franconi 1998):

    .. math::

        r_k = E(1/F_k \mid f_k) = \int_0^1 \frac{p_k^{f_k} x^{f_k - 1}}{(1 - q_k x)^{f_k}}\,dx,
        \qquad p_k = f_k / \hat F_k,\ q_k = 1 - p_k

    with the closed forms r = (p/q) log(1/p) for f = 1, r = p/q - (p/q)^2 log(1/p) for f = 2
    and (``method="approx"``, the mu-ARGUS / sdcMicro default) r ~ p / (f - 1 + p) for f > 2;
    ``estimation={"method": "exact"}`` evaluates the integral for every f (stable for large f and p near 0 or
    1; the approximation overstates it by at most 4.04 %, at f = 3, and by less than
    0.37/f^2 in general). Without weights the file is the population: r = 1/f_k.

    Global risk: ER = sum_i r_i expected re-identifications, xi = ER / n. Household risk
    (independent re-identification of members): r^h_g = 1 - prod_{i in g} (1 - r_i), given to
    every member; ER^h = sum_i r^h_{g(i)}, xi^h = ER^h / n.

    A PRAM-protected file (``pram``): a released record is a correct match only if PRAM kept
    its released categories, so its risk is

    .. math::

        r_i = M_{kk} \, E(1/F_k \mid f_k), \qquad M_{kk} = \prod_v P^{(v)}_{k_v k_v}

    on the released key k of record i, with P^(v) the transition matrix of PRAMed key v
    (rows: original category, columns: released one; a key that was not PRAMed, or a missing
    value, contributes 1). The global and household risks and :meth:`threshold` use these r_i
    (Shlomo & Skinner 2010 for the misclassification factor; M_kk / F~_k approximates the
    probability of a correct match for small sampling fractions and little change).

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns
    keys : str or list of str
        Categorical key variables. Missing values follow sdcMicro's rule.
    weight : str, optional
        Sampling weight column (w_i = 1/pi_i, finite, > 0). Without it r = 1/f_k.
    household : str, optional
        Household id column. Records without an id form their own household (an
        :class:`SdcWarning` says how many).
    estimation : IndividualEstimation or dict, optional
        ``method`` (``"approx"`` or ``"exact"``), ``alpha`` (the weight of matches through
        missing key values) and ``na_rule`` (how missing values match): see
        :class:`IndividualEstimation`.
    strata : str or list of str, optional
        Stratification variables: f_k and F_k are computed within each stratum (as if the
        function were run on each stratum separately). Must not be missing.
    household_keys : str or list of str, optional
        Key variables that describe the household (region, household size, ...): every
        household must have a single value of each (missing values allowed), otherwise
        :class:`SdcError`.
    missing : value or list of values, optional
        Extra missing-value codes of the key variables (e.g. ``-999``).
    allow_degenerate_keys : bool, default False
        Accept key variables that are entirely missing or have a single category.
    pram : dict, optional
        The published PRAM matrices of PRAMed key variables: key variable -> the probability
        that PRAM keeps each category, as a number (the same for every category), a dict
        category -> probability (``details["pram_diagonal"]`` of :func:`sdckit.pram`) or a
        transition matrix whose diagonal is taken (``details["pram"]``: ``{from: {to:
        probability}}``; a ``(square matrix, categories)`` pair; a labelled pandas DataFrame).
        Every category of the released data must have a probability. A variable PRAMed
        within strata: ``{"strata": columns, "matrices": {stratum label: any of these}}`` (its
        ``details["pram_diagonal_by_stratum"]`` with ``strata``); each record then uses its stratum's
        probability. ``{}`` or None: no adjustment.
    intervals : Intervals or dict, optional
        ``{"ci": True}``: a confidence interval for the expected number of re-identifications and the global
        risk (``ci`` of the result, shown beside the estimates). A parametric bootstrap of the
        model: F_k = f_k + NegBin(f_k, p_k) drawn independently for every key, 2000 draws with
        a fixed seed; the interval is the central ``confidence`` range of sum_k a_k / F_k (a_k:
        the key's records, times M_kk with ``pram``). It is the range of the true number of
        re-identifications given the sample under the model (Rinott & Shlomo 2007 give
        variances and intervals for the global measures); the weights' own error is not in it.
        Without weights (a census) it is the estimate itself. ``confidence`` (default 0.95)
        is its level (see :class:`Intervals`).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs (see :func:`frequencies`). With DuckDB or Spark the
        household risk is computed in the engine and only its aggregates come back
        (``household_risk`` per record is then written by ``write_records``).
    scenario : Scenario, optional
        The roles (keys, weight, household, strata, missing) given once.

    Returns
    -------
    IndividualRiskResult
        ``risk``, ``fk``, ``Fk``, ``household_risk`` per record; ``expected_reidentifications``,
        ``global_risk``, ``household_expected_reidentifications``, ``household_global_risk``,
        ``n_sample_uniques``; ``threshold(max_global_risk)`` for the mu-ARGUS threshold, whose
        ``safe`` and ``verdict`` consider the household rule too; ``pram_adjusted``: the key
        variables whose PRAM the risk accounts for.

    Warns
    -----
    SdcWarning
        When F_k < f_k for some key (weights below 1 break the model): p_k is clamped to 1 and
        the risk is 1/f_k there (sdcMicro does not clamp). When household ids are
        missing.

    Notes
    -----
    Deliberate differences from sdcMicro: a fractional f_k (only with
    ``alpha < 1``) gets the exact value of the integral; sdcMicro's ``indivRisk`` has branches
    for f = 1, f = 2 and f > 2 only, so it returns 0 for 1 < f_k < 2, and applies the f > 2
    approximation to fractional f_k above 2. Values of f_k within 1e-9 (relative) of an
    integer are treated as that integer. p_k is clamped to 1 when F_k < f_k. The fields of
    ``estimation`` and ``intervals`` given flat (``method="exact"``) still work for one release,
    with a DeprecationWarning.

    References
    ----------
    Benedetti, R. & Franconi, L. (1998), Statistical
    and technological solutions for controlled data dissemination; Franconi, L. & Polettini, S.
    (2004), Individual risk estimation in mu-Argus: a review, PSD 2004, LNCS 3050, 262-272;
    mu-ARGUS 4.1 manual, section 2.3.4.1; sdcMicro ``measure_risk`` / ``indivRisk``. Shlomo, N. &
    Skinner, C.J. (2010), Assessing the protection provided by misclassification-based disclosure
    limitation methods for survey microdata, Annals of Applied Statistics 4(3), 1291-1310.

    Examples
    --------
    >>> res = sdckit.individual_risk(df, ["region", "sex", "age"], weight="w", household="hid")  # doctest: +SKIP
    >>> res.global_risk, res.household_global_risk                                              # doctest: +SKIP
    >>> res.threshold(0.01).threshold                                                            # doctest: +SKIP
    """
    want_ci, conf = bool(intervals.ci), float(intervals.confidence)  # type: ignore[union-attr]  # checked by the declaration
    arguments = dict(
        weight=weight,
        household=household,
        strata=strata,
        household_keys=household_keys,
        missing=missing,
        allow_degenerate_keys=allow_degenerate_keys,
        pram=pram,
        engine=engine,
        **estimation.fields(),  # type: ignore[union-attr]
    )
    inp = _validate_individual(data, keys, **arguments)
    prep = inp.prep
    pf = pattern_frequencies_of(prep, inp.alpha, inp.na_rule)
    rp, clamped = individual_risk_values(pf.fp, pf.Fp, inp.method)
    if inp.pram_keep:
        rp = rp * keep_probability(pf.patterns[:, : pf.m], inp.pram_keep)
    fk, Fk, risk = prep.mem.gather(pf.ids, pf.fp, pf.Fp, rp)
    counts = pf.counts
    if inp.pram_record is not None:  # matrices per stratum: M_kk per record
        risk = risk * inp.pram_record
        rp, counts = risk, np.ones(risk.size, dtype=np.int64)
    freq = frequency_result(prep, pf, inp.alpha, inp.na_rule, fk, Fk)
    n_clamped = int(pf.counts[clamped].sum())
    if n_clamped:
        warn(f"weight: F_k < f_k for {n_clamped} record(s) (weights below 1); p_k clamped to 1, risk = 1/f_k there")
    frac = np.abs(pf.fp - np.round(pf.fp)) > 1e-9 * pf.fp
    hh = _household_fields(inp, risk)
    ci_out = _global_risk_ci(pf, inp, conf, prep.n) if want_ci else None
    return IndividualRiskResult(
        keys=prep.keys.names,
        strata=prep.roles.strata,
        household=inp.household,
        method=inp.method,
        risk=risk,
        frequencies=freq,
        pattern_risk=rp,
        pattern_counts=counts,
        n_clamped=n_clamped,
        n_fractional=int(pf.counts[frac].sum()),
        backend=prep.table.backend,
        row_index=prep.table.index,
        pram_adjusted=inp.pram_variables,
        ci=ci_out,
        **records_fields(prep, hh.get("household_store")),
        **hh,
    )


def _global_risk_ci(pf, inp: _IndividualInput, confidence: float, n: int) -> dict:
    """The interval of ER and xi from draws of F_k = f_k + NegBin(f_k, p_k)
    (:func:`sdckit._core.risk_ci.global_risk_draws`)."""
    step("confidence interval")
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pf.Fp > 0, np.minimum(pf.fp / pf.Fp, 1.0), 1.0)
    a = np.asarray(pf.counts, dtype=float)
    if inp.pram_keep:
        a = a * keep_probability(pf.patterns[:, : pf.m], inp.pram_keep)
    if inp.pram_record is not None:
        a = np.bincount(pf.ids, weights=inp.pram_record, minlength=a.size)
    draws = risk_ci.global_risk_draws(pf.fp, p, a, draws=risk_ci.DRAWS)
    lo, hi = risk_ci.percentile_interval(draws, confidence)
    return {
        "confidence": confidence,
        "method": "parametric bootstrap",
        "draws": risk_ci.DRAWS,
        "expected_reidentifications": (lo, hi),
        "global_risk": (lo / n, hi / n) if n else (0.0, 0.0),
    }


@dataclass(frozen=True)
class _IndividualInput:
    """Validated input of :func:`individual_risk`."""

    prep: Prepared
    alpha: float
    method: str
    na_rule: str
    household: str | None
    hh_codes: np.ndarray | None  # household code per record (records without an id: their own)
    n_households: int
    n_missing_household: int
    pram_keep: dict  # PRAMed key column -> keep probability of each category code
    pram_record: np.ndarray | None = None  # M_kk per record (matrices per stratum)
    pram_variables: tuple = ()


def _validate_individual(
    data,
    keys,
    *,
    weight,
    household,
    alpha,
    method,
    strata,
    household_keys,
    missing,
    na_rule,
    allow_degenerate_keys,
    pram=None,
    engine=None,
) -> _IndividualInput:
    """Check every parameter and role (one error for all column problems) and encode keys,
    strata and households."""
    a = float(alpha)  # alpha, method and na_rule: checked by the declaration
    household = check_column(household, "household")  # a list of one name refused, as before
    if household_keys is not None and household is None:
        raise SdcError("household_keys: no household column given; expected household=<column>")
    eng = get_engine(engine, data)
    table = eng.table(data)
    # Household ids may be missing (each such record is a household of its own), which the role
    # validation rejects: the column goes through it only when it is complete.
    hh_missing = table.n_missing(household) if household is not None and household in table.columns else 0
    prep = prepare(
        table,
        keys,
        weight=weight,
        household=household if not hh_missing else None,
        strata=strata,
        missing=missing,
        allow_degenerate_keys=allow_degenerate_keys,
        engine=eng,
    )
    hh = n_hh = None
    if household is not None:
        _check_household(prep.roles, table, household)
    if household is not None and eng.has(STORED):
        if household_keys is not None:
            _check_household_keys_engine(household_keys, prep, eng, table, household)
    elif household is not None:
        hh, n_hh = _household_codes(prep, household, hh_missing)
        if household_keys is not None:
            _check_household_keys(household_keys, prep, hh)
    keep, per_record = _pram_keep(pram, prep)
    pram_vars = tuple(k for k in prep.keys.names if pram and k in pram)
    return _IndividualInput(prep, a, method, na_rule, household, hh, n_hh or 0, hh_missing, keep, per_record, pram_vars)


def _pram_keep(pram, prep: Prepared) -> tuple[dict, np.ndarray | None]:
    """Keep probability of each category code of every PRAMed key (every category that occurs
    in the data must have one); with matrices per stratum, M_kk per record instead."""
    if pram is None:
        return {}, None
    keys = prep.keys
    labels = [prep.mem.label_values(lab) for lab in keys.labels]
    if isinstance(pram, Mapping) and any(is_stratified(spec) for spec in pram.values()):
        reader = strata_reader(prep.engine, prep.table) if prep.source is None else None
        return {}, keep_per_record(pram, keys.names, labels, keys.codes, reader)
    keep = keep_by_code(pram, keys.names, labels)
    raise_problems(lacking_categories(keep, keys.codes, keys.names))
    return keep, None


def _household_fields(inp: _IndividualInput, risk: np.ndarray) -> dict:
    """Household risk r^h_g = 1 - prod_{i in g} (1 - r_i), given to every member."""
    step("household risk")
    if inp.household is None:
        return {}
    if inp.prep.source is not None:
        return _household_fields_engine(inp, risk)
    risk_g, size_g = _household_risk(risk, inp.hh_codes, inp.n_households)
    (hrisk,) = inp.prep.mem.gather(inp.hh_codes, risk_g)
    if inp.n_missing_household:
        warn(
            f"household: column {inp.household} is missing for {inp.n_missing_household} record(s); each forms its "
            "own household"
        )
    return dict(
        household_risk=hrisk,
        household_ids=inp.hh_codes,
        household_risk_g=risk_g,
        household_size_g=size_g,
        n_households=inp.n_households,
        n_missing_household=inp.n_missing_household,
    )


def _household_fields_engine(inp: _IndividualInput, risk: np.ndarray) -> dict:
    """Household risk computed by an out-of-core engine: aggregates only."""
    store = household_store(inp.prep.engine, inp.prep.source, inp.household, risk)
    if store.n_missing:
        warn(
            f"household: column {inp.household} is missing for {store.n_missing} record(s); each forms its own household"
        )
    return dict(household_store=store, n_households=store.n_households, n_missing_household=store.n_missing)


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def _check_household(roles, table, household: str) -> None:
    """The household column has no other role and holds ids (numbers or labels)."""
    raise_problems(role_conflicts(replace(roles, household=household)))
    if table.kind(household) == "nested":
        raise SdcError(
            f"household: column {household} has type {table.dtype_name(household)}; expected household "
            "ids (numbers or labels)"
        )


def _household_codes(prep: Prepared, household: str, n_missing: int) -> tuple[np.ndarray, int]:
    """Household code of each record (0..G-1); records without an id get codes of their own."""
    codes, labels = prep.mem.encode_column(prep.table, household)
    codes = codes.astype(np.int64)
    g = len(labels)
    miss = np.flatnonzero(codes < 0)
    if miss.size:
        codes[miss] = g + np.arange(miss.size)
        g += miss.size
    return codes, g


def _check_household_keys_engine(household_keys, prep: Prepared, eng, table, household: str) -> None:
    """:func:`_check_household_keys` counted by an out-of-core engine (one GROUP BY per key)."""
    names = _household_key_names(household_keys, prep)
    problems = []
    for name in names:
        n_groups = household_key_conflicts(eng, table, household, name, prep.roles.missing)
        if n_groups:
            problems.append(
                f"household_keys: column {name} takes more than one value within {n_groups} "
                "household(s); expected one value per household"
            )
    raise_problems(problems)


def _household_key_names(household_keys, prep: Prepared) -> list:
    names = as_name_list(household_keys, "household_keys")
    key_names = list(prep.keys.names)
    bad = [k for k in names if k not in key_names]
    if bad:
        raise SdcError(
            f"household_keys: {', '.join(bad)} not among the key variables; expected a subset of {', '.join(key_names)}"
        )
    return names


def _check_household_keys(household_keys, prep: Prepared, hh: np.ndarray) -> None:
    """Every household has one value of each household key (missing values allowed). The
    message gives counts only: household ids and key values are record values."""
    names = _household_key_names(household_keys, prep)
    key_names = list(prep.keys.names)
    n_hh = int(hh.max()) + 1 if hh.size else 0
    problems = []
    for name in names:
        c = prep.keys.codes[:, key_names.index(name)]
        obs = c >= 0
        ref = np.full(n_hh, -1, dtype=np.int64)
        ref[hh[obs]] = c[obs]  # one observed value per household (any member's)
        differ = obs & (c != ref[hh])
        if differ.any():
            n_groups = np.unique(hh[differ]).size
            problems.append(
                f"household_keys: column {name} takes more than one value within {n_groups} "
                "household(s); expected one value per household"
            )
    raise_problems(problems)
