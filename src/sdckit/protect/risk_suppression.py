r"""Risk-threshold suppression: key values are set missing until no record's individual risk
is above a threshold (mu-ARGUS style; sdcMicro ``localSupp``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._core.individual import household_risk as _household_risk
from .._core.individual import risk_threshold
from .._core.risk_suppression import (
    household_unsafe,
    pattern_risk,
    record_risk,
    sdcmicro_pass,
    suppress_households,
    suppress_iteratively,
    suppress_iteratively_rows,
)
from .._declare import Param, declaration, declare
from .._errors import SdcError
from .._prepare import Roles, role_conflicts, weight_problems
from .._validation import (
    as_missing_codes,
    as_name_list,
    check_column,
    missing_columns_message,
    raise_problems,
)
from ..engines import STORED, get_engine
from ..results.protection import ProtectionResult
from ._common import Change, finish, read_input
from ._suppression_engine import _by_category, _local_index, _native_fields, _protected
from .suppression import _importance

__all__ = ["suppress_by_risk"]

_METHODS = ("iterative", "sdcmicro")
_STRATEGIES = ("importance", "min_risk")


@dataclass(frozen=True)
class _Plan:
    """The checked call: codes of the keys, weights, the columns that may be suppressed
    (least important first), importance ranks and the options."""

    codes: np.ndarray
    labels: tuple
    weights: np.ndarray | None
    variables: list
    allowed: np.ndarray
    importance: np.ndarray
    threshold: float | None
    max_global_risk: float | None
    strategy: str
    alpha: float
    method: str
    missing: tuple


@declare(
    "method",
    Param("keys"),
    Param("weight"),
    Param("threshold", "number"),
    Param("max_global_risk", "number"),
    Param("variables", "columns"),
    Param("importance", "any"),
    Param("strategy", "choice", "How the next key value to suppress is chosen", choices=_STRATEGIES),
    Param("alpha"),
    Param("method", "choice", "The algorithm: sdckit's iterative one or sdcMicro's", choices=_METHODS),
    Param("strata"),
    Param("household"),
    Param("household_risk", "number"),
    Param("missing"),
    changes="key values (set missing) until no individual risk is above the threshold",
    aliases=("suppress",),
    heading="Risk-threshold suppression",
    out_of_core=True,
)
def suppress_by_risk(
    data,
    keys,
    *,
    weight=None,
    threshold=None,
    max_global_risk=None,
    variables=None,
    importance=None,
    strategy: str = "importance",
    alpha: float = 1.0,
    method: str = "iterative",
    strata=None,
    household=None,
    household_risk=None,
    missing=None,
    engine=None,
) -> ProtectionResult:
    r"""Suppress key values (set them missing) until no record's individual risk is above a
    threshold.

    The individual risk of a record with key pattern k is r_k = E(1/F_k | f_k), from the
    sample frequency f_k and the estimated population frequency \hat F_k = \sum w_i of its
    pattern (Benedetti & Franconi 1998; a missing value matches every category, matches
    through a missing value count ``alpha``). A record is unsafe when r_i > r*.

    ``method="iterative"`` (mu-ARGUS style): repeatedly take the unsafe record with the highest
    risk (ties: the first in row order), suppress one of its key values among ``variables`` —
    the least important one it still has, or with ``strategy="min_risk"`` the one whose
    suppression gives it the lowest risk — and recompute f_k, \hat F_k and r_k of the patterns
    that change; stop when no record is unsafe or the unsafe ones have nothing left to
    suppress (those are reported). ``method="sdcmicro"`` reproduces sdcMicro
    ``localSupp(threshold, keyVar)``: one pass that sets the single key in ``variables``
    missing in every record with r_i > r*; records can stay above r* afterwards.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    keys : str or list of str
        Categorical key variables.
    weight : str, optional
        Sampling weight column; without it the file is the population and r = 1/f_k.
    threshold : float in (0, 1], optional
        r*: records with risk above it are unsafe.
    max_global_risk : float in (0, 1), optional
        Instead of ``threshold``: a target re-identification rate xi*; r* is derived from the
        risks before suppression by the mu-ARGUS rule (the first risk level v at which
        capping every higher risk at v brings the expected re-identifications below xi* n).
        Give exactly one of ``threshold`` and ``max_global_risk``.
    variables : str or list of str, optional
        The keys that may be suppressed (default: all); one key with ``method="sdcmicro"``.
    importance : sequence, optional
        A permutation of 1..m over ``keys`` (1 = most important = suppressed last), or the key
        names from the most to the least important. Default: keys with fewer categories are
        more important (ties in the order of ``keys``), as in sdcMicro ``localSuppression``.
    strategy : {"importance", "min_risk"}, default "importance"
    alpha : float in [0, 1], default 1
        Weight of matches through missing values.
    method : {"iterative", "sdcmicro"}, default "iterative"
    strata : str or list of str, optional
        f_k, \hat F_k and the risks are computed within each stratum (as ``individual_risk``
        does); a suppression affects only its stratum, so the result is that of the method run
        on each stratum separately.
    household : str, optional
        Household id column: suppress until the mu-ARGUS household rule holds too (records
        without an id form their own household). A record of household g is unsafe under it
        when r_i >= r^h* / |g|; in each household with such records the riskiest one loses a
        value (the column chosen as above), the risks are recounted, and this repeats with the
        individual rule until no record breaks either. With ``max_global_risk`` the thresholds
        are derived again from the protected file until ``individual_risk(..., household=
        ...).threshold(max_global_risk)`` is safe (or nothing is left to suppress). Iterative
        method only; the records must be in memory.
    household_risk : float in [0, 1], optional
        r^h*, the household risk threshold (``household_risk`` of
        :meth:`~sdckit.IndividualRiskResult.threshold`). Default: r* itself with
        ``threshold``; with ``max_global_risk`` derived from the household risks by the same
        rule as r* (the target rate for ER^h / n).
    missing : value or list of values, optional
        Extra missing-value codes of the key columns.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs. With DuckDB or Spark the risks are computed on the
        engine's table of distinct key patterns; the records of a pattern are fetched only when
        one of them is to be suppressed (the iterative method works record by record, with each
        record's own weight). ``data`` of the result follows the input: the caller's frame
        type for an in-memory frame (pandas, Polars, PyArrow); the engine's lazy table of the
        protected records (a DuckDB relation, a Spark DataFrame) for a file path, a DuckDB
        relation or a Spark DataFrame.

    Returns
    -------
    ProtectionResult
        ``n_changed``: new suppressions per key. ``details``: ``threshold`` (r*),
        ``importance``, ``n_suppressed``, ``n_unsafe_before`` / ``n_unsafe_after`` (records
        with r_i > r*), ``n_unresolved`` and ``unresolved_rows`` (0-based positions of the
        records still above r*), ``expected_reidentifications_before`` / ``_after``,
        ``global_risk_before`` / ``_after`` and ``max_risk_before`` / ``_after``. With
        ``household``: ``household_threshold`` (r^h*), ``household_expected_reidentifications_before``
        / ``_after``, ``household_global_risk_before`` / ``_after``,
        ``n_household_unsafe_before`` / ``_after`` (records with r_i >= r^h* / |g|; 0 when no
        household threshold is needed) and ``rounds``; ``n_unresolved`` and ``unresolved_rows``
        then count the records breaking either rule.

    Notes
    -----
    The risk uses sdcMicro's rule (closed forms for f_k = 1, 2, p/(f - 1 + p) above; the exact
    value for a fractional f_k). Under the missing-value rule a suppression never lowers any
    record's f_k when ``alpha = 1``, except that a record left with every key missing no longer
    counts for complete patterns (sdcMicro's rule for m >= 2). Only the patterns compatible with
    the changed record are updated after a suppression; everything is recounted from scratch at
    the end. Cells already missing are not counted as suppressions.

    References
    ----------
    Benedetti, R. & Franconi, L. (1998), Statistical and technological solutions for
    controlled data dissemination; Franconi, L. & Polettini, S. (2004), Individual risk
    estimation in mu-Argus: a review, PSD 2004, LNCS 3050, 262-272; Templ, M., Kowarik, A. &
    Meindl, B. (2015), Statistical disclosure control for micro-data using the R package
    sdcMicro, Journal of Statistical Software 67(4).
    """
    eng = get_engine(engine, data)
    if household is not None or household_risk is not None:
        return _suppress_by_risk_households(
            data, keys, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, strata,
            household, household_risk, missing, engine,
        )  # fmt: skip
    if eng.has(STORED):
        return suppress_by_risk_engine(
            eng,
            data,
            keys,
            weight=weight,
            threshold=threshold,
            max_global_risk=max_global_risk,
            variables=variables,
            importance=importance,
            strategy=strategy,
            alpha=alpha,
            method=method,
            strata=strata,
            missing=missing,
        )
    inp = read_input(data, keys, "keys", strata=strata, engine=engine)
    plan = _plan(inp, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, missing)
    groups = _groups(inp)
    before, r_pattern, counts = _risk_before(plan, groups, inp.engine.factorize)
    r_star = plan.threshold
    if r_star is None:
        r_star = risk_threshold(r_pattern, counts, plan.max_global_risk, inp.table.n)
        if r_star == 0.0:
            raise SdcError(
                "max_global_risk: no risk level meets the target (every record would be unsafe); expected a larger "
                "target, or a threshold"
            )
    new, after = plan.codes, before
    if r_star is not None:  # None: the file already meets the target
        new, after = _suppress(plan, groups, before, r_star, inp.engine.factorize)
    keys_ = list(inp.variables)
    masks = {v: (new[:, keys_.index(v)] < 0) & (plan.codes[:, keys_.index(v)] >= 0) for v in plan.variables}
    table = inp.engine.with_missing(inp.table, masks)
    changes = {v: Change(masks[v], plan.codes[:, keys_.index(v)], plan.labels[keys_.index(v)]) for v in masks}
    details, notes = _details(plan, keys_, r_star, before, after, masks)
    parameters = _parameters(plan, keys_, weight, strata)
    return finish(suppress_by_risk, parameters, inp, table, changes, details, notes)


def _parameters(plan: _Plan, keys: list, weight, strata, household=None, household_risk=None) -> dict:
    """The call's parameters as the result records them (JSON values, for replay)."""
    out = {
        "keys": keys,
        "weight": weight,
        "threshold": plan.threshold,
        "max_global_risk": plan.max_global_risk,
        "variables": plan.variables,
        "importance": [int(i) for i in plan.importance],
        "strategy": plan.strategy,
        "alpha": plan.alpha,
        "method": plan.method,
        "strata": None if strata is None else as_name_list(strata, "strata"),
        "missing": list(plan.missing) or None,
    }
    out["household"] = household  # recorded even when None: a replay in a scenario with a household
    out["household_risk"] = household_risk  # must not add the household rule the step did not use
    return out


def _plan(inp, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, missing) -> _Plan:
    """Check the options together (each is checked by the declaration) and read the keys and weights."""
    a = float(alpha)
    if (threshold is None) == (max_global_risk is None):
        raise SdcError(
            "threshold: give exactly one of threshold and max_global_risk; expected a risk level in (0, 1] or a "
            "target re-identification rate in (0, 1)"
        )
    thr = None if threshold is None else float(threshold)
    xi = None if max_global_risk is None else float(max_global_risk)
    keys = list(inp.variables)
    names = keys if variables is None else as_name_list(variables, "variables")
    problems = [
        f"variables: {v} is not among the keys; expected some of {', '.join(keys)}" for v in names if v not in keys
    ]
    if method == "sdcmicro" and len(names) != 1:
        problems.append("variables: method 'sdcmicro' suppresses one key variable; expected variables=[one key]")
    problems += _weight_problems(inp.table, keys, weight)
    raise_problems(problems)
    codes_missing = as_missing_codes(missing)
    enc = inp.engine.encode(inp.table, keys, list(codes_missing) or None)
    w = inp.table.floats([str(weight)])[:, 0] if weight is not None else None
    imp = _importance(importance, keys, enc.codes)
    order = [j for j in np.argsort(-imp, kind="stable") if keys[j] in names]  # least important first
    allowed = np.asarray(order, dtype=np.int64)
    names = list(dict.fromkeys(names))
    return _Plan(enc.codes, tuple(enc.labels), w, names, allowed, imp, thr, xi, strategy, a, method, codes_missing)


def _weight_problems(table, keys: list, weight) -> list[str]:
    if weight is None:
        return []
    try:
        name = str(check_column(weight, "weight"))
    except SdcError as err:
        return [str(err)]
    if name not in table.columns:
        return [missing_columns_message("weight", [name], table.columns)]
    return role_conflicts(Roles(keys=tuple(keys), weight=name)) + weight_problems(table, name)


def _groups(inp) -> list[np.ndarray]:
    """The rows of each stratum (all rows without strata)."""
    if inp.strata_codes is None:
        return [np.arange(inp.table.n)]
    order = np.argsort(inp.strata_codes, kind="stable")
    bounds = np.searchsorted(inp.strata_codes[order], np.arange(len(inp.strata_labels) + 1))
    return [order[bounds[g] : bounds[g + 1]] for g in range(len(inp.strata_labels))]


def _subset(plan: _Plan, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    w = None if plan.weights is None else plan.weights[rows]
    return np.asfortranarray(plan.codes[rows]), w


def _risk_before(plan: _Plan, groups, factorize) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The risk of every record, and the risk and record count of every pattern (per stratum)."""
    if len(groups) == 1:
        ids, _, counts, _, _, r = pattern_risk(plan.codes, plan.weights, plan.alpha, factorize)
        return r[ids], r, counts
    risk = np.empty(plan.codes.shape[0])
    levels, counts = [], []
    for rows in groups:
        ids, _, c, _, _, r = pattern_risk(*_subset(plan, rows), plan.alpha, factorize)
        risk[rows] = r[ids]
        levels.append(r)
        counts.append(c)
    return risk, np.concatenate(levels), np.concatenate(counts)


def _suppress(plan: _Plan, groups, before: np.ndarray, r_star: float, factorize):
    """(new codes, the risks afterwards), stratum by stratum."""
    new = np.array(plan.codes, dtype=np.int32, order="F", copy=True)
    after = before.copy()
    for rows in groups:
        codes, w = _subset(plan, rows)
        if plan.method == "sdcmicro":
            out = sdcmicro_pass(codes, before[rows], r_star, int(plan.allowed[0]))
            r = record_risk(out, w, plan.alpha, factorize)
        else:
            out, r, _, _ = suppress_iteratively(
                codes, w, r_star, plan.allowed, strategy=plan.strategy, alpha=plan.alpha, factorize=factorize
            )
        new[rows] = out
        after[rows] = r
    return new, after


def _details(plan: _Plan, keys: list, r_star, before, after, masks, mult=None, positions=None) -> tuple[dict, tuple]:
    """The aggregates of the step (``mult``: records per entry when the entries are rows of
    a compressed table, ``positions`` their first records)."""
    c = np.ones(before.size) if mult is None else np.asarray(mult, dtype=float)
    n = int(c.sum())
    above = np.zeros(before.size, dtype=bool) if r_star is None else after > r_star
    n_above = int(c[above].sum())
    if mult is None:
        rows = np.flatnonzero(above)
    else:  # record positions are known for single records only
        rows = positions[above] if not np.any(above & (c > 1)) else None
    details = {
        "threshold": r_star,
        "importance": {k: int(i) for k, i in zip(keys, plan.importance)},
        "n_suppressed": int(sum(int(m.sum()) for m in masks.values())),
        "n_unsafe_before": 0 if r_star is None else int(c[before > r_star].sum()),
        "n_unsafe_after": n_above,
        "n_unresolved": n_above,
        "unresolved_rows": rows,
        "expected_reidentifications_before": float(np.dot(before, c)),
        "expected_reidentifications_after": float(np.dot(after, c)),
        "global_risk_before": float(np.dot(before, c)) / n if n else 0.0,
        "global_risk_after": float(np.dot(after, c)) / n if n else 0.0,
        "max_risk_before": float(before.max()) if n else 0.0,
        "max_risk_after": float(after.max()) if n else 0.0,
    }
    notes = []
    if r_star is None:
        notes.append("The file already meets the target re-identification rate; nothing was suppressed.")
    elif n_above and plan.method == "sdcmicro":
        notes.append(
            f"{n_above} record(s) are still above the threshold after sdcMicro's single pass (risks recomputed "
            "once, as in sdcMicro); method='iterative' continues until none is."
        )
    elif n_above:
        notes.append(
            f"{n_above} record(s) are still above the threshold with every suppressible key variable "
            "suppressed (unresolved)."
        )
    return details, tuple(notes)


# ----------------------------------------------------------------------------------------------
# the household rule
# ----------------------------------------------------------------------------------------------
#: rounds of derived thresholds at most (each round suppresses, or the loop stops)
_MAX_ROUNDS = 100


@dataclass(frozen=True)
class _Households:
    """Household code (0..G-1) and household size of every record."""

    codes: np.ndarray
    sizes: np.ndarray
    n_households: int


def _suppress_by_risk_households(
    data, keys, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, strata,
    household, household_risk, missing, engine,
) -> ProtectionResult:  # fmt: skip
    """:func:`suppress_by_risk` with the mu-ARGUS household rule."""
    name = check_column(household, "household", allow_none=True)
    h_given = None if household_risk is None else float(household_risk)  # checked by the declaration
    if name is None:
        raise SdcError("household_risk: no household column given; expected household=<column> with it")
    h_param = h_given
    if threshold is not None and h_given is None:
        h_given = float(threshold)  # r^h* = r*: the household held to the record's level
    if method != "iterative":
        raise SdcError(
            "method: the household rule runs with method 'iterative'; expected method='iterative' with household"
        )
    inp = read_input(data, keys, "keys", strata=strata, engine=engine, method="suppress_by_risk with households")
    plan = _plan(inp, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, missing)
    hh = _household_codes(inp, name, weight, strata)
    groups = _groups(inp)
    factorize = inp.engine.factorize
    before, _, _ = _risk_before(plan, groups, factorize)
    new, r_star, h_star, rounds = _household_rounds(plan, groups, hh, h_given, factorize)
    after, _, _ = _risk_before(replace(plan, codes=new), groups, factorize)
    keys_ = list(inp.variables)
    masks = {v: (new[:, keys_.index(v)] < 0) & (plan.codes[:, keys_.index(v)] >= 0) for v in plan.variables}
    table = inp.engine.with_missing(inp.table, masks)
    changes = {v: Change(masks[v], plan.codes[:, keys_.index(v)], plan.labels[keys_.index(v)]) for v in masks}
    details, _ = _details(plan, keys_, r_star, before, after, masks)
    _household_details(details, hh, h_star, before, after, r_star, rounds)
    notes: tuple = ()
    if r_star is None and h_star is None:
        notes = ("The file already meets the target for the individual risk and the household rule; nothing was "
                 "suppressed.",)  # fmt: skip
    elif details["n_unresolved"]:
        notes = (
            f"{details['n_unresolved']} record(s) still break the individual or the household rule with every "
            "suppressible key variable suppressed (unresolved).",
        )
    parameters = _parameters(plan, keys_, weight, strata, name, h_param)
    return finish(suppress_by_risk, parameters, inp, table, changes, details, notes)


def _household_codes(inp, name: str, weight, strata) -> _Households:
    """Household codes (a record without an id is a household of its own) and sizes."""
    table = inp.table
    problems = [] if name in table.columns else [missing_columns_message("household", [name], table.columns)]
    if not problems:
        st = () if strata is None else tuple(as_name_list(strata, "strata"))
        roles = Roles(keys=tuple(inp.variables), weight=None if weight is None else str(weight), household=name,
                      strata=st)  # fmt: skip
        problems = role_conflicts(roles)
    raise_problems(problems)
    codes, labels = inp.engine.encode_column(table, name)
    codes = np.asarray(codes, dtype=np.int64)
    g = len(labels)
    miss = np.flatnonzero(codes < 0)
    codes[miss] = g + np.arange(miss.size)
    g += miss.size
    sizes = np.bincount(codes, minlength=g)
    return _Households(codes, sizes[codes].astype(float), g)


def _thresholds(plan: _Plan, risk, r_pattern, counts, hh: _Households, h_given):
    """(r*, r^h*) for the current risks: given, or derived from ``max_global_risk``."""
    n = risk.size
    r_star = plan.threshold
    if r_star is None:
        r_star = risk_threshold(r_pattern, counts, plan.max_global_risk, n)
    h_star = h_given
    if h_star is None:
        risk_g, size_g = _household_risk(risk, hh.codes, hh.n_households)
        h_star = risk_threshold(risk_g, size_g, plan.max_global_risk, n)
    return r_star, h_star


def _household_rounds(plan: _Plan, groups, hh: _Households, h_given, factorize):
    """Suppress under both rules; with derived thresholds, derive them again from the
    protected file until it meets the target or nothing changes. Returns (codes, r* and r^h*
    of the first round, rounds)."""
    current = plan.codes
    first = None
    for rounds in range(1, _MAX_ROUNDS + 1):
        risk, r_pattern, counts = _risk_before(replace(plan, codes=current), groups, factorize)
        r_star, h_star = _thresholds(plan, risk, r_pattern, counts, hh, h_given)
        if first is None:
            if r_star == 0.0 or h_star == 0.0:
                raise SdcError(
                    "max_global_risk: no risk level meets the target (every record would be unsafe); expected a "
                    "larger target, or a threshold"
                )
            first = (r_star, h_star)
        if (r_star is None and h_star is None) or (rounds > 1 and plan.max_global_risk is None):
            return current, first[0], first[1], rounds - 1
        new = _suppress_round(plan, groups, hh, current, r_star, h_star, factorize)
        if np.array_equal(new, current):
            return current, first[0], first[1], rounds
        current = new
    return current, first[0], first[1], _MAX_ROUNDS


def _suppress_round(plan: _Plan, groups, hh: _Households, codes, r_star, h_star, factorize) -> np.ndarray:
    """One round of suppression under r* and r^h* (either may be None), stratum by stratum."""
    new = np.array(codes, dtype=np.int32, order="F", copy=True)
    for rows in groups:
        sub = np.asfortranarray(codes[rows])
        w = None if plan.weights is None else plan.weights[rows]
        kw = dict(strategy=plan.strategy, alpha=plan.alpha, factorize=factorize)
        if h_star is None:
            out = suppress_iteratively(sub, w, r_star, plan.allowed, **kw)[0]
        else:
            out = suppress_households(
                sub, w, hh.codes[rows], hh.sizes[rows], h_star, plan.allowed, threshold=r_star, **kw
            )[0]
        new[rows] = out
    return new


def _household_details(details: dict, hh: _Households, h_star, before, after, r_star, rounds) -> None:
    """The household part of the step's aggregates (in place)."""
    n = before.size
    for when, risk in (("before", before), ("after", after)):
        risk_g, size_g = _household_risk(risk, hh.codes, hh.n_households)
        er = float(np.dot(size_g, risk_g))
        details[f"household_expected_reidentifications_{when}"] = er
        details[f"household_global_risk_{when}"] = er / n if n else 0.0
        breaks = household_unsafe(risk, hh.sizes, h_star) if h_star is not None else np.zeros(n, dtype=bool)
        details[f"n_household_unsafe_{when}"] = int(breaks.sum())
    details["household_threshold"] = h_star
    details["rounds"] = rounds
    left = household_unsafe(after, hh.sizes, h_star) if h_star is not None else np.zeros(n, dtype=bool)
    if r_star is not None:
        left |= after > r_star
    details["n_unresolved"] = int(left.sum())
    details["unresolved_rows"] = np.flatnonzero(left)


# ----------------------------------------------------------------------------------------------
# with an out-of-core engine (DuckDB, Spark); the shared steps are in _suppression_engine
# ----------------------------------------------------------------------------------------------
def suppress_by_risk_engine(
    eng,
    data,
    keys,
    *,
    weight,
    threshold,
    max_global_risk,
    variables,
    importance,
    strategy,
    alpha,
    method,
    strata,
    missing,
) -> ProtectionResult:
    """:func:`sdckit.suppress_by_risk` on ``eng``: the risks on the compressed table, the
    records of a pattern fetched when one of them is to be suppressed."""
    rel = eng.table(data)
    names = tuple(as_name_list(keys, "keys"))
    rel.require(names, "keys")
    st = tuple(as_name_list(strata, "strata", allow_empty=True)) if strata is not None else ()
    rel.require(st, "strata")
    raise_problems(_weight_problems(rel, list(names), weight))
    comp = eng.compress(rel, names + st, None if weight is None else str(weight), first=True)
    frame = comp.frame if weight is None else comp.frame_with(str(weight), comp.weight_sums)
    inp = read_input(frame, names, "keys", strata=strata)
    plan = _plan(inp, weight, threshold, max_global_risk, variables, importance, strategy, alpha, method, missing)
    counts = comp.counts.astype(np.int64)
    groups = _groups(inp)
    before = np.empty(len(counts))
    levels, level_counts = [], []
    for rows in groups:
        w = None if plan.weights is None else plan.weights[rows]
        ids, _, c, _, _, r = pattern_risk(plan.codes[rows], w, plan.alpha, multiplicity=counts[rows])
        before[rows] = r[ids]
        levels.append(r)
        level_counts.append(c)
    r_star = plan.threshold
    if r_star is None:
        r_star = risk_threshold(
            np.concatenate(levels), np.concatenate(level_counts), plan.max_global_risk, counts.sum()
        )
        if r_star == 0.0:
            raise SdcError(
                "max_global_risk: no risk level meets the target (every record would be unsafe); expected a larger "
                "target, or a threshold"
            )
    entries = _risk_entries(eng, comp, plan, groups, counts, before, r_star, weight)
    return _risk_result(eng, comp, names, plan, inp, entries, r_star, weight, strata, data)


def _risk_entries(eng, comp, plan, groups, counts, before, r_star, weight) -> dict:
    """Per entry (a record, or a row of several records left whole): position, row, count,
    codes and risk after."""
    parts = []
    for rows in groups:
        w = None if plan.weights is None else plan.weights[rows]
        if r_star is None or plan.method == "sdcmicro":
            out = (
                plan.codes[rows]
                if r_star is None
                else sdcmicro_pass(plan.codes[rows], before[rows], r_star, int(plan.allowed[0]))
            )
            after = record_risk(out, w, plan.alpha, multiplicity=counts[rows])
            parts.append((comp.first[rows], rows, counts[rows], np.asarray(out), after))
            continue
        local = _local_index(rows, len(counts))

        def records_of(sub, rows=rows, local=local):
            got = eng.records_of(comp, rows[sub], weight=None if weight is None else str(weight))
            return got[0], local[got[1]], got[2] if weight is not None else None

        pos, row, mult, new, risk, _ = suppress_iteratively_rows(
            plan.codes[rows], counts[rows], comp.first[rows], w, r_star, plan.allowed,
            strategy=plan.strategy, alpha=plan.alpha, records_of=records_of,
        )  # fmt: skip
        parts.append((pos, rows[row], mult, new, risk))
    cat = lambda i: np.concatenate([p[i] for p in parts])  # noqa: E731
    return {"pos": cat(0), "row": cat(1), "mult": cat(2), "new": cat(3), "after": cat(4), "before": before[cat(1)]}


def _risk_result(eng, comp, names, plan, inp, e, r_star, weight, strata, source) -> ProtectionResult:
    codes = plan.codes
    changed = (e["new"] < 0) & (codes[e["row"]] >= 0)
    whole = e["mult"] > 1
    row_flags = np.zeros(codes.shape, dtype=bool)
    row_flags[e["row"][whole]] = changed[whole]
    single = ~whole
    data = _protected(eng, comp, names, row_flags, e["pos"][single], changed[single], source)
    keys_ = list(names)
    per_entry = {v: changed[:, keys_.index(v)].astype(np.int64) * e["mult"] for v in plan.variables}
    masks = {v: per_entry[v] for v in plan.variables}  # counts per entry (summed in the details)
    n_changed = {v: int(m.sum()) for v, m in per_entry.items()}
    by_category = {}
    for v, m in per_entry.items():
        j = keys_.index(v)
        rows_codes = codes[e["row"], j]
        by_category[v] = _by_category(m.astype(float), rows_codes, plan.labels[j])
    by_stratum: dict = {}
    if inp.strata_codes is not None:
        stratum = inp.strata_codes[e["row"]]
        for s, label in enumerate(inp.strata_labels):
            by_stratum[label] = {v: int(m[stratum == s].sum()) for v, m in per_entry.items()}
    details, notes = _details(plan, keys_, r_star, e["before"], e["after"], masks, e["mult"], e["pos"])
    parameters = _parameters(plan, keys_, weight, strata)
    return ProtectionResult(
        method="suppress_by_risk",
        title=declaration(suppress_by_risk).heading,  # type: ignore[union-attr]
        parameters=parameters,
        data=data,
        n=int(e["mult"].sum()),
        n_changed=n_changed,
        n_changed_by_category=by_category,
        n_changed_by_stratum=by_stratum,
        details=details,
        notes=notes,
        table=None,
        **_native_fields(eng, comp),
    )
