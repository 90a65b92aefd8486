"""The History page: the steps with undo and redo (the server part is in
:mod:`sdckit.app.protect`), and the variants: the current steps saved under a name, continued
from (a branch), and compared on the risk-utility map."""

from __future__ import annotations

from shiny import reactive, render, ui

from .._errors import SdcError
from . import model
from .jobs import Job, progress_ui
from .widgets import busy_row, message_tag

__all__ = ["history_panel", "variants_server"]


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
                busy_row("compare", "Compare the variants", "cancel_compare", "compare_progress"),
                ui.output_ui("variant_status"),
            ),
            col_widths=(6, 6),
        ),
        ui.output_ui("comparison"),
    )


def variants_server(input, rel, existing, applying, busy, revision, run_step) -> None:
    comparing = Job()
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

        rel.redo = []
        applying.start(run_step, lambda: pr, "branch", recipe)

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
            return message_tag(message())
        if comparing.task.status() == "cancelled":
            return ui.p("Cancelled: the comparison shown is the one before.", class_="sdckit-busy")
        if comparing.error() is not None:
            return message_tag(comparing.error())
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
