"""The risk-utility comparison of an assessment: every change counted in the loss, a loss that
does not depend on units, the risk that decides on the map, PRAM counted as PRAM, the reviewer's
tables and the report for data users.

The bundled example (1,915 records, 800 households) with four variants like a new user would try:
k = 3 by local suppression; age groups merged to 20-year groups then k = 3; the same plus MDAV on
income; the same plus PRAM of the economic status. The EU-SILC acceptance case (../shared) is
at the end.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import shared_file
from sdckit.datasets import EXAMPLE_KEYS, load_example

#: 5-year age groups merged into 20-year groups (the last open)
AGE20 = {
    **{g: "0-19" for g in ("0-4", "5-9", "10-14", "15-19")},
    **{g: "20-39" for g in ("20-24", "25-29", "30-34", "35-39")},
    **{g: "40-59" for g in ("40-44", "45-49", "50-54", "55-59")},
    **{g: "60+" for g in ("60-64", "65-69", "70-74", "75-79", "80-84", "85+")},
}
RECODE = {"method": "global_recode", "parameters": {"variables": ["age_group"], "mapping": AGE20}}
K3 = {"method": "local_suppression", "parameters": {"k": 3}}
MDAV = {"method": "microaggregation", "parameters": {"variables": ["income"], "group_size": 3}}
PRAM = {"method": "pram", "parameters": {"variables": ["econ_status"], "seed": 7}}
RECIPES = [
    {"name": "k3", "steps": [K3]},
    {"name": "recode, k3", "steps": [RECODE, K3]},
    {"name": "recode, k3, mdav", "steps": [RECODE, K3, MDAV]},
    {"name": "recode, k3, mdav, pram", "steps": [RECODE, K3, MDAV, PRAM]},
]


def _scenario(**extra):
    return sdckit.Scenario(
        keys=list(EXAMPLE_KEYS), numeric_keys=["income"], weight="weight", household="household", **extra
    )


@pytest.fixture(scope="module")
def data():
    return load_example()


@pytest.fixture(scope="module")
def result(data):
    return sdckit.assess(data, _scenario(), recipes=RECIPES, progress=False)


def _loss_view(res) -> dict:
    """What the comparison shows: per variant the loss, its parts, the risk on the map, and the
    relative changes of the estimates (everything a unit could move)."""
    out = {}
    for v in res.variants[1:]:
        est = v.estimates
        out[v.name] = (
            round(v.loss, 12),
            {x: round(lam, 12) for x, lam in v.loss_by_variable.items()},
            v.risk["measure"],
            round(v.risk["value"], 15),
            None
            if "skipped" in est
            else [None if r["relative_change"] is None else round(r["relative_change"], 9) for r in est["rows"]],
            None if "skipped" in est else [r["covered"] for r in est["rows"]],
        )
    return out


# ----------------------------------------------------------------------------------------------
# 1. every change counted
# ----------------------------------------------------------------------------------------------
def test_recoding_is_counted_in_the_loss(result):
    k3, rk3 = result.variant("k3"), result.variant("recode, k3")
    assert rk3.change_by_variable["age_group"]["kind"].startswith("recoded")
    assert rk3.loss_by_variable["age_group"] > 0
    # 18 age groups became 4: the recode table says which went where
    table = rk3.recodes["age_group"]
    assert table["n_categories_before"] == 18 and table["n_categories_after"] == 4
    assert sorted(r["category"] for r in table["rows"]) == ["0-19", "20-39", "40-59", "60+"]
    assert sum(r["records"] for r in table["rows"]) + table["n_suppressed"] == result.n
    # each group lists the 5-year groups merged into it (AGE20), with their records: at most the
    # records of that age group in the data (some were suppressed), and adding up to the group
    counts = dict(zip(*np.unique(load_example()["age_group"].to_numpy(), return_counts=True)))
    for r in table["rows"]:
        assert sorted(r["original_categories"]) == sorted(g for g, to in AGE20.items() if to == r["category"])
        assert all(k <= counts[g] for g, k in zip(r["original_categories"], r["original_records"]))
        assert sum(r["original_records"]) == r["records"]
    # every variable a variant changes is in its loss, with its share of the total
    for v in result.variants[1:]:
        changed = {x for x, c in v.change_by_variable.items() if c["kind"] != "unchanged"}
        assert changed <= {x for x, lam in v.loss_by_variable.items() if lam > 0}
        assert sum(v.share_by_variable.values()) == pytest.approx(1.0)
        assert v.loss == pytest.approx(np.mean(list(v.loss_by_variable.values())), abs=1e-15)
    # the decision: the loss split into suppressions and other changes adds up
    from sdckit.report.table import split_loss

    for v in (k3, rk3):
        sup, other = split_loss(v)
        assert sup + other == pytest.approx(v.loss, abs=1e-15)
    # suppression only changes nothing but suppressed cells
    assert split_loss(k3)[1] == pytest.approx(0.0, abs=1e-15)
    text = str(result.summary())
    assert f"{sum(k3.suppressed_by_variable.values()):,} suppressed cells" in text
    assert "Risk against loss" in text and "from suppressions" in text


def test_suppressions_per_variable_match_the_data(result, data):
    v = result.variant("k3")
    # a cell is suppressed when the original has a value and the variant has none: recount it
    replayed = sdckit.SdcProblem.from_recipe(data, {"steps": [K3], "scenario": {"keys": list(EXAMPLE_KEYS)}})
    out = (
        pl.from_pandas(replayed.history[-1].result.data)
        if not isinstance(replayed.history[-1].result.data, pl.DataFrame)
        else replayed.history[-1].result.data
    )
    for key in EXAMPLE_KEYS:
        expected = int((data[key].is_not_null() & out[key].is_null()).sum())
        assert v.suppressed_by_variable[key] == expected


# ----------------------------------------------------------------------------------------------
# 2. units do not matter
# ----------------------------------------------------------------------------------------------
def test_income_in_thousandths_changes_nothing(data, result):
    scaled = data.with_columns(pl.col("income") * 1000)
    res = sdckit.assess(scaled, _scenario(), recipes=RECIPES, progress=False)
    assert _loss_view(res) == _loss_view(result)
    assert res.variant("recode, k3, mdav").loss_by_variable["income"] > 0


# ----------------------------------------------------------------------------------------------
# 3. the risk that decides is on the map
# ----------------------------------------------------------------------------------------------
def test_map_shows_the_household_rate_when_that_rule_fails(result):
    o = result.original
    assert o.categorical_risk["failing"] == ["household rule"] or "household rule" in o.categorical_risk["failing"]
    assert o.risk["measure"] == "household rate"
    assert o.risk["value"] == o.categorical_risk["household"]["global_risk"]
    assert o.risk["value"] > o.risk["target"] == result.max_global_risk
    assert [r["measure"] for r in o.risk["rules"]] == ["individual rate", "household rate"]
    for v in result.variants[1:]:
        assert v.risk["measure"] == "household rate"
        assert v.risk["value"] == v.categorical_risk["household"]["global_risk"]
    page = result.to_html()
    assert "household rate (%)" in page


def test_deciding_rule():
    from sdckit.assessment.tradeoff import deciding_rule

    rule = lambda m, v, t, ok: {"measure": m, "value": v, "target": t, "meets_target": ok}  # noqa: E731
    # fails both: the one furthest above its target (0.03/0.01 = 3 > 0.02/0.01)
    assert deciding_rule([rule("individual rate", 0.02, 0.01, False), rule("household rate", 0.03, 0.01, False)]) == (
        "household rate"
    )
    # fails one: that one, even if the other is closer to its target by ratio
    assert deciding_rule([rule("individual rate", 0.011, 0.01, False), rule("household rate", 0.009, 0.01, True)]) == (
        "individual rate"
    )
    # fails none: the one closest to its target
    assert deciding_rule([rule("individual rate", 0.002, 0.01, True), rule("household rate", 0.008, 0.01, True)]) == (
        "household rate"
    )
    assert deciding_rule([rule("records in the 5 % sd interval", 0.4, None, None)]) == "records in the 5 % sd interval"
    assert deciding_rule([]) is None


# ----------------------------------------------------------------------------------------------
# 4. PRAM counted as PRAM
# ----------------------------------------------------------------------------------------------
def test_pram_variant_is_adjusted(result, data):
    v = result.variant("recode, k3, mdav, pram")
    assert v.categorical_risk["pram_adjusted"] == ["econ_status"]
    assert v.change_by_variable["econ_status"]["kind"].startswith("pram")
    assert "econ_status" in v.pram and "econ_status" in v.ebil
    matrix = np.array(v.pram["econ_status"]["matrix"])
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-12)
    # its tau2 is the PRAM-adjusted log-linear estimate on the released file, with the diagonal
    problem = sdckit.SdcProblem.from_recipe(data, {"steps": RECIPES[3]["steps"]}, _scenario())
    released = problem.history[-1].result.table
    diagonal = problem.history[-1].result.details["pram_diagonal"]
    with pytest.warns(sdckit.SdcWarning, match="missing key value are excluded"):  # the suppressed keys
        ll = sdckit.loglinear_risk(released, list(EXAMPLE_KEYS), weight="weight", pram=diagonal)
    assert any(n.startswith("recode, k3, mdav, pram: keys:") and "excluded" in n for n in result.notes)
    if "skipped" in v.loglinear:
        pytest.fail(f"log-linear skipped: {v.loglinear['skipped']}")
    assert v.loglinear["tau2"] == pytest.approx(ll.pram["tau2"], rel=1e-12)
    assert v.loglinear["tau2_unadjusted"] == pytest.approx(ll.tau2, rel=1e-12)
    # the individual risk too: below the naive risk of the same released file
    naive = sdckit.individual_risk(released, list(EXAMPLE_KEYS), weight="weight", household="household")
    assert v.categorical_risk["global_risk"] < naive.global_risk


# ----------------------------------------------------------------------------------------------
# 5. what a reviewer asks to see, and the JSON
# ----------------------------------------------------------------------------------------------
def test_to_dict_variants_hold_the_tradeoff(result):
    d = result.to_dict()
    for v in d["variants"][1:]:
        assert {"risk", "loss", "loss_by_variable", "suppressed_by_variable", "estimates"} <= set(v)
        assert v["risk"]["measure"] == "household rate" and isinstance(v["risk"]["value"], float)
        assert isinstance(v["loss"], float)
        assert set(v["loss_by_variable"]) == set(d["loss_scales"])
        assert v["estimates"]["rows"], v["estimates"]
    import json

    json.dumps(d)


def test_estimates_table_has_the_users_estimates(result):
    est = result.variant("recode, k3, mdav").estimates
    kinds = {r["kind"] for r in est["rows"]}
    assert {"total", "share", "mean", "coefficient"} <= kinds
    assert est["domains"] == ["region", "sex", "education", "econ_status", "citizenship"]  # age_group: 18 categories
    # MDAV on top of the same suppressions moves the mean incomes by domain only a little
    before = {
        (r["domain"], r["category"]): r["protected"]
        for r in result.variant("recode, k3").estimates["rows"]
        if r["kind"] == "mean"
    }
    after = [(r["protected"], before[(r["domain"], r["category"])]) for r in est["rows"] if r["kind"] == "mean"]
    assert after and max(abs(a / b - 1) for a, b in after if a is not None and b) < 0.05


def test_external_report_has_no_risk_and_no_records(result, data, tmp_path):
    page = result.to_html(tmp_path / "users.html", audience="external")
    text = re.sub(r"<[^>]+>", " ", page)
    for word in ("re-identification", "global risk", "household rate", "tau", "k-anonymity", "SUDA", "threshold"):
        assert word not in text, word
    assert "How the published estimates move" in text and "PRAM transition matrices" in text
    assert "What was done" in text and "age_group" in text
    # no record values: no distinctive income of the file (>= 1,000; an axis shows 0.0) in the page
    incomes = [x for x in data["income"].drop_nulls().unique().to_list() if abs(x) >= 1000]
    assert len(incomes) > 100
    texts = {t for x in incomes for t in (f"{x:.1f}", f"{x:g}", f"{x:,.0f}", repr(x))}
    # (a mean income by domain, printed to 6 digits, may equal a round income by chance: the
    # estimates' own figures are aggregates over at least 5 records)
    shown = {
        f"{x:g}"
        for v in result.variants[1:]
        for r in v.estimates["rows"]
        for x in (r["original"], r["protected"])
        if x is not None
    }
    assert not [t for t in texts - shown if f">{t}<" in page]
    internal = result.to_html()
    assert "household rate" in internal and "How the published estimates move" in internal


def test_cli_writes_both_reports(tmp_path, data):
    import json

    from sdckit.cli import main

    path = tmp_path / "d.csv"
    data.write_csv(path)
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps(RECIPES[1]))
    rc = main(
        [
            "assess",
            str(path),
            "--keys",
            ",".join(EXAMPLE_KEYS),
            "--numeric-keys",
            "income",
            "--weight",
            "weight",
            "--household",
            "household",
            "--recipe",
            str(recipe),
            "--report",
            str(tmp_path / "in.html"),
            "--external-report",
            str(tmp_path / "out.html"),
            "--domains",
            "region,sex",
            "--json",
            str(tmp_path / "a.json"),
        ]
    )
    assert rc == 0
    d = json.loads((tmp_path / "a.json").read_text())
    v = d["assessment"]["variants"][1]
    assert v["name"] == "recode, k3"  # the recipe's own name
    assert {r["domain"] for r in v["estimates"]["rows"] if r.get("domain")} <= {"region", "sex"}
    assert "household rate" not in (tmp_path / "out.html").read_text()


# ----------------------------------------------------------------------------------------------
# 6. no silent gaps
# ----------------------------------------------------------------------------------------------
def test_skipped_loglinear_says_why_everywhere(result):
    # the example's full key table is small enough; force a skip by a tiny limit
    from sdckit.assessment import measures as M

    old = M.LOGLINEAR_MAX_CELLS
    M.LOGLINEAR_MAX_CELLS = 10
    try:
        res = sdckit.assess(load_example(), _scenario(), progress=False)
    finally:
        M.LOGLINEAR_MAX_CELLS = old
    assert "skipped" in res.original.loglinear
    text = str(res.summary())
    assert "skipped (see notes)" in text
    assert any(n.startswith("log-linear risk skipped: the full table of the keys has") for n in res.notes)
    assert "log-linear risk skipped" in res.to_html()
    assert any("log-linear risk skipped" in n for n in res.to_dict()["notes"])


# ----------------------------------------------------------------------------------------------
# the acceptance case: EU-SILC (../shared)
# ----------------------------------------------------------------------------------------------
SILC_KEYS = ["db040", "hsize", "age", "rb090", "pl030", "pb220a"]
SILC_RECODE = {
    "method": "global_recode",
    "parameters": {"variables": ["age"], "breaks": [-2, 15, 25, 35, 45, 55, 65, 75, 120]},
}
SILC_RECIPES = [
    {"name": "k3", "steps": [K3]},
    {"name": "recode age, k3", "steps": [SILC_RECODE, K3]},
    {
        "name": "recode age, k3, mdav",
        "steps": [SILC_RECODE, K3, {"method": "microaggregation", "parameters": {"variables": ["eqIncome"]}}],
    },
    {
        "name": "recode age, k3, mdav, pram",
        "steps": [
            SILC_RECODE,
            K3,
            {"method": "microaggregation", "parameters": {"variables": ["eqIncome"]}},
            {"method": "pram", "parameters": {"variables": ["pl030"], "seed": 1}},
        ],
    },
]


@pytest.mark.shared_data
def test_eusilc_four_variants():
    data = pl.read_csv(shared_file("laeken", "eusilc.csv"))
    sc = sdckit.Scenario(keys=SILC_KEYS, numeric_keys=["eqIncome"], weight="rb050", household="db030")
    res = sdckit.assess(data, sc, recipes=SILC_RECIPES, progress=False)
    from sdckit.report.table import split_loss

    k3, rk3 = res.variant("k3"), res.variant("recode age, k3")
    assert rk3.loss_by_variable["age"] > 0
    # less loss for suppression only, unless the recode saves more suppression loss than it costs
    saved = split_loss(k3)[0] - split_loss(rk3)[0]
    cost = split_loss(rk3)[1]
    assert (k3.loss < rk3.loss) == (saved < cost)
    # the household rule decides and the original fails it
    assert res.original.risk["measure"] == "household rate" and res.original.risk["meets_target"] is False
    # MDAV on income: small, unit-free loss. MDAV(3) moves an income by about 1 % of its value,
    # a few hundredths of a standard deviation: (2/pi) arctan(0.03) = 0.019 bounds the mean from
    # above for all but the largest incomes; 0.05 leaves room, the raw arctan form gives ~0.4
    assert res.variant("recode age, k3, mdav").loss_by_variable["eqIncome"] < 0.05
    # income x 1000: the same comparison
    scaled = data.with_columns(pl.col("eqIncome") * 1000)
    again = sdckit.assess(scaled, sc, recipes=SILC_RECIPES, progress=False)
    assert _loss_view(again) == _loss_view(res)
    text = str(res.summary())
    assert "has the least loss" in text


# ----------------------------------------------------------------------------------------------
# the scenario's scales and domains
# ----------------------------------------------------------------------------------------------
def test_scenario_scales_and_domains(data):
    sc = _scenario(domains=["region", "sex"], scales={"age_group": "nominal", "income": "continuous"})
    assert sc.scales == {"age_group": "nominal", "income": "numeric"} and hash(sc) == hash(
        _scenario(domains=("region", "sex"), scales={"income": "numeric", "age_group": "categorical"})
    )
    with pytest.raises(TypeError):
        sc.scales["x"] = "nominal"
    with pytest.raises(sdckit.SdcError, match="scales: the scale of 'age' is not one of nominal"):
        _scenario(scales={"age": "interval"})
    with pytest.raises(sdckit.SdcError, match="expected a mapping"):
        _scenario(scales=["age"])
    with pytest.raises(sdckit.SdcError, match=r"domains: column\(s\) nope not found"):
        sdckit.assess(data, _scenario(domains=["nope"]), progress=False)
    res = sdckit.assess(data, sc, recipes=RECIPES[:2], progress=False)
    assert res.variant("k3").estimates["domains"] == ["region", "sex"]
    assert res.loss_scales["income"] == "numeric" and res.to_dict()["scenario"]["scales"]["income"] == "numeric"
    # a recipe keeps them
    problem = sdckit.SdcProblem(data, sc).apply("local_suppression", k=3)
    rec = problem.to_recipe()
    assert rec["scenario"]["domains"] == ["region", "sex"] and rec["scenario"]["scales"]["age_group"] == "nominal"
    assert sdckit.SdcProblem.from_recipe(data, rec).scenario == sc


def test_an_integer_key_with_many_values_is_a_number():
    """Integer-coded keys: more than 20 values read as a number (an age), up to 20 as codes."""
    from sdckit.assessment.tradeoff import loss_scales
    from sdckit.engines import local_engine

    rng = np.random.default_rng(0)
    d = pl.DataFrame({"age": rng.integers(0, 90, 500), "status": rng.integers(1, 8, 500), "x": rng.normal(size=500)})
    eng = local_engine()
    scales = loss_scales(eng.table(d), sdckit.Scenario(keys=["age", "status"]), ["age", "status", "x"], eng)
    assert scales == {"age": "numeric", "status": "nominal", "x": "numeric"}
    scales = loss_scales(eng.table(d), sdckit.Scenario(keys=["age"], scales={"age": "nominal"}), ["age"], eng)
    assert scales == {"age": "nominal"}


def test_cli_scales_option(tmp_path, data, capsys):
    from sdckit.cli import main

    path = tmp_path / "d.csv"
    data.write_csv(path)
    base = ["assess", str(path), "--keys", "region,sex", "--report", str(tmp_path / "r.html")]
    assert main([*base, "--scales", "income"]) == 2
    assert "--scales: 'income' is not VARIABLE=SCALE" in capsys.readouterr().err
    assert main([*base, "--scales", "income=interval"]) == 2
    assert "the scale of 'income' is not one of" in capsys.readouterr().err


def test_pram_within_strata_is_adjusted_with_the_matrix_of_each_stratum(data):
    """PRAM within strata publishes one matrix per stratum: the variant's risk is adjusted with
    each record's stratum's matrix (the same as the measure given the published per-stratum
    form), its loss counts the expected change, and the report lists a matrix per stratum."""
    recipe = {
        "name": "pram by region",
        "steps": [{"method": "pram", "parameters": {"variables": ["econ_status"], "strata": ["region"], "seed": 2}}],
    }
    res = sdckit.assess(data, _scenario(), recipes=[recipe], progress=False)
    v = res.variant("pram by region")
    assert v.categorical_risk["pram_adjusted"] == ["econ_status"]
    step = sdckit.pram(data, ["econ_status"], strata=["region"], seed=2)
    sc = _scenario()
    direct = sdckit.individual_risk(
        step.table, list(sc.keys), weight=sc.weight, pram=step.details["pram_diagonal_by_stratum"]
    )
    naive = sdckit.individual_risk(step.table, list(sc.keys), weight=sc.weight)
    assert v.categorical_risk["global_risk"] == pytest.approx(direct.global_risk, rel=1e-12)
    assert direct.global_risk < naive.global_risk
    regions = sorted(data.get_column("region").unique().to_list())
    assert sorted(v.pram) == [f"econ_status (stratum {r})" for r in regions]
    assert v.change_by_variable["econ_status"]["kind"] == "pram" and v.loss_by_variable["econ_status"] > 0
    assert any("econ_status PRAMed within strata: each record's risk is adjusted" in n for n in res.notes)
    p = sdckit.SdcProblem(data, _scenario()).apply("pram", variables=["econ_status"], seed=4)
    rep = p.report()
    assert rep.variants[1].categorical_risk["pram_adjusted"] == ["econ_status"]
    assert p.measures["global_risk"] == rep.variants[1].categorical_risk["global_risk"]


def test_pram_of_a_variable_that_is_not_a_key(data):
    """PRAM of a non-key variable changes no key's risk: the variant's risk is the naive one, its
    loss counts the PRAMed variable's expected change (found by the app's browser test)."""
    recipe = {"name": "pram health", "steps": [{"method": "pram", "parameters": {"variables": ["health"], "seed": 3}}]}
    res = sdckit.assess(data, _scenario(), recipes=[recipe], progress=False)
    v = res.variant("pram health")
    assert v.categorical_risk["pram_adjusted"] == []
    assert v.categorical_risk["global_risk"] == res.original.categorical_risk["global_risk"]
    assert v.change_by_variable["health"]["kind"] == "pram" and v.loss_by_variable["health"] > 0
    p = sdckit.SdcProblem(data, _scenario()).apply("pram", variables=["health"], seed=3)
    assert p.report().variants[1].loss_by_variable["health"] > 0
