"""The assessment's one table of the measures (``sdckit.assessment.table``): every declared
measure is in it or excluded with a reason; what it says is true of the measures; the search,
the per-step table and the report read it; the report is a renderer; old paths still work."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
import warnings

import pytest

import sdckit
from sdckit import registry
from sdckit.assessment import table as T


def _unaccounted(declared, measures=T.MEASURES, excluded=T.EXCLUDED) -> list[str]:
    """The declared measure names that are neither in the table nor excluded."""
    listed = {e.name for e in measures}
    return sorted(n for n in declared if n not in listed and n not in excluded)


def test_every_declared_measure_is_in_the_table_or_excluded_with_a_reason():
    declared = [d.name for d in registry.measures()]
    assert _unaccounted(declared) == [], (
        "run python tools/registry_docs.py (the table is written from the declarations)"
    )
    silent = [d.name for d in registry.measures() if d.assessed is None and not d.excluded]
    assert silent == [], "declare('measure', ..., assessed=Assessed(...)) or excluded='why it runs only when called'"


def test_the_table_is_the_declarations():
    entries = [T.entry_of(d.name, d.assessed) for d in registry.measures() if d.assessed is not None]
    assert sorted(entries, key=lambda e: e.name) == sorted(T.MEASURES, key=lambda e: e.name)
    assert T.EXCLUDED == {d.name: d.excluded for d in registry.measures() if d.excluded}


def test_a_declaration_says_one_of_the_two():
    from sdckit._declare import declare

    def f(data):
        return None

    with pytest.raises(sdckit.SdcError, match="assessed= or excluded="):
        declare("measure", excluded="why", assessed=T.MEASURES[0])(f)
    with pytest.raises(sdckit.SdcError, match="a method neither"):
        declare("method", excluded="why")(f)


def test_the_coverage_check_can_fail():
    assert _unaccounted(["individual_risk", "new_measure"]) == ["new_measure"]
    assert _unaccounted(["new_measure"], excluded={"new_measure": "why"}) == []


def test_the_table_names_only_declared_measures_each_once():
    declared = {d.name for d in registry.measures()}
    names = [e.name for e in T.MEASURES]
    assert len(names) == len(set(names))
    assert set(names) <= declared and set(T.EXCLUDED) <= declared
    assert set(names) & set(T.EXCLUDED) == set()
    assert all(isinstance(r, str) and len(r) > 10 for r in T.EXCLUDED.values())


def _result_class(name: str):
    func = inspect.unwrap(registry.get(name).func)
    return typing.get_type_hints(func)["return"]


@pytest.mark.parametrize("entry", T.MEASURES, ids=[e.name for e in T.MEASURES])
def test_each_headline_is_an_attribute_of_the_measures_result(entry):
    cls = _result_class(entry.name)
    attributes = {f.name for f in dataclasses.fields(cls)} | {n for n in dir(cls) if not n.startswith("_")}
    assert entry.headlines, entry.name
    for h in entry.headlines:
        assert h.attribute in attributes, f"{entry.name}: {cls.__name__} has no {h.attribute}"
        assert h.better in ("lower", "higher") and h.meaning


def test_each_needed_role_is_a_scenario_role():
    scenario = sdckit.Scenario()
    for entry in T.MEASURES:
        for role in (*entry.needs, *(r for h in entry.headlines for r in h.needs)):
            assert hasattr(scenario, role) and role not in ("name", "release_type"), f"{entry.name}: {role}"


def test_applies_reads_the_roles():
    assert T.applies("l_diversity", sdckit.Scenario(keys=["a"], sensitive=["s"]))
    assert not T.applies("l_diversity", sdckit.Scenario(keys=["a"]))
    assert not T.applies("interval_disclosure", sdckit.Scenario(keys=["a"]))


def test_the_search_targets_come_from_the_table():
    from sdckit.workflow.search import SEARCH_TARGETS, Target

    assert SEARCH_TARGETS == T.search_targets()
    built_in = {f.name for f in dataclasses.fields(Target)} - {"measures"}
    assert set(SEARCH_TARGETS) == built_in | set(T.generic_targets())


def test_the_per_step_measures_come_from_the_table():
    from sdckit.workflow.problem_measures import STEP_MEASURES

    # a per-step entry is called in the workflow's own way or as declared (test_declared_measure_path)
    assert set(STEP_MEASURES) <= {e.name for e in T.MEASURES if e.step}
    labelled = [h for e in T.MEASURES if e.step for h in e.headlines if h.label]
    assert labelled and all(h.label for h in labelled)


def test_step_entries_follow_the_roles_and_the_options():
    keys = sdckit.Scenario(keys=["a"])
    names = [e.name for e in T.step_entries(keys)]
    assert names == [e.name for e in T.MEASURES if e.step and set(e.needs) <= {"keys"} and e.option is None]
    assert {"k_anonymity", "individual_risk"} <= set(names) and "suda" not in names
    assert "suda" in [e.name for e in T.step_entries(keys, frozenset({"suda"}))]
    both = sdckit.Scenario(keys=["a"], numeric_keys=["x"])
    assert {"interval_disclosure", "information_loss"} <= {e.name for e in T.step_entries(both)}


def _report_imports() -> dict[str, list[str]]:
    """Each module of sdckit.report -> the sdckit modules it imports (any depth)."""
    from test_architecture import _import_graph

    return {m: sorted(t) for m, t in _import_graph().items() if m == "sdckit.report" or m.startswith("sdckit.report.")}


#: the layers a renderer may read: results and what lies below it
_BELOW_RESULTS = (
    "sdckit._",
    "sdckit.engines",
    "sdckit.io",
    "sdckit.datasets",
    "sdckit.scenario",
    "sdckit.results",
    "sdckit.report",
)


def test_report_imports_nothing_above_results():
    above = {m: [t for t in ts if not t.startswith(_BELOW_RESULTS)] for m, ts in _report_imports().items()}
    assert {m: ts for m, ts in above.items() if ts} == {}


def test_report_reaches_the_assessment_only_through_the_deprecated_old_paths():
    """The old module paths forward names by ``importlib`` (with a warning); nothing else in
    the report loads a module by name."""
    import sdckit.report as report

    root = inspect.getfile(report).rsplit("/", 1)[0]
    users = []
    for m in _report_imports():
        path = inspect.getfile(__import__(m, fromlist=["_"]))
        if "import_module" in {
            getattr(n, "attr", getattr(n, "id", None)) for n in ast.walk(ast.parse(open(path).read()))
        }:
            users.append(path.removeprefix(root + "/"))
    assert users == ["_moved.py"]


def test_old_paths_warn_and_give_the_same_objects():
    import sdckit.assessment
    import sdckit.assessment.measures
    import sdckit.report
    import sdckit.report.measures
    import sdckit.report.result

    with pytest.warns(DeprecationWarning, match="sdckit.assessment.assess_variants"):
        assert sdckit.report.assess_variants is sdckit.assessment.assess_variants
    with pytest.warns(DeprecationWarning, match="moved to sdckit.assessment.measures"):
        assert sdckit.report.measures.capture is sdckit.assessment.measures.capture
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert sdckit.report.AssessmentResult is sdckit.AssessmentResult
        assert sdckit.report.result.AssessmentResult is sdckit.AssessmentResult
    with pytest.raises(AttributeError):
        sdckit.report.no_such_name  # noqa: B018


def test_the_contributing_page_says_how_a_measure_reaches_the_table():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "contributing.md").read_text()
    for name in (
        "`assessed=Assessed(",
        "`excluded=",
        "`STEP_MEASURES`",
        "`src/sdckit/assessment/measures_table.json`",
        "`assessment/`",
    ):
        assert name in page, name


def test_the_apps_search_form_gives_search_targets():
    from sdckit.app.search import search_target

    assert set(search_target("3", "0.01")) <= set(T.search_targets())
