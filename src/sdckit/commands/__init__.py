"""Subcommands of the ``sdckit`` command line, one module each.

A command module defines ``register(subparsers)``, which adds its parser and sets
``func`` to a handler ``handler(args) -> int``; ``sdckit.cli.COMMANDS`` lists the modules.
Shared helpers for the handlers live here, among them the role options (``--keys``,
``--weight``, ``--scales``, ...), built from the one roles table (:data:`sdckit._roles.ROLES`):
:func:`add_role_option` gives a role's option its name (the role's, underscores written as
hyphens), its destination (the role's name) and the start of its help (the role's meaning and
how its kind is written); a command chooses which roles it offers, whether one is required and
a help text of its own after the table's. :func:`role_value` reads the option by the role's
kind: a column as given, columns (and codes) as a comma-separated list, a mapping as
``NAME=VALUE,...``. ``tests/test_roles_table.py`` checks that every command's option for a
role was built there.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from .._errors import SdcError
from .._roles import names as role_names
from .._roles import role
from ..engines import DEFAULT_ENGINE, ENGINES

__all__ = [
    "Progress",
    "add_declared_options",
    "declared_values",
    "add_key_options",
    "add_measure_endings",
    "add_missing_options",
    "add_old_spelling",
    "add_output_options",
    "add_overwrite_option",
    "add_role_option",
    "role_help",
    "role_option",
    "add_variables_option",
    "key_list",
    "name_list",
    "parse_pairs",
    "print_warnings",
    "read_input",
    "role_value",
    "run_measure",
    "split_list",
    "with_warnings",
    "write_json",
    "progress_enabled",
]


class Progress:
    """Per-stage progress of a command on stderr: ``step(label)`` finishes the stage before and
    names the one that starts, ``close()`` finishes the last; the bar counts finished stages
    and shows the running stage's name and the elapsed time (tqdm when installed)."""

    def __init__(self, stages: int, enabled: bool):
        from .._progress import Progress as _Bar

        self._bar = _Bar(stages, "sdckit", enabled, unit="step", leave=True)
        self._started = False

    def step(self, label: str) -> None:
        if self._started:
            self._bar.update(1)
        self._started = True
        self._bar.step(label)

    def close(self) -> None:
        if self._started:
            self._bar.update(1)
            self._started = False
        self._bar.close()


def split_list(value: str | None) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]``."""
    return [p.strip() for p in value.split(",") if p.strip()] if value else []


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
    return split_list(value)


def _mapping(text: str, name: str) -> dict | None:
    """``age=numeric,hsize=numeric`` -> {"age": "numeric", "hsize": "numeric"} (``None`` when empty)."""
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


def progress_enabled(args) -> bool:
    if getattr(args, "progress", None) is not None:
        return args.progress
    return sys.stderr.isatty()


def add_key_options(sp) -> None:
    """The data file and --keys, shared by every single-file command."""
    sp.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    add_role_option(sp, "keys", required=True)


#: the help text of --alpha (sdckit freq, sdckit risk)
ALPHA_HELP = "weight of matches through missing values, in [0, 1] (default 1)"

#: the attribute that marks an argparse action as the option of a declared parameter (the
#: function's name): a parameter that shares a role's name without taking the role (``scales``
#: of ``information_loss``) is the function's own
DECLARED_MARK = "sdckit_declared"

#: the argparse ``type`` of a declared parameter's option, by the parameter's type (the other
#: types are read as text: column names, lists and formulas are parsed by the command)
_OPTION_TYPES = {"int": int, "seed": int, "number": float}


def declared_option(func, name: str, **given) -> dict:
    """The argparse settings of the option of parameter ``name`` of the declared function
    ``func``: its destination, and its type, choices and default as the declaration says
    (a flag when it is a switch that is off by default); ``given`` (its help, a command-line
    default written as text, a type the command reads itself) is added and wins."""
    from .._declare import REQUIRED, declaration

    p = declaration(func).param(name)  # type: ignore[union-attr]
    out: dict = {"dest": name}
    if p.type == "bool" and p.default is False:
        out["action"] = "store_true"
    elif p.type in _OPTION_TYPES:  # one value (a command that reads NAME=VALUE pairs says type=str)
        out["type"] = _OPTION_TYPES[p.type]
    if p.choices:
        out["choices"] = list(p.choices)
    if p.default is not REQUIRED and not isinstance(p.default, (list, tuple, Mapping)):
        out["default"] = p.default  # a list's default is written as text by the command (--k 2,3,5)
    return {**out, **given}


def add_declared_options(sp, func, helps: dict, **given: dict) -> None:
    """One option ``--<name>`` (underscores written as hyphens) for each parameter of ``helps``
    (parameter name -> the option's help text), its settings from ``func``'s declaration (see
    :func:`declared_option`; ``given``: per parameter, settings the command line sets itself).

    A parameter that takes a scenario role (a standard role of the roles table: ``weight``,
    ``strata``, ...) gets the role's option (:func:`add_role_option`, its help text after the
    table's); ``given`` does not apply to it."""
    standard = role_names(standard=True)
    for name, text in helps.items():
        if name in standard:
            add_role_option(sp, name, text)
            continue
        settings = declared_option(func, name, **given.get(name, {}))
        setattr(sp.add_argument("--" + name.replace("_", "-"), help=text, **settings), DECLARED_MARK, func.__name__)
    key = _declared_key(func)
    sp.set_defaults(**{key: (*(sp.get_default(key) or ()), *helps)})


def declared_values(args, func, **read) -> dict:
    """The values of the options :func:`add_declared_options` made for ``func``, by parameter
    name, as the command line read them; ``read``: the parameters the command reads itself
    (a list from its comma-separated text), which replace the option's text. The fields of a
    record of options (``--tol``, a field of ``fit``) are given in their record
    (``fit={"tol": ...}``), as the function takes them."""
    from .._declare import declaration

    standard = role_names(standard=True)
    given = {
        name: role_value(args, name) if name in standard else getattr(args, name) for name in _declared(args, func)
    }
    values = {**given, **read}
    return declaration(func).grouped(values)  # type: ignore[union-attr]


def _declared(args, func) -> tuple:
    """The parameters of ``func`` that have an option (:func:`add_declared_options`)."""
    return getattr(args, _declared_key(func))


def _declared_key(func) -> str:
    """Where a parser keeps the names of ``func``'s declared options (a default of its own)."""
    return f"_declared_{func.__name__}"


def add_measure_endings(sp, run, missing: str = "key variables", **output) -> None:
    """The options every measure command ends with, in this order: --missing and --na-values
    (``missing``: the variables the codes apply to), the output options (``output``: the
    arguments of :func:`add_output_options`), the engine's when the command takes
    ``engines=True``; and ``run`` as the command's handler."""
    add_missing_options(sp, missing)
    add_output_options(sp, **output)
    if output.get("engines"):
        add_engine_options(sp)
    sp.set_defaults(func=run)


def add_missing_options(sp, what: str = "key variables") -> None:
    """--missing (the role's option) and --na-values (``what``: the variables the codes apply to)."""
    add_role_option(sp, "missing", f"(in the {what}; e.g. -999)")
    sp.add_argument(
        "--na-values", dest="na_values", help="strings read as missing from text files (default: empty and NA)"
    )


def name_list(text: str | None, option: str, what: str = "variables") -> list[str]:
    """A comma-separated option as a non-empty list of column names."""
    names = split_list(text)
    if not names:
        raise SdcError(f"{option}: no {what} given; expected a comma-separated list of column names")
    return names


def key_list(args) -> list[str]:
    """The --keys of a command, as a non-empty list."""
    return name_list(args.keys, "--keys", "key variables")


def parse_pairs(text: str | None, option: str) -> dict[str, str]:
    """``"a=x, b=y"`` -> ``{"a": "x", "b": "y"}`` with a clear error naming ``option``."""
    out: dict[str, str] = {}
    for part in split_list(text):
        if "=" not in part:
            raise SdcError(f"{option}: {part!r} has no '='; expected NAME=VALUE")
        name, value = (x.strip() for x in part.split("=", 1))
        if not name or not value:
            raise SdcError(f"{option}: {part!r} is incomplete; expected NAME=VALUE")
        if name in out:
            raise SdcError(f"{option}: {name} is given twice")
        out[name] = value
    return out


#: what --records becomes under the out-of-core engines (commands with add_engine_options)
_ENGINE_RECORDS = (
    "; --engine duckdb writes one .parquet file, --engine spark a folder OUT of Parquet part files (one per "
    "partition, read with polars.read_parquet(OUT) or read_parquet('OUT/*.parquet')); the columns are the same "
    "with every engine"
)


def add_output_options(sp, records: str = "per-record results", id_option: bool = True, engines: bool = False) -> None:
    """--json, --records, --overwrite, --id and --progress / --no-progress (``engines``: the
    command also takes --engine, and --records says what each engine writes)."""
    sp.add_argument("--json", metavar="OUT", help="write the aggregate results as JSON to OUT")
    sp.add_argument(
        "--records",
        metavar="OUT",
        help=f"write {records} to OUT (.csv or .parquet); record-level, keep it confidential"
        + (_ENGINE_RECORDS if engines else ""),
    )
    add_overwrite_option(sp)
    if id_option:
        sp.add_argument(
            "--id",
            metavar="COLUMN",
            help="identifier column of the data, written as the first column of --records (join on it)",
        )
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")


class _OldSpelling(argparse.Action):
    """A hidden old spelling of an option: it stores into the new option's destination and
    warns on stderr (kept for one release)."""

    def __init__(self, option_strings, dest, *, new: str, **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        from .._deprecation import REMOVED_IN

        print(
            f"sdckit: warning: {option_string} is now called {self.new}; the old spelling will be removed in "
            f"sdckit {REMOVED_IN}",
            file=sys.stderr,
        )
        setattr(namespace, self.dest, values)


def add_old_spelling(sp, old: str, new: str, **kwargs) -> None:
    """Accept ``old`` (hidden from --help) as a deprecated spelling of the option ``new``
    (``kwargs``: ``choices``, ``type`` as ``new`` has them). The new option must not be
    ``required``: the handler checks that a value came by either spelling."""
    dest = new.lstrip("-").replace("-", "_")
    sp.add_argument(
        old, dest=dest, action=_OldSpelling, new=new, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kwargs
    )


def add_variables_option(sp, help: str) -> None:
    """--variables (comma-separated column names; --vars is its old spelling)."""
    sp.add_argument("--variables", help=help)
    add_old_spelling(sp, "--vars", "--variables")


def add_overwrite_option(sp) -> None:
    """--overwrite, on every command that writes a file: without it an existing output file is
    an error (checked before any work) and nothing is written."""
    sp.add_argument(
        "--overwrite",
        action="store_true",
        help="replace output files that exist (default: an existing output file is an error and nothing is written)",
    )


def add_engine_options(sp) -> None:
    """--engine, --memory-limit, --threads, --spark-master."""
    g = sp.add_argument_group("engine (data larger than memory)")
    g.add_argument(
        "--engine",
        choices=list(ENGINES),
        default=DEFAULT_ENGINE,
        help="where the record-level work runs: polars (in memory, default), duckdb (streams a Parquet/CSV file "
        "under --memory-limit) or spark (local mode or a cluster, --spark-master)",
    )
    g.add_argument("--memory-limit", dest="memory_limit", help="DuckDB's memory limit, e.g. 4GB (--engine duckdb)")
    g.add_argument("--threads", type=int, help="DuckDB's worker threads (--engine duckdb; default one per core)")
    g.add_argument(
        "--spark-master", dest="spark_master", help="Spark master URL, e.g. local[4], spark://host:7077, yarn"
    )


def engine_from_args(args):
    """The engine the options ask for (None: in memory), with errors naming the option."""
    from ..engines import engine_settings, make_engine

    name = getattr(args, "engine", DEFAULT_ENGINE)
    given = {setting: getattr(args, dest, None) for setting, (_, dest) in _OPTIONS.items()}
    for setting, value in given.items():
        if value is not None and setting not in engine_settings(name):
            owner = next(e for e in ENGINES if setting in engine_settings(e))
            raise SdcError(f"{_OPTIONS[setting][0]}: not used by --engine {name}; expected it with --engine {owner}")
    check_records_option(getattr(args, "records", None), name)
    if name == DEFAULT_ENGINE:
        return None
    try:
        return make_engine(name, **{s: given[s] for s in engine_settings(name)})
    except SdcError as exc:
        msg = str(exc)
        for setting, (option, _) in _OPTIONS.items():
            if msg.startswith(setting + ":"):
                raise SdcError(option + msg[len(setting) :]) from None
        raise


#: an engine setting (``sdckit.engines.engine_settings``) -> its option and the option's argparse dest
_OPTIONS = {
    "memory_limit": ("--memory-limit", "memory_limit"),
    "threads": ("--threads", "threads"),
    "master": ("--spark-master", "spark_master"),
}


def check_records_option(path, engine: str) -> None:
    """Fail before any computation when ``--records`` cannot be written: an extension the
    engine does not write (DuckDB and Spark write Parquet; in memory also CSV) or a directory
    that does not exist."""
    if not path:
        return
    from ..engines._relational import check_records_path
    from ..io import RECORD_FORMATS as _WRITABLE

    p = Path(path)
    if engine != DEFAULT_ENGINE:
        check_records_path(p, engine, param="--records")
    elif p.suffix.lower() not in _WRITABLE:
        raise SdcError(f"--records: cannot write {p.name}; expected a .csv, .tsv, .parquet or .pq file")
    elif not p.parent.is_dir():
        raise SdcError(f"--records: the directory {p.parent} does not exist")


def engine_input(args, keys, engine):
    """The data for a measure: the file read in memory, or its path for an out-of-core engine
    (which reads it itself)."""
    if engine is None:
        return read_input(args.data, keys, args.na_values)
    if not Path(args.data).exists():
        raise SdcError(f"data: {args.data} does not exist")
    return str(args.data)


def read_input(path, keys=(), na_values=None, option: str = "--keys"):
    """Read a data file for a command (key columns as text, so labels are never coerced).

    A key that is not in the file is reported against ``option`` (the command's own flag).
    """
    from .._errors import MissingColumnError
    from ..io import read_data

    nav = tuple(na_values.split(",")) if na_values is not None else ("", "NA")
    try:
        return read_data(path, string_columns=list(keys) or None, na_values=nav, lazy=True)
    except MissingColumnError:
        present = read_data(path, na_values=nav, lazy=True).collect_schema().names()
        missing = [k for k in keys if k not in present]
        from .._validation import missing_columns_message

        raise MissingColumnError(missing_columns_message(option, missing, present)) from None


def write_json(path, payload: dict, *, overwrite: bool = False) -> None:
    """Write ``payload`` as JSON, atomically (no half file if interrupted); an existing file
    only with ``overwrite`` (``--overwrite``)."""
    from .._validation import check_new_file
    from ..io import atomic_write

    text = json.dumps(payload, indent=2) + "\n"
    if not Path(path).parent.is_dir():
        raise SdcError(f"--json: cannot write {path}: directory {Path(path).parent} does not exist")
    check_new_file(path, overwrite, "--json", how="--overwrite")
    try:
        atomic_write(path, lambda tmp: Path(tmp).write_text(text), overwrite=overwrite)
    except FileExistsError:
        raise SdcError(f"--json: {path} already exists; expected a new file, or --overwrite to replace it") from None
    except OSError as exc:
        raise SdcError(f"--json: cannot write {path} ({exc.strerror or exc})") from None


def report(args, res, name: str, **sources) -> int:
    """Print ``res.summary()``, write ``{source: path, ..., name: res.to_dict()}`` to ``--json`` and
    ``res.to_frame()`` to ``--records``; the common ending of a command. Returns exit status 0."""
    from ..io import write_records

    print(res.summary())
    if args.json:
        write_json(
            args.json, {**{k: str(v) for k, v in sources.items()}, name: res.to_dict()}, overwrite=args.overwrite
        )
    if args.records:
        write_records(res.to_frame(), args.records, overwrite=args.overwrite)
    return 0


def run_measure(args, name: str, call, *, inputs: dict, doing: str) -> int:
    """The common body of a measure command: read the input files (``inputs``: argument name ->
    path, in the order ``call`` takes them), run ``call(*tables, keys)`` with its warnings
    printed to stderr, and :func:`report` the result under ``name``."""
    keys = key_list(args)
    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    tables = [read_input(path, keys, args.na_values) for path in inputs.values()]
    prog.step(doing)
    res, caught = with_warnings(call, *tables, keys)
    prog.step("writing output")
    prog.close()
    print_warnings(caught)
    return report(args, res, name, **inputs)


def with_warnings(call, *args, **kwargs) -> tuple:
    """``call(*args, **kwargs)`` and the warnings it gave (to print after its progress bar)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = call(*args, **kwargs)
    return res, list(caught)


def print_warnings(caught) -> None:
    """Each warning as one ``sdckit: warning: ...`` line on stderr."""
    for w in caught:
        print(f"sdckit: warning: {w.message}", file=sys.stderr)
