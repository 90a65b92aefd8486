r"""PRAM (post-randomisation) with an invariant transition matrix: pure NumPy kernels on
category codes and small L x L matrices.

Gouweleeuw, Kooiman, Willenborg & de Wolf (1998), "Post randomisation for statistical
disclosure control: theory and implementation", Journal of Official Statistics 14(4), 463-478.

With p the category frequencies of a variable and P a transition matrix
(P_{jk} = P(published k | original j)):

* backward matrix  Q_{kj} = P_{jk} p_j / \sum_l p_l P_{lk}   (= P(original j | published k));
* R = P Q is invariant: p' R = p' (the expected published frequencies equal the original ones);
* R_s = strength R + (1 - strength) I keeps the invariance and moves fewer records.

Every record with category l gets a new category drawn from row l of the applied matrix.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "apply_matrix",
    "backward_matrix",
    "base_matrix",
    "blend",
    "draw_base_matrix",
    "draw_diagonal",
    "invariant_matrix",
    "invariant_of_base",
    "row_sum_errors",
]


def base_matrix(diagonal) -> np.ndarray:
    """The base matrix P with the given diagonal and, in row l, the off-diagonal entries
    (1 - p_ll) / (L - 1). For L = 1 it is [[1]] whatever the diagonal."""
    d = np.asarray(diagonal, dtype=float)
    L = d.size
    if L <= 1:
        return np.ones((L, L))
    P = np.repeat(((1.0 - d) / (L - 1))[:, None], L, axis=1)
    np.fill_diagonal(P, d)
    return P


def draw_diagonal(rng: np.random.Generator, L: int, pd: float) -> np.ndarray:
    """The diagonal of a base matrix: L independent draws from Uniform(pd, 1) (none when
    L <= 1, where the matrix is [[1]])."""
    if L <= 1:
        return np.ones(L)
    return rng.uniform(pd, 1.0, L)


def draw_base_matrix(rng: np.random.Generator, L: int, pd: float) -> np.ndarray:
    """A base matrix P whose diagonal entries are drawn independently from Uniform(pd, 1)."""
    return base_matrix(draw_diagonal(rng, L, pd))


def backward_matrix(P: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Q_{kj} = P_{jk} p_j / \\sum_l p_l P_{lk}: the probability that a record published as k
    was j. ``p`` may be counts or shares (Q does not depend on its scale). A category k that
    no record can reach (the sum is 0) gets the row e_k; it never enters R = P Q."""
    P = np.asarray(P, dtype=float)
    p = np.asarray(p, dtype=float)
    joint = P * p[:, None]  # joint[j, k] = p_j P_jk
    s = joint.sum(axis=0)  # s_k = sum_l p_l P_lk
    Q = np.eye(P.shape[0])
    ok = s > 0
    Q[ok] = joint[:, ok].T / s[ok, None]
    return Q


def invariant_matrix(P: np.ndarray, p: np.ndarray) -> np.ndarray:
    """R = P Q (Gouweleeuw et al. 1998): p' R = p'."""
    return np.asarray(P, dtype=float) @ backward_matrix(P, p)


def invariant_of_base(diagonal, p) -> np.ndarray:
    """R = P Q for the base matrix P with the given diagonal, in O(L^2): P = diag(a) + b 1'
    with b_l = (1 - p_ll)/(L - 1) and a_l = p_ll - b_l, so P Q = diag(a) Q + b (1' Q)."""
    d = np.asarray(diagonal, dtype=float)
    L = d.size
    if L <= 1:
        return np.ones((L, L))
    b = (1.0 - d) / (L - 1)
    Q = backward_matrix(base_matrix(d), p)
    return (d - b)[:, None] * Q + b[:, None] * Q.sum(axis=0)[None, :]


def blend(R: np.ndarray, strength: float) -> np.ndarray:
    """R_s = strength R + (1 - strength) I (strength = 0: the identity, nothing changes)."""
    R = np.asarray(R, dtype=float)
    return strength * R + (1.0 - strength) * np.eye(R.shape[0])


def row_sum_errors(M: np.ndarray) -> np.ndarray:
    """|row sum - 1| of every row of a transition matrix."""
    return np.abs(np.asarray(M, dtype=float).sum(axis=1) - 1.0)


def apply_matrix(rng: np.random.Generator, codes: np.ndarray, M: np.ndarray) -> np.ndarray:
    """New codes: a record with code l (0..L-1) gets code k with probability M[l, k]; -1
    (missing) stays -1.

    One uniform draw per non-missing record, in record order, compared with the cumulative
    row of its category (each row is scaled by its own sum and the result capped at the row's
    last category of positive probability, so rounding can never produce a code outside
    0..L-1, nor a code of probability 0).
    """
    codes = np.asarray(codes)
    out = codes.astype(np.int64, copy=True)
    valid = np.flatnonzero(codes >= 0)
    if valid.size == 0 or M.shape[0] <= 1:
        return out
    u = rng.random(valid.size)
    M = np.asarray(M, dtype=float)
    cum = np.cumsum(M, axis=1)
    last = M.shape[1] - 1 - np.argmax(M[:, ::-1] > 0, axis=1)  # last category of positive probability
    cv = codes[valid]
    order = np.argsort(cv, kind="stable")
    bounds = np.searchsorted(cv[order], np.arange(M.shape[0] + 1))
    new = np.empty(valid.size, dtype=np.int64)
    for l in range(M.shape[0]):
        idx = order[bounds[l] : bounds[l + 1]]
        if idx.size:
            row = cum[l]
            new[idx] = np.minimum(np.searchsorted(row, u[idx] * row[-1], side="right"), last[l])
    out[valid] = new
    return out
