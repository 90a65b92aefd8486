"""Acceptance of the registry: for every registered method, a recipe step, a ``sdckit protect
--step`` call and a docs table built from its declaration alone (plus the few data-specific
values below), run on sdcMicro's testdata; for every registered measure, its Python call built
from the declaration's defaults and roles.

The data-specific values are what no declaration can know: which columns of this file to
protect, and a cut or threshold that fits them; they are the functions' examples in
tests/examples.py, less what the scenario's roles fill. Everything else (the step's name, every other
parameter written explicitly with its declared default, the roles) comes from the registry.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import sdckit
from conftest import DATA, read_csv_exactly
from examples import EXAMPLES
from sdckit import registry
from sdckit._declare import REQUIRED
from sdckit.cli import main
from sdckit.workflow.problem import recipe_schema
from test_registry import _valid

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
ROOT = Path(__file__).resolve().parents[1]
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
#: the scenario roles of the testdata (what the workflow fills a declared role from)
ROLES = {"keys": KEYS, "weight": "sampling_weight", "household": "ori_hid"}
NUMERIC = ["income", "expend"]


def _example(decl, roles) -> dict:
    """The function's example (tests/examples.py) less the values the scenario's ``roles``
    give (a workflow fills them)."""
    return {k: v for k, v in EXAMPLES[decl.name].items() if roles.get(decl.roles.get(k), ()) != v}


@pytest.fixture(scope="module")
def testdata() -> pd.DataFrame:
    return read_csv_exactly(TESTDATA)


def _explicit_defaults(decl) -> dict:
    """Every declared parameter that is not a role and has a default other than None, at that
    default (so that each declared type is written on the command line and in the recipe)."""
    return {p.name: p.default for p in decl.params if not p.role and p.default not in (None, REQUIRED)}


def _with_defaults(decl, call: dict) -> dict:
    """``call`` with every explicit default added (a record's fields in its record, beside the
    fields ``call`` gives it)."""
    out = decl.grouped(_explicit_defaults(decl))
    for name, value in call.items():
        out[name] = {**out.get(name, {}), **value} if name in decl.groups else value
    return out


def _scenario(decl, example) -> sdckit.Scenario:
    numeric = list(example["variables"]) if decl.roles.get("variables") == "numeric_keys" else None
    return sdckit.Scenario(**ROLES, numeric_keys=numeric)


@pytest.mark.parametrize("decl", registry.methods(), ids=[d.name for d in registry.methods()])
def test_method_step_cli_recipe_and_table_from_the_registry(decl, testdata, tmp_path):
    example = _example(decl, ROLES)
    params = {**_explicit_defaults(decl), **example}
    # the docs table: one row per declared parameter, as committed in docs/parameters.md
    table = registry._table(decl)
    assert len(table) == 2 + len(decl.params)
    assert "\n".join(table) in (ROOT / "docs" / "parameters.md").read_text()
    # the command line: --step NAME:PARAM=VALUE,... written from the declaration
    name = decl.aliases[0] if decl.aliases else decl.name
    step = f"{name}:" + ",".join(f"{k}={decl.param(k).format(v)}" for k, v in params.items())
    out = tmp_path / "cli.csv"
    roles = ["--keys", ",".join(KEYS), "--weight", ROLES["weight"], "--household", ROLES["household"]]
    assert main(["protect", str(TESTDATA), *roles, "--step", step, "--out", str(out), "--no-progress"]) == 0
    # the Python call (defaults left implicit)
    problem = sdckit.SdcProblem(testdata, _scenario(decl, example)).apply(decl.name, **example)
    problem.write(tmp_path / "python.csv")
    # the recipe step, checked against the schema and replayed
    recipe = {"sdckit_recipe": 1, "scenario": {"keys": KEYS, **{k: v for k, v in ROLES.items() if k != "keys"}},
              "steps": [{"method": decl.name, "parameters": params}]}  # fmt: skip
    if decl.roles.get("variables") == "numeric_keys":
        recipe["scenario"]["numeric_keys"] = list(example["variables"])
    assert _valid(sdckit.workflow.problem.encode_floats(recipe), recipe_schema())
    sdckit.SdcProblem.from_recipe(testdata, recipe).write(tmp_path / "recipe.csv")
    expected = (tmp_path / "python.csv").read_bytes()
    assert out.read_bytes() == expected == (tmp_path / "recipe.csv").read_bytes()
    assert sum(problem.history[0].result.n_changed.values()) > 0  # the step changed something


# ---------------------------------------------------------------------------------------------
# measures: the Python call from the declaration's defaults and roles
# ---------------------------------------------------------------------------------------------
MEASURE_ROLES = {
    "keys": KEYS,
    "weight": "sampling_weight",
    "household": "ori_hid",
    "sensitive": ["water"],
    "numeric_keys": NUMERIC,
}


def _inputs(decl, data: pd.DataFrame) -> list:
    protected = sdckit.microaggregation(data, NUMERIC).table
    protected = sdckit.local_suppression(protected, MEASURE_ROLES["keys"], k=3).table
    frames = {
        ("data",): [data],
        ("original", "protected"): [data, protected],
        ("released", "external"): [protected, data],
        ("register", "sample"): [data, data.iloc[::4].reset_index(drop=True)],
        ("original", "synthetic"): [data, protected],
        ("original", "synthetic", "control"): [data, protected],
    }
    return frames[decl.inputs]


@pytest.mark.parametrize("decl", registry.measures(), ids=[d.name for d in registry.measures()])
def test_measure_call_from_the_registry(decl, testdata):
    table = registry._table(decl)
    assert "\n".join(table) in (ROOT / "docs" / "parameters.md").read_text()
    roles = {n: MEASURE_ROLES[r] for n, r in decl.roles.items() if r in MEASURE_ROLES}
    call = {**roles, **_example(decl, MEASURE_ROLES)}
    missing = [p.name for p in decl.params if p.required and p.name not in call]
    assert missing == [], f"{decl.name}: no role or example for {missing}"
    inputs = _inputs(decl, testdata)
    implicit = decl.func(*inputs, **call)
    explicit = decl.func(*inputs, **_with_defaults(decl, call))
    assert type(implicit).__name__.endswith("Result")
    assert repr(explicit) == repr(implicit)  # the declared defaults are the function's
