"""``analysis_change``: information loss of types 2 and 3 -- the variance of the estimates,
covariances and correlations on subdomains, and tests of independence of the keys --
original against protected.

Layout: :func:`_validated` reads both files once (with the helpers that
:func:`sdckit.estimates_change` uses); :func:`_variance_rows`, :func:`_structure_rows` and
:func:`_test_rows` compute each family with the kernels of :mod:`sdckit._core.analysis` and
:mod:`sdckit._core.estimates`; the result class is in :mod:`sdckit.results.analysis`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .._core import analysis as A
from .._core import estimates as K
from .._declare import Param, declare
from .._validation import as_missing_codes, raise_problems
from ..engines import in_memory_engine, local_records
from ..results.analysis import AnalysisChangeResult
from ..scenario import accepts_scenario
from . import _access as access
from .estimates import _auto_domains, _clusters, _numbers, _require_pair, _roles, _text, _weights

__all__ = ["AnalysisChangeResult", "analysis_change"]


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    Param("variables", "columns", role="numeric_keys"),
    Param("weight"),
    Param("household"),
    Param("domains", "columns", role="domains"),
    Param("max_categories", "int"),
    Param("min_records", "int"),
    Param("significance", "number"),
    Param("missing"),
    inputs=("original", "protected"),
    excluded="a data user's own analysis (variances, covariances, tests): no headline for every file",
)
def analysis_change(
    original,
    protected,
    *,
    keys=None,
    variables=None,
    weight=None,
    household=None,
    domains=None,
    max_categories: int = 12,
    min_records: int = 5,
    significance: float = 0.05,
    missing=None,
    engine=None,
) -> AnalysisChangeResult:
    r"""Information loss of types 2 and 3: do analyses of the protected file reach what the
    original gives?

    Rows are paired by position. With design weights :math:`w_i` (1 without ``weight``):

    * **Type 2, variance of the estimates.** For each numeric variable y, overall and in each
      category c of each domain variable, the estimated mean
      :math:`\bar y_c = \sum w_i y_i [D_i = c] / \sum w_i [D_i = c]` and total
      :math:`\hat Y_c = \sum w_i y_i [D_i = c]`, and their linearisation variances in each file
      (influence values summed within households,
      :math:`\widehat{\mathrm{var}} = \frac{G}{G-1}\sum_h (z_h - \bar z)^2`, the same clusters
      for both files), with the ratio protected / original. Noise inflates the variances,
      microaggregation deflates them.
    * **Type 3, covariances and correlations on subdomains** (Winkler's analytic validity):
      in the whole file and in each domain category, the weighted covariance matrix
      :math:`S = \sum w_i (x_i - m)(x_i - m)' / (\sum w_i \, (n-1)/n)` and the correlation
      matrix R of the numeric variables (complete records), in each file; reported:
      :math:`\max |r'_{jk} - r_{jk}|`, the mean over the pairs, and
      :math:`\|S' - S\|_F / \|S\|_F`.
    * **Type 3, tests of independence.** For every pair of keys, Pearson's
      :math:`X^2 = \sum (O - E)^2 / E` on the record counts of their cross-table in each file
      (df = (r - 1)(c - 1) over the categories that occur), its p-value and Cramér's V, and
      whether the two files reach the same conclusion at ``significance``.

    A subdomain (or estimate) with fewer than ``min_records`` records in a file is not shown
    for that file.

    Parameters
    ----------
    original, protected : pandas / Polars / PyArrow table, dict of columns, 2-D NumPy array
        The same records in the same order.
    keys : str or list of str, optional
        Categorical keys: the pairs tested for independence, and the candidates for the
        domains when ``domains`` is None.
    variables : str or list of str, optional
        Numeric variables (variances of their means and totals, covariance matrices).
    weight : str, optional
        Design weights (numeric, > 0); None: every record has weight 1.
    household : str, optional
        Household (cluster) identifier, for the variances.
    domains : str or list of str, optional
        Domain variables whose categories are the subdomains. None: the keys with 2 to
        ``max_categories`` categories.
    max_categories : int, default 12
        The most categories a key may have to be chosen as a domain automatically.
    min_records : int, default 5
        The fewest records an estimate or a subdomain's matrices may rest on to be shown.
    significance : float, default 0.05
        Level of the tests of independence.
    missing : value or list of values, optional
        Codes to treat as missing in addition to null / NaN, in both files.
    engine : str (a name of ``sdckit.engines.ENGINES``) or Engine, optional
        The engine that reads the data; this measure needs the records in memory.

    Returns
    -------
    AnalysisChangeResult

    Raises
    ------
    SdcError
        Files of different lengths, a column absent (:class:`MissingColumnError`), a
        non-numeric or infinite variable, bad weights, nothing to compare.

    Notes
    -----
    The tests use record counts, not weights (a weighted test needs a design correction such
    as Rao-Scott's); the variances treat households as ultimate clusters drawn with
    replacement (no finite-population correction, no strata). Cost: O(n) per estimate and per
    pair of keys, O(n p^2) per subdomain.

    References
    ----------
    Winkler (1998), Re-identification methods for evaluating the confidentiality of
    analytically valid microdata, Research in Official Statistics 1(2); Hundepool et al.
    (2012), Statistical Disclosure Control, Wiley, section 3.5; Mlodak, Pietrzak & Jozefowski
    (2022), on the three types of information loss; Wolter (2007), Introduction to Variance
    Estimation, ch. 6.
    """
    eng = in_memory_engine(engine, "analysis_change", original)
    inp = _validated(original, protected, keys, variables, weight, household, domains, max_categories, missing, eng)
    m, alpha = int(min_records), float(significance)  # checked by the declaration
    return AnalysisChangeResult(
        n=inp.n,
        keys=tuple(inp.keys),
        variables=tuple(inp.variables),
        domains=tuple(inp.domains),
        weighted=inp.weighted,
        significance=alpha,
        variance_rows=tuple(_variance_rows(inp, m)),
        structure_rows=tuple(_structure_rows(inp, m)),
        matrices=_matrices(inp, m),
        tests=tuple(_test_rows(inp, alpha)),
        notes=tuple(inp.notes),
        backend=inp.backend,
        records=local_records(),
    )


# ----------------------------------------------------------------------------------------------
# the validated input
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Input:
    """Both files read once: the keys and domains coded on one code table per variable, the
    numeric variables (n, p) with NaN for missing, the weights and the clusters."""

    n: int
    keys: list
    key_codes: dict
    domains: list
    variables: list
    Y_o: np.ndarray
    Y_p: np.ndarray
    w_o: np.ndarray
    w_p: np.ndarray
    cluster: np.ndarray
    n_clusters: int
    weighted: bool
    notes: list
    backend: str


def _validated(original, protected, keys, variables, weight, household, domains, max_categories, missing, eng):
    max_cat = int(max_categories)  # checked by the declaration
    roles = _roles(keys, variables, domains, weight, household)
    miss = as_missing_codes(missing)
    t_o, t_p = access.read_pair(original, protected, eng)
    _require_pair(t_o, t_p, roles)
    coded = {v: access.encode_pair(v, t_o, t_p, miss, eng) for v in dict.fromkeys(roles["keys"] + roles["domains"])}
    notes: list[str] = []
    chosen = roles["domains"] if domains is not None else _auto_domains(roles["keys"], coded, max_cat, notes)
    names = roles["variables"]
    Y_o, Y_p, problems = _numbers(t_o, t_p, names, miss)
    if len(roles["keys"]) < 2 and not names:
        problems.append("keys: fewer than two keys and no numeric variable; expected two keys or variables= to compare")
    raise_problems(problems)
    w_name, hh_name = (roles[r][0] if roles[r] else None for r in ("weight", "household"))
    cluster, n_cl = _clusters(t_o, hh_name, eng)
    return _Input(
        n=t_o.n,
        keys=roles["keys"],
        key_codes=coded,
        domains=list(chosen),
        variables=names,
        Y_o=Y_o,
        Y_p=Y_p,
        w_o=_weights(t_o, w_name),
        w_p=_weights(t_p, w_name),
        cluster=cluster,
        n_clusters=n_cl,
        weighted=w_name is not None,
        notes=notes,
        backend=t_o.backend,
    )


def _num(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _subdomains(inp: _Input) -> list:
    """(domain, category label, codes in the original, codes in the protected file, code):
    the whole file first (domain None), then every category of every domain that occurs in the
    original."""
    one = np.zeros(inp.n, dtype=np.int64)
    out: list[tuple] = [(None, None, one, one, 0)]
    for d in inp.domains:
        co, cp, labels = inp.key_codes[d]
        for c in np.flatnonzero(np.bincount(co[co >= 0], minlength=len(labels)) > 0):
            out.append((d, _text(labels[c]), co, cp, int(c)))
    return out


# ----------------------------------------------------------------------------------------------
# type 2: the variance of the estimates
# ----------------------------------------------------------------------------------------------
def _variance_rows(inp: _Input, m: int) -> list[dict]:
    rows = []
    for d, cat, co, cp, c in _subdomains(inp):
        L = int(max(co.max(initial=0), cp.max(initial=0), c)) + 1
        for j, v in enumerate(inp.variables):
            mo = K.domain_means(co, L, inp.Y_o[:, j], inp.w_o, inp.cluster, inp.n_clusters)
            mp = K.domain_means(cp, L, inp.Y_p[:, j], inp.w_p, inp.cluster, inp.n_clusters)
            to = A.domain_value_totals(co, L, inp.Y_o[:, j], inp.w_o, inp.cluster, inp.n_clusters)
            tp = A.domain_value_totals(cp, L, inp.Y_p[:, j], inp.w_p, inp.cluster, inp.n_clusters)
            rows.append(_variance_row("mean", v, d, cat, mo.n[c], mp.n[c], mo.se[c] ** 2, mp.se[c] ** 2, m))
            rows.append(_variance_row("total", v, d, cat, to[2][c], tp[2][c], to[1][c], tp[1][c], m))
    return rows


def _variance_row(stat, v, d, cat, n_o, n_p, var_o, var_p, m) -> dict:
    n_o, n_p = int(n_o), int(n_p)
    reason = None
    vo, vp = _num(var_o), _num(var_p)
    if n_o < m:
        vo = vp = None
        reason = f"fewer than {m} records in the original: not shown"
    elif n_p < m:
        vp = None
        reason = f"fewer than {m} records in the protected file: not shown"
    ratio = vp / vo if vo and vp is not None else None
    return {
        "statistic": stat,
        "variable": v,
        "domain": d,
        "category": cat,
        "n_original": n_o,
        "n_protected": n_p,
        "variance_original": vo,
        "variance_protected": vp,
        "variance_ratio": ratio,
        "reason": reason,
    }


# ----------------------------------------------------------------------------------------------
# type 3: covariances and correlations on subdomains
# ----------------------------------------------------------------------------------------------
def _covariances(inp: _Input, co, cp, c):
    """(S, R, n) of each file's records in the subdomain."""
    so = A.weighted_covariance(inp.Y_o[co == c], inp.w_o[co == c])
    sp = A.weighted_covariance(inp.Y_p[cp == c], inp.w_p[cp == c])
    return so, sp


def _structure_rows(inp: _Input, m: int) -> list[dict]:
    if len(inp.variables) < 2:
        return []
    rows = []
    iu = np.triu_indices(len(inp.variables), 1)
    for d, cat, co, cp, c in _subdomains(inp):
        (S, R, n_o), (S2, R2, n_p) = _covariances(inp, co, cp, c)
        row = {"domain": d, "category": cat, "n_original": n_o, "n_protected": n_p}
        if n_o < m or n_p < m:
            where = "the original" if n_o < m else "the protected file"
            rows.append({**row, "max_abs_correlation_change": None, "mean_abs_correlation_change": None,
                         "covariance_change": None,
                         "reason": f"fewer than {m} complete records in {where}: not shown"})  # fmt: skip
            continue
        dr = np.abs(R2 - R)[iu]
        dr = dr[~np.isnan(dr)]
        norm = float(np.linalg.norm(S))
        rows.append(
            {
                **row,
                "max_abs_correlation_change": float(dr.max()) if dr.size else None,
                "mean_abs_correlation_change": float(dr.mean()) if dr.size else None,
                "covariance_change": float(np.linalg.norm(S2 - S)) / norm if norm > 0 else None,
                "reason": None,
            }
        )
    return rows


def _matrices(inp: _Input, m: int) -> dict:
    out: dict = {}
    if not inp.variables:
        return out
    for d, cat, co, cp, c in _subdomains(inp):
        (S, R, n_o), (S2, R2, n_p) = _covariances(inp, co, cp, c)
        if n_o < m or n_p < m:
            continue
        out["all" if d is None else f"{d}={cat}"] = {
            "covariance_original": S.tolist(),
            "covariance_protected": S2.tolist(),
            "correlation_original": R.tolist(),
            "correlation_protected": R2.tolist(),
        }
    return out


# ----------------------------------------------------------------------------------------------
# type 3: tests of independence
# ----------------------------------------------------------------------------------------------
def _test_rows(inp: _Input, alpha: float) -> list[dict]:
    rows = []
    for a, b in combinations(inp.keys, 2):
        ao, ap, la = inp.key_codes[a]
        bo, bp, lb = inp.key_codes[b]
        to = A.chi_square(ao, bo, len(la), len(lb))
        tp = A.chi_square(ap, bp, len(la), len(lb))
        judged = not (math.isnan(to.p_value) or math.isnan(tp.p_value))
        rows.append(
            {
                "key_a": a,
                "key_b": b,
                "n_original": to.n,
                "n_protected": tp.n,
                "statistic_original": _num(to.statistic),
                "statistic_protected": _num(tp.statistic),
                "df_original": to.df,
                "df_protected": tp.df,
                "p_value_original": _num(to.p_value),
                "p_value_protected": _num(tp.p_value),
                "v_original": _num(to.v),
                "v_protected": _num(tp.v),
                "same_conclusion": ((to.p_value < alpha) == (tp.p_value < alpha)) if judged else None,
            }
        )
    return rows
