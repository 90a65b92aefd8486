"""The README's list of layers is the tested one, and ``cli.py``'s docstring lists the commands
the command line has.

* README.md's numbered list after "Layers only import downwards" names, item by item, the
  modules of each layer of ``LAYERS`` (``tests/test_architecture.py``, the list the import rules
  are checked against), bottom first, and no other module of sdckit;
* the module docstring of ``sdckit.cli`` names every command of ``sdckit --help`` as
  ````sdckit <command> ...````, in the order ``--help`` lists them, and no other.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import sdckit
import sdckit.cli
from test_architecture import LAYERS

SRC = Path(sdckit.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[1]
#: a numbered item of a markdown list, with its indented continuation lines
ITEM = re.compile(r"^(\d+)\. (.*(?:\n {3}.*)*)", re.MULTILINE)


def _readme_layers(text: str) -> list[tuple[int, str]]:
    """The numbered items of the list that follows "Layers only import downwards"."""
    part = text.split("Layers only import downwards", 1)[1]
    block = part.split("\n\n", 2)[1]  # the paragraph, then the list
    return [(int(n), body) for n, body in ITEM.findall(block)]


def _module(token: str) -> str | None:
    """The layer name a code span of the README names (``engines/`` -> ``engines``, ``io.py`` ->
    ``io``, ``sdckit/__init__.py`` -> ``""``), or None when it is not a top-level module of
    sdckit (``SdcProblem``, ``assess``)."""
    if token in ("sdckit/__init__.py", "sdckit"):
        return ""
    name = token.removesuffix("/").removesuffix(".py")
    return name if (SRC / name / "__init__.py").exists() or (SRC / f"{name}.py").exists() else None


def _named(body: str) -> set[str]:
    found = {_module(t) for t in re.findall(r"`([^`]+)`", body)}
    if "package namespace" in body:
        found.add("")
    return {m for m in found if m is not None}


def test_the_readme_lists_the_tested_layers():
    items = _readme_layers((ROOT / "README.md").read_text(encoding="utf-8"))
    assert [n for n, _ in items] == list(range(1, len(items) + 1)), "the README's layers are numbered 1, 2, ..."
    readme = [sorted(_named(body)) for _, body in items]
    tested = [sorted(layer) for layer in LAYERS]
    assert readme == tested, (
        "README.md's layer list differs from LAYERS in tests/test_architecture.py; bottom first, it should name "
        + "; ".join(
            f"{i}. {', '.join(m or 'the package namespace' for m in layer)}" for i, layer in enumerate(tested, 1)
        )
    )


def test_the_readme_check_reads_an_item_and_its_names():
    text = (
        "Layers only import downwards, and so on. Bottom first:\n\n"
        "1. `_core` (kernels) and `SdcProblem`;\n"
        "2. `engines/`, `io.py`, `datasets/`\n"
        "   (data access);\n"
        "3. the package namespace (`sdckit/__init__.py`), `cli.py`.\n\n"
        "A module may import ..."
    )
    items = _readme_layers(text)
    assert [n for n, _ in items] == [1, 2, 3]
    assert [sorted(_named(b)) for _, b in items] == [["_core"], ["datasets", "engines", "io"], ["", "cli"]]


def _commands() -> list[str]:
    """The commands of ``sdckit --help``, in its order."""
    parser = sdckit.cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def _documented(doc: str) -> list[str]:
    """The commands a docstring names as ````sdckit <command>```` (``<command>`` is a
    placeholder, not a command)."""
    return re.findall(r"``sdckit ([a-z][a-z_-]*)\b", doc)


def test_the_cli_docstring_lists_every_command():
    doc = sdckit.cli.__doc__ or ""
    assert _documented(doc) == _commands(), "sdckit/cli.py's docstring: one entry per command, in --help's order"


def test_the_cli_docstring_check_reads_the_commands():
    assert _documented("``sdckit <command> ...``\n``sdckit freq DATA``\n    x\n``sdckit micro-agg X``") == [
        "freq",
        "micro-agg",
    ]
