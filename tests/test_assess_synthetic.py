"""A synthetic file as a variant of the assessment: measured as a released file on the risk
rules, with the risk and utility of a synthetic file and the published estimates; on the
risk-utility map every variant is placed by how far its estimates move (a synthetic file pairs
no record with the original, so the loss of every change does not apply to it)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit.cli import main
from sdckit.datasets import EXAMPLE_KEYS, load_example
from sdckit.report.table import decision_text, map_axis

K3 = {"name": "k3", "steps": [{"method": "local_suppression", "parameters": {"k": 3}}]}


@pytest.fixture(scope="module")
def parts():
    """The example cut at random into an original (1,200 records) and a control file; the
    "synthetic" file copies original records (drawn with replacement): a leak."""
    ex = load_example()
    order = np.random.default_rng(1).permutation(ex.height)
    original, control = ex[order[:1200]], ex[order[1200:]]
    leaky = original.sample(n=900, with_replacement=True, seed=3)
    return original, control, leaky


def _scenario(**extra):
    return sdckit.Scenario(keys=list(EXAMPLE_KEYS), weight="weight", household="household", **extra)


@pytest.fixture(scope="module")
def result(parts):
    original, control, leaky = parts
    return sdckit.assess(
        original, _scenario(), recipes=[K3], synthetic={"copies": leaky}, control=control, progress=False
    )


def test_the_synthetic_variant_is_measured_as_a_released_file(parts, result):
    original, control, leaky = parts
    v = result.variant("copies")
    assert v.kind == "synthetic" and v.loss is None and v.loss_by_variable == {}
    # the risk rules on the synthetic file's own keys, as sdckit.individual_risk gives them
    direct = sdckit.individual_risk(leaky, list(EXAMPLE_KEYS), weight="weight", household="household")
    assert v.risk["measure"] == result.original.risk["measure"] == "household rate"
    assert v.risk["value"] == pytest.approx(direct.household_global_risk, rel=1e-12)
    # the synthetic block is synthetic_risk / synthetic_utility of the same call
    sr = sdckit.synthetic_risk(original, leaky, control, keys=list(EXAMPLE_KEYS), seed=0)
    su = sdckit.synthetic_utility(original, leaky, keys=list(EXAMPLE_KEYS), estimates=False)
    assert v.synthetic["risk"] == pytest.approx(sr.risk) and v.synthetic["leak"] is sr.leak is True
    assert v.synthetic["control"] is True
    assert v.synthetic["pmse"] == pytest.approx(su.pmse) and v.synthetic["table_loss"] == pytest.approx(su.loss)
    assert v.synthetic["exact_copy_share"] == 1.0  # every record is a copy of an original record
    # the estimates of a file of another size (no pairing)
    from sdckit.utility.estimates import estimates_of_another_file

    est = estimates_of_another_file(original, leaky, keys=list(EXAMPLE_KEYS), weight="weight")
    assert v.estimates["mean_abs_relative_change"] == pytest.approx(est.to_dict()["mean_abs_relative_change"])
    assert "synthetic" in v.to_dict() and json.dumps(result.to_dict(), default=str)


def test_the_map_places_every_variant_by_the_change_of_its_estimates(result):
    x_of, label, what, _ = map_axis(result)
    assert label.startswith("mean change of the published estimates")
    k3, syn = result.variant("k3"), result.variant("copies")
    assert x_of(k3) == pytest.approx(k3.estimates["mean_abs_relative_change"])
    assert x_of(syn) == pytest.approx(syn.estimates["mean_abs_relative_change"])
    html = result.to_html()
    assert "household rate against the mean change of the estimates, one point per variant" in html
    assert html.count('aria-label="risk against information loss"') == 1
    text = decision_text(result)
    # copies of original records meet the rules on their own records: the leak is what tells
    assert syn.risk["meets_target"] is True
    assert "copies (synthetic) meets the target on the household rate" in text
    assert "a leak of original records was found (the risk rules, measured on its own records, cannot see" in text
    assert "k3 has the least loss" in text  # the masked variants are still compared on their loss
    # without a synthetic variant the map keeps the loss of every change
    plain = sdckit.assess(load_example(), _scenario(), recipes=[K3], progress=False)
    assert map_axis(plain)[1].startswith("loss of every change")


def test_a_synthetic_file_without_weights_or_households(parts):
    original, control, leaky = parts
    bare = leaky.drop("weight", "household")
    res = sdckit.assess(original, _scenario(), synthetic=bare, progress=False)
    v = res.variant("synthetic file")
    assert any("synthetic file: the synthetic file has no weight, household column" in n for n in res.notes)
    direct = sdckit.individual_risk(bare, list(EXAMPLE_KEYS))
    assert v.categorical_risk["global_risk"] == pytest.approx(direct.global_risk, rel=1e-12)
    # the verdict is decided on the household rate, which a file without households lacks
    assert res.original.risk["measure"] == "household rate" and v.risk is None
    assert v.synthetic["control"] is False
    assert "attack risk beyond the control" not in decision_text(res)


def test_bad_synthetic_input(parts):
    original, control, leaky = parts
    with pytest.raises(sdckit.SdcError, match="control: given without a synthetic file"):
        sdckit.assess(original, _scenario(), control=control, progress=False)
    with pytest.raises(sdckit.SdcError, match="synthetic: column.s. region of the scenario's keys are missing"):
        sdckit.assess(original, _scenario(), synthetic=leaky.drop("region"), progress=False)


def test_the_command_line_compares_a_synthetic_file(parts, tmp_path, capsys):
    original, control, leaky = parts
    paths = {}
    for name, frame in (("original", original), ("control", control), ("syn", leaky)):
        paths[name] = tmp_path / f"{name}.csv"
        frame.write_csv(paths[name])
    out = tmp_path / "assess.json"
    keys = ",".join(EXAMPLE_KEYS)
    argv = ["assess", str(paths["original"]), "--keys", keys, "--weight", "weight", "--synthetic", str(paths["syn"])]
    report = tmp_path / "report.html"
    argv += ["--control", str(paths["control"]), "--report", str(report), "--json", str(out), "--no-progress"]
    assert main(argv) == 0
    payload = json.loads(out.read_text())
    (variant,) = [v for v in payload["assessment"]["variants"] if v["kind"] == "synthetic"]
    assert variant["name"] == "syn.csv" and variant["synthetic"]["leak"] is True
    assert "syn.csv (synthetic)" in report.read_text()
    assert pl.read_csv(paths["syn"]).height == 900


def test_the_report_has_a_synthetic_section(result):
    html = result.to_html()
    assert '<section id="synthetic"><h2>Synthetic files: closeness and attacks</h2>' in html
    block = result.variant("copies").synthetic
    assert f"Leak of original records found: {'yes' if block['leak'] else 'no'}" in html
    for name in block["attacks"]:
        assert f"<td>{name}</td>" in html
    plain = sdckit.assess(load_example(), _scenario(), recipes=[K3], progress=False)
    assert 'id="synthetic"' not in plain.to_html()


def test_unweighted_totals_of_a_file_of_another_size_are_on_the_original_scale(parts):
    """A file holding every original record twice (known truth: the same distribution, twice the
    records) has the original's totals once each record stands for n / (2 n) records: every
    estimate, totals included, is unchanged."""
    from sdckit.utility.estimates import estimates_of_another_file

    original = parts[0]
    twice = pl.concat([original, original])
    res = estimates_of_another_file(original, twice, keys=list(EXAMPLE_KEYS), variables=["income"])
    rows = res.to_dict()["rows"]
    assert any(r["kind"] == "total" for r in rows)
    assert all(
        r["relative_change"] == pytest.approx(0.0, abs=1e-12) for r in rows if r.get("relative_change") is not None
    )
