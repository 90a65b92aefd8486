"""One protection step as a workflow applies it: :meth:`sdckit.SdcProblem.apply`, a recipe's
replay in an assessment, and every candidate of :func:`sdckit.search` go through
:func:`run_step`, so that a file the search returns is the file its recipe replays to."""

from __future__ import annotations

from .._errors import SdcError
from ..scenario import Scenario

__all__ = ["run_step"]


def run_step(before, scenario: Scenario, method: str, parameters: dict, *, engine=None, fill_roles: bool = True):
    """The result of ``method`` on ``before``, the roles the caller left out filled from the
    scenario (unless ``fill_roles=False``), every linked variable made to follow its key's
    suppressions and recodes."""
    decl = _method(method)
    decl.check_names(parameters)
    params = _with_roles(decl, scenario, parameters) if fill_roles else dict(parameters)
    result = decl.func(before, **params)
    if scenario.linked:
        from ..protect._linked import keep_links

        result = keep_links(before, result, scenario, engine=engine)
    return result


def _with_roles(decl, scenario: Scenario, parameters: dict) -> dict:
    """The parameters with every role the method declares and the caller left out filled
    from the scenario (a role the scenario does not set stays out)."""
    out = dict(parameters)
    for name, role in decl.roles.items():
        value = getattr(scenario, role)
        if name not in out and value not in (None, ()):
            out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _method(name):
    from ..registry import methods

    decls = {decl.name: decl for decl in methods()}
    if not isinstance(name, str) or name not in decls:
        raise SdcError(f"method: unknown protection method {name!r}; expected one of {', '.join(sorted(decls))}")
    return decls[name]
