"""variant_loss: the unit-free loss of every change (hand-worked examples for each rule,
properties, the EU-SILC sample, bad input)."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from conftest import shared_file
from sdckit import MissingColumnError, SdcError
from sdckit._core import change_loss as CL

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _atan(v: float) -> float:
    return (2 / math.pi) * math.atan(v)


# ---------------------------------------------------------------------------------------------
# hand-worked examples, one per rule
# ---------------------------------------------------------------------------------------------
def test_nominal_merge_by_hand():
    """a, a, a, b, b, c with a and b merged into ab: the released ab holds 3 a's and 2 b's, so an a
    costs 1 - 3/5 = 0.4, a b 1 - 2/5 = 0.6, the c (kept) 0: lambda = (3 * 0.4 + 2 * 0.6) / 6 = 0.4."""
    o = pl.DataFrame({"c": list("aaabbc")})
    p = pl.DataFrame({"c": ["ab"] * 5 + ["c"]})
    r = sdckit.variant_loss(o, p, "c", records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0.4, 0.4, 0.4, 0.6, 0.6, 0.0])
    assert r.loss_by_variable["c"] == pytest.approx(0.4)
    assert r.loss == pytest.approx(0.4)
    ch = r.change_by_variable["c"]
    assert ch["kind"] == "recoded"
    assert (ch["n_changed"], ch["n_suppressed"]) == (5, 0)
    assert (ch["n_categories_before"], ch["n_categories_after"]) == (3, 2)
    assert ch["loss_suppressed"] == 0 and ch["loss_changed"] == pytest.approx(0.4)
    assert r.scales == {"c": "nominal"}


def test_nominal_perturbation_by_hand():
    """a, a, b, b released b, a, a, b (two values swapped): released a holds one a and one b,
    released b one a and one b, so every record costs 1 - 1/2 = 0.5; the relation a -> {a, b} is
    not a function: perturbed."""
    o = pl.DataFrame({"c": list("aabb")})
    p = pl.DataFrame({"c": list("baab")})
    r = sdckit.variant_loss(o, p, "c", records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0.5, 0.5, 0.5, 0.5])
    assert r.change_by_variable["c"]["kind"] == "perturbed"
    assert r.change_by_variable["c"]["n_changed"] == 2


def test_relabelling_and_unchanged_cost_nothing():
    o = pl.DataFrame({"c": list("aab"), "x": [1.0, 2.0, 3.0]})
    p = pl.DataFrame({"c": list("xxy"), "x": [1.0, 2.0, 3.0]})
    r = sdckit.variant_loss(o, p, ["c", "x"])
    assert r.loss == 0 and r.loss_by_variable == {"c": 0.0, "x": 0.0}
    assert r.share_by_variable == {"c": 0.0, "x": 0.0}  # nothing to share
    assert r.change_by_variable["c"]["kind"] == "recoded"  # a one-to-one recode
    assert r.change_by_variable["x"]["kind"] == "unchanged"
    assert r.change_by_variable["x"]["n_categories_before"] is None
    same = sdckit.variant_loss(o, o, ["c", "x"])
    assert same.loss == 0 and {c["kind"] for c in same.change_by_variable.values()} == {"unchanged"}


def test_nominal_suppression_and_missing_by_hand():
    """a, a, b, None, None released a, None, b, None, c: the suppressed a costs 1, missing in
    both 0, an original missing released as c 1; lambda = 2/5, of which 1/5 from the suppression."""
    o = pl.DataFrame({"c": ["a", "a", "b", None, None]})
    p = pl.DataFrame({"c": ["a", None, "b", None, "c"]})
    r = sdckit.variant_loss(o, p, "c", records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0, 1, 0, 0, 1])
    ch = r.change_by_variable["c"]
    assert ch["n_suppressed"] == 1 and r.suppressed_by_variable == {"c": 1}
    assert ch["n_changed"] == 1  # the original missing value released as c
    assert ch["loss_suppressed"] == pytest.approx(0.2) and ch["loss_changed"] == pytest.approx(0.2)
    assert ch["kind"] == "recoded+suppressed"  # None -> c, a -> a, b -> b: a function


def test_numeric_noise_and_suppression_by_hand():
    """x = 1, 2, 3, 4: S = sqrt(((1.5^2 + 0.5^2) * 2) / 3) = sqrt(5/3). Noise on record 4 (4 -> 5):
    d = (2/pi) arctan(1 / S). Suppressing record 2 (x = 2 <= median 2.5): x' := the maximum 4,
    d = (2/pi) arctan(2 / S)."""
    S = math.sqrt(5 / 3)
    o = pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})
    noisy = pl.DataFrame({"x": [1.0, 2.0, 3.0, 5.0]})
    r = sdckit.variant_loss(o, noisy, "x", records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0, 0, 0, _atan(1 / S)], rtol=1e-12)
    assert r.change_by_variable["x"]["kind"] == "perturbed"
    supp = pl.DataFrame({"x": [1.0, None, 3.0, 4.0]})
    r = sdckit.variant_loss(o, supp, "x", records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0, _atan(2 / S), 0, 0], rtol=1e-12)
    ch = r.change_by_variable["x"]
    assert ch["kind"] == "suppressed" and ch["n_suppressed"] == 1 and ch["n_changed"] == 0
    assert ch["loss_suppressed"] == pytest.approx(_atan(2 / S) / 4) and ch["loss_changed"] == 0


def test_numbers_to_intervals_by_hand():
    """x = 10, 20, 30, 40 released as low, low, high, high: m(low) = 15, m(high) = 35, every
    record is 5 from its interval's mean; S = sd(10, 20, 30, 40) = sqrt(500/3):
    d = (2/pi) arctan(5 / sqrt(500/3)) for every record."""
    o = pl.DataFrame({"x": [10.0, 20.0, 30.0, 40.0]})
    p = pl.DataFrame({"x": ["low", "low", "high", "high"]})
    r = sdckit.variant_loss(o, p, "x", records=True)
    want = _atan(5 / math.sqrt(500 / 3))
    np.testing.assert_allclose(r.distances[:, 0], [want] * 4, rtol=1e-12)
    ch = r.change_by_variable["x"]
    assert ch["kind"] == "recoded" and ch["n_changed"] == 4
    assert (ch["n_categories_before"], ch["n_categories_after"]) == (4, 2)
    # an interval suppressed: x = 40 > median 25 -> the minimum 10, |40 - 10| = 30
    p2 = pl.DataFrame({"x": ["low", "low", "high", None]})
    r2 = sdckit.variant_loss(o, p2, "x", records=True)
    # high now holds only 30: m(high) = 30, record 3 costs 0
    np.testing.assert_allclose(r2.distances[:, 0], [want, want, 0, _atan(30 / math.sqrt(500 / 3))], rtol=1e-12)
    assert r2.change_by_variable["x"]["kind"] == "recoded+suppressed"


def test_integer_codes_recoded_to_text_declared_numeric():
    """An integer column (declared numeric) released as text labels: the interval rule."""
    o = pl.DataFrame({"age": [1, 2, 3, 7]})
    p = pl.DataFrame({"age": ["1-3", "1-3", "1-3", "7"]})
    r = sdckit.variant_loss(o, p, "age", scales={"age": "numeric"}, records=True)
    S = statistics.stdev([1, 2, 3, 7])
    np.testing.assert_allclose(r.distances[:, 0], [_atan(1 / S), 0, _atan(1 / S), 0], rtol=1e-12)


def _ebil_by_hand():
    """P = [[0.8, 0.2], [0.3, 0.7]] on (a, b), original counts (3, 1): joint (2.4, 0.6; 0.3, 0.7),
    released column sums 2.7 (a) and 1.3 (b); H(X | X' = a) of (2.4/2.7, 0.3/2.7), H(X | X' = b)
    of (0.6/1.3, 0.7/1.3); two records released as a and two as b."""

    def h(ps):
        return -sum(q * math.log(q) for q in ps)

    return 2 * h([2.4 / 2.7, 0.3 / 2.7]) + 2 * h([0.6 / 1.3, 0.7 / 1.3])


@pytest.mark.parametrize("form", ["dict", "pair", "frame", "array"])
def test_pram_expected_change_and_ebil_by_hand(form):
    """Original a, a, a, b; the matrix keeps a with 0.8 and b with 0.7, so the expected change
    is 0.2, 0.2, 0.2, 0.3 whatever the draw: lambda = 0.9 / 4 = 0.225."""
    o = pl.DataFrame({"c": list("aaab")})
    p = pl.DataFrame({"c": list("abab")})
    M = [[0.8, 0.2], [0.3, 0.7]]
    if form == "dict":
        spec = {"a": {"a": 0.8, "b": 0.2}, "b": {"a": 0.3, "b": 0.7}}
    elif form == "pair":
        spec = (np.array(M), ["a", "b"])
    elif form == "frame":
        pd = pytest.importorskip("pandas")
        spec = pd.DataFrame(M, index=["a", "b"], columns=["a", "b"])
    else:
        spec = np.array(M)
    r = sdckit.variant_loss(o, p, "c", pram={"c": spec}, records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0.2, 0.2, 0.2, 0.3])
    assert r.loss_by_variable["c"] == pytest.approx(0.225)
    assert r.ebil["c"] == pytest.approx(_ebil_by_hand(), rel=1e-12)
    assert r.change_by_variable["c"]["kind"] == "pram"
    # another draw from the same matrix: the same loss
    other = sdckit.variant_loss(o, pl.DataFrame({"c": list("aaaa")}), "c", pram={"c": spec})
    assert other.loss == pytest.approx(0.225)


def test_pram_category_outside_the_matrix_falls_back_with_a_note():
    """c is not in the matrix: its record takes the nominal rule (released c holds only c: 0)."""
    o = pl.DataFrame({"v": list("aabc")})
    p = pl.DataFrame({"v": list("abbc")})
    spec = {"a": {"a": 0.9, "b": 0.1}, "b": {"a": 0.1, "b": 0.9}}
    r = sdckit.variant_loss(o, p, "v", pram={"v": spec}, records=True)
    np.testing.assert_allclose(r.distances[:, 0], [0.1, 0.1, 0.1, 0.0])
    assert r.notes == (
        "v: 1 record(s) have an original category outside the PRAM matrix; their loss is the empirical one, "
        "1 - P(original | released)",
    )


# ---------------------------------------------------------------------------------------------
# result object
# ---------------------------------------------------------------------------------------------
def _mixed():
    o = pl.DataFrame(
        {"c": list("aaabbc"), "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "age": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]}
    )
    p = pl.DataFrame(
        {
            "c": ["ab"] * 5 + [None],
            "x": [1.5, 2.0, 3.0, 4.0, None, 6.5],
            "age": ["y", "y", "y", "o", "o", "o"],
        }
    )
    return o, p


def test_result_summary_dict_frame_plot():
    o, p = _mixed()
    r = sdckit.variant_loss(o, p, ["c", "x", "age"], scales={"age": "numeric"}, records=True)
    text = str(r.summary())
    assert "Per variable" in text and "recoded+suppressed" in text and "share of total" in text
    d = r.to_dict()
    payload = json.dumps(d, allow_nan=False)
    assert '"ab"' not in payload and "1.5" not in payload  # aggregates only
    assert set(d) >= {"loss", "loss_by_variable", "share_by_variable", "suppressed_by_variable", "change_by_variable"}
    assert sum(d["share_by_variable"].values()) == pytest.approx(1.0)
    assert d["change_by_variable"]["age"]["kind"] == "recoded"
    frame = r.to_frame()
    assert frame.columns == ["loss", "d_c", "d_x", "d_age"] and frame.height == 6
    np.testing.assert_allclose(frame["loss"].to_numpy(), r.distances.mean(axis=1))
    with pytest.raises(TypeError):
        r.loss_by_variable["c"] = 0.0
    with pytest.raises(SdcError, match="records=True"):
        sdckit.variant_loss(o, p, ["c", "x"]).to_frame()
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = r.plot()
    assert len(ax.patches) == 6  # two stacked parts per variable
    widths = [b.get_width() for b in ax.patches]
    assert sum(widths) == pytest.approx(sum(r.loss_by_variable.values()))


def test_inputs_are_not_mutated_and_pandas_works():
    pd = pytest.importorskip("pandas")
    o, p = _mixed()
    po, pp = o.to_pandas(), p.to_pandas()
    po0, pp0 = po.copy(), pp.copy()
    r = sdckit.variant_loss(po, pp, ["c", "x", "age"], scales={"age": "numeric"})
    ref = sdckit.variant_loss(o, p, ["c", "x", "age"], scales={"age": "numeric"})
    assert r.loss == pytest.approx(ref.loss, rel=1e-12)
    assert r.loss_by_variable == pytest.approx(dict(ref.loss_by_variable), rel=1e-12)
    assert r.change_by_variable["age"]["kind"] == "recoded"
    pd.testing.assert_frame_equal(po, po0)
    pd.testing.assert_frame_equal(pp, pp0)


# ---------------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------------
@st.composite
def _pairs(draw):
    n = draw(st.integers(2, 25))
    cats = st.sampled_from(["a", "b", "c", "d"])
    c_o = draw(st.lists(cats, min_size=n, max_size=n))
    c_p = draw(st.lists(st.one_of(cats, st.none()), min_size=n, max_size=n))
    x = draw(st.lists(st.integers(-1000, 1000).map(float), min_size=n, max_size=n))
    noise = draw(st.lists(st.one_of(st.integers(-50, 50).map(float), st.none()), min_size=n, max_size=n))
    y = [None if e is None else xi + e for xi, e in zip(x, noise)]
    g = draw(st.lists(st.sampled_from(["lo", "hi", None]), min_size=n, max_size=n))
    o = pl.DataFrame({"c": c_o, "x": x, "g": x})
    p = pl.DataFrame({"c": c_p, "x": y, "g": g}, schema={"c": pl.String, "x": pl.Float64, "g": pl.String})
    return o, p


VARS = ["c", "x", "g"]


@SETTINGS
@given(_pairs(), st.randoms(use_true_random=False))
def test_row_order_ranges_and_parts(pair, rnd):
    o, p = pair
    r = sdckit.variant_loss(o, p, VARS, records=True)
    for v in VARS:
        lam = r.loss_by_variable[v]
        assert 0.0 <= lam <= 1.0
        ch = r.change_by_variable[v]
        assert ch["loss_suppressed"] + ch["loss_changed"] == pytest.approx(lam, abs=1e-12)
    assert np.all((r.distances >= 0) & (r.distances <= 1))
    assert r.loss == pytest.approx(np.mean(list(r.loss_by_variable.values())))
    perm = list(range(o.height))
    rnd.shuffle(perm)
    r2 = sdckit.variant_loss(o[perm], p[perm], VARS, records=True)
    np.testing.assert_allclose(r2.distances, r.distances[perm], atol=1e-12)
    for v in VARS:
        a, b = r.change_by_variable[v], r2.change_by_variable[v]
        assert {k: a[k] for k in a if not k.startswith("loss")} == {k: b[k] for k in b if not k.startswith("loss")}
        assert b["loss_suppressed"] == pytest.approx(a["loss_suppressed"], abs=1e-12)


@SETTINGS
@given(_pairs(), st.floats(1e-3, 1e4))
def test_unit_invariance(pair, factor):
    """Multiplying a numeric variable by a positive constant (both files) changes nothing."""
    o, p = pair
    a = sdckit.variant_loss(o, p, VARS, records=True)
    o2 = o.with_columns(pl.col("x") * factor, pl.col("g") * factor)
    p2 = p.with_columns(pl.col("x") * factor)
    b = sdckit.variant_loss(o2, p2, VARS, records=True)
    np.testing.assert_allclose(b.distances, a.distances, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(_pairs())
def test_unchanged_file_costs_nothing_and_relabelling_is_free(pair):
    o, p = pair
    same = sdckit.variant_loss(o, o, VARS)
    assert same.loss == 0 and all(c["kind"] == "unchanged" for c in same.change_by_variable.values())
    renamed = p.with_columns(pl.col("c").replace({"a": "A", "b": "B", "c": "C", "d": "D"}))
    a = sdckit.variant_loss(o, p, ["c"], records=True)
    b = sdckit.variant_loss(o, renamed, ["c"], records=True)
    np.testing.assert_allclose(a.distances, b.distances)


def test_kernels_agree_with_a_brute_force_oracle():
    """nominal_change against the definition, record by record."""
    rng = np.random.default_rng(3)
    co = rng.integers(-1, 4, 300)
    cp = rng.integers(-1, 3, 300)
    d = CL.nominal_change(co, cp)
    for i in range(300):
        if cp[i] < 0:
            want = 1.0 if co[i] >= 0 else 0.0
        elif co[i] < 0:
            want = 1.0
        else:
            same_g = cp == cp[i]
            want = 1.0 - np.count_nonzero(same_g & (co == co[i])) / np.count_nonzero(same_g)
        assert d[i] == pytest.approx(want), i


# ---------------------------------------------------------------------------------------------
# the EU-SILC sample
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def eusilc():
    return pl.read_csv(shared_file("laeken", "eusilc.csv"))


@pytest.mark.shared_data
def test_eusilc_age_recode_costs_something(eusilc):
    rec = sdckit.global_recode(eusilc, "age", breaks=[-2, 15, 25, 35, 45, 55, 65, 75, 120]).data
    r = sdckit.variant_loss(eusilc, rec, ["age", "rb090"], scales={"age": "numeric"})
    assert r.change_by_variable["age"]["kind"] == "recoded"
    assert 0.02 < r.loss_by_variable["age"] < 0.2  # measured 0.0805: ages about 3 years from their interval's mean
    assert r.change_by_variable["age"]["n_categories_after"] == 8
    assert r.loss_by_variable["rb090"] == 0 and r.share_by_variable["age"] == 1.0


@pytest.mark.shared_data
def test_eusilc_mdav_income_is_cheap_without_units(eusilc):
    m = sdckit.microaggregation(eusilc, ["eqIncome"], group_size=3).data
    r = sdckit.variant_loss(eusilc, m, ["eqIncome"])
    assert r.change_by_variable["eqIncome"]["kind"] == "perturbed"
    assert r.loss_by_variable["eqIncome"] < 0.05  # measured 0.00049
    il = sdckit.information_loss(eusilc, m, ["eqIncome"])
    assert il.lambda_j["eqIncome"] == pytest.approx(r.loss_by_variable["eqIncome"], rel=1e-12)
    raw = sdckit.information_loss(eusilc, m, ["eqIncome"], distance={"continuous_distance": "arctan"})
    assert raw.lambda_j["eqIncome"] > 0.3  # measured 0.41: the raw form counts euros


# ---------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------
def test_bad_input():
    o = pl.DataFrame({"c": list("ab"), "k": [1, 2], "x": [1.5, 2.5]})
    with pytest.raises(SdcError, match="expected the same records"):
        sdckit.variant_loss(o, o.head(1), "c")
    with pytest.raises(MissingColumnError, match="nope"):
        sdckit.variant_loss(o, o, ["c", "nope"])
    with pytest.raises(SdcError, match="k holds integers and has no declared scale"):
        sdckit.variant_loss(o, o, "k")
    with pytest.raises(SdcError, match="scales: 'ordinal' for c; expected one of nominal, numeric"):
        sdckit.variant_loss(o, o, "c", scales={"c": "ordinal"})
    with pytest.raises(SdcError, match="c is declared numeric"):
        sdckit.variant_loss(o, o, "c", scales="numeric")
    with pytest.raises(SdcError, match="pram: x is numeric"):
        sdckit.variant_loss(o, o, "x", pram={"x": np.eye(2)})
    with pytest.raises(SdcError, match="pram: .*row sums"):
        sdckit.variant_loss(o, o, "c", pram={"c": np.array([[0.5, 0.4], [0.0, 1.0]])})
    with pytest.raises(SdcError, match="records"):
        sdckit.variant_loss(o, o, "c", records="yes")
    inf = pl.DataFrame({"c": list("ab"), "k": [1, 2], "x": [1.5, math.inf]})
    with pytest.raises(SdcError, match="infinite") as err:
        sdckit.variant_loss(o, inf, "x")
    assert "inf" not in str(err.value).replace("infinite", "")  # no record value in the message
    assert sdckit.variant_loss(o, o, "k", scales={"k": "nominal"}).loss == 0  # declared: fine
