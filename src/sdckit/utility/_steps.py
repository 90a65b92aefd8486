"""The measure families of :func:`sdckit.information_loss`, one function each.

Every step takes the validated input (:class:`~sdckit.utility.information_loss.ValidatedInput`,
NumPy arrays and small tables only) and returns the result fields it computes; a step never
validates, never raises on the caller's data and never touches a frame. Notes for the result
(and the warnings the public function emits) are appended to ``notes`` as ``(text, warn)``.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import infoloss as K
from .._progress import step
from ..results.information_loss import ANOVA_RENAMED, CELLS_RENAMED, CHANGES_RENAMED, RenamedKeys

__all__ = [
    "anova_loss",
    "changes",
    "continuous_statistics",
    "contingency_loss",
    "discrepancies",
    "distances",
    "eigen_losses",
    "entropy_loss",
    "gamma_loss",
    "il1_family",
]


def fstack(cols) -> np.ndarray:
    """Columns side by side in a Fortran-ordered matrix (one contiguous write per column)."""
    out = np.empty((cols[0].shape[0], len(cols)), dtype=np.result_type(*cols), order="F")
    for j, c in enumerate(cols):
        out[:, j] = c
    return out


# ----------------------------------------------------------------------------------------------
# record-level changes and distances
# ----------------------------------------------------------------------------------------------
def _change_counts(mo, mp, neq) -> RenamedKeys:
    both = ~mo & ~mp
    return RenamedKeys(
        {
            "n_changed": int(np.count_nonzero(neq & both)),
            "n_suppressed": int(np.count_nonzero(~mo & mp)),
            "n_imputed": int(np.count_nonzero(mo & ~mp)),
            "n_missing_original": int(np.count_nonzero(mo)),
            "n_missing_protected": int(np.count_nonzero(mp)),
        },
        CHANGES_RENAMED,
    )


def changes(inp, absdiff=None) -> dict:
    """Per variable, the records changed, suppressed and imputed (``changes``). ``absdiff``:
    |X - Y| of the continuous variables when already computed."""
    step("changed and suppressed cells")
    out = {}
    for v in inp.names:
        if inp.scales[v] == "continuous":
            k = inp.cont.index(v)
            d = None if absdiff is None else absdiff[:, k]
            if d is not None and not np.isnan(d.sum()):  # nothing missing: changed <=> |x - x'| > 0
                out[v] = RenamedKeys(
                    dict.fromkeys(CHANGES_RENAMED.values(), 0) | {"n_changed": int(np.count_nonzero(d > 0))},
                    CHANGES_RENAMED,
                )
                continue
            x, y = inp.X[:, k], inp.Y[:, k]
            out[v] = _change_counts(np.isnan(x), np.isnan(y), x != y)
        else:
            e = inp.coded[v]
            out[v] = _change_counts(e.codes_o < 0, e.codes_p < 0, e.codes_o != e.codes_p)
    return {"changes": out}


def distances(inp, absdiff=None) -> dict:
    """Mlodak's lambda and lambda_j (distances d(x, x') per record and variable), and the
    Domingo-Ferrer & Torra categorical distance (ordinal distances divided by R).
    ``absdiff``: |X - Y| of the continuous variables when already computed."""
    step("per-variable distances (lambda)")
    n, m = inp.n, len(inp.names)
    total = np.zeros(n)
    dist = np.empty((n, m)) if inp.records else None
    lambda_j: dict = {}
    cat_dist: dict = {}
    for j, v in enumerate(inp.names):
        if inp.scales[v] == "continuous":
            k = inp.cont.index(v)
            d = K.continuous_distance(
                inp.X[:, k],
                inp.Y[:, k],
                inp.suppressed,
                inp.continuous_distance,
                None if absdiff is None else absdiff[:, k],
            )
        elif inp.scales[v] == "nominal":
            e = inp.coded[v]
            d = K.nominal_distance(e.codes_o, e.codes_p)
            cat_dist[v] = float(d.mean())
        else:
            e = inp.coded[v]
            d = K.ordinal_distance(e.ranks_o, e.ranks_p, e.n_ranks, inp.suppressed)
            cat_dist[v] = float(
                K.ordinal_distance(e.ranks_o, e.ranks_p, e.n_ranks, "sdcmicro", divisor=e.n_ranks).mean()
            )
        lambda_j[v] = float(d.mean())
        total += d
        if dist is not None:
            dist[:, j] = d
    record_loss = total / m
    return {
        "lambda_": float(record_loss.mean()),
        "lambda_j": lambda_j,
        "categorical_distance": cat_dist,
        "record_loss": record_loss,
        "distances": dist,
    }


# ----------------------------------------------------------------------------------------------
# continuous variables
# ----------------------------------------------------------------------------------------------
def continuous_statistics(inp, absdiff=None) -> tuple[dict, tuple]:
    """What several continuous measures share, computed once: the per-variable sums of the
    paired differences (IL1 family, X - X' discrepancies) and the means and covariances of
    each file when it has no missing value (covariance discrepancies, eigenvalues, gamma)."""
    return K.column_stats(inp.X, inp.Y, inp.bound, absdiff), (K.moments(inp.X), K.moments(inp.Y))


def il1_family(inp, stats: dict, notes: list) -> dict:
    """sdcMicro's IL1 and IL1s, their per-variable sums and means (Yancey, Winkler & Creecy)."""
    step("IL1 family")
    cont, n = inp.cont, inp.n
    r = K.il1_by_variable(inp.X, inp.Y, stats)
    il1 = float(r["il1"].sum())
    cells = float(r["il1_cells"].sum())
    keep = np.ones(len(cont), bool)
    zero = [v for k, v in enumerate(cont) if not (r["sd"][k] > 0)]
    if zero:
        msg = (
            f"IL1s: variable(s) {', '.join(zero)} have standard deviation 0 (or fewer than two values) in the "
            "original file; their IL1s terms are infinite"
        )
        if inp.zero_sd == "exclude":
            keep = np.array([v not in zero for v in cont])
            msg += " and they are left out of the IL1s totals"
        notes.append((msg, True))
    il1s = float(r["il1s"][keep].sum())
    return {
        "il1": il1,
        "mean_relative_error": il1 / 100.0 / cells if cells else None,
        "il1s": il1s,
        "il1s_mean": il1s / (n * int(keep.sum())) if keep.any() else None,
        "il1_by_variable": {v: float(r["il1"][k]) for k, v in enumerate(cont)},
        "il1s_by_variable": {v: float(r["il1s"][k]) for k, v in enumerate(cont)},
    }


def discrepancies(inp, stats: dict, moments) -> dict:
    """The Domingo-Ferrer, Mateo-Sanz & Torra table with Trottini's bounded mean variation."""
    step("discrepancy table")
    table = K.discrepancy(inp.X, inp.Y, inp.bound, stats, moments=moments)
    return {"discrepancy": {pair: None if d is None else RenamedKeys(d, CELLS_RENAMED) for pair, d in table.items()}}


def eigen_losses(inp, moments, notes: list) -> dict:
    """The eigenvalue loss and, with ``robust=True``, the robust (MCD) eigenvalue loss."""
    step("eigenvalue losses")
    if len(inp.cont) < 2:
        return {"eigen": None, "robust_eigen": None}
    e = K.eigen_loss(inp.X, inp.Y, moments=moments)
    eigen = e if math.isfinite(e) else None
    if eigen is None:
        notes.append(
            ("eigen: the eigenvalue loss could not be computed (constant variable or a zero eigenvalue)", False)
        )
    robust = None
    if inp.robust:
        try:
            re = K.robust_eigen_loss(inp.X, inp.Y, seed=inp.seed)
        except (ValueError, np.linalg.LinAlgError):
            re = float("nan")
        robust = re if math.isfinite(re) else None
        if robust is None:
            notes.append(
                (
                    "robust eigen: the MCD eigenvalue loss could not be computed (too few complete records, "
                    "or more than half of them on a hyperplane)",
                    False,
                )
            )
    return {"eigen": eigen, "robust_eigen": robust}


def gamma_loss(inp, moments, notes: list) -> dict:
    """gamma from the diagonals of the inverse correlation matrices: the continuous variables,
    and the ordinal ones as ranks with Kendall's tau."""
    step("gamma (association loss)")
    cont = list(inp.cont)
    ords = [v for v in inp.cat if inp.scales[v] == "ordinal"] if inp.gamma_method == "kendall" else []
    gvars = cont + ords
    if len(gvars) < 2:
        if cont:
            notes.append(("gamma: needs at least two continuous variables", False))
        return {"gamma": None}
    if not ords:
        GX, GY = inp.X, inp.Y
    else:
        GX = fstack([inp.X[:, j] for j in range(len(cont))] + [inp.coded[v].ranks_o for v in ords])
        GY = fstack([inp.Y[:, j] for j in range(len(cont))] + [inp.coded[v].ranks_p for v in ords])
        moments = None
    mo, mp = moments if moments is not None else (None, None)
    do = K.inverse_corr_diag(GX, inp.gamma_method, moments=mo)
    dp = K.inverse_corr_diag(GY, inp.gamma_method, moments=mp)
    if do is None or dp is None:
        which = "original" if do is None else "protected"
        notes.append(
            (
                f"gamma: the correlation matrix of the {which} file is singular or undefined (complete "
                "records only); gamma is not computed",
                True,
            )
        )
        return {"gamma": None}
    return {"gamma": K.gamma(do, dp)}


# ----------------------------------------------------------------------------------------------
# categorical variables
# ----------------------------------------------------------------------------------------------
def contingency_loss(inp) -> dict:
    """CTBIL over every table of up to ``ctbil_dim`` categorical variables: on weighted cell
    totals when the input has weights (``ctbil``), and on record counts (``ctbil_unweighted``,
    the same as ``ctbil`` without weights)."""
    step("contingency tables (CTBIL)")
    cat = inp.cat
    if not cat or inp.ctbil_dim == 0:
        return {"ctbil": None, "ctbil_unweighted": None}
    co = fstack([inp.coded[v].codes_o for v in cat])
    cp = fstack([inp.coded[v].codes_p for v in cat])
    levels = [len(inp.coded[v].labels) for v in cat]
    counts = _ctbil_dict(inp, K.contingency_loss(co, cp, levels, inp.ctbil_dim), None)
    if inp.weight is None:
        return {"ctbil": counts, "ctbil_unweighted": counts}
    weighted = K.contingency_loss(co, cp, levels, inp.ctbil_dim, inp.w_o, inp.w_p)
    return {"ctbil": _ctbil_dict(inp, weighted, inp.weight), "ctbil_unweighted": counts}


def _ctbil_dict(inp, ct: dict, weight: str | None) -> RenamedKeys:
    """The result dict of one CTBIL computation (``weight``: the weight column, None for counts)."""
    cast = int if weight is None else float
    return RenamedKeys(
        {
            "max_dim": min(inp.ctbil_dim, len(inp.cat)),
            "variables": list(inp.cat),
            "weighted": weight is not None,
            "weight": weight,
            "total": ct["total"],
            "n_cells": ct["cells"],
            "n_tables": ct["tables"],
            "normalised": ct["total"] / ct["cells"] if ct["cells"] else None,
            "by_dim": {str(k): v for k, v in ct["by_dim"].items()},
            "by_variable": {v: cast(ct["by_variable"][k]) for k, v in enumerate(inp.cat)},
        },
        CELLS_RENAMED,
    )


def entropy_loss(inp) -> dict:
    """EBIL of each PRAMed variable and, for two or more, of all of them jointly."""
    step("entropy loss (EBIL)")
    out: dict = {}
    mats, cols_o, cols_p = [], [], []
    for v, pm in inp.pram.items():
        if pm.parts:  # matrices per stratum: the sum over the strata
            out[v] = sum(K.entropy_loss(p.matrix, p.counts_o, p.counts_p, inp.ebil_base)[0] for _, p in pm.parts)
        else:
            out[v] = K.entropy_loss(pm.matrix, pm.counts_o, pm.counts_p, inp.ebil_base)[0]
        mats.append(pm.matrix)
        cols_o.append(pm.index_o)
        cols_p.append(pm.index_p)
    joint = None
    if len(mats) >= 2 and any(pm.parts for pm in inp.pram.values()):
        joint = _joint_by_parts(inp)
    elif len(mats) >= 2:
        joint = K.joint_entropy_loss(fstack(cols_o), fstack(cols_p), mats, inp.ebil_base)
    return {"ebil": out, "ebil_joint": joint}


def _joint_by_parts(inp):
    """Joint EBIL with matrices per stratum: the records grouped by the matrix each variable
    uses, the joint EBIL of each group summed (None when a group has an impossible tuple)."""
    part, local_o, local_p, matrices = [], [], [], []
    for pm in inp.pram.values():
        parts = pm.parts or ((np.arange(inp.n), pm),)
        pid = np.zeros(inp.n, dtype=np.int64)
        lo = np.full(inp.n, -1, dtype=np.int64)
        lp = np.full(inp.n, -1, dtype=np.int64)
        for k, (rows, sub) in enumerate(parts):
            pid[rows], lo[rows], lp[rows] = k, sub.index_o, sub.index_p
        part.append(pid)
        local_o.append(lo)
        local_p.append(lp)
        matrices.append([sub.matrix for _, sub in parts])
    groups, which = np.unique(np.column_stack(part), axis=0, return_inverse=True)
    total = 0.0
    for g, combo in enumerate(groups):
        rows = np.flatnonzero(which.reshape(-1) == g)
        mats = [matrices[v][k] for v, k in enumerate(combo)]
        e = K.joint_entropy_loss(
            fstack([c[rows] for c in local_o]), fstack([c[rows] for c in local_p]), mats, inp.ebil_base
        )
        if e is None:
            return None
        total += e
    return total


def _relative(a, b):
    return None if a is None or b is None or not a else (b - a) / a


def anova_loss(inp, group_sums=None) -> dict:
    """R^2 of the main-effects model of each continuous y on its categorical factors, in each
    file; models with the same factors share one pass (``group_sums``: a faster grouped sum
    for large inputs, from the data-access layer)."""
    step("ANOVA loss")
    by_factors: dict[tuple, list] = {}
    for y, factors in inp.anova.items():
        by_factors.setdefault(tuple(factors), []).append(y)
    fits = {}
    for factors, ys in by_factors.items():
        levels = [len(inp.coded[f].labels) for f in factors]
        idx = [inp.cont.index(y) for y in ys]
        fa = K.anova_r2_many(inp.X[:, idx], [inp.coded[f].codes_o for f in factors], levels, group_sums=group_sums)
        fb = K.anova_r2_many(inp.Y[:, idx], [inp.coded[f].codes_p for f in factors], levels, group_sums=group_sums)
        fits.update({y: (a, b) for y, a, b in zip(ys, fa, fb)})
    out = {}
    for y, factors in inp.anova.items():
        a, b = fits[y]
        r2o, r2p = a["r2"], b["r2"]
        loss = abs(r2o - r2p) if r2o is not None and r2p is not None else None
        out[y] = RenamedKeys(
            {
                "factors": list(factors),
                "r2_original": r2o,
                "r2_protected": r2p,
                "loss": loss,
                "relative_loss": loss / r2o if loss is not None and r2o else None,
                "between_change": _relative(a["ss_between"], b["ss_between"]),
                "within_change": _relative(a["ss_within"], b["ss_within"]),
                "n_original": a["n"],
                "n_protected": b["n"],
            },
            ANOVA_RENAMED,
        )
    return {"anova": out}
