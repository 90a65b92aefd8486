r"""Microaggregation of mixed categorical and continuous variables with Gower's distance
(sdcMicro's ``microaggrGower``): each record's values are replaced by an aggregate of its
nearest records, the distance mixing nominal, ordinal and continuous variables.

Layout: options and scales, then reading the columns through the engine, then the neighbours
per stratum and the aggregates (the kernels of :mod:`sdckit._core.gower`), then the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._core import gower as core
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, as_name_list, check_rule, raise_problems
from ._common import Change, Input, finish, read_input, resolve_seed
from .noise import stratum_groups

__all__ = ["microaggregation_gower"]

_SCALES = ("nominal", "ordinal", "continuous")
_ALIASES = {"categorical": "nominal", "numeric": "continuous"}
_STATISTICS = ("mean", "median")
_CATEGORY_RULES = ("mode", "sample")


@declare(
    "method",
    Param("variables", "columns"),
    Param("distance_variables", "columns"),
    Param("scales", "any", per_variable=True),
    Param("group_size", "int"),
    Param("statistic", "choice", choices=_STATISTICS),
    Param("categorical_statistic", "choice", choices=_CATEGORY_RULES),
    Param("variable_weights", "numbers", per_variable=True),
    Param("strata"),
    Param("missing"),
    Param("seed"),
    changes="the values of the variables (replaced by an aggregate of each record's nearest records)",
    aliases=("microaggregate_gower",),
    random=True,
    heading="Microaggregation by Gower's distance",
)
def microaggregation_gower(
    data,
    variables,
    *,
    distance_variables=None,
    scales=None,
    group_size: int = 3,
    statistic: str = "mean",
    categorical_statistic: str = "mode",
    variable_weights=None,
    strata=None,
    missing=None,
    seed=None,
    engine=None,
):
    r"""Microaggregate mixed variables: each record takes an aggregate of its nearest records
    by Gower's distance.

    For each record i, the k = ``group_size`` records nearest to it (itself included; ties by
    row order) within its stratum are found with Gower's distance over the
    ``distance_variables``,

    .. math:: d(i, j) = \frac{\sum_v w_v\, d_v(i, j)}{\sum_v w_v}, \qquad
              d_v = \begin{cases} |x_{iv} - x_{jv}| / R_v & \text{continuous} \\
              |r_{iv} - r_{jv}| / (L_v - 1) & \text{ordinal} \\
              [x_{iv} \ne x_{jv}] & \text{nominal} \end{cases}

    (R_v the range of v in the stratum, L_v its number of ordered categories, r the ranks;
    a missing value against an observed one counts 1, two missing values 0). Then each of
    the ``variables`` of record i is replaced by the mean (or median) of its k neighbours'
    values (continuous), or by their most frequent category (``"mode"``, ties drawn at
    random) or a category drawn with probability proportional to its count among them
    (``"sample"``) (nominal and ordinal).

    This is sdcMicro's ``microaggrGower`` (the records' neighbourhoods overlap: it is not a
    partition into groups, and a value is shared by the records whose neighbourhoods agree).

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    variables : str or list of str
        The variables to microaggregate (any mix of scales).
    distance_variables : str or list of str, optional
        The variables of the distance (sdcMicro's ``dist_var``); default: ``variables``.
    scales : dict or str, optional
        Measurement scale per variable: ``"nominal"`` (alias ``"categorical"``),
        ``"ordinal"``, ``"continuous"`` (alias ``"numeric"``), or a list of categories from
        lowest to highest (ordinal in that order). Undeclared: text, boolean and categorical
        columns are nominal, floating-point columns continuous; integer columns must be
        declared (codes or counts). An ordinal number is ranked by value, ordinal text needs a
        list (or a Polars Enum).
    group_size : int >= 1, default 3
        k, the number of nearest records aggregated (sdcMicro's ``aggr``).
    statistic : {"mean", "median"}, default "mean"
        Aggregate of the continuous variables.
    categorical_statistic : {"mode", "sample"}, default "mode"
        Aggregate of the categorical variables: the most frequent category (VIM's ``maxCat``)
        or one drawn in proportion to the counts (``sampleCat``, sdcMicro's default).
    variable_weights : number, list or dict, optional
        Weights w_v of the distance variables (one per variable, in order, or a dict;
        default 1 each). A variable of weight 0 does not count in the distance (it is still
        aggregated); all weights 0 is an error, as every distance would be 0.
    strata : str or list of str, optional
        Neighbours are found within each stratum (sdcMicro's ``by``); every stratum needs at
        least ``group_size`` records.
    missing : value or list of values, optional
        Extra missing-value codes (e.g. ``-999``): such values stay as they are and count as
        missing in the distance and the aggregates.
    seed : int, optional
        Seed of the random draws (ties of ``"mode"``, ``"sample"``); None draws a fresh seed,
        recorded in ``parameters["seed"]``.
    engine : optional
        The in-memory engine (default); DuckDB and Spark are refused.

    Returns
    -------
    ProtectionResult
        ``data`` with the variables microaggregated; ``n_changed`` the cells whose value
        changed. ``details``: ``group_size``, ``scales``, ``distance_variables``,
        ``mean_neighbour_distance`` (the mean Gower distance of a record to its k - 1 other
        neighbours) and, per continuous variable, ``sse_sst`` (the sum of squared changes over
        the total sum of squares).

    Raises
    ------
    SdcError
        Undeclared integer variables, unknown scales, an ordinal text variable without an
        order, a category outside its declared order, a stratum with fewer than
        ``group_size`` records, a negative weight.

    Notes
    -----
    A missing value stays missing (it is not imputed from the neighbours); a record none of
    whose neighbours has a value keeps its own. VIM codes a missing value as the largest value
    plus one; here it is a category of its own (distance 1 to any observed value). Cost:
    O(n_s^2 m) per stratum of n_s records (all distances), in blocks of about 4 million.

    References
    ----------
    Gower, J. C. (1971), A general coefficient of similarity and some of its properties,
    Biometrics 27(4), 857-871. Kowarik, A. (sdcMicro ``microaggrGower``, VIM ``gowerD``).
    Mlodak, A., Pietrzak, M. & Jozefowski, T. (2022), on micro-aggregation based on the Gower
    distance for business microdata.
    """
    names = as_name_list(variables, "variables")
    dist = names if distance_variables is None else as_name_list(distance_variables, "distance_variables")
    both = list(dict.fromkeys(names + dist))
    inp = read_input(data, both, "variables", strata=strata, engine=engine, method="microaggregation_gower")
    # group_size, statistic and categorical_statistic: checked by the declaration
    k = int(group_size)
    checked = {"group_size": k, "statistic": statistic, "categorical_statistic": categorical_statistic}
    seed = resolve_seed(seed)
    codes_missing = as_missing_codes(missing)
    scale = _scales(inp, both, scales)
    weights = _weights(variable_weights, dist)
    cols = {v: _column(inp, v, scale[v], codes_missing) for v in both}
    groups = stratum_groups(inp)
    _require_group_sizes(groups, k, inp.strata_codes is not None)
    rng = np.random.default_rng(seed)
    new = {
        v: (np.full(inp.table.n, np.nan) if c.values is not None else np.full(inp.table.n, -1)) for v, c in cols.items()
    }
    spread = []
    for _, rows in groups:
        nb, mean_d = _neighbours(cols, dist, weights, rows, k)
        spread.append((rows.size, mean_d))
        for v in names:
            _aggregate(cols[v], new[v], rows, nb, checked, rng)
    table, changes, sse = inp.table, {}, {}
    for v in names:
        table, changes[v], s = _write(inp, table, v, cols[v], new[v])
        if s is not None:
            sse[v] = s
    parameters = {
        "variables": names,
        "distance_variables": dist,
        "scales": {v: scale[v] if not isinstance(scale[v], list) else list(scale[v]) for v in both},
        "group_size": k,
        "statistic": checked["statistic"],
        "categorical_statistic": checked["categorical_statistic"],
        "variable_weights": weights,
        "strata": list(strata) if isinstance(strata, (list, tuple)) else strata,
        "missing": list(codes_missing) or None,
        "seed": seed,
    }
    total = sum(n for n, _ in spread)
    details = {
        "group_size": k,
        "scales": {v: _scale_name(scale[v]) for v in both},
        "distance_variables": dist,
        "mean_neighbour_distance": float(sum(n * d for n, d in spread) / total) if total else None,
        "sse_sst": sse,
    }
    return finish(microaggregation_gower, parameters, inp, table, changes, details)


# ----------------------------------------------------------------------------------------------
# scales and columns
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Column:
    """One variable read once: continuous ``values`` (NaN = missing) with the raw floats, or
    categorical ``codes`` over all labels (the missing codes included, so they can be written
    back), ``active`` (observed, not a missing code) and, for an ordinal variable, the rank of
    each code (``rank``, 0..L-1) and ``levels`` L."""

    scale: str
    values: np.ndarray | None = None
    raw: np.ndarray | None = None
    codes: np.ndarray | None = None
    active: np.ndarray | None = None
    labels: object = None
    rank: np.ndarray | None = None
    levels: int = 0
    n_labels: int = 0


def _scale_name(s) -> str:
    return "ordinal" if isinstance(s, list) else s


def _scales(inp: Input, names: list, scales) -> dict:
    """The scale of every variable: ``"nominal"``, ``"continuous"``, ``"ordinal"`` or a list
    (ordinal with that order)."""
    if scales is None:
        declared: dict = {}
    elif isinstance(scales, str):
        declared = dict.fromkeys(names, scales)
    elif isinstance(scales, Mapping):
        declared = dict(scales)
    else:
        raise SdcError(f"scales: got {type(scales).__name__}; expected a scale name or a dict variable -> scale")
    columns = set(inp.table.columns)
    problems = [  # a scale of another column of the file (one dict for the whole file) is fine
        f"scales: {v} is not a column of the file; expected one of {', '.join(names)}"
        for v in declared
        if v not in names and v not in columns
    ]
    out: dict = {}
    for v in names:
        s = declared.get(v)
        if isinstance(s, (list, tuple)):
            out[v] = list(s)
            continue
        if s is not None:
            s = _ALIASES.get(s, s)
            if s not in _SCALES:
                problems.append(f"scales: {v} got {s!r}; expected one of {', '.join(_SCALES)} or a list of categories")
            out[v] = s
            continue
        kind = inp.table.kind(v)
        if kind in ("text", "boolean", "categorical"):
            out[v] = "nominal"
        elif kind == "float":
            out[v] = "continuous"
        elif kind == "integer":
            problems.append(f"scales: {v} is an integer column; declare it nominal, ordinal or continuous")
        else:
            problems.append(f"scales: {v} has type {inp.table.dtype_name(v)}; declare its scale")
    raise_problems(problems)
    return out


def _column(inp: Input, v: str, scale, codes_missing) -> _Column:
    table, eng = inp.table, inp.engine
    if scale == "continuous":
        if not table.is_numeric(v):
            raise SdcError(f"scales: {v} is continuous but has type {table.dtype_name(v)}; expected numbers")
        x = table.floats([v], missing=list(codes_missing))[:, 0]
        if np.isinf(x).any():
            raise SdcError(f"variables: {v} holds infinite values; expected finite numbers or missing values")
        return _Column("continuous", values=x, raw=table.floats([v])[:, 0])
    codes, labels = eng.encode_column(table, v)
    active = codes >= 0
    if codes_missing:
        active &= eng.encode_column(table, v, list(codes_missing))[0] >= 0
    values = eng.label_values(labels)
    if scale == "nominal":
        return _Column("nominal", codes=codes, active=active, labels=labels, n_labels=len(values))
    rank, levels = _ranks(v, values, scale, table.categories(v), active, codes)
    return _Column("ordinal", codes=codes, active=active, labels=labels, rank=rank, levels=levels, n_labels=len(values))


def _ranks(v, values, scale, enum, active, codes) -> tuple[np.ndarray, int]:
    """The rank (0..L-1) of every label of an ordinal variable, and L."""
    order = scale if isinstance(scale, list) else enum
    if order is None:
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
            raise SdcError(f"scales: {v} is ordinal text without an order; give its categories as a list")
        distinct = sorted({float(x) for x, a in zip(values, np.bincount(codes[active], minlength=len(values))) if a})
        pos = {x: i for i, x in enumerate(distinct)}
        return np.array([pos.get(float(x), -1) for x in values]), len(distinct)
    where = {str(c): i for i, c in enumerate(order)}
    used = np.bincount(codes[active], minlength=len(values)) > 0
    outside = [str(x) for x, u in zip(values, used) if u and str(x) not in where]
    if outside:
        raise SdcError(f"scales: {v} has {len(outside)} categor(ies) outside its declared order")
    return np.array([where.get(str(x), -1) for x in values]), len(order)


def _weights(value, names) -> dict:
    """One weight per distance variable (default 1), not all 0."""
    if value is None:
        return dict.fromkeys(names, 1.0)
    weights = _given_weights(value, names)
    if names and not any(weights.values()):
        raise SdcError(
            f"variable_weights: every one of the {len(names)} distance variables has weight 0, so every "
            "distance is 0 and the neighbours would be arbitrary records; expected at least one positive weight"
        )
    return weights


def _given_weights(value, names) -> dict:
    if isinstance(value, Mapping):
        unknown = [str(k) for k in value if k not in names]
        raise_problems(
            [f"variable_weights: {k} is not a distance variable; expected one of {', '.join(names)}" for k in unknown]
        )
        return {v: float(check_rule("variable_weights", value.get(v, 1.0), f"variable_weights[{v!r}]")) for v in names}
    if isinstance(value, (list, tuple, np.ndarray)):
        if len(value) != len(names):
            raise SdcError(
                f"variable_weights: got {len(value)} values for {len(names)} distance variables; expected one per variable"
            )
        return {v: float(check_rule("variable_weights", x, f"variable_weights[{v!r}]")) for v, x in zip(names, value)}
    return {v: float(check_rule("variable_weights", value)) for v in names}


def _require_group_sizes(groups, k: int, stratified: bool) -> None:
    small = [rows.size for _, rows in groups if rows.size < k]
    if small:
        where = f"{len(small)} of {len(groups)} strata have" if stratified else "the file has"
        raise SdcError(f"group_size: {where} fewer than {k} records (smallest {min(small)}); expected at least {k}")


# ----------------------------------------------------------------------------------------------
# the work
# ----------------------------------------------------------------------------------------------
def _neighbours(cols: dict, dist: list, weights: dict, rows: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """The k nearest records (positions within the stratum) of every record of one stratum, and
    the mean distance of a record to its other k - 1 neighbours."""
    scaled, w_scaled, codes, w_codes = [], [], [], []
    for v in dist:
        c = cols[v]
        if c.scale == "continuous":
            x = c.values[rows]
            seen = x[~np.isnan(x)]
            r = float(seen.max() - seen.min()) if seen.size else 0.0
            scaled.append(x / (r if r > 0 else 1.0))
            w_scaled.append(weights[v])
        elif c.scale == "ordinal":
            rk = np.where(c.active[rows], c.rank[c.codes[rows]], -1).astype(float)
            scaled.append(np.where(rk < 0, np.nan, rk / max(c.levels - 1, 1)))
            w_scaled.append(weights[v])
        else:
            codes.append(np.where(c.active[rows], c.codes[rows], -1))
            w_codes.append(weights[v])
    S = np.column_stack(scaled) if scaled else np.zeros((rows.size, 0))
    C = np.column_stack(codes) if codes else np.zeros((rows.size, 0), dtype=np.int64)
    ws, wc = np.asarray(w_scaled, dtype=float), np.asarray(w_codes, dtype=float)
    nb, near = core.nearest(S, ws, C, wc, k)
    return nb, float(near[:, 1:].mean()) if k > 1 else 0.0


def _aggregate(col: _Column, out: np.ndarray, rows: np.ndarray, nb: np.ndarray, opts: dict, rng) -> None:
    """The aggregate of every record of one stratum (file rows ``rows``) over its neighbours
    ``nb`` (positions within the stratum)."""
    if col.scale == "continuous":
        out[rows] = core.neighbour_values(col.values[rows], nb, opts["statistic"])
        return
    local = np.where(col.active[rows], col.codes[rows], -1)
    out[rows] = core.neighbour_category(local, nb, col.n_labels, opts["categorical_statistic"], rng)


def _write(inp: Input, table, v: str, col: _Column, new: np.ndarray):
    """The column written back (a missing value, or a record none of whose neighbours has a
    value, keeps its own), its change mask and, for a continuous variable, SSE / SST."""
    if col.scale == "continuous":
        observed = ~np.isnan(col.values)
        keep = ~observed | np.isnan(new)
        out = np.where(keep, col.raw, new)
        x = col.values[observed]
        sst = float(((x - x.mean()) ** 2).sum()) if x.size else 0.0
        sse = float(((out[observed] - x) ** 2).sum())
        table = inp.engine.with_values(table, v, out)
        return table, Change(observed & (out != col.raw)), (sse / sst if sst > 0 else None)
    keep = ~col.active | (new < 0)
    out = np.where(keep, col.codes, new)
    table = inp.engine.with_codes(table, v, out, col.labels, categories=inp.table.categories(v))
    return table, Change(out != col.codes, np.where(col.active, col.codes, -1), col.labels), None
