"""The bad-input catalogue's size: every ``tests/test_bad_inputs_*.py`` module together holds at
least 150 cases more than the protection methods' catalogue held before issue 36.

The cases are counted as pytest collects them (every parametrised case is one test item), in a
separate pytest process over whichever catalogue modules exist: a module added later is counted
without a change here, and a module that fails to import fails this test instead of shrinking
the count.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: the test items of tests/test_bad_inputs_protect.py before issue 36 (its CASES and PARAMS, 526,
#: with its other tests: 546 collected)
PROTECT_BEFORE = 546
#: the new cases issue 36 asks for, over all its points
NEW_CASES = 150


def catalogue_modules() -> list[Path]:
    return sorted(p for p in TESTS.glob("test_bad_inputs_*.py") if p.name != Path(__file__).name)


def collected_cases(modules: list[Path]) -> Counter:
    """Test items per module, as ``pytest --collect-only`` lists them."""
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         *map(str, modules)],
        capture_output=True, text=True, cwd=TESTS.parent, env=os.environ.copy(),
    )  # fmt: skip
    assert res.returncode == 0, f"the catalogue does not collect cleanly:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    items = [line for line in res.stdout.splitlines() if "::" in line]
    return Counter(Path(line.split("::", 1)[0]).name for line in items)


def test_catalogue_modules_are_found():
    names = [p.name for p in catalogue_modules()]
    assert "test_bad_inputs_protect.py" in names and "test_bad_inputs_cli.py" in names


def test_catalogue_holds_at_least_150_new_cases():
    modules = catalogue_modules()
    counts = collected_cases(modules)
    assert set(counts) == {p.name for p in modules}, f"a module collects no case: {counts}"
    total = sum(counts.values())
    assert total >= PROTECT_BEFORE + NEW_CASES, (
        f"{total} cases ({dict(counts)}); expected >= {PROTECT_BEFORE + NEW_CASES}"
    )
