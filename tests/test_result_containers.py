"""Nested result containers are read-only: every result class, built by its public function,
refuses a change to any dict, list or array it holds, at any depth; and the freezing helper,
on random nested containers (a property test), leaves the values and the caller's objects as
they were."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re
import warnings
from dataclasses import fields, is_dataclass

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import sdckit
from conftest import survey_table
from sdckit.results import Result
from sdckit.results._base import FrozenDict, FrozenList, freeze

KEYS = ["a", "b", "c"]


def _table(n: int = 300, seed: int = 3) -> pl.DataFrame:
    return survey_table(n, seed, household_size=3)  # region constant within a household


def _results() -> list:
    """One result of every class, from its public function."""
    d = _table()
    noisy = sdckit.add_noise(d, ["x", "y"], noise=50, seed=1).data
    ind = sdckit.individual_risk(d, KEYS, weight="w", household="hh")
    sample = _table(400, seed=9)
    register = d.filter(pl.col("c") == 1).select(KEYS)
    sc = sdckit.Scenario(keys=KEYS, weight="w")
    return [
        sdckit.frequencies(d, KEYS, weight="w"),
        sdckit.k_anonymity(d, KEYS, k=[2, 3]),
        sdckit.threshold_rule(d, KEYS, max_dimension=2),
        ind,
        ind.threshold(),
        sdckit.l_diversity(d, KEYS, "s"),
        sdckit.t_closeness(d, KEYS, "s"),
        sdckit.suda(d, KEYS, keep_msus=True),
        sdckit.loglinear_risk(d, KEYS, weight="w", model="a+b+c"),
        sdckit.population_uniques(d, KEYS, sampling_fraction=0.2),
        sdckit.register_risk(register, sample.select(KEYS), KEYS, sampling_fraction=0.1, approach="A"),
        sdckit.interval_disclosure(d, noisy, ["x", "y"]),
        sdckit.relative_interval_risk(d, ["x", "y"]),
        sdckit.combined_risk(d, KEYS, ["x", "y"]),
        sdckit.rmd_interval_disclosure(d, noisy, ["x", "y"], seed=1),
        sdckit.outliers(d, ["x", "y"], seed=1),
        sdckit.record_linkage_risk(d, noisy, ["x", "y"]),
        sdckit.external_risk(noisy, d, ["x", "y"]),
        sdckit.confidentiality_plot(d, noisy, ["x", "y"], seed=1),
        sdckit.confidentiality_plot(d, noisy, ["x", "y"], neighbourhood="fellegi_sunter", bins=5),
        sdckit.categorical_confidentiality_plot(d, d, KEYS, weight="w"),
        sdckit.information_loss(d, noisy, ["x", "y"]),
        sdckit.variant_loss(d, noisy, ["x", "y", *KEYS], scales=dict.fromkeys(KEYS, "nominal"), records=True),
        sdckit.estimates_change(d, noisy, keys=KEYS, variables=["x", "y"], weight="w", household="hh"),
        sdckit.dominance_rules(d, KEYS, ["w"]),
        sdckit.analysis_change(d, noisy, keys=KEYS, variables=["x", "y"], weight="w", household="hh"),
        sdckit.synthetic_risk(
            d,
            noisy,
            d,
            keys=KEYS,
            variables=["x", "y"],
            seed=1,
            similarity={"records": True},
            attacks={"n_attacks": 50},
        ),
        sdckit.synthetic_utility(d, noisy, keys=KEYS, variables=["x", "y"]),
        sdckit.local_suppression(d, KEYS, k=3),
        sdckit.record_swap(d, KEYS, household="hh", geography=["region"], seed=2),
        sdckit.assess(d, sc, k=(2, 3)),
        sdckit.search(d, sc, target={"k": 2}, suppression_limit=0.1, max_candidates=5, progress=False),
    ]


@pytest.fixture(scope="module")
def results() -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _results()


def _all_result_classes() -> set[type]:
    for m in pkgutil.walk_packages(sdckit.__path__, "sdckit."):
        importlib.import_module(m.name)

    def subs(c):
        for s in c.__subclasses__():
            yield s
            yield from subs(s)

    return set(subs(Result))


def test_every_result_class_is_covered(results):
    assert {type(r) for r in results} == _all_result_classes()


def _containers(value, path: str, seen: set):
    """``(path, container)`` for every dict, list, set or array reachable from ``value``
    (through containers, nested results and other dataclasses)."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, (dict, list, set, np.ndarray)):
        yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _containers(v, f"{path}[{k!r}]", seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, v in enumerate(value):
            yield from _containers(v, f"{path}[{i}]", seen)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from _containers(getattr(value, f.name), f"{path}.{f.name}", seen)


def _is_read_only(container) -> bool:
    if isinstance(container, np.ndarray):
        if container.flags.writeable:
            return False
        if container.size:
            with pytest.raises(ValueError):
                container.flat[0] = container.flat[0]
        return True
    if isinstance(container, dict):
        try:
            container["__probe__"] = 1
        except TypeError:
            return "__probe__" not in container
        return False
    if isinstance(container, list):
        try:
            container.append(1)
        except TypeError:
            return True
        container.pop()
        return False
    return False  # a mutable set


def test_nested_containers_of_every_result_are_read_only(results):
    offenders = []
    for res in results:
        for path, c in _containers(res, type(res).__name__, set()):
            if re.search(r"\.(data|table|records_source)($|[.\[])", path):
                continue  # the protected data (the caller's frame), the engine's working table and its cache
            if not _is_read_only(c):
                offenders.append(f"{path} ({type(c).__name__})")
    assert offenders == []


def test_examples_from_the_issue(results):
    """``res.details["x"] = 1`` and ``res.some_array[0] = 5`` raise; headlines stay put."""
    prot = next(r for r in results if isinstance(r, sdckit.ProtectionResult))
    with pytest.raises(TypeError):
        prot.details["x"] = 1
    with pytest.raises(TypeError):
        prot.parameters["keys"].append("x")
    with pytest.raises(ValueError):
        prot.details["unresolved_rows"][:0] = 5  # an empty slice: still refused
    ind = next(r for r in results if isinstance(r, sdckit.IndividualRiskResult))
    before = ind.global_risk
    with pytest.raises(ValueError):
        ind.risk[0] = 5
    assert ind.global_risk == before


def test_frozen_results_still_compare_serialise_and_pickle(results):
    for res in results:
        if isinstance(res, sdckit.AssessmentResult):
            continue  # its own to_dict (aggregates only), tested in test_report
        d = res.to_dict()
        assert isinstance(d, dict)
    prot = next(r for r in results if isinstance(r, sdckit.ProtectionResult))
    assert prot.parameters["keys"] == KEYS  # a FrozenList equals the list
    assert pickle.loads(pickle.dumps(prot.parameters)) == prot.parameters


# ----------------------------------------------------------------------------------------------
# the helper, on random nested containers
# ----------------------------------------------------------------------------------------------
leaves = st.one_of(
    st.integers(-5, 5),
    st.floats(allow_nan=False, width=32),
    st.text(max_size=3),
    st.none(),
    hnp.arrays(np.float64, st.integers(0, 4), elements=st.floats(-1, 1)),
)
nested = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(max_size=2), inner, max_size=3),
        st.tuples(inner, inner),
    ),
    max_leaves=12,
)


def _snapshot(value):
    """A deep copy to compare the caller's object with after freezing."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snapshot(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_snapshot(v) for v in value)
    return value


def _writable_everywhere(value) -> bool:
    """The caller's arrays keep their write flag (freezing takes read-only views)."""
    return all(c.flags.writeable for _, c in _containers(value, "", set()) if isinstance(c, np.ndarray))


@settings(max_examples=200, deadline=None)
@given(nested)
def test_freeze_makes_every_level_read_only_and_keeps_values(value):
    before = _snapshot(value)
    frozen = freeze(value)
    for path, c in _containers(frozen, "value", set()):
        assert _is_read_only(c), path
    assert _equal_values(frozen, before)
    assert _equal_values(value, before) and _writable_everywhere(value)  # the input is untouched
    assert freeze(frozen) is frozen  # freezing twice changes nothing


def _equal_values(a, b) -> bool:
    """Equal content, a list and its frozen list counting as equal."""
    if isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and np.array_equal(a, b)
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(_equal_values(a[k], b[k]) for k in b)
    if isinstance(b, (list, tuple)):
        return (
            isinstance(a, type(b) if isinstance(b, tuple) else list)
            and len(a) == len(b)
            and all(_equal_values(x, y) for x, y in zip(a, b))
        )
    return a == b


def test_frozen_containers_are_their_plain_types():
    d = freeze({"a": [1, 2], "b": {"c": np.arange(3)}})
    assert isinstance(d, FrozenDict) and isinstance(d, dict)
    assert isinstance(d["a"], FrozenList) and d["a"] == [1, 2]
    assert not d["b"]["c"].flags.writeable
    assert pickle.loads(pickle.dumps(d["a"])) == [1, 2]
    for mutate in (
        lambda: d["a"].extend([3]),
        lambda: d["a"].__setitem__(0, 9),
        lambda: d["a"].sort(),
        lambda: d.update(x=1),
    ):
        with pytest.raises(TypeError):
            mutate()
    x = d["a"]
    with pytest.raises(TypeError):
        x += [3]
