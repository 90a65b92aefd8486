"""``estimates_change``: the estimates a data user publishes, original against protected.

Known values (a hand-worked example), a brute-force oracle for the regression and its
cluster-robust standard error, the standard error of a mean against the textbook formula and
by simulation, invariances (units, row order, relabelling) and the behaviour on suppressed and
recoded domains, bad inputs, and the EU-SILC sample.
"""

from __future__ import annotations

import math
import time

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import shared_file
from sdckit import MissingColumnError, SdcError
from sdckit._core import estimates as K
from sdckit.results.estimates import COLUMNS

Z95 = 1.959963984540054
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rows(res, kind=None) -> dict:
    """(kind, variable, domain, category) -> row."""
    return {
        (r["kind"], r["variable"], r["domain"], r["category"]): r for r in res.rows if kind is None or r["kind"] == kind
    }


# ----------------------------------------------------------------------------------------------
# a hand-worked example
# ----------------------------------------------------------------------------------------------
#   record  hh  D  w   y
#      0     1  a  1  10
#      1     1  b  2  20
#      2     1  a  1  30
#      3     2  b  2  40
#      4     2  a  3  50
#      5     2  b  2  60
#
# Two clusters (G = 2): var = G/(G-1) sum_h (z_h - zbar)^2 = (z_1 - z_2)^2, so SE = |z_1 - z_2|.
# total a = 1 + 1 + 3 = 5; z_1 = 1 + 1 = 2, z_2 = 3: SE 1.     total b = 2 + 2 + 2 = 6; z = 2, 4: SE 2.
# share a = 5/11 = p: z_h = sum_h w ([a] - p) / 11: hh1 (2 - 4p)/11 = 2/121, hh2 (3 - 7p)/11 = -2/121: SE 4/121.
# mean y | a = (10 + 30 + 150) / 5 = 38: z_h = sum w (y - 38) / 5: hh1 (-28 - 8)/5 = -7.2, hh2 3*12/5 = 7.2: SE 14.4.
# mean y | b = (40 + 80 + 120) / 6 = 40: z = 2(20 - 40)/6 = -20/3, (0 + 40)/6 = 20/3: SE 40/3.
# mean y = 430/11 = R: z = (80 - 4R)/11 = -840/121, (350 - 7R)/11 = 840/121: SE 1680/121.
# coefficient of b (reference a: 3 records each, the first label wins the tie) = 40 - 38 = 2, its
#   influence values are those of mean b minus mean a: hh1 -20/3 + 7.2 = 8/15, hh2 -8/15: SE 16/15.
# CI = estimate -+ 1.959964 SE.
#
# Protected: record 4's D suppressed, record 5's y 60 -> 66.
# total a = 2 (change (2 - 5)/5 = -0.6; 2 < 5 - 1.96: not covered); share a = 2/8; mean y | a = 20;
# mean y | b = (40 + 80 + 132)/6 = 42 (change 0.05, inside 40 -+ 26.1).
HAND = pl.DataFrame(
    {
        "hh": [1, 1, 1, 2, 2, 2],
        "D": ["a", "b", "a", "b", "a", "b"],
        "w": [1.0, 2, 1, 2, 3, 2],
        "y": [10.0, 20, 30, 40, 50, 60],
    }
)
HAND_P = HAND.with_columns(
    pl.when(pl.int_range(6) == 4).then(None).otherwise(pl.col("D")).alias("D"),
    pl.when(pl.int_range(6) == 5).then(66.0).otherwise(pl.col("y")).alias("y"),
)


def _estimates(*args, **kwargs):
    """estimates_change on the small hand-worked files, whose domains hold fewer than the default
    5 records: every estimate shown (min_records=1; the withholding has its own test)."""
    kwargs.setdefault("min_records", 1)
    return sdckit.estimates_change(*args, **kwargs)


@pytest.fixture(scope="module")
def hand():
    return _estimates(HAND, HAND_P, domains="D", variables="y", weight="w", household="hh")


@pytest.mark.parametrize(
    "key, original, se",
    [
        (("total", None, "D", "a"), 5.0, 1.0),
        (("total", None, "D", "b"), 6.0, 2.0),
        (("share", None, "D", "a"), 5 / 11, 4 / 121),
        (("share", None, "D", "b"), 6 / 11, 4 / 121),
        (("mean", "y", "D", "a"), 38.0, 14.4),
        (("mean", "y", "D", "b"), 40.0, 40 / 3),
        (("mean", "y", None, None), 430 / 11, 1680 / 121),
        (("coefficient", "y", "D", "b"), 2.0, 16 / 15),
    ],
)
def test_hand_worked_estimates_and_standard_errors(hand, key, original, se):
    row = _rows(hand)[key]
    assert row["original"] == pytest.approx(original, rel=1e-12)
    assert row["se"] == pytest.approx(se, rel=1e-12)
    assert row["ci_low"] == pytest.approx(original - Z95 * se, rel=1e-12)
    assert row["ci_high"] == pytest.approx(original + Z95 * se, rel=1e-12)


def test_hand_worked_protected_values(hand):
    rows = _rows(hand)
    assert len(hand.rows) == 8  # 2 totals, 2 shares, 2 domain means, 1 overall mean, 1 coefficient
    total_a = rows[("total", None, "D", "a")]
    assert total_a["protected"] == 2.0 and total_a["relative_change"] == pytest.approx(-0.6)
    assert total_a["covered"] is False
    assert rows[("share", None, "D", "a")]["protected"] == pytest.approx(0.25)
    assert rows[("mean", "y", "D", "a")]["protected"] == pytest.approx(20.0)
    mean_b = rows[("mean", "y", "D", "b")]
    assert mean_b["protected"] == pytest.approx(42.0) and mean_b["relative_change"] == pytest.approx(0.05)
    assert mean_b["covered"] is True
    assert rows[("total", None, "D", "b")]["relative_change"] == 0.0


def test_hand_worked_aggregates(hand):
    rel = [abs(r["relative_change"]) for r in hand.rows]
    assert hand.n_estimates == 8 and hand.n_not_estimable == 0
    assert hand.mean_abs_relative_change == pytest.approx(sum(min(x, 1) for x in rel) / 8)
    assert hand.median_abs_relative_change == pytest.approx(sorted(rel)[3] / 2 + sorted(rel)[4] / 2)
    assert hand.share_not_covered == pytest.approx(sum(not r["covered"] for r in hand.rows) / 8)
    assert [abs(r["relative_change"]) for r in hand.worst] == sorted(rel, reverse=True)[:5]
    assert hand.weighted and hand.domains == ("D",) and hand.variables == ("y",)


# ----------------------------------------------------------------------------------------------
# the regression against a brute-force sandwich
# ----------------------------------------------------------------------------------------------
def _survey(n=300, seed=0, missing=True) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    hh = np.sort(rng.integers(0, n // 3, n))
    a = rng.choice(["p", "q", "r"], n, p=[0.5, 0.3, 0.2])
    b = rng.integers(1, 5, n)
    y = 100 + 10 * (a == "q") - 5 * (b == 3) + rng.normal(0, 8, n) + rng.normal(0, 5, n // 3 + 1)[hh]
    frame = pl.DataFrame({"hh": hh, "a": a, "b": b, "w": rng.uniform(1, 9, n), "y": y})
    if missing:
        frame = frame.with_columns(
            pl.when(pl.Series(rng.random(n) < 0.05)).then(None).otherwise(pl.col("y")).alias("y"),
            pl.when(pl.Series(rng.random(n) < 0.05)).then(None).otherwise(pl.col("a")).alias("a"),
        )
    return frame


def _brute_force_wls(frame: pl.DataFrame, columns):
    """Explicit X, W, (X'WX)^-1 X'Wy and the cluster-robust sandwich
    (X'WX)^-1 [G/(G-1) sum_h (u_h - ubar)(u_h - ubar)'] (X'WX)^-1, u_h = sum_{i in h} x_i w_i e_i."""
    d = frame.drop_nulls(["y", "a", "b"])
    X = np.column_stack([np.ones(d.height)] + [(d[v].to_numpy() == c).astype(float) for v, c in columns])
    W = np.diag(d["w"].to_numpy())
    y = d["y"].to_numpy()
    A_inv = np.linalg.inv(X.T @ W @ X)
    beta = A_inv @ X.T @ W @ y
    e = y - X @ beta
    S = X * (d["w"].to_numpy() * e)[:, None]
    hh_all = np.unique(frame["hh"].to_numpy())  # every cluster of the file counts in G
    U = np.array([S[d["hh"].to_numpy() == h].sum(axis=0) for h in hh_all])
    G = len(hh_all)
    meat = G / (G - 1) * (U - U.mean(axis=0)).T @ (U - U.mean(axis=0))
    V = A_inv @ meat @ A_inv
    return beta[1:], np.sqrt(np.diag(V))[1:]


def test_coefficients_and_cluster_robust_se_match_the_brute_force_sandwich():
    frame = _survey()
    res = _estimates(frame, frame, domains=["a", "b"], variables="y", weight="w", household="hh")
    coef = [r for r in res.rows if r["kind"] == "coefficient"]
    # references: the most frequent category among complete cases (a: "p", b: whichever)
    d = frame.drop_nulls(["y", "a", "b"])
    ref_b = d["b"].value_counts(sort=True)["b"][0]
    columns = [("a", "q"), ("a", "r")] + [("b", c) for c in (1, 2, 3, 4) if c != ref_b]
    assert [(r["domain"], r["category"]) for r in coef] == [(v, str(c)) for v, c in columns]
    beta, se = _brute_force_wls(frame, columns)
    np.testing.assert_allclose([r["original"] for r in coef], beta, rtol=1e-10)
    np.testing.assert_allclose([r["se"] for r in coef], se, rtol=1e-10)
    # the coefficients are those of an independent least-squares solver on sqrt(w)-scaled data
    X = np.column_stack([np.ones(d.height)] + [(d[v].to_numpy() == c).astype(float) for v, c in columns])
    sw = np.sqrt(d["w"].to_numpy())
    lstsq = np.linalg.lstsq(X * sw[:, None], d["y"].to_numpy() * sw, rcond=None)[0]
    np.testing.assert_allclose(beta, lstsq[1:], rtol=1e-9)


def test_the_kernel_drops_an_aliased_column():
    """Two copies of one indicator: the second is aliased (left out, NaN)."""
    rng = np.random.default_rng(3)
    f = rng.integers(0, 2, 50).astype(np.int32)
    y = 1.0 + 2.0 * f + rng.normal(0, 0.1, 50)
    fit = K.wls(y, [f, f.copy()], [(0, 1), (1, 1)], np.ones(50), np.arange(50), 50)
    assert fit.kept.tolist() == [True, False]
    assert fit.beta[0] == pytest.approx(2.0, abs=0.1) and math.isnan(fit.beta[1])


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_the_per_category_kernels_follow_the_one_formula(seed):
    """The kernels visit only the (household, category) pairs that occur; the same standard
    errors come from the direct formula G/(G-1) sum_h (z_h - zbar)^2 with every influence value
    written out (n values per category)."""
    rng = np.random.default_rng(seed)
    n, C = 80, 4
    G = int(rng.integers(2, 40))
    cluster = rng.integers(0, G, n)
    codes = rng.integers(-1, C, n).astype(np.int32)  # -1: missing
    w = rng.uniform(1, 10, n)
    y = np.where(rng.random(n) < 0.1, np.nan, rng.normal(5, 2, n))
    totals, shares = K.domain_totals(codes, C, w, cluster, G)
    means = K.domain_means(codes, C, y, w, cluster, G)
    obs, base = codes >= 0, w[codes >= 0].sum()
    for c in range(C):
        in_c = np.where(codes == c, w, 0.0)
        se_total = math.sqrt(K.cluster_variance(cluster, G, in_c))
        se_share = math.sqrt(K.cluster_variance(cluster, G, (in_c - shares.estimate[c] * np.where(obs, w, 0)) / base))
        assert totals.se[c] == pytest.approx(se_total, rel=1e-9, abs=1e-12)
        assert shares.se[c] == pytest.approx(se_share, rel=1e-9, abs=1e-12)
        d = (codes == c) & ~np.isnan(y)
        if d.any():
            z = np.where(d, w * (np.nan_to_num(y) - means.estimate[c]), 0.0) / w[d].sum()
            assert means.se[c] == pytest.approx(math.sqrt(K.cluster_variance(cluster, G, z)), rel=1e-9, abs=1e-12)
        else:
            assert math.isnan(means.se[c])


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_shares_add_up_and_aggregates_stay_in_range(seed):
    o = _survey(n=120, seed=seed)
    p = _perturbed(o, seed + 1)
    res = _call(o, p)
    for dom in ("a", "b"):
        shares = [r for r in res.rows if r["kind"] == "share" and r["domain"] == dom]
        assert sum(r["original"] for r in shares) == pytest.approx(1.0)
        assert sum(r["protected"] for r in shares if r["protected"] is not None) == pytest.approx(1.0)
        totals = [r["original"] for r in res.rows if r["kind"] == "total" and r["domain"] == dom]
        assert sum(totals) == pytest.approx(o.drop_nulls(dom)["w"].sum())
    assert 0.0 <= res.mean_abs_relative_change <= 1.0
    assert 0.0 <= res.share_not_covered <= 1.0
    assert res.median_abs_relative_change >= 0.0
    assert all(r["ci_low"] <= r["original"] <= r["ci_high"] for r in res.rows if r["se"] is not None)


def test_a_small_category_with_small_weights_is_kept():
    """Aliasing is judged on the scaled cross-products: a category of one record of weight 1
    among weights of 10^9 is a column of its own, not an aliased one."""
    rng = np.random.default_rng(4)
    f = np.zeros(1000, np.int32)
    f[:500], f[0] = 1, 2
    w = np.full(1000, 1e9)
    w[0] = 1.0
    y = 3.0 + f + rng.normal(0, 0.1, 1000)
    fit = K.wls(y, [f], [(0, 1), (0, 2)], w, np.arange(1000), 1000)
    assert fit.kept.tolist() == [True, True]
    assert fit.beta[1] == pytest.approx(2.0, abs=0.5)


def test_a_domain_that_repeats_another_has_aliased_coefficients():
    o = _survey(seed=20, missing=False).with_columns(pl.col("a").replace_strict({"p": 1, "q": 2, "r": 3}).alias("a2"))
    res = _estimates(o, o, domains=["a", "a2"], variables="y", weight="w")
    coef = _rows(res, "coefficient")
    assert [k[2] for k, r in coef.items() if r["original"] is not None] == ["a", "a"]
    for (_, _, d, _), r in coef.items():
        if d == "a2":
            assert r["original"] is None and r["reason"] == "aliased with other indicators in the original"


# ----------------------------------------------------------------------------------------------
# standard error of a mean: the textbook formula, and a simulation
# ----------------------------------------------------------------------------------------------
def test_unweighted_mean_se_is_s_over_root_n():
    """No weights, no households: var = n/(n-1) sum ((y_i - ybar)/n)^2 = s^2 / n."""
    y = np.random.default_rng(1).gamma(2.0, 10.0, 400)
    frame = pl.DataFrame({"y": y})
    res = _estimates(frame, frame, variables="y")
    (row,) = res.rows
    assert row["original"] == pytest.approx(y.mean())
    assert row["se"] == pytest.approx(y.std(ddof=1) / math.sqrt(y.size), rel=1e-12)


def test_weighted_mean_se_by_simulation():
    """Clusters drawn independently from a known superpopulation (true mean 50): the average
    linearisation SE of the weighted mean matches the spread of the estimates over 600 samples,
    and the 95 % intervals cover the truth about 95 % of the time."""
    rng = np.random.default_rng(2024)
    G, reps, estimates, ses, covered = 150, 600, [], [], 0
    for _ in range(reps):
        size = rng.integers(1, 5, G)
        cluster = np.repeat(np.arange(G), size)
        effect = rng.normal(0, 6, G)[cluster]
        w = rng.choice([1.0, 3.0], cluster.size)  # weights unrelated to y: the weighted mean is unbiased
        y = 50 + effect + rng.normal(0, 10, cluster.size)
        est = K.domain_means(np.zeros(cluster.size, np.int32), 1, y, w, cluster, G)
        estimates.append(est.estimate[0])
        ses.append(est.se[0])
        covered += abs(est.estimate[0] - 50) <= Z95 * est.se[0]
    assert np.mean(ses) == pytest.approx(np.std(estimates, ddof=1), rel=0.08)
    assert 0.92 <= covered / reps <= 0.98


# ----------------------------------------------------------------------------------------------
# invariances
# ----------------------------------------------------------------------------------------------
def test_identical_files_change_nothing():
    frame = _survey(seed=4)
    res = _estimates(frame, frame, domains=["a", "b"], variables="y", weight="w", household="hh")
    assert res.n_not_estimable == 0 and res.n_estimates == len(res.rows) > 20
    assert all(r["relative_change"] == 0.0 and r["covered"] is True for r in res.rows)
    assert res.mean_abs_relative_change == 0.0 and res.share_not_covered == 0.0


def _perturbed(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """A protected copy: y times a random factor, some a values suppressed."""
    rng = np.random.default_rng(seed)
    n = frame.height
    return frame.with_columns(
        (pl.col("y") * pl.Series(1 + rng.normal(0, 0.05, n))).alias("y"),
        pl.when(pl.Series(rng.random(n) < 0.1)).then(None).otherwise(pl.col("a")).alias("a"),
    )


def _call(o, p):
    return _estimates(o, p, domains=["a", "b"], variables="y", weight="w", household="hh")


@SETTINGS
@given(seed=st.integers(0, 10_000), factor=st.sampled_from([1000.0, 0.001, 3.7]))
def test_units_do_not_move_relative_changes_or_coverage(seed, factor):
    o = _survey(n=120, seed=seed)
    p = _perturbed(o, seed + 1)
    base = _call(o, p)
    scaled = _call(o.with_columns(pl.col("y") * factor), p.with_columns(pl.col("y") * factor))
    for a, b in zip(base.rows, scaled.rows):
        assert (a["kind"], a["domain"], a["category"]) == (b["kind"], b["domain"], b["category"])
        assert a["covered"] == b["covered"]
        if a["relative_change"] is None:
            assert b["relative_change"] is None
        else:
            assert b["relative_change"] == pytest.approx(a["relative_change"], rel=1e-9, abs=1e-12)


@SETTINGS
@given(seed=st.integers(0, 10_000))
def test_row_order_does_not_matter(seed):
    o = _survey(n=120, seed=seed)
    p = _perturbed(o, seed + 1)
    perm = np.random.default_rng(seed).permutation(o.height)
    base, shuffled = _call(o, p), _call(o[perm], p[perm])
    assert len(base.rows) == len(shuffled.rows)
    for a, b in zip(base.rows, shuffled.rows):
        for c in ("original", "protected", "se", "relative_change"):
            if a[c] is None:
                assert b[c] is None
            else:
                assert b[c] == pytest.approx(a[c], rel=1e-9, abs=1e-12)
        assert a["covered"] == b["covered"]


def test_relabelling_categories_changes_only_the_labels():
    o = _survey(seed=5)
    p = _perturbed(o, 6)
    names = {"p": "zz", "q": "aa", "r": "mm"}
    relabel = lambda f: f.with_columns(pl.col("a").replace_strict(names, default=None))  # noqa: E731
    base, renamed = _call(o, p), _call(relabel(o), relabel(p))
    for kind in ("total", "share", "mean"):
        a, b = _rows(base, kind), _rows(renamed, kind)
        for (k, v, d, c), row in a.items():
            other = b[(k, v, d, names[c] if d == "a" else c)]
            assert other["original"] == pytest.approx(row["original"], rel=1e-12)
            assert other["protected"] == pytest.approx(row["protected"], rel=1e-12)


# ----------------------------------------------------------------------------------------------
# suppressed and recoded domains
# ----------------------------------------------------------------------------------------------
def test_suppressing_a_domain_value_lowers_its_total():
    o = _survey(seed=7, missing=False)
    p = o.with_columns(pl.when(pl.int_range(o.height) < 10).then(None).otherwise(pl.col("b")).alias("b"))
    res = _call(o, p)
    suppressed = o[:10]["b"].unique().to_list()
    for c in suppressed:
        row = _rows(res)[("total", None, "b", str(c))]
        assert row["protected"] < row["original"] and row["relative_change"] < 0
    untouched = set(o["b"].unique().to_list()) - set(suppressed)
    for c in untouched:
        assert _rows(res)[("total", None, "b", str(c))]["relative_change"] == 0.0


def test_a_recoded_domain_makes_its_original_categories_not_estimable():
    o = _survey(seed=8, missing=False).with_columns(pl.col("b").cast(pl.String))
    p = o.with_columns(pl.col("b").replace({"3": "3+", "4": "3+"}))
    res = _call(o, p)
    rows = _rows(res)
    for c in ("3", "4"):
        for kind, var in (("total", None), ("share", None), ("mean", "y"), ("coefficient", "y")):
            key = (kind, var, "b", c)
            if key not in rows:  # the reference category has no coefficient
                continue
            assert rows[key]["protected"] is None and rows[key]["relative_change"] is None
            assert rows[key]["covered"] is None and "does not occur" in rows[key]["reason"]
    assert rows[("total", None, "b", "1")]["relative_change"] == 0.0
    assert res.n_not_estimable >= 6
    assert any("b: the protected file has 1 category the original lacks" in n for n in res.notes)
    assert "3+" not in {r["category"] for r in res.rows}


def test_a_lost_reference_category_makes_that_domains_coefficients_not_estimable():
    o = _survey(seed=9, missing=False)
    ref_a = o["a"].value_counts(sort=True)["a"][0]
    p = o.with_columns(pl.when(pl.col("a") == ref_a).then(None).otherwise(pl.col("a")).alias("a"))
    coef = _rows(_call(o, p), "coefficient")
    for (_, _, d, _), row in coef.items():
        if d == "a":
            assert row["protected"] is None and "reference category of a" in row["reason"]
        else:
            assert row["protected"] is not None


def test_a_variable_suppressed_in_a_domain_makes_its_mean_not_estimable():
    o = _survey(seed=10, missing=False)
    p = o.with_columns(pl.when(pl.col("a") == "r").then(None).otherwise(pl.col("y")).alias("y"))
    row = _rows(_call(o, p))[("mean", "y", "a", "r")]
    assert row["protected"] is None and row["reason"] == "y is not observed in this domain in the protected file"


def test_unweighted_totals_are_counts():
    o = _survey(seed=11, missing=False)
    res = _estimates(o, o, domains="b")
    assert not res.weighted
    vc = o["b"].value_counts()
    counts = dict(zip(vc["b"].to_list(), vc["count"].to_list()))
    for (_, _, _, c), row in _rows(res, "total").items():
        assert row["original"] == counts[int(c)]


def test_missing_codes_count_as_suppressed():
    o = _survey(seed=21, missing=False)
    p = o.with_columns(pl.when(pl.int_range(o.height) < 10).then(-999).otherwise(pl.col("b")).alias("b"))
    coded = _rows(_estimates(o, p, domains="b", missing=-999))
    nulls = _rows(_estimates(o, p.with_columns(pl.col("b").replace(-999, None)), domains="b"))
    assert coded == nulls
    assert ("total", None, "b", "-999") not in coded


def test_one_household_gives_no_standard_error():
    """G = 1: the with-replacement variance G/(G-1) ... is undefined; no interval, no coverage."""
    o = _survey(seed=22, missing=False).with_columns(pl.lit(1).alias("hh"))
    res = _estimates(o, o, domains="a", variables="y", weight="w", household="hh")
    assert all(r["se"] is None and r["ci_low"] is None and r["covered"] is None for r in res.rows)
    assert res.share_not_covered is None and res.mean_abs_relative_change == 0.0


# ----------------------------------------------------------------------------------------------
# domains chosen automatically, scenario, inputs
# ----------------------------------------------------------------------------------------------
def test_domains_are_the_keys_with_few_categories():
    o = _survey(seed=12).with_columns(pl.Series("id", np.arange(300)), pl.lit(1).alias("one"))
    res = _estimates(o, o, keys=["id", "a", "one", "b"], max_categories=4)
    assert res.domains == ("a", "b")
    assert any("more than 4 categories: id (300)" in n for n in res.notes)
    assert any("fewer than 2 categories: one" in n for n in res.notes)
    assert _estimates(o, o, keys=["id", "a", "b"], max_categories=3).domains == ("a",)


def test_the_scenario_fills_the_roles():
    o = _survey(seed=13)
    p = _perturbed(o, 14)
    sc = sdckit.Scenario(keys=["a", "b"], numeric_keys=["y"], weight="w", household="hh")
    auto, explicit = _estimates(o, p, scenario=sc).to_dict(), _call(o, p).to_dict()
    reference = "coefficients of y: each domain against its most frequent category (a=p, b=3)"
    assert auto["notes"] == ["domains chosen automatically: the keys with 2 to 12 categories (a, b)", reference]
    assert explicit["notes"] == [reference]
    assert {**auto, "notes": []} == {**explicit, "notes": []}


def test_inputs_are_not_mutated_and_pandas_works():
    pd = pytest.importorskip("pandas")
    o = _survey(seed=15).to_pandas()
    p = _perturbed(_survey(seed=15), 16).to_pandas()
    o0, p0 = o.copy(), p.copy()
    res = _estimates(o, p, domains=["a", "b"], variables="y", weight="w", household="hh")
    pd.testing.assert_frame_equal(o, o0)
    pd.testing.assert_frame_equal(p, p0)
    assert res.to_dict() == _call(_survey(seed=15), _perturbed(_survey(seed=15), 16)).to_dict()
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(COLUMNS)


# ----------------------------------------------------------------------------------------------
# the result
# ----------------------------------------------------------------------------------------------
def test_result_is_immutable_and_serialisable(hand):
    import json

    with pytest.raises(TypeError):
        hand.rows[0]["original"] = 0.0
    with pytest.raises(Exception):
        hand.n = 3
    d = json.loads(json.dumps(hand.to_dict()))
    assert d["measure"] == "estimates_change" and len(d["rows"]) == 8
    assert set(d["rows"][0]) == set(COLUMNS)
    for key in ("n_estimates", "n_not_estimable", "mean_abs_relative_change", "median_abs_relative_change",
                "share_not_covered", "worst", "domains", "variables", "weighted", "notes", "confidence"):  # fmt: skip
        assert key in d
    frame = hand.to_frame()
    assert isinstance(frame, pl.DataFrame) and frame.height == 8 and frame.columns == list(COLUMNS)
    text = str(hand.summary())
    assert "total D=a" in text and "coef y ~ D=b" in text and "linearisation" in text
    assert repr(hand).startswith("<EstimatesResult n_estimates=8")


def test_plot_draws_one_point_per_compared_estimate(hand):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert hand.plot(ax=ax) is ax
    assert len(ax.get_yticklabels()) == 8
    assert ax.collections[0].get_offsets()[0][0] == pytest.approx(100 * hand.rows[0]["relative_change"])
    # the coefficient's interval, 2 -+ 1.96 * 16/15, is wider than +-100 % of 2: its band stops at 100 %
    widths = [bar.get_width() for bar in ax.patches]
    assert max(widths) == pytest.approx(200.0) and widths[0] == pytest.approx(200 * Z95 * 1 / 5)
    plt.close(fig)


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"domains": "nope"}, r"domains \(original file\): column\(s\) nope not found"),
        ({"variables": "a"}, "variables: column a of the original file has type String; expected numbers"),
        ({"confidence": 1.0}, r"confidence: got 1.0; expected a number in \(0, 1\)"),
        ({"confidence": 0}, r"confidence: got 0; expected a number in \(0, 1\)"),
        ({"max_categories": 1}, "max_categories: got 1; expected an integer >= 2"),
        ({"weight": "neg"}, "weight: column neg has 1 negative value"),
        ({"weight": "wmiss"}, r"weight: column wmiss is missing \(NA/NaN\) for 1 record"),
        ({"weight": "wzero"}, "weight: column wzero has 1 zero value"),
        ({"household": "hmiss"}, "household: column hmiss is missing for 1 record"),
        ({"domains": None, "keys": None}, "domains: no domain variable and no numeric variable"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    o = _survey(n=30, seed=17, missing=False).with_columns(
        pl.Series("neg", [-1.0] + [1.0] * 29),
        pl.Series("wmiss", [None] + [1.0] * 29),
        pl.Series("wzero", [0.0] + [1.0] * 29),
        pl.Series("hmiss", [None] + list(range(29))),
    )
    call = {"domains": "b", **kwargs}
    with pytest.raises(SdcError, match=match) as err:
        _estimates(o, o, **call)
    assert "-1.0" not in str(err.value)  # never a record value


def test_files_must_pair_and_hold_the_columns():
    o = _survey(n=30, seed=18)
    with pytest.raises(SdcError, match="protected: the file has 29 records and the original 30"):
        _estimates(o, o[:29], domains="a")
    with pytest.raises(MissingColumnError, match=r"domains \(protected file\): column\(s\) a not found"):
        _estimates(o, o.drop("a"), domains="a")
    bad = o.with_columns(pl.when(pl.int_range(30) == 0).then(float("inf")).otherwise(pl.col("y")).alias("y"))
    with pytest.raises(SdcError, match="variables: column y of the protected file holds infinite values"):
        _estimates(o, bad, domains="a", variables="y")


def test_an_out_of_core_engine_is_refused_with_the_one_message(tmp_path):
    o = _survey(n=30, seed=19)
    path = tmp_path / "o.parquet"
    o.write_parquet(path)
    with pytest.raises(SdcError, match="engine: estimates_change needs the records in memory"):
        _estimates(path, path, domains="a", engine="duckdb")


# ----------------------------------------------------------------------------------------------
# the EU-SILC sample
# ----------------------------------------------------------------------------------------------
EUSILC_KEYS = ["db040", "hsize", "age", "rb090", "pl030", "pb220a"]


@pytest.mark.shared_data
def test_eusilc_domains_chosen_from_the_keys_and_fast():
    d = pl.read_csv(shared_file("laeken", "eusilc.csv"))
    sc = sdckit.Scenario(keys=EUSILC_KEYS, numeric_keys=["eqIncome"], weight="rb050", household="db030")
    protected = sdckit.local_suppression(d, EUSILC_KEYS, k=3).data
    start = time.perf_counter()
    res = _estimates(d, protected, scenario=sc)
    elapsed = time.perf_counter() - start
    assert res.domains == ("db040", "hsize", "rb090", "pl030", "pb220a")
    assert any("more than 12 categories: age" in n for n in res.notes)
    assert elapsed < 1.0
    assert res.n_estimates > 100 and res.weighted
    total = _rows(res)[("total", None, "rb090", "female")]
    assert total["original"] == pytest.approx(d.filter(pl.col("rb090") == "female")["rb050"].sum())
    # suppression only removes domain values: no total grows
    assert all(r["relative_change"] <= 1e-12 for r in res.rows if r["kind"] == "total")
    assert res.mean_abs_relative_change < 0.2


def test_estimates_on_few_records_are_not_shown():
    """A domain category with fewer than min_records records in the original is not shown at all
    (a mean over one record is that record's value); one with fewer in the protected file shows
    the original only."""
    n = 12
    orig = pl.DataFrame({"D": ["a"] * 10 + ["b"] * 2, "y": [float(i) for i in range(n)], "w": [1.0] * n})
    prot = orig.with_columns(pl.when(pl.int_range(n) < 7).then(None).otherwise(pl.col("D")).alias("D"))
    res = sdckit.estimates_change(orig, prot, domains="D", variables="y", weight="w")
    rows = {(r["kind"], r["category"]): r for r in res.to_dict()["rows"]}
    b = rows[("mean", "b")]
    assert b["original"] is None and b["protected"] is None and b["se"] is None
    assert b["reason"].startswith("fewer than 5 records in the original")
    a = rows[("mean", "a")]  # 10 records in the original, 3 left in the protected file
    assert a["original"] == pytest.approx(4.5) and a["protected"] is None
    assert a["reason"].startswith("fewer than 5 records in the protected file")
    shown = sdckit.estimates_change(orig, prot, domains="D", variables="y", weight="w", min_records=1)
    assert {(r["kind"], r["category"]): r for r in shown.to_dict()["rows"]}[("mean", "b")]["original"] == 10.5
    with pytest.raises(sdckit.SdcError, match="min_records"):
        sdckit.estimates_change(orig, prot, domains="D", min_records=0)
