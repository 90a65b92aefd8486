"""The engine seam stays narrow: results import no engine, results are complete at construction,
and every operation of the engine protocol has a caller outside ``engines/``.

These tests read the source (``ast``), as ``tests/test_architecture.py`` does, except the last
ones, which run a measure to check the records handle.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import numpy as np
import pytest

import sdckit

SRC = Path(sdckit.__file__).resolve().parent


def _modules(folder: str | None = None):
    root = SRC / folder if folder else SRC
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _imports_engines(path: Path, package: tuple[str, ...] | None = None) -> list[str]:
    """Every import of ``sdckit.engines`` (or a module under it) in the file, at any depth
    (relative imports resolved from ``package``, the file's own package by default)."""
    if package is None:
        package = path.relative_to(SRC.parent).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: {a.name}" for a in node.names if a.name.startswith("sdckit.engines")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1]) + ([node.module] if node.module else [])
            else:
                base = (node.module or "").split(".")
            names = [".".join(base + [a.name]) for a in node.names]
            found += [f"line {node.lineno}: {n}" for n in names if n.startswith("sdckit.engines")]
    return found


def test_results_import_no_engine_module():
    """A result builds its frames through the records handle the measure gave it."""
    offenders = {p.name: f for p in _modules("results") if (f := _imports_engines(p))}
    assert offenders == {}


def test_the_engine_import_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from ..engines import local_engine\nimport sdckit.engines.polars\n"
        "def f():\n    from .. import engines\n    from ._base import fmt\n"
    )
    found = _imports_engines(bad, ("sdckit", "results"))
    assert found == ["line 1: sdckit.engines.local_engine", "line 2: sdckit.engines.polars", "line 4: sdckit.engines"]


def _late_setattrs(path: Path) -> list[str]:
    """``object.__setattr__`` calls outside a ``__post_init__`` (construction) or an
    ``__init__`` of a non-dataclass helper."""
    found = []

    def visit(node, where):
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else where
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == "__setattr__"
                and isinstance(child.func.value, ast.Name)
                and child.func.value.id == "object"
                and where != "__post_init__"
            ):
                found.append(f"line {child.lineno} (in {where})")
            visit(child, inner)

    visit(ast.parse(path.read_text()), "<module>")
    return found


def test_results_are_complete_at_construction():
    """A frozen result is never changed after construction: ``object.__setattr__`` only in
    ``__post_init__`` (freezing the fields is part of construction); a result with something
    more (the ``id=`` column) is a new one, built with ``dataclasses.replace``."""
    offenders = {p.name: f for p in _modules("results") if (f := _late_setattrs(p))}
    assert offenders == {}


def test_the_setattr_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "class R:\n"
        "    def __post_init__(self):\n        object.__setattr__(self, 'a', 1)\n"
        "    def _with(self, v):\n        object.__setattr__(self, 'b', v)\n        return self\n"
    )
    assert _late_setattrs(bad) == ["line 5 (in _with)"]


# ----------------------------------------------------------------------------------------------
# the protocol: every operation has a caller outside engines/
# ----------------------------------------------------------------------------------------------
PROTOCOLS = ("Engine", "StoredRecords", "TableLike")

#: operations with one calling file outside engines/, kept because no general operation serves
#: that caller (the reason); the test fails when one gets a second caller or loses its last
ONE_CALLER = {
    "group_sums": "information loss's per-category sums of many columns: one multi-threaded GROUP BY "
    "per factor over the records (patterns sums one weight only)",
    "label_numbers": "the log-linear model's numeric labels depend on the label table's type (numbers, "
    "text that parses, a factor), which label_values' Python list loses",
    "with_suppressed": "the protected records of a suppression decided on distinct patterns (local "
    "suppression out of core, suppress_by_risk on every engine; both through _suppression_engine): the "
    "engine's own table, nothing record-level through Python out of core",
}


def _protocol_members() -> dict[str, list[str]]:
    tree = ast.parse((SRC / "engines" / "base.py").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in PROTOCOLS:
            out[node.name] = [n.name for n in node.body if isinstance(n, ast.FunctionDef)]
    return out


def _properties() -> set[str]:
    tree = ast.parse((SRC / "engines" / "base.py").read_text())
    return {
        n.name
        for c in tree.body
        if isinstance(c, ast.ClassDef) and c.name in PROTOCOLS
        for n in c.body
        if isinstance(n, ast.FunctionDef) and any(getattr(d, "id", None) == "property" for d in n.decorator_list)
    }


def _calling_files() -> dict[str, set[str]]:
    """Operation -> the files outside engines/ that call it (``x.name(...)``; a property:
    ``x.name``)."""
    props = _properties()
    seen: dict[str, set[str]] = {}
    for p in _modules():
        rel = p.relative_to(SRC).as_posix()
        if rel.startswith("engines/"):
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                seen.setdefault(node.func.attr, set()).add(rel)
            elif isinstance(node, ast.Attribute) and node.attr in props:
                seen.setdefault(node.attr, set()).add(rel)
    return seen


def test_protocol_size():
    members = _protocol_members()
    assert set(members) == set(PROTOCOLS)
    assert (
        sum(len(v) for v in members.values()) == 33
    )  # 44 before issue 38, 37 before the measures' queries moved to _<measure>_sql.py


def test_every_protocol_operation_has_a_caller_outside_the_engines():
    callers = _calling_files()
    unused = [m for ms in _protocol_members().values() for m in ms if not callers.get(m)]
    assert unused == []


def test_one_caller_operations_are_listed_with_a_reason():
    callers = _calling_files()
    members = [m for ms in _protocol_members().values() for m in ms]
    single = {m for m in members if len(callers.get(m, ())) == 1}
    assert single == set(ONE_CALLER), {m: sorted(callers.get(m, ())) for m in single ^ set(ONE_CALLER)}
    assert all(len(reason) > 40 for reason in ONE_CALLER.values())


# ----------------------------------------------------------------------------------------------
# the records handle
# ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    import polars as pl

    rng = np.random.default_rng(3)
    return pl.DataFrame(
        {
            "pid": np.arange(200) + 1000,
            "a": rng.integers(0, 4, 200),
            "b": rng.choice(["x", "y", "z"], 200),
            "w": rng.uniform(1, 5, 200),
        }
    )


def test_a_result_keeps_the_engines_handle(data):
    from sdckit.engines import Records, local_records

    res = sdckit.frequencies(data, ["a", "b"])
    assert isinstance(res.records, Records) and res.records is local_records()
    assert res.records_source is None  # in memory
    assert pickle.loads(pickle.dumps(res)).to_frame().equals(res.to_frame())


def test_the_id_column_makes_a_new_complete_result(data):
    res = sdckit.frequencies(data, ["a", "b"], id="pid")
    assert res.row_ids[0] == "pid"
    frame = res.to_frame()
    assert frame.columns[0] == "pid" and frame["pid"].to_list() == data["pid"].to_list()
    with pytest.raises(ValueError):
        res.row_ids[1][0] = 0  # frozen at construction


def test_a_result_without_a_handle_says_so(data):
    from dataclasses import fields

    from sdckit.results.uniqueness import PopulationUniquesResult

    res = sdckit.population_uniques(data, ["a", "b"], sampling_fraction=0.1)
    bare = PopulationUniquesResult(**{f.name: getattr(res, f.name) for f in fields(res) if f.name != "records"})
    with pytest.raises(sdckit.SdcError, match="^records: "):
        bare.to_frame()
    assert res.to_frame().shape[0] == len(res.class_sizes)


# ----------------------------------------------------------------------------------------------
# a measure's own queries: built from the engine's dialect, run by the engine
# ----------------------------------------------------------------------------------------------
def test_a_measure_query_is_built_from_the_dialect_and_run_by_the_engine():
    import polars as pl

    pytest.importorskip("duckdb")
    from sdckit.engines import DuckDBEngine
    from sdckit.engines.base import Query, SqlDialect, StoredRecords
    from sdckit.risk import _linkage_sql

    eng = DuckDBEngine()
    assert isinstance(eng, StoredRecords) and isinstance(eng.dialect, SqlDialect)
    table = eng.table(pl.DataFrame({'p "i" d': [1, 2, 2, None]}))
    query = _linkage_sql.n_distinct(eng.dialect, table, 'p "i" d')
    assert isinstance(query, Query) and '"p ""i"" d"' in query.sql and query.into is None
    assert eng.run(_linkage_sql.n_distinct, table, 'p "i" d') == {"n": [2]}


def test_the_dialect_quotes_for_its_engine():
    pytest.importorskip("pyspark")
    from sdckit.engines import SparkEngine
    from sdckit.risk import _linkage_sql

    class Table:  # the query is only built, not run (no Spark session starts)
        view = "v"

    query = _linkage_sql.n_distinct(SparkEngine().dialect, Table(), "a`b")
    assert query.sql == "SELECT count(DISTINCT `a``b`) AS n FROM v"


def test_an_engine_maps_no_per_record_value_to_an_empty_frame(data):
    """A result with nothing per record (a measure of aggregates only) gives an empty frame on
    every engine, as in memory (DuckDB once wrote a SELECT with no column)."""
    pytest.importorskip("duckdb")
    from sdckit.engines import DuckDBEngine

    eng = DuckDBEngine()
    comp = eng.compress(eng.table(data), ["a", "b"])
    assert eng.records_frame(comp, {}).shape == (0, 0)
    assert eng.records_frame(comp, {"x": np.zeros(len(comp.counts))}).height == data.height
