"""The report's register section (issue 18): assess(..., register_sample=...) declares the file a
register of a subpopulation and adds tau1*, tau2*, tau1, tau2 and theta-hat (approach B)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit import SdcError

KEYS = ["a", "b", "c"]


@pytest.fixture(scope="module")
def files():
    # a population of 60,000 with a membership that depends on a (logistic), a sample at 1/20
    rng = np.random.default_rng(4)
    N = 60_000
    pop = pl.DataFrame(
        {"a": rng.integers(0, 6, N), "b": rng.integers(0, 12, N), "c": rng.integers(0, 20, N), "x": rng.random(N)}
    )
    member = rng.random(N) < 1 / (1 + np.exp(-(-2.5 + 0.5 * pop["a"].to_numpy())))
    sample = pop.filter(pl.Series(rng.random(N) < 0.05))
    return pop.filter(pl.Series(member)), sample


def test_register_section_equals_register_risk(files):
    reg, sample = files
    res = sdckit.assess(reg, sdckit.Scenario(keys=KEYS), register_sample=sample, register_sampling_fraction=0.05)
    got = res.variants[0].register
    direct = sdckit.register_risk(reg, sample, KEYS, sampling_fraction=0.05)
    assert got["n_register_uniques"] == direct.n_register_uniques > 0
    for k in ("tau1_star", "tau2_star", "tau1", "tau2", "theta_hat"):
        assert got[k] == pytest.approx(getattr(direct, k), rel=1e-12), k
    page = res.to_html()
    assert "Register of a subpopulation" in page and "theta-hat" in page
    payload = json.loads(json.dumps(res.to_dict()))
    assert payload["variants"][0]["register"]["n_register"] == reg.height
    assert "register tau1*" in str(res.summary())


def test_no_register_section_without_a_sample(files):
    reg, _ = files
    res = sdckit.assess(reg, sdckit.Scenario(keys=KEYS))
    assert res.variants[0].register is None and "Register of a subpopulation" not in res.to_html()


def test_register_options_errors(files):
    reg, sample = files
    with pytest.raises(SdcError, match="register_sample: a weight or fraction was given without the sample"):
        sdckit.assess(reg, sdckit.Scenario(keys=KEYS), register_sampling_fraction=0.05)
    with pytest.raises(SdcError, match="register_sample: the register measures need categorical keys"):
        sdckit.assess(reg, sdckit.Scenario(numeric_keys=["x"]), register_sample=sample, register_sampling_fraction=0.05)


def test_register_that_cannot_be_estimated_is_left_out_with_its_reason(files):
    reg, sample = files
    res = sdckit.assess(reg, sdckit.Scenario(keys=KEYS), register_sample=sample)  # no weight, no fraction
    assert "skipped" in res.variants[0].register and "left out" in res.to_html()


def test_cli_assess_with_a_register_sample(files, tmp_path, capsys):
    from sdckit.cli import main

    reg, sample = files
    reg.write_csv(tmp_path / "reg.csv")
    sample.write_csv(tmp_path / "smp.csv")
    args = ["assess", str(tmp_path / "reg.csv"), "--keys", "a,b,c", "--report", str(tmp_path / "r.html")]
    rc = main([*args, "--register-sample", str(tmp_path / "smp.csv"), "--register-sampling-fraction", "0.05"])
    assert rc == 0
    assert "Register of a subpopulation" in (tmp_path / "r.html").read_text()
    assert "register tau1*" in capsys.readouterr().out


def test_register_risk_takes_a_scenario_and_ids(files):
    reg, sample = files
    reg = reg.with_row_index("pid")
    plain = sdckit.register_risk(reg, sample, KEYS, sampling_fraction=0.05)
    via = sdckit.register_risk(reg, sample, sampling_fraction=0.05, scenario=sdckit.Scenario(keys=KEYS), id="pid")
    assert via.tau1_star == plain.tau1_star and via.theta_hat == plain.theta_hat
    frame = via.to_frame()
    assert frame.columns[0] == "pid" and frame.height == reg.height


def test_sample_weight_warnings_name_the_parameter(files):
    # the shared input check says "weight:"; register_risk's weight is the sample's
    import warnings

    reg, sample = files
    low = sample.with_columns(w=pl.lit(0.5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sdckit.register_risk(reg, low, KEYS, sample_weight="w")
        except SdcError:
            pass  # weights below 1 may also leave no finite maximum: the warnings came first
    texts = [str(w.message) for w in caught]
    assert any(t.startswith("sample_weight: column w has") and "below 1" in t for t in texts), texts
    assert not any(t.startswith("weight:") for t in texts), texts
