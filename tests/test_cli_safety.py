"""The command line never writes over its input or one output over another, and writes
outputs atomically."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from conftest import file_digest
from sdckit.cli import main

KEYS = "Residence,Gender,Education,Labor"


@pytest.mark.parametrize("option", ["--records", "--json"])
def test_output_over_the_input_is_refused(data_csv, option, capsys):
    before = file_digest(data_csv)
    rc = main(["freq", str(data_csv), "--keys", KEYS, option, str(data_csv)])
    assert rc == 2
    assert "is the input file" in capsys.readouterr().err
    assert file_digest(data_csv) == before


def test_output_over_the_input_by_another_path_is_refused(data_csv, capsys):
    other = data_csv.parent / "." / data_csv.name
    assert main(["risk", str(data_csv), "--keys", KEYS, "--records", str(other)]) == 2


def test_two_outputs_to_one_file_are_refused(data_csv, tmp_path, capsys):
    out = tmp_path / "out.csv"
    rc = main(["freq", str(data_csv), "--keys", KEYS, "--json", str(out), "--records", str(out)])
    assert rc == 2 and "also the --json file" in capsys.readouterr().err
    assert not out.exists()


def test_interrupted_write_leaves_no_file(data_csv, tmp_path, monkeypatch):
    """A write that dies half way (simulated: the writer puts half a file down, then fails)
    leaves neither the output nor a temporary file behind."""
    out = tmp_path / "records.csv"

    def half_then_fail(self, file, **kwargs):
        Path(file).write_text("fk,Fk\n1,")
        raise KeyboardInterrupt

    monkeypatch.setattr(pl.DataFrame, "write_csv", half_then_fail)
    assert main(["freq", str(data_csv), "--keys", KEYS, "--records", str(out)]) == 130  # interrupted
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["data.csv"]


def test_existing_output_replaced_only_by_a_complete_file(data_csv, tmp_path, monkeypatch):
    out = tmp_path / "records.csv"
    out.write_text("old,complete\n1,2\n")

    def fail(self, file, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pl.DataFrame, "write_csv", fail)
    assert main(["freq", str(data_csv), "--keys", KEYS, "--records", str(out), "--overwrite"]) == 2
    assert out.read_text() == "old,complete\n1,2\n"


def test_normal_run_writes_both_outputs(data_csv, tmp_path):
    rc = main(
        [
            "freq",
            str(data_csv),
            "--keys",
            KEYS,
            "--json",
            str(tmp_path / "a.json"),
            "--records",
            str(tmp_path / "r.csv"),
        ]
    )
    assert rc == 0
    assert pl.read_csv(tmp_path / "r.csv").height == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "data.csv", "r.csv"]
