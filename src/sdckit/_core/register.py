r"""Re-identification risk for a subpopulation register: pure NumPy/SciPy kernels on cell arrays.

Shlomo & Skinner (2022), "Measuring risk of re-identification in microdata: state-of-the-art and
new directions", JRSS A 185, Section 3. The population U has F_k ~ Poisson(lambda_k) units in
cell k of the key table; each unit belongs to the register U_1 independently with probability
p_k (logit p_k = x_k' xi), so that the register count F^1_k ~ Poisson(phi_k), phi_k = lambda_k p_k;
an independent Bernoulli sample with fraction pi_k gives the sample count f_k.

Here: the closed forms of the four conditional measures, the design-consistent theta of Skinner &
Elliot (2002), a sparse treatment-contrast design over a subset of cells, and the two fits of
the membership logit xi: approach A (Poisson likelihood of the register counts with lambda
fixed; Fisher scoring / Newton-Raphson) and approach B (the pseudo-likelihood of a propensity
model on the register stacked with the weighted sample; Chen, Li & Wu 2019).

Nothing here knows about frames or labels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

__all__ = [
    "RiskForms",
    "closed_forms",
    "theta_hat",
    "cell_design",
    "reference_design",
    "MembershipFit",
    "fit_membership_poisson",
    "fit_membership_propensity",
    "expit",
]

#: step halving: at most this many halvings of one step
MAX_HALVINGS = 30
#: the first iterations of the default rule that are Fisher-scoring steps
FISHER_FIRST = 3
#: a design column is aliased when the squared norm of its residual on the earlier columns is
#: below this share of its own squared norm (exact aliasing leaves rounding error only)
ALIAS_TOL = 1e-9
#: approach B: a design column is at p = 1 when its register count is at least (1 - this) times
#: its weight sum (weight sums such as 3 / 0.1 = 30.000000000000004 carry rounding error)
CERTAIN_RTOL = 1e-9


# ---------------------------------------------------------------------------------------------
# measures
@dataclass(frozen=True)
class RiskForms:
    """Per cell: P(F=1 | F^1=1, f=1), E(1/F | F^1=1, f=1), P(F=1 | F^1=1), E(1/F | F^1=1)."""

    p_unique_both: np.ndarray
    risk_both: np.ndarray
    p_unique_register: np.ndarray
    risk_register: np.ndarray


def closed_forms(lam, phi, pi) -> RiskForms:
    r"""The four conditional measures in closed form (Shlomo & Skinner 2022, eqs. 21-22).

    With d_k = lambda_k - phi_k (the expected number of non-members) and nu_k = (1 - pi_k) d_k
    (non-members outside the sample):

    * P(F_k = 1 | F^1_k = 1, f_k = 1) = exp(-nu_k) / (1 + nu_k)
    * E(1/F_k | F^1_k = 1, f_k = 1) = 1 / (1 + nu_k)
    * P(F_k = 1 | F^1_k = 1) = exp(-d_k)
    * E(1/F_k | F^1_k = 1) = (1 - exp(-d_k)) / d_k  (1 at d_k = 0)

    Given F^1 = 1 and f = 1, either the register member is the sampled unit (relative weight 1,
    F = 1 + Y) or a non-member is (relative weight nu, F = 2 + Y), Y ~ Poisson(nu); the second
    line follows from E[1/(1 + Y)] = (1 - e^{-nu})/nu and E[1/(2 + Y)] = (nu - 1 + e^{-nu})/nu^2.
    ``lam``, ``phi`` arrays of one shape; ``pi`` a scalar or an array of that shape.
    """
    lam = np.asarray(lam, float)
    d = np.maximum(lam - np.asarray(phi, float), 0.0)
    nu = (1.0 - np.asarray(pi, float)) * d
    with np.errstate(divide="ignore", invalid="ignore"):
        e_reg = np.where(d > 0, -np.expm1(-d) / np.where(d > 0, d, 1.0), 1.0)
    return RiskForms(np.exp(-nu) / (1.0 + nu), 1.0 / (1.0 + nu), np.exp(-d), e_reg)


def theta_hat(F1, f, pi) -> float:
    r"""Design-consistent estimate of theta = sum_k I(F^1_k = 1, f_k = 1) / sum_k F_k I(F^1_k = 1, f_k = 1).

    Under Bernoulli sampling with fraction pi, E[F I(f = 1) | F] = E[I(f = 1) | F] +
    (2 (1 - pi) / pi) E[I(f = 2) | F] (Skinner & Elliot 2002), so

    \hat theta = sum_k I(F^1_k=1, f_k=1) / sum_k [I(F^1_k=1, f_k=1) + 2 (1 - pi_k)/pi_k I(F^1_k=1, f_k=2)].

    With a constant pi this is Shlomo & Skinner's (2022) eq. 23; with fractions that vary by
    cell the ratio above is the consistent form. NaN when no cell is unique in both files.
    """
    F1 = np.asarray(F1)
    f = np.asarray(f)
    pi = np.broadcast_to(np.asarray(pi, float), F1.shape)
    one = F1 == 1
    both = one & (f == 1)
    two = one & (f == 2)
    num = float(np.count_nonzero(both))
    den = num + float(np.sum(2.0 * (1.0 - pi[two]) / pi[two]))
    return num / den if den > 0 else math.nan


# ---------------------------------------------------------------------------------------------
# design
def cell_design(codes: np.ndarray, shape, terms):
    """Treatment-contrast design (intercept first) of the cells with the given key codes.

    ``codes``: (r, m) integer codes of r cells; ``terms``: tuples of key indices. The columns are
    those of ``loglinear.design_matrix`` (same order); only the r rows are built. Returns
    ``(X, columns)``: X a SciPy CSR matrix of 0/1 entries, ``columns`` a list of
    ``(term, level codes)`` per column (``((), ())`` for the intercept; level codes >= 1, code 0
    is the reference category).
    """
    from scipy import sparse

    r = codes.shape[0]
    rows = [np.arange(r)]
    cols = [np.zeros(r, np.int64)]
    columns: list = [((), ())]
    p = 1
    for t in terms:
        dims = tuple(int(shape[j]) - 1 for j in t)
        width = math.prod(dims)
        if width == 0:
            continue
        mask = np.ones(r, bool)
        for j in t:
            mask &= codes[:, j] > 0
        sel = np.flatnonzero(mask)
        rows.append(sel)
        cols.append(p + np.ravel_multi_index(tuple(codes[sel, j].astype(np.int64) - 1 for j in t), dims))
        grid = np.unravel_index(np.arange(width), dims)
        columns += [(tuple(t), tuple(int(g[i]) + 1 for g in grid)) for i in range(width)]
        p += width
    ri = np.concatenate(rows)
    X = sparse.csr_matrix((np.ones(ri.size), (ri, np.concatenate(cols))), shape=(r, p))
    return X, columns


def reference_design(codes: np.ndarray, terms):
    """Indicators of the reference category (code 0) of every main-effect term, over the cells
    with the given key codes.

    A reference category has no column of :func:`cell_design`, but its indicator is one of its
    linear combinations (the intercept minus the key's other columns): a direction of the fit.
    Returns ``(R, keys)``: R a SciPy CSR matrix (r, number of main effects) of 0/1 entries,
    ``keys`` the main-effect terms ``(j,)`` in the order of R's columns.
    """
    from scipy import sparse

    mains = [tuple(t) for t in terms if len(t) == 1]
    R = np.zeros((codes.shape[0], len(mains)))
    for i, (j,) in enumerate(mains):
        R[:, i] = codes[:, j] == 0
    return sparse.csr_matrix(R), mains


# ---------------------------------------------------------------------------------------------
# membership fits
def expit(eta):
    """The logistic function 1 / (1 + exp(-eta)) (SciPy's, exact in both tails)."""
    from scipy.special import expit as _expit

    return _expit(eta)


@dataclass(frozen=True)
class MembershipFit:
    """The fitted membership logit.

    ``xi``: coefficients (length = design columns); ``-inf`` for a column whose cells have no
    register member but a positive capacity (the MLE lies at infinity: p = 0 in those cells;
    ``n_infinite`` counts them), ``+inf`` for a column (approach B only) whose register members
    are at least its weight sum (p = 1 in those cells; ``n_certain`` counts them), 0 for a
    column that no fitted cell has (not estimable) and for an aliased column (a linear
    combination of earlier columns over the fitted cells, e.g. the levels of a key whose
    reference category has no fitted cell: the column is dropped, as R's ``glm`` reports NA).
    ``p``: fitted p_k per design row (0 in the cells of a ``-inf`` column, 1 in those of a
    ``+inf`` column; see :func:`_support` for a cell in both). ``path``: xi after
    each iteration (fitted columns). ``kinds``: "fisher" or "newton" per iteration.
    ``certain_reference``: the columns of the reference indicators (approach B,
    :func:`reference_design`) at p = 1; they have no coefficient of their own and count in
    ``n_certain``.
    """

    xi: np.ndarray
    p: np.ndarray
    iterations: int
    converged: bool
    loglik: float
    halvings: int
    kinds: tuple
    path: tuple
    last_step: float
    n_infinite: int
    n_not_estimable: int
    n_aliased: int = 0
    n_certain: int = 0
    certain_reference: tuple = ()
    #: rows fixed at p = 1 or 0 by the boundary rule of :func:`_fit`, and its refits
    n_boundary: int = 0
    boundary_rounds: int = 0


class _PoissonLogit:
    """Approach A: F^1_k ~ Poisson(lambda_k p_k), logit p_k = x_k' xi, lambda fixed."""

    canonical = False

    def __init__(self, F1, lam):
        self.F1, self.lam = F1, lam
        self.pos = F1 > 0

    def loglik(self, eta) -> float:
        # log phi = log lambda + eta - log(1 + e^eta); constant -log F1! dropped
        logp = -np.logaddexp(0.0, -eta)
        phi = self.lam * np.exp(logp)
        return float(np.sum(self.F1[self.pos] * (np.log(self.lam[self.pos]) + logp[self.pos])) - phi.sum())

    def weights(self, eta, observed: bool):
        p = expit(eta)
        phi = self.lam * p
        q = 1.0 - p
        score = (self.F1 - phi) * q
        info = phi * q * q
        neg_h = ((self.F1 - phi) * p + phi * q) * q if observed else None
        return score, info, neg_h


class _Propensity:
    """Approach B: l*(xi) = sum_A x_i' xi - sum_B w_j log(1 + exp(x_j' xi)), on cells: the register
    count F^1_k and the sample's weight sum W_k of each cell."""

    canonical = True  # the logit is the canonical link: Fisher scoring is Newton-Raphson

    def __init__(self, F1, W):
        self.F1, self.W = F1, W

    def loglik(self, eta) -> float:
        return float(np.dot(self.F1, eta) - np.dot(self.W, np.logaddexp(0.0, eta)))

    def weights(self, eta, observed: bool):
        p = expit(eta)
        info = self.W * p * (1.0 - p)
        return self.F1 - self.W * p, info, info if observed else None


def _gram(X, w) -> np.ndarray:
    """X' diag(w) X as a dense matrix."""
    if isinstance(X, np.ndarray):
        return X.T @ (X * w[:, None])
    return np.asarray((X.T @ X.multiply(w[:, None]).tocsr()).todense())


def _cholesky(A: np.ndarray):
    """The Cholesky factor of A, or None when A is not (numerically) positive definite."""
    from scipy.linalg import lapack

    c, info = lapack.dpotrf(A, lower=False, clean=True)
    return c if info == 0 else None


def _solve(A: np.ndarray, b: np.ndarray, factor=None) -> np.ndarray:
    """A^{-1} b for a symmetric positive (semi-)definite A; least squares when singular."""
    from scipy.linalg import lapack

    c = _cholesky(A) if factor is None else factor
    if c is not None:
        x, info = lapack.dpotrs(c, b, lower=False)
        if info == 0 and np.all(np.isfinite(x)):
            return x
    return np.linalg.lstsq(A, b, rcond=None)[0]


def _support(X, pos: np.ndarray, cap: np.ndarray, certain: bool = False, R=None):
    """Rows and columns of the fit, after fixing the coefficients whose estimate is infinite.

    * p = 0: a column with no register count (``pos``) on its rows but a positive capacity
      (``cap``) has a score that is negative for every xi: its coefficient diverges to -inf and
      p -> 0 on its rows. The extended MLE fixes p = 0 there, drops those rows and the column,
      and repeats (dropping rows can expose another such column).
    * p = 1 (with ``certain``, approach B): a column whose register count is positive and at
      least its capacity (up to ``CERTAIN_RTOL``; a capacity of 0 included) has the score
      sum_k (F^1_k - W_k p_k) x_k >= F^1_j - W_j >= 0 along it for every p < 1 (> 0 unless
      F^1_j = W_j): its coefficient diverges to +inf. The fit fixes p = 1 on its rows, drops
      those rows and the column. The columns of ``R`` (indicators of reference categories,
      linear combinations of the columns of X: directions of the fit) are checked by the same
      rule, after the columns and one at a time (two of them, or one and a column, can cover
      the same rows); one that fires fixes p = 1 on its rows, which leave the fit, but removes
      no column of X (the key's columns are then aliased with the intercept; :func:`_fit`
      drops one). This
      rule is applied when the p = 0 rule has nothing left to do; then the p = 0 rule again,
      and so on until neither finds a column.

    A removed row keeps the p of the rule that removed it, except that a row without register
    count in a p = 0 column gets p = 0 even when a p = 1 column removed it first (it has no
    member, and a row with members is never in a p = 0 column unless a p = 1 column removed it
    first: it keeps p = 1). Columns left with no capacity on the remaining rows are not estimable
    (dropped, coefficient 0). Returns ``(rows, cols, minus, plus, one, rplus)`` as boolean
    masks: rows in the fit, columns in the fit, columns at -inf, columns at +inf, rows with
    p = 1, columns of ``R`` at p = 1.
    """
    n, q = X.shape
    rows = np.ones(n, bool)
    cols = np.ones(q, bool)
    minus = np.zeros(q, bool)
    plus = np.zeros(q, bool)
    one = np.zeros(n, bool)
    in_minus = np.zeros(n, bool)
    Xc = X.tocsc() if not isinstance(X, np.ndarray) else X
    Rc = None if R is None or not certain else (R.tocsc() if not isinstance(R, np.ndarray) else R)
    rcols = np.ones(0 if Rc is None else Rc.shape[1], bool)
    rplus = np.zeros_like(rcols)
    while True:
        r = rows.astype(float)
        pos_sum = np.asarray(Xc.T @ (pos * r)).ravel()
        cap_sum = np.asarray(Xc.T @ (cap * r)).ravel()
        div = cols & (pos_sum <= 0) & (cap_sum > 0)
        if div.any():
            minus |= div
            hit = _touched(Xc, div)
            in_minus |= hit
        elif certain:
            div = cols & _reaches(pos_sum, cap_sum)
            rdiv = np.zeros_like(rcols)
            if not div.any() and rcols.any():  # columns first, then one reference at a time
                hits = np.flatnonzero(rcols & _reaches(*(np.asarray(Rc.T @ (v * r)).ravel() for v in (pos, cap))))
                rdiv[hits[:1]] = True
            if not div.any() and not rdiv.any():
                break
            plus |= div
            rplus |= rdiv
            rcols &= ~rdiv
            hit = _touched(Xc, div) | (_touched(Rc, rdiv) if rdiv.any() else False)
            one |= rows & hit
        else:
            break
        cols &= ~div
        rows &= ~hit
    one &= ~(in_minus & (pos <= 0))
    cols &= cap_sum > 0
    return rows, cols, minus, plus, one, rplus


def _reaches(pos_sum: np.ndarray, cap_sum: np.ndarray) -> np.ndarray:
    """The p = 1 rule: register count positive and at least the capacity (``CERTAIN_RTOL``)."""
    return (pos_sum > 0) & (pos_sum >= (1.0 - CERTAIN_RTOL) * cap_sum)


def _touched(Xc, mask: np.ndarray) -> np.ndarray:
    """The rows with a non-zero entry in one of the columns ``mask``."""
    if not mask.any():
        return np.zeros(Xc.shape[0], bool)
    return np.asarray(Xc[:, np.flatnonzero(mask)] @ np.ones(int(mask.sum()))).ravel() != 0


def _independent_columns(X) -> np.ndarray:
    """The columns of X that are not linear combinations of earlier columns (boolean mask).

    The Cholesky factor R of X'X gives R_jj^2 = the squared norm of the residual of column j
    on columns 1..j-1; column j is aliased when R_jj^2 <= ``ALIAS_TOL`` (X'X)_jj (or when the
    factorisation breaks down at j). The first aliased column is dropped and X'X refactorised,
    until none is left: earlier columns are kept (the intercept, then the terms in order).
    """
    from scipy.linalg import lapack

    G = _gram(X, np.ones(X.shape[0]))
    norms = np.diag(G).copy()
    keep = norms > 0
    while keep.any():
        idx = np.flatnonzero(keep)
        c, info = lapack.dpotrf(G[np.ix_(idx, idx)], lower=False, clean=True)
        n_ok = idx.size if info == 0 else info - 1
        small = np.flatnonzero(np.diag(c)[:n_ok] ** 2 <= ALIAS_TOL * norms[idx[:n_ok]])
        if small.size:
            keep[idx[small[0]]] = False
        elif info == 0:
            break
        else:
            keep[idx[info - 1]] = False
    return keep


def _maximise(model, X, tol: float, max_iter: int, newton: bool):
    """Maximise model.loglik(X xi) from xi = 0: Fisher scoring (expected information) or, with
    ``newton``, Fisher scoring for the first ``FISHER_FIRST`` iterations and whenever minus the
    observed Hessian is not positive definite, Newton-Raphson otherwise. Each step is halved (at
    most ``MAX_HALVINGS`` times) while l(new) < l(old) - 1e-12 (1 + |l(old)|); stop when
    max |xi_r - xi_{r-1}| < ``tol``."""
    xi = np.zeros(X.shape[1])
    eta = np.zeros(X.shape[0])
    l_old = model.loglik(eta)
    path, kinds = [], []
    halvings = 0
    step_size = math.inf
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        use_newton = newton and it > FISHER_FIRST
        score, info, neg_h = model.weights(eta, use_newton)
        U = np.asarray(X.T @ score).ravel()
        G = _gram(X, neg_h) if use_newton else None
        factor = _cholesky(G) if G is not None else None
        kind = "newton" if factor is not None or model.canonical else "fisher"
        delta = _solve(_gram(X, info), U) if factor is None else _solve(G, U, factor)
        t = 1.0
        for _ in range(MAX_HALVINGS + 1):
            new = xi + t * delta
            eta_new = np.asarray(X @ new).ravel()
            l_new = model.loglik(eta_new)
            if l_new >= l_old - 1e-12 * (1.0 + abs(l_old)) or t < 2.0**-MAX_HALVINGS:
                break
            t *= 0.5
            halvings += 1
        step_size = float(np.max(np.abs(new - xi))) if new.size else 0.0
        xi, eta, l_old = new, eta_new, l_new
        path.append(xi.copy())
        kinds.append(kind)
        if step_size < tol or not np.isfinite(step_size):
            converged = bool(np.isfinite(step_size)) and _at_maximum(model, X, eta)
            break
    return xi, eta, l_old, it, converged, halvings, tuple(kinds), tuple(path), step_size


#: a linear predictor above this means p = 1 to 12 digits: the maximum lies at infinity
ETA_BOUNDARY = 30.0


def _at_maximum(model, X, eta) -> bool:
    """Whether a fit whose steps have stopped is at a finite maximum: no fitted p numerically 1
    (a cell with more members than its capacity drives p -> 1; the information vanishes there,
    so the steps stop although no maximum exists) and the score is zero relative to the counts."""
    if eta.size and float(np.max(eta)) > ETA_BOUNDARY:
        return False
    score, _, _ = model.weights(eta, False)
    U = np.asarray(X.T @ score).ravel()
    return bool(U.size == 0 or np.max(np.abs(U)) <= 1e-6 * (1.0 + float(np.sum(model.F1))))


#: the boundary rule's rounds: at most this many refits after fixing the cells a fit drives past
#: the boundary (see :func:`_fit`)
MAX_BOUNDARY_ROUNDS = 20
#: after the boundary rule, a cell with register members needs at least this fitted p
MIN_MEMBER_P = 1e-12


def _fit(model_cls, X, pos, cap, extra, tol, max_iter, newton, certain=False, R=None) -> MembershipFit:
    """The fit on the supported rows and the independent supported columns, mapped back to
    every row and column, with the boundary rule for a maximum at infinity that no single
    column shows.

    The boundary rule: when a fit stops without a finite maximum and its linear predictor has
    passed +-:data:`ETA_BOUNDARY` on some rows (p within 1e-13 of 1 or 0; a combination of
    columns along which the likelihood rises without bound: quasi-complete separation), those
    rows are fixed at p = 1 (or 0, only a row without register members), as the extended
    maximum-likelihood estimate has them, they
    leave the fit (their counts set to 0) and the rest is fitted again from 0, until a fit
    converges, no row passes the boundary, or :data:`MAX_BOUNDARY_ROUNDS` rounds are done.
    ``iterations`` sums the rounds' iterations; the fixed rows count in ``n_boundary``. Approach
    B (``certain``) first fixes, before each fit, the register-only rows of
    :func:`_fix_unseen` (counted in ``n_boundary`` and ``boundary_rounds`` as well)."""
    members = np.asarray(pos, float) > 0
    pos = np.asarray(pos, float).copy()
    cap = np.asarray(cap, float).copy()
    extra = tuple(np.asarray(e, float).copy() for e in extra)
    at_one, at_zero = np.zeros(X.shape[0], bool), np.zeros(X.shape[0], bool)
    total_it = rounds = 0
    while True:
        if certain:
            rounds += _fix_unseen(X, pos, cap, (pos, cap, *extra), R, at_one)
        fit, rows, eta_rows = _fit_once(model_cls, X, pos, cap, extra, tol, max_iter, newton, certain, R)
        total_it += fit.iterations
        if fit.converged or rounds >= MAX_BOUNDARY_ROUNDS or eta_rows is None:
            break
        idx = np.flatnonzero(rows)
        # only rows still in the likelihood (a fixed row has counts 0 and an arbitrary eta); p -> 0
        # only where the cell has no register member (with one, the likelihood falls without
        # bound as p -> 0: such a row is never at that boundary)
        live = (pos[idx] > 0) | (cap[idx] > 0)
        up = idx[live & (eta_rows > ETA_BOUNDARY)]
        down = idx[live & (eta_rows < -ETA_BOUNDARY) & ~members[idx]]
        if not (up.size or down.size):
            break
        _fix(at_one, up, (pos, cap, *extra))
        _fix(at_zero, down, (pos, cap, *extra))
        rounds += 1
    p = fit.p.copy()
    p[at_one], p[at_zero] = 1.0, 0.0
    n_boundary = int(at_one.sum() + at_zero.sum())
    # a refit that leaves a cell with register members at p ~ 0 is no extended MLE either:
    # reported as not converged (the caller's error), never as counts of F^1 / p = inf
    ok = fit.converged and not (rounds and np.any(members & (p < MIN_MEMBER_P)))
    return replace(fit, p=p, converged=ok, iterations=total_it, n_boundary=n_boundary, boundary_rounds=rounds)


#: a direction of the design is unseen by the sample when X_seen' X_seen has an eigenvalue below
#: this share of its largest; an entry of a direction below UNSEEN_ZERO is 0; a row moves along
#: the linear program's direction when its entry exceeds UNSEEN_MOVES
UNSEEN_TOL = 1e-9
UNSEEN_ZERO = 1e-9
UNSEEN_MOVES = 1e-6


def _unseen_up(Xs, seen: np.ndarray, members: np.ndarray) -> np.ndarray:
    r"""Approach B: register-only rows that a direction unseen by the sample drives to p = 1.

    A row with register members and no sample weight adds F^1_k eta_k to l* and nothing to its
    curvature. Along a direction d with X_seen d = 0 (a null vector of X_seen' X_seen, ``seen``
    the rows with a weight), l* is therefore linear with slope sum_k F^1_k delta_k, delta = X d
    on the register-only rows. A direction with delta >= 0 there, not all 0, has a positive
    slope: those rows form a set of cells, identified by the model, where the register has
    members and the sample none, and l* rises without bound as p -> 1 in them; as the column
    rule of :func:`_support` does for a single column, they are fixed at p = 1. A linear program
    over the null space (maximise sum delta, 0 <= delta <= 1) finds such a direction. The
    remaining unseen directions have deltas of both signs (l* unbounded only by sending members
    to p = 0, or flat): not estimable, their columns are aliased by the caller. Returns a mask
    over the rows of ``Xs`` (``members`` & ~``seen`` rows only)."""
    from scipy.linalg import eigh
    from scipy.optimize import linprog

    out = np.zeros(Xs.shape[0], bool)
    only = np.flatnonzero(members & ~seen)
    if only.size == 0 or Xs.shape[1] == 0:
        return out
    vals, vecs = eigh(_gram(Xs[seen], np.ones(int(seen.sum()))))
    null = vecs[:, vals <= UNSEEN_TOL * max(float(vals[-1]), 1.0)]
    if null.shape[1] == 0:
        return out
    D = np.asarray(Xs[only] @ null)
    D[np.abs(D) < UNSEEN_ZERO] = 0.0
    keep = np.any(D != 0, axis=1)
    if not keep.any():
        return out
    D = D[keep]
    res = linprog(
        -D.sum(axis=0), A_ub=np.vstack([D, -D]), b_ub=np.r_[np.ones(len(D)), np.zeros(len(D))],
        bounds=[(None, None)] * D.shape[1], method="highs",
    )  # fmt: skip
    if res.status == 0 and res.x is not None and -res.fun > UNSEEN_TOL:
        out[only[keep][D @ res.x > UNSEEN_MOVES]] = True
    return out


def _fix_unseen(X, pos, cap, arrays, R, at_one) -> int:
    """Approach B: fix the rows of :func:`_unseen_up` at p = 1 (they leave the fit) until none is
    left, on the rows and independent columns of :func:`_support`. Returns the rounds."""
    for rounds in range(MAX_BOUNDARY_ROUNDS + 1):
        rows, cols, *_ = _support(X, pos, cap, True, R)
        Xs = _submatrix(X, rows, cols)
        live = (pos[rows] > 0) | (cap[rows] > 0)
        Xs, idx = Xs[live], np.flatnonzero(rows)[live]
        Xs = Xs[:, _independent_columns(Xs)]
        up = _unseen_up(Xs, cap[idx] > 0, pos[idx] > 0)
        if not up.any():
            return rounds
        _fix(at_one, idx[up], arrays)
    return rounds


def _fix(at: np.ndarray, rows: np.ndarray, arrays) -> None:
    """Mark ``rows`` in ``at`` (the rows fixed at p = 1, or at p = 0) and take them out of the fit:
    their counts in ``arrays`` set to 0."""
    at[rows] = True
    for a in arrays:
        a[rows] = 0.0


def _submatrix(X, rows: np.ndarray, cols: np.ndarray):
    """The rows and columns (boolean masks) of a dense or SciPy sparse X."""
    return X[rows][:, cols] if not isinstance(X, np.ndarray) else X[np.ix_(rows, cols)]


def _fit_once(model_cls, X, pos, cap, extra, tol, max_iter, newton, certain=False, R=None):
    """One fit (see :func:`_fit`): the fit, the rows in it and their linear predictor (None
    when nothing was iterated)."""
    rows, cols, minus, plus, one, rplus = _support(X, pos, cap, certain, R)
    Xs = _submatrix(X, rows, cols)
    if Xs.shape[0] * Xs.shape[1] ** 2 <= 1 << 22 and not isinstance(Xs, np.ndarray):
        Xs = Xs.toarray()
    # aliasing on the rows with a capacity: a row without one (approach B: register members, no
    # sample record) adds F^1 eta to l* and nothing to the information, so a combination of
    # columns that only such rows see is not estimable (l* is linear along it: Newton's steps
    # wander along it, or it has no finite maximum by sending some members to p = 0)
    independent = _independent_columns(Xs[cap[rows] > 0])
    n_aliased = int(np.count_nonzero(~independent))
    if n_aliased:
        cols[np.flatnonzero(cols)[~independent]] = False
        Xs = Xs[:, independent]
    model = model_cls(pos[rows], *(e[rows] for e in extra))
    eta_rows = None
    if Xs.shape[1]:
        xi_s, eta_rows, ll, it, conv, halv, kinds, path, last = _maximise(model, Xs, tol, max_iter, newton)
    else:  # every row is fixed at p = 0 or 1: nothing to iterate
        xi_s, ll, it, conv, halv, kinds, path, last = np.zeros(0), 0.0, 0, True, 0, (), (), 0.0
    xi = np.zeros(X.shape[1])
    xi[cols] = xi_s
    eta = np.asarray(X @ xi).ravel()
    p = expit(eta)
    p[~rows] = 0.0
    p[one] = 1.0
    xi[minus] = -np.inf
    xi[plus] = np.inf
    n_ne = int(np.count_nonzero(~cols & ~minus & ~plus)) - n_aliased
    n_certain = int(plus.sum()) + int(rplus.sum())
    fit = MembershipFit(
        xi, p, it, conv, ll, halv, kinds, path, last, int(minus.sum()), n_ne, n_aliased, n_certain,
        tuple(int(i) for i in np.flatnonzero(rplus)),
    )  # fmt: skip
    return fit, rows, eta_rows


def fit_membership_poisson(
    X, F1: np.ndarray, lam: np.ndarray, *, method: str = "newton", tol: float = 1e-10, max_iter: int = 100
) -> MembershipFit:
    r"""Approach A's second step: xi from the register counts with lambda fixed.

    F^1_k ~ Poisson(phi_k), log phi_k = log lambda_k + x_k' xi - log(1 + exp(x_k' xi)).
    l(xi) = sum_k [F^1_k log phi_k - phi_k]; U(xi) = sum_k (F^1_k - phi_k)(1 - p_k) x_k;
    expected information J = sum_k phi_k (1 - p_k)^2 x_k x_k'; minus the observed Hessian
    -H = sum_k [(F^1_k - phi_k) p_k + phi_k (1 - p_k)] (1 - p_k) x_k x_k'.
    ``method="fisher"``: xi_r = xi_{r-1} + J^{-1} U (Shlomo & Skinner 2022); ``"newton"``
    (default): Fisher scoring for the first 3 iterations and whenever -H is not positive
    definite, Newton-Raphson xi_r = xi_{r-1} + (-H)^{-1} U otherwise (Fisher scoring alone
    converges only linearly when the register counts are far from the fit). Start xi_0 = 0;
    steps halved while the log-likelihood falls; stop when max |xi_r - xi_{r-1}| < ``tol``.
    Rows are cells with lambda_k > 0 (the caller drops the others). Columns without register
    members (xi = -inf) and aliased columns are handled as in :func:`fit_membership_propensity`;
    its p = 1 rule is approach B's only (here p -> 1 leaves the fit unconverged).
    """
    lam = np.asarray(lam, float)
    return _fit(_PoissonLogit, X, np.asarray(F1, float), lam, (lam,), tol, max_iter, method == "newton")


def fit_membership_propensity(
    X, F1: np.ndarray, W: np.ndarray, *, tol: float = 1e-10, max_iter: int = 100, reference=None
) -> MembershipFit:
    r"""Approach B's propensity model (Chen, Li & Wu 2019) on cells.

    The register (F^1_k members in cell k, T = 1) stacked with the sample (weight sum W_k in
    cell k, T = 0): l*(xi) = sum_k [F^1_k x_k' xi - W_k log(1 + exp(x_k' xi))],
    U* = sum_k (F^1_k - W_k p_k) x_k, H* = -sum_k W_k p_k (1 - p_k) x_k x_k' (l* is concave; the
    logit is its canonical link, so Fisher scoring is Newton-Raphson).
    Newton-Raphson from xi_0 = 0, xi_r = xi_{r-1} - H*^{-1} U*, with the step halving and the
    stopping rule of :func:`fit_membership_poisson`; quadratic convergence near the maximum
    (7 iterations for the 42 fitted coefficients of a main-effects model on EU-SILC data).

    Boundary rules, applied before the iterations (see :func:`_support`):

    * p = 0: a column whose cells have no register member but sample weight has xi = -inf
      (p = 0 in its cells: the MLE, attained in the limit; the cells and the column leave the
      fit, repeated until none is left; ``n_infinite``);
    * p = 1: a column whose register count reaches its weight sum, F^1_j >= W_j over the cells
      still in the fit (W_j = 0 included: a category that no sample record has), has a score
      F^1_j - sum_k W_k p_k > 0 for every p < 1: xi = +inf, p = 1 in its cells (the register
      covers that part of the population: F-hat = F^1 there); the cells and the column leave
      the fit (``n_certain``). The same rule on the columns of ``reference`` (optional: the
      reference-category indicators of :func:`reference_design`, combinations of the columns
      of X; checked after the columns, one at a time, so that a set of cells is counted once)
      fixes p = 1 in the cells of such a category, which leave the fit; its key's
      columns are then aliased with the intercept (one is dropped, below), and the category
      counts in ``n_certain`` and ``certain_reference``. Applied when the p = 0 rule has
      nothing left to do, then the p = 0 rule again, until neither applies. A cell in columns
      of both kinds has p = 0 if it has no register member, p = 1 if it has (F-hat = F^1 in
      both cases);
    * a column that is a linear combination of earlier columns over the fitted cells (an empty
      reference category) is aliased: dropped, coefficient 0, p unchanged.

    Without these, -H* is singular (or vanishes) and the steps wander along its null space
    without meeting the stopping rule. When every cell is fixed, no iteration is needed
    (``iterations`` 0). Cells with register members and no sample weight carry no information:
    a combination of columns seen only there is fixed at p = 1 where it is >= 0 in all of them
    (:func:`_unseen_up`) and aliased otherwise (columns are aliased over the cells with a
    weight). Another direction of no finite maximum goes to the boundary rule of :func:`_fit`;
    one it cannot save (``converged`` False, p approaching 1) is left to the caller.
    """
    F1 = np.asarray(F1, float)
    W = np.asarray(W, float)
    return _fit(_Propensity, X, F1, W, (W,), tol, max_iter, False, certain=True, R=reference)
