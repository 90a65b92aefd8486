"""Benchmark of ``sdckit.external_risk`` (Mlodak's external risk) on data shaped like the paper's.

Mlodak, Pietrzak & Jozefowski computed the external risk of about 88,000 records with a pairwise
loop that took about 8 days in R. Two seeded synthetic cases of that size:

* ``keys``: 9 categorical keys (Zipf-like, :func:`synthetic.make_keys`) and 6 skewed continuous
  variables; the released file is a protected copy with local suppressions (2 % of the key
  values set to missing) and multiplicative noise on the continuous variables (sd 3 %); the
  alternative source is the original file; identities known (correct links reported).
  Target (issue 6): under 2 s.
* ``integers``: 9 integer-valued variables declared continuous (values 1..R_j, R_j = 2, 3, 5, 8,
  10, 12, 16, 20, 30, Zipf-like), 3 % of the values missing in each file independently; the
  same records in both files. Few distinct values and missing values used to make the blocking
  compare about half of all pairs (quadratic). Target: under 5 s.

Every variable is available (p_j = 1), tolerance d* = 0.05, one-to-one first-found linking.

Prints a markdown table (best of ``--repeats`` runs, default 3):

    case | records | variables | paired | correct links | seconds | target | ok?

The exit code is always 0.

Usage::

    python benchmarks/external_risk.py [--n 88000[,2000,...]] [--case all|keys|integers] [--repeats 3] [--check]

``--check`` also runs the direct pairwise computation on the first 2,000 external records against
the whole released file and compares the pairing flags and the links (slow; informative).
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

import sdckit  # noqa: E402
from _common import best_of, fmt_s, markdown_table, parse_sizes, print_conditions  # noqa: E402
from synthetic import _draw_codes, make_keys  # noqa: E402

TARGETS = {"keys": 2.0, "integers": 5.0}
KEYS = [f"k{j}" for j in range(9)]
CONT = [f"x{j}" for j in range(6)]
INT_CARDS = (2, 3, 5, 8, 10, 12, 16, 20, 30)
INTS = [f"v{j}" for j in range(len(INT_CARDS))]


def make_files(n: int, seed: int = 0):
    """The ``keys`` case: (released, external)."""
    keys = make_keys(n, n_keys=9, cards=(2, 3, 5, 8, 10, 12, 16, 20, 30), seed=seed, weights=False)
    rng = np.random.default_rng(seed + 1)
    cont = {c: np.round(rng.lognormal(mean=8 + j * 0.3, sigma=1.0, size=n), 0) for j, c in enumerate(CONT)}
    original = keys.with_columns([pl.Series(c, v) for c, v in cont.items()]).with_columns(
        pl.Series("pid", np.arange(n))
    )
    supp = [pl.when(pl.Series(rng.random(n) < 0.02)).then(None).otherwise(pl.col(k)).alias(k) for k in KEYS]
    noise = [(pl.col(c) * pl.Series(1 + rng.normal(0, 0.03, n))).alias(c) for c in CONT]
    released = original.with_columns(supp).with_columns(noise)
    return released, original


def make_integer_files(n: int, seed: int = 0, missing: float = 0.03):
    """The ``integers`` case: (released, external), integer-valued floats with missing values."""
    rng = np.random.default_rng(seed + 2)
    x = np.column_stack([(_draw_codes(rng, card, n) + 1).astype(float) for card in INT_CARDS])
    files = []
    for _ in range(2):
        y = x.copy()
        y[rng.random(y.shape) < missing] = np.nan
        files.append(
            pl.DataFrame({v: y[:, j] for j, v in enumerate(INTS)})
            .fill_nan(None)
            .with_columns(pl.Series("pid", np.arange(n)))
        )
    return files[0], files[1]


CASES = {
    "keys": (make_files, KEYS + CONT, {c: "continuous" for c in CONT}, "9 categorical + 6 continuous"),
    "integers": (make_integer_files, INTS, "continuous", "9 integer-valued continuous, 3 % missing"),
}


def _method_kw(value: str) -> dict:
    """``method=`` (or ``algorithm=`` in sdckit versions before the rename, to time old code)."""
    params = inspect.signature(sdckit.external_risk).parameters
    return {"method": value} if "method" in params else {"algorithm": value}


def run_case(case: str, n: int, repeats: int, check: bool) -> list:
    make, variables, scales, label = CASES[case]
    released, external = make(n)
    kw = dict(scales=scales, tolerance=0.05)
    dt, res = best_of(lambda: sdckit.external_risk(released, external, variables, id="pid", **kw), repeats)
    paired, correct = int(np.sum(res.paired)), int(np.sum(res.correct))
    row = [
        case,
        f"{n:,}",
        label,
        f"{paired:,} ({100 * paired / n:.1f} %)",
        f"{correct:,}",
        fmt_s(dt),
        f"< {TARGETS[case]:g} s",
        "yes" if dt < TARGETS[case] else "NO",
    ]
    if check:
        m = min(2000, n)
        t = time.perf_counter()
        slow = sdckit.external_risk(released, external.head(m), variables, **kw, **_method_kw("pairwise"))
        fast = sdckit.external_risk(released, external.head(m), variables, **kw)
        same = bool(np.array_equal(slow.paired, res.paired[:m]) and np.array_equal(slow.linked_to, fast.linked_to))
        print(
            f"{case}: pairwise check on the first {m:,} external records: {time.perf_counter() - t:.1f} s, "
            f"same pairing flags and links: {same}"
        )
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=parse_sizes, default=[88_000], help="records, comma-separated (default 88000)")
    ap.add_argument("--case", choices=("all", *CASES), default="all")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    print_conditions()
    print(
        f"# external_risk benchmark ({platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        "shared machine: timings may be contended)\n"
    )
    rows = []
    for case in CASES if args.case == "all" else (args.case,):
        for n in args.n:
            try:
                rows.append(run_case(case, n, args.repeats, args.check))
            except Exception:  # report, never fail
                traceback.print_exc()
    markdown_table(
        ["case", "records", "variables", "paired", "correct links", "seconds", "target", "ok?"], "llllrrrl", rows
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
