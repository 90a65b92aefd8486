"""population_uniques: Zayatz (1991), Pitman (Hoshino 2001), SNB (Chen & Keller-McNulty 1998) and
Dankar et al.'s (2012) decision rule.

Where each expected value comes from is said next to it: a hand calculation written out in the
comment, an independent oracle (explicit sums, SciPy's distributions, another optimiser), ARX's
own unit tests (arx-deidentifier/arx, TestRiskMetrics.testDecisionRule2, adult data), or a
simulation with a known population (the measured biases are quoted in the comments).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import ROOT, shared_file
from sdckit._core import uniqueness as uq


def profile(d: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """(sizes, counts, n) of a class-size profile {i: c_i}."""
    sizes = np.array(sorted(d), dtype=np.int64)
    counts = np.array([d[i] for i in sizes], dtype=np.int64)
    return sizes, counts, int(np.dot(sizes, counts))


def records(d: dict) -> pl.DataFrame:
    """A table whose key patterns have the class-size profile {i: c_i} (one key column)."""
    labels, cls = [], 0
    for i, c in sorted(d.items()):
        for _ in range(c):
            labels += [f"class{cls}"] * i
            cls += 1
    return pl.DataFrame({"k": labels, "other": ["x"] * len(labels)})


# ---------------------------------------------------------------------------------------------
# Zayatz: by hand
def test_zayatz_by_hand():
    # Profile c_1 = 2, c_2 = 1, c_3 = 1: n = 2 + 2 + 3 = 7, u = 4; N = 14 (pi = 1/2).
    # h_j = j C(N - j, n - 1) / C(N, n), C(14, 7) = 3432:
    #   h_1 = C(13, 6) / 3432 = 1716 / 3432 = 1/2
    #   h_2 = 2 C(12, 6) / 3432 = 1848 / 3432 = 7/13
    #   h_3 = 3 C(11, 6) / 3432 = 1386 / 3432 = 21/52
    # sum_j c_j h_j = 2 (1/2) + 7/13 + 21/52 = 1 + 49/52 = 101/52
    # P(F = 1 | f = 1) = c_1 h_1 / sum = 1 / (101/52) = 52/101
    # S_1 = c_1 P N / n = 2 (52/101) 2 = 208/101
    sizes, counts, n = profile({1: 2, 2: 1, 3: 1})
    assert n == 7
    np.testing.assert_allclose(uq.hypergeometric_one(sizes, 7, 14), [1 / 2, 7 / 13, 21 / 52], rtol=1e-13)
    est = uq.zayatz(sizes, counts, 7, 14)
    assert est.converged
    assert est.parameters["p_unique"] == pytest.approx(52 / 101, rel=1e-13)
    assert est.value == pytest.approx(208 / 101, rel=1e-13)
    # the same through the public function (sampling_fraction 1/2 -> N = 14)
    res = sdckit.population_uniques(records({1: 2, 2: 1, 3: 1}), ["k"], sampling_fraction=0.5, method="zayatz")
    assert res.population_uniques == pytest.approx(208 / 101, rel=1e-13)
    assert res.chosen == "zayatz" and res.tau1 == pytest.approx(104 / 101, rel=1e-13)


def test_hypergeometric_matches_scipy():
    # oracle: scipy.stats.hypergeom.pmf(1; M = N, n = j, N = n) for an integer population
    from scipy.stats import hypergeom

    sizes = np.array([1, 2, 3, 7, 40, 500])
    for n, N in ((600, 1000), (50, 5000), (999, 1000), (1000, 1000)):
        expected = [hypergeom.pmf(1, N, j, n) for j in sizes]
        np.testing.assert_allclose(uq.hypergeometric_one(sizes, n, N), expected, rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------------------------------------
# Pitman
def _loglik_explicit(theta, alpha, d):
    """The Pitman log-likelihood as written (plain sums, no gamma functions): the oracle."""
    u, n = sum(d.values()), sum(i * c for i, c in d.items())
    ll = sum(math.log(theta + i * alpha) for i in range(1, u))
    ll -= sum(math.log(theta + i) for i in range(1, n))
    ll += sum(c * sum(math.log(k - alpha) for k in range(1, j)) for j, c in d.items() if j > 1)
    return ll


@pytest.mark.parametrize("theta, alpha", [(0.85, 0.5), (3.0, 0.1), (250.0, 0.7), (-0.2, 0.3), (5.0, 1e-9), (5.0, 0.0)])
def test_pitman_loglik_matches_explicit_sums(theta, alpha):
    # both branches: log-gamma closed form (theta / alpha <= 1e6) and term-by-term sums (alpha -> 0)
    d = {1: 4, 2: 1, 3: 2, 8: 1}
    sizes, counts, n = profile(d)
    ll, d_theta, d_alpha = uq.pitman_loglik(theta, alpha, sizes, counts, n)
    assert ll == pytest.approx(_loglik_explicit(theta, alpha, d), rel=1e-12, abs=1e-12)
    h = 1e-6  # central differences of the explicit sums for the gradient
    g_theta = (_loglik_explicit(theta + h, alpha, d) - _loglik_explicit(theta - h, alpha, d)) / (2 * h)
    assert d_theta == pytest.approx(g_theta, rel=1e-6, abs=1e-6)
    if alpha > h:
        g_alpha = (_loglik_explicit(theta, alpha + h, d) - _loglik_explicit(theta, alpha - h, d)) / (2 * h)
        assert d_alpha == pytest.approx(g_alpha, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("theta, alpha", [(0.85, 0.5), (3.0, 0.1), (250.0, 0.7), (-0.2, 0.3), (5.0, 0.0)])
def test_pitman_hessian_matches_differences_of_the_explicit_sums(theta, alpha):
    # second central differences of the explicit-sum log-likelihood (the oracle above)
    d = {1: 4, 2: 1, 3: 2, 8: 1}
    sizes, counts, n = profile(d)
    H = uq.pitman_hessian(theta, alpha, sizes, counts, n)
    ht, ha = 1e-3 * min(max(1.0, abs(theta)), theta + alpha), 1e-4  # steps on the scale of each parameter
    f = lambda t, a: _loglik_explicit(t, a, d)  # noqa: E731
    h_tt = (f(theta + ht, alpha) - 2 * f(theta, alpha) + f(theta - ht, alpha)) / ht**2
    assert H[0, 0] == pytest.approx(h_tt, rel=1e-5, abs=1e-7)
    if alpha > ha:
        h_aa = (f(theta, alpha + ha) - 2 * f(theta, alpha) + f(theta, alpha - ha)) / ha**2
        h_ta = (f(theta + ht, alpha + ha) - f(theta + ht, alpha - ha) - f(theta - ht, alpha + ha)) / (4 * ht * ha)
        h_ta += f(theta - ht, alpha - ha) / (4 * ht * ha)
        assert H[1, 1] == pytest.approx(h_aa, rel=1e-5, abs=1e-6)
        assert H[0, 1] == H[1, 0] == pytest.approx(h_ta, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("profile_dict", [{1: 4, 2: 1, 8: 1}, {1: 300, 2: 60, 3: 25, 5: 9, 12: 3, 40: 1}])
def test_pitman_estimate_does_not_depend_on_where_the_optimiser_stops(monkeypatch, profile_dict):
    # The first-order optimiser's stopping point moves with SciPy's version (its stopping rule is a
    # relative reduction of the objective). Simulate a much looser stop (ftol 1e-8, gtol 1e-5: the
    # optimum only to ~4 digits) and a start far from the default: the Newton polish must land on
    # the same root of the score, to rounding.
    import scipy.optimize

    sizes, counts, n = profile(profile_dict)
    N = 50.0 * n
    exact = uq.pitman(sizes, counts, n, N)
    assert exact.converged and exact.parameters["newton_steps"] >= 1
    _, g_t, g_a = uq.pitman_loglik(exact.parameters["theta"], exact.parameters["alpha"], sizes, counts, n)
    assert abs(g_t) < 1e-9 * n and abs(g_a) < 1e-9 * n  # the score is zero to rounding
    original = scipy.optimize.minimize

    def loose(fun, x0, **kw):
        kw["options"] = {"ftol": 1e-8, "gtol": 1e-5, "maxiter": 1000}
        return original(fun, np.asarray(x0) + np.array([0.3, -0.1]), **kw)

    monkeypatch.setattr(scipy.optimize, "minimize", loose)
    monkeypatch.setattr(uq, "_FLAT", 1e-4)  # accept the loose optimum as interior
    rough = uq.pitman(sizes, counts, n, N)
    assert rough.value == pytest.approx(exact.value, rel=1e-11)
    assert rough.parameters["alpha"] == pytest.approx(exact.parameters["alpha"], rel=1e-11)


def test_pitman_interior_maximum_by_another_optimiser():
    # Profile c_1 = 4, c_2 = 1, c_8 = 1 (n = 14, u = 6): an interior maximum. Oracle: Nelder-Mead on
    # the explicit-sum log-likelihood over (theta, alpha) directly (another optimiser, another
    # parametrisation); then S_1 = Gamma(theta + 1) / Gamma(theta + alpha) N^alpha with math.lgamma.
    from scipy.optimize import minimize

    d = {1: 4, 2: 1, 8: 1}
    sizes, counts, n = profile(d)
    N = 140.0

    def neg(x):
        th, a = x
        if not (0 < a < 1 and th > -a):
            return 1e9
        return -_loglik_explicit(th, a, d)

    ref = minimize(neg, [1.0, 0.4], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 5000})
    est = uq.pitman(sizes, counts, n, N)
    assert est.converged and "boundary" not in est.parameters
    assert est.parameters["theta"] == pytest.approx(ref.x[0], rel=1e-5)
    assert est.parameters["alpha"] == pytest.approx(ref.x[1], rel=1e-5)
    th, a = ref.x
    assert est.value == pytest.approx(math.exp(math.lgamma(th + 1) - math.lgamma(th + a)) * N**a, rel=1e-5)


def test_pitman_ewens_boundary_by_hand():
    # Profile c_1 = 3, c_2 = 2, c_3 = 1: n = 10, u = 6. The maximum lies on alpha = 0 (Ewens):
    # - theta solves d l / d theta = (u - 1)/theta - sum_{i=1}^{9} 1/(theta + i) = 0 (oracle: brentq
    #   on the explicit sum);
    # - at that theta the derivative in alpha is negative (the maximum would be at alpha < 0):
    #   d l / d alpha = sum_{i=1}^{5} i / theta - [c_2 (1) + c_3 (1 + 1/2)] = 15 / theta - 3.5 < 0;
    # - S_1 = Gamma(theta + 1) / Gamma(theta) N^0 = theta.
    from scipy.optimize import brentq

    sizes, counts, n = profile({1: 3, 2: 2, 3: 1})
    theta = brentq(lambda t: 5 / t - sum(1 / (t + i) for i in range(1, 10)), 0.1, 100.0, xtol=1e-14)
    assert 15 / theta - 3.5 < 0
    est = uq.pitman(sizes, counts, n, 100.0)
    assert est.converged and est.parameters["boundary"] == "alpha = 0" and est.parameters["alpha"] == 0.0
    assert est.value == pytest.approx(theta, rel=1e-7)
    assert est.parameters["theta"] == pytest.approx(theta, rel=1e-7)


def test_pitman_all_unique_does_not_converge_and_dankar_falls_back():
    # every class unique: the likelihood grows without bound towards alpha = 1 -> not converged
    sizes, counts, n = profile({1: 10})
    est = uq.pitman(sizes, counts, n, 200.0)
    assert not est.converged and math.isnan(est.value) and "every class" in est.note
    data = records({1: 10})
    res = sdckit.population_uniques(data, ["k"], sampling_fraction=0.05)
    assert res.chosen == "zayatz" and res.reason == "zayatz fallback: pitman did not converge"
    # Zayatz with only singletons: P(F = 1 | f = 1) = 1, S_1 = c_1 / pi = 200 = N
    assert res.population_uniques == pytest.approx(200.0, rel=1e-12)
    assert res.converged == {"zayatz": True, "pitman": False} and math.isnan(res.estimates["pitman"])
    with pytest.warns(sdckit.SdcWarning, match="pitman did not converge"):
        alone = sdckit.population_uniques(data, ["k"], sampling_fraction=0.05, method="pitman")
    assert math.isnan(alone.population_uniques) and alone.chosen == "pitman"
    assert alone.to_dict()["population_uniques"] is None  # JSON has no NaN


# ---------------------------------------------------------------------------------------------
# SNB
def test_shlosser_by_hand():
    # Profile c_1 = 3, c_2 = 2, c_3 = 1 (u = 6), q = pi = 1/2:
    #   sum_j j q^2 (1 - q^2)^(j-1) c_j = 3/4 + 2 (1/4)(3/4) 2 + 3 (1/4)(9/16) = 123/64
    #   sum_j ((1 - q^2)^j - (1 - q)^j) c_j = 3 (1/4) + 2 (5/16) + (19/64) = 107/64
    #   sum_j (1 - q)^j c_j = 3/2 + 1/2 + 1/8 = 17/8
    #   sum_j j q (1 - q)^(j-1) c_j = 3/2 + 1 + 3/8 = 23/8
    #   K = 6 + 3 (123/107)(17/23)^2 = 6 + 106641/56603
    sizes, counts, _ = profile({1: 3, 2: 2, 3: 1})
    assert uq.shlosser_classes(sizes, counts, 0.5) == pytest.approx(6 + 106641 / 56603, rel=1e-14)
    # only singletons in the sample: K = c_1 + c_1 (q^2 / (q (1 - q))) ((1 - q) / q)^2 = c_1 / q
    assert uq.shlosser_classes(np.array([1]), np.array([30]), 0.2) == pytest.approx(150.0, rel=1e-13)
    assert uq.shlosser_classes(sizes, counts, 1.0) == 6.0  # a census: K = u


@pytest.mark.parametrize("alpha, beta, pi", [(0.5, 0.2, 0.1), (2.0, 0.6, 0.3), (0.05, 0.01, 0.02)])
def test_snb_expected_matches_direct_sums(alpha, beta, pi):
    # oracle: E(c_i) = K sum_j P(F = j) P(f = i | F = j), F - 1 ~ scipy.stats.nbinom(alpha, beta),
    # f | F ~ Binomial(F, pi), summed term by term (the closed forms come from the pgf)
    from scipy.stats import binom, nbinom

    K = 1000.0
    j = np.arange(1, 200_000)
    pf = nbinom.pmf(j - 1, alpha, beta)
    e1 = K * np.sum(pf * binom.pmf(1, j, pi))
    e2 = K * np.sum(pf * binom.pmf(2, j, pi))
    got = uq.snb_expected(alpha, beta, K, pi)
    assert got[0] == pytest.approx(e1, rel=1e-9)
    assert got[1] == pytest.approx(e2, rel=1e-9)


def test_snb_solves_its_moment_equations():
    # Profile c_1 = 3, c_2 = 2, c_3 = 1 at pi = 1/2: K from the hand calculation above; the fitted
    # (alpha, beta) give E(c_1) = 3 and E(c_2) = 2, and S_1 = K beta^alpha
    sizes, counts, n = profile({1: 3, 2: 2, 3: 1})
    est = uq.snb(sizes, counts, n, 2.0 * n)
    assert est.converged
    p = est.parameters
    assert p["K"] == pytest.approx(6 + 106641 / 56603, rel=1e-14)
    e1, e2 = uq.snb_expected(p["alpha"], p["beta"], p["K"], 0.5)
    assert e1 == pytest.approx(3.0, rel=1e-8) and e2 == pytest.approx(2.0, rel=1e-8)
    assert est.value == pytest.approx(p["K"] * p["beta"] ** p["alpha"], rel=1e-14)


def test_snb_without_classes_of_size_two_does_not_converge():
    sizes, counts, n = profile({1: 5, 3: 2})
    est = uq.snb(sizes, counts, n, 4.0 * n)
    assert not est.converged and math.isnan(est.value) and "size 2" in est.note
    res = sdckit.population_uniques(records({1: 5, 3: 2}), ["k"], sampling_fraction=0.25)
    assert res.chosen == "zayatz" and res.reason == "zayatz fallback: snb did not converge"


# ---------------------------------------------------------------------------------------------
# the decision rule
def _e(value, ok=True):
    return uq.Estimate(value if ok else math.nan, ok)


@pytest.mark.parametrize(
    "pi, ests, expected",
    [
        (0.1, {"zayatz": _e(10.0), "pitman": _e(7.0)}, (7.0, "pitman")),  # pi <= 0.1 includes 0.1
        (0.05, {"zayatz": _e(10.0), "pitman": _e(0, False)}, (10.0, "zayatz")),
        (0.2, {"zayatz": _e(10.0), "snb": _e(12.0)}, (10.0, "zayatz")),  # the smaller of the two
        (0.2, {"zayatz": _e(10.0), "snb": _e(8.0)}, (8.0, "snb")),
        (0.5, {"zayatz": _e(10.0), "snb": _e(0, False)}, (10.0, "zayatz")),
    ],
)
def test_dankar_rule(pi, ests, expected):
    value, chosen, reason = uq.dankar(pi, ests)
    assert (value, chosen) == expected
    if not all(e.converged for e in ests.values()):
        assert reason.startswith("zayatz fallback:") and "did not converge" in reason


def test_no_sample_uniques_and_census():
    # no class of size 1: every estimate 0 (as ARX)
    res = sdckit.population_uniques(records({2: 3, 4: 1}), ["k"], sampling_fraction=0.1, method="all")
    assert res.population_uniques == 0 and res.chosen == "none"
    assert res.estimates == {"zayatz": 0.0, "pitman": 0.0, "snb": 0.0}
    # a census (pi = 1): the sample uniques are the population uniques, for every method
    for method in ("dankar", "pitman", "zayatz", "snb", "all"):
        r = sdckit.population_uniques(records({1: 4, 2: 3, 5: 1}), ["k"], sampling_fraction=1.0, method=method)
        assert r.population_uniques == 4 and all(v == 4 for v in r.estimates.values()), method
        assert r.chosen == "census" and r.share_population_uniques == pytest.approx(4 / 15)


# ---------------------------------------------------------------------------------------------
# ARX's numbers
ARX_ADULT = {
    # ARX TestRiskMetrics.testDecisionRule2 (adult.csv, all nine columns as quasi-identifiers,
    # population N = n / pi): getFractionOfUniqueTuplesDankar(), compared there to 4 digits
    0.1: ("pitman", 0.27684993883653597),
    0.01: ("pitman", 0.1446083531167384),
    1.0: ("census", 0.5142895033485844),
}
# the same test's alternative for pi = 0.1 (Zayatz, when Pitman is not available) and its value for
# pi = 0.2 (ARX's SNB fails there, see the module notes, and its rule falls back to Zayatz)
ARX_ZAYATZ = {0.1: 0.3207402393466189, 0.2: 0.3577099234829125}


@pytest.fixture(scope="module")
def adult():
    return pl.read_csv(shared_file("arx-adult", "adult.csv"), separator=";", infer_schema_length=0)


@pytest.mark.shared_data
def test_arx_adult_numbers(adult):
    keys = adult.columns
    for pi, (model, share) in ARX_ADULT.items():
        res = sdckit.population_uniques(adult, keys, sampling_fraction=pi, method="all")
        assert res.chosen == model
        # both sides solve the score equations by Newton's method to (near) rounding: ARX's value
        # and ours agree to ~4e-12 relative (the estimate's sensitivity to alpha is log N - psi(theta
        # + alpha) ~ 7, so alpha to 5e-13 gives 4e-12); 1e-10 leaves room for rounding only
        assert res.share_population_uniques == pytest.approx(share, rel=1e-10), pi
    for pi, share in ARX_ZAYATZ.items():
        res = sdckit.population_uniques(adult, keys, sampling_fraction=pi, method="all")
        assert res.estimates["zayatz"] / res.population_size == pytest.approx(share, rel=1e-12), pi
    # pi = 0.2: with the SNB equations as derived, SNB converges and is below Zayatz
    res = sdckit.population_uniques(adult, keys, sampling_fraction=0.2)
    assert res.chosen == "snb" and res.population_uniques < res.estimates["zayatz"]


# ---------------------------------------------------------------------------------------------
# truth by simulation (kernels on the class-size profile of Bernoulli samples)
def pitman_population(N: int, theta: float, alpha: float, seed: int) -> np.ndarray:
    """Class sizes of a Pitman(theta, alpha) partition of N (the two-parameter Chinese restaurant:
    person i + 1 opens a new class with probability (theta + k alpha) / (theta + i), else joins
    class c with probability (F_c - alpha) / (i - k alpha): a uniformly chosen earlier person's
    class, accepted with probability 1 - alpha / F_c)."""
    rng = np.random.default_rng(seed)
    cls = np.empty(N, dtype=np.int64)
    size = np.zeros(N, dtype=np.int64)
    k = 0
    new = rng.random(N)
    for i in range(N):
        if new[i] * (theta + i) < theta + k * alpha:
            cls[i], size[k] = k, 1
            k += 1
            continue
        while True:
            c = cls[int(rng.random() * i)]
            if rng.random() * size[c] >= alpha:
                break
        cls[i] = c
        size[c] += 1
    return size[:k]


def loglinear_population(seed: int, N: int = 200_000) -> np.ndarray:
    """Cell counts F_k ~ Poisson(lambda_k), log lambda = main effects ~ N(0, 1) of six keys (8, 2,
    20, 6, 5, 12 categories: 115,200 cells) plus one N(0, 0.7^2) two-way interaction."""
    rng = np.random.default_rng(seed)
    cards = (8, 2, 20, 6, 5, 12)
    log_lam = np.zeros(cards)
    for ax, c in enumerate(cards):
        shape = [1] * len(cards)
        shape[ax] = c
        log_lam = log_lam + rng.normal(0.0, 1.0, c).reshape(shape)
    log_lam = log_lam + rng.normal(0.0, 0.7, (cards[2], cards[3])).reshape(1, 1, cards[2], cards[3], 1, 1)
    lam = np.exp(log_lam).ravel()
    return rng.poisson(lam * N / lam.sum())


def mean_relative_bias(F: np.ndarray, pi: float, reps: int, seed: int) -> dict:
    """Mean of estimate / S_1 - 1 over Bernoulli samples (pi known: N = n / pi), per model."""
    rng = np.random.default_rng(seed)
    S1 = int(np.sum(F == 1))
    out: dict = {m: [] for m in ("zayatz", "pitman", "snb", "dankar")}
    for _ in range(reps):
        f = rng.binomial(F, pi)
        sizes, counts = uq.class_profile(f)
        n = int(f.sum())
        value, _, _, ests = uq.estimate(sizes, counts, n, n / pi, "all")
        for m, e in ests.items():
            out[m].append(e.value)
        out["dankar"].append(value)
    return {m: float(np.mean(np.asarray(v) / S1 - 1.0)) for m, v in out.items()}


@pytest.fixture(scope="module")
def pitman_pop():
    # 10^5 persons, theta = 1000, alpha = 0.6: 24,576 classes, S_1 = 15,507 population uniques
    # (the model's expectation Gamma(1001) / Gamma(1000.6) 10^5^0.6 = 15,851 is 2.2 % higher)
    return pitman_population(100_000, 1000.0, 0.6, seed=1)


def test_truth_pitman_population(pitman_pop):
    # A population drawn from the Pitman model: the Pitman estimator is close to the truth.
    # Measured (20 samples each, seed 5; relative bias, SE): pi = 1/10: Pitman +1.8 % (0.8 %),
    # Zayatz +22 % (0.7 %), SNB -19 % (0.6 %); pi = 1/50: Pitman -3.0 % (3.0 %), Zayatz +161 %,
    # SNB +129 %.
    b10 = mean_relative_bias(pitman_pop, 0.1, 20, seed=5)
    b50 = mean_relative_bias(pitman_pop, 0.02, 20, seed=5)
    assert abs(b10["pitman"]) < 0.04, b10
    assert abs(b50["pitman"]) < 0.12, b50
    assert b10["dankar"] == b10["pitman"] and b50["dankar"] == b50["pitman"]  # pi <= 0.1: Pitman
    assert b10["zayatz"] > 0.1 and b50["zayatz"] > 1.0  # Zayatz over-estimates, more so at small pi


def test_truth_snb_population():
    # K = 50,000 classes with F - 1 ~ NegBin(0.5, 0.2): the SNB equations recover the truth with the
    # true K (pi = 1/10 and 1/5), and with the Shlosser K once pi is large (1/2). Measured (10 samples):
    # true K: -1.3 % at 1/10, -0.1 % at 1/5; Shlosser K: -0.1 % at 1/2 (but +151 % at 1/10: the
    # Shlosser estimate of K is far too large at small pi).
    rng = np.random.default_rng(11)
    K = 50_000
    F = 1 + rng.negative_binomial(0.5, 0.2, K)
    S1 = int(np.sum(F == 1))
    for pi, tol in ((0.1, 0.03), (0.2, 0.03)):
        est = []
        for _ in range(10):
            f = rng.binomial(F, pi)
            sizes, counts = uq.class_profile(f)
            a, b, err = uq._snb_solve(float(K), pi, float(counts[sizes == 1].sum()), float(counts[sizes == 2].sum()))
            assert err < 1e-8
            est.append(K * b**a)
        assert abs(np.mean(est) / S1 - 1) < tol, (pi, np.mean(est) / S1 - 1)
    assert abs(mean_relative_bias(F, 0.5, 10, seed=2)["snb"]) < 0.03


def test_truth_loglinear_population():
    # A Poisson log-linear population (199,845 persons in 115,200 cells, 23,348 non-empty,
    # S_1 = 9,293 cells with F_k = 1): no estimator's model holds, and all over-estimate.
    # Measured (20 samples each, seed 5; relative bias, SE): pi = 1/10: Zayatz +83 % (0.8 %),
    # Pitman +60 % (0.8 %), SNB +26 % (0.7 %); pi = 1/50: Zayatz +394 % (3.6 %), Pitman +125 %
    # (4.4 %), SNB +270 % (2.8 %). The bounds below are those measurements with a margin: they
    # document the size of the model error.
    F = loglinear_population(seed=3)
    b10 = mean_relative_bias(F, 0.1, 20, seed=5)
    b50 = mean_relative_bias(F, 0.02, 20, seed=5)
    assert 0.7 < b10["zayatz"] < 1.0 and 0.45 < b10["pitman"] < 0.75 and 0.15 < b10["snb"] < 0.4, b10
    assert 3.0 < b50["zayatz"] < 4.8 and 0.8 < b50["pitman"] < 1.6 and 2.0 < b50["snb"] < 3.3, b50
    assert b10["dankar"] == b10["pitman"]


@pytest.mark.slow
@pytest.mark.shared_data
def test_truth_eusilc():
    # eusilcP as the population (benchmarks/_uniqueness_validation.py; 20 samples there, 8 here).
    # Measured with 20 samples at pi = 1/10: Pitman -1.8 % (single years of age) and +11 % (5-year
    # groups); Zayatz +164 % and +100 %.
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import _uniqueness_validation as V

    res = V.validate_uniqueness(n_samples=8, fractions=(0.1,), seed=7)
    rows = {(r["keys"], r["model"]): r for r in V.summarize(res)}
    for ks in ("age1", "age5"):
        assert abs(rows[(ks, "pitman")]["bias"]) < 0.2, rows[(ks, "pitman")]
        assert rows[(ks, "dankar")]["bias"] == rows[(ks, "pitman")]["bias"]
        assert rows[(ks, "zayatz")]["bias"] > 0.5
        assert rows[(ks, "pitman")]["not_converged"] == 0


# ---------------------------------------------------------------------------------------------
# properties
@st.composite
def key_tables(draw):
    n = draw(st.integers(20, 150))
    cards = draw(st.lists(st.integers(2, 6), min_size=2, max_size=3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    cols = {f"v{j}": [f"c{x}" for x in rng.integers(0, c, n)] for j, c in enumerate(cards)}
    return pl.DataFrame(cols), seed


def _same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        assert (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k], (k, a[k], b[k])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key_tables(), st.sampled_from([0.02, 0.1, 0.3]))
def test_row_order_and_relabelling_do_not_matter(table, pi):
    data, seed = table
    keys = data.columns
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = sdckit.population_uniques(data, keys, sampling_fraction=pi, method="all")
        perm = np.random.default_rng(seed).permutation(data.height)
        relabelled = data[perm].with_columns(pl.col(c).str.replace("c", "label_") + "_x" for c in keys)
        other = sdckit.population_uniques(relabelled, keys, sampling_fraction=pi, method="all")
    _same(base.estimates, other.estimates)
    assert base.chosen == other.chosen and base.profile() == other.profile()


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.integers(1, 30), st.integers(1, 40), min_size=1, max_size=8),
    st.floats(0.005, 1.0),
)
def test_estimates_between_zero_and_population_size(d, pi):
    sizes, counts, n = profile(d)
    N = n / pi
    value, chosen, _, ests = uq.estimate(sizes, counts, n, N, "all")
    for m, e in ests.items():
        assert math.isnan(e.value) and not e.converged or 0.0 <= e.value <= N * (1 + 1e-12), (m, e)
    assert 0.0 <= value <= N * (1 + 1e-12) and chosen in ("pitman", "zayatz", "snb", "none", "census")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key_tables())
def test_census_returns_the_sample_uniques(table):
    data, _ = table
    res = sdckit.population_uniques(data, data.columns, sampling_fraction=1.0, method="all")
    c1 = int(sdckit.frequencies(data, data.columns).n_sample_uniques)
    assert res.n_sample_uniques == c1
    assert all(v == c1 for v in res.estimates.values()) and res.population_uniques == c1


# ---------------------------------------------------------------------------------------------
# input
def test_sampling_fraction_sources():
    data = records({1: 5, 2: 3, 4: 1}).with_columns(w=pl.lit(4.0))  # n = 15, sum(w) = 60
    by_fraction = sdckit.population_uniques(data, ["k"], sampling_fraction=0.25, method="all")
    by_size = sdckit.population_uniques(data, ["k"], population_size=60, method="all")
    by_weight = sdckit.population_uniques(data, ["k"], weight="w", method="all")
    assert by_fraction.fraction_source == "sampling_fraction" and by_fraction.population_size == 60
    assert by_size.fraction_source == "population_size" and by_size.sampling_fraction == 0.25
    assert by_weight.fraction_source == "weight" and by_weight.population_size == 60
    _same(by_fraction.estimates, by_size.estimates)
    _same(by_fraction.estimates, by_weight.estimates)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sampling_fraction": 0}, r"sampling_fraction: got 0; expected a number in \(0, 1\]"),
        ({"sampling_fraction": -0.1}, r"sampling_fraction: got -0.1; expected a number in \(0, 1\]"),
        ({"sampling_fraction": 1.5}, r"sampling_fraction: got 1.5; expected a number in \(0, 1\]"),
        ({"sampling_fraction": float("nan")}, r"sampling_fraction: got nan; expected a number in \(0, 1\]"),
        (
            {"population_size": 10},
            r"population_size: got 10; expected at least the number of records in the sample \(15\)",
        ),
        ({}, r"sampling_fraction: no sampling fraction, population size or weight given; expected"),
        ({"sampling_fraction": 0.1, "method": "arx"}, r"method: got 'arx'; expected one of 'dankar', 'pitman'"),
        ({"sampling_fraction": 0.1, "population_size": 150}, r"population_size: given together with sampling_fraction"),
        ({"weight": "small"}, r"weight: the weights sum to 7.5, fewer than the 15 records"),
    ],
)
def test_bad_input(kwargs, match):
    data = records({1: 5, 2: 3, 4: 1}).with_columns(small=pl.lit(0.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # weights below 1 warn before the error
        with pytest.raises(sdckit.SdcError, match=match):
            sdckit.population_uniques(data, ["k"], **kwargs)


def test_missing_keys_are_excluded_with_a_warning():
    data = pl.DataFrame({"a": ["x", "x", "y", None, "z", "z", "w"], "b": ["1", "1", "2", "3", None, "4", "5"]})
    with pytest.warns(sdckit.SdcWarning, match="2 record"):
        res = sdckit.population_uniques(data, ["a", "b"], population_size=70, method="zayatz")
    # complete records: (x,1) x2, (y,2), (z,4), (w,5): profile c_1 = 3, c_2 = 1, n_used = 5;
    # the population of the complete records: N n_used / n = 70 * 5 / 7 = 50
    assert (res.n, res.n_used, res.n_excluded) == (7, 5, 2)
    assert res.profile() == {1: 3, 2: 1} and res.population_size_used == pytest.approx(50.0)
    sizes, counts, n = profile({1: 3, 2: 1})
    assert res.population_uniques == pytest.approx(uq.zayatz(sizes, counts, 5, 50.0).value, rel=1e-14)


# ---------------------------------------------------------------------------------------------
# engines and the result object
def _mixed_table(n=3000, seed=4):
    rng = np.random.default_rng(seed)
    a = rng.choice(["a", "b", "c", "d", "e", "f"], n, p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    b = rng.integers(0, 40, n).astype(str)
    c = rng.choice(["x", "y", None], n, p=[0.6, 0.39, 0.01])
    return pl.DataFrame({"a": a, "b": b, "c": c, "w": rng.uniform(5, 15, n)})


@pytest.mark.parametrize("kwargs", [{"sampling_fraction": 0.08}, {"weight": "w"}, {"sampling_fraction": 0.3}])
def test_duckdb_engine_gives_the_same_numbers(kwargs):
    pytest.importorskip("duckdb")
    data = _mixed_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the records with a missing key
        mem = sdckit.population_uniques(data, ["a", "b", "c"], method="all", **kwargs)
        duck = sdckit.population_uniques(data, ["a", "b", "c"], method="all", engine="duckdb", **kwargs)
    assert mem.to_dict() == duck.to_dict()
    assert mem.n_excluded > 0 and mem.profile() == duck.profile()


def test_result_object():
    data = _mixed_table().drop_nulls()
    res = sdckit.population_uniques(data, ["a", "b"], sampling_fraction=0.1, method="all")
    d = res.to_dict()
    json.dumps(d)
    assert d["population_uniques"] == res.population_uniques and d["chosen"] == res.chosen
    assert res.proportion == res.share_population_uniques == res.population_uniques / res.population_size
    assert res.tau1 == pytest.approx(0.1 * res.population_uniques)
    assert sum(i * c for i, c in res.profile().items()) == res.n_used == data.height
    assert res.n_classes == sum(res.profile().values())
    with pytest.raises(ValueError):
        res.class_counts[0] = 0
    with pytest.raises(TypeError):
        res.estimates["pitman"] = 0.0
    text = str(res.summary())
    assert "Population uniqueness" in text and "Pitman (Hoshino 2001)" in text
    assert repr(res).startswith("<PopulationUniquesResult n=")
    frame = res.to_frame()
    assert frame.columns == ["class_size", "n_classes", "n_records"]
    assert frame["n_records"].sum() == res.n_used
    pd_frame = sdckit.population_uniques(data.to_pandas(), ["a", "b"], sampling_fraction=0.1).to_frame()
    assert type(pd_frame).__module__.startswith("pandas") and len(pd_frame) == len(res.profile())


def test_plot():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    res = sdckit.population_uniques(records({1: 5, 2: 3, 4: 1}), ["k"], sampling_fraction=0.2)
    assert res.plot() is not None


def test_cli_uniques(tmp_path, capsys):
    import json

    from sdckit.cli import main

    rng = np.random.default_rng(8)
    d = pl.DataFrame({"a": rng.integers(0, 8, 3000), "b": rng.integers(0, 9, 3000), "c": rng.integers(0, 7, 3000)})
    d.write_csv(tmp_path / "s.csv")
    out = tmp_path / "u.json"
    args = ["uniques", str(tmp_path / "s.csv"), "--keys", "a,b,c", "--no-progress"]
    assert main([*args, "--sampling-fraction", "0.1", "--method", "all", "--json", str(out)]) == 0
    direct = sdckit.population_uniques(d, ["a", "b", "c"], sampling_fraction=0.1, method="all")
    payload = json.loads(out.read_text())["population_uniques"]
    assert payload["population_uniques"] == pytest.approx(direct.population_uniques, rel=1e-12)
    assert "population uniques" in capsys.readouterr().out.lower()
    assert main([*args, "--sampling-fraction", "1.5"]) == 2
    assert "sampling_fraction" in capsys.readouterr().err
