"""``sdckit app`` without a browser: the variables table, the roles as a scenario file, the
protection forms generated from the registry and their conversion into parameters, the
command line, and that nothing imports Shiny unless the app starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
import sdckit.app
from sdckit import registry
from sdckit._declare import REQUIRED
from sdckit.app import free_port, model
from sdckit.cli import build_parser, main
from sdckit.commands.assess import scenario_from

# -- the variables table ---------------------------------------------------------------------


def _small():
    return pl.DataFrame(
        {
            "region": ["b", "a", None, "b", "c"],
            "age": [30, None, None, 41, 7],
            "income": [1.5, 2.5, 3.5, 4.5, 1.5],
            "many": [f"v{i}" for i in range(5)],
        }
    )


def test_variables_table_by_hand():
    data = _small()
    before = data.clone()
    rows = {r["name"]: r for r in model.describe_variables(data)}
    assert list(rows) == ["region", "age", "income", "many"]
    # region: b, a, b, c present (3 categories), one missing; listed in alphabetical order
    assert rows["region"] == {
        "name": "region",
        "type": "text",
        "categories": 3,
        "listed": ["a", "b", "c"],
        "missing": 1,
    }
    # age: 30, 41, 7 present, listed in numeric (not text) order; two missing
    assert rows["age"] == {"name": "age", "type": "integer", "categories": 3, "listed": ["7", "30", "41"], "missing": 2}
    # income: 1.5 twice -> 4 distinct values
    assert rows["income"]["type"] == "decimal" and rows["income"]["categories"] == 4
    assert data.equals(before)  # the input is not changed


def test_variables_table_lists_at_most_twelve_categories():
    data = pl.DataFrame({"x": [str(i) for i in range(13)], "y": [str(i % 12) for i in range(13)]})
    rows = {r["name"]: r for r in model.describe_variables(data)}
    assert rows["x"]["categories"] == 13 and rows["x"]["listed"] == []
    assert rows["y"]["categories"] == 12 and rows["y"]["listed"] == [str(i) for i in range(12)]


def test_variables_table_keeps_the_order_of_value_labels():
    """A labelled variable (SPSS/Stata) lists its labels in code order, not alphabetically."""
    labels = pl.Enum(["low", "middle", "high"])
    data = pl.DataFrame({"level": pl.Series(["high", "low", "middle", None], dtype=labels)})
    (row,) = model.describe_variables(data)
    assert row["type"] == "labelled" and row["listed"] == ["low", "middle", "high"] and row["missing"] == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", None]), min_size=1, max_size=30), st.randoms())
def test_variables_table_does_not_depend_on_row_order(values, rnd):
    data = pl.DataFrame({"v": values}, schema={"v": pl.String})
    order = list(range(len(values)))
    rnd.shuffle(order)
    assert model.describe_variables(data) == model.describe_variables(data[order])
    (row,) = model.describe_variables(data)
    assert row["missing"] == values.count(None)
    assert row["categories"] == len({v for v in values if v is not None})


# -- the roles and the scenario file ---------------------------------------------------------


def test_scenario_from_roles_leaves_out_empty_choices():
    sc = model.scenario_from_roles(
        {"keys": ["region", "sex"], "numeric_keys": [], "weight": "w", "household": "", "strata": None}
    )
    assert sc == sdckit.Scenario(keys=["region", "sex"], weight="w")
    sc = model.scenario_from_roles({"keys": ["region"], "direct_identifiers": ["name", "address"]})
    assert sc == sdckit.Scenario(keys=["region"], direct_identifiers=["name", "address"])


def test_scenario_from_roles_needs_a_key_and_known_columns():
    with pytest.raises(sdckit.SdcError, match="keys: no key variables"):
        model.scenario_from_roles({"keys": [], "weight": "w"})
    with pytest.raises(sdckit.SdcError, match=r"^weight: wgt not in the data"):
        model.scenario_from_roles({"keys": ["a"], "weight": "wgt"}, columns=["a", "w"])


@pytest.mark.parametrize("name", ["scenario.json", "scenario.yaml"])
def test_saved_scenario_is_what_assess_config_reads(tmp_path, name):
    sc = model.scenario_from_roles(
        {"keys": ["region", "sex"], "numeric_keys": ["income"], "weight": "weight", "household": "household"}
    )
    path = tmp_path / name
    assert model.save_scenario(sc, tmp_path, name) == path
    args = build_parser().parse_args(["assess", "data.csv", "--config", str(path), "--report", "r.html"])
    assert scenario_from(args) == sc
    if name.endswith(".json"):
        assert json.loads(path.read_text()) == {
            "keys": ["region", "sex"],
            "numeric_keys": ["income"],
            "weight": "weight",
            "household": "household",
        }
    with pytest.raises(sdckit.SdcError, match="already exists"):
        model.save_scenario(sc, tmp_path, name)
    model.save_scenario(sdckit.Scenario(keys=["sex"]), tmp_path, name, overwrite=True)
    assert scenario_from(args) == sdckit.Scenario(keys=["sex"])


# -- the protection forms, generated from the registry ---------------------------------------

WIDGET_OF_TYPE = {
    "column": "column",
    "columns": "columns",
    "int": "integer",
    "seed": "integer",
    "number": "number",
    "bool": "checkbox",
    "choice": "select",
}


def test_one_form_per_method_with_one_field_per_parameter():
    forms = model.method_forms()
    assert [f.method for f in forms] == [d.name for d in registry.methods()]
    for form, decl in zip(forms, registry.methods()):
        assert form.title == decl.title and form.changes == decl.changes
        assert [f.name for f in form.fields] == list(decl.names)
        for field, p in zip(form.fields, decl.params):
            assert field.widget == WIDGET_OF_TYPE.get(p.type, "text"), (decl.name, p.name)
            assert field.help == p.help and field.choices == tuple(p.choices) and field.type == p.type
            assert field.role == (p.role or None)
            assert field.required == (p.default is REQUIRED and not p.role)
            if p.default is REQUIRED:
                assert field.default is None
            elif field.widget != "text":
                assert field.default == p.default


def test_form_fields_by_hand():
    fields = {(f.method, x.name): x for f in model.method_forms() for x in f.fields}
    group_size = fields[("microaggregation", "group_size")]
    assert (group_size.widget, group_size.default, group_size.low, group_size.high) == ("integer", 3, 1, None)
    pd = fields[("pram", "pd")]
    assert (pd.widget, pd.default, pd.low, pd.high) == ("number", 0.8, 0.0, 1.0)
    assert fields[("add_noise", "method")].choices[0] == "additive"
    assert fields[("local_suppression", "k")].widget == "text" and fields[("local_suppression", "k")].default == "2"
    keys = fields[("local_suppression", "keys")]
    assert keys.widget == "columns" and keys.role == "keys" and not keys.required
    geography = fields[("record_swap", "geography")]
    assert geography.required and geography.role is None
    assert fields[("record_swap", "household")].role == "household"


def test_parameters_from_form_by_hand():
    decl = registry.get("microaggregation")
    # empty fields and defaults are left out; a whole number from a numeric input becomes an int
    values = {"variables": ["income"], "method": "mdav", "group_size": 5.0, "statistic": "mean", "sort_by": ""}
    assert model.parameters_from_form(decl, values) == {"variables": ["income"], "group_size": 5}
    assert model.parameters_from_form(registry.get("local_suppression"), {"keys": [], "k": "3"}) == {"k": 3}
    mapping = model.parameters_from_form(
        registry.get("global_recode"), {"variables": ["sex"], "mapping": "male=m;female=f"}
    )
    assert mapping == {"variables": ["sex"], "mapping": {"male": "m", "female": "f"}}


def test_parameters_from_form_refuses_bad_values_by_name():
    with pytest.raises(sdckit.SdcError, match="^geography: no value"):
        model.parameters_from_form(registry.get("record_swap"), {"geography": []})
    with pytest.raises(sdckit.SdcError, match="^group_size: 2.5 is not a whole number"):
        model.parameters_from_form(registry.get("microaggregation"), {"group_size": 2.5})
    with pytest.raises(sdckit.SdcError, match="group_size"):
        model.parameters_from_form(registry.get("microaggregation"), {"group_size": 0})
    with pytest.raises(sdckit.SdcError, match="pd"):
        model.parameters_from_form(registry.get("pram"), {"variables": ["sex"], "pd": 1.5})


def test_a_filled_form_applies_as_the_python_call():
    """The form's parameters through SdcProblem give the file of the direct call."""
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    data = load_example()
    keys = list(EXAMPLE_KEYS)
    params = model.parameters_from_form(registry.get("local_suppression"), {"keys": [], "k": "3", "alpha": 1.0})
    problem = sdckit.SdcProblem(data, sdckit.Scenario(keys=keys))
    problem.apply("local_suppression", **params)
    direct = sdckit.local_suppression(data, keys, k=3)
    assert problem.data.equals(direct.data)
    problem.undo()
    assert problem.history == () and problem.data.equals(data)


# -- the command line ------------------------------------------------------------------------


def test_import_sdckit_and_the_command_line_do_not_import_shiny():
    code = (
        "import sys, sdckit, sdckit.cli; sdckit.cli.build_parser(); "
        "sys.exit(1 if any(m.split('.')[0] == 'shiny' for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_app_command_passes_its_options(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr("sdckit.app.serve", lambda data, **kw: calls.append((data, kw)))
    data = tmp_path / "d.csv"
    data.write_text("a\n1\n")
    assert main(["app", str(data), "--no-browser", "--port", "8123"]) == 0
    assert main(["app"]) == 0
    assert calls == [
        (
            str(data),
            {"port": 8123, "host": "127.0.0.1", "launch_browser": False, "max_upload": 2 * 10**9, "folder": None},
        ),
        (None, {"port": None, "host": "127.0.0.1", "launch_browser": True, "max_upload": 2 * 10**9, "folder": None}),
    ]


@pytest.mark.parametrize(
    "argv, message",
    [(["app", "missing.csv"], "data: file missing.csv does not exist"), (["app", "--port", "70000"], "--port: 70000")],
)
def test_app_command_refuses_bad_input(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sdckit.app.serve", lambda *a, **k: pytest.fail("the app must not start"))
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_free_port_is_free():
    import socket

    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # raises if taken
    assert 0 < port < 65536 and np.issubdtype(type(port), np.integer)


def test_app_without_shiny_says_which_extra_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "shiny", None)  # import shiny -> ImportError
    with pytest.raises(sdckit.SdcError, match=r"shiny \(pip install 'sdckit\[app\]'\)"):
        sdckit.app.create_app()
    data = tmp_path / "d.csv"
    data.write_text("a\n1\n")
    assert main(["app", str(data), "--no-browser"]) == 2


# -- export ----------------------------------------------------------------------------------


def test_export_equals_sdckit_protect_with_the_exported_recipe_byte_for_byte(tmp_path):
    from sdckit.datasets import EXAMPLE_KEYS, example_path

    source = example_path()
    problem = sdckit.SdcProblem(sdckit.read_data(source), sdckit.Scenario(keys=list(EXAMPLE_KEYS)))
    problem.apply("local_suppression", k=3)
    problem.apply("pram", variables=["econ_status"], seed=11)
    out, recipe, report = tmp_path / "protected.csv", tmp_path / "recipe.yaml", tmp_path / "report.html"
    external, script = tmp_path / "external.html", tmp_path / "release.py"
    written = model.export(
        problem,
        source,
        tmp_path,
        data=out.name,
        recipe=recipe.name,
        report=report.name,
        external_report=external.name,
        script=script.name,
    )
    assert written == [str(out), str(recipe), str(report), str(external), str(script)]
    again = tmp_path / "again.csv"
    assert main(["protect", str(source), "--recipe", str(recipe), "--out", str(again)]) == 0
    assert out.read_bytes() == again.read_bytes()
    internal = problem.report()
    assert report.read_text() == internal.to_html() and external.read_text() == internal.to_html(audience="external")
    assert "local_suppression" in report.read_text() and report.read_text() != external.read_text()
    # the script makes the same file again, in a fresh process
    by_script = tmp_path / "by_script.csv"
    env = {**os.environ, "PYTHONPATH": str(Path(sdckit.__file__).resolve().parents[1])}
    run = subprocess.run([sys.executable, str(script), str(by_script)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert by_script.read_bytes() == out.read_bytes()
    with pytest.raises(sdckit.SdcError, match="already exists"):
        model.export(problem, source, tmp_path, data=out.name)
    model.export(problem, source, tmp_path, data=out.name, overwrite=True)
    assert not list(tmp_path.glob(f"{model.INCOMPLETE}*"))  # the folder the set was written into is gone


def test_export_checks_the_paths_before_writing(tmp_path):
    from sdckit.datasets import EXAMPLE_KEYS, example_path

    problem = sdckit.SdcProblem(sdckit.read_data(example_path()), sdckit.Scenario(keys=list(EXAMPLE_KEYS)))
    with pytest.raises(sdckit.SdcError, match="^export: no file named"):
        model.export(problem, example_path(), tmp_path, data="", recipe=None)
    out = tmp_path / "protected.csv"
    with pytest.raises(sdckit.SdcError, match=r"^recipe: cannot write a recipe to recipe\.txt"):
        model.export(problem, example_path(), tmp_path, data=out.name, recipe="recipe.txt")
    with pytest.raises(sdckit.SdcError, match=r"^script: cannot write release\.txt; expected a file ending in \.py"):
        model.export(problem, example_path(), tmp_path, data=out.name, script="release.txt")
    with pytest.raises(sdckit.SdcError, match=r"^report: cannot write r\.pdf"):
        model.export(problem, example_path(), tmp_path, data=out.name, report="r.pdf")
    with pytest.raises(sdckit.SdcError, match=r"^external_report: 'no/r.html' is not a file name"):
        model.export(problem, example_path(), tmp_path, data=out.name, external_report="no/r.html")
    with pytest.raises(sdckit.SdcError, match=r"^external_report: r.html is also the report's name"):
        model.export(problem, example_path(), tmp_path, data=out.name, report="r.html", external_report="r.html")
    assert list(tmp_path.iterdir()) == []  # nothing written when one name is wrong


@pytest.mark.parametrize("ext", [".sav", ".dta"])
def test_export_keeps_the_value_labels_of_a_labelled_file(tmp_path, ext):
    """An SPSS or Stata file with value labels, loaded as the app loads it, protected and
    exported, has the same value labels (the source written by pyreadstat, not by sdckit)."""
    import pandas as pd
    import pyreadstat

    labels = {"sex": {1: "Male", 2: "Female"}, "edu": {1: "Low", 2: "Mid", 3: "High"}}
    frame = pd.DataFrame({"sex": [1, 2, 1, 2, 1, 2, 1, 1], "edu": [1, 2, 3, 1, 1, 2, 3, 3]})
    source = tmp_path / f"source{ext}"
    writer = pyreadstat.write_dta if ext == ".dta" else pyreadstat.write_sav
    writer(frame, source, variable_value_labels=labels, column_labels={"sex": "Sex of respondent"})
    data = sdckit.read_data(source)
    row = {r["name"]: r for r in model.describe_variables(data)}["edu"]
    assert row["type"] == "labelled" and row["listed"] == ["Low", "Mid", "High"]
    problem = sdckit.SdcProblem(data, sdckit.Scenario(keys=["sex", "edu"]))
    problem.apply("local_suppression", k=2)
    assert problem.history[0].result.n_changed_total > 0  # (1, 2) and (2, 3) are unique
    out, script = tmp_path / f"protected{ext}", tmp_path / "release.py"
    model.export(problem, source, tmp_path, data=out.name, script=script.name)
    by_script = tmp_path / f"by_script{ext}"
    env = {**os.environ, "PYTHONPATH": str(Path(sdckit.__file__).resolve().parents[1])}
    run = subprocess.run([sys.executable, str(script), str(by_script)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for path in (out, by_script):
        meta = sdckit.read_metadata(path)
        assert meta["value_labels"] == labels
        assert meta["variable_labels"]["sex"] == "Sex of respondent"
    assert sdckit.read_data(by_script).equals(sdckit.read_data(out))


def test_search_target_from_the_fields():
    from sdckit.app.protect import search_target

    assert search_target(3.0, None) == {"k": 3}
    assert search_target(None, 0.01) == {"max_global_risk": 0.01}
    assert search_target(5, "") == {"k": 5}
    assert search_target(2, 0.05) == {"k": 2, "max_global_risk": 0.05}
    with pytest.raises(sdckit.SdcError, match="^target: no target"):
        search_target(None, None)
    with pytest.raises(sdckit.SdcError, match="^k: 2.5 is not a whole number"):
        search_target(2.5, None)


def test_the_script_reads_the_users_file_not_the_temporary_copy(tmp_path):
    from sdckit.datasets import EXAMPLE_KEYS, example_path

    problem = sdckit.SdcProblem(sdckit.read_data(example_path()), sdckit.Scenario(keys=list(EXAMPLE_KEYS)))
    script = tmp_path / "release.py"
    model.export(problem, example_path(), tmp_path, script=script.name, script_source="survey.csv")
    assert "SOURCE = 'survey.csv'" in script.read_text() and str(example_path()) not in script.read_text()


def test_every_generated_form_renders_one_input_per_parameter():
    """The page's inputs of each form: one per parameter, named after it, with the declared
    range on numbers, the choices of a choice and the data's columns in a column list."""
    import re

    from sdckit.app.protect import field_input

    columns = ["region", "sex", "income"]
    for form in model.method_forms():
        for field in form.fields:
            html = str(field_input(form.method, field, columns))
            iid = f"p_{form.method}_{field.name}"
            assert f'id="{iid}"' in html, iid
            assert field.help.split("`")[0][:20].replace("&", "&amp;").replace("<", "&lt;") in html
            if field.widget in ("integer", "number"):
                tag = re.search(rf'<input id="{iid}"[^>]*>', html).group(0)
                attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
                for bound, name in ((field.low, "min"), (field.high, "max"), (field.default, "value")):
                    assert (float(attrs[name]) if name in attrs else None) == bound, (iid, name)
            if field.widget == "select":
                assert all(f'value="{c}"' in html for c in field.choices)
            if field.widget in ("column", "columns"):
                assert all(c in html for c in columns)


# -- the search's inputs, the variants, the recodes, the export's row order -------------------
def test_hierarchies_from_the_page(tmp_path):
    h = tmp_path / "age.csv"
    h.write_text("1;1-5;*\n")
    assert model.parse_hierarchies("") == {}
    assert model.parse_hierarchies(f"\n age : {h} \n\n") == {"age": str(h)}
    with pytest.raises(sdckit.SdcError, match="hierarchies: line 1 is not 'key: path'"):
        model.parse_hierarchies("age")
    with pytest.raises(sdckit.SdcError, match="hierarchies: region: file .* does not exist"):
        model.parse_hierarchies(f"region: {tmp_path / 'none.csv'}")


def test_variant_names():
    assert model.variant_name("", {}) == "variant 1"
    assert model.variant_name("  ", {"variant 1": {}, "x": {}}) == "variant 3"
    assert model.variant_name(" k3 ", {}) == "k3"
    with pytest.raises(sdckit.SdcError, match="variant: a variant named 'k3' exists"):
        model.variant_name("k3", {"k3": {}})


def test_recode_view_lists_the_merged_categories_with_their_counts():
    # the records with an age: (b, 30), (b, 41), (c, 7); b and c merged into "bc" (2 + 1 records)
    data = _small().drop_nulls("age")
    problem = sdckit.SdcProblem(data, sdckit.Scenario(keys=["region", "age"]))
    assert model.recode_view(problem) == {}
    problem.apply("global_recode", variables=["region"], mapping={"b": "bc", "c": "bc"})
    view = model.recode_view(problem)
    assert list(view) == ["region"]
    table = view["region"]
    assert (table["n_categories_before"], table["n_categories_after"], table["n_suppressed"]) == (2, 1, 0)
    assert table["rows"] == [
        {
            "category": "bc",
            "records": 3,
            "n_original_categories": 2,
            "original_categories": ["b", "c"],
            "original_records": [2, 1],
        }
    ]
    problem.apply("local_suppression", k=2)  # not a recode: the table is the same
    assert model.recode_view(problem)["region"]["rows"] == table["rows"]


def test_front_figure_is_an_inline_svg():
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    result = sdckit.search(load_example(), sdckit.Scenario(keys=list(EXAMPLE_KEYS)), target={"k": 3}, progress=False)
    html = model.front_figure(result)
    assert html.startswith('<figure class="sdckit-figure" id="search_front_figure"><svg')
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_row_order_and_downloads_write_what_the_export_writes(tmp_path):
    from sdckit.datasets import EXAMPLE_KEYS, example_path, load_example

    problem = sdckit.SdcProblem(load_example(), sdckit.Scenario(keys=list(EXAMPLE_KEYS))).apply(
        "local_suppression", k=3
    )
    model.set_row_order(problem, {"seed": 4})
    assert problem.row_order == {"seed": 4}
    model.set_row_order(problem, {"seed": None})  # an empty seed keeps the one drawn before
    assert problem.row_order == {"seed": 4}
    written = model.export(problem, example_path(), tmp_path, data="p.csv", recipe="r.json")
    assert len(written) == 2
    assert model.export_bytes(problem, example_path(), "data", ".csv") == (tmp_path / "p.csv").read_bytes()
    assert json.loads(model.export_bytes(problem, example_path(), "recipe", ".json")) == json.loads(
        (tmp_path / "r.json").read_text()
    )
    model.set_row_order(problem, None)
    assert problem.row_order is None
    model.set_row_order(problem, {"seed": None})
    assert isinstance(problem.row_order["seed"], int)  # a fresh seed, kept for the recipe
