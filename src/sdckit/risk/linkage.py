"""Record-linkage risk and Mlodak's external risk.

``record_linkage_risk`` links every protected record to the original file, by distance
(nearest and second-nearest original), by Fellegi-Sunter probabilistic linkage, or by a
one-to-one assignment, and reports how often the true partner is found. ``external_risk``
pairs an alternative source an intruder may hold with the released file.

Layout: the data-access helpers come first (the only code that touches the callers' tables,
through the engine); then, per measure, the validated input (a frozen dataclass built once at
the boundary by one ``_validate_...`` step), one function per step, and the public function.
The kernels live in :mod:`sdckit._core.linkage` and :mod:`sdckit._core.linkage_external`
(imported when a measure runs); the result classes in :mod:`sdckit.results.linkage`,
re-exported here.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._assessed import Assessed, Headline
from .._declare import Options, Param, declare, options
from .._deprecation import renamed_parameters
from .._errors import SdcError, SdcWarning, warn
from .._progress import step
from .._validation import (
    as_missing_codes,
    as_name_list,
    check_bins,
    check_column,
    check_comparison_levels,
    check_em_start,
    check_rule,
    check_scales,
    raise_problems,
)
from ..engines import STORED, get_engine, in_memory_engine, local_records
from ..results.linkage import ExternalRiskResult, LinkageResult
from ..scenario import accepts_scenario

__all__ = [
    "ExternalPairing",
    "ExternalRiskResult",
    "LinkageDistance",
    "LinkageProbabilistic",
    "LinkageResult",
    "external_risk",
    "record_linkage_risk",
]


# ----------------------------------------------------------------------------------------------
# data access: the only functions here that touch the callers' tables (through the engine)
# ----------------------------------------------------------------------------------------------
def _tables(first, second, names, first_param: str, second_param: str, *, same_records: bool, engine=None):
    """Both tables, the variables present in each, the first not empty; with ``same_records``
    the two have the same number of records (row i of one is row i of the other)."""
    engine = get_engine(engine)
    t1, t2 = engine.table(first, first_param), engine.table(second, second_param)
    t1.require(names, f"variables ({first_param})")
    t2.require(names, f"variables ({second_param})")
    if t1.n == 0:
        raise SdcError(f"{first_param}: the table has no records; expected at least one")
    if same_records and t2.n != t1.n:
        raise SdcError(
            f"{second_param}: has {t2.n} records but {first_param} has {t1.n}; expected the same records "
            "in the same order (row i of one file is row i of the other)"
        )
    return t1, t2


def _require_id(t1, t2, id, first_param: str, second_param: str) -> None:
    """The identifier column is present in both tables."""
    t1.require([id], f"id ({first_param})")
    t2.require([id], f"id ({second_param})")


def _is_numeric(table, name: str) -> bool:
    """Numbers (booleans, text and categories are categorical)."""
    return table.is_numeric(name)


def _is_float(table, name: str) -> bool:
    return table.kind(name) == "float"


def _numeric_columns(table, names, file_param: str) -> np.ndarray:
    """The named numeric columns as a float matrix (a copy; NaN = missing)."""
    raise_problems(
        [
            f"variables: column {c} of {file_param} has type {table.dtype_name(c)}; expected numbers"
            for c in names
            if not table.is_numeric(c)
        ]
    )
    X = np.array(table.floats(list(names)), dtype=float, copy=True, order="C").reshape(table.n, len(names))
    bad = [c for j, c in enumerate(names) if np.isinf(X[:, j]).any()]
    if bad:
        raise SdcError(
            f"variables: column(s) {', '.join(bad)} of {file_param} contain infinite values; expected finite numbers"
        )
    return X


def _same_kind(t1, t2, name: str, first: str, second: str, param: str = "variables") -> bool:
    """Whether the column holds numbers in both files (an error when only in one)."""
    numeric = _is_numeric(t1, name)
    if numeric != _is_numeric(t2, name):
        raise SdcError(
            f"{param}: column {name} has type {t1.dtype_name(name)} in {first} but "
            f"{t2.dtype_name(name)} in {second}; expected the same kind of values in both files"
        )
    return numeric


def _joint_codes(t1, t2, name: str, first: str, second: str, *, missing=(), param: str = "variables", engine=None):
    """Integer codes of one column of two files on one code table (-1 = missing: null, NaN or a
    ``missing`` code) and the number of codes; numbers are compared as numbers, anything else
    as text."""
    _same_kind(t1, t2, name, first, second, param)
    (c1, c2), labels = get_engine(engine).encode_joint([t1, t2], name, tuple(missing) or None)
    return c1.astype(np.int64), c2.astype(np.int64), len(labels)


def _declared_order(t1, t2, name: str, first: str, second: str):
    """The declared categories of an ordered categorical column (Enum) of the first file, else
    None; an error when the two files hold different kinds of values."""
    _same_kind(t1, t2, name, first, second)
    return t1.categories(name)


def _joint_labels(t1, t2, name: str, missing, engine=None):
    """Codes of one column of two files on one sorted table of labels (Python values), and
    whether the labels are numbers."""
    (c1, c2), labels = get_engine(engine).encode_joint([t1, t2], name, tuple(missing) or None)
    return c1.astype(np.int64), c2.astype(np.int64), list(labels), _is_numeric(t1, name)


# ----------------------------------------------------------------------------------------------
# shared checks
# ----------------------------------------------------------------------------------------------
def _per_variable(value, names, param: str, default, check) -> dict:
    """A per-variable setting given as one value, a list in variable order or a dict."""
    if value is None:
        return {v: default for v in names}
    if isinstance(value, Mapping):
        unknown = [str(k) for k in value if k not in names]
        raise_problems(
            [f"{param}: variable {k} is not among the variables; expected one of {', '.join(names)}" for k in unknown]
        )
        return {v: check(value.get(v, default), f"{param}[{v!r}]") for v in names}
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != len(names):
            raise SdcError(f"{param}: got {len(value)} values for {len(names)} variables; expected one per variable")
        return {v: check(x, f"{param}[{v!r}]") for v, x in zip(names, value)}
    return {v: check(value, param) for v in names}


# ----------------------------------------------------------------------------------------------
# record linkage: validated input
# ----------------------------------------------------------------------------------------------
_METHODS = ("distance", "probabilistic", "assignment")
_STANDARDIZE = ("original", "separate", "none")
_METRICS = ("euclidean", "mahalanobis")


@dataclass(frozen=True)
class _LinkageArgs:
    """``record_linkage_risk``'s arguments, checked once."""

    original: Any
    protected: Any
    variables: tuple
    method: str
    standardize: str
    metric: str
    variable_weights: dict | None
    second_weight: float
    categorical: frozenset
    bins: dict
    mu: float
    lam: float
    em_start: tuple
    missing: tuple
    engine: Any = None  # the engine that holds both tables
    levels: dict | None = None  # variable -> cut points (None: agree/disagree), or None throughout


def _validate_levels(comparison_levels, names, numeric) -> dict | None:
    """``comparison_levels`` per variable: cut points for the numeric variables given, None
    (agree / disagree) for the others; None when not given at all."""
    if comparison_levels is None:
        return None
    if not isinstance(comparison_levels, Mapping):  # one setting for every numeric variable
        cuts = check_comparison_levels(comparison_levels)
        return {v: (cuts if v in numeric else None) for v in names}
    given = _per_variable(comparison_levels, names, "comparison_levels", None, lambda v, p: v)
    given = {v: x for v, x in given.items() if x is not None}
    raise_problems(
        [
            f"comparison_levels: variable {v} is compared as categories; expected levels for numeric variables only"
            for v in given
            if v not in numeric
        ]
    )
    return {v: (check_comparison_levels(given[v], f"comparison_levels[{v!r}]") if v in given else None) for v in names}


def _validate_linkage(
    original,
    protected,
    variables,
    method,
    *,
    standardize,
    metric,
    variable_weights,
    second_weight,
    categorical,
    bins,
    mu,
    lam,
    em_start,
    missing,
    engine=None,
    comparison_levels=None,
) -> _LinkageArgs:
    sw = float(second_weight)  # method, standardize, metric, second_weight, mu, lam: checked by the declaration
    names = as_name_list(variables, "variables")
    t1, t2 = _tables(original, protected, names, "original", "protected", same_records=True, engine=engine)
    weights = None
    if variable_weights is not None:
        if metric == "mahalanobis":
            raise SdcError(
                "variable_weights: variable weights apply to the Euclidean distance; expected metric='euclidean'"
            )
        weights = _per_variable(
            variable_weights, names, "variable_weights", 1.0, lambda v, p: check_rule("variable_weights", v, p)
        )
    cat = as_name_list(categorical, "categorical", allow_empty=True)
    raise_problems(
        [
            f"categorical: {v} is not among the variables; expected one of {', '.join(names)}"
            for v in cat
            if v not in names
        ]
    )
    numeric = [v for v in names if v not in cat and _is_numeric(t1, v)]
    if isinstance(bins, Mapping):
        b = _per_variable(bins, numeric, "bins", 10, check_bins)
    else:  # one setting (a number of bins or a list of edges) for every numeric variable
        one = check_bins(bins)
        b = {v: one for v in numeric}
    levels = _validate_levels(comparison_levels, names, numeric)
    if levels is not None and method != "probabilistic":
        raise SdcError(
            f"comparison_levels: levels apply to probabilistic linkage; expected method='probabilistic' (got {method!r})"
        )
    return _LinkageArgs(
        t1,
        t2,
        tuple(names),
        method,
        standardize,
        metric,
        weights,
        sw,
        frozenset(cat),
        b,
        float(mu),
        float(lam),
        check_em_start(em_start),
        as_missing_codes(missing),
        get_engine(engine),
        levels,
    )


# ----------------------------------------------------------------------------------------------
# record linkage: steps
# ----------------------------------------------------------------------------------------------
def _bin_codes(x: np.ndarray, setting, reference: np.ndarray):
    """Bin of every value (-1 = missing): quantile bins of the original's values, or given edges."""
    if isinstance(setting, np.ndarray):
        edges = setting
    else:
        obs = reference[~np.isnan(reference)]
        edges = np.unique(np.quantile(obs, np.arange(1, setting) / setting)) if obs.size else np.zeros(0)
    return np.where(np.isnan(x), -1, np.searchsorted(edges, np.nan_to_num(x), side="right")), edges.size + 1


def _field_codes(inp: _LinkageArgs):
    """Agreement codes of every field in both files (-1 = missing): bins of numeric variables,
    shared category codes of the others."""
    t1, t2 = inp.original, inp.protected
    n, k = t1.n, len(inp.variables)
    ca, cb = np.empty((n, k), np.int64), np.empty((n, k), np.int64)
    cards = []
    for j, v in enumerate(inp.variables):
        if v in inp.bins:
            x = _numeric_columns(t1, [v], "original")[:, 0]
            y = _numeric_columns(t2, [v], "protected")[:, 0]
            ca[:, j], card = _bin_codes(x, inp.bins[v], x)
            cb[:, j], _ = _bin_codes(y, inp.bins[v], x)
        else:
            ca[:, j], cb[:, j], card = _joint_codes(
                t1, t2, v, "original", "protected", missing=inp.missing, engine=inp.engine
            )
            unknown = np.setdiff1d(np.unique(cb[cb[:, j] >= 0, j]), np.unique(ca[ca[:, j] >= 0, j]))
            if unknown.size:
                raise SdcError(
                    f"variables: column {v} of protected has {unknown.size} categories not in original; "
                    "expected the protected file to use the original's categories"
                )
        cards.append(card)
    if k > 20:
        raise SdcError(f"variables: {k} fields; probabilistic linkage handles at most 20 (2^K patterns)")
    return ca, cb, np.maximum(cards, 1)


def _classified(counts, W, cls, true_pat, texts, fit: dict, inp: _LinkageArgs):
    """Whether each true pair is classified as a link, and the ``em`` dict: the fit (m, u, p,
    iterations, converged), the link counts and precision, and the pattern table by weight."""
    is_link = cls[true_pat] == 2
    links, true_links = int(counts[cls == 2].sum()), int(is_link.sum())
    label = {2: "link", 1: "possible", 0: "non-link"}
    n_true = np.bincount(true_pat, minlength=W.size)
    patterns = [
        {
            "pattern": texts(g),
            "n_pairs": int(counts[g]),
            "n_true_pairs": int(n_true[g]),
            "weight": float(W[g]),
            "class": label[int(cls[g])],
        }
        for g in np.argsort(-W, kind="stable")
    ]
    em = {
        **fit,
        "n_links": links,
        "n_possible_links": int(counts[cls == 1].sum()),
        "n_true_links": true_links,
        "precision": (true_links / links) if links else None,
        "mu": inp.mu,
        "lam": inp.lam,
        "fields": list(inp.variables),
        "patterns": patterns,
    }
    return is_link.astype(float), em


def _fit(m, u, p, it, conv) -> dict:
    """The EM fit as the ``em`` dict holds it."""
    return {"m": m, "u": u, "p": float(p), "iterations": int(it), "converged": bool(conv)}


def _fellegi_sunter(ca, cb, cards, inp: _LinkageArgs):
    """EM on the agreement-pattern counts of all pairs, pattern classes, and whether each true
    pair is classified as a link."""
    step("Fellegi-Sunter EM")
    from .._core.linkage import classify_patterns, fellegi_sunter_em, pattern_counts, pattern_weights

    K = ca.shape[1]
    counts = pattern_counts(ca, cb, cards)
    m0, u0, p0 = inp.em_start
    m, u, p, it, conv = fellegi_sunter_em(counts, K, m0=m0, u0=u0, p0=p0)
    mg, ug, W = pattern_weights(m, u)
    cls = classify_patterns(mg, ug, W, inp.mu, inp.lam)
    agree = (ca == cb) & (ca >= 0) & (cb >= 0)
    true_pat = (agree * (1 << np.arange(K))).sum(axis=1)
    fit = _fit([float(x) for x in m], [float(x) for x in u], p, it, conv)
    return _classified(counts, W, cls, true_pat, lambda g: "".join(str(g >> j & 1) for j in range(K)), fit, inp)


def _probabilistic_linkage(inp: _LinkageArgs) -> LinkageResult:
    if inp.levels is not None:
        A, B, cuts, n_levels = _level_fields(inp)
        first, em = _level_fellegi_sunter(A, B, cuts, n_levels, inp)
    else:
        ca, cb, cards = _field_codes(inp)
        first, em = _fellegi_sunter(ca, cb, cards, inp)
    return LinkageResult(
        method="probabilistic",
        variables=inp.variables,
        n=inp.original.n,
        correct_first=first,
        em=em,
        second_weight=inp.second_weight,
        backend=inp.original.backend,
        records=local_records(),
        row_index=inp.original.index,
    )


def _level_fields(inp: _LinkageArgs):
    """The compared values of every field in both files as floats (the agreement codes of the
    agree/disagree fields, the raw values of the fields with cut points), the cut points (None:
    equal codes agree) and the number of levels of each field."""
    ca, cb, _ = _field_codes(inp)
    A, B = ca.astype(float), cb.astype(float)
    cuts = [inp.levels[v] for v in inp.variables]
    for j, v in enumerate(inp.variables):
        if cuts[j] is not None:
            A[:, j] = _numeric_columns(inp.original, [v], "original")[:, 0]
            B[:, j] = _numeric_columns(inp.protected, [v], "protected")[:, 0]
    n_levels = np.array([2 if c is None else c.size + 1 for c in cuts], dtype=np.int64)
    if float(np.prod(n_levels.astype(float))) > 2**20:
        raise SdcError(
            f"comparison_levels: {int(np.prod(n_levels.astype(float))):,} level patterns; expected at most "
            "2^20 (fewer fields or cut points)"
        )
    return A, B, cuts, n_levels


def _level_labels(cuts) -> list:
    """Names of the levels of one field, the closest first."""
    if cuts is None:
        return ["agree", "disagree"]
    return ["equal" if c == 0 else f"|difference| <= {c:g}" for c in cuts] + ["disagree"]


def _level_pattern_text(digits: np.ndarray, n_levels: np.ndarray) -> str:
    """A pattern as one digit per field, L_j - 1 for the closest level and 0 for disagree (two
    levels: 1 agree, 0 disagree, as the agree/disagree patterns)."""
    return "".join(str(int(n_levels[j] - 1 - d)) for j, d in enumerate(digits))


def _level_fellegi_sunter(A, B, cuts, n_levels, inp: _LinkageArgs):
    """EM on the level-pattern counts of all pairs, pattern classes, and whether each true pair
    is classified as a link."""
    step("Fellegi-Sunter EM with comparison levels")
    from .._core.linkage import classify_patterns
    from .._core.linkage_levels import level_of, level_pattern_counts, level_pattern_weights, levels_em, pattern_digits

    counts = level_pattern_counts(A, B, cuts, n_levels)
    m0, u0, p0 = inp.em_start
    m, u, p, it, conv = levels_em(counts, n_levels, m0=m0, u0=u0, p0=p0)
    mg, ug, W = level_pattern_weights(m, u, n_levels)
    cls = classify_patterns(mg, ug, W, inp.mu, inp.lam)
    radix = np.concatenate([[1], np.cumprod(n_levels[:-1])])
    true_pat = sum(radix[j] * level_of(A[:, j], B[:, j], cuts[j]) for j in range(len(cuts)))
    digits = pattern_digits(n_levels)
    per = [(m[j, :lj], u[j, :lj]) for j, lj in enumerate(n_levels)]
    fit = _fit([[float(x) for x in mj] for mj, _ in per], [[float(x) for x in uj] for _, uj in per], p, it, conv)
    first, em = _classified(counts, W, cls, true_pat, lambda g: _level_pattern_text(digits[g], n_levels), fit, inp)
    em["levels"] = {v: _level_labels(c) for v, c in zip(inp.variables, cuts)}
    em["level_weights"] = [[float(x) for x in np.log2(mj / uj)] for mj, uj in per]
    return first, em


def _standardised(X, Y, names, standardize):
    """Both files standardised (the original's mean and sd, or each its own); constant variables
    are dropped with a warning."""
    if standardize == "none":
        return X, Y, list(names)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-missing or one-value columns: sd NaN, dropped below
        mx, sx = np.nanmean(X, axis=0), np.nanstd(X, axis=0, ddof=1)
        my, sy = (mx, sx) if standardize == "original" else (np.nanmean(Y, axis=0), np.nanstd(Y, axis=0, ddof=1))
    keep = (sx > 0) & (sy > 0)
    dropped = [v for v, k in zip(names, keep) if not k]
    if dropped:
        if not keep.any():
            raise SdcError(
                f"variables: every variable ({', '.join(dropped)}) is constant; expected at least one "
                "variable with a positive standard deviation"
            )
        warn(f"variables: {', '.join(dropped)} constant (sd = 0) and dropped from the distance", SdcWarning)
    return (X[:, keep] - mx[keep]) / sx[keep], (Y[:, keep] - my[keep]) / sy[keep], [v for v, k in zip(names, keep) if k]


def _whitened(Xs, Ys, n_vars):
    """Mahalanobis distance as a Euclidean one: both files times the inverse Cholesky factor of
    the original's covariance."""
    if np.isnan(Xs).any() or np.isnan(Ys).any():
        raise SdcError("metric: the Mahalanobis distance needs complete data; expected no missing values")
    C = np.cov(Xs.T).reshape(n_vars, n_vars)
    try:
        L = np.linalg.cholesky(C)
    except np.linalg.LinAlgError:
        raise SdcError(
            "variables: the covariance of the original variables is singular; the Mahalanobis "
            "distance needs linearly independent variables"
        ) from None
    from scipy.linalg import solve_triangular

    return solve_triangular(L, Xs.T, lower=True).T, solve_triangular(L, Ys.T, lower=True).T


def _distance_space(inp: _LinkageArgs):
    """The matrices the distances are taken in, and the variables kept."""
    step("standardising")
    X = _numeric_columns(inp.original, inp.variables, "original")
    Y = _numeric_columns(inp.protected, inp.variables, "protected")
    Xs, Ys, used = _standardised(X, Y, inp.variables, inp.standardize)
    if inp.variable_weights is not None:
        sq = np.sqrt(np.array([inp.variable_weights[v] for v in used]))
        Xs, Ys = Xs * sq, Ys * sq
    if inp.metric == "mahalanobis":
        Xs, Ys = _whitened(Xs, Ys, len(used))
    return Xs, Ys, tuple(used)


def _assignment_linkage(inp: _LinkageArgs, Xs, Ys, used) -> LinkageResult:
    step("one-to-one assignment")
    if np.isnan(Xs).any() or np.isnan(Ys).any():
        raise SdcError(
            "method: one-to-one assignment needs complete data; expected no missing values (use method='distance')"
        )
    from .._core.linkage import assignment_links

    link = assignment_links(Xs, Ys)
    first = (link == np.arange(Xs.shape[0])).astype(float)
    return LinkageResult(
        method="assignment",
        variables=used,
        n=inp.original.n,
        correct_first=first,
        linked_to=link,
        second_weight=inp.second_weight,
        standardize=inp.standardize,
        metric=inp.metric,
        backend=inp.original.backend,
        records=local_records(),
        row_index=inp.original.index,
    )


def _distance_linkage(inp: _LinkageArgs, Xs, Ys, used) -> LinkageResult:
    step("nearest-neighbour search")
    from .._core.linkage import true_partner_ranks

    below, ties, nearest = true_partner_ranks(Xs, Ys)
    inv = np.where(ties > 0, 1.0 / np.maximum(ties, 1), 0.0)
    first = np.where(below == 0, inv, 0.0)
    second = np.where((below == 1) | ((below == 0) & (ties >= 2)), inv, 0.0)
    return LinkageResult(
        method="distance",
        variables=used,
        n=inp.original.n,
        correct_first=first,
        correct_second=second,
        linked_to=nearest,
        second_weight=inp.second_weight,
        standardize=inp.standardize,
        metric=inp.metric,
        backend=inp.original.backend,
        records=local_records(),
        row_index=inp.original.index,
    )


@options(
    "distance",
    Param("standardize", "choice", choices=_STANDARDIZE),
    Param("metric", "choice", "The distance of the distance-based linkage", choices=_METRICS),
    Param("variable_weights", "numbers", per_variable=True),
    Param("second_weight", "number"),
)
@dataclass(frozen=True)
class LinkageDistance(Options):
    """How :func:`record_linkage_risk` measures distances (``method="distance"`` and
    ``"assignment"``): the ``distance=`` record (or a mapping of its fields).

    Parameters
    ----------
    standardize : {"original", "separate", "none"}
        Standardisation (distance, assignment): the original's mean and sd for both files, each
        file its own, or none. Constant variables are dropped with a warning.
    metric : {"euclidean", "mahalanobis"}
        The distance of the distance-based linkage: Euclidean (optionally weighted per
        variable) or Mahalanobis with the original covariance.
    variable_weights : number, list or dict, optional
        Non-negative variable weights of the Euclidean distance.
    second_weight : float in [0, 1], default 1
        Weight of second-nearest links in the share linked.
    """

    standardize: str = "original"
    metric: str = "euclidean"
    variable_weights: Any = None
    second_weight: float = 1.0


@options(
    "probabilistic",
    Param("categorical", "columns"),
    Param("bins", "any"),
    Param("mu", "number"),
    Param("lam", "number"),
    Param("em_start", "any", "Starting values of the EM algorithm of probabilistic linkage"),
    Param("comparison_levels", "any", per_variable=True),
)
@dataclass(frozen=True)
class LinkageProbabilistic(Options):
    """How :func:`record_linkage_risk` links with ``method="probabilistic"`` (Fellegi-Sunter):
    the ``probabilistic=`` record (or a mapping of its fields).

    Parameters
    ----------
    categorical : list of str, optional
        Numeric variables to compare as categories (text columns always are).
    bins : int, list of edges, or dict per variable, default 10
        Discretisation of numeric variables.
    mu, lam : float, default 0.05
        Tolerated false-link and false non-link rates.
    em_start : (m, u, p), default (0.9, 0.1, 0.1)
        Starting values of the EM algorithm.
    comparison_levels : number, list of cut points, or dict per variable, optional
        The comparison levels of numeric fields (a tolerance t: equal, within t, disagree;
        t = 0: equal, disagree; a list: increasing cut points >= 0 on the absolute difference,
        at most 9). A dict gives them per variable; the fields without levels agree or
        disagree as without this option. Default: agree / disagree for every field.
    """

    categorical: Any = None
    bins: Any = 10
    mu: float = 0.05
    lam: float = 0.05
    em_start: Any = (0.9, 0.1, 0.1)
    comparison_levels: Any = None


@accepts_scenario
@renamed_parameters(positional=("method",))
@declare(
    "measure",
    Param("variables", "columns", "The variables linked on, present in both files", role="numeric_keys"),
    Param(
        "method",
        "choice",
        "The linkage: nearest distance, probabilistic (Fellegi-Sunter) or one-to-one assignment",
        choices=_METHODS,
    ),
    Param("missing"),
    inputs=("original", "protected"),
    renamed={"scale": "standardize", "weights": "variable_weights"},
    grouped=(LinkageDistance, LinkageProbabilistic),
    assessed=Assessed(
        needs=("numeric_keys",),
        headlines=(
            Headline(
                "share_linked",
                "share of records linked to their own original by distance",
                "lower",
                "share_linked",
                label="share linked by distance",
            ),
        ),
        order=100,
        variants_only=True,
        step=True,
        assess=False,
    ),
)
def record_linkage_risk(
    original,
    protected,
    variables,
    *,
    method: str = "distance",
    distance: LinkageDistance | dict | None = None,
    probabilistic: LinkageProbabilistic | dict | None = None,
    missing=None,
    engine=None,
) -> LinkageResult:
    r"""Re-identification risk by linking the protected file back to the original.

    ``method="distance"`` (Pagliuca & Seri 1999, Domingo-Ferrer & Torra 2001): variables
    standardised with the original's mean and sd (``standardize``), Euclidean distance
    (optionally weighted per variable, or Mahalanobis with the original covariance); every
    protected record is linked to its nearest and second-nearest originals (k-d tree, exact;
    never an n x n matrix). L_1, L_2 count true partners in first / second position; when t
    originals tie with the partner the record counts 1/t. The share linked is

    .. math:: (L_1 + w_2 L_2) / n

    with :math:`w_2` = ``second_weight`` (100 times it is the DLD score). Missing values:
    variables missing in either record are skipped and the squared distance is rescaled by
    p / (variables compared).

    ``method="probabilistic"`` (Fellegi & Sunter 1969): fields agree when equal (categorical) or
    in the same bin (numeric, ``bins`` quantile bins of the original or given edges); pattern
    counts over all n^2 pairs by hash joins and Moebius inversion; EM for m, u and p; patterns
    are links while their cumulative u <= ``mu`` and non-links while their cumulative m <=
    ``lam``. Share linked = share of true pairs classified as links.

    With ``comparison_levels`` a numeric field compares on ordered levels instead (Winkler's
    comparison levels): cut points :math:`0 \le c_1 < \dots < c_{L-1}` on the absolute
    difference give level l when :math:`c_{l-1} < |a - b| \le c_l` and the last level
    (disagree, also a missing value) beyond :math:`c_{L-1}`; one number t means the levels
    equal / within t / disagree (an intruder treats values within t as agreeing). m and u are
    estimated per field and level by EM (conditional independence):
    :math:`m(\gamma) = \prod_j m_j(\gamma_j)`, and the weight of a level is
    :math:`\log_2(m_j(l)/u_j(l))`, a pattern's weight the sum over its fields. With one field
    with levels the pattern counts come from hash joins and a sorted search per combination of
    levels; with more, the distinct rows of both files are compared pairwise (O(n^2 K)).

    ``method="assignment"``: one-to-one linkage minimising the total distance (the model of
    sdcMicro's ``recordLinkage``; Hungarian algorithm for n <= 2000, sparse matching over each
    record's nearest candidates above). Share linked = share of correct assignments.

    Parameters
    ----------
    original, protected : table
        The same records in the same order.
    variables : list of str
    method : {"distance", "probabilistic", "assignment"}
    distance : LinkageDistance or dict, optional
        The distance of ``"distance"`` and ``"assignment"``: standardisation, metric, variable
        weights and the weight of second-nearest links (see :class:`LinkageDistance`).
    probabilistic : LinkageProbabilistic or dict, optional
        The comparisons and the EM of ``"probabilistic"``: variables compared as categories,
        bins, the tolerated error rates, EM's start and comparison levels (see
        :class:`LinkageProbabilistic`).
    missing : value or list of values, optional
        Probabilistic: values to treat as missing in the categorical variables, besides null
        and NaN (e.g. ``-999``); a missing value never agrees.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data. This measure needs every record's values in memory: an
        engine that keeps the records (DuckDB, Spark) is refused, with a message that says so.

    Returns
    -------
    LinkageResult
        With ``comparison_levels``, ``em["m"]`` and ``em["u"]`` hold one list per field (its
        levels, the closest first), ``em["levels"]`` the level names and
        ``em["level_weights"]`` log2(m/u) per field and level; a pattern is written with one
        digit per field, L - 1 for the closest level down to 0 for disagree.

    References
    ----------
    Fellegi & Sunter (1969); Jaro (1989); Winkler (1988, 1990, string comparator metrics and
    comparison levels); Domingo-Ferrer & Torra (2001).

    Notes
    -----
    The fields of ``distance`` and ``probabilistic`` given flat (``metric="mahalanobis"``) still
    work for one release, with a DeprecationWarning.
    """
    eng = in_memory_engine(engine, "record_linkage_risk", original)
    options = {**distance.fields(), **probabilistic.fields()}  # type: ignore[union-attr]
    inp = _validate_linkage(original, protected, variables, method, missing=missing, engine=eng, **options)
    if inp.method == "probabilistic":
        return _probabilistic_linkage(inp)
    Xs, Ys, used = _distance_space(inp)
    if inp.method == "assignment":
        return _assignment_linkage(inp, Xs, Ys, used)
    return _distance_linkage(inp, Xs, Ys, used)


# ----------------------------------------------------------------------------------------------
# external risk: validated input
# ----------------------------------------------------------------------------------------------
_SCALES = ("nominal", "ordinal", "continuous")


@dataclass(frozen=True)
class _ExternalArgs:
    """``external_risk``'s arguments, checked once; ``variables`` are those with p_j > 0."""

    released: Any
    external: Any
    variables: tuple
    scales: dict
    availability: dict
    categories: dict
    tolerance: float
    pair_tol: float
    normalize: bool
    one_to_one: bool
    internal_risk: float | None
    id: str | None
    method: str
    missing: tuple
    engine: Any = None  # the engine that holds both tables


def _external_scales(scales, names, categories, released) -> dict:
    """The scale of every variable: as given (one for all, a list in variable order or a dict),
    else ordinal with declared categories, continuous for decimal columns, nominal otherwise."""
    if isinstance(scales, (list, tuple)):
        if len(scales) != len(names):
            raise SdcError(f"scales: got {len(scales)} values for {len(names)} variables; expected one per variable")
        scales = dict(zip(names, scales))
    given, problems = check_scales(scales, names, "scales", allowed=_SCALES)
    raise_problems(problems)
    default = {
        v: "ordinal" if v in categories else "continuous" if _is_float(released, v) else "nominal" for v in names
    }
    return {v: given.get(v, default[v]) for v in names}


def _external_categories(categories, names) -> dict:
    if categories is None:
        return {}
    if not isinstance(categories, Mapping):
        raise SdcError(
            f"categories: got {type(categories).__name__}; expected a dict {{variable: [ordered categories]}}"
        )
    raise_problems(
        [
            f"categories: variable {k} is not among the variables; expected one of {', '.join(names)}"
            for k in categories
            if k not in names
        ]
    )
    return {str(k): list(v) for k, v in categories.items()}


def _validate_with(released, external, variables, o: dict) -> _ExternalArgs:
    """:func:`_validate_external` with the options as a dict."""
    return _validate_external(
        released,
        external,
        variables,
        o["scales"],
        o["availability"],
        o["tolerance"],
        o["categories"],
        o["id"],
        o["pair_tol"],
        o["normalize"],
        o["one_to_one"],
        o["internal_risk"],
        o["method"],
        o["missing"],
        o.get("engine"),
    )


def _validate_external(
    released,
    external,
    variables,
    scales,
    availability,
    tolerance,
    categories,
    id,
    pair_tol,
    normalize,
    one_to_one,
    internal_risk,
    method,
    missing,
    engine=None,
) -> _ExternalArgs:
    # method, tolerance, pair_tol, internal_risk, normalize, one_to_one: checked by the declaration
    tol, ptol = float(tolerance), float(pair_tol)
    r_int = None if internal_risk is None else float(internal_risk)
    names = as_name_list(variables, "variables")
    tD, tA = _tables(released, external, names, "released", "external", same_records=False, engine=engine)
    if id is not None:
        id = check_column(id, "id")
        _require_id(tD, tA, id, "released", "external")
    cats = _external_categories(categories, names)
    sc = _external_scales(scales, names, cats, tD)
    av = _per_variable(availability, names, "availability", 1.0, lambda v, p: check_rule("availability", v, p))
    used = tuple(v for v in names if av[v] > 0)
    if not used:
        raise SdcError("availability: every variable has p_j = 0; expected at least one available variable")
    return _ExternalArgs(
        tD,
        tA,
        used,
        {v: sc[v] for v in used},
        {v: av[v] for v in used},
        cats,
        tol,
        ptol,
        bool(normalize),
        bool(one_to_one),
        r_int,
        id,
        method,
        as_missing_codes(missing),
        get_engine(engine),
    )


# ----------------------------------------------------------------------------------------------
# external risk: steps
# ----------------------------------------------------------------------------------------------
def _rank_of_label(label, numeric: bool, key: dict) -> int:
    """Rank (1..R) of a label among the declared categories, 0 when it is not one of them."""
    if label is None:
        return 0
    if numeric and float(label).is_integer() and str(int(label)) in key:
        return key[str(int(label))]
    return key.get(str(label), 0)


def _ordinal_ranks(a: _ExternalArgs, v: str):
    """Ranks 1..R of the declared (or observed, sorted) categories in both files (0 = missing)
    and R; values outside the categories are an error."""
    tD, tA = a.released, a.external
    declared = _declared_order(tD, tA, v, "released", "external")
    cD, cA, labels, numeric = _joint_labels(tD, tA, v, a.missing, a.engine)
    cats = a.categories.get(v, declared)
    if cats is None:
        cats = labels  # the sorted observed values
    text = [str(c) for c in cats]
    if len(set(text)) != len(text):
        raise SdcError(f"categories[{v!r}]: repeated categories; expected each category once")
    key = {t: i + 1 for i, t in enumerate(text)}
    lut = np.array([_rank_of_label(lab, numeric, key) for lab in labels] + [0], dtype=np.int64)  # [-1] -> 0
    for codes, which in ((cD, "released"), (cA, "external")):
        bad = np.unique(codes[(codes >= 0) & (lut[codes] == 0)])
        if bad.size:
            raise SdcError(
                f"variables: column {v} of {which} has {bad.size} value(s) not among its ordinal categories; "
                f"expected one of {', '.join(text[:10])}{' ...' if len(text) > 10 else ''}"
            )
    return lut[cD].astype(float), lut[cA].astype(float), len(cats)


def _encode_external(a: _ExternalArgs):
    """The kernel's input: nominal codes (a missing value one more code), ordinal ranks with
    their divisors, continuous values and the availabilities (divided by their sum when
    ``normalize``)."""
    step("encoding both files")
    from .._core.linkage_external import ExternalInput

    tD, tA = a.released, a.external
    nom = [v for v in a.variables if a.scales[v] == "nominal"]
    ordv = [v for v in a.variables if a.scales[v] == "ordinal"]
    con = [v for v in a.variables if a.scales[v] == "continuous"]
    nom_d, nom_a = np.zeros((tD.n, len(nom)), np.int64), np.zeros((tA.n, len(nom)), np.int64)
    for j, v in enumerate(nom):
        cD, cA, R = _joint_codes(tD, tA, v, "released", "external", missing=a.missing, engine=a.engine)
        nom_d[:, j], nom_a[:, j] = np.where(cD < 0, R, cD), np.where(cA < 0, R, cA)
    ord_d, ord_a, den = np.zeros((tD.n, len(ordv))), np.zeros((tA.n, len(ordv))), np.ones(len(ordv))
    for j, v in enumerate(ordv):
        ord_d[:, j], ord_a[:, j], R = _ordinal_ranks(a, v)
        has_na = (ord_d[:, j] == 0).any() or (ord_a[:, j] == 0).any()
        den[j] = R if has_na else max(R - 1, 1)
    con_d = _numeric_columns(tD, con, "released") if con else np.zeros((tD.n, 0))
    con_a = _numeric_columns(tA, con, "external") if con else np.zeros((tA.n, 0))
    scale = 1.0 / sum(a.availability.values()) if a.normalize else 1.0
    w = lambda vs: np.array([a.availability[v] * scale for v in vs])  # noqa: E731
    return ExternalInput(
        nom_d, nom_a, ord_d, ord_a, den, con_d, con_a, w(nom), w(ordv), w(con), a.tolerance, a.pair_tol
    )


def _pair_and_link(e, a: _ExternalArgs):
    """Pairing flags and first-found links, by the exact algorithm or the direct pairwise one."""
    step("pairing external and released records")
    from .._core.linkage_external import external_exact, external_pairwise, first_found

    if a.method == "exact":
        return external_exact(e, reuse=not a.one_to_one)
    paired, ptr, idx = external_pairwise(e)
    return paired, first_found(ptr, idx, e.n_d, reuse=not a.one_to_one)


def _true_partners(a: _ExternalArgs, e, link):
    """With ``id``: whether each first-found link is the true partner, and whether the true
    partner is admissible at all."""
    step("checking true partners")
    from .._core.linkage_external import nearest_observed, pair_distance

    tD, tA = a.released, a.external
    idD, idA, n_codes = _joint_codes(tD, tA, a.id, "released", "external", param="id", engine=a.engine)
    if (idD < 0).any():
        raise SdcError(f"id: column {a.id} of released has missing values; expected an identifier for every record")
    if np.unique(idD).size != tD.n:
        raise SdcError(f"id: column {a.id} of released has repeated values; expected a unique identifier")
    pos = np.full(n_codes + 1, -1, np.int64)
    pos[idD] = np.arange(tD.n)
    partner = pos[idA]  # code -1 (missing) -> pos[-1] = -1
    correct = (link >= 0) & (link == partner)
    admissible = np.zeros(tA.n, bool)
    ia = np.flatnonzero(partner >= 0)
    if ia.size:
        near = nearest_observed(e.con_d, e.con_a)
        admissible[ia] = pair_distance(e, ia, partner[ia], near) <= a.pair_tol
    return correct, admissible


@options(
    "pairing",
    Param("pair_tol", "number", "Tolerance of a pairing on a continuous variable, besides `tolerance`"),
    Param("normalize", "bool"),
    Param("one_to_one", "bool"),
    Param("method", "choice", "`exact` (every pair) or `pairwise`", choices=("exact", "pairwise")),
)
@dataclass(frozen=True)
class ExternalPairing(Options):
    """When :func:`external_risk` pairs an external record with a released one, and how it
    links them: the ``pairing=`` record (or a mapping of its fields).

    Parameters
    ----------
    pair_tol : float >= 0, default 0
        a is paired when some h has d_{ah} <= pair_tol (0: every available variable matches).
    normalize : bool, default False
        Divide d_{ah} by sum_j p_j (only matters with ``pair_tol`` > 0).
    one_to_one : bool, default True
        First-found linkage takes each released record at most once.
    method : {"exact", "pairwise"}
        ``"exact"``: identical records grouped and the continuous variables joined on sorted
        values; ``"pairwise"``: every pair compared (the paper's algorithm).
    """

    pair_tol: float = 0.0
    normalize: bool = False
    one_to_one: bool = True
    method: str = "exact"


@accepts_scenario
@renamed_parameters(positional=("scales", "availability", "tolerance"))
@declare(
    "measure",
    Param("variables", "columns", role="numeric_keys"),
    Param("scales", "any", role="scales"),
    Param("availability", "numbers", per_variable=True),
    Param("tolerance", "number"),
    Param("categories", "any"),
    Param("internal_risk", "number"),
    Param("missing"),
    inputs=("released", "external"),
    out_of_core=True,
    renamed={"algorithm": "method"},
    grouped=(ExternalPairing,),
    excluded="needs the intruder's external file",
)
def external_risk(
    released,
    external,
    variables,
    *,
    scales=None,
    availability=None,
    tolerance: float = 0.05,
    categories=None,
    id=None,
    pairing: ExternalPairing | dict | None = None,
    internal_risk=None,
    missing=None,
    engine=None,
) -> ExternalRiskResult:
    r"""Mlodak's external risk: can records of an alternative source be paired with released ones?

    Per-variable distance between an external record a and a released record h (Mlodak,
    Pietrzak & Jozefowski, with the paper's swapped 0 and 1 corrected):

    * nominal: 0 if equal, 1 otherwise (a missing value is one more category);
    * ordinal: :math:`|r_a - r_h| / (R_j - 1)` with ranks 1..R_j of the declared categories; a
      missing value is rank 0 and the divisor becomes R_j when the variable has a missing value
      in either file;
    * continuous: 1 if :math:`|a - x_h| / |x_h| > d^*` else 0 (x_h = 0: 0 iff a = 0); a missing
      x_h is replaced by the released value nearest to a; a missing a matches only a missing
      x_h (a library rule: the paper has none).

    :math:`d_{ah} = \sum_j p_j d_j`; a is *paired* when some h has :math:`d_{ah} \le`
    ``pair_tol`` (0: every available variable matches). The external risk
    :math:`r_{ext}` is the share of external records paired (``share_paired``); with
    ``internal_risk`` the combined risk :math:`(r_{int} + r_{ext})/2`. The paper's first-found
    linkage is also reported: external records in file order each take the first admissible
    released record (one-to-one by default).

    Computed exactly (``pairing={"method": "exact"}``): identical records are grouped, the categorical
    variables hashed, and the continuous variables joined one at a time on sorted values (the
    admissible released values of an external value form an interval), so that neither
    repeated values nor missing values make the work quadratic; candidates are then checked
    with the full distance. The direct computation over every pair (``"pairwise"``,
    O(n n#)) is its test oracle.

    Parameters
    ----------
    released : table
        The protected file D.
    external : table
        The alternative source A (any number of records).
    variables : list of str
        Variables in both files.
    scales : str, list or dict, optional
        "nominal", "ordinal" or "continuous": one for all, one per variable (list) or a dict.
        Default: decimal columns continuous, everything else nominal (a variable with
        ``categories`` is ordinal).
    availability : number, list or dict, optional
        p_j in [0, 1], the probability that the intruder has variable j (default 1; 0 excludes it).
    tolerance : float > 0, default 0.05
        d* for continuous variables.
    categories : dict, optional
        Ordered categories of ordinal variables (default: the declared order of an ordered
        categorical column, else the sorted values of both files). Values outside them are an
        error.
    id : str, optional
        Identifier column in both files (unique in the released file): reports correct links.
    pairing : ExternalPairing or dict, optional
        The tolerance of d_{ah} (``pair_tol``) and whether it is normalised, whether the
        first-found linkage is one-to-one, and the algorithm (``method``): see
        :class:`ExternalPairing`.
    internal_risk : float in [0, 1], optional
        r_int, e.g. the global re-identification rate of the categorical keys.
    missing : value or list of values, optional
        Values to treat as missing in the nominal and ordinal variables, besides null and NaN
        (e.g. ``-999``).
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        Where the record-level work runs. With DuckDB or Spark (both files in the same engine,
        ``pairing={"method": "exact"}``) each file is grouped into its distinct rows by the engine, the
        admissible pairs are found between those, only the records of paired classes are
        fetched (their positions, for the first-found links), and the identifiers are compared
        by the engine; the result holds the counts, not per-record arrays.

    Returns
    -------
    ExternalRiskResult

    References
    ----------
    Młodak, A., Pietrzak, M. & Józefowski, T. (2021). The trade-off between the risk of
    disclosure and data utility in SDC - a case of data from a survey of accidents at work.
    Conference of European Statisticians, Expert Meeting on Statistical Data Confidentiality.

    Notes
    -----
    The fields of ``pairing`` given flat (``pair_tol=0.5``) still work for one release, with a
    DeprecationWarning.
    """
    eng = get_engine(engine, external)
    options = dict(
        scales=scales,
        availability=availability,
        tolerance=tolerance,
        categories=categories,
        id=id,
        internal_risk=internal_risk,
        missing=missing,
        **pairing.fields(),  # type: ignore[union-attr]
    )
    if eng.has(STORED):
        from ._linkage_engine import external_risk_engine

        return external_risk_engine(eng, released, external, variables, options, _validate_with, _encode_external)
    a = _validate_with(released, external, variables, {**options, "engine": eng})
    e = _encode_external(a)
    paired, link = _pair_and_link(e, a)
    correct = admissible = None
    if a.id is not None:
        correct, admissible = _true_partners(a, e, link)
    return ExternalRiskResult(
        variables=a.variables,
        scales=a.scales,
        availability=a.availability,
        tolerance=a.tolerance,
        pair_tol=a.pair_tol,
        one_to_one=a.one_to_one,
        paired=paired,
        linked_to=link,
        correct=correct,
        partner_admissible=admissible,
        internal_risk=a.internal_risk,
        n_released=a.released.n,
        n=a.external.n,
        method=a.method,
        backend=a.external.backend,
        records=local_records(),
        row_index=a.external.index,
    )
