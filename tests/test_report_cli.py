"""`sdckit assess`, `sdckit demo`'s report and SdcProblem.report."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import sdckit
from conftest import DATA
from sdckit.cli import main

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
KEYS = "urbrur,roof,walls,water,electcon,relat,sex"


def test_cli_assess_with_recipes_and_config(tmp_path, capsys):
    recipe = tmp_path / "k3.json"
    recipe.write_text(json.dumps({"steps": [{"method": "local_suppression", "parameters": {"k": 3}}]}))
    config = tmp_path / "scenario.json"
    config.write_text(json.dumps({"keys": KEYS.split(","), "weight": "sampling_weight", "household": "ori_hid"}))
    report, js = tmp_path / "report.html", tmp_path / "report.json"
    args = ["assess", str(TESTDATA), "--config", str(config), "--numeric", "income,expend"]
    assert main([*args, "--recipe", str(recipe), "--report", str(report), "--json", str(js)]) == 0
    assert "Report written to" in capsys.readouterr().out
    html = report.read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    payload = json.loads(js.read_text())
    assert payload["assessment"]
    # never over an input, a missing folder is a clear error and leaves nothing behind
    assert main([*args, "--report", str(TESTDATA)]) == 2
    missing = tmp_path / "nowhere" / "r.html"
    assert main([*args, "--report", str(missing)]) == 2
    assert not missing.parent.exists()
    assert main(["assess", str(TESTDATA), "--report", str(tmp_path / "x.html")]) == 2
    assert "--keys" in capsys.readouterr().err


def test_demo_writes_its_report(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-progress"]) == 0
    out = capsys.readouterr().out
    report = tmp_path / "sdckit-demo-report.html"
    assert report.exists() and str(report) in out
    assert main(["demo", "--no-progress"]) == 0  # a second run replaces its own report, and says so
    assert "replaces the report of an earlier sdckit demo" in capsys.readouterr().out


def test_problem_report_has_one_variant_per_step(tmp_path):
    df = pd.read_csv(TESTDATA)
    sc = sdckit.Scenario(keys=KEYS.split(","), weight="sampling_weight", household="ori_hid")
    p = sdckit.SdcProblem(df, sc).apply("local_suppression", k=2).apply("local_suppression", k=3)
    path = tmp_path / "steps.html"
    res = p.report(path)
    assert path.exists() and "<figure" in path.read_text()
    assert res.to_dict()


def test_report_needs_a_scenario_with_keys():
    df = pd.read_csv(TESTDATA)
    with pytest.raises(sdckit.SdcError):
        sdckit.assess(df, sdckit.Scenario())
