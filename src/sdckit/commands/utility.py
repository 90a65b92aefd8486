"""``sdckit utility``: information loss of a protected file against its original."""

from __future__ import annotations

import argparse
import warnings

from .._errors import SdcError, SdcWarning
from . import (
    Progress,
    add_declared_options,
    add_missing_options,
    add_output_options,
    add_variables_option,
    declared_values,
    name_list,
    parse_pairs,
    progress_enabled,
    read_input,
    report,
    role_value,
)


def register(sub) -> None:
    from ..utility.information_loss import information_loss

    u = sub.add_parser(
        "utility",
        help="information loss of a protected file against its original",
        description="Information loss: Mlodak's lambda and lambda_j, IL1 / IL1s, eigenvalue losses, the "
        "Domingo-Ferrer discrepancy table, gamma, contingency-table loss and the ANOVA R^2 loss. Rows "
        "of the two files are paired by position.",
    )
    u.add_argument("original", help="original data file (.csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt)")
    u.add_argument("protected", help="protected data file, same records in the same order")
    add_variables_option(u, "comma-separated variables to compare")
    helps = {
        "scales": "scales, comma-separated NAME=SCALE with SCALE nominal, ordinal or continuous, "
        "or the ordered categories low<mid<high (quote it); a bare scale name applies to "
        "every variable; text columns are nominal and decimal columns continuous unless "
        "declared, integer columns must be declared",
        "suppressed": "distance when one of the two values is missing (default mlodak)",
        "continuous_distance": "distance of a continuous variable: arctan_sd (default, (2/pi) arctan(|x - x'| / S), "
        "unit-free), arctan (sdcMicro's IL_variables, raw differences), max_abs or max_squared",
        "ctbil_dim": "largest table dimension of the contingency-table loss (default 2; 0 skips it)",
        "bound": "Trottini's cap on each mean-variation cell (default 1)",
        "robust": "also compute the robust (MCD) eigenvalue loss (the costliest measure; off by default)",
    }
    add_declared_options(u, information_loss, helps)
    u.add_argument("--no-robust", dest="robust", action="store_false", help=argparse.SUPPRESS)  # the default now
    add_declared_options(
        u,
        information_loss,
        {"new_categories": "protected categories that the original lacks: error (default) or allow"},
    )
    add_missing_options(u, "variables")
    add_output_options(u, records="the per-record distances")
    u.set_defaults(func=run)


def parse_scales(text: str | None):
    """``"a=ordinal,b=low<mid<high,c=continuous"`` -> ``{"a": "ordinal", "b": ["low", "mid", "high"], ...}``;
    a bare scale name (``"continuous"``) applies to every variable."""
    out: dict = {}
    bare = (text or "").strip().lower()
    if bare in ("nominal", "ordinal", "continuous", "numeric"):
        return bare
    for name, value in parse_pairs(text, "--scales").items():
        out[name] = [c.strip() for c in value.split("<")] if "<" in value else value
    return out


def run(args) -> int:
    from ..utility import information_loss

    names = name_list(args.variables, "--variables")
    scales = parse_scales(args.scales)
    if isinstance(scales, str):
        scales = {v: scales for v in names}
    unknown = [v for v in scales if v not in names]
    if unknown:
        raise SdcError(
            f"--scales: {', '.join(unknown)} not in --variables; declare scales for the compared variables only"
        )
    # categorical variables are read as text, so "01" and "1" stay different labels
    text = [v for v, s in scales.items() if isinstance(s, list) or s in ("nominal", "categorical")]
    prog = Progress(4, progress_enabled(args))
    prog.step("reading original")
    original = read_input(args.original, text, args.na_values, "--scales")
    prog.step("reading protected")
    protected = read_input(args.protected, text, args.na_values, "--scales")
    prog.step("information loss")
    missing = role_value(args, "missing") or None
    if missing:
        missing = [_number(m) for m in missing]
    with warnings.catch_warnings():  # the summary prints the same messages as notes
        warnings.simplefilter("ignore", SdcWarning)
        res = information_loss(
            original,
            protected,
            names,
            **declared_values(args, information_loss, scales=scales or None),
            missing=missing,
            records=bool(args.records),
            id=args.id,
        )
    prog.step("writing output")
    prog.close()
    return report(args, res, "information_loss", original=args.original, protected=args.protected)


def _number(text: str):
    """A missing code from the command line: a number when it reads as one, else the text."""
    try:
        f = float(text)
    except ValueError:
        return text
    return int(f) if f.is_integer() and "." not in text else f
