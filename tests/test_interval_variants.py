"""Interval disclosure with rank-based intervals (Domingo-Ferrer, Mateo-Sanz & Torra 2001) and
minimal-entropy precision intervals (after Alfalayleh & Brankovic 2015): hand-worked examples,
a brute-force oracle for the dynamic programme, and invariances."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import SdcError
from sdckit._core import interval_variants as core

X_INC = [10.0, 12, 15, 20, 22, 30, 45, 80]  # the eight-record example's income (original)
Y_INC = [11.0, 12, 14, 21, 22, 29, 47, 75]  # and protected


def _one(x, y, name="v"):
    return pl.DataFrame({name: x}), pl.DataFrame({name: y})


def test_rank_intervals_hand_worked():
    # width 0.25, m = 8: ranks may differ by less than 0.25 * 8 = 2, so h = 1. Sorted protected
    # values 11 12 14 21 22 29 47 75; each interval runs one rank below to one above:
    # y=11 [11,12] x=10 out; y=12 [11,14] x=12 in; y=14 [12,21] x=15 in; y=21 [14,22] x=20 in;
    # y=22 [21,29] x=22 in; y=29 [22,47] x=30 in; y=47 [29,75] x=45 in; y=75 [47,75] x=80 out
    o, p = _one(X_INC, Y_INC)
    res = sdckit.interval_disclosure(o, p, ["v"], width=0.25, interval="rank")
    np.testing.assert_array_equal(res.at_risk, [False, True, True, True, True, True, True, False])
    assert res.share_at_risk == 0.75
    assert res.interval == "rank" and res.interval_info == {"v": {"rank_halfwidth": 1}}
    # width 0.1: 0.8 ranks, h = 0: the interval is the protected value itself (records 2 and 5)
    res0 = sdckit.interval_disclosure(o, p, ["v"], width=0.1, interval="rank")
    np.testing.assert_array_equal(np.flatnonzero(res0.at_risk), [1, 4])
    d = res.to_dict()
    assert d["interval"] == "rank" and d["interval_info"] == {"v": {"rank_halfwidth": 1}}
    assert "rank" in str(res.summary())


def test_rank_intervals_ties_and_missing():
    # protected 5 5 5 1 9 (sorted 1 5 5 5 9). width 0.2: 1 rank, h = 0: a 5 spans its block
    # [5, 5]; width 0.4: h = 1: a 5 spans [1, 9], the 1 [1, 5], the 9 [5, 9]
    y = [5.0, 5, 5, 1, 9]
    x = [5.0, 4, 9, 4, 4]
    o, p = _one(x, y)
    r0 = sdckit.interval_disclosure(o, p, ["v"], width=0.2, interval="rank")
    np.testing.assert_array_equal(r0.at_risk, [True, False, False, False, False])
    r1 = sdckit.interval_disclosure(o, p, ["v"], width=0.4, interval="rank")
    np.testing.assert_array_equal(r1.at_risk, [True, True, True, True, False])
    # a missing protected value is skipped (inside) and not ranked
    o2, p2 = _one([1.0, 2, 3], [1.0, None, 3])
    r2 = sdckit.interval_disclosure(o2, p2, ["v"], width=0.5, interval="rank")
    assert r2.at_risk.all() and r2.interval_info["v"]["rank_halfwidth"] == 0


def test_rank_halfwidth():
    assert [core.rank_halfwidth(w, 10) for w in (0.0, 0.1, 0.15, 0.2, 0.25, 1.0)] == [0, 0, 1, 1, 2, 9]


def _brute_min_entropy(s, d):
    m = len(s)
    best = math.inf
    for cuts in itertools.product([0, 1], repeat=m - 1):
        starts = [0] + [i + 1 for i, c in enumerate(cuts) if c]
        ends = starts[1:] + [m]
        if any(s[b] < s[e - 1] - d for b, e in zip(starts, ends)):  # a group spans more than d
            continue
        H = -sum((e - b) / m * math.log2((e - b) / m) for b, e in zip(starts, ends))
        best = min(best, H)
    return best


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), min_size=1, max_size=9), st.integers(0, 5))
def test_min_entropy_dynamic_programme_equals_enumeration(values, d):
    s = np.sort(np.array(values, dtype=float))
    H, starts = core.min_entropy_groups(s, float(d))
    assert H == pytest.approx(_brute_min_entropy(list(s), float(d)), abs=1e-12)
    ends = np.append(starts[1:], s.size)
    assert starts[0] == 0 and np.all(s[ends - 1] - s[starts] <= d)


def test_entropy_intervals_hand_worked():
    # protected y = 0, 10, ..., 50: sd = sqrt(350) = 18.7083; width 0.1 -> precision
    # d = 2 * 0.1 * 18.7083 = 3.7417. Errors e = x - y = 0, 0.5, 1, 3, 9, 9.5.
    # Groups of span <= d: {0, .5, 1, 3} (span 3) and {9, 9.5}: shares 4/6, 2/6,
    # H = -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.918296 bits (the alternative {0,.5,1},{3},{9,9.5}
    # has H = 1.459). Top group: errors [0, 3] -> records 1-4 at risk (4/6); entropy risk
    # 2^-0.918296 = 0.529134. The sd rule (|e| <= 1.8708) would take records 1-3 only.
    y = [0.0, 10, 20, 30, 40, 50]
    e = [0.0, 0.5, 1, 3, 9, 9.5]
    o, p = _one([a + b for a, b in zip(y, e)], y)
    res = sdckit.interval_disclosure(o, p, ["v"], width=0.1, interval="entropy")
    info = res.interval_info["v"]
    assert info["entropy_bits"] == pytest.approx(0.918296, abs=1e-6)
    assert info["entropy_risk"] == pytest.approx(0.529134, abs=1e-6)
    assert info["n_groups"] == 2 and info["top_group_share"] == pytest.approx(4 / 6)
    assert info["precision"] == pytest.approx(2 * 0.1 * math.sqrt(350))
    assert "top_group_errors" not in info  # a group bound is one record's error
    np.testing.assert_array_equal(res.at_risk, [True, True, True, True, False, False])
    sd_rule = sdckit.interval_disclosure(o, p, ["v"], width=0.1)
    assert sd_rule.n_at_risk == 3
    d = res.to_dict()
    assert d["interval"] == "entropy" and d["interval_info"]["v"]["n_groups"] == 2
    assert "entropy" in str(res.summary())


@pytest.mark.parametrize("interval", ["rank", "entropy"])
def test_unmodified_data_are_fully_at_risk(interval):
    x = np.random.default_rng(1).lognormal(size=(40, 2))
    o = pl.DataFrame({"a": x[:, 0], "b": x[:, 1]})
    res = sdckit.interval_disclosure(o, o, ["a", "b"], width=0.05, interval=interval)
    assert res.share_at_risk == 1.0
    if interval == "entropy":
        assert res.interval_info["a"]["entropy_bits"] == 0.0


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["rank", "entropy"]))
def test_row_order_does_not_matter(seed, interval):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 2))
    y = x + rng.normal(scale=0.3, size=x.shape)
    o, p = pl.DataFrame({"a": x[:, 0], "b": x[:, 1]}), pl.DataFrame({"a": y[:, 0], "b": y[:, 1]})
    perm = rng.permutation(30)
    a = sdckit.interval_disclosure(o, p, ["a", "b"], width=0.1, interval=interval)
    b = sdckit.interval_disclosure(o[perm], p[perm], ["a", "b"], width=0.1, interval=interval)
    np.testing.assert_array_equal(a.at_risk[perm], b.at_risk)
    for v in ("a", "b"):  # the sd (and so the precision) may differ in the last bit with the order
        for key, val in a.interval_info[v].items():
            other = b.interval_info[v][key]
            assert other == pytest.approx(val, rel=1e-12)


def test_bad_interval_and_width():
    o, p = _one(X_INC, Y_INC)
    with pytest.raises(SdcError, match="interval"):
        sdckit.interval_disclosure(o, p, ["v"], interval="quantile")
    with pytest.raises(SdcError, match="share of the records"):
        sdckit.interval_disclosure(o, p, ["v"], width=1.5, interval="rank")
