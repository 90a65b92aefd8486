"""Linked ("ghost") variables against sdcMicro 5.8.1 (tests/data/reference/sdcmicro/ghostVars.json):
every case of the file, through the workflow (``SdcProblem`` with ``Scenario(linked=...)``).

Where sdckit follows sdcMicro, the key cells and every cell of every linked variable are equal.
Where it differs on purpose (docs/sdcmicro.md, "Linked variables"), the test asserts sdckit's
documented value and sdcMicro's side by side:

* a recode or PRAM of a key: sdcMicro leaves its ghost as it was (so the ghost shows what the
  step hid); sdckit gives it the union of the merged values, or the value of the released
  category;
* a variable linked to two keys: sdcMicro returns it twice (``wr`` and an unchanged ``wr.1``);
  sdckit once, missing wherever one of its keys is.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import DATA, reference_cases, shared_file

CASES = {c["id"]: c for c in reference_cases("ghostVars.json")}


def _links(case) -> dict:
    """sdcMicro's ghostVars as ``Scenario(linked=...)``: ghost -> key, or -> [keys] for a ghost
    listed under several keys."""
    out: dict = {}
    for group in case["parameters"]["ghostVars"]:
        for ghost in group["ghosts"]:
            out.setdefault(ghost, []).append(group["key"])
    return {g: keys[0] if len(keys) == 1 else keys for g, keys in out.items()}


def _column(values) -> pl.Series:
    kinds = {type(v) for v in values if v is not None}
    return pl.Series(values, dtype=pl.Utf8 if str in kinds else pl.Int64)


def _data(case) -> pl.DataFrame:
    """The case's input: its dataset with the ghost columns of ``inputs.values_before``."""
    name = case["dataset"]
    if name == "testdata":
        data = pl.read_csv(DATA / "sdcmicro" / "testdata.csv")
    elif name.startswith("muargus-demo"):
        data = pl.read_csv(shared_file("muargus-demo", "hhdata", "Samhh_with_header.csv"))
    else:  # as sdcMicro read it (data.table): empty ecoStat missing, empty citizenship a category
        full = pl.read_csv(shared_file("simpop", "eusilcP.csv"), infer_schema_length=100_000)
        full = full.with_columns(pl.col("citizenship").fill_null(""))
        data = full[[r - 1 for r in case["outputs"]["sample_rows"]]].with_columns(w=pl.lit(full.height / 5000))
    extra = case["inputs"].get("values_before", {})
    return data.with_columns([_column(v).alias(g) for g, v in extra.items() if g not in case["parameters"]["keyVars"]])


def _problem(case, data, weight=None) -> sdckit.SdcProblem:
    p = case["parameters"]
    sc = sdckit.Scenario(keys=p["keyVars"], weight=weight or p["weightVar"], linked=_links(case))
    return sdckit.SdcProblem(data, sc, k=(3,))


def _kanon(problem, k, importance=None):
    imp = importance if isinstance(importance, list) else None
    return problem.apply("local_suppression", k=k, importance=imp, method="sdcmicro")


def _assert_keys(case, data, out):
    """The key cells: the rows newly missing per key (1-based), as sdcMicro's."""
    for key, rows in case["outputs"]["key_suppressed_rows"].items():
        new = out[key].is_null().to_numpy() & data[key].is_not_null().to_numpy()
        assert (np.flatnonzero(new) + 1).tolist() == sorted(rows), key


def _assert_ghosts_equal(case, out):
    for ghost, values in case["outputs"]["ghost_values_after"].items():
        assert out[ghost].to_list() == values, ghost


EXACT = [
    "ghost_kAnon_testdata_help_k3",
    "ghost_kAnon_testdata_one_ghost_k5",
    "ghost_kAnon_testdata_importance_7to1_k3",
    "ghost_kAnon_testdata_ghost_has_NA_k3",
]


#: the cases on mu-ARGUS's household demo file, which is read from ../shared/data
SAMHH = ["ghost_kAnon_Samhh_k3", "ghost_kAnon_Samhh_k2_importance"]


@pytest.mark.parametrize("case_id", [*EXACT, *(pytest.param(c, marks=pytest.mark.shared_data) for c in SAMHH)])
def test_kanon_key_and_ghost_cells(case_id):
    """kAnon with one or several ghosts per key, importance, ghosts with missing values of their
    own (which stay missing), on testdata and on mu-ARGUS's household demo: the same key cells
    and ghost cells."""
    case = CASES[case_id]
    data = _data(case)
    out = _kanon(_problem(case, data), case["parameters"]["k"], case["parameters"].get("importance")).data
    _assert_keys(case, data, out)
    _assert_ghosts_equal(case, out)


@pytest.mark.shared_data
def test_kanon_on_eusilcp_wipes_the_ghost_of_a_key_missing_in_the_input():
    """ecoStat is missing for every child in the input: sdcMicro (and sdckit) make its ghost
    ecoGroup missing there too, 38 suppressions plus the 846 children of the sample."""
    case = CASES["ghost_kAnon_eusilcP_n5000_k3"]
    data = _data(case)
    problem = _kanon(_problem(case, data, weight="w"), 3)
    out = problem.data
    _assert_keys(case, data, out)
    _assert_ghosts_equal(case, out)
    log = problem.history[-1].result.details["linked"]["ecoGroup"]
    assert log["suppressed"] == case["outputs"]["n_ghost_new_NA"]["ecoGroup"] == 884
    assert log["key_already_missing"] == 884 - 38


def test_localsupp_and_then_kanon():
    """localSupp (suppression by risk, sdcMicro's one pass) then kAnon: after each step the same
    key and ghost cells."""
    case = CASES["ghost_localSupp_then_kAnon_testdata"]
    data = _data(case)
    problem = _problem(case, data)
    problem.apply("suppress_by_risk", threshold=0.15, variables=["relat"], method="sdcmicro")
    first = case["outputs"]["after_each_step"][0]
    out = problem.data
    for key, rows in first["key_NA_rows"].items():
        assert (np.flatnonzero(out[key].is_null().to_numpy()) + 1).tolist() == rows
    for ghost, rows in first["ghost_NA_rows"].items():
        assert (np.flatnonzero(out[ghost].is_null().to_numpy()) + 1).tolist() == rows
    out = _kanon(problem, 3).data
    _assert_keys(case, data, out)
    _assert_ghosts_equal(case, out)


def test_localsupp_alone():
    case = CASES["ghost_localSupp_testdata_hhw_thr0.15_relat"]
    data = _data(case)
    out = _problem(case, data).apply("suppress_by_risk", threshold=0.15, variables=["relat"], method="sdcmicro").data
    _assert_keys(case, data, out)
    _assert_ghosts_equal(case, out)


def test_one_variable_linked_to_two_keys():
    """wr = 10 water + relat, linked to both keys: missing wherever water or relat is missing
    (sdcMicro's first copy wr; its second copy wr.1, which sdcMicro also returns unchanged, has
    no counterpart)."""
    case = CASES["ghost_one_variable_two_keys_testdata"]
    data = _data(case)
    problem = _kanon(_problem(case, data), 3)
    out = problem.data
    _assert_keys(case, data, out)
    _assert_ghosts_equal(case, out)
    assert "wr.1" in case["outputs"]["extractManipData_columns"] and "wr.1" not in out.columns
    log = problem.history[-1].result.details["linked"]["wr"]
    assert log["key"] == ["water", "relat"] and log["by_key"]["water"]["suppressed"] == 40
    either = out["water"].is_null() | out["relat"].is_null()
    assert out["wr"].is_null().to_list() == either.to_list()


def test_global_recode_then_kanon_key_cells_and_the_deliberate_difference():
    """globalRecode(water, breaks = c(1, 3, 6, 9)) makes the 600 records with water == 1 (the first
    break) missing; sdckit refuses such breaks, so the input has those 600 values missing and the
    same intervals follow. The kAnon cells equal sdcMicro's (the key's missing values are
    categories of their own in sdcMicro's reduction step). The ghost water2 is missing where
    water is, in both. Elsewhere sdcMicro keeps water2's original code (seven codes: it tells the
    merged categories apart); sdckit gives the union of the codes the interval stands for."""
    case = CASES["ghost_globalRecode_then_kAnon_testdata"]
    data = _data(case)
    start = data.with_columns(pl.when(pl.col("water") == 1).then(None).otherwise(pl.col("water")).alias("water"))
    problem = _problem(case, start).apply("global_recode", variables=["water"], breaks=[1, 3, 6, 9])
    assert problem.data["water2"].null_count() == 600  # the key's missing values, from the first step on
    out = _kanon(problem, 3).data
    _assert_keys(case, data, out)
    ours, theirs = out["water2"].to_list(), case["outputs"]["ghost_values_after"]["water2"]
    assert [v is None for v in ours] == [v is None for v in theirs]
    seen = pl.DataFrame({"interval": problem.history[0].result.data["water"], "code": data["water"]})
    union = {i: "|".join(map(str, sorted(set(g["code"])))) for (i,), g in seen.drop_nulls().group_by("interval")}
    assert union == {"(1,3]": "2|3", "(3,6]": "4|5|6", "(6,9]": "7|9"}  # no record has water == 8
    for interval, mine, sdcmicro in zip(out["water"].to_list(), ours, theirs):
        if mine is not None:
            assert mine == union[interval] and str(sdcmicro) in mine.split("|")
    assert len({v for v in theirs if v is not None}) == 7 > len({v for v in ours if v is not None}) == 3


def test_group_and_rename_the_deliberate_difference():
    """groupAndRename(walls, c("2", "9") -> "2-9"): sdcMicro leaves walls2 = 2 or 9 (telling the
    merged category apart); sdckit writes 2|9 there and leaves the other records alone."""
    case = CASES["ghost_groupAndRename_testdata_walls"]
    data = _data(case)
    mapping = {v: ("2-9" if v in (2, 9) else str(v)) for v in data["walls"].unique().to_list()}
    out = _problem(case, data).apply("global_recode", variables=["walls"], mapping=mapping).data
    assert out["walls"].cast(pl.Utf8).to_list() == case["outputs"]["walls_after"]
    theirs = case["outputs"]["ghost_values_after"]["walls2"]
    assert theirs == data["walls2"].to_list()  # sdcMicro: unchanged
    for wall, mine, sdcmicro in zip(out["walls"].cast(pl.Utf8).to_list(), out["walls2"].to_list(), theirs):
        assert mine == ("2|9" if wall == "2-9" else str(sdcmicro))


def test_pram_of_a_key_the_deliberate_difference():
    """pram(water): sdcMicro's water2 keeps the value before PRAM, so it differs from the released
    water in every changed record (300 with its seed) and shows the original there; sdckit's
    water2 takes the value of the released category (it is a copy of water: equal to it)."""
    case = CASES["ghost_pram_key_testdata_water"]
    data = _data(case)
    problem = _problem(case, data).apply("pram", variables=["water"], seed=1)
    out = problem.data
    released = [None if v is None else int(v) for v in out["water"].cast(pl.Utf8).to_list()]
    changed = int(np.count_nonzero(np.array(released) != data["water"].to_numpy()))
    assert changed > 0
    assert [None if v is None else int(v) for v in out["water2"].cast(pl.Utf8).to_list()] == released
    assert problem.history[-1].result.details["linked"]["water2"]["followed"] == changed
    out_r = case["outputs"]
    assert out_r["ghost_values_after"]["water2"] == data["water2"].to_list()  # sdcMicro: unchanged
    assert out_r["n_ghost_differs_from_key"] == out_r["n_water_changed"] == 300


def test_the_risk_does_not_read_a_linked_variable():
    """measure_risk with and without ghostVars: the same fk, Fk, risk and global risk, sdcMicro's."""
    case = CASES["ghost_measure_risk_testdata_hh"]
    data = _data(case)
    p, ref = case["parameters"], case["outputs"]
    for links in (_links(case), {}):
        sc = sdckit.Scenario(keys=p["keyVars"], weight=p["weightVar"], linked=links)
        res = sdckit.individual_risk(data, scenario=sc)
        np.testing.assert_array_equal(res.fk, ref["fk"])
        np.testing.assert_allclose(res.Fk, ref["Fk"], rtol=1e-12)
        np.testing.assert_allclose(res.risk, ref["risk"], rtol=1e-9)
        assert res.global_risk == pytest.approx(ref["global_risk"], rel=1e-9)
        assert res.expected_reidentifications == pytest.approx(ref["global_risk_ER"], rel=1e-9)


def test_every_case_of_the_reference_file_is_tested():
    tested = {
        *EXACT,
        *SAMHH,
        "ghost_kAnon_eusilcP_n5000_k3",
        "ghost_localSupp_then_kAnon_testdata",
        "ghost_localSupp_testdata_hhw_thr0.15_relat",
        "ghost_one_variable_two_keys_testdata",
        "ghost_globalRecode_then_kAnon_testdata",
        "ghost_groupAndRename_testdata_walls",
        "ghost_pram_key_testdata_water",
        "ghost_measure_risk_testdata_hh",
    }
    assert tested == set(CASES)
