"""t-closeness (spec ALGORITHMS.md A.4; Li, Li & Venkatasubramanian 2007).

Not in sdcMicro, so there is no reference output; the expected numbers come from the spec's
example (test vector T-A7 of spec L and the Health example of A.4) and from hand computations
written next to them. A brute-force oracle (one loop per class, dense distributions) checks the
sparse kernel on random tables.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import DATA as _TESTDATA
from conftest import S002_KEYS, as_backend
from sdckit import SdcError, TClosenessResult, t_closeness
from sdckit._core.diversity import equivalence_classes, tcloseness_classes

DATA = _TESTDATA / "sdcmicro"


# ---------------------------------------------------------------------------------------------
# spec examples
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ordered", [False, True])
def test_s002_health(s002, ordered):
    # Spec A.4 example: P = (no 0.3, yes 0.7); D = 0.3 for the all-"yes" classes, 0.7 for
    # record 7's class (all "no"), 0.2 for {4,6} and {9,10} (Q = (0.5, 0.5):
    # 0.5 * (0.2 + 0.2) = 0.2). Nominal and ordered coincide for q = 2.
    res = t_closeness(s002, S002_KEYS, "Health", ordered=ordered)
    want = [0.3, 0.3, 0.3, 0.2, 0.3, 0.2, 0.7, 0.3, 0.2, 0.2]
    np.testing.assert_allclose(res.distance["Health"], want, rtol=1e-12)
    assert res.max["Health"] == pytest.approx(0.7, rel=1e-12)
    assert res.is_t_close(0.7) and not res.is_t_close(0.69)
    assert res.n_classes == 7 and res.n_categories == {"Health": 2}
    assert res.ordered == (("Health",) if ordered else ())
    # classes above 0.25: {1,2}, {3}, {5}, {8} at 0.3 and {7} at 0.7
    assert res.n_classes_above(0.25) == {"Health": 5}


def _three_categories(labels=("a", "b", "c")):
    # 5 records, overall counts (2, 2, 1) -> P = (0.4, 0.4, 0.2).
    # Class X = {a}: Q = (1, 0, 0). Class Y = {a, b, b, c}: Q = (0.25, 0.5, 0.25).
    a, b, c = labels
    return {"k": ["X", "Y", "Y", "Y", "Y"], "s": [a, a, b, b, c]}


def test_spec_t_a7():
    # Spec A.4 example / T-A7: P = (.4, .4, .2), Q = (1, 0, 0):
    #   nominal D = (0.6 + 0.4 + 0.2) / 2 = 0.6; ordered D = (|0.6| + |0.6 - 0.4|) / 2 = 0.4.
    # Class Y (hand): Q - P = (-0.15, 0.1, 0.05):
    #   nominal D = (0.15 + 0.1 + 0.05) / 2 = 0.15; ordered cumulative (-0.15, -0.05) -> 0.2/2 = 0.1.
    data = _three_categories()
    nom = t_closeness(data, "k", "s")
    ordd = t_closeness(data, "k", "s", ordered=True)
    np.testing.assert_allclose(nom.distance["s"], [0.6, 0.15, 0.15, 0.15, 0.15], rtol=1e-12)
    np.testing.assert_allclose(ordd.distance["s"], [0.4, 0.1, 0.1, 0.1, 0.1], rtol=1e-12)
    assert nom.max == {"s": pytest.approx(0.6)} and ordd.max == {"s": pytest.approx(0.4)}


def test_declared_order_matters():
    # Labels low/mid/high with P = (low .4, mid .4, high .2) and class X = {low}.
    data = _three_categories(("low", "mid", "high"))
    # declared order low < mid < high: the T-A7 numbers, 0.4
    dec = t_closeness(data, "k", "s", ordered={"s": ["low", "mid", "high"]})
    assert dec.distance["s"][0] == pytest.approx(0.4, rel=1e-12)
    # ordered=True on strings uses sorted labels: high < low < mid, P = (.2, .4, .4),
    # Q = (0, 1, 0): cumulative Q - P = (-0.2, 0.4) -> (0.2 + 0.4) / 2 = 0.3
    lex = t_closeness(data, "k", "s", ordered=True)
    assert lex.distance["s"][0] == pytest.approx(0.3, rel=1e-12)
    # an Enum column carries its declared order
    enum = pl.DataFrame(data).with_columns(pl.col("s").cast(pl.Enum(["low", "mid", "high"])))
    assert t_closeness(enum, "k", "s", ordered=True).distance["s"][0] == pytest.approx(0.4, rel=1e-12)


def test_unobserved_declared_category_counts_in_q():
    # Categories a < b < c < d, d not observed: P = (.4, .4, .2, 0), Q = (1, 0, 0, 0):
    # cumulative Q - P = (0.6, 0.2, 0) -> (0.6 + 0.2 + 0) / (4 - 1) = 0.8 / 3. Nominal unchanged 0.6.
    data = _three_categories()
    res = t_closeness(data, "k", "s", ordered={"s": ["a", "b", "c", "d"]})
    assert res.n_categories == {"s": 4}
    assert res.distance["s"][0] == pytest.approx(0.8 / 3, rel=1e-12)


def test_numeric_keeps_numeric_order():
    # Values 2 < 3 < 10 (string order would be "10" < "2" < "3"); same shape as T-A7:
    # P = (2: .4, 3: .4, 10: .2), class X = {2} -> ordered D = 0.4.
    data = _three_categories((2, 3, 10))
    assert t_closeness(data, "k", "s", ordered=True).distance["s"][0] == pytest.approx(0.4, rel=1e-12)
    # as strings, sorted order "10" < "2" < "3": P = (.2, .4, .4), Q = (0, 1, 0) -> 0.3
    sdata = _three_categories(("2", "3", "10"))
    assert t_closeness(sdata, "k", "s", ordered=True).distance["s"][0] == pytest.approx(0.3, rel=1e-12)


def test_weighted():
    # Class X = {a (w 1), b (w 3)}, class Y = {a (w 2), b (w 2)}.
    # Unweighted: P = (.5, .5) = Q_X = Q_Y -> D = 0.
    # Weighted: P = (3/8, 5/8), Q_X = (1/4, 3/4), Q_Y = (1/2, 1/2):
    #   D_X = 0.5 (1/8 + 1/8) = 1/8, D_Y = 0.5 (1/8 + 1/8) = 1/8.
    data = {"k": ["X", "X", "Y", "Y"], "s": ["a", "b", "a", "b"], "w": [1.0, 3.0, 2.0, 2.0]}
    un = t_closeness(data, "k", "s", weight="w")  # weight given but weighted=False: unweighted
    np.testing.assert_allclose(un.distance["s"], 0.0, atol=1e-15)
    assert not un.weighted
    wt = t_closeness(data, "k", "s", weight="w", weighted=True)
    np.testing.assert_allclose(wt.distance["s"], 0.125, rtol=1e-12)
    wo = t_closeness(data, "k", "s", weight="w", weighted=True, ordered=True)
    np.testing.assert_allclose(wo.distance["s"], 0.125, rtol=1e-12)  # q = 2: same as nominal
    assert wt.weighted and wt.to_dict()["weighted"] is True


def test_missing_sensitive_excluded_and_all_missing_class_nan():
    # Classes A = {a, a, NA}, B = {b, NA}, C = {NA, NA}. Missing values excluded from P and Q:
    # P = (a 2/3, b 1/3); Q_A = (1, 0) -> D = 1/3; Q_B = (0, 1) -> D = 2/3; C has no
    # distribution -> NaN (documented), ignored by max / is_t_close.
    for s, missing in (
        (["a", "a", None, "b", None, None, None], None),
        ([1.0, 1.0, -999.0, 2.0, -999.0, -999.0, -999.0], -999),
    ):
        data = {"k": ["A", "A", "A", "B", "B", "C", "C"], "s": s}
        res = t_closeness(data, "k", "s", missing=missing)
        d = res.distance["s"]
        np.testing.assert_allclose(d[:5], [1 / 3, 1 / 3, 1 / 3, 2 / 3, 2 / 3], rtol=1e-12)
        assert np.isnan(d[5]) and np.isnan(d[6])
        assert res.max["s"] == pytest.approx(2 / 3)
        assert res.is_t_close(2 / 3 + 1e-12) and not res.is_t_close(0.5)
        assert res.to_dict()["n_classes_all_missing"] == {"s": 1}
        assert res.n_missing_sensitive == {"s": 4}


def test_single_category_and_all_missing():
    res = t_closeness({"k": ["A", "B", "B"], "s": ["x", "x", "x"]}, "k", "s", ordered=True)
    np.testing.assert_array_equal(res.distance["s"], 0.0)  # q = 1: P = Q
    res = t_closeness({"k": ["A", "B"], "s": [None, None]}, "k", "s")
    assert np.isnan(res.distance["s"]).all() and math.isnan(res.max["s"])
    assert res.is_t_close(0.0)  # no class has a distribution
    json.dumps(res.to_dict())


def test_several_sensitive_variables(s002):
    data = s002.with_columns(pl.col("Labor").alias("Labor2"))
    res = t_closeness(data, ["Residence", "Gender"], ["Health", "Labor2"], ordered=["Labor2"])
    assert res.sensitive == ("Health", "Labor2") and res.ordered == ("Labor2",)
    assert res.to_frame().columns == ["Health_TCloseness", "Labor2_TCloseness"]
    # each variable equals its own single-variable run
    for v, o in (("Health", False), ("Labor2", True)):
        one = t_closeness(data, ["Residence", "Gender"], v, ordered=o)
        np.testing.assert_array_equal(res.distance[v], one.distance[v])


# ---------------------------------------------------------------------------------------------
# result object
# ---------------------------------------------------------------------------------------------
def test_result_api(s002):
    res = t_closeness(s002, S002_KEYS, "Health")
    assert isinstance(res, TClosenessResult) and len(res) == 10
    d = res.to_dict()
    json.dumps(d)
    assert d["max"] == {"Health": pytest.approx(0.7)}
    # mean over records (spec A.4 example values): (5 * 0.3 + 4 * 0.2 + 0.7) / 10 = 3.0 / 10
    assert d["mean"]["Health"] == pytest.approx(0.3)
    assert all(not isinstance(v, list) or len(v) < 10 for v in d.values())
    text = str(res.summary())
    assert "t-closeness" in text and "Health" in text
    ct = res.class_table()
    assert ct.height == 7 and ct["size"].sum() == 10
    assert sorted(ct["Health_TCloseness"].round(12).to_list()) == [0.2, 0.2, 0.3, 0.3, 0.3, 0.3, 0.7]
    np.testing.assert_array_equal(res.class_sizes[res.class_ids], [2, 2, 1, 2, 1, 2, 1, 1, 2, 2])


def test_plot(s002):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    res = t_closeness(s002, S002_KEYS, "Health")
    ax = res.plot()
    assert sum(p.get_height() for p in ax.patches) == 10  # every record in the histogram
    plt.close("all")


@pytest.mark.parametrize("backend", ["pandas", "polars", "pyarrow"])
def test_backends_identical(s002, backend):
    ref = t_closeness(s002, S002_KEYS, "Health", weight="w", weighted=True)
    data = as_backend(s002, backend)
    res = t_closeness(data, S002_KEYS, "Health", weight="w", weighted=True)
    np.testing.assert_array_equal(res.distance["Health"], ref.distance["Health"])
    frame = res.to_frame()
    assert type(frame).__module__.split(".")[0] == backend


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
def test_errors(s002):
    with pytest.raises(SdcError, match="sensitive: column Gender is also used as keys"):
        t_closeness(s002, S002_KEYS, "Gender")
    with pytest.raises(SdcError, match="ordered: column Labor is not a sensitive variable"):
        t_closeness(s002, S002_KEYS, "Health", ordered=["Labor"])
    with pytest.raises(SdcError, match="ordered: column w is not a sensitive variable"):
        t_closeness(s002, S002_KEYS, "Health", ordered={"w": [1, 2]})
    with pytest.raises(SdcError, match=r"ordered: column Health has 1 value\(s\) not in the declared"):
        t_closeness(s002, S002_KEYS, "Health", ordered={"Health": ["no", "maybe"]})
    with pytest.raises(SdcError, match="listed more than once"):
        t_closeness(s002, S002_KEYS, "Health", ordered={"Health": ["no", "yes", "no"]})
    with pytest.raises(SdcError, match="^ordered:"):
        t_closeness(s002, S002_KEYS, "Health", ordered=3.5)
    with pytest.raises(SdcError, match="weighted: True needs a weight column"):
        t_closeness(s002, S002_KEYS, "Health", weighted=True)
    with pytest.raises(SdcError, match="^weighted:"):
        t_closeness(s002, S002_KEYS, "Health", weight="w", weighted="yes")
    with pytest.raises(SdcError, match="weight"):
        t_closeness(s002.with_columns(pl.lit(0.0).alias("w")), S002_KEYS, "Health", weight="w", weighted=True)
    with pytest.raises(sdckit.MissingColumnError, match="nope"):
        t_closeness(s002, S002_KEYS, ["Health", "nope"])
    with pytest.raises(SdcError, match="sensitive"):
        t_closeness(s002, S002_KEYS, None)
    res = t_closeness(s002, S002_KEYS, "Health")
    with pytest.raises(SdcError, match="variable"):
        res.is_t_close(0.5, variable="Labor")
    with pytest.raises(SdcError, match="^t:"):
        res.is_t_close("x")


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
def _oracle(keys: np.ndarray, s: np.ndarray, q: int, ordered: bool, w: np.ndarray) -> np.ndarray:
    """Per-record D(P, Q_E) with dense distributions and a loop over records (spec A.4 literally)."""
    ok = s >= 0
    P = np.bincount(s[ok], weights=w[ok], minlength=q) / w[ok].sum() if ok.any() else None
    out = np.full(len(s), np.nan)
    for i in range(len(s)):
        m = np.all(keys == keys[i], axis=1) & ok
        if not m.any():
            continue
        Q = np.bincount(s[m], weights=w[m], minlength=q) / w[m].sum()
        if q == 1:
            out[i] = 0.0
        elif ordered:
            out[i] = np.abs(np.cumsum(Q - P)[: q - 1]).sum() / (q - 1)
        else:
            out[i] = 0.5 * np.abs(P - Q).sum()
    return out


tables = st.integers(1, 30).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.integers(-1, 2), min_size=2, max_size=2), min_size=n, max_size=n),
        st.lists(st.integers(-1, 4), min_size=n, max_size=n),
        st.lists(st.floats(0.5, 10.0), min_size=n, max_size=n),
    )
)


def _frame(keys, s, w, key_labels=("a", "b", "c"), s_labels=(1, 2, 3, 4, 5)):
    def lab(v, labels):
        return None if v < 0 else labels[v]

    return {
        "k1": [lab(r[0], key_labels) for r in keys],
        "k2": [lab(r[1], key_labels) for r in keys],
        "s": [lab(v, s_labels) for v in s],
        "w": w,
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables, st.permutations(range(30)), st.booleans(), st.booleans())
def test_properties(table, perm, ordered, weighted):
    keys, s, w = table
    n = len(s)
    kw = dict(ordered=ordered, weight="w", weighted=weighted, allow_degenerate_keys=True)
    res = t_closeness(_frame(keys, s, w), ["k1", "k2"], "s", **kw)
    d = res.distance["s"]
    # literal definition (codes 0..4 are in label order 1 < ... < 5; q = observed categories)
    s_arr = np.array(s)
    obs = np.unique(s_arr[s_arr >= 0])
    recoded = np.where(s_arr >= 0, np.searchsorted(obs, s_arr), -1)
    orc = _oracle(np.array(keys), recoded, max(len(obs), 1), ordered, np.array(w) if weighted else np.ones(n))
    np.testing.assert_allclose(d, orc, rtol=1e-9, atol=1e-12, equal_nan=True)
    # t in [0, 1]; NaN exactly for classes without a non-missing sensitive value
    fin = ~np.isnan(d)
    assert np.all((d[fin] >= 0) & (d[fin] <= 1))
    assert np.array_equal(fin, np.isfinite(orc))
    # row shuffling
    order = [p for p in perm if p < n]
    sh = t_closeness(
        _frame([keys[i] for i in order], [s[i] for i in order], [w[i] for i in order]), ["k1", "k2"], "s", **kw
    )
    np.testing.assert_allclose(sh.distance["s"], d[order], rtol=1e-9, atol=1e-12, equal_nan=True)
    # relabelling keys, and the sensitive variable with an order-preserving relabelling
    # (ordered distance) or any relabelling (nominal distance)
    s_labels = (-7.5, 0.0, 2.0, 100.0, 1e6) if ordered else ("e", "b", "d", "a", "c")
    rl = t_closeness(_frame(keys, s, w, key_labels=("9", "1", "5"), s_labels=s_labels), ["k1", "k2"], "s", **kw)
    np.testing.assert_allclose(rl.distance["s"], d, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_kernel_large_q_sparse():
    # Many categories and classes: the sparse kernel equals the dense definition (numeric
    # sensitive variable, q = number of distinct values, as in the original paper).
    rng = np.random.default_rng(7)
    n, q = 2000, 300
    codes = rng.integers(0, 40, size=(n, 1)).astype(np.int32)
    s = rng.integers(-1, q, size=n)
    ids, g = equivalence_classes(codes)
    w = rng.uniform(0.1, 5, size=n)
    ok = s >= 0
    P = np.bincount(s[ok], weights=w[ok], minlength=q) / w[ok].sum()
    for ordered in (False, True):
        got = tcloseness_classes(ids, g, s, q, ordered, w)
        for cls in range(g):
            m = (ids == cls) & ok
            Q = np.bincount(s[m], weights=w[m], minlength=q) / w[m].sum()
            want = np.abs(np.cumsum(Q - P)[:-1]).sum() / (q - 1) if ordered else 0.5 * np.abs(Q - P).sum()
            assert got[cls] == pytest.approx(want, rel=1e-10, abs=1e-13)


def test_testdata_runs_fast():
    df = pl.read_csv(DATA / "testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "sex"]
    res = t_closeness(df, keys, ["electcon", "relat", "income"], ordered=["relat", "income"])
    for v in res.sensitive:
        d = res.distance[v]
        assert np.all((d >= 0) & (d <= 1))
    # income is numeric: q = its number of distinct values
    assert res.n_categories["income"] == df["income"].n_unique()


# ---------------------------------------------------------------------------------------------
# renamed and keyword-only parameters, renamed result attributes
# ---------------------------------------------------------------------------------------------
def test_old_names_warn_and_work(s002):
    import inspect

    with pytest.warns(DeprecationWarning, match="pass ordered by keyword"):
        old = t_closeness(s002, S002_KEYS, "Health", True)
    new = t_closeness(s002, S002_KEYS, "Health", ordered=True)
    assert old.to_dict() == new.to_dict()
    with pytest.warns(DeprecationWarning, match="classes_above is now called n_classes_above"):
        assert new.classes_above(0.25) == new.n_classes_above(0.25) == {"Health": 5}
    with pytest.warns(DeprecationWarning, match="missing_sensitive is now called n_missing_sensitive"):
        assert new.missing_sensitive == new.n_missing_sensitive
    # weight (and everything after the column roles) is keyword-only
    params = inspect.signature(t_closeness).parameters
    assert all(params[p].kind is inspect.Parameter.KEYWORD_ONLY for p in ("ordered", "weight", "weighted"))
    with pytest.raises(TypeError):
        t_closeness(s002, S002_KEYS, "Health", None, "w")
