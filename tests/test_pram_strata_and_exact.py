"""PRAM within strata reaches the risk and loss measures (each record uses its stratum's
matrix; the result equals running each stratum alone), a category that PRAM removed is
accepted, and the exact misclassification risk with the full matrix (Shlomo & Skinner, eq. 9
of the 2022 review with its numerator corrected) against hand-worked examples."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA
from sdckit._core.misclassification import correct_match_probability, exact_factor, key_matrix

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
KEYS = ["roof", "walls", "water", "sex"]
W = "sampling_weight"
SCALES = {"walls": "nominal", "water": "nominal"}


@pytest.fixture(scope="module")
def testdata() -> pl.DataFrame:
    return pl.read_csv(TESTDATA)


@pytest.fixture(scope="module")
def stratified(testdata):
    return sdckit.pram(testdata, ["walls", "water"], pd=0.5, seed=1, strata="urbrur")


# ----------------------------------------------------------------------------------------------
# eq. 9 by hand
# ----------------------------------------------------------------------------------------------
def test_eq9_two_categories_by_hand():
    """F = (4, 2); M[k, j] = P(released k | true j) with columns (0.9, 0.1) and (0.2, 0.8);
    pi = 0.5. For k = 1 (first cell):
    numerator M_11 / (1 - pi M_11) = 0.9 / 0.55 = 1.636364;
    denominator F_1 M_11/(1 - pi M_11) + F_2 M_12/(1 - pi M_12)
      = 4 * 0.9/0.55 + 2 * 0.2/0.9 = 6.545455 + 0.444444 = 6.989899;
    P_1 = 1.636364 / 6.989899 = 0.234104.
    For k = 2: 0.8/0.6 = 1.333333 over 4 * 0.1/0.95 + 2 * 0.8/0.6 = 0.421053 + 2.666667
    = 3.087719: P_2 = 0.431818.
    The diagonal form M_kk / F~_k: 0.9 / (4*0.9 + 2*0.2) = 0.225, 0.8 / (0.4 + 1.6) = 0.4."""
    M = np.array([[0.9, 0.2], [0.1, 0.8]])
    F = np.array([4.0, 2.0])
    p1 = (0.9 / 0.55) / (4 * 0.9 / 0.55 + 2 * 0.2 / 0.9)
    p2 = (0.8 / 0.6) / (4 * 0.1 / 0.95 + 2 * 0.8 / 0.6)
    np.testing.assert_allclose(correct_match_probability(F, M, 0.5), [p1, p2], rtol=1e-14)
    assert p1 == pytest.approx(0.234104, abs=1e-6) and p2 == pytest.approx(0.431818, abs=1e-6)
    # the factor on the diagonal form: c_k M_kk / F~_k = P_k
    c = exact_factor(F, (2,), {0: M.T}, 0.5)
    np.testing.assert_allclose(c * np.diag(M) / (M @ F), [p1, p2], rtol=1e-14)
    assert 0.9 / (M @ F)[0] == pytest.approx(0.225) and 0.8 / (M @ F)[1] == pytest.approx(0.4)


def test_eq9_three_categories_printed_example():
    """F = (3, 5, 2), pi = 0.4, M with columns (0.8, 0.15, 0.05), (0.1, 0.85, 0.05),
    (0.2, 0.1, 0.7): for k = 1, 0.8/0.68 = 1.176471 over
    3 * 1.176471 + 5 * 0.1/0.96 + 2 * 0.2/0.92 = 3.529412 + 0.520833 + 0.434783 = 4.485028:
    P_1 = 0.262311 (a simulation of 400,000 samples gives 0.26271; the printed numerator
    M_kk (1 - pi M_kk) would give 0.12129; the diagonal form M_kk / F~_k 0.24242)."""
    M = np.array([[0.8, 0.1, 0.2], [0.15, 0.85, 0.1], [0.05, 0.05, 0.7]])
    F = np.array([3.0, 5.0, 2.0])
    p = correct_match_probability(F, M, 0.4)
    hand = (0.8 / 0.68) / (3 * 0.8 / 0.68 + 5 * 0.1 / 0.96 + 2 * 0.2 / 0.92)
    assert p[0] == pytest.approx(hand, rel=1e-14) and p[0] == pytest.approx(0.26231, abs=1e-5)
    assert 0.8 / (M @ F)[0] == pytest.approx(0.24242, abs=1e-5)


def test_eq9_simulation():
    """The probability by simulation: a population with F = (3, 5, 2), each unit
    misclassified by M and sampled with pi = 0.4; among samples with exactly one unit
    released as cell 1, the share where an intruder picking one of the F_1 units at random
    picks the sampled one (which must truly be of cell 1)."""
    rng = np.random.default_rng(20261126)
    M = np.array([[0.8, 0.1, 0.2], [0.15, 0.85, 0.1], [0.05, 0.05, 0.7]])
    true = np.repeat([0, 1, 2], [3, 5, 2])
    R = 60_000
    u = rng.random((R, true.size))
    released = (u[..., None] > np.cumsum(M[:, true].T, axis=1)[None]).sum(axis=2)
    sampled = rng.random((R, true.size)) < 0.4
    in1 = sampled & (released == 0)
    unique = in1.sum(axis=1) == 1
    who = np.argmax(in1[unique], axis=1)
    hit = (true[who] == 0) / 3.0
    est = hit.mean()
    se = hit.std() / math.sqrt(hit.size)
    assert abs(est - correct_match_probability([3, 5, 2], M, 0.4)[0]) < 4 * se


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_exact_factor_equals_eq9_on_random_tables(seed):
    """Two PRAMed keys of three (the full K x K matrix as the Kronecker product), fractions
    per cell: c_k M_kk / F~_k equals eq. 9 computed with the full matrix."""
    rng = np.random.default_rng(seed)
    shape = (3, 2, 2)
    P0 = rng.dirichlet(np.ones(3) * 2, size=3)
    P2 = rng.dirichlet(np.ones(2) * 2, size=2)
    F = rng.uniform(0.2, 6, 12)
    pi = rng.uniform(0.01, 0.6, 12)
    Mf = key_matrix({0: P0, 2: P2}, shape)
    np.testing.assert_allclose(Mf.sum(axis=0), 1.0, rtol=1e-12)
    c = exact_factor(F, shape, {0: P0, 2: P2}, pi)
    np.testing.assert_allclose(c * np.diag(Mf) / (Mf @ F), correct_match_probability(F, Mf, pi), rtol=1e-10)


def test_exact_factor_is_one_without_sampling_and_without_pram():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=3)
    np.testing.assert_allclose(exact_factor(rng.uniform(1, 5, 6), (3, 2), {0: P}, 0.0), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(exact_factor(np.ones(6), (3, 2), {}, 0.3), 1.0)


# ----------------------------------------------------------------------------------------------
# loglinear_risk: the exact form
# ----------------------------------------------------------------------------------------------
def test_loglinear_exact_form_by_hand(testdata):
    """tau2_exact = sum over sample uniques of M_kk c_k E(1/F_k | f_k = 1), recomputed here
    independently: under the main-effects model lambda of the cells that differ only in the
    PRAMed key (water) is proportional to its weighted margin m_j; with weights, pi of a
    sample unique's cell is f / F^ = 1 / w_i. So
    c_k = [1 / (1 - pi P_kk)] sum_j m_j P_jk / sum_j m_j P_jk / (1 - pi P_jk)."""
    res = sdckit.pram(testdata, ["water"], pd=0.3, seed=2)
    ll = sdckit.loglinear_risk(res.data, KEYS, weight=W, pram=res.details["pram"], model="main")
    diag_only = sdckit.loglinear_risk(res.data, KEYS, weight=W, pram=res.details["pram_diagonal"], model="main")
    assert diag_only.pram["tau2"] == pytest.approx(ll.pram["tau2"], rel=1e-14)
    assert diag_only.pram["tau2_exact"] is None
    spec = res.details["pram"]["water"]
    cats = sorted(spec)
    P = np.array([[spec[a][b] for b in cats] for a in cats])
    water, w = res.data["water"].to_numpy(), res.data[W].to_numpy()
    m = np.array([w[water == c].sum() for c in cats])
    su = ll.fk == 1
    k = np.searchsorted(cats, water[su])
    pi = 1.0 / w[su]
    col = P[:, k]  # P[j, k] for every sample unique's released k
    c = (m @ col) / (m @ (col / (1.0 - pi * col))) / (1.0 - pi * P[k, k])
    assert ll.pram["tau2_exact"] == pytest.approx(float(np.sum(P[k, k] * c * ll.risk[su])), rel=1e-10)
    assert ll.pram["tau2"] == pytest.approx(float(np.sum(P[k, k] * ll.risk[su])), rel=1e-12)
    assert ll.pram["share_tau2_exact_uniques"] == pytest.approx(ll.pram["tau2_exact"] / su.sum(), rel=1e-14)
    assert "exact form with the full matrix" in str(ll.summary())


def test_loglinear_exact_form_tends_to_the_diagonal_form_for_small_fractions(testdata):
    res = sdckit.pram(testdata, ["water"], pd=0.3, seed=2)
    big = testdata.with_columns((pl.col(W) * 1000).alias(W))
    protected = res.data.with_columns(big[W])
    ll = sdckit.loglinear_risk(protected, KEYS, weight=W, pram=res.details["pram"], model="main")
    assert ll.pram["tau2_exact"] == pytest.approx(ll.pram["tau2"], rel=1e-3)


# ----------------------------------------------------------------------------------------------
# matrices per stratum: each record uses its stratum's matrix
# ----------------------------------------------------------------------------------------------
def test_pram_publishes_matrices_per_stratum(stratified):
    d = stratified.details
    assert d["pram"] is None and d["pram_diagonal"] is None  # no single matrix, as before
    assert set(d["pram_by_stratum"]) == set(d["pram_diagonal_by_stratum"]) == {"walls", "water"}
    for form in (d["pram_by_stratum"]["walls"], d["pram_diagonal_by_stratum"]["walls"]):
        assert form["strata"] == ["urbrur"] and set(form["matrices"]) == {"1", "2"}
    m = next(m for m in d["matrices"] if m["variable"] == "walls" and m["stratum"] == "2")
    assert d["pram_by_stratum"]["walls"]["matrices"]["2"][m["categories"][0]][m["categories"][1]] == m["matrix"][0][1]


def test_individual_risk_per_stratum_equals_each_stratum_alone(stratified, testdata):
    both = sdckit.individual_risk(
        stratified.data, KEYS, weight=W, pram=stratified.details["pram_by_stratum"], strata="urbrur"
    )
    diag = sdckit.individual_risk(
        stratified.data, KEYS, weight=W, pram=stratified.details["pram_diagonal_by_stratum"], strata="urbrur"
    )
    np.testing.assert_array_equal(both.risk, diag.risk)
    urb = testdata["urbrur"].to_numpy()
    for u in (1, 2):
        rows = urb == u
        mats = {v: stratified.details["pram_by_stratum"][v]["matrices"][str(u)] for v in ("walls", "water")}
        alone = sdckit.individual_risk(stratified.data.filter(pl.Series(rows)), KEYS, weight=W, pram=mats)
        np.testing.assert_allclose(both.risk[rows], alone.risk, rtol=1e-14)
    plain = sdckit.individual_risk(stratified.data, KEYS, weight=W, strata="urbrur")
    assert np.all(both.risk <= plain.risk + 1e-15) and both.global_risk < plain.global_risk
    assert both.pram_adjusted == ("walls", "water")
    # threshold() works on the per-record risks
    t = both.threshold(0.0001)
    assert t.threshold is not None and t.n_unsafe == int(np.count_nonzero(both.risk > t.threshold))


def test_loglinear_per_stratum_uses_each_records_matrix(stratified, testdata):
    ll = sdckit.loglinear_risk(
        stratified.data, KEYS, weight=W, pram=stratified.details["pram_by_stratum"], model="main"
    )
    plain = sdckit.loglinear_risk(stratified.data, KEYS, weight=W, model="main")
    urb = testdata["urbrur"].to_numpy().astype(str)
    keep = np.ones(testdata.height)
    for v in ("walls", "water"):
        col = stratified.data[v].to_numpy()
        mats = stratified.details["pram_diagonal_by_stratum"][v]["matrices"]
        keep *= np.array([mats[s][c] for s, c in zip(urb, col)])
    su = plain.fk == 1
    np.testing.assert_allclose(ll.risk_pram[su], keep[su] * plain.risk[su], rtol=1e-12)
    assert ll.pram["tau2"] == pytest.approx(float(np.sum(keep[su] * plain.risk[su])), rel=1e-12)
    assert ll.pram["tau2_exact"] is not None


def test_information_loss_per_stratum_equals_each_stratum_alone(stratified, testdata):
    il = sdckit.information_loss(testdata, stratified.data, ["walls", "water"], scales=SCALES,
                                 pram=stratified.details["pram_by_stratum"])  # fmt: skip
    total = {"walls": 0.0, "water": 0.0}
    joint = 0.0
    for u in (1, 2):
        m = testdata["urbrur"] == u
        mats = {v: stratified.details["pram_by_stratum"][v]["matrices"][str(u)] for v in ("walls", "water")}
        alone = sdckit.information_loss(
            testdata.filter(m), stratified.data.filter(m), ["walls", "water"], scales=SCALES, pram=mats
        )
        joint += alone.ebil_joint
        for v in total:
            total[v] += alone.ebil[v]
    assert il.ebil == pytest.approx(total, rel=1e-12)
    assert il.ebil_joint == pytest.approx(joint, rel=1e-12)


def test_a_stratum_without_a_matrix_is_a_clear_error(stratified):
    form = stratified.details["pram_diagonal_by_stratum"]["walls"]
    broken = {"walls": {"strata": ["urbrur"], "matrices": {"1": form["matrices"]["1"]}}}
    with pytest.raises(sdckit.SdcError, match="pram: walls: 1 stratum"):
        sdckit.individual_risk(stratified.data, KEYS, weight=W, pram=broken)
    with pytest.raises(sdckit.SdcError, match="pram: walls"):
        sdckit.loglinear_risk(stratified.data, KEYS, weight=W, pram=broken, model="main")
    # a stratum's matrix that lacks a category occurring in that stratum: counted, not named
    lacking = {"walls": {"strata": ["urbrur"], "matrices": dict(form["matrices"])}}
    first = dict(form["matrices"]["2"])
    first.pop(next(iter(first)))
    lacking["walls"]["matrices"]["2"] = first
    with pytest.raises(sdckit.SdcError, match="pram: walls: 1 category of the data has no keep probability"):
        sdckit.individual_risk(stratified.data, KEYS, weight=W, pram=lacking)
    with pytest.raises(sdckit.SdcError, match=r"pram: column\(s\) nope not found"):
        sdckit.individual_risk(stratified.data, KEYS, weight=W, pram={"walls": {"strata": ["nope"], "matrices": {}}})


# ----------------------------------------------------------------------------------------------
# a category that PRAM removed
# ----------------------------------------------------------------------------------------------
def _removed(testdata):
    """walls with a category of one record (99) that PRAM moves away (seed chosen so that
    it does)."""
    df = testdata.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(99).otherwise(pl.col("walls")).alias("walls")
    ).to_pandas()
    df["walls"] = df["walls"].astype("category")
    for seed in range(50):
        res = sdckit.pram(df, ["walls"], pd=0.2, seed=seed)
        if (res.data["walls"] == 99).sum() == 0:
            return df, res
    raise AssertionError("no seed removes the category")  # pragma: no cover


def test_a_category_pram_removed_is_accepted(testdata):
    df, res = _removed(testdata)
    assert 99 in res.details["pram"]["walls"] and 99 not in res.details["pram_diagonal"]["walls"]
    assert 99 in set(res.data["walls"].cat.categories)  # the declared category stays
    for spec in (res.details["pram"], res.details["pram_diagonal"]):
        ll = sdckit.loglinear_risk(res.data, KEYS, weight=W, pram=spec, model="main")
        ir = sdckit.individual_risk(res.data, KEYS, weight=W, pram=spec)
        assert ll.pram["tau2"] > 0 and ir.global_risk > 0
    ll = sdckit.loglinear_risk(res.data, KEYS, weight=W, pram=res.details["pram"], model="main")
    assert ll.pram["tau2_exact"] is not None
    il = sdckit.information_loss(df, res.data, ["walls"], scales={"walls": "nominal"}, pram=res.details["pram"])
    assert il.ebil["walls"] > 0


def test_variant_loss_per_stratum_equals_each_stratum_alone(stratified, testdata):
    v = sdckit.variant_loss(testdata, stratified.data, ["walls", "water"], scales=SCALES,
                            pram=stratified.details["pram_by_stratum"])  # fmt: skip
    loss = {"walls": 0.0, "water": 0.0}
    ebil = {"walls": 0.0, "water": 0.0}
    for u in (1, 2):
        m = testdata["urbrur"] == u
        mats = {x: stratified.details["pram_by_stratum"][x]["matrices"][str(u)] for x in ("walls", "water")}
        alone = sdckit.variant_loss(
            testdata.filter(m), stratified.data.filter(m), ["walls", "water"], scales=SCALES, pram=mats
        )
        for x in loss:
            loss[x] += alone.loss_by_variable[x] * int(m.sum()) / testdata.height  # a mean over records
            ebil[x] += alone.ebil[x]
    assert v.loss_by_variable == pytest.approx(loss, rel=1e-12)
    assert v.ebil == pytest.approx(ebil, rel=1e-12)


def test_workflow_measures_a_pram_step_within_strata(testdata):
    """SdcProblem measures a step of PRAM within strata with the per-stratum matrices it
    publishes: its risk is the adjusted one (each record its stratum's keep probability), below
    the naive risk of the released values."""
    sc = sdckit.Scenario(keys=KEYS, weight=W, household="ori_hid")
    p = sdckit.SdcProblem(testdata, sc).apply("pram", variables=["walls"], strata="urbrur", seed=1)
    out = p.history[-1].result
    plain = sdckit.individual_risk(out.data, KEYS, weight=W, household="ori_hid")
    adjusted = sdckit.individual_risk(
        out.data, KEYS, weight=W, household="ori_hid", pram=out.details["pram_diagonal_by_stratum"]
    )
    assert p.history[-1].measures["global_risk"] == pytest.approx(adjusted.global_risk, rel=1e-12)
    assert adjusted.global_risk < plain.global_risk
