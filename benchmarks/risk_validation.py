"""Calibration of sdckit's re-identification risk estimators against a known truth (issue 17).

The population is eusilcP (simPop's synthetic EU-SILC population, 58,654 persons), where the true
population counts F_k are known. Keys:

* K1: region, gender, age in 5-year groups (age clipped to 0..95, // 5), ecoStat, citizenship,
  hsize (the missing ecoStat / citizenship of the persons under 16 coded as a category "none");
* K2: the same with single years of age.

Settings: K1 and K2 with Bernoulli samples at 1/10 and at 1/50, and K1 and K2 with a sample
stratified by region (known fractions 0.02, 0.03, ..., 0.10 over the nine regions in their sorted
order); weights 1/pi. Per sample the truth is

* tau_1 = #{k: f_k = 1, F_k = 1} (sample uniques that are population unique),
* tau_2 = sum over sample uniques of 1/F_k (expected correct matches of sample uniques).

Estimators (each timed per estimate, wall clock):

* ``individual_risk``: the per-record risk summed over the sample uniques (an estimate of tau_2);
* log-linear (``loglinear_risk``): all two-way terms; the classic Skinner-Shlomo search (stop at
  |Z| <= 1.96, every candidate fitted); the bracketing search (the default, ``model="auto"``);
  in the stratified settings with the known fractions by region and with the weights
  (pseudo-likelihood);
* negative-binomial smoothing (``smoothing="nb"``, moment version; estimates tau_1 and tau_2);
* population-uniqueness estimators (``population_uniques``: Zayatz, Pitman, SNB, Dankar's rule):
  they estimate the number S_1 of population uniques; pi * S_1 estimates tau_1 (each population
  unique is in the sample with probability pi). In the stratified settings they run per region
  with the region's fraction and the estimates are summed (region is a key, so every key pattern
  lies in one region).

Prints a markdown table: mean relative bias, its standard error over the samples, the relative
RMSE and the time per estimate. ``--write-docs`` also writes the table into the calibration page of
the documentation (``docs/measures/risk-calibration.md``, between its markers).
Usage: ``python benchmarks/risk_validation.py [--samples 20] [--settings 'K1, 1/10;K2, 1/50'] [--write-docs]``.
The functions are used by tests/test_risk_validation.py with fewer samples. Always exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
EUSILC = ROOT.parent / "shared" / "data" / "simpop" / "eusilcP.csv"
DOCS_PAGE = ROOT / "docs" / "measures" / "risk-calibration.md"
START, END = "<!-- calibration-table:start -->", "<!-- calibration-table:end -->"
AGE = {"K1": "age5", "K2": "age1"}
#: (name, key set, fraction or "region")
SETTINGS = (
    ("K1, 1/10", "K1", 0.1),
    ("K2, 1/10", "K2", 0.1),
    ("K1, 1/50", "K1", 0.02),
    ("K2, 1/50", "K2", 0.02),
    ("K1, by region", "K1", "region"),
    ("K2, by region", "K2", "region"),
)
REGION_FRACTIONS = np.linspace(0.02, 0.10, 9)
RECOMMENDED = "log-linear, bracketing search (default)"


def keys_of(key_set: str) -> list[str]:
    return ["region", "gender", AGE[key_set], "ecoStat", "citizenship", "hsize"]


def population(path=EUSILC) -> pl.DataFrame:
    """eusilcP with the key variables of both key sets, as declared categories (Enum), so that
    every sample is cross-classified over the population's categories."""
    d = pl.read_csv(path, columns=["region", "gender", "age", "ecoStat", "citizenship", "hsize"])
    age = pl.col("age").clip(0, 95)
    d = d.select(
        pl.col("region").cast(pl.String),
        pl.col("gender").cast(pl.String),
        (age // 5).cast(pl.String).alias("age5"),
        age.cast(pl.String).alias("age1"),
        pl.col("ecoStat").cast(pl.String).fill_null("none"),
        pl.col("citizenship").cast(pl.String).fill_null("none"),
        pl.col("hsize").cast(pl.String),
    )
    return d.with_columns([pl.col(c).cast(pl.Enum(sorted(d[c].unique().to_list(), key=_natural))) for c in d.columns])


def _natural(s: str):
    return (0, int(s), "") if s.lstrip("-").isdigit() else (1, 0, s)


def region_fractions(pop: pl.DataFrame) -> dict:
    """Known fractions by region: 0.02, 0.03, ..., 0.10 in the regions' sorted order."""
    return {r: float(f) for r, f in zip(pop["region"].dtype.categories.to_list(), REGION_FRACTIONS)}


# ---------------------------------------------------------------------------------------------
# samples and truth
def draw(pop: pl.DataFrame, fraction, rng) -> tuple[pl.DataFrame, np.ndarray]:
    """A Bernoulli sample (``fraction`` a number, or "region": by region) with its weights 1/pi
    in column ``w`` and the inclusion probability per sampled record."""
    if fraction == "region":
        by = region_fractions(pop)
        pi = pop["region"].cast(pl.String).replace_strict(by, return_dtype=pl.Float64).to_numpy()
    else:
        pi = np.full(pop.height, float(fraction))
    take = rng.random(pop.height) < pi
    return pop.filter(pl.Series(take)).with_columns(w=pl.Series(1.0 / pi[take])), take


def truth(pop_cells: np.ndarray, take: np.ndarray, K: int) -> tuple[float, float, float]:
    """(tau_1, tau_2, S_1): S_1 = the number of population uniques (the same for every sample)."""
    F = np.bincount(pop_cells, minlength=K)
    f = np.bincount(pop_cells[take], minlength=K)
    su = f == 1
    return float(np.sum(su & (F == 1))), float(np.sum(1.0 / F[su])), float(np.sum(F == 1))


def cells(pop: pl.DataFrame, keys) -> tuple[np.ndarray, int]:
    codes = [pop[k].to_physical().to_numpy().astype(np.int64) for k in keys]
    cards = tuple(len(pop[k].dtype.categories) for k in keys)
    return np.ravel_multi_index(codes, cards), int(np.prod(cards))


# ---------------------------------------------------------------------------------------------
# estimators: (sample, keys, fraction, pop) -> {name: (tau1, tau2)}; nan where not estimated
def _quiet(fn, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


def est_individual(sample, keys, fraction, pop):
    import sdckit

    r = _quiet(sdckit.individual_risk, sample, keys, weight="w")
    fk = r.frequencies.fk
    return {"individual_risk (sum over sample uniques)": (np.nan, float(np.sum(r.risk[fk == 1])))}


def _loglinear(sample, keys, fraction, pop, **kw):
    import sdckit

    if fraction == "region":
        kw.setdefault("sampling_fraction", {"region": region_fractions(pop)})
    else:
        kw.setdefault("sampling_fraction", sample.height / pop.height)
    return _quiet(sdckit.loglinear_risk, sample, keys, **kw)


def est_two_way(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop, model="2way")
    return {"log-linear, all two-way": (r.tau1, r.tau2)}


def est_classic(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop, search="skinner-shlomo", candidates=None)
    return {"log-linear, Skinner-Shlomo search (stop at Z within ±1.96)": (r.tau1, r.tau2)}


def est_bracket(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop)
    return {RECOMMENDED: (r.tau1, r.tau2)}


def est_bracket_pml(sample, keys, fraction, pop):
    if fraction != "region":
        return {}
    r = _loglinear(sample, keys, fraction, pop, weight="w", sampling_fraction=None)
    return {"log-linear, bracketing search, weights (pseudo-likelihood)": (r.tau1, r.tau2)}


def est_nb(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop, model="independence", smoothing="nb")
    return {"negative-binomial smoothing (moment version)": (r.smoothing["tau1"], r.smoothing["tau2"])}


def est_uniques(sample, keys, fraction, pop):
    import sdckit

    if fraction != "region":
        pi = sample.height / pop.height
        r = _quiet(sdckit.population_uniques, sample, keys, sampling_fraction=pi, method="all")
        est = {**r.estimates, "dankar": r.population_uniques}
        return {
            f"population uniques: {m}": (pi * est[m], np.nan, est[m]) for m in ("zayatz", "pitman", "snb", "dankar")
        }
    total = dict.fromkeys(("zayatz", "pitman", "snb", "dankar"), 0.0)
    uniques = dict.fromkeys(total, 0.0)
    for region, pi in region_fractions(pop).items():
        part = sample.filter(pl.col("region") == region)
        if part.height == 0:
            continue
        r = _quiet(
            sdckit.population_uniques, part, keys, sampling_fraction=pi, method="all", allow_degenerate_keys=True
        )
        est = {**r.estimates, "dankar": r.population_uniques}
        for m in total:
            total[m] += pi * est[m]
            uniques[m] += est[m]
    return {f"population uniques: {m} (per region)": (v, np.nan, uniques[m]) for m, v in total.items()}


ESTIMATORS = {
    "individual": est_individual,
    "two-way": est_two_way,
    "classic": est_classic,
    "bracket": est_bracket,
    "pml": est_bracket_pml,
    "nb": est_nb,
    "uniques": est_uniques,
}


# ---------------------------------------------------------------------------------------------
def validate(setting, n_samples: int = 20, seed: int = 2024, estimators=None, pop=None) -> dict:
    """Run ``estimators`` (names of ``ESTIMATORS``) on ``n_samples`` seeded samples of one setting
    (a row of ``SETTINGS``). Returns {"truth": (n, 3), estimator name: {"est": (n, 3), "seconds": (n,)}}
    with the columns tau_1, tau_2 and S_1 (NaN where an estimator does not estimate it)."""
    name, key_set, fraction = setting
    pop = population() if pop is None else pop
    keys = keys_of(key_set)
    pop_cells, K = cells(pop, keys)
    rng = np.random.default_rng([seed, SETTINGS.index(setting) if setting in SETTINGS else 0])
    out: dict = {"truth": []}
    for _ in range(n_samples):
        sample, take = draw(pop, fraction, rng)
        out["truth"].append(truth(pop_cells, take, K))
        sample = sample.select([*keys, "w"])
        for e in estimators or ESTIMATORS:
            t0 = time.perf_counter()
            got = ESTIMATORS[e](sample, keys, fraction, pop)
            seconds = time.perf_counter() - t0
            for label, value in got.items():
                slot = out.setdefault(label, {"est": [], "seconds": []})
                slot["est"].append((*value, np.nan)[:3])  # (tau_1, tau_2, S_1)
                slot["seconds"].append(seconds / len(got) if e == "uniques" else seconds)
    res = {"truth": np.array(out.pop("truth"))}
    for label, slot in out.items():
        res[label] = {"est": np.array(slot["est"], float), "seconds": np.array(slot["seconds"])}
    return res


def summarize(res: dict) -> list[dict]:
    """Per estimator and measure: mean estimate, mean truth, mean relative bias, its standard
    error over the samples, relative RMSE, the number of samples without an estimate (a model
    that did not converge: left out of the means) and the mean and largest seconds per estimate."""
    t = res["truth"]
    rows = []
    for label, slot in res.items():
        if label == "truth":
            continue
        row = {
            "estimator": label,
            "seconds": float(np.mean(slot["seconds"])),
            "max_seconds": float(np.max(slot["seconds"])),
        }
        for j, measure in enumerate(("tau1", "tau2", "S1")):
            e = slot["est"][:, j]
            if np.all(np.isnan(e)):
                row[measure] = None
                continue
            ok = ~np.isnan(e)
            rel = e[ok] / t[ok, j] - 1.0
            row[measure] = {
                "estimate": float(np.mean(e[ok])),
                "truth": float(np.mean(t[:, j])),
                "bias": float(np.mean(rel)),
                "se": float(np.std(rel, ddof=1) / np.sqrt(rel.size)) if rel.size > 1 else float("nan"),
                "rmse": float(np.sqrt(np.mean(rel**2))),
                "failed": int(np.count_nonzero(~ok)),
            }
        rows.append(row)
    return rows


def markdown(table: dict, n_samples: int) -> str:
    """The calibration table: one row per setting and estimator."""
    lines = [
        "| setting | estimator | tau_1: truth | bias (SE) | RMSE | tau_2: truth | bias (SE) | RMSE | seconds (max) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for setting, rows in table.items():
        for r in rows:
            name = f"**{r['estimator']}**" if r["estimator"] == RECOMMENDED else r["estimator"]
            failed = max((r[m] or {}).get("failed", 0) for m in ("tau1", "tau2", "S1"))
            if failed:
                name += f" ({failed} of {n_samples} samples without an estimate)"
            cells_ = [setting, name]
            for m in ("tau1", "tau2"):
                x = r[m]
                cells_ += (
                    ["", "—", ""]
                    if x is None
                    else [
                        f"{x['truth']:.0f}",
                        f"{100 * x['bias']:+.1f} % ({100 * x['se']:.1f})",
                        f"{100 * x['rmse']:.1f} %",
                    ]
                )
            cells_.append(f"{r['seconds']:.2f} ({r['max_seconds']:.2f})")
            lines.append("| " + " | ".join(cells_) + " |")
    lines += ["", "The population-uniqueness estimators against the true number S_1 of population uniques:", ""]
    lines += [
        "| setting | estimator | S_1: truth | mean estimate | bias (SE) | RMSE |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for setting, rows in table.items():
        for r in rows:
            x = r.get("S1")
            if x is not None:
                lines.append(
                    f"| {setting} | {r['estimator']} | {x['truth']:.0f} | {x['estimate']:.0f} | "
                    f"{100 * x['bias']:+.1f} % ({100 * x['se']:.1f}) | {100 * x['rmse']:.1f} % |"
                )
    lines.append("")
    lines.append(
        f"{n_samples} seeded samples per setting; bias = mean of estimate / truth - 1, SE its standard error over "
        "the samples, RMSE the root mean square of estimate / truth - 1; seconds per estimate, mean and largest "
        "(wall clock, 2 cores)."
    )
    return "\n".join(lines)


def write_docs(text: str, page: Path = DOCS_PAGE) -> None:
    """Replace the table between the page's markers (atomic write)."""
    old = page.read_text()
    a, b = old.index(START) + len(START), old.index(END)
    new = old[:a] + "\n" + text + "\n" + old[b:]
    fd, tmp = tempfile.mkstemp(dir=page.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(new)
    os.replace(tmp, page)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--settings", default=";".join(s[0] for s in SETTINGS), help="setting names separated by ';'")
    p.add_argument("--estimators", default=",".join(ESTIMATORS), help=f"comma-separated, of {', '.join(ESTIMATORS)}")
    p.add_argument("--write-docs", action="store_true", help="write the table into the documentation page")
    a = p.parse_args(argv)
    if not EUSILC.exists():
        print(f"risk validation skipped: {EUSILC} not found (the shared public datasets are not beside the repository)")
        return 0
    try:
        pop = population()
        wanted = [s.strip() for s in a.settings.split(";")]
        table = {}
        for setting in SETTINGS:
            if setting[0] not in wanted:
                continue
            t0 = time.perf_counter()
            res = validate(setting, a.samples, a.seed, a.estimators.split(","), pop=pop)
            table[setting[0]] = summarize(res)
            print(f"{setting[0]}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        text = markdown(table, a.samples)
        print(text)
        if a.write_docs:
            write_docs(text)
    except Exception as exc:  # benchmarks report, they do not fail
        print(f"risk validation failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
