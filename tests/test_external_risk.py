"""Mlodak's external risk (spec F.7): the spec example, the exact blocked algorithm against a
direct pairwise computation written here from the definition (hypothesis, mixed nominal,
ordinal and continuous variables with missing values), validation and ``sdckit external``."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit import MissingColumnError, SdcError
from sdckit._core import linkage_external as core
from sdckit._declare import declaration
from sdckit.cli import main

# spec F.7 example: D (sex, age group 1..5, income) and A
D = pl.DataFrame(
    {
        "sex": ["M", "F", "M", "F", "M", "F"],
        "age": [2, 3, 2, None, 4, 3],
        "income": [1000.0, 2000, 1040, 1500, None, 2500],
    }
)
A = pl.DataFrame({"sex": ["M", "F", "F", "M"], "age": [2, 3, 1, 4], "income": [1030.0, 2200, 1500, 2550]})
VARS = ["sex", "age", "income"]
KW = dict(scales={"age": "ordinal"}, categories={"age": [1, 2, 3, 4, 5]})


@pytest.mark.parametrize("method", ["exact", "pairwise"])
@pytest.mark.parametrize(
    "avail, risk, paired",
    [
        ((1, 1, 1), 0.5, [True, False, False, True]),  # a1 with D1, D3; a4 with D5 (nearest income 2500)
        ((1, 1, 0), 0.75, [True, True, False, True]),  # income unavailable: a2 pairs with D2, D6
        ((1, 0.5, 0.2), 0.5, [True, False, False, True]),  # only p_j > 0 matters (pair_tol = 0)
    ],
)
def test_spec_example(method, avail, risk, paired):
    res = sdckit.external_risk(D, A, VARS, availability=list(avail), **KW, pairing={"method": method})
    assert res.share_paired == risk
    assert res.paired.tolist() == paired


def test_spec_example_record_distances():
    # spec F.7: distances of a1 to D1..D6 with p = (1, 1, 1): 0, 2.2, 0, 2.4, 0.4, 2.2 (age has a
    # missing value, so ranks 0..5 and divisor R_j = 5)
    e = _encode(D, A, VARS, KW, (1, 1, 1))
    near = core.nearest_observed(e.con_d, e.con_a)
    d = core.pair_distance(e, np.zeros(6, np.int64), np.arange(6), near)
    np.testing.assert_allclose(d, [0, 2.2, 0, 2.4, 0.4, 2.2], atol=1e-12)


def _encode(d, a, names, kw, avail):
    """The ExternalInput the public function builds (captured through the pairwise path)."""
    captured = {}
    orig = core.external_pairwise

    def spy(e, want_pairs=True):
        captured["e"] = e
        return orig(e, want_pairs)

    core_mod = __import__("sdckit._core.linkage_external", fromlist=["x"])
    core_mod.external_pairwise = spy
    try:
        sdckit.external_risk(d, a, names, availability=list(avail), **kw, pairing={"method": "pairwise"})
    finally:
        core_mod.external_pairwise = orig
    return captured["e"]


def test_first_found_and_correct_links():
    # ids: D rows 1..6, A rows are copies of D3, D2, (unknown 99), D5. First-found one-to-one with
    # p = (1, 1, 1): a1 takes D1 (first admissible; its partner D3 is admissible too), a4 takes D5.
    d = D.with_columns(pl.Series("pid", [1, 2, 3, 4, 5, 6]))
    a = A.with_columns(pl.Series("pid", [3, 2, 99, 5]))
    res = sdckit.external_risk(d, a, VARS, id="pid", **KW)
    assert res.linked_to.tolist() == [0, -1, -1, 4]
    assert res.correct.tolist() == [False, False, False, True]
    assert res.partner_admissible.tolist() == [True, False, False, True]
    out = res.to_dict()
    assert (out["n_correct_links"], out["n_partner_admissible"], out["n_paired"]) == (1, 2, 2)
    assert out["share_correct_links"] == 0.25 and out["share_paired"] == 0.5 and out["n_linked"] == 2


def test_one_to_one_versus_reuse():
    # two identical external records and one admissible released record: one-to-one links only the
    # first; with reuse both take it
    d = pl.DataFrame({"g": ["a", "b"]})
    a = pl.DataFrame({"g": ["a", "a"]})
    assert sdckit.external_risk(d, a, ["g"]).linked_to.tolist() == [0, -1]
    assert sdckit.external_risk(d, a, ["g"], pairing={"one_to_one": False}).linked_to.tolist() == [0, 0]
    assert sdckit.external_risk(d, a, ["g"]).share_paired == 1.0  # both are paired all the same


def test_combined_risk():
    res = sdckit.external_risk(D, A, VARS, internal_risk=0.1, **KW)
    assert res.combined_risk == pytest.approx((0.1 + 0.5) / 2)  # S003 eq. 1
    assert sdckit.external_risk(D, A, VARS, **KW).combined_risk is None


def test_old_parameter_and_attribute_names_warn():
    # algorithm= -> method=; scales, availability, tolerance by position -> keyword; result
    # attributes risk -> share_paired, algorithm -> method
    new = sdckit.external_risk(D, A, VARS, **KW, pairing={"method": "pairwise"})
    with pytest.warns(DeprecationWarning, match=r'algorithm= is now given as pairing=\{"method"'):
        old = sdckit.external_risk(D, A, VARS, algorithm="pairwise", **KW)
    assert old.method == "pairwise" and old.paired.tolist() == new.paired.tolist()
    with pytest.warns(DeprecationWarning, match="pass scales, availability, tolerance by keyword"):
        old = sdckit.external_risk(D, A, VARS, {"age": "ordinal"}, [1, 1, 0], 0.05, categories=KW["categories"])
    assert old.share_paired == 0.75  # spec F.7, income unavailable
    with pytest.warns(DeprecationWarning, match="ExternalRiskResult.risk is now called share_paired"):
        assert new.risk == 0.5
    with pytest.warns(DeprecationWarning, match="ExternalRiskResult.algorithm is now called method"):
        assert new.algorithm == "pairwise"


def test_missing_codes_in_categorical_variables():
    # missing=["?", -1]: "?" in the nominal variable and -1 in the ordinal one are missing values,
    # the same result as nulls there (spec F.7 example with a1's sex and a4's age recoded)
    d = D.with_columns(pl.Series("age", [2, 3, 2, -1, 4, 3]))
    a = A.with_columns(pl.Series("sex", ["M", "F", "?", "M"]))
    coded = sdckit.external_risk(d, a, VARS, missing=["?", -1], **KW)
    nulled = sdckit.external_risk(D, A.with_columns(pl.Series("sex", ["M", "F", None, "M"])), VARS, **KW)
    assert coded.paired.tolist() == nulled.paired.tolist() == [True, False, False, True]
    with pytest.raises(SdcError, match="column age of released has 1 value"):
        sdckit.external_risk(d, a, VARS, **KW)  # without missing=, -1 is not a declared category


def test_result_names_counts_and_shares():
    d = D.with_columns(pl.Series("pid", [1, 2, 3, 4, 5, 6]))
    a = A.with_columns(pl.Series("pid", [3, 2, 99, 5]))
    out = sdckit.external_risk(d, a, VARS, id="pid", **KW).to_dict()
    assert {k for k in out if k.startswith(("n_", "share_"))} == {
        "n_released",
        "n_external",
        "n_paired",
        "share_paired",
        "n_linked",
        "n_correct_links",
        "share_correct_links",
        "n_partner_admissible",
    }
    assert not any("percent" in k or k in ("risk", "paired", "correct_links") for k in out)


# ----------------------------------------------------------------------------------------------
# exact algorithm == direct pairwise computation from the definition (acceptance check)
# ----------------------------------------------------------------------------------------------
NOM = ["x", "y", "z", None]
ORD_LEVELS = [1, 2, 3, 4]
CONT = [0.0, 1.0, -1.0, 100.0, 103.0, 104.9, 95.0, 96.0, -100.0, -104.0, 250.0, None]


def _oracle(drows, arows, scales, avail, tol, pair_tol, normalize, reuse):
    """Pure-Python transcription of spec F.7: per-pair distances, pairing, first-found links."""
    names = list(scales)
    den = {}
    for v in names:
        if scales[v] == "ordinal":
            has_na = any(r[v] is None for r in drows + arows)
            den[v] = len(ORD_LEVELS) if has_na else len(ORD_LEVELS) - 1
    observed = {v: sorted(r[v] for r in drows if r[v] is not None) for v in names if scales[v] == "continuous"}

    def nearest(v, a):
        best = None
        for x in observed[v]:  # ascending: the lower value wins ties
            if best is None or abs(a - x) < abs(a - best):
                best = x
        return best

    def dist(a, h):
        total = 0.0
        for v in names:
            p = avail[v]
            if p == 0:
                continue
            if scales[v] == "nominal":
                dj = 0.0 if a[v] == h[v] else 1.0
            elif scales[v] == "ordinal":
                ra = 0 if a[v] is None else ORD_LEVELS.index(a[v]) + 1
                rh = 0 if h[v] is None else ORD_LEVELS.index(h[v]) + 1
                dj = abs(ra - rh) / den[v]
            else:
                if a[v] is None:
                    dj = 0.0 if h[v] is None else 1.0
                else:
                    x = h[v] if h[v] is not None else nearest(v, a[v])
                    if x is None:
                        dj = 1.0
                    elif x == 0:
                        dj = 0.0 if a[v] == 0 else 1.0
                    else:
                        dj = 1.0 if abs(a[v] - x) / abs(x) > tol else 0.0
            total += p * dj
        if normalize:
            total /= sum(avail[v] for v in names if avail[v] > 0)
        return total

    admissible = [[h for h, hr in enumerate(drows) if dist(ar, hr) <= pair_tol] for ar in arows]
    used, links = set(), []
    for cand in admissible:
        link = -1
        for h in cand:
            if reuse or h not in used:
                link = h
                used.add(h)
                break
        links.append(link)
    return [bool(c) for c in admissible], links, admissible


@st.composite
def scenario(draw):
    nvars = draw(st.integers(1, 4))
    scales = {f"v{j}": draw(st.sampled_from(["nominal", "ordinal", "continuous"])) for j in range(nvars)}
    pool = {"nominal": NOM, "ordinal": ORD_LEVELS + [None], "continuous": CONT}
    nd = draw(st.integers(1, 12))
    na = draw(st.integers(1, 10))
    row = lambda: {v: draw(st.sampled_from(pool[s])) for v, s in scales.items()}  # noqa: E731
    drows = [row() for _ in range(nd)]
    arows = [row() for _ in range(na)]
    avail = {v: draw(st.sampled_from([0.0, 0.25, 0.5, 1.0])) for v in scales}
    if all(p == 0 for p in avail.values()):
        avail["v0"] = 1.0
    tol = draw(st.sampled_from([0.01, 0.05, 0.5, 1.0, 1.5]))
    pair_tol = draw(st.sampled_from([0.0, 0.0, 0.37, 0.77]))  # not reachable as exact sums
    return scales, drows, arows, avail, tol, pair_tol, draw(st.booleans()), draw(st.booleans())


def _frame(rows, scales):
    cols = {}
    for v, s in scales.items():
        vals = [r[v] for r in rows]
        cols[v] = pl.Series(v, vals, dtype=pl.String if s == "nominal" else pl.Int64 if s == "ordinal" else pl.Float64)
    return pl.DataFrame(cols)


@settings(max_examples=300, deadline=None)
@given(scenario())
def test_exact_equals_direct_pairwise(sc):
    scales, drows, arows, avail, tol, pair_tol, normalize, reuse = sc
    paired, links, admissible = _oracle(drows, arows, scales, avail, tol, pair_tol, normalize, reuse)
    d, a = _frame(drows, scales), _frame(arows, scales)
    kw = dict(
        scales=scales,
        availability=avail,
        tolerance=tol,
        categories={v: ORD_LEVELS for v, s in scales.items() if s == "ordinal"},
    )
    pairing = dict(pair_tol=pair_tol, normalize=normalize, one_to_one=not reuse)
    for method in ("exact", "pairwise"):
        res = sdckit.external_risk(d, a, list(scales), **kw, pairing={**pairing, "method": method})
        assert res.paired.tolist() == paired, method
        assert res.linked_to.tolist() == links, method
        assert res.share_paired == sum(paired) / len(paired)


def test_exact_equals_pairwise_on_larger_random_data():
    # 600 x 500 records, 3 categorical + 2 continuous variables with suppressions: identical
    # admissible sets (CSR) from both kernels
    rng = np.random.default_rng(0)
    n = 600

    def make(m, seed):
        r = np.random.default_rng(seed)
        df = pl.DataFrame(
            {
                "a": r.integers(0, 3, m).astype(str),
                "b": r.integers(1, 4, m),
                "c": r.integers(0, 2, m).astype(str),
                "x": np.round(r.lognormal(3, 0.3, m), 1),
                "y": np.round(r.normal(0, 50, m)),
            }
        )
        return df.with_columns(
            pl.when(pl.Series(r.random(m) < 0.05)).then(None).otherwise(pl.col("x")).alias("x"),
            pl.when(pl.Series(r.random(m) < 0.05)).then(None).otherwise(pl.col("a")).alias("a"),
        )

    d, a = make(n, 1), make(500, 2)
    kw = dict(scales={"b": "ordinal", "x": "continuous", "y": "continuous"}, tolerance=0.05)
    fast = sdckit.external_risk(d, a, ["a", "b", "c", "x", "y"], **kw)
    slow = sdckit.external_risk(d, a, ["a", "b", "c", "x", "y"], **kw, pairing={"method": "pairwise"})
    assert fast.paired.tolist() == slow.paired.tolist()
    assert fast.linked_to.tolist() == slow.linked_to.tolist()
    assert 0 < fast.share_paired < 1
    del rng


def test_first_found_kernel_against_sequential_loop():
    # the shortcut (uncontested first candidates taken directly) equals the plain sequential loop
    rng = np.random.default_rng(4)
    n_a, n_d = 200, 60
    lists = [sorted(set(rng.integers(0, n_d, rng.integers(0, 5)).tolist())) for _ in range(n_a)]
    ptr = np.cumsum([0] + [len(x) for x in lists])
    idx = np.array([h for x in lists for h in x], dtype=np.int64)
    used, expected = set(), []
    for cand in lists:
        pick = next((h for h in cand if h not in used), -1)
        if pick >= 0:
            used.add(pick)
        expected.append(pick)
    assert core.first_found(ptr, idx, n_d).tolist() == expected


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, exc, fragment",
    [
        (dict(variables=["sex", "zz"]), MissingColumnError, "zz"),
        (dict(scales={"age": "interval"}), SdcError, "scales: 'interval' for age; expected one of nominal, ordinal"),
        (dict(scales={"zz": "nominal"}), SdcError, "scales: variable zz is not among the variables"),
        (dict(scales=["nominal"]), SdcError, "scales: got 1 values for 3 variables"),
        (dict(categories={"zz": [1]}), SdcError, "categories: variable zz is not among the variables"),
        (dict(categories=[1, 2]), SdcError, "categories: got list; expected a dict"),
        (dict(id=3), MissingColumnError, "id (released): column(s) 3 not found"),  # a position, as everywhere
        (dict(id=["a"]), SdcError, "id: got list of 1 columns; expected a single column name"),
        (dict(id="zz"), MissingColumnError, "id (released): column(s) zz not found"),
        (dict(one_to_one=1), SdcError, "one_to_one: got 1; expected True or False"),
        (dict(availability={"sex": 2}), SdcError, "availability['sex']: got 2; expected a number in [0, 1]"),
        (dict(availability=0), SdcError, "every variable has p_j = 0"),
        (dict(tolerance=0), SdcError, "tolerance: got 0; expected a number > 0"),
        (dict(pair_tol=-1), SdcError, "pair_tol"),
        (dict(internal_risk=1.5), SdcError, "internal_risk"),
        (dict(method="fast"), SdcError, "method: got 'fast'; expected one of 'exact', 'pairwise'"),
        (
            dict(scales={"age": "ordinal"}, categories={"age": [1, 2, 3]}),
            SdcError,
            "column age of released has 1 value(s) not among its ordinal categories; expected one of 1, 2, 3",
        ),
        (dict(categories={"age": [1, 1, 2]}), SdcError, "repeated categories"),
        (dict(id="sex"), SdcError, "id: column sex of released has repeated values"),
    ],
)
def test_external_bad_input(kwargs, exc, fragment):
    args = dict(released=D, external=A, variables=VARS)
    args.update(kwargs)
    with pytest.raises(exc) as info:  # the options by their flat names: in their record (pairing)
        sdckit.external_risk(**declaration(sdckit.external_risk).grouped(args))
    assert fragment in str(info.value)


def test_external_type_mismatch_and_empty():
    with pytest.raises(SdcError, match="column sex has type String in released but Int64 in external"):
        sdckit.external_risk(D, A.with_columns(pl.Series("sex", [1, 2, 2, 1])), VARS)
    with pytest.raises(SdcError, match="released: the table has no records"):
        sdckit.external_risk(D.head(0), A, VARS)
    with pytest.raises(SdcError, match="income of external has type String"):
        sdckit.external_risk(D, A.with_columns(pl.col("income").cast(pl.String)), VARS, scales={"income": "continuous"})


def test_external_inputs_untouched_and_empty_external():
    d0, a0 = D.clone(), A.clone()
    sdckit.external_risk(D, A, VARS, **KW)
    assert D.equals(d0) and A.equals(a0)
    res = sdckit.external_risk(D, A.head(0), VARS, **KW)
    assert res.n == 0 and res.share_paired == 0.0


# ----------------------------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------------------------
def test_cli_external(tmp_path, capsys):
    d, a = tmp_path / "d.csv", tmp_path / "a.csv"
    D.with_columns(pl.Series("pid", [1, 2, 3, 4, 5, 6])).write_csv(d)
    A.with_columns(pl.Series("pid", [3, 2, 99, 5])).write_csv(a)
    out, rec = tmp_path / "e.json", tmp_path / "e.csv"
    code = main(
        [
            "external",
            str(d),
            str(a),
            "--variables",
            "sex,age,income",
            "--scales",
            "age=1<2<3<4<5",
            "--id",
            "pid",
            "--internal-risk",
            "0.1",
            "--json",
            str(out),
            "--records",
            str(rec),
            "--no-progress",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "External risk (Mlodak)" in printed and "external risk r_ext" in printed
    payload = json.loads(out.read_text())["external_risk"]
    assert payload["share_paired"] == 0.5 and payload["combined_risk"] == pytest.approx(0.3)  # spec F.7 p = (1,1,1)
    assert payload["n_correct_links"] == 1
    assert pl.read_csv(rec)["paired"].to_list() == [True, False, False, True]
    code = main(
        [
            "external",
            str(d),
            str(a),
            "--variables",
            "sex,age,income",
            "--scales",
            "age=ordinal",
            "--availability",
            "income=0",
            "--json",
            str(out),
            "--overwrite",
        ]
    )
    assert code == 0 and json.loads(out.read_text())["external_risk"]["share_paired"] == 0.75


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--scales", "age"], "--scales: 'age' has no '='"),
        (["--availability", "age=high"], "--availability: age=high is not a number"),
        (["--scales", "zz=nominal"], "--scales: zz not in --variables"),
        (["--tolerance", "-1"], "tolerance"),
    ],
)
def test_cli_external_errors(tmp_path, capsys, args, fragment):
    d, a = tmp_path / "d.csv", tmp_path / "a.csv"
    D.write_csv(d)
    A.write_csv(a)
    assert main(["external", str(d), str(a), "--variables", "sex,age,income", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdckit: error: ") and fragment in err and err.count("\n") == 1
