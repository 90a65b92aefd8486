"""Benchmark of ``sdckit.frequencies`` (spec A.1 / A.1.1) on synthetic microdata.

Times ``sdckit.frequencies(df, keys, weight="w")`` on tables made by
:func:`synthetic.make_keys` (7 Zipf-distributed keys with 2..50 categories, string and integer
labels, lognormal weights) with 0% and 5% missing key values, and prints a markdown table:

    n | missing | weighted | seconds | records/s | target | ok?

Targets (from the performance issue):

* 10**6 records with weights: under 0.3 s; 10**7 records with weights: under 3 s
  (the unweighted 10**6 run is held to the same 0.3 s);
* with 5% missing key values: at most 2x the time of the same table without missing values;
* the same 7 keys stored as float64 (integer values, as pandas reads an integer column with a
  missing value) within 1.3x of the int64 run at 10**6 records (second table).

Times are the best of ``--repeats`` runs (default 3; a single run at 10**7 or when one run
takes longer than 20 s). Data generation is not timed. ``--profile`` adds a per-step
breakdown (validation + key encoding, pattern table with its GROUP BY, the missing-value rule
on the pattern table, mapping back) using sdckit's internal functions; it is informative only.

The exit code is always 0: benchmarks report, they do not fail CI.

Usage::

    python benchmarks/frequencies.py                 # 1e5, 1e6, 1e7
    python benchmarks/frequencies.py --quick         # 1e5, 1e6, one run each
    python benchmarks/frequencies.py --sizes 1e6 --profile
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
from _common import base_parser, best_of, fmt_s, markdown_table, print_conditions  # noqa: E402
from synthetic import make_keys  # noqa: E402

KEYS = [f"k{j}" for j in range(7)]
MISSING_SHARES = (0.0, 0.05)
ABS_TARGETS = {10**6: 0.3, 10**7: 3.0}  # seconds, with or without weights
MAX_RATIO_MISSING = 2.0
SLOW_RUN = 20.0  # seconds: do not repeat a run slower than this


def _time(fn, repeats: int):
    """Best of ``repeats`` runs; a run slower than SLOW_RUN is not repeated."""
    return best_of(fn, repeats, SLOW_RUN)


def _steps(df: pl.DataFrame, weight) -> dict[str, float]:
    """Per-step times through sdckit internals (mirrors ``risk.frequencies._frequencies_from_prepared``).

    Steps: validation + key encoding (``_prepare.prepare``), the record-level pattern table
    (``_engine.record_patterns``: row keys, GROUP BY, per-pattern sums; its GROUP BY alone is
    timed separately as ``(of which factorize)`` when the row-key helper is available), the
    missing-value rule on the pattern table (``pattern_frequencies``) and the gather back to
    records. Internals change: a step that cannot be timed is left out.
    """
    import inspect

    from sdckit._core.nafreq import pattern_frequencies
    from sdckit._prepare import prepare
    from sdckit.engines import get_engine

    factorize, record_patterns = get_engine().factorize, get_engine().patterns

    out: dict[str, float] = {}

    def step(name, fn):
        t = time.perf_counter()
        r = fn()
        out[name] = time.perf_counter() - t
        return r

    prep = step("validate + encode", lambda: prepare(df, KEYS, weight=weight))
    codes, w = prep.keys.codes, prep.weights
    kwargs = {}
    if "cards" in inspect.signature(record_patterns).parameters:
        kwargs["cards"] = prep.keys.cardinalities
    ids, patterns, counts, wsum = step("pattern table", lambda: record_patterns(codes, w, **kwargs))
    try:  # the GROUP BY alone, on the same int64 row keys
        from sdckit._core.frequencies import _combine

        radix = [int(c) + 1 for c in prep.keys.cardinalities]
        key = _combine(codes, radix)
        step("(of which factorize)", lambda: factorize(key))
    except Exception:
        pass
    fp, Fp = step("pattern frequencies", lambda: pattern_frequencies(patterns, counts, wsum, 1.0))
    step("map back", lambda: (fp[ids], Fp[ids]))
    miss = patterns < 0
    out["_patterns"] = float(len(counts))
    out["_masks"] = float(len(np.unique(miss[miss.any(axis=1)], axis=0))) if miss.any() else 0.0
    return out


def main(argv=None) -> int:
    ap = base_parser(__doc__, sizes_default="1e5,1e6,1e7", tune_memory=True)
    args = ap.parse_args(argv)
    print_conditions()
    if args.tune_memory:
        sdckit.tune_memory()

    sizes = args.sizes or ([10**5, 10**6] if args.quick else [10**5, 10**6, 10**7])
    repeats = 1 if args.quick else args.repeats

    print(
        f"sdckit {sdckit.__version__}, polars {pl.__version__}, numpy {np.__version__}, "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    print(
        f"keys: {len(KEYS)} (cardinalities 2,5,10,20,30,40,50, Zipf), best of {repeats} run(s), "
        f"tune_memory: {'on' if args.tune_memory else 'off'}\n"
    )

    # warm-up (imports, Polars thread pool)
    small = make_keys(30_000, seed=args.seed + 1)
    sdckit.frequencies(small, KEYS, weight="w")
    sdckit.frequencies(make_keys(1000, missing=0.05, seed=args.seed + 1), KEYS, weight="w")

    rows, profiles = [], []
    base: dict[tuple[int, bool], float] = {}
    for n in sizes:
        cases = [(m, True) for m in MISSING_SHARES]
        if n == 10**6:
            cases += [(m, False) for m in MISSING_SHARES]
        for missing, weighted in sorted(cases, key=lambda c: (not c[1], c[0])):
            df = make_keys(n, missing=missing, seed=args.seed, weights=True)
            weight = "w" if weighted else None
            reps = repeats
            try:
                secs, res = _time(lambda df=df, weight=weight: sdckit.frequencies(df, KEYS, weight=weight), reps)
                err = None
            except Exception as e:  # report, never fail
                secs, res, err = float("nan"), None, f"{type(e).__name__}: {e}"
                traceback.print_exc()
            if missing == 0.0:
                base[(n, weighted)] = secs
            target, ok = "—", "—"
            if err is None:
                if missing == 0.0 and n in ABS_TARGETS:
                    target = f"< {ABS_TARGETS[n]:g} s"
                    ok = "yes" if secs < ABS_TARGETS[n] else "**no**"
                elif missing > 0 and (n, weighted) in base and np.isfinite(base[(n, weighted)]):
                    lim = MAX_RATIO_MISSING * base[(n, weighted)]
                    target = f"<= 2x 0% ({fmt_s(lim)} s)"
                    ok = "yes" if secs <= lim else f"**no** ({secs / base[(n, weighted)]:.0f}x)"
            rows.append(
                (
                    f"{n:,}",
                    f"{100 * missing:g}%",
                    "yes" if weighted else "no",
                    "error" if err else fmt_s(secs),
                    "—" if err else f"{n / secs:,.0f}",
                    target,
                    err or ok,
                )
            )
            print(
                f"  done n={n:,} missing={missing:g} weighted={weighted}: "
                f"{'error' if err else fmt_s(secs) + ' s'}"
                f"{'' if res is None else f' ({res.n_keys:,} key patterns)'}",
                file=sys.stderr,
            )
            if args.profile and err is None:
                try:
                    profiles.append(((n, missing, weighted), _steps(df, weight)))
                except Exception:
                    traceback.print_exc()
            del df, res

    markdown_table(["n", "missing", "weighted", "seconds", "records/s", "target", "ok?"], "rrcrrll", rows)
    _float_keys(sizes, repeats, args.seed)

    if profiles:
        names = [k for k in profiles[0][1] if not k.startswith("_")]
        for _, p in profiles:
            names += [k for k in p if not k.startswith("_") and k not in names]
        print("\nStep breakdown (seconds, one run each):\n")
        table = []
        for (n, missing, weighted), p in profiles:
            total = sum(p[k] for k in names if k in p and not k.startswith("("))
            table.append(
                [
                    f"{n:,}",
                    f"{100 * missing:g}%",
                    "yes" if weighted else "no",
                    f"{int(p['_patterns']):,}",
                    int(p["_masks"]),
                ]
                + [fmt_s(p[k]) if k in p else "—" for k in names]
                + [fmt_s(total)]
            )
        markdown_table(
            ["n", "missing", "weighted", "patterns", "partial masks"] + names + ["sum"],
            "rrcrr" + "r" * (len(names) + 1),
            table,
        )
    return 0


FLOAT_KEYS_MAX_RATIO = 1.3


def _float_keys(sizes, repeats: int, seed: int) -> None:
    """The same integer-valued keys as int64 and as float64 (with weights)."""
    n = 10**6 if 10**6 in sizes else max(sizes)
    rng = np.random.default_rng(seed)
    cards = (2, 5, 10, 20, 30, 40, 50)
    ints = pl.DataFrame({f"k{j}": rng.integers(0, c, n) for j, c in enumerate(cards)}).with_columns(
        pl.Series("w", rng.uniform(1, 100, n))
    )
    floats = ints.with_columns([pl.col(k).cast(pl.Float64) for k in KEYS])
    sdckit.frequencies(floats.head(30_000), KEYS, weight="w")  # warm-up
    t_int, r_int = _time(lambda: sdckit.frequencies(ints, KEYS, weight="w"), repeats)
    t_float, r_float = _time(lambda: sdckit.frequencies(floats, KEYS, weight="w"), repeats)
    same = bool(np.array_equal(r_int.Fk, r_float.Fk))
    ratio = t_float / t_int
    print(f"\nKey columns stored as int64 and as float64 (integer values), {n:,} records, weights:\n")
    markdown_table(
        ["keys stored as", "seconds", "ratio to int64", "target", "ok?", "same result"],
        "lrrllc",
        [
            ("int64", fmt_s(t_int), "1.00", "—", "—", "—"),
            (
                "float64",
                fmt_s(t_float),
                f"{ratio:.2f}",
                f"<= {FLOAT_KEYS_MAX_RATIO:g}x",
                "yes" if ratio <= FLOAT_KEYS_MAX_RATIO else "**no**",
                "yes" if same else "**no**",
            ),
        ],
    )


if __name__ == "__main__":
    try:
        main()
    except Exception:  # a benchmark reports, it never fails the build
        traceback.print_exc()
    sys.exit(0)
