"""The fast paths of ``information_loss`` give the results of the general paths they replace.

When a file has no missing value, the covariance-based measures share one mean and
covariance per file (``K.moments``) instead of each computing a pairwise-complete covariance,
and |X - X'| is computed once for the distances, the IL1 family and the change counts. The
general paths (``moments=None``, ``absdiff=None``: the code used before) are the oracles here:
the same formulas with another order of floating-point operations, so results agree to a few
units in the last place (eigenvalue ratios of nearly singular matrices to 1e-9).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit._core import infoloss as K
from sdckit.utility import _steps

IL = importlib.import_module("sdckit.utility.information_loss")  # the module (the package exports the function)

RTOL = 1e-12


def _pair(seed, n=500, p=4, collinear=False):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(3, 1, size=(n, p)) * rng.choice([-1, 1], size=(n, p), p=[0.1, 0.9])
    if collinear:  # nearly collinear variables: small eigenvalues, ill-conditioned R
        X[:, 1] = 2 * X[:, 0] + rng.normal(scale=1e-3, size=n)
    X[rng.random((n, p)) < 0.05] = 0.0
    Y = X * (1 + 0.1 * rng.normal(size=(n, p)))
    return np.asfortranarray(X), np.asfortranarray(Y)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("collinear", [False, True])
def test_moments_path_equals_pairwise_path(seed, collinear):
    X, Y = _pair(seed, collinear=collinear)
    m = (K.moments(X), K.moments(Y))
    assert m[0] is not None and m[1] is not None
    np.testing.assert_allclose(m[0].cov, K.pairwise_cov(X), rtol=RTOL)
    np.testing.assert_allclose(m[0].corr(), K.scaled_pairwise_cov(X), rtol=1e-11, atol=1e-14)
    rtol_eigen = 1e-9 if collinear else RTOL
    assert K.eigen_loss(X, Y, moments=m) == pytest.approx(K.eigen_loss(X, Y), rel=rtol_eigen)
    for method in ("pearson",):
        np.testing.assert_allclose(
            K.inverse_corr_diag(X, method, moments=m[0]),
            K.inverse_corr_diag(X, method),
            rtol=1e-9 if collinear else 1e-11,
        )
    fast, slow = K.discrepancy(X, Y, 1.0, moments=m), K.discrepancy(X, Y, 1.0)
    assert fast.keys() == slow.keys()
    for pair in slow:
        for key, value in slow[pair].items():
            assert fast[pair][key] == pytest.approx(value, rel=1e-9 if collinear else 1e-10, abs=1e-15), (pair, key)


def test_moments_need_complete_files():
    X, _ = _pair(1)
    X[3, 2] = np.nan
    assert K.moments(X) is None and K.moments(X[:1]) is None
    # a constant variable: correlations undefined on both paths
    Z = np.column_stack([np.ones(20), np.arange(20.0)])
    assert not np.all(np.isfinite(K.moments(Z).corr())) and not np.all(np.isfinite(K.scaled_pairwise_cov(Z)))
    assert math.isnan(K.eigen_loss(Z, Z, moments=(K.moments(Z), K.moments(Z))))


@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_shared_differences_change_nothing(missing):
    """column_stats, continuous_distance and the change counts with |X - X'| given are
    bit-for-bit those computed from X and X' (the same operations)."""
    X, Y = _pair(3)
    rng = np.random.default_rng(4)
    X[rng.random(X.shape) < missing] = np.nan
    Y[rng.random(Y.shape) < missing] = np.nan
    D = K.abs_differences(X, Y)
    a, b = K.column_stats(X, Y, 0.7, D), K.column_stats(X, Y, 0.7)
    for key in b:
        np.testing.assert_array_equal(a[key], b[key])
    for j in range(X.shape[1]):
        for conv in ("mlodak", "sdcmicro"):
            for kind in ("arctan", "arctan_sd", "max_abs", "max_squared"):
                np.testing.assert_array_equal(
                    K.continuous_distance(X[:, j], Y[:, j], conv, kind, D[:, j]),
                    K.continuous_distance(X[:, j], Y[:, j], conv, kind),
                )
    if missing == 0:  # the arctan distance itself (hand formula, spec: (2/pi) arctan|x - x'|)
        np.testing.assert_array_equal(
            K.continuous_distance(X[:, 0], Y[:, 0]), (2 / math.pi) * np.arctan(np.abs(X[:, 0] - Y[:, 0]))
        )
    np.testing.assert_array_equal(D, np.abs(X - Y))  # abs_differences leaves nothing out
    names = [f"x{j}" for j in range(X.shape[1])]
    inp = IL._validate_information_loss(
        pl.DataFrame(X, schema=names),
        pl.DataFrame(Y, schema=names),
        names,
        scales="continuous",
        missing=None,
        pram=None,
        anova=None,
        **_defaults(),
    )
    assert _steps.changes(inp, D) == _steps.changes(inp)


def _defaults():
    return dict(
        suppressed="mlodak",
        continuous_distance="arctan",
        bound=1.0,
        zero_sd="exclude",
        ctbil_dim=2,
        ebil_base=None,
        gamma_method="pearson",
        robust=False,
        seed=0,
        new_categories="error",
        records=True,
    )


def _oracle(X, Y, bound=1.0):
    """The continuous measures by the general kernel paths (no shared moments or differences)."""
    stats = K.column_stats(X, Y, bound)
    r = K.il1_by_variable(X, Y, stats)
    dist = np.column_stack([K.continuous_distance(X[:, j], Y[:, j]) for j in range(X.shape[1])])
    return {
        "il1": r["il1"].sum(),
        "il1s": r["il1s"].sum(),
        "eigen": K.eigen_loss(X, Y),
        "gamma": K.gamma(K.inverse_corr_diag(X), K.inverse_corr_diag(Y)),
        "lambda": dist.mean(),
        "discrepancy": K.discrepancy(X, Y, bound),
    }


@pytest.mark.parametrize("n", [300, 60_000])  # serial / distances in a second thread (n m >= 2e5)
def test_public_function_matches_the_general_paths(n, monkeypatch):
    X, Y = _pair(11, n=n, p=5)
    names = [f"x{j}" for j in range(5)]
    o, p = pl.DataFrame(X, schema=names), pl.DataFrame(Y, schema=names)
    r = sdckit.information_loss(o, p, names, distance={"continuous_distance": "arctan"})
    want = _oracle(X, Y)
    for key in ("il1", "il1s", "eigen", "gamma"):
        assert getattr(r, key) == pytest.approx(want[key], rel=1e-10), key
    assert r.lambda_ == pytest.approx(want["lambda"], rel=1e-12)
    for pair, d in want["discrepancy"].items():
        for key, value in d.items():
            assert r.discrepancy[pair][key.replace("cells", "n_cells").replace("n_n_", "n_")] == pytest.approx(
                value, rel=1e-9, abs=1e-15
            ), (pair, key)
    # the threaded and the serial runs are identical
    monkeypatch.setattr(IL, "_PARALLEL_CELLS", 10**12)
    serial = sdckit.information_loss(o, p, names, records=True)
    monkeypatch.setattr(IL, "_PARALLEL_CELLS", 0)
    threaded = sdckit.information_loss(o, p, names, records=True)
    assert serial.to_dict() == threaded.to_dict()
    np.testing.assert_array_equal(serial.distances, threaded.distances)


def test_defaults_are_fast():
    """The defaults leave the MCD out: 5,000 records x 5 continuous variables take about 0.01 s
    (0.7 s with the MCD). A generous bound that only a costly default would break."""
    import time

    X, Y = _pair(2, n=5000, p=5)
    names = [f"x{j}" for j in range(5)]
    o, p = pl.DataFrame(X, schema=names), pl.DataFrame(Y, schema=names)
    sdckit.information_loss(o, p, names)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        sdckit.information_loss(o, p, names)
        best = min(best, time.perf_counter() - t)
    assert best < 0.25
