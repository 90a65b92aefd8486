"""``sdckit protect`` (a recipe, or ``--step`` after ``--step``) and the one-off steps ``sdckit recode``, ``sdckit suppress``
and ``sdckit pram``: each writes the protected file and prints the before/after table."""

from __future__ import annotations

import argparse

from .._declare import Param
from .._errors import SdcError
from . import (
    Progress,
    add_missing_options,
    add_old_spelling,
    add_overwrite_option,
    add_role_option,
    name_list,
    parse_pairs,
    progress_enabled,
    role_value,
    split_list,
    write_json,
)


def register(sub) -> None:
    p = sub.add_parser(
        "protect",
        help="apply protection steps (a recipe, or --step after --step) and write the protected file",
        description="Apply protection steps to a data file, print the before/after table of risk and loss "
        "(every step measured against the original), and write the protected file. The steps are a recipe "
        "(YAML or JSON, as SdcProblem.to_recipe or --save-recipe writes it) or one or more --step options, "
        "applied in order.",
        epilog="A step is NAME:PARAM=VALUE,PARAM=VALUE. NAME is a protection method (global_recode, "
        "local_suppression, ...) or a short name (recode, suppress, noise, microaggregate, pram, swap, ...; "
        "suppress with threshold= is risk-based suppression, swap with geography= record swapping). "
        "Parameters are the method's own (see docs/parameters.md); a list is written with ';' between its "
        "items and a mapping as OLD=NEW;OLD=NEW (quote the step in the shell). Example: "
        "--step 'recode:variables=age,breaks=0;20;40;60;100' --step suppress:k=3",
    )
    p.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--recipe", help="the recipe: .yaml, .yml or .json")
    source.add_argument(
        "--step",
        action="append",
        dest="steps",
        metavar="NAME:PARAM=VALUE,...",
        help="one protection step (repeat for several, applied in order); see below",
    )
    add_role_option(p, "keys", "(with --step; default: the keys the steps name)")
    _add_common(p)
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
        "--method", **_spec("global_recode", "method"), help="how a number of intervals is cut (default %(default)s)"
    )
    r.add_argument(
        "--level", **_spec("global_recode", "level"), help="the hierarchy level to recode to (1 = first coarser column)"
    )
    r.set_defaults(func=run_recode)

    s = _step_parser(
        sub,
        "suppress",
        "local suppression of key values until every record is k-anonymous (or, with --threshold or "
        "--max-global-risk, until no individual risk exceeds the threshold)",
    )
    s.add_argument(
        "--k",
        type=_option_type(Param("k", "int")),
        default=_spec("local_suppression", "k")["default"],
        help="k of k-anonymity (default %(default)s)",
    )
    s.add_argument(
        "--threshold",
        **_spec("suppress_by_risk", "threshold"),
        help="risk-threshold suppression: the largest individual risk allowed",
    )
    s.add_argument(
        "--max-global-risk",
        dest="max_global_risk",
        **_spec("suppress_by_risk", "max_global_risk"),
        help="risk-threshold suppression with the threshold that meets this global risk (e.g. 0.01)",
    )
    s.add_argument(
        "--method",
        choices=_spec("local_suppression", "method")["choices"],
        help="k-anonymity algorithm (default greedy; sdcmicro = sdcMicro's kAnon cells)",
    )
    s.add_argument("--importance", help="key variables from the most to the least important, comma-separated")
    s.add_argument(
        "--alpha",
        **_spec("local_suppression", "alpha"),
        help="weight of matches through missing values (default %(default)s)",
    )
    s.set_defaults(func=run_suppress)

    _register_continuous(sub)

    m = _step_parser(sub, "pram", "PRAM (post-randomisation) of categorical variables, invariant matrices")
    m.add_argument("--variables", required=True, help="the variables to randomise, comma-separated")
    m.add_argument("--pd", **_spec("pram", "pd"), help="smallest diagonal of the base matrix (default %(default)s)")
    m.add_argument(
        "--strength", **_spec("pram", "strength"), help="weight of the invariant matrix (default %(default)s)"
    )
    m.add_argument(
        "--seed", **_spec("pram", "seed"), help="random seed (recorded in --save-recipe; default: a fresh seed)"
    )
    m.set_defaults(func=run_pram)


def _spec(method: str, param: str) -> dict:
    """The argparse type, default and choices of an option, from the method's declaration."""
    from .. import protect
    from .._declare import REQUIRED, declaration

    p = declaration(getattr(protect, method)).param(param)  # type: ignore[union-attr]
    out: dict = {}
    if p.type in ("int", "seed", "number"):
        out["type"] = _option_type(p)
    if p.default not in (None, REQUIRED):
        out["default"] = p.default
    if p.choices:
        out["choices"] = list(p.choices)
    return out


def _option_type(p):
    """An argparse ``type`` that reads the option as the declaration does and checks it by the
    name's one rule (``--k 2.5``: the toolkit's message, not argparse's "invalid int value")."""

    def convert(text: str):
        try:
            return p.check(p.parse(text))
        except SdcError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    convert.__name__ = "an integer" if p.type in ("int", "seed") else "a number"
    return convert


def _step_parser(sub, name: str, text: str, keys_required: bool = True):
    sp = sub.add_parser(name, help=text, description=f"{text[0].upper()}{text[1:]}; writes the protected file.")
    sp.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    add_role_option(sp, "keys", "(measured before/after)", required=keys_required)
    _add_common(sp)
    return sp


def _register_continuous(sub) -> None:
    n = _step_parser(sub, "noise", "noise addition to continuous variables", keys_required=False)
    n.add_argument("--variables", required=True, help="the continuous variables, comma-separated")
    n.add_argument("--method", **_spec("add_noise", "method"), help="the kind of noise (default %(default)s)")
    n.add_argument("--noise", **_spec("add_noise", "noise"), help="noise level in %% of the sd (default %(default)s)")
    n.add_argument(
        "--delta", **_spec("add_noise", "delta"), help="correlated2: the mixing weight (default %(default)s)"
    )
    n.add_argument(
        "--seed", **_spec("add_noise", "seed"), help="random seed (recorded in --save-recipe; default: a fresh seed)"
    )
    n.set_defaults(func=run_noise)

    m = _step_parser(sub, "microaggregate", "microaggregation of continuous variables", keys_required=False)
    m.add_argument("--variables", required=True, help="the continuous variables, comma-separated")
    m.add_argument("--method", **_spec("microaggregation", "method"), help="grouping method (default %(default)s)")
    m.add_argument(
        "--group-size",
        dest="group_size",
        **_spec("microaggregation", "group_size"),
        help="records per group (default %(default)s)",
    )
    m.add_argument("--statistic", **_spec("microaggregation", "statistic"), help="group value (default %(default)s)")
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
    w.add_argument(
        "--k", **_spec("record_swap", "k"), help="record swapping: households risky below this k (default %(default)s)"
    )
    w.add_argument(
        "--swap-rate", dest="swap_rate", **_spec("record_swap", "swap_rate"), help="share of households swapped"
    )
    w.add_argument("--carry-along", dest="carry_along", help="variables moving with the geography, comma-separated")
    w.add_argument("--variables", help="rank swapping: the continuous variables, comma-separated")
    w.add_argument(
        "--swap-range",
        dest="swap_range",
        **_spec("rank_swap", "swap_range"),
        help="rank swapping: largest rank distance in %%",
    )
    w.add_argument(
        "--top-percent", dest="top_percent", **_spec("rank_swap", "top_percent"), help="rank swapping: top %% pooled"
    )
    w.add_argument(
        "--bottom-percent",
        dest="bottom_percent",
        **_spec("rank_swap", "bottom_percent"),
        help="rank swapping: bottom %% pooled",
    )
    w.add_argument(
        "--seed", **_spec("rank_swap", "seed"), help="random seed (recorded in --save-recipe; default: a fresh seed)"
    )
    w.set_defaults(func=run_swap)


#: the roles a protection command takes besides the keys (and --missing)
_ROLES = ("weight", "household", "strata")


def _add_common(sp) -> None:
    for name in _ROLES:
        add_role_option(sp, name)
    add_missing_options(sp)
    sp.add_argument("--out", required=True, help="the protected file to write (.csv, .parquet, .sav, .dta)")
    sp.add_argument("--save-recipe", dest="save_recipe", help="also write the steps as a recipe (.yaml or .json)")
    sp.add_argument("--json", metavar="OUT", help="write the before/after measures as JSON to OUT")
    add_overwrite_option(sp)
    g = sp.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")


def _read(args):
    from ..io import read_data
    from ..workflow.problem import check_recipe_path

    if args.save_recipe:  # before any work: the recipe can be written where asked
        check_recipe_path(args.save_recipe, args.overwrite, "--save-recipe")

    nav = tuple(args.na_values.split(",")) if args.na_values is not None else ("", "NA")
    return read_data(args.data, na_values=nav)


def _scenario(args, numeric_keys=None):
    from ..scenario import Scenario

    return Scenario(
        keys=role_value(args, "keys") if args.keys else None,
        numeric_keys=numeric_keys,
        **_role_values(args),
    )


def _role_values(args) -> dict:
    """The weight, household, strata and missing codes the options give (``None``: not given)."""
    return {
        "weight": role_value(args, "weight"),
        "household": role_value(args, "household"),
        "strata": role_value(args, "strata") or None,
        "missing": role_value(args, "missing") or None,
    }


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
    from ..workflow.problem import SdcProblem

    steps = [parse_step(text, i) for i, text in enumerate(args.steps or (), 1)]  # errors before reading
    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    data = _read(args)
    if not steps:
        prog.step("applying the recipe")
        given = any(getattr(args, r) for r in ("keys", *_ROLES, "missing"))
        problem = SdcProblem.from_recipe(data, args.recipe, scenario=_scenario(args) if given else None)
        return _finish(args, problem, prog)
    prog.step(f"applying {len(steps)} step(s)")
    problem = SdcProblem(data, _step_scenario(args, steps))
    for i, (name, decl, params) in enumerate(steps, 1):
        try:
            problem.apply(decl.name, **params)
        except SdcError as exc:
            raise SdcError(f"--step {i} ({name}): {exc}") from None
    return _finish(args, problem, prog)


def parse_step(text: str, position: int = 1):
    """One ``--step NAME:PARAM=VALUE,...``: (the name given, the method's declaration, the
    parameters typed as the declaration says). A bad step is an error naming the step (its
    position and name) and the parameter."""
    from ..registry import step_method

    name, _, rest = text.partition(":")
    name = name.strip()
    where = f"--step {position} ({name or text.strip()})"
    pairs: dict[str, str] = {}
    for item in rest.split(",") if rest.strip() else ():
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key:
            raise SdcError(
                f"{where}: {item.strip()!r} is not PARAM=VALUE; expected NAME:PARAM=VALUE,PARAM=VALUE "
                "(items of a list separated by ';')"
            )
        if key in pairs:
            raise SdcError(f"{where}: {key}: given twice; expected each parameter once")
        pairs[key] = value
    try:
        decl = step_method(name, list(pairs))
        params = {}
        for key, value in pairs.items():
            param = decl.param(key)
            params[key] = param.parse(value)
            param.check(params[key])
    except SdcError as exc:
        raise SdcError(f"{where}: {exc}") from None
    return name, decl, params


def _step_scenario(args, steps):
    """The scenario of a --step run: --keys (or the keys the steps name), the continuous
    variables the steps change as numeric keys, and the role options."""
    from ..scenario import Scenario

    def named(role: str) -> list[str]:
        out: list[str] = []
        for _, decl, params in steps:
            for name, r in decl.roles.items():
                if r == role and name in params:
                    out += [v for v in _names(params[name]) if v not in out]
        return out

    keys = role_value(args, "keys") or named("keys")
    numeric = named("numeric_keys")
    if not keys and not numeric:
        raise SdcError(
            "--keys: no key variables; expected --keys (the categorical keys measured before and after) "
            "or a step on continuous variables"
        )
    return Scenario(keys=keys or None, numeric_keys=numeric or None, **_role_values(args))


def _names(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _run_step(args, step: str, /, numeric_keys=None, **parameters) -> int:
    from ..workflow.problem import SdcProblem

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
