"""SUDA score variants by name (``suda(method=)``): Elliot's and the IHSN sums, Templ's
normalised weights summed, and their product over the MSUs as the handbook's text reads.

Hand-worked example: the 10-record S002 table (ATT = 4 keys), whose MSUs are written out
below; properties on random tables against the MSUs the result lists."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import S002_KEYS, s002_table
from sdckit.cli import main

# The MSUs of the S002 table (records numbered from 1; Residence, Gender, Education, Labor):
#   record 3: {Primary incomplete}                                          sizes 1
#   record 5: {Rural}, {Female, Secondary complete}, {Female, Unemployed},
#             {Secondary complete, Unemployed}                              sizes 1, 2, 2, 2
#   record 7: {Primary complete}                                            sizes 1
#   record 8: {Post-secondary}, {Urban, Unemployed}, {Male, Unemployed}     sizes 1, 2, 2
# Other records have none. With ATT = 4 (every size searched: M = ATT):
#   Elliot  w(s) = prod_{i=s}^{3} (4 - i): w(1) = 3*2*1 = 6, w(2) = 2*1 = 2
#   IHSN    w(s) = (2^{4-s} - 1) / C(4, s): w(1) = 7/4, w(2) = 3/6 = 1/2
#   Templ   s_k = w_Elliot(k) / 4! :        s_1 = 6/24 = 1/4, s_2 = 2/24 = 1/12
# Record scores (records 3, 5, 7, 8):
#   elliot        6,        6 + 3*2 = 12,            6,      6 + 2*2 = 10
#   ihsn          1.75,     1.75 + 3*0.5 = 3.25,     1.75,   1.75 + 2*0.5 = 2.75
#   templ         1/4,      1/4 + 3/12 = 1/2,        1/4,    1/4 + 2/12 = 5/12
#   templ_product 1/4,      1/4 * (1/12)^3 = 1/6912, 1/4,    1/4 * (1/12)^2 = 1/576
IDX = [2, 4, 6, 7]
EXPECTED = {
    "elliot": [6.0, 12.0, 6.0, 10.0],
    "ihsn": [1.75, 3.25, 1.75, 2.75],
    "templ": [1 / 4, 1 / 2, 1 / 4, 5 / 12],
    "templ_product": [1 / 4, 1 / 6912, 1 / 4, 1 / 576],
}


def _dis(scores, n2: int = 3, pi: float = 0.01, att: int = 4) -> np.ndarray:
    """DIS-SUDA written out: E = 2 n2 (1 - pi) / pi, Q = 1 + (8 - ATT) / 20,
    DIS_i = 1 / (1 + E S_i^-Q / sum_j S_j^-Q) over the positive scores."""
    s = np.asarray(scores, dtype=float)
    q = 1 + (8 - att) / 20
    e = 2 * n2 * (1 - pi) / pi
    return 1 / (1 + e * s**-q / np.sum(s**-q))


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_s002_scores_of_every_variant(method):
    res = sdckit.suda(s002_table(), S002_KEYS, method=method)
    np.testing.assert_allclose(res.score[IDX], EXPECTED[method], rtol=1e-12)
    others = np.setdiff1d(np.arange(10), IDX)
    assert (res.score[others] == 0).all()
    np.testing.assert_allclose(res.dis_score[IDX], _dis(EXPECTED[method]), rtol=1e-12)
    assert res.method == method
    assert res.to_dict()["method"] == method
    assert res.original_scores == (method != "ihsn")


def test_s002_msu_weights_are_templs_normalised_ones():
    res = sdckit.suda(s002_table(), S002_KEYS, method="templ", keep_msus=True)
    assert [(m.size, m.weight) for m in res.msus(4)] == [(1, 0.25), (2, 1 / 12), (2, 1 / 12), (2, 1 / 12)]
    assert res.size_weights == {1: 0.25, 2: 1 / 12, 3: 1 / 24, 4: 1 / 24}
    assert "Templ" in str(res.summary())


def test_dis_suda_of_templ_equals_elliots_and_the_published_values():
    # DIS-SUDA depends only on relative scores: templ = elliot / 4! gives Elliot's values
    # (the reference 0.0049868, 0.0113830, 0.0049868, 0.0091667)
    d = s002_table()
    templ = sdckit.suda(d, S002_KEYS, method="templ")
    elliot = sdckit.suda(d, S002_KEYS)
    np.testing.assert_allclose(templ.dis_score, elliot.dis_score, rtol=1e-12)
    np.testing.assert_allclose(templ.dis_score[IDX], [0.0049868, 0.0113830, 0.0049868, 0.0091667], atol=5e-8)
    np.testing.assert_allclose(templ.contributions, elliot.contributions, rtol=1e-12)
    assert templ.share_contributions == pytest.approx(elliot.share_contributions)


def test_the_current_default_stays_and_original_scores_still_works():
    d = s002_table()
    default = sdckit.suda(d, S002_KEYS)
    assert default.method == "elliot"
    np.testing.assert_array_equal(default.score, sdckit.suda(d, S002_KEYS, method="elliot").score)
    old = sdckit.suda(d, S002_KEYS, original_scores=False)
    assert old.method == "ihsn"
    np.testing.assert_array_equal(old.score, sdckit.suda(d, S002_KEYS, method="ihsn").score)
    np.testing.assert_array_equal(old.score, sdckit.suda(d, S002_KEYS, original_scores=False, method="ihsn").score)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "product"}, "method: got 'product'"),
        ({"method": "templ", "original_scores": False}, "original_scores: False .* contradicts method='templ'"),
        ({"method": 1}, "method: got 1"),
    ],
)
def test_bad_methods_are_refused(kwargs, message):
    with pytest.raises(sdckit.SdcError, match=message):
        sdckit.suda(s002_table(), S002_KEYS, **kwargs)


def _random(seed: int, n: int, m: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({f"k{j}": rng.integers(0, 2 + j % 3, n) for j in range(m)})


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), m=st.integers(2, 5), cut=st.integers(0, 2))
def test_variants_agree_with_the_msus_listed(seed, n, m, cut):
    """Per record: templ = elliot / ATT!, and templ_product = the product of the weights of the
    MSUs the result lists (0 without one); row order does not change a record's score."""
    data = _random(seed, n, m)
    keys = data.columns
    max_size = max(1, m - cut)
    kw = {"max_size": max_size, "keep_msus": True, "allow_degenerate_keys": True}
    with warnings.catch_warnings():  # random keys can be degenerate: not what this test checks
        warnings.simplefilter("ignore")
        elliot = sdckit.suda(data, keys, **kw)
        templ = sdckit.suda(data, keys, method="templ", **kw)
        prod = sdckit.suda(data, keys, method="templ_product", **kw)
        perm = np.random.default_rng(seed).permutation(n)
        prod_perm = sdckit.suda(data[perm], keys, method="templ_product", **kw)
    np.testing.assert_allclose(templ.score, elliot.score / math.factorial(m), rtol=1e-12)
    for i in range(n):
        weights = [msu.weight for msu in prod.msus(i)]
        expected = math.prod(weights) if weights else 0.0
        assert prod.score[i] == pytest.approx(expected, rel=1e-10, abs=0.0)
        assert templ.score[i] == pytest.approx(sum(weights), rel=1e-12, abs=1e-300)
    np.testing.assert_allclose(prod_perm.score, prod.score[perm], rtol=1e-12)
    assert ((prod.score > 0) == (elliot.score > 0)).all()


def test_command_line_scores_option(tmp_path):
    path = tmp_path / "s002.csv"
    s002_table().write_csv(path)
    out = tmp_path / "out.json"
    assert main(["suda", str(path), "--keys", ",".join(S002_KEYS), "--scores", "templ", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["suda"]["method"] == "templ"
