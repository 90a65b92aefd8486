"""Each per-function fact is written once, on the function's declaration, and every list is
generated from the declarations: the result headings of the methods, the functions the
out-of-core engines run, and the one table of example calls (tests/examples.py) that the
common tests read."""

from __future__ import annotations

import argparse
import inspect
import re
import warnings
from pathlib import Path

import polars as pl
import pytest

import sdckit
from conftest import DATA
from examples import EXAMPLES, SMALL_ELSEWHERE, SMALL_EXAMPLES, call
from sdckit import registry
from sdckit.engines import OUT_OF_CORE_MEASURES, DuckDBEngine, refusal

ALL = (*registry.methods(), *registry.measures())


def test_every_declared_function_has_one_example():
    names = {d.name for d in ALL}
    assert sorted(names - set(EXAMPLES)) == [], "a declared function without an example in tests/examples.py"
    assert sorted(set(EXAMPLES) - names) == [], "an example of a function that is not declared"


@pytest.mark.parametrize("decl", ALL, ids=[d.name for d in ALL])
def test_every_example_names_declared_parameters(decl):
    given = set(EXAMPLES[decl.name])
    accepted = set(decl.names) | set(decl.groups)
    assert given <= accepted, f"{decl.name}: {sorted(given - accepted)} are not declared"
    for group in given & set(decl.groups):  # a record's fields, in the record
        assert set(EXAMPLES[decl.name][group]) <= {p.name for p in decl.params if p.group == group}
    required = {p.name for p in decl.params if p.required}
    assert required <= given, f"{decl.name}: the example leaves out {sorted(required - given)}"


@pytest.fixture(scope="module")
def testdata() -> pl.DataFrame:
    return pl.read_csv(DATA / "sdcmicro" / "testdata.csv")


@pytest.mark.parametrize("decl", registry.methods(), ids=[d.name for d in registry.methods()])
def test_a_method_result_shows_its_declared_heading(decl, testdata):
    assert decl.heading and decl.heading != decl.name, f"{decl.name} declares no heading="
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sdckit.SdcWarning)  # the example's data, not what is tested here
        res = call(decl.name, testdata)
    assert res.title == decl.heading
    assert res.summary().title == decl.heading
    assert "title" not in res.to_dict() and "title" not in repr(res)  # the log and the repr as before


def test_the_out_of_core_list_is_the_declarations():
    assert OUT_OF_CORE_MEASURES == registry.out_of_core()
    assert {"suda", "local_suppression", "synthetic_utility"} <= set(OUT_OF_CORE_MEASURES)
    assert "pram" not in OUT_OF_CORE_MEASURES
    message = refusal("duckdb", "records", "pram")
    assert message.startswith("engine: pram needs the records in memory; the duckdb engine runs")
    assert all(name in message for name in registry.out_of_core())


@pytest.mark.parametrize("name", ["rounding", "frequencies"])
def test_the_duckdb_engine_runs_what_the_declaration_says(name, testdata, tmp_path):
    """One function of each kind: declared out-of-core runs on DuckDB, else the one refusal."""
    path = tmp_path / "d.parquet"
    testdata.write_parquet(path)
    decl = registry.get(name)
    if decl.out_of_core:
        assert call(name, str(path), engine=DuckDBEngine()).n == testdata.height
    else:
        with pytest.raises(sdckit.SdcError, match=f"engine: {name} needs the records in memory"):
            call(name, str(path), engine=DuckDBEngine())


def test_declare_takes_the_facts_by_keyword():
    params = inspect.signature(sdckit._declare.declare).parameters
    assert {"heading", "out_of_core"} <= set(params)
    assert params["out_of_core"].default is False and params["heading"].default == ""


def test_every_declared_function_has_a_small_example_or_a_reason():
    """The common checks of tests/test_common.py run on the S002 table: every declared function
    has a call there, or its checks are elsewhere (named)."""
    names = {d.name for d in ALL}
    assert sorted(names - set(SMALL_EXAMPLES) - set(SMALL_ELSEWHERE)) == []
    assert sorted((set(SMALL_EXAMPLES) | set(SMALL_ELSEWHERE)) - names) == []
    assert not set(SMALL_EXAMPLES) & set(SMALL_ELSEWHERE)
    for name, given in SMALL_EXAMPLES.items():
        decl = registry.get(name)
        assert set(given) <= set(decl.names) | set(decl.groups), name


def test_the_engines_page_names_every_function_the_engines_run():
    """docs/engines.md says what each out-of-core function does in the engine: a function newly
    declared ``out_of_core=True`` needs its row there."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "engines.md").read_text()
    table = page.split("## What is pushed down", 1)[1].split("\n## ", 1)[0]
    rows = {
        name
        for line in table.splitlines()
        if line.startswith("| `")
        for name in re.findall(r"`(\w+)`", line.split("|")[1])
    }
    assert sorted(set(registry.out_of_core()) - rows) == []


def _declared_options():
    """(command, declaration, parameter name, its argparse action) for every option a command
    took from a declaration (``commands.add_declared_options``)."""
    from sdckit.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, sp in sub.choices.items():
        for key, names in sp._defaults.items():
            if key.startswith("_declared_"):
                decl = registry.get(key.removeprefix("_declared_"))
                for name in names:
                    action = next(a for a in sp._actions if a.dest == name and a.help != argparse.SUPPRESS)
                    yield command, decl, name, action


def test_the_measure_commands_take_their_options_from_the_declarations():
    seen = set()
    for command, decl, name, action in _declared_options():
        p = decl.param(name)
        assert action.option_strings == ["--" + name.replace("_", "-")], (command, name)
        assert list(action.choices or ()) == list(p.choices), (command, name)
        if p.type in ("int", "seed", "number") and not p.per_variable:
            assert action.type is (float if p.type == "number" else int), (command, name)
        seen.add(command)
    measures = {"freq", "risk", "suda", "uniques", "loglinear", "linkage", "external", "register"}
    assert measures | {"synthetic", "interval", "utility"} <= seen


def test_a_command_passes_the_declared_options_on_by_name():
    from sdckit.cli import build_parser
    from sdckit.commands import declared_values
    from sdckit.risk.loglinear import loglinear_risk

    args = build_parser().parse_args(["loglinear", "d.csv", "--keys", "a", "--z-target", "-1", "--candidates", "3"])
    values = declared_values(args, loglinear_risk, model="independence")
    decl = registry.get("loglinear_risk")
    selection = values["selection"]  # the search's options, in their record (the flags are unchanged)
    assert selection["z_target"] == -1.0 and selection["candidates"] == 3 and values["model"] == "independence"
    assert selection["criterion"] == decl.param("criterion").default
    assert selection["z_crit"] == decl.param("z_crit").default
    assert set(values) <= set(decl.names) | set(decl.groups)
    assert set(selection) <= {p.name for p in decl.params if p.group == "selection"}


def _declared_in_source() -> set[str]:
    """The functions of risk/, utility/ and protect/ whose source has ``@declare(...)`` above
    them, read with ast (not through the packages, which is what is checked)."""
    import ast

    root = Path(sdckit.__file__).parent
    found = set()
    for folder in ("risk", "utility", "protect"):
        for path in (root / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and getattr(d.func, "id", None) == "declare" for d in node.decorator_list
                ):
                    found.add(node.name)
    return found


def test_every_declared_function_in_the_source_reaches_the_registry():
    """A function declared in its module but not imported by its package (protect/, risk/ or
    utility/ ``__init__.py``) would be missing from every interface without a word."""
    in_source = _declared_in_source()
    assert len(in_source) >= 30  # the scan itself works
    assert sorted(in_source - {d.name for d in ALL}) == [], "declared, but not imported by its package"
