"""The protect-then-measure workflow (SdcProblem), its recipes and the protection commands."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import polars as pl
import pytest

import sdckit
from conftest import DATA, read_csv_exactly
from sdckit.cli import main

KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
TESTDATA = DATA / "sdcmicro" / "testdata.csv"


@pytest.fixture(scope="module")
def testdata() -> pd.DataFrame:
    return read_csv_exactly(TESTDATA)


@pytest.fixture
def scenario() -> sdckit.Scenario:
    return sdckit.Scenario(keys=KEYS, weight="sampling_weight", household="ori_hid")


def test_apply_measures_before_and_after(testdata, scenario):
    before = testdata.copy()
    p = sdckit.SdcProblem(testdata, scenario)
    base = p.measures
    # the measures of the original are the public measures' own numbers
    risk = sdckit.individual_risk(testdata, KEYS, weight="sampling_weight", household="ori_hid")
    assert base["global_risk"] == pytest.approx(risk.global_risk, rel=1e-12)
    assert base["household_global_risk"] == pytest.approx(risk.household_global_risk, rel=1e-12)
    assert base["n_violations"][3] == sdckit.k_anonymity(testdata, KEYS, k=3).n_violations[3]
    p.apply("local_suppression", k=3)
    after = p.measures
    assert after["n_violations"][2] == 0 and after["n_violations"][3] == 0
    assert after["global_risk"] < base["global_risk"]
    res = p.history[0].result
    # lambda_j of a suppressed nominal key = share of its values newly missing (Mlodak: d = 1)
    for key in KEYS:
        assert after["lambda_j"][key] == pytest.approx(res.n_changed[key] / len(testdata), abs=1e-12)
    pd.testing.assert_frame_equal(testdata, before)  # the original is untouched
    assert isinstance(p.data, pd.DataFrame) and p.data.shape == testdata.shape
    text = str(p.summary())
    assert "original" in text and "1. local_suppression" in text and "household risk" in text


def test_undo_and_history(testdata, scenario):
    p = sdckit.SdcProblem(testdata, scenario)
    with pytest.raises(sdckit.SdcError, match="undo: there is no step"):
        p.undo()
    p.apply("local_suppression", k=3).apply("local_suppression", k=5)
    assert [s.parameters["k"] for s in p.history] == [3, 5]
    p.undo()
    assert len(p.history) == 1 and p.measures["n_violations"][3] == 0
    p.undo()
    assert p.measures == p.baseline
    pd.testing.assert_frame_equal(p.data, testdata)


def test_unknown_method_is_named(testdata, scenario):
    p = sdckit.SdcProblem(testdata, scenario)
    with pytest.raises(sdckit.SdcError, match="method: unknown protection method 'swap'"):
        p.apply("swap")


def test_scenario_needs_keys(testdata):
    with pytest.raises(sdckit.SdcError, match="scenario"):
        sdckit.SdcProblem(testdata, sdckit.Scenario(weight="sampling_weight"))


@pytest.mark.parametrize("ext", [".yaml", ".json"])
def test_recipe_replays_identically(testdata, scenario, tmp_path, ext):
    p = sdckit.SdcProblem(testdata, scenario).apply("local_suppression", k=3, method="sdcmicro")
    p.apply("local_suppression", k=2, strata="hhcivil")
    path = tmp_path / f"recipe{ext}"
    recipe = p.to_recipe(path)
    assert recipe["scenario"]["keys"] == KEYS and len(recipe["steps"]) == 2
    again = sdckit.SdcProblem.from_recipe(testdata, path)
    pd.testing.assert_frame_equal(again.data, p.data)
    assert [s.measures for s in again.history] == [s.measures for s in p.history]


def test_bad_recipes(testdata, tmp_path):
    with pytest.raises(sdckit.SdcError, match="recipe: step 1 has unknown method 'swap'"):
        sdckit.SdcProblem.from_recipe(testdata, {"scenario": {"keys": KEYS}, "steps": [{"method": "swap"}]})
    with pytest.raises(sdckit.SdcError, match="recipe: expected a mapping"):
        sdckit.SdcProblem.from_recipe(testdata, {"steps": "local_suppression"})
    with pytest.raises(sdckit.SdcError, match="does not exist"):
        sdckit.SdcProblem.from_recipe(testdata, tmp_path / "none.yaml")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(sdckit.SdcError, match="not valid JSON"):
        sdckit.SdcProblem.from_recipe(testdata, bad)
    rec = {"scenario": {"keys": KEYS}, "steps": [{"method": "local_suppression", "parameters": {"k": 0}}]}
    with pytest.raises(sdckit.SdcError, match=r"recipe: step 1 \(local_suppression\): k: got 0"):
        sdckit.SdcProblem.from_recipe(testdata, rec)


def test_cli_suppress_then_protect_replays_to_an_identical_file(tmp_path, capsys):
    out, recipe, js = tmp_path / "out.csv", tmp_path / "recipe.yaml", tmp_path / "out.json"
    args = ["suppress", str(TESTDATA), "--keys", ",".join(KEYS), "--weight", "sampling_weight", "--k", "3"]
    assert main([*args, "--out", str(out), "--save-recipe", str(recipe), "--json", str(js)]) == 0
    text = capsys.readouterr().out
    assert "f_k < 3" in text and "Protected file written" in text
    protected = pl.read_csv(out)
    original = pl.read_csv(TESTDATA)
    assert protected.columns == original.columns and protected.height == original.height
    assert sdckit.frequencies(protected, KEYS).fk.min() >= 3
    payload = json.loads(js.read_text())
    assert payload["steps"][0]["measures"]["n_violations"]["3"] == 0
    assert "unresolved_rows" not in payload["steps"][0]["log"]["details"]
    out2 = tmp_path / "out2.csv"
    assert main(["protect", str(TESTDATA), "--recipe", str(recipe), "--out", str(out2)]) == 0
    assert out.read_bytes() == out2.read_bytes()
    # never over the input, never over an existing file
    assert main(["protect", str(TESTDATA), "--recipe", str(recipe), "--out", str(TESTDATA)]) == 2
    assert main(["protect", str(TESTDATA), "--recipe", str(recipe), "--out", str(out2)]) == 2
    assert "exists" in capsys.readouterr().err


def test_kept_column_types(testdata, scenario):
    p = sdckit.SdcProblem(pl.from_pandas(testdata), scenario).apply("local_suppression", k=3)
    out = p.data
    assert isinstance(out, pl.DataFrame)
    assert out.schema == pl.from_pandas(testdata).schema  # integer keys stay integer, with nulls
    assert np.array_equal(out["age"].to_numpy(), testdata["age"].to_numpy())


def test_seed000_worked_flow(testdata, scenario, tmp_path):
    """The worked flow of the ESSnet handbook's case study on testdata: recode, suppress to
    k = 3, PRAM a dwelling variable; before/after measures; the recipe replays identically."""
    p = sdckit.SdcProblem(testdata, scenario)
    # merge rare categories: water 6, 7, 9 -> 9 (other sources); relat 4..9 -> 4 (other relatives)
    p.apply("global_recode", variables=["water"], mapping={1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 9, 7: 9, 9: 9})
    p.apply("global_recode", variables=["relat"], mapping={i: min(i, 4) for i in range(1, 10)})
    p.apply("local_suppression", k=3)
    p.apply("pram", variables=["walls"], seed=20261124)
    base, recoded, suppressed, prammed = p.baseline, *(s.measures for s in p.history[1:])
    assert recoded["n_violations"][3] < base["n_violations"][3]  # recoding merges rare keys
    assert suppressed["n_violations"][3] == 0
    assert suppressed["global_risk"] < recoded["global_risk"] < base["global_risk"]
    assert suppressed["household_global_risk"] < base["household_global_risk"]
    # PRAM changes walls only, and its lambda is its expected change under the published matrix:
    # the suppressed cells cost 1 each as before, every other record 1 - P[x, x] (the chance that
    # PRAM changes its walls), whatever the one draw did
    matrix = p.history[-1].result.details["pram"]["walls"]
    before = p.history[-2].result.data["walls"]
    kept = before.notna() & testdata["walls"].notna()
    expected_change = sum(1.0 - matrix[x][x] for x in before[kept]) / len(testdata)
    assert prammed["lambda_j"]["walls"] == pytest.approx(suppressed["lambda_j"]["walls"] + expected_change, abs=1e-12)
    final = p.data
    for col in testdata.columns:
        if col not in KEYS:
            pd.testing.assert_series_equal(final[col], testdata[col])
    # the table a statistician reads: one column per stage
    columns, rows = sdckit.workflow.problem_measures.summary_rows(p)
    assert columns[0] == "measure" and len(columns) == 1 + 1 + 4
    assert [r[0] for r in rows][:3] == ["f_k < 2", "f_k < 3", "f_k < 5"]
    # the numbers in the table are the public measures' numbers on the protected file
    # (after PRAM, PRAM-adjusted with the published keep probabilities; below the naive risk)
    diagonal = p.history[-1].result.details["pram_diagonal"]
    risk = sdckit.individual_risk(final, KEYS, weight="sampling_weight", household="ori_hid", pram=diagonal)
    naive = sdckit.individual_risk(final, KEYS, weight="sampling_weight", household="ori_hid")
    assert prammed["global_risk"] == pytest.approx(risk.global_risk, rel=1e-12) and risk.global_risk < naive.global_risk
    path = tmp_path / "recipe.yaml"
    p.to_recipe(path)
    again = sdckit.SdcProblem.from_recipe(testdata, path)
    pd.testing.assert_frame_equal(again.data, final)
    out1, out2 = tmp_path / "a.csv", tmp_path / "b.csv"
    p.write(out1)
    again.write(out2)
    assert out1.read_bytes() == out2.read_bytes()


def test_suda_on_request(testdata, scenario):
    p = sdckit.SdcProblem(testdata, scenario, suda=True).apply("local_suppression", k=3)
    assert p.baseline["n_with_msu"] == sdckit.suda(testdata, KEYS).n_with_msu
    assert p.measures["n_with_msu"] == sdckit.suda(p.data, KEYS).n_with_msu
    assert "records with an MSU" in str(p.summary())


def test_cli_recode_and_pram_steps(tmp_path, capsys):
    base = ["--keys", ",".join(KEYS), "--weight", "sampling_weight"]
    out = tmp_path / "recoded.csv"
    # --mapping keys arrive as text and match the integer codes of water
    mapping = "1=1,2=2,3=3,4=4,5=5,6=9,7=9,9=9"
    assert main(["recode", str(TESTDATA), *base, "--variables", "water", "--mapping", mapping, "--out", str(out)]) == 0
    recoded = pl.read_csv(out)
    assert set(recoded["water"].to_list()) == {1, 2, 3, 4, 5, 9}
    assert "global_recode" in capsys.readouterr().out
    out2, recipe = tmp_path / "pram.csv", tmp_path / "pram.json"
    args = ["pram", str(TESTDATA), *base, "--variables", "walls", "--seed", "7", "--out", str(out2)]
    assert main([*args, "--save-recipe", str(recipe)]) == 0
    prammed = pl.read_csv(out2)
    original = pl.read_csv(TESTDATA)
    assert prammed.drop("walls").equals(original.drop("walls"))
    assert json.loads(recipe.read_text())["steps"][0]["parameters"]["seed"] == 7
    out3 = tmp_path / "pram_again.csv"
    assert main(["protect", str(TESTDATA), "--recipe", str(recipe), "--out", str(out3)]) == 0
    assert out3.read_bytes() == out2.read_bytes()
    assert (
        main(["recode", str(TESTDATA), *base, "--variable", "water", "--map", "1=a", "--out", str(tmp_path / "x.csv")])
        == 2
    )
    assert "not covered" in capsys.readouterr().err  # the map misses categories 2 to 9


def test_spss_in_spss_out_keeps_labels(tmp_path):
    """An SPSS file with value labels goes through `sdckit suppress` and comes out with the same
    value and variable labels; suppressed cells are system missing."""
    pyreadstat = pytest.importorskip("pyreadstat")
    src = tmp_path / "survey.sav"
    df = pd.DataFrame(
        {"region": [1.0, 1, 2, 2, 2, 3, 1, 2], "sex": [1.0, 2, 1, 2, 1, 2, 1, 2], "y": [5.0, 3, 2, 1, 4, 6, 7, 8]}
    )
    labels = {"region": {1: "North", 2: "South", 3: "East"}, "sex": {1: "male", 2: "female"}}
    pyreadstat.write_sav(df, str(src), variable_value_labels=labels, column_labels=["Region", "Sex", "Income"])
    out = tmp_path / "protected.sav"
    assert main(["suppress", str(src), "--keys", "region,sex", "--k", "2", "--out", str(out)]) == 0
    back, meta = pyreadstat.read_sav(str(out))
    assert meta.variable_value_labels == labels
    assert meta.column_names_to_labels == {"region": "Region", "sex": "Sex", "y": "Income"}
    assert back.shape == df.shape and list(back.columns) == list(df.columns)
    kept = back["region"].notna()
    assert (back.loc[kept, "region"] == df.loc[kept, "region"]).all() and (~kept).sum() >= 1
    np.testing.assert_array_equal(back["y"].to_numpy(), df["y"].to_numpy())


def test_cli_risk_threshold_suppression(tmp_path, capsys):
    out = tmp_path / "out.csv"
    args = ["suppress", str(TESTDATA), "--keys", ",".join(KEYS), "--weight", "household_weights"]
    assert main([*args, "--threshold", "0.1", "--out", str(out)]) == 0
    assert "suppress_by_risk" in capsys.readouterr().out
    risk = sdckit.individual_risk(pl.read_csv(out), KEYS, weight="household_weights")
    assert risk.risk.max() <= 0.1 + 1e-12
    assert main([*args, "--threshold", "0.1", "--method", "sdcmicro", "--out", str(tmp_path / "x.csv")]) == 2
    assert "--method" in capsys.readouterr().err


def test_numbers_recoded_to_intervals_in_the_workflow(testdata):
    """A key made from a number (age in intervals): the step runs and its loss counts: each age
    against the mean age of its interval, in standard deviations of age (age has 96 values, so
    it is read as a number)."""
    sc = sdckit.Scenario(keys=["urbrur", "sex", "age"], weight="sampling_weight")
    data = testdata.assign(age=testdata["age"] + 1)  # ages 1..96: every value inside (0, 100]
    p = sdckit.SdcProblem(data, sc).apply("global_recode", variables=["age"], breaks=[0, 15, 30, 45, 60, 100])
    p.apply("local_suppression", k=3)
    lam = p.history[0].measures["lambda_j"]
    assert lam["urbrur"] == lam["sex"] == 0.0
    # by hand: d_i = (2/pi) arctan(|age_i - mean of its interval| / sd(age)), averaged
    age = data["age"].to_numpy(dtype=float)
    group = np.digitize(age, [15, 30, 45, 60], right=True)
    means = np.array([age[group == g].mean() for g in range(5)])
    expected = np.mean(2 / np.pi * np.arctan(np.abs(age - means[group]) / age.std(ddof=1)))
    assert lam["age"] == pytest.approx(expected, rel=1e-12)
    assert p.measures["n_violations"][3] == 0
    assert p.history[0].measures["n_violations"][3] < p.baseline["n_violations"][3]
    assert "None" not in str(p.summary())  # a missing lambda prints as "-"


def test_random_row_order_is_written_and_replayed_by_the_recipe(testdata, scenario, tmp_path):
    """A random row order changes only the written file: the same records (a permutation of
    the protected rows, drawn from the seed the recipe keeps), the data and measures in the
    original order; the recipe and ``sdckit protect --recipe`` write the same bytes."""
    p = sdckit.SdcProblem(testdata, scenario).apply("local_suppression", k=3)
    p.set_row_order("random", seed=11)
    assert p.row_order == {"seed": 11}
    pd.testing.assert_frame_equal(p.data, sdckit.SdcProblem(testdata, scenario).apply("local_suppression", k=3).data)
    out = tmp_path / "shuffled.csv"
    p.write(out)
    written = pd.read_csv(out)
    order = np.random.default_rng(11).permutation(len(testdata))
    expected = p.data.iloc[order].reset_index(drop=True)
    pd.testing.assert_frame_equal(written, expected, check_dtype=False)
    assert not written[KEYS].equals(p.data[KEYS].reset_index(drop=True))  # the order did change
    recipe = p.to_recipe(tmp_path / "recipe.json")
    assert recipe["row_order"] == {"order": "random", "seed": 11}
    again = tmp_path / "again.csv"
    assert main(["protect", str(TESTDATA), "--recipe", str(tmp_path / "recipe.json"), "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
    # a fresh seed is drawn (and kept) when none is given; "original" switches it off
    assert isinstance(sdckit.SdcProblem(testdata, scenario).set_row_order().row_order["seed"], int)
    assert p.set_row_order("original").row_order is None and "row_order" not in p.to_recipe()
    with pytest.raises(sdckit.SdcError, match="order: got 'sorted'"):
        p.set_row_order("sorted")
    with pytest.raises(sdckit.SdcError, match="recipe: row_order must be"):
        sdckit.SdcProblem.from_recipe(testdata, {**recipe, "row_order": {"order": "shuffled"}})


def test_a_recipe_is_applied_all_or_nothing_and_steps_can_be_replaced(testdata, scenario):
    """A recipe whose second step is refused leaves the history as it was; replace_steps puts
    a recipe's steps in place of the current ones (a branch), and keeps them when it fails."""
    p = sdckit.SdcProblem(testdata, scenario).apply("local_suppression", k=2)
    first = p.history
    bad = {
        "steps": [
            {"method": "local_suppression", "parameters": {"k": 3}},
            {"method": "pram", "parameters": {"variables": ["nope"]}},
        ]
    }
    with pytest.raises(sdckit.SdcError, match="recipe: step 2 .pram."):
        p.apply_recipe(bad)
    assert p.history == first
    with pytest.raises(sdckit.SdcError, match="recipe: step 2 .pram."):
        p.replace_steps(bad)
    assert p.history == first
    k3 = {"steps": [{"method": "local_suppression", "parameters": {"k": 3}}]}
    p.replace_steps(k3)
    assert [s.method for s in p.history] == ["local_suppression"] and p.history[0].parameters["k"] == 3
    pd.testing.assert_frame_equal(p.data, sdckit.SdcProblem.from_recipe(testdata, k3, scenario).data)
