r"""The probability of a correct match under misclassification (PRAM), with the full matrix.

Shlomo & Skinner (2010): the released key X~ is a misclassified version of the true key X,
M_kj = P(X~ = k | X = j), applied independently to every record; sampling is Bernoulli with
fraction pi. For a sample unique in released cell k, the probability that an intruder who
links it to one of the population units of cell k picks the right one is

.. math::

    P_k = \frac{M_{kk} / (1 - \pi_k M_{kk})}{\sum_j F_j M_{kj} / (1 - \pi_k M_{kj})}

(the printed eq. 9 of Shlomo & Skinner 2022 has M_kk (1 - pi_k M_kk) in the numerator, a
misprint: given exactly one sampled record released as k, it comes from true cell j with
probability proportional to F_j M_kj / (1 - pi_k M_kj), and the match is correct only for
j = k). For small pi and little misclassification it reduces to M_kk / F~_k with
F~_k = sum_j F_j M_kj, the form that needs only the diagonal. No frame library here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["correct_match_probability", "exact_factor", "key_matrix"]


def correct_match_probability(F, M, pi) -> np.ndarray:
    r"""P_k of every released cell k for known population counts.

    Parameters
    ----------
    F : array (K,)
        Population counts F_j of the true cells.
    M : array (K, K)
        M[k, j] = P(released k | true j) (columns sum to 1).
    pi : float or array (K,)
        Sampling fraction pi_k of each released cell.

    Returns
    -------
    ndarray (K,)
        P_k; 0 where no unit can be released as k.
    """
    F = np.asarray(F, dtype=float)
    M = np.asarray(M, dtype=float)
    pi = np.broadcast_to(np.asarray(pi, dtype=float), F.shape)[:, None]
    A = M / (1.0 - pi * M)
    den = A @ F
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, np.diag(A) / den, 0.0)


def key_matrix(matrices: dict, shape) -> np.ndarray:
    """M over the cells of a key table (C order) from per-variable transition matrices
    ``{axis: P}`` with P[j, k] = P(released k | original j); other axes are not changed.
    For tests and small tables: K x K."""
    M = np.ones((1, 1))
    for a, L in enumerate(shape):
        P = matrices.get(a, np.eye(L))
        M = np.kron(M, np.asarray(P, dtype=float).T)
    return M


def exact_factor(mu, shape, matrices: dict, pi) -> np.ndarray:
    r"""The factor eq. 9 puts on the diagonal form M_kk / F~_k, per cell of a key table:

    .. math::

        c_k = \frac{1}{1 - \pi_k M_{kk}} \cdot \frac{\sum_j \mu_j M_{kj}}
              {\sum_j \mu_j M_{kj} / (1 - \pi_k M_{kj})},

    so that M_kk c_k / F~_k = P_k when F = mu. The ratio does not depend on the scale of mu.

    Parameters
    ----------
    mu : array (K,)
        Expected population counts of the true cells (C order over ``shape``).
    shape : tuple
        Categories per key.
    matrices : dict axis -> ndarray (L, L)
        Transition matrix of every PRAMed key, P[j, k] = P(released k | original j).
    pi : float or array (K,)
        Sampling fraction of each released cell.

    Returns
    -------
    ndarray (K,)
        c_k (1 where no expected unit can be released as k).

    Notes
    -----
    M_kj is the product over PRAMed keys of P^(v)[j_v, k_v] and is 0 unless j and k agree on
    every other key, so the sum runs over the C = prod L_v combinations of the PRAMed keys:
    O(K C) time.
    """
    shape = tuple(int(s) for s in shape)
    axes = sorted(matrices)
    K = int(np.prod(shape))
    if not axes:
        return np.ones(K)
    front = list(range(len(axes)))
    mu_t = np.moveaxis(np.asarray(mu, dtype=float).reshape(shape), axes, front)
    C = int(np.prod([shape[a] for a in axes]))
    mu_c = mu_t.reshape(C, -1)
    pi_arr = np.broadcast_to(np.asarray(pi, dtype=float), (K,)).reshape(shape)
    pi_c = np.moveaxis(pi_arr, axes, front).reshape(C, -1)
    Mc = np.ones((1, 1))
    for a in axes:
        Mc = np.kron(Mc, np.asarray(matrices[a], dtype=float).T)  # Mc[k, j] over the combinations
    out = np.empty_like(mu_c)
    for k in range(C):
        m = Mc[k][:, None]  # M_kj for every true combination j
        p = pi_c[k][None, :]
        tilde = (m * mu_c).sum(axis=0)
        g = (m / (1.0 - p * m) * mu_c).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(g > 0, tilde / g, 1.0)
        out[k] = ratio / (1.0 - pi_c[k] * Mc[k, k])
    rest = [shape[a] for a in range(len(shape)) if a not in axes]
    return np.moveaxis(out.reshape([shape[a] for a in axes] + rest), front, axes).reshape(K)
