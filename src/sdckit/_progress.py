"""Progress feedback for long computations: one small interface over tqdm.

``progress=None`` (every function's default) shows a bar only on an interactive terminal and
only when the run is long enough to need one; ``True`` always shows it, ``False`` never. tqdm
(the ``progress`` extra) draws the bar; without it a plain line per step is written to stderr.
Nothing is imported until a bar is shown.

A :class:`Watcher` (the web application's progress bar and *Cancel* button) follows the
computations run under :func:`watch` in the same context, whether or not a bar is shown: each
named step and each progress update is a checkpoint, where the watcher notes the stage and the
share done, and where a cancelled computation stops with :class:`sdckit._errors.Cancelled`.
"""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["Progress", "Watcher", "checkpoint", "measure_progress", "progress_bar", "step", "watch"]

from contextlib import contextmanager
from contextvars import ContextVar

#: the bar of the measure running in this context (None: nobody asked for progress)
_ACTIVE: ContextVar[Progress | None] = ContextVar("sdckit_progress", default=None)


class Watcher:
    """Follows the computations run under :func:`watch`: the stage they are at, the share of
    a counted stage done (``done`` of ``total``: the candidates of a search, say), the seconds
    since the start; and stops them at their next checkpoint once :meth:`cancel` is called
    (from any thread). A named step inside a counted stage is its ``detail``."""

    def __init__(self) -> None:
        self.label: str | None = None
        self.detail: str | None = None
        self.done: float = 0.0
        self.total: float | None = None
        self.started = time.perf_counter()
        self._depth = 0  # counted stages open (the outermost one is shown)
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask the computation to stop at its next checkpoint."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def snapshot(self) -> dict:
        """The stage, its detail, the share done (None when the stage is not counted) and the
        seconds elapsed, read at once."""
        total = self.total
        share = min(1.0, self.done / total) if total else None
        return {
            "label": self.label,
            "detail": self.detail,
            "share": share,
            "elapsed": time.perf_counter() - self.started,
        }

    def _named(self, label: str) -> None:
        if self._depth:
            self.detail = label
        else:
            self.label, self.detail = label, None

    def _counted(self, label: str, total: float, opening: bool) -> bool:
        """Open or close a counted stage; True when an opened one is the outermost (the one
        whose units are counted)."""
        outermost = not self._depth
        if opening:
            if outermost:
                self.label, self.detail, self.done, self.total = label, None, 0.0, total
            self._depth += 1
            return outermost
        else:
            self._depth = max(0, self._depth - 1)
            if not self._depth:
                self.total = None
            return False


_WATCHER: ContextVar[Watcher | None] = ContextVar("sdckit_watcher", default=None)


@contextmanager
def watch(watcher: Watcher):
    """Let ``watcher`` follow (and cancel) the computations run in this context."""
    token = _WATCHER.set(watcher)
    try:
        yield watcher
    finally:
        _WATCHER.reset(token)


def checkpoint(label: str | None = None, *, advance: float = 0) -> None:
    """A point where a computation may be followed and stopped: tell the watcher of this
    context (if any) the stage ``label`` starting now or ``advance`` units of the counted
    stage done, then stop with :class:`~sdckit._errors.Cancelled` if it was cancelled."""
    w = _WATCHER.get()
    if w is None:
        return
    if label is not None:
        w._named(label)
    w.done += advance
    if w.cancelled:
        from ._errors import Cancelled

        raise Cancelled("the computation was cancelled")


def _count(label: str, total: float, opening: bool) -> bool:
    """Tell the watcher (if any) that a counted stage opens or closes; True when an opened one
    is the outermost, whose units the watcher counts."""
    w = _WATCHER.get()
    outermost = w is not None and w._counted(label, total, opening)
    if opening:
        checkpoint()
    return outermost


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
        self._counted = total is not None
        # only the outermost counted stage's units advance the watcher's share
        self._outermost = self._counted and _count(desc, total, True)
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:  # no tqdm: plain lines
                self._bar = None
            else:
                self._bar = tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=leave, dynamic_ncols=True)

    def update(self, n: float = 1) -> None:
        checkpoint(advance=n if self._outermost else 0)
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
        if self._counted:
            self._counted = False
            _count(self.desc, 0, False)
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
    checkpoint(label)
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
