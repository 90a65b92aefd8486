"""The contributing page names files, lists and functions a contributor edits: each must exist,
so that the page cannot drift from the code it describes."""

from __future__ import annotations

import re
from pathlib import Path

import sdckit.engines

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "contributing.md").read_text()


def test_every_file_the_page_names_exists():
    paths = set(re.findall(r"`((?:src/sdckit|tests|docs|tools)/[\w/.<>-]+)`", PAGE))
    paths |= {f"src/sdckit/{p}" for p in re.findall(r"`((?:protect|risk|utility|engines)/[\w.]+\.py)`", PAGE)}
    concrete = {p for p in paths if "<" not in p}
    assert len(concrete) >= 8  # the page names real files (the parse itself works)
    assert sorted(p for p in concrete if not (ROOT / p).exists()) == []


def test_every_list_the_page_names_is_where_it_says():
    where = {
        "EXAMPLES": "tests/examples.py",
        "_CLASSES": "src/sdckit/engines/__init__.py",
        "OUT_OF_CORE_MEASURES": "src/sdckit/engines/_declared.py",
    }
    for name, path in where.items():
        assert f"`{name}`" in PAGE
        assert re.search(rf"^{name}\b.*=", (ROOT / path).read_text(), re.M), f"{name} not defined in {path}"


def test_every_test_the_page_names_exists():
    """The page's table of forgotten steps names tests as ``file.py::test_name``."""
    named = re.findall(r"`(test_\w+\.py)::(test_\w+)`", PAGE)
    assert len(named) >= 5
    missing = [f"{f}::{t}" for f, t in named if f"def {t}(" not in (ROOT / "tests" / f).read_text()]
    assert missing == []


def test_the_engine_members_the_page_names_exist():
    for name in sdckit.engines.ENGINES:
        cls = sdckit.engines.make_engine.__globals__["_engine_class"](name)
        for member in ("name", "capabilities", "settings", "shared", "owns"):
            assert hasattr(cls, member), f"{cls.__name__} lacks {member}"
