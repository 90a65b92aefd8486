"""The Fellegi-Sunter neighbourhood of Seri's confidentiality plot.

Seri (2004, section 2.1) compares every released record y with every original x by
z(x, y) = ||y - x|| / ||y||; the pairs split into the true links M (x the partner of y) and the
non-links U, both known to the releasing agency, so the distributions m(z) = P(z | M) and
u(z) = P(z | U) are computed, not estimated. Instead of one critical distance, the neighbourhood
can follow Fellegi & Sunter (1969): z is cut into bins, the bins are ranked by the likelihood
ratio m(z)/u(z), and the top bins form the link region while their cumulative u(z) is at most
the significance alpha (the type 1 error). The neighbourhood of y is the originals whose z falls
in a bin of the link region. When m/u falls as z grows this is the critical-distance rule on
the bin grid; otherwise it follows the ratio, as Fellegi-Sunter linkage does.

Pure NumPy; all n^2 pairs in blocks (time O(n^2 p), memory O(n * bins)).
"""

from __future__ import annotations

import numpy as np

__all__ = ["link_distance_edges", "fs_link_region", "fs_neighbourhood"]

_BLOCK = 2_000_000  # pair-variable elements per block


def link_distance_edges(zlink: np.ndarray, bins: int) -> np.ndarray:
    """Bin edges at the 1/bins, 2/bins, ..., 1 quantiles of the finite link distances (the last
    edge is the largest link distance), repeated edges merged."""
    z = zlink[np.isfinite(zlink)]
    if z.size == 0:
        return np.zeros(1)
    return np.unique(np.quantile(z, np.arange(1, bins + 1) / bins))


def fs_link_region(m: np.ndarray, u: np.ndarray, alpha: float) -> np.ndarray:
    """The bins of the Fellegi-Sunter link region: bins with m > 0, ranked by m/u (u = 0 first;
    equal ratios in bin order), taken while the cumulative u is at most ``alpha``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(u > 0, m / u, np.inf)
    ratio = np.where(m > 0, ratio, -1.0)
    order = np.argsort(-ratio, kind="stable")
    order = order[m[order] > 0]
    take = order[np.cumsum(u[order]) <= alpha * (1 + 1e-12)]
    linked = np.zeros(m.size, dtype=bool)
    linked[take] = True
    return linked


def _sq_sum(D: np.ndarray) -> np.ndarray:
    """Sum of squares over the last axis, added in column order (so that a pair gives the same
    bits alone or in a block)."""
    out = np.zeros(D.shape[:-1])
    for j in range(D.shape[-1]):
        out += np.square(D[..., j])
    return out


def _bin_counts(X: np.ndarray, Y: np.ndarray, ynorm: np.ndarray, edges: np.ndarray):
    """Per released record: the number of originals in each bin of z, and the smallest z of a
    non-partner."""
    n, p = Y.shape
    nbin = edges.size + 1
    counts = np.zeros((n, nbin), dtype=np.int64)
    nearest_other = np.full(n, np.inf)
    step = max(1, _BLOCK // max(1, n * p))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        d2 = np.zeros((hi - lo, n))
        for j in range(p):
            d2 += np.square(Y[lo:hi, j][:, None] - X[:, j][None, :])  # the order of _sq_sum
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.sqrt(d2) / ynorm[lo:hi, None]
        b = np.searchsorted(edges, z, side="left")
        rows = np.repeat(np.arange(hi - lo), n)
        counts[lo:hi] = np.bincount(rows * nbin + b.ravel(), minlength=(hi - lo) * nbin).reshape(hi - lo, nbin)
        z[np.arange(hi - lo), np.arange(lo, hi)] = np.inf
        nearest_other[lo:hi] = z.min(axis=1) if n > 1 else np.inf
    return counts, nearest_other


def fs_neighbourhood(X: np.ndarray, Y: np.ndarray, alpha: float, bins) -> dict:
    """Seri's quantities with the Fellegi-Sunter neighbourhood.

    ``bins``: a number of bins (edges at quantiles of the link distances, see
    :func:`link_distance_edges`) or sorted edges. Bin b holds z with e_b < z <= e_{b+1} (bin 0:
    z <= e_1; the last bin: z > e_B). Returns the edges, m and u per bin (shares of the n link
    pairs and of the n(n - 1) non-link pairs), the link region, and per record ``neighbours``
    (originals in the link region, the partner included), ``perturbation``
    ||y_i - x_i|| / ||x_i||, ``nearest_correct`` and ``in_neighbourhood``.
    """
    n = X.shape[0]
    ynorm = np.sqrt(_sq_sum(Y))
    dlink = np.sqrt(_sq_sum(Y - X))
    with np.errstate(divide="ignore", invalid="ignore"):
        zlink = dlink / ynorm
        perturbation = dlink / np.sqrt(_sq_sum(X))
    edges = link_distance_edges(zlink, int(bins)) if isinstance(bins, (int, np.integer)) else np.asarray(bins, float)
    counts, nearest_other = _bin_counts(X, Y, ynorm, edges)
    blink = np.searchsorted(edges, zlink, side="left")
    mcount = np.bincount(blink, minlength=edges.size + 1)
    ucount = counts.sum(axis=0) - mcount
    m = mcount / n
    u = ucount / (n * (n - 1))
    linked = fs_link_region(m, u, alpha)
    return {
        "edges": edges,
        "m": m,
        "u": u,
        "n_link_pairs": mcount,
        "n_nonlink_pairs": ucount,
        "linked": linked,
        "neighbours": counts[:, linked].sum(axis=1),
        "perturbation": perturbation,
        "nearest_correct": zlink <= nearest_other,
        "in_neighbourhood": linked[blink],
    }
