"""The search's limits hold from the first step: the lattice is walked lazily (only the nodes
visited and their frontier are made), so ``max_candidates`` and ``time_limit`` return with few
nodes made on a lattice of 1.6 million; a lattice above the cap is refused before anything of
its size is built; the lazy order is the order of the whole sorted lattice."""

from __future__ import annotations

import importlib
import itertools
import tracemalloc

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sdckit
from sdckit._core.lattice import MAX_NODES

S = importlib.import_module("sdckit.workflow.search")


def _nominal(m: int, n: int = 300, seed: int = 0) -> pl.DataFrame:
    """m keys of three categories: each gets an automatic hierarchy of height 2 (3 levels)."""
    rng = np.random.default_rng(seed)
    return pl.DataFrame({f"k{j}": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]) for j in range(m)})


@pytest.fixture
def orders(monkeypatch):
    """Every LatticeOrder the search makes (to count the nodes it made)."""
    made = []

    class Counted(S.LatticeOrder):
        def __init__(self, s):
            super().__init__(s)
            made.append(self)

    monkeypatch.setattr(S, "LatticeOrder", Counted)
    return made


def test_thirteen_keys_one_candidate(orders):
    d = _nominal(13)
    sc = sdckit.Scenario(keys=list(d.columns))
    res = sdckit.search(d, sc, target={"k": 3}, max_candidates=1, progress=False)
    assert res.n_candidates == 3**13 < MAX_NODES  # 1,594,323 nodes in the lattice
    assert res.n_checked == 1 and not res.optimal and "candidate limit (1)" in res.stopped
    assert orders[0].generated <= 1 + 13  # the bottom node and its children, not the lattice
    assert res.seconds < 60


def test_thirteen_keys_time_limit(orders):
    d = _nominal(13)
    sc = sdckit.Scenario(keys=list(d.columns))
    # no suppression: each candidate is quick (local suppression of 13 nearly unique keys takes
    # seconds, and a candidate once started is finished)
    res = sdckit.search(d, sc, target={"k": 3}, time_limit=0.5, progress=False)
    assert not res.optimal and "time limit (0.5 s)" in res.stopped
    assert res.n_checked < res.n_candidates
    made = orders[0].generated if orders else 0
    assert made <= 1 + 13 * res.n_checked  # each node visited makes at most one child per key
    assert res.seconds < 60


def test_time_limit_zero_stops_before_the_level_losses(monkeypatch):
    d = _nominal(13)

    def no(*a, **k):
        raise AssertionError("variant_loss called after the time limit")

    monkeypatch.setattr("sdckit.utility.variant_loss", no)
    res = sdckit.search(d, sdckit.Scenario(keys=list(d.columns)), target={"k": 3}, time_limit=0, progress=False)
    assert not res.found and res.n_checked == 0 and "time limit" in res.stopped


@pytest.mark.parametrize("model", [("cells", "loss"), ("records", "loss"), ("records", "arx"), ("cells", "arx")])
def test_fourteen_keys_refused_before_the_lattice(model, monkeypatch):
    """3^14 = 4,782,969 nodes: refused up front, before a per-level loss or a node is made."""
    d = _nominal(14)

    def no(self, *a, **k):
        raise AssertionError("the lattice was built")

    monkeypatch.setattr(S._Search, "_level_losses", no)
    monkeypatch.setattr(S.LatticeOrder, "__init__", no)
    with pytest.raises(sdckit.SdcError, match=r"4,782,969 nodes.*at most 2,000,000.*fewer keys"):
        sdckit.search(
            d,
            sdckit.Scenario(keys=list(d.columns)),
            target={"k": 3},
            suppression=model[0],
            objective=model[1],
            max_candidates=1,
            progress=False,
        )


def test_arx_model_refused_before_the_model(monkeypatch):
    from sdckit._core import lattice
    from sdckit.workflow._arx import arx_search

    d = _nominal(14)
    rows = [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]]

    def no(*a, **k):
        raise AssertionError("the model was built")

    monkeypatch.setattr(lattice, "make_model", no)
    with pytest.raises(sdckit.SdcError, match=r"4,782,969 nodes"):
        arx_search(d, list(d.columns), {c: rows for c in d.columns}, k=2, max_nodes=1)


def test_nine_numeric_keys_refused_in_bounded_memory():
    rng = np.random.default_rng(0)
    d = pl.DataFrame({f"x{j}": rng.normal(size=300) * 100 for j in range(9)})
    sc = sdckit.Scenario(keys=list(d.columns), scales=dict.fromkeys(d.columns, "numeric"))
    tracemalloc.start()
    try:
        with pytest.raises(sdckit.SdcError, match=r"the lattice of the 9 keys' levels has [\d,]+ nodes"):
            sdckit.search(d, sc, target={"k": 2}, max_candidates=1, progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_nine_numeric_keys_one_candidate(orders):
    """Nine small-range numeric keys (4 levels each, 262,144 nodes): one candidate, few nodes made."""
    rng = np.random.default_rng(2)
    d = pl.DataFrame({f"x{j}": rng.integers(0, 4, 300) for j in range(9)})
    sc = sdckit.Scenario(keys=list(d.columns), scales=dict.fromkeys(d.columns, "numeric"))
    tracemalloc.start()
    try:
        res = sdckit.search(d, sc, target={"k": 2}, max_candidates=1, progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.n_candidates == 4**9 and res.n_checked == 1 and "candidate limit" in res.stopped
    assert orders[0].generated <= 10
    assert peak < 100 * 2**20


def test_max_candidates_bounds_the_runners_up():
    """The candidates evaluated after the proof count against max_candidates too."""
    d = _nominal(3, 120, seed=4)
    sc = sdckit.Scenario(keys=list(d.columns))
    free = sdckit.search(d, sc, target={"k": 2}, progress=False)
    assert free.optimal and free.n_pruned  # the proof came before the end of the lattice
    capped = sdckit.search(d, sc, target={"k": 2}, max_candidates=free.n_checked, progress=False)
    assert capped.levels == free.levels and capped.optimal
    assert capped.runners_up == ()


# ----------------------------------------------------------------------------------------------
# the lazy order is the order of the sorted lattice
# ----------------------------------------------------------------------------------------------
class _Fake:
    """What LatticeOrder reads of a search: keys, hierarchy heights, per-level losses, bound."""

    def __init__(self, lam: dict, weights: dict):
        self.keys = list(lam)
        self.lam = lam
        self.h = {k: type("H", (), {"height": len(v) - 1})() for k, v in lam.items()}
        self.weights = weights

    def bound(self, levels) -> float:
        return S._weighted(self.weights, {k: self.lam[k][lv] for k, lv in zip(self.keys, levels)})


LAMS = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    lams=st.lists(LAMS, min_size=1, max_size=4),
    weights=st.none() | st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=4, max_size=4),
)
def test_lazy_order_is_the_sorted_lattice(lams, weights):
    lam = {f"k{j}": [0.0, *sorted(v)[1:]] if len(v) > 1 else [0.0] for j, v in enumerate(lams)}
    w = None if weights is None or not any(weights[: len(lam)]) else dict(zip(lam, weights))
    s = _Fake(lam, w)
    got = list(S.LatticeOrder(s))
    nodes = list(itertools.product(*[range(len(v)) for v in lam.values()]))
    assert got == sorted(nodes, key=lambda n: (s.bound(n), sum(n), n))  # the documented order


@settings(max_examples=60, deadline=None)
@given(lams=st.lists(LAMS, min_size=1, max_size=4))
def test_lazy_order_when_a_loss_falls_with_its_level(lams):
    """A key whose loss does not grow with its level: every node once, the bound never falls."""
    lam = {f"k{j}": [0.0, *v[1:]] for j, v in enumerate(lams)}
    s = _Fake(lam, None)
    got = list(S.LatticeOrder(s))
    assert sorted(got) == list(itertools.product(*[range(len(v)) for v in lam.values()]))
    bounds = [s.bound(n) for n in got]
    assert bounds == sorted(bounds)


def test_lazy_order_on_real_data_is_the_old_sorted_list():
    from sdckit.datasets import EXAMPLE_KEYS, load_example

    s = S._Search(load_example(), sdckit.Scenario(keys=list(EXAMPLE_KEYS)), {"k": 3}, None, 0.0, "cells", "loss", None)
    nodes = list(itertools.product(*[range(s.h[k].height + 1) for k in s.keys]))
    assert list(S.LatticeOrder(s)) == sorted(nodes, key=lambda n: (s.bound(n), sum(n), n))


def test_thirteen_keys_arx_model_one_candidate():
    """ARX's model on 1.6 million nodes: one node checked, the nodes held as small integers."""
    d = _nominal(13)
    sc = sdckit.Scenario(keys=list(d.columns))
    tracemalloc.start()
    try:
        res = sdckit.search(
            d, sc, target={"k": 3}, suppression="records", objective="arx", suppression_limit=0.05, max_candidates=1
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.n_candidates == 3**13 and res.n_checked == 1
    assert not res.optimal and "candidate limit (1)" in res.stopped
    assert peak < 250 * 2**20  # 625 MB before: the nodes as int64 and every node's per-key values


def test_arx_model_time_limit_zero_checks_nothing():
    from sdckit.workflow._arx import arx_search

    d = _nominal(13)
    rows = [["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]]
    out = arx_search(d, list(d.columns), dict.fromkeys(d.columns, rows), k=2, time_limit=0)
    assert out.n_checked == 0 and not out.optimal and out.levels is None
