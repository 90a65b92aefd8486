"""Benchmark of ``sdckit.synthetic_risk`` and ``sdckit.synthetic_utility`` on anonymeter's
Adult files, with anonymeter's times for the same attacks beside ours.

Data: ``../shared/data/anonymeter-adults``: ``adults_control.csv`` split in two halves (seeded
permutation 0) as the original (4,879 records) and the control file, ``adults_syn_ctgan.csv``
(39,040 records) as the synthetic file; 8 categorical keys, 6 numeric variables, ``income``
as the secret. Without ``../shared`` (and with ``--quick``) anonymeter's bundled 100-record test
files are used, original as its own control.

Cases: each attack alone (singling out with 3-column queries, linkability on the two halves of
the keys, inference of income; 500 attacks each, as anonymeter's defaults), then the full risk
assessment (distribution distances of all key pairs, closeness of 5,000 sampled records, the
four attacks) and the full utility assessment (pMSE, 105 one- and two-way tables, estimates).
Best of ``--repeats`` (a run slower than 30 s is not repeated).

anonymeter's times: the stored run of ``tests/data/anonymeter/run_anonymeter.py`` (anonymeter
1.1.0, ``n_jobs=1``, singling out capped at 100,000 query attempts), measured on the same
shared 2-core machine (28.5 s, 8.8 s and 4.4 s), or a fresh run with ``--anonymeter-python
PATH`` (a Python with anonymeter installed; about a minute). Targets: the full assessment in
under 10 s on 2 cores, and each attack at least 10x faster than anonymeter. Measured (same
machine, load average 1 to 2): 1.5 s, 0.7 s and 0.35 s (12 to 18x), the full risk assessment
3.2 s and the utility 0.6 s.

``--blas-threads`` (default 1) sets the BLAS threads before NumPy loads: on a shared machine a
multithreaded BLAS that competes for the cores makes the matrix products 10 to 40 times slower.
The exit code is always 0.

Usage::

    python benchmarks/synthetic_data.py
    python benchmarks/synthetic_data.py --quick
    python benchmarks/synthetic_data.py --anonymeter-python /path/to/venv/bin/python
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))


def _blas_threads(argv) -> None:
    n = "1"
    if "--blas-threads" in argv:
        n = argv[argv.index("--blas-threads") + 1]
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, n)


_blas_threads(sys.argv)

import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

import sdckit  # noqa: E402
from _common import base_parser, best_of, fmt_s, markdown_table, print_conditions  # noqa: E402
from sdckit.risk import synthetic as S  # noqa: E402
from sdckit.risk._synthetic_data import read_files  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "anonymeter-adults"
BUNDLED = ROOT / "tests" / "data" / "anonymeter"
STORED = BUNDLED / "adults_anonymeter.json"
KEYS = ["type_employer", "education", "marital", "occupation", "relationship", "race", "sex", "country"]
NUM = ["age", "capital_gain", "capital_loss", "hr_per_week", "education_num", "fnlwgt"]
SLOW_RUN = 30.0


def _files(quick: bool):
    if not quick and SHARED.is_dir():
        ctl = pl.read_csv(SHARED / "adults_control.csv")
        syn = pl.read_csv(SHARED / "adults_syn_ctgan.csv")
        perm = np.random.default_rng(0).permutation(ctl.height)
        return ctl[perm[: ctl.height // 2]], syn, ctl[perm[ctl.height // 2 :]], NUM, "Adult (anonymeter)"
    ori = pl.read_csv(BUNDLED / "adults_ori_test.csv")
    syn = pl.read_csv(BUNDLED / "adults_syn_test.csv")
    return ori, syn, ori, [v for v in NUM if v != "fnlwgt"], "anonymeter's 100-record test files"


def _anonymeter_times(python: str | None) -> dict:
    if python:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "anon.json"
            subprocess.run([python, str(BUNDLED / "run_anonymeter.py"), str(out)], check=True, capture_output=True)
            ref = json.loads(out.read_text())
    else:
        ref = json.loads(STORED.read_text())
    return {k: ref[k]["seconds"] for k in ("singling_out", "linkability", "inference:income")}


def main() -> None:
    ap = base_parser(__doc__, quick_help="anonymeter's 100-record test files, one run each")
    ap.add_argument("--anonymeter-python", help="a Python with anonymeter installed, to time it afresh")
    ap.add_argument("--blas-threads", default="1", help="BLAS threads (default 1; set before NumPy loads)")
    args = ap.parse_args()
    print_conditions()
    repeats = 1 if args.quick else args.repeats
    ori, syn, ctl, num, label = _files(args.quick)
    options = {"split": None, "order": 2, "top": 10, "n_attacks": 500, "n_cols": 3, "n_neighbors": 1,
               "closeness_sample": 5000, "confidence": 0.95, "significance": 0.05, "records": False}  # fmt: skip
    par = S._parameters(KEYS, num, ["income"], args.seed, options)
    data = read_files([ori, syn, ctl], ["original", "synthetic", "control"], par["cat"], par["num"], None, None, "b")

    def attack(fn, *extra):
        return lambda: fn(data, par, *extra, np.random.default_rng(args.seed))

    times = {
        "singling_out": best_of(attack(S.singling_out), repeats, SLOW_RUN)[0],
        "linkability": best_of(attack(S.linkability), repeats, SLOW_RUN)[0],
        "inference:income": best_of(attack(S.inference, "income"), repeats, SLOW_RUN)[0],
    }
    risk_t, risk = best_of(
        lambda: sdckit.synthetic_risk(ori, syn, ctl, keys=KEYS, variables=num, sensitive="income", seed=args.seed),
        repeats,
        SLOW_RUN,
    )
    util_t, util = best_of(lambda: sdckit.synthetic_utility(ori, syn, keys=KEYS, variables=num), repeats, SLOW_RUN)
    anon = {} if args.quick else _anonymeter_times(args.anonymeter_python)
    print(f"Data: {label}: original {ori.height:,}, synthetic {syn.height:,}, control {ctl.height:,} records; "
          f"BLAS threads {os.environ.get('OPENBLAS_NUM_THREADS')}\n")  # fmt: skip
    rows = []
    for name, t in times.items():
        a = anon.get(name)
        res = risk.attacks[name]
        rows.append([name, fmt_s(t), fmt_s(a) if a else "-", f"{a / t:.0f}x" if a else "-",
                     f"{res['risk']:.3f} [{res['ci'][0]:.3f}, {res['ci'][1]:.3f}]"])  # fmt: skip
    total_anon = sum(anon.values()) if anon else None
    total_ours = sum(times.values())
    rows.append(["the three attacks", fmt_s(total_ours), fmt_s(total_anon) if total_anon else "-",
                 f"{total_anon / total_ours:.0f}x" if total_anon else "-", ""])  # fmt: skip
    rows.append(["synthetic_risk (everything)", fmt_s(risk_t), "-", "-", f"risk {risk.risk:.3f}, leak {risk.leak}"])
    rows.append(
        ["synthetic_utility (everything)", fmt_s(util_t), "-", "-", f"S_pMSE {util.s_pmse:.1f}, loss {util.loss:.3f}"]
    )
    rows.append(["risk + utility", fmt_s(risk_t + util_t), "-", "-", "target < 10 s"])
    markdown_table(["case", "sdckit s", "anonymeter s", "speed-up", "result"], "lrrrl", rows)


if __name__ == "__main__":
    main()
