"""The risk of a PRAM-protected file (issue 26 point 4): ``individual_risk(pram=)`` and
``loglinear_risk(pram=)``.

A released record is a correct match only if PRAM kept its released categories, so the
individual risk becomes r_i = M_kk E(1/F_k | f_k) with M_kk = prod_v P^(v)[k_v, k_v]. Tested
here: a hand calculation, the forms of the published matrices, bad inputs, properties (the
adjusted risk is in [0, naive], no adjustment gives the naive result exactly, row order and
relabelling), the DuckDB engine, and a simulation on a population with known truth showing that
the adjusted individual and log-linear risks are closer to the true expected number of correct
matches than the naive ones.
"""

from __future__ import annotations

import copy
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sdckit
from sdckit import SdcError
from test_individual_properties import SETTINGS, tables


# ----------------------------------------------------------------------------------------------
# a hand calculation
# ----------------------------------------------------------------------------------------------
def _small() -> pl.DataFrame:
    """Five records, key a (PRAMed), key b (not PRAMed), two households."""
    return pl.DataFrame(
        {
            "a": ["x", "x", "y", "y", "x"],
            "b": [1, 1, 1, 2, 2],
            "hh": [1, 1, 2, 2, 2],
        }
    )


def test_hand_calculation_without_weights():
    """Without weights r = 1/f_k. Patterns: (x,1) f=2, (y,1) f=1, (y,2) f=1, (x,2) f=1, so the
    naive risks are (1/2, 1/2, 1, 1, 1). With keep probabilities x: 0.8, y: 0.6 for a (b not
    PRAMed: factor 1) the adjusted risks are
    (0.8/2, 0.8/2, 0.6, 0.6, 0.8) = (0.4, 0.4, 0.6, 0.6, 0.8):
    ER = 2.8, xi = 2.8 / 5 = 0.56.
    Households {1, 2}, {3, 4, 5}: r^h_1 = 1 - 0.6 * 0.6 = 0.64,
    r^h_2 = 1 - 0.4 * 0.4 * 0.2 = 0.968; ER^h = 2 * 0.64 + 3 * 0.968 = 4.184.
    Threshold for xi* = 0.5 (target 2.5 expected re-identifications): capping at 0.8 leaves
    2.8, at 0.6 leaves 0.6 * 3 + 0.4 * 2 = 2.6, at 0.4 leaves 2.0 < 2.5, so r* = 0.4 and the
    three records above it are unsafe."""
    res = sdckit.individual_risk(_small(), ["a", "b"], household="hh", pram={"a": {"x": 0.8, "y": 0.6}})
    np.testing.assert_allclose(res.risk, [0.4, 0.4, 0.6, 0.6, 0.8], rtol=1e-15)
    assert res.expected_reidentifications == pytest.approx(2.8, rel=1e-15)
    assert res.global_risk == pytest.approx(0.56, rel=1e-15)
    np.testing.assert_allclose(res.household_risk, [0.64, 0.64, 0.968, 0.968, 0.968], rtol=1e-14)
    assert res.household_expected_reidentifications == pytest.approx(4.184, rel=1e-14)
    thr = res.threshold(0.5)
    assert thr.threshold == pytest.approx(0.4, rel=1e-15)
    assert thr.n_unsafe == 3
    assert res.pram_adjusted == ("a",)
    assert res.to_dict()["pram_adjusted"] == ["a"]
    assert "PRAM-adjusted" in str(res.summary())


def test_hand_calculation_with_weights_two_pramed_keys_and_a_missing_value():
    """Weights 10, 10, 4, 5 and keys a, b both PRAMed, a missing value of b in record 4.

    Patterns (sdcMicro rule: a missing value matches every category):
    record 1 (x, 1): matches records 1 and 4: f = 2, F = 10 + 5 = 15;
    record 2 (y, 1): f = 1, F = 10; record 3 (y, 2): f = 1, F = 4;
    record 4 (x, NA): matches record 1: f = 2, F = 15.
    Benedetti-Franconi with p = f / F:
    f = 1: r = (p/q) log(1/p); f = 2: r = p/q - (p/q)^2 log(1/p).
    M: record 1 = 0.9 (a = x) * 0.7 (b = 1); record 2 = 0.5 * 0.7; record 3 = 0.5 * 0.95;
    record 4 = 0.9 (b missing: factor 1)."""
    d = pl.DataFrame({"a": ["x", "y", "y", "x"], "b": [1, 1, 2, None], "w": [10.0, 10.0, 4.0, 5.0]})

    def f1(p):
        return p / (1 - p) * math.log(1 / p)

    def f2(p):
        s = p / (1 - p)
        return s - s * s * math.log(1 / p)

    naive = np.array([f2(2 / 15), f1(1 / 10), f1(1 / 4), f2(2 / 15)])
    keep = np.array([0.9 * 0.7, 0.5 * 0.7, 0.5 * 0.95, 0.9])
    pram = {"a": {"x": 0.9, "y": 0.5}, "b": {1: 0.7, 2: 0.95}}
    res = sdckit.individual_risk(d, ["a", "b"], weight="w", pram=pram)
    ref = sdckit.individual_risk(d, ["a", "b"], weight="w")
    np.testing.assert_allclose(ref.risk, naive, rtol=1e-12)  # the hand values of the naive risk
    np.testing.assert_allclose(res.risk, keep * naive, rtol=1e-12)
    assert res.pram_adjusted == ("a", "b")
    np.testing.assert_array_equal(res.fk, ref.fk)  # the frequencies are those of the released file


# ----------------------------------------------------------------------------------------------
# the forms of the published matrices
# ----------------------------------------------------------------------------------------------
P_A = np.array([[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.25, 0.05, 0.7]])
CATS_A = ["x", "y", "z"]


def _forms_data() -> pl.DataFrame:
    return pl.DataFrame({"a": ["x", "y", "z", "x", "y", "x"], "b": [1, 1, 2, 2, 1, 1], "w": [3.0, 2, 5, 4, 6, 2]})


@pytest.mark.parametrize(
    "spec",
    [
        {"x": 0.8, "y": 0.7, "z": 0.7},
        {"x": 0.8, "y": 0.7, "z": 0.7, "unused": 0.9},  # a category that does not occur is ignored
        {a: {b: float(P_A[i, j]) for j, b in enumerate(CATS_A)} for i, a in enumerate(CATS_A)},
        (P_A, CATS_A),
        pd.DataFrame(P_A, index=CATS_A, columns=CATS_A),
        # columns in another order than the rows: the diagonal is found by label
        pd.DataFrame(P_A[:, ::-1], index=CATS_A, columns=CATS_A[::-1]),
    ],
    ids=["diagonal", "diagonal-extra", "dict-matrix", "pair", "dataframe", "dataframe-reordered"],
)
def test_every_form_gives_the_diagonal(spec):
    d = _forms_data()
    naive = sdckit.individual_risk(d, ["a", "b"], weight="w")
    res = sdckit.individual_risk(d, ["a", "b"], weight="w", pram={"a": spec})
    keep = np.array([{"x": 0.8, "y": 0.7, "z": 0.7}[v] for v in d["a"]])
    np.testing.assert_allclose(res.risk, keep * naive.risk, rtol=1e-15)


def test_a_number_is_the_keep_probability_of_every_category():
    d = _forms_data()
    naive = sdckit.individual_risk(d, ["a", "b"], weight="w")
    res = sdckit.individual_risk(d, ["a", "b"], weight="w", pram={"b": 0.75})
    np.testing.assert_allclose(res.risk, 0.75 * naive.risk, rtol=1e-15)


def test_the_pram_steps_published_forms_give_the_same_risk():
    """``details["pram_diagonal"]`` and ``details["pram"]`` of sdckit.pram are accepted and agree."""
    d = _forms_data()
    out = sdckit.pram(d, ["a"], matrix={"a": (P_A, CATS_A)}, seed=3)
    by_diag = sdckit.individual_risk(out.data, ["a", "b"], weight="w", pram=out.details["pram_diagonal"])
    by_matrix = sdckit.individual_risk(out.data, ["a", "b"], weight="w", pram=out.details["pram"])
    naive = sdckit.individual_risk(out.data, ["a", "b"], weight="w")
    keep = np.diag(P_A)[[CATS_A.index(v) for v in out.data["a"]]]
    np.testing.assert_array_equal(by_diag.risk, by_matrix.risk)
    np.testing.assert_allclose(by_diag.risk, keep * naive.risk, rtol=1e-15)


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pram", "message"),
    [
        ({"a": {"x": 0.8}}, r"^pram: a: 2 categories of the data have no keep probability; expected one for every"),
        ({"a": {"x": 0.8, "y": 0.7}}, r"^pram: a: 1 category of the data has no keep probability"),
        ({"nope": 0.9}, r"^pram: got 'nope'; expected one of 'a', 'b'"),
        ([("a", 0.9)], r"^pram: got a list; expected a dict key variable -> diagonal or transition matrix"),
        ({"a": 1.5}, r"^pram\['a'\]"),
        ({"a": {"x": 0.8, "y": -0.1, "z": 0.7}}, r"^pram\['a'\]"),
        ({"a": True}, r"^pram: a: got a bool"),
        ({"a": "0.8"}, r"^pram: a: got a str; expected a probability"),
        ({"a": {"x": {"x": 0.8, "y": 0.2}, "y": 0.7}}, r"^pram: a: some entries are rows of a matrix"),
        ({"a": (np.full((3, 3), 0.5), CATS_A)}, r"^pram: a: 3 row\(s\) of the matrix do not sum to 1"),
        ({"a": (np.eye(2), CATS_A)}, r"^pram: a: a matrix of shape \(2, 2\) for 3 categories"),
        ({"a": (-np.eye(3), CATS_A)}, r"^pram: a: the matrix has entries outside \[0, 1\]"),
        ({"a": (np.eye(3), ["x", "y", "q"])}, r"^pram: a: 1 category of the data has no keep probability"),
    ],
)
def test_bad_pram_is_a_clear_error(pram, message):
    with pytest.raises(SdcError, match=message) as err:
        sdckit.individual_risk(_forms_data(), ["a", "b"], weight="w", pram=pram)
    # a category label is a record value: the message gives counts, never a label
    for label in ("'x'", "'y'", "'z'", " x,", " y,", " z,"):
        assert label not in str(err.value)


def test_inputs_are_not_mutated():
    d = _forms_data()
    before = d.clone()
    pram = {"a": {a: {b: float(P_A[i, j]) for j, b in enumerate(CATS_A)} for i, a in enumerate(CATS_A)}}
    kept = copy.deepcopy(pram)
    sdckit.individual_risk(d, ["a", "b"], weight="w", pram=pram)
    assert pram == kept
    assert d.equals(before)


# ----------------------------------------------------------------------------------------------
# properties
# ----------------------------------------------------------------------------------------------
def _random_diagonal(data: pl.DataFrame, keys: list, draw) -> dict:
    """A keep probability for every category of some keys."""
    out = {}
    for k in keys:
        if draw(st.booleans()):
            cats = sorted({v for v in data[k].to_list() if v is not None})
            out[k] = {c: draw(st.floats(0.0, 1.0)) for c in cats}
    return out


@SETTINGS
@given(tables(), st.sampled_from(["approx", "exact"]), st.data())
def test_adjusted_risk_is_within_zero_and_the_naive_risk(t, method, data):
    d, keys, alpha = t
    pram = _random_diagonal(d, keys, data.draw)
    kw = dict(weight="w", household="hh", estimation={"alpha": alpha, "method": method}, allow_degenerate_keys=True)
    naive = sdckit.individual_risk(d, keys, **kw)
    res = sdckit.individual_risk(d, keys, pram=pram, **kw)
    assert np.all((res.risk >= 0) & (res.risk <= naive.risk))
    assert np.all((res.household_risk >= 0) & (res.household_risk <= naive.household_risk))
    assert 0 <= res.global_risk <= naive.global_risk
    assert res.pram_adjusted == tuple(k for k in keys if k in pram)


@SETTINGS
@given(tables(), st.booleans())
def test_no_adjustment_gives_exactly_the_naive_result(t, empty):
    """pram={} and a diagonal of ones change nothing (bit for bit)."""
    d, keys, alpha = t
    kw = dict(weight="w", household="hh", estimation={"alpha": alpha}, allow_degenerate_keys=True)
    naive = sdckit.individual_risk(d, keys, **kw)
    pram = {} if empty else dict.fromkeys(keys, 1.0)
    res = sdckit.individual_risk(d, keys, pram=pram, **kw)
    np.testing.assert_array_equal(res.risk, naive.risk)
    np.testing.assert_array_equal(res.household_risk, naive.household_risk)
    assert res.global_risk == naive.global_risk
    assert res.threshold(0.05).threshold == naive.threshold(0.05).threshold
    assert res.pram_adjusted == (() if empty else tuple(keys))


@SETTINGS
@given(tables(), st.data())
def test_row_order_and_relabelling_do_not_matter(t, data):
    """Permuting the rows permutes the risks; renaming the categories of the data and of the
    diagonal alike changes nothing."""
    d, keys, alpha = t
    pram = _random_diagonal(d, keys, data.draw)
    kw = dict(weight="w", estimation={"alpha": alpha}, allow_degenerate_keys=True)
    res = sdckit.individual_risk(d, keys, pram=pram, **kw)
    perm = np.array(data.draw(st.permutations(range(d.height))), dtype=np.int64)
    shuffled = sdckit.individual_risk(d[perm], keys, pram=pram, **kw)
    np.testing.assert_allclose(shuffled.risk, res.risk[perm], rtol=1e-12)
    renamed = d.with_columns([pl.col(k).str.replace("c", "level-") for k in keys])
    pram2 = {k: {c.replace("c", "level-"): p for c, p in v.items()} for k, v in pram.items()}
    relabelled = sdckit.individual_risk(renamed, keys, pram=pram2, **kw)
    np.testing.assert_allclose(relabelled.risk, res.risk, rtol=1e-12)


def test_duckdb_engine_gives_the_in_memory_result(tmp_path):
    """The adjustment works on the out-of-core engines (per key pattern, before the household
    risk is computed in the engine)."""
    from conftest import DATA

    d = pl.read_csv(DATA / "sdcmicro" / "testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    out = sdckit.pram(d, ["water", "roof"], seed=1)
    path = tmp_path / "released.parquet"
    out.data.write_parquet(path)
    kw = dict(weight="sampling_weight", household="ori_hid", pram=out.details["pram_diagonal"])
    mem = sdckit.individual_risk(out.data, keys, **kw)
    duck = sdckit.individual_risk(path, keys, engine="duckdb", **kw)
    naive = sdckit.individual_risk(out.data, keys, weight="sampling_weight", household="ori_hid")
    assert mem.global_risk < naive.global_risk
    assert duck.pram_adjusted == mem.pram_adjusted == ("roof", "water")
    assert duck.global_risk == pytest.approx(mem.global_risk, rel=1e-12)
    assert duck.household_global_risk == pytest.approx(mem.household_global_risk, rel=1e-12)
    assert duck.threshold(0.001).n_unsafe == mem.threshold(0.001).n_unsafe
    assert duck.to_dict()["pram_adjusted"] == ["roof", "water"]


# ----------------------------------------------------------------------------------------------
# simulation on a population with known truth
# ----------------------------------------------------------------------------------------------
LEVELS = (12, 8, 5)
NAMES = ("a", "b", "c")
PI = 0.1
#: the published PRAM matrices (rows: true category, columns: released one): diagonal d,
#: the rest of each row spread evenly; a and b are PRAMed, c is not
KEEP = {"a": 0.8, "b": 0.85}


def _matrix(levels: int, keep: float) -> np.ndarray:
    P = np.full((levels, levels), (1.0 - keep) / (levels - 1))
    np.fill_diagonal(P, keep)
    return P


def _population(rng) -> np.ndarray:
    """Cell counts F of a 12 x 8 x 5 population of about 40,000 units: Poisson counts around a
    log-linear model with geometric (skewed) margins and an a x b interaction, so that many
    cells are small (about 90 cells with 1 <= F <= 3, some empty) and a few are large."""
    margins = [0.7 ** np.arange(12), 0.6 ** np.arange(8), 0.5 ** np.arange(5)]
    lam = margins[0][:, None, None] * margins[1][None, :, None] * margins[2][None, None, :]
    lam = lam * np.exp(0.8 * np.cos(0.9 * np.arange(12)[:, None] + np.arange(8)[None, :]))[:, :, None]
    return rng.poisson(40_000 * lam / lam.sum())


def _categories(j: int) -> list[str]:
    return [f"{NAMES[j]}{i}" for i in range(LEVELS[j])]


def _frame(codes: np.ndarray) -> pl.DataFrame:
    """Records with these key codes, as a table with declared categories (every level)."""
    cols = {
        name: pl.Series(np.asarray(_categories(j))[codes[:, j]], dtype=pl.Enum(_categories(j)))
        for j, name in enumerate(NAMES)
    }
    return pl.DataFrame(cols).with_columns(w=pl.lit(1.0 / PI))


def _codes(frame: pl.DataFrame) -> np.ndarray:
    return np.stack([frame[name].to_physical().to_numpy().astype(np.int64) for name in NAMES], axis=1)


def _tau2_truth(F: np.ndarray, su_cells: np.ndarray) -> float:
    """tau_2's truth: sum over the released sample-unique cells k of P(correct | SU in k).

    Each unit of true cell j is sampled with probability pi and, independently, released in
    cell k with probability M_kj = prod_v P^(v)[j_v, k_v] (P^(c) = I). Given exactly one
    sampled record released in k, it comes from true cell j with probability proportional to
    F_j pi M_kj / (1 - pi M_kj) (Poisson approximation of the other units of j not being
    released in k); it is correctly matched only if j = k and the intruder, who picks one of the
    F_k units with key k, picks it: probability 1 / F_k. Hence
    P(correct | SU in k) = [pi M_kk / (1 - pi M_kk)] / sum_j F_j pi M_kj / (1 - pi M_kj)
    (Shlomo & Skinner 2010, corrected form), with the TRUE population counts F."""
    M = np.kron(np.kron(_matrix(12, KEEP["a"]).T, _matrix(8, KEEP["b"]).T), np.eye(5))  # M[k, j]
    Fv = F.ravel()
    odds = PI * M / (1.0 - PI * M)
    den = odds[su_cells] @ Fv
    return float(np.sum(np.diag(odds)[su_cells] / den))


def _replicate(F: np.ndarray, units: np.ndarray, seed: int) -> dict:
    """One Bernoulli sample (pi = 0.1) of the population, PRAMed by sdckit.pram with the
    published matrices, and the naive and adjusted risks against their truth."""
    rng = np.random.default_rng(seed)
    true = units[rng.random(len(units)) < PI]
    sample = _frame(true)
    matrices = {n: (_matrix(LEVELS[j], KEEP[n]), _categories(j)) for j, n in enumerate(NAMES) if n in KEEP}
    out = sdckit.pram(sample, list(KEEP), matrix=matrices, seed=seed)
    released = _codes(out.data)
    n = len(released)
    cell = np.ravel_multi_index(released.T, LEVELS)
    # Truth of the individual risk: the intruder matches record i (released key k_i) to one of
    # the F_{k_i} population units whose TRUE key is k_i, uniformly; the match is correct iff
    # the record's own unit is among them, i.e. iff its true key equals the released one, with
    # probability 1 / F_{k_i}. Expected correct matches = sum_i 1(x_i = x~_i) / F_{k_i}
    # (F_{k_i} >= 1 whenever the indicator is 1); the global truth divides by n.
    kept = (released == true).all(axis=1)
    truth = float(np.sum(kept / np.maximum(F.ravel()[cell], 1))) / n
    keys = list(NAMES)
    pram = out.details["pram_diagonal"]
    naive = sdckit.individual_risk(out.data, keys, weight="w")
    adjusted = sdckit.individual_risk(out.data, keys, weight="w", pram=pram)
    loglinear = sdckit.loglinear_risk(out.data, keys, sampling_fraction=PI, pram=pram)
    fk = np.bincount(cell, minlength=F.size)
    return {
        "truth": truth,
        "naive": naive.global_risk,
        "adjusted": adjusted.global_risk,
        "tau2_truth": _tau2_truth(F, np.flatnonzero(fk == 1)),
        "tau2_naive": loglinear.tau2,
        "tau2_adjusted": loglinear.pram["tau2"],
    }


def _mae(rows: list, estimate: str, truth: str) -> float:
    return float(np.mean([abs(r[estimate] - r[truth]) for r in rows]))


def test_simulation_adjusted_risk_is_closer_to_the_truth():
    """Over 30 seeded replicates, the PRAM-adjusted global risk (individual_risk(pram=)) and
    the PRAM-adjusted log-linear tau_2 (loglinear_risk(pram=)) are closer to the truth than the
    naive ones: their mean absolute error is less than half of the naive one.

    The naive risk treats the released keys as true: records that PRAM moved into small cells
    look risky although an intruder matching them on the released key never finds the right
    unit."""
    F = _population(np.random.default_rng(26))
    units = np.stack(np.unravel_index(np.repeat(np.arange(F.size), F.ravel()), LEVELS), axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sdckit.SdcWarning)
        rows = [_replicate(F, units, seed) for seed in range(30)]
    naive, adjusted = _mae(rows, "naive", "truth"), _mae(rows, "adjusted", "truth")
    truth = np.mean([r["truth"] for r in rows])
    assert adjusted < 0.5 * naive, (
        f"global risk: mean truth {truth:.5f}, mean absolute error naive {naive:.5f}, adjusted {adjusted:.5f}"
    )
    tau_naive, tau_adjusted = _mae(rows, "tau2_naive", "tau2_truth"), _mae(rows, "tau2_adjusted", "tau2_truth")
    tau_truth = np.mean([r["tau2_truth"] for r in rows])
    assert tau_adjusted < 0.5 * tau_naive, (
        f"tau_2: mean truth {tau_truth:.3f}, mean absolute error naive {tau_naive:.3f}, adjusted {tau_adjusted:.3f}"
    )
