"""Local suppression to k-anonymity: sdcMicro's heuristic cell by cell, the greedy default, and
the invariants of both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA, reference_cases, shared_file
from sdckit._core.frequencies import record_frequencies
from sdckit._core.suppression import (
    _Patterns,
    _sdcmicro_reduction,
    default_importance,
    greedy_suppression,
    suppress_to_k,
)
from sdckit.protect import local_suppression

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def _case(file: str, case_id: str) -> dict:
    return next(c for c in reference_cases(file) if c["id"] == case_id)


def _new_suppressions(res, data: pl.DataFrame, keys) -> dict:
    """1-based rows newly missing, per key (the reference's ``suppressed_mask`` form)."""
    out = pl.from_pandas(res.data) if isinstance(res.data, pd.DataFrame) else res.data
    return {
        k: (np.flatnonzero(out[k].is_null().to_numpy() & data[k].is_not_null().to_numpy()) + 1).tolist() for k in keys
    }


# ---------------------------------------------------------------------------------------------
# sdcMicro reproduced cell by cell
# ---------------------------------------------------------------------------------------------
def test_francdat_help_example_cell_by_cell():
    case = _case("kAnon_localSuppression.json", "localSuppression_francdat_help")
    data = pl.read_csv(DATA / "sdcmicro" / "francdat.csv")
    keys = case["parameters"]["keyVars"]
    res = local_suppression(data, keys, k=case["parameters"]["k"], method="sdcmicro")
    for key in keys:
        assert res.data[key].to_list() == case["outputs"]["xAnon"][key]
    assert res.n_changed == case["outputs"]["supps_per_variable"]
    assert list(res.details["importance"].values()) == case["outputs"]["importance_used"]


@pytest.mark.parametrize(
    "case_id, file, importance",
    [
        ("kAnon_testdata_7keys_k3_importance_7to1", "testdata.csv", [7, 6, 5, 4, 3, 2, 1]),
        ("kAnon_free1_6keys_k3", "free1.csv", None),
    ],
)
def test_kanon_cases_cell_by_cell(case_id, file, importance):
    case = _case("protection.json", case_id)
    data = pl.read_csv(DATA / "sdcmicro" / file)
    keys = case["parameters"]["keyVars"]
    res = local_suppression(data, keys, k=case["parameters"]["k"], importance=importance, method="sdcmicro")
    assert _new_suppressions(res, data, keys) == {k: sorted(v) for k, v in case["outputs"]["suppressed_mask"].items()}
    assert res.n_changed == case["outputs"]["supps_per_variable"]
    assert res.details["n_suppressed"] == case["outputs"]["total_suppressions"]
    assert list(res.details["importance"].values()) == case["outputs"]["importance_used"]
    fk = sdckit.frequencies(res.data, keys).fk
    np.testing.assert_array_equal(fk, case["outputs"]["fk_after"])


@pytest.mark.shared_data
def test_eusilcp_whole_file_matches_sdcmicro_and_greedy_is_better():
    """sdcMicro kAnon(k = 3) on the 58,654 records of eusilcP: 10,429 new suppressions with these
    per-variable counts (protection.json, timings.kAnon_k3_eusilcP["58654"]); the children's
    empty ecoStat is missing, their empty citizenship a category, as sdcMicro read the file."""
    ref = {"region": 51, "hsize": 403, "age": 9950, "gender": 0, "ecoStat": 23, "citizenship": 2}
    keys = list(ref)
    data = pl.read_csv(shared_file("simpop", "eusilcP.csv"), infer_schema_length=100_000)
    data = data.select(keys).with_columns(pl.col("citizenship").fill_null(""))
    res = local_suppression(data, keys, k=3, method="sdcmicro")
    assert res.n_changed == ref
    greedy = local_suppression(data, keys, k=3)
    assert greedy.details["n_suppressed"] <= 0.8 * res.details["n_suppressed"]
    assert sdckit.frequencies(greedy.data, keys).fk.min() >= 3


# ---------------------------------------------------------------------------------------------
# the greedy default
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("file, keys", [("testdata.csv", TESTDATA_KEYS), ("free1.csv", None)])
def test_greedy_reaches_k_with_fewer_suppressions(file, keys):
    data = pl.read_csv(DATA / "sdcmicro" / file)
    keys = keys or ["REGION", "SEX", "AGE", "MARSTAT", "KINDPERS", "ETNI"]
    ref = local_suppression(data, keys, k=3, method="sdcmicro")
    res = local_suppression(data, keys, k=3)
    assert sdckit.frequencies(res.data, keys).fk.min() >= 3
    # measured: testdata 200 against 298, free1 1,145 against 4,068
    assert res.details["n_suppressed"] < 0.8 * ref.details["n_suppressed"]


def test_greedy_keeps_exact_frequencies_after_moves():
    """The incrementally updated f of the pattern table equals a recount from scratch."""
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 3, size=(300, 4)).astype(np.int32)
    codes[rng.random(codes.shape) < 0.1] = -1
    for alpha in (1.0, 0.5):
        pt = _Patterns(codes, alpha)
        for _ in range(40):
            live = np.flatnonzero(pt.cnt[: pt.size] > 0)
            a = int(rng.choice(live))
            target = pt.row(a)
            target[rng.integers(0, 4)] = -1
            b = pt.find_or_add(target)
            if b != a:
                pt.move(a, b, float(pt.cnt[a]))
                pt.rec[pt.rec == a] = b
        recs = pt.cols[:, pt.rec].T
        oracle = record_frequencies(np.ascontiguousarray(recs), None, alpha)[0]
        np.testing.assert_allclose(pt.f[pt.rec], oracle, rtol=0, atol=1e-9)


def test_default_importance_fewest_categories_first():
    codes = np.array([[0, 0, 0], [1, 1, 0], [2, 0, 1], [3, 1, 1]], dtype=np.int32)
    # categories 4, 2, 2: the two 2-category columns rank 1 and 2 in column order, the other 3
    assert default_importance(codes).tolist() == [3, 1, 2]


# ---------------------------------------------------------------------------------------------
# invariants (hypothesis)
# ---------------------------------------------------------------------------------------------
@st.composite
def _data(draw):
    n = draw(st.integers(4, 40))
    m = draw(st.integers(1, 4))
    cards = draw(st.lists(st.integers(1, 4), min_size=m, max_size=m))
    cols = {
        f"k{j}": draw(st.lists(st.one_of(st.none(), st.integers(0, c - 1)), min_size=n, max_size=n))
        for j, c in enumerate(cards)
    }
    cols["s"] = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    cols["y"] = list(range(n))
    return pl.DataFrame(cols, schema={**{f"k{j}": pl.Int64 for j in range(m)}, "s": pl.Int64, "y": pl.Int64})


def _fk(frame, keys, strata=None):
    return sdckit.frequencies(frame, keys, strata=strata, allow_degenerate_keys=True).fk


@SETTINGS
@given(data=_data(), k=st.integers(1, 4), method=st.sampled_from(["greedy", "sdcmicro"]), strata=st.booleans())
def test_output_is_k_anonymous_and_keeps_everything_else(data, k, method, strata):
    keys = [c for c in data.columns if c.startswith("k")]
    before = data.clone()
    k = min(k, data.height)
    res = local_suppression(data, keys, k=k, method=method, strata="s" if strata else None)
    assert data.equals(before)  # the input is untouched
    out = res.data
    assert out.columns == data.columns and out.height == data.height
    assert out.select("s", "y").equals(data.select("s", "y"))  # no non-key column changes
    st_ = ["s"] if strata else None
    fk_after = _fk(out, keys, st_)
    unresolved = np.zeros(data.height, dtype=bool)
    unresolved[res.details["unresolved_rows"]] = True
    assert np.all((fk_after >= k) | unresolved)
    if strata:  # only a stratum smaller than k can leave records below k
        sizes = data.group_by("s").len()
        small = set(sizes.filter(pl.col("len") < k)["s"].to_list())
        assert set(data["s"].to_numpy()[unresolved].tolist()) <= small
    elif method == "greedy":
        assert not unresolved.any()
    else:  # sdcMicro's speed-up searches only the first k records of each pattern and puts the
        # others back unchanged; each of those has k identical records in the search, which are
        # never below k, so it ends k-anonymous too
        assert not unresolved.any() and res.details["n_unresolved"] == 0
    # a suppression never lowers f_k, except through sdcMicro's frequency rule that a record
    # missing on every key does not count for complete records
    emptied = out.select(keys).select(pl.all_horizontal(pl.all().is_null())).to_series().to_numpy()
    complete = data.select(keys).select(pl.all_horizontal(pl.all().is_not_null())).to_series().to_numpy()
    if not (len(keys) > 1 and emptied.any()):
        assert np.all(fk_after >= _fk(data, keys, st_) - 1e-9)
    else:
        assert np.all((fk_after >= _fk(data, keys, st_) - 1e-9) | complete)
    for key in keys:  # only suppressions: a value is kept or made missing
        kept = out[key].is_not_null().to_numpy()
        assert out[key].to_numpy()[kept].tolist() == data[key].to_numpy()[kept].tolist()


@SETTINGS
@given(data=_data(), method=st.sampled_from(["greedy", "sdcmicro"]))
def test_combs_give_k_anonymity_on_every_subset(data, method):
    from itertools import combinations

    keys = [c for c in data.columns if c.startswith("k")]
    if len(keys) < 2:
        return
    res = local_suppression(data, keys, k=2, combs=[2], method=method)
    subsets = list(combinations(keys, 2))
    # sdcMicro sweeps the subsets once: a later subset's suppressions can break an earlier one
    # (a record made missing on both keys of a subset stops counting for its complete records);
    # the greedy default sweeps until every subset holds
    for sub in subsets if method == "greedy" else subsets[-1:]:
        assert _fk(res.data, list(sub)).min() >= 2


def test_relabelling_does_not_change_the_greedy_cells():
    data = pl.read_csv(DATA / "sdcmicro" / "testdata.csv").select(TESTDATA_KEYS)
    a = local_suppression(data, TESTDATA_KEYS, k=3)
    # a relabelling that reverses the order of the codes
    relabelled = data.with_columns([(100 - pl.col(k)).cast(pl.String).alias(k) for k in TESTDATA_KEYS])
    b = local_suppression(relabelled, TESTDATA_KEYS, k=3)
    assert a.n_changed == b.n_changed
    assert [a.data[k].is_null().to_list() for k in TESTDATA_KEYS] == [
        b.data[k].is_null().to_list() for k in TESTDATA_KEYS
    ]


def test_pandas_in_pandas_out_with_index():
    df = pd.read_csv(DATA / "sdcmicro" / "francdat.csv")
    df.index = [f"r{i}" for i in range(len(df))]
    copy = df.copy()
    res = local_suppression(df, ["Key2", "Key3", "Key4"], method="sdcmicro")
    assert isinstance(res.data, pd.DataFrame) and list(res.data.index) == list(df.index)
    assert list(res.data.columns) == list(df.columns)
    pd.testing.assert_frame_equal(df, copy)
    assert res.data["Key4"].isna().sum() == 3


def test_log_counts_per_category_and_stratum():
    df = pl.read_csv(DATA / "sdcmicro" / "testdata.csv")
    keys = TESTDATA_KEYS[1:]
    res = local_suppression(df, keys, k=3, strata="urbrur", method="sdcmicro")
    per_stratum = res.n_changed_by_stratum
    assert set(per_stratum) == {"1", "2"}  # urbrur's two categories
    for key in keys:
        assert sum(d[key] for d in per_stratum.values()) == res.n_changed[key]
        assert sum(res.n_changed_by_category[key].values()) == res.n_changed[key]
    assert res.to_dict()["n_changed"] == res.n_changed
    assert "unresolved_rows" not in res.to_dict()["details"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"k": 0}, "k: got 0"),
        ({"k": 10_000}, "k: got 10000"),
        ({"importance": [1, 1, 2]}, "importance: expected a permutation"),
        ({"importance": ["Key2", "Key3"]}, "importance"),
        ({"method": "optimal"}, "method"),
        ({"combs": [4]}, "combs"),
        ({"alpha": 2}, "alpha"),
    ],
)
def test_bad_input(kwargs, message):
    df = pl.read_csv(DATA / "sdcmicro" / "francdat.csv")
    with pytest.raises(sdckit.SdcError, match=message):
        local_suppression(df, ["Key2", "Key3", "Key4"], **kwargs)


def test_unknown_key_is_named():
    df = pl.read_csv(DATA / "sdcmicro" / "francdat.csv")
    with pytest.raises(sdckit.SdcError, match="nokey"):
        local_suppression(df, ["Key2", "nokey"])


def test_kernel_strata_smaller_than_k_are_reported():
    codes = np.array([[0], [0], [1], [1], [1]], dtype=np.int32)
    strata = np.array([0, 0, 1, 1, 1])
    out, bad = suppress_to_k(codes, 3, np.array([1]), strata=strata)
    # stratum 0 has 2 records < k = 3: both unresolved; stratum 1's three records share a value
    assert bad.tolist() == [True, True, False, False, False]
    out, bad = greedy_suppression(codes, 2, np.array([1]))
    assert not bad.any() and (out >= 0).all()


def test_pandas_categoricals_keep_their_kind():
    """An unordered pandas categorical comes back unordered, an ordered one ordered, with its
    categories in their order (the engine holds both as ordered Enums)."""
    df = pd.DataFrame(
        {
            "g": pd.Categorical(["a", "b", "a", "b"], ordered=False),
            "o": pd.Categorical(["x", "y", "x", "y"], categories=["y", "x"], ordered=True),
            "k": [1, 2, 1, 3],
        }
    )
    out = local_suppression(df, ["k"], k=2).data
    assert out["g"].cat.ordered is False and list(out["g"].cat.categories) == ["a", "b"]
    assert out["o"].cat.ordered is True and list(out["o"].cat.categories) == ["y", "x"]
    assert out["k"].isna().sum() == 1  # one missing value matches both uniques (2 and 3): f = 2 each


def test_sdcmicro_reduction_keeps_a_missing_value_as_a_category():
    """sdcMicro's speed-up searches the first k records of every key pattern. Its comment says
    that a missing value is first replaced by the column's first value, but its code evaluates
    that value on the missing rows only (``xKeys[is.na(v), v := unique(v)[1]]``), so a missing
    value stays missing and forms patterns of its own.

    Hand-worked, k = 2: rows 0, 2, 5 have (0, 0) and rows 1, 3, 4 have (NA, 0). The patterns are
    (0, 0) and (NA, 0); their first two rows are 0, 2 and 1, 3. Replacing NA by row 0's value
    would make one pattern of six rows and keep rows 0 and 1 only."""
    codes = np.array([[0, 0], [-1, 0], [0, 0], [-1, 0], [-1, 0], [0, 0]])
    assert _sdcmicro_reduction(codes, 2).tolist() == [0, 1, 2, 3]
    assert _sdcmicro_reduction(codes, 1).tolist() == [0, 1]
    assert _sdcmicro_reduction(codes, 3).tolist() == [0, 1, 2, 3, 4, 5]
