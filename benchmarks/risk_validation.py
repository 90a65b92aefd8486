"""Calibration of sdckit's re-identification risk estimators against a known truth (issues 17, 24).

The population is eusilcP (simPop's synthetic EU-SILC population, 58,654 persons), where the true
population counts F_k are known. Key sets (missing ecoStat / citizenship of the persons under 16
coded as a category "none"; age clipped to 0..95; age5 = age // 5):

* K1: region, gender, age5, ecoStat, citizenship, hsize; K2: the same with single years of age;
* K3: region, gender, age1, ecoStat, citizenship (no household size); K4: the same with age5;
* K5: region, gender, age1, citizenship, hsize, main (main respondent of the household);
* K6: region, gender, age5, ecoStat, income10 (decile of the household's equivalised income);
* K7: region, gender, age1, ecoStat, hsize (K2 without citizenship);
* K8: gender, age5, citizenship, ecoStat, hsize, income10 (no region);
* K9: region, gender, age1, ecoStat, main (K3 with main respondent instead of citizenship);
* K10: region, gender, age5, citizenship, hsize, income10.

Designs: Bernoulli samples at 1/5, 1/10, 1/20, 1/50 and 1/100, and a sample stratified by region
(known fractions 0.02, 0.03, ..., 0.10 over the nine regions in their sorted order); weights 1/pi.
The log-linear estimates are given the known fractions (by region when region is a key); K8 has no
region, so in the stratified design its estimates use the weights (pseudo-likelihood).
The grid is every key set with every design (60 settings). K1-K6 (36 settings) were split before
any result was seen into a tuning part (K1-K4 at 1/10, 1/50 and by region: 12 settings) on which
the search was developed, and a held-out part (24 settings: the other fractions, and K5 and K6
everywhere). Once that held-out part had been seen, K7 and K8 at every design (12 settings) were
added as a second held-out part, before the second round of development, and run only at its end;
once that had been seen, K9 and K10 at every design (12 settings) were added as a third held-out
part, before the third round of development (60 settings in all).
Per sample the truth is

* tau_1 = #{k: f_k = 1, F_k = 1} (sample uniques that are population unique),
* tau_2 = sum over sample uniques of 1/F_k (expected correct matches of sample uniques).

Estimators (each timed per estimate, wall clock):

* ``individual_risk``: the per-record risk summed over the sample uniques (an estimate of tau_2);
* log-linear (``loglinear_risk``): all two-way terms; the classic Skinner-Shlomo search (stop at
  |Z| <= 1.96, every candidate fitted); the bracketing search (the default, ``model="auto"``);
  the previous default search (``term_test=None, candidates=3``, before issue 24); in the
  stratified settings also with the weights (pseudo-likelihood);
* negative-binomial smoothing (``smoothing="nb"``, moment version; estimates tau_1 and tau_2);
* population-uniqueness estimators (``population_uniques``: Zayatz, Pitman, SNB, Dankar's rule):
  they estimate the number S_1 of population uniques; pi * S_1 estimates tau_1 (each population
  unique is in the sample with probability pi). In the stratified settings they run per region
  with the region's fraction and the estimates are summed (region is a key, so every key pattern
  lies in one region).

Two tables: ``--table grid`` (default) runs the default and the previous search over the grid and
prints the tuning and the held-out part separately (bias, SE, RMSE, number of different models
chosen, seconds); ``--table estimators`` runs every estimator on the six original settings.
``--write-docs`` writes the table into the calibration page (``docs/measures/risk-calibration.md``,
between its markers). Samples are seeded by the setting's name.
Usage: ``python benchmarks/risk_validation.py [--samples 10] [--table grid] [--settings 'K1, 1/10;K3, 1/50'] [--write-docs]``.
The functions are used by tests/test_risk_validation.py with fewer samples. Always exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import polars as pl

from _common import conditions, print_conditions

ROOT = Path(__file__).resolve().parents[1]
EUSILC = ROOT.parent / "shared" / "data" / "simpop" / "eusilcP.csv"
DOCS_PAGE = ROOT / "docs" / "measures" / "risk-calibration.md"
START, END = "<!-- calibration-table:start -->", "<!-- calibration-table:end -->"
GRID_START, GRID_END = "<!-- calibration-grid:start -->", "<!-- calibration-grid:end -->"
STABILITY_START, STABILITY_END = "<!-- calibration-stability:start -->", "<!-- calibration-stability:end -->"
#: the settings of the model-stability table (20 samples each by default)
STABILITY_SETTINGS = ("K2, 1/10", "K3, 1/50")
#: key sets: K1/K2 the original pair (with household size), K3/K4 without household size, K5/K6
#: other variables (main respondent; household income decile)
KEY_SETS = {
    "K1": ("region", "gender", "age5", "ecoStat", "citizenship", "hsize"),
    "K2": ("region", "gender", "age1", "ecoStat", "citizenship", "hsize"),
    "K3": ("region", "gender", "age1", "ecoStat", "citizenship"),
    "K4": ("region", "gender", "age5", "ecoStat", "citizenship"),
    "K5": ("region", "gender", "age1", "citizenship", "hsize", "main"),
    "K6": ("region", "gender", "age5", "ecoStat", "income10"),
    "K7": ("region", "gender", "age1", "ecoStat", "hsize"),
    "K8": ("gender", "age5", "citizenship", "ecoStat", "hsize", "income10"),
    "K9": ("region", "gender", "age1", "ecoStat", "main"),
    "K10": ("region", "gender", "age5", "citizenship", "hsize", "income10"),
}
DESIGNS = ((0.2, "1/5"), (0.1, "1/10"), (0.05, "1/20"), (0.02, "1/50"), (0.01, "1/100"), ("region", "by region"))
#: The grid, split BEFORE any result was looked at: the method may be tuned on the tuning part
#: (K1-K4 at 1/10, 1/50 and by region); every other setting (the fractions 1/5, 1/20 and 1/100,
#: and the key sets K5 and K6 at every design) is held out and only reported.
TUNING_KEYS, TUNING_DESIGNS = ("K1", "K2", "K3", "K4"), ("1/10", "1/50", "by region")
#: (name, key set, fraction or "region")
SETTINGS = tuple((f"{k}, {label}", k, frac) for k in KEY_SETS for frac, label in DESIGNS)
#: The second held-out part, fixed before the second round of development (after the first
#: held-out part had been seen): the key sets K7 and K8 at every design, run once, at the end.
HELD_OUT_2_KEYS = ("K7", "K8")
#: The third held-out part, fixed before the third round of development (after the second
#: held-out part had been seen): the key sets K9 and K10 at every design, run once, at the end.
HELD_OUT_3_KEYS = ("K9", "K10")
TUNING = tuple(s for s in SETTINGS if s[1] in TUNING_KEYS and s[0].split(", ")[1] in TUNING_DESIGNS)
HELD_OUT_2 = tuple(s for s in SETTINGS if s[1] in HELD_OUT_2_KEYS)
HELD_OUT_3 = tuple(s for s in SETTINGS if s[1] in HELD_OUT_3_KEYS)
HELD_OUT = tuple(s for s in SETTINGS if s not in TUNING and s not in HELD_OUT_2 and s not in HELD_OUT_3)
REGION_FRACTIONS = np.linspace(0.02, 0.10, 9)
RECOMMENDED = "log-linear, bracketing search (default)"
PREVIOUS = "log-linear, previous search (term_test=None, candidates=3)"
#: the estimators of the grid table, and of the comparison of every estimator
GRID_ESTIMATORS = ("bracket", "previous")
COMPARISON_SETTINGS = ("K1, 1/10", "K2, 1/10", "K1, 1/50", "K2, 1/50", "K1, by region", "K2, by region")


def setting(name: str) -> tuple:
    """The setting of the grid called ``name`` (e.g. "K3, 1/50")."""
    for s in SETTINGS:
        if s[0] == name:
            return s
    raise KeyError(name)


def part(s) -> str:
    if s in TUNING:
        return "tuning"
    return "held out (second round)" if s in HELD_OUT_2 else "held out (third round)" if s in HELD_OUT_3 else "held out"


def keys_of(key_set: str) -> list[str]:
    return list(KEY_SETS[key_set])


def population(path=EUSILC) -> pl.DataFrame:
    """eusilcP with the key variables of both key sets, as declared categories (Enum), so that
    every sample is cross-classified over the population's categories."""
    d = pl.read_csv(path, columns=["region", "gender", "age", "ecoStat", "citizenship", "hsize", "main", "eqIncome"])
    age = pl.col("age").clip(0, 95)
    decile = (pl.col("eqIncome").rank("min") * 10 / pl.len()).ceil().cast(pl.Int64)
    d = d.select(
        pl.col("region").cast(pl.String),
        pl.col("gender").cast(pl.String),
        (age // 5).cast(pl.String).alias("age5"),
        age.cast(pl.String).alias("age1"),
        pl.col("ecoStat").cast(pl.String).fill_null("none"),
        pl.col("citizenship").cast(pl.String).fill_null("none"),
        pl.col("hsize").cast(pl.String),
        pl.col("main").cast(pl.String),
        decile.cast(pl.String).alias("income10"),
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

    if fraction == "region" and "region" in keys:
        kw.setdefault("sampling_fraction", {"region": region_fractions(pop)})
    elif fraction == "region":  # the strata are not a key (K8): the weights 1/pi give the design
        kw.setdefault("weight", "w")
        kw.setdefault("sampling_fraction", None)
    else:
        kw.setdefault("sampling_fraction", sample.height / pop.height)
    return _quiet(sdckit.loglinear_risk, sample, keys, **kw)


def est_two_way(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop, model="2way")
    return {"log-linear, all two-way": (r.tau1, r.tau2)}


def est_classic(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop, search="skinner-shlomo", candidates=None, term_test=None)
    return {"log-linear, Skinner-Shlomo search (stop at Z within ±1.96)": (r.tau1, r.tau2)}


def model_of(r) -> str:
    """The chosen model: its terms beyond the main effects (and the blended last term)."""
    extra = sorted(":".join(t) for t in r.terms if len(t) > 1)
    return " + ".join(extra) + (f" (blend {r.blend['term']})" if r.blend else "")


def est_bracket(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop)
    return {RECOMMENDED: (r.tau1, r.tau2, np.nan, model_of(r))}


def est_previous(sample, keys, fraction, pop):
    r = _loglinear(sample, keys, fraction, pop, term_test=None, candidates=3)
    return {PREVIOUS: (r.tau1, r.tau2, np.nan, model_of(r))}


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
    "previous": est_previous,
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
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    out: dict = {"truth": []}
    for _ in range(n_samples):
        sample, take = draw(pop, fraction, rng)
        out["truth"].append(truth(pop_cells, take, K))
        sample = sample.select([*keys, "w"])
        for e in estimators or ESTIMATORS:
            t0, c0 = time.perf_counter(), time.process_time()
            got = ESTIMATORS[e](sample, keys, fraction, pop)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
            for label, value in got.items():
                slot = out.setdefault(label, {"est": [], "seconds": [], "cpu": [], "model": []})
                slot["est"].append((*value, np.nan)[:3])  # (tau_1, tau_2, S_1)
                slot["model"].append(value[3] if len(value) > 3 else None)
                slot["seconds"].append(seconds / len(got) if e == "uniques" else seconds)
                slot["cpu"].append(cpu / len(got) if e == "uniques" else cpu)
    res = {"truth": np.array(out.pop("truth"))}
    for label, slot in out.items():
        res[label] = {
            "est": np.array(slot["est"], float),
            "seconds": np.array(slot["seconds"]),
            "cpu": np.array(slot["cpu"]),
            "model": slot["model"],
        }
    return res


def model_stability(models: list) -> dict:
    """How many different models the samples chose, and the share of the most frequent one."""
    models = [m for m in models if m is not None]
    if not models:
        return {}
    names, counts = np.unique(np.array(models, dtype=object).astype(str), return_counts=True)
    top = int(np.argmax(counts))
    return {
        "models": int(counts.size),
        "top_model_share": float(counts[top] / len(models)),
        "top_model": str(names[top]),
    }


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
            "cpu_seconds": float(np.mean(slot["cpu"])) if "cpu" in slot else float("nan"),
            **model_stability(slot.get("model") or []),
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
        f"(wall clock, 2 cores). {run_note()}"
    )
    return "\n".join(lines)


def markdown_grid(table: dict, n_samples: int) -> str:
    """The grid: the tuning part and the held-out part in two tables, the recommended estimator
    and the previous search per setting, with the largest bias of each part."""
    head = [
        "| setting | estimator | tau_2: truth | bias (SE) | RMSE | tau_1: bias (SE) | models (most frequent) "
        "| seconds: wall (max), CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    out = []
    parts = (
        ("Tuning part", TUNING),
        ("Held-out part", HELD_OUT),
        ("Held out (second round)", HELD_OUT_2),
        ("Held out (third round)", HELD_OUT_3),
    )
    for title, members in parts:
        names = [s[0] for s in members if s[0] in table]
        if not names:
            continue
        out += [f"**{title}** ({len(names)} settings)", "", *head]
        worst: dict = {}
        for name in names:
            for r in table[name]:
                t2, t1 = r["tau2"], r["tau1"]
                label = f"**{r['estimator']}**" if r["estimator"] == RECOMMENDED else r["estimator"]
                models = f"{r['models']} of {n_samples} ({100 * r['top_model_share']:.0f} %)" if "models" in r else ""
                out.append(
                    f"| {name} | {label} | {t2['truth']:.0f} | {100 * t2['bias']:+.1f} % ({100 * t2['se']:.1f}) | "
                    f"{100 * t2['rmse']:.1f} % | {100 * t1['bias']:+.1f} % ({100 * t1['se']:.1f}) | {models} | "
                    f"{r['seconds']:.2f} ({r['max_seconds']:.2f}), {r['cpu_seconds']:.2f} |"
                )
                w = worst.setdefault(r["estimator"], [0.0, [], []])
                w[0] = max(w[0], abs(t2["bias"]))
                if abs(t2["bias"]) > 0.10:
                    w[1].append(name)
                w[2].append(r.get("models", 0))
        out.append("")
        for est, (b, failing, models) in worst.items():
            fails = f"over 10 % in {'; '.join(failing)}" if failing else "within 10 % in every setting"
            out.append(
                f"* {est}: largest |bias| of tau_2 {100 * b:.1f} %, {fails}; "
                f"{np.mean(models):.1f} different models in {n_samples} samples on average."
            )
        out.append("")
    out.append(
        f"{n_samples} seeded samples per setting; bias = mean of estimate / truth - 1, SE its standard error over "
        "the samples, RMSE the root mean square of estimate / truth - 1; models: the number of different "
        "models chosen in the samples (and the share of the most frequent one); seconds per estimate: wall clock, "
        "mean and largest, on 2 cores shared with other work, and the CPU time of the process (what a quiet "
        f"machine would take). {run_note()}"
    )
    return "\n".join(out)


def markdown_stability(table: dict, n_samples: int) -> str:
    """Model stability: how many different models the samples of one setting chose, the most
    frequent one, and the spread of the estimate."""
    lines = [
        "| setting | estimator | different models | most frequent model (share) | tau_2: bias (SE) | RMSE |",
        "|---|---|---:|---|---:|---:|",
    ]
    for name, rows in table.items():
        for r in rows:
            t2 = r["tau2"]
            label = f"**{r['estimator']}**" if r["estimator"] == RECOMMENDED else r["estimator"]
            lines.append(
                f"| {name} | {label} | {r['models']} of {n_samples} | {r['top_model']} "
                f"({100 * r['top_model_share']:.0f} %) | {100 * t2['bias']:+.1f} % ({100 * t2['se']:.1f}) | "
                f"{100 * t2['rmse']:.1f} % |"
            )
    lines += ["", f"{n_samples} seeded samples per setting (the samples of the grid, seeded by the setting's name)."]
    return "\n".join(lines)


def run_note() -> str:
    """How the timings were run (machine, threads, load), for the footnote of a table."""
    return conditions().replace("Run on:", "Timings run on:") + "."


def write_docs(text: str, page: Path = DOCS_PAGE, markers=(START, END)) -> None:
    """Replace the text between the page's ``markers`` (atomic write)."""
    start, end = markers
    old = page.read_text()
    a, b = old.index(start) + len(start), old.index(end)
    new = old[:a] + "\n" + text + "\n" + old[b:]
    fd, tmp = tempfile.mkstemp(dir=page.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(new)
    os.replace(tmp, page)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=10)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument(
        "--table",
        choices=["grid", "estimators", "stability"],
        default="grid",
        help="grid: the recommended estimator and the previous search over the whole grid (tuning and "
        "held-out parts); estimators: every estimator on the six original settings; stability: the models "
        "chosen in the samples of two settings (use --samples 20)",
    )
    p.add_argument("--settings", help="setting names separated by ';' (default: those of the table)")
    p.add_argument("--estimators", help=f"comma-separated, of {', '.join(ESTIMATORS)} (default: those of the table)")
    p.add_argument("--write-docs", action="store_true", help="write the table into the documentation page")
    a = p.parse_args(argv)
    print_conditions()
    if not EUSILC.exists():
        print(f"risk validation skipped: {EUSILC} not found (the shared public datasets are not beside the repository)")
        return 0
    default_settings = {
        "grid": [s[0] for s in SETTINGS],
        "estimators": list(COMPARISON_SETTINGS),
        "stability": list(STABILITY_SETTINGS),
    }[a.table]
    default_estimators = [e for e in ESTIMATORS if e != "previous"] if a.table == "estimators" else GRID_ESTIMATORS
    try:
        pop = population()
        wanted = [s.strip() for s in a.settings.split(";")] if a.settings else default_settings
        estimators = a.estimators.split(",") if a.estimators else list(default_estimators)
        table = {}
        for s in SETTINGS:
            if s[0] not in wanted:
                continue
            t0 = time.perf_counter()
            res = validate(s, a.samples, a.seed, estimators, pop=pop)
            table[s[0]] = summarize(res)
            print(f"{s[0]}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        render, markers = {
            "grid": (markdown_grid, (GRID_START, GRID_END)),
            "estimators": (markdown, (START, END)),
            "stability": (markdown_stability, (STABILITY_START, STABILITY_END)),
        }[a.table]
        text = render(table, a.samples)
        print(text)
        if a.write_docs:
            write_docs(text, markers=markers)
    except Exception as exc:  # benchmarks report, they do not fail
        print(f"risk validation failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
