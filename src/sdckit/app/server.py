"""The pages of ``sdckit app`` (Shiny for Python): Load, Measure and Protect.

Long work (the risk overview, a protection step) runs in a worker thread through Shiny's
extended tasks, so the page keeps answering while it runs. Every asset is Shiny's own (in its
wheel) or sdckit's inline HTML; the page asks nothing of the network.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shiny import App, reactive, render, ui

from .._errors import SdcError
from . import model
from .jobs import Job, progress_ui
from .widgets import message_tag

__all__ = ["create_app"]

#: the file types the file picker offers (the formats sdckit.read_data reads)
ACCEPT = [".csv", ".tsv", ".txt", ".parquet", ".pq", ".sav", ".zsav", ".dta", ".sas7bdat", ".xpt"]

_STYLE = """
body { font-family: system-ui, sans-serif; }
.sdckit-error { color: #a40000; font-weight: 600; }
.sdckit-busy { color: #555; font-style: italic; }
.sdckit-verdict { font-size: 1.15em; font-weight: 600; margin: 0.6em 0; }
table.sdckit-variables td, table.sdckit-variables th { padding: 2px 10px; border-bottom: 1px solid #ddd; }
"""


def _read(path: str):
    from ..io import read_data

    return read_data(path)


def _assess(data, scenario):
    from ..workflow import assess

    return assess(data, scenario, progress=False)


def _load_panel(initial_path: str, folder: str):
    role_inputs = [
        ui.input_selectize(role, label, choices=[], multiple=several) for role, label, several in model.ROLES
    ]
    return ui.nav_panel(
        "Load",
        ui.layout_columns(
            ui.card(
                ui.card_header("Data"),
                ui.input_text("path", "File path", value=initial_path, width="100%"),
                ui.input_action_button("load", "Load the file"),
                ui.input_file("upload", "or choose a file", accept=ACCEPT),
                ui.output_ui("load_status"),
            ),
            ui.card(
                ui.card_header("Roles"),
                *role_inputs,
                ui.input_text("scenario_path", "Scenario file name (.yaml, .yml or .json)", value="scenario.json"),
                ui.tags.small(f"written into {folder} (sdckit app --folder)", class_="text-muted"),
                ui.input_checkbox("scenario_overwrite", "replace an existing file", value=False),
                ui.input_action_button("save_scenario", "Save the scenario"),
                ui.output_ui("scenario_status"),
            ),
            col_widths=(6, 6),
        ),
        ui.card(ui.card_header("Variables"), ui.output_ui("variables")),
    )


def _measure_panel():
    return ui.nav_panel(
        "Measure",
        ui.div(
            ui.input_action_button("run_overview", "Run the risk overview"),
            ui.input_action_button("cancel_overview", "Cancel"),
            ui.input_checkbox(
                "auto_overview", "update by itself when the file, the roles or the steps change", value=True
            ),
            class_="d-flex gap-2 align-items-center",
        ),
        ui.output_ui("overview_progress"),
        ui.output_ui("overview_status"),
        ui.output_ui("overview"),
    )


def _variables_table(rows: list[dict]) -> ui.Tag:
    head = ui.tags.tr(*(ui.tags.th(h) for h in ("variable", "type", "categories", "missing values")))
    body = [
        ui.tags.tr(
            ui.tags.td(r["name"]),
            ui.tags.td(r["type"]),
            ui.tags.td(f"{r['categories']}: {', '.join(r['listed'])}" if r["listed"] else str(r["categories"])),
            ui.tags.td(str(r["missing"])),
        )
        for r in rows
    ]
    return ui.tags.table(ui.tags.thead(head), ui.tags.tbody(*body), class_="sdckit-variables")


def _load_every_lazy_name() -> None:
    """Load every name the packages import on first use, once, before any worker thread runs:
    two threads that load lazily imported modules at the same time can each hold one module's
    import lock and wait for the other's, which Python breaks by handing one of them a
    half-initialised module. An ImportError in the app's Apply was seen once in five CI runs;
    this race is its likely cause (not proven)."""
    import sdckit

    for package in (sdckit, sdckit.risk, sdckit.protect, sdckit.utility):
        for name in getattr(package, "__all__", ()):
            getattr(package, name, None)


def create_app(data: str | None = None, folder=None) -> App:
    """The Shiny application; ``data`` is a file path loaded when a session starts, ``folder``
    the folder every file the app writes goes into (default: the current folder)."""
    import os

    from .protect import export_panel, history_panel, protect_panel, protect_server

    _load_every_lazy_name()
    initial = "" if data is None else str(data)
    home = os.path.realpath(os.getcwd() if folder is None else os.fspath(folder))
    if not os.path.isdir(home):
        raise SdcError(f"--folder: {folder} is not an existing folder; expected the folder the app writes into")
    page = ui.page_navbar(
        _load_panel(initial, home),
        _measure_panel(),
        protect_panel(),
        history_panel(),
        export_panel(home),
        title="sdckit",
        id="tabs",
        # no favicon to fetch (the browser would ask the server for /favicon.ico and get a 404)
        header=ui.head_content(ui.tags.style(_STYLE), ui.tags.link(rel="icon", href="data:,")),
    )

    def server(input, output, session):
        state = {
            "data": reactive.value(None),
            "error": reactive.value(None),
            "name": reactive.value(""),
            "path": reactive.value(""),  # the file read (labels of SPSS and Stata files are read from it on export)
            "origin": reactive.value(""),  # the user's file: its path, or a chosen file's name
            "folder": home,  # every file the app writes goes into it
        }

        def load(path: str, name: str, origin: str | None = None) -> None:
            try:
                state["data"].set(_read(path))
                state["error"].set(None)
                state["name"].set(name)
                state["path"].set(path)
                state["origin"].set(path if origin is None else origin)
            except (SdcError, OSError) as exc:
                state["data"].set(None)
                state["error"].set(exc)
            except Exception as exc:  # a reader's own message may quote a value of the file: not shown
                state["data"].set(None)
                state["error"].set(
                    SdcError(f"data: {name} could not be read ({type(exc).__name__}); expected a file sdckit reads")
                )

        @reactive.effect
        def _initial():
            if initial:
                with reactive.isolate():
                    load(initial, Path(initial).name)

        @reactive.effect
        @reactive.event(input.load)
        def _load_path():
            load(input.path().strip(), Path(input.path().strip()).name)

        @reactive.effect
        @reactive.event(input.upload)
        def _load_upload():
            files = input.upload()
            if files:
                load(files[0]["datapath"], files[0]["name"], origin=files[0]["name"])

        @reactive.effect
        def _role_choices():
            data = state["data"]()
            columns = list(data.columns) if data is not None else []
            for role, _, several in model.ROLES:
                choices = columns if several else ["", *columns]
                ui.update_selectize(role, choices=choices, selected=[] if several else "")

        @render.ui
        def load_status():
            if state["error"]() is not None:
                return message_tag(state["error"]())
            data = state["data"]()
            if data is None:
                return ui.p("No file loaded yet.")
            return ui.p(f"{state['name']()}: {data.height} records, {data.width} variables.", id="loaded")

        @render.ui
        def variables():
            data = state["data"]()
            return _variables_table(model.describe_variables(data)) if data is not None else ui.p("")

        def scenario():
            data = state["data"]()
            if data is None:
                raise SdcError("data: no file loaded; expected a file loaded on the Load page")
            roles = {role: input[role]() for role, _, _ in model.ROLES}
            return model.scenario_from_roles(roles, columns=list(data.columns))

        scenario_message = reactive.value(None)

        @reactive.effect
        @reactive.event(input.save_scenario)
        def _save():
            try:
                path = model.save_scenario(
                    scenario(),
                    home,
                    input.scenario_path(),
                    overwrite=input.scenario_overwrite(),
                    inputs=(state["path"](),),
                )
                scenario_message.set(ui.p(f"Scenario written to {path}", id="scenario_saved"))
            except (SdcError, OSError) as exc:
                scenario_message.set(message_tag(exc))

        @render.ui
        def scenario_status():
            return scenario_message()

        revision = reactive.value(0)  # bumped when the steps change
        lock = threading.Lock()  # work on the release in progress, one computation at a time
        existing = protect_server(input, state, scenario, revision, lock)
        _measure_server(input, state, scenario, existing, revision)

    return App(page, server)


def _overview(data, scenario, problem, n_steps: int):
    """The risk overview of the state with ``n_steps`` steps: the original file's assessment,
    or the original beside the data after the steps (one variant)."""
    if problem is None or n_steps == 0:
        return _assess(data, scenario), "the original file"
    result = problem.report(steps="last", progress=False)
    last = problem.history[n_steps - 1]
    return result, f"the file after step {n_steps} ({last.method})"


#: seconds without a change before the overview updates by itself (roles chosen one by one)
SETTLE = 0.6


def _measure_server(input, state, scenario, existing, revision) -> None:
    """The risk overview of the current state, computed in a worker thread: on request, and
    by itself (unless switched off) once the file, the roles or the steps stop changing."""
    job = Job()
    problem: reactive.Value[Exception | None] = reactive.value(None)
    shown: reactive.Value = reactive.value(None)  # (result, what it describes): the last one computed to the end
    pending: reactive.Value = reactive.value(None)  # (time of the change, request) not yet started

    def request():
        data, sc = state["data"](), scenario()
        revision()
        pr = existing()
        return data, sc, pr, len(pr.history) if pr is not None else 0

    @reactive.effect
    @reactive.event(input.run_overview)
    def _run():
        try:
            req = request()
        except SdcError as exc:
            problem.set(exc)
            return
        problem.set(None)
        pending.set(None)
        job.start(_overview, *req)

    @reactive.effect
    def _changed():
        if not input.auto_overview():
            return
        try:
            req = request()
        except SdcError:  # no file or no keys yet: nothing to measure
            return
        with reactive.isolate():
            problem.set(None)
            pending.set((time.monotonic(), req))

    @reactive.effect
    def _settled():
        change = pending()
        if change is None:
            return
        wait = SETTLE - (time.monotonic() - change[0])
        if wait > 0:
            reactive.invalidate_later(wait)
            return
        with reactive.isolate():
            pending.set(None)
            job.start(_overview, *change[1])

    @reactive.effect
    @reactive.event(input.cancel_overview)
    def _cancel():
        pending.set(None)
        job.cancel()

    @reactive.effect
    def _finished():
        if job.task.status() == "success":
            result = job.task.result()
            with reactive.isolate():
                shown.set(result)

    progress_ui(job, "Computing the risk overview", "overview_progress", "busy")

    @render.ui
    def overview_status():
        if problem() is not None:
            return message_tag(problem())
        status = job.task.status()
        if status == "cancelled":
            return ui.p("Cancelled: the overview shown is the one before.", class_="sdckit-busy", id="cancelled")
        if job.error() is not None:
            return message_tag(job.error())
        return None

    @render.ui
    def overview():
        if shown() is None:
            return None
        result, what = shown()
        headline = result.summary().headline or ""
        return ui.div(
            ui.p(f"Risk overview of {what}.", id="overview_of"),
            ui.div(*(ui.p(line) for line in headline.splitlines()), class_="sdckit-verdict", id="verdict"),
            ui.HTML(result._repr_html_()),
        )
