"""``synthetic_utility``: how well a synthetic file keeps the original's distributions and
estimates: the propensity-score mean squared error, the distances of the one-way and two-way
tables, and the estimates a data user publishes.

The files are read by :mod:`sdckit.risk._synthetic_data`; the arithmetic is in
:mod:`sdckit._core.synthetic`; the result class is in :mod:`sdckit.results.synthetic`.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations

import numpy as np

from .._assessed import Assessed, Headline
from .._core import synthetic as K
from .._declare import Param, declare
from .._errors import SdcError
from .._validation import as_name_list, check_bins, raise_problems
from ..engines import RECORDS, get_engine, local_records
from ..results.synthetic import SyntheticUtilityResult
from ..risk._synthetic_data import Files, read_files, require_columns
from ..scenario import accepts_scenario
from .estimates import estimates_of_another_file

__all__ = ["SyntheticUtilityResult", "synthetic_utility"]


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("variables", "columns", role="numeric_keys"),
    Param("order", "int"),
    Param("bins", "any"),
    Param("domains", "columns", role="domains"),
    Param("estimates", "bool"),
    Param("missing"),
    inputs=("original", "synthetic"),
    out_of_core=True,
    assessed=Assessed(
        needs=("keys",),
        headlines=(Headline("pmse", "propensity mean squared error", "lower", "pmse"),),
        order=160,
        part="synthetic",
        variants_only=True,
        option="synthetic",
    ),
)
def synthetic_utility(
    original,
    synthetic,
    *,
    keys=None,
    variables=None,
    order: int = 2,
    bins: int = 10,
    domains=None,
    estimates: bool = True,
    missing=None,
    engine=None,
) -> SyntheticUtilityResult:
    r"""The utility of a synthetic file: propensity-score MSE, one-way and two-way table
    distances, and the change of the estimates a data user publishes.

    **pMSE** (Woo et al. 2009; Snoke et al. 2018, synthpop's ``utility.gen``). The two files
    are stacked, a logistic regression of the file label (1 synthetic) on the main effects of
    the variables (indicators of the categories of each key, missing as a category; the
    numeric variables standardised, a missing value 0 with an indicator) gives propensities
    :math:`\hat p_i`, and with :math:`c = n_{syn} / N`

    .. math:: pMSE = \frac1N \sum_i (\hat p_i - c)^2, \qquad
              S\_pMSE = pMSE \Big/ \frac{(k - 1)(1 - c)^2 c}{N},

    k the number of parameters. pMSE is 0 when the model cannot tell the files apart; S_pMSE
    is about 1 for a synthetic file drawn from the original's distribution, and grows with
    the differences the model sees.

    **Tables.** For every variable (one-way) and every pair of variables up to ``order``, the
    total variation distance :math:`TV = \frac12 \sum_c |p_c - q_c|`, Hellinger's distance and
    the Kullback-Leibler divergence between the original's and the synthetic file's tables
    (a numeric variable in ``bins`` intervals at the original's quantiles).

    **Estimates** (``estimates=True``): :func:`sdckit.estimates_change` of the domain totals,
    shares and means, original against synthetic (the files are not paired; without weights each
    synthetic record stands for n_original / n_synthetic records, so the totals are on the
    original's scale).

    ``loss``, the mean TV over the tables, in [0, 1], says in one number how far the tables
    are; :func:`sdckit.assess` (``synthetic=``) places a synthetic file on the risk-utility map
    beside masked variants by the change of its published estimates, as every variant.

    Parameters
    ----------
    original : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The records the synthetic file was generated from.
    synthetic : table
        The synthetic file, with the same columns (any number of records).
    keys : str or list of str
        Categorical variables compared.
    variables : str or list of str, optional
        Numeric variables compared.
    order : int, default 2
        The largest number of variables in a compared table (1: one-way only).
    bins : int or list of numbers, default 10
        Number of intervals of a numeric variable in the tables (at the original's quantiles),
        or the interval edges (the same for every numeric variable).
    domains : str or list of str, optional
        The domain variables of the estimates (default: the keys with 2 to 12 categories).
    estimates : bool, default True
        Compare the published estimates (:func:`sdckit.estimates_change`).
    missing : value or list of values, optional
        Extra missing-value codes.
    engine : str or Engine, optional
        The engine that reads the data; the measure needs the records in memory.

    Returns
    -------
    SyntheticUtilityResult

    Raises
    ------
    SdcError
        A column absent from a file (:class:`MissingColumnError`), a numeric variable holding
        text, an empty file, no variable at all, an out-of-range parameter.

    References
    ----------
    Woo, Reiter, Oganian and Karr (2009); Snoke, Raab, Nowok, Dibben and Slavkovic (2018),
    "General and specific utility measures for synthetic data"; Shlomo (2022) for the
    distribution distances.
    """
    par: dict = {"order": int(order), "estimates": bool(estimates)}  # checked by the declaration
    problems: list[str] = []
    try:
        par["bins"] = check_bins(bins)
    except SdcError as err:
        problems.append(str(err))
    k = as_name_list(keys, "keys", allow_empty=True) if keys is not None else []
    v = as_name_list(variables, "variables", allow_empty=True) if variables is not None else []
    if not k and not v:
        problems.append("keys: no variable given; expected keys= and/or variables=")
    raise_problems(problems)
    eng = get_engine(engine, original)
    if (v or par["estimates"]) and not eng.has(RECORDS):
        raise SdcError(
            f"engine: synthetic_utility with numeric variables or estimates needs the records in memory; the "
            f"{eng.name} engine runs the keys' tables and pMSE (variables=None, estimates=False), or use "
            "engine='polars'"
        )
    if v:
        data = read_files([original, synthetic], ["original", "synthetic"], k, v, missing, engine, "synthetic_utility")
    else:  # keys only: every engine groups each file into its distinct rows
        data = _compressed_files(original, synthetic, k, missing, eng)
    prop = K.pmse(*_design(data))
    tables = _tables(data, par["order"], par["bins"])
    est = None
    if par["estimates"]:
        est = estimates_of_another_file(original, synthetic, keys=k or None, variables=v or None, domains=domains,
                                        missing=missing, engine=engine)  # fmt: skip
    return _result(data, prop, tables, est, par)


def _distinct_rows(data: Files) -> Files:
    """Keys only: each file as its distinct rows of codes with the records each stands for."""
    cat, cnt = [], []
    for f in range(2):
        rows, inv = np.unique(data.cat[f], axis=0, return_inverse=True)
        w = None if data.counts is None else data.counts[f]
        cat.append(rows)
        cnt.append(np.bincount(inv.reshape(-1), weights=w, minlength=len(rows)).astype(np.int64))
    return replace(data, cat=tuple(cat), num=tuple(np.empty((len(c), 0)) for c in cat), counts=tuple(cnt))


def _compressed_files(original, synthetic, keys, missing, eng) -> Files:
    """Keys only: each file grouped by the keys in the engine (a GROUP BY), the small tables
    coded on one code table in memory and checked as the records are (:func:`read_files`);
    one path for every engine, as fast in memory as coding the records (``docs/contributing.md``)."""
    labels = ("original", "synthetic")
    tables = [eng.table(d, lab) for d, lab in zip((original, synthetic), labels)]
    require_columns(tables, labels, keys)
    comps = [eng.compress(t, keys) for t in tables]
    data = read_files([c.frame for c in comps], list(labels), keys, [], missing, None, "synthetic_utility")
    counts = tuple(np.asarray(c.counts, dtype=np.int64) for c in comps)
    data = replace(data, n=tuple(int(c.sum()) for c in counts), backend=tables[0].backend, counts=counts)
    return _distinct_rows(data)


def _design(data: Files) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The stacked design matrix (intercept, category indicators without the first category,
    standardised numbers and missing indicators), the file label and the rows' weights (None:
    one record per row)."""
    rows = [len(c) for c in data.cat[:2]]
    cols = [np.ones(sum(rows))]
    cat = np.vstack(data.cat[:2])
    for j in range(cat.shape[1]):
        levels = np.unique(cat[:, j])
        cols += [(cat[:, j] == lev).astype(float) for lev in levels[1:]]
    num = np.vstack(data.num[:2])
    for j in range(num.shape[1]):
        x = num[:, j]
        miss = np.isnan(x)
        sd = float(np.nanstd(x)) if (~miss).any() else 0.0
        z = np.where(miss, 0.0, (x - np.nanmean(x)) / sd) if sd > 0 else np.zeros(len(x))
        cols.append(z)
        if miss.any() and not miss.all():
            cols.append(miss.astype(float))
    label = np.concatenate([np.zeros(rows[0]), np.ones(rows[1])])
    weights = None if data.counts is None else np.concatenate(data.counts[:2]).astype(float)
    return np.column_stack(cols), label, weights


def _binned(data: Files, bins) -> list[np.ndarray]:
    """Per numeric variable, codes of ``bins`` intervals at the original's quantiles in both
    files stacked (-1 missing)."""
    out = []
    for j in range(len(data.num_names)):
        xo, xs = data.num[0][:, j], data.num[1][:, j]
        obs = xo[~np.isnan(xo)]
        if not isinstance(bins, (int, np.integer)):
            edges = np.asarray(bins, dtype=float)
        elif len(obs):
            edges = np.unique(np.quantile(obs, np.linspace(0, 1, bins + 1)[1:-1]))
        else:
            edges = np.zeros(0)
        both = np.concatenate([xo, xs])
        code = np.searchsorted(edges, both, side="left")  # interval i: (edge i-1, edge i]
        out.append(np.where(np.isnan(both), -1, code))
    return out


def _tables(data: Files, order: int, bins) -> list[dict]:
    names = list(data.cat_names) + list(data.num_names)
    stacked = [np.concatenate([data.cat[0][:, j], data.cat[1][:, j]]) for j in range(len(data.cat_names))]
    stacked += _binned(data, bins)
    n0 = len(data.cat[0])
    w_o, w_s = (None, None) if data.counts is None else data.counts[:2]
    out = []
    for r in range(1, min(order, len(names)) + 1):
        for idx in combinations(range(len(names)), r):
            m = np.column_stack([stacked[i] for i in idx])
            ids_o, ids_s, rows = K.cell_ids(m[:n0], m[n0:])
            a = np.bincount(ids_o, weights=w_o, minlength=len(rows))
            b = np.bincount(ids_s, weights=w_s, minlength=len(rows))
            d = K.distances(a, b)
            out.append({"variables": [names[i] for i in idx], "tv": float(d["tv"].sum()),
                        "hellinger": float(np.sqrt(d["hellinger2"].sum())), "kl": float(d["kl"].sum()),
                        "cells": len(rows)})  # fmt: skip
    return out


def _result(data: Files, prop: dict, tables: list, est, par: dict) -> SyntheticUtilityResult:
    one = [t for t in tables if len(t["variables"]) == 1]
    two = [t for t in tables if len(t["variables"]) == 2]
    notes = []
    if est is not None:
        notes.append(
            "estimates: the files are not paired; without weights each synthetic record stands for "
            "n_original / n_synthetic records (the totals on the original's scale)"
        )
    return SyntheticUtilityResult(
        keys=data.cat_names,
        variables=data.num_names,
        n_original=data.n[0],
        n_synthetic=data.n[1],
        pmse=prop["pmse"],
        s_pmse=prop["s_pmse"],
        pmse_expected=prop["expected"],
        n_parameters=prop["k"],
        one_way=one,
        two_way=two,
        tables=tables,
        loss=float(np.mean([t["tv"] for t in tables])) if tables else 0.0,
        estimates=est,
        order=par["order"],
        bins=par["bins"] if isinstance(par["bins"], int) else [float(b) for b in par["bins"]],
        notes=tuple(notes),
        backend=data.backend,
        records=local_records(),
    )
