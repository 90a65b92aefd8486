"""The search with cell suppression for k evaluated on codes (``workflow/_cells.py``) against
the public methods, node by node, and the compiled local suppression against the NumPy kernel.

Oracles: for every node of small lattices, :class:`CellCandidates.evaluate` (codes, no table)
must give what ``_Search.evaluate`` (the public ``global_recode`` and ``local_suppression``,
measured afresh with ``k_anonymity``, ``variant_loss`` and ``individual_risk``) gives: whether the
node meets k, the suppressed cells and records, the loss and the re-identification rate (and the
household rate). The compiled greedy (Numba) must suppress exactly the cells of the NumPy greedy.
"""

from __future__ import annotations

import importlib
import importlib.util
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from sdckit._core import _suppression_jit
from sdckit._core.suppression import default_importance, greedy_suppression
from sdckit.workflow._cells import cell_candidates

#: the module (``sdckit.workflow.search`` is the function)
S = importlib.import_module("sdckit.workflow.search")
SETTINGS = {"deadline": None, "derandomize": True, "suppress_health_check": [HealthCheck.too_slow]}
HAS_NUMBA = importlib.util.find_spec("numba") is not None


def _data(seed: int, n: int, households: bool = False) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {
        "age": rng.integers(18, 60, n),
        "colour": rng.choice(["red", "blue", "green", "grey"], n, p=[0.5, 0.3, 0.15, 0.05]),
        "town": [None if v == "-" else str(v) for v in rng.choice(["a", "b", "c", "-"], n, p=[0.55, 0.3, 0.1, 0.05])],
        "w": rng.uniform(5, 50, n),
    }
    if households:
        cols["hid"] = np.sort(rng.integers(0, max(n // 3, 1), n))
    return pl.DataFrame(cols, schema_overrides={"town": pl.String})


def _nodes(s):
    return list(np.ndindex(*[s.h[k].height + 1 for k in s.keys]))


def _same(a, b) -> None:
    assert a.within_limit == b.within_limit
    if not b.within_limit:
        return
    assert a.meets == b.meets
    assert (a.cells, a.records) == (b.cells, b.records)
    assert math.isclose(a.loss, b.loss, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(a.rate, b.rate, rel_tol=1e-9, abs_tol=1e-12)
    if b.household_rate is not None:
        assert math.isclose(a.household_rate, b.household_rate, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("objective", ["loss", "arx"])
@pytest.mark.parametrize("weight", [None, "w"])
@pytest.mark.parametrize("seed,k,limit", [(1, 2, 0.05), (2, 3, 0.2), (3, 5, 0.1)])
def test_codes_equal_the_public_methods_at_every_node(seed, k, limit, weight, objective):
    d = _data(seed, 150)
    sc = sdckit.Scenario(keys=["age", "colour", "town"], weight=weight)
    s = S._Search(d, sc, {"k": k}, None, limit, "cells", objective, None)
    cells = cell_candidates(s)
    assert cells is not None
    for node in _nodes(s):
        _same(cells.evaluate(node), s.evaluate(node))


def test_household_rate_from_codes_is_the_public_measure():
    d = _data(4, 120, households=True)
    sc = sdckit.Scenario(keys=["age", "colour", "town"], household="hid")
    s = S._Search(d, sc, {"k": 3}, None, 0.1, "cells", "loss", None)
    cells = cell_candidates(s)
    for node in _nodes(s)[:12]:
        a, b = cells.evaluate(node), s.evaluate(node)
        _same(a, b)
        assert b.household_rate is not None


def test_other_targets_take_the_public_path():
    d = _data(5, 80)
    sc = sdckit.Scenario(keys=["age", "colour"])
    for target in ({"max_global_risk": 0.05}, {"k": 2, "t": 0.4, "sensitive": "town"}):
        s = S._Search(d, sc, target, None, 0.1, "cells", "loss", None)
        assert cell_candidates(s) is None


@settings(max_examples=15, **SETTINGS)
@given(seed=st.integers(0, 10_000), k=st.integers(2, 5), limit=st.sampled_from([0.0, 0.05, 0.3]))
def test_search_on_codes_returns_the_public_search(seed, k, limit):
    """The winner evaluated on codes is the winner of every node evaluated by the public
    methods (exhaustive), and the returned file meets k when measured."""
    d = _data(seed, 100)
    sc = sdckit.Scenario(keys=["age", "colour", "town"])
    res = sdckit.search(d, sc, target={"k": k}, suppression_limit=limit, exhaustive=True, progress=False)
    s = S._Search(d, sc, {"k": k}, None, limit, "cells", "loss", None)
    ok = [c for c in (s.evaluate(n) for n in _nodes(s)) if c.meets and c.within_limit]
    if not ok:
        assert not res.found
        return
    best = min(c.loss for c in ok)
    assert res.found and math.isclose(res.loss, best, rel_tol=1e-9, abs_tol=1e-12)
    ka = sdckit.k_anonymity(res.protected, sc.keys, k=[k], allow_degenerate_keys=True)
    assert int(ka.n_violations[k]) == 0


@pytest.mark.skipif(not HAS_NUMBA, reason="Numba (sdckit[fast]) is not installed: no compiled loop to compare")
@settings(max_examples=40, **SETTINGS)
@given(
    seed=st.integers(0, 100_000),
    n=st.integers(5, 400),
    m=st.integers(2, 5),
    cats=st.integers(2, 7),
    k=st.integers(2, 6),
    p_missing=st.sampled_from([0.0, 0.05, 0.3]),
)
def test_compiled_greedy_suppresses_the_numpy_cells(seed, n, m, cats, k, p_missing):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, cats, (n, m)).astype(np.int32)
    codes[rng.random((n, m)) < p_missing] = -1
    importance = default_importance(codes)
    ref, ref_bad = greedy_suppression(codes, k, importance, 1.0, jit=False)
    assert _suppression_jit.load()
    assert _suppression_jit.use_jit(0, 1.0, [cats + 1] * m)
    got, got_bad = greedy_suppression(codes, k, importance, 1.0)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got_bad, ref_bad)


def test_compiled_loop_is_not_taken_with_alpha_below_one():
    assert not _suppression_jit.use_jit(10**6, 0.5, [3, 3])
