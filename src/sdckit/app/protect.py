"""The Protect, History and Export pages: a form per protection method generated from the
registry, the category tables of the recodes, the protection search with its Pareto front; the
steps applied so far with undo (:meth:`sdckit.SdcProblem.undo`) and redo of any number of
steps, variants saved as branches and compared on the risk-utility map; the export.

Every long computation runs in the background (:mod:`sdckit.app.jobs`) with a progress bar and
a *Cancel* button; a cancelled step leaves the release as it was.
"""

from __future__ import annotations

from shiny import reactive, render, ui

from .._errors import SdcError
from . import model
from .export import export_panel, export_server
from .history import history_panel, variants_server
from .jobs import Job, progress_ui
from .search import search_card, search_server, search_target
from .widgets import apply_steps, busy_row, message_tag

__all__ = ["export_panel", "history_panel", "protect_panel", "protect_server", "search_target"]


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
                busy_row("apply", "Apply", "cancel_apply", "apply_progress"),
                ui.output_ui("apply_status"),
            ),
            ui.card(
                ui.card_header("The steps so far"),
                ui.output_ui("steps_short"),
                ui.card_header("Recoded variables: categories before and after"),
                ui.output_ui("recodes"),
            ),
            col_widths=(7, 5),
        ),
        search_card(),
    )


class _Release:
    """The release in progress of a session: the :class:`sdckit.SdcProblem` of the current data
    and roles, the undone steps that can be redone, the saved variants (name -> recipe)."""

    def __init__(self):
        self.problem = None
        self.key = None
        self.redo: list[tuple[str, dict]] = []  # (method, parameters) undone, last first
        self.variants: dict[str, dict] = {}


def protect_server(input, state, scenario, revision, lock):
    """The server part of the Protect, History and Export pages. Returns ``existing()``: the
    release of the current data and roles if one is built, else None."""
    from .. import registry
    from ..workflow import SdcProblem

    forms = {f.method: f for f in model.method_forms()}
    rel = _Release()
    message: reactive.Value[Exception | None] = reactive.value(None)
    history_message: reactive.Value[Exception | None] = reactive.value(None)
    applying = Job(lock)
    progress_ui(applying, "Applying", "apply_progress", "applying")

    def bump() -> None:
        with reactive.isolate():
            revision.set(revision() + 1)

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
            if rel.key != key:
                rel.problem, rel.key, rel.redo = SdcProblem(data, sc), key, []
                rel.variants = {}
            return rel.problem

        return get

    def existing():
        """The release for the current data and roles if it is built, else None."""
        key = (id(state["data"]()), scenario())
        return rel.problem if rel.key == key else None

    def busy() -> None:
        if applying.running():
            raise SdcError("a step is being applied; wait until it is done or cancel it")

    def run_step(get, method, parameters):
        return apply_steps(get(), method, parameters)

    @reactive.effect
    @reactive.event(input.apply)
    def _apply_clicked():
        method = input.method()
        decl = registry.get(method)
        values = {f.name: input[_input_id(method, f.name)]() for f in forms[method].fields}
        try:
            busy()
            parameters = model.parameters_from_form(decl, values)
            pr = problem()
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        rel.redo = []  # a new step ends the steps that could be redone
        applying.start(run_step, pr, method, parameters)

    @reactive.effect
    @reactive.event(input.cancel_apply)
    def _cancel_apply():
        applying.cancel()

    @reactive.effect
    def _applied():
        if applying.task.status() in ("success", "error", "cancelled"):
            bump()

    @render.ui
    def apply_status():
        revision()
        if message() is not None:
            return message_tag(message())
        status = applying.task.status()
        if status == "cancelled":
            return ui.p("Cancelled: the steps are as they were.", class_="sdckit-busy", id="apply_cancelled")
        if applying.error() is not None:
            return message_tag(applying.error())
        if status == "success" and rel.problem is not None and rel.problem.history:
            last = rel.problem.history[-1]
            return ui.p(f"Applied: {last.method}: {last.result.n_changed_total} values changed.", id="applied")
        return None

    @reactive.effect
    @reactive.event(input.undo)
    def _undo():
        pr = rel.problem
        try:
            busy()
            if pr is None or not pr.history:
                raise SdcError("undo: there is no step to undo; expected at least one applied step")
            last = pr.history[-1]
            pr.undo()
            rel.redo.append((last.method, dict(last.parameters)))
            history_message.set(None)
        except SdcError as exc:
            history_message.set(exc)
        bump()

    @reactive.effect
    @reactive.event(input.redo)
    def _redo():
        """Apply the last undone step again, with its full parameters (a random method's seed
        included, so that it gives the same file)."""
        try:
            busy()
            if not rel.redo:
                raise SdcError("redo: there is no undone step; expected an undo first")
        except SdcError as exc:
            history_message.set(exc)
            return
        method, parameters = rel.redo.pop()
        history_message.set(None)
        pr = rel.problem
        applying.start(run_step, lambda: pr, method, parameters)

    @render.ui
    def history_status():
        if history_message() is not None:
            return message_tag(history_message())
        if applying.running():
            return ui.p("Applying in the background...", class_="sdckit-busy")
        return None

    @render.ui
    def history():
        revision()
        pr = rel.problem
        steps = pr.history if pr is not None else ()
        if not steps:
            return ui.p("No step applied yet.", id="history_empty")
        items = [ui.tags.li(f"{s.method}: {s.result.n_changed_total} values changed") for s in steps]
        # the risk and loss measures of the original and after every step (aggregates only)
        measures = ui.div(ui.HTML(pr.summary().to_html()), id="step_measures")
        return ui.div(ui.tags.ol(*items, id="history_steps"), measures)

    @render.ui
    def steps_short():
        revision()
        pr = rel.problem
        steps = pr.history if pr is not None else ()
        if not steps:
            return ui.p("No step applied yet (the History page lists them with undo and redo).", class_="text-muted")
        return ui.tags.ol(*(ui.tags.li(s.method) for s in steps), id="steps_short")

    @render.ui
    def recodes():
        revision()
        if applying.running() or rel.problem is None:
            return None
        tables = model.recode_view(rel.problem)
        if not tables:
            return ui.p("No variable recoded yet.", class_="text-muted")
        return ui.div(*(_recode_table(v, t) for v, t in tables.items()), id="recode_tables")

    variants_server(input, rel, existing, applying, busy, revision, run_step)
    search_server(input, problem, existing, busy, applying, rel, run_step)
    export_server(input, state, problem, busy, lock)
    return existing


def _recode_table(variable: str, t: dict) -> ui.Tag:
    head = ui.tags.tr(*(ui.tags.th(h) for h in ("released category", "records", "original categories (records)")))
    rows = []
    for r in t["rows"]:
        if "original_categories" in r:
            members = ", ".join(f"{c} ({n})" for c, n in zip(r["original_categories"], r["original_records"]))
        else:
            members = f"{r['n_original_categories']} categories"
        rows.append(ui.tags.tr(ui.tags.td(r["category"]), ui.tags.td(str(r["records"])), ui.tags.td(members)))
    title = f"{variable}: {t['n_categories_before']} categories before, {t['n_categories_after']} after"
    if t["n_suppressed"]:
        title += f"; {t['n_suppressed']} values suppressed"
    return ui.div(
        ui.h6(title),
        ui.tags.table(ui.tags.thead(head), ui.tags.tbody(*rows), class_="sdckit-variables"),
        class_="mb-3",
    )
