"""The Export page: the protected file (in the original or a random row order), the recipe,
the reports and the script, written into the app's folder (``sdckit app --folder``) under the
names given, or downloaded through the browser."""

from __future__ import annotations

from pathlib import Path

from shiny import reactive, render, ui

from .._errors import SdcError
from . import model
from .jobs import Job, progress_ui
from .widgets import busy_row, message_tag

__all__ = ["export_panel", "export_server"]

#: Shiny's download renderer: ``render.download_button`` (``render.download``, which Shiny 1.8
#: deprecates, only where it is missing)
_download = getattr(render, "download_button", None) or render.download


def export_panel(folder: str):
    return ui.nav_panel(
        "Export",
        ui.card(
            ui.card_header("Write the release"),
            ui.p(
                "The files are written into the folder ",
                ui.tags.code(folder, id="export_folder"),
                " (sdckit app --folder) under the names below; a name is a file name, without a folder.",
            ),
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
            busy_row("export", "Export", "cancel_export", "export_progress"),
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


def export_server(input, state, problem, busy, lock) -> None:
    exporting = Job(lock)
    progress_ui(exporting, "Writing", "export_progress", "writing")
    message: reactive.Value[Exception | None] = reactive.value(None)

    def order() -> dict | None:
        if not input.export_shuffle():
            return None
        seed = input.export_seed()
        return {"seed": None if seed in (None, "") else model._integer(seed, "seed")}

    def _write(get, source, origin, names, overwrite, row_order):
        pr = get()
        model.set_row_order(pr, row_order)
        return model.export(pr, source, state["folder"], **names, overwrite=overwrite, script_source=origin)

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
        names = {
            "data": input.export_data(),
            "recipe": input.export_recipe(),
            "report": input.export_report(),
            "external_report": input.export_external_report(),
            "script": input.export_script(),
        }
        exporting.start(_write, pr, state["path"](), state["origin"](), names, input.export_overwrite(), row_order)

    @reactive.effect
    @reactive.event(input.cancel_export)
    def _cancel():
        exporting.cancel()

    @render.ui
    def export_status():
        if message() is not None:
            return message_tag(message())
        status = exporting.task.status()
        if status == "cancelled":
            return ui.p("Cancelled: nothing was written.", class_="sdckit-busy", id="export_cancelled")
        if exporting.error() is not None:
            return message_tag(exporting.error())
        if status == "success":
            written = [Path(p).name for p in exporting.task.result()]
            return ui.p(f"Written into {state['folder']}: {', '.join(written)}", id="exported")
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
        _download(filename=name)(make)

    for kind, suffix in (
        ("data", ".csv"),
        ("recipe", ".json"),
        ("report", ".html"),
        ("external_report", ".html"),
        ("script", ".py"),
    ):
        download(kind, suffix)
