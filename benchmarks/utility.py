"""Benchmark of ``sdckit.information_loss`` (spec G) on synthetic microdata.

Builds an original file with ``--cat`` categorical variables (:func:`synthetic.make_keys`:
Zipf-distributed, 2 to 50 categories, string and integer labels) and ``--cont`` continuous
variables (lognormal, correlated through a common factor), and a protected file in which the
continuous variables get 10 % multiplicative noise, 5 % of the categorical values are redrawn
(PRAM-like) and 2 % are suppressed. It then times every measure at once: lambda / lambda_j,
IL1 / IL1s, eigen and robust (MCD) eigen, the discrepancy table, gamma, CTBIL up to 2-way
tables, EBIL for two PRAMed variables (with their matrices) and the ANOVA R^2 loss of every
continuous variable on all categorical ones; ``--profile`` adds the time without the MCD.

Target (issue 7): all measures for 10**6 records with 20 variables in under 10 s on 2 cores.
Times are the best of ``--repeats`` runs (default 3); data generation is not timed. The machine
may be shared, so timings can be contended. The exit code is always 0.

Usage::

    python benchmarks/utility.py                  # 1e5 and 1e6 records, 10 + 10 variables
    python benchmarks/utility.py --sizes 1e6 --repeats 1
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import make_keys  # noqa: E402

TARGET_1E6 = 10.0


def make_pair(n: int, n_cat: int = 10, n_cont: int = 10, seed: int = 0):
    rng = np.random.default_rng(seed + 1)
    keys = make_keys(n, n_keys=n_cat, seed=seed, weights=False)
    cat = list(keys.columns)
    common = rng.normal(size=n)
    cont = {f"x{j}": np.exp(3 + 0.8 * (0.6 * common + 0.8 * rng.normal(size=n))) for j in range(n_cont)}
    original = keys.with_columns([pl.Series(k, v) for k, v in cont.items()])
    prot_cols = []
    for k in cat:
        s = keys.get_column(k)
        vals = s.to_numpy()
        redraw = rng.random(n) < 0.05
        new = vals.copy()
        new[redraw] = rng.permutation(vals)[redraw]  # redraw from the marginal distribution
        col = pl.Series(k, new, dtype=s.dtype)
        supp = rng.random(n) < 0.02
        prot_cols.append(pl.select(pl.when(pl.lit(supp)).then(None).otherwise(pl.lit(col))).to_series().alias(k))
    for k, v in cont.items():
        prot_cols.append(pl.Series(k, v * (1 + 0.1 * rng.normal(size=n))))
    protected = pl.DataFrame(prot_cols)
    scales = {k: "nominal" for k in cat}
    # two PRAMed variables with a known matrix (diagonal 0.9, rest spread evenly)
    pram = {}
    for k in cat[:2]:
        labels = sorted(set(keys.get_column(k).drop_nulls().to_list()))
        L = len(labels)
        P = np.full((L, L), 0.1 / (L - 1)) + np.eye(L) * (0.9 - 0.1 / (L - 1))
        pram[k] = (P, labels)
    return original, protected, cat + list(cont), scales, pram


def run(n, repeats, profile):
    import sdckit

    o, p, names, scales, pram = make_pair(n)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sdckit.information_loss(o, p, names, scales, pram=pram, new_categories="allow")
        times.append(time.perf_counter() - t0)
    extra = None
    if profile:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sdckit.information_loss(o, p, names, scales, pram=pram, new_categories="allow", robust=False)
        extra = time.perf_counter() - t0
    return min(times), res, extra


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6", help="comma-separated record counts (default 1e5,1e6)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="also time the run without the robust MCD")
    args = ap.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    print(f"sdckit information_loss benchmark - {platform.python_version()}, {os.cpu_count()} cpu(s), "
          f"best of {args.repeats}; the machine may be shared (timings can be contended)\n")
    cols = ["n", "variables", "seconds", "records/s", "lambda (%)", "target", "ok?"]
    if args.profile:
        cols.insert(3, "seconds without MCD")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for n in sizes:
        try:
            best, res, extra = run(n, args.repeats, args.profile)
        except Exception:  # a benchmark reports, it does not fail
            traceback.print_exc()
            print(f"| {n:,} | error | | | | | |")
            continue
        target = TARGET_1E6 * n / 1e6 if n >= 1e6 else None
        row = [f"{n:,}", "10 categorical + 10 continuous", f"{best:.2f}", f"{n / best:,.0f}",
               f"{100 * res.lambda_:.2f}", f"{target:.0f} s" if target else "-",
               ("yes" if best < target else "NO") if target else "-"]
        if args.profile:
            row.insert(3, f"{extra:.2f}")
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
