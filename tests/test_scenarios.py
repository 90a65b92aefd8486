"""Several disclosure scenarios at once (the worst decides), the release type and the direct
identifiers of a scenario file: sdckit.assess with a list of scenarios, the scenario file's round
trip, sdckit assess --config with several scenarios."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import SdcError
from sdckit.cli import main
from sdckit.results.assessment import AssessmentResult, VariantAssessment
from sdckit.scenario import RELEASE_TYPES, scenarios_from_dict, scenarios_to_dict
from sdckit.workflow.scenarios import ScenariosAssessment, worst_verdicts

N = 200


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    """200 records, two regions of 100, every age distinct, every weight 100 (so F = 100 f),
    households of two, and a record identifier ``pid``."""
    return pl.DataFrame(
        {
            "pid": [f"P-{i:05d}" for i in range(N)],
            "region": ["a", "b"] * (N // 2),
            "age": list(range(N)),
            "w": [100.0] * N,
            "hh": [i // 2 for i in range(N)],
        }
    )


# Hand calculation (Benedetti-Franconi, f = sample count, F = weighted count, p = f / F):
# scenario "region": f = 100, F = 10,000 in both cells; r = p = 0.01 ... tiny: for f >= 2 the
#   estimate is far below 1 % (sdckit's global risk for it is checked against the measure below).
# scenario "region+age": every record is a sample unique, f = 1, F = 100, p = 0.01 and
#   r = p / (1 - p) * log(1 / p) = 0.0101010 * 4.6051702 = 0.0465169 for every record, so the
#   global risk (the mean) is 0.0465169 > 0.01: unsafe.
R_UNIQUE = 0.01 / 0.99 * math.log(100)

REGION = sdckit.Scenario(keys=["region"], weight="w", name="region", direct_identifiers=["pid"])
REGION_AGE = sdckit.Scenario(keys=["region", "age"], weight="w", name="region+age", direct_identifiers=["pid"])
REGION_HH = sdckit.Scenario(keys=["region"], weight="w", household="hh", name="households")


@pytest.fixture(scope="module")
def result(data) -> ScenariosAssessment:
    return sdckit.assess(data, [REGION, REGION_AGE, REGION_HH])


def test_worst_scenario_decides_and_is_named(data, result):
    assert isinstance(result, ScenariosAssessment)
    assert result.names == ("region", "region+age", "households")
    assert result.safe is False
    assert result.worst == "region+age"
    v = result.original
    assert v["variant"] == "original" and v["measure"] == "individual rate"
    assert v["value"] == pytest.approx(R_UNIQUE, rel=1e-9)
    assert v["target"] == 0.01
    assert v["by_scenario"]["region"]["meets_target"] is True
    assert v["by_scenario"]["households"]["meets_target"] is True
    assert v["by_scenario"]["region+age"]["meets_target"] is False
    assert "'region+age'" in result.verdict and "unsafe" in result.verdict
    text = str(result.summary())
    assert "region+age" in text and "unsafe" in text
    # each scenario's figures are those of the public measure under that scenario
    for name, keys in (("region", ["region"]), ("region+age", ["region", "age"])):
        expected = sdckit.individual_risk(data, keys=keys, weight="w").global_risk
        assert result.assessment(name).global_risk == pytest.approx(expected, rel=1e-12)
    assert result.assessment("region").safe is True
    assert result.assessment("region+age").safe is False
    # the household scenario carries the household rule
    rules = result.assessment("households").original.risk["rules"]
    assert [r["measure"] for r in rules] == ["individual rate", "household rate"]


def test_a_household_scenario_can_be_the_worst():
    """Twenty regions of 10 records (f = 10, F = 1,000), every record the same risk r0 (about
    0.0011, below the target); four households of 50. Without households the file is safe; with
    them each household's risk is 1 - (1 - r0)^50 = 1 - exp(50 log(1 - 0.00110988)) = 0.054011,
    above the target: the household scenario decides."""
    n = 200
    df = pl.DataFrame({"region": [f"r{i % 20}" for i in range(n)], "w": [100.0] * n, "hh": [i // 50 for i in range(n)]})
    persons = sdckit.Scenario(keys=["region"], weight="w", name="persons")
    households = sdckit.Scenario(keys=["region"], weight="w", household="hh", name="households")
    res = sdckit.assess(df, [persons, households])
    r0 = sdckit.individual_risk(df, keys=["region"], weight="w").global_risk
    assert r0 == pytest.approx(0.00110988, abs=1e-8)
    assert res.worst == "households" and res.safe is False
    assert res.original["measure"] == "household rate"
    assert res.original["value"] == pytest.approx(1 - (1 - r0) ** 50, rel=1e-9)
    assert res.original["value"] == pytest.approx(0.054011, abs=1e-6)
    assert res.original["by_scenario"]["persons"]["meets_target"] is True


def test_safe_under_every_scenario_names_the_closest(data):
    res = sdckit.assess(data, [REGION, REGION_HH])
    assert res.safe is True
    ratios = {n: max(r["value"] / r["target"] for r in res.assessment(n).original.risk["rules"]) for n in res.names}
    assert res.worst == max(ratios, key=ratios.get)
    assert res.verdict.startswith("safe under all 2 scenarios")


def test_one_scenario_stays_as_today(data):
    one = sdckit.assess(data, REGION_AGE.__class__(keys=["region", "age"], weight="w"))
    assert isinstance(one, AssessmentResult)
    listed = sdckit.assess(data, [REGION_AGE])
    assert isinstance(listed, ScenariosAssessment) and listed.worst == "region+age"
    assert listed.assessment("region+age").global_risk == one.global_risk


def test_order_of_scenarios_does_not_change_the_verdict(data, result):
    again = sdckit.assess(data, [REGION_HH, REGION_AGE, REGION])
    assert again.worst == result.worst and again.safe == result.safe
    assert again.original["value"] == result.original["value"]


def test_variants_are_judged_under_every_scenario(data):
    recipe = {"name": "drop age", "steps": [{"method": "global_recode", "parameters": {
        "variables": ["age"], "breaks": [-1, 99, 199]}}]}  # fmt: skip
    res = sdckit.assess(data, [REGION, REGION_AGE], recipes=[recipe])
    assert [v["variant"] for v in res.verdicts] == ["original", "drop age"]
    # two age groups of 100: under region+age every cell has f = 50, F = 5,000, far below 1 %
    assert res.verdicts[1]["safe"] is True
    assert res.verdicts[0]["safe"] is False
    assert res.assessment("region").variants[1].name == "drop age"


def test_to_dict_and_html(result, tmp_path):
    d = result.to_dict()
    json.dumps(d)
    assert d["worst"] == "region+age" and d["safe"] is False
    assert [s["name"] for s in d["scenarios"]] == list(result.names)
    assert d["direct_identifiers"] == ["pid"]
    path = tmp_path / "r.html"
    text = result.to_html(path)
    assert path.read_text() == text and "Scenario: region+age" in text
    with pytest.raises(SdcError, match="already exists"):
        result.to_html(path)
    with pytest.raises(SdcError, match="name: no scenario 'x'"):
        result.assessment("x")


# ----------------------------------------------------------------------------------------------
# direct identifiers
# ----------------------------------------------------------------------------------------------
def test_direct_identifiers_are_never_measured_nor_reported(data, result):
    a = result.assessment("region")
    assert a.n_columns == 4  # pid removed before anything is measured
    payload = json.dumps(result.to_dict()) + result.to_html()
    assert not any(f"P-{i:05d}" in payload for i in range(N))


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_drop_direct_identifiers_keeps_the_input(data, kind):
    frame = {"pandas": data.to_pandas(), "polars": data, "pyarrow": data.to_arrow()}[kind]
    out = REGION.drop_direct_identifiers(frame)
    cols = list(out.columns) if kind != "pyarrow" else out.column_names
    assert cols == ["region", "age", "w", "hh"]
    before = list(frame.columns) if kind != "pyarrow" else frame.column_names
    assert "pid" in before  # the input is not changed
    assert sdckit.Scenario(keys=["region"]).drop_direct_identifiers(frame) is frame
    with pytest.raises(SdcError, match="data: got dict"):
        REGION.drop_direct_identifiers({"pid": [1]})


def test_protected_file_with_or_without_the_identifiers(data):
    protected = data.with_columns(pl.lit(None, dtype=pl.Int64).alias("age"))
    with_ids = sdckit.assess(data, REGION_AGE, protected=protected)
    assert any("still holds the direct identifier(s) pid" in n for n in with_ids.notes)
    without = sdckit.assess(data, REGION_AGE, protected=protected.drop("pid"))
    assert not any("still holds" in n for n in without.notes)
    assert any("direct identifiers removed: pid" in n for n in without.notes)
    assert without.variants[1].risk == with_ids.variants[1].risk


def test_direct_identifier_errors(data):
    with pytest.raises(SdcError, match="direct_identifiers: region also in keys"):
        sdckit.Scenario(keys=["region"], direct_identifiers=["region"])
    with pytest.raises(SdcError, match="direct_identifiers: column.s. nope not found"):
        sdckit.assess(data, sdckit.Scenario(keys=["region"], direct_identifiers=["nope"]))


def test_release_type():
    assert RELEASE_TYPES == ("public-use", "scientific-use")
    for spelling, expected in (("PUF", "public-use"), ("public_use", "public-use"), ("suf", "scientific-use")):
        assert sdckit.Scenario(keys=["a"], release_type=spelling).release_type == expected
    with pytest.raises(SdcError, match="release_type: got 'secret'; expected one of 'public-use', 'scientific-use'"):
        sdckit.Scenario(keys=["a"], release_type="secret")
    with pytest.raises(SdcError, match="name: got int"):
        sdckit.Scenario(keys=["a"], name=3)


def test_duplicate_names_are_refused(data):
    with pytest.raises(SdcError, match="'region' are given twice"):
        sdckit.assess(data, [REGION, REGION])
    with pytest.raises(SdcError, match="entry 2 is a str"):
        sdckit.assess(data, [REGION, "x"])
    unnamed = sdckit.assess(data, [sdckit.Scenario(keys=["region"]), sdckit.Scenario(keys=["age"])])
    assert unnamed.names == ("scenario 1", "scenario 2")


# ----------------------------------------------------------------------------------------------
# the scenario file
# ----------------------------------------------------------------------------------------------
SEVERAL = (
    sdckit.Scenario(keys=["region", "age"], weight="w", name="census", release_type="suf", direct_identifiers=["pid"]),
    sdckit.Scenario(
        keys=["region"],
        weight="w",
        household="hh",
        name="neighbours",
        release_type="suf",
        direct_identifiers=["pid"],
        linked={"province": "region"},
    ),
)


def test_scenario_file_round_trip():
    d = scenarios_to_dict(SEVERAL)
    assert d["release_type"] == "scientific-use" and d["direct_identifiers"] == ["pid"]
    assert [s["name"] for s in d["scenarios"]] == ["census", "neighbours"]
    assert "release_type" not in d["scenarios"][0]
    assert scenarios_from_dict(json.loads(json.dumps(d))) == SEVERAL
    one = SEVERAL[0]
    assert scenarios_to_dict(one) == one.to_dict()
    assert scenarios_from_dict(one.to_dict()) == (one,)
    # shared roles at the top level fill every scenario that does not set them
    shared = {"weight": "w", "release_type": "public", "scenarios": [{"keys": ["a"]}, {"keys": ["b"], "weight": "v"}]}
    a, b = scenarios_from_dict(shared)
    assert (a.weight, b.weight, a.name, b.release_type) == ("w", "v", "scenario 1", "public-use")


_columns = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3, unique=True)


@st.composite
def _scenario_lists(draw):
    n = draw(st.integers(1, 4))
    release = draw(st.sampled_from([None, "public-use", "scientific-use"]))
    ids = draw(st.sampled_from([(), ("pid",), ("pid", "name")]))
    out = []
    for i in range(n):
        keys = draw(_columns)
        linked = {"g": keys[0]} if draw(st.booleans()) else {}
        out.append(
            sdckit.Scenario(
                keys=keys,
                weight=draw(st.sampled_from([None, "w"])),
                household=draw(st.sampled_from([None, "hh"])),
                name=f"s{i}" if n > 1 or draw(st.booleans()) else None,
                release_type=draw(st.sampled_from([release, "public-use"])),
                direct_identifiers=ids,
                linked=linked,
            )
        )
    return tuple(out)


@settings(max_examples=60, deadline=None)
@given(_scenario_lists())
def test_scenario_file_round_trip_property(scenarios):
    d = scenarios_to_dict(scenarios)
    assert scenarios_from_dict(json.loads(json.dumps(d))) == scenarios


def test_scenario_file_errors():
    with pytest.raises(SdcError, match="scenario: unknown entry colour"):
        scenarios_from_dict({"keys": ["a"], "colour": "red"})
    with pytest.raises(SdcError, match="scenarios: expected a non-empty list"):
        scenarios_from_dict({"scenarios": []})
    with pytest.raises(SdcError, match="scenarios: entry 2: release_type"):
        scenarios_from_dict({"scenarios": [{"keys": ["a"]}, {"keys": ["a"], "release_type": "x"}]})


def test_cli_assess_config_with_several_scenarios(data, tmp_path, capsys):
    path = tmp_path / "data.csv"
    data.write_csv(path)
    config = tmp_path / "scenarios.json"
    config.write_text(json.dumps(scenarios_to_dict([REGION, REGION_AGE])))
    report, js = tmp_path / "r.html", tmp_path / "r.json"
    args = ["assess", str(path), "--config", str(config), "--report", str(report), "--json", str(js)]
    assert main([*args, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "fails under scenario 'region+age'" in out
    payload = json.loads(js.read_text())["assessment"]
    assert payload["worst"] == "region+age" and payload["measure"] == "assessment_by_scenario"
    assert "Scenario: region" in report.read_text()
    config.write_text(json.dumps({"scenarios": [{"keys": ["region"]}], "colour": 1}))
    assert main([*args, "--overwrite", "--no-progress"]) == 2
    assert "unknown role(s) colour" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# the worst verdict: properties
# ----------------------------------------------------------------------------------------------
def _fake(value: float, household: float | None = None) -> AssessmentResult:
    rules = [{"measure": "individual rate", "value": value, "target": 0.01, "meets_target": value <= 0.01}]
    if household is not None:
        rules.append(
            {"measure": "household rate", "value": household, "target": 0.01, "meets_target": household <= 0.01}
        )
    return AssessmentResult(variants=(VariantAssessment("original", "original", risk={"rules": rules}),))


values = st.floats(0.0001, 0.1, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(values, st.none() | values), min_size=1, max_size=5, unique_by=lambda t: t[0]), st.randoms())
def test_worst_verdict_is_the_largest_ratio_and_ignores_order(specs, rnd):
    names = [f"s{i}" for i in range(len(specs))]
    fakes = [_fake(v, h) for v, h in specs]
    verdict = worst_verdicts(names, fakes)[0]
    all_rules = [(n, v, h) for n, (v, h) in zip(names, specs)]
    top = max(max(v, h or 0) for _, v, h in all_rules)
    assert verdict["value"] == top
    assert verdict["safe"] is (top <= 0.01)
    # the named scenario's named rule is the one with that value (ties: any of them)
    v, h = specs[names.index(verdict["scenario"])]
    assert {"individual rate": v, "household rate": h}[verdict["measure"]] == top
    order = list(range(len(specs)))
    rnd.shuffle(order)
    again = worst_verdicts([names[i] for i in order], [fakes[i] for i in order])[0]
    assert (again["value"], again["safe"]) == (verdict["value"], verdict["safe"])


def test_no_rule_with_a_target_gives_no_verdict():
    empty = AssessmentResult(variants=(VariantAssessment("original", "original", risk=None),))
    v = worst_verdicts(["a"], [empty])[0]
    assert v["safe"] is None and v["scenario"] is None


# ----------------------------------------------------------------------------------------------
# what the workflow (workflow/problem.py, report/html.py: the lead's files) still has to do
# ----------------------------------------------------------------------------------------------
def test_the_workflow_writes_no_direct_identifier(data, tmp_path):
    p = sdckit.SdcProblem(data, REGION_AGE).apply("local_suppression", k=2)
    path = tmp_path / "released.csv"
    p.write(path)
    assert "pid" not in pl.read_csv(path).columns


def test_a_workflow_report_shows_the_release_fields(data):
    p = sdckit.SdcProblem(data, REGION_AGE)
    assert "region+age" in p.report().to_html()
