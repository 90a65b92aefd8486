"""What the app shows and does, without the web framework: the variables of a file, the roles
as a scenario, the forms of the protection methods generated from the registry, and the
conversion of a filled form into a method's parameters.

Nothing here imports Shiny, so that every piece is tested on its own and the app's pages stay
thin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._declare import REQUIRED, Declaration, Param
from .._errors import SdcError
from .._roles import ROLES as ROLE_TABLE

__all__ = [
    "ROLES",
    "Field",
    "Form",
    "describe_variables",
    "export",
    "export_bytes",
    "front_figure",
    "form_fields",
    "method_forms",
    "parameters_from_form",
    "parse_hierarchies",
    "recode_view",
    "release_path",
    "save_scenario",
    "scenario_from_roles",
    "set_row_order",
    "variant_name",
]

#: the roles a user sets, in the order the page shows them: (role, label, several columns), the
#: roles of the roles table that have a label
ROLES = tuple((r.name, r.label, r.kind == "columns") for r in ROLE_TABLE if r.label)

#: categories listed by name in the variables table (a variable with more shows its count only)
MAX_LISTED = 12

#: the widget of each declared parameter type; every other type is typed as text and read the
#: way ``sdckit protect --step`` reads it (lists separated by ``;``, mappings as ``OLD=NEW;...``)
_WIDGETS = {
    "column": "column",
    "columns": "columns",
    "int": "integer",
    "seed": "integer",
    "number": "number",
    "bool": "checkbox",
    "choice": "select",
}


# -- the variables ---------------------------------------------------------------------------
def _type_label(dtype) -> str:
    text = str(dtype)
    for prefix, label in (
        ("Int", "integer"),
        ("UInt", "integer"),
        ("Float", "decimal"),
        ("String", "text"),
        ("Utf8", "text"),
        ("Enum", "labelled"),
        ("Categorical", "categorical"),
        ("Boolean", "yes/no"),
    ):
        if text.startswith(prefix):
            return label
    return text.lower()


def describe_variables(data) -> list[dict]:
    """One row per column of a table read by :func:`sdckit.read_data`: its name, type, number
    of categories (distinct non-missing values), the categories themselves when there are at
    most :data:`MAX_LISTED` (labels of a labelled variable), and the number of missing values.
    """
    rows = []
    for name in data.columns:
        column = data.get_column(name)
        present = column.drop_nulls()
        n_categories = int(present.n_unique())
        listed = []
        if n_categories <= MAX_LISTED:
            if _type_label(column.dtype) == "labelled":  # the labels in code order
                listed = [str(v) for v in present.unique().sort().to_list()]
            else:
                listed = sorted((str(v) for v in present.unique().to_list()), key=_natural)
        rows.append(
            {
                "name": name,
                "type": _type_label(column.dtype),
                "categories": n_categories,
                "listed": listed,
                "missing": int(column.null_count()),
            }
        )
    return rows


def _natural(text: str):
    """Numbers in numeric order before text in alphabetical order."""
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


# -- the scenario ----------------------------------------------------------------------------
def scenario_from_roles(roles: dict, columns=None):
    """A :class:`sdckit.Scenario` from the roles chosen on the page (empty choices left out).

    ``columns`` (the file's columns) turns a role naming a column the file lacks into an error
    naming the role."""
    from ..scenario import Scenario

    given: dict[str, Any] = {}
    for role, _, several in ROLES:
        value = roles.get(role)
        if several:
            value = [v for v in (value or ()) if v]
        if value:
            given[role] = tuple(value) if several else value
    if roles.get("linked"):  # linked variable -> key or list of keys (no field on the page)
        given["linked"] = roles["linked"]
    if not given.get("keys") and not given.get("numeric_keys"):
        raise SdcError("keys: no key variables chosen; expected at least one key or numeric key variable")
    if columns is not None:
        for role, value in given.items():
            names = _role_columns(value)
            unknown = [n for n in names if n not in columns]
            if unknown:
                raise SdcError(f"{role}: {', '.join(unknown)} not in the data; expected columns of the file")
    return Scenario(**given)


def _role_columns(value) -> tuple:
    """The columns a role names: one, several, or a mapping's linked variables and their keys."""
    if isinstance(value, dict):
        return (*value, *(k for keys in value.values() for k in ((keys,) if isinstance(keys, str) else keys)))
    return value if isinstance(value, tuple) else (value,)


def save_scenario(scenario, folder, name, *, overwrite: bool = False, inputs=()):
    """Write the scenario as a YAML (``.yaml``/``.yml``) or JSON (``.json``) file named
    ``name`` in ``folder`` (the rules of :func:`release_path`), the file ``sdckit assess
    --config`` reads. Returns the path written."""
    from ..workflow.problem import write_recipe

    path = release_path(folder, name, "scenario", inputs=inputs, overwrite=overwrite)
    return write_recipe(scenario.to_dict(), path, overwrite=overwrite)


# -- the forms of the protection methods -----------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One input of a method's form, from one declared parameter.

    ``widget`` is ``"column"`` (one column), ``"columns"`` (several), ``"integer"``,
    ``"number"``, ``"checkbox"``, ``"select"`` (one of ``choices``) or ``"text"`` (read as
    ``sdckit protect --step`` reads the value: items of a list separated by ``;``, a mapping
    as ``OLD=NEW;OLD=NEW``). ``default`` is None when the parameter has none;
    ``role`` names the scenario role that fills an empty field.
    """

    name: str
    widget: str
    help: str
    default: Any
    required: bool
    role: str | None
    choices: tuple = ()
    low: float | None = None
    high: float | None = None
    #: the declared type of the parameter (:data:`sdckit._declare.TYPES`)
    type: str = "any"


@dataclass(frozen=True)
class Form:
    """The form of one protection method: its name, title, what it changes, its fields."""

    method: str
    title: str
    changes: str
    fields: tuple[Field, ...]


def _field(p: Param) -> Field:
    widget = _WIDGETS.get(p.type or "any", "text")
    required = p.default is REQUIRED
    default = None if required else p.default
    if widget == "text" and default is not None:
        default = _as_text(default)
    finite = (p.low is not None and abs(p.low) != float("inf"), p.high is not None and abs(p.high) != float("inf"))
    return Field(
        name=p.name,
        widget=widget,
        help=p.help,
        default=default,
        required=required and not p.role,
        role=p.role or None,
        choices=tuple(p.choices),
        low=p.low if finite[0] and widget in ("integer", "number") else None,
        high=p.high if finite[1] and widget in ("integer", "number") else None,
        type=p.type or "any",
    )


def _as_text(value) -> str:
    """A default as the user types it: lists separated by ``;``, mappings as ``OLD=NEW;...``."""
    if isinstance(value, list | tuple):
        return ";".join(str(v) for v in value)
    if isinstance(value, dict):
        return ";".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def form_fields(decl: Declaration) -> tuple[Field, ...]:
    """The fields of a declared method's form, one per parameter, in the declaration's order."""
    return tuple(_field(p) for p in decl.params)


def method_forms() -> tuple[Form, ...]:
    """One form per protection method of :func:`sdckit.registry.methods`."""
    from .. import registry

    return tuple(Form(d.name, d.title, d.changes, form_fields(d)) for d in registry.methods())


def parameters_from_form(decl: Declaration, values: dict) -> dict:
    """The parameters of a filled form, each checked by its declared rule.

    An empty field (None, ``""``, an empty selection) is left out: the method's default or the
    scenario's role applies. A text field is read as ``sdckit protect --step`` reads a value; a
    required parameter with no role and no value is an error naming it.
    """
    out: dict[str, Any] = {}
    for field in form_fields(decl):
        value = values.get(field.name)
        if value is None or value == "" or (isinstance(value, list | tuple) and not value):
            if field.required:
                raise SdcError(f"{field.name}: no value; expected a value for {decl.name}")
            continue
        p = decl.param(field.name)
        if field.widget == "columns":
            value = list(value)
        elif field.widget == "integer":
            value = _integer(value, field.name)
        elif field.widget == "number":
            value = float(value)
        elif field.widget == "checkbox":
            value = bool(value)
            if value == field.default:
                continue
        elif field.widget == "text":
            value = p.parse(str(value))
        if field.widget != "text" and field.default is not None and value == field.default:
            continue
        out[field.name] = p.check(value)
    return out


def _integer(value, name: str) -> int:
    number = float(value)
    if not number.is_integer():
        raise SdcError(f"{name}: {number:g} is not a whole number; expected an integer")
    return int(number)


# -- export ----------------------------------------------------------------------------------
#: the formats whose value and variable labels are read from the input and written back
LABELLED = (".sav", ".zsav", ".dta")


def release_path(folder, name, kind: str, *, inputs=(), overwrite: bool = False):
    """The path a file the app writes goes to: ``name``, a file name without any folder, inside
    ``folder`` (the app's folder, ``sdckit app --folder``).

    Refused, naming ``kind``: a name with a folder in it (``/``, ``\\``, ``..``, an absolute
    path), a name that leads outside ``folder`` through a link, a name of one of ``inputs`` (the
    loaded file: the input is never written, also not through another name of the same file),
    and an existing file unless ``overwrite``. Returns the resolved path."""
    import os
    from pathlib import Path

    from .._validation import check_new_file

    home = Path(os.path.realpath(os.fspath(folder)))
    if not home.is_dir():
        raise SdcError(f"folder: {folder} is not an existing folder; expected the folder the app writes into")
    text = "" if name is None else str(name).strip()
    if not text or text in (".", "..") or "/" in text or "\\" in text or "\0" in text or os.path.isabs(text):
        raise SdcError(
            f"{kind}: {text!r} is not a file name; expected the name of a file in the folder {home} (no folder in it)"
        )
    path = Path(os.path.realpath(home / text))
    if path.parent != home:
        raise SdcError(f"{kind}: {text} leads outside the folder {home} (a link); expected a file in that folder")
    for source in inputs:
        if source and _same_file(path, source):
            raise SdcError(
                f"{kind}: {text} is the loaded input file; expected another name (the input is never written)"
            )
    if path.is_dir():
        raise SdcError(f"{kind}: {text} is a folder; expected a file name")
    check_new_file(path, overwrite, kind, how="tick the box to replace existing files")
    return path


def _same_file(path, other) -> bool:
    import os

    other = os.fspath(other)
    if os.path.realpath(other) == os.fspath(path):
        return True
    try:
        return os.path.samefile(path, other)
    except OSError:  # one of them does not exist
        return False


#: the prefix of the folder a release set is written into before it is moved into place: a
#: folder left with this name by a killed export holds an incomplete set
INCOMPLETE = "sdckit-export-incomplete-"


def export(
    problem,
    source,
    folder,
    *,
    data=None,
    recipe=None,
    report=None,
    external_report=None,
    script=None,
    overwrite: bool = False,
    script_source=None,
    inputs=(),
) -> list[str]:
    """Write what a release needs into ``folder``, as ``sdckit protect`` writes it: the
    protected ``data`` (its format from the extension; the value and variable labels of an SPSS
    or Stata ``source`` kept), the ``recipe`` (YAML or JSON), the internal ``report`` and the
    ``external_report`` for data users (HTML, one variant per step), and a Python ``script``
    that makes the protected file from ``script_source`` again (default ``source``; the user's
    own file when ``source`` is a temporary copy).

    Each is a file name in ``folder`` (the rules of :func:`release_path`; ``source`` and
    ``inputs`` are never written); names left None or empty are skipped. Every name is checked
    before anything is written. The set is written into a new folder ``sdckit-export-incomplete-*``
    inside ``folder`` and its files moved into place at the end: an export that fails or is
    cancelled writes nothing, and one killed midway leaves that folder, named as incomplete.
    Returns the paths written."""
    import shutil
    import tempfile
    from pathlib import Path

    given = {"data": data, "recipe": recipe, "report": report, "external_report": external_report, "script": script}
    names = {k: str(v).strip() for k, v in given.items() if v is not None and str(v).strip()}
    if not names:
        raise SdcError("export: no file named; expected a name for the data, the recipe, a report or the script")
    protected = (source, *inputs)
    targets = {k: release_path(folder, v, k, inputs=protected, overwrite=overwrite) for k, v in names.items()}
    _check_targets(targets)
    staging = Path(tempfile.mkdtemp(prefix=INCOMPLETE, dir=targets[next(iter(targets))].parent))
    try:
        for kind, path in targets.items():
            origin = script_source or source if kind == "script" else source
            _WRITERS[kind](problem, origin, staging / path.name, False)
        _move_into_place(staging, targets, overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [str(p) for p in targets.values()]


def _check_targets(targets: dict) -> None:
    from ..workflow.problem import check_recipe_path

    seen: dict = {}
    for kind, path in targets.items():
        if path in seen:
            raise SdcError(f"{kind}: {path.name} is also the {seen[path]}'s name; expected a name of its own")
        seen[path] = kind
        if kind == "recipe":
            check_recipe_path(path, True, "recipe")
        elif kind in ("report", "external_report", "script"):
            wanted = (".py",) if kind == "script" else (".html", ".htm")
            if path.suffix.lower() not in wanted:
                raise SdcError(f"{kind}: cannot write {path.name}; expected a file ending in {' or '.join(wanted)}")


def _move_into_place(staging, targets: dict, overwrite: bool) -> None:
    """Move the finished files of ``staging`` to their names (an existing file replaced only
    with ``overwrite``, also one that appeared while the set was written)."""
    import os

    from ..io import publish_new

    moved: list[str] = []
    for kind, path in targets.items():
        done = staging / path.name
        try:
            os.replace(done, path) if overwrite else publish_new(str(done), path)
        except FileExistsError:
            before = f"; already written: {', '.join(moved)}" if moved else ""
            raise SdcError(
                f"{kind}: {path.name} appeared while the release was written; nothing replaced{before}"
            ) from None
        moved.append(path.name)


def _write_data(problem, source, path, overwrite):
    from ..io import read_metadata

    meta = read_metadata(source) if str(source).lower().endswith(LABELLED) else None
    problem.write(path, metadata=meta, overwrite=overwrite)


def _write_report(problem, source, path, overwrite, audience="internal"):
    problem.report().to_html(path, audience=audience, overwrite=overwrite)


def _write_script(problem, source, path, overwrite):
    from pathlib import Path

    from ..io import atomic_write

    text = release_script(problem.to_recipe(), source)
    atomic_write(Path(path), lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), overwrite=overwrite)


_WRITERS = {
    "data": _write_data,
    "recipe": lambda problem, source, path, overwrite: problem.to_recipe(path, overwrite=overwrite),
    "report": _write_report,
    "external_report": lambda pr, source, path, overwrite: _write_report(pr, source, path, overwrite, "external"),
    "script": _write_script,
}


def release_script(recipe: dict, source, out: str = "protected.csv") -> str:
    """A Python script that replays ``recipe`` on the file ``source`` and writes the protected
    file ``out`` (given on its command line, default ``protected.csv``), with the labels of an
    SPSS or Stata source kept."""
    import pprint

    from ..workflow.problem import encode_floats

    # plain Python values only (an infinite number as {"$float": "inf"}, which the recipe reader decodes)
    recipe_text = pprint.pformat(encode_floats(recipe), indent=1, width=100, sort_dicts=False)
    metadata = "sdckit.read_metadata(SOURCE)" if str(source).lower().endswith(LABELLED) else "None"
    return f"""\
\"\"\"Reproduces a release made with sdckit app: the protected file from the original.

    python {{this file}} [OUT]     (OUT: the protected file to write, default {out})
\"\"\"

import sys

import sdckit

SOURCE = {str(source)!r}
RECIPE = {recipe_text}

out = sys.argv[1] if len(sys.argv) > 1 else {out!r}
problem = sdckit.SdcProblem.from_recipe(sdckit.read_data(SOURCE), RECIPE)
problem.write(out, metadata={metadata})
print(problem.summary())
"""


def set_row_order(problem, row_order: dict | None) -> None:
    """The export's row order: ``None`` the original one, ``{"seed": s}`` a random one (a new
    seed when ``s`` is None, kept in the recipe)."""
    if row_order is None:
        problem.set_row_order("original")
    elif problem.row_order is None or row_order["seed"] not in (None, problem.row_order["seed"]):
        problem.set_row_order("random", seed=row_order["seed"])


def export_bytes(problem, source, kind: str, suffix: str, *, script_source=None) -> bytes:
    """One file of the release (``kind`` as in :func:`export`), written to a temporary folder
    and read back: what the browser downloads."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="sdckit-download-") as folder:
        names: dict[str, Any] = {kind: f"release{suffix}"}
        (path,) = export(problem, source, folder, **names, script_source=script_source)
        return Path(path).read_bytes()


# -- the search, the variants, the recodes ---------------------------------------------------
def parse_hierarchies(text: str | None) -> dict:
    """The search's hierarchies from the page's text: one line per key, ``key: path`` to a
    hierarchy CSV (ARX's format: the value, then one column per level). Empty lines are
    skipped; a file that does not exist is an error naming the key."""
    from pathlib import Path

    out: dict = {}
    for i, line in enumerate((text or "").splitlines()):
        if not line.strip():
            continue
        key, sep, path = line.partition(":")
        if not sep or not key.strip() or not path.strip():
            raise SdcError(f"hierarchies: line {i + 1} is not 'key: path'; expected one 'key: path' per line")
        if not Path(path.strip()).is_file():
            raise SdcError(f"hierarchies: {key.strip()}: file {path.strip()} does not exist; expected a CSV file")
        out[key.strip()] = path.strip()
    return out


def variant_name(name: str | None, taken) -> str:
    """The name a variant is saved under: the one given (stripped), or ``variant N``; a name
    already taken is an error."""
    name = (name or "").strip()
    if not name:
        n = len(taken) + 1
        while f"variant {n}" in taken:
            n += 1
        return f"variant {n}"
    if name in taken:
        raise SdcError(f"variant: a variant named {name!r} exists; expected a new name")
    return name


def front_figure(result) -> str:
    """The search's Pareto front (loss against the re-identification rate, the winner
    marked) as an inline SVG figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..report.figures import svg_of

    fig, ax = plt.subplots(figsize=(5.0, 3.4))
    try:
        result.plot(ax=ax)
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(5))  # the losses are long decimals: fewer ticks stay legible
        fig.tight_layout()
        svg = svg_of(fig, "fig-search-front", "the search's Pareto front: loss against the re-identification rate")
    finally:
        plt.close(fig)
    return f'<figure class="sdckit-figure" id="search_front_figure">{svg}</figure>'


#: the methods whose changes are recodes (merged or cut categories)
RECODES = ("global_recode", "top_bottom_coding")


def recode_view(problem) -> dict:
    """For each variable recoded by a step so far, the released categories with the original
    categories merged into each and their counts (counts only, no record)."""
    from ..assessment.tradeoff import recode_tables

    variables = sorted({v for s in problem.history if s.method in RECODES for v, c in s.result.n_changed.items() if c})
    if not variables:
        return {}
    missing = list(problem.scenario.missing) or None
    return recode_tables(problem._original, problem._current, variables, missing, problem._engine)
