"""Microaggregation of mixed variables with Gower's distance (sdcMicro's microaggrGower): sdcMicro's
outputs on its testdata (reference/sdcmicro/microaggrGower.json), hand-worked examples, the
nearest neighbours against a brute-force oracle, and bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA, reference_cases
from sdckit import SdcError, microaggregation_gower
from sdckit._core.gower import nearest, neighbour_category

# ----------------------------------------------------------------------------------------------
# sdcMicro's outputs (microaggrGower with VIM 6.2.2 under R 4.2.2, testdata rows 1:200; the R
# calls are in the JSON file). The neighbour sets have no ties at the k-th neighbour, so they
# must be the same; the aggregates then agree to the rounding of a mean of k doubles (R's mean
# accumulates in long double: 1 ulp, 2e-16 relative): 1e-12 relative is that with room.
# ----------------------------------------------------------------------------------------------
GOWER_CASES = {c["id"]: c for c in reference_cases("microaggrGower.json")}
_FACTORS = ("urbrur", "roof", "walls", "water", "electcon", "relat", "sex", "hhcivil")
# the example's R types: factors nominal (as.factor), the integer and double columns numerical
_SCALES = {**dict.fromkeys(_FACTORS, "nominal"), **dict.fromkeys(("age", "expend", "income", "savings"), "continuous")}


def _testdata200() -> pd.DataFrame:
    return pd.read_csv(DATA / "sdcmicro" / "testdata.csv").iloc[:200].reset_index(drop=True)


def _assert_matches(res, case, names):
    for v in names:
        want = np.asarray(case["outputs"][v], dtype=float)
        np.testing.assert_allclose(res.data[v].to_numpy(dtype=float), want, rtol=1e-12, atol=0, err_msg=v)


def test_sdcmicro_documented_example():
    """The call of microaggrGower's example (strata urbrur x roof, k = 3): age and expend, the
    means over the 3 nearest records, per record. relat is drawn by sampleCat in R (random), so
    only its draws' support is checked here (the mode is compared in the next test)."""
    case = GOWER_CASES["microaggrGower_example_by_urbrur_roof"]
    p = case["parameters"]
    d = _testdata200()
    res = microaggregation_gower(
        d, p["variables"], distance_variables=p["dist_var"], scales=_SCALES, strata=p["by"],
        group_size=p["aggr"], categorical_statistic="sample", seed=1,
    )  # fmt: skip
    _assert_matches(res, case, ["age", "expend"])
    # a drawn category is one of the record's stratum's categories
    for _, g in res.data.groupby(["urbrur", "roof"]):
        assert set(g["relat"]) <= set(d.loc[g.index, "relat"])


def test_sdcmicro_example_with_maxcat_and_category_shares():
    """The example with catFun = maxCat and 0/1 indicators of relat aggregated too: the shares of
    each category among the 3 neighbours agree (same neighbour sets), and where the largest share
    is unique (maxCat is deterministic there) the mode is sdcMicro's category."""
    case = GOWER_CASES["microaggrGower_example_maxCat_shares"]
    p = case["parameters"]
    d = _testdata200()
    ind = [v for v in p["variables"] if v.startswith("relat_")]
    d = d.assign(**{v: (d["relat"] == int(v.split("_")[1])).astype(float) for v in ind})
    res = microaggregation_gower(
        d, p["variables"], distance_variables=p["dist_var"], scales=_SCALES, strata=p["by"],
        group_size=p["aggr"], categorical_statistic="mode", seed=1,
    )  # fmt: skip
    _assert_matches(res, case, ["age", "expend", *ind])
    shares = np.column_stack([case["outputs"][v] for v in ind])
    unique = (shares == shares.max(axis=1, keepdims=True)).sum(axis=1) == 1
    assert unique.sum() > 150  # most records have a clear mode (194 of 200)
    got = res.data["relat"].astype(str).to_numpy()
    want = np.asarray(case["outputs"]["relat"])
    np.testing.assert_array_equal(got[unique], want[unique])


def test_sdcmicro_weights_and_ordinal_without_strata():
    """Weights (3, 1, 1, 2) on sex, relat (ordered, 7 levels), age, income; no strata."""
    case = GOWER_CASES["microaggrGower_weights_ordinal_no_by"]
    p = case["parameters"]
    res = microaggregation_gower(
        _testdata200(), p["variables"], distance_variables=p["dist_var"],
        scales={**_SCALES, "relat": [1, 2, 3, 4, 5, 6, 7]}, variable_weights=p["weights"], group_size=p["aggr"],
    )  # fmt: skip
    assert res.details["scales"]["relat"] == "ordinal"
    _assert_matches(res, case, p["variables"])


def test_sdcmicro_five_neighbours_and_median():
    """aggr = 5 with numFun = median (sdcMicro's maGowerWORK: microaggrGower on a data frame does
    not pass aggr on)."""
    case = GOWER_CASES["maGowerWORK_aggr5_median"]
    p = case["parameters"]
    res = microaggregation_gower(
        _testdata200(), p["variables"], distance_variables=p["dist_var"], scales=_SCALES, strata=p["by"],
        group_size=p["aggr"], statistic="median",
    )  # fmt: skip
    _assert_matches(res, case, p["variables"])


def test_sdcmicro_numeric_only():
    case = GOWER_CASES["microaggrGower_numeric_only"]
    p = case["parameters"]
    res = microaggregation_gower(
        _testdata200(), p["variables"], distance_variables=p["dist_var"], scales=_SCALES, group_size=p["aggr"]
    )
    _assert_matches(res, case, p["variables"])


def _people() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "sex": ["m", "m", "f", "f", "f", "m"],
            "age": [20.0, 22.0, 50.0, 52.0, 51.0, 80.0],
            "inc": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "edu": ["lo", "hi", "mid", "mid", "hi", "lo"],
        }
    )


def test_hand_worked_neighbours_and_means():
    # distance over sex (nominal) and age (range 80 - 20 = 60), weights 1: d = ([sex differs] + |age diff| / 60) / 2
    # record 0 (m, 20): itself, then 1 (m, 22): d = (2/60)/2 -> inc (1 + 2)/2 = 1.5
    # record 1: itself and 0 -> 1.5
    # record 2 (f, 50): itself and 4 (f, 51, d = 1/120) -> (3 + 5)/2 = 4
    # record 3 (f, 52): 4 (d = 1/120) before 2 (d = 2/120) -> (4 + 5)/2 = 4.5
    # record 4 (f, 51): 2 and 3 both at 1/120: the first in row order, 2 -> (5 + 3)/2 = 4
    # record 5 (m, 80): 1 (d = (58/60)/2) before 0 (d = 1/2) and the women (> 0.7) -> (6 + 2)/2 = 4
    res = microaggregation_gower(_people(), "inc", distance_variables=["sex", "age"], group_size=2, seed=1)
    assert res.data["inc"].to_list() == [1.5, 1.5, 4.0, 4.5, 4.0, 4.0]
    assert res.n_changed == {"inc": 6}
    # mean distance to the other neighbour: (1/60 + 1/60 + 1/120 + 1/120 + 1/120 + 58/120) / 6
    want = (2 / 60 / 2 * 2 + 3 / 120 + 58 / 120) / 6
    assert res.details["mean_neighbour_distance"] == pytest.approx(want)
    # SSE = 0.25 + 0.25 + 1 + 0.25 + 1 + 4 = 6.75; SST = sum (x - 3.5)^2 = 17.5
    assert res.details["sse_sst"]["inc"] == pytest.approx(6.75 / 17.5)


def test_hand_worked_categories_mode_and_ordinal_distance():
    # edu ordinal lo < mid < hi (L = 3): ranks 0, 2, 1, 1, 2, 0 -> scaled 0, 1, .5, .5, 1, 0
    # distance on edu alone, k = 3 (itself first, ties by row order):
    # record 0 (lo): 5 (lo, 0), then 2 and 3 (0.5) -> 0, 5, 2 -> inc mean (1 + 6 + 3)/3
    # record 2 (mid): 3 (0), then 0, 1, 4, 5 all at 0.5 -> 2, 3, 0 -> (3 + 4 + 1)/3
    # sex by mode over the same neighbours: record 0 -> (m, m, f) = m; record 2 -> (f, f, m) = f
    res = microaggregation_gower(
        _people(), ["inc", "sex"], distance_variables="edu", scales={"edu": ["lo", "mid", "hi"]}, group_size=3, seed=0
    )
    inc = res.data["inc"].to_list()
    assert inc[0] == pytest.approx(10 / 3) and inc[2] == pytest.approx(8 / 3)
    assert res.data["sex"].to_list()[0] == "m" and res.data["sex"].to_list()[2] == "f"
    assert res.details["scales"] == {"inc": "continuous", "sex": "nominal", "edu": "ordinal"}


def _gower_oracle(S, C, ws, wc):
    """Gower distances by loops (missing vs observed 1, both missing 0)."""
    n = S.shape[0] if S.size else C.shape[0]
    D = np.zeros((n, n))
    for i, j in itertools.product(range(n), range(n)):
        t = 0.0
        for v in range(S.shape[1]):
            a, b = S[i, v], S[j, v]
            t += ws[v] * (0.0 if np.isnan(a) and np.isnan(b) else 1.0 if np.isnan(a) or np.isnan(b) else abs(a - b))
        for v in range(C.shape[1]):
            t += wc[v] * (C[i, v] != C[j, v])
        D[i, j] = t / (ws.sum() + wc.sum())
    return D


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 5), st.integers(4, 25))
def test_nearest_against_a_brute_force_oracle(seed, k, n):
    rng = np.random.default_rng(seed)
    S = rng.integers(0, 4, size=(n, 2)) / 3.0  # coarse values: many ties
    S[rng.random((n, 2)) < 0.15] = np.nan
    C = rng.integers(-1, 3, size=(n, 1))
    ws, wc = np.array([1.0, 2.0]), np.array([0.5])
    k = min(k, n)
    D = _gower_oracle(S, C, ws, wc)
    want = np.array([sorted(range(n), key=lambda j: (round(D[i, j], 12), j))[:k] for i in range(n)])
    got, dist = nearest(S, ws, C, wc, k)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(dist, np.take_along_axis(D, want, axis=1), atol=1e-11)


def test_sample_rule_by_simulation():
    # neighbours (a, a, b) for every record: "sample" draws a with probability 2/3
    codes = np.array([0, 0, 1] * 1000)
    nb = np.tile(np.array([0, 1, 2]), (3000, 1))
    got = neighbour_category(codes, nb, 2, "sample", np.random.default_rng(3))
    assert abs((got == 0).mean() - 2 / 3) < 4 * np.sqrt(2 / 9 / 3000)
    mode = neighbour_category(codes, nb, 2, "mode", np.random.default_rng(3))
    assert (mode == 0).all()
    # ties (a, b): the mode is drawn at random, about half each
    nb2 = np.tile(np.array([0, 2]), (3000, 1))
    tie = neighbour_category(codes, nb2, 2, "mode", np.random.default_rng(4))
    assert abs((tie == 0).mean() - 0.5) < 4 * np.sqrt(0.25 / 3000)


def test_group_size_one_changes_nothing():
    d = _people()
    res = microaggregation_gower(d, ["inc", "edu"], distance_variables=["sex", "age"], group_size=1, seed=1)
    assert res.data.equals(d) and res.n_changed == {"inc": 0, "edu": 0}


def test_strata_and_missing_values():
    # strata by sex: record 5 (m, 80) now takes its neighbour among the men: 1 (22) -> (6 + 2)/2;
    # record 1's income is missing: it stays missing and does not enter the means;
    # edu of record 3 is the missing code -9: it stays -9
    d = _people().with_columns(
        pl.Series("inc", [1.0, None, 3.0, 4.0, 5.0, 6.0]), pl.Series("code", [1, 2, 3, -9, 3, 1])
    )
    res = microaggregation_gower(
        d, ["inc", "code"], distance_variables="age", scales={"code": "nominal"}, strata="sex",
        group_size=2, missing=-9, seed=2,
    )  # fmt: skip
    inc = res.data["inc"].to_list()
    assert inc[1] is None
    assert inc[0] == 1.0  # neighbours 0 and 1: only its own value is observed
    assert inc[5] == 6.0  # neighbours 5 and 1 (22): 1 is missing
    assert res.data["code"].to_list()[3] == -9


@pytest.mark.parametrize("rule", ["mode", "sample"])
def test_rows_columns_identity_and_seed(rule):
    rng = np.random.default_rng(5)
    n = 80
    idx = pd.Index([f"r{i}" for i in range(n)])
    d = pd.DataFrame(
        {
            "region": rng.choice(["n", "s", "e"], n),
            "age": rng.uniform(18, 90, n),
            "income": rng.lognormal(10, 1, n),
            "job": rng.choice(["a", "b", "c", "d"], n),
            "id": np.arange(n),
        },
        index=idx,
    )
    before = d.copy()
    res = microaggregation_gower(
        d, ["income", "job"], distance_variables=["region", "age", "income"], categorical_statistic=rule, seed=9
    )
    pd.testing.assert_frame_equal(d, before)
    out = res.data
    assert list(out.columns) == list(d.columns) and out.index.equals(d.index)
    assert out["id"].equals(d["id"]) and out["region"].equals(d["region"])
    assert set(out["job"]) <= set(d["job"])
    assert out["income"].between(d["income"].min(), d["income"].max()).all()
    again = microaggregation_gower(
        d, ["income", "job"], distance_variables=["region", "age", "income"], categorical_statistic=rule, seed=9
    ).data
    pd.testing.assert_frame_equal(out, again)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6))
def test_row_order_does_not_matter_without_ties(seed):
    rng = np.random.default_rng(seed)
    n = 30
    d = pl.DataFrame({"x": rng.normal(size=n), "y": rng.normal(size=n), "g": rng.choice(["a", "b"], n)})
    res = microaggregation_gower(d, ["x", "y"], distance_variables=["x", "y", "g"], group_size=3, seed=1).data
    perm = rng.permutation(n)
    res_p = microaggregation_gower(d[perm], ["x", "y"], distance_variables=["x", "y", "g"], group_size=3, seed=1).data
    np.testing.assert_allclose(res_p["x"].to_numpy(), res["x"].to_numpy()[perm])


def test_bad_inputs():
    d = _people().with_columns(pl.Series("n", [1, 2, 3, 4, 5, 6]))
    with pytest.raises(SdcError, match="integer column"):
        microaggregation_gower(d, "n")
    with pytest.raises(SdcError, match="without an order"):
        microaggregation_gower(d, "edu", scales="ordinal")
    with pytest.raises(SdcError, match="outside its declared order"):
        microaggregation_gower(d, "edu", scales={"edu": ["lo", "mid"]})
    with pytest.raises(SdcError, match="expected one of nominal"):
        microaggregation_gower(d, "inc", scales={"inc": "interval"})
    with pytest.raises(SdcError, match="fewer than 3 records"):
        microaggregation_gower(d, "inc", strata="edu")
    with pytest.raises(SdcError, match="variable_weights"):
        microaggregation_gower(d, "inc", distance_variables=["age", "sex"], variable_weights=[1, -1])
    with pytest.raises(SdcError, match="categorical_statistic"):
        microaggregation_gower(d, "inc", categorical_statistic="median")
    with pytest.raises(sdckit.MissingColumnError):
        microaggregation_gower(d, "inc", distance_variables="nope")


def test_workflow_and_public_name():
    d = _people().to_pandas()
    problem = sdckit.SdcProblem(d, sdckit.Scenario(keys=["sex", "edu"], numeric_keys=["inc"]))
    problem.apply("microaggregation_gower", variables=["inc"], distance_variables=["sex", "age"], group_size=2, seed=1)
    assert problem.data["inc"].tolist() == [1.5, 1.5, 4.0, 4.5, 4.0, 4.0]
    assert sdckit.microaggregation_gower is microaggregation_gower


def test_scales_of_other_columns_are_allowed_but_not_unknown_names():
    d = _people()
    sc = {"sex": "nominal", "age": "continuous", "inc": "continuous", "edu": ["lo", "mid", "hi"]}
    res = microaggregation_gower(d, "inc", distance_variables="age", scales=sc, group_size=2)
    assert res.details["scales"] == {"inc": "continuous", "age": "continuous"}
    with pytest.raises(SdcError, match="not a column"):
        microaggregation_gower(d, "inc", distance_variables="age", scales={"agee": "continuous"})


@pytest.mark.shared_data
def test_eusilc_within_regions():
    from conftest import shared_file

    d = pl.read_csv(shared_file("laeken", "eusilc.csv"))
    sc = {"rb090": "nominal", "pl030": "nominal", "age": "continuous", "hsize": "continuous", "eqIncome": "continuous"}
    res = microaggregation_gower(
        d, ["eqIncome", "pl030"], distance_variables=["rb090", "age", "hsize", "eqIncome"], scales=sc,
        strata="db040", group_size=3, seed=1,
    )  # fmt: skip
    out = res.data
    assert out.columns == d.columns and out.height == d.height
    assert out.drop("eqIncome", "pl030").equals(d.drop("eqIncome", "pl030"))
    # a record's new income is a mean of incomes of its own region: within the region's range
    bounds = d.group_by("db040").agg(pl.col("eqIncome").min().alias("lo"), pl.col("eqIncome").max().alias("hi"))
    j = out.join(bounds, on="db040")
    assert ((j["eqIncome"] >= j["lo"] - 1e-9) & (j["eqIncome"] <= j["hi"] + 1e-9)).all()
    assert res.n_changed["eqIncome"] > 0.9 * d.height
    assert abs(out["eqIncome"].mean() / d["eqIncome"].mean() - 1) < 0.02
    assert set(out["pl030"].unique().to_list()) <= set(d["pl030"].unique().to_list())
