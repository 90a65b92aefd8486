"""f_k, F_k and k-anonymity against sdcMicro reference outputs and the spec's worked examples."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sdckit
from conftest import DATA, S002_KEYS, reference_cases
from sdckit._core.frequencies import record_frequencies

FREQ_CASES = reference_cases("freqCalc.json")


def _case_frame(case) -> pl.DataFrame:
    if "input" in case["outputs"]:
        return pl.DataFrame(case["outputs"]["input"], strict=False)
    return pl.read_csv(DATA / "sdcmicro" / f"{case['dataset']}.csv")


def _case_keys_weight(case, frame):
    p = case["parameters"]
    if "keyVars" in p:
        return p["keyVars"], p["w"]
    # inline testthat cases: keyVars = all columns but the weight (given by position in the call)
    cols = frame.columns
    return [c for c in cols if c != "weight"], "weight"


@pytest.mark.parametrize("case", FREQ_CASES, ids=[c["id"] for c in FREQ_CASES])
def test_freqcalc_reference(case):
    """sdcMicro 5.8.1 freqCalc: fk, Fk to 1e-9 relative, n1/n2 exactly (reference/sdcmicro/freqCalc.json)."""
    frame = _case_frame(case)
    keys, w = _case_keys_weight(case, frame)
    alpha = case["parameters"].get("alpha", 1)
    r = sdckit.frequencies(frame, keys, weight=w, alpha=alpha, allow_degenerate_keys=True)
    out = case["outputs"]
    np.testing.assert_allclose(r.fk, out["fk"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(r.Fk, out["Fk"], rtol=1e-9, atol=0)
    assert r.n_sample_uniques == out["n1"]
    assert r.n_fk2 == out["n2"]


def test_reference_cases_present():
    assert len(FREQ_CASES) >= 9, "freqCalc.json must hold the 9 reference cases"


def test_s002_table_41(s002):
    """Spec 0.5 / A.1 example (S002 table 4.1): f and F columns, 7 keys, 4 sample uniques."""
    r = sdckit.frequencies(s002, S002_KEYS, weight="w")
    np.testing.assert_array_equal(r.fk, [2, 2, 1, 2, 1, 2, 1, 1, 2, 2])
    np.testing.assert_array_equal(r.Fk, [360, 360, 215, 152, 186, 152, 180, 215, 262, 262])
    assert r.n_patterns == 7
    assert r.n_sample_uniques == 4
    assert r.n_fk2 == 6  # records in the three keys with f = 2
    unweighted = sdckit.frequencies(s002, S002_KEYS)
    np.testing.assert_array_equal(unweighted.Fk, unweighted.fk)


def test_s002_k_anonymity(s002):
    """Spec A.2 example: V_2 = 4 (40 %), V_3 = 10 (100 %), 4 keys violate 2-anonymity."""
    r = sdckit.k_anonymity(s002, S002_KEYS, k=[2, 3, 5], weight="w")
    assert r.n_violations == {2: 4, 3: 10, 5: 10}
    assert r.share(2) == pytest.approx(0.4)
    assert r.n_patterns_violating[2] == 4
    assert r.n_patterns_violating[3] == 7
    np.testing.assert_array_equal(np.flatnonzero(r.violates(2)) + 1, [3, 5, 7, 8])
    assert r.n_weighted_violations == {2: 0, 3: 0, 5: 0}  # every F_k >= 152
    d = r.to_dict()
    assert d["n_violations"] == {"2": 4, "3": 10, "5": 10}


def test_table_42_alpha():
    """Spec A.1.1 example 1 (S002 table 4.2): f = (2,2,3), (1.5,1.5,3), (1,1,3) for alpha 1, .5, 0."""
    d = pl.DataFrame(
        {
            "Gender": ["Male"] * 3,
            "Education": ["Secondary complete", "Secondary incomplete", None],
            "Labor": ["Employed"] * 3,
        }
    )
    for alpha, expected in [(1, [2, 2, 3]), (0.5, [1.5, 1.5, 3]), (0, [1, 1, 3])]:
        r = sdckit.frequencies(d, ["Gender", "Education", "Labor"], alpha=alpha, allow_degenerate_keys=True)
        np.testing.assert_allclose(r.fk, expected)


SPEC_A11_EXAMPLE2 = {
    # spec A.1.1 example 2: columns a, b, c, w and f, F for alpha = 1, 0.5, 0
    "a": ["M", "M", "M", None, "F", "F", None, "M"],
    "b": ["SC", "SI", None, None, "SC", "SC", None, "SC"],
    "c": ["E", "E", "E", "E", None, "U", None, "E"],
    "w": [10.0, 20, 30, 40, 50, 60, 70, 80],
}
SPEC_A11_EXPECTED = {
    1: ([4, 3, 6, 7, 4, 2, 8, 4], [160, 90, 250, 300, 220, 110, 360, 160]),
    0.5: ([3, 2, 5, 5.5, 3, 1.5, 8, 3], [125, 55, 195, 225, 165, 85, 360, 125]),
    0: ([2, 1, 4, 4, 2, 1, 8, 2], [90, 20, 140, 150, 110, 60, 360, 90]),
}


@pytest.mark.parametrize("alpha", [1, 0.5, 0])
def test_spec_a11_example2(alpha):
    d = pl.DataFrame(SPEC_A11_EXAMPLE2)
    r = sdckit.frequencies(d, ["a", "b", "c"], weight="w", alpha=alpha)
    f, F = SPEC_A11_EXPECTED[alpha]
    np.testing.assert_allclose(r.fk, f, rtol=1e-12)
    np.testing.assert_allclose(r.Fk, F, rtol=1e-12)


def test_own_category_rule():
    """na_rule="own_category" (spec K.4): a missing value is one more category."""
    d = pl.DataFrame(SPEC_A11_EXAMPLE2)
    r = sdckit.frequencies(d, ["a", "b", "c"], weight="w", na_rule="own_category")
    # patterns: (M,SC,E) x2 {1,8}; every other record alone
    np.testing.assert_array_equal(r.fk, [2, 1, 1, 1, 1, 1, 1, 2])
    np.testing.assert_array_equal(r.Fk, [90, 20, 30, 40, 50, 60, 70, 90])


def test_missing_codes_parameter():
    """missing=-999 marks sdcMicro-style numeric missing codes as missing (matched like NA)."""
    d = pl.DataFrame({"a": [1, 1, -999, 2], "b": [1, 1, 1, 2]})
    r = sdckit.frequencies(d, ["a", "b"], missing=-999)
    # record 3 (NA,1) matches records 1,2 (1,1) fully: 1 + 2 = 3; records 1,2 get 2 + alpha*1 = 3
    np.testing.assert_array_equal(r.fk, [3, 3, 3, 1])


def test_labels_not_coerced():
    """'01' and '1' are different labels; 1 and 1.0 as floats used as labels are equal values."""
    d = pl.DataFrame({"a": ["01", "1", "1", "01"], "b": ["x", "x", "x", "y"]})
    r = sdckit.frequencies(d, ["a", "b"])
    np.testing.assert_array_equal(r.fk, [1, 2, 2, 1])


def test_engine_matches_oracle_large():
    """The Polars GROUP BY path (n > 20,000) equals the NumPy oracle, with missing values."""
    rng = np.random.default_rng(1)
    n = 30_000
    codes = rng.integers(0, 6, size=(n, 4)).astype(np.int32)
    codes[rng.random((n, 4)) < 0.05] = -1
    w = rng.uniform(1, 50, n)
    keys = [f"k{j}" for j in range(4)]
    frame = pl.DataFrame({k: codes[:, j] for j, k in enumerate(keys)} | {"w": w})
    frame = frame.with_columns([pl.when(pl.col(k) >= 0).then(pl.col(k)).alias(k) for k in keys])
    r = sdckit.frequencies(frame, keys, weight="w", alpha=0.5)
    f0, F0 = record_frequencies(codes, w, 0.5)
    np.testing.assert_allclose(r.fk, f0, rtol=1e-12)
    np.testing.assert_allclose(r.Fk, F0, rtol=1e-12)


def test_result_interface(s002, tmp_path):
    """summary() in text and HTML, to_dict() JSON-safe and aggregate only, plot() draws."""
    import json

    r = sdckit.frequencies(s002, S002_KEYS, weight="w")
    text = str(r.summary())
    assert "sample uniques (f_k = 1)" in text and "4" in text
    assert "<table>" in r.summary().to_html()
    d = json.loads(json.dumps(r.to_dict()))
    assert d["n_sample_uniques"] == 4 and d["n"] == 10
    # aggregates only: no per-record vector in the dict
    assert all(not isinstance(v, list) or len(v) != 10 for v in d.values() if v is not None)
    with pytest.raises(Exception):
        r.fk_ = 1  # frozen
    import matplotlib

    matplotlib.use("Agg")
    ax = r.plot()
    assert len(ax.patches) > 0
    ax2 = sdckit.k_anonymity(r, k=[2, 3]).plot()
    assert len(ax2.patches) == 2


def test_input_not_mutated(s002):
    before = s002.clone()
    sdckit.k_anonymity(s002, S002_KEYS, k=3, weight="w")
    assert s002.equals(before)


def test_k_integral_only_and_single_k(s002):
    """k is an integer >= 1, as everywhere k is taken: 2.5 is refused (sdcMicro rounds it to 3),
    3.0 is 3; a single int is accepted."""
    with pytest.raises(sdckit.SdcError, match=r"^k: got 2\.5; expected an integer >= 1$"):
        sdckit.k_anonymity(s002, S002_KEYS, k=2.5)
    r = sdckit.k_anonymity(s002, S002_KEYS, k=3.0)
    assert r.k == (3,) and r.n_violations[3] == 10


def test_zero_weight_drop(s002):
    """Spec 0.4: zero weights are an error by default; zero_weight="drop" keeps the record in
    f_k and leaves it out of F_k. Record 2's weight set to 0: key {1,2} has f = 2 and
    F = 180 + 0 = 180 (spec 0.5 table: 360 with both weights)."""
    d = s002.with_columns(pl.Series("w", [180.0, 0, 215, 76, 186, 76, 180, 215, 186, 76]))
    with pytest.raises(sdckit.SdcError, match="zero"):
        sdckit.frequencies(d, S002_KEYS, weight="w")
    r = sdckit.frequencies(d, S002_KEYS, weight="w", zero_weight="drop")
    np.testing.assert_array_equal(r.fk, [2, 2, 1, 2, 1, 2, 1, 1, 2, 2])
    np.testing.assert_array_equal(r.Fk, [180, 180, 215, 152, 186, 152, 180, 215, 262, 262])
    with pytest.raises(sdckit.SdcError, match="zero_weight"):
        sdckit.frequencies(d, S002_KEYS, weight="w", zero_weight="ignore")
    k = sdckit.k_anonymity(d, S002_KEYS, k=200, weight="w", zero_weight="drop")
    # F < 200: records 1, 2 (180), 4, 6 (152), 5 (186) and 7 (180)
    assert k.n_weighted_violations == {200: 6}
