"""Sensitivity rules of magnitude tables (business microdata): the (n, k)-dominance rule and
the p % rule, per cell of a key combination.

A cell c of a table of a numeric variable x (turnover, employees) holds the contributions
x_1 >= x_2 >= ... >= x_{N_c} >= 0 of its records and the total T_c = sum_i x_i.

* (n, k)-dominance: c is sensitive when the n largest contributions hold more than k % of the
  total, sum_{i <= n} x_i > (k / 100) T_c;
* p % rule: c is sensitive when the second largest contributor, who knows its own value and
  the published total, can estimate the largest within p %: T_c - x_1 - x_2 < (p / 100) x_1.

A cell of one or two contributors is sensitive under the p % rule whenever x_1 > 0 (the rest
is 0), and under (n, k)-dominance whenever n >= N_c and T_c > 0. A cell whose total is 0 is
sensitive under neither. No frame library and no validation here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["CellContributions", "cell_contributions", "dominance_sensitive", "p_percent_sensitive"]


class CellContributions(NamedTuple):
    """Per cell 0..C-1: ``n_contributors``, ``total``, ``top_sum`` (the sum of the n largest
    contributions), ``first`` and ``second`` (the largest two; 0 where absent)."""

    n_contributors: np.ndarray
    total: np.ndarray
    top_sum: np.ndarray
    first: np.ndarray
    second: np.ndarray


def cell_contributions(cell: np.ndarray, x: np.ndarray, n_cells: int, n_largest: int) -> CellContributions:
    """The contributions of the records to their cells: ``cell`` (r,) int ids 0..C-1, ``x``
    (r,) values >= 0 (records without a cell or a value already left out). One sort: by cell,
    then by decreasing value; a record's rank within its cell is its position minus the cell's
    first position."""
    order = np.lexsort((-x, cell))
    cs, xs = cell[order], x[order]
    counts = np.bincount(cs, minlength=n_cells)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(cs.size) - starts[cs]
    total = np.bincount(cs, weights=xs, minlength=n_cells)
    top = rank < n_largest
    top_sum = np.bincount(cs[top], weights=xs[top], minlength=n_cells)
    first = np.bincount(cs[rank == 0], weights=xs[rank == 0], minlength=n_cells)
    second = np.bincount(cs[rank == 1], weights=xs[rank == 1], minlength=n_cells)
    return CellContributions(counts, total, top_sum, first, second)


def dominance_sensitive(c: CellContributions, dominance_percent: float) -> np.ndarray:
    """sum of the n largest > (k / 100) T, per cell (the n of ``cell_contributions``)."""
    return c.top_sum > dominance_percent / 100.0 * c.total


def p_percent_sensitive(c: CellContributions, p_percent: float) -> np.ndarray:
    """T - x_1 - x_2 < (p / 100) x_1, per cell (the remainder clipped at 0 against rounding)."""
    rest = np.clip(c.total - c.first - c.second, 0.0, None)
    return rest < p_percent / 100.0 * c.first
