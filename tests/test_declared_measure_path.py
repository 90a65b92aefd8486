"""A measure that the assessment's table lists without a section of its own reaches every reader
of the table through its declaration alone: the assessment (``VariantAssessment.measures``),
the report's table, :class:`sdckit.SdcProblem`'s per-step table and the search's targets.

The measure here is declared in the test (the share of records unique on the keys, counted by
hand below) and put into the table as ``tools/registry_docs.py`` would put it.
"""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import polars as pl
import pytest

import sdckit
from sdckit import registry
from sdckit._assessed import Assessed, Headline
from sdckit._declare import Param, declare
from sdckit.assessment import table as T
from sdckit.scenario import accepts_scenario

S = importlib.import_module("sdckit.workflow.search")


@dataclasses.dataclass(frozen=True)
class _Share:
    share: float


@accepts_scenario
@declare(
    "measure",
    Param("keys"),
    assessed=Assessed(
        needs=("keys",),
        headlines=(
            Headline(
                "share",
                "share of records unique on the keys",
                "lower",
                "share",
                "share unique",
                target="max_share_unique",
            ),
        ),
        order=999,
        step=True,
    ),
)
def share_unique(data, keys) -> _Share:
    """The share of records unique on ``keys``."""
    f = sdckit.frequencies(data, keys)
    return _Share(float(np.mean(np.asarray(f.fk) == 1)))


def _hand_share(frame: pl.DataFrame, keys: list[str]) -> float:
    counts = frame.group_by(keys).len()
    return float(counts.filter(pl.col("len") == 1)["len"].sum()) / frame.height


@pytest.fixture
def declared(monkeypatch):
    """The table with the test's measure in it, as the generator writes it from the declaration."""
    decl = sdckit._declare.declaration(share_unique)
    entry = T.entry_of("share_unique", decl.assessed)
    monkeypatch.setattr(T, "MEASURES", (*T.MEASURES, entry))
    real_get = registry.get
    monkeypatch.setattr(registry, "get", lambda name: decl if name == "share_unique" else real_get(name))
    return entry


@pytest.fixture
def frame():
    rng = np.random.default_rng(3)
    n = 400
    return pl.DataFrame(
        {
            "a": rng.integers(0, 6, n).astype(str),
            "b": rng.integers(0, 5, n).astype(str),
            "c": rng.integers(0, 4, n).astype(str),
            "w": np.full(n, 20.0),
        }
    )


KEYS = ["a", "b", "c"]


def test_the_table_reads_the_declaration(declared):
    assert declared.headlines[0].target == "max_share_unique"
    assert "max_share_unique" in T.search_targets()
    assert [e.name for e in T.step_entries(sdckit.Scenario(keys=["a"]))][-1] == "share_unique"


def test_the_assessment_and_its_report_show_it(declared, frame):
    res = sdckit.assess(frame, sdckit.Scenario(keys=KEYS, weight="w"), progress=False)
    got = res.variants[0].measures["share_unique"]["share"]
    assert got["value"] == pytest.approx(_hand_share(frame, KEYS))
    assert got["meaning"] == "share of records unique on the keys" and got["better"] == "lower"
    assert "share of records unique on the keys" in str(res.summary())
    assert "share of records unique on the keys" in res.to_html()


def test_the_per_step_table_shows_it(declared, frame):
    p = sdckit.SdcProblem(frame, sdckit.Scenario(keys=KEYS, weight="w"))
    p.apply(
        "global_recode", variables=["a"], mapping={"a": {"0": "x", "1": "x", "2": "x", "3": "3", "4": "4", "5": "5"}}
    )
    assert p.history[-1].measures["share"] == pytest.approx(_hand_share(p.data, KEYS))
    columns, rows = sdckit.workflow.problem_measures.summary_rows(p)
    assert "share unique" in [r[0] for r in rows]


def test_the_search_meets_its_target(declared, frame):
    before = _hand_share(frame, KEYS)
    bound = before / 3
    res = sdckit.search(
        frame, sdckit.Scenario(keys=KEYS, weight="w"), target={"max_share_unique": bound}, progress=False
    )
    assert res.found
    assert _hand_share(res.protected, KEYS) <= bound
    assert res.target["max_share_unique"] == bound


def test_a_bad_bound_names_the_target(declared, frame):
    with pytest.raises(sdckit.SdcError, match=r"target\['max_share_unique'\]"):
        sdckit.search(frame, sdckit.Scenario(keys=KEYS), target={"max_share_unique": "many"}, progress=False)
    with pytest.raises(sdckit.SdcError, match="model='arx'"):
        sdckit.search(frame, sdckit.Scenario(keys=KEYS), target={"max_share_unique": 0.1}, model="arx", progress=False)
