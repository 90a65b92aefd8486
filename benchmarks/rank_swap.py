"""Benchmark of ``rank_swap`` beside sdcMicro's ``rankSwap``, timed in turns on the same data.

Data (seeded): n records of two continuous variables, ``a`` ~ Gamma(2, scale 10) (skewed, as
incomes) and ``b`` ~ N(0, 1), at n = 10^5 and 10^6. Cases: the defaults (top and bottom 5 %
pooled, the swap range from R0 = 0.95: about 6.8 % of the ranks) and a swap range of 1 %
(sdcMicro's ``P = 0.01``, a share).

sdckit is timed two ways: the pure-Python loop (what every install runs) and, when Numba is
installed (``pip install "sdckit[fast]"``), the compiled loop with Numba loaded (its one-off
import and loading of the cached machine code, about 0.5-1 s idle, are not in the figure; see
``sdckit._core._rank_swap_jit``). Both give the same file as the plain loop (tests/
test_protect_rank_swap.py).

sdcMicro runs in R (``Rscript``): ``library(sdcMicro)`` when it is installed, or the functions
of an R file given with ``--r-source`` (one that defines ``rankSwap`` like sdcMicro's, e.g. made
from sdcMicro's sources where the package cannot be installed). Each round times sdckit (both
ways), then sdcMicro in a fresh R process on the same data (a CSV file; only the call is timed),
so both run under the same load; the table gives the median of the rounds (wall and CPU
seconds). A sdcMicro run slower than ``--slow`` seconds is not repeated. sdcMicro lists the free
ranks of every window (work n x W), so its time grows with the square of n at a fixed share.

Without R the sdcMicro columns show the figures recorded below (``RECORDED``).

Usage::

    python benchmarks/rank_swap.py --r-source /path/to/rankswap.R
    python benchmarks/rank_swap.py --quick      # 10^5 only, 3 rounds
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from _common import base_parser, load_average, markdown_table, print_conditions  # noqa: E402
from sdckit._core import _rank_swap_jit  # noqa: E402
from sdckit.protect.rank_swap import rank_swap  # noqa: E402

#: (n, case) -> sdcMicro rankSwap wall / CPU seconds, medians measured with this script
#: (sdcMicro's rankSwap R and C++ code in R 4.2.2 with Rcpp, as sdcMicro is not installable there)
#: on 2026-12-02, AMD EPYC, 2 cores shared with other jobs, load average 11-19 (docs/protection.md)
RECORDED: dict[tuple[int, str], tuple[float, float]] = {
    (100_000, "defaults (R0 = 0.95)"): (1.087, 0.310),
    (100_000, "swap range 1 %"): (0.420, 0.111),
    (1_000_000, "defaults (R0 = 0.95)"): (691.287, 139.688),
    (1_000_000, "swap range 1 %"): (31.900, 6.982),
}

CASES = {"defaults (R0 = 0.95)": {}, "swap range 1 %": {"swap_range": 1.0}}
R_CALL = {"defaults (R0 = 0.95)": "", "swap range 1 %": ", P = 0.01"}


def _data(n: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({"a": rng.gamma(2.0, 10.0, n), "b": rng.normal(size=n)})


def _time_sdckit(df: pl.DataFrame, kw: dict, compiled: bool) -> tuple[float, float]:
    saved = _rank_swap_jit.use_jit
    if not compiled:
        _rank_swap_jit.use_jit = lambda m: False  # type: ignore[assignment]
    try:
        w, c = time.perf_counter(), time.process_time()
        rank_swap(df, ["a", "b"], seed=1, **kw)
        return time.perf_counter() - w, time.process_time() - c
    finally:
        _rank_swap_jit.use_jit = saved  # type: ignore[assignment]


def _r_program(csv: str, case: str, r_source: str | None) -> str:
    load = f'source("{r_source}")' if r_source else "suppressMessages(library(sdcMicro))"
    return (
        f"{load}\n"
        f'd <- read.csv("{csv}")\n'
        f't <- system.time(x <- rankSwap(d, c("a", "b"), seed = 1L{R_CALL[case]}))\n'
        'cat(t[["elapsed"]], t[["user.self"]] + t[["sys.self"]], "\\n")\n'
    )


def _time_sdcmicro(csv: str, case: str, r_source: str | None) -> tuple[float, float] | None:
    res = subprocess.run(
        ["Rscript", "-e", _r_program(csv, case, r_source)], capture_output=True, text=True, timeout=3600
    )
    if res.returncode != 0:
        print(f"(sdcMicro run failed: {res.stderr.strip()[-300:]})", file=sys.stderr)
        return None
    wall, cpu = (float(x) for x in res.stdout.split()[-2:])
    return wall, cpu


def _median(pairs: list[tuple[float, float]]) -> tuple[float, float] | None:
    if not pairs:
        return None
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def _cell(x: tuple[float, float] | None) -> str:
    return "-" if x is None else f"{x[0]:.3f} / {x[1]:.3f}"


def _ratio(anchor, ours) -> str:
    if anchor is None or ours is None:
        return "-"
    return f"{anchor[0] / ours[0]:.0f}x / {anchor[1] / ours[1]:.0f}x"


def main() -> int:
    ap = base_parser(__doc__, sizes_default="1e5,1e6", quick_help="10^5 only, 3 rounds")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per case (median reported; default 5)")
    ap.add_argument("--r-source", default=None, help="an R file defining rankSwap (when sdcMicro is not installed)")
    ap.add_argument("--slow", type=float, default=60.0, help="a sdcMicro run slower than this is not repeated (s)")
    args = ap.parse_args()
    print_conditions()
    sizes = args.sizes or ([10**5] if args.quick else [10**5, 10**6])
    rounds = 3 if args.quick else args.rounds
    have_r = shutil.which("Rscript") is not None
    have_numba = _rank_swap_jit._importable()
    if have_numba:
        import numba  # noqa: F401  (loaded, so its one-off cost is not in the figures)

        _rank_swap_jit.swap_partners_jit(10, 3, np.random.default_rng(0), 8, 84)  # compiled or loaded
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            df = _data(n, args.seed)
            csv = os.path.join(tmp, f"data_{n}.csv")
            df.write_csv(csv)
            for case, kw in CASES.items():
                _time_sdckit(df, kw, compiled=False)  # warm-up
                py, jit, r = [], [], []
                for _ in range(rounds):
                    py.append(_time_sdckit(df, kw, compiled=False))
                    if have_numba:
                        jit.append(_time_sdckit(df, kw, compiled=True))
                    slow = r and r[-1][0] > args.slow
                    if have_r and not slow:
                        got = _time_sdcmicro(csv, case, args.r_source)
                        if got is not None:
                            r.append(got)
                anchor = _median(r) if r else RECORDED.get((n, case))
                source = f"{len(r)} runs" if r else ("recorded" if anchor else "not measured")
                mp, mj = _median(py), _median(jit)
                rows.append(
                    [f"{n:,}", case, _cell(mp), _cell(mj), f"{_cell(anchor)} ({source})", _ratio(anchor, mp)]
                    + [_ratio(anchor, mj)]
                )
                print(f"  {n:,} {case}: done (load {load_average()})", file=sys.stderr, flush=True)
    print(f"rank_swap(data, ['a', 'b'], seed=1) beside sdcMicro rankSwap, median of {rounds} rounds in turns,")
    print("seconds as wall / CPU (CPU: user + system of the process)\n")
    markdown_table(
        [
            "records",
            "case",
            "sdckit, pure Python",
            "sdckit, compiled (Numba)",
            "sdcMicro rankSwap",
            "sdcMicro / pure Python",
            "sdcMicro / compiled",
        ],
        "rlrrrrr",
        rows,
    )
    print("\nOne thread everywhere: the swap loops are single-threaded (sdckit and sdcMicro alike).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
