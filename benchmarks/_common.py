"""Helpers shared by the benchmark scripts: the common options, timing, size parsing, number
formatting, markdown tables, and how a run was made (machine, threads, load).

Every benchmark prints :func:`conditions` before its tables and the load again at its end: the
machine (processor, cores), the threads its multi-threaded kernels may use (OpenBLAS for NumPy's
matrix products, Polars' thread pool) and the load average. Timings on a machine shared with
other jobs are slower, and a kernel that uses two threads loses more under load than a
single-threaded one: ``--threads 1`` (every script built on :func:`base_parser`) runs the script
again with one thread for OpenBLAS, OpenMP and Polars, for the single-thread figure.
"""

from __future__ import annotations

import argparse
import atexit
import os
import platform
import statistics
import sys
import time

__all__ = [
    "base_parser",
    "best_of",
    "conditions",
    "fmt_s",
    "grouped",
    "load_average",
    "markdown_table",
    "median_of",
    "parse_sizes",
    "print_conditions",
]

#: the variables that set the threads of OpenBLAS, OpenMP and Polars (read when they load)
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "POLARS_MAX_THREADS")


def load_average() -> str:
    """The load average over 1, 5 and 15 minutes (``/proc/loadavg``), or "unknown"."""
    try:
        with open("/proc/loadavg") as fh:
            return ", ".join(fh.read().split()[:3])
    except OSError:
        return "unknown"


def _processor() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas_threads() -> str:
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var):
            return f"{os.environ[var]} ({var})"
    return f"{os.cpu_count()} (OpenBLAS default: one per core)"


def _polars_threads() -> str:
    if "polars" not in sys.modules and not os.environ.get("POLARS_MAX_THREADS"):
        return f"{os.cpu_count()} (default: one per core)"
    try:
        import polars as pl

        return str(pl.thread_pool_size())
    except Exception:  # noqa: BLE001 - only a description
        return "unknown"


def conditions() -> str:
    """One line: processor and cores, the threads of OpenBLAS and Polars, the load average."""
    return (
        f"Run on: {_processor()}, {os.cpu_count()} logical cores, Python {platform.python_version()}; "
        f"threads: OpenBLAS {_blas_threads()}, Polars {_polars_threads()}; "
        f"load average (1, 5, 15 min) at the start: {load_average()}"
    )


def print_conditions() -> None:
    """Print :func:`conditions` now and the load average again when the script ends."""
    print(conditions() + "\n", flush=True)
    atexit.register(lambda: print(f"\nLoad average (1, 5, 15 min) at the end: {load_average()}", flush=True))


def median_of(fn, repeats: int) -> tuple[float, object]:
    """Median wall time of ``repeats`` calls of ``fn`` and the last result."""
    times, out = [], None
    for _ in range(max(repeats, 1)):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def parse_sizes(text: str) -> list[int]:
    """``"1e5,1e6"`` -> ``[100000, 1000000]``."""
    return [int(float(s)) for s in text.split(",") if s.strip()]


def best_of(fn, repeats: int, slow_run: float = float("inf")) -> tuple[float, object]:
    """Best wall time of ``repeats`` calls of ``fn`` and the last result; a run slower than
    ``slow_run`` seconds is not repeated."""
    best, out = float("inf"), None
    for _ in range(max(repeats, 1)):
        out = None
        t = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t
        best = min(best, dt)
        if dt > slow_run:
            break
    return best, out


def fmt_s(x: float) -> str:
    """Seconds with three decimals below 10 s, one above."""
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def base_parser(
    doc: str,
    *,
    sizes_default: str | None = None,
    quick_help: str = "sizes 1e5,1e6 and one run each",
    tune_memory: bool = False,
) -> argparse.ArgumentParser:
    """The options every benchmark takes: ``--quick``, ``--repeats``, ``--profile``, ``--seed``,
    and ``--sizes`` (when ``sizes_default`` names the default) and ``--tune-memory`` on request."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if sizes_default is not None:
        ap.add_argument(
            "--sizes",
            type=parse_sizes,
            default=None,
            help=f"comma-separated record counts, e.g. 1e5,1e6 (default {sizes_default})",
        )
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--repeats", type=int, default=3, help="runs per case, best is reported (default 3)")
    ap.add_argument("--profile", action="store_true", help="also print a per-step breakdown")
    ap.add_argument("--seed", type=int, default=0)
    if tune_memory:
        ap.add_argument(
            "--tune-memory",
            action="store_true",
            help="call sdckit.tune_memory() first (what the sdckit command line does)",
        )
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads for OpenBLAS, OpenMP and Polars (the script runs again with them set; default: one per core)",
    )
    _hook_threads(ap)
    return ap


def _hook_threads(ap: argparse.ArgumentParser) -> None:
    """After parsing, ``--threads N`` runs the script again with the thread variables set to N
    (they are read when NumPy and Polars load, before any option is parsed)."""
    parse = ap.parse_args

    def parse_args(args=None, namespace=None):
        out = parse(args, namespace)
        n = getattr(out, "threads", None)
        if n is not None and any(os.environ.get(v) != str(n) for v in THREAD_VARIABLES):
            env = dict(os.environ, **{v: str(n) for v in THREAD_VARIABLES})
            sys.stdout.flush()
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
        return out

    ap.parse_args = parse_args  # type: ignore[method-assign]


def markdown_table(header, align: str, rows) -> None:
    """Print a markdown table; ``align`` has one letter per column: r(ight), l(eft) or c(entre)."""
    marks = {"r": "---:", "l": ":---", "c": ":---:"}
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(marks[a] for a in align) + "|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")


def grouped(func, **options) -> dict:
    """``options`` as ``func`` takes them: a record's fields in their record (``fit={"tol": ...}``)
    where the function groups its options (issue 38), else flat, so that a benchmark runs on the
    trees before and after the change alike."""
    from sdckit._declare import declaration

    decl = declaration(func)
    return decl.grouped(options) if hasattr(decl, "grouped") else options
