"""The registry of sdckit's public protection methods and measures.

Every public protection method and measure is declared once, next to its function (see
``sdckit._declare``): its parameters with their glossary names, types, ranges or choices,
defaults and one-line help texts, the roles a workflow fills from the scenario, the data it
reads, whether it is random and what it changes. This module collects the declarations;
the workflow (:class:`sdckit.SdcProblem`), the recipe schema, the ``sdckit protect --step``
parser and the docs' parameter tables are derived from it.

Examples
--------
>>> from sdckit import registry
>>> [d.name for d in registry.methods()][:3]
['add_noise', 'global_recode', 'local_suppression']
>>> registry.get("pram").param("pd").range_text()
'[0, 1]'
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from functools import cache

from . import protect, risk, utility
from ._declare import COMMON, LIST_SEPARATOR, REQUIRED, Declaration, Param, declaration, with_help
from ._errors import SdcError

__all__ = ["Declaration", "Param", "get", "measures", "methods", "out_of_core", "parameter_tables", "step_method"]


def _collect(kind: str, *modules) -> tuple[Declaration, ...]:
    out = {}
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            decl = declaration(obj)
            if decl is not None and decl.kind == kind:
                # the public function, with its wrappers (which may add scenario=, progress=, id=)
                common = tuple(n for n in inspect.signature(obj).parameters if n in COMMON)
                out[name] = with_help(replace(decl, func=obj, common=common))
    return tuple(out[n] for n in sorted(out))


@cache
def methods() -> tuple[Declaration, ...]:
    """Every public protection method, by name."""
    return _collect("method", protect)


@cache
def measures() -> tuple[Declaration, ...]:
    """Every public measure (risk and information loss), by name."""
    return _collect("measure", risk, utility)


def out_of_core() -> tuple[str, ...]:
    """The measures, then the methods, that the out-of-core engines (DuckDB, Spark) run: those
    whose declaration says ``out_of_core=True`` (``sdckit.engines.OUT_OF_CORE_MEASURES`` is
    written from it by ``tools/registry_docs.py``)."""
    return tuple(d.name for d in (*measures(), *methods()) if d.out_of_core)


def get(name: str) -> Declaration:
    """The declaration of a method or measure, by its function name."""
    for decl in (*methods(), *measures()):
        if decl.name == name:
            return decl
    known = ", ".join(d.name for d in (*methods(), *measures()))
    raise SdcError(f"name: unknown method or measure {name!r}; expected one of {known}")


def step_method(name: str, parameters=()) -> Declaration:
    """The protection method a step names: a method name, or a short name (``recode``,
    ``suppress``, ``noise``, ``microaggregate``, ``swap``, ...) shared by the methods that
    declare it as an alias; of those, the first that takes every given parameter
    (``suppress:threshold=0.1`` is risk-based suppression, ``swap:geography=...`` record
    swapping)."""
    decls = methods()
    for decl in decls:
        if decl.name == name:
            return decl
    candidates = [d for d in decls if name in d.aliases]
    if not candidates:
        shorts = sorted({a for d in decls for a in d.aliases})
        raise SdcError(
            f"step: unknown step {name!r}; expected one of {', '.join(shorts)} "
            f"or a method name ({', '.join(d.name for d in decls)})"
        )
    for decl in candidates:
        if all(p in decl.names for p in parameters):
            return decl
    unknown = [p for p in parameters if not any(p in d.names for d in candidates)]
    accepted = sorted({n for d in candidates for n in d.names})
    raise SdcError(
        f"{', '.join(unknown) or ', '.join(parameters)}: not a parameter of step {name} "
        f"({' or '.join(d.name for d in candidates)}); expected some of {', '.join(accepted)}"
    )


# ---------------------------------------------------------------------------------------------
# the docs' parameter tables
# ---------------------------------------------------------------------------------------------
def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _default_text(p: Param) -> str:
    if p.default is REQUIRED:
        return "required"
    return f"`{p.default!r}`".replace("'", '"')


def _table(decl: Declaration) -> list[str]:
    rows = [
        "| parameter | type | default | range or choices | from the scenario | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for p in decl.params:
        role = f"`{p.role}`" if p.role else ""
        kind = p.type + (" or {variable: value}" if p.per_variable else "")
        rows.append(
            f"| `{p.qualified}` | {_cell(kind)} | {_cell(_default_text(p))} | {_cell(p.range_text())} | {role} | "
            f"{_cell(p.help)} |"
        )
    return rows


def _section(decl: Declaration) -> list[str]:
    facts = [f"Data: {', '.join(f'`{i}`' for i in decl.inputs)}."]
    if decl.changes:
        facts.append(f"Changes: {decl.changes}.")
    if decl.aliases:
        facts.append(f"Step names: {', '.join(f'`{a}`' for a in (decl.name, *decl.aliases))}.")
    facts.append("Random: yes (`seed`)." if decl.random else "Random: no.")
    return [f"### `{decl.name}`", "", f"{_cell(decl.title)}.", "", " ".join(facts), "", *_table(decl), ""]


def parameter_tables() -> str:
    """The parameter tables of every method and measure, as Markdown (``docs/parameters.md``)."""
    lines = [
        "# Parameters of the methods and measures",
        "",
        "<!-- Written by tools/registry_docs.py from sdckit.registry; do not edit by hand. -->",
        "",
        "Every protection method and measure, with its parameters: type, default, range or choices,",
        "the scenario role a workflow (`SdcProblem`, `sdckit protect --step`) fills it from when it is",
        "not given, and its meaning. Types: `column` one column name, `columns` one or several,",
        "`column_sets` several lists of names, `number`/`numbers` one number or several, `int`, `bool`,",
        "`choice` one of the listed values, `text`/`texts`, `seed` an integer >= 0 or none, `mapping`,",
        "`any` (see the function's reference). On the command line (`--step`), list items are",
        f"separated by `{LIST_SEPARATOR}` and a mapping is written `OLD=NEW{LIST_SEPARATOR}OLD=NEW`.",
        f"Every function also takes, where it applies, {', '.join(f'`{c}`' for c in COMMON)}.",
        "",
        "## Protection methods",
        "",
    ]
    for decl in methods():
        lines += _section(decl)
    lines += ["## Measures", ""]
    for decl in measures():
        lines += _section(decl)
    return "\n".join(lines).rstrip("\n") + "\n"
