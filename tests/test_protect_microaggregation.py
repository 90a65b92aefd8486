"""Microaggregation (MDAV, Domingo-Ferrer & Mateo-Sanz 2002, with sdcMicro's rules; individual
ranking; single-axis, row-order, principal-component and robust-distance sorting): sdcMicro's
outputs cell by cell, hand-worked examples, the fast MDAV against the plain O(n^2) algorithm
(hypothesis, heavy ties and missing values included), group sizes and means, strata, missing
values, bad input, and the properties every protection method keeps."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, REFERENCE
from sdckit import SdcError
from sdckit._core import microaggregation as core
from sdckit.protect.microaggregation import microaggregation

PROTECTION = json.loads((REFERENCE / "protection.json").read_text())
CASES = {c["id"]: c for c in PROTECTION["cases"]}
PERTURBED = REFERENCE / "perturbed"


def _frame(X: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({f"v{j}": X[:, j] for j in range(X.shape[1])})


# ----------------------------------------------------------------------------------------------
# sdcMicro's outputs
# ----------------------------------------------------------------------------------------------
def test_spec_example_matches_sdcmicro():
    """protection.json ``microaggregation_mdav_spec_example_k3``: groups {3,7,8}, {4,5,6},
    {1,2,9,10} (1-based). By hand: a = (3+20+21)/3 = 14.6667, b = (6+9+8)/3 = 7.6667;
    a = (10+11+12)/3 = 11, b = (1+2+1)/3 = 1.3333; a = (1+2+30+31)/4 = 16, b = (5+4+3+2)/4 = 3.5."""
    case = CASES["microaggregation_mdav_spec_example_k3"]
    x = pd.DataFrame(case["parameters"]["input"])
    res = microaggregation(x, ["a", "b"], method="mdav", group_size=3)
    for v in ("a", "b"):
        np.testing.assert_allclose(res.data[v], case["outputs"]["mx"][v], rtol=1e-12)
    np.testing.assert_array_equal(res.details["group_ids_rows"], np.array(case["outputs"]["group_ids_derived"]) - 1)
    assert res.details["group_sizes"] == {3: 2, 4: 1}
    assert res.details["n_groups"] == 3
    assert res.n_changed == {"a": 9, "b": 10}  # record 5 keeps a = 11 (its group's mean)


def test_casc_matches_sdcmicro_cell_by_cell():
    """protection.json ``microaggregation_mdav_CASCrefmicrodata_k3``: all 13 columns, 1080
    integer-valued records (ties in the distances), 360 groups of 3."""
    case = CASES["microaggregation_mdav_CASCrefmicrodata_k3"]
    data = pd.read_csv(DATA / "sdcmicro" / "CASCrefmicrodata.csv")
    ref = pd.read_csv(REFERENCE / case["outputs"]["microaggregated_csv"])
    res = microaggregation(data, case["parameters"]["variables"], method="mdav", group_size=3)
    np.testing.assert_allclose(res.data.to_numpy(float), ref.to_numpy(float), rtol=1e-9, atol=0)
    derived = np.array(case["outputs"]["group_ids_derived"]) - 1  # numbered by first record, as ours
    np.testing.assert_array_equal(res.details["group_ids_rows"], derived)
    assert res.details["group_sizes"] == {3: 360}
    for v, m in case["outputs"]["colmeans_output"].items():
        assert math.isclose(float(res.data[v].mean()), m, rel_tol=1e-12)


def test_plain_algorithm_matches_sdcmicro_too():
    """The oracle itself reproduces both sdcMicro cases (so the property tests below compare
    with a reference that is right)."""
    casc = CASES["microaggregation_mdav_CASCrefmicrodata_k3"]
    X = pd.read_csv(DATA / "sdcmicro" / "CASCrefmicrodata.csv").to_numpy(float)
    np.testing.assert_array_equal(core.mdav_groups_plain(X, 3), np.array(casc["outputs"]["group_ids_derived"]) - 1)
    spec = CASES["microaggregation_mdav_spec_example_k3"]
    X = pd.DataFrame(spec["parameters"]["input"]).to_numpy(float)
    np.testing.assert_array_equal(core.mdav_groups_plain(X, 3), np.array(spec["outputs"]["group_ids_derived"]) - 1)


def test_onedims_matches_sdcmicro_free1():
    """numeric_risk_utility.json ``free1_onedims``: free1 columns 31:34, individual ranking,
    aggr = 3 (4000 records: the last group of each variable has 4)."""
    x = pd.read_csv(PERTURBED / "free1_x_orig.csv")
    ref = pd.read_csv(PERTURBED / "free1_microagg_onedims_k3.csv")
    res = microaggregation(x, list(x.columns), method="onedims", group_size=3)
    np.testing.assert_allclose(res.data.to_numpy(float), ref.to_numpy(float), rtol=1e-9, atol=0)
    assert res.details["group_sizes"] == {v: {3: 1332, 4: 1} for v in x.columns}
    assert "group_ids_by_variable_rows" in res.details and "group_ids_rows" not in res.details


# ----------------------------------------------------------------------------------------------
# MDAV's rules, worked by hand
# ----------------------------------------------------------------------------------------------
def test_nearest_ties_take_the_later_record_first():
    """x = (12, 10, 10, 0, 1, 2), k = 2. Centroid 35/6 = 5.83: r = record 0 (12; 6.17 away),
    s = record 3 (0; farthest from 12). The nearest to r: records 1 and 2 (both 10) at equal
    distance: sdcMicro's hash sort puts the later record first, so G_r = {0, 2}; then G_s = {3, 4}
    (0 and 1) and the last group {1, 5}. Means: 11, 0.5, (10 + 2)/2 = 6."""
    X = np.array([[12.0, 10, 10, 0, 1, 2]]).T
    expected = [11.0, 6.0, 11.0, 0.5, 0.5, 6.0]
    for groups in (core.mdav_groups(X, 2), core.mdav_groups_plain(X, 2)):
        np.testing.assert_array_equal(groups, [0, 1, 0, 2, 2, 1])
    res = microaggregation({"x": X[:, 0]}, "x", group_size=2)
    np.testing.assert_allclose(res.data[:, 0], expected)


def test_farthest_ties_take_the_first_record():
    """x = (0, 10, 4, 5, 5, 6, 6.5, 3.5), k = 2, centroid exactly 5: records 0 and 1 tie as the
    farthest; the first (0) is r, G_r = {0, 7} (3.5 nearest), s = record 1 (10), G_s = {1, 6}.
    Left (4, 5, 5, 6): 4 = 2k records, one group around the farthest from their centroid 5:
    records 2 (4) and 5 (6) tie, record 2 goes first; its nearest, records 3 and 4 (both 5),
    tie: the later one (4) joins it; the last group is {3, 5}. Means 1.75, 8.25, 4.5, 5.5."""
    X = np.array([[0.0, 10, 4, 5, 5, 6, 6.5, 3.5]]).T
    for groups in (core.mdav_groups(X, 2), core.mdav_groups_plain(X, 2)):
        np.testing.assert_array_equal(groups, [0, 1, 2, 3, 2, 3, 1, 0])
    out = core.group_statistic(X, core.mdav_groups(X, 2))[:, 0]
    np.testing.assert_allclose(out, [1.75, 8.25, 4.5, 5.5, 4.5, 5.5, 8.25, 1.75])


def test_fewer_than_2k_records_form_one_group():
    X = np.array([[1.0, 2.0, 9.0, 4.0, 5.0]]).T  # n = 5 < 2k = 6
    np.testing.assert_array_equal(core.mdav_groups(X, 3), [0, 0, 0, 0, 0])
    res = microaggregation({"x": X[:, 0]}, ["x"], group_size=3)
    np.testing.assert_allclose(res.data[:, 0], 21.0 / 5)


def test_distances_are_single_precision_sums_in_variable_order():
    """Each term fl32((x_j - q_j)^2 w_j) added in single precision, variable by variable, as
    sdcMicro's ``Dist`` (float accumulator); a value missing on one side adds md_j."""
    rng = np.random.default_rng(4)
    Y = rng.normal(size=(3, 50)) * [[1.0], [1e3], [1e-3]]
    Y[1, 7] = np.nan
    q = np.array([0.1, np.nan, 2.0])
    w = np.array([1.0, 1e-6, 1e6])
    md = np.array([0.5, 0.25, 2.0], dtype=np.float32)
    got = core.distances32(Y, q, w, md)
    for i in range(Y.shape[1]):
        acc = np.float32(0.0)
        for j in range(3):
            miss = math.isnan(Y[j, i]), math.isnan(q[j])
            if miss[0] != miss[1]:
                acc = np.float32(acc + md[j])
            elif not miss[0]:
                acc = np.float32(acc + np.float32((Y[j, i] - q[j]) ** 2 * w[j]))
        assert got[i] == acc


def test_exact_sums_give_the_correctly_rounded_centroid():
    """The incremental centroid equals math.fsum(values) / count after any removals, also for
    values of very different magnitudes (where a running float sum would drift)."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3)) * np.array([1e-200, 1.0, 1e200]) + np.array([0.0, 1e16, 0.0])
    X[rng.random(X.shape) < 0.1] = np.nan
    sums = core._ExactSums(X)
    left = np.arange(300)
    for _ in range(10):
        gone = rng.choice(left, 20, replace=False)
        sums.remove(gone)
        left = np.setdiff1d(left, gone)
        np.testing.assert_array_equal(sums.centroid(), core._fsum_centroid(X[left]))


# ----------------------------------------------------------------------------------------------
# the fast MDAV against the plain algorithm (hypothesis)
# ----------------------------------------------------------------------------------------------
@st.composite
def _datasets(draw):
    n = draw(st.integers(1, 90))
    p = draw(st.integers(1, 4))
    k = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["ties", "normal", "mixed"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "ties":
        X = rng.integers(0, 4, size=(n, p)).astype(float)  # heavy ties
    elif kind == "normal":
        X = rng.normal(size=(n, p))
    else:
        X = np.round(rng.normal(size=(n, p)), 1) * rng.choice([1.0, 100.0], size=p)
    if draw(st.booleans()):
        X[rng.random((n, p)) < draw(st.sampled_from([0.05, 0.3]))] = np.nan
    return X, max(1, min(k, n))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_datasets(), st.integers(1, 20))
def test_fast_mdav_forms_the_plain_algorithms_groups(data, neighbours):
    """Any length of the neighbour lists (short ones force the tree and ball fallbacks)."""
    X, k = data
    np.testing.assert_array_equal(core.mdav_groups(X, k, neighbours=neighbours), core.mdav_groups_plain(X, k))


def test_embedding_distance_never_exceeds_the_mdav_distance():
    """E(x, y) <= T(x, y), with equality for complete records: what lets the k-d tree of
    :class:`_Nearest` bound the MDAV distances from below."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(200, 4)) * [1.0, 10.0, 0.1, 3.0]
    X[rng.random(X.shape) < 0.2] = np.nan
    X[:20] = np.where(np.isnan(X[:20]), 0.0, X[:20])  # some complete records
    w, md = core.mdav_weights(X)
    margin = core._Margin(X, w, md, True)
    Z = core._embedding(X, w, margin.md64)
    for i in range(0, 200, 7):
        T = margin.d64(np.arange(200), X[i])
        E = ((Z - Z[i]) ** 2).sum(axis=1)
        assert (E <= T * (1 + 1e-12) + 1e-300).all()
        complete = ~np.isnan(X).any(axis=1)
        if complete[i]:
            np.testing.assert_allclose(E[complete], T[complete], rtol=1e-12, atol=1e-12)
        assert (E >= 0.7 * T - 1e-12).all()


@settings(max_examples=60, deadline=None)
@given(_datasets())
def test_mdav_group_sizes(data):
    """Every group has k records except the last one formed (k to 2k - 1); with fewer than 2k
    records there is one group."""
    X, k = data
    sizes = np.bincount(core.mdav_groups(X, k))
    n = X.shape[0]
    if n < 2 * k:
        assert sizes.tolist() == [n]
    else:
        assert (sizes >= k).all() and (sizes <= 2 * k - 1).all()
        assert int((sizes != k).sum()) <= 1
        assert sizes.sum() == n


def test_fast_mdav_on_larger_data_with_ties_and_missing_values():
    """Sizes where the neighbour lists, the tree and ball fallbacks and the radii resets all
    occur; the third case has about 280 copies of each of its 9 distinct records (ties
    everywhere), the fourth missing values."""
    rng = np.random.default_rng(11)
    cases = [
        rng.normal(size=(2500, 3)),
        rng.integers(0, 6, size=(2500, 3)).astype(float),
        rng.integers(0, 3, size=(2500, 2)).astype(float),
        np.where(rng.random((1500, 4)) < 0.1, np.nan, rng.normal(size=(1500, 4))),
    ]
    for X in cases:
        np.testing.assert_array_equal(core.mdav_groups(X, 3, neighbours=4), core.mdav_groups_plain(X, 3))


@settings(max_examples=40, deadline=None)
@given(_datasets())
def test_group_means_keep_the_column_means(data):
    """Each group's values are replaced by their mean, so column sums (and means) are kept."""
    X, k = data
    X = np.where(np.isnan(X), 0.5, X)
    res = microaggregation(_frame(X), [f"v{j}" for j in range(X.shape[1])], group_size=k)
    np.testing.assert_allclose(res.data.to_numpy(float).mean(axis=0), X.mean(axis=0), rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# the blocked variant
# ----------------------------------------------------------------------------------------------
def test_blocked_is_mdav_inside_each_block():
    """Groups of ``mdav_groups_blocked`` = the plain algorithm run on each block of the k-d
    partition with the weights of the whole file (integer data: the block centroids are exact
    in both)."""
    rng = np.random.default_rng(3)
    for X in (rng.integers(0, 50, size=(700, 3)).astype(float), rng.normal(size=(700, 2))):
        w, md = core.mdav_weights(X)
        got = core.mdav_groups_blocked(X, 3, block=64)
        perm, starts = core.kd_segments(core._standardised_for_partition(X, w), 64)
        expected = np.full(X.shape[0], -1)
        g = 0
        for a, b in zip(starts, np.append(starts[1:], X.shape[0])):
            rows = np.sort(perm[a:b])
            inner = core.mdav_groups_plain(X[rows], 3, metric=(w, md))
            expected[rows] = inner + g
            g += inner.max() + 1
        np.testing.assert_array_equal(got, core.canonical_groups(expected))
        sizes = np.bincount(got)
        assert sizes.min() >= 3 and sizes.max() <= 5


def test_blocked_with_one_block_is_mdav():
    X = np.random.default_rng(8).integers(0, 9, size=(200, 3)).astype(float)
    np.testing.assert_array_equal(core.mdav_groups_blocked(X, 3, block=256), core.mdav_groups(X, 3))
    res = microaggregation(_frame(X), ["v0", "v1", "v2"], method="mdav_blocked")
    assert res.details["method"] == "mdav_blocked" and min(res.details["group_sizes"]) >= 3


# ----------------------------------------------------------------------------------------------
# the sort-based methods and the statistic
# ----------------------------------------------------------------------------------------------
def test_simple_groups_in_row_order_remainder_joins_the_last_group():
    """x = 1..7, k = 3: groups {1,2,3} and {4,5,6,7} (sdcMicro's indexMicro): means 2 and 5.5."""
    res = microaggregation({"x": np.arange(1.0, 8.0)}, "x", method="simple", group_size=3)
    np.testing.assert_allclose(res.data[:, 0], [2, 2, 2, 5.5, 5.5, 5.5, 5.5])
    assert res.details["group_sizes"] == {3: 1, 4: 1}


def test_single_sorts_on_sort_by():
    """Sorted on s = (3, 1, 2, 6, 5, 4): order records 1, 2, 0, 5, 4, 3; groups {1, 2, 0} and
    {5, 4, 3}: x means (20 + 30 + 10)/3 = 20 and (60 + 50 + 40)/3 = 50."""
    data = pd.DataFrame({"x": [10.0, 20, 30, 40, 50, 60], "s": [3, 1, 2, 6, 5, 4]})
    res = microaggregation(data, "x", method="single", sort_by="s", group_size=3)
    np.testing.assert_allclose(res.data["x"], [20, 20, 20, 50, 50, 50])
    assert res.parameters["sort_by"] == "s"
    np.testing.assert_array_equal(res.data["s"], data["s"])  # the sort column is not changed
    res = microaggregation(data, ["x", "s"], method="single", group_size=3)  # default: the first variable
    assert res.parameters["sort_by"] == "x"


def test_pca_sorts_on_the_first_component():
    """Two variables rising together: the first component orders the records as each does
    (loadings summing to a positive number: ascending), whatever the row order."""
    rng = np.random.default_rng(1)
    t = rng.permutation(12).astype(float)
    data = {"a": t, "b": 2 * t + 0.01 * rng.normal(size=12)}
    order = core.pca_order(np.column_stack([data["a"], data["b"]]))
    np.testing.assert_array_equal(order, np.argsort(t))
    res = microaggregation(data, ["a", "b"], method="pca", group_size=4)
    np.testing.assert_allclose(np.sort(res.data[:, 0]), np.repeat([1.5, 5.5, 9.5], 4))


def _rmd_literal(X: np.ndarray, k: int, md: np.ndarray) -> np.ndarray:
    """sdcMicro's micro_rmd, line by line: d = the full distance matrix, which.max(md),
    k times which.min(d[, s]) (first minimum), rows and md of the group set to NA."""
    n = X.shape[0]
    Y = core.standardised(X)
    d = np.sqrt(((Y[:, None, :] - Y[None, :, :]) ** 2).sum(axis=2))
    md = md.astype(float).copy()
    gid = np.full(n, -1)
    for g in range(n // k - 1):
        s = int(np.nanargmax(md))
        col = d[:, s].copy()
        for _ in range(k):
            i = int(np.nanargmin(col))
            gid[i] = g
            col[i] = np.nan
            d[i, :] = np.nan
            md[i] = np.nan
    gid[gid < 0] = max(n // k - 1, 0)
    return core.canonical_groups(gid)


def test_rmd_follows_sdcmicros_loop():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 3))
    X[:3] += 6  # outliers: the largest robust distances
    md = rng.gamma(2.0, size=40)
    np.testing.assert_array_equal(core.rmd_groups(X, 3, md), _rmd_literal(X, 3, md))
    res = microaggregation(_frame(X), ["v0", "v1", "v2"], method="rmd", group_size=3)
    assert res.details["group_sizes"] == {3: 12, 4: 1}


def test_median_statistic():
    """Groups {1, 2, 9} and {10, 11, 30, 31} (row order, k = 3): medians 2 and (11 + 30)/2."""
    res = microaggregation({"x": [1.0, 2, 9, 10, 11, 30, 31]}, "x", method="simple", statistic="median")
    np.testing.assert_allclose(res.data[:, 0], [2, 2, 2, 20.5, 20.5, 20.5, 20.5])


def test_onedims_ranks_each_variable_on_its_own():
    """a sorted: 1, 2, 3 | 7, 8, 9; b sorted: 10, 20, 30 | 40, 50, 60 on other records."""
    data = pd.DataFrame({"a": [9.0, 1, 8, 2, 7, 3], "b": [10.0, 20, 30, 40, 50, 60]})
    res = microaggregation(data, ["a", "b"], method="onedims")
    np.testing.assert_allclose(res.data["a"], [8, 2, 8, 2, 8, 2])
    np.testing.assert_allclose(res.data["b"], [20, 20, 20, 50, 50, 50])


# ----------------------------------------------------------------------------------------------
# missing values, strata
# ----------------------------------------------------------------------------------------------
def test_missing_values_stay_missing_and_stay_out_of_the_means():
    """Row order, k = 3: x groups {1, NaN, 3} -> 2 and {4, 5, -999 (a missing code)} -> 4.5;
    y groups {NaN, NaN, 6} -> 6 (unchanged) and {1, 2, 3} -> 2; missing values and the codes of
    ``missing`` are left as they are."""
    data = pd.DataFrame({"x": [1.0, np.nan, 3.0, 4.0, 5.0, -999.0], "y": [np.nan, np.nan, 6.0, 1.0, 2.0, 3.0]})
    res = microaggregation(data, ["x", "y"], method="simple", missing=-999)
    np.testing.assert_allclose(res.data["x"], [2.0, np.nan, 2.0, 4.5, 4.5, -999.0])
    np.testing.assert_allclose(res.data["y"], [np.nan, np.nan, 6.0, 2.0, 2.0, 2.0])
    assert res.n_changed == {"x": 4, "y": 2}
    assert res.parameters["missing"] == [-999]
    assert res.notes and "missing" in res.notes[0]


def test_mdav_with_missing_values_through_the_public_function():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 3))
    X[rng.random(X.shape) < 0.15] = np.nan
    res = microaggregation(_frame(X), ["v0", "v1", "v2"])
    out = res.data.to_numpy(float)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(X))
    np.testing.assert_array_equal(res.details["group_ids_rows"], core.mdav_groups_plain(X, 3))


def test_strata_form_groups_within_each_stratum():
    rng = np.random.default_rng(9)
    data = pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40), "s": rng.choice(["a", "b"], 40)})
    res = microaggregation(data, ["x", "y"], strata="s")
    gid = res.details["group_ids_rows"]
    for g in np.unique(gid):
        assert data["s"][gid == g].nunique() == 1
    for label in ("a", "b"):
        rows = (data["s"] == label).to_numpy()
        expected = core.mdav_groups_plain(data.loc[rows, ["x", "y"]].to_numpy(), 3)
        np.testing.assert_array_equal(core.canonical_groups(gid[rows]), expected)
    assert set(res.n_changed_by_stratum) == {"a", "b"}


def test_group_size_larger_than_a_stratum():
    data = pd.DataFrame({"x": np.arange(10.0), "s": ["a"] * 8 + ["b"] * 2})
    with pytest.raises(SdcError, match=r"group_size: 3 is larger than the number of records in 1 of 2 strata"):
        microaggregation(data, "x", strata="s")
    with pytest.raises(SdcError, match=r"group_size: 11 is larger than the number of records \(the smallest has 10\)"):
        microaggregation(data, "x", group_size=11)


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"variables": ["x", "t"]}, r"variables: t \(String\) not numeric"),
        ({"variables": "x", "method": "clustpca"}, r"method: got 'clustpca'; expected one of"),
        ({"variables": "x", "statistic": "trim"}, r"statistic: got 'trim'"),
        ({"variables": "x", "group_size": 0}, r"group_size: got 0; expected an integer >= 1"),
        ({"variables": "x", "sort_by": "y"}, r"sort_by: given with method 'mdav'"),
        ({"variables": "x", "method": "single", "sort_by": "t"}, r"sort_by: t \(String\) not numeric"),
        ({"variables": "x", "method": "single", "sort_by": "zz"}, r"sort_by"),
        ({"variables": "zz"}, r"variables"),
    ],
)
def test_bad_input(kwargs, message):
    data = pl.DataFrame({"x": [1.0, 2, 3, 4, 5, 6], "y": [1, 2, 3, 4, 5, 6], "t": list("abcdef")})
    with pytest.raises(SdcError, match=message):
        microaggregation(data, **kwargs)


def test_infinite_values_and_rmd_without_complete_records():
    with pytest.raises(SdcError, match=r"variables: x has infinite values"):
        microaggregation({"x": [1.0, np.inf, 3.0, 4.0]}, "x")
    X = np.random.default_rng(0).normal(size=(30, 2))
    X[4, 1] = np.nan
    with pytest.raises(SdcError, match=r"variables: 1 records with missing values; expected complete records"):
        microaggregation(_frame(X), ["v0", "v1"], method="rmd")
    with pytest.raises(SdcError, match=r"variables: v1 has 2 non-missing values"):
        microaggregation({"v1": [1.0, 2.0, np.nan, np.nan]}, "v1", method="onedims")


# ----------------------------------------------------------------------------------------------
# what every protection method keeps
# ----------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["mdav", "mdav_blocked", "onedims", "single", "simple", "pca"]))
def test_input_untouched_rows_and_columns_kept(seed, method):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 40))
    data = pd.DataFrame(
        {"x": rng.normal(size=n), "y": rng.integers(0, 5, n), "label": rng.choice(["u", "v"], n)},
        index=pd.Index(rng.permutation(n) + 100, name="id"),
    )
    before = data.copy()
    res = microaggregation(data, ["x", "y"], method=method)
    pd.testing.assert_frame_equal(data, before)
    assert list(res.data.columns) == list(data.columns)
    pd.testing.assert_index_equal(res.data.index, data.index)
    pd.testing.assert_series_equal(res.data["label"], data["label"])
    again = microaggregation(data, **res.parameters)  # replayable
    pd.testing.assert_frame_equal(again.data, res.data)


def test_result_log_is_aggregate_only():
    X = np.random.default_rng(3).normal(size=(30, 2))
    res = microaggregation(_frame(X), ["v0", "v1"])
    d = res.to_dict()
    json.dumps(d)
    assert "group_ids_rows" not in d["details"]
    assert set(d["details"]) == {
        "method",
        "group_size",
        "statistic",
        "n_groups",
        "group_sizes",
        "sse",
        "sst",
        "sse_sst",
    }
    sse, sst = d["details"]["sse"], d["details"]["sst"]
    assert sst == pytest.approx(60.0)  # standardised: SST = n per variable
    assert 0 < sse < sst and d["details"]["sse_sst"] == pytest.approx(sse / sst)


def test_backends_numpy_polars_pandas_agree():
    X = np.random.default_rng(4).normal(size=(20, 2))
    res_np = microaggregation(X, ["0", "1"])  # a NumPy array's columns are named "0", "1", ...
    assert isinstance(res_np.data, np.ndarray)
    res_pl = microaggregation(pl.DataFrame({"a": X[:, 0], "b": X[:, 1]}), ["a", "b"])
    assert isinstance(res_pl.data, pl.DataFrame)
    res_pd = microaggregation(pd.DataFrame({"a": X[:, 0], "b": X[:, 1]}), ["a", "b"])
    np.testing.assert_array_equal(res_pl.data.to_numpy(), res_pd.data.to_numpy())
    np.testing.assert_array_equal(res_np.data, res_pd.data.to_numpy())


def test_integer_columns_stay_integer_only_when_every_mean_is_whole():
    data = pl.DataFrame({"a": [1, 3, 5, 7, 9, 11], "b": [1, 2, 2, 4, 5, 5]})
    res = microaggregation(data, ["a", "b"], method="simple")
    assert res.data["a"].dtype.is_integer()  # means 3 and 9
    assert res.data["b"].dtype.is_float()  # means 5/3 and 14/3
