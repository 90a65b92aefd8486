"""The ``sdckit`` command line: summary, JSON, per-record output, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import polars as pl
import pytest

from conftest import s002_table
from sdckit.cli import main


@pytest.fixture
def s002_csv(tmp_path):
    path = tmp_path / "s002.csv"
    s002_table().write_csv(path)
    return path


def test_freq_json_and_records(s002_csv, tmp_path, capsys):
    out_json, out_rec = tmp_path / "r.json", tmp_path / "r.csv"
    code = main(
        [
            "freq",
            str(s002_csv),
            "--keys",
            "Residence,Gender,Education,Labor",
            "--weight",
            "w",
            "--k",
            "2,3",
            "--json",
            str(out_json),
            "--records",
            str(out_rec),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "sample uniques (f_k = 1)" in printed and "k-anonymity" in printed
    payload = json.loads(out_json.read_text())
    # spec A.2 example: V_2 = 4, V_3 = 10; spec 0.5: 4 sample uniques, 7 keys
    assert payload["k_anonymity"]["n_violations"] == {"2": 4, "3": 10}
    assert payload["frequencies"]["n_sample_uniques"] == 4
    assert payload["frequencies"]["n_patterns"] == 7
    rec = pl.read_csv(out_rec)
    assert rec.columns == ["fk", "Fk", "violates_2", "violates_3"]
    assert rec["Fk"].to_list() == [360, 360, 215, 152, 186, 152, 180, 215, 262, 262]


def test_freq_parquet_records(s002_csv, tmp_path):
    out = tmp_path / "r.parquet"
    assert main(["freq", str(s002_csv), "--keys", "Residence,Gender,Education,Labor", "--records", str(out)]) == 0
    assert pl.read_parquet(out)["fk"].to_list() == [2, 2, 1, 2, 1, 2, 1, 1, 2, 2]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--keys", "Residence,Age"], "--keys: column(s) Age not found in the data; available columns: Residence"),
        (["--keys", "Residence,Gender", "--weight", "Health"], "weight"),
        (["--keys", "Residence,Gender", "--alpha", "2"], "alpha"),
        (["--keys", "Residence,Gender", "--k", "0"], "k: got"),
        (["--keys", ","], "--keys"),
    ],
)
def test_freq_bad_input_one_line(s002_csv, capsys, args, fragment):
    code = main(["freq", str(s002_csv), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("sdckit: error: ") and fragment in err
    assert err.count("\n") == 1  # one line


def test_missing_file(tmp_path, capsys):
    assert main(["freq", str(tmp_path / "nope.csv"), "--keys", "a"]) == 2
    assert "nope.csv" in capsys.readouterr().err


def test_progress_bar(s002_csv, capsys):
    assert main(["freq", str(s002_csv), "--keys", "Residence,Gender", "--progress"]) == 0
    assert "4/4" in capsys.readouterr().err


def test_demo(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the demo writes its report in the current folder
    out = tmp_path / "demo.json"
    assert main(["demo", "--json", str(out), "--no-progress"]) == 0
    payload = json.loads(out.read_text())
    assert payload["frequencies"]["n"] == 1915
    assert set(payload["k_anonymity"]["n_violations"]) == {"2", "3", "5"}
    # the next step is named: the web application
    assert 'pip install "sdckit[app]" && sdckit app your-file.csv' in capsys.readouterr().out


def test_console_script_runs():
    """The installed entry point (python -m sdckit.cli) answers --help."""
    res = subprocess.run([sys.executable, "-m", "sdckit.cli", "freq", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "--keys" in res.stdout
