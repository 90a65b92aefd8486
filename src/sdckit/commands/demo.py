"""``sdckit demo``: the risk assessment on the bundled synthetic survey sample."""

from __future__ import annotations

from . import Progress, add_output_options, progress_enabled, write_json


def register(sub) -> None:
    d = sub.add_parser("demo", help="run the risk assessment on the bundled example data")
    add_output_options(d, id_option=False)
    d.set_defaults(func=run)


def run(args) -> int:
    from ..datasets import EXAMPLE_KEYS, example_path
    from ..io import write_records
    from . import read_input, risk

    path = example_path()
    keys = list(EXAMPLE_KEYS)
    print(
        f"sdckit demo: risk assessment of the bundled synthetic survey sample\n  {path}\n"
        f"  equivalent to: sdckit freq {path.name} --keys {','.join(keys)} --weight weight --k 2,3,5\n"
        f"            and: sdckit risk {path.name} --keys {','.join(keys)} --weight weight "
        f"--household household\n"
    )
    prog = Progress(3, progress_enabled(args))
    prog.step("reading data")
    data = read_input(str(path), keys)
    prog.step("frequencies and risk")
    res, thr, kan, messages = risk.assess(data, keys, weight="weight", household="household")
    prog.step("writing output")
    prog.close()
    print(res.frequencies.summary())
    print()
    risk.print_results(res, thr, kan, messages)
    if args.json:
        write_json(
            args.json,
            {
                "data": str(path),
                "frequencies": res.frequencies.to_dict(),
                "k_anonymity": kan.to_dict(),
                "risk": risk.payload(res, thr, kan),
            },
        )
    if args.records:
        write_records(risk.records(res, thr, kan), args.records)
    return 0
