"""Confidence intervals for the file-level risk estimates (parametric bootstrap): the
kernels by hand, the coverage of a nominal 95 % interval over 200 samples from populations
with a known truth (individual_risk's expected re-identifications; loglinear_risk's tau_1 and
tau_2), and the results' summary and to_dict."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest

import sdckit
import sdckit._core.risk_ci as rci
from conftest import DATA
from sdckit._core import loglinear as ll

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
W = "sampling_weight"


@pytest.fixture(scope="module")
def testdata() -> pl.DataFrame:
    return pl.read_csv(TESTDATA)


# ----------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------
def test_global_risk_draws_by_hand():
    """One key with f = 1 and p = 1/2: F - 1 is geometric, P(F = j) = 2^-j, so
    E(1/F) = sum_j 2^-j / j = ln 2, and P(F >= 6) = 2^-5 = 0.031 > 0.025 > P(F >= 7) = 0.016:
    the 2.5 % quantile of 1/F is 1/6, the 97.5 % one 1 (P(F = 1) = 1/2)."""
    draws = rci.global_risk_draws([1.0], [0.5], [1.0], draws=20_000)
    assert abs(draws.mean() - math.log(2)) < 4 * draws.std() / math.sqrt(draws.size)
    assert rci.percentile_interval(draws, 0.95) == (1 / 6, 1.0)
    # p = 1 (a census, F = f): no uncertainty, sum of a / f
    d = rci.global_risk_draws([2.0, 5.0], [1.0, 1.0], [2.0, 5.0], draws=10)
    np.testing.assert_allclose(d, 2.0)


def test_global_risk_draws_mean_is_the_exact_risk():
    """The draws' mean is sum a_k E(1/F_k | f_k), the exact individual risk."""
    from sdckit._core.individual import exact_risk

    f, p, a = np.array([1.0, 2.0, 4.0]), np.array([0.2, 0.05, 0.5]), np.array([1.0, 2.0, 4.0])
    draws = rci.global_risk_draws(f, p, a, draws=40_000)
    truth = float(np.sum(a * exact_risk(f, p)))
    assert abs(draws.mean() - truth) < 4 * draws.std() / math.sqrt(draws.size)


def test_design_matrix_of_a_hierarchical_model():
    shape = (3, 4, 2)
    terms = ll.closure([(0, 1), (2,)])
    X = rci.design_matrix(shape, terms)
    assert X.shape == (24, ll.n_parameters(terms, shape)) == (24, 1 + 2 + 3 + 1 + 6)
    assert np.linalg.matrix_rank(X.toarray()) == X.shape[1]
    # cell (0, 0, 0) is the reference: intercept only; cell (2, 3, 1) has every block
    assert X[0].toarray().tolist() == [[1.0] + [0.0] * 12]
    assert X[np.ravel_multi_index((2, 3, 1), shape)].sum() == 1 + 1 + 1 + 1 + 1


def test_parameter_factor_gives_the_poisson_variance():
    """One key, saturated model: log mu_k = beta_0 + beta_k, and Var(log mu^_k) = 1 / mu_k
    (the delta method for a Poisson count)."""
    mu = np.array([4.0, 10.0, 2.5, 7.0])
    X = rci.design_matrix((4,), [(0,)])
    L = rci.parameter_factor(X, mu)
    V = X.toarray() @ L @ L.T @ X.toarray().T
    np.testing.assert_allclose(np.diag(V), 1.0 / mu, rtol=1e-10)
    # the sandwich with v = mu is the same
    L2 = rci.parameter_factor(X, mu, mu)
    np.testing.assert_allclose(L2 @ L2.T, L @ L.T, rtol=1e-8, atol=1e-12)


# ----------------------------------------------------------------------------------------------
# coverage over 200 samples from populations with a known truth
# ----------------------------------------------------------------------------------------------
REPS = 200


@pytest.fixture
def fewer_draws(monkeypatch):
    monkeypatch.setattr(rci, "DRAWS", 400)  # 200 intervals in seconds


def test_coverage_of_the_expected_reidentifications(fewer_draws):
    """A population of about 20,000 units in 600 key combinations (3 keys) whose sizes follow
    P(F) ~ 1/F on 1..200, the distribution under which the Benedetti-Franconi posterior
    F_k - f_k | f_k ~ NegBin(f_k, pi) holds; 200 Bernoulli samples with pi = 0.1 (weights 10).
    The truth of each sample: sum over its records of 1/F_k. The nominal 95 % interval covers
    it in 90-98 % of the samples."""
    rng = np.random.default_rng(11)
    sizes = np.arange(1, 201)
    F = rng.choice(sizes, size=600, p=(1 / sizes) / np.sum(1 / sizes))
    cells = np.repeat(np.arange(600), F)
    codes = np.column_stack(np.unravel_index(cells, (10, 10, 6)))
    hits = 0
    for _ in range(REPS):
        s = rng.random(cells.size) < 0.1
        c = codes[s]
        df = pl.DataFrame({"a": c[:, 0], "b": c[:, 1], "c": c[:, 2], "w": np.full(len(c), 10.0)})
        res = sdckit.individual_risk(
            df, ["a", "b", "c"], weight="w", estimation={"method": "exact"}, intervals={"ci": True}
        )
        lo, hi = res.ci["expected_reidentifications"]
        truth = float(np.sum(1.0 / F[cells[s]]))
        hits += lo <= truth <= hi
        assert res.ci["global_risk"] == pytest.approx((lo / res.n, hi / res.n), rel=1e-14)
    assert 0.90 <= hits / REPS <= 0.98, hits / REPS


def test_coverage_of_tau1_and_tau2(fewer_draws):
    """A population of about 20,000 units from a main-effects Poisson model on four keys
    (8 x 6 x 5 x 10 = 2,400 cells, skewed margins), drawn once; 200 Bernoulli samples with
    pi = 0.1. The truth of each sample: tau_1 = #{k: f_k = 1, F_k = 1}, tau_2 = sum over
    f_k = 1 of 1/F_k from the population's counts. The nominal 95 % intervals (main-effects
    model, the known fraction) cover them in 90-98 % of the samples."""
    rng = np.random.default_rng(5)
    shape = (8, 6, 5, 10)
    margins = [rng.dirichlet(np.ones(L)) for L in shape]
    K = math.prod(shape)
    F = rng.poisson(20_000 * np.einsum("a,b,c,d->abcd", *margins).reshape(-1))
    cells = np.repeat(np.arange(K), F)
    codes = np.column_stack(np.unravel_index(cells, shape))
    keys = ["k0", "k1", "k2", "k3"]
    hit1 = hit2 = 0
    for _ in range(REPS):
        s = rng.random(cells.size) < 0.1
        df = pl.DataFrame({k: codes[s][:, j] for j, k in enumerate(keys)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sdckit.loglinear_risk(df, keys, sampling_fraction=0.1, model="main", intervals={"ci": True})
        f = np.bincount(cells[s], minlength=K)
        su = f == 1
        tau1, tau2 = int(np.sum(su & (F == 1))), float(np.sum(1.0 / F[su]))
        hit1 += res.ci["tau1"][0] <= tau1 <= res.ci["tau1"][1]
        hit2 += res.ci["tau2"][0] <= tau2 <= res.ci["tau2"][1]
    assert 0.90 <= hit1 / REPS <= 0.98, hit1 / REPS
    assert 0.90 <= hit2 / REPS <= 0.98, hit2 / REPS


# ----------------------------------------------------------------------------------------------
# the results
# ----------------------------------------------------------------------------------------------
def test_individual_risk_interval_in_summary_and_dict(testdata):
    res = sdckit.individual_risk(testdata, KEYS, weight=W, intervals={"ci": True, "confidence": 0.9})
    lo, hi = res.ci["expected_reidentifications"]
    assert lo < hi and res.ci["confidence"] == 0.9 and res.ci["draws"] == rci.DRAWS
    d = res.to_dict()
    assert d["ci"]["expected_reidentifications"] == [lo, hi]
    assert d["ci"]["global_risk"] == [lo / res.n, hi / res.n]
    text = str(res.summary())
    assert "expected re-identifications, 90 % interval" in text and "global risk, 90 % interval" in text
    again = sdckit.individual_risk(testdata, KEYS, weight=W, intervals={"ci": True, "confidence": 0.9})
    assert again.ci == res.ci  # a fixed seed: the same interval
    wider = sdckit.individual_risk(testdata, KEYS, weight=W, intervals={"ci": True, "confidence": 0.99})
    assert wider.ci["expected_reidentifications"][0] <= lo and wider.ci["expected_reidentifications"][1] >= hi
    plain = sdckit.individual_risk(testdata, KEYS, weight=W)
    assert plain.ci is None and "ci" not in plain.to_dict()
    assert plain.expected_reidentifications == res.expected_reidentifications


def test_individual_risk_interval_does_not_depend_on_row_order(testdata):
    perm = np.random.default_rng(2).permutation(testdata.height)
    a = sdckit.individual_risk(testdata, KEYS, weight=W, intervals={"ci": True})
    b = sdckit.individual_risk(testdata[perm], KEYS, weight=W, intervals={"ci": True})
    assert a.ci["expected_reidentifications"] == pytest.approx(b.ci["expected_reidentifications"], rel=1e-12)


def test_census_interval_is_the_estimate(testdata):
    res = sdckit.individual_risk(testdata, KEYS, intervals={"ci": True})
    lo, hi = res.ci["expected_reidentifications"]
    assert lo == pytest.approx(res.expected_reidentifications, rel=1e-12) and hi == pytest.approx(lo, rel=1e-12)


def test_pram_adjusted_interval_is_scaled(testdata):
    """With every category kept with probability 0.5 on one key, each 1/F_k is halved, and so
    is the interval."""
    keep = sdckit.individual_risk(testdata, KEYS, weight=W, pram={"walls": 0.5}, intervals={"ci": True})
    plain = sdckit.individual_risk(testdata, KEYS, weight=W, intervals={"ci": True})
    np.testing.assert_allclose(
        keep.ci["expected_reidentifications"], np.array(plain.ci["expected_reidentifications"]) / 2, rtol=1e-12
    )


def test_loglinear_interval_in_summary_and_dict(testdata):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sdckit.loglinear_risk(testdata, KEYS[:5], weight=W, model="main", intervals={"ci": True})
    lo1, hi1 = res.ci["tau1"]
    lo2, hi2 = res.ci["tau2"]
    assert lo1 <= hi1 and lo2 < res.tau2 < hi2
    d = res.to_dict()
    assert d["ci"]["tau2"] == [lo2, hi2] and d["ci"]["method"] == "parametric bootstrap"
    n1 = res.n_sample_uniques
    assert d["ci"]["share_tau2_uniques"] == [lo2 / n1, hi2 / n1]
    text = str(res.summary())
    assert "tau_1, 95 % interval" in text and "tau_2, 95 % interval" in text


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ci": 1}, "ci"),
        ({"ci": True, "confidence": 1.0}, "confidence"),
        ({"ci": True, "confidence": 0}, "confidence"),
    ],
)
def test_bad_ci_parameters(testdata, kwargs, message):
    with pytest.raises(sdckit.SdcError, match=message):
        sdckit.individual_risk(testdata, KEYS, weight=W, intervals=kwargs)
    with pytest.raises(sdckit.SdcError, match=message):
        sdckit.loglinear_risk(testdata, KEYS[:4], weight=W, model="main", intervals=kwargs)


def test_ci_with_sdcmicro_compatibility_is_refused(testdata):
    with pytest.raises(sdckit.SdcError, match="ci: sdcMicro's modRisk has no intervals"):
        sdckit.loglinear_risk(
            testdata, KEYS[:4], weight=W, model="main", fit={"compat": "sdcMicro"}, intervals={"ci": True}
        )


def test_the_assessment_shows_the_interval_of_the_global_risk():
    """Wherever the report shows the global risk it shows its 95 % interval: the same as
    individual_risk(ci=True) gives; without weights (the file is the population) none."""
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    ex = load_example()
    keys = list(EXAMPLE_KEYS)
    sc = sdckit.Scenario(keys=keys, weight="weight", household="household")
    res = sdckit.assess(ex, sc, progress=False)
    direct = sdckit.individual_risk(ex, keys, weight="weight", household="household", intervals={"ci": True})
    ci = res.original.categorical_risk["ci"]
    assert ci["global_risk"] == pytest.approx(direct.ci["global_risk"])
    lo, hi = ci["global_risk"]
    assert lo < res.original.categorical_risk["global_risk"] < hi
    assert "global risk, 95 % interval" in res.to_html() and "global risk, 95 % interval" in str(res.summary())
    bare = sdckit.assess(ex, sdckit.Scenario(keys=keys), progress=False)
    assert bare.original.categorical_risk["ci"] is None
    assert "global risk, 95 % interval" not in bare.to_html()


def test_the_assessment_leaves_the_interval_out_above_its_pattern_limit(monkeypatch):
    """The interval is drawn per key pattern: above CI_MAX_PATTERNS the report says it was left
    out and how to get it, instead of spending minutes on a file of a million records."""
    from sdckit.assessment import measures
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    monkeypatch.setattr(measures, "CI_MAX_PATTERNS", 10)
    ex = load_example()
    sc = sdckit.Scenario(keys=list(EXAMPLE_KEYS), weight="weight")
    res = sdckit.assess(ex, sc, progress=False)
    ci = res.original.categorical_risk["ci"]
    assert ci["skipped"].endswith("(more than 10); run sdckit.individual_risk(intervals={'ci': True})")
    assert "left out: " in res.to_html() and "left out (see the report)" in str(res.summary())
