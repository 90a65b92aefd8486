"""``sdckit search``: the protection with the least loss that meets a risk target; prints why it
won and writes the protected file, its recipe, the JSON summary and the assessment report."""

from __future__ import annotations

import json

from .._declare import Param
from .._errors import SdcError
from . import (
    Progress,
    add_missing_options,
    add_overwrite_option,
    add_role_option,
    name_list,
    progress_enabled,
    role_value,
    split_list,
    write_json,
)


def register(sub) -> None:
    from .protect import _option_type

    p = sub.add_parser(
        "search",
        help="find the protection with the least loss that meets a risk target",
        description="Search the generalisation levels of the key variables, with cell or record suppression up to "
        "a limit, for the protection with the least information loss that meets the target (k-anonymity, "
        "l-diversity, a largest individual risk, a re-identification rate with the household rule, a SUDA limit). "
        "Prints why the winner won, what the next-best candidates cost and how many were checked and pruned.",
        epilog="Example: sdckit search silc.csv --keys db040,hsize,age,rb090,pl030,pb220a --weight rb050 "
        "--household db030 --max-global-risk 0.01 --household-rule --suppression-limit 0.05 --out safe.csv "
        "--save-recipe safe.yaml --report search.html",
    )
    p.add_argument("data", help="data file: .csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt")
    add_role_option(p, "keys", "(searched)", required=True)
    add_role_option(p, "weight")
    add_role_option(p, "household")
    add_missing_options(p)
    t = p.add_argument_group("target (any combination)")
    t.add_argument("--k", type=_option_type(Param("k", "int")), help="k-anonymity")
    t.add_argument("--l", type=_option_type(Param("k", "int")), help="l-diversity of --sensitive")
    add_role_option(t, "sensitive", "(one here: the sensitive variable of --l and --t)")
    t.add_argument("--diversity", choices=("distinct", "entropy", "recursive"), help="the kind of l-diversity")
    t.add_argument("--c", type=float, help="the constant c of recursive (c, l)-diversity (default 2)")
    t.add_argument("--t", type=float, help="t-closeness of --sensitive: largest distance of a class's distribution")
    t.add_argument(
        "--t-distance",
        dest="t_distance",
        choices=("equal", "hierarchical"),
        help="the ground distance of --t: equal (default) or hierarchical (needs --hierarchy SENSITIVE=PATH)",
    )
    t.add_argument("--max-risk", dest="max_risk", type=float, help="largest individual risk allowed")
    t.add_argument(
        "--max-global-risk", dest="max_global_risk", type=float, help="largest re-identification rate (e.g. 0.01)"
    )
    t.add_argument(
        "--household-rule", dest="household_rule", action="store_true", help="also the household rule (--household)"
    )
    t.add_argument("--max-suda", dest="max_suda", type=float, help="largest SUDA score allowed")
    p.add_argument(
        "--hierarchy",
        dest="hierarchies",
        action="append",
        metavar="KEY=PATH",
        help="a key's hierarchy (ARX CSV, ';'-separated, no header); repeat per key (default: automatic)",
    )
    p.add_argument(
        "--suppression-limit",
        dest="suppression_limit",
        type=float,
        default=0.0,
        help="share of the key cells that may be suppressed, or of the records with --suppression records or --model arx "
        "(default 0)",
    )
    p.add_argument(
        "--suppression",
        choices=("cells", "records"),
        help="what is suppressed (default: cells; records with --model arx)",
    )
    p.add_argument(
        "--objective",
        choices=("loss", "arx", "precision", "discernibility", "entropy"),
        help="the loss minimised: sdckit's loss of every change (default), or one of ARX's quality models "
        "(arx: ARX's Loss, the default with --model arx)",
    )
    p.add_argument(
        "--model",
        choices=("arx",),
        help="arx: ARX's model (whole-record suppression of the classes that fail the target, ARX's optimal node)",
    )
    p.add_argument(
        "--gs-factor",
        dest="gs_factor",
        type=_option_type(Param("gs_factor", "number")),
        help="ARX's weight of generalisation against suppression, in [0, 1] (default 0.5; arx, precision, entropy)",
    )
    p.add_argument(
        "--max-lattice-size",
        dest="max_lattice_size",
        type=_option_type(Param("k", "int")),
        help="the most nodes the lattice may have (default 2,000,000)",
    )
    p.add_argument("--weights", metavar="KEY=W,...", help="per-key weights of the loss (default 1 each)")
    p.add_argument("--time-limit", dest="time_limit", type=float, help="stop after this many seconds (best effort)")
    p.add_argument(
        "--max-candidates", dest="max_candidates", type=int, help="stop after this many candidates (best effort)"
    )
    p.add_argument(
        "--exhaustive", action="store_true", help="evaluate every candidate, without the loss bound (exact, slow)"
    )
    p.add_argument(
        "--out",
        help="the protected file to write (.csv, .tsv, .parquet, .sav, .dta); a CSV keeps the input's separator "
        "and writes a missing value as the first --missing code (else empty)",
    )
    p.add_argument("--save-recipe", dest="save_recipe", help="write the winner's recipe (.yaml or .json)")
    p.add_argument("--json", metavar="OUT", help="write the search result (aggregates) as JSON to OUT")
    p.add_argument("--report", help="write the assessment of the winner and the next best as HTML")
    add_overwrite_option(p)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress")
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")
    p.set_defaults(func=run_search)


def _target(args) -> dict:
    target: dict = {}
    for name in ("k", "l", "t", "t_distance", "sensitive", "diversity", "c", "max_risk", "max_global_risk", "max_suda"):
        value = _sensitive(args) if name == "sensitive" else getattr(args, name)
        if value is not None:
            target[name] = value
    if args.household_rule:
        target["household"] = True
    if not target:
        raise SdcError("target: none given; expected --k, --l, --t, --max-risk, --max-global-risk or --max-suda")
    return target


def _sensitive(args) -> str | None:
    """The one sensitive variable of --l and --t (``None``: not given)."""
    given = role_value(args, "sensitive")
    if given is None:
        return None
    if len(given) != 1:
        raise SdcError(f"--sensitive: got {len(given)} variables; expected one, the sensitive variable of --l and --t")
    return given[0]


def _pairs(items, option: str, number: bool = False) -> dict:
    out: dict = {}
    for item in items:
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key or not value:
            raise SdcError(f"{option}: {item!r} is not KEY=VALUE; expected KEY=VALUE")
        if number:
            try:
                out[key] = float(value)
            except ValueError:
                raise SdcError(f"{option}: the weight of {key} is not a number; expected KEY=NUMBER") from None
        else:
            out[key] = value
    return out


def run_search(args) -> int:
    from ..io import read_data, write_data
    from ..scenario import Scenario
    from ..workflow.problem import check_recipe_path, write_recipe
    from ..workflow.search import search

    target = _target(args)  # errors before reading
    hierarchies = _pairs(args.hierarchies or (), "--hierarchy") or None
    weights = _pairs(split_list(args.weights), "--weights", number=True) if args.weights else None
    if args.save_recipe:
        check_recipe_path(args.save_recipe, args.overwrite, "--save-recipe")
    prog = Progress(2, progress_enabled(args))
    prog.step("reading data")
    data = read_data(args.data, na_values=("", "NA"))
    sc = Scenario(
        keys=tuple(name_list(args.keys, "--keys", "key variables")),
        weight=role_value(args, "weight"),
        household=role_value(args, "household"),
        missing=tuple(role_value(args, "missing") or ()),
    )
    prog.step("searching")
    res = search(
        data,
        sc,
        target=target,
        hierarchies=hierarchies,
        suppression_limit=args.suppression_limit,
        suppression=args.suppression,
        objective=args.objective,
        weights=weights,
        time_limit=args.time_limit,
        max_candidates=args.max_candidates,
        exhaustive=args.exhaustive,
        progress=args.progress if args.progress is not None else False,
        model=args.model,
        gs_factor=args.gs_factor,
        max_lattice_size=args.max_lattice_size,
    )
    prog.close()
    print(res.summary())
    if res.found and args.out:
        write_data(res.protected, args.out, overwrite=args.overwrite, **_text_format(args))
        print(f"\nProtected file written to {args.out}")
    if res.found and args.save_recipe:
        write_recipe(json.loads(json.dumps(res.recipe)), args.save_recipe, overwrite=args.overwrite)
    if args.json:
        write_json(args.json, {"data": str(args.data), **res.to_dict()}, overwrite=args.overwrite)
    if res.found and args.report:
        res.report(args.report, overwrite=args.overwrite)
    return 0 if res.found else 1


def _text_format(args) -> dict:
    """The input's CSV convention for a CSV ``--out``: its separator (a CSV or TSV input), and
    the first ``--missing`` code for a missing value (else an empty field)."""
    from pathlib import Path

    from ..io import read_metadata

    if Path(args.out).suffix.lower() != ".csv":
        return {}
    out: dict = {}
    if Path(args.data).suffix.lower() in (".csv", ".txt", ".tsv"):
        out["sep"] = read_metadata(args.data).get("separator", ",")
    missing = role_value(args, "missing")
    if missing:
        out["na"] = str(missing[0])
    return out
