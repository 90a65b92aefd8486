"""CTBIL on weighted cell totals (the published tables) beside CTBIL on record counts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sdckit
from sdckit import Scenario, SdcError, information_loss
from sdckit._core.infoloss import contingency_loss


def _files():
    # original (a, a, b, b, c), protected (a, NA, b, b, c); weights (1, 2, 3, 4, 5)
    o = pd.DataFrame({"v": ["a", "a", "b", "b", "c"], "w": [1.0, 2.0, 3.0, 4.0, 5.0]})
    p = pd.DataFrame({"v": ["a", None, "b", "b", "c"], "w": [1.0, 2.0, 3.0, 4.0, 5.0]})
    return o, p


def test_one_way_by_hand():
    # counts: {a:2, b:2, c:1, NA:0} vs {a:1, b:2, c:1, NA:1} -> |1| + |-1| = 2
    # weighted: {a:3, b:7, c:5, NA:0} vs {a:1, b:7, c:5, NA:2} -> |3-1| + |0-2| = 4
    o, p = _files()
    r = information_loss(o, p, "v", scales="nominal", weight="w")
    assert r.ctbil["weighted"] is True and r.ctbil["weight"] == "w"
    assert r.ctbil["total"] == pytest.approx(4.0)
    assert r.ctbil["by_variable"] == {"v": pytest.approx(4.0)}
    assert r.ctbil["normalised"] == pytest.approx(4.0 / 4)  # 4 cells: a, b, c, NA
    assert r.ctbil_unweighted["total"] == 2
    assert r.ctbil_unweighted["weighted"] is False
    d = r.to_dict()
    assert d["ctbil"]["total"] == pytest.approx(4.0) and d["ctbil_unweighted"]["total"] == 2


def test_two_way_by_hand():
    # x = (1, 1, 2, 2), y = (u, v, u, v), weights (10, 20, 30, 40); protected swaps y of
    # records 1 and 2 -> y' = (v, u, u, v).
    # one-way x: unchanged -> 0; one-way y: original u:40 v:60, protected u:50 v:50 -> 20.
    # two-way: original (1,u)=10 (1,v)=20 (2,u)=30 (2,v)=40;
    #          protected (1,v)=10 (1,u)=20 (2,u)=30 (2,v)=40 -> |10-20| + |20-10| = 20.
    # total = 0 + 20 + 20 = 40; on counts every cell keeps its count (each holds 1 record) -> 0.
    o = pd.DataFrame({"x": ["1", "1", "2", "2"], "y": ["u", "v", "u", "v"], "w": [10.0, 20.0, 30.0, 40.0]})
    p = o.assign(y=["v", "u", "u", "v"])
    r = information_loss(o, p, ["x", "y"], scales="nominal", weight="w")
    assert r.ctbil["by_variable"] == {"x": pytest.approx(0.0), "y": pytest.approx(20.0)}
    assert r.ctbil["by_dim"] == {"1": pytest.approx(20.0), "2": pytest.approx(20.0)}
    assert r.ctbil["total"] == pytest.approx(40.0)
    assert r.ctbil_unweighted["total"] == 0


def test_unit_weights_equal_counts_and_no_weight_keeps_counts():
    o, p = _files()
    r1 = information_loss(o.assign(w=1.0), p.assign(w=1.0), "v", scales="nominal", weight="w")
    r0 = information_loss(o, p, "v", scales="nominal")
    assert r1.ctbil["total"] == pytest.approx(r0.ctbil["total"]) == 2
    assert r0.ctbil["weighted"] is False and r0.ctbil_unweighted == r0.ctbil


def test_weight_from_the_scenario():
    o, p = _files()
    sc = Scenario(keys=["v"], weight="w")
    r = information_loss(o, p, "v", scales="nominal", scenario=sc)
    assert r.ctbil["weight"] == "w" and r.ctbil["total"] == pytest.approx(4.0)


def test_protected_file_without_the_weight_uses_the_original_weights():
    o, p = _files()
    r = information_loss(o, p.drop(columns="w"), "v", scales="nominal", weight="w")
    assert r.ctbil["total"] == pytest.approx(4.0)


def test_each_file_uses_its_own_weights():
    # protected weights calibrated: (1, 2, 3, 4, 5) -> (2, 2, 3, 4, 5): a 3 -> 3 (record 2 is NA)
    # original {a:3, b:7, c:5}; protected {a:2, b:7, c:5, NA:2} -> 1 + 2 = 3
    o, p = _files()
    r = information_loss(o, p.assign(w=[2.0, 2.0, 3.0, 4.0, 5.0]), "v", scales="nominal", weight="w")
    assert r.ctbil["total"] == pytest.approx(3.0)


def test_kernel_matches_a_brute_force_oracle():
    rng = np.random.default_rng(3)
    n = 60
    co = rng.integers(-1, 3, size=(n, 3))
    cp = np.where(rng.random((n, 3)) < 0.3, rng.integers(-1, 3, size=(n, 3)), co)
    w_o, w_p = rng.uniform(0.5, 3, n), rng.uniform(0.5, 3, n)
    got = contingency_loss(co, cp, [3, 3, 3], 2, w_o, w_p)
    from itertools import combinations

    want = 0.0
    for s in (1, 2):
        for cols in combinations(range(3), s):
            cells = {tuple(r) for r in co[:, cols]} | {tuple(r) for r in cp[:, cols]}
            for c in cells:
                fo = w_o[(co[:, cols] == c).all(axis=1)].sum()
                fp = w_p[(cp[:, cols] == c).all(axis=1)].sum()
                want += abs(fo - fp)
    assert got["total"] == pytest.approx(want)


def test_bad_weights():
    o, p = _files()
    with pytest.raises(SdcError, match="weight"):
        information_loss(o, p, "v", scales="nominal", weight="nope")
    with pytest.raises(SdcError, match="negative"):
        information_loss(o.assign(w=[1.0, -1, 1, 1, 1]), p, "v", scales="nominal", weight="w")
    with pytest.raises(SdcError, match="protected file"):
        information_loss(o, p.assign(w=[1.0, np.nan, 1, 1, 1]), "v", scales="nominal", weight="w")


def test_summary_names_the_weight():
    o, p = _files()
    text = str(information_loss(o, p, "v", scales="nominal", weight="w").summary())
    assert "weighted by w" in text and "record counts" in text
    assert sdckit.information_loss is information_loss


@pytest.mark.shared_data
def test_eusilc_suppressions_cost_twice_their_weight():
    # suppressing pl030 for the records aged over 80 moves each one's weight from its category
    # to the missing category of the one-way table: the weighted one-way loss is 2 x their
    # weight sum, the unweighted one 2 x their number
    import polars as pl

    from conftest import shared_file

    d = pl.read_csv(shared_file("laeken", "eusilc.csv"))
    old = (d["age"] > 80).to_numpy()
    p = d.with_columns(pl.when(pl.col("age") > 80).then(None).otherwise(pl.col("pl030")).alias("pl030"))
    r = information_loss(d, p, ["db040", "pl030", "rb090"], scales="nominal", weight="rb050")
    w = d["rb050"].to_numpy()
    assert r.ctbil["by_variable"]["pl030"] == pytest.approx(2 * w[old].sum())
    assert r.ctbil_unweighted["by_variable"]["pl030"] == 2 * int(old.sum())
    assert r.ctbil["by_variable"]["db040"] == 0.0
