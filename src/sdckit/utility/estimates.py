"""``estimates_change``: how the estimates a data user publishes move between the original
file and its protected version.

Layout: :func:`_validated` checks everything once and reads the arrays (through the
data-access helpers of :mod:`._access`); :func:`_domain_rows`, :func:`_mean_rows` and
:func:`_coefficient_rows` compute each family of estimates in both files with the kernels of
:mod:`sdckit._core.estimates`; the result class is in :mod:`sdckit.results.estimates`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .._assessed import Assessed, Headline
from .._core import estimates as K
from .._declare import Param, declare
from .._prepare import weight_problems
from .._validation import (
    as_missing_codes,
    as_name_list,
    check_column,
    mixed_type_problems,
    raise_problems,
)
from ..engines import in_memory_engine, local_records
from ..results.estimates import EstimatesResult
from ..scenario import accepts_scenario
from . import _access as access

__all__ = ["EstimatesResult", "estimates_change", "estimates_of_another_file"]

#: column kinds a domain variable may have (labels) and a numeric variable may have
_LABEL_KINDS = ("integer", "float", "boolean", "text", "categorical", "null")
_NUMBER_KINDS = ("integer", "float", "null")


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("variables", "columns", role="numeric_keys"),
    Param("weight"),
    Param("household"),
    Param("domains", "columns", role="domains"),
    Param("max_categories", "int"),
    Param("confidence", "number"),
    Param("min_records", "int"),
    Param("missing"),
    inputs=("original", "protected"),
    assessed=Assessed(
        needs=(),
        headlines=(
            Headline(
                "mean_abs_relative_change",
                "the mean absolute relative change of the published estimates",
                "lower",
                "mean_abs_relative_change",
            ),
        ),
        order=140,
        part="estimates",
        variants_only=True,
    ),
)
def estimates_change(
    original,
    protected,
    *,
    keys=None,
    variables=None,
    weight=None,
    household=None,
    domains=None,
    max_categories: int = 12,
    confidence: float = 0.95,
    min_records: int = 5,
    missing=None,
    engine=None,
) -> EstimatesResult:
    r"""The estimates a data user publishes, computed from the original and from the protected
    file, with the relative change and whether the original confidence interval covers the
    protected value.

    Rows are paired by position. For each domain variable D and each category c of D in the
    original, with design weights :math:`w_i`:

    * ``total``: the estimated population :math:`\hat N_c = \sum_i w_i [D_i = c]`;
    * ``share``: :math:`\hat N_c / \sum_i w_i [D_i \text{ observed}]`;
    * ``mean`` of each numeric variable y:
      :math:`\sum_i w_i y_i [D_i = c] / \sum_i w_i [D_i = c]` over the records with y observed;

    and the overall ``mean`` of each y, and ``coefficient``: the weighted least-squares fit of
    the first numeric variable on an intercept and the indicators of the domain variables'
    categories (main effects, each variable against its most frequent category among the
    original's complete cases), one estimate per indicator (the intercept left out).

    The protected file is read the way a data user reads it: a record whose domain value is
    missing (suppressed) is left out of that domain's estimates (complete cases for the
    regression), a missing y is left out of its means, and a category that no longer occurs
    (recoded away, every record suppressed) makes its estimates not estimable (``protected``
    None, with the reason). The relative change is (protected - original) / |original|.

    Standard errors of the original estimates come from linearisation: each estimate's
    influence values :math:`z_i` (total: :math:`w_i [D_i = c]`; a ratio
    :math:`\hat R = \sum w a / \sum w b`: :math:`w_i (a_i - \hat R b_i) / \sum w b`; WLS:
    :math:`(X'WX)^{-1} x_i w_i e_i`) are summed within households (the ultimate clusters; each
    record is its own cluster without ``household``), and

    .. math:: \widehat{\mathrm{var}} = \frac{G}{G - 1} \sum_h (z_h - \bar z)^2

    over the G clusters of the file. This is the with-replacement approximation of a one-stage
    cluster design: no finite-population correction, no strata. The interval is the estimate
    :math:`\pm z_{(1 + \text{confidence})/2}` SE.

    Parameters
    ----------
    original, protected : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The same records in the same order, with the same columns.
    keys : str or list of str, optional
        Categorical key variables: the candidates for the domains when ``domains`` is None.
    variables : str or list of str, optional
        Numeric variables whose means are estimated; the first one is the response of the
        regression. None: totals and shares only.
    weight : str, optional
        Design weights (numeric, > 0 in both files); None: every record has weight 1 and totals
        are counts.
    household : str, optional
        Household (cluster) identifier of the original file, for the standard errors.
    domains : str or list of str, optional
        Categorical variables whose categories define the domains. None: the keys with 2 to
        ``max_categories`` categories in the original, in key order.
    max_categories : int, default 12
        The most categories a key may have to be chosen as a domain automatically.
    confidence : float, default 0.95
        Level of the confidence intervals, in (0, 1).
    min_records : int, default 5
        An estimate that rests on fewer records than this (a domain category, its observed
        values of a variable, or its complete cases for a coefficient) is not shown, in the
        original or the protected file (a mean over one record is that record's value); the row
        says why.
    missing : value or list of values, optional
        Codes to treat as missing (e.g. ``-999``) in addition to null / NaN, in both files.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory:
        an engine that keeps the records (DuckDB, Spark) is refused.

    Returns
    -------
    EstimatesResult

    Raises
    ------
    SdcError
        Files of different lengths, a column absent from a file (:class:`MissingColumnError`),
        a non-numeric or infinite variable, a missing, zero or negative weight, a missing
        household id, ``confidence`` outside (0, 1), ``max_categories`` < 2, nothing to
        estimate.

    Notes
    -----
    Cost: O(n) per estimate (one pass over the records for each category's standard error),
    O(n p) for the regression with p indicator columns.

    References
    ----------
    Woodruff (1971), A simple method for approximating the variance of a complicated estimate,
    JASA 66; Binder (1983), On the variances of asymptotically normal estimators from complex
    surveys, International Statistical Review 51; Wolter (2007), Introduction to Variance
    Estimation, ch. 6 (Taylor series methods); Templ, Kowarik & Meindl (2015), Statistical
    disclosure control for micro-data using the R package sdcMicro (utility of estimates).
    """
    eng = in_memory_engine(engine, "estimates_change", original)
    inp = _validated(
        original, protected, keys, variables, weight, household, domains, max_categories, confidence, missing, eng
    )
    return _estimates(inp, min_records)


def estimates_of_another_file(original, other, *, min_records: int = 5, engine=None, **roles) -> EstimatesResult:
    """:func:`estimates_change` of a file whose records are not the original's (a synthetic
    file: any number of records, no pairing); ``roles`` as there (``keys``, ``variables``,
    ``weight``, ``household``, ``domains``, ``max_categories``, ``confidence``, ``missing``).
    The other file's totals are on its own weights; without weights each of its records stands
    for n_original / n_other records, so that its totals are on the original's scale (a synthetic
    file of another size; shares, means and coefficients do not change)."""
    eng = in_memory_engine(engine, "estimates_change", original)
    args = {k: roles.get(k) for k in ("keys", "variables", "weight", "household", "domains", "missing")}
    inp = _validated(original, other, args["keys"], args["variables"], args["weight"], args["household"],
                     args["domains"], roles.get("max_categories", 12), roles.get("confidence", 0.95), args["missing"],
                     eng, paired=False)  # fmt: skip
    if args["weight"] is None and inp.w_p.size:
        inp = replace(inp, w_p=inp.w_p * (inp.n / inp.w_p.size))
    return _estimates(inp, min_records)


def _estimates(inp: _Input, min_records) -> EstimatesResult:
    inp = replace(inp, min_records=int(min_records))  # checked by the declaration
    notes = list(inp.notes)
    rows = _domain_rows(inp) + _mean_rows(inp) + _coefficient_rows(inp, notes)
    z = K.normal_quantile(inp.confidence)
    return EstimatesResult(
        n=inp.n,
        rows=tuple(_finish(r, z) for r in rows),
        domains=tuple(inp.domains),
        variables=tuple(inp.variables),
        weighted=inp.weighted,
        confidence=inp.confidence,
        notes=tuple(notes),
        backend=inp.backend,
        records=local_records(),
    )


# ----------------------------------------------------------------------------------------------
# the validated input
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Input:
    """Both files read once: per domain its codes in each file and labels, the numeric
    variables (n, p) with NaN for missing, the weights of each file and the cluster ids."""

    n: int
    domains: list
    codes_o: list
    codes_p: list
    labels: list
    variables: list
    Y_o: np.ndarray
    Y_p: np.ndarray
    w_o: np.ndarray
    w_p: np.ndarray
    cluster: np.ndarray
    n_clusters: int
    weighted: bool
    confidence: float
    notes: list
    backend: str
    min_records: int = 5


def _validated(
    original,
    protected,
    keys,
    variables,
    weight,
    household,
    domains,
    max_categories,
    confidence,
    missing,
    eng,
    paired: bool = True,
) -> _Input:
    """Check the roles and both files once (the declaration checks each option); read and code
    the columns."""
    conf, max_cat = float(confidence), int(max_categories)
    roles = _roles(keys, variables, domains, weight, household)
    miss = as_missing_codes(missing)
    t_o, t_p = access.read_pair(original, protected, eng)
    _require_pair(t_o, t_p, roles, paired)
    notes: list[str] = []
    coded = {
        v: access.encode_pair(v, t_o, t_p, miss, eng)
        for v in (roles["domains"] if domains is not None else roles["keys"])
    }
    chosen = roles["domains"] if domains is not None else _auto_domains(roles["keys"], coded, max_cat, notes)
    var_names = roles["variables"]
    Y_o, Y_p, problems = _numbers(t_o, t_p, var_names, miss)
    if not chosen and not var_names:
        problems.append(
            "domains: no domain variable and no numeric variable; expected domains=, keys= with 2 to "
            f"{max_cat} categories, or variables="
        )
    raise_problems(problems)
    w_name, hh_name = (roles[r][0] if roles[r] else None for r in ("weight", "household"))
    cluster, n_cl = _clusters(t_o, hh_name, eng)
    return _Input(
        n=t_o.n,
        domains=list(chosen),
        codes_o=[coded[d][0] for d in chosen],
        codes_p=[coded[d][1] for d in chosen],
        labels=[coded[d][2] for d in chosen],
        variables=var_names,
        Y_o=Y_o,
        Y_p=Y_p,
        w_o=_weights(t_o, w_name),
        w_p=_weights(t_p, w_name),
        cluster=cluster,
        n_clusters=n_cl,
        weighted=w_name is not None,
        confidence=conf,
        notes=notes + _new_category_notes(chosen, coded),
        backend=t_o.backend,
    )


def _roles(keys, variables, domains, weight, household) -> dict:
    """The column roles as lists of names (a weight and a household: one name or none)."""
    return {
        "keys": as_name_list(keys, "keys", allow_empty=True),
        "variables": as_name_list(variables, "variables", allow_empty=True),
        "domains": [] if domains is None else as_name_list(domains, "domains"),
        "weight": [c] if (c := check_column(weight, "weight")) else [],
        "household": [c] if (c := check_column(household, "household")) else [],
    }


def _numbers(t_o, t_p, names, miss) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The numeric variables of both files (NaN = missing) and the problems (infinite values)."""
    Y_o, Y_p = access.float_matrix(t_o, names, miss), access.float_matrix(t_p, names, miss)
    problems = [
        f"variables: column {names[j]} of the {label} file holds infinite values; expected finite numbers "
        "(a missing value as null or NaN)"
        for label, Y in (("original", Y_o), ("protected", Y_p))
        for j in np.flatnonzero(np.isinf(Y).any(axis=0))
    ]
    return Y_o, Y_p, problems


def _require_pair(t_o, t_p, roles, paired: bool = True) -> None:
    """The two files pair by position (unless not ``paired``) and hold every named column with a
    usable type."""
    absent = [
        m
        for label, t in (("original", t_o), ("protected", t_p))
        for param, names in roles.items()
        if (m := access.absent_columns(t, names, f"{param} ({label} file)"))
    ]
    raise_problems(absent, missing_column=True)
    if paired and t_o.n != t_p.n:
        raise_problems(
            [
                f"protected: the file has {t_p.n} records and the original {t_o.n}; expected the same records "
                "in the same order (rows are paired by position)"
            ]
        )
    if t_o.n == 0:
        raise_problems(["original: the file has no records; expected at least one"])
    raise_problems(_column_problems(t_o, t_p, roles))


def _column_problems(t_o, t_p, roles) -> list[str]:
    """Types of the columns in both files (counts and types only, never values)."""
    out: list[str] = []
    for label, t in (("original", t_o), ("protected", t_p)):
        for v in roles["variables"]:
            if t.kind(v) not in _NUMBER_KINDS:
                out.append(f"variables: column {v} of the {label} file has type {t.dtype_name(v)}; expected numbers")
        for param in ("keys", "domains"):
            for v in roles[param]:
                if t.kind(v) not in _LABEL_KINDS:
                    out.append(
                        f"{param}: column {v} of the {label} file has type {t.dtype_name(v)}; expected "
                        "categories (text, numbers, booleans or a categorical)"
                    )
        for param in ("keys", "domains", "variables"):
            out += [f"{m} ({label} file)" for m in mixed_type_problems(t, roles[param], param)]
        for w in roles["weight"]:
            out += [f"{m} ({label} file)" for m in _weight_problems(t, w)]
    for h in roles["household"]:
        if t_o.n_missing(h):
            out.append(
                f"household: column {h} is missing for {t_o.n_missing(h)} record(s) of the original file; every "
                "record needs a household id"
            )
    return out


def _weight_problems(table, name) -> list[str]:
    """The weight column's problems: missing, infinite, negative (the roles' own check) or zero
    (a record with weight 0 represents nobody)."""
    out = weight_problems(table, name, allow_zero=True)
    if not out and table.float_summary(name)["n_zero"]:
        k = table.float_summary(name)["n_zero"]
        out.append(f"weight: column {name} has {k} zero value(s); expected design weights > 0")
    return out


def _auto_domains(keys, coded, max_cat, notes) -> list[str]:
    """The keys with 2..max_cat categories observed in the original, in key order (notes say
    which were left out and why)."""
    sizes = {k: int(np.unique(coded[k][0][coded[k][0] >= 0]).size) for k in keys}
    chosen = [k for k in keys if 2 <= sizes[k] <= max_cat]
    many = [f"{k} ({sizes[k]})" for k in keys if sizes[k] > max_cat]
    few = [k for k in keys if sizes[k] < 2]
    if keys:
        notes.append(
            f"domains chosen automatically: the keys with 2 to {max_cat} categories ({', '.join(chosen) or 'none'})"
        )
    if many:
        notes.append(f"keys left out for having more than {max_cat} categories: {', '.join(many)}")
    if few:
        notes.append(f"keys left out for having fewer than 2 categories: {', '.join(few)}")
    return chosen


def _new_category_notes(domains, coded) -> list[str]:
    """A note per domain whose protected file holds categories the original lacks (recoded)."""
    out = []
    for d in domains:
        co, cp, labels = coded[d]
        seen_o = np.zeros(len(labels) + 1, bool)
        seen_o[co] = True
        seen_p = np.zeros(len(labels) + 1, bool)
        seen_p[cp] = True
        k = int(np.count_nonzero(seen_p[:-1] & ~seen_o[:-1]))
        if k:
            out.append(
                f"{d}: the protected file has {k} categor{'y' if k == 1 else 'ies'} the original lacks "
                "(recoded); estimates are compared on the original's categories"
            )
    return out


def _weights(table, name) -> np.ndarray:
    return np.ones(table.n) if name is None else table.floats([name])[:, 0]


def _clusters(table, name, eng) -> tuple[np.ndarray, int]:
    """Cluster ids 0..G-1 of the records (each record its own cluster without a household)."""
    if name is None:
        return np.arange(table.n), table.n
    codes, labels = eng.encode_column(table, name)
    return codes.astype(np.int64), len(labels)


# ----------------------------------------------------------------------------------------------
# the estimates
# ----------------------------------------------------------------------------------------------
def _row(kind, variable, domain, category, original, se, protected, reason) -> dict:
    return {
        "kind": kind,
        "variable": variable,
        "domain": domain,
        "category": category,
        "original": original,
        "se": se,
        "protected": protected,
        "reason": reason,
    }


def _text(label) -> str:
    """A category label as text (an integer-valued float as an integer: 3.0 -> "3")."""
    if isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label)


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _domain_rows(inp: _Input) -> list[dict]:
    """Totals, shares and means of every category of every domain, in both files."""
    rows: list[dict] = []
    for d, co, cp, labels in zip(inp.domains, inp.codes_o, inp.codes_p, inp.labels):
        L = len(labels)
        tot_o, sh_o = K.domain_totals(co, L, inp.w_o, inp.cluster, inp.n_clusters)
        tot_p, sh_p = K.domain_totals(cp, L, inp.w_p)
        means = [
            (
                K.domain_means(co, L, inp.Y_o[:, j], inp.w_o, inp.cluster, inp.n_clusters),
                K.domain_means(cp, L, inp.Y_p[:, j], inp.w_p),
            )
            for j in range(len(inp.variables))
        ]
        for c in np.flatnonzero(tot_o.n > 0):
            gone = None if tot_p.n[c] else "the category does not occur in the protected file (recoded or suppressed)"
            cat = _text(labels[c])
            for kind, o, p in (("total", tot_o, tot_p), ("share", sh_o, sh_p)):
                rows.append(
                    _withheld(
                        _row(kind, None, d, cat, o.estimate[c], o.se[c], None if gone else p.estimate[c], gone),
                        o.n[c],
                        p.n[c],
                        inp.min_records,
                    )
                )
            for v, (o, p) in zip(inp.variables, means):
                rows.append(_withheld(_mean_row(v, d, cat, o, p, c, gone), o.n[c], p.n[c], inp.min_records))
    return rows


def _withheld(row: dict, n_original: int, n_protected: int, m: int) -> dict:
    """``row`` with its estimates removed where they rest on fewer than ``m`` records (a mean over
    one record is that record's value): the original's (and then every figure), else the
    protected file's."""
    if 0 < n_original < m:
        why = f"fewer than {m} records in the original: not shown (it could reveal a record's value)"
        return {**row, "original": None, "se": None, "protected": None, "reason": why}
    if 0 < n_protected < m and row["protected"] is not None:
        why = f"fewer than {m} records in the protected file: not shown (it could reveal a record's value)"
        return {**row, "protected": None, "reason": why}
    return row


def _mean_row(v, d, cat, o, p, c, gone) -> dict:
    if not o.n[c]:
        return _row("mean", v, d, cat, None, None, None, f"{v} is not observed in this domain in the original")
    if gone or not p.n[c]:
        why = gone or f"{v} is not observed in this domain in the protected file"
        return _row("mean", v, d, cat, o.estimate[c], o.se[c], None, why)
    return _row("mean", v, d, cat, o.estimate[c], o.se[c], p.estimate[c], None)


def _mean_rows(inp: _Input) -> list[dict]:
    """The overall mean of every numeric variable (one domain: every record)."""
    one = np.zeros(inp.n, dtype=np.int32)
    rows = []
    for j, v in enumerate(inp.variables):
        o = K.domain_means(one, 1, inp.Y_o[:, j], inp.w_o, inp.cluster, inp.n_clusters)
        p = K.domain_means(np.zeros(len(inp.Y_p), dtype=np.int32), 1, inp.Y_p[:, j], inp.w_p)
        rows.append(_mean_row(v, None, None, o, p, 0, None))
    return rows


def _coefficient_rows(inp: _Input, notes: list) -> list[dict]:
    """WLS of the first numeric variable on the domains' indicators, in both files (a note
    names each domain's reference category)."""
    if not inp.variables or not inp.domains:
        return []
    y = inp.variables[0]
    refs = _references(inp)
    columns = _design_columns(inp, refs)
    fit_o = K.wls(inp.Y_o[:, 0], inp.codes_o, columns, inp.w_o, inp.cluster, inp.n_clusters)
    fit_p, where_p, lost = _protected_fit(inp, columns, refs)
    notes.append(
        f"coefficients of {y}: each domain against its most frequent category ("
        + ", ".join(f"{d}={_text(lab[r])}" for d, lab, r in zip(inp.domains, inp.labels, refs))
        + ")"
    )
    cc_o = _complete(inp.Y_o[:, 0], inp.codes_o)
    cc_p = _complete(inp.Y_p[:, 0], inp.codes_p)
    rows = []
    for a, (j, c) in enumerate(columns):
        d, cat = inp.domains[j], _text(inp.labels[j][c])
        n_o = int(np.count_nonzero(cc_o & (inp.codes_o[j] == c)))
        n_p = int(np.count_nonzero(cc_p & (inp.codes_p[j] == c)))
        b = where_p.get((j, c))
        if not fit_o.kept[a]:
            rows.append(
                _row("coefficient", y, d, cat, None, None, None, "aliased with other indicators in the original")
            )
            continue
        if j in lost:
            why = f"the reference category of {d} does not occur in the protected complete cases"
        elif fit_p is None or not fit_p.kept[b]:
            why = "the category does not occur in the protected complete cases (or is aliased there)"
        else:
            why = None
        row = _row("coefficient", y, d, cat, fit_o.beta[a], fit_o.se[a], None if why else fit_p.beta[b], why)
        rows.append(_withheld(row, n_o, n_p, inp.min_records))
    return rows


def _complete(y, codes) -> np.ndarray:
    """The complete cases: y and every domain observed."""
    cc = ~np.isnan(y)
    for co in codes:
        cc &= co >= 0
    return cc


def _references(inp: _Input) -> list[int]:
    """Each domain's reference category: its most frequent category among the original's
    complete cases, by records (ties: the first label)."""
    cc = _complete(inp.Y_o[:, 0], inp.codes_o)
    return [int(np.argmax(np.bincount(co[cc], minlength=len(lab)))) for co, lab in zip(inp.codes_o, inp.labels)]


def _design_columns(inp: _Input, refs) -> list:
    """The indicator columns (domain index, category code): every category of each domain that
    occurs among the original's complete cases, except the domain's reference."""
    cc = _complete(inp.Y_o[:, 0], inp.codes_o)
    columns = []
    for j, (co, ref) in enumerate(zip(inp.codes_o, refs)):
        present = np.bincount(co[cc], minlength=len(inp.labels[j])) > 0
        columns += [(j, int(c)) for c in np.flatnonzero(present) if c != ref]
    return columns


def _protected_fit(inp: _Input, columns, refs):
    """The same regression in the protected file: ``(fit or None, {column: its index in the
    fit}, domains whose reference category is lost)``. A domain whose reference category does
    not occur among the protected complete cases is left out of the model (its coefficients
    would change meaning), but its missing values still exclude records (complete cases)."""
    cc = _complete(inp.Y_p[:, 0], inp.codes_p)
    y = np.where(cc, inp.Y_p[:, 0], np.nan)
    lost = {j for j, cp in enumerate(inp.codes_p) if not np.any(cp[cc] == refs[j])}
    kept = [j for j in range(len(inp.domains)) if j not in lost]
    position = {j: k for k, j in enumerate(kept)}
    mine = [(j, c) for j, c in columns if j not in lost]
    if not mine:
        return None, {}, lost
    fit = K.wls(y, [inp.codes_p[j] for j in kept], [(position[j], c) for j, c in mine], inp.w_p)
    return fit, {col: b for b, col in enumerate(mine)}, lost


def _finish(r: dict, z: float) -> dict:
    """A row with its relative change, confidence interval and coverage (the keys of
    :data:`sdckit.results.estimates.COLUMNS`, numbers as Python floats, None when undefined)."""
    o = None if r["original"] is None else _num(r["original"])
    p = None if r["protected"] is None else _num(r["protected"])
    se = None if r["se"] is None else _num(r["se"])
    rel = None if o is None or p is None or o == 0 else (p - o) / abs(o)
    low = high = covered = None
    if o is not None and se is not None:
        low, high = o - z * se, o + z * se
        covered = None if p is None else bool(low <= p <= high)
    return {
        "kind": r["kind"],
        "variable": r["variable"],
        "domain": r["domain"],
        "category": r["category"],
        "original": o,
        "protected": p,
        "relative_change": rel,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "covered": covered,
        "reason": r["reason"],
    }
