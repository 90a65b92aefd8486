"""External risk: the exact algorithm (classes of identical records, trie join of the continuous
variables) against the direct pairwise computation, on the data that used to make it quadratic:
continuous variables with few distinct values (integer-valued) and missing values.

The oracle is ``external_pairwise``, which measures every (external, released) pair with the
definition's distance (Mlodak, Pietrzak & Jozefowski); it is itself checked against a
pure-Python transcription of the definition in ``test_external_risk.py``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit._core import linkage_external as core

CARDS = (2, 3, 5, 8, 10, 12, 16, 20, 30)


def integer_files(n: int, cards=CARDS, missing: float = 0.03, seed: int = 0):
    """Released and external values of integer-valued variables 1..card with Zipf-like
    frequencies (rank r has probability proportional to 1/r), the same records in both files,
    each value missing with probability ``missing`` independently in each file."""
    rng = np.random.default_rng(seed)
    cols = []
    for card in cards:
        p = 1.0 / np.arange(1, card + 1)
        cols.append(rng.choice(np.arange(1, card + 1), size=n, p=p / p.sum()).astype(float))
    x = np.column_stack(cols)
    d, a = x.copy(), x.copy()
    d[rng.random(d.shape) < missing] = np.nan
    a[rng.random(a.shape) < missing] = np.nan
    return d, a


def continuous_input(d, a, tol=0.05, pair_tol=0.0, weights=None):
    n_d, n_a, m = d.shape[0], a.shape[0], d.shape[1]
    w = np.ones(m) if weights is None else np.asarray(weights, float)
    none_d, none_a = np.zeros((n_d, 0), np.int64), np.zeros((n_a, 0), np.int64)
    return core.ExternalInput(
        none_d,
        none_a,
        none_d.astype(float),
        none_a.astype(float),
        np.ones(0),
        d,
        a,
        np.zeros(0),
        np.zeros(0),
        w,
        tol,
        pair_tol,
    )


def assert_same_as_pairwise(e):
    paired, ptr, idx = core.external_pairwise(e)
    adm = core.admissible_classes(e)
    got_ptr, got_idx = adm.record_pairs()
    np.testing.assert_array_equal(adm.paired, paired)
    np.testing.assert_array_equal(got_ptr, ptr)  # the same admissible released records ...
    np.testing.assert_array_equal(got_idx, idx)  # ... for every external record
    for reuse in (False, True):
        np.testing.assert_array_equal(core.class_links(adm, reuse), core.first_found(ptr, idx, e.n_d, reuse))
    return paired, ptr


def test_integer_valued_with_missing_2000_records():
    # the acceptance case: 2,000 records x 9 integer-valued variables declared continuous, 3 %
    # missing in each file; every admissible pair, the pairing flags and the first-found links
    # equal the direct pairwise computation
    d, a = integer_files(2000)
    paired, ptr = assert_same_as_pairwise(continuous_input(d, a))
    assert 0.5 < paired.mean() < 1  # external records missing a value the released one has are not paired
    assert (np.diff(ptr) > 1).any()  # a missing released value or a repeated record: several admissible


def test_public_function_on_integer_valued_variables():
    d, a = integer_files(2000, seed=1)
    names = [f"v{j}" for j in range(d.shape[1])]
    released = pl.DataFrame({v: d[:, j] for j, v in enumerate(names)})
    external = pl.DataFrame({v: a[:, j] for j, v in enumerate(names)})
    kw = dict(scales="continuous", tolerance=0.05)
    fast = sdckit.external_risk(released, external, names, **kw)
    slow = sdckit.external_risk(released, external, names, **kw, pairing={"method": "pairwise"})
    np.testing.assert_array_equal(fast.paired, slow.paired)
    np.testing.assert_array_equal(fast.linked_to, slow.linked_to)


@pytest.mark.parametrize("cards, missing", [((5, 5, 5), 0.03), ((2, 2), 0.2), ((3, 40, 7), 0.5)])
def test_heavily_repeated_records(cards, missing):
    # few distinct records (down to 4 x 2 + missing combinations): admissible pairs are a large
    # share of all pairs; the classes keep the work small and the result exact
    d, a = integer_files(1500, cards=cards, missing=missing, seed=2)
    assert_same_as_pairwise(continuous_input(d, a))


@pytest.mark.parametrize("tol", [0.01, 0.2, 0.99, 1.0, 2.5])
def test_tolerances_and_signs(tol):
    # values around zero of both signs, repeated, with missing values; tolerances on both sides
    # of 1 (from 1 on, the admissible released values are no longer one interval)
    rng = np.random.default_rng(3)
    pool = np.array([-30.0, -10, -9.5, -1, -0.0, 0, 0.5, 1, 1.02, 9, 10, 10.5, 100, 104, np.nan])
    d = rng.choice(pool, size=(400, 3))
    a = rng.choice(pool, size=(300, 3))
    assert_same_as_pairwise(continuous_input(d, a, tol=tol))


@pytest.mark.parametrize("pair_tol, weights", [(0.5, (1, 1, 0.25, 0.25)), (1.5, (1, 1, 1, 1)), (0.3, (0.2, 1, 1, 0.2))])
def test_partial_matches(pair_tol, weights):
    # pair_tol > 0: variables whose weight alone exceeds the tolerance are joined, the others
    # measured within the candidates
    d, a = integer_files(600, cards=(4, 6, 9, 12), missing=0.1, seed=4)
    assert_same_as_pairwise(continuous_input(d, a, pair_tol=pair_tol, weights=weights))


def _candidate_count(e):
    near = core.nearest_observed(e.con_d, e.con_a)
    join = core._Join(e, near)
    return sum(ia.size for ia, _ in core._candidates(join))


def test_candidates_grow_linearly():
    # the speed trap: with integer-valued variables and missing values the old blocking (one
    # continuous variable) compared about half of all pairs. The join keeps the candidates
    # within a small multiple of the number of records, and the multiple does not grow with n.
    per_record = []
    for n in (2000, 8000):
        d, a = integer_files(n, seed=5)
        per_record.append(_candidate_count(continuous_input(d, a)) / n)
    assert max(per_record) < 10
    assert per_record[1] < 2 * per_record[0]


def test_small_budgets_and_hash_collisions(monkeypatch):
    # the paths taken on big files, forced on small ones: candidate lists cut into chunks of
    # a tiny pair budget, the sampled check of whether joining one more variable pays, and
    # rows grouped by a hash that collides for every row (the grouping is checked and redone
    # from exact codes)
    d, a = integer_files(800, cards=(3, 4, 6, 10), missing=0.1, seed=6)
    monkeypatch.setattr(core, "_PAIR_BUDGET", 37)
    monkeypatch.setattr(core, "_SAMPLE", 5)
    assert_same_as_pairwise(continuous_input(d, a))
    assert_same_as_pairwise(continuous_input(d, a, pair_tol=1.5))
    monkeypatch.setattr(core, "_row_hash", lambda ints, floats, n: np.zeros(n, np.uint64))
    assert_same_as_pairwise(continuous_input(d, a))
