"""Risk-threshold suppression (mu-ARGUS style; sdcMicro ``localSupp``): the sdcMicro reference
case, a hand-worked example, the iterative method against a brute-force implementation of its
definition, the incremental pattern updates against a full recount, bad input, and the
properties every protection method keeps."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
import sdckit._core.risk_suppression as rs
from conftest import DATA, reference_cases
from sdckit._core.frequencies import pattern_table
from sdckit._core.individual import individual_risk_values
from sdckit._core.nafreq import pattern_frequencies
from sdckit.protect.risk_suppression import suppress_by_risk

TESTDATA = DATA / "sdcmicro" / "testdata.csv"
KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


@pytest.fixture(scope="module")
def testdata() -> pl.DataFrame:
    return pl.read_csv(TESTDATA)


@pytest.fixture(scope="module")
def case() -> dict:
    (c,) = [c for c in reference_cases("protection.json") if c["id"] == "localSupp_testdata_hhw_thr0.15_relat"]
    return c


# ----------------------------------------------------------------------------------------------
# sdcMicro localSupp (reference file protection.json)
# ----------------------------------------------------------------------------------------------
def test_sdcmicro_localsupp_reference(testdata, case):
    """localSupp(createSdcObj(testdata, keyVars, weightVar = "household_weights"),
    threshold = 0.15, keyVar = "relat"): the same suppressed records, and after it the same
    f_k, F_k, risks and the 5 records still above the threshold (one pass, no iteration)."""
    p, out = case["parameters"], case["outputs"]
    res = suppress_by_risk(
        testdata, p["keyVars"], weight=p["weightVar"], threshold=p["threshold"], variables=[p["keyVar"]],
        method="sdcmicro",
    )  # fmt: skip
    suppressed = np.flatnonzero(res.data[p["keyVar"]].is_null().to_numpy()) + 1  # 1-based, as in R
    assert suppressed.tolist() == out["suppressed_rows"]
    assert res.n_changed == {"relat": out["n_suppressed"]} and res.details["n_suppressed"] == 76
    assert res.details["n_unsafe_before"] == out["n_risk_gt_threshold"]
    assert res.details["n_unsafe_after"] == out["n_risk_after_gt_threshold"] == 5
    assert res.details["n_unresolved"] == 5 and len(res.details["unresolved_rows"]) == 5
    assert res.details["max_risk_before"] == pytest.approx(out["max_risk_before"], rel=1e-14)
    assert res.details["global_risk_before"] == pytest.approx(out["global_risk_before"], rel=1e-12)
    assert res.details["max_risk_after"] == pytest.approx(out["max_risk_after"], rel=1e-14)
    assert res.details["global_risk_after"] == pytest.approx(out["global_risk_after"], rel=1e-12)
    assert res.details["expected_reidentifications_after"] == pytest.approx(out["global_risk_ER_after"], rel=1e-12)
    after = sdckit.individual_risk(res.data, p["keyVars"], weight=p["weightVar"])
    np.testing.assert_array_equal(after.fk, out["fk_after"])
    np.testing.assert_allclose(after.Fk, out["Fk_after"], rtol=1e-12)
    np.testing.assert_allclose(after.risk, out["risk_after"], rtol=1e-12)
    np.testing.assert_array_equal(np.flatnonzero(after.risk > 0.15), res.details["unresolved_rows"])
    assert any("still above the threshold after sdcMicro's single pass" in n for n in res.notes)


def test_iterative_on_testdata_leaves_no_record_above_the_threshold(testdata):
    res = suppress_by_risk(testdata, KEYS, weight="household_weights", threshold=0.15)
    after = sdckit.individual_risk(res.data, KEYS, weight="household_weights")
    assert after.risk.max() <= 0.15 and res.details["n_unresolved"] == 0
    assert res.details["max_risk_after"] == pytest.approx(after.risk.max(), rel=1e-14)
    # default importance: distinct categories urbrur 2, roof 5, walls 3, water 8, electcon 3,
    # relat 9, sex 2 -> ranks 1, 5, 3, 6, 4, 7, 2 (ties in key order)
    assert res.details["importance"] == {
        "urbrur": 1, "roof": 5, "walls": 3, "water": 6, "electcon": 4, "relat": 7, "sex": 2,
    }  # fmt: skip
    assert (
        res.n_changed_total
        == res.details["n_suppressed"]
        == int(res.data.select(KEYS).null_count().sum_horizontal()[0])
    )
    # the brute-force implementation of the definition gives the same cells
    enc = sdckit.engines.get_engine().encode(sdckit.engines.get_engine().table(testdata), KEYS)
    w = testdata["household_weights"].to_numpy().astype(float)
    allowed = np.argsort(-np.array([1, 5, 3, 6, 4, 7, 2]), kind="stable")
    expected = _oracle(np.array(enc.codes), w, 0.15, list(allowed), "importance", 1.0, rs.record_risk)
    np.testing.assert_array_equal(res.data.select(pl.col(KEYS).is_null()).to_numpy(), expected < 0)


def test_max_global_risk_gives_the_mu_argus_threshold(testdata):
    res = suppress_by_risk(testdata, KEYS, weight="household_weights", max_global_risk=0.005)
    rt = sdckit.individual_risk(testdata, KEYS, weight="household_weights").threshold(0.005)
    assert res.details["threshold"] == rt.threshold
    assert res.details["n_unsafe_before"] == rt.n_unsafe
    # measured: the rate falls from 0.0086 to 0.0033, below the 0.005 target
    assert res.details["global_risk_before"] > 0.005 > res.details["global_risk_after"]
    assert res.parameters["max_global_risk"] == 0.005 and res.parameters["threshold"] is None


def test_strata_are_independent_problems(testdata):
    """With strata the risks are those of individual_risk(strata=...), and the result is that
    of the method run on each stratum's records separately."""
    keys = [k for k in KEYS if k != "urbrur"]
    res = suppress_by_risk(testdata, keys, weight="household_weights", threshold=0.1, strata="urbrur")
    after = sdckit.individual_risk(res.data, keys, weight="household_weights", strata="urbrur")
    assert after.risk.max() <= 0.1 and res.details["n_unresolved"] == 0
    by_stratum = res.n_changed_by_stratum
    assert set(by_stratum) == {"1", "2"}
    for s in (1, 2):
        part = testdata.filter(pl.col("urbrur") == s)
        alone = suppress_by_risk(
            part, keys, weight="household_weights", threshold=0.1, importance=res.parameters["importance"]
        )
        assert alone.data.equals(res.data.filter(pl.col("urbrur") == s))
        assert alone.n_changed == by_stratum[str(s)]
    flat = suppress_by_risk(testdata, keys, weight="household_weights", threshold=0.1)
    assert not flat.data.equals(res.data)  # strata change the problem
    xi = suppress_by_risk(testdata, keys, weight="household_weights", max_global_risk=0.003, strata="urbrur")
    rt = sdckit.individual_risk(testdata, keys, weight="household_weights", strata="urbrur").threshold(0.003)
    assert xi.details["threshold"] == rt.threshold and xi.details["n_unsafe_before"] == rt.n_unsafe


def test_target_already_met_suppresses_nothing(testdata):
    res = suppress_by_risk(testdata, KEYS, weight="household_weights", max_global_risk=0.5)
    assert res.n_changed_total == 0 and res.details["threshold"] is None
    assert res.data.equals(testdata)
    assert any("already meets the target" in n for n in res.notes)


# ----------------------------------------------------------------------------------------------
# a hand-worked example (no weights: r = 1/f; threshold 0.5: unsafe when f = 1)
# ----------------------------------------------------------------------------------------------
SMALL = pl.DataFrame({"a": ["x", "x", "x", "y"], "b": ["p", "p", "q", "p"], "z": [1.5, 2.5, 3.5, 4.5]})


def test_hand_example_importance():
    """f = (2, 2, 1, 1): rows 2 (x,q) and 3 (y,p) are unsafe, r = 1; tie -> row 2 first.
    Importance: a and b both have 2 categories -> a = 1, b = 2 (b is suppressed first).
    Row 2 -> (x,NA): f = 3 (rows 0, 1 and itself), safe. Row 3 -> (y,NA): f = 1, still unsafe
    -> (NA,NA): f = n = 4, r = 0.25, safe. Three suppressions."""
    res = suppress_by_risk(SMALL, ["a", "b"], threshold=0.5)
    assert res.data["a"].to_list() == ["x", "x", "x", None]
    assert res.data["b"].to_list() == ["p", "p", None, None]
    assert res.n_changed == {"a": 1, "b": 2}
    assert res.n_changed_by_category == {"a": {"y": 1}, "b": {"p": 1, "q": 1}}
    assert res.data["z"].equals(SMALL["z"])


def test_hand_example_min_risk():
    """Row 2: suppressing b gives (x,NA), f = 3, r = 1/3; suppressing a gives (NA,q), f = 1:
    b. Row 3: suppressing b gives (y,NA), f = 1; suppressing a gives (NA,p), compatible with
    rows 0, 1 and 2 -> f = 4, r = 1/4: a. Two suppressions instead of three."""
    res = suppress_by_risk(SMALL, ["a", "b"], threshold=0.5, strategy="min_risk")
    assert res.data["a"].to_list() == ["x", "x", "x", None]
    assert res.data["b"].to_list() == ["p", "p", None, "p"]
    assert res.details["n_suppressed"] == 2


def test_hand_example_unresolved_when_variables_run_out():
    """Only b may be suppressed: row 3 (y,NA) keeps f = 1 and is reported."""
    res = suppress_by_risk(SMALL, ["a", "b"], threshold=0.5, variables="b")
    assert res.data["b"].to_list() == ["p", "p", None, None]
    assert res.n_changed == {"b": 2}
    assert res.details["unresolved_rows"].tolist() == [3] and res.details["n_unresolved"] == 1
    assert any("1 record(s) are still above the threshold" in n for n in res.notes)


def test_importance_given_by_the_user():
    """importance = [2, 1]: a is the least important, suppressed first. Row 2 -> (NA,q): f = 1
    -> (NA,NA): f = 4. Row 3 -> (NA,p): compatible with rows 0, 1 -> f = 3."""
    res = suppress_by_risk(SMALL, ["a", "b"], threshold=0.5, importance=[2, 1])
    assert res.data["a"].to_list() == ["x", "x", None, None]
    assert res.data["b"].to_list() == ["p", "p", None, "p"]
    same = suppress_by_risk(SMALL, ["a", "b"], threshold=0.5, importance=["b", "a"])
    assert same.data.equals(res.data)


def test_replay_and_json(testdata):
    res = suppress_by_risk(testdata, KEYS, weight="household_weights", threshold=0.1, strategy="min_risk")
    again = suppress_by_risk(testdata, **json.loads(json.dumps(res.parameters)))
    assert again.data.equals(res.data)
    json.dumps(res.to_dict())


# ----------------------------------------------------------------------------------------------
# the kernel: brute force and incremental bookkeeping
# ----------------------------------------------------------------------------------------------
def _naive_risk(codes, w, alpha):
    """r_i from f_i and F_i summed over record pairs (the missing-value rule as written: record
    k adds 1 to f_i when it has i's pattern; when it is compatible (equal wherever both are
    observed) it adds, to a complete i: alpha from a partial k, 0 from an all-missing k (alpha
    if m = 1); to a partial i: 1 from a complete k, alpha otherwise; to an all-missing i: 1)."""
    n, m = codes.shape
    obs = codes >= 0
    eq = codes[:, None, :] == codes[None, :, :]
    compatible = np.all(eq | ~obs[:, None, :] | ~obs[None, :, :], axis=2)
    same = np.all(eq, axis=2)
    ni, nk = (~obs).sum(axis=1)[:, None], (~obs).sum(axis=1)[None, :]
    to_complete = np.where(nk == m, alpha if m == 1 else 0.0, np.where(nk > 0, alpha, 0.0))
    to_partial = np.where(nk == 0, 1.0, alpha)
    add = np.where(ni == 0, to_complete, np.where(ni == m, 1.0, to_partial))
    add = np.where(same, 1.0, np.where(compatible, add, 0.0))
    weights = np.ones(n) if w is None else w
    return individual_risk_values(add.sum(axis=1), add @ weights)[0]


def _oracle(codes, w, thr, allowed, strategy, alpha, risk_of=_naive_risk):
    """The definition, recounting everything after every suppression: take the unsafe record
    with the highest risk (ties: first row) that has an allowed value left; suppress the first
    allowed column it has (least important first) or the one giving it the lowest risk."""
    codes = codes.copy()
    while True:
        r = risk_of(codes, w, alpha)
        left = (codes[:, allowed] >= 0).any(axis=1)
        unsafe = np.flatnonzero((r > thr) & left)
        if not unsafe.size:
            return codes
        i = unsafe[np.lexsort((unsafe, -r[unsafe]))[0]]
        cols = [j for j in allowed if codes[i, j] >= 0]
        if strategy == "importance":
            j = cols[0]
        else:
            risks = []
            for c in cols:
                trial = codes.copy()
                trial[i, c] = -1
                risks.append(risk_of(trial, w, alpha)[i])
            j = cols[int(np.flatnonzero(np.array(risks) <= min(risks) * (1 + 1e-12))[0])]  # ties: less important
        codes[i, j] = -1


def _random_case(rng, trial):
    n, m = int(rng.integers(1, 50)), int(rng.integers(1, 5))
    codes = rng.integers(0, 3, size=(n, m)).astype(np.int32)
    codes[rng.random((n, m)) < 0.15] = -1
    w = rng.integers(1, 6, n).astype(float) if trial % 2 else None  # integer weights: exact sums
    alpha = (1.0, 0.5, 0.0)[trial % 3]
    allowed = list(rng.permutation(m)[: int(rng.integers(1, m + 1))])
    strategy = ("importance", "min_risk")[(trial // 2) % 2]
    return codes, w, float(rng.uniform(0.05, 0.9)), allowed, strategy, alpha


def test_iterative_equals_the_brute_force_definition():
    rng = np.random.default_rng(1)
    for trial in range(300):
        codes, w, thr, allowed, strategy, alpha = _random_case(rng, trial)
        new, risk, unresolved, steps = rs.suppress_iteratively(codes, w, thr, allowed, strategy=strategy, alpha=alpha)
        np.testing.assert_array_equal(new, _oracle(codes, w, thr, allowed, strategy, alpha), err_msg=str(trial))
        np.testing.assert_allclose(risk, _naive_risk(new, w, alpha), rtol=1e-13)
        assert steps == int(((new < 0) & (codes >= 0)).sum())


def test_incremental_frequencies_equal_a_full_recount(monkeypatch):
    """After every suppression the running f, F and counts of every record's pattern equal a
    recount from scratch (fractional weights: F to 1e-10)."""
    move = rs._move
    checked = []

    def checked_move(state, row, s, j):
        move(state, row, s, j)
        codes = rs._codes_of(state)
        ids, pats, cnt, ws = pattern_table(codes, state.weights)
        f, F = pattern_frequencies(pats, cnt, ws, state.alpha)
        np.testing.assert_allclose(state.f[state.rec_pat], f[ids], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(state.F[state.rec_pat], F[ids], rtol=1e-10)
        np.testing.assert_array_equal(np.bincount(state.rec_pat, minlength=state.P), state.c[: state.P])
        checked.append(1)

    monkeypatch.setattr(rs, "_move", checked_move)
    rng = np.random.default_rng(0)
    for trial in range(150):
        codes, _, thr, allowed, strategy, alpha = _random_case(rng, trial)
        w = rng.uniform(1, 10, len(codes)) if trial % 2 else None
        rs.suppress_iteratively(codes, w, thr, allowed, strategy=strategy, alpha=alpha)
    assert len(checked) > 500  # many suppressions were checked


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "threshold: give exactly one of threshold and max_global_risk"),
        ({"threshold": 0.1, "max_global_risk": 0.01}, "give exactly one of threshold and max_global_risk"),
        ({"threshold": 0.0}, "threshold: got 0.0; expected a number in (0, 1]"),
        ({"threshold": 1.5}, "threshold: got 1.5; expected a number in (0, 1]"),
        ({"threshold": "high"}, "threshold: got 'high'"),
        ({"max_global_risk": 1.0}, "max_global_risk: got 1.0; expected a number in (0, 1)"),
        ({"threshold": 0.1, "importance": [1, 1]}, "importance: expected a permutation of 1..2"),
        ({"threshold": 0.1, "importance": [1, 2, 3]}, "importance: expected a permutation of 1..2"),
        ({"threshold": 0.1, "importance": [0, 1]}, "importance: expected a permutation of 1..2"),
        ({"threshold": 0.1, "strategy": "best"}, "strategy: got 'best'"),
        ({"threshold": 0.1, "method": "fast"}, "method: got 'fast'"),
        ({"threshold": 0.1, "alpha": 2}, "alpha: got 2"),
        ({"threshold": 0.1, "variables": ["z9"]}, "variables: z9 is not among the keys"),
        ({"threshold": 0.1, "method": "sdcmicro"}, "method 'sdcmicro' suppresses one key variable"),
        ({"threshold": 0.1, "weight": "nope"}, "weight: column(s) nope not found"),
        ({"threshold": 0.1, "weight": "a"}, "weight: column a is also used as keys"),
        ({"threshold": 0.1, "weight": "neg"}, "weight: column neg has 1 negative value(s)"),
    ],
)
def test_bad_input(kwargs, message):
    df = SMALL.with_columns(pl.Series("neg", [1.0, -1.0, 2.0, 3.0]))
    with pytest.raises(sdckit.SdcError) as err:
        suppress_by_risk(df, ["a", "b"], **kwargs)
    assert message in str(err.value)


def test_target_below_every_risk_level_is_an_error():
    """Without weights every risk is 1/f; here every record is unique (r = 1), one level:
    no level l >= 2 exists, so no threshold can meet any target."""
    df = pl.DataFrame({"a": ["x", "y", "z"]})
    with pytest.raises(sdckit.SdcError, match="max_global_risk: no risk level meets the target"):
        suppress_by_risk(df, "a", max_global_risk=0.1)


# ----------------------------------------------------------------------------------------------
# backends and properties
# ----------------------------------------------------------------------------------------------
def test_pandas_input_is_not_mutated_and_keeps_its_index():
    pd = pytest.importorskip("pandas")
    df = SMALL.to_pandas()
    df.index = [10, 20, 30, 40]
    before = df.copy()
    res = suppress_by_risk(df, ["a", "b"], threshold=0.5)
    pd.testing.assert_frame_equal(df, before)
    assert list(res.data.index) == [10, 20, 30, 40]
    assert res.data["b"].isna().tolist() == [False, False, True, True]


def _frames(draw_m):
    return st.integers(min_value=1, max_value=30).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.lists(st.sampled_from([0, 1, 2, None]), min_size=draw_m, max_size=draw_m), min_size=n, max_size=n
            ),
            st.lists(st.floats(1.0, 20.0), min_size=n, max_size=n),
        )
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=st.integers(1, 4),
    data=st.data(),
    threshold=st.floats(0.02, 1.0),
    alpha=st.sampled_from([1.0, 0.5]),
    weighted=st.booleans(),
    strategy=st.sampled_from(["importance", "min_risk"]),
)
def test_properties(m, data, threshold, alpha, weighted, strategy):
    """Every record ends at r_i <= threshold or is listed as unresolved (with nothing left to
    suppress); only key cells are made missing; the input is not mutated; rows, columns and
    their order kept; with alpha = 1 no record's f_k falls (unless a record became entirely
    missing, which removes it from the complete patterns' f_k when m >= 2)."""
    rows, w = data.draw(_frames(m))
    keys = [f"k{j}" for j in range(m)]
    df = pl.DataFrame({**{k: [r[j] for r in rows] for j, k in enumerate(keys)}, "w": w, "z": list(range(len(w)))},
                      schema={**dict.fromkeys(keys, pl.Int64), "w": pl.Float64, "z": pl.Int64})  # fmt: skip
    copy = df.clone()
    weight = "w" if weighted else None
    res = suppress_by_risk(df, keys, weight=weight, threshold=threshold, alpha=alpha, strategy=strategy)
    assert df.equals(copy)
    out = res.data
    assert out.columns == df.columns and out.schema == df.schema and out.height == df.height
    assert out.select("w", "z").equals(df.select("w", "z"))
    for k in keys:
        kept = out[k].is_not_null().to_numpy()
        assert out[k].filter(kept).equals(df[k].filter(kept))  # a cell is kept or made missing
        assert df[k].is_null().to_numpy()[~kept].sum() + res.n_changed[k] == (~kept).sum()
    kw = dict(weight=weight, estimation={"alpha": alpha}, allow_degenerate_keys=True)
    before = sdckit.individual_risk(df, keys, **kw)
    after = sdckit.individual_risk(out, keys, **kw)
    unresolved = np.zeros(df.height, dtype=bool)
    unresolved[res.details["unresolved_rows"]] = True
    assert np.all((after.risk <= threshold) | unresolved)
    all_missing_after = out.select(pl.all_horizontal(pl.col(keys).is_null())).to_series().to_numpy()
    all_missing_before = df.select(pl.all_horizontal(pl.col(keys).is_null())).to_series().to_numpy()
    assert np.all(all_missing_after[unresolved])  # unresolved: every key (all may be suppressed) is gone
    emptied = bool(np.any(all_missing_after & ~all_missing_before))
    if alpha == 1.0 and not (m >= 2 and emptied):
        assert np.all(after.fk >= before.fk - 1e-9)
