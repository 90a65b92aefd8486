"""``sdckit external``: Mlodak's external risk of a released file given an alternative source."""

from __future__ import annotations

from .._errors import SdcError
from . import (
    Progress,
    add_declared_options,
    add_measure_endings,
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
    from ..risk.linkage import external_risk

    p = sub.add_parser(
        "external",
        help="external risk: pairing an alternative source with the released file",
        description="Mlodak's external risk (Mlodak, Pietrzak & Jozefowski): the share of records of an external "
        "source that can be paired with a released record (nominal and ordinal variables "
        "equal, continuous ones within a relative tolerance), the first-found links and, "
        "with --internal-risk, the combined risk (internal + external) / 2.",
    )
    p.add_argument("released", help="released (protected) data file")
    p.add_argument("external", help="alternative source the intruder may hold")
    add_variables_option(p, "comma-separated variables in both files")
    helps = {
        "scales": "comma-separated NAME=SCALE with SCALE nominal, ordinal or continuous, or the "
        "ordered categories low<mid<high (quote it); default: decimal columns continuous, "
        "others nominal",
        "availability": "comma-separated NAME=P, the probability the intruder has the variable (default 1; 0 "
        "excludes it)",
        "tolerance": "relative tolerance d* of continuous variables (default 0.05)",
        "pair_tol": "largest record distance that still pairs (default 0: every variable matches)",
    }
    add_declared_options(p, external_risk, helps, availability={"type": str})  # NAME=P pairs
    p.add_argument("--id", help="identifier column in both files: report correct links")
    p.add_argument("--reuse", action="store_true", help="first-found linking may take a released record again")
    add_declared_options(p, external_risk, {"internal_risk": "internal risk r_int in [0, 1] for the combined risk"})
    add_measure_endings(p, run, "categorical variables", id_option=False)


def run(args) -> int:
    from ..risk.linkage import external_risk

    names = name_list(args.variables, "--variables")
    raw_scales = parse_pairs(args.scales, "--scales")
    scales, categories = {}, {}
    for v, s in raw_scales.items():
        if "<" in s:
            scales[v] = "ordinal"
            categories[v] = [c.strip() for c in s.split("<")]
        else:
            scales[v] = s
    avail = {}
    for v, s in parse_pairs(args.availability, "--availability").items():
        try:
            avail[v] = float(s)
        except ValueError:
            raise SdcError(f"--availability: {v}={s} is not a number; expected a probability in [0, 1]") from None
    for opt, d in (("--scales", scales), ("--availability", avail)):
        unknown = [v for v in d if v not in names]
        if unknown:
            raise SdcError(f"{opt}: {', '.join(unknown)} not in --variables")
    text = [v for v, s in scales.items() if s == "nominal" or v in categories] + ([args.id] if args.id else [])
    prog = Progress(3, progress_enabled(args))
    prog.step("reading released")
    released = read_input(args.released, text, args.na_values, "--variables")
    prog.step("reading external")
    external = read_input(args.external, text, args.na_values, "--variables")
    prog.step("pairing")
    res = external_risk(
        released,
        external,
        names,
        **declared_values(
            args, external_risk, scales=scales or None, availability=avail or None, one_to_one=not args.reuse
        ),
        categories=categories or None,
        id=args.id,
        missing=role_value(args, "missing") or None,
    )
    prog.close()
    return report(args, res, "external_risk", released=args.released, external=args.external)
