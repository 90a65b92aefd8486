r"""Rank swapping of continuous variables (Moore 1996; sdcMicro's ``rankSwap``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import rank_swap as core
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_missing_codes
from ..results.protection import ProtectionResult
from ._common import Change, Input, common_scale, finish, read_input, resolve_seed
from .noise import per_variable, require_finite, require_numeric, stratum_groups

__all__ = ["rank_swap"]

#: the target correlation ratio when neither swap_range, r0 nor k0 is given (sdcMicro's default)
DEFAULT_R0 = 0.95


@declare(
    "method",
    Param("variables", "columns", role="numeric_keys"),
    Param("swap_range", "number"),
    Param("r0", "number"),
    Param("k0", "number"),
    Param("top_percent", "number"),
    Param("bottom_percent", "number"),
    Param("strata"),
    Param("missing"),
    Param("seed"),
    random=True,
    changes="the values of the continuous variables (swapped between records of close rank)",
    aliases=("swap",),
    heading="Rank swapping",
)
def rank_swap(
    data,
    variables,
    *,
    swap_range=None,
    r0=None,
    k0=None,
    top_percent=5,
    bottom_percent=5,
    strata=None,
    missing=None,
    seed=None,
    engine=None,
) -> ProtectionResult:
    r"""Swap the values of continuous variables between records of close rank (rank swapping).

    Each variable is swapped independently (and within each stratum with ``strata``). With m
    its observed values, sorted from the largest to the smallest:

    1. pooling: the largest floor(m ``top_percent`` / 100) values are replaced by their mean,
       and so are the smallest floor(m ``bottom_percent`` / 100); they are not swapped;
    2. the swap range P, a percentage of the m' values left, is ``swap_range``, or follows from
       ``r0`` (the target ratio of the correlations after and before swapping) or ``k0`` (the
       subset-mean preservation factor), as in Moore (1996):

       P / 100 = sqrt(2 Var (1 - R0)) / D      or      P / 100 = sqrt(8/3) K0 |mean| / D,

       with the mean and the variance (denominator m') of the m' values left and D the
       distance between the pooling thresholds: the smallest pooled top value (the largest
       value when nothing is pooled at the top) and the largest pooled bottom value (the
       smallest value); P = 0 when D = 0. With none of the three, R0 = 0.95;
    3. the m' values are visited in rank order (largest first); a value not yet swapped is
       swapped with a value drawn uniformly among those not yet swapped whose rank lies within
       (rank, rank + W], W = floor(P m' / 100); a value without such a partner keeps its place.

    Without pooling (``top_percent=0, bottom_percent=0``) the values of every variable are a
    permutation of the original ones. A missing value stays missing and takes no part.

    Parameters
    ----------
    data : pandas / Polars / PyArrow table, dict of columns or 2-D NumPy array
    variables : str or list of str
        The numeric variables to swap.
    swap_range : float in [0, 100], optional
        P, the largest rank distance of a swap as a percentage of the values swapped.
    r0 : float in [0, 1], optional
        Target ratio of the correlation after swapping to the one before (R0).
    k0 : float >= 0, optional
        Subset-mean preservation factor (K0): subset means before and after differ by at most
        about 2 K0 mean / sqrt(subset size).
    top_percent, bottom_percent : float in [0, 100], default 5
        Percentages of the largest and smallest values pooled (replaced by their mean) before
        swapping; together at most 100.
    strata : str or list of str, optional
        Values are ranked, pooled and swapped within each stratum.
    missing : value or list of values, optional
        Extra missing-value codes (e.g. ``-999``): such values stay as they are.
    seed : int, optional
        Seed of the random draws (the same seed gives the same result); None draws a fresh
        seed, recorded in ``parameters["seed"]``.
    engine : optional
        The in-memory engine (default); this method needs the records in memory (DuckDB and
        Spark: an error).

    Returns
    -------
    ProtectionResult
        ``data`` with the variables swapped; ``n_changed`` the cells whose value changed.
        ``details``: ``swap_range`` (P in percent) and ``window`` (W in ranks) per variable,
        ``n_swapped`` (values that took part in a swap; a swap of equal values changes no
        cell) and ``n_pooled`` (top, bottom) per variable; with ``strata``, ``swap_range`` and
        ``window`` per variable and stratum.

    Notes
    -----
    sdcMicro's ``rankSwap`` uses its ``P`` as a share of the records in the swap (P = 5 means
    500 %), although its documentation calls it a percentage; here ``swap_range`` is a
    percentage. sdcMicro takes partners of rank below rank + P m' (strictly); the two rules
    differ only when P m' / 100 is a whole number. The random draws are not those of R.

    References
    ----------
    Moore, R. A. (1996), Controlled data-swapping techniques for masking public use microdata
    sets, U.S. Bureau of the Census, Statistical Research Division Report Series RR 96-04.
    """
    inp = read_input(data, variables, "variables", strata=strata, engine=engine, method="rank_swap")
    opts = _options(inp, swap_range, r0, k0, top_percent, bottom_percent)
    seed = resolve_seed(seed)
    missing_codes = as_missing_codes(missing)
    names = list(inp.variables)
    raw = inp.table.floats(names)
    X = inp.table.floats(names, missing=list(missing_codes))
    require_finite(names, X)
    groups = stratum_groups(inp)
    rng = np.random.default_rng(seed)
    table, changes = inp.table, {}
    stats = {label: {k: np.zeros(len(names)) for k in _STATS} for label, _ in groups}
    whole = len(groups) == 1  # no strata: the group is every row, in order
    for j, name in enumerate(names):
        new = raw[:, j].copy()
        scale = common_scale(X[:, j])  # values near 1e200: swapped at a power-of-two scale (exact)
        for label, rows in groups:
            x = X[:, j] if whole else X[rows, j]
            values, got = _swap_group(x / scale if scale != 1.0 else x, opts, rng)
            if scale != 1.0:
                values = values * scale
            missing_here = np.isnan(x)
            if whole:
                new = np.where(missing_here, new, values) if missing_here.any() else values
            else:
                new[rows] = np.where(missing_here, raw[rows, j], values)
            for key, value in got.items():
                stats[label][key][j] = value
        observed = ~np.isnan(X[:, j])
        changes[name] = Change(observed & (new != raw[:, j]))
        table = inp.engine.with_values(table, name, new)
    info = [(label, stats[label]) for label, _ in groups]
    notes = _notes(names, info)
    parameters = {
        "variables": names,
        **{k: opts[k] for k in ("swap_range", "r0", "k0", "top_percent", "bottom_percent")},
        "strata": list(strata) if isinstance(strata, (list, tuple)) else strata,
        "missing": list(missing_codes) or None,
        "seed": seed,
    }
    return finish(rank_swap, parameters, inp, table, changes, _details(names, info), tuple(notes))


_STATS = ("swap_range", "window", "n_swapped", "n_top", "n_bottom", "n_values")


def _options(inp: Input, swap_range, r0, k0, top_percent, bottom_percent) -> dict:
    given = [name for name, v in (("swap_range", swap_range), ("r0", r0), ("k0", k0)) if v is not None]
    if len(given) > 1:
        raise SdcError(f"{', '.join(given)}: {len(given)} given; expected at most one of swap_range, r0 and k0")
    values = {"swap_range": swap_range, "r0": r0 if given else DEFAULT_R0, "k0": k0}
    values.update(top_percent=top_percent, bottom_percent=bottom_percent)
    # each checked by the declaration (r0's default by its rule); as numbers, as the checks return them
    opts: dict[str, Any] = {k: None if v is None else float(v) for k, v in values.items()}
    if opts["top_percent"] + opts["bottom_percent"] > 100:
        raise SdcError(
            f"top_percent, bottom_percent: {opts['top_percent']:g} + {opts['bottom_percent']:g} > 100; "
            "expected pooled shares that do not overlap (at most 100 together)"
        )
    require_numeric(inp)
    return opts


def _swap_group(x: np.ndarray, opts: dict, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """Pool and swap the observed values of one variable in one group (rank order: largest
    first, ties by row); returns the new values (NaN where missing) and the group's counts."""
    observed = ~np.isnan(x)
    if observed.all():
        order = _rank_order(x)
    else:
        rows = np.flatnonzero(observed)
        order = rows[_rank_order(x[rows])]
    m = order.size
    top, bottom = core.pool_counts(m, opts["top_percent"], opts["bottom_percent"])
    pooled, top_value, bottom_value = core.pool_tails(x[order], top, bottom)
    middle = pooled[top : m - bottom]
    if opts["swap_range"] is not None:
        share = opts["swap_range"] / 100.0
    elif opts["k0"] is not None:
        share = core.range_from_k0(middle, opts["k0"], top_value, bottom_value)
    else:
        share = core.range_from_r0(middle, opts["r0"], top_value, bottom_value)
    width = int(math.floor(share * middle.size + 1e-9))
    swapped, n_swapped = core.swap_values(middle, width, rng)
    pooled[top : m - bottom] = swapped
    out = np.full(x.size, np.nan)
    out[order] = pooled
    counts = {"swap_range": 100.0 * share, "window": width, "n_swapped": n_swapped}
    return out, {**counts, "n_top": top, "n_bottom": bottom, "n_values": middle.size}


def _rank_order(v: np.ndarray) -> np.ndarray:
    """Positions of ``v`` from the largest value to the smallest, ties in position order (a
    stable sort); the faster unstable sort when no two values are equal (the same order)."""
    neg = -v
    order = np.argsort(neg)
    ranked = neg[order]
    if ranked.size > 1 and np.any(ranked[1:] == ranked[:-1]):
        order = np.argsort(neg, kind="stable")
    return order


def _details(names: list[str], info: list) -> dict:
    totals = {key: {v: int(sum(s[key][j] for _, s in info)) for j, v in enumerate(names)} for key in _STATS[2:]}
    return {
        "swap_range": per_variable(names, info, "swap_range"),
        "window": per_variable(names, info, "window", int),
        "n_swapped": totals["n_swapped"],
        "n_pooled": {v: {"top": totals["n_top"][v], "bottom": totals["n_bottom"][v]} for v in names},
    }


def _notes(names: list[str], info: list) -> list[str]:
    """A note per variable whose swap range covers less than one rank somewhere: in the file,
    or in how many strata (a count, not the strata's labels, which can identify)."""
    notes = []
    for j, v in enumerate(names):
        short = [label for label, s in info if s["n_values"][j] >= 2 and s["window"][j] < 1]
        if not short:
            continue
        n = len(short)
        where = "" if short == [None] else f" in {n} {'stratum' if n == 1 else 'strata'}"
        notes.append(f"{v}{where}: the swap range covers less than one rank; no value swapped")
    return notes
