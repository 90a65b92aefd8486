"""The search on the Protect page: the target, the objective, the hierarchies; the verdict and
the Pareto front, listed and drawn; a point picked becomes the current state."""

from __future__ import annotations

from shiny import reactive, render, ui

from .._errors import SdcError
from . import model
from .jobs import Job, progress_ui
from .widgets import busy_row, message_tag

__all__ = ["search_card", "search_server", "search_target"]


def search_card() -> ui.Tag:
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
        busy_row("search", "Search", "cancel_search", "search_progress"),
        ui.output_ui("search_status"),
        ui.output_ui("search_front"),
    )


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


def search_server(input, problem, existing, busy, applying, rel, run_step) -> None:
    """The protection search on the current data; a point of its Pareto front, picked, is
    applied (its recipe's steps) and becomes the current state."""

    searching = Job()
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
            return message_tag(message())
        if searching.task.status() == "cancelled":
            return ui.p("Cancelled: nothing was applied.", class_="sdckit-busy", id="search_cancelled")
        if searching.error() is not None:
            return message_tag(searching.error())
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
