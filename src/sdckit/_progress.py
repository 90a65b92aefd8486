"""Progress feedback for long computations: one small interface over tqdm.

``progress=None`` (every function's default) shows a bar only on an interactive terminal and
only when the run is long enough to need one; ``True`` always shows it, ``False`` never. tqdm
(the ``progress`` extra) draws the bar; without it a plain line per step is written to stderr.
Nothing is imported until a bar is shown.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress", "measure_progress", "progress_bar", "step"]

from contextlib import contextmanager
from contextvars import ContextVar

#: the bar of the measure running in this context (None: nobody asked for progress)
_ACTIVE: ContextVar[Progress | None] = ContextVar("sdckit_progress", default=None)


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
        self.label: str | None = None
        self._t0 = time.perf_counter()
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
        if self._bar is not None:
            self._bar.update(n)

    def step(self, label: str) -> None:
        """Name the stage that starts now."""
        if not self.enabled:
            return
        self.label = label
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


def step(label: str, advance: float = 0) -> None:
    """Name the step a long computation starts now (and advance its bar): shown only when the
    caller asked for progress; costs nothing otherwise."""
    bar = _ACTIVE.get()
    if bar is not None:
        bar.update(advance or (1 if bar.label is not None else 0))  # the step before is done
        bar.step(label)


@contextmanager
def measure_progress(progress, desc: str):
    """Make a progress bar the active one while a public measure runs (nested measures share
    the outer bar)."""
    if _ACTIVE.get() is not None or not _wanted(progress):
        yield None
        return
    bar = Progress(None, desc, True, unit="step")
    token = _ACTIVE.set(bar)
    try:
        yield bar
    finally:
        _ACTIVE.reset(token)
        bar.close()
