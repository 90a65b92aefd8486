"""Catalogue of bad and unusual inputs of the synthetic-data risk, and of outputs that name an
input on the command line (issue 36, points 5 and 6).

Every case is judged by properties:

* either a clear :class:`sdckit.SdcError` (of the class written down) whose message holds the
  fragments written down and no record value or category label,
* or a correct result (what is correct is written down: a decided leak, an undecided one with
  its :class:`sdckit.SdcWarning`, ...);
* the caller's frames, or the files a command line reads, are unchanged afterwards;
* the call returns within a bound of its own (no hang).
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import file_digest
from sdckit.cli import main

#: a bound on one call (generous: a loaded machine)
SECONDS = 60
KEYS, NUM = ["region", "sex"], ["age"]
CALL = {"keys": KEYS, "variables": NUM, "sensitive": "secret", "n_attacks": 40, "order": 1, "closeness_sample": 50}


def people(n: int, seed: int) -> pl.DataFrame:
    """Records of one population with distinctive labels (none may appear in a message)."""
    rng = np.random.default_rng(seed)
    region = rng.integers(0, 5, n)
    return pl.DataFrame(
        {
            "region": [f"Rgnlabel{r}" for r in region],
            "sex": rng.choice(["Sexfem", "Sexmal"], n),
            "age": np.round(rng.normal(40, 12, n), 1) + 0.013,
            "secret": rng.choice(["Secrethigh", "Secretlow"], n),
        }
    )


ORI, SYN, CTL = people(300, 1), people(300, 2), people(200, 3)
LABELS = {"Rgnlabel", "Sexfem", "Sexmal", "Secrethigh", "Secretlow"}


def _values(*frames) -> set[str]:
    out = set(LABELS)
    for f in frames:
        if "age" in f.columns and f.schema["age"].is_float():
            out |= {repr(v) for v in f["age"].drop_nulls().to_list()[:50] if np.isfinite(v)}
    return out


def _undecided(res) -> None:
    assert res.leak is None and res.leak_decision["reason"] and res.closeness["control_overlap"] is True


def _decided(res) -> None:
    assert res.leak is False and res.closeness["control_overlap"] is False


def _kept_extra(res) -> None:
    assert res.n_synthetic == 300 and res.leak is False


def _flagged(res) -> None:
    assert res.leak is True and res.closeness["leak"] is True


LIBRARY = [
    # (original, synthetic, control, extra arguments, expected: (error class, fragments) or (check, warning))
    pytest.param(ORI, SYN.drop("sex"), CTL, {}, (sdckit.MissingColumnError, ["synthetic", "sex"]), id="syn-lacks-key"),
    pytest.param(
        ORI, SYN, CTL.drop("age"), {}, (sdckit.MissingColumnError, ["control", "age"]), id="ctl-lacks-variable"
    ),
    pytest.param(
        ORI,
        SYN.with_columns(pl.col("age").cast(pl.String) + "y"),
        CTL,
        {},
        (sdckit.SdcError, ["variables: column age of the synthetic file", "expected numbers"]),
        id="syn-variable-as-text",
    ),  # fmt: skip
    pytest.param(ORI, SYN.head(0), CTL, {}, (sdckit.SdcError, ["synthetic: the file has no records"]), id="syn-empty"),
    pytest.param(ORI, SYN, CTL.head(0), {}, (sdckit.SdcError, ["control: the file has no records"]), id="ctl-empty"),
    pytest.param(ORI.head(0), SYN, CTL, {}, (sdckit.SdcError, ["original: the file has no records"]), id="ori-empty"),
    pytest.param(
        ORI,
        SYN.with_columns(pl.lit(float("inf")).alias("age")),
        CTL,
        {},
        (sdckit.SdcError, ["the synthetic file holds infinite values"]),
        id="syn-infinite",
    ),  # fmt: skip
    pytest.param(
        ORI,
        SYN.with_columns(pl.lit("Extravalue").alias("other")),
        CTL,
        {},
        (_kept_extra, None),
        id="syn-extra-column-ignored",
    ),  # fmt: skip
    pytest.param(
        ORI,
        SYN.with_columns(pl.col("region").str.slice(8).cast(pl.Int64)),
        CTL,
        {},
        (
            sdckit.SdcError,
            [
                "column region: none of its categories in the synthetic file occurs in the original",
                "type String in the original, Int64 in the synthetic file",
            ],
        ),
        id="syn-key-as-integer-codes",
    ),  # fmt: skip
    pytest.param(
        ORI,
        SYN.with_columns(pl.col("sex").str.to_uppercase()),
        CTL,
        {},
        (sdckit.SdcError, ["column sex: none of its categories", "expected the same coding in both files"]),
        id="syn-key-relabelled",
    ),  # fmt: skip
    pytest.param(
        ORI,
        SYN.with_columns(pl.col("age").round(0).cast(pl.Int64)),
        CTL,
        {},
        (_kept_extra, None),
        id="syn-variable-as-integers",
    ),  # fmt: skip
    pytest.param(ORI, SYN, people(900, 4), {}, (_decided, None), id="ctl-larger-than-original"),
    pytest.param(ORI, SYN, people(5, 5), {}, (_decided, None), id="ctl-of-five-records"),
    pytest.param(
        ORI, ORI, ORI, {}, (_undecided, "100.0% of the control records are exact copies"), id="ctl-equal-to-original"
    ),  # fmt: skip
    pytest.param(
        ORI,
        SYN,
        pl.concat([CTL[:140], ORI[:60]]),
        {},
        (_undecided, "of the control records are exact copies of original"),
        id="ctl-overlaps-original",
    ),  # fmt: skip
    pytest.param(ORI, ORI, CTL, {}, (_flagged, None), id="syn-is-a-full-copy"),
    pytest.param(
        ORI,
        SYN,
        sdckit.Scenario(keys=KEYS),
        {"keys": None, "variables": None, "sensitive": None},
        (sdckit.SdcError, ["control: got a Scenario; pass it as scenario=..."]),
        id="scenario-as-control",
    ),  # fmt: skip
    pytest.param(
        ORI,
        sdckit.Scenario(keys=KEYS),
        None,
        {"keys": None, "variables": None, "sensitive": None},
        (sdckit.SdcError, ["synthetic: got a Scenario"]),
        id="scenario-as-synthetic",
    ),  # fmt: skip
    pytest.param(ORI, SYN, CTL, {"significance": 0.0}, (sdckit.SdcError, ["significance"]), id="significance-0"),
    pytest.param(ORI, SYN, CTL, {"significance": 1.0}, (sdckit.SdcError, ["significance"]), id="significance-1"),
    pytest.param(
        ORI, SYN, CTL, {"significance": "0.05"}, (sdckit.SdcError, ["significance"]), id="significance-text"
    ),  # fmt: skip
    pytest.param(ORI, SYN, CTL, {"keys": None}, (sdckit.SdcError, ["keys: no key variables given"]), id="no-keys"),
    pytest.param(ORI, SYN, CTL, {"n_attacks": 0}, (sdckit.SdcError, ["n_attacks"]), id="no-attacks"),
]


@pytest.mark.parametrize("original,synthetic,control,extra,expected", LIBRARY)
def test_synthetic_risk_input(original, synthetic, control, extra, expected):
    frames = [f for f in (original, synthetic, control) if isinstance(f, pl.DataFrame)]
    before = [f.clone() for f in frames]
    call = {**CALL, "seed": 1, **extra}
    if isinstance(control, sdckit.Scenario) or isinstance(synthetic, sdckit.Scenario):
        call = {k: v for k, v in call.items() if v is not None}
    start = time.monotonic()
    what, detail = expected
    args = (original, synthetic) if control is None else (original, synthetic, control)
    if isinstance(what, type) and issubclass(what, Exception):
        with pytest.raises(what) as err:
            sdckit.synthetic_risk(*args, **call)
        msg = str(err.value)
        assert isinstance(err.value, sdckit.SdcError)
        assert all(f in msg for f in detail), msg
        assert not any(v in msg for v in _values(*frames)), msg
    elif detail is not None:
        with pytest.warns(sdckit.SdcWarning, match=detail) as caught:
            res = sdckit.synthetic_risk(*args, **call)
        what(res)
        assert not any(v in str(w.message) for w in caught for v in _values(*frames))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", sdckit.SdcWarning)
            res = sdckit.synthetic_risk(*args, **call)
        what(res)
    assert time.monotonic() - start < SECONDS
    assert all(a.equals(b) for a, b in zip(frames, before))


# ----------------------------------------------------------------------------------------------
# the command line: no output over an input, whatever the flags
# ----------------------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    out = {}
    for name, frame in (("original", ORI), ("synthetic", SYN), ("control", CTL)):
        out[name] = tmp_path / f"{name}.csv"
        frame.write_csv(out[name])
    out["hierarchy"] = tmp_path / "h.csv"
    out["hierarchy"].write_text("Rgnlabel0;North\nRgnlabel1;North\nRgnlabel2;South\nRgnlabel3;South\nRgnlabel4;South\n")
    return out


SYNTHETIC = "synthetic {original} {synthetic} --control {control} --keys region,sex --variables age --n-attacks 20 "
SYNTHETIC += "--no-utility --no-progress"
ASSESS = "assess {original} --keys region,sex --synthetic {synthetic} --no-progress"

CLI = [
    # (the command line, the input it must leave alone, fragments of the error)
    pytest.param(
        SYNTHETIC + " --json {synthetic} --overwrite",
        ["--json:", "is the input file synthetic"],
        id="synthetic-json-over-synthetic",
    ),  # fmt: skip
    pytest.param(
        SYNTHETIC + " --records {control} --overwrite",
        ["--records:", "is the input file control"],
        id="synthetic-records-over-control",
    ),  # fmt: skip
    pytest.param(SYNTHETIC + " --json {original}", ["is the input file original"], id="synthetic-json-over-original"),
    pytest.param(
        SYNTHETIC + " --json {control_symlink} --overwrite",
        ["is the input file control"],
        id="synthetic-json-over-control-by-symlink",
    ),  # fmt: skip
    pytest.param(
        SYNTHETIC + " --records {synthetic_hardlink} --overwrite",
        ["is the input file synthetic"],
        id="synthetic-records-over-synthetic-by-hard-link",
    ),  # fmt: skip
    pytest.param(
        SYNTHETIC + " --json {dir}/./control.csv --overwrite",
        ["is the input file control"],
        id="synthetic-json-over-control-by-another-path",
    ),  # fmt: skip
    pytest.param(
        ASSESS + " --report {dir}/r.html --json {synthetic} --overwrite",
        ["--json:", "is the input file synthetic"],
        id="assess-json-over-synthetic",
    ),  # fmt: skip
    pytest.param(
        ASSESS + " --control {control} --report {control} --overwrite",
        ["--report:", "is the input file control"],
        id="assess-report-over-control",
    ),  # fmt: skip
    pytest.param(
        ASSESS + " --control {control} --report {dir}/r.html --external-report {control}",
        ["--external-report:", "is the input file control"],
        id="assess-external-report-over-control",
    ),  # fmt: skip
    pytest.param(
        "search {original} --keys region,sex --k 2 --hierarchy region={hierarchy} --json {hierarchy} "
        "--overwrite --no-progress",
        ["is the input file hierarchies"],
        id="search-json-over-hierarchy",
    ),  # fmt: skip
    pytest.param(
        "protect {original} --step recode:variables=region,hierarchy={hierarchy} --out {hierarchy} "
        "--overwrite --no-progress",
        ["--out:", "is the input file steps"],
        id="protect-out-over-step-hierarchy",
    ),  # fmt: skip
    pytest.param(
        "recode {original} --keys region,sex --variables region --hierarchy {hierarchy} --out {dir}/o.csv "
        "--save-recipe {hierarchy} --overwrite --no-progress",
        ["--save-recipe:", "is the input file hierarchy"],
        id="recode-recipe-over-hierarchy",
    ),  # fmt: skip
]


@pytest.mark.parametrize("line,fragments", CLI)
def test_command_line_output_over_an_input(line, fragments, files, capsys):
    digests = {k: file_digest(p) for k, p in files.items()}
    paths = {**{k: str(p) for k, p in files.items()}, "dir": str(files["original"].parent)}
    paths["control_symlink"] = str(files["original"].parent / "control-link.csv")
    os.symlink(files["control"], paths["control_symlink"])
    paths["synthetic_hardlink"] = str(files["original"].parent / "synthetic-link.csv")
    os.link(files["synthetic"], paths["synthetic_hardlink"])
    start = time.monotonic()
    assert main(line.format(**paths).split()) == 2
    err = capsys.readouterr().err
    assert all(f in err for f in fragments), err
    assert not any(v in err for v in LABELS), err
    assert time.monotonic() - start < SECONDS
    assert {k: file_digest(p) for k, p in files.items()} == digests


def test_command_line_control_equal_to_original_is_said(files, tmp_path, capsys):
    out = tmp_path / "r.json"
    paths = {k: str(p) for k, p in files.items()}
    assert (
        main((SYNTHETIC + " --json {out}").format(**{**paths, "control": paths["original"], "out": out}).split()) == 0
    )
    captured = capsys.readouterr()
    assert "sdckit: warning: control: 100.0% of the control records are exact copies" in captured.err
    assert "not decidable" in captured.out
    assert not any(v in captured.err for v in LABELS)
    import json

    payload = json.loads(out.read_text())["synthetic_risk"]
    assert payload["leak"] is None and "cannot be decided" in payload["leak_decision"]["reason"]


def test_demo_records_over_its_bundled_data_is_refused(tmp_path, monkeypatch, capsys):
    from sdckit.datasets import example_path

    monkeypatch.chdir(tmp_path)
    before = file_digest(example_path())
    assert main(["demo", "--records", str(example_path()), "--overwrite", "--no-progress"]) == 2
    assert "is the input file data" in capsys.readouterr().err
    assert file_digest(example_path()) == before


def test_catalogue_size():
    assert len(LIBRARY) + len(CLI) + 3 >= 30


def test_assessment_with_the_original_as_control_says_it_cannot_decide():
    sc = sdckit.Scenario(keys=KEYS, numeric_keys=NUM)
    before = ORI.clone()
    res = sdckit.assess(ORI, sc, synthetic={"syn": SYN}, control=ORI, progress=False)
    html = res.to_html()
    assert "Leak of original records found: cannot be decided (100.0% of the control records" in html
    assert "not decidable" in html and not any(v in html for v in ("Secrethigh", "Secretlow"))
    assert next(v for v in res.variants if v.kind == "synthetic").synthetic["leak"] is None
    assert ORI.equals(before)
