"""Rank swapping (Moore 1996; sdcMicro's rankSwap): partners within the swap range, values
permuted (pooled tails replaced by their mean), the range derived from R0 and K0 by hand, the
swap process against an exact enumeration, seeds, missing values, strata, bad input and the
properties every protection method keeps."""

from __future__ import annotations

import importlib.util
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import sdckit
from sdckit._core import rank_swap as rank_swap_core
from sdckit._core.rank_swap import pool_counts, pool_tails, range_from_k0, range_from_r0, swap_partners
from sdckit.protect.rank_swap import rank_swap


def _ranks_desc(x: np.ndarray) -> np.ndarray:
    """Rank of each value, 0 = largest (values distinct)."""
    r = np.empty(x.size, dtype=np.int64)
    r[np.argsort(-x, kind="stable")] = np.arange(x.size)
    return r


def _partners(before: np.ndarray, after: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The record whose original value each record received (values distinct), for ``rows``
    (-1 elsewhere)."""
    where = {v: i for i, v in enumerate(before.tolist())}
    out = np.full(before.size, -1)
    out[rows] = [where[v] for v in after[rows].tolist()]
    return out


# ----------------------------------------------------------------------------------------------
# the swap process
# ----------------------------------------------------------------------------------------------
def _exact_pairings(m: int, width: int) -> dict:
    """Probability of every final partner vector, by enumerating the process: rank i, if not
    swapped, takes a partner uniformly among the free ranks in (i, i + width] (the oracle)."""
    out: dict = {}

    def walk(i, partner, prob):
        if i == m:
            out[tuple(partner)] = out.get(tuple(partner), 0) + prob
            return
        if partner[i] != -1:
            return walk(i + 1, partner, prob)
        free = [j for j in range(i + 1, min(i + width, m - 1) + 1) if partner[j] == -1]
        if not free:
            partner[i] = i
            walk(i + 1, partner, prob)
            partner[i] = -1
            return
        for j in free:
            partner[i], partner[j] = j, i
            walk(i + 1, partner, prob / len(free))
            partner[i] = partner[j] = -1

    walk(0, [-1] * m, Fraction(1))
    return out


@pytest.mark.parametrize("listing", [False, True])
@pytest.mark.parametrize(("m", "width"), [(5, 2), (7, 3), (6, 5)])
def test_swap_process_matches_the_exact_distribution(m, width, listing, monkeypatch):
    """20,000 runs against the enumerated probabilities: chi-square goodness of fit (p > 1e-4),
    for the draws by rejection and (share 0: always) by listing the free ranks."""
    if listing:
        monkeypatch.setattr(rank_swap_core, "_REJECTION_SHARE", 0)
    exact = _exact_pairings(m, width)
    rng = np.random.default_rng(2024)
    counts = Counter(tuple(swap_partners(m, width, rng).tolist()) for _ in range(20_000))
    assert set(counts) <= set(exact)
    keys = sorted(exact)
    observed = np.array([counts.get(k, 0) for k in keys])
    expected = np.array([float(exact[k]) for k in keys]) * 20_000
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_rejection_and_listing_agree_in_the_tail():
    """Large windows (the candidates listed when free ranks are rare) stay an involution within
    the width on 10^5 ranks."""
    rng = np.random.default_rng(3)
    for width in (1, 7, 500, 99_999):
        p = swap_partners(100_000, width, rng)
        assert np.array_equal(p[p], np.arange(p.size))
        assert np.abs(p - np.arange(p.size)).max() <= width


# ----------------------------------------------------------------------------------------------
# swap range, pooling and the range formulas
# ----------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 300),
    swap_range=st.floats(0, 100),
    top=st.sampled_from([0, 5, 12.5]),
    bottom=st.sampled_from([0, 5, 20]),
    seed=st.integers(0, 2**32),
)
def test_partners_within_the_swap_range(n, swap_range, top, bottom, seed):
    """Every record receives the value of a record whose rank among the non-pooled values is
    within W = floor(P m' / 100) of its own; swaps are mutual; pooled values are the mean of
    their tail; the multiset of the non-pooled values is kept."""
    x = np.random.default_rng(seed).permutation(n).astype(float) * 1.5 + 0.25  # distinct
    res = rank_swap(pl.DataFrame({"x": x}), "x", swap_range=swap_range, top_percent=top, bottom_percent=bottom, seed=1)
    out = res.data["x"].to_numpy()
    n_top, n_bottom = math.floor(n * top / 100 + 1e-9), math.floor(n * bottom / 100 + 1e-9)
    ranks = _ranks_desc(x)
    pooled_top, pooled_bottom = ranks < n_top, ranks >= n - n_bottom
    middle = ~(pooled_top | pooled_bottom)
    m = int(middle.sum())
    width = math.floor(swap_range * m / 100 + 1e-9)
    assert res.details["window"]["x"] == width
    if n_top:
        np.testing.assert_allclose(out[pooled_top], x[pooled_top].mean(), rtol=1e-14)
    if n_bottom:
        np.testing.assert_allclose(out[pooled_bottom], x[pooled_bottom].mean(), rtol=1e-14)
    assert sorted(out[middle]) == sorted(x[middle])
    rows = np.flatnonzero(middle)
    partner = _partners(x, out, rows)
    assert np.array_equal(partner[partner[rows]], rows)  # mutual
    assert np.all(np.abs(ranks[rows] - ranks[partner[rows]]) <= width)
    assert res.details["n_swapped"]["x"] == int(np.count_nonzero(partner[rows] != rows))
    assert res.details["n_pooled"]["x"] == {"top": n_top, "bottom": n_bottom}


def test_without_pooling_the_values_are_a_permutation():
    rng = np.random.default_rng(1)
    df = pl.DataFrame({"a": rng.gamma(2, 10, 5000), "b": rng.integers(0, 20, 5000)})
    res = rank_swap(df, ["a", "b"], top_percent=0, bottom_percent=0, seed=3)
    for v in ("a", "b"):
        assert sorted(res.data[v].to_list()) == sorted(df[v].to_list())
    assert res.data["b"].dtype == pl.Int64  # integers swapped stay integers
    assert res.n_changed["a"] == 5000  # the window (R0 = 0.95) holds a partner for all but a few


def test_pooling_by_hand():
    """x = 1..20, top and bottom 10 %: 2 values each; 20, 19 -> 19.5 and 2, 1 -> 1.5; with
    swap_range 0 nothing else changes."""
    x = np.arange(1.0, 21.0)
    res = rank_swap(pl.DataFrame({"x": x}), "x", swap_range=0, top_percent=10, bottom_percent=10, seed=0)
    expected = x.copy()
    expected[[18, 19]] = 19.5
    expected[[0, 1]] = 1.5
    np.testing.assert_array_equal(res.data["x"].to_numpy(), expected)
    assert res.n_changed["x"] == 4 and res.details["n_swapped"]["x"] == 0
    assert any("less than one rank" in n for n in res.notes)


def test_pool_kernel_thresholds():
    """Thresholds of D: the smallest pooled top value, the largest pooled bottom value; the
    extreme values when nothing is pooled."""
    v = np.array([9.0, 7.0, 6.0, 4.0, 2.0, 1.0])  # sorted, largest first
    out, top_value, bottom_value = pool_tails(v, 2, 1)
    np.testing.assert_array_equal(out, [8.0, 8.0, 6.0, 4.0, 2.0, 1.0])
    assert (top_value, bottom_value) == (7.0, 1.0)
    assert pool_tails(v, 0, 0)[1:] == (9.0, 1.0)
    assert pool_counts(100, 5, 5) == (5, 5) and pool_counts(19, 5, 5) == (0, 0) and pool_counts(7, 50, 50) == (3, 3)


def test_range_from_r0_and_k0_by_hand():
    """x = 1..10, top and bottom 10 % (one value each): thresholds 10 and 1, D = 9; the values
    left 2..9 have mean 5.5 and variance (denominator 8) 2 (12.25 + 6.25 + 2.25 + 0.25) / 8
    = 5.25.
    R0 = 0.95: P = sqrt(2 * 5.25 * 0.05) / 9 = sqrt(0.525) / 9 = 0.0805076 (8.05076 %);
    K0 = 0.1: P = sqrt(8/3) * 0.1 * 5.5 / 9 = 0.0997940 (9.97940 %)."""
    middle = np.arange(2.0, 10.0)
    assert range_from_r0(middle, 0.95, 10.0, 1.0) == pytest.approx(0.0805076, abs=5e-8)
    assert range_from_k0(middle, 0.1, 10.0, 1.0) == pytest.approx(0.0997940, abs=5e-8)
    df = pl.DataFrame({"x": np.arange(10.0, 0.0, -1.0)})
    kw = {"top_percent": 10, "bottom_percent": 10, "seed": 1}
    assert rank_swap(df, "x", r0=0.95, **kw).details["swap_range"]["x"] == pytest.approx(8.05076, abs=5e-6)
    assert rank_swap(df, "x", **kw).details["swap_range"]["x"] == pytest.approx(8.05076, abs=5e-6)  # default R0
    assert rank_swap(df, "x", k0=0.1, **kw).details["swap_range"]["x"] == pytest.approx(9.97940, abs=5e-6)


def test_range_without_pooling_and_constant_values():
    """No pooling: D = max - min = 9 over 1..10, mean 5.5, variance 8.25:
    R0 = 0.9: sqrt(2 * 8.25 * 0.1) / 9 = sqrt(1.65) / 9 = 0.1427248. Constant values: D = 0,
    no range, no swap."""
    df = pl.DataFrame({"x": np.arange(1.0, 11.0), "c": np.full(10, 3.0)})
    res = rank_swap(df, ["x", "c"], r0=0.9, top_percent=0, bottom_percent=0, seed=1)
    assert res.details["swap_range"]["x"] == pytest.approx(14.27248, abs=5e-6)
    assert res.details["window"]["x"] == 1  # floor(0.1427248 * 10)
    assert res.details["swap_range"]["c"] == 0.0 and res.n_changed["c"] == 0


# ----------------------------------------------------------------------------------------------
# seeds, missing values, strata
# ----------------------------------------------------------------------------------------------
def test_same_seed_same_output_other_seed_other_output():
    rng = np.random.default_rng(5)
    df = pl.DataFrame({"a": rng.normal(size=2000), "b": rng.gamma(2, 3, 2000)})
    r1 = rank_swap(df, ["a", "b"], seed=77)
    assert rank_swap(df, ["a", "b"], seed=77).data.equals(r1.data)
    assert not rank_swap(df, ["a", "b"], seed=78).data.equals(r1.data)
    assert rank_swap(df, **r1.parameters).data.equals(r1.data)  # replayable from the log
    fresh = rank_swap(df, "a")
    assert isinstance(fresh.parameters["seed"], int)
    assert rank_swap(df, **fresh.parameters).data.equals(fresh.data)


def test_missing_values_stay_and_take_no_part():
    x = np.arange(1.0, 101.0)
    x[::10] = np.nan
    y = np.arange(1.0, 101.0)
    y[::9] = -999.0
    df = pl.DataFrame({"x": x, "y": y}).with_columns(pl.col("x").fill_nan(None))
    res = rank_swap(df, ["x", "y"], missing=-999, swap_range=20, top_percent=0, bottom_percent=0, seed=4)
    assert res.data["x"].is_null().to_list() == df["x"].is_null().to_list()
    out_y = res.data["y"].to_numpy()
    assert np.array_equal(out_y[::9], y[::9])
    keep = np.ones(100, dtype=bool)
    keep[::9] = False
    assert sorted(out_y[keep]) == sorted(y[keep])
    assert res.details["window"]["y"] == math.floor(0.2 * keep.sum())


def test_strata_are_swapped_separately():
    rng = np.random.default_rng(6)
    s = rng.choice(["a", "b", "c"], 3000)
    x = rng.normal(size=3000) + np.where(s == "b", 100.0, 0.0)
    df = pl.DataFrame({"x": x, "s": s})
    res = rank_swap(df, "x", strata="s", swap_range=30, top_percent=0, bottom_percent=0, seed=8)
    out = res.data["x"].to_numpy()
    for label in ("a", "b", "c"):
        rows = s == label
        assert sorted(out[rows]) == sorted(x[rows])  # values never leave their stratum
        assert res.details["window"]["x"][label] == math.floor(0.3 * rows.sum())
    assert sum(d["x"] for d in res.n_changed_by_stratum.values()) == res.n_changed["x"]


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"swap_range": 5, "r0": 0.9}, r"swap_range, r0: 2 given; expected at most one"),
        ({"r0": 0.9, "k0": 0.1}, r"r0, k0: 2 given"),
        ({"swap_range": 5, "r0": 0.9, "k0": 0.1}, r"swap_range, r0, k0: 3 given"),
        ({"variables": ["x", "t"]}, r"variables: t not numeric; expected numeric"),
        ({"top_percent": 101}, r"top_percent: got 101; expected a number in \[0, 100\]"),
        ({"bottom_percent": -1}, r"bottom_percent: got -1"),
        ({"top_percent": 60, "bottom_percent": 50}, r"top_percent, bottom_percent: 60 \+ 50 > 100"),
        ({"swap_range": 150}, r"swap_range: got 150"),
        ({"r0": 1.2}, r"r0: got 1.2; expected a number in \[0, 1\]"),
        ({"k0": -0.5}, r"k0: got -0.5; expected a number >= 0"),
        ({"seed": -1}, r"seed: got -1"),
        ({"variables": ["x", "i"]}, r"variables: i hold infinite values"),
    ],
)
def test_bad_input(kwargs, message):
    df = pl.DataFrame({"x": [1.0, 2.0, 3.0], "t": ["a", "b", "c"], "i": [1.0, -math.inf, 0.0]})
    kw = {"variables": "x", **kwargs}
    with pytest.raises(sdckit.SdcError, match=message):
        rank_swap(df, **kw)


# ----------------------------------------------------------------------------------------------
# properties
# ----------------------------------------------------------------------------------------------
frames = st.integers(2, 40).flatmap(
    lambda n: st.fixed_dictionaries(
        {
            "x": st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False)), min_size=n, max_size=n),
            "y": st.lists(st.one_of(st.none(), st.integers(-5, 5)), min_size=n, max_size=n),
            "s": st.lists(st.sampled_from(["p", "q"]), min_size=n, max_size=n),
            "z": st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n),
        }
    )
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cols=frames, seed=st.integers(0, 2**32), use_strata=st.booleans(), swap_range=st.floats(0, 100))
def test_properties(cols, seed, use_strata, swap_range):
    """Input not mutated; rows, columns, column order and types kept; other columns unchanged;
    missing stays missing; without pooling each variable's values are permuted; same seed, same
    output; n_changed counts the changed cells."""
    df = pl.DataFrame(cols, schema={"x": pl.Float64, "y": pl.Int64, "s": pl.String, "z": pl.Float64})
    copy = df.clone()
    kw = {"strata": "s"} if use_strata else {}
    res = rank_swap(df, ["x", "y"], swap_range=swap_range, top_percent=0, bottom_percent=0, seed=seed, **kw)
    assert df.equals(copy)
    out = res.data
    assert out.columns == df.columns and out.schema == df.schema and out.height == df.height
    assert out.select("s", "z").equals(df.select("s", "z"))
    for v in ("x", "y"):
        assert out[v].is_null().to_list() == df[v].is_null().to_list()
        assert sorted(out[v].drop_nulls().to_list()) == sorted(df[v].drop_nulls().to_list())
        assert res.n_changed[v] == int((out[v] != df[v]).fill_null(False).sum())
    again = rank_swap(df, ["x", "y"], swap_range=swap_range, top_percent=0, bottom_percent=0, seed=seed, **kw)
    assert again.data.equals(out)


# ----------------------------------------------------------------------------------------------
# the faster loops against the plain one (the oracle): the same partners from the same draws
# ----------------------------------------------------------------------------------------------
def _same_partners_and_draws(fast, m, width, seed):
    """``fast`` gives the partners of :func:`swap_partners` and leaves the generator where it
    does (the next variable's draws depend on it)."""
    slow_rng, fast_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    expected = swap_partners(m, width, slow_rng)
    got = fast(m, width, fast_rng)
    assert np.array_equal(got, expected), (m, width, seed)
    assert fast_rng.random() == slow_rng.random(), (m, width, seed)


def _jit_loop():
    pytest.importorskip("numba", reason="the compiled loop needs Numba (pip install 'sdckit[fast]')")
    from sdckit._core import _rank_swap_jit

    block = rank_swap_core._BLOCK
    return lambda m, width, rng: _rank_swap_jit.swap_partners_jit(
        m, width, rng, rank_swap_core._REJECTION_SHARE, min(block, 2 * m + 64)
    )


CASES = [(2, 1), (3, 1), (3, 2), (6, 5), (7, 3), (50, 1), (50, 2), (100, 98), (100, 99), (1000, 999)]
CASES += [(5000, 300), (100_000, 6822), (100_000, 1), (140_000, 70_000), (300_000, 20)]


@pytest.mark.parametrize(("m", "width"), CASES)
def test_fast_loop_equals_the_plain_one(m, width):
    """Windows of one rank, of all ranks, cut at the end, and several blocks of draws (m = 3 x
    10^5 takes ten blocks of 65,536)."""
    for seed in (0, 1):
        _same_partners_and_draws(rank_swap_core.swap_partners_fast, m, width, seed)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 400), width_share=st.floats(0, 1.2), seed=st.integers(0, 2**32), listing=st.booleans())
def test_fast_loop_equals_the_plain_one_everywhere(m, width_share, seed, listing):
    """Any size and width (up to beyond the last rank), by rejection or (share 0) always by
    listing the free ranks."""
    width = int(width_share * m)
    share = 0 if listing else rank_swap_core._REJECTION_SHARE
    saved = rank_swap_core._REJECTION_SHARE
    rank_swap_core._REJECTION_SHARE = share
    try:
        _same_partners_and_draws(rank_swap_core.swap_partners_fast, m, width, seed)
    finally:
        rank_swap_core._REJECTION_SHARE = saved


@pytest.mark.parametrize(("m", "width"), CASES)
def test_compiled_loop_equals_the_plain_one(m, width):
    jit = _jit_loop()
    for seed in (0, 1):
        _same_partners_and_draws(jit, m, width, seed)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(0, 400), width_share=st.floats(0, 1.2), seed=st.integers(0, 2**32))
def test_compiled_loop_equals_the_plain_one_everywhere(m, width_share, seed):
    _same_partners_and_draws(_jit_loop(), m, int(width_share * m), seed)


def test_rank_order_with_and_without_ties():
    """The unstable sort is taken only without ties; with ties the order is the stable one
    (ties by position), as the plain stable sort gives it."""
    from sdckit.protect.rank_swap import _rank_order

    rng = np.random.default_rng(9)
    for v in (rng.normal(size=5000), rng.integers(0, 30, 5000).astype(float), np.array([0.0, -0.0, 1.0, 0.0])):
        assert np.array_equal(_rank_order(v), np.argsort(-v, kind="stable"))


def test_the_same_file_whichever_loop(monkeypatch):
    """rank_swap gives the same file by the plain, the fast and (when installed) the compiled
    loop: two variables and strata, so the later swaps depend on where the generator was left."""
    rng = np.random.default_rng(12)
    df = pl.DataFrame(
        {"a": rng.gamma(2, 10, 30_000), "b": rng.normal(size=30_000), "s": rng.choice(["p", "q"], 30_000)}
    )
    loops = {"plain": rank_swap_core.swap_partners, "fast": rank_swap_core.swap_partners_fast}
    if importlib.util.find_spec("numba") is not None:
        loops["compiled"] = _jit_loop()
    files = {}
    for name, loop in loops.items():
        monkeypatch.setattr(rank_swap_core, "_best_partners", loop)
        files[name] = rank_swap(df, ["a", "b"], strata="s", seed=5).data
    for name, out in files.items():
        assert out.equals(files["plain"]), name


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([2.0**480, -(2.0**600), 0.0])),
        max_size=30,
    )
)
def test_common_scale_without_copies_equals_the_direct_rule(values):
    """The scale of the continuous methods (a power of two when the largest finite magnitude
    reaches 2^480, else 1), now read from the maximum and minimum: the rule written directly.
    Values from 2^1023 on take 2^1023 (2^1024 is not a float: an OverflowError before)."""
    from sdckit.protect._common import common_scale

    X = np.array(values, dtype=float)
    finite = np.abs(X[np.isfinite(X)])
    top = float(finite.max()) if finite.size else 0.0
    expected = math.ldexp(1.0, min(math.frexp(top)[1], 1023)) if top >= 2.0**480 else 1.0  # 2^1024 overflows
    assert common_scale(X) == expected
    assert common_scale(X.reshape(-1, 1)) == expected


def test_notes_count_strata_rather_than_name_them():
    """A stratum's label can identify: a note says how many strata, never which (issue 36)."""
    d = pl.DataFrame({"reg": ["Zorglub"] * 5 + ["Quuxville"] * 20, "x": np.arange(25.0)})
    notes = sdckit.rank_swap(d, ["x"], strata=["reg"], swap_range=1, seed=1).notes
    assert notes == ("x in 2 strata: the swap range covers less than one rank; no value swapped",)
