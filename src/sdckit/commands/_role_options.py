"""The command line's role options (``--keys``, ``--weight``, ``--scales``, ...), built from the
one roles table (:data:`sdckit._roles.ROLES`).

:func:`add_role_option` gives a role's option its name (the role's, underscores written as
hyphens), its destination (the role's name) and the start of its help (the role's meaning and
how its kind is written); a command chooses which roles it offers, whether one is required and
a help text of its own after the table's. :func:`role_value` reads the option by the role's
kind: a column as given, columns (and codes) as a comma-separated list, a mapping as
``NAME=VALUE,...``. ``tests/test_roles_table.py`` checks that every command's option for a
role was built here.
"""

from __future__ import annotations

from .._errors import SdcError
from .._roles import role

__all__ = ["ROLE_MARK", "add_role_option", "role_help", "role_option", "role_value"]

#: the attribute that marks an argparse action as a role's option built by :func:`add_role_option`
ROLE_MARK = "sdckit_role"

#: how a value of each kind of role is written on the command line (the end of its base help)
_WRITTEN = {
    "column": "",
    "columns": ", comma-separated",
    "any": ", comma-separated",
    "mapping": ", comma-separated NAME=VALUE",
    "text": "",
}

#: a mapping role's item and an example, as its error message names them (default NAME=VALUE)
_MAPPING_ITEMS = {"scales": ("VARIABLE=SCALE", "age=numeric,hsize=numeric")}


def role_option(name: str) -> str:
    """The option of the role ``name``: ``"--numeric-keys"`` for ``numeric_keys``."""
    return "--" + role(name).name.replace("_", "-")


def role_help(name: str) -> str:
    """The start of the help of the role's option: its meaning in the roles table and how its
    kind is written (``"stratification columns, comma-separated"``)."""
    r = role(name)
    return r.meaning + _WRITTEN[r.kind]


def add_role_option(sp, name: str, more: str = "", *, required: bool = False):
    """Add the option of the role ``name`` to the parser ``sp`` and return its action.

    Parameters
    ----------
    sp : argparse.ArgumentParser or argument group
        Where the option goes.
    name : str
        A role of the roles table (a ``KeyError`` otherwise).
    more : str
        The command's own words after the table's help, e.g. ``"(searched)"``.
    required : bool
        Whether the command needs the option.

    Returns
    -------
    argparse.Action
        The option, marked with :data:`ROLE_MARK` (the role's name).
    """
    text = role_help(name) + (f" {more}" if more else "")
    action = sp.add_argument(role_option(name), dest=name, required=required, help=text)
    setattr(action, ROLE_MARK, name)
    return action


def role_value(args, name: str):
    """The value of the role's option in ``args`` by the role's kind in the roles table: a
    column (or a text) as given, columns and codes as a list, a mapping as a dict; ``None``
    when the option was not given (or the command has none); a ``KeyError`` for a name that is
    not a role."""
    kind = role(name).kind
    value = getattr(args, name, None)
    if value is None:
        return None
    if kind in ("column", "text"):
        return value
    if kind == "mapping":
        return _mapping(value, name)
    from . import split_list

    return split_list(value)


def _mapping(text: str, name: str) -> dict | None:
    """``age=numeric,hsize=numeric`` -> {"age": "numeric", "hsize": "numeric"} (``None`` when empty)."""
    from . import split_list

    if not text:
        return None
    item_form, example = _MAPPING_ITEMS.get(name, ("NAME=VALUE", "a=x,b=y"))
    out = {}
    for item in split_list(text):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise SdcError(f"{role_option(name)}: {item!r} is not {item_form}; expected e.g. {example}")
        out[key.strip()] = value.strip()
    return out
