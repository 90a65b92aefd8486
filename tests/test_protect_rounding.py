"""Rounding to a base: nearest, unbiased random, controlled (total kept within one base)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import SdcError, rounding
from sdckit._core.rounding import round_controlled, round_random, systematic_selection


def test_nearest_by_hand():
    # base 1000: 1234 -> 1000 (f = 0.234), 1500 -> 2000 (a half goes up), 2600 -> 3000,
    # -1200 -> -1000 (l = -2, f = 0.8), 3000 stays, a missing value stays missing
    d = pl.DataFrame({"x": [1234.0, 1500.0, 2600.0, -1200.0, 3000.0, None]})
    res = rounding(d, "x", base=1000)
    assert res.data["x"].to_list() == [1000.0, 2000.0, 3000.0, -1000.0, 3000.0, None]
    assert res.n_changed == {"x": 4}
    # total change: -234 + 500 + 400 + 200 + 0 = 866; largest |change| 500
    assert res.details["total_change"]["x"] == pytest.approx(866.0)
    assert res.details["max_abs_change"]["x"] == pytest.approx(500.0)


def test_fractional_base_and_integer_column():
    d = pd.DataFrame({"x": [0.24, 0.26, 0.74], "n": [12, 17, 25]})
    res = rounding(d, ["x", "n"], base=0.5)
    assert res.data["x"].tolist() == [0.0, 0.5, 0.5]
    assert res.data["n"].tolist() == [12.0, 17.0, 25.0]  # whole numbers are multiples of 0.5
    res = rounding(d, "n", base=5)
    assert res.data["n"].tolist() == [10, 15, 25]  # 12.5 would go up; 12 goes down, 17 down
    assert pd.api.types.is_integer_dtype(res.data["n"])


def test_random_rounding_is_unbiased():
    # x = 1234, base 1000: up with probability 0.234; over 4,000 independent values the share
    # rounded up is 0.234 within 4 standard errors (sqrt(0.234 * 0.766 / 4000) = 0.0067)
    x = np.full(4000, 1234.0)
    r = round_random(x, 1000.0, np.random.default_rng(5))
    assert set(np.unique(r)) <= {1000.0, 2000.0}
    assert abs((r == 2000.0).mean() - 0.234) < 4 * 0.0067


def test_controlled_inclusion_probabilities_by_simulation():
    # fractions (0.1, 0.5, 0.9, 0.3, 0.7): each unit goes up with its own probability; the
    # number that goes up is floor(2.5) = 2 or ceil(2.5) = 3
    p = np.array([0.1, 0.5, 0.9, 0.3, 0.7])
    rng = np.random.default_rng(11)
    draws = np.array([systematic_selection(p, rng) for _ in range(4000)])
    assert set(draws.sum(axis=1)) <= {2, 3}
    np.testing.assert_allclose(draws.mean(axis=0), p, atol=4 * np.sqrt(0.25 / 4000))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60),
    st.sampled_from([1.0, 5.0, 10.0, 1000.0, 0.25]),
    st.integers(0, 2**32),
)
def test_controlled_keeps_the_total_within_one_base(values, base, seed):
    x = np.array(values)
    r = round_controlled(x, base, [np.arange(x.size)], np.random.default_rng(seed))
    assert abs(r.sum() - x.sum()) < base * (1 + 1e-9)
    assert np.all(np.abs(r - x) < base * (1 + 1e-9))
    q = r / base
    np.testing.assert_allclose(q, np.round(q), atol=1e-6)


def test_controlled_within_strata_and_the_random_total_drifts():
    rng = np.random.default_rng(2)
    n = 400
    d = pl.DataFrame({"x": rng.uniform(0, 10_000, n), "g": rng.integers(0, 4, n)})
    res = rounding(d, "x", base=1000, method="controlled", strata="g", seed=7)
    out = res.data
    for g in range(4):
        m = (d["g"] == g).to_numpy()
        assert abs(out["x"].to_numpy()[m].sum() - d["x"].to_numpy()[m].sum()) < 1000
    # independent random rounding of the same file: its total drifts by more than a base
    # (sd of the total = 1000 sqrt(sum f(1 - f)) ~ 1000 sqrt(400 / 6) ~ 8,000) for most seeds
    drift = [abs(rounding(d, "x", base=1000, method="random", seed=s).details["total_change"]["x"]) for s in range(5)]
    assert max(drift) > 1000


@pytest.mark.parametrize("method", ["nearest", "random", "controlled"])
def test_rows_columns_identity_and_seed(method):
    rng = np.random.default_rng(4)
    idx = pd.Index([f"r{i}" for i in range(50)])
    d = pd.DataFrame({"x": rng.uniform(0, 100, 50), "y": rng.integers(0, 1000, 50), "k": ["a", "b"] * 25}, index=idx)
    before = d.copy()
    res = rounding(d, ["x", "y"], base=10, method=method, seed=3)
    pd.testing.assert_frame_equal(d, before)  # input untouched
    out = res.data
    assert list(out.columns) == list(d.columns) and out.index.equals(d.index)
    assert out["k"].equals(d["k"])
    assert (np.abs(out["x"] - d["x"]) < 10).all()
    again = rounding(d, ["x", "y"], base=10, method=method, seed=3).data
    pd.testing.assert_frame_equal(out, again)
    assert res.parameters["seed"] == 3 and res.parameters["method"] == method


def test_missing_codes_are_left_alone():
    d = pl.DataFrame({"x": [1234.0, -999.0, 2600.0]})
    res = rounding(d, "x", base=1000, missing=-999)
    assert res.data["x"].to_list() == [1000.0, -999.0, 3000.0]


def test_bad_inputs():
    d = pl.DataFrame({"x": [1.0, 2.0], "s": ["a", "b"]})
    with pytest.raises(SdcError, match="base"):
        rounding(d, "x", base=0)
    with pytest.raises(SdcError, match="method"):
        rounding(d, "x", base=1, method="banker")
    with pytest.raises(SdcError, match="not numeric"):
        rounding(d, "s", base=1)
    with pytest.raises(SdcError, match="infinite"):
        rounding(pl.DataFrame({"x": [1.0, np.inf]}), "x", base=1)
    with pytest.raises(TypeError):
        rounding(d, "x")  # the base is required


def test_workflow_and_public_name():
    d = pd.DataFrame({"x": [1234.0, 1500.0, 2600.0], "k": ["a", "b", "a"]})
    problem = sdckit.SdcProblem(d, sdckit.Scenario(keys=["k"], numeric_keys=["x"]))
    problem.apply("rounding", variables=["x"], base=1000)
    assert problem.data["x"].tolist() == [1000.0, 2000.0, 3000.0]
    assert sdckit.rounding is rounding


def test_the_documented_example():
    # base 1000, x = (1234, 1500, 2600, -1200, 3000), total 7134; floors total 5000, fractions
    # (0.234, 0.5, 0.6, 0.8, 0) sum to 2.134: two go up (7000) w.p. 0.866, three (8000) w.p. 0.134
    x = np.array([1234.0, 1500.0, 2600.0, -1200.0, 3000.0])
    rng = np.random.default_rng(0)
    totals = np.array([round_controlled(x, 1000.0, [np.arange(5)], rng).sum() for _ in range(3000)])
    assert set(np.unique(totals)) == {7000.0, 8000.0}
    assert abs((totals == 8000.0).mean() - 0.134) < 4 * np.sqrt(0.134 * 0.866 / 3000)
    assert abs(totals.mean() - 7134.0) < 4 * 1000 * np.sqrt(0.134 * 0.866 / 3000)
    d = pl.DataFrame({"x": x})
    assert rounding(d, "x", base=1000).data["x"].sum() == 8000.0
