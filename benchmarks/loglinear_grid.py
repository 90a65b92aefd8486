"""The validation grid of ``loglinear_risk(model="auto")`` (issue 39): bias, RMSE and interval
coverage of tau_1 and tau_2 against the truth of finite populations.

The grid was written down (``_grid_populations.GRID``) before any estimate was computed: three
populations (eusilcP, ARX-Adult taken as a population, a synthetic population of 10^6 persons
from a known log-linear model), key sets not used in the earlier calibration, simple random
(Bernoulli), stratified (fractions of 1/2 and 3/2 the base by the categories of one key) and
household (every person of a sampled household) designs, samples from about 1,000 to 50,000
records. Every third setting is held out of every tuning and reported apart.

Each sample's estimate, its interval, the search path and the truth are appended to a JSON-lines
file (``--out``, default ``benchmarks/results/loglinear_grid.jsonl``); a rerun skips the
samples already there, so a long run can be stopped and resumed. ``--report`` prints the tables
from that file without computing.

Usage: ``python benchmarks/loglinear_grid.py [--samples 30] [--only eusilcP] [--report]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _grid_populations as gp  # noqa: E402
from _common import print_conditions  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "loglinear_grid.jsonl"


def _seed(setting_id: str, i: int) -> int:
    return zlib.crc32(f"{setting_id}#{i}".encode())


def estimate(pop, setting, i: int, ci: bool = True, selection=None) -> dict:
    """One sample of ``setting``: the estimate (and its interval), the truth, the path."""
    import sdckit
    from sdckit._core.loglinear import uniqueness_variances

    rng = np.random.default_rng(_seed(setting.id, i))
    rows, pi = gp.draw(pop, setting, rng)
    t1, t2, K = gp.truth(pop, setting.keys, rows)
    data = gp.sample_table(pop, setting.keys, rows)
    if setting.design == "stratified":
        fr = gp.stratum_fractions(setting, len(pop.labels[setting.stratum]))
        seen = set(data[setting.stratum].unique().to_list())
        lab = pop.labels[setting.stratum]
        frac = {setting.stratum: {lab[c]: float(fr[c]) for c in range(len(lab)) if lab[c] in seen}}
    else:
        frac = setting.fraction
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        r = sdckit.loglinear_risk(data, list(setting.keys), sampling_fraction=frac, selection=selection)
        t_est = time.perf_counter() - t0
        t0 = time.perf_counter()
        rc = (
            sdckit.loglinear_risk(data, list(setting.keys), sampling_fraction=frac, intervals={"ci": True})
            if ci
            else None
        )
        t_ci = time.perf_counter() - t0 if ci else None
    su = np.asarray(r.fk) == 1
    v1, v2 = uniqueness_variances((1.0 - pi[su]) * np.asarray(r.lam)[su])
    out = {
        "setting": setting.id,
        "var_tau1": float(v1.sum()),
        "var_tau2": float(v2.sum()),
        "sample": i,
        "held_out": setting.held_out,
        "n": int(len(rows)),
        "K": int(K),
        "n1": int(r.n_sample_uniques),
        "true_tau1": t1,
        "true_tau2": t2,
        "tau1": float(r.tau1),
        "tau2": float(r.tau2),
        "n_parameters": int(r.n_parameters),
        "terms": [list(t) for t in r.terms],
        "path": [{k: v for k, v in p.items()} for p in r.path],
        "blend": r.blend,
        "seconds": t_est,
        "warnings": sorted({str(w.message)[:200] for w in caught}),
        "weak": list(r.weak),
        "interval": {k: (list(v) if isinstance(v, tuple) else v) for k, v in r.interval.items()},
    }
    if rc is not None:
        out["ci"] = {k: rc.ci[k] for k in ("tau1", "tau2")} | {"method": rc.ci.get("method")}
        out["ci_seconds"] = t_ci
    return out


def _done(path: Path) -> set:
    if not path.exists():
        return set()
    out = set()
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            out.add((r["setting"], r["sample"]))
    return out


def run(samples: int, only=None, out: Path = OUT, ci: bool = True, progress=print, selection=None) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done(out)
    pops: dict = {}
    for setting in gp.GRID:
        if only and not any(o in setting.id for o in only):
            continue
        if not gp.available(setting.population):
            progress(f"skip {setting.id}: the population's file is not here")
            continue
        todo = [i for i in range(samples) if (setting.id, i) not in done]
        if not todo:
            continue
        if setting.population not in pops:
            pops[setting.population] = gp.loaders()[setting.population]()
        pop = pops[setting.population]
        t0 = time.perf_counter()
        for i in todo:
            rec = estimate(pop, setting, i, ci=ci, selection=selection)
            with open(out, "a") as fh:  # one line per sample: a stopped run resumes
                fh.write(json.dumps(rec, default=float) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        progress(f"{setting.id}: {len(todo)} samples in {time.perf_counter() - t0:.0f} s")


def load(path: Path = OUT) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarise(records: list[dict], tau2_key="tau2", ci_key="interval") -> list[dict]:
    """Per setting: n, bias and RMSE of tau_1 and tau_2, interval coverage and width, times."""
    by: dict = {}
    for r in records:
        by.setdefault(r["setting"], []).append(r)
    rows = []
    for s in gp.GRID:
        rs = by.get(s.id)
        if not rs:
            continue
        e2 = np.array([r[tau2_key] for r in rs])
        t2 = np.array([r["true_tau2"] for r in rs])
        e1 = np.array([r["tau1"] for r in rs])
        t1 = np.array([r["true_tau1"] for r in rs])
        rel2, rel1 = (e2 - t2) / t2, (e1 - t1) / np.maximum(t1, 1)
        row = {
            "setting": s.id,
            "held_out": s.held_out,
            "samples": len(rs),
            "n": float(np.mean([r["n"] for r in rs])),
            "bias2": float(rel2.mean()),
            "rmse2": float(np.sqrt(np.mean(rel2**2))),
            "bias1": float(rel1.mean()),
            "seconds": float(np.mean([r["seconds"] for r in rs])),
            "warned": float(np.mean([bool(r["warnings"]) for r in rs])),
        }
        with_ci = [r for r in rs if r.get(ci_key)]
        if with_ci:
            lo = np.array([r[ci_key]["tau2"][0] for r in with_ci])
            hi = np.array([r[ci_key]["tau2"][1] for r in with_ci])
            tt = np.array([r["true_tau2"] for r in with_ci])
            ee = np.array([r[tau2_key] for r in with_ci])
            row["cover2"] = float(np.mean((lo <= tt) & (tt <= hi)))
            row["contains"] = float(np.mean((lo <= ee) & (ee <= hi)))
            row["width2"] = float(np.mean((hi - lo) / ee))
            secs = [r.get("ci_seconds") for r in with_ci if r.get("ci_seconds") is not None]
            row["ci_seconds"] = float(np.mean(secs)) if secs else math.nan
        row["warning_rule"] = float(np.mean([warned_as_stated(r) for r in rs]))
        rows.append(row)
    return rows


def warned_as_stated(r: dict) -> bool:
    """Whether a sample carries the weak-estimate warning exactly when one of its conditions
    holds (fewer than 5,000 records, more parameters than records, tau_2 under 10)."""
    expected = r["n"] < 5000 or r["n_parameters"] > r["n"] or r["tau2"] < 10
    return expected == bool(r.get("weak"))


def pooled(rows: list[dict], key: str) -> float:
    """The mean of ``key`` over the settings' samples (weighted by samples)."""
    have = [r for r in rows if key in r]
    return sum(r[key] * r["samples"] for r in have) / max(sum(r["samples"] for r in have), 1)


def print_tables(rows: list[dict]) -> None:
    for held, title in ((False, "Tuning part"), (True, "Held-out part")):
        part = [r for r in rows if r["held_out"] == held]
        if not part:
            continue
        print(f"\n### {title} ({len(part)} settings)\n")
        print("| setting | samples | mean n | bias tau2 | RMSE tau2 | bias tau1 | coverage tau2 | width / estimate "
              "| estimate contained | s / estimate | s / parametric interval | warned |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in part:
            cov = f"{100 * r['cover2']:.0f} %" if "cover2" in r else "-"
            wid = f"{r['width2']:.2f}" if "width2" in r else "-"
            con = f"{100 * r['contains']:.0f} %" if "contains" in r else "-"
            cis = f"{r['ci_seconds']:.2f}" if not math.isnan(r.get("ci_seconds", math.nan)) else "-"
            print(f"| {r['setting']} | {r['samples']} | {r['n']:,.0f} | {100 * r['bias2']:+.1f} % | "
                  f"{100 * r['rmse2']:.1f} % | {100 * r['bias1']:+.1f} % | {cov} | {wid} | {con} | "
                  f"{r['seconds']:.2f} | {cis} | {100 * r['warned']:.0f} % |")  # fmt: skip
        print(f"\nPooled coverage of tau2: {100 * pooled(part, 'cover2'):.1f} %, lowest "
              f"{100 * min((r['cover2'] for r in part if 'cover2' in r), default=float('nan')):.0f} %; "
              f"the warning as stated in {100 * pooled(part, 'warning_rule'):.1f} % of the samples")  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--only", nargs="*", help="settings whose id contains one of these")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--no-ci", action="store_true", help="the estimates only, no intervals")
    p.add_argument("--report", action="store_true", help="the tables from --out, nothing computed")
    p.add_argument("--quick", action="store_true", help="two samples of two synthetic settings, to a temporary file")
    p.add_argument(
        "--selection", type=json.loads, default=None, help='the search\'s options, as JSON ({"term_test": 2})'
    )
    a = p.parse_args(argv)
    print_conditions()
    if a.quick:
        import tempfile

        a.samples, a.only, a.no_ci = 2, ["synthetic/true/srs/1000", "synthetic/true/stratified/2500"], True
        a.out = Path(tempfile.mkdtemp()) / "grid.jsonl"
    if not a.report:
        run(a.samples, a.only, a.out, ci=not a.no_ci, selection=a.selection)
    if a.out.exists():
        print_tables(summarise(load(a.out)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
