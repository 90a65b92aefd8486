"""``sdckit assess``: every measure that applies to the declared roles, in one self-contained
HTML report (and JSON)."""

from __future__ import annotations

from pathlib import Path

from .._errors import SdcError
from .._roles import names
from . import add_old_spelling, add_overwrite_option, add_role_option, progress_enabled, role_value, write_json

#: the command's words after the roles table's help of a role's option
_MORE_HELP = {
    "sensitive": "(l-diversity)",
    "missing": "(in the key variables)",
    "domains": "(categorical variables whose categories are the domains; default: the keys with at most 12 categories)",
    "scales": "(e.g. age=numeric,hsize=numeric; default: text and integer-coded keys nominal, numeric keys numeric)",
}


def register(sub) -> None:
    a = sub.add_parser(
        "assess",
        help="one-command assessment: risk, protection variants and loss in one HTML report",
        description="Run every measure that applies to the declared roles (k-anonymity, individual and household "
        "risk with the threshold, SUDA, l-diversity, log-linear risk, continuous-key risk, information loss of "
        "protection variants) and write one self-contained HTML report that needs no network.",
    )
    a.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    for name in names(reported=True):  # an option per reported role
        add_role_option(a, name, _MORE_HELP.get(name, ""))
        if name == "numeric_keys":
            add_old_spelling(a, "--numeric", "--numeric-keys")
    a.add_argument("--config", help="a scenario file (YAML or JSON) with the same roles; options given here win")
    a.add_argument("--protected", help="a protected version of the data (same rows and columns) to compare")
    a.add_argument("--recipe", action="append", default=[], help="a protection recipe to compare (repeatable)")
    a.add_argument(
        "--synthetic",
        action="append",
        default=[],
        help="a synthetic file made from the data, compared as a variant (repeatable; any number of records)",
    )
    a.add_argument(
        "--control",
        help="original records not used to make the synthetic files: the baseline of their closeness and attacks",
    )
    a.add_argument(
        "--register-sample",
        dest="register_sample",
        help="the data are a register of a subpopulation: a sample of the whole population with the same keys "
        "(adds the register section)",
    )
    a.add_argument("--register-sample-weight", dest="register_sample_weight", help="the register sample's weight")
    a.add_argument(
        "--register-sampling-fraction",
        dest="register_sampling_fraction",
        type=float,
        help="the register sample's known sampling fraction (instead of a weight)",
    )
    a.add_argument("--max-global-risk", dest="max_global_risk", type=float, default=0.01, help="target (0.01)")
    a.add_argument(
        "--include-records",
        dest="include_records",
        action="store_true",
        help="show key values of the riskiest cells (record-level: keep the report confidential)",
    )
    a.add_argument("--report", required=True, help="the HTML report to write (internal: every measure)")
    a.add_argument(
        "--external-report",
        dest="external_report",
        help="also write the report for data users: what was done and how it moves their estimates, no risk figures",
    )
    a.add_argument("--json", metavar="OUT", help="write the aggregate results as JSON to OUT")
    add_overwrite_option(a)
    a.add_argument("--na-values", dest="na_values", help="strings read as missing from text files")
    g = a.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")
    a.set_defaults(func=run)


def scenario_from(args):
    """The scenario from --config (YAML or JSON) with the command's role options on top; a
    config with ``scenarios`` gives several (the options apply to each)."""
    from ..scenario import Scenario, scenarios_from_dict
    from ..workflow.problem import read_recipe_file

    content = read_recipe_file(args.config, "--config") if args.config else {}
    if not isinstance(content, dict):
        raise SdcError("--config: expected a mapping of roles (or of scenarios) in the file")
    given = {name: role_value(args, name) for name in names(reported=True)}  # an option per reported role
    given = {k: v for k, v in given.items() if v}
    allowed = set(Scenario.__dataclass_fields__) | {"scenarios"}
    unknown = sorted(set(content) - allowed)
    if unknown:
        raise SdcError(f"--config: unknown role(s) {', '.join(unknown)}; expected {', '.join(sorted(allowed))}")
    try:
        if "scenarios" in content:
            items = content["scenarios"] if isinstance(content["scenarios"], list) else []
            content = {**content, "scenarios": [{**i, **given} if isinstance(i, dict) else i for i in items]}
            scenarios = scenarios_from_dict(content)
        else:
            scenarios = scenarios_from_dict({**content, **given})
    except SdcError as exc:
        raise SdcError(f"--config: {exc}") from None
    for sc in scenarios:
        if not sc.keys and not sc.numeric_keys:
            where = f" (scenario {sc.name!r})" if len(scenarios) > 1 else ""
            raise SdcError(
                f"--keys: no key variables{where}; expected --keys and/or --numeric (or a --config with keys)"
            )
    return scenarios[0] if len(scenarios) == 1 else list(scenarios)


def run(args) -> int:
    from ..io import read_data
    from ..workflow import assess

    nav = tuple(args.na_values.split(",")) if args.na_values is not None else ("", "NA")
    scenario = scenario_from(args)
    data = read_data(args.data, na_values=nav)
    protected = read_data(args.protected, na_values=nav) if args.protected else None
    synthetic = {Path(f).name: read_data(f, na_values=nav) for f in args.synthetic} or None
    control = read_data(args.control, na_values=nav) if args.control else None
    reference = read_data(args.register_sample, na_values=nav) if args.register_sample else None
    result = assess(
        data,
        scenario,
        protected=protected,
        recipes=list(args.recipe) or None,
        synthetic=synthetic,
        control=control,
        max_global_risk=args.max_global_risk,
        include_records=args.include_records,
        progress=progress_enabled(args),
        register_sample=reference,
        register_sample_weight=args.register_sample_weight,
        register_sampling_fraction=args.register_sampling_fraction,
    )
    result.to_html(args.report, overwrite=args.overwrite)
    if args.external_report:
        result.to_html(args.external_report, audience="external", overwrite=args.overwrite)
    print(result.summary())
    print(f"\nReport written to {args.report}")
    if args.external_report:
        print(f"Report for data users written to {args.external_report}")
    if args.json:
        write_json(args.json, {"data": str(args.data), "assessment": result.to_dict()}, overwrite=args.overwrite)
    return 0
