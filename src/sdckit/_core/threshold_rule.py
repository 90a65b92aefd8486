"""The mu-ARGUS threshold rule on integer-coded keys: cells of key combinations whose sample
frequency is at most the combination's threshold.

Pure NumPy. ``codes`` is an (n, m) matrix of category codes (``-1`` = missing); a combination is
a tuple of column positions with its own threshold t. The cells of a combination are the
distinct value combinations of its columns among the rows observed on all of them; a cell of
frequency f is *unsafe* when f <= t (mu-ARGUS: a key that occurs more often than the threshold
is safe). A row missing on a column of the combination is in no cell of it: it is neither
counted nor unsafe there.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .grouping import group_rows

__all__ = ["ThresholdTables", "all_combinations", "threshold_tables"]


def all_combinations(m: int, max_dimension: int) -> list[tuple[int, ...]]:
    """Every combination of ``m`` columns of size 1..``max_dimension``, by size, then in
    lexicographic order of the positions (mu-ARGUS's order of generated tables)."""
    return [c for d in range(1, max_dimension + 1) for c in itertools.combinations(range(m), d)]


@dataclass(frozen=True)
class ThresholdTables:
    """Result of :func:`threshold_tables`.

    Attributes
    ----------
    n_cells, n_unsafe_cells, n_unsafe_records : (C,) int64
        Per combination: its non-empty cells, its unsafe cells, and the records in them.
    n_unsafe : (n,) int64
        Per row: the number of combinations in which it lies in an unsafe cell.
    min_dimension : (n,) int64
        Per row: the smallest dimension of those combinations (0: safe everywhere).
    unsafe_by_dimension : (n, D) bool
        ``[i, d - 1]``: row i is unsafe in some combination of dimension d (D = largest one).
    category_counts : tuple of (cardinality_j, D) int64 arrays
        ``[j][c, d - 1]``: unsafe cells of dimension d whose value on column j is category c
        (mu-ARGUS's table of unsafe combinations per category and dimension).
    """

    n_cells: np.ndarray
    n_unsafe_cells: np.ndarray
    n_unsafe_records: np.ndarray
    n_unsafe: np.ndarray
    min_dimension: np.ndarray
    unsafe_by_dimension: np.ndarray
    category_counts: tuple


def threshold_tables(
    codes: np.ndarray,
    cards,
    combos,
    thresholds,
    multiplicity: np.ndarray | None = None,
) -> ThresholdTables:
    """Unsafe cells of every combination (frequency <= its threshold) and their records.

    Parameters
    ----------
    codes : (n, m) int, ``-1`` = missing
    cards : sequence of int
        Number of categories of each column (codes are below it).
    combos : sequence of tuples of column positions
    thresholds : sequence of int, one per combination
    multiplicity : (n,) int, optional
        Records each row stands for (the distinct patterns of a compressed table); default 1.
    """
    codes = np.asarray(codes)
    n = codes.shape[0]
    mult = np.ones(n, dtype=np.int64) if multiplicity is None else np.asarray(multiplicity, dtype=np.int64)
    dims = max((len(c) for c in combos), default=0)
    n_c = len(combos)
    out_cells = np.zeros(n_c, dtype=np.int64)
    out_bad_cells = np.zeros(n_c, dtype=np.int64)
    out_bad_records = np.zeros(n_c, dtype=np.int64)
    n_unsafe = np.zeros(n, dtype=np.int64)
    min_dim = np.zeros(n, dtype=np.int64)
    by_dim = np.zeros((n, dims), dtype=bool)
    cat = tuple(np.zeros((int(cards[j]), dims), dtype=np.int64) for j in range(codes.shape[1]))
    for c, (combo, t) in enumerate(zip(combos, thresholds)):
        sub = codes[:, list(combo)]
        ok = np.flatnonzero((sub >= 0).all(axis=1))
        if ok.size == 0:
            continue
        sub_ok = sub[ok].astype(np.int64)
        g, n_groups = group_rows(sub_ok, [int(cards[j]) for j in combo])
        freq = np.bincount(g, weights=mult[ok], minlength=n_groups)
        bad_cell = freq <= t
        out_cells[c] = n_groups
        out_bad_cells[c] = int(np.count_nonzero(bad_cell))
        rows = ok[bad_cell[g]]
        out_bad_records[c] = int(mult[rows].sum())
        d = len(combo)
        n_unsafe[rows] += 1
        cur = min_dim[rows]  # combinations need not come by size: keep the smallest
        min_dim[rows] = np.where(cur == 0, d, np.minimum(cur, d))
        by_dim[rows, d - 1] = True
        first = np.zeros(n_groups, dtype=np.int64)
        first[g[::-1]] = np.arange(g.size)[::-1]  # a row of each cell
        cell_codes = sub_ok[first[bad_cell]]
        for pos, j in enumerate(combo):
            cat[j][:, d - 1] += np.bincount(cell_codes[:, pos], minlength=int(cards[j]))
    return ThresholdTables(out_cells, out_bad_cells, out_bad_records, n_unsafe, min_dim, by_dim, cat)
