"""``sdckit risk``: individual, global and household re-identification risk."""

from __future__ import annotations

import sys
import warnings

from . import (
    ALPHA_HELP,
    Progress,
    add_declared_options,
    add_key_options,
    add_measure_endings,
    engine_from_args,
    engine_input,
    key_list,
    progress_enabled,
    role_value,
    split_list,
    write_json,
)

K_VALUES = (2, 3, 5)


def register(sub) -> None:
    from ..risk.individual import individual_risk

    f = sub.add_parser(
        "risk",
        help="individual, global and household re-identification risk",
        description="Individual re-identification risk (Benedetti-Franconi / mu-ARGUS), expected "
        "re-identifications, household risk, the individual-risk threshold for a "
        "target re-identification rate, and k-anonymity for k = 2, 3, 5.",
    )
    add_key_options(f)
    helps = {
        "weight": "(none: the file is a census, risk = 1/f_k)",
        "household": "(household risk; records without an id are their own household)",
        "household_keys": "comma-separated key variables that must be constant within a household",
        "strata": "(frequencies within strata)",
        "alpha": ALPHA_HELP,
        "method": "approx: mu-ARGUS/sdcMicro closed forms (default); exact: exact value for every f_k",
    }
    add_declared_options(f, individual_risk, helps)
    f.add_argument(
        "--max-global-risk",
        dest="max_global_risk",
        type=float,
        default=0.01,
        help="target re-identification rate for the risk threshold, in (0, 1) (default 0.01)",
    )
    f.add_argument(
        "--household-risk",
        dest="household_risk",
        type=float,
        default=None,
        help="household risk threshold r^h* for the mu-ARGUS household rule (default: derived from --max-global-risk)",
    )
    add_measure_endings(f, run, engines=True)


def assess(
    data,
    keys,
    *,
    weight=None,
    household=None,
    household_keys=None,
    strata=None,
    alpha=1.0,
    method="approx",
    max_global_risk=0.01,
    household_risk=None,
    missing=None,
    id=None,
    engine=None,
):
    """Individual risk, its threshold and k-anonymity (k = 2, 3, 5) from one frequency count.

    Returns ``(risk_result, threshold_result, k_anonymity_result, warnings)``; the warnings
    (documented :class:`SdcWarning` messages) are returned to be printed, not raised.
    """
    from .._validation import check_max_global_risk
    from ..risk.frequencies import k_anonymity
    from ..risk.individual import individual_risk

    check_max_global_risk(max_global_risk, "--max-global-risk")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = individual_risk(
            data,
            keys,
            weight=weight,
            household=household,
            strata=strata,
            household_keys=household_keys,
            missing=missing,
            id=id,
            engine=engine,
            estimation={"alpha": alpha, "method": method},
        )
    thr = res.threshold(max_global_risk, household_risk=household_risk)
    kan = k_anonymity(res.frequencies, k=K_VALUES)
    return res, thr, kan, [str(w.message) for w in caught]


def payload(res, thr, kan) -> dict:
    """The JSON document of ``sdckit risk``: the risk aggregates at top level, the threshold
    (``null`` when the file meets the target) and the k-anonymity violations."""
    out = dict(res.to_dict())
    out["max_global_risk"] = thr.max_global_risk
    out["threshold"] = thr.threshold
    out["threshold_details"] = thr.to_dict()
    out["k_anonymity"] = kan.to_dict()
    out["k_anonymity_violations"] = {str(k): v for k, v in kan.n_violations.items()}
    return out


def records(res, thr, kan) -> dict:
    """Per-record columns, the same whatever the engine: the --id column, risk, fk, Fk,
    household_risk, unsafe, household_unsafe, violates_k.

    In memory, one value per record. With an out-of-core engine (``res.records_source``), one
    value per row of its compressed table, and the household columns computed by the engine
    (the --id column is the engine's too: it is left out here)."""
    if res.records_source is None:
        out = {res.row_ids[0]: res.row_ids[1]} if res.row_ids is not None else {}
        out.update(res._records())
    else:
        out = res.records_source.engine_values(res._records())
    out["unsafe"] = thr.unsafe
    if res.household is not None:
        if res.records_source is None:
            out["household_unsafe"] = thr.household_unsafe
        else:
            from ..engines._relational import HouseholdUnsafe

            out["household_unsafe"] = HouseholdUnsafe(res.risk, thr.household_threshold)
    for k in kan.k:
        out[f"violates_{k}"] = kan.violates(k)
    return out


def print_results(res, thr, kan, messages) -> None:
    for m in messages:
        print(f"sdckit: warning: {m}", file=sys.stderr)
    print(res.summary())
    print()
    print(thr.summary())
    print()
    print(kan.summary())


def run(args) -> int:
    from ..io import write_records

    keys = key_list(args)
    prog = Progress(4, progress_enabled(args))
    engine = engine_from_args(args)
    prog.step("reading data")
    strata = role_value(args, "strata") or None
    data = engine_input(args, keys + (strata or []), engine)
    prog.step("individual and household risk")
    res, thr, kan, messages = assess(
        data,
        keys,
        weight=args.weight,
        household=args.household,
        household_keys=split_list(args.household_keys) or None,
        strata=strata,
        alpha=args.alpha,
        method=args.method,
        max_global_risk=args.max_global_risk,
        household_risk=args.household_risk,
        missing=role_value(args, "missing") or None,
        id=args.id,
        engine=engine,
    )
    prog.step("threshold and k-anonymity")
    prog.step("writing output")
    prog.close()
    print_results(res, thr, kan, messages)
    if args.json:
        write_json(args.json, {"data": str(args.data), **payload(res, thr, kan)}, overwrite=args.overwrite)
    if args.records and res.records_source is not None:  # written by the engine, nothing collected
        res.records_source.write(records(res, thr, kan), args.records, ids=res.row_ids, overwrite=args.overwrite)
    elif args.records:
        write_records(records(res, thr, kan), args.records, overwrite=args.overwrite)
    return 0
