"""Recipes that name files (issue 36, point 8) and the bounded reader of recipe and scenario
files (points 9, 10): paths relative to the recipe's folder, checksums recorded and checked,
the limits exactly at their bounds."""

from __future__ import annotations

import hashlib
import json
import os
import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit.cli import main
from sdckit.workflow import _files
from sdckit.workflow.problem import read_recipe, write_recipe

HIERARCHY = "1;low;*\n2;low;*\n3;mid;*\n4;mid;*\n5;high;*\n"


@pytest.fixture
def project(tmp_path):
    """data.csv and h/levels.csv in a project folder; recipes go to out/."""
    (tmp_path / "h").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "h" / "levels.csv").write_text(HIERARCHY, encoding="utf-8")
    n = 60
    pl.DataFrame(
        {"level": [1 + i % 5 for i in range(n)], "sex": [1 + i % 2 for i in range(n)], "x": list(range(n))}
    ).write_csv(tmp_path / "data.csv")
    return tmp_path


def _problem():
    data = pl.read_csv("data.csv")
    sc = sdckit.Scenario(keys=["level", "sex"])
    return data, sdckit.SdcProblem(data, sc).apply(
        "global_recode", variables=["level"], hierarchy="h/levels.csv", level=1
    )


def test_a_written_recipe_names_the_file_beside_it_with_its_checksum(project, monkeypatch):
    monkeypatch.chdir(project)
    data, problem = _problem()
    in_memory = problem.to_recipe(project / "out" / "r.json")
    digest = hashlib.sha256(HIERARCHY.encode()).hexdigest()
    # the dict keeps the path as given; the file names it from its own folder
    assert in_memory["steps"][0]["parameters"]["hierarchy"] == "h/levels.csv"
    assert in_memory["files"] == {"h/levels.csv": {"sha256": digest, "bytes": len(HIERARCHY)}}
    written = json.loads((project / "out" / "r.json").read_text(encoding="utf-8"))
    assert written["steps"][0]["parameters"]["hierarchy"] == "../h/levels.csv"
    assert written["files"] == {"../h/levels.csv": {"sha256": digest, "bytes": len(HIERARCHY)}}
    # replayed from another folder: the same file is read, the same data come out
    monkeypatch.chdir(project / "h")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = sdckit.SdcProblem.from_recipe(data, project / "out" / "r.json")
    assert again.data.equals(problem.data)
    assert again.data["level"].to_list() != data["level"].to_list()
    # the dict replays in the folder it was made in
    monkeypatch.chdir(project)
    assert sdckit.SdcProblem.from_recipe(data, in_memory).data.equals(problem.data)


def test_the_checksum_is_of_the_file_as_applied(project, monkeypatch):
    """A file edited after the step was applied: the recipe records what the step read, so the
    recipe written later refuses to replay on the edited file."""
    monkeypatch.chdir(project)
    data, problem = _problem()
    (project / "h" / "levels.csv").write_text(HIERARCHY.replace("5;high", "5;mid"), encoding="utf-8")
    problem.to_recipe(project / "out" / "r.yaml")
    with pytest.raises(sdckit.SdcError, match=r"levels\.csv has changed since the recipe was written"):
        sdckit.SdcProblem.from_recipe(data, project / "out" / "r.yaml")


def test_the_command_line_replays_a_saved_recipe_from_another_folder(project, monkeypatch):
    monkeypatch.chdir(project)
    step = "recode:variables=level,hierarchy=h/levels.csv,level=1"
    args = ["--keys", "level,sex", "--no-progress"]
    data = str(project / "data.csv")  # absolute: the input check runs after the test left the folder
    assert main(["protect", data, "--step", step, "--out", "out/a.csv", "--save-recipe", "out/r.yaml", *args]) == 0
    text = (project / "out" / "r.yaml").read_text(encoding="utf-8")
    assert "hierarchy: ../h/levels.csv" in text and hashlib.sha256(HIERARCHY.encode()).hexdigest() in text
    monkeypatch.chdir(project / "out")
    assert main(["protect", data, "--recipe", str(project / "out" / "r.yaml"), "--out", "b.csv", "--no-progress"]) == 0
    assert (project / "out" / "a.csv").read_bytes() == (project / "out" / "b.csv").read_bytes()


def test_a_search_recipe_written_records_the_checksum(project, monkeypatch):
    """A recipe made elsewhere (a search's, a dict) gets the checksums when it is written."""
    monkeypatch.chdir(project)
    recipe = {
        "steps": [
            {"method": "global_recode", "parameters": {"variables": ["level"], "hierarchy": "h/levels.csv", "level": 1}}
        ]
    }
    write_recipe(recipe, project / "out" / "r.json")
    written = json.loads((project / "out" / "r.json").read_text(encoding="utf-8"))
    assert written["files"]["../h/levels.csv"]["sha256"] == hashlib.sha256(HIERARCHY.encode()).hexdigest()
    assert "files" not in recipe  # the caller's dict is not changed


def test_yaml_is_written_without_aliases(tmp_path):
    """A list shared by two places is written twice (no anchors, which the reader bounds)."""
    keys = ["level", "sex"]
    recipe = {
        "scenario": {"keys": keys},
        "steps": [{"method": "local_suppression", "parameters": {"keys": keys, "k": 2}}],
    }
    path = write_recipe(recipe, tmp_path / "r.yaml")
    text = path.read_text(encoding="utf-8")
    assert "&" not in text and "*" not in text
    assert read_recipe(path)["steps"][0]["parameters"]["keys"] == keys


def test_a_utf16_hierarchy_recodes_as_its_utf8_copy(project):
    data = pl.read_csv(project / "data.csv")
    (project / "h" / "u16.csv").write_bytes(HIERARCHY.encode("utf-16"))
    (project / "h" / "bom.csv").write_bytes(b"\xef\xbb\xbf" + HIERARCHY.encode())
    results = [
        sdckit.global_recode(data, variables=["level"], hierarchy=project / "h" / name, level=2).data
        for name in ("levels.csv", "u16.csv", "bom.csv")
    ]
    assert results[0]["level"].unique().to_list() == ["*"]
    assert all(r.equals(results[0]) for r in results[1:])


def _nested_json(depth: int) -> str:
    return '{"steps": []' + ', "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.parametrize("ext", ["json", "yaml"])
def test_nesting_is_refused_from_one_level_over_the_bound(tmp_path, ext):
    """Nested exactly MAX_NESTING levels: read; one more: refused (JSON is YAML, too)."""
    ok, deep = tmp_path / f"ok.{ext}", tmp_path / f"deep.{ext}"
    ok.write_text(_nested_json(_files.MAX_NESTING), encoding="utf-8")
    deep.write_text(_nested_json(_files.MAX_NESTING + 1), encoding="utf-8")
    assert _files.read_config_file(ok)["steps"] == []
    with pytest.raises(sdckit.SdcError, match=rf"deep\.{ext} is nested more than 64 levels"):
        _files.read_config_file(deep)


def test_aliases_are_counted_at_their_expanded_size(tmp_path):
    """1,000 values repeated 1,000 times through aliases: 10^6 + the containers, refused; a
    tenth of it read."""
    values = ",".join(["0"] * 999)

    def write(name: str, repeats: int):
        text = f"a: &a [{values}]\nb: [" + ",".join(["*a"] * repeats) + "]\nsteps: []\n"
        (tmp_path / name).write_text(text, encoding="utf-8")
        return tmp_path / name

    assert len(_files.read_config_file(write("small.yaml", 100))["b"]) == 100
    with pytest.raises(sdckit.SdcError, match=r"big\.yaml holds more than 1,000,000 values once its aliases"):
        _files.read_config_file(write("big.yaml", 1000))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab[]{}",:\\ \n', max_size=6),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(alphabet="ab[]{}", max_size=3), children, max_size=3)
    ),
    max_leaves=20,
)


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(json_values, st.sampled_from([None, 0, 2]))
def test_the_json_depth_scan_equals_the_parsed_depth(value, indent):
    """The linear scan that bounds JSON nesting before parsing gives the parsed depth, brackets
    inside strings (escaped quotes too) left out."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert _files._json_shape(text)[0] == _depth(value)


def test_the_reader_reads_no_more_than_the_bound(tmp_path, monkeypatch):
    """A file over the bound is refused after reading the bound and one byte, not the file."""
    path = tmp_path / "r.json"
    path.write_bytes(b"{}" + b" " * 2000)
    monkeypatch.setattr(_files, "MAX_FILE_BYTES", 1000)
    with pytest.raises(sdckit.SdcError, match=r"r\.json is larger than 1,000 bytes"):
        _files.read_config_file(path)
    assert os.path.getsize(path) == 2002


def test_an_absolute_path_stays_absolute(project, monkeypatch):
    """A file given by its absolute path is named so in the written recipe (it does not move with
    the recipe), with its checksum."""
    monkeypatch.chdir(project / "h")
    absolute = str(project / "h" / "levels.csv")
    recipe = {
        "steps": [
            {"method": "global_recode", "parameters": {"variables": ["level"], "hierarchy": absolute, "level": 1}}
        ]
    }
    write_recipe(recipe, project / "out" / "r.json")
    written = json.loads((project / "out" / "r.json").read_text(encoding="utf-8"))
    assert written["steps"][0]["parameters"]["hierarchy"] == absolute
    assert set(written["files"]) == {absolute}


@pytest.mark.parametrize("out", ["h/levels.csv", "levels-link.csv"])
def test_no_output_over_a_hierarchy_file_a_recipe_names(project, monkeypatch, capsys, out):
    """A file named inside a recipe is an input of ``sdckit protect --recipe``: an output over
    it (or over a link to it) is refused, with --overwrite too, and the file is unchanged."""
    monkeypatch.chdir(project)
    _, problem = _problem()
    problem.to_recipe(project / "out" / "r.yaml")
    os.symlink(project / "h" / "levels.csv", project / "levels-link.csv")
    data = str(project / "data.csv")
    assert main(["protect", data, "--recipe", "out/r.yaml", "--out", out, "--overwrite", "--no-progress"]) == 2
    assert "is the input file recipe" in capsys.readouterr().err
    assert (project / "h" / "levels.csv").read_text(encoding="utf-8") == HIERARCHY
