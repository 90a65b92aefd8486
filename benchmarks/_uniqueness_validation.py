"""Validation of ``sdckit.population_uniques`` on eusilcP (helper module, not a benchmark).

eusilcP (simPop, 58,654 persons) is the population. Keys: region, gender, age, ecoStat (missing
for the persons under 16 -> "none"), citizenship (same -> "none"), hsize; age either in 5-year
groups (age clipped to 0..95, // 5: 20 groups) or in single years (0..95), the coding of
``benchmarks/loglinear_validation.py``. The truth is S_1, the number of key patterns with F_k = 1
in eusilcP. Seeded Bernoulli samples at each fraction; every estimator (Zayatz, Pitman, SNB and
Dankar's choice) through ``population_uniques(sample, keys, sampling_fraction=pi, method="all")``,
and each estimator's kernel timed alone on the sample's class-size profile.

``validate_uniqueness`` returns the arrays; ``summarize`` gives the mean relative bias, its
standard error and the relative RMSE; ``python benchmarks/_uniqueness_validation.py`` prints
them as a markdown table (the main risk benchmark imports this module).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

from _common import print_conditions

ROOT = Path(__file__).resolve().parents[1]
EUSILC = ROOT.parent / "shared" / "data" / "simpop" / "eusilcP.csv"
KEYS = {
    "age5": ["region", "gender", "age5", "ecoStat", "citizenship", "hsize"],
    "age1": ["region", "gender", "age1", "ecoStat", "citizenship", "hsize"],
}
MODELS = ("zayatz", "pitman", "snb", "dankar")

__all__ = ["KEYS", "MODELS", "eusilc_keys_population", "summarize", "validate_uniqueness"]


def eusilc_keys_population(path=EUSILC) -> pl.DataFrame:
    """eusilcP with the key variables of both key sets (``age5`` and ``age1``)."""
    d = pl.read_csv(path, columns=["region", "gender", "age", "ecoStat", "citizenship", "hsize"])
    age = pl.col("age").clip(0, 95)
    return d.select(
        pl.col("region"),
        pl.col("gender"),
        (age // 5).cast(pl.Int32).alias("age5"),
        age.cast(pl.Int32).alias("age1"),
        pl.col("ecoStat").cast(pl.String).fill_null("none"),
        pl.col("citizenship").fill_null("none"),
        pl.col("hsize"),
    )


def _true_uniques(pop: pl.DataFrame, keys) -> int:
    return int((pop.group_by(keys).len()["len"] == 1).sum())


def _kernel_seconds(sizes, counts, n: int, N: float) -> dict:
    """Wall time of each estimator's kernel alone on the class-size profile (Dankar: the rule
    with the estimators it needs)."""
    from sdckit._core import uniqueness as uq

    out = {}
    for m in MODELS:
        t = time.perf_counter()
        uq.estimate(sizes, counts, n, N, m)
        out[m] = time.perf_counter() - t
    return out


def validate_uniqueness(
    n_samples: int = 20,
    fractions=(0.1, 0.02),
    key_sets=("age5", "age1"),
    seed: int = 2024,
    pop: pl.DataFrame | None = None,
) -> dict:
    """Per (key set, fraction): ``{"truth": S_1 per sample (ndarray), "estimates": {model:
    ndarray}, "seconds": {model: ndarray} (kernel alone), "seconds_call": ndarray (the whole
    population_uniques call), "n": sample sizes, "chosen": Dankar's model per sample}``.
    NaN marks an estimator that did not converge."""
    import sdckit

    pop = eusilc_keys_population() if pop is None else pop
    N = pop.height
    out = {}
    for ks in key_sets:
        keys = KEYS[ks]
        truth = _true_uniques(pop, keys)
        frame = pop.select(keys)
        for pi in fractions:
            rng = np.random.default_rng([seed, int(round(1 / pi)), len(keys), key_sets.index(ks)])
            rec: dict = {"estimates": {m: [] for m in MODELS}, "seconds": {m: [] for m in MODELS}}
            rec.update(truth=[], seconds_call=[], n=[], chosen=[])
            for _ in range(n_samples):
                sample = frame.filter(pl.Series(rng.random(N) < pi))
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = sdckit.population_uniques(sample, keys, sampling_fraction=pi, method="all")
                rec["seconds_call"].append(time.perf_counter() - t)
                for m in MODELS[:3]:
                    rec["estimates"][m].append(res.estimates[m])
                rec["estimates"]["dankar"].append(res.population_uniques)
                secs = _kernel_seconds(res.class_sizes, res.class_counts, res.n_used, res.n_used / pi)
                for m in MODELS:
                    rec["seconds"][m].append(secs[m])
                rec["truth"].append(truth)
                rec["n"].append(res.n)
                rec["chosen"].append(res.chosen)
            out[(ks, pi)] = {
                "truth": np.asarray(rec["truth"], float),
                "estimates": {m: np.asarray(v, float) for m, v in rec["estimates"].items()},
                "seconds": {m: np.asarray(v, float) for m, v in rec["seconds"].items()},
                "seconds_call": np.asarray(rec["seconds_call"], float),
                "n": np.asarray(rec["n"]),
                "chosen": rec["chosen"],
            }
    return out


def summarize(results: dict) -> list[dict]:
    """One row per (key set, fraction, model): truth, mean estimate, mean relative bias
    (estimate / truth - 1) and its standard error over the samples, relative RMSE, samples that
    did not converge, mean kernel time."""
    rows = []
    for (ks, pi), rec in results.items():
        truth = rec["truth"]
        for m in MODELS:
            est = rec["estimates"][m]
            ok = np.isfinite(est)
            rel = est[ok] / truth[ok] - 1.0
            k = int(ok.sum())
            rows.append(
                {
                    "keys": ks,
                    "fraction": pi,
                    "model": m,
                    "truth": float(truth[0]),
                    "mean_estimate": float(np.mean(est[ok])) if k else float("nan"),
                    "bias": float(np.mean(rel)) if k else float("nan"),
                    "bias_se": float(np.std(rel, ddof=1) / np.sqrt(k)) if k > 1 else float("nan"),
                    "rmse": float(np.sqrt(np.mean(rel**2))) if k else float("nan"),
                    "not_converged": int((~ok).sum()),
                    "seconds": float(np.mean(rec["seconds"][m])),
                }
            )
    return rows


def markdown(rows: list[dict]) -> str:
    head = "| keys | pi | model | truth S_1 | mean estimate | rel. bias | SE | rel. RMSE | not conv. | ms / estimate |"
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['keys']} | 1/{round(1 / r['fraction'])} | {r['model']} | {r['truth']:.0f} | {r['mean_estimate']:.0f} | "
            f"{r['bias']:+.3f} | {r['bias_se']:.3f} | {r['rmse']:.3f} | {r['not_converged']} | {1e3 * r['seconds']:.1f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--seed", type=int, default=2024)
    a = p.parse_args(argv)
    print_conditions()
    if not EUSILC.exists():
        print(f"eusilcP not found at {EUSILC}; nothing to validate")
        return 0
    res = validate_uniqueness(a.samples, seed=a.seed)
    print(markdown(summarize(res)))
    for (ks, pi), rec in res.items():
        calls = rec["seconds_call"]
        chosen = {c: rec["chosen"].count(c) for c in sorted(set(rec["chosen"]))}
        print(
            f"- {ks}, pi = 1/{round(1 / pi)}: mean n = {rec['n'].mean():.0f}, population_uniques(method='all') "
            f"{1e3 * calls.mean():.1f} ms per call; Dankar chose {chosen}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
