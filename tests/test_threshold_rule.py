"""The mu-ARGUS threshold rule per combination (sdckit.threshold_rule): a hand-worked example,
a brute-force oracle (plain Python counting) on random data with missing values, the link to
k-anonymity, row-order and relabelling properties, bad inputs and mu-ARGUS's demo file.

No mu-ARGUS output of the unsafe-combinations table is available for its demo data (the shared
copy holds the data and one household report only), so the demo file is checked against the
oracle."""

from __future__ import annotations

import itertools
import warnings
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import shared_file

# ----------------------------------------------------------------------------------------------
# hand-worked example
# ----------------------------------------------------------------------------------------------
# rows (a, b, c):  1:(1,x,0) 2:(1,x,0) 3:(1,y,0) 4:(2,y,0) 5:(2,y,1) 6:(3,y,1)
# all combinations up to dimension 2, threshold 1 (unsafe iff frequency <= 1):
#   a     : 1->3, 2->2, 3->1                     unsafe cell a=3          records {6}
#   b     : x->2, y->4                           none
#   c     : 0->4, 1->2                           none
#   a x b : (1,x)->2 (1,y)->1 (2,y)->2 (3,y)->1  unsafe (1,y),(3,y)       records {3, 6}
#   a x c : (1,0)->3 (2,0)->1 (2,1)->1 (3,1)->1  unsafe (2,0),(2,1),(3,1) records {4, 5, 6}
#   b x c : (x,0)->2 (y,0)->2 (y,1)->2          none
# per record, unsafe combinations: 0,0,1,1,1,3; smallest dimension 0,0,2,2,2,1
# per category (dim 1, dim 2): a=1 (0,1) a=2 (0,2) a=3 (1,2); b=x (0,0) b=y (0,2);
#   c=0 (0,1) c=1 (0,2)
HAND = pl.DataFrame({"a": [1, 1, 1, 2, 2, 3], "b": ["x", "x", "y", "y", "y", "y"], "c": [0, 0, 0, 0, 1, 1]})


def test_hand_worked_example_all_combinations_up_to_dimension_2():
    r = sdckit.threshold_rule(HAND, ["a", "b", "c"], max_dimension=2)
    assert r.combinations == (("a",), ("b",), ("c",), ("a", "b"), ("a", "c"), ("b", "c"))
    assert r.thresholds == (1,) * 6
    assert r.n_cells == (3, 2, 2, 4, 4, 3)
    assert r.n_unsafe_cells == (1, 0, 0, 2, 3, 0)
    assert r.n_unsafe_records == (1, 0, 0, 2, 3, 0)
    assert r.n_unsafe_combinations.tolist() == [0, 0, 1, 1, 1, 3]
    assert r.min_unsafe_dimension.tolist() == [0, 0, 2, 2, 2, 1]
    assert r.unsafe.tolist() == [False, False, True, True, True, True]
    assert r.n_unsafe == 4
    assert r.by_dimension == {
        1: {"combinations": 3, "unsafe_combinations": 1, "unsafe_cells": 1, "unsafe_records": 1},
        2: {"combinations": 3, "unsafe_combinations": 2, "unsafe_cells": 5, "unsafe_records": 4},
    }
    assert r.unsafe_categories == {
        "a": {1: (0, 1), 2: (0, 2), 3: (1, 2)},
        "b": {"x": (0, 0), "y": (0, 2)},
        "c": {0: (0, 1), 1: (0, 2)},
    }


def test_hand_worked_example_thresholds_per_dimension_and_per_combination():
    # threshold 2 in dimension 1: a=2 (2 records) and a=3 (1) become unsafe, b=x (2 records)
    # and c=1 (2) too; dimension 2 keeps threshold 1 (as above). Record 3 (1,y,0) is safe in
    # dimension 1 (a=1: 3, b=y: 4, c=0: 4) and unsafe through (1,y) in a x b.
    r = sdckit.threshold_rule(HAND, ["a", "b", "c"], max_dimension=2, frequency_threshold=[2, 1])
    assert r.n_unsafe_cells == (2, 1, 1, 2, 3, 0)
    assert r.n_unsafe_records == (3, 2, 2, 2, 3, 0)
    assert r.unsafe.all()
    assert r.min_unsafe_dimension.tolist() == [1, 1, 2, 1, 1, 1]
    # user combinations with their own thresholds: a x b at 2 -> every cell of a x b unsafe
    # ((1,x) 2, (1,y) 1, (2,y) 2, (3,y) 1); b x c at 1 -> none
    r = sdckit.threshold_rule(HAND, ["a", "b", "c"], combinations=[["a", "b"], ["c", "b"]], frequency_threshold=[2, 1])
    assert r.combinations == (("a", "b"), ("b", "c"))  # variables in key order
    assert r.n_unsafe_cells == (4, 0)
    assert r.n_unsafe_records == (6, 0)
    assert r.n_unsafe == 6
    # no combinations: the keys together (a x b x c cells: (1,x,0) 2, others 1)
    r = sdckit.threshold_rule(HAND, ["a", "b", "c"])
    assert r.combinations == (("a", "b", "c"),)
    assert r.n_unsafe_records == (4,)


# ----------------------------------------------------------------------------------------------
# brute-force oracle
# ----------------------------------------------------------------------------------------------
def _oracle(rows: list[tuple], combos: list[tuple[int, ...]], thresholds: list[int], own_category: bool = False):
    """Plain Python: per combination the Counter of its cells (rows with a None skipped, or
    None taken as a category with ``own_category``)."""
    n = len(rows)
    per_record = [0] * n
    unsafe_records, unsafe_cells = [], []
    for combo, t in zip(combos, thresholds):
        cells = [tuple(r[j] for j in combo) for r in rows]
        kept = [own_category or None not in c for c in cells]
        count = Counter(c for c, k in zip(cells, kept) if k)
        bad = [i for i, c in enumerate(cells) if kept[i] and count[c] <= t]
        for i in bad:
            per_record[i] += 1
        unsafe_records.append(len(bad))
        unsafe_cells.append(sum(1 for v in count.values() if v <= t))
    return per_record, unsafe_records, unsafe_cells


def _random_table(seed: int, n: int, m: int, missing: float) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {}
    for j in range(m):
        v = rng.integers(0, 2 + j, n).astype(float)
        v[rng.random(n) < missing] = np.nan
        cols[f"k{j}"] = pl.Series(v).cast(pl.Int64, strict=False)  # NaN -> null
    return pl.DataFrame(cols)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 60),
    m=st.integers(1, 4),
    missing=st.sampled_from([0.0, 0.15]),
    d=st.integers(1, 4),
    t=st.lists(st.integers(1, 3), min_size=4, max_size=4),
    na_rule=st.sampled_from(["exclude", "own_category"]),
)
def test_matches_the_oracle(seed, n, m, missing, d, t, na_rule):
    d = min(d, m)
    data = _random_table(seed, n, m, missing)
    keys = data.columns
    with warnings.catch_warnings():  # random keys can be degenerate: not what this test checks
        warnings.simplefilter("ignore")
        r = sdckit.threshold_rule(
            data, keys, max_dimension=d, frequency_threshold=t[:d], na_rule=na_rule, allow_degenerate_keys=True
        )
    combos = [c for s in range(1, d + 1) for c in itertools.combinations(range(m), s)]
    ths = [t[len(c) - 1] for c in combos]
    per_record, unsafe_records, unsafe_cells = _oracle(data.rows(), combos, ths, na_rule == "own_category")
    assert r.n_unsafe_combinations.tolist() == per_record
    assert list(r.n_unsafe_records) == unsafe_records
    assert list(r.n_unsafe_cells) == unsafe_cells
    # the category table sums, over a variable's categories, to the unsafe cells holding it
    # (cells with a missing value on the variable are not listed under a category)
    rows = data.rows()
    for j, name in enumerate(keys):
        for s in range(1, d + 1):
            holding = 0
            for combo, th in zip(combos, ths):
                if len(combo) != s or j not in combo:
                    continue
                cells = Counter(tuple(row[i] for i in combo) for row in rows)
                holding += sum(
                    1 for c, f in cells.items() if f <= th and c[combo.index(j)] is not None and
                    (na_rule == "own_category" or None not in c)
                )  # fmt: skip
            assert sum(v[s - 1] for v in r.unsafe_categories[name].values()) == holding


def test_one_combination_is_k_anonymity_with_k_one_above_the_threshold():
    data = _random_table(3, 300, 3, 0.0)
    for t in (1, 2, 4):
        r = sdckit.threshold_rule(data, data.columns, frequency_threshold=t)
        k = sdckit.k_anonymity(data, data.columns, k=t + 1)
        np.testing.assert_array_equal(r.unsafe, k.violates(t + 1))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), perm_seed=st.integers(0, 10_000))
def test_row_order_and_relabelling_do_not_change_the_verdicts(seed, perm_seed):
    data = _random_table(seed, 40, 3, 0.1)
    keys = data.columns
    r = sdckit.threshold_rule(data, keys, max_dimension=2, frequency_threshold=[2, 1], allow_degenerate_keys=True)
    perm = np.random.default_rng(perm_seed).permutation(data.height)
    rp = sdckit.threshold_rule(
        data[perm], keys, max_dimension=2, frequency_threshold=[2, 1], allow_degenerate_keys=True
    )
    np.testing.assert_array_equal(rp.n_unsafe_combinations, r.n_unsafe_combinations[perm])
    assert rp.to_dict() == r.to_dict()
    relabelled = data.with_columns([(pl.col(k) * 7 + 100).cast(pl.Utf8).alias(k) for k in keys])
    rl = sdckit.threshold_rule(
        relabelled, keys, max_dimension=2, frequency_threshold=[2, 1], allow_degenerate_keys=True
    )
    np.testing.assert_array_equal(rl.n_unsafe_combinations, r.n_unsafe_combinations)
    assert rl.n_unsafe_cells == r.n_unsafe_cells


def test_own_category_counts_missing_as_sdcmicro_riskycells_does():
    # riskyCells groups NA as a value: with record 6's a missing (a: 1 -> 3, 2 -> 2, NA -> 1),
    # the NA cell of a is unsafe at threshold 1 under "own_category" and absent under "exclude"
    data = HAND.with_columns(pl.when(pl.arange(0, 6) == 5).then(None).otherwise(pl.col("a")).alias("a"))
    own = sdckit.threshold_rule(data, ["a", "b", "c"], max_dimension=1, na_rule="own_category")
    assert own.n_cells[0] == 3 and own.n_unsafe_cells[0] == 1 and own.n_unsafe_records[0] == 1
    assert own.unsafe_categories["a"] == {1: (0,), 2: (0,)}  # the NA cell is not a category
    exc = sdckit.threshold_rule(data, ["a", "b", "c"], max_dimension=1)
    assert exc.n_cells[0] == 2 and exc.n_unsafe_cells[0] == 0
    assert own.to_dict()["na_rule"] == "own_category"


def test_missing_codes_and_scenario():
    data = HAND.with_columns(pl.when(pl.arange(0, 6) == 5).then(-9).otherwise(pl.col("a")).alias("a"))
    r = sdckit.threshold_rule(data, ["a", "b", "c"], max_dimension=1, missing=-9)
    # a=-9 is missing: record 6 is in no cell of a; a: 1->3, 2->2: no unsafe cell
    assert r.n_unsafe_cells == (0, 0, 0)
    assert r.n_cells == (2, 2, 2)
    sc = sdckit.Scenario(keys=["a", "b", "c"])
    assert sdckit.threshold_rule(HAND, scenario=sc, max_dimension=2).to_dict() == (
        sdckit.threshold_rule(HAND, ["a", "b", "c"], max_dimension=2).to_dict()
    )


def test_result_is_aggregates_only_and_frozen():
    r = sdckit.threshold_rule(HAND, ["a", "b", "c"], max_dimension=2)
    d = r.to_dict()
    assert d["measure"] == "threshold_rule"
    assert d["by_dimension"]["2"]["unsafe_records"] == 4
    assert set(d) == {"measure", "n", "keys", "na_rule", "n_unsafe", "share_unsafe", "combinations", "by_dimension"}
    assert r.to_dict(include_levels=True)["unsafe_categories"]["a"]["3"] == [1, 2]
    assert "threshold rule" in str(r.summary())
    with pytest.raises(ValueError):
        r.n_unsafe_combinations[0] = 5
    frame = r.to_frame()
    assert frame.columns == ["unsafe", "n_unsafe_combinations", "min_unsafe_dimension"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"combinations": [["a"]], "max_dimension": 1}, "combinations: given together with max_dimension"),
        ({"combinations": [["a", "z"]]}, r"combinations\[0\]: z not among the keys"),
        ({"combinations": [["a", "b"], ["b", "a"]]}, r"combinations\[1\]: the same variables"),
        ({"combinations": [["a", "a"]]}, r"combinations\[0\]: column\(s\) a listed more than once"),
        ({"max_dimension": 4}, "max_dimension: got 4; expected an integer"),
        ({"max_dimension": 0}, "max_dimension: got 0"),
        (
            {"max_dimension": 2, "frequency_threshold": [1, 2, 3]},
            "frequency_threshold: got 3 values; expected one, or 2",
        ),
        ({"frequency_threshold": 0}, "frequency_threshold: got 0; expected an integer >= 1"),
        ({"na_rule": "sdcmicro"}, "na_rule: got 'sdcmicro'"),
        ({"frequency_threshold": 1.5}, "frequency_threshold: got 1.5"),
        ({"combinations": [["a"], ["b"]], "frequency_threshold": [1, "2"]}, r"frequency_threshold: got '2'"),
    ],
)
def test_bad_inputs_are_named(kwargs, message):
    with pytest.raises(sdckit.SdcError, match=message):
        sdckit.threshold_rule(HAND, ["a", "b", "c"], **kwargs)


def test_input_is_not_mutated():
    before = HAND.clone()
    sdckit.threshold_rule(HAND, ["a", "b", "c"], max_dimension=3)
    assert HAND.equals(before)


@pytest.mark.shared_data
def test_muargus_demo_file_against_the_oracle():
    data = pl.read_csv(shared_file("muargus-demo", "data", "Demofree_with_header.csv"))
    keys = ["REGION", "SEX", "AGE", "MARSTAT", "KINDPERS"]
    r = sdckit.threshold_rule(data, keys, max_dimension=3, frequency_threshold=[1, 2, 3])
    combos = [c for s in range(1, 4) for c in itertools.combinations(range(5), s)]
    per_record, unsafe_records, unsafe_cells = _oracle(data.select(keys).rows(), combos, [len(c) for c in combos])
    assert list(r.n_unsafe_records) == unsafe_records
    assert list(r.n_unsafe_cells) == unsafe_cells
    assert r.n_unsafe_combinations.tolist() == per_record
    assert r.n == 4000 and r.n_unsafe > 0
