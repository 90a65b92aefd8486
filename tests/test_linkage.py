"""Record-linkage risk (spec F.1, F.2): distance-based linkage with ties and missing values,
Fellegi-Sunter EM and pattern counting, one-to-one assignment, the ``sdckit linkage`` command,
and the common checks of every original/protected measure (PAIR_REGISTRY)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from conftest import as_backend
from sdckit import MissingColumnError, SdcError, SdcWarning
from sdckit._core import linkage as core
from sdckit._declare import declaration
from sdckit.cli import main
from test_continuous_risk import O8, P8, V3, X8, frame


# ----------------------------------------------------------------------------------------------
# distance-based record linkage (F.1)
# ----------------------------------------------------------------------------------------------
def test_dbrl_spec_example():
    # spec F.1 example [V-py]: all 8 protected records have their partner as nearest neighbour
    res = sdckit.record_linkage_risk(O8, P8, V3)
    assert (res.n_linked_first, res.n_linked_second, res.share_linked) == (8.0, 0.0, 1.0)
    assert res.linked_to.tolist() == list(range(8))


def test_dbrl_ties_count_one_over_t():
    # hand calculation: originals 1 and 2 identical; protected = original. For protected 1 the
    # originals 1 and 2 tie at distance 0 (t = 2): 1/2 in first and 1/2 in second position; same
    # for protected 2; records 3, 4 are linked in first position. L1 = 3, L2 = 1.
    x = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 1.0], [9.0, 7.0]])
    res = sdckit.record_linkage_risk(frame(x, ["a", "b"]), frame(x, ["a", "b"]), ["a", "b"])
    assert res.correct_first.tolist() == [0.5, 0.5, 1.0, 1.0]
    assert res.correct_second.tolist() == [0.5, 0.5, 0.0, 0.0]
    assert (res.n_linked_first, res.n_linked_second) == (3.0, 1.0)
    half = sdckit.record_linkage_risk(
        frame(x, ["a", "b"]), frame(x, ["a", "b"]), ["a", "b"], distance={"second_weight": 0.5}
    )
    assert half.share_linked == pytest.approx((3 + 0.5 * 1) / 4)


def _dbrl_oracle(xs, ys):
    """Direct computation with the full distance matrix and the F.1 rules (test oracle)."""
    n, p = xs.shape
    diff = ys[:, None, :] - xs[None, :, :]
    miss = np.isnan(diff)
    m = p - miss.sum(-1)
    d2 = np.where(m > 0, np.sum(np.where(miss, 0, diff) ** 2, -1) * (p / np.maximum(m, 1)), np.inf)
    first = np.zeros(n)
    second = np.zeros(n)
    for a in range(n):
        t = d2[a, a]
        if not np.isfinite(t):
            continue
        below = int((d2[a] < t).sum())
        ties = int((d2[a] == t).sum())
        if below == 0:
            first[a] = 1 / ties
        if below == 1 or (below == 0 and ties >= 2):
            second[a] = 1 / ties
    return first, second


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 40), st.floats(0, 0.3), st.booleans())
def test_dbrl_matches_bruteforce(seed, n, miss, coarse):
    # random files with ties (coarse integer values) and missing values against the oracle
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=(n, 3)).astype(float) if coarse else rng.normal(size=(n, 3))
    y = x + (rng.integers(-1, 2, size=x.shape) if coarse else rng.normal(scale=0.5, size=x.shape))
    x[rng.random(x.shape) < miss / 2] = np.nan
    y[rng.random(y.shape) < miss] = np.nan
    # standardise as the function does (original mean / sd) so the oracle sees the same numbers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mx, sx = np.nanmean(x, 0), np.nanstd(x, 0, ddof=1)
        if not np.all(sx > 0) or not np.all(np.nanstd(y, 0, ddof=1) > 0):
            return  # a constant variable is dropped with a warning: tested separately
    res = sdckit.record_linkage_risk(frame(x, ["a", "b", "c"]), frame(y, ["a", "b", "c"]), ["a", "b", "c"])
    first, second = _dbrl_oracle((x - mx) / sx, (y - mx) / sx)
    np.testing.assert_allclose(res.correct_first, first)
    np.testing.assert_allclose(res.correct_second, second)


def test_dbrl_options():
    # weight 0 on a variable = dropping it; Mahalanobis = Euclidean after whitening
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 3))
    y = x + rng.normal(scale=0.6, size=x.shape)
    o, p = frame(x, ["a", "b", "c"]), frame(y, ["a", "b", "c"])
    w0 = sdckit.record_linkage_risk(o, p, ["a", "b", "c"], distance={"variable_weights": {"c": 0}})
    ab = sdckit.record_linkage_risk(o, p, ["a", "b"])
    np.testing.assert_array_equal(w0.correct_first, ab.correct_first)
    mah = sdckit.record_linkage_risk(o, p, ["a", "b", "c"], distance={"metric": "mahalanobis"})
    z = (x - x.mean(0)) / x.std(0, ddof=1)
    zy = (y - x.mean(0)) / x.std(0, ddof=1)
    ci = np.linalg.inv(np.cov(z.T))
    dd = np.einsum("ijk,kl,ijl->ij", zy[:, None] - z[None], ci, zy[:, None] - z[None])
    assert mah.n_linked_first == float((dd.argmin(1) == np.arange(50)).sum())
    sep = sdckit.record_linkage_risk(o, p, ["a", "b", "c"], distance={"standardize": "separate"})
    none = sdckit.record_linkage_risk(o, p, ["a", "b", "c"], distance={"standardize": "none"})
    assert 0 < sep.share_linked <= 2 and 0 < none.share_linked <= 2


def test_dbrl_constant_variable_dropped_with_warning():
    o = O8.with_columns(pl.lit(3.0).alias("k"))
    with pytest.warns(SdcWarning, match="k constant"):
        res = sdckit.record_linkage_risk(o, P8.with_columns(pl.lit(3.0).alias("k")), V3 + ["k"])
    assert res.variables == tuple(V3)


def test_old_parameter_and_attribute_names_warn():
    # scale= -> standardize=, weights= -> variable_weights=, method by position -> keyword; the
    # old names give the same result with a DeprecationWarning naming the new one
    new = sdckit.record_linkage_risk(
        O8, P8, V3, method="distance", distance={"standardize": "separate", "variable_weights": {"inc": 2.0}}
    )
    with pytest.warns(DeprecationWarning, match=r'scale= is now given as distance=\{"standardize"'):
        old = sdckit.record_linkage_risk(O8, P8, V3, scale="separate", distance={"variable_weights": {"inc": 2.0}})
    np.testing.assert_array_equal(old.correct_first, new.correct_first)
    with pytest.warns(DeprecationWarning, match=r'weights= is now given as distance=\{"variable_weights"'):
        old = sdckit.record_linkage_risk(O8, P8, V3, weights={"inc": 2.0}, distance={"standardize": "separate"})
    np.testing.assert_array_equal(old.correct_first, new.correct_first)
    with pytest.warns(DeprecationWarning, match="pass method by keyword"):
        old = sdckit.record_linkage_risk(O8, P8, V3, "assignment")
    assert old.method == "assignment"
    with pytest.raises(TypeError, match=r"give distance=\{'standardize': ...\} only"):
        sdckit.record_linkage_risk(O8, P8, V3, scale="none", distance={"standardize": "none"})
    for name, value in (
        ("risk", new.share_linked),
        ("linked_first", new.n_linked_first),
        ("linked_second", new.n_linked_second),
        ("scale", "separate"),
        ("dld", 100 * new.share_linked),
    ):
        with pytest.warns(DeprecationWarning, match=f"LinkageResult.{name} .*share_linked|LinkageResult.{name} is"):
            assert getattr(new, name) == value


def test_result_names_counts_and_shares():
    # hand calculation from test_dbrl_ties_count_one_over_t: L1 = 3, L2 = 1 of 4 records
    x = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 1.0], [9.0, 7.0]])
    res = sdckit.record_linkage_risk(
        frame(x, ["a", "b"]), frame(x, ["a", "b"]), ["a", "b"], distance={"second_weight": 0.5}
    )
    d = res.to_dict()
    assert (d["n_linked_first"], d["n_linked_second"]) == (3.0, 1.0)
    assert (d["share_linked_first"], d["share_linked_second"], d["share_linked"]) == (0.75, 0.25, 0.875)
    assert d["standardize"] == "original" and not any("percent" in k or k in ("risk", "dld") for k in d)
    assert "DLD (%)" in str(res.summary()) and "87.5" in str(res.summary())  # percentages only when printed


# ----------------------------------------------------------------------------------------------
# probabilistic linkage (F.2)
# ----------------------------------------------------------------------------------------------
def _spec_counts():
    # spec F.2 example: counts in binary order 000..111 with the first digit = field 1; the kernel
    # indexes patterns with bit j = field j, so pattern "b1 b2 b3" is index b1 + 2 b2 + 4 b3
    spec = [7300, 900, 700, 250, 500, 100, 60, 190]
    counts = np.zeros(8, dtype=np.int64)
    for k, c in enumerate(spec):
        b1, b2, b3 = k >> 2 & 1, k >> 1 & 1, k & 1
        counts[b1 + 2 * b2 + 4 * b3] = c
    return counts


def test_em_spec_test_vector():
    # spec F.2 example [V-py]: m = (0.522306, 0.817185, 0.933515), u = (0.063772, 0.086156,
    # 0.105674), p = 0.046296; W(111) = 9.4226 ... W(000) = -7.0420; g(111) = 0.970856
    m, u, p, it, conv = core.fellegi_sunter_em(_spec_counts(), 3)
    assert conv
    np.testing.assert_allclose(m, [0.522306, 0.817185, 0.933515], atol=1e-6)
    np.testing.assert_allclose(u, [0.063772, 0.086156, 0.105674], atol=1e-6)
    assert p == pytest.approx(0.046296, abs=1e-6)
    mg, ug, W = core.pattern_weights(m, u)
    idx = {
        s: int(s[0]) + 2 * int(s[1]) + 4 * int(s[2]) for s in ["111", "011", "101", "110", "001", "010", "100", "000"]
    }
    expected = {
        "111": 9.4226,
        "011": 5.4179,
        "101": 3.8554,
        "110": 2.5298,
        "001": -0.1493,
        "010": -1.4748,
        "100": -3.0373,
        "000": -7.0420,
    }
    for s, w in expected.items():
        assert W[idx[s]] == pytest.approx(w, abs=1e-4)
    post = p * mg / (p * mg + (1 - p) * ug)
    assert post[idx["111"]] == pytest.approx(0.970856, abs=1e-6)
    assert post[idx["011"]] == pytest.approx(0.674828, abs=1e-6)


def test_classify_patterns_thresholds():
    # links: top patterns by W while cumulative u <= mu; non-links: bottom while cumulative m <= lambda
    m, u, p, *_ = core.fellegi_sunter_em(_spec_counts(), 3)
    mg, ug, W = core.pattern_weights(m, u)
    cls = core.classify_patterns(mg, ug, W, 0.05, 0.05)
    order = np.argsort(-W)
    assert np.all(np.cumsum(ug[order])[cls[order] == 2] <= 0.05)
    assert cls[order[0]] == 2 and cls[order[-1]] == 0
    assert np.sum(mg[cls == 0]) <= 0.05


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 25), st.integers(1, 25), st.integers(1, 4))
def test_pattern_counts_moebius_equals_bruteforce(seed, na, nb, K):
    # hash joins + Moebius inversion against enumerating every pair, with missing codes
    rng = np.random.default_rng(seed)
    cards = rng.integers(1, 4, size=K)
    ca = rng.integers(0, cards, size=(na, K))
    cb = rng.integers(0, cards, size=(nb, K))
    ca[rng.random(ca.shape) < 0.15] = -1
    cb[rng.random(cb.shape) < 0.15] = -1
    got = core.pattern_counts(ca, cb, cards)
    np.testing.assert_array_equal(got, core.pattern_counts_bruteforce(ca, cb))
    assert got.sum() == na * nb


def test_probabilistic_linkage_on_perturbed_categories():
    # 400 records, 4 categorical fields, 10 % of values changed at random: EM must separate
    # matches (most agree everywhere) from non-matches; true pairs agreeing on all fields are links
    rng = np.random.default_rng(3)
    n = 400
    orig = {f"v{j}": rng.integers(0, 6, n).astype(str) for j in range(4)}
    prot = {k: np.where(rng.random(n) < 0.1, rng.integers(0, 6, n).astype(str), v) for k, v in orig.items()}
    res = sdckit.record_linkage_risk(pl.DataFrame(orig), pl.DataFrame(prot), list(orig), method="probabilistic")
    e = res.em
    assert e["converged"]
    assert all(m > 0.8 for m in e["m"]) and all(u < 0.3 for u in e["u"])
    allagree = np.all([orig[k] == prot[k] for k in orig], axis=0)
    assert np.all(res.correct_first[allagree] == 1.0)
    assert 0.5 < res.share_linked <= 1
    assert sum(pat["n_pairs"] for pat in e["patterns"]) == n * n
    assert sum(pat["n_true_pairs"] for pat in e["patterns"]) == n
    assert e["precision"] == pytest.approx(e["n_true_links"] / e["n_links"])


def test_probabilistic_numeric_bins_and_categories():
    res = sdckit.record_linkage_risk(O8, P8, V3, method="probabilistic", probabilistic={"bins": 3})
    assert res.em["fields"] == V3 and len(res.em["patterns"]) == 8
    res2 = sdckit.record_linkage_risk(O8, P8, V3, method="probabilistic", probabilistic={"bins": {"inc": [15, 40]}})
    assert res2.n == 8
    # categorical variable with a protected category the original lacks -> clear error
    o = pl.DataFrame({"a": ["x", "y", "x"], "b": [1.0, 2, 3]})
    p = pl.DataFrame({"a": ["x", "z", "x"], "b": [1.0, 2, 3]})
    with pytest.raises(SdcError, match="column a of protected has 1 categories not in original"):
        sdckit.record_linkage_risk(o, p, ["a", "b"], method="probabilistic")
    with pytest.raises(SdcError, match="column a has type"):
        sdckit.record_linkage_risk(o, p.with_columns(pl.Series("a", [1, 2, 1])), ["a"], method="probabilistic")
    with pytest.raises(SdcError, match="bins"):
        sdckit.record_linkage_risk(O8, P8, V3, method="probabilistic", probabilistic={"bins": 1})


def test_probabilistic_missing_codes():
    # missing=-9: the code -9 in a categorical field is a missing value (never agrees), exactly
    # as a null there; the numeric field is binned as before
    rng = np.random.default_rng(5)
    n = 200
    a = rng.integers(0, 4, n)
    o = pl.DataFrame({"a": a, "b": rng.normal(size=n)})
    p = o.with_columns(pl.Series("a", np.where(rng.random(n) < 0.2, -9, a)))
    nulled = p.with_columns(pl.when(pl.col("a") == -9).then(None).otherwise(pl.col("a")).alias("a"))
    kw = dict(method="probabilistic", probabilistic={"categorical": ["a"], "bins": 4})
    coded = sdckit.record_linkage_risk(o, p, ["a", "b"], missing=-9, **kw)
    expected = sdckit.record_linkage_risk(o, nulled, ["a", "b"], **kw)
    assert coded.em["patterns"] == expected.em["patterns"]
    np.testing.assert_array_equal(coded.correct_first, expected.correct_first)
    with pytest.raises(SdcError, match="column a of protected has 1 categories not in original"):
        sdckit.record_linkage_risk(o, p, ["a", "b"], **kw)  # without missing=, -9 is a new category


# ----------------------------------------------------------------------------------------------
# one-to-one assignment
# ----------------------------------------------------------------------------------------------
def test_assignment_identity_and_optimality():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 3))
    y = x + rng.normal(scale=0.3, size=x.shape)
    res = sdckit.record_linkage_risk(frame(x, list("abc")), frame(x, list("abc")), list("abc"), method="assignment")
    assert res.share_linked == 1.0
    # the sparse path (candidates from the k-d tree) reaches the dense optimum's total cost
    dense = core.assignment_links(x, y)
    sparse = core.assignment_links(x, y, dense_limit=10)
    cost = lambda link: np.linalg.norm(y - x[link], axis=1).sum()  # noqa: E731
    assert sorted(dense.tolist()) == list(range(300)) and sorted(sparse.tolist()) == list(range(300))
    assert cost(sparse) == pytest.approx(cost(dense), rel=1e-9)


def test_assignment_needs_complete_data():
    with pytest.raises(SdcError, match="complete data"):
        sdckit.record_linkage_risk(
            O8.with_columns(pl.Series("inc", [None] + list(X8[1:, 0]))), P8, V3, method="assignment"
        )


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["distance", "probabilistic", "assignment"])
def test_linkage_mismatched_files(method):
    with pytest.raises(SdcError, match="protected: has 7 records but original has 8"):
        sdckit.record_linkage_risk(O8, P8.head(7), V3, method=method)
    with pytest.raises(MissingColumnError, match="inc"):
        sdckit.record_linkage_risk(O8.drop("inc"), P8, V3, method=method)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(method="fuzzy"), "method: got 'fuzzy'"),
        (dict(standardize="z"), "standardize: got 'z'"),
        (dict(metric="manhattan"), "metric: got 'manhattan'"),
        (dict(second_weight=2), "second_weight"),
        (dict(variable_weights=[1, 2]), "variable_weights: got 2 values for 3 variables"),
        (dict(variable_weights={"zz": 1}), "variable_weights: variable zz is not among the variables"),
        (dict(variable_weights=-1), "variable_weights: got -1; expected a number >= 0"),
        (dict(variable_weights=1, metric="mahalanobis"), "variable_weights: variable weights apply to the Euclidean"),
        (dict(method="probabilistic", bins=[1, "x"]), "bins: got 'x'; expected a number"),
        (dict(method="probabilistic", bins={"zz": 3}), "bins: variable zz is not among the variables"),
        (dict(method="probabilistic", mu=2), "mu"),
        (dict(method="probabilistic", em_start=(1, 0, 0)), "em_start"),
        (dict(method="probabilistic", categorical=["zz"]), "categorical: zz is not among the variables"),
    ],
)
def test_linkage_bad_parameters(kwargs, fragment):
    with pytest.raises(SdcError, match=fragment.replace("(", "\\(")):
        sdckit.record_linkage_risk(O8, P8, V3, **_grouped(kwargs))


def _grouped(kwargs: dict) -> dict:
    """The options by their flat names put into their records (``metric`` into ``distance``)."""
    return declaration(sdckit.record_linkage_risk).grouped(kwargs)


# ----------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------
@pytest.fixture
def pair_csv(tmp_path):
    o, p = tmp_path / "orig.csv", tmp_path / "prot.csv"
    O8.write_csv(o)
    P8.write_csv(p)
    return o, p


def test_cli_linkage(pair_csv, tmp_path, capsys):
    o, p = pair_csv
    out, rec = tmp_path / "l.json", tmp_path / "l.csv"
    code = main(
        [
            "linkage",
            str(o),
            str(p),
            "--variables",
            "inc,exp,age",
            "--json",
            str(out),
            "--records",
            str(rec),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "Record linkage risk" in printed and "DLD (%)" in printed
    payload = json.loads(out.read_text())
    assert payload["linkage"]["share_linked"] == 1.0  # spec F.1 example: every record linked
    assert not any("percent" in k for k in payload["linkage"])
    assert pl.read_csv(rec)["correct_first"].to_list() == [1.0] * 8
    code = main(
        [
            "linkage",
            str(o),
            str(p),
            "--variables",
            "inc,exp,age",
            "--method",
            "probabilistic",
            "--bins",
            "3",
            "--json",
            str(out),
            "--overwrite",
        ]
    )
    assert code == 0
    assert json.loads(out.read_text())["linkage"]["method"] == "probabilistic"
    code = main(
        [
            "linkage",
            str(o),
            str(p),
            "--variables",
            "inc,exp,age",
            "--standardize",
            "separate",
            "--json",
            str(out),
            "--overwrite",
        ]
    )
    assert code == 0 and json.loads(out.read_text())["linkage"]["standardize"] == "separate"
    capsys.readouterr()
    code = main(
        ["linkage", str(o), str(p), "--variables", "inc,exp,age", "--scale", "none", "--json", str(out), "--overwrite"]
    )
    assert code == 0 and json.loads(out.read_text())["linkage"]["standardize"] == "none"
    assert "--scale is now called --standardize" in capsys.readouterr().err


def test_cli_linkage_errors(pair_csv, tmp_path, capsys):
    o, p = pair_csv
    P8.head(5).write_csv(tmp_path / "short.csv")
    assert main(["linkage", str(o), str(tmp_path / "short.csv"), "--variables", "inc,exp"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdckit: error: protected: has 5 records") and err.count("\n") == 1
    assert main(["linkage", str(o), str(p), "--variables", "inc,zz"]) == 2
    assert "zz" in capsys.readouterr().err
    assert main(["linkage", str(o), str(p), "--variables", ","]) == 2
    assert "--variables" in capsys.readouterr().err


# ----------------------------------------------------------------------------------------------
# common checks for the original/protected measures (tests/test_common.py covers one-table ones)
# ----------------------------------------------------------------------------------------------
def _pair(seed=0, n=30):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(size=(n, 3)) * 100
    y = x * rng.lognormal(sigma=0.1, size=x.shape)
    o = frame(x, V3).with_columns(pl.Series("grp", np.array(["Urban", "Rural"])[rng.integers(0, 2, n)]))
    return o, frame(y, V3).with_columns(o["grp"])


# name -> (call, per-record columns that do not depend on row positions)
PAIR_REGISTRY = {
    "interval_disclosure": (lambda o, p: sdckit.interval_disclosure(o, p, V3), ["at_risk"]),
    "rmd_interval_disclosure": (
        lambda o, p: sdckit.rmd_interval_disclosure(o, p, V3),
        ["rmd", "at_risk", "at_risk_isolated"],
    ),
    "confidentiality_plot": (
        lambda o, p: sdckit.confidentiality_plot(o, p, V3),
        ["neighbours", "perturbation", "nearest_correct", "in_neighbourhood"],
    ),
    "confidentiality_plot_fellegi_sunter": (
        lambda o, p: sdckit.confidentiality_plot(o, p, V3, neighbourhood="fellegi_sunter", bins=4),
        ["neighbours", "perturbation", "nearest_correct", "in_neighbourhood"],
    ),
    "categorical_confidentiality_plot": (
        lambda o, p: sdckit.categorical_confidentiality_plot(o, p, ["grp"]),
        ["frequency", "sample_frequency", "perturbation"],
    ),
    "record_linkage_risk": (lambda o, p: sdckit.record_linkage_risk(o, p, V3), ["correct_first", "correct_second"]),
    "record_linkage_levels": (
        lambda o, p: sdckit.record_linkage_risk(
            o, p, V3 + ["grp"], method="probabilistic", probabilistic={"comparison_levels": [0, 5]}
        ),
        ["correct_first"],
    ),
    "record_linkage_probabilistic": (
        lambda o, p: sdckit.record_linkage_risk(o, p, V3 + ["grp"], method="probabilistic", probabilistic={"bins": 4}),
        ["correct_first"],
    ),
    "record_linkage_assignment": (
        lambda o, p: sdckit.record_linkage_risk(o, p, V3, method="assignment"),
        ["correct_first"],
    ),
    "external_risk": (lambda o, p: sdckit.external_risk(o, p, V3 + ["grp"], tolerance=0.1), ["paired"]),
    "outliers": (lambda o, p: sdckit.outliers(o, V3, multivariate=True), ["outlier", "robust_distance"]),
}


@pytest.mark.parametrize("name", sorted(PAIR_REGISTRY))
def test_pair_measures_common_checks(name):
    call, cols = PAIR_REGISTRY[name]
    o, p = _pair()
    o0, p0 = o.clone(), p.clone()
    res = call(o, p)
    assert o.equals(o0) and p.equals(p0)  # inputs untouched
    d = res.to_dict()
    text = json.dumps(d)
    assert "Urban" not in text

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            assert len(x) != 30, f"{name}: per-record list in to_dict()"
            for v in x:
                walk(v)

    walk(d)
    assert str(res.summary()) and "<table>" in res.summary().to_html()
    base = res.to_frame()
    assert isinstance(base, pl.DataFrame) and base.height == 30
    perm = np.random.default_rng(9).permutation(30)
    shuffled = call(o[perm], p[perm]).to_frame()
    for c in cols:
        np.testing.assert_allclose(base[c].to_numpy()[perm].astype(float), shuffled[c].to_numpy().astype(float))
    for backend in ("pandas", "pyarrow"):
        assert type(call(as_backend(o, backend), as_backend(p, backend)).to_frame()).__module__.split(".")[0] == backend


@pytest.mark.parametrize("name", sorted(PAIR_REGISTRY))
def test_pair_measures_plot(name):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    o, p = _pair()
    ax = PAIR_REGISTRY[name][0](o, p).plot()
    assert ax.has_data()
    plt.close("all")
