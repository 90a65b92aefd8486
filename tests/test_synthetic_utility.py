"""synthetic_utility: pMSE and the table distances by hand, an independent sample against a
distorted file, the estimates of a file of another size."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit._core import synthetic as K


def test_pmse_hand_example():
    # category a: 3 original + 1 synthetic, b: 1 original + 3 synthetic; the saturated logit
    # gives the synthetic share of each category: 1/4 (a), 3/4 (b); c = 4/8 = 1/2
    # pMSE = (4 (1/4 - 1/2)^2 + 4 (3/4 - 1/2)^2) / 8 = 1/16; E0 = (k-1)(1-c)^2 c / N = 1/64
    ori = pl.DataFrame({"g": ["a", "a", "a", "b"]})
    syn = pl.DataFrame({"g": ["a", "b", "b", "b"]})
    u = sdckit.synthetic_utility(ori, syn, keys="g", estimates=False)
    assert u.pmse == pytest.approx(1 / 16, rel=1e-4)
    assert u.pmse_expected == pytest.approx(1 / 64)
    assert u.s_pmse == pytest.approx(4, rel=1e-4)
    assert u.n_parameters == 2
    # one-way TV: |3/4 - 1/4| = 1/2 per category, halved and summed: 1/2
    assert u.one_way[0]["tv"] == pytest.approx(0.5) and u.loss == pytest.approx(0.5)


def test_pmse_kernel_without_signal():
    x = np.column_stack([np.ones(6), [0, 1, 0, 1, 0, 1]])
    r = K.pmse(x, np.array([0, 0, 0, 1, 1, 1]))
    # each category holds 1 or 2 of each file: the fitted shares are the files' shares within it
    # (a: 0,2,4 -> labels 0,0,1 -> 1/3; b: 1,3,5 -> 0,1,1 -> 2/3): pMSE = 6 (1/6)^2 / 6 = 1/36
    assert r["pmse"] == pytest.approx(1 / 36, rel=1e-4)


def test_numeric_bins_and_two_way_tables():
    ori = pl.DataFrame({"g": ["a", "a", "b", "b"], "x": [1.0, 2.0, 3.0, 4.0]})
    syn = pl.DataFrame({"g": ["a", "b", "b", "b"], "x": [1.0, 2.0, 3.0, 4.0]})
    u = sdckit.synthetic_utility(ori, syn, keys="g", variables="x", bins=2, estimates=False)
    # x in 2 intervals at the original's median 2.5: the same counts in both files: TV 0
    assert [t["variables"] for t in u.tables] == [["g"], ["x"], ["g", "x"]]
    assert u.one_way[1]["tv"] == 0
    # g x x: original a-low 2, b-high 2; synthetic a-low 1, b-low 1, b-high 2: TV = (1/4 + 1/4) / 2
    assert u.two_way[0]["tv"] == pytest.approx(0.25)


def _draw(n, rng, shift=0.0):
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    x = rng.normal(10 + shift * (g == "a"), 2, n)
    return pl.DataFrame({"g": g, "h": rng.choice(["u", "v"], size=n), "x": x})


def test_independent_sample_is_useful_and_a_distorted_file_is_not():
    rng = np.random.default_rng(11)
    ori, same, bad = _draw(2000, rng), _draw(3000, rng), _draw(3000, rng, shift=3.0)
    good = sdckit.synthetic_utility(ori, same, keys=["g", "h"], variables="x")
    poor = sdckit.synthetic_utility(ori, bad, keys=["g", "h"], variables="x")
    assert good.s_pmse < 3 < poor.s_pmse
    assert good.loss < poor.loss
    # the estimates: shares and means of the independent sample are close
    shares = [r for r in good.estimates.rows if r["kind"] == "share"]
    assert shares and all(abs(r["relative_change"]) < 0.15 for r in shares)
    json.dumps(good.to_dict())
    assert good.to_frame().height == len(good.tables)


def test_bad_input():
    ori = pl.DataFrame({"g": ["a", "b"], "x": [1.0, 2.0]})
    with pytest.raises(sdckit.SdcError, match="keys: no variable"):
        sdckit.synthetic_utility(ori, ori)
    with pytest.raises(sdckit.SdcError, match="order"):
        sdckit.synthetic_utility(ori, ori, keys="g", order=0)
    with pytest.raises(sdckit.MissingColumnError):
        sdckit.synthetic_utility(ori, ori.drop("x"), keys="g", variables="x")


def test_duckdb_gives_the_in_memory_numbers(tmp_path):
    rng = np.random.default_rng(5)
    ori, syn = _draw(500, rng), _draw(700, rng, shift=1.0)
    ori = ori.with_columns(pl.when(pl.col("x") > 12).then(None).otherwise(pl.col("h")).alias("h"))  # missing keys
    ori.write_parquet(tmp_path / "o.parquet")
    syn.write_parquet(tmp_path / "s.parquet")
    mem = sdckit.synthetic_utility(ori, syn, keys=["g", "h"], estimates=False)
    duck = sdckit.synthetic_utility(str(tmp_path / "o.parquet"), str(tmp_path / "s.parquet"), keys=["g", "h"],
                                    estimates=False, engine="duckdb")  # fmt: skip
    a, b = mem.to_dict(), duck.to_dict()
    assert a["tables"] == b["tables"]
    assert a["pmse"] == pytest.approx(b["pmse"], rel=1e-9) and a["n_original"] == b["n_original"] == 500
    with pytest.raises(sdckit.SdcError, match="needs the records in memory"):
        sdckit.synthetic_utility(str(tmp_path / "o.parquet"), str(tmp_path / "s.parquet"), keys="g", variables="x",
                                 estimates=False, engine="duckdb")  # fmt: skip
