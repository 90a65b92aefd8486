"""Benchmark of ``sdckit.loglinear_risk``: model fits on a large table, and the sdcMicro
compatibility mode (``compat="sdcMicro"``, sdcMicro's ``modRisk``) on its reference cases.

1. Table of 6 keys with 6, 14, 2, 6, 16, 10 categories (161,280 cells, as in seed S004), a
   20,000-record Bernoulli sample (pi = 0.02) from the synthetic log-linear population of
   benchmarks/loglinear_validation.py. Cases: the all-two-way fit with tau estimates (target
   < 2 s) and the automatic forward search (target < 30 s), plus the independence model.
2. The compatibility mode on the calls of tests/data/reference/sdcmicro/modRisk.json (testdata2,
   3 keys, 80 cells, methods default, CE, PML, weightedLLM, IPF), plus the 7-key testdata table
   of the same reference file (12,960 cells). Time per call (best of ``--repeats`` batches of
   ``--batch`` calls). The "before" column is the code before the compatibility mode was made
   fast: measured live with ``--baseline DIR`` (a checkout of that code: its ``src`` is put first
   on the path in a subprocess), otherwise the figures recorded on the project's 2-core machine
   with ``--baseline`` (see ``RECORDED_BEFORE``). There is no R here: sdcMicro's ``modRisk``
   takes about half of the old sdckit time on these calls (measured by the project).

3. ``--side-by-side``: the compatibility mode beside sdcMicro's ``modRisk`` itself, in turns
   under the same load: testdata2 (93 records, 3 keys), testdata (4,580 records, 7 keys) and
   10^6 records drawn from testdata (seeded, weights times U(0.5, 1.5)), methods default and
   IPF. Each round runs sdckit in a fresh process (its first call, then the median of
   ``--batch`` further calls), once with the default threads and once with one thread for
   OpenBLAS and Polars, then sdcMicro in a fresh R process (``library(sdcMicro)``, or the
   functions of ``--r-source``, an R file defining ``modRisk`` like sdcMicro's; only the call is
   timed, median of ``--batch`` calls); the table gives the medians over the rounds.

Prints markdown tables; always exits 0. Timings on a shared machine may be contended.
Usage: ``python benchmarks/loglinear.py [--baseline DIR] [--repeats 7] [--batch 20] [--quick]``,
``python benchmarks/loglinear.py --side-by-side [--r-source FILE] [--rounds 5]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, best_of, markdown_table, print_conditions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
REFERENCE = DATA / "reference" / "sdcmicro" / "modRisk.json"

#: ms per call of the old code (commit 1232996), measured with ``flock /tmp/sdckit-cpu.lock python
#: benchmarks/loglinear.py --baseline /work/baseline --repeats 7`` (2 shared cores, best of 7 x 20 calls)
RECORDED_BEFORE = {
    "modRisk_testdata2_default": 6.88,
    "modRisk_testdata2_CE": 6.71,
    "modRisk_testdata2_PML": 6.69,
    "modRisk_testdata2_weightedLLM": 8.40,
    "modRisk_testdata2_IPF": 2.30,
    "testdata_7keys_default": 57.09,
    "testdata_7keys_IPF": 8.26,
}


def compat_cases() -> list[dict]:
    """The calls of modRisk.json (and the 7-key testdata table of its ``cell_tables``)."""
    ref = json.loads(REFERENCE.read_text())
    out = []
    for c in ref["cases"]:
        p = c["parameters"]
        keys = [v.strip() for v in p["formulaM"].lstrip("~").split("+")]
        out.append(
            {
                "id": c["id"],
                "dataset": c["dataset"],
                "keys": keys,
                "weight": p["weights"],
                "model": p["formulaM"],
                "method": p["method"],
                "gr1": c["outputs"]["gr1"],
            }
        )
    table = ref["cell_tables"]["testdata"]
    for method in ("default", "IPF"):
        out.append(
            {
                "id": f"testdata_7keys_{method}",
                "dataset": "testdata",
                "keys": table["vars"],
                "weight": table["weights"],
                "model": " + ".join(table["vars"]),
                "method": method,
                "gr1": None,
            }
        )
    return out


def time_compat(repeats: int, batch: int) -> dict:
    """ms per call of every compatibility case with the ``sdckit`` on the path (old or new
    keyword for the modRisk method), and the gr1 it gives."""
    import inspect

    import polars as pl

    import sdckit

    new_names = "compat_method" in inspect.signature(sdckit.loglinear_risk).parameters
    frames = {}
    out = {}
    for case in compat_cases():
        if case["dataset"] not in frames:
            frames[case["dataset"]] = pl.read_csv(DATA / "sdcmicro" / f"{case['dataset']}.csv")
        kw = {"compat": "sdcMicro", "compat_method" if new_names else "modrisk_method": case["method"]}
        if "fit" in inspect.signature(sdckit.loglinear_risk).parameters:  # the options grouped (issue 38)
            kw = {"fit": kw}
        data = frames[case["dataset"]]

        def one_batch(case=case, data=data, kw=kw):
            for _ in range(batch):
                r = sdckit.loglinear_risk(data, case["keys"], weight=case["weight"], model=case["model"], **kw)
            return r

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one_batch()  # warm-up
            seconds, r = best_of(one_batch, repeats)
        out[case["id"]] = {
            "ms": 1000 * seconds / batch,
            "gr1": float(r.modrisk["gr1"]),
            "prepare_ms": _prepare_ms(data, case, repeats, batch),
        }
    return out


def _prepare_ms(data, case, repeats: int, batch: int) -> float | None:
    """ms per call of the shared key validation and encoding alone (``sdckit._prepare``), the
    part of a call that does not depend on the measure."""
    try:
        from sdckit._prepare import prepare
    except ImportError:
        return None

    def one_batch():
        for _ in range(batch):
            prepare(data, case["keys"], weight=case["weight"])

    one_batch()
    return 1000 * best_of(one_batch, repeats)[0] / batch


def time_compat_elsewhere(src: Path, repeats: int, batch: int) -> dict:
    """:func:`time_compat` in a subprocess with ``src`` first on the path (the old code)."""
    env = dict(os.environ, PYTHONPATH=str(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run(
        [sys.executable, __file__, "--compat-json", "--repeats", str(repeats), "--batch", str(batch)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(src.parent),
        timeout=600,
    )
    if res.returncode != 0:
        raise RuntimeError(f"baseline run failed: {res.stderr.strip()[-500:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def compat_table(before: dict | None, repeats: int, batch: int) -> None:
    now = time_compat(repeats, batch)
    label = "before (ms)" if before is not None else "before (ms, recorded)"
    before = before if before is not None else {k: {"ms": v} for k, v in RECORDED_BEFORE.items()}
    rows = []
    for case in compat_cases():
        cid = case["id"]
        b = before.get(cid, {}).get("ms")
        n = now[cid]["ms"]
        ok = "-" if case["gr1"] is None else ("yes" if abs(now[cid]["gr1"] / case["gr1"] - 1) <= 1e-6 else "NO")
        prep = now[cid]["prepare_ms"]
        rows.append(
            (
                cid,
                case["method"],
                "-" if b is None else f"{b:.2f}",
                f"{n:.2f}",
                "-" if prep is None else f"{prep:.2f}",
                "-" if b is None else f"{b / n:.2f}x",
                "-" if b is None else f"≈ {b / 2:.2f}",
                ok,
            )
        )
    tb = sum(before[c["id"]]["ms"] for c in compat_cases()[:5] if c["id"] in before)
    tn = sum(now[c["id"]]["ms"] for c in compat_cases()[:5])
    tp = sum(now[c["id"]]["prepare_ms"] or 0.0 for c in compat_cases()[:5])
    rows.append(
        (
            "all five modRisk.json calls",
            "",
            f"{tb:.2f}",
            f"{tn:.2f}",
            f"{tp:.2f}",
            f"{tb / tn:.2f}x",
            f"≈ {tb / 2:.2f}",
            "",
        )
    )
    print(f'\nsdcMicro compatibility mode (compat="sdcMicro"), ms per call, best of {repeats} batches of {batch}\n')
    markdown_table(
        [
            "case",
            "method",
            label,
            "now (ms)",
            "of which key validation + encoding (ms)",
            "speed-up",
            "sdcMicro modRisk (ms) ≈ half of before",
            "gr1 = reference (1e-6)?",
        ],
        "llrrrrrc",
        rows,
    )
    print("\nsdcMicro modRisk ≈ half of the old sdckit time (measured by the project; no R on this machine).")
    print(
        "Key validation + encoding: the shared input step of every measure (roles checked, keys encoded by "
        "the engine), included in 'now'."
    )


def fits_table(repeats: int) -> None:
    import polars as pl

    import loglinear_validation as V
    import sdckit

    lam = V.synthetic_lambda()
    rng = np.random.default_rng(1)
    table, *_ = V.synthetic_sample(lam, 0.02, rng)
    table = table.head(20_000)
    table = table.with_columns(
        [pl.col(k).cast(pl.String).cast(pl.Enum([str(i) for i in range(L)])) for k, L in zip(V.SYN_KEYS, V.SYN_CARDS)]
    )
    print(f"n = {table.height:,} records, {int(np.prod(V.SYN_CARDS)):,} cells\n")
    rows = []
    for name, model, target in (
        ("independence", "independence", None),
        ("all two-way", "2way", 2.0),
        ("auto search", "auto", 30.0),
    ):

        def run(model=model):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return sdckit.loglinear_risk(table, V.SYN_KEYS, sampling_fraction=0.02, model=model)

        best, r = best_of(run, repeats)
        ok = "-" if target is None else ("yes" if best < target else "no")
        rows.append(
            (
                name,
                f"{best:.2f}",
                "-" if target is None else f"< {target:g} s",
                ok,
                f"{r.tau1:.1f}",
                f"{r.tau2:.1f}",
                len(r.terms),
            )
        )
    markdown_table(["case", f"seconds (best of {repeats})", "target", "ok?", "tau1", "tau2", "terms"], "lrrlrrr", rows)


SIDE_CASES = [
    ("testdata2", "testdata2", ["sex", "water", "roof"], "default"),
    ("testdata", "testdata", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"], "default"),
    ("testdata", "testdata", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"], "IPF"),
    ("10^6 from testdata", "big", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"], "default"),
    ("10^6 from testdata", "big", ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"], "IPF"),
]

_SDCKIT_CHILD = """
import json, statistics, sys, time, warnings
import polars as pl
import sdckit
csv, keys, method, batch = sys.argv[1], sys.argv[2].split(","), sys.argv[3], int(sys.argv[4])
df = pl.read_csv(csv)
def call():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sdckit.loglinear_risk(df, keys, weight="sampling_weight", model=" + ".join(keys),
                                     compat="sdcMicro", compat_method=method)
t = time.perf_counter(); call(); first = time.perf_counter() - t
times = []
for _ in range(batch):
    t = time.perf_counter(); r = call(); times.append(time.perf_counter() - t)
print(json.dumps({"first": first, "warm": statistics.median(times), "gr1": r.modrisk["gr1"]}))
"""


def _side_data(tmp: Path, seed: int) -> dict[str, str]:
    """CSV files of the three data sets (the 10^6 one drawn from testdata)."""
    import polars as pl

    out = {}
    for name in ("testdata2", "testdata"):
        out[name] = str(DATA / "sdcmicro" / f"{name}.csv")
    td = pl.read_csv(DATA / "sdcmicro" / "testdata.csv")
    rng = np.random.default_rng(seed)
    big = td[rng.integers(0, td.height, 10**6)]
    big = big.with_columns(
        pl.Series("sampling_weight", big["sampling_weight"].to_numpy() * rng.uniform(0.5, 1.5, 10**6))
    )
    out["big"] = str(tmp / "big.csv")
    big.select(SIDE_CASES[1][2] + ["sampling_weight"]).write_csv(out["big"])
    return out


def _sdckit_child(csv: str, keys, method: str, batch: int, threads: int | None) -> dict:
    env = dict(os.environ)
    if threads is not None:
        env.update({v: str(threads) for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "POLARS_MAX_THREADS")})
    res = subprocess.run(
        [sys.executable, "-c", _SDCKIT_CHILD, csv, ",".join(keys), method, str(batch)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
    )
    if res.returncode != 0:
        raise RuntimeError(res.stderr.strip()[-500:])
    return json.loads(res.stdout.strip().splitlines()[-1])


def _sdcmicro_child(csv: str, keys, method: str, batch: int, r_source: str | None) -> dict | None:
    load = f'source("{r_source}")' if r_source else "suppressMessages(library(sdcMicro))"
    prog = (
        f"{load}\n"
        f'd <- read.csv("{csv}")\n'
        f"f <- ~ {' + '.join(keys)}\n"
        f't <- sapply(1:{batch}, function(i) system.time(r <<- modRisk(d, method = "{method}", '
        'formulaM = f, weights = "sampling_weight"))[["elapsed"]])\n'
        'cat(median(t), r$gr1, "\\n")\n'
    )
    res = subprocess.run(["Rscript", "-e", prog], capture_output=True, text=True, timeout=1200)
    if res.returncode != 0:
        print(f"(sdcMicro run failed: {res.stderr.strip()[-300:]})", file=sys.stderr)
        return None
    warm, gr1 = res.stdout.split()[-2:]
    return {"warm": float(warm), "gr1": float(gr1)}


def side_by_side_table(rounds: int, batch: int, r_source: str | None, seed: int) -> None:
    import shutil
    import statistics
    import tempfile

    from _common import load_average

    have_r = shutil.which("Rscript") is not None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        files = _side_data(Path(tmp), seed)
        for label, data, keys, method in SIDE_CASES:
            got: dict[str, list] = {"two": [], "one": [], "r": []}
            b = max(1, batch // 10) if data == "big" else batch
            for _ in range(rounds):
                got["two"].append(_sdckit_child(files[data], keys, method, b, None))
                got["one"].append(_sdckit_child(files[data], keys, method, b, 1))
                if have_r:
                    r = _sdcmicro_child(files[data], keys, method, b, r_source)
                    if r is not None:
                        got["r"].append(r)

            def med(name, field, got=got):
                return statistics.median(x[field] for x in got[name]) if got[name] else None

            r_warm = med("r", "warm")
            two_w, one_w = med("two", "warm"), med("one", "warm")
            rows.append(
                [
                    label,
                    method,
                    f"{1000 * med('two', 'first'):.0f} / {1000 * med('one', 'first'):.0f}",
                    f"{1000 * two_w:.1f} / {1000 * one_w:.1f}",
                    "-" if r_warm is None else f"{1000 * r_warm:.1f}",
                    "-" if r_warm is None else f"{r_warm / two_w:.1f}x / {r_warm / one_w:.1f}x",
                    f"{got['two'][-1]['gr1']:.6g}" + ("" if not got["r"] else f" / {got['r'][-1]['gr1']:.6g}"),
                ]
            )
            print(f"  {label} {method}: done (load {load_average()})", file=sys.stderr, flush=True)
    print(
        f"\nloglinear_risk(compat='sdcMicro') beside sdcMicro modRisk, in turns, medians of {rounds} rounds "
        "(sdckit: 2 threads / 1 thread for OpenBLAS and Polars; sdcMicro: single-threaded R)\n"
    )
    markdown_table(
        [
            "data",
            "method",
            "sdckit first call (ms)",
            "sdckit later calls (ms)",
            "sdcMicro modRisk (ms)",
            "sdcMicro / sdckit",
            "gr1 sdckit / sdcMicro",
        ],
        "llrrrrr",
        rows,
    )


def main() -> int:
    ap = base_parser(__doc__, quick_help="one run per case and batches of 5 calls")
    ap.add_argument("--batch", type=int, default=20, help="calls per timed batch in the compatibility table")
    ap.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of the old code: time the compatibility calls with its src/ as well",
    )
    ap.add_argument("--side-by-side", action="store_true", help="only the table beside sdcMicro's modRisk")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the side-by-side table (default 5)")
    ap.add_argument("--r-source", default=None, help="an R file defining modRisk (when sdcMicro is not installed)")
    ap.add_argument(
        "--compat-json",
        action="store_true",
        help=Path(__file__).name + " internal: print the compatibility timings as JSON (used with --baseline)",
    )
    a = ap.parse_args()
    repeats, batch = (1, 5) if a.quick else (a.repeats, a.batch)
    if a.compat_json:
        print(json.dumps(time_compat(repeats, batch)))
        return 0
    print_conditions()
    if a.side_by_side:
        side_by_side_table(2 if a.quick else a.rounds, batch, a.r_source, a.seed)
        return 0
    try:
        fits_table(1 if a.quick else 3)
        before = None if a.baseline is None else time_compat_elsewhere(a.baseline / "src", repeats, batch)
        compat_table(before, repeats, batch)
    except Exception as exc:  # benchmarks report, they do not fail
        print(f"benchmark failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
