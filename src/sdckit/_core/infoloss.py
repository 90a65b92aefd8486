"""Information-loss kernels on plain NumPy arrays.

Continuous variables arrive as float matrices ``(n, p)`` with NaN for a missing value;
categorical variables as int codes (``-1`` = missing) or as float ranks ``1..R`` (NaN =
missing) for ordinal ones. No frame library (not even inside a function) and no validation
here: the public function in :mod:`sdckit.utility` validates once, reads the files through its
data-access helpers and calls these kernels. SciPy is imported inside the functions that need
it (this module is loaded by ``import sdckit``).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import NamedTuple

import numpy as np

from .robust import content_order, mcd

__all__ = [
    "Moments",
    "moments",
    "abs_differences",
    "column_stats",
    "il1_by_variable",
    "pairwise_cov",
    "scale",
    "scaled_pairwise_cov",
    "eigen_loss",
    "robust_eigen_loss",
    "discrepancy",
    "inverse_corr_diag",
    "gamma",
    "nominal_distance",
    "ordinal_distance",
    "continuous_distance",
    "original_sd",
    "contingency_loss",
    "entropy_loss",
    "joint_entropy_loss",
    "anova_r2",
    "anova_r2_many",
]

_SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------------------------------------
# shared moments of a complete matrix
# ---------------------------------------------------------------------------------------------
class Moments(NamedTuple):
    """Mean and covariance (n - 1) of a matrix without missing values, computed once and
    shared by the measures that would otherwise each compute them (the covariance and
    correlation discrepancies, the eigenvalue loss, gamma)."""

    mean: np.ndarray
    cov: np.ndarray

    def corr(self) -> np.ndarray:
        """The correlation matrix, as ``np.corrcoef`` computes it (divided by the standard
        deviations on each side, clipped to [-1, 1]); NaN where a variable is constant."""
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.sqrt(np.diag(self.cov))
            c = self.cov / d[:, None]
            c = c / d[None, :]
        return np.clip(c, -1, 1)


def moments(X: np.ndarray) -> Moments | None:
    """:class:`Moments` of X (n, p), or None when X has a missing value (NaN) or fewer than two
    records: the measures then take their pairwise- or complete-record paths.

    One pass for the means, one for the deviations and one matrix product (BLAS), instead of
    one covariance per measure.
    """
    n = X.shape[0]
    if n < 2:
        return None
    mean = X.mean(axis=0)
    if not np.all(np.isfinite(mean)):
        return None  # NaN (a missing value) somewhere
    dev = X - mean
    return Moments(mean, np.atleast_2d(dev.T @ dev) / (n - 1))


# ---------------------------------------------------------------------------------------------
# G.1 IL1 family
# ---------------------------------------------------------------------------------------------
def abs_differences(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """|X - Y| (NaN where a value is missing), Fortran-ordered: computed once and shared by
    the distances of lambda and the sums of the IL1 family."""
    D = np.empty(X.shape, order="F")
    np.subtract(X, Y, out=D)
    return np.abs(D, out=D)


def column_stats(X: np.ndarray, Y: np.ndarray, bound: float = 1.0, absdiff: np.ndarray | None = None) -> dict:
    """One pass per variable over the paired values (pairs with a missing value skipped).

    Arrays of length p: ``ok`` (pairs with both values), ``sq`` (sum of (x - x')^2), ``abs``
    (sum of |x - x'|), ``rel`` (sum of |x - x'| / |x| over x != 0), ``nz`` (pairs with x != 0),
    ``bounded`` (sum of min(|x - x'| / |x|, B), a term B for x = 0 != x') and ``sd``
    (sd (n - 1) of the original over its observed values). Shared by the IL1 family (G.1) and
    the X - X' discrepancies (G.2). ``absdiff``: :func:`abs_differences` of X, Y when already
    computed.
    """
    p = X.shape[1]
    out = {k: np.zeros(p) for k in ("ok", "sq", "abs", "rel", "nz", "bounded", "sd")}
    for j in range(p):
        x, y = X[:, j], Y[:, j]
        d = np.abs(x - y) if absdiff is None else absdiff[:, j]
        total = float(d.sum())
        if math.isnan(total):  # a missing value in x or y (both are finite otherwise)
            nx = np.isnan(x)
            ok = ~(nx | np.isnan(y))
            xo, xs, d = x[ok], x[~nx], d[ok]
            total = float(d.sum())
        else:
            xo, xs = x, x
        ax = np.abs(xo)
        nz = ax > 0
        if nz.all():
            rel = np.divide(d, ax, out=ax)
            zero_changed = 0
        else:
            rel = d[nz] / ax[nz]
            zero_changed = int(np.count_nonzero(d[~nz] > 0))
        out["ok"][j] = d.size
        out["sq"][j] = float(np.dot(d, d))
        out["abs"][j] = total
        out["rel"][j] = float(rel.sum())
        out["nz"][j] = rel.size
        out["bounded"][j] = float(np.minimum(rel, bound, out=rel).sum()) + bound * zero_changed
        out["sd"][j] = float(np.std(xs, ddof=1)) if xs.size > 1 else float("nan")
    return out


def il1_by_variable(X: np.ndarray, Y: np.ndarray, stats: dict | None = None) -> dict:
    """Per-variable sums of the IL1 family.

    Returns arrays of length p:

    * ``il1``: 100 * sum_i |x - x'| / |x| over the finite terms (sdcMicro ``dUtility(method="IL1")``
      drops the Inf terms of x = 0, x' != 0 and the NaN terms of 0/0 and of missing pairs);
    * ``il1_cells``: number of terms in that sum;
    * ``il1s``: sum_i |x - x'| / (sqrt(2) S_j) (sdcMicro ``IL1s``), S_j the sd (n - 1) of the
      original variable over its observed values; inf when S_j = 0 and some value changed;
    * ``il1s_cells``: number of pairs with both values observed;
    * ``sd``: S_j.

    ``stats``: the :func:`column_stats` of X, Y when already computed.
    """
    st = column_stats(X, Y) if stats is None else stats
    sd = st["sd"]
    with np.errstate(divide="ignore", invalid="ignore"):
        il1s = np.where(sd > 0, st["abs"] / (sd * _SQRT2), np.where(st["abs"] > 0, np.inf, 0.0))
    return {
        "il1": 100.0 * st["rel"],
        "il1_cells": st["nz"].copy(),
        "il1s": il1s,
        "il1s_cells": st["ok"].copy(),
        "sd": sd.copy(),
    }


# ---------------------------------------------------------------------------------------------
# covariances, eigenvalues (G.1); the robust eigenvalues use the MCD of :mod:`.robust`
# ---------------------------------------------------------------------------------------------
def pairwise_cov(X: np.ndarray) -> np.ndarray:
    """Covariance matrix with pairwise-complete observations (R ``var(use="pairwise.complete.obs")``).

    Cell (j, k) is the sample covariance (n - 1) of the records where both j and k are observed,
    with the means of that subset. Vectorised: three matrix products of the (n, p) data.
    """
    miss = np.isnan(X)
    if not miss.any():
        return np.atleast_2d(np.cov(X, rowvar=False))
    M = (~miss).astype(np.float64)
    X0 = np.where(miss, 0.0, X)
    cnt = M.T @ M  # pairs observed
    sxy = X0.T @ X0
    sx = X0.T @ M  # sx[j, k]: sum of x_j over records where k is observed too
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = (sxy - sx * sx.T / cnt) / (cnt - 1)
    cov[cnt < 2] = np.nan
    return cov


def scale(X: np.ndarray) -> np.ndarray:
    """R ``scale()``: centre by the mean and divide by the sd (n - 1), both over observed values."""
    import warnings

    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # columns with fewer than two values: NaN
        if np.isnan(X).any():
            mu = np.nanmean(X, axis=0)
            sd = np.nanstd(X, axis=0, ddof=1)
        else:
            mu = X.mean(axis=0)
            sd = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.full(X.shape[1], np.nan)
        return (X - mu) / sd


_scale = scale


def scaled_pairwise_cov(X: np.ndarray) -> np.ndarray:
    """sdcMicro's ``var(scale(x), use = "pairwise.complete.obs")`` (the correlation matrix when
    nothing is missing)."""
    return pairwise_cov(_scale(X))


def _eigen_difference(c1: np.ndarray, c2: np.ndarray) -> float:
    if not (np.all(np.isfinite(c1)) and np.all(np.isfinite(c2))):
        return float("nan")
    e1 = np.linalg.eigvalsh(c1)[::-1]
    e2 = np.linalg.eigvalsh(c2)[::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        d = float(np.sum(np.abs(e1 - e2) / e1))
    return d


def eigen_loss(X: np.ndarray, Y: np.ndarray, scaled: tuple | None = None, moments: tuple | None = None) -> float:
    """sum_l |e_l - e'_l| / e_l over the decreasing eigenvalues of the scaled pairwise-complete
    covariance matrices (sdcMicro ``dUtility(method="eigen")``); NaN when it cannot be computed.
    ``scaled``: ``(scale(X), scale(Y))`` when already computed. ``moments``: the
    :class:`Moments` of X and Y (``(None, None)`` or None when not available); without
    missing values the scaled covariance is the correlation matrix."""
    mx, my = moments if moments is not None else (None, None)
    if mx is not None and my is not None:
        return _eigen_difference(mx.corr(), my.corr())
    Xs, Ys = scaled if scaled is not None else (scale(X), scale(Y))
    return _eigen_difference(pairwise_cov(Xs), pairwise_cov(Ys))


def robust_eigen_loss(
    X: np.ndarray, Y: np.ndarray, seed: int = 0, max_records: int = 100_000, scaled: tuple | None = None
) -> float:
    """sum_l |e_l - e'_l| / e_l over the eigenvalues of the MCD covariance matrices of the
    scaled data (sdcMicro ``dUtility(method="robeigen")``), on complete records of each file.

    The MCD is :func:`sdckit._core.robust.mcd` (alpha = 1/2, consistency factor, reweighted)
    without the small-sample factors (``small_sample=False``: robustbase's ``covMcd`` applies
    them, this measure never has), carrying only the best subsample solution to all records
    (``n_full=1``, the cost of a C-step being O(n p^2) on up to ``max_records`` records).
    Records are put in an order fixed by their values (original first, protected to break
    ties, :func:`~sdckit._core.robust.content_order`), so that the random subsets of the MCD
    do not depend on the row order of the files. Above ``max_records`` records the MCD of both
    files runs on the first ``max_records`` of that order -- the same records in both files, a
    pseudo-random sample chosen by content. NaN when a file has too few complete records or
    more than half of them on a hyperplane (exact fit).
    ``scaled``: ``(scale(X), scale(Y))`` when already computed.
    """
    order = content_order(X, Y, limit=max_records)
    Xs, Ys = scaled if scaled is not None else (scale(X), scale(Y))
    out = []
    for Z in (Xs, Ys):
        Z = Z[order]
        Z = Z[~np.isnan(Z).any(axis=1)]
        if Z.shape[0] <= 2 * Z.shape[1] + 1 or not np.all(np.isfinite(Z)):
            return float("nan")
        try:
            est = mcd(Z, seed=seed, small_sample=False, n_full=1, order="rows")  # rows: already in content order
        except np.linalg.LinAlgError:
            return float("nan")
        out.append(est.cov)
    return _eigen_difference(*out)


# ---------------------------------------------------------------------------------------------
# G.2 / G.3 Domingo-Ferrer, Mateo-Sanz & Torra discrepancy table with Trottini's bound
# ---------------------------------------------------------------------------------------------
def _disc(a, b, bound, w=None, denom=None):
    """MSE, MAE, MV (cells with a = 0 skipped), bounded MV of the paired cells a, b.

    ``w``: optional cell weights (RF, F); ``denom``: the divisor N (default the number of cells
    with both values observed)."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    w = np.ones_like(a) if w is None else np.asarray(w, dtype=float).ravel()
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b, w = a[ok], b[ok], w[ok]
    N = float(ok.sum()) if denom is None else float(denom)
    if N == 0:
        return {"mse": None, "mae": None, "mv": None, "mv_bounded": None, "n_cells": 0}
    diff = np.abs(a - b)
    aa = np.abs(a)
    nz = aa > 0
    rel = np.zeros_like(diff)
    rel[nz] = diff[nz] / aa[nz]
    bounded = np.where(nz, np.minimum(rel, bound), np.where(diff > 0, bound, 0.0))
    return {
        "mse": float(np.sum(w * diff**2) / N),
        "mae": float(np.sum(w * diff) / N),
        "mv": float(np.sum((w * rel)[nz]) / N),
        "mv_bounded": float(np.sum(w * bounded) / N),
        "n_cells": int(ok.sum()),
    }


def _pca_loadings(R: np.ndarray):
    """Eigen-decomposition of a correlation matrix: eigenvalues (decreasing) and eigenvectors,
    each oriented so that its loadings sum to a non-negative value."""
    e, E = np.linalg.eigh(R)
    o = np.argsort(e)[::-1]
    e, E = e[o], E[:, o]
    flip = E.sum(axis=0) < 0
    E[:, flip] *= -1
    return e, E


def discrepancy(
    X: np.ndarray, Y: np.ndarray, bound: float = 1.0, stats: dict | None = None, moments: tuple | None = None
) -> dict:
    """The discrepancy table of Domingo-Ferrer, Mateo-Sanz & Torra (2001) (with Trottini's bounded mean variation) for continuous X, X'.

    Keys: ``"X"``, ``"V"``, ``"R"``, ``"RF"``, ``"F"``, ``"C"``, ``"means"``, ``"variances"``
    (the S - S' variant); each a dict with ``mse``, ``mae``, ``mv``, ``mv_bounded``, ``n_cells``.
    ``R``, ``RF``, ``F``, ``C`` are None with a single variable; ``RF``, ``F``, ``C`` also when a
    correlation matrix cannot be computed. ``moments``: the :class:`Moments` of X and Y when
    already computed (``(None, None)`` or None otherwise).
    """
    n, p = X.shape
    import warnings

    st = column_stats(X, Y, bound) if stats is None else stats
    N = float(st["ok"].sum())
    if N:
        out = {
            "X": {
                "mse": float(st["sq"].sum()) / N,
                "mae": float(st["abs"].sum()) / N,
                "mv": float(st["rel"].sum()) / N,
                "mv_bounded": float(st["bounded"].sum()) / N,
                "n_cells": int(N),
            }
        }
    else:
        out = {"X": {"mse": None, "mae": None, "mv": None, "mv_bounded": None, "n_cells": 0}}
    mo, mp = moments if moments is not None else (None, None)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column missing everywhere: NaN mean
        mx = np.nanmean(X, axis=0) if mo is None else mo.mean
        my = np.nanmean(Y, axis=0) if mp is None else mp.mean
    out["means"] = _disc(mx, my, bound)
    V = pairwise_cov(X) if mo is None else mo.cov
    W = pairwise_cov(Y) if mp is None else mp.cov
    iu = np.triu_indices(p)
    out["V"] = _disc(V[iu], W[iu], bound)
    out["variances"] = _disc(np.diag(V), np.diag(W), bound)
    with np.errstate(invalid="ignore", divide="ignore"):
        R = V / np.sqrt(np.outer(np.diag(V), np.diag(V)))
        S = W / np.sqrt(np.outer(np.diag(W), np.diag(W)))
    if p >= 2:
        iu1 = np.triu_indices(p, 1)
        out["R"] = _disc(R[iu1], S[iu1], bound)
    else:
        out["R"] = None
    np.fill_diagonal(R, 1.0)
    np.fill_diagonal(S, 1.0)
    if p >= 2 and np.all(np.isfinite(R)) and np.all(np.isfinite(S)):
        e, E = _pca_loadings(R)
        f, F = _pca_loadings(S)
        sign = np.where(np.sum(E * F, axis=0) < 0, -1.0, 1.0)
        F = F * sign
        L1 = E * np.sqrt(np.clip(e, 0, None))
        L2 = F * np.sqrt(np.clip(f, 0, None))
        # a pairwise-complete R need not be positive semi-definite: negative eigenvalues weigh 0
        wcol = np.broadcast_to(np.clip(e, 0, None) / p, (p, p))
        rf = _disc(L1, L2, bound, w=wcol, denom=p * p)
        out["RF"] = rf
        out["F"] = dict(rf)
        out["C"] = _disc(L1[:, 0] ** 2, L2[:, 0] ** 2, bound)
    else:
        out["RF"] = out["F"] = out["C"] = None
    return out


# ---------------------------------------------------------------------------------------------
# G.5 gamma
# ---------------------------------------------------------------------------------------------
def inverse_corr_diag(X: np.ndarray, method: str = "pearson", moments: Moments | None = None) -> np.ndarray | None:
    """Diagonal of R^{-1} on the complete records of X (R ``cor(use = "complete.obs")``);
    None when R is singular (reciprocal condition number below machine epsilon, R ``solve``'s
    rule) or undefined. ``moments``: the :class:`Moments` of X (no missing value) when already
    computed (Pearson only)."""
    if moments is not None and method == "pearson" and X.shape[0] >= 3:
        return _inverse_diag(moments.corr())
    miss = np.isnan(X).any(axis=1)
    Z = X[~miss] if miss.any() else X
    if Z.shape[0] < 3:
        return None
    if method == "kendall":
        from scipy.stats import kendalltau

        p = Z.shape[1]
        R = np.eye(p)
        for i, j in combinations(range(p), 2):
            R[i, j] = R[j, i] = kendalltau(Z[:, i], Z[:, j]).statistic
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            R = np.atleast_2d(np.corrcoef(Z, rowvar=False))
    return _inverse_diag(R)


def _inverse_diag(R: np.ndarray) -> np.ndarray | None:
    if not np.all(np.isfinite(R)):
        return None
    if 1.0 / np.linalg.cond(R, 1) < np.finfo(float).eps:
        return None
    try:
        return np.diag(np.linalg.inv(R))
    except np.linalg.LinAlgError:
        return None


def gamma(d_orig: np.ndarray, d_prot: np.ndarray) -> float:
    """gamma = (1/sqrt 2) || rho/||rho|| - rho'/||rho'|| || (Mlodak 2020; sdcMicro ``IL_correl``)."""
    a = d_orig / np.sqrt(np.sum(d_orig**2))
    b = d_prot / np.sqrt(np.sum(d_prot**2))
    return float(np.sqrt(np.sum((a - b) ** 2)) / _SQRT2)


# ---------------------------------------------------------------------------------------------
# G.4 / G.6 record-level distances
# ---------------------------------------------------------------------------------------------
def nominal_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """0 if equal, 1 otherwise; a missing value (-1) is a level of its own (NA vs NA = 0)."""
    return (a != b).astype(np.float64)


def ordinal_distance(
    x: np.ndarray, y: np.ndarray, R: int, suppressed: str = "mlodak", divisor: float | None = None
) -> np.ndarray:
    """|x - y| / (R - 1) for ranks 1..R (NaN = missing).

    One side missing: ``"sdcmicro"`` -> 1; ``"mlodak"`` -> the distance to the extreme category
    farthest from the observed value, max(v - 1, R - v) / (R - 1). Both missing -> 0.
    ``divisor`` replaces R - 1 (G.6 uses R); the one-sided maximum is then (R - 1) / divisor.
    """
    den = float(divisor) if divisor is not None else float(max(R - 1, 1))
    mx, my = np.isnan(x), np.isnan(y)
    d = np.abs(x - y) / den
    one = mx ^ my
    if one.any():
        if suppressed == "sdcmicro" or divisor is not None:
            d[one] = (max(R - 1, 1) if divisor is None else R - 1) / den
        else:
            v = np.where(mx, y, x)[one]
            d[one] = np.maximum(v - 1, R - v) / den
    d[mx & my] = 0.0
    return d


def continuous_distance(
    x: np.ndarray,
    y: np.ndarray,
    suppressed: str = "mlodak",
    kind: str = "arctan",
    absdiff: np.ndarray | None = None,
    sd: float | None = None,
) -> np.ndarray:
    """Mlodak's distance for a continuous variable.

    ``kind``: ``"arctan"`` (2/pi) arctan|x' - x| (sdcMicro ``IL_variables``, in the variable's
    own units), ``"arctan_sd"`` (2/pi) arctan(|x' - x| / S_j) with S_j the standard deviation
    (n - 1) of the original's observed values (unit-free; S_j = 0, or fewer than two observed
    values: 0 when x' = x, else 1), ``"max_abs"`` |x' - x| / max|x' - x| (3.5.11),
    ``"max_squared"`` (x' - x)^2 / max (x' - x)^2 (3.5.12).
    One side missing: ``"sdcmicro"`` uses D = max(|min x' - max x|, |max x' - min x|);
    ``"mlodak"`` replaces the missing value by the original variable's maximum when the observed
    value is <= the original median, by its minimum otherwise; with ``"arctan_sd"`` either
    difference is divided by S_j too. Both missing -> 0.
    ``absdiff``: |x - y| when already computed (not modified). ``sd``: S_j when already
    computed (``"arctan_sd"`` only).
    """
    diff = np.abs(x - y) if absdiff is None else absdiff
    if kind in ("arctan", "arctan_sd") and not math.isnan(float(diff.sum())):  # nothing missing
        if kind == "arctan_sd":
            return _arctan_sd(diff, x, sd)
        d = np.arctan(diff, out=diff if absdiff is None else None)
        d *= 2.0 / math.pi
        return d
    if absdiff is not None:
        diff = diff.copy()
    mx, my = np.isnan(x), np.isnan(y)
    one = mx ^ my
    if one.any():
        xo, yo = x[~mx], y[~my]
        if suppressed == "sdcmicro":
            if xo.size and yo.size:
                D = max(abs(yo.min() - xo.max()), abs(yo.max() - xo.min()))
            else:
                D = math.inf
            diff[one] = D
        else:
            v = np.where(mx, y, x)[one]
            if xo.size:
                med = float(np.median(xo))
                fill = np.where(v <= med, xo.max(), xo.min())
                diff[one] = np.abs(v - fill)
            else:
                diff[one] = math.inf
    diff[mx & my] = 0.0
    if kind == "arctan":
        return (2.0 / math.pi) * np.arctan(diff)
    if kind == "arctan_sd":
        return _arctan_sd(diff, x, sd)
    if kind == "max_squared":
        diff = diff**2
    top = float(np.max(diff)) if diff.size else 0.0
    if top == 0:
        return np.zeros_like(diff)
    if math.isinf(top):
        return np.where(np.isinf(diff), 1.0, 0.0)
    return diff / top


def original_sd(x: np.ndarray) -> float:
    """S_j: the standard deviation (n - 1) of the observed (non-NaN) values of x; 0 with fewer
    than two observed values."""
    xs = x[~np.isnan(x)]
    if xs.size < 2:
        return 0.0
    s = float(np.std(xs, ddof=1))
    return s if math.isfinite(s) else 0.0


def _arctan_sd(diff: np.ndarray, x: np.ndarray, sd: float | None) -> np.ndarray:
    """(2/pi) arctan(diff / S_j) (a new array); S_j = 0: 0 where diff = 0, else 1."""
    S = original_sd(x) if sd is None else (float(sd) if sd > 0 else 0.0)
    if S > 0:
        return (2.0 / math.pi) * np.arctan(diff / S)
    return (diff > 0).astype(np.float64)


# ---------------------------------------------------------------------------------------------
# G.7 CTBIL
# ---------------------------------------------------------------------------------------------
def _table_key(cols64, cols, levels) -> tuple[np.ndarray, int]:
    """Mixed-radix cell index of each record in the table of ``cols`` (missing = last level);
    ``cols64[c]``: the int64 codes of variable c with missing already mapped to levels[c]."""
    key = cols64[cols[0]]
    size = int(levels[cols[0]]) + 1
    for c in cols[1:]:
        L = int(levels[c]) + 1
        key = key * L + cols64[c]
        size *= L
    return key, size


def contingency_loss(
    co: np.ndarray, cp: np.ndarray, levels, max_dim: int, w_o: np.ndarray | None = None, w_p: np.ndarray | None = None
) -> dict:
    """CTBIL(F, G; W, K) = sum over subsets T of W with 1 <= |T| <= K of sum_cells |x^F - x^G|;
    missing is a category of its own in both files.

    ``co``, ``cp``: (n, m) int codes (-1 = missing) on a common code table per variable;
    ``levels[j]``: number of categories of variable j (codes 0..levels-1). ``w_o``, ``w_p``:
    the design weights of each file's records; given, x_T(c) is the weighted cell total
    sum_{i in c} w_i (the estimated population count a published table shows) instead of the
    record count, and the losses are floats.

    Returns ``total``, ``cells`` (total number of cells of the tables: per variable its
    categories observed in either file plus a missing category when missing occurs in either
    file), ``by_dim`` {size: loss}, ``by_variable`` (one-way table loss per variable) and
    ``tables`` (number of tables).
    """
    n, m = co.shape
    weighted = w_o is not None
    total: float = 0
    cells = 0
    by_dim: dict[int, float] = {}
    one_way = np.zeros(m, dtype=np.float64 if weighted else np.int64)
    # levels actually used per variable (categories in either file + missing if present)
    used = []
    for j in range(m):
        present = np.zeros(int(levels[j]) + 1, dtype=bool)
        present[np.where(co[:, j] < 0, levels[j], co[:, j])] = True
        present[np.where(cp[:, j] < 0, levels[j], cp[:, j])] = True
        used.append(int(present.sum()))
    n_tables = 0
    c64o = [np.where(co[:, j] < 0, int(levels[j]), co[:, j]).astype(np.int64) for j in range(m)]
    c64p = [np.where(cp[:, j] < 0, int(levels[j]), cp[:, j]).astype(np.int64) for j in range(m)]
    for s in range(1, min(max_dim, m) + 1):
        acc = 0
        for cols in combinations(range(m), s):
            n_tables += 1
            ko, size = _table_key(c64o, cols, levels)
            kp, _ = _table_key(c64p, cols, levels)
            diff = _table_difference(ko, kp, size, n, w_o, w_p)
            acc += diff
            cells += math.prod(used[c] for c in cols)
            if s == 1:
                one_way[cols[0]] = diff
        by_dim[s] = acc
        total += acc
    return {"total": total, "cells": cells, "by_dim": by_dim, "by_variable": one_way, "tables": n_tables}


def _table_difference(ko, kp, size: int, n: int, w_o, w_p):
    """sum_cells |x^F(c) - x^G(c)| of one table from the cell index of each record (counts,
    or weighted totals with ``w_o`` given; an int for counts, a float for weights)."""
    if size > max(4 * n, 1 << 20):  # sparse table: number the occupied cells only
        u, inv = np.unique(np.concatenate([ko, kp]), return_inverse=True)
        ko, kp, size = inv[:n], inv[n:], len(u)
    if w_o is None:
        return int(np.abs(np.bincount(ko, minlength=size) - np.bincount(kp, minlength=size)).sum())
    wp = w_o if w_p is None else w_p
    return float(
        np.abs(np.bincount(ko, weights=w_o, minlength=size) - np.bincount(kp, weights=wp, minlength=size)).sum()
    )


# ---------------------------------------------------------------------------------------------
# G.8 EBIL
# ---------------------------------------------------------------------------------------------
def _xlogx_rows(Q: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(Q > 0, Q * np.log(np.where(Q > 0, Q, 1.0)), 0.0)
    return -t.sum(axis=0)


def entropy_loss(P: np.ndarray, p: np.ndarray, counts_protected: np.ndarray, base: float | None = None):
    """EBIL = sum over protected records of H(V | V' = j_r).

    ``P[i, j]`` = P(V' = j | V = i); ``p`` the original distribution (any positive multiple);
    ``counts_protected[j]`` the number of protected records in category j.
    Returns (EBIL, H per category j, positive-probability mask of the categories j).
    """
    joint = p[:, None] * P  # P(V = i, V' = j) up to a constant
    col = joint.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        Q = np.where(col > 0, joint / col, 0.0)
    H = _xlogx_rows(Q)
    if base is not None:
        H = H / math.log(base)
    return float(np.dot(counts_protected, H)), H, col > 0


def _unique_rows(codes: np.ndarray):
    """Distinct rows of a small-integer code matrix (-1 allowed) and their counts, through one
    mixed-radix int64 key (np.unique on rows sorts structured records, much slower)."""
    lo = codes.min(axis=0).astype(np.int64)
    span = codes.max(axis=0).astype(np.int64) - lo + 1
    if float(np.prod(span.astype(float))) >= 2.0**62:
        return np.unique(codes, axis=0, return_counts=True)
    key = np.zeros(codes.shape[0], dtype=np.int64)
    for j in range(codes.shape[1]):
        key = key * span[j] + (codes[:, j] - lo[j])
    uk, cnt = np.unique(key, return_counts=True)
    rows = np.empty((uk.size, codes.shape[1]), dtype=np.int64)
    for j in range(codes.shape[1] - 1, -1, -1):
        rows[:, j] = uk % span[j] + lo[j]
        uk = uk // span[j]
    return rows, cnt


def joint_entropy_loss(
    orig_codes: np.ndarray, prot_codes: np.ndarray, matrices, base: float | None = None, max_cells: int = 20_000_000
):
    """EBIL of several PRAMed variables taken as one variable (Kronecker product of the
    matrices), over the tuples that occur.

    ``orig_codes``, ``prot_codes``: (n, v) int codes in each matrix's category order, -1 =
    missing (a missing value stays missing under PRAM: identity row and column).
    Returns EBIL or None when an impossible protected tuple occurs.
    """
    uo, co = _unique_rows(orig_codes)
    up, cp = _unique_rows(prot_codes)
    p = co.astype(float)
    total = 0.0
    step = max(1, max_cells // max(len(uo), 1))
    for start in range(0, len(up), step):
        blk = up[start : start + step]
        T = np.ones((len(uo), len(blk)))
        for v, P in enumerate(matrices):
            a = uo[:, v][:, None]
            b = blk[:, v][None, :]
            ai, bi = np.maximum(a, 0), np.maximum(b, 0)
            t = P[ai, bi]
            t = np.where((a < 0) | (b < 0), ((a < 0) & (b < 0)).astype(float), t)
            T *= t
        joint = p[:, None] * T
        col = joint.sum(axis=0)
        if np.any(col <= 0):
            return None
        H = _xlogx_rows(joint / col)
        if base is not None:
            H = H / math.log(base)
        total += float(np.dot(cp[start : start + step], H))
    return total


# ---------------------------------------------------------------------------------------------
# G.9 ANOVA R^2
# ---------------------------------------------------------------------------------------------
def anova_r2(y: np.ndarray, factors: list[np.ndarray], levels: list[int]) -> dict:
    """R^2 of the main-effects linear model of y on categorical factors; one y of
    :func:`anova_r2_many`."""
    return anova_r2_many(y[:, None], factors, levels)[0]


def _normal_equations(fs, levels, n):
    """X'X of the design [1, dummies of every factor] from contingency tables (bincount)."""
    offs = np.concatenate([[1], 1 + np.cumsum(levels)]).astype(int)
    D = int(offs[-1])
    XtX = np.zeros((D, D))
    XtX[0, 0] = n
    for a, fa in enumerate(fs):
        La = levels[a]
        cnt = np.bincount(fa, minlength=La).astype(float)
        sa = slice(offs[a], offs[a + 1])
        XtX[0, sa] = XtX[sa, 0] = cnt
        XtX[sa, sa] = np.diag(cnt)
        fa64 = fa.astype(np.int64)
        for b in range(a + 1, len(fs)):
            Lb = levels[b]
            key = fa64 * Lb
            tab = np.bincount(key + fs[b], minlength=La * Lb).reshape(La, Lb).astype(float)
            sb = slice(offs[b], offs[b + 1])
            XtX[sa, sb] = tab
            XtX[sb, sa] = tab.T
    return XtX, offs


def _group_sums(fs, levels, Yc, offs, group_sums=None) -> np.ndarray:
    """X'y blocks: per factor, the sum of every column of Yc within each level. One bincount per
    (factor, y); ``group_sums(fs, levels, Yc)`` -> per factor a (levels[a], k) block, a faster
    grouped sum given by the caller (the data-access layer), is used instead for inputs of
    2 * 10^6 cells or more."""
    D, k = int(offs[-1]), Yc.shape[1]
    Xty = np.zeros((D, k))
    if group_sums is not None and Yc.shape[0] * k >= 2_000_000:
        for a, block in enumerate(group_sums(fs, levels, Yc)):
            Xty[offs[a] : offs[a + 1]] = block
        return Xty
    for a, fa in enumerate(fs):
        for c in range(k):
            Xty[offs[a] : offs[a + 1], c] = np.bincount(fa, weights=Yc[:, c], minlength=levels[a])
    return Xty


def anova_r2_many(Ys: np.ndarray, factors: list[np.ndarray], levels: list[int], group_sums=None) -> list[dict]:
    """R^2 of the main-effects linear model of each column of ``Ys`` on the categorical
    ``factors`` (int codes, -1 = missing).

    Records with a missing y or factor are dropped (per y). The normal equations are built from
    contingency tables (bincount), never from a dummy matrix: O(n m^2) time, O((sum L)^2)
    memory, shared by all y with the same missing-value pattern. Rank deficiency (empty levels,
    the dummy sum constraints) is handled by a minimum-norm least-squares solve of the scaled
    system. Returns per y: ``r2``, ``ss_between`` (model), ``ss_within`` (residual), ``n``.
    ``group_sums``: an optional faster grouped sum for large inputs (see :func:`_group_sums`).
    """
    n_all, k = Ys.shape
    fok = np.ones(n_all, bool)
    for f in factors:
        fok &= f >= 0
    masks = [fok & ~np.isnan(Ys[:, j]) for j in range(k)]
    groups: dict[bytes, list[int]] = {}
    for j, m in enumerate(masks):
        groups.setdefault(np.packbits(m).tobytes(), []).append(j)
    out: list[dict] = [None] * k  # type: ignore[list-item]
    for cols in groups.values():
        ok = masks[cols[0]]
        n = int(ok.sum())
        if n < 2:
            for j in cols:
                out[j] = {"r2": None, "ss_between": None, "ss_within": None, "n": n}
            continue
        full = bool(ok.all())
        fs = [f if full else f[ok] for f in factors]
        XtX, offs = _normal_equations(fs, levels, n)
        Yc = np.empty((n, len(cols)), order="F")
        for c, j in enumerate(cols):
            yj = Ys[:, j] if full else Ys[ok, j]
            Yc[:, c] = yj - yj.mean()
        Xty = _group_sums(fs, levels, Yc, offs, group_sums)
        keep = np.diag(XtX) > 0  # drop unobserved levels
        A = XtX[np.ix_(keep, keep)]
        B = Xty[keep]
        scale = np.sqrt(np.diag(A))
        coef, *_ = np.linalg.lstsq(A / np.outer(scale, scale), B / scale[:, None], rcond=1e-10)
        ssb_all = np.sum(coef * (B / scale[:, None]), axis=0)
        sst_all = np.array([float(np.dot(Yc[:, c], Yc[:, c])) for c in range(len(cols))])
        for c, j in enumerate(cols):
            sst, ssb = float(sst_all[c]), float(ssb_all[c])
            if sst == 0:
                out[j] = {"r2": None, "ss_between": 0.0, "ss_within": 0.0, "n": n}
                continue
            ssb = min(max(ssb, 0.0), sst)
            if sst - ssb <= 1e-10 * sst:  # a perfect fit up to rounding
                ssb = sst
            elif ssb <= 1e-10 * sst:
                ssb = 0.0
            out[j] = {"r2": ssb / sst, "ss_between": ssb, "ss_within": sst - ssb, "n": n}
    return out
