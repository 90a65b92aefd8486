"""Individual, global and household risk (spec B) against sdcMicro reference outputs, the spec's
worked examples, an independent high-precision oracle, and the command line."""

from __future__ import annotations

import json
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import DATA, S002_KEYS, reference_cases, s002_table
from sdckit import SdcError, SdcWarning
from sdckit._core.individual import (
    APPROX_MAX_RELATIVE_EXCESS,
    approx_risk,
    exact_risk,
    household_risk,
    individual_risk_values,
    risk_threshold,
)
from sdckit.cli import main

MEASURE_CASES = reference_cases("measure_risk.json")
INDIV_CASES = reference_cases("indivRisk.json")
FRANC_KEYS = ["Key1", "Key2", "Key3", "Key4"]
RTOL = 1e-9


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------
def _francdat(with_na: bool = False) -> pl.DataFrame:
    d = pl.read_csv(DATA / "sdcmicro" / "francdat.csv")
    if with_na:
        # the R call: x[3, 5] <- NA; x[4, 2] <- x[4, 4] <- NA; x[5, 6] <- NA; x[6, 2] <- NA
        # (1-based rows; columns 2, 4, 5, 6 are Key1, Key2, Key3, Key4)
        cells = {"Key3": [2], "Key1": [3, 5], "Key2": [3], "Key4": [4]}
        cols = []
        for name, rows in cells.items():
            mask = np.zeros(d.height, bool)
            mask[rows] = True
            cols.append(pl.when(pl.Series(mask)).then(None).otherwise(pl.col(name)).alias(name))
        d = d.with_columns(cols)
    return d


def _case(case_id: str, cases) -> dict:
    for c in cases:
        if c["id"] == case_id:
            return c
    raise AssertionError(f"reference case {case_id} is missing from the reference files")


def oracle_risk(f: int, p: float) -> float:
    """Independent oracle for integer f: the alternating closed form of spec B.2.1,

    r = (p/q)^f [ sum_{j=0}^{f-2} (-1)^j C(f-1, j) (p^{-(f-1-j)} - 1)/(f-1-j) + (-1)^f log p ],

    the binomial sum in exact rational arithmetic and the logarithm in Decimal with enough digits
    to absorb the catastrophic cancellation (terms up to p^{-(f-1)}, result ~ (q/p)^f smaller)."""
    P = Fraction(p)  # the double exactly
    Q = 1 - P
    if Q == 0:
        return 1.0 / f
    digits = int(60 + f * (abs(math.log10(p)) + abs(math.log10(float(Q))) + 1))
    s = Fraction(0)
    for j in range(f - 1):
        e = f - 1 - j
        s += (-1) ** j * math.comb(f - 1, j) * (1 / P**e - 1) / e
    with localcontext() as ctx:
        ctx.prec = digits
        logp = Decimal(P.numerator).ln() - Decimal(P.denominator).ln()
        inner = Decimal(s.numerator) / Decimal(s.denominator) + (-1) ** f * logp
        ratio = (Decimal(P.numerator) * Decimal(Q.denominator)) / (Decimal(P.denominator) * Decimal(Q.numerator))
        return float(ratio**f * inner)


def quad_risk(f: float, p: float) -> float:
    """Independent oracle for any real f >= 1: adaptive quadrature (QUADPACK) of the first
    integral of spec B.2.1 written with t = 1 - x,

    r = int_0^1 p^f (1 - t)^(f-1) / (p + q t)^f dt,

    on the pieces [0, p/10], [p/10, p], [p, 10p], ... (the integrand changes on the scale p near
    t = 0), each to 1e-13 relative."""
    import warnings as _w

    from scipy.integrate import IntegrationWarning, quad

    q = 1.0 - p

    def g(t):
        if t >= 1.0:
            return p**f if f == 1 else 0.0
        return math.exp(f * math.log(p) + (f - 1) * math.log1p(-t) - f * math.log(p + q * t))

    cuts = [0.0] + [x for x in (p * 10.0**k for k in range(-1, 40)) if x < 1] + [1.0]
    total = 0.0
    with _w.catch_warnings():
        _w.simplefilter("ignore", IntegrationWarning)
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            total += quad(g, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
    return total


# ---------------------------------------------------------------------------------------------
# sdcMicro reference cases
# ---------------------------------------------------------------------------------------------
def test_reference_cases_present():
    assert len(MEASURE_CASES) >= 4 and len(INDIV_CASES) >= 4


@pytest.mark.parametrize("case_id", ["createSdcObj_francdat", "measure_risk_francdat", "measure_risk_francdat_NA"])
def test_measure_risk_reference(case_id):
    """sdcMicro 5.8.1 measure_risk / createSdcObj (reference/sdcmicro/measure_risk.json): risk, fk,
    Fk to 1e-9 relative; global ER, rate, percent and threshold (max_global_risk 0.01) to 1e-9;
    the print-method counts exactly."""
    case = _case(case_id, MEASURE_CASES)
    res = sdckit.individual_risk(_francdat("NA" in case_id), FRANC_KEYS, weight="w")
    out = case["outputs"]
    ind = out["individual"]
    np.testing.assert_allclose(res.risk, ind["risk"], rtol=RTOL, atol=0)
    np.testing.assert_allclose(res.fk, ind["fk"], rtol=RTOL, atol=0)
    np.testing.assert_allclose(res.Fk, ind["Fk"], rtol=RTOL, atol=0)
    g = out["global"]
    er = g.get("global_risk_ER", g.get("risk_ER"))
    rate = g.get("global_risk", g.get("risk"))
    pct = g.get("global_risk_pct", g.get("risk_pct"))
    thr = g.get("global_threshold", g.get("threshold"))
    assert res.expected_reidentifications == pytest.approx(er, rel=RTOL)
    assert res.global_risk == pytest.approx(rate, rel=RTOL)
    assert 100 * res.to_dict()["global_risk"] == pytest.approx(pct, rel=RTOL)
    t = res.threshold(g.get("max_global_risk", g.get("max_risk")))
    assert t.threshold == pytest.approx(thr, rel=RTOL, abs=0)
    s = out["summary"]
    assert res.n == s["n_records"]
    assert res.n_sample_uniques == s["n_sample_uniques"]
    assert int(np.count_nonzero(res.fk == 2)) == s["n_fk2"]
    assert int(np.count_nonzero(res.fk < 3)) == s["n_fk_lt3"]
    assert res.to_dict()["risk_distribution"]["max"] == pytest.approx(s["max_risk"], rel=RTOL)
    assert res.n_above(0.1) == s["n_risk_gt_0.1"]


def test_measure_risk_reference_alpha_half_deliberate_difference():
    """measure_risk_francdat_NA_alpha_0.5: f_k, F_k and the risk of every integer f_k match sdcMicro
    to 1e-9; fractional f_k differ on purpose (spec B.2.2, K.6): sdcMicro gives 0 for f in (1, 2)
    and the f > 2 approximation for f = 2.5, sdckit the exact value (checked against quadrature).
    Putting sdcMicro's values back in place of ours reproduces its ER to 1e-9."""
    case = _case("measure_risk_francdat_NA_alpha_0.5", MEASURE_CASES)
    res = sdckit.individual_risk(_francdat(True), FRANC_KEYS, weight="w", estimation={"alpha": 0.5})
    ind = case["outputs"]["individual"]
    ref_r = np.array(ind["risk"])
    np.testing.assert_allclose(res.fk, ind["fk"], rtol=RTOL)
    np.testing.assert_allclose(res.Fk, ind["Fk"], rtol=RTOL)
    frac = res.fk != np.round(res.fk)
    assert frac.sum() == 6 and res.n_fractional == 6
    np.testing.assert_allclose(res.risk[~frac], ref_r[~frac], rtol=RTOL)
    # f = 1.5: sdcMicro 0 (bug); ours the exact integral
    low = frac & (res.fk < 2)
    assert np.all(ref_r[low] == 0)
    for i in np.flatnonzero(frac):
        assert res.risk[i] == pytest.approx(quad_risk(res.fk[i], res.fk[i] / res.Fk[i]), rel=1e-10)
        assert res.risk[i] > 0
    # f = 2.5: sdcMicro's p/(f-1+p) overstates the exact value slightly
    high = frac & (res.fk > 2)
    assert np.all(res.risk[high] < ref_r[high]) and np.all(res.risk[high] > 0.97 * ref_r[high])
    mixed = np.where(frac, ref_r, res.risk)
    er = case["outputs"]["global"]["risk_ER"]
    assert float(mixed.sum()) == pytest.approx(er, rel=RTOL)
    assert res.expected_reidentifications > er
    # sdcMicro calls the file safe at 0.01 (threshold NA, ER 0.041 < 0.08) only because record 7
    # (f = 1.5, F = 13.5) gets risk 0; its exact risk is 0.1412 and ER = 0.2288 > 0.08. Threshold:
    # at level 0.03695 the capped sum is 0.0876 + 0.0369 = 0.1245 >= 0.08; at 0.012504 (the f = 2.5
    # records) it is 0.0506 + 2 * 0.0125 = 0.0756 < 0.08 -> r* = 0.012504
    assert res.risk[6] == pytest.approx(0.14119753, abs=1e-8)
    assert res.expected_reidentifications == pytest.approx(0.22876806, abs=1e-8)
    t = res.threshold(0.01)
    assert t.threshold == res.risk[0] and t.threshold == pytest.approx(0.012504, abs=1e-6)
    np.testing.assert_array_equal(t.indices, [1, 6])
    assert "fractional f_k" in str(res.summary())


@pytest.mark.parametrize(
    "case_id, method", [("indivRisk_francdat_approx", "approx"), ("indivRisk_francdat_exact", "exact")]
)
def test_indivrisk_reference(case_id, method):
    """sdcMicro indivRisk(freqCalc(francdat, keys, w)) with method approx / exact: rk to 1e-9."""
    case = _case(case_id, INDIV_CASES)
    res = sdckit.individual_risk(_francdat(), FRANC_KEYS, weight="w", estimation={"method": method})
    np.testing.assert_allclose(res.risk, case["outputs"]["rk"], rtol=RTOL, atol=0)
    np.testing.assert_allclose(res.fk, case["outputs"]["fk"], rtol=RTOL)


def test_indivrisk_reference_population():
    """sdcMicro indivRisk(survey = FALSE): rk = 1/fk; sdckit without weights."""
    case = _case("indivRisk_francdat_population", INDIV_CASES)
    res = sdckit.individual_risk(_francdat(), FRANC_KEYS)
    np.testing.assert_allclose(res.risk, case["outputs"]["rk"], rtol=RTOL, atol=0)


def test_indivrisk_reference_grid():
    """sdcMicro indivRisk on the (fk, Fk) grid (fk 1..10, Fk 1..1000), both methods, to 1e-9."""
    case = _case("indivRisk_grid", INDIV_CASES)
    o = case["outputs"]
    f, F = np.array(o["fk"], float), np.array(o["Fk"], float)
    ra, _ = individual_risk_values(f, F, "approx")
    re, _ = individual_risk_values(f, F, "exact")
    np.testing.assert_allclose(ra, o["rk_approx"], rtol=RTOL, atol=0)
    np.testing.assert_allclose(re, o["rk_exact"], rtol=RTOL, atol=0)


# ---------------------------------------------------------------------------------------------
# spec worked examples (S002 reference table, spec B.2-B.5, section I)
# ---------------------------------------------------------------------------------------------
S002_RISK = [
    0.0054245199,
    0.0054245199,
    0.0250964394,
    0.0125634252,
    0.0282472793,
    0.0125634252,
    0.0290109321,
    0.0250964394,
    0.0074038345,
    0.0074038345,
]


def test_s002_risk_column(s002):
    """Spec B.2 example (S002 table 4.1 'risk' column, 10 digits) and B.2.4: without weights 1/f."""
    res = sdckit.individual_risk(s002, S002_KEYS, weight="w")
    np.testing.assert_allclose(res.risk, S002_RISK, rtol=0, atol=6e-11)
    np.testing.assert_array_equal(
        np.round(res.risk, 4), [0.0054, 0.0054, 0.0251, 0.0126, 0.0282, 0.0126, 0.0290, 0.0251, 0.0074, 0.0074]
    )
    census = sdckit.individual_risk(s002, S002_KEYS)
    np.testing.assert_array_equal(census.risk, [0.5, 0.5, 1, 0.5, 1, 0.5, 1, 1, 0.5, 0.5])
    assert census.expected_reidentifications == 7 and census.global_risk == 0.7  # spec B.3 unweighted


def test_s002_global_risk(s002):
    """Spec B.3 / section I: ER = 0.1582346494, xi = 0.0158234649 (S002 prints 0.01582); no
    record above 0.05; 4 sample uniques."""
    res = sdckit.individual_risk(s002, S002_KEYS, weight="w")
    assert res.expected_reidentifications == pytest.approx(0.1582346494, abs=1e-10)
    assert res.global_risk == pytest.approx(0.0158234649, abs=1e-10)
    assert round(res.global_risk, 5) == 0.01582
    assert res.n_above(0.05) == 0
    assert res.n_sample_uniques == 4
    d = res.to_dict()
    assert 100 * d["global_risk"] == pytest.approx(1.58234649, abs=1e-8)
    assert d["household_global_risk"] is None


@pytest.mark.parametrize(
    "xi, expected, unsafe",
    [
        # capping at 0.0125634 gives 0.05078 + 4 * 0.012563 = 0.10103 >= 0.1 (ER* = 0.01 * 10), capping at
        # 0.0074038 gives 0.02565 + 6 * 0.0074038 = 0.07007 < 0.1: r* = 0.0074038, 6 records above it
        (0.01, 0.0074038345, [3, 4, 5, 6, 7, 8]),
        (0.015, 0.0125634252, [3, 5, 7, 8]),
        (0.005, 0.0, list(range(1, 11))),
        (0.02, None, []),  # ER 0.158 < 0.2: already safe
    ],
)
def test_s002_threshold(s002, xi, expected, unsafe):
    """Spec B.4 example: r* for xi* = 0.01 / 0.015 / 0.005 / 0.02, records with r > r* unsafe.

    (The spec's "8 unsafe records" for xi* = 0.01 counts r >= r*; its own rule, "records with
    r_i > r* are unsafe", and its arithmetic, which caps 6 records, give the 6 records here.)"""
    t = sdckit.individual_risk(s002, S002_KEYS, weight="w").threshold(xi)
    if expected is None:
        assert t.threshold is None and t.safe
    else:
        assert t.threshold == pytest.approx(expected, abs=1e-10)
        assert not t.safe
    np.testing.assert_array_equal(t.indices + 1, unsafe)
    assert t.n_unsafe == len(unsafe)
    if expected:
        assert t.expected_reidentifications_capped < xi * 10
    d = t.to_dict()
    json.dumps(d)
    assert d["threshold"] == t.threshold and d["n_unsafe"] == len(unsafe)


def _s002_households() -> pl.DataFrame:
    return s002_table().with_columns(pl.Series("hh", [1, 1, 1, 2, 2, 2, 3, 3, 4, 4]))


def test_s002_household_risk():
    """Spec B.5 example 2: households {1,2,3},{4,5,6},{7,8},{9,10}: r^h = 0.0356445200,
    0.0525109834, 0.0533793004, 0.0147528522; ER^h = 0.4007308156, xi^h = 0.0400730816."""
    res = sdckit.individual_risk(_s002_households(), S002_KEYS, weight="w", household="hh")
    rh = [0.0356445200] * 3 + [0.0525109834] * 3 + [0.0533793004] * 2 + [0.0147528522] * 2
    np.testing.assert_allclose(res.household_risk, rh, rtol=0, atol=6e-11)
    assert res.household_expected_reidentifications == pytest.approx(0.4007308156, abs=1e-10)
    assert res.household_global_risk == pytest.approx(0.0400730816, abs=1e-10)
    assert res.n_households == 4
    assert list(res.to_frame().columns) == ["risk", "fk", "Fk", "household_risk"]


def test_s002_household_threshold_rule():
    """Spec B.5 example 2: r^h* = 0.05 gives delta = 0.016667 (size 3) and 0.025 (size 2);
    unsafe records 3 (0.0251), 5 (0.0282), 7 (0.0290), 8 (0.0251 >= 0.025)."""
    res = sdckit.individual_risk(_s002_households(), S002_KEYS, weight="w", household="hh")
    t = res.threshold(0.01, household_risk=0.05)
    np.testing.assert_allclose(t.household_delta, [0.05 / 3] * 6 + [0.025] * 4)
    np.testing.assert_array_equal(np.flatnonzero(t.household_unsafe) + 1, [3, 5, 7, 8])
    assert t.household_threshold == 0.05 and t.household_threshold_given
    # derived from the target instead: the B.4 rule on the household risks (each record carries its
    # household's risk). Levels 0.05338 (2 records), 0.05251 (3), 0.03564 (3), 0.01475 (2); target
    # 0.04 * 10 = 0.4: at 0.05251: 0.2640 + 2 * 0.05251 = 0.3690 < 0.4 -> r^h* = 0.0525109834
    t2 = res.threshold(0.04)
    assert t2.household_threshold == pytest.approx(0.0525109834, abs=1e-10)
    assert not t2.household_threshold_given
    # xi^h = 0.0401 < 0.05: the household rate meets the target, nothing is flagged
    t3 = res.threshold(0.05)
    assert t3.household_threshold is None and t3.n_household_unsafe == 0
    frame = t.to_frame()
    assert list(frame.columns) == ["risk", "unsafe", "household_delta", "household_unsafe"]


def test_s002_household_example_0078():
    """Spec B.5 example 1 / section I: members with risks 0.02, 0.03, 0.03:
    r^h = 1 - 0.98 * 0.97 * 0.97 = 0.077918 (S002 prints 0.078)."""
    rg, size = household_risk(np.array([0.02, 0.03, 0.03]), np.array([0, 0, 0]), 1)
    assert rg[0] == pytest.approx(1 - 0.98 * 0.97 * 0.97, rel=1e-14)
    assert round(rg[0], 3) == 0.078 and size[0] == 3


def test_household_risk_against_groupby():
    """Household risk through the public function equals a direct group-by product on testdata
    (4580 records, 1000 households of 1-12 persons)."""
    d = pl.read_csv(DATA / "sdcmicro" / "testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    res = sdckit.individual_risk(d, keys, weight="sampling_weight", household="ori_hid")
    frame = d.select("ori_hid").with_columns(pl.Series("r", res.risk))
    prod = frame.group_by("ori_hid").agg((1 - (1 - pl.col("r")).product()).alias("rh"))
    expected = frame.join(prod, on="ori_hid", how="left")["rh"].to_numpy()
    np.testing.assert_allclose(res.household_risk, expected, rtol=1e-12)
    assert res.n_households == 1000
    assert res.household_expected_reidentifications == pytest.approx(expected.sum(), rel=1e-12)
    assert np.all(res.household_risk >= res.risk - 1e-15)


# ---------------------------------------------------------------------------------------------
# the formulas: exact kernel against independent oracles, spec B.2.3
# ---------------------------------------------------------------------------------------------
def test_spec_b23_exact_vs_approx():
    """Spec B.2.3: (f, F) = (3, 300): 0.0049532208 vs 0.0049751244; (5, 50): 0.0242350012 vs
    0.0243902439; (10, 1000): 0.0011097262 vs 0.0011098779; (20, 40): 0.0256242226 vs 0.0256410256."""
    f = np.array([3, 5, 10, 20], float)
    F = np.array([300, 50, 1000, 40], float)
    ex, _ = individual_risk_values(f, F, "exact")
    ap, _ = individual_risk_values(f, F, "approx")
    np.testing.assert_allclose(ex, [0.0049532208, 0.0242350012, 0.0011097262, 0.0256242226], atol=6e-11, rtol=0)
    np.testing.assert_allclose(ap, [0.0049751244, 0.0243902439, 0.0011098779, 0.0256410256], atol=6e-11, rtol=0)


ORACLE_F = [1, 2, 3, 4, 7, 20, 50, 128, 129, 170]
ORACLE_P = [1e-12, 1e-6, 1e-3, 0.02, 0.2, 0.39, 0.41, 0.5, 0.8, 0.999, 1 - 1e-9]


@pytest.mark.parametrize("f", ORACLE_F)
def test_exact_against_rational_oracle(f):
    """Exact risk for integer f (closed forms, recursion, series and quadrature branches) against
    the alternating sum in exact rational / high-precision decimal arithmetic: 1e-13 relative,
    including large f, p near 0 and p near 1 (where the double-precision alternating sum fails)."""
    p = np.array(ORACLE_P)
    got = exact_risk(np.full(p.size, float(f)), p)
    want = [oracle_risk(f, float(x)) for x in p]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("f", [1.0001, 1.25, 1.5, 1.999, 2.5, 3.3, 10.5, 150.5, 2000.25])
def test_exact_fractional_against_quadrature(f):
    """Fractional f (alpha < 1): exact risk against adaptive QUADPACK quadrature of the integral of
    spec B.2.1 (an independent method), 1e-10 relative, for p from 1e-9 to 1 - 1e-6."""
    for p in [1e-9, 1e-4, 0.01, 0.1, 0.3, 0.45, 0.7, 0.95, 1 - 1e-6]:
        assert exact_risk(f, p)[()] == pytest.approx(quad_risk(f, p), rel=1e-10), (f, p)


def test_exact_special_values():
    """r(f, 1) = 1/f (F = f: sdcMicro's special case); f = 1 and f = 2 closed forms of spec B.2.2;
    as p -> 0, r ~ p/(f-1) for f >= 2 and ~ p log(1/p) for f = 1."""
    f = np.array([1.0, 2, 3, 7.5, 1000])
    np.testing.assert_allclose(exact_risk(f, np.ones(5)), 1 / f, rtol=1e-15)
    p = np.array([1e-3, 0.3])
    np.testing.assert_allclose(exact_risk(1.0, p), p / (1 - p) * np.log(1 / p), rtol=1e-14)
    s = p / (1 - p)
    np.testing.assert_allclose(exact_risk(2.0, p), s - s * s * np.log(1 / p), rtol=1e-13)
    assert exact_risk(5.0, 1e-13)[()] == pytest.approx(1e-13 / 4, rel=1e-12)


def test_approximation_bound_constant():
    """The documented tolerance between the methods: approx >= exact, relative excess at most
    APPROX_MAX_RELATIVE_EXCESS (0.0404, at f = 3, p ~ 0.317) and below 0.37/f^2; a dense scan."""
    p = np.linspace(0.005, 0.995, 199)
    worst = 0.0
    for f in [3, 4, 5, 6, 8, 10, 15, 30, 100]:
        ff = np.full(p.size, float(f))
        ex, ap = exact_risk(ff, p), approx_risk(ff, p)
        rel = (ap - ex) / ex
        assert rel.min() > -1e-13
        assert rel.max() < 0.37 / f**2
        worst = max(worst, rel.max())
    assert 0.0400 < worst <= APPROX_MAX_RELATIVE_EXCESS


def test_approx_method_branches():
    """approx: f = 1, 2 exact closed forms, integer f > 2 -> p/(f-1+p), fractional f -> exact,
    f within 1e-9 of an integer counts as that integer (alpha * count rounding)."""
    f = np.array([1, 2, 3, 3 * (1 + 1e-12), 2.5, 4])
    F = np.array([10, 10, 30, 30, 25, 4])
    r, clamped = individual_risk_values(f, F, "approx")
    assert not clamped.any()
    assert r[0] == pytest.approx(0.1 / 0.9 * math.log(10), rel=1e-14)
    assert r[1] == pytest.approx(oracle_risk(2, 0.2), rel=1e-13)
    assert r[2] == pytest.approx(0.1 / (2 + 0.1), rel=1e-15)
    assert r[3] == r[2]
    assert r[4] == pytest.approx(quad_risk(2.5, 0.1), rel=1e-10)
    assert r[5] == 0.25  # F = f: 1/f


# ---------------------------------------------------------------------------------------------
# threshold rule against a literal translation of sdcMicro's measure_threshold
# ---------------------------------------------------------------------------------------------
def sdcmicro_threshold(risk, max_global_risk):
    """Record-by-record translation of sdcMicro's C routine measure_threshold (sorted decreasingly)
    plus the R wrapper's NA rule."""
    r = sorted(risk, reverse=True)
    er = max_global_risk * len(r)
    sum_risk = sum(r)
    current = r[0]
    if sum_risk < er:
        return None
    threshold, cnt = 0.0, 0
    for x in r:
        if x != current:
            if sum_risk + x * cnt < er:
                threshold = x
                break
            current = x
        cnt += 1
        sum_risk -= x
    return threshold


def test_threshold_matches_sdcmicro_loop():
    """risk_threshold on distinct levels equals the record loop on random risks with many ties."""
    rng = np.random.default_rng(7)
    for trial in range(300):
        n = int(rng.integers(1, 60))
        levels = rng.random(int(rng.integers(1, 8))) ** 3
        r = rng.choice(levels, size=n)
        xi = float(rng.choice([0.001, 0.01, 0.05, 0.1, 0.3, 0.6]))
        want = sdcmicro_threshold(r.tolist(), xi)
        got = risk_threshold(r, np.ones(n), xi)
        if want is None:
            assert got is None
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=0), (trial, r, xi)
            # r* is the first level at which the capped sum is below the target
            assert got == 0.0 or np.minimum(r, got).sum() < xi * n


# ---------------------------------------------------------------------------------------------
# strata, households, bad input
# ---------------------------------------------------------------------------------------------
def test_strata_equal_separate_runs():
    """strata=: frequencies and risks within strata equal running each stratum on its own
    (missing key values included, alpha < 1, a record missing every key)."""
    d = _francdat(True).with_columns(pl.Series("st", ["a", "a", "b", "a", "b", "b", "a", "b"]))
    d = d.with_columns(
        pl.when(pl.int_range(pl.len()) == 6).then(None).otherwise(pl.col(k)).alias(k) for k in FRANC_KEYS
    )
    for alpha in (1.0, 0.5, 0.0):
        res = sdckit.individual_risk(d, FRANC_KEYS, weight="w", strata="st", estimation={"alpha": alpha})
        for st in ("a", "b"):
            idx = np.flatnonzero(d["st"].to_numpy() == st)
            sub = sdckit.individual_risk(
                d[idx], FRANC_KEYS, weight="w", allow_degenerate_keys=True, estimation={"alpha": alpha}
            )
            np.testing.assert_allclose(res.fk[idx], sub.fk, rtol=1e-12)
            np.testing.assert_allclose(res.Fk[idx], sub.Fk, rtol=1e-12)
            np.testing.assert_allclose(res.risk[idx], sub.risk, rtol=1e-12)
    assert res.strata == ("st",) and "strata" in str(res.summary())


def test_strata_missing_is_an_error():
    d = s002_table().with_columns(pl.Series("st", ["x", None, "y", "y", "x", "x", "y", "y", "x", "x"]))
    with pytest.raises(SdcError, match="strata: column st is missing for 1 record"):
        sdckit.individual_risk(d, S002_KEYS, weight="w", strata="st")


def test_weights_below_one_clamped_with_warning():
    """Spec 0.4: F_k < f_k (weights < 1) -> p clamped to 1, risk 1/f_k, SdcWarning."""
    d = s002_table().with_columns(pl.Series("w", [0.5, 0.5, 215, 76, 186, 76, 180, 215, 186, 76]))
    with pytest.warns(SdcWarning, match="F_k < f_k for 2 record"):
        res = sdckit.individual_risk(d, S002_KEYS, weight="w")
    assert res.risk[0] == res.risk[1] == 0.5  # f = 2, F = 1 -> 1/2
    assert res.n_clamped == 2
    np.testing.assert_allclose(res.risk[2:], S002_RISK[2:], atol=6e-11)
    assert "clamped" in str(res.summary())


@pytest.mark.parametrize(
    "w, fragment", [([0.0] + [1.0] * 9, "zero"), ([-1.0] + [1.0] * 9, "negative"), ([None] + [1.0] * 9, "missing")]
)
def test_bad_weights(w, fragment):
    d = s002_table().with_columns(pl.Series("w", w, dtype=pl.Float64))
    with pytest.raises(SdcError, match=f"weight: column w .*{fragment}"):
        sdckit.individual_risk(d, S002_KEYS, weight="w")


def test_missing_household_ids_form_own_households():
    """Spec B.5: a record without a household id is its own household (SdcWarning)."""
    d = _s002_households().with_columns(pl.Series("hh", [1, 1, None, 2, 2, 2, 3, 3, 4, None]))
    with pytest.warns(SdcWarning, match="hh is missing for 2 record"):
        res = sdckit.individual_risk(d, S002_KEYS, weight="w", household="hh")
    assert res.n_households == 6 and res.n_missing_household == 2
    assert res.household_risk[2] == pytest.approx(res.risk[2], rel=1e-14)
    assert res.household_risk[9] == pytest.approx(res.risk[9], rel=1e-14)
    assert res.household_risk[0] == pytest.approx(1 - (1 - res.risk[0]) * (1 - res.risk[1]), rel=1e-14)
    assert "own household" in str(res.summary())
    # NaN in a float id column is missing too
    d2 = d.with_columns(pl.col("hh").cast(pl.Float64).fill_null(float("nan")))
    with pytest.warns(SdcWarning):
        res2 = sdckit.individual_risk(d2, S002_KEYS, weight="w", household="hh")
    np.testing.assert_allclose(res2.household_risk, res.household_risk)


def test_household_role_conflicts_and_missing_column():
    d = _s002_households()
    with pytest.raises(sdckit.MissingColumnError, match="nothere"):
        sdckit.individual_risk(d, S002_KEYS, weight="w", household="nothere")
    with pytest.raises(SdcError, match="also used as"):
        sdckit.individual_risk(d, S002_KEYS, weight="w", household="Gender")
    d2 = d.with_columns(pl.Series("hh", [1, None, 1, 2, 2, 2, 3, 3, 4, 4]))
    with pytest.raises(SdcError, match="household: column Gender2 is also used as keys"):
        sdckit.individual_risk(
            d2.with_columns(pl.col("hh").alias("Gender2")), S002_KEYS + ["Gender2"], weight="w", household="Gender2"
        )
    with pytest.raises(SdcError, match="household: got list of 2 columns; expected a single column name"):
        sdckit.individual_risk(d, S002_KEYS, household=["hh", "w"])


def test_household_keys_must_agree():
    """A household whose members disagree on a household-level key is an error naming the column,
    the number of households and an example."""
    d = _s002_households()  # household 1 = records 1-3, Residence all Urban; household 2 mixes Urban/Rural
    with pytest.raises(SdcError) as info:
        sdckit.individual_risk(d, S002_KEYS, weight="w", household="hh", household_keys=["Residence"])
    msg = str(info.value)
    assert msg.startswith("household_keys: column Residence takes more than one value within 1 household(s)")
    assert "1 household(s)" in msg
    assert "Urban" not in msg and "Rural" not in msg  # labels and ids are record values: never in a message
    # consistent keys pass; a missing value inside a household is allowed
    d2 = d.with_columns(pl.Series("Residence", ["Urban"] * 3 + [None, "Rural", "Rural"] + ["Urban"] * 4))
    res = sdckit.individual_risk(
        d2, S002_KEYS, weight="w", household="hh", household_keys="Residence", allow_degenerate_keys=True
    )
    assert res.n_households == 4
    with pytest.raises(SdcError, match="household_keys: Health not among the key variables"):
        sdckit.individual_risk(d, S002_KEYS, household="hh", household_keys=["Health"])
    with pytest.raises(SdcError, match="household_keys: no household column"):
        sdckit.individual_risk(d, S002_KEYS, household_keys=["Residence"])


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"method": "simulate"}, "estimation.method: got 'simulate'"),
        ({"alpha": 1.5}, "estimation.alpha: got 1.5"),
        ({"na_rule": "x"}, "estimation.na_rule: got 'x'"),
    ],
)
def test_bad_parameters(kwargs, fragment):
    with pytest.raises(SdcError, match=fragment):
        sdckit.individual_risk(s002_table(), S002_KEYS, weight="w", estimation=kwargs)


@pytest.mark.parametrize("xi", [0, 1, -0.1, 1.5, "x", True, float("nan")])
def test_bad_max_global_risk(xi):
    res = sdckit.individual_risk(s002_table(), S002_KEYS, weight="w")
    with pytest.raises(SdcError, match="max_global_risk: got"):
        res.threshold(xi)


def test_bad_household_threshold():
    res = sdckit.individual_risk(s002_table(), S002_KEYS, weight="w")
    with pytest.raises(SdcError, match="household_risk: no household column"):
        res.threshold(0.01, household_risk=0.05)
    res2 = sdckit.individual_risk(_s002_households(), S002_KEYS, weight="w", household="hh")
    with pytest.raises(SdcError, match="household_risk: got 2"):
        res2.threshold(0.01, household_risk=2)


def test_missing_keys_and_unknown_columns():
    with pytest.raises(sdckit.MissingColumnError, match="Age"):
        sdckit.individual_risk(s002_table(), S002_KEYS + ["Age"], weight="w")


def test_input_not_mutated_and_backends():
    pd = pytest.importorskip("pandas")
    d = _s002_households()
    pdf = d.to_pandas()
    before = pdf.copy()
    res = sdckit.individual_risk(pdf, S002_KEYS, weight="w", household="hh")
    pd.testing.assert_frame_equal(pdf, before)
    out = res.to_frame()
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["risk", "fk", "Fk", "household_risk"]
    assert isinstance(res.threshold().to_frame(), pd.DataFrame)
    np.testing.assert_allclose(out["risk"].to_numpy(), S002_RISK, atol=6e-11)


def test_summary_and_dict_are_aggregates():
    res = sdckit.individual_risk(_s002_households(), S002_KEYS, weight="w", household="hh")
    d = res.to_dict()
    text = json.dumps(d)
    assert "Urban" not in text
    for key in (
        "n",
        "n_sample_uniques",
        "expected_reidentifications",
        "global_risk",
        "household_expected_reidentifications",
        "household_global_risk",
    ):
        assert key in d
    assert d["risk_distribution"]["max"] == pytest.approx(0.0290109321, abs=1e-10)
    assert d["n_above"] == {"0.01": 6, "0.05": 0, "0.1": 0, "0.2": 0, "0.5": 0}
    s = str(res.summary())
    for fragment in (
        "Distribution of individual risk",
        "median",
        "Records above common risk levels",
        "expected re-identifications",
        "Household risk",
        "households",
    ):
        assert fragment in s
    assert "<table>" in res.summary().to_html()
    assert "Risk threshold" in str(res.threshold())
    assert len(res) == 10 and "IndividualRiskResult" in repr(res)


def test_plot_histogram_with_threshold():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    res = sdckit.individual_risk(s002_table(), S002_KEYS, weight="w")
    ax = res.plot(max_global_risk=0.01)
    assert ax.get_xscale() == "log"
    lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(lines) == 1 and lines[0].get_xdata()[0] == pytest.approx(0.0074038345, abs=1e-10)
    assert sum(p.get_height() for p in ax.patches) == 10
    ax2 = res.threshold(0.02).plot()  # safe: no threshold line
    assert not [ln for ln in ax2.get_lines() if ln.get_linestyle() == "--"]
    plt.close("all")


def test_exact_method_through_public_function():
    """method="exact" on the S002 table: f = 1, 2 keys get the same closed forms (spec B.2.2)."""
    a = sdckit.individual_risk(s002_table(), S002_KEYS, weight="w")
    e = sdckit.individual_risk(s002_table(), S002_KEYS, weight="w", estimation={"method": "exact"})
    np.testing.assert_allclose(e.risk, a.risk, rtol=1e-13)
    assert e.method == "exact" and e.to_dict()["method"] == "exact"


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def hh_csv(tmp_path):
    path = tmp_path / "s002hh.csv"
    _s002_households().write_csv(path)
    return path


def test_cli_risk_json_and_records(hh_csv, tmp_path, capsys):
    out_json, out_rec = tmp_path / "r.json", tmp_path / "r.csv"
    code = main(
        [
            "risk",
            str(hh_csv),
            "--keys",
            ",".join(S002_KEYS),
            "--weight",
            "w",
            "--household",
            "hh",
            "--max-global-risk",
            "0.01",
            "--json",
            str(out_json),
            "--records",
            str(out_rec),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "expected re-identifications" in printed and "Risk threshold" in printed and "k-anonymity" in printed
    p = json.loads(out_json.read_text())
    # spec B.3, B.4, B.5 and A.2 examples
    assert p["n"] == 10 and p["n_sample_uniques"] == 4
    assert p["expected_reidentifications"] == pytest.approx(0.1582346494, abs=1e-10)
    assert p["global_risk"] == pytest.approx(0.0158234649, abs=1e-10)
    assert p["household_expected_reidentifications"] == pytest.approx(0.4007308156, abs=1e-10)
    assert p["household_global_risk"] == pytest.approx(0.0400730816, abs=1e-10)
    assert p["threshold"] == pytest.approx(0.0074038345, abs=1e-10)
    assert p["k_anonymity_violations"] == {"2": 4, "3": 10, "5": 10}
    assert p["k_anonymity"]["n_violations"] == {"2": 4, "3": 10, "5": 10}
    rec = pl.read_csv(out_rec)
    assert rec.columns == [
        "risk",
        "fk",
        "Fk",
        "household_risk",
        "unsafe",
        "household_unsafe",
        "violates_2",
        "violates_3",
        "violates_5",
    ]
    np.testing.assert_allclose(rec["risk"].to_numpy(), S002_RISK, atol=6e-11)
    assert rec["unsafe"].sum() == 6


def test_cli_risk_safe_file_threshold_null(hh_csv, tmp_path):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "risk",
                str(hh_csv),
                "--keys",
                ",".join(S002_KEYS),
                "--weight",
                "w",
                "--max-global-risk",
                "0.02",
                "--method",
                "exact",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    p = json.loads(out.read_text())
    assert p["threshold"] is None and p["household_global_risk"] is None and p["method"] == "exact"


def test_cli_risk_census_and_strata(hh_csv, tmp_path):
    out = tmp_path / "r.json"
    assert main(["risk", str(hh_csv), "--keys", "Gender,Education", "--strata", "Residence", "--json", str(out)]) == 0
    p = json.loads(out.read_text())
    assert p["strata"] == ["Residence"] and p["weighted"] is False


def test_cli_risk_warnings_on_stderr(tmp_path, capsys):
    path = tmp_path / "w.csv"
    s002_table().with_columns(pl.Series("w", [0.5, 0.5, 215, 76, 186, 76, 180, 215, 186, 76])).write_csv(path)
    assert main(["risk", str(path), "--keys", ",".join(S002_KEYS), "--weight", "w"]) == 0
    err = capsys.readouterr().err
    assert "sdckit: warning: weight: F_k < f_k for 2 record(s)" in err


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--keys", "Residence,Age"], "Age"),
        (["--keys", "Residence,Gender", "--max-global-risk", "1.5"], "--max-global-risk: got 1.5"),
        (["--keys", "Residence,Gender", "--alpha", "2"], "alpha"),
        (["--keys", "Residence,Gender", "--household", "hh", "--household-keys", "Residence"], "household_keys"),
        (["--keys", ","], "--keys"),
    ],
)
def test_cli_risk_bad_input_one_line(hh_csv, capsys, args, fragment):
    code = main(["risk", str(hh_csv), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("sdckit: error: ") and fragment in err
    assert err.count("\n") == 1


def test_cli_risk_bad_method(hh_csv):
    with pytest.raises(SystemExit) as info:
        main(["risk", str(hh_csv), "--keys", "Residence", "--method", "fast"])
    assert info.value.code == 2


def test_demo_includes_household_risk(tmp_path, capsys, monkeypatch):
    """sdckit demo runs frequencies, k-anonymity and the individual / household risk on the bundled
    survey (1,915 persons in 800 households)."""
    monkeypatch.chdir(tmp_path)  # the demo writes its report in the current folder
    out = tmp_path / "demo.json"
    assert main(["demo", "--json", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "Household risk" in printed
    p = json.loads(out.read_text())
    assert p["frequencies"]["n"] == 1915
    r = p["risk"]
    assert r["n"] == 1915 and r["n_households"] == 800 and r["household"] == "household"
    assert 0 < r["global_risk"] < r["household_global_risk"] < 1
    assert r["n_sample_uniques"] == p["frequencies"]["n_sample_uniques"]
    assert set(r["k_anonymity_violations"]) == {"2", "3", "5"}


def test_rounding_above_one_is_not_flagged():
    """F = f summed in a different order can exceed p = 1 by an ulp: p is set to 1 silently."""
    f = np.array([3.0, 3.0])
    F = np.array([3.0 * (1 - 1e-15), 2.0])
    r, clamped = individual_risk_values(f, F, "approx")
    np.testing.assert_array_equal(clamped, [False, True])
    np.testing.assert_allclose(r, [1 / 3, 1 / 3], rtol=1e-15)
