"""The Protect, History and Export pages: a form per protection method generated from the
registry, the category tables of the recodes, the protection search with its Pareto front; the
steps applied so far with undo (:meth:`sdckit.SdcProblem.undo`) and redo of any number of
steps, variants saved as branches and compared on the risk-utility map; the export.

Every long computation runs in the background (:mod:`sdckit.app.jobs`) with a progress bar and
a *Cancel* button; a cancelled step leaves the release as it was.
"""

from __future__ import annotations

from shiny import reactive, render, ui

from .._errors import Cancelled, SdcError
from . import model
from .jobs import Job, progress_ui

__all__ = ["export_panel", "history_panel", "protect_panel", "protect_server"]


def _input_id(method: str, name: str) -> str:
    return f"p_{method}_{name}"


#: how a text field is typed, by the parameter's declared type
_HINTS = {"mapping": " (pairs OLD=NEW separated by ';')", "text": "", "any": " (a list: items separated by ';')"}


def _label(field: model.Field) -> str:
    role = f" (empty: the scenario's {field.role.replace('_', ' ')})" if field.role else ""
    note = " (required)" if field.required else role
    return f"{field.name}{note}"


def _message(exc) -> ui.Tag:
    return ui.p(" ".join(str(exc).split()), class_="sdckit-error")


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


def _busy_row(button_id: str, label: str, cancel_id: str, progress_id: str) -> ui.Tag:
    return ui.div(
        ui.div(
            ui.input_action_button(button_id, label),
            ui.input_action_button(cancel_id, "Cancel", class_="btn-outline-secondary"),
            class_="d-flex gap-2",
        ),
        ui.output_ui(progress_id),
    )


def protect_panel():
    forms = model.method_forms()
    return ui.nav_panel(
        "Protect",
        ui.layout_columns(
            ui.card(
                ui.card_header("Method"),
                ui.input_select("method", "Protection method", choices={f.method: f.title for f in forms}),
                ui.output_ui("method_form"),
                _busy_row("apply", "Apply", "cancel_apply", "apply_progress"),
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
        _search_card(),
    )


def _search_card() -> ui.Tag:
    return ui.card(
        ui.card_header("Search: the least loss for a risk target"),
        ui.layout_columns(
            ui.input_numeric("search_k", "k (k-anonymity; empty: none)", value=3, min=1, step=1),
            ui.input_numeric("search_rate", "target re-identification rate (empty: none)", value=None, min=0, max=1),
            ui.input_numeric(
                "search_suppression", "share of key cells that may be suppressed", value=0.05, min=0, max=1
            ),
            ui.input_numeric("search_time", "time limit (seconds)", value=60, min=1),
            col_widths=(3, 3, 3, 3),
        ),
        ui.layout_columns(
            ui.input_select(
                "search_objective",
                "objective",
                choices={"loss": "loss of every change (unit-free)", "arx": "ARX's Loss"},
            ),
            ui.input_select(
                "search_suppression_kind",
                "suppress",
                choices={"cells": "single key values", "records": "whole records"},
            ),
            ui.input_text_area(
                "search_hierarchies",
                "hierarchies (one per line, key: path to a hierarchy CSV; empty: automatic)",
                value="",
                rows=2,
                width="100%",
            ),
            col_widths=(3, 3, 6),
        ),
        _busy_row("search", "Search", "cancel_search", "search_progress"),
        ui.output_ui("search_status"),
        ui.output_ui("search_front"),
    )


def history_panel():
    return ui.nav_panel(
        "History",
        ui.layout_columns(
            ui.card(
                ui.card_header("Steps"),
                ui.output_ui("history"),
                ui.div(
                    ui.input_action_button("undo", "Undo"),
                    ui.input_action_button("redo", "Redo"),
                    class_="d-flex gap-2",
                ),
                ui.output_ui("history_status"),
            ),
            ui.card(
                ui.card_header("Variants: branches of the release"),
                ui.p(
                    "Save the current steps as a variant; continue from any saved variant to try another "
                    "branch; compare the variants on the risk-utility map.",
                    class_="text-muted",
                ),
                ui.div(
                    ui.input_text("variant_name", "name", value="", placeholder="e.g. recode age, k3"),
                    ui.input_action_button("save_variant", "Save as a variant"),
                    class_="d-flex gap-2 align-items-end",
                ),
                ui.output_ui("variants"),
                _busy_row("compare", "Compare the variants", "cancel_compare", "compare_progress"),
                ui.output_ui("variant_status"),
            ),
            col_widths=(6, 6),
        ),
        ui.output_ui("comparison"),
    )


def export_panel():
    return ui.nav_panel(
        "Export",
        ui.card(
            ui.card_header("Write the release"),
            ui.layout_columns(
                ui.input_text("export_data", "Protected file (.csv, .parquet, .sav, .dta)", value="protected.csv"),
                ui.input_text("export_recipe", "Recipe (.yaml, .yml or .json)", value="recipe.json"),
                ui.input_text("export_script", "Python script (.py; empty: none)", value=""),
                col_widths=(4, 4, 4),
            ),
            ui.layout_columns(
                ui.input_text("export_report", "Report (.html; empty: none)", value=""),
                ui.input_text("export_external_report", "Report for data users (.html; empty: none)", value=""),
                ui.div(
                    ui.input_checkbox("export_shuffle", "random row order", value=False),
                    ui.input_numeric("export_seed", "seed of the order (empty: a new one)", value=None, min=0, step=1),
                ),
                col_widths=(4, 4, 4),
            ),
            ui.input_checkbox("export_overwrite", "replace existing files", value=False),
            _busy_row("export", "Export", "cancel_export", "export_progress"),
            ui.output_ui("export_status"),
        ),
        ui.card(
            ui.card_header("Download through the browser"),
            ui.p(
                "The same files, downloaded by the browser (for a page opened from another machine).",
                class_="text-muted",
            ),
            ui.div(
                ui.download_button("download_data", "Protected file (CSV)"),
                ui.download_button("download_recipe", "Recipe (JSON)"),
                ui.download_button("download_report", "Report (HTML)"),
                ui.download_button("download_external_report", "Report for data users (HTML)"),
                ui.download_button("download_script", "Python script"),
                class_="d-flex gap-2 flex-wrap",
            ),
        ),
    )


def _apply(problem, method: str, parameters: dict):
    """One step, or with ``method="recipe"`` every step of the recipe ``parameters``; a
    cancelled (or failed) recipe leaves the release as it was."""
    before = len(problem.history)
    try:
        if method == "recipe":
            problem.apply_recipe(parameters)
        else:
            problem.apply(method, **parameters)
    except (Cancelled, SdcError):
        while len(problem.history) > before:
            problem.undo()
        raise
    return len(problem.history)


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
    applying = Job("apply", lock)
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
        return _apply(get(), method, parameters)

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
            return _message(message())
        status = applying.task.status()
        if status == "cancelled":
            return ui.p("Cancelled: the steps are as they were.", class_="sdckit-busy", id="apply_cancelled")
        if applying.error() is not None:
            return _message(applying.error())
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
            return _message(history_message())
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

    _variants_server(input, rel, problem, existing, applying, busy, revision, bump, lock)
    _search_server(input, problem, existing, busy, applying, rel, run_step)
    _export_server(input, state, problem, busy, lock)
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


# -- variants: branches compared on the risk-utility map -------------------------------------
def _variants_server(input, rel, problem, existing, applying, busy, revision, bump, lock) -> None:
    comparing = Job("compare")
    progress_ui(comparing, "Comparing the variants", "compare_progress", "comparing")
    message: reactive.Value[Exception | None] = reactive.value(None)
    listed = reactive.value(0)  # bumped when the saved variants change

    @reactive.effect
    @reactive.event(input.save_variant)
    def _save():
        try:
            busy()
            pr = existing()
            if pr is None or not pr.history:
                raise SdcError("variant: no step applied; expected at least one step to save as a variant")
            name = model.variant_name(input.variant_name(), rel.variants)
        except SdcError as exc:
            message.set(exc)
            return
        rel.variants[name] = {**pr.to_recipe(), "name": name}
        message.set(None)
        listed.set(listed() + 1)

    @render.ui
    def variants():
        listed()
        revision()
        if not rel.variants:
            return ui.p("No variant saved yet.", id="variants_empty", class_="text-muted")
        choices = {n: f"{n}: {', '.join(s['method'] for s in r['steps'])}" for n, r in rel.variants.items()}
        return ui.div(
            ui.input_radio_buttons("variant", "saved variants", choices=choices, width="100%"),
            ui.input_action_button("branch", "Continue from this variant"),
            id="variant_list",
        )

    @reactive.effect
    @reactive.event(input.branch)
    def _branch():
        """The release becomes the original with the chosen variant's steps (the undone steps
        are forgotten); steps applied next make a new branch."""
        try:
            busy()
            pr = existing()
            name = input.variant()
            if pr is None or name not in rel.variants:
                raise SdcError("variant: none chosen; expected a saved variant")
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        recipe = rel.variants[name]

        def replay(get, *_):
            p = get()
            saved = list(p._steps)  # restored if the replay is cancelled or fails
            try:
                p._steps.clear()
                return _apply(p, "recipe", recipe)
            except BaseException:
                p._steps[:] = saved
                raise

        rel.redo = []
        applying.start(replay, lambda: pr, "recipe", recipe)

    def _compare(original, scenario, recipes):
        from ..workflow import assess

        return assess(original, scenario, recipes=recipes, progress=False)

    @reactive.effect
    @reactive.event(input.compare)
    def _compare_clicked():
        try:
            pr = existing()
            if pr is None or not rel.variants:
                raise SdcError("compare: no variant saved; expected at least one saved variant")
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        comparing.start(_compare, pr.original, pr.scenario, list(rel.variants.values()))

    @reactive.effect
    @reactive.event(input.cancel_compare)
    def _cancel():
        comparing.cancel()

    @render.ui
    def variant_status():
        if message() is not None:
            return _message(message())
        if comparing.task.status() == "cancelled":
            return ui.p("Cancelled: the comparison shown is the one before.", class_="sdckit-busy")
        if comparing.error() is not None:
            return _message(comparing.error())
        return None

    shown: reactive.Value = reactive.value(None)

    @reactive.effect
    def _compared():
        if comparing.task.status() == "success":
            result = comparing.task.result()
            with reactive.isolate():
                shown.set(result)

    @render.ui
    def comparison():
        result = shown()
        if result is None:
            return None
        headline = result.summary().headline or ""
        return ui.card(
            ui.card_header("The variants on the risk-utility map"),
            ui.div(*(ui.p(line) for line in headline.splitlines()), class_="sdckit-verdict", id="comparison_verdict"),
            ui.HTML(result._repr_html_()),
        )


# -- search ----------------------------------------------------------------------------------
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


def _search_server(input, problem, existing, busy, applying, rel, run_step) -> None:
    """The protection search on the current data; a point of its Pareto front, picked, is
    applied (its recipe's steps) and becomes the current state."""

    searching = Job("search")
    progress_ui(searching, "Searching", "search_progress", "searching")
    searched: dict = {"problem": None, "steps": None}  # the release the last search ran on, its steps

    def _run_search(get, options):
        pr = get()
        searched["problem"], searched["steps"] = pr, [id(st) for st in pr.history]
        return pr.search(**options, progress=False)

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
                "objective": input.search_objective(),
                "suppression": input.search_suppression_kind(),
            }
            hierarchies = model.parse_hierarchies(input.search_hierarchies())
            if hierarchies:
                options["hierarchies"] = hierarchies
            pr = problem()
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        searched["problem"] = None
        searching.start(_run_search, pr, options)

    @reactive.effect
    @reactive.event(input.cancel_search)
    def _cancel():
        searching.cancel()

    @render.ui
    def search_status():
        if message() is not None:
            return _message(message())
        if searching.task.status() == "cancelled":
            return ui.p("Cancelled: nothing was applied.", class_="sdckit-busy", id="search_cancelled")
        if searching.error() is not None:
            return _message(searching.error())
        return None

    @render.ui
    def search_front():
        if searching.task.status() != "success":
            return None
        result = searching.task.result()
        if not result.front:
            return ui.p(result.summary().headline or "No candidate found.", id="search_none")
        choices = {str(i): _front_label(p) for i, p in enumerate(result.front)}
        return ui.div(
            ui.p(result.summary().headline or "", id="search_headline"),
            ui.layout_columns(
                ui.div(
                    ui.input_radio_buttons(
                        "front_point", "Pareto front (least loss first)", choices=choices, width="100%"
                    ),
                    ui.input_action_button("use_point", "Use this point"),
                ),
                ui.HTML(model.front_figure(result)),
                col_widths=(6, 6),
            ),
        )

    @reactive.effect
    @reactive.event(input.use_point)
    def _use():
        try:
            busy()
            pr = existing()
            same = pr is not None and pr is searched["problem"]
            same = same and [id(st) for st in pr.history] == searched["steps"]
            if not same or searching.task.status() != "success":
                raise SdcError("search: the data, the roles or the steps changed since; expected a new search")
        except SdcError as exc:
            message.set(exc)
            return
        point = searching.task.result().front[int(input.front_point())]
        searched["problem"] = None  # the front was for the state before this point
        rel.redo = []
        applying.start(run_step, lambda: pr, "recipe", point["recipe"])


# -- export ----------------------------------------------------------------------------------
def _export_server(input, state, problem, busy, lock) -> None:
    exporting = Job("export", lock)
    progress_ui(exporting, "Writing", "export_progress", "writing")
    message: reactive.Value[Exception | None] = reactive.value(None)

    def order() -> dict | None:
        if not input.export_shuffle():
            return None
        seed = input.export_seed()
        return {"seed": None if seed in (None, "") else model._integer(seed, "seed")}

    def _write(get, source, origin, paths, overwrite, row_order):
        pr = get()
        model.set_row_order(pr, row_order)
        return model.export(pr, source, **paths, overwrite=overwrite, script_source=origin)

    @reactive.effect
    @reactive.event(input.export)
    def _export():
        try:
            busy()
            pr = problem()
            row_order = order()
        except SdcError as exc:
            message.set(exc)
            return
        message.set(None)
        paths = {
            "data": input.export_data(),
            "recipe": input.export_recipe(),
            "report": input.export_report(),
            "external_report": input.export_external_report(),
            "script": input.export_script(),
        }
        exporting.start(_write, pr, state["path"](), state["origin"](), paths, input.export_overwrite(), row_order)

    @reactive.effect
    @reactive.event(input.cancel_export)
    def _cancel():
        exporting.cancel()

    @render.ui
    def export_status():
        if message() is not None:
            return _message(message())
        status = exporting.task.status()
        if status == "cancelled":
            return ui.p("Cancelled: a file already written stays; the others were not written.", class_="sdckit-busy")
        if exporting.error() is not None:
            return _message(exporting.error())
        if status == "success":
            return ui.p("Written: " + ", ".join(exporting.task.result()), id="exported")
        return None

    def download(kind: str, suffix: str):
        """A file of the release written to a temporary folder and sent to the browser."""

        def name() -> str:
            stem = (state["name"]() or "release").rsplit(".", 1)[0]
            return {"data": f"{stem}-protected", "script": f"{stem}-release"}.get(kind, f"{stem}-{kind}") + suffix

        def make():
            busy()
            pr = problem()()
            with lock:
                model.set_row_order(pr, order())
                yield model.export_bytes(pr, state["path"](), kind, suffix, script_source=state["origin"]())

        make.__name__ = f"download_{kind}"
        render.download(filename=name)(make)

    for kind, suffix in (
        ("data", ".csv"),
        ("recipe", ".json"),
        ("report", ".html"),
        ("external_report", ".html"),
        ("script", ".py"),
    ):
        download(kind, suffix)
