"""Linked ("ghost") variables: a variable linked to a key inherits the key's suppressions and
merged categories (sdcMicro's ghostVars carry the local-suppression pattern); measures do not
count it as a key.

sdcMicro's rule (R/localSuppression.R: after the suppression,
``manipGhostVars[[v]][is.na(manipKeyVars[[key]])] <- NA``) is checked against its outputs in
test_linked_sdcmicro.py; here are the hand-worked examples and that rule on every method."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA
from sdckit import SdcError
from sdckit._core.linked import follow_key, is_function_of, merged_categories
from sdckit.protect._linked import keep_links

# Hand-worked example. Eight records; the key region has four categories, province is a function
# of region (r1 -> P1, r2 -> P2, r3 -> P2, r4 -> P3), town is not (region r1 has towns t1 and t2).
#
#   row  region  sex  province  town
#    0     r1     m      P1      t1
#    1     r1     f      P1      t2
#    2     r2     m      P2      t3
#    3     r2     f      P2      t3
#    4     r3     m      P2      t4
#    5     r3     f      P2      t4
#    6     r4     m      P3      t5
#    7     r4     f      P3      t5
#
# Recode region with {r1, r2} -> A, r3 -> r3, r4 -> r4: category A stands for r1 and r2.
#   province of A's records: the union of P1 and P2 -> "P1|P2" (rows 0-3); rows 4-7 unchanged.
#   town (not a function of region): suppressed in A's records (rows 0-3); rows 4-7 unchanged.
# Recode {r1, r2} -> A, {r3, r4} -> B: province "P1|P2" (rows 0-3) and "P2|P3" (rows 4-7).
# Recode {r2, r3} -> C (both in P2): province unchanged everywhere (C stands for P2 alone).
LINKS = {"province": "region", "town": "region"}


@pytest.fixture
def df() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "region": ["r1", "r1", "r2", "r2", "r3", "r3", "r4", "r4"],
            "sex": ["m", "f"] * 4,
            "province": ["P1", "P1", "P2", "P2", "P2", "P2", "P3", "P3"],
            "town": ["t1", "t2", "t3", "t3", "t4", "t4", "t5", "t5"],
        }
    )


def _recoded(df, mapping):
    return keep_links(df, sdckit.global_recode(df, variables=["region"], mapping=mapping), LINKS)


def test_recode_merging_two_regions(df):
    res = _recoded(df, {"r1": "A", "r2": "A", "r3": "r3", "r4": "r4"})
    out = res.data
    assert out["region"].to_list() == ["A"] * 4 + ["r3", "r3", "r4", "r4"]
    assert out["province"].to_list() == ["P1|P2"] * 4 + ["P2", "P2", "P3", "P3"]
    assert out["town"].to_list() == [None] * 4 + ["t4", "t4", "t5", "t5"]
    assert res.n_changed["province"] == 4 and res.n_changed["town"] == 4
    log = res.details["linked"]
    assert log["province"] == {
        "key": "region",
        "suppressed": 0,
        "key_already_missing": 0,
        "merged": 4,
        "followed": 0,
        "suppressed_merged": 0,
        "function_of_key": True,
        "merged_values": ["P1|P2"],
    }
    assert log["town"]["suppressed_merged"] == 4 and log["town"]["function_of_key"] is False
    assert any("town is not a function of region" in n for n in res.notes)
    assert df["province"].to_list()[0] == "P1"  # the input is not changed


def test_keeping_the_links_twice_changes_nothing(df):
    once = _recoded(df, {"r1": "A", "r2": "A", "r3": "r3", "r4": "r4"})
    twice = keep_links(df, once, LINKS)
    assert twice is once
    plain = sdckit.global_recode(df, variables=["sex"], mapping={"m": "m", "f": "f"})
    assert keep_links(df, plain, LINKS) is plain  # the key was not touched


def test_recode_into_two_groups_and_a_merge_within_one_province(df):
    out = _recoded(df, {"r1": "A", "r2": "A", "r3": "B", "r4": "B"}).data
    assert out["province"].to_list() == ["P1|P2"] * 4 + ["P2|P3"] * 4
    same = _recoded(df, {"r1": "r1", "r2": "C", "r3": "C", "r4": "r4"})
    assert same.data["province"].to_list() == df["province"].to_list()
    assert "province" not in same.n_changed or same.n_changed["province"] == 0
    # the town is not a function of region: suppressed in C (rows 2-5) only
    assert same.data["town"].to_list() == ["t1", "t2", None, None, None, None, "t5", "t5"]


def test_local_suppression_carries_its_pattern(df):
    """sdcMicro's rule: the linked variable is missing wherever the key was suppressed."""
    res = keep_links(df, sdckit.local_suppression(df, keys=["region", "sex"], k=2), LINKS)
    region = res.data["region"].is_null().to_numpy()
    assert region.any()
    for ghost in LINKS:
        assert np.array_equal(res.data[ghost].is_null().to_numpy(), region)
        assert res.n_changed[ghost] == region.sum()
    # the other rows keep their values
    keep = ~region
    assert res.data["province"].to_numpy()[keep].tolist() == df["province"].to_numpy()[keep].tolist()


def test_the_link_survives_every_method_on_real_data():
    """testdata: ``water2`` is a copy of the key ``water`` (a function of it) and ``roof2`` a
    copy of ``roof``; each method changes the keys and the linked copies follow."""
    df = pl.read_csv(DATA / "sdcmicro" / "testdata.csv").with_columns(
        pl.col("water").alias("water2"), pl.col("roof").alias("roof2")
    )
    keys = ["urbrur", "roof", "walls", "water", "sex"]
    links = {"water2": "water", "roof2": "roof"}
    steps = {
        "local_suppression": lambda d: sdckit.local_suppression(d, keys=keys, k=3),
        "suppress_by_risk": lambda d: sdckit.suppress_by_risk(d, keys=keys, weight="sampling_weight", threshold=0.05),
        "global_recode": lambda d: sdckit.global_recode(
            d, variables=["water"], mapping={1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 9: 4}
        ),
        "pram": lambda d: sdckit.pram(d, variables=["water"], seed=3),
    }
    for name, step in steps.items():
        res = keep_links(df, step(df), links)
        out = res.data
        for ghost, key in links.items():
            miss_key = out[key].is_null().to_numpy() & df[key].is_not_null().to_numpy()
            assert out[ghost].is_null().to_numpy()[miss_key].all(), name
            # the linked copy is again a function of the released key
            pairs = out.select(key, ghost).drop_nulls().unique()
            assert pairs[key].n_unique() == pairs.height, name
        if name == "global_recode":
            assert sorted(out["water2"].unique().to_list()) == ["1|2", "3|4", "5|6", "7|9"]
        if name == "pram":  # PRAM moves records: the copy takes the released value of water
            assert res.details["linked"]["water2"]["followed"] > 0
            assert out["water2"].to_list() == out["water"].to_list()


def test_record_swapping_moves_the_linked_variable_with_its_key():
    """Swapping exchanges the geography of households: a linked copy of the geography takes the
    released value (a function of the key), whether or not it was carried along."""
    df = pl.read_csv(DATA / "sdcmicro" / "testdata.csv").with_columns(pl.col("urbrur").alias("urbrur2"))
    links = {"urbrur2": "urbrur"}
    swap = dict(keys=["roof", "walls", "sex"], household="ori_hid", geography=["urbrur"], swap_rate=0.1, seed=1)
    res = sdckit.record_swap(df, **swap)
    kept = keep_links(df, res, links)
    assert kept.details["linked"]["urbrur2"]["followed"] == res.n_changed["urbrur"] > 0
    assert kept.data["urbrur2"].to_list() == kept.data["urbrur"].to_list()
    carried = sdckit.record_swap(df, **swap, carry_along=["urbrur2"])
    assert keep_links(df, carried, links) is carried  # already consistent: nothing to do


def test_measures_do_not_count_a_linked_variable(df):
    plain = sdckit.Scenario(keys=["region", "sex"])
    linked = sdckit.Scenario(keys=["region", "sex"], linked={"province": "region"})
    a = sdckit.individual_risk(df, scenario=plain).global_risk
    b = sdckit.individual_risk(df, scenario=linked).global_risk
    assert a == b
    assert (
        sdckit.k_anonymity(df, scenario=linked, k=2).to_dict() == sdckit.k_anonymity(df, scenario=plain, k=2).to_dict()
    )


def test_assess_replays_recipes_with_the_links(df):
    sc = sdckit.Scenario(keys=["region", "sex"], linked={"province": "region"})
    recipe = {"name": "k2", "steps": [{"method": "local_suppression", "parameters": {"k": 2}}]}
    res = sdckit.assess(df, sc, recipes=[recipe])
    assert "province" not in res.key_info
    v = res.variant("k2")
    assert v.suppressed_by_variable["province"] == v.suppressed_by_variable["region"] > 0
    assert any("linked variables (not keys): province to region" in n for n in res.notes)


def test_sdc_problem_keeps_the_links(df):
    p = sdckit.SdcProblem(df, sdckit.Scenario(keys=["region", "sex"], linked={"province": "region"}))
    p.apply("local_suppression", k=2)
    assert np.array_equal(p.data["province"].is_null().to_numpy(), p.data["region"].is_null().to_numpy())


def test_linked_errors(df):
    with pytest.raises(SdcError, match="linked: 'province' is linked to 'x', which is not a key"):
        sdckit.Scenario(keys=["region"], linked={"province": "x"})
    with pytest.raises(SdcError, match="linked: 'sex' is also a key"):
        sdckit.Scenario(keys=["region", "sex"], linked={"sex": "region"})
    with pytest.raises(SdcError, match="linked: got list"):
        sdckit.Scenario(keys=["region"], linked=["province"])
    with pytest.raises(SdcError, match="linked: column.s. nope not found"):
        sdckit.Scenario(keys=["region"], linked={"nope": "region"}).validate(df)
    with pytest.raises(TypeError, match="read-only"):
        sdckit.Scenario(keys=["region"], linked={"province": "region"}).linked["x"] = "region"


def test_a_key_missing_in_the_input_makes_its_linked_variable_missing():
    """The smallest example of sdcMicro's rule beyond the step's own suppressions: region is
    missing in row 1 of the input, its province P1 is not. Any step (here a recode of sex that
    only renames) makes the province missing there; the other rows keep theirs."""
    df = pl.DataFrame({"region": ["r1", None, "r1", "r2"], "sex": ["m", "f", "m", "f"], "prov": ["P1"] * 3 + ["P2"]})
    p = sdckit.SdcProblem(df, sdckit.Scenario(keys=["region", "sex"], linked={"prov": "region"}), k=(2,))
    p.apply("global_recode", variables=["sex"], mapping={"m": "male", "f": "female"})
    assert p.data["prov"].to_list() == ["P1", None, "P1", "P2"]
    log = p.history[-1].result.details["linked"]["prov"]
    assert log["suppressed"] == log["key_already_missing"] == 1
    assert any("1 of them where region was already missing" in n for n in p.history[-1].result.notes)
    assert df["prov"].to_list() == ["P1", "P1", "P1", "P2"]  # the input is unchanged


def test_a_variable_linked_to_two_keys():
    """Hand-worked: prov is linked to region and district. Merging districts d1 and d2 (both in
        province P1, of region r1) changes nothing; suppressing region in row 2 and district in row 4
        makes prov missing in both rows (here the suppressed values are in the input: any step makes
    prov missing there); merging d3 and d4 (provinces P2 and P3) gives prov their union."""
    df = pl.DataFrame(
        {
            "region": ["r1", "r1", "r1", "r2", "r2", "r2"],
            "district": ["d1", "d2", "d2", "d3", "d4", "d4"],
            "prov": ["P1", "P1", "P1", "P2", "P3", "P3"],
        }
    )
    links = {"prov": ["region", "district"]}
    merged = keep_links(
        df, sdckit.global_recode(df, "district", mapping={"d1": "A", "d2": "A", "d3": "d3", "d4": "d4"}), links
    )
    assert merged.data["prov"].to_list() == df["prov"].to_list()
    cut = df.with_columns(
        region=pl.Series(["r1", "r1", None, "r2", "r2", "r2"]), district=pl.Series(["d1", "d2", "d2", "d3", None, "d4"])
    )
    sc = sdckit.Scenario(keys=["region", "district"], linked=links)
    p = sdckit.SdcProblem(cut, sc, k=(2,))
    p.apply("global_recode", variables=["district"], mapping={"d1": "d1", "d2": "d2", "d3": "d3", "d4": "d4"})
    assert p.data["prov"].to_list() == ["P1", "P1", None, "P2", None, "P3"]
    log = p.history[-1].result.details["linked"]["prov"]
    assert log["key"] == ["region", "district"] and log["suppressed"] == 2
    assert log["by_key"]["region"]["suppressed"] == log["by_key"]["district"]["suppressed"] == 1
    p.apply("global_recode", variables=["district"], mapping={"d1": "d1", "d2": "d2", "d3": "B", "d4": "B"})
    assert p.data["prov"].to_list() == ["P1", "P1", None, "P2|P3", None, "P2|P3"]


def test_several_keys_round_trip_through_a_recipe(df, tmp_path):
    sc = sdckit.Scenario(keys=["region", "sex"], linked={"province": ["region", "sex"], "town": ["region"]})
    assert sc.linked == {"province": ("region", "sex"), "town": "region"}  # one key is kept as a text
    assert sc.to_dict()["linked"] == {"province": ["region", "sex"], "town": "region"}
    p = sdckit.SdcProblem(df, sc).apply("local_suppression", k=2)
    for name in ("r.yaml", "r.json"):
        p.to_recipe(tmp_path / name)
        again = sdckit.SdcProblem.from_recipe(df, tmp_path / name)
        assert again.scenario == sc and again.data.equals(p.data)
    assert sdckit.Scenario.from_dict(sc.to_dict()) == sc


# ----------------------------------------------------------------------------------------------
# the kernel: properties
# ----------------------------------------------------------------------------------------------
@st.composite
def _step(draw):
    """A key (codes 0..K-1, some missing), a linked variable that is a function of it (or not),
    and a step: categories merged by a random map, some cells suppressed."""
    n = draw(st.integers(1, 40))
    k = draw(st.integers(1, 6))
    key = np.array(draw(st.lists(st.integers(-1, k - 1), min_size=n, max_size=n)))
    if draw(st.booleans()):
        g_of = np.array(draw(st.lists(st.integers(0, 3), min_size=k, max_size=k)))
        linked = np.where(key >= 0, g_of[np.maximum(key, 0)], -1)
    else:
        linked = np.array(draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n)))
    if draw(st.booleans()):  # a recode: each category to one released category
        mapping = np.array(draw(st.lists(st.integers(0, k - 1), min_size=k, max_size=k)))
        after = np.where(key >= 0, mapping[np.maximum(key, 0)], -1)
    else:  # PRAM or a swap: records moved between categories one by one
        moved = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
        after = np.where((key >= 0) & np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))), moved, key)
    suppress = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    after = np.where(suppress, -1, after)
    return key, after, linked


def _decoded(ch, n_labels: int) -> list:
    labels = [(i,) for i in range(n_labels)] + list(ch.merged)
    return [None if c < 0 else labels[c] for c in ch.codes]


@settings(max_examples=150, deadline=None)
@given(_step(), st.randoms())
def test_follow_key_properties(step, rnd):
    before, after, linked = step
    ch = follow_key(before, after, linked, 4)
    out = _decoded(ch, 4)
    # missing wherever the key is missing after the step (suppressed, or missing already)
    gone = after < 0
    assert all(out[i] is None for i in np.flatnonzero(gone))
    assert ch.suppressed.sum() == np.count_nonzero(gone & (linked >= 0))
    assert ch.already_missing.sum() == np.count_nonzero(gone & (linked >= 0) & (before < 0))
    both = (before >= 0) & (after >= 0)
    if is_function_of(before[both], after[both]):  # a recode
        # records whose key category was neither merged nor suppressed keep their value
        untouched = ~gone & ~merged_categories(before, after)
        assert all(out[i] == (None if linked[i] < 0 else (int(linked[i]),)) for i in np.flatnonzero(untouched))
        if is_function_of(before, linked):
            # the released linked value is a function of the released key, the union of its values
            assert is_function_of(after, np.asarray(ch.codes))
            for i in np.flatnonzero((after >= 0) & (ch.codes >= 0)):
                same = (after == after[i]) & (before >= 0) & (linked >= 0)
                assert set(out[i]) == set(int(v) for v in linked[same])
        else:
            assert not ch.merged
    else:  # records moved: a moved record's linked value is that of its released category
        # (missing when no original record of that category had one); the others keep theirs
        assert not ch.merged
        moved = both & (before != after)
        assert all(out[i] == (None if linked[i] < 0 else (int(linked[i]),)) for i in np.flatnonzero(both & ~moved))
        if is_function_of(before, linked):
            value_of = {int(b): int(g) for b, g in zip(before, linked) if b >= 0 and g >= 0}
            for i in np.flatnonzero(moved & (linked >= 0)):
                expected = value_of.get(int(after[i]))
                assert out[i] == (None if expected is None else (expected,))
        else:
            assert all(out[i] is None for i in np.flatnonzero(moved))
    # row order: permuting the records permutes the result
    perm = np.array(rnd.sample(range(len(before)), len(before)))
    again = follow_key(before[perm], after[perm], linked[perm], 4)
    assert _decoded(again, 4) == [out[i] for i in perm]


def test_follow_key_hand_example():
    # codes: region r1..r4 = 0..3; after {r1, r2} -> 0, r3 -> 2, r4 -> 3; province P1..P3 = 0..2
    before = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    after = np.array([0, 0, 0, 0, 2, 2, 3, -1])
    province = np.array([0, 0, 1, 1, 1, 1, 2, 2])
    ch = follow_key(before, after, province, 3)
    assert ch.merged == ((0, 1),)
    assert ch.codes.tolist() == [3, 3, 3, 3, 1, 1, 2, -1]
    assert ch.suppressed.tolist() == [False] * 7 + [True]
    assert ch.functional
