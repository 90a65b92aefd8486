"""Risk-threshold suppression with the mu-ARGUS household rule: a hand-worked example, the
acceptance on the sdcMicro testdata (and the EU-SILC sample) that ``individual_risk(...)
.threshold()`` says ``safe`` afterwards, the kernel's guarantees on random files, bad input."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA, shared_file
from sdckit._core.risk_suppression import record_risk, suppress_households
from sdckit.protect.risk_suppression import suppress_by_risk

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
W, HH = "sampling_weight", "ori_hid"


@pytest.fixture(scope="module")
def testdata() -> pl.DataFrame:
    return pl.read_csv(TESTDATA)


# ----------------------------------------------------------------------------------------------
# a hand-worked example
# ----------------------------------------------------------------------------------------------
TINY = pl.DataFrame(
    {
        "A": [1, 1, 1, 1, 2, 2, 2, 2],
        "B": [1, 2, 2, 1, 1, 1, 2, 2],
        "hh": ["h1", "h1", "h1", "h2", "h3", "h3", "h4", "h4"],
    }
)


def test_hand_worked_household_rule():
    """No weights, so r = 1/f_k (a missing value matches every category, alpha = 1).

    Patterns (1,1), (1,2), (2,1), (2,2) have f = 2 each: every risk is 1/2, so the
    individual rule r <= r* = 0.5 holds and suppresses nothing. Household rule with
    r^h* = 0.9: delta = 0.9/3 = 0.3 in h1 (3 members), 0.9 in h2 (1), 0.45 in h3 and h4 (2):
    records 0, 1, 2 (h1) and 4, 5 (h3), 6, 7 (h4) have r = 0.5 >= delta.
    Round 1 (only B may be suppressed; per household the riskiest, ties the first row):
    rows 0, 4, 6 lose B. Now (1,1) = {3, 0} f = 2, (1,2) = {1, 2, 0} f = 3,
    (1,NA) = {0, 1, 2, 3} f = 4; (2,1) = {5, 4, 6} f = 3, (2,2) = {7, 4, 6} f = 3,
    (2,NA) f = 4: risks 1/4, 1/3, 1/3, 1/2 | 1/4, 1/3, 1/4, 1/3. Only h1 breaks the rule
    (rows 1, 2 at 1/3 >= 0.3; row 3 at 0.5 < 0.9; h3/h4 at most 1/3 < 0.45).
    Round 2: row 1 loses B: (1,1) = {3, 0, 1} f = 3, (1,2) = {2, 0, 1} f = 3, (1,NA) f = 4;
    row 2 still at 1/3 >= 0.3. Round 3: row 2 loses B: (1,1) = (1,NA) = 4 records,
    every record of A = 1 at 1/4. Done: B suppressed in rows 0, 1, 2, 4, 6."""
    plain = suppress_by_risk(TINY, ["A", "B"], threshold=0.5, variables=["B"])
    assert plain.details["n_suppressed"] == 0
    res = suppress_by_risk(TINY, ["A", "B"], threshold=0.5, variables=["B"], household="hh", household_risk=0.9)
    assert np.flatnonzero(res.data["B"].is_null().to_numpy()).tolist() == [0, 1, 2, 4, 6]
    assert res.n_changed == {"B": 5}
    after = sdckit.individual_risk(res.data, ["A", "B"], household="hh")
    np.testing.assert_allclose(after.risk, [1 / 4, 1 / 4, 1 / 4, 1 / 4, 1 / 4, 1 / 3, 1 / 4, 1 / 3], rtol=1e-14)
    d = res.details
    assert d["household_threshold"] == 0.9 and d["threshold"] == 0.5
    assert d["n_household_unsafe_before"] == 7 and d["n_household_unsafe_after"] == 0
    assert d["n_unresolved"] == 0 and d["unresolved_rows"].size == 0
    # household risks after: h1 1 - (3/4)^3, h2 1/4, h3 1 - (3/4)(2/3) = 1/2, h4 1/2
    er_h = 3 * (1 - 0.75**3) + 0.25 + 2 * 0.5 + 2 * 0.5
    assert d["household_expected_reidentifications_after"] == pytest.approx(er_h, rel=1e-14)
    assert d["household_global_risk_before"] == pytest.approx((3 * (1 - 0.5**3) + 0.5 + 4 * 0.75) / 8, rel=1e-14)
    assert after.threshold(0.5, household_risk=0.9).n_household_unsafe == 0
    assert res.parameters["household"] == "hh" and res.parameters["household_risk"] == 0.9


def test_kernel_on_the_hand_worked_example():
    codes = np.array([[0, 0], [0, 1], [0, 1], [0, 0], [1, 0], [1, 0], [1, 1], [1, 1]], dtype=np.int32)
    hh = np.array([0, 0, 0, 1, 2, 2, 3, 3])
    sizes = np.bincount(hh)[hh].astype(float)
    new, risk, unresolved, steps = suppress_households(codes, None, hh, sizes, 0.9, [1], threshold=0.5)
    assert np.flatnonzero(new[:, 1] < 0).tolist() == [0, 1, 2, 4, 6] and steps == 5
    assert not unresolved.any()
    np.testing.assert_allclose(risk, record_risk(new, None, 1.0), rtol=0)
    assert codes[0, 1] == 0  # the input is not changed


def test_threshold_without_household_risk_holds_households_to_r_star():
    """Default r^h* = r*: with r* = 0.9 the rule is that of the hand-worked example."""
    a = suppress_by_risk(TINY, ["A", "B"], threshold=0.9, variables=["B"], household="hh")
    b = suppress_by_risk(TINY, ["A", "B"], threshold=0.9, variables=["B"], household="hh", household_risk=0.9)
    assert a.data.equals(b.data) and a.details["household_threshold"] == 0.9
    assert a.parameters["household_risk"] is None


def test_unresolved_household_is_reported():
    """A one-key file: row 0 (A = 1) is unique, r = 1 >= 0.5 / 1; suppressing A leaves it with
    every key missing, f = 3 under the missing-value rule, r = 1/3 < 0.5. With r^h* = 0.2
    (delta 0.2) nothing can bring a lone-household record to r < 0.2 in a 3-record file."""
    df = pl.DataFrame({"A": [1, 2, 2], "hh": [1, 2, 3]})
    res = suppress_by_risk(df, ["A"], threshold=1.0, household="hh", household_risk=0.2)
    assert res.details["n_unresolved"] == 3 and res.details["unresolved_rows"].tolist() == [0, 1, 2]
    assert any("unresolved" in n for n in res.notes)


# ----------------------------------------------------------------------------------------------
# acceptance: individual_risk(...).threshold() on the protected file says safe
# ----------------------------------------------------------------------------------------------
def test_testdata_fails_the_household_rule_before_and_is_safe_after(testdata):
    before = sdckit.individual_risk(testdata, KEYS, weight=W, household=HH).threshold(0.01)
    assert before.meets_individual_target and not before.safe and before.failing == ("household rule",)
    plain = suppress_by_risk(testdata, KEYS, weight=W, max_global_risk=0.01)
    assert plain.details["n_suppressed"] == 0  # the individual rule alone changes nothing
    res = suppress_by_risk(testdata, KEYS, weight=W, max_global_risk=0.01, household=HH)
    after = sdckit.individual_risk(res.data, KEYS, weight=W, household=HH)
    verdict = after.threshold(0.01)
    assert verdict.safe, verdict.verdict
    d = res.details
    assert d["n_suppressed"] > 0 and d["n_unresolved"] == 0
    assert d["household_global_risk_after"] == pytest.approx(after.household_global_risk, rel=1e-12)
    assert d["household_global_risk_before"] == pytest.approx(before.risk_result.household_global_risk, rel=1e-12)
    assert d["n_household_unsafe_before"] == before.n_household_unsafe
    assert d["household_threshold"] == before.household_threshold


def test_testdata_with_given_thresholds(testdata):
    res = suppress_by_risk(testdata, KEYS, weight=W, threshold=0.05, household=HH, household_risk=0.1)
    after = sdckit.individual_risk(res.data, KEYS, weight=W, household=HH)
    t = after.threshold(0.01, household_risk=0.1)
    assert t.n_household_unsafe == 0 and t.safe
    assert after.risk.max() <= 0.05
    assert res.details["n_household_unsafe_before"] > 0 and res.details["n_household_unsafe_after"] == 0


def test_testdata_strata_and_min_risk(testdata):
    res = suppress_by_risk(
        testdata, KEYS[1:], weight=W, max_global_risk=0.005, household=HH, strata="urbrur", strategy="min_risk"
    )
    after = sdckit.individual_risk(res.data, KEYS[1:], weight=W, household=HH, strata="urbrur")
    assert after.threshold(0.005).safe and res.details["n_unresolved"] == 0


@pytest.mark.shared_data
def test_eusilc_sample_is_safe_after():
    path = shared_file("laeken", "eusilc.csv")
    keys = ["db040", "hsize", "rb090", "pl030", "pb220a", "age"]
    df = pl.read_csv(path, columns=[*keys, "rb050", "db030"], infer_schema_length=None)
    before = sdckit.individual_risk(df, keys, weight="rb050", household="db030").threshold(0.01)
    res = suppress_by_risk(df, keys, weight="rb050", max_global_risk=0.01, household="db030")
    after = sdckit.individual_risk(res.data, keys, weight="rb050", household="db030").threshold(0.01)
    assert before.failing == ("household rule",) and after.safe, after.verdict


# ----------------------------------------------------------------------------------------------
# the kernel's guarantees on random files
# ----------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.floats(0.05, 1.0), st.floats(0.05, 1.0), st.booleans())
def test_no_record_breaks_a_rule_unless_unresolved(seed, r_star, h_star, weighted):
    rng = np.random.default_rng(seed)
    n = 40
    codes = rng.integers(0, 3, size=(n, 3)).astype(np.int32)
    hh = np.sort(rng.integers(0, 15, size=n))
    sizes = np.bincount(hh)[hh].astype(float)
    w = rng.uniform(1, 20, n) if weighted else None
    new, risk, unresolved, _ = suppress_households(codes, w, hh, sizes, h_star, [2, 1, 0], threshold=r_star)
    np.testing.assert_allclose(risk, record_risk(new, w, 1.0), rtol=1e-12)
    breaks = (risk > r_star) | (risk >= h_star / sizes)
    np.testing.assert_array_equal(breaks, unresolved)
    assert np.all((new[unresolved] < 0).all(axis=1))  # unresolved: nothing left to suppress
    assert np.all((new == codes) | (new < 0))  # only suppressions
    # a household whose members all keep to the rule has household risk below r^h*
    ok = np.ones(hh.max() + 1, dtype=bool)
    ok[hh[unresolved]] = False
    logs = np.bincount(hh, weights=np.log1p(-np.minimum(risk, 1.0)), minlength=ok.size)
    present = np.bincount(hh, minlength=ok.size) > 0
    assert np.all(1 - np.exp(logs[ok & present]) < h_star + 1e-12)


def test_row_order_of_households_does_not_matter_for_the_verdict(testdata):
    perm = np.random.default_rng(3).permutation(testdata.height)
    shuffled = testdata[perm]
    res = suppress_by_risk(shuffled, KEYS, weight=W, max_global_risk=0.01, household=HH)
    after = sdckit.individual_risk(res.data, KEYS, weight=W, household=HH)
    assert after.threshold(0.01).safe


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"household": "nope", "threshold": 0.1}, r"household: column\(s\) nope not found"),
        ({"household": "A", "threshold": 0.1}, "household: column A is also used as keys"),
        ({"household_risk": 0.1, "threshold": 0.1}, "household_risk: no household column given"),
        ({"household": "hh", "household_risk": 1.5, "threshold": 0.1}, "household_risk"),
        ({"household": "hh", "threshold": 0.1, "method": "sdcmicro", "variables": ["B"]}, "method 'iterative'"),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(sdckit.SdcError, match=message):
        suppress_by_risk(TINY, ["A", "B"], **kwargs)


def test_out_of_core_engine_refuses_households():
    pytest.importorskip("duckdb")
    with pytest.raises(sdckit.SdcError, match="suppress_by_risk with households"):
        suppress_by_risk(TINY, ["A", "B"], threshold=0.5, household="hh", engine="duckdb")


def test_input_not_mutated():
    copy = TINY.clone()
    suppress_by_risk(TINY, ["A", "B"], threshold=0.5, variables=["B"], household="hh", household_risk=0.9)
    assert TINY.equals(copy)
