"""Griffe extension for the API reference: make the static view of sdckit match run time.

The docs are built from the source without importing sdckit. This extension puts right what
differs from run time, and turns the reStructuredText bits of the numpydoc docstrings into
Markdown:

* ``sdckit.scenario.accepts_scenario`` adds a keyword-only ``scenario=None`` parameter to a
  measure (``inspect.signature`` shows it); the same parameter is added to every function
  decorated with ``accepts_scenario``.
* ``from .frequencies import frequencies`` in a package rebinds the name to the function, but
  the static view keeps the submodule of the same name, so ``sdckit.frequencies`` would
  document the module ``sdckit.risk.frequencies``. Such names of the top package are pointed at
  the function (or class) of the same name inside that module.
* a package of sdckit lists its names as imports under ``if TYPE_CHECKING:`` and imports each
  on first use (``sdckit._lazy``), so they exist at run time: the static view, which takes such
  imports for type checkers only, counts them as run-time names (``from .risk import *`` then
  lends every name of ``sdckit.risk``).
* ``.. math::`` blocks become ``\\[ ... \\]`` blocks and ``:math:`x``` becomes ``\\( x \\)``
  (typeset by MathJax through pymdownx.arithmatex); ``:func:`x```, ``:class:`x``` and the other
  roles become code, linked to the API reference when ``x`` is a public name of sdckit.

Loaded by ``mkdocs.yml`` (plugins > mkdocstrings > handlers > python > options > extensions).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

_ROLE = re.compile(r":(func|class|meth|attr|mod|obj|data|exc):`(~?)\.?([^`]+)`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_MATH_DIRECTIVE = re.compile(r"^(\s*)\.\. math::\s*(.*)$")
_BULLET = re.compile(r"^(\s*)[*-] \S")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _list_items(text: str) -> str:
    """Bullet items continued with 2 spaces (reStructuredText) -> 4 spaces (Markdown); a blank
    line before the next bullet when an item holds a blank line (else Markdown merges them)."""
    out: list[str] = []
    item = None  # indentation of the current bullet
    loose = False  # the current item holds a blank line
    for line in text.split("\n"):
        m = _BULLET.match(line)
        if m:
            if loose and item == len(m.group(1)) and out and out[-1].strip():
                out.append("")
            item, loose = len(m.group(1)), False
        elif item is not None and not line.strip():
            loose = True
        elif item is not None:
            if _indent(line) <= item:
                item = None
            else:
                line = "  " + line
        out.append(line)
    return "\n".join(out)


def _math_blocks(text: str) -> str:
    """``.. math:: expr`` (with its indented continuation lines) -> a ``\\[ expr \\]`` block."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _MATH_DIRECTIVE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, first = m.group(1), m.group(2)
        body = [first] if first.strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > len(indent)):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        if first.strip():
            expr = [first.strip()] + textwrap.dedent("\n".join(body[1:])).split("\n") if len(body) > 1 else [first.strip()]
        else:
            expr = textwrap.dedent("\n".join(body)).strip("\n").split("\n")
        out += ["", indent + "\\["] + [indent + "    " + ln if ln.strip() else "" for ln in expr] + [indent + "\\]", ""]
    return "\n".join(out)


def _to_markdown(text: str, public: set[str]) -> str:
    text = _list_items(_math_blocks(text))
    text = _MATH_ROLE.sub(lambda m: f"\\({m.group(1)}\\)", text)

    def role(m: re.Match) -> str:
        tilde, target = m.group(2), m.group(3)
        name = target.removeprefix("sdckit.")
        if name in public:
            return f"[`{name}`][sdckit.{name}]"
        return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"  # ~a.b.c shows c, as in Sphinx

    return _ROLE.sub(role, text)


def _walk(obj: griffe.Object, seen: set[str]):
    if obj.path in seen:
        return
    seen.add(obj.path)
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member, seen)


class SdckitDocs(griffe.Extension):
    """Show ``scenario=``, resolve ``sdckit.<name>`` as Python does, and convert RST to Markdown."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        if not any(str(d.value).split(".")[-1] == "accepts_scenario" for d in func.decorators):
            return
        if "scenario" in func.parameters:
            return
        params = list(func.parameters)
        cut = next((i for i, p in enumerate(params) if p.kind is griffe.ParameterKind.var_keyword), len(params))
        extra = griffe.Parameter("scenario", kind=griffe.ParameterKind.keyword_only, default="None")
        func.parameters = griffe.Parameters(*params[:cut], extra, *params[cut:])

    def on_alias_instance(self, *, alias: griffe.Alias, **kwargs: Any) -> None:
        parent = alias.parent
        if parent is not None and parent.is_init_module and parent.path.split(".")[0] == "sdckit":
            alias.runtime = True  # a lazy name of the package (sdckit._lazy): there at run time

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != "sdckit" or getattr(pkg, "_sdckit_docs_done", False):
            return
        pkg._sdckit_docs_done = True  # type: ignore[attr-defined]  (griffe 1 and 2 name this event differently)
        public: set[str] = set()
        for name, member in list(pkg.members.items()):
            if not member.is_alias or name.startswith("_"):
                continue
            try:
                target = member.final_target
            except (griffe.AliasResolutionError, griffe.CyclicAliasError):
                continue
            inner = target.members.get(name) if target.is_module else None
            if inner is not None and not inner.is_module:
                pkg.set_member(name, griffe.Alias(name, f"{target.path}.{name}", parent=pkg))
                public.add(name)
            elif not target.is_module:
                public.add(name)
        for obj in _walk(pkg, set()):
            if obj.docstring is not None:
                obj.docstring.value = _to_markdown(obj.docstring.value, public)

    on_package_loaded = on_package  # the name of the event in griffe 1
