"""``sdckit synthetic``: disclosure risk and utility of a synthetic file against its original."""

from __future__ import annotations

from .._errors import SdcError
from . import (
    Progress,
    add_declared_options,
    add_measure_endings,
    add_role_option,
    key_list,
    print_warnings,
    progress_enabled,
    read_input,
    role_value,
    split_list,
    with_warnings,
    write_json,
)


def register(sub) -> None:
    from ..risk.synthetic import synthetic_risk

    s = sub.add_parser(
        "synthetic",
        help="disclosure risk and utility of a synthetic file against its original",
        description="Risk: distribution distances of the keys (KL, total variation, Hellinger), the distance of "
        "synthetic records to the closest original record and exact copies, and the singling-out, linkability "
        "and inference attacks, each beyond the baseline of a control file of unseen records. Utility: pMSE, "
        "one-way and two-way table distances and the published estimates.",
    )
    s.add_argument("original", help="original data file (.csv, .tsv, .parquet, .sav, .dta, .sas7bdat, .xpt)")
    s.add_argument("synthetic", help="synthetic data file with the same columns")
    s.add_argument("--control", help="original records not used to generate the synthetic file (the baseline)")
    add_role_option(s, "keys", required=True)
    helps = {
        "variables": "comma-separated numeric key variables",
        "sensitive": "(the secret variables of the inference attack)",
        "split": "the two parts of the keys for the linkability attack: A,B;C,D (default: the two halves of keys "
        "and variables)",
        "order": "largest number of variables in a compared table (default 2)",
        "n_attacks": "attacks per type (default 500)",
        "n_cols": "columns of a singling-out query (default 3)",
        "significance": "chance of flagging a leak in a synthetic file made without the original records "
        "(default 0.05)",
        "seed": "seed of the random choices (the same seed gives the same result)",
    }
    add_declared_options(s, synthetic_risk, helps)
    s.add_argument("--no-utility", dest="utility", action="store_false", help="the risk only")
    add_measure_endings(
        s,
        run,
        "variables",
        records="each synthetic record's distance to the closest original record (--id: a column of the synthetic file)",
    )


def _split(text: str | None):
    if not text:
        return None
    parts = [split_list(p) for p in text.split(";")]
    if len(parts) != 2 or not all(parts):
        raise SdcError(f"--split: got {len(parts)} part(s); expected two comma-separated lists joined by ';'")
    return parts


def run(args) -> int:
    import sdckit

    keys = key_list(args)
    text = keys + [v for v in role_value(args, "sensitive") or [] if v not in split_list(args.variables)]
    prog = Progress(4, progress_enabled(args))
    prog.step("reading data")
    files = {"original": args.original, "synthetic": args.synthetic}
    if args.control:
        files["control"] = args.control
    tables = {k: read_input(p, text, args.na_values) for k, p in files.items()}
    missing = role_value(args, "missing") or None
    roles = {"keys": keys, "variables": split_list(args.variables) or None, "missing": missing}
    prog.step("risk")
    risk, caught = with_warnings(sdckit.synthetic_risk, tables["original"], tables["synthetic"], tables.get("control"),
                                 **roles, sensitive=role_value(args, "sensitive") or None,
                                 similarity={"order": args.order, "records": bool(args.records)},
                                 attacks={"split": _split(args.split), "n_attacks": args.n_attacks,
                                          "n_cols": args.n_cols},
                                 decision={"significance": args.significance}, seed=args.seed,
                                 id=args.id)  # fmt: skip
    prog.step("utility")
    util = (
        sdckit.synthetic_utility(tables["original"], tables["synthetic"], **roles, order=args.order)
        if args.utility
        else None
    )
    prog.step("writing output")
    prog.close()
    print_warnings(caught)
    print(risk.summary())
    if util is not None:
        print()
        print(util.summary())
    if args.json:
        payload = {**{k: str(v) for k, v in files.items()}, "synthetic_risk": risk.to_dict()}
        if util is not None:
            payload["synthetic_utility"] = util.to_dict()
        write_json(args.json, payload, overwrite=args.overwrite)
    if args.records:
        from ..io import write_records

        write_records(risk.to_frame(), args.records, overwrite=args.overwrite)
    return 0
