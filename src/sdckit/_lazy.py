"""Lazy names of a package (PEP 562), as SciPy and scikit-learn load theirs.

A package lists what it offers once, as imports under ``if TYPE_CHECKING:`` (so that type
checkers, editors and the docs see every name), and ends with::

    __getattr__, __dir__ = attach(globals())

Importing the package then imports none of those modules: a name is imported from its module
the first time it is asked for (``sdckit.k_anonymity``, ``from sdckit import k_anonymity``)
and kept in the package's namespace; a star import in the block lends every name of that
module's ``__all__``; any other name that is a submodule of the package (``sdckit.io``) is
imported as such. ``import sdckit`` thus costs what the names a program uses cost.

A lazy name may be its submodule's name too (``sdckit.risk.suda``, the function, in
``risk/suda.py``): as after an eager ``from .suda import suda``, the package's attribute stays
the function when the submodule is imported.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pkgutil
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["attach", "lazy_names"]


def lazy_names(path: str) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """The names the ``if TYPE_CHECKING:`` block of the module at ``path`` imports, as
    ``{name: (relative module, attribute)}``, and the modules it star-imports."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    names: dict[str, tuple[str, str]] = {}
    stars: list[str] = []
    for node in tree.body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom):
                continue
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    stars.append(module)
                else:
                    names[alias.asname or alias.name] = (module, alias.name)
    return names, stars


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def attach(namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``: the
    names of its ``if TYPE_CHECKING:`` block (see :func:`lazy_names`), loaded on first use."""
    package = namespace["__name__"]
    names, stars = lazy_names(namespace["__file__"])
    sys.modules[package].__class__ = _package_class(names)

    def __getattr__(name: str) -> Any:
        if name in names:
            module, attr = names[name]
            value = _load(module, attr, package)
        elif (star := _star_module(name)) is not None:
            value = getattr(star, name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def _star_module(name: str):
        for module in stars:
            mod = importlib.import_module(module, package)
            if name in getattr(mod, "__all__", ()):
                return mod
        return None

    def __dir__() -> list[str]:
        starred = {n for m in stars for n in getattr(importlib.import_module(m, package), "__all__", ())}
        submodules = {m.name for m in pkgutil.iter_modules(namespace.get("__path__", []))}
        return sorted(set(namespace) | set(namespace.get("__all__", ())) | set(names) | starred | submodules)

    return __getattr__, __dir__


def _package_class(names: dict) -> type:
    """A module class that keeps a lazy name when the import system sets the package's attribute
    of a submodule of the same name (the name is then loaded on first use, as any other)."""

    class LazyPackage(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            submodule = isinstance(value, types.ModuleType) and value.__name__ == f"{self.__name__}.{name}"
            if not (submodule and name in names):
                super().__setattr__(name, value)

    return LazyPackage


def _load(module: str, attr: str, package: str) -> Any:
    """``module.attr`` (``module`` relative to ``package``), or the submodule ``attr`` of
    ``module`` when it is not an attribute (``from . import io``)."""
    mod = importlib.import_module(module, package)
    if mod.__name__ != package:
        try:
            return getattr(mod, attr)
        except AttributeError:
            pass
    return importlib.import_module(f"{mod.__name__}.{attr}")
