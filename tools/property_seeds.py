"""Run every hypothesis property test of the suite under several fixed seeds.

    python tools/property_seeds.py --seeds 20          # seeds 0..19
    python tools/property_seeds.py --seeds 5 --start 100

Each seed is one pytest run of the property tests only (``--hypothesis-seed=N``), so that a
failure names the seed that reproduces it. Exits non-zero when any seed fails.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"


def property_tests() -> list[str]:
    """Node ids of the test functions decorated with hypothesis's ``@given``."""
    ids = []
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                names = {getattr(d.func if isinstance(d, ast.Call) else d, "id", "") for d in node.decorator_list}
                if "given" in names:
                    ids.append(f"tests/{path.name}::{node.name}")
    return ids


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--start", type=int, default=0)
    args = ap.parse_args(argv)
    ids = property_tests()
    failed = []
    for seed in range(args.start, args.start + args.seeds):
        rc = subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--hypothesis-seed={seed}", *ids],
            cwd=TESTS.parent,
        )
        print(f"seed {seed}: {'passed' if rc == 0 else 'FAILED'} ({len(ids)} property tests)", flush=True)
        if rc != 0:
            failed.append(seed)
    print(f"{args.seeds - len(failed)} seeds passed, {len(failed)} failed{': ' + str(failed) if failed else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
