"""``sdckit protect`` (replay a recipe) and the one-off steps ``sdckit recode``, ``sdckit suppress``
and ``sdckit pram``: each writes the protected file and prints the before/after table."""

from __future__ import annotations

from .._errors import SdcError
from . import (
    Progress,
    add_missing_options,
    add_old_spelling,
    add_overwrite_option,
    name_list,
    parse_pairs,
    progress_enabled,
    split_list,
    write_json,
)


def register(sub) -> None:
    p = sub.add_parser(
        "protect",
        help="apply a protection recipe and write the protected file",
        description="Replay the steps of a recipe (YAML or JSON, as SdcProblem.to_recipe writes it) on a data "
        "file, print the before/after table of risk and loss, and write the protected file.",
    )
    p.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    p.add_argument("--recipe", required=True, help="the recipe: .yaml, .yml or .json")
    _add_common(p, roles=False)
    p.set_defaults(func=run_protect)

    r = _step_parser(sub, "recode", "global recoding of one variable (category map, intervals or a hierarchy)")
    r.add_argument("--variables", help="the variables to recode, comma-separated")
    add_old_spelling(r, "--variable", "--variables")
    g = r.add_mutually_exclusive_group(required=True)
    g.add_argument("--mapping", help="category map OLD=NEW, comma-separated (every category once)")
    add_old_spelling(g, "--map", "--mapping")
    g.add_argument("--breaks", help="interval breaks, comma-separated (sorted), or one number of intervals")
    g.add_argument("--hierarchy", help="a hierarchy table (CSV: first column the categories, then coarser levels)")
    r.add_argument(
        "--method",
        default="equidistant",
        choices=["equidistant", "log_equidistant", "equal_amount"],
        help="how a number of intervals is cut (default equidistant)",
    )
    r.add_argument("--level", type=int, help="the hierarchy level to recode to (1 = first coarser column)")
    r.set_defaults(func=run_recode)

    s = _step_parser(
        sub,
        "suppress",
        "local suppression of key values until every record is k-anonymous (or, with --threshold or "
        "--max-global-risk, until no individual risk exceeds the threshold)",
    )
    s.add_argument("--k", type=int, default=2, help="k of k-anonymity (default 2)")
    s.add_argument("--threshold", type=float, help="risk-threshold suppression: the largest individual risk allowed")
    s.add_argument(
        "--max-global-risk",
        dest="max_global_risk",
        type=float,
        help="risk-threshold suppression with the threshold that meets this global risk (e.g. 0.01)",
    )
    s.add_argument(
        "--method",
        choices=["greedy", "sdcmicro"],
        help="k-anonymity algorithm (default greedy; sdcmicro = sdcMicro's kAnon cells)",
    )
    s.add_argument("--importance", help="key variables from the most to the least important, comma-separated")
    s.add_argument("--alpha", type=float, default=1.0, help="weight of matches through missing values (default 1)")
    s.set_defaults(func=run_suppress)

    _register_continuous(sub)

    m = _step_parser(sub, "pram", "PRAM (post-randomisation) of categorical variables, invariant matrices")
    m.add_argument("--variables", required=True, help="the variables to randomise, comma-separated")
    m.add_argument("--pd", type=float, default=0.8, help="smallest diagonal of the base matrix (default 0.8)")
    m.add_argument("--strength", type=float, default=0.5, help="weight of the invariant matrix (default 0.5)")
    m.add_argument("--seed", type=int, help="random seed (recorded in --save-recipe; default: a fresh seed)")
    m.set_defaults(func=run_pram)


def _step_parser(sub, name: str, text: str, keys_required: bool = True):
    sp = sub.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}; writes the protected file.")
    sp.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    sp.add_argument(
        "--keys", required=keys_required, help="comma-separated categorical key variables (measured before/after)"
    )
    _add_common(sp, roles=True)
    return sp


def _register_continuous(sub) -> None:
    n = _step_parser(sub, "noise", "noise addition to continuous variables", keys_required=False)
    n.add_argument("--variables", required=True, help="the continuous variables, comma-separated")
    n.add_argument(
        "--method",
        default="additive",
        choices=["additive", "additive0", "correlated", "correlated2", "restr", "ROMM", "outdect"],
        help="the kind of noise (default additive)",
    )
    n.add_argument("--noise", type=float, default=150, help="noise level in %% of the sd (default 150)")
    n.add_argument("--delta", type=float, default=0.1, help="correlated2: the mixing weight (default 0.1)")
    n.add_argument("--seed", type=int, help="random seed (recorded in --save-recipe; default: a fresh seed)")
    n.set_defaults(func=run_noise)

    m = _step_parser(sub, "microaggregate", "microaggregation of continuous variables", keys_required=False)
    m.add_argument("--variables", required=True, help="the continuous variables, comma-separated")
    m.add_argument(
        "--method",
        default="mdav",
        choices=["mdav", "mdav_blocked", "onedims", "single", "simple", "pca", "rmd"],
        help="grouping method (default mdav)",
    )
    m.add_argument("--group-size", dest="group_size", type=int, default=3, help="records per group (default 3)")
    m.add_argument("--statistic", default="mean", choices=["mean", "median"], help="group value (default mean)")
    m.add_argument("--sort-by", dest="sort_by", help="method single: the variable to sort on")
    m.set_defaults(func=run_microaggregate)

    w = _step_parser(
        sub,
        "swap",
        "record swapping of households along a geography (--geography), or rank swapping of continuous "
        "variables (--variables)",
        keys_required=False,
    )
    w.add_argument("--geography", help="record swapping: geography columns, coarsest first, comma-separated")
    w.add_argument("--similar", help="record swapping: variables a donor household must match, comma-separated")
    w.add_argument("--k", type=int, default=3, help="record swapping: households risky below this k (default 3)")
    w.add_argument("--swap-rate", dest="swap_rate", type=float, default=0.05, help="share of households swapped")
    w.add_argument("--carry-along", dest="carry_along", help="variables moving with the geography, comma-separated")
    w.add_argument("--variables", help="rank swapping: the continuous variables, comma-separated")
    w.add_argument("--swap-range", dest="swap_range", type=float, help="rank swapping: largest rank distance in %%")
    w.add_argument("--top-percent", dest="top_percent", type=float, default=5, help="rank swapping: top %% pooled")
    w.add_argument(
        "--bottom-percent", dest="bottom_percent", type=float, default=5, help="rank swapping: bottom %% pooled"
    )
    w.add_argument("--seed", type=int, help="random seed (recorded in --save-recipe; default: a fresh seed)")
    w.set_defaults(func=run_swap)


def _add_common(sp, roles: bool) -> None:
    if roles:
        sp.add_argument("--weight", help="sampling weight column")
        sp.add_argument("--household", help="household identifier column")
        sp.add_argument("--strata", help="stratification columns, comma-separated")
        add_missing_options(sp)
    else:
        sp.add_argument("--na-values", dest="na_values", help="strings read as missing from text files")
    sp.add_argument("--out", required=True, help="the protected file to write (.csv, .parquet, .sav, .dta)")
    sp.add_argument("--save-recipe", dest="save_recipe", help="also write the steps as a recipe (.yaml or .json)")
    sp.add_argument("--json", metavar="OUT", help="write the before/after measures as JSON to OUT")
    add_overwrite_option(sp)
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")


def _read(args):
    from ..io import read_data

    nav = tuple(args.na_values.split(",")) if args.na_values is not None else ("", "NA")
    return read_data(args.data, na_values=nav)


def _scenario(args, numeric_keys=None):
    from ..scenario import Scenario

    return Scenario(
        keys=split_list(args.keys) if args.keys else None,
        numeric_keys=numeric_keys,
        weight=args.weight,
        household=args.household,
        strata=split_list(args.strata) or None,
        missing=split_list(args.missing) or None,
    )


def _finish(args, problem, prog) -> int:
    from ..io import read_metadata

    prog.step("writing the protected file")
    meta = read_metadata(args.data) if str(args.data).lower().endswith((".sav", ".zsav", ".dta")) else None
    problem.write(args.out, metadata=meta, overwrite=args.overwrite)
    if args.save_recipe:
        problem.to_recipe(args.save_recipe, overwrite=args.overwrite)
    prog.close()
    print(problem.summary())
    print(f"\nProtected file written to {args.out}")
    if args.json:
        payload = {
            "data": str(args.data),
            "protected": str(args.out),
            "recipe": problem.to_recipe(),
            "original": problem.baseline,
            "steps": [{"method": s.method, "log": s.result.to_dict(), "measures": s.measures} for s in problem.history],
        }
        write_json(args.json, payload, overwrite=args.overwrite)
    return 0


def run_protect(args) -> int:
    from ..problem import SdcProblem

    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    data = _read(args)
    prog.step("applying the recipe")
    problem = SdcProblem.from_recipe(data, args.recipe)
    return _finish(args, problem, prog)


def _run_step(args, step: str, /, numeric_keys=None, **parameters) -> int:
    from ..problem import SdcProblem

    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    data = _read(args)
    prog.step(f"applying {step}")
    problem = SdcProblem(data, _scenario(args, numeric_keys)).apply(step, **parameters)
    return _finish(args, problem, prog)


def run_recode(args) -> int:
    params: dict = {"variables": name_list(args.variables, "--variables"), "method": args.method}
    if args.mapping:
        params["mapping"] = _typed_map(args, params["variables"], parse_pairs(args.mapping, "--mapping"))
    elif args.breaks:
        parts = split_list(args.breaks)
        try:
            nums = [float(x) for x in parts]
        except ValueError:
            raise SdcError("--breaks: expected numbers, comma-separated, or one number of intervals") from None
        params["breaks"] = int(nums[0]) if len(nums) == 1 and nums[0].is_integer() else nums
    else:
        if args.level is None:
            raise SdcError("--level: required with --hierarchy; expected the level to recode to (1, 2, ...)")
        params["hierarchy"] = args.hierarchy
        params["level"] = args.level
    return _run_step(args, "global_recode", **params)


def _typed_map(args, variables: list[str], pairs: dict[str, str]) -> dict:
    """The --mapping pairs with numbers as numbers when the variables are numeric (so that a
    recoded integer code stays an integer)."""
    from ..io import read_data

    schema = read_data(args.data, lazy=True).collect_schema()
    if not all(v in schema and schema[v].is_numeric() for v in variables):
        return pairs

    def number(text: str):
        try:
            x = float(text)
        except ValueError:
            return text
        return int(x) if x.is_integer() else x

    return {number(k): number(v) for k, v in pairs.items()}


def run_suppress(args) -> int:
    params: dict = {"alpha": args.alpha}
    if args.importance:
        params["importance"] = name_list(args.importance, "--importance", "key variables")
    if args.threshold is not None or args.max_global_risk is not None:
        if args.method is not None:
            raise SdcError("--method: applies to k-anonymity suppression; not with --threshold or --max-global-risk")
        if args.threshold is not None:
            params["threshold"] = args.threshold
        if args.max_global_risk is not None:
            params["max_global_risk"] = args.max_global_risk
        return _run_step(args, "suppress_by_risk", **params)
    params.update(k=args.k, method=args.method or "greedy")
    return _run_step(args, "local_suppression", **params)


def run_pram(args) -> int:
    params: dict = {"variables": name_list(args.variables, "--variables"), "pd": args.pd, "strength": args.strength}
    if args.seed is not None:
        params["seed"] = args.seed
    return _run_step(args, "pram", **params)


def _seeded(args, params: dict) -> dict:
    if args.seed is not None:
        params["seed"] = args.seed
    return params


def run_noise(args) -> int:
    variables = name_list(args.variables, "--variables")
    params = {"variables": variables, "method": args.method, "noise": args.noise}
    if args.method == "correlated2":
        params["delta"] = args.delta
    return _run_step(args, "add_noise", numeric_keys=variables, **_seeded(args, params))


def run_microaggregate(args) -> int:
    variables = name_list(args.variables, "--variables")
    params = {"variables": variables, "method": args.method, "group_size": args.group_size}
    params["statistic"] = args.statistic
    if args.sort_by:
        params["sort_by"] = args.sort_by
    return _run_step(args, "microaggregation", numeric_keys=variables, **params)


def run_swap(args) -> int:
    if bool(args.geography) == bool(args.variables):
        raise SdcError("swap: give --geography (record swapping) or --variables (rank swapping), one of them")
    if args.variables:
        variables = name_list(args.variables, "--variables")
        params: dict = {"variables": variables, "top_percent": args.top_percent, "bottom_percent": args.bottom_percent}
        if args.swap_range is not None:
            params["swap_range"] = args.swap_range
        return _run_step(args, "rank_swap", numeric_keys=variables, **_seeded(args, params))
    if not args.household:
        raise SdcError("--household: record swapping needs the household identifier column")
    params = {"geography": name_list(args.geography, "--geography"), "k": args.k, "swap_rate": args.swap_rate}
    if args.similar:
        params["similar"] = [name_list(args.similar, "--similar")]
    if args.carry_along:
        params["carry_along"] = name_list(args.carry_along, "--carry-along")
    return _run_step(args, "record_swap", **_seeded(args, params))
