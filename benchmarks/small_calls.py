"""Benchmark of small calls: the fixed cost of one protection method or measure on a small file,
with a pandas frame (what most users pass) and a Polars frame, against sdcMicro.

Data: sdcMicro's ``testdata`` (4,580 records, 15 columns; the bundled
``tests/data/sdcmicro/testdata.csv``), read by ``pandas.read_csv`` and ``polars.read_csv``
(reading is not timed). Calls:

* ``global_recode(data, "age", breaks=[-1, 15, 30, 45, 60, 100])`` -- sdcMicro's
  ``globalRecode(testdata$age, breaks = c(0, 15, 30, 45, 60, 100))`` (sdcMicro sets the 98
  ages equal to 0 to NA; here a value on the first break is an error, so the first break is -1:
  the same five intervals, every record recoded);
* ``top_bottom_coding(data, "income", value=v, replacement=v, kind="top")`` with v the rounded
  95 % quantile of income -- sdcMicro's ``topBotCoding(testdata$income, value = v,
  replacement = v, kind = "top")``;
* ``l_diversity(data, ["urbrur", "roof", "walls", "sex"], "income")`` -- sdcMicro's
  ``ldiversity(testdata, keyVars = c("urbrur", "roof", "walls", "sex"), ldiv_index = "income")``.

sdcMicro's times (5.8.1, 2-core reference machine): 0.40, 0.035 and 1.4 ms. sdcMicro's
``globalRecode`` and ``topBotCoding`` work on one vector; sdckit's calls take the whole frame
and give back the whole protected frame (``result.data``, built by the call) in the caller's
frame type, and ``l_diversity`` its result object.

Each case: one warm-up call (not timed), then ``--repeats`` timings of ``loops`` calls each
(``loops`` chosen so that one timing lasts about ``--target`` seconds; the garbage collector
stays on, as in a user's program); the table shows the median and the minimum wall time per
call in milliseconds, the median CPU time per call (the process's, all threads), and whether
sdckit beats sdcMicro (by its median wall time; "min only" when only the minimum does). On a
shared machine wall times are noisy: the load average is printed before and after; compare
the minimum and the CPU time.

The exit code is always 0: benchmarks report, they do not fail CI.

Usage::

    python benchmarks/small_calls.py                 # 25 timings of about 0.2 s per case
    python benchmarks/small_calls.py --quick         # 5 timings of about 0.05 s (CI smoke test)
    python benchmarks/small_calls.py --profile       # also the ten costliest functions per case
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402

import sdckit  # noqa: E402
from _common import base_parser, markdown_table, print_conditions  # noqa: E402

TESTDATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "sdcmicro" / "testdata.csv"
BREAKS = [-1, 15, 30, 45, 60, 100]
LDIV_KEYS = ["urbrur", "roof", "walls", "sex"]
#: sdcMicro 5.8.1 on the 2-core reference machine, milliseconds per call
SDCMICRO_MS = {"global_recode": 0.40, "top_bottom_coding": 0.035, "l_diversity": 1.4}


def _calls(pdf: pd.DataFrame) -> dict:
    cut = float(np.round(np.quantile(pdf["income"].to_numpy(), 0.95)))
    return {
        "global_recode": lambda d: sdckit.global_recode(d, "age", breaks=BREAKS),
        "top_bottom_coding": lambda d: sdckit.top_bottom_coding(d, "income", value=cut, replacement=cut, kind="top"),
        "l_diversity": lambda d: sdckit.l_diversity(d, LDIV_KEYS, "income"),
    }


def _time(fn, repeats: int, target: float) -> tuple[float, float, float]:
    """Median and minimum wall seconds per call, and median CPU seconds per call (the process's
    CPU time over all its threads: less sensitive to other jobs on a shared machine), after
    one warm-up call. The garbage collector stays on, as in a user's program (``timeit``
    turns it off, and the cyclic garbage pandas objects leave then piles up and slows every
    call down several times)."""
    fn()
    loops = 1
    while True:  # as timeit's autorange, to about ``target`` seconds per timing
        t = _run(fn, loops)[0]
        if t >= target or loops >= 100_000:
            break
        loops = max(loops * 2, int(loops * target / max(t, 1e-9)))
    runs = [_run(fn, loops) for _ in range(repeats)]
    wall = [w / loops for w, _ in runs]
    cpu = [c / loops for _, c in runs]
    return statistics.median(wall), min(wall), statistics.median(cpu)


def _run(fn, loops: int) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    for _ in range(loops):
        fn()
    return time.perf_counter() - w, time.process_time() - c


def _profile(fn, label: str) -> None:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(200):
        fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(10)
    print(f"\n### {label}: ten costliest functions (200 calls)\n```\n{out.getvalue().strip()}\n```")


def _verdict(median: float, best: float, ref: float) -> str:
    if median < ref:
        return "yes"
    return "min only" if best < ref else "no"


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def main() -> None:
    ap = base_parser(__doc__, quick_help="5 timings of about 0.05 s per case")
    ap.add_argument("--target", type=float, default=None, help="seconds per timing (default 0.2; --quick 0.05)")
    ap.set_defaults(repeats=None)
    args = ap.parse_args()
    print_conditions()
    repeats = args.repeats or (5 if args.quick else 25)
    target = args.target or (0.05 if args.quick else 0.2)
    pdf = pd.read_csv(TESTDATA)
    frames = {"pandas": pdf, "polars": pl.read_csv(TESTDATA)}
    print(f"# small calls on sdcMicro's testdata ({len(pdf):,} records), {os.cpu_count()} cores")
    print(f"load average before: {_load()}\n")
    rows, profiles = [], []
    for name, call in _calls(pdf).items():
        for kind, data in frames.items():
            med, best, cpu = _time(lambda c=call, d=data: c(d), repeats, target)
            ref = SDCMICRO_MS[name]
            verdict = _verdict(1e3 * med, 1e3 * best, ref)
            rows.append(
                [name, kind, f"{1e3 * med:.3f}", f"{1e3 * best:.3f}", f"{1e3 * cpu:.3f}", f"{ref:.3f}", verdict]
            )
            if args.profile:
                profiles.append((lambda c=call, d=data: c(d), f"{name}, {kind}"))
    header = ["call", "frame", "median ms", "min ms", "CPU ms", "sdcMicro ms", "beats sdcMicro"]
    markdown_table(header, "llrrrrl", rows)
    print(f"\nload average after: {_load()} ({repeats} timings per case, about {target:g} s each)")
    for fn, label in profiles:
        _profile(fn, label)


if __name__ == "__main__":
    main()
