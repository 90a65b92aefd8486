"""Background work of the app: each kind of long computation (the risk overview, a protection
step, the search, the comparison of variants, the export) runs in a worker thread, followed by
a :class:`sdckit._progress.Watcher` that drives its progress bar and stops it when *Cancel* is
pressed. The page keeps answering meanwhile.

A cancelled computation stops at its next checkpoint (a named stage or a counted unit of work,
such as a candidate of the search) and its result is never used; the page says so at once.
Work on the release in progress is serialised by one lock per session, so that a computation
still winding down after *Cancel* never runs beside the next one.
"""

from __future__ import annotations

import asyncio
import threading

from shiny import reactive, render, ui

from .._errors import Cancelled
from .._progress import Watcher, watch

__all__ = ["Job", "progress_ui"]

#: how often (seconds) a running job's progress bar is redrawn
REFRESH = 0.25


class Job:
    """One kind of background work of a session: ``start(fn, *args)`` runs ``fn(*args)`` in a
    worker thread (holding ``lock`` when given), ``cancel()`` stops it, ``task`` is its Shiny
    extended task (``status()``, ``result()``)."""

    def __init__(self, lock: threading.Lock | None = None):
        self.watcher: Watcher | None = None
        self._lock = lock
        job = self

        @reactive.extended_task
        async def task(watcher, fn, args):
            return await asyncio.to_thread(job._run, watcher, fn, args)

        self.task = task

    def _run(self, watcher: Watcher, fn, args):
        with watch(watcher):
            if self._lock is None:
                return fn(*args)
            with self._lock:
                if watcher.cancelled:  # cancelled while waiting for the work before it
                    raise Cancelled("the computation was cancelled")
                return fn(*args)

    def running(self) -> bool:
        return self.task.status() == "running"

    def start(self, fn, *args) -> None:
        """Run ``fn(*args)`` in the background; a run of this job still going is cancelled
        (it winds down in its thread, its result unused)."""
        with reactive.isolate():
            self.cancel()
        self.watcher = Watcher()
        self.task.invoke(self.watcher, fn, args)

    def cancel(self) -> None:
        """Stop the running computation (at its next checkpoint); the page says so at once."""
        if self.watcher is not None:
            self.watcher.cancel()
        self.task.cancel()

    def error(self) -> Exception | None:
        """The exception of a run that failed (None otherwise)."""
        if self.task.status() != "error":
            return None
        try:
            self.task.result()
        except Cancelled:
            return None
        except Exception as exc:  # the measure's own message (an SdcError names the parameter)
            return exc
        return None


def _elapsed(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


def progress_ui(job: Job, what: str, output_id: str, element_id: str) -> None:
    """Register the output ``output_id``: while ``job`` runs, a bar (filled by its share done
    when the stage is counted, moving otherwise), the stage and the seconds elapsed. (The
    *Cancel* button is beside it on the page, not redrawn with it, so that a click is never
    lost.)"""

    def _progress():
        if not job.running():
            return None
        reactive.invalidate_later(REFRESH)
        snap = job.watcher.snapshot() if job.watcher is not None else {"label": None, "share": None, "elapsed": 0.0}
        share = snap["share"]
        bar = ui.tags.progress(value=f"{share:.3f}", max="1") if share is not None else ui.tags.progress()
        stage = " ".join(x for x in (snap["label"], f"({snap['detail']})" if snap.get("detail") else None) if x)
        percent = f" {share:.0%}" if share is not None else ""
        return ui.div(
            ui.span(f"{what} in the background{percent}", class_="sdckit-busy"),
            bar,
            ui.span(
                f"{stage}, {_elapsed(snap['elapsed'])}" if stage else _elapsed(snap["elapsed"]), class_="sdckit-stage"
            ),
            class_="sdckit-progress d-flex gap-2 align-items-center",
            id=element_id,
        )

    _progress.__name__ = output_id  # the output's id is the function's name
    render.ui(_progress)
