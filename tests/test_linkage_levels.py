"""Probabilistic record linkage with comparison levels (Winkler's EM for the multinomial
Fellegi-Sunter model): level codes, pattern counts against enumeration, hand-derived EM fixed
points and level weights, the agree/disagree special case, and a simulation with known links."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import SdcError
from sdckit._core import linkage as binary
from sdckit._core import linkage_levels as core


def test_level_of_cut_points_and_missing():
    # cuts (0, 0.5, 2): |d| = 0 -> 0, 0.3 -> 1, 0.5 -> 1 (closed), 1.9 -> 2, 2.5 -> 3, NaN -> 3
    a = np.array([1.0, 1.0, 1.0, 1.0, 1.0, np.nan])
    b = np.array([1.0, 1.3, 0.5, 2.9, 3.5, 1.0])
    np.testing.assert_array_equal(core.level_of(a, b, np.array([0.0, 0.5, 2.0])), [0, 1, 1, 2, 3, 3])
    # categorical codes: equal and observed -> 0, else 1 (a missing code never agrees)
    np.testing.assert_array_equal(core.level_of(np.array([2, 2, -1]), np.array([2, 3, -1]), None), [0, 1, 1])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 12), st.integers(1, 12))
def test_level_pattern_counts_equal_enumeration(seed, na, nb):
    # distinct rows in blocks against pair-by-pair enumeration; repeated rows and missing values
    rng = np.random.default_rng(seed)
    A = np.column_stack([rng.integers(0, 3, na), rng.integers(0, 4, na) * 0.5, rng.integers(-1, 2, na)]).astype(float)
    B = np.column_stack([rng.integers(0, 3, nb), rng.integers(0, 4, nb) * 0.5, rng.integers(-1, 2, nb)]).astype(float)
    A[rng.random(na) < 0.2, 1] = np.nan
    cuts = [np.array([0.0, 1.0]), np.array([0.0, 0.5, 1.0]), None]
    L = [3, 4, 2]
    got = core.level_pattern_counts(A, B, cuts, L)
    brute = core.level_pattern_counts_bruteforce(A, B, cuts, L)
    np.testing.assert_array_equal(got, brute)
    np.testing.assert_array_equal(core.level_pattern_counts_enumerated(A, B, cuts, L), brute)
    assert got.sum() == na * nb


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 14), st.integers(1, 14), st.integers(0, 2))
def test_cumulative_counts_equal_enumeration(seed, na, nb, which):
    # at most one field with cut points: pairs at or below every level vector (hash join + sorted
    # search), then finite differences; values on a 0.5 grid so that many pairs sit exactly on a
    # cut (the closed bounds a - c <= b <= a + c)
    rng = np.random.default_rng(seed)
    A = np.column_stack([rng.integers(-1, 3, na), rng.integers(0, 6, na) * 0.5, rng.integers(-1, 2, na)]).astype(float)
    B = np.column_stack([rng.integers(-1, 3, nb), rng.integers(0, 6, nb) * 0.5, rng.integers(-1, 2, nb)]).astype(float)
    A[rng.random(na) < 0.2, 1] = np.nan
    B[rng.random(nb) < 0.2, 1] = np.nan
    cuts = [None, [np.array([0.0, 0.5, 1.0]), np.array([0.5]), None][which], None]
    L = [2, [4, 2, 2][which], 2]
    if cuts[1] is None:  # the middle field compared as codes
        A[:, 1] = np.where(np.isnan(A[:, 1]), -1, A[:, 1] * 2)
        B[:, 1] = np.where(np.isnan(B[:, 1]), -1, B[:, 1] * 2)
    got = core.cumulative_pattern_counts(A, B, cuts, L)
    np.testing.assert_array_equal(got, core.level_pattern_counts_bruteforce(A, B, cuts, L))


def _spec_counts_levels():
    # spec F.2 example (counts in binary order 000..111, first digit field 1, 1 = agree); the
    # level model numbers level 0 = agree, so pattern "b1 b2 b3" is (1-b1) + 2(1-b2) + 4(1-b3)
    spec = [7300, 900, 700, 250, 500, 100, 60, 190]
    counts = np.zeros(8)
    for k, c in enumerate(spec):
        b1, b2, b3 = k >> 2 & 1, k >> 1 & 1, k & 1
        counts[(1 - b1) + 2 * (1 - b2) + 4 * (1 - b3)] = c
    return counts


def test_two_levels_reproduce_the_binary_em_spec_vector():
    # two levels per field is the agree/disagree model: spec F.2's vector m = (0.522306,
    # 0.817185, 0.933515), u = (0.063772, 0.086156, 0.105674), p = 0.046296
    m, u, p, it, conv = core.levels_em(_spec_counts_levels(), [2, 2, 2])
    assert conv
    np.testing.assert_allclose(m[:, 0], [0.522306, 0.817185, 0.933515], atol=1e-6)
    np.testing.assert_allclose(u[:, 0], [0.063772, 0.086156, 0.105674], atol=1e-6)
    np.testing.assert_allclose(m.sum(axis=1), 1.0)
    assert p == pytest.approx(0.046296, abs=1e-6)
    # the weight of a level is log2(m/u): agree on field 1 = log2(0.522306 / 0.063772) = 3.0338,
    # disagree = log2(0.477694 / 0.936228) = -0.9707; W(111) = sum of the agree weights = 9.4226
    mg, ug, W = core.level_pattern_weights(m, u, [2, 2, 2])
    assert math.log2(m[0, 0] / u[0, 0]) == pytest.approx(math.log2(0.522306 / 0.063772), abs=1e-4)
    assert math.log2(m[0, 1] / u[0, 1]) == pytest.approx(math.log2(0.477694 / 0.936228), abs=1e-4)
    assert W[0] == pytest.approx(9.4226, abs=1e-4) and W[7] == pytest.approx(-7.0420, abs=1e-4)
    assert W[1] == pytest.approx(5.4179, abs=1e-4)  # field 1 disagrees: "011"
    mb, ub, pb, *_ = binary.fellegi_sunter_em(np.rint(_spec_counts_levels()[::-1]).astype(np.int64), 3)
    np.testing.assert_allclose(m[:, 0], mb, atol=1e-9)


def _exact_mixture(p, m, u, N=100_000.0):
    """Counts n(gamma) = N (p m(gamma) + (1 - p) u(gamma)) of every pattern (not rounded)."""
    L = [len(x) for x in m]
    G = core.pattern_digits(L)
    mg = np.prod([np.asarray(m[j])[G[:, j]] for j in range(len(L))], axis=0)
    ug = np.prod([np.asarray(u[j])[G[:, j]] for j in range(len(L))], axis=0)
    return N * (p * mg + (1 - p) * ug), L


def test_em_fixed_point_of_an_exact_mixture():
    # Hand derivation: let the counts be exactly n(g) = N f(g), f(g) = p m(g) + (1-p) u(g).
    # E-step at (p, m, u): g(g) = p m(g) / f(g). M-step: p' = sum_g N f(g) g(g) / N = sum_g p m(g)
    # = p; m_j'(l) = sum_{g_j = l} N f(g) g(g) / (N p) = sum_{g_j = l} m(g) = m_j(l) (the margin of
    # a product); u likewise. So the generating values are a fixed point, and as the table equals
    # the model the likelihood is maximal there (3 fields: identifiable): EM from the default start
    # converges to them.
    p = 0.02
    m = [[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.8, 0.15, 0.05]]
    u = [[0.05, 0.15, 0.8], [0.1, 0.2, 0.7], [0.02, 0.08, 0.9]]
    counts, L = _exact_mixture(p, m, u)
    mm, uu, pp, it, conv = core.levels_em(counts, L, tol=1e-12, max_iter=50_000)
    assert conv
    assert pp == pytest.approx(p, abs=1e-6)
    np.testing.assert_allclose(mm, m, atol=1e-5)
    np.testing.assert_allclose(uu, u, atol=1e-5)
    # one EM step from the truth stays there (the derivation above), to rounding
    m1, u1, p1, it1, _ = core.levels_em(counts, L, m0=0.9, u0=0.1, p0=p, max_iter=1)
    assert it1 == 1  # (a step from the default start moves: the truth is not the start)
    assert abs(p1 - p) > 1e-3


def test_em_fixed_point_with_disjoint_patterns():
    # Matches only show field-2 level 0, non-matches only level 1: 6 pairs (0,0), 4 (1,0), 45
    # (1,1), 45 (2,1). The posterior is 1 on l2 = 0 and 0 on l2 = 1, so the fixed point is the
    # shares within each part: p = 10/100, m1 = (0.6, 0.4, 0), m2 = (1, 0), u1 = (0, 0.5, 0.5),
    # u2 = (0, 1) -- up to the clamp 1e-6 of zero probabilities.
    counts = np.zeros(6)
    counts[0 + 3 * 0] = 6
    counts[1 + 3 * 0] = 4
    counts[1 + 3 * 1] = 45
    counts[2 + 3 * 1] = 45
    m, u, p, it, conv = core.levels_em(counts, [3, 2])
    assert conv and p == pytest.approx(0.1, abs=1e-5)
    np.testing.assert_allclose(m[0], [0.6, 0.4, 0.0], atol=1e-5)
    np.testing.assert_allclose(m[1, :2], [1.0, 0.0], atol=1e-5)
    np.testing.assert_allclose(u[0], [0.0, 0.5, 0.5], atol=1e-5)
    np.testing.assert_allclose(u[1, :2], [0.0, 1.0], atol=1e-5)
    # level weights: field 1 level 1 = log2(0.4 / 0.5) = -0.3219
    _, _, W = core.level_pattern_weights(m, u, [3, 2])
    assert math.log2(m[0, 1] / u[0, 1]) == pytest.approx(math.log2(0.4 / 0.5), abs=1e-4)
    assert W[0] > W[1] > 0 > W[4]


def test_start_values():
    m, u = core.start_values([2, 4], 0.9, 0.1)
    np.testing.assert_allclose(m[0, :2], [0.9, 0.1])
    np.testing.assert_allclose(u[0, :2], [0.1, 0.9])
    np.testing.assert_allclose(m[1], [0.45, 0.3, 0.15, 0.1])  # 0.9 * (3, 2, 1) / 6, then 1 - 0.9
    np.testing.assert_allclose(u[1], [0.1 / 6, 0.2 / 6, 0.3 / 6, 0.9])


# ----------------------------------------------------------------------------------------------
# the public measure
# ----------------------------------------------------------------------------------------------
def _noisy(n, seed, sd=0.1, K=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 1, (n, K))
    Y = X + rng.normal(0, sd, (n, K))
    o = pl.DataFrame({f"v{j}": X[:, j] for j in range(K)})
    p = pl.DataFrame({f"v{j}": Y[:, j] for j in range(K)})
    return o, p


def test_agree_disagree_is_the_two_level_special_case():
    # comparison_levels={} runs the level model with every field agree/disagree (same bins): the
    # same pattern counts, m and u as the default agree/disagree linkage
    o, p = _noisy(200, 1)
    v = list(o.columns)
    a = sdckit.record_linkage_risk(o, p, v, method="probabilistic", probabilistic={"bins": 5})
    b = sdckit.record_linkage_risk(o, p, v, method="probabilistic", probabilistic={"bins": 5, "comparison_levels": {}})
    np.testing.assert_allclose([x[0] for x in b.em["m"]], a.em["m"], atol=1e-8)
    np.testing.assert_allclose([x[0] for x in b.em["u"]], a.em["u"], atol=1e-8)
    key = lambda pats: sorted((q["pattern"], q["n_pairs"], q["n_true_pairs"], q["class"]) for q in pats)  # noqa: E731
    assert key(a.em["patterns"]) == key(b.em["patterns"])
    np.testing.assert_array_equal(a.correct_first, b.correct_first)
    assert "levels" not in a.em and b.em["levels"] == {c: ["agree", "disagree"] for c in v}


def test_levels_result_contents():
    o, p = _noisy(150, 2)
    v = list(o.columns)
    res = sdckit.record_linkage_risk(
        o, p, v, method="probabilistic", probabilistic={"comparison_levels": {"v0": 0.2, "v1": [0.1, 0.3]}}
    )
    e = res.em
    assert e["levels"] == {
        "v0": ["equal", "|difference| <= 0.2", "disagree"],
        "v1": ["|difference| <= 0.1", "|difference| <= 0.3", "disagree"],
        "v2": ["agree", "disagree"],
    }
    assert [len(x) for x in e["m"]] == [3, 3, 2]
    np.testing.assert_allclose([sum(x) for x in e["m"]], 1.0)
    for mj, uj, wj in zip(e["m"], e["u"], e["level_weights"]):
        np.testing.assert_allclose(wj, np.log2(np.array(mj) / np.array(uj)))
    assert len(e["patterns"]) == 18 and sum(q["n_pairs"] for q in e["patterns"]) == 150 * 150
    assert sum(q["n_true_pairs"] for q in e["patterns"]) == 150
    assert all(len(q["pattern"]) == 3 for q in e["patterns"])
    # the true pairs classified as links are the records counted
    links = {q["pattern"] for q in e["patterns"] if q["class"] == "link"}
    assert res.n_linked_first == sum(q["n_true_pairs"] for q in e["patterns"] if q["pattern"] in links)
    d = res.to_dict()
    assert d["levels"] == e["levels"] and d["level_weights"] == e["level_weights"]
    assert "level" in str(res.summary())


def test_levels_link_more_true_pairs_than_agree_disagree():
    # simulation with known links: 500 records, 3 continuous keys, additive noise sd 0.1 (keys
    # sd 1). Agree/disagree (same quantile bin, 5, 10 or 20 bins) against levels on the absolute
    # difference (<= 0.1, <= 0.2, <= 0.4, disagree); the same tolerated false-link rate mu = 0.01.
    # Levels classify more true pairs as links, at a precision as good as the default bins'.
    o, p = _noisy(500, 7)
    v = list(o.columns)
    kw = dict(method="probabilistic")
    binned = [sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"mu": 0.01, "bins": b}) for b in (5, 10, 20)]
    lev = sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"mu": 0.01, "comparison_levels": [0.1, 0.2, 0.4]})
    assert lev.em["converged"]
    best = max(r.share_linked for r in binned)
    assert lev.share_linked > best + 0.2  # measured: 0.99 against at most 0.674
    assert lev.em["precision"] >= binned[1].em["precision"]  # measured: 0.195 against 0.102


def test_levels_bad_input():
    o, p = _noisy(20, 3)
    v = list(o.columns)
    kw = dict(method="probabilistic")
    with pytest.raises(SdcError, match="comparison_levels"):
        sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"comparison_levels": -1})
    with pytest.raises(SdcError, match="not strictly increasing"):
        sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"comparison_levels": [0.5, 0.2]})
    with pytest.raises(SdcError, match="cut points"):
        sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"comparison_levels": list(range(1, 12))})
    with pytest.raises(SdcError, match="not among the variables"):
        sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"comparison_levels": {"zz": 1}})
    with pytest.raises(SdcError, match="expected method='probabilistic'"):
        sdckit.record_linkage_risk(o, p, v, probabilistic={"comparison_levels": 0.1})
    with pytest.raises(SdcError, match="compared as categories"):
        sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"categorical": ["v0"], "comparison_levels": {"v0": 1}})
    o2, p2 = o.clone(), p.clone()
    sdckit.record_linkage_risk(o, p, v, **kw, probabilistic={"comparison_levels": 0.1})
    assert o.equals(o2) and p.equals(p2)  # inputs not mutated


def test_cli_comparison_levels(tmp_path, capsys):
    import json

    from sdckit.cli import main

    o, p = _noisy(60, 4)
    o.write_csv(tmp_path / "o.csv")
    p.write_csv(tmp_path / "p.csv")
    out = tmp_path / "l.json"
    base = ["linkage", str(tmp_path / "o.csv"), str(tmp_path / "p.csv"), "--variables", "v0,v1,v2"]
    base += ["--method", "probabilistic", "--no-progress", "--json", str(out), "--overwrite"]
    assert main([*base, "--comparison-levels", "0.1,0.2,0.4"]) == 0
    got = json.loads(out.read_text())["linkage"]
    direct = sdckit.record_linkage_risk(
        o, p, list(o.columns), method="probabilistic", probabilistic={"comparison_levels": [0.1, 0.2, 0.4]}
    )
    assert got["levels"] == direct.em["levels"] and got["share_linked"] == direct.share_linked
    assert "weight log2(m/u)" in capsys.readouterr().out
    assert main([*base, "--comparison-levels", "0.3"]) == 0
    assert json.loads(out.read_text())["linkage"]["levels"]["v0"] == ["equal", "|difference| <= 0.3", "disagree"]
    assert main([*base, "--comparison-levels", "a,b"]) == 2
    assert "--comparison-levels" in capsys.readouterr().err
