"""``sdckit linkage``: record-linkage risk of a protected file against its original."""

from __future__ import annotations

import argparse
import sys

from .._errors import SdcError
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
    split_list,
)


def register(sub) -> None:
    from .._declare import declaration
    from ..risk.linkage import record_linkage_risk

    p = sub.add_parser(
        "linkage",
        help="record-linkage risk of a protected file against its original",
        description="Links every protected record back to the original file by distance (nearest and "
        "second-nearest original), by Fellegi-Sunter probabilistic linkage or by one-to-one "
        "assignment, and reports the share linked to the true partner. Rows of the two files "
        "are paired by position.",
    )
    p.add_argument("original", help="original data file (.csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt)")
    p.add_argument("protected", help="protected data file, same records in the same order")
    add_variables_option(p, "comma-separated variables to link on")
    helps = {
        "method": "linkage model (default distance)",
        "standardize": "standardisation for distances (default original: the original's mean and sd for both files)",
    }
    # --standardize: no default here, so that the handler tells it from the old spelling --scale
    add_declared_options(p, record_linkage_risk, helps, standardize={"default": None})
    standardize = list(declaration(record_linkage_risk).param("standardize").choices)  # type: ignore[union-attr]
    p.add_argument("--scale", dest="scale_old", choices=standardize, help=argparse.SUPPRESS)
    helps = {
        "metric": None,
        "second_weight": "weight of second-nearest links in the DLD score (default 1)",
        "categorical": "probabilistic: comma-separated variables compared as categories",
        "bins": "probabilistic: quantile bins of numeric variables (default 10)",
        "comparison_levels": "probabilistic: comparison levels of every numeric variable, one tolerance (equal, "
        "within it, disagree) or comma-separated cut points on the absolute difference (default: agree/disagree "
        "by bin)",
    }
    add_declared_options(p, record_linkage_risk, helps, bins={"type": int})  # the command takes a number
    add_measure_endings(p, run, "categorical variables")


def _levels(text):
    """``--comparison-levels``: one number or comma-separated numbers (None when not given)."""
    if text is None:
        return None
    items = split_list(text)
    try:
        values = [float(v) for v in items]
    except ValueError:
        raise SdcError(
            f"--comparison-levels: got {text!r}; expected a number or comma-separated numbers (cut points)"
        ) from None
    return values[0] if len(values) == 1 else values


def run(args) -> int:
    from ..risk.linkage import record_linkage_risk

    names = name_list(args.variables, "--variables")
    standardize = args.standardize or args.scale_old or "original"
    if args.scale_old:
        print(
            "sdckit: warning: --scale is now called --standardize; the old form will be removed in sdckit 0.3",
            file=sys.stderr,
        )
    cat = split_list(args.categorical)
    prog = Progress(3, progress_enabled(args))
    prog.step("reading original")
    original = read_input(args.original, cat, args.na_values, "--categorical")
    prog.step("reading protected")
    protected = read_input(args.protected, cat, args.na_values, "--categorical")
    prog.step("linking")
    res = record_linkage_risk(
        original,
        protected,
        names,
        **declared_values(
            args,
            record_linkage_risk,
            standardize=standardize,
            categorical=cat or None,
            comparison_levels=_levels(args.comparison_levels),
        ),
        missing=role_value(args, "missing") or None,
        id=args.id,
    )
    prog.close()
    return report(args, res, "linkage", original=args.original, protected=args.protected)
