"""Smoke test of the benchmark scripts on tiny sizes: they must run to their table, without a
traceback (the scripts always exit 0, so the output is what is checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

CASES = {
    "frequencies.py": ["--sizes", "2e4", "--repeats", "1", "--profile"],
    "risk.py": ["--sizes", "2e4", "--repeats", "1"],
    "utility.py": ["--sizes", "5e3", "--repeats", "1"],
    "external_risk.py": ["--n", "3000", "--repeats", "1"],
    "linkage.py": ["--n", "3000", "--repeats", "1"],
    "loglinear.py": [],
    "loglinear_validation.py": ["--samples", "2", "--synthetic-samples", "1"],
    "loglinear_grid.py": ["--quick"],  # two samples of two settings on the synthetic population
    "risk_validation.py": ["--samples", "2", "--settings", "K1, 1/50;K1, by region"],
    "register_validation.py": ["--samples", "2"],
    "register_convergence.py": [
        "--quick"
    ],  # two fits of approach B, the true membership model  # synthetic 10^6 population, two samples
    "suda.py": ["--quick"],  # fixed sizes (10^5 and 10^6), one run each
    "local_suppression.py": ["--quick"],  # eusilcP when ../shared is present, else the bundled files
    "record_swap.py": ["--quick"],  # eusilcP when ../shared is present, else a synthetic population
    "microaggregation.py": ["--quick"],  # 10^4 records, one run
    "report.py": ["--quick"],  # testdata with two recipes and 10^5 synthetic records, one run
    "scale.py": ["--quick", "--engines", "duckdb,polars"],  # 10^5 records; Spark runs in test_engines_outofcore
    "small_calls.py": ["--quick"],  # testdata, three calls, pandas and Polars, a few timings each
    "startup.py": ["--quick"],  # new processes: import sdckit, sdckit --version, polars, numpy; 3 rounds
    "search.py": ["--quick"],
    "rank_swap.py": ["--sizes", "2e3", "--rounds", "1"],  # sdcMicro only where R has it (else "-")
    "synthetic_data.py": [
        "--quick"
    ],  # anonymeter's 100-record test files (bundled), one run  # ARX's four runs when ../shared is present, else the bundled file; 10^5 records
}


def test_every_benchmark_is_covered():
    scripts = {p.name for p in BENCH.glob("*.py") if not p.name.startswith("_")} - {"synthetic.py"}
    assert scripts == set(CASES)


#: scripts that read the large shared datasets (they skip that part without them)
NEEDS_SHARED = {"loglinear_validation.py", "risk_validation.py"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "script", [pytest.param(s, marks=pytest.mark.shared_data) if s in NEEDS_SHARED else s for s in sorted(CASES)]
)
def test_benchmark_runs(script):
    res = subprocess.run(
        [sys.executable, str(BENCH / script), *CASES[script]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=BENCH.parent,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "Traceback" not in out, out
    assert "|---" in res.stdout, out  # the markdown table was printed
