"""Pieces the pages of ``sdckit app`` share: an action button with its *Cancel* and progress
bar, an error message, and the application of steps (each of which leaves the release as it
was when cancelled or refused)."""

from __future__ import annotations

from shiny import ui

__all__ = ["apply_steps", "busy_row", "error_text", "message_tag"]


def message_tag(exc) -> ui.Tag:
    """An error message on one line: sdckit's own (it names the parameter and holds no record
    value) or a file system's; another library's message may quote a value of the data, so
    only its kind is shown."""
    return ui.p(" ".join(error_text(exc).split()), class_="sdckit-error")


def error_text(exc) -> str:
    """What the page says of ``exc`` (see :func:`message_tag`)."""
    from .._errors import SdcError

    if isinstance(exc, (SdcError, OSError)):
        return str(exc)
    return (
        f"sdckit met an unexpected error ({type(exc).__name__}); its message is not shown, as it may quote a "
        "value of the data"
    )


def busy_row(button_id: str, label: str, cancel_id: str, progress_id: str) -> ui.Tag:
    """The button that starts a computation, its *Cancel* button and its progress bar."""
    return ui.div(
        ui.div(
            ui.input_action_button(button_id, label),
            ui.input_action_button(cancel_id, "Cancel", class_="btn-outline-secondary"),
            class_="d-flex gap-2",
        ),
        ui.output_ui(progress_id),
    )


def apply_steps(problem, method: str, parameters: dict) -> int:
    """One step, with ``method="recipe"`` every step of the recipe ``parameters`` (all or
    nothing), or with ``method="branch"`` the recipe's steps instead of the current ones.
    Returns the number of steps."""
    if method == "recipe":
        problem.apply_recipe(parameters)
    elif method == "branch":
        problem.replace_steps(parameters)
    else:
        problem.apply(method, **parameters)
    return len(problem.history)
