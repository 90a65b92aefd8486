"""Rounding to a base b > 0, deterministic, random or controlled (the total kept within one
base). Pure NumPy; NaN (missing) stays NaN.

Every value is written x = b (l + f) with l = floor(x / b) an integer and f in [0, 1) its
fraction of a base; it is rounded down to b l or up to b (l + 1):

* ``nearest``: up when f >= 1/2 (conventional rounding, halves up);
* ``random`` (unbiased random rounding): up with probability f, independently, so that
  E[x'] = x;
* ``controlled``: up with probability f as well, but the records rounded up are drawn
  together, by systematic sampling with probabilities f_i (Madow 1949) in a random order:
  with S = sum f_i, exactly floor(S) or ceil(S) records go up, so the rounded total
  b sum l_i + b m differs from the true total b sum l_i + b S by less than one base, and each
  value is still unbiased (its inclusion probability is f_i).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fractions", "round_controlled", "round_nearest", "round_random"]


def fractions(x: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray]:
    """``(l, f)``: the whole number of bases below x and the fraction of a base above it
    (f in [0, 1); NaN where x is NaN)."""
    q = x / base
    lo = np.floor(q)
    f = q - lo
    whole = f >= 1.0  # q a hair below an integer (-1e-300): f rounds to 1, so q is that integer
    return np.where(whole, lo + 1.0, lo), np.where(whole, 0.0, f)


def round_nearest(x: np.ndarray, base: float) -> np.ndarray:
    lo, f = fractions(x, base)
    return (lo + (f >= 0.5)) * base


def round_random(x: np.ndarray, base: float, rng: np.random.Generator) -> np.ndarray:
    lo, f = fractions(x, base)
    u = rng.random(x.shape[0])
    return (lo + (u < f)) * base


def round_controlled(x: np.ndarray, base: float, groups: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Controlled rounding of ``x`` keeping the total of each group of rows (``groups``: the
    row indices of each stratum, or one group of all rows) within one base."""
    lo, f = fractions(x, base)
    up = np.zeros(x.shape[0], dtype=bool)
    for rows in groups:
        rows = rows[~np.isnan(x[rows]) & (f[rows] > 0)]
        if rows.size:
            up[rows] = systematic_selection(f[rows], rng)
    return (lo + up) * base


def systematic_selection(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Which units a randomised systematic sample with inclusion probabilities ``p`` (each in
    [0, 1)) takes: the units in a random order, their cumulative probabilities C_i, one uniform
    start u; unit i is taken when an integer point u + j falls in [C_{i-1}, C_i). The sample
    has floor(sum p) or ceil(sum p) units and P(i taken) = p_i."""
    order = rng.permutation(p.size)
    c = np.concatenate(([0.0], np.cumsum(p[order])))
    u = rng.random()
    hits = np.floor(c[1:] - u) - np.floor(c[:-1] - u)
    taken = np.zeros(p.size, dtype=bool)
    taken[order] = hits > 0
    return taken
