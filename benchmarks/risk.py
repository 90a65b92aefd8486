"""Benchmark of ``sdckit.individual_risk`` with household risk (spec B) on synthetic microdata.

Times ``sdckit.individual_risk(df, keys, weight="w", household="hid")`` on tables made by
:func:`synthetic.make_keys` (7 Zipf-distributed keys with 2..50 categories, string and integer
labels, lognormal weights, households of 1-8 members with the first key and the weight constant
within a household) and prints a markdown table:

    n | case | seconds | records/s | target | ok?

Cases per size:

* ``approx + household`` -- the default method with household risk (the target case);
* ``exact + household`` -- ``method="exact"`` (informative);
* ``approx + household, 5% missing`` -- 5 % of the key values missing (sdcMicro rule; informative);
* ``threshold(0.01)`` -- the mu-ARGUS threshold on an existing result, individual and household
  rule (informative).

Targets (from the issue): 10**6 records with household risk under 1 s (sdcMicro needs about 14 s
for the same size), 10**7 under 10 s, on 2 cores.

Times are the best of ``--repeats`` runs (default 3; a single run when one run takes longer than
30 s). Data generation is not timed. ``--profile`` adds a per-step breakdown through sdckit's
internals (informative only). The exit code is always 0: benchmarks report, they do not fail CI.
On a shared machine the timings may be contended.

Usage::

    python benchmarks/risk.py                  # 1e6 and 1e7
    python benchmarks/risk.py --quick          # 1e5 and 1e6, one run each
    python benchmarks/risk.py --sizes 1e6 --profile
"""

from __future__ import annotations

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
from _common import base_parser, best_of, fmt_s, grouped, markdown_table, print_conditions  # noqa: E402
from synthetic import make_keys  # noqa: E402

KEYS = [f"k{j}" for j in range(7)]
TARGETS = {10**6: 1.0, 10**7: 10.0}  # seconds, approx + household
SLOW_RUN = 30.0


def _time(fn, repeats: int):
    """Best of ``repeats`` runs; a run slower than SLOW_RUN is not repeated."""
    return best_of(fn, repeats, SLOW_RUN)


def _steps(df: pl.DataFrame) -> dict[str, float]:
    """Per-step times through sdckit internals (mirrors ``risk.individual.individual_risk``)."""
    from sdckit._core.frequencies import pattern_frequencies
    from sdckit._core.individual import household_risk, individual_risk_values
    from sdckit._prepare import prepare
    from sdckit.engines import get_engine
    from sdckit.risk.individual import _household_codes

    gather, record_patterns = get_engine().gather, get_engine().patterns

    out: dict[str, float] = {}

    def step(name, fn):
        t = time.perf_counter()
        r = fn()
        out[name] = time.perf_counter() - t
        return r

    prep = step("validate + encode", lambda: prepare(df, KEYS, weight="w", household="hid"))
    ids, patterns, counts, wsum = step(
        "pattern table", lambda: record_patterns(prep.keys.codes, prep.weights, prep.keys.cardinalities)
    )
    fp, Fp = step("pattern frequencies", lambda: pattern_frequencies(patterns, counts, wsum, 1.0))
    rp, _ = step("risk per pattern", lambda: individual_risk_values(fp, Fp, "approx"))
    fk, Fk, r = step("map back", lambda: gather(ids, fp, Fp, rp))
    hh, g = step("household ids", lambda: _household_codes(prep, "hid", 0))
    rg, sg = step("household risk", lambda: household_risk(r, hh, g))
    step("household map back", lambda: gather(hh, rg))
    out["_patterns"] = float(len(counts))
    out["_households"] = float(g)
    return out


def main(argv=None) -> int:
    ap = base_parser(__doc__, sizes_default="1e6,1e7")
    args = ap.parse_args(argv)
    print_conditions()

    sizes = args.sizes or ([10**5, 10**6] if args.quick else [10**6, 10**7])
    repeats = 1 if args.quick else args.repeats

    print(
        f"sdckit {sdckit.__version__}, polars {pl.__version__}, numpy {np.__version__}, "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(
        f"keys: {len(KEYS)} (cardinalities 2,5,10,20,30,40,50, Zipf), weights, households of 1-8 members; "
        f"best of {repeats} run(s); timings on a shared machine may be contended\n"
    )

    warm = make_keys(30_000, seed=args.seed + 1, household=True)
    sdckit.individual_risk(warm, KEYS, weight="w", household="hid")
    sdckit.individual_risk(warm, KEYS, weight="w", household="hid", **grouped(sdckit.individual_risk, method="exact"))

    rows, profiles = [], []
    for n in sizes:
        for missing in (0.0, 0.05):
            df = make_keys(n, missing=missing, seed=args.seed, household=True)
            cases = (
                [("approx + household", "approx")] if missing == 0 else [("approx + household, 5% missing", "approx")]
            )
            if missing == 0:
                cases.append(("exact + household", "exact"))
            res = None
            for label, method in cases:
                try:
                    secs, out = _time(
                        lambda df=df, method=method: sdckit.individual_risk(
                            df, KEYS, weight="w", household="hid", **grouped(sdckit.individual_risk, method=method)
                        ),
                        repeats,
                    )
                    err = None
                except Exception as e:  # report, never fail
                    secs, out, err = float("nan"), None, f"{type(e).__name__}: {e}"
                    traceback.print_exc()
                target, ok = "—", "—"
                if err is None and method == "approx" and missing == 0 and n in TARGETS:
                    target = f"< {TARGETS[n]:g} s"
                    ok = "yes" if secs < TARGETS[n] else "**no**"
                rows.append(
                    (
                        f"{n:,}",
                        label,
                        "error" if err else fmt_s(secs),
                        "—" if err else f"{n / secs:,.0f}",
                        target,
                        err or ok,
                    )
                )
                print(
                    f"  done n={n:,} {label}: {'error' if err else fmt_s(secs) + ' s'}"
                    + (
                        ""
                        if out is None
                        else f" (global risk {out.global_risk:.5f}, household "
                        f"{out.household_global_risk:.5f}, {out.frequencies.n_keys:,} "
                        f"key patterns, {out.n_households:,} households)"
                    ),
                    file=sys.stderr,
                )
                if method == "approx" and missing == 0:
                    res = out
            if res is not None:
                try:
                    secs, thr = _time(lambda res=res: res.threshold(0.01), repeats)
                    rows.append(
                        (
                            f"{n:,}",
                            "threshold(0.01), individual + household rule",
                            fmt_s(secs),
                            f"{n / secs:,.0f}",
                            "—",
                            "—",
                        )
                    )
                except Exception as e:
                    traceback.print_exc()
                    rows.append((f"{n:,}", "threshold(0.01)", "error", "—", "—", f"{type(e).__name__}: {e}"))
                if args.profile:
                    try:
                        profiles.append((n, _steps(df)))
                    except Exception:
                        traceback.print_exc()
            del df, res

    markdown_table(["n", "case", "seconds", "records/s", "target", "ok?"], "rlrrll", rows)

    if profiles:
        names = [k for k in profiles[0][1] if not k.startswith("_")]
        print("\nStep breakdown (seconds, one run each, approx + household):\n")
        markdown_table(
            ["n", "patterns", "households"] + names + ["sum"],
            "rrr" + "r" * (len(names) + 1),
            [
                [f"{n:,}", f"{int(p['_patterns']):,}", f"{int(p['_households']):,}"]
                + [fmt_s(p[k]) for k in names]
                + [fmt_s(sum(p[k] for k in names))]
                for n, p in profiles
            ],
        )
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception:  # pragma: no cover - a benchmark never fails CI
        traceback.print_exc()
    sys.exit(0)
