"""register_risk: re-identification risk for a subpopulation register (Shlomo & Skinner 2022).

Expected values come from the specification's worked examples (sections D.6 and D.7, cited as
"spec D.x" in comments), from hand calculations written next to them, from brute-force Monte
Carlo simulation of the model (the closed forms), from exact binomial sums (the theta identity)
and from a seeded simulation of a synthetic population (approach B against the truth).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import sdckit
from sdckit._core import register as rk
from sdckit.cli import main

LOG4 = math.log(4.0)


# ---------------------------------------------------------------------------------------------
# kernels: the worked examples
def _d6_design():
    """Spec D.6: four cells, x_k = (1, z_k), z = (0, 1, 0, 1)."""
    X, columns = rk.cell_design(np.array([[0], [1], [0], [1]]), (2,), [(0,)])
    return X, columns, np.array([10.0, 20.0, 5.0, 8.0]), np.array([2.0, 9.0, 1.0, 5.0])


def test_cell_design_matches_the_loglinear_design():
    from sdckit._core.loglinear import design_matrix

    shape = (3, 2, 4)
    terms = [(0,), (1,), (2,), (0, 2)]
    X_full, names = design_matrix(shape, terms, dense=True)
    codes = np.stack(np.unravel_index(np.arange(24), shape), axis=1)
    X, columns = rk.cell_design(codes, shape, terms)
    np.testing.assert_array_equal(X.toarray(), X_full)
    assert len(columns) == len(names) == 1 + 2 + 1 + 3 + 2 * 3
    assert columns[0] == ((), ()) and columns[-1] == ((0, 2), (2, 3))


def test_d6_fisher_scoring_iterates_and_counts():
    X, _, lam, F1 = _d6_design()
    fit = rk.fit_membership_poisson(X, F1, lam, method="fisher")
    # spec D.6: xi_1 = (-1.2, 1.2), xi_2 = (-1.376932, 1.376932), xi_3 = (-1.386268, 1.386268)
    np.testing.assert_allclose(fit.path[0], [-1.2, 1.2], atol=1e-12)
    np.testing.assert_allclose(fit.path[1], [-1.376932, 1.376932], atol=5e-7)
    np.testing.assert_allclose(fit.path[2], [-1.386268, 1.386268], atol=5e-7)
    # spec D.6: pure Fisher scoring meets the 1e-10 step rule at iteration 6
    assert fit.iterations == 6 and fit.converged and set(fit.kinds) == {"fisher"}
    np.testing.assert_allclose(fit.xi, [-LOG4, LOG4], atol=1e-12)


def test_d6_default_rule_newton_after_three_fisher_steps():
    X, _, lam, F1 = _d6_design()
    fit = rk.fit_membership_poisson(X, F1, lam)
    # spec D.6: iterations 4 and 5 are Newton steps; the stopping rule is met at iteration 5
    assert fit.kinds == ("fisher", "fisher", "fisher", "newton", "newton")
    assert fit.iterations == 5 and fit.converged and fit.halvings == 0
    np.testing.assert_allclose(fit.xi, [-LOG4, LOG4], atol=1e-12)
    # spec D.6: p = (0.2, 0.5, 0.2, 0.5), phi = (2, 10, 1, 4); register totals per z: 3 and 14
    np.testing.assert_allclose(fit.p, [0.2, 0.5, 0.2, 0.5], atol=1e-12)
    phi = lam * fit.p
    np.testing.assert_allclose(phi, [2, 10, 1, 4], atol=1e-10)
    assert phi[[0, 2]].sum() == pytest.approx(3) and phi[[1, 3]].sum() == pytest.approx(14)


def test_d6_closed_forms_of_the_register_unique_cell():
    # spec D.6: cell 3 (lambda 5, phi 1) at pi = 0.1: nu = 0.9 * 4 = 3.6
    f = rk.closed_forms(np.array([5.0]), np.array([1.0]), 0.1)
    assert f.p_unique_both[0] == pytest.approx(0.005940, abs=5e-7)  # exp(-3.6) / 4.6
    assert f.risk_both[0] == pytest.approx(0.217391, abs=5e-7)  # 1 / 4.6
    assert f.p_unique_register[0] == pytest.approx(0.018316, abs=5e-7)  # exp(-4)
    assert f.risk_register[0] == pytest.approx(0.245421, abs=5e-7)  # (1 - exp(-4)) / 4


def test_closed_forms_limits():
    # d = 0 (every unit of the cell is a member): the register unique is population unique
    f = rk.closed_forms(np.array([2.0, 0.0]), np.array([2.0, 0.0]), np.array([0.3, 0.3]))
    np.testing.assert_array_equal(f.p_unique_register, [1, 1])
    np.testing.assert_array_equal(f.risk_register, [1, 1])
    np.testing.assert_array_equal(f.risk_both, [1, 1])
    # pi = 1: the sample is a census, a cell unique in both files is population unique
    g = rk.closed_forms(np.array([7.0]), np.array([1.0]), 1.0)
    assert g.p_unique_both[0] == 1.0 and g.risk_both[0] == 1.0
    assert g.p_unique_register[0] == pytest.approx(math.exp(-6.0))


def test_d7_propensity_newton_raphson():
    X, _ = rk.cell_design(np.array([[0], [1]]), (2,), [(0,)])
    # spec D.7: 30 members with z = 0, 70 with z = 1; sample weight sums 60 * 50 = 3000 and 40 * 25 = 1000
    fit = rk.fit_membership_propensity(X, np.array([30.0, 70.0]), np.array([3000.0, 1000.0]))
    # spec D.7: p(z=0) = 30/3000 = 0.01, p(z=1) = 70/1000 = 0.07; MLE xi = (-4.595120, 2.008431)
    np.testing.assert_allclose(fit.p, [0.01, 0.07], rtol=1e-12)
    exact = [math.log(0.01 / 0.99), math.log(0.07 / 0.93) - math.log(0.01 / 0.99)]
    np.testing.assert_allclose(fit.xi, exact, atol=1e-12)
    np.testing.assert_allclose(fit.xi, [-4.595120, 2.008431], atol=5e-7)
    # spec D.7: the 8th iterate agrees with the MLE to 3e-8; the stopping rule is met at iteration 9
    assert np.max(np.abs(fit.path[7] - exact)) < 3e-8
    assert fit.iterations == 9 and fit.converged and fit.halvings == 0 and set(fit.kinds) == {"newton"}
    assert 3 / fit.p[1] == pytest.approx(42.857, abs=5e-4)  # spec D.7: F-hat of a cell with 3 members


def test_divergent_columns_are_fixed_at_minus_infinity():
    # a category with sample records but no register member: its coefficient's MLE is -inf
    X, _ = rk.cell_design(np.array([[0], [1], [2]]), (3,), [(0,)])
    fit = rk.fit_membership_propensity(X, np.array([5.0, 3.0, 0.0]), np.array([100.0, 30.0, 40.0]))
    assert fit.converged and fit.n_infinite == 1 and fit.xi[2] == -np.inf
    # the other cells keep their saturated MLE: p = F^1 / W (hand calculation: 5/100, 3/30)
    np.testing.assert_allclose(fit.p, [0.05, 0.1, 0.0], rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# closed forms against brute-force Monte Carlo
MC_CASES = [(3.0, 0.3, 0.2), (1.0, 0.5, 0.1), (5.0, 0.1, 0.5), (0.5, 0.8, 0.03)]


@pytest.mark.parametrize("lam, p, pi", MC_CASES)
def test_closed_forms_against_monte_carlo(lam, p, pi):
    """Simulate F ~ Poisson(lam), F^1 ~ Binomial(F, p), the sample as Bernoulli(pi) draws of the
    F units (members and non-members), and compare the conditional frequencies with D.4."""
    rng = np.random.default_rng(int(1000 * lam + 100 * p + 10 * pi))
    n = 1_000_000
    F = rng.poisson(lam, n)
    F1 = rng.binomial(F, p)
    f = rng.binomial(F1, pi) + rng.binomial(F - F1, pi)
    forms = rk.closed_forms(np.array([lam]), np.array([lam * p]), pi)
    for cond, p_form, e_form in (
        (F1 == 1, forms.p_unique_register[0], forms.risk_register[0]),
        ((F1 == 1) & (f == 1), forms.p_unique_both[0], forms.risk_both[0]),
    ):
        Fc = F[cond]
        m = Fc.size
        assert m > 5_000
        se_p = math.sqrt(p_form * (1 - p_form) / m)
        assert abs(np.mean(Fc == 1) - p_form) < 4.5 * se_p + 1e-9
        inv = 1.0 / Fc
        assert abs(inv.mean() - e_form) < 4.5 * inv.std() / math.sqrt(m) + 1e-9


def test_theta_identity_exact_binomial_sums():
    """E[F I(f=1) | F] = E[I(f=1) | F] + 2 (1 - pi)/pi E[I(f=2) | F] for f ~ Binomial(F, pi)."""
    from scipy.stats import binom

    for pi in (0.01, 0.1, 0.37, 0.9):
        for F in range(0, 40):
            p1, p2 = binom.pmf(1, F, pi), binom.pmf(2, F, pi)
            assert F * p1 == pytest.approx(p1 + 2 * (1 - pi) / pi * p2, rel=1e-12, abs=1e-300)


def test_theta_hat_kernel_by_hand():
    F1 = np.array([1, 1, 1, 1, 2, 0])
    f = np.array([1, 1, 2, 0, 1, 1])
    # constant pi = 0.25: 2 cells unique in both, 1 with f = 2: 2 / (2 + 2 * 0.75 / 0.25) = 2/8
    assert rk.theta_hat(F1, f, 0.25) == pytest.approx(0.25)
    # cell-varying pi: only the f = 2 cell's pi enters: 2 / (2 + 2 * 0.5 / 0.5) = 0.5
    assert rk.theta_hat(F1, f, np.array([0.1, 0.2, 0.5, 0.3, 0.3, 0.3])) == pytest.approx(0.5)
    assert math.isnan(rk.theta_hat(np.array([2]), np.array([1]), 0.5))


# ---------------------------------------------------------------------------------------------
# the worked examples through register_risk
def _records(counts: dict, **extra) -> pl.DataFrame:
    """One record per unit: ``counts`` maps (z, u) -> number of records."""
    rows = [(z, u) for (z, u), n in counts.items() for _ in range(n)]
    out = pl.DataFrame({"z": [r[0] for r in rows], "u": [r[1] for r in rows]})
    return out.with_columns(**{k: pl.Series(v) for k, v in extra.items()}) if extra else out


def test_d6_through_register_risk():
    # cells (z, u): lambda = 10, 20, 5, 8 (spec D.6), register counts 2, 9, 1, 5. One sample
    # record per cell with weight lambda_k: pi_k = 1 / lambda_k and, with the saturated model,
    # lambda-hat_k = f_k / pi_k = lambda_k.
    cells = [("0", "a"), ("1", "a"), ("0", "b"), ("1", "b")]
    lam = [10.0, 20.0, 5.0, 8.0]
    register = _records(dict(zip(cells, [2, 9, 1, 5])))
    sample = _records(dict.fromkeys(cells, 1), w=lam)
    for method, iterations in (("newton", 5), ("fisher", 6)):
        r = sdckit.register_risk(
            register, sample, ["z", "u"], sample_weight="w", approach="A", model="saturated",
            membership_model="z", method=method,
        )  # fmt: skip
        assert r.membership_fit["iterations"] == iterations and r.membership_fit["converged"]
        assert list(r.xi) == ["(intercept)", "z[2]"]
        np.testing.assert_allclose(list(r.xi.values()), [-LOG4, LOG4], atol=1e-9)
    assert r.n_register_uniques == 1 and r.n_both_uniques == 1 and r.n_cells == 4
    np.testing.assert_allclose(r.p_member, np.where(register["z"].to_numpy() == "0", 0.2, 0.5), atol=1e-9)
    np.testing.assert_allclose(np.unique(r.lam), sorted(lam), rtol=1e-9)
    assert r.tau1_star == pytest.approx(0.018316, abs=5e-7)  # spec D.6: exp(-4)
    assert r.tau2_star == pytest.approx(0.245421, abs=5e-7)  # spec D.6: (1 - exp(-4)) / 4
    # the unique cell has pi = 1/5 here: nu = 0.8 * (5 - 1) = 3.2 (hand calculation)
    assert r.tau1 == pytest.approx(math.exp(-3.2) / 4.2, rel=1e-9)
    assert r.tau2 == pytest.approx(1 / 4.2, rel=1e-9)
    assert r.theta_hat == 1.0  # one cell unique in both files, none with f = 2
    one = np.flatnonzero(r.register_fk == 1)
    assert one.size == 1 and r.risk_register[one[0]] == pytest.approx(0.245421, abs=5e-7)
    assert np.isnan(np.delete(r.risk_register, one)).all()


def test_d7_through_register_risk():
    # spec D.7: register 30 (z=0) + 70 (z=1) members, 3 of the z=1 members in cell v=b; sample
    # 60 records with z=0 and w=50, 40 with z=1 and w=25 (half of each in v=b)
    register = _records({("0", "a"): 30, ("1", "a"): 67, ("1", "b"): 3}).rename({"u": "v"})
    sample = _records({("0", "a"): 30, ("0", "b"): 30, ("1", "a"): 20, ("1", "b"): 20}).rename({"u": "v"})
    sample = sample.with_columns(w=pl.when(pl.col("z") == "0").then(50.0).otherwise(25.0))
    r = sdckit.register_risk(register, sample, ["z", "v"], sample_weight="w", membership_model="z", model="saturated")
    assert r.approach == "B" and r.membership_fit["iterations"] == 9
    np.testing.assert_allclose(list(r.xi.values()), [-4.595120, 2.008431], atol=5e-7)
    z1b = (register["z"] == "1").to_numpy() & (register["v"] == "b").to_numpy()
    np.testing.assert_allclose(r.p_member, np.where(register["z"].to_numpy() == "0", 0.01, 0.07), rtol=1e-9)
    # the saturated pseudo-MLE reproduces F-hat = 3 / 0.07 = 42.857 (spec D.7)
    np.testing.assert_allclose(r.lam[z1b], 3 / 0.07, rtol=1e-9)
    assert r.lam[z1b][0] == pytest.approx(42.857, abs=5e-4)
    assert r.sampling_fraction is None  # pi_k = f_k / W_k from the weights


# ---------------------------------------------------------------------------------------------
# small simulation: approach B against the truth
SIM_SHAPE = (6, 5, 4, 8, 3, 5)
SIM_KEYS = ["k0", "k1", "k2", "k3", "k4", "k5"]


def _frame(cells: np.ndarray) -> pl.DataFrame:
    codes = np.unravel_index(cells, SIM_SHAPE)
    return pl.DataFrame({k: c.astype(np.int64) for k, c in zip(SIM_KEYS, codes)})


def _population(seed: int = 7, size: float = 150_000):
    """14,400 cells, log lambda with main effects and four two-way interactions, logit p with
    main effects (about 14 % members), Poisson F, Binomial F^1."""
    rng = np.random.default_rng(seed)
    grids = np.indices(SIM_SHAPE)
    loglam = sum(rng.normal(0, 0.6, L)[grids[j]] for j, L in enumerate(SIM_SHAPE))
    for a, b in [(0, 1), (1, 3), (2, 4), (3, 5)]:
        loglam = loglam + rng.normal(0, 0.5, (SIM_SHAPE[a], SIM_SHAPE[b]))[grids[a], grids[b]]
    lam = np.exp(loglam).ravel()
    lam *= size / lam.sum()
    eta = -1.5 + sum(rng.normal(0, 0.5, L)[grids[j]] for j, L in enumerate(SIM_SHAPE))
    F = rng.poisson(lam)
    F1 = rng.binomial(F, (1 / (1 + np.exp(-eta))).ravel())
    return F, F1


def test_simulation_approach_b_near_the_truth():
    F, F1 = _population()
    register = _frame(np.repeat(np.arange(F.size), F1))
    pi = 0.03
    rng = np.random.default_rng(11)
    one = F1 == 1
    true_star = np.array([np.sum(one & (F == 1)), np.sum(one / np.maximum(F, 1))])
    est, est_a, truth, theta = [], [], [], []
    for _ in range(8):
        f = rng.binomial(F1, pi) + rng.binomial(F - F1, pi)
        sample = _frame(np.repeat(np.arange(F.size), f))
        both = one & (f == 1)
        truth.append([np.sum(both & (F == 1)), np.sum(both / np.maximum(F, 1))])
        theta.append([both.sum() / F[both].sum(), 0.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = sdckit.register_risk(register, sample, SIM_KEYS, sampling_fraction=pi, approach="both")
        b = r.approaches["B"]
        est.append([b.tau1_star, b.tau2_star, b.tau1, b.tau2])
        est_a.append(r.approaches["A"].tau1_star)
        theta[-1][1] = r.theta_hat
    est, truth, theta = np.array(est).mean(0), np.array(truth).mean(0), np.array(theta).mean(0)
    # measured (8 samples, this seed): tau*_1 254.2 vs 229 (model expectation 240.8),
    # tau*_2 803.6 vs 783.3, tau_2 75.1 vs 73.5, theta-hat 0.073 vs 0.078
    assert est[0] == pytest.approx(true_star[0], rel=0.2)
    assert est[1] == pytest.approx(true_star[1], rel=0.06)
    assert est[3] == pytest.approx(truth[1], rel=0.1)
    assert est[2] == pytest.approx(truth[0], abs=4.0)  # tau_1 is small (about 5)
    assert theta[1] == pytest.approx(theta[0], abs=0.015)
    # approach A over-estimates tau*_1 more than B (Shlomo & Skinner 2022, Table 2 pattern)
    assert np.mean(est_a) > est[0]


# ---------------------------------------------------------------------------------------------
# properties
def _random_files(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(300, 900))
    a, b, c = rng.integers(0, 3, n), rng.integers(0, 3, n), rng.integers(0, 2, n)
    member = rng.random(n) < 1 / (1 + np.exp(-(-1.0 + 0.6 * a - 0.4 * c)))
    pop = pl.DataFrame({"a": a.astype(str), "b": [f"b{x}" for x in b], "c": c})
    sampled = rng.random(n) < 0.3
    sample = pop.filter(pl.Series(sampled)).with_columns(w=pl.Series(rng.uniform(2.0, 5.0, int(sampled.sum()))))
    return pop.filter(pl.Series(member)), sample


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), approach=st.sampled_from(["A", "B"]), weighted=st.booleans())
def test_properties_row_order_and_bounds(seed, approach, weighted):
    register, sample = _random_files(seed)
    kw = dict(sample_weight="w") if weighted else dict(sampling_fraction=0.3)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = sdckit.register_risk(register, sample, ["a", "b", "c"], approach=approach, model="independence", **kw)
            rng = np.random.default_rng(seed + 1)
            pr, ps = rng.permutation(register.height), rng.permutation(sample.height)
            s = sdckit.register_risk(
                register[pr], sample[ps], ["a", "b", "c"], approach=approach, model="independence", **kw
            )
    except sdckit.SdcError as exc:  # tiny files: a register category absent from the sample
        assume(not any(m in str(exc) for m in ("no sample record", "did not converge", "no finite maximum")))
        raise
    for name in ("tau1_star", "tau2_star", "tau1", "tau2", "theta_hat"):
        np.testing.assert_allclose(getattr(s, name), getattr(r, name), rtol=1e-9, atol=1e-12)
    for col, values in r._records().items():
        np.testing.assert_allclose(s._records()[col], np.asarray(values)[pr], rtol=1e-9, atol=1e-12, err_msg=col)
    for x in (r.p_unique_register, r.risk_register, r.p_unique_both, r.risk_both, r.p_member):
        x = x[np.isfinite(x)]
        assert np.all((x >= 0) & (x <= 1))
    assert 0 <= r.tau1 <= r.tau2 <= r.n_both_uniques + 1e-9
    assert 0 <= r.tau1_star <= r.tau2_star <= r.n_register_uniques + 1e-9
    assert np.all(r.risk_register[r.register_fk == 1] >= r.p_unique_register[r.register_fk == 1])
    both = np.isfinite(r.risk_both)
    assert both.sum() == r.n_both_uniques and np.all(r.register_fk[both] == 1) and np.all(r.fk[both] == 1)


def test_both_equals_the_two_approaches():
    register, sample = _random_files(3)
    kw = dict(sample_weight="w", model="independence")
    both = sdckit.register_risk(register, sample, ["a", "b", "c"], approach="both", **kw)
    for a in ("A", "B"):
        one = sdckit.register_risk(register, sample, ["a", "b", "c"], approach=a, **kw)
        assert both.approaches[a].tau1_star == one.tau1_star and both.approaches[a].xi == one.xi
        np.testing.assert_array_equal(both.to_frame()[f"risk_register_{a}"].to_numpy(), one.risk_register)
    assert both.approach == "both" and both.tau2 == both.approaches["B"].tau2
    d = both.to_dict()
    assert set(d["approaches"]) == {"A", "B"} and json.dumps(d)
    assert "Re-identification risk" in str(both.summary())


def test_result_frame_keeps_the_register_rows_and_aggregates_only_in_to_dict():
    pd = pytest.importorskip("pandas")
    register, sample = _random_files(5)
    reg = register.to_pandas()
    reg.index = [f"id{i}" for i in range(len(reg))]
    reg.loc[reg.index[0], "a"] = None  # excluded: NaN risks
    with pytest.warns(sdckit.SdcWarning, match="1 of the register, 0 of the sample"):
        r = sdckit.register_risk(reg, sample, ["a", "b", "c"], sampling_fraction=0.3, model="independence")
    out = r.to_frame()
    assert isinstance(out, pd.DataFrame) and list(out.index) == list(reg.index)
    assert np.isnan(out["register_fk"].iloc[0]) and r.n_register_excluded == 1 and len(r) == len(reg)
    text = json.dumps(r.to_dict())
    assert r.to_dict()["measure"] == "register_risk" and "b1" not in text  # no category labels
    assert r.categories["b"] == ("b0", "b1", "b2")


def test_categories_are_the_union_and_declared_ones_are_kept():
    register = pl.DataFrame({"x": ["p", "q", "q"], "y": ["1", "2", "2"]})
    sample = pl.concat([pl.DataFrame({"x": ["p", "q", "r", "r"], "y": ["1", "2", "1", "2"]})] * 5)
    r = sdckit.register_risk(register, sample, ["x", "y"], sampling_fraction=0.5, model="independence")
    assert r.categories["x"] == ("p", "q", "r") and r.n_cells == 6
    enum = pl.Enum(["q", "p", "r", "s"])
    reg_e = register.with_columns(pl.col("x").cast(enum))
    smp_e = sample.with_columns(pl.col("x").cast(enum))
    r2 = sdckit.register_risk(reg_e, smp_e, ["x", "y"], sampling_fraction=0.5, model="independence")
    assert r2.categories["x"] == ("q", "p", "r", "s") and r2.n_cells == 8
    assert r2.tau1_star == pytest.approx(r.tau1_star, rel=1e-8)  # an empty declared category changes nothing


# ---------------------------------------------------------------------------------------------
# errors and warnings
@pytest.fixture
def files():
    return _random_files(1)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "sampling_fraction: neither"),
        ({"sampling_fraction": 1.5}, "sampling_fraction: got 1.5"),
        ({"sampling_fraction": 0}, "sampling_fraction: got 0"),
        ({"sampling_fraction": 0.3, "approach": "C"}, "approach: got 'C'"),
        ({"sampling_fraction": 0.3, "method": "bfgs"}, "method: got 'bfgs'"),
        ({"sampling_fraction": 0.3, "tol": 0}, "tol: got 0"),
        ({"sampling_fraction": 0.3, "max_iter": 0}, "max_iter: got 0"),
        ({"sample_weight": "nope"}, "sample_weight: column"),
        ({"sampling_fraction": 0.3, "model": "a*zz"}, "model: "),
        ({"sampling_fraction": 0.3, "membership_model": "a*zz"}, "membership_model: "),
        ({"sampling_fraction": 0.3, "membership_model": "auto"}, "membership_model: 'auto'"),
    ],
)
def test_argument_errors(files, kwargs, match):
    register, sample = files
    with pytest.raises(sdckit.SdcError, match=match):
        sdckit.register_risk(register, sample, ["a", "b", "c"], **kwargs)


def test_bad_weights_name_sample_weight(files):
    register, sample = files
    bad = sample.with_columns(w=pl.when(pl.int_range(pl.len()) == 0).then(-1.0).otherwise(pl.col("w")))
    with pytest.raises(sdckit.SdcError, match="sample_weight: column w has 1 negative value"):
        sdckit.register_risk(register, bad, ["a", "b", "c"], sample_weight="w")


def test_key_missing_in_one_file(files):
    register, sample = files
    with pytest.raises(sdckit.SdcError, match=r"keys \(sample\): column\(s\) a not found"):
        sdckit.register_risk(register, sample.drop("a"), ["a", "b", "c"], sampling_fraction=0.3)
    with pytest.raises(sdckit.SdcError, match=r"keys \(register\): column\(s\) c not found"):
        sdckit.register_risk(register.drop("c"), sample, ["a", "b", "c"], sampling_fraction=0.3)


def test_key_types_must_agree(files):
    register, sample = files
    with pytest.raises(sdckit.SdcError, match="keys: column c has type .* in register but .* in sample"):
        sdckit.register_risk(register, sample.with_columns(pl.col("c").cast(pl.String)), ["a", "b", "c"], sampling_fraction=0.3)  # fmt: skip


def test_register_category_absent_from_the_sample():
    register = pl.DataFrame({"x": ["p", "q", "secret"], "y": ["1", "2", "2"]})
    sample = pl.DataFrame({"x": ["p", "q", "q"], "y": ["1", "2", "1"]})
    with pytest.raises(
        sdckit.SdcError, match="keys: 1 category of x occurs in the register but in no sample record"
    ) as e:
        sdckit.register_risk(register, sample, ["x", "y"], sampling_fraction=0.5)
    assert "secret" not in str(e.value)  # never a record value


def _interaction_files():
    """Every category of a and b in both files, but the combination (a2, b2) only in the register."""
    register = pl.DataFrame({"a": ["a1", "a1", "a2", "a2", "a2"], "b": ["b1", "b2", "b1", "b2", "b2"]})
    sample = pl.DataFrame({"a": ["a1", "a1", "a2", "a1", "a2"], "b": ["b1", "b2", "b1", "b2", "b1"]})
    return register, sample


def test_separation_in_approach_b_names_the_term_not_the_level():
    register, sample = _interaction_files()
    with pytest.raises(sdckit.SdcError, match=r"membership_model: a:b \(1 level\(s\)\) .*\(separation") as e:
        sdckit.register_risk(register, sample, ["a", "b"], sampling_fraction=0.5, membership_model="a*b")
    assert "a2" not in str(e.value) and "b2" not in str(e.value)


def test_approach_a_warns_for_cells_with_members_and_no_fitted_population():
    register, sample = _interaction_files()
    with pytest.warns(sdckit.SdcWarning, match=r"approach A: 1 cell\(s\) with register members have a fitted"):
        r = sdckit.register_risk(register, sample, ["a", "b"], sampling_fraction=0.5, approach="A", model="saturated")
    assert r.n_zero_lambda == 1


def test_non_convergence_names_the_approach_and_the_model(files):
    register, sample = files
    for approach in ("A", "B"):
        with pytest.raises(sdckit.SdcError, match=f"membership_model: approach {approach}: .* a \\+ b \\+ c did not converge in 1 iter"):  # fmt: skip
            sdckit.register_risk(
                register, sample, ["a", "b", "c"], sampling_fraction=0.3, approach=approach, max_iter=1
            )


def test_propensity_towards_one_is_explained():
    # 60 members with z = 1 but the sample represents only 2 * 20 = 40 people there
    register = pl.DataFrame({"z": ["0"] * 10 + ["1"] * 60})
    sample = pl.DataFrame({"z": ["0"] * 20 + ["1"] * 2, "w": [20.0] * 22})
    with pytest.raises(
        sdckit.SdcError, match="approach B: .* has no finite maximum: fitted membership probabilities approach 1"
    ):
        sdckit.register_risk(register, sample, ["z"], sample_weight="w", model="saturated")


def test_missing_key_values_warn_with_counts_per_file(files):
    register, sample = files
    sample = sample.with_columns(b=pl.when(pl.int_range(pl.len()) < 2).then(None).otherwise(pl.col("b")))
    with pytest.warns(sdckit.SdcWarning, match="excluded: 0 of the register, 2 of the sample"):
        r = sdckit.register_risk(register, sample, ["a", "b", "c"], sampling_fraction=0.3, model="independence")
    assert r.n_sample_excluded == 2 and r.n_sample == sample.height


# ---------------------------------------------------------------------------------------------
# command line
def test_cli_register(tmp_path, capsys):
    register, sample = _random_files(2)
    rp, sp, out = tmp_path / "register.csv", tmp_path / "sample.csv", tmp_path / "out.json"
    register.write_csv(rp)
    sample.write_csv(sp)
    args = ["register", str(rp), str(sp), "--keys", "a,b,c", "--sample-weight", "w", "--approach", "both"]
    rc = main([*args, "--model", "independence", "--json", str(out), "--no-progress"])
    assert rc == 0
    assert "Re-identification risk of register members" in capsys.readouterr().out
    payload = json.loads(out.read_text())["register_risk"]
    # the command reads the key columns as text: the same as the API on text keys
    api = sdckit.register_risk(
        register.with_columns(pl.col("c").cast(pl.String)), sample.with_columns(pl.col("c").cast(pl.String)),
        ["a", "b", "c"], sample_weight="w", approach="both", model="independence",
    )  # fmt: skip
    assert payload["tau2_star"] == pytest.approx(api.tau2_star, rel=1e-12)
    assert payload["approaches"]["A"]["tau1"] == pytest.approx(api.approaches["A"].tau1, rel=1e-12)
    assert main([*args, "--no-progress"][:5] + ["--no-progress"]) == 2  # neither weight nor fraction
    assert "sampling_fraction: neither" in capsys.readouterr().err
    assert main(["register", str(rp), str(sp), "--keys", "a", "--sampling-fraction", "0.3", "--json", str(rp)]) == 2


def test_summary_and_plot():
    F, F1 = _population(seed=3, size=20_000)
    register = _frame(np.repeat(np.arange(F.size), F1))
    f = np.random.default_rng(1).binomial(F, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = sdckit.register_risk(register, _frame(np.repeat(np.arange(F.size), f)), SIM_KEYS, sampling_fraction=0.1, approach="both")  # fmt: skip
    text = str(r.summary())
    assert f"of the {r.n_register_uniques:,} register uniques are population unique (approach B)" in text
    assert "approach A: fits" in text and "membership model (logit)" in text and "<table>" in r.summary().to_html()
    assert repr(r).startswith("<RegisterRiskResult approach=both")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    ax = r.plot()
    assert ax.get_xlabel() == "E(1/F | F^1 = 1)" and len(ax.patches) == 40  # 20 bins per approach
