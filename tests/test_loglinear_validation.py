"""Validation of loglinear_risk against a known truth (issue 5 acceptance; spec C.4).

The generators live in benchmarks/loglinear_validation.py (which runs the full 100 samples);
here fewer samples keep the suite fast. Truth: tau_1 = #{k: f_k = 1, F_k = 1} and
tau_2 = sum_{k: f_k = 1} 1/F_k computed from the known population.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import loglinear_validation as V  # noqa: E402


def test_synthetic_population_recovers_truth():
    # 10^6 individuals from a log-linear model with known parameters (6 keys: 6, 14, 2, 6, 16, 10
    # categories, 161,280 cells); Bernoulli samples at pi = 0.02. Acceptance: within 5 % on average.
    est, truth = V.validate_synthetic(n_samples=5, seed=11)
    for k in ("tau1", "tau2"):
        rel = np.mean(est["true model"][k] / truth[k] - 1.0)
        assert abs(rel) < 0.05, (k, rel)
        # all two-way terms: correct but over-parameterised, slight under-estimation (spec C.4 table)
        rel2 = np.mean(est["2way"][k] / truth[k] - 1.0)
        assert -0.10 < rel2 < 0.02, (k, rel2)


@pytest.mark.slow
@pytest.mark.shared_data
def test_eusilc_population_bias_pattern():
    # eusilcP (58,654 persons) as the population, 10 Bernoulli samples at 1/10 (100 in the benchmark).
    est, truth = V.validate_eusilc(n_samples=10, models=("independence", "2way", "saturated", "auto"), seed=5)
    rel = {m: {k: float(np.mean(est[m][k] / truth[k] - 1.0)) for k in ("tau1", "tau2")} for m in est}
    # literature pattern (Skinner & Shlomo 2008; spec C.4): independence over-estimates, saturated under-estimates
    assert rel["independence"]["tau1"] > 0.5 and rel["independence"]["tau2"] > 0.3
    assert rel["saturated"]["tau1"] < -0.5 and rel["saturated"]["tau2"] < -0.3
    # acceptance: the auto model keeps the mean relative bias of tau_2 within 10 %
    assert abs(rel["auto"]["tau2"]) < 0.10, rel["auto"]
    # and it is closer to the truth than the independence model on both measures
    assert abs(rel["auto"]["tau1"]) < abs(rel["independence"]["tau1"])
