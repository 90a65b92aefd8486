"""How sure the log-linear estimate is (issue 39): the conditional variances against a brute
force sum, the interval that carries the model choice (its coverage on a known population, its
bounds), the weak-estimate warning exactly in its conditions, and the bound on a term's
parameters."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

import sdckit
from sdckit import SdcWarning
from sdckit._core import loglinear as ll


# ---------------------------------------------------------------------------------------------
# the variances of 1[F = 1] and 1/F given mu
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 2000.0))
def test_uniqueness_variances_equal_the_poisson_sums(mu):
    """Var(1[F = 1]) and Var(1/F) for F - 1 ~ Poisson(mu) against the sums over the Poisson
    probabilities (to far in the tail)."""
    x = np.arange(0, int(mu + 60 * math.sqrt(mu) + 200))
    pm = poisson.pmf(x, mu)
    e1, e2 = float(np.sum(pm / (x + 1))), float(np.sum(pm / (x + 1) ** 2))
    v1, v2 = ll.uniqueness_variances(np.array([mu]))
    assert v1[0] == pytest.approx(math.exp(-mu) * (1 - math.exp(-mu)), rel=1e-9, abs=1e-300)
    assert v2[0] == pytest.approx(e2 - e1**2, rel=1e-5, abs=1e-15)


def test_uniqueness_variances_hand_values():
    """mu = 0: F = 1 surely, both variances 0. mu = 1: E(1/F) = 1 - 1/e = 0.632121,
    E(1/F^2) = e^-1 (Ei(1) - gamma) = e^-1 (1.895118 - 0.577216) = 0.484829, so
    Var(1/F) = 0.484829 - 0.399577 = 0.085253."""
    v1, v2 = ll.uniqueness_variances(np.array([0.0, 1.0]))
    assert v1[0] == 0 and v2[0] == 0
    assert v2[1] == pytest.approx(0.0852527, abs=1e-6)
    assert v1[1] == pytest.approx(math.exp(-1) * (1 - math.exp(-1)))


# ---------------------------------------------------------------------------------------------
# a known population: the synthetic model of the validation grid, small
CARDS = (6, 14, 2, 6, 10)


def _population(seed=3, N=200_000):
    rng = np.random.default_rng(seed)
    loglam = np.zeros(CARDS)
    for j, L in enumerate(CARDS):
        loglam += np.sort(rng.normal(0, 0.9, L))[::-1].reshape([L if i == j else 1 for i in range(len(CARDS))])
    loglam += rng.normal(0, 0.8, (CARDS[0], CARDS[1])).reshape(CARDS[0], CARDS[1], 1, 1, 1)
    lam = np.exp(loglam).reshape(-1)
    F = rng.poisson(lam * N / lam.sum())
    cell = np.repeat(np.arange(F.size), F)
    return cell, F


def _sample(cell, F, fraction, rng):
    take = rng.random(cell.size) < fraction
    c = cell[take]
    f = np.bincount(c, minlength=F.size)
    su = f == 1
    codes = np.unravel_index(c, CARDS)
    data = pl.DataFrame({f"v{j}": codes[j].astype(str) for j in range(len(CARDS))})
    return data, float(np.sum(su & (F == 1))), float(np.sum(1.0 / F[su]))


def test_interval_covers_the_truth_on_a_known_population():
    """40 Bernoulli samples of about 2,000 records from a population of 200,000 drawn from a
    known log-linear model: the 95 % interval of tau_2 (with the model choice) covers the true
    tau_2 in at least 32 (80 %; at a true rate of 95 % fewer than 32 happen with probability
    below 1e-4), and always contains the estimate."""
    cell, F = _population()
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(40):
        data, _, t2 = _sample(cell, F, 0.01, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SdcWarning)
            r = sdckit.loglinear_risk(data, list(data.columns), sampling_fraction=0.01)
        lo, hi = r.interval["tau2"]
        assert lo <= r.tau2 <= hi
        covered += lo <= t2 <= hi
    assert covered >= 32


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.005, 0.02, 0.1]), st.sampled_from(["auto", "independence"]))
def test_interval_bounds(seed, fraction, model):
    """Both intervals lie in [0, n_1], contain the estimate; the parts are reported."""
    cell, F = _population(seed=seed % 7, N=50_000)
    data, _, _ = _sample(cell, F, fraction, np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SdcWarning)
        r = sdckit.loglinear_risk(data, list(data.columns), sampling_fraction=fraction, model=model)
    for key, value in (("tau1", r.tau1), ("tau2", r.tau2)):
        lo, hi = r.interval[key]
        assert 0.0 <= lo <= value <= hi <= r.n_sample_uniques
        assert set(r.interval[f"{key}_parts"]) == {"counts_sd", "model_log_sd", "sparse_log_sd"}
    if model != "auto":  # no search path: no model-choice part
        assert r.interval["tau2_parts"]["model_log_sd"] == 0.0


def test_interval_is_in_the_summary_and_the_dict():
    cell, F = _population()
    data, _, _ = _sample(cell, F, 0.05, np.random.default_rng(1))
    r = sdckit.loglinear_risk(data, list(data.columns), sampling_fraction=0.05)
    assert "tau_2, 95 % interval, with the model choice" in str(r.summary())
    d = r.to_dict()
    assert d["interval"]["tau2"][0] <= d["tau2"] <= d["interval"]["tau2"][1]
    assert d["weak"] == []


# ---------------------------------------------------------------------------------------------
# the weak-estimate warning: in each condition, and in none outside them
def _weak_messages(data, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = sdckit.loglinear_risk(data, list(data.columns), **kw)
    msgs = [
        str(w.message)
        for w in caught
        if issubclass(w.category, SdcWarning) and "may be substantially" in str(w.message)
    ]
    return r, msgs


def test_no_warning_outside_the_conditions():
    """10,000 records, a model with fewer parameters than records, tau_2 well above 10."""
    cell, F = _population()
    data, _, _ = _sample(cell, F, 0.05, np.random.default_rng(2))
    r, msgs = _weak_messages(data, sampling_fraction=0.05)
    assert r.n_used >= 5000 and r.n_parameters <= r.n_used and r.tau2 >= 10
    assert msgs == [] and r.weak == ()


def test_warning_for_a_small_sample_gives_the_interval():
    cell, F = _population()
    data, _, _ = _sample(cell, F, 0.01, np.random.default_rng(3))
    r, msgs = _weak_messages(data, sampling_fraction=0.01)
    assert r.n_used < 5000
    assert len(msgs) == 1 and "the sample is small" in msgs[0]
    lo, hi = r.interval["tau2"]
    assert f"{lo:.4g} to {hi:.4g}" in msgs[0]
    assert "weak estimate" in str(r.summary()) and r.to_dict()["weak"] == list(r.weak)


def test_warning_for_more_parameters_than_records():
    """6,000 records, the saturated model of a 30 x 30 x 10 table (9,000 parameters)."""
    rng = np.random.default_rng(4)
    data = pl.DataFrame({k: rng.integers(0, L, 6000).astype(str) for k, L in (("a", 30), ("b", 30), ("c", 10))})
    r, msgs = _weak_messages(data, sampling_fraction=0.1, model="saturated")
    assert r.n_used >= 5000 and r.n_parameters > r.n_used
    assert len(msgs) == 1 and "more parameters" in msgs[0] and "the sample is small" not in msgs[0]


def test_warning_for_few_expected_matches():
    """6,000 records of three binary keys at 1/10: no sample unique worth the name."""
    rng = np.random.default_rng(5)
    data = pl.DataFrame({k: rng.integers(0, 2, 6000).astype(str) for k in "abc"})
    r, msgs = _weak_messages(data, sampling_fraction=0.1)
    assert r.tau2 < 10 and r.n_used >= 5000
    assert len(msgs) == 1 and "expected number of correct matches is small" in msgs[0]


# ---------------------------------------------------------------------------------------------
# no oversized term
def _oversized_case():
    """2,000 records; a and b (60 categories each) strongly associated: a:b has 59 x 59 =
    3,481 parameters (effective df well above 2,000 records after the empty cells)."""
    rng = np.random.default_rng(6)
    a = rng.integers(0, 60, 2000)
    b = np.where(rng.random(2000) < 0.7, a, rng.integers(0, 60, 2000))
    c = rng.integers(0, 3, 2000)
    return pl.DataFrame({"a": a.astype(str), "b": b.astype(str), "c": c.astype(str)})


def test_a_term_with_more_parameters_than_records_does_not_enter():
    data = _oversized_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SdcWarning)
        free = sdckit.loglinear_risk(
            data, ["a", "b", "c"], sampling_fraction=0.01, selection={"records_per_parameter": None}
        )
        bounded = sdckit.loglinear_risk(data, ["a", "b", "c"], sampling_fraction=0.01)
    assert ("a", "b") in free.terms  # the support test alone lets it in
    assert ("a", "b") not in bounded.terms


@pytest.mark.parametrize("bad", [0, -1.0, "many"])
def test_records_per_parameter_bad_values(bad):
    data = _oversized_case()
    with pytest.raises(sdckit.SdcError, match="records_per_parameter"):
        sdckit.loglinear_risk(data, ["a", "b", "c"], sampling_fraction=0.01, selection={"records_per_parameter": bad})
