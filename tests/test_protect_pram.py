"""PRAM (post-randomisation with an invariant matrix; Gouweleeuw et al. 1998): the matrix
algebra on the worked example, invariance of the expected frequencies, reproducibility, missing
values, strata, user matrices, bad input, and the properties every protection method keeps."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA
from sdckit._core.pram import (
    apply_matrix,
    backward_matrix,
    base_matrix,
    blend,
    draw_base_matrix,
    invariant_matrix,
    invariant_of_base,
)
from sdckit.protect.pram import pram

TESTDATA = DATA / "sdcmicro" / "testdata.csv"


# ----------------------------------------------------------------------------------------------
# the kernels: the worked example (hand calculation below)
# ----------------------------------------------------------------------------------------------
def test_worked_example_q_r_rs():
    """p = (0.5, 0.3, 0.2), P diagonal 0.8, off-diagonal 0.1.

    Column sums s_k = sum_l p_l P_lk: s_1 = 0.4 + 0.03 + 0.02 = 0.45, s_2 = 0.05 + 0.24 + 0.02
    = 0.31, s_3 = 0.05 + 0.03 + 0.16 = 0.24; Q_kj = P_jk p_j / s_k, e.g. Q_11 = 0.4/0.45 =
    0.888889, Q_21 = 0.05/0.31 = 0.161290, Q_33 = 0.16/0.24 = 0.666667. R = P Q, e.g. R_11 =
    0.8 * 0.888889 + 0.1 * 0.161290 + 0.1 * 0.208333 = 0.748073; R_s = (R + I)/2."""
    P = base_matrix([0.8, 0.8, 0.8])
    np.testing.assert_allclose(P, [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    p = np.array([0.5, 0.3, 0.2])
    Q = backward_matrix(P, p)
    np.testing.assert_allclose(
        Q, [[0.888889, 0.066667, 0.044444], [0.161290, 0.774194, 0.064516], [0.208333, 0.125, 0.666667]], atol=5e-7
    )
    R = invariant_matrix(P, p)
    np.testing.assert_allclose(
        R, [[0.748073, 0.143253, 0.108674], [0.238754, 0.638522, 0.122724], [0.271685, 0.184086, 0.544229]], atol=5e-7
    )
    Rs = blend(R, 0.5)
    np.testing.assert_allclose(np.diag(Rs), [0.874037, 0.819261, 0.772115], atol=5e-7)
    np.testing.assert_allclose(p @ R, p, atol=1e-15)
    np.testing.assert_allclose(p @ Rs, p, atol=1e-15)
    np.testing.assert_allclose(Rs.sum(axis=1), 1.0, atol=1e-15)


def test_backward_matrix_does_not_depend_on_the_scale_of_p():
    P = base_matrix([0.9, 0.7, 0.85, 0.6])
    p = np.array([10.0, 3.0, 7.0, 1.0])
    np.testing.assert_allclose(backward_matrix(P, p), backward_matrix(P, p / 21.0), atol=1e-15)
    np.testing.assert_allclose(p @ invariant_matrix(P, p), p, rtol=1e-13)


def test_structured_product_equals_the_matrix_product():
    """invariant_of_base (O(L^2), P = diag(a) + b 1') against P @ Q."""
    rng = np.random.default_rng(8)
    for L in (2, 3, 7, 40):
        d = rng.uniform(0.0, 1.0, L)
        p = rng.integers(1, 100, L).astype(float)
        np.testing.assert_allclose(invariant_of_base(d, p), invariant_matrix(base_matrix(d), p), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(
        invariant_of_base([0.8, 0.8, 0.8], [0.5, 0.3, 0.2])[0], [0.748073, 0.143253, 0.108674], atol=5e-7
    )  # the worked example above


def test_base_matrix_draws_diagonals_in_range():
    rng = np.random.default_rng(3)
    P = draw_base_matrix(rng, 6, 0.8)
    d = np.diag(P)
    assert np.all((d >= 0.8) & (d <= 1.0))
    off = P[~np.eye(6, dtype=bool)].reshape(6, 5)
    np.testing.assert_allclose(off, np.repeat(((1 - d) / 5)[:, None], 5, axis=1))  # (1 - p_ll)/(L - 1)
    assert draw_base_matrix(rng, 1, 0.8).tolist() == [[1.0]]


def test_strength_zero_is_the_identity():
    R = invariant_matrix(base_matrix([0.8, 0.9]), np.array([3.0, 1.0]))
    np.testing.assert_array_equal(blend(R, 0.0), np.eye(2))


def test_apply_matrix_never_draws_a_category_of_probability_zero():
    """Rows with zeros (first, middle and last columns): every drawn code has M[l, k] > 0."""
    M = np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.0, 0.3, 0.7]])
    codes = np.repeat([0, 1, 2, -1], 20000)
    out = apply_matrix(np.random.default_rng(0), codes, M)
    valid = codes >= 0
    assert np.all(M[codes[valid], out[valid]] > 0)
    assert np.all(out[~valid] == -1)


# ----------------------------------------------------------------------------------------------
# the public function
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def testdata() -> pl.DataFrame:
    return pl.read_csv(TESTDATA)


def _binomial_check(original_counts: np.ndarray, Rs: np.ndarray, realised: np.ndarray) -> None:
    """Each category's realised count within 5 standard errors of its expected count
    sum_l c_l R_lj (= c_j by invariance); the count is a sum of independent Bernoulli draws,
    variance sum_l c_l R_lj (1 - R_lj)."""
    expected = original_counts @ Rs
    np.testing.assert_allclose(expected, original_counts, rtol=1e-12)  # invariance
    se = np.sqrt(original_counts @ (Rs * (1 - Rs)))
    assert np.all(np.abs(realised - expected) <= 5 * se), (realised, expected, se)


def test_expected_frequencies_are_kept_on_100000_records():
    rng = np.random.default_rng(11)
    cats = np.array(["a", "b", "c", "d", "e"])
    shares = np.array([0.4, 0.25, 0.2, 0.1, 0.05])
    x = cats[rng.choice(5, size=100_000, p=shares)]
    df = pl.DataFrame({"x": x, "y": np.arange(100_000)})
    res = pram(df, "x", pd=0.5, strength=1.0, seed=5)
    (entry,) = res.details["matrices"]
    assert entry["categories"] == list(cats)
    Rs = np.array(entry["matrix"])
    orig = np.array([np.sum(x == c) for c in cats], dtype=float)
    new = res.data["x"].to_numpy()
    realised = np.array([np.sum(new == c) for c in cats], dtype=float)
    _binomial_check(orig, Rs, realised)
    assert res.n_changed["x"] > 10_000  # pd = 0.5, strength = 1: many records move


def test_same_seed_same_output_other_seed_other_output(testdata):
    a = pram(testdata, ["roof", "walls"], seed=42)
    b = pram(testdata, ["roof", "walls"], seed=42)
    c = pram(testdata, ["roof", "walls"], seed=43)
    assert a.data.equals(b.data)
    assert a.to_dict() == b.to_dict()
    assert not a.data.equals(c.data)


def test_fresh_seed_is_recorded_and_replays(testdata):
    a = pram(testdata, ["roof", "water"])
    assert isinstance(a.parameters["seed"], int)
    again = pram(testdata, **a.parameters)
    assert again.data.equals(a.data)
    json.dumps(a.to_dict())  # the log is JSON


def test_missing_stays_missing_and_missing_codes_are_kept():
    df = pl.DataFrame({"x": [1, 2, None, 3, -999, 1, 2, 3, None, -999] * 500})
    res = pram(df, "x", pd=0.0, strength=1.0, missing=-999, seed=1)
    old = df["x"].to_numpy()
    new = res.data["x"].to_numpy()
    assert np.array_equal(np.isnan(new.astype(float)), df["x"].is_null().to_numpy())
    assert np.all(new[old == -999] == -999)  # a missing-value code is neither changed ...
    assert set(new[~np.isnan(new.astype(float)) & (old != -999)]) <= {1, 2, 3}  # ... nor drawn
    assert res.details["matrices"][0]["categories"] == [1, 2, 3]
    assert res.n_changed["x"] > 0


def test_strata_get_their_own_matrices(testdata):
    """Within a stratum the matrix is built on the stratum's categories and frequencies: it
    keeps the stratum's expected frequencies and never produces a category absent there."""
    df = testdata.with_columns(
        pl.when(pl.col("urbrur") == 1).then(pl.col("walls").clip(upper_bound=2)).otherwise(pl.col("walls")).alias("w2")
    )
    res = pram(df, "w2", strata="urbrur", pd=0.3, strength=1.0, seed=7)
    entries = {e["stratum"]: e for e in res.details["matrices"]}
    assert set(entries) == {"1", "2"}
    old = df["w2"].to_numpy()
    new = res.data["w2"].to_numpy()
    urb = df["urbrur"].to_numpy()
    for s, e in entries.items():
        rows = urb == int(s)
        cats = sorted(set(old[rows]))
        assert e["categories"] == cats
        Rs = np.array(e["matrix"])
        counts = np.array([np.sum(old[rows] == c) for c in cats], dtype=float)
        np.testing.assert_allclose(counts @ Rs, counts, rtol=1e-12)
        assert set(new[rows]) <= set(cats)
    assert set(new[urb == 1]) <= {2}  # walls clipped to 2 in stratum 1: one category there ...
    assert res.n_changed_by_stratum["1"]["w2"] == 0  # ... so nothing changes ...
    assert (
        "w2: a single category in 1 stratum; left unchanged there" in res.notes
    )  # ... and a note says so (how many, not which)
    assert sum(d["w2"] for d in res.n_changed_by_stratum.values()) == res.n_changed["w2"]
    assert res.details["pram"] is None  # one matrix per stratum: no single matrix for EBIL
    # ... but the matrices per stratum, published for the risk and loss measures
    assert res.details["pram_by_stratum"]["w2"]["strata"] == ["urbrur"]
    assert res.details["pram_by_stratum"]["w2"]["matrices"]["1"] == {2: {2: 1.0}}
    assert res.details["pram_diagonal_by_stratum"]["w2"]["matrices"]["2"] == {
        c: entries["2"]["matrix"][i][i] for i, c in enumerate(entries["2"]["categories"]) if c in set(new[urb == 2])
    }


def test_single_category_is_left_unchanged():
    df = pl.DataFrame({"x": ["a"] * 10, "y": list(range(10))})
    res = pram(df, "x", seed=1)
    assert res.n_changed["x"] == 0
    assert res.details["matrices"][0]["matrix"] == [[1.0]]
    assert any("single category in the data" in n for n in res.notes)


@pytest.mark.parametrize("kwargs", [{"strength": 0.0}, {"pd": 1.0}])
def test_no_perturbation(testdata, kwargs):
    res = pram(testdata, ["roof", "walls"], seed=3, **kwargs)
    assert res.n_changed == {"roof": 0, "walls": 0}
    assert res.data.equals(testdata)


def test_user_matrix_is_applied_as_given():
    """A permutation matrix swaps categories deterministically: a -> b, b -> a, c stays."""
    df = pl.DataFrame({"x": ["a", "b", "c", "a", None]})
    swap = {"a": {"b": 1.0}, "b": {"a": 1.0}, "c": {"c": 1.0}}
    res = pram(df, "x", matrix={"x": swap}, seed=0)
    assert res.data["x"].to_list() == ["b", "a", "c", "b", None]
    assert res.n_changed == {"x": 3}
    assert res.n_changed_by_category == {"x": {"a": 2, "b": 1}}
    (entry,) = res.details["matrices"]
    assert entry["generated"] is False and entry["stratum"] is None
    assert res.parameters["matrix"]["x"]["a"] == {"a": 0.0, "b": 1.0, "c": 0.0}


def test_user_matrix_forms_and_labels_as_text():
    """(matrix, categories) with text labels for an integer column (as after a JSON round
    trip); and a DataFrame."""
    pd = pytest.importorskip("pandas")
    df = pl.DataFrame({"x": [1, 2, 1, 2, 1]})
    ident = (np.eye(2), ["1", "2"])
    assert pram(df, "x", matrix={"x": ident}, seed=0).n_changed == {"x": 0}
    frame = pd.DataFrame([[0.0, 1.0], [1.0, 0.0]], index=[1, 2], columns=[1, 2])
    assert pram(df, "x", matrix={"x": frame}, seed=0).data["x"].to_list() == [2, 1, 2, 1, 2]


def test_user_matrix_may_use_declared_categories_absent_from_the_data():
    """An Enum column declares lo < mid < hi; only lo and hi occur. A user matrix may send
    records to mid (a declared category), and the column keeps its declared categories."""
    df = pl.DataFrame({"x": pl.Series(["lo", "hi", "lo"], dtype=pl.Enum(["lo", "mid", "hi"]))})
    to_mid = {"lo": {"mid": 1.0}, "mid": {"mid": 1.0}, "hi": {"hi": 1.0}}
    res = pram(df, "x", matrix={"x": to_mid}, seed=0)
    assert res.data["x"].to_list() == ["mid", "hi", "mid"]
    assert res.data["x"].dtype == pl.Enum(["lo", "mid", "hi"])
    generated = pram(df, "x", pd=0.0, strength=1.0, seed=0)  # generated: only the categories that occur
    assert generated.details["matrices"][0]["categories"] == ["lo", "hi"]


def test_replay_with_the_recorded_user_matrix(testdata):
    first = pram(testdata, "roof", seed=1)
    mat = first.details["pram"]["roof"]
    a = pram(testdata, "roof", matrix={"roof": mat}, seed=9)
    b = pram(testdata, **json.loads(json.dumps(a.to_dict()["parameters"])))  # through JSON: text labels
    assert a.data.equals(b.data)


def test_matrices_feed_ebil_and_the_pram_adjusted_risk(testdata):
    """``details["pram"]`` is accepted as is by information_loss (EBIL) and
    ``details["pram_diagonal"]`` by loglinear_risk (M_kk = product of kept probabilities)."""
    res = pram(testdata, ["roof", "walls"], seed=1)
    il = sdckit.information_loss(testdata, res.data, ["roof", "walls"], scales="nominal", pram=res.details["pram"])
    ebil = il.to_dict()["ebil"]
    assert set(ebil["by_variable"]) == {"roof", "walls"} and ebil["joint"] > 0
    diag = res.details["pram_diagonal"]
    for e in res.details["matrices"]:
        kept = {c: e["matrix"][i][i] for i, c in enumerate(e["categories"])}
        assert diag[e["variable"]] == {c: p for c, p in kept.items() if c in set(res.data[e["variable"]])}
    lr = sdckit.loglinear_risk(res.data, ["roof", "walls", "sex"], weight="sampling_weight", pram=diag)
    assert lr.pram["variables"] == ["roof", "walls"] and 0 < lr.pram["tau2"] < lr.tau2


def test_pram_diagonal_leaves_out_categories_that_vanished():
    """A rare category can disappear from the published file; the risk of that file looks up
    only the categories it has, so the diagonal lists only those (loglinear_risk refuses
    labels that do not occur)."""
    df = pl.DataFrame({"x": ["a"] * 50 + ["b"] * 50 + ["c"], "y": (["u", "v"] * 51)[:101], "w": [10.0] * 101})
    res = pram(df, "x", pd=0.0, strength=1.0, seed=1)
    assert "c" not in res.data["x"].to_list()  # seed 1: the single "c" became another category
    assert set(res.details["pram_diagonal"]["x"]) == {"a", "b"}
    assert set(res.details["pram"]["x"]) == {"a", "b", "c"}  # the matrix itself is complete
    sdckit.loglinear_risk(res.data, ["x", "y"], weight="w", pram=res.details["pram_diagonal"])


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pd": 1.2}, "pd: got 1.2; expected a number in [0, 1]"),
        ({"pd": -0.1}, "pd: got -0.1"),
        ({"strength": 1.5}, "strength: got 1.5; expected a number in [0, 1]"),
        ({"pd": {"zz": 0.5}}, "pd: zz not among variables"),
        ({"strength": {"x": 2.0}}, "strength['x']: got 2.0"),
        ({"matrix": [[1.0]]}, "matrix: got list; expected a dict variable -> transition matrix"),
        ({"matrix": {"zz": {}}}, "matrix: zz not among variables"),
        ({"matrix": {"x": {"a": {"a": 0.9}, "b": {"b": 1.0}, "c": {"c": 1.0}}}}, "1 row(s) do not sum to 1"),
        ({"matrix": {"x": {"a": {"a": 1.0}, "b": {"b": 1.0}}}}, "1 categor(y/ies) of the data are not in the matrix"),
        (
            {"matrix": {"x": {"a": {"a": 1.0}, "b": {"b": 1.0}, "c": {"c": 1.0}, "q": {"q": 1.0}}}},
            "1 categor(y/ies) are not categories of x",
        ),
        ({"matrix": {"x": {"a": {"a": -0.5, "b": 1.5}}}}, "negative or non-finite entries"),
        ({"matrix": {"x": (np.eye(2), ["a", "b", "c"])}}, "expected a square matrix, one row each"),
        ({"matrix": {"x": np.eye(3)}}, "expected a labelled matrix"),
        ({"seed": -1}, "seed: got -1"),
    ],
)
def test_bad_input(kwargs, message):
    df = pl.DataFrame({"x": ["a", "b", "c", "a"], "s": [1, 1, 2, 2]})
    with pytest.raises(sdckit.SdcError) as err:
        pram(df, "x", **kwargs)
    assert message in str(err.value)


def test_a_continuous_variable_is_refused():
    df = pl.DataFrame({"x": np.arange(1001) / 7.0})
    with pytest.raises(sdckit.SdcError, match="variables: x has 1,001 categories"):
        pram(df, "x", seed=0)
    assert pram(df.head(1000), "x", seed=0, strength=0.0).n_changed == {"x": 0}  # 1,000 is accepted


def test_row_sum_tolerance_is_1e_9():
    df = pl.DataFrame({"x": ["a", "b"]})
    ok = {"a": {"a": 1.0 - 5e-10, "b": 0.0}, "b": {"b": 1.0}}
    pram(df, "x", matrix={"x": ok}, seed=0)
    bad = {"a": {"a": 1.0 - 5e-9, "b": 0.0}, "b": {"b": 1.0}}
    with pytest.raises(sdckit.SdcError, match="do not sum to 1"):
        pram(df, "x", matrix={"x": bad}, seed=0)


def test_unknown_variable_and_strata_overlap():
    df = pl.DataFrame({"x": ["a", "b"], "s": [1, 2]})
    with pytest.raises(sdckit.SdcError, match="zz"):
        pram(df, "zz")
    with pytest.raises(sdckit.SdcError, match="strata: x also in variables"):
        pram(df, "x", strata="x")


# ----------------------------------------------------------------------------------------------
# backends and properties
# ----------------------------------------------------------------------------------------------
def test_pandas_categorical_and_index_are_kept():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {"x": pd.Categorical(["lo", "hi", "lo", None, "mid"] * 40, categories=["lo", "mid", "hi"], ordered=True)},
        index=np.arange(200) * 3,
    )
    before = df.copy()
    res = pram(df, "x", pd=0.2, strength=1.0, seed=2)
    pd.testing.assert_frame_equal(df, before)
    out = res.data
    assert isinstance(out, pd.DataFrame) and out.index.equals(df.index)
    assert list(out["x"].cat.categories) == ["lo", "mid", "hi"] and out["x"].cat.ordered
    assert out["x"].isna().equals(df["x"].isna())


def test_numpy_input_gives_numpy_output():
    arr = np.array([[1, 10], [2, 20], [1, 30], [3, 40]] * 10)
    res = pram(arr, "0", seed=4, pd=0.1, strength=1.0)
    assert isinstance(res.data, np.ndarray) and res.data.shape == arr.shape
    np.testing.assert_array_equal(res.data[:, 1], arr[:, 1])


frames = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "x": st.lists(st.sampled_from(["a", "b", "c", None]), min_size=n, max_size=n),
            "y": st.lists(st.integers(0, 3) | st.none(), min_size=n, max_size=n),
            "s": st.lists(st.sampled_from(["u", "v"]), min_size=n, max_size=n),
            "z": st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=n, max_size=n),
        }
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cols=frames, seed=st.integers(0, 2**32), use_strata=st.booleans())
def test_properties(cols, seed, use_strata):
    """Input not mutated; rows, columns and column order kept; other columns unchanged;
    missing stays missing; new values are categories of the variable; same seed, same output."""
    df = pl.DataFrame(cols, schema={"x": pl.String, "y": pl.Int64, "s": pl.String, "z": pl.Float64})
    copy = df.clone()
    kw = {"strata": "s"} if use_strata else {}
    res = pram(df, ["x", "y"], pd=0.3, seed=seed, **kw)
    assert df.equals(copy)
    out = res.data
    assert out.columns == df.columns and out.height == df.height and out.schema == df.schema
    assert out.select("s", "z").equals(df.select("s", "z"))
    for v in ("x", "y"):
        assert out[v].is_null().to_list() == df[v].is_null().to_list()
        assert set(out[v].drop_nulls().to_list()) <= set(df[v].drop_nulls().to_list())
        assert res.n_changed[v] == int((out[v] != df[v]).fill_null(False).sum())
    assert pram(df, ["x", "y"], pd=0.3, seed=seed, **kw).data.equals(out)


def test_notes_count_strata_rather_than_name_them():
    """A stratum's label can identify: a note says how many strata, never which (issue 36)."""
    d = pl.DataFrame({"reg": ["Zorglub"] * 5 + ["Quuxville"] * 20, "v": ["a"] * 5 + ["a", "b", "c", "d"] * 5})
    notes = sdckit.pram(d, ["v"], strata=["reg"], seed=1).notes
    assert notes == ("v: a single category in 1 stratum; left unchanged there",)
