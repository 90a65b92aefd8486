"""Poisson log-linear models on a full contingency table: pure NumPy/SciPy kernels.

Nothing here knows about frames. The table is a dense float64 array over the full
cross-product of the model variables (empty cells included), flattened in C order
(the last variable varies fastest).

Sizes (measured on 2 cores, see benchmarks/loglinear.py): IPF needs about 3 float64 arrays of
the table size (24 bytes per cell) and runs in O(K) per generator and cycle, so tables of
10^7 cells fit in well under 1 GB and a two-way model on 10^6 cells fits in seconds; dense
tables up to ~10^8 cells are possible memory-wise. The Poisson GLM (IRLS) builds a
sparse one-hot design (K x p) and a dense p x p normal matrix: use it for K up to ~10^6 cells and
p up to a few thousand parameters (non-hierarchical designs, offsets, numeric covariates).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = [
    "cell_index",
    "cell_table",
    "closure",
    "generating_class",
    "is_hierarchical",
    "ipf",
    "perfect_sequence",
    "dense_design",
    "design_matrix",
    "poisson_irls",
    "n_parameters",
    "uniqueness_probabilities",
    "uniqueness_variances",
    "bias_criterion",
    "geometric_blend",
    "margin",
    "margins",
    "margin_deviance",
    "effective_df",
    "deviance_support",
    "ipf_step",
    "pram_correct_match",
    "nb_smoothing",
]


# ---------------------------------------------------------------------------------------------
# table
def cell_index(codes: np.ndarray, shape) -> np.ndarray:
    """Flat C-order cell index of every record (codes n x m, all >= 0)."""
    if codes.shape[1] == 0:
        return np.zeros(codes.shape[0], np.int64)
    return np.ravel_multi_index(tuple(codes[:, j].astype(np.int64) for j in range(codes.shape[1])), tuple(shape))


def cell_table(idx: np.ndarray, K: int, weights: np.ndarray | None = None, counts=None):
    """Sample counts f (K,), and the weighted counts \\hat F (K,) when ``weights`` is given
    (``counts``: records per row when the rows are distinct patterns, ``weights`` then their
    weight sums)."""
    f = np.bincount(idx, minlength=K).astype(float) if counts is None else np.bincount(idx, weights=counts, minlength=K)
    F = None if weights is None else np.bincount(idx, weights=weights, minlength=K)
    return f, F


# ---------------------------------------------------------------------------------------------
# model terms
def closure(terms) -> set[tuple[int, ...]]:
    """All non-empty subsets of the terms (the hierarchical closure)."""
    out: set[tuple[int, ...]] = set()
    for t in terms:
        t = tuple(sorted(t))
        for r in range(1, len(t) + 1):
            out.update(itertools.combinations(t, r))
    return out


def is_hierarchical(terms) -> bool:
    s = {tuple(sorted(t)) for t in terms}
    return closure(s) == s


def generating_class(terms) -> list[tuple[int, ...]]:
    """Maximal terms of the closure (the margins IPF matches), sorted by size then index."""
    s = closure(terms)
    gens = [t for t in s if not any(set(t) < set(u) for u in s)]
    return sorted(gens, key=lambda t: (len(t), t))


def n_parameters(terms, cards) -> int:
    """1 + sum over the closed term set of prod (L_j - 1) (treatment contrasts)."""
    return 1 + sum(math.prod(cards[j] - 1 for j in t) for t in terms)


# ---------------------------------------------------------------------------------------------
# IPF
def ipf(
    target: np.ndarray,
    shape,
    generators,
    start: np.ndarray | None = None,
    tol: float | None = None,
    max_iter: int = 1000,
    observed=None,
    one_cycle: bool = False,
):
    """Iterative proportional fitting of a hierarchical log-linear model.

    Fitted values mu with margins over every generator equal to those of ``target``; IPF keeps
    the log-structure of ``start`` (default all ones), so a start from a sub-model's fit gives
    the same MLE. Returns ``(mu (K,), cycles, converged)``.
    Convergence: max |fitted margin - observed margin| over all generators < ``tol``
    (default 1e-8 * sum(target)).

    ``observed``: optional function term -> the margin of ``target`` over it (dims kept), for a
    caller that keeps them between fits. ``one_cycle``: stop after one cycle and report
    convergence. That cycle gives the MLE exactly (Haberman 1974; Bishop, Fienberg & Holland
    1975, sec. 3.4) when the model is decomposable, the generators are in a perfect sequence
    (:func:`perfect_sequence`) and ``start`` is in the model's family (all ones, or a product of
    factors each over the variables of one generator, such as a sub-model's exact fit or an
    offset on a main effect): mu = prod_i n_{C_i} / prod_i n_{S_i}, S_i = C_i cap (C_1 cup ... cup C_{i-1}).
    """
    shape = tuple(int(s) for s in shape)
    t = np.asarray(target, float).reshape(shape)
    if tol is None:
        tol = 1e-8 * max(float(t.sum()), 1.0)
    gens = [tuple(sorted(g)) for g in generators]
    obs = [_kept_sum(t, g) for g in gens] if observed is None else [observed(g) for g in gens]
    mu = np.ones(shape) if start is None else np.array(start, float).reshape(shape)
    if one_cycle:
        _ipf_cycle(mu, gens, obs)
        return mu.reshape(-1), 1, True
    converged = False
    cycles = 0
    for cycles in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        if _ipf_cycle(mu, gens, obs) < tol:
            converged = True
            break
    return mu.reshape(-1), cycles, converged


def _ipf_cycle(mu: np.ndarray, gens, obs) -> float:
    """One IPF cycle in place: ``mu`` scaled to each observed margin in turn (``gens``: the
    generators, axes sorted). Returns max |fitted - observed| over the margins, each taken
    before its adjustment."""
    dev = 0.0
    for g, ob in zip(gens, obs):
        fit = _kept_sum(mu, g)
        dev = max(dev, float(np.abs(fit - ob).max()))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(fit > 0, ob / fit, 0.0)
        mu *= ratio
    return dev


_AXES = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _kept_sum(x: np.ndarray, term) -> np.ndarray:
    """The sum of the table ``x`` over the axes not in ``term`` (sorted), those axes kept with
    size 1 (``x.sum(axis=..., keepdims=True)``; a copy when ``term`` has every axis).

    By ``einsum``: it sums the table in one pass in memory order, where ``ndarray.sum`` over
    several axes that leave the last one in place takes 2 to 4 times as long (0.4 against
    1.2 ms on 5 x 10^5 cells). Its sums are sequential, not pairwise: they agree with
    ``ndarray.sum`` to rounding (relative 1e-13 on tables of 10^6 cells)."""
    m = x.ndim
    if len(term) == m:
        return x.copy()
    keep = [x.shape[a] if a in term else 1 for a in range(m)]
    if m > len(_AXES):
        return x.sum(axis=tuple(a for a in range(m) if a not in term), keepdims=True)
    spec = _AXES[:m] + "->" + "".join(_AXES[a] for a in term)
    return np.einsum(spec, x).reshape(keep)


def perfect_sequence(generators) -> list[tuple[int, ...]] | None:
    """The generators in an order with the running intersection property, or None when the
    greedy search finds none (then the model is not decomposable, or treated as not). The
    search adds, among the generators that keep the property, the one that shares the most
    variables with those before it (a disconnected one last: taken early, it can block the way).

    Each generator after the first meets the union of those before it in a subset of one of
    them: C_i cap (C_1 cup ... cup C_{i-1}) within some C_k, k < i. The generators must not
    contain one another (as those of :func:`generating_class`).
    """
    left = [tuple(g) for g in generators]
    order: list[tuple[int, ...]] = []
    seen: set[int] = set()
    while left:
        fits = [(len(set(g) & seen), i) for i, g in enumerate(left) if _joins(g, seen, order)]
        if not fits:
            return None
        g = left.pop(max(fits, key=lambda r: (r[0], -r[1]))[1])  # the largest separator first
        order.append(g)
        seen |= set(g)
    return order


def _joins(g, seen: set, order) -> bool:
    """Whether ``g`` meets the variables ``seen`` so far within one generator of ``order``."""
    sep = set(g) & seen
    return not order or any(sep <= set(h) for h in order)


# ---------------------------------------------------------------------------------------------
# Poisson GLM
#: Designs with K * p^2 below this are built and solved dense: the normal matrix of a small
#: table (sdcMicro's modRisk tables: 80 to 13,000 cells, a handful of parameters) costs a few
#: BLAS calls, where the sparse products cost about a millisecond each in overhead alone.
DENSE_WORK = 1 << 24


def dense_design(K: int, p: int) -> bool:
    """Whether a K x p design is small enough for dense products (K p^2 <= ``DENSE_WORK``)."""
    return K * p * p <= DENSE_WORK


def design_matrix(shape, terms, numeric=None, extra=None, dense: bool | None = None):
    """Design matrix (K x p) with an intercept first and treatment contrasts.

    ``terms``: tuples of variable indices. ``numeric``: optional dict variable -> values per level;
    such a variable enters linearly (one column, R's formula semantics for numeric columns).
    ``extra``: optional list of dense (K,) covariate columns appended at the end.
    ``dense``: return a dense ndarray (True), a sparse CSR matrix (False), or decide by size
    (None: dense when :func:`dense_design`). Both hold the same values.
    Returns ``(X, names)`` with names as tuples (term, column-in-term).
    """
    numeric = numeric or {}
    shape = tuple(int(s) for s in shape)
    K = math.prod(shape)
    blocks, names, p = _design_blocks(shape, terms, numeric)
    for e in extra or ():
        blocks.append((slice(None), p, np.asarray(e, float)))
        names.append(("(extra)", p))
        p += 1
    if dense is None:
        dense = dense_design(K, p)
    if dense:  # the blocks own disjoint columns: plain assignment
        X = np.zeros((K, p))
        for r, c, v in blocks:
            X[r, c] = v
        return X, names
    from scipy import sparse

    every = np.arange(K)
    rows = [every if isinstance(r, slice) else r for r, _, _ in blocks]
    cols = [np.broadcast_to(np.asarray(c, np.int64), (len(rw),)) for (_, c, _), rw in zip(blocks, rows)]
    vals = [np.broadcast_to(np.asarray(v, float), (len(rw),)) for (_, _, v), rw in zip(blocks, rows)]
    X = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(K, p))
    return X, names


def _design_blocks(shape, terms, numeric):
    """The non-zero entries of the design, one block ``(rows, columns, values)`` per term
    (rows a slice for every cell), the column names and the number of columns so far."""
    K = math.prod(shape)
    grid = np.indices(shape, dtype=np.int32).reshape(len(shape), -1) if shape else np.zeros((0, 1), np.int32)
    blocks: list = [(slice(None), 0, 1.0)]
    names: list = [("(intercept)", 0)]
    p = 1
    for t in terms:
        fac = [j for j in t if j not in numeric]
        num = [j for j in t if j in numeric]
        dims = tuple(shape[j] - 1 for j in fac)
        width = math.prod(dims)
        if width == 0:
            continue
        if fac:
            mask = np.ones(K, bool)
            for j in fac:
                mask &= grid[j] > 0
            r = np.flatnonzero(mask)
            c = p + np.ravel_multi_index(tuple(grid[j][r] - 1 for j in fac), dims)
        else:  # numeric variables only: one column over every cell
            r, c = slice(None), p
        v = np.ones(K)[r]
        for j in num:
            v = v * np.asarray(numeric[j], float)[grid[j][r]]
        blocks.append((r, c, v))
        names += [(t, i) for i in range(width)]
        p += width
    return blocks, names, p


def _cholesky_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b for a symmetric positive definite A: the Cholesky factor L (which exists
    only for such an A), then L y = b and L' x = y; least squares when A is not positive
    definite (a singular design) or the solution is not finite.

    NumPy's own LAPACK routines: importing ``scipy.linalg`` for this costs 0.2 s on an idle
    machine and several seconds under load, paid by the first fit of a process (the spread of
    first and later calls of ``loglinear_risk``)."""
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]
    x = np.linalg.solve(L.T, np.linalg.solve(L, b))
    if np.all(np.isfinite(x)):
        return x
    return np.linalg.lstsq(A, b, rcond=None)[0]


def poisson_irls(X, y: np.ndarray, offset: np.ndarray | None = None, tol: float = 1e-10, max_iter: int = 100):
    """Poisson GLM log E(y) = offset + X beta by IRLS (Newton).

    ``X``: a dense ndarray or a SciPy sparse matrix (see :func:`design_matrix`).

    Start: beta = (log(sum y / sum exp(offset)), 0, ...) (intercept first). Stops when the
    relative deviance change |D - D_old| / (|D| + 0.1) < ``tol``. Cells with fitted value
    < 1e-12 (zero margins: beta diverges) are set to 0. Rank-deficient designs are solved by
    least squares. Returns ``(mu, beta, iterations, converged)``.
    """
    y = np.asarray(y, float)
    K, p = X.shape
    off = np.zeros(K) if offset is None else np.asarray(offset, float)
    beta = np.zeros(p)
    beta[0] = math.log(max(y.sum(), 1e-300) / np.exp(off).sum())
    eta = off + X @ beta
    mu = np.exp(eta)
    dev_old = np.inf
    converged = False
    if isinstance(X, np.ndarray):
        Xt = X.T
        gram = lambda w: Xt @ (X * w[:, None])  # noqa: E731
    else:
        Xt = X.T.tocsr()
        gram = lambda w: (Xt @ X.multiply(w[:, None]).tocsc()).toarray()  # noqa: E731
    positive = y > 0
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        w = mu
        z = eta - off + (y - mu) / np.maximum(mu, 1e-300)
        beta = _cholesky_solve(gram(w), Xt @ (w * z))
        eta = np.minimum(off + X @ beta, 700.0)
        mu = np.exp(eta)
        with np.errstate(divide="ignore", invalid="ignore"):
            dev = 2.0 * float(np.sum(np.where(positive, y * np.log(y / mu), 0.0) - (y - mu)))
        if abs(dev - dev_old) / (abs(dev) + 0.1) < tol:
            converged = True
            break
        dev_old = dev
    mu = np.where(mu < 1e-12, 0.0, mu)
    return mu, beta, it, converged


# ---------------------------------------------------------------------------------------------
# measures
def uniqueness_probabilities(mu: np.ndarray):
    """For a sample unique with mu = (1 - pi) lambda:
    P(F = 1 | f = 1) = exp(-mu) and E(1/F | f = 1) = (1 - exp(-mu)) / mu (:= 1 at mu = 0)."""
    mu = np.asarray(mu, float)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # mu < 0 (sdcMicro's pi > 1): inf
        p1 = np.exp(-mu)
        p2 = np.where(mu > 0, -np.expm1(-mu) / mu, 1.0)
    return p1, p2


def uniqueness_variances(mu: np.ndarray):
    r"""For a sample unique with F - 1 ~ Poisson(mu): Var(1[F = 1]) = e^-mu (1 - e^-mu) and
    Var(1/F) = E(1/F^2) - E(1/F)^2, with

    .. math:: E(1/F^2) = \frac{e^{-\mu}}{\mu} \sum_{y \ge 1} \frac{\mu^y}{y\, y!}
              = \frac{e^{-\mu}}{\mu} (\mathrm{Ei}(\mu) - \gamma - \ln \mu)

    (the series below mu = 1, where Ei's form cancels; Ei otherwise, and the
    asymptotic e^-mu Ei(mu) = sum_k k! / mu^(k+1), six terms, for mu > 700, where Ei overflows). The sums
    over the sample uniques are the variances of tau_1 and tau_2 given the model's lambdas (the
    population counts independent Poisson, Skinner & Holmes 1998)."""
    from scipy.special import expi

    mu = np.maximum(np.asarray(mu, float), 0.0)
    p1, p2 = uniqueness_probabilities(mu)
    e2 = np.ones_like(mu)
    small = (mu > 0) & (mu < 1.0)
    mid = (mu >= 1.0) & (mu <= 700.0)
    big = mu > 700.0
    if small.any():
        m = mu[small]
        term, acc = np.ones_like(m), np.zeros_like(m)
        for y in range(1, 25):  # mu^y / (y y!): below 1e-25 by y = 24
            term = term * m / y
            acc += term / y
        e2[small] = np.exp(-m) * acc / m
    if mid.any():
        m = mu[mid]
        e2[mid] = np.exp(-m) * (expi(m) - np.euler_gamma - np.log(m)) / m
    if big.any():
        m = mu[big]
        tail = sum(math.factorial(k) / m ** (k + 1) for k in range(6))
        e2[big] = (tail - np.exp(-m) * (np.euler_gamma + np.log(m))) / m
    return p1 * (1.0 - p1), np.maximum(e2 - p2**2, 0.0)


def bias_criterion(f: np.ndarray, lam: np.ndarray, pi, which: str = "12", chunk: int = 16384):
    """Skinner-Shlomo standardised bias criterion for tau_1 and tau_2.

    Sums over every cell with lambda > 0 (empty cells included):
    B = sum a (f - m) + b ((f - m)^2 - f), v = sum a^2 m + 2 b^2 m^2, m = pi lambda, Z = B / sqrt(v),
    with, for mu = (1 - pi) lambda and r = (1 - e^{-mu}) / mu,
    a_1 = mu e^{-lambda}, b_1 = (1 - pi) a_1 / (2 pi) (tau_1) and
    a_2 = e^{-m} r - e^{-lambda}, b_2 = [e^{-m} r - e^{-lambda} (1 + mu / 2)] / m (tau_2).
    ``which``: "1", "2" or "12". Computed in chunks of ``chunk`` cells (the temporaries stay in
    the processor cache: about 2.5 times faster on 5 x 10^5 cells than whole arrays).
    Returns ``{"B1", "v1", "Z1", "B2", "v2", "Z2"}`` (only the requested measures).
    """
    per_cell = np.ndim(pi) > 0
    if per_cell:
        pi = np.broadcast_to(pi, lam.shape)
    acc = np.zeros(4)
    for start in range(0, lam.size, chunk):  # the cells with lambda > 0 picked per chunk, in cache
        part = slice(start, start + chunk)
        f_c, lam_c, pi_c = f[part], lam[part], pi[part] if per_cell else pi
        pos = lam_c > 0
        if not pos.all():
            f_c, lam_c, pi_c = f_c[pos], lam_c[pos], pi_c[pos] if per_cell else pi
        acc += _criterion_sums(f_c, lam_c, pi_c, which)
    out = {}
    for i, name in enumerate("12"):
        if name in which:
            B, v = float(acc[2 * i]), float(acc[2 * i + 1])
            out.update({"B" + name: B, "v" + name: v, "Z" + name: B / math.sqrt(v) if v > 0 else 0.0})
    return out


def _criterion_sums(f, lam, pi, which) -> np.ndarray:
    """(B_1, v_1, B_2, v_2) of :func:`bias_criterion` on one chunk of cells (lambda > 0)."""
    m = pi * lam
    q = 1.0 - pi
    mu = q * lam
    d = f - m
    d2 = d * d
    d2 -= f
    e_pl = np.exp(-m)
    em = np.expm1(-mu)  # e^{-mu} - 1
    e_l = em + 1.0
    e_l *= e_pl  # e^{-lambda} = e^{-pi lambda} e^{-(1 - pi) lambda}
    out = np.zeros(4)
    if "1" in which:
        a = mu * e_l
        out[0:2] = _b_and_v(a, a * (q / (2.0 * pi)), d, d2, m)
    if "2" in which:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.divide(em, mu)
        np.negative(r, out=r)
        r[mu == 0] = 1.0  # census cells: pi = 1
        r *= e_pl  # e^{-m} r
        b = 0.5 * mu
        b += 1.0
        b *= e_l
        np.subtract(r, b, out=b)
        b /= m
        out[2:4] = _b_and_v(r - e_l, b, d, d2, m)
    return out


def _b_and_v(a, b, d, d2, m):
    """sum a d + b d2 and sum a^2 m + 2 (b m)^2. By ``einsum``, not ``@``: a 1-D ``@`` is a BLAS
    call, and a multi-threaded BLAS spends far longer starting its threads on these short
    vectors than summing them (on a busy 2-core machine the criterion took 37 ms per chunk
    instead of under 1 ms, three quarters of one estimate's time)."""
    bm = b * m
    e = np.einsum
    return float(e("i,i->", a, d) + e("i,i->", b, d2)), float(e("i,i,i->", a, a, m) + 2.0 * e("i,i->", bm, bm))


def geometric_blend(lam_a: np.ndarray, lam_b: np.ndarray, w: float) -> np.ndarray:
    """lambda_a^(1 - w) lambda_b^w per cell (0 where either is 0): the log-linear model of b with
    its last term's parameters scaled by w (w = 0: model a, w = 1: model b)."""
    both = (lam_a > 0) & (lam_b > 0)
    out = np.zeros(lam_a.shape)
    la, lb = np.log(lam_a[both]), np.log(lam_b[both])
    out[both] = np.exp(la + w * (lb - la))
    return out


def ipf_step(target: np.ndarray, mu: np.ndarray, shape, term, fitted: np.ndarray | None = None) -> np.ndarray:
    """One IPF adjustment: ``mu`` scaled so that its ``term`` margin equals that of ``target``
    (0 where the fitted margin is 0). ``target``: the table, or its margin over ``term`` with
    the other dimensions kept (size 1); ``fitted``: the margin of ``mu`` if known. A new
    array; ``mu`` is not changed."""
    shape = tuple(int(s) for s in shape)
    o = margin(target, shape, term)
    e = margin(mu if fitted is None else fitted, shape, term)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(e > 0, o / e, 0.0)
    return (np.asarray(mu, float).reshape(shape) * ratio).reshape(-1)


def margin(x: np.ndarray, shape, term) -> np.ndarray:
    """The margin of the table ``x`` over ``term`` with the other dimensions kept (size 1);
    ``x`` already such a margin is returned as it is."""
    shape = tuple(int(s) for s in shape)
    x = np.asarray(x, float)
    if x.size != math.prod(shape):
        return x
    return _kept_sum(x.reshape(shape), tuple(sorted(term)))


def margins(x: np.ndarray, shape, terms) -> list[np.ndarray]:
    """The margins of the table ``x`` over each of ``terms`` (as :func:`margin`), with fewer
    passes over ``x``: the terms without the variable of most categories are taken from the
    one margin over all their variables when that is at most a quarter of the table (on the
    six keys of issue 24, with single-year age: 10 of 15 two-way margins from a table of 5,184
    instead of 497,000 cells). Equal to :func:`margin` per term up to rounding."""
    shape = tuple(int(s) for s in shape)
    x = np.asarray(x, float).reshape(shape)
    terms = [tuple(sorted(t)) for t in terms]
    used = sorted({a for t in terms for a in t})
    src = {t: x for t in terms}
    if used:
        big = max(used, key=lambda a: shape[a])
        rest = [t for t in terms if big not in t]
        axes = tuple(sorted({a for t in rest for a in t}))
        if len(rest) > 1 and 4 * math.prod(shape[a] for a in axes) <= x.size:
            sub = _kept_sum(x, axes)
            src.update(dict.fromkeys(rest, sub))
    return [_kept_sum(src[t], t) for t in terms]


def margin_deviance(target: np.ndarray, mu: np.ndarray, shape, term) -> float:
    """G^2 = 2 sum o log(o / e) of the ``term`` margin, observed (``target``: the table or its
    margin, as in :func:`ipf_step`) against fitted (``mu``): the deviance reduction of the first
    IPF step that adds ``term`` to the model."""
    shape = tuple(int(s) for s in shape)
    o, e = margin(target, shape, term), margin(mu, shape, term)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 2.0 * float(np.sum(np.where((o > 0) & (e > 0), o * np.log(o / e), 0.0)))


def effective_df(observed_margin, term) -> int:
    """Degrees of freedom a term adds when its observed margin is matched, adjusted for the
    margin's empty cells (Bishop, Fienberg & Holland 1975, sec. 3.8: a cell fitted as 0 is no
    free parameter).

    By Moebius inversion over the subsets s of ``term``: df = sum_s (-1)^{|t| - |s|} N(s), with
    N(s) the number of non-empty cells of the observed margin over s and N(empty set) = 1.
    Without empty cells this is prod (L_j - 1), the count of :func:`n_parameters`; for a
    two-way term it is N(ij) - N(i) - N(j) + 1, the df of the independence test on the non-empty
    rows and columns less the empty cells. ``observed_margin``: term (tuple) -> the margin of
    the observed table over it. At least 1.
    """
    term = tuple(term)
    df = (-1) ** len(term)
    for r in range(1, len(term) + 1):
        for s in itertools.combinations(term, r):
            df += (-1) ** (len(term) - r) * int(np.count_nonzero(observed_margin(s)))
    return max(df, 1)


def deviance_support(g2: float, df: int) -> float:
    """The standardized deviance reduction (G^2 - df) / sqrt(2 df): the chi-square statistic
    G^2 on df degrees of freedom in its normal approximation (mean df, variance 2 df), so that
    terms of very different sizes compare on one scale; about 2 is a one-sided test at 2.5 %."""
    return (float(g2) - df) / math.sqrt(2.0 * df)


def pram_correct_match(F: np.ndarray, M: np.ndarray, pi, k: int) -> float:
    """Exact P(correct match | sample unique in released cell k) under misclassification
    (general form, Shlomo & Skinner 2010): [pi_k M_kk / (1 - pi_k M_kk)] / sum_j F_j pi_j M_kj / (1 - pi_j M_kj).
    ``M[k, j]`` = P(released k | true j)."""
    F = np.asarray(F, float)
    pi = np.broadcast_to(np.asarray(pi, float), F.shape)
    row = M[k]
    num = pi[k] * row[k] / (1.0 - pi[k] * row[k])
    den = np.sum(F * pi * row / (1.0 - pi * row))
    return float(num / den)


def nb_smoothing(f: np.ndarray, shape, pi, window: int = 1):
    """Negative-binomial smoothing, moment version (experimental).

    In the window of cells within ``window`` steps on every variable (clipped at the table
    edges), m = mean of f and s^2 = variance of f. alpha = m^2 / (s^2 - m) when s^2 > m, else the
    Poisson limit. Returns per cell ``(p_unique, inv_F)`` = (P(F=1|f=1), E(1/F|f=1)).
    """
    from scipy import ndimage

    shape = tuple(shape)
    t = np.asarray(f, float).reshape(shape)
    size = 2 * window + 1
    ones = np.ones(shape)
    cnt = ndimage.uniform_filter(ones, size=size, mode="constant", cval=0.0)
    m = ndimage.uniform_filter(t, size=size, mode="constant", cval=0.0) / cnt
    m2 = ndimage.uniform_filter(t * t, size=size, mode="constant", cval=0.0) / cnt
    nw = cnt * size ** len(shape)
    s2 = np.maximum(m2 - m * m, 0.0) * nw / np.maximum(nw - 1.0, 1.0)
    m = m.reshape(-1)
    s2 = s2.reshape(-1)
    pi = np.broadcast_to(np.asarray(pi, float), m.shape)
    over = s2 > m + 1e-12
    # Poisson limit: lambda = m / pi
    mu_p = (1.0 - pi) * m / pi
    p1, p2 = uniqueness_probabilities(mu_p)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(over, m * m / (s2 - m), 1.0)
        Nbeta = np.where(over, m / (alpha * pi), 0.0)
        rho = (1.0 + Nbeta * pi) / (1.0 + Nbeta)
        nb1 = rho ** (alpha + 1.0)
        nb2 = np.where(rho < 1.0, rho * (1.0 - rho**alpha) / (alpha * (1.0 - rho)), 1.0)
    ok = over & (m > 0) & (alpha > 0)
    return np.where(ok, nb1, p1), np.where(ok, nb2, p2)
