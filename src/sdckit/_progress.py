"""Progress feedback for long computations: one small interface over tqdm.

``progress=None`` (every function's default) shows a bar only on an interactive terminal and
only when the run is long enough to need one; ``True`` always shows it, ``False`` never. tqdm
(the ``progress`` extra) draws the bar; without it a plain line per step is written to stderr.
Nothing is imported until a bar is shown.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress", "progress_bar"]


def _wanted(progress) -> bool:
    if progress is None:
        return sys.stderr.isatty()
    if isinstance(progress, bool):
        return progress
    from ._validation import check_bool

    return check_bool(progress, "progress")


class Progress:
    """A bar with a ``total`` (records, pairs, steps ...); ``update(n)`` advances it,
    ``step(label)`` names the current stage. Use as a context manager."""

    def __init__(self, total: float | None, desc: str, enabled: bool, unit: str = "it", leave: bool = False):
        self.enabled, self.desc, self.total, self.unit = enabled, desc, total, unit
        self._bar = None
        self._t0 = time.perf_counter()
        self._done = 0.0
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:  # no tqdm: plain lines
                self._bar = None
            else:
                self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=leave, dynamic_ncols=True)

    def update(self, n: float = 1) -> None:
        if not self.enabled:
            return
        self._done += n
        if self._bar is not None:
            self._bar.update(n)

    def step(self, label: str) -> None:
        """Name the stage that starts now."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(label, refresh=True)
        else:
            sys.stderr.write(f"{self.desc}: {label} ({time.perf_counter() - self._t0:.1f} s)\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(progress, total: float | None, desc: str, unit: str = "it") -> Progress:
    """A :class:`Progress` for a computation of ``total`` units, shown when ``progress`` asks
    for it (None: on a terminal)."""
    return Progress(total, desc, _wanted(progress), unit)
