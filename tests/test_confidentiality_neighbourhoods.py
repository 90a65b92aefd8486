"""Seri's confidentiality plot with the Fellegi-Sunter neighbourhood (bins of z ranked by
m(z)/u(z)): a hand-worked example, a brute-force oracle and the distance rule as its special
case."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import SdcError
from sdckit._core import confidentiality_fs as core

# Seri's six-record example (spec F.6; the distance rule gives delta = 0.1543316 at 0.2)
XS = np.array([(100, 10), (120, 12), (130, 11), (400, 40), (90, 9), (1000, 80)], float)
YS = np.array([(104, 10), (115, 13), (131, 11), (380, 42), (95, 9), (1050, 85)], float)


def _frames():
    return pl.DataFrame({"a": XS[:, 0], "b": XS[:, 1]}), pl.DataFrame({"a": YS[:, 0], "b": YS[:, 1]})


def test_fellegi_sunter_neighbourhood_hand_worked():
    # z(x, y) = ||y - x|| / ||y||. Link distances z(x_i, y_i): 0.0383, 0.0441, 0.0076, 0.0526,
    # 0.0524, 0.0477. Edges (0.04, 0.06, 0.2): bin 0 z <= 0.04, bin 1 (0.04, 0.06], bin 2
    # (0.06, 0.2], bin 3 > 0.2.
    # Links: bin 0 records 1, 3; bin 1 records 2, 4, 5, 6 -> m = (2/6, 4/6, 0, 0).
    # Non-links (30 pairs): bin 1 only z(x1, y5) = 0.0534; bin 2 z(x2, y1) = 0.1543,
    # z(x5, y1) = 0.1343, z(x1, y2) = 0.1322, z(x3, y2) = 0.1308, z(x2, y3) = 0.0840; the other 24
    # in bin 3 -> u = (0, 1/30, 5/30, 24/30).
    # m/u: bin 0 infinite, bin 1 (4/6)/(1/30) = 20, bins 2 and 3 no links (never linked).
    # significance 0.2: bin 0 (cumulative u 0) and bin 1 (1/30 <= 0.2) form the link region;
    # neighbours: y5 has x5 and x1, every other record its partner only.
    o, p = _frames()
    res = sdckit.confidentiality_plot(
        o, p, ["a", "b"], significance=0.2, neighbourhood="fellegi_sunter", bins=[0.04, 0.06, 0.2]
    )
    fs = res.fellegi_sunter
    np.testing.assert_allclose(fs["m"], [2 / 6, 4 / 6, 0, 0])
    np.testing.assert_allclose(fs["u"], [0, 1 / 30, 5 / 30, 24 / 30])
    assert fs["n_link_pairs"] == [2, 4, 0, 0] and fs["n_nonlink_pairs"] == [0, 1, 5, 24]
    assert fs["linked"] == [True, True, False, False]
    np.testing.assert_array_equal(res.neighbours, [1, 1, 1, 1, 2, 1])
    assert res.in_neighbourhood.all() and res.nearest_correct.all()
    np.testing.assert_allclose(res.perturbation, [0.03980, 0.04228, 0.00766, 0.05000, 0.05528, 0.05009], atol=1e-5)
    d = res.to_dict()
    assert d["neighbourhood"] == "fellegi_sunter" and d["delta"] is None and d["fs_linked"] == fs["linked"]
    assert np.isnan(res.delta)
    # significance 0.02 < 1/30: only bin 0 -> records 1 and 3 keep their partner, the rest none
    res2 = sdckit.confidentiality_plot(
        o, p, ["a", "b"], significance=0.02, neighbourhood="fellegi_sunter", bins=[0.04, 0.06, 0.2]
    )
    np.testing.assert_array_equal(res2.neighbours, [1, 0, 1, 0, 0, 0])
    np.testing.assert_array_equal(res2.in_neighbourhood, [True, False, True, False, False, False])
    assert "link region" in str(res2.summary()) and "m(z)" in str(res2.summary())


def test_link_region_ranks_by_ratio_not_by_distance():
    # a bin far out with many links and few non-links enters before a nearer, noisier bin:
    # m = (0.1, 0.2, 0.7), u = (0.05, 0.3, 0.01) -> ratios 2, 0.67, 70: order 2, 0, 1; with
    # alpha 0.06 the cumulative u is 0.01, 0.06 (<= 0.06), 0.36 -> bins 2 and 0.
    linked = core.fs_link_region(np.array([0.1, 0.2, 0.7]), np.array([0.05, 0.3, 0.01]), 0.06)
    np.testing.assert_array_equal(linked, [True, False, True])


def _direct(X, Y, alpha, edges):
    """Every pair by itself (the test oracle)."""
    n = X.shape[0]

    def norm(v):  # squares added in column order, as the kernel does (bins are closed at edges)
        s = 0.0
        for c in v:
            s += c * c
        return np.sqrt(s)

    Z = np.array([[norm(Y[i] - X[j]) / norm(Y[i]) for j in range(n)] for i in range(n)])
    B = np.searchsorted(edges, Z, side="left")
    nb = edges.size + 1
    link = np.eye(n, dtype=bool)
    m = np.bincount(B[link], minlength=nb) / n
    u = np.bincount(B[~link], minlength=nb) / (n * (n - 1))
    region = core.fs_link_region(m, u, alpha)
    Zo = np.where(link, np.inf, Z)
    return m, u, region, region[B].sum(axis=1), np.diag(Z) <= Zo.min(axis=1), region[np.diag(B)]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.integers(1, 3), st.sampled_from([0.01, 0.05, 0.3]))
def test_fs_kernel_matches_direct(seed, n, p, alpha):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(2, 1, (n, p))
    Y = X * (1 + rng.normal(0, 0.1, (n, p)))
    res = core.fs_neighbourhood(X, Y, alpha, 5)
    m, u, region, nb, nearest, inside = _direct(X, Y, alpha, res["edges"])
    np.testing.assert_allclose(res["m"], m)
    np.testing.assert_allclose(res["u"], u)
    np.testing.assert_array_equal(res["linked"], region)
    np.testing.assert_array_equal(res["neighbours"], nb)
    np.testing.assert_array_equal(res["nearest_correct"], nearest)
    np.testing.assert_array_equal(res["in_neighbourhood"], inside)
    assert res["m"].sum() == pytest.approx(1.0) and res["u"].sum() == pytest.approx(1.0)


def test_quantile_edges_of_the_link_distances():
    # bins=4: edges at the 1/4, 2/4, 3/4 and 1 quantiles of the link distances (the last = max)
    zl = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    np.testing.assert_allclose(core.link_distance_edges(zl, 4), np.quantile(zl, [0.25, 0.5, 0.75, 1.0]))


def test_monotone_ratio_gives_the_distance_rule():
    # with one edge at the critical distance (0.1543316 at significance 0.2 for this example)
    # the bin below it has m/u above the bin beyond it, and the neighbours below delta are the
    # distance rule's except the pairs exactly at delta (z < delta there, z <= edge here)
    o, p = _frames()
    dist = sdckit.confidentiality_plot(o, p, ["a", "b"], significance=0.2)
    below = np.nextafter(dist.delta, 0)
    fs = sdckit.confidentiality_plot(o, p, ["a", "b"], significance=0.2, neighbourhood="fellegi_sunter", bins=[below])
    np.testing.assert_array_equal(fs.neighbours, dist.neighbours)
    np.testing.assert_array_equal(fs.in_neighbourhood, dist.in_neighbourhood)


def test_bad_neighbourhood_and_bins():
    o, p = _frames()
    with pytest.raises(SdcError, match="neighbourhood"):
        sdckit.confidentiality_plot(o, p, ["a", "b"], neighbourhood="nearest")
    with pytest.raises(SdcError, match="bins"):
        sdckit.confidentiality_plot(o, p, ["a", "b"], neighbourhood="fellegi_sunter", bins=1)


# ----------------------------------------------------------------------------------------------
# the categorical version: F_y against the share of keys changed
# ----------------------------------------------------------------------------------------------
def _social():
    # six records, keys sex, age band, region; the release recodes region "r1"/"r2" -> "R" for
    # records 1-2 and suppresses the age of record 6
    o = pl.DataFrame(
        {
            "sex": ["m", "m", "f", "f", "f", "m"],
            "age": ["20-29", "20-29", "30-39", "30-39", "40-49", "60-69"],
            "region": ["r1", "r2", "r3", "r3", "r3", "r1"],
            "w": [10.0, 20.0, 5.0, 5.0, 50.0, 8.0],
        }
    )
    p = o.with_columns(
        pl.Series("region", ["R", "R", "r3", "r3", "r3", "r1"]),
        pl.Series("age", ["20-29", "20-29", "30-39", "30-39", "40-49", None]),
    )
    return o, p


def test_categorical_confidentiality_hand_worked():
    # released combinations: (m,20-29,R) x2 -> f = 2, F = 10 + 20 = 30; (f,30-39,r3) x2 -> f = 2,
    # F = 10; (f,40-49,r3) -> f = 1, F = 50; (m,NA,r1) -> the missing age matches every age, but
    # no other record has (m, ., r1) -> f = 1, F = 8.
    # perturbation: records 1-2 region changed -> 1/3; 3-5 unchanged -> 0; record 6 age
    # suppressed -> 1/3.
    o, p = _social()
    res = sdckit.categorical_confidentiality_plot(o, p, ["sex", "age", "region"], weight="w")
    np.testing.assert_allclose(res.frequency, [30, 30, 10, 10, 50, 8])
    np.testing.assert_allclose(res.sample_frequency, [2, 2, 2, 2, 1, 1])
    np.testing.assert_allclose(res.perturbation, [1 / 3, 1 / 3, 0, 0, 0, 1 / 3])
    assert res.share_changed == pytest.approx(0.5) and res.share_sample_unique == pytest.approx(2 / 6)
    # Seri's rule F_y < k: k = 20 flags records 3, 4 and 6; with min_perturbation 0.2 (AND) only 3, 4
    np.testing.assert_array_equal(res.unsafe(k=20), [False, False, True, True, False, True])
    np.testing.assert_array_equal(res.unsafe(k=20, min_perturbation=0.2), [False, False, True, True, False, False])
    assert not res.unsafe().any()
    unweighted = sdckit.categorical_confidentiality_plot(o, p, ["sex", "age", "region"])
    np.testing.assert_allclose(unweighted.frequency, [2, 2, 2, 2, 1, 1])
    d = res.to_dict()
    assert d["weighted"] and d["share_changed"] == 0.5 and "r1" not in str(d)
    assert res.to_frame().height == 6


def test_categorical_confidentiality_recoded_kind_and_errors():
    # a number recoded into text bands counts as changed wherever a value is observed
    o = pl.DataFrame({"age": [23, 35, None], "sex": ["m", "f", "f"]})
    p = pl.DataFrame({"age": ["20-29", "30-39", None], "sex": ["m", "f", "f"]})
    res = sdckit.categorical_confidentiality_plot(o, p, ["age", "sex"])
    np.testing.assert_allclose(res.perturbation, [0.5, 0.5, 0.0])
    with pytest.raises(SdcError, match="same records"):
        sdckit.categorical_confidentiality_plot(o, p.head(2), ["age", "sex"])
    with pytest.raises(SdcError, match="keys"):
        sdckit.categorical_confidentiality_plot(o, p, ["nope"])
    with pytest.raises(SdcError, match="k"):
        res.unsafe(k=0)
