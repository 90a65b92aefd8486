"""The Protect page: a form per protection method generated from the registry, the steps
applied so far, undo (:meth:`sdckit.SdcProblem.undo`) and redo of any number of steps."""

from __future__ import annotations

import asyncio

from shiny import reactive, render, ui

from .._errors import SdcError
from . import model

__all__ = ["protect_panel", "protect_server"]


def _input_id(method: str, name: str) -> str:
    return f"p_{method}_{name}"


#: how a text field is typed, by the parameter's declared type
_HINTS = {"mapping": " (pairs OLD=NEW separated by ';')", "text": "", "any": " (a list: items separated by ';')"}


def _label(field: model.Field) -> str:
    role = f" (empty: the scenario's {field.role.replace('_', ' ')})" if field.role else ""
    note = " (required)" if field.required else role
    return f"{field.name}{note}"


def field_input(method: str, field: model.Field, columns: list[str]) -> ui.Tag:
    """The input of one form field, with the parameter's help under it."""
    iid, label = _input_id(method, field.name), _label(field)
    if field.widget in ("column", "columns"):
        several = field.widget == "columns"
        choices = columns if several else ["", *columns]
        widget = ui.input_selectize(iid, label, choices=choices, multiple=several)
    elif field.widget in ("integer", "number"):
        widget = ui.input_numeric(
            iid,
            label,
            value=field.default,
            min=field.low,
            max=field.high,
            step=1 if field.widget == "integer" else None,
        )
    elif field.widget == "checkbox":
        widget = ui.input_checkbox(iid, label, value=bool(field.default))
    elif field.widget == "select":
        widget = ui.input_select(iid, label, choices=list(field.choices), selected=field.default)
    else:
        widget = ui.input_text(iid, label, value="" if field.default is None else str(field.default))
    hint = _HINTS.get(field.type, " (a list: items separated by ';')") if field.widget == "text" else ""
    return ui.div(widget, ui.tags.small(field.help + hint, class_="text-muted"), class_="mb-2")


def protect_panel():
    forms = model.method_forms()
    return ui.nav_panel(
        "Protect",
        ui.layout_columns(
            ui.card(
                ui.card_header("Method"),
                ui.input_select("method", "Protection method", choices={f.method: f.title for f in forms}),
                ui.output_ui("method_form"),
                ui.input_action_button("apply", "Apply"),
                ui.output_ui("apply_status"),
            ),
            ui.card(
                ui.card_header("History"),
                ui.output_ui("history"),
                ui.div(
                    ui.input_action_button("undo", "Undo"),
                    ui.input_action_button("redo", "Redo"),
                    class_="d-flex gap-2",
                ),
            ),
            col_widths=(7, 5),
        ),
        ui.card(
            ui.card_header("Search: the least loss for a risk target"),
            ui.layout_columns(
                ui.input_numeric("search_k", "k (k-anonymity; empty: none)", value=3, min=1, step=1),
                ui.input_numeric(
                    "search_rate", "target re-identification rate (empty: none)", value=None, min=0, max=1
                ),
                ui.input_numeric(
                    "search_suppression", "share of key cells that may be suppressed", value=0.05, min=0, max=1
                ),
                ui.input_numeric("search_time", "time limit (seconds)", value=60, min=1),
                col_widths=(3, 3, 3, 3),
            ),
            ui.input_action_button("search", "Search"),
            ui.output_ui("search_status"),
            ui.output_ui("search_front"),
        ),
        ui.card(
            ui.card_header("Export"),
            ui.layout_columns(
                ui.input_text("export_data", "Protected file (.csv, .parquet, .sav, .dta)", value="protected.csv"),
                ui.input_text("export_recipe", "Recipe (.yaml, .yml or .json)", value="recipe.json"),
                ui.input_text("export_script", "Python script (.py; empty: none)", value=""),
                col_widths=(4, 4, 4),
            ),
            ui.layout_columns(
                ui.input_text("export_report", "Report (.html; empty: none)", value=""),
                ui.input_text("export_external_report", "Report for data users (.html; empty: none)", value=""),
                col_widths=(4, 4),
            ),
            ui.input_checkbox("export_overwrite", "replace existing files", value=False),
            ui.input_action_button("export", "Export"),
            ui.output_ui("export_status"),
        ),
    )


def _apply(problem, method: str, parameters: dict):
    """One step, or with ``method="recipe"`` every step of the recipe ``parameters``."""
    if method == "recipe":
        problem.apply_recipe(parameters)
    else:
        problem.apply(method, **parameters)
    return len(problem.history)


def protect_server(input, state, scenario) -> None:
    from .. import registry
    from ..workflow import SdcProblem

    forms = {f.method: f for f in model.method_forms()}
    current: dict = {"problem": None, "key": None, "redo": []}  # redo: (method, parameters) undone, last first
    revision = reactive.value(0)  # bumped when the history changes
    message: reactive.Value[Exception | None] = reactive.value(None)

    @render.ui
    def method_form():
        data = state["data"]()
        columns = list(data.columns) if data is not None else []
        form = forms[input.method()]
        return ui.div(ui.p(f"Changes {form.changes}."), *(field_input(form.method, f, columns) for f in form.fields))

    def problem():
        """A function giving the release in progress for the current data and roles. A new
        release (its baseline measured: seconds on a large file) is built when the data or the
        roles changed, on the first call, in the worker thread that makes it."""
        data, sc = state["data"](), scenario()
        key = (id(data), sc)

        def get():
            if current["key"] != key:
                current.update(problem=SdcProblem(data, sc), key=key, redo=[])
            return current["problem"]

        return get

    def existing():
        """The release for the current data and roles if it is built, else None."""
        key = (id(state["data"]()), scenario())
        return current["problem"] if current["key"] == key else None

    @reactive.extended_task
    async def apply_task(get, method, parameters):
        return await asyncio.to_thread(lambda: _apply(get(), method, parameters))

    @reactive.effect
    @reactive.event(input.apply)
    def _apply_clicked():
        if apply_task.status() == "running":
            message.set(SdcError("a step is being applied; wait until it is done"))
            return
        method = input.method()
        decl = registry.get(method)
        values = {f.name: input[_input_id(method, f.name)]() for f in forms[method].fields}
        try:
            parameters = model.parameters_from_form(decl, values)
            pr = problem()
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        current["redo"] = []  # a new step ends the steps that could be redone
        apply_task.invoke(pr, method, parameters)

    @reactive.effect
    def _applied():
        if apply_task.status() in ("success", "error"):
            with reactive.isolate():
                revision.set(revision() + 1)

    @render.ui
    def apply_status():
        if message() is not None:
            return ui.p(" ".join(str(message()).split()), class_="sdckit-error")
        status = apply_task.status()
        if status == "running":
            return ui.p("Applying in the background...", class_="sdckit-busy")
        if status == "error":
            try:
                apply_task.result()
            except Exception as exc:
                return ui.p(" ".join(str(exc).split()), class_="sdckit-error")
        return None

    def busy() -> None:
        if apply_task.status() == "running":
            raise SdcError("a step is being applied; wait until it is done")

    @reactive.effect
    @reactive.event(input.undo)
    def _undo():
        pr = current["problem"]
        try:
            busy()
            if pr is None or not pr.history:
                raise SdcError("undo: there is no step to undo; expected at least one applied step")
            last = pr.history[-1]
            pr.undo()
            current["redo"].append((last.method, dict(last.parameters)))
            message.set(None)
        except SdcError as exc:
            message.set(exc)
        revision.set(revision() + 1)

    @reactive.effect
    @reactive.event(input.redo)
    def _redo():
        """Apply the last undone step again, with its full parameters (a random method's seed
        included, so that it gives the same file)."""
        try:
            busy()
            if not current["redo"]:
                raise SdcError("redo: there is no undone step; expected an undo first")
        except SdcError as exc:
            message.set(exc)
            return
        method, parameters = current["redo"].pop()
        message.set(None)
        pr = current["problem"]
        apply_task.invoke(lambda: pr, method, parameters)

    @reactive.extended_task
    async def export_task(get, source, origin, paths, overwrite):
        return await asyncio.to_thread(
            lambda: model.export(get(), source, **paths, overwrite=overwrite, script_source=origin)
        )

    export_message: reactive.Value[Exception | None] = reactive.value(None)

    @reactive.effect
    @reactive.event(input.export)
    def _export():
        try:
            busy()
            pr = problem()
        except SdcError as exc:
            export_message.set(exc)
            return
        export_message.set(None)
        paths = {
            "data": input.export_data(),
            "recipe": input.export_recipe(),
            "report": input.export_report(),
            "external_report": input.export_external_report(),
            "script": input.export_script(),
        }
        export_task.invoke(pr, state["path"](), state["origin"](), paths, input.export_overwrite())

    @render.ui
    def export_status():
        if export_message() is not None:
            return ui.p(" ".join(str(export_message()).split()), class_="sdckit-error")
        status = export_task.status()
        if status == "running":
            return ui.p("Writing in the background...", class_="sdckit-busy")
        if status == "error":
            try:
                export_task.result()
            except Exception as exc:
                return ui.p(" ".join(str(exc).split()), class_="sdckit-error")
        if status == "success":
            return ui.p("Written: " + ", ".join(export_task.result()), id="exported")
        return None

    _search_server(input, problem, existing, busy, apply_task, lambda: current.update(redo=[]))

    @render.ui
    def history():
        revision()
        pr = current["problem"]
        steps = pr.history if pr is not None else ()
        if not steps:
            return ui.p("No step applied yet.", id="history_empty")
        items = [ui.tags.li(f"{s.method}: {s.result.n_changed_total} values changed") for s in steps]
        # the risk and loss measures of the original and after every step (aggregates only)
        measures = ui.div(ui.HTML(pr.summary().to_html()), id="step_measures")
        return ui.div(ui.tags.ol(*items, id="history_steps"), measures)


def _front_label(point: dict) -> str:
    levels = ", ".join(f"{k}={v}" for k, v in point["levels"].items())
    meets = "meets the target" if point["meets"] else "does not meet the target"
    return f"{levels}: loss {point['loss']:.4g}, rate {point['rate']:.4g}, {meets}"


def search_target(k, rate) -> dict:
    """The search's ``target`` from the two fields (an empty field is no target)."""
    target: dict = {}
    if k not in (None, ""):
        target["k"] = model._integer(k, "k")
    if rate not in (None, ""):
        target["max_global_risk"] = float(rate)
    if not target:
        raise SdcError("target: no target given; expected k and/or a target re-identification rate")
    return target


def _search_server(input, problem, existing, busy, apply_task, clear_redo) -> None:
    """The protection search on the current data; a point of its Pareto front, picked, is
    applied (its recipe's steps) and becomes the current state."""

    searched: dict = {"problem": None, "steps": None}  # the release the last search ran on, its steps

    def _run_search(get, options):
        pr = get()
        searched["problem"], searched["steps"] = pr, [id(st) for st in pr.history]
        return pr.search(**options, progress=False)

    @reactive.extended_task
    async def search_task(get, options):
        return await asyncio.to_thread(_run_search, get, options)

    message: reactive.Value[Exception | None] = reactive.value(None)

    @reactive.effect
    @reactive.event(input.search)
    def _search():
        try:
            busy()
            options = {
                "target": search_target(input.search_k(), input.search_rate()),
                "suppression_limit": float(input.search_suppression() or 0.0),
                "time_limit": float(input.search_time()) if input.search_time() else None,
            }
            pr = problem()
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        searched["problem"] = None
        search_task.invoke(pr, options)

    @render.ui
    def search_status():
        if message() is not None:
            return ui.p(" ".join(str(message()).split()), class_="sdckit-error")
        status = search_task.status()
        if status == "running":
            return ui.p("Searching in the background...", class_="sdckit-busy", id="searching")
        if status == "error":
            try:
                search_task.result()
            except Exception as exc:
                return ui.p(" ".join(str(exc).split()), class_="sdckit-error")
        return None

    @render.ui
    def search_front():
        if search_task.status() != "success":
            return None
        result = search_task.result()
        if not result.front:
            return ui.p(result.summary().headline or "No candidate found.", id="search_none")
        choices = {str(i): _front_label(p) for i, p in enumerate(result.front)}
        return ui.div(
            ui.p(result.summary().headline or "", id="search_headline"),
            ui.input_radio_buttons("front_point", "Pareto front (least loss first)", choices=choices, width="100%"),
            ui.input_action_button("use_point", "Use this point"),
        )

    @reactive.effect
    @reactive.event(input.use_point)
    def _use():
        try:
            busy()
            pr = existing()
            same = pr is not None and pr is searched["problem"]
            same = same and [id(st) for st in pr.history] == searched["steps"]
            if not same or search_task.status() != "success":
                raise SdcError("search: the data, the roles or the steps changed since; expected a new search")
        except SdcError as exc:
            message.set(exc)
            return
        point = search_task.result().front[int(input.front_point())]
        searched["problem"] = None  # the front was for the state before this point
        clear_redo()
        apply_task.invoke(lambda: pr, "recipe", point["recipe"])
