r"""Microaggregation of continuous variables: records are put in small groups of similar
records and each value is replaced by its group's mean (or median), so that every published
value is shared by at least ``group_size`` records (Defays & Anwar 1998; Domingo-Ferrer &
Mateo-Sanz 2002; sdcMicro's ``microaggregation``).

Layout: option checks, then reading the numbers through the engine, then the grouping per
stratum (the kernels of :mod:`sdckit._core.microaggregation`), then the result.
"""

from __future__ import annotations

import numpy as np

from .._core import microaggregation as core
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes, check_column, raise_problems
from ..results.protection import ProtectionResult
from ._common import Change, Input, common_scale, finish, read_input

__all__ = ["microaggregation"]

_METHODS = ("mdav", "mdav_blocked", "onedims", "single", "simple", "pca", "rmd")
_STATISTICS = ("mean", "median")
#: records per block of the ``mdav_blocked`` variant
_BLOCK = 256


@declare(
    "method",
    Param("variables", "columns", role="numeric_keys"),
    Param("method", "choice", choices=_METHODS),
    Param("group_size", "int"),
    Param("statistic", "choice", choices=_STATISTICS),
    Param("sort_by", "column"),
    Param("strata"),
    Param("missing"),
    changes="the values of the continuous variables (replaced by their group's mean or median)",
    aliases=("microaggregate",),
    heading="Microaggregation",
)
def microaggregation(
    data,
    variables,
    *,
    method="mdav",
    group_size=3,
    statistic="mean",
    sort_by=None,
    strata=None,
    missing=None,
    engine=None,
) -> ProtectionResult:
    r"""Microaggregate continuous variables: group similar records, publish group means.

    With k = ``group_size``, the records are partitioned into groups of at least k records
    and every value x_ij is replaced by the mean (or median) of variable j over the records
    of its group (missing values left out; a missing value stays missing). Grouping methods:

    * ``"mdav"`` (default), Maximum Distance to Average Vector (Domingo-Ferrer & Mateo-Sanz
      2002), with the rules of sdcMicro's ``mdav``, so that it forms the same groups. The
      distance of records x, y is ``d(x, y) = sum_j (x_j - y_j)^2 / var_j`` (variance with
      denominator n); a variable missing in one of the two adds ``(max_j - min_j)^2 / var_j``.
      While at least 3k records remain: r = the record farthest from their centroid, s = the
      record farthest from r; r and its k - 1 nearest records form a group, then s and its
      k - 1 nearest among those left. With 2k to 3k - 1 left, one group around the record
      farthest from the centroid; the last k to 2k - 1 records form the last group. So every
      group has k records except the last (k to 2k - 1). Exact: the groups of the plain
      O(n^2 p / k) algorithm, found with search structures that evaluate few distances.
    * ``"mdav_blocked"``: MDAV run inside blocks of 128 to 256 records of a k-d partition
      (split at the median of the widest standardised variable), all blocks at once: for
      very large files (10^6 records in about 15 s on 2 cores, against about 2.5 minutes
      for exact MDAV). Groups do not cross block borders, so the loss is higher (SSE/SST
      about 30 % above MDAV's on normal data); every group still has k to 2k - 1 records.
    * ``"onedims"`` (individual ranking): each variable on its own: its values sorted, groups
      of k consecutive values.
    * ``"single"``: the records sorted on ``sort_by``; ``"simple"``: in row order; ``"pca"``:
      sorted on the first principal component of the standardised variables (the sign fixed
      so that its loadings sum to a positive number; a missing value counts as the mean).
      Then groups of k consecutive records.
    * ``"rmd"`` (Templ & Meindl 2008): the remaining record with the largest robust
      Mahalanobis distance (MCD, on the standardised variables) and its k - 1 nearest
      remaining records (Euclidean, standardised) form a group, until fewer than 2k remain.
      Complete records only; O(n^2 p / k).

    For the sorted methods and ``rmd``, when k does not divide the number of records m, the
    last group takes the remainder (k + m mod k records), as in sdcMicro. Ties: MDAV's
    farthest record is the first one in row order, its nearest records at equal distance the
    later ones first (sdcMicro's hash sort); sorts are stable (equal values keep their row
    order).

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    variables : str or list of str
        The numeric variables to microaggregate (grouped together, except ``"onedims"``).
    method : str, default "mdav"
        ``"mdav"``, ``"mdav_blocked"``, ``"onedims"``, ``"single"``, ``"simple"``, ``"pca"``
        or ``"rmd"``.
    group_size : int >= 1, default 3
        k, the smallest group size.
    statistic : {"mean", "median"}, default "mean"
        The value that replaces a group's values.
    sort_by : str, optional
        ``"single"`` only: the numeric column to sort on (default: the first variable);
        missing values sort last.
    strata : str or list of str, optional
        Groups are formed within each stratum (a missing stratum value is a stratum of its
        own); every stratum needs at least ``group_size`` records.
    missing : value or list of values, optional
        Extra missing-value codes (e.g. ``-999``): such values are left as they are and take
        no part in the groups' values.
    engine : optional
        The in-memory engine (default); this method needs the records in memory (DuckDB and
        Spark: an error).

    Returns
    -------
    ProtectionResult
        ``data`` with the variables microaggregated (an integer column becomes a float column
        unless every new value is whole); ``n_changed`` the cells whose value changed.
        ``details``: ``method``, ``group_size``, ``statistic``, ``n_groups`` and
        ``group_sizes`` ({size: number of groups}; per variable for ``"onedims"``), the
        information loss ``sse`` and ``sst`` (sums of squares on the variables divided by
        their variance: SSE = sum_ij (x_ij - x'_ij)^2 / var_j, SST = sum_ij
        (x_ij - mean_j)^2 / var_j) and ``sse_sst`` = SSE / SST; ``group_ids_rows`` (the group
        of each record, 0-based, groups numbered in the order of their first record; for
        ``"onedims"`` ``group_ids_by_variable_rows``, one array per variable) is record-level
        and left out of ``to_dict()``.

    Notes
    -----
    Differences from sdcMicro: its final MDAV group divides the sum of a variable by the
    number of records also where some are missing (here: by the number of present values);
    its sorted methods need at least 2k records and let a missing value spoil its group's
    mean (here: at least k records; missing values are left out of the means and keep their
    place); its ``"pca"`` sign is whatever its eigen-solver returns; its ``"rmd"`` holds an
    n x n distance matrix. sdcMicro ignores ``measure`` for MDAV; here ``statistic`` applies
    to every method.

    References
    ----------
    Defays, D. & Anwar, M. N. (1998), Masking microdata using micro-aggregation, Journal of
    Official Statistics 14(4), 449-461.
    Domingo-Ferrer, J. & Mateo-Sanz, J. M. (2002), Practical data-oriented microaggregation
    for statistical disclosure control, IEEE Transactions on Knowledge and Data Engineering
    14(1), 189-201.
    Templ, M. & Meindl, B. (2008), Robust statistics meets SDC: new disclosure risk measures
    for continuous microdata masking, Privacy in Statistical Databases, LNCS 5262, 113-126.
    """
    inp = read_input(data, variables, "variables", strata=strata, engine=engine, method="microaggregation")
    names = list(inp.variables)
    k = int(group_size)  # method, group_size and statistic: checked by the declaration
    sort_by = _sort_by(inp, sort_by, method, names)
    codes = as_missing_codes(missing)
    X = _numbers(inp, names, codes)
    key = _numbers(inp, [sort_by], codes, check_finite=False)[:, 0] if sort_by is not None else None
    _check_sizes(inp, X, k, method, names)
    scale = common_scale(X)  # values near 1e200: grouped and averaged at a power-of-two scale
    Xs = X / scale
    gid = _grouped(Xs, key, k, method, inp.strata_codes)
    Xns = _values(Xs, gid, statistic, method)
    Xn = Xns * scale
    raw = inp.table.floats(names)
    table, changes = inp.table, {}
    for j, name in enumerate(names):
        present = ~np.isnan(X[:, j])
        table = inp.engine.with_values(table, name, np.where(present, Xn[:, j], raw[:, j]))
        changes[name] = Change(present & (Xn[:, j] != X[:, j]))
    parameters = {
        "variables": names,
        "method": method,
        "group_size": k,
        "statistic": statistic,
        "sort_by": sort_by,
        "strata": list(strata) if isinstance(strata, (list, tuple)) else strata,
        "missing": list(codes) or None,
    }
    details = _details(Xs, Xns, gid, k, method, statistic, names)  # SSE/var: scale-free
    return finish(microaggregation, parameters, inp, table, changes, details, _notes(X, names, method))


# ----------------------------------------------------------------------------------------------
# options and input
# ----------------------------------------------------------------------------------------------
def _sort_by(inp: Input, sort_by, method: str, names: list[str]) -> str | None:
    if method != "single":
        if sort_by is not None:
            raise SdcError(f"sort_by: given with method {method!r}; expected None (only method 'single' sorts on it)")
        return None
    if sort_by is None:
        return names[0]
    sort_by = check_column(sort_by, "sort_by")
    inp.table.require([sort_by], "sort_by")
    return sort_by


def _numbers(inp: Input, names: list, codes: tuple, check_finite: bool = True) -> np.ndarray:
    """The columns as floats (NaN = missing, also the ``missing`` codes); each must be
    numeric (and, with ``check_finite``, without infinite values)."""
    param = "variables" if check_finite else "sort_by"
    bad = [f"{c} ({inp.table.dtype_name(c)})" for c in names if not inp.table.is_numeric(c)]
    if bad:
        raise SdcError(f"{param}: {', '.join(bad)} not numeric; expected numeric columns")
    X = inp.table.floats(names, missing=codes)
    if check_finite:
        inf = [c for j, c in enumerate(names) if np.isinf(X[:, j]).any()]
        if inf:
            raise SdcError(f"variables: {', '.join(inf)} has infinite values; expected finite numbers")
    return X


def _strata_rows(strata_codes: np.ndarray | None, n: int) -> list[np.ndarray]:
    if strata_codes is None:
        return [np.arange(n)]
    order = np.argsort(strata_codes, kind="stable")
    cuts = np.flatnonzero(np.diff(strata_codes[order])) + 1
    return np.split(order, cuts)


def _check_sizes(inp: Input, X: np.ndarray, k: int, method: str, names: list[str]) -> None:
    """Every stratum (or the file) needs k records; ``onedims`` k present values per variable
    (or none); ``rmd`` complete records."""
    parts = _strata_rows(inp.strata_codes, X.shape[0])
    sizes = np.array([rows.size for rows in parts])
    where = "records" if inp.strata_codes is None else f"records in {int((sizes < k).sum())} of {len(parts)} strata"
    if (sizes < k).any():
        smallest = int(sizes.min())
        raise SdcError(
            f"group_size: {k} is larger than the number of {where} (the smallest has {smallest}); "
            f"expected at most {smallest}" + (", or fewer strata" if inp.strata_codes is not None else "")
        )
    problems = []
    if method == "onedims":
        for j, name in enumerate(names):
            counts = [int((~np.isnan(X[rows, j])).sum()) for rows in parts]
            few = [c for c in counts if 0 < c < k]
            if few:
                problems.append(
                    f"variables: {name} has {min(few)} non-missing values in a stratum (or the file); "
                    f"expected none or at least group_size ({k})"
                )
    if method == "rmd":
        incomplete = int(np.isnan(X).any(axis=1).sum())
        if incomplete:
            problems.append(f"variables: {incomplete} records with missing values; expected complete records for 'rmd'")
    raise_problems(problems)


# ----------------------------------------------------------------------------------------------
# grouping
# ----------------------------------------------------------------------------------------------
def _grouped(X: np.ndarray, key, k: int, method: str, strata_codes) -> np.ndarray:
    """Group ids (n,) - or (n, p) for ``onedims`` - over all strata, numbered stratum after
    stratum, then in the order of each group's first record."""
    n, p = X.shape
    gid = np.full((n, p) if method == "onedims" else n, -1, dtype=np.int64)
    offset = np.zeros(p if method == "onedims" else 1, dtype=np.int64)
    for rows in _strata_rows(strata_codes, n):
        g = _groups_of(X[rows], None if key is None else key[rows], k, method)
        gid[rows] = np.where(g >= 0, g + offset, -1)
        offset = offset + g.max(axis=0) + 1
    if method != "onedims":
        return core.canonical_groups(gid)
    return np.stack([core.canonical_groups(gid[:, j]) for j in range(p)], axis=1)


def _groups_of(X: np.ndarray, key, k: int, method: str) -> np.ndarray:
    n = X.shape[0]
    if method == "mdav":
        return core.mdav_groups(X, k)
    if method == "mdav_blocked":
        return core.mdav_groups_blocked(X, k, _BLOCK)
    if method == "onedims":
        return np.stack([core.onedims_groups(X[:, j], k) for j in range(X.shape[1])], axis=1)
    if method == "rmd":
        return core.rmd_groups(X, k, _robust_distances(X))
    if method == "single":
        order = np.argsort(np.where(np.isnan(key), np.inf, key), kind="stable")
        order = np.concatenate([order[~np.isnan(key[order])], order[np.isnan(key[order])]])
    elif method == "pca":
        order = core.pca_order(X)
    else:
        order = np.arange(n)
    return core.canonical_groups(core.consecutive_groups(order, k, n))


def _robust_distances(X: np.ndarray) -> np.ndarray:
    from .._core.robust import mahalanobis_sq, mcd

    Z = core.standardised(X)
    try:
        est = mcd(Z)
    except (ValueError, np.linalg.LinAlgError) as exc:
        raise SdcError(
            f"method: 'rmd' could not estimate a robust covariance ({exc}); expected more records than "
            "variables, not lying on a hyperplane (or another method)"
        ) from None
    return mahalanobis_sq(Z, est.center, est.cov)


def _values(X: np.ndarray, gid: np.ndarray, statistic: str, method: str) -> np.ndarray:
    if method != "onedims":
        return core.group_statistic(X, gid, statistic)
    return np.column_stack([core.group_statistic(X[:, [j]], gid[:, j], statistic)[:, 0] for j in range(X.shape[1])])


# ----------------------------------------------------------------------------------------------
# result
# ----------------------------------------------------------------------------------------------
def _details(X, Xn, gid, k: int, method: str, statistic: str, names: list[str]) -> dict:
    sse, sst = core.sse_sst(X, Xn)
    out: dict = {"method": method, "group_size": k, "statistic": statistic}
    if method == "onedims":
        out["n_groups"] = {v: int(gid[:, j].max() + 1) for j, v in enumerate(names)}
        out["group_sizes"] = {v: core.group_size_counts(gid[:, j]) for j, v in enumerate(names)}
    else:
        out["n_groups"] = int(gid.max() + 1) if gid.size else 0
        out["group_sizes"] = core.group_size_counts(gid)
    out.update(sse=sse, sst=sst, sse_sst=(sse / sst) if sst > 0 else 0.0)
    if method == "onedims":
        out["group_ids_by_variable_rows"] = {v: gid[:, j] for j, v in enumerate(names)}
    else:
        out["group_ids_rows"] = gid
    return out


def _notes(X: np.ndarray, names: list[str], method: str) -> tuple[str, ...]:
    n_missing = int(np.isnan(X).any(axis=1).sum())
    if not n_missing:
        return ()
    how = {
        "mdav": "they are grouped with the missing-value distance",
        "mdav_blocked": "they are grouped with the missing-value distance",
        "pca": "a missing value counts as the mean in the component score",
        "single": "a missing sort value sorts last",
    }.get(method, "")
    return (
        f"{n_missing} records have missing values in {', '.join(names)}: a missing value stays missing and takes "
        "no part in its group's value" + (f"; {how}" if how else "") + ".",
    )
