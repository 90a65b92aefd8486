"""Common checks run over a registry of every public measure (scikit-learn style).

Each entry calls the measure on the S002 reference table (the calls are in tests/examples.py);
every measure must: leave the input untouched, give the same per-record results whatever the
row order, return aggregates only from ``to_dict()`` (JSON-ready) and ``summary()``, and return
the caller's frame type from ``to_frame()``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import sdckit
from conftest import as_backend, s002_table
from examples import SMALL_ELSEWHERE, SMALL_EXAMPLES, call_small
from sdckit import registry

#: every measure and method with a call on the S002 table (tests/examples.py, SMALL_EXAMPLES)
MEASURES = {d.name for d in registry.measures()}
REGISTRY = {n: (lambda d, n=n: call_small(n, d)) for n in SMALL_EXAMPLES if n in MEASURES}
PROTECT_REGISTRY = {n: (lambda d, n=n: call_small(n, d)) for n in SMALL_EXAMPLES if n not in MEASURES}

# measures whose to_frame() is a small table of aggregates, not one row per record: the row-order
# check compares the two frames as they are (numbers to 1e-12)
AGGREGATE_FRAMES = {"population_uniques", "estimates_change", "dominance_rules", "analysis_change", "synthetic_utility"}


def test_registry_covers_public_measures():
    public = {name for name in sdckit.__all__ if callable(getattr(sdckit, name)) and name[0].islower()}
    io = {"read_data", "read_metadata", "write_data", "tune_memory", "assess"}  # assess: tests/test_report.py
    search = {"search"}  # tests/test_search.py
    assert public - io - search == set(SMALL_EXAMPLES) | set(SMALL_ELSEWHERE)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_aggregates_only_and_json(name):
    res = REGISTRY[name](s002_table())
    d = res.to_dict()
    text = json.dumps(d)  # JSON-ready

    # no per-record vector: no list of length n anywhere in the payload
    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            assert len(x) != 10, f"{name}: per-record list in to_dict()"
            for v in x:
                walk(v)

    walk(d)
    assert "Urban" not in text  # labels of records are not leaked
    s = res.summary()
    assert str(s) and "<table>" in s.to_html()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_row_order_invariance_and_no_mutation(name):
    d = s002_table()
    before = d.clone()
    base = REGISTRY[name](d).to_frame()
    assert d.equals(before)
    perm = np.random.default_rng(3).permutation(d.height)
    shuffled = REGISTRY[name](d[perm]).to_frame()
    assert isinstance(base, pl.DataFrame) and base.columns == shuffled.columns
    if name in AGGREGATE_FRAMES:  # the same table, up to the rounding of sums taken in another order
        assert_frame_equal(base, shuffled, rel_tol=1e-12, abs_tol=1e-12)
        return
    for col in base.columns:
        np.testing.assert_allclose(base[col].to_numpy()[perm].astype(float), shuffled[col].to_numpy().astype(float))


@pytest.mark.parametrize("name", sorted(REGISTRY))
@pytest.mark.parametrize("backend", ["pandas", "pyarrow"])
def test_to_frame_returns_caller_type(name, backend):
    d = s002_table()
    native = as_backend(d, backend)
    out = REGISTRY[name](native).to_frame()
    assert type(out).__module__.split(".")[0] == backend


def test_import_is_light():
    """Importing sdckit does not import scipy, pandas, pyarrow, matplotlib or pyreadstat."""
    code = (
        "import sys, sdckit; heavy = [m for m in ('scipy', 'pandas', 'pyarrow', 'matplotlib', 'pyreadstat', 'jinja2', "
        "'duckdb', 'pyspark') if m in sys.modules]; print(heavy); sys.exit(1 if heavy else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("backend", ["polars", "pandas", "pyarrow"])
@pytest.mark.parametrize("name", sorted(PROTECT_REGISTRY))
def test_protection_keeps_rows_columns_type_and_input(name, backend):
    """Every protection method: the input is untouched, the output is the caller's frame type
    with the same rows, columns and order, the log is aggregates only (JSON, no per-record
    list), and a second call gives the same output (random methods through their seed)."""
    table = s002_table()
    d = as_backend(table, backend)
    before = table.clone()
    res = PROTECT_REGISTRY[name](d)
    assert pl.from_pandas(d).equals(before) if backend == "pandas" else pl.DataFrame(d).equals(before)
    out = res.data
    assert type(out) is type(d)
    frame = pl.from_pandas(out) if backend == "pandas" else pl.DataFrame(out)
    assert frame.columns == table.columns and frame.height == table.height
    changed = set(res.n_changed)
    for col in table.columns:
        if col not in changed:
            assert frame[col].equals(table[col]), f"{name} changed {col}"
    payload = json.loads(json.dumps(res.to_dict()))
    assert payload["method"] == name

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            assert len(x) != table.height, f"{name}: per-record list in to_dict()"
            for v in x:
                walk(v)

    walk(payload["n_changed_by_category"])
    walk(payload["details"])
    again = PROTECT_REGISTRY[name](d).data
    again = pl.from_pandas(again) if backend == "pandas" else pl.DataFrame(again)
    assert again.equals(frame)
    assert str(res.summary()) and "<table>" in res.summary().to_html()
