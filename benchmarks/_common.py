"""Helpers shared by the benchmark scripts: the common options, timing, size parsing, number
formatting and markdown tables."""

from __future__ import annotations

import argparse
import time

__all__ = ["base_parser", "best_of", "fmt_s", "markdown_table", "parse_sizes"]


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
    return ap


def markdown_table(header, align: str, rows) -> None:
    """Print a markdown table; ``align`` has one letter per column: r(ight), l(eft) or c(entre)."""
    marks = {"r": "---:", "l": ":---", "c": ":---:"}
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(marks[a] for a in align) + "|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
