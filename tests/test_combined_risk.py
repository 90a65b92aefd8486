"""Combined risk of categorical and continuous keys per record (sdckit.combined_risk): a
hand-worked example, the handbook's motivating case, a brute-force oracle (every pair of
records compared in plain Python), properties (risks in (0, 1], the order of the rules, row
order) and bad inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit

# ----------------------------------------------------------------------------------------------
# hand-worked example
# ----------------------------------------------------------------------------------------------
# key k, continuous y, p = 0.2 (record h is inside record i's interval when
# y_h in (0.8 y_i, 1.2 y_i) or y_h = y_i):
#   record  k  y     interval      inside (whole file)   inside, same k   f
#   1       A  10    (8, 12)       10, 11, 10.5 -> 3      10, 11 -> 2      3
#   2       A  11    (8.8, 13.2)   10, 11, 10.5 -> 3      10, 11 -> 2      3
#   3       A  30    (24, 36)      30, 31       -> 2      30     -> 1      3
#   4       B  10.5  (8.4, 12.6)   10, 11, 10.5 -> 3      10.5   -> 1      3
#   5       B  31    (24.8, 37.2)  30, 31       -> 2      31     -> 1      3
#   6       B  50    (40, 60)      50           -> 1      50     -> 1      3
# categorical risk 1/f = 1/3 for all; continuous 1/c = 1/3, 1/3, 1/2, 1/3, 1/2, 1
#   joint  1/c_K                 = 1/2, 1/2, 1, 1, 1, 1        mean 5/6
#   max    max(1/f, 1/c)         = 1/3, 1/3, 1/2, 1/3, 1/2, 1  mean 1/2
#   union  1 - (2/3)(1 - 1/c)    = 5/9, 5/9, 2/3, 5/9, 2/3, 1  mean 2/3
# c_min = 3 (unsafe when the risk exceeds 1/3): categorical alone none; continuous alone 3, 5, 6;
# joint all six, three of them (1, 2, 4) only when both kinds of key are combined.
HAND = pl.DataFrame({"k": ["A", "A", "A", "B", "B", "B"], "y": [10.0, 11, 30, 10.5, 31, 50]})
HAND_RISK = {
    "joint": ([1 / 2, 1 / 2, 1, 1, 1, 1], 5 / 6),
    "max": ([1 / 3, 1 / 3, 1 / 2, 1 / 3, 1 / 2, 1], 1 / 2),
    "union": ([5 / 9, 5 / 9, 2 / 3, 5 / 9, 2 / 3, 1], 2 / 3),
}


@pytest.mark.parametrize("combine", sorted(HAND_RISK))
def test_hand_worked_example(combine):
    r = sdckit.combined_risk(HAND, "k", "y", combine=combine)
    risk, mean = HAND_RISK[combine]
    np.testing.assert_allclose(r.risk, risk, rtol=1e-12)
    assert r.global_risk == pytest.approx(mean, rel=1e-12)
    np.testing.assert_array_equal(r.frequency, [3] * 6)
    np.testing.assert_array_equal(r.interval_count, [3, 3, 2, 3, 2, 1])
    np.testing.assert_array_equal(r.joint_count, [2, 2, 1, 1, 1, 1])
    np.testing.assert_allclose(r.categorical_risk, [1 / 3] * 6)
    np.testing.assert_allclose(r.continuous_risk, [1 / 3, 1 / 3, 1 / 2, 1 / 3, 1 / 2, 1])
    assert r.global_categorical_risk == pytest.approx(1 / 3)
    assert r.global_continuous_risk == pytest.approx(0.5)
    assert r.n_unsafe_categorical == 0
    assert r.n_unsafe_continuous == 3


def test_hand_worked_unsafe_counts():
    joint = sdckit.combined_risk(HAND, "k", "y")
    assert joint.unsafe.tolist() == [True] * 6
    assert joint.n_unsafe_only_combined == 3
    mx = sdckit.combined_risk(HAND, "k", "y", combine="max")
    assert mx.unsafe.tolist() == [False, False, True, False, True, True]  # 1/3 is not above 1/3
    assert mx.n_unsafe_only_combined == 0


def test_the_handbook_case_safe_apart_unsafe_together():
    """(2,6,7,1) occurs 12 times and 10 values lie within 20 % of 43.7, but one record has both."""
    key = ["2671"] * 12 + ["1111"] * 9
    y = [43.7] + [100.0 + i for i in range(11)] + [40.0 + i for i in range(9)]
    data = pl.DataFrame({"key": key, "y": y})
    r = sdckit.combined_risk(data, "key", "y")
    assert r.frequency[0] == 12
    assert r.interval_count[0] == 10  # 43.7 and 40..48 lie in (34.96, 52.44)
    assert r.joint_count[0] == 1
    assert r.categorical_risk[0] == pytest.approx(1 / 12)
    assert r.continuous_risk[0] == pytest.approx(1 / 10)
    assert r.risk[0] == 1.0
    assert r.unsafe[0]


def test_missing_continuous_value_falls_back_to_the_key():
    data = HAND.with_columns(pl.when(pl.arange(0, 6) == 0).then(None).otherwise(pl.col("y")).alias("y"))
    r = sdckit.combined_risk(data, "k", "y")
    assert math.isnan(r.interval_count[0]) and math.isnan(r.continuous_risk[0])
    assert r.risk[0] == pytest.approx(1 / 3)  # f = 3 for A
    # record 2 (A, 11): record 1 is no longer counted: inside 11, 10.5 -> 2; same k: 11 -> 1
    assert r.interval_count[1] == 2 and r.joint_count[1] == 1
    assert r.n_missing_continuous == 1
    assert not np.isnan(r.risk).any()


# ----------------------------------------------------------------------------------------------
# brute-force oracle
# ----------------------------------------------------------------------------------------------
def _inside(xi: float, xh: float, p: float) -> bool:
    return xh == xi or (xi - p * abs(xi) < xh < xi + p * abs(xi))


def _oracle(keys: list[tuple], X: np.ndarray, p: float, combine: str) -> np.ndarray:
    """Every pair of records in plain Python (a missing key value is a category of its own)."""
    n = len(keys)
    complete = [not np.isnan(X[h]).any() for h in range(n)]
    out = []
    for i in range(n):
        f = sum(keys[h] == keys[i] for h in range(n))
        if not complete[i]:
            out.append(1 / f)
            continue
        inside = [complete[h] and all(_inside(X[i, j], X[h, j], p) for j in range(X.shape[1])) for h in range(n)]
        c = sum(inside)
        ck = sum(ins and keys[h] == keys[i] for h, ins in enumerate(inside))
        if combine == "joint":
            out.append(1 / ck)
        elif combine == "max":
            out.append(max(1 / f, 1 / c))
        else:
            out.append(1 - (1 - 1 / f) * (1 - 1 / c))
    return np.array(out)


def _random(seed: int, n: int, n_vars: int, missing: float) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cols: dict = {"a": rng.integers(0, 3, n).tolist(), "b": rng.choice(["u", "v"], n).tolist()}
    cols["b"] = [None if rng.random() < missing else v for v in cols["b"]]
    for j in range(n_vars):
        x = np.round(rng.lognormal(3, 0.6, n), 1) * rng.choice([-1.0, 1.0], n)  # ties, both signs
        x[rng.random(n) < 0.1] = 0.0  # a zero's open interval is empty: only equal values count
        x[rng.random(n) < missing] = np.nan
        cols[f"x{j}"] = x
    return pl.DataFrame(cols).with_columns([pl.col(f"x{j}").fill_nan(None) for j in range(n_vars)])


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 40),
    n_vars=st.integers(1, 3),
    missing=st.sampled_from([0.0, 0.1]),
    p=st.sampled_from([0.05, 0.2, 0.5]),
    combine=st.sampled_from(["joint", "max", "union"]),
)
def test_matches_the_oracle(seed, n, n_vars, missing, p, combine):
    data = _random(seed, n, n_vars, missing)
    variables = [f"x{j}" for j in range(n_vars)]
    r = sdckit.combined_risk(data, ["a", "b"], variables, p=p, combine=combine)
    X = data.select(variables).to_numpy().astype(float)
    expected = _oracle(data.select(["a", "b"]).rows(), X, p, combine)
    np.testing.assert_allclose(r.risk, expected, rtol=1e-12)
    assert r.global_risk == pytest.approx(float(np.mean(expected)), rel=1e-12)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), perm_seed=st.integers(0, 10_000))
def test_ranges_order_of_the_rules_and_row_order(seed, n, perm_seed):
    data = _random(seed, n, 2, 0.1)
    res = {c: sdckit.combined_risk(data, ["a", "b"], ["x0", "x1"], combine=c) for c in ("joint", "max", "union")}
    for r in res.values():
        assert ((r.risk > 0) & (r.risk <= 1)).all()
        assert (r.risk >= r.categorical_risk - 1e-15).all()
    # joint >= max (c_K <= min(f, c)) and union >= max (1 - (1-a)(1-b) >= max(a, b)); joint and
    # union are not ordered (f = 2, c = 5, c_K = 2: joint 1/2 < union 1 - (1/2)(4/5) = 0.6)
    assert (res["joint"].risk >= res["max"].risk - 1e-12).all()
    assert (res["union"].risk >= res["max"].risk - 1e-12).all()
    perm = np.random.default_rng(perm_seed).permutation(n)
    rp = sdckit.combined_risk(data[perm], ["a", "b"], ["x0", "x1"])
    np.testing.assert_allclose(rp.risk, res["joint"].risk[perm], rtol=1e-12)
    assert rp.global_risk == pytest.approx(res["joint"].global_risk, rel=1e-12)


def test_joint_counts_are_the_relative_interval_rule_within_keys():
    data = _random(5, 200, 2, 0.05)
    r = sdckit.combined_risk(data, ["a", "b"], ["x0", "x1"], p=0.1)
    rel = sdckit.relative_interval_risk(data, ["x0", "x1"], p=0.1, joint=True, keys=["a", "b"])
    np.testing.assert_array_equal(r.joint_count, rel.joint_counts)


def test_result_is_aggregates_only_frozen_and_frame():
    r = sdckit.combined_risk(HAND, "k", "y")
    d = r.to_dict()
    assert d["measure"] == "combined_risk"
    assert d["global_risk"] == pytest.approx(5 / 6)
    assert set(d) == {
        "measure", "n", "keys", "variables", "p", "c_min", "combine", "global_risk",
        "global_categorical_risk", "global_continuous_risk", "n_unsafe", "share_unsafe",
        "n_unsafe_categorical", "n_unsafe_continuous", "n_unsafe_only_combined",
        "n_missing_continuous", "max_risk",
    }  # fmt: skip
    with pytest.raises(ValueError):
        r.risk[0] = 0.0
    frame = r.to_frame()
    assert frame.columns == [
        "frequency", "interval_count", "joint_count", "categorical_risk", "continuous_risk", "risk", "unsafe"
    ]  # fmt: skip
    assert "Global risk" in str(r.summary())


def test_scenario_fills_keys_and_numeric_keys():
    sc = sdckit.Scenario(keys=["k"], numeric_keys=["y"])
    assert sdckit.combined_risk(HAND, scenario=sc).global_risk == pytest.approx(5 / 6)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keys": "k", "variables": ["y", "k"]}, "keys: k also given as variables"),
        ({"keys": "k", "variables": "y", "p": 1.5}, "p: got 1.5"),
        ({"keys": "k", "variables": "y", "c_min": 0}, "c_min: got 0"),
        ({"keys": "k", "variables": "y", "combine": "sum"}, "combine: got 'sum'"),
        ({"keys": "k", "variables": "k2"}, "k2"),
        ({"keys": [], "variables": "y"}, "keys"),
    ],
)
def test_bad_inputs_are_named(kwargs, message):
    with pytest.raises(sdckit.SdcError, match=message):
        sdckit.combined_risk(HAND, **kwargs)


def test_text_variable_is_refused_and_input_untouched():
    before = HAND.clone()
    with pytest.raises(sdckit.SdcError, match="variables: column k of data has type"):
        sdckit.combined_risk(HAND.with_columns(pl.col("k").alias("k2")), "k2", "k")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sdckit.combined_risk(HAND, "k", "y")
    assert HAND.equals(before)
