"""Benchmark of ``sdckit.record_linkage_risk`` (distance-based linkage) and of
``sdckit.confidentiality_plot`` (Seri's exact delta).

Distance-based linkage: 10**5 records with 6 continuous variables (seeded lognormal data),
protected by multiplicative noise (sd 5 %), 0 % and 2 % missing values in the protected file.
Target (issue 6): under 10 s on 2 cores. The confidentiality plot (exact delta, O(n^2 p)) is timed
at n = 5,000 for information.

Prints a markdown table (best of ``--repeats`` runs, default 3). The exit code is always 0.

Usage::

    python benchmarks/linkage.py [--n 1e5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import traceback

import numpy as np
import polars as pl

import sdckit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import best_of, print_conditions  # noqa: E402

TARGET = 10.0
VARS = [f"x{j}" for j in range(6)]


def _share(res) -> float:
    """The share linked (``risk`` in sdckit versions before the rename, to time old code)."""
    return res.share_linked if hasattr(type(res), "share_linked") else res.risk


def make_pair(n: int, missing: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(mean=5, sigma=1, size=(n, 6))
    y = x * (1 + rng.normal(0, 0.05, size=x.shape))
    if missing:
        y[rng.random(y.shape) < missing] = np.nan
    return (
        pl.DataFrame({v: x[:, j] for j, v in enumerate(VARS)}),
        pl.DataFrame({v: y[:, j] for j, v in enumerate(VARS)}),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print_conditions()
    n = int(args.n)
    print(
        f"# linkage benchmark ({platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        "shared machine: timings may be contended)\n"
    )
    print("| measure | records | variables | missing | result | seconds | target | ok? |")
    print("|---|---:|---|---:|---|---:|---:|---|")
    for miss in (0.0, 0.02):
        try:
            o, p = make_pair(n, miss)
            dt, res = best_of(lambda o=o, p=p: sdckit.record_linkage_risk(o, p, VARS), args.repeats)
            print(
                f"| distance linkage | {n:,} | 6 continuous | {100 * miss:g} % | DLD {100 * _share(res):.2f} % | {dt:.2f} | "
                f"< {TARGET:g} s | {'yes' if dt < TARGET else 'NO'} |"
            )
        except Exception:
            traceback.print_exc()
    try:
        o, p = make_pair(5000, 0.0)
        dt, res = best_of(lambda: sdckit.confidentiality_plot(o, p, VARS), args.repeats)
        print(
            f"| confidentiality plot (exact delta) | 5,000 | 6 continuous | 0 % | delta {res.delta:.4g} | {dt:.2f} | - | - |"
        )
    except Exception:
        traceback.print_exc()
    return 0


if __name__ == "__main__":
    sys.exit(main())
