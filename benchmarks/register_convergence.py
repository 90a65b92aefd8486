"""How often the membership fits of ``sdckit.register_risk`` end without a maximum (issue 39).

The population and samples of ``register_validation.py`` with its "interactions" scenario
(membership with sex x age group and ethnicity x activity terms). Per membership model and
approach, ``--fits`` samples (Bernoulli at 1/50, seeded): whether the fit converged, raised an
error, how many cells the boundary rules fixed, the iterations, the time, and tau1* and tau2*
against the truth. Prints a markdown table; always exits 0.

Usage: ``python benchmarks/register_convergence.py [--fits 50] [--models independence,true]
[--approaches A,B] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import register_validation as rv  # noqa: E402
from _common import markdown_table, print_conditions  # noqa: E402

K = rv.KEYS
#: the membership models: the main effects (the default), the true model of the scenario
MODELS = {
    "independence": "independence",
    "true": f"{K[1]}*{K[5]} + {K[1]}*{K[2]} + {K[4]}*{K[5]}",
}


def run(models, approaches, fits: int, seed: int = 7) -> list[dict]:
    import sdckit

    pop = rv.make_population(scenario="interactions")
    register = rv.records(pop.cell[pop.member])
    true_tau1 = float(np.sum((pop.F1 == 1) & (pop.F == 1)))
    true_tau2 = float(np.sum(1.0 / pop.F[pop.F1 == 1]))
    rows = []
    for name in models:
        for approach in approaches:
            rng = np.random.default_rng(seed)
            out = {"model": name, "approach": approach, "fits": 0, "converged": 0, "errors": 0, "boundary": 0,
                   "iterations": [], "seconds": [], "tau1_star": [], "tau2_star": []}  # fmt: skip
            for _ in range(fits):
                sample = rv.records(rv.draw_sample(pop, rng)).with_columns(pl.lit(1 / rv.FRACTION).alias("w"))
                t0 = time.perf_counter()
                out["fits"] += 1
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = sdckit.register_risk(
                            register, sample, K, sample_weight="w", sampling_fraction=rv.FRACTION,
                            approach=approach, membership_model=MODELS[name],
                        )  # fmt: skip
                except sdckit.SdcError:
                    out["errors"] += 1
                    out["seconds"].append(time.perf_counter() - t0)
                    continue
                mf = r.membership_fit
                out["seconds"].append(time.perf_counter() - t0)
                out["converged"] += bool(mf["converged"])
                out["boundary"] += bool(mf.get("n_boundary"))
                out["iterations"].append(mf["iterations"])
                out["tau1_star"].append(r.tau1_star)
                out["tau2_star"].append(r.tau2_star)
            for m, true in (("tau1_star", true_tau1), ("tau2_star", true_tau2)):
                out[f"bias_{m}"] = float(np.mean(out[m]) / true - 1) if out[m] else float("nan")
            rows.append(out)
    return rows


def table(rows: list[dict]) -> None:
    header = ["membership model", "approach", "fits", "converged", "errors", "boundary rule used",
              "iterations (median, max)", "s per fit (median)", "bias of tau1*", "bias of tau2*"]  # fmt: skip
    markdown_table(header, "llrrrrrrrr", [
        (r["model"], r["approach"], r["fits"], r["converged"], r["errors"], r["boundary"],
         f"{int(np.median(r['iterations'] or [0]))}, {max(r['iterations'] or [0])}",
         f"{np.median(r['seconds']):.1f}", f"{100 * r['bias_tau1_star']:+.1f} %",
         f"{100 * r['bias_tau2_star']:+.1f} %")
        for r in rows
    ])  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fits", type=int, default=50)
    p.add_argument("--models", default="independence,true")
    p.add_argument("--approaches", default="A,B")
    p.add_argument("--quick", action="store_true", help="two fits of approach B with the true model")
    a = p.parse_args(argv)
    print_conditions()
    if a.quick:
        a.fits, a.models, a.approaches = 2, "true", "B"
    table(run(a.models.split(","), a.approaches.split(","), a.fits))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
