"""Benchmark of start-up: how long a new Python process takes to ``import sdckit`` and to run
``sdckit --version``, beside ``import polars`` and ``import numpy``.

Cases, each a new interpreter (``sys.executable``) started by :mod:`subprocess`:

* ``python -c "pass"`` -- the interpreter alone (what every case pays);
* ``python -c "import sdckit"`` -- the package: its public names are loaded on first use
  (``sdckit._lazy``), so this imports neither NumPy nor Polars;
* ``python -m sdckit.cli --version`` -- what the ``sdckit`` console script runs
  (``sdckit.cli:main``): ``--version`` imports no command module;
* ``python -c "import sdckit; sdckit.k_anonymity"`` -- the first measure asked for (its module,
  NumPy and what it needs);
* ``python -c "import polars"`` and ``python -c "import numpy"`` -- the libraries, for scale.

The cases run interleaved (one run of each, ``--repeats`` rounds), so a change of the load on a
shared machine reaches every case alike; the table shows the median and the minimum wall time
per case in seconds. The issue's target: under 0.5 s for ``import sdckit`` and ``sdckit
--version`` on a quiet machine.

The exit code is always 0: benchmarks report, they do not fail CI.

Usage::

    python benchmarks/startup.py               # 21 rounds
    python benchmarks/startup.py --quick       # 3 rounds (CI smoke test)
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import base_parser, fmt_s, markdown_table, print_conditions  # noqa: E402

#: each case: its label and the interpreter's arguments
CASES = {
    "python (nothing imported)": ["-c", "pass"],
    "import sdckit": ["-c", "import sdckit"],
    "sdckit --version": ["-m", "sdckit.cli", "--version"],
    "import sdckit; sdckit.k_anonymity": ["-c", "import sdckit; sdckit.k_anonymity"],
    "import polars": ["-c", "import polars"],
    "import numpy": ["-c", "import numpy"],
}


def _wall(arguments: list[str]) -> float:
    """Wall seconds of one new interpreter running ``arguments`` (its output discarded)."""
    t = time.perf_counter()
    subprocess.run([sys.executable, *arguments], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> None:
    ap = base_parser(__doc__, quick_help="3 rounds")
    ap.set_defaults(repeats=None)
    args = ap.parse_args()
    print_conditions()
    rounds = args.repeats or (3 if args.quick else 21)
    times: dict[str, list[float]] = {label: [] for label in CASES}
    for _ in range(rounds):  # interleaved: one run of every case per round
        for label, arguments in CASES.items():
            times[label].append(_wall(arguments))
    print(f"# start-up: a new process, median and minimum of {rounds} interleaved runs\n")
    rows = [[label, fmt_s(statistics.median(t)), fmt_s(min(t))] for label, t in times.items()]
    markdown_table(["case", "median s", "min s"], "lrr", rows)


if __name__ == "__main__":
    main()
