"""The architecture holds: layers import what they may, public functions stay readable,
every public parameter name is in the glossary, results are immutable.

These tests read the source (``ast``) and the glossary (``docs/glossary.md``); they do not run
any measure except where said.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
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


#: The layers of sdckit, bottom first (the rule is in test_no_arrow_runs_up_the_layers). A name
#: is the first part of a module's path under ``sdckit`` (a package or a module); ``""`` is
#: ``sdckit/__init__.py``. A new top-level module or package gets its layer here.
LAYERS = (
    # kernels on NumPy arrays, errors, parameter checks, progress, memory tuning, the declaration
    # of a function's parameters (checked through the validation toolkit), the categories and
    # hierarchies the methods and measures share, the lazy loading of a package's names, and the
    # one table of the scenario roles
    ("_core", "_errors", "_deprecation", "_validation", "_progress", "_memory", "_version", "_declare", "_assessed")
    + ("_categories", "_lazy", "_roles"),
    # data access: the engines (all record-level work), the file readers and writers, bundled data
    ("engines", "io", "datasets"),
    # the roles, checked against the data once at the boundary
    ("_prepare", "scenario"),
    # what measures and methods return, and the renderer of the assessment's result (its HTML
    # report, tables and figures): the report imports nothing above ``results``
    ("results", "report"),
    # the public measures and protection methods
    ("risk", "utility", "protect"),
    # the registry: every declared method and measure, read from their modules
    ("registry",),
    # the assessment: the measures table, every measure of the original and its variants
    ("assessment",),
    # the protect-then-measure workflow, recipes and the one-command assessment
    ("workflow",),
    # the interfaces: the package namespace, the command line and the web application (which
    # nothing imports; it may use the commands' helpers)
    ("", "cli", "commands", "app"),
)
_LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.AST, package: str) -> list[str]:
    """The sdckit names an import statement reads: ``import a.b`` -> ``a.b``; ``from p import
    x`` -> ``p.x`` (a module, or a name in ``p``); relative imports resolved from ``package``."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "sdckit"]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        parts = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" for a in node.names] if base.split(".")[0] == "sdckit" else []


def _import_graph() -> dict[str, dict[str, int]]:
    """Module -> {sdckit module it imports: line}. Every import counts, at module level or
    inside a function, relative or absolute."""
    paths = {_module_name(p): p for p in _modules()}

    def module_of(name: str) -> str:
        while name not in paths:
            name = name.rpartition(".")[0]
        return name

    graph: dict[str, dict[str, int]] = {}
    for mod, path in paths.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        out: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text())):
            for name in _imported(node, package):
                target = module_of(name)
                if target != mod:
                    out.setdefault(target, node.lineno)
        graph[mod] = out
    return graph


def _find_cycle(graph: dict[str, dict[str, int]]) -> list[str]:
    """One import circle as ``["a", "b", ..., "a"]`` (empty when there is none)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, todo = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                todo.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                todo.append(iter(sorted(graph.get(nxt, ()))))
    return []


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return _LAYER.get(parts[1] if len(parts) > 1 else "")


def test_import_graph_reads_every_kind_of_import():
    """The graph sees relative and absolute, module- and function-level imports."""
    g = _import_graph()
    assert "sdckit.results.suda" in g["sdckit.risk.suda"]  # from ..results.suda import ... (module level)
    assert "sdckit.assessment" in g["sdckit.workflow.problem"]  # inside SdcProblem.report
    assert "sdckit.io" in g["sdckit.results._base"]  # from ..io import write_records (in a method)
    assert "sdckit.risk.suda" not in g["sdckit.engines"]


def test_find_cycle_finds_a_circle():
    assert _find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {}}) == []
    assert _find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"b": 2}}) == ["b", "c", "b"]
    assert _find_cycle({"a": {"a.x": 1}, "a.x": {"a": 3}}) == ["a", "a.x", "a"]


def test_no_import_circle():
    graph = _import_graph()
    cycle = _find_cycle(graph)
    steps = [f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
    assert not cycle, "import circle: " + " -> ".join(steps + cycle[-1:])


def test_every_module_has_a_layer():
    assert [m for m in _import_graph() if _layer(m) is None] == []


def test_no_arrow_runs_up_the_layers():
    """A module imports from its own layer of LAYERS and the layers below, never from one above;
    every import counts (module level, inside a function, under ``if TYPE_CHECKING``).

    The result classes sit below the measures and methods, because a measure builds its result:
    a result class imports nothing above ``results`` (it may ask the engines for labels or
    per-record output and write through ``io``). The report is a renderer beside the results: it
    draws an :class:`AssessmentResult` and imports nothing above ``results``. The assessment
    (the measures table, every measure of the original and its variants) sits above the
    registry. The workflow sits above the assessment: an :class:`SdcProblem` draws its report,
    and :func:`sdckit.assess` replays recipes through an :class:`SdcProblem`. The package
    namespace and the command line are on top. A piece two modules both need goes down to the
    lower one.
    """
    up = [
        f"{a} (line {line}) -> {b}"
        for a, targets in sorted(_import_graph().items())
        for b, line in sorted(targets.items())
        if _layer(a) is not None and _layer(b) is not None and _layer(b) > _layer(a)
    ]
    assert up == []


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


def test_every_result_class_is_in_the_results_package():
    """What a measure, a protection method or the assessment returns is defined in
    ``sdckit.results``."""
    from sdckit.results import Result

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    found = {f"{c.__module__}.{c.__name__}" for c in subclasses(Result) if c.__module__.startswith("sdckit.")}
    assert {"sdckit.results.protection.ProtectionResult", "sdckit.results.frequencies.FrequencyResult"} <= found
    assert "sdckit.results.assessment.AssessmentResult" in found
    assert {name for name in found if not name.startswith("sdckit.results.")} == set()


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


#: the modules outside engines/ that may hold SQL text: a measure's own queries, next to it
#: (``risk/_linkage_sql.py``), built from the engine's dialect and run by the engine
SQL_MODULE = re.compile(r"^_\w+_sql\.py$")
#: what a query module may import of the engines: the dialect's protocol (for its type hints)
SQL_MODULE_ENGINE_IMPORTS = {"sdckit.engines.base.SqlDialect", "sdckit.engines.base.Query"}
ENGINE_NAMES = ("duckdb", "spark", "polars", "pyspark")


def _is_sql_module(path: Path) -> bool:
    return bool(SQL_MODULE.match(path.name)) and not path.relative_to(SRC).as_posix().startswith("engines/")


def _engine_name_uses(path: Path) -> list[str]:
    """Where a module outside engines/ names an engine, asks which kind it has, or takes the
    default engine without saying why (``get_engine()`` with no argument), or holds SQL text
    (allowed only in a measure's ``_<measure>_sql.py`` module)."""
    found = []
    sql_allowed = _is_sql_module(path)
    for node in ast.walk(ast.parse(path.read_text())):
        # ("polars" is also a frame type, the caller's ``backend``: only the other engines count)
        if isinstance(node, ast.Constant) and node.value in ("duckdb", "spark"):
            found.append(f"line {node.lineno}: the string {node.value!r}")
        elif isinstance(node, ast.Name) and node.id == "is_out_of_core":
            found.append(f"line {node.lineno}: is_out_of_core")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "get_engine" and not node.args:
            if not node.keywords:
                found.append(f"line {node.lineno}: get_engine() with no argument")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "SELECT " in node.value.upper():
            if not sql_allowed:
                found.append(f"line {node.lineno}: SQL text")
    return found


def _sql_module_engine_uses(path: Path) -> list[str]:
    """Where a query module (``_<measure>_sql.py``) names an engine (a string, a name or an
    attribute such as ``DuckDBEngine``, ``spark``) or imports one (anything of ``sdckit.engines``
    but the dialect's protocol type, or an engine's library)."""
    found = []
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    package = ".".join(parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        words = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = re.findall(r"[A-Za-z_]\w*", node.value)
        elif isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
        named = [w for w in words if any(e in w.lower() for e in ENGINE_NAMES)]
        found += [f"line {node.lineno}: names {w}" for w in named]
        if isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: imports {a.name}" for a in node.names if a.name.split(".")[0] in FRAME_LIBRARIES
            ]
        for name in _imported(node, package):
            if name.startswith("sdckit.engines") and name not in SQL_MODULE_ENGINE_IMPORTS:
                found.append(f"line {node.lineno}: imports {name}")
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] in FRAME_LIBRARIES
        ):
            found.append(f"line {node.lineno}: imports {node.module}")
    return found


def test_no_engine_name_or_sql_outside_the_engines():
    """A measure is written once against the Engine protocol: it never asks which engine it has,
    names one, writes SQL, or falls back on the default engine (``engine.local()`` or
    ``engines.local_engine()`` for the small tables; the engine the caller gave otherwise).

    The one place outside engines/ for SQL is a measure's own query module,
    ``_<measure>_sql.py`` beside the measure (splink's shape: the algorithm owns its SQL, the
    backend executes it through ``engine.run``)."""
    offenders = {}
    for p in _modules():
        rel = p.relative_to(SRC).as_posix()
        if rel.startswith("engines/"):
            continue
        found = _engine_name_uses(p)
        if found:
            offenders[rel] = found
    assert offenders == {}


def test_query_modules_name_and_import_no_engine():
    """A ``_<measure>_sql.py`` module builds its queries from the dialect it is given: it names
    no engine and imports none (only the dialect's protocol type, for its hints)."""
    modules = [p for p in _modules() if _is_sql_module(p)]
    assert {p.name for p in modules} >= {"_linkage_sql.py", "_households_sql.py"}
    offenders = {p.relative_to(SRC).as_posix(): f for p in modules if (f := _sql_module_engine_uses(p))}
    assert offenders == {}


def test_the_engine_name_check_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        'def f(eng):\n    if eng.name == "duckdb":\n        return get_engine()\n    return is_out_of_core(eng)\n'
    )
    assert len(_engine_name_uses(bad)) == 3


def test_the_sql_checks_can_fail(tmp_path, monkeypatch):
    """SQL outside a query module is found; in a query module (under a measure's package) an
    engine's name or import is."""
    risk = tmp_path / "sdckit" / "risk"
    risk.mkdir(parents=True)
    monkeypatch.setattr(sys.modules[__name__], "SRC", tmp_path / "sdckit")
    text = (
        "from ..engines.base import SqlDialect\nfrom ..engines import DuckDBEngine\nimport duckdb\n"
        "def q(d):\n    return d.query(f'SELECT count(*) FROM {d.view(t)}')  # spark\n"
        "def r(d):\n    return 'SELECT 1' if d.kind == 'spark' else SparkEngine\n"
    )
    (risk / "_x.py").write_text(text)
    (risk / "_x_sql.py").write_text(text)
    assert sorted(_engine_name_uses(risk / "_x.py")) == [
        "line 5: SQL text",
        "line 7: SQL text",
        "line 7: the string 'spark'",
    ]
    assert _engine_name_uses(risk / "_x_sql.py") == ["line 7: the string 'spark'"]
    found = _sql_module_engine_uses(risk / "_x_sql.py")
    assert "line 2: imports sdckit.engines.DuckDBEngine" in found and "line 3: imports duckdb" in found
    assert "line 7: names spark" in found and "line 7: names SparkEngine" in found
    assert not any("SqlDialect" in f for f in found)
