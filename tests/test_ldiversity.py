"""l-diversity (spec ALGORITHMS.md A.3, K.3) against sdcMicro 5.8.1 reference outputs and the
spec's worked examples.

Sources of the expected numbers:
* ``ldiversity.json``: sdcMicro 5.8.1 outputs (tests/data/reference/sdcmicro, see tests/data/README.md);
* spec A.3 Example 1 (S002 table 4.3, Health) and Example 2 (counts (5,3,2,1) etc.), test
  vectors T-A5 / T-A6 of spec L;
* hand computations written out in the comments next to them.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA as _TESTDATA
from conftest import S002_KEYS, as_backend, reference_cases
from sdckit import LDiversityResult, SdcError, l_diversity
from sdckit._core.diversity import equivalence_classes, ldiversity_classes, multi_ldiversity_classes

DATA = _TESTDATA / "sdcmicro"

CASES = {c["id"]: c for c in reference_cases("ldiversity.json")}

# Inline data of the reference cases, transcribed from each case's R ``call`` (checked against
# the call text in ``test_inline_transcription_matches_call``). None = R NA.
INLINE = {
    "ldiversity_small_NA_keys": {
        "sex": ["female", "female", "female", "male", "male", "female", "female"],
        "occupation": [None, None, None, "teacher", "teacher", "nurse", "nurse"],
        "ethnicity": ["other", "other", "other", "other", "other", "majority", "majority"],
        "sensitive": [1.0, 0.0, 2.0, 1.0, 0.0, 0.0, 1.0],
    },
    "ldiversity_small_missing_sensitive": {
        "k": [1.0, 1, 1, 1, 2, 2, 2],
        "s": [1.0, 1, 2, -999, 3, -999, -999],
    },
    "ldiversity_small_NA_sensitive": {
        "k": [1.0, 1, 1, 1],
        "s": [1.0, None, None, 2],
    },
}


def _r_literal(values) -> str:
    def one(v):
        if v is None:
            return "NA"
        if isinstance(v, str):
            return f'"{v}"'
        return str(int(v)) if float(v).is_integer() else repr(v)

    return "c(" + ", ".join(one(v) for v in values) + ")"


def _case_data(case: dict):
    if case["dataset"] == "testdata":
        return pl.read_csv(DATA / "testdata.csv")
    return pl.DataFrame(INLINE[case["id"]], strict=False)


def _case_result(case: dict, data=None) -> LDiversityResult:
    p = case["parameters"]
    with warnings.catch_warnings():  # sdcMicro's default code -999 need not occur in the data
        warnings.filterwarnings("ignore", message="missing: -999 occur", category=sdckit.SdcWarning)
        return l_diversity(
            _case_data(case) if data is None else data,
            p["keyVars"],
            p["ldiv_index"],
            c=p.get("l_recurs_c", 2),
            missing=p.get("missing", -999),  # sdcMicro's default missing code
            allow_degenerate_keys=True,  # sdcMicro accepts single-category keys (NA_sensitive case)
        )


# ---------------------------------------------------------------------------------------------
# sdcMicro reference outputs
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case_id", [i for i in INLINE if i in CASES])
def test_inline_transcription_matches_call(case_id):
    call = CASES[case_id]["call"]
    for name, values in INLINE[case_id].items():
        assert f"{name} = {_r_literal(values)}" in call, name


def _assert_matches_sdcmicro(res: LDiversityResult, expected: dict):
    frame = res.to_frame()
    for col, values in expected.items():
        got = np.asarray(frame[col].to_numpy(), dtype=float)
        want = np.asarray(values, dtype=float)
        assert got.shape == want.shape, col
        if "Entropy" in col and not col.startswith("Multi"):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=col)
        else:  # Distinct, Recursive and the (zero) Multi columns: exact
            np.testing.assert_array_equal(got, want, err_msg=col)


@pytest.mark.parametrize("case_id", [i for i in CASES if i != "ldiversity_small_NA_sensitive"])
def test_matches_sdcmicro_reference(case_id):
    case = CASES[case_id]
    _assert_matches_sdcmicro(_case_result(case), case["outputs"]["columns"])


def test_testdata_keys_as_labels_give_same_result():
    # sdcMicro reads testdata's keys as numbers; our codes come from labels, so the same keys
    # read as strings must give the same classes and values.
    case = CASES["ldiversity_testdata_electcon"]
    df = pl.read_csv(DATA / "testdata.csv")
    df = df.with_columns([pl.col(k).cast(pl.String) for k in case["parameters"]["keyVars"]])
    _assert_matches_sdcmicro(_case_result(case, df), case["outputs"]["columns"])


def test_na_in_sensitive_is_one_category_not_sdcmicro():
    # Deliberate deviation (spec A.3 and decision K.3): sdcMicro treats every R NA in the
    # sensitive variable as a new category (values 1, NA, NA, 2 -> Distinct 4, see the case's
    # notes). Here all missing values of a class form ONE category:
    #   distinct  = t + 1 = 2 + 1 = 3                      (values 1, 2 and "missing")
    #   entropy   = exp(-(1/4 log 1/4 + 1/4 log 1/4 + 2/4 log 2/4)) = exp(1.5 log 2) = 2^1.5
    #   recursive : counts (1, 1), missing ignored: 1 < 2 * 1 -> l = 2
    case = CASES["ldiversity_small_NA_sensitive"]
    res = _case_result(case)
    np.testing.assert_array_equal(res.distinct["s"], [3, 3, 3, 3])
    np.testing.assert_allclose(res.entropy["s"], 2**1.5, rtol=1e-12)
    np.testing.assert_array_equal(res.recursive["s"], [2, 2, 2, 2])
    sdc = case["outputs"]["columns"]
    assert sdc["s_Distinct_Ldiversity"] == [4, 4, 4, 4]  # the sdcMicro value we do not copy
    assert not np.any(res.distinct["s"] == np.asarray(sdc["s_Distinct_Ldiversity"]))
    assert not np.any(np.isclose(res.entropy["s"], sdc["s_Entropy_Ldiversity"]))
    assert not np.any(res.recursive["s"] == np.asarray(sdc["s_Recursive_Ldiversity"]))
    # the same with the numeric missing code instead of null
    coded = l_diversity(
        {"k": [1, 1, 1, 1], "s": [1, -999, -999, 2]}, "k", "s", missing=-999, allow_degenerate_keys=True
    )
    np.testing.assert_array_equal(coded.distinct["s"], res.distinct["s"])
    np.testing.assert_array_equal(coded.entropy["s"], res.entropy["s"])


# ---------------------------------------------------------------------------------------------
# spec examples
# ---------------------------------------------------------------------------------------------
def test_s002_health(s002):
    # Spec A.3 Example 1 / T-A5: l per record = (1,1,1,2,1,2,1,1,2,2) for all three measures;
    # only the classes {4,6} and {9,10} (yes/no pairs) are 2-diverse.
    res = l_diversity(s002, S002_KEYS, "Health")
    want = [1, 1, 1, 2, 1, 2, 1, 1, 2, 2]
    np.testing.assert_array_equal(res.distinct["Health"], want)
    np.testing.assert_allclose(res.entropy["Health"], want, rtol=1e-12)
    np.testing.assert_array_equal(res.recursive["Health"], want)
    assert res.n_classes == 7  # spec 0.5: 7 distinct keys
    assert res.min["distinct"]["Health"] == 1
    assert not res.is_l_diverse(2)
    np.testing.assert_array_equal(res.multi_entropy, 0)  # one sensitive variable: sdcMicro's 0
    np.testing.assert_array_equal(res.multi_recursive, 0)


def _one_class(values, c=2, missing=None):
    return l_diversity(
        {"k": ["a"] * len(values), "s": values}, "k", "s", c=c, missing=missing, allow_degenerate_keys=True
    )


COUNTS_5321 = ["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d"]


@pytest.mark.parametrize("c, expected", [(1, 2), (2, 3), (3, 3)])
def test_counts_5321(c, expected):
    # Spec A.3 Example 2 / T-A6: class with counts (5,3,2,1), |E| = 11: distinct 4,
    # entropy 3.457979, recursive 2 / 3 / 3 for c = 1 / 2 / 3.
    res = _one_class(COUNTS_5321, c=c)
    np.testing.assert_array_equal(res.distinct["s"], 4)
    h = -sum(r / 11 * math.log(r / 11) for r in (5, 3, 2, 1))
    np.testing.assert_allclose(res.entropy["s"], math.exp(h), rtol=1e-14)
    np.testing.assert_allclose(res.entropy["s"], 3.457979, atol=5e-7)  # spec prints 7 digits
    np.testing.assert_array_equal(res.recursive["s"], expected)


@pytest.mark.parametrize("c", [0, -1, -0.5, 0.0])
def test_c_not_positive_is_an_error(c):
    # sdcMicro (and spec A.3) silently replace c <= 0 by 1, which hides a mistake: here it is an
    # error naming c, in the public function and in the kernel
    with pytest.raises(SdcError, match=rf"^c: got {c!r}; expected a number > 0"):
        _one_class(COUNTS_5321, c=c)
    with pytest.raises(ValueError, match="c must be > 0"):
        ldiversity_classes(np.zeros(3, dtype=np.int64), 1, np.array([0, 1, 1]), c)


def test_two_values_two_missing():
    # Spec A.3 Example 2: class (10, 10, missing, missing): distinct 2, entropy 2, recursive 1.
    # (also with sdcMicro's code -999, in an integer and in a float column)
    for values, missing in (
        ([10, 10, None, None], None),
        ([10, 10, -999, -999], -999),
        ([10.0, 10.0, -999.0, -999.0], -999),
        ([10, 10, -999, -999], [-999.0]),
    ):
        res = _one_class(values, missing=missing)
        np.testing.assert_array_equal(res.distinct["s"], 2)
        np.testing.assert_allclose(res.entropy["s"], 2.0, rtol=1e-14)
        np.testing.assert_array_equal(res.recursive["s"], 1)
        assert res.n_missing_sensitive == {"s": 2}


def test_all_missing():
    # Spec A.3 Example 2: class with all values missing: distinct 0, entropy 1, recursive 1.
    res = l_diversity({"k": ["a", "a", "b"], "s": [None, None, "x"]}, "k", "s", allow_degenerate_keys=True)
    np.testing.assert_array_equal(res.distinct["s"], [0, 0, 1])
    np.testing.assert_array_equal(res.entropy["s"], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(res.recursive["s"], [1, 1, 1])
    assert res.distinct_distribution("s")["0"] == 2


def test_missing_key_is_its_own_category_not_a_wildcard():
    # Spec 0.3 / A.3: exact grouping, NA == NA and NA != every value. Keys (1, NA, 1, NA):
    # classes {1, 3} and {2, 4}; with the "NA matches anything" rule record 2 would join {1, 3}.
    res = l_diversity({"k": [1, None, 1, None], "s": ["x", "y", "z", "y"]}, "k", "s", allow_degenerate_keys=True)
    assert res.n_classes == 2
    np.testing.assert_array_equal(res.distinct["s"], [2, 1, 2, 1])


def _multi_data():
    return {
        "k": [1] * 6 + [2] * 4 + [3] * 4,
        "A": ["x", "y", "x", "y", "y", "x"] + ["x", "y", "x", "y"] + ["x", None, "x", "y"],
        "B": ["p", "p", "p", "q", "q", "q"] + ["p", "q", "q", "p"] + ["p", "p", "p", "p"],
    }


@pytest.mark.parametrize("c, rec1", [(2, 1), (3, 2)])
def test_multi_sensitive_hand_example(c, rec1):
    # Hand computation (spec A.3 multi-attribute rule: split the class by the other sensitive
    # variables, l of the variable in every sub-group, minimum over sub-groups and variables).
    #
    # Class k=1 (6 records), A = x y x y y x, B = p p p q q q.
    #   A within B=p: (x, y, x) -> counts (2, 1), size 3:
    #       entropy = exp(-(2/3 log 2/3 + 1/3 log 1/3)) = 3 / 2^(2/3) = 1.8898815748...
    #       recursive: l = 2 iff 2 < c * 1 -> c=2: no -> 1; c=3: yes -> 2
    #   A within B=q: (y, y, x) -> (2, 1): same numbers.
    #   B within A=x: records 1,3,6 -> (p, p, q) -> (2, 1); B within A=y: (p, q, q) -> (2, 1).
    #   -> MultiEntropy = 3/2^(2/3), MultiRecursive = 1 (c=2) / 2 (c=3).
    #   Single-variable l: A counts (3, 3): distinct 2, entropy 2, recursive 2 (3 < 2*3).
    # Class k=2 (4 records), A = x y x y, B = p q q p: every sub-group holds two different
    #   values once each -> entropy 2, recursive 2 (1 < c*1 for c >= 2) -> Multi = 2, 2.
    # Class k=3 (4 records), A = x NA x y, B = p p p p:
    #   A within B=p (whole class): counts x 2, y 1, missing 1 of 4 ->
    #       entropy = exp(-(1/2 log 1/2 + 2 * 1/4 log 1/4)) = 2^1.5; recursive (2,1): 2 < c*1
    #       -> 1 for c=2, 2 for c=3.
    #   B within A=x: (p, p) -> t = 1: entropy 1, recursive 1 -> Multi = 1, 1.
    res = l_diversity(_multi_data(), "k", ["A", "B"], c=c)
    e1 = 3 / 2 ** (2 / 3)
    np.testing.assert_allclose(res.multi_entropy, [e1] * 6 + [2.0] * 4 + [1.0] * 4, rtol=1e-12)
    np.testing.assert_array_equal(res.multi_recursive, [rec1] * 6 + [2] * 4 + [1] * 4)
    np.testing.assert_array_equal(res.distinct["A"], [2] * 6 + [2] * 4 + [3] * 4)
    np.testing.assert_allclose(res.entropy["A"], [2.0] * 6 + [2.0] * 4 + [2**1.5] * 4, rtol=1e-12)
    np.testing.assert_array_equal(res.recursive["A"], [2] * 6 + [2] * 4 + [1 if c == 2 else 2] * 4)
    np.testing.assert_array_equal(res.distinct["B"], [2] * 6 + [2] * 4 + [1] * 4)
    assert res.min["multi_entropy"] == pytest.approx(1.0)
    assert res.min["multi_recursive"] == 1
    cols = res.to_frame().columns
    assert cols == [
        "A_Distinct_Ldiversity",
        "A_Entropy_Ldiversity",
        "A_Recursive_Ldiversity",
        "B_Distinct_Ldiversity",
        "B_Entropy_Ldiversity",
        "B_Recursive_Ldiversity",
        "MultiEntropy_Ldiversity",
        "MultiRecursive_Ldiversity",
    ]


# ---------------------------------------------------------------------------------------------
# result object
# ---------------------------------------------------------------------------------------------
def test_result_api(s002):
    res = l_diversity(s002, S002_KEYS, "Health")
    assert len(res) == 10
    d = res.to_dict()
    json.dumps(d)  # JSON-serialisable
    assert d["min"]["distinct"] == {"Health": 1}
    assert d["n_not_2_diverse"] == {"Health": 6}  # records 1,2,3,5,7,8 (spec A.3 Example 1)
    assert d["distinct_distribution"]["Health"]["1"] == 6
    assert d["distinct_distribution"]["Health"]["2"] == 4

    def no_record_arrays(x):  # aggregates only: no per-record vectors
        if isinstance(x, dict):
            return all(no_record_arrays(v) for v in x.values())
        return not isinstance(x, (list, np.ndarray)) or len(x) < 10

    assert no_record_arrays(d)
    text = str(res.summary())
    assert "l-diversity" in text and "Health" in text
    assert "<table>" in res.summary().to_html()
    assert res.is_l_diverse(1) and not res.is_l_diverse(2, "entropy")
    with pytest.raises(SdcError, match="measure"):
        res.is_l_diverse(2, "nope")
    with pytest.raises(SdcError, match="multi_entropy"):
        res.is_l_diverse(2, "multi_entropy")


def test_plot(s002):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    res = l_diversity(s002, S002_KEYS, "Health")
    ax = res.plot()
    heights = [p.get_height() for p in ax.patches]
    assert heights[:2] == [6, 4]  # records with distinct l = 1 and 2
    plt.close("all")


@pytest.mark.parametrize("backend", ["pandas", "polars", "pyarrow"])
def test_backends_identical(s002, backend):
    ref = l_diversity(s002, S002_KEYS, "Health")
    data = as_backend(s002, backend)
    res = l_diversity(data, S002_KEYS, "Health")
    for m in ("distinct", "entropy", "recursive"):
        np.testing.assert_array_equal(getattr(res, m)["Health"], getattr(ref, m)["Health"])
    frame = res.to_frame()
    assert type(frame).__module__.split(".")[0] == backend


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
def test_errors(s002):
    with pytest.raises(SdcError, match="sensitive: column Gender is also used as keys"):
        l_diversity(s002, S002_KEYS, "Gender")
    for bad in ("2", None, [2], float("nan"), True):
        with pytest.raises(SdcError, match="^c:"):
            l_diversity(s002, S002_KEYS, "Health", c=bad)
    with pytest.raises(SdcError, match="sensitive"):
        l_diversity(s002, S002_KEYS, None)
    with pytest.raises(SdcError, match="sensitive"):
        l_diversity(s002, S002_KEYS, [])
    with pytest.raises(sdckit.MissingColumnError, match="nope"):
        l_diversity(s002, S002_KEYS, "nope")
    with pytest.raises(SdcError, match="keys"):
        l_diversity(s002, [], "Health")


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
def _oracle(keys: np.ndarray, s: np.ndarray, c: float):
    """Per-record (distinct, entropy, recursive) by a loop over classes (spec A.3 literally)."""
    n = len(s)
    out = np.zeros((n, 3))
    for i in range(n):
        members = np.all(keys == keys[i], axis=1)
        v = s[members]
        size, u = len(v), int(np.sum(v < 0))
        vals, cnt = np.unique(v[v >= 0], return_counts=True)
        t = len(vals)
        dist = t + (u > 0 and t > 0)
        ps = [x / size for x in cnt] + ([u / size] if u > 0 and t > 0 else [])
        ent = math.exp(-sum(p * math.log(p) for p in ps)) if t else 1.0
        r = sorted(cnt, reverse=True)
        rec = 1
        for l in range(2, t + 1):
            if r[0] < c * sum(r[l - 1 :]):
                rec = l
        out[i] = dist, ent, rec
    return out


tables = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.integers(-1, 2), min_size=2, max_size=2), min_size=n, max_size=n),
        st.lists(st.integers(-1, 3), min_size=n, max_size=n),
        st.lists(st.integers(-1, 1), min_size=n, max_size=n),
    )
)


def _frame(keys, s1, s2, key_labels=("a", "b", "c"), s_labels=("u", "v", "w", "z")):
    def lab(v, labels):
        return None if v < 0 else labels[v]

    return {
        "k1": [lab(r[0], key_labels) for r in keys],
        "k2": [lab(r[1], key_labels) for r in keys],
        "s1": [lab(v, s_labels) for v in s1],
        "s2": [lab(v, s_labels) for v in s2],
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables, st.permutations(range(30)), st.sampled_from([1.0, 2.0, 3.0, 0.5]))
def test_properties(table, perm, c):
    keys, s1, s2 = table
    n = len(s1)
    res = l_diversity(_frame(keys, s1, s2), ["k1", "k2"], ["s1", "s2"], c=c, allow_degenerate_keys=True)
    # the literal definition
    orc = _oracle(np.array(keys), np.array(s1), c)
    np.testing.assert_array_equal(res.distinct["s1"], orc[:, 0])
    np.testing.assert_allclose(res.entropy["s1"], orc[:, 1], rtol=1e-12)
    np.testing.assert_array_equal(res.recursive["s1"], orc[:, 2])
    # bounds: 1 <= entropy <= max(distinct, 1), 1 <= recursive <= max(distinct, 1)
    for v in ("s1", "s2"):
        d, e, r = res.distinct[v], res.entropy[v], res.recursive[v]
        assert np.all(e >= 1 - 1e-12) and np.all(e <= np.maximum(d, 1) * (1 + 1e-12))
        assert np.all(r >= 1) and np.all(r <= np.maximum(d, 1))
    # multi measures: at least 1 and at most the single-variable l of every variable
    assert np.all(res.multi_entropy >= 1 - 1e-12) and np.all(res.multi_recursive >= 1)
    # concavity of entropy: H(S_a) >= H(S_a | others) >= min over sub-groups
    assert np.all(res.multi_entropy <= np.minimum(res.entropy["s1"], res.entropy["s2"]) * (1 + 1e-12))
    # row shuffling: same per-record results, permuted
    order = [p for p in perm if p < n]
    sh = l_diversity(
        _frame([keys[i] for i in order], [s1[i] for i in order], [s2[i] for i in order]),
        ["k1", "k2"],
        ["s1", "s2"],
        c=c,
        allow_degenerate_keys=True,
    )
    # relabelling categories (different labels, different sort order)
    rl = l_diversity(
        _frame(keys, s1, s2, key_labels=("9", "1", "5"), s_labels=(3.5, -1.0, 10.0, 0.0)),
        ["k1", "k2"],
        ["s1", "s2"],
        c=c,
        allow_degenerate_keys=True,
    )
    for other, idx in ((sh, order), (rl, list(range(n)))):
        for m in ("distinct", "entropy", "recursive"):
            for v in ("s1", "s2"):
                np.testing.assert_allclose(getattr(other, m)[v], getattr(res, m)[v][idx], rtol=1e-12)
        np.testing.assert_allclose(other.multi_entropy, res.multi_entropy[idx], rtol=1e-12)
        np.testing.assert_array_equal(other.multi_recursive, res.multi_recursive[idx])


def test_kernels_directly():
    # equivalence classes: missing (-1) is its own value
    ids, g = equivalence_classes(np.array([[0, -1], [0, -1], [0, 0], [-1, -1]], dtype=np.int32))
    assert g == 3 and ids[0] == ids[1] and len({ids[1], ids[2], ids[3]}) == 3
    # counts (5,3,2,1) (spec A.3 Example 2) plus a second class (10, 10, missing, missing)
    s = np.array([0] * 5 + [1] * 3 + [2] * 2 + [3] + [0, 0, -1, -1])
    cls = np.array([0] * 11 + [1] * 4)
    d, e, r = ldiversity_classes(cls, 2, s, 2)
    np.testing.assert_array_equal(d, [4, 2])
    np.testing.assert_allclose(e, [3.457979, 2.0], atol=5e-7)
    np.testing.assert_array_equal(r, [3, 1])
    me, mr = multi_ldiversity_classes(cls, 2, s[:, None], 2)
    np.testing.assert_array_equal(me, 0)  # single sensitive variable: 0 (sdcMicro convention)
    np.testing.assert_array_equal(mr, 0)


# ---------------------------------------------------------------------------------------------
# strata
# ---------------------------------------------------------------------------------------------
def _per_stratum(data: pl.DataFrame, keys, sensitive, strata: str, c=2, missing=None) -> dict:
    """The oracle for strata=: l_diversity run on each stratum's records alone, put back in row
    order (allow_degenerate_keys: a key may have one category within a stratum)."""
    n = data.height
    out = {m: {v: np.zeros(n) for v in sensitive} for m in ("distinct", "entropy", "recursive")}
    out["multi_entropy"], out["multi_recursive"], out["n_classes"] = np.zeros(n), np.zeros(n), 0
    rows = data.with_row_index("_row")
    for part in rows.partition_by(strata):
        idx = part["_row"].to_numpy()
        one = l_diversity(part.drop("_row"), keys, sensitive, c=c, missing=missing, allow_degenerate_keys=True)
        for m in ("distinct", "entropy", "recursive"):
            for v in sensitive:
                out[m][v][idx] = getattr(one, m)[v]
        out["multi_entropy"][idx] = one.multi_entropy
        out["multi_recursive"][idx] = one.multi_recursive
        out["n_classes"] += one.n_classes
    return out


def _assert_matches_per_stratum(res: LDiversityResult, want: dict):
    for m in ("distinct", "entropy", "recursive"):
        for v in res.sensitive:
            np.testing.assert_allclose(getattr(res, m)[v], want[m][v], rtol=1e-12, err_msg=f"{m} {v}")
    np.testing.assert_allclose(res.multi_entropy, want["multi_entropy"], rtol=1e-12)
    np.testing.assert_array_equal(res.multi_recursive, want["multi_recursive"])
    assert res.n_classes == want["n_classes"]


def test_strata_equal_each_stratum_computed_alone():
    # testdata: classes by (urbrur, roof) within each of the 8 water categories; two sensitive
    # variables, so the multi-attribute measures are compared too
    df = pl.read_csv(DATA / "testdata.csv")
    keys, sensitive = ["urbrur", "roof"], ["electcon", "relat"]
    res = l_diversity(df, keys, sensitive, strata="water", c=3)
    _assert_matches_per_stratum(res, _per_stratum(df, keys, sensitive, "water", c=3))
    assert res.strata == ("water",) and res.to_dict()["strata"] == ["water"]
    assert "strata (classes formed within each)" in str(res.summary())
    # strata only split classes: a record's l can only fall
    whole = l_diversity(df, keys, sensitive, c=3)
    assert res.n_classes > whole.n_classes
    assert np.all(res.distinct["electcon"] <= whole.distinct["electcon"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables, st.lists(st.integers(0, 2), min_size=30, max_size=30), st.sampled_from([1.0, 2.0, 0.5]))
def test_strata_property(table, strata, c):
    keys, s1, s2 = table
    data = pl.DataFrame(_frame(keys, s1, s2)).with_columns(pl.Series("st", strata[: len(s1)]))
    res = l_diversity(data, ["k1", "k2"], ["s1", "s2"], strata="st", c=c, allow_degenerate_keys=True)
    _assert_matches_per_stratum(res, _per_stratum(data, ["k1", "k2"], ["s1", "s2"], "st", c=c))


def test_strata_errors(s002):
    with pytest.raises(SdcError, match="strata: column Residence is also used as keys"):
        l_diversity(s002, S002_KEYS, "Health", strata="Residence")
    with pytest.raises(SdcError, match="strata: column g is missing for 1 record"):
        l_diversity(s002.with_columns(pl.Series("g", ["a"] * 9 + [None])), S002_KEYS, "Health", strata="g")


# ---------------------------------------------------------------------------------------------
# renamed and keyword-only parameters, renamed result attributes
# ---------------------------------------------------------------------------------------------
def test_old_names_warn_and_work(s002):
    with pytest.warns(DeprecationWarning, match="pass c by keyword"):
        old = l_diversity(s002, S002_KEYS, "Health", 3)
    new = l_diversity(s002, S002_KEYS, "Health", c=3)
    assert old.to_dict() == new.to_dict()
    with pytest.warns(DeprecationWarning, match="missing_sensitive is now called n_missing_sensitive"):
        assert new.missing_sensitive == new.n_missing_sensitive == {"Health": 0}


def test_missing_code_warning_counts_the_sensitive_columns():
    # the missing code may occur in the sensitive variable only (sdcMicro's -999 in the sensitive
    # column): no warning then; a code found nowhere is reported once, naming keys and sensitive
    data = {"k": ["a", "a", "b", "b"], "s": [1, -999, 2, 3]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = l_diversity(data, "k", "s", missing=-999)
    assert res.n_missing_sensitive == {"s": 1}
    with pytest.warns(
        sdckit.SdcWarning, match=r"missing: -7 occur\(s\) in none of the key or sensitive columns \(k, s\)"
    ):
        l_diversity(data, "k", "s", missing=[-999, -7])
