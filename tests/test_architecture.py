"""The architecture holds: layers import what they may, public functions stay readable,
every public parameter name is in the glossary, results are immutable.

These tests read the source (``ast``) and the glossary (``docs/glossary.md``); they do not run
any measure except where said.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import sdckit

SRC = Path(sdckit.__file__).resolve().parent  # the package as installed (what users get)
ROOT = Path(__file__).resolve().parents[1]  # the repository (docs, pyproject.toml)
FRAME_LIBRARIES = {"polars", "pandas", "pyarrow", "narwhals", "duckdb", "pyspark"}
#: modules that may use a frame library: the engines, and file input/output
FRAME_ALLOWED = ("engines/", "io.py", "datasets/")


def _modules():
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _imported_roots(path: Path) -> set[str]:
    """Top-level package of every import in the file, at any depth (inside functions too)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_imports_no_frame_library():
    offenders = {
        str(p.relative_to(SRC)): sorted(_imported_roots(p) & FRAME_LIBRARIES) for p in (SRC / "_core").rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_engines_import_a_frame_library():
    """Record-level frame work happens in the engines; public modules ask their engine."""
    offenders = {}
    for p in _modules():
        rel = p.relative_to(SRC).as_posix()
        if rel.startswith(FRAME_ALLOWED):
            continue
        found = _imported_roots(p) & FRAME_LIBRARIES
        if found:
            offenders[rel] = sorted(found)
    assert offenders == {}


def test_no_upward_imports():
    """_core imports nothing of sdckit outside _core; engines import no public module."""
    for p in _modules():
        rel = p.relative_to(SRC).as_posix()
        tree = ast.parse(p.read_text())
        rel_imports = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0]
        for n in rel_imports:
            target = (n.module or "").split(".")[0]
            if rel.startswith("_core/"):
                assert n.level == 1, f"{rel} imports from outside _core ({'.' * n.level}{n.module})"
            if rel.startswith("engines/") and n.level == 2:
                # the file readers (io) open paths for the engine; nothing above the engines
                assert target in ("_core", "_errors", "_validation", "io"), f"{rel} imports sdckit.{target}"


def _code_lines(func_node: ast.AST, source_lines: list[str]) -> int:
    """Lines of code in a function body: no docstring, comments or blank lines."""
    body = func_node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(getattr(body[0], "value", None), ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    if not body:
        return 0
    lines = source_lines[body[0].lineno - 1 : func_node.end_lineno]
    return sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))


def _public_functions():
    out = []
    for name in sdckit.__all__:
        obj = getattr(sdckit, name)
        if inspect.isfunction(obj):
            out.append((name, inspect.unwrap(obj)))
    return out


@pytest.mark.parametrize("name, func", _public_functions(), ids=[n for n, _ in _public_functions()])
def test_public_function_bodies_are_short(name, func):
    """No public function body over 80 lines of code: long work is split into named steps."""
    path = Path(inspect.getsourcefile(func))
    lines = path.read_text().splitlines()
    node = next(
        n
        for n in ast.walk(ast.parse("\n".join(lines)))
        if isinstance(n, ast.FunctionDef)
        and n.name == func.__name__
        and n.lineno == func.__code__.co_firstlineno
        or isinstance(n, ast.FunctionDef)
        and n.name == func.__name__
        and any(d.lineno == func.__code__.co_firstlineno for d in n.decorator_list)
    )
    assert _code_lines(node, lines) <= 80


def _glossary_names(section: str) -> set[str]:
    text = (ROOT / "docs" / "glossary.md").read_text()
    part = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for row in re.findall(r"^\|\s*(`[^|]+)\|", part, flags=re.M):
        names |= set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", row))
    return names


def test_glossary_is_readable():
    params = _glossary_names("Parameters")
    assert {"data", "keys", "weight", "alpha", "k", "method", "seed"} <= params


@pytest.mark.parametrize("name, func", _public_functions(), ids=[n for n, _ in _public_functions()])
def test_parameter_names_follow_the_glossary(name, func):
    params = _glossary_names("Parameters")
    sig = inspect.signature(getattr(sdckit, name))
    unknown = [p for p in sig.parameters if p not in params and p not in ("args", "kwargs")]
    assert unknown == [], f"{name}: parameters {unknown} are not in docs/glossary.md"


def _public_class_signatures():
    """``(name, callable)`` for the constructor and every public method of the public classes.

    Left out: the constructors of result classes (the library builds results; their fields are
    the result names of the glossary) and, of the engines, everything but the constructor (the
    engine protocol's methods are called by the measures, not by users)."""
    from sdckit import engines
    from sdckit.results import Result

    classes = {n: getattr(sdckit, n) for n in sdckit.__all__ if inspect.isclass(getattr(sdckit, n))}
    classes = {n: c for n, c in classes.items() if not issubclass(c, BaseException)}
    engine_classes = {f"engines.{n}": getattr(engines, n) for n in ("PolarsEngine", "DuckDBEngine", "SparkEngine")}
    out = []
    for name, cls in {**classes, **engine_classes}.items():
        if not issubclass(cls, Result) and cls.__init__ is not object.__init__:
            out.append((f"{name}.__init__", cls.__init__))
        if name in engine_classes:
            continue
        for m, f in inspect.getmembers(cls, inspect.isfunction):
            if not m.startswith("_") and (f.__module__ or "").startswith("sdckit"):
                out.append((f"{name}.{m}", f))
    return out


def test_class_signatures_are_found():
    names = {n for n, _ in _public_class_signatures()}
    for expected in (
        "SdcProblem.__init__",
        "Scenario.__init__",
        "engines.DuckDBEngine.__init__",
        "FrequencyResult.plot",
        "SudaResult.to_frame",
        "SdcProblem.to_recipe",
    ):
        assert expected in names


@pytest.mark.parametrize("name, func", _public_class_signatures(), ids=[n for n, _ in _public_class_signatures()])
def test_class_parameter_names_follow_the_glossary(name, func):
    """Constructors and methods of the public classes name their parameters from the glossary
    (a result method also from its own table there)."""
    params = _glossary_names("Parameters") | _glossary_names("Parameters of result methods")
    sig = inspect.signature(func)
    kinds = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    unknown = [
        p for p, v in sig.parameters.items() if p not in params and p not in ("self", "cls") and v.kind not in kinds
    ]
    assert unknown == [], f"{name}: parameters {unknown} are not in docs/glossary.md"


@pytest.mark.parametrize("name, func", _public_functions(), ids=[n for n, _ in _public_functions()])
def test_weight_is_keyword_only(name, func):
    sig = inspect.signature(getattr(sdckit, name))
    if "weight" in sig.parameters:
        assert sig.parameters["weight"].kind is inspect.Parameter.KEYWORD_ONLY


def test_result_arrays_are_read_only(s002):
    res = sdckit.individual_risk(s002, ["Residence", "Gender", "Education", "Labor"], weight="w")
    before = res.global_risk
    with pytest.raises(ValueError):
        res.risk[:] = 0
    with pytest.raises(ValueError):
        res.frequencies.fk[0] = 99
    kan = sdckit.k_anonymity(res.frequencies)
    with pytest.raises(TypeError):
        kan.n_violations[2] = 0
    assert res.global_risk == before


def test_repr_shows_headline_numbers(s002):
    res = sdckit.individual_risk(s002, ["Residence", "Gender", "Education", "Labor"], weight="w")
    text = repr(res)
    assert text.startswith("<IndividualRiskResult") and "global_risk=" in text and "n=10" in text
    assert f"{res.global_risk:.6g}" in text


def test_every_result_class_reprs_without_error():
    """Every public result class keeps the base repr (headline numbers, no record values)."""
    from sdckit.results import Result

    classes = [getattr(sdckit, n) for n in sdckit.__all__ if inspect.isclass(getattr(sdckit, n))]
    for cls in classes:
        if issubclass(cls, Result):
            assert cls.__repr__ is Result.__repr__, cls.__name__


def test_version_is_single_sourced():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in text and re.search(r"^version\s*=", text, flags=re.M) is None
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", sdckit.__version__)


def test_py_typed_marker():
    assert (SRC / "py.typed").exists()


def test_frozen_dict_is_json_and_pickle_friendly():
    import json
    import pickle

    from sdckit.results._base import FrozenDict

    d = FrozenDict({"a": 1, "b": np.float64(2.5).item()})
    assert json.loads(json.dumps(d)) == {"a": 1, "b": 2.5}
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(TypeError):
        d["a"] = 2
