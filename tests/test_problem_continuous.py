"""Continuous-variable and household protection in the workflow: every method runs as an
SdcProblem step and as a recipe step, followed by the continuous-variable risk and loss
measures (seed 000's interval disclosure, seed 001's confidentiality plot)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest

import sdckit
from conftest import DATA
from sdckit.cli import main

CASC = DATA / "sdcmicro" / "CASCrefmicrodata.csv"
VARIABLES = ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL"]

STEPS = {
    "additive noise": ("add_noise", {"method": "additive", "noise": 50, "seed": 1}),
    "correlated2 noise": ("add_noise", {"method": "correlated2", "delta": 0.3, "seed": 2}),
    "MDAV": ("microaggregation", {"method": "mdav", "group_size": 3}),
    "rank swapping": ("rank_swap", {"swap_range": 5, "seed": 3}),
}


@pytest.fixture(scope="module")
def casc() -> pd.DataFrame:
    return pd.read_csv(CASC)


@pytest.mark.parametrize("label", sorted(STEPS))
def test_each_method_end_to_end_on_the_workflow(casc, label):
    method, params = STEPS[label]
    sc = sdckit.Scenario(numeric_keys=VARIABLES)
    p = sdckit.SdcProblem(casc, sc).apply(method, **params)
    protected = p.data
    assert isinstance(protected, pd.DataFrame) and protected.shape == casc.shape
    assert list(protected.columns) == list(casc.columns)
    others = [c for c in casc.columns if c not in VARIABLES]
    pd.testing.assert_frame_equal(protected[others], casc[others])
    # seed 000: interval disclosure; the workflow's figure is the public measure's
    idr = sdckit.interval_disclosure(casc, protected, VARIABLES)
    assert p.measures["share_interval_risk"] == pytest.approx(idr.share_at_risk, abs=0)
    assert idr.share_at_risk < 1.0  # every method moves values out of some intervals
    assert p.baseline["share_interval_risk"] == 1.0 and p.baseline["il1s"] == 0.0
    assert p.measures["il1s"] > 0
    # seed 001: the confidentiality plot of the protected file
    cp = sdckit.confidentiality_plot(casc, protected, VARIABLES)
    assert cp.n == len(casc) and np.isfinite(cp.delta)
    # a recipe replays the step to the same file
    again = sdckit.SdcProblem.from_recipe(casc, p.to_recipe())
    pd.testing.assert_frame_equal(again.data, protected)


def test_mdav_keeps_means_in_the_workflow(casc):
    p = sdckit.SdcProblem(casc, sdckit.Scenario(numeric_keys=VARIABLES)).apply("microaggregation", group_size=3)
    np.testing.assert_allclose(p.data[VARIABLES].mean().to_numpy(), casc[VARIABLES].mean().to_numpy(), rtol=1e-12)


def _population(n_households: int = 600, seed: int = 5) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 6, n_households)
    region = rng.integers(0, 4, n_households)
    district = region * 10 + rng.integers(0, 5, n_households)
    hid = np.repeat(np.arange(n_households), size)
    return pl.DataFrame(
        {
            "hid": hid,
            "region": np.repeat(region, size),
            "district": np.repeat(district, size),
            "hsize": np.repeat(size, size),
            "age": rng.integers(0, 90, hid.size) // 10,
            "sex": rng.integers(1, 3, hid.size),
            "income": rng.gamma(2.0, 1000.0, hid.size),
        }
    )


def test_record_swap_in_the_workflow():
    pop = _population()
    sc = sdckit.Scenario(keys=["hsize", "age", "sex"], household="hid")
    p = sdckit.SdcProblem(pop, sc).apply("record_swap", geography=["region", "district"], swap_rate=0.1, seed=4)
    out = p.data
    assert out.drop("region", "district").equals(pop.drop("region", "district"))
    # geography moves household by household: the (region, district) pairs stay nested
    pairs = out.select("hid", "region", "district").unique()
    assert pairs["hid"].n_unique() == pop["hid"].n_unique()
    assert (pairs["district"] // 10 == pairs["region"]).all()
    assert p.history[0].result.n_changed["district"] > 0
    again = sdckit.SdcProblem.from_recipe(pop, p.to_recipe())
    assert again.data.equals(out)


def test_cli_continuous_steps(tmp_path, capsys):
    out, recipe = tmp_path / "noise.csv", tmp_path / "noise.yaml"
    args = ["noise", str(CASC), "--variables", ",".join(VARIABLES), "--noise", "50", "--seed", "9"]
    assert main([*args, "--out", str(out), "--save-recipe", str(recipe)]) == 0
    text = capsys.readouterr().out
    assert "share in 5 % sd interval" in text and "IL1s" in text
    out2 = tmp_path / "again.csv"
    assert main(["protect", str(CASC), "--recipe", str(recipe), "--out", str(out2)]) == 0
    assert out.read_bytes() == out2.read_bytes()
    out3 = tmp_path / "mdav.csv"
    assert main(["microaggregate", str(CASC), "--variables", ",".join(VARIABLES), "--out", str(out3)]) == 0
    mdav = pl.read_csv(out3)
    assert mdav.select(VARIABLES).unique().height <= len(mdav) // 3
    out4 = tmp_path / "rank.csv"
    args = ["swap", str(CASC), "--variables", "AGI", "--swap-range", "5", "--top-percent", "0", "--bottom-percent", "0"]
    assert main([*args, "--seed", "1", "--out", str(out4)]) == 0  # without pooling: a permutation
    swapped, original = pl.read_csv(out4), pl.read_csv(CASC)
    assert sorted(swapped["AGI"].to_list()) == sorted(original["AGI"].to_list())
    assert main(["swap", str(CASC), "--out", str(tmp_path / "x.csv")]) == 2
    assert "--geography" in capsys.readouterr().err
