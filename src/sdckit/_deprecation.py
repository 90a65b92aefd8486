"""Renamed parameters and attributes keep working for one release, with a DeprecationWarning.

``@renamed_parameters(old="new", ...)`` accepts the old keyword names of a function (a declared
method or measure says ``declare(..., renamed={"old": "new"})`` instead: its declaration holds
them, for recipes saved before the rename); ``positional=("a", "b")`` lets arguments that used
to be positional (and are now keyword-only) still be given by position after the last
positional parameter. ``deprecated_alias(new, old)``
makes an old result attribute a warning property.
"""

from __future__ import annotations

import functools
import inspect
import warnings

__all__ = ["deprecated_alias", "renamed_parameters", "warn_deprecated"]

REMOVED_IN = "0.3"


def warn_deprecated(msg: str, stacklevel: int = 3) -> None:
    warnings.warn(
        f"{msg}; the old form will be removed in sdckit {REMOVED_IN}", DeprecationWarning, stacklevel=stacklevel
    )


def renamed_parameters(*, positional: tuple[str, ...] = (), **renames: str):
    """Decorator: map old keyword names to new ones, and extra positional arguments to the
    keyword-only parameters that used to be positional (in the order of ``positional``).

    The wrapped function's signature (what ``inspect.signature`` and the docs show) is the new
    one. Giving both an old and its new name is an error.
    """

    def decorate(func):
        sig = inspect.signature(func)
        n_pos = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in sig.parameters.values())

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if len(args) > n_pos and positional:
                extra = args[n_pos:]
                if len(extra) > len(positional):
                    raise TypeError(f"{func.__name__}() takes at most {n_pos + len(positional)} positional arguments")
                args = args[:n_pos]
                names = positional[: len(extra)]
                warn_deprecated(f"{func.__name__}(): pass {', '.join(names)} by keyword ({names[0]}=...)")
                for name, value in zip(names, extra):
                    if name in kwargs:
                        raise TypeError(f"{func.__name__}() got multiple values for argument {name!r}")
                    kwargs[name] = value
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}(): give {new}= only ({old}= is its old name)")
                    warn_deprecated(f"{func.__name__}(): {old}= is now called {new}=")
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        wrapper.__signature__ = sig  # type: ignore[attr-defined]
        wrapper.renamed_parameters = dict(renames)  # type: ignore[attr-defined]  # old -> new, for recipes
        return wrapper

    return decorate


def deprecated_alias(new: str, old: str) -> property:
    """A read-only property ``old`` that warns and returns attribute ``new``."""

    def getter(self):
        warn_deprecated(f"{type(self).__name__}.{old} is now called {new}")
        return getattr(self, new)

    return property(getter, doc=f"Deprecated name of :attr:`{new}`.")
