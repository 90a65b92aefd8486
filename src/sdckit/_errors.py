"""Errors and warnings raised by sdckit.

Every error sdckit raises on bad input derives from :class:`SdcError`, itself a
:class:`ValueError`, so ``except ValueError`` keeps working. A column that is not
in the data raises :class:`MissingColumnError`, which is also a :class:`KeyError`.

Messages have one shape: ``"<parameter or column>: <what is wrong>; <what was expected>"``.
When validation finds several problems at once they are listed one per line.
"""

from __future__ import annotations

__all__ = ["Cancelled", "SdcError", "MissingColumnError", "SdcWarning"]


class SdcError(ValueError):
    """Invalid input or parameters for an sdckit measure or method.

    Parameters
    ----------
    message : str
        Human readable description. Multi-problem validation errors carry
        ``problems``, the list of individual messages.
    """

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = list(problems) if problems else [message]

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return self.args[0] if self.args else ""


class MissingColumnError(SdcError, KeyError):
    """A requested column is not present in the data (also a :class:`KeyError`)."""

    def __str__(self) -> str:
        return self.args[0] if self.args else ""


class SdcWarning(UserWarning):
    """A documented, non-fatal deviation (for example a deliberate difference from sdcMicro)."""


def warn(message: str, category: type[Warning] = SdcWarning) -> None:
    """Issue a warning attributed to the caller's code: the first frame outside the sdckit
    package, however deep inside sdckit (decorators, steps) the warning arises."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is the caller of warn()
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


class Cancelled(Exception):
    """A computation stopped at the caller's request (:class:`sdckit._progress.Watcher`).

    Not an :class:`SdcError`: nothing was wrong with the input. It is raised at the next
    checkpoint of the computation (a named step or a progress update) after
    :meth:`~sdckit._progress.Watcher.cancel`, and leaves every input as it was.
    """
