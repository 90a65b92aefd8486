r"""Confidence intervals for the global risk measures by a parametric bootstrap (Rinott &
Shlomo 2007 give variances and intervals for these measures).

The file-level risk measures estimate quantities that depend on the unknown population counts
F_k: the expected number of re-identifications sum_k f_k / F_k (the individual-risk model)
and, for the sample uniques, tau_1 = sum_SU I(F_k = 1) and tau_2 = sum_SU 1 / F_k (the
log-linear model). Given the sample, the model gives the distribution of each F_k; the
estimates are its means. The interval for the true value is taken from draws of that
distribution:

* individual risk (Benedetti & Franconi): F_k - f_k | f_k ~ NegBin(f_k, p_k), p_k = f_k / \hat F_k,
  independent between keys; ER* = sum_k a_k / F*_k (a_k: records of key k, times the PRAM keep
  probabilities when given);
* log-linear model: the model parameters beta* ~ N(\hat beta, Cov) (the inverse Fisher
  information of the Poisson fit, a sandwich for the pseudo-likelihood fit to weighted counts),
  lambda*_k = \hat lambda_k exp(x_k (beta* - \hat beta)), then F*_k - 1 ~ Poisson((1 - pi_k)
  lambda*_k) for every sample unique; tau_1* = sum I(F*_k = 1), tau_2* = sum 1 / F*_k.

The interval is the (a/2, 1 - a/2) percentile range of the draws (no normal approximation:
with few sample uniques the distribution of sum 1/F_k is skewed). No frame library here.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "DRAWS",
    "SEED",
    "design_matrix",
    "global_risk_draws",
    "loglinear_draws",
    "parameter_factor",
    "percentile_interval",
]

#: bootstrap draws (the Monte Carlo error of a 95 % bound is about 1 % of the interval's width)
DRAWS = 2000
#: the draws' seed: the same data give the same interval
SEED = 20070829
#: draws held in memory at once (rows x this many columns)
_CHUNK_CELLS = 4_000_000


def percentile_interval(draws: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central ``confidence`` range of the draws."""
    a = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(np.asarray(draws, dtype=float), [a, 1.0 - a])
    return float(lo), float(hi)


def _chunks(rows: int, draws: int):
    size = max(1, min(draws, _CHUNK_CELLS // max(rows, 1)))
    for start in range(0, draws, size):
        yield min(size, draws - start)


def global_risk_draws(f, p, a, draws: int = DRAWS, seed: int = SEED) -> np.ndarray:
    """Draws of ER = sum_k a_k / F_k with F_k = f_k + NegBin(f_k, p_k) (failures).

    Parameters
    ----------
    f : array (P,)
        Sample frequency of each key (may be fractional with the missing-value rule).
    p : array (P,)
        p_k = f_k / \\hat F_k in (0, 1] (1: F_k = f_k, no uncertainty).
    a : array (P,)
        What a key adds per 1/F_k (its records; times M_kk with PRAM).

    Notes
    -----
    O(P' x draws) time for the P' keys with p_k < 1 (about a second for 10,000 keys).
    """
    f = np.asarray(f, dtype=float)
    p = np.clip(np.asarray(p, dtype=float), 1e-300, 1.0)
    a = np.asarray(a, dtype=float)
    live = (f > 0) & (a != 0)
    known = live & (p >= 1.0)  # F_k = f_k: no draw needed
    fixed = float(np.sum(a[known] / f[known]))
    live &= ~known
    f, p, a = f[live], p[live], a[live]
    rng = np.random.default_rng(seed)
    out = []
    for b in _chunks(f.size, draws):
        F = f[:, None] + rng.negative_binomial(f[:, None], p[:, None], size=(f.size, b))
        out.append((a[:, None] / F).sum(axis=0))
    return fixed + (np.concatenate(out) if out else np.zeros(draws))


def design_matrix(shape, terms):
    """Treatment-coded design matrix of a hierarchical log-linear model over the cells of a
    table (C order): an intercept, then for every term the products of its keys' indicators of
    categories 2..L (``terms`` must hold the closure); a SciPy CSR matrix."""
    shape = tuple(int(s) for s in shape)
    K = math.prod(shape)
    codes = np.unravel_index(np.arange(K), shape)
    rows, cols = [np.arange(K)], [np.zeros(K, dtype=np.int64)]
    offset = 1
    for t in sorted({tuple(sorted(t)) for t in terms}, key=lambda t: (len(t), t)):
        dims = tuple(shape[j] - 1 for j in t)
        width = math.prod(dims)
        if width == 0:
            continue
        ok = np.ones(K, dtype=bool)
        for j in t:
            ok &= codes[j] > 0
        cells = np.flatnonzero(ok)
        local = np.ravel_multi_index(tuple(codes[j][cells] - 1 for j in t), dims)
        rows.append(cells)
        cols.append(offset + local)
        offset += width
    from scipy import sparse  # imported when used: ``import sdckit`` stays light

    r, c = np.concatenate(rows), np.concatenate(cols)
    return sparse.csr_matrix((np.ones(r.size), (r, c)), shape=(K, offset))


def parameter_factor(X, mu, v=None) -> np.ndarray:
    """A factor L with L L' = Cov(\\hat beta): the inverse Fisher information of a Poisson fit
    with fitted means ``mu`` (I = X' diag(mu) X), or with ``v`` the sandwich I^-1 J I^-1,
    J = X' diag(v) X (a fit to weighted counts whose variances are v). A singular I (a fit on
    the boundary) is inverted on its range."""
    mu = np.asarray(mu, dtype=float)
    info = (X.T @ X.multiply(mu[:, None])).toarray()
    vals, vecs = np.linalg.eigh((info + info.T) / 2.0)
    ok = vals > vals.max() * 1e-12 if vals.size else vals > 0
    half = vecs[:, ok] / np.sqrt(vals[ok])  # half @ half.T = I^+ (the inverse on its range)
    if v is None:
        return half
    inv = half @ half.T
    cov = inv @ (X.T @ X.multiply(np.asarray(v, dtype=float)[:, None])).toarray() @ inv
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2.0)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


def loglinear_draws(lam, pi, X_su, factor, draws: int = DRAWS, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Draws of (tau_1, tau_2) over the sample uniques.

    Parameters
    ----------
    lam : array (n1,)
        \\hat lambda of each sample unique's cell.
    pi : float or array (n1,)
        Sampling fraction of each sample unique's cell.
    X_su : sparse (n1, p)
        The design rows of those cells.
    factor : array (p, p)
        L with L L' = Cov(\\hat beta) (:func:`parameter_factor`).
    """
    lam = np.asarray(lam, dtype=float)
    keep = np.broadcast_to(1.0 - np.asarray(pi, dtype=float), lam.shape)[:, None]
    rng = np.random.default_rng(seed)
    if X_su.shape[0] * X_su.shape[1] <= _CHUNK_CELLS:
        X_su = X_su.toarray()  # a dense product is faster for the few rows of the sample uniques
    t1, t2 = [], []
    for b in _chunks(lam.size, draws):
        delta = factor @ rng.standard_normal((factor.shape[1], b))
        mu = keep * lam[:, None] * np.exp(np.asarray(X_su @ delta))
        extra = rng.poisson(mu)
        t1.append((extra == 0).sum(axis=0).astype(float))
        t2.append((1.0 / (1.0 + extra)).sum(axis=0))
    if not t1:
        return np.zeros(draws), np.zeros(draws)
    return np.concatenate(t1), np.concatenate(t2)
