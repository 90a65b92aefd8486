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
        "METHOD_EXAMPLES": "tests/test_registry_acceptance.py",
        "MEASURE_EXAMPLES": "tests/test_registry_acceptance.py",
        "CASES": "tests/test_engine_protocol.py",
        "_CLASSES": "src/sdckit/engines/__init__.py",
        "OUT_OF_CORE_MEASURES": "src/sdckit/engines/base.py",
    }
    for name, path in where.items():
        assert f"`{name}`" in PAGE
        assert re.search(rf"^{name}\b.*=", (ROOT / path).read_text(), re.M), f"{name} not defined in {path}"


def test_the_engine_members_the_page_names_exist():
    for name in sdckit.engines.ENGINES:
        cls = sdckit.engines.make_engine.__globals__["_engine_class"](name)
        for member in ("name", "capabilities", "settings", "shared", "owns"):
            assert hasattr(cls, member), f"{cls.__name__} lacks {member}"
