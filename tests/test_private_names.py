"""No private name crosses the folders of sdckit: ``from X import _name`` (one leading
underscore; dunders such as ``__version__`` are public) only imports from the importing
module's own top-level part of the package (``protect``, ``risk``, ``workflow``, ``_core``,
``io``, ``_deprecation``, ...: the first part of the path under ``sdckit``).

A helper two parts share gets a public name in a module meant to be shared (``_core``,
``_validation``, ``_categories``, ``io``, ...), below both by the layer rules
(``tests/test_architecture.py``). The test reads the source (``ast``); it imports nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import sdckit

SRC = Path(sdckit.__file__).resolve().parent

#: files allowed a private import across parts while a move is under way (none now: the
#: assessment layer gave the shared helpers public names)
MOVING: set[str] = set()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _top(module: str) -> str:
    """The top-level part of a module of sdckit: ``sdckit.risk.suda`` -> ``risk``; ``""`` for
    the package namespace itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _module_of(path: Path) -> tuple[str, str]:
    """The module's dotted name and the package its relative imports start from."""
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    name = ".".join(parts)
    return name, name.rpartition(".")[0]


def _base(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def private_imports(source: str, module: str, package: str) -> list[str]:
    """Each ``from X import _name`` of ``source`` (the module ``module``, its relative imports
    read from ``package``) whose ``X`` is another top-level part of sdckit, as ``line: X._name``.
    ``from sdckit import _core`` names the part ``_core`` itself (a module of the layers, not a
    private name of another part)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = _base(node, package)
        if base.split(".")[0] != "sdckit":
            continue
        for alias in node.names:
            if not _private(alias.name) or base == "sdckit" or _top(base) == _top(module):
                continue
            found.append(f"{node.lineno}: {base}.{alias.name}")
    return found


def _private_imports_of(path: Path) -> list[str]:
    return private_imports(path.read_text(encoding="utf-8"), *_module_of(path))


def test_no_private_name_is_imported_across_the_parts_of_sdckit():
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in MOVING:
            continue
        found = _private_imports_of(path)
        if found:
            offenders[rel] = found
    assert offenders == {}, "give the helper a public name in a module meant to be shared"


def test_the_allowance_names_files_that_still_need_it():
    """The files moved by the assessment layer still import a private name across parts (when
    one no longer does, its entry goes)."""
    assert sorted(rel for rel in MOVING if (SRC / rel).exists() and not _private_imports_of(SRC / rel)) == []


def test_the_check_sees_each_kind_of_import():
    """Relative and absolute imports, at module level and inside a function, across parts; not
    within a part, not a dunder, not a part of the package named by ``from sdckit import``."""
    source = (
        "from ..protect.recode import _a, b\n"
        "from sdckit.io import _c\n"
        "from .suda import _d\n"
        "from sdckit.risk.frequencies import _e\n"
        "from .. import _core, __version__\n"
        "from .._core.suppression import _f\n"
        "def f():\n"
        "    from ..workflow import _g\n"
    )
    found = private_imports(source, "sdckit.risk.probe", "sdckit.risk")
    assert found == [
        "1: sdckit.protect.recode._a",
        "2: sdckit.io._c",
        "6: sdckit._core.suppression._f",
        "8: sdckit.workflow._g",
    ]
    assert private_imports("from ._steps import _x\n", "sdckit.risk", "sdckit.risk") == []  # a package's own
    assert private_imports("from .risk import _x\n", "sdckit", "sdckit") == ["1: sdckit.risk._x"]
