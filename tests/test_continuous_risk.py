"""Interval disclosure (dRisk), RMD intervals (dRiskRMD), outliers and Seri's confidentiality
plot (spec F.3-F.6). The MCD itself is tested in test_robust.py."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA, REFERENCE, reference_cases
from sdckit import MissingColumnError, SdcError, SdcWarning
from sdckit._core import continuous as core

# the running numeric example of spec G (used by F.1, F.3, F.4)
X8 = np.array(
    [(10, 8, 25), (12, 9, 31), (15, 12, 40), (20, 15, 38), (22, 15, 52), (30, 20, 47), (45, 30, 60), (80, 50, 58)],
    float,
)
Y8 = np.array(
    [(11, 8, 26), (12, 10, 30), (14, 12, 40), (21, 14, 39), (22, 16, 50), (29, 20, 48), (47, 29, 61), (75, 52, 57)],
    float,
)
V3 = ["inc", "exp", "age"]


def frame(a, names=V3):
    return pl.DataFrame({v: a[:, j] for j, v in enumerate(names)})


O8, P8 = frame(X8), frame(Y8)


# ----------------------------------------------------------------------------------------------
# F.3.1 interval disclosure
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("width, expected", [(0.05, 0.125), (0.1, 0.75)])
def test_drisk_spec_example(width, expected):
    # spec F.3.1 example [V]: k = 0.05 -> 0.125 (record 3 only), k = 0.1 -> 0.75
    res = sdckit.interval_disclosure(O8, P8, V3, width=width)
    assert res.share_at_risk == expected
    assert res.n_at_risk == round(8 * expected)
    if width == 0.05:
        assert res.at_risk.tolist() == [False, False, True, False, False, False, False, False]


def _free1():
    case = next(c for c in reference_cases("numeric_risk_utility.json") if c["id"] == "free1_onedims")
    perturbed = REFERENCE / "perturbed"
    x = pl.read_csv(perturbed / "free1_x_orig.csv", infer_schema_length=None)
    xm = pl.read_csv(perturbed / "free1_microagg_onedims_k3.csv", infer_schema_length=None)
    return case, x, xm


@pytest.mark.parametrize("key, k", [("dRisk", 0.05), ("dRisk_k0.01", 0.01)])
def test_drisk_matches_sdcmicro_reference(key, k):
    # sdcMicro 5.8.1: dRisk(obj = x, xm = xm1[, k = 0.01]) on free1 columns 31:34 after onedims
    # microaggregation; the share is a count / 4000, so it must match exactly
    case, x, xm = _free1()
    res = sdckit.interval_disclosure(x, xm, x.columns, width=k)
    assert res.share_at_risk == case["outputs"][key]


def test_drisk_missing_values_are_skipped():
    # hand calculation: protected sds are computed without the missing values; a record whose
    # comparisons are all missing counts as at risk (sdcMicro keeps it)
    o = pl.DataFrame({"a": [1.0, 2.0, None, 4.0], "b": [10.0, None, 30.0, 40.0]})
    p = pl.DataFrame({"a": [1.0, 9.0, 3.0, None], "b": [10.0, 20.0, None, 47.0]})
    res = sdckit.interval_disclosure(o, p, ["a", "b"], width=0.1)
    # record 1: equal -> at risk; record 2: a differs by 7 > 0.1 sd -> not; record 3: nothing
    # comparable -> at risk; record 4: b differs by 7 > 0.1 * sd(b') = 0.1 * 18.9 -> not
    assert res.at_risk.tolist() == [True, False, True, False]
    assert res.protected_sd["a"] == pytest.approx(np.std([1.0, 9.0, 3.0], ddof=1))


def test_drisk_unmodified_data_is_fully_at_risk():
    # spec F.3.1: "for unmodified data dRisk = 1" (even with k = 0: closed interval)
    assert sdckit.interval_disclosure(O8, O8, V3, width=0).share_at_risk == 1.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.floats(0, 0.5), st.floats(0, 0.5))
def test_drisk_monotone_in_k(seed, k1, k2):
    # a wider interval can only add records at risk
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 2))
    y = x + rng.normal(scale=0.3, size=x.shape)
    lo, hi = sorted([k1, k2])
    a = sdckit.interval_disclosure(frame(x, ["a", "b"]), frame(y, ["a", "b"]), ["a", "b"], width=lo).at_risk
    b = sdckit.interval_disclosure(frame(x, ["a", "b"]), frame(y, ["a", "b"]), ["a", "b"], width=hi).at_risk
    assert np.all(b | ~a)


# ----------------------------------------------------------------------------------------------
# F.4 RMD intervals
# ----------------------------------------------------------------------------------------------
def _robustbase_cov():
    """robustbase covMcd(scale(x))$cov on the 8-record example: the same reweighted MCD with
    robustbase's simulated small-sample factors for p = 3, n = 8 (raw 1.993509, reweighted
    1.545905; robustbase R/covMcd.R tables MCDcnp2sim.mat and MCDcnp2sim.mat.rew)."""
    zx = (X8 - X8.mean(0)) / X8.std(0, ddof=1)
    return core.mcd(zx, small_sample=(1.993509, 1.545905)).cov


@pytest.mark.parametrize(
    "k, k2, risk1, risk2, wrisk1, wrisk2",
    [
        (0.01, 0.05, 0.125, 0.125, 0.0119, 0.0119),
        (0.7, 0.5, 0.875, 0.125, 0.576, 0.0332),
    ],
)
def test_drisk_rmd_spec_example_with_robustbase_covariance(k, k2, risk1, risk2, wrisk1, wrisk2):
    # spec F.4 example [V-R] (sdcMicro 5.8.1, printed to 3 significant digits), reproduced with
    # the same MCD: the spec says "test with tolerance or against the same MCD"
    res = sdckit.rmd_interval_disclosure(O8, P8, V3, width=k, width2=k2, covariance=_robustbase_cov())
    assert (res.share_at_risk, res.share_at_risk_isolated) == (risk1, risk2)
    assert res.wrisk1 == pytest.approx(wrisk1, abs=5e-4 if wrisk1 > 0.1 else 5e-5)
    assert res.wrisk2 == pytest.approx(wrisk2, abs=5e-5)
    if k == 0.01:
        assert np.flatnonzero(res.at_risk).tolist() == [2]  # record 3 (spec)


@pytest.mark.parametrize("k, k2, risk1, risk2", [(0.01, 0.05, 0.125, 0.125), (0.7, 0.5, 0.875, 0.125)])
def test_drisk_rmd_spec_example_default_mcd(k, k2, risk1, risk2):
    # the library's own MCD (Pison et al. formula instead of robustbase's simulated table for
    # n <= 20) flags the same records as sdcMicro; the weighted risks are larger because its
    # reweighted small-sample factor is 1 here (documented deviation)
    res = sdckit.rmd_interval_disclosure(O8, P8, V3, width=k, width2=k2)
    assert (res.share_at_risk, res.share_at_risk_isolated) == (risk1, risk2)
    assert res.mcd_factors[3] == 1.0


def test_drisk_rmd_weighting_and_definitions():
    res = sdckit.rmd_interval_disclosure(O8, P8, V3, width=0.7, width2=0.5, covariance=_robustbase_cov())
    s = sdckit.rmd_interval_disclosure(O8, P8, V3, width=0.7, width2=0.5, covariance=_robustbase_cov(), weighting="sum")
    w = res.at_risk
    # sdcMicro: |w| * sum(RMD_w) / n; "sum": sum(RMD_w) / n
    assert res.wrisk1 == pytest.approx(w.sum() * res.rmd[w].sum() / 8)
    assert s.wrisk1 == pytest.approx(res.rmd[w].sum() / 8)
    # RMD_i = 0.05 sqrt(z' C^-1 z) with z standardised original, centre 0
    zx = (X8 - X8.mean(0)) / X8.std(0, ddof=1)
    C = _robustbase_cov()
    direct = 0.05 * np.sqrt(np.einsum("ij,jk,ik->i", zx, np.linalg.inv(C), zx))
    np.testing.assert_allclose(res.rmd, direct, rtol=1e-12)
    # isolated: nearest other protected (standardised) record farther than k2, by brute force
    zy = (Y8 - Y8.mean(0)) / Y8.std(0, ddof=1)
    dd = np.sqrt(((zy[:, None] - zy[None]) ** 2).sum(-1))
    np.fill_diagonal(dd, np.inf)
    assert res.at_risk_isolated.tolist() == (w & (dd.min(1) > 0.5)).tolist()


def test_drisk_rmd_unchanged_data_all_at_risk():
    # z'_ij = z_ij lies strictly inside z_ij +- k RMD_i whenever RMD_i > 0
    res = sdckit.rmd_interval_disclosure(O8, O8, V3)
    assert res.share_at_risk == 1.0


def test_drisk_rmd_rejects_missing_and_singular():
    o = O8.with_columns(pl.Series("inc", [None] + list(X8[1:, 0])))
    with pytest.raises(SdcError, match="missing values"):
        sdckit.rmd_interval_disclosure(o, P8, V3)
    with pytest.raises(SdcError, match="constant"):
        sdckit.rmd_interval_disclosure(O8.with_columns(pl.lit(1.0).alias("age")), P8, V3)
    with pytest.raises(SdcError, match="covariance"):
        sdckit.rmd_interval_disclosure(O8, P8, V3, covariance=np.eye(2))
    with pytest.raises(SdcError, match="center"):
        sdckit.rmd_interval_disclosure(O8, P8, V3, center="median")


def test_drisk_rmd_tarragona_matches_its_definition():
    """sdcMicro's ?dRiskRMD example (Tarragona[, 5:7] with noise) against a brute-force
    recomputation of every step from the robust covariance the MCD found: both files
    standardised by their own means and sds; RMD_i = 0.05 sqrt(z_i' C^-1 z_i); at risk when some
    protected value lies strictly within z_ij +- width * RMD_i; isolated when, in addition, the
    nearest other protected record is farther than width2."""
    x = pl.read_csv(DATA / "sdcmicro" / "Tarragona.csv").select(["PAID.UP.CAPITAL", "SHORT.TERM.DEBT", "SALES"])
    rng = np.random.default_rng(0)
    y = x.with_columns([(pl.col(c) + rng.normal(scale=0.05 * x[c].std(), size=x.height)).alias(c) for c in x.columns])
    res = sdckit.rmd_interval_disclosure(x, y, x.columns, width=0.7, width2=0.5)
    X, Y = x.to_numpy(), y.to_numpy()
    z = (X - X.mean(0)) / X.std(0, ddof=1)
    zp = (Y - Y.mean(0)) / Y.std(0, ddof=1)
    C = np.asarray(res.covariance)
    rmd = 0.05 * np.sqrt(np.einsum("ij,jk,ik->i", z, np.linalg.inv(C), z))
    np.testing.assert_allclose(res.rmd, rmd, rtol=1e-9)
    at_risk = (np.abs(zp - z) < 0.7 * rmd[:, None]).any(axis=1)
    np.testing.assert_array_equal(res.at_risk, at_risk)
    d2 = ((zp[:, None, :] - zp[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    isolated = at_risk & (np.sqrt(d2.min(axis=1)) > 0.5)
    np.testing.assert_array_equal(res.at_risk_isolated, isolated)
    assert 0 < res.n_at_risk < x.height  # the case discriminates: some records at risk, not all


# ----------------------------------------------------------------------------------------------
# F.5 outliers
# ----------------------------------------------------------------------------------------------
def test_outliers_type7_quantile_hand_example():
    # x = 1..10: type-7 quantile 0.9 = 1 + 0.9 * 9 = 9.1 -> only 10 is above; y with a missing
    # value: quantile of 1..9 = 1 + 0.9 * 8 = 8.2 -> only 9; the missing value is never flagged
    d = pl.DataFrame({"x": np.arange(1.0, 11), "y": [1.0, 2, 3, 4, 5, 6, 7, 8, 9, None]})
    res = sdckit.outliers(d, ["x", "y"], quantile=0.9)
    assert res.quantile_values == {"x": pytest.approx(9.1), "y": pytest.approx(8.2)}
    assert res.flags[:, 0].tolist() == [False] * 9 + [True]
    assert res.flags[:, 1].tolist() == [False] * 8 + [True, False]
    assert res.share_outliers == 0.2 and res.n_outliers == 2
    assert res.to_dict()["share_per_variable"] == {"x": 0.1, "y": 0.1}


def test_outliers_multivariate_finds_planted_outlier():
    # a point inside every univariate range but off the correlation structure
    rng = np.random.default_rng(4)
    z = rng.normal(size=300)
    x = np.column_stack([z, z + rng.normal(scale=0.1, size=300)])
    x[0] = [1.5, -1.5]
    res = sdckit.outliers(frame(x, ["a", "b"]), ["a", "b"], multivariate=True)
    assert res.multivariate_outlier[0]
    assert not res.outlier[0]
    from scipy import stats

    assert res.cutoff == pytest.approx(math.sqrt(stats.chi2.ppf(0.975, 2)))
    assert res.multivariate_outlier.mean() < 0.06


# ----------------------------------------------------------------------------------------------
# F.6 confidentiality plot
# ----------------------------------------------------------------------------------------------
XS = np.array([(100, 10), (120, 12), (130, 11), (400, 40), (90, 9), (1000, 80)], float)
YS = np.array([(104, 10), (115, 13), (131, 11), (380, 42), (95, 9), (1050, 85)], float)


def test_confidentiality_spec_example():
    # spec F.6 example [V-py]: alpha = 0.2, |U| = 30, delta = z_(6) = 0.1543316
    res = sdckit.confidentiality_plot(frame(XS, ["a", "b"]), frame(YS, ["a", "b"]), ["a", "b"], significance=0.2)
    assert res.delta == pytest.approx(0.1543316, abs=5e-8)
    assert res.neighbours.tolist() == [2, 3, 2, 1, 2, 1]
    np.testing.assert_allclose(res.perturbation, [0.03980, 0.04228, 0.00766, 0.05000, 0.05528, 0.05009], atol=5e-6)
    assert res.nearest_correct.all() and res.in_neighbourhood.all()


def _direct_confidentiality(x, y, alpha):
    """Independent O(n^2) computation with the full distance matrix (test oracle)."""
    n = len(x)
    d = np.sqrt(((y[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    with np.errstate(divide="ignore", invalid="ignore"):  # an all-zero protected record: inf (NaN at 0)
        z = d / np.linalg.norm(y, axis=1)[:, None]
    nonlink = z[~np.eye(n, dtype=bool)]
    delta = np.sort(nonlink)[max(1, math.ceil(alpha * (n * (n - 1)))) - 1]  # z_(ceil(alpha |U|)), NaN last
    nb = (z < delta).sum(1)
    zo = z.copy()
    np.fill_diagonal(zo, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):  # an all-zero original record: IL infinite or NaN
        il = np.diag(d) / np.linalg.norm(x, axis=1)
    return delta, nb, np.diag(z) <= zo.min(1), np.diag(z) < delta, il


@pytest.mark.parametrize("log", [False, True])
def test_confidentiality_tarragona_with_noise_against_direct(log):
    # the acceptance check: Tarragona (834 firms) protected with additive noise (10 % of
    # each variable's sd, seeded); every count checked against the direct computation
    t = pl.read_csv(DATA / "sdcmicro" / "Tarragona.csv")
    cols = ["PAID.UP.CAPITAL", "SHORT.TERM.DEBT", "SALES"]
    x = t.select(cols).to_numpy().astype(float)
    rng = np.random.default_rng(11)
    y = x + rng.normal(size=x.shape) * 0.1 * x.std(0, ddof=1)
    if log:  # keep firms with positive values in both files for the log scale
        keep = (x > 0).all(1) & (y > 0).all(1)
        x, y = x[keep], y[keep]
    res = sdckit.confidentiality_plot(frame(x, cols), frame(y, cols), cols, significance=0.05, log=log)
    xx, yy = (np.log(x), np.log(y)) if log else (x, y)
    delta, nb, nearest, inside, il = _direct_confidentiality(xx, yy, 0.05)
    assert res.delta == delta
    assert res.neighbours.tolist() == nb.tolist()
    assert res.nearest_correct.tolist() == nearest.tolist()
    assert res.in_neighbourhood.tolist() == inside.tolist()
    np.testing.assert_allclose(res.perturbation, il, rtol=1e-12)
    assert 0 < res.to_dict()["share_nearest_correct"] < 1


def _random_pair(rng, n, p):
    """Rounded lognormal data with ties, repeated records and (sometimes) all-zero protected
    records: the hard cases for an exact selection."""
    x = np.round(rng.lognormal(size=(n, p)) * rng.choice([1, 10], p), int(rng.integers(0, 3)))
    y = np.round(x * rng.lognormal(sigma=rng.choice([0.01, 0.2]), size=x.shape), int(rng.integers(0, 3)))
    if rng.random() < 0.3:
        y[rng.random(n) < 0.2] = 0
    if rng.random() < 0.3:
        x[rng.random(n) < 0.3] = x[0]
        y[rng.random(n) < 0.3] = x[0]
    return x, y


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10**6),
    st.integers(2, 60),
    st.integers(1, 5),
    st.sampled_from([0.01, 0.05, 0.2, 0.5, 0.9, 0.999]),
    st.sampled_from([None, 1, 7, 40]),
)
def test_confidentiality_kernel_matches_direct(seed, n, p, alpha, bracket_pairs):
    # the one-pass kernel (sampled bracket of delta, squared-distance thresholds per record) gives
    # exactly the direct computation, also with ties, repeated records, all-zero protected records
    # (z infinite or NaN) and alpha so large that delta is infinite or NaN; tiny bracket samples
    # make the bracket miss, which must fall back to the radix selection
    x, y = _random_pair(np.random.default_rng(seed), n, p)
    kwargs = {} if bracket_pairs is None else {"bracket_pairs": bracket_pairs}
    with np.errstate(divide="ignore", invalid="ignore"):
        res = core.confidentiality(x, y, alpha, **kwargs)
    delta, nb, nearest, inside, _ = _direct_confidentiality(x, y, alpha)
    assert res["delta"] == delta or (np.isnan(delta) and np.isnan(res["delta"]))
    assert res["neighbours"].tolist() == nb.tolist()
    assert res["nearest_correct"].tolist() == nearest.tolist()
    assert res["in_neighbourhood"].tolist() == inside.tolist()


@pytest.mark.parametrize("bracket", ["below", "above", "empty", "exact", "nan"])
def test_confidentiality_bracket_misses_fall_back(monkeypatch, bracket):
    # whatever the bracket, the result is exact: a bracket that misses delta (too low, too high,
    # empty, not finite) is detected by the pass and the radix selection takes over
    rng = np.random.default_rng(5)
    x = rng.lognormal(size=(300, 3))
    y = x * rng.lognormal(sigma=0.05, size=x.shape)
    delta, nb, nearest, inside, _ = _direct_confidentiality(x, y, 0.05)
    given_bracket = {
        "below": (0.0, delta / 2),
        "above": (2 * delta, 3 * delta),
        "empty": (delta, delta / 2),
        "exact": (delta, delta),
        "nan": (float("nan"), 1.0),
    }[bracket]
    monkeypatch.setattr(core, "_sampled_bracket", lambda *a, **k: given_bracket)
    res = core.confidentiality(x, y, 0.05)
    assert res["delta"] == delta
    assert res["neighbours"].tolist() == nb.tolist()
    assert res["nearest_correct"].tolist() == nearest.tolist() and res["in_neighbourhood"].tolist() == inside.tolist()


def test_confidentiality_sampled_bracket_path_on_a_larger_file():
    # n = 1,500: |U| = 2,248,500 > 2 x 10^6, so the default sampled bracket is used (below that
    # every non-link pair is a candidate); the result is the direct one
    rng = np.random.default_rng(8)
    x = rng.lognormal(size=(1500, 4))
    y = x * rng.lognormal(sigma=0.1, size=x.shape)
    res = sdckit.confidentiality_plot(x, y, ["0", "1", "2", "3"])
    delta, nb, nearest, inside, il = _direct_confidentiality(x, y, 0.05)
    assert res.delta == delta and res.exact
    assert res.neighbours.tolist() == nb.tolist() and res.nearest_correct.tolist() == nearest.tolist()
    np.testing.assert_allclose(res.perturbation, il, rtol=1e-12)


def test_confidentiality_sampled_delta_for_large_files():
    # above the exact limit delta is estimated from sampled non-link pairs: close to the exact one
    rng = np.random.default_rng(6)
    x = rng.lognormal(size=(400, 3))
    y = x * rng.lognormal(sigma=0.05, size=x.shape)
    exact = core.confidentiality(x, y, 0.05)
    approx = core.confidentiality(x, y, 0.05, exact_limit=100, sample_pairs=200_000)
    assert not approx["exact"]
    assert approx["delta"] == pytest.approx(exact["delta"], rel=0.03)
    # neighbour counts of the sampled path are exact for its delta (k-d tree radius query)
    d = np.sqrt(((y[:, None] - x[None]) ** 2).sum(-1)) / np.linalg.norm(y, axis=1)[:, None]
    assert approx["neighbours"].tolist() == (d < approx["delta"]).sum(1).tolist()
    assert approx["nearest_correct"].tolist() == exact["nearest_correct"].tolist()


def test_confidentiality_plot_draws_safety_rules():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    res = sdckit.confidentiality_plot(frame(XS, ["a", "b"]), frame(YS, ["a", "b"]), ["a", "b"], significance=0.2)
    ax = res.plot(min_perturbation=0.051, min_neighbours=2)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "unsafe" in labels and "perturbation 0.051" in labels and "2 neighbours" in labels
    ax = res.plot(curve=lambda nb: 0.06 - 0.01 * nb)
    assert "safety curve" in [t.get_text() for t in ax.get_legend().get_texts()]
    # below the curve 0.06 - 0.01 nb: records 3 (nb 2: 0.0077 < 0.04) and 1 (nb 2: 0.0398 < 0.04)
    assert res.unsafe(curve=lambda nb: 0.06 - 0.01 * nb).tolist() == [True, False, True, False, False, False]
    # unsafe = perturbation < 0.045 and nb < 2 and perturbation < 0.06 - 0.01 nb: none (records 4, 6
    # have nb = 1 but perturbations 0.05, 0.0501)
    assert res.unsafe(min_perturbation=0.045, min_neighbours=2).sum() == 0
    assert res.unsafe(min_perturbation=0.051, min_neighbours=2).tolist() == [False, False, False, True, False, True]
    assert res.unsafe().sum() == 0
    import matplotlib.pyplot as plt

    plt.close("all")


def test_confidentiality_validation():
    with pytest.raises(SdcError, match="log"):
        sdckit.confidentiality_plot(O8, P8.with_columns(pl.lit(0.0).alias("age")), V3, log=True)
    with pytest.raises(SdcError, match="significance: got 1.5"):
        sdckit.confidentiality_plot(O8, P8, V3, significance=1.5)
    with pytest.warns(SdcWarning, match="all zero"):
        sdckit.confidentiality_plot(
            O8,
            P8.with_columns(
                pl.Series("inc", [0.0] + list(Y8[1:, 0])),
                pl.Series("exp", [0.0] + list(Y8[1:, 1])),
                pl.Series("age", [0.0] + list(Y8[1:, 2])),
            ),
            V3,
        )


# ----------------------------------------------------------------------------------------------
# F.3.2 relative-interval rule
# ----------------------------------------------------------------------------------------------
def _relative_brute(X, p, groups=None):
    """Direct count over all pairs (the definition of spec F.3.2, jointly over the columns)."""
    n = X.shape[0]
    out = np.full(n, np.nan)
    for i in range(n):
        if np.isnan(X[i]).any():
            continue
        c = 0
        for h in range(n):
            if np.isnan(X[h]).any() or (groups is not None and groups[h] != groups[i]):
                continue
            if all(abs(X[h, j] - X[i, j]) < p * abs(X[i, j]) or X[h, j] == X[i, j] for j in range(X.shape[1])):
                c += 1
        out[i] = c
    return out


def test_relative_interval_hand_example():
    # spec G running example, p = 0.2 (open intervals; a value counts itself):
    # inc 10 -> (8, 12) holds only 10; 12 -> (9.6, 14.4) holds 10 and 12; 15 -> (12, 18) only 15 (12 is on
    # the boundary); 20 and 22 hold each other; 30, 45, 80 are alone.
    # exp 8 -> (6.4, 9.6) and 9 -> (7.2, 10.8) hold 8 and 9; 15 -> (12, 18) holds both 15s.
    r = sdckit.relative_interval_risk(O8, ["inc", "exp"], joint=True)
    np.testing.assert_array_equal(r.counts[:, 0], [1, 2, 1, 2, 2, 1, 1, 1])
    np.testing.assert_array_equal(r.counts[:, 1], [2, 2, 1, 2, 2, 1, 1, 1])
    # jointly: record 2 (12, 9) holds records 1 and 2 on both; record 1 (10, 8) holds only itself on inc
    np.testing.assert_array_equal(r.joint_counts, [1, 2, 1, 2, 2, 1, 1, 1])
    assert r.n_unsafe == 8 and r.share_unsafe == 1.0  # c_min = 3: every value is unsafe
    r2 = sdckit.relative_interval_risk(O8, "inc", p=0.5, c_min=2)
    # inc 10 -> (5, 15): 10, 12; 12 -> (6, 18): 10, 12, 15; 15 -> (7.5, 22.5): 10..22; 20 -> (10, 30): 12, 15,
    # 20, 22 (10 and 30 on the boundaries); 30 -> (15, 45): 20, 22, 30; 80 -> (40, 120): 45, 80
    np.testing.assert_array_equal(r2.counts[:, 0], [2, 3, 5, 4, 5, 3, 2, 2])
    assert r2.n_unsafe == 0
    d = r2.to_dict()
    assert d["unsafe_values"] == {"inc": {"n_unsafe": 0, "n_observed": 8}} and "joint" not in d


def test_relative_interval_zero_negative_and_missing():
    # a zero's open interval is empty, but equal values count; negative values use |x|;
    # missing values are neither counted nor unsafe
    d = pl.DataFrame({"x": [0.0, 0.0, -10.0, -11.0, 9.5, None]})
    r = sdckit.relative_interval_risk(d, "x", p=0.2, c_min=2)
    np.testing.assert_array_equal(r.counts[:5, 0], [2, 2, 2, 2, 1])  # -10 -> (-12, -8): -10, -11; 9.5 alone
    assert np.isnan(r.counts[5, 0]) and not r.unsafe[5, 0]
    np.testing.assert_array_equal(r.unsafe[:, 0], [False, False, False, False, True, False])


def test_relative_interval_within_keys():
    d = pl.DataFrame({"g": ["a", "a", "b", "b", None, None], "x": [10.0, 11.0, 10.0, 30.0, 10.5, 10.2]})
    r = sdckit.relative_interval_risk(d, "x", keys="g", c_min=2)
    # groups a: 10, 11 together; b: 10 and 30 apart; missing g is its own group: 10.5 and 10.2 together
    np.testing.assert_array_equal(r.counts[:, 0], [2, 2, 1, 1, 2, 2])
    assert r.keys == ("g",) and r.n_unsafe == 2
    whole = sdckit.relative_interval_risk(d, "x", c_min=2)
    assert (whole.counts >= r.counts).all()  # a key can only split the candidates


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 3), st.sampled_from([0.05, 0.2, 0.5]), st.integers(0, 10**6))
def test_relative_interval_matches_brute_force(n, k, p, seed):
    rng = np.random.default_rng(seed)
    X = np.round(rng.lognormal(2, 1, (n, k))) * rng.choice([-1.0, 1.0, 1.0, 0.0], (n, k))
    X[rng.random((n, k)) < 0.1] = np.nan
    g = rng.integers(0, 3, n)
    frame_ = pl.DataFrame({**{f"v{j}": X[:, j] for j in range(k)}, "g": g})
    names = [f"v{j}" for j in range(k)]
    for keys, groups in ((None, None), ("g", g)):
        r = sdckit.relative_interval_risk(frame_, names, p=p, joint=True, keys=keys)
        np.testing.assert_array_equal(r.joint_counts, _relative_brute(X, p, groups))
        for j in range(k):
            np.testing.assert_array_equal(r.counts[:, j], _relative_brute(X[:, j : j + 1], p, groups))
        # row order does not matter
        perm = rng.permutation(n)
        rp = sdckit.relative_interval_risk(frame_[perm], names, p=p, joint=True, keys=keys)
        np.testing.assert_array_equal(rp.joint_counts, r.joint_counts[perm])
    # the chunked joint count gives the same numbers with tiny chunks
    np.testing.assert_array_equal(core.joint_relative_interval_counts(X, p, None, chunk=7), _relative_brute(X, p))


def test_relative_interval_validation():
    with pytest.raises(SdcError, match="p: got 1"):
        sdckit.relative_interval_risk(O8, V3, p=1)
    with pytest.raises(SdcError, match="p: got 0"):
        sdckit.relative_interval_risk(O8, V3, p=0)
    with pytest.raises(SdcError, match="c_min: got 0"):
        sdckit.relative_interval_risk(O8, V3, c_min=0)
    with pytest.raises(SdcError, match="c_min: got 2.5"):
        sdckit.relative_interval_risk(O8, V3, c_min=2.5)
    with pytest.raises(SdcError, match="joint: got 'yes'"):
        sdckit.relative_interval_risk(O8, V3, joint="yes")
    with pytest.raises(MissingColumnError, match="income"):
        sdckit.relative_interval_risk(O8, ["income"])
    with pytest.raises(MissingColumnError, match="region"):
        sdckit.relative_interval_risk(O8, V3, keys="region")
    with pytest.raises(SdcError, match="keys: inc also given as variables"):
        sdckit.relative_interval_risk(O8, V3, keys="inc")
    with pytest.raises(SdcError, match="column age of data has type String"):
        sdckit.relative_interval_risk(O8.with_columns(pl.col("age").cast(pl.String)), V3)
    with pytest.raises(SdcError, match="no records"):
        sdckit.relative_interval_risk(O8.head(0), V3)


# ----------------------------------------------------------------------------------------------
# validation of original / protected pairs (all continuous measures)
# ----------------------------------------------------------------------------------------------
PAIR_FUNCS = [sdckit.interval_disclosure, sdckit.rmd_interval_disclosure, sdckit.confidentiality_plot]


@pytest.mark.parametrize("fn", PAIR_FUNCS, ids=lambda f: f.__name__)
def test_mismatched_pairs_give_clear_errors(fn):
    with pytest.raises(SdcError, match="protected: has 7 records but original has 8"):
        fn(O8, P8.head(7), V3)
    with pytest.raises(MissingColumnError, match=r"variables \(protected\).*age"):
        fn(O8, P8.drop("age"), V3)
    with pytest.raises(SdcError, match="column age of protected has type String"):
        fn(O8, P8.with_columns(pl.col("age").cast(pl.String)), V3)
    with pytest.raises(SdcError, match="infinite"):
        fn(O8, P8.with_columns(pl.lit(np.inf).alias("age")), V3)
    with pytest.raises(SdcError, match="no records"):
        fn(O8.head(0), P8.head(0), V3)
    with pytest.raises(SdcError, match="variables"):
        fn(O8, P8, [])


def test_inputs_not_mutated_and_numpy_input():
    o, p = O8.clone(), P8.clone()
    xa, ya = X8.copy(), Y8.copy()
    sdckit.interval_disclosure(O8, P8, V3)
    sdckit.confidentiality_plot(X8, Y8, ["0", "1", "2"])
    assert O8.equals(o) and P8.equals(p)
    assert np.array_equal(xa, X8) and np.array_equal(ya, Y8)


def test_parameter_validation():
    with pytest.raises(SdcError, match="width: got -1"):
        sdckit.interval_disclosure(O8, P8, V3, width=-1)
    with pytest.raises(SdcError, match="width: got 'a'"):
        sdckit.interval_disclosure(O8, P8, V3, width="a")
    with pytest.raises(SdcError, match="quantile: got 1"):
        sdckit.outliers(O8, V3, quantile=1)
    with pytest.raises(SdcError, match="multivariate: got 1"):
        sdckit.outliers(O8, V3, multivariate=1)
    with pytest.raises(SdcError, match="mcd_fraction: got 0.4"):
        sdckit.outliers(O8, V3, multivariate=True, mcd_fraction=0.4)
    with pytest.raises(SdcError, match="width2: got -0.1"):
        sdckit.rmd_interval_disclosure(O8, P8, V3, width2=-0.1)
    with pytest.raises(SdcError, match="weighting: got 'max'"):
        sdckit.rmd_interval_disclosure(O8, P8, V3, weighting="max")
    with pytest.raises(SdcError, match="seed: got -1"):
        sdckit.rmd_interval_disclosure(O8, P8, V3, seed=-1)
    with pytest.raises(SdcError, match="log: got 'yes'"):
        sdckit.confidentiality_plot(O8, P8, V3, log="yes")


def test_relative_interval_cli(tmp_path, capsys):
    from sdckit.cli import main

    path, out, rec = tmp_path / "x.csv", tmp_path / "r.json", tmp_path / "r.csv"
    O8.with_columns(pl.Series("g", list("aabbaabb"))).write_csv(path)
    code = main(
        [
            "interval",
            str(path),
            "--variables",
            "inc,exp",
            "--p",
            "0.5",
            "--c-min",
            "2",
            "--joint",
            "--json",
            str(out),
            "--records",
            str(rec),
            "--no-progress",
        ]
    )
    assert code == 0
    assert "Relative-interval rule" in capsys.readouterr().out
    payload = json.loads(out.read_text())["relative_interval"]
    direct = sdckit.relative_interval_risk(O8, ["inc", "exp"], p=0.5, c_min=2, joint=True)
    assert payload == json.loads(json.dumps(direct.to_dict()))
    assert pl.read_csv(rec)["count_inc"].to_list() == [2, 3, 5, 4, 5, 3, 2, 2]  # test_relative_interval_hand_example
    # within keys, and one-line errors naming the option
    assert main(["interval", str(path), "--variables", "inc", "--keys", "g", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["interval", str(path), "--variables", "inc", "--p", "1.5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdckit: error: p: got 1.5") and err.count("\n") == 1
    assert main(["interval", str(path), "--variables", "inc", "--keys", "region"]) == 2
    assert "region" in capsys.readouterr().err
    # --missing: codes of the keys read as missing (key g = "b" made missing joins the null group)
    O8.with_columns(pl.Series("g", ["a", "a", "b", "b", None, None, "c", "c"])).write_csv(path)
    assert (
        main(
            [
                "interval",
                str(path),
                "--variables",
                "inc",
                "--keys",
                "g",
                "--missing",
                "b",
                "--p",
                "0.5",
                "--c-min",
                "2",
                "--json",
                str(out),
                "--overwrite",
                "--no-progress",
            ]
        )
        == 0
    )
    direct = sdckit.relative_interval_risk(
        O8.with_columns(pl.Series("g", ["a", "a", None, None, None, None, "c", "c"])), "inc", p=0.5, c_min=2, keys="g"
    )
    assert json.loads(out.read_text())["relative_interval"] == json.loads(json.dumps(direct.to_dict()))


# ----------------------------------------------------------------------------------------------
# singular robust covariances are explained, naming the variables
# ----------------------------------------------------------------------------------------------
def _incomes(n=400, seed=0):
    """Income-like columns: ``benefit`` is 0 for 70 % of the records (more than the h = n/2
    records of the MCD subset), ``wage`` and ``total`` are continuous."""
    rng = np.random.default_rng(seed)
    wage = rng.lognormal(10, 0.5, n)
    benefit = np.where(rng.random(n) < 0.7, 0.0, rng.lognormal(8, 0.5, n))
    total = wage + rng.lognormal(9, 0.5, n)
    o = pl.DataFrame({"wage": wage, "benefit": benefit, "total": total})
    p = o.with_columns([(pl.col(c) * (1 + 0.02 * rng.normal(size=n))).alias(c) for c in o.columns])
    return o, p


def test_rmd_many_zeros_names_the_variable():
    # 70 % of benefit is 0: an h-subset (h = (n + p + 1) // 2 = 202) with benefit constant exists, so
    # the MCD is an exact fit and the robust covariance is singular; the error names benefit and the
    # share, not a collinearity
    o, p = _incomes()
    share = 100 * float((o["benefit"] == 0).mean())
    with pytest.raises(
        SdcError,
        match=rf"variables: benefit \({share:.1f} % of records\) takes one value in at "
        r"least h = 202 of the 400 records",
    ) as err:
        sdckit.rmd_interval_disclosure(o, p, ["wage", "benefit", "total"])
    assert "collinear" not in str(err.value) and "wage" not in str(err.value).split(";")[0]
    with pytest.raises(SdcError, match="benefit"):
        sdckit.outliers(o, ["wage", "benefit", "total"], multivariate=True)
    # without the tied variable the measure runs, and its weighted risks are finite and moderate
    res = sdckit.rmd_interval_disclosure(o, p, ["wage", "total"])
    assert np.isfinite(res.wrisk1) and res.rmd.max() < 10


def test_rmd_exact_linear_relation_names_the_variables():
    # total = wage + benefit exactly for every record, no variable tied: the flattest direction of
    # the covariance involves all three
    rng = np.random.default_rng(2)
    wage, benefit = rng.lognormal(10, 0.5, 300), rng.lognormal(8, 0.5, 300)
    o = pl.DataFrame({"wage": wage, "benefit": benefit, "total": wage + benefit, "age": rng.uniform(20, 60, 300)})
    with pytest.raises(SdcError, match="exact linear relation among wage, benefit, total "):
        sdckit.rmd_interval_disclosure(o, o, o.columns)
    # the relation in about 70 % of the records only (more than h): the MCD is still an exact fit;
    # the search reports it (its subset is not returned, so the variables are not named then)
    broken = o.with_columns(
        pl.when(pl.Series(rng.random(300) < 0.3)).then(pl.col("total") * 1.5).otherwise(pl.col("total")).alias("total")
    )
    with pytest.raises(SdcError, match="exact linear relation"):
        sdckit.rmd_interval_disclosure(broken, broken, broken.columns)


def test_rmd_weighted_risks_state_their_scale():
    # sdcMicro's wrisk1 = |w| * sum(RMD_w) / n is a score that grows with n, not a share: with every
    # record flagged (unchanged data) it is n * mean(RMD); the summary says so
    o, _ = _incomes(n=400, seed=3)
    res = sdckit.rmd_interval_disclosure(o, o, ["wage", "total"])
    assert res.n_at_risk == 400
    assert res.wrisk1 == pytest.approx(400 * res.rmd.mean())
    assert res.wrisk1 > 1
    text = str(res.summary())
    assert "wrisk1 = |w| x sum of RMD over w / n" in text and "scores, not shares" in text
    s = sdckit.rmd_interval_disclosure(o, o, ["wage", "total"], weighting="sum")
    assert s.wrisk1 == pytest.approx(res.rmd.mean()) and "|w| x" not in str(s.summary())


# ----------------------------------------------------------------------------------------------
# relative_interval_risk(missing=)
# ----------------------------------------------------------------------------------------------
def test_relative_interval_missing_codes_in_keys():
    # -9 in the key is missing (one more category, like null): the same counts as with null
    d = pl.DataFrame({"g": [1, 1, -9, -9, 2], "x": [10.0, 10.5, 10.2, 30.0, 10.1]})
    coded = sdckit.relative_interval_risk(d, "x", keys="g", missing=-9, c_min=2)
    nulls = sdckit.relative_interval_risk(d.with_columns(pl.col("g").replace(-9, None)), "x", keys="g", c_min=2)
    np.testing.assert_array_equal(coded.counts, nulls.counts)
    # groups {10, 10.5}, {10.2, 30} (missing), {10.1}: 10.2 -> (8.16, 12.24) holds only itself in its group
    np.testing.assert_array_equal(coded.counts[:, 0], [2, 2, 1, 1, 1])
    # a -9 code and a null are the same (missing) category with missing=-9, two categories without:
    mixed = pl.DataFrame({"g": [None, -9], "x": [10.0, 10.5]})
    assert sdckit.relative_interval_risk(mixed, "x", keys="g", missing=[-9], c_min=2).counts[:, 0].tolist() == [2, 2]
    assert sdckit.relative_interval_risk(mixed, "x", keys="g", c_min=2).counts[:, 0].tolist() == [1, 1]
    with pytest.raises(SdcError, match="missing: .*expected keys="):
        sdckit.relative_interval_risk(d, "x", missing=-9)
    with pytest.warns(SdcWarning, match=r"missing: -7 occur\(s\) in none of the key columns \(g\)"):
        sdckit.relative_interval_risk(d, "x", keys="g", missing=[-9, -7])


# ----------------------------------------------------------------------------------------------
# renamed parameters and result attributes (one release of DeprecationWarning)
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call, new_call",
    [
        (
            lambda: sdckit.interval_disclosure(O8, P8, V3, k=0.1),
            lambda: sdckit.interval_disclosure(O8, P8, V3, width=0.1),
        ),
        (
            lambda: sdckit.interval_disclosure(O8, P8, V3, 0.1),
            lambda: sdckit.interval_disclosure(O8, P8, V3, width=0.1),
        ),
        (
            lambda: sdckit.rmd_interval_disclosure(O8, P8, V3, k=0.7, k2=0.5, mcd_alpha=0.75),
            lambda: sdckit.rmd_interval_disclosure(O8, P8, V3, width=0.7, width2=0.5, mcd_fraction=0.75),
        ),
        (
            lambda: sdckit.rmd_interval_disclosure(O8, P8, V3, 0.7, 0.5),
            lambda: sdckit.rmd_interval_disclosure(O8, P8, V3, width=0.7, width2=0.5),
        ),
        (
            lambda: sdckit.outliers(O8, V3, percentile=0.8, multivariate=True, mcd_alpha=0.75),
            lambda: sdckit.outliers(O8, V3, quantile=0.8, multivariate=True, mcd_fraction=0.75),
        ),
        (lambda: sdckit.outliers(O8, V3, 0.8), lambda: sdckit.outliers(O8, V3, quantile=0.8)),
        (
            lambda: sdckit.confidentiality_plot(O8, P8, V3, alpha=0.2),
            lambda: sdckit.confidentiality_plot(O8, P8, V3, significance=0.2),
        ),
        (
            lambda: sdckit.confidentiality_plot(O8, P8, V3, 0.2),
            lambda: sdckit.confidentiality_plot(O8, P8, V3, significance=0.2),
        ),
        (
            lambda: sdckit.relative_interval_risk(O8, V3, 0.5, 2),
            lambda: sdckit.relative_interval_risk(O8, V3, p=0.5, c_min=2),
        ),
    ],
)
def test_old_parameter_names_warn_and_work(call, new_call):
    with pytest.warns(DeprecationWarning, match="sdckit 0.3"):
        old = call()
    new = new_call()
    assert old.to_dict() == new.to_dict()
    for name, value in old._records().items():
        np.testing.assert_array_equal(value, new._records()[name])


def test_old_and_new_name_together_is_an_error():
    with pytest.raises(TypeError, match="width"):
        sdckit.interval_disclosure(O8, P8, V3, k=0.1, width=0.2)


def test_old_result_attributes_warn_and_work():
    drisk = sdckit.interval_disclosure(O8, P8, V3, width=0.05)
    rmd = sdckit.rmd_interval_disclosure(O8, P8, V3, width=0.7, width2=0.5)
    out = sdckit.outliers(O8, V3, quantile=0.8)
    conf = sdckit.confidentiality_plot(O8, P8, V3, significance=0.2)
    rel = sdckit.relative_interval_risk(O8, V3)
    pairs = [
        (drisk, "k", "width"),
        (drisk, "risk", "share_at_risk"),
        (drisk, "records_at_risk", "n_at_risk"),
        (rmd, "k", "width"),
        (rmd, "k2", "width2"),
        (rmd, "risk1", "share_at_risk"),
        (rmd, "risk2", "share_at_risk_isolated"),
        (out, "percentile", "quantile"),
        (out, "quantiles", "quantile_values"),
        (out, "share", "share_outliers"),
        (conf, "alpha", "significance"),
        (rel, "records_unsafe", "n_unsafe"),
    ]
    for res, old, new in pairs:
        with pytest.warns(DeprecationWarning, match=f"{old} is now called {new}"):
            assert getattr(res, old) == getattr(res, new)


def test_to_dict_has_counts_and_shares_but_no_percentages():
    results = [
        sdckit.interval_disclosure(O8, P8, V3),
        sdckit.rmd_interval_disclosure(O8, P8, V3),
        sdckit.outliers(O8, V3, multivariate=True),
        sdckit.confidentiality_plot(O8, P8, V3),
        sdckit.relative_interval_risk(O8, V3, joint=True),
    ]

    def keys(d):
        for k, v in d.items():
            yield k
            if isinstance(v, dict):
                yield from keys(v)

    for res in results:
        d = res.to_dict()
        assert not any("percent" in k or k.endswith("_pct") for k in keys(d)), d["measure"]
        for k in keys(d):  # every share is a fraction
            if k.startswith("share_") and isinstance(d.get(k), float):
                assert 0.0 <= d[k] <= 1.0
