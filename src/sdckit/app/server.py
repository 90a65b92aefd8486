"""The pages of ``sdckit app`` (Shiny for Python): Load, Measure and Protect.

Long work (the risk overview, a protection step) runs in a worker thread through Shiny's
extended tasks, so the page keeps answering while it runs. Every asset is Shiny's own (in its
wheel) or sdckit's inline HTML; the page asks nothing of the network.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from shiny import App, reactive, render, ui

from .._errors import SdcError
from . import model

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


def _load_panel(initial_path: str):
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
                ui.input_text("scenario_path", "Scenario file (.yaml, .yml or .json)", value="scenario.json"),
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
            class_="d-flex gap-2",
        ),
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


def _error(exc: Exception) -> ui.Tag:
    return ui.p(" ".join(str(exc).split()), class_="sdckit-error")


def create_app(data: str | None = None) -> App:
    """The Shiny application; ``data`` is a file path loaded when a session starts."""
    from .protect import protect_panel, protect_server

    initial = "" if data is None else str(data)
    page = ui.page_navbar(
        _load_panel(initial),
        _measure_panel(),
        protect_panel(),
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
                return _error(state["error"]())
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
                path = model.save_scenario(scenario(), input.scenario_path(), overwrite=input.scenario_overwrite())
                scenario_message.set(ui.p(f"Scenario written to {path}", id="scenario_saved"))
            except (SdcError, OSError) as exc:
                scenario_message.set(_error(exc))

        @render.ui
        def scenario_status():
            return scenario_message()

        _measure_server(input, state, scenario)
        protect_server(input, state, scenario)

    return App(page, server)


def _measure_server(input, state, scenario) -> None:
    """The risk overview, computed in a worker thread."""

    @reactive.extended_task
    async def overview_task(data, sc):
        return await asyncio.to_thread(_assess, data, sc)

    problem: reactive.Value[Exception | None] = reactive.value(None)
    shown: reactive.Value = reactive.value(None)  # the last overview computed to the end

    @reactive.effect
    @reactive.event(input.run_overview)
    def _run():
        try:
            sc = scenario()
        except SdcError as exc:
            problem.set(exc)
            return
        problem.set(None)
        overview_task.invoke(state["data"](), sc)

    @reactive.effect
    @reactive.event(input.cancel_overview)
    def _cancel():
        overview_task.cancel()

    @reactive.effect
    def _finished():
        if overview_task.status() == "success":
            result = overview_task.result()
            with reactive.isolate():
                shown.set(result)

    @render.ui
    def overview_status():
        if problem() is not None:
            return _error(problem())
        status = overview_task.status()
        if status == "running":
            return ui.p("Computing the risk overview in the background...", class_="sdckit-busy", id="busy")
        if status == "cancelled":
            return ui.p("Cancelled: the overview shown is the one before.", class_="sdckit-busy", id="cancelled")
        if status == "error":
            try:
                overview_task.result()
            except Exception as exc:  # the measure's own message (an SdcError names the role)
                return _error(exc)
        return None

    @render.ui
    def overview():
        result = shown()
        if result is None:
            return None
        headline = result.summary().headline or ""
        return ui.div(
            ui.div(*(ui.p(line) for line in headline.splitlines()), class_="sdckit-verdict", id="verdict"),
            ui.HTML(result._repr_html_()),
        )
