"""sdckit.assess and its HTML report: privacy (no value of a non-key variable, no record
identifier), every section and figure, the numbers equal the public measures', variants from
recipes and a protected file, clear errors and no half-written report, deterministic output, no
reference to anything outside the file."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import DATA
from sdckit import assess
from sdckit.assessment.combinations import key_subsets
from sdckit.results._base import fmt, fmt_share

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
NUMERIC = ["income", "expend"]
#: water has the categories 1-7 and 9; the recode merges them into four
WATER_MAP = {1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 9: 4}
K3 = {"name": "k3", "steps": [{"method": "local_suppression", "parameters": {"k": 3}}]}
RECODE_K3 = {
    "name": "recode water, k3",
    "steps": [
        {"method": "global_recode", "parameters": {"variables": ["water"], "mapping": WATER_MAP}},
        {"method": "local_suppression", "parameters": {"k": 3}},
    ],
}
FIGURES = {
    "fig-k-anonymity",
    "fig-risk-distribution",
    "fig-household-risk",
    "fig-key-combinations",
    "fig-suda-contributions",
    "fig-l-diversity",
    "fig-information-loss",
    "fig-risk-utility",
    "fig-confidentiality-1",
    "fig-confidentiality-2",
}
SECTIONS = {
    "data",
    "k-anonymity",
    "risk",
    "reidentifications",
    "combinations",
    "suda",
    "l-diversity",
    "loglinear",
    "information-loss",
    "tradeoff",
    "variants",
    "estimates",
    "recodes",
    "continuous",
    "notes",
}


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    """testdata with record identifiers that must never reach the report: a person id ``pid``
    (P-000001 ...), household ids as text (HH-00001 ...) and a sensitive text variable whose
    values are distinctive (DX-<age>-<hhcivil>)."""
    df = pl.read_csv(TESTDATA)
    return df.with_columns(
        pl.format("P-{}", pl.int_range(1, df.height + 1).cast(pl.String).str.zfill(6)).alias("pid"),
        pl.format("HH-{}", pl.col("ori_hid").cast(pl.String).str.zfill(5)).alias("ori_hid"),
        pl.format("DX-{}-{}", pl.col("age"), pl.col("hhcivil")).alias("diagnosis"),
    )


@pytest.fixture(scope="module")
def scenario() -> sdckit.Scenario:
    return sdckit.Scenario(
        keys=KEYS,
        numeric_keys=NUMERIC,
        weight="sampling_weight",
        household="ori_hid",
        sensitive=["diagnosis"],
    )


@pytest.fixture(scope="module")
def result(data, scenario):
    return assess(data, scenario, recipes=[K3, RECODE_K3])


@pytest.fixture(scope="module")
def page(result) -> str:
    return result.to_html()


@pytest.fixture(scope="module")
def payload(result) -> str:
    return json.dumps(result.to_dict())


# ----------------------------------------------------------------------------------------------
# privacy
# ----------------------------------------------------------------------------------------------
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?", re.I)


def _number_texts(v: float) -> set[str]:
    """The ways a report could write the number ``v``."""
    out = {repr(float(v)), f"{v:g}", f"{v:.6g}", fmt(float(v))}
    if float(v).is_integer():
        out |= {str(int(v)), f"{int(v):,}"}
    return out


def test_no_value_of_a_non_key_variable_and_no_identifier(data, result, page, payload):
    """No record identifier (pid, household id), no value of the sensitive text variable and no
    distinctive number (>= 5 digits) of income, expend or savings anywhere in the HTML or the
    JSON. Numbers are compared as whole tokens, so that an SVG coordinate such as 109.998198
    cannot hide or fake a value."""
    texts = set(data["pid"]) | set(data["ori_hid"]) | set(data["diagnosis"])
    for doc in (page, payload):
        found = [t for t in texts if t in doc]
        assert found == [], f"identifiers or sensitive values in the output: {found[:5]}"
    numbers = set()
    for col in ("income", "expend", "savings"):
        for v in data[col].drop_nulls().unique().to_list():
            if abs(v) >= 10_000:
                numbers |= _number_texts(v)
    assert len(numbers) > 1000  # the check has something to find
    # the estimates table shows means of income and expend by domain (over at least 5 records,
    # see test_estimates_change.py): printed to 6 digits, one may match some record's value by
    # chance (a mean of 5.02706e+07 against an expend of 50,270,623); those are aggregates
    aggregates = set()
    for v in result.variants[1:]:
        for r in v.estimates["rows"]:
            for k in ("original", "protected", "ci_low", "ci_high", "se"):
                if r.get(k) is not None:
                    aggregates |= _number_texts(r[k])
    for doc in (page, payload):
        tokens = set(_NUMBER.findall(doc)) - aggregates
        leaked = sorted(tokens & numbers)
        assert leaked == [], f"values of non-key variables in the output: {leaked[:5]}"


def test_the_check_would_catch_a_leak(data, page):
    """The privacy check is not vacuous: a value put into the page is found."""
    v = next(x for x in data["income"].to_list() if x >= 10_000)
    tokens = set(_NUMBER.findall(page + f"<td>{int(v)}</td>"))
    assert tokens & _number_texts(v)


EXAMPLE_LABELS = ["South-East", "North-East", "South-West", "upper secondary", "lower secondary", "unemployed"]


def test_key_values_only_with_include_records():
    """Category values of the keys appear only when asked for (the unique cells of the riskiest
    combinations), and then with a warning that the report is record-level."""
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    df = load_example()
    sc = sdckit.Scenario(keys=list(EXAMPLE_KEYS), weight="weight", household="household", sensitive=["health"])
    plain = assess(df, sc).to_html()
    assert [lab for lab in EXAMPLE_LABELS if lab in plain] == []
    detailed = assess(df, sc, include_records=True)
    page = detailed.to_html()
    assert any(lab in page for lab in EXAMPLE_LABELS)
    assert "keep it as confidential as the data" in page
    cells = detailed.to_dict()["combinations"]["unique_cells"]
    assert cells and all(len(c) == len(entry["variables"]) for entry in cells for c in entry["cells"])
    assert "unique_cells" not in assess(df, sc).to_dict()["combinations"]


# ----------------------------------------------------------------------------------------------
# structure of the page
# ----------------------------------------------------------------------------------------------
class _Figures(HTMLParser):
    """Collect every <figure class="sdckit-figure">: its id, whether it holds an <svg>, and the
    text of its <p class="reading">; and the ids of the <section>s."""

    def __init__(self):
        super().__init__()
        self.figures: dict[str, dict] = {}
        self.sections: list[str] = []
        self._fig = None
        self._in_reading = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id"))
        if tag == "figure" and "sdckit-figure" in (a.get("class") or ""):
            self._fig = a["id"]
            self.figures[self._fig] = {"svg": False, "reading": ""}
        elif self._fig and tag == "svg":
            self.figures[self._fig]["svg"] = True
        elif self._fig and tag == "p" and a.get("class") == "reading":
            self._in_reading = True

    def handle_endtag(self, tag):
        if tag == "figure":
            self._fig = None
        if tag == "p":
            self._in_reading = False

    def handle_data(self, d):
        if self._fig and self._in_reading:
            self.figures[self._fig]["reading"] += d


def _parse(page: str) -> _Figures:
    p = _Figures()
    p.feed(page)
    return p


def test_every_section_and_figure(page):
    parsed = _parse(page)
    assert set(parsed.sections) == SECTIONS
    assert set(parsed.figures) == FIGURES
    for fid, fig in parsed.figures.items():
        assert fig["svg"], f"{fid} has no drawing"
        assert len(fig["reading"].split()) >= 8, f"{fid} has no plain-language reading"
    assert page.lstrip().startswith("<!DOCTYPE html>") and "@media print" in page


def test_nothing_outside_the_file(page, result):
    """No script, no external resource, no URL at all (the SVG's namespace URLs are removed)."""
    for doc in (page, result._repr_html_()):
        assert "<script" not in doc.lower()
        assert "http://" not in doc and "https://" not in doc and "ftp://" not in doc
        refs = re.findall(r"""\b(?:src|href)\s*=\s*["']?([^"'\s>]*)""", doc, flags=re.I)
        assert refs and [r for r in refs if not r.startswith("#")] == []
        urls = re.findall(r"url\(\s*['\"]?([^)'\"]*)", doc)
        assert urls and [u for u in urls if not u.startswith("#")] == []
        assert "@import" not in doc and "<link" not in doc.lower() and "<img" not in doc.lower()


def test_figure_ids_are_unique(page):
    """Several inline SVGs share one page: every id is unique and every reference resolves."""
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids))
    refs = set(re.findall(r'(?:url\(#|href="#)([^)"]+)', page))
    assert refs <= set(ids)


def test_jupyter_shows_the_same_report(result, page):
    frag = result._repr_html_()
    assert frag.startswith('<div class="sdckit-report">') and "<html" not in frag
    assert set(_parse(frag).figures) == set(_parse(page).figures)


def test_output_is_deterministic(data, scenario, page):
    again = assess(data, scenario, recipes=[K3, RECODE_K3])
    assert again.to_html() == page
    assert json.dumps(again.to_dict()) == json.dumps(assess(data, scenario, recipes=[K3, RECODE_K3]).to_dict())


# ----------------------------------------------------------------------------------------------
# the numbers are the public measures' numbers
# ----------------------------------------------------------------------------------------------
def test_original_numbers_equal_the_public_measures(data, scenario, result, page):
    risk = sdckit.individual_risk(data, KEYS, weight="sampling_weight", household="ori_hid")
    kan = sdckit.k_anonymity(data, KEYS, k=[2, 3, 5])
    thr = risk.threshold(0.01)
    o = result.original.categorical_risk
    assert o["global_risk"] == risk.global_risk
    assert o["expected_reidentifications"] == risk.expected_reidentifications
    assert o["household"]["global_risk"] == risk.household_global_risk
    assert {int(k): v for k, v in o["n_violations"].items()} == kan.n_violations
    assert o["threshold"] == thr.threshold and o["safe"] == thr.safe and o["verdict"] == thr.verdict
    assert result.global_risk == risk.global_risk and result.safe == thr.safe
    # the risk histogram counts every record once
    assert sum(o["risk_histogram"]) == len(data)
    assert sum(o["household"]["risk_histogram"]) == risk.n_households
    s = sdckit.suda(data, KEYS)
    assert result.original.suda["n_with_msu"] == s.n_with_msu
    assert dict(result.original.suda["share_contributions"]) == pytest.approx(dict(s.share_contributions))
    ld = sdckit.l_diversity(data, KEYS, ["diagnosis"])
    assert result.original.l_diversity["variables"]["diagnosis"]["n_not_2_diverse"] == ld.n_below(2)["diagnosis"]
    ll = sdckit.loglinear_risk(data, KEYS, weight="sampling_weight")
    assert result.original.loglinear["tau1"] == pytest.approx(ll.tau1, rel=1e-12)
    # and the page shows them as the summaries do
    assert fmt_share(risk.global_risk) in page and fmt_share(risk.household_global_risk) in page
    assert f"{kan.n_violations[3]:,} (" in page


def test_variant_numbers_equal_the_public_measures(data, scenario, result):
    replay = sdckit.SdcProblem.from_recipe(data, RECODE_K3, scenario)
    protected = replay.data
    v = result.variant("recode water, k3")
    assert v.kind == "recipe" and v.steps == ("global_recode", "local_suppression")
    risk = sdckit.individual_risk(
        protected, KEYS, weight="sampling_weight", household="ori_hid", allow_degenerate_keys=True
    )
    assert v.categorical_risk["global_risk"] == risk.global_risk
    assert v.categorical_risk["n_violations"]["3"] == 0
    # the loss: every change of the roles' variables and of every changed variable, on the
    # assessment's scales (integer keys with <= 20 values are codes; age has more: a number)
    variables = list(result.loss_scales)
    assert variables[: len(KEYS) + len(NUMERIC) + 1] == [*KEYS, *NUMERIC, "diagnosis"]
    vl = sdckit.variant_loss(data, protected, variables, scales=dict(result.loss_scales))
    assert v.loss_by_variable["water"] == pytest.approx(vl.loss_by_variable["water"], abs=1e-15)
    assert v.loss == pytest.approx(vl.loss, abs=1e-15)
    assert v.change_by_variable["water"]["kind"].startswith("recoded")
    idr = sdckit.interval_disclosure(data, protected, NUMERIC)
    assert v.continuous["share_interval_risk"] == idr.share_at_risk
    cp = sdckit.confidentiality_plot(data, protected, NUMERIC)
    assert v.continuous["confidentiality"]["share_nearest_correct"] == pytest.approx(cp.nearest_correct.mean())
    assert sum(map(sum, v.continuous["confidentiality"]["grid"])) == len(data)


def test_variants_table_from_two_recipes(result, page):
    names = [v.name for v in result.variants]
    assert names == ["original", "k3", "recode water, k3"]
    d = result.to_dict()
    assert [v["name"] for v in d["variants"]] == names and d["variants"][0]["loss"] is None
    assert d["variants"][0]["risk"]["measure"] == d["variants"][1]["risk"]["measure"]
    assert "<th>recode water, k3</th>" in page and "<th>k3</th>" in page
    text = str(result.summary())
    assert "records with f_k < 3" in text and "recode water, k3" in text


def test_key_combinations_equal_frequencies_on_each_subset(data, monkeypatch):
    """Records unique on each subset of 1..3 keys = sdckit.frequencies on that subset alone
    (brute-force oracle), with missing key values (sdcMicro's rule) and within strata; the
    GROUP BY path for large key spaces gives the same counts as the dense one."""
    rng = np.random.default_rng(1)
    holes = {k: rng.random(len(data)) < 0.03 for k in KEYS[:4]}
    df = data.with_columns(
        [pl.when(pl.Series(h)).then(None).otherwise(pl.col(k)).alias(k) for k, h in holes.items()]
    )  # 3 % of four keys missing
    for strata in ([], ["sex"]):
        keys = [k for k in KEYS if k not in strata]
        sc = sdckit.Scenario(keys=keys, strata=strata)
        got = key_subsets(df, sc)
        assert got.n_subsets == sum(1 for s in (1, 2, 3) for _ in combinations(keys, s))
        for subset, n_unique in got.counts.items():
            want = sdckit.frequencies(df, list(subset), strata=strata or None, allow_degenerate_keys=True)
            assert n_unique == want.n_sample_uniques, (subset, strata)
        monkeypatch.setattr("sdckit.assessment.combinations._DENSE_CELLS", 0)
        assert key_subsets(df, sc).counts == got.counts
        monkeypatch.undo()


def test_combinations_in_the_report(result, page):
    c = result.combinations
    assert c.sizes == (1, 2, 3) and c.n_subsets == 7 + 21 + 35
    top_vars, top_count = max(c.top, key=lambda t: (t[1], -len(t[0])))
    assert top_count == c.counts[top_vars]
    assert f"{fmt(top_count)} records are unique on" in page


# ----------------------------------------------------------------------------------------------
# variants from a protected file; continuous keys only
# ----------------------------------------------------------------------------------------------
def test_protected_file_is_a_variant(data, scenario, result, tmp_path):
    protected = sdckit.SdcProblem(data, scenario).apply("local_suppression", k=3).data
    res = assess(data, scenario, protected=protected)
    assert [v.name for v in res.variants] == ["original", "protected file"]
    assert res.variants[1].kind == "protected" and res.variants[1].steps == ()
    assert res.variants[1].categorical_risk["global_risk"] == result.variant("k3").categorical_risk["global_risk"]
    # files given by path: the variant is named after its file
    sc = sdckit.Scenario(keys=KEYS, weight="sampling_weight")
    path = tmp_path / "k3.csv"
    sdckit.SdcProblem(pl.read_csv(TESTDATA), sc).apply("local_suppression", k=3).data.write_csv(path)
    from_files = assess(TESTDATA, sc, protected=path)
    assert [v.name for v in from_files.variants] == ["original", "k3.csv"]
    assert (
        from_files.variants[1].categorical_risk["global_risk"] == (result.variant("k3").categorical_risk["global_risk"])
    )


def test_continuous_keys_only(data):
    sc = sdckit.Scenario(numeric_keys=NUMERIC)
    noisy = {"steps": [{"method": "add_noise", "parameters": {"noise": 50, "seed": 1}}]}
    res = assess(data, sc, recipes=[noisy])
    assert res.original.categorical_risk is None and res.combinations is None
    assert res.original.risk["measure"] == "records in the 5 % sd interval" and res.original.risk["value"] == 1.0
    v = res.variants[1]
    assert 0 <= v.continuous["share_interval_risk"] < 1 and v.il1s["il1s"] > 0 and v.loss > 0
    assert v.risk["value"] == v.continuous["share_interval_risk"]
    parsed = _parse(res.to_html())
    assert {"fig-risk-utility", "fig-confidentiality-1", "fig-information-loss"} <= set(parsed.figures)


# ----------------------------------------------------------------------------------------------
# bad input and writing
# ----------------------------------------------------------------------------------------------
def test_protected_file_with_other_rows_or_columns(data, scenario):
    with pytest.raises(sdckit.SdcError, match=r"protected: 4,579 records and 4,580 in data"):
        assess(data, scenario, protected=data.head(4579))
    with pytest.raises(sdckit.SdcError, match=r"column\(s\) savings of data are missing") as err:
        assess(data, scenario, protected=data.drop("savings").with_columns(pl.lit(1).alias("extra")))
    assert "column(s) extra are not in data" in str(err.value)


def test_failing_recipe_is_named(data, scenario, tmp_path):
    bad = {"steps": [{"method": "local_suppression", "parameters": {"k": 0}}]}
    with pytest.raises(sdckit.SdcError, match=r"recipes: recipe 2 failed at step 1 \(local_suppression\): k: got 0"):
        assess(data, scenario, recipes=[K3, bad])
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({"steps": [K3["steps"][0], {"method": "pram", "parameters": {"strenght": 1}}]}))
    with pytest.raises(sdckit.SdcError, match=r"recipes: recipe 1 \(typo.json\) failed at step 2 \(pram\): .*strenght"):
        assess(data, scenario, recipes=[path])
    with pytest.raises(sdckit.SdcError, match=r"recipes: recipe 1 \(none.yaml\): recipe: file .* does not exist"):
        assess(data, scenario, recipes=[tmp_path / "none.yaml"])


def test_bad_options(data, scenario):
    with pytest.raises(sdckit.SdcError, match="scenario"):
        assess(data, sdckit.Scenario())
    with pytest.raises(sdckit.SdcError, match="scenario: got dict"):
        assess(data, {"keys": KEYS})
    with pytest.raises(sdckit.SdcError, match="max_global_risk"):
        assess(data, scenario, max_global_risk=1.5)
    with pytest.raises(sdckit.SdcError, match="include_records"):
        assess(data, scenario, include_records="yes")


def test_report_path_errors_leave_nothing_behind(result, tmp_path, monkeypatch):
    missing = tmp_path / "nowhere" / "report.html"
    with pytest.raises(sdckit.SdcError, match="path: directory .*nowhere does not exist"):
        result.to_html(missing)
    assert not missing.parent.exists()
    with pytest.raises(sdckit.SdcError, match=r"path: data.csv does not end in \.html"):
        result.to_html(tmp_path / "data.csv")
    with pytest.raises(sdckit.SdcError, match="is a directory"):
        result.to_html(tmp_path)
    # a failure while writing leaves neither the report nor a temporary file
    target = tmp_path / "report.html"

    def broken(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Path, "write_text", broken)
    with pytest.raises(OSError, match="disk full"):
        result.to_html(target)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
    text = result.to_html(target)
    assert target.read_text(encoding="utf-8") == text
    with pytest.raises(sdckit.SdcError, match="already exists; expected a new file, or overwrite=True"):
        result.to_html(target)  # a report already there is not replaced silently
    assert result.to_html(target, overwrite=True) == target.read_text(encoding="utf-8")


def test_result_is_immutable_and_json(result):
    with pytest.raises(TypeError):
        result.original.categorical_risk["global_risk"] = 0.0
    with pytest.raises(TypeError):
        result.original.categorical_risk["n_violations"]["2"] = 0
    with pytest.raises(TypeError):
        result.variants[1].loss_by_variable["water"] = 0.0
    d = json.loads(json.dumps(result.to_dict()))
    assert d["n"] == 4580 and d["scenario"]["keys"] == KEYS
    with pytest.raises(sdckit.SdcError, match="aggregates only"):
        result.to_frame()
    assert "AssessmentResult" in repr(result) and "n_variants=2" in repr(result)


def test_progress_names_the_measures(data, capsys):
    res = assess(data.head(300), sdckit.Scenario(keys=KEYS), progress=True)
    err = capsys.readouterr().err
    assert "assess" in err and "SUDA" in err
    # urbrur is 1 in the first 300 records: assessed, with a note
    assert res.key_info["urbrur"]["n_categories"] == 1
    assert any("urbrur have fewer than two categories" in n for n in res.notes)


def test_variants_given_as_tables(data, scenario, result):
    """assess_variants takes the tables themselves (e.g. an SdcProblem's steps); a variable a
    step changed outside the roles gets its lambda too."""
    from sdckit.assessment import assess_variants

    p = sdckit.SdcProblem(data, scenario).apply("local_suppression", k=3)
    p.apply("global_recode", variables=["hhcivil"], mapping={1: 1, 2: 2, 3: 3, 4: 3})
    steps = p.history
    variants = [
        ("1. local_suppression", steps[0].result.table, ["local_suppression"]),
        ("2. global_recode", steps[1].result.table, ["local_suppression", "global_recode"], ["hhcivil"]),
    ]
    res = assess_variants(data, scenario, variants)
    assert res.variants[1].categorical_risk["global_risk"] == result.variant("k3").categorical_risk["global_risk"]
    # hhcivil (integer codes with 4 values: nominal): categories 3 and 4 merged into one group;
    # a record of category 3 costs the share of the group that is 4, and the reverse
    f3, f4 = (int((data["hhcivil"] == c).sum()) for c in (3, 4))
    assert f4 == 194
    expected = (f3 * f4 / (f3 + f4) + f4 * f3 / (f3 + f4)) / len(data)
    assert res.loss_scales["hhcivil"] == "nominal"
    assert res.variants[2].loss_by_variable["hhcivil"] == pytest.approx(expected, rel=1e-12)
    assert res.variants[2].change_by_variable["hhcivil"]["kind"] == "recoded"
    assert res.variants[1].loss_by_variable["hhcivil"] == 0.0  # the same variables for every variant
    with pytest.raises(sdckit.SdcError, match=r"protected: 10 records and 4,580 in data.*variant 'short'"):
        assess_variants(data, scenario, [("short", data.head(10))])


def test_continuous_key_recoded_to_intervals(data):
    """A recipe that turns a continuous key into intervals: its continuous-key risk is left out
    with a note, its loss counts each income against the mean of its interval, and the rest of
    the report is made."""
    sc = sdckit.Scenario(keys=KEYS, numeric_keys=NUMERIC)
    cut = {
        "name": "income in 5",
        "steps": [{"method": "global_recode", "parameters": {"variables": ["income"], "breaks": 5}}],
    }
    res = assess(data, sc, recipes=[cut])
    v = res.variants[1]
    assert v.change_by_variable["income"]["kind"] == "recoded" and v.loss_by_variable["income"] > 0
    assert v.loss_by_variable["expend"] == 0.0 and "income" in v.il1s["excluded"]
    assert any(n.startswith("income in 5: continuous-key risk left out") for n in res.notes)
    assert "fig-risk-utility" in _parse(res.to_html()).figures
