"""Helpers shared by the benchmark scripts: timing, size parsing, number formatting."""

from __future__ import annotations

import time

__all__ = ["best_of", "fmt_s", "parse_sizes"]


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
