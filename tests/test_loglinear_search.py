"""The automatic model search of loglinear_risk (bracketing and classic rules), its kernels,
known sampling fractions by stratum, the stability figures and the errors of issue 17.

Accuracy against a known truth: tests/test_loglinear_validation.py (synthetic population) and
tests/test_risk_validation.py (eusilcP calibration)."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import ROOT
from sdckit import SdcError
from sdckit._core import loglinear as ll

sys.path.insert(0, str(ROOT / "benchmarks"))
import loglinear_validation as V  # noqa: E402

KEYS = ["a", "b", "c", "d"]


def _table(seed=0, n=3000):
    """Four keys with an a-b association (b follows a in 70 % of the records)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 6, n))
    return pl.DataFrame({"a": a, "b": b, "c": rng.integers(0, 8, n), "d": rng.integers(0, 5, n)})


# ---------------------------------------------------------------------------------------------
# kernels against oracles


def _criterion_oracle(f, lam, pi):
    """The criterion's formulas written out cell by cell (Skinner & Shlomo 2008, as in the
    library's documentation): a_1 = (1-pi) lam e^-lam, b_1 = (1-pi)^2 lam e^-lam / (2 pi),
    a_2 = e^{-pi lam} r - e^-lam, b_2 = [e^{-pi lam} r - e^-lam (1 + (1-pi) lam / 2)] / (pi lam),
    r = (1 - e^{-(1-pi) lam}) / ((1-pi) lam)."""
    out = {}
    B1 = v1 = B2 = v2 = 0.0
    for fk, lk, pk in zip(f, lam, np.broadcast_to(pi, lam.shape)):
        if lk <= 0:
            continue
        m, mu = pk * lk, (1 - pk) * lk
        r = (1 - math.exp(-mu)) / mu if mu > 0 else 1.0
        a1 = (1 - pk) * lk * math.exp(-lk)
        b1 = (1 - pk) ** 2 * lk * math.exp(-lk) / (2 * pk)
        a2 = math.exp(-m) * r - math.exp(-lk)
        b2 = (math.exp(-m) * r - math.exp(-lk) * (1 + mu / 2)) / m
        d, d2 = fk - m, (fk - m) ** 2 - fk
        B1, v1 = B1 + a1 * d + b1 * d2, v1 + a1 * a1 * m + 2 * b1 * b1 * m * m
        B2, v2 = B2 + a2 * d + b2 * d2, v2 + a2 * a2 * m + 2 * b2 * b2 * m * m
    out.update(B1=B1, v1=v1, Z1=B1 / math.sqrt(v1), B2=B2, v2=v2, Z2=B2 / math.sqrt(v2))
    return out


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.sampled_from([3, 64, 16384]))
def test_bias_criterion_in_chunks_equals_the_cell_by_cell_formulas(seed, per_cell_pi, chunk):
    rng = np.random.default_rng(seed)
    K = 200
    lam = rng.gamma(0.5, 4.0, K) * (rng.random(K) > 0.2)  # some cells with lambda = 0
    pi = rng.uniform(0.01, 0.9, K) if per_cell_pi else 0.1
    f = rng.poisson(np.broadcast_to(pi, (K,)) * lam).astype(float)
    got = ll.bias_criterion(f, lam, pi, chunk=chunk)
    want = _criterion_oracle(f, lam, pi)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-9, abs=1e-12), k
    assert ll.bias_criterion(f, lam, pi, "2", chunk=chunk).keys() == {"B2", "v2", "Z2"}


def test_geometric_blend_ends_and_zero_cells():
    a, b = np.array([1.0, 4.0, 0.0, 2.0]), np.array([4.0, 1.0, 3.0, 0.0])
    np.testing.assert_allclose(ll.geometric_blend(a, b, 0.0), [1, 4, 0, 0])
    np.testing.assert_allclose(ll.geometric_blend(a, b, 1.0), [4, 1, 0, 0])
    np.testing.assert_allclose(ll.geometric_blend(a, b, 0.5), [2, 2, 0, 0])  # sqrt(1*4), sqrt(4*1)


def test_ipf_step_and_margin_deviance_by_hand():
    # 2 x 2 table, target (3, 1 / 1, 3), fitted 2 everywhere (independence). The a:b margin is the
    # table itself: one IPF step gives the target; G^2 = 2 * (3 ln 1.5 + 1 ln 0.5) * 2 = 3.5835...
    target = np.array([3.0, 1.0, 1.0, 3.0])
    mu = np.full(4, 2.0)
    np.testing.assert_allclose(ll.ipf_step(target, mu, (2, 2), (0, 1)), target)
    assert ll.margin_deviance(target, mu, (2, 2), (0, 1)) == pytest.approx(4 * (3 * math.log(1.5) + math.log(0.5)))
    # a one-way margin is already matched: no change, no deviance
    np.testing.assert_allclose(ll.ipf_step(target, mu, (2, 2), (0,)), mu)
    assert ll.margin_deviance(target, mu, (2, 2), (1,)) == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# the bracketing search


def test_true_model_is_found_and_kept():
    # the table is built with one association (a:b); the default search adds it, finds no other
    # term supported and stops there, without blending in a spurious term to push Z further
    r = sdckit.loglinear_risk(_table(), KEYS, sampling_fraction=0.05)
    assert [p["added"] for p in r.path] == [None, "a:b"] and r.blend is None
    assert r.formula == "a + b + c + d + a:b"


def test_bracketing_search_lands_on_the_target():
    # every term a candidate (term_test=None): the search goes past the true model to Z = -0.5
    r = sdckit.loglinear_risk(_table(), KEYS, sampling_fraction=0.05, selection={"term_test": None, "candidates": 3})
    assert r.search == "bracket" and r.blend is not None
    assert r.path[1]["added"] == "a:b"  # the real association is found first
    assert abs(r.gof["Z2"] - (-0.5)) < 0.01  # w solves Z(w) = z_target (Brent, xtol 1e-4 on w)
    w = r.blend["weight"]
    assert 0.0 <= w <= 1.0 and r.blend["term"] == r.path[-1]["added"]
    before, last = r.path[-2], r.path[-1]
    assert before["Z2"] > -0.5 >= last["Z2"]  # the two models bracket the target
    lo, hi = sorted([before["tau2"], last["tau2"]])
    assert lo - 1e-9 <= r.tau2 <= hi + 1e-9
    assert last["tau2_blend"] == pytest.approx(r.tau2)
    assert r.model_choice.endswith(f"scaled by w = {w:.3f}")
    d = r.to_dict()["search"]
    assert d["rule"] == "bracket" and d["blend"]["weight"] == w


def test_per_record_risks_of_the_blend_sum_to_tau():
    r = sdckit.loglinear_risk(_table(1), KEYS, sampling_fraction=0.05)
    su = r.fk == 1
    assert np.nansum(r.risk[su]) == pytest.approx(r.tau2, rel=1e-12)
    assert np.nansum(r.p_unique[su]) == pytest.approx(r.tau1, rel=1e-12)


def test_target_reached_by_the_main_effects_stops_there():
    r = sdckit.loglinear_risk(_table(), KEYS, sampling_fraction=0.05, selection={"z_target": 1e6})
    assert len(r.path) == 1 and r.blend is None and r.formula == "a + b + c + d"
    text = str(r.summary())
    assert "(tau2, bracketing)" in text and "nan" not in text


def test_every_candidate_classic_rule():
    # the classic Skinner-Shlomo rule: stop at |Z| <= z_crit, the rejected overshoot not kept
    r = sdckit.loglinear_risk(
        _table(), KEYS, sampling_fraction=0.05, selection={"search": "skinner-shlomo", "candidates": None}
    )
    assert r.blend is None and r.search == "skinner-shlomo"
    accepted = [p for p in r.path if p["accepted"]]
    assert abs(accepted[-1]["Z2"]) <= 1.96 or not r.path[-1]["accepted"]
    assert r.gof["Z2"] == pytest.approx(accepted[-1]["Z2"])


def test_runner_up_is_reported():
    # the search before issue 24 (term_test=None, candidates=3), kept as an option.
    # oracle: step 1 scores the shortlisted two-way terms by the Z_2 of one IPF step from the
    # main-effects fit (for independence IPF is exact after one cycle: the closed form
    # mu = n prod(n_j / n)); recomputed here from the kernels, the runner-up's Z is the
    # second-smallest |Z| and the chosen term's the smallest
    d = _table()
    r = sdckit.loglinear_risk(d, KEYS, sampling_fraction=0.05, selection={"term_test": None, "candidates": 3})
    step1 = r.path[1]
    codes = np.column_stack([d[k].rank("dense").cast(pl.Int64).to_numpy() - 1 for k in KEYS])
    shape = r.levels
    f = np.bincount(ll.cell_index(codes, shape), minlength=math.prod(shape)).astype(float)
    mu0, _, _ = ll.ipf(f, shape, [(0,), (1,), (2,), (3,)])
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    gain = {t: ll.margin_deviance(f, mu0, shape, t) for t in pairs}
    shortlist = sorted(pairs, key=lambda t: -gain[t])[:3]
    z = {t: ll.bias_criterion(f, ll.ipf_step(f, mu0, shape, t) / 0.05, 0.05, "2")["Z2"] for t in shortlist}
    ranked = sorted(shortlist, key=lambda t: abs(z[t]))
    assert step1["added"] == ":".join(KEYS[j] for j in ranked[0])
    assert step1["runner_up"] == ":".join(KEYS[j] for j in ranked[1])
    assert step1["runner_up_Z"] == pytest.approx(z[ranked[1]], rel=1e-9)
    assert "runner-up" in str(r.summary())


def _main_effects_fit(d, shape):
    codes = np.column_stack([d[k].rank("dense").cast(pl.Int64).to_numpy() - 1 for k in KEYS])
    f = np.bincount(ll.cell_index(codes, shape), minlength=math.prod(shape)).astype(float)
    mu0, _, _ = ll.ipf(f, shape, [(0,), (1,), (2,), (3,)])
    return f, mu0


def test_default_search_adds_the_most_supported_term():
    # oracle: the support (G^2 - df) / sqrt(2 df) of every two-way term against the
    # main-effects fit, recomputed from the kernels; the default adds the most supported term
    # first (a:b, the association the table is built with) and names the next one runner-up
    # with its one-step Z
    d = _table()
    r = sdckit.loglinear_risk(d, KEYS, sampling_fraction=0.05)
    f, mu0 = _main_effects_fit(d, r.levels)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]

    def support(t):
        return ll.deviance_support(
            ll.margin_deviance(f, mu0, r.levels, t), ll.effective_df(lambda s: ll.margin(f, r.levels, s), t)
        )

    ranked = sorted(pairs, key=lambda t: -support(t))
    assert ranked[0] == (0, 1) and r.path[1]["added"] == "a:b"
    if support(ranked[1]) > 2.0:
        z = ll.bias_criterion(f, ll.ipf_step(f, mu0, r.levels, ranked[1]) / 0.05, 0.05, "2")["Z2"]
        assert r.path[1]["runner_up"] == ":".join(KEYS[j] for j in ranked[1])
        assert r.path[1]["runner_up_Z"] == pytest.approx(z, rel=1e-9)
    else:
        assert r.path[1]["runner_up"] is None
    # every added term was supported when it was added: independent keys c and d never enter
    assert all("c:d" != p["added"] for p in r.path)


def test_unsupported_terms_are_not_added():
    # four independent keys: no two-way term is supported at a high threshold, so the search
    # stops at the main effects (no step, no blend) whatever its Z; with the test switched off
    # (term_test=None) the same search does add terms while Z > -0.5
    rng = np.random.default_rng(5)
    d = pl.DataFrame({k: rng.integers(0, 5, 2000) for k in KEYS})
    strict = sdckit.loglinear_risk(d, KEYS, sampling_fraction=0.1, selection={"term_test": 50.0})
    assert len(strict.path) == 1 and strict.blend is None
    assert all(len(t) == 1 for t in strict.terms)
    loose = sdckit.loglinear_risk(d, KEYS, sampling_fraction=0.1, selection={"term_test": None, "z_target": -50.0})
    assert len(loose.path) > 1


def test_effective_df_by_hand():
    # full margins: (L_a - 1)(L_b - 1) = 2 * 3 = 6; three-way: 1 * 2 * 3 = 6
    full = np.ones((3, 4))
    assert ll.effective_df(lambda s: full.sum(axis=tuple(a for a in (0, 1) if a not in s)), (0, 1)) == 6
    cube = np.ones((2, 3, 4))
    assert ll.effective_df(lambda s: cube.sum(axis=tuple(a for a in (0, 1, 2) if a not in s)), (0, 1, 2)) == 6
    # a 3 x 4 margin with 5 empty cells (7 non-empty), all rows and columns used:
    # 7 - 3 - 4 + 1 = 1; a diagonal 3 x 3 margin (a determines b): 3 - 3 - 3 + 1 = -2 -> at least 1
    sparse = np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 2.0]])
    assert ll.effective_df(lambda s: sparse.sum(axis=tuple(a for a in (0, 1) if a not in s)), (0, 1)) == 1
    diag = np.eye(3)
    assert ll.effective_df(lambda s: diag.sum(axis=tuple(a for a in (0, 1) if a not in s)), (0, 1)) == 1
    # a 4 x 4 margin with two empty rows... of the table: N(a) = 2, N(b) = 4, N(ab) = 6: 6 - 2 - 4 + 1 = 1
    part = np.array([[1, 1, 1, 0], [0, 0, 0, 0], [1, 0, 1, 1.0], [0, 0, 0, 0]])
    assert ll.effective_df(lambda s: part.sum(axis=tuple(a for a in (0, 1) if a not in s)), (0, 1)) == 1


def test_deviance_support_by_hand():
    # (G^2 - df) / sqrt(2 df): (58 - 8) / 4 = 12.5; G^2 = df gives 0
    assert ll.deviance_support(58.0, 8) == pytest.approx(12.5, rel=1e-15)
    assert ll.deviance_support(7.0, 7) == 0.0


def test_illinois_root_by_hand():
    from sdckit.risk._loglinear_steps import _illinois

    # g(w) = 0.3 - w^3 decreasing on [0, 1] with its root at 0.3^(1/3) = 0.66943...
    assert _illinois(lambda w: 0.3 - w**3, 0.0, 1.0, xtol=1e-10) == pytest.approx(0.3 ** (1 / 3), abs=1e-9)
    # no sign change (g > 0 at both ends): the upper end, as documented
    assert _illinois(lambda w: 1.0 + w, 0.0, 1.0, xtol=1e-4) == 1.0


def test_tau1_criterion_drives_the_search_on_z1():
    # every term a candidate, so that the search goes on to the target (the true model a:b
    # alone has Z_1 above -0.5)
    r = sdckit.loglinear_risk(
        _table(), KEYS, sampling_fraction=0.05, selection={"criterion": "tau1", "term_test": None}
    )
    assert r.criterion == "tau1" and abs(r.gof["Z1"] - (-0.5)) < 0.01


# ---------------------------------------------------------------------------------------------
# stability


def test_stability_is_reproducible_and_bounded():
    kw = dict(sampling_fraction=0.05, selection={"stability": 4, "seed": 11})
    r1 = sdckit.loglinear_risk(_table(), KEYS, **kw)
    r2 = sdckit.loglinear_risk(_table(), KEYS, **kw)
    assert r1.stability == r2.stability
    st_ = r1.stability
    assert st_["subsamples"] == 4 and st_["seed"] == 11 and 0.0 <= st_["same_model"] <= 1.0
    assert st_["inclusion"]["a:b"] == 1.0  # the strong association is found in every subsample
    assert all(0 < v <= 1 for v in st_["inclusion"].values())
    q = st_["share_tau2_uniques"]
    assert 0 <= q["q10"] <= q["q50"] <= q["q90"] <= 1
    assert "Stability of the model choice" in str(r1.summary())
    assert sdckit.loglinear_risk(_table(), KEYS, sampling_fraction=0.05).stability is None
    fresh = sdckit.loglinear_risk(_table(), KEYS, sampling_fraction=0.05, selection={"stability": 1})
    assert isinstance(fresh.stability["seed"], int)  # a fresh seed is recorded


# ---------------------------------------------------------------------------------------------
# known fractions by stratum


def _stratified_fractions():
    return {"a": {str(i): f for i, f in enumerate([0.02, 0.04, 0.06, 0.08, 0.1, 0.2])}}


def test_stratum_fractions_are_an_offset_in_the_fit():
    # the independence model with offset log pi_k: IPF started from pi_k against the Poisson GLM
    # with that offset (oracle: IRLS), on the table of a sample
    d = _table(3).with_columns(pl.col("a").cast(pl.String))
    fr = _stratified_fractions()
    r = sdckit.loglinear_risk(d, KEYS, sampling_fraction=fr, model="independence", fit={"tol": 1e-10})
    shape = r.levels
    codes = np.column_stack([d[k].rank("dense").cast(pl.Int64).to_numpy() - 1 for k in KEYS])
    f = np.bincount(ll.cell_index(codes, shape), minlength=math.prod(shape)).astype(float)
    pi_a = np.array([fr["a"][str(i)] for i in range(6)])
    pik = np.broadcast_to(pi_a.reshape(6, 1, 1, 1), shape).reshape(-1)
    X, _ = ll.design_matrix(shape, [(0,), (1,), (2,), (3,)])
    mu, _, _, conv = ll.poisson_irls(X, f, offset=np.log(pik), tol=1e-14)
    assert conv
    lam = mu / pik
    got = r.lam
    want = lam[ll.cell_index(codes, shape)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert r.sampling == "given" and r.sampling_fraction is None
    assert r.sampling_fractions == {"a": {str(i): v for i, v in fr["a"].items()}}
    assert r.to_dict()["sampling_fractions"]["a"]["5"] == 0.2


def test_stratified_sample_of_a_known_population():
    # 10^6 individuals from a log-linear model with known parameters (the synthetic population of
    # the log-linear validation); sampled with fractions 0.01 ... 0.06 by the categories of v0,
    # fitted with the true model: with the fractions by stratum tau_1 / tau_2 are within 6 % of
    # the truth on average over 4 samples; a single fraction n / N is badly biased instead.
    lam = V.synthetic_lambda()
    rng = np.random.default_rng(5)
    fr = np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06])
    pik = np.broadcast_to(fr.reshape(6, *[1] * 5), V.SYN_CARDS).reshape(-1)
    true_model = [(V.SYN_KEYS[a], V.SYN_KEYS[b]) for a, b in V.SYN_TRUE_MODEL]
    enums = {k: pl.Enum([str(i) for i in range(L)]) for k, L in zip(V.SYN_KEYS, V.SYN_CARDS)}
    rel_known, rel_flat = [], []
    for _ in range(4):
        F = rng.poisson(lam)
        f = rng.binomial(F, pik)
        su = f == 1
        t2 = float(np.sum(1.0 / F[su]))
        cell = np.repeat(np.arange(lam.size), f)
        codes = np.unravel_index(cell, V.SYN_CARDS)
        table = pl.DataFrame({k: c.astype(np.int32) for k, c in zip(V.SYN_KEYS, codes)})
        table = table.with_columns([pl.col(k).cast(pl.String).cast(e) for k, e in enums.items()])
        known = {"v0": {str(i): float(x) for i, x in enumerate(fr)}}
        r = sdckit.loglinear_risk(table, V.SYN_KEYS, sampling_fraction=known, model=true_model)
        rel_known.append(r.tau2 / t2 - 1)
        flat = sdckit.loglinear_risk(table, V.SYN_KEYS, sampling_fraction=table.height / F.sum(), model=true_model)
        rel_flat.append(flat.tau2 / t2 - 1)
    assert abs(np.mean(rel_known)) < 0.06, rel_known
    assert abs(np.mean(rel_flat)) > 2 * abs(np.mean(rel_known)), (rel_flat, rel_known)


def test_matching_design_weights_are_accepted():
    d = _table(3).with_columns(pl.col("a").cast(pl.String))
    fr = _stratified_fractions()
    w = d["a"].replace_strict({k: 1 / v for k, v in fr["a"].items()}, return_dtype=pl.Float64)
    known = sdckit.loglinear_risk(d, KEYS, sampling_fraction=fr, model="2way")
    both = sdckit.loglinear_risk(d.with_columns(w=w), KEYS, weight="w", sampling_fraction=fr, model="2way")
    assert both.tau2 == known.tau2  # the weights are checked, the known fractions used
    calibrated = d.with_columns(w=w * 1.05)  # within 10 %: calibrated weights pass
    sdckit.loglinear_risk(calibrated, KEYS, weight="w", sampling_fraction=fr, model="independence")


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(sampling_fraction={"a": {str(i): 0.1 for i in range(5)}}), "1 category of a without a fraction"),
        (dict(sampling_fraction={"a": {**{str(i): 0.1 for i in range(6)}, "9": 0.1}}), "1 given that a does not"),
        (dict(sampling_fraction={"a": {str(i): 0.0 for i in range(6)}}), r"sampling_fraction\['a'\]"),
        (dict(sampling_fraction={"a": {str(i): 1.5 for i in range(6)}}), r"sampling_fraction\['a'\]"),
        (dict(sampling_fraction={"a": {}, "b": {}}), "names 2 key variables; expected one"),
        (dict(sampling_fraction={"zone": {"1": 0.1}}), "'zone' is not one of them"),
        (dict(sampling_fraction={"a": 0.1}), "expected a dict category -> fraction"),
        (dict(sampling_fraction=-0.1), "sampling_fraction"),
        (dict(sampling_fraction=float("nan")), "sampling_fraction"),
        (dict(sampling_fraction=0.1, selection={"search": "backward"}), "search: got 'backward'"),
        (dict(sampling_fraction=0.1, selection={"z_target": float("nan")}), "z_target"),
        (dict(sampling_fraction=0.1, selection={"candidates": 0}), "candidates"),
        (dict(sampling_fraction=0.1, selection={"term_test": "strict"}), "term_test"),
        (dict(sampling_fraction=0.1, selection={"term_test": float("nan")}), "term_test"),
        (dict(sampling_fraction=0.1, selection={"stability": -1}), "stability"),
        (dict(sampling_fraction=0.1, selection={"stability": 2, "seed": -1}), "seed"),
    ],
)
def test_bad_fractions_and_search_parameters(kwargs, fragment):
    d = _table().with_columns(pl.col("a").cast(pl.String))
    with pytest.raises(SdcError, match=fragment):
        sdckit.loglinear_risk(d, KEYS, **kwargs)


def test_weights_that_do_not_match_the_declared_fractions():
    d = _table().with_columns(pl.col("a").cast(pl.String))
    fr = _stratified_fractions()
    w = d["a"].replace_strict({k: 1 / v for k, v in fr["a"].items()}, return_dtype=pl.Float64)
    bad = d.with_columns(w=pl.when(pl.col("a") == "5").then(w * 3).otherwise(w))  # one stratum off
    with pytest.raises(SdcError, match=r"weight: the weights do not match .* in 1 of 6 categories of a"):
        sdckit.loglinear_risk(bad, KEYS, weight="w", sampling_fraction=fr)
    with pytest.raises(
        SdcError, match=r"match the declared sampling fraction: they sum to 3000 where n / sampling_fraction = 60000"
    ):
        sdckit.loglinear_risk(d.with_columns(w=pl.lit(1.0)), KEYS, weight="w", sampling_fraction=0.05)


def test_model_that_cannot_be_fitted_names_its_term():
    # a non-hierarchical model (Poisson GLM) whose a:b margin has an empty cell: with one
    # iteration allowed it has not converged, and the error names the term with the empty margin
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 400), rng.integers(0, 3, 400)
    b[(a == 0) & (b == 2)] = 1
    d = pl.DataFrame({"a": a, "b": b, "c": rng.integers(0, 4, 400)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(SdcError, match=r"model: the Poisson GLM .* a:b \(1 empty margin cells\)"):
            sdckit.loglinear_risk(d, ["a", "b", "c"], sampling_fraction=0.1, model="a:b + c", fit={"max_iter": 1})
    big = pl.DataFrame({"x": np.arange(6000) % 80, "y": np.arange(6000) // 75, "z": np.arange(6000) % 3})
    with pytest.raises(SdcError, match=r"term x:y alone has 6,241"):
        sdckit.loglinear_risk(big, ["x", "y", "z"], sampling_fraction=0.1, model="x:y + z")


def test_cli_search_options(tmp_path, capsys):
    from sdckit.cli import main

    src = tmp_path / "t.csv"
    _table().write_csv(src)
    out = tmp_path / "r.json"
    args = ["loglinear", str(src), "--keys", "a,b,c,d", "--sampling-fraction", "0.05", "--no-progress"]
    # --term-test -1000: every term a candidate, so that the search reaches the target
    rc = main(
        [*args, "--stability", "2", "--seed", "4", "--z-target", "-1", "--term-test", "-1000", "--json", str(out)]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "bracketing Z = -1" in text and "Stability of the model choice" in text
    import json

    payload = json.loads(out.read_text())["loglinear_risk"]
    assert payload["search"]["blend"]["z_target"] == -1 and payload["stability"]["seed"] == 4
    assert abs(payload["gof"]["Z2"] + 1) < 0.01
    rc = main([*args, "--search", "skinner-shlomo", "--candidates", "2"])
    assert rc == 0 and "Skinner-Shlomo stop" in capsys.readouterr().out
    assert main([*args, "--candidates", "0"]) != 0
    assert "candidates" in capsys.readouterr().err
    # the default search stops at the true model (a:b) without a blend
    rc = main([*args, "--json", str(out), "--overwrite"])
    assert rc == 0 and json.loads(out.read_text())["loglinear_risk"]["search"]["blend"] is None


# ---------------------------------------------------------------------------------------------
# the individual risk points to the calibrated estimate


def test_individual_risk_summary_and_report_point_to_the_calibration():
    from sdckit.results.individual import CALIBRATION_NOTE

    d = _table().with_columns(w=pl.lit(20.0))
    weighted = str(sdckit.individual_risk(d, KEYS, weight="w").summary())
    assert "24 to 71 % below" in weighted and "loglinear_risk" in weighted
    assert CALIBRATION_NOTE[:40] in weighted
    census = str(sdckit.individual_risk(d, KEYS).summary())
    assert "loglinear_risk" not in census  # a census: the risk 1/f_k is exact
    page = sdckit.assess(d, sdckit.Scenario(keys=KEYS, weight="w")).to_html()
    assert "24 to 71 % less" in page and "sdckit.loglinear_risk" in page
    assert "24 to 71 % less" not in sdckit.assess(d, sdckit.Scenario(keys=KEYS)).to_html()


# ---------------------------------------------------------------------------------------------
# the one-cycle IPF of decomposable models against the iterated IPF (oracle)
def _synthetic_sample(seed: int, fractions: np.ndarray) -> pl.DataFrame:
    """A sample of the synthetic population of the log-linear validation (a decomposable true
    model), drawn with the fractions by the categories of v0, and the design weights."""
    rng = np.random.default_rng(seed)
    lam = V.synthetic_lambda()
    pik = np.broadcast_to(fractions.reshape(6, *[1] * 5), V.SYN_CARDS).reshape(-1)
    f = rng.binomial(rng.poisson(lam), pik)
    cell = np.repeat(np.arange(lam.size), f)
    codes = np.unravel_index(cell, V.SYN_CARDS)
    table = pl.DataFrame({k: c.astype(np.int32) for k, c in zip(V.SYN_KEYS, codes)})
    return table.with_columns(pl.Series("w", 1.0 / pik[cell]))


@pytest.mark.parametrize("scheme", ["strata", "constant", "weights"])
def test_search_with_one_cycle_fits_equals_iterated_fits(monkeypatch, scheme):
    # the search with the one-cycle fits against the same search with every fit iterated
    # (perfect_sequence disabled): the same terms and blend, tau's equal to rounding; with
    # fractions by stratum the first fit starts from the offset pi_k
    fr = np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06])
    d = _synthetic_sample(11, fr)
    kw = {
        "strata": dict(sampling_fraction={"v0": {str(i): float(x) for i, x in enumerate(fr)}}),
        "constant": dict(sampling_fraction=float(d.height / 1e6)),
        "weights": dict(weight="w", sampling_fraction=None),
    }[scheme]
    calls = []
    ipf = ll.ipf
    monkeypatch.setattr(ll, "ipf", lambda *a, **k: calls.append(k.get("one_cycle", False)) or ipf(*a, **k))
    fast = sdckit.loglinear_risk(d, V.SYN_KEYS, model="auto", **kw)
    assert sum(calls) >= 2  # the one-cycle path was taken
    monkeypatch.setattr(ll, "perfect_sequence", lambda gens: None)
    calls.clear()
    slow = sdckit.loglinear_risk(d, V.SYN_KEYS, model="auto", **kw)
    assert not any(calls)
    assert fast.terms == slow.terms and len(fast.terms) > len(V.SYN_KEYS)
    assert (fast.blend or {}).get("term") == (slow.blend or {}).get("term")
    for a, b in ((fast.tau1, slow.tau1), (fast.tau2, slow.tau2)):
        assert a == pytest.approx(b, rel=1e-9)
    np.testing.assert_allclose(fast.lam, slow.lam, rtol=1e-8)
