"""Benchmark of ``sdckit.information_loss`` on synthetic microdata.

Two kinds of files. *Mixed*: an original file with ``--cat`` categorical variables
(:func:`synthetic.make_keys`: Zipf-distributed, 2 to 50 categories, string and integer labels)
and ``--cont`` continuous variables (lognormal, correlated through a common factor), and a
protected file in which the continuous variables get 10 % multiplicative noise, 5 % of the
categorical values are redrawn (PRAM-like) and 2 % are suppressed; timed with every measure
(``robust=True``: lambda / lambda_j, IL1 / IL1s, eigen and robust MCD eigen, the discrepancy
table, gamma, CTBIL up to 2-way tables, EBIL for two PRAMed variables with their matrices and
the ANOVA R^2 loss of every continuous variable on all categorical ones) and with the defaults.
*Continuous*: 5 continuous variables only (sdcMicro ``dUtility``'s use), with the defaults,
at 5,000 records and at every ``--sizes``.

Targets: all measures for 10**6 records with 20 variables in under 10 s on 2 cores; the defaults
on 5,000 records x 5 continuous variables in under 0.05 s (sdcMicro's ``dUtility`` takes about
0.03 s there). Times are the best of ``--repeats`` runs (default 3); data generation is not
timed. The machine may be shared, so timings can be contended. The exit code is always 0.

Usage::

    python benchmarks/utility.py                  # 5e3 continuous; 1e5 and 1e6 records, both kinds
    python benchmarks/utility.py --sizes 1e6 --repeats 1
    python benchmarks/utility.py --profile        # also the mixed files without the MCD
"""

from __future__ import annotations

import os
import platform
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, best_of, fmt_s, grouped, markdown_table, print_conditions  # noqa: E402
from synthetic import make_keys  # noqa: E402

TARGET_1E6 = 10.0  # seconds for all measures on 10**6 records x 20 variables
TARGET_5000 = 0.05  # seconds for the defaults on 5,000 records x 5 continuous variables


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


def make_continuous(n: int, p: int = 5, seed: int = 0):
    """Original and protected files of p lognormal continuous variables (10 % noise)."""
    rng = np.random.default_rng(seed + 2)
    common = rng.normal(size=n)
    X = np.exp(3 + 0.8 * (0.6 * common[:, None] + 0.8 * rng.normal(size=(n, p))))
    names = [f"x{j}" for j in range(p)]
    return pl.DataFrame(X, schema=names), pl.DataFrame(X * (1 + 0.1 * rng.normal(size=(n, p))), schema=names), names


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def cases(n: int, profile: bool, seed: int):
    """(label, variables, options, function) of the timed calls for n records."""
    import sdckit

    o, p, names, scales, pram = make_pair(n, seed=seed)
    mixed = "10 categorical + 10 continuous"
    out = [
        (
            "mixed",
            mixed,
            "all measures (robust=True)",
            lambda: sdckit.information_loss(
                o,
                p,
                names,
                scales=scales,
                pram=pram,
                **grouped(sdckit.information_loss, new_categories="allow", robust=True),
            ),
        )
    ]
    if profile:
        out.append(
            (
                "mixed",
                mixed,
                "defaults (no MCD)",
                lambda: sdckit.information_loss(
                    o, p, names, scales=scales, pram=pram, **grouped(sdckit.information_loss, new_categories="allow")
                ),
            )
        )
    return out


def continuous_case(n: int, seed: int):
    import sdckit

    o, p, names = make_continuous(n, seed=seed)
    return ("continuous", "5 continuous", "defaults", lambda: sdckit.information_loss(o, p, names))


def target_of(kind: str, options: str, n: int):
    if kind == "mixed" and options.startswith("all") and n >= 10**6:
        return TARGET_1E6 * n / 1e6
    if kind == "continuous" and n == 5000:
        return TARGET_5000
    return None


def main(argv=None) -> int:
    ap = base_parser(__doc__, sizes_default="1e5,1e6", quick_help="sizes 1e4,1e5 and one run each")
    args = ap.parse_args(argv)
    print_conditions()
    sizes = args.sizes or ([10**4, 10**5] if args.quick else [10**5, 10**6])
    repeats = 1 if args.quick else args.repeats
    print(
        f"sdckit information_loss benchmark - python {platform.python_version()}, {os.cpu_count()} cpu(s), "
        f"best of {repeats}; the machine may be shared (timings can be contended)\n"
    )
    _quiet(continuous_case(2000, args.seed)[3])  # warm-up (imports, first-call costs)
    rows = []
    plan = [(5000, lambda: [continuous_case(5000, args.seed)])]
    for n in sizes:
        plan.append(
            (n, lambda n=n: cases(n, args.profile, args.seed) + ([continuous_case(n, args.seed)] if n != 5000 else []))
        )
    for n, make in plan:
        for kind, variables, options, fn in make():
            try:
                secs, _ = best_of(lambda fn=fn: _quiet(fn), repeats, slow_run=30.0)
            except Exception:  # a benchmark reports, it does not fail
                traceback.print_exc()
                rows.append((f"{n:,}", variables, options, "error", "", "", ""))
                continue
            target = target_of(kind, options, n)
            rows.append(
                (
                    f"{n:,}",
                    variables,
                    options,
                    fmt_s(secs),
                    f"{n / secs:,.0f}",
                    f"< {target:g} s" if target else "-",
                    ("yes" if secs < target else "**no**") if target else "-",
                )
            )
    markdown_table(["n", "variables", "options", "seconds", "records/s", "target", "ok?"], "rllrrll", rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
