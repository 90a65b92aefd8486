"""Benchmark of ``sdckit.microaggregation`` (MDAV, k = 3) on seeded normal data with 5 variables,
with sdcMicro's times on the same kind of data beside ours.

Cases: exact MDAV (``method="mdav"``: the groups of the plain O(n^2) algorithm, which are
sdcMicro's) at 10^4 and 10^5 records; the blocked variant (``method="mdav_blocked"``: MDAV
inside blocks of 128 to 256 records) at 10^5 (to compare its loss with exact MDAV's on the same
data) and 10^6 records. For each: seconds (best of ``--repeats``; a run slower than 30 s is not
repeated), number of groups and the information loss SSE/SST (sums of squares on the
standardised variables).

sdcMicro (reference machine, 2 cores): ``microaggregation(method = "mdav", aggr = 3)`` on
``rnorm`` data with 5 columns: 0.49 s at 10^4 and 90 s at 10^5 (growing as n^2.26, so about
4.5 hours at 10^6). Target (2 cores): exact MDAV at 10^5 in under 10 s.

``--check`` also compares the exact groups at 10^4 with the plain O(n^2) algorithm (a few
seconds). Data generation is not timed. The exit code is always 0: benchmarks report, they do
not fail CI.

Usage::

    python benchmarks/microaggregation.py
    python benchmarks/microaggregation.py --quick      # 10^4 only, one run each
    python benchmarks/microaggregation.py --check
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
import scipy.spatial  # noqa: E402, F401  (loaded before timing, as R's packages are)

from _common import base_parser, best_of, fmt_s, markdown_table, print_conditions  # noqa: E402
from sdckit._core.microaggregation import mdav_groups_plain  # noqa: E402
from sdckit.protect.microaggregation import microaggregation  # noqa: E402

CASES = [(10**4, "mdav"), (10**5, "mdav"), (10**5, "mdav_blocked"), (10**6, "mdav_blocked")]
QUICK = [(10**4, "mdav"), (10**4, "mdav_blocked")]
SDCMICRO = {10**4: "0.49 s", 10**5: "90 s", 10**6: "about 16,000 s (n^2.26)"}
TARGETS = {(10**5, "mdav"): 10.0}
SLOW_RUN = 30.0
COLUMNS = [f"V{j + 1}" for j in range(5)]


def _data(n: int, seed: int) -> pl.DataFrame:
    X = np.random.default_rng(seed).normal(size=(n, len(COLUMNS)))
    return pl.DataFrame({c: X[:, j] for j, c in enumerate(COLUMNS)})


def _row(n: int, method: str, data: pl.DataFrame, repeats: int, check: bool) -> list:
    t, res = best_of(lambda: microaggregation(data, COLUMNS, method=method, group_size=3), repeats, SLOW_RUN)
    target = TARGETS.get((n, method))
    exact = "-"
    if check and method == "mdav" and n <= 10**4:
        plain = mdav_groups_plain(data.to_numpy(), 3)
        exact = "same groups" if np.array_equal(plain, res.details["group_ids_rows"]) else "DIFFERENT"
    return [
        f"{n:,}",
        method,
        fmt_s(t),
        f"{res.details['n_groups']:,}",
        f"{res.details['sse_sst']:.5f}",
        SDCMICRO.get(n, "-") if method == "mdav" or n == 10**6 else "-",
        (f"< {target:.0f} s " + ("ok" if t < target else "MISSED")) if target else "-",
        exact,
    ]


def main() -> None:
    ap = base_parser(__doc__, quick_help="10^4 only, one run each")
    ap.add_argument("--check", action="store_true", help="compare the 10^4 groups with the plain algorithm")
    args = ap.parse_args()
    print_conditions()
    repeats = 1 if args.quick else args.repeats
    rows = []
    for n, method in QUICK if args.quick else CASES:
        rows.append(_row(n, method, _data(n, args.seed), repeats, args.check))
    markdown_table(
        ["n", "method", "seconds", "groups", "SSE/SST", "sdcMicro", "target", "plain algorithm"], "rlrrrrll", rows
    )
    print(
        "\nmdav: exact (sdcMicro's groups); mdav_blocked: MDAV inside blocks of 128-256 records "
        "(groups do not cross blocks: compare its SSE/SST with mdav's at 10^5)."
    )


if __name__ == "__main__":
    main()
