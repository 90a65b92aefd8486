"""SUDA / DIS-SUDA (spec E) against sdcMicro reference outputs, the S002 worked example (spec E.4,
E.6, E.7, I), hand calculations and a brute-force MSU enumerator written here from the definition.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
from itertools import combinations
from unittest import mock

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
import sdckit._core.suda as core
from conftest import DATA, S002_KEYS, reference_cases, s002_table
from sdckit import SdcError, SdcWarning
from sdckit._core.frequencies import pattern_table
from sdckit._core.suda import dis_probability, dis_suda, msu_search, size_weights
from sdckit.cli import main

SUDA_CASES = reference_cases("suda2.json")
FRANC_KEYS = ["Key1", "Key2", "Key3", "Key4"]


# ---------------------------------------------------------------------------------------------
# oracles
# ---------------------------------------------------------------------------------------------
def brute_force_msus(rows, max_size=None):
    """MSUs of every record straight from the definition (spec E.1).

    ``rows``: list of records, each a list of values (None = missing). For record i, a set S of
    its observed variables is unique when no other record has i's value on every variable of S
    (a missing value matches nothing); S is an MSU when it is unique and no subset of size
    |S| - 1 is (with n >= 2 the empty set is never unique). Every subset of every record is
    tried; the record-to-record agreement is precomputed as a bit mask for speed only.
    """
    n = len(rows)
    m = len(rows[0]) if n else 0
    top = m if max_size is None else max_size
    out = []
    for i, row in enumerate(rows):
        found = set()
        if n >= 2:
            agree = [
                sum(1 << j for j in range(m) if row[j] is not None and rows[r][j] == row[j]) for r in range(n) if r != i
            ]
            obs = [j for j in range(m) if row[j] is not None]
            unique = set()
            for s in range(1, top + 1):
                for S in combinations(obs, s):
                    mask = sum(1 << j for j in S)
                    if any(mask & ~a == 0 for a in agree):
                        continue  # another record holds every item of S
                    unique.add(S)
                    if all(S[:k] + S[k + 1 :] not in unique for k in range(s)):
                        found.add(S)
        out.append(found)
    return out


def levelwise_msus(codes, max_size=None):
    """Spec E.3.1 reference algorithm on an integer code matrix (-1 = missing), vectorised per
    subset: for every variable set S, group the records observed on S; a record alone in its
    group is unique on S; an MSU when no (s-1)-subset was unique for it. Returns {S: bool mask}."""
    n, m = codes.shape
    top = m if max_size is None else max_size
    prev = {(): np.full(n, n < 2)}
    found = {}
    for s in range(1, top + 1):
        cur = {}
        for S in combinations(range(m), s):
            sub = codes[:, S].astype(np.int64)
            ok = (sub >= 0).all(axis=1)
            key = np.zeros(n, dtype=np.int64)
            for t in range(s):
                key = key * 64 + sub[:, t]
            uniq = np.zeros(n, dtype=bool)
            if ok.any():
                _, inv, cnt = np.unique(key[ok], return_inverse=True, return_counts=True)
                uniq[ok] = cnt[inv.reshape(-1)] == 1
            minimal = uniq.copy()
            for k in range(s):
                minimal &= ~prev[S[:k] + S[k + 1 :]]
            cur[S] = uniq
            if minimal.any():
                found[S] = minimal
        prev = cur
    return found


def expected_from_msus(msus, m, weights):
    """score, per-variable contributions (sdcMicro definition, spec E.4) from MSU sets."""
    score = np.array([sum(weights[len(S)] for S in ms) for ms in msus], dtype=float)
    raw = np.zeros((len(msus), m))
    for i, ms in enumerate(msus):
        for S in ms:
            for j in S:
                raw[i, j] += weights[len(S)]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(score[:, None] > 0, raw / score[:, None], 0.0)
    return score, share


def result_msu_sets(res):
    idx = {k: j for j, k in enumerate(res.keys)}
    return [{tuple(idx[v] for v in msu.variables) for msu in res.msus(i)} for i in range(res.n)]


# ---------------------------------------------------------------------------------------------
# sdcMicro reference cases (reference/sdcmicro/suda2.json)
# ---------------------------------------------------------------------------------------------
def _francdat() -> pl.DataFrame:
    return pl.read_csv(DATA / "sdcmicro" / "francdat.csv")


def _case_frame(case_id: str) -> tuple[pl.DataFrame, list[str]]:
    """The input of each reference case, transcribed from its R call."""
    if case_id == "suda2_francdat":
        return _francdat(), FRANC_KEYS
    if case_id == "suda2_francdat_NA":
        # x[3, 5] <- NA; x[4, 2] <- x[4, 4] <- NA; x[5, 6] <- NA; x[6, 2] <- NA  (R: 1-based row, column)
        x = _francdat().to_dict(as_series=False)
        cols = _francdat().columns
        for row, col in [(3, 5), (4, 2), (4, 4), (5, 6), (6, 2)]:
            x[cols[col - 1]][row - 1] = None
        return pl.DataFrame(x), FRANC_KEYS
    if case_id == "suda2_book_example_factors":
        tab = pl.DataFrame(
            {
                "age": ["20s"] * 7 + ["60s"],
                "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
                "income": ["50k+", "50k+"] + ["50k-"] * 6,
                "education": ["highschool"] * 4 + ["university", "highschool", "middleschool", "university"],
            }
        )
        return tab, tab.columns
    if case_id == "suda2_sdc_guideline_example":
        return s002_table(), S002_KEYS
    if case_id == "suda2_hash_no_collision":
        return pl.DataFrame({"a": [1, 1, 1, 5], "b": [1, 1, 2, 1], "c": [1, 1, 1, 3]}), ["a", "b", "c"]
    if case_id == "suda2_noninteger_truncation":
        return pl.DataFrame({"a": [1.2, 1.7, 3.0], "b": [1, 1, 2], "c": [1, 1, 1]}), ["a", "b", "c"]
    raise KeyError(case_id)


MATCHED = [c for c in SUDA_CASES if c["id"] != "suda2_noninteger_truncation"]


def test_reference_cases_present():
    assert {c["id"] for c in SUDA_CASES} >= {
        "suda2_francdat",
        "suda2_book_example_factors",
        "suda2_sdc_guideline_example",
        "suda2_francdat_NA",
        "suda2_hash_no_collision",
        "suda2_noninteger_truncation",
    }


@pytest.mark.parametrize("case", MATCHED, ids=[c["id"] for c in MATCHED])
def test_suda2_reference(case):
    """sdcMicro 5.8.1 suda2: scores exactly, disScore to 1e-6 relative (sdcMicro computes it in
    float32), contributions and attribute (level) contributions to 1e-9."""
    frame, keys = _case_frame(case["id"])
    assert keys == case["parameters"]["variables"]
    before = frame.clone()
    r = sdckit.suda(frame, keys, allow_degenerate_keys=True)
    assert frame.equals(before)
    out = case["outputs"]
    np.testing.assert_array_equal(r.score, out["score"])
    np.testing.assert_allclose(r.dis_score, out["disScore"], rtol=1e-6, atol=0)
    for j, k in enumerate(keys):
        np.testing.assert_allclose(
            r.contributions[:, j], out["contributionPercent"][f"{k}_contribution"], rtol=1e-9, atol=1e-12
        )
    # sdcMicro's attribute (level) contributions are percentages; sdckit's shares are / 100
    ref_attr = out["attribute_contributions"]
    assert list(r.share_contributions) == ref_attr["variable"]
    np.testing.assert_allclose([100 * x for x in r.share_contributions.values()], ref_attr["contribution"], rtol=1e-9)
    # level contributions: sdcMicro lists the sorted observed levels of every variable in turn
    ref_lev = out["attribute_level_contributions"]
    got_vars = [v for v, levels in r.share_level_contributions.items() for _ in levels]
    got_vals = [100 * x for levels in r.share_level_contributions.values() for x in levels.values()]
    assert got_vars == ref_lev["variable"]
    expected = [np.nan if v is None else v for v in ref_lev["contribution"]]
    np.testing.assert_allclose(got_vals, expected, rtol=1e-9, atol=1e-12)  # NaN (R NA) where sdcMicro has NA
    if case["dataset"] == "francdat":  # numeric levels: the labels themselves
        got_labels = [lab for levels in r.share_level_contributions.values() for lab in levels]
        assert got_labels == ref_lev["attribute"]
    summ = out["summary"]
    assert r.score.max() == summ["max_score"] and r.score.sum() == summ["sum_score"]
    assert np.count_nonzero(r.score) == summ["n_score_gt0"]
    if "independent_check" in out:
        chk = out["independent_check"]
        assert [r.msus_by_size[s] for s in range(1, len(keys) + 1)] == chk["n_msu_by_size"]
        assert r.n_sample_uniques == chk["U_sample_uniques"]
        assert 2 * r.n_patterns_fk2 == chk["P_records_in_pairs"]
        assert r.q == pytest.approx(chk["Q"])


def test_reference_noninteger_labels_deliberate_difference():
    """sdcMicro truncates 1.2 and 1.7 to the integer 1 (reference case suda2_noninteger_truncation:
    scores 0, 0, 4). sdckit keeps labels as labels (spec 0.2): a = 1.2, 1.7, 3 are three
    categories, so records 1 and 2 are unique on {a} as well. Hand calculation, ATT = 3:
    w(1) = (3-1)! = 2; record 1: {a=1.2} -> 2; record 2: {a=1.7} -> 2; record 3: {a=3}, {b=2} -> 4."""
    case = next(c for c in SUDA_CASES if c["id"] == "suda2_noninteger_truncation")
    frame, keys = _case_frame(case["id"])
    r = sdckit.suda(frame, keys, allow_degenerate_keys=True)
    np.testing.assert_array_equal(r.score, [2, 2, 4])
    assert case["outputs"]["score"] == [0, 0, 4]
    # with the labels truncated by the user, sdcMicro's numbers are reproduced
    trunc = frame.with_columns(pl.col("a").cast(pl.Int64))
    r2 = sdckit.suda(trunc, keys, allow_degenerate_keys=True)
    out = case["outputs"]
    np.testing.assert_array_equal(r2.score, out["score"])
    np.testing.assert_allclose(r2.dis_score, out["disScore"], rtol=1e-6)
    np.testing.assert_allclose(
        r2.contributions,
        np.column_stack([out["contributionPercent"][f"{k}_contribution"] for k in keys]),
        rtol=1e-9,
        atol=1e-12,
    )


def _sdcmicro_hash(row) -> int:
    """sdcMicro's 16-bit record hash (Suda2.h, CEntry::InitValue), to show a collision."""
    h = 0
    for v in row:
        carry = h & 0x8000
        h = (h << 1) + v
        if carry:
            h += 1
        h &= 0xFFFF
    return h


def test_no_nan_where_sdcmicro_hash_collides():
    """Spec E.6: sdcMicro counts a sample unique only when it is alone in its 16-bit hash bucket;
    here both uniques share a bucket, sdcMicro's n_1 is 0 and its disScore NaN. E_false does not
    depend on n_1, so the right value is finite. Scores (ATT = 3, w(1) = 2, w(2) = 1): record 1
    has {c=2} and {a=0, b=0}, record 2 has {b=1} and {a=0, c=0}: 3 each; E = 2 * 1 * 0.99 / 0.01
    = 198, Q = 1.25 -> DIS = 1 / (1 + 198 * 3^-1.25 / (2 * 3^-1.25)) = 1 / 100."""
    rows = [(0, 0, 2), (0, 1, 0), (1, 0, 0), (1, 0, 0)]
    assert _sdcmicro_hash(rows[0]) == _sdcmicro_hash(rows[1])  # the collision
    d = pl.DataFrame(rows, schema=["a", "b", "c"], orient="row")
    r = sdckit.suda(d, ["a", "b", "c"])
    np.testing.assert_array_equal(r.score, [3, 3, 0, 0])
    assert np.isfinite(r.dis_score).all()
    np.testing.assert_allclose(r.dis_score, [0.01, 0.01, 0, 0], rtol=1e-12)
    assert r.n_sample_uniques == 2 and r.n_patterns_fk2 == 1


# ---------------------------------------------------------------------------------------------
# S002 worked example (spec 0.5, E.2, E.4, E.6, E.7, section I)
# ---------------------------------------------------------------------------------------------
S002_MSUS = {  # spec E.7 (brute force = sdcMicro), 0-based record positions
    2: [{"Education": "Primary incomplete"}],
    4: [
        {"Residence": "Rural"},
        {"Gender": "Female", "Education": "Secondary complete"},
        {"Gender": "Female", "Labor": "Unemployed"},
        {"Education": "Secondary complete", "Labor": "Unemployed"},
    ],
    6: [{"Education": "Primary complete"}],
    7: [
        {"Education": "Post-secondary"},
        {"Residence": "Urban", "Labor": "Unemployed"},
        {"Gender": "Male", "Labor": "Unemployed"},
    ],
}


@pytest.mark.parametrize("max_size", [None, 3])
def test_s002_table_45_scores_and_msus(s002, max_size):
    """S002 table 4.5: SUDA 6, 12, 6, 10 for records 3, 5, 7, 8 (Elliot, ATT = 4; M = 3 as in
    S002, M = 4 as in sdcMicro: no MSU has 3 or 4 variables) and the MSUs of the footnotes."""
    r = sdckit.suda(s002, S002_KEYS, max_size=max_size)
    np.testing.assert_array_equal(r.score, [0, 0, 6, 0, 12, 0, 6, 10, 0, 0])
    for i in range(10):
        got = [m.as_dict() for m in r.msus(i)]
        want = S002_MSUS.get(i, [])
        assert sorted(map(str, got)) == sorted(map(str, want)), i
    assert r.msus_by_size[1] == 4 and r.msus_by_size[2] == 5  # spec E.7
    assert r.n_sample_uniques == 4 and r.n_special_uniques == 4
    assert [str(m) for m in r.msus(4)][0] == "Residence=Rural"
    assert r.msus(4)[1].size == 2 and r.msus(4)[1].weight == 2.0


def test_s002_dis_suda_both_conventions(s002):
    """Spec E.6 / I: DIS-SUDA with Elliot scores (sdcMicro 5.8.1 default output) and with IHSN
    scores (1.75, 3.25, 1.75, 2.75) which give S002's printed 0.0051, 0.0107, 0.0051, 0.0088."""
    idx = [2, 4, 6, 7]
    elliot = sdckit.suda(s002, S002_KEYS)
    np.testing.assert_allclose(elliot.dis_score[idx], [0.0049868, 0.0113830, 0.0049868, 0.0091667], atol=5e-8)
    ihsn = sdckit.suda(s002, S002_KEYS, original_scores=False)
    np.testing.assert_allclose(ihsn.score[idx], [1.75, 3.25, 1.75, 2.75], rtol=1e-15)
    np.testing.assert_allclose(ihsn.dis_score[idx], [0.0051203, 0.0107021, 0.0051203, 0.0087751], atol=5e-8)
    np.testing.assert_array_equal(np.round(ihsn.dis_score[idx], 4), [0.0051, 0.0107, 0.0051, 0.0088])  # as printed
    tenth = sdckit.suda(s002, S002_KEYS, dis_fraction=0.1)
    np.testing.assert_allclose(tenth.dis_score[idx], [0.0522492, 0.1124167, 0.0522492, 0.0923665], atol=5e-8)
    assert (elliot.dis_score[[0, 1, 3, 5, 8, 9]] == 0).all()
    # spec E.6: Q = 1.2, E_false = 2 * 3 * 0.99 / 0.01 = 594
    assert elliot.q == pytest.approx(1.2)


def test_s002_dis_probability(s002):
    """Spec E.5: n_1 = 4, n_2 = 3; pi = 0.01 -> 0.04 / 5.98 = 0.0066890; pi = n / sum w =
    10 / 1570 -> 0.0042553."""
    r = sdckit.suda(s002, S002_KEYS)
    assert (r.n_sample_uniques, r.n_patterns_fk2) == (4, 3)
    assert r.dis == pytest.approx(0.04 / 5.98, rel=1e-12)
    rw = sdckit.suda(s002, S002_KEYS, weight="w", dis_fraction="weights")
    assert rw.dis_fraction == pytest.approx(10 / 1570)
    assert rw.dis == pytest.approx(0.0042553, abs=5e-8)


def test_s002_contributions(s002):
    """Spec E.4 example: row contributions, variable and level contributions (the spec's
    percentages / 100)."""
    r = sdckit.suda(s002, S002_KEYS)
    np.testing.assert_allclose(r.contributions[2], [0, 0, 1, 0])
    np.testing.assert_allclose(r.contributions[4], [0.5, 1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(r.contributions[6], [0, 0, 1, 0])
    np.testing.assert_allclose(r.contributions[7], [0.2, 0.2, 0.6, 0.4])
    np.testing.assert_allclose(list(r.share_contributions.values()), [0.23529, 0.17647, 0.64706, 0.23529], atol=5e-6)
    lev = r.share_level_contributions
    assert lev["Residence"] == pytest.approx({"Rural": 0.75, "Urban": 0.25})
    assert lev["Gender"] == pytest.approx({"Female": 2 / 3, "Male": 1 / 3})
    assert lev["Education"] == pytest.approx(
        {
            "Post-secondary": 3 / 11,
            "Primary complete": 3 / 11,
            "Primary incomplete": 3 / 11,
            "Secondary complete": 2 / 11,
            "Secondary incomplete": 0,
        }
    )
    assert lev["Labor"] == pytest.approx({"Employed": 0, "Non-LF": 0, "Unemployed": 1})


def test_s002_explain(s002):
    r = sdckit.suda(s002, S002_KEYS)
    text = r.explain(4)
    assert "SUDA score 12" in text and "Residence=Rural" in text and "Gender=Female, Labor=Unemployed" in text
    assert "not a sample unique" in r.explain(0)


# ---------------------------------------------------------------------------------------------
# score weights, DIS formulas (hand calculations)
# ---------------------------------------------------------------------------------------------
def test_size_weights():
    """Spec E.2: ATT = 4: Elliot / sdcMicro (3!, 2!, 1!, 1) = (6, 2, 1, 1); with M = 3 (Elliot's
    program) the full-size MSU scores 0; IHSN (2^(4-s) - 1)/C(4, s) = (7/4, 3/6, 1/4, 0).
    ATT = 5, M = 2: prod_{i=s}^{2} (5 - i) = (4*3, 3) = (12, 3)."""
    np.testing.assert_array_equal(size_weights(4), [0, 6, 2, 1, 1])
    np.testing.assert_array_equal(size_weights(4, 3), [0, 6, 2, 1, 0])
    np.testing.assert_allclose(size_weights(4, None, False), [0, 1.75, 0.5, 0.25, 0])
    np.testing.assert_array_equal(size_weights(5, 2), [0, 12, 3, 0, 0, 0])
    np.testing.assert_array_equal(size_weights(1), [0, 1])


def test_dis_formulas():
    """Spec E.5 / E.6 by hand: scores (6, 12), n_2 = 1, pi = 0.5, ATT = 8 (Q = 1):
    E = 2 * 1 * 0.5 / 0.5 = 2; A = 1/6 + 1/12 = 1/4; DIS(6) = 1 / (1 + 2 * (1/6) / (1/4)) = 3/7,
    DIS(12) = 1 / (1 + 2 * (1/12) / (1/4)) = 3/5."""
    np.testing.assert_allclose(dis_suda(np.array([0, 6, 12.0]), 1, 0.5, 8), [0, 3 / 7, 3 / 5], rtol=1e-15)
    # scaling every score leaves DIS-SUDA unchanged (spec E.6); n_2 = 0 -> 1 for positive scores
    s = np.array([0, 1.5, 7, 2, 0.25])
    np.testing.assert_allclose(dis_suda(s * 13, 4, 0.01, 5), dis_suda(s, 4, 0.01, 5), rtol=1e-12)
    np.testing.assert_array_equal(dis_suda(s, 0, 0.01, 5), [0, 1, 1, 1, 1])
    np.testing.assert_array_equal(dis_suda(np.zeros(3), 2, 0.01, 5), [0, 0, 0])
    assert dis_probability(4, 3, 0.01) == pytest.approx(0.04 / 5.98)
    assert math.isnan(dis_probability(0, 0, 0.5))


# ---------------------------------------------------------------------------------------------
# missing values and small cases
# ---------------------------------------------------------------------------------------------
def test_missing_value_never_in_an_msu():
    """Spec E.1: records (1, NA) and (1, 2). Record 1's full key is unique (NA is a value for
    the duplicate check) but its only item a=1 is shared: no MSU, score 0. Record 2: {b=2}
    (ATT = 2, w(1) = 1! = 1); record 5 (3, 3): {a=3} and {b=3}, score 2. A record (NA, NA)
    twice: duplicates, no MSU."""
    d = pl.DataFrame({"a": [1, 1, None, None, 3], "b": [None, 2, None, None, 3]})
    r = sdckit.suda(d, ["a", "b"])
    np.testing.assert_array_equal(r.sample_unique, [True, True, False, False, True])
    np.testing.assert_array_equal(r.score, [0, 1, 0, 0, 2])
    assert [str(m) for m in r.msus(1)] == ["b=2"]
    assert [str(m) for m in r.msus(4)] == ["a=3", "b=3"]
    assert r.msus(0) == [] and "missing value" in r.explain(0)
    assert r.special_unique.tolist() == [False, True, False, False, True]


def test_missing_codes_and_max_size():
    """``missing=-999`` marks a code as missing; max_size = 1 keeps only 1-MSUs. Rows (1,1,1),
    (1,2,-999), (2,1,2), (1,1,1): record 2 has the MSU {b=2} only ({c=-999} is not an item);
    record 3 has {a=2} and {c=2}. Treated as a value, -999 gives record 2 the MSU {c=-999} too."""
    d = pl.DataFrame({"a": [1, 1, 2, 1], "b": [1, 2, 1, 1], "c": [1, -999, 2, 1]})
    r = sdckit.suda(d, ["a", "b", "c"], missing=-999)
    assert [str(m) for m in r.msus(1)] == ["b=2"]
    r_as_value = sdckit.suda(d, ["a", "b", "c"])
    assert [str(m) for m in r_as_value.msus(1)] == ["b=2", "c=-999"]
    # max_size = 1: w(1) = prod_{i=1}^{1} (3 - i) = 2 (Elliot with M = 1)
    r1 = sdckit.suda(d, ["a", "b", "c"], max_size=1, missing=-999)
    np.testing.assert_array_equal(r1.score, [0, 2, 4, 0])


def test_single_record_and_all_duplicates():
    one = sdckit.suda(pl.DataFrame({"a": [1], "b": [2]}), ["a", "b"], allow_degenerate_keys=True)
    assert one.score.tolist() == [0] and one.sample_unique.tolist() == [True] and one.msus(0) == []
    dup = sdckit.suda(pl.DataFrame({"a": [1, 1, 2, 2], "b": [1, 1, 3, 3]}), ["a", "b"])
    assert dup.score.tolist() == [0, 0, 0, 0] and dup.n_sample_uniques == 0
    assert math.isnan(dup.share_contributions["a"])
    assert json.loads(json.dumps(dup.to_dict()))["share_contributions"]["a"] is None


def test_full_size_msu_weights():
    """A record unique only on all 3 keys: (1,1,2) among (1,1,1), (1,2,2), (2,1,2), each twice.
    sdcMicro / M = ATT: w(3) = 1 (empty product); Elliot M = ATT - 1 or IHSN: 0."""
    rows = [(1, 1, 2)] + [(1, 1, 1), (1, 2, 2), (2, 1, 2)] * 2
    d = pl.DataFrame(rows, schema=["a", "b", "c"], orient="row")
    assert sdckit.suda(d, ["a", "b", "c"]).score[0] == 1
    assert sdckit.suda(d, ["a", "b", "c"], max_size=2).score[0] == 0
    r = sdckit.suda(d, ["a", "b", "c"], original_scores=False)
    assert r.score[0] == 0 and r.msu_count[0] == 1  # an MSU with weight 0
    assert not r.special_unique[0]  # its only MSU is the full key


# ---------------------------------------------------------------------------------------------
# brute force on generated data (acceptance: up to 8 keys, with missing values)
# ---------------------------------------------------------------------------------------------
@st.composite
def key_tables(draw, max_keys=8, max_n=28):
    m = draw(st.integers(1, max_keys))
    n = draw(st.integers(1, max_n))
    cards = draw(st.lists(st.integers(1, 4), min_size=m, max_size=m))
    miss = draw(st.sampled_from([0, 0, 1, 3]))  # chance of a missing value in 10 per cell
    cols = []
    for c in cards:
        cells = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
        vals = draw(st.lists(st.integers(0, c - 1), min_size=n, max_size=n))
        cols.append([None if u < miss else v for u, v in zip(cells, vals)])
    rows = [[cols[j][i] for j in range(m)] for i in range(n)]
    max_size = draw(st.one_of(st.none(), st.integers(1, m)))
    return rows, max_size


def _frame(rows):
    m = len(rows[0])
    return pl.DataFrame({f"v{j}": pl.Series([r[j] for r in rows], dtype=pl.Int64) for j in range(m)})


@given(key_tables(), st.booleans())
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_matches_brute_force(table, original):
    rows, max_size = table
    m = len(rows[0])
    r = sdckit.suda(
        _frame(rows),
        [f"v{j}" for j in range(m)],
        max_size=max_size,
        original_scores=original,
        allow_degenerate_keys=True,
    )
    top = m if max_size is None else max_size
    expected = brute_force_msus(rows, top)
    assert result_msu_sets(r) == expected
    w = size_weights(m, top, original)
    score, share = expected_from_msus(expected, m, w)
    np.testing.assert_allclose(r.score, score, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.contributions, share, rtol=1e-12, atol=1e-12)
    assert [r.msus_by_size[s] for s in range(1, top + 1)] == [
        sum(len(S) == s for e in expected for S in e) for s in range(1, top + 1)
    ]
    assert r.msu_count.tolist() == [len(e) for e in expected]
    assert r.min_msu_size.tolist() == [min((len(S) for S in e), default=0) for e in expected]
    keyed = [tuple(-1 if v is None else v for v in row) for row in rows]
    uniq = [keyed.count(k) == 1 for k in keyed]
    assert r.sample_unique.tolist() == uniq
    assert r.special_unique.tolist() == [u and any(len(S) < m for S in e) for u, e in zip(uniq, expected)]
    # values of each MSU are the record's own
    for i in range(len(rows)):
        for msu in r.msus(i):
            assert all(rows[i][int(v[1:])] == x for v, x in msu.as_dict().items())


@given(key_tables(max_keys=7, max_n=40))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_core_modes_agree(table):
    """Dense (mask) and sparse (index) live sets, bincount and sort grouping, with and without
    working-set compaction, and the single-target search behind keep_msus=False all give the
    same MSUs (internal switches forced)."""
    rows, max_size = table
    codes = np.array([[-1 if v is None else v for v in row] for row in rows], dtype=np.int32)
    ids, pats, counts, _ = pattern_table(codes)
    base = msu_search(pats, counts, max_size, collect=True)
    want = {(int(p), base.subsets[s]) for p, s in zip(base.msu_pattern, base.msu_subset)}
    with mock.patch.object(core, "_COMPACT_MIN", 0), mock.patch.object(core, "_BINCOUNT_MIN", 0):
        for mode in ("bool", "packed", "index"):
            with mock.patch.object(core, "_FORCE_MODE", mode):
                alt = msu_search(pats, counts, max_size, collect=True)
            assert {(int(p), alt.subsets[s]) for p, s in zip(alt.msu_pattern, alt.msu_subset)} == want
            np.testing.assert_array_equal(alt.score, base.score)
            np.testing.assert_array_equal(alt.contributions, base.contributions)
            np.testing.assert_array_equal(alt.min_size, base.min_size)
    # a collection larger than the cap is dropped, the totals are unchanged
    capped = msu_search(pats, counts, max_size, collect=max(len(want) - 1, 0))
    assert capped.msu_pattern is None or len(want) == 0
    np.testing.assert_array_equal(capped.score, base.score)
    for p in np.flatnonzero(counts == 1)[:5]:
        tgt = np.zeros(len(counts), dtype=bool)
        tgt[p] = True
        one = msu_search(pats, counts, max_size, targets=tgt, collect=True)
        assert {(int(q), one.subsets[s]) for q, s in zip(one.msu_pattern, one.msu_subset)} == {
            x for x in want if x[0] == p
        }


def test_fifteen_keys_against_levelwise():
    """Correct for 15 key variables (acceptance): 70 records, 2-3 categories, 5 % missing,
    against the level-wise reference algorithm of spec E.3.1 over all 2^15 - 1 subsets."""
    rng = np.random.default_rng(15)
    n, m = 70, 15
    codes = np.column_stack([rng.integers(0, rng.integers(2, 4), n) for _ in range(m)]).astype(np.int32)
    codes[rng.random((n, m)) < 0.05] = -1
    found = levelwise_msus(codes)
    expected = [set() for _ in range(n)]
    for S, mask in found.items():
        for i in np.flatnonzero(mask):
            expected[i].add(S)
    frame = pl.DataFrame(
        {f"v{j}": pl.Series(np.where(codes[:, j] < 0, None, codes[:, j]).tolist(), dtype=pl.Int64) for j in range(m)}
    )
    r = sdckit.suda(frame, list(frame.columns))
    assert result_msu_sets(r) == expected
    assert max(len(S) for S in found) >= 4  # MSUs of several sizes are exercised
    score, share = expected_from_msus(expected, m, size_weights(m))
    np.testing.assert_allclose(r.score, score, rtol=1e-12)
    np.testing.assert_allclose(r.contributions, share, rtol=1e-12, atol=1e-15)


def test_search_prunes_instead_of_enumerating():
    """Acceptance: no enumeration of all 2^m subsets for every record. 12 keys with 8 uniform
    categories, 400 records: records become unique on 3-4 variables, so the search visits
    about half of the 4,095 variable sets and, summed over them, under 15 % of the
    400 x 4,095 (record, subset) pairs a full scan would group; the MSUs equal the level-wise
    reference (spec E.3.1)."""
    rng = np.random.default_rng(12)
    codes = rng.integers(0, 8, (400, 12)).astype(np.int32)
    ids, pats, counts, _ = pattern_table(codes)
    sizes = []
    group = core._group

    def counting(work, S, sel):
        sizes.append(int(np.count_nonzero(sel)) if sel.dtype == bool else sel.size)
        return group(work, S, sel)

    with mock.patch.object(core, "_group", counting):
        found = msu_search(pats, counts, collect=True)
    assert len(sizes) < 2**12 - 1
    assert sum(sizes) < 0.15 * 400 * (2**12 - 1)
    ref = levelwise_msus(codes)
    got = {(int(p), found.subsets[s]) for p, s in zip(found.msu_pattern, found.msu_subset)}
    assert got == {(int(ids[i]), S) for S, mask in ref.items() for i in np.flatnonzero(mask)}


def test_synthetic_seven_keys_against_levelwise():
    """2,000 records of benchmark-like data (7 Zipf keys, 2..50 categories, 3 % missing): the fast
    search equals the level-wise reference (spec E.3.1), and keep_msus=False explains the same."""
    rng = np.random.default_rng(7)
    cards = (2, 5, 10, 20, 30, 40, 50)
    cols = []
    for c in cards:
        p = 1 / np.arange(1, c + 1)
        cols.append(rng.choice(c, size=2000, p=p / p.sum()))
    codes = np.column_stack(cols).astype(np.int32)
    codes[rng.random(codes.shape) < 0.03] = -1
    found = levelwise_msus(codes)
    score_ref = np.zeros(len(codes))
    w = size_weights(7)
    for S, mask in found.items():
        score_ref[mask] += w[len(S)]
    frame = pl.DataFrame(
        {f"k{j}": pl.Series(np.where(codes[:, j] < 0, None, codes[:, j]).tolist(), dtype=pl.Int64) for j in range(7)}
    )
    r = sdckit.suda(frame, list(frame.columns))
    np.testing.assert_array_equal(r.score, score_ref)
    lazy = sdckit.suda(frame, list(frame.columns), keep_msus=False)
    np.testing.assert_array_equal(lazy.score, r.score)
    for i in np.argsort(-r.score)[:5]:
        assert [str(x) for x in lazy.msus(int(i))] == [str(x) for x in r.msus(int(i))]


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
@given(key_tables(max_keys=6, max_n=25))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_properties(table):
    rows, _ = table
    m = len(rows[0])
    keys = [f"v{j}" for j in range(m)]
    frame = _frame(rows)
    r = sdckit.suda(frame, keys, allow_degenerate_keys=True)
    # only sample uniques have MSUs; every record with a positive score has row contributions >= 1
    assert not (r.msu_count[~r.sample_unique]).any()
    pos = r.score > 0
    assert (r.contributions[pos].sum(axis=1) >= 1 - 1e-12).all()
    assert (r.contributions[~pos] == 0).all()
    assert ((r.dis_score > 0) == pos).all() and (r.dis_score <= 1).all()
    # limiting the MSU size keeps exactly the small MSUs (max_size monotonicity)
    for top in range(1, m):
        small = sdckit.suda(frame, keys, max_size=top, allow_degenerate_keys=True)
        assert result_msu_sets(small) == [{S for S in e if len(S) <= top} for e in result_msu_sets(r)]
    # duplicating a record removes its MSUs and leaves no one else's MSU larger
    if len(rows) >= 2:
        i = int(np.argmax(r.score))
        dup = sdckit.suda(_frame(rows + [rows[i]]), keys, allow_degenerate_keys=True)
        assert dup.score[i] == 0 and dup.score[-1] == 0


# ---------------------------------------------------------------------------------------------
# results: summary, dict, frames, plot
# ---------------------------------------------------------------------------------------------
def test_result_outputs(s002):
    r = sdckit.suda(s002, S002_KEYS)
    d = r.to_dict()
    json.dumps(d)
    assert d["n_special_uniques"] == 4 and d["msus_by_size"] == {"1": 4, "2": 5, "3": 0, "4": 0}
    assert (d["n_sample_uniques"], d["n_with_msu"], d["n_positive_score"], d["n_msus"], d["n_patterns_fk2"]) == (
        4,
        4,
        4,
        9,
        3,
    )  # spec E.7: records 3, 5, 7, 8 have MSUs (4 + 5 of them); 3 key patterns twice
    assert d["sum_score"] == 34 and d["size_weights"] == {"1": 6, "2": 2, "3": 1, "4": 1}
    assert d["dis_distribution"]["== 0"] == 6 and d["dis_distribution"]["(0, 0.1]"] == 4
    assert "share_level_contributions" not in d and "Rural" not in json.dumps(d)
    assert r.to_dict(include_levels=True)["share_level_contributions"]["Residence"] == {"Rural": 0.75, "Urban": 0.25}
    assert not any(k.startswith("records") or "attribute" in k for k in d)  # glossary names only
    text = str(r.summary())
    assert "special uniques" in text and "MSUs by size" in text and "Education" in text and "Rural" not in text
    assert "<table>" in r.summary().to_html()
    f = r.to_frame()
    assert f.columns == [
        "score",
        "dis_score",
        "msu_count",
        "min_msu_size",
        "special_unique",
        "Residence_contribution",
        "Gender_contribution",
        "Education_contribution",
        "Labor_contribution",
    ]
    text_col = r.to_frame(msus=True)["msus"].to_list()
    assert text_col[4] == (
        "Residence=Rural; Gender=Female, Education=Secondary complete; Gender=Female, "
        "Labor=Unemployed; Education=Secondary complete, Labor=Unemployed"
    )
    assert text_col[0] == "" and len(r) == 10
    lazy = sdckit.suda(s002, S002_KEYS, keep_msus=False)  # recomputes each record's MSUs on request
    assert lazy.to_frame(msus=True)["msus"].to_list() == text_col
    with mock.patch.object(importlib.import_module("sdckit.risk.suda"), "_KEEP_DEFAULT", 8):
        over = sdckit.suda(s002, S002_KEYS)  # 9 MSUs > 8: not kept by default, still explained
    assert over._msu_pattern is None and r._msu_pattern is not None
    assert [str(m) for m in over.msus(4)] == [str(m) for m in r.msus(4)]
    pdf = sdckit.suda(s002.to_pandas(), S002_KEYS).to_frame(msus=True)
    assert type(pdf).__module__.startswith("pandas") and pdf["msus"].iloc[2] == "Education=Primary incomplete"


def test_plot(s002):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    r = sdckit.suda(s002, S002_KEYS)
    axes = r.plot()
    assert len(axes) == 2 and "DIS-SUDA" in axes[0].get_title()
    assert [t.get_text() for t in axes[1].get_xticklabels()] == S002_KEYS
    assert sum(p.get_height() for p in axes[0].patches) == 4  # the four records with a score
    _, ax = plt.subplots()
    assert r.plot(ax=ax, measure="contributions") is ax
    assert [p.get_height() for p in ax.patches] == pytest.approx([23.529, 17.647, 64.706, 23.529], abs=1e-3)
    with pytest.raises(SdcError, match="^measure: got 'pie'; expected one of 'both', 'dis', 'contributions'$"):
        r.plot(measure="pie")
    _, old = plt.subplots()
    with pytest.warns(DeprecationWarning, match="kind= is now called measure="):  # the old name
        assert r.plot(ax=old, kind="contributions") is old
    assert [p.get_height() for p in old.patches] == [p.get_height() for p in ax.patches]
    with pytest.raises(SdcError, match="pair of Axes"):
        r.plot(ax=ax)
    plt.close("all")


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------
BAD_CALLS = [
    ("max-size-0", dict(max_size=0), ["max_size", "got 0", "expected an integer >= 1"]),  # the declared rule
    ("max-size-big", dict(max_size=5), ["max_size", "got 5"]),
    ("max-size-frac", dict(max_size=1.5), ["max_size", "1.5"]),
    ("max-size-bool", dict(max_size=True), ["max_size", "True"]),
    ("max-size-text", dict(max_size="3"), ["max_size", "'3'"]),
    ("fraction-0", dict(dis_fraction=0), ["dis_fraction", "got 0", "(0, 1]"]),
    ("fraction-big", dict(dis_fraction=1.5), ["dis_fraction", "1.5"]),
    ("fraction-nan", dict(dis_fraction=float("nan")), ["dis_fraction"]),
    ("fraction-text", dict(dis_fraction="some"), ["dis_fraction", "'some'", "weights"]),
    ("fraction-weights-no-weight", dict(dis_fraction="weights"), ["dis_fraction", "weight"]),
    ("scores-text", dict(original_scores="yes"), ["original_scores", "'yes'"]),
    ("missing-key", dict(keys=["Residence", "Age"]), ["Age", "not found"]),
    ("bad-weight", dict(weight="Health"), ["weight", "Health"]),
    ("single-level", dict(data=s002_table().with_columns(pl.lit("x").alias("Gender"))), ["Gender", "single category"]),
]


@pytest.mark.parametrize("case", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input(case):
    _, kwargs, fragments = case
    args = dict(data=s002_table(), keys=S002_KEYS) | kwargs
    with pytest.raises(SdcError) as info:
        sdckit.suda(**args)
    for frag in fragments:
        assert frag in str(info.value), (frag, str(info.value))


def test_old_names_still_work_and_warn(s002):
    r = sdckit.suda(s002, S002_KEYS, max_size=3, dis_fraction=0.1, original_scores=False)
    with pytest.warns(DeprecationWarning, match="by keyword"):  # everything after keys was positional
        old = sdckit.suda(s002, S002_KEYS, 3, 0.1, False)
    np.testing.assert_array_equal(old.score, r.score)
    np.testing.assert_array_equal(old.dis_score, r.dis_score)
    with pytest.warns(DeprecationWarning, match="n_with_msu"):
        assert r.records_with_msu == r.n_with_msu == 4
    with pytest.warns(DeprecationWarning, match="n_patterns_fk2"):
        assert r.n_pair_keys == r.n_patterns_fk2 == 3
    # the old contribution attributes held percentages: 100 x the shares
    with pytest.warns(DeprecationWarning, match="share_contributions"):
        pct = r.attribute_contributions
    assert pct == {k: 100 * v for k, v in r.share_contributions.items()}
    with pytest.warns(DeprecationWarning, match="share_level_contributions"):
        lev = r.attribute_level_contributions
    assert lev["Residence"] == {k: 100 * v for k, v in r.share_level_contributions["Residence"].items()}
    assert inspect.signature(sdckit.suda).parameters["max_size"].kind is inspect.Parameter.KEYWORD_ONLY


def test_bad_record_index(s002):
    r = sdckit.suda(s002, S002_KEYS)
    for bad in (10, -1, 2.0, "3"):
        with pytest.raises(SdcError, match="^i: "):
            r.msus(bad)
    assert r.msus(np.int64(2))[0].variables == ("Education",)


def test_weights_imply_other_fraction(s002):
    """Spec K.11: keep 0.01 but warn when the weights imply another fraction (10 / 1570)."""
    with pytest.warns(SdcWarning, match="dis_fraction='weights'"):
        sdckit.suda(s002, S002_KEYS, weight="w")
    w = s002.with_columns(pl.lit(100.0).alias("w"))  # implies 10 / 1000 = 0.01: no warning
    sdckit.suda(w, S002_KEYS, weight="w")


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def s002_csv(tmp_path):
    path = tmp_path / "s002.csv"
    s002_table().write_csv(path)
    return path


def test_cli_json_and_records(s002_csv, tmp_path, capsys):
    out_json, out_rec = tmp_path / "s.json", tmp_path / "s.csv"
    code = main(
        [
            "suda",
            str(s002_csv),
            "--keys",
            ",".join(S002_KEYS),
            "--json",
            str(out_json),
            "--records",
            str(out_rec),
            "--msus",
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "SUDA (special uniques) and DIS-SUDA" in printed and "special uniques" in printed
    payload = json.loads(out_json.read_text())["suda"]
    assert payload["n_special_uniques"] == 4 and payload["sum_score"] == 34  # spec E.7
    assert payload["dis_fraction"] == 0.01 and "share_level_contributions" not in payload
    rec = pl.read_csv(out_rec)
    assert rec["score"].to_list() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]
    assert (
        rec["msus"][7] == "Education=Post-secondary; Residence=Urban, Labor=Unemployed; Gender=Male, Labor=Unemployed"
    )


def test_cli_options(s002_csv, tmp_path):
    """--scores ihsn --dis-fraction 0.1 --max-size 3 --levels; spec E.2: IHSN scores 1.75 .. 3.25."""
    out_json, out_rec = tmp_path / "s.json", tmp_path / "s.parquet"
    assert (
        main(
            [
                "suda",
                str(s002_csv),
                "--keys",
                ",".join(S002_KEYS),
                "--scores",
                "ihsn",
                "--max-size",
                "3",
                "--dis-fraction",
                "0.1",
                "--levels",
                "--json",
                str(out_json),
                "--records",
                str(out_rec),
            ]
        )
        == 0
    )
    payload = json.loads(out_json.read_text())["suda"]
    assert payload["max_size"] == 3 and payload["original_scores"] is False and payload["dis_fraction"] == 0.1
    assert payload["share_level_contributions"]["Labor"]["Unemployed"] == pytest.approx(1)
    assert pl.read_parquet(out_rec)["score"].to_list() == [0, 0, 1.75, 0, 3.25, 0, 1.75, 2.75, 0, 0]
    assert (
        main(
            [
                "suda",
                str(s002_csv),
                "--keys",
                ",".join(S002_KEYS),
                "--weight",
                "w",
                "--dis-fraction",
                "weights",
                "--json",
                str(out_json),
                "--overwrite",
            ]
        )
        == 0
    )
    assert json.loads(out_json.read_text())["suda"]["dis"] == pytest.approx(0.0042553, abs=5e-8)


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--keys", "Residence,Age"], "--keys: column(s) Age not found"),
        (["--keys", ",".join(S002_KEYS), "--max-size", "9"], "max_size: got 9"),
        (["--keys", ",".join(S002_KEYS), "--dis-fraction", "abc"], "--dis-fraction: got 'abc'"),
        (["--keys", ",".join(S002_KEYS), "--dis-fraction", "0"], "dis_fraction"),
        (["--keys", ","], "--keys"),
    ],
)
def test_cli_bad_input_one_line(s002_csv, capsys, args, fragment):
    code = main(["suda", str(s002_csv), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("sdckit: error: ") and fragment in err
    assert err.count("\n") == 1
