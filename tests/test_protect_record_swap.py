"""Targeted record swapping of households (sdcMicro ``recordSwap``): the kernels against
brute-force oracles and hand calculations, and the defining properties on a seeded synthetic
population (random swaps cannot be matched value by value with R): household size and
composition kept, only the geography and carry-along columns change, pairs exchange their
geography, risky households (by k-anonymity, counted by brute force here) are swapped across
the level where they are risky, the swap rate is reached, seeds reproduce, bad input."""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit import SdcError
from sdckit._core.record_swap import (
    DonorIndex,
    dense_ids,
    first_risky_level,
    household_layout,
    lowest_quotas,
    n_varying,
    plan_swaps,
    row_ids,
    source_rows,
    split_units,
    stochastic_round,
    weighted_order,
)
from sdckit.protect.record_swap import record_swap

KEYS = ["agegroup", "gender", "citizenship"]
GEO = ["region", "district"]


# ----------------------------------------------------------------------------------------------
# a seeded synthetic population
# ----------------------------------------------------------------------------------------------
def population(n_households: int = 1500, seed: int = 0, n_regions: int = 4, shuffle: bool = True) -> pl.DataFrame:
    """Households in regions and districts (3-6 per region, codes unique across regions),
    of 1-6 persons with an age group, gender and citizenship (a rare category makes some
    households risky); household-level tenure and income; person-level income. Records of a
    household are scattered (rows shuffled) so that nothing relies on contiguous households."""
    rng = np.random.default_rng(seed)
    H = n_households
    region = rng.integers(0, n_regions, H)
    n_districts = rng.integers(3, 7, n_regions)
    district_no = (rng.random(H) * n_districts[region]).astype(int)
    size = rng.choice(np.arange(1, 7), p=[0.3, 0.3, 0.17, 0.13, 0.07, 0.03], size=H)
    h = np.repeat(np.arange(H), size)
    n = h.size
    df = pl.DataFrame(
        {
            "hid": h + 1000,
            "region": [f"R{r}" for r in region[h]],
            "district": [f"R{r}-D{d}" for r, d in zip(region[h], district_no[h])],
            "agegroup": rng.integers(0, 8, n),
            "gender": rng.choice(["f", "m"], n),
            "citizenship": rng.choice(["AT", "EU", "Other"], p=[0.9, 0.08, 0.02], size=n),
            "tenure": rng.choice(["own", "rent"], H)[h],
            "hh_income": np.round(rng.lognormal(10, 1, H), 2)[h],
            "income": np.round(rng.lognormal(9, 1, n), 2),
            "hid_copy": h + 1000,
        }
    )
    if shuffle:
        df = df[rng.permutation(n)]
    return df


def brute_force_risky(df: pl.DataFrame, keys, geography, k: int) -> np.ndarray:
    """Per record, the first level at which its household has a member whose keys are shared
    by fewer than k records of the unit (len(geography) when none): counted directly."""
    levels = []
    for g in geography:
        cnt = df.select(pl.len().over([*keys, g]).alias("c"), pl.col("hid"))
        hh_min = cnt.group_by("hid").agg(pl.col("c").min().alias("m"))
        levels.append(df.select("hid").join(hh_min, on="hid", how="left")["m"].to_numpy() < k)
    risky = np.column_stack(levels)
    return np.where(risky.any(axis=1), risky.argmax(axis=1), len(geography))


def by_household(df: pl.DataFrame, cols) -> dict:
    """hid -> tuple of the (household-level) columns."""
    first = df.group_by("hid", maintain_order=True).first()
    return {r[0]: tuple(r[1:]) for r in first.select(["hid", *cols]).iter_rows()}


@pytest.fixture(scope="module")
def pop():
    return population()


@pytest.fixture(scope="module")
def swapped(pop):
    return record_swap(pop, KEYS, household="hid", geography=GEO, carry_along=["tenure", "hid_copy"], seed=11)


# ----------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------
def _brute_first(order_hh, values, units, used, value, unit):
    """The first household (in donor order) of the given profile value, not used, outside
    the unit: a linear scan."""
    for h in order_hh:
        if values[h] == value and not used[h] and units[h] != unit:
            return h
    return -1


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_donor_index_matches_a_linear_scan(seed):
    """Random households (few profiles, few units, some of weight 0) and a random sequence of
    queries and uses: the index returns exactly what a linear scan of the donor order does."""
    rng = np.random.default_rng(seed)
    H = int(rng.integers(1, 60))
    unit = rng.integers(0, 4, H)
    profile = rng.integers(0, 3, H)
    key = rng.exponential(size=H)
    key[rng.random(H) < 0.15] = np.inf  # weight 0: never a donor
    idx = DonorIndex(unit, key, profile)
    order = [h for h in np.argsort(key, kind="stable") if np.isfinite(key[h])]
    used = bytearray(H)
    for _ in range(3 * H):
        v, u = int(rng.integers(0, 3)), int(rng.integers(0, 4))
        s, e = idx.bounds(np.array([v]))
        got = idx.first(s[0], e[0], u, used)
        assert got == _brute_first(order, profile, unit, used, v, u)
        if got >= 0 and rng.random() < 0.7:
            used[got] = 1
        if rng.random() < 0.2:  # households used elsewhere (as requesters)
            used[int(rng.integers(0, H))] = 1


def test_lowest_quotas_hand_calculation():
    """P = 5 swaps over units of 10, 20 and 30 households (H = 60): P n_u / H = 0.833, 1.667,
    2.5 -> floors 0, 1, 2 (sum 3) and remainders 50, 40, 30 (in units of 1/60), summing to 2
    more swaps. Each unit gets its floor or one more, the total is 5, and over many draws a
    unit's mean is P n_u / H (systematic sampling: inclusion probability = remainder)."""
    rng = np.random.default_rng(0)
    draws = np.array([lowest_quotas(np.array([10, 20, 30]), 5, rng) for _ in range(20000)])
    assert (draws.sum(axis=1) == 5).all()
    assert ((draws - [0, 1, 2]) >= 0).all() and ((draws - [0, 1, 2]) <= 1).all()
    np.testing.assert_allclose(draws.mean(axis=0), [5 / 6, 10 / 6, 2.5], atol=0.02)  # ~6 standard errors
    assert lowest_quotas(np.array([3, 3]), 0, rng).tolist() == [0, 0]
    assert lowest_quotas(np.array([4, 8]), 3, rng).tolist() == [1, 2]  # exact: 1 and 2, no remainder


def test_stochastic_round_and_weighted_order_frequencies():
    """stochastic_round(2.25) is 3 a quarter of the time; the first item of a weighted order
    with weights 1, 2, 7 is item j with probability w_j / 10 (Efraimidis-Spirakis)."""
    rng = np.random.default_rng(1)
    r = np.array([stochastic_round(2.25, rng) for _ in range(20000)])
    assert set(r.tolist()) == {2, 3}
    assert abs((r == 3).mean() - 0.25) < 0.02
    firsts = np.array([weighted_order(np.arange(3), np.array([1.0, 2.0, 7.0]), rng)[0] for _ in range(20000)])
    np.testing.assert_allclose(np.bincount(firsts, minlength=3) / 20000, [0.1, 0.2, 0.7], atol=0.02)
    assert 0 not in weighted_order(np.arange(3), np.array([0.0, 1.0, 1.0]), rng)[:2]  # weight 0 comes last


def test_household_kernels_hand_calculation():
    """Records of households 2, 0, 2, 1, 0: first records 1, 3, 0 and sizes 2, 1, 2; codes
    5, 5, 5, 6, 7 vary within household 0 only (5 then 7); child unit 3 lies in parents 0 and
    1 (split), child 4 only in parent 1."""
    hh = np.array([2, 0, 2, 1, 0])
    first, size = household_layout(hh, 3)
    assert first.tolist() == [1, 3, 0] and size.tolist() == [2, 1, 2]
    assert n_varying(hh, np.array([5, 5, 5, 6, 7]), first) == 1
    assert n_varying(hh, np.array([5, 7, 5, 6, 7]), first) == 0
    assert split_units(np.array([3, 3, 4, 4]), np.array([0, 1, 1, 1])).tolist() == [3]
    assert dense_ids(np.array([7, 3, 7, 9]))[0].tolist() == [1, 0, 1, 2]
    assert row_ids(np.array([[1, 2], [0, 5], [1, 2]])).tolist() == [1, 0, 1]
    assert first_risky_level(np.array([[False, True], [True, True], [False, False]])).tolist() == [1, 0, 2]
    # household 0 swapped with household 2: its records take record 0's values and vice versa
    assert source_rows(hh, first, np.array([2, -1, 0])).tolist() == [1, 0, 1, 3, 0]


def test_plan_swaps_hand_worked():
    """One level, households 0, 1 in unit 0 and 2, 3 in unit 1, profiles (sizes) 1, 2, 1, 2;
    household 0 risky, swap rate 0 (P = 0): its only donor is household 2 (same profile,
    other unit), and nothing else moves. With household 0 of a profile no one else has
    (5) it finds no donor. With rate 1 (P = 2, one swap per unit) and no risky household,
    both pairs of equal profile across the units are made."""
    units = np.array([[0], [0], [1], [1]])
    w = np.ones((4, 1))
    rng = np.random.default_rng(0)
    plan = plan_swaps(units, w, np.array([0, 1, 1, 1]), np.array([[1], [2], [1], [2]]), 0.0, rng)
    assert plan.partner.tolist() == [2, -1, 0, -1] and plan.requester.tolist() == [0]
    assert plan.target_pairs == 0 and not plan.failed.any() and plan.fill.tolist() == [False]
    plan = plan_swaps(units, w, np.array([0, 1, 1, 1]), np.array([[5], [2], [1], [2]]), 0.0, rng)
    assert plan.partner.tolist() == [-1, -1, -1, -1] and plan.failed.tolist() == [True, False, False, False]
    plan = plan_swaps(units, w, np.array([1, 1, 1, 1]), np.array([[1], [2], [1], [2]]), 1.0, rng)
    assert plan.target_pairs == 2 and plan.partner.tolist() == [2, 3, 0, 1] and plan.fill.all()


# ----------------------------------------------------------------------------------------------
# the defining properties on the synthetic population
# ----------------------------------------------------------------------------------------------
def test_only_geography_and_carry_along_change(pop, swapped):
    """Rows, their order and every other column (hence household size and composition and the
    joint distribution of the other variables) are identical."""
    out = swapped.data
    assert out.shape == pop.shape and out.columns == pop.columns
    others = [c for c in pop.columns if c not in {*GEO, "tenure", "hid_copy"}]
    assert out.select(others).equals(pop.select(others))
    assert swapped.n_changed["district"] > 0 and swapped.n_changed["tenure"] > 0


def test_pairs_exchange_geography_and_carry_along(pop, swapped):
    """hid_copy is carried along, so after the swap it names each household's partner: the
    partner's partner is the household itself, each takes the other's region, district and
    tenure, both have the same size (the default similarity profile), and the district always
    differs (a donor lies in another unit of the level, hence of the finest level)."""
    before = by_household(pop, [*GEO, "tenure"])
    after = by_household(swapped.data, [*GEO, "tenure", "hid_copy"])
    sizes = dict(pop.group_by("hid").len().iter_rows())
    n_pairs = 0
    for h, (*geo_t, partner) in after.items():
        if partner == h:
            assert tuple(geo_t) == before[h]
            continue
        n_pairs += 1
        assert after[partner][-1] == h
        assert tuple(geo_t) == before[partner] and after[partner][:-1] == before[h]
        assert sizes[h] == sizes[partner]
        assert before[h][1] != before[partner][1]
    assert n_pairs == swapped.details["n_swapped_households"] > 0


def test_multisets_of_geography_unchanged(pop, swapped):
    """Households exchange their units, so the households per unit are unchanged at every
    level; with the default similarity (household size) the records per unit too."""
    for g in GEO:
        assert Counter(v[0] for v in by_household(swapped.data, [g]).values()) == Counter(
            v[0] for v in by_household(pop, [g]).values()
        )
        assert Counter(swapped.data[g].to_list()) == Counter(pop[g].to_list())
    joint_before = Counter(pop.select(GEO).iter_rows())
    assert Counter(swapped.data.select(GEO).iter_rows()) == joint_before


def test_risky_households_are_swapped_across_their_level(pop, swapped):
    """Risky households counted by brute force (a household member whose key values are
    shared by fewer than 3 records of the region, or of the district): the counts per level
    are those reported; every risky household is swapped (none lacks a donor here), those
    risky in their region into another region; the non-risky ones are swapped far less."""
    level = brute_force_risky(pop, KEYS, GEO, 3)
    hid = pop["hid"].to_numpy()
    hh_level = dict(zip(hid.tolist(), level.tolist()))
    expected = Counter(hh_level.values())
    d = swapped.details
    assert d["risky_by_level"] == {"region": expected[0], "district": expected[1]}
    assert expected[0] > 0 and expected[1] > 0
    assert d["n_risky_without_donor"] == 0
    before = by_household(pop, GEO)
    after = by_household(swapped.data, GEO)
    moved = {h: after[h] != before[h] for h in before}
    for h, lev in hh_level.items():
        if lev == 0:
            assert after[h][0] != before[h][0]
        if lev < 2:
            assert moved[h]
    share_risky = np.mean([moved[h] for h, lev in hh_level.items() if lev < 2])
    share_other = np.mean([moved[h] for h, lev in hh_level.items() if lev == 2])
    assert share_risky == 1.0 and share_other < 0.5


def test_swap_rate_reached_without_risky_households():
    """k = 1: no household is risky, so exactly the target of 2 P households is swapped, with
    P = H * swap_rate / 2 rounded to a neighbouring integer (H = 2,000, rate 0.1: P = 100)."""
    df = population(2000, seed=3)
    for rate in (0.1, 0.37):
        res = record_swap(df, KEYS, household="hid", geography=GEO, k=1, swap_rate=rate, seed=5)
        d = res.details
        assert sum(d["risky_by_level"].values()) == 0
        P = 2000 * rate / 2
        assert np.floor(P) * 2 <= d["n_swapped_households"] <= np.ceil(P) * 2
        assert d["swapped_random_fill"] == d["n_swapped_households"]
        assert d["swap_rate_reached"] == d["n_swapped_households"] / 2000 == d["target_swap_rate"]


def test_swap_rate_counts_risky_households_and_tops_up(swapped):
    """With risky households the rate is at least the target; they count towards it. Here
    (k = 3) the risky households alone exceed the 5 % target, so no random household is added;
    with k = 2 and a 30 % rate both kinds are swapped and the target is still reached."""
    d = swapped.details
    assert d["swap_rate_reached"] >= d["target_swap_rate"] > 0
    assert d["swapped_random_fill"] == 0
    assert d["n_swapped_households"] == sum(d["swapped_by_level"].values()) + d["swapped_random_fill"]
    assert d["n_swapped_records"] == len(d["swapped_rows"])
    mixed = record_swap(population(2000, seed=7), KEYS, household="hid", geography=GEO, k=2, swap_rate=0.3, seed=1)
    m = mixed.details
    assert sum(m["swapped_by_level"].values()) > 0 and m["swapped_random_fill"] > 0
    assert m["n_fill_without_donor"] == 0 and m["n_risky_without_donor"] == 0
    assert m["swap_rate_reached"] >= m["target_swap_rate"] - 1e-12


def test_swap_rate_zero_and_one():
    df = population(300, seed=4)
    none = record_swap(df, KEYS, household="hid", geography=GEO, k=1, swap_rate=0.0, seed=1)
    assert none.details["n_swapped_households"] == 0 and none.data.equals(df)
    assert none.n_changed_total == 0
    full = record_swap(df, KEYS, household="hid", geography=GEO, k=1, swap_rate=1.0, seed=1)
    assert full.details["swap_rate_reached"] > 0.9  # all but households without a same-size donor


def test_swapped_rows_are_the_changed_records(pop, swapped):
    changed = (swapped.data["district"] != pop["district"]).to_numpy()
    assert np.flatnonzero(changed).tolist() == swapped.details["swapped_rows"].tolist()
    assert "swapped_rows" not in swapped.to_dict()["details"]


def test_same_seed_same_output_other_seed_differs(pop, swapped):
    again = record_swap(pop, KEYS, household="hid", geography=GEO, carry_along=["tenure", "hid_copy"], seed=11)
    assert again.data.equals(swapped.data) and again.to_dict() == swapped.to_dict()
    other = record_swap(pop, KEYS, household="hid", geography=GEO, carry_along=["tenure", "hid_copy"], seed=12)
    assert not other.data.equals(swapped.data)


def test_replay_from_parameters(pop, swapped):
    """The recorded parameters replay the step exactly; a fresh seed is recorded."""
    assert record_swap(pop, **swapped.parameters).data.equals(swapped.data)
    fresh = record_swap(pop, KEYS, household="hid", geography=GEO)
    assert isinstance(fresh.parameters["seed"], int)
    assert record_swap(pop, **fresh.parameters).data.equals(fresh.data)


def test_input_not_mutated_and_pandas_index_kept(pop):
    pdf = pop.to_pandas()
    pdf.index = np.arange(len(pdf)) * 3 + 7
    copy = pdf.copy()
    res = record_swap(pdf, KEYS, household="hid", geography=GEO, seed=2)
    assert pdf.equals(copy)
    assert list(res.data.index) == list(pdf.index)
    assert res.data["district"].dtype == pdf["district"].dtype
    assert (res.data["district"] != pdf["district"]).sum() == res.n_changed["district"]


def test_single_level_and_user_risk():
    """One level: risky households (a risk column above the threshold) are all swapped into
    another region; a household of risk 0 is never swapped, not even as a donor."""
    df = population(800, seed=6)
    rng = np.random.default_rng(0)
    hh_risk = rng.choice([0.0, 0.01, 0.5], p=[0.3, 0.6, 0.1], size=df["hid"].max() + 1)
    df = df.with_columns(r=pl.Series(hh_risk[df["hid"].to_numpy()]))
    res = record_swap(df, None, household="hid", geography=["region"], risk="r", risk_threshold=0.1, seed=3)
    before, after = by_household(df, ["region", "r"]), by_household(res.data, ["region"])
    risky = {h for h, (_, r) in before.items() if r > 0.1}
    assert res.details["risky_by_level"] == {"region": len(risky)} and res.details["n_risky_without_donor"] == 0
    assert all(after[h][0] != before[h][0] for h in risky)
    assert all(after[h][0] == before[h][0] for h, (_, r) in before.items() if r == 0)


def test_user_risk_per_level_takes_the_household_maximum():
    """Two risk columns (one per level); a household takes its members' maximum: a single
    member above the threshold at the district level makes the household risky there."""
    df = population(600, seed=8, shuffle=False)
    first_member = df.select(pl.int_range(pl.len()).over("hid") == 0).to_series()
    hid = df["hid"].to_numpy()
    chosen = set(np.unique(hid)[::25].tolist())
    flag = np.array([h in chosen for h in hid]) & first_member.to_numpy()
    df = df.with_columns(r0=pl.lit(0.01), r1=pl.Series(np.where(flag, 0.9, 0.01)))
    res = record_swap(df, None, household="hid", geography=GEO, risk=["r0", "r1"], risk_threshold=0.5, seed=1)
    assert res.details["risky_by_level"] == {"region": 0, "district": len(chosen)}
    before, after = by_household(df, GEO), by_household(res.data, GEO)
    assert all(after[h][1] != before[h][1] for h in chosen)


def test_similar_profiles_fall_back():
    """First profile hid_copy (unique per household: never a donor) -> every pair matches on
    the second profile (tenure): partners share their tenure, not necessarily their size."""
    df = population(600, seed=9)
    res = record_swap(
        df, KEYS, household="hid", geography=GEO, similar=[["hid_copy"], ["tenure"]], carry_along=["hh_income"], seed=4
    )
    d = res.details
    assert d["pairs_by_profile"]["1"] == 0 and d["pairs_by_profile"]["2"] * 2 == d["n_swapped_households"] > 0
    before = by_household(df, ["tenure", "hh_income", "district"])
    after = by_household(res.data, ["hh_income", "district"])
    by_income = {v[1]: h for h, v in before.items()}  # household incomes are distinct here
    assert len(by_income) == len(before)
    for h, (inc, _) in after.items():
        partner = by_income[inc]
        assert before[partner][0] == before[h][0]  # same tenure
    # an empty profile matches any household
    any_res = record_swap(df, KEYS, household="hid", geography=GEO, similar=[[]], seed=4)
    assert any_res.details["n_risky_without_donor"] == 0


def test_missing_key_values_are_a_category(pop):
    """A missing key value (and an extra missing code) counts as a category of its own."""
    df = pop.with_columns(citizenship=pl.when(pl.col("citizenship") == "Other").then(None).otherwise("citizenship"))
    a = record_swap(df, KEYS, household="hid", geography=GEO, seed=3)
    b = record_swap(pop, KEYS, household="hid", geography=GEO, seed=3, missing=["Other"])
    assert (
        a.details["risky_by_level"]
        == record_swap(pop, KEYS, household="hid", geography=GEO, seed=3).details["risky_by_level"]
    )
    assert b.details["risky_by_level"] == a.details["risky_by_level"]


def test_numeric_columns_and_numpy_input():
    """Integer geography codes and a numeric carry-along keep their type; NumPy input works
    with column positions as names."""
    df = population(400, seed=10).with_columns(
        region=pl.col("region").str.slice(1).cast(pl.Int64),
        district=pl.col("district").str.replace_all("[RD-]", "").cast(pl.Int32),
    )
    res = record_swap(df, KEYS, household="hid", geography=GEO, carry_along=["hh_income"], seed=1)
    assert res.data.schema == df.schema
    assert res.n_changed_by_category["district"] and "hh_income" not in res.n_changed_by_category
    arr = df.select("hid", "region", "district", "agegroup").to_numpy()
    out = record_swap(arr, ["3"], household="0", geography=["1", "2"], seed=1)
    assert isinstance(out.data, np.ndarray) and out.data.shape == arr.shape
    assert (out.data[:, [0, 3]] == arr[:, [0, 3]]).all()


def test_empty_data():
    """No records: refused as by every protection method and measure."""
    df = population(10, seed=1).head(0)
    with pytest.raises(SdcError, match="data: the table has no records; expected at least one"):
        record_swap(df, KEYS, household="hid", geography=GEO, seed=1)


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"swap_rate": 1.5}, "swap_rate: got 1.5; expected a number in [0, 1]"),
        ({"swap_rate": -0.1}, "swap_rate: got -0.1"),
        ({"k": 0}, "k: got 0; expected an integer >= 1"),
        ({"risk_threshold": 0.1}, "risk_threshold: given without risk"),
        ({"risk": "income", "risk_threshold": 0.1}, "keys: given together with risk"),
        ({"carry_along": ["region"]}, "carry_along: region also in geography"),
        ({"similar": [["district"]]}, "similar[0]: district in geography"),
        ({"carry_along": ["income"]}, "carry_along: income varies within"),
        ({"similar": ["gender"]}, "similar: gender varies within"),
        ({"household": ["hid", "tenure"]}, "household: got list of 2 columns; expected a single column name"),
        ({"geography": ["region", "nope"]}, "geography: column(s) nope not found"),
    ],
)
def test_bad_parameters(pop, kwargs, message):
    args = {"household": "hid", "geography": GEO, **kwargs}
    with pytest.raises(SdcError, match=None) as err:
        record_swap(pop, KEYS, **args)
    assert message in str(err.value)


def test_keys_or_risk_required_and_threshold_with_risk(pop):
    with pytest.raises(SdcError, match="keys: no columns given"):
        record_swap(pop, None, household="hid", geography=GEO)
    with pytest.raises(SdcError, match="risk_threshold: missing"):
        record_swap(pop, None, household="hid", geography=GEO, risk="income")
    with pytest.raises(SdcError, match="risk: region not numeric"):
        record_swap(pop, None, household="hid", geography=GEO, risk="region", risk_threshold=0.1)
    with pytest.raises(SdcError, match="risk: 3 columns for 2 geography levels"):
        record_swap(
            pop, None, household="hid", geography=GEO, risk=["income"] * 1 + ["hh_income", "hid"], risk_threshold=1
        )
    neg = pop.with_columns(r=pl.when(pl.col("hid") < 1010).then(-1.0).otherwise(0.1))
    with pytest.raises(SdcError, match="records without a finite risk >= 0"):
        record_swap(neg, None, household="hid", geography=GEO, risk="r", risk_threshold=0.5)


def test_non_nested_hierarchy_names_the_units():
    """District D0 of region R0 is also used in region R1 for one household: one unit breaks
    the nesting, and its code is named."""
    df = population(300, seed=2, shuffle=False).with_columns(district=pl.col("district").str.slice(3))
    with pytest.raises(SdcError) as err:
        record_swap(df, KEYS, household="hid", geography=GEO, seed=1)
    msg = str(err.value)
    assert "units of district lie in more than one unit of region" in msg and "D0" in msg


def test_household_checks():
    df = population(300, seed=2, shuffle=False)
    no_id = df.with_columns(hid=pl.when(pl.int_range(pl.len()) < 3).then(None).otherwise("hid"))
    with pytest.raises(SdcError, match="household: 3 records have no household id"):
        record_swap(no_id, KEYS, household="hid", geography=GEO)
    # the second member of two households of size >= 2 gets another district
    size = df.group_by("hid").len()
    two = size.filter(pl.col("len") >= 2)["hid"].sort()[:2].to_list()
    second = df.select((pl.int_range(pl.len()).over("hid") == 1) & pl.col("hid").is_in(two)).to_series()
    moved = df.with_columns(
        district=pl.when(second).then(pl.lit("R9-D9")).otherwise("district"),
        region=pl.when(second).then(pl.lit("R9")).otherwise("region"),
    )
    with pytest.raises(SdcError) as err:
        record_swap(moved, KEYS, household="hid", geography=GEO)
    assert "geography: region varies within 2 households" in str(err.value)
    assert "district varies within 2 households" in str(err.value)
    gap = df.with_columns(region=pl.when(pl.col("hid") == 1000).then(None).otherwise("region"))
    with pytest.raises(SdcError, match="geography: region is missing in"):
        record_swap(gap, KEYS, household="hid", geography=GEO)


# ----------------------------------------------------------------------------------------------
# properties on random populations
# ----------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 120),
    st.integers(1, 4),
    st.floats(0, 1),
    st.integers(1, 4),
    st.integers(0, 2**31),
)
def test_properties(n_households, n_regions, rate, k, seed):
    """Rows and other columns kept, pairs of equal size exchange household-level units,
    households per unit unchanged, risky households without a donor are the only risky ones
    left, same seed same output."""
    df = population(n_households, seed=seed % 1000, n_regions=n_regions)
    res = record_swap(df, KEYS, household="hid", geography=GEO, k=k, swap_rate=rate, carry_along="hid_copy", seed=seed)
    others = [c for c in df.columns if c not in {*GEO, "hid_copy"}]
    assert res.data.select(others).equals(df.select(others))
    before, after = by_household(df, GEO), by_household(res.data, [*GEO, "hid_copy"])
    sizes = dict(df.group_by("hid").len().iter_rows())
    for h, (*g, p) in after.items():
        assert tuple(g) == before[p] and after[p][-1] == h and sizes[p] == sizes[h]
    assert Counter(v[:2] for v in after.values()) == Counter(before.values())
    level = brute_force_risky(df, KEYS, GEO, k)
    hh_level = dict(zip(df["hid"].to_list(), level.tolist()))
    left = sum(1 for h, lev in hh_level.items() if lev < 2 and after[h][-1] == h)
    assert left == res.details["n_risky_without_donor"]
    assert record_swap(df, **res.parameters).data.equals(res.data)
