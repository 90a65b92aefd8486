"""Recipes written by earlier sdckit versions replay to the same protected data (issue 36,
point 4): every recipe in ``tests/data/recipes/`` (origin in ``tests/data/README.md``), YAML
and JSON, through ``SdcProblem.from_recipe``, ``apply_recipe`` and ``sdckit protect``."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import pandas as pd
import polars as pl
import pytest

import sdckit
from conftest import DATA, shared_file
from sdckit.cli import main
from sdckit.workflow.problem import read_recipe

RECIPES = DATA / "recipes"
EXPECTED = json.loads((RECIPES / "expected.json").read_text(encoding="utf-8"))["recipes"]

_spec = importlib.util.spec_from_file_location("make_recipes", RECIPES / "make_recipes.py")
make_recipes = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(make_recipes)  # type: ignore[union-attr]


def _path(which: str):
    return shared_file("laeken", "eusilc.csv") if which == "eusilc" else DATA / "sdcmicro" / "testdata.csv"


def _data(entry: dict):
    path = _path(entry["data"])
    return pd.read_csv(path) if entry["reader"] == "pandas" else pl.read_csv(path)


def _cases():
    for name, entry in EXPECTED.items():
        marks = [pytest.mark.shared_data] if entry["data"] == "eusilc" else []
        for ext in ("yaml", "json"):
            yield pytest.param(name, ext, id=f"{entry['file']}.{ext}", marks=marks)


def _digest(frame) -> str:
    return hashlib.sha256(make_recipes.canonical_csv(frame)).hexdigest()


@pytest.mark.parametrize(("name", "ext"), list(_cases()))
def test_an_earlier_recipe_replays_to_the_same_data(name, ext):
    entry = EXPECTED[name]
    recipe = RECIPES / f"{entry['file']}.{ext}"
    problem = sdckit.SdcProblem.from_recipe(_data(entry), recipe)
    assert _digest(problem.data) == entry["sha256"]
    # the same steps applied to a problem built from the recipe's scenario
    scenario = sdckit.Scenario.from_dict(read_recipe(recipe)["scenario"])
    again = sdckit.SdcProblem(_data(entry), scenario).apply_recipe(recipe)
    assert _digest(again.data) == entry["sha256"]


@pytest.mark.shared_data
def test_pram_of_a_float_coded_key_in_the_workflow_as_alone():
    """pl030 read by pandas is float64 with NaN (2,720 persons under 16): a categorical key of
    the scenario, PRAMed in the workflow exactly as pram() alone does, and its loss measured as
    categories (the chance of a changed category) with the published matrix."""
    data = pd.read_csv(shared_file("laeken", "eusilc.csv"))
    assert data["pl030"].dtype == "float64" and data["pl030"].isna().sum() == 2720
    sc = sdckit.Scenario(keys=["db040", "hsize", "rb090", "age", "pl030", "pb220a"], weight="rb050")
    alone = sdckit.pram(data, variables=["pl030"], seed=36)
    problem = sdckit.SdcProblem(data, sc).apply("pram", variables=["pl030"], seed=36)
    pd.testing.assert_frame_equal(problem.data, alone.data)
    lam = problem.measures["lambda_j"]["pl030"]
    loss = sdckit.variant_loss(
        data, alone.data, ["pl030"], scales={"pl030": "nominal"}, pram={"pl030": alone.details["pram"]["pl030"]}
    )
    assert lam == pytest.approx(loss.loss_by_variable["pl030"], rel=1e-12)
    assert 0 < lam < 1


@pytest.mark.shared_data
def test_the_command_line_replays_an_earlier_recipe_on_float_codes(tmp_path):
    """``sdckit protect --recipe`` on a CSV holding pl030 as 1.0, 2.0, ... (read as floats):
    the file written equals the Python replay."""
    entry = EXPECTED["eusilc_pram_pl030_pandas"]
    data = pd.read_csv(shared_file("laeken", "eusilc.csv"))
    source = tmp_path / "eusilc_float.csv"
    data.to_csv(source, index=False)
    out = tmp_path / "protected.csv"
    recipe = RECIPES / f"{entry['file']}.yaml"
    assert main(["protect", str(source), "--recipe", str(recipe), "--out", str(out), "--no-progress"]) == 0
    read = pl.read_csv(source)
    assert read.schema["pl030"] == pl.Float64
    expected = sdckit.SdcProblem.from_recipe(read, recipe).data
    assert pl.read_csv(out).equals(pl.read_csv(make_recipes.canonical_csv(expected)))
