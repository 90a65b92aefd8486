"""``analysis_change``: information loss of types 2 (variance of the estimates) and 3
(covariances and correlations on subdomains, tests of independence)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import MissingColumnError, Scenario, SdcError, analysis_change
from sdckit._core.analysis import chi_square, weighted_covariance


def _rows(res, statistic) -> dict:
    return {(r["variable"], r["domain"], r["category"]): r for r in res.variance_rows if r["statistic"] == statistic}


def test_variance_of_mean_and_total_by_hand():
    # y = (1, 2, 3, 4), unit weights, each record its own cluster (G = n = 4):
    # mean: z_i = (y_i - 2.5) / 4, var = 4/3 sum z_i^2 = 4/3 * 5/16 = 5/12 (= s^2 / n, s^2 = 5/3)
    # total: z_i = y_i, var = 4/3 sum (y_i - 2.5)^2 = 4/3 * 5 = 20/3 (= n s^2)
    # protected y' = 2 y: both variances x 4
    o = pl.DataFrame({"y": [1.0, 2.0, 3.0, 4.0]})
    p = o.with_columns(pl.col("y") * 2)
    res = analysis_change(o, p, variables="y", min_records=1)
    mean = _rows(res, "mean")[("y", None, None)]
    total = _rows(res, "total")[("y", None, None)]
    assert mean["variance_original"] == pytest.approx(5 / 12)
    assert total["variance_original"] == pytest.approx(20 / 3)
    assert mean["variance_ratio"] == pytest.approx(4.0) and total["variance_ratio"] == pytest.approx(4.0)
    assert res.median_variance_ratio == pytest.approx(4.0)


def test_domain_variances_with_households_by_hand():
    #   record  hh  D  w   y          (two clusters: var = (z_1 - z_2)^2)
    #      0     1  a  1  10
    #      1     1  b  2  20
    #      2     1  a  1  30
    #      3     2  b  2  40
    #      4     2  a  3  50
    #      5     2  b  2  60
    # mean y | a = 38: z_1 = (-28 - 8)/5 = -7.2, z_2 = 3 * 12 / 5 = 7.2 -> var 14.4^2 = 207.36
    # total y | a = 10 + 30 + 150 = 190: z_1 = 40, z_2 = 150 -> var 110^2 = 12100
    # total y | b = 40 + 80 + 120: z_1 = 40, z_2 = 200 -> var 160^2 = 25600
    o = pl.DataFrame(
        {
            "hh": [1, 1, 1, 2, 2, 2],
            "D": ["a", "b", "a", "b", "a", "b"],
            "w": [1.0, 2, 1, 2, 3, 2],
            "y": [10.0, 20, 30, 40, 50, 60],
        }
    )
    res = analysis_change(o, o, variables="y", domains="D", weight="w", household="hh", min_records=1)
    assert _rows(res, "mean")[("y", "D", "a")]["variance_original"] == pytest.approx(207.36)
    assert _rows(res, "total")[("y", "D", "a")]["variance_original"] == pytest.approx(12100.0)
    assert _rows(res, "total")[("y", "D", "b")]["variance_original"] == pytest.approx(25600.0)
    assert all(r["variance_ratio"] == pytest.approx(1.0) for r in res.variance_rows)
    # min_records = 5: the domains of 3 records are not shown, the whole file (6) is
    res5 = analysis_change(o, o, variables="y", domains="D", weight="w", household="hh")
    assert _rows(res5, "mean")[("y", "D", "a")]["variance_original"] is None
    assert "fewer than 5" in _rows(res5, "mean")[("y", "D", "a")]["reason"]
    assert _rows(res5, "mean")[("y", None, None)]["variance_original"] is not None


def test_chi_square_by_hand_and_the_conclusion():
    # original table [[10, 20], [30, 40]]: n = 100, rows 30, 70, columns 40, 60,
    # E = [[12, 18], [28, 42]]; X2 = 4/12 + 4/18 + 4/28 + 4/42 = 0.7936508, df = 1,
    # p = P(chi2_1 > 0.7936508) = 0.3729984, V = sqrt(0.7936508 / 100) = 0.0890871
    # protected table [[25, 5], [15, 55]]: X2 = 35.7, p < 0.001: independence rejected
    a = ["r0"] * 30 + ["r1"] * 70
    b = ["c0"] * 10 + ["c1"] * 20 + ["c0"] * 30 + ["c1"] * 40
    bp = ["c0"] * 25 + ["c1"] * 5 + ["c0"] * 15 + ["c1"] * 55
    o = pl.DataFrame({"a": a, "b": b})
    p = pl.DataFrame({"a": a, "b": bp})
    res = analysis_change(o, p, keys=["a", "b"])
    t = res.tests[0]
    assert t["statistic_original"] == pytest.approx(0.7936508, rel=1e-6)
    assert t["df_original"] == 1
    assert t["p_value_original"] == pytest.approx(0.3729984, rel=1e-5)
    assert t["v_original"] == pytest.approx(0.0890871, rel=1e-5)
    # protected: E = [[12, 18], [28, 42]] again; X2 = 13^2 (1/12 + 1/18 + 1/28 + 1/42) = 33.531746
    assert t["statistic_protected"] == pytest.approx(33.531746, rel=1e-6)
    assert t["same_conclusion"] is False
    assert res.share_same_conclusion == 0.0 and res.n_tests == 1


def test_chi_square_against_scipy():
    from scipy.stats import chi2_contingency

    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 3, 500), rng.integers(0, 4, 500)
    a[:20] = -1  # missing: left out
    got = chi_square(a, b, 3, 4)
    ok = a >= 0
    table = np.zeros((3, 4))
    np.add.at(table, (a[ok], b[ok]), 1)
    want = chi2_contingency(table, correction=False)
    assert got.statistic == pytest.approx(want.statistic) and got.p_value == pytest.approx(want.pvalue)
    assert got.df == want.dof and got.n == ok.sum()
    assert math.isnan(chi_square(np.zeros(5, int), b[:5], 1, 4).p_value)  # one category: undefined


def test_covariance_and_correlation():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    S, R, n = weighted_covariance(X, np.ones(50))
    np.testing.assert_allclose(S, np.cov(X, rowvar=False))
    np.testing.assert_allclose(R, np.corrcoef(X, rowvar=False))
    # integer weights: the correlations of the data with each record repeated w times
    w = rng.integers(1, 4, 50).astype(float)
    _, Rw, _ = weighted_covariance(X, w)
    np.testing.assert_allclose(Rw, np.corrcoef(np.repeat(X, w.astype(int), axis=0), rowvar=False))


def test_structure_by_subdomain():
    # protected y' = 2 y: S' has its y row and column doubled (the y variance 4 times), the
    # correlations are the same; x' = -x flips the sign of r_xy: |dr| = 2 |r|
    rng = np.random.default_rng(4)
    n = 200
    o = pl.DataFrame({"g": rng.choice(["a", "b"], n), "x": rng.normal(size=n), "y": rng.normal(size=n)})
    p = o.with_columns(pl.col("y") * 2)
    res = analysis_change(o, p, keys=["g"], variables=["x", "y"])
    for r in res.structure_rows:
        assert r["max_abs_correlation_change"] == pytest.approx(0.0, abs=1e-12)
        S = np.array(res.matrices["all" if r["domain"] is None else f"g={r['category']}"]["covariance_original"])
        D = S * np.array([[0, 1], [1, 3]])  # S' - S
        assert r["covariance_change"] == pytest.approx(np.linalg.norm(D) / np.linalg.norm(S))
    flipped = analysis_change(o, o.with_columns(-pl.col("x")), keys=["g"], variables=["x", "y"])
    top = flipped.structure_rows[0]
    r_xy = np.corrcoef(o["x"].to_numpy(), o["y"].to_numpy())[0, 1]
    assert top["max_abs_correlation_change"] == pytest.approx(2 * abs(r_xy))
    assert [r["domain"] for r in res.structure_rows] == [None, "g", "g"]


def test_variance_ratio_by_simulation_against_the_known_truth():
    # y ~ N(0, 1), protected y' = y + e, e ~ N(0, 0.5^2) independent: the variance of the
    # estimated mean grows by (1 + 0.25) in expectation; with n = 20,000 the estimated ratio
    # is within 3 % (the sampling sd of a variance ratio of this size is about 1 %)
    rng = np.random.default_rng(5)
    n = 20_000
    y = rng.normal(size=n)
    o = pl.DataFrame({"y": y})
    p = pl.DataFrame({"y": y + rng.normal(scale=0.5, size=n)})
    res = analysis_change(o, p, variables="y")
    ratio = _rows(res, "mean")[("y", None, None)]["variance_ratio"]
    assert ratio == pytest.approx(1.25, rel=0.03)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10**6))
def test_row_order_and_relabelling(seed):
    rng = np.random.default_rng(seed)
    n = 60
    o = pl.DataFrame({"a": rng.choice(["x", "y"], n), "b": rng.choice(["u", "v", "w"], n), "y": rng.normal(size=n),
                      "z": rng.normal(size=n)})  # fmt: skip
    p = o.with_columns(pl.col("y") + rng.normal(size=n), pl.Series("b", rng.choice(["u", "v", "w"], n)))
    base = analysis_change(o, p, keys=["a", "b"], variables=["y", "z"])
    perm = rng.permutation(n)
    shuffled = analysis_change(o[perm], p[perm], keys=["a", "b"], variables=["y", "z"])
    for r1, r2 in zip(base.variance_rows, shuffled.variance_rows):
        assert r1["variance_ratio"] == pytest.approx(r2["variance_ratio"], rel=1e-9, nan_ok=True)
    assert base.tests[0]["statistic_protected"] == pytest.approx(shuffled.tests[0]["statistic_protected"])
    relabel = {"x": "X", "y": "Y"}
    o2, p2 = (f.with_columns(pl.col("a").replace(relabel)) for f in (o, p))
    again = analysis_change(o2, p2, keys=["a", "b"], variables=["y", "z"])
    assert again.tests[0]["statistic_protected"] == pytest.approx(base.tests[0]["statistic_protected"])


def test_scenario_frame_and_aggregates():
    rng = np.random.default_rng(6)
    n = 100
    o = pl.DataFrame({"a": rng.choice(["x", "y"], n), "b": rng.choice(["u", "v"], n), "inc": rng.normal(size=n),
                      "exp": rng.normal(size=n), "w": rng.uniform(1, 2, n)})  # fmt: skip
    sc = Scenario(keys=["a", "b"], numeric_keys=["inc", "exp"], weight="w")
    res = analysis_change(o, o, scenario=sc)
    assert res.weighted and res.variables == ("inc", "exp") and res.share_same_conclusion == 1.0
    assert res.to_frame().columns[0] == "statistic"
    assert res.to_frame("structure").height == len(res.structure_rows)
    assert res.to_frame("tests").height == 1
    with pytest.raises(SdcError, match="measure"):
        res.to_frame("records")
    assert "Type 3" in str(res.summary())
    assert res.to_dict()["share_same_conclusion"] == 1.0


def test_bad_inputs():
    o = pl.DataFrame({"a": ["x", "y"] * 5, "y": np.arange(10.0)})
    with pytest.raises(SdcError, match="fewer than two keys"):
        analysis_change(o, o, keys="a")
    with pytest.raises(MissingColumnError):
        analysis_change(o, o, variables="nope")
    with pytest.raises(SdcError, match="infinite"):
        analysis_change(o, o.with_columns(pl.lit(np.inf).alias("y")), variables="y")
    with pytest.raises(SdcError, match="significance"):
        analysis_change(o, o, variables="y", significance=1.5)
    with pytest.raises(SdcError, match="records"):
        analysis_change(o, o.head(5), variables="y")
    assert sdckit.analysis_change is analysis_change


@pytest.mark.shared_data
def test_eusilc_noise_inflates_the_variances_and_keeps_the_tests():
    from conftest import shared_file

    d = pl.read_csv(shared_file("laeken", "eusilc.csv"))
    noisy = sdckit.add_noise(d, ["eqIncome"], noise=50, seed=1).data
    res = analysis_change(
        d, noisy, keys=["db040", "rb090", "pl030"], variables=["eqIncome", "age"], weight="rb050", household="db030"
    )
    mean_all = _rows(res, "mean")[("eqIncome", None, None)]
    assert mean_all["variance_ratio"] > 1.0  # noise makes the mean less precise
    assert _rows(res, "mean")[("age", None, None)]["variance_ratio"] == pytest.approx(1.0)
    assert res.share_same_conclusion == 1.0 and res.n_tests == 3  # the keys are untouched
    assert res.structure_rows[0]["max_abs_correlation_change"] > 0
