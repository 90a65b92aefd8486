"""Noise addition (sdcMicro's addNoise): the noise of every method against its formula (sampling
error bounds on 10^5 records, hand calculations, a Gram-Schmidt oracle for ROMM), missing
values, strata, seeds, bad input, and the properties every protection method keeps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import sdckit
from sdckit._core import noise as core
from sdckit.protect.noise import ROMM_MAX_RECORDS, add_noise

N_BIG = 100_000
RANDOM_METHODS = ("additive", "additive0", "correlated", "correlated2", "ROMM", "outdect")


def _frame(n: int, seed: int = 0) -> pl.DataFrame:
    """Three correlated continuous variables (sd about 10, 4 and 25), an integer and a stratum."""
    rng = np.random.default_rng(seed)
    cov = np.array([[100.0, 24.0, 150.0], [24.0, 16.0, 40.0], [150.0, 40.0, 625.0]])
    X = rng.multivariate_normal([50.0, -3.0, 1000.0], cov, size=n)
    return pl.DataFrame(
        {
            "a": X[:, 0],
            "b": X[:, 1],
            "c": X[:, 2],
            "k": rng.integers(0, 100, n),
            "s": rng.choice(["north", "south"], n),
        }
    )


@pytest.fixture(scope="module")
def big():
    return _frame(N_BIG)


def _chi2_bounds(n: int, level: float = 1e-6) -> tuple[float, float]:
    """(n - 1) S^2 / sigma^2 ~ chi^2_{n-1}: bounds of S^2 / sigma^2 at a two-sided level."""
    return stats.chi2.ppf(level / 2, n - 1) / (n - 1), stats.chi2.ppf(1 - level / 2, n - 1) / (n - 1)


# ----------------------------------------------------------------------------------------------
# additive and additive0
# ----------------------------------------------------------------------------------------------
def test_additive_noise_has_the_stated_sd(big):
    """e = x' - x ~ N(0, (1.5 s_j)^2): the sample variance of e within its chi-square bounds
    (two-sided 1e-6) and its mean within 5 standard errors; the reported sd is 1.5 s_j exactly."""
    res = add_noise(big, ["a", "b", "c"], noise=150, seed=11)
    lo, hi = _chi2_bounds(N_BIG)
    for v in ("a", "b", "c"):
        x, e = big[v].to_numpy(), res.data[v].to_numpy() - big[v].to_numpy()
        sigma = 1.5 * np.std(x, ddof=1)
        assert res.details["noise_sd"][v] == pytest.approx(sigma, rel=1e-12)
        assert lo < np.var(e, ddof=1) / sigma**2 < hi
        assert abs(e.mean()) < 5 * sigma / math.sqrt(N_BIG)
    assert res.n_changed == {"a": N_BIG, "b": N_BIG, "c": N_BIG}


def test_noise_percentage_scales_the_sd(big):
    """noise = 20: sd 0.2 s_j (the sd, not the variance, is a percentage)."""
    res = add_noise(big, "a", noise=20, seed=2)
    e = res.data["a"].to_numpy() - big["a"].to_numpy()
    sigma = 0.2 * np.std(big["a"].to_numpy(), ddof=1)
    lo, hi = _chi2_bounds(N_BIG)
    assert lo < np.var(e, ddof=1) / sigma**2 < hi


def test_additive0_keeps_zeros():
    rng = np.random.default_rng(4)
    x = np.where(rng.random(5000) < 0.3, 0.0, rng.gamma(2.0, 100.0, 5000))
    df = pl.DataFrame({"x": x})
    out = add_noise(df, "x", method="additive0", seed=5).data["x"].to_numpy()
    assert np.array_equal(out[x == 0], x[x == 0])
    assert np.all(out[x != 0] != x[x != 0])
    # the sd is that of all values, zeros included (sdcMicro's sd(x))
    res = add_noise(df, "x", method="additive0", seed=5)
    assert res.details["noise_sd"]["x"] == pytest.approx(1.5 * np.std(x, ddof=1), rel=1e-12)
    assert res.n_changed["x"] == int(np.count_nonzero(x))


def test_zero_noise_changes_nothing(big):
    res = add_noise(big.head(1000), ["a", "k"], noise=0, seed=1)
    assert res.n_changed_total == 0
    assert res.data.select("a", "k").equals(big.head(1000).select("a", "k"))  # k stays integer


# ----------------------------------------------------------------------------------------------
# correlated and correlated2
# ----------------------------------------------------------------------------------------------
def test_correlated_noise_covariance_is_a_share_of_sigma(big):
    """E = X' - X ~ N_3(0, 0.5 Sigma), Sigma the sample covariance: every entry of cov(E) within
    5 standard errors, se(s_jk) = sqrt((t_jj t_kk + t_jk^2) / (n - 1)) for T = 0.5 Sigma."""
    names = ["a", "b", "c"]
    res = add_noise(big, names, method="correlated", noise=50, seed=21)
    X = big.select(names).to_numpy()
    E = res.data.select(names).to_numpy() - X
    T = 0.5 * np.cov(X, rowvar=False)
    C = np.cov(E, rowvar=False)
    se = np.sqrt((np.outer(np.diag(T), np.diag(T)) + T**2) / (N_BIG - 1))
    assert np.all(np.abs(C - T) < 5 * se)
    assert np.all(np.abs(E.mean(axis=0)) < 5 * np.sqrt(np.diag(T) / N_BIG))
    for j, v in enumerate(names):
        assert res.details["noise_sd"][v] == pytest.approx(math.sqrt(T[j, j]), rel=1e-12)


def test_correlated_uses_complete_records_for_sigma():
    """Sigma is the covariance of the records observed in every variable (na.omit in sdcMicro)."""
    rng = np.random.default_rng(3)
    a, b = rng.normal(0, 1, 400), rng.normal(0, 3, 400)
    a[:50] = np.nan
    res = add_noise(pl.DataFrame({"a": a, "b": b}), ["a", "b"], method="correlated", noise=100, seed=1)
    S = np.cov(np.c_[a, b][50:], rowvar=False)
    assert res.details["noise_sd"]["b"] == pytest.approx(math.sqrt(S[1, 1]), rel=1e-12)
    assert res.n_changed == {"a": 350, "b": 400}  # b of the incomplete records gets noise too


def test_covariance_factor_of_a_singular_matrix():
    S = np.array([[1.0, 2.0], [2.0, 4.0]])  # rank 1
    L = core.covariance_factor(S)
    np.testing.assert_allclose(L @ L.T, S, atol=1e-12)


def test_correlated2_keeps_means_and_variances_and_scales_covariances(big):
    """x' = d1 x + delta e: given x, mean(x') - mean(x) has sd delta s / sqrt(n) and
    var(x') - var(x) about s^2 sqrt((2 delta^4 + 4 d1^2 delta^2) / n); cov(x'_j, x'_k) -
    (1 - delta^2) cov(x_j, x_k) about s_j s_k sqrt((2 d1^2 delta^2 + delta^4) / n). All within
    5 of these standard errors; delta = 0.3 makes the scaling (0.91) visible."""
    names, delta = ["a", "b", "c"], 0.3
    d1 = math.sqrt(1 - delta**2)
    res = add_noise(big, names, method="correlated2", delta=delta, seed=31)
    X = big.select(names).to_numpy()
    Y = res.data.select(names).to_numpy()
    s = X.std(axis=0, ddof=1)
    assert np.all(np.abs(Y.mean(axis=0) - X.mean(axis=0)) < 5 * delta * s / math.sqrt(N_BIG))
    se_var = s**2 * math.sqrt((2 * delta**4 + 4 * d1**2 * delta**2) / N_BIG)
    assert np.all(np.abs(Y.var(axis=0, ddof=1) - X.var(axis=0, ddof=1)) < 5 * se_var)
    Cx, Cy = np.cov(X, rowvar=False), np.cov(Y, rowvar=False)
    se_cov = np.outer(s, s) * math.sqrt((2 * d1**2 * delta**2 + delta**4) / N_BIG)
    off = ~np.eye(3, dtype=bool)
    assert np.all(np.abs(Cy - (1 - delta**2) * Cx)[off] < 5 * se_cov[off])
    assert np.all(np.abs(Cy - Cx)[off] > 10 * se_cov[off])  # the scaling is really there
    for j, v in enumerate(names):
        assert res.details["noise_sd"][v] == pytest.approx(delta * s[j], rel=1e-12)


# ----------------------------------------------------------------------------------------------
# restr: a deterministic shrinkage
# ----------------------------------------------------------------------------------------------
def test_restr_by_hand_small_n():
    """n = 5 < 500, w = 1.5: c = sqrt((5 - 1 - 1.5) / (6 * 2.5)) = sqrt(1/6) = 0.4082483;
    mean 4; x' = c x + (1 - c) 4: 1 -> 2.7752551, 2 -> 3.1835034, 3 -> 3.5917517, 4 -> 4,
    10 -> 6.4494897."""
    df = pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 10.0]})
    res = add_noise(df, "x", method="restr", noise=150, seed=0)
    np.testing.assert_allclose(res.data["x"].to_numpy(), [2.7752551, 3.1835034, 3.5917517, 4.0, 6.4494897], atol=5e-8)
    assert res.details["shrinkage"]["x"] == pytest.approx(math.sqrt(1 / 6), rel=1e-14)
    assert res.n_changed["x"] == 4


def test_restr_factor_at_the_500_boundary():
    """w = 0.5: n = 499: sqrt((498 - 0.5) / (500 * 1.5)) = sqrt(497.5 / 750) = 0.8144528;
    n = 500: sqrt(499 / (500 + 250 - 1)) = sqrt(499 / 749) = 0.8162240;
    n = 1000: sqrt(999 / 1499) = 0.8163604; n <= 1 + w: 0 (everything to the mean)."""
    assert core.restr_factor(499, 0.5) == pytest.approx(0.8144528, abs=5e-8)
    assert core.restr_factor(500, 0.5) == pytest.approx(0.8162240, abs=5e-8)
    assert core.restr_factor(1000, 0.5) == pytest.approx(0.8163604, abs=5e-8)
    assert core.restr_factor(2, 1.5) == 0.0


def test_restr_large_n_is_the_formula():
    rng = np.random.default_rng(9)
    x = rng.gamma(3.0, 50.0, 2000)
    out = add_noise(pl.DataFrame({"x": x}), "x", method="restr", noise=50, seed=0).data["x"].to_numpy()
    c = math.sqrt(1999 / (2000 + 2000 * 0.5 - 1))
    np.testing.assert_allclose(out, c * x + (1 - c) * x.mean(), rtol=1e-13)
    assert out.mean() == pytest.approx(x.mean(), rel=1e-12)  # the mean is kept exactly


# ----------------------------------------------------------------------------------------------
# ROMM
# ----------------------------------------------------------------------------------------------
def _gram_schmidt(A: np.ndarray) -> np.ndarray:
    """Modified Gram-Schmidt on the columns of A (the oracle)."""
    Q = A.astype(float).copy()
    for i in range(Q.shape[1]):
        Q[:, i] /= np.linalg.norm(Q[:, i])
        Q[:, i + 1 :] -= np.outer(Q[:, i], Q[:, i] @ Q[:, i + 1 :])
    return Q


@pytest.mark.parametrize("p", [0.001, 0.3])
def test_romm_kernel_equals_gram_schmidt(p):
    rng = np.random.default_rng(12)
    n = 60
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0]
    Z = rng.standard_normal((n, n))
    T = _gram_schmidt(np.eye(n) + p * Z)
    np.testing.assert_allclose(core.romm(X, Z, p), T @ X, rtol=1e-9, atol=1e-9 * np.abs(X).max())


def test_romm_keeps_cross_products(big):
    """T orthogonal: X'^T X' = X^T X (hence the column norms), while the records change."""
    names = ["a", "b", "c"]
    data = big.head(800)
    res = add_noise(data, names, method="ROMM", perturbation=0.05, seed=41)
    X, Y = data.select(names).to_numpy(), res.data.select(names).to_numpy()
    np.testing.assert_allclose(Y.T @ Y, X.T @ X, rtol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(Y, axis=0), np.linalg.norm(X, axis=0), rtol=1e-12)
    assert res.n_changed_total == 3 * 800
    assert res.details["n_romm"] == 800


def test_romm_leaves_incomplete_records_and_zero_perturbation():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=100), rng.normal(size=100)
    b[:10] = np.nan
    df = pl.DataFrame({"a": a, "b": b})
    res = add_noise(df, ["a", "b"], method="ROMM", perturbation=0.1, seed=3)
    assert np.array_equal(res.data["a"].to_numpy()[:10], a[:10])
    assert res.n_changed == {"a": 90, "b": 90}
    assert any("10 record(s) with a missing value left unchanged" in n for n in res.notes)
    same = add_noise(df, ["a", "b"], method="ROMM", perturbation=0, seed=3)
    np.testing.assert_allclose(same.data["a"].to_numpy(), a, rtol=1e-13, atol=1e-15)  # T = I


def test_romm_refuses_too_many_records():
    df = pl.DataFrame({"a": np.arange(ROMM_MAX_RECORDS + 1.0), "b": np.ones(ROMM_MAX_RECORDS + 1)})
    with pytest.raises(sdckit.SdcError, match=r"method: ROMM on 5,001 records.*at most 5,000"):
        add_noise(df, ["a", "b"], method="ROMM", seed=1)


# ----------------------------------------------------------------------------------------------
# outdect
# ----------------------------------------------------------------------------------------------
def test_outdect_noise_only_on_outliers():
    """2,000 records of a bivariate normal with correlation 0.9 and 10 planted records at
    (2, -2) sd: not beyond the 0.99 quantiles, but far in Mahalanobis distance (about 20 > 2.72
    = sqrt(chi^2_{2, 0.975})). Every changed record is an outlier by one rule; the planted ones
    and every record above a 0.99 quantile are changed; central records are not."""
    rng = np.random.default_rng(17)
    X = rng.multivariate_normal([0, 0], [[1, 0.9], [0.9, 1]], size=2000)
    X[:10] = [2.0, -2.0]
    X[:10] += rng.normal(0, 0.01, (10, 2))
    df = pl.DataFrame({"a": X[:, 0] * 10 + 100, "b": X[:, 1] * 3})
    res = add_noise(df, ["a", "b"], method="outdect", noise=150, seed=7)
    changed = res.data["a"].to_numpy() != df["a"].to_numpy()
    above = (X[:, 0] > np.quantile(X[:, 0], 0.99)) | (X[:, 1] > np.quantile(X[:, 1], 0.99))
    d2 = np.einsum("ij,jk,ik->i", X, np.linalg.inv(np.array([[1, 0.9], [0.9, 1]])), X)
    assert changed[:10].all() and changed[above].all()
    assert not changed[d2 < 1].any()
    assert res.details["n_outliers"] == int(np.count_nonzero(changed)) == res.n_changed["b"]
    assert int(np.count_nonzero(changed)) < 150
    for v in ("a", "b"):
        x = df[v].to_numpy()
        assert res.details["noise_sd"][v] == pytest.approx(1.96 * np.std(x, ddof=1) / math.sqrt(2000) * 1.5)


def test_outdect_without_a_robust_distance():
    """Half the records share one value of b: the MCD is an exact fit; the 0.99 quantiles only."""
    rng = np.random.default_rng(5)
    a = rng.normal(size=400)
    b = np.where(np.arange(400) < 250, 0.0, rng.gamma(2.0, 1.0, 400))
    res = add_noise(pl.DataFrame({"a": a, "b": b}), ["a", "b"], method="outdect", seed=2)
    above = (a > np.quantile(a, 0.99)) | (b > np.quantile(b, 0.99))
    assert res.details["n_outliers"] == int(np.count_nonzero(above))
    assert any("0.99 quantiles only" in n for n in res.notes)


# ----------------------------------------------------------------------------------------------
# seeds, missing values, strata
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", RANDOM_METHODS)
def test_same_seed_same_output_other_seed_other_output(big, method):
    data = big.head(600)
    names = ["a", "b", "c"]
    r1 = add_noise(data, names, method=method, seed=123)
    assert add_noise(data, names, method=method, seed=123).data.equals(r1.data)
    assert not add_noise(data, names, method=method, seed=124).data.equals(r1.data)
    assert add_noise(data, **r1.parameters).data.equals(r1.data)  # replayable from the log


def test_fresh_seed_is_recorded_and_replays(big):
    data = big.head(300)
    r1 = add_noise(data, "a")
    assert isinstance(r1.parameters["seed"], int)
    assert add_noise(data, **r1.parameters).data.equals(r1.data)


@pytest.mark.parametrize("method", [*RANDOM_METHODS, "restr"])
def test_missing_values_stay_missing(method):
    rng = np.random.default_rng(8)
    n = 300
    a, b = rng.normal(10, 2, n), rng.normal(0, 5, n)
    a[::7] = np.nan
    b[::11] = -999.0  # a missing-value code
    df = pl.DataFrame({"a": a, "b": b}).with_columns(pl.col("a").fill_nan(None))
    res = add_noise(df, ["a", "b"], method=method, missing=-999, seed=1)
    out = res.data
    assert out["a"].is_null().to_list() == df["a"].is_null().to_list()
    assert np.array_equal(out["b"].to_numpy()[::11], b[::11])
    observed_b = np.ones(n, dtype=bool)
    observed_b[::11] = False
    # the missing-value code is not part of the statistics
    if method in ("additive", "additive0"):
        assert res.details["noise_sd"]["b"] == pytest.approx(1.5 * np.std(b[observed_b], ddof=1), rel=1e-12)


def test_strata_are_perturbed_separately():
    """Two strata of very different scale: additive noise has each stratum's sd; restr within
    strata equals restr applied to each stratum alone (deterministic, exact)."""
    rng = np.random.default_rng(6)
    n = 20_000
    s = np.where(np.arange(n) % 2 == 0, "small", "large")
    x = np.where(s == "small", rng.normal(0, 1, n), rng.normal(0, 1000, n))
    df = pl.DataFrame({"x": x, "s": s})
    res = add_noise(df, "x", strata="s", seed=9)
    e = res.data["x"].to_numpy() - x
    lo, hi = _chi2_bounds(n // 2)
    for label in ("small", "large"):
        rows = s == label
        sigma = 1.5 * np.std(x[rows], ddof=1)
        assert res.details["noise_sd"]["x"][label] == pytest.approx(sigma, rel=1e-12)
        assert lo < np.var(e[rows], ddof=1) / sigma**2 < hi
    assert res.n_changed_by_stratum == {"small": {"x": n // 2}, "large": {"x": n // 2}}
    both = add_noise(df, "x", method="restr", noise=80, strata="s", seed=0).data["x"].to_numpy()
    for label in ("small", "large"):
        rows = s == label
        alone = add_noise(df.filter(pl.col("s") == label), "x", method="restr", noise=80, seed=0)
        np.testing.assert_array_equal(both[rows], alone.data["x"].to_numpy())


def test_small_stratum_left_unchanged_with_a_note():
    df = pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 50.0], "s": ["a", "a", "a", "a", "b"]})
    res = add_noise(df, "x", strata="s", seed=1)
    assert res.data["x"][4] == 50.0
    assert res.n_changed_by_stratum["b"] == {"x": 0}
    assert any("stratum b" in n and "fewer than two" in n for n in res.notes)


# ----------------------------------------------------------------------------------------------
# frames, bad input
# ----------------------------------------------------------------------------------------------
def test_pandas_and_numpy_input():
    rng = np.random.default_rng(1)
    pdf = pd.DataFrame({"x": rng.normal(size=50), "y": rng.integers(0, 9, 50)}, index=np.arange(100, 150))
    out = add_noise(pdf, ["x", "y"], seed=2).data
    assert isinstance(out, pd.DataFrame) and list(out.index) == list(pdf.index)
    assert out["y"].dtype.kind == "f"  # integers with noise become floats
    arr = rng.normal(size=(40, 3))
    res = add_noise(arr, ["0", "2"], seed=2)
    assert isinstance(res.data, np.ndarray) and np.array_equal(res.data[:, 1], arr[:, 1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"variables": ["a", "s"]}, r"variables: s not numeric; expected numeric"),
        ({"delta": 0.0, "method": "correlated2"}, r"delta: got 0"),
        ({"delta": 1.0}, r"delta: got 1(\.0)?; expected a number in \(0, 1\)"),
        ({"delta": 1.5}, r"delta: got 1.5"),
        ({"noise": -1}, r"noise: got -1; expected a number >= 0"),
        ({"perturbation": -0.1, "method": "ROMM"}, r"perturbation: got -0.1"),
        ({"method": "correlated", "variables": "a"}, r"variables: one variable for correlated noise"),
        ({"method": "romm"}, r"method: got 'romm'; expected one of"),
        ({"noise": "high"}, r"noise: got 'high'"),
        ({"strata": "a"}, r"strata: a also in variables"),
    ],
)
def test_bad_input(big, kwargs, message):
    kw = {"variables": ["a", "b"], **kwargs}
    with pytest.raises(sdckit.SdcError, match=message):
        add_noise(big.head(50), **kw)


def test_infinite_values_are_refused():
    df = pl.DataFrame({"x": [1.0, 2.0, math.inf], "y": [1.0, 2.0, 3.0]})
    with pytest.raises(sdckit.SdcError, match=r"variables: x hold infinite values; expected finite"):
        add_noise(df, ["x", "y"], seed=1)


# ----------------------------------------------------------------------------------------------
# properties
# ----------------------------------------------------------------------------------------------
_values = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
frames = st.integers(3, 40).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "x": st.lists(_values, min_size=n, max_size=n),
            "y": st.lists(st.one_of(st.none(), st.integers(-1000, 1000)), min_size=n, max_size=n),
            "s": st.lists(st.sampled_from(["p", "q"]), min_size=n, max_size=n),
            "z": st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n),
        }
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cols=frames,
    seed=st.integers(0, 2**32),
    method=st.sampled_from([*RANDOM_METHODS, "restr"]),
    use_strata=st.booleans(),
)
def test_properties(cols, seed, method, use_strata):
    """Input not mutated; rows, columns and column order kept; other columns unchanged;
    missing stays missing; same seed, same output; n_changed counts the changed cells."""
    df = pl.DataFrame(cols, schema={"x": pl.Float64, "y": pl.Int64, "s": pl.String, "z": pl.Float64})
    copy = df.clone()
    kw = {"strata": "s"} if use_strata else {}
    res = add_noise(df, ["x", "y"], method=method, seed=seed, **kw)
    assert df.equals(copy)
    out = res.data
    assert out.columns == df.columns and out.height == df.height
    assert out.select("s", "z").equals(df.select("s", "z"))
    for v in ("x", "y"):
        assert out[v].is_null().to_list() == df[v].is_null().to_list()
        changed = (out[v].cast(pl.Float64) != df[v].cast(pl.Float64)).fill_null(False)
        assert res.n_changed[v] == int(changed.sum())
    assert add_noise(df, ["x", "y"], method=method, seed=seed, **kw).data.equals(out)
