"""``sdckit interval``: the a-priori relative-interval rule for continuous variables."""

from __future__ import annotations

from . import (
    Progress,
    add_declared_options,
    add_measure_endings,
    add_variables_option,
    declared_values,
    name_list,
    progress_enabled,
    read_input,
    report,
    role_value,
)


def register(sub) -> None:
    from ..risk.continuous import relative_interval_risk

    f = sub.add_parser(
        "interval",
        help="relative-interval rule for continuous variables (a priori)",
        description="Values with fewer than --c-min records within p times their absolute "
        "value are unsafe (a relative interval around each value; no protected file needed).",
    )
    f.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    add_variables_option(f, "comma-separated numeric variables")
    helps = {
        "keys": "(records are counted only within the same combination of these keys)",
        "p": "relative half-width of the interval, in (0, 1) (default 0.2)",
        "c_min": "a value is unsafe with fewer records in its interval (default 3)",
        "joint": "also count records inside all intervals at once",
    }
    add_declared_options(f, relative_interval_risk, helps)
    add_measure_endings(f, run, records="per-record counts and unsafe flags")


def run(args) -> int:
    from ..risk.continuous import relative_interval_risk

    names = name_list(args.variables, "--variables")
    keys = role_value(args, "keys") or []
    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    data = read_input(args.data, keys, args.na_values)
    prog.step("counting records in the intervals")
    res = relative_interval_risk(
        data,
        names,
        **declared_values(args, relative_interval_risk, keys=keys or None),
        missing=role_value(args, "missing") or None,
        id=args.id,
    )
    prog.step("writing output")
    prog.close()
    return report(args, res, "relative_interval", data=args.data)
