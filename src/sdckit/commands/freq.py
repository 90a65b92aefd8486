"""``sdckit freq``: key frequencies and k-anonymity."""

from __future__ import annotations

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
    write_json,
)


def register(sub) -> None:
    from ..risk.frequencies import frequencies, k_anonymity

    f = sub.add_parser(
        "freq",
        help="key frequencies (f_k, F_k) and k-anonymity",
        description="Sample and weighted key frequencies with sdcMicro's missing-value rule, and k-anonymity.",
    )
    add_key_options(f)
    add_declared_options(
        f,
        frequencies,
        {"weight": "(none: the file is a census, F_k = f_k)", "alpha": ALPHA_HELP},
    )
    add_declared_options(
        f, k_anonymity, {"k": "k values for k-anonymity, comma-separated (default 2,3,5)"}, k={"default": "2,3,5"}
    )
    add_measure_endings(f, run, engines=True)


def run(args) -> int:
    from ..io import write_records
    from ..risk.frequencies import frequencies, k_anonymity

    keys = key_list(args)
    prog = Progress(4, progress_enabled(args))
    engine = engine_from_args(args)
    prog.step("reading data")
    data = engine_input(args, keys, engine)
    prog.step("counting key patterns")
    freq = frequencies(
        data,
        keys,
        weight=args.weight,
        alpha=args.alpha,
        missing=role_value(args, "missing") or None,
        id=args.id,
        engine=engine,
    )
    prog.step("k-anonymity")
    kan = k_anonymity(freq, k=args.k)
    prog.step("writing output")
    prog.close()
    print(freq.summary())
    print()
    print(kan.summary())
    if args.json:
        write_json(
            args.json,
            {"data": str(args.data), "frequencies": freq.to_dict(), "k_anonymity": kan.to_dict()},
            overwrite=args.overwrite,
        )
    if args.records and kan.records_source is not None:
        kan.write_records(args.records, overwrite=args.overwrite)
    elif args.records:
        write_records(kan.to_frame(), args.records, overwrite=args.overwrite)
    return 0
