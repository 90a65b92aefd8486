"""Property tests of ``sdckit.information_loss`` (spec G): every loss is 0 for identical files,
lambda, lambda_j and gamma lie in [0, 1], and nothing depends on the row order when both files
are permuted together (rows stay paired by position).

Hypothesis draws the shape (records, number of variables of each scale), the missing-value
rates and the seed of the values; the tables are then built with NumPy.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_pair(seed, n, n_cont, n_nom, n_ord, miss, change):
    """Original and protected tables: continuous values with noise, nominal / ordinal labels
    changed with probability ``change``, values missing with probability ``miss`` (independently
    in each file, so suppressions and imputations both occur)."""
    rng = np.random.default_rng(seed)
    o, p, scales = {}, {}, {}
    for j in range(n_cont):
        x = rng.lognormal(3, 1, n) * rng.choice([-1, 1], n, p=[0.1, 0.9])
        x[rng.random(n) < 0.05] = 0.0
        y = x + rng.normal(0, rng.uniform(0.1, 50), n) * (rng.random(n) < change)
        o[f"c{j}"], p[f"c{j}"] = _holes(rng, x, miss), _holes(rng, y, miss)
        scales[f"c{j}"] = "continuous"
    for j in range(n_nom):
        labs = np.array(list("abcdef"[: rng.integers(2, 7)]), dtype=object)
        x = labs[rng.integers(0, len(labs), n)]
        y = np.where(rng.random(n) < change, labs[rng.integers(0, len(labs), n)], x)
        o[f"n{j}"], p[f"n{j}"] = _holes(rng, x, miss), _holes(rng, y, miss)
        scales[f"n{j}"] = "nominal"
    for j in range(n_ord):
        R = int(rng.integers(2, 6))
        x = rng.integers(1, R + 1, n).astype(float)
        y = np.where(rng.random(n) < change, rng.integers(1, R + 1, n), x).astype(float)
        o[f"o{j}"], p[f"o{j}"] = _holes(rng, x, miss), _holes(rng, y, miss)
        scales[f"o{j}"] = list(range(1, R + 1))
    return pl.DataFrame(o, strict=False), pl.DataFrame(p, strict=False), scales


def _holes(rng, v, miss):
    v = v.astype(object) if v.dtype == object else v.astype(float)
    mask = rng.random(v.size) < miss
    if v.dtype == object:
        v = v.copy()
        v[mask] = None
        return list(v)
    v = v.copy()
    v[mask] = np.nan
    return v


shapes = st.tuples(
    st.integers(0, 2**31 - 1),  # seed
    st.integers(4, 60),  # records
    st.integers(0, 3),  # continuous
    st.integers(0, 2),  # nominal
    st.integers(0, 2),  # ordinal
    st.sampled_from([0.0, 0.1, 0.3]),  # missing rate
    st.sampled_from([0.0, 0.2, 1.0]),  # change rate
).filter(lambda t: t[2] + t[3] + t[4] > 0)


def _quiet(*args, **kw):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sdckit.SdcWarning)  # zero sd / singular R on tiny samples
        return sdckit.information_loss(*args, **kw)


@SETTINGS
@given(shapes, st.sampled_from(["mlodak", "sdcmicro"]))
def test_identical_files_lose_nothing(shape, convention):
    o, _, scales = make_pair(*shape)
    names = list(scales)
    cat = [v for v in names if scales[v] != "continuous"]
    # identity PRAM matrices (nothing changes): size = declared order, or the labels present
    pram = {
        v: np.eye(len(scales[v]) if isinstance(scales[v], list) else o[v].drop_nulls().n_unique())
        for v in cat
        if o[v].drop_nulls().len()
    }
    r = _quiet(
        o,
        o.clone(),
        names,
        scales=scales,
        pram=pram or None,
        records=True,
        distance={"suppressed": convention},
        measures={"robust": True},
    )
    assert r.lambda_ == 0 and all(v == 0 for v in r.lambda_j.values())
    assert np.all(r.distances == 0) and np.all(r.record_loss == 0)
    for v in ("il1", "il1s", "eigen", "robust_eigen", "gamma", "ebil_joint"):
        val = getattr(r, v)
        assert val is None or val == 0, (v, val)
    assert all(v == 0 for v in r.il1s_by_variable.values() if not math.isnan(v))
    for pair, d in (r.discrepancy or {}).items():
        if d is not None:
            assert d["mse"] in (0, None) and d["mae"] in (0, None) and d["mv"] in (0, None), pair
            assert d["mv_bounded"] in (0, None), pair
    if r.ctbil is not None:
        assert r.ctbil["total"] == 0
    assert all(v == 0 for v in r.ebil.values())
    assert all(a["loss"] in (0, None) for a in r.anova.values())
    assert all(v == 0 for v in r.categorical_distance.values())


@SETTINGS
@given(
    shapes,
    st.sampled_from(["mlodak", "sdcmicro"]),
    st.sampled_from(["arctan", "max_abs", "max_squared"]),
    st.sampled_from(["pearson", "kendall"]),
)
def test_lambda_and_gamma_in_unit_interval(shape, convention, distance, method):
    o, p, scales = make_pair(*shape)
    r = _quiet(
        o,
        p,
        list(scales),
        scales=scales,
        records=True,
        distance={"suppressed": convention, "continuous_distance": distance, "new_categories": "allow"},
        measures={"gamma_method": method, "robust": False},
    )
    assert 0 <= r.lambda_ <= 1
    assert all(0 <= v <= 1 for v in r.lambda_j.values())
    assert np.all((r.distances >= 0) & (r.distances <= 1))
    assert r.gamma is None or 0 <= r.gamma <= 1 + 1e-12
    assert all(0 <= v <= 1 for v in r.categorical_distance.values())
    for v, d in r.categorical_distance.items():  # G.6 ordinal distances stay below 1: (R - 1) / R
        if isinstance(scales[v], list):
            assert d <= (len(scales[v]) - 1) / len(scales[v]) + 1e-12
    if r.ctbil is not None:
        assert r.ctbil["total"] <= 2 * r.n * r.ctbil["n_tables"]  # each table moves at most n records
    for d in (r.discrepancy or {}).values():
        if d is not None and d["mv_bounded"] is not None:
            assert 0 <= d["mv_bounded"] <= r.bound + 1e-12


def _flat(d, prefix=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}/{k}"))
    elif isinstance(d, list):
        out[prefix] = tuple(d)
    else:
        out[prefix] = d
    return out


@SETTINGS
@given(shapes, st.integers(0, 2**31 - 1))
def test_row_order_does_not_matter(shape, perm_seed):
    o, p, scales = make_pair(*shape)
    perm = np.random.default_rng(perm_seed).permutation(o.height)
    names = list(scales)
    a = _quiet(o, p, names, scales=scales, distance={"new_categories": "allow"})
    b = _quiet(o[perm], p[perm], names, scales=scales, distance={"new_categories": "allow"})
    fa, fb = _flat(a.to_dict()), _flat(b.to_dict())
    assert fa.keys() == fb.keys()
    for k in fa:
        x, y = fa[k], fb[k]
        if isinstance(x, float) and isinstance(y, float):
            assert math.isclose(x, y, rel_tol=1e-7, abs_tol=1e-9), (k, x, y)
        else:
            assert x == y, (k, x, y)
    np.testing.assert_allclose(a.record_loss[perm], b.record_loss, rtol=1e-12)
