"""Command-line interface: ``sdckit <command> ...``.

Each command lives in a module under ``sdckit.commands`` (listed in ``COMMANDS``); ``protect``
also adds the one-off protection steps. ``sdckit <command> --help`` gives every option. The
commands, in the order ``sdckit --help`` lists them:

``sdckit demo [--report REPORT]``
    The risk assessment of the bundled synthetic survey sample, with its HTML report.
``sdckit assess DATA (--keys a,b,c | --config C) [--protected P] [--recipe R] [--synthetic S] --report OUT``
    Every measure the roles allow, on the original and on protection variants, in one report.
``sdckit freq DATA --keys a,b,c [--weight W] [--alpha A] [--k 2,3,5] [--json OUT] [--records OUT]``
    Key frequencies and k-anonymity. Prints a summary, writes aggregates as JSON and the
    per-record columns (fk, Fk, violates_k) as CSV or Parquet.
``sdckit risk DATA --keys a,b,c [--weight W] [--household H] [--max-global-risk G] [--json OUT] [--records OUT]``
    Individual, global and household re-identification risk and the mu-ARGUS threshold.
``sdckit suda DATA --keys a,b,c [--max-size M] [--dis-fraction D]``
    SUDA scores and DIS-SUDA from the minimal sample uniques.
``sdckit utility ORIGINAL PROTECTED --variables a,b,c [--scales a=ordinal,...] [--json OUT]``
    Information loss of a protected file against its original.
``sdckit linkage ORIGINAL PROTECTED --variables a,b [--method distance|probabilistic|assignment]``
    Record-linkage risk of a protected file against its original.
``sdckit external RELEASED EXTERNAL --variables a,b [--scales ...] [--availability ...]``
    External risk: pairing an alternative source with the released file.
``sdckit interval DATA --variables a,b [--keys k] [--p 0.2] [--c-min 3] [--joint] [--json OUT] [--records OUT]``
    The a-priori relative-interval rule for continuous variables.
``sdckit loglinear DATA --keys a,b,c [--weight W] [--sampling-fraction F] [--model M]``
    Population-uniqueness risk (tau_1, tau_2) from log-linear models.
``sdckit uniques DATA --keys a,b,c [--sampling-fraction F] [--method dankar|pitman|zayatz|snb|all]``
    The estimated number of population uniques.
``sdckit register REGISTER SAMPLE --keys a,b,c [--approach A|B|both]``
    Re-identification risk of the members of a subpopulation register (tau*_1, tau*_2).
``sdckit synthetic ORIGINAL SYNTHETIC [--control C] --keys a,b,c``
    Disclosure risk and utility of a synthetic file against its original.
``sdckit protect DATA (--recipe R | --step NAME:PARAM=VALUE,... ...) --out OUT``
    Apply protection steps and write the protected file, with the before/after table.
``sdckit recode DATA --keys a,b,c --variables v (--mapping M | --breaks B | --hierarchy H) --out OUT``
    Global recoding (category map, intervals or a hierarchy).
``sdckit suppress DATA --keys a,b,c [--k K | --threshold T | --max-global-risk G] --out OUT``
    Local suppression until k-anonymity, or until no individual risk exceeds the threshold.
``sdckit noise DATA --variables a,b [--method M] --out OUT``
    Noise addition to continuous variables.
``sdckit microaggregate DATA --variables a,b [--method M] --out OUT``
    Microaggregation of continuous variables.
``sdckit swap DATA (--geography G | --variables a,b) --out OUT``
    Record swapping of households along a geography, or rank swapping of continuous variables.
``sdckit pram DATA --keys a,b,c --variables v [--pd PD] --out OUT``
    PRAM (post-randomisation) of categorical variables.
``sdckit search DATA --keys a,b,c (--k K | --l L | --t T | --max-risk R | ...) [--out OUT] [--report R]``
    The protection with the least loss that meets a risk target.
``sdckit app [DATA] [--port P] [--folder F]``
    The local web application in the browser (needs the app extra).

Bad input exits with status 2 and a one-line ``sdckit: error: ...`` message.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ._errors import SdcError

__all__ = ["COMMANDS", "build_parser", "command_modules", "main"]

#: command modules under ``sdckit.commands``, in the order ``sdckit --help`` lists them
COMMANDS = [
    "demo",
    "assess",
    "freq",
    "risk",
    "suda",
    "utility",
    "linkage",
    "external",
    "interval",
    "loglinear",
    "uniques",
    "register",
    "synthetic",
    "protect",
    "search",
    "app",
]


def build_parser(commands: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the command line with the commands of the modules ``commands`` (default:
    every module of :data:`COMMANDS`); only those modules are imported."""
    from ._version import __version__

    p = argparse.ArgumentParser(prog="sdckit", description="Statistical disclosure control for microdata.")
    p.add_argument("--version", action="version", version=f"sdckit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if commands is None else commands:
        importlib.import_module(f"sdckit.commands.{name}").register(sub)
    return p


def command_modules(argv: Sequence[str]) -> list[str]:
    """The command modules a command line needs, as argparse reads it from the left: none when
    ``--version`` (or a prefix of it, which argparse accepts) comes first, the module of the
    command named first, and every module when the line shows the list of commands (``--help``,
    no command, an unknown command or option) or names a command one module adds beside its
    own (``recode``, ``suppress``, ... of ``protect``)."""
    first = argv[0] if argv else ""
    if len(first) > 2 and "--version".startswith(first):
        return []
    return [first] if first in COMMANDS else list(COMMANDS)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(command_modules(argv))
    args = parser.parse_args(argv)
    from ._memory import tune_memory

    tune_memory()  # the command line owns its process: keep freed memory for reuse
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        check_output_paths(args)
        return args.func(args)
    except BrokenPipeError:  # output piped into head and the like
        sys.stderr.close()
        return 0
    except (SdcError, OSError) as exc:
        msg = _for_command_line(" ".join(str(exc).split()))  # one line
        print(f"sdckit: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("sdckit: interrupted", file=sys.stderr)
        return 130


#: hints of library messages that name a Python-only argument, as the command line says them
_CLI_HINTS = {
    "drop it or pass allow_degenerate_keys=True": "drop it from --keys (the command line counts only keys "
    "that distinguish records)",
    ' (or zero_weight="drop" to count such records in f_k only)': "",
}


def _for_command_line(msg: str) -> str:
    """A library message with its Python-only hints told in command-line terms."""
    for python, cli in _CLI_HINTS.items():
        msg = msg.replace(python, cli)
    return msg


#: arguments that name input files (a path, or a repeated option's list of paths)
INPUTS: tuple[str, ...] = ("data", "original", "protected", "released", "external", "recipe", "hierarchy", "config")
INPUTS += ("register", "sample", "register_sample")  # sdckit register; sdckit assess --register-sample
INPUTS += ("synthetic", "control")  # sdckit synthetic; sdckit assess --synthetic, --control
#: arguments whose comma-separated items name input files after '=' (--hierarchy KEY=PATH,
#: --step 'recode:variables=V,hierarchy=PATH')
INPUT_ITEMS: tuple[str, ...] = ("hierarchies", "steps")
#: options naming the files a command writes
OUTPUTS = ("json", "records", "out", "save_recipe", "report", "external_report")


def _values(value) -> list[str]:
    return [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]


def _item_paths(text: str) -> list[str]:
    """The values after '=' of the comma-separated items of ``text``."""
    return [item.rsplit("=", 1)[1].strip() for item in text.split(",") if "=" in item and item.rsplit("=", 1)[1]]


def input_files(args) -> list[tuple[str, str]]:
    """Every input file a command line names, as ``(argument, path)``: the arguments of
    :data:`INPUTS` (whether the file exists or not), the paths inside the items of
    :data:`INPUT_ITEMS`, and any other argument (but an output) whose value, or a value after
    '=' in one of its items, names an existing file: a command added without declaring its
    input files still never writes over them."""
    out = []
    for name, value in vars(args).items():
        if name in OUTPUTS or name == "func":
            continue
        for v in _values(value):
            if name in INPUTS:
                out.append((name, v))
                continue
            candidates = ([] if name in INPUT_ITEMS else [v]) + _item_paths(v)
            out += [(name, c) for c in candidates if c and Path(c).is_file()]
        if name == "recipe":  # the hierarchy files a recipe names are inputs too
            from .workflow._files import recipe_file_paths

            out += [(name, c) for v in _values(value) for c in recipe_file_paths(v) if Path(c).is_file()]
    return out


def check_output_paths(args) -> None:
    """No output may be an input file, and no two outputs the same file: the command line never
    writes over the microdata it reads (nor over a recipe, a hierarchy or a scenario file it
    reads), nor one result over another, whatever the flags."""

    def same(a: str, b: str) -> bool:
        pa, pb = Path(a), Path(b)
        if pa.exists() and pb.exists():
            return os.path.samefile(pa, pb)  # hard links and symbolic links too
        return pa.resolve() == pb.resolve()

    from ._validation import check_new_file

    inputs = input_files(args)
    outputs = [(n, getattr(args, n)) for n in OUTPUTS if isinstance(getattr(args, n, None), str)]
    for i, (name, path) in enumerate(outputs):
        for in_name, in_path in inputs:
            if same(path, in_path):
                raise SdcError(
                    f"{_option(name)}: {path} is the input file {in_name}; expected a new file name (sdckit never "
                    "writes over its input)"
                )
        for other, other_path in outputs[:i]:
            if same(path, other_path):
                raise SdcError(
                    f"{_option(name)}: {path} is also the {_option(other)} file; expected a different file for each "
                    "output"
                )
    for name, path in outputs:  # then: a folder to write into, and an existing file only with --overwrite
        if name == "records":  # its extension by the engine, then its folder
            from .commands import check_records_option
            from .engines import DEFAULT_ENGINE

            check_records_option(path, getattr(args, "engine", DEFAULT_ENGINE))
        _check_folder(path, _option(name))
        if name == "out":
            _check_data_extension(path)
        check_new_file(path, bool(getattr(args, "overwrite", False)), _option(name), how="--overwrite")


def _check_folder(path: str, option: str) -> None:
    """The folder of an output exists: checked before any work, so that a command never writes
    one output and then fails on the next."""
    from pathlib import Path

    folder = Path(path).parent
    if not folder.is_dir():
        what = "is not a directory" if folder.exists() or any(p.is_file() for p in folder.parents) else "does not exist"
        raise SdcError(f"{option}: directory {folder} {what}; expected an existing directory to write {path} in")


def _check_data_extension(path: str) -> None:
    """--out names a data file sdckit writes (checked before any work)."""
    from pathlib import Path

    from .io import DATA_FORMATS

    ext = Path(path).suffix.lower()
    if ext not in DATA_FORMATS:
        raise SdcError(f"--out: cannot write {path}: unsupported extension {ext or '(none)'!r}; expected one of "
                       f"{', '.join(DATA_FORMATS)}")  # fmt: skip


def _option(dest: str) -> str:
    """The option as typed: ``save_recipe`` -> ``--save-recipe``."""
    return "--" + dest.replace("_", "-")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
