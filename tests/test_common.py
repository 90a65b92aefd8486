"""Common checks run over a registry of every public measure (scikit-learn style).

Each entry says how to call the measure on the S002 reference table; every measure must:
leave the input untouched, give the same per-record results whatever the row order, return
aggregates only from ``to_dict()`` (JSON-ready) and ``summary()``, and return the caller's
frame type from ``to_frame()``.
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
from conftest import S002_KEYS, as_backend, s002_table

REGISTRY = {
    "frequencies": lambda d: sdckit.frequencies(d, S002_KEYS, weight="w"),
    "k_anonymity": lambda d: sdckit.k_anonymity(d, S002_KEYS, k=[2, 3, 5], weight="w"),
    "threshold_rule": lambda d: sdckit.threshold_rule(d, S002_KEYS, max_dimension=3, frequency_threshold=[1, 2, 2]),
    "individual_risk": lambda d: sdckit.individual_risk(d, S002_KEYS, weight="w"),
    "l_diversity": lambda d: sdckit.l_diversity(d, S002_KEYS, "Health"),
    "t_closeness": lambda d: sdckit.t_closeness(d, S002_KEYS, "Health"),
    "suda": lambda d: sdckit.suda(d, S002_KEYS),
    # original vs itself (the common checks need one table); tests/test_utility.py has its own pairs
    "information_loss": lambda d: sdckit.information_loss(d, d, S002_KEYS + ["w"]),
    "variant_loss": lambda d: sdckit.variant_loss(d, d, S002_KEYS + ["w"], records=True),
    # original vs itself; the domains' category labels are part of a table of published estimates
    # (tests/test_estimates_change.py has its own pairs): Residence is left out so that the check
    # below that no record label ("Urban") leaks still bites on every other field
    "estimates_change": lambda d: sdckit.estimates_change(d, d, keys=S002_KEYS[1:], weight="w"),
    # continuous-variable risk, original vs itself on the numeric column
    "interval_disclosure": lambda d: sdckit.interval_disclosure(d, d, ["w"]),
    "outliers": lambda d: sdckit.outliers(d, ["w"], quantile=0.8),
    "relative_interval_risk": lambda d: sdckit.relative_interval_risk(d, ["w"], joint=True, keys=S002_KEYS[:2]),
    "combined_risk": lambda d: sdckit.combined_risk(d, S002_KEYS[:2], ["w"]),
    "confidentiality_plot": lambda d: sdckit.confidentiality_plot(d, d, ["w"]),
    "categorical_confidentiality_plot": lambda d: sdckit.categorical_confidentiality_plot(d, d, S002_KEYS, weight="w"),
    "loglinear_risk": lambda d: sdckit.loglinear_risk(d, S002_KEYS, weight="w"),
    "population_uniques": lambda d: sdckit.population_uniques(d, S002_KEYS, weight="w"),
    # the table as both register and sample (two data arguments; tests/test_register.py has real pairs)
    "register_risk": lambda d: sdckit.register_risk(d, d, S002_KEYS, sampling_fraction=0.1, model="independence"),
    # cells of a magnitude table: the key labels are the published table's own (Residence left out)
    # information loss of types 2 and 3, original vs itself (tests/test_analysis_change.py has its pairs)
    "analysis_change": lambda d: sdckit.analysis_change(d, d, keys=S002_KEYS[1:3], variables=["w"], min_records=1),
    "dominance_rules": lambda d: sdckit.dominance_rules(d, S002_KEYS[1:2], ["w"]),
    # the table as original, synthetic file and control (tests/test_synthetic*.py have real files);
    # the keys leave Residence out: the cells that differ most are published aggregates
    "synthetic_risk": lambda d: sdckit.synthetic_risk(d, d, d, keys=S002_KEYS[1:], records=True, seed=1),
    "synthetic_utility": lambda d: sdckit.synthetic_utility(d, d, keys=S002_KEYS[1:3], variables="w"),
}

# measures whose to_frame() is a small table of aggregates, not one row per record: the row-order
# check compares the two frames as they are (numbers to 1e-12)
AGGREGATE_FRAMES = {"population_uniques", "estimates_change", "dominance_rules", "analysis_change", "synthetic_utility"}

# measures whose per-record output refers to row positions or needs a richer pair of files: their
# common checks (aggregates only, no mutation, row order, caller's frame type) are in
# tests/test_linkage.py (PAIR_REGISTRY)
CHECKED_ELSEWHERE = {
    "record_linkage_risk",
    "external_risk",
    "rmd_interval_disclosure",
    "search",
}  # search: test_search.py


#: every protection method, called on the S002 table (the common checks below)
PROTECT_REGISTRY = {
    "global_recode": lambda d: sdckit.global_recode(d, ["Education"], mapping=EDUCATION_MAP),
    "top_bottom_coding": lambda d: sdckit.top_bottom_coding(d, ["w"], value=50.0, replacement=50.0),
    "local_suppression": lambda d: sdckit.local_suppression(d, S002_KEYS, k=2),
    "suppress_records": lambda d: sdckit.suppress_records(d, S002_KEYS, k=2),
    "suppress_by_risk": lambda d: sdckit.suppress_by_risk(d, S002_KEYS, weight="w", threshold=0.2),
    "pram": lambda d: sdckit.pram(d, ["Education"], seed=1),
    "microaggregation": lambda d: sdckit.microaggregation(d, ["w"], group_size=3),
    "add_noise": lambda d: sdckit.add_noise(d, ["w"], noise=50, seed=1),
    "rank_swap": lambda d: sdckit.rank_swap(d, ["w"], swap_range=20, top_percent=0, bottom_percent=0, seed=1),
    "rounding": lambda d: sdckit.rounding(d, ["w"], base=5, method="controlled", seed=1),
    "microaggregation_gower": lambda d: sdckit.microaggregation_gower(
        d, ["w", "Education"], distance_variables=["Gender", "Education", "w"], seed=1
    ),
}


# protection methods that need households and a geography (S002 has neither): the same checks
# (input untouched, rows, columns, types and pandas index kept, replay) are in their own test files
PROTECT_CHECKED_ELSEWHERE = {"record_swap"}

EDUCATION_MAP = {
    "Primary incomplete": "Primary",
    "Primary complete": "Primary",
    "Secondary incomplete": "Secondary",
    "Secondary complete": "Secondary",
    "Post-secondary": "Post-secondary",
}


def test_registry_covers_public_measures():
    public = {name for name in sdckit.__all__ if callable(getattr(sdckit, name)) and name[0].islower()}
    io = {"read_data", "read_metadata", "write_data", "tune_memory", "assess"}  # assess: tests/test_report.py
    protect = set(PROTECT_REGISTRY) | PROTECT_CHECKED_ELSEWHERE
    assert public - io - CHECKED_ELSEWHERE - protect == set(REGISTRY)


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
