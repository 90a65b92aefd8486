"""The riskiest key combinations: for every small subset of the key variables, the number of
records that are unique (f_k = 1) on that subset alone.

A record unique on a few variables is exposed to any intruder who knows just those: "312
records are unique on region, age and sex alone". The counts come from the key-pattern table
of the whole file (one GROUP BY through the engine), aggregated onto each subset on the small
pattern table, with sdcMicro's missing-value rule (a missing value matches every category) as
in :func:`sdckit.frequencies`; only counts leave this module unless the caller asks for the
key values of the unique cells.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from .._core.frequencies import strata_correction
from .._core.nafreq import pattern_frequencies
from .._prepare import prepare
from .._progress import step
from ..engines import in_memory_engine
from ..results.assessment import KeySubsets

__all__ = ["MAX_SIZE", "MAX_SUBSETS", "KeySubsets", "key_subsets"]

#: the largest subset size searched
MAX_SIZE = 3
#: at most this many subsets are counted: a size whose subsets would exceed it is left out
MAX_SUBSETS = 300
#: subsets shown per size, and unique cells listed per subset with ``include_records``
TOP_PER_SIZE = 5
CELLS_PER_SUBSET = 10


def _sizes(m: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The subset sizes searched (1..MAX_SIZE while the subsets stay within MAX_SUBSETS) and
    those left out."""
    kept: list[int] = []
    total = 0
    for s in range(1, min(MAX_SIZE, m) + 1):
        total += math.comb(m, s)
        if total > MAX_SUBSETS and kept:
            break
        kept.append(s)
    skipped = tuple(s for s in range(1, min(MAX_SIZE, m) + 1) if s not in kept)
    return tuple(kept), skipped


def key_subsets(table, scenario, *, include_records: bool = False, engine=None) -> KeySubsets:
    """Count, for every subset of 1..3 key variables, the records unique on it alone.

    With P distinct key patterns of the whole file (and strata, within which frequencies are
    counted), each subset costs one aggregation of the P-row pattern table and the
    missing-value rule on the (much smaller) subset table: O(P) per subset, never a pass over
    the records.
    """
    eng = in_memory_engine(engine, "the report")
    keys = list(scenario.keys)
    prep = prepare(
        table,
        keys,
        strata=list(scenario.strata) or None,
        missing=list(scenario.missing) or None,
        allow_degenerate_keys=True,
        engine=eng,
    )
    codes, cards = prep.keys.codes, tuple(prep.keys.cardinalities)
    if prep.strata is not None:
        codes = np.asfortranarray(np.concatenate([codes, prep.strata.codes], axis=1))
        cards = cards + tuple(prep.strata.cardinalities)
    _, patterns, counts, _ = eng.patterns(codes, None, cards)
    strata_cols = list(range(len(keys), codes.shape[1]))
    sizes, skipped = _sizes(len(keys))
    result: dict = {}
    unique_rows: dict = {}
    for s in sizes:
        step(f"records unique on {s} key variable(s)")
        for subset in combinations(range(len(keys)), s):
            n_unique, rows = _uniques_on(eng, patterns, counts, cards, list(subset), strata_cols)
            names = tuple(keys[j] for j in subset)
            result[names] = n_unique
            unique_rows[names] = rows
    top = _top(result, sizes)
    cells = _cells(prep.keys, keys, top, unique_rows, eng) if include_records else None
    return KeySubsets(prep.table.n, sizes, len(result), skipped, result, top, cells)


def _uniques_on(eng, patterns, counts, cards, subset: list[int], strata_cols: list[int]):
    """Records with f = 1 on the key columns ``subset`` (within strata) and the sub-patterns
    (key codes) of those records: the GROUP BY of the pattern table on those columns, weighted
    by the patterns' record counts, then the missing-value rule."""
    cols = subset + strata_cols
    sub, records = _aggregate(eng, patterns, counts, cols, cards)
    fp, Fp = pattern_frequencies(sub, records, records, 1.0, "sdcmicro")
    if strata_cols:
        fp, Fp = strata_correction(sub, records, records, fp, Fp, len(subset), 1.0)
    unique = fp == 1
    return int(np.round(records[unique].sum())), sub[unique][:, : len(subset)]


#: subset tables up to this many cells are counted densely (bincount), larger ones by GROUP BY
_DENSE_CELLS = 1 << 22


def _aggregate(eng, patterns, counts, cols: list[int], cards) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``patterns[:, cols]`` (-1 = missing) and their record counts (sums
    of ``counts``). A small key space (the usual case for 1-3 keys) is counted densely with one
    ``bincount`` over the pattern table; a large one goes through the engine's GROUP BY."""
    radix = [int(cards[c]) + 1 for c in cols]  # one extra slot for "missing"
    if math.prod(radix) > _DENSE_CELLS:
        _, sub, _, records = eng.patterns(np.asfortranarray(patterns[:, cols]), counts, [cards[c] for c in cols])
        return sub, records
    key = np.zeros(patterns.shape[0], dtype=np.int64)
    for c, r in zip(cols, radix):
        key *= r
        key += patterns[:, c]
        key += 1
    cells = np.bincount(key, weights=counts, minlength=math.prod(radix))
    occupied = np.flatnonzero(cells)
    sub = np.empty((occupied.size, len(cols)), dtype=np.int32)
    rest = occupied
    for j in range(len(cols) - 1, -1, -1):
        rest, code = np.divmod(rest, radix[j])
        sub[:, j] = code - 1
    return sub, cells[occupied]


def _top(counts: dict, sizes) -> tuple:
    """The TOP_PER_SIZE subsets with the most unique records, per size (zero counts left out)."""
    out = []
    for s in sizes:
        ranked = sorted((kv for kv in counts.items() if len(kv[0]) == s and kv[1] > 0), key=lambda kv: -kv[1])
        out += ranked[:TOP_PER_SIZE]
    return tuple(out)


def _cells(encoded, keys, top, unique_rows, eng) -> dict:
    """Key values of up to CELLS_PER_SUBSET unique cells of each top subset (record-level:
    only with ``include_records``). A missing value is shown as ``NA``."""
    labels = [eng.label_values(lab) for lab in encoded.labels]
    out = {}
    for names, _ in top:
        idx = [keys.index(v) for v in names]
        rows = unique_rows[names][:CELLS_PER_SUBSET]
        out[names] = tuple(
            tuple("NA" if c < 0 else str(labels[j][c]) for j, c in zip(idx, row)) for row in rows.tolist()
        )
    return out
