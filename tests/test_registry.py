"""The registry of methods and measures (sdckit.registry): every public method and measure is
declared once, and the lists, checks, recipe schema, docs tables and the ``--step`` parser are
derived from the declarations."""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import inspect
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

import sdckit
from conftest import DATA, read_csv_exactly
from sdckit import SdcError, protect, registry, risk, utility
from sdckit._declare import COMMON, REQUIRED, Param, declare, docstring_params, with_help
from sdckit.cli import main
from sdckit.commands.protect import parse_step
from sdckit.workflow.problem import recipe_schema

ROOT = Path(__file__).resolve().parents[1]
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
TESTDATA = DATA / "sdcmicro" / "testdata.csv"
ALL = (*registry.methods(), *registry.measures())


def _public_functions(module) -> set[str]:
    return {n for n in module.__all__ if inspect.isfunction(inspect.unwrap(getattr(module, n)))}


def _glossary_parameters() -> set[str]:
    text = (ROOT / "docs" / "glossary.md").read_text()
    part = text.split("## Parameters", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in re.findall(r"^\|\s*(`[^|]+)\|", part, flags=re.M):
        names |= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row))
    return names


# ---------------------------------------------------------------------------------------------
# the registry lists every public method and measure, and the old lists are derived from it
# ---------------------------------------------------------------------------------------------
def test_every_public_method_and_measure_is_declared():
    assert {d.name for d in registry.methods()} == _public_functions(protect)
    assert {d.name for d in registry.measures()} == _public_functions(risk) | _public_functions(utility)
    for decl in ALL:
        assert decl.func is getattr(sdckit, decl.name)  # the public function, wrappers included


def test_the_hand_kept_lists_are_derived():
    assert protect.METHODS == tuple(d.name for d in registry.methods())
    from sdckit.workflow.problem import protection_methods

    assert protection_methods() == {n: getattr(sdckit, n) for n in protect.METHODS}
    continuous = {d.name for d in registry.methods() if d.roles.get("variables") == "numeric_keys"}
    # as the workflow filled them before (a new method of continuous variables joins them)
    assert {"add_noise", "microaggregation", "rank_swap", "rounding"} <= continuous
    assert not continuous & {"global_recode", "pram", "top_bottom_coding", "microaggregation_gower"}


@pytest.mark.parametrize("decl", ALL, ids=[d.name for d in ALL])
def test_declaration_matches_the_signature(decl):
    sig = inspect.signature(decl.func).parameters
    top = {p.name for p in decl.params if not p.group} | set(decl.groups)  # a record's fields: in its record
    assert top | set(decl.inputs) | set(decl.common) == set(sig) - {"args", "kwargs"}
    assert list(sig)[: len(decl.inputs)] == list(decl.inputs)
    for group in decl.groups:
        assert sig[group].default is None, f"{decl.name}: {group}= defaults to None (the record's defaults)"
    for p in decl.params:
        if p.group:
            field = {f.name: f for f in dataclasses.fields(decl.groups[p.group])}[p.name]
            assert p.default is field.default or p.default == field.default, p.qualified
            assert p.help and "\n" not in p.help, f"{decl.name}.{p.qualified} has no one-line help"
            continue
        expected = REQUIRED if sig[p.name].default is inspect.Parameter.empty else sig[p.name].default
        assert p.default is expected or p.default == expected, p.name
        assert p.help and "\n" not in p.help, f"{decl.name}.{p.name} has no one-line help"
    assert decl.title
    assert decl.random == ("seed" in decl.names)
    assert (decl.kind == "method") == bool(decl.changes)


@pytest.mark.parametrize("decl", ALL, ids=[d.name for d in ALL])
def test_every_default_passes_its_own_check_and_reads_back_from_the_command_line(decl):
    for p in decl.params:
        if p.default is REQUIRED or p.type == "any":
            continue
        p.check(p.default)
        parsed = p.parse(p.format(p.default))
        assert parsed == (list(p.default) if isinstance(p.default, tuple) else p.default), p.name


def test_every_declared_parameter_name_is_in_the_glossary():
    glossary = _glossary_parameters()
    missing = sorted({f"{d.name}.{p.name}" for d in ALL for p in d.params if p.name not in glossary})
    assert missing == []


def test_declare_refuses_a_declaration_that_does_not_match_the_signature():
    def f(data, variables, *, k=2, engine=None):
        """F.

        Parameters
        ----------
        variables : list of str
            The columns. More text.
        k : int
            The k; nothing else.
        """

    with pytest.raises(sdckit.SdcError, match=r"declared \['variables'\]"):
        declare("method", Param("variables", "columns"), changes="x")(f)
    g = declare("method", Param("variables", "columns"), Param("k", "int", low=1), changes="x")(f)
    assert g.__sdckit_declaration__.param("k").help == ""  # the docstring is read when the registry is built
    decl = with_help(g.__sdckit_declaration__)
    assert inspect.unwrap(g) is f and decl.common == ("engine",) and decl.param("k").default == 2
    assert inspect.signature(g) == inspect.signature(f) and g.__name__ == "f" and decl.func is g
    assert decl.param("variables").help == "The columns" and decl.param("k").help == "The k"
    assert decl.param("variables").required and not decl.param("k").required


def test_docstring_help_is_the_first_sentence():
    doc = """Title.

    Parameters
    ----------
    a, b : float
        First (e.g. 1.5; or 2). Second sentence.
    c : {"x", "y"}
    d : str
        Text ``code. x`` done: tail.

    Returns
    -------
    r : int
        Not a parameter.
    """
    assert docstring_params(doc) == {"a": "First (e.g. 1.5; or 2)", "b": "First (e.g. 1.5; or 2)", "c": "",
                                     "d": "Text `code. x` done: tail"}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# checks (the validation toolkit) and command-line values
# ---------------------------------------------------------------------------------------------
def test_param_checks_are_the_validation_toolkit():
    pd_ = registry.get("pram").param("pd")
    with pytest.raises(sdckit.SdcError, match=r"^pd: got 1\.5; expected a number in \[0, 1\]$"):
        pd_.check(1.5)
    assert pd_.check({"walls": 0.7}) == {"walls": 0.7}
    with pytest.raises(sdckit.SdcError, match=r"pd\['walls'\]: got -1"):
        pd_.check({"walls": -1})
    with pytest.raises(sdckit.SdcError, match="group_size: got 2.5; expected an integer >= 1"):
        registry.get("microaggregation").param("group_size").check(2.5)
    with pytest.raises(sdckit.SdcError, match="method: got 'nope'; expected one of 'mdav'"):
        registry.get("microaggregation").param("method").check("nope")
    with pytest.raises(sdckit.SdcError, match="threshold: got 0; expected a number in \\(0, 1\\]"):
        registry.get("suppress_by_risk").param("threshold").check(0)
    assert registry.get("suppress_by_risk").param("threshold").check(None) is None  # optional
    with pytest.raises(sdckit.SdcError, match="not a parameter of pram; expected some of variables"):
        registry.get("pram").check({"nonsense": 1})


def test_command_line_values_are_read_as_the_declared_type():
    recode = registry.get("global_recode")
    assert recode.param("breaks").parse("-inf;18;65.5;inf") == [-math.inf, 18, 65.5, math.inf]
    assert recode.param("breaks").parse("4") == 4
    assert recode.param("mapping").parse("1=1;2=1;3=x") == {1: 1, 2: 1, 3: "x"}
    assert recode.param("variables").parse("age") == ["age"]
    assert registry.get("pram").param("pd").parse("walls=0.7;roof=0.9") == {"walls": 0.7, "roof": 0.9}
    assert registry.get("record_swap").param("similar").parse("a;b") == [["a", "b"]]
    assert registry.get("suppress_by_risk").param("threshold").parse("none") is None
    assert registry.get("t_closeness").param("weighted").parse("true") is True
    missing = registry.get("pram").param("missing")
    assert missing.parse("-999") == -999 and missing.parse("-999;x") == [-999, "x"] and missing.parse("NA") == "NA"
    with pytest.raises(sdckit.SdcError, match="group_size: got 'x'; expected an integer"):
        registry.get("microaggregation").param("group_size").parse("x")


def test_step_names_resolve_by_the_parameters_given():
    assert registry.step_method("recode").name == "global_recode"
    assert registry.step_method("suppress", ["k"]).name == "local_suppression"
    assert registry.step_method("suppress", ["threshold"]).name == "suppress_by_risk"
    assert registry.step_method("swap", ["variables"]).name == "rank_swap"
    assert registry.step_method("swap", ["geography", "k"]).name == "record_swap"
    assert registry.step_method("record_swap").name == "record_swap"
    with pytest.raises(sdckit.SdcError, match="step: unknown step 'shuffle'; expected one of microaggregate"):
        registry.step_method("shuffle")
    with pytest.raises(sdckit.SdcError, match="group: not a parameter of step suppress"):
        registry.step_method("suppress", ["k", "group"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("suppress:k=0", r"^--step 2 \(suppress\): k: got 0; expected an integer >= 1$"),
        ("suppress:k", r"^--step 2 \(suppress\): 'k' is not PARAM=VALUE"),
        ("suppress:k=3,k=4", r"^--step 2 \(suppress\): k: given twice"),
        ("microaggregate:group_size=x", r"^--step 2 \(microaggregate\): group_size: got 'x'; expected an integer"),
        ("noise:method=loud", r"^--step 2 \(noise\): method: got 'loud'; expected one of 'additive'"),
        ("pram:pdd=0.5", r"^--step 2 \(pram\): pdd: not a parameter of pram; expected one of variables"),
        ("reshuffle:x=1", r"^--step 2 \(reshuffle\): step: unknown step 'reshuffle'"),
    ],
)
def test_a_bad_step_names_the_step_and_the_parameter(text, message):
    with pytest.raises(sdckit.SdcError, match=message):
        parse_step(text, 2)


# ---------------------------------------------------------------------------------------------
# the recipe schema (a small JSON Schema validator for the keywords the schema uses)
# ---------------------------------------------------------------------------------------------
_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
    "integer": int,
    "number": (int, float),
}


def _valid(value, schema: dict) -> bool:
    """The subset of JSON Schema the recipe schema uses (type, enum, const, bounds, properties,
    required, additionalProperties, items, anyOf, oneOf)."""
    known = {"type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "properties",
             "required", "additionalProperties", "items", "anyOf", "oneOf", "description", "title", "$schema",
             "pattern"}  # fmt: skip
    assert set(schema) <= known, set(schema) - known
    if "pattern" in schema and not (isinstance(value, str) and re.search(schema["pattern"], value)):
        return False
    if "type" in schema:
        t = _TYPES[schema["type"]]
        if isinstance(value, bool) and schema["type"] in ("integer", "number"):
            return False
        if not isinstance(value, t) or (schema["type"] == "integer" and isinstance(value, float)):
            return False
    if "enum" in schema and value not in schema["enum"]:
        return False
    if "const" in schema and value != schema["const"]:
        return False
    bounds = (("minimum", float.__ge__), ("maximum", float.__le__), ("exclusiveMinimum", float.__gt__),
              ("exclusiveMaximum", float.__lt__))  # fmt: skip
    for key, ok in bounds:
        if key in schema and not ok(float(value), float(schema[key])):
            return False
    if isinstance(value, dict):
        props = schema.get("properties", {})
        if any(r not in value for r in schema.get("required", ())):
            return False
        for k, v in value.items():
            if k in props:
                if not _valid(v, props[k]):
                    return False
            elif schema.get("additionalProperties") is False:
                return False
            elif isinstance(schema.get("additionalProperties"), dict) and not _valid(v, schema["additionalProperties"]):
                return False
    if isinstance(value, list) and "items" in schema and not all(_valid(v, schema["items"]) for v in value):
        return False
    if "anyOf" in schema and not any(_valid(value, s) for s in schema["anyOf"]):
        return False
    return not ("oneOf" in schema and sum(_valid(value, s) for s in schema["oneOf"]) != 1)


@pytest.fixture(scope="module")
def testdata() -> pd.DataFrame:
    return read_csv_exactly(TESTDATA)


@pytest.fixture(scope="module")
def written_recipe(testdata, tmp_path_factory) -> Path:
    sc = sdckit.Scenario(keys=KEYS, numeric_keys=["income"], weight="sampling_weight", household="ori_hid")
    p = sdckit.SdcProblem(testdata, sc)
    p.apply("global_recode", variables=["age"], breaks=[-math.inf, 20, 40, 60, math.inf])
    p.apply("local_suppression", k=3).apply("pram", variables=["walls"], pd={"walls": 0.7}, seed=1)
    p.apply("microaggregation", group_size=4).apply("add_noise", noise=10, seed=2)
    path = tmp_path_factory.mktemp("recipe") / "recipe.json"
    p.to_recipe(path)
    return path


def test_a_recipe_naming_a_file_follows_the_schema(testdata, tmp_path, monkeypatch):
    """The ``files`` entry (checksums of a hierarchy file) as written; a checksum that is not
    64 hexadecimal digits does not."""
    monkeypatch.chdir(tmp_path)
    Path("h.csv").write_text("".join(f"{v};{1 + (v > 4)};*\n" for v in range(1, 10)), encoding="utf-8")
    p = sdckit.SdcProblem(testdata, sdckit.Scenario(keys=KEYS))
    p.apply("global_recode", variables=["water"], hierarchy="h.csv", level=1).to_recipe("r.json")
    recipe = json.loads(Path("r.json").read_text())
    assert list(recipe["files"]) == ["h.csv"]
    assert _valid(recipe, recipe_schema())
    recipe["files"]["h.csv"]["sha256"] = "not a checksum"
    assert not _valid(recipe, recipe_schema())


def test_a_written_recipe_follows_the_schema(written_recipe):
    schema = recipe_schema()
    recipe = json.loads(written_recipe.read_text())
    assert recipe["steps"][0]["parameters"]["breaks"][0] == {"$float": "-inf"}  # the JSON float tag
    assert _valid(recipe, schema)
    assert [s["properties"]["method"]["const"] for s in schema["properties"]["steps"]["items"]["oneOf"]] == list(
        protect.METHODS
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(sdckit_recipe=2),  # a newer format version
        lambda r: r["steps"][1]["parameters"].update(k=0),  # out of range
        lambda r: r["steps"][1]["parameters"].update(kk=3),  # not a parameter of the method
        lambda r: r["steps"][1].update(method="shuffle"),  # not a method
        lambda r: r["steps"][3]["parameters"].update(method="kmeans"),  # not a choice
        lambda r: r["steps"][3]["parameters"].update(group_size="4"),  # not an integer
        lambda r: r["scenario"].update(weights="w"),  # not a role
    ],
)
def test_the_schema_refuses_a_bad_recipe(written_recipe, change):
    recipe = json.loads(written_recipe.read_text())
    change(recipe)
    assert not _valid(recipe, recipe_schema())


def test_the_committed_schema_and_tables_are_the_generated_ones():
    spec = importlib.util.spec_from_file_location("registry_docs", ROOT / "tools" / "registry_docs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)  # type: ignore[union-attr]
    for path, text in tool.pages().items():
        assert path.read_text(encoding="utf-8") == text, f"run tools/registry_docs.py to update {path.name}"
    nav = (ROOT / "mkdocs.yml").read_text()
    assert "recipes.md" in nav and "parameters.md" in nav


def test_the_committed_package_names_are_the_generated_ones():
    """The names of risk/, utility/, protect/ and sdckit/__init__.py between the generated
    markers are those the ``@declare`` lines of the modules give (a new measure or method needs
    no hand edit there), and the generator leaves the rest of each file as it is."""
    spec = importlib.util.spec_from_file_location("registry_docs", ROOT / "tools" / "registry_docs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)  # type: ignore[union-attr]
    inits = tool.package_inits()
    assert len(inits) == 4
    for path, text in inits.items():
        name = path.relative_to(ROOT)
        assert path.read_text(encoding="utf-8") == text, f"{name}: run `python tools/registry_docs.py`"
        assert text.count(tool.BEGIN) == text.count(tool.END) == 1, name
    for package in tool.PACKAGES:  # each declared function of the source is among the generated names
        names = tool.declared_names(package)
        module = getattr(sdckit, package)
        assert {d.name for d in ALL if d.func.__module__.startswith(module.__name__)} <= set(names)
        assert set(names) <= set(module.__all__) and set(names) <= set(sdckit.__all__), package


def test_common_parameters_are_in_the_glossary():
    assert set(COMMON) <= _glossary_parameters()


# ---------------------------------------------------------------------------------------------
# sdckit protect --step: the same file as the Python calls and as the saved recipe replayed
# ---------------------------------------------------------------------------------------------
def test_three_steps_give_the_file_of_the_python_calls_and_of_the_recipe(testdata, tmp_path):
    before = testdata.copy()
    steps = ["recode:variables=age,breaks=-inf;20;40;60;inf", "suppress:k=3", "microaggregate:variables=income"]
    out, recipe = tmp_path / "steps.csv", tmp_path / "steps.yaml"
    args = ["protect", str(TESTDATA), "--keys", ",".join(KEYS), "--out", str(out), "--save-recipe", str(recipe)]
    assert main([*args, *(a for s in steps for a in ("--step", s)), "--no-progress"]) == 0
    # the three Python calls
    sc = sdckit.Scenario(keys=KEYS, numeric_keys=["income"])
    p = sdckit.SdcProblem(read_csv_exactly(TESTDATA), sc)
    p.apply("global_recode", variables=["age"], breaks=[-math.inf, 20, 40, 60, math.inf])
    p.apply("local_suppression", k=3).apply("microaggregation", variables=["income"])
    p.write(tmp_path / "python.csv")
    # the saved recipe replayed
    replayed = tmp_path / "replayed.csv"
    assert main(["protect", str(TESTDATA), "--recipe", str(recipe), "--out", str(replayed), "--no-progress"]) == 0
    text = out.read_bytes()
    assert text == (tmp_path / "python.csv").read_bytes() == replayed.read_bytes()
    protected = pd.read_csv(out)
    assert protected["age"].nunique() == 4 and protected["income"].nunique() < testdata["income"].nunique()
    assert protected[KEYS].isna().any().any()  # the suppression did suppress
    assert [s["method"] for s in sdckit.workflow.problem.read_recipe(recipe)["steps"]] == [
        "global_recode", "local_suppression", "microaggregation",
    ]  # fmt: skip
    pd.testing.assert_frame_equal(testdata, before)


def test_protect_needs_a_recipe_or_steps_and_reports_a_bad_step(tmp_path, capsys):
    out = str(tmp_path / "o.csv")
    with pytest.raises(SystemExit):
        main(["protect", str(TESTDATA), "--out", out])
    with pytest.raises(SystemExit):
        main(["protect", str(TESTDATA), "--out", out, "--recipe", "r.yaml", "--step", "suppress:k=3"])
    capsys.readouterr()
    code = main(["protect", str(TESTDATA), "--keys", "urbrur", "--out", out, "--step", "suppress:k=3", "--step",
                 "suppress:k=two"])  # fmt: skip
    assert code == 2 and "--step 2 (suppress): k: got 'two'; expected a number" in capsys.readouterr().err
    code = main(["protect", str(TESTDATA), "--out", out, "--step", "suppress:k=3"])
    assert code == 2 and "--keys: no key variables" in capsys.readouterr().err
    code = main(["protect", str(TESTDATA), "--keys", "urbrur", "--out", out, "--step", "pram:variables=nope"])
    assert code == 2 and "--step 1 (pram): variables: column(s) nope not found" in capsys.readouterr().err
    assert not Path(out).exists()


@pytest.mark.parametrize(
    "method, parameter, value",
    [
        ("add_noise", "delta", 1.0),
        ("add_noise", "noise", -1),
        ("rank_swap", "top_percent", 101),
        ("rank_swap", "k0", -0.5),
        ("microaggregation", "group_size", 0),
        ("microaggregation", "statistic", "mode"),
    ],
)
def test_the_function_checks_its_parameters_as_declared(testdata, method, parameter, value):
    """The validation at the function boundary is derived from the declaration: the function's
    message is the declaration's own check's."""
    with pytest.raises(sdckit.SdcError) as declared:
        registry.get(method).param(parameter).check(value)
    with pytest.raises(sdckit.SdcError) as called:
        getattr(sdckit, method)(testdata, ["income", "expend"], **{parameter: value})
    assert str(called.value) == str(declared.value)


@pytest.mark.parametrize(
    "command, method",
    [
        ("recode", "global_recode"),
        ("suppress", "local_suppression"),
        ("pram", "pram"),
        ("noise", "add_noise"),
        ("microaggregate", "microaggregation"),
        ("swap", "rank_swap"),
        ("swap", "record_swap"),
    ],
)
def test_the_one_off_commands_take_defaults_and_choices_from_the_declarations(command, method):
    from sdckit.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    decl = registry.get(method)
    checked = 0
    for action in sub._actions:
        if action.dest not in decl.names or action.help == argparse.SUPPRESS:  # an old spelling, hidden
            continue
        p = decl.param(action.dest)
        if action.choices:
            assert list(action.choices) == list(p.choices), action.dest
            checked += 1
        if action.default is not None:
            assert action.default == p.default, action.dest
            checked += 1
    assert checked >= 2


def test_the_recipes_in_the_docs_follow_the_schema_and_replay_alike(testdata, tmp_path):
    import yaml

    text = (ROOT / "docs" / "recipes.md").read_text()
    yaml_recipe = yaml.safe_load(re.search(r"```yaml\n(.*?)```", text, flags=re.S).group(1))
    json_recipe = json.loads(re.search(r"```json\n(.*?)```", text, flags=re.S).group(1))
    schema = recipe_schema()
    assert _valid(sdckit.workflow.problem.encode_floats(yaml_recipe), schema) and _valid(json_recipe, schema)
    sdckit.SdcProblem.from_recipe(testdata, yaml_recipe).write(tmp_path / "yaml.csv")
    sdckit.SdcProblem.from_recipe(testdata, sdckit.workflow.problem.read_recipe(json_recipe)).write(
        tmp_path / "json.csv"
    )
    assert (tmp_path / "yaml.csv").read_bytes() == (tmp_path / "json.csv").read_bytes()


def test_a_declared_range_is_the_toolkits_rule():
    """A numeric glossary name's range is written once (the validation toolkit's RULES): every
    declaration carries exactly that range, and one that writes another is refused."""
    from sdckit._declare import Param
    from sdckit._validation import RULES

    seen = 0
    for decl in (*registry.methods(), *registry.measures()):
        for p in decl.params:
            if p.type in ("int", "number") and p.name in RULES:
                rule = RULES[p.name]
                assert (p.low, p.high, p.low_open, p.high_open) == (rule.low, rule.high, rule.low_open, rule.high_open)
                seen += 1
    assert seen >= 40
    with pytest.raises(SdcError, match="alpha: declared with the range"):
        Param("alpha", "number", low=0.0, high=0.5)
    with pytest.raises(SdcError, match="k: declared as number"):
        Param("k", "number")
    assert Param("alpha", "number").check(0.0) == 0.0  # [0, 1] from the rule
    # a list of a rule's numbers is checked item by item by the rule (k: integers >= 1) ...
    with pytest.raises(SdcError, match=r"k: got 2\.5; expected an integer >= 1"):
        Param("k", "numbers").check([2, 2.5])
    # ... but a list with a range of its own keeps it (breaks as edges, not a number of intervals)
    assert Param("breaks", "numbers", allow_inf=True).check([-math.inf, 0.5, math.inf]) == [-math.inf, 0.5, math.inf]
    with pytest.raises(SdcError, match=r"alpha: got 1\.5"):
        Param("alpha", "number").check(1.5)


def test_a_standard_name_is_declared_once():
    """Roles and the names every function shares take their type, role and choices from
    ``_declare.STANDARD``: ``Param("keys")`` is the key columns filled from the scenario's keys,
    another type is refused, and a function may say a standard name fills no role."""
    from sdckit._declare import STANDARD

    keys = Param("keys")
    assert (keys.type, keys.role) == ("columns", "keys")
    assert Param("keys", role=None).role is None
    assert Param("zero_weight").choices == ("error", "drop")
    with pytest.raises(SdcError, match="weight: declared as columns; every function takes it as column"):
        Param("weight", "columns")
    with pytest.raises(SdcError, match="declared without a type"):
        Param("not_a_standard_name")
    for decl in (*registry.methods(), *registry.measures()):
        for p in decl.params:
            if p.name in STANDARD:
                assert p.type == STANDARD[p.name][0], (decl.name, p.name)
