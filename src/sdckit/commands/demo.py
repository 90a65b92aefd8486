"""``sdckit demo``: the risk assessment on the bundled synthetic survey sample."""

from __future__ import annotations

from .._errors import SdcError
from . import Progress, add_output_options, progress_enabled, write_json


def register(sub) -> None:
    d = sub.add_parser("demo", help="run the risk assessment on the bundled example data and write its report")
    add_output_options(d, id_option=False)
    d.add_argument(
        "--report",
        default="sdckit-demo-report.html",
        help="the HTML report to write (default sdckit-demo-report.html in the current folder; an existing one "
        "only with --overwrite)",
    )
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
    prog = Progress(4, progress_enabled(args))
    prog.step("reading data")
    data = read_input(str(path), keys)
    prog.step("frequencies and risk")
    res, thr, kan, messages = risk.assess(data, keys, weight="weight", household="household")
    prog.step("the HTML report")
    try:
        report = _report(args.report, keys, args.overwrite)
    except SdcError as exc:  # e.g. matplotlib not installed: the text results still stand
        report = None
        note = " ".join(str(exc).split())
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
            overwrite=args.overwrite,
        )
    if args.records:
        write_records(risk.records(res, thr, kan), args.records, overwrite=args.overwrite)
    if report is None:
        print(f"\nNo HTML report: {note}")
    else:
        print(f"\nThe full report (figures, riskiest key combinations, SUDA): {report}\nOpen it in a browser.")
    print(
        "\nTo measure and protect your own file in the browser, without code: "
        'pip install "sdckit[app]" && sdckit app your-file.csv'
    )
    return 0


def _report(path: str, keys, overwrite: bool) -> str:
    """The assessment report of the example, written to ``path`` atomically (an older report
    there only with --overwrite)."""
    from pathlib import Path

    from ..datasets import load_example
    from ..scenario import Scenario
    from ..workflow import assess

    scenario = Scenario(keys=tuple(keys), weight="weight", household="household")
    out = Path(path)
    if out.exists() and out.is_dir():
        raise SdcError(f"--report: {out} is a folder; expected a file name")
    assess(load_example(), scenario, progress=False).to_html(out, overwrite=overwrite)
    return str(out.resolve())
